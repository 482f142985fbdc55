//! The time provider under real Terraform and under terrane:
//! time_static fixed at creation (and importable), time_offset updated in
//! place when an offset changes, time_rotating re-created on refresh once
//! its rotation time has passed, time_sleep waiting on create; no-change
//! plans between. Once with the provider offering both plugin protocols
//! (hosts pick 6) and once offering only protocol 5 (issue 15: the same
//! lifecycle over 5).

#[test]
fn time_provider_under_terraform() {
    lifecycle(terrane_testkit::terraform(), "5,6");
}

#[test]
fn time_provider_under_terraform_over_protocol_5() {
    lifecycle(terrane_testkit::terraform(), "5");
}

#[test]
fn time_provider_under_terrane_over_protocol_5() {
    let terrane = terrane_testkit::Terraform {
        program: terrane_testkit::terrane_bin(),
    };
    lifecycle(Some(terrane), "5");
}

/// The lifecycle driven by `tool` (Terraform, or terrane given the same
/// arguments), the plugin offering `protocols`.
fn lifecycle(tool: Option<terrane_testkit::Terraform>, protocols: &str) {
    let Some(tf) = tool else {
        return;
    };
    let dir = terrane_testkit::temp_dir();
    let d = dir.path();
    let rc = terrane_testkit::dev_overrides(
        d,
        &[(
            "registry.terraform.io/terrane/time",
            std::path::Path::new(env!("CARGO_BIN_EXE_terraform-provider-time")),
        )],
    );
    let write = |days: i64, rotation: &str| {
        let cfg = format!(
            "terraform {{\n  required_providers {{\n    time = {{ source = \"terrane/time\" }}\n  }}\n}}\n\n\
             resource \"time_static\" \"t\" {{}}\n\n\
             resource \"time_offset\" \"o\" {{\n  base_rfc3339 = \"2024-01-31T00:00:00Z\"\n  offset_days = {days}\n}}\n\n\
             resource \"time_rotating\" \"r\" {{\n  rfc3339 = \"2020-01-01T00:00:00Z\"\n  rotation_rfc3339 = \"{rotation}\"\n}}\n\n\
             resource \"time_sleep\" \"s\" {{\n  create_duration = \"1s\"\n}}\n\n\
             output \"offset\" {{\n  value = time_offset.o.rfc3339\n}}\n"
        );
        std::fs::write(d.join("main.tf"), cfg).unwrap();
    };
    let run = |args: &[&str], code: i32| {
        let out = tf.run(
            d,
            args,
            // The SDK's TERRANE_PLUGIN_PROTOCOL: the versions it offers.
            &[
                ("TF_CLI_CONFIG_FILE", rc.as_str()),
                ("TERRANE_PLUGIN_PROTOCOL", protocols),
            ],
        );
        assert_eq!(
            out.code, code,
            "terraform {args:?}\n{}\n{}",
            out.stdout, out.stderr
        );
        assert!(!out.stderr.contains("Provider produced"), "{}", out.stderr);
        out
    };
    write(1, "2999-01-01T00:00:00Z");
    let started = std::time::Instant::now();
    run(&["apply", "-auto-approve", "-input=false", "-no-color"], 0);
    assert!(
        started.elapsed() >= std::time::Duration::from_secs(1),
        "case sleep_waits"
    );
    assert_eq!(
        run(&["output", "-raw", "offset"], 0).stdout,
        "2024-02-01T00:00:00Z",
        "case offset_computed"
    );
    run(
        &["plan", "-input=false", "-no-color", "-detailed-exitcode"],
        0,
    );

    write(30, "2999-01-01T00:00:00Z");
    let plan = run(
        &["plan", "-input=false", "-no-color", "-detailed-exitcode"],
        2,
    );
    assert!(
        plan.stdout
            .contains("time_offset.o will be updated in-place"),
        "case offset_updates_in_place\n{}",
        plan.stdout
    );
    run(&["apply", "-auto-approve", "-input=false", "-no-color"], 0);
    assert_eq!(
        run(&["output", "-raw", "offset"], 0).stdout,
        "2024-03-01T00:00:00Z",
        "case offset_recomputed"
    );

    // A rotation time in the past: refresh drops the object, plan re-creates it.
    write(30, "2020-06-01T00:00:00Z");
    run(
        &[
            "apply",
            "-auto-approve",
            "-input=false",
            "-no-color",
            "-refresh=false",
            "-target=time_rotating.r",
        ],
        0,
    );
    let plan = run(
        &["plan", "-input=false", "-no-color", "-detailed-exitcode"],
        2,
    );
    assert!(
        plan.stdout.contains("time_rotating.r will be created"),
        "case rotation_due_recreates\n{}",
        plan.stdout
    );

    let stamp = "2023-05-06T07:08:09Z";
    std::fs::write(
        d.join("import.tf"),
        "resource \"time_static\" \"imported\" {}\n",
    )
    .unwrap();
    run(
        &[
            "import",
            "-input=false",
            "-no-color",
            "time_static.imported",
            stamp,
        ],
        0,
    );
    let show = run(&["state", "show", "-no-color", "time_static.imported"], 0);
    assert!(
        show.stdout.contains("year") && show.stdout.contains("2023"),
        "case import_fills_parts\n{}",
        show.stdout
    );
}
