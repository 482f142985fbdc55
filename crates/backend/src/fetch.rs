//! GET of the `http://` and `https://` URIs of Pulumi assets and archives,
//! which Pulumi's engine fetches to hash what they hold (the engine hands
//! this function to the codec's callers: see
//! `terrane_engine::provider::UriFetcher`).
//!
//! TLS as the http backend sets it up without settings: the certificates
//! of `SSL_CERT_FILE` when it is set, else the system bundle. A transport
//! failure or a 5xx answer is tried again (three tries in all, as Pulumi's
//! `GetWithRetry` retries); any other answer but 2xx is an error. Errors
//! name the URL without its user part or query, which may hold
//! credentials (a pre-signed URL's signature).

use std::io::Read as _;
use std::sync::Arc;
use std::time::Duration;

use crate::httptls::{client_config, Connector, TlsSettings};

/// How many times a URL is tried.
const TRIES: u32 = 3;

/// `url` as errors show it: no user part, no query or fragment.
fn shown(url: &str) -> String {
    let cut = url.find(['?', '#']).map_or(url, |i| &url[..i]);
    let mut s = crate::http::redact(cut);
    if cut.len() < url.len() {
        s.push_str("?…");
    }
    s
}

/// The body `url` answers to a GET.
pub fn get(url: &str) -> Result<Vec<u8>, String> {
    let tls = client_config(&TlsSettings {
        skip_verify: false,
        ca_pem: None,
        client_cert_pem: None,
        client_key_pem: None,
    })
    .map_err(|e| e.to_string())?;
    let agent = ureq::AgentBuilder::new()
        .timeout_connect(Duration::from_secs(30))
        .timeout_read(Duration::from_secs(60))
        .tls_connector(Arc::new(Connector(Arc::new(tls))))
        .build();
    let mut last = String::new();
    for attempt in 0..TRIES {
        if attempt > 0 {
            std::thread::sleep(Duration::from_millis(200 << attempt));
        }
        match agent.get(url).call() {
            Ok(r) => {
                let mut body = Vec::new();
                r.into_reader()
                    .read_to_end(&mut body)
                    .map_err(|e| format!("GET {}: reading the answer: {e}", shown(url)))?;
                return Ok(body);
            }
            Err(ureq::Error::Status(code, _)) if code >= 500 => {
                last = format!("GET {} answered {code}", shown(url));
            }
            Err(ureq::Error::Status(code, _)) => {
                return Err(format!("GET {} answered {code}", shown(url)));
            }
            Err(e) => last = format!("GET {}: {}", shown(url), crate::http::transport(&e)),
        }
    }
    Err(format!("{last} (tried {TRIES} times)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_shown_without_credentials() {
        let cases = [
            ("plain", "https://h/a.zip", "https://h/a.zip"),
            ("user", "https://u:p@h/a.zip", "https://***@h/a.zip"),
            (
                "query",
                "https://h/a.zip?X-Amz-Signature=s",
                "https://h/a.zip?…",
            ),
            ("fragment", "https://h/a.zip#x", "https://h/a.zip?…"),
        ];
        for (name, url, want) in cases {
            assert_eq!(shown(url), want, "case {name}");
        }
    }
}
