//! Custom conditions: variable `validation` rules, resource `precondition`
//! and `postcondition` blocks, output preconditions and `check` block
//! assertions. A condition that is not yet known waits for apply; a false
//! one fails with its error message (checks only warn, as Terraform's do).

use crate::values::InstanceVars;
use crate::walk::Walk;
use terrane_config::{CheckRule, Diagnostic, Severity};
use terrane_state::ModulePath;
use terrane_value::Type;

/// What a rule said.
pub enum Outcome {
    Pass,
    /// Not known yet (unknown values): decided during apply.
    Deferred,
    Fail(String),
    /// The condition itself is broken (errors already describe it).
    Invalid(Vec<Diagnostic>),
}

/// Evaluates one rule in `module` with instance names `inst`.
pub fn check(w: &Walk, module: &ModulePath, inst: &InstanceVars, rule: &CheckRule) -> Outcome {
    let Some(cond) = &rule.condition else {
        return Outcome::Pass;
    };
    let (v, d) = w.eval(module, inst.clone(), cond);
    if d.iter().any(|d| d.severity == Severity::Error) {
        return Outcome::Invalid(d);
    }
    let v = v.unmark_deep();
    if v.is_null() {
        return Outcome::Invalid(vec![Diagnostic::error(
            "Invalid condition result",
            "Condition expression must return either true or false, not null.",
            cond.range.clone(),
        )]);
    }
    match terrane_value::convert::convert(&v, &Type::Bool) {
        Ok(b) => match b.as_bool() {
            Some(true) => Outcome::Pass,
            Some(false) => Outcome::Fail(message(w, module, inst, rule)),
            None => Outcome::Deferred,
        },
        Err(_) => Outcome::Invalid(vec![Diagnostic::error(
            "Invalid condition result",
            "Invalid condition result value: a bool is required.",
            cond.range.clone(),
        )]),
    }
}

fn message(w: &Walk, module: &ModulePath, inst: &InstanceVars, rule: &CheckRule) -> String {
    let Some(e) = &rule.error_message else {
        return "The condition evaluated to false.".into();
    };
    let (v, d) = w.eval(module, inst.clone(), e);
    if !d.is_empty() {
        return "The condition evaluated to false (the error message could not be evaluated)."
            .into();
    }
    if v.has_sensitive() {
        return "The error message included a sensitive value, so it will not be displayed.".into();
    }
    v.as_str()
        .map(str::to_string)
        .unwrap_or_else(|| "The condition evaluated to false.".into())
}

/// Runs `rules`, reporting failures with `summary` (errors) and where they
/// were declared; returns false when any rule failed or was invalid.
pub fn enforce(
    w: &Walk,
    out: &mut Vec<Diagnostic>,
    module: &ModulePath,
    inst: &InstanceVars,
    rules: &[CheckRule],
    summary: &str,
    subject: &dyn std::fmt::Display,
) -> bool {
    let mut ok = true;
    for rule in rules {
        match check(w, module, inst, rule) {
            Outcome::Pass | Outcome::Deferred => {}
            Outcome::Fail(msg) => {
                let at = rule
                    .condition
                    .as_ref()
                    .and_then(|c| c.range.clone())
                    .or_else(|| rule.range.clone());
                let at_text = at.as_ref().map(|r| format!(" ({r})")).unwrap_or_default();
                out.push(Diagnostic::error(
                    summary,
                    format!("{msg}\n\nThis was checked by the condition for {subject}{at_text}."),
                    at,
                ));
                ok = false;
            }
            Outcome::Invalid(d) => {
                out.extend(d);
                ok = false;
            }
        }
    }
    ok
}

/// `check` blocks of the root module: failed assertions are warnings.
pub fn check_blocks(w: &Walk) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let root = ModulePath::default();
    for c in &w.core.config.module.checks {
        for rule in &c.asserts {
            match check(w, &root, &InstanceVars::default(), rule) {
                Outcome::Fail(msg) => out.push(Diagnostic {
                    severity: Severity::Warning,
                    summary: "Check block assertion failed".into(),
                    detail: format!("{msg}\n\n  in check {:?}", c.name),
                    range: rule.condition.as_ref().and_then(|e| e.range.clone()),
                    ..Default::default()
                }),
                Outcome::Invalid(d) => out.extend(d.into_iter().map(|mut d| {
                    d.severity = Severity::Warning;
                    d
                })),
                Outcome::Pass | Outcome::Deferred => {}
            }
        }
    }
    out
}
