//! The static values of one module: input variables (given values or
//! defaults, converted to their type constraints, marked when declared
//! sensitive) and local values evaluated in dependency order, with cycles
//! among locals reported. [`ModuleScope`] resolves `var`, `local`, `path`
//! and `terraform` and falls back to another scope (the engine's resources,
//! data sources and module calls) for everything else.

use crate::func::FuncCtx;
use crate::scope::{Missing, Scope};
use crate::typeconv::{convert_to_constraint, ConstraintError};
use crate::Evaluator;
use std::collections::{BTreeMap, BTreeSet};
use terrane_config::{DiagId, Diagnostic, Module, Subject};
use terrane_value::{Type, Value};

/// `var`, `local`, `path` and `terraform` of one module instance.
pub struct ModuleScope<'a> {
    pub vars: BTreeMap<String, Value>,
    pub locals: BTreeMap<String, Value>,
    declared_vars: BTreeSet<String>,
    declared_locals: BTreeSet<String>,
    /// `path.module`, `path.root`, `path.cwd`.
    pub paths: [String; 3],
    pub workspace: String,
    /// Everything else (resources, data, module outputs, count, each, self).
    pub fallback: Option<&'a dyn Scope>,
}

impl<'a> ModuleScope<'a> {
    pub fn new(
        module: &Module,
        paths: [String; 3],
        fallback: Option<&'a dyn Scope>,
    ) -> ModuleScope<'a> {
        ModuleScope {
            vars: BTreeMap::new(),
            locals: BTreeMap::new(),
            declared_vars: module.variables.keys().cloned().collect(),
            declared_locals: module.locals.keys().cloned().collect(),
            paths,
            workspace: "default".into(),
            fallback,
        }
    }
}

impl Scope for ModuleScope<'_> {
    fn root(&self, name: &str) -> Option<Value> {
        match name {
            "var" => Some(Value::object(self.vars.clone())),
            "local" => Some(Value::object(self.locals.clone())),
            "path" => Some(Value::object_from([
                ("module", Value::string(self.paths[0].as_str())),
                ("root", Value::string(self.paths[1].as_str())),
                ("cwd", Value::string(self.paths[2].as_str())),
            ])),
            "terraform" => Some(Value::object_from([(
                "workspace",
                Value::string(self.workspace.as_str()),
            )])),
            _ => self.fallback.and_then(|f| f.root(name)),
        }
    }

    fn root_attr(&self, name: &str, attr: &str) -> Option<Value> {
        match name {
            "var" => self.vars.get(attr).cloned(),
            "local" => self.locals.get(attr).cloned(),
            _ => self.fallback.and_then(|f| f.root_attr(name, attr)),
        }
    }

    fn missing_attr(&self, name: &str, attr: &str) -> Option<Missing> {
        match name {
            "var" if !self.declared_vars.contains(attr) => Some(Missing {
                summary: "Reference to undeclared input variable".into(),
                detail: format!("An input variable with the name {attr:?} has not been declared. This variable can be declared with a variable {attr:?} {{}} block."),
            }),
            "local" if !self.declared_locals.contains(attr) => Some(Missing {
                summary: "Reference to undeclared local value".into(),
                detail: format!("A local value with the name {attr:?} has not been declared."),
            }),
            "var" | "local" => None,
            _ => self.fallback.and_then(|f| f.missing_attr(name, attr)),
        }
    }
}

/// Sets the module's input variables from `given` values (already parsed
/// from `-var`, files or a module call) and declared defaults.
pub fn input_variables(
    module: &Module,
    given: &BTreeMap<String, Value>,
    ctx: &FuncCtx,
    scope: &mut ModuleScope,
) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    for name in given.keys() {
        if !module.variables.contains_key(name) {
            diags.push(Diagnostic::error(
                "Value for undeclared variable",
                format!("A variable named {name:?} was assigned a value, but the root module does not declare a variable of that name."),
                None,
            ));
        }
    }
    for (name, var) in &module.variables {
        let mut value = given.get(name).cloned();
        let mut from_default = false;
        if value.as_ref().is_none_or(|v| v.is_null() && !var.nullable) {
            if let Some(d) = &var.default {
                let empty = crate::MapScope::new();
                let mut ev = Evaluator::new(&empty, ctx, &d.index);
                let v = ev.eval(&d.expr);
                let dd = ev.into_diagnostics();
                if !dd.is_empty() {
                    diags.extend(dd);
                    continue;
                }
                value = Some(v);
                from_default = true;
            }
        }
        let Some(v) = value else {
            diags.push(Diagnostic::error(
                "No value for required variable",
                format!("The root module input variable {name:?} is not set, and has no default value. Use a -var or -var-file command line argument to provide a value for this variable."),
                var.range.clone(),
            ).with_id(DiagId::NoValueForRequiredVariable));
            continue;
        };
        if v.is_null() && !var.nullable {
            diags.push(Diagnostic::error(
                "Required variable not set",
                format!("Unsuitable value for var.{name} set: required variable may not be set to null."),
                var.range.clone(),
            ));
            continue;
        }
        let converted = match (&var.constraint, &var.ty) {
            (Some(tc), Some(te)) => convert_to_constraint(&v, tc, ctx, &te.index),
            _ => Ok(v),
        };
        match converted {
            Ok(v) => {
                let v = if var.sensitive { v.mark_sensitive() } else { v };
                let v = if var.ephemeral { v.mark_ephemeral() } else { v };
                scope.vars.insert(name.clone(), v);
            }
            Err(e) => {
                let (summary, at) = if from_default {
                    (
                        "Invalid default value for variable",
                        var.default.as_ref().and_then(|d| d.range.clone()),
                    )
                } else {
                    ("Invalid value for input variable", var.range.clone())
                };
                let declared = var
                    .range
                    .as_ref()
                    .map(|r| format!(" declared at {r}"))
                    .unwrap_or_default();
                let detail = match e {
                    ConstraintError::Convert(c) => {
                        format!("The given value is not suitable for var.{name}{declared}: {c}.")
                    }
                    other => format!("var.{name}: {other}"),
                };
                diags.push(Diagnostic::error(summary, detail, at));
                scope.vars.insert(
                    name.clone(),
                    Value::unknown(
                        var.constraint
                            .as_ref()
                            .map(|c| c.ty.without_optional_markers())
                            .unwrap_or(Type::Dynamic),
                    ),
                );
            }
        }
    }
    diags
}

/// Evaluates the module's locals in dependency order into `scope`.
/// Locals that refer to things outside `var`/`local`/`path` are evaluated
/// against the fallback scope. A cycle is reported once, at the first
/// local of the cycle, naming every member.
pub fn evaluate_locals(module: &Module, ctx: &FuncCtx, scope: &mut ModuleScope) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    let deps: BTreeMap<&str, Vec<&str>> = module
        .locals
        .iter()
        .map(|(n, e)| {
            let ds = e
                .refs
                .iter()
                .filter_map(|r| match &r.subject {
                    Subject::Local(l) if module.locals.contains_key(l) => Some(l.as_str()),
                    _ => None,
                })
                .collect();
            (n.as_str(), ds)
        })
        .collect();
    // Depth-first topological order; grey nodes on the stack reveal cycles.
    let mut state: BTreeMap<&str, u8> = BTreeMap::new(); // 1 = visiting, 2 = done
    let mut order = Vec::new();
    let mut in_cycle: BTreeSet<&str> = BTreeSet::new();
    fn visit<'m>(
        n: &'m str,
        deps: &BTreeMap<&'m str, Vec<&'m str>>,
        state: &mut BTreeMap<&'m str, u8>,
        stack: &mut Vec<&'m str>,
        order: &mut Vec<&'m str>,
        cycles: &mut Vec<Vec<&'m str>>,
    ) {
        match state.get(n) {
            Some(2) => return,
            Some(1) => {
                let start = stack.iter().position(|s| *s == n).unwrap_or(0);
                cycles.push(stack[start..].to_vec());
                return;
            }
            _ => {}
        }
        state.insert(n, 1);
        stack.push(n);
        for d in deps.get(n).into_iter().flatten() {
            visit(d, deps, state, stack, order, cycles);
        }
        stack.pop();
        state.insert(n, 2);
        order.push(n);
    }
    let mut cycles = Vec::new();
    for n in deps.keys() {
        visit(
            n,
            &deps,
            &mut state,
            &mut Vec::new(),
            &mut order,
            &mut cycles,
        );
    }
    for cycle in &cycles {
        in_cycle.extend(cycle.iter().copied());
        let first = cycle[0];
        let mut names: Vec<String> = cycle.iter().map(|n| format!("local.{n}")).collect();
        names.push(format!("local.{first}"));
        diags.push(Diagnostic::error(
            "Cycle in local values",
            format!(
                "The local values refer to each other in a cycle: {}.",
                names.join(" -> ")
            ),
            module.locals[first].range.clone(),
        ));
    }
    for n in order {
        let e = &module.locals[n];
        if in_cycle.contains(n)
            || e.refs
                .iter()
                .any(|r| matches!(&r.subject, Subject::Local(l) if in_cycle.contains(l.as_str())))
        {
            scope
                .locals
                .insert(n.to_string(), Value::unknown(Type::Dynamic));
            continue;
        }
        let mut ev = Evaluator::new(scope, ctx, &e.index);
        let v = ev.eval(&e.expr);
        diags.extend(ev.into_diagnostics());
        scope.locals.insert(n.to_string(), v);
    }
    diags
}
