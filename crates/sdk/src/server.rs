//! The protocol server: implements tfplugin6's Provider service on top of
//! the SDK traits. This is the only module of the SDK that sees protobuf
//! types. Every request gets a fresh resource instance and a context that
//! StopProvider cancels; every value crossing the wire is checked against
//! the schema so a provider bug becomes a diagnostic, not a corrupt state.

use crate::diag::Diagnostics;
use crate::ephemeral::EphemeralResourceType;
use crate::plan;
use crate::provider::{Ctx, DataSourceType, PlanState, Provider, ResourceType};
use crate::schema::ResourceSchema;
use crate::wire;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, RwLock};
use terrane_schema::{validate, Schema, SchemaKind};
use terrane_tfplugin6::tfplugin6 as tf;
use terrane_value::json::Extra;
use terrane_value::{Path, Type, Value};
use tokio_util::sync::CancellationToken;
use tonic::{Request, Response, Status};

/// A framework schema with its value type, computed once: every call
/// decodes and encodes against it.
pub(crate) struct Typed {
    pub(crate) schema: ResourceSchema,
    pub(crate) block: terrane_schema::Block,
    pub(crate) ty: Type,
}

impl Typed {
    fn new(schema: ResourceSchema) -> Typed {
        let block = schema.block_schema();
        Typed {
            ty: block.implied_type(),
            block,
            schema,
        }
    }
}

impl std::ops::Deref for Typed {
    type Target = ResourceSchema;
    fn deref(&self) -> &ResourceSchema {
        &self.schema
    }
}

/// A resource or data source type with its checked schema.
pub(crate) type Entry<T> = (Arc<T>, Typed);

/// A provider served over tfplugin6: what [`serve`](crate::serve) runs and
/// [`Harness`](crate::testing::Harness) drives.
pub struct ProviderServer<P: Provider> {
    pub(crate) provider: P,
    pub(crate) resources: BTreeMap<String, Entry<dyn ResourceType<P::Data>>>,
    pub(crate) data_sources: BTreeMap<String, Entry<dyn DataSourceType<P::Data>>>,
    ephemerals: BTreeMap<String, Entry<dyn EphemeralResourceType<P::Data>>>,
    pub(crate) provider_schema: Typed,
    pub(crate) schema_diags: Diagnostics,
    pub(crate) functions: BTreeMap<String, Arc<dyn crate::function::Function>>,
    pub(crate) data: RwLock<Option<Arc<P::Data>>>,
    pub(crate) stop: Mutex<CancellationToken>,
}

type R<T> = Result<Response<T>, Status>;

/// `s` with its block and type, after checking the block.
fn checked(kind: SchemaKind, what: &str, s: ResourceSchema, diags: &mut Diagnostics) -> Typed {
    let typed = Typed::new(s);
    for e in validate(&typed.block, kind) {
        diags.push_error(
            "Invalid Schema",
            format!("{what}: {e}. This is a bug in the provider."),
        );
    }
    typed
}

impl<P: Provider> ProviderServer<P> {
    /// Collects and checks the provider's schemas once.
    pub fn new(provider: P) -> ProviderServer<P> {
        let mut diags = Diagnostics::new();
        let provider_schema = provider.schema().unwrap_or_else(|d| {
            diags.extend(d);
            ResourceSchema::new(0)
        });
        let provider_schema = checked(
            SchemaKind::Provider,
            "provider",
            provider_schema,
            &mut diags,
        );
        let mut resources = BTreeMap::new();
        for r in provider.resources() {
            match r.schema() {
                Ok(s) => {
                    let s = checked(SchemaKind::ManagedResource, r.name(), s, &mut diags);
                    resources.insert(r.name().to_string(), (r, s));
                }
                Err(d) => diags.extend(d),
            }
        }
        let mut data_sources = BTreeMap::new();
        for d in provider.data_sources() {
            match d.schema() {
                Ok(s) => {
                    let s = checked(SchemaKind::DataSource, d.name(), s, &mut diags);
                    data_sources.insert(d.name().to_string(), (d, s));
                }
                Err(e) => diags.extend(e),
            }
        }
        let mut ephemerals = BTreeMap::new();
        for e in provider.ephemeral_resources() {
            match e.schema() {
                // An ephemeral schema follows a data source's rules: no
                // write-only attributes (nothing is stored anyway).
                Ok(s) => {
                    let s = checked(SchemaKind::DataSource, e.name(), s, &mut diags);
                    ephemerals.insert(e.name().to_string(), (e, s));
                }
                Err(d) => diags.extend(d),
            }
        }
        let functions = provider
            .functions()
            .into_iter()
            .map(|f| (f.name().to_string(), f))
            .collect();
        ProviderServer {
            provider,
            resources,
            data_sources,
            ephemerals,
            functions,
            provider_schema,
            schema_diags: diags,
            data: RwLock::new(None),
            stop: Mutex::new(CancellationToken::new()),
        }
    }

    pub(crate) fn ctx(&self) -> Ctx {
        Ctx {
            cancel: self.stop.lock().map(|t| t.clone()).unwrap_or_default(),
        }
    }

    pub(crate) fn data(&self) -> Option<Arc<P::Data>> {
        self.data.read().ok().and_then(|d| d.clone())
    }

    pub(crate) fn resource(
        &self,
        name: &str,
    ) -> Result<&Entry<dyn ResourceType<P::Data>>, Diagnostics> {
        self.resources.get(name).ok_or_else(|| {
            Diagnostics::error(
                "Resource Type Not Found",
                format!("The provider does not have a resource type named {name:?}."),
            )
        })
    }

    /// Cancels every call in flight (StopProvider, Pulumi's Cancel).
    pub(crate) fn cancel(&self) {
        if let Ok(mut t) = self.stop.lock() {
            t.cancel();
            *t = CancellationToken::new();
        }
    }

    /// UpgradeResourceState for a caller in this process that holds the
    /// stored object as JSON (the engine's built-ins): the value the wire
    /// call would answer, without the JSON text and msgpack between them.
    /// Only for an object stored at the type's current schema version,
    /// where no upgrade function runs; `None` for any other version (make
    /// the call). Errors come as the wire call's diagnostics.
    pub fn upgrade_current(
        &self,
        type_name: &str,
        version: i64,
        json: &str,
    ) -> Option<Result<Value, Vec<tf::Diagnostic>>> {
        let result = match self.resource(type_name) {
            Ok((_, s)) if s.version != version => return None,
            Ok((_, s)) => decode_stored_text(json.as_bytes(), s),
            Err(d) => Err(d),
        };
        Some(result.map_err(|d| wire::diagnostics(&d)))
    }

    /// The framework schema of a resource type.
    pub(crate) fn schema_of(&self, name: &str) -> Result<ResourceSchema, Diagnostics> {
        self.resource(name).map(|(_, s)| s.schema.clone())
    }

    fn ephemeral(
        &self,
        name: &str,
    ) -> Result<&Entry<dyn EphemeralResourceType<P::Data>>, Diagnostics> {
        self.ephemerals.get(name).ok_or_else(|| {
            Diagnostics::error(
                "Ephemeral Resource Type Not Found",
                format!("The provider does not have an ephemeral resource type named {name:?}."),
            )
        })
    }

    /// The framework schema of a data source.
    pub(crate) fn data_schema_of(&self, name: &str) -> Result<ResourceSchema, Diagnostics> {
        self.data_source(name).map(|(_, s)| s.schema.clone())
    }

    /// The provider configuration schema.
    pub(crate) fn provider_schema(&self) -> &ResourceSchema {
        &self.provider_schema.schema
    }

    pub(crate) fn data_source(
        &self,
        name: &str,
    ) -> Result<&Entry<dyn DataSourceType<P::Data>>, Diagnostics> {
        self.data_sources.get(name).ok_or_else(|| {
            Diagnostics::error(
                "Data Source Type Not Found",
                format!("The provider does not have a data source named {name:?}."),
            )
        })
    }
}

/// The resource calls computed on values. The wire methods below decode
/// their DynamicValues, call these and encode the answer; a caller in this
/// process (the engine's built-in providers) calls them directly with
/// values of the schema's type and skips msgpack both ways. Errors come as
/// the wire call's diagnostics, so both callers read them alike.
impl<P: Provider> ProviderServer<P> {
    /// A resource type's value type (the implied type of its block), for a
    /// caller checking that its values fit before calling directly.
    pub fn resource_value_type(&self, type_name: &str) -> Option<&Type> {
        self.resources.get(type_name).map(|(_, s)| &s.ty)
    }

    /// ValidateResourceConfig on a decoded configuration.
    pub async fn validate_resource_value(
        &self,
        type_name: &str,
        config: &Value,
    ) -> Vec<tf::Diagnostic> {
        wire::diagnostics(&self.validate_resource(type_name, config).await)
    }

    /// ReadResource: the new state and private bytes.
    pub async fn read_resource_value(
        &self,
        type_name: &str,
        state: &Value,
        private: &[u8],
    ) -> Result<(Value, Vec<u8>), Vec<tf::Diagnostic>> {
        let (_, s) = self
            .resource(type_name)
            .map_err(|d| wire::diagnostics(&d))?;
        let (v, private) = self
            .read(type_name, state, private)
            .await
            .map_err(|d| wire::diagnostics(&d))?;
        Ok((
            as_wire(v, &s.ty).map_err(|d| wire::diagnostics(&d))?,
            private,
        ))
    }

    /// PlanResourceChange: the planned state, the paths that require
    /// replacement and the warnings.
    pub async fn plan_resource_value(
        &self,
        type_name: &str,
        prior: Value,
        proposed: Value,
        config: Value,
    ) -> Result<(Value, Vec<Path>, Vec<tf::Diagnostic>), Vec<tf::Diagnostic>> {
        let (_, s) = self
            .resource(type_name)
            .map_err(|d| wire::diagnostics(&d))?;
        let (planned, replace, d) = self
            .plan(type_name, prior, proposed, config)
            .await
            .map_err(|d| wire::diagnostics(&d))?;
        let planned = as_wire(planned, &s.ty).map_err(|d| wire::diagnostics(&d))?;
        Ok((planned, replace, wire::diagnostics(&d)))
    }

    /// ApplyResourceChange: the new state and private bytes.
    pub async fn apply_resource_value(
        &self,
        type_name: &str,
        prior: Value,
        planned: Value,
        config: Value,
    ) -> Result<(Value, Vec<u8>), Vec<tf::Diagnostic>> {
        let (_, s) = self
            .resource(type_name)
            .map_err(|d| wire::diagnostics(&d))?;
        let (v, private) = self
            .apply(type_name, prior, planned, config)
            .await
            .map_err(|d| wire::diagnostics(&d))?;
        Ok((
            as_wire(v, &s.ty).map_err(|d| wire::diagnostics(&d))?,
            private,
        ))
    }

    async fn validate_resource(&self, type_name: &str, cfg: &Value) -> Diagnostics {
        let (rt, s) = match self.resource(type_name) {
            Ok(r) => r,
            Err(d) => return d,
        };
        let mut d = run_validators(s, cfg);
        d.extend(rt.instance(self.data()).validate(cfg).await);
        d
    }

    async fn read(
        &self,
        type_name: &str,
        state: &Value,
        private: &[u8],
    ) -> Result<(Value, Vec<u8>), Diagnostics> {
        let (rt, s) = self.resource(type_name)?;
        let ty = &s.ty;
        if state.is_null() {
            return Ok((state.clone(), private.to_vec()));
        }
        match rt
            .instance(self.data())
            .read(&self.ctx(), state, private)
            .await?
        {
            None => Ok((Value::null(ty.clone()), Vec::new())),
            Some(a) => {
                let v = null_write_only(s, a.state);
                let d = check_result(&v, ty, "Read");
                if d.has_errors() {
                    return Err(d);
                }
                Ok((v, a.private))
            }
        }
    }

    async fn plan(
        &self,
        type_name: &str,
        prior: Value,
        proposed: Value,
        config: Value,
    ) -> Result<(Value, Vec<Path>, Diagnostics), Diagnostics> {
        let (rt, s) = self.resource(type_name)?;
        if proposed.is_null() {
            return Ok((proposed, Vec::new(), Diagnostics::new()));
        }
        let (planned, replace) = plan::plan(s, &prior, &proposed, &config);
        crate::log::debug(
            "planning resource change",
            &[
                ("tf_resource_type", type_name.to_string()),
                ("tf_rpc", "PlanResourceChange".into()),
                ("create", prior.is_null().to_string()),
            ],
        );
        let mut ps = PlanState {
            prior,
            config,
            planned: null_write_only(s, planned),
            requires_replace: replace,
        };
        let d = rt
            .instance(self.data())
            .modify_plan(&self.ctx(), &mut ps)
            .await;
        if d.has_errors() {
            return Err(d);
        }
        Ok((null_write_only(s, ps.planned), ps.requires_replace, d))
    }

    async fn apply(
        &self,
        type_name: &str,
        prior: Value,
        planned: Value,
        config: Value,
    ) -> Result<(Value, Vec<u8>), Diagnostics> {
        let (rt, s) = self.resource(type_name)?;
        let ty = &s.ty;
        let inst = rt.instance(self.data());
        let ctx = self.ctx();
        if planned.is_null() {
            inst.delete(&ctx, &prior).await?;
            return Ok((planned, Vec::new()));
        }
        let applied = if prior.is_null() {
            inst.create(&ctx, &planned, &config).await?
        } else {
            inst.update(&ctx, &prior, &planned, &config).await?
        };
        let v = null_write_only(s, applied.state);
        let d = check_result(&v, ty, if prior.is_null() { "Create" } else { "Update" });
        if d.has_errors() {
            return Err(d);
        }
        Ok((v, applied.private))
    }
}

/// A value the provider answered, as the engine would have decoded it from
/// the wire: unchanged when its type conforms to the schema's (equal, or
/// anything where the schema says `dynamic`: what msgpack carries as it
/// is) and it has no marks, else through msgpack and back, which types it
/// as the wire does and refuses what does not fit as the encoder does.
fn as_wire(v: Value, ty: &Type) -> Result<Value, Diagnostics> {
    if v.ty().conforms_to(ty) && v.deep_marks().is_empty() {
        return Ok(v);
    }
    let m = wire::encode(&v, ty)?;
    wire::decode(Some(&m), ty)
}

/// Runs the schema's validators over a configuration object.
pub(crate) fn run_validators(schema: &ResourceSchema, config: &Value) -> Diagnostics {
    let mut d = Diagnostics::new();
    for (name, attr) in schema.attrs() {
        if attr.validators.is_empty() {
            continue;
        }
        let v = config
            .get_attr(name)
            .cloned()
            .unwrap_or_else(|| Value::null(attr.ty()));
        let p = Path::root().attr(name.clone());
        for val in &attr.validators {
            d.0.extend(val.check(&p, &v, config));
        }
    }
    d
}

/// Write-only attributes are never planned, stored or returned.
pub(crate) fn null_write_only(schema: &ResourceSchema, v: Value) -> Value {
    let Some(entries) = v.entries() else { return v };
    if !schema
        .attrs()
        .any(|(n, a)| a.proto.write_only && entries.get(n).is_some_and(|x| !x.is_null()))
    {
        return v;
    }
    let mut m = (*entries).clone();
    for (n, a) in schema.attrs() {
        if a.proto.write_only {
            m.insert(n.clone(), Value::null(a.ty()));
        }
    }
    Value::object_of(m).with_sensitive(v.is_sensitive())
}

/// A new state must be wholly known and of the schema's type.
pub(crate) fn check_result(v: &Value, ty: &Type, what: &str) -> Diagnostics {
    if !v.ty().conforms_to(ty) {
        return Diagnostics::error("Invalid Result Object", format!("{what} returned a value of type {}, which does not match the schema's {ty}. This is a bug in the provider.", v.ty()));
    }
    if !v.is_wholly_known() {
        return Diagnostics::error("Invalid Result Object", format!("{what} returned unknown values; a new state must be wholly known. This is a bug in the provider."));
    }
    Diagnostics::new()
}

/// One debug line per ephemeral call (hclog, shown under `TF_LOG`), so
/// the order of open, renew and close can be followed from outside. Only
/// the type name: values and private bytes are never logged.
fn ephemeral_log(rpc: &str, type_name: &str) {
    crate::log::debug(
        "ephemeral resource call",
        &[
            ("tf_rpc", rpc.to_string()),
            ("tf_resource_type", type_name.to_string()),
        ],
    );
}

/// Drops attributes the current schema no longer has (state from an older
/// provider build at the same schema version).
fn prune(json: &serde_json::Value, schema: &Typed) -> Option<serde_json::Value> {
    let block = &schema.block;
    let known = |k: &String| block.attributes.contains_key(k) || block.block_types.contains_key(k);
    match json {
        serde_json::Value::Object(m) if !m.keys().all(known) => {
            let mut m = m.clone();
            m.retain(|k, _| known(k));
            Some(serde_json::Value::Object(m))
        }
        _ => None,
    }
}

/// A stored object's JSON text, parsed.
fn stored_json(raw: &[u8]) -> Result<serde_json::Value, Diagnostics> {
    serde_json::from_slice(raw).map_err(|e| {
        Diagnostics::error(
            "Unable to Read Prior State",
            format!("The stored state is not valid JSON: {e}"),
        )
    })
}

/// A stored object's JSON, at the schema's current version, as the value
/// UpgradeResourceState answers: attributes the schema no longer has
/// dropped (copied only when there are some), write-only ones nulled.
fn decode_stored(json: &serde_json::Value, s: &Typed) -> Result<Value, Diagnostics> {
    let pruned = prune(json, s);
    let v = terrane_value::json::decode(pruned.as_ref().unwrap_or(json), &s.ty).map_err(|e| {
        Diagnostics::error(
            "Unable to Read Prior State",
            format!("The stored state does not match the schema: {e}"),
        )
    })?;
    Ok(null_write_only(s, v))
}

/// [`decode_stored`] of a stored object's JSON text at the schema's
/// current version. The usual text (the attributes in order, as written)
/// is read straight into the value; any other, and any error, goes through
/// the parsed JSON, which gives the same value or says what is wrong.
fn decode_stored_text(raw: &[u8], s: &Typed) -> Result<Value, Diagnostics> {
    match terrane_value::json::decode_bytes_direct(raw, &s.ty, Extra::Drop) {
        Some(v) => Ok(null_write_only(s, v)),
        None => decode_stored(&stored_json(raw)?, s),
    }
}

#[tonic::async_trait]
impl<P: Provider> tf::provider_server::Provider for ProviderServer<P> {
    async fn get_metadata(
        &self,
        _r: Request<tf::get_metadata::Request>,
    ) -> R<tf::get_metadata::Response> {
        Ok(Response::new(tf::get_metadata::Response {
            server_capabilities: Some(tf::ServerCapabilities {
                plan_destroy: true,
                get_provider_schema_optional: true,
                ..Default::default()
            }),
            diagnostics: wire::diagnostics(&self.schema_diags),
            resources: self
                .resources
                .keys()
                .map(|n| tf::get_metadata::ResourceMetadata {
                    type_name: n.clone(),
                })
                .collect(),
            data_sources: self
                .data_sources
                .keys()
                .map(|n| tf::get_metadata::DataSourceMetadata {
                    type_name: n.clone(),
                })
                .collect(),
            ephemeral_resources: self
                .ephemerals
                .keys()
                .map(|n| tf::get_metadata::EphemeralResourceMetadata {
                    type_name: n.clone(),
                })
                .collect(),
            ..Default::default()
        }))
    }

    async fn get_provider_schema(
        &self,
        _r: Request<tf::get_provider_schema::Request>,
    ) -> R<tf::get_provider_schema::Response> {
        let to = |s: &Typed| wire::schema(&Schema::new(s.version, s.block.clone()));
        Ok(Response::new(tf::get_provider_schema::Response {
            provider: Some(to(&self.provider_schema)),
            resource_schemas: self
                .resources
                .iter()
                .map(|(n, (_, s))| (n.clone(), to(s)))
                .collect(),
            data_source_schemas: self
                .data_sources
                .iter()
                .map(|(n, (_, s))| (n.clone(), to(s)))
                .collect(),
            ephemeral_resource_schemas: self
                .ephemerals
                .iter()
                .map(|(n, (_, s))| (n.clone(), to(s)))
                .collect(),
            functions: self
                .functions
                .iter()
                .map(|(n, f)| (n.clone(), wire::function(f.as_ref())))
                .collect(),
            diagnostics: wire::diagnostics(&self.schema_diags),
            server_capabilities: Some(tf::ServerCapabilities {
                plan_destroy: true,
                get_provider_schema_optional: true,
                ..Default::default()
            }),
            ..Default::default()
        }))
    }

    async fn validate_provider_config(
        &self,
        r: Request<tf::validate_provider_config::Request>,
    ) -> R<tf::validate_provider_config::Response> {
        let ty = &self.provider_schema.ty;
        let d = match wire::decode(r.get_ref().config.as_ref(), ty) {
            Ok(cfg) => run_validators(&self.provider_schema, &cfg),
            Err(d) => d,
        };
        Ok(Response::new(tf::validate_provider_config::Response {
            diagnostics: wire::diagnostics(&d),
        }))
    }

    async fn configure_provider(
        &self,
        r: Request<tf::configure_provider::Request>,
    ) -> R<tf::configure_provider::Response> {
        let ty = &self.provider_schema.ty;
        let d = match wire::decode(r.get_ref().config.as_ref(), ty) {
            Ok(cfg) => match self.provider.configure(&self.ctx(), &cfg).await {
                Ok(data) => {
                    if let Ok(mut slot) = self.data.write() {
                        *slot = data.map(Arc::new);
                    }
                    Diagnostics::new()
                }
                Err(d) => d,
            },
            Err(d) => d,
        };
        Ok(Response::new(tf::configure_provider::Response {
            diagnostics: wire::diagnostics(&d),
        }))
    }

    async fn validate_resource_config(
        &self,
        r: Request<tf::validate_resource_config::Request>,
    ) -> R<tf::validate_resource_config::Response> {
        let req = r.get_ref();
        let d = match self.resource(&req.type_name) {
            Ok((_, s)) => match wire::decode(req.config.as_ref(), &s.ty) {
                Ok(cfg) => self.validate_resource(&req.type_name, &cfg).await,
                Err(d) => d,
            },
            Err(d) => d,
        };
        Ok(Response::new(tf::validate_resource_config::Response {
            diagnostics: wire::diagnostics(&d),
        }))
    }

    async fn validate_data_resource_config(
        &self,
        r: Request<tf::validate_data_resource_config::Request>,
    ) -> R<tf::validate_data_resource_config::Response> {
        let req = r.get_ref();
        let d = self
            .data_source(&req.type_name)
            .and_then(|(_, s)| {
                wire::decode(req.config.as_ref(), &s.ty).map(|cfg| run_validators(s, &cfg))
            })
            .unwrap_or_else(|d| d);
        Ok(Response::new(tf::validate_data_resource_config::Response {
            diagnostics: wire::diagnostics(&d),
        }))
    }

    async fn upgrade_resource_state(
        &self,
        r: Request<tf::upgrade_resource_state::Request>,
    ) -> R<tf::upgrade_resource_state::Response> {
        let req = r.get_ref();
        let result = (|| {
            let (rt, s) = self.resource(&req.type_name)?;
            let ty = &s.ty;
            if req.version > s.version {
                return Err(newer_version(req.version, s.version));
            }
            if let Some(flat) = req.raw_state.as_ref().map(|r| &r.flatmap) {
                if !flat.is_empty() {
                    return upgrade_flatmap(s, flat);
                }
            }
            let raw = req
                .raw_state
                .as_ref()
                .map(|r| r.json.as_slice())
                .unwrap_or_default();
            if raw.is_empty() {
                return wire::encode(&Value::null(ty.clone()), ty);
            }
            if req.version == s.version {
                return wire::encode(&decode_stored_text(raw, s)?, ty);
            }
            // An older version: the resource's upgrader runs on the JSON.
            let json = rt
                .instance(self.data())
                .upgrade_state(req.version, stored_json(raw)?)?;
            wire::encode(&decode_stored(&json, s)?, ty)
        })();
        Ok(Response::new(match result {
            Ok(v) => tf::upgrade_resource_state::Response {
                upgraded_state: Some(v),
                diagnostics: Vec::new(),
            },
            Err(d) => tf::upgrade_resource_state::Response {
                upgraded_state: None,
                diagnostics: wire::diagnostics(&d),
            },
        }))
    }

    async fn read_resource(
        &self,
        r: Request<tf::read_resource::Request>,
    ) -> R<tf::read_resource::Response> {
        let req = r.get_ref();
        let result = async {
            let (_, s) = self.resource(&req.type_name)?;
            let state = wire::decode(req.current_state.as_ref(), &s.ty)?;
            let (v, private) = self.read(&req.type_name, &state, &req.private).await?;
            Ok::<_, Diagnostics>((wire::encode(&v, &s.ty)?, private))
        }
        .await;
        Ok(Response::new(match result {
            Ok((v, private)) => tf::read_resource::Response {
                new_state: Some(v),
                private,
                ..Default::default()
            },
            Err(d) => tf::read_resource::Response {
                new_state: req.current_state.clone(),
                private: req.private.clone(),
                diagnostics: wire::diagnostics(&d),
                ..Default::default()
            },
        }))
    }

    async fn plan_resource_change(
        &self,
        r: Request<tf::plan_resource_change::Request>,
    ) -> R<tf::plan_resource_change::Response> {
        let req = r.get_ref();
        let result = async {
            let (_, s) = self.resource(&req.type_name)?;
            let ty = &s.ty;
            let prior = wire::decode(req.prior_state.as_ref(), ty)?;
            let proposed = wire::decode(req.proposed_new_state.as_ref(), ty)?;
            let config = wire::decode(req.config.as_ref(), ty)?;
            let (planned, replace, d) = self.plan(&req.type_name, prior, proposed, config).await?;
            Ok::<_, Diagnostics>((wire::encode(&planned, ty)?, replace, d))
        }
        .await;
        Ok(Response::new(match result {
            Ok((planned, replace, d)) => tf::plan_resource_change::Response {
                planned_state: Some(planned),
                requires_replace: replace.iter().map(wire::path).collect(),
                planned_private: req.prior_private.clone(),
                diagnostics: wire::diagnostics(&d),
                ..Default::default()
            },
            Err(d) => tf::plan_resource_change::Response {
                diagnostics: wire::diagnostics(&d),
                ..Default::default()
            },
        }))
    }

    async fn apply_resource_change(
        &self,
        r: Request<tf::apply_resource_change::Request>,
    ) -> R<tf::apply_resource_change::Response> {
        let req = r.get_ref();
        let result = async {
            let (_, s) = self.resource(&req.type_name)?;
            let ty = &s.ty;
            let prior = wire::decode(req.prior_state.as_ref(), ty)?;
            let planned = wire::decode(req.planned_state.as_ref(), ty)?;
            let config = wire::decode(req.config.as_ref(), ty)?;
            let (v, private) = self.apply(&req.type_name, prior, planned, config).await?;
            Ok::<_, Diagnostics>((wire::encode(&v, ty)?, private))
        }
        .await;
        Ok(Response::new(match result {
            Ok((v, private)) => tf::apply_resource_change::Response {
                new_state: Some(v),
                private,
                ..Default::default()
            },
            Err(d) => tf::apply_resource_change::Response {
                new_state: req.prior_state.clone(),
                private: req.planned_private.clone(),
                diagnostics: wire::diagnostics(&d),
                ..Default::default()
            },
        }))
    }

    async fn import_resource_state(
        &self,
        r: Request<tf::import_resource_state::Request>,
    ) -> R<tf::import_resource_state::Response> {
        let req = r.get_ref();
        let result = async {
            let (rt, s) = self.resource(&req.type_name)?;
            let ty = &s.ty;
            let v = null_write_only(
                s,
                rt.instance(self.data())
                    .import(&self.ctx(), &req.id)
                    .await?,
            );
            Ok::<_, Diagnostics>(tf::import_resource_state::ImportedResource {
                type_name: req.type_name.clone(),
                state: Some(wire::encode(&v, ty)?),
                ..Default::default()
            })
        }
        .await;
        Ok(Response::new(match result {
            Ok(imp) => tf::import_resource_state::Response {
                imported_resources: vec![imp],
                ..Default::default()
            },
            Err(d) => tf::import_resource_state::Response {
                diagnostics: wire::diagnostics(&d),
                ..Default::default()
            },
        }))
    }

    async fn read_data_source(
        &self,
        r: Request<tf::read_data_source::Request>,
    ) -> R<tf::read_data_source::Response> {
        let req = r.get_ref();
        let result = async {
            let (dt, s) = self.data_source(&req.type_name)?;
            let ty = &s.ty;
            let config = wire::decode(req.config.as_ref(), ty)?;
            let v = dt.instance(self.data()).read(&self.ctx(), &config).await?;
            let d = check_result(&v, ty, "Read");
            if d.has_errors() {
                return Err(d);
            }
            wire::encode(&v, ty)
        }
        .await;
        Ok(Response::new(match result {
            Ok(v) => tf::read_data_source::Response {
                state: Some(v),
                ..Default::default()
            },
            Err(d) => tf::read_data_source::Response {
                diagnostics: wire::diagnostics(&d),
                ..Default::default()
            },
        }))
    }

    async fn get_functions(
        &self,
        _r: Request<tf::get_functions::Request>,
    ) -> R<tf::get_functions::Response> {
        Ok(Response::new(tf::get_functions::Response {
            functions: self
                .functions
                .iter()
                .map(|(n, f)| (n.clone(), wire::function(f.as_ref())))
                .collect(),
            diagnostics: Vec::new(),
        }))
    }

    async fn call_function(
        &self,
        r: Request<tf::call_function::Request>,
    ) -> R<tf::call_function::Response> {
        let req = r.get_ref();
        let fail = |text: String, argument: Option<i64>| tf::call_function::Response {
            result: None,
            error: Some(tf::FunctionError {
                text,
                function_argument: argument,
            }),
        };
        let Some(f) = self.functions.get(&req.name) else {
            return Ok(Response::new(fail(
                format!("the provider has no function named {:?}", req.name),
                None,
            )));
        };
        let (params, variadic) = (f.params(), f.variadic());
        let mut args = Vec::with_capacity(req.arguments.len());
        for (i, a) in req.arguments.iter().enumerate() {
            let Some(p) = params.get(i).or(variadic.as_ref()) else {
                return Ok(Response::new(fail(
                    format!("too many arguments: {} given", req.arguments.len()),
                    None,
                )));
            };
            match wire::decode(Some(a), &p.ty) {
                Ok(v) if v.is_null() && !p.allow_null => {
                    return Ok(Response::new(fail(
                        format!("argument {:?} must not be null", p.name),
                        Some(i as i64),
                    )))
                }
                Ok(v) => args.push(v),
                Err(d) => return Ok(Response::new(fail(d.to_string(), Some(i as i64)))),
            }
        }
        if args.len() < params.len() {
            return Ok(Response::new(fail(
                format!(
                    "not enough arguments: {} given, {} required",
                    args.len(),
                    params.len()
                ),
                None,
            )));
        }
        Ok(Response::new(match f.call(&args) {
            Ok(v) => match wire::encode(&v, &f.return_type()) {
                Ok(dv) => tf::call_function::Response {
                    result: Some(dv),
                    error: None,
                },
                Err(d) => fail(d.to_string(), None),
            },
            Err(e) => fail(e.text, e.argument),
        }))
    }

    async fn validate_ephemeral_resource_config(
        &self,
        r: Request<tf::validate_ephemeral_resource_config::Request>,
    ) -> R<tf::validate_ephemeral_resource_config::Response> {
        let req = r.get_ref();
        let d = async {
            let (et, s) = self.ephemeral(&req.type_name)?;
            let cfg = wire::decode(req.config.as_ref(), &s.ty)?;
            let mut d = run_validators(s, &cfg);
            d.extend(et.instance(self.data()).validate(&cfg).await);
            Ok::<_, Diagnostics>(d)
        }
        .await
        .unwrap_or_else(|d| d);
        Ok(Response::new(
            tf::validate_ephemeral_resource_config::Response {
                diagnostics: wire::diagnostics(&d),
            },
        ))
    }

    async fn open_ephemeral_resource(
        &self,
        r: Request<tf::open_ephemeral_resource::Request>,
    ) -> R<tf::open_ephemeral_resource::Response> {
        let req = r.get_ref();
        ephemeral_log("OpenEphemeralResource", &req.type_name);
        let result = async {
            let (et, s) = self.ephemeral(&req.type_name)?;
            let config = wire::decode(req.config.as_ref(), &s.ty)?;
            if !config.is_wholly_known() {
                return Err(Diagnostics::error(
                    "Unknown Ephemeral Resource Configuration",
                    "The host asked to open an ephemeral resource whose configuration is not yet known; it must wait until it is. This is a bug in the host.",
                ));
            }
            let opened = et
                .instance(self.data())
                .open(&self.ctx(), &config)
                .await?;
            let d = check_result(&opened.result, &s.ty, "Open");
            if d.has_errors() {
                return Err(d);
            }
            Ok((wire::encode(&opened.result, &s.ty)?, opened))
        }
        .await;
        Ok(Response::new(match result {
            Ok((v, opened)) => tf::open_ephemeral_resource::Response {
                result: Some(v),
                private: Some(opened.private),
                renew_at: opened.renew_at.map(prost_types::Timestamp::from),
                ..Default::default()
            },
            Err(d) => tf::open_ephemeral_resource::Response {
                diagnostics: wire::diagnostics(&d),
                ..Default::default()
            },
        }))
    }

    async fn renew_ephemeral_resource(
        &self,
        r: Request<tf::renew_ephemeral_resource::Request>,
    ) -> R<tf::renew_ephemeral_resource::Response> {
        let req = r.get_ref();
        ephemeral_log("RenewEphemeralResource", &req.type_name);
        let result = async {
            let (et, _) = self.ephemeral(&req.type_name)?;
            let private = req.private.as_deref().unwrap_or_default();
            et.instance(self.data()).renew(&self.ctx(), private).await
        }
        .await;
        Ok(Response::new(match result {
            Ok(renewed) => tf::renew_ephemeral_resource::Response {
                private: Some(renewed.private),
                renew_at: renewed.renew_at.map(prost_types::Timestamp::from),
                diagnostics: Vec::new(),
            },
            Err(d) => tf::renew_ephemeral_resource::Response {
                private: req.private.clone(),
                renew_at: None,
                diagnostics: wire::diagnostics(&d),
            },
        }))
    }

    async fn close_ephemeral_resource(
        &self,
        r: Request<tf::close_ephemeral_resource::Request>,
    ) -> R<tf::close_ephemeral_resource::Response> {
        let req = r.get_ref();
        ephemeral_log("CloseEphemeralResource", &req.type_name);
        let d = async {
            let (et, _) = self.ephemeral(&req.type_name)?;
            let private = req.private.as_deref().unwrap_or_default();
            et.instance(self.data()).close(&self.ctx(), private).await
        }
        .await
        .err()
        .unwrap_or_default();
        Ok(Response::new(tf::close_ephemeral_resource::Response {
            diagnostics: wire::diagnostics(&d),
        }))
    }

    async fn stop_provider(
        &self,
        _r: Request<tf::stop_provider::Request>,
    ) -> R<tf::stop_provider::Response> {
        if let Ok(mut t) = self.stop.lock() {
            t.cancel();
            *t = CancellationToken::new();
        }
        Ok(Response::new(Default::default()))
    }
}

/// The state of a resource type stored under a newer schema version than
/// the provider's.
fn newer_version(stored: i64, ours: i64) -> Diagnostics {
    Diagnostics::error(
        "Resource Managed by Newer Provider Version",
        format!("The state was written with schema version {stored}, newer than this provider's {ours}. Use the newer provider."),
    )
}

/// UpgradeResourceState of a pre-0.12 object (RawState.flatmap, from a v4
/// state's `attributes_flat`): decoded against the resource type's schema
/// as the legacy SDK decodes one (`NAME.#` for lists and sets, `NAME.%` for
/// maps, nested blocks at `NAME.INDEX.ATTR`, set elements by hash). The
/// flatmap is read with the current schema, as the legacy SDK reads it for
/// a resource without state upgraders (the JSON upgraders take JSON, and
/// no state that old was written as JSON).
fn upgrade_flatmap(
    s: &Typed,
    flat: &std::collections::HashMap<String, String>,
) -> Result<tf::DynamicValue, Diagnostics> {
    let flat: std::collections::BTreeMap<String, String> =
        flat.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let v = terrane_value::flatmap::decode(&flat, &s.ty).map_err(|e| {
        Diagnostics::error(
            "Unable to Read Prior State",
            format!("The stored state (a flatmap, from before Terraform 0.12) does not match the schema: {e}"),
        )
    })?;
    wire::encode(&null_write_only(s, v), &s.ty)
}
