//! String functions that work on plain text: case, trimming, splitting and
//! joining, substrings (by grapheme cluster, as Terraform counts them).

use super::spec::{arg_err, call_err, elems, int_arg, p_num, p_str, s, Func, Param, Res};
use super::FuncCtx;
use terrane_value::{Type, Value};
use unicode_segmentation::UnicodeSegmentation;

pub(super) const NAMES: &[&str] = &[
    "join",
    "split",
    "lower",
    "upper",
    "title",
    "trim",
    "trimspace",
    "trimprefix",
    "trimsuffix",
    "chomp",
    "indent",
    "substr",
    "startswith",
    "endswith",
    "strcontains",
    "strrev",
];

pub(super) fn lookup(name: &str) -> Option<Func> {
    let str1 = |imp| Func::new(vec![p_str("str")], Type::String, imp);
    Some(match name {
        "join" => Func::new(vec![p_str("separator")], Type::String, join)
            .variadic(Param::new("lists", Type::list(Type::String))),
        "split" => Func::new(
            vec![p_str("separator"), p_str("str")],
            Type::list(Type::String),
            split,
        ),
        "lower" => str1(|a, _, _| Ok(Value::string(map_chars(s(&a[0]), char::to_lowercase)))),
        "upper" => str1(|a, _, _| Ok(Value::string(map_chars(s(&a[0]), char::to_uppercase)))),
        "title" => str1(|a, _, _| Ok(Value::string(title(s(&a[0]))))),
        "trimspace" => {
            str1(|a, _, _| Ok(Value::string(s(&a[0]).trim_matches(char::is_whitespace))))
        }
        "chomp" => str1(|a, _, _| Ok(Value::string(s(&a[0]).trim_end_matches(['\n', '\r'])))),
        "strrev" => str1(|a, _, _| {
            Ok(Value::string(
                s(&a[0]).graphemes(true).rev().collect::<String>(),
            ))
        }),
        "trim" => Func::new(
            vec![p_str("str"), p_str("cutset")],
            Type::String,
            |a, _, _| {
                let cut: Vec<char> = s(&a[1]).chars().collect();
                Ok(Value::string(s(&a[0]).trim_matches(cut.as_slice())))
            },
        ),
        "trimprefix" => Func::new(
            vec![p_str("str"), p_str("prefix")],
            Type::String,
            |a, _, _| {
                Ok(Value::string(
                    s(&a[0]).strip_prefix(s(&a[1])).unwrap_or(s(&a[0])),
                ))
            },
        ),
        "trimsuffix" => Func::new(
            vec![p_str("str"), p_str("suffix")],
            Type::String,
            |a, _, _| {
                Ok(Value::string(
                    s(&a[0]).strip_suffix(s(&a[1])).unwrap_or(s(&a[0])),
                ))
            },
        ),
        "indent" => Func::new(vec![p_num("spaces"), p_str("str")], Type::String, indent),
        "substr" => Func::new(
            vec![p_str("str"), p_num("offset"), p_num("length")],
            Type::String,
            substr,
        ),
        "startswith" => Func::new(
            vec![p_str("str"), p_str("prefix")],
            Type::Bool,
            |a, _, _| Ok(Value::bool(s(&a[0]).starts_with(s(&a[1])))),
        ),
        "endswith" => Func::new(
            vec![p_str("str"), p_str("suffix")],
            Type::Bool,
            |a, _, _| Ok(Value::bool(s(&a[0]).ends_with(s(&a[1])))),
        ),
        "strcontains" => Func::new(
            vec![p_str("str"), p_str("substr")],
            Type::Bool,
            |a, _, _| Ok(Value::bool(s(&a[0]).contains(s(&a[1])))),
        ),
        _ => return None,
    })
}

/// Maps each character with a case mapping, keeping characters whose
/// mapping is not a single character (as Go's per-rune mapping does).
fn map_chars<I: Iterator<Item = char>>(text: &str, f: fn(char) -> I) -> String {
    text.chars()
        .map(|c| {
            let mut m = f(c);
            match (m.next(), m.next()) {
                (Some(one), None) => one,
                _ => c,
            }
        })
        .collect()
}

/// Go's `strings.Title`: the first letter of each word upper-cased, where
/// words are separated by anything but letters, digits and underscores.
fn title(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut prev_sep = true;
    for c in text.chars() {
        if prev_sep {
            let mut up = c.to_uppercase();
            match (up.next(), up.next()) {
                (Some(one), None) => out.push(one),
                _ => out.push(c),
            }
        } else {
            out.push(c);
        }
        prev_sep = is_separator(c);
    }
    out
}

fn is_separator(c: char) -> bool {
    if c.is_ascii() {
        return !(c.is_ascii_alphanumeric() || c == '_');
    }
    if c.is_alphanumeric() {
        return false;
    }
    c.is_whitespace()
}

fn join(a: &[Value], _: &Type, _: &FuncCtx) -> Res<Value> {
    if a.len() < 2 {
        return call_err("at least one list is required");
    }
    let mut parts: Vec<&str> = Vec::new();
    for (i, list) in a[1..].iter().enumerate() {
        for (j, e) in elems(list).iter().enumerate() {
            if e.is_null() {
                return arg_err(i + 1, format!("element {j} is null"));
            }
            parts.push(s(e));
        }
    }
    Ok(Value::string(parts.join(s(&a[0]))))
}

fn split(a: &[Value], _: &Type, _: &FuncCtx) -> Res<Value> {
    let (sep, text) = (s(&a[0]), s(&a[1]));
    let parts: Vec<Value> = if sep.is_empty() {
        text.chars().map(|c| Value::string(c.to_string())).collect()
    } else {
        text.split(sep).map(Value::string).collect()
    };
    Ok(Value::list(Type::String, parts))
}

fn indent(a: &[Value], _: &Type, _: &FuncCtx) -> Res<Value> {
    let spaces = int_arg(a, 0)?.max(0) as usize;
    let pad = format!("\n{}", " ".repeat(spaces));
    Ok(Value::string(s(&a[1]).replace('\n', &pad)))
}

fn substr(a: &[Value], _: &Type, _: &FuncCtx) -> Res<Value> {
    let text = s(&a[0]);
    let mut offset = int_arg(a, 1)?;
    let mut length = int_arg(a, 2)?;
    let clusters: Vec<&str> = text.graphemes(true).collect();
    let total = clusters.len() as i64;
    if offset < 0 {
        offset += total;
        if offset < 0 {
            return arg_err(
                1,
                "offset must be in range from -string length to string length",
            );
        }
    }
    if offset > total {
        return arg_err(1, "offset cannot be larger than the length of the string");
    }
    if length < 0 || offset + length > total {
        length = total - offset;
    }
    Ok(Value::string(
        clusters[offset as usize..(offset + length) as usize].concat(),
    ))
}

#[cfg(test)]
#[path = "string_tests.rs"]
mod tests;
