//! Settling the legacy SDK's block artefacts, as Terraform's
//! NormalizeObjectFromLegacySDK does for objects from a provider that set
//! the legacy type-system flag.
//!
//! The legacy SDK cannot tell "no blocks" from "null", nor a missing
//! single block from an empty one. Normalized, an object has:
//! * attributes untouched (type conformance is all that is asked of them);
//! * a null or empty LIST/SET block as an empty collection, and each
//!   element normalized;
//! * a null GROUP block as its empty value; a SINGLE block normalized
//!   when present (a null one stays null);
//! * an unknown SINGLE/GROUP/LIST/SET block as a known stub whose leaf
//!   attributes are unknown (one element for a list or set);
//! * MAP blocks and blocks with dynamically typed attributes as they came
//!   (the legacy SDK has neither).

use crate::{Block, BlockNesting};
use std::collections::BTreeMap;
use terrane_value::Value;

/// `v` (an object of `block`'s implied type, or null) with the legacy SDK's
/// block artefacts settled; see the module docs.
pub fn normalize_from_legacy_sdk(block: &Block, v: &Value) -> Value {
    if v.is_null() || !v.is_known() {
        return match v.is_null() {
            true => Value::null(block.implied_type()),
            false => v.clone(),
        };
    }
    // Without nested blocks there is nothing to settle: an unmarked object
    // holding exactly the block's attributes comes back as it is, without
    // rebuilding it or its implied type (every read of a block-less type).
    if block.block_types.is_empty()
        && !v.is_sensitive()
        && v.entries().is_some_and(|e| {
            e.len() == block.attributes.len() && block.attributes.keys().all(|k| e.contains_key(k))
        })
    {
        return v.clone();
    }
    let mut attrs = BTreeMap::new();
    for name in block.attributes.keys() {
        if let Some(a) = v.get_attr(name) {
            attrs.insert(name.clone(), a.clone());
        }
    }
    for (name, nb) in &block.block_types {
        let Some(bv) = v.get_attr(name) else {
            continue;
        };
        let inner = &nb.block;
        let out = if inner.has_dynamic() {
            bv.clone()
        } else {
            match nb.nesting {
                BlockNesting::Single | BlockNesting::Group => {
                    if !bv.is_known() {
                        unknown_stub(inner)
                    } else if bv.is_null() && nb.nesting == BlockNesting::Group {
                        nb.empty_value()
                    } else {
                        normalize_from_legacy_sdk(inner, bv)
                    }
                }
                BlockNesting::List | BlockNesting::Set => {
                    let elems: Vec<Value> = if !bv.is_known() {
                        vec![unknown_stub(inner)]
                    } else {
                        bv.elements()
                            .unwrap_or_default()
                            .iter()
                            .map(|e| normalize_from_legacy_sdk(inner, e))
                            .collect()
                    };
                    let ty = inner.implied_type();
                    if nb.nesting == BlockNesting::List {
                        Value::list(ty, elems)
                    } else {
                        Value::set(ty, elems)
                    }
                }
                BlockNesting::Map => bv.clone(),
            }
        };
        attrs.insert(name.clone(), out);
    }
    Value::object_typed(&block.implied_type(), attrs)
}

/// A known block whose leaf attributes are all unknown: how an unknown
/// block is approximated.
fn unknown_stub(block: &Block) -> Value {
    let mut attrs = BTreeMap::new();
    for (name, a) in &block.attributes {
        attrs.insert(name.clone(), Value::unknown(a.implied_type()));
    }
    for (name, nb) in &block.block_types {
        let ty = nb.block.implied_type();
        let v = match nb.nesting {
            BlockNesting::Single | BlockNesting::Group => unknown_stub(&nb.block),
            BlockNesting::List => Value::list(ty, vec![unknown_stub(&nb.block)]),
            BlockNesting::Set => Value::set(ty, vec![unknown_stub(&nb.block)]),
            BlockNesting::Map => Value::map(ty, BTreeMap::new()),
        };
        attrs.insert(name.clone(), v);
    }
    Value::object_typed(&block.implied_type(), attrs)
}
