//! terraform_data through the SDK harness (Terraform's plan-validity and
//! apply-compatibility checks included): input echoed to output, in-place
//! update with output unknown until apply (as Terraform plans it), null
//! input giving null output, replacement by triggers_replace, import by id.

use terrane_provider_terraform::TerraformProvider;
use terrane_sdk::testing::Harness;
use terrane_sdk::{Type, Value};

#[tokio::test]
async fn terraform_data_lifecycle() {
    let h = Harness::new(TerraformProvider);
    let (_, ty) = h.resource_type("terraform_data").await.unwrap();
    let null = Value::null(ty);
    let cfg = |input: Value, trig: Value| {
        let h = &h;
        async move {
            h.object(
                "terraform_data",
                &[("input", input), ("triggers_replace", trig)],
            )
            .await
        }
    };
    let nested = Value::object_from([
        ("name", Value::string("x")),
        (
            "ports",
            Value::tuple(vec![Value::number(80), Value::number(443)]),
        ),
    ]);

    let c1 = cfg(nested.clone(), Value::null(Type::Dynamic))
        .await
        .unwrap();
    let plan = h.plan("terraform_data", &null, &c1).await.unwrap();
    assert!(
        plan.planned
            .get_attr("output")
            .is_some_and(|o| !o.is_known() && o.ty() == nested.ty()),
        "case output_unknown_at_plan"
    );
    let s1 = h
        .apply("terraform_data", &null, &plan.planned, &c1)
        .await
        .unwrap();
    assert!(
        terrane_sdk::str_attr(&s1, "id").is_some_and(|id| id.len() == 36),
        "case id_is_uuid"
    );
    assert!(
        h.plan("terraform_data", &s1, &c1)
            .await
            .unwrap()
            .is_noop(&s1),
        "case no_change"
    );

    let c2 = cfg(Value::string("new"), Value::null(Type::Dynamic))
        .await
        .unwrap();
    let plan = h.plan("terraform_data", &s1, &c2).await.unwrap();
    assert!(
        plan.requires_replace.is_empty(),
        "case input_change_in_place"
    );
    assert!(
        plan.planned
            .get_attr("output")
            .is_some_and(|o| !o.is_known()),
        "case output_unknown_after_input_change"
    );
    assert_eq!(
        plan.planned.get_attr("id"),
        s1.get_attr("id"),
        "case id_kept"
    );
    let s2 = h
        .apply("terraform_data", &s1, &plan.planned, &c2)
        .await
        .unwrap();
    assert_eq!(
        s2.get_attr("output"),
        Some(&Value::string("new")),
        "case output_after_apply"
    );
    let c_null = cfg(Value::null(Type::Dynamic), Value::null(Type::Dynamic))
        .await
        .unwrap();
    let plan = h.plan("terraform_data", &null, &c_null).await.unwrap();
    assert!(
        plan.planned.get_attr("output").is_some_and(Value::is_null),
        "case null_input_null_output"
    );

    let unknown = cfg(Value::unknown(Type::String), Value::null(Type::Dynamic))
        .await
        .unwrap();
    let plan = h.plan("terraform_data", &s2, &unknown).await.unwrap();
    assert!(
        plan.planned
            .get_attr("output")
            .is_some_and(|o| !o.is_known()),
        "case unknown_input_unknown_output"
    );

    let c3 = cfg(Value::string("new"), Value::string("v2"))
        .await
        .unwrap();
    let plan = h.plan("terraform_data", &s2, &c3).await.unwrap();
    assert_eq!(
        plan.requires_replace
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        [".triggers_replace"],
        "case triggers_replace"
    );

    let imported = h
        .import("terraform_data", "0b6cfa3c-2f2b-4d0a-9d5e-1f1a8a2c9b11")
        .await
        .unwrap();
    assert_eq!(
        terrane_sdk::str_attr(&imported, "id").as_deref(),
        Some("0b6cfa3c-2f2b-4d0a-9d5e-1f1a8a2c9b11"),
        "case import_by_id"
    );
}
