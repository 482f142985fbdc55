//! A test harness for provider authors: runs a provider through lifecycle
//! steps in-process, without any Terraform binary, going through the real
//! protocol server (so values cross the same msgpack encoding) and applying
//! the checks Terraform core applies: required arguments, proposed new
//! state, plan validity, apply-result compatibility, and the comparison
//! `ImportStateVerify` makes after an import.
//!
//! # Runtime
//!
//! Every method is `async` and needs a tokio runtime; the harness spawns
//! nothing, so the default current-thread runtime of `#[tokio::test]` is
//! enough (add `tokio = { version = "1", features = ["macros", "rt"] }` to
//! your dev-dependencies).
//!
//! # Values
//!
//! Objects a test passes in (configurations, prior states) may leave out
//! attributes: they become typed nulls (empty nested blocks), as in a
//! configuration that does not set them. A value the schema cannot hold (an
//! unknown attribute name, a number where a string belongs) is reported as
//! a mistake in the test, naming the attribute, never blamed on the
//! provider. Diagnostics the provider returns keep their attribute paths.
//!
//! ```
//! # use std::sync::Arc;
//! # use terrane_sdk::*;
//! # struct Echo;
//! # #[async_trait]
//! # impl Provider for Echo {
//! #     type Data = ();
//! #     fn type_name(&self) -> &str { "echo" }
//! #     fn version(&self) -> &str { "0.1.0" }
//! #     fn resources(&self) -> Vec<Arc<dyn ResourceType<()>>> {
//! #         vec![Arc::new(SimpleResource { name: "echo_text", schema, resource: Text })]
//! #     }
//! # }
//! # fn schema() -> Schema {
//! #     Schema::new(0).attr("text", Attr::string().required()).attr("id", Attr::string().computed().use_state_for_unknown())
//! # }
//! # #[derive(Clone)]
//! # struct Text;
//! # #[async_trait]
//! # impl Resource for Text {
//! #     async fn create(&self, _: &Ctx, p: &Value, _: &Value) -> Result<Applied, Diagnostics> { Ok(Applied::new(with_attr(p, "id", Value::string("e")))) }
//! #     async fn read(&self, _: &Ctx, s: &Value, _: &[u8]) -> Result<Option<Applied>, Diagnostics> { Ok(Some(Applied::new(s.clone()))) }
//! #     async fn update(&self, _: &Ctx, _: &Value, p: &Value, _: &Value) -> Result<Applied, Diagnostics> { Ok(Applied::new(p.clone())) }
//! #     async fn delete(&self, _: &Ctx, _: &Value) -> Result<(), Diagnostics> { Ok(()) }
//! # }
//! use terrane_sdk::testing::Harness;
//! use terrane_sdk::values;
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let h = Harness::new(Echo);
//! h.configure(&values::object([])).await?;
//! let config = values::object([("text", values::string("hi"))]);
//! let state = h.apply_config("echo_text", &h.null_state("echo_text").await?, &config).await?;
//! assert_eq!(state.get_attr("id"), Some(&values::string("e")));
//! assert!(h.plan("echo_text", &state, &config).await?.is_noop(&state));
//! # Ok::<(), Diagnostics>(())
//! # }).unwrap();
//! ```

use crate::diag::{Diagnostic, Diagnostics};
use crate::provider::Provider;
use crate::schema::ResourceSchema;
use crate::server::ProviderServer;
use crate::validate::terraform_path;
use crate::wire;
use terrane_schema::objchange::{assert_object_compatible, assert_plan_valid, proposed_new};
use terrane_schema::Block;
use terrane_tfplugin6::tfplugin6::{self as tf, provider_server::Provider as _};
use terrane_value::{Path, Type, Value};
use tonic::Request;

/// The provider under test, behind its protocol server.
pub struct Harness<P: Provider> {
    server: ProviderServer<P>,
}

/// A plan the provider made.
#[derive(Debug, Clone)]
pub struct Planned {
    /// The planned new state.
    pub planned: Value,
    /// The attributes whose change forces replacement.
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
        let mut one = if d.severity == tf::diagnostic::Severity::Error as i32 {
            Diagnostic::error(d.summary.clone(), d.detail.clone(), None)
        } else {
            Diagnostic::warning(d.summary.clone(), d.detail.clone(), None)
        };
        if let Some(p) = &d.attribute {
            one = one.at_path(path_from(p));
        }
        out.0.push(one);
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

/// A mistake in the test's own values, on the attribute at `path`.
fn mistake(what: &str, path: Path, problem: String) -> Diagnostics {
    let at = terraform_path(&path);
    Diagnostics(vec![Diagnostic::error(
        "Invalid Test Value",
        format!("The {what} given to the harness is wrong at {at}: {problem}. This is a mistake in the test, not in the provider."),
        None,
    )
    .at_path(path)])
}

/// `v` completed to the schema's object type: missing attributes become
/// typed nulls (empty nested blocks); an unknown attribute or a value of
/// the wrong type is a test mistake.
fn fit(what: &str, v: &Value, block: &Block, ty: &Type) -> Result<Value, Diagnostics> {
    if v.is_null() {
        return Ok(Value::null(ty.clone()));
    }
    if !v.is_known() {
        return Ok(Value::unknown(ty.clone()));
    }
    let Some(given) = v.entries() else {
        return Err(mistake(
            what,
            Path::root(),
            format!("expected an object, got {}", v.ty().friendly_name()),
        ));
    };
    let mut m = block
        .empty_value()
        .entries()
        .map(|e| (*e).clone())
        .unwrap_or_default();
    for (k, x) in given.iter() {
        let Some(want) = ty.attr_type(k) else {
            return Err(mistake(
                what,
                Path::root().attr(k.clone()),
                format!("the schema has no attribute named {k:?}"),
            ));
        };
        if !x.ty().conforms_to(want) {
            return Err(mistake(
                what,
                Path::root().attr(k.clone()),
                format!(
                    "expected {}, got {}",
                    want.friendly_name(),
                    x.ty().friendly_name()
                ),
            ));
        }
        m.insert(k.clone(), x.clone());
    }
    Ok(Value::object_typed_of(ty, m).with_sensitive(v.is_sensitive()))
}

/// Terraform's own check before any call: every required argument set.
fn required(block: &Block, config: &Value) -> Result<(), Diagnostics> {
    let mut d = Diagnostics::new();
    for (name, a) in &block.attributes {
        if a.required && config.get_attr(name).is_none_or(Value::is_null) {
            d.0.push(
                Diagnostic::error(
                    "Missing required argument",
                    format!("The argument \"{name}\" is required, but no definition was found."),
                    None,
                )
                .at_path(Path::root().attr(name.clone())),
            );
        }
    }
    fail_on(d)
}

impl<P: Provider> Harness<P> {
    /// The provider behind a fresh protocol server.
    pub fn new(provider: P) -> Harness<P> {
        Harness {
            server: ProviderServer::new(provider),
        }
    }

    /// The protocol block and implied type of a resource type's schema.
    pub async fn resource_type(&self, type_name: &str) -> Result<(Block, Type), Diagnostics> {
        self.schemas_ok().await?;
        Ok(typed(&self.server.schema_of(type_name)?))
    }

    /// The protocol block and implied type of a data source's schema.
    pub async fn data_source_type(&self, type_name: &str) -> Result<(Block, Type), Diagnostics> {
        self.schemas_ok().await?;
        Ok(typed(&self.server.data_schema_of(type_name)?))
    }

    async fn schemas_ok(&self) -> Result<(), Diagnostics> {
        let resp = self
            .server
            .get_provider_schema(Request::new(Default::default()))
            .await
            .map_err(status)?
            .into_inner();
        fail_on(diags(&resp.diagnostics))
    }

    /// An object of the resource's type from the given attributes; the rest
    /// are null (empty blocks for nested blocks).
    pub async fn object(
        &self,
        type_name: &str,
        attrs: &[(&str, Value)],
    ) -> Result<Value, Diagnostics> {
        let (block, ty) = self.resource_type(type_name).await?;
        let given = Value::object_from(attrs.iter().cloned());
        fit("object", &given, &block, &ty)
    }

    /// The typed null state of a resource type: the prior state of a
    /// create, the result of a delete.
    pub async fn null_state(&self, type_name: &str) -> Result<Value, Diagnostics> {
        let (_, ty) = self.resource_type(type_name).await?;
        Ok(Value::null(ty))
    }

    /// Configures the provider as Terraform does: the configuration is
    /// completed to the provider schema, required arguments are checked,
    /// then ValidateProviderConfig (the schema's validators) and
    /// ConfigureProvider run.
    pub async fn configure(&self, config: &Value) -> Result<(), Diagnostics> {
        self.schemas_ok().await?;
        let (block, ty) = typed(self.server.provider_schema());
        let config = fit("provider configuration", config, &block, &ty)?;
        required(&block, &config)?;
        let v = self
            .server
            .validate_provider_config(Request::new(tf::validate_provider_config::Request {
                config: Some(wire::encode(&config, &ty)?),
            }))
            .await
            .map_err(status)?;
        fail_on(diags(&v.into_inner().diagnostics))?;
        let r = self
            .server
            .configure_provider(Request::new(tf::configure_provider::Request {
                config: Some(wire::encode(&config, &ty)?),
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
        let prior = fit("prior state", prior, &block, &ty)?;
        let config = fit("configuration", config, &block, &ty)?;
        if !config.is_null() {
            required(&block, &config)?;
        }
        let v = self
            .server
            .validate_resource_config(Request::new(tf::validate_resource_config::Request {
                type_name: type_name.into(),
                config: Some(wire::encode(&config, &ty)?),
                ..Default::default()
            }))
            .await
            .map_err(status)?;
        fail_on(diags(&v.into_inner().diagnostics))?;
        let proposed = proposed_new(&block, &prior, &config);
        let r = self
            .server
            .plan_resource_change(Request::new(tf::plan_resource_change::Request {
                type_name: type_name.into(),
                prior_state: Some(wire::encode(&prior, &ty)?),
                proposed_new_state: Some(wire::encode(&proposed, &ty)?),
                config: Some(wire::encode(&config, &ty)?),
                ..Default::default()
            }))
            .await
            .map_err(status)?
            .into_inner();
        fail_on(diags(&r.diagnostics))?;
        let planned = wire::decode(r.planned_state.as_ref(), &ty)?;
        let errs = assert_plan_valid(&block, &prior, &config, &planned);
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
        let prior = fit("prior state", prior, &block, &ty)?;
        let planned = fit("planned state", planned, &block, &ty)?;
        let config = fit("configuration", config, &block, &ty)?;
        let r = self
            .server
            .apply_resource_change(Request::new(tf::apply_resource_change::Request {
                type_name: type_name.into(),
                prior_state: Some(wire::encode(&prior, &ty)?),
                planned_state: Some(wire::encode(&planned, &ty)?),
                config: Some(wire::encode(&config, &ty)?),
                ..Default::default()
            }))
            .await
            .map_err(status)?
            .into_inner();
        fail_on(diags(&r.diagnostics))?;
        let new = wire::decode(r.new_state.as_ref(), &ty)?;
        let errs = assert_object_compatible(&block, &planned, &new);
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
    /// replacing (destroy, then create) when the plan requires it. A null
    /// `prior` (see [`null_state`](Harness::null_state)) creates.
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
        let (block, ty) = self.resource_type(type_name).await?;
        let state = fit("state", state, &block, &ty)?;
        let r = self
            .server
            .read_resource(Request::new(tf::read_resource::Request {
                type_name: type_name.into(),
                current_state: Some(wire::encode(&state, &ty)?),
                ..Default::default()
            }))
            .await
            .map_err(status)?
            .into_inner();
        fail_on(diags(&r.diagnostics))?;
        let v = wire::decode(r.new_state.as_ref(), &ty)?;
        Ok((!v.is_null()).then_some(v))
    }

    /// Reads data source `type_name` with `config` as Terraform does:
    /// required arguments, ValidateDataResourceConfig, then
    /// ReadDataSource, whose result must keep every configured argument.
    pub async fn read_data(&self, type_name: &str, config: &Value) -> Result<Value, Diagnostics> {
        let (block, ty) = self.data_source_type(type_name).await?;
        let config = fit("configuration", config, &block, &ty)?;
        required(&block, &config)?;
        let v = self
            .server
            .validate_data_resource_config(Request::new(
                tf::validate_data_resource_config::Request {
                    type_name: type_name.into(),
                    config: Some(wire::encode(&config, &ty)?),
                },
            ))
            .await
            .map_err(status)?;
        fail_on(diags(&v.into_inner().diagnostics))?;
        let r = self
            .server
            .read_data_source(Request::new(tf::read_data_source::Request {
                type_name: type_name.into(),
                config: Some(wire::encode(&config, &ty)?),
                ..Default::default()
            }))
            .await
            .map_err(status)?
            .into_inner();
        fail_on(diags(&r.diagnostics))?;
        let got = wire::decode(r.state.as_ref(), &ty)?;
        let errs = assert_object_compatible(&block, &config_as_plan(&block, &config), &got);
        if !errs.is_empty() {
            return Err(Diagnostics::error(
                "Provider produced invalid object",
                errs.iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; "),
            ));
        }
        Ok(got)
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

    /// Imports by ID, then compares the imported state with `created`
    /// attribute by attribute, as `ImportStateVerify` does; attributes named
    /// in `ignore` (those import cannot know, such as write-only inputs)
    /// are skipped. Differences are errors on their attribute; values of
    /// sensitive attributes are not shown.
    pub async fn import_verify(
        &self,
        type_name: &str,
        id: &str,
        created: &Value,
        ignore: &[&str],
    ) -> Result<Value, Diagnostics> {
        let imported = self.import(type_name, id).await?;
        let (block, ty) = self.resource_type(type_name).await?;
        let created = fit("created state", created, &block, &ty)?;
        let mut d = Diagnostics::new();
        for (name, a) in &block.attributes {
            if ignore.contains(&name.as_str()) {
                continue;
            }
            let (got, want) = (imported.get_attr(name), created.get_attr(name));
            if got
                .zip(want)
                .is_some_and(|(g, w)| g.eq_ignoring_refinements(w))
            {
                continue;
            }
            let show = |v: Option<&Value>| match v {
                _ if a.sensitive => "(sensitive value)".to_string(),
                Some(v) => v.to_string(),
                None => "(absent)".to_string(),
            };
            d.0.push(
                Diagnostic::error(
                    "ImportStateVerify attributes not equivalent",
                    format!("{name}: imported {}, created {}", show(got), show(want)),
                    None,
                )
                .at_path(Path::root().attr(name.clone())),
            );
        }
        fail_on(d)?;
        Ok(imported)
    }

    /// Deletes the object `state` describes.
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

    /// Upgrades a pre-0.12 object (a v4 state's `attributes_flat`) written
    /// under schema `version`, sent as RawState.flatmap as Terraform sends
    /// it.
    pub async fn upgrade_flatmap(
        &self,
        type_name: &str,
        version: i64,
        flat: &[(&str, &str)],
    ) -> Result<Value, Diagnostics> {
        let (_, ty) = self.resource_type(type_name).await?;
        let r = self
            .server
            .upgrade_resource_state(Request::new(tf::upgrade_resource_state::Request {
                type_name: type_name.into(),
                version,
                raw_state: Some(tf::RawState {
                    json: Vec::new(),
                    flatmap: flat
                        .iter()
                        .map(|(k, v)| (k.to_string(), v.to_string()))
                        .collect(),
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

fn typed(s: &ResourceSchema) -> (Block, Type) {
    let block = s.block_schema();
    let ty = block.implied_type();
    (block, ty)
}

/// A data source's configuration as the "plan" its result must complete:
/// computed attributes unknown, so only configured arguments are held to.
fn config_as_plan(block: &Block, config: &Value) -> Value {
    let Some(entries) = config.entries() else {
        return config.clone();
    };
    let ty = block.implied_type();
    let mut m = (*entries).clone();
    for (name, a) in &block.attributes {
        if let Some(t) = ty.attr_type(name).filter(|_| a.computed) {
            if m.get(name).is_none_or(Value::is_null) {
                m.insert(name.clone(), Value::unknown(t.clone()));
            }
        }
    }
    Value::object_typed_of(&ty, m)
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
