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

/// What an upgrade should give: the name and size, or an error containing
/// the text.
enum Want {
    Value(&'static str, Option<i64>),
    Error(&'static str),
}

#[tokio::test]
async fn upgrades() {
    let h = Harness::new(P);
    #[track_caller]
    fn check(case: &str, got: Result<Value, Diagnostics>, want: Want) {
        match (got, want) {
            (Ok(v), Want::Value(name, size)) => {
                let size_mb = v
                    .get_attr("size_mb")
                    .and_then(Value::as_number)
                    .and_then(|n| n.to_i64());
                assert_eq!(
                    (v.get_attr("name").and_then(Value::as_str), size_mb),
                    (Some(name), size),
                    "case {case}"
                );
            }
            (Err(e), Want::Error(text)) => {
                assert!(e.to_string().contains(text), "case {case}: {e}")
            }
            (Ok(v), Want::Error(_)) => panic!("case {case}: upgraded to {v:?}"),
            (Err(e), Want::Value(..)) => panic!("case {case}: {e}"),
        }
    }
    // The stored JSON keeps its keys in the order written here.
    let cases = [
        (
            "upgrader_runs_for_older_version",
            0,
            serde_json::json!({"name": "a", "size_gb": 2}),
            Want::Value("a", Some(2048)),
        ),
        (
            "same_version_prunes_removed_attributes",
            1,
            serde_json::json!({"name": "b", "removed_attr": true, "size_mb": 5}),
            Want::Value("b", Some(5)),
        ),
        (
            "same_version_removed_attribute_first",
            1,
            serde_json::json!({"a_removed": [1, {"x": null}], "name": "c"}),
            Want::Value("c", None),
        ),
        (
            "same_version_keys_out_of_order",
            1,
            serde_json::json!({"size_mb": 7, "name": "d"}),
            Want::Value("d", Some(7)),
        ),
        (
            "same_version_number_as_string",
            1,
            serde_json::json!({"name": "e", "size_mb": "9"}),
            Want::Value("e", Some(9)),
        ),
        (
            "same_version_wrong_type",
            1,
            serde_json::json!({"name": ["f"]}),
            Want::Error("The stored state does not match the schema: .name: string required"),
        ),
        (
            "same_version_not_an_object",
            1,
            serde_json::json!("g"),
            Want::Error("The stored state does not match the schema"),
        ),
        (
            "newer_state_refused",
            2,
            serde_json::json!({"name": "h"}),
            Want::Error("Resource Managed by Newer Provider Version"),
        ),
    ];
    for (case, version, json, want) in cases {
        check(case, h.upgrade("up_thing", version, &json).await, want);
    }
}
