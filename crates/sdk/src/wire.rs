//! Conversions between the protocol's messages and terrane's types:
//! DynamicValues (msgpack, or JSON when that is what arrived; empty means
//! null), diagnostics with attribute paths, and schemas.

use crate::diag::{Diagnostic, Diagnostics, Severity};
use terrane_schema::{
    AttrType, Attribute, Block, BlockNesting, NestedBlock, ObjectNesting, Schema, StringKind,
};
use terrane_tfplugin6::tfplugin6 as tf;
use terrane_value::{msgpack, typejson, Path, Step, Type, Value};

/// Decodes a DynamicValue of type `ty`.
pub fn decode(v: Option<&tf::DynamicValue>, ty: &Type) -> Result<Value, Diagnostics> {
    let Some(v) = v else {
        return Ok(Value::null(ty.clone()));
    };
    if !v.msgpack.is_empty() {
        return msgpack::decode(&v.msgpack, ty).map_err(|e| {
            Diagnostics::error(
                "Unable to Decode Value",
                format!("The value Terraform sent could not be decoded: {e}"),
            )
        });
    }
    if !v.json.is_empty() {
        return terrane_value::json::decode_bytes(&v.json, ty).map_err(|e| {
            Diagnostics::error(
                "Unable to Decode Value",
                format!("The value Terraform sent could not be decoded: {e}"),
            )
        });
    }
    Ok(Value::null(ty.clone()))
}

/// Encodes a value of type `ty` as msgpack.
pub fn encode(v: &Value, ty: &Type) -> Result<tf::DynamicValue, Diagnostics> {
    msgpack::encode(v, ty)
        .map(|m| tf::DynamicValue { msgpack: m, json: Vec::new() })
        .map_err(|e| Diagnostics::error("Unable to Encode Value", format!("The provider produced a value that does not match its schema: {e}. This is a bug in the provider.")))
}

pub fn path(p: &Path) -> tf::AttributePath {
    use tf::attribute_path::step::Selector;
    tf::AttributePath {
        steps: p
            .steps()
            .iter()
            .map(|s| tf::attribute_path::Step {
                selector: Some(match s {
                    Step::Attr(n) => Selector::AttributeName(n.clone()),
                    Step::Key(k) => Selector::ElementKeyString(k.clone()),
                    Step::Index(i) => Selector::ElementKeyInt(*i),
                }),
            })
            .collect(),
    }
}

pub fn diagnostics(d: &Diagnostics) -> Vec<tf::Diagnostic> {
    d.0.iter()
        .map(|d: &Diagnostic| tf::Diagnostic {
            severity: match d.severity {
                Severity::Error => tf::diagnostic::Severity::Error as i32,
                Severity::Warning => tf::diagnostic::Severity::Warning as i32,
            },
            summary: d.summary.clone(),
            detail: d.detail.clone(),
            attribute: d.path.as_ref().map(path),
        })
        .collect()
}

fn kind(k: StringKind) -> i32 {
    match k {
        StringKind::Plain => tf::StringKind::Plain as i32,
        StringKind::Markdown => tf::StringKind::Markdown as i32,
    }
}

fn attribute(name: &str, a: &Attribute) -> tf::schema::Attribute {
    let (ty, nested_type) = match &a.ty {
        AttrType::Type(t) => (typejson::to_bytes(t), None),
        AttrType::Nested(o) => (
            Vec::new(),
            Some(tf::schema::Object {
                attributes: o.attributes.iter().map(|(n, a)| attribute(n, a)).collect(),
                nesting: match o.nesting {
                    ObjectNesting::Single => tf::schema::object::NestingMode::Single,
                    ObjectNesting::List => tf::schema::object::NestingMode::List,
                    ObjectNesting::Set => tf::schema::object::NestingMode::Set,
                    ObjectNesting::Map => tf::schema::object::NestingMode::Map,
                } as i32,
                ..Default::default()
            }),
        ),
    };
    tf::schema::Attribute {
        name: name.into(),
        r#type: ty,
        nested_type,
        description: a.description.clone(),
        required: a.required,
        optional: a.optional,
        computed: a.computed,
        sensitive: a.sensitive,
        description_kind: kind(a.description_kind),
        deprecated: a.deprecated,
        write_only: a.write_only,
        deprecation_message: a.deprecation_message.clone(),
    }
}

pub fn block(b: &Block) -> tf::schema::Block {
    tf::schema::Block {
        version: 0,
        attributes: b.attributes.iter().map(|(n, a)| attribute(n, a)).collect(),
        block_types: b
            .block_types
            .iter()
            .map(|(n, nb)| nested_block(n, nb))
            .collect(),
        description: b.description.clone(),
        description_kind: kind(b.description_kind),
        deprecated: b.deprecated,
        deprecation_message: b.deprecation_message.clone(),
        computed: b.computed,
    }
}

fn nested_block(name: &str, nb: &NestedBlock) -> tf::schema::NestedBlock {
    use tf::schema::nested_block::NestingMode as M;
    tf::schema::NestedBlock {
        type_name: name.into(),
        block: Some(block(&nb.block)),
        nesting: match nb.nesting {
            BlockNesting::Single => M::Single,
            BlockNesting::List => M::List,
            BlockNesting::Set => M::Set,
            BlockNesting::Map => M::Map,
            BlockNesting::Group => M::Group,
        } as i32,
        min_items: nb.min_items as i64,
        max_items: nb.max_items as i64,
    }
}

pub fn schema(s: &Schema) -> tf::Schema {
    tf::Schema {
        version: s.version,
        block: Some(block(&s.block)),
    }
}

fn param(p: &crate::function::Param) -> tf::function::Parameter {
    tf::function::Parameter {
        name: p.name.clone(),
        r#type: typejson::to_bytes(&p.ty),
        allow_null_value: p.allow_null,
        allow_unknown_values: p.allow_unknown,
        description: p.description.clone(),
        description_kind: tf::StringKind::Plain as i32,
    }
}

pub fn function(f: &dyn crate::function::Function) -> tf::Function {
    tf::Function {
        parameters: f.params().iter().map(param).collect(),
        variadic_parameter: f.variadic().as_ref().map(param),
        r#return: Some(tf::function::Return {
            r#type: typejson::to_bytes(&f.return_type()),
        }),
        summary: f.summary().into(),
        description: f.description().into(),
        description_kind: tf::StringKind::Plain as i32,
        deprecation_message: String::new(),
    }
}
