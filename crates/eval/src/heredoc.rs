//! Heredocs as HCL reads them. HCL scans a heredoc line by line, so a
//! literal is cut at every newline; a `~` strip marker trims only the piece
//! next to it (`%{~ for}` removes the indentation of its own line, not the
//! newline before it); and a flush heredoc (`<<-`) then removes the
//! smallest indentation found at the start of the lines, where a line that
//! starts with a stripped piece or with an interpolation counts as not
//! indented. hcl-edit dedents before any of this, so heredocs are re-read
//! here from their source text.

use crate::expr::Evaluator;
use hcl_edit::expr::Expression;
use hcl_edit::template::{Directive, Element, ForTemplateExpr, HeredocTemplate, Strip, Template};
use hcl_edit::Span;
use terrane_config::LineIndex;
use terrane_value::Value;

/// One token of a heredoc body, in source order.
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

fn flatten<'t>(t: &'t Template, out: &mut Vec<Tok<'t>>) {
    for el in t.iter() {
        match el {
            Element::Literal(l) => {
                for piece in l.value().split_inclusive('\n') {
                    out.push(Tok::Lit(piece.to_string()));
                }
            }
            Element::Interpolation(i) => out.push(Tok::Interp(&i.expr, i.strip)),
            Element::Directive(d) => match &**d {
                Directive::If(d) => {
                    out.push(Tok::If(&d.if_expr.cond_expr, d.if_expr.strip));
                    flatten(&d.if_expr.template, out);
                    if let Some(e) = &d.else_expr {
                        out.push(Tok::Else(e.strip));
                        flatten(&e.template, out);
                    }
                    out.push(Tok::EndIf(d.endif_expr.strip));
                }
                Directive::For(d) => {
                    out.push(Tok::For(&d.for_expr, d.for_expr.strip));
                    flatten(&d.for_expr.template, out);
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
        let Ok(parsed) = hcl_edit::parser::parse_template(body) else {
            return self.template(&h.template);
        };
        let shifted = index.shifted(body_span.start, Vec::new());
        let mut toks = Vec::new();
        flatten(&parsed, &mut toks);
        strip(&mut toks);
        if flush_doc {
            flush(&mut toks);
        }
        self.with_index(&shifted, |ev| {
            let mut acc = crate::template::Acc::default();
            ev.run_tokens(&toks, &mut acc);
            acc.finish()
        })
    }

    fn run_tokens(&mut self, toks: &[Tok<'_>], acc: &mut crate::template::Acc) {
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
}

impl Evaluator<'_> {
    /// A template file (`templatefile`): read line by line as a heredoc
    /// is, without the flush.
    pub(crate) fn template_file(&mut self, t: &Template) -> Value {
        let mut toks = Vec::new();
        flatten(t, &mut toks);
        strip(&mut toks);
        let mut acc = crate::template::Acc::default();
        self.run_tokens(&toks, &mut acc);
        acc.finish()
    }
}
