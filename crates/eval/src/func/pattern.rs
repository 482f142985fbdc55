//! Regular-expression functions: `regex`, `regexall` and `replace` (whose
//! `/.../` form is a regex replacement). RE2 syntax, which the `regex`
//! crate follows.

use super::spec::{arg_err, call_err, p_str, s, Func, Res};
use super::FuncCtx;
use regex::Regex;
use std::collections::BTreeMap;
use terrane_value::{Type, Value};

pub(super) const NAMES: &[&str] = &["regex", "regexall", "replace"];

pub(super) fn lookup(name: &str) -> Option<Func> {
    Some(match name {
        "regex" => Func::ret_fn(vec![p_str("pattern"), p_str("string")], regex_ret, regex_fn),
        "regexall" => Func::ret_fn(
            vec![p_str("pattern"), p_str("string")],
            regexall_ret,
            regexall,
        ),
        "replace" => Func::new(
            vec![p_str("str"), p_str("substr"), p_str("replace")],
            Type::String,
            replace,
        ),
        _ => return None,
    })
}

fn compile(pattern: &str) -> Res<Regex> {
    Regex::new(pattern).or_else(|e| {
        arg_err(
            0,
            format!("error parsing pattern: {}", first_line(&e.to_string())),
        )
    })
}

fn first_line(t: &str) -> String {
    t.lines()
        .rfind(|l| !l.trim().is_empty())
        .unwrap_or(t)
        .trim()
        .to_string()
}

/// The type one match produces: string without groups, a tuple of strings
/// with unnamed groups, object of strings with named groups.
fn match_type(re: &Regex) -> Res<Type> {
    let groups = re.captures_len() - 1;
    let named: Vec<&str> = re.capture_names().flatten().collect();
    if groups == 0 {
        Ok(Type::String)
    } else if named.is_empty() {
        Ok(Type::tuple(vec![Type::String; groups]))
    } else if named.len() == groups {
        Ok(Type::object(named.into_iter().map(|n| (n, Type::String))))
    } else {
        arg_err(
            0,
            "invalid regexp pattern: cannot mix both named and unnamed capture groups",
        )
    }
}

fn regex_ret(a: &[Value]) -> Res<Type> {
    if !a[0].is_known() {
        return Ok(Type::Dynamic);
    }
    match_type(&compile(s(&a[0]))?)
}

fn regexall_ret(a: &[Value]) -> Res<Type> {
    if !a[0].is_known() {
        return Ok(Type::list(Type::Dynamic));
    }
    Ok(Type::list(match_type(&compile(s(&a[0]))?)?))
}

fn one_match(re: &Regex, ty: &Type, caps: &regex::Captures) -> Value {
    let group = |i: usize| {
        caps.get(i)
            .map(|m| Value::string(m.as_str()))
            .unwrap_or_else(|| Value::null(Type::String))
    };
    match ty {
        Type::String => group(0),
        Type::Tuple(_) => Value::tuple((1..caps.len()).map(group).collect()),
        _ => {
            let attrs: BTreeMap<String, Value> = re
                .capture_names()
                .enumerate()
                .filter_map(|(i, n)| n.map(|n| (n.to_string(), group(i))))
                .collect();
            Value::object(attrs)
        }
    }
}

fn regex_fn(a: &[Value], ret: &Type, _: &FuncCtx) -> Res<Value> {
    let re = compile(s(&a[0]))?;
    let ty = match_type(&re)?;
    let _ = ret;
    match re.captures(s(&a[1])) {
        Some(c) => Ok(one_match(&re, &ty, &c)),
        None => call_err("pattern did not match any part of the given string"),
    }
}

fn regexall(a: &[Value], _: &Type, _: &FuncCtx) -> Res<Value> {
    let re = compile(s(&a[0]))?;
    let ty = match_type(&re)?;
    let all: Vec<Value> = re
        .captures_iter(s(&a[1]))
        .map(|c| one_match(&re, &ty, &c))
        .collect();
    Ok(Value::list(ty, all))
}

fn replace(a: &[Value], _: &Type, _: &FuncCtx) -> Res<Value> {
    let (text, sub, rep) = (s(&a[0]), s(&a[1]), s(&a[2]));
    if sub.len() > 1 && sub.starts_with('/') && sub.ends_with('/') {
        let re = Regex::new(&sub[1..sub.len() - 1]).or_else(|e| {
            arg_err(
                1,
                format!("error parsing pattern: {}", first_line(&e.to_string())),
            )
        })?;
        return Ok(Value::string(re.replace_all(text, rep).into_owned()));
    }
    Ok(Value::string(text.replace(sub, rep)))
}

#[cfg(test)]
#[path = "pattern_tests.rs"]
mod tests;
