//! `backend "http"`: a REST state endpoint, as GitLab's managed state and
//! other servers speak it (Terraform's protocol, facts only):
//! * `GET address`: the state (200), or none (204, 404);
//! * `update_method` (POST) `address[?ID=lock id]`: stores the state, with
//!   `Content-MD5`;
//! * `DELETE address`;
//! * `lock_method` (LOCK) `lock_address`, body the lock description: 200
//!   locked; 423 or 409 held by someone else, whose description is the
//!   response body; `unlock_method` (UNLOCK) `unlock_address`, same body.
//!
//! Without `lock_address` the state is not locked (as Terraform). Only the
//! default workspace exists. `http://` and `https://` endpoints are served;
//! TLS (trust, client certificates, `skip_cert_verification`) is set up in
//! `httptls`.

use crate::{check_known, string_setting, Backend, BackendError, Payload, RemoteClient, Result};
use crate::{RemoteLock, Settings};
use base64::Engine as _;
use md5::Digest;
use std::sync::Mutex;

/// The http backend's endpoints and credentials.
pub struct HttpBackend {
    cfg: std::sync::Arc<Config>,
}

struct Config {
    address: String,
    update_method: String,
    lock_address: Option<String>,
    lock_method: String,
    unlock_address: Option<String>,
    unlock_method: String,
    username: Option<String>,
    password: Option<String>,
    agent: ureq::Agent,
}

fn settings_err(detail: impl Into<String>) -> BackendError {
    BackendError::Settings {
        backend: "http".into(),
        detail: detail.into(),
    }
}

/// A setting, else the environment variable Terraform reads for it.
fn setting(settings: &Settings, name: &str, env: &str) -> Result<Option<String>> {
    Ok(string_setting("http", settings, name)?
        .or_else(|| std::env::var(env).ok())
        .filter(|v| !v.is_empty()))
}

fn check_url(name: &str, url: &str) -> Result<()> {
    if !url.starts_with("http://") && !url.starts_with("https://") {
        return Err(settings_err(format!(
            "{name}: {url:?} is not an http:// or https:// URL"
        )));
    }
    Ok(())
}

/// The settings of Terraform's http backend (its schema's attributes).
pub const ATTRIBUTES: &[&str] = &[
    "address",
    "update_method",
    "lock_address",
    "lock_method",
    "unlock_address",
    "unlock_method",
    "username",
    "password",
    "skip_cert_verification",
    "retry_max",
    "retry_wait_min",
    "retry_wait_max",
    "client_ca_certificate_pem",
    "client_certificate_pem",
    "client_private_key_pem",
];

impl HttpBackend {
    pub fn new(settings: &Settings) -> Result<HttpBackend> {
        check_known("http", settings, ATTRIBUTES)?;
        let address = setting(settings, "address", "TF_HTTP_ADDRESS")?
            .ok_or_else(|| settings_err("address is required (or TF_HTTP_ADDRESS)"))?;
        check_url("address", &address)?;
        let lock_address = setting(settings, "lock_address", "TF_HTTP_LOCK_ADDRESS")?;
        let unlock_address = setting(settings, "unlock_address", "TF_HTTP_UNLOCK_ADDRESS")?;
        for (n, a) in [
            ("lock_address", &lock_address),
            ("unlock_address", &unlock_address),
        ] {
            if let Some(a) = a {
                check_url(n, a)?;
            }
        }
        let skip_verify = match settings.get("skip_cert_verification") {
            None | Some(serde_json::Value::Null) => false,
            Some(serde_json::Value::Bool(b)) => *b,
            Some(other) => {
                return Err(settings_err(format!(
                    "skip_cert_verification: a bool is required, got {other}"
                )))
            }
        };
        let tls = crate::httptls::client_config(&crate::httptls::TlsSettings {
            skip_verify,
            ca_pem: setting(
                settings,
                "client_ca_certificate_pem",
                "TF_HTTP_CLIENT_CA_CERTIFICATE_PEM",
            )?,
            client_cert_pem: setting(
                settings,
                "client_certificate_pem",
                "TF_HTTP_CLIENT_CERTIFICATE_PEM",
            )?,
            client_key_pem: setting(
                settings,
                "client_private_key_pem",
                "TF_HTTP_CLIENT_PRIVATE_KEY_PEM",
            )?,
        })?;
        let method = |name: &str, env: &str, default: &str| -> Result<String> {
            Ok(setting(settings, name, env)?.unwrap_or_else(|| default.into()))
        };
        Ok(HttpBackend {
            cfg: std::sync::Arc::new(Config {
                update_method: method("update_method", "TF_HTTP_UPDATE_METHOD", "POST")?,
                lock_method: method("lock_method", "TF_HTTP_LOCK_METHOD", "LOCK")?,
                unlock_method: method("unlock_method", "TF_HTTP_UNLOCK_METHOD", "UNLOCK")?,
                username: setting(settings, "username", "TF_HTTP_USERNAME")?,
                password: setting(settings, "password", "TF_HTTP_PASSWORD")?,
                address,
                lock_address,
                unlock_address,
                agent: ureq::AgentBuilder::new()
                    .timeout(std::time::Duration::from_secs(60))
                    .tls_connector(std::sync::Arc::new(crate::httptls::Connector(
                        std::sync::Arc::new(tls),
                    )))
                    .build(),
            }),
        })
    }
}

impl Backend for HttpBackend {
    fn kind(&self) -> &'static str {
        "http"
    }

    fn workspaces(&self) -> Result<Vec<String>> {
        Ok(vec!["default".into()])
    }

    fn delete_workspace(&self, _name: &str) -> Result<()> {
        Err(BackendError::Io {
            backend: "http".into(),
            detail: "the http backend has only the default workspace".into(),
        })
    }

    fn client(&self, workspace: &str) -> Result<Box<dyn RemoteClient>> {
        if workspace != "default" {
            return Err(BackendError::Io {
                backend: "http".into(),
                detail: format!(
                    "the http backend has only the default workspace, not {workspace:?}"
                ),
            });
        }
        Ok(Box::new(HttpClient {
            cfg: self.cfg.clone(),
            held: Mutex::new(None),
        }))
    }
}

struct HttpClient {
    cfg: std::sync::Arc<Config>,
    /// The lock held: its ID and description (sent again to unlock).
    held: Mutex<Option<RemoteLock>>,
}

/// What a request came back with.
enum Reply {
    Ok(u16, Vec<u8>),
    Status(u16, Vec<u8>),
}

impl HttpClient {
    fn request(&self, method: &str, url: &str, body: Option<(&[u8], &str)>) -> Result<Reply> {
        let mut req = self.cfg.agent.request(method, url);
        if let Some(user) = &self.cfg.username {
            let pass = self.cfg.password.clone().unwrap_or_default();
            let token = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{pass}"));
            req = req.set("Authorization", &format!("Basic {token}"));
        }
        let res = match body {
            Some((data, content_type)) => {
                let md5 = base64::engine::general_purpose::STANDARD.encode(md5::Md5::digest(data));
                req.set("Content-Type", content_type)
                    .set("Content-MD5", &md5)
                    .send_bytes(data)
            }
            None => req.call(),
        };
        let read = |r: ureq::Response| -> Result<Vec<u8>> {
            let mut data = Vec::new();
            std::io::Read::read_to_end(&mut r.into_reader(), &mut data).map_err(|e| {
                BackendError::Io {
                    backend: "http".into(),
                    detail: format!("{method} {}: reading the response: {e}", redact(url)),
                }
            })?;
            Ok(data)
        };
        match res {
            Ok(r) => {
                let code = r.status();
                Ok(Reply::Ok(code, read(r)?))
            }
            Err(ureq::Error::Status(code, r)) => Ok(Reply::Status(code, read(r)?)),
            Err(e) => Err(BackendError::Io {
                backend: "http".into(),
                detail: format!("{method} {}: {}", redact(url), transport(&e)),
            }),
        }
    }

    fn status_error(&self, method: &str, url: &str, code: u16) -> BackendError {
        let what = match code {
            401 => "invalid credentials (HTTP 401)".to_string(),
            403 => "forbidden (HTTP 403)".to_string(),
            500 => "the server failed (HTTP 500)".to_string(),
            c => format!("unexpected HTTP response code {c}"),
        };
        BackendError::Io {
            backend: "http".into(),
            detail: format!("{method} {}: {what}", redact(url)),
        }
    }
}

/// A URL without any user:password part.
pub(crate) fn redact(url: &str) -> String {
    match (url.find("://"), url.find('@')) {
        (Some(s), Some(at)) if at > s => format!("{}***@{}", &url[..s + 3], &url[at + 1..]),
        _ => url.to_string(),
    }
}

pub(crate) fn transport(e: &ureq::Error) -> String {
    match e {
        ureq::Error::Transport(t) => t.to_string(),
        other => other.to_string(),
    }
}

impl RemoteClient for HttpClient {
    fn path(&self) -> String {
        redact(&self.cfg.address)
    }

    fn get(&self) -> Result<Option<Payload>> {
        match self.request("GET", &self.cfg.address, None)? {
            Reply::Ok(204, _) | Reply::Status(404, _) => Ok(None),
            Reply::Ok(_, data) if data.is_empty() => Ok(None),
            Reply::Ok(_, data) => Ok(Some(Payload {
                md5: md5::Md5::digest(&data).to_vec(),
                data,
            })),
            Reply::Status(code, _) => Err(self.status_error("GET", &self.cfg.address, code)),
        }
    }

    fn put(&self, data: &[u8]) -> Result<()> {
        let mut url = self.cfg.address.clone();
        if let Some(l) = self.held.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            url.push(if url.contains('?') { '&' } else { '?' });
            url.push_str(&format!("ID={}", l.id));
        }
        let method = self.cfg.update_method.clone();
        match self.request(&method, &url, Some((data, "application/json")))? {
            Reply::Ok(..) => Ok(()),
            Reply::Status(code, _) => Err(self.status_error(&method, &url, code)),
        }
    }

    fn delete(&self) -> Result<()> {
        match self.request("DELETE", &self.cfg.address, None)? {
            Reply::Ok(..) | Reply::Status(404, _) => Ok(()),
            Reply::Status(code, _) => Err(self.status_error("DELETE", &self.cfg.address, code)),
        }
    }

    fn lock(&self, lock: &RemoteLock) -> Result<String> {
        let Some(addr) = self.cfg.lock_address.clone() else {
            return Ok(lock.id.clone());
        };
        let mut info = lock.clone();
        info.path = self.path();
        let body = serde_json::to_vec(&info).unwrap_or_default();
        let method = self.cfg.lock_method.clone();
        match self.request(&method, &addr, Some((&body, "application/json")))? {
            Reply::Ok(..) => {
                *self.held.lock().unwrap_or_else(|p| p.into_inner()) = Some(info);
                Ok(lock.id.clone())
            }
            Reply::Status(423 | 409, data) => Err(BackendError::Locked {
                path: self.path(),
                holder: Box::new(
                    serde_json::from_slice(&data).unwrap_or_else(|_| RemoteLock {
                        path: self.path(),
                        info: "the server did not describe the holder".into(),
                        ..Default::default()
                    }),
                ),
            }),
            Reply::Status(code, _) => Err(self.status_error(&method, &addr, code)),
        }
    }

    fn unlock(&self, id: &str) -> Result<()> {
        let Some(addr) = self.cfg.unlock_address.clone() else {
            return Ok(());
        };
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        let info = match held.as_ref() {
            Some(l) if l.id == id => l.clone(),
            _ => RemoteLock {
                id: id.into(),
                ..Default::default()
            },
        };
        let body = serde_json::to_vec(&info).unwrap_or_default();
        let method = self.cfg.unlock_method.clone();
        match self.request(&method, &addr, Some((&body, "application/json")))? {
            Reply::Ok(..) => {
                *held = None;
                Ok(())
            }
            Reply::Status(code, _) => Err(self.status_error(&method, &addr, code)),
        }
    }
}
