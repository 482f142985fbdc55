//! `yamlencode` (the block style Terraform writes: double-quoted strings
//! and keys, literal blocks for multi-line strings) and `yamldecode` (one
//! document; YAML 1.1-style resolution of plain scalars as Terraform does:
//! `yes`/`on` are true, timestamps become RFC 3339 strings).

use super::encoding::go_json_string;
use super::spec::{call_err, p_any, p_str, s, Func, Res};
use std::collections::{BTreeMap, HashMap};
use terrane_value::{Kind, Number, Type, Value};
use yaml_rust2::parser::{Event, Parser, Tag};
use yaml_rust2::scanner::{Marker, TScalarStyle};

pub(super) const NAMES: &[&str] = &["yamlencode", "yamldecode"];

pub(super) fn lookup(name: &str) -> Option<Func> {
    Some(match name {
        "yamlencode" => Func::new(
            vec![p_any("value").null().dynamic()],
            Type::String,
            |a, _, _| {
                let mut out = String::new();
                encode(&a[0], 0, &mut out).or_else(call_err)?;
                if a[0].is_null() {
                    out.push_str("...\n");
                }
                Ok(Value::string(out))
            },
        ),
        "yamldecode" => {
            Func::ret_fn(vec![p_str("src")], decode_ret, |a, _, _| decode(s(&a[0]))).may_be_null()
        }
        _ => return None,
    })
}

// ---- encoding ------------------------------------------------------------

fn scalar(v: &Value, indent: usize) -> Result<Option<String>, String> {
    Ok(Some(match v.kind() {
        Kind::Null => "null".into(),
        Kind::Bool(b) => b.to_string(),
        Kind::Number(n) => match &**n {
            Number::Finite(_) => n.to_string(),
            Number::PosInfinity => ".inf".into(),
            Number::NegInfinity => "-.inf".into(),
        },
        Kind::String(t) if t.contains('\n') && !t.chars().any(|c| c.is_control() && c != '\n') => {
            let chomp = if !t.ends_with('\n') {
                "-"
            } else if t.ends_with("\n\n") {
                "+"
            } else {
                ""
            };
            let pad = " ".repeat(indent + 2);
            let body = t.strip_suffix('\n').unwrap_or(t);
            let mut out = format!("|{chomp}");
            for line in body.split('\n') {
                out.push('\n');
                if !line.is_empty() {
                    out.push_str(&pad);
                    out.push_str(line);
                }
            }
            out
        }
        Kind::String(t) => yaml_quote(t),
        Kind::Unknown(_) => return Err("value is not known".into()),
        Kind::Seq(es) | Kind::Set(es) if es.is_empty() => "[]".into(),
        Kind::Map(m) if m.is_empty() => "{}".into(),
        _ => return Ok(None),
    }))
}

/// A double-quoted YAML scalar (JSON escapes are valid YAML escapes; the
/// HTML-safe ones are undone).
fn yaml_quote(t: &str) -> String {
    go_json_string(t)
        .replace("\\u003c", "<")
        .replace("\\u003e", ">")
        .replace("\\u0026", "&")
}

/// Writes `v` as a block at `indent`; a trailing newline is always added.
fn encode(v: &Value, indent: usize, out: &mut String) -> Result<(), String> {
    if let Some(text) = scalar(v, indent)? {
        out.push_str(&text);
        out.push('\n');
        return Ok(());
    }
    let pad = " ".repeat(indent);
    match v.kind() {
        Kind::Seq(es) | Kind::Set(es) => {
            for (i, e) in es.iter().enumerate() {
                if i > 0 {
                    out.push_str(&pad);
                }
                out.push_str("- ");
                encode(e, indent + 2, out)?;
            }
        }
        Kind::Map(m) => {
            for (i, (k, e)) in m.iter().enumerate() {
                if i > 0 {
                    out.push_str(&pad);
                }
                out.push_str(&yaml_quote(k));
                out.push(':');
                match scalar(e, indent)? {
                    Some(text) => {
                        out.push(' ');
                        out.push_str(&text);
                        out.push('\n');
                    }
                    None => {
                        out.push('\n');
                        let child = if matches!(e.kind(), Kind::Map(_)) {
                            indent + 2
                        } else {
                            indent
                        };
                        out.push_str(&" ".repeat(child));
                        encode(e, child, out)?;
                    }
                }
            }
        }
        _ => unreachable!("scalars handled above"),
    }
    Ok(())
}

// ---- decoding ------------------------------------------------------------

fn events(src: &str) -> Result<Vec<(Event, Marker)>, String> {
    let mut p = Parser::new_from_str(src);
    let mut out = Vec::new();
    loop {
        let (ev, m) = p.next_token().map_err(|e| {
            format!(
                "on line {}, column {}: {}",
                e.marker().line(),
                e.marker().col() + 1,
                e.info()
            )
        })?;
        let end = matches!(ev, Event::StreamEnd);
        out.push((ev, m));
        if end {
            return Ok(out);
        }
    }
}

struct Builder {
    evs: Vec<(Event, Marker)>,
    pos: usize,
    anchors: HashMap<usize, Value>,
}

fn tag_name(t: &Option<Tag>) -> Option<String> {
    t.as_ref().map(|t| {
        if t.handle == "!!" || t.handle == "tag:yaml.org,2002:" {
            format!("!!{}", t.suffix)
        } else {
            format!("{}{}", t.handle, t.suffix)
        }
    })
}

impl Builder {
    fn node(&mut self) -> Result<Value, String> {
        let (ev, m) = self
            .evs
            .get(self.pos)
            .cloned()
            .ok_or("unexpected end of document")?;
        self.pos += 1;
        let at = |msg: &str| format!("on line {}, column {}: {msg}", m.line(), m.col() + 1);
        let (v, anchor) = match ev {
            Event::Scalar(text, style, anchor, tag) => (
                resolve(&text, style, tag_name(&tag)).map_err(|e| at(&e))?,
                anchor,
            ),
            Event::Alias(id) => {
                return self
                    .anchors
                    .get(&id)
                    .cloned()
                    .ok_or_else(|| at("unknown anchor"))
            }
            Event::SequenceStart(anchor, _) => {
                let mut es = Vec::new();
                while !matches!(self.evs.get(self.pos), Some((Event::SequenceEnd, _))) {
                    es.push(self.node()?);
                }
                self.pos += 1;
                (Value::tuple(es), anchor)
            }
            Event::MappingStart(anchor, _) => {
                let mut attrs = BTreeMap::new();
                while !matches!(self.evs.get(self.pos), Some((Event::MappingEnd, _))) {
                    let key = self.node()?;
                    let key = match key.kind() {
                        Kind::String(t) => t.to_string(),
                        Kind::Number(n) => n.to_string(),
                        Kind::Bool(b) => b.to_string(),
                        Kind::Null => "null".to_string(),
                        _ => return Err("only strings are allowed as mapping keys".into()),
                    };
                    let val = self.node()?;
                    attrs.insert(key, val);
                }
                self.pos += 1;
                (Value::object(attrs), anchor)
            }
            _ => return Err(at("unexpected event")),
        };
        if anchor > 0 {
            self.anchors.insert(anchor, v.clone());
        }
        Ok(v)
    }
}

fn parse_doc(src: &str) -> Result<Value, String> {
    let evs = events(src)?;
    let mut b = Builder {
        evs,
        pos: 0,
        anchors: HashMap::new(),
    };
    if matches!(b.evs.first(), Some((Event::StreamStart, _))) {
        b.pos = 1;
    }
    match b.evs.get(b.pos) {
        Some((Event::DocumentStart, _)) => b.pos += 1,
        _ => return Err("on line 1, column 1: missing start of document".into()),
    }
    let v = b.node()?;
    if matches!(b.evs.get(b.pos), Some((Event::DocumentEnd, _))) {
        b.pos += 1;
    }
    if !matches!(b.evs.get(b.pos), Some((Event::StreamEnd, _))) {
        return Err("on line 1, column 1: unexpected extra content after value".into());
    }
    Ok(v)
}

fn decode_ret(a: &[Value]) -> Res<Type> {
    if !a[0].is_known() {
        return Ok(Type::Dynamic);
    }
    parse_doc(s(&a[0]))
        .map(|v| v.ty().clone())
        .or_else(call_err)
}

fn decode(src: &str) -> Res<Value> {
    parse_doc(src).or_else(call_err)
}

/// Resolves a scalar by its tag, or for plain scalars by its text.
fn resolve(text: &str, style: TScalarStyle, tag: Option<String>) -> Result<Value, String> {
    let number = |t: &str| -> Option<Value> { parse_number(t).map(Value::number) };
    match tag.as_deref() {
        Some("!!str") | Some("!") => return Ok(Value::string(text)),
        Some("!!int") | Some("!!float") => {
            return number(text).ok_or_else(|| format!("cannot decode {text:?} as a number"))
        }
        Some("!!bool") => {
            return bool_of(text)
                .map(Value::bool)
                .ok_or_else(|| format!("cannot decode {text:?} as a bool"))
        }
        Some("!!null") => return Ok(Value::null(Type::Dynamic)),
        Some("!!timestamp") => {
            return timestamp(text)
                .map(Value::string)
                .ok_or_else(|| format!("cannot decode {text:?} as a timestamp"))
        }
        Some("!!binary") => return Ok(Value::string(text)),
        Some(other) if !matches!(style, TScalarStyle::Plain) || other != "!!" => {
            return Err(format!("unsupported tag {other:?}"));
        }
        _ => {}
    }
    if !matches!(style, TScalarStyle::Plain) {
        return Ok(Value::string(text));
    }
    if matches!(text, "" | "~" | "null" | "Null" | "NULL") {
        return Ok(Value::null(Type::Dynamic));
    }
    if let Some(b) = bool_of(text) {
        return Ok(Value::bool(b));
    }
    if let Some(v) = number(text) {
        return Ok(v);
    }
    if let Some(t) = timestamp(text) {
        return Ok(Value::string(t));
    }
    Ok(Value::string(text))
}

fn bool_of(t: &str) -> Option<bool> {
    match t {
        "y" | "Y" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" | "true" | "True" | "TRUE" => {
            Some(true)
        }
        "n" | "N" | "no" | "No" | "NO" | "off" | "Off" | "OFF" | "false" | "False" | "FALSE" => {
            Some(false)
        }
        _ => None,
    }
}

fn parse_number(t: &str) -> Option<Number> {
    match t {
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => return Some(Number::PosInfinity),
        "-.inf" | "-.Inf" | "-.INF" => return Some(Number::NegInfinity),
        _ => {}
    }
    let plain = t.replace('_', "");
    let (neg, body) = match plain.strip_prefix('-') {
        Some(r) => (true, r.to_string()),
        None => (false, plain.strip_prefix('+').unwrap_or(&plain).to_string()),
    };
    let radix = [("0x", 16), ("0o", 8), ("0b", 2)]
        .into_iter()
        .find(|(p, _)| body.starts_with(p));
    if let Some((p, r)) = radix {
        let n = num_bigint::BigInt::parse_bytes(&body.as_bytes()[p.len()..], r)?;
        let n = if neg { -n } else { n };
        return Some(Number::from(bigdecimal::BigDecimal::from(n)));
    }
    if body.starts_with('.') && body.len() > 1 {
        return Number::parse(&format!("{}0{body}", if neg { "-" } else { "" })).ok();
    }
    if !body.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    Number::parse(&plain).ok()
}

/// YAML timestamps (`2001-12-14`, `2001-12-14t21:59:43.10-05:00`, ...)
/// as RFC 3339 text in UTC, as Terraform gives them.
fn timestamp(t: &str) -> Option<String> {
    use chrono::{NaiveDate, NaiveDateTime, SecondsFormat, TimeZone, Utc};
    if let Ok(d) = NaiveDate::parse_from_str(t, "%Y-%m-%d") {
        if t.len() == 10 {
            return Some(
                Utc.from_utc_datetime(&d.and_hms_opt(0, 0, 0)?)
                    .to_rfc3339_opts(SecondsFormat::AutoSi, true),
            );
        }
    }
    let norm = t.replacen(' ', "T", 1).replace('t', "T");
    if let Ok(d) = chrono::DateTime::parse_from_rfc3339(&norm) {
        return Some(
            d.with_timezone(&Utc)
                .to_rfc3339_opts(SecondsFormat::AutoSi, true),
        );
    }
    if let Ok(d) = NaiveDateTime::parse_from_str(&norm, "%Y-%m-%dT%H:%M:%S%.f") {
        return Some(
            Utc.from_utc_datetime(&d)
                .to_rfc3339_opts(SecondsFormat::AutoSi, true),
        );
    }
    None
}

#[cfg(test)]
#[path = "yaml_tests.rs"]
mod tests;
