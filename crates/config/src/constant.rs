//! Expressions evaluated with no variables and no functions, as Terraform
//! evaluates `description`, `source`, `version`, `alias` and
//! `required_version` while loading: literals, templates and heredocs whose
//! interpolations are themselves constant, parentheses, operators and
//! conditionals. A reference gives Terraform's "Variables not allowed" at
//! the referenced name, a call "Function calls not allowed" at the call,
//! and both then "Unsuitable value type" at the expression's start, as
//! Terraform reports them. Constant expressions outside that subset (`for`
//! expressions, template directives, indexing) are refused with a diagnostic
//! that says so, never read as something else.

use crate::diag::{Diagnostic, LineIndex};
use std::ops::Range;
use terrane_hcl::expr::{BinaryOperator, Expression, UnaryOperator};
use terrane_hcl::template::{Element, Template};
use terrane_hcl::Span;

/// A constant value, as far as a string-typed argument needs one.
#[derive(Clone, Debug, PartialEq)]
enum Val {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    /// A tuple or object (only its type name matters here).
    Other(&'static str),
}

impl Val {
    fn type_name(&self) -> &'static str {
        match self {
            Val::Null => "null",
            Val::Bool(_) => "bool",
            Val::Num(_) => "number",
            Val::Str(_) => "string",
            Val::Other(t) => t,
        }
    }

    /// Conversion to string as cty converts primitives.
    fn to_str(&self) -> Option<String> {
        match self {
            Val::Bool(b) => Some(b.to_string()),
            Val::Num(n) => Some(num_text(*n)),
            Val::Str(s) => Some(s.clone()),
            Val::Null | Val::Other(_) => None,
        }
    }
}

fn num_text(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        n.to_string()
    }
}

struct Eval<'a> {
    index: &'a LineIndex,
    diags: Vec<Diagnostic>,
}

/// The string value of a constant expression, or the diagnostics that say
/// why there is none.
pub(crate) fn const_string(e: &Expression, index: &LineIndex) -> Result<String, Vec<Diagnostic>> {
    let mut ev = Eval {
        index,
        diags: Vec::new(),
    };
    let v = ev.eval(e);
    let start = index.range(start_span(e));
    match v {
        None => {
            if ev
                .diags
                .iter()
                .all(|d| d.summary != "Unsupported expression")
            {
                ev.diags.push(Diagnostic::error(
                    "Unsuitable value type",
                    "Unsuitable value: value must be known",
                    start,
                ));
            }
            Err(ev.diags)
        }
        Some(Val::Null) => Err(vec![Diagnostic::error(
            "Unsuitable value type",
            "Unsuitable value: null value is not allowed",
            start,
        )]),
        Some(v) => match v.to_str() {
            Some(s) if ev.diags.is_empty() => Ok(s),
            Some(_) => Err(ev.diags),
            None => Err(vec![Diagnostic::error(
                "Unsuitable value type",
                format!(
                    "Unsuitable value: string required, but have {}",
                    v.type_name()
                ),
                start,
            )]),
        },
    }
}

/// Where HCL's `StartRange` of an expression is: the first part of a
/// template, the name and opening parenthesis of a call, the opening
/// bracket of a tuple or object, the left operand of an operator.
fn start_span(e: &Expression) -> Option<Range<usize>> {
    match e {
        // A quoted string is a template of one literal part: its text.
        Expression::String(_) => e.span().map(|s| {
            if s.len() >= 2 {
                s.start + 1..s.end - 1
            } else {
                s
            }
        }),
        Expression::StringTemplate(t) if t.len() == 1 => e.span(),
        Expression::StringTemplate(t) => match t.iter().next() {
            Some(Element::Literal(l)) => l.span(),
            Some(Element::Interpolation(i)) => start_span(&i.expr),
            _ => e.span(),
        },
        Expression::FuncCall(f) => {
            let s = e.span()?;
            let open = f.args.span().map(|a| a.start + 1).unwrap_or(s.end);
            Some(s.start..open.min(s.end))
        }
        Expression::Array(_) | Expression::Object(_) => e.span().map(|s| s.start..s.start + 1),
        Expression::BinaryOp(b) => start_span(&b.lhs_expr),
        Expression::Conditional(c) => start_span(&c.cond_expr),
        _ => e.span(),
    }
}

impl Eval<'_> {
    fn err(&mut self, summary: &str, detail: &str, span: Option<Range<usize>>) {
        let range = self.index.range(span);
        self.diags
            .push(Diagnostic::error(summary, detail.to_string(), range));
    }

    fn unsupported(&mut self, e: &Expression) -> Option<Val> {
        self.err(
            "Unsupported expression",
            "terrane evaluates only literals, templates, operators and conditionals here (the value must be known before anything else is evaluated).",
            e.span(),
        );
        None
    }

    fn eval(&mut self, e: &Expression) -> Option<Val> {
        match e {
            Expression::Null(_) => Some(Val::Null),
            Expression::Bool(b) => Some(Val::Bool(*b.value())),
            Expression::Number(n) => n.value().as_f64().map(Val::Num),
            Expression::String(s) => Some(Val::Str(s.as_str().to_string())),
            Expression::StringTemplate(t) => self.template(t),
            Expression::HeredocTemplate(h) => self.template(&h.template),
            Expression::Parenthesis(p) => self.eval(p.inner()),
            Expression::Array(_) => Some(Val::Other("tuple")),
            Expression::Object(_) => Some(Val::Other("object")),
            Expression::Variable(v) => {
                self.err(
                    "Variables not allowed",
                    "Variables may not be used here.",
                    v.span(),
                );
                None
            }
            Expression::Traversal(t) => match &t.expr {
                Expression::Variable(v) => {
                    self.err(
                        "Variables not allowed",
                        "Variables may not be used here.",
                        v.span(),
                    );
                    None
                }
                _ => self.unsupported(e),
            },
            Expression::FuncCall(_) => {
                self.err(
                    "Function calls not allowed",
                    "Functions may not be called here.",
                    e.span(),
                );
                None
            }
            Expression::Conditional(c) => {
                let cond = self.eval(&c.cond_expr);
                let t = self.eval(&c.true_expr);
                let f = self.eval(&c.false_expr);
                match cond? {
                    Val::Bool(true) => t,
                    Val::Bool(false) => f,
                    _ => self.unsupported(&c.cond_expr),
                }
            }
            Expression::UnaryOp(u) => match (u.operator.value(), self.eval(&u.expr)?) {
                (UnaryOperator::Not, Val::Bool(b)) => Some(Val::Bool(!b)),
                (UnaryOperator::Neg, Val::Num(n)) => Some(Val::Num(-n)),
                _ => self.unsupported(e),
            },
            Expression::BinaryOp(b) => {
                let l = self.eval(&b.lhs_expr);
                let r = self.eval(&b.rhs_expr);
                let (l, r) = (l?, r?);
                self.binary(*b.operator.value(), l, r)
                    .or_else(|| self.unsupported(e))
            }
            Expression::ForExpr(_) => self.unsupported(e),
        }
    }

    fn binary(&mut self, op: BinaryOperator, l: Val, r: Val) -> Option<Val> {
        use BinaryOperator as B;
        Some(match (op, l, r) {
            (B::Eq, l, r) => Val::Bool(l == r),
            (B::NotEq, l, r) => Val::Bool(l != r),
            (B::And, Val::Bool(a), Val::Bool(b)) => Val::Bool(a && b),
            (B::Or, Val::Bool(a), Val::Bool(b)) => Val::Bool(a || b),
            (op, Val::Num(a), Val::Num(b)) => match op {
                B::Plus => Val::Num(a + b),
                B::Minus => Val::Num(a - b),
                B::Mul => Val::Num(a * b),
                B::Div if b != 0.0 => Val::Num(a / b),
                B::Mod if b != 0.0 => Val::Num(a % b),
                B::Less => Val::Bool(a < b),
                B::LessEq => Val::Bool(a <= b),
                B::Greater => Val::Bool(a > b),
                B::GreaterEq => Val::Bool(a >= b),
                _ => return None,
            },
            _ => return None,
        })
    }

    /// Literal parts and constant interpolations; directives are outside
    /// the subset.
    fn template(&mut self, t: &Template) -> Option<Val> {
        // `"${x}"` alone is x itself, not converted (HCL's template wrap).
        if let (1, Some(Element::Interpolation(i))) = (t.len(), t.get(0)) {
            return self.eval(&i.expr);
        }
        let mut out = String::new();
        let mut known = true;
        for el in t.iter() {
            match el {
                Element::Literal(l) => out.push_str(l.as_str()),
                Element::Interpolation(i) => match self.eval(&i.expr) {
                    Some(v) => match v.to_str() {
                        Some(s) => out.push_str(&s),
                        None => {
                            self.err(
                                "Invalid template interpolation value",
                                &format!(
                                    "The expression result is {}; a string, number or bool is required here.",
                                    v.type_name()
                                ),
                                i.expr.span(),
                            );
                            known = false;
                        }
                    },
                    None => known = false,
                },
                Element::Directive(d) => {
                    self.err(
                        "Unsupported expression",
                        "terrane evaluates only literals, templates, operators and conditionals here (template directives are not supported in this argument).",
                        d.span(),
                    );
                    return None;
                }
            }
        }
        known.then_some(Val::Str(out))
    }
}
