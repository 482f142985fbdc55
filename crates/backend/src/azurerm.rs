//! Terraform's `azurerm` backend: state blobs in an Azure Storage
//! container, locked by an infinite blob lease with the lock information
//! in the blob's metadata, as Terraform does it.
//!
//! Layout (Terraform's):
//! * workspace `default`: the blob `key`; workspace `W`: `<key>env:W`;
//! * lock: a lease on the state blob (created empty if absent) whose
//!   proposed lease ID is the lock ID, and the metadata item
//!   `terraformlockid` = base64 of Terraform's lock JSON (Path
//!   `<container>/<blob>`). Writes while locked carry the lease ID; a write
//!   keeps the blob's metadata, so the lock information survives it.
//!
//! Authentication is the storage account's shared key (`access_key` or
//! `ARM_ACCESS_KEY`), signed by object_store's Azure signer. The blob
//! endpoint is `https://<account>.blob.core.windows.net`; an emulator's
//! (Azurite) is given with `TERRANE_AZURE_BLOB_ENDPOINT` (path-style,
//! e.g. `http://127.0.0.1:10000`), which Terraform's backend has no
//! setting for.

use std::sync::{Arc, Mutex};

use base64::Engine;
use object_store::azure::{AzureAccessKey, AzureAuthorizer, AzureCredential};
use object_store::client::{HttpClient, HttpConnector, HttpRequest, ReqwestConnector};
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

use crate::cloud::{self, Rt};
use crate::{Backend, BackendError, Payload, RemoteClient, RemoteLock, Result, Settings};

const KIND: &str = "azurerm";

/// Terraform's metadata key for the lock information (lower case).
pub const LOCK_META: &str = "terraformlockid";

/// Terraform's workspace separator in blob names.
const ENV_PREFIX: &str = "env:";

/// Settings of Terraform's azurerm backend that terrane serves.
pub(crate) const SERVED: &[&str] = &[
    "storage_account_name",
    "container_name",
    "key",
    "access_key",
    "environment",
    "resource_group_name",
    "subscription_id",
    "tenant_id",
    "use_cli",
    "snapshot",
    "lookup_blob_endpoint",
];

/// Settings Terraform knows that terrane refuses, naming them.
pub(crate) const REFUSED: &[&str] = &[
    "sas_token",
    "client_id",
    "client_id_file_path",
    "client_secret",
    "client_secret_file_path",
    "client_certificate",
    "client_certificate_path",
    "client_certificate_password",
    "use_msi",
    "use_oidc",
    "use_azuread_auth",
    "use_aks_workload_identity",
    "ado_pipeline_service_connection_id",
    "msi_endpoint",
    "oidc_token",
    "oidc_token_file_path",
    "oidc_request_url",
    "oidc_request_token",
    "endpoint",
    "metadata_host",
];

/// Path-segment encoding for blob names.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'/');

fn enc(s: &str) -> String {
    utf8_percent_encode(s, SEGMENT).to_string()
}

struct Shared {
    rt: Rt,
    http: HttpClient,
    /// `https://acct.blob.core.windows.net` or `http://host:port/acct`.
    base: String,
    account: String,
    container: String,
    key: String,
    credential: AzureCredential,
}

/// A configured azurerm backend.
pub struct AzurermBackend {
    shared: Arc<Shared>,
}

impl AzurermBackend {
    /// The backend for an evaluated `backend "azurerm" { }` block. Checks
    /// the settings and builds the client; makes no request.
    pub fn new(settings: &Settings) -> Result<AzurermBackend> {
        let endpoint = std::env::var("TERRANE_AZURE_BLOB_ENDPOINT").ok();
        Self::with_blob_endpoint(settings, endpoint.as_deref())
    }

    /// Like [`AzurermBackend::new`] with the blob endpoint given (an
    /// emulator's, path-style) instead of read from the environment.
    pub fn with_blob_endpoint(
        settings: &Settings,
        endpoint: Option<&str>,
    ) -> Result<AzurermBackend> {
        cloud::check_settings(KIND, settings, SERVED, REFUSED)?;
        if cloud::bool_setting(KIND, settings, "snapshot")? {
            return Err(cloud::settings_err(
                KIND,
                "snapshot: terrane does not support this setting of the azurerm backend yet",
            ));
        }
        // use_cli (Terraform's default) only matters without an access
        // key, which terrane requires; it is checked for type only.
        cloud::bool_setting(KIND, settings, "use_cli")?;
        if cloud::bool_setting(KIND, settings, "lookup_blob_endpoint")? {
            return Err(cloud::settings_err(
                KIND,
                "lookup_blob_endpoint: terrane does not support this setting of the azurerm \
                 backend yet (it reaches the blob endpoint of the public cloud directly)",
            ));
        }
        match crate::string_setting(KIND, settings, "environment")?.as_deref() {
            None | Some("") | Some("public") => {}
            Some(other) => {
                return Err(cloud::settings_err(
                    KIND,
                    format!("environment {other:?}: terrane serves only the public cloud yet"),
                ))
            }
        }
        let account = cloud::required(KIND, settings, "storage_account_name")?;
        let container = cloud::required(KIND, settings, "container_name")?;
        let key = cloud::required(KIND, settings, "key")?;
        let access_key = crate::string_setting(KIND, settings, "access_key")?
            .filter(|s| !s.is_empty())
            .or_else(|| {
                std::env::var("ARM_ACCESS_KEY")
                    .ok()
                    .filter(|s| !s.is_empty())
            })
            .ok_or_else(|| {
                cloud::settings_err(
                    KIND,
                    "no credentials: set access_key or ARM_ACCESS_KEY (terrane does not \
                     support SAS tokens or Azure AD authentication for this backend yet)",
                )
            })?;
        let credential =
            AzureCredential::AccessKey(AzureAccessKey::try_new(&access_key).map_err(|_| {
                cloud::settings_err(KIND, "access_key: not a base64 storage account key")
            })?);
        let base = match endpoint {
            Some(ep) if !ep.is_empty() => format!("{}/{account}", ep.trim_end_matches('/')),
            _ => format!("https://{account}.blob.core.windows.net"),
        };
        let options = cloud::client_options(KIND)?.with_allow_http(base.starts_with("http://"));
        let http = ReqwestConnector::default()
            .connect(&options)
            .map_err(|e| cloud::io(KIND, format!("HTTP client: {e}")))?;
        Ok(AzurermBackend {
            shared: Arc::new(Shared {
                rt: Rt::new(KIND)?,
                http,
                base,
                account,
                container,
                key,
                credential,
            }),
        })
    }
}

impl AzurermBackend {
    /// Who holds `workspace`'s lease lock (from the blob's metadata),
    /// without taking it; None when the blob is not leased.
    pub fn lock_holder(&self, workspace: &str) -> Result<Option<RemoteLock>> {
        let c = self.client(workspace)?;
        let blob = c
            .path()
            .rsplit_once(&format!("/{}/", self.shared.container))
            .map(|(_, b)| b.to_string())
            .unwrap_or_default();
        let s = &self.shared;
        s.rt.run(async {
            match s.properties(&blob).await? {
                Some(p) if p.header("x-ms-lease-status") == Some("locked") => {
                    Ok(Some(s.lock_info(&blob, &p)?.unwrap_or_else(|| {
                        RemoteLock {
                            path: format!("{}/{blob}", s.container),
                            info: "the blob is leased but holds no lock information".into(),
                            ..Default::default()
                        }
                    })))
                }
                _ => Ok(None),
            }
        })
    }
}

struct Reply {
    status: u16,
    headers: http::HeaderMap,
    body: Vec<u8>,
}

impl Reply {
    /// The service's error code and message (from the XML error body).
    fn message(&self) -> String {
        let body = String::from_utf8_lossy(&self.body);
        let code = xml_values(&body, "Code").into_iter().next();
        let msg = xml_values(&body, "Message").into_iter().next();
        match (code, msg) {
            (Some(c), Some(m)) => format!(
                "HTTP {}: {c}: {}",
                self.status,
                m.lines().next().unwrap_or("")
            ),
            _ => format!(
                "HTTP {}{}",
                self.status,
                self.headers
                    .get("x-ms-error-code")
                    .and_then(|v| v.to_str().ok())
                    .map(|c| format!(": {c}"))
                    .unwrap_or_default()
            ),
        }
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The blob's user metadata (`x-ms-meta-*`), names lower-cased.
    fn metadata(&self) -> Vec<(String, String)> {
        self.headers
            .iter()
            .filter_map(|(k, v)| {
                let name = k.as_str().strip_prefix("x-ms-meta-")?;
                Some((name.to_string(), v.to_str().ok()?.to_string()))
            })
            .collect()
    }
}

/// The text of every `<tag>…</tag>` in `xml`, entities decoded.
fn xml_values(xml: &str, tag: &str) -> Vec<String> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let mut out = Vec::new();
    let mut rest = xml;
    while let Some(i) = rest.find(&open) {
        rest = &rest[i + open.len()..];
        let Some(j) = rest.find(&close) else { break };
        out.push(
            rest[..j]
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&quot;", "\"")
                .replace("&apos;", "'")
                .replace("&amp;", "&"),
        );
        rest = &rest[j + close.len()..];
    }
    out
}

impl Shared {
    fn blob_url(&self, blob: &str) -> String {
        format!("{}/{}/{}", self.base, enc(&self.container), enc(blob))
    }

    fn display(&self, blob: &str) -> String {
        format!("azurerm://{}/{}/{blob}", self.account, self.container)
    }

    async fn send(
        &self,
        method: &str,
        url: String,
        headers: &[(&str, String)],
        body: Vec<u8>,
    ) -> Result<Reply> {
        let mut b = http::Request::builder().method(method).uri(&url);
        for (k, v) in headers {
            b = b.header(*k, v.as_str());
        }
        // Azure wants Content-Length on every write, 0 included.
        b = b.header("content-length", body.len().to_string());
        let mut req: HttpRequest = b
            .body(body.into())
            .map_err(|e| cloud::io(KIND, format!("request to {}: {e}", self.base)))?;
        AzureAuthorizer::new(&self.credential, &self.account)
            .try_authorize(&mut req)
            .map_err(|e| cloud::io(KIND, format!("signing the request: {e}")))?;
        let resp = self.http.execute(req).await.map_err(|e| {
            cloud::io(
                KIND,
                format!("{method} {}/{}: {e}", self.account, self.container),
            )
        })?;
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let body =
            resp.into_body().bytes().await.map_err(|e| {
                cloud::io(KIND, format!("reading the reply from {}: {e}", self.base))
            })?;
        Ok(Reply {
            status,
            headers,
            body: body.to_vec(),
        })
    }

    /// A 404 is a missing blob only when the container exists.
    async fn missing_container(&self, r: &Reply) -> Result<Option<BackendError>> {
        if r.header("x-ms-error-code") == Some("ContainerNotFound") {
            return Ok(Some(self.no_container()));
        }
        let c = self
            .send(
                "GET",
                format!("{}/{}?restype=container", self.base, enc(&self.container)),
                &[],
                Vec::new(),
            )
            .await?;
        Ok(match c.status {
            200 => None,
            404 => Some(self.no_container()),
            _ => Some(cloud::io(
                KIND,
                format!("checking container {:?}: {}", self.container, c.message()),
            )),
        })
    }

    fn no_container(&self) -> BackendError {
        cloud::io(
            KIND,
            format!(
                "container {:?} does not exist in storage account {:?}",
                self.container, self.account
            ),
        )
    }

    fn failed(&self, what: &str, blob: &str, r: &Reply) -> BackendError {
        let hint = match r.status {
            401 | 403 => " (the access key was refused)",
            _ => "",
        };
        cloud::io(
            KIND,
            format!("{what} {}: {}{hint}", self.display(blob), r.message()),
        )
    }

    /// The blob's properties; None when it does not exist.
    async fn properties(&self, blob: &str) -> Result<Option<Reply>> {
        let r = self
            .send("HEAD", self.blob_url(blob), &[], Vec::new())
            .await?;
        match r.status {
            200 => Ok(Some(r)),
            404 => match self.missing_container(&r).await? {
                Some(e) => Err(e),
                None => Ok(None),
            },
            _ => Err(self.failed("reading the properties of", blob, &r)),
        }
    }

    /// The lock information Terraform keeps in the blob's metadata.
    fn lock_info(&self, blob: &str, props: &Reply) -> Result<Option<RemoteLock>> {
        let Some((_, raw)) = props.metadata().into_iter().find(|(k, _)| k == LOCK_META) else {
            return Ok(None);
        };
        let json = base64::engine::general_purpose::STANDARD
            .decode(raw.trim())
            .map_err(|e| BackendError::Corrupt {
                path: self.display(blob),
                detail: format!("metadata {LOCK_META:?} is not base64: {e}"),
            })?;
        cloud::parse_lock(&self.display(blob), &json).map(Some)
    }

    async fn set_metadata(&self, blob: &str, lease: &str, meta: &[(String, String)]) -> Result<()> {
        let mut headers = vec![("x-ms-lease-id", lease.to_string())];
        let named: Vec<(String, String)> = meta
            .iter()
            .map(|(k, v)| (format!("x-ms-meta-{k}"), v.clone()))
            .collect();
        for (k, v) in &named {
            headers.push((k.as_str(), v.clone()));
        }
        let r = self
            .send(
                "PUT",
                format!("{}?comp=metadata", self.blob_url(blob)),
                &headers,
                Vec::new(),
            )
            .await?;
        match r.status {
            200 => Ok(()),
            _ => Err(self.failed("writing the metadata of", blob, &r)),
        }
    }
}

impl Backend for AzurermBackend {
    fn kind(&self) -> &'static str {
        KIND
    }

    fn workspaces(&self) -> Result<Vec<String>> {
        let s = &self.shared;
        let prefix = format!("{}{ENV_PREFIX}", s.key);
        s.rt.run(async {
            let mut found = Vec::new();
            let mut marker: Option<String> = None;
            loop {
                let mut url = format!(
                    "{}/{}?restype=container&comp=list&prefix={}",
                    s.base,
                    enc(&s.container),
                    utf8_percent_encode(&prefix, NON_ALPHANUMERIC)
                );
                if let Some(m) = &marker {
                    url.push_str(&format!(
                        "&marker={}",
                        utf8_percent_encode(m, NON_ALPHANUMERIC)
                    ));
                }
                let r = s.send("GET", url, &[], Vec::new()).await?;
                if r.status == 404 {
                    return Err(s.no_container());
                }
                if r.status != 200 {
                    return Err(s.failed("listing", &prefix, &r));
                }
                let body = String::from_utf8_lossy(&r.body).into_owned();
                for name in xml_values(&body, "Name") {
                    if let Some(ws) = name.strip_prefix(&prefix) {
                        if !ws.is_empty() && ws != "default" {
                            found.push(ws.to_string());
                        }
                    }
                }
                match xml_values(&body, "NextMarker").into_iter().next() {
                    Some(m) if !m.is_empty() => marker = Some(m),
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
            return Err(cloud::settings_err(KIND, "can't delete default state"));
        }
        cloud::check_workspace(KIND, name)?;
        self.client(name)?.delete()
    }

    fn client(&self, workspace: &str) -> Result<Box<dyn RemoteClient>> {
        cloud::check_workspace(KIND, workspace)?;
        let s = &self.shared;
        let blob = if workspace == "default" {
            s.key.clone()
        } else {
            format!("{}{ENV_PREFIX}{workspace}", s.key)
        };
        Ok(Box::new(AzurermClient {
            shared: s.clone(),
            blob,
            lease: Mutex::new(None),
        }))
    }
}

/// One workspace's state blob.
pub struct AzurermClient {
    shared: Arc<Shared>,
    blob: String,
    /// The lease this client holds (set by `lock`), sent with writes.
    lease: Mutex<Option<String>>,
}

impl AzurermClient {
    fn lease(&self) -> Option<String> {
        self.lease.lock().expect("lease mutex").clone()
    }

    fn lease_headers(&self) -> Vec<(&'static str, String)> {
        self.lease()
            .map(|l| vec![("x-ms-lease-id", l)])
            .unwrap_or_default()
    }

    /// A write refused because someone else leases the blob.
    async fn leased_error(&self, what: &str, r: &Reply) -> BackendError {
        let s = &self.shared;
        if r.status == 412 {
            if let Ok(Some(props)) = s.properties(&self.blob).await {
                if let Ok(Some(holder)) = s.lock_info(&self.blob, &props) {
                    return cloud::locked(&self.path(), holder);
                }
            }
        }
        s.failed(what, &self.blob, r)
    }
}

impl RemoteClient for AzurermClient {
    fn path(&self) -> String {
        self.shared.display(&self.blob)
    }

    fn get(&self) -> Result<Option<Payload>> {
        let s = &self.shared;
        s.rt.run(async {
            let r = s
                .send("GET", s.blob_url(&self.blob), &[], Vec::new())
                .await?;
            match r.status {
                // A lock on a new workspace leaves an empty blob: no state.
                200 if r.body.is_empty() => Ok(None),
                200 => {
                    let md5 = r
                        .header("content-md5")
                        .and_then(|m| base64::engine::general_purpose::STANDARD.decode(m).ok())
                        .unwrap_or_default();
                    Ok(Some(Payload { data: r.body, md5 }))
                }
                404 => match s.missing_container(&r).await? {
                    Some(e) => Err(e),
                    None => Ok(None),
                },
                _ => Err(s.failed("reading", &self.blob, &r)),
            }
        })
    }

    fn put(&self, data: &[u8]) -> Result<()> {
        let s = &self.shared;
        s.rt.run(async {
            // Keep the blob's metadata (the lock information among it).
            let meta = match s.properties(&self.blob).await? {
                Some(p) => p.metadata(),
                None => Vec::new(),
            };
            let named: Vec<(String, String)> = meta
                .iter()
                .map(|(k, v)| (format!("x-ms-meta-{k}"), v.clone()))
                .collect();
            let mut headers: Vec<(&str, String)> = vec![
                ("x-ms-blob-type", "BlockBlob".into()),
                ("content-type", "application/json".into()),
            ];
            headers.extend(self.lease_headers());
            for (k, v) in &named {
                headers.push((k.as_str(), v.clone()));
            }
            let r = s
                .send("PUT", s.blob_url(&self.blob), &headers, data.to_vec())
                .await?;
            match r.status {
                201 => Ok(()),
                404 => Err(s
                    .missing_container(&r)
                    .await?
                    .unwrap_or_else(|| s.failed("writing", &self.blob, &r))),
                _ => Err(self.leased_error("writing", &r).await),
            }
        })
    }

    fn delete(&self) -> Result<()> {
        let s = &self.shared;
        s.rt.run(async {
            let r = s
                .send(
                    "DELETE",
                    s.blob_url(&self.blob),
                    &self.lease_headers(),
                    Vec::new(),
                )
                .await?;
            match r.status {
                202 => Ok(()),
                404 => match s.missing_container(&r).await? {
                    Some(e) => Err(e),
                    None => Ok(()),
                },
                _ => Err(self.leased_error("deleting", &r).await),
            }
        })
    }

    fn lock(&self, lock: &RemoteLock) -> Result<String> {
        let s = &self.shared;
        // Azure lease IDs are GUIDs: a caller's non-GUID ID gets a new one.
        let id = if uuid::Uuid::parse_str(&lock.id).is_ok() {
            lock.id.clone()
        } else {
            cloud::new_lock_id()
        };
        let lock_path = format!("{}/{}", s.container, self.blob);
        s.rt.run(async {
            let props = match s.properties(&self.blob).await? {
                Some(p) => p,
                None => {
                    let r = s
                        .send(
                            "PUT",
                            s.blob_url(&self.blob),
                            &[
                                ("x-ms-blob-type", "BlockBlob".into()),
                                ("content-type", "application/json".into()),
                            ],
                            Vec::new(),
                        )
                        .await?;
                    if r.status != 201 {
                        return Err(s.failed("creating", &self.blob, &r));
                    }
                    s.properties(&self.blob).await?.ok_or_else(|| {
                        cloud::io(KIND, format!("{} vanished after creation", self.path()))
                    })?
                }
            };
            let held = |props: &Reply| -> Result<BackendError> {
                let holder = s
                    .lock_info(&self.blob, props)?
                    .unwrap_or_else(|| RemoteLock {
                        path: lock_path.clone(),
                        info: "the blob is leased but holds no lock information".into(),
                        ..Default::default()
                    });
                Ok(cloud::locked(&self.path(), holder))
            };
            if props.header("x-ms-lease-status") == Some("locked") {
                return Err(held(&props)?);
            }
            let r = s
                .send(
                    "PUT",
                    format!("{}?comp=lease", s.blob_url(&self.blob)),
                    &[
                        ("x-ms-lease-action", "acquire".into()),
                        ("x-ms-lease-duration", "-1".into()),
                        ("x-ms-proposed-lease-id", id.clone()),
                    ],
                    Vec::new(),
                )
                .await?;
            match r.status {
                201 => {}
                409 => {
                    let props = s.properties(&self.blob).await?;
                    return Err(match props {
                        Some(p) => held(&p)?,
                        None => cloud::locked(&self.path(), cloud::unknown_holder(&lock_path)),
                    });
                }
                _ => return Err(s.failed("leasing", &self.blob, &r)),
            }
            let lease = r.header("x-ms-lease-id").unwrap_or(&id).to_string();
            *self.lease.lock().expect("lease mutex") = Some(lease.clone());
            let info = cloud::lock_json(lock, &lease, &lock_path);
            let mut meta: Vec<(String, String)> = props
                .metadata()
                .into_iter()
                .filter(|(k, _)| k != LOCK_META)
                .collect();
            meta.push((
                LOCK_META.into(),
                base64::engine::general_purpose::STANDARD.encode(info),
            ));
            s.set_metadata(&self.blob, &lease, &meta).await?;
            Ok(lease)
        })
    }

    fn unlock(&self, id: &str) -> Result<()> {
        let s = &self.shared;
        s.rt.run(async {
            let props = s.properties(&self.blob).await?.ok_or_else(|| {
                cloud::io(KIND, format!("unlocking {}: the blob does not exist", self.path()))
            })?;
            let holder = s.lock_info(&self.blob, &props)?.ok_or_else(|| {
                cloud::io(
                    KIND,
                    format!("unlocking {}: blob metadata {LOCK_META:?} was empty", self.path()),
                )
            })?;
            if holder.id != id {
                return Err(cloud::io(
                    KIND,
                    format!(
                        "unlocking {}: lock ID {id:?} does not match existing lock ({:?}, held by {} for {})",
                        self.path(),
                        holder.id,
                        holder.who,
                        holder.operation
                    ),
                ));
            }
            let meta: Vec<(String, String)> = props
                .metadata()
                .into_iter()
                .filter(|(k, _)| k != LOCK_META)
                .collect();
            s.set_metadata(&self.blob, id, &meta).await?;
            let r = s
                .send(
                    "PUT",
                    format!("{}?comp=lease", s.blob_url(&self.blob)),
                    &[
                        ("x-ms-lease-action", "release".into()),
                        ("x-ms-lease-id", id.to_string()),
                    ],
                    Vec::new(),
                )
                .await?;
            if r.status != 200 {
                return Err(s.failed("releasing the lease on", &self.blob, &r));
            }
            *self.lease.lock().expect("lease mutex") = None;
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_reply_names_are_read_and_unescaped() {
        let cases: &[(&str, &str, &[&str])] = &[
            (
                "two blobs",
                "<Blobs><Blob><Name>k.tfstateenv:dev</Name></Blob><Blob><Name>k.tfstateenv:a&amp;b</Name></Blob></Blobs>",
                &["k.tfstateenv:dev", "k.tfstateenv:a&b"],
            ),
            ("none", "<Blobs></Blobs>", &[]),
            ("unclosed", "<Name>x", &[]),
        ];
        for (name, xml, want) in cases {
            assert_eq!(xml_values(xml, "Name"), *want, "case {name}");
        }
    }

    #[test]
    fn workspace_blobs_follow_terraforms_layout() {
        let s: Settings = serde_json::from_value(serde_json::json!({
            "storage_account_name": "acct",
            "container_name": "c",
            "key": "prod.tfstate",
            "access_key": "a2V5",
        }))
        .unwrap();
        let b = AzurermBackend::with_blob_endpoint(&s, None).unwrap();
        let cases = [
            ("default", "azurerm://acct/c/prod.tfstate"),
            ("dev", "azurerm://acct/c/prod.tfstateenv:dev"),
        ];
        for (ws, want) in cases {
            assert_eq!(b.client(ws).unwrap().path(), want, "case {ws}");
        }
        assert!(b.client("a/b").is_err(), "a workspace name holds no \"/\"");
    }
}
