//! The function library: Terraform's built-in functions over terrane
//! values. The evaluator calls [`call`] with evaluated arguments; this
//! module owns arity and type checks, argument conversion, unknown and null
//! handling and sensitive-mark propagation, so every function body sees
//! plain known values unless it asked otherwise.
//!
//! `try` and `can` are not here: they are special forms of the evaluator
//! (their arguments are evaluated lazily).

mod collection;
mod crypto;
mod encoding;
mod filesystem;
mod format;
mod ip;
mod maps;
mod numeric;
mod numfmt;
mod pattern;
mod sequence;
mod sets;
mod spec;
mod string;
#[cfg(test)]
mod test_support;
mod time;
mod types;
mod yaml;

use std::path::Path;
use terrane_config::DiagId;
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
pub fn call(name: &str, args: Vec<Value>, ctx: &FuncCtx) -> Result<Value, FuncError> {
    call_with_id(name, args, ctx).map_err(|(_, e)| e)
}

/// [`call`], with the id of the errors code recognises (a wrong number of
/// arguments), so the evaluator places them without reading their text.
pub(crate) fn call_with_id(
    name: &str,
    args: Vec<Value>,
    ctx: &FuncCtx,
) -> Result<Value, (Option<DiagId>, FuncError)> {
    match lookup(name) {
        Some(f) => {
            spec::arity(name, &f, args.len()).map_err(|(id, e)| (Some(id), e))?;
            spec::invoke(name, &f, args, ctx).map_err(|e| (None, e))
        }
        None => Err((
            None,
            FuncError {
                arg: None,
                summary: "Call to unknown function".into(),
                detail: format!("There is no function named \"{name}\"."),
            },
        )),
    }
}

/// Whether a built-in function of that name exists.
pub fn exists(name: &str) -> bool {
    names().any(|n| n == name)
}

/// The names of all built-in functions (not `try` and `can`, which are the
/// evaluator's special forms).
pub fn names() -> impl Iterator<Item = &'static str> {
    MODULES.iter().flat_map(|(names, _)| names.iter().copied())
}

type Lookup = fn(&str) -> Option<spec::Func>;

/// Each family of functions: its names and its lookup.
const MODULES: &[(&[&str], Lookup)] = &[
    (string::NAMES, string::lookup),
    (format::NAMES, format::lookup),
    (pattern::NAMES, pattern::lookup),
    (collection::NAMES, collection::lookup),
    (sequence::NAMES, sequence::lookup),
    (sets::NAMES, sets::lookup),
    (maps::NAMES, maps::lookup),
    (encoding::NAMES, encoding::lookup),
    (yaml::NAMES, yaml::lookup),
    (numeric::NAMES, numeric::lookup),
    (crypto::NAMES, crypto::lookup),
    (filesystem::NAMES, filesystem::lookup),
    (types::NAMES, types::lookup),
    (time::NAMES, time::lookup),
    (ip::NAMES, ip::lookup),
];

fn lookup(name: &str) -> Option<spec::Func> {
    MODULES
        .iter()
        .find(|(names, _)| names.contains(&name))
        .and_then(|(_, l)| l(name))
}
