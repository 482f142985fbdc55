//! Terraform's `s3` backend: state objects in an S3 bucket, locked by a
//! `<key>.tflock` object created by conditional write (`use_lockfile`)
//! and/or a DynamoDB item (`dynamodb_table`), as Terraform does it.
//!
//! Layout (Terraform's):
//! * workspace `default`: the object `key`;
//! * workspace `W`: `<workspace_key_prefix>/W/<key>` (prefix `env:`);
//! * lock file: `<state object>.tflock`, holding Terraform's lock JSON,
//!   created with `If-None-Match: *`;
//! * DynamoDB: the item `LockID = <bucket>/<state object>` with the lock
//!   JSON in `Info`, put with `attribute_not_exists(LockID)`; and the item
//!   `LockID = <bucket>/<state object>-md5` whose `Digest` is the hex MD5
//!   of the last state written, which readers check.
//!
//! S3 calls go through object_store; DynamoDB's JSON API through
//! object_store's HTTP client and its SigV4 signer.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use md5::{Digest, Md5};
use object_store::aws::{
    AmazonS3, AmazonS3Builder, AmazonS3ConfigKey, AwsAuthorizer, AwsCredential,
};
use object_store::client::{HttpClient, HttpConnector, HttpRequest, ReqwestConnector};
use object_store::path::Path as ObjPath;
use object_store::{
    Attribute, AttributeValue, Attributes, ObjectStore, ObjectStoreExt, PutOptions, RetryConfig,
};
use serde_json::json;

use crate::cloud::{self, Created, Rt};
use crate::{Backend, BackendError, Payload, RemoteClient, RemoteLock, Result, Settings};

const KIND: &str = "s3";

/// Settings of Terraform's s3 backend that terrane serves, or accepts
/// because they only skip checks terrane does not make.
pub(crate) const SERVED: &[&str] = &[
    "bucket",
    "key",
    "region",
    "endpoint",
    "endpoints",
    "dynamodb_endpoint",
    "encrypt",
    "access_key",
    "secret_key",
    "token",
    "dynamodb_table",
    "workspace_key_prefix",
    "use_path_style",
    "force_path_style",
    "use_lockfile",
    "skip_credentials_validation",
    "skip_region_validation",
    "skip_requesting_account_id",
    "skip_metadata_api_check",
    "skip_s3_checksum",
];

/// Settings Terraform knows that terrane refuses, naming them.
pub(crate) const REFUSED: &[&str] = &[
    "acl",
    "kms_key_id",
    "sse_customer_key",
    "profile",
    "shared_credentials_file",
    "shared_credentials_files",
    "shared_config_files",
    "assume_role",
    "assume_role_with_web_identity",
    "custom_ca_bundle",
    "use_fips_endpoint",
    "use_dualstack_endpoint",
];

/// Terraform's default `workspace_key_prefix`.
pub const DEFAULT_WORKSPACE_PREFIX: &str = "env:";

struct Shared {
    rt: Rt,
    store: AmazonS3,
    bucket: String,
    key: String,
    workspace_prefix: String,
    use_lockfile: bool,
    dynamo: Option<Dynamo>,
}

/// DynamoDB access: table, endpoint, region and credentials for SigV4.
struct Dynamo {
    table: String,
    endpoint: String,
    region: String,
    credential: AwsCredential,
    http: HttpClient,
}

/// A configured s3 backend.
pub struct S3Backend {
    shared: Arc<Shared>,
}

impl S3Backend {
    /// The backend for an evaluated `backend "s3" { }` block. Checks the
    /// settings and builds the clients; makes no request.
    pub fn new(settings: &Settings) -> Result<S3Backend> {
        cloud::check_settings(KIND, settings, SERVED, REFUSED)?;
        let bucket = cloud::required(KIND, settings, "bucket")?;
        let key = cloud::required(KIND, settings, "key")?;
        if key.starts_with('/') || key.ends_with('/') {
            return Err(cloud::settings_err(
                KIND,
                format!("key {key:?}: must not start or end with \"/\""),
            ));
        }
        let workspace_prefix = crate::string_setting(KIND, settings, "workspace_key_prefix")?
            .unwrap_or_else(|| DEFAULT_WORKSPACE_PREFIX.into());
        if workspace_prefix.starts_with('/') || workspace_prefix.ends_with('/') {
            return Err(cloud::settings_err(
                KIND,
                format!(
                    "workspace_key_prefix {workspace_prefix:?}: must not start or end with \"/\""
                ),
            ));
        }
        let region = match crate::string_setting(KIND, settings, "region")? {
            Some(r) if !r.is_empty() => r,
            _ => env_any(&["AWS_REGION", "AWS_DEFAULT_REGION"]).ok_or_else(|| {
                cloud::settings_err(
                    KIND,
                    "The argument \"region\" is required, but no definition was found \
                     (nor AWS_REGION / AWS_DEFAULT_REGION in the environment).",
                )
            })?,
        };
        let credential = credentials(settings)?;
        let (s3_endpoint, dynamo_endpoint) = endpoints(settings)?;
        let path_style = cloud::bool_setting(KIND, settings, "use_path_style")?
            || cloud::bool_setting(KIND, settings, "force_path_style")?;
        let encrypt = cloud::bool_setting(KIND, settings, "encrypt")?;
        let use_lockfile = cloud::bool_setting(KIND, settings, "use_lockfile")?;
        let table =
            crate::string_setting(KIND, settings, "dynamodb_table")?.filter(|t| !t.is_empty());

        let mut builder = AmazonS3Builder::new()
            .with_client_options(cloud::client_options(KIND)?)
            .with_bucket_name(&bucket)
            .with_region(&region)
            .with_access_key_id(&credential.key_id)
            .with_secret_access_key(&credential.secret_key)
            .with_retry(retry())
            .with_virtual_hosted_style_request(!path_style);
        if let Some(t) = &credential.token {
            builder = builder.with_token(t);
        }
        if let Some(ep) = &s3_endpoint {
            let ep = ep.trim_end_matches('/');
            let ep = if path_style {
                ep.to_string()
            } else {
                // Virtual-hosted style: the bucket is the host's first label.
                match ep.split_once("://") {
                    Some((scheme, host)) => format!("{scheme}://{bucket}.{host}"),
                    None => format!("{bucket}.{ep}"),
                }
            };
            builder = builder
                .with_allow_http(ep.starts_with("http://"))
                .with_endpoint(ep);
        }
        if encrypt {
            let sse: AmazonS3ConfigKey = "aws_server_side_encryption"
                .parse()
                .map_err(|e| cloud::settings_err(KIND, format!("encrypt: {e}")))?;
            builder = builder.with_config(sse, "AES256");
        }
        let store = builder
            .build()
            .map_err(|e| cloud::settings_err(KIND, format!("bucket {bucket:?}: {e}")))?;
        let dynamo = match table {
            None => None,
            Some(table) => {
                let endpoint = dynamo_endpoint
                    .unwrap_or_else(|| format!("https://dynamodb.{region}.amazonaws.com"));
                let options =
                    cloud::client_options(KIND)?.with_allow_http(endpoint.starts_with("http://"));
                let http = ReqwestConnector::default()
                    .connect(&options)
                    .map_err(|e| cloud::io(KIND, format!("DynamoDB client: {e}")))?;
                Some(Dynamo {
                    table,
                    endpoint,
                    region: region.clone(),
                    credential: AwsCredential {
                        key_id: credential.key_id.clone(),
                        secret_key: credential.secret_key.clone(),
                        token: credential.token.clone(),
                    },
                    http,
                })
            }
        };
        Ok(S3Backend {
            shared: Arc::new(Shared {
                rt: Rt::new(KIND)?,
                store,
                bucket,
                key,
                workspace_prefix,
                use_lockfile,
                dynamo,
            }),
        })
    }

    /// Who holds `workspace`'s lock (the `.tflock` object, else the
    /// DynamoDB item), without taking it; None when it is free.
    pub fn lock_holder(&self, workspace: &str) -> Result<Option<RemoteLock>> {
        cloud::check_workspace(KIND, workspace)?;
        let c = S3Client {
            shared: self.shared.clone(),
            key: self.shared.state_key(workspace),
        };
        self.shared.rt.run(async {
            if self.shared.use_lockfile {
                if let Some(h) = c.lockfile_holder().await? {
                    return Ok(Some(h));
                }
            }
            match &self.shared.dynamo {
                Some(d) => c.dynamo_holder(d).await,
                None => Ok(None),
            }
        })
    }

    /// The object key of `workspace`'s state (Terraform's layout).
    pub fn state_key(&self, workspace: &str) -> String {
        self.shared.state_key(workspace)
    }
}

fn retry() -> RetryConfig {
    RetryConfig {
        max_retries: 3,
        retry_timeout: Duration::from_secs(20),
        ..Default::default()
    }
}

fn env_any(names: &[&str]) -> Option<String> {
    names
        .iter()
        .find_map(|n| std::env::var(n).ok().filter(|v| !v.is_empty()))
}

/// Static credentials from the settings, else from the environment.
fn credentials(settings: &Settings) -> Result<AwsCredential> {
    let key = crate::string_setting(KIND, settings, "access_key")?.filter(|s| !s.is_empty());
    let secret = crate::string_setting(KIND, settings, "secret_key")?.filter(|s| !s.is_empty());
    let token = crate::string_setting(KIND, settings, "token")?.filter(|s| !s.is_empty());
    match (key, secret) {
        (Some(key_id), Some(secret_key)) => Ok(AwsCredential {
            key_id,
            secret_key,
            token,
        }),
        (Some(_), None) | (None, Some(_)) => Err(cloud::settings_err(
            KIND,
            "access_key and secret_key must be given together",
        )),
        (None, None) => match (
            env_any(&["AWS_ACCESS_KEY_ID"]),
            env_any(&["AWS_SECRET_ACCESS_KEY"]),
        ) {
            (Some(key_id), Some(secret_key)) => Ok(AwsCredential {
                key_id,
                secret_key,
                token: token.or_else(|| env_any(&["AWS_SESSION_TOKEN"])),
            }),
            _ => Err(cloud::settings_err(
                KIND,
                "no AWS credentials: set access_key and secret_key, or AWS_ACCESS_KEY_ID and \
                 AWS_SECRET_ACCESS_KEY (terrane does not read shared profiles or instance \
                 roles yet)",
            )),
        },
    }
}

/// The S3 and DynamoDB endpoints: `endpoints { s3, dynamodb }`, or the
/// older `endpoint` / `dynamodb_endpoint`.
fn endpoints(settings: &Settings) -> Result<(Option<String>, Option<String>)> {
    let mut s3 = crate::string_setting(KIND, settings, "endpoint")?;
    let mut dynamo = crate::string_setting(KIND, settings, "dynamodb_endpoint")?;
    match settings.get("endpoints") {
        None | Some(serde_json::Value::Null) => {}
        Some(serde_json::Value::Object(m)) => {
            for (k, v) in m {
                let v = match v {
                    serde_json::Value::String(s) => Some(s.clone()),
                    serde_json::Value::Null => None,
                    other => {
                        return Err(cloud::settings_err(
                            KIND,
                            format!("endpoints.{k}: a string is required, got {other}"),
                        ))
                    }
                };
                match k.as_str() {
                    "s3" => s3 = v.or(s3),
                    "dynamodb" => dynamo = v.or(dynamo),
                    "iam" | "sts" | "sso" => {}
                    _ => {
                        return Err(cloud::settings_err(
                            KIND,
                            format!("endpoints: An argument named {k:?} is not expected here."),
                        ))
                    }
                }
            }
        }
        Some(other) => {
            return Err(cloud::settings_err(
                KIND,
                format!("endpoints: an object is required, got {other}"),
            ))
        }
    }
    Ok((
        s3.filter(|s| !s.is_empty()),
        dynamo.filter(|s| !s.is_empty()),
    ))
}

impl Shared {
    fn state_key(&self, workspace: &str) -> String {
        if workspace == "default" {
            self.key.clone()
        } else if self.workspace_prefix.is_empty() {
            format!("{workspace}/{}", self.key)
        } else {
            format!("{}/{workspace}/{}", self.workspace_prefix, self.key)
        }
    }

    fn url(&self, key: &str) -> String {
        format!("s3://{}/{key}", self.bucket)
    }

    fn obj(&self, key: &str) -> Result<ObjPath> {
        ObjPath::parse(key).map_err(|e| {
            cloud::settings_err(KIND, format!("object key {key:?} is not usable: {e}"))
        })
    }

    /// A NotFound from S3 is an absent object only when the bucket exists:
    /// a missing bucket must never read as an empty state.
    fn not_found_err(&self, e: &object_store::Error) -> Option<BackendError> {
        let text = format!("{e:?}");
        text.contains("NoSuchBucket").then(|| {
            cloud::io(
                KIND,
                format!(
                    "S3 bucket {:?} does not exist. The referenced S3 bucket must have been \
                     previously created.",
                    self.bucket
                ),
            )
        })
    }

    async fn get_raw(&self, key: &str) -> Result<Option<Vec<u8>>> {
        let path = self.obj(key)?;
        match self.store.get(&path).await {
            Ok(r) => {
                let b = r.bytes().await.map_err(|e| {
                    cloud::store_err(KIND, &format!("reading {}", self.url(key)), e)
                })?;
                Ok(Some(b.to_vec()))
            }
            Err(e @ object_store::Error::NotFound { .. }) => match self.not_found_err(&e) {
                Some(err) => Err(err),
                None => Ok(None),
            },
            Err(e) => Err(cloud::store_err(
                KIND,
                &format!("reading {}", self.url(key)),
                e,
            )),
        }
    }

    fn put_opts(&self) -> PutOptions {
        let mut attributes = Attributes::new();
        attributes.insert(
            Attribute::ContentType,
            AttributeValue::from("application/json"),
        );
        PutOptions {
            attributes,
            ..Default::default()
        }
    }

    async fn delete_raw(&self, key: &str) -> Result<()> {
        let path = self.obj(key)?;
        match self.store.delete(&path).await {
            Ok(()) => Ok(()),
            Err(e @ object_store::Error::NotFound { .. }) => match self.not_found_err(&e) {
                Some(err) => Err(err),
                None => Ok(()),
            },
            Err(e) => Err(cloud::store_err(
                KIND,
                &format!("deleting {}", self.url(key)),
                e,
            )),
        }
    }
}

impl Dynamo {
    /// One DynamoDB JSON API call; the parsed reply, or the service's error
    /// type and message.
    async fn call(&self, op: &str, body: serde_json::Value) -> Result<serde_json::Value> {
        let body = serde_json::to_vec(&body).expect("request serializes");
        let mut req: HttpRequest = http::Request::builder()
            .method("POST")
            .uri(format!("{}/", self.endpoint.trim_end_matches('/')))
            .header("content-type", "application/x-amz-json-1.0")
            .header("x-amz-target", format!("DynamoDB_20120810.{op}"))
            .body(body.into())
            .map_err(|e| cloud::io(KIND, format!("DynamoDB endpoint {:?}: {e}", self.endpoint)))?;
        AwsAuthorizer::new(&self.credential, "dynamodb", &self.region)
            .try_authorize(&mut req, None)
            .map_err(|e| cloud::io(KIND, format!("signing the DynamoDB request: {e}")))?;
        let resp = self.http.execute(req).await.map_err(|e| {
            cloud::io(
                KIND,
                format!(
                    "DynamoDB {op} on table {:?} at {}: {e}",
                    self.table, self.endpoint
                ),
            )
        })?;
        let status = resp.status();
        let bytes = resp
            .into_body()
            .bytes()
            .await
            .map_err(|e| cloud::io(KIND, format!("DynamoDB {op} reply: {e}")))?;
        let value: serde_json::Value = serde_json::from_slice(&bytes).unwrap_or_else(|_| {
            json!({"__type": format!("HTTP {status}"), "message": String::from_utf8_lossy(&bytes)})
        });
        if status.is_success() {
            Ok(value)
        } else {
            Err(DynamoError {
                kind: value["__type"]
                    .as_str()
                    .unwrap_or("")
                    .rsplit('#')
                    .next()
                    .unwrap_or("")
                    .to_string(),
                message: value["message"]
                    .as_str()
                    .or(value["Message"].as_str())
                    .unwrap_or("")
                    .to_string(),
            }
            .into_backend(op, &self.table))
        }
    }

    async fn get_string(&self, id: &str, attr: &str) -> Result<Option<String>> {
        let r = self
            .call(
                "GetItem",
                json!({
                    "TableName": self.table,
                    "Key": {"LockID": {"S": id}},
                    "ProjectionExpression": format!("LockID, {attr}"),
                    "ConsistentRead": true,
                }),
            )
            .await?;
        Ok(r["Item"][attr]["S"].as_str().map(str::to_string))
    }

    async fn put_item(&self, item: serde_json::Value, condition: Option<&str>) -> Result<()> {
        let mut req = json!({"TableName": self.table, "Item": item});
        if let Some(c) = condition {
            req["ConditionExpression"] = c.into();
        }
        self.call("PutItem", req).await.map(drop)
    }

    async fn delete_item(&self, id: &str) -> Result<()> {
        self.call(
            "DeleteItem",
            json!({"TableName": self.table, "Key": {"LockID": {"S": id}}}),
        )
        .await
        .map(drop)
    }
}

struct DynamoError {
    kind: String,
    message: String,
}

/// Marker in the error text for a failed condition (the lock is held).
const CONDITION_FAILED: &str = "ConditionalCheckFailedException";

impl DynamoError {
    fn into_backend(self, op: &str, table: &str) -> BackendError {
        let detail = match self.kind.as_str() {
            "ResourceNotFoundException" => {
                format!(
                    "DynamoDB table {table:?} does not exist ({op}: {})",
                    self.message
                )
            }
            "UnrecognizedClientException"
            | "InvalidSignatureException"
            | "AccessDeniedException" => {
                format!(
                    "DynamoDB refused the credentials for table {table:?} ({}: {})",
                    self.kind, self.message
                )
            }
            _ => format!(
                "DynamoDB {op} on table {table:?}: {}: {}",
                self.kind, self.message
            ),
        };
        cloud::io(KIND, detail)
    }
}

impl Backend for S3Backend {
    fn kind(&self) -> &'static str {
        KIND
    }

    fn workspaces(&self) -> Result<Vec<String>> {
        let s = &self.shared;
        s.rt.run(async {
            let mut found = Vec::new();
            let prefix = if s.workspace_prefix.is_empty() {
                None
            } else {
                Some(s.obj(&s.workspace_prefix)?)
            };
            let listed: Vec<_> = s.store.list(prefix.as_ref()).collect().await;
            for item in listed {
                let meta = match item {
                    Ok(m) => m,
                    // A missing bucket is a 404 the list request reports
                    // as a generic error, not as NotFound.
                    Err(e) => {
                        return Err(s.not_found_err(&e).unwrap_or_else(|| {
                            cloud::store_err(KIND, &format!("listing s3://{}", s.bucket), e)
                        }))
                    }
                };
                let loc = meta.location.to_string();
                let rest = match &prefix {
                    Some(p) => match loc.strip_prefix(&format!("{p}/")) {
                        Some(r) => r,
                        None => continue,
                    },
                    None => loc.as_str(),
                };
                if let Some((ws, k)) = rest.split_once('/') {
                    if k == s.key && ws != "default" && !ws.is_empty() {
                        found.push(ws.to_string());
                    }
                }
            }
            found.sort();
            found.dedup();
            let mut all = vec!["default".to_string()];
            all.extend(found);
            Ok(all)
        })
    }

    fn delete_workspace(&self, name: &str) -> Result<()> {
        if name == "default" {
            return Err(cloud::settings_err(KIND, "can't delete default state"));
        }
        cloud::check_workspace(KIND, name)?;
        self.client(name)?.delete()
    }

    fn client(&self, workspace: &str) -> Result<Box<dyn RemoteClient>> {
        cloud::check_workspace(KIND, workspace)?;
        let key = self.shared.state_key(workspace);
        Ok(Box::new(S3Client {
            shared: self.shared.clone(),
            key,
        }))
    }
}

/// One workspace's state object in S3.
pub struct S3Client {
    shared: Arc<Shared>,
    key: String,
}

impl S3Client {
    fn lock_key(&self) -> String {
        format!("{}.tflock", self.key)
    }

    /// Terraform's lock path and DynamoDB LockID: `<bucket>/<key>`.
    fn lock_path(&self) -> String {
        format!("{}/{}", self.shared.bucket, self.key)
    }

    async fn lockfile_holder(&self) -> Result<Option<RemoteLock>> {
        let s = &self.shared;
        match s.get_raw(&self.lock_key()).await? {
            None => Ok(None),
            Some(data) => cloud::parse_lock(&s.url(&self.lock_key()), &data).map(Some),
        }
    }

    async fn dynamo_holder(&self, d: &Dynamo) -> Result<Option<RemoteLock>> {
        match d.get_string(&self.lock_path(), "Info").await? {
            None => Ok(None),
            Some(info) => cloud::parse_lock(
                &format!("DynamoDB {}:{}", d.table, self.lock_path()),
                info.as_bytes(),
            )
            .map(Some),
        }
    }
}

impl RemoteClient for S3Client {
    fn path(&self) -> String {
        self.shared.url(&self.key)
    }

    fn get(&self) -> Result<Option<Payload>> {
        let s = &self.shared;
        s.rt.run(async {
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                let data = s.get_raw(&self.key).await?.filter(|d| !d.is_empty());
                let md5 = data
                    .as_ref()
                    .map(|d| Md5::digest(d).to_vec())
                    .unwrap_or_default();
                if let Some(d) = &s.dynamo {
                    let want = d
                        .get_string(&format!("{}-md5", self.lock_path()), "Digest")
                        .await?;
                    if let Some(want) = want.filter(|w| !w.is_empty()) {
                        if want != hex::encode(&md5) {
                            // S3 may lag a write; Terraform waits 10s too.
                            if Instant::now() < deadline {
                                tokio::time::sleep(Duration::from_secs(2)).await;
                                continue;
                            }
                            return Err(BackendError::Corrupt {
                                path: self.path(),
                                detail: format!(
                                    "state data in S3 does not have the expected content: its \
                                     MD5 is {:?}, the digest recorded in DynamoDB table {:?} is \
                                     {want:?}. If the object was changed outside Terraform, \
                                     check it and update the Digest item",
                                    hex::encode(&md5),
                                    d.table
                                ),
                            });
                        }
                    }
                }
                return Ok(data.map(|data| Payload { data, md5 }));
            }
        })
    }

    fn put(&self, data: &[u8]) -> Result<()> {
        let s = &self.shared;
        s.rt.run(async {
            let path = s.obj(&self.key)?;
            if let Err(e) = s
                .store
                .put_opts(&path, data.to_vec().into(), s.put_opts())
                .await
            {
                return Err(match &e {
                    object_store::Error::NotFound { .. } => s.not_found_err(&e),
                    _ => None,
                }
                .unwrap_or_else(|| {
                    cloud::store_err(KIND, &format!("writing {}", self.path()), e)
                }));
            }
            if let Some(d) = &s.dynamo {
                d.put_item(
                    json!({
                        "LockID": {"S": format!("{}-md5", self.lock_path())},
                        "Digest": {"S": hex::encode(Md5::digest(data))},
                    }),
                    None,
                )
                .await
                .map_err(|e| cloud::io(KIND, format!("failed to store state MD5: {e}")))?;
            }
            Ok(())
        })
    }

    fn delete(&self) -> Result<()> {
        let s = &self.shared;
        s.rt.run(async {
            s.delete_raw(&self.key).await?;
            if let Some(d) = &s.dynamo {
                d.delete_item(&format!("{}-md5", self.lock_path())).await?;
            }
            Ok(())
        })
    }

    fn lock(&self, lock: &RemoteLock) -> Result<String> {
        let s = &self.shared;
        if !s.use_lockfile && s.dynamo.is_none() {
            // Terraform's s3 backend does not lock without either.
            return Ok(String::new());
        }
        let id = if lock.id.is_empty() {
            cloud::new_lock_id()
        } else {
            lock.id.clone()
        };
        let info = cloud::lock_json(lock, &id, &self.lock_path());
        s.rt.run(async {
            let mut took_file = false;
            if s.use_lockfile {
                let lock_key = self.lock_key();
                let path = s.obj(&lock_key)?;
                match cloud::create_object(
                    &s.store,
                    KIND,
                    &s.url(&lock_key),
                    &path,
                    &info,
                    s.put_opts(),
                )
                .await
                {
                    Ok(Created::Yes) => took_file = true,
                    Ok(Created::AlreadyThere) => {
                        let holder = self
                            .lockfile_holder()
                            .await?
                            .unwrap_or_else(|| cloud::unknown_holder(&self.lock_path()));
                        return Err(cloud::locked(&self.path(), holder));
                    }
                    Err(e) => {
                        return Err(match &e {
                            BackendError::Io { detail, .. } if detail.contains("NoSuchBucket") => {
                                cloud::io(KIND, format!("S3 bucket {:?} does not exist", s.bucket))
                            }
                            _ => e,
                        })
                    }
                }
            }
            if let Some(d) = &s.dynamo {
                let put = d
                    .put_item(
                        json!({
                            "LockID": {"S": self.lock_path()},
                            "Info": {"S": String::from_utf8_lossy(&info)},
                        }),
                        Some("attribute_not_exists(LockID)"),
                    )
                    .await;
                if let Err(e) = put {
                    if took_file {
                        // Leave no half-taken lock behind.
                        let _ = s.delete_raw(&self.lock_key()).await;
                    }
                    if e.to_string().contains(CONDITION_FAILED) {
                        let holder = self
                            .dynamo_holder(d)
                            .await?
                            .unwrap_or_else(|| cloud::unknown_holder(&self.lock_path()));
                        return Err(cloud::locked(&self.path(), holder));
                    }
                    return Err(e);
                }
            }
            Ok(id.clone())
        })
    }

    fn unlock(&self, id: &str) -> Result<()> {
        let s = &self.shared;
        if !s.use_lockfile && s.dynamo.is_none() {
            return Ok(());
        }
        s.rt.run(async {
            let mismatch = |holder: &RemoteLock| {
                cloud::io(
                    KIND,
                    format!(
                        "unlocking {}: lock ID {id:?} does not match existing lock ({:?}, held by {} for {})",
                        self.path(),
                        holder.id,
                        holder.who,
                        holder.operation
                    ),
                )
            };
            let not_locked = || {
                cloud::io(
                    KIND,
                    format!("unlocking {}: no lock with ID {id:?} is held", self.path()),
                )
            };
            if let Some(d) = &s.dynamo {
                match self.dynamo_holder(d).await? {
                    Some(h) if h.id == id => {}
                    Some(h) => return Err(mismatch(&h)),
                    None if s.use_lockfile => {}
                    None => return Err(not_locked()),
                }
            }
            if s.use_lockfile {
                match self.lockfile_holder().await? {
                    Some(h) if h.id == id => s.delete_raw(&self.lock_key()).await?,
                    Some(h) => return Err(mismatch(&h)),
                    None if s.dynamo.is_some() => {}
                    None => return Err(not_locked()),
                }
            }
            if let Some(d) = &s.dynamo {
                d.delete_item(&self.lock_path()).await?;
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(extra: serde_json::Value) -> S3Backend {
        let mut s = json!({"bucket": "b", "key": "app/t.tfstate", "region": "us-east-1",
            "access_key": "a", "secret_key": "s"});
        for (k, v) in extra.as_object().unwrap() {
            s[k] = v.clone();
        }
        S3Backend::new(&serde_json::from_value(s).unwrap()).unwrap()
    }

    #[test]
    fn state_keys_follow_terraforms_layout() {
        let cases = [
            ("default", json!({}), "app/t.tfstate"),
            ("dev", json!({}), "env:/dev/app/t.tfstate"),
            (
                "dev",
                json!({"workspace_key_prefix": "teams/x"}),
                "teams/x/dev/app/t.tfstate",
            ),
            (
                "dev",
                json!({"workspace_key_prefix": ""}),
                "dev/app/t.tfstate",
            ),
        ];
        for (ws, extra, want) in cases {
            assert_eq!(b(extra.clone()).state_key(ws), want, "case {ws} {extra}");
        }
    }
}
