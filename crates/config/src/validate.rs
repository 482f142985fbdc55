//! The static reference check: every reference names something declared
//! (input variable, local value, resource, data source, module call and,
//! where the child module is loaded, one of its outputs), and `count`,
//! `each` and `self` appear only where they have a value. Messages are
//! Terraform's, at the reference's range. Cost is linear in the number of
//! references: every lookup is a map lookup.

use crate::diag::Diagnostic;
use crate::model::{Expr, Module, NestedBlock, Resource};
use crate::refs::Subject;
use crate::Config;
use std::collections::HashSet;
use terrane_hcl::expr::Expression;

/// Checks the references of every expression of `config` and, recursively,
/// of its child modules.
pub fn validate_references(config: &Config) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    walk(config, "the root module", &mut out);
    out
}

#[derive(Clone, Copy, Default)]
struct Allowed {
    count: bool,
    each: bool,
    self_ref: bool,
}

struct Checker<'a> {
    config: &'a Config,
    module: &'a Module,
    place: &'a str,
    /// Data sources scoped to the check block being checked.
    check_data: HashSet<(&'a str, &'a str)>,
    out: &'a mut Vec<Diagnostic>,
}

fn walk(config: &Config, place: &str, out: &mut Vec<Diagnostic>) {
    let m = &config.module;
    let mut c = Checker {
        config,
        module: m,
        place,
        check_data: HashSet::new(),
        out,
    };
    let none = Allowed::default();
    for v in m.variables.values() {
        for rule in &v.validations {
            c.opt(&rule.condition, none);
            c.opt(&rule.error_message, none);
        }
    }
    for e in m.locals.values() {
        c.expr(e, none);
    }
    for o in m.outputs.values() {
        if o.deprecated.is_some() && place == "the root module" {
            c.out.push(Diagnostic::error(
                "Root module output deprecated",
                "Root module outputs cannot be deprecated, as there is no higher-level module to inform of the deprecation.",
                o.deprecated_range.clone(),
            ));
        }
        c.opt(&o.value, none);
        c.opt(&o.depends_on, none);
        for rule in &o.preconditions {
            c.opt(&rule.condition, none);
            c.opt(&rule.error_message, none);
        }
    }
    for p in &m.providers {
        // `each` inside a provider block with for_each (OpenTofu 1.9).
        let inside = Allowed {
            each: p.for_each.is_some(),
            ..none
        };
        c.opt(&p.for_each, none);
        for e in p.attributes.values() {
            c.expr(e, inside);
        }
        for b in &p.body {
            c.nested(b, inside);
        }
    }
    for r in m
        .resources
        .iter()
        .map(|r| &**r)
        .chain(&m.ephemeral_resources)
    {
        c.resource(r);
    }
    for call in m.module_calls.values() {
        c.opt(&call.count, none);
        c.opt(&call.for_each, none);
        c.opt(&call.depends_on, none);
        let inside = Allowed {
            count: call.count.is_some(),
            each: call.for_each.is_some(),
            self_ref: false,
        };
        let child = config.children.get(&call.name);
        for (k, e) in &call.inputs {
            c.expr(e, inside);
            // Terraform 1.15: a value given to a deprecated variable.
            let deprecated = child
                .and_then(|ch| ch.module.variables.get(k))
                .and_then(|v| v.deprecated.as_ref());
            if let (Some(msg), false) = (deprecated, matches!(e.expr, Expression::Null(_))) {
                c.out.push(Diagnostic::warning(
                    "Deprecated variable got a value",
                    msg.clone(),
                    e.range.clone(),
                ));
            }
        }
    }
    for i in &m.imports {
        c.opt(&i.for_each, none);
        let inside = Allowed {
            each: i.for_each.is_some(),
            ..none
        };
        c.opt(&i.id, inside);
    }
    for chk in &m.checks {
        c.check_data = chk
            .data
            .iter()
            .map(|d| (d.ty.as_str(), d.name.as_str()))
            .collect();
        for d in &chk.data {
            c.resource(d);
        }
        for rule in &chk.asserts {
            c.opt(&rule.condition, none);
            c.opt(&rule.error_message, none);
        }
        c.check_data.clear();
    }
    for (name, child) in &config.children {
        let child_place = if place == "the root module" {
            format!("module.{name}")
        } else {
            format!("{place}.module.{name}")
        };
        walk(child, &child_place, out);
    }
}

impl Checker<'_> {
    fn opt(&mut self, e: &Option<Expr>, allowed: Allowed) {
        self.opt_ref(e.as_ref(), allowed);
    }

    fn opt_ref(&mut self, e: Option<&Expr>, allowed: Allowed) {
        if let Some(e) = e {
            self.expr(e, allowed);
        }
    }

    fn resource(&mut self, r: &Resource) {
        let none = Allowed::default();
        self.opt_ref(r.count.as_deref(), none);
        self.opt_ref(r.for_each.as_deref(), none);
        let inside = Allowed {
            count: r.count.is_some(),
            each: r.for_each.is_some(),
            self_ref: false,
        };
        self.opt_ref(r.depends_on.as_deref(), inside);
        if let Some(k) = r.provider_ref.as_ref().and_then(|p| p.key.as_ref()) {
            self.expr(k, inside);
        }
        for e in r.attributes.values() {
            self.expr(e, inside);
        }
        for b in &r.body {
            self.nested(b, inside);
        }
        // `self` is the resource's instance in provisioners and connections.
        let with_self = Allowed {
            self_ref: true,
            ..inside
        };
        let connections = r
            .provisioners
            .iter()
            .filter_map(|p| p.connection.as_ref())
            .chain(r.connection.as_ref());
        for c in connections {
            c.attributes.values().for_each(|e| self.expr(e, with_self));
            c.blocks.iter().for_each(|b| self.nested(b, with_self));
        }
        for p in &r.provisioners {
            p.attributes.values().for_each(|e| self.expr(e, with_self));
            p.blocks.iter().for_each(|b| self.nested(b, with_self));
        }
        let l = &r.lifecycle;
        for e in &l.replace_triggered_by_entries {
            self.expr(e, inside);
        }
        for rule in &l.preconditions {
            self.opt(&rule.condition, inside);
            self.opt(&rule.error_message, inside);
        }
        let post = Allowed {
            self_ref: true,
            ..inside
        };
        for rule in &l.postconditions {
            self.opt(&rule.condition, post);
            self.opt(&rule.error_message, post);
        }
    }

    fn nested(&mut self, b: &NestedBlock, allowed: Allowed) {
        let allowed = if matches!(b.type_name.as_str(), "provisioner" | "connection")
            && b.dynamic.is_none()
        {
            Allowed {
                self_ref: true,
                ..allowed
            }
        } else {
            allowed
        };
        if let Some(d) = &b.dynamic {
            self.expr(&d.for_each, allowed);
            for l in &d.labels {
                self.expr(l, allowed);
            }
        }
        for e in b.attributes.values() {
            self.expr(e, allowed);
        }
        for nb in &b.blocks {
            self.nested(nb, allowed);
        }
    }

    fn expr(&mut self, e: &Expr, allowed: Allowed) {
        let m = self.module;
        for r in &e.refs {
            let problem: Option<(String, String, _)> = match &r.subject {
                Subject::Var(n) if !m.variables.contains_key(n) => Some((
                    "Reference to undeclared input variable".into(),
                    format!("An input variable with the name {n:?} has not been declared. This variable can be declared with a variable {n:?} {{}} block."),
                    r.range.clone(),
                )),
                Subject::Local(n) if !m.locals.contains_key(n) => Some(("Reference to undeclared local value".into(), format!("A local value with the name {n:?} has not been declared."), r.range.clone())),
                Subject::Resource { data, ty, name } if m.resource(*data, ty, name).is_none() && !(*data && self.check_data.contains(&(ty.as_str(), name.as_str()))) => {
                    let kind = if *data { "data" } else { "managed" };
                    Some(("Reference to undeclared resource".into(), format!("A {kind} resource {ty:?} {name:?} has not been declared in {}.", self.place), r.range.clone()))
                }
                Subject::Ephemeral { ty, name } if !m.ephemeral_resources.iter().any(|e| &e.ty == ty && &e.name == name) => {
                    Some(("Reference to undeclared resource".into(), format!("An ephemeral resource {ty:?} {name:?} has not been declared in {}.", self.place), r.range.clone()))
                }
                Subject::Module(n) => match m.module_calls.get(n) {
                    None => Some(("Reference to undeclared module".into(), format!("No module call named {n:?} is declared in {}.", self.place), r.range.clone())),
                    Some(_) => match (&r.attr, self.config.children.get(n)) {
                        (Some((out, range)), Some(child)) if !child.module.outputs.contains_key(out) => {
                            Some(("Unsupported attribute".into(), format!("This object does not have an attribute named {out:?}."), range.clone().or(r.range.clone())))
                        }
                        _ => None,
                    },
                },
                Subject::CountIndex if !allowed.count => Some((
                    "Reference to \"count\" in non-counted context".into(),
                    "The \"count\" object can only be used in \"module\", \"resource\", and \"data\" blocks, and only when the \"count\" argument is set.".into(),
                    r.range.clone(),
                )),
                Subject::EachKey | Subject::EachValue if !allowed.each => Some((
                    "Reference to \"each\" in context without for_each".into(),
                    "The \"each\" object can be used only in \"module\" or \"resource\" blocks, and only when the \"for_each\" argument is set.".into(),
                    r.range.clone(),
                )),
                Subject::SelfRef if !allowed.self_ref => Some((
                    "Invalid \"self\" reference".into(),
                    "The \"self\" object is not available in this context. This object can be used only in resource provisioner, connection, and postcondition blocks.".into(),
                    r.range.clone(),
                )),
                _ => None,
            };
            if let Some((summary, detail, range)) = problem {
                self.out.push(Diagnostic::error(summary, detail, range));
            }
            // Terraform 1.15: a deprecated output of a child module used.
            if let (Subject::Module(n), Some((out, _))) = (&r.subject, &r.attr) {
                let deprecated = self
                    .config
                    .children
                    .get(n)
                    .and_then(|ch| ch.module.outputs.get(out))
                    .and_then(|o| o.deprecated.as_ref());
                if let Some(msg) = deprecated {
                    self.out.push(Diagnostic::warning(
                        "Deprecated value used",
                        msg.clone(),
                        r.range.clone(),
                    ));
                }
            }
        }
    }
}
