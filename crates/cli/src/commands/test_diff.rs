//! What Terraform shows under a failed assertion whose condition is a
//! binary operation (`a == b`, `a > b`, `a && b`, ...): a box below the
//! source line with, when the two operands' types differ, "Warning: LHS
//! and RHS values are of different types", and, when the operands differ,
//! a "Diff:" of the left operand (`--- actual`) against the right one
//! (`+++ expected`), each written as indented JSON (sensitive parts as
//! "(sensitive value)"). The diff pairs the lines position by position:
//! equal lines are context, and each stretch of unequal positions is its
//! left lines removed, then its right lines added, as Terraform prints it.

use terrane_value::{Kind, Value};

/// The lines of the box (each without the "    " indent Terraform puts
/// before it), or None when the condition is not a binary operation.
/// Under `-verbose` (`values` given: the condition's references and their
/// values, see [`reference_values`]) the box also shows both operands
/// ("LHS:", "RHS:"), and the references follow it after a blank line (an
/// empty string in the list).
pub(crate) fn binary_box(
    operands: Option<(Value, Value)>,
    values: Option<Vec<(String, Value)>>,
) -> Option<Vec<String>> {
    let (lhs, rhs) = operands?;
    let mut out = vec!["├────────────────".to_string()];
    let indented = |title: &str, v: &Value, out: &mut Vec<String>| {
        out.push(format!("│ {title}"));
        out.extend(json_text(v).lines().map(|l| format!("│   {l}")));
    };
    if values.is_some() {
        indented("LHS:", &lhs, &mut out);
        indented("RHS:", &rhs, &mut out);
    }
    if lhs.ty() != rhs.ty() {
        out.push("│ Warning: LHS and RHS values are of different types".into());
    }
    let (a, b) = (json_text(&lhs), json_text(&rhs));
    if a != b {
        out.push("│ Diff:".into());
        out.push("│ --- actual".into());
        out.push("│ +++ expected".into());
        out.extend(line_diff(&a, &b).into_iter().map(|l| format!("│ {l}")));
    }
    if let Some(values) = values.filter(|v| !v.is_empty()) {
        out.push(String::new());
        for (text, v) in values {
            let json = json_text(&v);
            let mut lines = json.lines();
            out.push(format!("│ {text} is {}", lines.next().unwrap_or_default()));
            out.extend(lines.map(|l| format!("│   {l}")));
        }
    }
    Some(out)
}

/// The references a condition reads (`output.o`, `var.x`,
/// `terraform_data.a.input`, `run.r.out`), each as Terraform writes a
/// traversal: a root, `.name` steps and literal `[index]` steps, stopping
/// at the first step that is not one. Sorted by their text, once each.
/// `value` evaluates one; a reference it gives no value is left out.
pub(crate) fn reference_values(
    condition: &terrane_hcl::expr::Expression,
    value: impl Fn(&terrane_hcl::expr::Expression) -> Option<Value>,
) -> Vec<(String, Value)> {
    use terrane_hcl::expr::{Expression, Traversal, TraversalOperator};
    use terrane_hcl::visit::{visit_expr, Visit};
    struct Found(Vec<(String, Expression)>);
    impl Visit for Found {
        fn visit_expr(&mut self, e: &Expression) {
            let (root, ops) = match e {
                Expression::Variable(v) => (v, &[][..]),
                Expression::Traversal(t) => match &t.expr {
                    Expression::Variable(v) => (v, t.operators.as_slice()),
                    _ => return visit_expr(self, e),
                },
                _ => return visit_expr(self, e),
            };
            let mut text = root.as_str().to_string();
            let mut kept = Vec::new();
            for op in ops {
                let step = match op.value() {
                    TraversalOperator::GetAttr(name) => format!(".{}", name.as_str()),
                    TraversalOperator::Index(Expression::Number(n)) => format!("[{}]", n.value()),
                    TraversalOperator::Index(Expression::String(s)) => {
                        format!("[{:?}]", s.value().as_str())
                    }
                    TraversalOperator::LegacyIndex(i) => format!("[{}]", i.value()),
                    _ => break,
                };
                text.push_str(&step);
                kept.push(op.clone());
            }
            let expr = if kept.is_empty() {
                Expression::Variable(root.clone())
            } else {
                Expression::Traversal(Box::new(Traversal::new(
                    Expression::Variable(root.clone()),
                    kept,
                )))
            };
            self.0.push((text, expr));
            // References inside dynamic index steps count too.
            for op in ops {
                if let TraversalOperator::Index(i) = op.value() {
                    self.visit_expr(i);
                }
            }
        }
    }
    let mut found = Found(Vec::new());
    found.visit_expr(condition);
    found.0.sort_by(|a, b| a.0.cmp(&b.0));
    found.0.dedup_by(|a, b| a.0 == b.0);
    found
        .0
        .into_iter()
        .filter_map(|(text, e)| value(&e).map(|v| (text, v)))
        .collect()
}

/// Terraform's pairing of two texts' lines: "  " before a line both have
/// at the same position, and for each stretch of positions that differ
/// the left's lines with "- " then the right's with "+ ".
pub(crate) fn line_diff(a: &str, b: &str) -> Vec<String> {
    let (a, b): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let mut out = Vec::new();
    let (mut gone, mut added) = (Vec::new(), Vec::new());
    for i in 0..a.len().max(b.len()) {
        match (a.get(i), b.get(i)) {
            (Some(x), Some(y)) if x == y => {
                out.append(&mut gone);
                out.append(&mut added);
                out.push(format!("  {x}"));
            }
            (x, y) => {
                gone.extend(x.map(|l| format!("- {l}")));
                added.extend(y.map(|l| format!("+ {l}")));
            }
        }
    }
    out.extend(gone);
    out.extend(added);
    out
}

/// `v` as indented JSON the way Terraform writes it for the diff: two
/// spaces per level, `"key": value`, HTML characters escaped as `\u003c`,
/// sensitive values as the string "(sensitive value)", unknown ones as
/// "(known after apply)".
pub(crate) fn json_text(v: &Value) -> String {
    let mut out = String::new();
    write(v, 0, &mut out);
    out
}

fn write(v: &Value, depth: usize, out: &mut String) {
    if v.is_sensitive() {
        out.push_str(&quote("(sensitive value)"));
        return;
    }
    let pad = |n: usize| "  ".repeat(n);
    match v.kind() {
        Kind::Null => out.push_str("null"),
        Kind::Unknown(_) => out.push_str(&quote("(known after apply)")),
        Kind::String(s) => out.push_str(&quote(s)),
        Kind::Number(n) => out.push_str(&n.to_string()),
        Kind::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Kind::Seq(items) | Kind::Set(items) => {
            if items.is_empty() {
                out.push_str("[]");
                return;
            }
            out.push_str("[\n");
            for (i, item) in items.iter().enumerate() {
                out.push_str(&pad(depth + 1));
                write(item, depth + 1, out);
                out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
            }
            out.push_str(&pad(depth));
            out.push(']');
        }
        Kind::Map(entries) => {
            if entries.is_empty() {
                out.push_str("{}");
                return;
            }
            out.push_str("{\n");
            for (i, (k, item)) in entries.iter().enumerate() {
                out.push_str(&pad(depth + 1));
                out.push_str(&quote(k));
                out.push_str(": ");
                write(item, depth + 1, out);
                out.push_str(if i + 1 < entries.len() { ",\n" } else { "\n" });
            }
            out.push_str(&pad(depth));
            out.push('}');
        }
    }
}

/// A JSON string as Go's encoder writes it (HTML-safe: `<`, `>` and `&`
/// escaped, as are U+2028 and U+2029).
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Item 6: the pairing Terraform prints, case by case (the texts are
    /// the ones `terraform test` showed for these values).
    #[test]
    fn item6_line_diff_pairs_lines_as_terraform() {
        fn check(name: &str, a: &str, b: &str, want: &[&str]) {
            assert_eq!(line_diff(a, b), want, "case {name}");
        }
        check(
            "scalar",
            "\"hello\"",
            "\"world\"",
            &["- \"hello\"", "+ \"world\""],
        );
        check(
            "same_length",
            "{\n  \"x\": \"hello\",\n  \"y\": \"a\"\n}",
            "{\n  \"x\": \"b\",\n  \"y\": \"c\"\n}",
            &[
                "  {",
                "-   \"x\": \"hello\",",
                "-   \"y\": \"a\"",
                "+   \"x\": \"b\",",
                "+   \"y\": \"c\"",
                "  }",
            ],
        );
        check(
            "shorter_right",
            "[\n  \"hello\",\n  \"a\",\n  \"b\"\n]",
            "[\n  \"hello\",\n  \"b\"\n]",
            &[
                "  [",
                "    \"hello\",",
                "-   \"a\",",
                "-   \"b\"",
                "- ]",
                "+   \"b\"",
                "+ ]",
            ],
        );
        check(
            "equal_again_after_a_change",
            "[\n  1,\n  15,\n  16\n]",
            "[\n  1,\n  99,\n  16\n]",
            &["  [", "    1,", "-   15,", "+   99,", "    16", "  ]"],
        );
    }

    #[test]
    fn item6_json_text_as_go_writes_it() {
        let s = |t: &str| Value::string(t);
        for (name, v, want) in [
            ("html", s("<a&b>"), "\"\\u003ca\\u0026b\\u003e\""),
            ("newline", s("a\nb"), "\"a\\nb\""),
            (
                "sensitive",
                s("secret").mark_sensitive(),
                "\"(sensitive value)\"",
            ),
            ("null", Value::null(terrane_value::Type::String), "null"),
        ] {
            assert_eq!(json_text(&v), want, "case {name}");
        }
    }
}
