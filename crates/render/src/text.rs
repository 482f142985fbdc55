//! Values as text, in the three shapes Terraform prints them: the plan's
//! ([`value`], with `(known after apply)` and `(sensitive value)`),
//! `show`'s ([`show_value`]) and HCL syntax for `output` and apply's
//! "Outputs:" ([`hcl_value`]); plus the [`Style`] all human output is
//! painted with and [`key_text`] for attribute keys. Sensitive values are
//! never printed.

use std::fmt::Write;
use terrane_value::{Kind, Type, Value};

#[derive(Clone, Copy)]
pub struct Style {
    pub color: bool,
}

impl Style {
    fn paint(&self, code: &str, s: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
    pub fn bold(&self, s: &str) -> String {
        self.paint("1", s)
    }
    pub(crate) fn green(&self, s: &str) -> String {
        self.paint("32", s)
    }
    pub(crate) fn red(&self, s: &str) -> String {
        self.paint("31", s)
    }
    pub(crate) fn yellow(&self, s: &str) -> String {
        self.paint("33", s)
    }
    /// Only the tests paint with it: the one cyan text, ` <=`, is fixed.
    #[cfg(test)]
    pub(crate) fn cyan(&self, s: &str) -> String {
        self.paint("36", s)
    }
}

/// Whether a key prints bare (an identifier); any other is quoted, as
/// Terraform's plan renderer does for object attributes.
fn is_identifier(k: &str) -> bool {
    let mut cs = k.chars();
    cs.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && cs.all(|c| c.is_alphanumeric() || c == '_' || c == '-')
}

/// A key as the plan shows it: bare when an identifier, else quoted.
pub(crate) fn key_text(k: &str) -> std::borrow::Cow<'_, str> {
    if is_identifier(k) {
        k.into()
    } else {
        terrane_value::render::quote(k).into()
    }
}

/// A value as the plan shows it.
pub fn value(v: &Value, indent: usize, force_sensitive: bool) -> String {
    if force_sensitive || v.is_sensitive() {
        return "(sensitive value)".into();
    }
    match v.kind() {
        Kind::Null => "null".into(),
        Kind::Unknown(_) => "(known after apply)".into(),
        Kind::String(s) if s.contains('\n') => {
            let pad = " ".repeat(indent + 4);
            let mut out = String::from("<<-EOT\n");
            for line in s.lines() {
                let _ = writeln!(out, "{pad}{line}");
            }
            out.push_str(&format!("{}EOT", " ".repeat(indent + 2)));
            out
        }
        Kind::String(s) => terrane_value::render::quote(s),
        Kind::Number(n) => n.to_string(),
        Kind::Bool(b) => b.to_string(),
        Kind::Seq(es) | Kind::Set(es) => {
            if es.is_empty() {
                return "[]".into();
            }
            let pad = " ".repeat(indent + 4);
            let mut out = String::from("[\n");
            for e in es.iter() {
                let _ = writeln!(out, "{pad}{},", value(e, indent + 4, false));
            }
            out.push_str(&format!("{}]", " ".repeat(indent + 2)));
            out
        }
        Kind::Map(m) => {
            if m.is_empty() {
                return "{}".into();
            }
            let pad = " ".repeat(indent + 4);
            let width = m.keys().map(|k| key_text(k).len()).max().unwrap_or(0);
            let mut out = String::from("{\n");
            for (k, e) in m.iter() {
                let _ = writeln!(
                    out,
                    "{pad}{:<width$} = {}",
                    key_text(k),
                    value(e, indent + 4, false)
                );
            }
            out.push_str(&format!("{}}}", " ".repeat(indent + 2)));
            out
        }
    }
}

/// What [`show_value`] and [`hcl_value`] share before they look at the
/// value: a sensitive one is hidden (`Err` holds its text), any other gets
/// the padding of its nested lines (`step` deeper than `indent`) and of
/// its closing line (at `indent`).
fn nesting(v: &Value, indent: usize, step: usize) -> Result<(String, String), String> {
    if v.is_sensitive() {
        return Err("(sensitive value)".into());
    }
    Ok((" ".repeat(indent + step), " ".repeat(indent)))
}

/// A value as `show` prints stored outputs: four spaces per level, keys
/// aligned, object attributes bare, map keys quoted, no type wrappers.
pub fn show_value(v: &Value, indent: usize) -> String {
    let (pad, close) = match nesting(v, indent, 4) {
        Ok(layout) => layout,
        Err(hidden) => return hidden,
    };
    match v.kind() {
        // A multi-line string as a heredoc closed at the attribute's own
        // indentation.
        Kind::String(s) if s.contains('\n') => {
            let mut out = String::from("<<-EOT\n");
            for line in s.lines() {
                let _ = writeln!(out, "{pad}{line}");
            }
            format!("{out}{close}EOT")
        }
        Kind::Seq(es) | Kind::Set(es) if !es.is_empty() => {
            let mut out = String::from("[\n");
            for e in es.iter() {
                let _ = writeln!(out, "{pad}{},", show_value(e, indent + 4));
            }
            format!("{out}{close}]")
        }
        Kind::Map(m) if !m.is_empty() => {
            let object = v.ty().object_type().is_some();
            let key = |k: &str| -> String {
                if object {
                    key_text(k).into_owned()
                } else {
                    terrane_value::render::quote(k)
                }
            };
            let width = m.keys().map(|k| key(k).len()).max().unwrap_or(0);
            let mut out = String::from("{\n");
            for (k, e) in m.iter() {
                let _ = writeln!(
                    out,
                    "{pad}{:<width$} = {}",
                    key(k),
                    show_value(e, indent + 4)
                );
            }
            format!("{out}{close}}}")
        }
        _ => value(v, indent, false),
    }
}

/// A type as Terraform's console prints `type(...)`'s result: primitive
/// names bare, a collection of a primitive on one line (`list(number)`),
/// anything else over several lines, four spaces a level, every element
/// ending in a comma, object attributes as `name: type`.
pub fn type_text(ty: &Type, indent: usize) -> String {
    let pad = " ".repeat(indent + 4);
    let close = " ".repeat(indent);
    let simple = |t: &Type| matches!(t, Type::String | Type::Number | Type::Bool | Type::Dynamic);
    match ty {
        Type::String => "string".into(),
        Type::Number => "number".into(),
        Type::Bool => "bool".into(),
        Type::Dynamic => "dynamic".into(),
        Type::List(e) | Type::Set(e) | Type::Map(e) => {
            let kind = match ty {
                Type::List(_) => "list",
                Type::Set(_) => "set",
                _ => "map",
            };
            if simple(e) {
                format!("{kind}({})", type_text(e, indent))
            } else {
                format!("{kind}(\n{pad}{},\n{close})", type_text(e, indent + 4))
            }
        }
        Type::Tuple(es) if es.is_empty() => "tuple([])".into(),
        Type::Object(o) if o.attrs().is_empty() => "object({})".into(),
        Type::Tuple(es) => {
            let mut out = String::from("tuple([\n");
            for e in es.iter() {
                let _ = writeln!(out, "{pad}{},", type_text(e, indent + 4));
            }
            format!("{out}{close}])")
        }
        Type::Object(o) => {
            let mut out = String::from("object({\n");
            for (k, t) in o.attrs() {
                let _ = writeln!(out, "{pad}{k}: {},", type_text(t, indent + 4));
            }
            format!("{out}{close}}})")
        }
    }
}

/// A null as Terraform's console and output print it: with its type
/// (`tostring(null)`, `tolist(null) /* of string */`, `null /* object */`).
fn typed_null(ty: &Type) -> String {
    match ty {
        Type::Dynamic => "null".into(),
        Type::String => "tostring(null)".into(),
        Type::Number => "tonumber(null)".into(),
        Type::Bool => "tobool(null)".into(),
        Type::List(e) => format!("tolist(null) /* of {} */", e.friendly_name()),
        Type::Set(e) => format!("toset(null) /* of {} */", e.friendly_name()),
        Type::Map(e) => format!("tomap(null) /* of {} */", e.friendly_name()),
        other => format!("null /* {} */", other.friendly_name()),
    }
}

/// A value in HCL syntax, as Terraform's `output` command and apply's
/// "Outputs:" print it: typed collections wrapped in `tolist(...)`,
/// `toset(...)` or `tomap(...)` (tuples and objects bare), keys always
/// quoted and not aligned, two spaces per level, list elements ending in
/// a comma, and a string with line breaks as a heredoc (`<<-` when
/// indented; the delimiter grows `_`s until no line equals it).
pub fn hcl_value(v: &Value, indent: usize) -> String {
    let (pad, close) = match nesting(v, indent, 2) {
        Ok(layout) => layout,
        Err(hidden) => return hidden,
    };
    match v.kind() {
        Kind::Null => typed_null(v.ty()),
        Kind::Unknown(_) => "(known after apply)".into(),
        Kind::String(s) if s.contains('\n') => {
            let lines: Vec<&str> = s.split('\n').collect();
            let mut delim = String::from("EOT");
            while lines.iter().any(|l| l.trim() == delim) {
                delim.push('_');
            }
            let mut out = String::from(if indent > 0 { "<<-" } else { "<<" });
            out.push_str(&delim);
            for l in lines {
                let _ = write!(out, "\n{close}{l}");
            }
            let _ = write!(out, "\n{close}{delim}");
            out
        }
        Kind::String(s) => terrane_value::render::quote(s),
        Kind::Number(n) => n.to_string(),
        Kind::Bool(b) => b.to_string(),
        Kind::Seq(es) | Kind::Set(es) => {
            let (open, end) = match v.ty() {
                Type::List(_) => ("tolist([", "])"),
                Type::Set(_) => ("toset([", "])"),
                _ => ("[", "]"),
            };
            if es.is_empty() {
                return format!("{open}{end}");
            }
            let mut out = format!("{open}\n");
            for e in es.iter() {
                let _ = writeln!(out, "{pad}{},", hcl_value(e, indent + 2));
            }
            format!("{out}{close}{end}")
        }
        Kind::Map(m) => {
            let (open, end) = if matches!(v.ty(), Type::Map(_)) {
                ("tomap({", "})")
            } else {
                ("{", "}")
            };
            if m.is_empty() {
                return format!("{open}{end}");
            }
            let mut out = format!("{open}\n");
            for (k, e) in m.iter() {
                let _ = writeln!(
                    out,
                    "{pad}{} = {}",
                    terrane_value::render::quote(k),
                    hcl_value(e, indent + 2)
                );
            }
            format!("{out}{close}{end}")
        }
    }
}
