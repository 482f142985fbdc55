//! Typed models: Rust structs for configuration, plans and state, so most
//! resources never touch raw values. `#[derive(Model)]` (re-exported from
//! terrane-sdk-derive) implements [`Model`] for a struct whose field types
//! implement [`Field`]:
//!
//! * `String`, `i64`, `f64`, `bool`, [`Value`] — a known, non-null value;
//! * `Option<T>` — null is `None`;
//! * [`Known<T>`] — unknown ("known after apply"), null or a value;
//! * `Vec<T>`, `BTreeSet<T>`, `BTreeMap<String, T>` — lists, sets, maps.
//!
//! Conversion errors are diagnostics on the attribute's path.

use crate::diag::Diagnostics;
use std::collections::{BTreeMap, BTreeSet};
use terrane_value::{Number, Path, Type, Value};

/// A struct mapped to an object value.
pub trait Model: Sized {
    /// The object type the struct maps to.
    fn object_type() -> Type;
    /// Reads the struct from an object; mismatches are diagnostics on the attribute's path.
    fn from_value(v: &Value) -> Result<Self, Diagnostics>;
    /// The struct as an object value.
    fn to_value(&self) -> Value;
}

/// A field type.
pub trait Field: Sized {
    /// The value type of the field.
    fn ty() -> Type;
    /// Reads the field from `v`, found at `path`.
    fn from_value(v: &Value, path: &Path) -> Result<Self, Diagnostics>;
    /// The field as a value.
    fn to_value(&self) -> Value;
}

/// A value that may not be known yet, or may be null.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum Known<T> {
    #[default]
    /// "Known after apply".
    Unknown,
    /// Null (not set).
    Null,
    /// A known value.
    Value(T),
}

impl<T> Known<T> {
    /// The value, if known and not null.
    pub fn value(&self) -> Option<&T> {
        match self {
            Known::Value(v) => Some(v),
            _ => None,
        }
    }
    /// Whether the value is not known yet.
    pub fn is_unknown(&self) -> bool {
        matches!(self, Known::Unknown)
    }
}

fn wrong(path: &Path, want: &str, got: &Value) -> Diagnostics {
    let what = if got.is_null() {
        "null".to_string()
    } else if !got.is_known() {
        "an unknown value".to_string()
    } else {
        format!("a {}", got.ty().friendly_name())
    };
    Diagnostics::attr_error(
        path.clone(),
        "Value Conversion Error",
        format!(
            "{path}: expected {want}, got {what}. This is a bug in the provider's model or schema."
        ),
    )
}

/// Reads attribute `key` of object `v` into a field (used by the derive).
pub fn field_from<T: Field>(v: &Value, key: &str, path: &Path) -> Result<T, Diagnostics> {
    let p = path.attr(key);
    let a = v
        .get_attr(key)
        .cloned()
        .unwrap_or_else(|| Value::null(T::ty()));
    T::from_value(&a, &p)
}

impl Field for String {
    fn ty() -> Type {
        Type::String
    }
    fn from_value(v: &Value, path: &Path) -> Result<Self, Diagnostics> {
        v.as_str()
            .map(str::to_string)
            .ok_or_else(|| wrong(path, "a string", v))
    }
    fn to_value(&self) -> Value {
        Value::string(self.as_str())
    }
}

impl Field for i64 {
    fn ty() -> Type {
        Type::Number
    }
    fn from_value(v: &Value, path: &Path) -> Result<Self, Diagnostics> {
        v.as_number()
            .and_then(Number::to_i64)
            .ok_or_else(|| wrong(path, "a whole number", v))
    }
    fn to_value(&self) -> Value {
        Value::number(*self)
    }
}

impl Field for f64 {
    fn ty() -> Type {
        Type::Number
    }
    fn from_value(v: &Value, path: &Path) -> Result<Self, Diagnostics> {
        v.as_number()
            .map(Number::to_f64_lossy)
            .ok_or_else(|| wrong(path, "a number", v))
    }
    fn to_value(&self) -> Value {
        Number::from_f64(*self)
            .map(Value::number)
            .unwrap_or_else(|| Value::null(Type::Number))
    }
}

impl Field for bool {
    fn ty() -> Type {
        Type::Bool
    }
    fn from_value(v: &Value, path: &Path) -> Result<Self, Diagnostics> {
        v.as_bool().ok_or_else(|| wrong(path, "a bool", v))
    }
    fn to_value(&self) -> Value {
        Value::bool(*self)
    }
}

impl Field for Value {
    fn ty() -> Type {
        Type::Dynamic
    }
    fn from_value(v: &Value, _path: &Path) -> Result<Self, Diagnostics> {
        Ok(v.clone())
    }
    fn to_value(&self) -> Value {
        self.clone()
    }
}

impl<T: Field> Field for Option<T> {
    fn ty() -> Type {
        T::ty()
    }
    fn from_value(v: &Value, path: &Path) -> Result<Self, Diagnostics> {
        if v.is_null() {
            Ok(None)
        } else {
            T::from_value(v, path).map(Some)
        }
    }
    fn to_value(&self) -> Value {
        match self {
            Some(x) => x.to_value(),
            None => Value::null(T::ty()),
        }
    }
}

impl<T: Field> Field for Known<T> {
    fn ty() -> Type {
        T::ty()
    }
    fn from_value(v: &Value, path: &Path) -> Result<Self, Diagnostics> {
        if !v.is_known() {
            Ok(Known::Unknown)
        } else if v.is_null() {
            Ok(Known::Null)
        } else {
            T::from_value(v, path).map(Known::Value)
        }
    }
    fn to_value(&self) -> Value {
        match self {
            Known::Unknown => Value::unknown(T::ty()),
            Known::Null => Value::null(T::ty()),
            Known::Value(x) => x.to_value(),
        }
    }
}

impl<T: Field> Field for Vec<T> {
    fn ty() -> Type {
        Type::list(T::ty())
    }
    fn from_value(v: &Value, path: &Path) -> Result<Self, Diagnostics> {
        let es = v.elements().ok_or_else(|| wrong(path, "a list", v))?;
        es.iter()
            .enumerate()
            .map(|(i, e)| T::from_value(e, &path.index(i as i64)))
            .collect()
    }
    fn to_value(&self) -> Value {
        Value::list(T::ty(), self.iter().map(Field::to_value).collect())
    }
}

impl<T: Field + Ord> Field for BTreeSet<T> {
    fn ty() -> Type {
        Type::set(T::ty())
    }
    fn from_value(v: &Value, path: &Path) -> Result<Self, Diagnostics> {
        let es = v.elements().ok_or_else(|| wrong(path, "a set", v))?;
        es.iter().map(|e| T::from_value(e, path)).collect()
    }
    fn to_value(&self) -> Value {
        Value::set(T::ty(), self.iter().map(Field::to_value).collect())
    }
}

impl<T: Field> Field for BTreeMap<String, T> {
    fn ty() -> Type {
        Type::map(T::ty())
    }
    fn from_value(v: &Value, path: &Path) -> Result<Self, Diagnostics> {
        let m = v.entries().ok_or_else(|| wrong(path, "a map", v))?;
        m.iter()
            .map(|(k, e)| T::from_value(e, &path.key(k.clone())).map(|x| (k.clone(), x)))
            .collect()
    }
    fn to_value(&self) -> Value {
        Value::map(
            T::ty(),
            self.iter()
                .map(|(k, v)| (k.clone(), v.to_value()))
                .collect(),
        )
    }
}
