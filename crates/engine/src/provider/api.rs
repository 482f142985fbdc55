//! The one trait the walks talk to ([`Provider`]) and the terrane-value
//! types its lifecycle operations take and return. Nothing here knows about
//! protobuf, processes or sockets: an in-process built-in and a plugin
//! binary look exactly the same from this side.
//!
//! Conventions shared by every operation:
//! * `Ok(response)` means the provider answered; its `diagnostics` may still
//!   hold errors (a user-facing failure the walk reports at the resource).
//! * `Err(ProviderError)` means the machinery failed: the plugin crashed or
//!   hung up, it answered with bytes that do not decode against its own
//!   schema, or the caller named a type the schema does not have. The error
//!   names the provider and the operation.
//! * Values are objects of the schema's implied type; "absent" is a null of
//!   that type (never a missing field), as on the wire.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use terrane_schema::Schema;
use terrane_value::{Path, Type, Value};

/// The lifecycle operations of one provider instance (one provider
/// configuration, i.e. one alias). Implementations are cheap to share
/// (`Arc<dyn Provider>`) and take `&self`, so a parallel walk can have many
/// calls in flight on one instance at once, as Terraform does.
#[async_trait::async_trait]
pub trait Provider: Send + Sync {
    /// The provider's source address, for messages
    /// (`registry.terraform.io/hashicorp/random`).
    fn address(&self) -> &str;

    /// Whether this instance's calls are work on the calling thread (a
    /// server in this process) rather than waits on another process. A
    /// scheduling hint, nothing else: a plan spreads a large expansion of
    /// such a provider's resources over every core, where for a plugin
    /// the extra thread hops would only cost (its calls wait on the
    /// plugin, whatever thread makes them).
    fn calls_run_here(&self) -> bool {
        false
    }

    /// Whether this provider names the objects it creates after the
    /// address of the instance being planned or applied (Pulumi's URNs),
    /// which the walk then makes known to it ([`crate::provider::pulumi::with_address`]).
    fn names_objects_by_address(&self) -> bool {
        false
    }

    /// The provider's schemas and capabilities (cached: the host fetches
    /// them once per provider per run).
    async fn get_schema(&self) -> Result<Arc<ProviderSchema>, ProviderError>;

    async fn validate_provider_config(&self, config: &Value) -> Result<Diagnostics, ProviderError>;
    async fn validate_resource_config(
        &self,
        type_name: &str,
        config: &Value,
    ) -> Result<Diagnostics, ProviderError>;
    async fn validate_data_resource_config(
        &self,
        type_name: &str,
        config: &Value,
    ) -> Result<Diagnostics, ProviderError>;

    /// Configures the instance; `config` may hold unknowns during plan.
    async fn configure_provider(
        &self,
        terraform_version: &str,
        config: &Value,
    ) -> Result<Diagnostics, ProviderError>;

    /// Upgrades stored state JSON (written under `version`) to the current
    /// schema.
    async fn upgrade_resource_state(
        &self,
        req: UpgradeRequest<'_>,
    ) -> Result<UpgradeResponse, ProviderError>;
    /// UpgradeResourceState of a stored object whose `attributes` JSON is
    /// at hand: by default serialized and passed to
    /// [`Provider::upgrade_resource_state`]; an in-process provider may
    /// answer an object at the current schema version without the call's
    /// encodings (the same answer).
    async fn upgrade_stored(
        &self,
        type_name: &str,
        version: i64,
        attributes: &str,
    ) -> Result<UpgradeResponse, ProviderError> {
        self.upgrade_resource_state(UpgradeRequest {
            type_name,
            version,
            raw_state_json: attributes.as_bytes(),
            raw_state_flatmap: None,
        })
        .await
    }
    async fn read_resource(&self, req: ReadRequest<'_>) -> Result<ReadResponse, ProviderError>;
    async fn plan_resource_change(
        &self,
        req: PlanRequest<'_>,
    ) -> Result<PlanResponse, ProviderError>;
    async fn apply_resource_change(
        &self,
        req: ApplyRequest<'_>,
    ) -> Result<ApplyResponse, ProviderError>;
    async fn import_resource_state(
        &self,
        type_name: &str,
        id: &str,
    ) -> Result<ImportResponse, ProviderError>;
    async fn read_data_source(
        &self,
        req: ReadDataRequest<'_>,
    ) -> Result<ReadDataResponse, ProviderError>;

    /// Ephemeral resources (`ephemeral` blocks): validated like the other
    /// kinds, opened with a wholly known configuration, renewed while held
    /// when the provider asked, closed at the end of the phase. Their
    /// results and private bytes never leave memory.
    async fn validate_ephemeral_resource_config(
        &self,
        type_name: &str,
        config: &Value,
    ) -> Result<Diagnostics, ProviderError>;
    async fn open_ephemeral_resource(
        &self,
        type_name: &str,
        config: &Value,
    ) -> Result<OpenEphemeralResponse, ProviderError>;
    async fn renew_ephemeral_resource(
        &self,
        type_name: &str,
        private: &[u8],
    ) -> Result<RenewEphemeralResponse, ProviderError>;
    async fn close_ephemeral_resource(
        &self,
        type_name: &str,
        private: &[u8],
    ) -> Result<Diagnostics, ProviderError>;
    /// Calls a provider-defined function; `Ok(Err(_))` is the function's
    /// own error (an argument it refused).
    async fn call_function(
        &self,
        name: &str,
        args: &[Value],
    ) -> Result<Result<Value, FunctionError>, ProviderError>;

    /// Asks the provider to cancel its in-flight operations (interrupt).
    /// Returns the provider's error text, if it reported one.
    async fn stop(&self) -> Result<Option<String>, ProviderError>;

    /// Ends the instance at the end of a run: a plugin process is shut down
    /// (gracefully, then killed); in-process instances just drop their
    /// state. Calls after `close` fail with [`ProviderError::Closed`].
    async fn close(&self);
}

/// A diagnostic from a provider is the workspace's one diagnostic type
/// (terrane-diag): its `path` points into the configuration object it
/// concerns, and the walk gives it a source range.
pub use terrane_config::{Diagnostic, Severity};

/// A list of diagnostics; errors decide failure.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diagnostics(pub Vec<Diagnostic>);

/// A provider's answer, which always carries its diagnostics.
pub trait Answer {
    fn diagnostics(&self) -> &Diagnostics;
}

impl Answer for Diagnostics {
    fn diagnostics(&self) -> &Diagnostics {
        self
    }
}

macro_rules! answers {
    ($($t:ty),*) => {$(
        impl Answer for $t {
            fn diagnostics(&self) -> &Diagnostics {
                &self.diagnostics
            }
        }
    )*};
}

answers!(
    UpgradeResponse,
    ReadResponse,
    PlanResponse,
    ApplyResponse,
    ImportResponse,
    ReadDataResponse,
    OpenEphemeralResponse,
    RenewEphemeralResponse
);

impl Diagnostics {
    pub fn new() -> Diagnostics {
        Diagnostics(Vec::new())
    }

    pub fn has_errors(&self) -> bool {
        self.0.iter().any(|d| d.severity == Severity::Error)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Diagnostic> {
        self.0.iter()
    }

    pub fn push(&mut self, d: Diagnostic) {
        self.0.push(d);
    }

    pub fn extend(&mut self, other: Diagnostics) {
        self.0.extend(other.0);
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            let sev = match d.severity {
                Severity::Error => "Error",
                Severity::Warning => "Warning",
            };
            write!(f, "{sev}: {}", d.summary)?;
            if let Some(p) = &d.path {
                write!(f, " (at {p})")?;
            }
            if !d.detail.is_empty() {
                write!(f, ": {}", d.detail)?;
            }
        }
        Ok(())
    }
}

/// What the provider can do beyond the basics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServerCapabilities {
    /// PlanResourceChange is called for destroys too; without it the walk
    /// plans a destroy itself (null planned state, prior private kept).
    pub plan_destroy: bool,
    /// A new instance may skip GetProviderSchema (the host then does not
    /// call it again for every alias).
    pub get_provider_schema_optional: bool,
    pub move_resource_state: bool,
}

/// A function parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionParam {
    pub name: String,
    pub ty: Type,
    pub allow_null: bool,
    /// When false the caller must not call with unknown arguments; the
    /// result is then an unknown of the return type.
    pub allow_unknown: bool,
    pub description: String,
}

/// A provider-defined function's signature.
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionSignature {
    pub params: Vec<FunctionParam>,
    /// Extra arguments, sent as a list.
    pub variadic: Option<FunctionParam>,
    pub return_type: Type,
    pub summary: String,
    pub description: String,
    pub deprecation_message: String,
}

/// Everything GetProviderSchema told us, as terrane-schema values.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProviderSchema {
    pub provider: Schema,
    pub provider_meta: Option<Schema>,
    pub resources: BTreeMap<String, Schema>,
    pub data_sources: BTreeMap<String, Schema>,
    pub ephemeral_resources: BTreeMap<String, Schema>,
    pub functions: BTreeMap<String, FunctionSignature>,
    pub capabilities: ServerCapabilities,
    /// Diagnostics the provider reported with its schema (errors mean the
    /// provider is unusable).
    pub diagnostics: Diagnostics,
}

impl ProviderSchema {
    pub fn resource(&self, type_name: &str) -> Option<&Schema> {
        self.resources.get(type_name)
    }

    pub fn data_source(&self, type_name: &str) -> Option<&Schema> {
        self.data_sources.get(type_name)
    }

    /// The implied type of the provider_meta schema (an empty object when
    /// the provider has none).
    pub fn provider_meta_type(&self) -> Type {
        self.provider_meta
            .as_ref()
            .map(|s| s.block.implied_type())
            .unwrap_or_else(|| terrane_schema::Block::new().implied_type())
    }
}

/// Why the provider deferred an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeferredReason {
    Unknown,
    ResourceConfigUnknown,
    ProviderConfigUnknown,
    AbsentPrereq,
}

/// UpgradeResourceState input: the stored JSON as written to state.
#[derive(Clone, Debug)]
pub struct UpgradeRequest<'a> {
    pub type_name: &'a str,
    /// The `schema_version` recorded with the state.
    pub version: i64,
    /// The stored `attributes` JSON, verbatim (empty for a flatmap).
    pub raw_state_json: &'a [u8],
    /// A pre-0.12 object's flatmap (a v4 state's `attributes_flat`),
    /// verbatim, sent as RawState.flatmap in place of the JSON.
    pub raw_state_flatmap: Option<&'a std::collections::BTreeMap<String, String>>,
}

#[derive(Clone, Debug)]
pub struct UpgradeResponse {
    /// Of the resource's implied type (null when the provider failed).
    pub upgraded_state: Value,
    pub diagnostics: Diagnostics,
}

/// ReadResource input.
#[derive(Clone, Debug)]
pub struct ReadRequest<'a> {
    pub type_name: &'a str,
    pub prior_state: &'a Value,
    pub private: &'a [u8],
    /// The module's provider_meta, or `None`.
    pub provider_meta: Option<&'a Value>,
}

#[derive(Clone, Debug)]
pub struct ReadResponse {
    /// Null when the remote object is gone.
    pub new_state: Value,
    pub private: Vec<u8>,
    pub deferred: Option<DeferredReason>,
    pub diagnostics: Diagnostics,
}

/// PlanResourceChange input. For a destroy, `proposed_new_state` and
/// `config` are nulls.
#[derive(Clone, Debug)]
pub struct PlanRequest<'a> {
    pub type_name: &'a str,
    pub prior_state: &'a Value,
    pub proposed_new_state: &'a Value,
    pub config: &'a Value,
    pub prior_private: &'a [u8],
    pub provider_meta: Option<&'a Value>,
}

#[derive(Clone, Debug)]
pub struct PlanResponse {
    pub planned_state: Value,
    /// Paths whose change forces replacement (unfiltered: the walk keeps
    /// only those whose value actually changed).
    pub requires_replace: Vec<Path>,
    pub planned_private: Vec<u8>,
    /// Set only by the legacy SDK: contract violations become warnings.
    pub legacy_type_system: bool,
    pub deferred: Option<DeferredReason>,
    pub diagnostics: Diagnostics,
}

/// ApplyResourceChange input. For a destroy, `planned_state` and `config`
/// are nulls.
#[derive(Clone, Debug)]
pub struct ApplyRequest<'a> {
    pub type_name: &'a str,
    pub prior_state: &'a Value,
    pub planned_state: &'a Value,
    pub config: &'a Value,
    pub planned_private: &'a [u8],
    pub provider_meta: Option<&'a Value>,
}

#[derive(Clone, Debug)]
pub struct ApplyResponse {
    pub new_state: Value,
    pub private: Vec<u8>,
    pub legacy_type_system: bool,
    pub diagnostics: Diagnostics,
}

/// One object ImportResourceState returned.
#[derive(Clone, Debug)]
pub struct ImportedResource {
    pub type_name: String,
    pub state: Value,
    pub private: Vec<u8>,
}

#[derive(Clone, Debug)]
pub struct ImportResponse {
    pub imported: Vec<ImportedResource>,
    pub deferred: Option<DeferredReason>,
    pub diagnostics: Diagnostics,
}

/// ReadDataSource input.
#[derive(Clone, Debug)]
pub struct ReadDataRequest<'a> {
    pub type_name: &'a str,
    pub config: &'a Value,
    pub provider_meta: Option<&'a Value>,
}

#[derive(Clone, Debug)]
pub struct ReadDataResponse {
    pub state: Value,
    pub deferred: Option<DeferredReason>,
    pub diagnostics: Diagnostics,
}

/// OpenEphemeralResource's answer.
#[derive(Clone, Debug)]
pub struct OpenEphemeralResponse {
    /// Of the ephemeral resource type's implied type.
    pub result: Value,
    pub private: Vec<u8>,
    /// When to renew it while it is still held.
    pub renew_at: Option<std::time::SystemTime>,
    pub deferred: Option<DeferredReason>,
    pub diagnostics: Diagnostics,
}

/// RenewEphemeralResource's answer.
#[derive(Clone, Debug)]
pub struct RenewEphemeralResponse {
    pub private: Vec<u8>,
    pub renew_at: Option<std::time::SystemTime>,
    pub diagnostics: Diagnostics,
}

/// A provider-defined function refused its arguments.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{text}")]
pub struct FunctionError {
    pub text: String,
    /// The index of the argument at fault, if one is.
    pub argument: Option<i64>,
}

/// Which schema a type name was looked up in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchemaKind {
    Resource,
    DataSource,
    EphemeralResource,
    Function,
}

impl fmt::Display for SchemaKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SchemaKind::Resource => "resource type",
            SchemaKind::DataSource => "data source",
            SchemaKind::EphemeralResource => "ephemeral resource type",
            SchemaKind::Function => "function",
        })
    }
}

/// A machine failure talking to a provider: never a user mistake, always
/// naming the provider and the protocol operation.
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    #[error("The plugin for {provider} crashed during {operation}: {detail}. The plugin's error output above may contain more details.")]
    Crashed {
        provider: String,
        operation: &'static str,
        detail: String,
    },
    #[error("The plugin for {provider} failed {operation}: {status}")]
    Rpc {
        provider: String,
        operation: &'static str,
        status: String,
    },
    #[error("The provider {provider} returned an invalid response to {operation}: {detail}. This is a bug in the provider.")]
    InvalidResponse {
        provider: String,
        operation: &'static str,
        detail: String,
    },
    #[error("Cannot send a value to {provider} for {operation}: {detail}")]
    Encode {
        provider: String,
        operation: &'static str,
        detail: String,
    },
    #[error("The provider {provider} has no {kind} named {name:?}")]
    UnknownType {
        provider: String,
        kind: SchemaKind,
        name: String,
    },
    #[error("The provider {provider} was already shut down when {operation} was called")]
    Closed {
        provider: String,
        operation: &'static str,
    },
    #[error("Failed to start the plugin for {provider}: {source}")]
    Launch {
        provider: String,
        source: terrane_plugin::LaunchError,
    },
    #[error("The provider {provider} was not installed for this run (it is not in required_providers, or discovery did not run)")]
    NotRegistered { provider: String },
}

impl ProviderError {
    /// The protocol operation that failed, where there is one.
    pub fn operation(&self) -> Option<&'static str> {
        match self {
            ProviderError::Crashed { operation, .. }
            | ProviderError::Rpc { operation, .. }
            | ProviderError::InvalidResponse { operation, .. }
            | ProviderError::Encode { operation, .. }
            | ProviderError::Closed { operation, .. } => Some(operation),
            ProviderError::UnknownType { .. }
            | ProviderError::Launch { .. }
            | ProviderError::NotRegistered { .. } => None,
        }
    }
}
