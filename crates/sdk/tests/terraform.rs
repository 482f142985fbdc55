//! SDK behaviour that only real Terraform can judge: a resource that plans a
//! value different from its configuration makes Terraform report
//! "Provider produced invalid plan", naming the attribute.

#[test]
fn terraform_rejects_an_invalid_plan() {
    let Some(tf) = terrane_testkit::terraform() else {
        return;
    };
    let dir = terrane_testkit::temp_dir();
    let d = dir.path();
    let rc = terrane_testkit::dev_overrides(
        d,
        &[(
            "registry.terraform.io/terrane/broken",
            &terrane_testkit::fixture("terrane-sdk-broken-fixture"),
        )],
    );
    std::fs::write(
        d.join("main.tf"),
        "terraform {\n  required_providers {\n    broken = { source = \"terrane/broken\" }\n  }\n}\n\nresource \"broken_echo\" \"e\" {\n  value = \"what I wrote\"\n}\n",
    )
    .unwrap();
    let out = tf.run(
        d,
        &["plan", "-input=false", "-no-color"],
        &[("TF_CLI_CONFIG_FILE", &rc)],
    );
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("Provider produced invalid plan"),
        "case invalid_plan_title\n{}",
        out.stderr
    );
    let flat = out.stderr.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("broken_echo.e.value: planned value cty.StringVal(\"not what you wrote\") does not match config value cty.StringVal(\"what I wrote\")"),
        "case names_attribute_and_values\n{}",
        out.stderr
    );
}
