//! The parser against hcl-edit on every file hcl-edit accepts: the same
//! tree, node for node, with the same spans for every expression, name,
//! label, traversal step and template element. The files are the
//! repository's own configurations and templates, the named cases below,
//! and every file under `TERRANE_HCL_CORPUS` when it is set (a checkout
//! of real modules, for a wider run).

use std::fmt::Write;
use std::path::{Path, PathBuf};

/// One printer, compiled twice: against hcl-edit's tree and against
/// ours, whose API has the same shape.
macro_rules! printer {
    ($name:ident, $root:ident) => {
        mod $name {
            use super::Write;
            use $root::expr::{Expression, ObjectKey, TraversalOperator};
            use $root::structure::{BlockLabel, Body, Structure};
            use $root::template::{Directive, Element, Template};
            use $root::Span;

            fn at(s: Option<std::ops::Range<usize>>) -> String {
                s.map_or("?".into(), |r| format!("{}..{}", r.start, r.end))
            }

            pub fn body(b: &Body, out: &mut String) {
                for s in b.iter() {
                    match s {
                        Structure::Attribute(a) => {
                            write!(out, "(attr {} @{} ", a.key.as_str(), at(a.key.span())).unwrap();
                            expr(&a.value, out);
                            out.push_str(")\n");
                        }
                        Structure::Block(bl) => {
                            write!(out, "(block {} @{}", bl.ident.as_str(), at(bl.ident.span()))
                                .unwrap();
                            for l in &bl.labels {
                                let (k, s) = match l {
                                    BlockLabel::Ident(i) => ("i", i.span()),
                                    BlockLabel::String(x) => ("s", x.span()),
                                };
                                write!(out, " {k}{:?}@{}", l.as_str(), at(s)).unwrap();
                            }
                            out.push_str("\n");
                            body(&bl.body, out);
                            out.push_str(")\n");
                        }
                    }
                }
            }

            pub fn template(t: &Template, out: &mut String) {
                for e in t.iter() {
                    match e {
                        Element::Literal(l) => {
                            write!(out, "(lit {:?} @{})", l.value(), at(l.span())).unwrap()
                        }
                        Element::Interpolation(i) => {
                            write!(out, "(interp {:?} @{} ", i.strip, at(i.span())).unwrap();
                            expr(&i.expr, out);
                            out.push(')');
                        }
                        Element::Directive(d) => match &**d {
                            Directive::If(d) => {
                                write!(out, "(if @{} {:?} ", at(d.span()), d.if_expr.strip)
                                    .unwrap();
                                expr(&d.if_expr.cond_expr, out);
                                template(&d.if_expr.template, out);
                                if let Some(e) = &d.else_expr {
                                    write!(out, " else {:?} ", e.strip).unwrap();
                                    template(&e.template, out);
                                }
                                write!(out, " endif {:?})", d.endif_expr.strip).unwrap();
                            }
                            Directive::For(d) => {
                                let f = &d.for_expr;
                                write!(
                                    out,
                                    "(for @{} {:?} {:?} {} ",
                                    at(d.span()),
                                    f.strip,
                                    f.key_var.as_ref().map(|k| k.as_str().to_string()),
                                    f.value_var.as_str()
                                )
                                .unwrap();
                                expr(&f.collection_expr, out);
                                template(&f.template, out);
                                write!(out, " endfor {:?})", d.endfor_expr.strip).unwrap();
                            }
                        },
                    }
                }
            }

            pub fn expr(e: &Expression, out: &mut String) {
                write!(out, "@{}", at(e.span())).unwrap();
                match e {
                    Expression::Null(_) => out.push_str("null"),
                    Expression::Bool(b) => write!(out, "{}", b.value()).unwrap(),
                    Expression::Number(n) => write!(out, "(num {})", n.value()).unwrap(),
                    Expression::String(s) => write!(out, "{:?}", s.value()).unwrap(),
                    Expression::Array(a) => {
                        out.push_str("[");
                        for v in a.iter() {
                            expr(v, out);
                            out.push(',');
                        }
                        out.push(']');
                    }
                    Expression::Object(o) => {
                        out.push('{');
                        for (k, v) in o.iter() {
                            match k {
                                ObjectKey::Ident(i) => {
                                    write!(out, "{}@{}", i.as_str(), at(i.span())).unwrap()
                                }
                                ObjectKey::Expression(k) => expr(k, out),
                            }
                            out.push('=');
                            expr(v.expr(), out);
                            out.push(';');
                        }
                        out.push('}');
                    }
                    Expression::StringTemplate(t) => {
                        out.push_str("(tmpl ");
                        template(t, out);
                        out.push(')');
                    }
                    Expression::HeredocTemplate(h) => {
                        write!(out, "(heredoc {} ", h.delimiter.as_str()).unwrap();
                        template(&h.template, out);
                        out.push(')');
                    }
                    Expression::Parenthesis(p) => {
                        out.push('(');
                        expr(p.inner(), out);
                        out.push(')');
                    }
                    Expression::Variable(v) => write!(out, "${}", v.as_str()).unwrap(),
                    Expression::Conditional(c) => {
                        out.push_str("(? ");
                        expr(&c.cond_expr, out);
                        out.push(' ');
                        expr(&c.true_expr, out);
                        out.push(' ');
                        expr(&c.false_expr, out);
                        out.push(')');
                    }
                    Expression::FuncCall(f) => {
                        out.push_str("(call ");
                        for n in &f.name.namespace {
                            write!(out, "{}@{}::", n.as_str(), at(n.span())).unwrap();
                        }
                        write!(out, "{}@{}", f.name.name.as_str(), at(f.name.name.span())).unwrap();
                        for a in f.args.iter() {
                            out.push(' ');
                            expr(a, out);
                        }
                        if f.args.expand_final() {
                            out.push_str("...");
                        }
                        out.push(')');
                    }
                    Expression::Traversal(t) => {
                        out.push_str("(trav ");
                        expr(&t.expr, out);
                        for op in &t.operators {
                            write!(out, " @{}", at(op.span())).unwrap();
                            match op.value() {
                                TraversalOperator::AttrSplat(s) => {
                                    write!(out, ".*@{}", at(s.span())).unwrap()
                                }
                                TraversalOperator::FullSplat(s) => {
                                    write!(out, "[*]@{}", at(s.span())).unwrap()
                                }
                                TraversalOperator::GetAttr(i) => {
                                    write!(out, ".{}@{}", i.as_str(), at(i.span())).unwrap()
                                }
                                TraversalOperator::Index(i) => {
                                    out.push('[');
                                    expr(i, out);
                                    out.push(']');
                                }
                                TraversalOperator::LegacyIndex(i) => {
                                    write!(out, ".{}@{}", i.value(), at(i.span())).unwrap()
                                }
                            }
                        }
                        out.push(')');
                    }
                    Expression::UnaryOp(u) => {
                        write!(out, "({:?}@{} ", u.operator.value(), at(u.operator.span()))
                            .unwrap();
                        expr(&u.expr, out);
                        out.push(')');
                    }
                    Expression::BinaryOp(b) => {
                        out.push('(');
                        expr(&b.lhs_expr, out);
                        write!(out, " {:?} ", b.operator.value()).unwrap();
                        expr(&b.rhs_expr, out);
                        out.push(')');
                    }
                    Expression::ForExpr(f) => {
                        write!(
                            out,
                            "(for {:?} {} in ",
                            f.intro.key_var.as_ref().map(|k| k.as_str().to_string()),
                            f.intro.value_var.as_str()
                        )
                        .unwrap();
                        expr(&f.intro.collection_expr, out);
                        if let Some(k) = &f.key_expr {
                            out.push_str(" key ");
                            expr(k, out);
                        }
                        out.push_str(" value ");
                        expr(&f.value_expr, out);
                        if f.grouping {
                            out.push_str("...");
                        }
                        if let Some(c) = &f.cond {
                            out.push_str(" if ");
                            expr(&c.expr, out);
                        }
                        out.push(')');
                    }
                }
            }
        }
    };
}

printer!(theirs, hcl_edit);
printer!(ours, terrane_hcl);

#[derive(Clone, Copy, Debug)]
enum Kind {
    Body,
    Expr,
    Template,
}

/// The two trees' prints, or why one side did not parse.
fn both(kind: Kind, text: &str) -> (Result<String, String>, Result<String, String>) {
    let mut a = String::new();
    let mut b = String::new();
    let theirs = match kind {
        Kind::Body => hcl_edit::parser::parse_body(text).map(|t| theirs::body(&t, &mut a)),
        Kind::Expr => hcl_edit::parser::parse_expr(text).map(|t| theirs::expr(&t, &mut a)),
        Kind::Template => {
            hcl_edit::parser::parse_template(text).map(|t| theirs::template(&t, &mut a))
        }
    }
    .map(|_| a)
    .map_err(|e| e.to_string());
    let ours = match kind {
        Kind::Body => terrane_hcl::parse_body(text).map(|t| ours::body(&t, &mut b)),
        Kind::Expr => terrane_hcl::parse_expr(text).map(|t| ours::expr(&t, &mut b)),
        Kind::Template => terrane_hcl::parse_template(text).map(|t| ours::template(&t, &mut b)),
    }
    .map(|_| b)
    .map_err(|e| e.to_string());
    (theirs, ours)
}

/// Where the two disagree on a text hcl-edit accepts.
fn check(name: &str, kind: Kind, text: &str) -> Option<String> {
    match both(kind, text) {
        (Ok(a), Ok(b)) if a == b => None,
        (Ok(a), Ok(b)) => {
            let (la, lb): (Vec<_>, Vec<_>) = (a.lines().collect(), b.lines().collect());
            let i = la.iter().zip(&lb).position(|(x, y)| x != y).unwrap_or(0);
            Some(format!(
                "{name}: trees differ at line {i}\n hcl-edit: {}\n ours:     {}",
                la.get(i).unwrap_or(&""),
                lb.get(i).unwrap_or(&"")
            ))
        }
        (Ok(_), Err(e)) => Some(format!("{name}: hcl-edit parses it, ours fails: {e}")),
        (Err(_), _) => None,
    }
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        let name = p
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        if p.is_dir() {
            if name != "target" && !name.starts_with('.') {
                files(&p, out);
            }
        } else if [
            ".tf",
            ".tofu",
            ".tfvars",
            ".hcl",
            ".tftest.hcl",
            ".tftpl",
            ".tpl",
        ]
        .iter()
        .any(|s| name.ends_with(s))
        {
            out.push(p);
        }
    }
}

fn corpus_check(root: &Path) -> (usize, Vec<String>) {
    let mut paths = Vec::new();
    files(root, &mut paths);
    let mut bad = Vec::new();
    let mut n = 0;
    for p in &paths {
        let Ok(text) = std::fs::read_to_string(p) else {
            continue;
        };
        let name = p.display().to_string();
        let kind = if name.ends_with(".tftpl") || name.ends_with(".tpl") {
            Kind::Template
        } else {
            Kind::Body
        };
        n += 1;
        bad.extend(check(&name, kind, &text));
    }
    (n, bad)
}

#[test]
fn the_repositorys_files_parse_as_hcl_edit_parses_them() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let (n, bad) = corpus_check(&root);
    assert!(n > 100, "only {n} files found under {}", root.display());
    assert!(
        bad.is_empty(),
        "{} of {n} files differ:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn an_outside_corpus_parses_as_hcl_edit_parses_it() {
    let Ok(dir) = std::env::var("TERRANE_HCL_CORPUS") else {
        return;
    };
    let (n, bad) = corpus_check(Path::new(&dir));
    eprintln!("{n} files under {dir}");
    assert!(
        bad.is_empty(),
        "{} of {n} files differ:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

struct Case {
    name: &'static str,
    kind: Kind,
    text: &'static str,
}

const fn body(name: &'static str, text: &'static str) -> Case {
    Case {
        name,
        kind: Kind::Body,
        text,
    }
}

const fn expr(name: &'static str, text: &'static str) -> Case {
    Case {
        name,
        kind: Kind::Expr,
        text,
    }
}

const fn tmpl(name: &'static str, text: &'static str) -> Case {
    Case {
        name,
        kind: Kind::Template,
        text,
    }
}

const CASES: &[Case] = &[
    body("empty", ""),
    body("comments only", "# a\n// b\n/* c\n d */\n"),
    body("attribute without newline at the end", "a = 1"),
    body("crlf lines", "a = 1\r\nb {\r\n  c = 2\r\n}\r\n"),
    body("block with labels", "resource \"a\" b {\n  x = 1\n}\n"),
    body("one-line blocks", "a {}\nb { c = 1 }\nd \"e\" { f = \"g\" }\n"),
    body("nested blocks and comments", "a { # c\n  b {\n    c = 1 // d\n  }\n  /* e */ d = 2\n}\n"),
    body("block comment inside an argument", "a = /* x */ 1 /* y */\n"),
    expr("precedence", "a + b * c - d / e % f == g && h || !i"),
    expr("comparison chain", "a < b == c >= d"),
    expr("unary and negative numbers", "-a + - 1 * -2.5 - !b"),
    expr("conditional nesting", "a ? b : c ? d : e"),
    expr("conditional over operators", "a == 1 ? b + 1 : c"),
    expr("numbers", "[0, 1, 1.5, 1e3, 2.5E-2, 18446744073709551615, 18446744073709551616]"),
    expr("traversals", "a.b[0].c[\"d\"].*.e[*].f.0.1"),
    expr("traversal after call and parens", "f(x)[0].y + (a).b"),
    expr("splat then attributes", "aws_instance.web[*].id"),
    expr("function calls", "f() + g(a) + h(a, b,) + i(a...) + provider::p::k(1)"),
    expr("multi-line call", "f(\n  a,\n  # c\n  b\n)"),
    expr("arrays", "[\n  1,\n  [2, 3],\n  [],\n]"),
    expr("objects", "{\n  a = 1\n  \"b\" = 2, c : 3\n  (d) = 4 # e\n  e.f = 5\n}"),
    expr("object on one line", "{ a = 1, b = { c = [1, 2] } }"),
    expr("object duplicate key keeps the last", "{ a = 1, b = 2 }"),
    expr("for list", "[for i, v in var.list : upper(v) if v != \"\"]"),
    expr("for object with grouping", "{for k, v in local.m : v.key => k... if k > 1}"),
    expr("for over multiple lines", "[\n  for x in y :\n  x\n]"),
    expr("keywords", "[null, true, false, nullable, true_value]"),
    expr("strings and escapes", "[\"\", \"a\\nb\\t\\\"c\\\\\", \"\\u00e9\\U0001F600\", \"$${x} %%{y}\"]"),
    expr("string templates", "\"a-${b.c}-${~ d ~}-%{ if e }f%{ else }g%{ endif }-%{ for k, v in m ~}${k}=${v}%{~ endfor }\""),
    expr("template with only an interpolation", "\"${a}\""),
    expr("heredoc", "<<EOT\nhello ${name}\n  indented\nEOT"),
    expr("flush heredoc", "<<-EOT\n    a\n      b\n    ${c}\n    EOT"),
    expr("empty heredoc", "<<EOT\nEOT"),
    expr("heredoc with directives", "<<EOT\n%{ for x in xs ~}\n- ${x}\n%{ endfor ~}\nEOT"),
    expr("parentheses over lines", "(\n  a\n  + b\n)"),
    expr("unicode names", "[é, a-b, _x]"),
    tmpl("template file", "Hello, ${name}!\n%{ if admin }admin%{ endif }\n"),
    tmpl("template file with escapes kept", "a\\nb $${c}"),
];

#[test]
fn named_cases_parse_as_hcl_edit_parses_them() {
    let mut bad = Vec::new();
    for c in CASES {
        match both(c.kind, c.text) {
            (Err(e), _) => bad.push(format!("{}: hcl-edit refuses the case: {e}", c.name)),
            _ => bad.extend(check(c.name, c.kind, c.text)),
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
