//! The plan phase's driver (validate too): runs the graph, planning every
//! resource instance. For each instance: the prior state, upgraded and
//! refreshed (or imported by an `import` block); the configuration with
//! the upstream planned values; validation; the provider's plan with every
//! contract check ([`crate::instance::plan_change`]); the action and
//! reason ([`crate::decide`]). Data sources are read now when their
//! configuration is known and nothing they depend on changes, and planned
//! as reads otherwise. What the plan produces (changes, drift, the
//! resources with pending changes, the instances expanded) lives here on
//! [`Planning`], not on the shared walk.
//!
//! Layering: imports nodes, instance, conditions, walk, decide, checks and
//! the bottom layers; never apply or run.

use crate::checks;
use crate::conditions;
use crate::decide;
use crate::graph::{NodeId, NodeKind};
use crate::instance::{
    change, import_block_id, import_now, plan_change, prevent_destroy, prior_value,
    read_data_source, resource_ctx, Deferrable, ResourceCtx,
};
use crate::model::{mark_config_and_schema, Action, Change};
use crate::nodes;
use crate::provider::ReadRequest;
use crate::sync::lock;
use crate::values::InstanceVars;
use crate::walk::{is_error, object_id, Done, Event, Phase, Walk};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use terrane_config::Diagnostic;
use terrane_schema::objchange::{normalize_from_legacy_sdk, planned_data_resource_object};
use terrane_state::{
    Change as StateChange, InstanceAddr, InstanceKey, Mode, ModulePath, ResourceAddr, Status,
};
use terrane_value::marks::{mark_paths, sensitive_paths};
use terrane_value::Value;

/// One plan (or validate) walk and what it produces.
pub struct Planning {
    pub walk: Arc<Walk>,
    /// Every planned change, in the order found.
    changes: Mutex<Vec<Change>>,
    /// Changes made outside terrane that refresh found.
    drift: Mutex<Vec<Change>>,
    /// Resource nodes with a pending (non no-op) change.
    pending: Mutex<HashSet<NodeId>>,
    /// The instance keys each resource (in each module instance) expanded
    /// to, recorded once per expansion.
    expanded: Mutex<HashMap<ResourceAddr, HashSet<InstanceKey>>>,
    /// What could not be planned yet, and the resource nodes concerned.
    deferred: Mutex<(Vec<crate::defer::Deferred>, HashSet<NodeId>)>,
    /// Whether no-op changes are kept (not for the refreshing plan before
    /// a destroy, whose changes nobody reads: at 100,000 objects they are
    /// a quarter of its memory).
    keep_no_ops: std::sync::atomic::AtomicBool,
}

impl Planning {
    pub fn new(walk: Arc<Walk>) -> Arc<Planning> {
        Arc::new(Planning {
            walk,
            changes: Mutex::new(Vec::new()),
            drift: Mutex::new(Vec::new()),
            pending: Mutex::new(HashSet::new()),
            expanded: Mutex::new(HashMap::new()),
            deferred: Mutex::new((Vec::new(), HashSet::new())),
            keep_no_ops: std::sync::atomic::AtomicBool::new(true),
        })
    }

    /// Planned no-op changes are not kept (see `keep_no_ops`).
    pub fn drop_no_ops(&self) {
        self.keep_no_ops
            .store(false, std::sync::atomic::Ordering::Relaxed);
    }

    /// Runs every node of the graph: resources planned here, the others
    /// by [`crate::nodes`].
    pub async fn walk_graph(self: &Arc<Self>) -> Vec<Diagnostic> {
        let p = self.clone();
        nodes::walk_graph(&self.walk, move |id| resource(p.clone(), id)).await
    }

    /// The planned changes (taken: asked once, after the walk).
    pub fn take_changes(&self) -> Vec<Change> {
        std::mem::take(&mut *lock(&self.changes))
    }

    /// What refresh found changed outside terrane (taken).
    pub fn take_drift(&self) -> Vec<Change> {
        std::mem::take(&mut *lock(&self.drift))
    }

    /// What was deferred (taken).
    pub fn take_deferred(&self) -> Vec<crate::defer::Deferred> {
        std::mem::take(&mut lock(&self.deferred).0)
    }

    /// Records a deferred part of resource node `node`.
    fn defer(&self, node: NodeId, d: crate::defer::Deferred) {
        let mut g = lock(&self.deferred);
        g.1.insert(node);
        g.0.push(d);
    }

    /// The instance keys the configuration expanded to, by resource
    /// (taken).
    pub fn take_expanded(&self) -> HashMap<ResourceAddr, HashSet<InstanceKey>> {
        std::mem::take(&mut *lock(&self.expanded))
    }
}

/// Plan (or validate) every instance of a resource node.
async fn resource(p: Arc<Planning>, id: NodeId) -> Done {
    let w = &p.walk;
    if w.phase == Phase::Validate && provider_absent(w, id) {
        // Validate before init: without the provider's schema the
        // resource is an unknown value to whatever refers to it.
        let node = &w.core.graph.nodes[id];
        if let NodeKind::Resource { mode, ty, name } = &node.kind {
            for module in w.values.instances_of(&node.module) {
                crate::expand::register_resource(
                    w,
                    &module,
                    *mode,
                    ty,
                    name,
                    crate::values::Expansion::Unknown,
                    terrane_value::Type::Dynamic,
                );
            }
        }
        return (true, Vec::new());
    }
    // Boxed: finding the schema and the provider is large and short-lived
    // work, and would otherwise stay in the resource's future.
    let rc = match Box::pin(resource_ctx(w, id)).await {
        Ok(rc) => Arc::new(rc),
        Err(d) => return (false, d),
    };
    if w.phase == Phase::Plan && w.opts.defer {
        if let Some(done) = defer_whole(&p, &rc) {
            return done;
        }
    }
    // Validate: a body whose instances are not known yet is checked once
    // with unknown instance names. Plan (deferral on): the resource is
    // deferred in that module instance.
    let unknown = |module: &ModulePath, out: &mut Vec<Diagnostic>| {
        if w.phase == Phase::Plan {
            let expr = rc.res.count.as_ref().or(rc.res.for_each.as_ref());
            let what = if rc.res.count.is_some() {
                "count"
            } else {
                "for_each"
            };
            p.defer(
                rc.node,
                deferred(
                    &rc,
                    crate::defer::resource_text(
                        &module.to_string(),
                        rc.mode,
                        &rc.res.ty,
                        &rc.res.name,
                        true,
                    ),
                    crate::defer::DeferReason::InstanceCountUnknown,
                    format!("its {what} value is not known until apply"),
                    expr.and_then(|e| e.range.clone()),
                ),
            );
            return true;
        }
        let inst = InstanceVars {
            count_index: rc.res.count.as_ref().map(|_| 0),
            each: rc
                .res
                .for_each
                .as_ref()
                .map(|_| (String::new(), Value::unknown(terrane_value::Type::Dynamic))),
            self_value: None,
        };
        let (_, d) = rc.config(w, module, inst);
        let ok = !d.iter().any(is_error);
        out.extend(d);
        ok
    };
    let expanding = |module: &ModulePath, keys: &[InstanceKey]| {
        // Room for every instance's change at once: growing a list of
        // large elements one doubling at a time copies every change made
        // so far.
        lock(&p.changes).reserve(keys.len());
        let resource = rc.addr(module, InstanceKey::None).resource;
        lock(&p.expanded)
            .entry(resource)
            .or_default()
            .extend(keys.iter().cloned());
    };
    let planning = p.clone();
    nodes::fan_out(w, &rc, unknown, expanding, move |i, rc| {
        let p = planning.clone();
        async move {
            let _permit = p.walk.limit.acquire().await;
            let mut out = Vec::new();
            // An instance's planning future is large: it is built on the
            // heap once it may run, so waiting tasks stay small and
            // spawning does not copy it around.
            let ok = if rc.mode == Mode::Data {
                Box::pin(plan_data(&p, &mut out, &rc, &i.module, i.addr, i.vars)).await
            } else {
                let address = crate::provider::pulumi::address_for(&*rc.provider, &i.addr);
                let plan = plan_managed(&p, &mut out, &rc, &i.module, i.addr, i.vars);
                crate::provider::pulumi::with_address(address, Box::pin(plan)).await
            };
            (ok, out)
        }
    })
    .await
}

/// The first module call above a resource whose expansion is unknown:
/// the module instance address with `[*]` and the rest of the path as
/// configuration names (`module.a["x"].module.b[*].module.c[*]`).
fn unknown_module(w: &Walk, module_cfg: &[String]) -> Option<String> {
    for i in 0..module_cfg.len() {
        for parent in w.values.instances_of(&module_cfg[..i]) {
            let exp = w
                .values
                .with(&parent, |m| m.calls.get(&module_cfg[i]).cloned())
                .flatten();
            if exp == Some(crate::values::Expansion::Unknown) {
                let mut s = parent.to_string();
                for call in &module_cfg[i..] {
                    if !s.is_empty() {
                        s.push('.');
                    }
                    s.push_str(&format!("module.{call}[*]"));
                }
                return Some(s);
            }
        }
    }
    None
}

/// A resource wholly deferred before expanding: one that depends on a
/// deferred resource, or one inside a module call whose expansion is not
/// known. Its values are unknown to whatever refers to it.
fn defer_whole(p: &Planning, rc: &ResourceCtx) -> Option<Done> {
    use crate::defer::{resource_text, DeferReason};
    let w = &*p.walk;
    let graph = &w.core.graph;
    let upstream = {
        let g = lock(&p.deferred);
        graph
            .resource_dependencies(rc.node)
            .into_iter()
            .find(|d| g.1.contains(d))
    };
    let repeated = rc.res.count.is_some() || rc.res.for_each.is_some();
    let (addr, reason, detail) = if let Some(up) = upstream {
        let node = &graph.nodes[up];
        let up_name = match &node.kind {
            NodeKind::Resource { mode, ty, name } => {
                let module: String = node.module.iter().map(|m| format!("module.{m}.")).collect();
                format!("{module}{}", resource_text("", *mode, ty, name, false))
            }
            _ => String::from("a deferred resource"),
        };
        let module = unknown_module(w, &rc.module_cfg).unwrap_or_default();
        let addr = resource_text(&module, rc.mode, &rc.res.ty, &rc.res.name, repeated);
        let detail = format!("it depends on {up_name}, which is deferred");
        (addr, DeferReason::DeferredPrereq, detail)
    } else {
        let module = unknown_module(w, &rc.module_cfg)?;
        let addr = resource_text(&module, rc.mode, &rc.res.ty, &rc.res.name, repeated);
        let call = module
            .split(".module.")
            .last()
            .unwrap_or(&module)
            .to_string();
        let call = call
            .strip_prefix("module.")
            .unwrap_or(&call)
            .trim_end_matches("[*]");
        let detail = format!("the count or for_each of module \"{call}\" is not known until apply");
        (addr, DeferReason::InstanceCountUnknown, detail)
    };
    for module in w.values.instances_of(&rc.module_cfg) {
        crate::expand::register_resource(
            w,
            &module,
            rc.mode,
            &rc.res.ty,
            &rc.res.name,
            crate::values::Expansion::Unknown,
            (*rc.ty).clone(),
        );
    }
    let range = rc.res.range.clone();
    p.defer(rc.node, deferred(rc, addr, reason, detail, range));
    Some((true, Vec::new()))
}

/// A provider's `Deferred` answer for one instance: listed as deferred
/// with the provider's reason when deferral is on; Terraform's error when
/// it is off (the provider should not have deferred).
fn provider_deferred(
    p: &Planning,
    out: &mut Vec<Diagnostic>,
    rc: &ResourceCtx,
    addr: &InstanceAddr,
    reason: crate::provider::DeferredReason,
    call: &str,
) -> bool {
    if !p.walk.opts.defer {
        out.push(Diagnostic::error(
            "Provider deferred changes when Terraform did not allow deferrals",
            format!("The provider signaled a deferred action for \"{addr}\", but in this context deferrals are disabled. This is a bug in the provider, please file an issue with the provider developers."),
            rc.res.range.clone(),
        ));
        return false;
    }
    use crate::defer::DeferReason as R;
    use crate::provider::DeferredReason as P;
    let reason = match reason {
        P::ProviderConfigUnknown => R::ProviderConfigUnknown,
        P::AbsentPrereq => R::AbsentPrereq,
        // An unspecified reason: the configuration is what it waits on.
        _ => R::ResourceConfigUnknown,
    };
    let detail = format!(
        "the provider deferred it in {call} ({})",
        reason.json().replace('_', " ")
    );
    p.defer(
        rc.node,
        deferred(rc, addr.to_string(), reason, detail, rc.res.range.clone()),
    );
    true
}

fn deferred(
    rc: &ResourceCtx,
    addr: String,
    reason: crate::defer::DeferReason,
    detail: String,
    range: Option<terrane_config::SourceRange>,
) -> crate::defer::Deferred {
    crate::defer::Deferred {
        addr,
        module_cfg: rc.module_cfg.clone(),
        mode: rc.mode,
        ty: rc.res.ty.clone(),
        name: rc.res.name.clone(),
        reason,
        detail,
        range,
    }
}

async fn plan_data(
    p: &Planning,
    out: &mut Vec<Diagnostic>,
    rc: &ResourceCtx,
    module: &ModulePath,
    addr: InstanceAddr,
    inst: InstanceVars,
) -> bool {
    let w = &*p.walk;
    let (config, d) = rc.config(w, module, inst);
    let failed = d.iter().any(is_error);
    out.extend(d);
    if failed {
        return false;
    }
    let plain = config.unmark_deep();
    let valid = rc
        .provider
        .validate_data_resource_config(&rc.res.ty, &plain)
        .await;
    if rc.answer(out, valid, &addr, &rc.res.range).is_none() {
        return false;
    }
    let ty = rc.ty.clone();
    if w.phase == Phase::Validate {
        rc.set_value(w, module, addr.key.clone(), Value::unknown((*ty).clone()));
        return true;
    }
    let pending_dep = {
        let pending = lock(&p.pending);
        w.core
            .graph
            .resource_dependencies(rc.node)
            .iter()
            .any(|d| pending.contains(d))
    };
    let (action, reason) = match decide::data_source(plain.is_wholly_known(), pending_dep) {
        decide::DataPlan::Defer(action, reason) => (action, reason),
        decide::DataPlan::ReadNow => {
            return read_now(p, out, rc, module, addr, &config).await;
        }
    };
    let planned = planned_data_resource_object(&rc.schema.block, &plain);
    // Marked as a read result is: where the configuration and where the
    // schema say sensitive (an unknown attribute too).
    let after = mark_config_and_schema(&planned, &config, &rc.schema.block);
    rc.set_value(w, module, addr.key.clone(), after.clone());
    lock(&p.pending).insert(rc.node);
    lock(&p.changes).push(Change {
        addr,
        deposed: None,
        provider: rc.provider_key.clone(),
        action,
        before: Value::null((*ty).clone()),
        after,
        ty: (*ty).clone(),
        schema_version: rc.schema.version,
        requires_replace: Vec::new(),
        planned_private: Vec::new(),
        prior_private: Vec::new(),
        reason: Some(reason),
        importing: None,
        dependencies: rc.dependencies.clone(),
        create_before_destroy: false,
        schema: Some(rc.block.clone()),
    });
    true
}

/// Whether a resource node's provider is one `validate` runs without (see
/// [`crate::Engine::load_for_validate`]).
fn provider_absent(w: &Walk, id: NodeId) -> bool {
    if w.core.absent.is_empty() {
        return false;
    }
    let node = &w.core.graph.nodes[id];
    let NodeKind::Resource { mode, ty, name } = &node.kind else {
        return false;
    };
    let Some(res) = w
        .module_config(&node.module)
        .and_then(|c| c.module.resource(*mode == Mode::Data, ty, name).cloned())
    else {
        return false;
    };
    let (pname, alias) = crate::graph::resource_provider(&res);
    let key = crate::walk::resolved_provider_key(&w.core, &node.module, &pname, alias.as_deref());
    w.core.absent.contains(&key.addr)
}

/// Reads a data source during plan and records its value.
async fn read_now(
    p: &Planning,
    out: &mut Vec<Diagnostic>,
    rc: &ResourceCtx,
    module: &ModulePath,
    addr: InstanceAddr,
    config: &Value,
) -> bool {
    let w = &*p.walk;
    let value = match read_data_source(out, rc, &addr, config).await {
        None => return false,
        Some(Deferrable::Done(v)) => v,
        Some(Deferrable::Deferred(reason)) => {
            // Nothing read: what reads it waits with it.
            rc.set_value(
                w,
                module,
                addr.key.clone(),
                Value::unknown((*rc.ty).clone()),
            );
            return provider_deferred(p, out, rc, &addr, reason, "ReadDataSource");
        }
    };
    let object = rc.object(&value, Vec::new(), Status::Ready, false);
    lock(&w.state).apply(StateChange::SetObject {
        addr: addr.clone(),
        deposed: None,
        provider: rc.provider_key.to_string(),
        object,
    });
    rc.set_value(w, module, addr.key.clone(), value);
    true
}

/// Whether the user asked to replace this instance (`-replace`).
fn replace_requested(w: &Walk, addr: &InstanceAddr) -> bool {
    if w.opts.replace.is_empty() {
        return false;
    }
    let text = addr.to_string();
    w.opts.replace.iter().any(|r| r == &text)
}

/// Whether a `replace_triggered_by` reference changes in this plan.
fn replace_triggered(p: &Planning, rc: &ResourceCtx) -> bool {
    let w = &*p.walk;
    let Some(e) = &rc.res.lifecycle.replace_triggered_by else {
        return false;
    };
    let pending = lock(&p.pending);
    decide::replace_triggered(&e.refs, |mode, ty, name| {
        let node = crate::graph::Node {
            module: rc.module_cfg.clone(),
            kind: NodeKind::Resource {
                mode,
                ty: ty.to_string(),
                name: name.to_string(),
            },
        };
        w.core
            .graph
            .id(&node)
            .is_some_and(|id| pending.contains(&id))
    })
}

/// An instance's prior state as planning starts from it: upgraded and
/// refreshed (unless `-refresh=false`), or imported by an `import` block.
struct Prior {
    value: Value,
    private: Vec<u8>,
    tainted: bool,
    /// The import block's ID when this plan imports the object.
    importing: Option<String>,
}

/// The prior state of `addr` ([`Prior`]), or what planning the instance
/// returns when it ends here (a failure, or a deferral).
async fn prior_state(
    p: &Planning,
    out: &mut Vec<Diagnostic>,
    rc: &ResourceCtx,
    module: &ModulePath,
    addr: &InstanceAddr,
) -> Result<Prior, bool> {
    let w = &*p.walk;
    let ty = rc.ty.clone();
    let range = &rc.res.range;
    // Prior state: upgraded, then refreshed; or imported by an `import` block.
    let stored = lock(&w.state).object(addr, None).cloned();
    let mut importing = None;
    if stored.is_none() && w.phase == Phase::Plan {
        if let Some(id) = import_block_id(w, out, rc, module, addr) {
            w.core.emit(Event::PreparingImport { addr, id: &id });
            match import_now(out, rc, addr, &id).await {
                Some(Deferrable::Deferred(reason)) => {
                    rc.set_value(w, module, addr.key.clone(), Value::unknown((*ty).clone()));
                    return Err(provider_deferred(
                        p,
                        out,
                        rc,
                        addr,
                        reason,
                        "ImportResourceState",
                    ));
                }
                Some(Deferrable::Done((v, p))) => {
                    let object = rc.object(&v, p, Status::Ready, false);
                    lock(&w.state).apply(StateChange::SetObject {
                        addr: addr.clone(),
                        deposed: None,
                        provider: rc.provider_key.to_string(),
                        object,
                    });
                    importing = Some(id);
                }
                None => return Err(false),
            }
        }
    }
    let stored = if importing.is_some() {
        lock(&w.state).object(addr, None).cloned()
    } else {
        stored
    };
    let (mut value, mut private, tainted) = match &stored {
        Some(o) => match prior_value(rc, addr, o).await {
            Ok((v, warnings)) => (
                {
                    out.extend(warnings);
                    v
                },
                o.private.clone().unwrap_or_default(),
                o.status == Status::Tainted,
            ),
            Err(d) => {
                out.extend(d);
                return Err(false);
            }
        },
        None => (Value::null((*ty).clone()), Vec::new(), false),
    };
    if w.phase == Phase::Plan && w.opts.refresh && !value.is_null() {
        w.core.emit(Event::Refreshing {
            addr,
            id: object_id(&value),
        });
        let read = rc
            .provider
            .read_resource(ReadRequest {
                type_name: &rc.res.ty,
                prior_state: &value.unmark_deep(),
                private: &private,
                provider_meta: None,
            })
            .await;
        let Some(resp) = rc.answer(out, read, addr, range) else {
            return Err(false);
        };
        if let Some(reason) = resp.deferred {
            rc.set_value(w, module, addr.key.clone(), value.clone());
            return Err(provider_deferred(p, out, rc, addr, reason, "ReadResource"));
        }
        if let Some(d) =
            checks::check_refresh(&rc.ty, rc.provider_label(), addr, &resp.new_state, range)
        {
            out.push(d);
            return Err(false);
        }
        // As Terraform does with every read: the legacy SDK's null for "no
        // blocks" and the like settled (objchange::normalize_from_legacy_sdk).
        let read = normalize_from_legacy_sdk(&rc.schema.block, &resp.new_state);
        let refreshed = mark_paths(&read, &sensitive_paths(&value));
        let drifted = !refreshed.eq_ignoring_refinements(&value);
        if drifted {
            lock(&p.drift).push(change(
                rc,
                addr,
                decide::drift(&refreshed),
                value.clone(),
                refreshed.clone(),
                &ty,
            ));
        }
        // An object stored at an older schema version (or as a pre-0.12
        // flatmap) was upgraded above:
        // the refreshed state keeps it at the current version (not drift),
        // as Terraform's does.
        let upgraded = stored.as_ref().is_some_and(|o| {
            o.schema_version as i64 != rc.schema.version || o.attributes_flat.is_some()
        });
        if drifted || upgraded {
            let mut st = lock(&w.state);
            if refreshed.is_null() {
                st.apply(StateChange::RemoveObject {
                    addr: addr.clone(),
                    deposed: None,
                });
            } else {
                let status = if tainted {
                    Status::Tainted
                } else {
                    Status::Ready
                };
                let cbd = stored.as_ref().is_some_and(|o| o.create_before_destroy);
                st.apply(StateChange::SetObject {
                    addr: addr.clone(),
                    deposed: None,
                    provider: rc.provider_key.to_string(),
                    object: rc.object(&refreshed, resp.private.clone(), status, cbd),
                });
            }
        }
        value = refreshed;
        private = resp.private;
    }
    Ok(Prior {
        value,
        private,
        tainted,
        importing,
    })
}

async fn plan_managed(
    p: &Planning,
    out: &mut Vec<Diagnostic>,
    rc: &ResourceCtx,
    module: &ModulePath,
    addr: InstanceAddr,
    inst: InstanceVars,
) -> bool {
    let w = &*p.walk;
    let ty = rc.ty.clone();
    let range = &rc.res.range;
    // The configuration and its validation do not depend on the prior
    // state: the configuration is evaluated first and the provider
    // validates it while the prior state is upgraded and refreshed, one
    // round trip to the provider less per refreshed instance. Outcomes are
    // still taken in Terraform's order (prior state, preconditions,
    // configuration, validation) and nothing after a failed step is
    // reported. A refresh-only plan neither evaluates nor validates it.
    let configured = (w.opts.mode != crate::model::PlanMode::RefreshOnly)
        .then(|| rc.config(w, module, inst.clone()));
    let plain_config = configured
        .as_ref()
        .filter(|(_, d)| !d.iter().any(is_error))
        .map(|(config, _)| config.unmark_deep());
    let validating = async move {
        match plain_config {
            Some(c) => {
                let valid = rc.provider.validate_resource_config(&rc.res.ty, &c).await;
                Some((c, valid))
            }
            None => None,
        }
    };
    let (prior, validated) = tokio::join!(prior_state(p, out, rc, module, &addr), validating);
    let Prior {
        value: prior,
        private,
        tainted,
        importing,
    } = match prior {
        Ok(prior) => prior,
        Err(done) => return done,
    };
    let Some((config, d)) = configured else {
        // Refresh-only: the refreshed object is the instance's value.
        rc.set_value(w, module, addr.key.clone(), prior.clone());
        return true;
    };
    // Preconditions, then the configuration.
    if !conditions::enforce(
        w,
        out,
        module,
        &inst,
        &rc.res.lifecycle.preconditions,
        "Resource precondition failed",
        &addr,
    ) {
        return false;
    }
    let inst_for_post = inst;
    out.extend(d);
    // None: the configuration had errors (just reported) and was not
    // validated.
    let Some((plain_config, valid)) = validated else {
        return false;
    };
    if rc.answer(out, valid, &addr, range).is_none() {
        return false;
    }
    if w.phase == Phase::Validate {
        rc.set_value(w, module, addr.key.clone(), Value::unknown((*ty).clone()));
        return true;
    }
    let cfg_for_plan = rc.ignore_changes(&prior.unmark_deep(), &plain_config);
    let plain_prior = prior.unmark_deep();
    let Some(resp) = plan_change(out, rc, &addr, &plain_prior, &private, &cfg_for_plan, None).await
    else {
        return false;
    };
    if let Some(reason) = resp.deferred {
        // The provider cannot plan it yet: its value is what the provider
        // planned, and the instance waits for the next plan.
        let after = mark_config_and_schema(&resp.planned_state, &config, &rc.schema.block);
        rc.set_value(w, module, addr.key.clone(), after);
        return provider_deferred(p, out, rc, &addr, reason, "PlanResourceChange");
    }
    let mut planned = resp.planned_state;
    let mut planned_private = resp.planned_private;
    let requires = decide::requires_replace(resp.requires_replace, &plain_prior, &planned);
    let mut cbd = rc.cbd(w);
    if cbd && crate::provider::pulumi::delete_before_replace(&planned_private) {
        cbd = false;
        out.push(Diagnostic::warning(
            "Replacement deletes first",
            format!("The provider of {addr} must delete the old object before it creates the replacement (deleteBeforeReplace), so create_before_destroy does not apply to this replacement."),
            range.clone(),
        ));
    }
    let (action, reason) = decide::managed(&decide::Facts {
        prior: &plain_prior,
        planned: &planned,
        tainted,
        replace_requested: replace_requested(w, &addr),
        replace_triggered: replace_triggered(p, rc),
        requires_replace: &requires,
        create_before_destroy: cbd,
    });
    if action == Action::NoOp && planned == plain_prior {
        // Nothing changes: the instance's value is the prior object itself,
        // shared, rather than the provider's equal copy of it held beside
        // the prior for the rest of the plan.
        planned = plain_prior.clone();
    }
    if action.is_replace() {
        // Plan again as a create so computed attributes become unknown.
        let null = Value::null((*ty).clone());
        let Some(resp) = plan_change(out, rc, &addr, &null, &[], &cfg_for_plan, None).await else {
            return false;
        };
        planned = resp.planned_state;
        planned_private = resp.planned_private;
    }
    let after = mark_config_and_schema(&planned, &config, &rc.schema.block);
    let post = InstanceVars {
        self_value: Some(after.clone()),
        ..inst_for_post
    };
    if !conditions::enforce(
        w,
        out,
        module,
        &post,
        &rc.res.lifecycle.postconditions,
        "Resource postcondition failed",
        &addr,
    ) {
        return false;
    }
    rc.set_value(w, module, addr.key.clone(), after.clone());
    if action != Action::NoOp {
        lock(&p.pending).insert(rc.node);
    }
    if action.is_replace() && prevent_destroy(w, rc) {
        out.push(Diagnostic::error(
            "Instance cannot be destroyed",
            format!("Resource {addr} has lifecycle.prevent_destroy set, but the plan calls for this resource to be destroyed. To avoid this error and continue with the plan, either disable lifecycle.prevent_destroy or reduce the scope of the plan using the -target option."),
            range.clone(),
        ));
        return false;
    }
    let mut c = change(rc, &addr, action, prior, after, &ty);
    c.importing = importing;
    c.requires_replace = requires;
    c.planned_private = planned_private;
    c.prior_private = private;
    c.reason = reason;
    c.create_before_destroy = cbd;
    if c.action != Action::NoOp || p.keep_no_ops.load(std::sync::atomic::Ordering::Relaxed) {
        lock(&p.changes).push(c);
    }
    true
}
