//! Protocol 5 messages as protocol 6 messages and back.
//!
//! Protocol 5 has the same operations as protocol 6 under older names
//! (GetSchema, PrepareProviderConfig, ValidateResourceTypeConfig,
//! ValidateDataSourceConfig, Configure, Stop), and its request and response
//! messages carry the same fields under the same numbers. Those messages
//! are converted by their wire bytes ([`transcode`]): a field only one
//! side knows (6's `planned_private`, `store_planned_private`,
//! `computed_blocks_allowed`) is dropped on the way, as a peer speaking
//! the other version would drop it. The tests below pin every pair.
//!
//! Three kinds of messages differ and are converted field by field:
//! * schemas: protocol 5 has no nested attribute types, and its
//!   `write_only` is field 10 (6's `nested_type`); a protocol-6 schema with
//!   nested attributes cannot be served as 5 ([`NeedsProtocol6`]);
//! * GetProviderSchema: 5's `action_schemas` is 6's field 11 (6 put
//!   `state_store_schemas` at 10);
//! * GetMetadata: 5's `actions` is field 8 (6's `state_stores`).

use crate::tfplugin5 as t5;
use prost::Message;
use std::collections::HashMap;
use terrane_tfplugin6::tfplugin6 as t6;

/// A message of one protocol as the same-numbered message of the other.
/// Fails only if the two definitions disagree on a field's wire type,
/// which the tests rule out for every pair used.
pub fn transcode<A: Message, B: Message + Default>(a: &A) -> Result<B, String> {
    B::decode(a.encode_to_vec().as_slice()).map_err(|e| {
        format!(
            "cannot carry a {} across protocol versions: {e}",
            std::any::type_name::<A>()
        )
    })
}

/// A protocol-6 schema that protocol 5 cannot express.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NeedsProtocol6 {
    /// Where: e.g. `resource "x_thing" attribute "rules"`.
    pub at: String,
}

impl std::fmt::Display for NeedsProtocol6 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} uses a nested attribute type, which only plugin protocol 6 can carry",
            self.at
        )
    }
}

// ---------------------------------------------------------------- schemas

fn block_to6(b: &t5::schema::Block) -> t6::schema::Block {
    t6::schema::Block {
        version: b.version,
        attributes: b
            .attributes
            .iter()
            .map(|a| t6::schema::Attribute {
                name: a.name.clone(),
                r#type: a.r#type.clone(),
                nested_type: None,
                description: a.description.clone(),
                required: a.required,
                optional: a.optional,
                computed: a.computed,
                sensitive: a.sensitive,
                description_kind: a.description_kind,
                deprecated: a.deprecated,
                write_only: a.write_only,
                deprecation_message: String::new(),
            })
            .collect(),
        block_types: b
            .block_types
            .iter()
            .map(|n| t6::schema::NestedBlock {
                type_name: n.type_name.clone(),
                block: n.block.as_ref().map(block_to6),
                nesting: n.nesting,
                min_items: n.min_items,
                max_items: n.max_items,
            })
            .collect(),
        description: b.description.clone(),
        description_kind: b.description_kind,
        deprecated: b.deprecated,
        deprecation_message: String::new(),
        computed: false,
    }
}

/// A protocol-5 schema as protocol 6 (always possible).
pub fn schema_to6(s: &t5::Schema) -> t6::Schema {
    t6::Schema {
        version: s.version,
        block: s.block.as_ref().map(block_to6),
    }
}

fn block_to5(b: &t6::schema::Block, at: &str) -> Result<t5::schema::Block, NeedsProtocol6> {
    let mut attributes = Vec::with_capacity(b.attributes.len());
    for a in &b.attributes {
        if a.nested_type.is_some() {
            return Err(NeedsProtocol6 {
                at: format!("{at} attribute {:?}", a.name),
            });
        }
        attributes.push(t5::schema::Attribute {
            name: a.name.clone(),
            r#type: a.r#type.clone(),
            description: a.description.clone(),
            required: a.required,
            optional: a.optional,
            computed: a.computed,
            sensitive: a.sensitive,
            description_kind: a.description_kind,
            deprecated: a.deprecated,
            write_only: a.write_only,
        });
    }
    let mut block_types = Vec::with_capacity(b.block_types.len());
    for n in &b.block_types {
        let inner = format!("{at} block {:?}", n.type_name);
        block_types.push(t5::schema::NestedBlock {
            type_name: n.type_name.clone(),
            block: n.block.as_ref().map(|b| block_to5(b, &inner)).transpose()?,
            nesting: n.nesting,
            min_items: n.min_items,
            max_items: n.max_items,
        });
    }
    Ok(t5::schema::Block {
        version: b.version,
        attributes,
        block_types,
        description: b.description.clone(),
        description_kind: b.description_kind,
        deprecated: b.deprecated,
    })
}

/// A protocol-6 schema as protocol 5; `at` names it in the error.
pub fn schema_to5(s: &t6::Schema, at: &str) -> Result<t5::Schema, NeedsProtocol6> {
    Ok(t5::Schema {
        version: s.version,
        block: s.block.as_ref().map(|b| block_to5(b, at)).transpose()?,
    })
}

fn map_to6(m: &HashMap<String, t5::Schema>) -> HashMap<String, t6::Schema> {
    m.iter().map(|(k, s)| (k.clone(), schema_to6(s))).collect()
}

fn map_to5(
    m: &HashMap<String, t6::Schema>,
    kind: &str,
) -> Result<HashMap<String, t5::Schema>, NeedsProtocol6> {
    m.iter()
        .map(|(k, s)| Ok((k.clone(), schema_to5(s, &format!("{kind} {k:?}"))?)))
        .collect()
}

fn each<A: Message, B: Message + Default>(xs: &[A]) -> Result<Vec<B>, String> {
    xs.iter().map(transcode).collect()
}

fn each_value<A: Message, B: Message + Default>(
    m: &HashMap<String, A>,
) -> Result<HashMap<String, B>, String> {
    m.iter()
        .map(|(k, v)| Ok((k.clone(), transcode(v)?)))
        .collect()
}

/// A protocol-5 GetSchema answer as protocol 6's GetProviderSchema.
pub fn provider_schema_to6(
    r: &t5::get_provider_schema::Response,
) -> Result<t6::get_provider_schema::Response, String> {
    Ok(t6::get_provider_schema::Response {
        provider: r.provider.as_ref().map(schema_to6),
        resource_schemas: map_to6(&r.resource_schemas),
        data_source_schemas: map_to6(&r.data_source_schemas),
        functions: each_value(&r.functions)?,
        ephemeral_resource_schemas: map_to6(&r.ephemeral_resource_schemas),
        list_resource_schemas: map_to6(&r.list_resource_schemas),
        state_store_schemas: HashMap::new(),
        action_schemas: r
            .action_schemas
            .iter()
            .map(|(k, a)| {
                (
                    k.clone(),
                    t6::ActionSchema {
                        schema: a.schema.as_ref().map(schema_to6),
                    },
                )
            })
            .collect(),
        diagnostics: each(&r.diagnostics)?,
        provider_meta: r.provider_meta.as_ref().map(schema_to6),
        server_capabilities: r.server_capabilities.as_ref().map(transcode).transpose()?,
    })
}

/// Why a protocol-6 schema answer cannot be served as protocol 5.
#[derive(Debug)]
pub enum SchemaTo5Error {
    Needs6(NeedsProtocol6),
    Wire(String),
}

impl std::fmt::Display for SchemaTo5Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SchemaTo5Error::Needs6(n) => n.fmt(f),
            SchemaTo5Error::Wire(w) => f.write_str(w),
        }
    }
}

/// A protocol-6 GetProviderSchema answer as protocol 5's GetSchema answer.
/// State stores do not exist in protocol 5 and are left out.
pub fn provider_schema_to5(
    r: &t6::get_provider_schema::Response,
) -> Result<t5::get_provider_schema::Response, SchemaTo5Error> {
    let n = SchemaTo5Error::Needs6;
    let w = SchemaTo5Error::Wire;
    Ok(t5::get_provider_schema::Response {
        provider: r
            .provider
            .as_ref()
            .map(|s| schema_to5(s, "the provider configuration"))
            .transpose()
            .map_err(n)?,
        resource_schemas: map_to5(&r.resource_schemas, "resource").map_err(n)?,
        data_source_schemas: map_to5(&r.data_source_schemas, "data source").map_err(n)?,
        diagnostics: each(&r.diagnostics).map_err(w)?,
        provider_meta: r
            .provider_meta
            .as_ref()
            .map(|s| schema_to5(s, "provider_meta"))
            .transpose()
            .map_err(n)?,
        server_capabilities: r
            .server_capabilities
            .as_ref()
            .map(transcode)
            .transpose()
            .map_err(w)?,
        functions: each_value(&r.functions).map_err(w)?,
        ephemeral_resource_schemas: map_to5(&r.ephemeral_resource_schemas, "ephemeral resource")
            .map_err(n)?,
        list_resource_schemas: map_to5(&r.list_resource_schemas, "list resource").map_err(n)?,
        action_schemas: r
            .action_schemas
            .iter()
            .map(|(k, a)| {
                Ok((
                    k.clone(),
                    t5::ActionSchema {
                        schema: a
                            .schema
                            .as_ref()
                            .map(|s| schema_to5(s, &format!("action {k:?}")))
                            .transpose()?,
                        r#type: None,
                    },
                ))
            })
            .collect::<Result<_, NeedsProtocol6>>()
            .map_err(n)?,
    })
}

/// A protocol-6 GetMetadata answer as protocol 5's (5 has no state stores;
/// its `actions` is field 8).
pub fn metadata_to5(r: &t6::get_metadata::Response) -> Result<t5::get_metadata::Response, String> {
    Ok(t5::get_metadata::Response {
        server_capabilities: r.server_capabilities.as_ref().map(transcode).transpose()?,
        diagnostics: each(&r.diagnostics)?,
        data_sources: each(&r.data_sources)?,
        resources: each(&r.resources)?,
        functions: each(&r.functions)?,
        ephemeral_resources: each(&r.ephemeral_resources)?,
        list_resources: each(&r.list_resources)?,
        actions: each(&r.actions)?,
    })
}

/// Does any schema of this protocol-6 answer need protocol 6? The first
/// place that does, for a provider to say why it cannot serve protocol 5.
pub fn needs_protocol6(r: &t6::get_provider_schema::Response) -> Option<NeedsProtocol6> {
    match provider_schema_to5(r) {
        Err(SchemaTo5Error::Needs6(n)) => Some(n),
        _ => None,
    }
}

// ---------------------------------------------------------------- server

/// Serves a protocol-6 provider as protocol 5: every call is carried over
/// to the protocol-6 implementation and its answer back. Actions and the
/// Provisioner service are not served (Unimplemented), as for protocol 6.
pub struct Serve5<P>(pub std::sync::Arc<P>);

type R<T> = Result<tonic::Response<T>, tonic::Status>;

fn req<A: Message, B: Message + Default>(
    r: tonic::Request<A>,
) -> Result<tonic::Request<B>, tonic::Status> {
    transcode(r.get_ref())
        .map(tonic::Request::new)
        .map_err(tonic::Status::internal)
}

fn resp<A: Message, B: Message + Default>(r: tonic::Response<A>) -> R<B> {
    transcode(r.get_ref())
        .map(tonic::Response::new)
        .map_err(tonic::Status::internal)
}

/// The whole impl comes from one macro so that `async_trait` sees every
/// method (it does not expand macros inside the impl).
macro_rules! serve5 {
    ($($m5:ident : $n5:ident => $m6:ident),* $(,)?) => {
        #[tonic::async_trait]
        impl<P: t6::provider_server::Provider> t5::provider_server::Provider for Serve5<P> {
            $(async fn $m5(&self, r: tonic::Request<t5::$n5::Request>) -> R<t5::$n5::Response> {
                resp(t6::provider_server::Provider::$m6(&*self.0, req(r)?).await?)
            })*

            async fn get_metadata(
                &self,
                r: tonic::Request<t5::get_metadata::Request>,
            ) -> R<t5::get_metadata::Response> {
                let r = t6::provider_server::Provider::get_metadata(&*self.0, req(r)?).await?;
                metadata_to5(r.get_ref())
                    .map(tonic::Response::new)
                    .map_err(tonic::Status::internal)
            }

            async fn get_schema(
                &self,
                r: tonic::Request<t5::get_provider_schema::Request>,
            ) -> R<t5::get_provider_schema::Response> {
                let r = t6::provider_server::Provider::get_provider_schema(&*self.0, req(r)?).await?;
                provider_schema_to5(r.get_ref())
                    .map(tonic::Response::new)
                    .map_err(|e| tonic::Status::failed_precondition(e.to_string()))
            }

            async fn list_resource(
                &self,
                r: tonic::Request<t5::list_resource::Request>,
            ) -> R<tonic::codegen::BoxStream<t5::list_resource::Event>> {
                use tonic::codegen::tokio_stream::StreamExt;
                let events = t6::provider_server::Provider::list_resource(&*self.0, req(r)?).await?;
                let events = events
                    .into_inner()
                    .map(|e| e.and_then(|e| transcode(&e).map_err(tonic::Status::internal)));
                Ok(tonic::Response::new(Box::pin(events)))
            }
        }
    };
}

serve5! {
    prepare_provider_config: prepare_provider_config => validate_provider_config,
    validate_resource_type_config: validate_resource_type_config => validate_resource_config,
    validate_data_source_config: validate_data_source_config => validate_data_resource_config,
    upgrade_resource_state: upgrade_resource_state => upgrade_resource_state,
    get_resource_identity_schemas: get_resource_identity_schemas => get_resource_identity_schemas,
    upgrade_resource_identity: upgrade_resource_identity => upgrade_resource_identity,
    configure: configure => configure_provider,
    read_resource: read_resource => read_resource,
    plan_resource_change: plan_resource_change => plan_resource_change,
    apply_resource_change: apply_resource_change => apply_resource_change,
    import_resource_state: import_resource_state => import_resource_state,
    move_resource_state: move_resource_state => move_resource_state,
    read_data_source: read_data_source => read_data_source,
    validate_ephemeral_resource_config: validate_ephemeral_resource_config => validate_ephemeral_resource_config,
    open_ephemeral_resource: open_ephemeral_resource => open_ephemeral_resource,
    renew_ephemeral_resource: renew_ephemeral_resource => renew_ephemeral_resource,
    close_ephemeral_resource: close_ephemeral_resource => close_ephemeral_resource,
    validate_list_resource_config: validate_list_resource_config => validate_list_resource_config,
    get_functions: get_functions => get_functions,
    call_function: call_function => call_function,
    stop: stop => stop_provider,
}

/// The protocol-6 path of a protocol-5 call that [`Serve5`] only
/// transcodes and that a plan or apply makes once per instance: its
/// request's bytes decode as the protocol-6 request and its protocol-6
/// answer's bytes as the protocol-5 answer, as transcoding would carry
/// them, so a server may route it to the protocol-6 service as it is.
pub fn same_path6(path5: &str) -> Option<&'static str> {
    Some(match path5 {
        "/tfplugin5.Provider/ValidateResourceTypeConfig" => {
            "/tfplugin6.Provider/ValidateResourceConfig"
        }
        "/tfplugin5.Provider/ValidateDataSourceConfig" => {
            "/tfplugin6.Provider/ValidateDataResourceConfig"
        }
        "/tfplugin5.Provider/UpgradeResourceState" => "/tfplugin6.Provider/UpgradeResourceState",
        "/tfplugin5.Provider/ReadResource" => "/tfplugin6.Provider/ReadResource",
        "/tfplugin5.Provider/PlanResourceChange" => "/tfplugin6.Provider/PlanResourceChange",
        "/tfplugin5.Provider/ApplyResourceChange" => "/tfplugin6.Provider/ApplyResourceChange",
        "/tfplugin5.Provider/ImportResourceState" => "/tfplugin6.Provider/ImportResourceState",
        "/tfplugin5.Provider/ReadDataSource" => "/tfplugin6.Provider/ReadDataSource",
        _ => return None,
    })
}

#[cfg(test)]
mod tests;
