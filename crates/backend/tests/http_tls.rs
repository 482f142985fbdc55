//! The http backend over https (issue 17 item 5): a real TLS endpoint on
//! loopback (rustls, a throwaway CA from rcgen) in front of the test state
//! server. Trust as Terraform's http backend sets it up:
//! `client_ca_certificate_pem` (only that CA), `skip_cert_verification`
//! (any certificate, by explicit choice), and an unknown issuer refused
//! with an error that says so, nothing written.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;

use terrane_backend::http::HttpBackend;
use terrane_backend::{Backend, Settings};
use terrane_testkit::httpstate::HttpStateServer;

/// A TLS front for `plain`: each connection's one request is read whole,
/// passed to the plain server, and its answer written back.
struct TlsFront {
    port: u16,
    ca_pem: String,
    _plain: HttpStateServer,
}

fn read_request(s: &mut impl Read) -> Option<Vec<u8>> {
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        if s.read(&mut byte).ok()? == 0 {
            return None;
        }
        buf.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&buf).to_ascii_lowercase();
    let len = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .map(|v| v.trim().parse::<usize>().unwrap_or(0))
        .unwrap_or(0);
    let mut body = vec![0u8; len];
    s.read_exact(&mut body).ok()?;
    buf.extend(body);
    Some(buf)
}

fn serve(conn: TcpStream, tls: Arc<rustls::ServerConfig>, plain: u16) -> Option<()> {
    let server = rustls::ServerConnection::new(tls).ok()?;
    let mut s = rustls::StreamOwned::new(server, conn);
    let req = read_request(&mut s)?;
    let mut up = TcpStream::connect(("127.0.0.1", plain)).ok()?;
    up.write_all(&req).ok()?;
    let mut answer = Vec::new();
    up.read_to_end(&mut answer).ok()?;
    s.write_all(&answer).ok()?;
    s.conn.send_close_notify();
    s.flush().ok()
}

impl TlsFront {
    fn start() -> TlsFront {
        let plain = HttpStateServer::start();
        let ca_key = rcgen::KeyPair::generate().unwrap();
        let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "terrane http backend test CA");
        ca_params.key_usages = vec![
            rcgen::KeyUsagePurpose::KeyCertSign,
            rcgen::KeyUsagePurpose::DigitalSignature,
        ];
        let ca = rcgen::CertifiedIssuer::self_signed(ca_params, ca_key).unwrap();
        let leaf_key = rcgen::KeyPair::generate().unwrap();
        let leaf = rcgen::CertificateParams::new(vec!["localhost".to_string()])
            .unwrap()
            .signed_by(&leaf_key, &ca)
            .unwrap();
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let tls = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(
                vec![leaf.der().clone()],
                rustls::pki_types::PrivateKeyDer::Pkcs8(leaf_key.serialize_der().into()),
            )
            .unwrap();
        let tls = Arc::new(tls);
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let plain_port = plain.port;
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let tls = tls.clone();
                std::thread::spawn(move || serve(conn, tls, plain_port));
            }
        });
        TlsFront {
            port,
            ca_pem: ca.pem(),
            _plain: plain,
        }
    }

    fn settings(&self, extra: &[(&str, serde_json::Value)]) -> Settings {
        let base = format!("https://localhost:{}", self.port);
        let mut s: Settings = [
            ("address", format!("{base}/state")),
            ("lock_address", format!("{base}/lock")),
            ("unlock_address", format!("{base}/lock")),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), serde_json::Value::String(v)))
        .collect();
        for (k, v) in extra {
            s.insert(k.to_string(), v.clone());
        }
        s
    }
}

fn doc(serial: u64) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "version": 4, "terraform_version": "1.15.0", "serial": serial,
        "lineage": "l-tls", "outputs": {}, "resources": []
    }))
    .unwrap()
}

/// Writes, reads back and locks through `settings`; the error if any.
fn round_trip(settings: &Settings, serial: u64) -> Result<(), String> {
    let b = HttpBackend::new(settings).map_err(|e| e.to_string())?;
    let c = b.client("default").map_err(|e| e.to_string())?;
    let id = c
        .lock(&terrane_backend::RemoteLock {
            id: format!("tls-{serial}"),
            operation: "OperationTypeApply".into(),
            ..Default::default()
        })
        .map_err(|e| e.to_string())?;
    c.put(&doc(serial)).map_err(|e| e.to_string())?;
    let got = c.get().map_err(|e| e.to_string())?.expect("stored");
    assert_eq!(got.data, doc(serial));
    c.unlock(&id).map_err(|e| e.to_string())
}

#[test]
fn item5_http_backend_over_https() {
    let front = TlsFront::start();
    let other_ca = TlsFront::start().ca_pem;
    type Case<'a> = (&'a str, Vec<(&'a str, serde_json::Value)>, Option<&'a str>);
    let cases: Vec<Case> = vec![
        (
            "trusted_ca",
            vec![("client_ca_certificate_pem", front.ca_pem.clone().into())],
            None,
        ),
        (
            "skip_cert_verification",
            vec![("skip_cert_verification", true.into())],
            None,
        ),
        (
            "unknown_issuer_refused",
            vec![],
            Some("invalid peer certificate: UnknownIssuer"),
        ),
        (
            "other_ca_refused",
            vec![("client_ca_certificate_pem", other_ca.into())],
            Some("invalid peer certificate"),
        ),
        (
            "bad_ca_pem",
            vec![("client_ca_certificate_pem", "not a pem".into())],
            Some("client_ca_certificate_pem: no usable PEM certificate"),
        ),
        (
            "cert_without_key",
            vec![("client_certificate_pem", front.ca_pem.clone().into())],
            Some("must be given together"),
        ),
    ];
    let mut serial = 1;
    for (name, extra, want) in cases {
        let before = front._plain.stored.lock().unwrap().state.clone();
        serial += 1;
        let got = round_trip(&front.settings(&extra), serial);
        match (got, want) {
            (Ok(()), None) => {}
            (Err(e), Some(w)) => {
                assert!(e.contains(w), "case {name}: {e}");
                assert_eq!(
                    front._plain.stored.lock().unwrap().state,
                    before,
                    "case {name}: nothing written"
                );
            }
            (got, want) => panic!("case {name}: got {got:?}, want error {want:?}"),
        }
    }
}
