//! `rsadecrypt(ciphertext, privatekey)`: RSA PKCS #1 v1.5 decryption of
//! base64 ciphertext with a PEM private key, as Terraform's function does
//! (it reads keys as Go's `ssh.ParseRawPrivateKey` does): PKCS #1
//! (`RSA PRIVATE KEY`), PKCS #8 (`PRIVATE KEY`) and unencrypted OpenSSH
//! (`OPENSSH PRIVATE KEY`) keys, with Terraform's error texts.
//!
//! One deliberate difference: for a key that parses but is not an RSA key
//! Terraform prints the key's Go value, private numbers included; terrane
//! names the key's kind only (secrets never reach error messages).

use super::spec::{arg_err, call_err, p_str, s, Func, Res};
use super::FuncCtx;
use base64::engine::{GeneralPurpose, GeneralPurposeConfig};
use base64::Engine as _;
use rsa::pkcs1::DecodeRsaPrivateKey;
use rsa::pkcs8::DecodePrivateKey;
use rsa::{BigUint, Pkcs1v15Encrypt, RsaPrivateKey};
use terrane_value::{Type, Value};

pub(super) const NAMES: &[&str] = &["rsadecrypt"];

pub(super) fn lookup(name: &str) -> Option<Func> {
    match name {
        "rsadecrypt" => Some(Func::new(
            vec![p_str("ciphertext"), p_str("privatekey")],
            Type::String,
            rsadecrypt,
        )),
        _ => None,
    }
}

/// Go's `base64.StdEncoding`: padding required, line breaks ignored,
/// non-zero trailing bits accepted.
const GO_STD: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_allow_trailing_bits(true),
);

fn rsadecrypt(a: &[Value], _: &Type, _: &FuncCtx) -> Res<Value> {
    let text = s(&a[0]);
    let compact: String = text.chars().filter(|c| *c != '\r' && *c != '\n').collect();
    let Ok(ciphertext) = GO_STD.decode(compact) else {
        return arg_err(
            0,
            format!(
                "failed to decode input {}: cipher text must be base64-encoded",
                super::encoding::go_json_string(text)
            ),
        );
    };
    let key = private_key(s(&a[1])).or_else(|e| arg_err(1, e))?;
    match key.decrypt(Pkcs1v15Encrypt, &ciphertext) {
        Ok(plain) => Ok(Value::string(String::from_utf8_lossy(&plain).into_owned())),
        Err(_) => call_err("failed to decrypt: crypto/rsa: decryption error"),
    }
}

/// The first PEM block of `text`: its label, whether its headers say it is
/// encrypted, and its decoded body. `None` when there is none (or its
/// body is not base64), as Go's `pem.Decode`.
fn pem_block(text: &str) -> Option<(&str, bool, Vec<u8>)> {
    let mut from = 0;
    loop {
        let at = from + text[from..].find("-----BEGIN ")?;
        from = at + "-----BEGIN ".len();
        // A BEGIN line starts the input or a line.
        if at > 0 && !text[..at].ends_with('\n') {
            continue;
        }
        let after = &text[from..];
        let Some(label_end) = after.find("-----") else {
            continue;
        };
        let label = &after[..label_end];
        if label.contains('\n') {
            continue;
        }
        let body_and_end = after[label_end + 5..].trim_start_matches([' ', '\t', '\r']);
        let Some(body_and_end) = body_and_end.strip_prefix('\n') else {
            continue;
        };
        let end_marker = format!("-----END {label}-----");
        let Some(end) = body_and_end.find(&end_marker) else {
            continue;
        };
        let mut encrypted = false;
        let mut body = String::new();
        let mut in_headers = true;
        for line in body_and_end[..end].lines() {
            let line = line.trim_end_matches([' ', '\t', '\r']);
            if in_headers {
                if let Some((k, v)) = line.split_once(':') {
                    if k == "Proc-Type" && v.contains("4,ENCRYPTED") {
                        encrypted = true;
                    }
                    continue;
                }
                in_headers = false;
            }
            body.push_str(line);
        }
        if let Ok(der) = GO_STD.decode(body.trim()) {
            return Some((label, encrypted, der));
        }
    }
}

/// Parses the private key as Terraform does, with its errors.
fn private_key(text: &str) -> Result<RsaPrivateKey, String> {
    let Some((label, encrypted, der)) = pem_block(text) else {
        return Err("invalid private key: ssh: no key found".into());
    };
    if encrypted {
        return Err("invalid private key: ssh: this private key is passphrase protected".into());
    }
    let asn1 = |e: String| {
        if e.contains("unexpected end") || e.contains("incomplete") || e.contains("Incomplete") {
            "invalid ASN1 data in the given private key: data truncated".to_string()
        } else {
            format!("invalid ASN1 data in the given private key: {e}")
        }
    };
    match label {
        "RSA PRIVATE KEY" => RsaPrivateKey::from_pkcs1_der(&der).map_err(|e| asn1(e.to_string())),
        "PRIVATE KEY" => RsaPrivateKey::from_pkcs8_der(&der).map_err(|e| match e {
            rsa::pkcs8::Error::PublicKey(_) => not_rsa("a key of another algorithm"),
            other => asn1(other.to_string()),
        }),
        "EC PRIVATE KEY" => Err(not_rsa("an EC key")),
        "DSA PRIVATE KEY" => Err(not_rsa("a DSA key")),
        "OPENSSH PRIVATE KEY" => openssh_rsa_key(&der),
        other => Err(format!(
            "invalid private key: ssh: unsupported key type {}",
            super::encoding::go_json_string(other)
        )),
    }
}

/// The error for a key of another kind (`an EC key`): its kind only,
/// never the key's value.
fn not_rsa(kind: &str) -> String {
    format!("invalid private key type: an RSA private key is required, not {kind}")
}

/// A reader over the OpenSSH key format's wire encoding.
struct Wire<'a>(&'a [u8]);

impl<'a> Wire<'a> {
    fn u32(&mut self) -> Option<u32> {
        let (head, tail) = self.0.split_first_chunk::<4>()?;
        self.0 = tail;
        Some(u32::from_be_bytes(*head))
    }
    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.u32()? as usize;
        if self.0.len() < n {
            return None;
        }
        let (head, tail) = self.0.split_at(n);
        self.0 = tail;
        Some(head)
    }
    fn int(&mut self) -> Option<BigUint> {
        Some(BigUint::from_bytes_be(self.bytes()?))
    }
}

/// An unencrypted `openssh-key-v1` RSA private key.
fn openssh_rsa_key(der: &[u8]) -> Result<RsaPrivateKey, String> {
    let bad = || "invalid private key: ssh: malformed OpenSSH key".to_string();
    let body = der.strip_prefix(b"openssh-key-v1\0").ok_or_else(|| {
        "invalid private key: ssh: invalid openssh private key format".to_string()
    })?;
    let mut w = Wire(body);
    let cipher = w.bytes().ok_or_else(bad)?;
    let _kdf = w.bytes().ok_or_else(bad)?;
    let _kdf_options = w.bytes().ok_or_else(bad)?;
    if cipher != b"none" {
        return Err("invalid private key: ssh: this private key is passphrase protected".into());
    }
    if w.u32() != Some(1) {
        return Err("invalid private key: ssh: multi-key files are not supported".into());
    }
    let _public = w.bytes().ok_or_else(bad)?;
    let mut private = Wire(w.bytes().ok_or_else(bad)?);
    let (c1, c2) = (private.u32(), private.u32());
    if c1.is_none() || c1 != c2 {
        return Err("invalid private key: ssh: malformed OpenSSH key".into());
    }
    let kind = private.bytes().ok_or_else(bad)?;
    if kind != b"ssh-rsa" {
        return Err(not_rsa(&format!(
            "an OpenSSH {} key",
            String::from_utf8_lossy(kind)
        )));
    }
    let n = private.int().ok_or_else(bad)?;
    let e = private.int().ok_or_else(bad)?;
    let d = private.int().ok_or_else(bad)?;
    let _iqmp = private.int().ok_or_else(bad)?;
    let p = private.int().ok_or_else(bad)?;
    let q = private.int().ok_or_else(bad)?;
    RsaPrivateKey::from_components(n, e, d, vec![p, q])
        .map_err(|e| format!("invalid private key: {e}"))
}

#[cfg(test)]
#[path = "rsadecrypt_tests.rs"]
mod tests;
