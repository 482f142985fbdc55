//! Two provider servers in one process share nothing: each keeps its own
//! configured data, and StopProvider on one cancels only its own calls.
//! The calls that must be in flight are held by a [`Gate`] (they say when
//! they started and wait to be released), never by a timed window.

use async_trait::async_trait;
use std::sync::Arc;
use terrane_sdk::testing::Harness;
use terrane_sdk::{
    with_attr, Applied, Attr, Ctx, Diagnostics, Provider, Resource, ResourceSchema, ResourceType,
    Value,
};
use tokio::sync::Notify;

/// Holds a `wait = true` create in flight: it signals `started`, then
/// waits for `release` (or its cancellation).
#[derive(Default)]
struct Gate {
    started: Notify,
    release: Notify,
}

struct Tagged(Arc<Gate>);

#[async_trait]
impl Provider for Tagged {
    type Data = String;
    fn type_name(&self) -> &str {
        "tagged"
    }
    fn version(&self) -> &str {
        "0.0.0"
    }
    fn schema(&self) -> Result<ResourceSchema, Diagnostics> {
        Ok(ResourceSchema::new(0).attr("tag", Attr::string().required()))
    }
    async fn configure(&self, _ctx: &Ctx, config: &Value) -> Result<Option<String>, Diagnostics> {
        Ok(Some(
            terrane_sdk::str_attr(config, "tag").unwrap_or_default(),
        ))
    }
    fn resources(&self) -> Vec<Arc<dyn ResourceType<String>>> {
        vec![Arc::new(ThingType(self.0.clone()))]
    }
}

struct ThingType(Arc<Gate>);

impl ResourceType<String> for ThingType {
    fn name(&self) -> &str {
        "tagged_thing"
    }
    fn schema(&self) -> Result<ResourceSchema, Diagnostics> {
        Ok(ResourceSchema::new(0)
            .attr("wait", Attr::bool().optional())
            .attr("seen", Attr::string().computed()))
    }
    fn instance(&self, data: Option<Arc<String>>) -> Box<dyn Resource> {
        let tag = data.as_deref().cloned().unwrap_or_default();
        Box::new(Thing {
            tag,
            gate: self.0.clone(),
        })
    }
}

struct Thing {
    tag: String,
    gate: Arc<Gate>,
}

#[async_trait]
impl Resource for Thing {
    async fn create(
        &self,
        ctx: &Ctx,
        planned: &Value,
        _config: &Value,
    ) -> Result<Applied, Diagnostics> {
        let mut seen = self.tag.clone();
        if planned.get_attr("wait").and_then(Value::as_bool) == Some(true) {
            self.gate.started.notify_one();
            tokio::select! {
                _ = ctx.cancel.cancelled() => seen.push_str(":cancelled"),
                _ = self.gate.release.notified() => seen.push_str(":finished"),
            }
        }
        Ok(Applied::new(with_attr(
            planned,
            "seen",
            Value::string(seen),
        )))
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

async fn create(h: &Harness<Tagged>, wait: bool) -> String {
    let cfg = h
        .object("tagged_thing", &[("wait", Value::bool(wait))])
        .await
        .unwrap();
    let (_, ty) = h.resource_type("tagged_thing").await.unwrap();
    let s = h
        .apply_config("tagged_thing", &Value::null(ty), &cfg)
        .await
        .unwrap();
    terrane_sdk::str_attr(&s, "seen").unwrap()
}

#[tokio::test]
async fn two_servers_share_nothing() {
    let (gate_a, gate_b) = (Arc::new(Gate::default()), Arc::new(Gate::default()));
    let a = Harness::new(Tagged(gate_a.clone()));
    let b = Harness::new(Tagged(gate_b));
    a.configure(&Value::object_from([("tag", Value::string("a"))]))
        .await
        .unwrap();
    b.configure(&Value::object_from([("tag", Value::string("b"))]))
        .await
        .unwrap();
    assert_eq!(create(&a, false).await, "a", "case own_provider_data_a");
    assert_eq!(create(&b, false).await, "b", "case own_provider_data_b");

    // a's call is in flight (started, not released) while b is stopped
    // and serves again; only then is a's call released.
    let (ra, rb) = tokio::join!(create(&a, true), async {
        gate_a.started.notified().await;
        b.stop().await;
        let rb = create(&b, false).await;
        gate_a.release.notify_one();
        rb
    });
    assert_eq!(ra, "a:finished", "case stopping_b_does_not_cancel_a");
    assert_eq!(rb, "b", "case b_serves_after_stop");

    // Stopping a while its call is in flight (never released) cancels it.
    let (stopped, _) = tokio::join!(create(&a, true), async {
        gate_a.started.notified().await;
        a.stop().await;
    });
    assert_eq!(stopped, "a:cancelled", "case stop_cancels_in_flight_call");
}
