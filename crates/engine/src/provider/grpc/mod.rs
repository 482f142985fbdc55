//! The engine's plugin client: [`Provider`] over tfplugin6 messages. This
//! module tree is the only place in the engine that sees protobuf types.
//!
//! [`ProtocolProvider`] turns terrane values into DynamicValues (msgpack of
//! the schema's implied type, via terrane_value::msgpack) and responses
//! back, over either transport of [`rpc`]: an in-process protocol server
//! (the built-ins) or a plugin process. The four per-instance resource
//! calls (validate, read, plan, apply) to an in-process server skip
//! msgpack: [`rpc::Values`] runs the SDK server's code for the call on
//! values, the same code its wire methods run between decoding and
//! encoding, so built-ins and plugins keep one contract. Only values the
//! wire would hand over unchanged go that way (the type's exact value
//! type, no marks); the server's answers that are not already of the
//! type's value type go through msgpack and back before they return.
//! Planning 5,000 `terraform_data` spent about a third of its time in the
//! encodings before.

mod convert;
pub mod rpc;

use crate::provider::api::*;
use rpc::{CallError, Rpc, Values};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use terrane_tfplugin6::tfplugin6 as tf;
use terrane_value::{msgpack, Type, Value};
use tokio::sync::OnceCell;

/// The schema of one provider, shared by all its instances in a run.
pub type SchemaCell = Arc<OnceCell<Arc<ProviderSchema>>>;

/// What the client tells providers it supports (ClientCapabilities).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientCapabilities {
    /// May the provider defer changes? On by default: the plan walk lists
    /// what a provider defers ([`crate::defer`]); a plan with deferral off
    /// (`-defer=false`) refuses such an answer, as Terraform does.
    pub deferral_allowed: bool,
    /// The engine nulls write-only attributes itself. On by default.
    pub write_only_attributes_allowed: bool,
}

impl Default for ClientCapabilities {
    fn default() -> ClientCapabilities {
        ClientCapabilities {
            deferral_allowed: true,
            write_only_attributes_allowed: true,
        }
    }
}

/// A provider instance over a tfplugin6 transport.
pub struct ProtocolProvider<R> {
    address: String,
    rpc: R,
    schema: SchemaCell,
    /// This instance has itself answered GetProviderSchema.
    asked_schema: AtomicBool,
    caps: ClientCapabilities,
    /// Set: deferral refused from now on (read at every call, so an
    /// instance started before a `-defer=false` plan is told too).
    refuse_deferral: Option<Arc<AtomicBool>>,
    /// Implied types by type name: resources' at 0, data sources' at 1
    /// (looked up by `&str` on every call, without building a key).
    types: std::sync::Mutex<[std::collections::HashMap<String, Type>; 2]>,
    /// Validation answers already given; see [`Validated`].
    validated: std::sync::Mutex<Validated>,
}

/// Answers to ValidateResourceConfig / ValidateDataResourceConfig, by
/// (is data source, type name, config msgpack). Validation sees the
/// configuration object alone (lifecycle: "takes the Configuration object
/// alone"), so the same configuration gets the same diagnostics: the
/// thousand instances of a `count` with one configuration are validated by
/// one call, not a thousand, and concurrent askers of the same key wait for
/// the one call in flight. A transport failure is not remembered (the next
/// asker calls again). Keys stop being added once they hold
/// [`Validated::MAX_BYTES`]; later configurations are validated uncached.
#[derive(Default)]
struct Validated {
    answers: std::collections::HashMap<(bool, String, Vec<u8>), Arc<OnceCell<Diagnostics>>>,
    bytes: usize,
}

impl Validated {
    const MAX_BYTES: usize = 8 << 20;

    /// The cell for a key, or None when the key would exceed the budget.
    fn cell(
        &mut self,
        data: bool,
        type_name: &str,
        config: &[u8],
    ) -> Option<Arc<OnceCell<Diagnostics>>> {
        let key = (data, type_name.to_string(), config.to_vec());
        if let Some(c) = self.answers.get(&key) {
            return Some(c.clone());
        }
        let size = type_name.len() + config.len();
        if self.bytes + size > Self::MAX_BYTES {
            return None;
        }
        self.bytes += size;
        Some(self.answers.entry(key).or_default().clone())
    }
}

type Res<T> = Result<T, ProviderError>;

impl<R: Rpc> ProtocolProvider<R> {
    /// An instance at `address` over `rpc`, sharing `schema` with the other
    /// instances of the same provider.
    pub fn new(
        address: impl Into<String>,
        rpc: R,
        schema: SchemaCell,
        caps: ClientCapabilities,
    ) -> ProtocolProvider<R> {
        ProtocolProvider {
            address: address.into(),
            rpc,
            schema,
            asked_schema: AtomicBool::new(false),
            caps,
            refuse_deferral: None,
            types: Default::default(),
            validated: Default::default(),
        }
    }

    fn call_err(&self, operation: &'static str) -> impl Fn(CallError) -> ProviderError + '_ {
        move |e| match e {
            CallError::Crashed(detail) => ProviderError::Crashed {
                provider: self.address.clone(),
                operation,
                detail,
            },
            CallError::Failed(s) => ProviderError::Rpc {
                provider: self.address.clone(),
                operation,
                status: format!("{}: {}", code_name(s.code()), s.message()),
            },
            CallError::Closed => ProviderError::Closed {
                provider: self.address.clone(),
                operation,
            },
        }
    }

    fn invalid(&self, operation: &'static str, detail: String) -> ProviderError {
        ProviderError::InvalidResponse {
            provider: self.address.clone(),
            operation,
            detail,
        }
    }

    /// Shares the host's deferral refusal ([`super::ProviderHost::refuse_deferral`]).
    pub fn with_deferral_refusal(mut self, flag: Arc<AtomicBool>) -> Self {
        self.refuse_deferral = Some(flag);
        self
    }

    fn capabilities(&self) -> Option<tf::ClientCapabilities> {
        let refused = self
            .refuse_deferral
            .as_ref()
            .is_some_and(|f| f.load(std::sync::atomic::Ordering::SeqCst));
        Some(tf::ClientCapabilities {
            deferral_allowed: self.caps.deferral_allowed && !refused,
            write_only_attributes_allowed: self.caps.write_only_attributes_allowed,
            ..Default::default()
        })
    }

    /// The in-process server's value calls and `values` as that server
    /// would decode them, when it is in this process and each value
    /// conforms to the type's value type (equal types, anything where the
    /// schema says `dynamic`: what msgpack carries unchanged; a null of any
    /// type becomes the type's null; a marked value or one of another type
    /// takes the wire).
    fn direct<const N: usize>(
        &self,
        type_name: &str,
        values: [&Value; N],
    ) -> Option<(&dyn Values, [Value; N])> {
        let server = self.rpc.values()?;
        let ty = server.value_type(type_name)?;
        let mut out = Vec::with_capacity(N);
        for v in values {
            if v.is_null() && v.marks().is_empty() {
                out.push(Value::null(ty.clone()));
            } else if v.ty().conforms_to(ty) && v.deep_marks().is_empty() {
                out.push(v.clone());
            } else {
                return None;
            }
        }
        Some((server, out.try_into().ok()?))
    }

    fn encode(
        &self,
        operation: &'static str,
        v: &Value,
        ty: &Type,
    ) -> Res<Option<tf::DynamicValue>> {
        msgpack::encode(v, ty)
            .map(|m| {
                Some(tf::DynamicValue {
                    msgpack: m,
                    json: Vec::new(),
                })
            })
            .map_err(|e| ProviderError::Encode {
                provider: self.address.clone(),
                operation,
                detail: e.to_string(),
            })
    }

    /// Decodes a DynamicValue as Terraform does: msgpack when present, else
    /// JSON, and an absent or empty value is a null.
    fn decode(
        &self,
        operation: &'static str,
        what: &str,
        v: Option<&tf::DynamicValue>,
        ty: &Type,
    ) -> Res<Value> {
        let Some(v) = v else {
            return Ok(Value::null(ty.clone()));
        };
        let r = if !v.msgpack.is_empty() {
            msgpack::decode(&v.msgpack, ty).map_err(|e| e.to_string())
        } else if !v.json.is_empty() {
            terrane_value::json::decode_bytes(&v.json, ty).map_err(|e| e.to_string())
        } else {
            return Ok(Value::null(ty.clone()));
        };
        r.map_err(|e| {
            self.invalid(
                operation,
                format!("{what} does not decode against the schema: {e}"),
            )
        })
    }

    fn meta(
        &self,
        operation: &'static str,
        schema: &ProviderSchema,
        v: Option<&Value>,
    ) -> Res<Option<tf::DynamicValue>> {
        match v {
            None => Ok(None),
            Some(v) => self.encode(operation, v, &schema.provider_meta_type()),
        }
    }

    async fn fetch_schema(&self) -> Res<Arc<ProviderSchema>> {
        const OP: &str = "GetProviderSchema";
        let r = self
            .rpc
            .get_provider_schema(Default::default())
            .await
            .map_err(self.call_err(OP))?;
        self.asked_schema.store(true, Ordering::Release);
        convert::provider_schema(&r)
            .map(Arc::new)
            .map_err(|e| self.invalid(OP, e))
    }

    async fn schema(&self) -> Res<Arc<ProviderSchema>> {
        self.schema
            .get_or_try_init(|| self.fetch_schema())
            .await
            .cloned()
    }

    /// A resource's or data source's implied type, computed once (every
    /// call encodes and decodes against it).
    fn cached_type(
        &self,
        data: bool,
        name: &str,
        make: impl FnOnce() -> Option<Type>,
    ) -> Option<Type> {
        let mut cache = self.types.lock().unwrap_or_else(|p| p.into_inner());
        let cache = &mut cache[usize::from(data)];
        if let Some(t) = cache.get(name) {
            return Some(t.clone());
        }
        let t = make()?;
        cache.insert(name.to_string(), t.clone());
        Some(t)
    }

    async fn resource_type(&self, name: &str) -> Res<(Arc<ProviderSchema>, Type)> {
        let s = self.schema().await?;
        let ty = self.cached_type(false, name, || {
            s.resources.get(name).map(|r| r.block.implied_type())
        });
        match ty {
            Some(ty) => Ok((s, ty)),
            None => Err(ProviderError::UnknownType {
                provider: self.address.clone(),
                kind: SchemaKind::Resource,
                name: name.into(),
            }),
        }
    }

    /// Runs a validation call once per distinct (kind, type, config); see
    /// [`Validated`].
    async fn validate_once<F>(
        &self,
        data: bool,
        type_name: &str,
        config: &Option<tf::DynamicValue>,
        call: F,
    ) -> Res<Diagnostics>
    where
        F: std::future::Future<Output = Res<Diagnostics>>,
    {
        let bytes = config.as_ref().map_or(&[][..], |c| &c.msgpack[..]);
        let cell = self
            .validated
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .cell(data, type_name, bytes);
        match cell {
            Some(cell) => cell.get_or_try_init(|| call).await.cloned(),
            None => call.await,
        }
    }

    async fn data_type(&self, name: &str) -> Res<(Arc<ProviderSchema>, Type)> {
        let s = self.schema().await?;
        let ty = self.cached_type(true, name, || {
            s.data_sources.get(name).map(|r| r.block.implied_type())
        });
        match ty {
            Some(ty) => Ok((s, ty)),
            None => Err(ProviderError::UnknownType {
                provider: self.address.clone(),
                kind: SchemaKind::DataSource,
                name: name.into(),
            }),
        }
    }
}

impl<R: Rpc> ProtocolProvider<R> {
    async fn ephemeral_type(&self, name: &str) -> Res<Type> {
        let s = self.schema().await?;
        s.ephemeral_resources
            .get(name)
            .map(|r| r.block.implied_type())
            .ok_or_else(|| ProviderError::UnknownType {
                provider: self.address.clone(),
                kind: SchemaKind::EphemeralResource,
                name: name.into(),
            })
    }
}

fn timestamp(t: Option<&prost_types::Timestamp>) -> Option<std::time::SystemTime> {
    t.and_then(|t| std::time::SystemTime::try_from(*t).ok())
}

fn code_name(c: tonic::Code) -> String {
    format!("{c:?}")
}

#[async_trait::async_trait]
impl<R: Rpc> Provider for ProtocolProvider<R> {
    fn address(&self) -> &str {
        &self.address
    }

    fn calls_run_here(&self) -> bool {
        self.rpc.values().is_some()
    }

    async fn get_schema(&self) -> Res<Arc<ProviderSchema>> {
        self.schema().await
    }

    async fn validate_provider_config(&self, config: &Value) -> Res<Diagnostics> {
        const OP: &str = "ValidateProviderConfig";
        let s = self.schema().await?;
        let config = self.encode(OP, config, &s.provider.block.implied_type())?;
        let r = self
            .rpc
            .validate_provider_config(tf::validate_provider_config::Request { config })
            .await
            .map_err(self.call_err(OP))?;
        Ok(convert::diagnostics(&r.diagnostics))
    }

    async fn validate_resource_config(&self, type_name: &str, config: &Value) -> Res<Diagnostics> {
        const OP: &str = "ValidateResourceConfig";
        let (_, ty) = self.resource_type(type_name).await?;
        if let Some((server, [config])) = self.direct(type_name, [config]) {
            return Ok(convert::diagnostics(
                &server.validate(type_name, &config).await,
            ));
        }
        let config = self.encode(OP, config, &ty)?;
        let call = async {
            let req = tf::validate_resource_config::Request {
                type_name: type_name.into(),
                config: config.clone(),
                client_capabilities: self.capabilities(),
            };
            let r = self
                .rpc
                .validate_resource_config(req)
                .await
                .map_err(self.call_err(OP))?;
            Ok(convert::diagnostics(&r.diagnostics))
        };
        self.validate_once(false, type_name, &config, call).await
    }

    async fn validate_data_resource_config(
        &self,
        type_name: &str,
        config: &Value,
    ) -> Res<Diagnostics> {
        const OP: &str = "ValidateDataResourceConfig";
        let (_, ty) = self.data_type(type_name).await?;
        let config = self.encode(OP, config, &ty)?;
        let call = async {
            let req = tf::validate_data_resource_config::Request {
                type_name: type_name.into(),
                config: config.clone(),
            };
            let r = self
                .rpc
                .validate_data_resource_config(req)
                .await
                .map_err(self.call_err(OP))?;
            Ok(convert::diagnostics(&r.diagnostics))
        };
        self.validate_once(true, type_name, &config, call).await
    }

    async fn configure_provider(
        &self,
        terraform_version: &str,
        config: &Value,
    ) -> Res<Diagnostics> {
        const OP: &str = "ConfigureProvider";
        let s = self.schema().await?;
        // Providers that do not declare GetProviderSchema optional (older
        // SDKs) expect it on every instance before ConfigureProvider, as
        // Terraform does; the answer is not converted again.
        if !s.capabilities.get_provider_schema_optional
            && !self.asked_schema.swap(true, Ordering::AcqRel)
        {
            self.rpc
                .get_provider_schema(Default::default())
                .await
                .map_err(self.call_err("GetProviderSchema"))?;
        }
        let req = tf::configure_provider::Request {
            terraform_version: terraform_version.into(),
            config: self.encode(OP, config, &s.provider.block.implied_type())?,
            client_capabilities: self.capabilities(),
        };
        let r = self
            .rpc
            .configure_provider(req)
            .await
            .map_err(self.call_err(OP))?;
        Ok(convert::diagnostics(&r.diagnostics))
    }

    async fn upgrade_resource_state(&self, req: UpgradeRequest<'_>) -> Res<UpgradeResponse> {
        const OP: &str = "UpgradeResourceState";
        let (_, ty) = self.resource_type(req.type_name).await?;
        let wire = tf::upgrade_resource_state::Request {
            type_name: req.type_name.into(),
            version: req.version,
            raw_state: Some(tf::RawState {
                json: req.raw_state_json.to_vec(),
                flatmap: req
                    .raw_state_flatmap
                    .map(|f| f.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
                    .unwrap_or_default(),
            }),
        };
        let r = self
            .rpc
            .upgrade_resource_state(wire)
            .await
            .map_err(self.call_err(OP))?;
        Ok(UpgradeResponse {
            upgraded_state: self.decode(OP, "upgraded_state", r.upgraded_state.as_ref(), &ty)?,
            diagnostics: convert::diagnostics(&r.diagnostics),
        })
    }

    async fn upgrade_stored(
        &self,
        type_name: &str,
        version: i64,
        attributes: &str,
    ) -> Res<UpgradeResponse> {
        let (_, ty) = self.resource_type(type_name).await?;
        match self.rpc.upgrade_current(type_name, version, attributes) {
            Some(Ok(v)) => Ok(UpgradeResponse {
                upgraded_state: v,
                diagnostics: Diagnostics::default(),
            }),
            Some(Err(d)) => Ok(UpgradeResponse {
                upgraded_state: Value::null(ty),
                diagnostics: convert::diagnostics(&d),
            }),
            None => {
                self.upgrade_resource_state(UpgradeRequest {
                    type_name,
                    version,
                    raw_state_json: attributes.as_bytes(),
                    raw_state_flatmap: None,
                })
                .await
            }
        }
    }

    async fn read_resource(&self, req: ReadRequest<'_>) -> Res<ReadResponse> {
        const OP: &str = "ReadResource";
        let (s, ty) = self.resource_type(req.type_name).await?;
        if req.provider_meta.is_none() {
            if let Some((server, [prior])) = self.direct(req.type_name, [req.prior_state]) {
                return Ok(
                    match server.read(req.type_name, &prior, req.private).await {
                        Ok((new_state, private)) => ReadResponse {
                            new_state,
                            private,
                            deferred: None,
                            diagnostics: Diagnostics::default(),
                        },
                        Err(d) => ReadResponse {
                            new_state: prior,
                            private: req.private.to_vec(),
                            deferred: None,
                            diagnostics: convert::diagnostics(&d),
                        },
                    },
                );
            }
        }
        let wire = tf::read_resource::Request {
            type_name: req.type_name.into(),
            current_state: self.encode(OP, req.prior_state, &ty)?,
            private: req.private.to_vec(),
            provider_meta: self.meta(OP, &s, req.provider_meta)?,
            client_capabilities: self.capabilities(),
            current_identity: None,
        };
        let r = self
            .rpc
            .read_resource(wire)
            .await
            .map_err(self.call_err(OP))?;
        Ok(ReadResponse {
            new_state: self.decode(OP, "new_state", r.new_state.as_ref(), &ty)?,
            private: r.private,
            deferred: convert::deferred(r.deferred.as_ref()),
            diagnostics: convert::diagnostics(&r.diagnostics),
        })
    }

    async fn plan_resource_change(&self, req: PlanRequest<'_>) -> Res<PlanResponse> {
        const OP: &str = "PlanResourceChange";
        let (s, ty) = self.resource_type(req.type_name).await?;
        let values = [req.prior_state, req.proposed_new_state, req.config];
        if let Some((server, [prior, proposed, config])) = req
            .provider_meta
            .is_none()
            .then(|| self.direct(req.type_name, values))
            .flatten()
        {
            let answer = server.plan(req.type_name, prior, proposed, config).await;
            return Ok(match answer {
                Ok((planned_state, requires_replace, d)) => PlanResponse {
                    planned_state,
                    requires_replace,
                    planned_private: req.prior_private.to_vec(),
                    legacy_type_system: false,
                    deferred: None,
                    diagnostics: convert::diagnostics(&d),
                },
                Err(d) => PlanResponse {
                    planned_state: Value::null(ty),
                    requires_replace: Vec::new(),
                    planned_private: Vec::new(),
                    legacy_type_system: false,
                    deferred: None,
                    diagnostics: convert::diagnostics(&d),
                },
            });
        }
        let wire = tf::plan_resource_change::Request {
            type_name: req.type_name.into(),
            prior_state: self.encode(OP, req.prior_state, &ty)?,
            proposed_new_state: self.encode(OP, req.proposed_new_state, &ty)?,
            config: self.encode(OP, req.config, &ty)?,
            prior_private: req.prior_private.to_vec(),
            provider_meta: self.meta(OP, &s, req.provider_meta)?,
            client_capabilities: self.capabilities(),
            ..Default::default()
        };
        let r = self
            .rpc
            .plan_resource_change(wire)
            .await
            .map_err(self.call_err(OP))?;
        Ok(PlanResponse {
            planned_state: self.decode(OP, "planned_state", r.planned_state.as_ref(), &ty)?,
            requires_replace: r.requires_replace.iter().map(convert::path_from).collect(),
            planned_private: r.planned_private,
            legacy_type_system: r.legacy_type_system,
            deferred: convert::deferred(r.deferred.as_ref()),
            diagnostics: convert::diagnostics(&r.diagnostics),
        })
    }

    async fn apply_resource_change(&self, req: ApplyRequest<'_>) -> Res<ApplyResponse> {
        const OP: &str = "ApplyResourceChange";
        let (s, ty) = self.resource_type(req.type_name).await?;
        let values = [req.prior_state, req.planned_state, req.config];
        if let Some((server, [prior, planned, config])) = req
            .provider_meta
            .is_none()
            .then(|| self.direct(req.type_name, values))
            .flatten()
        {
            let answer = server
                .apply(req.type_name, prior.clone(), planned, config)
                .await;
            return Ok(match answer {
                Ok((new_state, private)) => ApplyResponse {
                    new_state,
                    private,
                    legacy_type_system: false,
                    diagnostics: Diagnostics::default(),
                },
                Err(d) => ApplyResponse {
                    new_state: prior,
                    private: req.planned_private.to_vec(),
                    legacy_type_system: false,
                    diagnostics: convert::diagnostics(&d),
                },
            });
        }
        let wire = tf::apply_resource_change::Request {
            type_name: req.type_name.into(),
            prior_state: self.encode(OP, req.prior_state, &ty)?,
            planned_state: self.encode(OP, req.planned_state, &ty)?,
            config: self.encode(OP, req.config, &ty)?,
            planned_private: req.planned_private.to_vec(),
            provider_meta: self.meta(OP, &s, req.provider_meta)?,
            planned_identity: None,
        };
        let r = self
            .rpc
            .apply_resource_change(wire)
            .await
            .map_err(self.call_err(OP))?;
        Ok(ApplyResponse {
            new_state: self.decode(OP, "new_state", r.new_state.as_ref(), &ty)?,
            private: r.private,
            legacy_type_system: r.legacy_type_system,
            diagnostics: convert::diagnostics(&r.diagnostics),
        })
    }

    async fn import_resource_state(&self, type_name: &str, id: &str) -> Res<ImportResponse> {
        const OP: &str = "ImportResourceState";
        let (s, _) = self.resource_type(type_name).await?;
        let wire = tf::import_resource_state::Request {
            type_name: type_name.into(),
            id: id.into(),
            client_capabilities: self.capabilities(),
            identity: None,
        };
        let r = self
            .rpc
            .import_resource_state(wire)
            .await
            .map_err(self.call_err(OP))?;
        let mut imported = Vec::with_capacity(r.imported_resources.len());
        for i in &r.imported_resources {
            // An import may return objects of other types of the same
            // provider; each decodes against its own schema.
            let Some(schema) = s.resources.get(&i.type_name) else {
                return Err(self.invalid(OP, format!("imported an object of type {:?}, which the provider's schema does not have", i.type_name)));
            };
            let state = self.decode(
                OP,
                "imported state",
                i.state.as_ref(),
                &schema.block.implied_type(),
            )?;
            imported.push(ImportedResource {
                type_name: i.type_name.clone(),
                state,
                private: i.private.clone(),
            });
        }
        Ok(ImportResponse {
            imported,
            deferred: convert::deferred(r.deferred.as_ref()),
            diagnostics: convert::diagnostics(&r.diagnostics),
        })
    }

    async fn read_data_source(&self, req: ReadDataRequest<'_>) -> Res<ReadDataResponse> {
        const OP: &str = "ReadDataSource";
        let (s, ty) = self.data_type(req.type_name).await?;
        let wire = tf::read_data_source::Request {
            type_name: req.type_name.into(),
            config: self.encode(OP, req.config, &ty)?,
            provider_meta: self.meta(OP, &s, req.provider_meta)?,
            client_capabilities: self.capabilities(),
        };
        let r = self
            .rpc
            .read_data_source(wire)
            .await
            .map_err(self.call_err(OP))?;
        Ok(ReadDataResponse {
            state: self.decode(OP, "state", r.state.as_ref(), &ty)?,
            deferred: convert::deferred(r.deferred.as_ref()),
            diagnostics: convert::diagnostics(&r.diagnostics),
        })
    }

    async fn validate_ephemeral_resource_config(
        &self,
        type_name: &str,
        config: &Value,
    ) -> Res<Diagnostics> {
        const OP: &str = "ValidateEphemeralResourceConfig";
        let ty = self.ephemeral_type(type_name).await?;
        let req = tf::validate_ephemeral_resource_config::Request {
            type_name: type_name.into(),
            config: self.encode(OP, config, &ty)?,
        };
        let r = self
            .rpc
            .validate_ephemeral_resource_config(req)
            .await
            .map_err(self.call_err(OP))?;
        Ok(convert::diagnostics(&r.diagnostics))
    }

    async fn open_ephemeral_resource(
        &self,
        type_name: &str,
        config: &Value,
    ) -> Res<OpenEphemeralResponse> {
        const OP: &str = "OpenEphemeralResource";
        let ty = self.ephemeral_type(type_name).await?;
        let req = tf::open_ephemeral_resource::Request {
            type_name: type_name.into(),
            config: self.encode(OP, config, &ty)?,
            client_capabilities: self.capabilities(),
        };
        let r = self
            .rpc
            .open_ephemeral_resource(req)
            .await
            .map_err(self.call_err(OP))?;
        Ok(OpenEphemeralResponse {
            result: self.decode(OP, "result", r.result.as_ref(), &ty)?,
            private: r.private.unwrap_or_default(),
            renew_at: timestamp(r.renew_at.as_ref()),
            deferred: convert::deferred(r.deferred.as_ref()),
            diagnostics: convert::diagnostics(&r.diagnostics),
        })
    }

    async fn renew_ephemeral_resource(
        &self,
        type_name: &str,
        private: &[u8],
    ) -> Res<RenewEphemeralResponse> {
        const OP: &str = "RenewEphemeralResource";
        let req = tf::renew_ephemeral_resource::Request {
            type_name: type_name.into(),
            private: Some(private.to_vec()),
        };
        let r = self
            .rpc
            .renew_ephemeral_resource(req)
            .await
            .map_err(self.call_err(OP))?;
        Ok(RenewEphemeralResponse {
            private: r.private.unwrap_or_default(),
            renew_at: timestamp(r.renew_at.as_ref()),
            diagnostics: convert::diagnostics(&r.diagnostics),
        })
    }

    async fn close_ephemeral_resource(&self, type_name: &str, private: &[u8]) -> Res<Diagnostics> {
        const OP: &str = "CloseEphemeralResource";
        let req = tf::close_ephemeral_resource::Request {
            type_name: type_name.into(),
            private: Some(private.to_vec()),
        };
        let r = self
            .rpc
            .close_ephemeral_resource(req)
            .await
            .map_err(self.call_err(OP))?;
        Ok(convert::diagnostics(&r.diagnostics))
    }

    async fn call_function(&self, name: &str, args: &[Value]) -> Res<Result<Value, FunctionError>> {
        const OP: &str = "CallFunction";
        let s = self.schema().await?;
        let Some(f) = s.functions.get(name) else {
            return Err(ProviderError::UnknownType {
                provider: self.address.clone(),
                kind: SchemaKind::Function,
                name: name.into(),
            });
        };
        let mut arguments = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            let ty = match (f.params.get(i), &f.variadic) {
                (Some(p), _) | (None, Some(p)) => &p.ty,
                (None, None) => {
                    return Ok(Err(FunctionError {
                        text: format!(
                            "too many arguments: {} given, at most {}",
                            args.len(),
                            f.params.len()
                        ),
                        argument: None,
                    }))
                }
            };
            arguments.extend(self.encode(OP, a, ty)?);
        }
        let r = self
            .rpc
            .call_function(tf::call_function::Request {
                name: name.into(),
                arguments,
            })
            .await
            .map_err(self.call_err(OP))?;
        if let Some(e) = r.error {
            return Ok(Err(FunctionError {
                text: e.text,
                argument: e.function_argument,
            }));
        }
        self.decode(OP, "result", r.result.as_ref(), &f.return_type)
            .map(Ok)
    }

    async fn stop(&self) -> Res<Option<String>> {
        let r = self
            .rpc
            .stop_provider(Default::default())
            .await
            .map_err(self.call_err("StopProvider"))?;
        Ok(Some(r.error).filter(|e| !e.is_empty()))
    }

    async fn close(&self) {
        self.rpc.close().await;
    }
}

#[cfg(test)]
mod tests {
    use super::rpc::{CallError, Rpc};
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Mutex;
    use terrane_schema::{Attribute, Block, Schema};

    /// A transport that answers the two validation calls (a warning naming
    /// the config's `n`, or a transport failure while `fail` is set) and
    /// counts them; every other call is refused.
    #[derive(Default)]
    struct Counting {
        calls: AtomicUsize,
        fail: AtomicBool,
        seen: Mutex<Vec<(bool, String)>>,
    }

    impl Counting {
        fn answer(
            &self,
            data: bool,
            type_name: &str,
            config: &Option<tf::DynamicValue>,
        ) -> Result<Vec<tf::Diagnostic>, CallError> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            if self.fail.load(Ordering::SeqCst) {
                return Err(CallError::Crashed("connection reset".into()));
            }
            let v = msgpack::decode(&config.as_ref().unwrap().msgpack, &config_type()).unwrap();
            let n = v
                .get_attr("n")
                .map(|n| format!("{n:?}"))
                .unwrap_or_default();
            self.seen.lock().unwrap().push((data, n.clone()));
            Ok(vec![tf::Diagnostic {
                severity: 2,
                summary: format!("checked {type_name} n={n}"),
                ..Default::default()
            }])
        }
    }

    /// The two validation calls answer; the rest are refused (the
    /// trait's default).
    #[async_trait::async_trait]
    impl Rpc for Counting {
        async fn validate_resource_config(
            &self,
            r: tf::validate_resource_config::Request,
        ) -> Result<tf::validate_resource_config::Response, CallError> {
            tokio::task::yield_now().await;
            let diagnostics = self.answer(false, &r.type_name, &r.config)?;
            Ok(tf::validate_resource_config::Response { diagnostics })
        }
        async fn validate_data_resource_config(
            &self,
            r: tf::validate_data_resource_config::Request,
        ) -> Result<tf::validate_data_resource_config::Response, CallError> {
            tokio::task::yield_now().await;
            let diagnostics = self.answer(true, &r.type_name, &r.config)?;
            Ok(tf::validate_data_resource_config::Response { diagnostics })
        }
        async fn close(&self) {}
    }

    fn config_type() -> Type {
        block().implied_type()
    }

    fn block() -> Block {
        Block::new().attr("n", Attribute::optional(Type::Number))
    }

    fn provider() -> Arc<ProtocolProvider<Counting>> {
        let mut s = ProviderSchema::default();
        s.resources
            .insert("t_thing".into(), Schema::new(0, block()));
        s.data_sources
            .insert("t_thing".into(), Schema::new(0, block()));
        let cell: SchemaCell = Arc::new(OnceCell::new_with(Some(Arc::new(s))));
        Arc::new(ProtocolProvider::new(
            "example.com/test/t",
            Counting::default(),
            cell,
            ClientCapabilities::default(),
        ))
    }

    fn config(n: Option<i64>) -> Value {
        let n = n.map_or(Value::unknown(Type::Number), Value::number);
        Value::object([("n".to_string(), n)].into_iter().collect())
    }

    struct Case {
        name: &'static str,
        /// (data source?, n; None = unknown) per call, all made at once.
        calls: Vec<(bool, Option<i64>)>,
        /// Calls that reach the transport.
        want_calls: usize,
    }

    async fn check(case: Case) {
        let p = provider();
        let mut asks = tokio::task::JoinSet::new();
        for &(data, n) in &case.calls {
            let p = p.clone();
            asks.spawn(async move {
                let c = config(n);
                let d = if data {
                    p.validate_data_resource_config("t_thing", &c).await
                } else {
                    p.validate_resource_config("t_thing", &c).await
                };
                (n, d.map_err(|e| e.to_string()))
            });
        }
        while let Some(r) = asks.join_next().await {
            let (n, d) = r.unwrap();
            let d = d.unwrap_or_else(|e| panic!("case {}: {e}", case.name));
            let want = format!("checked t_thing n={:?}", config(n).get_attr("n").unwrap());
            assert_eq!(
                d.0.iter().map(|d| d.summary.clone()).collect::<Vec<_>>(),
                vec![want],
                "case {}: every asker gets its own config's answer",
                case.name
            );
        }
        assert_eq!(
            p.rpc.calls.load(Ordering::SeqCst),
            case.want_calls,
            "case {}: transport calls ({:?})",
            case.name,
            p.rpc.seen.lock().unwrap()
        );
    }

    #[tokio::test]
    async fn validation_is_asked_once_per_distinct_configuration() {
        let same = |n: usize| (0..n).map(|_| (false, Some(8))).collect::<Vec<_>>();
        let cases = vec![
            Case {
                name: "one_config_many_instances",
                calls: same(50),
                want_calls: 1,
            },
            Case {
                name: "distinct_configs",
                calls: (0..5).map(|i| (false, Some(i))).collect(),
                want_calls: 5,
            },
            Case {
                name: "repeats_among_distinct",
                calls: vec![
                    (false, Some(1)),
                    (false, Some(2)),
                    (false, Some(1)),
                    (false, Some(2)),
                ],
                want_calls: 2,
            },
            Case {
                name: "unknown_is_its_own_config",
                calls: vec![(false, None), (false, Some(0)), (false, None)],
                want_calls: 2,
            },
            Case {
                name: "data_source_and_resource_apart",
                calls: vec![(false, Some(3)), (true, Some(3)), (true, Some(3))],
                want_calls: 2,
            },
        ];
        for case in cases {
            check(case).await;
        }
    }

    #[tokio::test]
    async fn a_transport_failure_is_not_remembered() {
        let p = provider();
        p.rpc.fail.store(true, Ordering::SeqCst);
        let e = p
            .validate_resource_config("t_thing", &config(Some(1)))
            .await
            .unwrap_err();
        assert!(e.to_string().contains("ValidateResourceConfig"), "{e}");
        p.rpc.fail.store(false, Ordering::SeqCst);
        let d = p
            .validate_resource_config("t_thing", &config(Some(1)))
            .await
            .unwrap();
        assert_eq!(d.0.len(), 1);
        p.validate_resource_config("t_thing", &config(Some(1)))
            .await
            .unwrap();
        assert_eq!(
            p.rpc.calls.load(Ordering::SeqCst),
            2,
            "failed once, then answered once and remembered"
        );
    }
}
