//! Helpers for the function tables: a context, value shorthands and a
//! runner that reports errors as `summary: detail`.

use super::{call, FuncCtx};
use std::path::Path;
use terrane_value::{Number, Refinements, Type, Value};

pub(crate) fn render_stub(text: &str, _path: &Path, vars: &Value) -> Result<Value, String> {
    // A tiny stand-in for the evaluator's template engine: ${name} only.
    let mut out = text.to_string();
    for (k, v) in vars.entries().into_iter().flatten() {
        if !v.is_known() {
            return Ok(Value::unknown(Type::String));
        }
        out = out.replace(
            &format!("${{{k}}}"),
            &v.as_str().map(str::to_string).unwrap_or_else(|| {
                v.as_number()
                    .map(|n| n.to_string())
                    .unwrap_or_default()
                    .to_string()
            }),
        );
    }
    Ok(Value::string(out))
}

/// Runs `name` in `dir` (pure_only false).
pub(crate) fn run_in(dir: &Path, name: &str, args: Vec<Value>) -> Result<Value, String> {
    let ctx = FuncCtx {
        base_dir: dir,
        render_template: &render_stub,
        pure_only: false,
        plan_timestamp: None,
        console: false,
    };
    call(name, args, &ctx).map_err(|e| format!("{}: {}", e.summary, e.detail))
}

pub(crate) fn run(name: &str, args: Vec<Value>) -> Result<Value, String> {
    run_in(Path::new("."), name, args)
}

pub(crate) fn st(s: &str) -> Value {
    Value::string(s)
}

pub(crate) fn num(s: &str) -> Value {
    Value::number(Number::parse(s).unwrap())
}

pub(crate) fn bl(b: bool) -> Value {
    Value::bool(b)
}

pub(crate) fn strs(items: &[&str]) -> Value {
    Value::list(
        Type::String,
        items.iter().map(|s| Value::string(*s)).collect(),
    )
}

pub(crate) fn nums(items: &[i64]) -> Value {
    Value::list(
        Type::Number,
        items
            .iter()
            .map(|n| Value::number(Number::from_i64(*n)))
            .collect(),
    )
}

pub(crate) fn tup(items: Vec<Value>) -> Value {
    Value::tuple(items)
}

pub(crate) fn obj(items: Vec<(&str, Value)>) -> Value {
    Value::object_from(items)
}

pub(crate) fn smap(items: Vec<(&str, Value)>) -> Value {
    let ty = items
        .first()
        .map(|(_, v)| v.ty().clone())
        .unwrap_or(Type::String);
    Value::map(
        ty,
        items.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
    )
}

pub(crate) fn unk(t: Type) -> Value {
    Value::unknown(t)
}

pub(crate) fn unk_nn(t: Type) -> Value {
    Value::unknown_refined(t, Refinements::not_null())
}

pub(crate) fn null(t: Type) -> Value {
    Value::null(t)
}
