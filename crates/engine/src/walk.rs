//! The graph walk shared by validate, plan and apply: nodes run as soon as
//! their dependencies are done, many at once; a failed node skips its
//! dependents while independent branches go on, and every failure is
//! reported at the end. Per-node work for variables, locals, outputs,
//! module calls and providers lives here; resources are in
//! [`crate::plan_node`] and [`crate::apply_node`].

use crate::graph::{Graph, NodeId, NodeKind};
use crate::model::{Change, PlanMode};
use crate::provider::{Provider, ProviderAddr, ProviderConfigKey, ProviderHost, ProviderSchema};
use crate::values::{Expansion, InstanceScope, InstanceVars, ResourceValues, Values};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use terrane_config::{Config, Diagnostic, Expr, Module};
use terrane_eval::func::FuncCtx;
use terrane_eval::Evaluator;
use terrane_state::{InstanceAddr, InstanceKey, ModulePath, Snapshot};
use terrane_value::convert::convert;
use terrane_value::{Type, Value};

/// Which walk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Validate,
    Plan,
    Apply,
}

/// Settings of a plan or apply.
#[derive(Clone, Debug)]
pub struct Options {
    pub parallelism: usize,
    pub refresh: bool,
    pub mode: PlanMode,
    /// `-target` addresses (resource or instance, as text).
    pub targets: Vec<String>,
    pub excludes: Vec<String>,
    /// `-replace` instance addresses.
    pub replace: Vec<String>,
    /// Root input variable values.
    pub vars: BTreeMap<String, Value>,
    pub workspace: String,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            parallelism: 10,
            refresh: true,
            mode: PlanMode::Normal,
            targets: Vec::new(),
            excludes: Vec::new(),
            replace: Vec::new(),
            vars: BTreeMap::new(),
            workspace: "default".into(),
        }
    }
}

/// What stays the same across walks of one configuration.
pub struct EngineCore {
    pub dir: PathBuf,
    pub config: Config,
    pub graph: Graph,
    pub host: Arc<ProviderHost>,
    /// Root local provider names to source addresses.
    pub provider_addrs: BTreeMap<String, ProviderAddr>,
    /// Set by an interrupt: no new operation starts.
    pub interrupted: Arc<AtomicBool>,
    /// `path.module` etc. for the root module.
    pub paths: [String; 3],
    /// Objects changed so far by the running apply (for progress displays).
    pub progress: Arc<std::sync::atomic::AtomicUsize>,
    /// Receives progress events (set once by the CLI).
    pub events: std::sync::OnceLock<EventSink>,
    /// Where providers come from (for providers only the state names, such
    /// as those of orphaned resources).
    pub discovery: crate::provider::Discovery,
    pub lockfile: crate::provider::discovery::lockfile::LockFile,
}

/// What the engine reports while it works, for a UI to show as
/// Terraform's hooks do ("Refreshing state...", "Creating...", "Creation
/// complete after 1s").
pub enum Event<'a> {
    /// A stored object is about to be read back from its provider.
    Refreshing {
        addr: &'a InstanceAddr,
        id: Option<String>,
    },
    /// An object's create, update, delete or read starts.
    Started {
        addr: &'a InstanceAddr,
        deposed: Option<&'a str>,
        action: crate::model::Action,
        id: Option<String>,
    },
    /// It finished and its result is saved.
    Finished {
        addr: &'a InstanceAddr,
        deposed: Option<&'a str>,
        action: crate::model::Action,
        id: Option<String>,
        elapsed: std::time::Duration,
    },
}

/// Where [`Event`]s go.
pub type EventSink = Arc<dyn Fn(&Event) + Send + Sync>;

/// An object's `id` attribute as a UI may show it (never a sensitive one).
pub fn object_id(v: &Value) -> Option<String> {
    let id = v.get_attr("id")?;
    if id.is_sensitive() {
        return None;
    }
    id.as_str().map(str::to_string)
}

impl EngineCore {
    /// Reports `e` to the sink a UI installed, if any.
    pub fn emit(&self, e: Event) {
        if let Some(sink) = self.events.get() {
            sink(&e);
        }
    }

    /// Registers `addr` with the host when it is not yet (a provider only
    /// the state mentions).
    pub fn ensure_provider(&self, addr: &ProviderAddr) -> Result<(), String> {
        if self.host.source(addr).is_some() {
            return Ok(());
        }
        let any = crate::provider::discovery::version::Constraints::any();
        let src = self
            .discovery
            .resolve(addr, &any, &self.lockfile)
            .map_err(|e| e.to_string())?;
        self.host.register(addr.clone(), src);
        Ok(())
    }
}

/// One walk's shared state.
/// The configured provider instances of a walk, by name and alias.
pub type ProviderInstances = HashMap<(String, Option<String>), Arc<dyn Provider>>;

pub struct Walk {
    pub core: Arc<EngineCore>,
    pub phase: Phase,
    pub opts: Options,
    pub values: Values,
    /// The state the walk starts from (prior, refreshed as plan goes).
    pub state: Mutex<Snapshot>,
    pub providers: tokio::sync::Mutex<ProviderInstances>,
    pub changes: Mutex<Vec<Change>>,
    pub drift: Mutex<Vec<Change>>,
    pub diags: Mutex<Vec<Diagnostic>>,
    pub limit: Arc<tokio::sync::Semaphore>,
    /// Resource nodes with a pending (non no-op) change.
    pub pending: Mutex<HashSet<NodeId>>,
    /// Instances each resource node expanded to, by module instance.
    pub expanded: Mutex<HashSet<InstanceAddr>>,
    /// Apply: the plan being applied, by (address, deposed).
    pub planned: HashMap<(InstanceAddr, Option<String>), Change>,
    /// Apply: where each change is made durable.
    pub persist: Option<Arc<Mutex<Box<dyn terrane_state::Run>>>>,
    /// Apply: concurrent changes share transactions (each still durable
    /// before it is acknowledged).
    pub commits: crate::apply_node::GroupCommit,
    pub outputs: Mutex<BTreeMap<String, (Value, bool)>>,
    /// Apply: number of objects changed, for the summary.
    pub applied: Mutex<(usize, usize, usize)>,
    /// Apply: changes made to real objects that could not be recorded
    /// (lock lost, disk full, database gone), in the order they happened.
    pub unrecorded: Mutex<Vec<terrane_state::Change>>,
    /// Apply: set at the first failure to persist; no new work starts.
    pub persist_failed: AtomicBool,
    /// Apply: the newest serial the store returned.
    pub last_serial: std::sync::atomic::AtomicU64,
}

impl Walk {
    pub fn new(core: Arc<EngineCore>, phase: Phase, opts: Options, state: Snapshot) -> Walk {
        let limit = Arc::new(tokio::sync::Semaphore::new(opts.parallelism.max(1)));
        Walk {
            core,
            phase,
            opts,
            values: Values::new(),
            state: Mutex::new(state),
            providers: tokio::sync::Mutex::new(HashMap::new()),
            changes: Mutex::new(Vec::new()),
            drift: Mutex::new(Vec::new()),
            diags: Mutex::new(Vec::new()),
            limit,
            pending: Mutex::new(HashSet::new()),
            expanded: Mutex::new(HashSet::new()),
            planned: HashMap::new(),
            persist: None,
            commits: Default::default(),
            outputs: Mutex::new(BTreeMap::new()),
            applied: Mutex::new((0, 0, 0)),
            unrecorded: Mutex::new(Vec::new()),
            persist_failed: AtomicBool::new(false),
            last_serial: std::sync::atomic::AtomicU64::new(0),
        }
    }

    pub fn diag(&self, d: Diagnostic) {
        lock(&self.diags).push(d);
    }

    pub fn diags(&self, ds: impl IntoIterator<Item = Diagnostic>) {
        lock(&self.diags).extend(ds);
    }

    /// Whether new work must not start: Ctrl-C, or state can no longer be
    /// recorded (what is in flight still finishes and is kept aside).
    pub fn interrupted(&self) -> bool {
        self.core.interrupted.load(Ordering::SeqCst) || self.persist_failed.load(Ordering::SeqCst)
    }

    pub fn func_ctx(&self) -> FuncCtx<'_> {
        FuncCtx {
            base_dir: &self.core.dir,
            render_template: &terrane_eval::render_template,
            pure_only: self.phase == Phase::Validate,
        }
    }

    /// The configuration of a module path.
    pub fn module_config(&self, path: &[String]) -> Option<&Config> {
        let mut c = &self.core.config;
        for m in path {
            c = c.children.get(m)?;
        }
        Some(c)
    }

    /// Evaluates `e` in module instance `module` with instance names.
    pub fn eval(
        &self,
        module: &ModulePath,
        inst: InstanceVars,
        e: &Expr,
    ) -> (Value, Vec<Diagnostic>) {
        let scope = self.scope(module, inst);
        let ctx = self.func_ctx();
        let pf = |p: &str, n: &str, args: Vec<Value>| provider_function(self, p, n, args);
        let mut ev = Evaluator::new(&scope, &ctx, &e.index).with_provider_functions(&pf);
        let v = ev.eval(&e.expr);
        (v, ev.into_diagnostics())
    }

    pub fn scope<'a>(&'a self, module: &'a ModulePath, inst: InstanceVars) -> InstanceScope<'a> {
        InstanceScope {
            values: &self.values,
            module,
            config: &self.core.config,
            inst,
            paths: &self.core.paths,
            workspace: &self.opts.workspace,
        }
    }

    /// Runs every node of the graph, `run` doing each node's work; a node
    /// whose dependency failed is skipped. Returns when all are done.
    pub async fn run<F, Fut>(self: &Arc<Self>, run: F)
    where
        F: Fn(Arc<Walk>, NodeId) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = bool> + Send + 'static,
    {
        let g = &self.core.graph;
        let order = crate::schedule::Order::new(g.deps.iter().map(|d| d.iter().copied()));
        let run = Arc::new(run);
        let outcome = crate::schedule::run(order, Default::default(), |id| {
            let (w, r) = (self.clone(), run.clone());
            async move {
                let what = w.core.graph.nodes[id].to_string();
                guarded(w.clone(), what, None, r(w, id)).await
            }
        })
        .await;
        for e in outcome.lost {
            self.diag(Diagnostic::error(
                "Internal error",
                format!("A walk task failed: {e}"),
                None,
            ));
        }
    }
}

/// Runs one task's work, turning a panic inside it (the engine's or an
/// in-process provider's) into an error diagnostic naming `what` and a
/// failed result, so a panic never reads as success.
pub async fn guarded<F>(
    w: Arc<Walk>,
    what: String,
    range: Option<terrane_config::SourceRange>,
    work: F,
) -> bool
where
    F: std::future::Future<Output = bool>,
{
    match (CatchPanic(Box::pin(work))).await {
        Ok(ok) => ok,
        Err(msg) => {
            let detail = if w.phase == Phase::Apply {
                format!("terrane or an in-process provider panicked while working on {what}: {msg}. The operation did not complete normally: the real object may or may not have been changed; check it before applying again.")
            } else {
                format!(
                    "terrane or an in-process provider panicked while working on {what}: {msg}."
                )
            };
            w.diag(Diagnostic::error(
                "Internal error: a task panicked",
                detail,
                range,
            ));
            false
        }
    }
}

/// A future whose panic is caught and returned as its message.
struct CatchPanic<F>(std::pin::Pin<Box<F>>);

impl<F: std::future::Future> std::future::Future for CatchPanic<F> {
    type Output = Result<F::Output, String>;
    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        let inner = &mut self.0;
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| inner.as_mut().poll(cx))) {
            Ok(std::task::Poll::Ready(v)) => std::task::Poll::Ready(Ok(v)),
            Ok(std::task::Poll::Pending) => std::task::Poll::Pending,
            Err(payload) => std::task::Poll::Ready(Err(panic_message(payload.as_ref()))),
        }
    }
}

/// The text of a panic payload (`panic!("...")` carries a `&str` or a `String`).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-text payload".to_string()
    }
}

pub fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Work for the non-resource nodes; resources go to the phase's handler.
pub async fn node(w: Arc<Walk>, id: NodeId) -> bool {
    let node = w.core.graph.nodes[id].clone();
    match &node.kind {
        NodeKind::Var(name) => var_node(&w, &node.module, name),
        NodeKind::Local(name) => local_node(&w, &node.module, name),
        NodeKind::Output(name) => output_node(&w, &node.module, name),
        NodeKind::Call(name) => call_node(&w, &node.module, name),
        NodeKind::Provider { name, alias } => provider_node(&w, name, alias.as_deref()).await,
        NodeKind::Resource { .. } => match w.phase {
            Phase::Apply => crate::apply_node::resource(w.clone(), id).await,
            _ => crate::plan_node::resource(w.clone(), id).await,
        },
    }
}

fn var_node(w: &Walk, module: &[String], name: &str) -> bool {
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
        }
        let single = single_var_module(&cfg.module, name);
        let diags = terrane_eval::module::input_variables(&single, &given, &ctx, &mut scope);
        let ok = !diags.iter().any(is_error);
        w.diags(diags);
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
                    w.diags(d);
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
                        if d.summary == "No value for required variable" {
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
            w.diags(diags);
            let v = scope
                .vars
                .remove(name)
                .unwrap_or_else(|| Value::unknown(Type::Dynamic));
            w.values
                .update(&child, |m| m.vars.insert(name.to_string(), v));
            let rules = &cfg.module.variables[name].validations;
            ok &= crate::conditions::enforce(
                w,
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

pub fn is_error(d: &Diagnostic) -> bool {
    d.severity == terrane_config::Severity::Error
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

fn local_node(w: &Walk, module: &[String], name: &str) -> bool {
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
        w.diags(d);
        w.values
            .update(&inst, |m| m.locals.insert(name.to_string(), v));
    }
    ok
}

fn output_node(w: &Walk, module: &[String], name: &str) -> bool {
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
        w.diags(d);
        if module.is_empty() {
            if v.has_sensitive() && !o.sensitive && w.phase != Phase::Validate {
                w.diag(Diagnostic::error(
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

fn call_node(w: &Walk, module: &[String], name: &str) -> bool {
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
                w.diags(d);
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

/// Source address of a local provider name (root `required_providers`,
/// else `hashicorp/NAME`, `terraform` being the built-in one).
pub fn provider_addr(core: &EngineCore, name: &str) -> ProviderAddr {
    if let Some(a) = core.provider_addrs.get(name) {
        return a.clone();
    }
    if name == "terraform" {
        return ProviderAddr::builtin_terraform();
    }
    ProviderAddr::parse(name)
        .unwrap_or_else(|_| ProviderAddr::new("registry.terraform.io", "hashicorp", name))
}

/// The key of a provider configuration.
pub fn provider_key(core: &EngineCore, name: &str, alias: Option<&str>) -> ProviderConfigKey {
    let k = ProviderConfigKey::root(provider_addr(core, name));
    match alias {
        Some(a) => k.with_alias(a),
        None => k,
    }
}

/// The configured instance of a provider configuration (configured by its
/// node, which runs before any resource that uses it).
pub async fn provider_instance(
    w: &Walk,
    name: &str,
    alias: Option<&str>,
) -> Option<Arc<dyn Provider>> {
    w.providers
        .lock()
        .await
        .get(&(name.to_string(), alias.map(str::to_string)))
        .cloned()
}

pub async fn schema_of(w: &Walk, name: &str) -> Result<Arc<ProviderSchema>, Diagnostic> {
    let addr = provider_addr(&w.core, name);
    w.core
        .host
        .schema(&addr)
        .await
        .map_err(|e| Diagnostic::error("Failed to load plugin schemas", e.to_string(), None))
}

async fn provider_node(w: &Arc<Walk>, name: &str, alias: Option<&str>) -> bool {
    if provider_instance(w, name, alias).await.is_some() {
        return true;
    }
    let key = provider_key(&w.core, name, alias);
    let schema = match schema_of(w, name).await {
        Ok(s) => s,
        Err(d) => {
            w.diag(d);
            return false;
        }
    };
    if schema.diagnostics.has_errors() {
        w.diags(crate::checks::provider_diags(
            &schema.diagnostics,
            &key.to_string(),
            &None,
        ));
        return false;
    }
    let instance = match w.core.host.instance(&key).await {
        Ok(i) => i,
        Err(e) => {
            w.diag(Diagnostic::error(
                "Failed to start provider",
                e.to_string(),
                None,
            ));
            return false;
        }
    };
    // The provider block's configuration (empty when there is none).
    let cfg = w
        .core
        .config
        .module
        .providers
        .iter()
        .find(|p| p.name == name && p.alias.as_deref() == alias);
    let range = cfg.and_then(|c| c.range.clone());
    let root = ModulePath::default();
    let config_value = {
        let scope = w.scope(&root, InstanceVars::default());
        let ctx = w.func_ctx();
        let mut diags = Vec::new();
        let v = match cfg.and_then(|c| c.attributes.values().next().map(|e| e.index.clone())) {
            Some(index) => {
                let mut ev = Evaluator::new(&scope, &ctx, &index);
                let attrs: Vec<(&str, &hcl_edit::expr::Expression)> = cfg
                    .map(|c| {
                        c.attributes
                            .iter()
                            .map(|(k, e)| (k.as_str(), &e.expr))
                            .collect()
                    })
                    .unwrap_or_default();
                let body = crate::decode::BodyRef {
                    attributes: attrs,
                    blocks: Vec::new(),
                    span: None,
                };
                let v = crate::decode::decode_body(
                    &mut ev,
                    &index,
                    &body,
                    &schema.provider.block,
                    &mut diags,
                );
                diags.extend(ev.into_diagnostics());
                v
            }
            None => {
                let index = terrane_config::LineIndex::new("", "");
                let mut ev = Evaluator::new(&scope, &ctx, &index);
                let body = crate::decode::BodyRef {
                    attributes: Vec::new(),
                    blocks: Vec::new(),
                    span: None,
                };
                crate::decode::decode_body(
                    &mut ev,
                    &index,
                    &body,
                    &schema.provider.block,
                    &mut diags,
                )
            }
        };
        if diags.iter().any(is_error) {
            w.diags(diags);
            return false;
        }
        w.diags(diags);
        v
    };
    let unmarked = config_value.unmark_deep();
    // Diagnostics about an argument point at it, as Terraform's do.
    let at = |p: &terrane_value::Path| {
        cfg.and_then(|c| crate::checks::attribute_range(p, &c.attributes, &[]))
    };
    if w.phase != Phase::Validate || unmarked.is_wholly_known() {
        match instance.validate_provider_config(&unmarked).await {
            Ok(d) if d.has_errors() => {
                w.diags(crate::checks::provider_diags_at(
                    &d,
                    &key.to_string(),
                    &range,
                    &at,
                ));
                return false;
            }
            Ok(d) => w.diags(crate::checks::provider_diags_at(
                &d,
                &key.to_string(),
                &range,
                &at,
            )),
            Err(e) => {
                w.diag(Diagnostic::error("Provider failed", e.to_string(), range));
                return false;
            }
        }
    }
    if w.phase != Phase::Validate {
        match instance
            .configure_provider(crate::TERRAFORM_VERSION, &unmarked)
            .await
        {
            Ok(d) if d.has_errors() => {
                w.diags(crate::checks::provider_diags_at(
                    &d,
                    &key.to_string(),
                    &range,
                    &at,
                ));
                return false;
            }
            Ok(d) => w.diags(crate::checks::provider_diags_at(
                &d,
                &key.to_string(),
                &range,
                &at,
            )),
            Err(e) => {
                w.diag(Diagnostic::error(
                    "Failed to configure provider",
                    e.to_string(),
                    range,
                ));
                return false;
            }
        }
    }
    w.providers
        .lock()
        .await
        .insert((name.to_string(), alias.map(str::to_string)), instance);
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

/// `provider::NAME::FUNC(...)`: the call goes to the provider's function
/// instance (functions need no configuration; see the provider host for
/// why it has its own instance). An unknown argument makes the result an
/// unknown of the function's return type, as Terraform does.
pub fn provider_function(
    w: &Walk,
    provider: &str,
    name: &str,
    args: Vec<Value>,
) -> Result<Value, terrane_eval::func::FuncError> {
    let fail = |detail: String| terrane_eval::func::FuncError {
        arg: None,
        summary: "Error in function call".into(),
        detail,
    };
    let full = format!("provider::{provider}::{name}");
    let addr = provider_key(&w.core, provider, None).addr;
    let schema = w
        .core
        .host
        .function_schema_blocking(&addr)
        .map_err(|e| fail(format!("Call to function {full:?} failed: {e}.")))?;
    let Some(sig) = schema.functions.get(name) else {
        return Err(terrane_eval::func::FuncError {
            arg: None,
            summary: "Call to unknown function".into(),
            detail: format!("There is no function named {full:?}."),
        });
    };
    if args.iter().any(|a| !a.is_wholly_known()) {
        return Ok(Value::unknown(sig.return_type.clone()));
    }
    let sensitive = args.iter().any(Value::has_sensitive);
    let plain: Vec<Value> = args.iter().map(Value::unmark_deep).collect();
    let result = w.core.host.call_function_blocking(&addr, name, plain);
    match result {
        Ok(Ok(v)) => Ok(if sensitive { v.mark_sensitive() } else { v }),
        Ok(Err(e)) => Err(terrane_eval::func::FuncError {
            arg: e.argument.map(|a| a as usize),
            summary: if e.argument.is_some() {
                "Invalid function argument".into()
            } else {
                "Error in function call".into()
            },
            detail: format!(
                "Call to function {full:?} failed: {}.",
                e.text.trim_end_matches('.')
            ),
        }),
        Err(e) => Err(fail(format!("Call to function {full:?} failed: {e}."))),
    }
}

/// The expansion of a resource in one module instance, registered for
/// references; `None` after reporting why it cannot be known.
pub fn expand_resource(
    w: &Walk,
    rc: &crate::plan_node::ResourceCtx,
    module: &ModulePath,
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
            w.diags(d);
            None
        }
    }
}
