//! terrane-engine: what runs a configuration against providers.
//!
//! The provider host ([`provider`]): one async trait,
//! [`provider::Provider`], whose methods are the resource lifecycle
//! operations in terrane-value types; the built-in providers (random,
//! local, time, terraform_data) served in-process and any other provider
//! launched as a plugin over tfplugin6, behind that same trait; provider
//! discovery (CLI config, plugin directory, dependency lock file); and the
//! per-run [`provider::ProviderHost`] with its schema cache. On it, a
//! one-way stack (each layer imports only the layers below it; see
//! docs/architecture.md): the graph, values and model at the bottom; one
//! scheduler; the provider contract checks, body decoding, persistence
//! and the pure planning decisions; the walk's shared context;
//! conditions; a resource's instances; the other nodes; the phase drivers
//! (plan, apply); and the entry points ([`Engine`]).
//!
//! Architecture invariant: protobuf types appear only under
//! `provider::grpc`; everything else speaks terrane-value and
//! terrane-schema. Machine failures are typed errors naming the provider
//! and the operation, never panics.

mod apply;
mod checks;
mod conditions;
mod decide;
mod decode;
mod defer;
mod duration;
mod ephemeral;
mod expand;
mod graph;
mod instance;
mod model;
mod module_override;
mod nodes;
mod output_type;
mod persist;
mod plan;
pub mod provider;
mod provider_each;
mod provision;
/// Go's duration syntax (`5m`, `1m30s`, `500ms`), as Terraform reads
/// timeouts: provisioner connections, `-lock-timeout`, backend settings.
pub use duration::go_duration;
mod run;
mod schedule;
mod spread;
mod sync;
mod values;
mod walk;

// The engine's surface: the entry points and their settings, the plan
// model, the progress events, the configuration graph for `graph`, and
// the addresses the CLI prints. The provider host ([`provider`]) is a
// public module of its own: plugins and tests speak its trait.
pub use defer::{DeferReason, Deferred};
pub use graph::{build as build_graph, default_provider_name, resource_provider, to_dot, Graph};
pub use model::{
    closure_dependencies, config_addr, set_closure_dependencies, with_closure_dependencies, Action,
    Change, DependencyClosure, OutputChange, Plan, PlanMode, Reason,
};
pub use run::{ApplyResult, Engine, Evaluation};
pub use walk::{object_id, EngineCore, Event, EventSink, Options};

/// The Terraform CLI version terrane presents to providers and writes to
/// state: the protocol level it is compatible with.
pub const TERRAFORM_VERSION: &str = terrane_state::TERRAFORM_VERSION;
