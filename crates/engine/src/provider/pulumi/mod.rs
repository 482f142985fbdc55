//! Pulumi resource providers behind the [`Provider`] trait: terrane drives
//! a `pulumi-resource-<pkg>` plugin from the same HCL as any other
//! provider (`source = "pulumi/<pkg>"`).
//!
//! * [`discover`]: where the plugin is (`$PULUMI_HOME/plugins` or
//!   `~/.pulumi/plugins/resource-<pkg>-v<version>/`, then `PATH`, then
//!   terrane's plugin directory).
//! * [`start`]: launch (terrane-plugin's `launch_pulumi`: engine address
//!   argument, port on stdout, plaintext gRPC), serve the Engine service
//!   the plugin logs to, Handshake (falling back to Configure's answer
//!   when the plugin does not implement it, as Pulumi's engine does).
//! * [`schema`]: GetSchema's package schema as terrane schemas (the naming
//!   rule), types, secrets as sensitive.
//! * The lifecycle, Terraform's calls in Pulumi's terms:
//!   - plan: Check, then Diff (prior object) and Create/Update with
//!     `preview = true` for the planned outputs (unknown where the plugin
//!     leaves them unknown); detailedDiff's replace kinds become the
//!     plan's replace paths;
//!   - apply: Check again (as `pulumi up` does), then Create/Update, or
//!     Delete;
//!   - refresh: Read with the object's id, state and inputs; import: Read
//!     with the id alone;
//!   - data sources: Invoke;
//!   - provider configuration: CheckConfig, then Configure;
//!   - interrupt: Cancel; end of run: SIGINT, then kill.
//!
//!   The checked inputs of an object are its private bytes (a protobuf
//!   Struct), sent back as `olds`/`old_inputs`. Every resource gets two
//!   computed attributes: `id` and `urn` (the guide's grammar,
//!   `urn:pulumi:<stack>::<project>::<type>::<resource address>`).

pub mod schema;

use crate::provider::api::*;
use crate::provider::discovery::version::{Constraints, Version};
use crate::provider::grpc::SchemaCell;
use prost::Message as _;
use prost_types::Struct;
use schema::{
    from_wire, object_shape, property_path, to_wire, Package, Prop, ID, TIMED, TIMEOUTS, URN,
};
use std::collections::BTreeMap;
use std::path::{Path as FsPath, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use terrane_plugin::{launch_pulumi, Conn, PulumiLaunch, PulumiPlugin};
use terrane_pulumirpc::codec::{self, EncodeOptions};
use terrane_pulumirpc::pulumirpc as rpc;
use terrane_pulumirpc::pulumirpc::resource_provider_client::ResourceProviderClient;
use terrane_value::{Path, Type, Value};
use tokio::sync::OnceCell;
use tonic::Code;

tokio::task_local! {
    /// The address of the resource instance being planned, for the URN of
    /// an object that does not exist yet (see [`with_address`]).
    static ADDRESS: String;
}

/// The address [`with_address`] makes known for instance `addr` of a
/// resource of `provider`: its text when the provider names new objects
/// after it (Pulumi's URNs, [`Provider::names_objects_by_address`]), else
/// none, as the provider never asks.
pub fn address_for(provider: &dyn Provider, addr: &terrane_state::InstanceAddr) -> Option<String> {
    provider
        .names_objects_by_address()
        .then(|| addr.to_string())
}

/// Runs `f` (the planning, applying or import of one resource instance)
/// with `address` (from [`address_for`]) known to the provider, or as it is
/// when there is none.
pub async fn with_address<F: std::future::Future>(address: Option<String>, f: F) -> F::Output {
    match address {
        Some(a) => ADDRESS.scope(a, f).await,
        None => f.await,
    }
}

fn current_address() -> Option<String> {
    ADDRESS.try_with(Clone::clone).ok()
}

tokio::task_local! {
    /// The configuration of the resource a strict import checks the
    /// imported object against (see [`with_strict_import`]).
    static STRICT_IMPORT: Option<Value>;
}

/// Runs `f` (an import) as Pulumi's strict import when `config` is given:
/// the object Read returns must match that configuration of the resource
/// (Check with the read inputs, then an empty Diff), else the import is
/// refused naming the properties that differ. Other providers ignore it.
pub async fn with_strict_import<F: std::future::Future>(config: Option<Value>, f: F) -> F::Output {
    STRICT_IMPORT.scope(config, f).await
}

fn strict_import_config() -> Option<Value> {
    STRICT_IMPORT.try_with(Clone::clone).ok().flatten()
}

/// Fetches the contents of an `http(s)://` URI (a blocking call: the
/// engine runs it on a blocking thread). Registered by the program that
/// embeds the engine ([`crate::provider::Builtins::fetch_uris_with`]);
/// errors must not quote credentials the URI may hold.
#[derive(Clone)]
pub struct UriFetcher(pub Arc<FetchFn>);

/// The function behind a [`UriFetcher`]: a URI's contents, or why not.
pub type FetchFn = dyn Fn(&str) -> Result<Vec<u8>, String> + Send + Sync;

impl std::fmt::Debug for UriFetcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("UriFetcher")
    }
}

/// The namespace of `required_providers` sources that name Pulumi
/// packages (`pulumi/<package>`).
pub const NAMESPACE: &str = "pulumi";

/// A Pulumi plugin binary found for a package.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PulumiSource {
    pub binary: PathBuf,
    pub package: String,
    /// The version of a `resource-<pkg>-v<version>` directory, if it came
    /// from one.
    pub version: Option<Version>,
}

/// Pulumi's plugin directory: `$PULUMI_HOME/plugins`, else
/// `~/.pulumi/plugins`.
fn pulumi_plugins_dir() -> Option<PathBuf> {
    if let Some(h) = std::env::var_os("PULUMI_HOME").filter(|h| !h.is_empty()) {
        return Some(PathBuf::from(h).join("plugins"));
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".pulumi").join("plugins"))
}

fn executable(p: &FsPath) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    p.metadata()
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// Finds `pulumi-resource-<package>`: the newest version the constraints
/// allow among Pulumi's installed plugins, else the first on `PATH`, else
/// in terrane's plugin directory. `Err` lists where it looked.
pub fn discover(
    package: &str,
    constraints: &Constraints,
    plugin_dir: &FsPath,
) -> Result<PulumiSource, String> {
    let path = std::env::var_os("PATH");
    let places = Places {
        pulumi_plugins: pulumi_plugins_dir(),
        path: path.as_deref(),
        plugin_dir,
    };
    discover_in(package, constraints, &places)
}

/// Where [`discover`] looks.
struct Places<'a> {
    pulumi_plugins: Option<PathBuf>,
    path: Option<&'a std::ffi::OsStr>,
    plugin_dir: &'a FsPath,
}

fn discover_in(
    package: &str,
    constraints: &Constraints,
    places: &Places<'_>,
) -> Result<PulumiSource, String> {
    let bin = format!("pulumi-resource-{package}");
    let mut searched = Vec::new();
    let plugin_dir = places.plugin_dir;
    if let Some(dir) = places.pulumi_plugins.clone() {
        let prefix = format!("resource-{package}-v");
        let mut found: Vec<(Version, PathBuf)> = std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let v = Version::parse(name.strip_prefix(&prefix)?).ok()?;
                let b = e.path().join(&bin);
                executable(&b).then_some((v, b))
            })
            .filter(|(v, _)| constraints.allows(v))
            .collect();
        found.sort_by(|a, b| a.0.cmp(&b.0));
        if let Some((v, b)) = found.pop() {
            return Ok(PulumiSource {
                binary: b,
                package: package.into(),
                version: Some(v),
            });
        }
        searched.push(dir.join(format!("{prefix}<version>")).display().to_string());
    }
    if let Some(path) = places.path {
        for d in std::env::split_paths(path) {
            let b = d.join(&bin);
            if executable(&b) {
                return Ok(PulumiSource {
                    binary: b,
                    package: package.into(),
                    version: None,
                });
            }
        }
        searched.push("PATH".into());
    }
    let b = plugin_dir.join(&bin);
    if executable(&b) {
        return Ok(PulumiSource {
            binary: b,
            package: package.into(),
            version: None,
        });
    }
    searched.push(plugin_dir.display().to_string());
    Err(format!("no executable {bin} in {}", searched.join(", ")))
}

/// How long a Pulumi plugin may take to print its port:
/// `TERRANE_PLUGIN_START_TIMEOUT` seconds, default 60.
fn start_timeout() -> Duration {
    std::env::var("TERRANE_PLUGIN_START_TIMEOUT")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .map(Duration::from_secs)
        .unwrap_or(Duration::from_secs(60))
}

// ---- the Engine service the plugin logs to ------------------------------

struct EngineService {
    label: String,
}

#[tonic::async_trait]
impl rpc::engine_server::Engine for EngineService {
    async fn log(
        &self,
        request: tonic::Request<rpc::LogRequest>,
    ) -> Result<tonic::Response<()>, tonic::Status> {
        let r = request.into_inner();
        let severity = match rpc::LogSeverity::try_from(r.severity) {
            Ok(rpc::LogSeverity::Debug) => {
                if std::env::var_os("TF_LOG").is_none() && std::env::var_os("TERRANE_LOG").is_none()
                {
                    return Ok(tonic::Response::new(()));
                }
                "debug"
            }
            Ok(rpc::LogSeverity::Info) => "info",
            Ok(rpc::LogSeverity::Warning) => "warning",
            Ok(rpc::LogSeverity::Error) | Err(_) => "error",
        };
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr().lock(),
            "{}: {severity}: {}",
            self.label,
            r.message.trim_end()
        );
        Ok(tonic::Response::new(()))
    }

    async fn get_root_resource(
        &self,
        _: tonic::Request<rpc::GetRootResourceRequest>,
    ) -> Result<tonic::Response<rpc::GetRootResourceResponse>, tonic::Status> {
        Ok(tonic::Response::new(Default::default()))
    }

    async fn set_root_resource(
        &self,
        _: tonic::Request<rpc::SetRootResourceRequest>,
    ) -> Result<tonic::Response<rpc::SetRootResourceResponse>, tonic::Status> {
        Ok(tonic::Response::new(Default::default()))
    }
}

/// Serves the Engine service on a loopback port until the sender drops.
async fn serve_engine(
    label: String,
) -> std::io::Result<(String, tokio::sync::oneshot::Sender<()>)> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
    let addr = listener.local_addr()?.to_string();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let svc = rpc::engine_server::EngineServer::new(EngineService { label });
    tokio::spawn(async move {
        let _ = tonic::transport::Server::builder()
            .add_service(svc)
            .serve_with_incoming_shutdown(
                tokio_stream::wrappers::TcpListenerStream::new(listener),
                async {
                    let _ = rx.await;
                },
            )
            .await;
    });
    Ok((addr, tx))
}

// ---- the provider -------------------------------------------------------

/// What the plugin said it accepts (Handshake, else Configure).
#[derive(Clone, Copy, Debug)]
struct Caps {
    accept_secrets: bool,
    supports_preview: bool,
}

/// A running Pulumi plugin as one provider instance.
pub struct PulumiProvider {
    address: String,
    package: String,
    client: ResourceProviderClient<Conn>,
    plugin: tokio::sync::Mutex<Option<PulumiPlugin>>,
    engine_stop: Mutex<Option<tokio::sync::oneshot::Sender<()>>>,
    schema: SchemaCell,
    pkg: OnceCell<Arc<Package>>,
    caps: Mutex<Caps>,
    stack: String,
    project: String,
    /// The configuration CheckConfig answered (what Configure got).
    config: Mutex<Option<Struct>>,
    /// DiffConfig's verdicts, by the recorded configuration they compared
    /// (one call per distinct old configuration in a run).
    verdicts: tokio::sync::Mutex<BTreeMap<Vec<u8>, Verdict>>,
    /// How `http(s)://` asset and archive contents are fetched for their
    /// hash; what was fetched, by URI, for the rest of the run.
    fetcher: Option<UriFetcher>,
    fetched: tokio::sync::Mutex<codec::Fetched>,
}

/// What DiffConfig said of a change from a recorded configuration to the
/// current one.
#[derive(Clone, Debug)]
enum Verdict {
    /// The objects stay (no change, or changes the provider can live with).
    Keep,
    /// Every object made under the old configuration must be replaced;
    /// the properties that force it.
    Replace(Vec<String>),
}

type Res<T> = Result<T, ProviderError>;

/// Launches the plugin of `source` as the provider `address`.
pub async fn start(
    address: &str,
    source: &PulumiSource,
    schema: SchemaCell,
    env: Vec<(String, String)>,
    fetcher: Option<UriFetcher>,
) -> Res<Arc<dyn Provider>> {
    let label = format!("pulumi-resource-{}", source.package);
    let launch_err = |source: terrane_plugin::LaunchError| ProviderError::Launch {
        provider: address.to_string(),
        source,
    };
    let (engine_address, engine_stop) = serve_engine(label.clone()).await.map_err(|e| {
        launch_err(terrane_plugin::LaunchError::Spawn {
            path: "the engine service".into(),
            source: e,
        })
    })?;
    let plugin = launch_pulumi(
        &source.binary,
        PulumiLaunch {
            engine_address: engine_address.clone(),
            timeout: start_timeout(),
            env,
            label,
        },
    )
    .await
    .map_err(launch_err)?;
    let client = ResourceProviderClient::with_origin(plugin.conn(), http_origin())
        .max_decoding_message_size(terrane_plugin::MAX_MESSAGE_SIZE)
        .max_encoding_message_size(terrane_plugin::MAX_MESSAGE_SIZE);
    let cwd = std::env::current_dir().unwrap_or_default();
    let provider = PulumiProvider {
        address: address.to_string(),
        package: source.package.clone(),
        client,
        plugin: tokio::sync::Mutex::new(Some(plugin)),
        engine_stop: Mutex::new(Some(engine_stop)),
        schema,
        pkg: OnceCell::new(),
        caps: Mutex::new(Caps {
            accept_secrets: false,
            supports_preview: false,
        }),
        stack: std::env::var("TF_WORKSPACE")
            .ok()
            .filter(|w| !w.is_empty())
            .unwrap_or_else(|| "default".into()),
        project: cwd
            .file_name()
            .map(|n| n.to_string_lossy().replace("::", "_"))
            .unwrap_or_else(|| "terrane".into()),
        config: Mutex::new(None),
        verdicts: tokio::sync::Mutex::new(BTreeMap::new()),
        fetcher,
        fetched: tokio::sync::Mutex::new(BTreeMap::new()),
    };
    provider.handshake(&engine_address).await?;
    Ok(Arc::new(provider))
}

fn http_origin() -> tonic::codegen::http::Uri {
    tonic::codegen::http::Uri::from_static("http://127.0.0.1")
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The key of an object's private bytes holding the provider
/// configuration (CheckConfig's answer) the object was last created or
/// updated under, for DiffConfig (see [`PulumiProvider::config_verdict`]).
const PROVIDER_CONFIG: &str = "__terrane_provider_config";

/// The prefix of the keys terrane adds to an object's private bytes;
/// they are never sent to the plugin.
const RESERVED: &str = "__terrane_";

/// An object's private bytes: its checked inputs (a protobuf Struct),
/// with the provider configuration it was made under and the paths of
/// `state` that are secret (see [`SECRET_PATHS`]).
fn object_private(inputs: &Struct, config: Option<&Struct>, state: &Value) -> Vec<u8> {
    let mut s = inputs.clone();
    if let Some(c) = config {
        s.fields.insert(
            PROVIDER_CONFIG.into(),
            prost_types::Value {
                kind: Some(prost_types::value::Kind::StructValue(c.clone())),
            },
        );
    }
    let paths = terrane_value::marks::sensitive_paths(state);
    if !paths.is_empty() {
        let json: Vec<_> = paths
            .iter()
            .map(terrane_state::tfstate::path_to_json)
            .collect();
        s.fields.insert(
            SECRET_PATHS.into(),
            prost_types::Value {
                kind: Some(prost_types::value::Kind::StringValue(
                    serde_json::Value::Array(json).to_string(),
                )),
            },
        );
    }
    s.encode_to_vec()
}

/// The key of an object's private bytes listing the paths of its state
/// that are secret (JSON, as the state's `sensitive_attributes`): those the
/// schema marks secret and those the plugin returned as secrets on
/// properties it does not (per-value secrets). The engine hands providers
/// the prior state without marks; these paths make the prior state's
/// secrets go back to the plugin as secrets (Diff, Update, Read, Delete
/// `olds`).
const SECRET_PATHS: &str = "__terrane_secret_paths";

/// The secret paths recorded in private bytes (none when absent; a
/// malformed record is an error: a secret must not go back in clear).
fn private_secret_paths(b: &[u8]) -> Result<Vec<Path>, String> {
    let Some(v) = private_raw(b).and_then(|mut s| s.fields.remove(SECRET_PATHS)) else {
        return Ok(Vec::new());
    };
    let Some(prost_types::value::Kind::StringValue(text)) = v.kind else {
        return Err(format!(
            "{SECRET_PATHS} in the private data is not a string"
        ));
    };
    let json: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| format!("{SECRET_PATHS} in the private data: {e}"))?;
    json.as_array()
        .ok_or_else(|| format!("{SECRET_PATHS} in the private data is not an array"))?
        .iter()
        .map(|p| {
            terrane_state::tfstate::path_from_json(p)
                .map_err(|e| format!("{SECRET_PATHS} in the private data: {e}"))
        })
        .collect()
}

/// `to` with the secret paths recorded in `from` (a plan keeps the prior
/// object's, for Update's `olds` at apply).
fn keep_secret_paths(to: Vec<u8>, from: &[u8]) -> Vec<u8> {
    let Some(v) = private_raw(from).and_then(|mut s| s.fields.remove(SECRET_PATHS)) else {
        return to;
    };
    let mut s = private_raw(&to).unwrap_or_default();
    s.fields.insert(SECRET_PATHS.into(), v);
    s.encode_to_vec()
}

/// The key marking a replace plan's private bytes when the plugin's Diff
/// asked to delete before replacing (never sent back to the plugin: the
/// walk plans the replacement again as a create, whose bytes replace
/// these).
const DELETE_FIRST: &str = "__terrane_delete_before_replace";

fn delete_before_replace_private(inputs: &Struct) -> Vec<u8> {
    let mut s = inputs.clone();
    s.fields.insert(
        DELETE_FIRST.into(),
        prost_types::Value {
            kind: Some(prost_types::value::Kind::BoolValue(true)),
        },
    );
    s.encode_to_vec()
}

/// `got` with each asset or archive property as `written` wrote it
/// (the configuration at plan, the planned object at apply) where the two
/// say the same: the plugin answers an asset as the whole object
/// `{hash, path, text, uri}`, where HCL wrote `{ uri = "..." }` and no
/// hash. Members null or absent are the same, and a hash `written` leaves
/// null matches any; anything else the plugin changed is kept as it
/// answered.
fn keep_written_blobs(res: &schema::Resource, written: &Value, got: Value) -> Value {
    let terrane_value::Kind::Map(attrs) = got.kind() else {
        return got;
    };
    let mut attrs = attrs.clone();
    for p in res.props.iter().filter(|p| p.input && has_blob(&p.ty)) {
        let Some(w) = written.get_attr(&p.hcl) else {
            continue;
        };
        if w.is_null() || !w.is_wholly_known() {
            continue;
        }
        if attrs.get(&p.hcl).is_some_and(|g| same_blob(w, g)) {
            attrs.insert(p.hcl.clone(), w.clone());
        }
    }
    Value::object_typed_of(got.ty(), attrs)
}

fn has_blob(t: &schema::PType) -> bool {
    use schema::PType;
    match t {
        PType::Asset | PType::Archive | PType::AssetOrArchive => true,
        PType::Array(e) | PType::Map(e) => has_blob(e),
        PType::Object(props) => props.iter().any(|p| has_blob(&p.ty)),
        _ => false,
    }
}

/// Whether `got` says what `written` says (see [`keep_written_blobs`]).
fn same_blob(written: &Value, got: &Value) -> bool {
    use terrane_value::Kind;
    match (written.kind(), got.kind()) {
        (Kind::Map(w), Kind::Map(g)) => {
            let null_at = |m: &terrane_value::Entries, k: &str| m.get(k).is_none_or(Value::is_null);
            w.keys()
                .chain(g.keys())
                .all(|k| match (w.get(k), g.get(k)) {
                    _ if null_at(w, k) && (k == "hash" || null_at(g, k)) => true,
                    (Some(a), Some(b)) => same_blob(a, b),
                    _ => false,
                })
        }
        (Kind::Seq(w), Kind::Seq(g)) => {
            w.len() == g.len() && w.iter().zip(g.iter()).all(|(a, b)| same_blob(a, b))
        }
        _ => written.unmark_deep() == got.unmark_deep(),
    }
}

/// Whether a Pulumi plugin's plan of a replacement asked to delete the old
/// object first (Diff's `deleteBeforeReplace`), which then wins over
/// `create_before_destroy`, as Pulumi's engine lets it win over its own
/// create-first default.
pub fn delete_before_replace(planned_private: &[u8]) -> bool {
    private_raw(planned_private).is_some_and(|s| s.fields.contains_key(DELETE_FIRST))
}

/// The key of a plan's private bytes holding the object's prior checked
/// inputs (Update's `old_inputs` at apply).
const PRIOR_INPUTS: &str = "__terrane_prior_inputs";

/// A plan's private bytes: the new checked inputs and the prior ones.
fn planned_private(inputs: &Struct, prior: Option<&Struct>) -> Vec<u8> {
    let mut s = inputs.clone();
    if let Some(p) = prior {
        s.fields.insert(
            PRIOR_INPUTS.into(),
            prost_types::Value {
                kind: Some(prost_types::value::Kind::StructValue(p.clone())),
            },
        );
    }
    s.encode_to_vec()
}

/// The prior checked inputs a plan recorded.
fn private_prior_inputs(b: &[u8]) -> Option<Struct> {
    match private_raw(b)?.fields.remove(PRIOR_INPUTS)?.kind? {
        prost_types::value::Kind::StructValue(c) => Some(c),
        _ => None,
    }
}

/// The key marking a plan in which only the `timeouts` block changes.
const TIMEOUTS_ONLY: &str = "__terrane_timeouts_only";

/// Private bytes with a marker key added.
fn mark_private(b: &[u8], key: &str) -> Vec<u8> {
    let mut s = private_raw(b).unwrap_or_default();
    s.fields.insert(
        key.into(),
        prost_types::Value {
            kind: Some(prost_types::value::Kind::BoolValue(true)),
        },
    );
    s.encode_to_vec()
}

/// The `timeouts` block's duration for `op` ("create", "update",
/// "delete") in an object's configuration, plan or state, in seconds: the
/// RPC's `timeout`; 0 (the plugin's default) when unset.
fn timeout_secs(v: &Value, op: &str) -> f64 {
    v.get_attr(TIMEOUTS)
        .and_then(|t| t.get_attr(op))
        .map(Value::unmark_deep)
        .and_then(|s| s.as_str().and_then(crate::duration::go_duration))
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// The private bytes as stored, terrane's keys included.
fn private_raw(b: &[u8]) -> Option<Struct> {
    (!b.is_empty()).then(|| Struct::decode(b).ok()).flatten()
}

/// The checked inputs of an object's private bytes (what goes back to the
/// plugin as `olds`/`old_inputs`).
fn private_inputs(b: &[u8]) -> Option<Struct> {
    let mut s = private_raw(b)?;
    s.fields.retain(|k, _| !k.starts_with(RESERVED));
    Some(s)
}

/// The provider configuration recorded in an object's private bytes.
fn private_config(b: &[u8]) -> Option<Struct> {
    match private_raw(b)?.fields.remove(PROVIDER_CONFIG)?.kind? {
        prost_types::value::Kind::StructValue(c) => Some(c),
        _ => None,
    }
}

impl PulumiProvider {
    async fn handshake(&self, engine_address: &str) -> Res<()> {
        let req = rpc::ProviderHandshakeRequest {
            engine_address: engine_address.to_string(),
            configure_with_urn: true,
            ..Default::default()
        };
        match self.client.clone().handshake(req).await {
            Ok(r) => {
                let r = r.into_inner();
                *lock(&self.caps) = Caps {
                    accept_secrets: r.accept_secrets,
                    // Handshake has no preview flag; Configure tells.
                    supports_preview: false,
                };
                Ok(())
            }
            // Older SDKs (the Python one) do not implement Handshake: the
            // capabilities come from Configure's answer, as in Pulumi.
            Err(s) if s.code() == Code::Unimplemented => Ok(()),
            Err(s) => Err(self.status_err("Handshake", s).await),
        }
    }

    /// A failed call: a crash when the plugin is gone, else its status.
    async fn status_err(&self, operation: &'static str, s: tonic::Status) -> ProviderError {
        let mut guard = self.plugin.lock().await;
        if let Some(p) = guard.as_mut() {
            // A broken connection may be seen a moment before the exit.
            for _ in 0..20 {
                if p.exited() {
                    let tail = p.output_tail();
                    return ProviderError::Crashed {
                        provider: self.address.clone(),
                        operation,
                        detail: if tail.is_empty() {
                            "the plugin process exited".into()
                        } else {
                            format!("the plugin process exited; its last output:\n{tail}")
                        },
                    };
                }
                if !matches!(s.code(), Code::Unavailable | Code::Unknown | Code::Internal) {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        } else {
            return ProviderError::Closed {
                provider: self.address.clone(),
                operation,
            };
        }
        ProviderError::Rpc {
            provider: self.address.clone(),
            operation,
            status: format!("{}: {}", code_name(s.code()), s.message().trim()),
        }
    }

    fn invalid(&self, operation: &'static str, detail: impl Into<String>) -> ProviderError {
        ProviderError::InvalidResponse {
            provider: self.address.clone(),
            operation,
            detail: detail.into(),
        }
    }

    fn encode_err(&self, operation: &'static str, detail: impl Into<String>) -> ProviderError {
        ProviderError::Encode {
            provider: self.address.clone(),
            operation,
            detail: detail.into(),
        }
    }

    async fn package(&self) -> Res<Arc<Package>> {
        self.pkg
            .get_or_try_init(|| async {
                let r = self
                    .client
                    .clone()
                    .get_schema(rpc::GetSchemaRequest::default())
                    .await;
                let r = match r {
                    Ok(r) => r.into_inner(),
                    Err(s) => return Err(self.status_err("GetSchema", s).await),
                };
                let pkg = Package::parse(&r.schema).map_err(|e| self.invalid("GetSchema", e))?;
                Ok(Arc::new(pkg))
            })
            .await
            .cloned()
    }

    fn urn(&self, token: &str, name: &str) -> String {
        format!(
            "urn:pulumi:{}::{}::{token}::{name}",
            self.stack, self.project
        )
    }

    /// The URN of an object: its recorded one, else one named after the
    /// resource instance being planned.
    fn object_urn(&self, token: &str, v: &Value, operation: &'static str) -> Res<String> {
        if let Some(u) = v.get_attr(URN).and_then(Value::as_str) {
            return Ok(u.to_string());
        }
        match current_address() {
            Some(a) => Ok(self.urn(token, &a)),
            None => Err(self.encode_err(
                operation,
                "no resource address to name the object's URN after",
            )),
        }
    }

    /// A resource's properties for Check/Diff/Create/Update: unknowns go
    /// as the UNKNOWN string, as Pulumi's engine sends computed values
    /// there (output values are for Construct and Call).
    async fn encode_props(
        &self,
        v: &Value,
        props: &[&Prop],
        operation: &'static str,
    ) -> Res<Struct> {
        let wire = to_wire(v, props);
        let shape = object_shape(props.iter().copied());
        let keep_secrets = lock(&self.caps).accept_secrets;
        self.encode_fetching(&wire, &shape, keep_secrets, operation)
            .await
    }

    /// Encodes `wire`, fetching the `http(s)://` contents of assets and
    /// archives without a hash first, as Pulumi's engine does to hash
    /// them (each URI once per run). Without a fetcher they go unhashed.
    async fn encode_fetching(
        &self,
        wire: &Value,
        shape: &codec::Shape,
        keep_secrets: bool,
        operation: &'static str,
    ) -> Res<Struct> {
        let Some(fetcher) = &self.fetcher else {
            let opts = EncodeOptions {
                keep_secrets,
                fetched: None,
            };
            return codec::encode_struct(wire, shape, opts)
                .map_err(|e| self.encode_err(operation, e.to_string()));
        };
        loop {
            let uri = {
                let fetched = self.fetched.lock().await;
                let opts = EncodeOptions {
                    keep_secrets,
                    fetched: Some(&fetched),
                };
                match codec::encode_struct(wire, shape, opts) {
                    Ok(s) => return Ok(s),
                    Err(e) => match e.fetch.clone() {
                        Some(uri) => uri,
                        None => return Err(self.encode_err(operation, e.to_string())),
                    },
                }
            };
            let f = fetcher.0.clone();
            let u = uri.clone();
            let bytes = tokio::task::spawn_blocking(move || (f)(&u))
                .await
                .map_err(|e| self.encode_err(operation, format!("fetching a URI: {e}")))?
                .map_err(|e| {
                    self.encode_err(
                        operation,
                        format!("cannot fetch an asset or archive to hash it: {e}"),
                    )
                })?;
            self.fetched.lock().await.insert(uri, bytes);
        }
    }

    fn decode_props(
        &self,
        s: Option<&Struct>,
        props: &[Prop],
        operation: &'static str,
    ) -> Res<BTreeMap<String, Value>> {
        let empty = Struct::default();
        let v = codec::decode_struct(s.unwrap_or(&empty), &object_shape(props.iter()))
            .map_err(|e| self.invalid(operation, e.to_string()))?;
        Ok(from_wire(&v, props))
    }

    /// The object value of a resource type from its attributes. Marks
    /// stay: a value the plugin returned as a secret is sensitive even where
    /// the schema does not say so (Pulumi providers mark values secret at
    /// run time); the state records its path among the sensitive ones.
    fn object(&self, res: &schema::Resource, mut attrs: BTreeMap<String, Value>) -> Value {
        let ty = res.schema().block.implied_type();
        if let Type::Object(ot) = &ty {
            for (name, aty) in ot.attrs() {
                attrs
                    .entry(name.clone())
                    .or_insert_with(|| Value::null(aty.clone()));
            }
        }
        Value::object_typed(&ty, attrs)
    }

    async fn resource(&self, type_name: &str) -> Res<(Arc<Package>, schema::Resource)> {
        let pkg = self.package().await?;
        let res =
            pkg.resources
                .get(type_name)
                .cloned()
                .ok_or_else(|| ProviderError::UnknownType {
                    provider: self.address.clone(),
                    kind: SchemaKind::Resource,
                    name: type_name.to_string(),
                })?;
        Ok((pkg, res))
    }

    /// Check: the checked inputs, or the failures as diagnostics at the
    /// attributes they name.
    async fn check(
        &self,
        res: &schema::Resource,
        urn: &str,
        olds: Option<Struct>,
        config: &Value,
    ) -> Res<Result<Struct, Diagnostics>> {
        let inputs = res.inputs();
        let news = self.encode_props(config, &inputs, "Check").await?;
        let r = self
            .client
            .clone()
            .check(rpc::CheckRequest {
                urn: urn.to_string(),
                olds,
                news: Some(news),
                name: urn.rsplit("::").next().unwrap_or_default().to_string(),
                r#type: res.token.clone(),
                ..Default::default()
            })
            .await;
        let r = match r {
            Ok(r) => r.into_inner(),
            Err(s) => return Err(self.status_err("Check", s).await),
        };
        if !r.failures.is_empty() {
            return Ok(Err(failures(&r.failures, &res.props, &res.token)));
        }
        Ok(Ok(r.inputs.unwrap_or_default()))
    }

    /// The planned/new object from outputs (absent outputs unknown in a
    /// preview) and checked inputs.
    fn merge(
        &self,
        res: &schema::Resource,
        outputs: &BTreeMap<String, Value>,
        present: &dyn Fn(&str) -> bool,
        inputs: &BTreeMap<String, Value>,
        preview: bool,
        (id, urn): (Value, &str),
    ) -> Value {
        let mut attrs = BTreeMap::new();
        for p in &res.props {
            let v = if p.output {
                match outputs.get(&p.hcl) {
                    Some(v) if present(&p.wire) => v.clone(),
                    _ if preview => Value::unknown(p.ty.ty()),
                    _ => Value::null(p.ty.ty()),
                }
            } else {
                inputs
                    .get(&p.hcl)
                    .cloned()
                    .unwrap_or_else(|| Value::null(p.ty.ty()))
            };
            attrs.insert(p.hcl.clone(), v);
        }
        attrs.insert(ID.into(), id);
        attrs.insert(URN.into(), Value::string(urn));
        self.object(res, attrs)
    }

    /// The object a Read answered (for refresh and import): its outputs,
    /// and the inputs `inputs_s` it or the private data gave, under the
    /// answered ID.
    fn read_object(
        &self,
        res: &schema::Resource,
        r: &rpc::ReadResponse,
        outputs: &BTreeMap<String, Value>,
        inputs_s: &Struct,
        urn: &str,
    ) -> Res<Value> {
        let inputs = self.decode_props(Some(inputs_s), &Self::input_props(res), "Read")?;
        let present = |w: &str| {
            r.properties
                .as_ref()
                .is_some_and(|s| s.fields.contains_key(w))
        };
        Ok(self.merge(
            res,
            outputs,
            &present,
            &inputs,
            false,
            (Value::string(r.id.as_str()), urn),
        ))
    }

    fn output_props(res: &schema::Resource) -> Vec<Prop> {
        res.props.iter().filter(|p| p.output).cloned().collect()
    }

    fn input_props(res: &schema::Resource) -> Vec<Prop> {
        res.props.iter().filter(|p| p.input).cloned().collect()
    }

    /// The prior object's outputs as a Struct (Diff/Update/Delete/Read olds).
    /// Secrets go as secrets: those the schema marks and those `private`
    /// records the plugin returned as secrets.
    async fn olds(
        &self,
        res: &schema::Resource,
        prior: &Value,
        private: &[u8],
        operation: &'static str,
    ) -> Res<Struct> {
        let outs: Vec<&Prop> = res.props.iter().filter(|p| p.output).collect();
        let paths = private_secret_paths(private).map_err(|e| self.encode_err(operation, e))?;
        let prior = terrane_value::marks::mark_paths(prior, &paths);
        self.encode_props(&prior, &outs, operation).await
    }

    /// Create, as a preview (plan) or for real (apply).
    async fn call_create(
        &self,
        res: &schema::Resource,
        urn: &str,
        news: &Struct,
        preview: bool,
        timeout: f64,
    ) -> Res<rpc::CreateResponse> {
        let r = self
            .client
            .clone()
            .create(rpc::CreateRequest {
                urn: urn.to_string(),
                properties: Some(news.clone()),
                preview,
                timeout,
                r#type: res.token.clone(),
                ..Default::default()
            })
            .await;
        match r {
            Ok(r) => Ok(r.into_inner()),
            Err(s) => Err(self.status_err("Create", s).await),
        }
    }

    /// Update of the object `id`, as a preview (plan) or for real (apply).
    #[allow(clippy::too_many_arguments)]
    async fn call_update(
        &self,
        res: &schema::Resource,
        id: &str,
        urn: &str,
        olds: Struct,
        news: &Struct,
        old_inputs: Option<Struct>,
        (preview, timeout): (bool, f64),
    ) -> Res<rpc::UpdateResponse> {
        let r = self
            .client
            .clone()
            .update(rpc::UpdateRequest {
                id: id.to_string(),
                urn: urn.to_string(),
                olds: Some(olds),
                news: Some(news.clone()),
                old_inputs,
                preview,
                timeout,
                r#type: res.token.clone(),
                ..Default::default()
            })
            .await;
        match r {
            Ok(r) => Ok(r.into_inner()),
            Err(s) => Err(self.status_err("Update", s).await),
        }
    }

    /// `state` with the `timeouts` block of `from` (what the configuration,
    /// plan or prior state says).
    fn with_timeouts(&self, res: &schema::Resource, state: Value, from: &Value) -> Value {
        if !res.has_timeouts() {
            return state;
        }
        let Some(attrs) = state.entries() else {
            return state;
        };
        let mut attrs = attrs.to_map();
        if let Some(t) = from.get_attr(TIMEOUTS) {
            attrs.insert(TIMEOUTS.into(), t.clone());
        }
        self.object(res, attrs)
    }

    /// Pulumi's strict import after Read: Check with the read inputs as
    /// `olds` and the configuration as `news`, then Diff of the read state
    /// against the checked inputs, which must find nothing. Errors name the
    /// differing properties (by their HCL names).
    async fn strict_import(
        &self,
        res: &schema::Resource,
        urn: &str,
        read: &rpc::ReadResponse,
        config: &Value,
    ) -> Res<Diagnostics> {
        let read_inputs = read.inputs.clone().unwrap_or_default();
        let checked = match self
            .check(res, urn, Some(read_inputs.clone()), config)
            .await?
        {
            Ok(c) => c,
            Err(d) => return Ok(d),
        };
        let r = self
            .client
            .clone()
            .diff(rpc::DiffRequest {
                id: read.id.clone(),
                urn: urn.to_string(),
                olds: read.properties.clone(),
                news: Some(checked.clone()),
                old_inputs: Some(read_inputs.clone()),
                r#type: res.token.clone(),
                ..Default::default()
            })
            .await;
        let d = match r {
            Ok(r) => r.into_inner(),
            Err(s) => return Err(self.status_err("Diff", s).await),
        };
        use rpc::diff_response::DiffChanges as C;
        let changed = match C::try_from(d.changes) {
            Ok(C::DiffNone) => false,
            Ok(C::DiffSome) => true,
            _ => read_inputs != checked,
        };
        if !changed {
            return Ok(Diagnostics::new());
        }
        let mut keys: Vec<&String> = d.detailed_diff.keys().chain(&d.diffs).collect();
        if keys.is_empty() && d.changes != C::DiffSome as i32 {
            // The plugin cannot tell: the inputs that differ.
            keys = checked
                .fields
                .keys()
                .chain(read_inputs.fields.keys())
                .filter(|k| checked.fields.get(*k) != read_inputs.fields.get(*k))
                .collect();
        }
        keys.sort();
        keys.dedup();
        let names: Vec<String> = keys
            .iter()
            .map(|k| match property_path(k, &res.props) {
                Some(p) if !p.is_root() => p.to_string().trim_start_matches('.').to_string(),
                _ => (*k).clone(),
            })
            .collect();
        let mut diag = Diagnostic::error(
            "Imported object does not match the configuration",
            format!(
                "A strict import (-pulumi-strict-import) requires the object with ID {:?} to match the resource's configuration, and {}'s Diff finds differences in: {}. Change the configuration to match the object, or import without -pulumi-strict-import and let the next plan show the changes.",
                read.id,
                res.token,
                if names.is_empty() {
                    "(properties it does not name)".to_string()
                } else {
                    names.join(", ")
                }
            ),
            None,
        );
        if let Some(p) = keys
            .first()
            .and_then(|k| property_path(k, &res.props))
            .filter(|p| !p.is_root())
        {
            diag = diag.at_path(p);
        }
        Ok(Diagnostics(vec![diag]))
    }

    fn current_config(&self) -> Option<Struct> {
        lock(&self.config).clone()
    }

    /// Whether the objects recorded under the configuration in `private`
    /// must be replaced under the current one: `Some(properties)` when the
    /// configurations differ and DiffConfig asks for replacement. As in
    /// Pulumi's engine, a plugin without DiffConfig (UNIMPLEMENTED) keeps
    /// its objects; so does one whose DiffConfig fails with UNKNOWN (the
    /// Python SDK's answer for a DiffConfig with a detailed diff, whose
    /// conversion it gets wrong), with a warning saying so; any other
    /// failure is an error.
    async fn config_replaces(
        &self,
        private: &[u8],
        diagnostics: &mut Diagnostics,
    ) -> Res<Option<Vec<String>>> {
        let (Some(old), Some(new)) = (private_config(private), self.current_config()) else {
            return Ok(None);
        };
        if old == new {
            return Ok(None);
        }
        let key = old.encode_to_vec();
        let mut verdicts = self.verdicts.lock().await;
        if let Some(v) = verdicts.get(&key) {
            return Ok(match v {
                Verdict::Keep => None,
                Verdict::Replace(keys) => Some(keys.clone()),
            });
        }
        let ty = format!("pulumi:providers:{}", self.package);
        let r = self
            .client
            .clone()
            .diff_config(rpc::DiffRequest {
                urn: self.urn(&ty, "default"),
                olds: Some(old.clone()),
                news: Some(new.clone()),
                old_inputs: Some(old.clone()),
                name: "default".into(),
                r#type: ty,
                ..Default::default()
            })
            .await;
        let verdict = match r {
            Ok(r) => config_verdict(&r.into_inner(), &old, &new),
            Err(s) if s.code() == Code::Unimplemented => Verdict::Keep,
            Err(s) if s.code() == Code::Unknown => {
                diagnostics.push(Diagnostic::warning(
                    "DiffConfig failed; the resources are kept",
                    format!(
                        "{}'s configuration changed, and its DiffConfig failed ({}). terrane keeps the resources made under the old configuration, as for a provider without DiffConfig.",
                        self.address,
                        s.message().lines().next().unwrap_or_default().trim()
                    ),
                    None,
                ));
                Verdict::Keep
            }
            Err(s) => return Err(self.status_err("DiffConfig", s).await),
        };
        verdicts.insert(key, verdict.clone());
        Ok(match verdict {
            Verdict::Keep => None,
            Verdict::Replace(keys) => Some(keys),
        })
    }

    async fn plan_destroy(&self, req: &PlanRequest<'_>) -> Res<PlanResponse> {
        Ok(PlanResponse {
            planned_state: req.proposed_new_state.clone(),
            requires_replace: Vec::new(),
            planned_private: req.prior_private.to_vec(),
            legacy_type_system: false,
            deferred: None,
            diagnostics: Diagnostics::new(),
        })
    }
}

fn code_name(c: Code) -> &'static str {
    match c {
        Code::Unimplemented => "not implemented",
        Code::Unknown => "error",
        Code::InvalidArgument => "invalid argument",
        Code::Unavailable => "unavailable",
        Code::Cancelled => "cancelled",
        Code::DeadlineExceeded => "deadline exceeded",
        _ => "failed",
    }
}

/// Check failures as diagnostics at the attributes their property paths
/// name.
fn failures(fs: &[rpc::CheckFailure], props: &[Prop], token: &str) -> Diagnostics {
    let mut d = Diagnostics::new();
    for f in fs {
        let mut diag = Diagnostic::error(
            "Invalid resource arguments",
            if f.property.is_empty() {
                format!("{token}: {}", f.reason)
            } else {
                format!("{token}: property {}: {}", f.property, f.reason)
            },
            None,
        );
        if let Some(p) = property_path(&f.property, props).filter(|p| !p.is_root()) {
            diag = diag.at_path(p);
        }
        d.push(diag);
    }
    d
}

/// DiffConfig's answer: replace when it reports changes (or cannot tell
/// and the configurations differ) and names properties that force
/// replacement (`replaces`, or replace kinds in the detailed diff).
fn config_verdict(d: &rpc::DiffResponse, old: &Struct, new: &Struct) -> Verdict {
    use rpc::diff_response::DiffChanges as C;
    let changed = match C::try_from(d.changes) {
        Ok(C::DiffNone) => false,
        Ok(C::DiffSome) => true,
        _ => old != new,
    };
    if !changed {
        return Verdict::Keep;
    }
    use rpc::property_diff::Kind as K;
    let mut keys: Vec<String> = d.replaces.clone();
    for (k, pd) in &d.detailed_diff {
        let replace = matches!(
            K::try_from(pd.kind),
            Ok(K::AddReplace | K::DeleteReplace | K::UpdateReplace)
        );
        if replace && !keys.contains(k) {
            keys.push(k.clone());
        }
    }
    if keys.is_empty() {
        Verdict::Keep
    } else {
        keys.sort();
        Verdict::Replace(keys)
    }
}

/// A detailedDiff key (a property path) as a terrane path.
fn diff_path(key: &str, props: &[Prop]) -> Option<Path> {
    property_path(key, props).filter(|p| !p.is_root())
}

#[async_trait::async_trait]
impl Provider for PulumiProvider {
    fn address(&self) -> &str {
        &self.address
    }

    fn names_objects_by_address(&self) -> bool {
        true
    }

    async fn get_schema(&self) -> Res<Arc<ProviderSchema>> {
        if let Some(s) = self.schema.get() {
            return Ok(s.clone());
        }
        let pkg = self.package().await?;
        let s = ProviderSchema {
            provider: schema::config_schema(&pkg.config),
            resources: pkg
                .resources
                .iter()
                .map(|(n, r)| (n.clone(), r.schema()))
                .collect(),
            data_sources: pkg
                .functions
                .iter()
                .map(|(n, f)| (n.clone(), f.schema()))
                .collect(),
            ..Default::default()
        };
        let s = Arc::new(s);
        let _ = self.schema.set(s.clone());
        Ok(self.schema.get().cloned().unwrap_or(s))
    }

    async fn validate_provider_config(&self, _config: &Value) -> Res<Diagnostics> {
        Ok(Diagnostics::new())
    }

    async fn validate_resource_config(&self, type_name: &str, config: &Value) -> Res<Diagnostics> {
        let (_, res) = self.resource(type_name).await?;
        let mut d = Diagnostics::new();
        if !res.has_timeouts() {
            return Ok(d);
        }
        for op in TIMED {
            let Some(v) = config.get_attr(TIMEOUTS).and_then(|t| t.get_attr(op)) else {
                continue;
            };
            let v = v.unmark_deep();
            let Some(text) = v.as_str() else { continue };
            if crate::duration::go_duration(text).is_none() {
                d.push(
                    Diagnostic::error(
                        "Invalid timeout",
                        format!(
                            "{text:?} is not a duration (such as \"30s\", \"5m\" or \"1h30m\")."
                        ),
                        None,
                    )
                    .at_path(Path::root().attr(TIMEOUTS).attr(op)),
                );
            }
        }
        Ok(d)
    }

    async fn validate_data_resource_config(
        &self,
        type_name: &str,
        _config: &Value,
    ) -> Res<Diagnostics> {
        let pkg = self.package().await?;
        if !pkg.functions.contains_key(type_name) {
            return Err(ProviderError::UnknownType {
                provider: self.address.clone(),
                kind: SchemaKind::DataSource,
                name: type_name.to_string(),
            });
        }
        Ok(Diagnostics::new())
    }

    async fn configure_provider(&self, _version: &str, config: &Value) -> Res<Diagnostics> {
        let pkg = self.package().await?;
        let props: Vec<&Prop> = pkg.config.iter().collect();
        let news = self.encode_props(config, &props, "CheckConfig").await?;
        let urn = self.urn(&format!("pulumi:providers:{}", self.package), "default");
        let checked = self
            .client
            .clone()
            .check_config(rpc::CheckRequest {
                urn: urn.clone(),
                olds: Some(Struct::default()),
                news: Some(news.clone()),
                name: "default".into(),
                r#type: format!("pulumi:providers:{}", self.package),
                ..Default::default()
            })
            .await;
        let args = match checked {
            Ok(r) => {
                let r = r.into_inner();
                if !r.failures.is_empty() {
                    return Ok(failures(&r.failures, &pkg.config, "provider configuration"));
                }
                r.inputs.unwrap_or(news)
            }
            // CheckConfig is optional: the configuration goes as written.
            Err(s) if s.code() == Code::Unimplemented => news,
            Err(s) => return Err(self.status_err("CheckConfig", s).await),
        };
        // The deprecated flat form too, for plugins that read only it.
        let configured = args.clone();
        let variables = args
            .fields
            .iter()
            .filter_map(|(k, v)| {
                let text = match v.kind.as_ref()? {
                    prost_types::value::Kind::StringValue(s) => s.clone(),
                    prost_types::value::Kind::NumberValue(n) => n.to_string(),
                    prost_types::value::Kind::BoolValue(b) => b.to_string(),
                    _ => return None,
                };
                Some((format!("{}:config:{k}", self.package), text))
            })
            .collect();
        let r = self
            .client
            .clone()
            .configure(rpc::ConfigureRequest {
                variables,
                args: Some(args),
                accept_secrets: true,
                accept_resources: true,
                urn: Some(urn),
                name: Some("default".into()),
                r#type: Some(format!("pulumi:providers:{}", self.package)),
                ..Default::default()
            })
            .await;
        match r {
            Ok(r) => {
                let r = r.into_inner();
                *lock(&self.caps) = Caps {
                    accept_secrets: r.accept_secrets,
                    supports_preview: r.supports_preview,
                };
                *lock(&self.config) = Some(configured);
                Ok(Diagnostics::new())
            }
            Err(s) => {
                let e = self.status_err("Configure", s).await;
                match e {
                    ProviderError::Rpc { status, .. } => Ok(Diagnostics(vec![Diagnostic::error(
                        "Failed to configure the provider",
                        format!("{}: {status}", self.address),
                        None,
                    )])),
                    other => Err(other),
                }
            }
        }
    }

    async fn upgrade_resource_state(&self, req: UpgradeRequest<'_>) -> Res<UpgradeResponse> {
        let (_, res) = self.resource(req.type_name).await?;
        let ty = res.schema().block.implied_type();
        let json: serde_json::Value = serde_json::from_slice(req.raw_state_json)
            .map_err(|e| self.invalid("UpgradeResourceState", e.to_string()))?;
        let v = terrane_value::json::decode(&json, &ty)
            .map_err(|e| self.invalid("UpgradeResourceState", e.to_string()))?;
        Ok(UpgradeResponse {
            upgraded_state: v,
            diagnostics: Diagnostics::new(),
        })
    }

    async fn read_resource(&self, req: ReadRequest<'_>) -> Res<ReadResponse> {
        let (_, res) = self.resource(req.type_name).await?;
        let id = object_id(req.prior_state);
        let urn = self.object_urn(&res.token, req.prior_state, "Read")?;
        let olds = self
            .olds(&res, req.prior_state, req.private, "Read")
            .await?;
        let r = self
            .client
            .clone()
            .read(rpc::ReadRequest {
                id,
                urn: urn.clone(),
                properties: Some(olds),
                inputs: private_inputs(req.private),
                r#type: res.token.clone(),
                ..Default::default()
            })
            .await;
        let r = match r {
            Ok(r) => r.into_inner(),
            Err(s) => return Err(self.status_err("Read", s).await),
        };
        if r.id.is_empty() {
            return Ok(ReadResponse {
                new_state: Value::null(res.schema().block.implied_type()),
                private: Vec::new(),
                deferred: None,
                diagnostics: Diagnostics::new(),
            });
        }
        let outputs =
            self.decode_props(r.properties.as_ref(), &Self::output_props(&res), "Read")?;
        let inputs_s = r
            .inputs
            .clone()
            .or_else(|| private_inputs(req.private))
            .unwrap_or_default();
        let state = self.read_object(&res, &r, &outputs, &inputs_s, &urn)?;
        let state = self.with_timeouts(&res, state, req.prior_state);
        let private = object_private(&inputs_s, private_config(req.private).as_ref(), &state);
        Ok(ReadResponse {
            new_state: state,
            private,
            deferred: None,
            diagnostics: Diagnostics::new(),
        })
    }

    async fn plan_resource_change(&self, req: PlanRequest<'_>) -> Res<PlanResponse> {
        if req.proposed_new_state.is_null() {
            return self.plan_destroy(&req).await;
        }
        let (_, res) = self.resource(req.type_name).await?;
        let creating = req.prior_state.is_null();
        let urn = if creating {
            self.object_urn(&res.token, req.config, "Check")?
        } else {
            self.object_urn(&res.token, req.prior_state, "Check")?
        };
        let old_inputs = private_inputs(req.prior_private);
        let olds = if creating { None } else { old_inputs.clone() };
        let checked = match self.check(&res, &urn, olds, req.config).await? {
            Ok(c) => c,
            Err(diagnostics) => {
                return Ok(PlanResponse {
                    planned_state: Value::null(res.schema().block.implied_type()),
                    requires_replace: Vec::new(),
                    planned_private: Vec::new(),
                    legacy_type_system: false,
                    deferred: None,
                    diagnostics,
                })
            }
        };
        let inputs = self.decode_props(Some(&checked), &Self::input_props(&res), "Check")?;
        let preview = lock(&self.caps).supports_preview;
        let mut requires_replace = Vec::new();
        let mut diagnostics = Diagnostics::new();
        let mut delete_first = false;
        let (outputs_s, id): (Option<Struct>, Value) = if creating {
            let outs = if preview {
                self.call_create(
                    &res,
                    &urn,
                    &checked,
                    true,
                    timeout_secs(req.config, "create"),
                )
                .await?
                .properties
            } else {
                None
            };
            (outs, Value::unknown(Type::String))
        } else if let Some(keys) = self
            .config_replaces(req.prior_private, &mut diagnostics)
            .await?
        {
            // DiffConfig asked to replace the provider: every object it
            // made goes, as in Pulumi (the guide, "Provider resources").
            // The new object's id is what changes.
            requires_replace.push(Path::root().attr(ID));
            diagnostics.push(Diagnostic::warning(
                "Provider configuration change replaces this resource",
                format!(
                    "{}'s DiffConfig says the change of its configuration ({}) cannot keep managing the objects made under the old one: every resource of this provider instance is replaced.",
                    self.address,
                    keys.join(", ")
                ),
                None,
            ));
            (None, Value::unknown(Type::String))
        } else {
            let id = object_id(req.prior_state);
            let olds = self
                .olds(&res, req.prior_state, req.prior_private, "Diff")
                .await?;
            let r = self
                .client
                .clone()
                .diff(rpc::DiffRequest {
                    id: id.clone(),
                    urn: urn.clone(),
                    olds: Some(olds.clone()),
                    news: Some(checked.clone()),
                    old_inputs: old_inputs.clone(),
                    r#type: res.token.clone(),
                    ..Default::default()
                })
                .await;
            let d = match r {
                Ok(r) => r.into_inner(),
                Err(s) => return Err(self.status_err("Diff", s).await),
            };
            let changes = match rpc::diff_response::DiffChanges::try_from(d.changes) {
                Ok(rpc::diff_response::DiffChanges::DiffNone) => false,
                Ok(rpc::diff_response::DiffChanges::DiffSome) => true,
                // The plugin cannot tell: compare the inputs (the guide).
                _ => old_inputs.as_ref() != Some(&checked),
            };
            if !changes {
                // Only the `timeouts` block may change: no call at apply.
                let planned = self.with_timeouts(&res, req.prior_state.clone(), req.config);
                let mut private = req.prior_private.to_vec();
                if planned != *req.prior_state {
                    private = mark_private(&private, TIMEOUTS_ONLY);
                }
                // The prior state comes without marks: its secrets stay
                // sensitive in the plan (and in what refers to them).
                let secrets =
                    private_secret_paths(req.prior_private).map_err(|e| self.invalid("Diff", e))?;
                let planned = terrane_value::marks::mark_paths(&planned, &secrets);
                return Ok(PlanResponse {
                    planned_state: planned,
                    requires_replace: Vec::new(),
                    planned_private: private,
                    legacy_type_system: false,
                    deferred: None,
                    diagnostics,
                });
            }
            use rpc::property_diff::Kind as K;
            for (key, pd) in &d.detailed_diff {
                let replace = matches!(
                    K::try_from(pd.kind),
                    Ok(K::AddReplace | K::DeleteReplace | K::UpdateReplace)
                );
                if replace {
                    requires_replace.extend(diff_path(key, &res.props));
                }
            }
            for key in &d.replaces {
                if let Some(p) = diff_path(key, &res.props) {
                    if !requires_replace.contains(&p) {
                        requires_replace.push(p);
                    }
                }
            }
            if !requires_replace.is_empty() {
                // Replaced: the walk plans the new object as a create; here
                // the inputs change and the outputs are not known.
                delete_first = d.delete_before_replace;
                (None, Value::string(id))
            } else if preview {
                let r = self
                    .call_update(
                        &res,
                        &id,
                        &urn,
                        olds,
                        &checked,
                        old_inputs.clone(),
                        (true, timeout_secs(req.config, "update")),
                    )
                    .await?;
                (r.properties, Value::string(id))
            } else {
                (None, Value::string(id))
            }
        };
        let outputs = self.decode_props(outputs_s.as_ref(), &Self::output_props(&res), "Create")?;
        // Outputs the preview left out are unknown; so are all of them
        // without a preview. Inputs the plugin checked are what they are.
        let mut outputs = outputs;
        let present = |w: &str| outputs_s.as_ref().is_some_and(|s| s.fields.contains_key(w));
        if outputs_s.is_none() {
            for p in res.props.iter().filter(|p| p.input && p.output) {
                if let Some(v) = inputs.get(&p.hcl) {
                    outputs.insert(p.hcl.clone(), v.clone());
                }
            }
        }
        let all_present = |w: &str| {
            present(w) || (outputs_s.is_none() && res.prop_by_wire(w).is_some_and(|p| p.input))
        };
        let planned = self.merge(&res, &outputs, &all_present, &inputs, true, (id, &urn));
        let planned = keep_written_blobs(&res, req.config, planned);
        let planned = self.with_timeouts(&res, planned, req.config);
        Ok(PlanResponse {
            planned_state: planned,
            requires_replace,
            planned_private: keep_secret_paths(
                if delete_first {
                    delete_before_replace_private(&checked)
                } else {
                    planned_private(&checked, old_inputs.as_ref())
                },
                req.prior_private,
            ),
            legacy_type_system: false,
            deferred: None,
            diagnostics,
        })
    }

    async fn apply_resource_change(&self, req: ApplyRequest<'_>) -> Res<ApplyResponse> {
        let (_, res) = self.resource(req.type_name).await?;
        if req.planned_state.is_null() {
            let id = object_id(req.prior_state);
            let urn = self.object_urn(&res.token, req.prior_state, "Delete")?;
            let olds = self
                .olds(&res, req.prior_state, req.planned_private, "Delete")
                .await?;
            let r = self
                .client
                .clone()
                .delete(rpc::DeleteRequest {
                    id,
                    urn,
                    properties: Some(olds),
                    old_inputs: private_inputs(req.planned_private),
                    timeout: timeout_secs(req.prior_state, "delete"),
                    r#type: res.token.clone(),
                    ..Default::default()
                })
                .await;
            if let Err(s) = r {
                return Err(self.status_err("Delete", s).await);
            }
            return Ok(ApplyResponse {
                new_state: req.planned_state.clone(),
                private: Vec::new(),
                legacy_type_system: false,
                diagnostics: Diagnostics::new(),
            });
        }
        let creating = req.prior_state.is_null();
        if !creating
            && private_raw(req.planned_private)
                .is_some_and(|s| s.fields.contains_key(TIMEOUTS_ONLY))
        {
            // Only the `timeouts` block changed: nothing for the plugin.
            let mut private = private_raw(req.planned_private).unwrap_or_default();
            private.fields.remove(TIMEOUTS_ONLY);
            return Ok(ApplyResponse {
                new_state: req.planned_state.clone(),
                private: private.encode_to_vec(),
                legacy_type_system: false,
                diagnostics: Diagnostics::new(),
            });
        }
        let urn = self.object_urn(&res.token, req.planned_state, "Create")?;
        let old_inputs = if creating {
            None
        } else {
            private_prior_inputs(req.planned_private)
                .or_else(|| private_inputs(req.planned_private))
        };
        // `pulumi up` checks the inputs again before it changes anything.
        let prior_inputs = if creating { None } else { old_inputs.clone() };
        let checked = match self.check(&res, &urn, prior_inputs, req.config).await? {
            Ok(c) => c,
            Err(diagnostics) => {
                return Ok(ApplyResponse {
                    new_state: req.prior_state.clone(),
                    private: Vec::new(),
                    legacy_type_system: false,
                    diagnostics,
                })
            }
        };
        let inputs = self.decode_props(Some(&checked), &Self::input_props(&res), "Check")?;
        let (props, id, op) = if creating {
            let r = self
                .call_create(
                    &res,
                    &urn,
                    &checked,
                    false,
                    timeout_secs(req.config, "create"),
                )
                .await?;
            if r.id.is_empty() {
                return Err(self.invalid("Create", "the plugin returned an empty ID"));
            }
            (r.properties, r.id, "Create")
        } else {
            let id = object_id(req.prior_state);
            let olds = self
                .olds(&res, req.prior_state, req.planned_private, "Update")
                .await?;
            let r = self
                .call_update(
                    &res,
                    &id,
                    &urn,
                    olds,
                    &checked,
                    old_inputs.clone(),
                    (false, timeout_secs(req.config, "update")),
                )
                .await?;
            (r.properties, id, "Update")
        };
        let outputs = self.decode_props(props.as_ref(), &Self::output_props(&res), op)?;
        let present = |w: &str| props.as_ref().is_some_and(|s| s.fields.contains_key(w));
        let state = self.merge(
            &res,
            &outputs,
            &present,
            &inputs,
            false,
            (Value::string(id), &urn),
        );
        let state = keep_written_blobs(&res, req.planned_state, state);
        let state = self.with_timeouts(&res, state, req.planned_state);
        let private = object_private(&checked, self.current_config().as_ref(), &state);
        Ok(ApplyResponse {
            new_state: state,
            private,
            legacy_type_system: false,
            diagnostics: Diagnostics::new(),
        })
    }

    async fn import_resource_state(&self, type_name: &str, id: &str) -> Res<ImportResponse> {
        let (_, res) = self.resource(type_name).await?;
        let urn = match current_address() {
            Some(a) => self.urn(&res.token, &a),
            None => self.urn(&res.token, &format!("{type_name}.imported")),
        };
        let r = self
            .client
            .clone()
            .read(rpc::ReadRequest {
                id: id.to_string(),
                urn: urn.clone(),
                r#type: res.token.clone(),
                ..Default::default()
            })
            .await;
        let r = match r {
            Ok(r) => r.into_inner(),
            Err(s) => return Err(self.status_err("Read", s).await),
        };
        if r.id.is_empty() {
            return Ok(ImportResponse {
                imported: Vec::new(),
                deferred: None,
                diagnostics: Diagnostics(vec![Diagnostic::error(
                    "Cannot import non-existent remote object",
                    format!("{} has no {} with ID {id:?}", self.address, res.token),
                    None,
                )]),
            });
        }
        let outputs =
            self.decode_props(r.properties.as_ref(), &Self::output_props(&res), "Read")?;
        let inputs_s = r.inputs.clone().unwrap_or_default();
        if let Some(config) = strict_import_config() {
            let d = self.strict_import(&res, &urn, &r, &config).await?;
            if d.has_errors() {
                return Ok(ImportResponse {
                    imported: Vec::new(),
                    deferred: None,
                    diagnostics: d,
                });
            }
        }
        let state = self.read_object(&res, &r, &outputs, &inputs_s, &urn)?;
        Ok(ImportResponse {
            imported: vec![ImportedResource {
                type_name: type_name.to_string(),
                private: object_private(&inputs_s, self.current_config().as_ref(), &state),
                state,
            }],
            deferred: None,
            diagnostics: Diagnostics::new(),
        })
    }

    async fn read_data_source(&self, req: ReadDataRequest<'_>) -> Res<ReadDataResponse> {
        let pkg = self.package().await?;
        let f = pkg
            .functions
            .get(req.type_name)
            .ok_or_else(|| ProviderError::UnknownType {
                provider: self.address.clone(),
                kind: SchemaKind::DataSource,
                name: req.type_name.to_string(),
            })?;
        let ins: Vec<&Prop> = f.inputs.iter().collect();
        // Functions take no secrets or unknowns (the guide).
        let plain = req.config.unmark_deep();
        let wire = to_wire(&plain, &ins);
        let args = self
            .encode_fetching(&wire, &object_shape(ins.iter().copied()), false, "Invoke")
            .await?;
        let r = self
            .client
            .clone()
            .invoke(rpc::InvokeRequest {
                tok: f.token.clone(),
                args: Some(args),
                preview: false,
            })
            .await;
        let r = match r {
            Ok(r) => r.into_inner(),
            Err(s) => return Err(self.status_err("Invoke", s).await),
        };
        let ty = f.schema().block.implied_type();
        if !r.failures.is_empty() {
            return Ok(ReadDataResponse {
                state: Value::null(ty),
                deferred: None,
                diagnostics: failures(&r.failures, &f.inputs, &f.token),
            });
        }
        let mut attrs = self.decode_props(r.r#return.as_ref(), &f.outputs, "Invoke")?;
        for p in &f.inputs {
            let v = plain
                .get_attr(&p.hcl)
                .cloned()
                .unwrap_or_else(|| Value::null(p.ty.ty()));
            attrs.insert(p.hcl.clone(), v);
        }
        Ok(ReadDataResponse {
            state: Value::object_typed(&ty, attrs).unmark_deep(),
            deferred: None,
            diagnostics: Diagnostics::new(),
        })
    }

    async fn validate_ephemeral_resource_config(
        &self,
        type_name: &str,
        _: &Value,
    ) -> Res<Diagnostics> {
        Err(self.no_ephemeral(type_name))
    }

    async fn open_ephemeral_resource(
        &self,
        type_name: &str,
        _: &Value,
    ) -> Res<OpenEphemeralResponse> {
        Err(self.no_ephemeral(type_name))
    }

    async fn renew_ephemeral_resource(
        &self,
        type_name: &str,
        _: &[u8],
    ) -> Res<RenewEphemeralResponse> {
        Err(self.no_ephemeral(type_name))
    }

    async fn close_ephemeral_resource(&self, type_name: &str, _: &[u8]) -> Res<Diagnostics> {
        Err(self.no_ephemeral(type_name))
    }

    async fn call_function(
        &self,
        name: &str,
        _args: &[Value],
    ) -> Res<Result<Value, FunctionError>> {
        // Pulumi functions are data sources; a Pulumi package has no
        // provider-defined HCL functions.
        Err(ProviderError::UnknownType {
            provider: self.address.clone(),
            kind: SchemaKind::Function,
            name: name.to_string(),
        })
    }

    async fn stop(&self) -> Res<Option<String>> {
        match self.client.clone().cancel(()).await {
            Ok(_) => Ok(None),
            Err(s) if s.code() == Code::Unimplemented => Ok(None),
            Err(s) => Ok(Some(s.message().to_string())),
        }
    }

    async fn close(&self) {
        let plugin = self.plugin.lock().await.take();
        if let Some(p) = plugin {
            p.shutdown().await;
        }
        lock(&self.engine_stop).take();
    }
}

impl PulumiProvider {
    fn no_ephemeral(&self, type_name: &str) -> ProviderError {
        ProviderError::UnknownType {
            provider: self.address.clone(),
            kind: SchemaKind::EphemeralResource,
            name: type_name.to_string(),
        }
    }
}

/// The Pulumi ID of a stored object (its `id` attribute; empty when it has
/// none), as Read, Diff, Update and Delete send it.
fn object_id(v: &Value) -> String {
    v.get_attr(ID)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plugin(dir: &FsPath, name: &str) -> PathBuf {
        std::fs::create_dir_all(dir).unwrap();
        let b = dir.join(name);
        std::fs::write(&b, "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&b, std::fs::Permissions::from_mode(0o755)).unwrap();
        b
    }

    #[test]
    fn item1_diffconfig_verdicts() {
        use rpc::diff_response::DiffChanges as C;
        use rpc::property_diff::Kind as K;
        let cfg = |prefix: &str| {
            let mut s = Struct::default();
            s.fields.insert(
                "prefix".into(),
                prost_types::Value {
                    kind: Some(prost_types::value::Kind::StringValue(prefix.into())),
                },
            );
            s
        };
        let (old, new) = (cfg("p-"), cfg("q-"));
        let answer = |changes: C, replaces: &[&str], detailed: &[(&str, K)]| rpc::DiffResponse {
            changes: changes as i32,
            replaces: replaces.iter().map(|r| r.to_string()).collect(),
            detailed_diff: detailed
                .iter()
                .map(|(k, kind)| {
                    (
                        k.to_string(),
                        rpc::PropertyDiff {
                            kind: *kind as i32,
                            input_diff: true,
                        },
                    )
                })
                .collect(),
            ..Default::default()
        };
        // (case, answer, configurations differ, properties forcing replacement)
        type Case<'a> = (&'a str, rpc::DiffResponse, bool, Option<Vec<&'a str>>);
        let cases: Vec<Case> = vec![
            (
                "some_with_replaces",
                answer(C::DiffSome, &["prefix"], &[]),
                true,
                Some(vec!["prefix"]),
            ),
            (
                "some_with_detailed_replace",
                answer(C::DiffSome, &[], &[("prefix", K::UpdateReplace)]),
                true,
                Some(vec!["prefix"]),
            ),
            (
                "some_update_only",
                answer(C::DiffSome, &[], &[("prefix", K::Update)]),
                true,
                None,
            ),
            (
                "unknown_and_differ",
                answer(C::DiffUnknown, &["prefix"], &[]),
                true,
                Some(vec!["prefix"]),
            ),
            (
                "unknown_and_same",
                answer(C::DiffUnknown, &["prefix"], &[]),
                false,
                None,
            ),
            // The Python SDK's `changes=True` arrives as DIFF_NONE: taken at
            // its word, as Pulumi's engine does.
            (
                "none_with_replaces",
                answer(C::DiffNone, &["prefix"], &[]),
                true,
                None,
            ),
        ];
        for (name, d, differ, want) in cases {
            let n = if differ { &new } else { &old };
            let got = match config_verdict(&d, &old, n) {
                Verdict::Keep => None,
                Verdict::Replace(keys) => Some(keys),
            };
            let want = want.map(|w| w.iter().map(|k| k.to_string()).collect::<Vec<_>>());
            assert_eq!(got, want, "{name}");
        }
    }

    #[test]
    fn item1_private_bytes_keep_terranes_keys_from_the_plugin() {
        let inputs = |v: &str| {
            let mut s = Struct::default();
            s.fields.insert(
                "value".into(),
                prost_types::Value {
                    kind: Some(prost_types::value::Kind::StringValue(v.into())),
                },
            );
            s
        };
        let config = inputs("cfg");
        let stored = object_private(&inputs("new"), Some(&config), &Value::null(Type::String));
        assert_eq!(private_inputs(&stored), Some(inputs("new")));
        assert_eq!(private_config(&stored), Some(config));
        let planned = planned_private(&inputs("new"), Some(&inputs("old")));
        assert_eq!(private_inputs(&planned), Some(inputs("new")));
        assert_eq!(private_prior_inputs(&planned), Some(inputs("old")));
        let marked = mark_private(&planned, TIMEOUTS_ONLY);
        assert_eq!(private_inputs(&marked), Some(inputs("new")));
        // Bytes stored before terrane recorded anything but the inputs.
        let old_style = inputs("x").encode_to_vec();
        assert_eq!(private_config(&old_style), None);
        assert_eq!(private_inputs(&old_style), Some(inputs("x")));
    }

    /// The paths of an object's secrets (schema or per-value) survive in
    /// its private bytes, through a plan, and never reach the inputs.
    #[test]
    fn item1_per_value_secret_paths_ride_in_the_private_bytes() {
        let state = Value::object(BTreeMap::from([
            ("plain".to_string(), Value::string("a")),
            ("whisper".to_string(), Value::string("w").mark_sensitive()),
            (
                "nested".to_string(),
                Value::object(BTreeMap::from([(
                    "k".to_string(),
                    Value::string("s").mark_sensitive(),
                )])),
            ),
        ]));
        let stored = object_private(&Struct::default(), None, &state);
        let paths = private_secret_paths(&stored).unwrap();
        let want = vec![
            Path::root().attr("nested").attr("k"),
            Path::root().attr("whisper"),
        ];
        assert_eq!(paths, want);
        assert_eq!(private_inputs(&stored), Some(Struct::default()));
        let planned = keep_secret_paths(planned_private(&Struct::default(), None), &stored);
        assert_eq!(private_secret_paths(&planned).unwrap(), want);
        // Nothing secret: nothing recorded; a broken record is an error.
        let none = object_private(&Struct::default(), None, &state.unmark_deep());
        assert_eq!(none, Struct::default().encode_to_vec());
        assert_eq!(private_secret_paths(&none).unwrap(), Vec::<Path>::new());
        let broken = mark_private(&none, SECRET_PATHS);
        assert!(private_secret_paths(&broken).is_err());
    }

    #[test]
    fn item1_pulumi_plugin_discovery_order() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        let plugins = root.join("pulumi/plugins");
        let v1 = plugin(
            &plugins.join("resource-echo-v1.2.0"),
            "pulumi-resource-echo",
        );
        let v2 = plugin(
            &plugins.join("resource-echo-v2.0.0"),
            "pulumi-resource-echo",
        );
        let on_path = plugin(&root.join("bin"), "pulumi-resource-other");
        let in_dir = plugin(&root.join("tp"), "pulumi-resource-third");
        // Not executable: skipped.
        std::fs::create_dir_all(plugins.join("resource-echo-v3.0.0")).unwrap();
        std::fs::write(
            plugins.join("resource-echo-v3.0.0/pulumi-resource-echo"),
            "",
        )
        .unwrap();
        let path = std::ffi::OsString::from(root.join("bin"));
        let places = Places {
            pulumi_plugins: Some(plugins.clone()),
            path: Some(&path),
            plugin_dir: &root.join("tp"),
        };
        // (case, package, constraints, found binary or error text)
        let cases: [(&str, &str, &str, Result<&PathBuf, &str>); 5] = [
            ("newest_installed", "echo", "", Ok(&v2)),
            ("constraint_picks_older", "echo", "< 2.0.0", Ok(&v1)),
            ("on_path", "other", "", Ok(&on_path)),
            ("plugin_dir", "third", "", Ok(&in_dir)),
            (
                "missing",
                "nope",
                "",
                Err("no executable pulumi-resource-nope in"),
            ),
        ];
        for (name, pkg, c, want) in cases {
            let c = if c.is_empty() {
                Constraints::any()
            } else {
                Constraints::parse(c).unwrap()
            };
            let got = discover_in(pkg, &c, &places);
            match (got, want) {
                (Ok(s), Ok(b)) => assert_eq!(&s.binary, b, "{name}"),
                (Err(e), Err(text)) => assert!(e.contains(text), "{name}: {e}"),
                (got, want) => panic!("{name}: got {got:?}, want {want:?}"),
            }
        }
    }
}
