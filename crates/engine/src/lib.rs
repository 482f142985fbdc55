//! terrane-engine: what runs a configuration against providers.
//!
//! The provider host ([`provider`]): one async trait,
//! [`provider::Provider`], whose methods are the resource lifecycle
//! operations in terrane-value types; the built-in providers (random,
//! local, time, terraform_data) served in-process and any other provider
//! launched as a plugin over tfplugin6, behind that same trait; provider
//! discovery (CLI config, plugin directory, dependency lock file); and the
//! per-run [`provider::ProviderHost`] with its schema cache. On it: the
//! configuration graph ([`graph`]), the values a walk computes
//! ([`values`]), body decoding ([`decode`]), the walks ([`walk`],
//! [`plan_node`], [`apply_node`]) with the provider contract enforced
//! ([`checks`]), and the entry points ([`Engine`]).
//!
//! Architecture invariant: protobuf types appear only under
//! `provider::grpc`; everything else speaks terrane-value and
//! terrane-schema. Machine failures are typed errors naming the provider
//! and the operation, never panics.

pub mod apply_node;
pub mod checks;
pub mod conditions;
pub mod decide;
pub mod decode;
pub mod graph;
pub mod model;
pub mod plan_node;
pub mod provider;
pub mod run;
pub mod schedule;
pub mod values;
pub mod walk;

pub use model::{Action, Change, OutputChange, Plan, PlanMode};
pub use run::{ApplyResult, Engine};
pub use walk::Options;

/// The Terraform CLI version terrane presents to providers and writes to
/// state: the protocol level it is compatible with.
pub const TERRAFORM_VERSION: &str = terrane_state::TERRAFORM_VERSION;
