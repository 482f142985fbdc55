//! The SDK's ephemeral RPCs called in-process on `ProviderServer`: the
//! schema is announced, open fills computed attributes and hands out
//! private bytes and a renewal time, renew and close get those bytes back,
//! and the contract checks turn host or provider mistakes into
//! diagnostics.

use async_trait::async_trait;
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use terrane_sdk::{
    Attr, Ctx, Diagnostics, EphemeralResource, EphemeralResourceType, Opened, Provider,
    ProviderServer, Renewed, ResourceSchema, ResourceType, SimpleEphemeral, Type, Value,
};
use terrane_tfplugin6::tfplugin6 as tf;
use tf::provider_server::Provider as _;
use tonic::Request;

struct P;

fn schema() -> ResourceSchema {
    ResourceSchema::new(0)
        .attr("name", Attr::string().required())
        .attr("secret", Attr::string().computed().sensitive())
}

#[derive(Clone)]
struct Lease;

#[async_trait]
impl EphemeralResource for Lease {
    async fn open(&self, _ctx: &Ctx, config: &Value) -> Result<Opened, Diagnostics> {
        let name = terrane_sdk::str_attr(config, "name").unwrap_or_default();
        let secret = if name == "broken" {
            Value::unknown(Type::String)
        } else {
            Value::string(format!("s-{name}"))
        };
        Ok(Opened {
            result: terrane_sdk::with_attr(config, "secret", secret),
            private: name.into_bytes(),
            renew_at: Some(SystemTime::UNIX_EPOCH + Duration::from_secs(4_000_000_000)),
        })
    }
    async fn renew(&self, _ctx: &Ctx, private: &[u8]) -> Result<Renewed, Diagnostics> {
        let mut p = private.to_vec();
        p.extend_from_slice(b"+renewed");
        Ok(Renewed {
            private: p,
            renew_at: None,
        })
    }
    async fn close(&self, _ctx: &Ctx, private: &[u8]) -> Result<(), Diagnostics> {
        if private == b"stuck" {
            return Err(Diagnostics::error("Cannot release", "the lease is stuck"));
        }
        Ok(())
    }
}

impl Provider for P {
    type Data = ();
    fn type_name(&self) -> &str {
        "p"
    }
    fn version(&self) -> &str {
        "0.0.1"
    }
    fn resources(&self) -> Vec<Arc<dyn ResourceType>> {
        Vec::new()
    }
    fn ephemeral_resources(&self) -> Vec<Arc<dyn EphemeralResourceType>> {
        vec![Arc::new(SimpleEphemeral {
            name: "p_lease",
            schema,
            resource: Lease,
        })]
    }
}

fn ty() -> Type {
    schema().block_schema().implied_type()
}

fn config(name: Value) -> tf::DynamicValue {
    let v = Value::object_typed(
        &ty(),
        [
            ("name".to_string(), name),
            ("secret".into(), Value::null(Type::String)),
        ]
        .into_iter()
        .collect(),
    );
    tf::DynamicValue {
        msgpack: terrane_value::msgpack::encode(&v, &ty()).unwrap(),
        json: Vec::new(),
    }
}

fn summaries(d: &[tf::Diagnostic]) -> Vec<String> {
    d.iter().map(|d| d.summary.clone()).collect()
}

/// One open: the error summaries, or the result's `secret`, private bytes
/// and whether a renewal time came back.
struct Opening {
    errors: Vec<String>,
    secret: Option<String>,
    private: Option<Vec<u8>>,
    renews: bool,
}

async fn open(s: &ProviderServer<P>, type_name: &str, name: Value) -> Opening {
    let r = s
        .open_ephemeral_resource(Request::new(tf::open_ephemeral_resource::Request {
            type_name: type_name.into(),
            config: Some(config(name)),
            client_capabilities: None,
        }))
        .await
        .unwrap()
        .into_inner();
    let secret = r.result.as_ref().map(|v| {
        let v = terrane_value::msgpack::decode(&v.msgpack, &ty()).unwrap();
        terrane_sdk::str_attr(&v, "secret").unwrap_or_default()
    });
    Opening {
        errors: summaries(&r.diagnostics),
        secret,
        private: r.private,
        renews: r.renew_at.is_some(),
    }
}

fn check(case: &str, got: &Opening, errors: &[&str], secret: Option<&str>) {
    assert_eq!(got.errors, errors, "case {case}: errors");
    assert_eq!(got.secret.as_deref(), secret, "case {case}: secret");
}

#[tokio::test]
async fn item2_sdk_serves_ephemeral_resources() {
    let s = ProviderServer::new(P);
    let schemas = s
        .get_provider_schema(Request::new(Default::default()))
        .await
        .unwrap()
        .into_inner();
    assert!(schemas.diagnostics.is_empty(), "{:?}", schemas.diagnostics);
    let lease = &schemas.ephemeral_resource_schemas["p_lease"];
    let secret = lease
        .block
        .as_ref()
        .and_then(|b| b.attributes.iter().find(|a| a.name == "secret"))
        .expect("secret attribute");
    assert!(secret.computed && secret.sensitive, "case schema_announced");
    let meta = s
        .get_metadata(Request::new(Default::default()))
        .await
        .unwrap()
        .into_inner();
    let names: Vec<&str> = meta
        .ephemeral_resources
        .iter()
        .map(|m| m.type_name.as_str())
        .collect();
    assert_eq!(names, ["p_lease"], "case metadata_lists_it");

    let ok = open(&s, "p_lease", Value::string("db")).await;
    check("open_fills_computed", &ok, &[], Some("s-db"));
    assert_eq!(ok.private.as_deref(), Some(&b"db"[..]), "case open_private");
    assert!(ok.renews, "case open_renew_at");
    check(
        "open_unknown_config_refused",
        &open(&s, "p_lease", Value::unknown(Type::String)).await,
        &["Unknown Ephemeral Resource Configuration"],
        None,
    );
    check(
        "open_unknown_result_is_a_provider_bug",
        &open(&s, "p_lease", Value::string("broken")).await,
        &["Invalid Result Object"],
        None,
    );
    check(
        "open_unknown_type",
        &open(&s, "p_nothing", Value::string("db")).await,
        &["Ephemeral Resource Type Not Found"],
        None,
    );

    let renewed = s
        .renew_ephemeral_resource(Request::new(tf::renew_ephemeral_resource::Request {
            type_name: "p_lease".into(),
            private: Some(b"db".to_vec()),
        }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        renewed.private.as_deref(),
        Some(&b"db+renewed"[..]),
        "case renew_gets_and_replaces_private"
    );
    assert!(renewed.renew_at.is_none(), "case renew_no_further_renewal");

    for (case, private, want) in [
        ("close_ok", &b"db"[..], Vec::<&str>::new()),
        (
            "close_error_reported",
            &b"stuck"[..],
            vec!["Cannot release"],
        ),
    ] {
        let closed = s
            .close_ephemeral_resource(Request::new(tf::close_ephemeral_resource::Request {
                type_name: "p_lease".into(),
                private: Some(private.to_vec()),
            }))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(summaries(&closed.diagnostics), want, "case {case}");
    }
}
