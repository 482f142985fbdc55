//! Expressions written back as HCL text, in one canonical spelling:
//! single spaces around operators, no comments, strings quoted with
//! Terraform's escapes. Used where an expression is named in a message
//! (`moved` addresses, references), never to rewrite a file.

use crate::ast::*;
use std::fmt::{self, Display, Formatter, Write};

fn quoted(s: &str, f: &mut Formatter<'_>) -> fmt::Result {
    f.write_char('"')?;
    literal(s, true, f)?;
    f.write_char('"')
}

/// Text inside quotes: escapes, and template markers doubled.
fn literal(s: &str, escape: bool, f: &mut Formatter<'_>) -> fmt::Result {
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if escape => f.write_str("\\\"")?,
            '\\' if escape => f.write_str("\\\\")?,
            '\n' if escape => f.write_str("\\n")?,
            '\r' if escape => f.write_str("\\r")?,
            '\t' if escape => f.write_str("\\t")?,
            '$' | '%' if chars.peek() == Some(&'{') => {
                f.write_char(c)?;
                f.write_char(c)?;
            }
            c => f.write_char(c)?,
        }
    }
    Ok(())
}

fn strip_open(s: Strip, f: &mut Formatter<'_>) -> fmt::Result {
    if s.strip_start() {
        f.write_char('~')?;
    }
    Ok(())
}

fn strip_close(s: Strip, f: &mut Formatter<'_>) -> fmt::Result {
    if s.strip_end() {
        f.write_char('~')?;
    }
    Ok(())
}

fn template(t: &Template, escape: bool, f: &mut Formatter<'_>) -> fmt::Result {
    for e in t {
        match e {
            Element::Literal(l) => literal(l, escape, f)?,
            Element::Interpolation(i) => {
                f.write_str("${")?;
                strip_open(i.strip, f)?;
                write!(f, "{}", i.expr)?;
                strip_close(i.strip, f)?;
                f.write_char('}')?;
            }
            Element::Directive(d) => match &**d {
                Directive::If(d) => {
                    f.write_str("%{")?;
                    strip_open(d.if_expr.strip, f)?;
                    write!(f, "if {}", d.if_expr.cond_expr)?;
                    strip_close(d.if_expr.strip, f)?;
                    f.write_char('}')?;
                    template(&d.if_expr.template, escape, f)?;
                    if let Some(e) = &d.else_expr {
                        f.write_str("%{")?;
                        strip_open(e.strip, f)?;
                        f.write_str("else")?;
                        strip_close(e.strip, f)?;
                        f.write_char('}')?;
                        template(&e.template, escape, f)?;
                    }
                    f.write_str("%{")?;
                    strip_open(d.endif_expr.strip, f)?;
                    f.write_str("endif")?;
                    strip_close(d.endif_expr.strip, f)?;
                    f.write_char('}')?;
                }
                Directive::For(d) => {
                    let x = &d.for_expr;
                    f.write_str("%{")?;
                    strip_open(x.strip, f)?;
                    f.write_str("for ")?;
                    if let Some(k) = &x.key_var {
                        write!(f, "{}, ", k.as_str())?;
                    }
                    write!(f, "{} in {}", x.value_var.as_str(), x.collection_expr)?;
                    strip_close(x.strip, f)?;
                    f.write_char('}')?;
                    template(&x.template, escape, f)?;
                    f.write_str("%{")?;
                    strip_open(d.endfor_expr.strip, f)?;
                    f.write_str("endfor")?;
                    strip_close(d.endfor_expr.strip, f)?;
                    f.write_char('}')?;
                }
            },
        }
    }
    Ok(())
}

fn list<'a>(items: impl Iterator<Item = &'a Expression>, f: &mut Formatter<'_>) -> fmt::Result {
    for (i, e) in items.enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{e}")?;
    }
    Ok(())
}

impl Display for Expression {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Expression::Null(_) => f.write_str("null"),
            Expression::Bool(b) => write!(f, "{}", b.value()),
            Expression::Number(n) => match n.as_repr() {
                Some(r) => f.write_str(&r.split_whitespace().collect::<String>()),
                None => write!(f, "{}", n.value()),
            },
            Expression::String(s) => quoted(s, f),
            Expression::Array(a) => {
                f.write_char('[')?;
                list(a.iter(), f)?;
                f.write_char(']')
            }
            Expression::Object(o) => {
                f.write_char('{')?;
                for (i, (k, v)) in o.iter().enumerate() {
                    f.write_str(if i == 0 { " " } else { ", " })?;
                    match k {
                        ObjectKey::Ident(k) => f.write_str(k.as_str())?,
                        ObjectKey::Expression(k) => write!(f, "{k}")?,
                    }
                    write!(f, " = {}", v.expr())?;
                }
                if !o.is_empty() {
                    f.write_char(' ')?;
                }
                f.write_char('}')
            }
            Expression::StringTemplate(t) => {
                f.write_char('"')?;
                template(t, true, f)?;
                f.write_char('"')
            }
            Expression::HeredocTemplate(h) => {
                writeln!(f, "<<{}", h.delimiter.as_str())?;
                template(&h.template, false, f)?;
                f.write_str(h.delimiter.as_str())
            }
            Expression::Parenthesis(p) => write!(f, "({})", p.inner()),
            Expression::Variable(v) => f.write_str(v.as_str()),
            Expression::Conditional(c) => {
                write!(f, "{} ? {} : {}", c.cond_expr, c.true_expr, c.false_expr)
            }
            Expression::FuncCall(c) => {
                for n in &c.name.namespace {
                    write!(f, "{}::", n.as_str())?;
                }
                write!(f, "{}(", c.name.name.as_str())?;
                list(c.args.iter(), f)?;
                if c.args.expand_final() {
                    f.write_str("...")?;
                }
                f.write_char(')')
            }
            Expression::Traversal(t) => {
                write!(f, "{}", t.expr)?;
                for op in &t.operators {
                    match op.value() {
                        TraversalOperator::AttrSplat(_) => f.write_str(".*")?,
                        TraversalOperator::FullSplat(_) => f.write_str("[*]")?,
                        TraversalOperator::GetAttr(a) => write!(f, ".{}", a.as_str())?,
                        TraversalOperator::Index(i) => write!(f, "[{i}]")?,
                        TraversalOperator::LegacyIndex(i) => write!(f, ".{}", i.value())?,
                    }
                }
                Ok(())
            }
            Expression::UnaryOp(u) => write!(f, "{}{}", u.operator.value().as_str(), u.expr),
            Expression::BinaryOp(b) => write!(
                f,
                "{} {} {}",
                b.lhs_expr,
                b.operator.value().as_str(),
                b.rhs_expr
            ),
            Expression::ForExpr(x) => {
                let (open, close) = if x.key_expr.is_some() {
                    ('{', '}')
                } else {
                    ('[', ']')
                };
                write!(f, "{open}for ")?;
                if let Some(k) = &x.intro.key_var {
                    write!(f, "{}, ", k.as_str())?;
                }
                write!(
                    f,
                    "{} in {} : ",
                    x.intro.value_var.as_str(),
                    x.intro.collection_expr
                )?;
                if let Some(k) = &x.key_expr {
                    write!(f, "{k} => ")?;
                }
                write!(f, "{}", x.value_expr)?;
                if x.grouping {
                    f.write_str("...")?;
                }
                if let Some(c) = &x.cond {
                    write!(f, " if {}", c.expr)?;
                }
                f.write_char(close)
            }
        }
    }
}
