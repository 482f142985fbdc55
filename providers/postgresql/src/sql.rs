//! Building SQL text safely. PostgreSQL's DDL takes no bind parameters, so
//! every name goes through [`ident`] (always double-quoted, inner quotes
//! doubled) and every string through [`literal`] (single-quoted, inner
//! quotes doubled, the `E''` form when a backslash is present). Keywords
//! (privilege names, `LOGIN`, ...) come only from fixed lists in the code,
//! never from the user.
//!
//! A [`Stmt`] carries the text sent to the server and a second text shown
//! in logs and errors, in which secrets (passwords) read `'***'`.

/// An identifier, always quoted, so case and special characters survive.
pub fn ident(name: &str) -> String {
    let mut s = String::with_capacity(name.len() + 2);
    s.push('"');
    for c in name.chars().filter(|c| *c != '\0') {
        if c == '"' {
            s.push('"');
        }
        s.push(c);
    }
    s.push('"');
    s
}

/// A schema-qualified name: `"schema"."name"`.
pub fn qualified(schema: &str, name: &str) -> String {
    format!("{}.{}", ident(schema), ident(name))
}

/// A string literal that means `text` whatever `standard_conforming_strings`
/// says.
pub fn literal(text: &str) -> String {
    let backslash = text.contains('\\');
    let mut s = String::with_capacity(text.len() + 3);
    if backslash {
        s.push('E');
    }
    s.push('\'');
    for c in text.chars().filter(|c| *c != '\0') {
        match c {
            '\'' => s.push_str("''"),
            '\\' => s.push_str("\\\\"),
            _ => s.push(c),
        }
    }
    s.push('\'');
    s
}

/// Whether `name` can be a PostgreSQL identifier without being silently
/// changed by the server: not empty, no NUL, at most 63 bytes (longer
/// names are truncated, which would read back as drift forever).
pub fn identifier_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("must not be empty")
    } else if name.contains('\0') {
        Some("must not contain a NUL character")
    } else if name.len() > 63 {
        Some("must be at most 63 bytes long (PostgreSQL truncates longer names)")
    } else {
        None
    }
}

/// One statement: the text for the server and the text for people.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stmt {
    pub sql: String,
    pub shown: String,
}

impl Stmt {
    pub fn new() -> Stmt {
        Stmt::default()
    }
    /// Fixed SQL text from the code (keywords, punctuation).
    pub fn kw(mut self, text: &str) -> Stmt {
        self.sql.push_str(text);
        self.shown.push_str(text);
        self
    }
    /// A quoted identifier.
    pub fn ident(self, name: &str) -> Stmt {
        let q = ident(name);
        self.kw(&q)
    }
    /// Comma-separated quoted identifiers.
    pub fn idents<'a>(mut self, names: impl IntoIterator<Item = &'a str>) -> Stmt {
        for (i, n) in names.into_iter().enumerate() {
            if i > 0 {
                self = self.kw(", ");
            }
            self = self.ident(n);
        }
        self
    }
    /// A quoted string literal.
    pub fn lit(self, text: &str) -> Stmt {
        let q = literal(text);
        self.kw(&q)
    }
    /// A secret literal: sent to the server, shown as `'***'`.
    pub fn secret(mut self, text: &str) -> Stmt {
        self.sql.push_str(&literal(text));
        self.shown.push_str("'***'");
        self
    }
    /// A whole number.
    pub fn int(self, n: i64) -> Stmt {
        self.kw(&n.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(case: &str, got: String, want: &str) {
        assert_eq!(got, want, "case {case}");
    }

    #[test]
    fn quoting() {
        check("plain_ident", ident("app"), r#""app""#);
        check("mixed_case_kept", ident("AppOwner"), r#""AppOwner""#);
        check("quote_doubled", ident(r#"a"b"#), r#""a""b""#);
        check(
            "injection_stays_a_name",
            ident(r#"x"; DROP ROLE postgres; --"#),
            r#""x""; DROP ROLE postgres; --""#,
        );
        check("nul_dropped", ident("a\0b"), r#""ab""#);
        check("qualified", qualified("s p", "t"), r#""s p"."t""#);
        check("plain_literal", literal("utf8"), "'utf8'");
        check("literal_quote_doubled", literal("it's"), "'it''s'");
        check(
            "literal_injection",
            literal("x'; DROP TABLE t; --"),
            "'x''; DROP TABLE t; --'",
        );
        check(
            "backslash_uses_escape_form",
            literal(r"a\b'c"),
            r"E'a\\b''c'",
        );
        check("empty_literal", literal(""), "''");
    }

    #[test]
    fn identifier_problems() {
        assert_eq!(identifier_problem("ok"), None, "case ok");
        assert!(identifier_problem("").is_some(), "case empty");
        assert!(identifier_problem("a\0").is_some(), "case nul");
        assert!(
            identifier_problem(&"x".repeat(64)).is_some(),
            "case too_long"
        );
        assert_eq!(identifier_problem(&"x".repeat(63)), None, "case longest");
    }

    #[test]
    fn secrets_are_hidden_in_the_shown_text() {
        let s = Stmt::new()
            .kw("ALTER ROLE ")
            .ident("bob")
            .kw(" PASSWORD ")
            .secret("hunter2'x");
        check(
            "sent",
            s.sql.clone(),
            r#"ALTER ROLE "bob" PASSWORD 'hunter2''x'"#,
        );
        check(
            "shown",
            s.shown.clone(),
            r#"ALTER ROLE "bob" PASSWORD '***'"#,
        );
        let l = Stmt::new()
            .kw("GRANT ")
            .idents(["a", "b"])
            .kw(" TO ")
            .ident("c")
            .kw(" -- ")
            .int(-1)
            .lit("x");
        check("list", l.sql, r#"GRANT "a", "b" TO "c" -- -1'x'"#);
    }
}
