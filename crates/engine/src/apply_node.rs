//! Applying one resource node: for every instance with a planned change,
//! evaluate the now-known configuration, plan again and check the final
//! plan against the approved one, apply, check the result against the
//! final plan and make it durable before dependents start. Replacements
//! follow their order (delete first, or create first with the old object
//! deposed); a failed create keeps what the provider returned as tainted.
//! Deletes of objects that left the configuration run before the graph
//! walk, in reverse dependency order ([`apply_deletes`]).

use crate::checks;
use crate::graph::NodeId;
use crate::model::{mark_paths, sensitive_paths, Action, Change};
use crate::plan_node::{resource_ctx, ResourceCtx};
use crate::provider::{ApplyRequest, PlanRequest, Provider};
use crate::values::{Expansion, InstanceVars};
use crate::walk::{instance_vars, is_error, lock, Walk};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use terrane_config::{Diagnostic, SourceRange};
use terrane_schema::objchange::proposed_new;
use terrane_schema::Block;
use terrane_state::{Change as StateChange, InstanceAddr, Mode, ModulePath, ObjectState, Status};
use terrane_value::Value;

/// Makes a change durable (and mirrors it in the walk's state).
pub fn persist(w: &Walk, change: StateChange) -> Result<(), Diagnostic> {
    if let Some(p) = &w.persist {
        // Off the walk's thread: a store may block on a runtime of its own
        // (the PostgreSQL client does), which cannot start inside ours.
        let r = {
            let mut guard = lock(p);
            let run: &mut Box<dyn terrane_state::Run> = &mut guard;
            let change = &change;
            std::thread::scope(|s| {
                s.spawn(move || {
                    run.persist(std::slice::from_ref(change))
                        .map_err(|e| e.to_string())
                })
                .join()
            })
            .unwrap_or_else(|_| Err("the state store panicked while writing".to_string()))
        };
        match r {
            Ok(serial) => recorded(w, serial),
            Err(e) => return Err(unrecorded(w, change, e)),
        }
    }
    lock(&w.state).apply(&change);
    w.core
        .progress
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Ok(())
}

/// The end of the detail of every persist failure after the first.
pub const REPEATED_PERSIST_FAILURE: &str = " (see the first \"Failed to persist state\" error)";

fn recorded(w: &Walk, serial: u64) {
    w.last_serial
        .fetch_max(serial, std::sync::atomic::Ordering::SeqCst);
}

/// A change that happened but could not be recorded: kept for the
/// emergency state file, and no new work starts after it. Only the first
/// failure says why; the rest would repeat it.
fn unrecorded(w: &Walk, change: StateChange, why: String) -> Diagnostic {
    lock(&w.unrecorded).push(change);
    let first = !w
        .persist_failed
        .swap(true, std::sync::atomic::Ordering::SeqCst);
    let detail = if first {
        format!("{why}\n\nNo new changes will be started; changes already in progress finish and are kept for the emergency state file.")
    } else {
        format!("{why}{REPEATED_PERSIST_FAILURE}")
    };
    Diagnostic::error("Failed to persist state", detail, None)
}

type Commit = (
    StateChange,
    tokio::sync::oneshot::Sender<Result<u64, String>>,
);

/// Group commit of concurrent instance changes: changes that arrive while
/// a transaction is being written wait and go together in the next one.
/// Each change is still durable before its `persist_durable` returns (so
/// before dependents start and before it counts as done); what is shared
/// is the fsync, not the guarantee.
#[derive(Default)]
pub struct GroupCommit {
    inner: Arc<std::sync::Mutex<(Vec<Commit>, bool)>>,
}

/// Makes a change durable like [`persist`], sharing the transaction with
/// other instances' changes made at the same time. The write runs on a
/// blocking thread, so the walk keeps working while the disk syncs.
pub async fn persist_durable(w: &Walk, change: StateChange) -> Result<(), Diagnostic> {
    let Some(run) = &w.persist else {
        return persist(w, change);
    };
    let (tx, rx) = tokio::sync::oneshot::channel();
    let start_writer = {
        let mut g = lock(&w.commits.inner);
        g.0.push((change.clone(), tx));
        !std::mem::replace(&mut g.1, true)
    };
    if start_writer {
        let (queue, run) = (w.commits.inner.clone(), run.clone());
        tokio::task::spawn_blocking(move || write_commits(&queue, run));
    }
    let result = rx
        .await
        .unwrap_or_else(|_| Err("the state writer stopped".into()));
    match result {
        Ok(serial) => recorded(w, serial),
        Err(e) => return Err(unrecorded(w, change, e)),
    }
    lock(&w.state).apply(&change);
    w.core
        .progress
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Ok(())
}

/// The writer: one transaction per batch of waiting changes until none
/// is left. A failed batch is retried change by change so one bad change
/// does not fail the others. The run handle is released before the last
/// batch is acknowledged, so once every caller has its answer the apply
/// holds the only reference again.
fn write_commits(
    queue: &std::sync::Mutex<(Vec<Commit>, bool)>,
    run: Arc<std::sync::Mutex<Box<dyn terrane_state::Run>>>,
) {
    let mut run = Some(run);
    loop {
        let batch = std::mem::take(&mut lock(queue).0);
        let (changes, senders): (Vec<StateChange>, Vec<_>) = batch.into_iter().unzip();
        let results: Vec<Result<u64, String>> = match run.as_ref() {
            Some(r) => {
                let mut r = lock(r);
                match r.persist(&changes) {
                    Ok(serial) => changes.iter().map(|_| Ok(serial)).collect(),
                    Err(e) if changes.len() == 1 => vec![Err(e.to_string())],
                    Err(_) => changes
                        .iter()
                        .map(|c| {
                            r.persist(std::slice::from_ref(c))
                                .map_err(|e| e.to_string())
                        })
                        .collect(),
                }
            }
            None => changes
                .iter()
                .map(|_| Err("the state writer stopped".to_string()))
                .collect(),
        };
        let last = {
            let mut g = lock(queue);
            if g.0.is_empty() {
                g.1 = false;
                true
            } else {
                false
            }
        };
        if last {
            drop(run.take());
        }
        for (s, r) in senders.into_iter().zip(results) {
            let _ = s.send(r);
        }
        if last {
            return;
        }
    }
}

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
                let addr = rc.addr(&module, key.clone());
                let planned = w.planned.get(&(addr.clone(), None)).cloned();
                let current = lock(&w.state).object(&addr, None).cloned();
                let Some(change) = planned else {
                    // No planned change (e.g. excluded by -target): keep what state has.
                    if let Some(o) = current {
                        if let Ok(v) = crate::plan_node::prior_value(&rc, &addr, &o).await {
                            w.values.set_instance(
                                &module,
                                rc.mode,
                                &rc.res.ty,
                                &rc.res.name,
                                addr.key.clone(),
                                v,
                            );
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
                        if let Err(d) = persist(
                            &w,
                            StateChange::SetObject {
                                addr: addr.clone(),
                                deposed: None,
                                provider: rc.provider_key.to_string(),
                                object: object.clone(),
                            },
                        ) {
                            w.diag(d);
                            return false;
                        }
                        Some(object)
                    }
                    _ => current,
                };
                if change.action == Action::NoOp {
                    w.values.set_instance(
                        &module,
                        rc.mode,
                        &rc.res.ty,
                        &rc.res.name,
                        addr.key.clone(),
                        change.before.clone(),
                    );
                    return true;
                }
                if w.interrupted() {
                    return false;
                }
                let _permit = w.limit.acquire().await;
                if w.interrupted() {
                    return false;
                }
                // Boxed: the instance's future is large (see the plan node).
                if rc.mode == Mode::Data {
                    Box::pin(read_data(&w, &rc, &module, &addr, inst)).await
                } else {
                    Box::pin(apply_instance(
                        &w, &rc, &module, &addr, inst, &change, current,
                    ))
                    .await
                }
            }));
        }
    }
    while let Some(r) = tasks.join_next().await {
        // A panic is caught (and reported) inside the task; a task that
        // still ends abnormally (cancelled) is a failure, never a success.
        ok &= r.unwrap_or(false);
    }
    ok
}

async fn read_data(
    w: &Walk,
    rc: &ResourceCtx,
    module: &ModulePath,
    addr: &InstanceAddr,
    inst: InstanceVars,
) -> bool {
    let (config, d) = rc.config(w, module, inst);
    let failed = d.iter().any(is_error);
    w.diags(d);
    if failed {
        return false;
    }
    let started = std::time::Instant::now();
    w.core.emit(crate::walk::Event::Started {
        addr,
        deposed: None,
        action: Action::Read,
        id: None,
    });
    let Some(value) = crate::plan_node::read_data_source(w, rc, addr, &config).await else {
        return false;
    };
    let object = rc.object(&value, Vec::new(), Status::Ready, false);
    if let Err(d) = persist_durable(
        w,
        StateChange::SetObject {
            addr: addr.clone(),
            deposed: None,
            provider: rc.provider_key.to_string(),
            object,
        },
    )
    .await
    {
        w.diag(d);
        return false;
    }
    w.core.emit(crate::walk::Event::Finished {
        addr,
        deposed: None,
        action: Action::Read,
        id: crate::walk::object_id(&value),
        elapsed: started.elapsed(),
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

/// Destroys one object (current or deposed) through its provider.
// Ten parameters: the engine's layering (issue 13) gives this a context.
#[allow(clippy::too_many_arguments)]
pub async fn destroy(
    w: &Walk,
    provider: &Arc<dyn Provider>,
    schema: &Block,
    provider_label: &str,
    type_name: &str,
    addr: &InstanceAddr,
    deposed: Option<&str>,
    prior: &Value,
    private: &[u8],
    range: &Option<SourceRange>,
) -> bool {
    let ty = schema.implied_type();
    let null = Value::null(ty.clone());
    let plain = prior.unmark_deep();
    let started = std::time::Instant::now();
    w.core.emit(crate::walk::Event::Started {
        addr,
        deposed,
        action: Action::Delete,
        id: crate::walk::object_id(prior),
    });
    let resp = match provider
        .apply_resource_change(ApplyRequest {
            type_name,
            prior_state: &plain,
            planned_state: &null,
            config: &null,
            planned_private: private,
            provider_meta: None,
        })
        .await
    {
        Ok(r) => r,
        Err(e) => {
            w.diag(Diagnostic::error(
                "Provider failed",
                format!("{e} (while destroying {addr})"),
                range.clone(),
            ));
            return false;
        }
    };
    let bad = resp.diagnostics.has_errors();
    w.diags(checks::provider_diags(
        &resp.diagnostics,
        &addr.to_string(),
        range,
    ));
    if bad {
        return false;
    }
    let errs = checks::check_apply(
        schema,
        provider_label,
        addr,
        &null,
        &resp.new_state,
        true,
        range,
    );
    if !errs.is_empty() {
        w.diags(errs);
        return false;
    }
    if let Err(d) = persist_durable(
        w,
        StateChange::RemoveObject {
            addr: addr.clone(),
            deposed: deposed.map(str::to_string),
        },
    )
    .await
    {
        w.diag(d);
        return false;
    }
    lock(&w.applied).2 += 1;
    w.core.emit(crate::walk::Event::Finished {
        addr,
        deposed,
        action: Action::Delete,
        id: None,
        elapsed: started.elapsed(),
    });
    true
}

async fn apply_instance(
    w: &Walk,
    rc: &ResourceCtx,
    module: &ModulePath,
    addr: &InstanceAddr,
    inst: InstanceVars,
    change: &Change,
    current: Option<ObjectState>,
) -> bool {
    let ty = rc.ty.clone();
    let label = rc.provider_label();
    let range = &rc.res.range;
    if !crate::conditions::enforce(
        w,
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
    w.diags(d);
    if failed {
        return false;
    }
    let plain_config = config.unmark_deep();
    if !plain_config.is_wholly_known() {
        w.diag(Diagnostic::error(
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
        Some(prior) if !prior.is_null() && crate::decide::ignores_at_apply(change.action) => {
            crate::plan_node::apply_ignore(rc, &prior, &plain_config)
        }
        _ => plain_config,
    };
    let mut prior = match &current {
        Some(o) => match crate::plan_node::prior_value(rc, addr, o).await {
            Ok(v) => v.unmark_deep(),
            Err(d) => {
                w.diags(d);
                return false;
            }
        },
        None => Value::null(ty.clone()),
    };
    let mut private = current
        .as_ref()
        .and_then(|o| o.private.clone())
        .unwrap_or_default();
    let cbd = change.action == Action::CreateThenDelete;
    let mut deposed_key = None;
    match change.action {
        Action::DeleteThenCreate if !prior.is_null() => {
            if !destroy(
                w,
                &rc.provider,
                &rc.schema.block,
                &label,
                &rc.res.ty,
                addr,
                None,
                &prior,
                &private,
                range,
            )
            .await
            {
                return false;
            }
            prior = Value::null(ty.clone());
            private = Vec::new();
        }
        Action::CreateThenDelete if !prior.is_null() => {
            let key = terrane_state::model::new_deposed_key();
            if let Err(d) = persist_durable(
                w,
                StateChange::Depose {
                    addr: addr.clone(),
                    key: key.clone(),
                },
            )
            .await
            {
                w.diag(d);
                return false;
            }
            deposed_key = Some((key, prior.clone(), private.clone()));
            prior = Value::null(ty.clone());
            private = Vec::new();
        }
        _ => {}
    }
    // Final plan with the known configuration.
    let proposed = proposed_new(&rc.schema.block, &prior, &plain_config);
    let resp = match rc
        .provider
        .plan_resource_change(PlanRequest {
            type_name: &rc.res.ty,
            prior_state: &prior,
            proposed_new_state: &proposed,
            config: &plain_config,
            prior_private: &private,
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
            return restore_deposed(w, addr, deposed_key);
        }
    };
    let bad = resp.diagnostics.has_errors();
    w.diags(checks::provider_diags_at(
        &resp.diagnostics,
        &addr.to_string(),
        range,
        &|p| rc.attr_range(p),
    ));
    if bad {
        return restore_deposed(w, addr, deposed_key);
    }
    let mut errs = checks::check_plan(
        &rc.schema.block,
        &label,
        addr,
        &prior,
        &plain_config,
        &resp.planned_state,
        resp.legacy_type_system,
        range,
    );
    if !resp.legacy_type_system {
        errs.extend(checks::check_final_plan(
            &rc.schema.block,
            &label,
            addr,
            &change.after.unmark_deep(),
            &resp.planned_state,
            range,
        ));
    }
    if errs.iter().any(is_error) {
        w.diags(errs);
        return restore_deposed(w, addr, deposed_key);
    }
    w.diags(errs);
    let planned = resp.planned_state;
    let action = crate::decide::apply_action(&prior);
    let started = std::time::Instant::now();
    w.core.emit(crate::walk::Event::Started {
        addr,
        deposed: None,
        action,
        id: crate::walk::object_id(&prior),
    });
    let resp = match rc
        .provider
        .apply_resource_change(ApplyRequest {
            type_name: &rc.res.ty,
            prior_state: &prior,
            planned_state: &planned,
            config: &plain_config,
            planned_private: &resp.planned_private,
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
            return restore_deposed(w, addr, deposed_key);
        }
    };
    let apply_failed = resp.diagnostics.has_errors();
    w.diags(checks::provider_diags_at(
        &resp.diagnostics,
        &addr.to_string(),
        range,
        &|p| rc.attr_range(p),
    ));
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
            if let Err(d) = persist_durable(
                w,
                StateChange::SetObject {
                    addr: addr.clone(),
                    deposed: None,
                    provider: rc.provider_key.to_string(),
                    object,
                },
            )
            .await
            {
                w.diag(d);
            }
        } else if deposed_key.is_some() {
            return restore_deposed(w, addr, deposed_key);
        }
        return false;
    }
    let errs = checks::check_apply(
        &rc.schema.block,
        &label,
        addr,
        &planned,
        &new_state,
        false,
        range,
    );
    if !errs.is_empty() {
        w.diags(errs);
        // The object exists but is not what was planned: keep it, tainted
        // where it is new, with unknowns cleared as Terraform does.
        if !new_state.is_null() && new_state.ty().conforms_to(&ty) && new_state.is_wholly_known() {
            let status = if prior.is_null() {
                Status::Tainted
            } else {
                Status::Ready
            };
            let object = rc.object(&new_state, resp.private, status, cbd);
            let _ = persist_durable(
                w,
                StateChange::SetObject {
                    addr: addr.clone(),
                    deposed: None,
                    provider: rc.provider_key.to_string(),
                    object,
                },
            )
            .await;
        }
        return false;
    }
    let value = crate::model::mark_config_and_schema(&new_state, &config, &rc.schema.block);
    let object = rc.object(&value, resp.private, Status::Ready, cbd);
    if let Err(d) = persist_durable(
        w,
        StateChange::SetObject {
            addr: addr.clone(),
            deposed: None,
            provider: rc.provider_key.to_string(),
            object,
        },
    )
    .await
    {
        w.diag(d);
        return false;
    }
    w.core.emit(crate::walk::Event::Finished {
        addr,
        deposed: None,
        action,
        id: crate::walk::object_id(&value),
        elapsed: started.elapsed(),
    });
    {
        let mut a = lock(&w.applied);
        match change.action {
            Action::Create => a.0 += 1,
            Action::Update => a.1 += 1,
            Action::DeleteThenCreate => {
                a.0 += 1;
                a.2 += 1;
            }
            Action::CreateThenDelete => a.0 += 1,
            _ => {}
        }
    }
    w.values.set_instance(
        module,
        Mode::Managed,
        &rc.res.ty,
        &rc.res.name,
        addr.key.clone(),
        value.clone(),
    );
    let post = InstanceVars {
        self_value: Some(value),
        ..inst_post
    };
    if !crate::conditions::enforce(
        w,
        module,
        &post,
        &rc.res.lifecycle.postconditions,
        "Resource postcondition failed",
        &addr.to_string(),
    ) {
        return false;
    }
    // create_before_destroy: the old object goes once the new one exists.
    if let Some((key, old, old_private)) = deposed_key {
        if !destroy(
            w,
            &rc.provider,
            &rc.schema.block,
            &label,
            &rc.res.ty,
            addr,
            Some(&key),
            &old,
            &old_private,
            range,
        )
        .await
        {
            return false;
        }
    }
    true
}

/// A create_before_destroy replacement that failed before anything new
/// existed: the deposed object becomes current again.
fn restore_deposed(
    w: &Walk,
    addr: &InstanceAddr,
    deposed: Option<(String, Value, Vec<u8>)>,
) -> bool {
    if let Some((key, _, _)) = deposed {
        let object = lock(&w.state).object(addr, Some(&key)).cloned();
        if let Some(o) = object {
            let provider = lock(&w.state)
                .resources
                .get(&addr.resource)
                .map(|r| r.provider.clone())
                .unwrap_or_default();
            let _ = persist(
                w,
                StateChange::SetObject {
                    addr: addr.clone(),
                    deposed: None,
                    provider,
                    object: o,
                },
            );
            let _ = persist(
                w,
                StateChange::RemoveObject {
                    addr: addr.clone(),
                    deposed: Some(key),
                },
            );
        }
    }
    false
}

/// Runs the plan's plain deletes (objects no longer in the configuration,
/// deposed objects, a destroy plan) before the graph walk: dependents
/// before their dependencies, as many at once as parallelism allows.
pub async fn apply_deletes(w: &Arc<Walk>, deletes: Vec<Change>) -> bool {
    if deletes.is_empty() {
        return true;
    }
    // Order: an object goes before the objects it depends on.
    let names: BTreeMap<String, Vec<usize>> =
        deletes
            .iter()
            .enumerate()
            .fold(BTreeMap::new(), |mut m, (i, c)| {
                m.entry(config_addr(&c.addr))
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
    let order = crate::schedule::Order::new(blockers.into_iter());
    let stop = {
        let w = w.clone();
        Arc::new(move || w.interrupted())
    };
    let gate = crate::schedule::Gate {
        limit: Some(w.limit.clone()),
        stop: Some(stop),
    };
    let deletes = Arc::new(deletes);
    crate::schedule::run(order, gate, |i| {
        let (w, deletes) = (w.clone(), deletes.clone());
        async move {
            let c = &deletes[i];
            let what = match &c.deposed {
                Some(d) => format!("{} (deposed object {d})", c.addr),
                None => c.addr.to_string(),
            };
            crate::walk::guarded(w.clone(), what, None, delete_one(&w, c)).await
        }
    })
    .await
    .ok
}

/// `module.m.aws_x.name` of an instance address (no instance keys).
pub fn config_addr(a: &InstanceAddr) -> String {
    let mut s = String::new();
    for (m, _) in &a.resource.module.0 {
        s.push_str(&format!("module.{m}."));
    }
    if a.resource.mode == Mode::Data {
        s.push_str("data.");
    }
    s.push_str(&format!("{}.{}", a.resource.ty, a.resource.name));
    s
}

async fn delete_one(w: &Walk, c: &Change) -> bool {
    if let Err(e) = w.core.ensure_provider(&c.provider.addr) {
        w.diag(Diagnostic::error(
            "Failed to query available provider packages",
            format!("{e} (needed to destroy {})", c.addr),
            None,
        ));
        return false;
    }
    let name = crate::graph::default_provider_name(&c.addr.resource.ty).to_string();
    let alias = c.provider.alias.clone();
    let provider = match crate::walk::provider_instance(w, &name, alias.as_deref()).await {
        Some(p) => p,
        None => match w.core.host.instance(&c.provider).await {
            Ok(p) => {
                if let Err(e) = p
                    .configure_provider(
                        crate::TERRAFORM_VERSION,
                        &empty_provider_config(w, &c.provider).await,
                    )
                    .await
                {
                    w.diag(Diagnostic::error(
                        "Failed to configure provider",
                        e.to_string(),
                        None,
                    ));
                    return false;
                }
                p
            }
            Err(e) => {
                w.diag(Diagnostic::error(
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
            w.diag(Diagnostic::error(
                "Failed to load plugin schemas",
                e.to_string(),
                None,
            ));
            return false;
        }
    };
    let Some(rs) = schema.resource(&c.addr.resource.ty) else {
        w.diag(Diagnostic::error(
            "Invalid resource type",
            format!(
                "The provider {} no longer supports resource type {:?}, so {} cannot be destroyed.",
                c.provider.addr, c.addr.resource.ty, c.addr
            ),
            None,
        ));
        return false;
    };
    destroy(
        w,
        &provider,
        &rs.block,
        &c.provider.addr.to_string(),
        &c.addr.resource.ty,
        &c.addr,
        c.deposed.as_deref(),
        &c.before,
        &c.prior_private,
        &None,
    )
    .await
}

async fn empty_provider_config(w: &Walk, key: &crate::provider::ProviderConfigKey) -> Value {
    match w.core.host.schema(&key.addr).await {
        Ok(s) => s.provider.block.empty_value(),
        Err(_) => Value::null(terrane_value::Type::Dynamic),
    }
}
