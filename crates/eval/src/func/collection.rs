//! Functions that inspect or pick from a collection: `length`, `element`,
//! `index`, `contains`, `one`, `coalesce`, `coalescelist`, `compact`,
//! `alltrue`, `anytrue`, `sum`, `range`, `chunklist`.

use super::spec::{
    arg_err, call_err, elems, int_arg, n, p_any, p_num, s, unknown_nn, Func, Param, Res,
};
use super::FuncCtx;
use bigdecimal::BigDecimal;
use terrane_value::convert::{convert, unify};
use terrane_value::{Bound, Number, Refinements, Type, Value};

pub(super) const NAMES: &[&str] = &[
    "length",
    "element",
    "index",
    "contains",
    "one",
    "coalesce",
    "coalescelist",
    "compact",
    "alltrue",
    "anytrue",
    "sum",
    "range",
    "chunklist",
];

pub(super) fn lookup(name: &str) -> Option<Func> {
    Some(match name {
        "length" => Func::new(
            vec![p_any("value").unknown().dynamic().marked()],
            Type::Number,
            length,
        ),
        "element" => {
            Func::ret_fn(vec![p_any("list"), p_num("index")], element_ret, element).may_be_null()
        }
        "index" => Func::new(vec![p_any("list"), p_any("value")], Type::Number, index),
        "contains" => Func::new(vec![p_any("list"), p_any("value")], Type::Bool, contains),
        "one" => Func::ret_fn(vec![p_any("list")], one_ret, one).may_be_null(),
        "coalesce" => {
            Func::ret_fn(vec![], coalesce_ret, coalesce).variadic(p_any("vals").null().unknown())
        }
        "coalescelist" => Func::ret_fn(vec![], coalescelist_ret, coalescelist)
            .variadic(p_any("vals").null().unknown()),
        "compact" => Func::new(
            vec![Param::new("list", Type::list(Type::String))],
            Type::list(Type::String),
            compact,
        ),
        "alltrue" => Func::new(
            vec![Param::new("list", Type::list(Type::Bool))],
            Type::Bool,
            |a, _, _| {
                Ok(Value::bool(
                    elems(&a[0]).iter().all(|e| e.as_bool() == Some(true)),
                ))
            },
        ),
        "anytrue" => Func::new(
            vec![Param::new("list", Type::list(Type::Bool))],
            Type::Bool,
            |a, _, _| {
                Ok(Value::bool(
                    elems(&a[0]).iter().any(|e| e.as_bool() == Some(true)),
                ))
            },
        ),
        "sum" => Func::new(vec![p_any("list")], Type::Number, sum),
        "range" => Func::new(vec![], Type::list(Type::Number), range).variadic(p_num("params")),
        "chunklist" => Func::ret_fn(
            vec![Param::new("list", Type::list(Type::Dynamic)), p_num("size")],
            |a| Ok(Type::list(a[0].ty().clone())),
            chunklist,
        ),
        _ => return None,
    })
}

fn is_seq(t: &Type) -> bool {
    matches!(t, Type::List(_) | Type::Set(_) | Type::Tuple(_))
}

fn length(a: &[Value], _: &Type, _: &FuncCtx) -> Res<Value> {
    let v = &a[0];
    let mark = |out: Value| out.with_marks(v.marks());
    match v.ty() {
        Type::Tuple(ts) => return Ok(mark(Value::number(Number::from_u64(ts.len() as u64)))),
        Type::Object(o) => {
            return Ok(mark(Value::number(
                Number::from_u64(o.attrs().len() as u64),
            )))
        }
        Type::Dynamic => return Ok(mark(unknown_nn(Type::Number))),
        _ => {}
    }
    if v.is_null() {
        return arg_err(0, "argument must not be null");
    }
    if !v.is_known() {
        let r = v.refinements().cloned().unwrap_or_default();
        let lower = Bound {
            value: Number::from_u64(r.length_min.unwrap_or(0)),
            inclusive: true,
        };
        let upper = r.length_max.map(|m| Bound {
            value: Number::from_u64(m),
            inclusive: true,
        });
        let refined = Refinements::not_null().with_number_bounds(Some(lower), upper);
        return Ok(mark(Value::unknown_refined(Type::Number, refined)));
    }
    let count = match v.ty() {
        Type::String => {
            use unicode_segmentation::UnicodeSegmentation;
            s(v).graphemes(true).count()
        }
        Type::List(_) | Type::Set(_) | Type::Map(_) => v.length().unwrap_or(0),
        _ => return call_err("argument must be a string, a collection type, or a structural type"),
    };
    Ok(mark(Value::number(Number::from_u64(count as u64))))
}

fn element_ret(a: &[Value]) -> Res<Type> {
    match a[0].ty() {
        Type::List(t) => Ok((**t).clone()),
        Type::Tuple(ts) => {
            if ts.is_empty() {
                return call_err("cannot use element function with an empty list");
            }
            if !a[1].is_known() || a[1].is_null() {
                return Ok(Type::Dynamic);
            }
            let i = int_arg(a, 1)?;
            Ok(ts[i.rem_euclid(ts.len() as i64) as usize].clone())
        }
        _ => arg_err(0, "cannot read elements from set"),
    }
}

fn element(a: &[Value], _: &Type, _: &FuncCtx) -> Res<Value> {
    let es = elems(&a[0]);
    if es.is_empty() {
        return call_err("cannot use element function with an empty list");
    }
    let i = int_arg(a, 1)?;
    Ok(es[i.rem_euclid(es.len() as i64) as usize].clone())
}

fn index(a: &[Value], _: &Type, _: &FuncCtx) -> Res<Value> {
    if !matches!(a[0].ty(), Type::List(_) | Type::Tuple(_)) {
        return arg_err(0, "argument must be a list or tuple");
    }
    match elems(&a[0]).iter().position(|e| same(e, &a[1])) {
        Some(i) => Ok(Value::number(Number::from_u64(i as u64))),
        None => call_err("item not found"),
    }
}

/// Value equality as cty's `Equals` (types must agree; refinements do not
/// matter for known values).
pub(crate) fn same(a: &Value, b: &Value) -> bool {
    a.ty() == b.ty() && a.eq_ignoring_refinements(b)
}

fn contains(a: &[Value], _: &Type, _: &FuncCtx) -> Res<Value> {
    if !is_seq(a[0].ty()) {
        return call_err("argument must be list, tuple, or set");
    }
    Ok(Value::bool(elems(&a[0]).iter().any(|e| same(e, &a[1]))))
}

fn one_ret(a: &[Value]) -> Res<Type> {
    match a[0].ty() {
        Type::List(t) | Type::Set(t) => Ok((**t).clone()),
        Type::Tuple(ts) => match ts.len() {
            0 => Ok(Type::Dynamic),
            1 => Ok(ts[0].clone()),
            _ => arg_err(
                0,
                "must be a list, set, or tuple value with either zero or one elements",
            ),
        },
        _ => arg_err(
            0,
            "must be a list, set, or tuple value with either zero or one elements",
        ),
    }
}

fn one(a: &[Value], ret: &Type, _: &FuncCtx) -> Res<Value> {
    match elems(&a[0]) {
        [] => Ok(Value::null(ret.clone())),
        [x] => Ok(x.clone()),
        _ => arg_err(
            0,
            "must be a list, set, or tuple value with either zero or one elements",
        ),
    }
}

fn coalesce_ret(a: &[Value]) -> Res<Type> {
    let types: Vec<Type> = a.iter().map(|v| v.ty().clone()).collect();
    unify(&types).map_or_else(|| call_err("all arguments must have the same type"), Ok)
}

fn coalesce(a: &[Value], ret: &Type, _: &FuncCtx) -> Res<Value> {
    for v in a {
        if !v.is_known() {
            return Ok(unknown_nn(ret.clone()));
        }
        if v.is_null() || v.as_str() == Some("") {
            continue;
        }
        return convert(v, ret).or_else(|_| call_err("all arguments must have the same type"));
    }
    call_err("no non-null, non-empty-string arguments")
}

fn coalescelist_ret(a: &[Value]) -> Res<Type> {
    for (i, v) in a.iter().enumerate() {
        if !is_seq(v.ty()) && !v.ty().is_dynamic() {
            return arg_err(
                i,
                format!(
                    "first argument must be a list, set, or tuple, not {}",
                    v.ty().friendly_name()
                ),
            );
        }
    }
    let types: Vec<Type> = a.iter().map(|v| v.ty().clone()).collect();
    match unify(&types) {
        Some(t) if a.iter().all(|v| v.ty() == &t) => Ok(t),
        _ => Ok(Type::Dynamic),
    }
}

fn coalescelist(a: &[Value], ret: &Type, _: &FuncCtx) -> Res<Value> {
    for v in a {
        if !v.is_known() {
            return Ok(unknown_nn(ret.clone()));
        }
        if v.is_null() || v.length() == Some(0) {
            continue;
        }
        return Ok(v.clone());
    }
    call_err("no non-null arguments")
}

fn compact(a: &[Value], _: &Type, _: &FuncCtx) -> Res<Value> {
    let kept: Vec<Value> = elems(&a[0])
        .iter()
        .filter(|e| !e.is_null() && e.as_str() != Some(""))
        .cloned()
        .collect();
    Ok(Value::list(Type::String, kept))
}

fn sum(a: &[Value], _: &Type, _: &FuncCtx) -> Res<Value> {
    if !is_seq(a[0].ty()) {
        return arg_err(
            0,
            "argument must be list, set, or tuple. Received ".to_string()
                + &a[0].ty().friendly_name(),
        );
    }
    let es = elems(&a[0]);
    if es.is_empty() {
        return arg_err(0, "cannot sum an empty list");
    }
    let mut total = Number::zero();
    for e in es {
        let Ok(num) = convert(e, &Type::Number) else {
            return arg_err(0, "argument must be list, set, or tuple of number values");
        };
        if num.is_null() {
            return arg_err(0, "argument must be list, set, or tuple of number values");
        }
        total = add(&total, &n(&num)).ok_or_else(|| {
            super::spec::Fail::Call("can't compute sum of opposing infinities".into())
        })?;
    }
    Ok(Value::number(total))
}

/// Sum of two numbers; `None` for opposing infinities.
pub(crate) fn add(x: &Number, y: &Number) -> Option<Number> {
    use Number::*;
    match (x, y) {
        (Finite(a), Finite(b)) => Some(Number::from(a + b)),
        (PosInfinity, NegInfinity) | (NegInfinity, PosInfinity) => None,
        (PosInfinity, _) | (_, PosInfinity) => Some(PosInfinity),
        _ => Some(NegInfinity),
    }
}

fn range(a: &[Value], _: &Type, _: &FuncCtx) -> Res<Value> {
    let dec = |i: usize| -> Res<BigDecimal> {
        match a[i].as_number().and_then(Number::as_decimal) {
            Some(d) => Ok(d.clone()),
            None => arg_err(i, "value must be a finite number"),
        }
    };
    let (start, limit, step) = match a.len() {
        1 => (BigDecimal::from(0), dec(0)?, None),
        2 => (dec(0)?, dec(1)?, None),
        3 => (dec(0)?, dec(1)?, Some(dec(2)?)),
        _ => return call_err("must have one, two, or three arguments"),
    };
    let step = step.unwrap_or_else(|| {
        if limit >= start {
            BigDecimal::from(1)
        } else {
            BigDecimal::from(-1)
        }
    });
    let zero = BigDecimal::from(0);
    let mut out = Vec::new();
    let mut x = start;
    let going_up = step >= zero;
    loop {
        let more = if going_up { x < limit } else { x > limit };
        if !more {
            break;
        }
        if out.len() >= 1024 {
            return call_err(
                "more than 1024 values were generated; either decrease the difference between start and end or use a smaller step",
            );
        }
        out.push(Value::number(Number::from(x.clone())));
        x += &step;
    }
    Ok(Value::list(Type::Number, out))
}

fn chunklist(a: &[Value], ret: &Type, _: &FuncCtx) -> Res<Value> {
    let size = int_arg(a, 1)?;
    if size < 0 {
        return call_err("the size argument must be positive");
    }
    let elem_list = ret.element_type().cloned().unwrap_or(Type::Dynamic);
    let inner = elem_list.element_type().cloned().unwrap_or(Type::Dynamic);
    let es = elems(&a[0]);
    if size == 0 {
        return Ok(Value::list(elem_list, vec![a[0].clone()]));
    }
    let chunks: Vec<Value> = es
        .chunks(size as usize)
        .map(|c| Value::list(inner.clone(), c.to_vec()))
        .collect();
    Ok(Value::list(elem_list, chunks))
}

#[cfg(test)]
#[path = "collection_tests.rs"]
mod tests;
