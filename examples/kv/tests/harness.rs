//! The kv provider through the SDK's harness (issue 23): the lifecycle with
//! drift and import, the data source, and the harness's own checks.

use terrane_example_kv::Kv;
use terrane_sdk::testing::Harness;
use terrane_sdk::{values, Diagnostics, Path, Value};

async fn configured(dir: &std::path::Path) -> Harness<Kv> {
    let h = Harness::new(Kv);
    let path = dir.join("kv.json").display().to_string();
    h.configure(&values::object([("path", values::string(path))]))
        .await
        .expect("configure");
    h
}

fn entry(key: &str, value: &str) -> Value {
    values::object([
        ("key", values::string(key)),
        ("value", values::string(value)),
    ])
}

/// One failing step: its summary, the path it names, and a piece of detail.
#[track_caller]
fn check(case: &str, got: Result<impl std::fmt::Debug, Diagnostics>, want: (&str, &str, &str)) {
    let d = got.expect_err(case);
    let first = &d.0[0];
    assert_eq!(first.summary, want.0, "case {case}: {d}");
    let path = first
        .path
        .as_ref()
        .map(terrane_sdk::validate::terraform_path);
    assert_eq!(path.as_deref(), Some(want.1), "case {case}: {d}");
    assert!(first.detail.contains(want.2), "case {case}: {d}");
}

#[tokio::test]
async fn item23_kv_lifecycle_drift_and_data_source() {
    let dir = terrane_testkit::temp_dir();
    let h = configured(dir.path()).await;
    let created = h
        .apply_config(
            "kv_entry",
            &h.null_state("kv_entry").await.unwrap(),
            &entry("colour", "red"),
        )
        .await
        .expect("create");
    assert_eq!(
        created.get_attr("version"),
        Some(&values::number(1)),
        "case create_version"
    );
    assert_eq!(
        created.get_attr("id"),
        Some(&values::string("colour")),
        "case create_id"
    );
    let plan = h
        .plan("kv_entry", &created, &entry("colour", "red"))
        .await
        .unwrap();
    assert!(plan.is_noop(&created), "case no_change_plan: {plan:?}");

    let plan = h
        .plan("kv_entry", &created, &entry("colour", "blue"))
        .await
        .unwrap();
    assert!(
        plan.requires_replace.is_empty(),
        "case value_in_place: {plan:?}"
    );
    let updated = h
        .apply_config("kv_entry", &created, &entry("colour", "blue"))
        .await
        .unwrap();
    assert_eq!(
        updated.get_attr("version"),
        Some(&values::number(2)),
        "case update_version"
    );
    let plan = h
        .plan("kv_entry", &updated, &entry("shade", "blue"))
        .await
        .unwrap();
    assert_eq!(
        plan.requires_replace,
        vec![Path::root().attr("key")],
        "case key_forces_new"
    );

    // Drift: someone edits the file behind Terraform's back.
    let file = dir.path().join("kv.json");
    let text = std::fs::read_to_string(&file)
        .unwrap()
        .replace("\"blue\"", "\"green\"");
    std::fs::write(&file, text).unwrap();
    let refreshed = h
        .read("kv_entry", &updated)
        .await
        .unwrap()
        .expect("still there");
    assert_eq!(
        refreshed.get_attr("value"),
        Some(&values::string("green")),
        "case drift_read"
    );
    let plan = h
        .plan("kv_entry", &refreshed, &entry("colour", "blue"))
        .await
        .unwrap();
    assert!(!plan.is_noop(&refreshed), "case drift_plans_a_change");
    let fixed = h
        .apply_config("kv_entry", &refreshed, &entry("colour", "blue"))
        .await
        .unwrap();

    let key = values::object([("key", values::string("colour"))]);
    let read = h.read_data("kv_entry", &key).await.expect("data source");
    assert_eq!(
        read.get_attr("value"),
        Some(&values::string("blue")),
        "case data_value"
    );
    assert_eq!(
        read.get_attr("version"),
        fixed.get_attr("version"),
        "case data_version"
    );
    let none = values::object([("key", values::string("absent"))]);
    check(
        "data_missing",
        h.read_data("kv_entry", &none).await,
        ("Entry Not Found", "key", "absent"),
    );

    h.import_verify("kv_entry", "colour", &fixed, &[])
        .await
        .expect("import verify");
    h.destroy("kv_entry", &fixed).await.expect("destroy");
    assert_eq!(
        h.read("kv_entry", &fixed).await.unwrap(),
        None,
        "case gone_after_destroy"
    );
}

#[tokio::test]
async fn item23_harness_reports_mistakes_and_paths() {
    let dir = terrane_testkit::temp_dir();
    let bare = Harness::new(Kv);
    check(
        "configure_missing_required",
        bare.configure(&values::object([])).await,
        ("Missing required argument", "path", "\"path\" is required"),
    );
    let h = configured(dir.path()).await;
    let null = h.null_state("kv_entry").await.unwrap();
    let wrong_type = values::object([("key", values::string("k")), ("value", values::number(3))]);
    check(
        "test_value_wrong_type",
        h.plan("kv_entry", &null, &wrong_type).await,
        ("Invalid Test Value", "value", "mistake in the test"),
    );
    let unknown_attr =
        values::object([("key", values::string("k")), ("colour", values::bool(true))]);
    check(
        "test_value_unknown_attribute",
        h.plan("kv_entry", &null, &unknown_attr).await,
        (
            "Invalid Test Value",
            "colour",
            "no attribute named \"colour\"",
        ),
    );
    check(
        "validator_sentence_and_path",
        h.plan("kv_entry", &null, &entry("Bad Key", "x")).await,
        (
            "Invalid Attribute Value Match",
            "key",
            "Attribute key must be lowercase letters",
        ),
    );
    check(
        "resource_missing_required",
        h.plan(
            "kv_entry",
            &null,
            &values::object([("key", values::string("k"))]),
        )
        .await,
        (
            "Missing required argument",
            "value",
            "\"value\" is required",
        ),
    );
    let created = h
        .apply_config("kv_entry", &null, &entry("k", "v"))
        .await
        .unwrap();
    let file = dir.path().join("kv.json");
    let text = std::fs::read_to_string(&file)
        .unwrap()
        .replace("\"v\"", "\"w\"");
    std::fs::write(&file, text).unwrap();
    check(
        "import_verify_names_the_difference",
        h.import_verify("kv_entry", "k", &created, &[]).await,
        (
            "ImportStateVerify attributes not equivalent",
            "value",
            "imported \"w\", created \"v\"",
        ),
    );
    assert!(
        h.import_verify("kv_entry", "k", &created, &["value"])
            .await
            .is_ok(),
        "case import_verify_ignores"
    );
}
