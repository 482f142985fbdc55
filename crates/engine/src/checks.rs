//! The provider contract, enforced: every check of the lifecycle (refresh,
//! plan, final plan, apply, data source, upgrade, import), reported with
//! Terraform's titles, the resource address, the attribute path and both
//! values (sensitive ones redacted). A provider that fails a check never
//! gets its value into state.

use crate::provider::{Diagnostics as ProviderDiags, ProviderError};
use terrane_config::{Diagnostic, SourceRange};
use terrane_schema::objchange::{assert_object_compatible, assert_plan_valid, PlanError};
use terrane_schema::Block;
use terrane_state::InstanceAddr;
use terrane_value::{Kind, Path, Type, Value};

const BUG: &str =
    "This is a bug in the provider, which should be reported in the provider's own issue tracker.";

/// The one place a provider call's transport failure (a crash, a broken
/// connection, a protocol error) becomes a diagnostic: "Provider failed"
/// at `range`, saying what was being done when `doing` names it. `None`
/// then; the answer otherwise.
pub fn answered<T>(
    out: &mut Vec<Diagnostic>,
    r: Result<T, ProviderError>,
    range: &Option<SourceRange>,
    doing: Option<&str>,
) -> Option<T> {
    answered_as(out, r, PROVIDER_FAILED, range, doing)
}

/// The summary of a provider call that failed in transport.
pub const PROVIDER_FAILED: &str = "Provider failed";

/// [`answered`] with another summary (configuring a provider says
/// "Failed to configure provider", as Terraform does).
pub fn answered_as<T>(
    out: &mut Vec<Diagnostic>,
    r: Result<T, ProviderError>,
    summary: &str,
    range: &Option<SourceRange>,
    doing: Option<&str>,
) -> Option<T> {
    match r {
        Ok(v) => Some(v),
        Err(e) => {
            let detail = match doing {
                Some(what) => format!("{e} (while {what})"),
                None => e.to_string(),
            };
            out.push(Diagnostic::error(summary, detail, range.clone()));
            None
        }
    }
}

/// Converts a provider's diagnostics into configuration diagnostics at the
/// resource, naming the address and the attribute path.
pub fn provider_diags(
    d: &ProviderDiags,
    addr: &str,
    range: &Option<SourceRange>,
) -> Vec<Diagnostic> {
    provider_diags_at(d, addr, range, &|_| None)
}

/// A provider's diagnostics about an object no configuration describes
/// any more (a deposed object): Terraform places them nowhere and names
/// no address.
pub fn provider_diags_unplaced(d: &ProviderDiags) -> Vec<Diagnostic> {
    provider_diags_at(d, "", &None, &|_| None)
}

/// Like [`provider_diags`], but a diagnostic with an attribute path is
/// placed where `at` finds that attribute in the configuration, as
/// Terraform does (falling back to `range` and naming the path).
pub fn provider_diags_at(
    d: &ProviderDiags,
    addr: &str,
    range: &Option<SourceRange>,
    at: &dyn Fn(&Path) -> Option<SourceRange>,
) -> Vec<Diagnostic> {
    d.iter()
        .map(|pd| {
            let mut detail = pd.detail.clone();
            let mut range = range.clone();
            if let Some(p) = &pd.path {
                if !p.is_root() {
                    match at(p) {
                        Some(r) => range = Some(r),
                        None => detail = format!("{detail}\n\n  on attribute {p}"),
                    }
                }
            }
            if !addr.is_empty() {
                detail = format!("{detail}\n\n  with {addr}")
                    .trim_start()
                    .to_string();
            }
            Diagnostic {
                severity: pd.severity,
                summary: pd.summary.clone(),
                detail,
                range,
                ..Default::default()
            }
        })
        .collect()
}

/// Where the attribute `p` is written in a body with these arguments and
/// nested blocks: the argument's expression, or the nested block (static
/// blocks only; the innermost one found when the path goes deeper than
/// what is written).
pub fn attribute_range(
    p: &Path,
    attributes: &std::collections::BTreeMap<String, terrane_config::Expr>,
    blocks: &[terrane_config::NestedBlock],
) -> Option<SourceRange> {
    use terrane_value::Step;
    let [Step::Attr(name), rest @ ..] = p.0.as_slice() else {
        return None;
    };
    if let Some(e) = attributes.get(name) {
        return e.range.clone();
    }
    let mut of_type = blocks
        .iter()
        .filter(|b| b.type_name == *name && b.dynamic.is_none());
    let (block, rest) = match rest {
        [Step::Index(i), rest @ ..] => (of_type.nth(usize::try_from(*i).ok()?), rest),
        [Step::Key(k), rest @ ..] => (of_type.find(|b| b.labels.first() == Some(k)), rest),
        _ => (of_type.next(), rest),
    };
    let block = block?;
    attribute_range(&Path(rest.to_vec()), &block.attributes, &block.blocks)
        .or_else(|| block.range.clone())
}

fn bug(summary: &str, detail: String, range: &Option<SourceRange>) -> Diagnostic {
    Diagnostic::error(summary, format!("{detail}\n\n{BUG}"), range.clone())
}

/// Whether any unknown remains anywhere in `v`.
pub fn has_unknowns(v: &Value) -> bool {
    !v.is_wholly_known()
}

/// Paths of unknown values inside `v` (for messages).
pub fn unknown_paths(v: &Value) -> Vec<Path> {
    fn walk(v: &Value, p: &mut Path, out: &mut Vec<Path>) {
        match v.kind() {
            Kind::Unknown(_) => out.push(p.clone()),
            Kind::Seq(es) | Kind::Set(es) => {
                for (i, e) in es.iter().enumerate() {
                    p.push(terrane_value::Step::Index(i as i64));
                    walk(e, p, out);
                    p.pop();
                }
            }
            Kind::Map(m) => {
                for (k, e) in m.iter() {
                    p.push(terrane_value::Step::Attr(k.clone()));
                    walk(e, p, out);
                    p.pop();
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(v, &mut Path::root(), &mut out);
    out
}

fn join(errs: &[PlanError]) -> String {
    errs.iter()
        .map(|e| format!("  - {e}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// After ReadResource: the new state must be wholly known and of the
/// schema's type.
pub fn check_refresh(
    ty: &Type,
    provider: &str,
    addr: &InstanceAddr,
    new: &Value,
    range: &Option<SourceRange>,
) -> Option<Diagnostic> {
    if new.is_null() {
        return None;
    }
    if !new.ty().conforms_to(ty) {
        return Some(bug("Provider produced invalid object", format!("Provider {provider:?} produced an invalid value after refresh for {addr}: the value does not conform to the schema's type."), range));
    }
    let unknown = unknown_paths(new);
    if !unknown.is_empty() {
        return Some(bug(
            "Provider produced invalid object",
            format!("Provider {provider:?} produced an invalid value after refresh for {addr}: unknown values at {}.", unknown.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")),
            range,
        ));
    }
    None
}

/// What a plan check is about: the instance, its schema, the provider
/// (as named in messages) and where the resource is written.
pub struct Subject<'a> {
    pub schema: &'a Block,
    /// `schema`'s implied type (the resource's, computed once).
    pub ty: &'a Type,
    pub provider: &'a str,
    pub addr: &'a InstanceAddr,
    pub range: &'a Option<SourceRange>,
}

/// After PlanResourceChange: type conformance and every plan-validity
/// rule. With the legacy type system flag the violations are tolerated
/// and logged (`TF_LOG=warn`), as Terraform does.
pub fn check_plan(
    s: &Subject,
    prior: &Value,
    config: &Value,
    planned: &Value,
    legacy: bool,
) -> Vec<Diagnostic> {
    let Subject {
        schema,
        ty,
        provider,
        addr,
        range,
    } = *s;
    if !planned.is_null() && !planned.ty().conforms_to(ty) {
        return vec![bug("Provider produced invalid plan", format!("Provider {provider:?} planned an invalid value for {addr}: the planned value does not conform to the schema's type."), range)];
    }
    let errs = assert_plan_valid(schema, prior, config, planned);
    if errs.is_empty() {
        return Vec::new();
    }
    if legacy {
        // Terraform tolerates these for the legacy SDK and only logs them
        // (a [WARN] line, no diagnostic): the user's output stays clean.
        terrane_plugin::log_warn(&format!("Provider {provider:?} produced an invalid plan for {addr}, but we are tolerating it because it is using the legacy plugin SDK.\n    The following problems may be the cause of any confusing errors from downstream operations:\n{}", join(&errs)));
        return Vec::new();
    }
    errs.iter()
        .map(|e| {
            bug(
                "Provider produced invalid plan",
                format!(
                    "Provider {provider:?} planned an invalid value for {addr}{}: {}.",
                    path_suffix(&e.path),
                    e.message
                ),
                range,
            )
        })
        .collect()
}

fn path_suffix(p: &Path) -> String {
    if p.is_root() {
        String::new()
    } else {
        p.to_string()
    }
}

/// During apply: the final plan (known config) must be compatible with the
/// plan the user approved.
pub fn check_final_plan(s: &Subject, initial: &Value, fin: &Value) -> Vec<Diagnostic> {
    let Subject {
        schema,
        provider,
        addr,
        range,
        ..
    } = *s;
    assert_object_compatible(schema, initial, fin)
        .iter()
        .map(|e| {
            bug(
                "Provider produced inconsistent final plan",
                format!("When expanding the plan for {addr} to include new values learned so far during apply, provider {provider:?} produced an invalid new value for {}: {}.", describe_path(addr, &e.path), e.message),
                range,
            )
        })
        .collect()
}

fn describe_path(addr: &InstanceAddr, p: &Path) -> String {
    if p.is_root() {
        addr.to_string()
    } else {
        format!("{addr}{p}")
    }
}

/// What an ApplyResourceChange did: a delete, or a create or update
/// (with the legacy type-system flag or not).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Applied {
    Deleted,
    Changed { legacy: bool },
}

/// After ApplyResourceChange: the new state must be wholly known,
/// conform, and match every known planned value.
pub fn check_apply(
    schema: &Block,
    provider: &str,
    addr: &InstanceAddr,
    planned: &Value,
    new: &Value,
    what: Applied,
    range: &Option<SourceRange>,
) -> Vec<Diagnostic> {
    let legacy = what == Applied::Changed { legacy: true };
    if what == Applied::Deleted {
        if !new.is_null() {
            return vec![bug("Provider returned invalid result object after apply", format!("After applying a destroy plan for {addr}, provider {provider:?} returned a non-null object."), range)];
        }
        return Vec::new();
    }
    if new.is_null() {
        // Terraform 1.15 reports a null result of a create or update as an
        // inconsistent result (the contract test runs it under Terraform).
        return vec![bug("Provider produced inconsistent result after apply", format!("When applying changes to {addr}, provider {provider:?} produced an unexpected new value: Root object was present, but now absent."), range)];
    }
    if !new.ty().conforms_to(&schema.implied_type()) {
        return vec![bug("Provider produced invalid object", format!("Provider {provider:?} produced an invalid value after apply for {addr}: the value does not conform to the schema's type."), range)];
    }
    let unknown = unknown_paths(new);
    if !unknown.is_empty() {
        return vec![bug(
            "Provider returned invalid result object after apply",
            format!(
                "After the apply operation, the provider still indicated an unknown value for {}. All values must be known after apply, so this is always a bug in the provider and should be reported in the provider's own repository. Terraform will still save the other known object values in the state.",
                unknown.iter().map(|p| describe_path(addr, p)).collect::<Vec<_>>().join(", ")
            ),
            range,
        )];
    }
    let errs = assert_object_compatible(schema, planned, new);
    if legacy && !errs.is_empty() {
        // As with plans: tolerated for the legacy SDK, logged only.
        terrane_plugin::log_warn(&format!("Provider {provider:?} produced an unexpected new value for {addr}, but we are tolerating it because it is using the legacy plugin SDK.\n    The following problems may be the cause of any confusing errors from downstream operations:\n{}", join(&errs)));
        return Vec::new();
    }
    errs.iter()
        .map(|e| {
            bug(
                "Provider produced inconsistent result after apply",
                format!("When applying changes to {addr}, provider {provider:?} produced an unexpected new value: {}.", e),
                range,
            )
        })
        .collect()
}

/// After ReadDataSource: a known, conforming, non-null object.
pub fn check_data(
    ty: &Type,
    provider: &str,
    addr: &InstanceAddr,
    v: &Value,
    range: &Option<SourceRange>,
) -> Option<Diagnostic> {
    if v.is_null() {
        return Some(bug(
            "Provider produced null object",
            format!("Provider {provider:?} produced a null value for {addr}."),
            range,
        ));
    }
    if !v.ty().conforms_to(ty) {
        return Some(bug("Provider produced invalid object", format!("Provider {provider:?} produced a value for {addr} that is not of the schema's type."), range));
    }
    if has_unknowns(v) {
        return Some(bug(
            "Provider produced invalid object",
            format!("Provider {provider:?} produced a value for {addr} that is not wholly known."),
            range,
        ));
    }
    None
}

/// After UpgradeResourceState: known and conforming.
pub fn check_upgrade(
    ty: &Type,
    provider: &str,
    addr: &InstanceAddr,
    v: &Value,
    range: &Option<SourceRange>,
) -> Option<Diagnostic> {
    if !v.is_null() && (!v.ty().conforms_to(ty) || has_unknowns(v)) {
        return Some(bug("Invalid resource state upgrade", format!("The {provider:?} provider upgraded the state for {addr} from a previous version, but produced an invalid result."), range));
    }
    None
}

/// Where `e` takes an ephemeral value from, in the module `c`, as
/// Terraform names it ("var.token", "ephemeral.random_password.db",
/// "module.db.password"): an `ephemeral` block, an input variable or a
/// child module's output declared `ephemeral`, or a local derived from
/// them; references inside `ephemeralasnull(...)` are not sources. Found
/// from the references, so it holds at validate, before any value is
/// known (values also carry an ephemeral mark, which `ephemeralasnull`
/// reads).
pub fn ephemeral_source(c: &terrane_config::Config, e: &terrane_config::Expr) -> Option<String> {
    fn walk(
        c: &terrane_config::Config,
        e: &terrane_config::Expr,
        seen: &mut Vec<String>,
    ) -> Option<String> {
        use terrane_config::Subject;
        let m = &c.module;
        // What `ephemeralasnull(...)` takes does not make the result
        // ephemeral.
        let shielded = terrane_config::calls_of(e, "ephemeralasnull");
        let inside = |r: &terrane_config::Reference| {
            r.range.as_ref().is_some_and(|r| {
                shielded
                    .iter()
                    .any(|s| s.start.byte <= r.start.byte && r.end.byte <= s.end.byte)
            })
        };
        for r in e.refs.iter().filter(|r| !inside(r)) {
            match &r.subject {
                Subject::Ephemeral { ty, name } => return Some(format!("ephemeral.{ty}.{name}")),
                Subject::Var(n) if m.variables.get(n).is_some_and(|v| v.ephemeral) => {
                    return Some(format!("var.{n}"))
                }
                Subject::Module(call) => {
                    let Some(child) = c.children.get(call) else {
                        continue;
                    };
                    let outs = &child.module.outputs;
                    let found = match &r.attr {
                        Some((o, _)) => outs.get(o).is_some_and(|o| o.ephemeral).then(|| o.clone()),
                        // The whole module object holds every output.
                        None => outs.values().find(|o| o.ephemeral).map(|o| o.name.clone()),
                    };
                    if let Some(o) = found {
                        return Some(format!("module.{call}.{o}"));
                    }
                }
                Subject::Local(n) if !seen.contains(n) => {
                    seen.push(n.clone());
                    if let Some(found) = m.locals.get(n).and_then(|l| walk(c, l, seen)) {
                        return Some(found);
                    }
                }
                _ => {}
            }
        }
        None
    }
    walk(c, e, &mut Vec::new())
}

/// Terraform's rules on where ephemeral values may not go that need no
/// schema: a resource's `count` or `for_each`, and an output not declared
/// `ephemeral`, each error at the expression; and an ephemeral output of
/// the `root` module, at its block.
pub fn ephemeral_flows(c: &terrane_config::Config, root: bool, out: &mut Vec<Diagnostic>) {
    let m = &c.module;
    // Run at validate too, where Terraform does not see through module
    // outputs: those sources are left out here.
    let ephemeral_source = |c, e| ephemeral_source(c, e).filter(|s| !s.starts_with("module."));
    for r in &m.resources {
        if let Some(e) = &r.count {
            if ephemeral_source(c, e).is_some() {
                out.push(Diagnostic::error(
                    "Invalid count argument",
                    "The given \"count\" is derived from an ephemeral value, which means that Terraform cannot persist it between plan/apply rounds. Use only non-ephemeral values to specify the number of resource instances.",
                    e.range.clone(),
                ));
            }
        }
        if let Some(e) = &r.for_each {
            if ephemeral_source(c, e).is_some() {
                out.push(Diagnostic::error(
                    "Invalid for_each argument",
                    "The given \"for_each\" value is derived from an ephemeral value, which means that Terraform cannot persist it between plan/apply rounds. Use only non-ephemeral values to specify a resource's instance keys.",
                    e.range.clone(),
                ));
            }
        }
    }
    for o in m.outputs.values() {
        if root && o.ephemeral {
            out.push(Diagnostic::error(
                "Ephemeral output not allowed",
                "Ephemeral outputs are not allowed in context of a root module",
                o.range.clone(),
            ));
        }
        let Some(e) = &o.value else { continue };
        if !o.ephemeral && ephemeral_source(c, e).is_some() {
            out.push(Diagnostic::error(
                "Ephemeral value not allowed",
                "This output value is not declared as returning an ephemeral value, so it cannot be set to a result derived from an ephemeral value.",
                e.range.clone(),
            ));
        }
    }
}

/// The error for an ephemeral value in a managed resource's attribute
/// `name` that is not write-only (it would be stored).
pub fn ephemeral_attribute(name: &str, range: Option<SourceRange>) -> Diagnostic {
    Diagnostic::error(
        "Invalid use of ephemeral value",
        format!("Ephemeral values are not valid for {name:?}, because it is not a write-only attribute and must be persisted to state."),
        range,
    )
}
