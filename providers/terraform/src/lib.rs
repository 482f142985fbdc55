//! `terraform_data`, the one resource of Terraform's built-in `terraform`
//! provider, and its data source `terraform_remote_state` (outputs of
//! another configuration's state, read from any backend terrane serves),
//! so configurations that use them run unchanged. `terraform_data`: `input` (any
//! value) is echoed to `output`; a change of `input` updates in place (with
//! `output` unknown in the plan, as Terraform plans it, except a null
//! `input` at create); any change of
//! `triggers_replace` replaces the resource; `id` is a random UUID. The
//! engine serves it in-process under `terraform.io/builtin/terraform`.

use async_trait::async_trait;
use std::sync::Arc;
use terrane_sdk::{
    with_attr, Applied, Attr, Ctx, DataSourceType, Diagnostics, PlanState, Provider, Resource,
    ResourceSchema, ResourceType, SimpleDataSource, SimpleResource, Type, Value,
};

mod remote_state;

pub struct TerraformProvider;

impl Provider for TerraformProvider {
    type Data = ();
    fn type_name(&self) -> &str {
        "terraform"
    }
    fn version(&self) -> &str {
        env!("CARGO_PKG_VERSION")
    }
    fn resources(&self) -> Vec<Arc<dyn ResourceType>> {
        vec![Arc::new(SimpleResource {
            name: "terraform_data",
            schema,
            resource: Data,
        })]
    }
    fn data_sources(&self) -> Vec<Arc<dyn DataSourceType>> {
        vec![Arc::new(SimpleDataSource {
            name: "terraform_remote_state",
            schema: remote_state::schema,
            source: remote_state::RemoteState,
        })]
    }
}

pub fn schema() -> ResourceSchema {
    ResourceSchema::new(0)
        .attr("input", Attr::of(Type::Dynamic).optional())
        .attr("output", Attr::of(Type::Dynamic).computed())
        .attr(
            "triggers_replace",
            Attr::of(Type::Dynamic).optional().requires_replace(),
        )
        .attr("id", Attr::string().computed().use_state_for_unknown())
}

#[derive(Clone)]
struct Data;

fn input(v: &Value) -> Value {
    v.get_attr("input")
        .cloned()
        .unwrap_or_else(|| Value::null(Type::Dynamic))
}

#[async_trait]
impl Resource for Data {
    async fn create(
        &self,
        _ctx: &Ctx,
        planned: &Value,
        _config: &Value,
    ) -> Result<Applied, Diagnostics> {
        let v = with_attr(
            planned,
            "id",
            Value::string(uuid::Uuid::new_v4().to_string()),
        );
        Ok(Applied::new(with_attr(&v, "output", input(planned))))
    }

    async fn read(
        &self,
        _ctx: &Ctx,
        state: &Value,
        private: &[u8],
    ) -> Result<Option<Applied>, Diagnostics> {
        Ok(Some(Applied {
            state: state.clone(),
            private: private.to_vec(),
        }))
    }

    async fn update(
        &self,
        _ctx: &Ctx,
        _prior: &Value,
        planned: &Value,
        _config: &Value,
    ) -> Result<Applied, Diagnostics> {
        Ok(Applied::new(with_attr(planned, "output", input(planned))))
    }

    async fn delete(&self, _ctx: &Ctx, _prior: &Value) -> Result<(), Diagnostics> {
        Ok(())
    }

    /// A new `input` makes `output` unknown (of `input`'s type) until
    /// apply, or null at create when `input` is null.
    async fn modify_plan(&self, _ctx: &Ctx, plan: &mut PlanState) -> Diagnostics {
        let changed = plan.prior.is_null()
            || !input(&plan.prior).eq_ignoring_refinements(&input(&plan.planned));
        if changed {
            let new = input(&plan.planned);
            // A create with a null input plans a null output; an update
            // always plans it unknown (Terraform's plan exactly).
            let output = if plan.prior.is_null() && new.is_null() {
                new
            } else {
                Value::unknown(new.ty().clone())
            };
            plan.planned.set_attr("output", output);
        }
        Diagnostics::new()
    }

    async fn import(&self, _ctx: &Ctx, id: &str) -> Result<Value, Diagnostics> {
        let block = schema().block_schema();
        let v = with_attr(&block.empty_value(), "id", Value::string(id));
        Ok(v)
    }
}
