//! Hashes and identifiers: `md5`, `sha1`, `sha256`, `sha512` (hex),
//! `base64sha256`, `base64sha512`, `uuid`, `uuidv5` and `bcrypt`.
//! `uuid` and `bcrypt` are impure: unknown during validation.

use super::spec::{arg_err, call_err, int_arg, p_num, p_str, s, Func, Res};
use super::FuncCtx;
use base64::Engine as _;
use sha2::Digest;
use terrane_value::{Type, Value};

pub(super) const NAMES: &[&str] = &[
    "md5",
    "sha1",
    "sha256",
    "sha512",
    "base64sha256",
    "base64sha512",
    "uuid",
    "uuidv5",
    "bcrypt",
];

pub(super) fn lookup(name: &str) -> Option<Func> {
    let hash = |imp| Func::new(vec![p_str("str")], Type::String, imp);
    Some(match name {
        "md5" => hash(|a, _, _| {
            Ok(Value::string(hex::encode(md5::Md5::digest(
                s(&a[0]).as_bytes(),
            ))))
        }),
        "sha1" => hash(|a, _, _| {
            Ok(Value::string(hex::encode(sha1::Sha1::digest(
                s(&a[0]).as_bytes(),
            ))))
        }),
        "sha256" => hash(|a, _, _| {
            Ok(Value::string(hex::encode(sha2::Sha256::digest(
                s(&a[0]).as_bytes(),
            ))))
        }),
        "sha512" => hash(|a, _, _| {
            Ok(Value::string(hex::encode(sha2::Sha512::digest(
                s(&a[0]).as_bytes(),
            ))))
        }),
        "base64sha256" => hash(|a, _, _| {
            Ok(Value::string(b64(&sha2::Sha256::digest(
                s(&a[0]).as_bytes(),
            ))))
        }),
        "base64sha512" => hash(|a, _, _| {
            Ok(Value::string(b64(&sha2::Sha512::digest(
                s(&a[0]).as_bytes(),
            ))))
        }),
        "uuid" => Func::new(vec![], Type::String, |_, _, _| {
            Ok(Value::string(uuid::Uuid::new_v4().to_string()))
        })
        .impure(),
        "uuidv5" => Func::new(
            vec![p_str("namespace"), p_str("name")],
            Type::String,
            uuidv5,
        ),
        "bcrypt" => Func::new(vec![p_str("str")], Type::String, bcrypt_fn)
            .variadic(p_num("cost"))
            .impure(),
        _ => return None,
    })
}

pub(crate) fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn uuidv5(a: &[Value], _: &Type, _: &FuncCtx) -> Res<Value> {
    let ns = match s(&a[0]) {
        "dns" => uuid::Uuid::NAMESPACE_DNS,
        "url" => uuid::Uuid::NAMESPACE_URL,
        "oid" => uuid::Uuid::NAMESPACE_OID,
        "x500" => uuid::Uuid::NAMESPACE_X500,
        other => match uuid::Uuid::parse_str(other) {
            Ok(u) => u,
            Err(_) => return arg_err(0, format!("uuidv5() doesn't support namespace {other}")),
        },
    };
    let mut h = sha1::Sha1::new();
    h.update(ns.as_bytes());
    h.update(s(&a[1]).as_bytes());
    let digest = h.finalize();
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    bytes[6] = (bytes[6] & 0x0f) | 0x50;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    Ok(Value::string(uuid::Uuid::from_bytes(bytes).to_string()))
}

fn bcrypt_fn(a: &[Value], _: &Type, _: &FuncCtx) -> Res<Value> {
    if a.len() > 2 {
        return call_err(format!(
            "bcrypt() takes no more than two arguments, but got {}",
            a.len()
        ));
    }
    let cost = if a.len() == 2 { int_arg(a, 1)? } else { 10 };
    if !(4..=31).contains(&cost) {
        return call_err(format!("error occurred generating password crypto/bcrypt: cost {cost} is outside allowed range (4,31)"));
    }
    match bcrypt::hash_with_result(s(&a[0]), cost as u32) {
        Ok(h) => Ok(Value::string(h.format_for_version(bcrypt::Version::TwoA))),
        Err(e) => call_err(format!("error occurred generating password {e}")),
    }
}

#[cfg(test)]
#[path = "crypto_tests.rs"]
mod tests;
