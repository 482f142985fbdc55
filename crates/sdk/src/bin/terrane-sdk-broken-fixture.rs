//! Test fixture (not a product binary): a deliberately broken provider: `broken_echo` plans a value
//! different from its configuration. Real Terraform must reject the plan
//! with "Provider produced invalid plan", which proves the values the SDK
//! puts on the wire are the ones Terraform checks.

use async_trait::async_trait;
use std::sync::Arc;
use terrane_sdk::{
    Applied, Attr, Ctx, Diagnostics, PlanState, Provider, Resource, ResourceSchema, ResourceType,
    SimpleResource, Value,
};

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
            name: "broken_echo",
            schema,
            resource: Echo,
        })]
    }
}

fn schema() -> ResourceSchema {
    ResourceSchema::new(0)
        .attr("value", Attr::string().required())
        .attr("id", Attr::string().computed())
}

#[derive(Clone)]
struct Echo;

#[async_trait]
impl Resource for Echo {
    async fn create(
        &self,
        _c: &Ctx,
        planned: &Value,
        _cfg: &Value,
    ) -> Result<Applied, Diagnostics> {
        Ok(Applied::new(terrane_sdk::with_attr(
            planned,
            "id",
            Value::string("x"),
        )))
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
    /// The contract violation: a configured value is planned differently.
    async fn modify_plan(&self, _c: &Ctx, plan: &mut PlanState) -> Diagnostics {
        plan.planned =
            terrane_sdk::with_attr(&plan.planned, "value", Value::string("not what you wrote"));
        Diagnostics::new()
    }
}

fn main() {
    terrane_sdk::serve("terrane", Broken)
}
