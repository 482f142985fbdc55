//! Runs every line of `tests/corpus/functions.txt` through the function
//! library with a tiny literal-only evaluator (literals, tuples, objects,
//! unary minus, function calls, `can`) and checks each line evaluates to a
//! known value. With `TERRANE_CORPUS_OUT=<file>` it also writes the results
//! as `terraform output -json` would (value and type per line, `oNNN`
//! names), for the differential comparison against real Terraform.

use hcl_edit::expr::{Expression, ObjectKey, UnaryOperator};
use std::collections::BTreeMap;
use std::path::Path;
use terrane_eval::func::{call, FuncCtx};
use terrane_value::{Number, Type, Value};

fn render(_: &str, _: &Path, _: &Value) -> Result<Value, String> {
    Err("templates are not part of this corpus".into())
}

fn eval(e: &Expression, ctx: &FuncCtx) -> Result<Value, String> {
    Ok(match e {
        Expression::Null(_) => Value::null(Type::Dynamic),
        Expression::Bool(b) => Value::bool(*b.value()),
        Expression::Number(n) => {
            let text = n.value().to_string();
            Value::number(Number::parse(&text).map_err(|e| e.to_string())?)
        }
        Expression::String(s) => Value::string(s.value().as_str()),
        Expression::Array(a) => {
            Value::tuple(a.iter().map(|x| eval(x, ctx)).collect::<Result<_, _>>()?)
        }
        Expression::Object(o) => {
            let mut attrs = BTreeMap::new();
            for (k, v) in o.iter() {
                let key = match k {
                    ObjectKey::Ident(i) => i.value().to_string(),
                    ObjectKey::Expression(x) => eval(x, ctx)?
                        .as_str()
                        .ok_or("object key must be a string")?
                        .to_string(),
                };
                attrs.insert(key, eval(v.expr(), ctx)?);
            }
            Value::object(attrs)
        }
        Expression::Parenthesis(p) => eval(p.inner(), ctx)?,
        Expression::UnaryOp(u) if *u.operator.value() == UnaryOperator::Neg => {
            let v = eval(&u.expr, ctx)?;
            let n = v
                .as_number()
                .and_then(Number::as_decimal)
                .ok_or("negation of a non-number")?;
            Value::number(Number::from(-n.clone()))
        }
        Expression::FuncCall(f) => {
            let name = f.name.name.value().to_string();
            if name == "can" {
                let arg = f.args.iter().next().ok_or("can needs an argument")?;
                return Ok(Value::bool(eval(arg, ctx).is_ok()));
            }
            let args: Vec<Value> = f
                .args
                .iter()
                .map(|x| eval(x, ctx))
                .collect::<Result<_, _>>()?;
            call(&name, args, ctx).map_err(|e| format!("{}: {}", e.summary, e.detail))?
        }
        other => return Err(format!("unsupported expression in corpus: {other:?}")),
    })
}

/// The value as Terraform's `output -json` writes it.
fn json_of(v: &Value) -> serde_json::Value {
    use serde_json::Value as J;
    if v.is_null() {
        return J::Null;
    }
    if let Some(s) = v.as_str() {
        return J::String(s.to_string());
    }
    if let Some(b) = v.as_bool() {
        return J::Bool(b);
    }
    if let Some(n) = v.as_number() {
        return serde_json::from_str(&n.to_string()).unwrap_or(J::Null);
    }
    if let Some(es) = v.elements() {
        return J::Array(es.iter().map(json_of).collect());
    }
    if let Some(m) = v.entries() {
        return J::Object(m.iter().map(|(k, e)| (k.clone(), json_of(e))).collect());
    }
    J::Null
}

fn corpus_lines() -> Vec<String> {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/corpus/functions.txt"
    ))
    .unwrap();
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

#[test]
fn corpus_lines_all_evaluate_to_known_values() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = FuncCtx {
        base_dir: dir.path(),
        render_template: &render,
        pure_only: false,
    };
    let lines = corpus_lines();
    assert!(lines.len() >= 150, "corpus has only {} lines", lines.len());
    let mut out = serde_json::Map::new();
    let mut failures = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let expr: Expression = match line.parse() {
            Ok(e) => e,
            Err(e) => {
                failures.push(format!("{line}: parse error {e}"));
                continue;
            }
        };
        match eval(&expr, &ctx) {
            Ok(v) if v.is_wholly_known() => {
                let ty = terrane_value::typejson::to_json(v.ty());
                out.insert(format!("o{:03}", i + 1), serde_json::json!({"value": json_of(&v), "type": ty, "sensitive": v.is_sensitive()}));
            }
            Ok(_) => failures.push(format!("{line}: unknown result")),
            Err(e) => failures.push(format!("{line}: {e}")),
        }
    }
    if let Ok(path) = std::env::var("TERRANE_CORPUS_OUT") {
        std::fs::write(path, serde_json::to_string_pretty(&out).unwrap()).unwrap();
    }
    assert!(
        failures.is_empty(),
        "corpus failures:\n{}",
        failures.join("\n")
    );
}
