//! Set algebra: `setunion`, `setintersection`, `setsubtract`, `setproduct`.

use super::collection::same;
use super::spec::{arg_err, call_err, elems, p_any, Func, Param, Res};
use super::FuncCtx;
use terrane_value::convert::{convert, unify};
use terrane_value::{Type, Value};

pub(super) const NAMES: &[&str] = &["setunion", "setintersection", "setsubtract", "setproduct"];

fn p_set(name: &'static str) -> Param {
    Param::new(name, Type::set(Type::Dynamic))
}

pub(super) fn lookup(name: &str) -> Option<Func> {
    Some(match name {
        "setunion" => Func::ret_fn(vec![p_set("first_set")], set_ret, |a, r, _| {
            combine(a, r, Op::Union)
        })
        .variadic(p_set("other_sets")),
        "setintersection" => Func::ret_fn(vec![p_set("first_set")], set_ret, |a, r, _| {
            combine(a, r, Op::Intersect)
        })
        .variadic(p_set("other_sets")),
        "setsubtract" => Func::ret_fn(vec![p_set("a"), p_set("b")], set_ret, |a, r, _| {
            combine(a, r, Op::Subtract)
        }),
        "setproduct" => Func::ret_fn(vec![], product_ret, product).variadic(p_any("sets")),
        _ => return None,
    })
}

fn set_ret(a: &[Value]) -> Res<Type> {
    let types: Vec<Type> = a
        .iter()
        .filter_map(|v| v.ty().element_type().cloned())
        .collect();
    match unify(&types) {
        Some(t) => Ok(Type::set(t)),
        None => call_err("given sets must all have compatible element types"),
    }
}

#[derive(Clone, Copy)]
enum Op {
    Union,
    Intersect,
    Subtract,
}

fn combine(a: &[Value], ret: &Type, op: Op) -> Res<Value> {
    let mut sets = Vec::with_capacity(a.len());
    for v in a {
        sets.push(convert(v, ret).or_else(|e| call_err(e.to_string()))?);
    }
    let first: Vec<Value> = elems(&sets[0]).to_vec();
    let rest = &sets[1..];
    let out: Vec<Value> = match op {
        Op::Union => sets.iter().flat_map(|s| elems(s).iter().cloned()).collect(),
        Op::Intersect => first
            .into_iter()
            .filter(|e| rest.iter().all(|s| elems(s).iter().any(|x| same(x, e))))
            .collect(),
        Op::Subtract => first
            .into_iter()
            .filter(|e| !rest.iter().any(|s| elems(s).iter().any(|x| same(x, e))))
            .collect(),
    };
    Ok(Value::set(
        ret.element_type().cloned().unwrap_or(Type::Dynamic),
        out,
    ))
}

fn elem_type(i: usize, v: &Value) -> Res<Type> {
    match v.ty() {
        Type::List(t) | Type::Set(t) => Ok((**t).clone()),
        Type::Tuple(ts) => {
            unify(ts).map_or_else(|| arg_err(i, "all elements must be of the same type"), Ok)
        }
        Type::Dynamic => Ok(Type::Dynamic),
        _ => arg_err(i, "a set or a list is required"),
    }
}

fn product_ret(a: &[Value]) -> Res<Type> {
    if a.len() < 2 {
        return call_err("at least two arguments are required");
    }
    let mut tys = Vec::with_capacity(a.len());
    for (i, v) in a.iter().enumerate() {
        tys.push(elem_type(i, v)?);
    }
    let tuple = Type::tuple(tys);
    Ok(if a.iter().all(|v| matches!(v.ty(), Type::Set(_))) {
        Type::set(tuple)
    } else {
        Type::list(tuple)
    })
}

fn product(a: &[Value], ret: &Type, _: &FuncCtx) -> Res<Value> {
    let tuple_ty = ret.element_type().cloned().unwrap_or(Type::Dynamic);
    let elem_tys = tuple_ty
        .tuple_types()
        .map(<[Type]>::to_vec)
        .unwrap_or_default();
    let mut rows: Vec<Vec<Value>> = vec![Vec::new()];
    for (i, v) in a.iter().enumerate() {
        let mut next = Vec::new();
        for row in &rows {
            for e in elems(v) {
                let e = convert(e, &elem_tys[i]).or_else(|err| call_err(err.to_string()))?;
                let mut r = row.clone();
                r.push(e);
                next.push(r);
            }
        }
        rows = next;
        if rows.len() > 1_000_000 {
            return call_err("the product has too many elements");
        }
    }
    let tuples: Vec<Value> = rows.into_iter().map(Value::tuple).collect();
    Ok(match ret {
        Type::Set(_) => Value::set(tuple_ty, tuples),
        _ => Value::list(tuple_ty, tuples),
    })
}

#[cfg(test)]
#[path = "sets_tests.rs"]
mod tests;
