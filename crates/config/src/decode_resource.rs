//! `resource` and `data` bodies: meta-arguments, `lifecycle`, and the
//! nested blocks as a structure ([`NestedBlock`]), `dynamic` blocks with
//! their iterator name bound in their content.

use crate::decode::Cx;
use crate::diag::{Diagnostic, SourceRange};
use crate::model::*;
use crate::refs::Subject;
use crate::source::{GAttr, GBlock, GBody};
use std::collections::BTreeMap;
use terrane_hcl::expr::Expression;
use terrane_hcl::Span;

impl Cx<'_> {
    /// Terraform's load-time checks of an `action_trigger` block: its
    /// required arguments, each event a known keyword (the destroy events
    /// are refused, as Terraform 1.15 refuses them), no event twice.
    fn action_trigger_checks(&mut self, b: &GBlock) {
        let brace = b.body_span.as_ref().map(|s| s.start..s.start + 1);
        let mut events = 0;
        let mut actions = 0;
        for name in ["events", "actions"] {
            if !b.body.attrs.iter().any(|a| a.name == name) {
                self.missing_arg(name, brace.clone());
            }
        }
        for a in &b.body.attrs {
            match (a.name.as_str(), &a.value) {
                ("events", Expression::Array(items)) => {
                    let mut seen: Vec<String> = Vec::new();
                    for item in items.iter() {
                        let word = match item {
                            Expression::Variable(v) => v.as_str().to_string(),
                            _ => String::new(),
                        };
                        let range = a.index.range(item.span());
                        let known = [
                            "before_create",
                            "after_create",
                            "before_update",
                            "after_update",
                        ];
                        if !known.contains(&word.as_str()) {
                            self.diags.push(Diagnostic::error(
                                format!("Invalid \"event\" value {word}"),
                                "The \"event\" argument supports the following values: before_create, after_create, before_update, after_update.",
                                range,
                            ));
                        } else if seen.contains(&word) {
                            self.diags.push(Diagnostic::error(
                                format!("Duplicate {word:?} event"),
                                "The event is already defined in this action_trigger block.",
                                range,
                            ));
                        } else {
                            seen.push(word);
                            events += 1;
                        }
                    }
                }
                ("actions", Expression::Array(items)) => actions += items.iter().count(),
                ("events" | "actions" | "condition", _) => {}
                _ => self.unsupported_arg(a),
            }
        }
        let def = crate::source::def_span(b, self.json);
        if actions == 0 {
            self.error(
                "No actions specified",
                "At least one action must be specified for an action_trigger.".into(),
                def.clone(),
            );
        }
        if events == 0 {
            self.error(
                "No events specified",
                "At least one event must be specified for an action_trigger.".into(),
                def,
            );
        }
    }

    pub fn resource(
        &mut self,
        data: bool,
        ty: String,
        name: String,
        range: Option<SourceRange>,
        b: GBlock,
    ) -> Resource {
        let mut r = Resource {
            data,
            ty,
            name,
            range,
            count: None,
            for_each: None,
            provider: None,
            provider_ref: None,
            depends_on: None,
            lifecycle: Lifecycle::default(),
            attributes: BTreeMap::new(),
            blocks: Vec::new(),
            body: Vec::new(),
            from_json: self.json,
            provisioners: Vec::new(),
            connection: None,
        };
        let mut count_seen = false;
        for a in b.body.attrs {
            match a.name.as_str() {
                "count" => {
                    count_seen = true;
                    if r.for_each.is_some() {
                        self.count_and_for_each(a.span.clone());
                    }
                    r.count = Some(Box::new(self.expr(a)));
                }
                "for_each" => {
                    if count_seen {
                        self.count_and_for_each(a.span.clone());
                    }
                    r.for_each = Some(Box::new(self.expr(a)));
                }
                "provider" => {
                    r.provider_ref = self.provider_ref(&a);
                    // A provider configuration, not a value reference.
                    r.provider = Some(Box::new(self.expr_no_refs(a)));
                }
                "depends_on" => r.depends_on = Some(Box::new(self.depends_on(a))),
                k => {
                    let k = k.to_string();
                    let e = self.expr(a);
                    r.attributes.insert(k, e);
                }
            }
        }
        let mut lifecycle_seen = false;
        for blk in b.body.blocks {
            if blk.ty == "lifecycle" {
                if lifecycle_seen {
                    self.error(
                        "Duplicate lifecycle block",
                        "The lifecycle block may appear only once per resource.".into(),
                        blk.span.clone(),
                    );
                    continue;
                }
                lifecycle_seen = true;
                self.labels_none(&blk);
                self.lifecycle(&mut r.lifecycle, data, blk.body);
                continue;
            }
            let Some(mut blk) = self.resource_meta_block(&mut r, blk) else {
                continue;
            };
            if let Some(raw) = blk.raw.take() {
                r.blocks.push(raw);
            }
            if let Some(nb) = self.nested_block(blk) {
                r.body.push(nb);
            }
        }
        self.condition_self_refs(&r);
        self.connection_destroy_refs(&r);
        r
    }

    fn labels_none(&mut self, b: &GBlock) {
        if let Some((_, span)) = b.labels.first() {
            self.error(
                "Extraneous label for block",
                format!("No labels are expected for {} blocks.", b.ty),
                span.clone(),
            );
        }
    }

    fn lifecycle(&mut self, l: &mut Lifecycle, data: bool, body: GBody) {
        for a in body.attrs {
            match (a.name.as_str(), data) {
                ("create_before_destroy", false) => {
                    let _ = self.constant_bool(&a);
                    l.create_before_destroy = Some(Box::new(self.expr(a)))
                }
                ("prevent_destroy", false) => {
                    let _ = self.constant_bool(&a);
                    l.prevent_destroy = Some(Box::new(self.expr(a)))
                }
                // Attribute names of this resource, not references.
                ("ignore_changes", false) => {
                    self.ignore_changes_form(&a);
                    l.ignore_changes = Some(Box::new(self.expr_no_refs(a)));
                }
                ("replace_triggered_by", false) => {
                    l.replace_triggered_by_entries = self.replace_triggered_by(&a);
                    l.replace_triggered_by = Some(Box::new(self.expr(a)));
                }
                (
                    "create_before_destroy" | "prevent_destroy" | "ignore_changes"
                    | "replace_triggered_by",
                    true,
                ) => self.error(
                    "Invalid data resource lifecycle argument",
                    format!("The lifecycle argument {:?} is defined only for managed resources (\"resource\" blocks), and is not valid for data resources.", a.name),
                    a.name_span.clone(),
                ),
                _ => self.unsupported_arg(&a),
            }
        }
        for b in body.blocks {
            match b.ty.as_str() {
                "precondition" => l.preconditions.push(self.check_rule(b, "precondition")),
                "postcondition" => l.postconditions.push(self.check_rule(b, "postcondition")),
                // Terraform 1.14's action triggers: refused by name, never
                // ignored, until terrane runs actions.
                "action_trigger" => {
                    self.action_trigger_checks(&b);
                    self.error(
                        "Action triggers are not supported yet",
                        "terrane does not run Terraform's actions (Terraform 1.14) yet, so this resource's action_trigger block cannot be honoured. Remove it, or run this configuration with Terraform.".into(),
                        crate::source::def_span(&b, self.json),
                    )
                }
                _ => self.unsupported_block(&b),
            }
        }
    }

    fn replace_triggered_by(&mut self, a: &GAttr) -> Vec<Expr> {
        let Expression::Array(items) = &a.value else {
            self.diags.push(Diagnostic::error(
                "Invalid expression",
                "A static list expression is required.",
                a.index.range(a.value.span()),
            ));
            return Vec::new();
        };
        let mut out = Vec::new();
        for item in items.iter() {
            let g = GAttr {
                name: a.name.clone(),
                span: None,
                name_span: None,
                value: item.clone(),
                index: a.index.clone(),
                file: a.file.clone(),
            };
            let e = self.expr(g);
            if !e
                .refs
                .iter()
                .any(|r| matches!(r.subject, Subject::Resource { data: false, .. }))
            {
                self.diags.push(Diagnostic::error(
                    "Invalid replace_triggered_by expression",
                    "Missing resource reference in replace_triggered_by expression.",
                    e.range.clone(),
                ));
            }
            out.push(e);
        }
        out
    }

    /// A nested block of a resource body: static or `dynamic`.
    pub fn nested_block(&mut self, b: GBlock) -> Option<NestedBlock> {
        if b.ty == "dynamic" {
            return self.dynamic_block(b);
        }
        let range = self.range(b.span.clone());
        let labels = b.labels.iter().map(|(l, _)| l.clone()).collect();
        let (attributes, blocks) = self.nested_body(b.body);
        Some(NestedBlock {
            type_name: b.ty,
            labels,
            range,
            attributes,
            blocks,
            dynamic: None,
        })
    }

    fn nested_body(&mut self, body: GBody) -> (BTreeMap<String, Expr>, Vec<NestedBlock>) {
        let mut attributes = BTreeMap::new();
        for a in body.attrs {
            let name = a.name.clone();
            attributes.insert(name, self.expr(a));
        }
        let blocks = body
            .blocks
            .into_iter()
            .filter_map(|b| self.nested_block(b))
            .collect();
        (attributes, blocks)
    }

    fn dynamic_block(&mut self, mut b: GBlock) -> Option<NestedBlock> {
        let range = self.range(b.span.clone());
        let type_name = match b.labels.as_slice() {
            [(l, _)] => l.clone(),
            _ => {
                self.error(
                    "Missing name for block",
                    "A dynamic block expects 1 label: the type of the blocks it generates.".into(),
                    b.span.clone(),
                );
                return None;
            }
        };
        let iterator = match b.body.take("iterator") {
            None => type_name.clone(),
            Some(a) => match &a.value {
                Expression::Variable(v) => v.as_str().to_string(),
                other => {
                    self.diags.push(Diagnostic::error(
                        "Invalid dynamic iterator name",
                        "Dynamic iterator must be a single variable name.",
                        a.index.range(other.span()),
                    ));
                    type_name.clone()
                }
            },
        };
        let for_each = match b.body.take("for_each") {
            Some(a) => {
                let e = self.expr(a);
                let bad = match &e.expr {
                    Expression::Number(_) => Some("number"),
                    Expression::Bool(_) => Some("bool"),
                    Expression::String(_) => Some("string"),
                    Expression::Null(_) => Some("null"),
                    _ => None,
                };
                if let Some(t) = bad {
                    let detail = if t == "null" {
                        "Cannot use a null value in for_each.".to_string()
                    } else {
                        format!("Cannot use a {t} value in for_each. An iterable collection is required.")
                    };
                    self.diags.push(Diagnostic::error(
                        "Invalid dynamic for_each value",
                        detail,
                        e.range.clone(),
                    ));
                }
                Some(e)
            }
            None => {
                self.missing_arg("for_each", b.body_span.clone());
                None
            }
        };
        self.bound.push(iterator.clone());
        let labels = match b.body.take("labels") {
            Some(a) => match &a.value {
                Expression::Array(items) => items
                    .iter()
                    .map(|i| {
                        let g = GAttr {
                            name: "labels".into(),
                            span: None,
                            name_span: None,
                            value: i.clone(),
                            index: a.index.clone(),
                            file: a.file.clone(),
                        };
                        self.expr(g)
                    })
                    .collect(),
                other => {
                    self.diags.push(Diagnostic::error(
                        "Invalid expression",
                        "A static list expression is required.",
                        a.index.range(other.span()),
                    ));
                    Vec::new()
                }
            },
            None => Vec::new(),
        };
        for a in &b.body.attrs {
            self.unsupported_arg(a);
        }
        let mut content = None;
        for blk in std::mem::take(&mut b.body.blocks) {
            if blk.ty == "content" && content.is_none() {
                content = Some(blk);
            } else if blk.ty == "content" {
                self.error(
                    "Duplicate content block",
                    "A dynamic block may have only one content block.".into(),
                    blk.span.clone(),
                );
            } else {
                self.unsupported_block(&blk);
            }
        }
        let (attributes, blocks) = match content {
            Some(c) => self.nested_body(c.body),
            None => {
                self.error("Missing required block", "A dynamic block must have a nested block of type \"content\" to describe the body of each generated block.".into(), b.body_span.clone());
                (BTreeMap::new(), Vec::new())
            }
        };
        self.bound.pop();
        let for_each = for_each?;
        Some(NestedBlock {
            type_name,
            labels: Vec::new(),
            range: range.clone(),
            attributes,
            blocks,
            dynamic: Some(DynamicSpec {
                for_each,
                iterator,
                labels,
                range,
            }),
        })
    }
}
