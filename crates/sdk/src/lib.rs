//! terrane-sdk: write Terraform providers in Rust.
//!
//! A provider implements [`Provider`] and lists [`ResourceType`]s (schema
//! and shared state) that make fresh [`Resource`] instances per call, and
//! [`DataSourceType`]s. Schemas are written with the framework's [`Attr`]
//! builder, which carries the behaviour authors should not hand-write:
//! defaults, "requires replace", "use state for unknown", [`validate`]
//! checks, and the plan logic of [`plan`]. [`serve`] runs the provider as a
//! plugin that Terraform, OpenTofu and terrane launch over tfplugin6.
//!
//! Architecture invariant: the SDK depends on value, schema, tfplugin6 and
//! plugin only — never on configuration, evaluation, state or the engine.
//! Protobuf types stay in `server` and `wire`.

mod diag;
mod function;
pub mod log;
pub mod model;
pub mod plan;
mod provider;
mod schema;
mod server;
pub mod testing;
pub mod validate;
mod wire;

pub use diag::{DiagId, Diagnostic, Diagnostics, Severity};
pub use function::{Function, FunctionError, Param};
pub use model::{Known, Model};
pub use provider::{
    Applied, Ctx, DataSource, DataSourceType, PlanState, Provider, ProviderData, Resource,
    ResourceType, ResourceTypeOf, SimpleDataSource, SimpleResource,
};
pub use schema::{Attr, ResourceSchema};
pub use server::ProviderServer;
pub use terrane_sdk_derive::Model;
pub use terrane_value::{Path, Type, Value};

/// Serves `provider` as a plugin for the source address
/// `registry.terraform.io/<namespace>/<type name>` and exits when
/// Terraform is done with it.
pub fn serve<P: Provider>(namespace: &str, provider: P) -> ! {
    let address = format!("registry.terraform.io/{namespace}/{}", provider.type_name());
    log::enable();
    terrane_plugin::serve_main(
        ProviderServer::new(provider),
        terrane_plugin::ServeOptions::new(address),
    )
}

/// Builds a new object from `v` with attribute `name` set to `value`.
pub fn with_attr(v: &Value, name: &str, value: Value) -> Value {
    let mut m = v.entries().map(|e| (*e).clone()).unwrap_or_default();
    m.insert(name.to_string(), value);
    Value::object(m)
}

/// The imported state for resources whose ID is simply their `id_attr`
/// attribute: every other attribute null, to be filled in by the read that
/// follows an import.
pub fn import_passthrough(schema: &ResourceSchema, id_attr: &str, id: &str) -> Value {
    let block = schema.block_schema();
    let mut m = block
        .empty_value()
        .entries()
        .map(|e| (*e).clone())
        .unwrap_or_default();
    m.insert(id_attr.to_string(), Value::string(id));
    Value::object_typed(&block.implied_type(), m)
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
