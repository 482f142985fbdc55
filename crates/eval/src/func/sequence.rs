//! Functions that build a new sequence from sequences: `concat`, `flatten`,
//! `slice`, `sort`, `reverse`, `distinct`.

use super::collection::same;
use super::spec::{arg_err, call_err, elems, int_arg, p_any, p_num, s, Func, Param, Res};
use super::FuncCtx;
use terrane_value::convert::{convert, unify};
use terrane_value::{Type, Value};

pub(super) const NAMES: &[&str] = &["concat", "flatten", "slice", "sort", "reverse", "distinct"];

pub(super) fn lookup(name: &str) -> Option<Func> {
    Some(match name {
        "concat" => Func::ret_fn(vec![], concat_ret, concat).variadic(p_any("seqs")),
        "flatten" => Func::ret_fn(vec![p_any("list")], flatten_ret, flatten),
        "slice" => Func::ret_fn(
            vec![p_any("list"), p_num("start_index"), p_num("end_index")],
            slice_ret,
            slice,
        ),
        "sort" => Func::new(
            vec![Param::new("list", Type::list(Type::String))],
            Type::list(Type::String),
            sort,
        ),
        "reverse" => Func::ret_fn(vec![p_any("list")], reverse_ret, reverse),
        "distinct" => Func::ret_fn(
            vec![Param::new("list", Type::list(Type::Dynamic))],
            |a| Ok(a[0].ty().clone()),
            distinct,
        ),
        _ => return None,
    })
}

fn concat_ret(a: &[Value]) -> Res<Type> {
    if a.is_empty() {
        return call_err("at least one argument is required");
    }
    if a.iter().all(|v| matches!(v.ty(), Type::List(_))) {
        let types: Vec<Type> = a
            .iter()
            .filter_map(|v| v.ty().element_type().cloned())
            .collect();
        if let Some(t) = unify(&types) {
            return Ok(Type::list(t));
        }
    }
    let mut out = Vec::new();
    for (i, v) in a.iter().enumerate() {
        match v.ty() {
            Type::Tuple(ts) => out.extend(ts.iter().cloned()),
            Type::List(t) => {
                if !v.is_known() {
                    return Ok(Type::Dynamic);
                }
                out.extend(std::iter::repeat_n((**t).clone(), elems(v).len()));
            }
            other => {
                return arg_err(
                    i,
                    format!(
                        "all arguments must be lists or tuples; got {}",
                        other.friendly_name()
                    ),
                )
            }
        }
    }
    Ok(Type::tuple(out))
}

fn concat(a: &[Value], ret: &Type, _: &FuncCtx) -> Res<Value> {
    let all: Vec<Value> = a.iter().flat_map(|v| elems(v).iter().cloned()).collect();
    match ret {
        Type::List(t) => {
            let mut out = Vec::with_capacity(all.len());
            for v in &all {
                out.push(convert(v, t).or_else(|e| call_err(e.to_string()))?);
            }
            Ok(Value::list((**t).clone(), out))
        }
        _ => Ok(Value::tuple(all)),
    }
}

/// Flattens nested lists, sets and tuples; `None` when something inside is
/// not yet known (so the shape is unknown).
fn flat(v: &Value, out: &mut Vec<Value>) -> Option<()> {
    for e in elems(v) {
        match e.ty() {
            Type::List(_) | Type::Set(_) | Type::Tuple(_) if !e.is_null() => {
                if !e.is_known() {
                    return None;
                }
                flat(e, out)?;
            }
            _ => out.push(e.clone()),
        }
    }
    Some(())
}

fn flatten_ret(a: &[Value]) -> Res<Type> {
    if !matches!(a[0].ty(), Type::List(_) | Type::Set(_) | Type::Tuple(_)) {
        return call_err("can only flatten lists, sets and tuples");
    }
    if !a[0].is_known() {
        return Ok(Type::Dynamic);
    }
    let mut out = Vec::new();
    match flat(&a[0], &mut out) {
        Some(()) => Ok(Type::tuple(out.iter().map(|v| v.ty().clone()).collect())),
        None => Ok(Type::Dynamic),
    }
}

fn flatten(a: &[Value], _: &Type, _: &FuncCtx) -> Res<Value> {
    let mut out = Vec::new();
    flat(&a[0], &mut out);
    Ok(Value::tuple(out))
}

fn bounds(a: &[Value], len: usize) -> Res<(usize, usize)> {
    let start = int_arg(a, 1)?;
    let end = int_arg(a, 2)?;
    if start < 0 {
        return arg_err(1, "start index must not be less than zero");
    }
    if end as i128 > len as i128 {
        return arg_err(
            2,
            "end index must not be greater than the length of the list",
        );
    }
    if start > end {
        return arg_err(1, "start index must not be greater than end index");
    }
    Ok((start as usize, end as usize))
}

fn slice_ret(a: &[Value]) -> Res<Type> {
    match a[0].ty() {
        Type::List(_) => Ok(a[0].ty().clone()),
        Type::Tuple(ts) => {
            if !a[1].is_known() || !a[2].is_known() || a[1].is_null() || a[2].is_null() {
                return Ok(Type::Dynamic);
            }
            let (x, y) = bounds(a, ts.len())?;
            Ok(Type::tuple(ts[x..y].to_vec()))
        }
        _ => arg_err(0, "must be a list or tuple value"),
    }
}

fn slice(a: &[Value], ret: &Type, _: &FuncCtx) -> Res<Value> {
    let es = elems(&a[0]);
    let (x, y) = bounds(a, es.len())?;
    Ok(match ret {
        Type::List(t) => Value::list((**t).clone(), es[x..y].to_vec()),
        _ => Value::tuple(es[x..y].to_vec()),
    })
}

fn sort(a: &[Value], _: &Type, _: &FuncCtx) -> Res<Value> {
    let es = elems(&a[0]);
    if let Some(i) = es.iter().position(Value::is_null) {
        return call_err(format!(
            "given list element {i} is null; a null string cannot be sorted"
        ));
    }
    let mut out: Vec<Value> = es.to_vec();
    out.sort_by(|x, y| s(x).as_bytes().cmp(s(y).as_bytes()));
    Ok(Value::list(Type::String, out))
}

fn reverse_ret(a: &[Value]) -> Res<Type> {
    match a[0].ty() {
        Type::List(t) | Type::Set(t) => Ok(Type::list((**t).clone())),
        Type::Tuple(ts) => Ok(Type::tuple(ts.iter().rev().cloned().collect())),
        _ => arg_err(0, "can only reverse list or tuple values"),
    }
}

fn reverse(a: &[Value], ret: &Type, _: &FuncCtx) -> Res<Value> {
    let out: Vec<Value> = elems(&a[0]).iter().rev().cloned().collect();
    Ok(match ret {
        Type::List(t) => Value::list((**t).clone(), out),
        _ => Value::tuple(out),
    })
}

fn distinct(a: &[Value], ret: &Type, _: &FuncCtx) -> Res<Value> {
    let mut out: Vec<Value> = Vec::new();
    for e in elems(&a[0]) {
        if !out.iter().any(|o| same(o, e)) {
            out.push(e.clone());
        }
    }
    Ok(Value::list(
        ret.element_type().cloned().unwrap_or(Type::Dynamic),
        out,
    ))
}

#[cfg(test)]
#[path = "sequence_tests.rs"]
mod tests;
