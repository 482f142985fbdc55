//! UpgradeResourceState of a pre-0.12 object (issue 15 item 3): an SDK
//! provider answers RawState.flatmap by decoding it against the resource
//! type's schema as the legacy SDK does (`NAME.%` for maps, `NAME.#` for
//! lists and sets, set elements keyed by hash, nested blocks at
//! `NAME.INDEX.ATTR`), so built-in providers read 0.11-era state too.

use async_trait::async_trait;
use std::sync::Arc;
use terrane_schema::{Attribute, Block, NestedBlock};
use terrane_sdk::testing::Harness;
use terrane_sdk::{
    Applied, Attr, Ctx, Diagnostics, Provider, Resource, ResourceSchema, ResourceType,
    SimpleResource, Type, Value,
};

struct P;

impl Provider for P {
    type Data = ();
    fn type_name(&self) -> &str {
        "flat"
    }
    fn version(&self) -> &str {
        "1.0.0"
    }
    fn resources(&self) -> Vec<Arc<dyn ResourceType>> {
        vec![Arc::new(SimpleResource {
            name: "flat_thing",
            schema,
            resource: Thing,
        })]
    }
}

fn schema() -> ResourceSchema {
    ResourceSchema::new(0)
        .attr("id", Attr::string().computed())
        .attr("name", Attr::string().required())
        .attr("enabled", Attr::bool().optional())
        .attr("size", Attr::number().optional())
        .attr("tags", Attr::of(Type::map(Type::String)).optional())
        .attr("ports", Attr::of(Type::set(Type::Number)).optional())
        .attr("zones", Attr::of(Type::list(Type::String)).optional())
        .attr("password", Attr::string().optional().write_only())
        .block(
            "disk",
            NestedBlock::list(
                Block::new()
                    .attr("size", Attribute::optional(Type::Number))
                    .block(
                        "mount",
                        NestedBlock::list(
                            Block::new().attr("path", Attribute::optional(Type::String)),
                        ),
                    ),
            ),
        )
        .block(
            "access",
            NestedBlock::set(Block::new().attr("cidr", Attribute::optional(Type::String))),
        )
        .block(
            "timeouts",
            NestedBlock::single(Block::new().attr("create", Attribute::optional(Type::String))),
        )
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
}

/// Upgrades `flat` (written at schema version 0) and compares the result
/// as state JSON, or the error text.
async fn check(
    h: &Harness<P>,
    case: &str,
    flat: &[(&str, &str)],
    want: Result<serde_json::Value, &str>,
) {
    let ty = schema().value_type();
    let got = h.upgrade_flatmap("flat_thing", 0, flat).await;
    match (got, want) {
        (Ok(v), Ok(w)) => assert_eq!(
            terrane_value::json::encode(&v, &ty).unwrap(),
            w,
            "case {case}"
        ),
        (Err(e), Err(w)) => assert!(e.to_string().contains(w), "case {case}: {e}"),
        (got, want) => panic!("case {case}: got {got:?}, want {want:?}"),
    }
}

#[tokio::test]
async fn item3_sdk_upgrades_flatmap_state() {
    let h = Harness::new(P);
    check(
        &h,
        "full_object",
        &[
            ("id", "x1"),
            ("name", "one"),
            ("enabled", "true"),
            ("size", "12"),
            ("tags.%", "2"),
            ("tags.team", "core"),
            ("tags.env.tier", "prod"),
            ("ports.#", "2"),
            ("ports.1234", "80"),
            ("ports.5678", "443"),
            ("zones.#", "2"),
            ("zones.0", "a"),
            ("zones.1", "b"),
            ("password", "hunter2"),
            ("disk.#", "1"),
            ("disk.0.size", "10"),
            ("disk.0.mount.#", "1"),
            ("disk.0.mount.0.path", "/data"),
            ("access.#", "1"),
            ("access.99.cidr", "10.0.0.0/8"),
            ("timeouts.create", "5m"),
            ("removed_in_0_12", "dropped"),
        ],
        Ok(serde_json::json!({
            "id": "x1",
            "name": "one",
            "enabled": true,
            "size": 12,
            "tags": {"team": "core", "env.tier": "prod"},
            "ports": [80, 443],
            "zones": ["a", "b"],
            "password": null,
            "disk": [{"size": 10, "mount": [{"path": "/data"}]}],
            "access": [{"cidr": "10.0.0.0/8"}],
            "timeouts": {"create": "5m"}
        })),
    )
    .await;
    check(
        &h,
        "absent_is_null_count_zero_is_empty",
        &[
            ("id", "x2"),
            ("name", "two"),
            ("tags.%", "0"),
            ("disk.#", "0"),
        ],
        Ok(serde_json::json!({
            "id": "x2",
            "name": "two",
            "enabled": null,
            "size": null,
            "tags": {},
            "ports": null,
            "zones": null,
            "password": null,
            "disk": [],
            "access": null,
            "timeouts": {"create": null}
        })),
    )
    .await;
    check(
        &h,
        "bad_value_refused_naming_key",
        &[("id", "x3"), ("name", "three"), ("enabled", "maybe")],
        Err("\"enabled\""),
    )
    .await;
    check(
        &h,
        "empty_raw_state_is_null",
        &[],
        Ok(serde_json::Value::Null),
    )
    .await;
    let newer = h
        .upgrade_flatmap("flat_thing", 1, &[("id", "x4"), ("name", "four")])
        .await
        .unwrap_err();
    assert!(
        newer
            .to_string()
            .contains("Resource Managed by Newer Provider Version"),
        "case newer_version_refused: {newer}"
    );
}
