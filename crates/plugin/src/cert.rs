//! AutoMTLS certificates and pinned verification.
//!
//! Each side of a plugin connection makes a throwaway self-signed ECDSA
//! certificate shaped the way go-plugin makes them (CN and SAN `localhost`,
//! O `HashiCorp`, a CA certificate with signing key usages, server and
//! client auth). Each side then trusts exactly the other's certificate:
//! webpki refuses a CA certificate used as an end entity, so both
//! directions use verifiers that pin the peer's DER and still check the
//! TLS handshake signature with the peer's key.

use rcgen::{BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair, KeyUsagePurpose, SanType};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{DigitallySignedStruct, DistinguishedName as TlsDn, SignatureScheme};
use std::sync::Arc;

/// A throwaway certificate and its key.
pub struct Identity {
    pub cert_der: CertificateDer<'static>,
    pub cert_pem: String,
    key_der: Vec<u8>,
}

/// Why a certificate could not be made or read.
#[derive(Debug, thiserror::Error)]
#[error("plugin TLS certificate: {0}")]
pub struct CertError(pub String);

impl Identity {
    /// Generates a fresh certificate as go-plugin's AutoMTLS does.
    pub fn generate() -> Result<Identity, CertError> {
        let key = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P521_SHA512).map_err(|e| CertError(e.to_string()))?;
        let mut params = CertificateParams::new(vec!["localhost".to_string()]).map_err(|e| CertError(e.to_string()))?;
        let mut dn = DistinguishedName::new();
        dn.push(DnType::CommonName, "localhost");
        dn.push(DnType::OrganizationName, "HashiCorp");
        params.distinguished_name = dn;
        params.subject_alt_names = vec![SanType::DnsName("localhost".try_into().map_err(|e: rcgen::Error| CertError(e.to_string()))?)];
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature, KeyUsagePurpose::KeyEncipherment, KeyUsagePurpose::KeyAgreement, KeyUsagePurpose::KeyCertSign];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth, ExtendedKeyUsagePurpose::ClientAuth];
        let now = std::time::SystemTime::now();
        params.not_before = (now - std::time::Duration::from_secs(30)).into();
        params.not_after = (now + std::time::Duration::from_secs(262_980 * 3600)).into();
        let cert = params.self_signed(&key).map_err(|e| CertError(e.to_string()))?;
        Ok(Identity { cert_der: cert.der().clone(), cert_pem: cert.pem(), key_der: key.serialize_der() })
    }

    pub fn key(&self) -> PrivateKeyDer<'static> {
        PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(self.key_der.clone()))
    }
}

/// Parses the first certificate of a PEM text (PLUGIN_CLIENT_CERT).
pub fn cert_from_pem(pem: &str) -> Result<CertificateDer<'static>, CertError> {
    let body: String = pem
        .lines()
        .skip_while(|l| !l.starts_with("-----BEGIN CERTIFICATE-----"))
        .skip(1)
        .take_while(|l| !l.starts_with("-----END CERTIFICATE-----"))
        .collect();
    if body.is_empty() {
        return Err(CertError("no PEM certificate found".into()));
    }
    use base64::Engine as _;
    let der = base64::engine::general_purpose::STANDARD.decode(body.trim()).map_err(|e| CertError(format!("invalid PEM: {e}")))?;
    Ok(CertificateDer::from(der))
}

pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::aws_lc_rs::default_provider())
}

/// Accepts exactly one certificate (by DER) from the peer.
#[derive(Debug)]
pub struct Pinned {
    want: CertificateDer<'static>,
    provider: Arc<CryptoProvider>,
}

impl Pinned {
    pub fn new(want: CertificateDer<'static>) -> Arc<Pinned> {
        Arc::new(Pinned { want, provider: provider() })
    }

    // Both directions check the handshake signature with the peer's key.
    fn tls12(&self, message: &[u8], cert: &CertificateDer<'_>, dss: &DigitallySignedStruct) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn tls13(&self, message: &[u8], cert: &CertificateDer<'_>, dss: &DigitallySignedStruct) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn schemes(&self) -> Vec<SignatureScheme> {
        self.provider.signature_verification_algorithms.supported_schemes()
    }

    fn check(&self, got: &CertificateDer<'_>) -> Result<(), rustls::Error> {
        if got.as_ref() == self.want.as_ref() {
            Ok(())
        } else {
            Err(rustls::Error::InvalidCertificate(rustls::CertificateError::ApplicationVerificationFailure))
        }
    }
}

impl ClientCertVerifier for Pinned {
    fn root_hint_subjects(&self) -> &[TlsDn] {
        &[]
    }

    fn verify_client_cert(&self, end_entity: &CertificateDer<'_>, _intermediates: &[CertificateDer<'_>], _now: UnixTime) -> Result<ClientCertVerified, rustls::Error> {
        self.check(end_entity).map(|_| ClientCertVerified::assertion())
    }

    fn verify_tls12_signature(&self, message: &[u8], cert: &CertificateDer<'_>, dss: &DigitallySignedStruct) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.tls12(message, cert, dss)
    }

    fn verify_tls13_signature(&self, message: &[u8], cert: &CertificateDer<'_>, dss: &DigitallySignedStruct) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.tls13(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.schemes()
    }
}

impl ServerCertVerifier for Pinned {
    fn verify_server_cert(&self, end_entity: &CertificateDer<'_>, _intermediates: &[CertificateDer<'_>], _server_name: &ServerName<'_>, _ocsp: &[u8], _now: UnixTime) -> Result<ServerCertVerified, rustls::Error> {
        self.check(end_entity).map(|_| ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(&self, message: &[u8], cert: &CertificateDer<'_>, dss: &DigitallySignedStruct) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.tls12(message, cert, dss)
    }

    fn verify_tls13_signature(&self, message: &[u8], cert: &CertificateDer<'_>, dss: &DigitallySignedStruct) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.tls13(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.schemes()
    }
}
