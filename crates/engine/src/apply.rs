//! The apply phase's driver: the plan's deletes first
//! ([`apply_deletes`], dependents before their dependencies), then the
//! graph, applying every resource instance with a planned change: the
//! now-known configuration, the final plan checked against the approved
//! one ([`crate::instance::plan_change`]), the change, the result checked
//! against the final plan and made durable ([`crate::persist`]) before
//! dependents start. Replacements follow their order (delete first, or
//! create first with the old object deposed); a failed create keeps what
//! the provider returned as tainted. What apply owns (the approved plan,
//! where changes are recorded, the counts) lives on [`Applying`].
//!
//! Layering: imports nodes, instance, conditions, walk, decide, checks,
//! persist, schedule and the bottom layers; never plan or run.

use crate::checks;
use crate::conditions;
use crate::decide;
use crate::graph::NodeId;
use crate::instance::{plan_change, prior_value, read_data_source, resource_ctx, ResourceCtx};
use crate::model::{mark_config_and_schema, Action, Change, Plan};
use crate::nodes::{self, Instance};
use crate::persist::{Persist, SharedRun};
use crate::provider::{ApplyRequest, Provider};
use crate::provision;
use crate::schedule;
use crate::sync::lock;
use crate::values::InstanceVars;
use crate::walk::{guarded, is_error, object_id, provider_instance, Done, Event, Walk};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use terrane_config::{Diagnostic, SourceRange};
use terrane_schema::Block;
use terrane_state::{Change as StateChange, InstanceAddr, Mode, ModulePath, ObjectState, Status};
use terrane_value::marks::{mark_paths, sensitive_paths};
use terrane_value::Value;

/// One apply walk and what it owns.
pub struct Applying {
    pub walk: Arc<Walk>,
    /// The plan's changes of current objects the walk applies, sorted by
    /// address (none in destroy mode, where no walk runs: the deletes
    /// are applied from the plan's list). A sorted vector rather than a
    /// hash map: a map's table of whole changes (over 500 bytes each) was
    /// up to half empty slots, and 4.3 MB of a 5,000-instance apply's
    /// 20.7 MB heap peak.
    planned: Vec<Change>,
    /// Where each change is made durable.
    pub store: Persist,
    /// Objects (added, changed, destroyed), for the summary.
    applied: Mutex<(usize, usize, usize)>,
    /// Objects recorded by `import` blocks.
    imported: Mutex<usize>,
}

impl Applying {
    /// Takes from `plan` the changes its walk applies (every change of a
    /// current object, outside destroy mode), moving them rather than
    /// copying: the plan keeps the deletes (copied: both need them), the
    /// forgets and the changes of deposed objects, which are applied from
    /// its list.
    pub fn new(walk: Arc<Walk>, plan: &mut Plan, run: Option<SharedRun>) -> Arc<Applying> {
        let mut planned = Vec::new();
        if plan.mode != crate::PlanMode::Destroy {
            let mut kept = Vec::new();
            let changes = std::mem::take(&mut plan.changes);
            let current = changes.iter().filter(|c| c.deposed.is_none()).count();
            planned.reserve_exact(current);
            for c in changes {
                if c.deposed.is_some() {
                    kept.push(c);
                } else if matches!(c.action, Action::Delete | Action::Forget) {
                    planned.push(c.clone());
                    kept.push(c);
                } else {
                    planned.push(c);
                }
            }
            plan.changes = kept;
            // The plan lists its changes in address order already, which
            // this sort then only confirms.
            planned.sort_by(|a: &Change, b: &Change| a.addr.cmp(&b.addr));
            // One change per object; were there two, the later one counts
            // (the sort is stable).
            planned.dedup_by(|later, kept| {
                let same = later.addr == kept.addr;
                if same {
                    std::mem::swap(later, kept);
                }
                same
            });
        }
        Arc::new(Applying {
            walk,
            planned,
            store: Persist::new(run),
            applied: Mutex::new((0, 0, 0)),
            imported: Mutex::new(0),
        })
    }

    /// The planned change of the current object at `addr`.
    fn planned(&self, addr: &InstanceAddr) -> Option<&Change> {
        let at = self.planned.binary_search_by(|c| c.addr.cmp(addr)).ok()?;
        self.planned.get(at)
    }

    /// Whether new work must not start: Ctrl-C, or state can no longer be
    /// recorded (what is in flight still finishes and is kept aside).
    pub fn stopped(&self) -> bool {
        self.walk.interrupted() || self.store.failed()
    }

    /// Makes a change durable (and mirrors it in the walk's state).
    pub fn record(&self, change: StateChange) -> Result<(), Diagnostic> {
        let w = &self.walk;
        self.store.record(&w.state, &w.core.progress, change)
    }

    /// Like [`Applying::record`], sharing the transaction with concurrent
    /// changes.
    pub async fn record_durable(&self, change: StateChange) -> Result<(), Diagnostic> {
        let w = &self.walk;
        self.store
            .record_durable(&w.state, &w.core.progress, change)
            .await
    }

    /// Records `object` as the current object of `addr`, durably.
    pub async fn save_current(
        &self,
        rc: &ResourceCtx,
        addr: &InstanceAddr,
        object: ObjectState,
    ) -> Result<(), Diagnostic> {
        self.record_durable(StateChange::SetObject {
            addr: addr.clone(),
            deposed: None,
            provider: rc.provider_key.to_string(),
            object,
        })
        .await
    }

    /// Objects (added, changed, destroyed) so far.
    pub fn applied(&self) -> (usize, usize, usize) {
        *lock(&self.applied)
    }

    /// How many objects `import` blocks brought in.
    pub fn imported(&self) -> usize {
        *lock(&self.imported)
    }

    /// Runs every node of the graph: resources applied here, the others
    /// by [`crate::nodes`].
    pub async fn walk_graph(self: &Arc<Self>) -> Vec<Diagnostic> {
        let a = self.clone();
        nodes::walk_graph(&self.walk, move |id| resource(a.clone(), id)).await
    }
}

/// Apply every instance of a resource node that has a planned change.
async fn resource(a: Arc<Applying>, id: NodeId) -> Done {
    let w = &a.walk;
    // Boxed: finding the schema and the provider is large and short-lived
    // work, and would otherwise stay in the resource's future.
    let rc = match Box::pin(resource_ctx(w, id)).await {
        Ok(rc) => Arc::new(rc),
        Err(d) => return (false, d),
    };
    // Only validate leaves an expansion unknown; apply has nothing to do there.
    let applying = a.clone();
    nodes::fan_out(
        w,
        &rc,
        |_, _| true,
        |_, _| {},
        move |i, rc| {
            let a = applying.clone();
            async move {
                let mut out = Vec::new();
                let address = crate::provider::pulumi::address_for(&*rc.provider, &i.addr);
                let apply = apply_planned(&a, &mut out, &rc, i);
                let ok = crate::provider::pulumi::with_address(address, apply).await;
                (ok, out)
            }
        },
    )
    .await
}

/// Applies the planned change of one instance, if it has one.
async fn apply_planned(
    a: &Applying,
    out: &mut Vec<Diagnostic>,
    rc: &ResourceCtx,
    i: Instance,
) -> bool {
    let w = &a.walk;
    let Instance {
        module,
        addr,
        vars: inst,
    } = i;
    let planned = a.planned(&addr).cloned();
    let current = lock(&w.state).object(&addr, None).cloned();
    let Some(change) = planned else {
        // No planned change (e.g. excluded by -target): keep what state has.
        if let Some(o) = current {
            if let Ok((v, _)) = prior_value(rc, &addr, &o).await {
                rc.set_value(w, &module, addr.key.clone(), v);
            }
        }
        return true;
    };
    // An import (by an `import` block) records the object first.
    let current = match (&current, &change.importing) {
        (None, Some(_)) if !change.before.is_null() => {
            let object = rc.object(
                &change.before,
                change.prior_private.clone(),
                Status::Ready,
                false,
            );
            if let Err(d) = a.record(StateChange::SetObject {
                addr: addr.clone(),
                deposed: None,
                provider: rc.provider_key.to_string(),
                object: object.clone(),
            }) {
                out.push(d);
                return false;
            }
            Some(object)
        }
        _ => current,
    };
    // The import itself became durable with the plan's refreshed state (or
    // just above); it is reported, and counted, here.
    if let Some(id) = &change.importing {
        for done in [false, true] {
            w.core.emit(Event::Importing {
                addr: &addr,
                id,
                done,
            });
        }
        *lock(&a.imported) += 1;
    }
    if change.action == Action::NoOp {
        rc.set_value(w, &module, addr.key.clone(), change.before.clone());
        return true;
    }
    if a.stopped() {
        return false;
    }
    let _permit = w.limit.acquire().await;
    if a.stopped() {
        return false;
    }
    // Boxed: the instance's future is large (see the plan node).
    if rc.mode == Mode::Data {
        Box::pin(read_data(a, out, rc, &module, &addr, inst)).await
    } else {
        let i = Instance {
            module,
            addr,
            vars: inst,
        };
        Box::pin(apply_instance(a, out, rc, i, &change, current)).await
    }
}

async fn read_data(
    a: &Applying,
    out: &mut Vec<Diagnostic>,
    rc: &ResourceCtx,
    module: &ModulePath,
    addr: &InstanceAddr,
    inst: InstanceVars,
) -> bool {
    let w = &*a.walk;
    let (config, d) = rc.config(w, module, inst);
    let failed = d.iter().any(is_error);
    out.extend(d);
    if failed {
        return false;
    }
    let started = std::time::Instant::now();
    w.core.emit(Event::Started {
        addr,
        deposed: None,
        action: Action::Read,
        id: None,
    });
    let Some(value) = read_data_source(out, rc, addr, &config)
        .await
        .and_then(|a| a.required(out, addr, &rc.res.range))
    else {
        return false;
    };
    let object = rc.object(&value, Vec::new(), Status::Ready, false);
    if let Err(d) = a.save_current(rc, addr, object).await {
        out.push(d);
        return false;
    }
    w.core.emit(Event::Finished {
        addr,
        deposed: None,
        action: Action::Read,
        id: object_id(&value),
        elapsed: started.elapsed(),
    });
    rc.set_value(w, module, addr.key.clone(), value);
    true
}

async fn apply_instance(
    a: &Applying,
    out: &mut Vec<Diagnostic>,
    rc: &ResourceCtx,
    i: Instance,
    change: &Change,
    current: Option<ObjectState>,
) -> bool {
    let Instance {
        module,
        addr,
        vars: inst,
    } = i;
    let (module, addr) = (&module, &addr);
    let w = &*a.walk;
    let ty = rc.ty.clone();
    let label = rc.provider_label();
    let range = &rc.res.range;
    let target = Target {
        provider: &rc.provider,
        schema: &rc.schema.block,
        provider_label: label,
        type_name: &rc.res.ty,
        range,
    };
    if !conditions::enforce(
        w,
        out,
        module,
        &inst,
        &rc.res.lifecycle.preconditions,
        "Resource precondition failed",
        &addr.to_string(),
    ) {
        return false;
    }
    let inst_post = inst.clone();
    let (config, d) = rc.config(w, module, inst);
    let failed = d.iter().any(is_error);
    out.extend(d);
    if failed {
        return false;
    }
    let plain_config = config.unmark_deep();
    if !plain_config.is_wholly_known() {
        out.push(Diagnostic::error(
            "Configuration contains unknown value",
            format!("The configuration of {addr} still has unknown values during apply; this is a bug in terrane's handling of dependencies."),
            range.clone(),
        ));
        return false;
    }
    let cfg = rc
        .res
        .lifecycle
        .ignore_changes
        .as_ref()
        .map(|_| change.before.unmark_deep());
    let plain_config = match cfg {
        Some(prior) if !prior.is_null() && decide::ignores_at_apply(change.action) => {
            rc.ignore_changes(&prior, &plain_config)
        }
        _ => plain_config,
    };
    let mut prior = match &current {
        // The plan reported the provider's upgrade warnings.
        Some(o) => match prior_value(rc, addr, o).await {
            Ok((v, _)) => v.unmark_deep(),
            Err(d) => {
                out.extend(d);
                return false;
            }
        },
        None => Value::null((*ty).clone()),
    };
    let mut private = current
        .as_ref()
        .and_then(|o| o.private.clone())
        .unwrap_or_default();
    let cbd = change.action == Action::CreateThenDelete;
    let mut deposed_key = None;
    match change.action {
        Action::DeleteThenCreate if !prior.is_null() => {
            if !destroy(a, out, &target, addr, None, &prior, &private).await {
                return false;
            }
            prior = Value::null((*ty).clone());
            private = Vec::new();
        }
        Action::CreateThenDelete if !prior.is_null() => {
            let key = terrane_state::model::new_deposed_key();
            if let Err(d) = a
                .record_durable(StateChange::Depose {
                    addr: addr.clone(),
                    key: key.clone(),
                })
                .await
            {
                out.push(d);
                return false;
            }
            deposed_key = Some((key, prior.clone(), private.clone()));
            prior = Value::null((*ty).clone());
            private = Vec::new();
        }
        _ => {}
    }
    // Final plan with the known configuration.
    let approved = change.after.unmark_deep();
    let final_plan = plan_change(
        out,
        rc,
        addr,
        &prior,
        &private,
        &plain_config,
        Some(&approved),
    );
    let Some(resp) = final_plan.await else {
        return restore_deposed(a, addr, deposed_key);
    };
    let planned = resp.planned_state;
    // An update that, planned again with what apply has learned, changes
    // nothing is skipped as Terraform skips it: no provider call, no
    // progress lines, not counted ("0 changed"); the object stays.
    if change.action == Action::Update && !prior.is_null() && planned.unmark_deep() == prior {
        let value = mark_config_and_schema(&prior, &config, &rc.schema.block);
        rc.set_value(w, module, addr.key.clone(), value.clone());
        let post = InstanceVars {
            self_value: Some(value),
            ..inst_post
        };
        return conditions::enforce(
            w,
            out,
            module,
            &post,
            &rc.res.lifecycle.postconditions,
            "Resource postcondition failed",
            &addr.to_string(),
        );
    }
    let action = decide::apply_action(&prior);
    let started = std::time::Instant::now();
    w.core.emit(Event::Started {
        addr,
        deposed: None,
        action,
        id: object_id(&prior),
    });
    let applied = rc
        .provider
        .apply_resource_change(ApplyRequest {
            type_name: &rc.res.ty,
            prior_state: &prior,
            planned_state: &planned,
            config: &plain_config,
            planned_private: &resp.planned_private,
            provider_meta: None,
        })
        .await;
    let Some(resp) = checks::answered(out, applied, range, None) else {
        return restore_deposed(a, addr, deposed_key);
    };
    // A failed apply still reports what exists: the state is kept below.
    let apply_failed = rc.report(out, &resp.diagnostics, addr, range);
    let new_state = resp.new_state;
    if apply_failed {
        // Keep what the provider says exists; a failed create is tainted.
        if !new_state.is_null() && new_state.is_wholly_known() && new_state.ty().conforms_to(&ty) {
            let status = if prior.is_null() {
                Status::Tainted
            } else {
                Status::Ready
            };
            let object = rc.object(
                &mark_paths(&new_state, &sensitive_paths(&config)),
                resp.private,
                status,
                cbd,
            );
            if let Err(d) = a.save_current(rc, addr, object).await {
                out.push(d);
            }
        } else if deposed_key.is_some() {
            return restore_deposed(a, addr, deposed_key);
        }
        return false;
    }
    let errs = checks::check_apply(
        &rc.schema.block,
        label,
        addr,
        &planned,
        &new_state,
        checks::Applied::Changed {
            legacy: resp.legacy_type_system,
        },
        range,
    );
    if !errs.is_empty() {
        out.extend(errs);
        // The object exists but is not what was planned: keep it, tainted
        // where it is new, with unknowns cleared as Terraform does.
        let kept = unknown_as_null(&new_state);
        if !kept.is_null() && kept.ty().conforms_to(&ty) {
            let status = if prior.is_null() {
                Status::Tainted
            } else {
                Status::Ready
            };
            let object = rc.object(&kept, resp.private, status, cbd);
            let _ = a.save_current(rc, addr, object).await;
        }
        return false;
    }
    let value = mark_config_and_schema(&new_state, &config, &rc.schema.block);
    let object = rc.object(&value, resp.private.clone(), Status::Ready, cbd);
    if let Err(d) = a.save_current(rc, addr, object).await {
        out.push(d);
        return false;
    }
    // Creation-time provisioners run on the saved new object; when one
    // fails the object is kept tainted, so the next plan replaces it.
    if action == Action::Create {
        let vars = InstanceVars {
            self_value: Some(value.clone()),
            ..inst_post.clone()
        };
        let when = terrane_config::ProvisionerWhen::Create;
        let blocks = provision::Blocks {
            provisioners: &rc.res.provisioners,
            connection: rc.res.connection.as_ref(),
        };
        if !provision::run(w, out, module, addr, blocks, &vars, when).await {
            let object = rc.object(&value, resp.private, Status::Tainted, cbd);
            if let Err(d) = a.save_current(rc, addr, object).await {
                out.push(d);
            }
            return false;
        }
    }
    w.core.emit(Event::Finished {
        addr,
        deposed: None,
        action,
        id: object_id(&value),
        elapsed: started.elapsed(),
    });
    {
        let mut a = lock(&a.applied);
        match change.action {
            Action::Create => a.0 += 1,
            Action::Update => a.1 += 1,
            // The destroy half was counted when it ran (`destroy`), as the
            // deposed object of a create-before-destroy replacement is.
            Action::DeleteThenCreate | Action::CreateThenDelete => a.0 += 1,
            _ => {}
        }
    }
    rc.set_value(w, module, addr.key.clone(), value.clone());
    let post = InstanceVars {
        self_value: Some(value),
        ..inst_post
    };
    if !conditions::enforce(
        w,
        out,
        module,
        &post,
        &rc.res.lifecycle.postconditions,
        "Resource postcondition failed",
        &addr.to_string(),
    ) {
        return false;
    }
    // create_before_destroy: the old object goes once the new one exists.
    // When it cannot, it stays deposed and the run fails (the destroy
    // reported why), but the new object is current: its dependents go on
    // with it, as Terraform (which destroys deposed objects after the
    // dependents' changes) leaves them.
    if let Some((key, old, old_private)) = deposed_key {
        destroy(a, out, &target, addr, Some(&key), &old, &old_private).await;
    }
    true
}

/// A create_before_destroy replacement that failed before anything new
/// existed: the deposed object becomes current again.
fn restore_deposed(
    a: &Applying,
    addr: &InstanceAddr,
    deposed: Option<(String, Value, Vec<u8>)>,
) -> bool {
    let w = &*a.walk;
    if let Some((key, _, _)) = deposed {
        let object = lock(&w.state).object(addr, Some(&key)).cloned();
        if let Some(o) = object {
            let provider = lock(&w.state)
                .resources
                .get(&addr.resource)
                .map(|r| r.instance_provider(&addr.key))
                .unwrap_or_default();
            let _ = a.record(StateChange::SetObject {
                addr: addr.clone(),
                deposed: None,
                provider,
                object: o,
            });
            let _ = a.record(StateChange::RemoveObject {
                addr: addr.clone(),
                deposed: Some(key),
            });
        }
    }
    false
}

/// Runs the plan's plain deletes (objects no longer in the configuration,
/// deposed objects, a destroy plan) before the graph walk: dependents
/// before their dependencies, as many at once as parallelism allows.
/// Whether all succeeded, and their diagnostics.
pub async fn apply_deletes(a: &Arc<Applying>, deletes: Vec<Change>) -> Done {
    if deletes.is_empty() {
        return (true, Vec::new());
    }
    // Order: an object goes before the objects it depends on.
    let names: BTreeMap<String, Vec<usize>> =
        deletes
            .iter()
            .enumerate()
            .fold(BTreeMap::new(), |mut m, (i, c)| {
                m.entry(crate::model::config_addr(&c.addr))
                    .or_insert_with(Vec::new)
                    .push(i);
                m
            });
    let mut blockers: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); deletes.len()];
    for (i, c) in deletes.iter().enumerate() {
        // c depends on d => c is deleted before d => d waits for c.
        for dep in &c.dependencies {
            for j in names.get(dep).into_iter().flatten() {
                if *j != i {
                    blockers[*j].insert(i);
                }
            }
        }
    }
    // Each delete starts as soon as everything blocking it is done, at
    // most `-parallelism` at once, none after an interrupt.
    let order = schedule::Order::new(blockers.into_iter());
    let stop = {
        let a = a.clone();
        Arc::new(move || a.stopped())
    };
    let gate = schedule::Gate {
        limit: Some(a.walk.limit.clone()),
        stop: Some(stop),
    };
    let deletes = Arc::new(deletes);
    let outcome = schedule::execute(order, gate, |i| {
        let (a, deletes) = (a.clone(), deletes.clone());
        async move {
            let c = &deletes[i];
            let site = || {
                let what = match &c.deposed {
                    Some(d) => format!("{} (deposed object {d})", c.addr),
                    None => c.addr.to_string(),
                };
                (what, None)
            };
            // Made by guarded, which boxes it, not held in a local (which
            // would keep its whole size in this task's future).
            guarded(a.walk.phase, site, || async {
                let mut out = Vec::new();
                let ok = delete_one(&a, &mut out, c).await;
                (ok, out)
            })
            .await
        }
    })
    .await;
    let mut diags: Vec<Diagnostic> = outcome.reports.into_iter().flatten().collect();
    diags.extend(
        outcome.lost.into_iter().map(|e| {
            Diagnostic::error("Internal error", format!("A delete task failed: {e}"), None)
        }),
    );
    (outcome.ok, diags)
}

async fn delete_one(a: &Applying, out: &mut Vec<Diagnostic>, c: &Change) -> bool {
    let w = &*a.walk;
    if let Err(e) = w.core.ensure_provider(&c.provider.addr) {
        out.push(Diagnostic::error(
            "Failed to query available provider packages",
            format!("{e} (needed to destroy {})", c.addr),
            None,
        ));
        return false;
    }
    let provider = match provider_instance(w, &c.provider).await {
        Some(p) => p,
        // An instance of a configuration with for_each is never stood in
        // for by an unconfigured one.
        None if c.provider.key.is_some() => {
            let d = c.deposed.as_deref();
            out.push(crate::provider_each::not_present(
                &c.addr,
                d,
                &c.provider,
                None,
            ));
            return false;
        }
        None => match w.core.host.instance(&c.provider).await {
            Ok(p) => {
                if let Err(e) = p
                    .configure_provider(
                        crate::TERRAFORM_VERSION,
                        &empty_provider_config(w, &c.provider).await,
                    )
                    .await
                {
                    out.push(Diagnostic::error(
                        "Failed to configure provider",
                        e.to_string(),
                        None,
                    ));
                    return false;
                }
                p
            }
            Err(e) => {
                out.push(Diagnostic::error(
                    "Failed to start provider",
                    e.to_string(),
                    None,
                ));
                return false;
            }
        },
    };
    let schema = match w.core.host.schema(&c.provider.addr).await {
        Ok(s) => s,
        Err(e) => {
            out.push(Diagnostic::error(
                "Failed to load plugin schemas",
                e.to_string(),
                None,
            ));
            return false;
        }
    };
    let Some(rs) = schema.resource(&c.addr.resource.ty) else {
        out.push(Diagnostic::error(
            "Invalid resource type",
            format!(
                "The provider {} no longer supports resource type {:?}, so {} cannot be destroyed.",
                c.provider.addr, c.addr.resource.ty, c.addr
            ),
            None,
        ));
        return false;
    };
    let target = Target {
        provider: &provider,
        schema: &rs.block,
        provider_label: &c.provider.addr.to_string(),
        type_name: &c.addr.resource.ty,
        range: &None,
    };
    destroy(
        a,
        out,
        &target,
        &c.addr,
        c.deposed.as_deref(),
        &c.before,
        &c.prior_private,
    )
    .await
}

async fn empty_provider_config(w: &Walk, key: &crate::provider::ProviderConfigKey) -> Value {
    match w.core.host.schema(&key.addr).await {
        Ok(s) => s.provider.block.empty_value(),
        Err(_) => Value::null(terrane_value::Type::Dynamic),
    }
}

/// The object a destroy acts on: its provider, schema (as named in
/// messages) and resource type, and where its resource is written.
struct Target<'a> {
    provider: &'a Arc<dyn Provider>,
    schema: &'a Block,
    provider_label: &'a str,
    type_name: &'a str,
    range: &'a Option<SourceRange>,
}

/// Destroys one object (current or deposed) through its provider.
async fn destroy(
    a: &Applying,
    out: &mut Vec<Diagnostic>,
    t: &Target<'_>,
    addr: &InstanceAddr,
    deposed: Option<&str>,
    prior: &Value,
    private: &[u8],
) -> bool {
    let w = &*a.walk;
    let Target {
        provider,
        schema,
        provider_label,
        type_name,
        range,
    } = *t;
    let ty = schema.implied_type();
    let null = Value::null(ty.clone());
    let plain = prior.unmark_deep();
    let started = std::time::Instant::now();
    w.core.emit(Event::Started {
        addr,
        deposed,
        action: Action::Delete,
        id: object_id(prior),
    });
    if deposed.is_none() && !destroy_provisioners(w, out, addr, prior).await {
        return false;
    }
    let applied = provider
        .apply_resource_change(ApplyRequest {
            type_name,
            prior_state: &plain,
            planned_state: &null,
            config: &null,
            planned_private: private,
            provider_meta: None,
        })
        .await;
    let doing = format!("destroying {addr}");
    let Some(resp) = checks::answered(out, applied, range, Some(&doing)) else {
        return false;
    };
    let bad = resp.diagnostics.has_errors();
    out.extend(match deposed {
        Some(_) => checks::provider_diags_unplaced(&resp.diagnostics),
        None => checks::provider_diags(&resp.diagnostics, &addr.to_string(), range),
    });
    if bad {
        return false;
    }
    let errs = checks::check_apply(
        schema,
        provider_label,
        addr,
        &null,
        &resp.new_state,
        checks::Applied::Deleted,
        range,
    );
    if !errs.is_empty() {
        out.extend(errs);
        return false;
    }
    if let Err(d) = a
        .record_durable(StateChange::RemoveObject {
            addr: addr.clone(),
            deposed: deposed.map(str::to_string),
        })
        .await
    {
        out.push(d);
        return false;
    }
    lock(&a.applied).2 += 1;
    w.core.emit(Event::Finished {
        addr,
        deposed,
        action: Action::Delete,
        id: None,
        elapsed: started.elapsed(),
    });
    true
}

/// Runs the destroy-time provisioners of the current object at `addr`
/// before it is destroyed: those of its resource block, or of the
/// `removed` block that names it. As in Terraform, none run for a tainted
/// object or for a resource no longer configured. False when one failed
/// (the object is then kept).
async fn destroy_provisioners(
    w: &Walk,
    out: &mut Vec<Diagnostic>,
    addr: &InstanceAddr,
    prior: &Value,
) -> bool {
    let tainted = lock(&w.state)
        .object(addr, None)
        .is_some_and(|o| o.status == Status::Tainted);
    if tainted || addr.resource.mode != Mode::Managed {
        return true;
    }
    let names: Vec<String> = addr
        .resource
        .module
        .0
        .iter()
        .map(|(n, _)| n.clone())
        .collect();
    let Some(config) = w.module_config(&names) else {
        return true;
    };
    let (ty, name) = (&addr.resource.ty, &addr.resource.name);
    // By index: a scan of every resource per deleted object made a
    // destroy of 100,000 objects quadratic.
    let declared = config.module.resource(false, ty, name);
    let (provisioners, connection) = match declared {
        Some(r) => (&r.provisioners, r.connection.as_ref()),
        None => {
            let wanted = format!("{ty}.{name}");
            let removed = config
                .module
                .removed
                .iter()
                .find(|rm| rm.from_addr.as_deref() == Some(wanted.as_str()));
            match removed {
                Some(rm) => (&rm.provisioners, rm.connection.as_ref()),
                None => return true,
            }
        }
    };
    if provisioners.is_empty() {
        return true;
    }
    let vars = provision::destroy_vars(addr, prior);
    let when = terrane_config::ProvisionerWhen::Destroy;
    provision::run(
        w,
        out,
        &addr.resource.module,
        addr,
        provision::Blocks {
            provisioners,
            connection,
        },
        &vars,
        when,
    )
    .await
}

/// `v` with every unknown replaced by a null of its type (Terraform's
/// `cty.UnknownAsNull`): what is kept of an object a provider returned with
/// unknowns after apply.
fn unknown_as_null(v: &Value) -> Value {
    if !v.is_known() {
        return Value::null(v.ty().clone()).with_sensitive(v.is_sensitive());
    }
    if v.is_wholly_known() {
        return v.clone();
    }
    v.map_children(unknown_as_null)
}
