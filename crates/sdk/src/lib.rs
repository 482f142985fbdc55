//! Write Terraform providers in Rust.
//!
//! terrane-sdk turns a few traits into a plugin that Terraform, OpenTofu
//! and terrane launch and speak tfplugin6 to. This page is the manual; the
//! guide `docs/provider-authors.md` in the repository walks through a whole
//! provider.
//!
//! # Depending on the SDK
//!
//! ```toml
//! [dependencies]
//! terrane-sdk = { git = "https://github.com/terrane/terrane" }   # or a path
//! ```
//!
//! Nothing else is needed: the SDK re-exports [`async_trait`](macro@async_trait),
//! the value types ([`Value`], [`Type`], [`Path`]) and value constructors
//! ([`values`]), and validators ([`validate`], including
//! [`validate::Pattern`] for regular expressions). [`serve`] starts its own
//! tokio runtime; tests with [`testing::Harness`] run on any tokio runtime
//! (`#[tokio::test]`, current-thread is enough).
//!
//! # The pieces
//!
//! * A [`Provider`] names itself, declares its configuration [`Schema`],
//!   turns that configuration into its typed [`Provider::Data`] in
//!   [`configure`](Provider::configure), and lists its resource and data
//!   source types.
//! * A [`ResourceType`] declares a schema and makes a fresh [`Resource`] per
//!   call, handing it the provider's data; [`ResourceTypeOf`] is that type
//!   in one line. [`DataSourceType`], [`DataSourceTypeOf`] and
//!   [`DataSource`] are the same for data sources. [`SimpleResource`] and
//!   [`SimpleDataSource`] serve providers without configuration.
//! * Schemas are written with [`Attr`], which carries the behaviour authors
//!   should not hand-write: defaults, "requires replace", "use state for
//!   unknown", [`validate`] checks, and the plan logic of [`plan`].
//! * `#[derive(Model)]` maps a struct onto an object value ([`model`]).
//! * Errors are [`Diagnostics`], attached to an attribute's [`Path`] when
//!   they concern one, so Terraform points at the configuration line.
//!
//! # A whole provider
//!
//! ```no_run
//! use std::sync::Arc;
//! use terrane_sdk::{async_trait, Applied, Attr, Ctx, Diagnostics, Provider, Resource,
//!     ResourceType, Schema, SimpleResource, Value};
//!
//! struct Echo;
//!
//! #[async_trait]
//! impl Provider for Echo {
//!     type Data = ();
//!     fn type_name(&self) -> &str { "echo" }
//!     fn version(&self) -> &str { "0.1.0" }
//!     fn resources(&self) -> Vec<Arc<dyn ResourceType<()>>> {
//!         vec![Arc::new(SimpleResource { name: "echo_text", schema, resource: Text })]
//!     }
//! }
//!
//! fn schema() -> Schema {
//!     Schema::new(0)
//!         .attr("text", Attr::string().required())
//!         .attr("id", Attr::string().computed().use_state_for_unknown())
//! }
//!
//! #[derive(Clone)]
//! struct Text;
//!
//! #[async_trait]
//! impl Resource for Text {
//!     async fn create(&self, _: &Ctx, planned: &Value, _: &Value) -> Result<Applied, Diagnostics> {
//!         Ok(Applied::new(terrane_sdk::with_attr(planned, "id", Value::string("echo"))))
//!     }
//!     async fn read(&self, _: &Ctx, state: &Value, _: &[u8]) -> Result<Option<Applied>, Diagnostics> {
//!         Ok(Some(Applied::new(state.clone())))
//!     }
//!     async fn update(&self, _: &Ctx, _: &Value, planned: &Value, _: &Value) -> Result<Applied, Diagnostics> {
//!         Ok(Applied::new(planned.clone()))
//!     }
//!     async fn delete(&self, _: &Ctx, _: &Value) -> Result<(), Diagnostics> {
//!         Ok(())
//!     }
//! }
//!
//! fn main() {
//!     terrane_sdk::serve("example", Echo)
//! }
//! ```
//!
//! Build it as `terraform-provider-echo` and point Terraform at it with a
//! `dev_overrides` block for `registry.terraform.io/example/echo`.
//!
//! # Architecture invariant
//!
//! The SDK depends on value, schema, tfplugin6, pulumirpc and plugin only,
//! never on configuration, evaluation, state or the engine. Protobuf types
//! stay in the server, wire and pulumi modules.
//!
//! # Under Pulumi
//!
//! The same binary is a Pulumi resource plugin: launched by Pulumi's
//! engine (no go-plugin cookie, the engine address as the last argument),
//! [`serve`] serves `pulumirpc.ResourceProvider` instead ([`pulumi`];
//! `docs/pulumi-sdk.md` in the repository).
#![warn(missing_docs)]

mod ctx;
mod diag;
mod ephemeral;
mod function;
pub mod log;
pub mod model;
pub mod plan;
mod provider;
pub mod pulumi;
mod schema;
mod server;
pub mod testing;
pub mod validate;
mod wire;

pub use diag::{DiagId, Diagnostic, Diagnostics, Severity};
pub use ephemeral::{EphemeralResource, EphemeralResourceType, Opened, Renewed, SimpleEphemeral};
pub use function::{Function, FunctionError, Param};
pub use model::{Known, Model};
pub use provider::{
    configured, Applied, Ctx, DataSource, DataSourceType, DataSourceTypeOf, PlanState, Provider,
    Resource, ResourceType, ResourceTypeOf, SimpleDataSource, SimpleResource,
};
pub use schema::{Attr, ResourceSchema};
/// The schema of a provider configuration, a resource or a data source
/// (the same builder serves all three; `ResourceSchema` is its older name).
pub type Schema = ResourceSchema;
pub use async_trait::async_trait;
pub use serde_json;

/// `Result` with [`Diagnostics`] as the error: what every trait method of
/// the SDK returns. `Result<T, E>` with another error still works.
pub type Result<T, E = Diagnostics> = std::result::Result<T, E>;
pub use server::ProviderServer;
pub use terrane_sdk_derive::Model;
pub use terrane_value::{Kind, Number, Path, Step, Type, Value};
pub mod values;

/// Serves `provider` as a plugin for the source address
/// `registry.terraform.io/<namespace>/<type name>` and exits when
/// Terraform is done with it. It builds its own multi-threaded tokio
/// runtime: call it from a plain `fn main`, not from `#[tokio::main]`.
///
/// Launched by Pulumi instead (no go-plugin cookie, the engine address as
/// the last argument), it serves Pulumi's `ResourceProvider` protocol
/// ([`pulumi`]): the same provider, no extra code.
pub fn serve<P: Provider>(namespace: &str, provider: P) -> ! {
    if let Some(engine) = pulumi::engine_address() {
        log::enable();
        pulumi::serve_main(provider, engine)
    }
    let address = format!("registry.terraform.io/{namespace}/{}", provider.type_name());
    log::enable();
    terrane_plugin::serve_main(
        ProviderServer::new(provider),
        terrane_plugin::ServeOptions::new(address),
    )
}

/// Builds a new object from `v` with attribute `name` set to `value`.
///
/// ```
/// use terrane_sdk::{values, with_attr, Value};
/// let v = values::object([("a", Value::string("x"))]);
/// let w = with_attr(&v, "a", Value::string("y"));
/// assert_eq!(terrane_sdk::str_attr(&w, "a").as_deref(), Some("y"));
/// ```
pub fn with_attr(v: &Value, name: &str, value: Value) -> Value {
    let mut out = v.clone();
    out.set_attr(name, value);
    out
}

/// The imported state for resources whose ID is simply their `id_attr`
/// attribute: every other attribute null, to be filled in by the read that
/// follows an import. That read must therefore rebuild the whole object
/// from the remote system, not decode the state into a model whose fields
/// are required.
///
/// ```
/// use terrane_sdk::{import_passthrough, str_attr, Attr, Schema};
/// let s = Schema::new(0)
///     .attr("key", Attr::string().required())
///     .attr("value", Attr::string().required());
/// let v = import_passthrough(&s, "key", "colour");
/// assert_eq!(str_attr(&v, "key").as_deref(), Some("colour"));
/// assert!(v.get_attr("value").unwrap().is_null());
/// ```
pub fn import_passthrough(schema: &ResourceSchema, id_attr: &str, id: &str) -> Value {
    let block = schema.block_schema();
    let mut m = block
        .empty_value()
        .entries()
        .map(|e| (*e).clone())
        .unwrap_or_default();
    m.insert(id_attr.to_string(), Value::string(id));
    Value::object_typed_of(&block.implied_type(), m)
}

/// The default an attribute was declared with, if any.
pub fn default_of(a: &Attr) -> Option<Value> {
    a.default.clone()
}

/// Attribute `name` of an object as a string, if known and set.
pub fn str_attr(v: &Value, name: &str) -> Option<String> {
    v.get_attr(name)
        .and_then(|a| a.as_str())
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn import_passthrough_sets_only_the_id() {
        let s = ResourceSchema::new(0)
            .attr("id", Attr::string().computed())
            .attr("name", Attr::string().optional());
        let v = import_passthrough(&s, "id", "abc-123");
        assert_eq!(str_attr(&v, "id").as_deref(), Some("abc-123"));
        assert!(v.get_attr("name").is_some_and(Value::is_null));
        assert!(v.ty().conforms_to(&s.block_schema().implied_type()));
    }
}
