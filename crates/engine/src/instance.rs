//! One resource's instances, as both phases need them: the resource
//! context ([`ResourceCtx`]: configuration, schema, provider), the prior
//! value of a stored object (upgraded when its schema version is older),
//! reads of data sources, imports, and [`plan_change`], the one function
//! that plans an instance with the provider, used by the plan and by the
//! final plan at apply time.
//!
//! Layering: imports conditions, walk, decide, checks, decode and the
//! bottom layers; never nodes, plan, apply or run.

use crate::checks;
use crate::decode::{decode_typed, BodyRef};
use crate::graph::{resource_provider, NodeId, NodeKind};
use crate::model::{schema_sensitive_paths, Action, Change};
use crate::provider::{
    Answer, PlanRequest, PlanResponse, Provider, ProviderConfigKey, ProviderError, ProviderSchema,
    ReadDataRequest, ReadRequest, UpgradeRequest,
};
use crate::sync::lock;
use crate::values::InstanceVars;
use crate::walk::{is_error, provider_instance, provider_key, schema_of, TypeSchema, Walk};
use std::sync::Arc;
use terrane_config::{Diagnostic, LineIndex, Resource};
use terrane_eval::Evaluator;
use terrane_schema::objchange::{normalize_from_legacy_sdk, proposed_new_over};
use terrane_schema::Schema;
use terrane_state::{
    InstanceAddr, InstanceKey, Mode, ModulePath, ObjectState, ResourceAddr, Status,
};
use terrane_value::marks::{mark_paths, sensitive_paths};
use terrane_value::{Path, Value};

/// What every instance of one resource node shares.
#[derive(Clone)]
pub struct ResourceCtx {
    pub node: NodeId,
    /// The schema's implied type (made once per resource type).
    pub ty: Arc<terrane_value::Type>,
    /// The schema's empty value (made once per resource type).
    pub empty: Arc<Value>,
    pub module_cfg: Vec<String>,
    /// The configuration's own resource, shared.
    pub res: Arc<Resource>,
    pub mode: Mode,
    pub schema: Arc<Schema>,
    /// `schema.block`, shared by the changes planned for the resource.
    pub block: Arc<terrane_schema::Block>,
    pub provider: Arc<dyn Provider>,
    pub provider_key: Arc<ProviderConfigKey>,
    /// `provider_key`'s provider address as text, for messages (made once
    /// per resource, not per instance).
    pub provider_label: String,
    pub index: Arc<LineIndex>,
    pub dependencies: Vec<String>,
}

/// The schema of resource type `ty` (a data source when `data`) in
/// provider schema `all`, with its block and implied type: made the first
/// time the walk asks, then shared.
pub fn type_schema(
    w: &Walk,
    all: &Arc<ProviderSchema>,
    data: bool,
    ty: &str,
) -> Option<TypeSchema> {
    let key = (Arc::as_ptr(all) as usize, data, ty.to_string());
    if let Some(t) = lock(&w.types).get(&key) {
        return Some(t.clone());
    }
    let schema = if data {
        all.data_source(ty)
    } else {
        all.resource(ty)
    }?;
    let made = TypeSchema {
        ty: Arc::new(schema.block.implied_type()),
        empty: Arc::new(schema.block.empty_value()),
        block: Arc::new(schema.block.clone()),
        schema: Arc::new(schema.clone()),
        _of: all.clone(),
    };
    Some(lock(&w.types).entry(key).or_insert(made).clone())
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
    let Some(types) = type_schema(w, &all, *mode == Mode::Data, ty) else {
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
    let key = crate::walk::resolved_provider_key(&w.core, &node.module, &pname, alias.as_deref());
    let found = match provider_instance(w, &key).await {
        Some(p) => Some(p),
        None => placeholder(w, &key).await,
    };
    let Some(mut provider) = found else {
        return Err(Vec::new());
    };
    if let Some(d) = &w.opts.doubles {
        let mut target: String = node.module.iter().map(|m| format!("module.{m}.")).collect();
        if *mode == Mode::Data {
            target.push_str("data.");
        }
        target.push_str(&format!("{ty}.{name}"));
        provider = d.resource_provider(&target, provider);
    }
    let index = resource_index(w, &res);
    // Direct dependencies (data sources too, so the closure shown and
    // exported can pass through them); see Graph::direct_dependency_names.
    let dependencies = w.core.graph.direct_dependency_names(id);
    Ok(ResourceCtx {
        node: id,
        ty: types.ty,
        empty: types.empty,
        module_cfg: node.module.clone(),
        mode: *mode,
        block: types.block,
        schema: types.schema,
        provider,
        provider_label: key.addr.to_string(),
        provider_key: Arc::new(key),
        res,
        index,
        dependencies,
    })
}

/// The line index of the file a resource is in: an expression's, or for
/// a resource with none, the file's, read once per walk.
pub fn resource_index(w: &Walk, r: &Resource) -> Arc<LineIndex> {
    if let Some(e) = r
        .attributes
        .values()
        .next()
        .or(r.count.as_deref())
        .or(r.for_each.as_deref())
        .or(r.depends_on.as_deref())
        .or(r.provider.as_deref())
    {
        return e.index.clone();
    }
    let file = r
        .range
        .as_ref()
        .map(|r| r.file.to_string())
        .unwrap_or_default();
    lock(&w.line_indexes)
        .entry(file)
        .or_insert_with_key(|file| {
            let text = std::fs::read_to_string(file).unwrap_or_default();
            Arc::new(LineIndex::new(file, &text))
        })
        .clone()
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
        if self.mode == Mode::Managed {
            // Only write-only attributes may take ephemeral values: the
            // others are stored.
            if let Some(m) = w.module_config(&self.module_cfg) {
                for (name, e) in &self.res.attributes {
                    let write_only = self
                        .schema
                        .block
                        .attributes
                        .get(name)
                        .is_some_and(|a| a.write_only);
                    // Terraform's validate does not see through module
                    // outputs (their values are unknown there); its plan does.
                    let found = checks::ephemeral_source(m, e).filter(|src| {
                        w.phase != crate::walk::Phase::Validate || !src.starts_with("module.")
                    });
                    if !write_only && found.is_some() {
                        diags.push(checks::ephemeral_attribute(name, e.range.clone()));
                    }
                }
            }
            if diags.iter().any(is_error) {
                return (Value::null((*self.ty).clone()), diags);
            }
        }
        let v = decode_typed(
            &mut ev,
            &self.index,
            &body,
            &self.schema.block,
            &self.ty,
            &mut diags,
        );
        diags.extend(ev.into_diagnostics());
        (v, diags)
    }

    pub fn provider_label(&self) -> &str {
        &self.provider_label
    }

    /// Where the attribute `p` of this resource is written, for provider
    /// diagnostics that name it.
    pub fn attr_range(&self, p: &Path) -> Option<terrane_config::SourceRange> {
        checks::attribute_range(p, &self.res.attributes, &self.res.body)
    }

    /// Reports what the provider said about this resource, each
    /// diagnostic placed at the attribute it names (else at `range`), and
    /// whether any of it is an error.
    pub fn report(
        &self,
        out: &mut Vec<Diagnostic>,
        d: &crate::provider::Diagnostics,
        label: &dyn std::fmt::Display,
        range: &Option<terrane_config::SourceRange>,
    ) -> bool {
        // Most answers carry no diagnostics: no label text for them.
        if d.is_empty() {
            return false;
        }
        let errors = d.has_errors();
        out.extend(checks::provider_diags_at(
            d,
            &label.to_string(),
            range,
            &|p| self.attr_range(p),
        ));
        errors
    }

    /// The one way a provider call about this resource is taken: a
    /// transport failure becomes "Provider failed" at the resource, the
    /// provider's diagnostics are placed at the attributes they name (else
    /// at `range`), and an error among them stops the caller (`None`).
    pub fn answer<T: Answer>(
        &self,
        out: &mut Vec<Diagnostic>,
        r: Result<T, ProviderError>,
        label: &dyn std::fmt::Display,
        range: &Option<terrane_config::SourceRange>,
    ) -> Option<T> {
        let answer = checks::answered(out, r, range, None)?;
        if self.report(out, answer.diagnostics(), label, range) {
            return None;
        }
        Some(answer)
    }

    /// Records the value of this resource's instance `key` in module
    /// instance `module`, for the references evaluated after it.
    pub fn set_value(&self, w: &Walk, module: &ModulePath, key: InstanceKey, v: Value) {
        let (ty, name) = (&self.res.ty, &self.res.name);
        w.values.set_instance(module, self.mode, ty, name, key, v);
    }

    /// The state record of a value.
    pub fn object(&self, v: &Value, private: Vec<u8>, status: Status, cbd: bool) -> ObjectState {
        let plain = v.unmark_deep();
        let attributes = terrane_state::Attributes::encode(&plain, &self.ty).unwrap_or_default();
        let mut sens = sensitive_paths(v);
        for p in schema_sensitive_paths(&self.schema.block, &plain) {
            if !sens.contains(&p) {
                sens.push(p);
            }
        }
        ObjectState {
            attributes,
            attributes_flat: None,
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

    /// Applies `ignore_changes`: the listed attributes (or all) take their
    /// prior value in the configuration given to planning.
    pub fn ignore_changes(&self, prior: &Value, config: &Value) -> Value {
        let Some(e) = &self.res.lifecycle.ignore_changes else {
            return config.clone();
        };
        let rule = crate::decide::IgnoreChanges::from_expr(&e.expr);
        crate::decide::ignore_changes(&rule, &self.schema.block, prior, config)
    }

    pub fn cbd(&self, w: &Walk) -> bool {
        let Some(e) = &self.res.lifecycle.create_before_destroy else {
            return false;
        };
        let (v, _) = w.eval(&ModulePath::default(), InstanceVars::default(), e);
        v.as_bool().unwrap_or(false)
    }
}

/// Decodes a stored object with the current schema through the
/// provider's UpgradeResourceState, which Terraform calls for every stored
/// managed object whatever its schema version; the provider's warnings
/// come back with the value. A pre-0.12 object (`attributes_flat`) goes
/// as RawState.flatmap, as Terraform sends it; a data source's (never
/// upgraded, read again) decodes with the schema, as Terraform's does.
pub async fn prior_value(
    rc: &ResourceCtx,
    addr: &InstanceAddr,
    o: &ObjectState,
) -> Result<(Value, Vec<Diagnostic>), Vec<Diagnostic>> {
    // Data sources are not upgraded: their objects are read again.
    if let (Mode::Data, Some(flat)) = (rc.mode, &o.attributes_flat) {
        if let Ok(v) = terrane_value::flatmap::decode(flat, &rc.ty) {
            return Ok((mark_paths(&v, &o.sensitive_paths), Vec::new()));
        }
    }
    if rc.mode == Mode::Data
        && o.schema_version as i64 == rc.schema.version
        && o.attributes_flat.is_none()
    {
        if let Ok(v) = o.attributes.decode(&rc.ty) {
            return Ok((mark_paths(&v, &o.sensitive_paths), Vec::new()));
        }
    }
    let resp = match &o.attributes_flat {
        Some(flat) => {
            rc.provider
                .upgrade_resource_state(UpgradeRequest {
                    type_name: &rc.res.ty,
                    version: o.schema_version as i64,
                    raw_state_json: &[],
                    raw_state_flatmap: Some(flat),
                })
                .await
        }
        None => {
            rc.provider
                .upgrade_stored(&rc.res.ty, o.schema_version as i64, o.attributes.as_str())
                .await
        }
    };
    let mut failed = Vec::new();
    let Some(resp) = checks::answered(&mut failed, resp, &rc.res.range, None) else {
        return Err(failed);
    };
    let diags = checks::provider_diags(&resp.diagnostics, &addr.to_string(), &rc.res.range);
    if resp.diagnostics.has_errors() {
        return Err(diags);
    }
    if let Some(d) = checks::check_upgrade(
        &rc.ty,
        rc.provider_label(),
        addr,
        &resp.upgraded_state,
        &rc.res.range,
    ) {
        return Err(vec![d]);
    }
    Ok((mark_paths(&resp.upgraded_state, &o.sensitive_paths), diags))
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
        schema: Some(rc.block.clone()),
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
pub fn import_block_id(
    w: &Walk,
    out: &mut Vec<Diagnostic>,
    rc: &ResourceCtx,
    module: &ModulePath,
    addr: &InstanceAddr,
) -> Option<String> {
    if !module.0.is_empty() || w.core.config.module.imports.is_empty() {
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
            out.extend(d);
            return None;
        }
        match v.unmark_deep().as_str() {
            Some(s) => return Some(s.to_string()),
            None => {
                out.push(Diagnostic::error(
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

/// A provider's answer to a call it may defer (ReadDataSource,
/// ImportResourceState): done, or deferred to a later plan.
pub enum Deferrable<T> {
    Done(T),
    Deferred(crate::provider::DeferredReason),
}

impl<T> Deferrable<T> {
    /// The answer where no deferral may be made (apply, the `import`
    /// command): a deferral there is the provider's contract violation,
    /// reported as Terraform reports it.
    pub fn required(
        self,
        out: &mut Vec<Diagnostic>,
        addr: &InstanceAddr,
        range: &Option<terrane_config::SourceRange>,
    ) -> Option<T> {
        match self {
            Deferrable::Done(t) => Some(t),
            Deferrable::Deferred(_) => {
                out.push(Diagnostic::error(
                    "Provider deferred changes when Terraform did not allow deferrals",
                    format!("The provider signaled a deferred action for \"{addr}\", but in this context deferrals are disabled. This is a bug in the provider, please file an issue with the provider developers."),
                    range.clone(),
                ));
                None
            }
        }
    }
}

/// ImportResourceState then ReadResource, with their contract checks;
/// failures are reported on the walk. Used by `import` blocks and the
/// `import` command.
pub async fn import_now(
    out: &mut Vec<Diagnostic>,
    rc: &ResourceCtx,
    addr: &InstanceAddr,
    id: &str,
) -> Option<Deferrable<(Value, Vec<u8>)>> {
    let range = &rc.res.range;
    let resp = checks::answered(
        out,
        rc.provider.import_resource_state(&rc.res.ty, id).await,
        range,
        None,
    )?;
    // Placed at the attributes they name, as Terraform places them.
    if rc.report(out, &resp.diagnostics, addr, range) {
        return None;
    }
    if let Some(reason) = resp.deferred {
        return Some(Deferrable::Deferred(reason));
    }
    let imported = match resp.imported.as_slice() {
        [one] if !one.state.is_null() => one.clone(),
        [] => {
            out.push(Diagnostic::error("Import returned no resources", format!("While attempting to import with ID {id}, the provider returned no instance states."), range.clone()));
            return None;
        }
        [_] => {
            out.push(Diagnostic::error("Import returned null resource", format!("While attempting to import with ID {id}, the provider returned an instance with no state."), range.clone()));
            return None;
        }
        _ => {
            out.push(Diagnostic::error("Multiple import states not supported", format!("While attempting to import with ID {id}, the provider returned multiple resource instance states. This is not currently supported."), range.clone()));
            return None;
        }
    };
    let read = checks::answered(
        out,
        rc.provider
            .read_resource(ReadRequest {
                type_name: &rc.res.ty,
                prior_state: &imported.state,
                private: &imported.private,
                provider_meta: None,
            })
            .await,
        range,
        None,
    )?;
    out.extend(checks::provider_diags(
        &read.diagnostics,
        &addr.to_string(),
        range,
    ));
    if read.diagnostics.has_errors() {
        return None;
    }
    if read.new_state.is_null() {
        out.push(Diagnostic::error(
            "Cannot import non-existent remote object",
            format!("While attempting to import an existing object to {:?}, the provider detected that no object exists with the given id. Only pre-existing objects can be imported; check that the id is correct and that it is associated with the provider's configured region or endpoint, or use \"terrane apply\" to create a new remote object for this resource.", addr.to_string()),
            range.clone(),
        ));
        return None;
    }
    if let Some(d) =
        checks::check_refresh(&rc.ty, rc.provider_label(), addr, &read.new_state, range)
    {
        out.push(d);
        return None;
    }
    // Settled as every read is (see the refresh in plan.rs).
    let state = normalize_from_legacy_sdk(&rc.schema.block, &read.new_state);
    Some(Deferrable::Done((state, read.private)))
}

/// ReadDataSource with its checks; the value carries the configuration's
/// sensitive marks and the schema's (a sensitive attribute of the data
/// source stays sensitive in what reads it). `None` after reporting a
/// failure.
pub async fn read_data_source(
    out: &mut Vec<Diagnostic>,
    rc: &ResourceCtx,
    addr: &InstanceAddr,
    config: &Value,
) -> Option<Deferrable<Value>> {
    let plain = config.unmark_deep();
    let resp = checks::answered(
        out,
        rc.provider
            .read_data_source(ReadDataRequest {
                type_name: &rc.res.ty,
                config: &plain,
                provider_meta: None,
            })
            .await,
        &rc.res.range,
        None,
    )?;
    if rc.report(out, &resp.diagnostics, addr, &rc.res.range) {
        return None;
    }
    if let Some(reason) = resp.deferred {
        return Some(Deferrable::Deferred(reason));
    }
    if let Some(d) = checks::check_data(
        &rc.ty,
        rc.provider_label(),
        addr,
        &resp.state,
        &rc.res.range,
    ) {
        out.push(d);
        return None;
    }
    Some(Deferrable::Done(crate::model::mark_config_and_schema(
        &resp.state,
        config,
        &rc.schema.block,
    )))
}

/// PlanResourceChange for one instance, with the provider's diagnostics
/// placed at the attributes they name and every plan check of the
/// contract. At apply time `approved` is the planned value the user
/// approved: the final plan must keep its promises (known values stay).
/// `None` after reporting why there is no usable plan.
pub async fn plan_change(
    out: &mut Vec<Diagnostic>,
    rc: &ResourceCtx,
    addr: &InstanceAddr,
    prior: &Value,
    private: &[u8],
    config: &Value,
    approved: Option<&Value>,
) -> Option<PlanResponse> {
    let range = &rc.res.range;
    let proposed = proposed_new_over(&rc.schema.block, &rc.empty, prior, config);
    let resp = rc
        .provider
        .plan_resource_change(PlanRequest {
            type_name: &rc.res.ty,
            prior_state: prior,
            proposed_new_state: &proposed,
            config,
            prior_private: private,
            provider_meta: None,
        })
        .await;
    let resp = checks::answered(out, resp, range, None)?;
    if rc.report(out, &resp.diagnostics, addr, range) {
        return None;
    }
    let subject = checks::Subject {
        schema: &rc.schema.block,
        ty: &rc.ty,
        provider: rc.provider_label(),
        addr,
        range,
    };
    let mut errs = checks::check_plan(
        &subject,
        prior,
        config,
        &resp.planned_state,
        resp.legacy_type_system,
    );
    if let Some(approved) = approved.filter(|_| !resp.legacy_type_system) {
        errs.extend(checks::check_final_plan(
            &subject,
            approved,
            &resp.planned_state,
        ));
    }
    let fatal = errs.iter().any(is_error);
    out.extend(errs);
    (!fatal).then_some(resp)
}

/// For a resource whose configuration has for_each, the provider its
/// resource context holds until each instance is bound (`provider_each::bind`): one of
/// the configuration's instances, or (none configured: an empty for_each)
/// an unconfigured one that only answers for the schema. None for any
/// other configuration.
pub(crate) async fn placeholder(w: &Walk, key: &ProviderConfigKey) -> Option<Arc<dyn Provider>> {
    let any = w
        .providers
        .lock()
        .await
        .iter()
        .find(|(k, _)| k.key.is_some() && k.config() == *key)
        .map(|(_, p)| p.clone());
    if any.is_some() {
        return any;
    }
    if !crate::walk::provider_is_repeated(&w.core, key)? {
        return None;
    }
    w.core.host.instance(key).await.ok()
}
