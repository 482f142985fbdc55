//! The decisions of planning, as pure functions: which [`Action`] an
//! object gets and the [`Reason`] shown for it; which `requires_replace`
//! paths count; what `ignore_changes` keeps; whether `replace_triggered_by`
//! fires. No I/O, no provider calls and no walk: the callers gather the
//! facts (prior and planned values, what the user asked, what else is
//! changing) and act on the answer.
//!
//! Layering: this module imports only [`crate::model`] and the value,
//! schema, state and config crates.

use crate::model::{Action, Reason};
use terrane_config::{Reference, Subject};
use terrane_schema::Block;
use terrane_state::{InstanceKey, Mode};
use terrane_value::{Path, Value};

/// What planning found about one managed instance: all the choice of its
/// action depends on.
#[derive(Clone, Debug)]
pub struct Facts<'a> {
    /// The prior (refreshed) value without marks, null when no object
    /// exists yet.
    pub prior: &'a Value,
    /// The provider's planned value (for the prior object).
    pub planned: &'a Value,
    /// The stored object is tainted.
    pub tainted: bool,
    /// `-replace` names this instance.
    pub replace_requested: bool,
    /// A `replace_triggered_by` reference changes in this plan.
    pub replace_triggered: bool,
    /// The provider's `requires_replace` paths that change (see
    /// [`requires_replace`]).
    pub requires_replace: &'a [Path],
    /// `lifecycle { create_before_destroy = true }`.
    pub create_before_destroy: bool,
}

/// The action for a managed instance and why, where Terraform says why.
/// A replacement's cause is reported in Terraform's order: tainted, then
/// `-replace`, then `replace_triggered_by`, then `requires_replace`.
pub fn managed(f: &Facts) -> (Action, Option<Reason>) {
    if f.prior.is_null() {
        return (Action::Create, None);
    }
    let replace = if f.tainted {
        Some(Reason::Tainted)
    } else if f.replace_requested {
        Some(Reason::ReplaceByRequest)
    } else if f.replace_triggered {
        Some(Reason::ReplaceByTriggers)
    } else if !f.requires_replace.is_empty() {
        Some(Reason::CannotUpdate)
    } else {
        None
    };
    match replace {
        Some(reason) => (replacement(f.create_before_destroy), Some(reason)),
        None if f.planned.eq_ignoring_refinements(f.prior) => (Action::NoOp, None),
        None => (Action::Update, None),
    }
}

/// The replacing action: the new object first with create_before_destroy.
pub fn replacement(create_before_destroy: bool) -> Action {
    if create_before_destroy {
        Action::CreateThenDelete
    } else {
        Action::DeleteThenCreate
    }
}

/// The `requires_replace` paths a provider returned that actually change
/// between `prior` and `planned` (or become unknown); a path present on
/// one side only changes, one absent on both does not.
pub fn requires_replace(paths: Vec<Path>, prior: &Value, planned: &Value) -> Vec<Path> {
    paths
        .into_iter()
        .filter(|p| match (p.apply(prior).ok(), p.apply(planned).ok()) {
            (Some(a), Some(b)) => !a.eq_ignoring_refinements(b) || !b.is_wholly_known(),
            (None, None) => false,
            _ => true,
        })
        .collect()
}

/// How a data source instance is planned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DataPlan {
    /// Read now, during plan.
    ReadNow,
    /// Planned as a change (a read, during apply), for this reason.
    Defer(Action, Reason),
}

/// A data source is read during plan when its configuration is known and
/// nothing it depends on has a pending change. Unknown configuration is
/// the reason Terraform gives first.
pub fn data_source(config_known: bool, dependency_pending: bool) -> DataPlan {
    if !config_known {
        DataPlan::Defer(Action::Read, Reason::ReadBecauseConfigUnknown)
    } else if dependency_pending {
        DataPlan::Defer(Action::Read, Reason::ReadBecauseDependencyPending)
    } else {
        DataPlan::ReadNow
    }
}

/// The action of a drift refresh found: the object is gone, or changed.
pub fn drift(refreshed: &Value) -> Action {
    if refreshed.is_null() {
        Action::Delete
    } else {
        Action::Update
    }
}

/// The action applying a planned change performs once a replacement's old
/// object is out of the way: a create when no prior object remains.
pub fn apply_action(prior: &Value) -> Action {
    if prior.is_null() {
        Action::Create
    } else {
        Action::Update
    }
}

/// What the configuration still says about a stored object that no
/// instance of it claims.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrphanConfig {
    /// Its module (call or instance) is gone.
    NoModule,
    /// Its module exists but declares no such managed resource.
    NoResource,
    /// The resource is declared, with or without `count`/`for_each`.
    Resource { count: bool, for_each: bool },
}

/// Why an orphaned object is deleted.
pub fn orphan_reason(config: OrphanConfig, key: &InstanceKey) -> Reason {
    match config {
        OrphanConfig::NoModule => Reason::NoModule,
        OrphanConfig::NoResource => Reason::NoResourceConfig,
        OrphanConfig::Resource { count, for_each } => match key {
            InstanceKey::Int(_) if count => Reason::CountIndex,
            InstanceKey::Str(_) if for_each => Reason::EachKey,
            _ => Reason::WrongRepetition,
        },
    }
}

/// The action for an orphaned object: deleted, unless a `removed` block
/// with `destroy = false` says to forget it. `removed` is that block's
/// `destroy` setting, `None` without a block.
pub fn orphan_action(removed: Option<bool>) -> Action {
    match removed {
        Some(false) => Action::Forget,
        _ => Action::Delete,
    }
}

/// Whether applying this planned action re-applies `ignore_changes` to the
/// (now known) configuration: only updates keep prior values.
pub fn ignores_at_apply(action: Action) -> bool {
    action == Action::Update
}

/// An `ignore_changes` setting.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IgnoreChanges {
    /// `ignore_changes = all`.
    All,
    /// The listed top-level attributes.
    Attrs(Vec<String>),
}

impl IgnoreChanges {
    /// Reads the setting from its expression: `all`, or a list of
    /// attribute names (bare, traversals or strings). Anything else
    /// ignores nothing (the configuration check reports it).
    pub fn from_expr(e: &terrane_hcl::expr::Expression) -> IgnoreChanges {
        use terrane_hcl::expr::Expression;
        if e.to_string().trim() == "all" {
            return IgnoreChanges::All;
        }
        let mut names = Vec::new();
        if let Expression::Array(items) = e {
            for item in items.iter() {
                let name = match item {
                    Expression::Variable(v) => v.as_str().to_string(),
                    Expression::Traversal(t) => match &t.expr {
                        Expression::Variable(v) => v.as_str().to_string(),
                        _ => continue,
                    },
                    Expression::String(s) => s.value().to_string(),
                    _ => continue,
                };
                names.push(name);
            }
        }
        IgnoreChanges::Attrs(names)
    }
}

/// The configuration given to planning under `ignore_changes`: the
/// ignored attributes take their prior value. Nothing is ignored when
/// there is no prior object. `all` keeps the prior value of every
/// attribute the configuration may set (not purely computed ones).
pub fn ignore_changes(
    rule: &IgnoreChanges,
    schema: &Block,
    prior: &Value,
    config: &Value,
) -> Value {
    if prior.is_null() {
        return config.clone();
    }
    match rule {
        IgnoreChanges::All => {
            let mut out = config.entries().cloned().unwrap_or_default();
            for (k, v) in out.iter_mut() {
                let settable = schema
                    .attributes
                    .get(k)
                    .is_some_and(|a| !a.computed || a.optional);
                if let Some(p) = prior.get_attr(k).filter(|_| settable) {
                    *v = p.clone();
                }
            }
            Value::object_typed_of(config.ty(), out)
        }
        IgnoreChanges::Attrs(names) => {
            let mut out = config.clone();
            for name in names {
                if let (Some(entries), Some(pv)) = (out.entries(), prior.get_attr(name)) {
                    if entries.contains_key(name) {
                        let mut m = entries.clone();
                        m.insert(name.clone(), pv.clone());
                        out = Value::object_typed_of(config.ty(), m);
                    }
                }
            }
            out
        }
    }
}

/// Whether a `replace_triggered_by` list fires: one of the resources it
/// names (in the same module) has a pending change, as `changing` tells.
pub fn replace_triggered(refs: &[Reference], changing: impl Fn(Mode, &str, &str) -> bool) -> bool {
    refs.iter().any(|r| match &r.subject {
        Subject::Resource { data, ty, name } => {
            let mode = if *data { Mode::Data } else { Mode::Managed };
            changing(mode, ty, name)
        }
        _ => false,
    })
}

#[cfg(test)]
#[path = "decide_tests.rs"]
mod tests;
