//! terrane-eval: evaluation of Terraform-style expressions (hcl-edit's
//! syntax tree, as kept by terrane-config) over terrane values.
//!
//! Unknown values ("known after apply") and sensitive marks flow through
//! every operator and function the way Terraform's do; results are refined
//! where Terraform refines them. Errors are diagnostics pointing at the
//! exact sub-expression that failed; a failed sub-expression evaluates to
//! an unknown so the rest is still checked.
//!
//! Key types: [`Evaluator`] (one evaluation over a [`Scope`]), [`MapScope`],
//! the function library ([`func`]) and [`convert_to_constraint`] for
//! variable type constraints with optional-attribute defaults.
//! Architecture invariant: no async, no engine or state knowledge; the
//! only I/O is the filesystem functions (`file`, `fileset`, `templatefile`,
//! ...) reading files relative to [`func::FuncCtx::base_dir`].

mod arith;
mod expr;
mod forexpr;
pub mod func;
mod marks;
pub mod module;
mod ops;
mod scope;
pub mod statics;
mod template;
mod traverse;
mod typeconv;

pub use expr::{Evaluator, ProviderFunctions};
pub use scope::{MapScope, Missing, Scope};
pub use typeconv::{convert_to_constraint, ConstraintError};

use func::FuncCtx;
use std::path::Path;
use terrane_config::{Diagnostic, LineIndex};
use terrane_value::Value;

/// Evaluates a configuration expression.
pub fn eval_expr(
    e: &terrane_config::Expr,
    scope: &dyn Scope,
    ctx: &FuncCtx,
) -> (Value, Vec<Diagnostic>) {
    let mut ev = Evaluator::new(scope, ctx, &e.index);
    let v = ev.eval(&e.expr);
    (v, ev.into_diagnostics())
}

/// Parses and evaluates one expression from text (a console line, a test
/// case); `name` names the source in diagnostics.
pub fn eval_str(
    name: &str,
    src: &str,
    scope: &dyn Scope,
    ctx: &FuncCtx,
) -> (Value, Vec<Diagnostic>) {
    let index = LineIndex::new(name, src);
    match terrane_hcl::parser::parse_expr(src) {
        Ok(e) => {
            let mut ev = Evaluator::new(scope, ctx, &index);
            let v = ev.eval(&e);
            (v, ev.into_diagnostics())
        }
        Err(err) => {
            let d = Diagnostic::error(
                "Invalid expression",
                err.message().to_string(),
                Some(index.at_offset(err.offset())),
            );
            (Value::unknown(terrane_value::Type::Dynamic), vec![d])
        }
    }
}

/// Renders a template file's text with `vars` (an object or map whose
/// attributes become the template's variables): the engine behind
/// `templatefile`. Relative paths in nested file functions resolve
/// against the working directory, as Terraform's do.
pub fn render_template(text: &str, path: &Path, vars: &Value) -> Result<Value, String> {
    let mut scope = MapScope::new();
    if let Some(entries) = vars.entries() {
        for (k, v) in entries {
            scope.roots.insert(k.clone(), v.clone());
        }
    }
    // Inside a template, `templatefile` refuses to run (as in Terraform):
    // a template that renders itself would otherwise recurse until the
    // stack overflows.
    let ctx = FuncCtx {
        base_dir: Path::new("."),
        render_template: &refuse_nested_template,
        pure_only: false,
        plan_timestamp: None,
        console: false,
    };
    let name = path.display().to_string();
    let index = LineIndex::new(&name, text);
    let template = terrane_hcl::parser::parse_template(text).map_err(|e| {
        let at = index.at_offset(e.offset()).start;
        format!("{name}:{}:{}: {}", at.line, at.col, e.message())
    })?;
    let mut ev = Evaluator::new(&scope, &ctx, &index);
    let v = ev.template_file(&template);
    let diags = ev.into_diagnostics();
    match diags.first() {
        Some(d) => Err(d.to_string()),
        None => Ok(v),
    }
}

/// The template engine seen from inside a template: none, with
/// Terraform's message.
fn refuse_nested_template(_text: &str, _path: &Path, _vars: &Value) -> Result<Value, String> {
    Err("cannot recursively call templatefile from inside another template function".to_string())
}

/// A function context for the given working directory, with the template
/// engine wired in.
pub fn default_ctx(base_dir: &Path) -> FuncCtx<'_> {
    FuncCtx {
        base_dir,
        render_template: &render_template,
        pure_only: false,
        plan_timestamp: None,
        console: false,
    }
}
