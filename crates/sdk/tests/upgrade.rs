//! State upgrades: a resource at schema version 1 upgrades version-0 state
//! with its own upgrader; same-version state drops attributes the schema no
//! longer has; state from a newer schema is refused with a clear message.

use async_trait::async_trait;
use std::sync::Arc;
use terrane_sdk::testing::Harness;
use terrane_sdk::{
    Applied, Attr, Ctx, Diagnostics, Provider, Resource, ResourceSchema, ResourceType,
    SimpleResource, Value,
};

struct P;

impl Provider for P {
    type Data = ();
    fn type_name(&self) -> &str {
        "up"
    }
    fn version(&self) -> &str {
        "1.0.0"
    }
    fn resources(&self) -> Vec<Arc<dyn ResourceType>> {
        vec![Arc::new(SimpleResource {
            name: "up_thing",
            schema,
            resource: Thing,
        })]
    }
}

/// Version 1 renamed `size_gb` to `size_mb`.
fn schema() -> ResourceSchema {
    ResourceSchema::new(1)
        .attr("name", Attr::string().required())
        .attr("size_mb", Attr::number().optional())
}

#[derive(Clone)]
struct Thing;

#[async_trait]
impl Resource for Thing {
    async fn create(
        &self,
        _c: &Ctx,
        planned: &Value,
        _cfg: &Value,
    ) -> Result<Applied, Diagnostics> {
        Ok(Applied::new(planned.clone()))
    }
    async fn read(&self, _c: &Ctx, s: &Value, _p: &[u8]) -> Result<Option<Applied>, Diagnostics> {
        Ok(Some(Applied::new(s.clone())))
    }
    async fn update(
        &self,
        _c: &Ctx,
        _p: &Value,
        planned: &Value,
        _cfg: &Value,
    ) -> Result<Applied, Diagnostics> {
        Ok(Applied::new(planned.clone()))
    }
    async fn delete(&self, _c: &Ctx, _p: &Value) -> Result<(), Diagnostics> {
        Ok(())
    }
    fn upgrade_state(
        &self,
        version: i64,
        json: serde_json::Value,
    ) -> Result<serde_json::Value, Diagnostics> {
        match version {
            0 => {
                let gb = json["size_gb"].as_i64().unwrap_or(0);
                Ok(serde_json::json!({"name": json["name"], "size_mb": gb * 1024}))
            }
            v => Err(Diagnostics::error(
                "Unable to Upgrade Resource State",
                format!("no upgrader from version {v}"),
            )),
        }
    }
}

#[tokio::test]
async fn upgrades() {
    let h = Harness::new(P);
    let up = h
        .upgrade(
            "up_thing",
            0,
            &serde_json::json!({"name": "a", "size_gb": 2}),
        )
        .await
        .unwrap();
    assert_eq!(
        up.get_attr("size_mb")
            .and_then(Value::as_number)
            .and_then(|n| n.to_i64()),
        Some(2048),
        "case upgrader_runs_for_older_version"
    );
    let same = h
        .upgrade(
            "up_thing",
            1,
            &serde_json::json!({"name": "b", "size_mb": 5, "removed_attr": true}),
        )
        .await
        .unwrap();
    assert_eq!(
        same.get_attr("name").and_then(Value::as_str),
        Some("b"),
        "case same_version_prunes_removed_attributes"
    );
    let err = h
        .upgrade("up_thing", 2, &serde_json::json!({"name": "c"}))
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("Resource Managed by Newer Provider Version"),
        "case newer_state_refused: {err}"
    );
}
