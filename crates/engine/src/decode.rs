//! Configuration bodies into schema-typed values: each attribute's
//! expression evaluated and converted to the attribute's type, nested
//! blocks gathered by nesting mode, `dynamic` blocks expanded, and
//! Terraform's diagnostics for missing, unexpected and mistyped arguments.
//! The result is an object of the schema's implied type; sensitive marks
//! from expressions stay on the value.

use std::collections::BTreeMap;
use terrane_config::{Diagnostic, LineIndex};
use terrane_eval::Evaluator;
use terrane_hcl::expr::Expression;
use terrane_hcl::structure::{Block as HclBlock, BlockLabel, Body};
use terrane_hcl::Span;
use terrane_schema::{AttrType, Block, BlockNesting};
use terrane_value::convert::convert;
use terrane_value::{Type, Value};

/// The attributes and blocks of one body, borrowed from the syntax tree.
pub struct BodyRef<'a> {
    pub attributes: Vec<(&'a str, &'a Expression)>,
    pub blocks: Vec<&'a HclBlock>,
    /// The range of the whole block, for "missing argument" messages.
    pub span: Option<std::ops::Range<usize>>,
}

impl<'a> BodyRef<'a> {
    pub fn of(body: &'a Body, span: Option<std::ops::Range<usize>>) -> BodyRef<'a> {
        BodyRef {
            attributes: body
                .attributes()
                .map(|a| (a.key.as_str(), &a.value))
                .collect(),
            blocks: body.blocks().collect(),
            span,
        }
    }
}

fn label(l: &BlockLabel) -> &str {
    match l {
        BlockLabel::Ident(i) => i.as_str(),
        BlockLabel::String(s) => s.as_str(),
    }
}

/// Decodes `body` against `schema` with the evaluator `ev` (whose scope
/// holds `count`, `each`, ...). Computed-only attributes may not be set;
/// required ones must be.
pub fn decode_body(
    ev: &mut Evaluator<'_>,
    index: &LineIndex,
    body: &BodyRef<'_>,
    schema: &Block,
    diags: &mut Vec<Diagnostic>,
) -> Value {
    decode_typed(ev, index, body, schema, &schema.implied_type(), diags)
}

/// [`decode_body`] with the schema's implied type `ty` made by the caller
/// (once per resource type, not once per instance).
pub fn decode_typed(
    ev: &mut Evaluator<'_>,
    index: &LineIndex,
    body: &BodyRef<'_>,
    schema: &Block,
    ty: &Type,
    diags: &mut Vec<Diagnostic>,
) -> Value {
    // Gathered as pairs: the configured arguments (in the body's order,
    // then sorted), the others, the blocks; `Entries` orders the whole and
    // keeps the last of two equal keys, as inserting into a map would.
    let mut out: Vec<(String, Value)> =
        Vec::with_capacity(schema.attributes.len() + schema.block_types.len());
    for (name, expr) in &body.attributes {
        let Some(attr) = schema.attributes.get(*name) else {
            let what = if schema.block_types.contains_key(*name) {
                format!("An argument named {name:?} is not expected here. Did you mean to define a block of type {name:?}?")
            } else {
                format!("An argument named {name:?} is not expected here.")
            };
            diags.push(Diagnostic::error(
                "Unsupported argument",
                what,
                index.range(expr.span()),
            ));
            continue;
        };
        if attr.computed && !attr.optional && !attr.required {
            diags.push(Diagnostic::error(
                "Invalid or unknown key",
                format!("The argument {name:?} is computed by the provider and cannot be set in configuration."),
                index.range(expr.span()),
            ));
            continue;
        }
        let v = ev.eval(expr);
        let want = match &attr.ty {
            AttrType::Type(t) => t.clone(),
            AttrType::Nested(o) => o.spec_type(),
        };
        match convert(&v, &want) {
            Ok(v) => out.push((name.to_string(), v)),
            Err(e) => {
                diags.push(Diagnostic::error(
                    "Incorrect attribute value type",
                    format!("Inappropriate value for attribute {name:?}: {e}."),
                    index.range(expr.span()),
                ));
                out.push((name.to_string(), Value::unknown(attr.implied_type())));
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    let configured = out.len();
    for (name, attr) in &schema.attributes {
        if out[..configured]
            .binary_search_by(|(k, _)| k.as_str().cmp(name))
            .is_ok()
        {
            continue;
        }
        if attr.required && !body.attributes.iter().any(|(n, _)| n == name) {
            diags.push(Diagnostic::error(
                "Missing required argument",
                format!("The argument {name:?} is required, but no definition was found."),
                index.range(body.span.clone()),
            ));
        }
        out.push((name.clone(), Value::null(attr.implied_type())));
    }
    // Nested blocks: static ones and dynamic ones, in order of appearance.
    let mut by_type: BTreeMap<&str, Vec<Value>> = BTreeMap::new();
    let mut unknown_blocks: BTreeMap<&str, bool> = BTreeMap::new();
    for b in &body.blocks {
        let ty = b.ident.as_str();
        if ty == "dynamic" {
            let Some(bt) = b.labels.first().map(label) else {
                diags.push(Diagnostic::error(
                    "Missing name for block",
                    "A dynamic block requires the name of the block type to generate.",
                    index.range(b.span()),
                ));
                continue;
            };
            let Some((name, nb)) = schema.block_types.get_key_value(bt) else {
                diags.push(Diagnostic::error(
                    "Unsupported block type",
                    format!("Blocks of type {bt:?} are not expected here."),
                    index.range(b.labels[0].span()),
                ));
                continue;
            };
            match expand_dynamic(ev, index, b, bt, &nb.block, diags) {
                Some(vals) => by_type.entry(name.as_str()).or_default().extend(vals),
                None => {
                    unknown_blocks.insert(name.as_str(), true);
                }
            }
            continue;
        }
        let Some((name, nb)) = schema.block_types.get_key_value(ty) else {
            let detail = if schema.attributes.contains_key(ty) {
                format!("Blocks of type {ty:?} are not expected here. Did you mean to define argument {ty:?}? If so, use the equals sign to assign it a value.")
            } else {
                format!("Blocks of type {ty:?} are not expected here.")
            };
            diags.push(Diagnostic::error(
                "Unsupported block type",
                detail,
                index.range(b.ident.span()),
            ));
            continue;
        };
        let inner = BodyRef::of(&b.body, b.span());
        let mut v = decode_body(ev, index, &inner, &nb.block, diags);
        if nb.nesting == BlockNesting::Map {
            let key = b.labels.first().map(label).unwrap_or_default().to_string();
            v = Value::object_from([("__key", Value::string(key)), ("__value", v)]);
        }
        by_type.entry(name.as_str()).or_default().push(v);
    }
    for (name, nb) in &schema.block_types {
        let vals = by_type.remove(name.as_str()).unwrap_or_default();
        let bty = nb.block.implied_type();
        if unknown_blocks.contains_key(name.as_str()) {
            out.push((name.clone(), Value::unknown(nb.implied_type())));
            continue;
        }
        let n = vals.len() as u64;
        if nb.min_items > 0 && n < nb.min_items && nb.nesting != BlockNesting::Single {
            diags.push(Diagnostic::error(
                format!("Insufficient {name} blocks"),
                format!("At least {} {name:?} blocks are required.", nb.min_items),
                index.range(body.span.clone()),
            ));
        }
        let single = matches!(nb.nesting, BlockNesting::Single | BlockNesting::Group);
        if nb.max_items > 0 && n > nb.max_items && !single {
            diags.push(Diagnostic::error(
                format!("Too many {name} blocks"),
                format!("No more than {} {name:?} blocks are allowed", nb.max_items),
                index.range(body.span.clone()),
            ));
        }
        let v = match nb.nesting {
            BlockNesting::Single | BlockNesting::Group => {
                if n > 1 {
                    diags.push(Diagnostic::error(
                        "Duplicate block",
                        format!("Only one {name:?} block is allowed. Another was defined earlier."),
                        index.range(body.span.clone()),
                    ));
                }
                match vals.into_iter().next() {
                    Some(v) => v,
                    None if nb.nesting == BlockNesting::Group => nb.block.empty_value(),
                    None => {
                        if nb.min_items > 0 {
                            diags.push(Diagnostic::error(
                                format!("Missing {name} block"),
                                format!("A block of type {name:?} is required here."),
                                index.range(body.span.clone()),
                            ));
                        }
                        Value::null(bty)
                    }
                }
            }
            BlockNesting::List if nb.is_dynamic_collection() => Value::tuple(vals),
            BlockNesting::List => Value::list(bty, vals),
            BlockNesting::Set => Value::set(bty, vals),
            BlockNesting::Map => {
                let mut m = BTreeMap::new();
                for v in vals {
                    let key = v
                        .get_attr("__key")
                        .and_then(|k| k.as_str().map(str::to_string))
                        .unwrap_or_default();
                    let val = v
                        .get_attr("__value")
                        .cloned()
                        .unwrap_or_else(|| Value::null(bty.clone()));
                    m.insert(key, val);
                }
                if nb.is_dynamic_collection() {
                    Value::object(m)
                } else {
                    Value::map(bty, m)
                }
            }
        };
        out.push((name.clone(), v));
    }
    Value::object_typed_of(ty, out.into_iter().collect())
}

/// Expands `dynamic "NAME" { for_each = ..., iterator = it, content {...} }`
/// into one block value per element; `None` when `for_each` is unknown.
fn expand_dynamic(
    ev: &mut Evaluator<'_>,
    index: &LineIndex,
    b: &HclBlock,
    name: &str,
    schema: &Block,
    diags: &mut Vec<Diagnostic>,
) -> Option<Vec<Value>> {
    let mut for_each = None;
    let mut iterator = name.to_string();
    for a in b.body.attributes() {
        match a.key.as_str() {
            "for_each" => for_each = Some(&a.value),
            "iterator" => match &a.value {
                Expression::Variable(v) => iterator = v.as_str().to_string(),
                other => diags.push(Diagnostic::error(
                    "Invalid expression",
                    "The iterator argument must be a single identifier.",
                    index.range(other.span()),
                )),
            },
            "labels" => {}
            k => diags.push(Diagnostic::error(
                "Unsupported argument",
                format!("An argument named {k:?} is not expected here."),
                index.range(a.key.span()),
            )),
        }
    }
    let Some(fe) = for_each else {
        diags.push(Diagnostic::error(
            "Missing required argument",
            "The argument \"for_each\" is required, but no definition was found.",
            index.range(b.span()),
        ));
        return Some(Vec::new());
    };
    let Some(content) = b.body.blocks().find(|c| c.ident.as_str() == "content") else {
        diags.push(Diagnostic::error(
            "Missing required block",
            "A dynamic block requires a \"content\" block.",
            index.range(b.span()),
        ));
        return Some(Vec::new());
    };
    let coll = ev.eval(fe);
    if coll.is_null() {
        diags.push(Diagnostic::error(
            "Invalid dynamic for_each value",
            "Cannot use a null value in for_each.",
            index.range(fe.span()),
        ));
        return Some(Vec::new());
    }
    if !coll.is_wholly_known() && !coll.is_known() {
        return None;
    }
    let sens = coll.is_sensitive();
    let items: Vec<(Value, Value)> = match (coll.ty(), coll.unmark_deep()) {
        (Type::List(_) | Type::Tuple(_), c) => c
            .elements()
            .unwrap_or(&[])
            .iter()
            .enumerate()
            .map(|(i, v)| (Value::number(i as i64), v.clone()))
            .collect(),
        (Type::Set(_), c) => c
            .elements()
            .unwrap_or(&[])
            .iter()
            .map(|v| (v.clone(), v.clone()))
            .collect(),
        (Type::Map(_) | Type::Object(_), c) => c
            .entries()
            .map(|m| {
                m.iter()
                    .map(|(k, v)| (Value::string(k.as_str()), v.clone()))
                    .collect()
            })
            .unwrap_or_default(),
        (t, _) => {
            diags.push(Diagnostic::error(
                "Invalid dynamic for_each value",
                format!(
                    "Cannot use a {} value in for_each. An iterable collection is required.",
                    t.friendly_name()
                ),
                index.range(fe.span()),
            ));
            return Some(Vec::new());
        }
    };
    let mut out = Vec::with_capacity(items.len());
    for (k, v) in items {
        let it = Value::object_from([("key", k), ("value", v)]);
        let it = if sens { it.mark_sensitive() } else { it };
        let inner = BodyRef::of(&content.body, content.span());
        let val = ev.with_local(&iterator, it, |ev| {
            decode_body(ev, index, &inner, schema, diags)
        });
        out.push(val);
    }
    Some(out)
}
