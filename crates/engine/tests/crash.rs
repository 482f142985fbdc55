//! A plugin that exits in the middle of a call (the crash fixture bin exits
//! inside PlanResourceChange) gives a typed error that names the provider
//! and the operation; later calls on the same instance fail the same way
//! at once; other instances are unaffected; shutdown does not hang. The
//! same over protocol 6 and protocol 5 (the fixture limited to 5): one
//! place handles transport failure for both.

mod support;

use support::*;
use terrane_engine::provider::discovery::PluginSource;
use terrane_engine::provider::*;
use terrane_schema::objchange::proposed_new;
use terrane_value::Value;

#[tokio::test]
async fn plugin_exiting_mid_call_names_provider_and_operation() {
    check("6").await;
}

#[tokio::test]
async fn item1_protocol5_plugin_exiting_mid_call_names_provider_and_operation() {
    check("5").await;
}

async fn check(protocol: &str) {
    let addr = ProviderAddr::parse("terrane/crash").unwrap();
    let host = ProviderHost::new(HostOptions {
        plugin_env: vec![(terrane_plugin::PROTOCOL_ENV.into(), protocol.into())],
        ..HostOptions::default()
    });
    let binary = terrane_testkit::fixture("terrane-engine-crash-fixture");
    host.register(
        addr.clone(),
        ProviderSource::Plugin(PluginSource {
            binary,
            version: None,
            h1: None,
            dev_override: true,
        }),
    );
    let p = host
        .instance(&ProviderConfigKey::root(addr.clone()))
        .await
        .unwrap();
    let other = host
        .instance(&ProviderConfigKey::root(addr.clone()).with_alias("b"))
        .await
        .unwrap();
    configure(p.as_ref()).await;
    let s = p.get_schema().await.unwrap();
    let config = object(&s, "crash_thing", &[("name", Value::string("x"))]);
    let null = null_of(&s, "crash_thing");
    let proposed = proposed_new(&s.resource("crash_thing").unwrap().block, &null, &config);
    let req = PlanRequest {
        type_name: "crash_thing",
        prior_state: &null,
        proposed_new_state: &proposed,
        config: &config,
        prior_private: &[],
        provider_meta: None,
    };

    let err = p
        .plan_resource_change(req.clone())
        .await
        .expect_err("the plugin exits");
    let text = err.to_string();
    eprintln!("the crash as users see it: {text}");
    assert!(
        matches!(
            err,
            ProviderError::Crashed {
                operation: "PlanResourceChange",
                ..
            }
        ),
        "case crash_is_typed: {err:?}"
    );
    assert!(
        text.starts_with(
            "The plugin for registry.terraform.io/terrane/crash crashed during PlanResourceChange"
        ),
        "case message_names_both: {text}"
    );
    assert_eq!(err.operation(), Some("PlanResourceChange"));

    let later = p
        .read_resource(ReadRequest {
            type_name: "crash_thing",
            prior_state: &null,
            private: &[],
            provider_meta: None,
        })
        .await
        .expect_err("still dead");
    assert!(
        matches!(
            later,
            ProviderError::Crashed {
                operation: "ReadResource",
                ..
            }
        ),
        "case later_calls_fail_fast: {later:?}"
    );

    // The other alias is its own process and still answers.
    configure(other.as_ref()).await;
    let v = other
        .validate_resource_config("crash_thing", &config)
        .await
        .unwrap();
    assert!(!v.has_errors(), "case other_instance_alive");

    tokio::time::timeout(std::time::Duration::from_secs(10), host.shutdown())
        .await
        .expect("case shutdown_does_not_hang");
}
