//! Deferred changes: the part of a plan that cannot be planned yet. With
//! deferral on (the default; `Options::defer`), a resource whose `count`
//! or `for_each` is unknown, every resource of a module call whose
//! expansion is unknown, every resource that depends on a deferred one,
//! and every instance a provider answers `Deferred` for are left out of
//! the plan and listed here with the reason. Apply applies the rest; the
//! next plan, with the prerequisites now in state, plans what was
//! deferred. Their objects already in state are kept (never orphaned).
//!
//! Layering: the bottom layer (the plan model holds these); the plan
//! driver finds what to defer.

use terrane_config::SourceRange;
use terrane_state::{Mode, ResourceAddr};

/// Why a part of the plan is deferred (Terraform's JSON plan reasons).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeferReason {
    /// `count` / `for_each` (of the resource or of a module call above
    /// it) is not known until apply.
    InstanceCountUnknown,
    /// The provider deferred: the resource's configuration is unknown.
    ResourceConfigUnknown,
    /// The provider deferred: its own configuration is unknown.
    ProviderConfigUnknown,
    /// The provider deferred: something it needs does not exist yet.
    AbsentPrereq,
    /// It depends on something deferred.
    DeferredPrereq,
}

impl DeferReason {
    /// The reason as Terraform's JSON plan (`deferred_changes`) spells it.
    pub fn json(self) -> &'static str {
        match self {
            DeferReason::InstanceCountUnknown => "instance_count_unknown",
            DeferReason::ResourceConfigUnknown => "resource_config_unknown",
            DeferReason::ProviderConfigUnknown => "provider_config_unknown",
            DeferReason::AbsentPrereq => "absent_prereq",
            DeferReason::DeferredPrereq => "deferred_prereq",
        }
    }

    pub fn from_json(s: &str) -> Option<DeferReason> {
        [
            DeferReason::InstanceCountUnknown,
            DeferReason::ResourceConfigUnknown,
            DeferReason::ProviderConfigUnknown,
            DeferReason::AbsentPrereq,
            DeferReason::DeferredPrereq,
        ]
        .into_iter()
        .find(|r| r.json() == s)
    }
}

/// One deferred part of a plan.
#[derive(Clone, Debug, PartialEq)]
pub struct Deferred {
    /// What is deferred: an instance address, or a resource address with
    /// `[*]` where the instances are not known (`module.m[*].t.n[*]`).
    pub addr: String,
    /// The resource's configuration: module call names, mode, type, name.
    pub module_cfg: Vec<String>,
    pub mode: Mode,
    pub ty: String,
    pub name: String,
    pub reason: DeferReason,
    /// For people: what it waits on.
    pub detail: String,
    /// The expression or block responsible, when there is one.
    pub range: Option<SourceRange>,
}

impl Deferred {
    /// Whether an object of `raddr` in state belongs to this deferred
    /// resource (and must be kept, not orphaned).
    pub fn covers(&self, raddr: &ResourceAddr) -> bool {
        raddr.mode == self.mode
            && raddr.ty == self.ty
            && raddr.name == self.name
            && raddr.module.0.len() == self.module_cfg.len()
            && raddr
                .module
                .0
                .iter()
                .zip(&self.module_cfg)
                .all(|((n, _), c)| n == c)
    }
}

/// A resource's address in one module instance (text), with `[*]` when
/// its instances are not known.
pub fn resource_text(module: &str, mode: Mode, ty: &str, name: &str, repeated: bool) -> String {
    let mut s = String::new();
    if !module.is_empty() {
        s.push_str(module);
        s.push('.');
    }
    if mode == Mode::Data {
        s.push_str("data.");
    }
    s.push_str(&format!("{ty}.{name}"));
    if repeated {
        s.push_str("[*]");
    }
    s
}
