//! Terraform's JSON configuration syntax (`*.tf.json`): a JSON parser that
//! keeps byte spans, and the conversion of its objects into bodies.
//!
//! Which property names are blocks (and how many labels they take) comes
//! from a small fixed schema of the language's own block types; labels
//! are nested object keys; a block type's value may be an object or an
//! array of objects (several blocks). `"//"` properties of a body are
//! comments. Attribute values become expressions by parsing the JSON
//! text of the value as a native expression in place: JSON arrays,
//! objects, numbers, `true`/`false`/`null` are valid native expressions
//! with the same meaning, and JSON strings are templates in both. Where
//! Terraform reads a string as an expression rather than a template
//! (`type`, `depends_on`, `provider`, `ignore_changes`, addresses in
//! `moved`/`import`/`removed`, ...), the quotes are blanked out first.
//! Offsets are kept by a shifted [`LineIndex`], so every range, even of a
//! sub-expression the evaluator reports, points into the `.json` file.

use crate::diag::{Diagnostic, LineIndex};
use crate::source::{GAttr, GBlock, GBody};
use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

pub(crate) enum JKind {
    Null,
    Bool,
    Number,
    String,
    Array(Vec<JValue>),
    Object(Vec<(JKey, JValue)>),
}

pub(crate) struct JValue {
    pub kind: JKind,
    pub span: Range<usize>,
}

pub(crate) struct JKey {
    pub name: String,
    pub span: Range<usize>,
}

const MAX_DEPTH: usize = 128;

struct Parser<'a> {
    text: &'a str,
    b: &'a [u8],
    pos: usize,
    depth: usize,
}

type PResult<T> = Result<T, (String, String, usize)>;

fn err<T>(summary: &str, detail: impl Into<String>, at: usize) -> PResult<T> {
    Err((summary.to_string(), detail.into(), at))
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.pos < self.b.len() && matches!(self.b[self.pos], b' ' | b'\t' | b'\n' | b'\r') {
            self.pos += 1;
        }
    }

    fn value(&mut self) -> PResult<JValue> {
        self.ws();
        let start = self.pos;
        let Some(&c) = self.b.get(self.pos) else {
            return err("Missing JSON value", "A JSON value must start with a brace, a bracket, a number, a string, or a keyword.", self.pos);
        };
        let kind = match c {
            b'{' => self.nested(|p| p.object())?,
            b'[' => self.nested(|p| p.array())?,
            b'"' => {
                self.string()?;
                JKind::String
            }
            b'-' | b'0'..=b'9' => self.number()?,
            b'a'..=b'z' | b'A'..=b'Z' => {
                while self.pos < self.b.len() && self.b[self.pos].is_ascii_alphanumeric() {
                    self.pos += 1;
                }
                match &self.text[start..self.pos] {
                    "true" | "false" => JKind::Bool,
                    "null" => JKind::Null,
                    w => {
                        return err("Invalid JSON keyword", format!("{w:?} is not a valid JSON keyword. Valid keywords are \"true\", \"false\", and \"null\"."), start);
                    }
                }
            }
            _ => {
                let ch = self.text[self.pos..].chars().next().unwrap_or(' ');
                return err("Invalid JSON token", format!("The character {ch:?} is not valid here: a JSON value must start with a brace, a bracket, a number, a string, or a keyword."), start);
            }
        };
        Ok(JValue {
            kind,
            span: start..self.pos,
        })
    }

    fn nested(&mut self, f: impl FnOnce(&mut Self) -> PResult<JKind>) -> PResult<JKind> {
        if self.depth >= MAX_DEPTH {
            return err(
                "Nesting too deep",
                format!("JSON configuration may nest at most {MAX_DEPTH} arrays and objects."),
                self.pos,
            );
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }

    fn object(&mut self) -> PResult<JKind> {
        let open = self.pos;
        self.pos += 1;
        let mut props = Vec::new();
        self.ws();
        if self.b.get(self.pos) == Some(&b'}') {
            self.pos += 1;
            return Ok(JKind::Object(props));
        }
        loop {
            self.ws();
            let kstart = self.pos;
            if self.b.get(self.pos) != Some(&b'"') {
                if self.b.get(self.pos) == Some(&b'}') && !props.is_empty() {
                    return err("Trailing comma in object", "JSON does not permit a trailing comma after the final property in an object.", self.pos);
                }
                if self.pos >= self.b.len() {
                    return err(
                        "Unclosed object",
                        "No closing brace was found for this JSON object.",
                        open,
                    );
                }
                return err(
                    "Invalid object property name",
                    "A JSON object property name must be a string.",
                    kstart,
                );
            }
            let (name, _) = self.string()?;
            let key = JKey {
                name,
                span: kstart..self.pos,
            };
            self.ws();
            if self.b.get(self.pos) != Some(&b':') {
                return err(
                    "Missing property value colon",
                    "JSON requires a colon after each property name.",
                    self.pos,
                );
            }
            self.pos += 1;
            let v = self.value()?;
            props.push((key, v));
            self.ws();
            match self.b.get(self.pos) {
                Some(b',') => {
                    let comma = self.pos;
                    self.pos += 1;
                    self.ws();
                    if self.b.get(self.pos) == Some(&b'}') {
                        return err("Trailing comma in object", "JSON does not permit a trailing comma after the final property in an object.", comma);
                    }
                }
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(JKind::Object(props));
                }
                None => {
                    return err(
                        "Unclosed object",
                        "No closing brace was found for this JSON object.",
                        open,
                    )
                }
                _ => {
                    return err(
                        "Missing attribute seperator comma",
                        "A comma must appear between each property definition in an object.",
                        self.pos,
                    )
                }
            }
        }
    }

    fn array(&mut self) -> PResult<JKind> {
        let open = self.pos;
        self.pos += 1;
        let mut items = Vec::new();
        self.ws();
        if self.b.get(self.pos) == Some(&b']') {
            self.pos += 1;
            return Ok(JKind::Array(items));
        }
        loop {
            items.push(self.value()?);
            self.ws();
            match self.b.get(self.pos) {
                Some(b',') => {
                    let comma = self.pos;
                    self.pos += 1;
                    self.ws();
                    if self.b.get(self.pos) == Some(&b']') {
                        return err("Trailing comma in array", "JSON does not permit a trailing comma after the final value in an array.", comma);
                    }
                }
                Some(b']') => {
                    self.pos += 1;
                    return Ok(JKind::Array(items));
                }
                None => {
                    return err(
                        "Unclosed array",
                        "No closing bracket was found for this JSON array.",
                        open,
                    )
                }
                _ => {
                    return err(
                        "Missing array element separator comma",
                        "A comma must appear between each value in an array.",
                        self.pos,
                    )
                }
            }
        }
    }

    fn string(&mut self) -> PResult<(String, bool)> {
        let open = self.pos;
        self.pos += 1;
        let mut out = String::new();
        let mut escaped = false;
        loop {
            let Some(c) = self.text[self.pos..].chars().next() else {
                return err(
                    "Unterminated string",
                    "A JSON string must end with a quote on the same line.",
                    open,
                );
            };
            match c {
                '"' => {
                    self.pos += 1;
                    return Ok((out, escaped));
                }
                '\\' => {
                    escaped = true;
                    let at = self.pos;
                    self.pos += 1;
                    let e = self.b.get(self.pos).copied();
                    self.pos += 1;
                    match e {
                        Some(b'"') => out.push('"'),
                        Some(b'\\') => out.push('\\'),
                        Some(b'/') => out.push('/'),
                        Some(b'b') => out.push('\u{8}'),
                        Some(b'f') => out.push('\u{c}'),
                        Some(b'n') => out.push('\n'),
                        Some(b'r') => out.push('\r'),
                        Some(b't') => out.push('\t'),
                        Some(b'u') => {
                            let hex = self.text.get(self.pos..self.pos + 4).filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()));
                            let Some(hex) = hex else {
                                return err("Invalid escape sequence", "A \\u escape must be followed by four hexadecimal digits.", at);
                            };
                            self.pos += 4;
                            let cp = u32::from_str_radix(hex, 16).unwrap_or(0xfffd);
                            out.push(char::from_u32(cp).unwrap_or('\u{fffd}'));
                        }
                        _ => return err("Invalid escape sequence", "The only escapes JSON strings allow are \\\", \\\\, \\/, \\b, \\f, \\n, \\r, \\t and \\uXXXX.", at),
                    }
                }
                c if (c as u32) < 0x20 => return err(
                    "Invalid character in string",
                    "Control characters (including line breaks) must be escaped in JSON strings.",
                    self.pos,
                ),
                c => {
                    out.push(c);
                    self.pos += c.len_utf8();
                }
            }
        }
    }

    fn number(&mut self) -> PResult<JKind> {
        let start = self.pos;
        if self.b.get(self.pos) == Some(&b'-') {
            self.pos += 1;
        }
        let digits = |p: &mut Self| {
            let s = p.pos;
            while p.pos < p.b.len() && p.b[p.pos].is_ascii_digit() {
                p.pos += 1;
            }
            p.pos > s
        };
        if !digits(self) {
            return err(
                "Invalid number",
                "A number must have at least one digit.",
                start,
            );
        }
        if self.b.get(self.pos) == Some(&b'.') {
            self.pos += 1;
            if !digits(self) {
                return err(
                    "Invalid number",
                    "A decimal point must be followed by at least one digit.",
                    start,
                );
            }
        }
        if matches!(self.b.get(self.pos), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.b.get(self.pos), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if !digits(self) {
                return err(
                    "Invalid number",
                    "An exponent must have at least one digit.",
                    start,
                );
            }
        }
        Ok(JKind::Number)
    }
}

/// Parses a whole JSON document.
pub(crate) fn parse(text: &str, index: &LineIndex) -> Result<JValue, Diagnostic> {
    let mut p = Parser {
        text,
        b: text.as_bytes(),
        pos: 0,
        depth: 0,
    };
    let r = p.value().and_then(|v| {
        p.ws();
        if p.pos < p.b.len() {
            return err(
                "Extraneous data after value",
                "Only one JSON value may appear in a file: extra characters follow it.",
                p.pos,
            );
        }
        Ok(v)
    });
    r.map_err(|(summary, detail, at)| Diagnostic::error(summary, detail, Some(index.at_offset(at))))
}

/// Which names of a body of kind `ctx` are blocks: labels and child kind.
fn block_schema(ctx: &str, key: &str) -> Option<(usize, &'static str)> {
    Some(match (ctx, key) {
        ("root", "terraform") => (0, "terraform"),
        ("root", "provider") => (1, "provider"),
        ("root", "variable") => (1, "variable"),
        ("root", "locals") => (0, "locals"),
        ("root", "output") => (1, "output"),
        ("root", "resource" | "data") => (2, "resource"),
        ("root", "module") => (1, "module"),
        ("root", "moved") => (0, "moved"),
        ("root", "import") => (0, "import"),
        ("root", "removed") => (0, "removed"),
        ("root", "check") => (1, "check"),
        ("terraform", "required_providers" | "cloud") => (0, "attrs"),
        ("terraform", "backend" | "state" | "provider_meta") => (1, "attrs"),
        ("variable", "validation") => (0, "attrs"),
        ("output", "precondition") => (0, "attrs"),
        ("resource", "lifecycle") => (0, "lifecycle"),
        ("resource" | "removed", "provisioner") => (1, "provisioner"),
        ("resource" | "provisioner" | "removed", "connection") => (0, "attrs"),
        ("resource" | "content", "dynamic") => (1, "dynamic"),
        ("lifecycle", "precondition" | "postcondition") => (0, "attrs"),
        ("dynamic", "content") => (0, "content"),
        ("removed", "lifecycle") => (0, "attrs"),
        ("check", "data") => (2, "resource"),
        ("check", "assert") => (0, "attrs"),
        _ => return None,
    })
}

/// Names whose string values are expressions, not templates.
fn expression_mode(ctx: &str, key: &str) -> bool {
    matches!(
        (ctx, key),
        ("variable", "type")
            | ("resource", "provider" | "depends_on")
            | ("lifecycle", "ignore_changes" | "replace_triggered_by")
            | ("output" | "module", "depends_on")
            | ("module", "providers")
            | ("moved", "from" | "to")
            | ("import", "to" | "provider")
            | ("removed", "from")
            | ("dynamic", "iterator")
    )
}

pub(crate) struct Converter<'a> {
    pub text: &'a str,
    pub index: &'a Arc<LineIndex>,
    pub diags: &'a mut Vec<Diagnostic>,
}

impl Converter<'_> {
    fn error(&mut self, summary: &str, detail: String, span: Range<usize>) {
        self.diags.push(Diagnostic::error(
            summary,
            detail,
            self.index.range(Some(span)),
        ));
    }

    /// The root object of a file.
    pub fn root(&mut self, v: &JValue) -> GBody {
        match &v.kind {
            JKind::Object(_) => self.body(v, "root"),
            _ => {
                self.error(
                    "Incorrect JSON value type",
                    "The root of a JSON configuration file must be an object.".into(),
                    v.span.clone(),
                );
                GBody::default()
            }
        }
    }

    fn body(&mut self, v: &JValue, ctx: &'static str) -> GBody {
        let mut out = GBody::default();
        let JKind::Object(props) = &v.kind else {
            return out;
        };
        let mut seen: HashMap<&str, Range<usize>> = HashMap::new();
        for (k, val) in props {
            if k.name == "//" {
                continue;
            }
            if let Some((nlabels, child)) = block_schema(ctx, &k.name) {
                let mut labels = Vec::new();
                self.blocks(k, val, nlabels, child, &mut labels, &mut out.blocks);
                continue;
            }
            if ctx == "root" {
                self.error(
                    "Extraneous JSON object property",
                    format!("No argument or block type is named {:?}.", k.name),
                    k.span.clone(),
                );
                continue;
            }
            if let Some(first) = seen.get(k.name.as_str()) {
                let at = self
                    .index
                    .range(Some(first.clone()))
                    .map(|r| format!("{}:{},{}-{}", r.file, r.start.line, r.start.col, r.end.col))
                    .unwrap_or_default();
                self.error(
                    "Duplicate argument",
                    format!("The argument {:?} was already set at {at}.", k.name),
                    k.span.clone(),
                );
                continue;
            }
            seen.insert(&k.name, k.span.clone());
            if let Some(value) = self.expression(val, expression_mode(ctx, &k.name)) {
                let (value, index) = value;
                out.attrs.push(GAttr {
                    name: k.name.clone(),
                    span: Some(k.span.start..val.span.end),
                    name_span: Some(k.span.clone()),
                    value,
                    index,
                    file: self.index.clone(),
                });
            }
        }
        out
    }

    fn blocks(
        &mut self,
        key: &JKey,
        v: &JValue,
        nlabels: usize,
        child: &'static str,
        labels: &mut Vec<(String, Option<Range<usize>>)>,
        out: &mut Vec<GBlock>,
    ) {
        let elems: Vec<&JValue> = match &v.kind {
            JKind::Array(items) => items.iter().collect(),
            JKind::Object(_) => vec![v],
            _ => {
                let what = if labels.len() < nlabels {
                    "Either a JSON object or a JSON array is required, representing the contents of one or more"
                } else {
                    "Either a JSON object or a JSON array of objects is required, representing the contents of one or more"
                };
                return self.error(
                    "Incorrect JSON value type",
                    format!("{what} {:?} blocks.", key.name),
                    v.span.clone(),
                );
            }
        };
        for e in elems {
            let JKind::Object(props) = &e.kind else {
                self.error(
                    "Incorrect JSON value type",
                    format!(
                        "A JSON object is required, representing the contents of a {:?} block.",
                        key.name
                    ),
                    e.span.clone(),
                );
                continue;
            };
            if labels.len() == nlabels {
                let body = self.body(e, child);
                out.push(GBlock {
                    ty: key.name.clone(),
                    ty_span: Some(key.span.clone()),
                    labels: labels.clone(),
                    body,
                    span: Some(key.span.start..e.span.end),
                    body_span: Some(e.span.clone()),
                    raw: None,
                    index: self.index.clone(),
                });
                continue;
            }
            if props.is_empty() {
                self.error("Missing block label", format!("A {:?} block needs {nlabels} label(s): give them as nested object property names.", key.name), e.span.clone());
            }
            for (lk, lv) in props {
                labels.push((lk.name.clone(), Some(lk.span.clone())));
                self.blocks(key, lv, nlabels, child, labels, out);
                labels.pop();
            }
        }
    }

    /// The value's JSON text parsed as a native expression in place.
    fn expression(
        &mut self,
        v: &JValue,
        expr_mode: bool,
    ) -> Option<(terrane_hcl::expr::Expression, Arc<LineIndex>)> {
        let raw = &self.text[v.span.clone()];
        let mut piece = String::with_capacity(raw.len());
        let mut inserted: Vec<(usize, isize)> = Vec::new();
        if expr_mode {
            if let Err(at) = blank_quotes(v, raw, v.span.start, &mut piece, &mut inserted) {
                self.error(
                    "Invalid expression",
                    "This string's escape sequence is not valid JSON.".into(),
                    at..at + 1,
                );
                return None;
            }
        } else {
            // Escapes JSON has and native templates lack, spelled as \u.
            let mut extra = 0;
            let mut chars = raw.char_indices().peekable();
            while let Some((_, c)) = chars.next() {
                if c == '\\' {
                    match chars.peek().map(|(_, n)| *n) {
                        Some(n @ ('/' | 'b' | 'f')) => {
                            chars.next();
                            piece.push_str(match n {
                                '/' => "\\u002F",
                                'b' => "\\u0008",
                                _ => "\\u000C",
                            });
                            extra += 4;
                            inserted.push((piece.len(), extra));
                            continue;
                        }
                        Some(n) => {
                            chars.next();
                            piece.push('\\');
                            piece.push(n);
                            continue;
                        }
                        None => {}
                    }
                }
                piece.push(c);
            }
        }
        if expr_mode {
            // Padding after the last string is not part of an expression.
            piece.truncate(piece.trim_end().len());
        }
        let index = Arc::new(self.index.shifted(v.span.start, inserted));
        match terrane_hcl::parser::parse_expr(&piece) {
            Ok(e) => Some((e, index)),
            Err(e) => {
                let at = index.at_offset(e.offset());
                self.diags.push(Diagnostic::error(
                    "Invalid expression",
                    e.message().to_string(),
                    Some(at),
                ));
                None
            }
        }
    }
}

/// Copies `raw` (the text of `v`, at file offset `base`) with the quotes of
/// every string's quotes removed (padded to the same length), so
/// `"aws_instance.a"` reads as a reference. A string's escapes are decoded
/// first, as HCL's JSON syntax decodes the string before reading the
/// expression in it (`"aws.x[\"a\"]"` is `aws.x["a"]`); `inserted` gets
/// where the copy became shorter than the file, for positions.
fn blank_quotes(
    v: &JValue,
    raw: &str,
    base: usize,
    out: &mut String,
    inserted: &mut Vec<(usize, isize)>,
) -> Result<(), usize> {
    let mut strings = Vec::new();
    collect_strings(v, &mut strings);
    let mut last = 0;
    let mut extra: isize = 0;
    for span in strings {
        let (s, e) = (span.start - base, span.end - base);
        if &raw[s..e] == "\"*\"" {
            // Not an expression in any of these places: the legacy
            // `ignore_changes = ["*"]`, which the decoder reports.
            continue;
        }
        // The content moves onto the opening quote, so the expression's
        // range starts where the string does (where Terraform reports).
        out.push_str(&raw[last..s]);
        let content = &raw[s + 1..e - 1];
        if content.contains('\\') {
            decode_escapes(content, span.start + 1, out, inserted, &mut extra)?;
        } else {
            out.push_str(content);
        }
        out.push_str("  ");
        last = e;
    }
    out.push_str(&raw[last..]);
    Ok(())
}

/// Appends JSON string content `content` (at file offset `at`) decoded to
/// `out`, recording after each escape how much shorter the copy is than
/// the file (`extra`, cumulative and negative). `Err` at a bad escape.
fn decode_escapes(
    content: &str,
    at: usize,
    out: &mut String,
    inserted: &mut Vec<(usize, isize)>,
    extra: &mut isize,
) -> Result<(), usize> {
    let bytes = content.as_bytes();
    let mut i = 0;
    while i < content.len() {
        if bytes[i] != b'\\' {
            let c = content[i..].chars().next().unwrap_or_default();
            out.push(c);
            i += c.len_utf8();
            continue;
        }
        let bad = || at + i;
        let (c, used) = match bytes.get(i + 1) {
            Some(b'"') => ('"', 2),
            Some(b'\\') => ('\\', 2),
            Some(b'/') => ('/', 2),
            Some(b'b') => ('\u{8}', 2),
            Some(b'f') => ('\u{c}', 2),
            Some(b'n') => ('\n', 2),
            Some(b'r') => ('\r', 2),
            Some(b't') => ('\t', 2),
            Some(b'u') => {
                let unit = |from: usize| {
                    content
                        .get(from..from + 4)
                        .and_then(|h| u32::from_str_radix(h, 16).ok())
                };
                let hi = unit(i + 2).ok_or_else(bad)?;
                if (0xD800..0xDC00).contains(&hi) && content.get(i + 6..i + 8) == Some("\\u") {
                    let lo = unit(i + 8).ok_or_else(bad)?;
                    let cp = 0x10000 + ((hi - 0xD800) << 10) + (lo.wrapping_sub(0xDC00) & 0x3FF);
                    (char::from_u32(cp).ok_or_else(bad)?, 12)
                } else {
                    (char::from_u32(hi).ok_or_else(bad)?, 6)
                }
            }
            _ => return Err(bad()),
        };
        out.push(c);
        *extra -= used as isize - c.len_utf8() as isize;
        inserted.push((out.len(), *extra));
        i += used;
    }
    Ok(())
}

fn collect_strings(v: &JValue, out: &mut Vec<Range<usize>>) {
    match &v.kind {
        JKind::String => out.push(v.span.clone()),
        JKind::Array(items) => {
            for i in items {
                collect_strings(i, out);
            }
        }
        JKind::Object(props) => {
            for (k, val) in props {
                out.push(k.span.clone());
                collect_strings(val, out);
            }
        }
        _ => {}
    }
}
