//! Implied types and empty values of schemas.
//!
//! A block is an object with one attribute per attribute and per block
//! type. SINGLE blocks are a nullable object, GROUP blocks an object that is
//! never null, LIST/SET/MAP blocks a list/set/map of objects — except that a
//! LIST or MAP block containing a `dynamic` attribute is typed `dynamic`
//! (its values are tuples or objects, since elements may differ in type).
//! Absent LIST/SET/MAP blocks are empty collections, never null.

use crate::{AttrType, Attribute, Block, BlockNesting, NestedBlock, NestedObject, ObjectNesting};
use std::collections::BTreeMap;
use terrane_value::{Type, Value};

impl Block {
    /// The object type of values of this block.
    pub fn implied_type(&self) -> Type {
        let mut attrs: BTreeMap<String, Type> = BTreeMap::new();
        for (name, a) in &self.attributes {
            attrs.insert(name.clone(), a.implied_type());
        }
        for (name, b) in &self.block_types {
            attrs.insert(name.clone(), b.implied_type());
        }
        Type::object(attrs)
    }

    /// The value of an empty block: attributes null, SINGLE blocks null,
    /// GROUP blocks recursively empty, other blocks empty collections.
    pub fn empty_value(&self) -> Value {
        let mut attrs = BTreeMap::new();
        for (name, a) in &self.attributes {
            attrs.insert(name.clone(), Value::null(a.implied_type()));
        }
        for (name, b) in &self.block_types {
            attrs.insert(name.clone(), b.empty_value());
        }
        Value::object(attrs)
    }
}

impl Attribute {
    /// The wire type of the attribute (optional markers removed).
    pub fn implied_type(&self) -> Type {
        match &self.ty {
            AttrType::Type(t) => t.without_optional_markers(),
            AttrType::Nested(o) => o.implied_type(),
        }
    }
}

impl NestedObject {
    /// The object type of one element.
    pub fn object_type(&self) -> Type {
        Type::object(
            self.attributes
                .iter()
                .map(|(k, a)| (k.clone(), a.implied_type())),
        )
    }

    /// The type of the whole attribute value.
    pub fn implied_type(&self) -> Type {
        self.nest(self.object_type())
    }

    /// The type configuration values are converted to (Terraform's
    /// specType): as [`NestedObject::implied_type`], with each optional or
    /// computed attribute marked optional at every level, so that a
    /// configuration may leave it out (it becomes null).
    pub fn spec_type(&self) -> Type {
        let attrs = self.attributes.iter().map(|(k, a)| {
            let t = match &a.ty {
                AttrType::Nested(o) => o.spec_type(),
                AttrType::Type(t) => t.without_optional_markers(),
            };
            (k.clone(), t)
        });
        let optional: Vec<&str> = self
            .attributes
            .iter()
            .filter(|(_, a)| a.optional || a.computed)
            .map(|(k, _)| k.as_str())
            .collect();
        self.nest(Type::object_with_optional(attrs, &optional))
    }

    fn nest(&self, obj: Type) -> Type {
        match self.nesting {
            ObjectNesting::Single => obj,
            ObjectNesting::List => Type::list(obj),
            ObjectNesting::Set => Type::set(obj),
            ObjectNesting::Map => Type::map(obj),
        }
    }
}

impl NestedBlock {
    /// Whether values of this block are tuples or objects rather than lists
    /// or maps (a LIST or MAP block with a `dynamic` attribute inside).
    pub fn is_dynamic_collection(&self) -> bool {
        matches!(self.nesting, BlockNesting::List | BlockNesting::Map) && self.block.has_dynamic()
    }

    pub fn implied_type(&self) -> Type {
        if self.is_dynamic_collection() {
            return Type::Dynamic;
        }
        let obj = self.block.implied_type();
        match self.nesting {
            BlockNesting::Single | BlockNesting::Group => obj,
            BlockNesting::List => Type::list(obj),
            BlockNesting::Set => Type::set(obj),
            BlockNesting::Map => Type::map(obj),
        }
    }

    /// The value of this block type when no block is written.
    pub fn empty_value(&self) -> Value {
        match self.nesting {
            BlockNesting::Single => Value::null(self.block.implied_type()),
            BlockNesting::Group => self.block.empty_value(),
            BlockNesting::List if self.is_dynamic_collection() => Value::tuple(Vec::new()),
            BlockNesting::Map if self.is_dynamic_collection() => Value::object(BTreeMap::new()),
            BlockNesting::List => Value::list(self.block.implied_type(), Vec::new()),
            BlockNesting::Set => Value::set(self.block.implied_type(), Vec::new()),
            BlockNesting::Map => Value::map(self.block.implied_type(), BTreeMap::new()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(block: Block, want_ty: &str, want_empty: &str) {
        assert_eq!(block.implied_type().to_string(), want_ty);
        let empty = block.empty_value();
        assert_eq!(empty.to_string(), want_empty);
        assert!(
            empty.ty().conforms_to(&block.implied_type()),
            "empty value {empty:?} does not conform"
        );
    }

    #[test]
    fn implied_types_and_empty_values() {
        check(Block::new(), "object({})", "{}");
        check(
            Block::new()
                .attr("a", Attribute::required(Type::String))
                .attr("n", Attribute::computed(Type::Number)),
            "object({a=string, n=number})",
            "{ a = null, n = null }",
        );
        let inner = Block::new().attr("x", Attribute::optional(Type::Bool));
        check(
            Block::new()
                .block("s", NestedBlock::single(inner.clone()))
                .block("g", NestedBlock::group(inner.clone()))
                .block("l", NestedBlock::list(inner.clone()))
                .block("st", NestedBlock::set(inner.clone()))
                .block("m", NestedBlock::map(inner.clone())),
            "object({g=object({x=bool}), l=list(object({x=bool})), m=map(object({x=bool})), s=object({x=bool}), st=set(object({x=bool}))})",
            "{ g = { x = null }, l = [], m = {}, s = null, st = [] }",
        );
        let dynamic = Block::new().attr("d", Attribute::optional(Type::Dynamic));
        check(
            Block::new()
                .block("l", NestedBlock::list(dynamic.clone()))
                .block("m", NestedBlock::map(dynamic)),
            "object({l=any, m=any})",
            "{ l = [], m = {} }",
        );
        let nested = Attribute::nested(
            Attribute::optional(Type::Dynamic),
            ObjectNesting::List,
            [(
                "p".to_string(),
                Attribute::required(Type::object_with_optional([("q", Type::Number)], &["q"])),
            )]
            .into(),
        );
        check(
            Block::new().attr("na", nested),
            "object({na=list(object({p=object({q=number})}))})",
            "{ na = null }",
        );
    }

    /// A configuration may leave out a nested attribute that is optional
    /// or computed, at every level (Terraform's specType); a required one
    /// it may not.
    #[test]
    fn nested_spec_type_lets_optional_attributes_be_left_out() {
        use terrane_value::convert::convert;
        let inner = Attribute::nested(
            Attribute::optional(Type::Dynamic),
            ObjectNesting::Single,
            [("x".to_string(), Attribute::optional(Type::String))].into(),
        );
        let attr = Attribute::nested(
            Attribute::optional(Type::Dynamic),
            ObjectNesting::List,
            [
                ("a".to_string(), Attribute::required(Type::Number)),
                ("b".to_string(), Attribute::optional(Type::String)),
                ("c".to_string(), Attribute::computed(Type::String)),
                ("n".to_string(), inner),
            ]
            .into(),
        );
        let AttrType::Nested(o) = &attr.ty else {
            unreachable!()
        };
        let obj = |attrs: &[(&str, Value)]| {
            Value::object(
                attrs
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.clone()))
                    .collect(),
            )
        };
        // (case, one element as written, the element converted or None)
        let cases: Vec<(&str, Value, Option<&str>)> = vec![
            (
                "only_required",
                obj(&[("a", Value::number(1))]),
                Some("{ a = 1, b = null, c = null, n = null }"),
            ),
            (
                "inner_left_out",
                obj(&[("a", Value::number(1)), ("n", obj(&[]))]),
                Some("{ a = 1, b = null, c = null, n = { x = null } }"),
            ),
            ("required_missing", obj(&[("b", Value::string("s"))]), None),
        ];
        for (name, elem, want) in cases {
            let got = convert(&Value::tuple(vec![elem]), &o.spec_type());
            match (got, want) {
                (Ok(v), Some(w)) => {
                    assert_eq!(v.ty(), &attr.implied_type(), "case {name}");
                    assert_eq!(v.to_string(), format!("[{w}]"), "case {name}");
                }
                (Err(_), None) => {}
                (got, want) => panic!("case {name}: got {got:?}, want {want:?}"),
            }
        }
    }
}
