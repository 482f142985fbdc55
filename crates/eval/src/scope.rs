//! What names mean during evaluation. The engine decides what `var`,
//! `local`, `count`, `each`, resource types, `data`, `module`, `path` and
//! `terraform` resolve to; the evaluator only asks for root names and adds
//! the names that `for` expressions and template directives bind.

use std::collections::BTreeMap;
use terrane_value::Value;

/// A better diagnostic for a reference that does not resolve, chosen by
/// the scope (it knows the configuration): e.g. "Reference to undeclared
/// input variable".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Missing {
    pub summary: String,
    pub detail: String,
}

/// Root names of an evaluation.
pub trait Scope {
    /// The value of root name `name` (`var`, `local`, `aws_instance`, ...),
    /// or `None` when the name means nothing here.
    fn root(&self, name: &str) -> Option<Value>;

    /// An attribute `attr` of root `name` that does not exist: a specific
    /// diagnostic, or `None` for the generic "Unsupported attribute".
    fn missing_attr(&self, _name: &str, _attr: &str) -> Option<Missing> {
        None
    }

    /// The value of `root.attr` when the scope can give it without building
    /// the whole root object (large resource sets); `None` falls back to
    /// [`Scope::root`] followed by an attribute access.
    fn root_attr(&self, _name: &str, _attr: &str) -> Option<Value> {
        None
    }
}

/// A scope of fixed root values: tests, `terrane console`-style use and
/// small evaluations.
#[derive(Clone, Debug, Default)]
pub struct MapScope {
    pub roots: BTreeMap<String, Value>,
}

impl MapScope {
    pub fn new() -> MapScope {
        MapScope::default()
    }

    /// Adds (or replaces) a root name.
    pub fn with(mut self, name: &str, value: Value) -> MapScope {
        self.roots.insert(name.to_string(), value);
        self
    }
}

impl Scope for MapScope {
    fn root(&self, name: &str) -> Option<Value> {
        self.roots.get(name).cloned()
    }
}
