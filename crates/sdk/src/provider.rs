//! The traits a provider author implements.
//!
//! Resource *types* are separate from resource *instances*: a
//! [`ResourceType`] declares the schema and holds what all instances share
//! (a client, a request limiter), and makes a fresh [`Resource`] for every
//! call with the data the provider's `configure` produced. That data is
//! typed: it is the provider's [`Provider::Data`], handed over as
//! `Option<Arc<Provider::Data>>` (no `Any`, no downcast).
//! [`ResourceTypeOf`] and [`DataSourceTypeOf`] are the one-line types of a
//! provider with configuration; [`SimpleResource`] and [`SimpleDataSource`]
//! serve providers that need none. Schemas are methods that can fail with
//! diagnostics.

pub use crate::ctx::Ctx;
use crate::diag::Diagnostics;
use crate::schema::ResourceSchema;
use async_trait::async_trait;
use std::sync::Arc;
use terrane_value::Value;

/// The data `configure` produced, or an error diagnostic saying the
/// provider is not configured yet (its configuration held values known only
/// after apply, so `configure` returned `None`).
///
/// ```
/// use std::sync::Arc;
/// let data: Option<Arc<String>> = Some(Arc::new("/tmp/kv.json".into()));
/// assert_eq!(terrane_sdk::configured(&data).unwrap(), "/tmp/kv.json");
/// let none: Option<Arc<String>> = None;
/// assert!(terrane_sdk::configured(&none).is_err());
/// ```
pub fn configured<D>(data: &Option<Arc<D>>) -> Result<&D, Diagnostics> {
    data.as_deref().ok_or_else(|| {
        Diagnostics::error(
            "Provider Not Configured",
            "The provider has no configuration yet: its configuration depends on values \
             known only after apply. Apply the resources it depends on first.",
        )
    })
}

/// A provider: its name, its configuration and what it manages.
///
/// `Data` is what [`configure`](Provider::configure) produces from the
/// provider block (a client, a path, a connection pool); every resource and
/// data-source instance receives it as `Option<Arc<Data>>`. A provider
/// without configuration uses `()`.
///
/// ```
/// use std::sync::Arc;
/// use terrane_sdk::{async_trait, DataSourceType, Provider, ResourceType};
///
/// struct Empty;
///
/// #[async_trait]
/// impl Provider for Empty {
///     type Data = ();
///     fn type_name(&self) -> &str {
///         "empty"
///     }
///     fn version(&self) -> &str {
///         "0.1.0"
///     }
///     fn resources(&self) -> Vec<Arc<dyn ResourceType<()>>> {
///         Vec::new()
///     }
/// }
/// # let _ = Empty;
/// ```
#[async_trait]
pub trait Provider: Send + Sync + 'static {
    /// What `configure` hands to every resource and data-source instance.
    type Data: Send + Sync + 'static;
    /// The provider's type name, e.g. `random`.
    fn type_name(&self) -> &str;
    /// The provider's version, shown in logs (usually
    /// `env!("CARGO_PKG_VERSION")`).
    fn version(&self) -> &str;
    /// The provider configuration schema (empty by default).
    fn schema(&self) -> Result<ResourceSchema, Diagnostics> {
        Ok(ResourceSchema::new(0))
    }
    /// Receives the provider configuration, already checked against
    /// [`schema`](Provider::schema) and its validators, and returns the data
    /// shared with all instances. During plan the configuration may hold
    /// unknown values; return `Ok(None)` then, and instances receive `None`
    /// (see [`configured`](crate::configured)).
    async fn configure(
        &self,
        _ctx: &Ctx,
        _config: &Value,
    ) -> Result<Option<Self::Data>, Diagnostics> {
        Ok(None)
    }
    /// The managed resource types.
    fn resources(&self) -> Vec<Arc<dyn ResourceType<Self::Data>>>;
    /// The data source types (none by default).
    fn data_sources(&self) -> Vec<Arc<dyn DataSourceType<Self::Data>>> {
        Vec::new()
    }
    /// Ephemeral resource types (`ephemeral` blocks).
    fn ephemeral_resources(
        &self,
    ) -> Vec<Arc<dyn crate::ephemeral::EphemeralResourceType<Self::Data>>> {
        Vec::new()
    }
    /// Provider-defined functions.
    fn functions(&self) -> Vec<Arc<dyn crate::function::Function>> {
        Vec::new()
    }
}

/// A resource type: schema and shared state, for a provider whose
/// [`Provider::Data`] is `D`.
pub trait ResourceType<D = ()>: Send + Sync {
    /// Full type name, e.g. `random_id`.
    fn name(&self) -> &str;
    /// The resource's schema.
    fn schema(&self) -> Result<ResourceSchema, Diagnostics>;
    /// A fresh instance for one call, given what `configure` produced.
    fn instance(&self, data: Option<Arc<D>>) -> Box<dyn Resource>;
}

/// The common resource type of a provider with configuration: a fixed
/// name, a schema built by a function, and instances made from the data
/// `configure` produced (the configured counterpart of [`SimpleResource`]).
/// Declared as a constant next to the resource:
///
/// ```
/// # use std::sync::Arc;
/// # use terrane_sdk::*;
/// struct Settings { path: String }
/// struct Entry { data: Option<Arc<Settings>> }
/// # #[async_trait]
/// # impl Resource for Entry {
/// #     async fn create(&self, _: &Ctx, p: &Value, _: &Value) -> Result<Applied, Diagnostics> { Ok(Applied::new(p.clone())) }
/// #     async fn read(&self, _: &Ctx, s: &Value, _: &[u8]) -> Result<Option<Applied>, Diagnostics> { Ok(Some(Applied::new(s.clone()))) }
/// #     async fn update(&self, _: &Ctx, _: &Value, p: &Value, _: &Value) -> Result<Applied, Diagnostics> { Ok(Applied::new(p.clone())) }
/// #     async fn delete(&self, _: &Ctx, _: &Value) -> Result<(), Diagnostics> { Ok(()) }
/// # }
/// fn entry_schema() -> Schema {
///     Schema::new(0).attr("key", Attr::string().required())
/// }
/// const ENTRY: ResourceTypeOf<Entry, Settings> =
///     ResourceTypeOf::new("kv_entry", entry_schema, |data| Entry { data });
/// # let _ = ENTRY;
/// ```
pub struct ResourceTypeOf<R, D = ()> {
    name: &'static str,
    schema: fn() -> ResourceSchema,
    make: fn(Option<Arc<D>>) -> R,
}

impl<R, D> ResourceTypeOf<R, D> {
    /// A resource type named `name` whose instances `make` builds.
    pub const fn new(
        name: &'static str,
        schema: fn() -> ResourceSchema,
        make: fn(Option<Arc<D>>) -> R,
    ) -> ResourceTypeOf<R, D> {
        ResourceTypeOf { name, schema, make }
    }
}

impl<R: Resource + 'static, D: Send + Sync> ResourceType<D> for ResourceTypeOf<R, D> {
    fn name(&self) -> &str {
        self.name
    }
    fn schema(&self) -> Result<ResourceSchema, Diagnostics> {
        Ok((self.schema)())
    }
    fn instance(&self, data: Option<Arc<D>>) -> Box<dyn Resource> {
        Box::new((self.make)(data))
    }
}

/// The data-source counterpart of [`ResourceTypeOf`]: a fixed name, a
/// schema function and instances made from the provider's data.
pub struct DataSourceTypeOf<S, D = ()> {
    name: &'static str,
    schema: fn() -> ResourceSchema,
    make: fn(Option<Arc<D>>) -> S,
}

impl<S, D> DataSourceTypeOf<S, D> {
    /// A data source type named `name` whose instances `make` builds.
    pub const fn new(
        name: &'static str,
        schema: fn() -> ResourceSchema,
        make: fn(Option<Arc<D>>) -> S,
    ) -> DataSourceTypeOf<S, D> {
        DataSourceTypeOf { name, schema, make }
    }
}

impl<S: DataSource + 'static, D: Send + Sync> DataSourceType<D> for DataSourceTypeOf<S, D> {
    fn name(&self) -> &str {
        self.name
    }
    fn schema(&self) -> Result<ResourceSchema, Diagnostics> {
        Ok((self.schema)())
    }
    fn instance(&self, data: Option<Arc<D>>) -> Box<dyn DataSource> {
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
    /// A new state with no private bytes.
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
    /// The prior state (null when creating).
    pub prior: Value,
    /// The configuration (may hold unknown values).
    pub config: Value,
    /// The planned new state after the framework's plan logic.
    pub planned: Value,
    /// Attributes whose change forces replacement.
    pub requires_replace: Vec<terrane_value::Path>,
}

/// One resource instance's lifecycle operations.
///
/// `read` must rebuild the whole object from the remote system: after an
/// import, every attribute but the one `import` set is null.
#[async_trait]
pub trait Resource: Send + Sync {
    /// Creates the object; `planned` holds defaults and unknown computed
    /// attributes, which the returned state must fill in.
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
    /// Changes the object in place to match `planned`.
    async fn update(
        &self,
        ctx: &Ctx,
        prior: &Value,
        planned: &Value,
        config: &Value,
    ) -> Result<Applied, Diagnostics>;
    /// Deletes the object.
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

/// A data source type, for a provider whose [`Provider::Data`] is `D`.
pub trait DataSourceType<D = ()>: Send + Sync {
    /// Full type name, e.g. `local_file`.
    fn name(&self) -> &str;
    /// The data source's schema.
    fn schema(&self) -> Result<ResourceSchema, Diagnostics>;
    /// A fresh instance for one call, given what `configure` produced.
    fn instance(&self, data: Option<Arc<D>>) -> Box<dyn DataSource>;
}

/// Reading a data source.
#[async_trait]
pub trait DataSource: Send + Sync {
    /// The whole object: `config` with its computed attributes filled in.
    async fn read(&self, ctx: &Ctx, config: &Value) -> Result<Value, Diagnostics>;
}

/// A resource type for providers that need no type/instance split and no
/// provider data: the same value serves every call.
pub struct SimpleResource<R> {
    /// Full type name.
    pub name: &'static str,
    /// The schema function.
    pub schema: fn() -> ResourceSchema,
    /// The instance, cloned for every call.
    pub resource: R,
}

impl<R: Resource + Clone + 'static, D> ResourceType<D> for SimpleResource<R> {
    fn name(&self) -> &str {
        self.name
    }
    fn schema(&self) -> Result<ResourceSchema, Diagnostics> {
        Ok((self.schema)())
    }
    fn instance(&self, _data: Option<Arc<D>>) -> Box<dyn Resource> {
        Box::new(self.resource.clone())
    }
}

/// The data-source counterpart of [`SimpleResource`].
pub struct SimpleDataSource<S> {
    /// Full type name.
    pub name: &'static str,
    /// The schema function.
    pub schema: fn() -> ResourceSchema,
    /// The instance, cloned for every call.
    pub source: S,
}

impl<S: DataSource + Clone + 'static, D> DataSourceType<D> for SimpleDataSource<S> {
    fn name(&self) -> &str {
        self.name
    }
    fn schema(&self) -> Result<ResourceSchema, Diagnostics> {
        Ok((self.schema)())
    }
    fn instance(&self, _data: Option<Arc<D>>) -> Box<dyn DataSource> {
        Box::new(self.source.clone())
    }
}
