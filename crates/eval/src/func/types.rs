//! Type conversion and mark functions: `tostring`, `tonumber`, `tobool`,
//! `tolist`, `toset`, `tomap`, `type`, `sensitive`, `nonsensitive`,
//! `issensitive`. These see marks and unknowns themselves.

use super::encoding::go_json_string;
use super::spec::{arg_err, Func, Param, Res};
use super::FuncCtx;
use terrane_value::convert::{convert, type_convertible, unify};
use terrane_value::{Kind, Type, Value};

pub(super) const NAMES: &[&str] = &[
    "tostring",
    "tonumber",
    "tobool",
    "tolist",
    "toset",
    "tomap",
    "type",
    "sensitive",
    "nonsensitive",
    "issensitive",
    "ephemeralasnull",
    "convert",
];

fn p_v() -> Param {
    p_any_value("v")
}

/// A parameter taking any value at all (null, unknown, of any type,
/// marked): `v` for the conversions, `value` for the sensitivity functions,
/// as Terraform names them.
fn p_any_value(name: &'static str) -> Param {
    Param::new(name, Type::Dynamic)
        .null()
        .unknown()
        .dynamic()
        .marked()
}

pub(super) fn lookup(name: &str) -> Option<Func> {
    let conv = |ret: super::spec::RetFn| Func::ret_fn(vec![p_v()], ret, to_type).may_be_null();
    Some(match name {
        "tostring" => conv(|_| Ok(Type::String)),
        "tonumber" => conv(|_| Ok(Type::Number)),
        "tobool" => conv(|_| Ok(Type::Bool)),
        "tolist" => conv(|a| collection_ret(&a[0], Type::list)),
        "toset" => conv(|a| collection_ret(&a[0], Type::set)),
        "tomap" => conv(|a| collection_ret(&a[0], Type::map)),
        "type" => Func::new(vec![p_v()], Type::String, |a, _, _| {
            Ok(Value::string(a[0].ty().to_string()))
        }),
        "sensitive" => Func::ret_fn(
            vec![p_any_value("value")],
            |a| Ok(a[0].ty().clone()),
            |a, _, _| Ok(a[0].clone().mark_sensitive()),
        )
        .may_be_null(),
        "nonsensitive" => Func::ret_fn(
            vec![p_any_value("value")],
            |a| Ok(a[0].ty().clone()),
            |a, _, _| Ok(a[0].clone().with_sensitive(false)),
        )
        .may_be_null(),
        // Every ephemeral part, however deep, becomes a null of its type.
        "ephemeralasnull" => Func::ret_fn(
            vec![p_any_value("value")],
            |a| Ok(a[0].ty().clone()),
            |a, _, _| Ok(a[0].ephemeral_as_null()),
        )
        .may_be_null(),
        // `convert(value, type)`: its second argument is a type constraint
        // expression, which only the evaluator can read (`Evaluator`'s
        // `convert_call` does the work). This entry gives the signature
        // Terraform lists, and refuses calls made with values.
        "convert" => Func::ret_fn(
            vec![
                Param::new("value", Type::Dynamic).null().dynamic(),
                Param::new("type", Type::Dynamic),
            ],
            |_| Ok(Type::Dynamic),
            |_, _, _| {
                Err(super::spec::Fail::Call(
                    "its second argument must be a type constraint expression, such as list(string)"
                        .into(),
                ))
            },
        )
        .may_be_null(),
        "issensitive" => Func::new(vec![p_any_value("value")], Type::Bool, |a, _, _| {
            Ok(Value::bool(a[0].is_sensitive()))
        }),
        _ => return None,
    })
}

/// The collection type a `tolist`/`toset`/`tomap` result has.
fn collection_ret(v: &Value, wrap: fn(Type) -> Type) -> Res<Type> {
    let target = wrap(Type::Dynamic);
    let elem_types: Vec<Type> = match v.ty() {
        Type::List(t) | Type::Set(t) | Type::Map(t) => vec![(**t).clone()],
        Type::Tuple(ts) => ts.to_vec(),
        Type::Object(o) => o.attrs().values().cloned().collect(),
        Type::Dynamic => return Ok(target),
        other => {
            return arg_err(
                0,
                format!(
                    "cannot convert {} to {}",
                    other.friendly_name(),
                    friendly_target(&target)
                ),
            )
        }
    };
    if !type_convertible(v.ty(), &target) {
        return arg_err(
            0,
            format!(
                "cannot convert {} to {}",
                v.ty().friendly_name(),
                friendly_target(&target)
            ),
        );
    }
    if v.is_known() && !v.is_null() {
        // Known values decide by conversion (strings may absorb numbers).
        return match convert(v, &target) {
            Ok(c) => Ok(c.ty().clone()),
            Err(_) => arg_err(
                0,
                format!(
                    "cannot convert {} to {}",
                    v.ty().friendly_name(),
                    friendly_target(&target)
                ),
            ),
        };
    }
    match unify(&elem_types) {
        Some(t) => Ok(wrap(t)),
        None => arg_err(
            0,
            format!(
                "cannot convert {} to {}",
                v.ty().friendly_name(),
                friendly_target(&target)
            ),
        ),
    }
}

fn friendly_target(t: &Type) -> String {
    match t {
        Type::List(e) | Type::Set(e) | Type::Map(e) if e.is_dynamic() => {
            let kind = match t {
                Type::List(_) => "list",
                Type::Set(_) => "set",
                _ => "map",
            };
            format!("{kind} of any single type")
        }
        other => other.friendly_name(),
    }
}

fn to_type(a: &[Value], ret: &Type, _: &FuncCtx) -> Res<Value> {
    let v = &a[0];
    match convert(v, ret) {
        Ok(c) => Ok(c),
        Err(_) => {
            let shown = match v.kind() {
                Kind::String(t) if !v.is_sensitive() => go_json_string(t),
                _ => v.ty().friendly_name(),
            };
            let hint = match (ret, v.kind()) {
                (Type::Number, Kind::String(_)) => {
                    "; given string must be a decimal representation of a number"
                }
                (Type::Bool, Kind::String(_)) => {
                    "; only the strings \"true\" or \"false\" are allowed"
                }
                _ => "",
            };
            arg_err(
                0,
                format!("cannot convert {shown} to {}{hint}", friendly_target(ret)),
            )
        }
    }
}

#[cfg(test)]
#[path = "types_tests.rs"]
mod tests;
