//! terrane-config's [`Statics`] over this evaluator: module `source` and
//! `version` expressions evaluated with only what init knows (literals,
//! const variables, locals over them, pure functions). Everything else a
//! module can name (other variables, resources, data sources, module
//! outputs) is unknown here, as impure functions are.

use crate::module::{evaluate_locals, input_variables, ModuleScope};
use crate::scope::Scope;
use crate::{default_ctx, eval_expr};
use std::path::Path;
use terrane_config::statics::{Inputs, Statics};
use terrane_config::{Diagnostic, Expr, Module};
use terrane_value::{Type, Value};

/// [`Statics`] whose root inputs come from `root` (the command line's
/// variables, read from the root module's declarations).
pub struct InitStatics<F> {
    root: F,
}

impl<F> InitStatics<F>
where
    F: Fn(&Module) -> Result<Inputs, Vec<Diagnostic>>,
{
    pub fn new(root: F) -> InitStatics<F> {
        InitStatics { root }
    }
}

/// How the root module's given values are read.
pub type RootInputs = fn(&Module) -> Result<Inputs, Vec<Diagnostic>>;

/// [`InitStatics`] with no values given for the root module: its const
/// variables take their defaults (a required one is an error when a
/// `source` or `version` needs it).
pub fn defaults_only() -> InitStatics<RootInputs> {
    InitStatics::new(|_| Ok(Inputs::new()))
}

/// Every name not bound by the module's own scope: unknown.
struct Unknowns;

impl Scope for Unknowns {
    fn root(&self, _name: &str) -> Option<Value> {
        Some(Value::unknown(Type::Dynamic))
    }
}

impl<F> Statics for InitStatics<F>
where
    F: Fn(&Module) -> Result<Inputs, Vec<Diagnostic>>,
{
    fn root_inputs(&self, root: &Module) -> Result<Inputs, Vec<Diagnostic>> {
        (self.root)(root)
    }

    fn evaluate(
        &self,
        dir: &Path,
        module: &Module,
        inputs: &Inputs,
        exprs: &[&Expr],
        strings: bool,
    ) -> (Vec<Value>, Vec<Diagnostic>) {
        let mut ctx = default_ctx(dir);
        ctx.pure_only = true;
        let unknowns = Unknowns;
        let paths = [dir.display().to_string(), ".".into(), ".".into()];
        let mut scope = ModuleScope::new(module, paths, Some(&unknowns));
        // Const variables: given, or their defaults, converted to their
        // types (a required one with no value is an error, and unknown).
        // The others are unknown at init.
        let mut consts = Module::default();
        consts.variables = module
            .variables
            .iter()
            .filter(|(_, v)| v.constant)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let given: Inputs = inputs
            .iter()
            .filter(|(k, _)| consts.variables.contains_key(*k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut diags = input_variables(&consts, &given, &ctx, &mut scope);
        for (name, v) in &module.variables {
            if scope.vars.contains_key(name) {
                continue;
            }
            let ty = v
                .constraint
                .as_ref()
                .map(|c| c.ty.without_optional_markers())
                .unwrap_or(Type::Dynamic);
            scope.vars.insert(name.clone(), Value::unknown(ty));
        }
        // Locals that fail here fail again, and are reported, when the
        // configuration is evaluated: only their values matter now.
        let _ = evaluate_locals(module, &ctx, &mut scope);
        let mut values = Vec::with_capacity(exprs.len());
        for e in exprs {
            let (v, d) = eval_expr(e, &scope, &ctx);
            let failed = d.iter().any(Diagnostic::is_error);
            diags.extend(d);
            let v = match (strings, failed) {
                (_, true) => Value::unknown(Type::String),
                (false, false) => v,
                (true, false) => match terrane_value::convert::convert(&v, &Type::String) {
                    Ok(s) => s,
                    Err(err) => {
                        diags.push(Diagnostic::error(
                            "Unsuitable value type",
                            format!("Unsuitable value: {err}"),
                            e.range.clone(),
                        ));
                        Value::unknown(Type::String)
                    }
                },
            };
            values.push(v);
        }
        (values, diags)
    }
}
