//! The provider host: every provider, built-in or plugin, behind one
//! lifecycle trait.
//!
//! * [`api`]: the [`Provider`] trait and its terrane-value request and
//!   response types, diagnostics and the typed [`ProviderError`].
//! * [`grpc`]: the only protobuf-speaking part of the engine: the value
//!   layer over tfplugin6 messages and its two transports (an in-process
//!   SDK server, a plugin process).
//! * [`builtin`]: the in-process providers the embedding program registers.
//! * [`addr`]: source addresses and provider configuration keys.
//! * [`discovery`]: CLI config, plugin directory, lock file, versions.
//! * [`host`]: the per-run host (schema cache, one instance per alias).
//! * [`pulumi`]: Pulumi resource plugins (`source = "pulumi/<pkg>"`).
//! * [`mock`]: `terrane test`'s mocked providers and overridden resources.

pub mod addr;
pub mod api;
pub mod builtin;
pub mod discovery;
pub mod grpc;
pub mod host;
pub mod mock;
pub mod pulumi;

pub use addr::{ProviderAddr, ProviderConfigKey};
pub use api::*;
pub use builtin::{Builtin, Builtins};
pub use discovery::{Discovery, DiscoveryError, ProviderSource};
pub use grpc::ClientCapabilities;
pub use host::{HostOptions, ProviderHost};
pub use pulumi::UriFetcher;
