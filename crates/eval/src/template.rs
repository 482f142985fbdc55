//! Templates: quoted strings with interpolations, heredocs and template
//! files (`templatefile`), with `%{if}` / `%{for}` directives and `~` strip
//! markers, rendered by one renderer over a flat list of tokens.
//!
//! How the text is read differs, not how it is rendered:
//! - HCL scans a heredoc or a template file line by line, so a literal is
//!   cut at every newline; a `~` strip marker then trims only the piece next
//!   to it (`%{~ for}` removes the indentation of its own line, not the
//!   newline before it). A flush heredoc (`<<-`) then removes the smallest
//!   indentation found at the start of the lines, where a line that starts
//!   with a stripped piece or with an interpolation counts as not indented.
//!   hcl-edit dedents before any of this, so heredocs are re-read here from
//!   their source text.
//! - A quoted string is one literal between interpolations (its escaped
//!   newlines do not cut it), and hcl-edit leaves the escapes of the
//!   literals inside its directives, which are resolved here.
//!
//! An unknown interpolation makes the result an unknown string that keeps
//! the known text before it as a prefix refinement; a sensitive one marks
//! the result.

use crate::expr::Evaluator;
use crate::marks::mark;
use terrane_config::LineIndex;
use terrane_hcl::expr::Expression;
use terrane_hcl::template::{
    Directive, Element, ForTemplateExpr, HeredocTemplate, Strip, Template,
};
use terrane_hcl::Span;
use terrane_value::convert::convert;
use terrane_value::{Kind, Refinements, Type, Value};

#[derive(Default)]
pub(crate) struct Acc {
    buf: String,
    unknown: bool,
    sensitive: terrane_value::Marks,
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

/// One token of a template, in source order.
enum Tok<'t> {
    Lit(String),
    Interp(&'t Expression, Strip),
    If(&'t Expression, Strip),
    Else(Strip),
    EndIf(Strip),
    For(&'t ForTemplateExpr, Strip),
    EndFor(Strip),
}

impl Tok<'_> {
    fn strip(&self) -> Strip {
        match self {
            Tok::Lit(_) => Strip::None,
            Tok::Interp(_, s)
            | Tok::If(_, s)
            | Tok::Else(s)
            | Tok::EndIf(s)
            | Tok::For(_, s)
            | Tok::EndFor(s) => *s,
        }
    }
}

/// How a template's literals are read into tokens.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reading {
    /// Heredocs and template files: every line its own piece.
    Lines,
    /// The top level of a quoted string: literals whole, escapes resolved
    /// by hcl-edit.
    Quoted,
    /// Inside a directive of a quoted string: literals whole, escapes
    /// still to resolve.
    QuotedNested,
}

fn flatten<'t>(t: &'t Template, how: Reading, out: &mut Vec<Tok<'t>>) {
    let inner = if how == Reading::Lines {
        Reading::Lines
    } else {
        Reading::QuotedNested
    };
    for el in t.iter() {
        match el {
            Element::Literal(l) => match how {
                Reading::Lines => {
                    for piece in l.value().split_inclusive('\n') {
                        out.push(Tok::Lit(piece.to_string()));
                    }
                }
                Reading::Quoted => out.push(Tok::Lit(l.value().to_string())),
                Reading::QuotedNested => out.push(Tok::Lit(unescape(l.value()))),
            },
            Element::Interpolation(i) => out.push(Tok::Interp(&i.expr, i.strip)),
            Element::Directive(d) => match &**d {
                Directive::If(d) => {
                    out.push(Tok::If(&d.if_expr.cond_expr, d.if_expr.strip));
                    flatten(&d.if_expr.template, inner, out);
                    if let Some(e) = &d.else_expr {
                        out.push(Tok::Else(e.strip));
                        flatten(&e.template, inner, out);
                    }
                    out.push(Tok::EndIf(d.endif_expr.strip));
                }
                Directive::For(d) => {
                    out.push(Tok::For(&d.for_expr, d.for_expr.strip));
                    flatten(&d.for_expr.template, inner, out);
                    out.push(Tok::EndFor(d.endfor_expr.strip));
                }
            },
        }
    }
}

/// Strip markers, each trimming the one piece next to it.
fn strip(toks: &mut [Tok<'_>]) {
    for i in 0..toks.len() {
        let s = toks[i].strip();
        if s.strip_start() && i > 0 {
            if let Tok::Lit(l) = &mut toks[i - 1] {
                *l = l.trim_end().to_string();
            }
        }
        if s.strip_end() && i + 1 < toks.len() {
            if let Tok::Lit(l) = &mut toks[i + 1] {
                *l = l.trim_start().to_string();
            }
        }
    }
}

/// Removes the smallest line-start indentation from every line start.
fn flush(toks: &mut [Tok<'_>]) {
    let starts: Vec<bool> = (0..toks.len())
        .map(|i| i == 0 || matches!(&toks[i - 1], Tok::Lit(l) if l.ends_with('\n')))
        .collect();
    let mut min: Option<usize> = None;
    for (i, t) in toks.iter().enumerate() {
        if !starts[i] {
            continue;
        }
        let n = match t {
            Tok::Lit(l) if l == "\n" => continue,
            Tok::Lit(l) => l.chars().take_while(|c| *c == ' ' || *c == '\t').count(),
            _ => 0,
        };
        min = Some(min.map_or(n, |m: usize| m.min(n)));
    }
    let Some(min) = min.filter(|m| *m > 0) else {
        return;
    };
    for (i, t) in toks.iter_mut().enumerate() {
        if let (true, Tok::Lit(l)) = (starts[i], t) {
            let cut = l
                .chars()
                .take(min)
                .take_while(|c| *c == ' ' || *c == '\t')
                .count();
            *l = l[cut..].to_string();
        }
    }
}

/// Index of the token closing the construct opened at `open` (and of an
/// `else` at the same depth, for `if`).
fn matching(toks: &[Tok<'_>], open: usize) -> (Option<usize>, usize) {
    let mut depth = 0;
    let mut else_at = None;
    for (j, t) in toks.iter().enumerate().skip(open + 1) {
        match t {
            Tok::If(..) | Tok::For(..) => depth += 1,
            Tok::Else(_) if depth == 0 => else_at = Some(j),
            Tok::EndIf(_) | Tok::EndFor(_) if depth == 0 => return (else_at, j),
            Tok::EndIf(_) | Tok::EndFor(_) => depth -= 1,
            _ => {}
        }
    }
    (else_at, toks.len())
}

impl Evaluator<'_> {
    /// A quoted string with interpolations. `"${x}"` alone yields `x` as is
    /// (any type), as HCL's template unwrapping does.
    pub(crate) fn string_template(&mut self, t: &Template) -> Value {
        let mut elements = t.iter();
        if let (Some(Element::Interpolation(i)), None) = (elements.next(), elements.next()) {
            return self.eval(&i.expr);
        }
        // The common string, text and interpolations without directives or
        // strip markers (`"web-${count.index}"`): rendered straight from
        // its elements, with no token list to build and trim.
        let plain = t.iter().all(|e| match e {
            Element::Literal(_) => true,
            Element::Interpolation(i) => i.strip == Strip::None,
            Element::Directive(_) => false,
        });
        if plain {
            let mut acc = Acc::default();
            for e in t.iter() {
                match e {
                    Element::Literal(l) => acc.push(l.value()),
                    Element::Interpolation(i) => {
                        let v = self.eval(&i.expr);
                        self.interpolate(v, i.expr.span(), &mut acc);
                    }
                    Element::Directive(_) => unreachable!("plain templates have no directive"),
                }
            }
            return acc.finish();
        }
        self.read_and_render(t, Reading::Quoted)
    }

    /// A template read line by line (a heredoc as hcl-edit parsed it).
    pub fn template(&mut self, t: &Template) -> Value {
        self.read_and_render(t, Reading::Lines)
    }

    /// A template file (`templatefile`): read line by line as a heredoc
    /// is, without the flush.
    pub(crate) fn template_file(&mut self, t: &Template) -> Value {
        self.read_and_render(t, Reading::Lines)
    }

    /// A heredoc, read from its source when it can be (else as hcl-edit
    /// parsed it).
    pub(crate) fn heredoc(&mut self, h: &HeredocTemplate, index: &LineIndex) -> Value {
        let Some(body_span) = h.template.span() else {
            return self.template(&h.template);
        };
        if index.is_shifted() {
            return self.template(&h.template);
        }
        let text = index.text();
        let Some(body) = text.get(body_span.clone()) else {
            return self.template(&h.template);
        };
        let opener = text[..body_span.start].rfind("<<");
        let flush_doc = opener.is_some_and(|o| text[o + 2..].starts_with('-'));
        let Ok(parsed) = terrane_hcl::parser::parse_template(body) else {
            return self.template(&h.template);
        };
        let shifted = index.shifted(body_span.start, Vec::new());
        let mut toks = Vec::new();
        flatten(&parsed, Reading::Lines, &mut toks);
        strip(&mut toks);
        if flush_doc {
            flush(&mut toks);
        }
        self.with_index(&shifted, |ev| ev.rendered(&toks))
    }

    fn read_and_render(&mut self, t: &Template, how: Reading) -> Value {
        let mut toks = Vec::new();
        flatten(t, how, &mut toks);
        strip(&mut toks);
        self.rendered(&toks)
    }

    fn rendered(&mut self, toks: &[Tok<'_>]) -> Value {
        let mut acc = Acc::default();
        self.run_tokens(toks, &mut acc);
        acc.finish()
    }

    fn run_tokens(&mut self, toks: &[Tok<'_>], acc: &mut Acc) {
        let mut i = 0;
        while i < toks.len() {
            match &toks[i] {
                Tok::Lit(l) => acc.push(l),
                Tok::Interp(e, _) => {
                    let v = self.eval(e);
                    self.interpolate(v, e.span(), acc);
                }
                Tok::If(cond, _) => {
                    let (else_at, end) = matching(toks, i);
                    let then_end = else_at.unwrap_or(end);
                    match self.directive_condition(cond, acc) {
                        Some(true) => self.run_tokens(&toks[i + 1..then_end], acc),
                        Some(false) => {
                            if let Some(e) = else_at {
                                self.run_tokens(&toks[e + 1..end], acc);
                            }
                        }
                        None => {}
                    }
                    i = end;
                }
                Tok::For(f, _) => {
                    let (_, end) = matching(toks, i);
                    if let Some(items) = self.directive_items(&f.collection_expr, acc) {
                        let depth = self.locals.len();
                        for (k, v) in items {
                            if let Some(kv) = &f.key_var {
                                self.locals.push((kv.as_str().to_string(), k));
                            }
                            self.locals.push((f.value_var.as_str().to_string(), v));
                            self.run_tokens(&toks[i + 1..end], acc);
                            self.locals.truncate(depth);
                        }
                    }
                    i = end;
                }
                Tok::Else(_) | Tok::EndIf(_) | Tok::EndFor(_) => {}
            }
            i += 1;
        }
    }

    /// An `%{if}` condition: `None` when unknown or invalid (the result
    /// is then unknown).
    pub(crate) fn directive_condition(
        &mut self,
        cond: &terrane_hcl::expr::Expression,
        acc: &mut Acc,
    ) -> Option<bool> {
        let c = self.eval(cond);
        acc.sensitive |= c.deep_marks();
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
        coll_expr: &terrane_hcl::expr::Expression,
        acc: &mut Acc,
    ) -> Option<Vec<(Value, Value)>> {
        let coll = self.eval(coll_expr);
        acc.sensitive |= coll.marks();
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
        acc.sensitive |= v.deep_marks();
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
