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
mod extra;
mod filesystem;
mod format;
mod ip;
mod maps;
mod numeric;
mod numfmt;
mod pattern;
mod rsadecrypt;
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
pub use time::now_rfc3339;

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
    /// The plan's timestamp (RFC 3339, whole seconds, UTC) that
    /// `plantimestamp` returns: set at plan, and at apply to the applied
    /// plan's; `None` during validation, where the result is unknown.
    pub plan_timestamp: Option<&'a str>,
    /// Evaluating for `console`: as in Terraform, `type` exists only
    /// there and `plantimestamp` only outside it.
    pub console: bool,
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

/// Whether a configuration (or, with [`FuncCtx::console`], the console)
/// may call built-in function `name`: as in Terraform, `type` is the
/// console's only and `plantimestamp` is not the console's.
pub fn available(name: &str, ctx: &FuncCtx) -> bool {
    exists(name)
        && match name {
            "type" => ctx.console,
            "plantimestamp" => !ctx.console,
            _ => true,
        }
}

/// The names of all built-in functions (not `try` and `can`, which are the
/// evaluator's special forms).
pub fn names() -> impl Iterator<Item = &'static str> {
    MODULES.iter().flat_map(|(names, _)| names.iter().copied())
}

/// One parameter of a built-in function's signature.
#[derive(Clone, Debug, PartialEq)]
pub struct SigParam {
    pub name: &'static str,
    pub ty: terrane_value::Type,
    /// Whether a null argument reaches the function (Terraform's
    /// `AllowNull`, `is_nullable` in `metadata functions -json`).
    pub nullable: bool,
}

/// A built-in function's signature: what `terrane metadata functions
/// -json` lists for it.
#[derive(Clone, Debug, PartialEq)]
pub struct Signature {
    pub params: Vec<SigParam>,
    pub variadic: Option<SigParam>,
    /// The result type for arguments of the parameters' own types (as
    /// Terraform works it out for the document): `dynamic` when it
    /// depends on the arguments' values.
    pub ret: terrane_value::Type,
}

/// The signature of built-in function `name` (not `try` and `can`).
pub fn signature(name: &str) -> Option<Signature> {
    let f = lookup(name)?;
    let sig = |p: &spec::Param| SigParam {
        name: p.name,
        ty: p.ty.clone(),
        nullable: p.allow_null,
    };
    let ret = match &f.ret {
        spec::Ret::Fixed(t) => t.clone(),
        spec::Ret::From(rf) => {
            let args: Vec<Value> = f
                .params
                .iter()
                .chain(f.variadic.as_ref())
                .map(|p| Value::unknown(p.ty.clone()))
                .collect();
            rf(&args).unwrap_or(terrane_value::Type::Dynamic)
        }
    };
    // As Terraform's function library does: an argument of unknown type
    // for a parameter that does not take one makes the result's type
    // unknown too (`contains`, `index`, `sum`).
    let dynamic_arg = f
        .params
        .iter()
        .chain(f.variadic.as_ref())
        .any(|p| p.ty == terrane_value::Type::Dynamic && !p.allow_dynamic);
    let ret = if dynamic_arg {
        terrane_value::Type::Dynamic
    } else {
        ret
    };
    Some(Signature {
        params: f.params.iter().map(sig).collect(),
        variadic: f.variadic.as_ref().map(sig),
        ret,
    })
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
    (rsadecrypt::NAMES, rsadecrypt::lookup),
    (filesystem::NAMES, filesystem::lookup),
    (types::NAMES, types::lookup),
    (time::NAMES, time::lookup),
    (ip::NAMES, ip::lookup),
    (extra::NAMES, extra::lookup),
];

fn lookup(name: &str) -> Option<spec::Func> {
    MODULES
        .iter()
        .find(|(names, _)| names.contains(&name))
        .and_then(|(_, l)| l(name))
}

#[cfg(test)]
mod signature_tests {
    use super::test_support::*;
    use super::*;
    use terrane_value::Type;

    /// Result types as Terraform's `metadata functions -json` gives them:
    /// unknown (`dynamic`) when a parameter of unknown type does not take
    /// an argument of unknown type, the declared type otherwise.
    #[test]
    fn item2_signatures_give_terraforms_result_types() {
        let check = |name: &str, want: Type| {
            let sig = signature(name).unwrap_or_else(|| panic!("case {name}: no signature"));
            assert_eq!(sig.ret, want, "case {name}");
        };
        check("contains", Type::Dynamic);
        check("index", Type::Dynamic);
        check("sum", Type::Dynamic);
        check("jsonencode", Type::String);
        check("format", Type::String);
        check("formatlist", Type::list(Type::String));
        check("yamlencode", Type::String);
        check("tolist", Type::list(Type::Dynamic));
        check("upper", Type::String);
        let names = |name: &str| -> Vec<&str> {
            signature(name)
                .map(|s| s.params.iter().map(|p| p.name).collect())
                .unwrap_or_default()
        };
        assert_eq!(names("sensitive"), ["value"], "case sensitive_param");
        assert_eq!(names("issensitive"), ["value"], "case issensitive_param");
        assert!(signature("no_such_function").is_none(), "case unknown");
    }

    /// The runtime agrees: an argument of unknown type gives these an
    /// unknown string, not an unknown of unknown type.
    #[test]
    fn item2_dynamic_arguments_keep_string_results() {
        for name in ["jsonencode", "yamlencode"] {
            let v = run(name, vec![unk(Type::Dynamic)]).unwrap();
            assert_eq!(v.ty(), &Type::String, "case {name}");
        }
        let v = run("format", vec![st("%s"), unk(Type::Dynamic)]).unwrap();
        assert_eq!(v.ty(), &Type::String, "case format");
        let v = run("contains", vec![unk(Type::Dynamic), st("x")]).unwrap();
        assert_eq!(v.ty(), &Type::Dynamic, "case contains");
    }
}
