//! The context of one walk (validate, plan or apply), shared by every
//! node it runs: the engine's fixed parts ([`EngineCore`]), the settings
//! ([`Options`]), the values computed so far, the state, the configured
//! provider instances, the diagnostics and the concurrency limit; the
//! evaluation of expressions in it; and [`Walk::walk_graph`], which runs
//! the graph's nodes with [`crate::schedule`]. What a phase produces
//! (planned changes, applied counts, persistence) belongs to its driver
//! (plan, apply), not here.
//!
//! Layering: imports schedule, provider, graph, values and model only.

use crate::graph::{Graph, NodeId};
use crate::model::PlanMode;
use crate::provider::{Provider, ProviderAddr, ProviderConfigKey, ProviderHost, ProviderSchema};

use crate::values::{InstanceScope, InstanceVars, Values};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use terrane_config::{Config, Diagnostic, Expr};
use terrane_eval::func::FuncCtx;
use terrane_eval::Evaluator;
use terrane_state::{InstanceAddr, ModulePath, Snapshot};
use terrane_value::Value;

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
    /// `terrane test`'s mocked providers and overridden resources.
    pub doubles: Option<Arc<crate::provider::mock::TestDoubles>>,
    /// Defer what cannot be planned yet (unknown `count`/`for_each`,
    /// providers' `Deferred` answers) instead of failing: on by default;
    /// off (`-defer=false`) is Terraform's strict behaviour.
    pub defer: bool,
    /// `import -pulumi-strict-import`: a Pulumi provider's import must
    /// match the configuration (Read, Check, an empty Diff).
    pub pulumi_strict_import: bool,
    /// What `plantimestamp()` returns (the plan's time); `None` makes it
    /// unknown, as during validation.
    pub plan_timestamp: Option<String>,
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
            doubles: None,
            defer: true,
            pulumi_strict_import: false,
            plan_timestamp: None,
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
    /// Providers that are not installed, when the engine was loaded for a
    /// validate that checks what needs no provider ([`crate::Engine::load_for_validate`]):
    /// their resources are unknown values, their configurations unchecked.
    pub absent: std::collections::BTreeSet<ProviderAddr>,
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
    /// An `import` block's object is about to be imported while planning
    /// ("Preparing import...").
    PreparingImport { addr: &'a InstanceAddr, id: &'a str },
    /// Apply records an imported object: starting, then `done`.
    Importing {
        addr: &'a InstanceAddr,
        id: &'a str,
        done: bool,
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
    /// A provisioner of the object starts ("Provisioning with
    /// 'local-exec'...").
    Provisioning { addr: &'a InstanceAddr, ty: &'a str },
    /// A message of a running provisioner (a line a command printed),
    /// already suppressed when its configuration is sensitive.
    ProvisionOutput {
        addr: &'a InstanceAddr,
        ty: &'a str,
        msg: &'a str,
    },
    /// An ephemeral resource (`ephemeral.T.N`) is being opened or closed;
    /// with `elapsed`, it finished.
    Ephemeral {
        addr: &'a str,
        closing: bool,
        elapsed: Option<std::time::Duration>,
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

/// The configured provider instances of a walk, by configuration.
pub type ProviderInstances = HashMap<ProviderConfigKey, Arc<dyn Provider>>;

/// One walk's shared context.
pub struct Walk {
    pub core: Arc<EngineCore>,
    pub phase: Phase,
    pub opts: Options,
    pub values: Values,
    /// The state the walk starts from (prior, refreshed as plan goes,
    /// changed as apply goes).
    pub state: Mutex<Snapshot>,
    pub providers: tokio::sync::Mutex<ProviderInstances>,
    /// At most `-parallelism` provider operations at once.
    pub limit: Arc<tokio::sync::Semaphore>,
    /// Root module outputs (value, declared sensitive), as evaluated.
    pub outputs: Mutex<BTreeMap<String, (Value, bool)>>,
    /// Ephemeral resources opened in this walk, in the order they were
    /// opened; [`Walk::close_ephemerals`] closes them when it ends.
    pub ephemerals: Mutex<Vec<OpenEphemeral>>,
    /// Each resource type's schema, block and implied type, made once per
    /// walk and shared by every resource of the type
    /// (made by `type_schema` in the instance layer).
    pub types: Mutex<HashMap<TypeKey, TypeSchema>>,
    /// Line indexes of configuration files, by file, made when a resource
    /// without expressions needs one (`resource_index`, instance layer).
    pub line_indexes: Mutex<HashMap<String, Arc<terrane_config::LineIndex>>>,
}

/// Which schema a [`TypeSchema`] is of: the provider schema (by identity:
/// the walk keeps it alive, see [`TypeSchema`]), data or not, the type.
pub type TypeKey = (usize, bool, String);

/// What every resource of one type shares.
#[derive(Clone)]
pub struct TypeSchema {
    pub schema: Arc<terrane_schema::Schema>,
    pub block: Arc<terrane_schema::Block>,
    pub ty: Arc<terrane_value::Type>,
    /// The block's empty value: the prior that a create's proposed new
    /// state is made over.
    pub empty: Arc<terrane_value::Value>,
    /// Holds the provider schema the key names, so that its address is
    /// not reused by another for as long as the entry exists.
    pub(crate) _of: Arc<crate::provider::ProviderSchema>,
}

/// An ephemeral resource held open during a walk. Its result lives only
/// in the walk's values; its private bytes only here.
pub struct OpenEphemeral {
    pub addr: String,
    pub type_name: String,
    pub provider: Arc<dyn Provider>,
    pub range: Option<terrane_config::SourceRange>,
    pub private: Arc<Mutex<Vec<u8>>>,
    /// Ends the renewal task.
    pub stop: Arc<tokio::sync::Notify>,
    /// Renews it each time the provider's `renew_at` comes, until stopped;
    /// returns what went wrong.
    pub renewer: Option<tokio::task::JoinHandle<Vec<Diagnostic>>>,
}

impl OpenEphemeral {
    /// Holds an opened resource; with `renew_at`, a task renews it when
    /// due for as long as it stays open.
    pub fn new(
        addr: String,
        type_name: String,
        provider: Arc<dyn Provider>,
        range: Option<terrane_config::SourceRange>,
        private: Vec<u8>,
        renew_at: Option<std::time::SystemTime>,
    ) -> OpenEphemeral {
        let private = Arc::new(Mutex::new(private));
        let stop = Arc::new(tokio::sync::Notify::new());
        let renewer = renew_at.map(|at| {
            let (provider, ty, private, stop, addr, range) = (
                provider.clone(),
                type_name.clone(),
                private.clone(),
                stop.clone(),
                addr.clone(),
                range.clone(),
            );
            tokio::spawn(async move {
                let mut at = at;
                loop {
                    let wait = at
                        .duration_since(std::time::SystemTime::now())
                        .unwrap_or_default();
                    tokio::select! {
                        _ = stop.notified() => return Vec::new(),
                        _ = tokio::time::sleep(wait) => {}
                    }
                    let held = crate::sync::lock(&private).clone();
                    match provider.renew_ephemeral_resource(&ty, &held).await {
                        Ok(r) => {
                            if r.diagnostics.has_errors() {
                                return placed(r.diagnostics.0, &addr, &range);
                            }
                            *crate::sync::lock(&private) = r.private;
                            match r.renew_at {
                                Some(next) => at = next,
                                None => return placed(r.diagnostics.0, &addr, &range),
                            }
                        }
                        Err(e) => {
                            return vec![Diagnostic::error(
                                "Provider failed",
                                format!("{e} (while renewing {addr})"),
                                range,
                            )]
                        }
                    }
                }
            })
        });
        OpenEphemeral {
            addr,
            type_name,
            provider,
            range,
            private,
            stop,
            renewer,
        }
    }

    /// Stops renewing and closes it; what the provider said.
    pub async fn close(self) -> Vec<Diagnostic> {
        self.stop.notify_one();
        let mut out = match self.renewer {
            Some(task) => task.await.unwrap_or_default(),
            None => Vec::new(),
        };
        let held = crate::sync::lock(&self.private).clone();
        match self
            .provider
            .close_ephemeral_resource(&self.type_name, &held)
            .await
        {
            Ok(d) => out.extend(placed(d.0, &self.addr, &self.range)),
            Err(e) => out.push(Diagnostic::error(
                "Provider failed",
                format!("{e} (while closing {})", self.addr),
                self.range.clone(),
            )),
        }
        out
    }
}

/// A provider's diagnostics about an ephemeral resource, placed at its
/// block and naming it.
fn placed(
    d: Vec<Diagnostic>,
    addr: &str,
    range: &Option<terrane_config::SourceRange>,
) -> Vec<Diagnostic> {
    d.into_iter()
        .map(|mut d| {
            if d.range.is_none() {
                d.range = range.clone();
            }
            d.detail = if d.detail.is_empty() {
                format!("with {addr}")
            } else {
                format!("{} (with {addr})", d.detail)
            };
            d
        })
        .collect()
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
            limit,
            outputs: Mutex::new(BTreeMap::new()),
            ephemerals: Mutex::new(Vec::new()),
            types: Mutex::new(HashMap::new()),
            line_indexes: Mutex::new(HashMap::new()),
        }
    }

    /// Closes every ephemeral resource this walk opened, the last opened
    /// first; their diagnostics.
    pub async fn close_ephemerals(&self) -> Vec<Diagnostic> {
        let open = std::mem::take(&mut *crate::sync::lock(&self.ephemerals));
        let mut out = Vec::new();
        for e in open.into_iter().rev() {
            let addr = e.addr.clone();
            let event = |elapsed| Event::Ephemeral {
                addr: &addr,
                closing: true,
                elapsed,
            };
            self.core.emit(event(None));
            let started = std::time::Instant::now();
            out.extend(e.close().await);
            self.core.emit(event(Some(started.elapsed())));
        }
        out
    }

    /// Whether Ctrl-C asked to stop: no new operation starts.
    pub fn interrupted(&self) -> bool {
        self.core.interrupted.load(Ordering::SeqCst)
    }

    pub fn func_ctx(&self) -> FuncCtx<'_> {
        FuncCtx {
            base_dir: &self.core.dir,
            render_template: &terrane_eval::render_template,
            // As in Terraform, impure functions (timestamp, uuid, bcrypt) give
            // unknown values until apply.
            pure_only: self.phase != Phase::Apply,
            plan_timestamp: match self.phase {
                Phase::Validate => None,
                Phase::Plan | Phase::Apply => self.opts.plan_timestamp.as_deref(),
            },
            console: false,
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

    /// Runs every node of the graph, `work` doing each node's work (and
    /// saying whether it succeeded, with the diagnostics it produced); a
    /// node whose dependency failed is skipped. Returns when all are done,
    /// with every node's diagnostics (in the order the nodes finished).
    ///
    /// A node's work future is made only when its task first runs (and
    /// then on the heap, by [`guarded`]): a task that waits to run holds a
    /// few pointers, not the tens of kilobytes of a resource's future.
    pub async fn walk_graph<F, Fut>(self: &Arc<Self>, work: F) -> Vec<Diagnostic>
    where
        F: Fn(NodeId) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Done> + Send + 'static,
    {
        let g = &self.core.graph;
        let order = crate::schedule::Order::new(g.deps.iter().map(|d| d.iter().copied()));
        let work = Arc::new(work);
        // Nodes alive at once are bounded: a node's work runs only when
        // everything it depends on is done and never waits for a node that
        // has not started, so holding a permit cannot deadlock. Provider
        // work inside is limited by `limit` (`-parallelism`) as before;
        // this bound only keeps a hundred thousand ready resources from
        // all holding their tasks (and instance fan-outs) at once.
        let gate = crate::schedule::Gate {
            limit: Some(Arc::new(tokio::sync::Semaphore::new(
                self.opts.parallelism.max(1) * NODES_PER_PERMIT,
            ))),
            stop: None,
        };
        let outcome = crate::schedule::execute(order, gate, |id| {
            let (w, work) = (self.clone(), work.clone());
            async move {
                let site = || (w.core.graph.nodes[id].to_string(), None);
                guarded(w.phase, site, || work(id)).await
            }
        })
        .await;
        let mut diags: Vec<Diagnostic> = outcome.reports.into_iter().flatten().collect();
        diags.extend(outcome.lost.into_iter().map(|e| {
            Diagnostic::error("Internal error", format!("A walk task failed: {e}"), None)
        }));
        diags
    }
}

/// How many graph nodes may run at once per unit of `-parallelism`: more
/// than one, so nodes that do no provider work (variables, locals,
/// outputs) or wait on a durable write do not hold back the ones that do.
const NODES_PER_PERMIT: usize = 4;

/// What one task's work left: whether it succeeded (its dependents run
/// only after success) and the diagnostics it produced, as values.
pub type Done = (bool, Vec<Diagnostic>);

/// Runs one task's work, turning a panic inside it (the engine's or an
/// in-process provider's) into an error diagnostic and a failed result, so
/// a panic never reads as success. `site` names what was worked on and its
/// source range; it is called only for a panic, so a task that finishes
/// never formats its label. (What the task had
/// reported before it panicked is lost with it; the panic is reported.)
///
/// `start` makes the work when the returned future is first polled, and
/// the work goes to the heap then: until it starts, a task holds only what
/// `start` captured (an instance waiting in a large expansion costs its
/// address, not the kilobytes of its future), and spawning moves a small
/// future whatever the size of the work's.
pub async fn guarded<M, F, S>(phase: Phase, site: S, start: M) -> Done
where
    M: FnOnce() -> F,
    F: std::future::Future<Output = Done>,
    S: FnOnce() -> (String, Option<terrane_config::SourceRange>),
{
    let work = CatchPanic(Box::pin(start()));
    match work.await {
        Ok(done) => done,
        Err(msg) => {
            let (what, range) = site();
            let mut detail = format!(
                "terrane or an in-process provider panicked while working on {what}: {msg}."
            );
            if phase == Phase::Apply {
                detail.push_str(" The operation did not complete normally: the real object may or may not have been changed; check it before applying again.");
            }
            let d = Diagnostic::error("Internal error: a task panicked", detail, range);
            (false, vec![d])
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

pub fn is_error(d: &Diagnostic) -> bool {
    d.severity == terrane_config::Severity::Error
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
/// Whether the provider configuration `key` names is declared with
/// `for_each` (OpenTofu's provider instances); None when its module is not
/// in the configuration.
pub fn provider_is_repeated(core: &EngineCore, key: &ProviderConfigKey) -> Option<bool> {
    let mut c = Some(&core.config);
    for m in key
        .module
        .split('.')
        .filter(|s| !s.is_empty() && *s != "module")
    {
        c = c.and_then(|c| c.children.get(m));
    }
    Some(c?.module.providers.iter().any(|p| {
        p.alias == key.alias && p.for_each.is_some() && provider_addr(core, &p.name) == key.addr
    }))
}

pub fn provider_key(core: &EngineCore, name: &str, alias: Option<&str>) -> ProviderConfigKey {
    let k = ProviderConfigKey::root(provider_addr(core, name));
    match alias {
        Some(a) => k.with_alias(a),
        None => k,
    }
}

/// The key of the provider configuration declared (or, at the root,
/// implied) in the module at configuration path `module`.
pub fn module_provider_key(
    core: &EngineCore,
    module: &[String],
    name: &str,
    alias: Option<&str>,
) -> ProviderConfigKey {
    let mut k = provider_key(core, name, alias);
    k.module = module
        .iter()
        .map(|m| format!("module.{m}"))
        .collect::<Vec<_>>()
        .join(".");
    k
}

/// The key of the provider configuration that `name`/`alias` means for a
/// resource of the module at `module` (declared there, passed by the
/// module call or inherited; see [`crate::graph::resolve_provider`]).
pub fn resolved_provider_key(
    core: &EngineCore,
    module: &[String],
    name: &str,
    alias: Option<&str>,
) -> ProviderConfigKey {
    let (m, n, a) = crate::graph::resolve_provider(&core.config, module, name, alias);
    module_provider_key(core, &m, &n, a.as_deref())
}

/// The configured instance of a provider configuration (configured by its
/// node, which runs before any resource that uses it).
pub async fn provider_instance(w: &Walk, key: &ProviderConfigKey) -> Option<Arc<dyn Provider>> {
    w.providers.lock().await.get(key).cloned()
}

pub async fn schema_of(w: &Walk, name: &str) -> Result<Arc<ProviderSchema>, Diagnostic> {
    let addr = provider_addr(&w.core, name);
    w.core
        .host
        .schema(&addr)
        .await
        .map_err(|e| Diagnostic::error("Failed to load plugin schemas", e.to_string(), None))
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
