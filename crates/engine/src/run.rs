//! The engine's entry points: load a configuration (module tree, graph,
//! providers found and registered), validate it, plan against a state
//! snapshot, and apply a plan with every change made durable through a
//! locked state [`Run`].

use crate::apply::{apply_deletes, Applying};
use crate::decide::OrphanConfig;
use crate::graph::{self, NodeKind};
use crate::model::{config_addr, Action, Change, OutputChange, Plan, PlanMode, Reason};
use crate::nodes::configure_providers;
use crate::persist::Persist;
use crate::plan::Planning;
use crate::provider::discovery::cliconfig::CliConfig;
use crate::provider::discovery::lockfile::LockFile;
use crate::provider::discovery::version::Constraints;
use crate::provider::discovery::DiscoveryError;
use crate::provider::{Builtins, Discovery, HostOptions, ProviderAddr, ProviderHost};
use crate::sync::lock;
use crate::walk::{provider_key, EngineCore, Options, Phase, Walk};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use terrane_config::statics::Statics;
use terrane_config::{DiagId, Diagnostic, Severity};
use terrane_state::{
    Change as StateChange, InstanceAddr, InstanceKey, Mode, OutputState, Run, Snapshot,
};
use terrane_value::{typejson, Type, Value};

/// A loaded configuration, ready to validate, plan and apply.
pub struct Engine {
    pub core: Arc<EngineCore>,
    /// The warnings of loading the configuration (deprecated forms and
    /// the like): loading succeeded, and they are still the user's to see.
    pub warnings: Vec<Diagnostic>,
}

/// What an apply did.
#[derive(Debug, Default)]
pub struct ApplyResult {
    /// Objects `import` blocks brought in.
    pub imported: usize,
    pub added: usize,
    pub changed: usize,
    pub destroyed: usize,
    pub diagnostics: Vec<Diagnostic>,
    /// Root outputs after apply (value, sensitive).
    pub outputs: BTreeMap<String, (Value, bool)>,
    /// The state as apply left it (what was recorded).
    pub state: Option<Snapshot>,
    /// When changes were made that could not be recorded (lock lost, disk
    /// full, database connection gone): the complete state — recorded and
    /// unrecorded objects, the store's lineage, a serial above the last
    /// recorded one — for the emergency state file; and how many changes
    /// it holds that the store lacks.
    pub errored_state: Option<(Snapshot, usize)>,
}

impl ApplyResult {
    pub fn has_errors(&self) -> bool {
        self.diagnostics
            .iter()
            .any(|d| d.severity == Severity::Error)
    }
}

fn errors(ds: &[Diagnostic]) -> bool {
    ds.iter().any(|d| d.severity == Severity::Error)
}

/// An `import` block of the root module whose target resource the
/// configuration does not declare is an error, in Terraform's words, never
/// a block silently left out of the plan.
fn import_targets_declared(m: &terrane_config::Module, out: &mut Vec<Diagnostic>) {
    for i in &m.imports {
        let Some(to) = &i.to_addr else { continue };
        let Ok(addr) = InstanceAddr::parse(to) else {
            continue;
        };
        if !addr.resource.module.0.is_empty() {
            continue;
        }
        let declared = m
            .resource(false, &addr.resource.ty, &addr.resource.name)
            .is_some();
        if !declared {
            out.push(Diagnostic::error(
                "Configuration for import target does not exist",
                format!("The configuration for the given import target {} does not exist. If you wish to automatically generate config for this resource, use the -generate-config-out option within terrane plan. Otherwise, make sure the target resource exists within your configuration. For example:\n\n  terrane plan -generate-config-out=generated.tf", addr.resource),
                i.to.as_ref().and_then(|e| e.range.clone()).or(i.range.clone()),
            ));
        }
    }
}

/// Provisioner blocks checked as Terraform checks them before running
/// anything, and the ephemeral flows that need no schema
/// ([`crate::checks::ephemeral_flows`]) ([`crate::provision::static_checks`]): a configuration with an
/// external provisioner plugin, an unknown argument or a missing required
/// one is refused at validate and plan, not half-applied.
fn provisioner_refusals(config: &terrane_config::Config, prefix: &str, out: &mut Vec<Diagnostic>) {
    let refuse = |owner: String, p: &terrane_config::Provisioner, out: &mut Vec<Diagnostic>| {
        crate::provision::static_checks(&owner, p, out);
    };
    for r in &config.module.resources {
        for p in &r.provisioners {
            refuse(format!("{prefix}{}", r.address()), p, out);
        }
    }
    for r in &config.module.removed {
        for p in &r.provisioners {
            let from = r.from_addr.as_deref().unwrap_or("?");
            refuse(format!("The removed block for {prefix}{from}"), p, out);
        }
    }
    crate::checks::ephemeral_flows(config, prefix.is_empty(), out);
    for (name, child) in &config.children {
        provisioner_refusals(child, &format!("{prefix}module.{name}."), out);
    }
}

impl Engine {
    /// Loads the configuration in `dir` and finds its providers, plugins or
    /// the in-process `builtins`. Returns every problem found
    /// (configuration, cycles, providers).
    pub fn load(dir: &Path, builtins: &Builtins) -> Result<Engine, Vec<Diagnostic>> {
        Engine::load_given(dir, builtins, &terrane_eval::statics::defaults_only())
    }

    /// [`Engine::load`] with the values the command line gives for the
    /// root module's variables: init-time expressions (module `source`
    /// and `version` over const variables) read them through `statics`.
    pub fn load_given(
        dir: &Path,
        builtins: &Builtins,
        statics: &dyn Statics,
    ) -> Result<Engine, Vec<Diagnostic>> {
        Engine::load_with(dir, dir, builtins, false, &[], statics)
    }

    /// [`Engine::load`] for a `terrane test` file that declares `provider`
    /// blocks: as in Terraform, each replaces the root module's block of
    /// the same name and alias, or is added beside them, for every run of
    /// that file.
    pub fn load_test_file(
        dir: &Path,
        builtins: &Builtins,
        providers: &[terrane_config::ProviderConfig],
    ) -> Result<Engine, Vec<Diagnostic>> {
        let statics = terrane_eval::statics::defaults_only();
        Engine::load_with(dir, dir, builtins, false, providers, &statics)
    }

    /// [`Engine::load`] for the module in `dir` that a `terrane test` run
    /// block names (`module { source = "./setup" }`): it is the root of its
    /// runs, with the providers installed for the working directory
    /// `providers_dir` (its lock file and data directory), and the test
    /// file's `provider` blocks replacing its own as for the root
    /// ([`Engine::load_test_file`]).
    pub fn load_test_module(
        dir: &Path,
        providers_dir: &Path,
        builtins: &Builtins,
        providers: &[terrane_config::ProviderConfig],
    ) -> Result<Engine, Vec<Diagnostic>> {
        let statics = terrane_eval::statics::defaults_only();
        Engine::load_with(dir, providers_dir, builtins, false, providers, &statics)
    }

    /// [`Engine::load`] for `validate` before `init`: a provider that is
    /// not installed is no error; its resources validate as unknown values
    /// (everything else, locals and outputs included, is evaluated) and
    /// its configuration is not checked. The absent providers are listed
    /// in `core.absent`.
    pub fn load_for_validate(
        dir: &Path,
        builtins: &Builtins,
        statics: &dyn Statics,
    ) -> Result<Engine, Vec<Diagnostic>> {
        Engine::load_with(dir, dir, builtins, true, &[], statics)
    }

    fn load_with(
        dir: &Path,
        providers_dir: &Path,
        builtins: &Builtins,
        tolerate_absent: bool,
        test_providers: &[terrane_config::ProviderConfig],
        statics: &dyn Statics,
    ) -> Result<Engine, Vec<Diagnostic>> {
        let (mut config, mut diags) = terrane_config::load_config(dir, statics);
        if errors(&diags) {
            return Err(diags);
        }
        for p in test_providers {
            let own = &mut config.module.providers;
            match own
                .iter_mut()
                .find(|q| q.name == p.name && q.alias == p.alias)
            {
                Some(q) => *q = p.clone(),
                None => own.push(p.clone()),
            }
        }
        // Every reference must name something declared (Terraform checks
        // this before any walk, so even unevaluated branches are covered).
        diags.extend(terrane_config::validate_references(&config));
        // Keys on provider references (provider for_each).
        diags.extend(crate::provider_each::static_checks(&config));
        if errors(&diags) {
            return Err(diags);
        }
        let graph = graph::build(&config);
        if let Err(cycles) = graph.order() {
            diags.extend(cycles.iter().map(|c| graph.cycle_diagnostic(c)));
            return Err(diags);
        }
        // Providers: root required_providers, then anything used.
        let mut provider_addrs = BTreeMap::new();
        let mut constraints: BTreeMap<ProviderAddr, Constraints> = BTreeMap::new();
        collect_providers(&config, &mut provider_addrs, &mut constraints, &mut diags);
        // The variable holding the state's encryption key never reaches a
        // provider (the standard secret variables are withheld already).
        if let Some(name) = config
            .module
            .state
            .as_ref()
            .and_then(|s| s.encryption_key_env.as_deref())
        {
            terrane_plugin::withhold_env(name);
        }
        let host = Arc::new(ProviderHost::new(HostOptions {
            uri_fetcher: builtins.uri_fetcher(),
            ..HostOptions::default()
        }));
        let cli = match CliConfig::load_from_env() {
            Ok(c) => c,
            Err(e) => {
                diags.push(Diagnostic::error(
                    "Invalid CLI configuration",
                    e.to_string(),
                    None,
                ));
                CliConfig::default()
            }
        };
        let lockfile = LockFile::load(providers_dir).unwrap_or_default();
        let discovery = Discovery::new(providers_dir, cli, builtins.clone());
        let mut names: Vec<String> = graph
            .nodes
            .iter()
            .filter_map(|n| match &n.kind {
                NodeKind::Provider { name, .. } => Some(name.clone()),
                _ => None,
            })
            .collect();
        // Required providers are registered even when no resource uses
        // them: their functions may still be called.
        names.extend(provider_addrs.keys().cloned());
        names.sort();
        names.dedup();
        let core_addrs = provider_addrs.clone();
        let mut absent = std::collections::BTreeSet::new();
        for name in names {
            let addr = core_addrs
                .get(&name)
                .cloned()
                .unwrap_or_else(|| default_addr(&name));
            let c = constraints
                .get(&addr)
                .cloned()
                .unwrap_or_else(Constraints::any);
            match discovery.resolve(&addr, &c, &lockfile) {
                Ok(src) => host.register(addr, src),
                Err(DiscoveryError::NotFound { .. }) if tolerate_absent => {
                    absent.insert(addr);
                }
                Err(e) => {
                    let not_installed = matches!(e, DiscoveryError::NotFound { .. });
                    let d = Diagnostic::error(
                        "Failed to query available provider packages",
                        e.to_string(),
                        None,
                    );
                    diags.push(if not_installed {
                        d.with_id(DiagId::ProviderNotInstalled)
                    } else {
                        d
                    });
                }
            }
        }
        if errors(&diags) {
            return Err(diags);
        }
        let cwd = dir
            .canonicalize()
            .unwrap_or_else(|_| dir.to_path_buf())
            .display()
            .to_string();
        let core = EngineCore {
            dir: dir.to_path_buf(),
            config,
            graph,
            host,
            provider_addrs,
            interrupted: Arc::new(AtomicBool::new(false)),
            paths: [dir.display().to_string(), dir.display().to_string(), cwd],
            discovery,
            lockfile,
            progress: Arc::new(std::sync::atomic::AtomicUsize::new(0)),
            events: std::sync::OnceLock::new(),
            absent,
        };
        Ok(Engine {
            core: Arc::new(core),
            warnings: diags,
        })
    }

    /// Starts the plugin processes of the providers the configuration's
    /// provider nodes use, in the background (see
    /// [`ProviderHost::prestart`]): call it before slow work that does not
    /// need them, such as reading the state.
    pub fn prestart_providers(&self) {
        for n in &self.core.graph.nodes {
            if let NodeKind::Provider { name, .. } = &n.kind {
                self.core
                    .host
                    .prestart(&crate::walk::provider_addr(&self.core, name));
            }
        }
    }

    /// The flag an interrupt sets: no new operation starts once it is set.
    pub fn interrupt_flag(&self) -> Arc<AtomicBool> {
        self.core.interrupted.clone()
    }

    /// Checks the configuration with the providers' schemas and validation,
    /// unknown values allowed.
    pub async fn validate(&self) -> Vec<Diagnostic> {
        let w = Arc::new(Walk::new(
            self.core.clone(),
            Phase::Validate,
            Options::default(),
            Snapshot::empty(),
        ));
        let mut diags = Vec::new();
        provisioner_refusals(&self.core.config, "", &mut diags);
        diags.extend(Planning::new(w.clone()).walk_graph().await);
        diags
    }

    /// Plans against `state`.
    pub async fn plan(&self, state: &Snapshot, opts: Options) -> Plan {
        self.plan_owned(state.clone(), opts).await
    }

    /// [`Engine::plan`] of a state the caller no longer needs: the walk
    /// takes it instead of a copy (one copy of a large state fewer).
    pub async fn plan_owned(&self, state: Snapshot, opts: Options) -> Plan {
        self.plan_inner(state, opts, false).await
    }

    /// A plan; `before_destroy`: the refreshing plan a destroy makes
    /// first, of which only the refreshed state and the diagnostics are
    /// used (its no-op changes are not kept).
    async fn plan_inner(&self, state: Snapshot, mut opts: Options, before_destroy: bool) -> Plan {
        self.core.host.refuse_deferral(!opts.defer);
        let mode = opts.mode;
        let timestamp = opts
            .plan_timestamp
            .get_or_insert_with(terrane_eval::func::now_rfc3339)
            .clone();
        let mut plan = Plan {
            mode,
            timestamp,
            lineage: state.lineage.clone(),
            serial: state.serial,
            // Ephemeral variables are not recorded: apply takes them again.
            variables: opts
                .vars
                .iter()
                .filter(|(k, _)| {
                    !self
                        .core
                        .config
                        .module
                        .variables
                        .get(*k)
                        .is_some_and(|v| v.ephemeral)
                })
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            ..Default::default()
        };
        // As Terraform's destroy: a normal plan first refreshes every
        // object (its changes are dropped); what it finds is what gets
        // destroyed, and its errors stop the destroy.
        let state = if mode == PlanMode::Destroy && opts.refresh {
            let normal = Options {
                mode: PlanMode::Normal,
                ..opts.clone()
            };
            // The normal plan takes the state (no second copy): a plan
            // without errors always returns it, refreshed, as its prior
            // state.
            let pre = Box::pin(self.plan_inner(state, normal, true)).await;
            let failed = errors(&pre.diagnostics);
            plan.diagnostics.extend(pre.diagnostics);
            if failed {
                return plan;
            }
            pre.prior_state.unwrap_or_else(Snapshot::empty)
        } else {
            state
        };
        provisioner_refusals(&self.core.config, "", &mut plan.diagnostics);
        import_targets_declared(&self.core.config.module, &mut plan.diagnostics);
        if errors(&plan.diagnostics) {
            return plan;
        }
        let (state, moved, moved_diags) = apply_moved(&self.core.config, state);
        plan.diagnostics.extend(moved_diags);
        plan.moved = moved;
        // The walk owns the (moved) state: no second copy of a large state.
        let w = Arc::new(Walk::new(
            self.core.clone(),
            Phase::Plan,
            opts.clone(),
            state,
        ));
        if mode == PlanMode::Destroy {
            let state = std::mem::replace(&mut *lock(&w.state), Snapshot::empty());
            let mut changes = Vec::new();
            let mut schemas = StoredSchemas::default();
            for (raddr, r) in &state.resources {
                if raddr.mode != Mode::Managed {
                    continue;
                }
                for (key, inst) in &r.instances {
                    let addr = raddr.instance(key.clone());
                    let provider = r.instance_provider(key);
                    if let Some(o) = &inst.current {
                        changes.push(
                            delete_change(
                                &self.core,
                                &mut schemas,
                                &addr,
                                None,
                                o,
                                &provider,
                                None,
                            )
                            .await,
                        );
                    }
                    for (k, o) in &inst.deposed {
                        changes.push(
                            delete_change(
                                &self.core,
                                &mut schemas,
                                &addr,
                                Some(k.clone()),
                                o,
                                &provider,
                                None,
                            )
                            .await,
                        );
                    }
                }
            }
            plan.changes = changes;
            for (name, o) in &state.outputs {
                plan.outputs.insert(
                    name.clone(),
                    OutputChange {
                        before: Some(output_value(o)),
                        after: Value::null(Type::Dynamic),
                        sensitive: o.sensitive,
                    },
                );
            }
            // A destroy plan walks nothing: it reports nothing of its own.
            plan.prior_state = Some(state);
            sort(&mut plan.changes);
            return plan;
        }
        let planning = Planning::new(w.clone());
        if before_destroy {
            planning.drop_no_ops();
        }
        let mut walked = planning.walk_graph().await;
        walked.extend(crate::conditions::check_blocks(&w));
        let mut changes = planning.take_changes();
        let expanded = planning.take_expanded();
        let deferred = planning.take_deferred();
        let walked_ok = !errors(&walked);
        // Orphans and deposed objects.
        // The walk is done with its state: take it rather than copy it
        // (with every upstream resource recorded per object, a long
        // chain's state is large).
        let current = std::mem::replace(&mut *lock(&w.state), Snapshot::empty());
        if walked_ok && mode == PlanMode::Normal {
            let mut schemas = StoredSchemas::default();
            for (raddr, r) in &current.resources {
                for (key, inst) in &r.instances {
                    let addr = raddr.instance(key.clone());
                    let in_config = expanded.get(raddr).is_some_and(|keys| keys.contains(key));
                    if raddr.mode == Mode::Data {
                        continue;
                    }
                    // A deferred resource's objects stay as they are.
                    let kept = deferred.iter().any(|d| d.covers(raddr));
                    if let Some(o) = &inst.current {
                        if !in_config && !kept {
                            let reason = orphan_reason(&self.core, &w, &addr);
                            let mut c = delete_change(
                                &self.core,
                                &mut schemas,
                                &addr,
                                None,
                                o,
                                &r.instance_provider(key),
                                Some(reason),
                            )
                            .await;
                            let removed = removed_block(&self.core.config, &addr);
                            c.action = crate::decide::orphan_action(removed.map(|rm| rm.destroy));
                            changes.push(c);
                        }
                    }
                    for (k, o) in &inst.deposed {
                        let provider = r.instance_provider(key);
                        changes.push(
                            delete_change(
                                &self.core,
                                &mut schemas,
                                &addr,
                                Some(k.clone()),
                                o,
                                &provider,
                                None,
                            )
                            .await,
                        );
                    }
                }
            }
            // Objects whose provider instance is gone (provider for_each).
            for c in changes.iter().filter(|c| c.action == Action::Delete) {
                let d = crate::provider_each::orphan_check(
                    &w,
                    &c.addr,
                    c.deposed.as_deref(),
                    &c.provider,
                )
                .await;
                walked.extend(d);
            }
        }
        // Targets and excludes.
        if !w.opts.targets.is_empty() || !w.opts.excludes.is_empty() {
            changes.retain(|c| targeted(&self.core, &w.opts, &c.addr));
        }
        sort(&mut changes);
        plan.changes = changes;
        if let Some(w) = forget_warning(&plan.changes) {
            plan.diagnostics.push(w);
        }
        plan.drift = planning.take_drift();
        plan.deferred = deferred;
        // Outputs.
        let outs = lock(&w.outputs).clone();
        if mode == PlanMode::Normal {
            for (name, (v, sensitive)) in &outs {
                let before = current.outputs.get(name).map(output_value);
                // A null output is never stored (as in Terraform), so an
                // absent one that stays null is no change.
                if before.is_none() && v.unmark_deep().is_null() {
                    continue;
                }
                plan.outputs.insert(
                    name.clone(),
                    OutputChange {
                        before,
                        after: v.clone(),
                        sensitive: *sensitive,
                    },
                );
            }
            for (name, o) in &current.outputs {
                if !outs.contains_key(name) {
                    plan.outputs.insert(
                        name.clone(),
                        OutputChange {
                            before: Some(output_value(o)),
                            after: Value::null(Type::Dynamic),
                            sensitive: o.sensitive,
                        },
                    );
                }
            }
        }
        plan.diagnostics.extend(walked);
        plan.prior_state = Some(current);
        plan.applyable = !plan.has_errors();
        plan
    }

    /// Applies `plan`; `state` is the locked run's current snapshot.
    pub async fn apply(
        &self,
        plan: &Plan,
        state: &Snapshot,
        run: Box<dyn Run>,
        opts: Options,
    ) -> (ApplyResult, Box<dyn Run>) {
        let diff = plan
            .prior_state
            .as_ref()
            .map(|refreshed| state_diff(state, refreshed));
        self.apply_inner(plan.clone(), diff, state.clone(), run, opts)
            .await
    }

    /// [`Engine::apply`] of a plan and a state the caller no longer needs:
    /// the walk takes the state instead of a copy, the plan's prior state
    /// (it only says what refresh found, which is made durable first) is
    /// dropped before the walk, and its deletes are moved, not copied, to
    /// the tasks that apply them: a large state is not held twice while
    /// it is applied, nor a destroy's planned changes.
    pub async fn apply_owned(
        &self,
        mut plan: Plan,
        state: Snapshot,
        run: Box<dyn Run>,
        opts: Options,
    ) -> (ApplyResult, Box<dyn Run>) {
        let diff = plan
            .prior_state
            .take()
            .map(|refreshed| state_diff(&state, &refreshed));
        self.apply_inner(plan, diff, state, run, opts).await
    }

    /// Applies `plan` to `state`, after recording `diff` (what refresh
    /// found, compared before the walk takes the state).
    async fn apply_inner(
        &self,
        mut plan: Plan,
        diff: Option<Vec<StateChange>>,
        state: Snapshot,
        run: Box<dyn Run>,
        opts: Options,
    ) -> (ApplyResult, Box<dyn Run>) {
        let run = Arc::new(Mutex::new(run));
        // `plantimestamp()` gives at apply what it gave at plan.
        let opts = Options {
            plan_timestamp: Some(plan.timestamp.clone()).filter(|t| !t.is_empty()),
            ..opts
        };
        let w = Arc::new(Walk::new(self.core.clone(), Phase::Apply, opts, state));
        let a = Applying::new(w.clone(), &mut plan, Some(run.clone()));
        let mut result = ApplyResult::default();
        // What the walk's nodes and the deletes reported.
        let mut walked = Vec::new();
        // What refresh found becomes durable first.
        if let Some(diff) = diff {
            for c in diff {
                if let Err(d) = a.record(c) {
                    result.diagnostics.push(d);
                    return finish(result, walked, w, a, run);
                }
            }
        }
        if plan.mode != PlanMode::RefreshOnly {
            // Providers for the deletes come from the walk's provider nodes
            // (configured); in destroy mode only they run.
            for c in plan.changes.iter().filter(|c| c.action == Action::Forget) {
                if let Err(d) = a.record(StateChange::RemoveObject {
                    addr: c.addr.clone(),
                    deposed: c.deposed.clone(),
                }) {
                    result.diagnostics.push(d);
                }
            }
            let (deletes, rest): (Vec<Change>, Vec<Change>) = std::mem::take(&mut plan.changes)
                .into_iter()
                .partition(|c| c.action == Action::Delete);
            plan.changes = rest;
            if plan.mode == PlanMode::Destroy {
                walked.extend(configure_providers(&w).await);
                walked.extend(apply_deletes(&a, deletes).await.1);
                let names: Vec<String> = lock(&w.state).outputs.keys().cloned().collect();
                for name in names {
                    let _ = a.record(StateChange::RemoveOutput { name });
                }
            } else {
                walked.extend(configure_providers(&w).await);
                let (deleted, diags) = apply_deletes(&a, deletes).await;
                walked.extend(diags);
                if deleted {
                    walked.extend(a.walk_graph().await);
                    walked.extend(crate::conditions::check_blocks(&w));
                }
                let outs = lock(&w.outputs).clone();
                for (name, (v, sensitive)) in &outs {
                    let plain = v.unmark_deep();
                    if plain.is_null() || !plain.is_wholly_known() {
                        let _ = a.record(StateChange::RemoveOutput { name: name.clone() });
                        continue;
                    }
                    let ty = plain.ty().clone();
                    if let Ok(value) = terrane_value::json::encode(&plain, &ty) {
                        let output = OutputState {
                            value,
                            ty: typejson::to_json(&ty),
                            sensitive: *sensitive || v.has_sensitive(),
                        };
                        let _ = a.record(StateChange::SetOutput {
                            name: name.clone(),
                            output,
                        });
                    }
                }
                let stale: Vec<String> = lock(&w.state)
                    .outputs
                    .keys()
                    .filter(|k| !outs.contains_key(*k))
                    .cloned()
                    .collect();
                for name in stale {
                    let _ = a.record(StateChange::RemoveOutput { name });
                }
                result.outputs = outs;
            }
        }
        finish(result, walked, w, a, run)
    }

    /// Ends every provider instance of the run.
    pub async fn shutdown(&self) {
        self.core.host.shutdown().await;
    }
}

fn finish(
    mut result: ApplyResult,
    walked: Vec<Diagnostic>,
    w: Arc<Walk>,
    a: Arc<Applying>,
    run: Arc<Mutex<Box<dyn Run>>>,
) -> (ApplyResult, Box<dyn Run>) {
    let (added, c, d) = a.applied();
    result.imported = a.imported();
    result.added = added;
    result.changed = c;
    result.destroyed = d;
    // Every unrecorded change failed the same way: the first says why,
    // the emergency state file's report counts them all.
    result.diagnostics.extend(
        walked
            .into_iter()
            .filter(|d| !d.is(DiagId::RepeatedPersistFailure)),
    );
    let recorded = std::mem::replace(&mut *lock(&w.state), Snapshot::empty());
    let unrecorded = a.store.take_unrecorded();
    if !unrecorded.is_empty() {
        // Terraform's errored.tfstate holds the whole state, as `state push`
        // replaces the whole state with it.
        let mut full = recorded.clone();
        for c in &unrecorded {
            full.apply(c.clone());
        }
        // Newer than anything the store may hold: a commit whose answer was
        // lost (the connection dropped after COMMIT) may have landed, one
        // serial per failed attempt at most, and there are no more failed
        // attempts than unrecorded changes. `state push` then takes the
        // file as the newer state instead of refusing a same-serial one.
        full.serial = recorded.serial.max(a.store.last_serial()) + unrecorded.len() as u64 + 1;
        result.errored_state = Some((full, unrecorded.len()));
    }
    result.state = Some(recorded);
    // Every task of the walk has finished: these are the last references.
    drop(a);
    drop(w);
    let run = match Arc::try_unwrap(run) {
        Ok(m) => m.into_inner().unwrap_or_else(|p| p.into_inner()),
        Err(arc) => {
            // Should not happen; fall back to a placeholder that reports it.
            let _ = arc;
            panic!("state run still shared after apply");
        }
    };
    (result, run)
}

fn default_addr(name: &str) -> ProviderAddr {
    if name == "terraform" {
        return ProviderAddr::builtin_terraform();
    }
    ProviderAddr::new("registry.terraform.io", "hashicorp", name)
}

fn collect_providers(
    c: &terrane_config::Config,
    addrs: &mut BTreeMap<String, ProviderAddr>,
    constraints: &mut BTreeMap<ProviderAddr, Constraints>,
    diags: &mut Vec<Diagnostic>,
) {
    for (name, rp) in &c.module.required_providers {
        let addr = match &rp.source {
            Some(s) => match ProviderAddr::parse(s) {
                Ok(a) => a,
                Err(e) => {
                    diags.push(Diagnostic::error(
                        "Invalid provider source address",
                        e.to_string(),
                        None,
                    ));
                    continue;
                }
            },
            None => default_addr(name),
        };
        if let Some(v) = &rp.version {
            match Constraints::parse(v) {
                Ok(cn) => {
                    let merged = constraints.remove(&addr).map(|x| x.and(&cn)).unwrap_or(cn);
                    constraints.insert(addr.clone(), merged);
                }
                Err(e) => diags.push(Diagnostic::error(
                    "Invalid version constraint",
                    e.to_string(),
                    None,
                )),
            }
        }
        addrs.entry(name.clone()).or_insert(addr);
    }
    for child in c.children.values() {
        collect_providers(child, addrs, constraints, diags);
    }
}

fn output_value(o: &OutputState) -> Value {
    let v = o.stored_value();
    if o.sensitive {
        v.mark_sensitive()
    } else {
        v
    }
}

/// The change deleting a stored object. It is decoded with its
/// resource type's schema (so dynamic attributes lose their stored type
/// wrapper and sensitive paths mark the right values), loosely only when
/// the provider cannot give a schema of the object's version.
async fn delete_change(
    core: &EngineCore,
    schemas: &mut StoredSchemas,
    addr: &InstanceAddr,
    deposed: Option<String>,
    o: &terrane_state::ObjectState,
    provider: &str,
    reason: Option<Reason>,
) -> Change {
    let (key, typed, schema) = decode_stored(core, schemas, addr, o, provider).await;
    let before = typed.unwrap_or_else(|| terrane_value::json::decode_loose(&o.attributes.json()));
    let before = terrane_value::marks::mark_paths(&before, &o.sensitive_paths);
    Change {
        addr: addr.clone(),
        deposed,
        provider: Arc::new(key),
        action: Action::Delete,
        ty: before.ty().clone(),
        before: before.clone(),
        after: Value::null(before.ty().clone()),
        schema_version: o.schema_version as i64,
        requires_replace: Vec::new(),
        planned_private: Vec::new(),
        prior_private: o.private.clone().unwrap_or_default(),
        reason,
        importing: None,
        dependencies: o.dependencies.clone(),
        create_before_destroy: o.create_before_destroy,
        schema,
    }
}

/// What decoding stored objects takes, by the provider configuration state
/// records, the object's mode and type and its schema version: the
/// provider configuration key and, when the provider has a schema of that
/// version, its implied type and block. Built once per type, not per
/// object (a destroy plan decodes every object of the state).
#[derive(Default)]
struct StoredSchemas(HashMap<StoredKind, (crate::provider::ProviderConfigKey, Option<TypedBlock>)>);

type StoredKind = (String, bool, String, u64);
type TypedBlock = (Type, Arc<terrane_schema::Block>);

/// A stored object's attributes decoded with its resource type's schema
/// (None when the provider cannot give a schema of the object's version),
/// and the provider configuration `provider` (as state records it) names.
async fn decode_stored(
    core: &EngineCore,
    schemas: &mut StoredSchemas,
    addr: &InstanceAddr,
    o: &terrane_state::ObjectState,
    provider: &str,
) -> (
    crate::provider::ProviderConfigKey,
    Option<Value>,
    Option<Arc<terrane_schema::Block>>,
) {
    let kind = (
        provider.to_string(),
        addr.resource.mode == Mode::Data,
        addr.resource.ty.clone(),
        o.schema_version,
    );
    if !schemas.0.contains_key(&kind) {
        let found = stored_schema(core, addr, o, provider).await;
        schemas.0.insert(kind.clone(), found);
    }
    let (key, typed_block) = &schemas.0[&kind];
    // A pre-0.12 object not yet upgraded decodes from its flatmap, as
    // Terraform decodes one.
    let typed = typed_block
        .as_ref()
        .and_then(|(ty, _)| match &o.attributes_flat {
            Some(flat) => terrane_value::flatmap::decode(flat, ty).ok(),
            None => o.attributes.decode(ty).ok(),
        });
    let block = typed
        .is_some()
        .then(|| typed_block.as_ref().map(|(_, b)| b.clone()))
        .flatten();
    (key.clone(), typed, block)
}

/// The provider configuration key and the schema (implied type and block)
/// of a stored object's type at the object's version, looked up once per
/// [`StoredKind`].
async fn stored_schema(
    core: &EngineCore,
    addr: &InstanceAddr,
    o: &terrane_state::ObjectState,
    provider: &str,
) -> (crate::provider::ProviderConfigKey, Option<TypedBlock>) {
    let name = graph::default_provider_name(&addr.resource.ty).to_string();
    let alias = provider.rsplit_once("].").map(|(_, a)| a.to_string());
    let key = provider_key(core, &name, alias.as_deref());
    let key = parse_provider_key(provider).unwrap_or(key);
    // A provider only the state mentions is registered on first use.
    let schema = match core.ensure_provider(&key.addr) {
        Ok(()) => core.host.schema(&key.addr).await.ok(),
        Err(_) => None,
    };
    let schema = schema.as_ref().and_then(|s| {
        if addr.resource.mode == Mode::Data {
            s.data_source(&addr.resource.ty)
        } else {
            s.resource(&addr.resource.ty)
        }
    });
    let typed_block = schema
        .filter(|s| s.version == o.schema_version as i64)
        .map(|s| (s.block.implied_type(), Arc::new(s.block.clone())));
    (key, typed_block)
}

impl Engine {
    /// The schema of a saved plan's change, for rendering it as a live
    /// plan renders (blocks as blocks): plan files carry no schema, and
    /// Terraform's `show PLANFILE` loads the providers' schemas too. None
    /// when the provider is unavailable or its schema no longer fits the
    /// change (another version, another type).
    pub async fn change_schema(&self, c: &Change) -> Option<Arc<terrane_schema::Block>> {
        self.core.ensure_provider(&c.provider.addr).ok()?;
        let s = self.core.host.schema(&c.provider.addr).await.ok()?;
        let rs = if c.addr.resource.mode == Mode::Data {
            s.data_source(&c.addr.resource.ty)
        } else {
            s.resource(&c.addr.resource.ty)
        }?;
        let ty = rs.block.implied_type();
        let fits = |v: &Value| v.is_null() || v.ty().conforms_to(&ty);
        (rs.version == c.schema_version && fits(&c.before) && fits(&c.after))
            .then(|| Arc::new(rs.block.clone()))
    }

    /// A stored object as `show` and `state show` print it: decoded with
    /// its resource type's schema (dynamic attributes lose their stored
    /// type wrapper) and marked sensitive at its recorded paths. None when
    /// no schema of the object's version is available: a loose decoding
    /// would put the marks on the wrong nodes.
    pub async fn stored_object_value(
        &self,
        addr: &InstanceAddr,
        o: &terrane_state::ObjectState,
        provider: &str,
    ) -> Option<Value> {
        let mut schemas = StoredSchemas::default();
        let (_, typed, _) = decode_stored(&self.core, &mut schemas, addr, o, provider).await;
        typed.map(|v| terrane_value::marks::mark_paths(&v, &o.sensitive_paths))
    }
}

/// `provider["registry.terraform.io/hashicorp/random"].alias` back into a key.
fn parse_provider_key(s: &str) -> Option<crate::provider::ProviderConfigKey> {
    let start = s.find("provider[\"")? + "provider[\"".len();
    let end = s[start..].find("\"]")? + start;
    let addr = ProviderAddr::parse(&s[start..end]).ok()?;
    let mut k = crate::provider::ProviderConfigKey::root(addr);
    // `module.a.module.b.provider[...]`: a configuration of a child module.
    k.module = s[..start - "provider[\"".len()]
        .trim_end_matches('.')
        .to_string();
    // `.alias["key"]`: an instance of a configuration with for_each.
    let (rest, key) = match s[end + 2..].split_once('[') {
        Some((r, key)) => (
            r,
            Some(serde_json::from_str::<String>(key.strip_suffix(']')?).ok()?),
        ),
        None => (&s[end + 2..], None),
    };
    let k = match rest.strip_prefix('.') {
        Some(a) => k.with_alias(a),
        None => k,
    };
    Some(match key {
        Some(key) => k.with_key(key),
        None => k,
    })
}

fn orphan_reason(core: &EngineCore, w: &Walk, addr: &InstanceAddr) -> Reason {
    crate::decide::orphan_reason(orphan_config(core, w, addr), &addr.key)
}

/// What the configuration says about an orphaned object's module and
/// resource.
fn orphan_config(core: &EngineCore, w: &Walk, addr: &InstanceAddr) -> OrphanConfig {
    let mut c = Some(&core.config);
    for (m, _) in &addr.resource.module.0 {
        c = c.and_then(|c| c.children.get(m));
    }
    let Some(c) = c else {
        return OrphanConfig::NoModule;
    };
    if !addr.resource.module.0.is_empty() {
        let config_path: Vec<String> = addr
            .resource
            .module
            .0
            .iter()
            .map(|(n, _)| n.clone())
            .collect();
        if !w
            .values
            .instances_of(&config_path)
            .contains(&addr.resource.module)
        {
            return OrphanConfig::NoModule;
        }
    }
    match c
        .module
        .resource(false, &addr.resource.ty, &addr.resource.name)
    {
        None => OrphanConfig::NoResource,
        Some(r) => OrphanConfig::Resource {
            count: r.count.is_some(),
            for_each: r.for_each.is_some(),
        },
    }
}

/// Changes in address order. Each (address, deposed key) is planned once, so
/// no two compare equal and an in-place unstable sort gives the same order
/// without a stable sort's buffer (half the changes, copied).
fn sort(changes: &mut [Change]) {
    changes.sort_unstable_by(|a, b| (&a.addr, &a.deposed).cmp(&(&b.addr, &b.deposed)));
}

/// Whether `-target`/`-exclude` keep this instance.
fn targeted(core: &EngineCore, opts: &Options, addr: &InstanceAddr) -> bool {
    let text = addr.to_string();
    let res = config_addr(addr);
    let matches = |t: &String| {
        text == *t
            || res == *t
            || text.starts_with(&format!("{t}["))
            || text.starts_with(&format!("{t}."))
    };
    if opts.excludes.iter().any(matches) {
        return false;
    }
    if opts.targets.is_empty() {
        return true;
    }
    if opts.targets.iter().any(matches) {
        return true;
    }
    // Dependencies of a target are included.
    let g = &core.graph;
    let mut wanted: HashSet<String> = HashSet::new();
    for (i, n) in g.nodes.iter().enumerate() {
        if opts
            .targets
            .iter()
            .any(|t| n.to_string() == *t || t.starts_with(&format!("{n}[")))
        {
            for d in g.resource_dependencies(i) {
                wanted.insert(g.nodes[d].to_string());
            }
        }
    }
    wanted.contains(&res)
}

/// The changes that turn `from` into `to`, object by object.
fn state_diff(from: &Snapshot, to: &Snapshot) -> Vec<StateChange> {
    let mut out = Vec::new();
    for (raddr, r) in &to.resources {
        for (key, inst) in &r.instances {
            let addr = raddr.instance(key.clone());
            if let Some(o) = &inst.current {
                if from.object(&addr, None) != Some(o) {
                    out.push(StateChange::SetObject {
                        addr: addr.clone(),
                        deposed: None,
                        provider: r.instance_provider(key),
                        object: o.clone(),
                    });
                }
            }
        }
    }
    for (raddr, r) in &from.resources {
        for (key, inst) in &r.instances {
            let addr = raddr.instance(key.clone());
            if inst.current.is_some() && to.object(&addr, None).is_none() {
                out.push(StateChange::RemoveObject {
                    addr,
                    deposed: None,
                });
            }
        }
    }
    out
}

impl Engine {
    /// `import ADDR ID`: asks the provider for the object, reads it, and
    /// records it at `addr` (which must have configuration and no object).
    pub async fn import(
        &self,
        state: &Snapshot,
        run: Box<dyn Run>,
        addr: &InstanceAddr,
        id: &str,
        opts: Options,
    ) -> (Vec<Diagnostic>, Box<dyn Run>) {
        let run = Arc::new(Mutex::new(run));
        let w = Arc::new(Walk::new(
            self.core.clone(),
            Phase::Plan,
            opts,
            state.clone(),
        ));
        let store = Persist::new(Some(run.clone()));
        let all = self.import_inner(&w, &store, addr, id).await;
        drop(store);
        drop(w);
        let run = match Arc::try_unwrap(run) {
            Ok(m) => m.into_inner().unwrap_or_else(|p| p.into_inner()),
            Err(_) => panic!("state run still shared after import"),
        };
        (all, run)
    }

    async fn import_inner(
        &self,
        w: &Arc<Walk>,
        store: &Persist,
        addr: &InstanceAddr,
        id: &str,
    ) -> Vec<Diagnostic> {
        let module: Vec<String> = addr
            .resource
            .module
            .0
            .iter()
            .map(|(n, _)| n.clone())
            .collect();
        let node = graph::Node {
            module,
            kind: NodeKind::Resource {
                mode: addr.resource.mode,
                ty: addr.resource.ty.clone(),
                name: addr.resource.name.clone(),
            },
        };
        let Some(nid) = self.core.graph.id(&node) else {
            return vec![Diagnostic::error(
                "Configuration for import target does not exist",
                format!("The configuration for the given import target {addr} does not exist. All target instances must have an associated configuration to be imported."),
                None,
            )];
        };
        if lock(&w.state).object(addr, None).is_some() {
            return vec![Diagnostic::error(
                "Resource already managed by terrane",
                format!("terrane is already managing a remote object for {addr}. To import to this address you must first remove the existing object from the state."),
                None,
            )];
        }
        let mut out = configure_providers(w).await;
        let rc = match crate::instance::resource_ctx(w, nid).await {
            Ok(rc) => Arc::new(rc),
            Err(d) => {
                out.extend(d);
                return out;
            }
        };
        // The provider instance its key selects (provider for_each):
        // `each.key`/`count.index` are the target's key.
        let vars = match &addr.key {
            InstanceKey::Str(k) => crate::values::InstanceVars {
                each: Some((k.clone(), Value::unknown(Type::Dynamic))),
                ..Default::default()
            },
            InstanceKey::Int(i) => crate::values::InstanceVars {
                count_index: Some(*i),
                ..Default::default()
            },
            InstanceKey::None => Default::default(),
        };
        let module = &addr.resource.module;
        let rc = match crate::provider_each::bind(w, &rc, module, addr, &vars).await {
            Ok(rc) => rc,
            Err(d) => {
                out.extend(d);
                return out;
            }
        };
        // A Pulumi provider names the object's URN after its address; a
        // strict import also checks it against the configuration.
        let pulumi = rc.provider_key.addr.host == crate::provider::addr::DEFAULT_HOST
            && rc.provider_key.addr.namespace == crate::provider::pulumi::NAMESPACE;
        if w.opts.pulumi_strict_import && !pulumi {
            out.push(Diagnostic::error(
                "Strict import needs a Pulumi provider",
                format!("-pulumi-strict-import applies to resources of Pulumi providers (source \"pulumi/<package>\"); {addr} belongs to {}, whose import has no such check.", rc.provider_key.addr),
                rc.res.range.clone(),
            ));
            return out;
        }
        let strict = if w.opts.pulumi_strict_import {
            let inst = match &addr.key {
                terrane_state::InstanceKey::Int(i) => crate::values::InstanceVars {
                    count_index: Some(*i),
                    ..Default::default()
                },
                // each.value is not known outside a plan: unknown here.
                terrane_state::InstanceKey::Str(k) => crate::values::InstanceVars {
                    each: Some((k.clone(), Value::unknown(Type::Dynamic))),
                    ..Default::default()
                },
                terrane_state::InstanceKey::None => Default::default(),
            };
            let (config, d) = rc.config(w, &addr.resource.module, inst);
            let failed = d.iter().any(|d| d.is_error());
            out.extend(d);
            if failed {
                return out;
            }
            Some(config.unmark_deep())
        } else {
            None
        };
        let address = crate::provider::pulumi::address_for(&*rc.provider, addr);
        let import = crate::instance::import_now(&mut out, &rc, addr, id);
        let import = crate::provider::pulumi::with_strict_import(strict, Box::pin(import));
        let imported = crate::provider::pulumi::with_address(address, Box::pin(import)).await;
        let Some((state, private)) =
            imported.and_then(|a| a.required(&mut out, addr, &rc.res.range))
        else {
            return out;
        };
        let object = rc.object(&state, private, terrane_state::Status::Ready, false);
        match store.record(
            &w.state,
            &w.core.progress,
            StateChange::SetObject {
                addr: addr.clone(),
                deposed: None,
                provider: rc.provider_key.to_string(),
                object,
            },
        ) {
            Ok(()) => out,
            Err(d) => {
                out.push(d);
                out
            }
        }
    }
}

/// The `removed` block naming this instance's resource (root module).
fn removed_block<'c>(
    config: &'c terrane_config::Config,
    addr: &InstanceAddr,
) -> Option<&'c terrane_config::Removed> {
    let res = config_addr(addr);
    let text = addr.to_string();
    config.module.removed.iter().find(|r| {
        r.from_addr
            .as_deref()
            .is_some_and(|f| f == res || f == text)
    })
}

/// An error for each `removed` block whose resource the root module
/// still declares, as Terraform refuses such a plan.
fn removed_still_declared(config: &terrane_config::Config) -> Vec<Diagnostic> {
    let m = &config.module;
    m.removed
        .iter()
        .filter_map(|r| {
            let from = r.from_addr.as_deref()?;
            let declared = m.resources.iter().any(|res| {
                let addr = if res.data {
                    format!("data.{}.{}", res.ty, res.name)
                } else {
                    format!("{}.{}", res.ty, res.name)
                };
                addr == from
            });
            declared.then(|| {
                Diagnostic::error(
                    "Removed resource still exists",
                    format!("This statement declares that {from} was removed, but it is still declared in configuration."),
                    r.range.clone(),
                )
            })
        })
        .collect()
}

/// Applies the root module's `moved` blocks to a state: objects at `from`
/// (a resource, an instance or a module call) move to `to` when nothing is
/// there yet. Returns the moved state and diagnostics for moves that
/// collide.
pub fn apply_moved(
    config: &terrane_config::Config,
    state: Snapshot,
) -> (Snapshot, Vec<(InstanceAddr, InstanceAddr)>, Vec<Diagnostic>) {
    let mut s = state;
    let mut diags = removed_still_declared(config);
    let mut done = Vec::new();
    for mv in &config.module.moved {
        let (Some(from), Some(to)) = (&mv.from_addr, &mv.to_addr) else {
            continue;
        };
        let mut moves: Vec<(InstanceAddr, InstanceAddr)> = Vec::new();
        for (raddr, r) in &s.resources {
            for key in r.instances.keys() {
                let a = raddr.instance(key.clone());
                let text = a.to_string();
                let target = if text == *from {
                    Some(to.clone())
                } else if config_addr(&a) == *from && !from.ends_with(']') {
                    Some(format!("{to}{}", a.key))
                } else {
                    text.strip_prefix(&format!("{from}."))
                        .map(|rest| format!("{to}.{rest}"))
                };
                if let Some(t) = target.and_then(|t| InstanceAddr::parse(&t).ok()) {
                    moves.push((a, t));
                }
            }
        }
        for (a, t) in moves {
            if s.object(&t, None).is_some() {
                diags.push(Diagnostic::error(
                    "Ambiguous move statements",
                    format!("A move from {a} to {t} cannot happen because an object already exists at {t}."),
                    mv.range.clone(),
                ));
                continue;
            }
            if move_instance(&mut s, &a, &t) {
                done.push((a, t));
            }
        }
    }
    implicit_moves(config, &mut s, &mut done);
    (s, done, diags)
}

/// Moves every object of instance `a` (current and deposed) to `t`;
/// false when `a` has none.
fn move_instance(s: &mut Snapshot, a: &InstanceAddr, t: &InstanceAddr) -> bool {
    let Some(r) = s.resources.get(&a.resource) else {
        return false;
    };
    let provider = r.instance_provider(&a.key);
    let Some(inst) = r.instances.get(&a.key).cloned() else {
        return false;
    };
    if let Some(o) = inst.current {
        s.apply(StateChange::SetObject {
            addr: t.clone(),
            deposed: None,
            provider: provider.clone(),
            object: o,
        });
        s.apply(StateChange::RemoveObject {
            addr: a.clone(),
            deposed: None,
        });
    }
    for (k, o) in inst.deposed {
        s.apply(StateChange::SetObject {
            addr: t.clone(),
            deposed: Some(k.clone()),
            provider: provider.clone(),
            object: o,
        });
        s.apply(StateChange::RemoveObject {
            addr: a.clone(),
            deposed: Some(k),
        });
    }
    true
}

/// Terraform's implied moves: a resource that gained `count` takes its
/// single object as `[0]`, one that lost `count` takes `[0]` as its single
/// object (root module resources).
fn implicit_moves(
    config: &terrane_config::Config,
    s: &mut Snapshot,
    done: &mut Vec<(InstanceAddr, InstanceAddr)>,
) {
    for r in &config.module.resources {
        let mode = if r.data { Mode::Data } else { Mode::Managed };
        let raddr = terrane_state::ResourceAddr {
            module: Default::default(),
            mode,
            ty: r.ty.clone(),
            name: r.name.clone(),
        };
        let (from, to) = match (r.count.is_some(), r.for_each.is_some()) {
            (false, false) => (InstanceKey::Int(0), InstanceKey::None),
            (true, false) => (InstanceKey::None, InstanceKey::Int(0)),
            _ => continue,
        };
        let (a, t) = (raddr.instance(from), raddr.instance(to));
        if s.resources
            .get(&raddr)
            .is_some_and(|rs| rs.instances.contains_key(&t.key))
            || !move_instance(s, &a, &t)
        {
            continue;
        }
        if mode == Mode::Managed {
            done.push((a, t));
        }
    }
}

/// Terraform's warning for a plan that forgets objects (`removed` blocks
/// with `destroy = false`): which ones, and that they stay where they are.
fn forget_warning(changes: &[Change]) -> Option<Diagnostic> {
    let forgotten: Vec<String> = changes
        .iter()
        .filter(|c| c.action == Action::Forget)
        .map(|c| format!(" - {}", c.addr))
        .collect();
    if forgotten.is_empty() {
        return None;
    }
    Some(Diagnostic::warning(
        "Some objects will no longer be managed by terrane",
        format!(
            "If you apply this plan, terrane will discard its tracking information for the following objects, but it will not delete them:\n{}\n\nAfter applying this plan, terrane will no longer manage these objects. You will need to import them into terrane to manage them again.",
            forgotten.join("\n")
        ),
        None,
    ))
}

/// The values of the root module after a plan walk over a state: what
/// `terrane console` evaluates expressions against (variables, locals,
/// resources as the state and the plan give them, module outputs).
pub struct Evaluation {
    walk: Arc<Walk>,
}

impl Evaluation {
    /// Parses and evaluates `src` in the root module; `name` names the
    /// source in diagnostics (`<console-input>`).
    pub fn eval_str(&self, name: &str, src: &str) -> (Value, Vec<Diagnostic>) {
        let index = Arc::new(terrane_config::LineIndex::new(name, src));
        match terrane_hcl::parser::parse_expr(src) {
            Ok(expr) => {
                let e = terrane_config::Expr {
                    expr,
                    range: None,
                    refs: Vec::new(),
                    index,
                };
                // The console's functions: `type`, and no `plantimestamp`.
                let root = terrane_state::ModulePath(Vec::new());
                let scope = self
                    .walk
                    .scope(&root, crate::values::InstanceVars::default());
                let ctx = terrane_eval::func::FuncCtx {
                    console: true,
                    ..self.walk.func_ctx()
                };
                let pf = |p: &str, n: &str, args: Vec<Value>| {
                    crate::walk::provider_function(&self.walk, p, n, args)
                };
                let mut ev = terrane_eval::Evaluator::new(&scope, &ctx, &e.index)
                    .with_provider_functions(&pf);
                let v = ev.eval(&e.expr);
                (v, ev.into_diagnostics())
            }
            Err(err) => {
                let d = Diagnostic::error(
                    "Invalid expression",
                    err.message().to_string(),
                    Some(index.at_offset(err.offset())),
                );
                (Value::unknown(Type::Dynamic), vec![d])
            }
        }
    }

    /// Evaluates `e` in the root module with `roots` (`output`, `run`)
    /// added to, and taking precedence over, the module's own names.
    pub fn eval_with(
        &self,
        e: &terrane_config::Expr,
        roots: &BTreeMap<String, Value>,
    ) -> (Value, Vec<Diagnostic>) {
        let root = terrane_state::ModulePath(Vec::new());
        let scope = ExtraRoots {
            roots,
            inner: self
                .walk
                .scope(&root, crate::values::InstanceVars::default()),
        };
        let ctx = self.walk.func_ctx();
        let mut ev = terrane_eval::Evaluator::new(&scope, &ctx, &e.index);
        let v = ev.eval(&e.expr);
        (v, ev.into_diagnostics())
    }

    /// The root module's output values as the walk evaluated them (marked
    /// sensitive where declared so).
    pub fn outputs(&self) -> BTreeMap<String, Value> {
        lock(&self.walk.outputs)
            .iter()
            .map(|(k, (v, sensitive))| {
                let v = if *sensitive {
                    v.clone().mark_sensitive()
                } else {
                    v.clone()
                };
                (k.clone(), v)
            })
            .collect()
    }
}

/// A scope with some root names of its own before another's.
struct ExtraRoots<'a> {
    roots: &'a BTreeMap<String, Value>,
    inner: crate::values::InstanceScope<'a>,
}

impl terrane_eval::Scope for ExtraRoots<'_> {
    fn root(&self, name: &str) -> Option<Value> {
        match self.roots.get(name) {
            Some(v) => Some(v.clone()),
            None => self.inner.root(name),
        }
    }

    fn root_attr(&self, name: &str, attr: &str) -> Option<Value> {
        if self.roots.contains_key(name) {
            return None;
        }
        self.inner.root_attr(name, attr)
    }

    fn missing_attr(&self, name: &str, attr: &str) -> Option<terrane_eval::Missing> {
        if self.roots.contains_key(name) {
            return None;
        }
        self.inner.missing_attr(name, attr)
    }
}

impl Engine {
    /// Walks the configuration as a plan does (with the caller's options:
    /// `console` plans without refreshing) and keeps the walk's values for
    /// [`Evaluation::eval_str`]. The diagnostics are the walk's, with the
    /// root module's check blocks (their failures warnings, as in a plan).
    pub async fn evaluation(
        &self,
        state: &Snapshot,
        opts: Options,
    ) -> (Evaluation, Vec<Diagnostic>) {
        let (state, _, mut diags) = apply_moved(&self.core.config, state.clone());
        let opts = Options {
            plan_timestamp: opts
                .plan_timestamp
                .or_else(|| Some(terrane_eval::func::now_rfc3339())),
            ..opts
        };
        let w = Arc::new(Walk::new(self.core.clone(), Phase::Plan, opts, state));
        diags.extend(Planning::new(w.clone()).walk_graph().await);
        diags.extend(crate::conditions::check_blocks(&w));
        (Evaluation { walk: w }, diags)
    }
}
