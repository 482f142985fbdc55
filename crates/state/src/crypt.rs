//! Encryption at rest: AES-256-GCM with a key derived from a passphrase by
//! PBKDF2-HMAC-SHA256 and a per-store random salt.
//!
//! Sealed data is `nonce (12 bytes) || ciphertext+tag`. A store keeps a
//! sealed known text (the key check) so a wrong passphrase is detected
//! before anything is read or written.

use aes_gcm::aead::{Aead, KeyInit};
use aes_gcm::{Aes256Gcm, Nonce};

/// PBKDF2 rounds used unless the caller asks otherwise.
pub const DEFAULT_ITERATIONS: u32 = 210_000;
const KEY_CHECK: &[u8] = b"terrane state key check v1";

/// How to encrypt a store: the passphrase and the KDF work factor (used when
/// the store is first encrypted; later opens use the store's own).
#[derive(Clone)]
pub struct Encryption {
    pub passphrase: String,
    pub iterations: u32,
}

impl Encryption {
    pub fn new(passphrase: impl Into<String>) -> Encryption {
        Encryption { passphrase: passphrase.into(), iterations: DEFAULT_ITERATIONS }
    }

    /// From `TERRANE_STATE_PASSPHRASE`, if set and non-empty.
    pub fn from_env() -> Option<Encryption> {
        std::env::var("TERRANE_STATE_PASSPHRASE").ok().filter(|p| !p.is_empty()).map(Encryption::new)
    }
}

impl std::fmt::Debug for Encryption {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Encryption {{ passphrase: (sensitive value), iterations: {} }}", self.iterations)
    }
}

/// A derived key.
#[derive(Clone)]
pub struct Cipher {
    aead: Aes256Gcm,
}

impl Cipher {
    pub fn derive(passphrase: &str, salt: &[u8], iterations: u32) -> Cipher {
        let mut key = [0u8; 32];
        pbkdf2::pbkdf2_hmac::<sha2::Sha256>(passphrase.as_bytes(), salt, iterations, &mut key);
        Cipher { aead: Aes256Gcm::new(&key.into()) }
    }

    pub fn seal(&self, plain: &[u8]) -> Vec<u8> {
        let nonce_bytes: [u8; 12] = rand::random();
        let nonce = Nonce::from_slice(&nonce_bytes);
        // Encryption with a fresh nonce cannot fail for inputs of this size.
        let ct = self.aead.encrypt(nonce, plain).unwrap_or_default();
        let mut out = Vec::with_capacity(12 + ct.len());
        out.extend_from_slice(&nonce_bytes);
        out.extend_from_slice(&ct);
        out
    }

    pub fn open(&self, sealed: &[u8]) -> Option<Vec<u8>> {
        if sealed.len() < 12 {
            return None;
        }
        let (nonce, ct) = sealed.split_at(12);
        self.aead.decrypt(Nonce::from_slice(nonce), ct).ok()
    }

    /// The sealed key-check record.
    pub fn key_check(&self) -> Vec<u8> {
        self.seal(KEY_CHECK)
    }

    /// Whether `sealed` is this key's key-check record.
    pub fn verify(&self, sealed: &[u8]) -> bool {
        self.open(sealed).as_deref() == Some(KEY_CHECK)
    }
}

/// A new key for a store: the cipher and the parameters recorded with it.
pub struct NewKey {
    pub cipher: Cipher,
    pub salt: Vec<u8>,
    pub iterations: u32,
}

impl NewKey {
    /// Derives a key with a fresh salt.
    pub fn derive(enc: &Encryption) -> NewKey {
        let salt = new_salt();
        NewKey { cipher: Cipher::derive(&enc.passphrase, &salt, enc.iterations), salt, iterations: enc.iterations }
    }
}

/// Re-encodes one stored value from the `old` key to the `new` one (either
/// may be None: plaintext). `None` means the value did not decrypt.
pub fn recode(old: Option<&Cipher>, new: Option<&Cipher>, data: &[u8]) -> Option<Vec<u8>> {
    let plain = match old {
        Some(c) => c.open(data)?,
        None => data.to_vec(),
    };
    Some(match new {
        Some(c) => c.seal(&plain),
        None => plain,
    })
}

/// A fresh random salt.
pub fn new_salt() -> Vec<u8> {
    rand::random::<[u8; 16]>().to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seal_open_and_key_check() {
        let salt = new_salt();
        let a = Cipher::derive("right", &salt, 1000);
        let b = Cipher::derive("wrong", &salt, 1000);
        let sealed = a.seal(b"secret attributes");
        assert_eq!(a.open(&sealed).as_deref(), Some(&b"secret attributes"[..]));
        assert_eq!(b.open(&sealed), None, "case wrong_key_cannot_open");
        assert!(!sealed.windows(6).any(|w| w == b"secret"), "case ciphertext_hides_plaintext");
        assert!(a.verify(&a.key_check()));
        assert!(!b.verify(&a.key_check()), "case wrong_key_fails_key_check");
        let mut tampered = sealed.clone();
        tampered[20] ^= 1;
        assert_eq!(a.open(&tampered), None, "case tampering_detected");
    }
}
