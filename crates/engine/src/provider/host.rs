//! The per-run provider host: which source serves each provider, one schema
//! fetch per provider (shared by all its configurations), one lazily
//! started instance per provider configuration (alias), and shutdown of
//! everything at the end of the run.
//!
//! ```text
//! let host = ProviderHost::new(HostOptions::default());
//! host.register(addr.clone(), discovery.resolve(&addr, &constraints, &lock)?);
//! let schema = host.schema(&addr).await?;              // cached
//! let p = host.instance(&ProviderConfigKey::root(addr)).await?;
//! p.configure_provider(VERSION, &config).await?;      // the walk configures
//! ... p.plan_resource_change(...) ...
//! host.shutdown().await;
//! ```
//!
//! Getting a schema needs a running instance; for a plugin that costs a
//! process, so the instance that answered is kept (unconfigured) and
//! handed to the first configuration that asks, instead of being thrown
//! away as Terraform does.
//!
//! Provider functions are called from expression evaluation, which is
//! synchronous, while the walk runs on a single-threaded runtime (the
//! engine's tasks are short and wake each other constantly; one thread
//! does that far cheaper than a pool). A function call therefore cannot
//! wait for anything the walk's thread would have to drive. It goes to a
//! separate unconfigured instance of the provider (functions need no
//! configuration) that lives entirely on a small side runtime: started
//! there, connected there, with its own schema cell seeded from the shared
//! one when that is already known. [`ProviderHost::call_function_blocking`]
//! blocks only the calling thread until that runtime answers.

use crate::provider::addr::{ProviderAddr, ProviderConfigKey};
use crate::provider::api::{FunctionError, Provider, ProviderError, ProviderSchema};
use crate::provider::discovery::ProviderSource;
use crate::provider::grpc::rpc::Plugin;
use crate::provider::grpc::{ClientCapabilities, ProtocolProvider, SchemaCell};
use crate::sync::lock;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use terrane_value::Value;
use tokio::sync::OnceCell;

/// Host settings; `Default` is what `terrane` uses.
#[derive(Clone, Debug)]
pub struct HostOptions {
    /// Sent to every provider (default: deferrals and write-only allowed).
    pub client_capabilities: ClientCapabilities,
    /// How long a plugin may take to print its handshake (default 60 s, as
    /// go-plugin).
    pub launch_timeout: Duration,
    /// Extra environment for plugin processes (default none).
    pub plugin_env: Vec<(String, String)>,
    /// Deferral refused (see [`ProviderHost::refuse_deferral`]); shared
    /// with every plugin instance and read at each call.
    pub refuse_deferral: Arc<std::sync::atomic::AtomicBool>,
    /// How Pulumi providers' `http(s)://` asset and archive contents are
    /// fetched for hashing (default: not at all).
    pub uri_fetcher: Option<crate::provider::UriFetcher>,
}

impl Default for HostOptions {
    fn default() -> HostOptions {
        HostOptions {
            client_capabilities: ClientCapabilities::default(),
            launch_timeout: Duration::from_secs(60),
            plugin_env: Vec::new(),
            refuse_deferral: Default::default(),
            uri_fetcher: None,
        }
    }
}

type Instance = Arc<dyn Provider>;

struct Entry {
    source: ProviderSource,
    schema: SchemaCell,
    /// An unconfigured instance left over from fetching the schema.
    spare: Mutex<Option<Instance>>,
    /// Held while an instance is started to fetch the schema, so a second
    /// asker (the walk, while [`ProviderHost::prestart`] runs) waits for
    /// that instance instead of starting another process.
    starting: tokio::sync::Mutex<()>,
}

/// The providers of one run.
pub struct ProviderHost {
    opts: HostOptions,
    providers: Mutex<HashMap<ProviderAddr, Arc<Entry>>>,
    instances: Mutex<HashMap<ProviderConfigKey, Arc<OnceCell<Instance>>>>,
    /// Every instance ever started, for stop and shutdown.
    started: Mutex<Vec<Instance>>,
    /// The instances that answer provider functions, on the side runtime.
    functions: Mutex<HashMap<ProviderAddr, Instance>>,
    /// Deferral refused for instances started from now on (a plan with
    /// `-defer=false`, see [`ProviderHost::refuse_deferral`]).
    no_deferral: Arc<std::sync::atomic::AtomicBool>,
}

impl ProviderHost {
    pub fn new(opts: HostOptions) -> ProviderHost {
        let refusal = opts.refuse_deferral.clone();
        ProviderHost {
            opts,
            providers: Mutex::default(),
            instances: Mutex::default(),
            started: Mutex::default(),
            functions: Mutex::default(),
            no_deferral: refusal,
        }
    }

    /// Tells providers started from now on that they may not defer
    /// (ClientCapabilities.deferral_allowed false), as Terraform does
    /// without deferral. Set before a run starts its providers.
    pub fn refuse_deferral(&self, refuse: bool) {
        self.no_deferral
            .store(refuse, std::sync::atomic::Ordering::SeqCst);
    }

    /// The options instances start with now.
    fn launch_opts(&self) -> HostOptions {
        let mut opts = self.opts.clone();
        if self.no_deferral.load(std::sync::atomic::Ordering::SeqCst) {
            opts.client_capabilities.deferral_allowed = false;
        }
        opts
    }

    /// Records where `addr` comes from (the result of discovery).
    /// Registering again replaces the source for instances not yet started.
    pub fn register(&self, addr: ProviderAddr, source: ProviderSource) {
        let entry = Arc::new(Entry {
            source,
            schema: Arc::new(OnceCell::new()),
            spare: Mutex::new(None),
            starting: tokio::sync::Mutex::new(()),
        });
        lock(&self.providers).insert(addr, entry);
    }

    /// The source registered for `addr`.
    pub fn source(&self, addr: &ProviderAddr) -> Option<ProviderSource> {
        lock(&self.providers).get(addr).map(|e| e.source.clone())
    }

    fn entry(&self, addr: &ProviderAddr) -> Result<Arc<Entry>, ProviderError> {
        lock(&self.providers)
            .get(addr)
            .cloned()
            .ok_or_else(|| ProviderError::NotRegistered {
                provider: addr.to_string(),
            })
    }

    async fn start(&self, addr: &ProviderAddr, entry: &Entry) -> Result<Instance, ProviderError> {
        let instance = start_instance(
            &self.launch_opts(),
            addr,
            &entry.source,
            entry.schema.clone(),
        )
        .await?;
        lock(&self.started).push(instance.clone());
        Ok(instance)
    }

    /// The instance that answers `addr`'s provider functions, started on
    /// the side runtime on first use (see the module docs).
    fn function_instance(&self, addr: &ProviderAddr) -> Result<Instance, ProviderError> {
        if let Some(i) = lock(&self.functions).get(addr) {
            return Ok(i.clone());
        }
        let entry = self.entry(addr)?;
        let schema: SchemaCell = Arc::new(match entry.schema.get() {
            Some(s) => OnceCell::new_with(Some(s.clone())),
            None => OnceCell::new(),
        });
        let (opts, addr2, source) = (self.launch_opts(), addr.clone(), entry.source.clone());
        let instance = on_side(addr, "startup", async move {
            start_instance(&opts, &addr2, &source, schema).await
        })??;
        // Two evaluations may race to start one; the first kept wins and
        // the other is closed.
        let (kept, extra) = {
            let mut m = lock(&self.functions);
            match m.get(addr) {
                Some(k) => (k.clone(), Some(instance)),
                None => {
                    m.insert(addr.clone(), instance.clone());
                    (instance, None)
                }
            }
        };
        if let Some(i) = extra {
            side().spawn(async move { i.close().await });
        }
        Ok(kept)
    }

    /// The signature of provider function `name`: from the shared schema
    /// when it is known, else from the function instance. Blocks the
    /// calling thread; never waits on the caller's runtime.
    pub fn function_schema_blocking(
        &self,
        addr: &ProviderAddr,
    ) -> Result<Arc<ProviderSchema>, ProviderError> {
        if let Some(s) = self.entry(addr)?.schema.get() {
            return Ok(s.clone());
        }
        let instance = self.function_instance(addr)?;
        on_side(addr, "GetProviderSchema", async move {
            instance.get_schema().await
        })?
    }

    /// Calls provider function `name` with known, unmarked `args`. Blocks
    /// the calling thread; never waits on the caller's runtime.
    pub fn call_function_blocking(
        &self,
        addr: &ProviderAddr,
        name: &str,
        args: Vec<Value>,
    ) -> Result<Result<Value, FunctionError>, ProviderError> {
        let instance = self.function_instance(addr)?;
        let name = name.to_string();
        on_side(addr, "CallFunction", async move {
            instance.call_function(&name, &args).await
        })?
    }

    /// The provider's schema, fetched once per run for all its
    /// configurations.
    pub async fn schema(&self, addr: &ProviderAddr) -> Result<Arc<ProviderSchema>, ProviderError> {
        let entry = self.entry(addr)?;
        if let Some(s) = entry.schema.get() {
            return Ok(s.clone());
        }
        let _starting = entry.starting.lock().await;
        if let Some(s) = entry.schema.get() {
            return Ok(s.clone());
        }
        let spare = lock(&entry.spare).take();
        let instance = match spare {
            Some(i) => i,
            None => self.start(addr, &entry).await?,
        };
        let schema = instance.get_schema().await;
        // Keep one unconfigured instance for the first configuration.
        let extra = {
            let mut slot = lock(&entry.spare);
            if slot.is_none() {
                *slot = Some(instance);
                None
            } else {
                Some(instance)
            }
        };
        if let Some(i) = extra {
            i.close().await;
        }
        schema
    }

    /// Starts `addr`'s plugin process and fetches its schema in a spawned
    /// task, so the process boots while the caller does other work (the
    /// CLI reads the state meanwhile). The instance is kept for the first
    /// configuration, as after [`ProviderHost::schema`]. Built-in providers
    /// cost nothing to start and are left alone. A failure is dropped here:
    /// the walk's own start of the provider reports it.
    pub fn prestart(self: &Arc<Self>, addr: &ProviderAddr) {
        let Ok(entry) = self.entry(addr) else { return };
        if !matches!(entry.source, ProviderSource::Plugin(_)) || entry.schema.get().is_some() {
            return;
        }
        let (host, addr) = (self.clone(), addr.clone());
        tokio::spawn(async move {
            let _ = host.schema(&addr).await;
        });
    }

    /// The instance for one provider configuration, started on first use.
    /// It is not configured: the walk calls `configure_provider` (with its
    /// evaluated provider block) before anything else.
    pub async fn instance(&self, key: &ProviderConfigKey) -> Result<Instance, ProviderError> {
        let entry = self.entry(&key.addr)?;
        let cell = lock(&self.instances)
            .entry(key.clone())
            .or_default()
            .clone();
        cell.get_or_try_init(|| async {
            // A schema fetch in progress is about to leave a spare.
            let _starting = entry.starting.lock().await;
            let spare = lock(&entry.spare).take();
            match spare {
                Some(i) => Ok(i),
                None => self.start(&key.addr, &entry).await,
            }
        })
        .await
        .cloned()
    }

    /// The configurations that have an instance.
    pub fn started_configs(&self) -> Vec<ProviderConfigKey> {
        let mut keys: Vec<ProviderConfigKey> = lock(&self.instances)
            .iter()
            .filter(|(_, c)| c.initialized())
            .map(|(k, _)| k.clone())
            .collect();
        keys.sort();
        keys
    }

    /// Interrupt: StopProvider to every running instance (concurrently);
    /// returns the errors, each naming its provider.
    pub async fn stop_all(&self) -> Vec<ProviderError> {
        let all = lock(&self.started).clone();
        let mut tasks = tokio::task::JoinSet::new();
        for i in all {
            tasks.spawn(async move { i.stop().await.err() });
        }
        let mut errs = Vec::new();
        while let Some(r) = tasks.join_next().await {
            errs.extend(r.ok().flatten());
        }
        errs
    }

    /// Ends every instance (plugins: graceful shutdown, then kill), in
    /// parallel. The host can be used again afterwards; new calls start new
    /// instances.
    pub async fn shutdown(&self) {
        let all: Vec<Instance> = std::mem::take(&mut *lock(&self.started));
        let functions: Vec<Instance> = lock(&self.functions).drain().map(|(_, i)| i).collect();
        lock(&self.instances).clear();
        for e in lock(&self.providers).values() {
            lock(&e.spare).take();
        }
        let mut tasks = tokio::task::JoinSet::new();
        for i in all {
            tasks.spawn(async move { i.close().await });
        }
        while tasks.join_next().await.is_some() {}
        // Function instances are closed where they live.
        let closing: Vec<_> = functions
            .into_iter()
            .map(|i| side().spawn(async move { i.close().await }))
            .collect();
        for c in closing {
            let _ = c.await;
        }
    }
}

async fn start_instance(
    opts: &HostOptions,
    addr: &ProviderAddr,
    source: &ProviderSource,
    schema: SchemaCell,
) -> Result<Instance, ProviderError> {
    let name = addr.to_string();
    let caps = opts.client_capabilities;
    Ok(match source {
        ProviderSource::Builtin(b) => b.instance(&name, schema, caps),
        ProviderSource::Pulumi(p) => {
            crate::provider::pulumi::start(
                &name,
                p,
                schema,
                opts.plugin_env.clone(),
                opts.uri_fetcher.clone(),
            )
            .await?
        }
        ProviderSource::Plugin(p) => {
            let launch = terrane_plugin::LaunchOptions {
                // As Terraform does: the plugin picks the highest it speaks.
                versions: vec![5, 6],
                timeout: opts.launch_timeout,
                env: opts.plugin_env.clone(),
            };
            let client = terrane_plugin::launch(&p.binary, launch)
                .await
                .map_err(|source| ProviderError::Launch {
                    provider: name.clone(),
                    source,
                })?;
            Arc::new(
                ProtocolProvider::new(name, Plugin::new(client), schema, caps)
                    .with_deferral_refusal(opts.refuse_deferral.clone()),
            )
        }
    })
}

/// The side runtime of provider functions: one worker thread, started on
/// first use, alive for the rest of the process.
fn side() -> &'static tokio::runtime::Runtime {
    static SIDE: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    SIDE.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("terrane-functions")
            .enable_all()
            .build()
            .expect("cannot start the provider function runtime")
    })
}

/// Runs `fut` (the provider operation `operation`) on the side runtime and
/// blocks this thread for its result.
fn on_side<T: Send + 'static>(
    addr: &ProviderAddr,
    operation: &'static str,
    fut: impl std::future::Future<Output = T> + Send + 'static,
) -> Result<T, ProviderError> {
    let (tx, rx) = std::sync::mpsc::channel();
    side().spawn(async move {
        let _ = tx.send(fut.await);
    });
    rx.recv().map_err(|_| ProviderError::Crashed {
        provider: addr.to_string(),
        operation,
        detail: "the provider function call was abandoned".into(),
    })
}
