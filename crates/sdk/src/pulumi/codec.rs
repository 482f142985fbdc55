//! Values between the SDK's typed [`Value`]s and Pulumi's
//! `google.protobuf.Struct` property objects, directed by the schema type.
//!
//! Pulumi's values are untyped JSON plus signature objects; the SDK needs
//! values of its schema's type, so decoding here is schema-directed: the
//! type says whether `"5"` is a string or a number, which object keys exist
//! (Pulumi names are camelCase, the schema's snake_case) and what a missing
//! property is (null). The wire facts (the unknown sentinel and the special
//! signature key and values) are Pulumi's.
//!
//! * Unknown: the sentinel string, or an output value without a `value`.
//! * Secret: `{sig: secret, value}`; decoding unwraps it (and reports which
//!   top-level properties were secret), encoding wraps sensitive values.
//! * A resource reference counts as its ID, or its URN when it has none
//!   (an empty ID is unknown), as the provider guide says.
//! * Assets and archives have no SDK type: they are refused with their path.

use prost_types::value::Kind as PKind;
use std::collections::{BTreeMap, BTreeSet};
use terrane_value::{Kind, Number, Type, Value};

pub use terrane_pulumirpc::codec::{
    ARCHIVE_SIG as SIG_ARCHIVE, ASSET_SIG as SIG_ASSET, OUTPUT_VALUE_SIG as SIG_OUTPUT,
    RESOURCE_REF_SIG as SIG_RESOURCE, SECRET_SIG as SIG_SECRET, SIG_KEY, UNKNOWN,
};

/// A value that does not fit the schema, with its Pulumi property path
/// (`fooBar`, `tags["env"]`, `rules[0].port`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The property path, in Pulumi's (camelCase) names.
    pub property: String,
    /// Why.
    pub reason: String,
}

/// snake_case → lowerCamelCase: the SDK's attribute names as Pulumi
/// property names (`byte_length` → `byteLength`), the naming rule's
/// conventional inverse.
pub fn camel(name: &str) -> String {
    terrane_pulumirpc::naming::snake_to_camel(name)
}

/// snake_case → PascalCase, for type tokens (`default_privileges` →
/// `DefaultPrivileges`).
pub fn pascal(name: &str) -> String {
    let c = camel(name);
    let mut it = c.chars();
    match it.next() {
        Some(f) => f.to_uppercase().chain(it).collect(),
        None => String::new(),
    }
}

fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

/// What decoding an object learned besides the value.
#[derive(Default, Debug)]
pub struct Decoded {
    /// Top-level properties (schema names) that arrived as secrets.
    pub secret: BTreeSet<String>,
    /// Keys the object had that the type does not (Pulumi names).
    pub extra: Vec<String>,
}

/// Decodes a property object as a value of object type `ty`. Keys the type
/// lacks are returned in [`Decoded::extra`] for the caller to judge.
pub fn decode_object(
    s: Option<&prost_types::Struct>,
    ty: &Type,
) -> Result<(Value, Decoded), Vec<Failure>> {
    let mut info = Decoded::default();
    let Type::Object(ot) = ty else {
        return Err(vec![Failure {
            property: String::new(),
            reason: format!("the schema type {ty} is not an object"),
        }]);
    };
    let names: BTreeMap<String, &String> = ot.attrs().keys().map(|n| (camel(n), n)).collect();
    let mut out = BTreeMap::new();
    let mut failures = Vec::new();
    if let Some(s) = s {
        for (k, v) in &s.fields {
            let Some(name) = names
                .get(k)
                .copied()
                .or_else(|| ot.attrs().get_key_value(k).map(|e| e.0))
            else {
                info.extra.push(k.clone());
                continue;
            };
            let mut secret = false;
            match decode(v, &ot.attrs()[name], k, &mut secret) {
                Ok(x) => {
                    out.insert(name.clone(), x);
                }
                Err(f) => failures.extend(f),
            }
            if secret {
                info.secret.insert(name.clone());
            }
        }
    }
    if !failures.is_empty() {
        return Err(failures);
    }
    for (n, t) in ot.attrs() {
        out.entry(n.clone())
            .or_insert_with(|| Value::null(t.clone()));
    }
    Ok((Value::object_typed(ty, out), info))
}

fn fail(path: &str, reason: impl Into<String>) -> Vec<Failure> {
    vec![Failure {
        property: path.to_string(),
        reason: reason.into(),
    }]
}

fn field<'a>(s: &'a prost_types::Struct, key: &str) -> Option<&'a PKind> {
    s.fields.get(key).and_then(|v| v.kind.as_ref())
}

/// Decodes one property value as type `ty`; `secret` is set when a secret
/// wrapper was removed anywhere inside.
pub fn decode(
    v: &prost_types::Value,
    ty: &Type,
    path: &str,
    secret: &mut bool,
) -> Result<Value, Vec<Failure>> {
    let Some(kind) = &v.kind else {
        return Ok(Value::null(ty.clone()));
    };
    if let PKind::StructValue(s) = kind {
        if let Some(PKind::StringValue(sig)) = field(s, SIG_KEY) {
            return match sig.as_str() {
                SIG_SECRET => {
                    *secret = true;
                    match s.fields.get("value") {
                        Some(inner) => decode(inner, ty, path, secret),
                        None => Ok(Value::null(ty.clone())),
                    }
                }
                SIG_OUTPUT => {
                    if matches!(field(s, "secret"), Some(PKind::BoolValue(true))) {
                        *secret = true;
                    }
                    match s.fields.get("value") {
                        Some(inner) => decode(inner, ty, path, secret),
                        None => Ok(Value::unknown(ty.clone())),
                    }
                }
                SIG_RESOURCE => {
                    let id = match field(s, "id") {
                        Some(PKind::StringValue(id)) if id.is_empty() => {
                            return Ok(Value::unknown(ty.clone()))
                        }
                        Some(PKind::StringValue(id)) => Some(id.clone()),
                        _ => None,
                    };
                    let text = match (id, field(s, "urn")) {
                        (Some(id), _) => id,
                        (None, Some(PKind::StringValue(urn))) => urn.clone(),
                        _ => return Err(fail(path, "a resource reference without a URN")),
                    };
                    let as_value = prost_types::Value {
                        kind: Some(PKind::StringValue(text)),
                    };
                    decode(&as_value, ty, path, secret)
                }
                SIG_ASSET | SIG_ARCHIVE => Err(fail(
                    path,
                    "assets and archives are not supported: this provider's schema has no such type",
                )),
                other => Err(fail(path, format!("unknown special value signature {other:?}"))),
            };
        }
    }
    if let PKind::StringValue(s) = kind {
        if s == UNKNOWN {
            return Ok(Value::unknown(ty.clone()));
        }
    }
    if let PKind::NullValue(_) = kind {
        return Ok(Value::null(ty.clone()));
    }
    let mismatch = |what: &str| fail(path, format!("expected {}, got {what}", describe(ty)));
    let got = match kind {
        PKind::NullValue(_) => "null",
        PKind::NumberValue(_) => "a number",
        PKind::StringValue(_) => "a string",
        PKind::BoolValue(_) => "a bool",
        PKind::StructValue(_) => "an object",
        PKind::ListValue(_) => "an array",
    };
    match (ty, kind) {
        (Type::String, PKind::StringValue(s)) => Ok(Value::string(s.as_str())),
        (Type::String, PKind::NumberValue(n)) => Ok(Value::string(number_text(*n))),
        (Type::String, PKind::BoolValue(b)) => Ok(Value::string(b.to_string())),
        (Type::Number, PKind::NumberValue(n)) => Number::from_f64(*n)
            .map(Value::number)
            .ok_or_else(|| fail(path, format!("{n} is not a finite number"))),
        (Type::Number, PKind::StringValue(s)) => Number::parse(s)
            .map(Value::number)
            .map_err(|_| fail(path, format!("expected a number, got the string {s:?}"))),
        (Type::Bool, PKind::BoolValue(b)) => Ok(Value::bool(*b)),
        (Type::Bool, PKind::StringValue(s)) if s == "true" || s == "false" => {
            Ok(Value::bool(s == "true"))
        }
        (Type::List(e) | Type::Set(e), PKind::ListValue(l)) => {
            let mut out = Vec::with_capacity(l.values.len());
            let mut failures = Vec::new();
            for (i, x) in l.values.iter().enumerate() {
                match decode(x, e, &format!("{path}[{i}]"), secret) {
                    Ok(x) => out.push(x),
                    Err(f) => failures.extend(f),
                }
            }
            if !failures.is_empty() {
                return Err(failures);
            }
            Ok(if matches!(ty, Type::Set(_)) {
                Value::set((**e).clone(), out)
            } else {
                Value::list((**e).clone(), out)
            })
        }
        (Type::Map(e), PKind::StructValue(s)) => {
            let mut out = BTreeMap::new();
            let mut failures = Vec::new();
            for (k, x) in &s.fields {
                match decode(x, e, &format!("{path}[{k:?}]"), secret) {
                    Ok(x) => {
                        out.insert(k.clone(), x);
                    }
                    Err(f) => failures.extend(f),
                }
            }
            if !failures.is_empty() {
                return Err(failures);
            }
            Ok(Value::map((**e).clone(), out))
        }
        (Type::Object(ot), PKind::StructValue(s)) => {
            let names: BTreeMap<String, &String> =
                ot.attrs().keys().map(|n| (camel(n), n)).collect();
            let mut out = BTreeMap::new();
            let mut failures = Vec::new();
            for (k, x) in &s.fields {
                let Some(name) = names
                    .get(k)
                    .copied()
                    .or_else(|| ot.attrs().get_key_value(k).map(|e| e.0))
                else {
                    failures.extend(fail(&child(path, k), "no such property"));
                    continue;
                };
                match decode(x, &ot.attrs()[name], &child(path, k), secret) {
                    Ok(x) => {
                        out.insert(name.clone(), x);
                    }
                    Err(f) => failures.extend(f),
                }
            }
            if !failures.is_empty() {
                return Err(failures);
            }
            for (n, t) in ot.attrs() {
                out.entry(n.clone())
                    .or_insert_with(|| Value::null(t.clone()));
            }
            Ok(Value::object_typed(ty, out))
        }
        (Type::Tuple(ts), PKind::ListValue(l)) if ts.len() == l.values.len() => {
            let mut out = Vec::new();
            for (i, (t, x)) in ts.iter().zip(&l.values).enumerate() {
                out.push(decode(x, t, &format!("{path}[{i}]"), secret)?);
            }
            Ok(Value::tuple(out))
        }
        (Type::Dynamic, _) => Ok(dynamic(v)),
        _ => Err(mismatch(got)),
    }
}

fn describe(ty: &Type) -> &'static str {
    match ty {
        Type::String => "a string",
        Type::Number => "a number",
        Type::Bool => "a bool",
        Type::List(_) | Type::Set(_) | Type::Tuple(_) => "an array",
        Type::Map(_) | Type::Object(_) => "an object",
        Type::Dynamic => "any value",
    }
}

fn number_text(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        n.to_string()
    }
}

/// A value of no fixed type, as JSON would give it.
fn dynamic(v: &prost_types::Value) -> Value {
    match &v.kind {
        None | Some(PKind::NullValue(_)) => Value::null(Type::Dynamic),
        Some(PKind::NumberValue(n)) => Number::from_f64(*n)
            .map(Value::number)
            .unwrap_or_else(|| Value::null(Type::Number)),
        Some(PKind::StringValue(s)) if s == UNKNOWN => Value::unknown(Type::Dynamic),
        Some(PKind::StringValue(s)) => Value::string(s.as_str()),
        Some(PKind::BoolValue(b)) => Value::bool(*b),
        Some(PKind::ListValue(l)) => Value::tuple(l.values.iter().map(dynamic).collect()),
        Some(PKind::StructValue(s)) => Value::object(
            s.fields
                .iter()
                .map(|(k, x)| (k.clone(), dynamic(x)))
                .collect(),
        ),
    }
}

fn pv(kind: PKind) -> prost_types::Value {
    prost_types::Value { kind: Some(kind) }
}

/// Wraps `v` in Pulumi's secret signature object.
pub fn secret(v: prost_types::Value) -> prost_types::Value {
    let mut fields = BTreeMap::new();
    fields.insert(
        SIG_KEY.to_string(),
        pv(PKind::StringValue(SIG_SECRET.into())),
    );
    fields.insert("value".to_string(), v);
    pv(PKind::StructValue(prost_types::Struct { fields }))
}

/// Encodes an object value as a property object; top-level properties
/// named in `secret` (schema names) are wrapped as secrets, and so is any
/// value marked sensitive.
pub fn encode_object(v: &Value, secret_names: &BTreeSet<String>) -> prost_types::Struct {
    let mut fields = BTreeMap::new();
    if let Some(entries) = v.entries() {
        for (n, x) in entries.iter() {
            let mut e = encode(x);
            if secret_names.contains(n) && !x.is_null() {
                e = secret(e);
            }
            fields.insert(camel(n), e);
        }
    }
    prost_types::Struct { fields }
}

/// Encodes one value (unknowns as the sentinel, sensitive values as
/// secrets, object attribute names in camelCase).
pub fn encode(v: &Value) -> prost_types::Value {
    let e = encode_plain(v);
    if v.is_sensitive() {
        secret(e)
    } else {
        e
    }
}

fn encode_plain(v: &Value) -> prost_types::Value {
    if !v.is_known() {
        return pv(PKind::StringValue(UNKNOWN.into()));
    }
    if v.is_null() {
        return pv(PKind::NullValue(0));
    }
    match v.kind() {
        Kind::String(s) => pv(PKind::StringValue(s.to_string())),
        Kind::Number(n) => pv(PKind::NumberValue(n.to_f64_lossy())),
        Kind::Bool(b) => pv(PKind::BoolValue(*b)),
        _ => {
            if let Some(elems) = v.elements() {
                return pv(PKind::ListValue(prost_types::ListValue {
                    values: elems.iter().map(encode).collect(),
                }));
            }
            let object = matches!(v.ty(), Type::Object(_));
            let fields = v
                .entries()
                .map(|m| {
                    m.iter()
                        .map(|(k, x)| (if object { camel(k) } else { k.clone() }, encode(x)))
                        .collect()
                })
                .unwrap_or_default();
            pv(PKind::StructValue(prost_types::Struct { fields }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ty() -> Type {
        let mut m = BTreeMap::new();
        m.insert("byte_length".to_string(), Type::Number);
        m.insert("keepers".to_string(), Type::map(Type::String));
        m.insert("id".to_string(), Type::String);
        Type::object(m)
    }

    fn st(pairs: &[(&str, prost_types::Value)]) -> prost_types::Struct {
        prost_types::Struct {
            fields: pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        }
    }

    #[test]
    fn codec_round_trips_unknowns_secrets_and_names() {
        let s = st(&[
            ("byteLength", pv(PKind::NumberValue(8.0))),
            ("id", pv(PKind::StringValue(UNKNOWN.into()))),
            (
                "keepers",
                secret(pv(PKind::StructValue(st(&[(
                    "a_b",
                    pv(PKind::StringValue("x".into())),
                )])))),
            ),
        ]);
        let (v, info) = decode_object(Some(&s), &ty()).unwrap();
        assert_eq!(
            v.get_attr("byte_length")
                .unwrap()
                .as_number()
                .unwrap()
                .to_i64(),
            Some(8)
        );
        assert!(!v.get_attr("id").unwrap().is_known());
        assert!(info.secret.contains("keepers"));
        let back = encode_object(&v, &info.secret);
        assert_eq!(back, s);
    }

    #[test]
    fn codec_failures_carry_property_paths() {
        let s = st(&[(
            "keepers",
            pv(PKind::StructValue(st(&[("k", pv(PKind::BoolValue(true)))]))),
        )]);
        let f = decode_object(Some(&s), &ty());
        assert!(
            f.is_ok(),
            "a bool where a string is wanted is its text, as Pulumi's config gives"
        );
        let s = st(&[("byteLength", pv(PKind::StringValue("eight".into())))]);
        let f = decode_object(Some(&s), &ty()).unwrap_err();
        assert_eq!(f[0].property, "byteLength");
    }

    #[test]
    fn names_follow_the_naming_rule() {
        assert_eq!(camel("byte_length"), "byteLength");
        assert_eq!(pascal("default_privileges"), "DefaultPrivileges");
        assert_eq!(camel("id"), "id");
    }
}
