//! Rendering values for people: diagnostics, plan output, test failures.
//!
//! Strings are quoted with escapes, numbers are exact decimals, unknowns
//! read `(known after apply)` and anything sensitive reads
//! `(sensitive value)`, whatever it holds, so a message built from a
//! rendered value never leaks a secret.

use crate::{Kind, Value};
use std::fmt;

/// Quotes a string with HCL/JSON-style escapes.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn write_value(v: &Value, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    if v.is_sensitive() {
        return f.write_str("(sensitive value)");
    }
    match v.kind() {
        Kind::Null => f.write_str("null"),
        Kind::Unknown(_) => f.write_str("(known after apply)"),
        Kind::String(s) => f.write_str(&quote(s)),
        Kind::Number(n) => write!(f, "{n}"),
        Kind::Bool(b) => write!(f, "{b}"),
        Kind::Seq(es) | Kind::Set(es) => {
            f.write_str("[")?;
            for (i, e) in es.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write_value(e, f)?;
            }
            f.write_str("]")
        }
        Kind::Map(m) => {
            let object = v.ty().object_type().is_some();
            f.write_str("{")?;
            for (i, (k, e)) in m.iter().enumerate() {
                f.write_str(if i > 0 { ", " } else { " " })?;
                if object {
                    f.write_str(k)?;
                } else {
                    f.write_str(&quote(k))?;
                }
                f.write_str(" = ")?;
                write_value(e, f)?;
            }
            f.write_str(if m.is_empty() { "}" } else { " }" })
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_value(self, f)
    }
}

/// Debug shows the type and, unlike Display, refinements; secrets stay hidden.
impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.kind(), self.refinements()) {
            (Kind::Unknown(_), Some(r)) if !self.is_sensitive() => {
                write!(f, "unknown({}, {r})", self.ty())
            }
            (Kind::Unknown(_), None) if !self.is_sensitive() => write!(f, "unknown({})", self.ty()),
            (Kind::Null, _) if !self.is_sensitive() => write!(f, "null({})", self.ty()),
            _ => write_value(self, f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Type;

    #[track_caller]
    fn check(v: Value, want: &str) {
        assert_eq!(v.to_string(), want);
    }

    #[test]
    fn renders() {
        check(Value::string("a\"b\n"), r#""a\"b\n""#);
        check(Value::number(crate::Number::parse("1.25").unwrap()), "1.25");
        check(Value::bool(true), "true");
        check(Value::null(Type::String), "null");
        check(Value::unknown(Type::String), "(known after apply)");
        check(
            Value::string("hunter2").mark_sensitive(),
            "(sensitive value)",
        );
        check(
            Value::list(
                Type::String,
                vec![Value::string("a"), Value::string("s").mark_sensitive()],
            ),
            r#"["a", (sensitive value)]"#,
        );
        check(
            Value::object_from([("a", Value::bool(false))]),
            "{ a = false }",
        );
        check(
            Value::map(Type::Bool, [("k k".to_string(), Value::bool(true))].into()),
            r#"{ "k k" = true }"#,
        );
        check(Value::object(Default::default()), "{}");
    }
}
