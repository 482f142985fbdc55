//! The nodes that are not resources: input variables (with their
//! validation rules), locals, outputs (with their preconditions), module
//! calls, provider configurations (validated and configured), and
//! `ephemeral` blocks (handed to [`crate::ephemeral`]); the expansions
//! they evaluate come from [`crate::expand`]. Both phase drivers run these
//! the same way.
//!
//! Layering: imports ephemeral, expand, instance, conditions, walk, checks,
//! decode and the bottom layers; never plan, apply or run.

use crate::expand::{expand_resource, expansion, instance_vars};
use crate::graph::{NodeId, NodeKind};
use crate::instance::ResourceCtx;
use crate::sync::lock;
use crate::values::{Expansion, InstanceVars};
use crate::walk::{guarded, is_error, provider_instance, schema_of, Done, Phase, Walk};
use std::collections::BTreeMap;
use std::sync::Arc;
use terrane_config::{DiagId, Diagnostic, Module};
use terrane_eval::Evaluator;
use terrane_state::{InstanceAddr, InstanceKey, ModulePath};
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
    let mut out = w
        .walk_graph(move |id| {
            let (walk, resource) = (walk.clone(), resource.clone());
            async move {
                if crate::module_override::skipped(&walk, id) {
                    (true, Vec::new())
                } else if is_resource(&walk, id) {
                    resource(id).await
                } else {
                    // Not inline: the other nodes' futures (a provider's
                    // configuration above all) would make every
                    // resource's as large as theirs.
                    Box::pin(node(&walk, id)).await
                }
            }
        })
        .await;
    // The phase is over: what it opened is closed, and forgotten.
    out.extend(w.close_ephemerals().await);
    out
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
            let key =
                crate::walk::resolved_provider_key(&w.core, &node.module, name, alias.as_deref());
            // Validate before init: an absent provider's configuration
            // cannot be checked without its schema.
            if w.phase == Phase::Validate && w.core.absent.contains(&key.addr) {
                true
            } else {
                provider_node(w, &node.module, name, alias.as_deref(), &mut out).await
            }
        }
        NodeKind::Ephemeral { ty, name } => crate::ephemeral::node(w, id, ty, name, &mut out).await,
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
            let inst = instance_vars(&exp, &key);
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
    if let Some(given) = crate::module_override::outputs(w, module) {
        for inst in w.values.instances_of(module) {
            let v = given
                .get_attr(name)
                .cloned()
                .unwrap_or(Value::null(Type::Dynamic));
            w.values
                .update(&inst, |m| m.outputs.insert(name.to_string(), v));
        }
        return true;
    }
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
        let v = match crate::output_type::convert(w, o, v) {
            Ok(v) => v,
            Err(d) => {
                out.push(d);
                ok = false;
                continue;
            }
        };
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
        let v = if o.ephemeral { v.mark_ephemeral() } else { v };
        w.values
            .update(&inst, |m| m.outputs.insert(name.to_string(), v));
    }
    ok
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
    let repeated = w.module_config(module).and_then(|c| {
        c.module
            .providers
            .iter()
            .find(|p| p.name == name && p.alias.as_deref() == alias && p.for_each.is_some())
    });
    if let Some(cfg) = repeated {
        return provider_instances(w, module, cfg, key, out).await;
    }
    configure_provider(w, module, name, alias, key, InstanceVars::default(), out).await
}

/// The instances of a provider block with `for_each` (OpenTofu 1.9), one
/// per key, each configured with `each.key`/`each.value` bound; their keys
/// are `key` with the for_each key. The argument is evaluated statically,
/// and never deferred.
async fn provider_instances(
    w: &Arc<Walk>,
    module: &[String],
    cfg: &terrane_config::ProviderConfig,
    key: crate::provider::ProviderConfigKey,
    out: &mut Vec<Diagnostic>,
) -> bool {
    let Some(fe) = cfg.for_each.as_ref() else {
        return false;
    };
    let refused = crate::provider_each::static_context(cfg);
    if !refused.is_empty() {
        out.extend(refused);
        return false;
    }
    // A module with provider configurations is never repeated: its one
    // instance is the path without keys.
    let here = ModulePath(
        module
            .iter()
            .map(|m| (m.clone(), InstanceKey::None))
            .collect(),
    );
    let (name, alias) = (cfg.name.as_str(), cfg.alias.as_deref());
    match expansion(w, &here, None, Some(fe)) {
        Err(d) => {
            out.extend(d);
            false
        }
        Ok(Expansion::ForEach(keys)) => {
            let mut ok = true;
            for (k, v) in keys {
                let vars = InstanceVars {
                    each: Some((k.clone(), v)),
                    ..InstanceVars::default()
                };
                let ik = key.clone().with_key(k);
                ok &= configure_provider(w, module, name, alias, ik, vars, out).await;
            }
            ok
        }
        // Validate without values: the block is checked once, with an
        // unknown `each`, under the configuration's own key.
        Ok(Expansion::Unknown) if w.phase == Phase::Validate => {
            let vars = InstanceVars {
                each: Some((String::new(), Value::unknown(Type::Dynamic))),
                ..InstanceVars::default()
            };
            configure_provider(w, module, name, alias, key, vars, out).await
        }
        // Known only at apply (a local derived from a resource).
        Ok(_) => {
            let what = format!("provider.{name}.{}.for_each", alias.unwrap_or(""));
            out.push(Diagnostic::error(
                "Dynamic value in static context",
                format!("Unable to use a value that is not known until apply in static context, which is required by {what}"),
                fe.range.clone(),
            ));
            false
        }
    }
}

/// Starts, validates and (but in validate) configures the provider
/// instance `key` of the configuration `name`/`alias` of `module`, its
/// block evaluated with `vars` (`each.*` of a configuration with for_each).
async fn configure_provider(
    w: &Arc<Walk>,
    module: &[String],
    name: &str,
    alias: Option<&str>,
    key: crate::provider::ProviderConfigKey,
    vars: InstanceVars,
    out: &mut Vec<Diagnostic>,
) -> bool {
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
        Ok(i) => match &w.opts.doubles {
            Some(d) => d.provider(&key, i),
            None => i,
        },
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
        let scope = w.scope(&here, vars);
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
/// and says whether that is fine. `expanding` learns how many instances a
/// module instance expands to before any of them starts (the plan makes
/// room for their changes at once). Succeeds when every instance
/// succeeded; the instances' diagnostics in the order they finished (a
/// plan's large expansion runs on every core, [`crate::spread`]: its
/// diagnostics in the order of its instances).
///
/// An instance's work is made only when it starts, and at most
/// [`window`] instances of an expansion run at once on the walk's thread
/// (the spread runners have windows of their own): the instances of a
/// large expansion wait as their addresses, not as thousands of futures of
/// kilobytes each, all queued for the `-parallelism` permits.
pub async fn fan_out<W, Fut>(
    w: &Arc<Walk>,
    rc: &Arc<ResourceCtx>,
    unknown: impl Fn(&ModulePath, &mut Vec<Diagnostic>) -> bool,
    expanding: impl Fn(&ModulePath, &[InstanceKey]),
    work: W,
) -> Done
where
    W: Fn(Instance, Arc<ResourceCtx>) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Done> + Send + 'static,
{
    let work = Arc::new(work);
    let window = window(w.opts.parallelism);
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
        let keys = exp.keys();
        expanding(&module, &keys);
        let mut spread = crate::spread::pool_for(w.phase, keys.len(), &*rc.provider)
            .map(|pool| crate::spread::Spread::start(&mut tasks, pool, w.opts.parallelism));
        for key in keys {
            let vars = instance_vars(&exp, &key);
            // What a panic report names: made only if the instance panics.
            let site = {
                let (rc, module, key) = (rc.clone(), module.clone(), key.clone());
                move || (rc.addr(&module, key).to_string(), rc.res.range.clone())
            };
            let addr = rc.addr(&module, key);
            // The provider instance of a configuration with for_each.
            let bound = match crate::provider_each::bind(w, rc, &module, &addr, &vars).await {
                Ok(b) => b,
                Err(d) => {
                    ok = false;
                    out.extend(d);
                    continue;
                }
            };
            let start = {
                let (work, module) = (work.clone(), module.clone());
                move || work(Instance { module, addr, vars }, bound)
            };
            let fut = guarded(w.phase, site, start);
            match &mut spread {
                Some(s) => s.push(fut),
                None => {
                    let take = |r| joined(rc, r, &mut ok, &mut out);
                    spawn_within(&mut tasks, window, fut, take).await;
                }
            }
        }
        if let Some(s) = spread {
            s.finish();
        }
    }
    while let Some(r) = tasks.join_next().await {
        joined(rc, r, &mut ok, &mut out);
    }
    (ok, out)
}

/// How many instances of one expansion [`fan_out`] runs at once on the
/// walk's thread: enough for every `-parallelism` permit to be in use by
/// this resource alone, with as many again waiting their turn (so a permit
/// given back is taken at once), and never fewer than 16.
fn window(parallelism: usize) -> usize {
    parallelism.saturating_mul(2).max(16)
}

/// Spawns `fut` into `tasks` once fewer than `window` of their tasks are
/// left, handing the results of those that finish meanwhile to `take`.
async fn spawn_within<F>(
    tasks: &mut tokio::task::JoinSet<Done>,
    window: usize,
    fut: F,
    mut take: impl FnMut(Result<Done, tokio::task::JoinError>),
) where
    F: std::future::Future<Output = Done> + Send + 'static,
{
    while tasks.len() >= window {
        match tasks.join_next().await {
            Some(r) => take(r),
            None => break,
        }
    }
    tasks.spawn(fut);
}

/// Takes one finished instance task's result into `ok` and `out`. A panic
/// is caught (and reported) inside the task; a task that still ends
/// abnormally (cancelled) is a failure, never a success.
fn joined(
    rc: &ResourceCtx,
    r: Result<Done, tokio::task::JoinError>,
    ok: &mut bool,
    out: &mut Vec<Diagnostic>,
) {
    match r {
        Ok((good, diags)) => {
            *ok &= good;
            out.extend(diags);
        }
        Err(e) => {
            *ok = false;
            out.push(Diagnostic::error(
                "Internal error",
                format!("The task for an instance of {} failed: {e}", rc.res.ty),
                rc.res.range.clone(),
            ));
        }
    }
}

#[cfg(test)]
mod window_tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Counts the instance works alive (made and not yet dropped), and the
    /// most at once.
    #[derive(Default)]
    struct Alive {
        now: AtomicUsize,
        peak: AtomicUsize,
        finished: AtomicUsize,
    }

    struct Made(Arc<Alive>);

    impl Made {
        fn new(a: &Arc<Alive>) -> Made {
            let now = a.now.fetch_add(1, Ordering::SeqCst) + 1;
            a.peak.fetch_max(now, Ordering::SeqCst);
            Made(a.clone())
        }
    }

    impl Drop for Made {
        fn drop(&mut self) {
            self.0.now.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// `n` instances, each a work that yields a few times, go through
    /// `guarded` and `spawn_within` as `fan_out` sends them on the walk's
    /// thread: every one runs, and no more than the window of works is
    /// ever made at once (without the window, or with works made when the
    /// task is made, all `n` would be).
    fn check(name: &str, n: usize, parallelism: usize) {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let alive = Arc::new(Alive::default());
        let window = window(parallelism);
        let failed = rt.block_on(async {
            let mut tasks = tokio::task::JoinSet::new();
            let mut failed = 0;
            let mut take = |r: Result<Done, tokio::task::JoinError>| {
                if !matches!(r, Ok((true, _))) {
                    failed += 1;
                }
            };
            for i in 0..n {
                let alive = alive.clone();
                let start = move || {
                    let made = Made::new(&alive);
                    async move {
                        for _ in 0..=(i % 5) {
                            tokio::task::yield_now().await;
                        }
                        made.0.finished.fetch_add(1, Ordering::SeqCst);
                        drop(made);
                        (true, vec![])
                    }
                };
                let site = move || (format!("instance {i}"), None);
                let fut = guarded(Phase::Apply, site, start);
                spawn_within(&mut tasks, window, fut, &mut take).await;
            }
            while let Some(r) = tasks.join_next().await {
                take(r);
            }
            failed
        });
        assert_eq!(failed, 0, "{name}: failed instances");
        assert_eq!(alive.finished.load(Ordering::SeqCst), n, "{name}: finished");
        let peak = alive.peak.load(Ordering::SeqCst);
        assert!(
            peak <= window,
            "{name}: {peak} works alive at once, window {window}"
        );
        assert!(peak > 1 || n < 2, "{name}: instances never overlapped");
    }

    #[test]
    fn instances_are_made_within_the_window() {
        let cases = [
            ("ten thousand at parallelism 10", 10_000, 10),
            ("parallelism of one", 500, 1),
            ("fewer than the window", 5, 10),
            ("large parallelism", 3_000, 256),
        ];
        for (name, n, parallelism) in cases {
            check(name, n, parallelism);
        }
    }
}
