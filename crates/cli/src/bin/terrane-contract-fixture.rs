//! Test fixture (not a product binary): a provider that breaks the
//! lifecycle contract in the way `TERRANE_BROKEN_MODE` names, one rule
//! family at a time, so the contract tests can prove terrane catches each
//! with Terraform's title and keeps its state intact.
//!
//! Modes: `invalid_plan` (a configured value planned differently),
//! `final_plan` (a known computed value changes between plan and apply),
//! `inconsistent_result` (apply returns a value other than planned),
//! `unknown_after_apply`, `null_after_apply`, `invalid_refresh` (read
//! returns an unknown), `null_data` (a data source returns null),
//! `apply_error` (apply fails after creating: the object is tainted),
//! `hang_with_child` (create starts a child process, `sleep`, and never
//! returns: the process tests kill terrane meanwhile and look for both).

use async_trait::async_trait;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use terrane_sdk::{
    Applied, Attr, Ctx, DataSource, Diagnostics, PlanState, Provider, Resource, ResourceSchema,
    ResourceType, SimpleDataSource, SimpleResource, Value,
};
use terrane_value::Type;

fn mode() -> String {
    std::env::var("TERRANE_BROKEN_MODE").unwrap_or_default()
}

struct Broken;

impl Provider for Broken {
    fn type_name(&self) -> &str {
        "broken"
    }
    fn version(&self) -> &str {
        "0.0.1"
    }
    fn resources(&self) -> Vec<Arc<dyn ResourceType>> {
        vec![Arc::new(SimpleResource {
            name: "broken_thing",
            schema,
            resource: Thing,
        })]
    }
    fn data_sources(&self) -> Vec<Arc<dyn terrane_sdk::DataSourceType>> {
        vec![Arc::new(SimpleDataSource {
            name: "broken_lookup",
            schema: data_schema,
            source: Lookup,
        })]
    }
}

fn schema() -> ResourceSchema {
    ResourceSchema::new(0)
        .attr("value", Attr::string().required())
        .attr("stamp", Attr::string().computed())
        .attr("id", Attr::string().computed())
}

fn data_schema() -> ResourceSchema {
    ResourceSchema::new(0)
        .attr("key", Attr::string().required())
        .attr("result", Attr::string().computed())
}

static PLANS: AtomicUsize = AtomicUsize::new(0);

#[derive(Clone)]
struct Thing;

fn set(v: &Value, k: &str, x: Value) -> Value {
    terrane_sdk::with_attr(v, k, x)
}

#[async_trait]
impl Resource for Thing {
    async fn create(
        &self,
        _c: &Ctx,
        planned: &Value,
        _cfg: &Value,
    ) -> Result<Applied, Diagnostics> {
        let done = set(
            &set(planned, "id", Value::string("thing-1")),
            "stamp",
            planned
                .get_attr("stamp")
                .filter(|s| s.is_known())
                .cloned()
                .unwrap_or_else(|| Value::string("s")),
        );
        match mode().as_str() {
            "inconsistent_result" => Ok(Applied::new(set(
                &done,
                "value",
                Value::string("something else"),
            ))),
            "apply_error" => Err(Diagnostics::error(
                "Creation half-failed",
                "The object was created but could not be finished.",
            )),
            "hang_with_child" => {
                let child = std::process::Command::new("sleep")
                    .arg("600")
                    .stdin(std::process::Stdio::null())
                    .spawn();
                if let Err(e) = child {
                    return Err(Diagnostics::error(
                        "Cannot start the child process",
                        e.to_string(),
                    ));
                }
                std::future::pending().await
            }
            _ => Ok(Applied::new(done)),
        }
    }
    async fn read(&self, _c: &Ctx, s: &Value, _p: &[u8]) -> Result<Option<Applied>, Diagnostics> {
        Ok(Some(Applied::new(s.clone())))
    }
    async fn update(
        &self,
        _c: &Ctx,
        _prior: &Value,
        planned: &Value,
        _cfg: &Value,
    ) -> Result<Applied, Diagnostics> {
        Ok(Applied::new(planned.clone()))
    }
    async fn delete(&self, _c: &Ctx, _prior: &Value) -> Result<(), Diagnostics> {
        Ok(())
    }
    async fn modify_plan(&self, _c: &Ctx, plan: &mut PlanState) -> Diagnostics {
        match mode().as_str() {
            "invalid_plan" if !plan.config.is_null() => {
                plan.planned = set(&plan.planned, "value", Value::string("not what you wrote"));
            }
            "final_plan" if plan.prior.is_null() && !plan.planned.is_null() => {
                let n = PLANS.fetch_add(1, Ordering::SeqCst);
                plan.planned = set(&plan.planned, "stamp", Value::string(format!("plan-{n}")));
            }
            _ => {}
        }
        Diagnostics::new()
    }
}

#[derive(Clone)]
struct Lookup;

#[async_trait]
impl DataSource for Lookup {
    async fn read(&self, _c: &Ctx, config: &Value) -> Result<Value, Diagnostics> {
        if mode() == "null_data" {
            return Ok(Value::null(config.ty().clone()));
        }
        Ok(set(config, "result", Value::string("found")))
    }
}

/// The SDK refuses to send unknown or null results after a create, so the
/// two modes that need them tamper with the SDK server's response on its
/// way out: the wire carries exactly the violation the engine must catch.
/// (Protobuf types appear here only because this fixture impersonates a
/// broken provider at the wire level.)
struct Tamper(terrane_sdk::ProviderServer<Broken>);

use terrane_tfplugin6::tfplugin6 as tf;
use tf::provider_server::Provider as Wire;
use tonic::{Request, Response, Status};
type R<T> = Result<Response<T>, Status>;

/// The whole impl, so `async_trait` sees every method: passed-through
/// ones and the tampering `apply_resource_change`.
macro_rules! tamper_impl {
    ($($name:ident: $module:ident),* $(,)?) => {
        #[tonic::async_trait]
        impl Wire for Tamper {
            $(async fn $name(&self, r: Request<tf::$module::Request>) -> R<tf::$module::Response> {
                self.0.$name(r).await
            })*

            async fn apply_resource_change(&self, r: Request<tf::apply_resource_change::Request>) -> R<tf::apply_resource_change::Response> {
                tampered_apply(&self.0, r).await
            }

            async fn read_resource(&self, r: Request<tf::read_resource::Request>) -> R<tf::read_resource::Response> {
                tampered_read(&self.0, r).await
            }
        }
    };
}

fn thing_type() -> Type {
    Type::object([
        ("value", Type::String),
        ("stamp", Type::String),
        ("id", Type::String),
    ])
}

tamper_impl!(
    get_metadata: get_metadata,
    get_provider_schema: get_provider_schema,
    validate_provider_config: validate_provider_config,
    configure_provider: configure_provider,
    validate_resource_config: validate_resource_config,
    validate_data_resource_config: validate_data_resource_config,
    upgrade_resource_state: upgrade_resource_state,
    plan_resource_change: plan_resource_change,
    import_resource_state: import_resource_state,
    read_data_source: read_data_source,
    get_functions: get_functions,
    call_function: call_function,
    stop_provider: stop_provider,
);

async fn tampered_apply(
    inner: &terrane_sdk::ProviderServer<Broken>,
    r: Request<tf::apply_resource_change::Request>,
) -> R<tf::apply_resource_change::Response> {
    let m = mode();
    if m != "unknown_after_apply" && m != "null_after_apply" {
        return inner.apply_resource_change(r).await;
    }
    let req = r.into_inner();
    let planned_bytes = req
        .planned_state
        .as_ref()
        .map(|d| d.msgpack.clone())
        .unwrap_or_default();
    let planned = terrane_value::msgpack::decode(&planned_bytes, &thing_type())
        .map_err(|e| Status::internal(e.to_string()))?;
    if planned.is_null() {
        return inner.apply_resource_change(Request::new(req)).await;
    }
    let new = if m == "null_after_apply" {
        Value::null(thing_type())
    } else {
        set(
            &set(&planned, "id", Value::string("thing-1")),
            "stamp",
            Value::unknown(Type::String),
        )
    };
    let bytes = terrane_value::msgpack::encode(&new, &thing_type())
        .map_err(|e| Status::internal(e.to_string()))?;
    Ok(Response::new(tf::apply_resource_change::Response {
        new_state: Some(tf::DynamicValue {
            msgpack: bytes,
            json: Vec::new(),
        }),
        ..Default::default()
    }))
}

async fn tampered_read(
    inner: &terrane_sdk::ProviderServer<Broken>,
    r: Request<tf::read_resource::Request>,
) -> R<tf::read_resource::Response> {
    if mode() != "invalid_refresh" {
        return inner.read_resource(r).await;
    }
    let req = r.into_inner();
    let prior_bytes = req
        .current_state
        .as_ref()
        .map(|d| d.msgpack.clone())
        .unwrap_or_default();
    let prior = terrane_value::msgpack::decode(&prior_bytes, &thing_type())
        .map_err(|e| Status::internal(e.to_string()))?;
    let new = set(&prior, "stamp", Value::unknown(Type::String));
    let bytes = terrane_value::msgpack::encode(&new, &thing_type())
        .map_err(|e| Status::internal(e.to_string()))?;
    Ok(Response::new(tf::read_resource::Response {
        new_state: Some(tf::DynamicValue {
            msgpack: bytes,
            json: Vec::new(),
        }),
        private: req.private,
        ..Default::default()
    }))
}

fn main() {
    let address = "registry.terraform.io/terrane/broken".to_string();
    terrane_plugin::serve_main(
        Tamper(terrane_sdk::ProviderServer::new(Broken)),
        terrane_plugin::ServeOptions::new(address),
    )
}
