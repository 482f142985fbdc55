//! One shape for a body of either syntax: attributes and blocks with byte
//! spans into their file. Native files (`.tf`) convert directly; JSON files
//! (`.tf.json`) convert guided by which names are blocks (see `json`). The
//! decoder then reads both the same way, so both give the same model and
//! the same diagnostics.

use crate::diag::{Diagnostic, LineIndex};
use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;
use terrane_hcl::expr::Expression;
use terrane_hcl::structure::{BlockLabel, Body, Structure};
use terrane_hcl::Span;

pub(crate) type Span_ = Option<Range<usize>>;

pub(crate) struct GAttr {
    pub name: String,
    /// The whole attribute (`name = value`).
    pub span: Span_,
    pub name_span: Span_,
    pub value: Expression,
    /// The index `value`'s spans are relative to (shifted for JSON).
    pub index: Arc<LineIndex>,
    /// The index of the file `span` and `name_span` are in (an override
    /// file's arguments are merged into another file's body).
    pub file: Arc<LineIndex>,
}

pub(crate) struct GBlock {
    pub ty: String,
    pub ty_span: Span_,
    pub labels: Vec<(String, Span_)>,
    pub body: GBody,
    pub span: Span_,
    /// From the opening brace to the end (where Terraform reports missing
    /// arguments and blocks).
    pub body_span: Span_,
    /// The native block as written, for blocks nested in a top-level block
    /// (what `Resource::blocks` keeps).
    pub raw: Option<terrane_hcl::structure::Block>,
    /// The file the block is in (an override file's blocks are merged
    /// into another file's body and keep their own positions).
    pub index: Arc<LineIndex>,
}

#[derive(Default)]
pub(crate) struct GBody {
    pub attrs: Vec<GAttr>,
    pub blocks: Vec<GBlock>,
}

impl GBody {
    pub fn take(&mut self, name: &str) -> Option<GAttr> {
        let i = self.attrs.iter().position(|a| a.name == name)?;
        Some(self.attrs.remove(i))
    }
}

/// Converts a native body, reporting arguments set twice with Terraform's
/// "Attribute redefined" (only the first definition is kept).
pub(crate) fn from_hcl(
    body: Body,
    index: &Arc<LineIndex>,
    depth: usize,
    diags: &mut Vec<Diagnostic>,
) -> GBody {
    let mut out = GBody::default();
    // The names set so far are those of `out.attrs` (a repeat is not
    // kept): scanned while they are few, hashed past that.
    let mut seen: Option<HashMap<String, Span_>> = None;
    for s in body {
        match s {
            Structure::Attribute(a) => {
                let name = a.key.as_str();
                let first = match &seen {
                    Some(seen) => seen.get(name),
                    None => out
                        .attrs
                        .iter()
                        .find(|g| g.name == name)
                        .map(|g| &g.name_span),
                };
                if let Some(first) = first {
                    let at = index
                        .range(first.clone())
                        .map(|r| {
                            format!("{}:{},{}-{}", r.file, r.start.line, r.start.col, r.end.col)
                        })
                        .unwrap_or_default();
                    diags.push(Diagnostic::error(
                        "Attribute redefined",
                        format!("The argument {name:?} was already set at {at}. Each argument may be set only once."),
                        index.range(a.key.span()),
                    ));
                    continue;
                }
                let name = name.to_string();
                if let Some(seen) = &mut seen {
                    seen.insert(name.clone(), a.key.span());
                } else if out.attrs.len() >= 8 {
                    seen = Some(
                        out.attrs
                            .iter()
                            .map(|g| (g.name.clone(), g.name_span.clone()))
                            .chain([(name.clone(), a.key.span())])
                            .collect(),
                    );
                }
                let (span, name_span) = (a.span(), a.key.span());
                out.attrs.push(GAttr {
                    name,
                    span,
                    name_span,
                    value: a.value,
                    index: index.clone(),
                    file: index.clone(),
                });
            }
            Structure::Block(mut b) => {
                let span = b.span();
                let head_end = b
                    .labels
                    .last()
                    .and_then(|l| l.span())
                    .or(b.ident.span())
                    .map(|r| r.end);
                let body_span = match (head_end, &span) {
                    (Some(h), Some(s)) => index
                        .text()
                        .get(h..s.end)
                        .and_then(|t| t.find('{'))
                        .map(|o| h + o..s.end),
                    _ => None,
                };
                let raw = (depth == 1).then(|| b.clone());
                let labels = std::mem::take(&mut b.labels)
                    .into_iter()
                    .map(|l| {
                        let at = l.span();
                        let s = match l {
                            BlockLabel::Ident(i) => i.as_str().to_string(),
                            BlockLabel::String(s) => s.into_value(),
                        };
                        (s, at)
                    })
                    .collect();
                out.blocks.push(GBlock {
                    body_span: body_span.or(span.clone()),
                    ty: b.ident.as_str().to_string(),
                    ty_span: b.ident.span(),
                    labels,
                    body: from_hcl(b.body, index, depth + 1, diags),
                    span,
                    raw,
                    index: index.clone(),
                });
            }
        }
    }
    out
}

/// The header of a block: its type name to its last label (Terraform's
/// `DefRange`); in JSON syntax, the opening brace of the block's object.
pub(crate) fn def_span(b: &GBlock, json: bool) -> Span_ {
    if json {
        return b.body_span.as_ref().map(|s| s.start..s.start + 1);
    }
    let start = b.ty_span.as_ref()?.start;
    let end = b
        .labels
        .last()
        .and_then(|(_, s)| s.as_ref().map(|s| s.end))
        .or(b.ty_span.as_ref().map(|s| s.end))?;
    Some(start..end)
}
