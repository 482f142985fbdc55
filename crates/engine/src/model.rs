//! What a plan is: one [`Change`] per resource instance object (with the
//! action, before and after values, sensitive paths and what forced a
//! replacement), output changes, the refreshed prior state and the
//! diagnostics found. Also the marks a schema adds to a value, and the
//! dependencies Terraform records (transitive) from the direct ones kept.

use crate::provider::ProviderConfigKey;
use std::collections::BTreeMap;
use terrane_config::Diagnostic;
use terrane_state::{InstanceAddr, Snapshot};
use terrane_value::marks::{mark_paths, sensitive_paths};
use terrane_value::{Kind, Path, Step, Type, Value};

/// What happens to one object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Action {
    NoOp,
    Create,
    Read,
    Update,
    DeleteThenCreate,
    CreateThenDelete,
    Delete,
    Forget,
}

impl Action {
    /// The action list Terraform's JSON plan uses.
    pub fn json_actions(self) -> &'static [&'static str] {
        match self {
            Action::NoOp => &["no-op"],
            Action::Create => &["create"],
            Action::Read => &["read"],
            Action::Update => &["update"],
            Action::DeleteThenCreate => &["delete", "create"],
            Action::CreateThenDelete => &["create", "delete"],
            Action::Delete => &["delete"],
            Action::Forget => &["forget"],
        }
    }

    pub fn is_replace(self) -> bool {
        matches!(self, Action::DeleteThenCreate | Action::CreateThenDelete)
    }
}

/// Why an action was chosen, where Terraform says so.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reason {
    Tainted,
    CannotUpdate,
    ReplaceByRequest,
    ReplaceByTriggers,
    NoResourceConfig,
    NoModule,
    WrongRepetition,
    CountIndex,
    EachKey,
    ReadBecauseConfigUnknown,
    ReadBecauseDependencyPending,
}

impl Reason {
    pub fn json(&self) -> &'static str {
        match self {
            Reason::Tainted => "replace_because_tainted",
            Reason::CannotUpdate => "replace_because_cannot_update",
            Reason::ReplaceByRequest => "replace_by_request",
            Reason::ReplaceByTriggers => "replace_by_triggers",
            Reason::NoResourceConfig => "delete_because_no_resource_config",
            Reason::NoModule => "delete_because_no_module",
            Reason::WrongRepetition => "delete_because_wrong_repetition",
            Reason::CountIndex => "delete_because_count_index",
            Reason::EachKey => "delete_because_each_key",
            Reason::ReadBecauseConfigUnknown => "read_because_config_unknown",
            Reason::ReadBecauseDependencyPending => "read_because_dependency_pending",
        }
    }
}

/// One planned change of one object.
#[derive(Clone, Debug)]
pub struct Change {
    pub addr: InstanceAddr,
    pub deposed: Option<String>,
    pub provider: std::sync::Arc<ProviderConfigKey>,
    pub action: Action,
    /// Prior (refreshed) value, null for creates. Carries sensitive marks.
    pub before: Value,
    /// Planned value, null for deletes; may hold unknowns. Carries marks.
    pub after: Value,
    /// The schema's implied type.
    pub ty: Type,
    pub schema_version: i64,
    /// Paths whose change forced the replacement (changed ones only).
    pub requires_replace: Vec<Path>,
    pub planned_private: Vec<u8>,
    pub prior_private: Vec<u8>,
    pub reason: Option<Reason>,
    /// `Some(id)` when this change imports an existing object.
    pub importing: Option<String>,
    /// Resource addresses (configuration level) this object depends on.
    pub dependencies: Vec<String>,
    pub create_before_destroy: bool,
    /// The resource type's schema, for rendering nested blocks as blocks
    /// (`None` when unknown, as for a plan read back from a file).
    pub schema: Option<std::sync::Arc<terrane_schema::Block>>,
}

/// An output's change.
#[derive(Clone, Debug)]
pub struct OutputChange {
    pub before: Option<Value>,
    pub after: Value,
    pub sensitive: bool,
}

/// What kind of plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PlanMode {
    #[default]
    Normal,
    Destroy,
    RefreshOnly,
}

/// A whole plan.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    pub mode: PlanMode,
    /// Every object's change, sorted by address (no-ops included).
    pub changes: Vec<Change>,
    pub outputs: BTreeMap<String, OutputChange>,
    /// Changes made outside terrane that refresh found (before = previous
    /// run state, after = refreshed state).
    pub drift: Vec<Change>,
    /// The state as refresh left it (what apply starts from).
    pub prior_state: Option<Snapshot>,
    pub diagnostics: Vec<Diagnostic>,
    /// Root module input values used.
    pub variables: BTreeMap<String, Value>,
    pub lineage: String,
    pub serial: u64,
    /// Set when a saved plan is applied: the configuration must not have
    /// changed in ways that invalidate it.
    pub applyable: bool,
    /// Objects `moved` blocks move (from, to); apply records the moves.
    pub moved: Vec<(InstanceAddr, InstanceAddr)>,
    /// What could not be planned yet ([`crate::defer`]): a plan with
    /// deferred parts is partial; the next plan picks them up.
    pub deferred: Vec<crate::defer::Deferred>,
    /// When the plan was made (RFC 3339, UTC, whole seconds): what
    /// `plantimestamp()` gave during the plan, and gives again at apply.
    pub timestamp: String,
}

impl Plan {
    pub fn has_errors(&self) -> bool {
        self.diagnostics
            .iter()
            .any(|d| d.severity == terrane_config::Severity::Error)
    }

    /// Whether anything would change (resources or outputs).
    pub fn has_changes(&self) -> bool {
        // A refresh-only plan changes the state when refresh found drift.
        if self.mode == PlanMode::RefreshOnly && !self.drift.is_empty() {
            return true;
        }
        self.changes
            .iter()
            .any(|c| c.action != Action::NoOp || c.importing.is_some())
            || !self.moved.is_empty()
            || self.outputs.values().any(|o| {
                o.before.as_ref().is_none_or(|b| {
                    !b.eq_ignoring_refinements(&o.after) || !o.after.is_wholly_known()
                })
            })
    }

    /// Counts of (add, change, destroy) as Terraform's summary line shows.
    pub fn counts(&self) -> (usize, usize, usize) {
        let mut add = 0;
        let mut change = 0;
        let mut destroy = 0;
        for c in &self.changes {
            match c.action {
                Action::Create => add += 1,
                Action::Update => change += 1,
                Action::Delete => destroy += 1,
                Action::DeleteThenCreate | Action::CreateThenDelete => {
                    add += 1;
                    destroy += 1;
                }
                _ => {}
            }
            if c.importing.is_some() && c.action == Action::NoOp {
                // counted by the import summary
            }
        }
        (add, change, destroy)
    }
}

/// `v` marked sensitive where `config` carries marks and where the schema
/// declares an attribute sensitive, as Terraform marks a resource's planned
/// and applied values (so plans show `(sensitive value)` for them).
pub fn mark_config_and_schema(v: &Value, config: &Value, schema: &terrane_schema::Block) -> Value {
    let mut paths = sensitive_paths(config);
    // A write-only attribute is null in plans and state: a sensitive value
    // written to it leaves no mark there (Terraform records none).
    paths.retain(|p| match p.steps().first() {
        Some(Step::Attr(n)) => !schema.attributes.get(n).is_some_and(|a| a.write_only),
        _ => true,
    });
    for p in schema_sensitive_paths(schema, &v.unmark_deep()) {
        if !paths.contains(&p) {
            paths.push(p);
        }
    }
    mark_paths(v, &paths)
}

/// Paths of the attributes a schema declares sensitive that hold a value
/// in `v` (top-level and nested-block attributes).
pub fn schema_sensitive_paths(schema: &terrane_schema::Block, v: &Value) -> Vec<Path> {
    let mut out = Vec::new();
    walk_schema(schema, v, &mut Path::root(), &mut out);
    out
}

fn walk_schema(schema: &terrane_schema::Block, v: &Value, path: &mut Path, out: &mut Vec<Path>) {
    if v.is_null() || !v.is_known() {
        return;
    }
    for (name, a) in &schema.attributes {
        if a.sensitive {
            out.push(path.attr(name.clone()));
        }
    }
    for (name, nb) in &schema.block_types {
        let Some(child) = v.get_attr(name) else {
            continue;
        };
        path.push(Step::Attr(name.clone()));
        match child.kind() {
            Kind::Seq(es) => {
                for (i, e) in es.iter().enumerate() {
                    path.push(Step::Index(i as i64));
                    walk_schema(&nb.block, e, path, out);
                    path.pop();
                }
            }
            Kind::Map(m)
                if child.ty().object_type().is_none()
                    || nb.nesting == terrane_schema::BlockNesting::Map =>
            {
                for (k, e) in m.iter() {
                    path.push(Step::Key(k.clone()));
                    walk_schema(&nb.block, e, path, out);
                    path.pop();
                }
            }
            Kind::Map(_) => walk_schema(&nb.block, child, path, out),
            _ => {}
        }
        path.pop();
    }
}

/// The dependencies Terraform records, from the direct ones terrane keeps:
/// for every object, every resource and data source upstream (transitively,
/// through data sources too); data sources themselves record none. Keyed
/// by (instance address, deposed key).
pub fn closure_dependencies(
    s: &terrane_state::Snapshot,
) -> std::collections::HashMap<(InstanceAddr, Option<String>), Vec<String>> {
    let mut closure = DependencyClosure::default();
    for (raddr, r) in &s.resources {
        for inst in r.instances.values() {
            for o in inst.current.iter().chain(inst.deposed.values()) {
                closure.add_direct(raddr, &o.dependencies);
            }
        }
    }
    let mut out = std::collections::HashMap::new();
    for (raddr, r) in &s.resources {
        for (key, inst) in &r.instances {
            let addr = raddr.instance(key.clone());
            let objects = inst
                .current
                .iter()
                .map(|o| (None, o))
                .chain(inst.deposed.iter().map(|(k, o)| (Some(k.clone()), o)));
            for (deposed, o) in objects {
                out.insert((addr.clone(), deposed), closure.of(raddr, &o.dependencies));
            }
        }
    }
    out
}

/// [`closure_dependencies`] one object at a time: every object's direct
/// dependencies are added first ([`DependencyClosure::add_direct`]), then
/// each object's closure is asked for ([`DependencyClosure::of`]). It
/// holds the direct dependencies per configuration address (resource
/// blocks that record any) and the closures computed, not the objects.
#[derive(Default)]
pub struct DependencyClosure {
    /// Direct dependencies per configuration address (union over
    /// instances); an address recording none is absent.
    direct: std::collections::HashMap<String, std::collections::BTreeSet<String>>,
    memo: std::collections::HashMap<String, std::collections::BTreeSet<String>>,
}

impl DependencyClosure {
    /// Records the direct dependencies of one object of `resource`.
    pub fn add_direct(&mut self, resource: &terrane_state::ResourceAddr, deps: &[String]) {
        if deps.is_empty() {
            return;
        }
        let key = config_addr(&resource.instance(terrane_state::InstanceKey::None));
        self.direct
            .entry(key)
            .or_default()
            .extend(deps.iter().cloned());
    }

    /// The dependencies Terraform records for an object of `resource`
    /// whose direct ones are `deps`, sorted (none for a data source).
    pub fn of(&mut self, resource: &terrane_state::ResourceAddr, deps: &[String]) -> Vec<String> {
        use std::collections::BTreeSet;
        if resource.mode == terrane_state::Mode::Data {
            return Vec::new();
        }
        let mut all = BTreeSet::new();
        for d in deps {
            all.insert(d.clone());
            all.extend(self.close(d, &mut BTreeSet::new()));
        }
        all.into_iter().collect()
    }

    fn close(
        &mut self,
        a: &str,
        visiting: &mut std::collections::BTreeSet<String>,
    ) -> std::collections::BTreeSet<String> {
        use std::collections::BTreeSet;
        if let Some(m) = self.memo.get(a) {
            return m.clone();
        }
        if !visiting.insert(a.to_string()) {
            return BTreeSet::new();
        }
        let mut out = BTreeSet::new();
        let direct: Vec<String> = self
            .direct
            .get(a)
            .map(|d| d.iter().cloned().collect())
            .unwrap_or_default();
        for d in direct {
            out.extend(self.close(&d, visiting));
            out.insert(d);
        }
        visiting.remove(a);
        self.memo.insert(a.to_string(), out.clone());
        out
    }
}

/// `s` with every object's dependencies as Terraform records them (for
/// exports and `show -json`).
pub fn with_closure_dependencies(s: &terrane_state::Snapshot) -> terrane_state::Snapshot {
    let mut out = s.clone();
    set_closure_dependencies(&mut out);
    out
}

/// [`with_closure_dependencies`] in place (no second copy of the state).
pub fn set_closure_dependencies(out: &mut terrane_state::Snapshot) {
    let deps = closure_dependencies(out);
    for (raddr, r) in out.resources.iter_mut() {
        for (key, inst) in r.instances.iter_mut() {
            let addr = raddr.instance(key.clone());
            if let Some(o) = inst.current.as_mut() {
                o.dependencies = deps.get(&(addr.clone(), None)).cloned().unwrap_or_default();
            }
            for (k, o) in inst.deposed.iter_mut() {
                o.dependencies = deps
                    .get(&(addr.clone(), Some(k.clone())))
                    .cloned()
                    .unwrap_or_default();
            }
        }
    }
}

/// `module.m.aws_x.name` of an instance address (no instance keys).
pub fn config_addr(a: &InstanceAddr) -> String {
    let mut s = String::new();
    for (m, _) in &a.resource.module.0 {
        s.push_str(&format!("module.{m}."));
    }
    if a.resource.mode == terrane_state::Mode::Data {
        s.push_str("data.");
    }
    s.push_str(&format!("{}.{}", a.resource.ty, a.resource.name));
    s
}
