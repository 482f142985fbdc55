//! The traits a provider author implements.
//!
//! Following the instantiation seed, resource *types* are separate from
//! resource *instances*: a [`ResourceType`] declares the schema and holds
//! what all instances share (a client, a request limiter), and makes a
//! fresh [`Resource`] for every call with the data the provider's
//! `configure` produced. [`SimpleResource`] lets a small provider ignore
//! the split. Schemas are methods that can fail with diagnostics.

use crate::diag::Diagnostics;
use crate::schema::ResourceSchema;
use async_trait::async_trait;
use std::any::Any;
use std::sync::Arc;
use terrane_value::Value;
use tokio_util::sync::CancellationToken;

/// What `configure` hands to resource types: anything shareable.
pub type ProviderData = Arc<dyn Any + Send + Sync>;

/// Per-call context: cancelled when Terraform stops the provider.
#[derive(Clone, Default)]
pub struct Ctx {
    pub cancel: CancellationToken,
}

/// A provider.
#[async_trait]
pub trait Provider: Send + Sync + 'static {
    /// The provider's type name, e.g. `random`.
    fn type_name(&self) -> &str;
    fn version(&self) -> &str;
    /// The provider configuration schema (empty by default).
    fn schema(&self) -> Result<ResourceSchema, Diagnostics> {
        Ok(ResourceSchema::new(0))
    }
    /// Receives the provider configuration (during plan it may hold
    /// unknown values) and returns data shared with all resources.
    async fn configure(
        &self,
        _ctx: &Ctx,
        _config: &Value,
    ) -> Result<Option<ProviderData>, Diagnostics> {
        Ok(None)
    }
    fn resources(&self) -> Vec<Arc<dyn ResourceType>>;
    fn data_sources(&self) -> Vec<Arc<dyn DataSourceType>> {
        Vec::new()
    }
    /// Provider-defined functions.
    fn functions(&self) -> Vec<Arc<dyn crate::function::Function>> {
        Vec::new()
    }
}

/// A resource type: schema and shared state.
pub trait ResourceType: Send + Sync {
    /// Full type name, e.g. `random_id`.
    fn name(&self) -> &str;
    fn schema(&self) -> Result<ResourceSchema, Diagnostics>;
    /// A fresh instance for one call.
    fn instance(&self, data: Option<ProviderData>) -> Box<dyn Resource>;
}

/// The common resource type of a provider with configuration: a fixed
/// name, a schema built by a function, and instances made from the data
/// `configure` produced (the configured counterpart of [`SimpleResource`]).
/// Declared as a constant next to the resource:
/// `pub(crate) const ROLE: ResourceTypeOf<Role> = ResourceTypeOf::new("x_role", role_schema, |data| Role { data });`
pub struct ResourceTypeOf<R> {
    name: &'static str,
    schema: fn() -> ResourceSchema,
    make: fn(Option<ProviderData>) -> R,
}

impl<R> ResourceTypeOf<R> {
    pub const fn new(
        name: &'static str,
        schema: fn() -> ResourceSchema,
        make: fn(Option<ProviderData>) -> R,
    ) -> ResourceTypeOf<R> {
        ResourceTypeOf { name, schema, make }
    }
}

impl<R: Resource + 'static> ResourceType for ResourceTypeOf<R> {
    fn name(&self) -> &str {
        self.name
    }
    fn schema(&self) -> Result<ResourceSchema, Diagnostics> {
        Ok((self.schema)())
    }
    fn instance(&self, data: Option<ProviderData>) -> Box<dyn Resource> {
        Box::new((self.make)(data))
    }
}

/// What create and update return.
#[derive(Clone, Debug)]
pub struct Applied {
    /// The new state, wholly known.
    pub state: Value,
    /// Provider-private bytes kept with the state.
    pub private: Vec<u8>,
}

impl Applied {
    pub fn new(state: Value) -> Applied {
        Applied {
            state,
            private: Vec::new(),
        }
    }
}

/// A plan being made; `modify_plan` may change `planned` and
/// `requires_replace`.
pub struct PlanState {
    pub prior: Value,
    pub config: Value,
    pub planned: Value,
    pub requires_replace: Vec<terrane_value::Path>,
}

/// One resource instance's lifecycle operations.
#[async_trait]
pub trait Resource: Send + Sync {
    async fn create(
        &self,
        ctx: &Ctx,
        planned: &Value,
        config: &Value,
    ) -> Result<Applied, Diagnostics>;
    /// The remote object as it is now; `None` when it no longer exists.
    async fn read(
        &self,
        ctx: &Ctx,
        state: &Value,
        private: &[u8],
    ) -> Result<Option<Applied>, Diagnostics>;
    async fn update(
        &self,
        ctx: &Ctx,
        prior: &Value,
        planned: &Value,
        config: &Value,
    ) -> Result<Applied, Diagnostics>;
    async fn delete(&self, ctx: &Ctx, prior: &Value) -> Result<(), Diagnostics>;
    /// Extra configuration checks beyond the schema's validators.
    async fn validate(&self, _config: &Value) -> Diagnostics {
        Diagnostics::new()
    }
    /// Last word on a plan after the framework's plan logic.
    async fn modify_plan(&self, _ctx: &Ctx, _plan: &mut PlanState) -> Diagnostics {
        Diagnostics::new()
    }
    /// The state of an existing object named by `id`.
    async fn import(&self, _ctx: &Ctx, _id: &str) -> Result<Value, Diagnostics> {
        Err(Diagnostics::error(
            "Resource Import Not Implemented",
            "This resource does not support import.",
        ))
    }
    /// Upgrades state JSON written under schema `version` to the current
    /// schema's JSON.
    fn upgrade_state(
        &self,
        version: i64,
        _json: serde_json::Value,
    ) -> Result<serde_json::Value, Diagnostics> {
        Err(Diagnostics::error(
            "Unable to Upgrade Resource State",
            format!("This resource has no state upgrader from schema version {version}."),
        ))
    }
}

/// A data source type.
pub trait DataSourceType: Send + Sync {
    fn name(&self) -> &str;
    fn schema(&self) -> Result<ResourceSchema, Diagnostics>;
    fn instance(&self, data: Option<ProviderData>) -> Box<dyn DataSource>;
}

/// Reading a data source.
#[async_trait]
pub trait DataSource: Send + Sync {
    async fn read(&self, ctx: &Ctx, config: &Value) -> Result<Value, Diagnostics>;
}

/// A resource type for providers that need no type/instance split: the
/// same value serves every call.
pub struct SimpleResource<R> {
    pub name: &'static str,
    pub schema: fn() -> ResourceSchema,
    pub resource: R,
}

impl<R: Resource + Clone + 'static> ResourceType for SimpleResource<R> {
    fn name(&self) -> &str {
        self.name
    }
    fn schema(&self) -> Result<ResourceSchema, Diagnostics> {
        Ok((self.schema)())
    }
    fn instance(&self, _data: Option<ProviderData>) -> Box<dyn Resource> {
        Box::new(self.resource.clone())
    }
}

/// The data-source counterpart of [`SimpleResource`].
pub struct SimpleDataSource<D> {
    pub name: &'static str,
    pub schema: fn() -> ResourceSchema,
    pub source: D,
}

impl<D: DataSource + Clone + 'static> DataSourceType for SimpleDataSource<D> {
    fn name(&self) -> &str {
        self.name
    }
    fn schema(&self) -> Result<ResourceSchema, Diagnostics> {
        Ok((self.schema)())
    }
    fn instance(&self, _data: Option<ProviderData>) -> Box<dyn DataSource> {
        Box::new(self.source.clone())
    }
}
