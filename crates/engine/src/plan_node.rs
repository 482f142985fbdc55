//! Planning one resource node: expand it, then for every instance upgrade
//! and refresh its prior state, evaluate its configuration with the
//! upstream planned values, validate, compute the proposed new state, ask
//! the provider to plan, check the plan against the contract and choose
//! the action. Data sources are read now when their configuration is known
//! and nothing they depend on changes, and planned as reads otherwise.

use crate::checks;
use crate::decide;
use crate::decode::{decode_body, BodyRef};
use crate::graph::{resource_provider, NodeId, NodeKind};
use crate::model::{mark_paths, schema_sensitive_paths, sensitive_paths, Action, Change};
use crate::provider::{
    PlanRequest, Provider, ProviderSchema, ReadDataRequest, ReadRequest, UpgradeRequest,
};
use crate::values::{Expansion, InstanceVars};
use crate::walk::{
    instance_vars, is_error, lock, provider_instance, provider_key, schema_of, Phase, Walk,
};
use std::sync::Arc;
use terrane_config::{Diagnostic, LineIndex, Resource};
use terrane_eval::Evaluator;
use terrane_schema::objchange::{planned_data_resource_object, proposed_new};
use terrane_schema::Schema;
use terrane_state::{
    Change as StateChange, InstanceAddr, InstanceKey, Mode, ModulePath, ObjectState, ResourceAddr,
    Status,
};
use terrane_value::{Path, Value};

/// What every instance of one resource node shares.
pub struct ResourceCtx {
    pub node: NodeId,
    /// The schema's implied type (computed once per resource node).
    pub ty: terrane_value::Type,
    pub module_cfg: Vec<String>,
    pub res: Resource,
    pub mode: Mode,
    pub schema: Schema,
    pub provider: Arc<dyn Provider>,
    pub provider_name: String,
    pub provider_key: crate::provider::ProviderConfigKey,
    pub index: Arc<LineIndex>,
    pub dependencies: Vec<String>,
}

/// Finds a resource node's configuration, schema and provider.
pub async fn resource_ctx(w: &Arc<Walk>, id: NodeId) -> Result<ResourceCtx, Vec<Diagnostic>> {
    let node = w.core.graph.nodes[id].clone();
    let NodeKind::Resource { mode, ty, name } = &node.kind else {
        return Err(Vec::new());
    };
    let cfg = w.module_config(&node.module).ok_or_else(Vec::new)?;
    let res = cfg
        .module
        .resource(*mode == Mode::Data, ty, name)
        .cloned()
        .ok_or_else(Vec::new)?;
    let (pname, alias) = resource_provider(&res);
    let all: Arc<ProviderSchema> = schema_of(w, &pname).await.map_err(|d| vec![d])?;
    let schema = if *mode == Mode::Data {
        all.data_source(ty)
    } else {
        all.resource(ty)
    };
    let Some(schema) = schema.cloned() else {
        let what = if *mode == Mode::Data {
            "data source"
        } else {
            "resource type"
        };
        let key = provider_key(&w.core, &pname, None);
        return Err(vec![Diagnostic::error(
            if *mode == Mode::Data {
                "Invalid data source"
            } else {
                "Invalid resource type"
            },
            format!(
                "The provider {} does not support {what} {ty:?}.",
                key.addr.for_display()
            ),
            res.range.clone(),
        )]);
    };
    let Some(provider) = provider_instance(w, &pname, alias.as_deref()).await else {
        return Err(Vec::new());
    };
    let index = resource_index(&res);
    // Direct dependencies (data sources too, so the closure shown and
    // exported can pass through them); see Graph::direct_dependency_names.
    let dependencies = w.core.graph.direct_dependency_names(id);
    Ok(ResourceCtx {
        node: id,
        ty: schema.block.implied_type(),
        module_cfg: node.module.clone(),
        mode: *mode,
        schema,
        provider,
        provider_key: provider_key(&w.core, &pname, alias.as_deref()),
        provider_name: pname,
        res,
        index,
        dependencies,
    })
}

/// The line index of the file a resource is in.
fn resource_index(r: &Resource) -> Arc<LineIndex> {
    if let Some(e) = r
        .attributes
        .values()
        .next()
        .or(r.count.as_ref())
        .or(r.for_each.as_ref())
        .or(r.depends_on.as_ref())
        .or(r.provider.as_ref())
    {
        return e.index.clone();
    }
    let file = r
        .range
        .as_ref()
        .map(|r| r.file.to_string())
        .unwrap_or_default();
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    Arc::new(LineIndex::new(&file, &text))
}

impl ResourceCtx {
    pub fn addr(&self, module: &ModulePath, key: InstanceKey) -> InstanceAddr {
        ResourceAddr {
            module: module.clone(),
            mode: self.mode,
            ty: self.res.ty.clone(),
            name: self.res.name.clone(),
        }
        .instance(key)
    }

    /// Evaluates the resource's body for one instance.
    pub fn config(
        &self,
        w: &Walk,
        module: &ModulePath,
        inst: InstanceVars,
    ) -> (Value, Vec<Diagnostic>) {
        let scope = w.scope(module, inst);
        let ctx = w.func_ctx();
        let pf = |p: &str, n: &str, args: Vec<Value>| crate::walk::provider_function(w, p, n, args);
        let mut ev = Evaluator::new(&scope, &ctx, &self.index).with_provider_functions(&pf);
        let body = BodyRef {
            attributes: self
                .res
                .attributes
                .iter()
                .map(|(k, e)| (k.as_str(), &e.expr))
                .collect(),
            blocks: self.res.blocks.iter().collect(),
            span: self.res.range.as_ref().map(|r| r.start.byte..r.end.byte),
        };
        let mut diags = Vec::new();
        let v = decode_body(&mut ev, &self.index, &body, &self.schema.block, &mut diags);
        diags.extend(ev.into_diagnostics());
        (v, diags)
    }

    pub fn provider_label(&self) -> String {
        self.provider_key.addr.to_string()
    }

    /// Where the attribute `p` of this resource is written, for provider
    /// diagnostics that name it.
    pub fn attr_range(&self, p: &Path) -> Option<terrane_config::SourceRange> {
        checks::attribute_range(p, &self.res.attributes, &self.res.body)
    }

    /// The state record of a value.
    pub fn object(&self, v: &Value, private: Vec<u8>, status: Status, cbd: bool) -> ObjectState {
        let plain = v.unmark_deep();
        let attributes =
            terrane_value::json::encode(&plain, &self.ty).unwrap_or(serde_json::Value::Null);
        let mut sens = sensitive_paths(v);
        for p in schema_sensitive_paths(&self.schema.block, &plain) {
            if !sens.contains(&p) {
                sens.push(p);
            }
        }
        ObjectState {
            attributes,
            schema_version: self.schema.version.max(0) as u64,
            status,
            private: if private.is_empty() {
                None
            } else {
                Some(private)
            },
            sensitive_paths: sens,
            dependencies: self.dependencies.clone(),
            create_before_destroy: cbd,
            identity_schema_version: None,
        }
    }

    pub fn cbd(&self, w: &Walk) -> bool {
        let Some(e) = &self.res.lifecycle.create_before_destroy else {
            return false;
        };
        let (v, _) = w.eval(&ModulePath::default(), InstanceVars::default(), e);
        v.as_bool().unwrap_or(false)
    }
}

/// Decodes (upgrading if needed) a stored object with the current schema.
pub async fn prior_value(
    rc: &ResourceCtx,
    addr: &InstanceAddr,
    o: &ObjectState,
) -> Result<Value, Vec<Diagnostic>> {
    let ty = rc.ty.clone();
    if o.schema_version as i64 == rc.schema.version {
        if let Ok(v) = terrane_value::json::decode(&o.attributes, &ty) {
            return Ok(mark_paths(&v, &o.sensitive_paths));
        }
    }
    let raw = serde_json::to_vec(&o.attributes).unwrap_or_default();
    let resp = rc
        .provider
        .upgrade_resource_state(UpgradeRequest {
            type_name: &rc.res.ty,
            version: o.schema_version as i64,
            raw_state_json: &raw,
        })
        .await
        .map_err(|e| {
            vec![Diagnostic::error(
                "Provider failed",
                e.to_string(),
                rc.res.range.clone(),
            )]
        })?;
    if resp.diagnostics.has_errors() {
        return Err(checks::provider_diags(
            &resp.diagnostics,
            &addr.to_string(),
            &rc.res.range,
        ));
    }
    if let Some(d) = checks::check_upgrade(
        &rc.schema.block,
        &rc.provider_label(),
        addr,
        &resp.upgraded_state,
        &rc.res.range,
    ) {
        return Err(vec![d]);
    }
    Ok(mark_paths(&resp.upgraded_state, &o.sensitive_paths))
}

/// Plan (or validate) every instance of a resource node.
pub async fn resource(w: Arc<Walk>, id: NodeId) -> bool {
    let rc = match resource_ctx(&w, id).await {
        Ok(rc) => Arc::new(rc),
        Err(d) => {
            w.diags(d);
            return false;
        }
    };
    let mut ok = true;
    let mut tasks = tokio::task::JoinSet::new();
    for module in w.values.instances_of(&rc.module_cfg) {
        let Some(exp) = crate::walk::expand_resource(&w, &rc, &module) else {
            ok = false;
            continue;
        };
        if exp == Expansion::Unknown {
            // Validate: check the body once with unknown instance names.
            let inst = InstanceVars {
                count_index: rc.res.count.as_ref().map(|_| 0),
                each: rc
                    .res
                    .for_each
                    .as_ref()
                    .map(|_| (String::new(), Value::unknown(terrane_value::Type::Dynamic))),
                self_value: None,
            };
            let (_, d) = rc.config(&w, &module, inst);
            ok &= !d.iter().any(is_error);
            w.diags(d);
            continue;
        }
        for key in exp.keys() {
            let inst = instance_vars(&exp, &key);
            let (w, rc, module) = (w.clone(), rc.clone(), module.clone());
            let (what, range) = (
                rc.addr(&module, key.clone()).to_string(),
                rc.res.range.clone(),
            );
            tasks.spawn(crate::walk::guarded(w.clone(), what, range, async move {
                let addr = rc.addr(&module, key);
                lock(&w.expanded).insert(addr.clone());
                let _permit = w.limit.acquire().await;
                // An instance's planning future is large: it is built on the
                // heap once it may run, so waiting tasks stay small and
                // spawning does not copy it around.
                if rc.mode == Mode::Data {
                    Box::pin(plan_data(&w, &rc, &module, addr, inst)).await
                } else {
                    Box::pin(plan_managed(&w, &rc, &module, addr, inst)).await
                }
            }));
        }
    }
    while let Some(r) = tasks.join_next().await {
        ok &= r.unwrap_or(false);
    }
    ok
}

async fn plan_data(
    w: &Walk,
    rc: &ResourceCtx,
    module: &ModulePath,
    addr: InstanceAddr,
    inst: InstanceVars,
) -> bool {
    let (config, d) = rc.config(w, module, inst);
    let failed = d.iter().any(is_error);
    w.diags(d);
    if failed {
        return false;
    }
    let plain = config.unmark_deep();
    match rc
        .provider
        .validate_data_resource_config(&rc.res.ty, &plain)
        .await
    {
        Ok(d) => {
            let bad = d.has_errors();
            w.diags(checks::provider_diags_at(
                &d,
                &addr.to_string(),
                &rc.res.range,
                &|p| rc.attr_range(p),
            ));
            if bad {
                return false;
            }
        }
        Err(e) => {
            w.diag(Diagnostic::error(
                "Provider failed",
                e.to_string(),
                rc.res.range.clone(),
            ));
            return false;
        }
    }
    let ty = rc.ty.clone();
    if w.phase == Phase::Validate {
        w.values.set_instance(
            module,
            Mode::Data,
            &rc.res.ty,
            &rc.res.name,
            addr.key.clone(),
            Value::unknown(ty),
        );
        return true;
    }
    let pending_dep = {
        let pending = lock(&w.pending);
        w.core
            .graph
            .resource_dependencies(rc.node)
            .iter()
            .any(|d| pending.contains(d))
    };
    let reason = match decide::data_source(plain.is_wholly_known(), pending_dep) {
        decide::DataPlan::Defer(reason) => reason,
        decide::DataPlan::ReadNow => {
            return read_now(w, rc, module, addr, &config).await;
        }
    };
    let planned = planned_data_resource_object(&rc.schema.block, &plain);
    let after = mark_paths(&planned, &sensitive_paths(&config));
    w.values.set_instance(
        module,
        Mode::Data,
        &rc.res.ty,
        &rc.res.name,
        addr.key.clone(),
        after.clone(),
    );
    lock(&w.pending).insert(rc.node);
    lock(&w.changes).push(Change {
        addr,
        deposed: None,
        provider: rc.provider_key.clone(),
        action: Action::Read,
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
    });
    true
}

/// Reads a data source during plan and records its value.
async fn read_now(
    w: &Walk,
    rc: &ResourceCtx,
    module: &ModulePath,
    addr: InstanceAddr,
    config: &Value,
) -> bool {
    let Some(value) = read_data_source(w, rc, &addr, config).await else {
        return false;
    };
    let object = rc.object(&value, Vec::new(), Status::Ready, false);
    lock(&w.state).apply(&StateChange::SetObject {
        addr: addr.clone(),
        deposed: None,
        provider: rc.provider_key.to_string(),
        object,
    });
    w.values.set_instance(
        module,
        Mode::Data,
        &rc.res.ty,
        &rc.res.name,
        addr.key.clone(),
        value,
    );
    true
}

/// Applies `ignore_changes`: the listed attributes (or all) take their
/// prior value in the configuration given to planning.
pub fn apply_ignore(rc: &ResourceCtx, prior: &Value, config: &Value) -> Value {
    let Some(e) = &rc.res.lifecycle.ignore_changes else {
        return config.clone();
    };
    let rule = decide::IgnoreChanges::from_expr(&e.expr);
    decide::ignore_changes(&rule, &rc.schema.block, prior, config)
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
fn replace_triggered(w: &Walk, rc: &ResourceCtx) -> bool {
    let Some(e) = &rc.res.lifecycle.replace_triggered_by else {
        return false;
    };
    let pending = lock(&w.pending);
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
    w: &Walk,
    rc: &ResourceCtx,
    module: &ModulePath,
    addr: InstanceAddr,
    inst: InstanceVars,
) -> bool {
    let ty = rc.ty.clone();
    let label = addr.to_string();
    let range = &rc.res.range;
    // Prior state: upgraded, then refreshed; or imported by an `import` block.
    let stored = lock(&w.state).object(&addr, None).cloned();
    let mut importing = None;
    if stored.is_none() && w.phase == Phase::Plan {
        if let Some(id) = import_block_id(w, rc, module, &addr) {
            match import_now(w, rc, &addr, &id).await {
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
                w.diags(d);
                return false;
            }
        },
        None => (Value::null(ty.clone()), Vec::new(), false),
    };
    if w.phase == Phase::Plan && w.opts.refresh && !prior.is_null() {
        w.core.emit(crate::walk::Event::Refreshing {
            addr: &addr,
            id: crate::walk::object_id(&prior),
        });
        let resp = match rc
            .provider
            .read_resource(ReadRequest {
                type_name: &rc.res.ty,
                prior_state: &prior.unmark_deep(),
                private: &private,
                provider_meta: None,
            })
            .await
        {
            Ok(r) => r,
            Err(e) => {
                w.diag(Diagnostic::error(
                    "Provider failed",
                    e.to_string(),
                    range.clone(),
                ));
                return false;
            }
        };
        let bad = resp.diagnostics.has_errors();
        w.diags(checks::provider_diags_at(
            &resp.diagnostics,
            &label,
            range,
            &|p| rc.attr_range(p),
        ));
        if bad {
            return false;
        }
        if let Some(d) = checks::check_refresh(
            &rc.schema.block,
            &rc.provider_label(),
            &addr,
            &resp.new_state,
            range,
        ) {
            w.diag(d);
            return false;
        }
        let refreshed = mark_paths(&resp.new_state, &sensitive_paths(&prior));
        if !refreshed.eq_ignoring_refinements(&prior) {
            lock(&w.drift).push(change(
                rc,
                &addr,
                decide::drift(&refreshed),
                prior.clone(),
                refreshed.clone(),
                &ty,
            ));
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
        w.values.set_instance(
            module,
            Mode::Managed,
            &rc.res.ty,
            &rc.res.name,
            addr.key.clone(),
            prior.clone(),
        );
        return true;
    }
    // Preconditions, then the configuration.
    if !crate::conditions::enforce(
        w,
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
    w.diags(d);
    if failed {
        return false;
    }
    let plain_config = config.unmark_deep();
    match rc
        .provider
        .validate_resource_config(&rc.res.ty, &plain_config)
        .await
    {
        Ok(d) => {
            let bad = d.has_errors();
            w.diags(checks::provider_diags_at(&d, &label, range, &|p| {
                rc.attr_range(p)
            }));
            if bad {
                return false;
            }
        }
        Err(e) => {
            w.diag(Diagnostic::error(
                "Provider failed",
                e.to_string(),
                range.clone(),
            ));
            return false;
        }
    }
    if w.phase == Phase::Validate {
        w.values.set_instance(
            module,
            Mode::Managed,
            &rc.res.ty,
            &rc.res.name,
            addr.key.clone(),
            Value::unknown(ty),
        );
        return true;
    }
    let cfg_for_plan = apply_ignore(rc, &prior.unmark_deep(), &plain_config);
    let plain_prior = prior.unmark_deep();
    // PlanResourceChange with every plan check; `None` after reporting.
    let plan_once = |prior: Value, private: Vec<u8>| {
        let cfg = cfg_for_plan.clone();
        let label = label.clone();
        let addr = addr.clone();
        async move {
            let proposed = proposed_new(&rc.schema.block, &prior, &cfg);
            let resp = rc
                .provider
                .plan_resource_change(PlanRequest {
                    type_name: &rc.res.ty,
                    prior_state: &prior,
                    proposed_new_state: &proposed,
                    config: &cfg,
                    prior_private: &private,
                    provider_meta: None,
                })
                .await;
            let resp = match resp {
                Ok(r) => r,
                Err(e) => {
                    w.diag(Diagnostic::error(
                        "Provider failed",
                        e.to_string(),
                        range.clone(),
                    ));
                    return None;
                }
            };
            let bad = resp.diagnostics.has_errors();
            w.diags(checks::provider_diags_at(
                &resp.diagnostics,
                &label,
                range,
                &|p| rc.attr_range(p),
            ));
            if bad {
                return None;
            }
            let errs = checks::check_plan(
                &rc.schema.block,
                &rc.provider_label(),
                &addr,
                &prior,
                &cfg,
                &resp.planned_state,
                resp.legacy_type_system,
                range,
            );
            let fatal = errs.iter().any(is_error);
            w.diags(errs);
            (!fatal).then_some(resp)
        }
    };
    let Some(resp) = plan_once(plain_prior.clone(), private.clone()).await else {
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
        replace_triggered: replace_triggered(w, rc),
        requires_replace: &requires,
        create_before_destroy: cbd,
    });
    if action.is_replace() {
        // Plan again as a create so computed attributes become unknown.
        let Some(resp) = plan_once(Value::null(ty.clone()), Vec::new()).await else {
            return false;
        };
        planned = resp.planned_state;
        planned_private = resp.planned_private;
    }
    let after = crate::model::mark_config_and_schema(&planned, &config, &rc.schema.block);
    let post = InstanceVars {
        self_value: Some(after.clone()),
        ..inst_for_post
    };
    if !crate::conditions::enforce(
        w,
        module,
        &post,
        &rc.res.lifecycle.postconditions,
        "Resource postcondition failed",
        &label,
    ) {
        return false;
    }
    w.values.set_instance(
        module,
        Mode::Managed,
        &rc.res.ty,
        &rc.res.name,
        addr.key.clone(),
        after.clone(),
    );
    if action != Action::NoOp {
        lock(&w.pending).insert(rc.node);
    }
    if action.is_replace() && prevent_destroy(w, rc) {
        w.diag(Diagnostic::error(
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
    lock(&w.changes).push(c);
    true
}

pub fn change(
    rc: &ResourceCtx,
    addr: &InstanceAddr,
    action: Action,
    before: Value,
    after: Value,
    ty: &terrane_value::Type,
) -> Change {
    Change {
        addr: addr.clone(),
        deposed: None,
        provider: rc.provider_key.clone(),
        action,
        before,
        after,
        ty: ty.clone(),
        schema_version: rc.schema.version,
        requires_replace: Vec::new(),
        planned_private: Vec::new(),
        prior_private: Vec::new(),
        reason: None,
        importing: None,
        // Only deletes use a change's dependencies (their order); a create
        // or update records the resource's own when it is applied, so the
        // plan need not carry a copy per instance.
        dependencies: if action == Action::Delete {
            rc.dependencies.clone()
        } else {
            Vec::new()
        },
        create_before_destroy: false,
    }
}

/// Whether `lifecycle { prevent_destroy = true }`.
pub fn prevent_destroy(w: &Walk, rc: &ResourceCtx) -> bool {
    let Some(e) = &rc.res.lifecycle.prevent_destroy else {
        return false;
    };
    let (v, _) = w.eval(&ModulePath::default(), InstanceVars::default(), e);
    v.as_bool().unwrap_or(false)
}

/// The ID of an `import` block targeting this instance, if any.
fn import_block_id(
    w: &Walk,
    rc: &ResourceCtx,
    module: &ModulePath,
    addr: &InstanceAddr,
) -> Option<String> {
    if !module.0.is_empty() {
        return None;
    }
    let text = addr.to_string();
    for imp in &w.core.config.module.imports {
        let Some(to) = &imp.to_addr else { continue };
        if imp.for_each.is_some() {
            continue;
        }
        if *to != text {
            continue;
        }
        let id_expr = imp.id.as_ref()?;
        let (v, d) = w.eval(module, InstanceVars::default(), id_expr);
        if !d.is_empty() {
            w.diags(d);
            return None;
        }
        match v.unmark_deep().as_str() {
            Some(s) => return Some(s.to_string()),
            None => {
                w.diag(Diagnostic::error(
                    "Invalid import id argument",
                    "The import ID must be a known string.",
                    imp.range.clone(),
                ));
                return None;
            }
        }
    }
    let _ = rc;
    None
}

/// ImportResourceState then ReadResource, with their contract checks;
/// failures are reported on the walk. Used by `import` blocks and the
/// `import` command.
pub async fn import_now(
    w: &Walk,
    rc: &ResourceCtx,
    addr: &InstanceAddr,
    id: &str,
) -> Option<(Value, Vec<u8>)> {
    let range = &rc.res.range;
    let resp = match rc.provider.import_resource_state(&rc.res.ty, id).await {
        Ok(r) => r,
        Err(e) => {
            w.diag(Diagnostic::error(
                "Provider failed",
                e.to_string(),
                range.clone(),
            ));
            return None;
        }
    };
    w.diags(checks::provider_diags(
        &resp.diagnostics,
        &addr.to_string(),
        range,
    ));
    if resp.diagnostics.has_errors() {
        return None;
    }
    let imported = match resp.imported.as_slice() {
        [one] if !one.state.is_null() => one.clone(),
        [] => {
            w.diag(Diagnostic::error("Import returned no resources", format!("While attempting to import with ID {id}, the provider returned no instance states."), range.clone()));
            return None;
        }
        [_] => {
            w.diag(Diagnostic::error("Import returned null resource", format!("While attempting to import with ID {id}, the provider returned an instance with no state."), range.clone()));
            return None;
        }
        _ => {
            w.diag(Diagnostic::error("Multiple import states not supported", format!("While attempting to import with ID {id}, the provider returned multiple resource instance states. This is not currently supported."), range.clone()));
            return None;
        }
    };
    let read = match rc
        .provider
        .read_resource(ReadRequest {
            type_name: &rc.res.ty,
            prior_state: &imported.state,
            private: &imported.private,
            provider_meta: None,
        })
        .await
    {
        Ok(r) => r,
        Err(e) => {
            w.diag(Diagnostic::error(
                "Provider failed",
                e.to_string(),
                range.clone(),
            ));
            return None;
        }
    };
    w.diags(checks::provider_diags(
        &read.diagnostics,
        &addr.to_string(),
        range,
    ));
    if read.diagnostics.has_errors() {
        return None;
    }
    if read.new_state.is_null() {
        w.diag(Diagnostic::error(
            "Cannot import non-existent remote object",
            format!("While attempting to import an existing object to {:?}, the provider detected that no object exists with the given id. Only pre-existing objects can be imported; check that the id is correct and that it is associated with the provider's configured region or endpoint, or use \"terrane apply\" to create a new remote object for this resource.", addr.to_string()),
            range.clone(),
        ));
        return None;
    }
    if let Some(d) = checks::check_refresh(
        &rc.schema.block,
        &rc.provider_label(),
        addr,
        &read.new_state,
        range,
    ) {
        w.diag(d);
        return None;
    }
    Some((read.new_state, read.private))
}

/// ReadDataSource with its checks; the value carries the configuration's
/// sensitive marks. `None` after reporting a failure.
pub async fn read_data_source(
    w: &Walk,
    rc: &ResourceCtx,
    addr: &InstanceAddr,
    config: &Value,
) -> Option<Value> {
    let plain = config.unmark_deep();
    let resp = match rc
        .provider
        .read_data_source(ReadDataRequest {
            type_name: &rc.res.ty,
            config: &plain,
            provider_meta: None,
        })
        .await
    {
        Ok(r) => r,
        Err(e) => {
            w.diag(Diagnostic::error(
                "Provider failed",
                e.to_string(),
                rc.res.range.clone(),
            ));
            return None;
        }
    };
    let bad = resp.diagnostics.has_errors();
    w.diags(checks::provider_diags_at(
        &resp.diagnostics,
        &addr.to_string(),
        &rc.res.range,
        &|p| rc.attr_range(p),
    ));
    if bad {
        return None;
    }
    if let Some(d) = checks::check_data(
        &rc.schema.block,
        &rc.provider_label(),
        addr,
        &resp.state,
        &rc.res.range,
    ) {
        w.diag(d);
        return None;
    }
    Some(mark_paths(&resp.state, &sensitive_paths(config)))
}
