//! Whether two modules mean the same: every declaration, setting and
//! expression compared with positions, blanks and comments ignored. This
//! is what a formatter must preserve (`terrane fmt` refuses to write a
//! file whose formatted text fails it).
//!
//! Expressions are compared as syntax trees after a normalization that
//! drops what does not change a value: parentheses (the tree already
//! holds the grouping), a template that is one interpolation (`"${x}"` is
//! `x`: such a template yields the value itself), the blanks kept inside
//! arrays, objects, argument lists and template directives, and block
//! labels' quoting. Literal text — strings, heredoc lines — is compared
//! exactly. A variable's `type` is compared as a type constraint would
//! read it, with the legacy forms (`list`, `"string"`) taken as what
//! Terraform's formatter rewrites them to.

use crate::model::*;
use std::collections::BTreeMap;
use terrane_hcl::expr::Expression;
use terrane_hcl::structure::{Block, BlockLabel, Body};
use terrane_hcl::template::Element;
use terrane_hcl::visit_mut::{self, VisitMut};

/// Where `a` and `b` differ in meaning, each named by its place
/// (`resource.aws_instance.web.ami`); empty when they mean the same.
pub fn module_differences(a: &Module, b: &Module) -> Vec<String> {
    let mut c = Cmp::default();
    c.module(a, b);
    c.diffs
}

/// Whether two files' bodies (a `.tf` or `.tfvars` file) are the same
/// syntax tree, compared as expressions are: stricter than
/// [`module_differences`], which sees only what the module model keeps.
pub fn same_body(a: &Body, b: &Body) -> bool {
    normal_body(a) == normal_body(b)
}

/// Whether two expressions mean the same.
pub fn same_expr(a: &Expression, b: &Expression) -> bool {
    normal(a) == normal(b)
}

/// The top-level items (`attribute x`, `block resource "a" "b"`) where
/// two files' bodies differ, compared as [`same_body`] does.
pub fn body_differences(a: &Body, b: &Body) -> Vec<String> {
    let (a, b) = (normal_body(a), normal_body(b));
    let name = |s: &terrane_hcl::structure::Structure| match s {
        terrane_hcl::structure::Structure::Attribute(at) => {
            format!("attribute {}", at.key.as_str())
        }
        terrane_hcl::structure::Structure::Block(bl) => {
            let labels: Vec<String> = bl
                .labels
                .iter()
                .map(|l| format!("{:?}", l.as_str()))
                .collect();
            format!("block {} {}", bl.ident.as_str(), labels.join(" "))
                .trim_end()
                .to_string()
        }
    };
    let mut out: Vec<String> = a
        .iter()
        .zip(b.iter())
        .filter(|(x, y)| x != y)
        .map(|(x, _)| name(x))
        .collect();
    if a.len() != b.len() {
        out.push(format!(
            "the number of items ({} instead of {})",
            b.len(),
            a.len()
        ));
    }
    out
}

fn normal(e: &Expression) -> Expression {
    let mut e = e.clone();
    Normalize.visit_expr_mut(&mut e);
    e
}

fn normal_body(b: &Body) -> Body {
    let mut b = b.clone();
    for block in b.get_blocks_mut("variable") {
        if let Some(t) = block.body.get_attribute_mut("type") {
            let modern = type_normal(&t.value);
            t.value = modern;
        }
    }
    Normalize.visit_body_mut(&mut b);
    b
}

fn normal_block(b: &Block) -> Block {
    let mut b = b.clone();
    Normalize.visit_block_mut(&mut b);
    b
}

struct Normalize;

impl VisitMut for Normalize {
    fn visit_expr_mut(&mut self, e: &mut Expression) {
        visit_mut::visit_expr_mut(self, e);
        let inner = match e {
            Expression::Parenthesis(p) => Some(p.inner().clone()),
            Expression::StringTemplate(t) => match t.iter().collect::<Vec<_>>().as_slice() {
                [Element::Interpolation(i)] => Some(i.expr.clone()),
                _ => None,
            },
            _ => None,
        };
        if let Some(inner) = inner {
            *e = inner;
        }
    }

    fn visit_block_label_mut(&mut self, l: &mut BlockLabel) {
        if let BlockLabel::Ident(i) = l {
            *l = BlockLabel::String(terrane_hcl::Decorated::new(i.as_str().to_string()));
        }
    }
}

/// A variable's type expression with the legacy spellings replaced.
fn type_normal(e: &Expression) -> Expression {
    let modern = match e {
        Expression::Variable(v) if matches!(v.as_str(), "list" | "map" | "set") => {
            Some(format!("{}(any)", v.as_str()))
        }
        Expression::String(s) => match s.as_str() {
            "string" => Some("string".to_string()),
            "list" | "map" => Some(format!("{}(string)", s.as_str())),
            _ => None,
        },
        _ => None,
    };
    match modern.and_then(|m| terrane_hcl::parser::parse_expr(&m).ok()) {
        Some(m) => normal(&m),
        None => normal(e),
    }
}

#[derive(Default)]
struct Cmp {
    diffs: Vec<String>,
}

impl Cmp {
    fn eq<T: PartialEq>(&mut self, at: &str, a: &T, b: &T) {
        if a != b {
            self.diffs.push(at.to_string());
        }
    }

    fn expr(&mut self, at: &str, a: &Expr, b: &Expr) {
        if !same_expr(&a.expr, &b.expr) {
            self.diffs.push(at.to_string());
        }
    }

    fn opt(&mut self, at: &str, a: &Option<Expr>, b: &Option<Expr>) {
        self.opt_ref(at, a.as_ref(), b.as_ref());
    }

    fn opt_boxed(&mut self, at: &str, a: &Option<Box<Expr>>, b: &Option<Box<Expr>>) {
        self.opt_ref(at, a.as_deref(), b.as_deref());
    }

    fn opt_ref(&mut self, at: &str, a: Option<&Expr>, b: Option<&Expr>) {
        match (a, b) {
            (None, None) => {}
            (Some(a), Some(b)) => self.expr(at, a, b),
            _ => self.diffs.push(at.to_string()),
        }
    }

    fn exprs(&mut self, at: &str, a: &[Expr], b: &[Expr]) {
        if a.len() != b.len() {
            return self.diffs.push(at.to_string());
        }
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            self.expr(&format!("{at}[{i}]"), x, y);
        }
    }

    fn map(&mut self, at: &str, a: &BTreeMap<String, Expr>, b: &BTreeMap<String, Expr>) {
        if !a.keys().eq(b.keys()) {
            return self.diffs.push(format!("{at} (arguments)"));
        }
        for (k, x) in a {
            self.expr(&format!("{at}.{k}"), x, &b[k]);
        }
    }

    fn rules(&mut self, at: &str, a: &[CheckRule], b: &[CheckRule]) {
        if a.len() != b.len() {
            return self.diffs.push(at.to_string());
        }
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            let CheckRule {
                condition,
                error_message,
                range: _,
            } = x;
            self.opt(&format!("{at}[{i}].condition"), condition, &y.condition);
            self.opt(
                &format!("{at}[{i}].error_message"),
                error_message,
                &y.error_message,
            );
        }
    }

    fn provider_ref(&mut self, at: &str, a: &Option<ProviderRef>, b: &Option<ProviderRef>) {
        let key = |p: &Option<ProviderRef>| p.as_ref().map(|p| (p.name.clone(), p.alias.clone()));
        self.eq(at, &key(a), &key(b));
    }

    fn module(&mut self, a: &Module, b: &Module) {
        let Module {
            files: _,
            required_version,
            required_providers,
            required_providers_range: _,
            providers,
            variables,
            locals,
            outputs,
            resources,
            ephemeral_resources,
            module_calls,
            other_blocks,
            moved,
            imports,
            removed,
            checks,
            state,
            backend,
            resource_index: _,
        } = a;
        self.eq(
            "terraform.required_version",
            required_version,
            &b.required_version,
        );
        self.eq(
            "terraform.required_providers",
            required_providers,
            &b.required_providers,
        );
        let settings =
            |s: &Option<StateSettings>| s.clone().map(|s| StateSettings { range: None, ..s });
        self.eq("terraform.state", &settings(state), &settings(&b.state));
        let backend_ty = |x: &Option<crate::model::Backend>| x.as_ref().map(|x| x.ty.clone());
        self.eq(
            "terraform.backend",
            &backend_ty(backend),
            &backend_ty(&b.backend),
        );
        self.eq("provider (count)", &providers.len(), &b.providers.len());
        for (x, y) in providers.iter().zip(&b.providers) {
            let at = format!("provider.{}", x.name);
            self.eq(&at, &(&x.name, &x.alias), &(&y.name, &y.alias));
            self.map(&at, &x.attributes, &y.attributes);
        }
        self.keys("variable", variables, &b.variables);
        for (k, x) in variables {
            let Some(y) = b.variables.get(k) else {
                continue;
            };
            let at = format!("variable.{k}");
            let Variable {
                name: _,
                range: _,
                ty,
                constraint: _,
                default,
                sensitive,
                nullable,
                description,
                ephemeral,
                constant,
                deprecated,
                validations,
            } = x;
            let same_type = match (ty, &y.ty) {
                (None, None) => true,
                (Some(p), Some(q)) => type_normal(&p.expr) == type_normal(&q.expr),
                _ => false,
            };
            if !same_type {
                self.diffs.push(format!("{at}.type"));
            }
            self.opt(&format!("{at}.default"), default, &y.default);
            self.eq(
                &format!("{at}.flags"),
                &(
                    sensitive,
                    nullable,
                    ephemeral,
                    description,
                    constant,
                    deprecated,
                ),
                &(
                    &y.sensitive,
                    &y.nullable,
                    &y.ephemeral,
                    &y.description,
                    &y.constant,
                    &y.deprecated,
                ),
            );
            self.rules(&format!("{at}.validation"), validations, &y.validations);
        }
        self.map("locals", locals, &b.locals);
        self.keys("output", outputs, &b.outputs);
        for (k, x) in outputs {
            let Some(y) = b.outputs.get(k) else { continue };
            let at = format!("output.{k}");
            let Output {
                name: _,
                range: _,
                value,
                sensitive,
                depends_on,
                description,
                ephemeral,
                deprecated,
                deprecated_range: _,
                preconditions,
                ty,
                constraint: _,
            } = x;
            let same_type = match (ty, &y.ty) {
                (None, None) => true,
                (Some(p), Some(q)) => type_normal(&p.expr) == type_normal(&q.expr),
                _ => false,
            };
            if !same_type {
                self.diffs.push(format!("{at}.type"));
            }
            self.opt(&format!("{at}.value"), value, &y.value);
            self.opt(&format!("{at}.depends_on"), depends_on, &y.depends_on);
            self.eq(
                &format!("{at}.flags"),
                &(sensitive, ephemeral, description, deprecated),
                &(&y.sensitive, &y.ephemeral, &y.description, &y.deprecated),
            );
            self.rules(
                &format!("{at}.precondition"),
                preconditions,
                &y.preconditions,
            );
        }
        self.resources("", resources, &b.resources);
        self.resources("ephemeral.", ephemeral_resources, &b.ephemeral_resources);
        self.keys("module", module_calls, &b.module_calls);
        for (k, x) in module_calls {
            let Some(y) = b.module_calls.get(k) else {
                continue;
            };
            let at = format!("module.{k}");
            let ModuleCall {
                name: _,
                range: _,
                source,
                count,
                for_each,
                inputs,
                version,
                source_expr,
                version_expr,
                source_range: _,
                depends_on,
                providers,
            } = x;
            self.eq(
                &format!("{at}.source"),
                &(source, version),
                &(&y.source, &y.version),
            );
            self.opt(&format!("{at}.source"), source_expr, &y.source_expr);
            self.opt(&format!("{at}.version"), version_expr, &y.version_expr);
            self.opt(&format!("{at}.count"), count, &y.count);
            self.opt(&format!("{at}.for_each"), for_each, &y.for_each);
            self.opt(&format!("{at}.depends_on"), depends_on, &y.depends_on);
            self.map(&at, inputs, &y.inputs);
            let refs = |m: &BTreeMap<String, ProviderRef>| {
                m.iter()
                    .map(|(k, p)| (k.clone(), p.name.clone(), p.alias.clone()))
                    .collect::<Vec<_>>()
            };
            self.eq(
                &format!("{at}.providers"),
                &refs(providers),
                &refs(&y.providers),
            );
        }
        let kinds = |v: &[(String, Option<crate::SourceRange>)]| {
            v.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>()
        };
        self.eq("blocks", &kinds(other_blocks), &kinds(&b.other_blocks));
        self.eq("moved (count)", &moved.len(), &b.moved.len());
        for (i, (x, y)) in moved.iter().zip(&b.moved).enumerate() {
            let Moved {
                from,
                to,
                from_addr,
                to_addr,
                range: _,
            } = x;
            self.opt(&format!("moved[{i}].from"), from, &y.from);
            self.opt(&format!("moved[{i}].to"), to, &y.to);
            self.eq(
                &format!("moved[{i}]"),
                &(from_addr, to_addr),
                &(&y.from_addr, &y.to_addr),
            );
        }
        self.eq("import (count)", &imports.len(), &b.imports.len());
        for (i, (x, y)) in imports.iter().zip(&b.imports).enumerate() {
            let Import {
                to,
                to_addr,
                id,
                provider,
                for_each,
                range: _,
            } = x;
            self.opt(&format!("import[{i}].to"), to, &y.to);
            self.eq(&format!("import[{i}].to"), to_addr, &y.to_addr);
            self.opt(&format!("import[{i}].id"), id, &y.id);
            self.provider_ref(&format!("import[{i}].provider"), provider, &y.provider);
            self.opt(&format!("import[{i}].for_each"), for_each, &y.for_each);
        }
        self.eq("removed (count)", &removed.len(), &b.removed.len());
        for (i, (x, y)) in removed.iter().zip(&b.removed).enumerate() {
            let Removed {
                from,
                from_addr,
                destroy,
                range: _,
                provisioners,
                connection,
            } = x;
            let at = format!("removed[{i}]");
            self.provisioners(&at, provisioners, &y.provisioners);
            self.connection(&format!("{at}.connection"), connection, &y.connection);
            self.opt(&format!("removed[{i}].from"), from, &y.from);
            self.eq(
                &format!("removed[{i}]"),
                &(from_addr, destroy),
                &(&y.from_addr, &y.destroy),
            );
        }
        self.eq("check (count)", &checks.len(), &b.checks.len());
        for (x, y) in checks.iter().zip(&b.checks) {
            let Check {
                name,
                range: _,
                data,
                asserts,
            } = x;
            let at = format!("check.{name}");
            self.eq(&at, name, &y.name);
            self.resources(&format!("{at}."), data, &y.data);
            self.rules(&format!("{at}.assert"), asserts, &y.asserts);
        }
    }

    fn keys<T>(&mut self, at: &str, a: &BTreeMap<String, T>, b: &BTreeMap<String, T>) {
        if !a.keys().eq(b.keys()) {
            self.diffs.push(format!("{at} (names)"));
        }
    }

    fn resources<R: std::borrow::Borrow<Resource>>(&mut self, prefix: &str, a: &[R], b: &[R]) {
        if a.len() != b.len() {
            return self.diffs.push(format!("{prefix}resources (count)"));
        }
        for (x, y) in a.iter().zip(b) {
            let (x, y): (&Resource, &Resource) = (x.borrow(), y.borrow());
            let Resource {
                data,
                ty,
                name,
                range: _,
                count,
                for_each,
                provider,
                provider_ref,
                depends_on,
                lifecycle,
                attributes,
                blocks,
                body,
                from_json,
                provisioners,
                connection,
            } = x;
            let at = format!("{prefix}{}", x.address());
            if (data, ty, name, from_json) != (&y.data, &y.ty, &y.name, &y.from_json) {
                self.diffs.push(at);
                continue;
            }
            self.opt_boxed(&format!("{at}.count"), count, &y.count);
            self.opt_boxed(&format!("{at}.for_each"), for_each, &y.for_each);
            self.opt_boxed(&format!("{at}.provider"), provider, &y.provider);
            self.provider_ref(&format!("{at}.provider"), provider_ref, &y.provider_ref);
            self.opt_boxed(&format!("{at}.depends_on"), depends_on, &y.depends_on);
            self.lifecycle(&format!("{at}.lifecycle"), lifecycle, &y.lifecycle);
            self.map(&at, attributes, &y.attributes);
            let normal_blocks = |v: &[Block]| v.iter().map(normal_block).collect::<Vec<_>>();
            self.eq(
                &format!("{at} (blocks)"),
                &normal_blocks(blocks),
                &normal_blocks(&y.blocks),
            );
            self.nested(&at, body, &y.body);
            self.provisioners(&at, provisioners, &y.provisioners);
            self.connection(&format!("{at}.connection"), connection, &y.connection);
        }
    }

    fn provisioners(&mut self, at: &str, a: &[Provisioner], b: &[Provisioner]) {
        if a.len() != b.len() {
            return self.diffs.push(format!("{at} (provisioners)"));
        }
        for (x, y) in a.iter().zip(b) {
            let Provisioner {
                ty,
                range: _,
                type_range: _,
                when,
                on_failure,
                connection,
                attributes,
                blocks,
            } = x;
            let here = format!("{at}.provisioner.{ty}");
            self.eq(
                &here,
                &(ty, when, on_failure),
                &(&y.ty, &y.when, &y.on_failure),
            );
            self.map(&here, attributes, &y.attributes);
            self.nested(&here, blocks, &y.blocks);
            self.connection(&format!("{here}.connection"), connection, &y.connection);
        }
    }

    fn connection(&mut self, at: &str, a: &Option<Connection>, b: &Option<Connection>) {
        match (a, b) {
            (None, None) => {}
            (Some(x), Some(y)) => {
                self.map(at, &x.attributes, &y.attributes);
                self.nested(at, &x.blocks, &y.blocks);
            }
            _ => self.diffs.push(at.to_string()),
        }
    }

    fn lifecycle(&mut self, at: &str, a: &Lifecycle, b: &Lifecycle) {
        let Lifecycle {
            create_before_destroy,
            prevent_destroy,
            ignore_changes,
            replace_triggered_by,
            replace_triggered_by_entries,
            preconditions,
            postconditions,
        } = a;
        self.opt_boxed(
            &format!("{at}.create_before_destroy"),
            create_before_destroy,
            &b.create_before_destroy,
        );
        self.opt_boxed(
            &format!("{at}.prevent_destroy"),
            prevent_destroy,
            &b.prevent_destroy,
        );
        self.opt_boxed(
            &format!("{at}.ignore_changes"),
            ignore_changes,
            &b.ignore_changes,
        );
        self.opt_boxed(
            &format!("{at}.replace_triggered_by"),
            replace_triggered_by,
            &b.replace_triggered_by,
        );
        self.exprs(
            &format!("{at}.replace_triggered_by"),
            replace_triggered_by_entries,
            &b.replace_triggered_by_entries,
        );
        self.rules(
            &format!("{at}.precondition"),
            preconditions,
            &b.preconditions,
        );
        self.rules(
            &format!("{at}.postcondition"),
            postconditions,
            &b.postconditions,
        );
    }

    fn nested(&mut self, at: &str, a: &[NestedBlock], b: &[NestedBlock]) {
        if a.len() != b.len() {
            return self.diffs.push(format!("{at} (nested blocks)"));
        }
        for (x, y) in a.iter().zip(b) {
            let NestedBlock {
                type_name,
                labels,
                range: _,
                attributes,
                blocks,
                dynamic,
            } = x;
            let here = format!("{at}.{type_name}");
            self.eq(&here, &(type_name, labels), &(&y.type_name, &y.labels));
            self.map(&here, attributes, &y.attributes);
            self.nested(&here, blocks, &y.blocks);
            match (dynamic, &y.dynamic) {
                (None, None) => {}
                (Some(p), Some(q)) => {
                    let DynamicSpec {
                        for_each,
                        iterator,
                        labels,
                        range: _,
                    } = p;
                    self.expr(&format!("{here}.for_each"), for_each, &q.for_each);
                    self.eq(&format!("{here}.iterator"), iterator, &q.iterator);
                    self.exprs(&format!("{here}.labels"), labels, &q.labels);
                }
                _ => self.diffs.push(format!("{here} (dynamic)")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(name: &str, a: &str, b: &str, want_same: bool) {
        let (ma, _) = crate::parse_str("a.tf", a);
        let (mb, _) = crate::parse_str("b.tf", b);
        let diffs = module_differences(&ma, &mb);
        assert_eq!(diffs.is_empty(), want_same, "{name}: differences {diffs:?}");
    }

    #[test]
    fn meaning_survives_layout_and_only_layout() {
        let base =
            "resource \"t\" \"n\" {\n  a = [\"--port=8080\"]\n  b = <<EOT\nFOO=bar\nEOT\n}\n";
        check(
            "blanks and alignment",
            base,
            "resource   t n {\n    a    = [ \"--port=8080\" ]   # c\n  b=<<EOT\nFOO=bar\nEOT\n}\n",
            true,
        );
        check(
            "string content",
            base,
            "resource \"t\" \"n\" {\n  a = [\"--port = 8080\"]\n  b = <<EOT\nFOO=bar\nEOT\n}\n",
            false,
        );
        check(
            "heredoc content",
            base,
            "resource \"t\" \"n\" {\n  a = [\"--port=8080\"]\n  b = <<EOT\nFOO = bar\nEOT\n}\n",
            false,
        );
        check(
            "single interpolation",
            "locals {\n  a = \"${var.x}\"\n}\n",
            "locals {\n  a = var.x\n}\n",
            true,
        );
        check(
            "template with text",
            "locals {\n  a = \"v${var.x}\"\n}\n",
            "locals {\n  a = var.x\n}\n",
            false,
        );
        check(
            "legacy type",
            "variable \"v\" {\n  type = \"string\"\n}\n",
            "variable \"v\" {\n  type = string\n}\n",
            true,
        );
        check(
            "bare list type",
            "variable \"v\" {\n  type = list\n}\n",
            "variable \"v\" {\n  type = list(any)\n}\n",
            true,
        );
        check(
            "other type",
            "variable \"v\" {\n  type = list(string)\n}\n",
            "variable \"v\" {\n  type = list(number)\n}\n",
            false,
        );
        check(
            "directive blanks",
            "locals {\n  a = \"%{ if true }x%{ endif }\"\n}\n",
            "locals {\n  a = \"%{if true}x%{endif}\"\n}\n",
            true,
        );
        check(
            "operand order",
            "locals {\n  a = 1 - 2\n}\n",
            "locals {\n  a = 2 - 1\n}\n",
            false,
        );
    }
}
