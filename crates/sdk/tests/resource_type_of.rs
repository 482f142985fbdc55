//! `ResourceTypeOf` (issue 13 item 5): one helper for the resource type
//! that is a name, a schema function and instances made from the
//! provider's configured data.

use async_trait::async_trait;
use std::sync::Arc;
use terrane_sdk::{
    with_attr, Applied, Attr, Ctx, Diagnostics, Resource, ResourceSchema, ResourceType,
    ResourceTypeOf, Value,
};

fn label_schema() -> ResourceSchema {
    ResourceSchema::new(2)
        .attr("name", Attr::string().required())
        .attr("full", Attr::string().computed())
}

const LABEL: ResourceTypeOf<Label, String> =
    ResourceTypeOf::new("labels_label", label_schema, |data| Label { data });

struct Label {
    data: Option<Arc<String>>,
}

#[async_trait]
impl Resource for Label {
    async fn create(
        &self,
        _c: &Ctx,
        planned: &Value,
        _cfg: &Value,
    ) -> Result<Applied, Diagnostics> {
        let prefix = self
            .data
            .as_deref()
            .cloned()
            .unwrap_or_else(|| "<unconfigured>".into());
        let name = terrane_sdk::str_attr(planned, "name").unwrap_or_default();
        let full = Value::string(format!("{prefix}-{name}"));
        Ok(Applied::new(with_attr(planned, "full", full)))
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
}

#[test]
fn item5_resource_type_of_gives_name_and_schema() {
    assert_eq!(LABEL.name(), "labels_label");
    let schema = LABEL.schema().expect("schema");
    assert_eq!(schema.block_schema(), label_schema().block_schema());
    assert!(schema.block_schema().attributes.contains_key("full"));
}

#[tokio::test]
async fn item5_resource_type_of_makes_instances_from_configured_data() {
    let ctx = Ctx {
        cancel: tokio_util::sync::CancellationToken::new(),
    };
    let planned = Value::object_from([("name", Value::string("x"))]);
    let cases: [(&str, Option<Arc<String>>, &str); 3] = [
        ("configured_a", Some(Arc::new("a".to_string())), "a-x"),
        ("configured_b", Some(Arc::new("b".to_string())), "b-x"),
        ("unconfigured", None, "<unconfigured>-x"),
    ];
    for (name, data, want) in cases {
        let applied = LABEL.instance(data).create(&ctx, &planned, &planned).await;
        let full = terrane_sdk::str_attr(&applied.unwrap().state, "full");
        assert_eq!(full.as_deref(), Some(want), "case {name}");
    }
}
