//! Contract enforcement, end to end: the real `terrane` binary drives a
//! real plugin process (`terrane-contract-fixture`) that breaks one rule
//! family at a time. Each case must fail with Terraform's title, name the
//! resource address and attribute, and leave the state readable with what
//! was there before.

use std::path::Path;
use terrane_testkit::{isolated, Out};

fn terrane(dir: &Path, rc: &str, mode: &str, args: &[&str]) -> Out {
    isolated(env!("CARGO_BIN_EXE_terrane"), dir)
        .args(args)
        .env("TF_CLI_CONFIG_FILE", rc)
        .env("TERRANE_BROKEN_MODE", mode)
        .env("NO_COLOR", "1")
        .output()
        .expect("terrane runs")
        .into()
}

const BASE: &str = r#"
terraform {
  required_providers {
    broken = { source = "terrane/broken" }
  }
}

resource "terraform_data" "keep" {
  input = "kept"
}
"#;

const THING: &str = r#"
resource "broken_thing" "t" {
  value = "v"
}
"#;

const LOOKUP: &str = r#"
data "broken_lookup" "l" {
  key = "k"
}
"#;

struct Case {
    name: &'static str,
    mode: &'static str,
    /// Whether broken_thing.t exists (created cleanly) before the broken step.
    thing_before: bool,
    with_data: bool,
    /// The command of the broken step.
    command: &'static [&'static str],
    title: &'static str,
    /// Text the detail must hold (address and attribute).
    detail: &'static str,
}

const CASES: &[Case] = &[
    Case {
        name: "invalid_plan",
        mode: "invalid_plan",
        thing_before: false,
        with_data: false,
        command: &["plan"],
        title: "Provider produced invalid plan",
        detail: "broken_thing.t.value",
    },
    Case {
        name: "inconsistent_final_plan",
        mode: "final_plan",
        thing_before: false,
        with_data: false,
        command: &["apply", "-auto-approve"],
        title: "Provider produced inconsistent final plan",
        detail: "broken_thing.t.stamp",
    },
    Case {
        name: "inconsistent_result",
        mode: "inconsistent_result",
        thing_before: false,
        with_data: false,
        command: &["apply", "-auto-approve"],
        title: "Provider produced inconsistent result after apply",
        detail: ".value",
    },
    Case {
        name: "unknown_after_apply",
        mode: "unknown_after_apply",
        thing_before: false,
        with_data: false,
        command: &["apply", "-auto-approve"],
        title: "Provider returned invalid result object after apply",
        detail: "broken_thing.t.stamp",
    },
    Case {
        name: "null_after_apply",
        mode: "null_after_apply",
        thing_before: false,
        with_data: false,
        command: &["apply", "-auto-approve"],
        title: "Provider returned invalid result object after apply",
        detail: "broken_thing.t",
    },
    Case {
        name: "invalid_refresh",
        mode: "invalid_refresh",
        thing_before: true,
        with_data: false,
        command: &["plan"],
        title: "Provider produced invalid object",
        detail: "broken_thing.t",
    },
    Case {
        name: "null_data_source",
        mode: "null_data",
        thing_before: false,
        with_data: true,
        command: &["plan"],
        title: "Provider produced null object",
        detail: "data.broken_lookup.l",
    },
    Case {
        name: "provider_error_on_create",
        mode: "apply_error",
        thing_before: false,
        with_data: false,
        command: &["apply", "-auto-approve"],
        title: "Creation half-failed",
        detail: "broken_thing.t",
    },
];

fn check(case: &Case) {
    let dir = terrane_testkit::temp_dir();
    let rc = terrane_testkit::dev_overrides(
        dir.path(),
        &[(
            "terrane/broken",
            &terrane_testkit::fixture("terrane-contract-fixture"),
        )],
    );
    let write = |body: String| std::fs::write(dir.path().join("main.tf"), body).unwrap();
    // A clean first apply: state holds terraform_data.keep (and the thing).
    write(if case.thing_before {
        format!("{BASE}{THING}")
    } else {
        BASE.to_string()
    });
    let first = terrane(dir.path(), &rc, "", &["apply", "-auto-approve"]);
    assert_eq!(
        first.code, 0,
        "case {}: clean apply failed:\n{}{}",
        case.name, first.stdout, first.stderr
    );
    let before = terrane(dir.path(), &rc, "", &["state", "list"]).stdout;
    // The broken step.
    let mut body = format!("{BASE}{THING}");
    if case.with_data {
        body.push_str(LOOKUP);
    }
    write(body);
    let out = terrane(dir.path(), &rc, case.mode, case.command);
    assert_eq!(
        out.code, 1,
        "case {}: expected failure, got {}:\n{}{}",
        case.name, out.code, out.stdout, out.stderr
    );
    assert!(
        out.stderr.contains(case.title),
        "case {}: title {:?} missing from:\n{}",
        case.name,
        case.title,
        out.stderr
    );
    assert!(
        out.stderr.contains(case.detail),
        "case {}: detail {:?} missing from:\n{}",
        case.name,
        case.detail,
        out.stderr
    );
    assert!(
        !out.stderr.contains("panicked"),
        "case {}: terrane panicked:\n{}",
        case.name,
        out.stderr
    );
    // State intact: readable, everything that was there still there.
    let after = terrane(dir.path(), &rc, "", &["state", "list"]);
    assert_eq!(
        after.code, 0,
        "case {}: state unreadable: {}",
        case.name, after.stderr
    );
    for line in before.lines() {
        assert!(
            after.stdout.lines().any(|l| l == line),
            "case {}: {line} lost from state; now:\n{}",
            case.name,
            after.stdout
        );
    }
    // Nothing the provider got wrong was recorded as a good object: a
    // follow-up plan with a well-behaved provider still wants to (re)create
    // or is consistent, and never crashes.
    let replan = terrane(dir.path(), &rc, "", &["plan"]);
    assert_eq!(
        replan.code, 0,
        "case {}: plan after the failure failed:\n{}{}",
        case.name, replan.stdout, replan.stderr
    );
}

#[test]
fn every_rule_family_is_caught_and_state_is_intact() {
    for case in CASES {
        check(case);
    }
}
