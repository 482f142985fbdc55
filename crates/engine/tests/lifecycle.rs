//! The random provider through the [`Provider`] trait, twice: served
//! in-process (the built-in) and as the real `terraform-provider-random`
//! plugin binary (go-plugin handshake, AutoMTLS, gRPC). The same lifecycle
//! sequence — validate, configure, plan create, apply, read, no-op plan,
//! upgrade, import, replace, destroy — is recorded as a transcript, and
//! the two transcripts must be identical (seeded resources make the random
//! results deterministic). Terraform's own contract checks run at each
//! step.

mod support;

use std::sync::Arc;
use support::*;
use terrane_engine::provider::discovery::PluginSource;
use terrane_engine::provider::*;
use terrane_schema::objchange::{assert_object_compatible, assert_plan_valid, proposed_new};
use terrane_value::{Path, Value};

/// One step's outcome, rendered (Debug shows unknowns and types).
type Transcript = Vec<(String, String)>;

async fn plan(
    p: &dyn Provider,
    s: &ProviderSchema,
    ty: &str,
    prior: &Value,
    config: &Value,
) -> PlanResponse {
    let block = &s.resource(ty).unwrap().block;
    let v = p.validate_resource_config(ty, config).await.unwrap();
    assert!(!v.has_errors(), "{v}");
    let proposed = proposed_new(block, prior, config);
    let r = p
        .plan_resource_change(PlanRequest {
            type_name: ty,
            prior_state: prior,
            proposed_new_state: &proposed,
            config,
            prior_private: &[],
            provider_meta: None,
        })
        .await
        .unwrap();
    assert!(!r.diagnostics.has_errors(), "{}", r.diagnostics);
    let errs = assert_plan_valid(block, prior, config, &r.planned_state);
    assert!(errs.is_empty(), "Provider produced invalid plan: {errs:?}");
    r
}

async fn apply(
    p: &dyn Provider,
    s: &ProviderSchema,
    ty: &str,
    prior: &Value,
    config: &Value,
    planned: &PlanResponse,
) -> Value {
    let r = p
        .apply_resource_change(ApplyRequest {
            type_name: ty,
            prior_state: prior,
            planned_state: &planned.planned_state,
            config,
            planned_private: &planned.planned_private,
            provider_meta: None,
        })
        .await
        .unwrap();
    assert!(!r.diagnostics.has_errors(), "{}", r.diagnostics);
    let errs = assert_object_compatible(
        &s.resource(ty).unwrap().block,
        &planned.planned_state,
        &r.new_state,
    );
    assert!(
        errs.is_empty(),
        "Provider produced inconsistent result after apply: {errs:?}"
    );
    r.new_state
}

async fn read(p: &dyn Provider, ty: &str, state: &Value) -> Value {
    let r = p
        .read_resource(ReadRequest {
            type_name: ty,
            prior_state: state,
            private: &[],
            provider_meta: None,
        })
        .await
        .unwrap();
    assert!(!r.diagnostics.has_errors(), "{}", r.diagnostics);
    r.new_state
}

fn paths(ps: &[Path]) -> String {
    ps.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

async fn run(p: &dyn Provider) -> Transcript {
    let mut t: Transcript = Vec::new();
    let mut note = |step: &str, v: String| t.push((step.to_string(), v));
    let s = p.get_schema().await.unwrap();
    note(
        "schema.resources",
        format!("{:?}", s.resources.keys().collect::<Vec<_>>()),
    );
    note(
        "schema.random_integer",
        format!("{:?}", s.resource("random_integer")),
    );
    note("schema.capabilities", format!("{:?}", s.capabilities));
    configure(p).await;

    const TY: &str = "random_integer";
    let null = null_of(&s, TY);
    let config = object(
        &s,
        TY,
        &[
            ("min", Value::number(1)),
            ("max", Value::number(1_000_000)),
            ("seed", Value::string("terrane")),
        ],
    );
    let create = plan(p, &s, TY, &null, &config).await;
    note("plan_create.planned", format!("{:?}", create.planned_state));
    let state = apply(p, &s, TY, &null, &config, &create).await;
    note("apply_create.state", format!("{:?}", state));
    assert!(state.is_wholly_known(), "case apply_result_known");

    let refreshed = read(p, TY, &state).await;
    assert_eq!(refreshed, state, "case read_keeps_state");

    let again = plan(p, &s, TY, &state, &config).await;
    assert_eq!(again.planned_state, state, "case second_plan_no_changes");
    assert!(again.requires_replace.is_empty(), "case no_replace_on_noop");

    let json =
        terrane_value::json::encode_bytes(&state, &s.resource(TY).unwrap().block.implied_type())
            .unwrap();
    let up = p
        .upgrade_resource_state(UpgradeRequest {
            type_name: TY,
            version: 0,
            raw_state_json: &json,
            raw_state_flatmap: None,
        })
        .await
        .unwrap();
    assert!(!up.diagnostics.has_errors(), "{}", up.diagnostics);
    assert_eq!(
        up.upgraded_state, state,
        "case upgrade_same_version_identity"
    );

    let result = state
        .get_attr("result")
        .unwrap()
        .as_number()
        .unwrap()
        .to_i64()
        .unwrap();
    let imp = p
        .import_resource_state(TY, &format!("{result},1,1000000,terrane"))
        .await
        .unwrap();
    assert!(!imp.diagnostics.has_errors(), "{}", imp.diagnostics);
    assert_eq!(imp.imported.len(), 1, "case import_one_object");
    let imported = read(p, TY, &imp.imported[0].state).await;
    note("import.state", format!("{:?}", imported));
    let after_import = plan(p, &s, TY, &imported, &config).await;
    assert_eq!(
        after_import.planned_state, imported,
        "case import_then_no_changes"
    );

    let reseeded = object(
        &s,
        TY,
        &[
            ("min", Value::number(1)),
            ("max", Value::number(1_000_000)),
            ("seed", Value::string("other")),
        ],
    );
    let replace = plan(p, &s, TY, &state, &reseeded).await;
    note(
        "plan_replace.requires_replace",
        paths(&replace.requires_replace),
    );
    note(
        "plan_replace.planned",
        format!("{:?}", replace.planned_state),
    );

    // A create of a resource whose result is random: the plan (unknowns)
    // matches; the results match in shape.
    let sconfig = object(&s, "random_string", &[("length", Value::number(16))]);
    let snull = null_of(&s, "random_string");
    let splan = plan(p, &s, "random_string", &snull, &sconfig).await;
    note(
        "random_string.planned",
        format!("{:?}", splan.planned_state),
    );
    let sstate = apply(p, &s, "random_string", &snull, &sconfig, &splan).await;
    note(
        "random_string.result_len",
        format!(
            "{:?}",
            sstate
                .get_attr("result")
                .and_then(Value::as_str)
                .map(|r| r.chars().count())
        ),
    );

    let destroy = p
        .plan_resource_change(PlanRequest {
            type_name: TY,
            prior_state: &state,
            proposed_new_state: &null,
            config: &null,
            prior_private: &[],
            provider_meta: None,
        })
        .await
        .unwrap();
    assert!(destroy.planned_state.is_null(), "case destroy_plan_null");
    let gone = apply(p, &s, TY, &state, &null, &destroy).await;
    assert!(gone.is_null(), "case destroy_result_null");

    // Mistakes of the caller are typed errors, not panics.
    match p
        .read_resource(ReadRequest {
            type_name: "random_nope",
            prior_state: &null,
            private: &[],
            provider_meta: None,
        })
        .await
    {
        Err(ProviderError::UnknownType {
            kind: SchemaKind::Resource,
            name,
            ..
        }) => note("unknown_type", name),
        other => panic!("case unknown_type: {other:?}"),
    }
    let bad = p
        .validate_resource_config(
            TY,
            &object(
                &s,
                TY,
                &[("min", Value::number(10)), ("max", Value::number(1))],
            ),
        )
        .await
        .unwrap();
    note(
        "validate_min_max",
        format!(
            "{:?}",
            bad.0
                .iter()
                .map(|d| (d.severity, d.path.as_ref().map(ToString::to_string)))
                .collect::<Vec<_>>()
        ),
    );
    t
}

fn random_addr() -> ProviderAddr {
    ProviderAddr::parse("hashicorp/random").unwrap()
}

#[tokio::test]
async fn in_process_and_plugin_give_the_same_results() {
    let binary = plugin_binary("terrane-provider-random", "terraform-provider-random");

    let inproc = ProviderHost::new(HostOptions::default());
    inproc.register(random_addr(), builtin(&random_addr()));
    let a = inproc
        .instance(&ProviderConfigKey::root(random_addr()))
        .await
        .unwrap();

    let plugin = ProviderHost::new(HostOptions::default());
    plugin.register(
        random_addr(),
        ProviderSource::Plugin(PluginSource {
            binary,
            version: None,
            h1: None,
            dev_override: true,
        }),
    );
    let b = plugin
        .instance(&ProviderConfigKey::root(random_addr()))
        .await
        .unwrap();

    let (ta, tb) = tokio::join!(run(a.as_ref()), run(b.as_ref()));
    assert!(ta.len() > 10);
    for (x, y) in ta.iter().zip(&tb) {
        assert_eq!(x, y, "in-process and plugin differ at {}", x.0);
    }
    assert_eq!(ta.len(), tb.len());
    assert_eq!(a.address(), b.address(), "case same_address");
    inproc.shutdown().await;
    plugin.shutdown().await;
    assert!(
        b.get_schema().await.is_ok(),
        "case schema_still_cached_after_close"
    );
    match b
        .read_resource(ReadRequest {
            type_name: "random_id",
            prior_state: &Value::null(terrane_value::Type::Dynamic),
            private: &[],
            provider_meta: None,
        })
        .await
    {
        Err(e @ ProviderError::Closed { .. }) => {
            assert!(e.to_string().contains("ReadResource"), "{e}")
        }
        other => panic!("case closed_instance_refuses: {other:?}"),
    }
}

#[tokio::test]
async fn aliases_get_their_own_instances_and_share_one_schema() {
    let binary = plugin_binary("terrane-provider-random", "terraform-provider-random");
    let host = ProviderHost::new(HostOptions::default());
    host.register(
        random_addr(),
        ProviderSource::Plugin(PluginSource {
            binary,
            version: None,
            h1: None,
            dev_override: true,
        }),
    );
    let schema = host.schema(&random_addr()).await.unwrap();
    let default = host
        .instance(&ProviderConfigKey::root(random_addr()))
        .await
        .unwrap();
    let east = host
        .instance(&ProviderConfigKey::root(random_addr()).with_alias("east"))
        .await
        .unwrap();
    let again = host
        .instance(&ProviderConfigKey::root(random_addr()))
        .await
        .unwrap();
    assert!(
        Arc::ptr_eq(&default, &again),
        "case same_config_same_instance"
    );
    assert!(!Arc::ptr_eq(&default, &east), "case alias_own_instance");
    assert!(
        Arc::ptr_eq(&schema, &east.get_schema().await.unwrap()),
        "case schema_fetched_once"
    );
    assert!(
        Arc::ptr_eq(&schema, &default.get_schema().await.unwrap()),
        "case schema_shared"
    );
    configure(default.as_ref()).await;
    configure(east.as_ref()).await;
    assert_eq!(host.started_configs().len(), 2);
    // Both answer, concurrently.
    let s = schema.clone();
    let cfg = object(&s, "random_uuid", &[]);
    let null = null_of(&s, "random_uuid");
    let proposed = proposed_new(&s.resource("random_uuid").unwrap().block, &null, &cfg);
    let req = PlanRequest {
        type_name: "random_uuid",
        prior_state: &null,
        proposed_new_state: &proposed,
        config: &cfg,
        prior_private: &[],
        provider_meta: None,
    };
    let (x, y) = tokio::join!(
        default.plan_resource_change(req.clone()),
        east.plan_resource_change(req.clone())
    );
    assert_eq!(
        x.unwrap().planned_state,
        y.unwrap().planned_state,
        "case aliases_plan_alike"
    );
    assert!(host.stop_all().await.is_empty(), "case stop_all");
    host.shutdown().await;
    assert!(host.started_configs().is_empty());
}

#[tokio::test]
async fn unregistered_and_unlaunchable_providers_are_typed_errors() {
    let host = ProviderHost::new(HostOptions::default());
    match host.instance(&ProviderConfigKey::root(random_addr())).await {
        Err(e @ ProviderError::NotRegistered { .. }) => assert!(e
            .to_string()
            .contains("registry.terraform.io/hashicorp/random")),
        Err(e) => panic!("case not_registered: {e}"),
        Ok(_) => panic!("case not_registered: got an instance"),
    }
    let addr = ProviderAddr::parse("acme/missing").unwrap();
    host.register(
        addr.clone(),
        ProviderSource::Plugin(PluginSource {
            binary: "/nonexistent/terraform-provider-missing".into(),
            version: None,
            h1: None,
            dev_override: true,
        }),
    );
    match host.schema(&addr).await {
        Err(e @ ProviderError::Launch { .. }) => {
            let text = e.to_string();
            assert!(
                text.contains("registry.terraform.io/acme/missing")
                    && text.contains("/nonexistent/terraform-provider-missing"),
                "case launch_failure: {text}"
            );
        }
        Err(e) => panic!("case launch_failure: {e}"),
        Ok(_) => panic!("case launch_failure: got a schema"),
    }
}
