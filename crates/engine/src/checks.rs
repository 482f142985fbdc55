//! The provider contract, enforced: every check of the lifecycle (refresh,
//! plan, final plan, apply, data source, upgrade, import), reported with
//! Terraform's titles, the resource address, the attribute path and both
//! values (sensitive ones redacted). A provider that fails a check never
//! gets its value into state.

use crate::provider::{Diagnostics as ProviderDiags, ProviderError};
use terrane_config::{Diagnostic, Severity, SourceRange};
use terrane_schema::objchange::{assert_object_compatible, assert_plan_valid, PlanError};
use terrane_schema::Block;
use terrane_state::InstanceAddr;
use terrane_value::{Kind, Path, Value};

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
            detail = format!("{detail}\n\n  with {addr}")
                .trim_start()
                .to_string();
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
    schema: &Block,
    provider: &str,
    addr: &InstanceAddr,
    new: &Value,
    range: &Option<SourceRange>,
) -> Option<Diagnostic> {
    if new.is_null() {
        return None;
    }
    if !new.ty().conforms_to(&schema.implied_type()) {
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
    pub provider: &'a str,
    pub addr: &'a InstanceAddr,
    pub range: &'a Option<SourceRange>,
}

/// After PlanResourceChange: type conformance and every plan-validity
/// rule. With the legacy type system flag the violations are warnings.
pub fn check_plan(
    s: &Subject,
    prior: &Value,
    config: &Value,
    planned: &Value,
    legacy: bool,
) -> Vec<Diagnostic> {
    let Subject {
        schema,
        provider,
        addr,
        range,
    } = *s;
    if !planned.is_null() && !planned.ty().conforms_to(&schema.implied_type()) {
        return vec![bug("Provider produced invalid plan", format!("Provider {provider:?} planned an invalid value for {addr}: the planned value does not conform to the schema's type."), range)];
    }
    let errs = assert_plan_valid(schema, prior, config, planned);
    if errs.is_empty() {
        return Vec::new();
    }
    if legacy {
        return vec![Diagnostic {
            severity: Severity::Warning,
            summary: "Provider produced invalid plan".into(),
            detail: format!("Provider {provider:?} produced an invalid plan for {addr}, but we are tolerating it because it is using the legacy plugin SDK.\n    The following problems may be the cause of any confusing errors from downstream operations:\n{}", join(&errs)),
            range: range.clone(),
            ..Default::default()
        }];
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

/// After ApplyResourceChange: the new state must be wholly known,
/// conform, and match every known planned value.
pub fn check_apply(
    schema: &Block,
    provider: &str,
    addr: &InstanceAddr,
    planned: &Value,
    new: &Value,
    deleting: bool,
    range: &Option<SourceRange>,
) -> Vec<Diagnostic> {
    if deleting {
        if !new.is_null() {
            return vec![bug("Provider returned invalid result object after apply", format!("After applying a destroy plan for {addr}, provider {provider:?} returned a non-null object."), range)];
        }
        return Vec::new();
    }
    if new.is_null() {
        return vec![bug("Provider returned invalid result object after apply", format!("After the apply operation for {addr}, provider {provider:?} returned a null object, but the planned action was not a delete."), range)];
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
    assert_object_compatible(schema, planned, new)
        .iter()
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
    schema: &Block,
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
    if !v.ty().conforms_to(&schema.implied_type()) {
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
    schema: &Block,
    provider: &str,
    addr: &InstanceAddr,
    v: &Value,
    range: &Option<SourceRange>,
) -> Option<Diagnostic> {
    if !v.is_null() && (!v.ty().conforms_to(&schema.implied_type()) || has_unknowns(v)) {
        return Some(bug("Invalid resource state upgrade", format!("The {provider:?} provider upgraded the state for {addr} from a previous version, but produced an invalid result."), range));
    }
    None
}
