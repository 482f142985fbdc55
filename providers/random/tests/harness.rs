//! The random provider through the SDK's in-process harness (no Terraform
//! binary): create, no-change plan, replacement by keepers, import verify,
//! destroy — with Terraform's plan-validity and apply-compatibility checks
//! applied at every step.

use terrane_provider_random::RandomProvider;
use terrane_sdk::testing::Harness;
use terrane_sdk::{Type, Value};

#[tokio::test]
async fn random_string_lifecycle_in_process() {
    let h = Harness::new(RandomProvider);
    h.configure(&Value::object(Default::default()))
        .await
        .unwrap();
    let keepers = |k: &str| Value::map(Type::String, [("k".to_string(), Value::string(k))].into());
    let config = h
        .object(
            "random_string",
            &[("length", Value::number(12)), ("keepers", keepers("a"))],
        )
        .await
        .unwrap();
    let (_, ty) = h.resource_type("random_string").await.unwrap();
    let null = Value::null(ty);

    let state = h
        .apply_config("random_string", &null, &config)
        .await
        .unwrap();
    let result = state
        .get_attr("result")
        .and_then(Value::as_str)
        .unwrap()
        .to_string();
    assert_eq!(result.chars().count(), 12, "case create_generates_result");

    let again = h.plan("random_string", &state, &config).await.unwrap();
    assert!(
        again.is_noop(&state),
        "case second_plan_no_changes: {:?}",
        again
    );

    assert_eq!(
        h.read("random_string", &state).await.unwrap(),
        Some(state.clone()),
        "case read_keeps_state"
    );

    let changed = h
        .object(
            "random_string",
            &[("length", Value::number(12)), ("keepers", keepers("b"))],
        )
        .await
        .unwrap();
    let plan = h.plan("random_string", &state, &changed).await.unwrap();
    assert_eq!(
        plan.requires_replace
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        [".keepers"],
        "case keepers_require_replace"
    );
    let replaced = h
        .apply_config("random_string", &state, &changed)
        .await
        .unwrap();
    assert_ne!(
        replaced.get_attr("result"),
        state.get_attr("result"),
        "case replacement_regenerates"
    );

    let imported = h.import("random_string", "imported-value").await.unwrap();
    assert_eq!(
        imported.get_attr("result").and_then(Value::as_str),
        Some("imported-value"),
        "case import_sets_result"
    );
    let imported_config = h
        .object("random_string", &[("length", Value::number(14))])
        .await
        .unwrap();
    assert!(
        h.plan("random_string", &imported, &imported_config)
            .await
            .unwrap()
            .is_noop(&imported),
        "case import_then_no_changes"
    );

    h.destroy("random_string", &replaced).await.unwrap();
    assert!(
        h.import("random_pet", "x").await.is_err(),
        "case pet_import_refused"
    );
}

#[tokio::test]
async fn invalid_arguments_are_diagnosed_on_the_attribute() {
    let h = Harness::new(RandomProvider);
    let config = h
        .object(
            "random_integer",
            &[("min", Value::number(10)), ("max", Value::number(1))],
        )
        .await
        .unwrap();
    let (_, ty) = h.resource_type("random_integer").await.unwrap();
    let err = h
        .apply_config("random_integer", &Value::null(ty.clone()), &config)
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("minimum (10) must be less than or equal to the maximum (1)"),
        "case min_greater_than_max: {err}"
    );
    let zero = h
        .object("random_id", &[("byte_length", Value::number(0))])
        .await
        .unwrap();
    let (_, idty) = h.resource_type("random_id").await.unwrap();
    let err = h
        .plan("random_id", &Value::null(idty), &zero)
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("byte_length value must be between 1 and 4096, got: 0"),
        "case validator_runs: {err}"
    );
}
