//! terrane-plugin: the go-plugin transport exactly as Terraform uses it, so
//! that a provider served by terrane runs under Terraform and OpenTofu.
//!
//! * [`handshake`]: magic cookie, version negotiation, the handshake line.
//! * [`cert`]: AutoMTLS throwaway certificates and pinned verifiers.
//! * [`serve`]/[`serve_main`]: the plugin side (used by the SDK).
//! * [`launch`]: the client side (used by the engine): start a plugin
//!   binary, check its handshake, connect with pinned mutual TLS.
//! * `body`: a message body read straight from its h2 stream (both
//!   ends run HTTP/2 on h2 directly, without hyper).
//! * `coalesce`: the client collects the writes of one scheduler round
//!   into one socket write.
//! * [`unary`]: a unary call on a [`Conn`] without tonic's client.
//! * [`launch_pulumi`]: a Pulumi resource plugin (engine address argument,
//!   port on stdout, plaintext gRPC, SIGINT then kill).
//! * [`process`]: plugin processes die with the engine (death signal from a
//!   long-lived launcher thread, own process group) and never see
//!   terrane's secrets ([`withhold_env`]).
//!
//! Architecture invariant: the only crate besides tfplugin6, the SDK's
//! server module and the engine's plugin client that sees protobuf types;
//! it knows nothing about schemas or values.

mod body;
pub mod cert;
mod client;
mod coalesce;
pub mod handshake;
pub mod process;
mod pulumi;
mod server;
pub mod spin;
pub mod unary;

pub use client::{
    launch, log_warn, Conn, LaunchError, LaunchOptions, PluginClient, MAX_HANDSHAKE_LINE,
};
pub use process::{withheld_env, withhold_env, SECRET_ENV};
pub use pulumi::{launch_pulumi, parse_port, PulumiLaunch, PulumiPlugin};
pub use server::{
    serve, serve_main, ServeError, ServeOptions, MAX_MESSAGE_SIZE, PROTOCOL_ENV, SUPPORTED,
};
