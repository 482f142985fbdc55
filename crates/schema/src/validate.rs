//! Schema validation: catches the mistakes a provider author can make when
//! declaring a schema, before any user meets them, and explains each one
//! with the path of the offending attribute or block.
//!
//! Every problem is reported, not only the first.

use crate::{AttrType, Attribute, Block, BlockNesting, NestedBlock};
use std::fmt;

/// What kind of schema is validated: write-only attributes are only allowed
/// on managed resources.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchemaKind {
    ManagedResource,
    DataSource,
    Provider,
}

/// One problem with a schema, at a dotted path such as `rule.filter.prefix`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaError {
    pub path: String,
    pub message: String,
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for SchemaError {}

/// Validates a block schema; an empty result means it is valid.
pub fn validate(block: &Block, kind: SchemaKind) -> Vec<SchemaError> {
    let mut errs = Vec::new();
    validate_block(block, kind, "", &mut errs);
    errs
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}.{name}")
    }
}

/// Names must be usable in configuration: lowercase letters, digits and
/// underscores, starting with a letter or underscore.
fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase() || c == '_')
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

fn check_name(name: &str, path: &str, errs: &mut Vec<SchemaError>) {
    let push = |errs: &mut Vec<SchemaError>, m: String| {
        errs.push(SchemaError {
            path: path.to_string(),
            message: m,
        })
    };
    if name.is_empty() {
        push(errs, "name must not be empty".into());
    } else if !valid_name(name) {
        push(errs, format!("name {name:?} is invalid: use lowercase letters, digits and underscores, starting with a letter"));
    }
}

fn validate_block(block: &Block, kind: SchemaKind, prefix: &str, errs: &mut Vec<SchemaError>) {
    for (name, a) in &block.attributes {
        let path = join(prefix, name);
        check_name(name, &path, errs);
        if block.block_types.contains_key(name) {
            errs.push(SchemaError {
                path: path.clone(),
                message: format!("{name:?} is both an attribute and a block type"),
            });
        }
        validate_attribute(a, kind, &path, errs);
    }
    for (name, b) in &block.block_types {
        let path = join(prefix, name);
        check_name(name, &path, errs);
        validate_nested_block(b, kind, &path, errs);
    }
}

fn validate_attribute(a: &Attribute, kind: SchemaKind, path: &str, errs: &mut Vec<SchemaError>) {
    let mut push = |m: &str| {
        errs.push(SchemaError {
            path: path.to_string(),
            message: m.to_string(),
        })
    };
    if !a.required && !a.optional && !a.computed {
        push("must set one of required, optional or computed");
    }
    if a.required && a.optional {
        push("cannot be both required and optional");
    }
    if a.required && a.computed {
        push("cannot be both required and computed; use optional and computed for a value the provider fills in when unset");
    }
    if a.write_only && a.computed {
        push("a write-only attribute cannot be computed: its value is never stored, so the provider cannot return one");
    }
    if a.write_only && !(a.required || a.optional) {
        push("a write-only attribute must be required or optional");
    }
    if a.write_only && kind != SchemaKind::ManagedResource {
        push("write-only attributes are only allowed in managed resource schemas");
    }
    if a.deprecated && a.deprecation_message.is_empty() {
        push(
            "a deprecated attribute needs a deprecation message telling users what to use instead",
        );
    }
    match &a.ty {
        AttrType::Type(t) if t.has_optional_markers() => {
            push("attribute types must not carry optional(...) markers; use a nested object with optional attributes")
        }
        AttrType::Type(_) => {}
        AttrType::Nested(o) => {
            for (name, inner) in &o.attributes {
                let p = join(path, name);
                check_name(name, &p, errs);
                validate_attribute(inner, kind, &p, errs);
            }
            if o.nesting == crate::ObjectNesting::Set && o.attributes.values().any(Attribute::has_dynamic) {
                errs.push(SchemaError { path: path.to_string(), message: "set-nested attributes cannot contain dynamic types".into() });
            }
        }
    }
}

fn validate_nested_block(
    b: &NestedBlock,
    kind: SchemaKind,
    path: &str,
    errs: &mut Vec<SchemaError>,
) {
    let mut push = |m: String| {
        errs.push(SchemaError {
            path: path.to_string(),
            message: m,
        })
    };
    match b.nesting {
        BlockNesting::Single | BlockNesting::Group => {
            if b.min_items > 1 || b.max_items > 1 {
                push(format!(
                    "min_items and max_items cannot exceed 1 for a {:?} block",
                    b.nesting
                ));
            }
            if b.nesting == BlockNesting::Group && b.min_items > 0 {
                push("a group block is never absent, so it cannot have min_items".into());
            }
        }
        BlockNesting::Set if b.block.has_dynamic() => {
            push("set blocks cannot contain dynamic types".into())
        }
        _ => {}
    }
    if b.max_items > 0 && b.min_items > b.max_items {
        push(format!(
            "min_items ({}) is greater than max_items ({})",
            b.min_items, b.max_items
        ));
    }
    validate_block(&b.block, kind, path, errs);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ObjectNesting;
    use terrane_value::Type;

    #[track_caller]
    fn check(block: Block, kind: SchemaKind, want: &[&str]) {
        let got: Vec<String> = validate(&block, kind)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(got, want);
    }

    fn flags(required: bool, optional: bool, computed: bool) -> Attribute {
        Attribute {
            required,
            optional,
            computed,
            ..Attribute::optional(Type::String)
        }
    }

    #[test]
    fn flag_combinations() {
        let m = SchemaKind::ManagedResource;
        check(
            Block::new().attr("a", Attribute::required(Type::String)),
            m,
            &[],
        );
        check(
            Block::new().attr("a", flags(false, false, false)),
            m,
            &["a: must set one of required, optional or computed"],
        );
        check(
            Block::new().attr("a", flags(true, true, false)),
            m,
            &["a: cannot be both required and optional"],
        );
        check(
            Block::new().attr("a", flags(true, false, true)),
            m,
            &["a: cannot be both required and computed; use optional and computed for a value the provider fills in when unset"],
        );
        check(
            Block::new().attr("a", Attribute::optional_computed(Type::String).write_only()),
            m,
            &["a: a write-only attribute cannot be computed: its value is never stored, so the provider cannot return one"],
        );
        check(
            Block::new().attr("a", Attribute::computed(Type::String).write_only()),
            m,
            &[
                "a: a write-only attribute cannot be computed: its value is never stored, so the provider cannot return one",
                "a: a write-only attribute must be required or optional",
            ],
        );
        check(
            Block::new().attr("a", Attribute::optional(Type::String).write_only()),
            SchemaKind::DataSource,
            &["a: write-only attributes are only allowed in managed resource schemas"],
        );
        check(
            Block::new().attr("a", Attribute { deprecated: true, ..Attribute::optional(Type::String) }),
            m,
            &["a: a deprecated attribute needs a deprecation message telling users what to use instead"],
        );
    }

    #[test]
    fn names_and_structure() {
        let m = SchemaKind::ManagedResource;
        check(
            Block::new().attr("", Attribute::optional(Type::String)),
            m,
            &["name must not be empty"],
        );
        check(
            Block::new().attr("Bad-Name", Attribute::optional(Type::String)),
            m,
            &["Bad-Name: name \"Bad-Name\" is invalid: use lowercase letters, digits and underscores, starting with a letter"],
        );
        check(
            Block::new()
                .attr("x", Attribute::optional(Type::String))
                .block("x", NestedBlock::list(Block::new())),
            m,
            &["x: \"x\" is both an attribute and a block type"],
        );
        let dynamic = Block::new().attr("d", Attribute::optional(Type::Dynamic));
        check(
            Block::new().block("s", NestedBlock::set(dynamic.clone())),
            m,
            &["s: set blocks cannot contain dynamic types"],
        );
        check(Block::new().block("l", NestedBlock::list(dynamic)), m, &[]);
        check(
            Block::new().block("l", NestedBlock::list(Block::new()).items(3, 2)),
            m,
            &["l: min_items (3) is greater than max_items (2)"],
        );
        check(
            Block::new().block("s", NestedBlock::single(Block::new()).items(0, 2)),
            m,
            &["s: min_items and max_items cannot exceed 1 for a Single block"],
        );
        check(
            Block::new().block("g", NestedBlock::group(Block::new()).items(1, 1)),
            m,
            &["g: a group block is never absent, so it cannot have min_items"],
        );
        check(
            Block::new().block(
                "outer",
                NestedBlock::list(Block::new().attr("inner", flags(true, true, false))),
            ),
            m,
            &["outer.inner: cannot be both required and optional"],
        );
        let nested = Attribute::nested(
            Attribute::optional(Type::Dynamic),
            ObjectNesting::Set,
            [
                ("q".to_string(), Attribute::optional(Type::Dynamic)),
                ("R".to_string(), flags(false, false, false)),
            ]
            .into(),
        );
        check(
            Block::new().attr("n", nested),
            m,
            &[
                "n.R: name \"R\" is invalid: use lowercase letters, digits and underscores, starting with a letter",
                "n.R: must set one of required, optional or computed",
                "n: set-nested attributes cannot contain dynamic types",
            ],
        );
        check(
            Block::new().attr("t", Attribute::optional(Type::object_with_optional([("a", Type::String)], &["a"]))),
            m,
            &["t: attribute types must not carry optional(...) markers; use a nested object with optional attributes"],
        );
    }
}
