//! TLS for the http backend: ureq's connector trait over rustls with the
//! aws-lc-rs provider (the one the workspace already uses; ureq's own TLS
//! feature would bring ring).
//!
//! Trust, as Terraform's http backend (Go's TLS) sets it up: only the
//! certificates of `client_ca_certificate_pem` when it is given; else those
//! of `SSL_CERT_FILE` when it is set (an unreadable file, or one without a
//! usable certificate, is an error), else the system bundle. `client_certificate_pem` with
//! `client_private_key_pem` is the client's certificate (mutual TLS).
//! `skip_cert_verification = true` accepts any server certificate, as
//! Terraform does (the handshake's signatures are still checked); it is
//! the user's explicit choice, never a fallback.

use std::io::{Read, Write};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{ClientConfig, ClientConnection, DigitallySignedStruct, SignatureScheme, StreamOwned};

use crate::{BackendError, Result};

/// Where system CA bundles live (Debian, Fedora, Alpine).
const SYSTEM_BUNDLES: &[&str] = &[
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/cert.pem",
];

fn err(detail: impl Into<String>) -> BackendError {
    BackendError::Settings {
        backend: "http".into(),
        detail: detail.into(),
    }
}

/// What the TLS set-up reads from the block.
pub(crate) struct TlsSettings {
    pub skip_verify: bool,
    pub ca_pem: Option<String>,
    pub client_cert_pem: Option<String>,
    pub client_key_pem: Option<String>,
}

fn add_pem(store: &mut rustls::RootCertStore, pem: &[u8], what: &str) -> Result<()> {
    let mut added = 0;
    for cert in CertificateDer::pem_slice_iter(pem) {
        let cert = cert.map_err(|e| err(format!("{what}: {e}")))?;
        // A bundle may hold certificates webpki cannot use: skipped, as Go
        // skips them; a source with none usable is an error.
        if store.add(cert).is_ok() {
            added += 1;
        }
    }
    if added == 0 {
        return Err(err(format!("{what}: no usable PEM certificate")));
    }
    Ok(())
}

fn roots(ca_pem: Option<&str>) -> Result<rustls::RootCertStore> {
    let mut store = rustls::RootCertStore::empty();
    if let Some(pem) = ca_pem {
        add_pem(&mut store, pem.as_bytes(), "client_ca_certificate_pem")?;
        return Ok(store);
    }
    match std::env::var_os("SSL_CERT_FILE").filter(|p| !p.is_empty()) {
        Some(p) => {
            let shown = std::path::Path::new(&p).display().to_string();
            let pem = std::fs::read(&p).map_err(|e| err(format!("SSL_CERT_FILE {shown}: {e}")))?;
            add_pem(&mut store, &pem, &format!("SSL_CERT_FILE {shown}"))?;
        }
        None => {
            if let Some(p) = SYSTEM_BUNDLES
                .iter()
                .map(std::path::Path::new)
                .find(|p| p.is_file())
            {
                if let Ok(pem) = std::fs::read(p) {
                    let _ = add_pem(&mut store, &pem, &p.display().to_string());
                }
            }
        }
    }
    Ok(store)
}

/// The rustls client configuration the block asks for.
pub(crate) fn client_config(s: &TlsSettings) -> Result<ClientConfig> {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| err(format!("TLS set-up: {e}")))?;
    let builder = if s.skip_verify {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AnyServerCert(provider)))
    } else {
        builder.with_root_certificates(roots(s.ca_pem.as_deref())?)
    };
    match (&s.client_cert_pem, &s.client_key_pem) {
        (None, None) => Ok(builder.with_no_client_auth()),
        (Some(cert), Some(key)) => {
            let chain = CertificateDer::pem_slice_iter(cert.as_bytes())
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(|e| err(format!("client_certificate_pem: {e}")))?;
            if chain.is_empty() {
                return Err(err("client_certificate_pem: no PEM certificate"));
            }
            // The key's parse error is not shown: it could quote key bytes.
            let key = PrivateKeyDer::from_pem_slice(key.as_bytes())
                .map_err(|_| err("client_private_key_pem: not a PEM private key"))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| err(format!("client certificate: {e}")))
        }
        _ => Err(err(
            "client_certificate_pem and client_private_key_pem must be given together",
        )),
    }
}

/// `skip_cert_verification`: any server certificate, the handshake's
/// signatures still checked with the provider's algorithms.
#[derive(Debug)]
struct AnyServerCert(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for AnyServerCert {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// ureq's TLS connector over a rustls configuration.
pub(crate) struct Connector(pub Arc<ClientConfig>);

struct TlsStream(StreamOwned<ClientConnection, Box<dyn ureq::ReadWrite>>);

impl std::fmt::Debug for TlsStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TlsStream")
    }
}

impl Read for TlsStream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(buf)
    }
}

impl Write for TlsStream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

impl ureq::ReadWrite for TlsStream {
    fn socket(&self) -> Option<&std::net::TcpStream> {
        self.0.sock.socket()
    }
}

impl ureq::TlsConnector for Connector {
    fn connect(
        &self,
        dns_name: &str,
        mut io: Box<dyn ureq::ReadWrite>,
    ) -> std::result::Result<Box<dyn ureq::ReadWrite>, ureq::Error> {
        let transport = |msg: String| ureq::Error::from(std::io::Error::other(msg));
        let name = ServerName::try_from(dns_name.to_string())
            .map_err(|e| transport(format!("TLS: server name {dns_name:?}: {e}")))?;
        let mut conn = ClientConnection::new(self.0.clone(), name)
            .map_err(|e| transport(format!("TLS: {e}")))?;
        // Handshake now, so a certificate error is reported as such.
        while conn.is_handshaking() {
            conn.complete_io(&mut io)
                .map_err(|e| transport(format!("TLS handshake with {dns_name}: {e}")))?;
        }
        Ok(Box::new(TlsStream(StreamOwned::new(conn, io))))
    }
}
