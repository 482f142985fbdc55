//! terrane-pulumirpc: the wire types of Pulumi's provider plugin protocol
//! (`pulumirpc`), generated from terrane's own `proto/pulumirpc.proto`, with
//! tonic clients and servers, and the two things both of terrane's Pulumi
//! sides share: the engine hosting Pulumi resource plugins and the SDK
//! serving terrane providers to Pulumi.
//!
//! * [`naming`]: Pulumi tokens and property names ⇄ HCL resource types and
//!   attribute names (`echo:index:Item` → `echo_item`, `fooBar` → `foo_bar`).
//! * [`codec`]: terrane [`Value`](terrane_value::Value)s ⇄
//!   `google.protobuf.Struct`/`Value`, with Pulumi's unknowns, secrets,
//!   assets, archives, resource references and output values.
//!
//! Architecture invariant: protobuf types are used only here and in the
//! two Pulumi sides (engine host, SDK server); everything else speaks
//! terrane-value.

#[allow(clippy::all, missing_docs, unreachable_pub)]
pub mod pulumirpc {
    tonic::include_proto!("pulumirpc");
}

pub mod codec;
pub mod naming;
mod tarhash;
mod uri;

pub use codec::{CodecError, EncodeOptions, Fetched, Shape};
pub use naming::{NameError, NameMap};
