//! Value constructors: the short way to build the [`Value`]s a provider
//! returns and a test compares, without reaching into terrane-value.
//!
//! ```
//! use terrane_sdk::{values, Type};
//! let v = values::object([
//!     ("key", values::string("colour")),
//!     ("count", values::number(3)),
//!     ("note", values::null(Type::String)),
//! ]);
//! assert_eq!(v.get_attr("count"), Some(&values::number(3)));
//! assert!(v.get_attr("note").unwrap().is_null());
//! ```
//!
//! Every constructor is also a method of [`Value`] (`Value::string`,
//! `Value::null`, `Value::object_from`, ...).

use crate::diag::Diagnostics;
use terrane_value::{Number, Type, Value};

/// A known string.
pub fn string(s: impl Into<std::sync::Arc<str>>) -> Value {
    Value::string(s)
}

/// A known number.
pub fn number(n: impl Into<Number>) -> Value {
    Value::number(n)
}

/// A known bool.
pub fn bool(b: bool) -> Value {
    Value::bool(b)
}

/// A null of type `ty` (a typed null: Terraform tells `null` of a string
/// from `null` of a number).
pub fn null(ty: Type) -> Value {
    Value::null(ty)
}

/// A null string.
pub fn null_string() -> Value {
    Value::null(Type::String)
}

/// A null number.
pub fn null_number() -> Value {
    Value::null(Type::Number)
}

/// A null bool.
pub fn null_bool() -> Value {
    Value::null(Type::Bool)
}

/// A value "known after apply" of type `ty`.
pub fn unknown(ty: Type) -> Value {
    Value::unknown(ty)
}

/// An object from attribute names and values.
pub fn object<'a>(attrs: impl IntoIterator<Item = (&'a str, Value)>) -> Value {
    Value::object_from(attrs.into_iter().map(|(k, v)| (k.to_string(), v)))
}

/// A list of `elem`-typed values.
pub fn list(elem: Type, elems: Vec<Value>) -> Value {
    Value::list(elem, elems)
}

/// A set of `elem`-typed values.
pub fn set(elem: Type, elems: Vec<Value>) -> Value {
    Value::set(elem, elems)
}

/// A map of `elem`-typed values.
pub fn map<'a>(elem: Type, entries: impl IntoIterator<Item = (&'a str, Value)>) -> Value {
    Value::map(
        elem,
        entries
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

/// `v` (of type `ty`) as JSON, the way Terraform writes it in state: for
/// a provider that keeps whole objects in a remote system or a file.
///
/// ```
/// use terrane_sdk::{values, Type};
/// let ty = Type::object([("n", Type::Number)]);
/// let v = values::object([("n", values::number(2))]);
/// let j = values::to_json(&v, &ty).unwrap();
/// assert_eq!(j, serde_json::json!({"n": 2}));
/// assert_eq!(values::from_json(&j, &ty).unwrap(), v);
/// ```
pub fn to_json(v: &Value, ty: &Type) -> Result<serde_json::Value, Diagnostics> {
    terrane_value::json::encode(v, ty).map_err(|e| {
        Diagnostics::error(
            "Value Conversion Error",
            format!("The value cannot be written as JSON of type {ty}: {e}"),
        )
    })
}

/// A value of type `ty` from JSON written by [`to_json`] (or by hand:
/// a mismatch is an error naming what is wrong).
pub fn from_json(j: &serde_json::Value, ty: &Type) -> Result<Value, Diagnostics> {
    terrane_value::json::decode(j, ty).map_err(|e| {
        Diagnostics::error(
            "Value Conversion Error",
            format!("The JSON does not hold a value of type {ty}: {e}"),
        )
    })
}
