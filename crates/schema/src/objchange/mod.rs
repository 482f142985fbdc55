//! The objchange rules: pure functions that Terraform core applies between
//! configuration, prior state and provider responses, reimplemented from
//! the protocol reference (section 4).
//!
//! * [`proposed_new`] merges configuration and prior state into the proposed
//!   new state sent to PlanResourceChange; [`planned_data_resource_object`]
//!   is the same with a wholly unknown prior, for data reads deferred to
//!   apply; [`prepare_computed_blocks`] nulls empty computed blocks.
//! * [`assert_plan_valid`] checks a planned state against configuration and
//!   prior ("Provider produced invalid plan").
//! * [`assert_object_compatible`] checks that a later value is a valid
//!   completion of a planned one ("Provider produced inconsistent final
//!   plan" / "... inconsistent result after apply").
//! * [`normalize_from_legacy_sdk`] settles the legacy SDK's block
//!   artefacts (null for no blocks, and the like).
//!
//! All comparisons ignore refinements. Messages never show values of
//! sensitive attributes or sensitive-marked values.

mod compatible;
mod normalize;
mod plan_valid;
mod proposed;

pub use compatible::assert_object_compatible;
pub use normalize::normalize_from_legacy_sdk;
pub use plan_valid::assert_plan_valid;
pub use proposed::{
    planned_data_resource_object, prepare_computed_blocks, proposed_new, proposed_new_over,
};

use crate::{Attribute, Block, NestedObject};
use std::fmt;
use terrane_value::{Path, Type, Value};

/// A rule violation at a path of the checked object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanError {
    pub path: Path,
    pub message: String,
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_root() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for PlanError {}

fn err(path: &Path, message: impl Into<String>) -> PlanError {
    PlanError {
        path: path.clone(),
        message: message.into(),
    }
}

/// The schema of one element of a nested block or nested attribute: blocks
/// and nested-attribute objects share the correlation logic.
#[derive(Clone, Copy)]
enum Nested<'a> {
    Block(&'a Block),
    Object(&'a NestedObject),
}

impl<'a> Nested<'a> {
    fn attributes(self) -> &'a std::collections::BTreeMap<String, Attribute> {
        match self {
            Nested::Block(b) => &b.attributes,
            Nested::Object(o) => &o.attributes,
        }
    }

    fn element_type(self) -> Type {
        match self {
            Nested::Block(b) => b.implied_type(),
            Nested::Object(o) => o.object_type(),
        }
    }
}

/// Attribute `name` of an object value: unknown if `v` is unknown, null if
/// `v` is null or lacks it.
fn attr_of(v: &Value, name: &str, ty: impl FnOnce() -> Type) -> Value {
    if !v.is_known() {
        return Value::unknown(ty());
    }
    match v.get_attr(name) {
        Some(a) => a.clone(),
        None => Value::null(ty()),
    }
}

/// [`attr_of`] for names asked in key order (a schema's attributes, then
/// separately its block types): each lookup continues where the last one
/// ended, so reading every attribute of an object is one pass over its
/// entries rather than one search per name. A name asked out of order is
/// still found.
struct InOrder<'v> {
    v: &'v Value,
    rest: std::iter::Peekable<terrane_value::EntriesIter<'v>>,
}

impl<'v> InOrder<'v> {
    fn new(v: &'v Value) -> InOrder<'v> {
        static NONE: std::sync::OnceLock<terrane_value::Entries> = std::sync::OnceLock::new();
        let entries = v
            .entries()
            .unwrap_or_else(|| NONE.get_or_init(terrane_value::Entries::new));
        InOrder {
            v,
            rest: entries.iter().peekable(),
        }
    }

    fn get(&mut self, name: &str, ty: impl FnOnce() -> Type) -> Value {
        if !self.v.is_known() {
            return Value::unknown(ty());
        }
        match terrane_value::take_named(&mut self.rest, name) {
            Some(e) => e.clone(),
            None => attr_of(self.v, name, ty),
        }
    }
}

#[cfg(test)]
mod tests;
