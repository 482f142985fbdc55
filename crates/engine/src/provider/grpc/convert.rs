//! Protocol messages into terrane types and back: schemas (GetProviderSchema
//! into terrane_schema), diagnostics and attribute paths, deferral reasons,
//! function signatures. Pure functions; errors are strings the caller wraps
//! in a [`ProviderError`](crate::provider::ProviderError) naming the
//! provider and the operation.

use crate::provider::api::{
    DeferredReason, Diagnostic, Diagnostics, FunctionParam, FunctionSignature, ProviderSchema,
    ServerCapabilities, Severity,
};
use std::collections::BTreeMap;
use terrane_schema::{
    AttrType, Attribute, Block, BlockNesting, NestedBlock, NestedObject, ObjectNesting, Schema,
    StringKind,
};
use terrane_tfplugin6::tfplugin6 as tf;
use terrane_value::{typejson, Path, Step, Type};

pub fn path_from(p: &tf::AttributePath) -> Path {
    use tf::attribute_path::step::Selector;
    let mut out = Path::root();
    for s in &p.steps {
        match &s.selector {
            Some(Selector::AttributeName(n)) => out.push(Step::Attr(n.clone())),
            Some(Selector::ElementKeyString(k)) => out.push(Step::Key(k.clone())),
            Some(Selector::ElementKeyInt(i)) => out.push(Step::Index(*i)),
            None => {}
        }
    }
    out
}

pub fn diagnostics(ds: &[tf::Diagnostic]) -> Diagnostics {
    Diagnostics(
        ds.iter()
            .map(|d| Diagnostic {
                // INVALID (0) is treated as an error: a provider that forgot
                // the severity did not mean "all is well".
                severity: if d.severity == tf::diagnostic::Severity::Warning as i32 {
                    Severity::Warning
                } else {
                    Severity::Error
                },
                summary: d.summary.clone(),
                detail: d.detail.clone(),
                path: d.attribute.as_ref().map(path_from).filter(|p| !p.is_root()),
                ..Default::default()
            })
            .collect(),
    )
}

pub fn deferred(d: Option<&tf::Deferred>) -> Option<DeferredReason> {
    use tf::deferred::Reason;
    d.map(|d| match Reason::try_from(d.reason) {
        Ok(Reason::ResourceConfigUnknown) => DeferredReason::ResourceConfigUnknown,
        Ok(Reason::ProviderConfigUnknown) => DeferredReason::ProviderConfigUnknown,
        Ok(Reason::AbsentPrereq) => DeferredReason::AbsentPrereq,
        _ => DeferredReason::Unknown,
    })
}

fn kind(k: i32) -> StringKind {
    if k == tf::StringKind::Markdown as i32 {
        StringKind::Markdown
    } else {
        StringKind::Plain
    }
}

fn ty(bytes: &[u8], at: &str) -> Result<Type, String> {
    typejson::from_bytes(bytes).map_err(|e| format!("{at}: invalid type: {}", e.0))
}

fn attribute(a: &tf::schema::Attribute, at: &str) -> Result<Attribute, String> {
    let at = format!("{at}.{}", a.name);
    let ty = match &a.nested_type {
        Some(o) => {
            let nesting = match tf::schema::object::NestingMode::try_from(o.nesting) {
                Ok(tf::schema::object::NestingMode::Single) => ObjectNesting::Single,
                Ok(tf::schema::object::NestingMode::List) => ObjectNesting::List,
                Ok(tf::schema::object::NestingMode::Set) => ObjectNesting::Set,
                Ok(tf::schema::object::NestingMode::Map) => ObjectNesting::Map,
                _ => return Err(format!("{at}: invalid nesting mode {}", o.nesting)),
            };
            let mut attributes = BTreeMap::new();
            for n in &o.attributes {
                attributes.insert(n.name.clone(), attribute(n, &at)?);
            }
            AttrType::Nested(NestedObject {
                attributes,
                nesting,
            })
        }
        None => AttrType::Type(ty(&a.r#type, &at)?),
    };
    Ok(Attribute {
        ty,
        description: a.description.clone(),
        description_kind: kind(a.description_kind),
        required: a.required,
        optional: a.optional,
        computed: a.computed,
        sensitive: a.sensitive,
        deprecated: a.deprecated,
        deprecation_message: a.deprecation_message.clone(),
        write_only: a.write_only,
    })
}

fn block(b: &tf::schema::Block, at: &str) -> Result<Block, String> {
    use tf::schema::nested_block::NestingMode as M;
    let mut out = Block {
        description: b.description.clone(),
        description_kind: kind(b.description_kind),
        deprecated: b.deprecated,
        deprecation_message: b.deprecation_message.clone(),
        computed: b.computed,
        ..Block::default()
    };
    for a in &b.attributes {
        out.attributes.insert(a.name.clone(), attribute(a, at)?);
    }
    for nb in &b.block_types {
        let inner_at = format!("{at}.{}", nb.type_name);
        let nesting = match M::try_from(nb.nesting) {
            Ok(M::Single) => BlockNesting::Single,
            Ok(M::List) => BlockNesting::List,
            Ok(M::Set) => BlockNesting::Set,
            Ok(M::Map) => BlockNesting::Map,
            Ok(M::Group) => BlockNesting::Group,
            _ => return Err(format!("{inner_at}: invalid nesting mode {}", nb.nesting)),
        };
        let inner = nb
            .block
            .as_ref()
            .map(|b| block(b, &inner_at))
            .transpose()?
            .unwrap_or_default();
        out.block_types.insert(
            nb.type_name.clone(),
            NestedBlock {
                block: inner,
                nesting,
                min_items: nb.min_items.max(0) as u64,
                max_items: nb.max_items.max(0) as u64,
            },
        );
    }
    Ok(out)
}

pub fn schema(s: Option<&tf::Schema>, at: &str) -> Result<Schema, String> {
    match s {
        None => Ok(Schema::new(0, Block::new())),
        Some(s) => Ok(Schema::new(
            s.version,
            s.block
                .as_ref()
                .map(|b| block(b, at))
                .transpose()?
                .unwrap_or_default(),
        )),
    }
}

fn param(p: &tf::function::Parameter, at: &str) -> Result<FunctionParam, String> {
    Ok(FunctionParam {
        name: p.name.clone(),
        ty: ty(&p.r#type, &format!("{at}({})", p.name))?,
        allow_null: p.allow_null_value,
        allow_unknown: p.allow_unknown_values,
        description: p.description.clone(),
    })
}

pub fn function(name: &str, f: &tf::Function) -> Result<FunctionSignature, String> {
    let at = format!("function {name}");
    Ok(FunctionSignature {
        params: f
            .parameters
            .iter()
            .map(|p| param(p, &at))
            .collect::<Result<_, _>>()?,
        variadic: f
            .variadic_parameter
            .as_ref()
            .map(|p| param(p, &at))
            .transpose()?,
        return_type: ty(
            f.r#return
                .as_ref()
                .map(|r| r.r#type.as_slice())
                .unwrap_or_default(),
            &format!("{at} return"),
        )?,
        summary: f.summary.clone(),
        description: f.description.clone(),
        deprecation_message: f.deprecation_message.clone(),
    })
}

/// A whole GetProviderSchema response.
pub fn provider_schema(r: &tf::get_provider_schema::Response) -> Result<ProviderSchema, String> {
    let caps = r.server_capabilities.unwrap_or_default();
    let mut out = ProviderSchema {
        provider: schema(r.provider.as_ref(), "provider")?,
        provider_meta: r
            .provider_meta
            .as_ref()
            .map(|s| schema(Some(s), "provider_meta"))
            .transpose()?,
        capabilities: ServerCapabilities {
            plan_destroy: caps.plan_destroy,
            get_provider_schema_optional: caps.get_provider_schema_optional,
            move_resource_state: caps.move_resource_state,
        },
        diagnostics: diagnostics(&r.diagnostics),
        ..ProviderSchema::default()
    };
    for (n, s) in &r.resource_schemas {
        out.resources.insert(n.clone(), schema(Some(s), n)?);
    }
    for (n, s) in &r.data_source_schemas {
        out.data_sources
            .insert(n.clone(), schema(Some(s), &format!("data.{n}"))?);
    }
    for (n, s) in &r.ephemeral_resource_schemas {
        out.ephemeral_resources
            .insert(n.clone(), schema(Some(s), &format!("ephemeral.{n}"))?);
    }
    for (n, f) in &r.functions {
        out.functions.insert(n.clone(), function(n, f)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(sel: tf::attribute_path::step::Selector) -> tf::attribute_path::Step {
        tf::attribute_path::Step {
            selector: Some(sel),
        }
    }

    #[test]
    fn paths_and_severities() {
        use tf::attribute_path::step::Selector as S;
        let p = tf::AttributePath {
            steps: vec![
                step(S::AttributeName("a".into())),
                step(S::ElementKeyInt(2)),
                step(S::ElementKeyString("k".into())),
            ],
        };
        assert_eq!(path_from(&p), Path::root().attr("a").index(2).key("k"));
        let ds = diagnostics(&[
            tf::Diagnostic {
                severity: 2,
                summary: "w".into(),
                ..Default::default()
            },
            tf::Diagnostic {
                severity: 0,
                summary: "invalid".into(),
                attribute: Some(tf::AttributePath::default()),
                ..Default::default()
            },
        ]);
        assert_eq!(ds.0[0].severity, Severity::Warning);
        assert_eq!(
            ds.0[1].severity,
            Severity::Error,
            "INVALID severity counts as an error"
        );
        assert_eq!(ds.0[1].path, None, "an empty path is the whole block");
    }

    #[test]
    fn schema_round_trip_through_the_sdk_encoding() {
        let block = Block::new()
            .attr("id", Attribute::computed(Type::String))
            .attr(
                "tags",
                Attribute::optional(Type::map(Type::String)).sensitive(),
            )
            .block(
                "rule",
                NestedBlock::list(Block::new().attr("port", Attribute::required(Type::Number)))
                    .items(1, 3),
            );
        let wire = tf::Schema {
            version: 3,
            block: Some(tf::schema::Block {
                attributes: vec![
                    tf::schema::Attribute {
                        name: "id".into(),
                        r#type: typejson::to_bytes(&Type::String),
                        computed: true,
                        ..Default::default()
                    },
                    tf::schema::Attribute {
                        name: "tags".into(),
                        r#type: typejson::to_bytes(&Type::map(Type::String)),
                        optional: true,
                        sensitive: true,
                        ..Default::default()
                    },
                ],
                block_types: vec![tf::schema::NestedBlock {
                    type_name: "rule".into(),
                    nesting: tf::schema::nested_block::NestingMode::List as i32,
                    min_items: 1,
                    max_items: 3,
                    block: Some(tf::schema::Block {
                        attributes: vec![tf::schema::Attribute {
                            name: "port".into(),
                            r#type: typejson::to_bytes(&Type::Number),
                            required: true,
                            ..Default::default()
                        }],
                        ..Default::default()
                    }),
                }],
                ..Default::default()
            }),
        };
        assert_eq!(schema(Some(&wire), "x").unwrap(), Schema::new(3, block));
        let bad = tf::Schema {
            version: 0,
            block: Some(tf::schema::Block {
                attributes: vec![tf::schema::Attribute {
                    name: "a".into(),
                    r#type: b"\"nope\"".to_vec(),
                    ..Default::default()
                }],
                ..Default::default()
            }),
        };
        assert!(schema(Some(&bad), "r").unwrap_err().contains("r.a"));
    }
}
