//! A small HTTPS GET client for registries: rustls (aws-lc-rs) over
//! hyper's HTTP/1.1 connection, trusting the certificates of
//! `SSL_CERT_FILE` (as Go, and so Terraform, does) or else the system
//! bundle; redirects followed; every read bounded by a timeout, so a
//! registry that answers nothing fails instead of hanging.
//!
//! Tokens go only into the `Authorization` header of requests to the host
//! they belong to; no message of this module ever contains one.

use http_body_util::BodyExt;
use hyper::body::Incoming;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncWriteExt;

/// Where system CA bundles live (Debian, Fedora, Alpine, macOS brew).
const SYSTEM_BUNDLES: &[&str] = &[
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/cert.pem",
];

/// How many redirects one request follows.
const MAX_REDIRECTS: usize = 10;

/// Why a request failed (no token, ever).
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error("invalid URL {0:?}: only https:// URLs with a host are supported")]
    BadUrl(String),
    #[error("request to {url} failed: {reason}")]
    Transport { url: String, reason: String },
    #[error("request to {url} timed out after {secs}s")]
    Timeout { url: String, secs: u64 },
    #[error("{url} answered {status}")]
    Status { url: String, status: u16 },
    #[error("cannot read the CA certificates {path}: {reason}")]
    Roots { path: String, reason: String },
    #[error("writing the download of {url}: {reason}")]
    Write { url: String, reason: String },
    #[error(
        "{url} answered with Content-Type {got:?}; a JSON document (application/json) is required"
    )]
    NotJson { url: String, got: String },
}

/// Whether a `Content-Type` value names JSON: `application/json`, any
/// case, parameters such as `charset` allowed.
fn is_json_media_type(value: &str) -> bool {
    let media = value.split(';').next().unwrap_or("").trim();
    media.eq_ignore_ascii_case("application/json")
}

/// The parts of an https URL this client needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Url {
    /// `host` or `host:port`, as written.
    pub authority: String,
    pub host: String,
    pub port: u16,
    /// Path and query, starting with `/`.
    pub path: String,
}

impl Url {
    pub fn parse(url: &str) -> Result<Url, HttpError> {
        let bad = || HttpError::BadUrl(url.to_string());
        let rest = url.strip_prefix("https://").ok_or_else(bad)?;
        let (authority, path) = match rest.find(['/', '?']) {
            Some(i) if rest[i..].starts_with('/') => (&rest[..i], rest[i..].to_string()),
            Some(i) => (&rest[..i], format!("/{}", &rest[i..])),
            None => (rest, "/".to_string()),
        };
        let (host, port) = match authority.rsplit_once(':') {
            Some((h, p)) if !p.contains(']') => (h.to_string(), p.parse().map_err(|_| bad())?),
            _ => (authority.to_string(), 443),
        };
        if host.is_empty() || authority.contains('@') {
            return Err(bad());
        }
        Ok(Url {
            authority: authority.to_string(),
            host: host.trim_matches(['[', ']']).to_string(),
            port,
            path,
        })
    }

    /// `reference` resolved against this URL, as a browser would: an
    /// absolute URL stays, `/x` replaces the path, `x` replaces the last
    /// path segment.
    pub fn join(&self, reference: &str) -> String {
        if reference.contains("://") {
            return reference.to_string();
        }
        if let Some(rest) = reference.strip_prefix("//") {
            return format!("https://{rest}");
        }
        if reference.starts_with('/') {
            return format!("https://{}{reference}", self.authority);
        }
        let path = self.path.split(['?', '#']).next().unwrap_or("/");
        let dir = &path[..path.rfind('/').map_or(0, |i| i + 1)];
        format!("https://{}{dir}{reference}", self.authority)
    }
}

impl std::fmt::Display for Url {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "https://{}{}", self.authority, self.path)
    }
}

/// A whole answer of any status ([`Client::get_answer`]).
#[derive(Clone, Debug)]
pub struct Answer {
    /// The URL that answered (after redirects).
    pub url: String,
    pub status: u16,
    /// The `X-Terraform-Get` header, when present.
    pub terraform_get: Option<String>,
    pub body: Vec<u8>,
}

/// A GET client; cheap to clone.
#[derive(Clone)]
pub struct Client {
    tls: Arc<rustls::ClientConfig>,
    /// The longest wait for a connection or for the next bytes of an answer.
    pub timeout: Duration,
    /// Bearer tokens by host (`host` or `host:port`, lower case).
    tokens: Arc<BTreeMap<String, String>>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("timeout", &self.timeout)
            .field("hosts_with_tokens", &self.tokens.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// The trust roots: `SSL_CERT_FILE` when set (a file that cannot be read
/// is an error, not a silent fallback), else the first system bundle found.
fn roots() -> Result<rustls::RootCertStore, HttpError> {
    let path = match std::env::var_os("SSL_CERT_FILE").filter(|p| !p.is_empty()) {
        Some(p) => Some(std::path::PathBuf::from(p)),
        None => SYSTEM_BUNDLES
            .iter()
            .map(std::path::PathBuf::from)
            .find(|p| p.is_file()),
    };
    let mut store = rustls::RootCertStore::empty();
    let Some(path) = path else {
        return Ok(store);
    };
    let err = |reason: String| HttpError::Roots {
        path: path.display().to_string(),
        reason,
    };
    let pem = std::fs::read(&path).map_err(|e| err(e.to_string()))?;
    for cert in CertificateDer::pem_slice_iter(&pem) {
        let cert = cert.map_err(|e| err(e.to_string()))?;
        // A bundle may hold certificates webpki cannot use; skip those as
        // Go does, but a file with none usable is an error below.
        let _ = store.add(cert);
    }
    if store.is_empty() {
        return Err(err("no usable certificate in the file".into()));
    }
    Ok(store)
}

impl Client {
    /// A client trusting `SSL_CERT_FILE` or the system roots.
    pub fn new(tokens: BTreeMap<String, String>, timeout: Duration) -> Result<Client, HttpError> {
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| HttpError::Transport {
                url: String::new(),
                reason: e.to_string(),
            })?
            .with_root_certificates(roots()?)
            .with_no_client_auth();
        Ok(Client {
            tls: Arc::new(tls),
            timeout,
            tokens: Arc::new(
                tokens
                    .into_iter()
                    .map(|(h, t)| (h.to_ascii_lowercase(), t))
                    .collect(),
            ),
        })
    }

    /// GETs `url` and returns the whole body of a 200 answer.
    pub async fn get(&self, url: &str) -> Result<Vec<u8>, HttpError> {
        let (final_url, resp) = self.open(url).await?;
        self.read_all(&final_url, resp.into_body()).await
    }

    /// GETs a JSON document: the answer must say it is one
    /// (`application/json`, parameters aside), as Terraform requires of a
    /// network mirror, so an HTML error page or a proxy's login form is
    /// refused before it is parsed.
    pub async fn get_json(&self, url: &str) -> Result<Vec<u8>, HttpError> {
        let (final_url, resp) = self.open(url).await?;
        let got = resp
            .headers()
            .get(http::header::CONTENT_TYPE)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .unwrap_or_default();
        if !is_json_media_type(&got) {
            return Err(HttpError::NotJson {
                url: final_url,
                got,
            });
        }
        self.read_all(&final_url, resp.into_body()).await
    }

    /// The whole of `body`, read with the client's timeout.
    async fn read_all(&self, url: &str, body: Incoming) -> Result<Vec<u8>, HttpError> {
        let mut out = Vec::new();
        self.drain(url, body, |chunk| {
            out.extend_from_slice(chunk);
            Ok(())
        })
        .await?;
        Ok(out)
    }

    /// GETs `url` into `file`; returns how many bytes were written and
    /// their SHA-256 (hex), computed as the bytes arrive so the download
    /// is never read back to be hashed.
    pub async fn download(
        &self,
        url: &str,
        file: &mut tokio::fs::File,
    ) -> Result<(u64, String), HttpError> {
        use sha2::Digest;
        let (final_url, resp) = self.open(url).await?;
        let mut body = resp.into_body();
        let mut n = 0u64;
        let mut sha = sha2::Sha256::new();
        loop {
            let frame = tokio::time::timeout(self.timeout, body.frame())
                .await
                .map_err(|_| self.timed_out(&final_url))?;
            let Some(frame) = frame else { break };
            let frame = frame.map_err(|e| HttpError::Transport {
                url: final_url.clone(),
                reason: e.to_string(),
            })?;
            if let Ok(data) = frame.into_data() {
                sha.update(&data);
                file.write_all(&data).await.map_err(|e| HttpError::Write {
                    url: final_url.clone(),
                    reason: e.to_string(),
                })?;
                n += data.len() as u64;
            }
        }
        file.flush().await.map_err(|e| HttpError::Write {
            url: final_url.clone(),
            reason: e.to_string(),
        })?;
        Ok((n, hex::encode(sha.finalize())))
    }

    async fn drain(
        &self,
        url: &str,
        mut body: Incoming,
        mut sink: impl FnMut(&[u8]) -> Result<(), HttpError>,
    ) -> Result<(), HttpError> {
        loop {
            let frame = tokio::time::timeout(self.timeout, body.frame())
                .await
                .map_err(|_| self.timed_out(url))?;
            let Some(frame) = frame else { return Ok(()) };
            let frame = frame.map_err(|e| HttpError::Transport {
                url: url.to_string(),
                reason: e.to_string(),
            })?;
            if let Ok(data) = frame.into_data() {
                sink(&data)?;
            }
        }
    }

    fn timed_out(&self, url: &str) -> HttpError {
        HttpError::Timeout {
            url: url.to_string(),
            secs: self.timeout.as_secs(),
        }
    }

    /// Sends the request, follows redirects, and returns the final URL and
    /// its answer, which must be a 200.
    async fn open(&self, url: &str) -> Result<(String, hyper::Response<Incoming>), HttpError> {
        let (current, resp) = self.open_any(url).await?;
        let status = resp.status().as_u16();
        if status != 200 {
            return Err(HttpError::Status {
                url: current,
                status,
            });
        }
        Ok((current, resp))
    }

    /// GETs `url` (redirects followed) and returns the final URL, the
    /// status, the `X-Terraform-Get` header and the body, whatever the
    /// status: the module registry answers a download with 204 and that
    /// header.
    pub async fn get_answer(&self, url: &str) -> Result<Answer, HttpError> {
        let (final_url, resp) = self.open_any(url).await?;
        let status = resp.status().as_u16();
        let terraform_get = resp
            .headers()
            .get("x-terraform-get")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let body = self.read_all(&final_url, resp.into_body()).await?;
        Ok(Answer {
            url: final_url,
            status,
            terraform_get,
            body,
        })
    }

    /// Sends the request and follows redirects; the final URL and answer.
    async fn open_any(&self, url: &str) -> Result<(String, hyper::Response<Incoming>), HttpError> {
        let mut current = url.to_string();
        for _ in 0..=MAX_REDIRECTS {
            let parsed = Url::parse(&current)?;
            let resp = tokio::time::timeout(self.timeout, self.request(&parsed))
                .await
                .map_err(|_| self.timed_out(&current))??;
            let status = resp.status().as_u16();
            if matches!(status, 301 | 302 | 303 | 307 | 308) {
                let location = resp
                    .headers()
                    .get(http::header::LOCATION)
                    .and_then(|v| v.to_str().ok())
                    .ok_or_else(|| HttpError::Transport {
                        url: current.clone(),
                        reason: format!("redirect {status} without a Location"),
                    })?;
                current = parsed.join(location);
                continue;
            }
            return Ok((current, resp));
        }
        Err(HttpError::Transport {
            url: url.to_string(),
            reason: format!("more than {MAX_REDIRECTS} redirects"),
        })
    }

    async fn request(&self, url: &Url) -> Result<hyper::Response<Incoming>, HttpError> {
        let fail = |reason: String| HttpError::Transport {
            url: url.to_string(),
            reason,
        };
        let tcp = tokio::net::TcpStream::connect((url.host.as_str(), url.port))
            .await
            .map_err(|e| fail(e.to_string()))?;
        let name = ServerName::try_from(url.host.clone()).map_err(|e| fail(e.to_string()))?;
        let tls = tokio_rustls::TlsConnector::from(self.tls.clone())
            .connect(name, tcp)
            .await
            .map_err(|e| fail(e.to_string()))?;
        let (mut sender, conn) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tls))
                .await
                .map_err(|e| fail(e.to_string()))?;
        tokio::spawn(async move {
            // The connection ends with the request; its errors reach the
            // body reader.
            let _ = conn.await;
        });
        let mut req = hyper::Request::get(url.path.as_str())
            .header(http::header::HOST, url.authority.as_str())
            .header(http::header::USER_AGENT, "terrane")
            .header(http::header::CONNECTION, "close");
        let key = url.authority.to_ascii_lowercase();
        if let Some(token) = self
            .tokens
            .get(&key)
            .or_else(|| self.tokens.get(&url.host.to_ascii_lowercase()))
        {
            req = req.header(http::header::AUTHORIZATION, format!("Bearer {token}"));
        }
        let req = req
            .body(http_body_util::Empty::<hyper::body::Bytes>::new())
            .map_err(|e| fail(e.to_string()))?;
        sender
            .send_request(req)
            .await
            .map_err(|e| fail(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let cases = [
            ("plain", "https://h/a/b", Ok(("h", 443, "/a/b"))),
            (
                "port",
                "https://127.0.0.1:8443/x?y=1",
                Ok(("127.0.0.1", 8443, "/x?y=1")),
            ),
            ("no_path", "https://h", Ok(("h", 443, "/"))),
            ("http_refused", "http://h/x", Err(())),
            ("userinfo_refused", "https://u:p@h/x", Err(())),
        ];
        for (case, url, want) in cases {
            let got = Url::parse(url)
                .map(|u| (u.host.clone(), u.port, u.path.clone()))
                .map_err(|_| ());
            let want = want.map(|(h, p, path)| (h.to_string(), p, path.to_string()));
            assert_eq!(got, want, "case {case}");
        }
        let base = Url::parse("https://h:1/v1/providers/a/b/1.0.0/download/linux/amd64").unwrap();
        let joins = [
            ("absolute", "https://o/x.zip", "https://o/x.zip"),
            ("rooted", "/dl/x.zip", "https://h:1/dl/x.zip"),
            (
                "relative",
                "x.zip",
                "https://h:1/v1/providers/a/b/1.0.0/download/linux/x.zip",
            ),
        ];
        for (case, r, want) in joins {
            assert_eq!(base.join(r), want, "case {case}");
        }
    }

    #[test]
    fn json_media_types() {
        let cases = [
            ("plain", "application/json", true),
            ("charset", "application/json; charset=utf-8", true),
            ("case", "Application/JSON", true),
            ("spaces", " application/json ;charset=UTF-8", true),
            ("html", "text/html", false),
            ("octets", "application/octet-stream", false),
            ("missing", "", false),
            ("suffix", "application/jsonx", false),
            ("problem", "application/problem+json", false),
        ];
        for (case, value, want) in cases {
            assert_eq!(is_json_media_type(value), want, "case {case}");
        }
    }
}
