//! Encoding functions: JSON both ways (as Go's encoding/json writes it),
//! base64, URL query escaping and CSV decoding.

use super::spec::{arg_err, call_err, p_any, p_str, s, Func, Res};
use super::FuncCtx;
use base64::Engine as _;
use std::collections::BTreeMap;
use terrane_value::{Kind, Number, Refinements, Type, Value};

pub(super) const NAMES: &[&str] = &[
    "jsonencode",
    "jsondecode",
    "base64encode",
    "base64decode",
    "urlencode",
    "csvdecode",
];

pub(super) fn lookup(name: &str) -> Option<Func> {
    Some(match name {
        "jsonencode" => Func::new(
            vec![p_any("val").null().unknown().dynamic()],
            Type::String,
            jsonencode,
        ),
        "jsondecode" => Func::ret_fn(vec![p_str("str")], jsondecode_ret, jsondecode).may_be_null(),
        "base64encode" => Func::new(vec![p_str("str")], Type::String, |a, _, _| {
            Ok(Value::string(
                base64::engine::general_purpose::STANDARD.encode(s(&a[0])),
            ))
        }),
        "base64decode" => Func::new(vec![p_str("str")], Type::String, base64decode),
        "urlencode" => Func::new(vec![p_str("str")], Type::String, |a, _, _| {
            Ok(Value::string(query_escape(s(&a[0]))))
        }),
        "csvdecode" => Func::ret_fn(vec![p_str("str")], csv_ret, csvdecode),
        _ => return None,
    })
}

/// A string as Go's encoding/json writes it (HTML-safe escapes included).
pub(crate) fn go_json_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The JSON text of a wholly known value, as `jsonencode` writes it.
pub(crate) fn json_text(v: &Value) -> Result<String, String> {
    let mut out = String::new();
    write_json(v, &mut out)?;
    Ok(out)
}

fn write_json(v: &Value, out: &mut String) -> Result<(), String> {
    match v.kind() {
        Kind::Null => out.push_str("null"),
        Kind::Unknown(_) => return Err("value is not known".into()),
        Kind::String(t) => out.push_str(&go_json_string(t)),
        Kind::Number(n) => match &**n {
            Number::Finite(_) => out.push_str(&n.to_string()),
            _ => return Err("json: unsupported value: +Inf".into()),
        },
        Kind::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Kind::Seq(es) | Kind::Set(es) => {
            out.push('[');
            for (i, e) in es.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(e, out)?;
            }
            out.push(']');
        }
        Kind::Map(m) => {
            out.push('{');
            for (i, (k, e)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&go_json_string(k));
                out.push(':');
                write_json(e, out)?;
            }
            out.push('}');
        }
    }
    Ok(())
}

fn jsonencode(a: &[Value], _: &Type, _: &FuncCtx) -> Res<Value> {
    let v = &a[0];
    if !v.is_wholly_known() {
        let r = Refinements::not_null();
        let prefix = match v.ty() {
            _ if !v.is_known_not_null() => "",
            Type::Object(_) | Type::Map(_) => "{",
            Type::List(_) | Type::Set(_) | Type::Tuple(_) => "[",
            Type::String => "\"",
            _ => "",
        };
        let r = if prefix.is_empty() {
            r
        } else {
            r.with_prefix(prefix)
        };
        return Ok(Value::unknown_refined(Type::String, r));
    }
    json_text(v).map(Value::string).or_else(call_err)
}

/// Parses `jsondecode`'s argument. Terraform's function (cty's) fails the
/// call as a whole, not the argument ("Error in function call"), with Go's
/// streaming decoder's words for a syntax error.
fn parse_json(text: &str) -> Res<serde_json::Value> {
    if let Some(msg) = GoJson::syntax_error(text) {
        return call_err(msg);
    }
    serde_json::from_str(text).or_else(|e| {
        let msg = e.to_string();
        let msg = msg.split(" at line").next().unwrap_or(&msg).to_string();
        call_err(msg)
    })
}

/// A JSON syntax check that words its first error as Go's `json.Decoder`
/// does token by token (what cty's `jsondecode` reads with): `EOF` when
/// the text ends between tokens, `unexpected EOF` inside one, `invalid
/// character 'c' CONTEXT` otherwise, `extraneous data after JSON object`
/// after the value. Numbers and escapes are left to the full parser.
struct GoJson<'t> {
    b: &'t [u8],
    i: usize,
}

impl GoJson<'_> {
    fn syntax_error(text: &str) -> Option<String> {
        let mut p = GoJson {
            b: text.as_bytes(),
            i: 0,
        };
        if let Err(e) = p.value() {
            return Some(e);
        }
        p.ws();
        (p.i < p.b.len()).then(|| "extraneous data after JSON object".to_string())
    }

    fn ws(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    /// Go's rendering of the character at the cursor in a syntax error.
    fn invalid(&self, context: &str) -> String {
        let c = match std::str::from_utf8(&self.b[self.i..]) {
            Ok(rest) => rest.chars().next().unwrap_or_default(),
            Err(e) => std::str::from_utf8(&self.b[self.i..self.i + e.valid_up_to()])
                .ok()
                .and_then(|r| r.chars().next())
                .unwrap_or(char::REPLACEMENT_CHARACTER),
        };
        let q = match c {
            '\'' => "\\'".to_string(),
            '"' => "\"".to_string(),
            c if c.is_control() => c.escape_default().to_string(),
            c => c.to_string(),
        };
        format!("invalid character '{q}' {context}")
    }

    /// The next token's first byte, whitespace skipped; `EOF` at the end.
    fn next(&mut self) -> Result<u8, String> {
        self.ws();
        self.b.get(self.i).copied().ok_or_else(|| "EOF".to_string())
    }

    fn value(&mut self) -> Result<(), String> {
        match self.next()? {
            b'{' => {
                self.i += 1;
                if self.next()? == b'}' {
                    self.i += 1;
                    return Ok(());
                }
                loop {
                    if self.next()? != b'"' {
                        return Err(self.invalid("looking for beginning of object key string"));
                    }
                    self.string()?;
                    if self.next()? != b':' {
                        return Err(self.invalid("after object key"));
                    }
                    self.i += 1;
                    self.value()?;
                    match self.next()? {
                        b',' => self.i += 1,
                        b'}' => {
                            self.i += 1;
                            return Ok(());
                        }
                        _ => return Err(self.invalid("after object key:value pair")),
                    }
                }
            }
            b'[' => {
                self.i += 1;
                if self.next()? == b']' {
                    self.i += 1;
                    return Ok(());
                }
                loop {
                    self.value()?;
                    match self.next()? {
                        b',' => self.i += 1,
                        b']' => {
                            self.i += 1;
                            return Ok(());
                        }
                        _ => return Err(self.invalid("after array element")),
                    }
                }
            }
            b'"' => self.string(),
            b'-' | b'0'..=b'9' => {
                while self.i < self.b.len()
                    && matches!(
                        self.b[self.i],
                        b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'
                    )
                {
                    self.i += 1;
                }
                Ok(())
            }
            c @ (b't' | b'f' | b'n') => {
                let word: &[u8] = match c {
                    b't' => b"true",
                    b'f' => b"false",
                    _ => b"null",
                };
                for (k, want) in word.iter().enumerate() {
                    match self.b.get(self.i) {
                        None => return Err("unexpected EOF".into()),
                        Some(got) if got == want => self.i += 1,
                        Some(_) => {
                            let lit = std::str::from_utf8(word).unwrap_or_default();
                            return Err(self.invalid(&format!(
                                "in literal {lit} (expecting '{}')",
                                word[k] as char
                            )));
                        }
                    }
                }
                Ok(())
            }
            _ => Err(self.invalid("looking for beginning of value")),
        }
    }

    /// A string at the cursor (its opening quote); escapes are skipped,
    /// not checked.
    fn string(&mut self) -> Result<(), String> {
        self.i += 1;
        while let Some(&c) = self.b.get(self.i) {
            match c {
                b'\\' => self.i += 2,
                b'"' => {
                    self.i += 1;
                    return Ok(());
                }
                c if c < 0x20 => return Err(self.invalid("in string literal")),
                _ => self.i += 1,
            }
        }
        Err("unexpected EOF".into())
    }
}

fn json_type(j: &serde_json::Value) -> Type {
    use serde_json::Value as J;
    match j {
        J::Null => Type::Dynamic,
        J::Bool(_) => Type::Bool,
        J::Number(_) => Type::Number,
        J::String(_) => Type::String,
        J::Array(es) => Type::tuple(es.iter().map(json_type).collect()),
        J::Object(m) => Type::object(m.iter().map(|(k, v)| (k.clone(), json_type(v)))),
    }
}

/// A decoded JSON document as a value: objects become objects, arrays
/// tuples, numbers exact.
pub(crate) fn json_value(j: &serde_json::Value) -> Value {
    use serde_json::Value as J;
    match j {
        J::Null => Value::null(Type::Dynamic),
        J::Bool(b) => Value::bool(*b),
        J::Number(n) => {
            Value::number(Number::parse(&n.to_string()).unwrap_or_else(|_| Number::zero()))
        }
        J::String(t) => Value::string(t.as_str()),
        J::Array(es) => Value::tuple(es.iter().map(json_value).collect()),
        J::Object(m) => Value::object(
            m.iter()
                .map(|(k, v)| (k.clone(), json_value(v)))
                .collect::<BTreeMap<_, _>>(),
        ),
    }
}

fn jsondecode_ret(a: &[Value]) -> Res<Type> {
    if !a[0].is_known() {
        return Ok(Type::Dynamic);
    }
    Ok(json_type(&parse_json(s(&a[0]))?))
}

fn jsondecode(a: &[Value], _: &Type, _: &FuncCtx) -> Res<Value> {
    Ok(json_value(&parse_json(s(&a[0]))?))
}

fn base64decode(a: &[Value], _: &Type, _: &FuncCtx) -> Res<Value> {
    let text = s(&a[0]);
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .or_else(|_| {
            arg_err(
                0,
                format!("failed to decode base64 data {}", go_json_string(text)),
            )
        })?;
    match String::from_utf8(bytes) {
        Ok(t) => Ok(Value::string(t)),
        Err(_) => arg_err(
            0,
            "the result of decoding the provided string is not valid UTF-8",
        ),
    }
}

/// Go's `url.QueryEscape`.
pub(crate) fn query_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// Parses CSV as Go's encoding/csv does by default: quoted fields with
/// doubled quotes, CRLF or LF line ends, blank lines skipped, every record
/// as wide as the first.
pub(crate) fn parse_csv(text: &str) -> Result<Vec<Vec<String>>, String> {
    let mut records: Vec<Vec<String>> = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    let mut line = 1;
    while i < chars.len() {
        if chars[i] == '\n' || (chars[i] == '\r' && chars.get(i + 1) == Some(&'\n')) {
            i += if chars[i] == '\r' { 2 } else { 1 };
            line += 1;
            continue;
        }
        let start_line = line;
        let mut rec = Vec::new();
        loop {
            let mut field = String::new();
            if chars.get(i) == Some(&'"') {
                i += 1;
                loop {
                    match chars.get(i) {
                        None => return Err(format!("parse error on line {start_line}, column {}: extraneous or missing \" in quoted-field", i + 1)),
                        Some('"') if chars.get(i + 1) == Some(&'"') => {
                            field.push('"');
                            i += 2;
                        }
                        Some('"') => {
                            i += 1;
                            break;
                        }
                        Some(&c) => {
                            if c == '\n' {
                                line += 1;
                            }
                            field.push(c);
                            i += 1;
                        }
                    }
                }
                if !matches!(chars.get(i), None | Some(',') | Some('\n') | Some('\r')) {
                    return Err(format!("parse error on line {line}, column {}: extraneous or missing \" in quoted-field", i + 1));
                }
            } else {
                while let Some(&c) = chars.get(i) {
                    if c == ','
                        || c == '\n'
                        || (c == '\r' && matches!(chars.get(i + 1), None | Some('\n')))
                    {
                        break;
                    }
                    if c == '"' {
                        return Err(format!(
                            "parse error on line {line}, column {}: bare \" in non-quoted-field",
                            i + 1
                        ));
                    }
                    field.push(c);
                    i += 1;
                }
            }
            rec.push(field);
            match chars.get(i) {
                Some(',') => i += 1,
                Some('\r') => {
                    i += if chars.get(i + 1) == Some(&'\n') {
                        2
                    } else {
                        1
                    };
                    line += 1;
                    break;
                }
                Some('\n') => {
                    i += 1;
                    line += 1;
                    break;
                }
                _ => break,
            }
        }
        if let Some(first) = records.first() {
            if first.len() != rec.len() {
                return Err(format!(
                    "record on line {start_line}: wrong number of fields"
                ));
            }
        }
        records.push(rec);
    }
    Ok(records)
}

fn csv_ret(a: &[Value]) -> Res<Type> {
    if !a[0].is_known() {
        return Ok(Type::Dynamic);
    }
    let recs = parse_csv(s(&a[0])).or_else(call_err)?;
    let Some(head) = recs.first() else {
        return call_err("missing header line");
    };
    Ok(Type::list(Type::object(
        head.iter().map(|h| (h.clone(), Type::String)),
    )))
}

fn csvdecode(a: &[Value], ret: &Type, _: &FuncCtx) -> Res<Value> {
    let recs = parse_csv(s(&a[0])).or_else(call_err)?;
    let head = &recs[0];
    let rows: Vec<Value> = recs[1..]
        .iter()
        .map(|r| {
            Value::object(
                head.iter()
                    .zip(r.iter())
                    .map(|(h, f)| (h.clone(), Value::string(f.as_str())))
                    .collect(),
            )
        })
        .collect();
    Ok(Value::list(
        ret.element_type().cloned().unwrap_or(Type::Dynamic),
        rows,
    ))
}

#[cfg(test)]
#[path = "encoding_tests.rs"]
mod tests;
