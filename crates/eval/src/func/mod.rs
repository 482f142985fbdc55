//! The function library: Terraform's built-in functions over terrane
//! values. The evaluator calls [`call`] with evaluated arguments; this
//! module owns arity and type checks, argument conversion, unknown and null
//! handling and sensitive-mark propagation, so every function body sees
//! plain known values unless it asked otherwise.
//!
//! `try` and `can` are not here: they are special forms of the evaluator
//! (their arguments are evaluated lazily).

use std::path::Path;
use terrane_value::Value;

/// Renders a template file for `templatefile`: the evaluator's template
/// engine, given the file's text, its path (for diagnostics) and the
/// variables object.
pub type TemplateRenderer<'a> = dyn Fn(&str, &Path, &Value) -> Result<Value, String> + 'a;

/// What functions may need from their surroundings.
pub struct FuncCtx<'a> {
    /// Directory relative paths are resolved against (the process working
    /// directory, as Terraform does; configurations use `path.module`).
    pub base_dir: &'a Path,
    /// The template engine for `templatefile`.
    pub render_template: &'a TemplateRenderer<'a>,
    /// True during validation: impure functions (`timestamp`, `uuid`,
    /// `bcrypt`) return unknown values instead of running.
    pub pure_only: bool,
}

/// A failed call. `arg` is the index of the argument at fault (so the
/// evaluator can point at its source range), `None` for the call itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FuncError {
    pub arg: Option<usize>,
    /// One-line summary, as Terraform's: "Invalid function argument",
    /// "Error in function call", "Not enough function arguments", ...
    pub summary: String,
    /// The full detail sentence, e.g. `Invalid value for "str" parameter:
    /// string required.`
    pub detail: String,
}

/// Calls built-in function `name` with evaluated arguments.
pub fn call(name: &str, _args: Vec<Value>, _ctx: &FuncCtx) -> Result<Value, FuncError> {
    Err(FuncError {
        arg: None,
        summary: "Call to unknown function".into(),
        detail: format!("There is no function named \"{name}\"."),
    })
}

/// Whether a built-in function of that name exists.
pub fn exists(_name: &str) -> bool {
    false
}
