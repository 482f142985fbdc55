//! ProposedNew: the proposed new state from configuration and prior state.
//!
//! Non-computed attributes take the configuration value (even null);
//! computed attributes left unset in configuration keep the prior value;
//! nested blocks and nested attributes are correlated element by element
//! (lists by index, maps by key, sets by the "valid prior from config"
//! heuristic) and merged recursively. Results keep the container kind of the
//! configuration (list vs tuple, map vs object).

use super::{attr_of, InOrder, Nested};
use crate::{Attribute, Block, BlockNesting, NestedBlock, NestedObject, ObjectNesting};
use std::collections::BTreeMap;
use terrane_value::{Kind, Type, Value};

/// The proposed new state for `config` over `prior` (protocol §4.1).
pub fn proposed_new(schema: &Block, prior: &Value, config: &Value) -> Value {
    proposed_new_over(schema, &schema.empty_value(), prior, config)
}

/// [`proposed_new`] with the schema's empty value (`Block::empty_value`)
/// made by the caller, once per resource type rather than once per
/// instance created.
pub fn proposed_new_over(schema: &Block, empty: &Value, prior: &Value, config: &Value) -> Value {
    if config.is_null() && prior.is_null() {
        return prior.clone();
    }
    if prior.is_null() {
        return proposed_block(schema, empty, config);
    }
    proposed_block(schema, prior, config)
}

/// The planned value of a data resource whose read waits for apply: every
/// computed attribute left unset in configuration becomes unknown.
pub fn planned_data_resource_object(schema: &Block, config: &Value) -> Value {
    proposed_new(schema, &Value::unknown(schema.implied_type()), config)
}

/// For computed nested blocks (protocol 6.11) whose configuration is a known
/// empty collection, replaces that configuration with null so the provider
/// may fill the block in. Recurses through nested blocks.
pub fn prepare_computed_blocks(schema: &Block, config: &Value) -> Value {
    let Some(entries) = config.entries() else {
        return config.clone();
    };
    let mut out = (*entries).clone();
    let mut changed = false;
    for (name, bt) in &schema.block_types {
        let Some(v) = entries.get(name) else { continue };
        let new_v = if bt.block.computed
            && v.is_known()
            && !v.is_null()
            && v.length() == Some(0)
            && bt.nesting != BlockNesting::Single
            && bt.nesting != BlockNesting::Group
        {
            Value::null(v.ty().clone())
        } else {
            match (bt.nesting, v.kind()) {
                (BlockNesting::Single | BlockNesting::Group, _) => {
                    prepare_computed_blocks(&bt.block, v)
                }
                (_, Kind::Seq(_) | Kind::Set(_) | Kind::Map(_))
                    if !bt.block.block_types.is_empty() =>
                {
                    v.map_children(|e| prepare_computed_blocks(&bt.block, e))
                }
                _ => v.clone(),
            }
        };
        if new_v != *v {
            changed = true;
            out.insert(name.clone(), new_v);
        }
    }
    if changed {
        Value::object_of(out).with_sensitive(config.is_sensitive())
    } else {
        config.clone()
    }
}

fn proposed_block(schema: &Block, prior: &Value, config: &Value) -> Value {
    if config.is_null() || !config.is_known() {
        return prior.clone();
    }
    let mut attrs = proposed_attributes(&schema.attributes, prior, config);
    let (mut prior_in, mut config_in) = (InOrder::new(prior), InOrder::new(config));
    for (name, bt) in &schema.block_types {
        let prior_v = prior_in.get(name, || bt.implied_type());
        let config_v = config_in.get(name, || bt.implied_type());
        attrs.push((name.clone(), proposed_nested_block(bt, &prior_v, &config_v)));
    }
    // Attributes, then blocks, each sorted: `Entries` merges the two.
    Value::object_of(attrs.into_iter().collect()).with_sensitive(config.is_sensitive())
}

fn proposed_nested_block(bt: &NestedBlock, prior: &Value, config: &Value) -> Value {
    if !config.is_known() {
        return config.clone();
    }
    let nested = Nested::Block(&bt.block);
    match bt.nesting {
        BlockNesting::Single if config.is_null() => config.clone(),
        BlockNesting::Single | BlockNesting::Group => proposed_new(&bt.block, prior, config),
        BlockNesting::List => nesting_list(nested, prior, config),
        BlockNesting::Map => nesting_map(nested, prior, config),
        BlockNesting::Set => nesting_set(nested, prior, config),
    }
}

/// The proposed attributes, in key order.
fn proposed_attributes(
    attrs: &BTreeMap<String, Attribute>,
    prior: &Value,
    config: &Value,
) -> Vec<(String, Value)> {
    let mut out = Vec::with_capacity(attrs.len());
    let (mut prior_in, mut config_in) = (InOrder::new(prior), InOrder::new(config));
    for (name, attr) in attrs {
        let prior_v = prior_in.get(name, || attr.implied_type());
        let config_v = config_in.get(name, || attr.implied_type());
        let new_v = if attr.computed && config_v.is_null() {
            match attr.nested_object() {
                Some(obj) if attr.optional && has_configured_nested_value(obj, &prior_v) => {
                    config_v
                }
                _ => prior_v,
            }
        } else if let Some(obj) = attr.nested_object() {
            proposed_nested_type(obj, &prior_v, &config_v)
        } else {
            config_v
        };
        out.push((name.clone(), new_v));
    }
    out
}

/// Whether a prior nested value holds a non-null value for a non-computed
/// nested attribute, which only configuration can have set.
fn has_configured_nested_value(obj: &NestedObject, prior: &Value) -> bool {
    if !prior.is_known() || prior.is_null() {
        return false;
    }
    let elems: Vec<&Value> = match obj.nesting {
        ObjectNesting::Single => vec![prior],
        _ => match (prior.elements(), prior.entries()) {
            (Some(es), _) => es.iter().collect(),
            (_, Some(m)) => m.values().collect(),
            _ => Vec::new(),
        },
    };
    elems.into_iter().any(|e| {
        obj.attributes.iter().any(|(name, a)| {
            let v = attr_of(e, name, || a.implied_type());
            match a.nested_object() {
                Some(inner) if a.computed => has_configured_nested_value(inner, &v),
                _ if a.computed => false,
                _ => !v.is_null(),
            }
        })
    })
}

fn proposed_nested_type(obj: &NestedObject, prior: &Value, config: &Value) -> Value {
    if !config.is_known() {
        return config.clone();
    }
    let nested = Nested::Object(obj);
    match obj.nesting {
        ObjectNesting::Single if config.is_null() => config.clone(),
        ObjectNesting::Single => proposed_object(nested, prior, config),
        ObjectNesting::List => nesting_list(nested, prior, config),
        ObjectNesting::Map => nesting_map(nested, prior, config),
        ObjectNesting::Set => nesting_set(nested, prior, config),
    }
}

/// Merges one element: a block recurses through `proposed_new`, a nested
/// object merges its attributes.
fn proposed_object(nested: Nested<'_>, prior: &Value, config: &Value) -> Value {
    match nested {
        Nested::Block(b) => proposed_new(b, prior, config),
        Nested::Object(o) => {
            if config.is_null() || !config.is_known() {
                return config.clone();
            }
            Value::object_of(
                proposed_attributes(&o.attributes, prior, config)
                    .into_iter()
                    .collect(),
            )
            .with_sensitive(config.is_sensitive())
        }
    }
}

fn nesting_list(nested: Nested<'_>, prior: &Value, config: &Value) -> Value {
    let Some(config_elems) = config.elements().filter(|es| !es.is_empty()) else {
        return config.clone();
    };
    let prior_elems = prior.elements();
    let mut out = Vec::with_capacity(config_elems.len());
    for (i, cev) in config_elems.iter().enumerate() {
        let pev = if !prior.is_known() {
            Value::unknown(nested.element_type())
        } else {
            match prior_elems.and_then(|es| es.get(i)) {
                Some(p) => p.clone(),
                None => {
                    out.push(cev.clone());
                    continue;
                }
            }
        };
        out.push(proposed_object(nested, &pev, cev));
    }
    rebuild_seq(config, out)
}

fn nesting_map(nested: Nested<'_>, prior: &Value, config: &Value) -> Value {
    let Some(config_map) = config.entries().filter(|m| !m.is_empty()) else {
        return config.clone();
    };
    let prior_map = prior.entries();
    let mut out = BTreeMap::new();
    // Elements with no prior element are the configuration's elements
    // unchanged, as in Terraform: their computed attributes stay null and
    // dynamic nulls keep their type. A wholly unknown prior (a data source's
    // planned object) has no elements when the map is an object (dynamic
    // attributes inside); a typed map indexes it, and its elements' computed
    // attributes become unknown.
    let object = matches!(config.ty(), Type::Object(_));
    for (k, cev) in config_map.iter() {
        let pev = if !prior.is_known() {
            (!object).then(|| Value::unknown(nested.element_type()))
        } else {
            prior_map.and_then(|m| m.get(k)).cloned()
        };
        let new_v = match pev {
            Some(pev) => proposed_object(nested, &pev, cev),
            None => cev.clone(),
        };
        out.insert(k.clone(), new_v);
    }
    let v = match config.ty() {
        Type::Object(_) => Value::object(out),
        t => Value::map(t.element_type().cloned().unwrap_or(Type::Dynamic), out),
    };
    v.with_sensitive(config.is_sensitive())
}

fn nesting_set(nested: Nested<'_>, prior: &Value, config: &Value) -> Value {
    let Some(config_elems) = config.elements().filter(|es| !es.is_empty()) else {
        return config.clone();
    };
    let prior_elems: &[Value] = if prior.is_known() {
        prior.elements().unwrap_or(&[])
    } else {
        &[]
    };
    let mut used = vec![false; prior_elems.len()];
    let mut out = Vec::with_capacity(config_elems.len());
    for cev in config_elems.iter() {
        let found = prior_elems
            .iter()
            .enumerate()
            .find(|(i, p)| !used[*i] && valid_prior_from_config(nested, p, cev));
        let pev = match found {
            Some((i, p)) => {
                used[i] = true;
                p.clone()
            }
            // A nested attribute's element with no prior is the
            // configuration's element as it is; a block merges against null.
            None if matches!(nested, Nested::Object(_)) => {
                out.push(cev.clone());
                continue;
            }
            None => Value::null(nested.element_type()),
        };
        out.push(proposed_object(nested, &pev, cev));
    }
    let elem = config.ty().element_type().cloned().unwrap_or(Type::Dynamic);
    Value::set(elem, out).with_sensitive(config.is_sensitive())
}

fn rebuild_seq(config: &Value, elems: Vec<Value>) -> Value {
    let v = match config.ty() {
        Type::Tuple(_) => Value::tuple(elems),
        t => Value::list(t.element_type().cloned().unwrap_or(Type::Dynamic), elems),
    };
    v.with_sensitive(config.is_sensitive())
}

/// Whether `prior` could be the prior state of set element `config`: equal
/// (ignoring refinements), or differing only in computed leaf attributes
/// that configuration leaves null. Nested sets must match exactly.
fn valid_prior_from_config(nested: Nested<'_>, prior: &Value, config: &Value) -> bool {
    prior.eq_ignoring_refinements(config) || object_walk(nested, prior, config)
}

fn object_walk(nested: Nested<'_>, prior: &Value, config: &Value) -> bool {
    if prior.eq_ignoring_refinements(config) {
        return true;
    }
    if !prior.is_known() || !config.is_known() || prior.is_null() || config.is_null() {
        return false;
    }
    for (name, attr) in nested.attributes() {
        let (p, c) = (
            attr_of(prior, name, || attr.implied_type()),
            attr_of(config, name, || attr.implied_type()),
        );
        if p.eq_ignoring_refinements(&c) {
            continue;
        }
        if matches!(c.ty(), Type::Set(_)) {
            return false;
        }
        let ok = match attr.nested_object() {
            Some(obj) => elements_walk(
                Nested::Object(obj),
                obj.nesting == ObjectNesting::Single,
                &p,
                &c,
            ),
            None => attr.computed && c.is_null(),
        };
        if !ok {
            return false;
        }
    }
    if let Nested::Block(b) = nested {
        for (name, bt) in &b.block_types {
            let (p, c) = (
                attr_of(prior, name, || bt.implied_type()),
                attr_of(config, name, || bt.implied_type()),
            );
            if p.eq_ignoring_refinements(&c) {
                continue;
            }
            if matches!(c.ty(), Type::Set(_)) {
                return false;
            }
            let single = matches!(bt.nesting, BlockNesting::Single | BlockNesting::Group);
            if !elements_walk(Nested::Block(&bt.block), single, &p, &c) {
                return false;
            }
        }
    }
    true
}

/// Walks a nested value: a single object, or corresponding elements of a
/// list/tuple (by index) or map/object (by key), which must line up.
fn elements_walk(nested: Nested<'_>, single: bool, prior: &Value, config: &Value) -> bool {
    if single {
        return object_walk(nested, prior, config);
    }
    if let (Some(pe), Some(ce)) = (prior.elements(), config.elements()) {
        return pe.len() == ce.len()
            && pe
                .iter()
                .zip(ce.iter())
                .all(|(p, c)| object_walk(nested, p, c));
    }
    if let (Some(pm), Some(cm)) = (prior.entries(), config.entries()) {
        return pm.len() == cm.len()
            && pm
                .iter()
                .all(|(k, p)| cm.get(k).is_some_and(|c| object_walk(nested, p, c)));
    }
    false
}
