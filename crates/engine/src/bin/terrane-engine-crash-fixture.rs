//! Test fixture (not a product binary): a provider with one resource,
//! `crash_thing`, whose PlanResourceChange makes the plugin process exit
//! in the middle of the call, as a crashing provider would. The engine's
//! tests check that the host reports it as a typed error naming the
//! provider and the operation.

use async_trait::async_trait;
use std::sync::Arc;
use terrane_sdk::{
    Applied, Attr, Ctx, Diagnostics, PlanState, Provider, Resource, ResourceSchema, ResourceType,
    SimpleResource, Value,
};

struct Crashing;

impl Provider for Crashing {
    fn type_name(&self) -> &str {
        "crash"
    }
    fn version(&self) -> &str {
        "0.0.1"
    }
    fn resources(&self) -> Vec<Arc<dyn ResourceType>> {
        vec![Arc::new(SimpleResource {
            name: "crash_thing",
            schema,
            resource: Thing,
        })]
    }
}

fn schema() -> ResourceSchema {
    ResourceSchema::new(0)
        .attr("name", Attr::string().optional())
        .attr("id", Attr::string().computed())
}

#[derive(Clone)]
struct Thing;

#[async_trait]
impl Resource for Thing {
    async fn create(
        &self,
        _ctx: &Ctx,
        planned: &Value,
        _config: &Value,
    ) -> Result<Applied, Diagnostics> {
        Ok(Applied::new(planned.clone()))
    }
    async fn read(
        &self,
        _ctx: &Ctx,
        state: &Value,
        _private: &[u8],
    ) -> Result<Option<Applied>, Diagnostics> {
        Ok(Some(Applied::new(state.clone())))
    }
    async fn update(
        &self,
        _ctx: &Ctx,
        _prior: &Value,
        planned: &Value,
        _config: &Value,
    ) -> Result<Applied, Diagnostics> {
        Ok(Applied::new(planned.clone()))
    }
    async fn delete(&self, _ctx: &Ctx, _prior: &Value) -> Result<(), Diagnostics> {
        Ok(())
    }
    async fn modify_plan(&self, _ctx: &Ctx, _plan: &mut PlanState) -> Diagnostics {
        eprintln!("crash fixture: giving up in the middle of PlanResourceChange");
        std::process::exit(2)
    }
}

fn main() {
    terrane_sdk::serve("terrane", Crashing)
}
