//! `ResourceTypeOf` (issue 13 item 5): one helper for the resource type
//! that is a name, a schema function and instances made from the
//! provider's configured data, served over the real protocol.

use async_trait::async_trait;
use std::sync::Arc;
use terrane_sdk::testing::Harness;
use terrane_sdk::{
    with_attr, Applied, Attr, Ctx, Diagnostics, Provider, ProviderData, Resource, ResourceSchema,
    ResourceType, ResourceTypeOf, Value,
};

struct Labels;

#[async_trait]
impl Provider for Labels {
    fn type_name(&self) -> &str {
        "labels"
    }
    fn version(&self) -> &str {
        "0.0.0"
    }
    fn schema(&self) -> Result<ResourceSchema, Diagnostics> {
        Ok(ResourceSchema::new(0).attr("prefix", Attr::string().required()))
    }
    async fn configure(
        &self,
        _ctx: &Ctx,
        config: &Value,
    ) -> Result<Option<ProviderData>, Diagnostics> {
        let prefix = terrane_sdk::str_attr(config, "prefix").unwrap_or_default();
        Ok(Some(Arc::new(prefix)))
    }
    fn resources(&self) -> Vec<Arc<dyn ResourceType>> {
        vec![Arc::new(LABEL)]
    }
}

fn label_schema() -> ResourceSchema {
    ResourceSchema::new(2)
        .attr("name", Attr::string().required())
        .attr("full", Attr::string().computed())
}

const LABEL: ResourceTypeOf<Label> =
    ResourceTypeOf::new("labels_label", label_schema, |data| Label { data });

struct Label {
    data: Option<ProviderData>,
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
            .as_ref()
            .and_then(|d| d.downcast_ref::<String>().cloned())
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
    let cases = [("configured_a", "a"), ("configured_b", "b")];
    for (name, prefix) in cases {
        let h = Harness::new(Labels);
        h.configure(&Value::object_from([("prefix", Value::string(prefix))]))
            .await
            .unwrap();
        let cfg = h
            .object("labels_label", &[("name", Value::string("x"))])
            .await
            .unwrap();
        let (_, ty) = h.resource_type("labels_label").await.unwrap();
        let s = h
            .apply_config("labels_label", &Value::null(ty), &cfg)
            .await
            .unwrap();
        let full = terrane_sdk::str_attr(&s, "full").unwrap();
        assert_eq!(full, format!("{prefix}-x"), "case {name}");
    }
}
