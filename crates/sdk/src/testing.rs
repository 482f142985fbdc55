//! A test harness for provider authors: runs a provider through lifecycle
//! steps in-process, without any Terraform binary, going through the real
//! protocol server (so values cross the same msgpack encoding) and applying
//! the same contract checks Terraform core applies: proposed new state,
//! plan validity, apply-result compatibility.
//!
//! ```text
//! let h = Harness::new(MyProvider);
//! h.configure(&Value::object_from([...])).await?;
//! let state = h.apply_config("my_thing", &null, &config).await?;   // create
//! assert!(h.plan("my_thing", &state, &config).await?.is_noop(&state));
//! ```

use crate::diag::Diagnostics;
use crate::provider::Provider;
use crate::server::ProviderServer;
use crate::wire;
use terrane_schema::objchange::{assert_object_compatible, assert_plan_valid, proposed_new};
use terrane_tfplugin6::tfplugin6::{self as tf, provider_server::Provider as _};
use terrane_value::{Path, Type, Value};
use tonic::Request;

/// The provider under test, behind its protocol server.
pub struct Harness<P> {
    server: ProviderServer<P>,
}

/// A plan the provider made.
#[derive(Debug, Clone)]
pub struct Planned {
    pub planned: Value,
    pub requires_replace: Vec<Path>,
}

impl Planned {
    /// Nothing would change relative to `prior`.
    pub fn is_noop(&self, prior: &Value) -> bool {
        self.requires_replace.is_empty() && self.planned.eq_ignoring_refinements(prior)
    }
}

fn diags(ds: &[tf::Diagnostic]) -> Diagnostics {
    let mut out = Diagnostics::new();
    for d in ds {
        if d.severity == tf::diagnostic::Severity::Error as i32 {
            out.push_error(d.summary.clone(), d.detail.clone());
        } else {
            out.push_warning(d.summary.clone(), d.detail.clone());
        }
    }
    out
}

fn fail_on(d: Diagnostics) -> Result<(), Diagnostics> {
    if d.has_errors() {
        Err(d)
    } else {
        Ok(())
    }
}

fn status(e: tonic::Status) -> Diagnostics {
    Diagnostics::error("RPC failed", e.to_string())
}

impl<P: Provider> Harness<P> {
    pub fn new(provider: P) -> Harness<P> {
        Harness {
            server: ProviderServer::new(provider),
        }
    }

    /// The implied type of a resource type's schema.
    pub async fn resource_type(
        &self,
        type_name: &str,
    ) -> Result<(terrane_schema::Block, Type), Diagnostics> {
        let resp = self
            .server
            .get_provider_schema(Request::new(Default::default()))
            .await
            .map_err(status)?
            .into_inner();
        fail_on(diags(&resp.diagnostics))?;
        let (_, s) = self.server_resource(type_name)?;
        let block = s.block_schema();
        let ty = block.implied_type();
        Ok((block, ty))
    }

    fn server_resource(
        &self,
        type_name: &str,
    ) -> Result<((), crate::schema::ResourceSchema), Diagnostics> {
        self.server.schema_of(type_name).map(|s| ((), s))
    }

    /// An object of the resource's type from the given attributes; the rest
    /// are null (empty blocks for nested blocks).
    pub async fn object(
        &self,
        type_name: &str,
        attrs: &[(&str, Value)],
    ) -> Result<Value, Diagnostics> {
        let (block, ty) = self.resource_type(type_name).await?;
        let mut m = block
            .empty_value()
            .entries()
            .map(|e| (*e).clone())
            .unwrap_or_default();
        for (k, v) in attrs {
            m.insert((*k).to_string(), v.clone());
        }
        Ok(Value::object_typed(&ty, m))
    }

    pub async fn configure(&self, config: &Value) -> Result<(), Diagnostics> {
        let ty = config.ty().clone();
        let r = self
            .server
            .configure_provider(Request::new(tf::configure_provider::Request {
                config: Some(wire::encode(config, &ty)?),
                ..Default::default()
            }))
            .await
            .map_err(status)?;
        fail_on(diags(&r.into_inner().diagnostics))
    }

    /// Validates, then plans `config` over `prior`, checking the plan as
    /// Terraform does ("Provider produced invalid plan").
    pub async fn plan(
        &self,
        type_name: &str,
        prior: &Value,
        config: &Value,
    ) -> Result<Planned, Diagnostics> {
        let (block, ty) = self.resource_type(type_name).await?;
        let v = self
            .server
            .validate_resource_config(Request::new(tf::validate_resource_config::Request {
                type_name: type_name.into(),
                config: Some(wire::encode(config, &ty)?),
                ..Default::default()
            }))
            .await
            .map_err(status)?;
        fail_on(diags(&v.into_inner().diagnostics))?;
        let proposed = proposed_new(&block, prior, config);
        let r = self
            .server
            .plan_resource_change(Request::new(tf::plan_resource_change::Request {
                type_name: type_name.into(),
                prior_state: Some(wire::encode(prior, &ty)?),
                proposed_new_state: Some(wire::encode(&proposed, &ty)?),
                config: Some(wire::encode(config, &ty)?),
                ..Default::default()
            }))
            .await
            .map_err(status)?
            .into_inner();
        fail_on(diags(&r.diagnostics))?;
        let planned = wire::decode(r.planned_state.as_ref(), &ty)?;
        let errs = assert_plan_valid(&block, prior, config, &planned);
        if !errs.is_empty() {
            return Err(Diagnostics::error(
                "Provider produced invalid plan",
                errs.iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; "),
            ));
        }
        let requires_replace = r.requires_replace.iter().map(path_from).collect();
        Ok(Planned {
            planned,
            requires_replace,
        })
    }

    /// Applies a plan, checking the result is a valid completion of it
    /// ("Provider produced inconsistent result after apply").
    pub async fn apply(
        &self,
        type_name: &str,
        prior: &Value,
        planned: &Value,
        config: &Value,
    ) -> Result<Value, Diagnostics> {
        let (block, ty) = self.resource_type(type_name).await?;
        let r = self
            .server
            .apply_resource_change(Request::new(tf::apply_resource_change::Request {
                type_name: type_name.into(),
                prior_state: Some(wire::encode(prior, &ty)?),
                planned_state: Some(wire::encode(planned, &ty)?),
                config: Some(wire::encode(config, &ty)?),
                ..Default::default()
            }))
            .await
            .map_err(status)?
            .into_inner();
        fail_on(diags(&r.diagnostics))?;
        let new = wire::decode(r.new_state.as_ref(), &ty)?;
        let errs = assert_object_compatible(&block, planned, &new);
        if !errs.is_empty() {
            return Err(Diagnostics::error(
                "Provider produced inconsistent result after apply",
                errs.iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; "),
            ));
        }
        Ok(new)
    }

    /// Plans and applies `config` over `prior` the way Terraform would,
    /// replacing (destroy, then create) when the plan requires it.
    pub async fn apply_config(
        &self,
        type_name: &str,
        prior: &Value,
        config: &Value,
    ) -> Result<Value, Diagnostics> {
        let plan = self.plan(type_name, prior, config).await?;
        if !prior.is_null() && !plan.requires_replace.is_empty() {
            self.destroy(type_name, prior).await?;
            let (_, ty) = self.resource_type(type_name).await?;
            let fresh = self
                .plan(type_name, &Value::null(ty.clone()), config)
                .await?;
            return self
                .apply(type_name, &Value::null(ty), &fresh.planned, config)
                .await;
        }
        self.apply(type_name, prior, &plan.planned, config).await
    }

    /// Refreshes a state; `None` when the object is gone.
    pub async fn read(&self, type_name: &str, state: &Value) -> Result<Option<Value>, Diagnostics> {
        let (_, ty) = self.resource_type(type_name).await?;
        let r = self
            .server
            .read_resource(Request::new(tf::read_resource::Request {
                type_name: type_name.into(),
                current_state: Some(wire::encode(state, &ty)?),
                ..Default::default()
            }))
            .await
            .map_err(status)?
            .into_inner();
        fail_on(diags(&r.diagnostics))?;
        let v = wire::decode(r.new_state.as_ref(), &ty)?;
        Ok((!v.is_null()).then_some(v))
    }

    /// Imports by ID and refreshes, as `terraform import` does.
    pub async fn import(&self, type_name: &str, id: &str) -> Result<Value, Diagnostics> {
        let (_, ty) = self.resource_type(type_name).await?;
        let r = self
            .server
            .import_resource_state(Request::new(tf::import_resource_state::Request {
                type_name: type_name.into(),
                id: id.into(),
                ..Default::default()
            }))
            .await
            .map_err(status)?
            .into_inner();
        fail_on(diags(&r.diagnostics))?;
        let [imported] = r.imported_resources.as_slice() else {
            return Err(Diagnostics::error(
                "Import returned no resources",
                format!("{} resources", r.imported_resources.len()),
            ));
        };
        let v = wire::decode(imported.state.as_ref(), &ty)?;
        self.read(type_name, &v).await?.ok_or_else(|| {
            Diagnostics::error("Cannot import non-existent remote object", id.to_string())
        })
    }

    pub async fn destroy(&self, type_name: &str, state: &Value) -> Result<(), Diagnostics> {
        let (_, ty) = self.resource_type(type_name).await?;
        self.apply(type_name, state, &Value::null(ty.clone()), &Value::null(ty))
            .await
            .map(|_| ())
    }

    /// Upgrades stored state JSON written under schema `version`, as
    /// Terraform does for every instance it reads from state.
    pub async fn upgrade(
        &self,
        type_name: &str,
        version: i64,
        json: &serde_json::Value,
    ) -> Result<Value, Diagnostics> {
        let (_, ty) = self.resource_type(type_name).await?;
        let r = self
            .server
            .upgrade_resource_state(Request::new(tf::upgrade_resource_state::Request {
                type_name: type_name.into(),
                version,
                raw_state: Some(tf::RawState {
                    json: serde_json::to_vec(json).unwrap_or_default(),
                    flatmap: Default::default(),
                }),
            }))
            .await
            .map_err(status)?
            .into_inner();
        fail_on(diags(&r.diagnostics))?;
        wire::decode(r.upgraded_state.as_ref(), &ty)
    }

    /// Sends StopProvider.
    pub async fn stop(&self) {
        let _ = self
            .server
            .stop_provider(Request::new(Default::default()))
            .await;
    }
}

fn path_from(p: &tf::AttributePath) -> Path {
    use tf::attribute_path::step::Selector;
    Path(
        p.steps
            .iter()
            .filter_map(|s| match &s.selector {
                Some(Selector::AttributeName(n)) => Some(terrane_value::Step::Attr(n.clone())),
                Some(Selector::ElementKeyString(k)) => Some(terrane_value::Step::Key(k.clone())),
                Some(Selector::ElementKeyInt(i)) => Some(terrane_value::Step::Index(*i)),
                None => None,
            })
            .collect(),
    )
}
