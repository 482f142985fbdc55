//! Bodies (of either syntax) into the module model: the top-level block
//! types and what Terraform checks about them before evaluation.
//! Resource bodies, nested and dynamic blocks are in `decode_resource`.

use crate::diag::{Diagnostic, LineIndex, SourceRange};
use crate::model::*;
use crate::refs::{references_bound, Subject};
use crate::source::{GAttr, GBlock, GBody, Span_};
use crate::typeexpr::{parse_type, TypeConstraint};
use std::collections::BTreeMap;
use std::sync::Arc;
use terrane_hcl::expr::{Expression, ObjectKey, TraversalOperator};
use terrane_hcl::Span;

/// The Terraform release whose words the diagnostics carry (as
/// `terrane_state::TERRAFORM_VERSION`; the validate differential compares
/// them with that release's).
const TERRAFORM_VERSION: &str = "1.15.5";

pub(crate) struct Cx<'a> {
    pub index: &'a Arc<LineIndex>,
    pub diags: &'a mut Vec<Diagnostic>,
    /// Names bound by enclosing `dynamic` blocks.
    pub bound: Vec<String>,
    pub json: bool,
}

fn valid_name(n: &str) -> bool {
    let mut c = n.chars();
    matches!(c.next(), Some(f) if f.is_alphabetic() || f == '_')
        && c.all(|c| c.is_alphanumeric() || c == '_' || c == '-')
}

/// A literal string expression's value.
pub(crate) fn literal_string(e: &Expression) -> Option<String> {
    match e {
        Expression::String(s) => Some(s.as_str().to_string()),
        Expression::StringTemplate(t)
            if t.iter()
                .all(|el| matches!(el, terrane_hcl::template::Element::Literal(_))) =>
        {
            Some(
                t.iter()
                    .filter_map(|el| match el {
                        terrane_hcl::template::Element::Literal(l) => Some(l.as_str()),
                        _ => None,
                    })
                    .collect(),
            )
        }
        _ => None,
    }
}

/// A literal value (string, number, bool, null, or a list or object of
/// them) as JSON; None for anything that needs evaluating.
pub(crate) fn literal_json(e: &Expression) -> Option<serde_json::Value> {
    use serde_json::Value as J;
    match e {
        Expression::Null(_) => Some(J::Null),
        Expression::Bool(b) => Some(J::Bool(*b.value())),
        Expression::Number(n) => serde_json::from_str(&n.value().to_string()).ok(),
        Expression::Array(a) => a
            .iter()
            .map(literal_json)
            .collect::<Option<Vec<_>>>()
            .map(J::Array),
        Expression::Object(o) => {
            let mut m = serde_json::Map::new();
            for (k, v) in o.iter() {
                let key = match k {
                    ObjectKey::Ident(i) => i.as_str().to_string(),
                    ObjectKey::Expression(e) => literal_string(e)?,
                };
                m.insert(key, literal_json(v.expr())?);
            }
            Some(J::Object(m))
        }
        other => literal_string(other).map(J::String),
    }
}

/// A static reference: a name followed by attribute access and indexing
/// with literal keys only (what `depends_on`, `moved` and `import` take).
pub(crate) fn is_static_traversal(e: &Expression) -> bool {
    match e {
        Expression::Variable(_) => true,
        Expression::Traversal(t) => {
            matches!(t.expr, Expression::Variable(_))
                && t.operators.iter().all(|o| match o.value() {
                    TraversalOperator::GetAttr(_) | TraversalOperator::LegacyIndex(_) => true,
                    TraversalOperator::Index(i) => {
                        matches!(i, Expression::Number(_) | Expression::String(_))
                    }
                    _ => false,
                })
        }
        _ => false,
    }
}

pub(crate) const STATIC_REF: &str = "A single static variable reference is required: only attribute access and indexing with constant keys. No calculations, function calls, template expressions, etc are allowed here.";

impl Cx<'_> {
    /// Terraform's load-time checks of an `action` block (Terraform 1.14):
    /// its two labels valid names, its arguments, `count` with `for_each`,
    /// one `config` block.
    fn action_checks(&mut self, b: &GBlock) {
        const BAD_NAME: &str = "A name must start with a letter or underscore and may contain only letters, digits, underscores, and dashes.";
        for ((label, span), what) in b
            .labels
            .iter()
            .zip(["Invalid action type name", "Invalid action name"])
        {
            if !valid_name(label) {
                self.error(what, BAD_NAME.into(), span.clone());
            }
        }
        let mut count = false;
        for a in &b.body.attrs {
            match a.name.as_str() {
                "count" => count = true,
                "for_each" if count => self.error(
                    "Invalid combination of \"count\" and \"for_each\"",
                    "The \"count\" and \"for_each\" meta-arguments are mutually-exclusive, only one should be used.".into(),
                    a.name_span.clone(),
                ),
                "for_each" | "provider" | "linked_resource" | "linked_resources" => {}
                _ => self.unsupported_arg(a),
            }
        }
        let mut config = false;
        for blk in &b.body.blocks {
            match blk.ty.as_str() {
                "config" if config => self.error(
                    "Duplicate config block",
                    "An action must contain only one nested \"config\" block.".into(),
                    crate::source::def_span(blk, self.json),
                ),
                "config" => config = true,
                _ => self.unsupported_block(blk),
            }
        }
    }

    pub fn error(&mut self, summary: &str, detail: String, span: Span_) {
        let range = self.index.range(span);
        self.diags.push(Diagnostic::error(summary, detail, range));
    }

    pub fn range(&self, span: Span_) -> Option<SourceRange> {
        self.index.range(span)
    }

    pub fn expr(&mut self, a: GAttr) -> Expr {
        let (refs, d) = references_bound(&a.value, &a.index, &self.bound);
        self.diags.extend(d);
        Expr {
            range: a.index.range(a.value.span()),
            expr: a.value,
            refs,
            index: a.index,
        }
    }

    /// Type constraints and attribute paths are keywords, not references.
    pub fn expr_no_refs(&mut self, a: GAttr) -> Expr {
        Expr {
            range: a.index.range(a.value.span()),
            expr: a.value,
            refs: Vec::new(),
            index: a.index,
        }
    }

    pub fn unsupported_arg(&mut self, a: &GAttr) {
        let range = a.file.range(a.name_span.clone());
        // JSON syntax words it as Terraform's JSON decoder does.
        let (summary, msg) = if a.file.file().ends_with(".json") {
            (
                "Extraneous JSON object property",
                format!("No argument or block type is named {:?}.", a.name),
            )
        } else {
            (
                "Unsupported argument",
                format!("An argument named {:?} is not expected here.", a.name),
            )
        };
        self.diags.push(Diagnostic::error(summary, msg, range));
    }

    pub fn unsupported_block(&mut self, b: &GBlock) {
        let msg = format!("Blocks of type {:?} are not expected here.", b.ty);
        let range = b.index.range(b.ty_span.clone());
        self.diags
            .push(Diagnostic::error("Unsupported block type", msg, range));
    }

    pub fn missing_arg(&mut self, name: &str, span: Span_) {
        self.error(
            "Missing required argument",
            format!("The argument {name:?} is required, but no definition was found."),
            span,
        );
    }

    fn labels(&mut self, b: &GBlock, want: usize) -> Option<Vec<String>> {
        self.labels_valid(b, want)
            .then(|| b.labels.iter().map(|(l, _)| l.clone()).collect())
    }

    /// Whether `b` has `want` labels, each a valid name (else the error).
    fn labels_valid(&mut self, b: &GBlock, want: usize) -> bool {
        if b.labels.len() != want {
            let names = match want {
                2 => "type, name",
                _ => "name",
            };
            let plural = if want == 1 { "label" } else { "labels" };
            if b.labels.len() > want {
                let span = b
                    .labels
                    .get(want)
                    .and_then(|l| l.1.clone())
                    .or(b.span.clone());
                let detail = if want == 0 {
                    format!("No labels are expected for {} blocks.", b.ty)
                } else {
                    format!(
                        "Only {want} {plural} ({names}) are expected for {} blocks.",
                        b.ty
                    )
                };
                self.error(&format!("Extraneous label for {}", b.ty), detail, span);
            } else {
                let detail = format!("All {} blocks must have {want} {plural} ({names}).", b.ty);
                self.error(
                    &format!("Missing name for {}", b.ty),
                    detail,
                    b.body_span.clone(),
                );
            }
            return false;
        }
        for (l, span) in &b.labels {
            if !valid_name(l) {
                self.error("Invalid name", format!("{l:?} is not a valid name: names must start with a letter or underscore and contain only letters, digits, underscores and dashes."), span.clone());
                return false;
            }
        }
        true
    }

    /// A string argument Terraform evaluates with no variables and no
    /// functions (`source`, `version`, `description`, `alias`,
    /// `required_version`): heredocs and constant templates are fine.
    fn string_attr(&mut self, a: &GAttr) -> Option<String> {
        match crate::constant::const_string(&a.value, &a.index) {
            Ok(s) => Some(s),
            Err(d) => {
                self.diags.extend(d);
                None
            }
        }
    }

    fn bool_attr(&mut self, a: &GAttr) -> Option<bool> {
        self.constant_bool(a)
    }

    pub fn file(&mut self, module: &mut Module, body: GBody) {
        if let Some(a) = body.attrs.first() {
            self.unsupported_arg(a);
        }
        for b in body.blocks {
            self.block(module, b);
        }
    }

    fn block(&mut self, module: &mut Module, mut b: GBlock) {
        let kind = b.ty.clone();
        let range = self.range(b.span.clone());
        match kind.as_str() {
            "resource" | "data" => {
                if !self.labels_valid(&b, 2) {
                    return;
                }
                let data = kind == "data";
                // The body is read (and checked) even when the name is taken.
                let decl = self.range(crate::source::def_span(&b, self.json));
                let mut labels = std::mem::take(&mut b.labels).into_iter().map(|(l, _)| l);
                let (ty, name) = (labels.next(), labels.next());
                let (ty, name) = (ty.unwrap_or_default(), name.unwrap_or_default());
                let r = self.resource(data, ty, name, range, b);
                if !self.duplicate_resource(module, &r, &decl) {
                    module.push_resource(r, decl);
                }
            }
            "ephemeral" => {
                let bad: Vec<_> = b
                    .labels
                    .iter()
                    .zip(["type", "name"])
                    .filter(|((l, _), _)| !valid_name(l))
                    .map(|((_, span), what)| (what, span.clone()))
                    .collect();
                if b.labels.len() == 2 && !bad.is_empty() {
                    for (what, span) in bad {
                        self.error(
                            &format!("Invalid ephemeral resource {what}"),
                            "A name must start with a letter or underscore and may contain only letters, digits, underscores, and dashes.".into(),
                            span,
                        );
                    }
                    return;
                }
                let Some(l) = self.labels(&b, 2) else { return };
                if let Some(prev) = module
                    .ephemeral_resources
                    .iter()
                    .find(|r| r.ty == l[0] && r.name == l[1])
                {
                    let at = prev
                        .range
                        .as_ref()
                        .map(|r| format!(" (first declared at {r})"))
                        .unwrap_or_default();
                    return self.error(
                        "Duplicate ephemeral resource",
                        format!(
                            "An ephemeral resource {:?} named {:?} was already declared{at}.",
                            l[0], l[1]
                        ),
                        b.span.clone(),
                    );
                }
                self.ephemeral_lifecycle(&mut b.body);
                let r = self.resource(false, l[0].clone(), l[1].clone(), range, b);
                module.ephemeral_resources.push(r);
            }
            "variable" => {
                let Some(l) = self.labels(&b, 1) else { return };
                if module.variables.contains_key(&l[0]) {
                    return self.error(
                        "Duplicate variable declaration",
                        format!("A variable named {:?} was already declared.", l[0]),
                        b.span.clone(),
                    );
                }
                let v = self.variable(&l[0], range, b);
                module.variables.insert(l[0].clone(), v);
            }
            "output" => {
                let Some(l) = self.labels(&b, 1) else { return };
                if module.outputs.contains_key(&l[0]) {
                    return self.error(
                        "Duplicate output definition",
                        format!("An output named {:?} was already defined.", l[0]),
                        b.span.clone(),
                    );
                }
                let o = self.output(&l[0], range, b);
                module.outputs.insert(l[0].clone(), o);
            }
            "locals" => {
                self.labels(&b, 0);
                for blk in &b.body.blocks {
                    self.unsupported_block(blk);
                }
                for a in b.body.attrs {
                    if module.locals.contains_key(&a.name) {
                        self.error(
                            "Duplicate local value definition",
                            format!("A local value named {:?} was already defined.", a.name),
                            a.span.clone(),
                        );
                        continue;
                    }
                    let name = a.name.clone();
                    let e = self.expr(a);
                    module.locals.insert(name, e);
                }
            }
            "provider" => {
                let Some(l) = self.labels(&b, 1) else { return };
                if !self.provider_block_ok(&l[0], &b) {
                    return;
                }
                let mut attributes = BTreeMap::new();
                let mut alias = None;
                let mut for_each = None;
                for a in b.body.attrs {
                    if a.name == "alias" {
                        alias = self.string_attr(&a);
                    } else if a.name == "for_each" {
                        for_each = Some(self.expr(a));
                    } else {
                        let name = a.name.clone();
                        attributes.insert(name, self.expr(a));
                    }
                }
                if module
                    .providers
                    .iter()
                    .any(|p| p.name == l[0] && p.alias == alias)
                {
                    let which = alias
                        .as_ref()
                        .map(|a| format!("{}.{a}", l[0]))
                        .unwrap_or_else(|| l[0].clone());
                    return self.error(
                        "Duplicate provider configuration",
                        format!("A provider configuration for {which:?} was already given."),
                        b.span.clone(),
                    );
                }
                if let (None, Some(f)) = (&alias, &for_each) {
                    // OpenTofu's diagnostic (Terraform refuses `for_each`
                    // here as a reserved name).
                    self.diags.push(Diagnostic::error(
                        "Alias required when using \"for_each\"",
                        "The for_each argument is allowed only for provider configurations with an alias.",
                        f.range.clone(),
                    ));
                }
                let body_start = b.body_span.as_ref().map(|r| r.start);
                let (mut blocks, mut body) = (Vec::new(), Vec::new());
                for blk in b.body.blocks {
                    if let Some(raw) = &blk.raw {
                        blocks.push(raw.clone());
                    }
                    if let Some(nb) = self.nested_block(blk) {
                        body.push(nb);
                    }
                }
                module.providers.push(ProviderConfig {
                    name: l[0].clone(),
                    alias,
                    range,
                    for_each,
                    attributes,
                    blocks,
                    body,
                    index: self.index.clone(),
                    body_start,
                });
            }
            "module" => {
                let Some(l) = self.labels(&b, 1) else { return };
                let call = self.module_call(&l[0], range, b);
                if module.module_calls.contains_key(&l[0]) {
                    let span = call.range.clone();
                    self.diags.push(Diagnostic::error(
                        "Duplicate module call",
                        format!("A module call named {:?} was already defined.", l[0]),
                        span,
                    ));
                    return;
                }
                module.module_calls.insert(l[0].clone(), call);
            }
            "terraform" => {
                self.labels(&b, 0);
                self.terraform(module, b.body)
            }
            "moved" => {
                module.other_blocks.push((kind, range.clone()));
                if self.labels(&b, 0).is_none() {
                    return;
                }
                let from = self.address(&mut b, "from");
                let to = self.address(&mut b, "to");
                self.rest_unsupported(&b.body);
                module.moved.push(Moved {
                    from_addr: from.as_ref().map(addr_text),
                    to_addr: to.as_ref().map(addr_text),
                    from,
                    to,
                    range,
                });
            }
            "import" => {
                module.other_blocks.push((kind, range.clone()));
                if self.labels(&b, 0).is_none() {
                    return;
                }
                let for_each = b.body.take("for_each").map(|a| self.expr(a));
                let to = if for_each.is_some() {
                    self.address_indexed(&mut b, "to")
                } else {
                    self.address(&mut b, "to")
                };
                let id = b.body.take("id").map(|a| self.expr(a));
                let provider = b.body.take("provider").and_then(|a| self.provider_ref(&a));
                if b.body.take("identity").is_none() && id.is_none() {
                    self.error(
                        "Invalid import block",
                        "At least one of 'id' or 'identity' must be specified.".into(),
                        b.span.clone(),
                    );
                }
                self.rest_unsupported(&b.body);
                module.imports.push(Import {
                    to_addr: to.as_ref().map(addr_text),
                    to,
                    id,
                    provider,
                    for_each,
                    range,
                });
            }
            "removed" => {
                module.other_blocks.push((kind, range.clone()));
                if self.labels(&b, 0).is_none() {
                    return;
                }
                let from = self.address(&mut b, "from");
                let mut destroy = true;
                let (mut provisioners, mut connection) = (Vec::new(), None);
                for blk in std::mem::take(&mut b.body.blocks) {
                    match blk.ty.as_str() {
                        "lifecycle" => {
                            for a in &blk.body.attrs {
                                match a.name.as_str() {
                                    "destroy" => destroy = self.bool_attr(a).unwrap_or(true),
                                    _ => self.unsupported_arg(a),
                                }
                            }
                            for nb in &blk.body.blocks {
                                self.unsupported_block(nb);
                            }
                        }
                        "provisioner" | "connection" => {
                            self.removed_meta_block(&mut provisioners, &mut connection, blk)
                        }
                        _ => self.unsupported_block(&blk),
                    }
                }
                self.rest_unsupported(&b.body);
                module.removed.push(Removed {
                    from_addr: from.as_ref().map(addr_text),
                    from,
                    destroy,
                    range,
                    provisioners,
                    connection,
                });
            }
            "check" => {
                module.other_blocks.push((kind, range.clone()));
                let Some(l) = self.labels(&b, 1) else { return };
                let c = self.check(&l[0], range, b);
                module.checks.push(c);
            }
            "required_providers" => self.error(
                "Invalid required_providers block",
                "A \"required_providers\" block must be nested inside a \"terraform\" block."
                    .into(),
                crate::source::def_span(&b, self.json),
            ),
            // Terraform 1.14's actions: refused by name, never ignored,
            // until terrane runs them.
            "action" => {
                self.action_checks(&b);
                let name: Vec<&str> = b.labels.iter().map(|l| l.0.as_str()).collect();
                self.error(
                    "Actions are not supported yet",
                    format!("terrane does not run Terraform's actions (Terraform 1.14) yet, so action.{} cannot be loaded. Remove it, or run this configuration with Terraform.", name.join(".")),
                    crate::source::def_span(&b, self.json),
                )
            }
            other => self.error(
                "Unsupported block type",
                format!("Blocks of type {other:?} are not expected here."),
                b.ty_span.clone(),
            ),
        }
    }

    /// An ephemeral resource's `lifecycle` takes only pre- and
    /// postconditions: the managed-resource arguments are reported as
    /// Terraform reports them and dropped.
    fn ephemeral_lifecycle(&mut self, body: &mut GBody) {
        for blk in body.blocks.iter_mut().filter(|b| b.ty == "lifecycle") {
            let (bad, keep): (Vec<_>, Vec<_>) = std::mem::take(&mut blk.body.attrs)
                .into_iter()
                .partition(|a| {
                    matches!(
                        a.name.as_str(),
                        "create_before_destroy"
                            | "prevent_destroy"
                            | "ignore_changes"
                            | "replace_triggered_by"
                    )
                });
            blk.body.attrs = keep;
            for a in bad {
                self.error(
                    "Invalid ephemeral resource lifecycle argument",
                    format!("The lifecycle argument {:?} is defined only for managed resources (\"resource\" blocks), and is not valid for ephemeral resources.", a.name),
                    a.name_span.clone(),
                );
            }
        }
    }

    fn rest_unsupported(&mut self, body: &GBody) {
        for a in &body.attrs {
            self.unsupported_arg(a);
        }
        for b in &body.blocks {
            self.unsupported_block(b);
        }
    }

    /// `import { for_each, to = a.b[each.key] }`: index keys may be
    /// expressions.
    fn address_indexed(&mut self, b: &mut GBlock, name: &str) -> Option<Expr> {
        let Some(a) = b.body.take(name) else {
            self.missing_arg(name, b.body_span.clone());
            return None;
        };
        let ok = match &a.value {
            Expression::Variable(_) => true,
            Expression::Traversal(t) => {
                matches!(t.expr, Expression::Variable(_))
                    && t.operators.iter().all(|o| {
                        matches!(
                            o.value(),
                            TraversalOperator::GetAttr(_)
                                | TraversalOperator::Index(_)
                                | TraversalOperator::LegacyIndex(_)
                        )
                    })
            }
            _ => false,
        };
        if !ok {
            let r = a.index.range(a.value.span());
            self.diags
                .push(Diagnostic::error("Invalid expression", STATIC_REF, r));
            return None;
        }
        Some(self.expr(a))
    }

    /// A required static address (`moved.from`, `import.to`, ...).
    fn address(&mut self, b: &mut GBlock, name: &str) -> Option<Expr> {
        let Some(a) = b.body.take(name) else {
            self.missing_arg(name, b.body_span.clone());
            return None;
        };
        if !is_static_traversal(&a.value) {
            let r = a.index.range(a.value.span());
            self.diags
                .push(Diagnostic::error("Invalid expression", STATIC_REF, r));
            return None;
        }
        Some(self.expr(a))
    }

    /// `condition` + `error_message` blocks; `what` names the block kind in
    /// Terraform's "Invalid ... expression".
    pub fn check_rule(&mut self, mut b: GBlock, what: &str) -> CheckRule {
        self.labels(&b, 0);
        let range = self.range(b.span.clone());
        let condition = b.body.take("condition").map(|a| self.expr(a));
        let error_message = b.body.take("error_message").map(|a| self.expr(a));
        if condition.is_none() {
            self.missing_arg("condition", b.body_span.clone());
        }
        if error_message.is_none() {
            self.missing_arg("error_message", b.body_span.clone());
        }
        if let Some(c) = &condition {
            if c.refs.is_empty() {
                self.diags.push(Diagnostic::error(
                    format!("Invalid {what} expression"),
                    "The condition expression must refer to at least one object from elsewhere in the configuration, or else its result would not be checking anything.",
                    c.range.clone(),
                ));
            }
        }
        self.rest_unsupported(&b.body);
        CheckRule {
            condition,
            error_message,
            range,
        }
    }

    fn variable(&mut self, name: &str, range: Option<SourceRange>, body: GBlock) -> Variable {
        let mut v = Variable {
            name: name.into(),
            range,
            ty: None,
            constraint: None,
            default: None,
            sensitive: false,
            nullable: true,
            description: None,
            ephemeral: false,
            constant: false,
            deprecated: None,
            validations: Vec::new(),
        };
        for a in body.body.attrs {
            match a.name.as_str() {
                "type" if quoted_type(&a, self.json).is_some() => {
                    if let Some(d) = quoted_type(&a, self.json) {
                        self.diags.push(d);
                    }
                    v.ty = Some(self.expr_no_refs(a));
                }
                "type" => {
                    match legacy_type(&a.value)
                        .map(Ok)
                        .unwrap_or_else(|| parse_type(&a.value, &a.index))
                    {
                        Ok(tc) => v.constraint = Some(tc),
                        Err(d) => self.diags.push(d),
                    }
                    v.ty = Some(self.expr_no_refs(a));
                }
                "const" => v.constant = self.bool_attr(&a).unwrap_or(false),
                "deprecated" => v.deprecated = self.string_attr(&a),
                "default" => v.default = Some(self.expr(a)),
                "sensitive" => v.sensitive = self.bool_attr(&a).unwrap_or(false),
                "nullable" => v.nullable = self.bool_attr(&a).unwrap_or(true),
                "ephemeral" => v.ephemeral = self.bool_attr(&a).unwrap_or(false),
                "description" => v.description = self.string_attr(&a),
                _ => self.unsupported_arg(&a),
            }
        }
        if v.constant {
            for (set, what) in [(v.sensitive, "sensitive"), (v.ephemeral, "ephemeral")] {
                if set {
                    self.diags.push(Diagnostic::error(
                        format!("Const variable cannot be {what}"),
                        format!("A variable that is marked as \"const\" cannot also be marked as \"{what}\"."),
                        v.range.clone(),
                    ));
                }
            }
        }
        for b in body.body.blocks {
            if b.ty != "validation" {
                self.unsupported_block(&b);
                continue;
            }
            let rule = self.check_rule(b, "validation");
            if let Some(c) = &rule.condition {
                // A condition with no references at all gets this error
                // too (after the generic one), as in Terraform.
                if !c
                    .refs
                    .iter()
                    .any(|r| r.subject == Subject::Var(name.to_string()))
                {
                    self.diags.push(Diagnostic::error(
                        "Invalid variable validation condition",
                        format!("The condition for variable {name:?} must refer to var.{name} in order to test incoming values."),
                        c.range.clone(),
                    ));
                }
            }
            v.validations.push(rule);
        }
        self.variable_default(&v);
        v
    }

    fn output(&mut self, name: &str, range: Option<SourceRange>, mut b: GBlock) -> Output {
        let value = b.body.take("value").map(|a| self.expr(a));
        if value.is_none() {
            self.missing_arg("value", b.body_span.clone());
        }
        let mut o = Output {
            name: name.into(),
            range,
            value,
            sensitive: false,
            depends_on: None,
            description: None,
            ephemeral: false,
            deprecated: None,
            deprecated_range: None,
            preconditions: Vec::new(),
            ty: None,
            constraint: None,
        };
        for a in std::mem::take(&mut b.body.attrs) {
            match a.name.as_str() {
                "type" => {
                    match parse_type(&a.value, &a.index) {
                        Ok(tc) => o.constraint = Some(tc),
                        Err(d) => self.diags.push(d),
                    }
                    o.ty = Some(self.expr_no_refs(a));
                }
                "sensitive" => o.sensitive = self.bool_attr(&a).unwrap_or(false),
                "ephemeral" => o.ephemeral = self.bool_attr(&a).unwrap_or(false),
                "description" => o.description = self.string_attr(&a),
                "deprecated" => {
                    o.deprecated = self.string_attr(&a);
                    o.deprecated_range = self.range(a.span.clone());
                }
                "depends_on" => o.depends_on = Some(self.depends_on(a)),
                _ => self.unsupported_arg(&a),
            }
        }
        for blk in b.body.blocks {
            if blk.ty == "precondition" {
                o.preconditions.push(self.check_rule(blk, "precondition"));
            } else {
                self.unsupported_block(&blk);
            }
        }
        o
    }

    /// `depends_on = [ref, ...]`: every entry a static reference.
    pub fn depends_on(&mut self, a: GAttr) -> Expr {
        match &a.value {
            Expression::Array(items) => {
                for item in items.iter() {
                    if let Expression::String(_) = item {
                        if !self.json {
                            self.diags.push(Diagnostic::warning(
                                "Quoted references are deprecated",
                                "In this context, references are expected literally rather than in quotes. Terraform 0.11 and earlier required quotes, but quoted references are now deprecated and will be removed in a future version of Terraform. Remove the quotes surrounding this reference to silence this warning.",
                                a.index.range(item.span()),
                            ));
                            continue;
                        }
                    }
                    if !is_static_traversal(item) {
                        self.diags.push(Diagnostic::error(
                            "Invalid expression",
                            STATIC_REF,
                            a.index.range(item.span()),
                        ));
                    }
                }
            }
            other => self.diags.push(Diagnostic::error(
                "Invalid expression",
                "A static list expression is required.",
                a.index.range(other.span()),
            )),
        }
        self.expr(a)
    }

    /// `provider = name` or `provider = name.alias`.
    pub fn provider_ref(&mut self, a: &GAttr) -> Option<ProviderRef> {
        let range = a.index.range(a.value.span());
        let mut key = None;
        let parsed = match &a.value {
            Expression::Variable(v) => Some((v.as_str().to_string(), None)),
            Expression::Traversal(t) => match (&t.expr, t.operators.as_slice()) {
                (Expression::Variable(v), [op]) => match op.value() {
                    TraversalOperator::GetAttr(alias) => {
                        Some((v.as_str().to_string(), Some(alias.as_str().to_string())))
                    }
                    TraversalOperator::Index(_) => {
                        // OpenTofu's wording: a key needs an alias.
                        self.diags.push(Diagnostic::error(
                            "Invalid provider configuration reference",
                            "Provider assignment requires an alias when specifying an instance key, in the form of provider.name[instance_key]",
                            range.clone(),
                        ));
                        return None;
                    }
                    _ => None,
                },
                // `name.alias[key]`: an instance of a configuration with
                // for_each (OpenTofu 1.9).
                (Expression::Variable(v), [op, k]) => match (op.value(), k.value()) {
                    (TraversalOperator::GetAttr(alias), TraversalOperator::Index(e)) => {
                        key = Some(self.expr(GAttr {
                            name: a.name.clone(),
                            span: None,
                            name_span: None,
                            value: e.clone(),
                            index: a.index.clone(),
                            file: a.file.clone(),
                        }));
                        Some((v.as_str().to_string(), Some(alias.as_str().to_string())))
                    }
                    _ => None,
                },
                _ => None,
            },
            Expression::String(s) if !self.json => {
                self.diags.push(Diagnostic::warning(
                    "Quoted references are deprecated",
                    "In this context, references are expected literally rather than in quotes. Terraform 0.11 and earlier required quotes, but quoted references are now deprecated and will be removed in a future version of Terraform. Remove the quotes surrounding this reference to silence this warning.",
                    range.clone(),
                ));
                let mut parts = s.as_str().splitn(2, '.');
                let name = parts.next().unwrap_or_default().to_string();
                let alias = parts.next().map(str::to_string);
                (valid_name(&name) && alias.as_deref().is_none_or(valid_name))
                    .then_some((name, alias))
            }
            _ => None,
        };
        if let Some((name, _)) = &parsed {
            if !self.provider_ref_name_ok(a, name) {
                return None;
            }
        }
        if parsed.is_none() {
            self.diags.push(Diagnostic::error(
                "Invalid provider configuration reference",
                "The provider argument requires a provider type name, optionally followed by a period and then a configuration alias.",
                range.clone(),
            ));
        }
        parsed.map(|(name, alias)| ProviderRef {
            name,
            alias,
            range,
            key: key.map(Box::new),
        })
    }

    fn module_call(&mut self, name: &str, range: Option<SourceRange>, b: GBlock) -> ModuleCall {
        let mut call = ModuleCall {
            name: name.into(),
            range,
            source: None,
            count: None,
            for_each: None,
            inputs: BTreeMap::new(),
            version: None,
            source_expr: None,
            version_expr: None,
            source_range: None,
            depends_on: None,
            providers: BTreeMap::new(),
        };
        let mut count_span = None;
        let mut source_range = None;
        for a in b.body.attrs {
            match a.name.as_str() {
                "source" => {
                    source_range = a.index.range(a.value.span());
                    match self.init_string(a) {
                        Ok(s) => call.source = s,
                        Err(e) => call.source_expr = Some(*e),
                    }
                }
                "version" => match self.init_string(a) {
                    Ok(s) => call.version = s,
                    Err(e) => call.version_expr = Some(*e),
                },
                "count" => {
                    count_span = Some(a.span.clone());
                    call.count = Some(self.expr(a));
                }
                "for_each" => {
                    if count_span.is_some() {
                        self.count_and_for_each(a.span.clone());
                    }
                    call.for_each = Some(self.expr(a));
                }
                "depends_on" => call.depends_on = Some(self.depends_on(a)),
                "providers" => self.providers_map(&a, &mut call.providers),
                "lifecycle" => self.error(
                    "Reserved argument name in module block",
                    "The name \"lifecycle\" is reserved for use in a future version of Terraform."
                        .into(),
                    a.name_span.clone(),
                ),
                k => {
                    let k = k.to_string();
                    let e = self.expr(a);
                    call.inputs.insert(k, e);
                }
            }
        }
        for blk in &b.body.blocks {
            self.unsupported_block(blk);
        }
        if call.source.is_none() && call.source_expr.is_none() {
            self.missing_arg("source", b.body_span.clone());
        }
        call.source_range = source_range.clone();
        if let Some(d) = version_without_registry_source(&mut call, source_range) {
            self.diags.push(d);
        }
        call
    }

    /// A `source` or `version` string as init reads it: a constant, or
    /// (`Err`) an expression that refers to variables or locals or calls
    /// functions, which init evaluates with what it knows (Terraform 1.15:
    /// const variables and locals over them). Any other failure is
    /// reported here, and gives `Ok(None)`.
    fn init_string(&mut self, a: GAttr) -> Result<Option<String>, Box<Expr>> {
        match crate::constant::const_string(&a.value, &a.index) {
            Ok(s) => Ok(Some(s)),
            Err(d)
                if d.iter().all(|d| {
                    matches!(
                        (d.summary.as_str(), d.detail.as_str()),
                        ("Variables not allowed" | "Function calls not allowed", _)
                            | (
                                "Unsuitable value type",
                                "Unsuitable value: value must be known"
                            )
                    )
                }) =>
            {
                Err(Box::new(self.expr(a)))
            }
            Err(d) => {
                self.diags.extend(d);
                Ok(None)
            }
        }
    }

    pub fn count_and_for_each(&mut self, span: Span_) {
        self.error(
            "Invalid combination of \"count\" and \"for_each\"",
            "The \"count\" and \"for_each\" meta-arguments are mutually-exclusive, only one should be used to be explicit about the number of resources to be created.".into(),
            span,
        );
    }

    fn providers_map(&mut self, a: &GAttr, out: &mut BTreeMap<String, ProviderRef>) {
        let Expression::Object(o) = &a.value else {
            self.diags.push(Diagnostic::error("Invalid providers argument", "The \"providers\" argument must be a map from provider names in the child module to provider configurations of this module.", a.index.range(a.value.span())));
            return;
        };
        for (k, v) in o.iter() {
            let key = match k {
                ObjectKey::Ident(i) => {
                    let range = a.index.range(i.span());
                    let name = i.as_str().to_string();
                    self.provider_name_ok(&name, range).then_some(name)
                }
                ObjectKey::Expression(e) => {
                    let g = GAttr {
                        name: "providers".into(),
                        span: None,
                        name_span: None,
                        value: e.clone(),
                        index: a.index.clone(),
                        file: a.file.clone(),
                    };
                    self.provider_ref(&g).map(|r| {
                        r.alias
                            .map(|al| format!("{}.{al}", r.name))
                            .unwrap_or(r.name)
                    })
                }
            };
            let g = GAttr {
                name: "providers".into(),
                span: None,
                name_span: None,
                value: v.expr().clone(),
                index: a.index.clone(),
                file: a.file.clone(),
            };
            if let (Some(key), Some(r)) = (key, self.provider_ref(&g)) {
                out.insert(key, r);
            }
        }
    }

    fn check(&mut self, name: &str, range: Option<SourceRange>, b: GBlock) -> Check {
        let mut c = Check {
            name: name.into(),
            range,
            data: Vec::new(),
            asserts: Vec::new(),
        };
        for blk in b.body.blocks {
            match blk.ty.as_str() {
                "data" => {
                    let Some(l) = self.labels(&blk, 2) else {
                        continue;
                    };
                    let r = self.range(blk.span.clone());
                    let res = self.resource(true, l[0].clone(), l[1].clone(), r, blk);
                    c.data.push(res);
                }
                "assert" => c.asserts.push(self.check_rule(blk, "assert")),
                _ => self.unsupported_block(&blk),
            }
        }
        for a in &b.body.attrs {
            self.unsupported_arg(a);
        }
        if c.asserts.is_empty() {
            self.error(
                "Zero assert blocks",
                "Check blocks must have at least one assert block.".into(),
                b.span.clone(),
            );
        }
        c
    }

    /// `terraform { language = TF2021 }`: a bare keyword naming the one
    /// edition there is (in JSON, a string holding it).
    fn language_edition(&mut self, a: &GAttr) {
        let range = a.index.range(a.value.span());
        let keyword = match &a.value {
            Expression::Variable(v) => Some(v.as_str().to_string()),
            Expression::String(s) if self.json => Some(s.value().to_string()),
            _ => None,
        };
        match keyword.as_deref() {
            Some("TF2021") => {}
            Some(_) => self.diags.push(Diagnostic::error(
                "Unsupported language edition",
                format!("Terraform v{TERRAFORM_VERSION} only supports language edition TF2021. This module requires a newer version of Terraform CLI."),
                range,
            )),
            None => self.diags.push(Diagnostic::error(
                "Invalid language edition",
                format!("The language argument expects a bare language edition keyword. Terraform {TERRAFORM_VERSION} supports only language edition TF2021, which is the default."),
                range,
            )),
        }
    }

    fn terraform(&mut self, module: &mut Module, body: GBody) {
        for a in &body.attrs {
            match a.name.as_str() {
                "required_version" => module.required_version = self.string_attr(a),
                // A release build takes no experiments (an empty list
                // included), as Terraform's releases do.
                "experiments" => self.diags.push(Diagnostic::error(
                    "Module uses experimental features",
                    "Experimental features are intended only for gathering early feedback on new language designs, and so are available only in alpha releases of Terraform.",
                    a.file.range(a.name_span.clone()),
                )),
                "language" => self.language_edition(a),
                _ => self.unsupported_arg(a),
            }
        }
        for b in body.blocks {
            match b.ty.as_str() {
                "required_providers" => {
                    if self.required_providers_once(module, &b) {
                        self.required_providers(module, b.body)
                    }
                }
                "backend" | "cloud" => {
                    let ty = if b.ty == "cloud" {
                        "cloud".to_string()
                    } else {
                        b.labels.first().map(|l| l.0.clone()).unwrap_or_default()
                    };
                    let mut settings = BTreeMap::new();
                    for a in &b.body.attrs {
                        match literal_json(&a.value) {
                            Some(v) => {
                                settings.insert(a.name.clone(), v);
                            }
                            None => self.diags.push(Diagnostic::error("Invalid backend setting", format!("The {:?} setting must be a literal value: variables may not be used here, as backend settings are read before anything is evaluated.", a.name), a.index.range(a.value.span()))),
                        }
                    }
                    let decl = b.index.range(crate::source::def_span(&b, self.json));
                    let cloud = b.ty == "cloud";
                    if let Some(prev) = &module.backend {
                        let range = crate::diag::hcl_range(&prev.decl_range);
                        let here = crate::diag::hcl_range(&decl);
                        // Terraform reports each at the later block, and a
                        // conflict at the backend block.
                        let (summary, detail, at) = match (prev.ty == "cloud", cloud) {
                            (false, false) => ("Duplicate 'backend' configuration block", format!("A module may have only one 'backend' configuration block. The backend was previously configured at {range}."), decl.clone()),
                            (true, true) => ("Duplicate HCP Terraform configurations", format!("A module may have only one 'cloud' block configuring HCP Terraform or Terraform Enterprise. The 'cloud' block was previously configured at {range}."), decl.clone()),
                            (true, false) => ("Conflicting 'cloud' and 'backend' configuration blocks are present", format!("A module may declare either one 'cloud' block OR one 'backend' block for configuring state storage. The 'cloud' block is configured at {range}; a 'backend' is configured at {here}. Remove the 'backend' block to configure HCP Terraform or Terraform Enterprise."), decl.clone()),
                            (false, true) => ("Conflicting 'cloud' and 'backend' configuration blocks are present", format!("A module may declare either one 'cloud' block OR one 'backend' block for configuring state storage. The 'cloud' block is configured at {here}; a 'backend' is configured at {range}. Remove the 'backend' block to configure HCP Terraform or Terraform Enterprise."), prev.decl_range.clone()),
                        };
                        self.diags.push(Diagnostic::error(summary, detail, at));
                        continue;
                    }
                    module.backend = Some(crate::model::Backend {
                        ty,
                        range: b.index.range(b.span.clone()),
                        decl_range: decl,
                        settings,
                    });
                }
                "state" => self.state(module, b),
                "provider_meta" => self.provider_meta(&b),
                _ => self.unsupported_block(&b),
            }
        }
    }

    fn state(&mut self, module: &mut Module, b: GBlock) {
        let Some(l) = self.labels(&b, 1) else { return };
        let backend = match l[0].as_str() {
            "sqlite" => StateBackend::Sqlite,
            "postgres" => StateBackend::Postgres,
            other => {
                let span = b.labels[0].1.clone();
                return self.error("Unsupported state backend", format!("There is no state backend named {other:?}: the backends are \"sqlite\" and \"postgres\"."), span);
            }
        };
        if let Some(prev) = &module.state {
            let at = prev
                .range
                .as_ref()
                .map(|r| format!(" at {r}"))
                .unwrap_or_default();
            return self.error("Duplicate state configuration", format!("State settings were already given{at}: a module may have only one state block."), b.span.clone());
        }
        let mut s = StateSettings {
            backend,
            path: None,
            url: None,
            schema: None,
            encryption_key_env: None,
            range: self.range(b.span.clone()),
        };
        for a in &b.body.attrs {
            let slot = match (a.name.as_str(), &s.backend) {
                ("path", StateBackend::Sqlite) => &mut s.path,
                ("url", StateBackend::Postgres) => &mut s.url,
                ("schema", StateBackend::Postgres) => &mut s.schema,
                ("encryption_key_env", _) => &mut s.encryption_key_env,
                _ => {
                    self.unsupported_arg(a);
                    continue;
                }
            };
            *slot = literal_string(&a.value);
            if slot.is_none() {
                self.diags.push(Diagnostic::error("Invalid state setting", format!("The {:?} setting must be a literal string: state settings are read before anything is evaluated.", a.name), a.index.range(a.value.span())));
            }
        }
        for nb in &b.body.blocks {
            self.unsupported_block(nb);
        }
        module.state = Some(s);
    }

    fn required_providers(&mut self, module: &mut Module, body: GBody) {
        for a in &body.attrs {
            if !self.provider_name_ok(&a.name, a.index.range(a.value.span())) {
                continue;
            }
            let mut rp = RequiredProvider::default();
            match &a.value {
                Expression::Object(o) => {
                    for (k, v) in o.iter() {
                        let key = match k {
                            ObjectKey::Ident(i) => i.as_str().to_string(),
                            ObjectKey::Expression(e) => literal_string(e).unwrap_or_default(),
                        };
                        match key.as_str() {
                            "source" => {
                                rp.source = literal_string(v.expr());
                                self.provider_source_ok(&a.index, v.expr());
                            }
                            "version" => rp.version = literal_string(v.expr()),
                            _ => {}
                        }
                    }
                }
                Expression::String(s) => rp.version = Some(s.as_str().to_string()),
                _ => {
                    let r = a.index.range(a.value.span());
                    self.diags.push(Diagnostic::error(
                        "Invalid required_providers object",
                        "required_providers entries must be objects with source and version.",
                        r,
                    ));
                }
            }
            module.required_providers.insert(a.name.clone(), rp);
        }
        for b in &body.blocks {
            self.unsupported_block(b);
        }
    }
}

/// A native-syntax quoted type (`type = "string"`, Terraform 0.11's
/// form): Terraform's error, with its hint for the three old keywords.
fn quoted_type(a: &GAttr, json: bool) -> Option<Diagnostic> {
    let Expression::String(s) = &a.value else {
        return None;
    };
    if json {
        return None;
    }
    const OLD: &str = "Terraform 0.11 and earlier required type constraints to be given in quotes, but that form is now deprecated and will be removed in a future version of Terraform.";
    let range = a.index.range(a.value.span());
    Some(match s.as_str() {
        "string" => Diagnostic::error(
            "Invalid quoted type constraints",
            format!("{OLD} Remove the quotes around \"string\"."),
            range,
        ),
        k @ ("list" | "map") => Diagnostic::error(
            "Invalid quoted type constraints",
            format!("{OLD} Remove the quotes around \"{k}\" and write {k}(string) instead to explicitly indicate that the {k} elements are strings."),
            range,
        ),
        _ => Diagnostic::error(
            "Invalid legacy variable type hint",
            "To provide a full type expression, remove the surrounding quotes and give the type expression directly.",
            range,
        ),
    })
}

/// The legacy `type = list` and `type = map` of a variable: `list(any)`
/// and `map(any)`, as Terraform still reads them (`set` has no such form).
fn legacy_type(e: &Expression) -> Option<TypeConstraint> {
    let Expression::Variable(v) = e else {
        return None;
    };
    let ty = match v.as_str() {
        "list" => terrane_value::Type::list(terrane_value::Type::Dynamic),
        "map" => terrane_value::Type::map(terrane_value::Type::Dynamic),
        _ => return None,
    };
    Some(TypeConstraint {
        ty,
        defaults: BTreeMap::new(),
    })
}

/// The text of a static address expression.
fn addr_text(e: &Expr) -> String {
    e.expr
        .to_string()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Terraform's check that a call with a `version` has a registry source
/// (a local path, a `git::` or URL source, a malformed address): the
/// diagnostic, with the call's source cleared (the call is then not
/// loaded).
pub(crate) fn version_without_registry_source(
    call: &mut ModuleCall,
    source_range: Option<SourceRange>,
) -> Option<Diagnostic> {
    let source = call.source.as_ref()?;
    call.version.as_ref()?;
    let problem = crate::modules::registry_address_problem(source)?;
    let d = Diagnostic::error(
        "Invalid registry module source address",
        format!("Failed to parse module registry address: {problem}\n\nTerraform assumed that you intended a module registry source address because you also set the argument \"version\", which applies only to registry modules."),
        source_range,
    );
    call.source = None;
    Some(d)
}
