//! Functions over maps and objects: `merge`, `lookup`, `keys`, `values`,
//! `zipmap`, `transpose`.

use super::spec::{arg_err, call_err, elems, p_any, p_str, s, Func, Param, Res};
use super::FuncCtx;
use std::collections::BTreeMap;
use terrane_value::convert::{convert, unify};
use terrane_value::{Type, Value};

pub(super) const NAMES: &[&str] = &["merge", "lookup", "keys", "values", "zipmap", "transpose"];

pub(super) fn lookup(name: &str) -> Option<Func> {
    Some(match name {
        "merge" => Func::ret_fn(vec![], merge_ret, merge).variadic(p_any("maps").null().dynamic()),
        "lookup" => Func::ret_fn(vec![p_any("inputMap"), p_str("key")], lookup_ret, lookup_fn)
            .variadic(p_any("default").null())
            .may_be_null(),
        "keys" => Func::ret_fn(vec![p_any("inputMap")], keys_ret, keys),
        "values" => Func::ret_fn(vec![p_any("mapping")], values_ret, values),
        "zipmap" => Func::ret_fn(
            vec![
                Param::new("keys", Type::list(Type::String)),
                p_any("values"),
            ],
            zipmap_ret,
            zipmap,
        ),
        "transpose" => {
            let t = Type::map(Type::list(Type::String));
            Func::new(vec![Param::new("values", t.clone())], t, transpose)
        }
        _ => return None,
    })
}

fn merge_ret(a: &[Value]) -> Res<Type> {
    if a.is_empty() {
        return Ok(Type::empty_object());
    }
    let mut attrs: BTreeMap<String, Type> = BTreeMap::new();
    let mut matching = true;
    let mut attrs_known = true;
    for (i, v) in a.iter().enumerate() {
        let ty = v.ty();
        if ty.is_dynamic() {
            return Ok(Type::Dynamic);
        }
        match ty {
            Type::Object(o) if !v.is_null() => {
                attrs.extend(o.attrs().iter().map(|(k, t)| (k.clone(), t.clone())))
            }
            Type::Map(t) if !v.is_null() => match v.entries() {
                Some(m) => attrs.extend(m.keys().map(|k| (k.clone(), (**t).clone()))),
                None => attrs_known = false,
            },
            _ => {}
        }
        if i > 0 && ty != a[0].ty() {
            matching = false;
        }
    }
    if matching {
        return Ok(a[0].ty().clone());
    }
    if !attrs_known {
        return Ok(Type::Dynamic);
    }
    Ok(Type::object(attrs))
}

fn merge(a: &[Value], ret: &Type, _: &FuncCtx) -> Res<Value> {
    let mut out: BTreeMap<String, Value> = BTreeMap::new();
    for v in a {
        if !matches!(v.ty(), Type::Map(_) | Type::Object(_)) && !v.ty().is_dynamic() {
            return call_err(format!(
                "arguments must be maps or objects, got \"{}\"",
                v.ty().friendly_name()
            ));
        }
        if let Some(m) = v.entries() {
            out.extend(m.iter().map(|(k, e)| (k.clone(), e.clone())));
        }
    }
    Ok(match ret {
        Type::Map(t) => Value::map((**t).clone(), out),
        _ => Value::object(out),
    })
}

fn lookup_ret(a: &[Value]) -> Res<Type> {
    if a.len() > 3 {
        return call_err(format!(
            "lookup() takes two or three arguments, got {}",
            a.len()
        ));
    }
    match a[0].ty() {
        Type::Map(t) => {
            if let Some(d) = a.get(2) {
                if let Some(u) = unify(&[(**t).clone(), d.ty().clone()]) {
                    return Ok(u);
                }
            }
            Ok((**t).clone())
        }
        Type::Object(o) => {
            if !a[1].is_known() {
                return Ok(Type::Dynamic);
            }
            match (o.attr(s(&a[1])), a.get(2)) {
                (Some(t), _) => Ok(t.clone()),
                (None, Some(d)) => Ok(d.ty().clone()),
                (None, None) => arg_err(
                    0,
                    format!("the given object has no attribute {:?}", s(&a[1])),
                ),
            }
        }
        _ => arg_err(0, "the first argument must be a map or an object"),
    }
}

fn lookup_fn(a: &[Value], ret: &Type, _: &FuncCtx) -> Res<Value> {
    let key = s(&a[1]);
    let found = a[0].entries().and_then(|m| m.get(key)).cloned();
    let v = match (found, a.get(2)) {
        (Some(v), _) => v,
        (None, Some(d)) => d.clone(),
        (None, None) => return call_err(format!("lookup failed to find key {key:?}")),
    };
    convert(&v, ret).or_else(|e| call_err(e.to_string()))
}

fn keys_ret(a: &[Value]) -> Res<Type> {
    match a[0].ty() {
        Type::Map(_) => Ok(Type::list(Type::String)),
        Type::Object(o) => Ok(Type::tuple(vec![Type::String; o.attrs().len()])),
        _ => arg_err(0, "must have map or object type"),
    }
}

fn keys(a: &[Value], ret: &Type, _: &FuncCtx) -> Res<Value> {
    let names: Vec<Value> = a[0]
        .entries()
        .map(|m| m.keys().map(|k| Value::string(k.as_str())).collect())
        .unwrap_or_default();
    Ok(match ret {
        Type::List(_) => Value::list(Type::String, names),
        _ => Value::tuple(names),
    })
}

fn values_ret(a: &[Value]) -> Res<Type> {
    match a[0].ty() {
        Type::Map(t) => Ok(Type::list((**t).clone())),
        Type::Object(o) => Ok(Type::tuple(o.attrs().values().cloned().collect())),
        _ => arg_err(0, "values() requires a map as the first argument"),
    }
}

fn values(a: &[Value], ret: &Type, _: &FuncCtx) -> Res<Value> {
    let vals: Vec<Value> = a[0]
        .entries()
        .map(|m| m.values().cloned().collect())
        .unwrap_or_default();
    Ok(match ret {
        Type::List(t) => Value::list((**t).clone(), vals),
        _ => Value::tuple(vals),
    })
}

fn zipmap_ret(a: &[Value]) -> Res<Type> {
    match a[1].ty() {
        Type::List(t) | Type::Set(t) => Ok(Type::map((**t).clone())),
        Type::Tuple(ts) => {
            if !a[0].is_known() {
                return Ok(Type::Dynamic);
            }
            let ks = elems(&a[0]);
            if ks.len() != ts.len() {
                return call_err(format!(
                    "number of keys ({}) does not match number of values ({})",
                    ks.len(),
                    ts.len()
                ));
            }
            let mut attrs = BTreeMap::new();
            for (k, t) in ks.iter().zip(ts.iter()) {
                if k.is_null() {
                    return arg_err(0, "keys list has null value");
                }
                attrs.insert(s(k).to_string(), t.clone());
            }
            Ok(Type::object(attrs))
        }
        _ => arg_err(1, "values argument must be a list or tuple value"),
    }
}

fn zipmap(a: &[Value], ret: &Type, _: &FuncCtx) -> Res<Value> {
    let (ks, vs) = (elems(&a[0]), elems(&a[1]));
    if ks.len() != vs.len() {
        return call_err(format!(
            "number of keys ({}) does not match number of values ({})",
            ks.len(),
            vs.len()
        ));
    }
    let mut out = BTreeMap::new();
    for (k, v) in ks.iter().zip(vs.iter()) {
        if k.is_null() {
            return arg_err(0, "keys list has null value");
        }
        out.insert(s(k).to_string(), v.clone());
    }
    Ok(match ret {
        Type::Map(t) => Value::map((**t).clone(), out),
        _ => Value::object(out),
    })
}

fn transpose(a: &[Value], _: &Type, _: &FuncCtx) -> Res<Value> {
    let mut out: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for (k, list) in a[0].entries().into_iter().flatten() {
        if list.is_null() {
            return arg_err(0, "input must not contain null list");
        }
        for v in elems(list) {
            if v.is_null() {
                return arg_err(0, "input list must not contain null string");
            }
            out.entry(s(v).to_string())
                .or_default()
                .push(Value::string(k.as_str()));
        }
    }
    let entries = out
        .into_iter()
        .map(|(k, vs)| (k, Value::list(Type::String, vs)))
        .collect();
    Ok(Value::map(Type::list(Type::String), entries))
}

#[cfg(test)]
#[path = "maps_tests.rs"]
mod tests;
