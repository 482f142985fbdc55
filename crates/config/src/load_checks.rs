//! Checks Terraform makes while it loads a module, before anything is
//! evaluated, each with Terraform's summary, detail and position:
//! provider local names (`provider "TEST"`, `provider = Bad.x`), reserved
//! argument and block names in provider blocks, a resource's conditions
//! referring to the resource itself, values that must be constant
//! (`create_before_destroy`, `prevent_destroy`, variable defaults against
//! their type and `nullable`, `provider_meta`), `ignore_changes` forms, a
//! second `required_providers` block and `terraform-provider-` in a
//! provider source.
//!
//! Constant values are computed here without an evaluator: literals,
//! collections and literal templates. A variable or function call is an
//! error where Terraform allows none; any other operation is left to the
//! evaluator (no diagnostic here).

use crate::decode::{is_static_traversal, literal_string, Cx, STATIC_REF};
use crate::diag::hcl_range;
use crate::diag::{Diagnostic, LineIndex, SourceRange};
use crate::model::*;
use crate::refs::Subject;
use crate::source::def_span;
use crate::source::{GAttr, GBlock, Span_};
use std::collections::BTreeMap;
use terrane_hcl::expr::{Expression, ObjectKey, UnaryOperator};
use terrane_hcl::Span;
use terrane_value::convert::{convert, type_convertible};
use terrane_value::{render, Kind, Type, Value};

const QUOTED_REF: &str = "In this context, references are expected literally rather than in quotes. Terraform 0.11 and earlier required quotes, but quoted references are now deprecated and will be removed in a future version of Terraform. Remove the quotes surrounding this reference to silence this warning.";

/// Why a provider local name is not valid, as Terraform's provider
/// address parser words it.
fn provider_part_error(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        return Some("must have at least one character");
    }
    if name.contains('.') {
        return Some("dots are not allowed");
    }
    if name.contains("--") {
        return Some("cannot use multiple consecutive dashes");
    }
    if name.starts_with('-')
        || name.ends_with('-')
        || !name.chars().all(|c| c.is_alphanumeric() || c == '-')
    {
        return Some("must contain only letters, digits, and dashes, and may not use leading or trailing dashes");
    }
    None
}

/// An HCL identifier: a letter or underscore, then letters, digits,
/// underscores and dashes.
fn valid_identifier(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(f) if f.is_alphabetic() || f == '_')
        && c.all(|c| c.is_alphanumeric() || c == '_' || c == '-')
}

/// The range Terraform reports for an expression's start (`StartRange`):
/// a native quoted string's text without its quotes, a function call's
/// name and opening parenthesis, otherwise the whole expression (a JSON
/// string token included).
fn start_span(e: &Expression, json: bool) -> Span_ {
    let span = e.span()?;
    match e {
        Expression::String(_) | Expression::StringTemplate(_) if span.len() >= 2 && !json => {
            Some(span.start + 1..span.end - 1)
        }
        Expression::FuncCall(f) => {
            let name = f.name.name.span()?;
            Some(span.start..name.end + 1)
        }
        _ => Some(span),
    }
}

/// A constant expression's value: `Ok(None)` when it is not a constant this
/// module computes (left to the evaluator), `Err(())` when it uses
/// variables or calls functions (reported into `diags`).
struct Constant<'a> {
    index: &'a LineIndex,
    diags: Vec<Diagnostic>,
}

impl Constant<'_> {
    fn value(&mut self, e: &Expression) -> Option<Value> {
        match e {
            Expression::Null(_) => Some(Value::null(Type::Dynamic)),
            Expression::Bool(b) => Some(Value::bool(*b.value())),
            Expression::Number(n) => {
                let text = n
                    .as_repr()
                    .map(|r| r.to_string())
                    .unwrap_or_else(|| n.value().to_string());
                terrane_value::Number::parse(text.trim())
                    .ok()
                    .map(Value::number)
            }
            Expression::String(_) | Expression::StringTemplate(_) => {
                let s = literal_string(e);
                if s.is_none() {
                    self.walk(e);
                }
                s.map(Value::string)
            }
            Expression::HeredocTemplate(h) => {
                let lits: Option<String> = h
                    .template
                    .iter()
                    .map(|el| match el {
                        terrane_hcl::template::Element::Literal(l) => Some(l.as_str()),
                        _ => None,
                    })
                    .collect();
                if lits.is_none() {
                    self.walk(e);
                }
                lits.map(Value::string)
            }
            Expression::Parenthesis(p) => self.value(p.inner()),
            Expression::UnaryOp(op) if *op.operator.value() == UnaryOperator::Neg => {
                let v = self.value(&op.expr)?;
                let n = v.as_number()?;
                terrane_value::Number::parse(&format!("-{n}"))
                    .ok()
                    .map(Value::number)
            }
            Expression::Array(items) => {
                let vals: Vec<Option<Value>> = items.iter().map(|i| self.value(i)).collect();
                vals.into_iter()
                    .collect::<Option<Vec<_>>>()
                    .map(Value::tuple)
            }
            Expression::Object(o) => {
                let mut out = BTreeMap::new();
                let mut complete = true;
                for (k, v) in o.iter() {
                    let key = match k {
                        ObjectKey::Ident(i) => Some(i.as_str().to_string()),
                        ObjectKey::Expression(Expression::Variable(v)) => {
                            Some(v.as_str().to_string())
                        }
                        ObjectKey::Expression(k) => {
                            self.value(k).and_then(|k| k.as_str().map(str::to_string))
                        }
                    };
                    match (key, self.value(v.expr())) {
                        (Some(k), Some(v)) => {
                            out.insert(k, v);
                        }
                        _ => complete = false,
                    }
                }
                complete.then(|| Value::object(out))
            }
            _ => {
                self.walk(e);
                None
            }
        }
    }

    /// Reports every variable and function call in `e`.
    fn walk(&mut self, e: &Expression) {
        use terrane_hcl::visit::{visit_expr, Visit};
        struct Finder<'a, 'b>(&'a mut Constant<'b>);
        impl Visit for Finder<'_, '_> {
            fn visit_expr(&mut self, e: &Expression) {
                match e {
                    Expression::Variable(_) => self.0.variable(e.span()),
                    Expression::Traversal(t) if matches!(t.expr, Expression::Variable(_)) => {
                        self.0.variable(t.expr.span())
                    }
                    Expression::FuncCall(_) => {
                        self.0.diags.push(Diagnostic::error(
                            "Function calls not allowed",
                            "Functions may not be called here.",
                            self.0.index.range(e.span()),
                        ));
                    }
                    Expression::ForExpr(_) => {}
                    _ => visit_expr(self, e),
                }
            }
        }
        Finder(self).visit_expr(e);
    }

    fn variable(&mut self, span: Span_) {
        self.diags.push(Diagnostic::error(
            "Variables not allowed",
            "Variables may not be used here.",
            self.index.range(span),
        ));
    }
}

/// Why `v` does not convert to `want`, worded as Terraform words it.
fn conversion_problem(v: &Value, want: &Type) -> Option<String> {
    let err = convert(v, want).err()?;
    if type_convertible(v.ty(), want) {
        return Some(err.to_string());
    }
    Some(mismatch(v.ty(), want))
}

/// Terraform's message for a value whose type cannot convert at all (as
/// cty's `MismatchMessage` words it): shared with `convert`'s errors.
pub fn mismatch(got: &Type, want: &Type) -> String {
    match (got, want) {
        (Type::Object(g), Type::Object(w)) => {
            let missing: Vec<String> = w
                .attrs()
                .keys()
                .filter(|k| !g.attrs().contains_key(*k) && !w.is_optional(k))
                .map(|k| render::quote(k))
                .collect();
            match missing.as_slice() {
                [] => {}
                [one] => return format!("attribute {one} is required"),
                [a, b] => return format!("attributes {a} and {b} are required"),
                [rest @ .., last] => {
                    return format!("attributes {}, and {last} are required", rest.join(", "))
                }
            }
            for (k, wt) in w.attrs() {
                if let Some(gt) = g.attrs().get(k) {
                    if !type_convertible(gt, wt) {
                        return format!("attribute {}: {}", render::quote(k), mismatch(gt, wt));
                    }
                }
            }
        }
        (Type::Tuple(es), Type::List(w) | Type::Set(w)) => {
            for (i, e) in es.iter().enumerate() {
                if !type_convertible(e, w) {
                    return format!("element {i}: {}", mismatch(e, w));
                }
            }
        }
        (Type::Object(g), Type::Map(w)) => {
            for (k, e) in g.attrs() {
                if !type_convertible(e, w) {
                    return format!("element {}: {}", render::quote(k), mismatch(e, w));
                }
            }
        }
        // A tuple of another length or other element types.
        (Type::Tuple(_), Type::Tuple(_)) => return "tuple required".into(),
        _ => {}
    }
    let want_name = match want {
        Type::Object(_) => "object".to_string(),
        Type::Tuple(_) => "tuple".to_string(),
        w => w.friendly_name(),
    };
    format!("{want_name} required, but have {}", got.friendly_name())
}

impl Cx<'_> {
    /// Terraform's provider local name check; false when the name is
    /// invalid (the configuration that uses it is then dropped).
    pub(crate) fn provider_name_ok(&mut self, name: &str, range: Option<SourceRange>) -> bool {
        let detail = if let Some(why) = provider_part_error(name) {
            format!("{name} is an invalid provider local name: {why}")
        } else {
            let normal = name.to_lowercase();
            if normal == name {
                return true;
            }
            format!("Provider names must be normalized. Replace {name:?} with {normal:?} to fix this error.")
        };
        self.diags.push(Diagnostic::error(
            "Invalid provider local name",
            detail,
            range,
        ));
        false
    }

    /// The name part of a `provider = name.alias` reference, checked.
    pub(crate) fn provider_ref_name_ok(&mut self, a: &GAttr, name: &str) -> bool {
        let root = match &a.value {
            Expression::Traversal(t) => t.expr.span(),
            Expression::String(_) => a
                .value
                .span()
                .map(|s| s.start + 1..s.start + 1 + name.len()),
            e => e.span(),
        };
        self.provider_name_ok(name, a.index.range(root))
    }

    /// A `provider "name"` block: its name, reserved arguments and blocks,
    /// and the deprecated `version`. False when the block must be dropped.
    pub(crate) fn provider_block_ok(&mut self, name: &str, b: &GBlock) -> bool {
        let range = self.range(def_span(b, self.json));
        if !self.provider_name_ok(name, range) {
            return false;
        }
        for a in &b.body.attrs {
            match a.name.as_str() {
                "alias" => {
                    let bad = literal_string(&a.value).is_some_and(|s| !valid_identifier(&s));
                    if bad {
                        // Terraform gives this one no source range.
                        self.diags.push(Diagnostic::error(
                            "Invalid provider configuration alias",
                            "An alias must be a valid name. A name must start with a letter or underscore and may contain only letters, digits, underscores, and dashes.",
                            None,
                        ));
                    }
                }
                // `for_each` is OpenTofu's provider for_each (decode.rs).
                "count" | "depends_on" | "source" => self.error(
                    "Reserved argument name in provider block",
                    format!(
                        "The provider argument name {:?} is reserved for use by Terraform in a future version.",
                        a.name
                    ),
                    a.name_span.clone(),
                ),
                "version" => self.diags.push(Diagnostic::warning(
                    "Version constraints inside provider configuration blocks are deprecated",
                    "Terraform 0.13 and earlier allowed provider version constraints inside the provider configuration block, but that is now deprecated and will be removed in a future version of Terraform. To silence this warning, move the provider version constraint into the required_providers block.",
                    a.index.range(a.value.span()),
                )),
                _ => {}
            }
        }
        for blk in &b.body.blocks {
            if matches!(blk.ty.as_str(), "lifecycle" | "locals") {
                self.error(
                    "Reserved block type name in provider block",
                    format!(
                        "The block type name {:?} is reserved for use by Terraform in a future version.",
                        blk.ty
                    ),
                    blk.ty_span.clone(),
                );
            }
        }
        true
    }

    /// Whether `r` is a second resource (or data source) of its type and
    /// name; the first keeps the name. Terraform's "Duplicate resource"
    /// names the first declaration.
    pub(crate) fn duplicate_resource(
        &mut self,
        module: &mut Module,
        r: &Resource,
        decl: &Option<SourceRange>,
    ) -> bool {
        if module.resource(r.data, &r.ty, &r.name).is_none() {
            return false;
        }
        let first = module
            .resource_index
            .get(r.data, &r.ty, &r.name)
            .and_then(|(_, d)| d.clone());
        let prev = hcl_range(&first);
        let (kind, what) = if r.data {
            ("data", "data resource")
        } else {
            ("resource", "resource")
        };
        self.diags.push(Diagnostic::error(
            format!("Duplicate {kind} {:?} configuration", r.ty),
            format!(
                "A {} {what} named {:?} was already declared at {prev}. Resource names must be unique per type in each module.",
                r.ty, r.name
            ),
            decl.clone(),
        ));
        true
    }

    /// Pre- and postconditions of a resource may not refer to the resource
    /// itself (postconditions use `self`).
    pub(crate) fn condition_self_refs(&mut self, r: &Resource) {
        let l = &r.lifecycle;
        let rules = l
            .preconditions
            .iter()
            .map(|c| ("precondition", c))
            .chain(l.postconditions.iter().map(|c| ("postcondition", c)));
        for (what, rule) in rules {
            for e in [&rule.condition, &rule.error_message].into_iter().flatten() {
                let itself = e.refs.iter().any(|x| {
                    matches!(&x.subject, Subject::Resource { data, ty, name }
                        if *data == r.data && *ty == r.ty && *name == r.name)
                });
                if itself {
                    self.diags.push(Diagnostic::error(
                        format!("Invalid reference in {what}"),
                        format!("Configuration for {} may not refer to itself.", r.address()),
                        e.range.clone(),
                    ));
                }
            }
        }
    }

    /// A constant bool argument (`create_before_destroy`, `sensitive`,
    /// ...): its value, or Terraform's diagnostics ("Unsuitable value
    /// type", "Variables not allowed", ...). `None` also when it is not a
    /// constant this module computes.
    pub(crate) fn constant_bool(&mut self, a: &GAttr) -> Option<bool> {
        let mut c = Constant {
            index: &a.index,
            diags: Vec::new(),
        };
        let v = c.value(&a.value);
        let errored = !c.diags.is_empty();
        self.diags.append(&mut c.diags);
        let problem = match &v {
            _ if errored => Some("value must be known".to_string()),
            Some(v) => conversion_problem(v, &Type::Bool),
            None => None,
        };
        if let Some(p) = problem {
            self.diags.push(Diagnostic::error(
                "Unsuitable value type",
                format!("Unsuitable value: {p}"),
                a.index.range(start_span(&a.value, self.json)),
            ));
            return None;
        }
        convert(&v?, &Type::Bool).ok()?.as_bool()
    }

    /// A variable's default: a constant that converts to the variable's
    /// type, and not null when the variable is not nullable.
    pub(crate) fn variable_default(&mut self, v: &Variable) {
        let Some(d) = &v.default else { return };
        let mut c = Constant {
            index: &d.index,
            diags: Vec::new(),
        };
        let val = c.value(&d.expr);
        let errored = !c.diags.is_empty();
        self.diags.append(&mut c.diags);
        let Some(val) = val.filter(|_| !errored) else {
            return;
        };
        if let Some(tc) = &v.constraint {
            if let Some(p) = conversion_problem(&val, &tc.ty) {
                self.diags.push(Diagnostic::error(
                    "Invalid default value for variable",
                    format!("This default value is not compatible with the variable's type constraint: {p}."),
                    d.range.clone(),
                ));
                return;
            }
        }
        if !v.nullable && matches!(val.kind(), Kind::Null) {
            self.diags.push(Diagnostic::error(
                "Invalid default value for variable",
                "A null default value is not valid when nullable=false.",
                d.range.clone(),
            ));
        }
    }

    /// `ignore_changes`: the keyword `all`, or a list of attribute
    /// references (quoted ones deprecated); the legacy `["*"]` is an error
    /// and cannot be mixed with references.
    pub(crate) fn ignore_changes_form(&mut self, a: &GAttr) {
        if matches!(&a.value, Expression::Variable(v) if v.as_str() == "all") {
            return;
        }
        let Expression::Array(items) = &a.value else {
            self.diags.push(Diagnostic::error(
                "Invalid expression",
                "A static list expression is required.",
                a.index.range(start_span(&a.value, self.json)),
            ));
            return;
        };
        let mut star = None;
        let mut refs = 0;
        for item in items.iter() {
            let text = literal_string(item);
            if text.as_deref() == Some("*") {
                star = Some(a.index.range(item.span()));
                self.diags.push(Diagnostic::error(
                    "Invalid ignore_changes wildcard",
                    "The [\"*\"] form of ignore_changes wildcard is was deprecated and is now invalid. Use \"ignore_changes = all\" to ignore changes to all attributes.",
                    a.index.range(a.value.span()),
                ));
                continue;
            }
            if text.is_some() {
                if !self.json {
                    self.diags.push(Diagnostic::warning(
                        "Quoted references are deprecated",
                        QUOTED_REF,
                        a.index.range(item.span()),
                    ));
                }
                refs += 1;
                continue;
            }
            if !is_static_traversal(item) {
                self.diags.push(Diagnostic::error(
                    "Invalid expression",
                    STATIC_REF,
                    a.index.range(item.span()),
                ));
                continue;
            }
            refs += 1;
        }
        if let (Some(range), true) = (star, refs > 0) {
            self.diags.push(Diagnostic::error(
                "Invalid ignore_changes ruleset",
                "Cannot mix wildcard string \"*\" with non-wildcard references.",
                range,
            ));
        }
    }

    /// A module has one `required_providers` block; false for a second
    /// one (it is then not read).
    pub(crate) fn required_providers_once(&mut self, module: &mut Module, b: &GBlock) -> bool {
        let here = self.range(def_span(b, self.json));
        if let Some(prev) = &module.required_providers_range {
            let detail = format!("A module may have only one required providers configuration. The required providers were previously configured at {}.", hcl_range(&Some(prev.clone())));
            self.diags.push(Diagnostic::error(
                "Duplicate required providers configuration",
                detail,
                here,
            ));
            return false;
        }
        module.required_providers_range = here;
        true
    }

    /// A provider source's type may not carry the repository prefix
    /// `terraform-provider-`.
    pub(crate) fn provider_source_ok(&mut self, index: &LineIndex, value: &Expression) {
        let Some(source) = literal_string(value) else {
            return;
        };
        let (head, ty) = match source.rsplit_once('/') {
            Some((h, t)) => (format!("{h}/"), t),
            None => (String::new(), source.as_str()),
        };
        let detail = if let Some(rest) = ty.strip_prefix("terraform-provider-") {
            format!("Provider source {source:?} has a type with the prefix \"terraform-provider-\", which isn't valid. Although that prefix is often used in the names of version control repositories for Terraform providers, provider source strings should not include it.\n\nDid you mean \"{head}{rest}\"?")
        } else if ty.starts_with("terraform-") {
            // Named with the registry host, as Terraform names it.
            let full = match source.matches('/').count() {
                1 => format!("registry.terraform.io/{source}"),
                _ => source.clone(),
            };
            format!("Provider source {full:?} has a type with the prefix \"terraform-\", which isn't allowed because it would be redundant to name a Terraform provider with that prefix. If you are the author of this provider, rename it to not include the prefix.")
        } else {
            return;
        };
        self.diags.push(Diagnostic::error(
            "Invalid provider type",
            detail,
            index.range(value.span()),
        ));
    }

    /// `provider_meta "name" { ... }`: a valid, normalized provider local
    /// name (reported at the block's type and label), constant values only.
    pub(crate) fn provider_meta(&mut self, b: &GBlock) {
        if let Some((name, _)) = b.labels.first() {
            let def = b.index.range(crate::source::def_span(b, self.json));
            self.provider_name_ok(name, def);
        }
        for a in &b.body.attrs {
            let mut c = Constant {
                index: &a.index,
                diags: Vec::new(),
            };
            c.value(&a.value);
            self.diags.append(&mut c.diags);
        }
    }
}
