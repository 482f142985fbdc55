//! The rustls side: trust anchors, the certificate checks each sslmode
//! asks for, the tokio-postgres connector and stream, and channel binding.

use crate::Error;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{
    verify_tls12_signature, verify_tls13_signature, CryptoProvider, WebPkiSupportedAlgorithms,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use std::future::Future;
use std::io;
use std::path::Path;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_postgres::tls::{ChannelBinding, MakeTlsConnect, TlsConnect, TlsStream};

/// Trust anchors and where they came from (for messages).
#[derive(Clone, Debug)]
pub(crate) struct Roots {
    store: Arc<RootCertStore>,
    from: String,
}

impl Roots {
    /// Every certificate of a PEM file; `what` names the setting.
    pub(crate) fn load(path: &Path, what: &str) -> Result<Roots, Error> {
        let shown = path.display();
        let iter = CertificateDer::pem_file_iter(path)
            .map_err(|e| Error(format!("{what} {shown}: cannot read the file: {e}")))?;
        let mut store = RootCertStore::empty();
        let mut count = 0;
        for (i, cert) in iter.enumerate() {
            let cert = cert.map_err(|e| {
                Error(format!(
                    "{what} {shown}: certificate {} is not valid PEM: {e}",
                    i + 1
                ))
            })?;
            store.add(cert).map_err(|e| {
                Error(format!(
                    "{what} {shown}: certificate {} cannot be a trust anchor: {e}",
                    i + 1
                ))
            })?;
            count += 1;
        }
        if count == 0 {
            return Err(Error(format!(
                "{what} {shown}: the file holds no PEM certificate"
            )));
        }
        Ok(Roots {
            store: Arc::new(store),
            from: format!("{what} ({shown})"),
        })
    }
}

/// What is checked of the server's certificate.
pub(crate) enum Check {
    /// Nothing (require without a root certificate: encryption only).
    Nothing,
    /// The chain to a root, not the host name (verify-ca).
    Chain(Roots),
    /// Chain and host name (verify-full).
    Full(Roots),
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::aws_lc_rs::default_provider())
}

/// The rustls configuration for `check`, and where its roots came from.
pub(crate) fn client_config(check: Check) -> Result<(Arc<ClientConfig>, Option<String>), Error> {
    let provider = provider();
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| Error(format!("TLS setup failed: {e}")))?;
    let algorithms = provider.signature_verification_algorithms;
    let (mut config, roots_from) = match check {
        Check::Full(roots) => (
            builder
                .with_root_certificates(roots.store)
                .with_no_client_auth(),
            Some(roots.from),
        ),
        Check::Chain(roots) => (
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(ChainOnly {
                    roots: Some(roots.store),
                    algorithms,
                }))
                .with_no_client_auth(),
            Some(roots.from),
        ),
        Check::Nothing => (
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(ChainOnly {
                    roots: None,
                    algorithms,
                }))
                .with_no_client_auth(),
            None,
        ),
    };
    // PostgreSQL 17 checks the protocol name when the client offers one.
    config.alpn_protocols = vec![b"postgresql".to_vec()];
    Ok((Arc::new(config), roots_from))
}

/// The certificate check of `verify-ca` (and of `require` with a root
/// certificate): the chain must end at one of `roots`; the name is not
/// looked at. Without roots (plain `require`), only the handshake
/// signatures are checked: the session is encrypted, but whoever answers
/// is believed.
#[derive(Debug)]
struct ChainOnly {
    roots: Option<Arc<RootCertStore>>,
    algorithms: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        _name: &ServerName<'_>,
        _ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if let Some(roots) = &self.roots {
            let cert = rustls::server::ParsedCertificate::try_from(end_entity)?;
            rustls::client::verify_server_cert_signed_by_trust_anchor(
                &cert,
                roots,
                intermediates,
                now,
                self.algorithms.all,
            )?;
        }
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// Why a TLS handshake failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HandshakeFailure {
    /// The certificate does not chain to the configured roots.
    Untrusted,
    /// The certificate does not name the host connected to (verify-full).
    WrongHost,
    /// Expired, not yet valid, or otherwise unusable.
    BadCertificate,
    /// Anything else (protocol, I/O).
    Other,
}

/// A failed TLS handshake, with a message saying which setting to look at.
#[derive(Clone, Debug)]
pub struct HandshakeError {
    pub failure: HandshakeFailure,
    message: String,
}

impl std::fmt::Display for HandshakeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for HandshakeError {}

impl HandshakeError {
    fn new(failure: HandshakeFailure, message: String) -> HandshakeError {
        HandshakeError { failure, message }
    }

    fn from_io(e: io::Error, host: &str, roots_from: Option<&str>) -> HandshakeError {
        let Some(tls) = e
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        else {
            return HandshakeError::new(
                HandshakeFailure::Other,
                format!("TLS handshake with {host:?} failed: {e}"),
            );
        };
        let roots = roots_from.unwrap_or("the root certificates");
        match tls {
            rustls::Error::InvalidCertificate(c) => match c {
                CertificateError::UnknownIssuer | CertificateError::BadSignature | CertificateError::UnsupportedSignatureAlgorithmContext { .. } => {
                    HandshakeError::new(HandshakeFailure::Untrusted, format!("the server's certificate is not trusted: no CA in {roots} issued it ({tls})"))
                }
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => HandshakeError::new(
                    HandshakeFailure::WrongHost,
                    format!("the server's certificate does not name the host {host:?}, which sslmode verify-full requires ({tls}); connect by a name the certificate lists, or use verify-ca to check the issuer only"),
                ),
                _ => HandshakeError::new(HandshakeFailure::BadCertificate, format!("the server's certificate is not acceptable: {tls}")),
            },
            _ => HandshakeError::new(HandshakeFailure::Other, format!("TLS handshake with {host:?} failed: {tls}")),
        }
    }
}

/// The tokio-postgres connector over rustls. A clone shares the record of
/// whether a handshake failed (which `prefer` falls back on).
#[derive(Clone)]
pub struct MakeRustls {
    config: Option<Arc<ClientConfig>>,
    roots_from: Option<Arc<str>>,
    failed: Arc<AtomicBool>,
    succeeded: Arc<AtomicBool>,
}

impl MakeRustls {
    pub(crate) fn new((config, roots_from): (Arc<ClientConfig>, Option<String>)) -> MakeRustls {
        MakeRustls {
            config: Some(config),
            roots_from: roots_from.map(Arc::from),
            failed: Arc::default(),
            succeeded: Arc::default(),
        }
    }

    /// A connector for plaintext attempts (tokio-postgres is told
    /// `sslmode=disable` with it, so it never starts a handshake).
    pub(crate) fn plaintext() -> MakeRustls {
        MakeRustls {
            config: None,
            roots_from: None,
            failed: Arc::default(),
            succeeded: Arc::default(),
        }
    }

    /// Whether a handshake through this connector (or a clone) failed.
    pub fn handshake_failed(&self) -> bool {
        self.failed.load(Ordering::SeqCst)
    }

    /// Whether a handshake through this connector (or a clone) succeeded.
    pub fn handshake_succeeded(&self) -> bool {
        self.succeeded.load(Ordering::SeqCst)
    }
}

impl<S> MakeTlsConnect<S> for MakeRustls
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = RustlsStream<S>;
    type TlsConnect = RustlsConnect;
    type Error = std::convert::Infallible;

    fn make_tls_connect(
        &mut self,
        domain: &str,
    ) -> Result<RustlsConnect, std::convert::Infallible> {
        // The name is checked when a handshake starts: a Unix-socket
        // connection passes "" here and never shakes hands.
        Ok(RustlsConnect {
            make: self.clone(),
            host: domain.to_string(),
        })
    }
}

/// One handshake, to `host`.
pub struct RustlsConnect {
    make: MakeRustls,
    host: String,
}

impl<S> TlsConnect<S> for RustlsConnect
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = RustlsStream<S>;
    type Error = HandshakeError;
    type Future = Pin<Box<dyn Future<Output = Result<RustlsStream<S>, HandshakeError>> + Send>>;

    fn connect(self, stream: S) -> Self::Future {
        Box::pin(async move {
            let RustlsConnect { make, host } = self;
            let result = async {
                let config = make.config.clone().ok_or_else(|| HandshakeError::new(HandshakeFailure::Other, "TLS was not configured for this connection attempt".into()))?;
                let name = ServerName::try_from(host.clone()).map_err(|_| HandshakeError::new(HandshakeFailure::WrongHost, format!("{host:?} is not a host name or IP address a certificate can be checked against")))?;
                tokio_rustls::TlsConnector::from(config).connect(name, stream).await.map_err(|e| HandshakeError::from_io(e, &host, make.roots_from.as_deref()))
            }
            .await;
            let outcome = if result.is_ok() {
                &make.succeeded
            } else {
                &make.failed
            };
            outcome.store(true, Ordering::SeqCst);
            result.map(|s| RustlsStream(Box::new(s)))
        })
    }
}

/// A TLS session to the server.
pub struct RustlsStream<S>(Box<tokio_rustls::client::TlsStream<S>>);

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for RustlsStream<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.0).poll_read(cx, buf)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for RustlsStream<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut *self.0).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.0).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.0).poll_shutdown(cx)
    }
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut *self.0).poll_write_vectored(cx, bufs)
    }
    fn is_write_vectored(&self) -> bool {
        self.0.is_write_vectored()
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> TlsStream for RustlsStream<S> {
    fn channel_binding(&self) -> ChannelBinding {
        let (_, session) = self.0.get_ref();
        match session
            .peer_certificates()
            .and_then(|certs| certs.first())
            .and_then(|c| server_end_point(c))
        {
            Some(hash) => ChannelBinding::tls_server_end_point(hash),
            None => ChannelBinding::none(),
        }
    }
}

/// RFC 5929 `tls-server-end-point`: the hash of the server's certificate,
/// with the hash of its signature algorithm (SHA-256 for MD5 and SHA-1).
/// `None` for algorithms the RFC leaves open (PSS, EdDSA): the exchange
/// then goes without channel binding, as it would with PostgreSQL's own
/// client.
pub(crate) fn server_end_point(cert: &[u8]) -> Option<Vec<u8>> {
    use aws_lc_rs::digest::{digest, SHA256, SHA384, SHA512};
    const RSA: [u8; 8] = [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01];
    const ECDSA: [u8; 6] = [0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04];
    let oid = signature_algorithm(cert)?;
    let algorithm = match oid {
        // md5, sha1, sha256 WithRSAEncryption
        [r @ .., 0x04 | 0x05 | 0x0b] if *r == RSA => &SHA256,
        [r @ .., 0x0c] if *r == RSA => &SHA384,
        [r @ .., 0x0d] if *r == RSA => &SHA512,
        // ecdsa-with-SHA1, ecdsa-with-SHA256/384/512
        [e @ .., 0x01] if *e == ECDSA => &SHA256,
        [e @ .., 0x03, 0x02] if *e == ECDSA => &SHA256,
        [e @ .., 0x03, 0x03] if *e == ECDSA => &SHA384,
        [e @ .., 0x03, 0x04] if *e == ECDSA => &SHA512,
        _ => return None,
    };
    Some(digest(algorithm, cert).as_ref().to_vec())
}

/// The OID (content bytes) of a certificate's signatureAlgorithm:
/// Certificate ::= SEQUENCE { tbsCertificate SEQUENCE, signatureAlgorithm
/// SEQUENCE { algorithm OID, ... }, signature BIT STRING }.
pub(crate) fn signature_algorithm(cert: &[u8]) -> Option<&[u8]> {
    let (0x30, body, _) = der(cert)? else {
        return None;
    };
    let (0x30, _tbs, rest) = der(body)? else {
        return None;
    };
    let (0x30, algorithm, _) = der(rest)? else {
        return None;
    };
    let (0x06, oid, _) = der(algorithm)? else {
        return None;
    };
    Some(oid)
}

/// One DER element at the start of `b`: tag, content, and what follows.
fn der(b: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, b) = b.split_first()?;
    let (&first, mut b) = b.split_first()?;
    let len = if first < 0x80 {
        usize::from(first)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 || b.len() < n {
            return None;
        }
        let len = b[..n]
            .iter()
            .fold(0usize, |acc, x| acc << 8 | usize::from(*x));
        b = &b[n..];
        len
    };
    (b.len() >= len).then(|| (tag, &b[..len], &b[len..]))
}
