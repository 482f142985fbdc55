//! Module `source` and `version` given as expressions (Terraform 1.15).
//!
//! Init evaluates them with what it knows before any provider runs:
//! literals, the module's const variables (`const = true`) and its locals
//! over those. A root module's const variables come from `-var`, variable
//! files and the environment, or their defaults; a child's from the
//! arguments of the module block that calls it, evaluated the same way in
//! the caller. Anything else (another variable, a resource, an impure
//! function) is unknown there, and an unknown source or version is
//! Terraform's "Unknown module source" / "Unknown module version".
//!
//! The evaluation is the evaluator's: [`Statics`] is implemented in
//! terrane-eval, which depends on this crate. A module with no such
//! expression and no const variable costs nothing here.

use crate::decode::version_without_registry_source;
use crate::diag::Diagnostic;
use crate::model::{Expr, Module, ModuleCall};
use std::collections::BTreeMap;
use std::path::Path;
use terrane_value::Value;

/// Values of a module's const variables, by name.
pub type Inputs = BTreeMap<String, Value>;

/// What loading needs from the layers above it to read `source` and
/// `version` expressions.
pub trait Statics {
    /// The values given for the root module's variables (`-var`,
    /// `-var-file`, `terraform.tfvars`, `*.auto.tfvars`, `TF_VAR_*`).
    /// Asked only when the root module declares a const variable.
    fn root_inputs(&self, root: &Module) -> Result<Inputs, Vec<Diagnostic>>;

    /// Evaluates `exprs` in `module` (whose directory is `dir`) with only
    /// what init knows: literals, the const variables in `inputs` (or
    /// their defaults), locals over those and pure functions; everything
    /// else is unknown. With `strings`, each result is converted to a
    /// string as Terraform converts it (failures are diagnostics, and
    /// unknown results).
    fn evaluate(
        &self,
        dir: &Path,
        module: &Module,
        inputs: &Inputs,
        exprs: &[&Expr],
        strings: bool,
    ) -> (Vec<Value>, Vec<Diagnostic>);
}

/// [`Statics`] for loading with no given values and no evaluator: const
/// variables keep their defaults, and a `source` or `version` that is not
/// a literal is refused as unknown. For tools that read configurations
/// without running them (the load example, tests of this crate).
pub struct LiteralsOnly;

impl Statics for LiteralsOnly {
    fn root_inputs(&self, _root: &Module) -> Result<Inputs, Vec<Diagnostic>> {
        Ok(Inputs::new())
    }

    fn evaluate(
        &self,
        _dir: &Path,
        _module: &Module,
        _inputs: &Inputs,
        exprs: &[&Expr],
        _strings: bool,
    ) -> (Vec<Value>, Vec<Diagnostic>) {
        let unknown = Value::unknown(terrane_value::Type::String);
        (vec![unknown; exprs.len()], Vec::new())
    }
}

fn has_const_variables(m: &Module) -> bool {
    m.variables.values().any(|v| v.constant)
}

fn needs_evaluation(m: &Module) -> bool {
    m.module_calls
        .values()
        .any(|c| c.source_expr.is_some() || c.version_expr.is_some())
}

/// The root module's const inputs: asked of `statics` only when the module
/// has a const variable (any module of the tree may read it, through the
/// calls' arguments).
pub fn root_inputs(statics: &dyn Statics, root: &Module) -> (Inputs, Vec<Diagnostic>) {
    if !has_const_variables(root) {
        return (Inputs::new(), Vec::new());
    }
    match statics.root_inputs(root) {
        Ok(i) => (i, Vec::new()),
        Err(d) => (Inputs::new(), d),
    }
}

/// The const inputs of `child`, called by `call` from `caller` (at
/// `caller_dir`, with const inputs `caller_inputs`): the caller's values
/// of the call's arguments for the child's const variables.
pub fn child_inputs(
    statics: &dyn Statics,
    caller_dir: &Path,
    caller: &Module,
    caller_inputs: &Inputs,
    call: &ModuleCall,
    child: &Module,
) -> (Inputs, Vec<Diagnostic>) {
    let wanted: Vec<(&String, &Expr)> = child
        .variables
        .values()
        .filter(|v| v.constant)
        .filter_map(|v| call.inputs.get_key_value(&v.name))
        .collect();
    if wanted.is_empty() {
        return (Inputs::new(), Vec::new());
    }
    let exprs: Vec<&Expr> = wanted.iter().map(|(_, e)| *e).collect();
    let (values, diags) = statics.evaluate(caller_dir, caller, caller_inputs, &exprs, false);
    let inputs = wanted
        .into_iter()
        .map(|(n, _)| n.clone())
        .zip(values)
        .collect();
    (inputs, diags)
}

/// Fills in the `source` and `version` of `module`'s calls that give them
/// as expressions, or reports why they cannot be known at init.
pub fn resolve_calls(
    statics: &dyn Statics,
    dir: &Path,
    module: &mut Module,
    inputs: &Inputs,
) -> Vec<Diagnostic> {
    if !needs_evaluation(module) {
        return Vec::new();
    }
    let mut wanted: Vec<(String, bool, &Expr)> = Vec::new();
    for (name, call) in &module.module_calls {
        if let Some(e) = &call.source_expr {
            wanted.push((name.clone(), true, e));
        }
        if let Some(e) = &call.version_expr {
            wanted.push((name.clone(), false, e));
        }
    }
    let exprs: Vec<&Expr> = wanted.iter().map(|w| w.2).collect();
    let (values, mut diags) = statics.evaluate(dir, module, inputs, &exprs, true);
    let failed = diags.iter().any(Diagnostic::is_error);
    let wanted: Vec<(String, bool, Option<crate::SourceRange>)> = wanted
        .into_iter()
        .map(|(n, s, e)| (n, s, e.range.clone()))
        .collect();
    for ((name, is_source, range), value) in wanted.into_iter().zip(values) {
        let what = if is_source { "source" } else { "version" };
        // A null version is no version, as a literal `null` would be.
        let null_version = !is_source && value.is_known() && value.is_null();
        let text = match value.as_str() {
            _ if null_version => None,
            _ if value.is_sensitive() => {
                diags.push(Diagnostic::error(
                    "Sensitive value not allowed",
                    format!("The module {what} may not be a sensitive value: it is recorded in the module manifest and printed by init."),
                    range.clone(),
                ));
                None
            }
            Some(s) if value.is_known() => Some(s.to_string()),
            _ if !value.is_known() => {
                if !failed {
                    diags.push(Diagnostic::error(
                        format!("Unknown module {what}"),
                        "Only literal values and const variables can be evaluated during init.",
                        range.clone(),
                    ));
                }
                None
            }
            _ => {
                diags.push(Diagnostic::error(
                    "Unsuitable value type",
                    "Unsuitable value: null value is not allowed",
                    range.clone(),
                ));
                None
            }
        };
        let Some(call) = module.module_calls.get_mut(&name) else {
            continue;
        };
        let known = text.is_some() || null_version;
        if is_source {
            call.source = text;
        } else {
            call.version = text;
        }
        // A call whose source or version is not known is not followed.
        if !known {
            call.source = None;
            continue;
        }
        if !is_source || call.version_expr.is_none() {
            let at = call.source_range.clone();
            diags.extend(version_without_registry_source(call, at));
        }
    }
    diags
}
