//! terrane-tfplugin5: the wire types of Terraform's provider protocol 5,
//! generated from terrane's own `proto/tfplugin5.proto`, with tonic clients
//! and servers, and [`v6`]: the one mapping between protocol 5 and
//! protocol 6 messages that the engine's plugin client (a protocol-5 plugin
//! behind the protocol-6 calls) and the SDK's server (a protocol-6 provider
//! served as protocol 5) both use.
//!
//! Architecture invariant: protobuf types are used only here, in
//! terrane-tfplugin6, the plugin transport, the SDK's server module and
//! the engine's plugin client; everything else speaks terrane-value.

#[allow(clippy::all, missing_docs, unreachable_pub)]
pub mod tfplugin5 {
    tonic::include_proto!("tfplugin5");
}

pub mod v6;

/// The protocol version this definition implements.
pub const PROTOCOL_VERSION: &str = "5.10";
