//! Terraform's `gcs` backend: state objects in a Google Cloud Storage
//! bucket, locked by a lock object created only if absent.
//!
//! Layout (Terraform's):
//! * workspace `W`: the object `<prefix>/W.tfstate` (`W.tfstate` with no
//!   prefix); `default` is `default.tfstate`;
//! * lock: `<prefix>/W.tflock`, holding Terraform's lock JSON, created with
//!   `ifGenerationMatch=0`; the lock ID is the lock object's generation,
//!   and unlocking deletes it with `ifGenerationMatch=<ID>`.
//!
//! Calls go to the JSON API (`storage_custom_endpoint` for an emulator)
//! through object_store's HTTP client; credentials (`credentials`,
//! `access_token`, or Application Default Credentials) come from
//! object_store's GCP credential providers.

use std::sync::Arc;

use base64::Engine;
use md5::{Digest, Md5};
use object_store::client::{HttpClient, HttpConnector, HttpRequest, ReqwestConnector};
use object_store::gcp::{GcpCredentialProvider, GoogleCloudStorageBuilder};
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

use crate::cloud::{self, Rt};
use crate::{Backend, BackendError, Payload, RemoteClient, RemoteLock, Result, Settings};

const KIND: &str = "gcs";

/// Settings of Terraform's gcs backend that terrane serves.
pub(crate) const SERVED: &[&str] = &[
    "bucket",
    "prefix",
    "credentials",
    "access_token",
    "storage_custom_endpoint",
];

/// Settings Terraform knows that terrane refuses, naming them.
pub(crate) const REFUSED: &[&str] = &[
    "impersonate_service_account",
    "impersonate_service_account_delegates",
    "encryption_key",
    "kms_encryption_key",
];

/// What goes into a URL path segment or query value unescaped.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

fn enc(s: &str) -> String {
    utf8_percent_encode(s, SEGMENT).to_string()
}

struct Shared {
    rt: Rt,
    http: HttpClient,
    /// The service root, e.g. `https://storage.googleapis.com`.
    root: String,
    bucket: String,
    /// Empty, or ending in "/".
    prefix: String,
    auth: Option<GcpCredentialProvider>,
}

/// A configured gcs backend.
pub struct GcsBackend {
    shared: Arc<Shared>,
}

impl GcsBackend {
    /// The backend for an evaluated `backend "gcs" { }` block. Checks the
    /// settings and builds the client; makes no request.
    pub fn new(settings: &Settings) -> Result<GcsBackend> {
        cloud::check_settings(KIND, settings, SERVED, REFUSED)?;
        let bucket = cloud::required(KIND, settings, "bucket")?;
        let mut prefix = crate::string_setting(KIND, settings, "prefix")?.unwrap_or_default();
        if prefix.starts_with('/') {
            return Err(cloud::settings_err(
                KIND,
                format!("prefix {prefix:?}: must not start with \"/\""),
            ));
        }
        if !prefix.is_empty() && !prefix.ends_with('/') {
            prefix.push('/');
        }
        let endpoint = crate::string_setting(KIND, settings, "storage_custom_endpoint")?
            .filter(|s| !s.is_empty())
            .or_else(|| std::env::var("GOOGLE_STORAGE_CUSTOM_ENDPOINT").ok())
            .filter(|s| !s.is_empty());
        let root = match &endpoint {
            None => "https://storage.googleapis.com".to_string(),
            Some(ep) => {
                let ep = ep.trim_end_matches('/');
                ep.strip_suffix("/storage/v1").unwrap_or(ep).to_string()
            }
        };
        let credentials =
            crate::string_setting(KIND, settings, "credentials")?.filter(|s| !s.is_empty());
        let token = crate::string_setting(KIND, settings, "access_token")?
            .filter(|s| !s.is_empty())
            .or_else(|| std::env::var("GOOGLE_OAUTH_ACCESS_TOKEN").ok())
            .filter(|s| !s.is_empty());
        let mut builder = GoogleCloudStorageBuilder::new()
            .with_bucket_name(&bucket)
            .with_client_options(cloud::client_options(KIND)?);
        let explicit = credentials.is_some() || token.is_some();
        if let Some(c) = &credentials {
            builder = if c.trim_start().starts_with('{') {
                builder.with_service_account_key(c)
            } else {
                builder.with_service_account_path(c)
            };
        } else if let Some(t) = &token {
            builder = builder.with_bearer_token(t);
        }
        // An emulator endpoint without credentials is called anonymously;
        // the real service always needs credentials (ADC when not given).
        let auth = if endpoint.is_some() && !explicit {
            None
        } else {
            let store = builder
                .build()
                .map_err(|e| cloud::settings_err(KIND, format!("credentials: {e}")))?;
            Some(store.credentials().clone())
        };
        let options = cloud::client_options(KIND)?.with_allow_http(root.starts_with("http://"));
        let http = ReqwestConnector::default()
            .connect(&options)
            .map_err(|e| cloud::io(KIND, format!("HTTP client: {e}")))?;
        Ok(GcsBackend {
            shared: Arc::new(Shared {
                rt: Rt::new(KIND)?,
                http,
                root,
                bucket,
                prefix,
                auth,
            }),
        })
    }
}

impl GcsBackend {
    /// Who holds `workspace`'s lock (its ID being the lock object's
    /// generation), without taking it; None when it is free.
    pub fn lock_holder(&self, workspace: &str) -> Result<Option<RemoteLock>> {
        cloud::check_workspace(KIND, workspace)?;
        let c = GcsClient::new(&self.shared, workspace);
        self.shared.rt.run(c.holder())
    }
}

/// A reply: status and body.
struct Reply {
    status: u16,
    body: Vec<u8>,
}

impl Reply {
    fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }

    /// The service's error message (never request headers).
    fn message(&self) -> String {
        let j = self.json();
        match j["error"]["message"].as_str() {
            Some(m) => format!("HTTP {}: {m}", self.status),
            None => format!(
                "HTTP {}: {}",
                self.status,
                String::from_utf8_lossy(&self.body)
                    .chars()
                    .take(300)
                    .collect::<String>()
            ),
        }
    }
}

impl Shared {
    fn url(&self, name: &str) -> String {
        format!("gs://{}/{name}", self.bucket)
    }

    fn object_url(&self, name: &str) -> String {
        format!(
            "{}/storage/v1/b/{}/o/{}",
            self.root,
            enc(&self.bucket),
            enc(name)
        )
    }

    async fn send(
        &self,
        method: &str,
        url: String,
        ctype: Option<&str>,
        body: Vec<u8>,
    ) -> Result<Reply> {
        let mut b = http::Request::builder().method(method).uri(&url);
        if let Some(ct) = ctype {
            b = b.header("content-type", ct);
        }
        if let Some(auth) = &self.auth {
            let cred = auth
                .get_credential()
                .await
                .map_err(|e| cloud::io(KIND, format!("getting Google credentials: {e}")))?;
            b = b.header("authorization", format!("Bearer {}", cred.bearer));
        }
        let req: HttpRequest = b
            .body(body.into())
            .map_err(|e| cloud::io(KIND, format!("request to {}: {e}", self.root)))?;
        let resp = self
            .http
            .execute(req)
            .await
            .map_err(|e| cloud::io(KIND, format!("{method} gs://{}: {e}", self.bucket)))?;
        let status = resp.status().as_u16();
        let body =
            resp.into_body().bytes().await.map_err(|e| {
                cloud::io(KIND, format!("reading the reply from {}: {e}", self.root))
            })?;
        Ok(Reply {
            status,
            body: body.to_vec(),
        })
    }

    /// A 404 is a missing object only when the bucket exists.
    async fn missing_bucket(&self) -> Result<Option<BackendError>> {
        let r = self
            .send(
                "GET",
                format!("{}/storage/v1/b/{}", self.root, enc(&self.bucket)),
                None,
                Vec::new(),
            )
            .await?;
        Ok(match r.status {
            200 => None,
            404 => Some(cloud::io(
                KIND,
                format!("bucket {:?} does not exist", self.bucket),
            )),
            _ => Some(cloud::io(
                KIND,
                format!("checking bucket {:?}: {}", self.bucket, r.message()),
            )),
        })
    }

    fn failed(&self, what: &str, name: &str, r: &Reply) -> BackendError {
        let hint = match r.status {
            401 | 403 => " (the credentials were refused)",
            _ => "",
        };
        cloud::io(
            KIND,
            format!("{what} {}: {}{hint}", self.url(name), r.message()),
        )
    }

    async fn get_media(&self, name: &str) -> Result<Option<Vec<u8>>> {
        let r = self
            .send(
                "GET",
                format!("{}?alt=media", self.object_url(name)),
                None,
                Vec::new(),
            )
            .await?;
        match r.status {
            200 => Ok(Some(r.body)),
            404 => match self.missing_bucket().await? {
                Some(e) => Err(e),
                None => Ok(None),
            },
            _ => Err(self.failed("reading", name, &r)),
        }
    }

    /// The object's metadata (generation and so on), None when absent.
    async fn get_meta(&self, name: &str) -> Result<Option<serde_json::Value>> {
        let r = self
            .send("GET", self.object_url(name), None, Vec::new())
            .await?;
        match r.status {
            200 => Ok(Some(r.json())),
            404 => match self.missing_bucket().await? {
                Some(e) => Err(e),
                None => Ok(None),
            },
            _ => Err(self.failed("reading", name, &r)),
        }
    }

    /// Uploads `data` as `name`; `if_generation` adds the precondition.
    async fn upload(&self, name: &str, data: &[u8], if_generation: Option<i64>) -> Result<Reply> {
        let mut url = format!(
            "{}/upload/storage/v1/b/{}/o?uploadType=media&name={}",
            self.root,
            enc(&self.bucket),
            enc(name)
        );
        if let Some(g) = if_generation {
            url.push_str(&format!("&ifGenerationMatch={g}"));
        }
        // Go's content sniffing gives JSON text this type, as Terraform
        // writes it.
        self.send(
            "POST",
            url,
            Some("text/plain; charset=utf-8"),
            data.to_vec(),
        )
        .await
    }
}

fn generation(meta: &serde_json::Value) -> Option<String> {
    match &meta["generation"] {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

impl Backend for GcsBackend {
    fn kind(&self) -> &'static str {
        KIND
    }

    fn workspaces(&self) -> Result<Vec<String>> {
        let s = &self.shared;
        s.rt.run(async {
            let mut found = Vec::new();
            let mut page: Option<String> = None;
            loop {
                let mut url = format!(
                    "{}/storage/v1/b/{}/o?delimiter=%2F&prefix={}",
                    s.root,
                    enc(&s.bucket),
                    enc(&s.prefix)
                );
                if let Some(p) = &page {
                    url.push_str(&format!("&pageToken={}", enc(p)));
                }
                let r = s.send("GET", url, None, Vec::new()).await?;
                if r.status == 404 {
                    return Err(s
                        .missing_bucket()
                        .await?
                        .unwrap_or_else(|| s.failed("listing", &s.prefix, &r)));
                }
                if r.status != 200 {
                    return Err(s.failed("listing", &s.prefix, &r));
                }
                let j = r.json();
                for item in j["items"].as_array().into_iter().flatten() {
                    let name = item["name"].as_str().unwrap_or("");
                    let rest = name.strip_prefix(&s.prefix).unwrap_or("");
                    if let Some(ws) = rest.strip_suffix(".tfstate") {
                        if !ws.is_empty() && !ws.contains('/') && ws != "default" {
                            found.push(ws.to_string());
                        }
                    }
                }
                match j["nextPageToken"].as_str() {
                    Some(t) if !t.is_empty() => page = Some(t.to_string()),
                    _ => break,
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
            return Err(cloud::settings_err(
                KIND,
                "cowardly refusing to delete the default state",
            ));
        }
        cloud::check_workspace(KIND, name)?;
        self.client(name)?.delete()
    }

    fn client(&self, workspace: &str) -> Result<Box<dyn RemoteClient>> {
        cloud::check_workspace(KIND, workspace)?;
        Ok(Box::new(GcsClient::new(&self.shared, workspace)))
    }
}

/// One workspace's state object in a GCS bucket.
pub struct GcsClient {
    shared: Arc<Shared>,
    state: String,
    lock: String,
}

impl GcsClient {
    fn new(shared: &Arc<Shared>, workspace: &str) -> GcsClient {
        GcsClient {
            shared: shared.clone(),
            state: format!("{}{workspace}.tfstate", shared.prefix),
            lock: format!("{}{workspace}.tflock", shared.prefix),
        }
    }

    /// The lock holder, its ID being the lock object's generation.
    async fn holder(&self) -> Result<Option<RemoteLock>> {
        let s = &self.shared;
        let Some(meta) = s.get_meta(&self.lock).await? else {
            return Ok(None);
        };
        let Some(data) = s.get_media(&self.lock).await? else {
            return Ok(None);
        };
        let mut info = cloud::parse_lock(&s.url(&self.lock), &data)?;
        info.id = generation(&meta).unwrap_or_default();
        Ok(Some(info))
    }
}

impl RemoteClient for GcsClient {
    fn path(&self) -> String {
        self.shared.url(&self.state)
    }

    fn get(&self) -> Result<Option<Payload>> {
        let s = &self.shared;
        s.rt.run(async {
            Ok(s.get_media(&self.state).await?.map(|data| Payload {
                md5: Md5::digest(&data).to_vec(),
                data,
            }))
        })
    }

    fn put(&self, data: &[u8]) -> Result<()> {
        let s = &self.shared;
        s.rt.run(async {
            let r = s.upload(&self.state, data, None).await?;
            match r.status {
                200 => {
                    // The service's MD5 of what it stored must be ours.
                    let want = base64::engine::general_purpose::STANDARD.encode(Md5::digest(data));
                    match r.json()["md5Hash"].as_str() {
                        Some(got) if got != want => Err(BackendError::Corrupt {
                            path: self.path(),
                            detail: format!("the stored object's MD5 {got} is not {want}"),
                        }),
                        _ => Ok(()),
                    }
                }
                404 => Err(s
                    .missing_bucket()
                    .await?
                    .unwrap_or_else(|| s.failed("writing", &self.state, &r))),
                _ => Err(s.failed("writing", &self.state, &r)),
            }
        })
    }

    fn delete(&self) -> Result<()> {
        let s = &self.shared;
        s.rt.run(async {
            let r = s
                .send("DELETE", s.object_url(&self.state), None, Vec::new())
                .await?;
            match r.status {
                200 | 204 => Ok(()),
                404 => match s.missing_bucket().await? {
                    Some(e) => Err(e),
                    None => Ok(()),
                },
                _ => Err(s.failed("deleting", &self.state, &r)),
            }
        })
    }

    fn lock(&self, lock: &RemoteLock) -> Result<String> {
        let s = &self.shared;
        let lock_url = s.url(&self.lock);
        s.rt.run(async {
            // The service refuses a second create (ifGenerationMatch=0);
            // reading first also names the holder on stores that do not
            // enforce the precondition.
            if let Some(holder) = self.holder().await? {
                return Err(cloud::locked(&self.path(), holder));
            }
            let info = cloud::lock_json(lock, "", &lock_url);
            let r = s.upload(&self.lock, &info, Some(0)).await?;
            match r.status {
                200 => generation(&r.json()).ok_or_else(|| {
                    cloud::io(
                        KIND,
                        format!("creating {lock_url}: the reply has no generation"),
                    )
                }),
                412 => {
                    let holder = self
                        .holder()
                        .await?
                        .unwrap_or_else(|| cloud::unknown_holder(&lock_url));
                    Err(cloud::locked(&self.path(), holder))
                }
                404 => Err(s
                    .missing_bucket()
                    .await?
                    .unwrap_or_else(|| s.failed("creating the lock", &self.lock, &r))),
                _ => Err(s.failed("creating the lock", &self.lock, &r)),
            }
        })
    }

    fn unlock(&self, id: &str) -> Result<()> {
        let s = &self.shared;
        let gen: i64 = id.parse().map_err(|_| {
            cloud::io(
                KIND,
                format!("Lock ID should be numerical value, got {id:?}"),
            )
        })?;
        s.rt.run(async {
            match self.holder().await? {
                None => {
                    return Err(cloud::io(
                        KIND,
                        format!("unlocking {}: no lock is held", self.path()),
                    ))
                }
                Some(h) if h.id != id => {
                    return Err(cloud::io(
                        KIND,
                        format!(
                            "unlocking {}: lock ID {id:?} does not match existing lock ({:?}, held by {} for {})",
                            self.path(),
                            h.id,
                            h.who,
                            h.operation
                        ),
                    ))
                }
                Some(_) => {}
            }
            let r = s
                .send(
                    "DELETE",
                    format!("{}?ifGenerationMatch={gen}", s.object_url(&self.lock)),
                    None,
                    Vec::new(),
                )
                .await?;
            match r.status {
                200 | 204 => Ok(()),
                _ => Err(s.failed("removing the lock", &self.lock, &r)),
            }
        })
    }
}
