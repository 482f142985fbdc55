//! The example provider under real Terraform: create, in-place update of a
//! computed greeting, replacement on `language`, no-change plans between.

#[test]
fn example_provider_under_terraform() {
    let Some(tf) = terrane_testkit::terraform() else {
        return;
    };
    let dir = terrane_testkit::temp_dir();
    let d = dir.path();
    let rc = terrane_testkit::dev_overrides(
        d,
        &[(
            "registry.terraform.io/terrane/greeting",
            std::path::Path::new(env!("CARGO_BIN_EXE_terraform-provider-greeting")),
        )],
    );
    let write = |name: &str, lang: &str| {
        let cfg = format!("terraform {{\n  required_providers {{\n    greeting = {{ source = \"terrane/greeting\" }}\n  }}\n}}\n\nresource \"greeting_message\" \"hi\" {{\n  name = \"{name}\"\n  language = \"{lang}\"\n}}\n\noutput \"text\" {{\n  value = greeting_message.hi.text\n}}\n");
        std::fs::write(d.join("main.tf"), cfg).unwrap();
    };
    let run = |args: &[&str], code: i32| {
        let out = tf.run(d, args, &[("TF_CLI_CONFIG_FILE", &rc)]);
        assert_eq!(
            out.code, code,
            "terraform {args:?}\n{}\n{}",
            out.stdout, out.stderr
        );
        assert!(!out.stderr.contains("Provider produced"), "{}", out.stderr);
        out
    };
    write("Ada", "en");
    run(&["apply", "-auto-approve", "-input=false", "-no-color"], 0);
    assert_eq!(run(&["output", "-raw", "text"], 0).stdout, "Hello, Ada!");
    run(
        &["plan", "-input=false", "-no-color", "-detailed-exitcode"],
        0,
    );
    write("Grace", "en");
    let plan = run(
        &["plan", "-input=false", "-no-color", "-detailed-exitcode"],
        2,
    );
    assert!(
        plan.stdout.contains("will be updated in-place"),
        "case in_place_update\n{}",
        plan.stdout
    );
    run(&["apply", "-auto-approve", "-input=false", "-no-color"], 0);
    assert_eq!(run(&["output", "-raw", "text"], 0).stdout, "Hello, Grace!");
    write("Grace", "fr");
    let plan = run(
        &["plan", "-input=false", "-no-color", "-detailed-exitcode"],
        2,
    );
    assert!(
        plan.stdout.contains("must be replaced"),
        "case language_forces_replacement\n{}",
        plan.stdout
    );
    run(&["apply", "-auto-approve", "-input=false", "-no-color"], 0);
    assert_eq!(
        run(&["output", "-raw", "text"], 0).stdout,
        "Bonjour, Grace!"
    );
    run(
        &["plan", "-input=false", "-no-color", "-detailed-exitcode"],
        0,
    );
}
