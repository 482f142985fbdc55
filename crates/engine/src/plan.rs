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
    read_data_source, resource_ctx, ResourceCtx,
};
use crate::model::{mark_config_and_schema, Action, Change};
use crate::nodes;
use crate::provider::ReadRequest;
use crate::sync::lock;
use crate::values::InstanceVars;
use crate::walk::{is_error, object_id, Done, Event, Phase, Walk};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use terrane_config::Diagnostic;
use terrane_schema::objchange::{normalize_from_legacy_sdk, planned_data_resource_object};
use terrane_state::{Change as StateChange, InstanceAddr, Mode, ModulePath, Status};
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
    /// Instances the resource nodes expanded to.
    expanded: Mutex<HashSet<InstanceAddr>>,
}

impl Planning {
    pub fn new(walk: Arc<Walk>) -> Arc<Planning> {
        Arc::new(Planning {
            walk,
            changes: Mutex::new(Vec::new()),
            drift: Mutex::new(Vec::new()),
            pending: Mutex::new(HashSet::new()),
            expanded: Mutex::new(HashSet::new()),
        })
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

    /// The instances the configuration expanded to (taken).
    pub fn take_expanded(&self) -> HashSet<InstanceAddr> {
        std::mem::take(&mut *lock(&self.expanded))
    }
}

/// Plan (or validate) every instance of a resource node.
async fn resource(p: Arc<Planning>, id: NodeId) -> Done {
    let w = &p.walk;
    let rc = match resource_ctx(w, id).await {
        Ok(rc) => Arc::new(rc),
        Err(d) => return (false, d),
    };
    // Validate: a body whose instances are not known yet is checked once
    // with unknown instance names.
    let unknown = |module: &ModulePath, out: &mut Vec<Diagnostic>| {
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
    nodes::fan_out(w, &rc, unknown, |i| {
        let (p, rc) = (p.clone(), rc.clone());
        async move {
            lock(&p.expanded).insert(i.addr.clone());
            let _permit = p.walk.limit.acquire().await;
            let mut out = Vec::new();
            // An instance's planning future is large: it is built on the
            // heap once it may run, so waiting tasks stay small and
            // spawning does not copy it around.
            let ok = if rc.mode == Mode::Data {
                Box::pin(plan_data(&p, &mut out, &rc, &i.module, i.addr, i.vars)).await
            } else {
                Box::pin(plan_managed(&p, &mut out, &rc, &i.module, i.addr, i.vars)).await
            };
            (ok, out)
        }
    })
    .await
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
    if rc
        .answer(out, valid, &addr.to_string(), &rc.res.range)
        .is_none()
    {
        return false;
    }
    let ty = rc.ty.clone();
    if w.phase == Phase::Validate {
        rc.set_value(w, module, addr.key.clone(), Value::unknown(ty));
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
    let after = mark_paths(&planned, &sensitive_paths(&config));
    rc.set_value(w, module, addr.key.clone(), after.clone());
    lock(&p.pending).insert(rc.node);
    lock(&p.changes).push(Change {
        addr,
        deposed: None,
        provider: rc.provider_key.clone(),
        action,
        before: Value::null(ty.clone()),
        after,
        ty,
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
    let Some(value) = read_data_source(out, rc, &addr, config).await else {
        return false;
    };
    let object = rc.object(&value, Vec::new(), Status::Ready, false);
    lock(&w.state).apply(&StateChange::SetObject {
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
    let label = addr.to_string();
    let range = &rc.res.range;
    // Prior state: upgraded, then refreshed; or imported by an `import` block.
    let stored = lock(&w.state).object(&addr, None).cloned();
    let mut importing = None;
    if stored.is_none() && w.phase == Phase::Plan {
        if let Some(id) = import_block_id(w, out, rc, module, &addr) {
            match import_now(out, rc, &addr, &id).await {
                Some((v, p)) => {
                    let object = rc.object(&v, p, Status::Ready, false);
                    lock(&w.state).apply(&StateChange::SetObject {
                        addr: addr.clone(),
                        deposed: None,
                        provider: rc.provider_key.to_string(),
                        object,
                    });
                    importing = Some(id);
                }
                None => return false,
            }
        }
    }
    let stored = if importing.is_some() {
        lock(&w.state).object(&addr, None).cloned()
    } else {
        stored
    };
    let (mut prior, mut private, tainted) = match &stored {
        Some(o) => match prior_value(rc, &addr, o).await {
            Ok(v) => (
                v,
                o.private.clone().unwrap_or_default(),
                o.status == Status::Tainted,
            ),
            Err(d) => {
                out.extend(d);
                return false;
            }
        },
        None => (Value::null(ty.clone()), Vec::new(), false),
    };
    if w.phase == Phase::Plan && w.opts.refresh && !prior.is_null() {
        w.core.emit(Event::Refreshing {
            addr: &addr,
            id: object_id(&prior),
        });
        let read = rc
            .provider
            .read_resource(ReadRequest {
                type_name: &rc.res.ty,
                prior_state: &prior.unmark_deep(),
                private: &private,
                provider_meta: None,
            })
            .await;
        let Some(resp) = rc.answer(out, read, &label, range) else {
            return false;
        };
        if let Some(d) = checks::check_refresh(
            &rc.schema.block,
            &rc.provider_label(),
            &addr,
            &resp.new_state,
            range,
        ) {
            out.push(d);
            return false;
        }
        // As Terraform does with every read: the legacy SDK's null for "no
        // blocks" and the like settled (objchange::normalize_from_legacy_sdk).
        let read = normalize_from_legacy_sdk(&rc.schema.block, &resp.new_state);
        let refreshed = mark_paths(&read, &sensitive_paths(&prior));
        let drifted = !refreshed.eq_ignoring_refinements(&prior);
        if drifted {
            lock(&p.drift).push(change(
                rc,
                &addr,
                decide::drift(&refreshed),
                prior.clone(),
                refreshed.clone(),
                &ty,
            ));
        }
        // An object stored at an older schema version was upgraded above:
        // the refreshed state keeps it at the current version (not drift),
        // as Terraform's does.
        let upgraded = stored
            .as_ref()
            .is_some_and(|o| o.schema_version as i64 != rc.schema.version);
        if drifted || upgraded {
            let mut st = lock(&w.state);
            if refreshed.is_null() {
                st.apply(&StateChange::RemoveObject {
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
                st.apply(&StateChange::SetObject {
                    addr: addr.clone(),
                    deposed: None,
                    provider: rc.provider_key.to_string(),
                    object: rc.object(&refreshed, resp.private.clone(), status, cbd),
                });
            }
        }
        prior = refreshed;
        private = resp.private;
    }
    if w.opts.mode == crate::model::PlanMode::RefreshOnly {
        rc.set_value(w, module, addr.key.clone(), prior.clone());
        return true;
    }
    // Preconditions, then the configuration.
    if !conditions::enforce(
        w,
        out,
        module,
        &inst,
        &rc.res.lifecycle.preconditions,
        "Resource precondition failed",
        &label,
    ) {
        return false;
    }
    let inst_for_post = inst.clone();
    let (config, d) = rc.config(w, module, inst);
    let failed = d.iter().any(is_error);
    out.extend(d);
    if failed {
        return false;
    }
    let plain_config = config.unmark_deep();
    let valid = rc
        .provider
        .validate_resource_config(&rc.res.ty, &plain_config)
        .await;
    if rc.answer(out, valid, &label, range).is_none() {
        return false;
    }
    if w.phase == Phase::Validate {
        rc.set_value(w, module, addr.key.clone(), Value::unknown(ty));
        return true;
    }
    let cfg_for_plan = rc.ignore_changes(&prior.unmark_deep(), &plain_config);
    let plain_prior = prior.unmark_deep();
    let Some(resp) = plan_change(out, rc, &addr, &plain_prior, &private, &cfg_for_plan, None).await
    else {
        return false;
    };
    let mut planned = resp.planned_state;
    let mut planned_private = resp.planned_private;
    let requires = decide::requires_replace(resp.requires_replace, &plain_prior, &planned);
    let cbd = rc.cbd(w);
    let (action, reason) = decide::managed(&decide::Facts {
        prior: &plain_prior,
        planned: &planned,
        tainted,
        replace_requested: replace_requested(w, &addr),
        replace_triggered: replace_triggered(p, rc),
        requires_replace: &requires,
        create_before_destroy: cbd,
    });
    if action.is_replace() {
        // Plan again as a create so computed attributes become unknown.
        let null = Value::null(ty.clone());
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
        &label,
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
    lock(&p.changes).push(c);
    true
}
