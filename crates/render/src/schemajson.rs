//! Provider schemas as `providers schema -json` prints them (Terraform's
//! format 1.0): per provider address its configuration schema, resource
//! and data source schemas and functions. Empty fields are left out as
//! Terraform leaves them out; `description_kind` is always there.

use serde_json::{json, Map, Value as Json};
use std::collections::BTreeMap;
use terrane_engine::provider::{FunctionParam, FunctionSignature, ProviderSchema};
use terrane_schema::{
    AttrType, Attribute, Block, BlockNesting, NestedBlock, ObjectNesting, Schema, StringKind,
};
use terrane_value::typejson;

/// The whole document for `schemas`, keyed by provider source address.
pub fn provider_schemas(schemas: &BTreeMap<String, ProviderSchema>) -> Json {
    let providers: Map<String, Json> = schemas
        .iter()
        .map(|(addr, s)| (addr.clone(), provider(s)))
        .collect();
    json!({"format_version": "1.0", "provider_schemas": providers})
}

fn provider(s: &ProviderSchema) -> Json {
    let mut o = Map::new();
    o.insert("provider".into(), schema(&s.provider));
    let named = |m: &BTreeMap<String, Schema>| -> Json {
        m.iter()
            .map(|(k, v)| (k.clone(), schema(v)))
            .collect::<Map<_, _>>()
            .into()
    };
    if !s.resources.is_empty() {
        o.insert("resource_schemas".into(), named(&s.resources));
    }
    if !s.data_sources.is_empty() {
        o.insert("data_source_schemas".into(), named(&s.data_sources));
    }
    if !s.ephemeral_resources.is_empty() {
        o.insert(
            "ephemeral_resource_schemas".into(),
            named(&s.ephemeral_resources),
        );
    }
    if !s.functions.is_empty() {
        let fs: Map<String, Json> = s
            .functions
            .iter()
            .map(|(k, f)| (k.clone(), function(f)))
            .collect();
        o.insert("functions".into(), fs.into());
    }
    o.into()
}

fn schema(s: &Schema) -> Json {
    json!({"version": s.version, "block": block(&s.block)})
}

fn kind(k: StringKind) -> &'static str {
    match k {
        StringKind::Plain => "plain",
        StringKind::Markdown => "markdown",
    }
}

/// Puts `key: value` in `o` unless the value is empty (`""`, `false`, 0).
fn put(o: &mut Map<String, Json>, key: &str, value: Json) {
    let empty = match &value {
        Json::String(s) => s.is_empty(),
        Json::Bool(b) => !b,
        Json::Number(n) => n.as_u64() == Some(0),
        Json::Object(m) => m.is_empty(),
        _ => false,
    };
    if !empty {
        o.insert(key.into(), value);
    }
}

fn block(b: &Block) -> Json {
    let mut o = Map::new();
    let attrs: Map<String, Json> = b
        .attributes
        .iter()
        .map(|(k, a)| (k.clone(), attribute(a)))
        .collect();
    put(&mut o, "attributes", attrs.into());
    let blocks: Map<String, Json> = b
        .block_types
        .iter()
        .map(|(k, nb)| (k.clone(), block_type(nb)))
        .collect();
    put(&mut o, "block_types", blocks.into());
    put(&mut o, "description", b.description.clone().into());
    o.insert("description_kind".into(), kind(b.description_kind).into());
    put(&mut o, "deprecated", b.deprecated.into());
    o.into()
}

fn block_type(nb: &NestedBlock) -> Json {
    let mode = match nb.nesting {
        BlockNesting::Single => "single",
        BlockNesting::List => "list",
        BlockNesting::Set => "set",
        BlockNesting::Map => "map",
        BlockNesting::Group => "group",
    };
    let mut o = Map::new();
    o.insert("nesting_mode".into(), mode.into());
    o.insert("block".into(), block(&nb.block));
    put(&mut o, "min_items", nb.min_items.into());
    put(&mut o, "max_items", nb.max_items.into());
    o.into()
}

fn attribute(a: &Attribute) -> Json {
    let mut o = Map::new();
    match &a.ty {
        AttrType::Type(t) => {
            o.insert("type".into(), typejson::to_json(t));
        }
        AttrType::Nested(n) => {
            let attrs: Map<String, Json> = n
                .attributes
                .iter()
                .map(|(k, a)| (k.clone(), attribute(a)))
                .collect();
            let mode = match n.nesting {
                ObjectNesting::Single => "single",
                ObjectNesting::List => "list",
                ObjectNesting::Set => "set",
                ObjectNesting::Map => "map",
            };
            o.insert(
                "nested_type".into(),
                json!({"attributes": attrs, "nesting_mode": mode}),
            );
        }
    }
    put(&mut o, "description", a.description.clone().into());
    o.insert("description_kind".into(), kind(a.description_kind).into());
    put(&mut o, "deprecated", a.deprecated.into());
    put(&mut o, "required", a.required.into());
    put(&mut o, "optional", a.optional.into());
    put(&mut o, "computed", a.computed.into());
    put(&mut o, "sensitive", a.sensitive.into());
    put(&mut o, "write_only", a.write_only.into());
    o.into()
}

fn param(p: &FunctionParam) -> Json {
    let mut o = Map::new();
    o.insert("name".into(), p.name.clone().into());
    o.insert("type".into(), typejson::to_json(&p.ty));
    put(&mut o, "description", p.description.clone().into());
    put(&mut o, "is_nullable", p.allow_null.into());
    o.into()
}

fn function(f: &FunctionSignature) -> Json {
    let mut o = Map::new();
    put(&mut o, "description", f.description.clone().into());
    put(&mut o, "summary", f.summary.clone().into());
    put(
        &mut o,
        "deprecation_message",
        f.deprecation_message.clone().into(),
    );
    o.insert("return_type".into(), typejson::to_json(&f.return_type));
    if !f.params.is_empty() {
        o.insert(
            "parameters".into(),
            f.params.iter().map(param).collect::<Vec<_>>().into(),
        );
    }
    if let Some(v) = &f.variadic {
        o.insert("variadic_parameter".into(), param(v));
    }
    o.into()
}
