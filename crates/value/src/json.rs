//! The JSON codec used for state attributes, RawState and the optional
//! DynamicValue.json field.
//!
//! Same shape as msgpack: objects and maps are JSON objects, lists, sets and
//! tuples are arrays, numbers are JSON numbers written with full precision
//! (the exact decimal text), and a value in a `dynamic` position is
//! `{"value": .., "type": ..}`. Unknown values cannot be written ("value is
//! not known"); infinities have no JSON form. Decoding accepts numbers
//! written as strings, as cty does.

use crate::{typejson, Entries, Kind, Number, Path, Step, Type, Value};
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::fmt;

/// Why a value cannot be written as, or read from, JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    pub path: Path,
    pub message: String,
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_root() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for JsonError {}

fn fail<T>(path: &Path, message: impl Into<String>) -> Result<T, JsonError> {
    Err(JsonError {
        path: path.clone(),
        message: message.into(),
    })
}

/// Writes `v` as JSON of type `ty`.
pub fn encode(v: &Value, ty: &Type) -> Result<Json, JsonError> {
    write(v, ty, |e| serde_json::to_value(e))
}

/// Writes `v` as compact JSON bytes.
pub fn encode_bytes(v: &Value, ty: &Type) -> Result<Vec<u8>, JsonError> {
    encode_string(v, ty).map(String::into_bytes)
}

/// Writes `v` as compact JSON text, straight from the value: the same text
/// as [`encode`]'s tree written out, without making the tree (a state
/// object's attributes are kept as this text).
pub fn encode_string(v: &Value, ty: &Type) -> Result<String, JsonError> {
    write(v, ty, |e| serde_json::to_string(e))
}

/// Runs one serde serializer over `v`: the error, if any, is the one the
/// walk recorded with its path.
fn write<T>(
    v: &Value,
    ty: &Type,
    to: impl FnOnce(&Enc<'_>) -> Result<T, serde_json::Error>,
) -> Result<T, JsonError> {
    let failed = std::cell::RefCell::new(None);
    let written = to(&Enc {
        v,
        ty,
        failed: &failed,
    });
    written.map_err(|e| {
        failed.into_inner().unwrap_or(JsonError {
            path: Path::root(),
            message: e.to_string(),
        })
    })
}

/// `v` as JSON of type `ty`, for a serde serializer: an object type's
/// attributes in the type's order, a map's keys in order, a value of a
/// dynamic type as its "value" then its "type". What cannot be written is
/// recorded in `failed`, its path filled in on the way out (nothing is
/// spent on paths while the walk succeeds).
struct Enc<'a> {
    v: &'a Value,
    ty: &'a Type,
    failed: &'a std::cell::RefCell<Option<JsonError>>,
}

impl Enc<'_> {
    fn part<'b>(&'b self, v: &'b Value, ty: &'b Type) -> Enc<'b> {
        Enc {
            v,
            ty,
            failed: self.failed,
        }
    }

    fn fail<E: serde::ser::Error>(&self, message: String) -> E {
        let e = E::custom(&message);
        *self.failed.borrow_mut() = Some(JsonError {
            path: Path::root(),
            message,
        });
        e
    }

    /// `r`, the writing of the part at `step`, with `step` put in front
    /// of the recorded failure's path.
    fn within<T, E>(&self, step: impl FnOnce() -> Step, r: Result<T, E>) -> Result<T, E> {
        if r.is_err() {
            if let Some(f) = self.failed.borrow_mut().as_mut() {
                f.path.0.insert(0, step());
            }
        }
        r
    }
}

impl Enc<'_> {
    /// The `n` elements of a list, set or tuple, each with its type.
    fn seq<'b, S: serde::Serializer>(
        &self,
        ser: S,
        n: usize,
        es: impl Iterator<Item = (&'b Value, &'b Type)>,
    ) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut out = ser.serialize_seq(Some(n))?;
        for (i, (e, t)) in es.enumerate() {
            let r = out.serialize_element(&self.part(e, t));
            self.within(|| Step::Index(i as i64), r)?;
        }
        out.end()
    }
}

impl serde::Serialize for Enc<'_> {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let (v, ty) = (self.v, self.ty);
        if ty.is_dynamic() && !v.ty().is_dynamic() {
            let mut m = ser.serialize_map(Some(2))?;
            m.serialize_entry("value", &self.part(v, v.ty()))?;
            m.serialize_entry("type", &typejson::to_json(v.ty()))?;
            return m.end();
        }
        match (ty, v.kind()) {
            (_, Kind::Null) => ser.serialize_unit(),
            (_, Kind::Unknown(_)) => Err(self.fail("value is not known".into())),
            (Type::String, Kind::String(s)) => ser.serialize_str(s),
            (Type::Number, Kind::Number(n)) => match number_json(n) {
                Some(j) => j.serialize(ser),
                None => Err(self.fail(format!("{n} cannot be written as JSON"))),
            },
            (Type::Bool, Kind::Bool(b)) => ser.serialize_bool(*b),
            (Type::List(t) | Type::Set(t), Kind::Seq(es) | Kind::Set(es)) => {
                self.seq(ser, es.len(), es.iter().map(|e| (e, &**t)))
            }
            (Type::Tuple(ts), Kind::Seq(es)) if ts.len() == es.len() => {
                self.seq(ser, es.len(), es.iter().zip(ts.iter()))
            }
            (Type::Map(t), Kind::Map(m)) => {
                let mut out = ser.serialize_map(Some(m.len()))?;
                for (k, e) in m.iter() {
                    let r = out.serialize_entry(k, &self.part(e, t));
                    self.within(|| Step::Key(k.clone()), r)?;
                }
                out.end()
            }
            (Type::Object(o), Kind::Map(m)) => {
                let mut out = ser.serialize_map(None)?;
                for (k, t) in o.attrs() {
                    let Some(e) = m.get(k) else {
                        return Err(self.fail(format!("missing attribute {k:?}")));
                    };
                    let r = out.serialize_entry(k, &self.part(e, t));
                    self.within(|| Step::Attr(k.clone()), r)?;
                }
                out.end()
            }
            _ => Err(self.fail(format!(
                "a {} value cannot be written as {}",
                v.ty().friendly_name(),
                ty.friendly_name()
            ))),
        }
    }
}

/// The exact JSON number for a finite number (arbitrary precision).
fn number_json(n: &Number) -> Option<Json> {
    if !n.is_finite() {
        return None;
    }
    serde_json::from_str::<serde_json::Number>(&n.to_string())
        .ok()
        .map(Json::Number)
}

/// Reads JSON of type `ty`.
pub fn decode(j: &Json, ty: &Type) -> Result<Value, JsonError> {
    dec(j, ty, &mut Path::root())
}

/// Reads JSON bytes of type `ty`: in one pass from the text when it is
/// valid and matches (see [`decode_bytes_direct`]), otherwise through the
/// JSON tree, which names what is wrong and where.
pub fn decode_bytes(bytes: &[u8], ty: &Type) -> Result<Value, JsonError> {
    match decode_bytes_direct(bytes, ty, Extra::Refuse) {
        Some(v) => Ok(v),
        None => decode_bytes_tree(bytes, ty),
    }
}

/// What [`decode_bytes_direct`] does with a top-level object's attributes
/// that its type does not have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extra {
    /// They make the text not match (as [`decode`] refuses them).
    Refuse,
    /// They are skipped (state written by an older build of a provider,
    /// at the same schema version, with attributes it has since dropped).
    Drop,
}

/// The value of type `ty` that JSON bytes hold, read straight from the
/// text without building a JSON tree; `None` when the text is not valid
/// JSON or does not match the type (then [`decode`] of the parsed tree
/// says why). Whenever this gives a value, it is the value
/// [`decode_bytes`]' tree reading gives (after dropping top-level extra
/// attributes, with [`Extra::Drop`]). Numbers and `dynamic` values go
/// through the tree reading, so their forms and checks are the same;
/// object attributes are expected in the type's (sorted) order, as every
/// writer of this format puts them, and anything else takes the slow path.
pub fn decode_bytes_direct(bytes: &[u8], ty: &Type, extra: Extra) -> Option<Value> {
    use serde::de::DeserializeSeed;
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let v = Seed { ty, extra }.deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(v)
}

/// [`decode_bytes_direct`]'s reader of a value of one type.
#[derive(Clone, Copy)]
struct Seed<'t> {
    ty: &'t Type,
    extra: Extra,
}

impl<'t> Seed<'t> {
    fn inner(ty: &'t Type) -> Seed<'t> {
        Seed {
            ty,
            extra: Extra::Refuse,
        }
    }
}

/// Why the direct reading gave up; never shown (the tree reading is what
/// reports errors).
fn mismatch<E: serde::de::Error>() -> E {
    E::custom("does not match")
}

/// serde_json's key for the number it hands out as a map when arbitrary
/// precision is on: a map or object with it is left to the tree reading,
/// which reads it as serde_json does.
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

impl<'de> serde::de::DeserializeSeed<'de> for Seed<'_> {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        use serde::Deserialize;
        match self.ty {
            Type::Number | Type::Dynamic => {
                let j = Json::deserialize(d)?;
                dec(&j, self.ty, &mut Path::root()).map_err(|_| mismatch())
            }
            _ => d.deserialize_option(self),
        }
    }
}

impl<'de> serde::de::Visitor<'de> for Seed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.ty.friendly_name().as_str())
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::null(self.ty.clone()))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::null(self.ty.clone()))
    }

    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        match self.ty {
            Type::String => d.deserialize_str(self),
            Type::Bool => d.deserialize_bool(self),
            Type::List(_) | Type::Set(_) | Type::Tuple(_) => d.deserialize_seq(self),
            Type::Map(_) | Type::Object(_) => d.deserialize_map(self),
            Type::Number | Type::Dynamic => serde::de::DeserializeSeed::deserialize(self, d),
        }
    }

    fn visit_bool<E: serde::de::Error>(self, b: bool) -> Result<Value, E> {
        match self.ty {
            Type::Bool => Ok(Value::bool(b)),
            _ => Err(mismatch()),
        }
    }

    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Value, E> {
        match self.ty {
            Type::String => Ok(Value::string(s)),
            _ => Err(mismatch()),
        }
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> Result<Value, A::Error> {
        match self.ty {
            Type::List(t) | Type::Set(t) => {
                let mut out = Vec::with_capacity(a.size_hint().unwrap_or(0));
                while let Some(v) = a.next_element_seed(Seed::inner(t))? {
                    out.push(v);
                }
                Ok(if matches!(self.ty, Type::List(_)) {
                    Value::list((**t).clone(), out)
                } else {
                    Value::set((**t).clone(), out)
                })
            }
            Type::Tuple(ts) => {
                let mut out = Vec::with_capacity(ts.len());
                for t in ts.iter() {
                    out.push(a.next_element_seed(Seed::inner(t))?.ok_or_else(mismatch)?);
                }
                match a.next_element::<serde::de::IgnoredAny>()? {
                    None => Ok(Value::tuple(out)),
                    Some(_) => Err(mismatch()),
                }
            }
            _ => Err(mismatch()),
        }
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut a: A) -> Result<Value, A::Error> {
        match self.ty {
            Type::Map(t) => {
                let mut out = BTreeMap::new();
                while let Some(k) = a.next_key::<String>()? {
                    if k == NUMBER_TOKEN {
                        return Err(mismatch());
                    }
                    out.insert(k, a.next_value_seed(Seed::inner(t))?);
                }
                Ok(Value::map((**t).clone(), out))
            }
            Type::Object(o) => {
                let mut attrs = o.attrs().iter().peekable();
                let mut out = Vec::with_capacity(o.attrs().len());
                loop {
                    let next = attrs.peek().map(|(k, _)| k.as_str());
                    let name = match a.next_key_seed(KeySeed(next))? {
                        None => break,
                        Some(Key::Next) => None,
                        Some(Key::Other(name)) => Some(name),
                    };
                    if let Some(name) = name {
                        if name == NUMBER_TOKEN {
                            return Err(mismatch());
                        }
                        if o.attr(&name).is_none() {
                            if self.extra == Extra::Drop {
                                a.next_value::<serde::de::IgnoredAny>()?;
                                continue;
                            }
                            return Err(mismatch());
                        }
                        // An attribute further on: those before it are
                        // absent. One already passed (out of order or
                        // repeated) is left to the tree reading.
                        while let Some((k, t)) = attrs.next_if(|(k, _)| k.as_str() < name.as_str())
                        {
                            out.push((k.clone(), Value::null(t.clone())));
                        }
                        if attrs.peek().is_none_or(|(k, _)| **k != name) {
                            return Err(mismatch());
                        }
                    }
                    let (k, t) = attrs.next().ok_or_else(mismatch)?;
                    out.push((k.clone(), a.next_value_seed(Seed::inner(t))?));
                }
                for (k, t) in attrs {
                    out.push((k.clone(), Value::null(t.clone())));
                }
                Ok(Value::object_typed_of(self.ty, Entries::from_sorted(out)))
            }
            _ => Err(mismatch()),
        }
    }
}

/// An object's key, compared with the attribute expected next so that the
/// usual case (keys in the type's order) copies nothing.
struct KeySeed<'a>(Option<&'a str>);

enum Key {
    Next,
    Other(String),
}

impl<'de> serde::de::DeserializeSeed<'de> for KeySeed<'_> {
    type Value = Key;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Key, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> serde::de::Visitor<'de> for KeySeed<'_> {
    type Value = Key;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an attribute name")
    }

    fn visit_str<E>(self, s: &str) -> Result<Key, E> {
        Ok(if self.0 == Some(s) {
            Key::Next
        } else {
            Key::Other(s.to_owned())
        })
    }
}

/// Reads JSON bytes of type `ty` through the JSON tree.
fn decode_bytes_tree(bytes: &[u8], ty: &Type) -> Result<Value, JsonError> {
    let j: Json = serde_json::from_slice(bytes).map_err(|e| JsonError {
        path: Path::root(),
        message: format!("invalid JSON: {e}"),
    })?;
    decode(&j, ty)
}

fn dec(j: &Json, ty: &Type, path: &mut Path) -> Result<Value, JsonError> {
    if j.is_null() {
        return Ok(Value::null(ty.clone()));
    }
    let wrong = |path: &Path| fail(path, format!("{} required", ty.friendly_name()));
    match (ty, j) {
        (Type::Dynamic, Json::Object(m)) => {
            let (Some(v), Some(t)) = (m.get("value"), m.get("type")) else {
                return fail(
                    path,
                    "dynamic value must be an object with \"value\" and \"type\"",
                );
            };
            if m.len() != 2 {
                return fail(path, "dynamic value must have only \"value\" and \"type\"");
            }
            let actual = typejson::from_json(t).map_err(|e| JsonError {
                path: path.clone(),
                message: e.to_string(),
            })?;
            if actual.is_dynamic() {
                return fail(path, "dynamic value must name a concrete type");
            }
            dec(v, &actual, path)
        }
        (Type::Dynamic, _) => fail(
            path,
            "dynamic value must be an object with \"value\" and \"type\"",
        ),
        (Type::String, Json::String(s)) => Ok(Value::string(s.as_str())),
        (Type::Number, Json::Number(n)) => Number::parse(&n.to_string())
            .map(Value::number)
            .or_else(|e| fail(path, e.to_string())),
        (Type::Number, Json::String(s)) => Number::parse(s)
            .map(Value::number)
            .or_else(|e| fail(path, e.to_string())),
        (Type::Bool, Json::Bool(b)) => Ok(Value::bool(*b)),
        (Type::List(t) | Type::Set(t), Json::Array(es)) => {
            let mut out = Vec::with_capacity(es.len());
            for (i, e) in es.iter().enumerate() {
                path.push(Step::Index(i as i64));
                out.push(dec(e, t, path)?);
                path.pop();
            }
            Ok(if matches!(ty, Type::List(_)) {
                Value::list((**t).clone(), out)
            } else {
                Value::set((**t).clone(), out)
            })
        }
        (Type::Tuple(ts), Json::Array(es)) => {
            if ts.len() != es.len() {
                return fail(
                    path,
                    format!(
                        "tuple of {} elements required, found {}",
                        ts.len(),
                        es.len()
                    ),
                );
            }
            let mut out = Vec::with_capacity(es.len());
            for (i, (e, t)) in es.iter().zip(ts.iter()).enumerate() {
                path.push(Step::Index(i as i64));
                out.push(dec(e, t, path)?);
                path.pop();
            }
            Ok(Value::tuple(out))
        }
        (Type::Map(t), Json::Object(m)) => {
            let mut out = BTreeMap::new();
            for (k, e) in m {
                path.push(Step::Key(k.clone()));
                out.insert(k.clone(), dec(e, t, path)?);
                path.pop();
            }
            Ok(Value::map((**t).clone(), out))
        }
        (Type::Object(o), Json::Object(m)) => {
            if let Some(extra) = m.keys().find(|k| o.attr(k).is_none()) {
                return fail(path, format!("unsupported attribute {extra:?}"));
            }
            // In the type's (sorted) order.
            let mut out = Vec::with_capacity(o.attrs().len());
            for (k, t) in o.attrs() {
                let v = match m.get(k) {
                    Some(e) => {
                        path.push(Step::Attr(k.clone()));
                        let v = dec(e, t, path)?;
                        path.pop();
                        v
                    }
                    None => Value::null(t.clone()),
                };
                out.push((k.clone(), v));
            }
            Ok(Value::object_typed_of(ty, Entries::from_sorted(out)))
        }
        _ => wrong(path),
    }
}

/// A value from JSON without a type (state JSON read without a schema):
/// objects, tuples and primitives; a number JSON cannot hold exactly is
/// a null number.
pub fn decode_loose(j: &Json) -> Value {
    match j {
        Json::Null => Value::null(Type::Dynamic),
        Json::Bool(b) => Value::bool(*b),
        Json::Number(n) => Number::parse(&n.to_string())
            .map(Value::number)
            .unwrap_or_else(|_| Value::null(Type::Number)),
        Json::String(s) => Value::string(s.as_str()),
        Json::Array(a) => Value::tuple(a.iter().map(decode_loose).collect()),
        Json::Object(m) => Value::object(
            m.iter()
                .map(|(k, v)| (k.clone(), decode_loose(v)))
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_loose_cases() {
        #[track_caller]
        fn check(case: &str, json: &str, want: Value) {
            let j: Json = serde_json::from_str(json).unwrap();
            assert_eq!(decode_loose(&j), want, "case {case}");
        }
        check("null_is_dynamic", "null", Value::null(Type::Dynamic));
        check("bool", "true", Value::bool(true));
        check(
            "number",
            "1.5",
            Value::number(Number::parse("1.5").unwrap()),
        );
        check("string", "\"x\"", Value::string("x"));
        check(
            "array_is_a_tuple",
            "[1, \"a\"]",
            Value::tuple(vec![Value::number(1), Value::string("a")]),
        );
        check(
            "object_is_an_object",
            "{\"a\": {\"b\": null}}",
            Value::object_from([("a", Value::object_from([("b", Value::null(Type::Dynamic))]))]),
        );
    }
    use crate::test_support::arb_type_and_value;
    use proptest::prelude::*;

    fn n(x: &str) -> Value {
        Value::number(Number::parse(x).unwrap())
    }

    #[track_caller]
    fn check(v: Value, ty: Type, want: &str) {
        let got = String::from_utf8(encode_bytes(&v, &ty).unwrap()).unwrap();
        assert_eq!(got, want);
        assert_eq!(decode_bytes(want.as_bytes(), &ty).unwrap(), v);
    }

    #[track_caller]
    fn check_err(json: &str, ty: Type, want: &str) {
        let err = decode_bytes(json.as_bytes(), &ty).unwrap_err();
        assert_eq!(err.to_string(), want);
    }

    #[test]
    fn encoding_errors_name_their_path() {
        let obj = |attrs: &[(&str, Type)]| Type::object(attrs.iter().cloned());
        let unknown = Value::unknown(Type::String);
        let cases: Vec<(&str, Value, Type, &str)> = vec![
            (
                "unknown at the root",
                unknown.clone(),
                Type::String,
                "value is not known",
            ),
            (
                "unknown in a list in an object",
                Value::object_from([(
                    "a",
                    Value::list(Type::String, vec![Value::string("x"), unknown.clone()]),
                )]),
                obj(&[("a", Type::list(Type::String))]),
                ".a[1]: value is not known",
            ),
            (
                "unknown in a map",
                Value::map(Type::String, [("k".to_string(), unknown.clone())].into()),
                Type::map(Type::String),
                "[\"k\"]: value is not known",
            ),
            (
                "missing attribute",
                Value::object_from([("a", Value::string("x"))]),
                obj(&[("a", Type::String), ("b", Type::String)]),
                "missing attribute \"b\"",
            ),
            (
                "wrong type in a tuple",
                Value::tuple(vec![Value::string("x"), Value::string("y")]),
                Type::tuple(vec![Type::String, Type::Number]),
                "[1]: a string value cannot be written as number",
            ),
            (
                "inside a dynamic value",
                Value::object_from([("d", Value::list(Type::String, vec![unknown]))]),
                obj(&[("d", Type::Dynamic)]),
                ".d[0]: value is not known",
            ),
        ];
        for (name, v, ty, want) in cases {
            let tree = encode(&v, &ty).map(|_| ()).unwrap_err().to_string();
            let text = encode_string(&v, &ty).map(|_| ()).unwrap_err().to_string();
            assert_eq!((tree.as_str(), text.as_str()), (want, want), "{name}");
        }
    }

    #[test]
    fn encodes_and_decodes() {
        check(
            n("123456789012345678901234567890.125"),
            Type::Number,
            "123456789012345678901234567890.125",
        );
        check(n("-7"), Type::Number, "-7");
        check(Value::string("a\"b"), Type::String, r#""a\"b""#);
        check(Value::null(Type::String), Type::String, "null");
        check(Value::bool(false), Type::Bool, "false");
        check(
            Value::string("x"),
            Type::Dynamic,
            r#"{"value":"x","type":"string"}"#,
        );
        check(Value::null(Type::Dynamic), Type::Dynamic, "null");
        check(
            Value::object_from([
                ("b", Value::list(Type::Number, vec![n("1")])),
                ("a", Value::null(Type::String)),
            ]),
            Type::object([("a", Type::String), ("b", Type::list(Type::Number))]),
            r#"{"a":null,"b":[1]}"#,
        );
        check(
            Value::set(Type::String, vec![Value::string("b"), Value::string("a")]),
            Type::set(Type::String),
            r#"["a","b"]"#,
        );
        check(
            Value::map(Type::Bool, [("k".into(), Value::bool(true))].into()),
            Type::map(Type::Bool),
            r#"{"k":true}"#,
        );
        check(
            Value::tuple(vec![Value::bool(true), n("2.5")]),
            Type::tuple(vec![Type::Bool, Type::Number]),
            "[true,2.5]",
        );
    }

    #[test]
    fn decode_forms_and_errors() {
        assert_eq!(
            decode_bytes(br#""12.5""#, &Type::Number).unwrap(),
            n("12.5")
        );
        assert_eq!(
            decode_bytes(br#"{}"#, &Type::object([("a", Type::String)])).unwrap(),
            Value::object_from([("a", Value::null(Type::String))])
        );
        check_err(
            r#"{"a":1,"z":2}"#,
            Type::object([("a", Type::Number)]),
            "unsupported attribute \"z\"",
        );
        check_err(
            r#"{"a":"x"}"#,
            Type::object([("a", Type::Number)]),
            ".a: \"x\" is not a valid number",
        );
        check_err(r#"[1,"x"]"#, Type::list(Type::Bool), "[0]: bool required");
        check_err(
            r#"{"value":1}"#,
            Type::Dynamic,
            "dynamic value must be an object with \"value\" and \"type\"",
        );
        check_err(
            r#"[1,2"#,
            Type::list(Type::Number),
            "invalid JSON: EOF while parsing a list at line 1 column 4",
        );
        check_err(
            r#"[1]"#,
            Type::tuple(vec![]),
            "tuple of 0 elements required, found 1",
        );
    }

    #[test]
    fn unknowns_and_infinities_are_refused() {
        let v = Value::object_from([("a", Value::unknown(Type::String))]);
        assert_eq!(
            encode(&v, v.ty()).unwrap_err().to_string(),
            ".a: value is not known"
        );
        assert_eq!(
            encode(&Value::number(Number::PosInfinity), &Type::Number)
                .unwrap_err()
                .to_string(),
            "Infinity cannot be written as JSON"
        );
    }

    /// The direct reading against the tree reading: each case's text is
    /// read both ways, and the direct one either declines (`direct` false)
    /// or gives exactly the tree's value. With [`Extra::Drop`], the tree
    /// reads the text with the type's extra top-level attributes removed.
    #[test]
    fn direct_reading_agrees_with_the_tree() {
        #[track_caller]
        fn check(case: &str, text: &str, ty: Type, extra: Extra, direct: bool) {
            let mut tree: Result<Json, _> = serde_json::from_str(text);
            if let (Extra::Drop, Ok(Json::Object(m)), Type::Object(o)) = (extra, &mut tree, &ty) {
                m.retain(|k, _| o.attr(k).is_some());
            }
            let tree = tree.ok().and_then(|j| decode(&j, &ty).ok());
            let got = decode_bytes_direct(text.as_bytes(), &ty, extra);
            assert_eq!(got.is_some(), direct, "case {case}: direct reading taken");
            if let Some(v) = got {
                assert_eq!(Some(v), tree, "case {case}");
            }
            if extra == Extra::Refuse {
                assert_eq!(decode_bytes(text.as_bytes(), &ty).ok(), tree, "case {case}");
            }
        }
        let abc = Type::object([
            ("a", Type::String),
            ("b", Type::list(Type::Number)),
            ("c", Type::Bool),
        ]);
        let (r, d) = (Extra::Refuse, Extra::Drop);
        check(
            "in_order",
            r#"{"a":"x","b":[1,2.5],"c":true}"#,
            abc.clone(),
            r,
            true,
        );
        check(
            "absent_between",
            r#"{"a":"x","c":false}"#,
            abc.clone(),
            r,
            true,
        );
        check("absent_first", r#"{"c":false}"#, abc.clone(), r, true);
        check("empty_object", "{}", abc.clone(), r, true);
        check(
            "nulls",
            r#"{"a":null,"b":[null],"c":null}"#,
            abc.clone(),
            r,
            true,
        );
        check("null_object", "null", abc.clone(), r, true);
        check(
            "spaces",
            " { \"a\" : \"x\" , \"b\" : [ ] } ",
            abc.clone(),
            r,
            true,
        );
        check("escaped_key", r#"{"\u0061":"x"}"#, abc.clone(), r, true);
        check(
            "escaped_string",
            r#"{"a":"\"\u00e9\n"}"#,
            abc.clone(),
            r,
            true,
        );
        check(
            "out_of_order",
            r#"{"b":[1],"a":"x"}"#,
            abc.clone(),
            r,
            false,
        );
        check("repeated", r#"{"a":"x","a":"y"}"#, abc.clone(), r, false);
        check("extra_refused", r#"{"a":"x","z":1}"#, abc.clone(), r, false);
        check(
            "extra_dropped",
            r#"{"a":"x","m":{"q":[1]},"z":1}"#,
            abc.clone(),
            d,
            true,
        );
        check(
            "extra_first_dropped",
            r#"{"0":1,"c":true}"#,
            abc.clone(),
            d,
            true,
        );
        check(
            "extra_nested_refused",
            r#"{"c":{"x":"s","y":1}}"#,
            Type::object([("c", Type::object([("x", Type::String)]))]),
            d,
            false,
        );
        check(
            "number_as_string",
            r#"{"b":["12.5",3]}"#,
            abc.clone(),
            r,
            true,
        );
        check("bad_number_string", r#"{"b":["x"]}"#, abc.clone(), r, false);
        check("number_for_string", r#"{"a":1}"#, abc.clone(), r, false);
        check("string_for_bool", r#"{"c":"true"}"#, abc.clone(), r, false);
        check("number_for_object", "1", abc.clone(), r, false);
        check("number_for_object_dropping", "1", abc.clone(), d, false);
        check("array_for_object", "[]", abc.clone(), r, false);
        check("trailing_text", r#"{"a":"x"} x"#, abc.clone(), r, false);
        check("cut_short", r#"{"a":"x""#, abc.clone(), r, false);
        check(
            "big_number",
            "123456789012345678901234567890.125",
            Type::Number,
            r,
            true,
        );
        check(
            "tuple",
            r#"[true,"s"]"#,
            Type::tuple(vec![Type::Bool, Type::String]),
            r,
            true,
        );
        check(
            "tuple_short",
            "[true]",
            Type::tuple(vec![Type::Bool, Type::String]),
            r,
            false,
        );
        check(
            "tuple_long",
            "[true,\"s\",1]",
            Type::tuple(vec![Type::Bool, Type::String]),
            r,
            false,
        );
        check("set", r#"["b","a","b"]"#, Type::set(Type::String), r, true);
        check(
            "map",
            r#"{"k":1,"j":2,"k":3}"#,
            Type::map(Type::Number),
            r,
            true,
        );
        check(
            "map_with_number_token",
            r#"{"$serde_json::private::Number":"1"}"#,
            Type::map(Type::String),
            r,
            false,
        );
        check(
            "dynamic",
            r#"{"type":"string","value":"x"}"#,
            Type::Dynamic,
            r,
            true,
        );
        check("dynamic_bad", r#"{"value":"x"}"#, Type::Dynamic, r, false);
    }

    proptest! {
        #[test]
        fn direct_reading_of_written_values((ty, v) in arb_type_and_value(false)) {
            prop_assume!(!has_infinity(&v));
            let text = encode_bytes(&v, &ty).unwrap();
            let tree = decode_bytes_tree(&text, &ty).unwrap();
            prop_assert_eq!(decode_bytes_direct(&text, &ty, Extra::Refuse), Some(tree));
        }

        #[test]
        fn known_values_round_trip((ty, v) in arb_type_and_value(false)) {
            prop_assume!(!has_infinity(&v));
            let j = encode(&v, &ty).unwrap();
            let back = decode(&j, &ty).unwrap();
            prop_assert_eq!(&back, &v.unmark_deep(), "types {} vs {}", back.ty(), v.ty());
        }

        #[test]
        fn direct_text_is_the_tree_written((ty, v) in arb_type_and_value(true)) {
            let tree = encode(&v, &ty).map(|j| j.to_string());
            let direct = encode_string(&v, &ty);
            match (tree, direct) {
                (Ok(a), Ok(b)) => prop_assert_eq!(a, b),
                (Err(a), Err(b)) => prop_assert_eq!(a.to_string(), b.to_string()),
                (a, b) => prop_assert!(false, "tree {:?} vs direct {:?}", a, b),
            }
        }
    }

    fn has_infinity(v: &Value) -> bool {
        match v.kind() {
            Kind::Number(n) => !n.is_finite(),
            Kind::Seq(es) | Kind::Set(es) => es.iter().any(has_infinity),
            Kind::Map(m) => m.values().any(has_infinity),
            _ => false,
        }
    }
}
