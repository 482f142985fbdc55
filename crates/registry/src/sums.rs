//! A release's `SHA256SUMS` document and its detached OpenPGP signature,
//! checked with rpgp (pure Rust) against the signing keys the registry
//! lists for the package.

use pgp::composed::{Deserializable, DetachedSignature, SignedPublicKey};
use pgp::types::KeyDetails;

/// One `<sha256 hex>  <file name>` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sum {
    pub sha256: String,
    pub file: String,
}

/// Parses a SHA256SUMS document; a line that is not `hex  name` is an error.
pub fn parse(text: &str) -> Result<Vec<Sum>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let (hash, file) = line
            .split_once(char::is_whitespace)
            .ok_or_else(|| format!("SHA256SUMS line {}: expected \"<sha256>  <file>\"", i + 1))?;
        let file = file.trim_start().trim_start_matches('*');
        if hash.len() != 64 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) || file.is_empty() {
            return Err(format!(
                "SHA256SUMS line {}: expected \"<sha256>  <file>\"",
                i + 1
            ));
        }
        out.push(Sum {
            sha256: hash.to_ascii_lowercase(),
            file: file.to_string(),
        });
    }
    Ok(out)
}

/// Why a signature was not accepted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    #[error("the checksums signature cannot be read: {0}")]
    Malformed(String),
    #[error("a signing key from the registry cannot be read: {0}")]
    BadKey(String),
    #[error("the checksums are signed by key {issuer}, which is not one of the registry's signing keys for this provider ({known})")]
    UnknownKey { issuer: String, known: String },
    #[error("the checksums signature by key {issuer} does not verify: the SHA256SUMS document was altered or the signature is not for it")]
    Invalid { issuer: String },
}

/// Checks `signature` (binary or ASCII-armored) over `document` against
/// the ASCII-armored `keys`; returns the signing key's ID in upper-case
/// hex (as Terraform prints it).
pub fn verify(
    document: &[u8],
    signature: &[u8],
    keys: &[String],
) -> Result<String, SignatureError> {
    let sig = match DetachedSignature::from_armor_single(signature) {
        Ok((s, _)) => s,
        Err(_) => DetachedSignature::from_bytes(signature)
            .map_err(|e| SignatureError::Malformed(e.to_string()))?,
    };
    let issuers: Vec<String> = sig
        .signature
        .issuer_key_id()
        .iter()
        .map(|k| hex::encode_upper(k.as_ref()))
        .collect();
    let issuer_text = || {
        if issuers.is_empty() {
            "(no issuer recorded)".to_string()
        } else {
            issuers.join(", ")
        }
    };
    let mut known = Vec::new();
    for armored in keys {
        let (key, _) = SignedPublicKey::from_string(armored)
            .map_err(|e| SignatureError::BadKey(e.to_string()))?;
        // The primary key and every subkey may have signed.
        let primary_id = hex::encode_upper(key.primary_key.legacy_key_id().as_ref());
        known.push(primary_id.clone());
        let mut candidates: Vec<(String, bool)> = Vec::new();
        if issuers.is_empty() || issuers.contains(&primary_id) {
            candidates.push((primary_id, sig.verify(&key.primary_key, document).is_ok()));
        }
        for sub in &key.public_subkeys {
            let id = hex::encode_upper(sub.key.legacy_key_id().as_ref());
            if issuers.is_empty() || issuers.contains(&id) {
                let ok = sig.verify(&sub.key, document).is_ok();
                candidates.push((id, ok));
            }
        }
        if let Some((id, _)) = candidates.iter().find(|(_, ok)| *ok) {
            return Ok(id.clone());
        }
        if let Some((id, _)) = candidates.first().filter(|_| !issuers.is_empty()) {
            return Err(SignatureError::Invalid { issuer: id.clone() });
        }
    }
    if issuers.is_empty() {
        return Err(SignatureError::Invalid {
            issuer: issuer_text(),
        });
    }
    Err(SignatureError::UnknownKey {
        issuer: issuer_text(),
        known: known.join(", "),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsing_sums() {
        let a = "a".repeat(64);
        let cases: [(&str, String, Result<usize, &str>); 4] = [
            ("two_lines", format!("{a}  x.zip\n{a}  y.json\n"), Ok(2)),
            ("binary_marker", format!("{a} *x.zip\n"), Ok(1)),
            ("short_hash", "abc  x.zip\n".to_string(), Err("line 1")),
            ("no_name", format!("{a}\n"), Err("line 1")),
        ];
        for (case, text, want) in cases {
            match (parse(&text), want) {
                (Ok(s), Ok(n)) => assert_eq!(s.len(), n, "case {case}"),
                (Err(e), Err(w)) => assert!(e.contains(w), "case {case}: {e}"),
                (got, want) => panic!("case {case}: got {got:?}, want {want:?}"),
            }
        }
    }
}
