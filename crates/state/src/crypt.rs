//! Encryption at rest: AES-256-GCM with a key derived from a passphrase by
//! PBKDF2-HMAC-SHA256 and a per-store random salt.
//!
//! Sealed data (format 2) is `0x02 || nonce (12 bytes) || ciphertext+tag`,
//! and every blob is bound to where it belongs by GCM's associated data: a
//! stored value to its workspace, resource instance (or output) and column,
//! the key check to its role, a saved plan to being a plan. A blob copied
//! to another row, another workspace or another file fails to open.
//!
//! Format 1 (terrane before row binding: `nonce || ciphertext+tag`, no
//! associated data) is no longer read by the stores: a store marked with
//! format 1 is refused with a message naming `terrane state rotate-key`,
//! which is the one path that still opens format-1 blobs, re-encrypting
//! them in format 2 (see `SqliteStore::open_for_rotation`).
//!
//! A store keeps a sealed known text (the key check) so a wrong passphrase
//! is detected before anything is read or written. The KDF work factor is
//! stored with the salt; a stored count outside
//! [`MIN_ITERATIONS`]..=[`MAX_ITERATIONS`] is refused before any key is
//! derived, so a tampered count cannot make opening take hours.

use crate::error::{Result, StateError};
use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::{Aes256Gcm, Nonce};

/// PBKDF2 rounds used unless the caller asks otherwise.
pub const DEFAULT_ITERATIONS: u32 = 210_000;
/// The fewest rounds a store may record (tests use this; below it a store
/// is considered tampered with).
pub const MIN_ITERATIONS: u32 = 1_000;
/// The most rounds a store may record: about 2.5 s of PBKDF2-SHA256 on
/// one core of a current machine. A count above it is refused unread.
pub const MAX_ITERATIONS: u32 = 5_000_000;
/// The encrypted-blob format written: version byte of every sealed blob,
/// and the stores' `crypt_format` marker.
pub const FORMAT: u8 = 2;
const KEY_CHECK: &[u8] = b"terrane state key check v2";
const KEY_CHECK_AAD: &[u8] = b"terrane/key-check";

/// How to encrypt a store: the passphrase and the KDF work factor (used when
/// the store is first encrypted; later opens use the store's own).
#[derive(Clone)]
pub struct Encryption {
    pub passphrase: String,
    pub iterations: u32,
}

impl Encryption {
    pub fn new(passphrase: impl Into<String>) -> Encryption {
        Encryption {
            passphrase: passphrase.into(),
            iterations: DEFAULT_ITERATIONS,
        }
    }

    /// From `TERRANE_STATE_PASSPHRASE`, if set and non-empty.
    pub fn from_env() -> Option<Encryption> {
        std::env::var("TERRANE_STATE_PASSPHRASE")
            .ok()
            .filter(|p| !p.is_empty())
            .map(Encryption::new)
    }

    /// From the environment variable `var` (named by a state block's
    /// `encryption_key_env`): unset or empty is an error, never plaintext.
    pub fn from_named_env(var: &str) -> Result<Encryption> {
        match std::env::var(var) {
            Ok(p) if !p.is_empty() => Ok(Encryption::new(p)),
            Ok(_) => Err(StateError::KeyVariable {
                var: var.into(),
                detail: "is set but empty".into(),
            }),
            Err(std::env::VarError::NotPresent) => Err(StateError::KeyVariable {
                var: var.into(),
                detail: "is not set".into(),
            }),
            Err(std::env::VarError::NotUnicode(_)) => Err(StateError::KeyVariable {
                var: var.into(),
                detail: "is not valid UTF-8".into(),
            }),
        }
    }
}

impl std::fmt::Debug for Encryption {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Encryption {{ passphrase: (sensitive value), iterations: {} }}",
            self.iterations
        )
    }
}

/// A derived key.
#[derive(Clone)]
pub struct Cipher {
    aead: Aes256Gcm,
}

impl std::fmt::Debug for Cipher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Cipher(sensitive)")
    }
}

/// Checks a KDF work factor read from a store or asked for by a caller.
pub fn check_iterations(iterations: u32, what: &str) -> Result<u32> {
    if (MIN_ITERATIONS..=MAX_ITERATIONS).contains(&iterations) {
        Ok(iterations)
    } else {
        Err(StateError::Corrupt {
            path: what.into(),
            detail: format!("the recorded key-derivation work factor ({iterations} rounds) is outside {MIN_ITERATIONS}..={MAX_ITERATIONS}; the store was tampered with, or written by something else"),
        })
    }
}

impl Cipher {
    pub fn derive(passphrase: &str, salt: &[u8], iterations: u32) -> Cipher {
        let mut key = [0u8; 32];
        pbkdf2::pbkdf2_hmac::<sha2::Sha256>(passphrase.as_bytes(), salt, iterations, &mut key);
        Cipher {
            aead: Aes256Gcm::new(&key.into()),
        }
    }

    /// Seals `plain`, bound to `aad` (format 2).
    pub fn seal(&self, plain: &[u8], aad: &[u8]) -> Vec<u8> {
        let nonce_bytes: [u8; 12] = rand::random();
        let nonce = Nonce::from_slice(&nonce_bytes);
        // Encryption with a fresh nonce cannot fail for inputs of this size.
        let ct = self
            .aead
            .encrypt(nonce, Payload { msg: plain, aad })
            .unwrap_or_default();
        let mut out = Vec::with_capacity(13 + ct.len());
        out.push(FORMAT);
        out.extend_from_slice(&nonce_bytes);
        out.extend_from_slice(&ct);
        out
    }

    /// Opens a format-2 blob sealed for `aad`; None when it is not one,
    /// was sealed by another key or for another place, or was altered.
    pub fn open(&self, sealed: &[u8], aad: &[u8]) -> Option<Vec<u8>> {
        let (&version, rest) = sealed.split_first()?;
        if version != FORMAT || rest.len() < 12 {
            return None;
        }
        let (nonce, ct) = rest.split_at(12);
        self.aead
            .decrypt(Nonce::from_slice(nonce), Payload { msg: ct, aad })
            .ok()
    }

    /// Opens a format-1 blob (no version byte, no associated data): only
    /// for re-encrypting an old store.
    pub fn open_v1(&self, sealed: &[u8]) -> Option<Vec<u8>> {
        if sealed.len() < 12 {
            return None;
        }
        let (nonce, ct) = sealed.split_at(12);
        self.aead.decrypt(Nonce::from_slice(nonce), ct).ok()
    }

    /// The sealed key-check record.
    pub fn key_check(&self) -> Vec<u8> {
        self.seal(KEY_CHECK, KEY_CHECK_AAD)
    }

    /// Whether `sealed` is this key's key-check record.
    pub fn verify(&self, sealed: &[u8]) -> bool {
        self.open(sealed, KEY_CHECK_AAD).as_deref() == Some(KEY_CHECK)
    }

    /// Whether `sealed` is this key's format-1 key-check record.
    fn verify_v1(&self, sealed: &[u8]) -> bool {
        self.open_v1(sealed).as_deref() == Some(b"terrane state key check v1")
    }
}

/// A new key for a store: the cipher and the parameters recorded with it.
pub struct NewKey {
    pub cipher: Cipher,
    pub salt: Vec<u8>,
    pub iterations: u32,
}

impl NewKey {
    /// Derives a key with a fresh salt; refuses a work factor outside the
    /// accepted range (a store could not be opened again with it).
    pub fn derive(enc: &Encryption) -> Result<NewKey> {
        let iterations = check_iterations(enc.iterations, "the requested encryption")?;
        let salt = new_salt();
        Ok(NewKey {
            cipher: Cipher::derive(&enc.passphrase, &salt, iterations),
            salt,
            iterations,
        })
    }

    /// The `meta` rows recording this key: salt, rounds, key check, format.
    pub fn meta_rows(&self) -> Vec<(&'static str, Vec<u8>)> {
        vec![
            ("kdf_salt", self.salt.clone()),
            ("kdf_iterations", self.iterations.to_string().into_bytes()),
            ("key_check", self.cipher.key_check()),
            ("crypt_format", FORMAT.to_string().into_bytes()),
        ]
    }
}

/// The `meta` keys that describe a store's encryption.
pub const META_KEYS: &[&str] = &["kdf_salt", "kdf_iterations", "key_check", "crypt_format"];

/// How a store's stored values are encrypted, once its key is checked.
#[derive(Clone, Debug)]
pub struct Unlocked {
    pub cipher: Option<Cipher>,
    /// The store was written in format 1 (only rotation may open it).
    pub legacy_v1: bool,
}

/// Checks `enc` against a store's encryption records, read through
/// `meta(key)`; `what` names the store in errors. Refuses format-1 stores
/// unless `allow_legacy` (rotation).
pub fn unlock(
    meta: &mut dyn FnMut(&str) -> Result<Option<Vec<u8>>>,
    encryption: Option<&Encryption>,
    what: &str,
    allow_legacy: bool,
) -> Result<Unlocked> {
    let Some(check) = meta("key_check")? else {
        return match encryption {
            None => Ok(Unlocked {
                cipher: None,
                legacy_v1: false,
            }),
            Some(_) => Err(StateError::NotEncrypted { path: what.into() }),
        };
    };
    let Some(enc) = encryption else {
        return Err(StateError::EncryptedNoKey { path: what.into() });
    };
    let format = meta("crypt_format")?.map(|b| String::from_utf8_lossy(&b).into_owned());
    let legacy_v1 = match format.as_deref() {
        None => true,
        Some(f) if f == FORMAT.to_string() => false,
        Some(f) => {
            return Err(StateError::Corrupt { path: what.into(), detail: format!("unknown encryption format {f:?} (this terrane writes and reads format {FORMAT})") });
        }
    };
    if legacy_v1 && !allow_legacy {
        return Err(StateError::OldEncryptionFormat { path: what.into() });
    }
    let salt = meta("kdf_salt")?
        .filter(|s| s.len() >= 16)
        .ok_or_else(|| StateError::Corrupt {
            path: what.into(),
            detail: "the encryption salt is missing or too short".into(),
        })?;
    let iterations = meta("kdf_iterations")?
        .and_then(|b| String::from_utf8(b).ok())
        .and_then(|s| s.parse::<u32>().ok())
        .ok_or_else(|| StateError::Corrupt {
            path: what.into(),
            detail: "the key-derivation work factor is missing or not a number".into(),
        })?;
    let iterations = check_iterations(iterations, what)?;
    let c = Cipher::derive(&enc.passphrase, &salt, iterations);
    let ok = if legacy_v1 {
        c.verify_v1(&check)
    } else {
        c.verify(&check)
    };
    if !ok {
        return Err(StateError::WrongKey { path: what.into() });
    }
    Ok(Unlocked {
        cipher: Some(c),
        legacy_v1,
    })
}

/// Re-encodes one stored value sealed for `aad` from the `old` key to the
/// `new` one (either may be None: plaintext); `old_v1` says the old blob is
/// format 1. `None` means the value did not decrypt.
pub fn recode(
    old: Option<&Cipher>,
    old_v1: bool,
    new: Option<&Cipher>,
    data: &[u8],
    aad: &[u8],
) -> Option<Vec<u8>> {
    let plain = match old {
        Some(c) if old_v1 => c.open_v1(data)?,
        Some(c) => c.open(data, aad)?,
        None => data.to_vec(),
    };
    Some(match new {
        Some(c) => c.seal(&plain, aad),
        None => plain,
    })
}

/// Associated data binding a blob to its place: length-prefixed parts, so
/// no two different places share an encoding.
pub fn aad(parts: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::with_capacity(parts.iter().map(|p| p.len() + 4).sum::<usize>() + 8);
    out.extend_from_slice(b"terrane2");
    for p in parts {
        out.extend_from_slice(&(p.len() as u32).to_be_bytes());
        out.extend_from_slice(p);
    }
    out
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
        let here = aad(&[b"default", b"terraform_data.x", b"attributes"]);
        let sealed = a.seal(b"secret attributes", &here);
        assert_eq!(sealed[0], FORMAT, "case version_byte_first");
        assert_eq!(
            a.open(&sealed, &here).as_deref(),
            Some(&b"secret attributes"[..])
        );
        assert_eq!(b.open(&sealed, &here), None, "case wrong_key_cannot_open");
        assert!(
            !sealed.windows(6).any(|w| w == b"secret"),
            "case ciphertext_hides_plaintext"
        );
        assert!(a.verify(&a.key_check()));
        assert!(!b.verify(&a.key_check()), "case wrong_key_fails_key_check");
        let mut tampered = sealed.clone();
        tampered[20] ^= 1;
        assert_eq!(a.open(&tampered, &here), None, "case tampering_detected");
    }

    #[test]
    fn item14_blobs_are_bound_to_their_place() {
        let a = Cipher::derive("k", &new_salt(), 1000);
        let here = aad(&[b"default", b"terraform_data.x", b"attributes"]);
        let sealed = a.seal(b"v", &here);
        let cases: [(&str, Vec<u8>); 4] = [
            (
                "other_workspace",
                aad(&[b"staging", b"terraform_data.x", b"attributes"]),
            ),
            (
                "other_instance",
                aad(&[b"default", b"terraform_data.y", b"attributes"]),
            ),
            (
                "other_column",
                aad(&[b"default", b"terraform_data.x", b"private"]),
            ),
            (
                "split_differently",
                aad(&[b"defaultterraform_data.x", b"", b"attributes"]),
            ),
        ];
        for (case, other) in cases {
            assert_eq!(a.open(&sealed, &other), None, "case {case}");
        }
        let mut v1 = sealed[1..].to_vec();
        assert_eq!(
            a.open(&v1, &here),
            None,
            "case format1_blob_not_read_as_format2"
        );
        v1.insert(0, 1);
        assert_eq!(a.open(&v1, &here), None, "case unknown_version_byte");
    }

    #[test]
    fn item14_tampered_work_factor_refused_before_deriving() {
        let cases: [(&str, u32, bool); 5] = [
            ("zero", 0, false),
            ("below_minimum", MIN_ITERATIONS - 1, false),
            ("minimum", MIN_ITERATIONS, true),
            ("maximum", MAX_ITERATIONS, true),
            ("hours_long", u32::MAX, false),
        ];
        for (case, n, ok) in cases {
            assert_eq!(check_iterations(n, "store").is_ok(), ok, "case {case}");
        }
        // Through unlock: a store recording u32::MAX rounds answers at once.
        let key = NewKey::derive(&Encryption {
            passphrase: "p".into(),
            iterations: 1000,
        })
        .unwrap();
        let mut rows: std::collections::BTreeMap<&str, Vec<u8>> =
            key.meta_rows().into_iter().collect();
        rows.insert("kdf_iterations", u32::MAX.to_string().into_bytes());
        let start = std::time::Instant::now();
        let err = unlock(
            &mut |k| Ok(rows.get(k).cloned()),
            Some(&Encryption::new("p")),
            "store",
            false,
        )
        .expect_err("refused");
        assert!(
            err.to_string().contains("work factor"),
            "case tampered_count_message: {err}"
        );
        assert!(
            start.elapsed() < std::time::Duration::from_secs(1),
            "case refused_without_deriving"
        );
    }
}
