//! AutoMTLS certificates and pinned verification.
//!
//! Each side of a plugin connection makes a throwaway self-signed ECDSA
//! certificate shaped the way go-plugin makes them (CN and SAN `localhost`,
//! O `HashiCorp`, a CA certificate with signing key usages, server and
//! client auth). Each side then trusts exactly the other's certificate:
//! webpki refuses a CA certificate used as an end entity, so both
//! directions use verifiers that pin the peer's DER and still check the
//! TLS handshake signature with the peer's key.
//!
//! Some plugin frameworks (PyPI's `tf`) serve a 1024-bit RSA certificate,
//! which Go accepts and webpki refuses. For such a peer the client speaks
//! TLS 1.2 and checks the PKCS#1 handshake signature with aws-lc-rs's
//! legacy RSA verifier ([`small_rsa_key`], [`Pinned`]'s legacy mode).

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose, SanType,
};
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
        let key = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256)
            .map_err(|e| CertError(e.to_string()))?;
        let mut params = CertificateParams::new(vec!["localhost".to_string()])
            .map_err(|e| CertError(e.to_string()))?;
        let mut dn = DistinguishedName::new();
        dn.push(DnType::CommonName, "localhost");
        dn.push(DnType::OrganizationName, "HashiCorp");
        params.distinguished_name = dn;
        params.subject_alt_names = vec![SanType::DnsName(
            "localhost"
                .try_into()
                .map_err(|e: rcgen::Error| CertError(e.to_string()))?,
        )];
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
            KeyUsagePurpose::KeyAgreement,
            KeyUsagePurpose::KeyCertSign,
        ];
        params.extended_key_usages = vec![
            ExtendedKeyUsagePurpose::ServerAuth,
            ExtendedKeyUsagePurpose::ClientAuth,
        ];
        let now = std::time::SystemTime::now();
        params.not_before = (now - std::time::Duration::from_secs(30)).into();
        params.not_after = (now + std::time::Duration::from_secs(262_980 * 3600)).into();
        let cert = params
            .self_signed(&key)
            .map_err(|e| CertError(e.to_string()))?;
        Ok(Identity {
            cert_der: cert.der().clone(),
            cert_pem: cert.pem(),
            key_der: key.serialize_der(),
        })
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
    let der = base64::engine::general_purpose::STANDARD
        .decode(body.trim())
        .map_err(|e| CertError(format!("invalid PEM: {e}")))?;
    Ok(CertificateDer::from(der))
}

pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::aws_lc_rs::default_provider())
}

/// The DER element at the start of `d`: (tag, content, rest).
fn der(d: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, d) = d.split_first()?;
    let (&l, mut d) = d.split_first()?;
    let len = if l < 0x80 {
        l as usize
    } else {
        let n = (l & 0x7f) as usize;
        if n == 0 || n > 4 || d.len() < n {
            return None;
        }
        let len = d[..n].iter().fold(0usize, |a, b| (a << 8) | *b as usize);
        d = &d[n..];
        len
    };
    (d.len() >= len).then(|| (tag, &d[..len], &d[len..]))
}

/// Whether the certificate's key is RSA with a modulus under 2048 bits.
pub fn small_rsa_key(cert: &[u8]) -> bool {
    const RSA_ENCRYPTION: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01];
    let bits = || -> Option<usize> {
        let (_, cert, _) = der(cert)?;
        let (_, mut tbs, _) = der(cert)?;
        if tbs.first() == Some(&0xa0) {
            tbs = der(tbs)?.2;
        }
        for _ in 0..5 {
            tbs = der(tbs)?.2; // serial, signature, issuer, validity, subject
        }
        let (_, spki, _) = der(tbs)?;
        let (_, alg, key) = der(spki)?;
        if der(alg)?.1 != RSA_ENCRYPTION {
            return None;
        }
        let (_, key, _) = der(key)?;
        let (_, rsa, _) = der(key.get(1..)?)?;
        let (_, n, _) = der(rsa)?;
        let n: &[u8] = &n[n.iter().take_while(|b| **b == 0).count()..];
        Some(n.len() * 8 - n.first()?.leading_zeros() as usize)
    };
    bits().is_some_and(|b| b < 2048)
}

/// aws-lc-rs's PKCS#1 verifier for RSA keys of 1024 bits and more.
#[derive(Debug)]
struct LegacyRsa(
    &'static aws_lc_rs::signature::RsaParameters,
    rustls::pki_types::AlgorithmIdentifier,
);

impl rustls::pki_types::SignatureVerificationAlgorithm for LegacyRsa {
    fn verify_signature(
        &self,
        public_key: &[u8],
        message: &[u8],
        signature: &[u8],
    ) -> Result<(), rustls::pki_types::InvalidSignature> {
        aws_lc_rs::signature::UnparsedPublicKey::new(self.0, public_key)
            .verify(message, signature)
            .map_err(|_| rustls::pki_types::InvalidSignature)
    }
    fn public_key_alg_id(&self) -> rustls::pki_types::AlgorithmIdentifier {
        rustls::pki_types::alg_id::RSA_ENCRYPTION
    }
    fn signature_alg_id(&self) -> rustls::pki_types::AlgorithmIdentifier {
        self.1
    }
}

static LEGACY_SHA256: LegacyRsa = LegacyRsa(
    &aws_lc_rs::signature::RSA_PKCS1_1024_8192_SHA256_FOR_LEGACY_USE_ONLY,
    rustls::pki_types::alg_id::RSA_PKCS1_SHA256,
);
static LEGACY_SHA512: LegacyRsa = LegacyRsa(
    &aws_lc_rs::signature::RSA_PKCS1_1024_8192_SHA512_FOR_LEGACY_USE_ONLY,
    rustls::pki_types::alg_id::RSA_PKCS1_SHA512,
);

/// TLS 1.2 PKCS#1 signatures by small RSA keys.
static LEGACY: rustls::crypto::WebPkiSupportedAlgorithms =
    rustls::crypto::WebPkiSupportedAlgorithms {
        all: &[&LEGACY_SHA256, &LEGACY_SHA512],
        mapping: &[
            (SignatureScheme::RSA_PKCS1_SHA256, &[&LEGACY_SHA256]),
            (SignatureScheme::RSA_PKCS1_SHA512, &[&LEGACY_SHA512]),
        ],
    };

/// Accepts exactly one certificate (by DER) from the peer.
#[derive(Debug)]
pub struct Pinned {
    want: CertificateDer<'static>,
    provider: Arc<CryptoProvider>,
    /// The peer's key is a small RSA key: TLS 1.2 with [`LEGACY`].
    legacy: bool,
}

impl Pinned {
    pub fn new(want: CertificateDer<'static>) -> Arc<Pinned> {
        let legacy = small_rsa_key(want.as_ref());
        Arc::new(Pinned {
            want,
            provider: provider(),
            legacy,
        })
    }

    // Both directions check the handshake signature with the peer's key.
    fn tls12(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algs = if self.legacy {
            &LEGACY
        } else {
            &self.provider.signature_verification_algorithms
        };
        verify_tls12_signature(message, cert, dss, algs)
    }

    fn tls13(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn schemes(&self) -> Vec<SignatureScheme> {
        if self.legacy {
            return LEGACY.supported_schemes();
        }
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }

    fn check(&self, got: &CertificateDer<'_>) -> Result<(), rustls::Error> {
        if got.as_ref() == self.want.as_ref() {
            Ok(())
        } else {
            Err(rustls::Error::InvalidCertificate(
                rustls::CertificateError::ApplicationVerificationFailure,
            ))
        }
    }
}

impl ClientCertVerifier for Pinned {
    fn root_hint_subjects(&self) -> &[TlsDn] {
        &[]
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        self.check(end_entity)
            .map(|_| ClientCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.tls12(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.tls13(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.schemes()
    }
}

impl ServerCertVerifier for Pinned {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.check(end_entity)
            .map(|_| ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.tls12(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.tls13(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.schemes()
    }
}
