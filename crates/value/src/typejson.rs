//! Type-constraint JSON: the form in which the protocol carries types
//! (`Attribute.type`, function parameters, dynamic-value wrappers) and state
//! files record output types.
//!
//! `"string"`, `"number"`, `"bool"`, `"dynamic"`; `["list",T]`, `["set",T]`,
//! `["map",T]`; `["object",{"a":T}]`, with a third element listing optional
//! attribute names in sorted order when there are any; `["tuple",[T..]]`.

use crate::{ObjectType, Type};
use serde_json::Value as Json;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// Why JSON is not a valid type constraint.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid type constraint JSON: {0}")]
pub struct TypeJsonError(pub String);

/// The JSON form of `ty`.
pub fn to_json(ty: &Type) -> Json {
    match ty {
        Type::String => Json::from("string"),
        Type::Number => Json::from("number"),
        Type::Bool => Json::from("bool"),
        Type::Dynamic => Json::from("dynamic"),
        Type::List(t) => Json::Array(vec!["list".into(), to_json(t)]),
        Type::Set(t) => Json::Array(vec!["set".into(), to_json(t)]),
        Type::Map(t) => Json::Array(vec!["map".into(), to_json(t)]),
        Type::Object(o) => {
            let attrs: serde_json::Map<String, Json> = o
                .attrs()
                .iter()
                .map(|(k, t)| (k.clone(), to_json(t)))
                .collect();
            let mut parts = vec![Json::from("object"), Json::Object(attrs)];
            if !o.optional().is_empty() {
                parts.push(Json::Array(
                    o.optional()
                        .iter()
                        .map(|n| Json::from(n.as_str()))
                        .collect(),
                ));
            }
            Json::Array(parts)
        }
        Type::Tuple(ts) => Json::Array(vec![
            "tuple".into(),
            Json::Array(ts.iter().map(to_json).collect()),
        ]),
    }
}

/// Compact JSON bytes of `ty`, as sent on the wire.
pub fn to_bytes(ty: &Type) -> Vec<u8> {
    // Serializing a serde_json::Value cannot fail.
    serde_json::to_vec(&to_json(ty)).unwrap_or_default()
}

/// Parses JSON bytes into a type.
pub fn from_bytes(bytes: &[u8]) -> Result<Type, TypeJsonError> {
    let json: Json = serde_json::from_slice(bytes).map_err(|e| TypeJsonError(e.to_string()))?;
    from_json(&json)
}

/// Parses a JSON value into a type.
pub fn from_json(json: &Json) -> Result<Type, TypeJsonError> {
    parse(json, 0)
}

const MAX_DEPTH: usize = 200;

fn parse(json: &Json, depth: usize) -> Result<Type, TypeJsonError> {
    let err = |m: String| Err(TypeJsonError(m));
    if depth > MAX_DEPTH {
        return err("type is nested too deeply".into());
    }
    match json {
        Json::String(s) => match s.as_str() {
            "string" => Ok(Type::String),
            "number" => Ok(Type::Number),
            "bool" => Ok(Type::Bool),
            "dynamic" => Ok(Type::Dynamic),
            other => err(format!("unknown primitive type {other:?}")),
        },
        Json::Array(parts) => {
            let Some(Json::String(kind)) = parts.first() else {
                return err("a composite type must start with its kind name".into());
            };
            match (kind.as_str(), parts.len()) {
                ("list", 2) => Ok(Type::list(parse(&parts[1], depth + 1)?)),
                ("set", 2) => Ok(Type::set(parse(&parts[1], depth + 1)?)),
                ("map", 2) => Ok(Type::map(parse(&parts[1], depth + 1)?)),
                ("tuple", 2) => {
                    let Json::Array(elems) = &parts[1] else {
                        return err("tuple element types must be an array".into());
                    };
                    Ok(Type::tuple(
                        elems
                            .iter()
                            .map(|e| parse(e, depth + 1))
                            .collect::<Result<_, _>>()?,
                    ))
                }
                ("object", 2 | 3) => {
                    let Json::Object(attrs) = &parts[1] else {
                        return err("object attribute types must be a JSON object".into());
                    };
                    let mut out = BTreeMap::new();
                    for (k, v) in attrs {
                        out.insert(k.clone(), parse(v, depth + 1)?);
                    }
                    let mut optional = BTreeSet::new();
                    if let Some(opt) = parts.get(2) {
                        let Json::Array(names) = opt else {
                            return err("optional attribute names must be an array".into());
                        };
                        for n in names {
                            let Json::String(n) = n else {
                                return err("optional attribute names must be strings".into());
                            };
                            if !out.contains_key(n) {
                                return err(format!(
                                    "optional attribute {n:?} is not an attribute of the object"
                                ));
                            }
                            optional.insert(n.clone());
                        }
                    }
                    Ok(Type::Object(Arc::new(ObjectType::with_optional(
                        out, optional,
                    ))))
                }
                (k @ ("list" | "set" | "map" | "tuple" | "object"), n) => {
                    err(format!("{k} type has {n} parts"))
                }
                (other, _) => err(format!("unknown type kind {other:?}")),
            }
        }
        other => err(format!("a type must be a string or an array, not {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(json: &str, want: Result<Type, &str>) {
        let got = from_bytes(json.as_bytes());
        match (&got, &want) {
            (Ok(g), Ok(w)) => {
                assert_eq!(g, w);
                assert_eq!(String::from_utf8(to_bytes(g)).unwrap(), json, "re-encoding");
            }
            (Err(e), Err(w)) => assert!(e.to_string().contains(w), "{e} does not contain {w}"),
            _ => panic!("{json}: got {got:?}, want {want:?}"),
        }
    }

    #[test]
    fn type_json() {
        check(r#""string""#, Ok(Type::String));
        check(r#""number""#, Ok(Type::Number));
        check(r#""bool""#, Ok(Type::Bool));
        check(r#""dynamic""#, Ok(Type::Dynamic));
        check(r#"["list","string"]"#, Ok(Type::list(Type::String)));
        check(
            r#"["set",["map","bool"]]"#,
            Ok(Type::set(Type::map(Type::Bool))),
        );
        check(
            r#"["object",{"a":"string","b":"number"}]"#,
            Ok(Type::object([("a", Type::String), ("b", Type::Number)])),
        );
        check(
            r#"["object",{"a":"string","b":"number"},["b"]]"#,
            Ok(Type::object_with_optional(
                [("a", Type::String), ("b", Type::Number)],
                &["b"],
            )),
        );
        check(
            r#"["tuple",["string",["list","number"]]]"#,
            Ok(Type::tuple(vec![Type::String, Type::list(Type::Number)])),
        );
        check(r#"["object",{}]"#, Ok(Type::empty_object()));
        check(r#""str""#, Err("unknown primitive type"));
        check(r#"["list"]"#, Err("list type has 1 parts"));
        check(
            r#"["object",{"a":"string"},["b"]]"#,
            Err("not an attribute"),
        );
        check(r#"["frob","string"]"#, Err("unknown type kind"));
        check(r#"3"#, Err("must be a string or an array"));
        check(r#"["list","string""#, Err("EOF"));
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let json = format!("{}\"string\"{}", "[\"list\",".repeat(100), "]".repeat(100));
        assert!(from_bytes(json.as_bytes()).is_ok());
        let json = format!("{}\"string\"{}", "[\"list\",".repeat(250), "]".repeat(250));
        assert!(from_bytes(json.as_bytes()).is_err());
    }
}
