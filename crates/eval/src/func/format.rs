//! `format` and `formatlist`: Go's fmt verbs as cty implements them over
//! arbitrary-precision numbers.

use super::encoding::{go_json_string, json_text};
use super::numfmt;
use super::spec::{arg_err, call_err, elems, p_any, p_str, s, unknown_nn, Fail, Func, Res};
use super::FuncCtx;
use terrane_value::convert::convert;
use terrane_value::{Kind, Refinements, Type, Value};

pub(super) const NAMES: &[&str] = &["format", "formatlist"];

pub(super) fn lookup(name: &str) -> Option<Func> {
    Some(match name {
        "format" => Func::new(vec![p_str("format")], Type::String, format)
            .variadic(p_any("args").null().unknown().dynamic()),
        "formatlist" => Func::new(vec![p_str("format")], Type::list(Type::String), formatlist)
            .variadic(p_any("args").null().unknown().dynamic()),
        _ => return None,
    })
}

/// One `%` directive of a format string.
struct Verb {
    /// Byte offset of the `%` in the format string.
    at: usize,
    /// The directive's text, e.g. `%-5.2f`.
    text: String,
    minus: bool,
    plus: bool,
    sharp: bool,
    zero: bool,
    space: bool,
    width: Option<usize>,
    prec: Option<usize>,
    verb: char,
}

/// A piece of a parsed format string.
enum Piece {
    Lit(String),
    /// A verb and the index of the argument it consumes.
    Verb(Verb, usize),
}

fn parse(fmt: &str) -> Res<(Vec<Piece>, usize)> {
    let mut pieces = Vec::new();
    let mut lit = String::new();
    let mut next_arg = 0usize;
    let mut max_used = 0usize;
    let mut it = fmt.char_indices().peekable();
    while let Some((at, c)) = it.next() {
        if c != '%' {
            lit.push(c);
            continue;
        }
        let mut v = Verb {
            at,
            text: String::new(),
            minus: false,
            plus: false,
            sharp: false,
            zero: false,
            space: false,
            width: None,
            prec: None,
            verb: ' ',
        };
        while let Some(&(_, f)) = it.peek() {
            match f {
                '-' => v.minus = true,
                '+' => v.plus = true,
                '#' => v.sharp = true,
                '0' => v.zero = true,
                ' ' => v.space = true,
                _ => break,
            }
            it.next();
        }
        let mut explicit = None;
        let digits = |it: &mut std::iter::Peekable<std::str::CharIndices>| {
            let mut d = String::new();
            while let Some(&(_, c)) = it.peek() {
                if !c.is_ascii_digit() {
                    break;
                }
                d.push(c);
                it.next();
            }
            d
        };
        if it.peek().map(|p| p.1) == Some('[') {
            it.next();
            let d = digits(&mut it);
            if it.next().map(|p| p.1) != Some(']') || d.is_empty() {
                return call_err(format!("invalid format string starting at offset {at}"));
            }
            explicit = d.parse::<usize>().ok();
        }
        let w = digits(&mut it);
        if !w.is_empty() {
            v.width = w.parse().ok();
        }
        if it.peek().map(|p| p.1) == Some('.') {
            it.next();
            let d = digits(&mut it);
            v.prec = Some(if d.is_empty() {
                0
            } else {
                d.parse().unwrap_or(usize::MAX)
            });
        }
        // A width or precision is memory to fill: bounded, so a typo like
        // `%999999999999d` is an error instead of a failed allocation that
        // aborts the process (Terraform has no bound and tries).
        if v.width.is_none() && !w.is_empty()
            || v.width.is_some_and(|n| n > MAX_WIDTH)
            || v.prec.is_some_and(|n| n > MAX_WIDTH)
        {
            return call_err(format!(
                "the width or precision at offset {at} is larger than {MAX_WIDTH}"
            ));
        }
        let Some((end, verb)) = it.next() else {
            return call_err(format!("invalid format string starting at offset {at}"));
        };
        v.verb = verb;
        v.text = fmt[at..end + verb.len_utf8()].to_string();
        if verb == '%' {
            lit.push('%');
            continue;
        }
        if !"vtbdoxXeEfgGsq".contains(verb) {
            return call_err(format!(
                "unsupported format verb '{verb}' in \"{}\" at offset {at}",
                v.text
            ));
        }
        if let Some(e) = explicit {
            next_arg = e.saturating_sub(1);
        }
        if !lit.is_empty() {
            pieces.push(Piece::Lit(std::mem::take(&mut lit)));
        }
        pieces.push(Piece::Verb(v, next_arg));
        next_arg += 1;
        max_used = max_used.max(next_arg);
    }
    if !lit.is_empty() {
        pieces.push(Piece::Lit(lit));
    }
    Ok((pieces, max_used))
}

/// Formats `args` by `fmt`; an unknown argument stops formatting there and
/// gives an unknown string with the text so far as its prefix.
fn render(fmt: &str, args: &[Value]) -> Res<Result<String, String>> {
    let (pieces, used) = parse(fmt)?;
    let mut out = String::new();
    for p in &pieces {
        match p {
            Piece::Lit(l) => out.push_str(l),
            Piece::Verb(v, i) => {
                let Some(arg) = args.get(*i) else {
                    return call_err(format!(
                        "not enough arguments for \"{}\" at {}: need index {} but have {} total",
                        v.text,
                        v.at,
                        i + 1,
                        args.len()
                    ));
                };
                if !arg.is_wholly_known() {
                    return Ok(Err(out));
                }
                let text = verb(v, arg).map_err(|m| {
                    Fail::Call(format!(
                        "unsupported value for \"{}\" at {}: {m}",
                        v.text, v.at
                    ))
                })?;
                out.push_str(&text);
            }
        }
    }
    if args.len() > used {
        return arg_err(
            used + 1,
            format!("too many arguments; only {used} used by format string"),
        );
    }
    Ok(Ok(out))
}

/// The largest width or precision a verb may ask for.
pub const MAX_WIDTH: usize = 10_000_000;

fn format(a: &[Value], _: &Type, _: &FuncCtx) -> Res<Value> {
    let args: Vec<Value> = a[1..].to_vec();
    Ok(match render(s(&a[0]), &args)? {
        Ok(text) => Value::string(text),
        Err(prefix) => {
            Value::unknown_refined(Type::String, Refinements::not_null().with_prefix(&prefix))
        }
    })
}

fn formatlist(a: &[Value], ret: &Type, _: &FuncCtx) -> Res<Value> {
    let mut len: Option<(usize, usize)> = None;
    for (i, arg) in a[1..].iter().enumerate() {
        let is_seq = matches!(arg.ty(), Type::List(_) | Type::Tuple(_) | Type::Set(_));
        if !is_seq {
            continue;
        }
        if !arg.is_known() {
            return Ok(unknown_nn(ret.clone()));
        }
        if arg.is_null() {
            return arg_err(i + 1, "argument must not be null");
        }
        let l = elems(arg).len();
        match len {
            Some((_, want)) if want != l => {
                return arg_err(
                    i + 1,
                    format!("argument {} has length {l}, which is inconsistent with argument {} of length {want}", i + 1, len.map(|x| x.0).unwrap_or(0) + 1),
                )
            }
            None => len = Some((i, l)),
            _ => {}
        }
    }
    let n = len.map(|x| x.1).unwrap_or(1);
    let mut out = Vec::with_capacity(n);
    for k in 0..n {
        let row: Vec<Value> = a[1..]
            .iter()
            .map(|arg| match arg.ty() {
                Type::List(_) | Type::Tuple(_) | Type::Set(_) => elems(arg)[k].clone(),
                _ => arg.clone(),
            })
            .collect();
        out.push(
            match render(s(&a[0]), &row).map_err(|f| match f {
                Fail::Call(m) => Fail::Call(format!("error on format iteration {k}: {m}")),
                other => other,
            })? {
                Ok(text) => Value::string(text),
                Err(_) => unknown_nn(Type::String),
            },
        );
    }
    Ok(Value::list(Type::String, out))
}

/// Formats one argument for one verb; the error is the reason part of
/// Terraform's message.
fn verb(v: &Verb, arg: &Value) -> Result<String, String> {
    if arg.is_null() {
        if v.verb == 'v' {
            return Ok(pad(v, "null".into(), false));
        }
        return Err("null value cannot be formatted".into());
    }
    let to = |ty: &Type| -> Result<Value, String> {
        super::spec::convert_msg(arg, ty).map_err(|m| {
            if m.starts_with("a ") {
                m
            } else {
                m.to_string()
            }
        })
    };
    let text = match v.verb {
        'v' => match arg.kind() {
            Kind::String(t) if !v.sharp => t.to_string(),
            Kind::Number(_) if !v.sharp => return number(v, arg, 'g'),
            Kind::Bool(b) if !v.sharp => b.to_string(),
            _ => json_text(arg).map_err(|e| e.to_string())?,
        },
        't' => to(&Type::Bool)?
            .as_bool()
            .map(|b| b.to_string())
            .unwrap_or_default(),
        's' => {
            let t = to(&Type::String)?;
            let t = t.as_str().unwrap_or_default();
            match v.prec {
                Some(p) => t.chars().take(p).collect(),
                None => t.to_string(),
            }
        }
        'q' => go_json_string(to(&Type::String)?.as_str().unwrap_or_default()),
        c => return number(v, &to(&Type::Number)?, c),
    };
    Ok(pad(v, text, false))
}

fn number(v: &Verb, arg: &Value, c: char) -> Result<String, String> {
    let num = convert(arg, &Type::Number).map_err(|_| "a number is required".to_string())?;
    let num = num
        .as_number()
        .cloned()
        .unwrap_or_else(terrane_value::Number::zero);
    let body = match c {
        'b' | 'd' | 'o' | 'x' | 'X' => {
            let radix = match c {
                'b' => 2,
                'o' => 8,
                'x' | 'X' => 16,
                _ => 10,
            };
            let Some(t) = numfmt::integer(&num, radix) else {
                return Err("an integer is required".into());
            };
            let t = if c == 'X' { t.to_uppercase() } else { t };
            if v.sharp && c != 'd' && c != 'b' {
                let prefix = match c {
                    'o' => "0",
                    'x' => "0x",
                    _ => "0X",
                };
                match t.strip_prefix('-') {
                    Some(r) => format!("-{prefix}{r}"),
                    None => format!("{prefix}{t}"),
                }
            } else {
                t
            }
        }
        'e' | 'E' => numfmt::exp(&num, v.prec.unwrap_or(6), c == 'E'),
        'f' => numfmt::fixed(&num, v.prec.unwrap_or(6)),
        _ => numfmt::general(&num, v.prec, c == 'G'),
    };
    let body = if !body.starts_with('-') && v.plus {
        format!("+{body}")
    } else if !body.starts_with('-') && v.space {
        format!(" {body}")
    } else {
        body
    };
    Ok(pad(v, body, true))
}

/// Pads to the verb's width: spaces on the left (or right with `-`), or
/// zeros after the sign for numbers with `0`.
fn pad(v: &Verb, text: String, numeric: bool) -> String {
    let Some(w) = v.width else { return text };
    let len = text.chars().count();
    if len >= w {
        return text;
    }
    let fill = w - len;
    if v.minus {
        format!("{text}{}", " ".repeat(fill))
    } else if v.zero && numeric {
        let (sign, rest) = match text.chars().next() {
            Some(c @ ('-' | '+' | ' ')) => (c.to_string(), &text[1..]),
            _ => (String::new(), &text[..]),
        };
        format!("{sign}{}{rest}", "0".repeat(fill))
    } else {
        format!("{}{text}", " ".repeat(fill))
    }
}

#[cfg(test)]
#[path = "format_tests.rs"]
mod tests;
