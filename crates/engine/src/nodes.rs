//! The nodes that are not resources: input variables (with their
//! validation rules), locals, outputs (with their preconditions), module
//! calls and their expansion, provider configurations (validated and
//! configured); and the expansion of resources by `count` / `for_each`.
//! Both phase drivers run these the same way.
//!
//! Layering: imports instance, conditions, walk, checks, decode and the
//! bottom layers; never plan, apply or run.

use crate::graph::{NodeId, NodeKind};
use crate::instance::ResourceCtx;
use crate::sync::lock;
use crate::values::{Expansion, InstanceVars, ResourceValues};
use crate::walk::{guarded, is_error, provider_instance, schema_of, Done, Phase, Walk};
use std::collections::BTreeMap;
use std::sync::Arc;
use terrane_config::{DiagId, Diagnostic, Expr, Module};
use terrane_eval::Evaluator;
use terrane_state::{InstanceAddr, InstanceKey, ModulePath};
use terrane_value::convert::convert;
use terrane_value::{Type, Value};

/// Whether a node is a resource (planned or applied by its phase's
/// driver rather than here).
pub fn is_resource(w: &Walk, id: NodeId) -> bool {
    matches!(w.core.graph.nodes[id].kind, NodeKind::Resource { .. })
}

/// Runs every node of the graph: resources with the phase driver's
/// `resource` work, the others here. Returns every node's diagnostics.
pub async fn walk_graph<F, Fut>(w: &Arc<Walk>, resource: F) -> Vec<Diagnostic>
where
    F: Fn(NodeId) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Done> + Send + 'static,
{
    let resource = Arc::new(resource);
    let walk = w.clone();
    w.walk_graph(move |id| {
        let (walk, resource) = (walk.clone(), resource.clone());
        async move {
            if is_resource(&walk, id) {
                resource(id).await
            } else {
                node(&walk, id).await
            }
        }
    })
    .await
}

/// The work of a node other than a resource; a resource node is left to
/// the phase driver and counts as done here.
pub async fn node(w: &Arc<Walk>, id: NodeId) -> Done {
    let node = &w.core.graph.nodes[id];
    let mut out = Vec::new();
    let ok = match &node.kind {
        NodeKind::Var(name) => var_node(w, &node.module, name, &mut out),
        NodeKind::Local(name) => local_node(w, &node.module, name, &mut out),
        NodeKind::Output(name) => output_node(w, &node.module, name, &mut out),
        NodeKind::Call(name) => call_node(w, &node.module, name, &mut out),
        NodeKind::Provider { name, alias } => {
            provider_node(w, &node.module, name, alias.as_deref(), &mut out).await
        }
        NodeKind::Resource { .. } => true,
    };
    (ok, out)
}

fn var_node(w: &Walk, module: &[String], name: &str, out: &mut Vec<Diagnostic>) -> bool {
    let Some(cfg) = w.module_config(module) else {
        return false;
    };
    if !cfg.module.variables.contains_key(name) {
        return false;
    }
    let ctx = w.func_ctx();
    if module.is_empty() {
        let mut scope =
            terrane_eval::module::ModuleScope::new(&cfg.module, w.core.paths.clone(), None);
        let mut given = BTreeMap::new();
        if let Some(v) = w.opts.vars.get(name) {
            given.insert(name.to_string(), v.clone());
        } else if w.phase == Phase::Validate && cfg.module.variables[name].default.is_none() {
            // Validate checks the module for any value of its variables,
            // as Terraform's: an unset one is unknown, not missing.
            given.insert(name.to_string(), Value::unknown(Type::Dynamic));
        }
        let single = single_var_module(&cfg.module, name);
        let diags = terrane_eval::module::input_variables(&single, &given, &ctx, &mut scope);
        let ok = !diags.iter().any(is_error);
        out.extend(diags);
        let v = scope
            .vars
            .remove(name)
            .unwrap_or_else(|| Value::unknown(Type::Dynamic));
        w.values.update(&ModulePath::default(), |m| {
            m.vars.insert(name.to_string(), v)
        });
        let rules = &cfg.module.variables[name].validations;
        let valid = crate::conditions::enforce(
            w,
            out,
            &ModulePath::default(),
            &InstanceVars::default(),
            rules,
            "Invalid value for variable",
            &format!("var.{name}"),
        );
        return ok && valid;
    }
    // A child module's variable: the call's input, evaluated in the parent.
    let parent = &module[..module.len() - 1];
    let call_name = &module[module.len() - 1];
    let Some(pcfg) = w.module_config(parent) else {
        return false;
    };
    let Some(call) = pcfg.module.module_calls.get(call_name) else {
        return false;
    };
    let mut ok = true;
    for pinst in w.values.instances_of(parent) {
        let exp = w
            .values
            .with(&pinst, |m| m.calls.get(call_name).cloned())
            .flatten()
            .unwrap_or(Expansion::Unknown);
        for key in exp.keys() {
            let mut child = pinst.0.clone();
            child.push((call_name.clone(), key.clone()));
            let child = ModulePath(child);
            let inst = call_vars(&exp, &key);
            let value = match call.inputs.get(name) {
                Some(e) => {
                    let (v, d) = w.eval(&pinst, inst, e);
                    ok &= !d.iter().any(is_error);
                    out.extend(d);
                    Some(v)
                }
                None => None,
            };
            let mut given = BTreeMap::new();
            if let Some(v) = value {
                given.insert(name.to_string(), v);
            }
            let mut scope =
                terrane_eval::module::ModuleScope::new(&cfg.module, w.core.paths.clone(), None);
            let single = single_var_module(&cfg.module, name);
            let diags: Vec<Diagnostic> =
                terrane_eval::module::input_variables(&single, &given, &ctx, &mut scope)
                    .into_iter()
                    .map(|mut d| {
                        if d.is(DiagId::NoValueForRequiredVariable) {
                            d.summary = "Missing required argument".into();
                            d.detail = format!(
                                "The argument {name:?} is required, but no definition was found."
                            );
                            d.range = call.range.clone();
                        }
                        d
                    })
                    .collect();
            ok &= !diags.iter().any(is_error);
            out.extend(diags);
            let v = scope
                .vars
                .remove(name)
                .unwrap_or_else(|| Value::unknown(Type::Dynamic));
            w.values
                .update(&child, |m| m.vars.insert(name.to_string(), v));
            let rules = &cfg.module.variables[name].validations;
            ok &= crate::conditions::enforce(
                w,
                out,
                &child,
                &InstanceVars::default(),
                rules,
                "Invalid value for variable",
                &format!("var.{name}"),
            );
        }
    }
    ok
}

/// A module with only variable `name`, so input_variables handles one.
fn single_var_module(m: &Module, name: &str) -> Module {
    let mut single = Module::default();
    if let Some(v) = m.variables.get(name) {
        single.variables.insert(name.to_string(), v.clone());
    }
    single
}

/// `count.index` / `each.*` of a module call instance.
fn call_vars(exp: &Expansion, key: &InstanceKey) -> InstanceVars {
    match key {
        InstanceKey::Int(i) => InstanceVars {
            count_index: Some(*i),
            ..Default::default()
        },
        InstanceKey::Str(k) => InstanceVars {
            each: Some((
                k.clone(),
                exp.each_value(key)
                    .unwrap_or_else(|| Value::unknown(Type::Dynamic)),
            )),
            ..Default::default()
        },
        InstanceKey::None => InstanceVars::default(),
    }
}

fn local_node(w: &Walk, module: &[String], name: &str, out: &mut Vec<Diagnostic>) -> bool {
    let Some(cfg) = w.module_config(module) else {
        return false;
    };
    let Some(e) = cfg.module.locals.get(name) else {
        return false;
    };
    let mut ok = true;
    for inst in w.values.instances_of(module) {
        let (v, d) = w.eval(&inst, InstanceVars::default(), e);
        ok &= !d.iter().any(is_error);
        out.extend(d);
        w.values
            .update(&inst, |m| m.locals.insert(name.to_string(), v));
    }
    ok
}

fn output_node(w: &Walk, module: &[String], name: &str, out: &mut Vec<Diagnostic>) -> bool {
    let Some(cfg) = w.module_config(module) else {
        return false;
    };
    let Some(o) = cfg.module.outputs.get(name) else {
        return false;
    };
    let Some(e) = &o.value else { return false };
    let mut ok = true;
    for inst in w.values.instances_of(module) {
        if w.phase != Phase::Validate
            && !crate::conditions::enforce(
                w,
                out,
                &inst,
                &InstanceVars::default(),
                &o.preconditions,
                "Module output value precondition failed",
                &format!("output.{name}"),
            )
        {
            ok = false;
            continue;
        }
        let (v, d) = w.eval(&inst, InstanceVars::default(), e);
        ok &= !d.iter().any(is_error);
        out.extend(d);
        if module.is_empty() {
            if v.has_sensitive() && !o.sensitive && w.phase != Phase::Validate {
                out.push(Diagnostic::error(
                    "Output refers to sensitive values",
                    "To reduce the risk of accidentally exporting sensitive data that was intended to be only internal, Terraform requires that any root module output containing sensitive data be explicitly marked as sensitive, to confirm your intent.\n\nIf you do intend to export this data, annotate the output value as sensitive by adding the following argument:\n    sensitive = true",
                    o.range.clone(),
                ));
                ok = false;
            }
            lock(&w.outputs).insert(name.to_string(), (v.clone(), o.sensitive));
        }
        let v = if o.sensitive { v.mark_sensitive() } else { v };
        w.values
            .update(&inst, |m| m.outputs.insert(name.to_string(), v));
    }
    ok
}

/// Evaluates `count` / `for_each` into an expansion; errors as Terraform
/// words them. During validate unknowns are fine.
pub fn expansion(
    w: &Walk,
    module: &ModulePath,
    count: Option<&Expr>,
    for_each: Option<&Expr>,
) -> Result<Expansion, Vec<Diagnostic>> {
    if let Some(e) = count {
        let (v, d) = w.eval(module, InstanceVars::default(), e);
        if d.iter().any(is_error) {
            return Err(d);
        }
        let v = v.unmark_deep();
        if !v.is_known() {
            if w.phase == Phase::Validate {
                return Ok(Expansion::Unknown);
            }
            return Err(vec![Diagnostic::error(
                "Invalid count argument",
                "The \"count\" value depends on resource attributes that cannot be determined until apply, so Terraform cannot predict how many instances will be created. To work around this, use the -target argument to first apply only the resources that the count depends on.",
                e.range.clone(),
            )]);
        }
        let n = convert(&v, &Type::Number)
            .ok()
            .and_then(|n| n.as_number().cloned());
        return match n {
            _ if v.is_null() => Err(vec![Diagnostic::error("Invalid count argument", "The given \"count\" argument value is null. An integer is required.", e.range.clone())]),
            Some(n) if n.is_integer() && n >= terrane_value::Number::zero() => Ok(Expansion::Count(n.to_u64().unwrap_or(0) as usize)),
            Some(n) if n.is_integer() => Err(vec![Diagnostic::error("Invalid count argument", "The given \"count\" argument value is unsuitable: must be greater than or equal to zero.", e.range.clone())]),
            Some(_) => Err(vec![Diagnostic::error("Invalid count argument", "The given \"count\" argument value is unsuitable: the given number is not a whole number.", e.range.clone())]),
            None => Err(vec![Diagnostic::error("Invalid count argument", "The given \"count\" argument value is unsuitable: number required.", e.range.clone())]),
        };
    }
    if let Some(e) = for_each {
        let (v, d) = w.eval(module, InstanceVars::default(), e);
        if d.iter().any(is_error) {
            return Err(d);
        }
        if v.has_sensitive() {
            return Err(vec![Diagnostic::error(
                "Invalid for_each argument",
                "Sensitive values, or values derived from sensitive values, cannot be used as for_each arguments. If used, the sensitive value could be exposed as a resource instance key.",
                e.range.clone(),
            )]);
        }
        if v.is_null() {
            return Err(vec![Diagnostic::error("Invalid for_each argument", "The given \"for_each\" argument value is unsuitable: the given \"for_each\" argument value is null. A map, or set of strings is allowed.", e.range.clone())]);
        }
        // A map or object whose keys are known expands even if some of
        // its values are not; anything else must be wholly known.
        let keys_known = v.is_known() && matches!(v.ty(), Type::Map(_) | Type::Object(_));
        if !(v.is_wholly_known() || keys_known) {
            if w.phase == Phase::Validate {
                return Ok(Expansion::Unknown);
            }
            return Err(vec![Diagnostic::error(
                "Invalid for_each argument",
                "The \"for_each\" map includes keys derived from resource attributes that cannot be determined until apply, and so Terraform cannot determine the full set of keys that will identify the instances of this resource.\n\nWhen working with unknown values in for_each, it's better to define the map keys statically in your configuration and place apply-time results only in the map values.",
                e.range.clone(),
            )]);
        }
        let mut m = BTreeMap::new();
        match v.ty() {
            Type::Map(_) | Type::Object(_) => {
                for (k, x) in v.entries().into_iter().flatten() {
                    m.insert(k.clone(), x.clone());
                }
            }
            Type::Set(t) if **t == Type::String || t.is_dynamic() => {
                for x in v.elements().into_iter().flatten() {
                    match x.as_str() {
                        Some(s) => {
                            m.insert(s.to_string(), x.clone());
                        }
                        None => {
                            return Err(vec![Diagnostic::error("Invalid for_each set argument", "The given \"for_each\" argument value is unsuitable: \"for_each\" sets must not contain null values.", e.range.clone())]);
                        }
                    }
                }
            }
            Type::Set(_) => {
                return Err(vec![Diagnostic::error("Invalid for_each set argument", "The given \"for_each\" argument value is unsuitable: \"for_each\" supports sets of strings, but you have provided a set containing type number.", e.range.clone())])
            }
            t => {
                return Err(vec![Diagnostic::error(
                    "Invalid for_each argument",
                    format!("The given \"for_each\" argument value is unsuitable: the \"for_each\" argument must be a map, or set of strings, and you have provided a value of type {}.", t.friendly_name()),
                    e.range.clone(),
                )])
            }
        }
        return Ok(Expansion::ForEach(m));
    }
    Ok(Expansion::Single)
}

fn call_node(w: &Walk, module: &[String], name: &str, out: &mut Vec<Diagnostic>) -> bool {
    let Some(cfg) = w.module_config(module) else {
        return false;
    };
    let Some(call) = cfg.module.module_calls.get(name) else {
        return false;
    };
    let mut ok = true;
    for inst in w.values.instances_of(module) {
        let exp = match expansion(w, &inst, call.count.as_ref(), call.for_each.as_ref()) {
            Ok(e) => e,
            Err(d) => {
                ok = false;
                out.extend(d);
                Expansion::Unknown
            }
        };
        for key in exp.keys() {
            let mut child = inst.0.clone();
            child.push((name.to_string(), key));
            w.values.update(&ModulePath(child), |_| {});
        }
        w.values
            .update(&inst, |m| m.calls.insert(name.to_string(), exp));
    }
    ok
}

async fn provider_node(
    w: &Arc<Walk>,
    module: &[String],
    name: &str,
    alias: Option<&str>,
    out: &mut Vec<Diagnostic>,
) -> bool {
    let key = crate::walk::module_provider_key(&w.core, module, name, alias);
    if provider_instance(w, &key).await.is_some() {
        return true;
    }
    let schema = match schema_of(w, name).await {
        Ok(s) => s,
        Err(d) => {
            out.push(d);
            return false;
        }
    };
    if schema.diagnostics.has_errors() {
        out.extend(crate::checks::provider_diags(
            &schema.diagnostics,
            &key.to_string(),
            &None,
        ));
        return false;
    }
    let instance = match w.core.host.instance(&key).await {
        Ok(i) => i,
        Err(e) => {
            out.push(Diagnostic::error(
                "Failed to start provider",
                e.to_string(),
                None,
            ));
            return false;
        }
    };
    // The provider block's configuration (empty when there is none), its
    // nested blocks (static and dynamic) decoded as a resource's are.
    let cfg = w.module_config(module).and_then(|c| {
        c.module
            .providers
            .iter()
            .find(|p| p.name == name && p.alias.as_deref() == alias)
    });
    let range = cfg.and_then(|c| c.range.clone());
    // A module with its own provider configurations cannot be repeated
    // (count/for_each), so its one instance is the path without keys.
    let here = ModulePath(
        module
            .iter()
            .map(|m| (m.clone(), InstanceKey::None))
            .collect(),
    );
    let config_value = {
        let scope = w.scope(&here, InstanceVars::default());
        let ctx = w.func_ctx();
        let mut diags = Vec::new();
        let index = cfg
            .map(|c| c.index.clone())
            .unwrap_or_else(|| Arc::new(terrane_config::LineIndex::new("", "")));
        let mut ev = Evaluator::new(&scope, &ctx, &index);
        let body = crate::decode::BodyRef {
            attributes: cfg
                .map(|c| {
                    c.attributes
                        .iter()
                        .map(|(k, e)| (k.as_str(), &e.expr))
                        .collect()
                })
                .unwrap_or_default(),
            blocks: cfg.map(|c| c.blocks.iter().collect()).unwrap_or_default(),
            // Terraform reports a missing argument or block at the opening
            // brace of the provider block.
            span: cfg.and_then(|c| c.body_start.map(|b| b..b + 1)),
        };
        let v =
            crate::decode::decode_body(&mut ev, &index, &body, &schema.provider.block, &mut diags);
        diags.extend(ev.into_diagnostics());
        if diags.iter().any(is_error) {
            out.extend(diags);
            return false;
        }
        out.extend(diags);
        v
    };
    let unmarked = config_value.unmark_deep();
    // Diagnostics about an argument point at it, as Terraform's do.
    let at = |p: &terrane_value::Path| {
        cfg.and_then(|c| crate::checks::attribute_range(p, &c.attributes, &c.body))
    };
    if w.phase != Phase::Validate || unmarked.is_wholly_known() {
        let valid = instance.validate_provider_config(&unmarked).await;
        let summary = crate::checks::PROVIDER_FAILED;
        if !provider_answer(out, valid, summary, &key.to_string(), &range, &at) {
            return false;
        }
    }
    if w.phase != Phase::Validate {
        let configured = instance
            .configure_provider(crate::TERRAFORM_VERSION, &unmarked)
            .await;
        let summary = "Failed to configure provider";
        if !provider_answer(out, configured, summary, &key.to_string(), &range, &at) {
            return false;
        }
    }
    w.providers.lock().await.insert(key, instance);
    true
}

/// Registers a resource's expansion in a module instance.
pub fn register_resource(
    w: &Walk,
    module: &ModulePath,
    mode: terrane_state::Mode,
    ty: &str,
    name: &str,
    exp: Expansion,
    value_ty: Type,
) {
    w.values.update(module, |m| {
        m.resources.insert(
            (mode, ty.to_string(), name.to_string()),
            ResourceValues {
                expansion: exp,
                instances: BTreeMap::new(),
                ty: value_ty,
            },
        );
    });
}

/// `count.index` / `each.*` for a resource instance.
pub fn instance_vars(exp: &Expansion, key: &InstanceKey) -> InstanceVars {
    call_vars(exp, key)
}

/// The expansion of a resource in one module instance, registered for
/// references; `None` after reporting why it cannot be known.
pub fn expand_resource(
    w: &Walk,
    rc: &ResourceCtx,
    module: &ModulePath,
    out: &mut Vec<Diagnostic>,
) -> Option<Expansion> {
    match expansion(w, module, rc.res.count.as_ref(), rc.res.for_each.as_ref()) {
        Ok(exp) => {
            register_resource(
                w,
                module,
                rc.mode,
                &rc.res.ty,
                &rc.res.name,
                exp.clone(),
                rc.ty.clone(),
            );
            Some(exp)
        }
        Err(d) => {
            out.extend(d);
            None
        }
    }
}

/// A provider configuration call's answer, taken the one way: a transport
/// failure becomes a diagnostic (`summary`), the provider's diagnostics are
/// placed at the attributes they name, and an error stops the node.
fn provider_answer(
    out: &mut Vec<Diagnostic>,
    r: Result<crate::provider::Diagnostics, crate::provider::ProviderError>,
    summary: &str,
    label: &str,
    range: &Option<terrane_config::SourceRange>,
    at: &dyn Fn(&terrane_value::Path) -> Option<terrane_config::SourceRange>,
) -> bool {
    let Some(d) = crate::checks::answered_as(out, r, summary, range, None) else {
        return false;
    };
    out.extend(crate::checks::provider_diags_at(&d, label, range, at));
    !d.has_errors()
}

/// Provider nodes alone (for destroy and the pre-walk deletes): evaluate
/// and configure every provider configuration of the root module; their
/// diagnostics.
pub async fn configure_providers(w: &Arc<Walk>) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let ids: Vec<usize> = w
        .core
        .graph
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| matches!(n.kind, NodeKind::Provider { .. }))
        .map(|(i, _)| i)
        .collect();
    for id in ids {
        // Providers may refer to variables and locals (a child module's
        // to its call's inputs, so to the parent's): evaluate those first,
        // dependencies before dependents.
        for dep in value_deps(w, id) {
            out.extend(node(w, dep).await.1);
        }
        out.extend(node(w, id).await.1);
    }
    out
}

/// The variables, locals and module calls node `id` depends on, through
/// each other, in an order that puts dependencies first.
fn value_deps(w: &Walk, id: NodeId) -> Vec<NodeId> {
    let g = &w.core.graph;
    let mut out = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    // Depth-first, post-order: (node, its dependencies pushed yet?).
    let mut stack: Vec<(NodeId, bool)> = g.deps[id].iter().map(|d| (*d, false)).collect();
    while let Some((n, expanded)) = stack.pop() {
        if expanded {
            out.push(n);
            continue;
        }
        if !matches!(
            g.nodes[n].kind,
            NodeKind::Var(_) | NodeKind::Local(_) | NodeKind::Call(_)
        ) || !seen.insert(n)
        {
            continue;
        }
        stack.push((n, true));
        stack.extend(g.deps[n].iter().map(|d| (*d, false)));
    }
    out
}

/// One instance of a resource, as [`fan_out`] hands it to a phase.
pub struct Instance {
    pub module: ModulePath,
    pub addr: InstanceAddr,
    /// `count.index` / `each.*` for it.
    pub vars: InstanceVars,
}

/// Expands a resource in every instance of its module and runs `work` for
/// each of its instances, concurrently, each under [`guarded`]. `unknown`
/// handles a module instance whose expansion is not known yet (validate)
/// and says whether that is fine. Succeeds when every instance succeeded;
/// the instances' diagnostics in the order they finished.
pub async fn fan_out<W, Fut>(
    w: &Arc<Walk>,
    rc: &ResourceCtx,
    unknown: impl Fn(&ModulePath, &mut Vec<Diagnostic>) -> bool,
    work: W,
) -> Done
where
    W: Fn(Instance) -> Fut,
    Fut: std::future::Future<Output = Done> + Send + 'static,
{
    let mut ok = true;
    let mut out = Vec::new();
    let mut tasks = tokio::task::JoinSet::new();
    for module in w.values.instances_of(&rc.module_cfg) {
        let Some(exp) = expand_resource(w, rc, &module, &mut out) else {
            ok = false;
            continue;
        };
        if exp == Expansion::Unknown {
            ok &= unknown(&module, &mut out);
            continue;
        }
        for key in exp.keys() {
            let vars = instance_vars(&exp, &key);
            let addr = rc.addr(&module, key);
            let what = addr.to_string();
            let module = module.clone();
            let fut = work(Instance { module, addr, vars });
            tasks.spawn(guarded(w.phase, what, rc.res.range.clone(), fut));
        }
    }
    while let Some(r) = tasks.join_next().await {
        // A panic is caught (and reported) inside the task; a task that
        // still ends abnormally (cancelled) is a failure, never a success.
        match r {
            Ok((good, diags)) => {
                ok &= good;
                out.extend(diags);
            }
            Err(e) => {
                ok = false;
                out.push(Diagnostic::error(
                    "Internal error",
                    format!("The task for an instance of {} failed: {e}", rc.res.ty),
                    rc.res.range.clone(),
                ));
            }
        }
    }
    (ok, out)
}
