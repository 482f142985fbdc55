//! Conversion of values to configuration type constraints, with the
//! defaults of `optional(T, default)` attributes applied first (as
//! Terraform does for input variables).

use crate::expr::Evaluator;
use crate::func::FuncCtx;
use crate::scope::MapScope;
use std::collections::BTreeMap;
use terrane_config::{Diagnostic, LineIndex, TypeConstraint};
use terrane_value::convert::{convert, ConvertError};
use terrane_value::{Path, Step, Type, Value};

/// Converts `v` to the constraint: defaults are filled in where an optional
/// attribute is absent or null, then the value is converted (missing
/// optional attributes without defaults become null). Default expressions
/// are constants; a default that fails to evaluate is reported.
pub fn convert_to_constraint(
    v: &Value,
    tc: &TypeConstraint,
    ctx: &FuncCtx,
    index: &LineIndex,
) -> Result<Value, ConstraintError> {
    let mut defaults = BTreeMap::new();
    if !tc.defaults.is_empty() {
        let scope = MapScope::new();
        let mut ev = Evaluator::new(&scope, ctx, index);
        for (path, e) in &tc.defaults {
            defaults.insert(path.clone(), ev.eval(e));
        }
        let diags = ev.into_diagnostics();
        if !diags.is_empty() {
            return Err(ConstraintError::Defaults(diags));
        }
    }
    let filled = apply_defaults(v, &tc.ty, &defaults, &mut Path::root());
    convert(&filled, &tc.ty).map_err(ConstraintError::Convert)
}

/// Why a value does not meet its constraint.
#[derive(Clone, Debug)]
pub enum ConstraintError {
    Convert(ConvertError),
    Defaults(Vec<Diagnostic>),
}

impl std::fmt::Display for ConstraintError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConstraintError::Convert(e) => write!(f, "{e}"),
            ConstraintError::Defaults(d) => write!(
                f,
                "invalid default value: {}",
                d.iter()
                    .map(|d| d.detail.clone())
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        }
    }
}

/// Fills defaults into `v` following type `ty`. `path` is the position in
/// the type (list and set elements are `[0]`, map elements `["*"]`, as the
/// configuration records default paths).
fn apply_defaults(
    v: &Value,
    ty: &Type,
    defaults: &BTreeMap<Path, Value>,
    path: &mut Path,
) -> Value {
    if defaults.is_empty() || !v.is_known() || v.is_null() {
        return v.clone();
    }
    match ty {
        Type::Object(o) => {
            let Some(entries) = v.entries() else {
                return v.clone();
            };
            let mut out = entries.clone();
            for (name, aty) in o.attrs() {
                path.push(Step::Attr(name.clone()));
                let present = out.get(name).filter(|x| !x.is_null()).cloned();
                match present {
                    Some(x) => {
                        out.insert(name.clone(), apply_defaults(&x, aty, defaults, path));
                    }
                    None => {
                        if let Some(d) = defaults.get(path) {
                            out.insert(name.clone(), apply_defaults(d, aty, defaults, path));
                        }
                    }
                }
                path.pop();
            }
            Value::object_of(out).with_marks(v.marks())
        }
        Type::List(e) | Type::Set(e) => {
            path.push(Step::Index(0));
            let out = v.elements().map(|es| {
                es.iter()
                    .map(|x| apply_defaults(x, e, defaults, path))
                    .collect::<Vec<_>>()
            });
            path.pop();
            match out {
                Some(es) if matches!(v.ty(), Type::Set(_)) => {
                    Value::set(Type::Dynamic, es).with_marks(v.marks())
                }
                Some(es) if matches!(v.ty(), Type::List(_)) => {
                    Value::list(Type::Dynamic, es).with_marks(v.marks())
                }
                Some(es) => Value::tuple(es).with_marks(v.marks()),
                None => v.clone(),
            }
        }
        Type::Map(e) => {
            let Some(entries) = v.entries() else {
                return v.clone();
            };
            path.push(Step::Key("*".into()));
            let out: BTreeMap<String, Value> = entries
                .iter()
                .map(|(k, x)| (k.clone(), apply_defaults(x, e, defaults, path)))
                .collect();
            path.pop();
            if matches!(v.ty(), Type::Map(_)) {
                Value::map(Type::Dynamic, out).with_marks(v.marks())
            } else {
                Value::object(out).with_marks(v.marks())
            }
        }
        Type::Tuple(ts) => {
            let Some(es) = v.elements() else {
                return v.clone();
            };
            let out = es
                .iter()
                .enumerate()
                .map(|(i, x)| {
                    path.push(Step::Index(i as i64));
                    let r = ts
                        .get(i)
                        .map(|t| apply_defaults(x, t, defaults, path))
                        .unwrap_or_else(|| x.clone());
                    path.pop();
                    r
                })
                .collect();
            Value::tuple(out).with_marks(v.marks())
        }
        _ => v.clone(),
    }
}
