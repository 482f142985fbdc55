//! terrane-engine: what runs a configuration against providers.
//!
//! So far it holds the provider host ([`provider`]): one async trait,
//! [`provider::Provider`], whose methods are the resource lifecycle
//! operations in terrane-value types; the built-in providers (random,
//! local, time, terraform_data) served in-process and any other provider
//! launched as a plugin over tfplugin6, behind that same trait; provider
//! discovery (CLI config, plugin directory, dependency lock file); and the
//! per-run [`provider::ProviderHost`] with its schema cache. The graph and
//! the validate/plan/apply walks build on it.
//!
//! Architecture invariant: protobuf types appear only under
//! `provider::grpc`; everything else speaks terrane-value and
//! terrane-schema. Machine failures are typed errors naming the provider
//! and the operation, never panics.

pub mod provider;
