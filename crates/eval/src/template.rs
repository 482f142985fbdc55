//! String templates and heredocs: literals, interpolations, `%{if}` and
//! `%{for}` directives and `~` whitespace stripping. An unknown
//! interpolation makes the result an unknown string that keeps the known
//! text before it as a prefix refinement; a sensitive one marks the result.

use crate::expr::Evaluator;
use crate::marks::mark;
use hcl_edit::template::{Directive, Element, Template};
use hcl_edit::Span;
use terrane_value::convert::convert;
use terrane_value::{Kind, Refinements, Type, Value};

#[derive(Default)]
pub(crate) struct Acc {
    buf: String,
    unknown: bool,
    sensitive: bool,
}

impl Acc {
    pub(crate) fn push(&mut self, s: &str) {
        if !self.unknown {
            self.buf.push_str(s);
        }
    }

    /// The rendered string (unknown with the known prefix when an
    /// interpolation was unknown; marked when one was sensitive).
    pub(crate) fn finish(self) -> Value {
        let out = if self.unknown {
            Value::unknown_refined(Type::String, Refinements::not_null().with_prefix(&self.buf))
        } else {
            Value::string(self.buf)
        };
        mark(out, self.sensitive)
    }
}

impl Evaluator<'_> {
    /// A quoted string with interpolations. `"${x}"` alone yields `x` as is
    /// (any type), as HCL's template unwrapping does.
    pub(crate) fn string_template(&mut self, t: &Template) -> Value {
        if let [Element::Interpolation(i)] = t.iter().collect::<Vec<_>>().as_slice() {
            return self.eval(&i.expr);
        }
        let mut acc = Acc::default();
        self.render(t, false, false, Quoted::Top, &mut acc);
        acc.finish()
    }

    /// Renders a template to a string value.
    pub fn template(&mut self, t: &Template) -> Value {
        let mut acc = Acc::default();
        self.render(t, false, false, Quoted::No, &mut acc);
        acc.finish()
    }

    fn render(
        &mut self,
        t: &Template,
        trim_first: bool,
        trim_last: bool,
        quoted: Quoted,
        acc: &mut Acc,
    ) {
        // hcl-edit unescapes the literals of a quoted string at its top
        // level only; inside directives they keep their escapes.
        let inner = if quoted == Quoted::No {
            Quoted::No
        } else {
            Quoted::Nested
        };
        let elems: Vec<&Element> = t.iter().collect();
        for (i, el) in elems.iter().enumerate() {
            match el {
                Element::Literal(lit) => {
                    let unescaped = match quoted {
                        Quoted::Nested => unescape(lit.value()),
                        _ => lit.value().to_string(),
                    };
                    let mut s: &str = &unescaped;
                    let strip_before = if i == 0 {
                        trim_first
                    } else {
                        strips_after(elems[i - 1])
                    };
                    let strip_after = if i + 1 == elems.len() {
                        trim_last
                    } else {
                        strips_before(elems[i + 1])
                    };
                    if strip_before {
                        s = s.trim_start();
                    }
                    if strip_after {
                        s = s.trim_end();
                    }
                    acc.push(s);
                }
                Element::Interpolation(interp) => {
                    let v = self.eval(&interp.expr);
                    self.interpolate(v, interp.expr.span(), acc);
                }
                Element::Directive(dir) => match &**dir {
                    Directive::If(d) => {
                        let Some(c) = self.directive_condition(&d.if_expr.cond_expr, acc) else {
                            continue;
                        };
                        let end_strip = d.endif_expr.strip.strip_start();
                        if c {
                            let last = d
                                .else_expr
                                .as_ref()
                                .map(|e| e.strip.strip_start())
                                .unwrap_or(end_strip);
                            self.render(
                                &d.if_expr.template,
                                d.if_expr.strip.strip_end(),
                                last,
                                inner,
                                acc,
                            );
                        } else if let Some(e) = &d.else_expr {
                            self.render(&e.template, e.strip.strip_end(), end_strip, inner, acc);
                        }
                    }
                    Directive::For(d) => {
                        let f = &d.for_expr;
                        let Some(items) = self.directive_items(&f.collection_expr, acc) else {
                            continue;
                        };
                        let depth = self.locals.len();
                        for (k, v) in items {
                            if let Some(kv) = &f.key_var {
                                self.locals.push((kv.as_str().to_string(), k));
                            }
                            self.locals.push((f.value_var.as_str().to_string(), v));
                            self.render(
                                &f.template,
                                f.strip.strip_end(),
                                d.endfor_expr.strip.strip_start(),
                                inner,
                                acc,
                            );
                            self.locals.truncate(depth);
                        }
                    }
                },
            }
        }
    }

    /// An `%{if}` condition: `None` when unknown or invalid (the result
    /// is then unknown).
    pub(crate) fn directive_condition(
        &mut self,
        cond: &hcl_edit::expr::Expression,
        acc: &mut Acc,
    ) -> Option<bool> {
        let c = self.eval(cond);
        acc.sensitive |= c.has_sensitive();
        let c = c.unmark_deep();
        if c.is_null() {
            self.error(
                cond.span(),
                "Invalid template directive",
                "The condition value is null. Conditions must either be true or false.",
            );
            acc.unknown = true;
            return None;
        }
        let Ok(c) = convert(&c, &Type::Bool) else {
            self.error(
                cond.span(),
                "Invalid template directive",
                "The condition expression must be of type bool.",
            );
            acc.unknown = true;
            return None;
        };
        if c.as_bool().is_none() {
            acc.unknown = true;
        }
        c.as_bool()
    }

    /// The items a `%{for}` directive iterates over; `None` when unknown or
    /// invalid (the result is then unknown).
    pub(crate) fn directive_items(
        &mut self,
        coll_expr: &hcl_edit::expr::Expression,
        acc: &mut Acc,
    ) -> Option<Vec<(Value, Value)>> {
        let coll = self.eval(coll_expr);
        acc.sensitive |= coll.is_sensitive();
        if coll.is_null() {
            self.error(
                coll_expr.span(),
                "Invalid template for directive",
                "Cannot iterate over a null value.",
            );
            acc.unknown = true;
            return None;
        }
        if !coll.is_known() {
            acc.unknown = true;
            return None;
        }
        match crate::forexpr::iteration_items(&coll) {
            Some(items) => Some(items),
            None => {
                self.error(
                    coll_expr.span(),
                    "Invalid template for directive",
                    format!(
                        "A value of type {} cannot be used as the collection in a 'for' directive.",
                        coll.ty().friendly_name()
                    ),
                );
                acc.unknown = true;
                None
            }
        }
    }

    pub(crate) fn interpolate(
        &mut self,
        v: Value,
        span: Option<std::ops::Range<usize>>,
        acc: &mut Acc,
    ) {
        acc.sensitive |= v.has_sensitive();
        if v.is_null() {
            self.error(
                span,
                "Invalid template interpolation value",
                "The expression result is null. Cannot include a null value in a string template.",
            );
            acc.unknown = true;
            return;
        }
        match convert(&v.unmark_deep(), &Type::String) {
            Ok(s) => match s.kind() {
                Kind::String(s) => acc.push(s),
                _ => {
                    if let Some(p) = s.refinements().and_then(|r| r.string_prefix.as_deref()) {
                        acc.push(p);
                    }
                    acc.unknown = true;
                }
            },
            Err(_) => {
                self.error(
                    span,
                    "Invalid template interpolation value",
                    "Cannot include the given value in a string template: string required.",
                );
                acc.unknown = true;
            }
        }
    }
}

/// Where a template being rendered sits: not in a quoted string (heredoc,
/// template file: no escapes), at the top of a quoted string, or inside a
/// directive of one (where the literals still hold their escapes).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Quoted {
    No,
    Top,
    Nested,
}

/// The text of a quoted-string literal with its escapes resolved: `\n`,
/// `\r`, `\t`, `\"`, `\\`, `\uNNNN`, `\UNNNNNNNN` (HCL's set).
fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some('"') => out.push('"'),
            Some('\\') => out.push('\\'),
            Some(u @ ('u' | 'U')) => {
                let n = if u == 'u' { 4 } else { 8 };
                let hex: String = chars.by_ref().take(n).collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(ch) => out.push(ch),
                    None => {
                        out.push('\\');
                        out.push(u);
                        out.push_str(&hex);
                    }
                }
            }
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// Whether element `e` strips the whitespace of the literal before it.
fn strips_before(e: &Element) -> bool {
    match e {
        Element::Literal(_) => false,
        Element::Interpolation(i) => i.strip.strip_start(),
        Element::Directive(d) => match &**d {
            Directive::If(d) => d.if_expr.strip.strip_start(),
            Directive::For(d) => d.for_expr.strip.strip_start(),
        },
    }
}

/// Whether element `e` strips the whitespace of the literal after it.
fn strips_after(e: &Element) -> bool {
    match e {
        Element::Literal(_) => false,
        Element::Interpolation(i) => i.strip.strip_end(),
        Element::Directive(d) => match &**d {
            Directive::If(d) => d.endif_expr.strip.strip_end(),
            Directive::For(d) => d.endfor_expr.strip.strip_end(),
        },
    }
}
