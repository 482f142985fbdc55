//! Reading configuration and state objects, writing state objects, and
//! the pieces every resource shares: the identifier validator, the pool
//! lookup and the object id kept in private state.

use crate::pool::Pool;
use crate::sql::identifier_problem;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use terrane_sdk::validate::Validator;
use terrane_sdk::{Diagnostic, Diagnostics, Path, Type, Value};

pub fn s(v: &Value, name: &str) -> Option<String> {
    v.get_attr(name).and_then(Value::as_str).map(str::to_string)
}

pub fn b(v: &Value, name: &str) -> Option<bool> {
    v.get_attr(name).and_then(Value::as_bool)
}

pub fn n(v: &Value, name: &str) -> Option<i64> {
    v.get_attr(name)
        .and_then(Value::as_number)
        .and_then(|x| x.to_i64())
}

/// A set or list of strings (unknown or null: `None`).
pub fn strings(v: &Value, name: &str) -> Option<Vec<String>> {
    let a = v.get_attr(name)?;
    if a.is_null() || !a.is_wholly_known() {
        return None;
    }
    Some(
        a.elements()?
            .iter()
            .filter_map(|e| e.as_str().map(str::to_string))
            .collect(),
    )
}

pub fn string_set(v: &Value, name: &str) -> Option<BTreeSet<String>> {
    strings(v, name).map(|x| x.into_iter().collect())
}

pub fn str_value(x: Option<&str>) -> Value {
    x.map(Value::string)
        .unwrap_or_else(|| Value::null(Type::String))
}

pub fn set_value<'a>(xs: impl IntoIterator<Item = &'a String>) -> Value {
    Value::set(
        Type::String,
        xs.into_iter().map(|x| Value::string(x.as_str())).collect(),
    )
}

pub fn list_value<'a>(xs: impl IntoIterator<Item = &'a String>) -> Value {
    Value::list(
        Type::String,
        xs.into_iter().map(|x| Value::string(x.as_str())).collect(),
    )
}

/// `base` with the given attributes replaced.
pub fn with(base: &Value, attrs: impl IntoIterator<Item = (&'static str, Value)>) -> Value {
    let mut m: BTreeMap<String, Value> = base.entries().map(|e| e.to_map()).unwrap_or_default();
    for (k, v) in attrs {
        m.insert(k.to_string(), v);
    }
    Value::object(m)
}

/// An object of the schema's type with every attribute null but `attrs`.
pub fn typed_object(
    schema: &terrane_sdk::ResourceSchema,
    attrs: impl IntoIterator<Item = (&'static str, Value)>,
) -> Value {
    let block = schema.block_schema();
    let mut m: BTreeMap<String, Value> = block
        .empty_value()
        .entries()
        .map(|e| e.to_map())
        .unwrap_or_default();
    for (k, v) in attrs {
        m.insert(k.to_string(), v);
    }
    Value::object_typed(&block.implied_type(), m)
}

/// The pool `configure` made, or a clear error if there is none.
pub fn pool_of(data: &Option<Arc<Pool>>) -> Result<Pool, Diagnostics> {
    data.as_deref().cloned().ok_or_else(|| {
        Diagnostics::error("Provider not configured", "The postgresql provider has no connection settings yet (its configuration may depend on values known only after apply).")
    })
}

/// The object id (`oid`) kept in private state, to follow renames.
pub fn oid_of(private: &[u8]) -> Option<u32> {
    std::str::from_utf8(private)
        .ok()?
        .strip_prefix("oid:")?
        .parse()
        .ok()
}

pub fn oid_private(oid: u32) -> Vec<u8> {
    format!("oid:{oid}").into_bytes()
}

/// Names (strings, or sets/lists of strings) PostgreSQL will keep as given.
pub struct Identifier;

impl Validator for Identifier {
    fn check(&self, path: &Path, v: &Value, _config: &Value) -> Vec<Diagnostic> {
        if !v.is_wholly_known() || v.is_null() {
            return Vec::new();
        }
        let names: Vec<&str> = match v.elements() {
            Some(es) => es.iter().filter_map(Value::as_str).collect(),
            None => v.as_str().into_iter().collect(),
        };
        names
            .into_iter()
            .filter_map(|name| identifier_problem(name).map(|p| (name, p)))
            .map(|(name, p)| {
                Diagnostic::error("Invalid PostgreSQL name", format!("{name:?} {p}."), None)
                    .at_path(path.clone())
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(case: &str, v: Value, errors: usize) {
        let got = Identifier.check(&Path::root().attr("name"), &v, &Value::null(Type::Dynamic));
        assert_eq!(got.len(), errors, "case {case}: {got:?}");
    }

    #[test]
    fn identifiers() {
        check("plain", Value::string("app_owner"), 0);
        check("mixed_case_and_spaces_ok", Value::string("App Owner"), 0);
        check("empty", Value::string(""), 1);
        check("too_long", Value::string("x".repeat(64)), 1);
        check(
            "set_element",
            Value::set(Type::String, vec![Value::string("ok"), Value::string("")]),
            1,
        );
        check("unknown_skipped", Value::unknown(Type::String), 0);
        assert_eq!(
            oid_of(&oid_private(16384)),
            Some(16384),
            "case oid_round_trip"
        );
        assert_eq!(oid_of(b""), None, "case no_private");
    }
}
