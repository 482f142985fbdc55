//! Types of the value model: primitives, collections, structural types and
//! `dynamic`, plus the small amount of type algebra the rest of terrane needs
//! (element types, attribute lookup, conformance between types).
//!
//! Types are cheap to clone: every composite type holds its parts behind an
//! `Arc`, so passing a type around never copies a tree.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;

/// The attribute types of an object type, plus the names of the attributes
/// that are optional in a *type constraint* (`optional(...)` in
/// configuration). Wire and state types never carry optional markers.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Default)]
pub struct ObjectType {
    attrs: BTreeMap<String, Type>,
    optional: BTreeSet<String>,
}

impl ObjectType {
    /// An object type with no optional attributes.
    pub fn new(attrs: BTreeMap<String, Type>) -> ObjectType {
        ObjectType {
            attrs,
            optional: BTreeSet::new(),
        }
    }

    /// An object type with optional-attribute markers. Names in `optional`
    /// that are not attributes are dropped.
    pub fn with_optional(attrs: BTreeMap<String, Type>, optional: BTreeSet<String>) -> ObjectType {
        let optional = optional
            .into_iter()
            .filter(|n| attrs.contains_key(n))
            .collect();
        ObjectType { attrs, optional }
    }

    pub fn attrs(&self) -> &BTreeMap<String, Type> {
        &self.attrs
    }

    pub fn optional(&self) -> &BTreeSet<String> {
        &self.optional
    }

    pub fn attr(&self, name: &str) -> Option<&Type> {
        self.attrs.get(name)
    }

    pub fn is_optional(&self, name: &str) -> bool {
        self.optional.contains(name)
    }
}

/// A type of the value model.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Type {
    String,
    Number,
    Bool,
    /// The "any type" placeholder: a value whose type is decided at run time.
    Dynamic,
    List(Arc<Type>),
    Set(Arc<Type>),
    Map(Arc<Type>),
    Object(Arc<ObjectType>),
    Tuple(Arc<[Type]>),
}

impl Type {
    pub fn list(elem: Type) -> Type {
        Type::List(Arc::new(elem))
    }

    pub fn set(elem: Type) -> Type {
        Type::Set(Arc::new(elem))
    }

    pub fn map(elem: Type) -> Type {
        Type::Map(Arc::new(elem))
    }

    pub fn tuple(elems: Vec<Type>) -> Type {
        Type::Tuple(elems.into())
    }

    /// An object type from `(name, type)` pairs, with no optional markers.
    pub fn object<I, S>(attrs: I) -> Type
    where
        I: IntoIterator<Item = (S, Type)>,
        S: Into<String>,
    {
        Type::Object(Arc::new(ObjectType::new(
            attrs.into_iter().map(|(k, v)| (k.into(), v)).collect(),
        )))
    }

    /// An object type with optional-attribute markers (a type constraint).
    pub fn object_with_optional<I, S>(attrs: I, optional: &[&str]) -> Type
    where
        I: IntoIterator<Item = (S, Type)>,
        S: Into<String>,
    {
        Type::Object(Arc::new(ObjectType::with_optional(
            attrs.into_iter().map(|(k, v)| (k.into(), v)).collect(),
            optional.iter().map(|s| s.to_string()).collect(),
        )))
    }

    /// The empty object type `object({})`.
    pub fn empty_object() -> Type {
        Type::Object(Arc::new(ObjectType::default()))
    }

    pub fn is_primitive(&self) -> bool {
        matches!(self, Type::String | Type::Number | Type::Bool)
    }

    pub fn is_collection(&self) -> bool {
        matches!(self, Type::List(_) | Type::Set(_) | Type::Map(_))
    }

    pub fn is_dynamic(&self) -> bool {
        matches!(self, Type::Dynamic)
    }

    /// The element type of a list, set or map.
    pub fn element_type(&self) -> Option<&Type> {
        match self {
            Type::List(t) | Type::Set(t) | Type::Map(t) => Some(t),
            _ => None,
        }
    }

    pub fn object_type(&self) -> Option<&ObjectType> {
        match self {
            Type::Object(o) => Some(o),
            _ => None,
        }
    }

    pub fn tuple_types(&self) -> Option<&[Type]> {
        match self {
            Type::Tuple(t) => Some(t),
            _ => None,
        }
    }

    /// The type of attribute `name` of an object type.
    pub fn attr_type(&self, name: &str) -> Option<&Type> {
        self.object_type().and_then(|o| o.attr(name))
    }

    /// Whether the type contains `dynamic` anywhere.
    pub fn has_dynamic(&self) -> bool {
        match self {
            Type::Dynamic => true,
            Type::String | Type::Number | Type::Bool => false,
            Type::List(t) | Type::Set(t) | Type::Map(t) => t.has_dynamic(),
            Type::Object(o) => o.attrs.values().any(Type::has_dynamic),
            Type::Tuple(ts) => ts.iter().any(Type::has_dynamic),
        }
    }

    /// Whether the type carries optional-attribute markers anywhere.
    pub fn has_optional_markers(&self) -> bool {
        match self {
            Type::Dynamic | Type::String | Type::Number | Type::Bool => false,
            Type::List(t) | Type::Set(t) | Type::Map(t) => t.has_optional_markers(),
            Type::Object(o) => {
                !o.optional.is_empty() || o.attrs.values().any(Type::has_optional_markers)
            }
            Type::Tuple(ts) => ts.iter().any(Type::has_optional_markers),
        }
    }

    /// The same type with every optional-attribute marker removed: the wire
    /// and state type of a configuration type constraint.
    pub fn without_optional_markers(&self) -> Type {
        if !self.has_optional_markers() {
            return self.clone();
        }
        match self {
            Type::List(t) => Type::list(t.without_optional_markers()),
            Type::Set(t) => Type::set(t.without_optional_markers()),
            Type::Map(t) => Type::map(t.without_optional_markers()),
            Type::Object(o) => Type::Object(Arc::new(ObjectType::new(
                o.attrs
                    .iter()
                    .map(|(k, v)| (k.clone(), v.without_optional_markers()))
                    .collect(),
            ))),
            Type::Tuple(ts) => Type::tuple(ts.iter().map(Type::without_optional_markers).collect()),
            other => other.clone(),
        }
    }

    /// Whether a value of type `self` is acceptable where `want` is expected
    /// without conversion: equal types, with `dynamic` in `want` accepting
    /// anything at that position. Optional markers are ignored.
    pub fn conforms_to(&self, want: &Type) -> bool {
        match (self, want) {
            (_, Type::Dynamic) => true,
            (Type::String, Type::String)
            | (Type::Number, Type::Number)
            | (Type::Bool, Type::Bool) => true,
            (Type::List(a), Type::List(b))
            | (Type::Set(a), Type::Set(b))
            | (Type::Map(a), Type::Map(b)) => a.conforms_to(b),
            (Type::Object(a), Type::Object(b)) => {
                // Both sorted by name: the same names pair up in order.
                a.attrs.len() == b.attrs.len()
                    && a.attrs
                        .iter()
                        .zip(&b.attrs)
                        .all(|((k, t), (n, w))| k == n && t.conforms_to(w))
            }
            (Type::Tuple(a), Type::Tuple(b)) => {
                a.len() == b.len() && a.iter().zip(b.iter()).all(|(x, y)| x.conforms_to(y))
            }
            _ => false,
        }
    }

    /// A short friendly name, as used in error messages: `string`,
    /// `list of string`, `object`, ...
    pub fn friendly_name(&self) -> String {
        match self {
            Type::String => "string".into(),
            Type::Number => "number".into(),
            Type::Bool => "bool".into(),
            Type::Dynamic => "dynamic".into(),
            Type::List(t) => format!("list of {}", t.friendly_name()),
            Type::Set(t) => format!("set of {}", t.friendly_name()),
            Type::Map(t) => format!("map of {}", t.friendly_name()),
            Type::Object(_) => "object".into(),
            Type::Tuple(_) => "tuple".into(),
        }
    }
}

/// Renders a type the way Terraform writes type constraints:
/// `list(object({a=string, b=optional(number)}))`.
impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::String => f.write_str("string"),
            Type::Number => f.write_str("number"),
            Type::Bool => f.write_str("bool"),
            Type::Dynamic => f.write_str("any"),
            Type::List(t) => write!(f, "list({t})"),
            Type::Set(t) => write!(f, "set({t})"),
            Type::Map(t) => write!(f, "map({t})"),
            Type::Object(o) => {
                f.write_str("object({")?;
                for (i, (k, t)) in o.attrs.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    if o.is_optional(k) {
                        write!(f, "{k}=optional({t})")?;
                    } else {
                        write!(f, "{k}={t}")?;
                    }
                }
                f.write_str("})")
            }
            Type::Tuple(ts) => {
                f.write_str("tuple([")?;
                for (i, t) in ts.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{t}")?;
                }
                f.write_str("])")
            }
        }
    }
}

impl fmt::Debug for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::Type;

    #[test]
    fn conformance() {
        fn check(case: &str, have: Type, want: Type, conforms: bool) {
            assert_eq!(have.conforms_to(&want), conforms, "{case}");
        }
        let ab = Type::object([("a", Type::String), ("b", Type::Number)]);
        check("the same object", ab.clone(), ab.clone(), true);
        check(
            "as many attributes, one named differently",
            Type::object([("a", Type::String), ("c", Type::Number)]),
            ab.clone(),
            false,
        );
        check(
            "one attribute's type differs",
            Type::object([("a", Type::String), ("b", Type::Bool)]),
            ab.clone(),
            false,
        );
        check(
            "fewer attributes",
            Type::object([("a", Type::String)]),
            ab.clone(),
            false,
        );
        check(
            "an attribute the wanted type leaves dynamic",
            ab.clone(),
            Type::object([("a", Type::String), ("b", Type::Dynamic)]),
            true,
        );
        check(
            "nested objects, inner names differ",
            Type::list(Type::object([("x", ab.clone())])),
            Type::list(Type::object([(
                "x",
                Type::object([("a", Type::String), ("z", Type::Number)]),
            )])),
            false,
        );
        check("anything conforms to dynamic", ab, Type::Dynamic, true);
    }
}
