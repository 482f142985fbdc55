//! Contract enforcement, end to end: the real `terrane` binary drives a
//! real plugin process (`terrane-contract-fixture`) that breaks one rule
//! family at a time. Each case must fail with Terraform's title, name the
//! resource address and attribute, and leave the state readable with what
//! was there before. The same fixture runs the same steps under real
//! Terraform: its exit codes, titles and addresses, the state afterwards and
//! what a well-behaved re-plan proposes must be terrane's too.

use std::path::Path;
use terrane_testkit::{isolated, Out};

#[derive(Clone, Copy, Debug, PartialEq)]
enum Tool {
    Terrane,
    Terraform,
}

fn run(tool: Tool, dir: &Path, rc: &str, mode: &str, args: &[&str]) -> Out {
    let program = match tool {
        Tool::Terrane => std::path::PathBuf::from(env!("CARGO_BIN_EXE_terrane")),
        Tool::Terraform => {
            terrane_testkit::terraform()
                .expect("Terraform (checked by the test)")
                .program
        }
    };
    let mut cmd = isolated(program, dir);
    cmd.args(args)
        .env("TF_CLI_CONFIG_FILE", rc)
        .env("TF_IN_AUTOMATION", "1")
        .env("TERRANE_BROKEN_MODE", mode)
        .env("NO_COLOR", "1");
    if tool == Tool::Terraform && matches!(args.first(), Some(&"plan" | &"apply")) {
        cmd.arg("-no-color");
    }
    cmd.output().expect("the tool runs").into()
}

/// Diagnostic text without Terraform's box drawing and line wrapping.
fn flat(text: &str) -> String {
    text.replace(['│', '╷', '╵'], " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The re-plan's verdict: its `Plan:` line, or that it found no changes.
fn verdict(out: &Out) -> String {
    out.stdout
        .lines()
        .find(|l| l.starts_with("Plan: ") || l.starts_with("No changes."))
        .unwrap_or("(no plan summary)")
        .to_string()
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
    /// The address the diagnostic names.
    address: &'static str,
    /// The attribute it names (empty: the whole object).
    attribute: &'static str,
}

const CASES: &[Case] = &[
    Case {
        name: "invalid_plan",
        mode: "invalid_plan",
        thing_before: false,
        with_data: false,
        command: &["plan"],
        title: "Provider produced invalid plan",
        address: "broken_thing.t",
        attribute: ".value",
    },
    Case {
        name: "inconsistent_final_plan",
        mode: "final_plan",
        thing_before: false,
        with_data: false,
        command: &["apply", "-auto-approve"],
        title: "Provider produced inconsistent final plan",
        address: "broken_thing.t",
        attribute: ".stamp",
    },
    Case {
        name: "inconsistent_result",
        mode: "inconsistent_result",
        thing_before: false,
        with_data: false,
        command: &["apply", "-auto-approve"],
        title: "Provider produced inconsistent result after apply",
        address: "broken_thing.t",
        attribute: ".value",
    },
    Case {
        name: "unknown_after_apply",
        mode: "unknown_after_apply",
        thing_before: false,
        with_data: false,
        command: &["apply", "-auto-approve"],
        title: "Provider returned invalid result object after apply",
        address: "broken_thing.t",
        attribute: ".stamp",
    },
    Case {
        name: "null_after_apply",
        mode: "null_after_apply",
        thing_before: false,
        with_data: false,
        command: &["apply", "-auto-approve"],
        title: "Provider produced inconsistent result after apply",
        address: "broken_thing.t",
        attribute: "",
    },
    Case {
        name: "invalid_refresh",
        mode: "invalid_refresh",
        thing_before: true,
        with_data: false,
        command: &["plan"],
        title: "Provider produced invalid object",
        address: "broken_thing.t",
        attribute: "",
    },
    Case {
        name: "null_data_source",
        mode: "null_data",
        thing_before: false,
        with_data: true,
        command: &["plan"],
        title: "Provider produced null object",
        address: "data.broken_lookup.l",
        attribute: "",
    },
    Case {
        name: "provider_error_on_create",
        mode: "apply_error",
        thing_before: false,
        with_data: false,
        command: &["apply", "-auto-approve"],
        title: "Creation half-failed",
        address: "broken_thing.t",
        attribute: "",
    },
];

/// What one tool did with a case.
#[derive(Debug, PartialEq)]
struct Run {
    /// Exit code of the broken step.
    code: i32,
    /// `state list` after the broken step.
    state: Vec<String>,
    /// Exit code (`-detailed-exitcode`) and verdict of the re-plan.
    replan: (i32, String),
}

fn check(tool: Tool, case: &Case) -> Run {
    let name = format!("{} under {tool:?}", case.name);
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
    let first = run(tool, dir.path(), &rc, "", &["apply", "-auto-approve"]);
    assert_eq!(
        first.code, 0,
        "case {name}: clean apply failed:\n{}{}",
        first.stdout, first.stderr
    );
    let before = run(tool, dir.path(), &rc, "", &["state", "list"]).stdout;
    // The broken step.
    let mut body = format!("{BASE}{THING}");
    if case.with_data {
        body.push_str(LOOKUP);
    }
    write(body);
    let out = run(tool, dir.path(), &rc, case.mode, case.command);
    assert_eq!(
        out.code, 1,
        "case {name}: expected failure, got {}:\n{}{}",
        out.code, out.stdout, out.stderr
    );
    let diags = flat(&out.stderr);
    for (what, text) in [
        ("title", case.title),
        ("address", case.address),
        ("attribute", case.attribute),
    ] {
        assert!(
            diags.contains(text),
            "case {name}: {what} {text:?} missing from:\n{}",
            out.stderr
        );
    }
    assert!(
        !out.stderr.contains("panicked"),
        "case {name}: panicked:\n{}",
        out.stderr
    );
    // State intact: readable, everything that was there still there.
    let after = run(tool, dir.path(), &rc, "", &["state", "list"]);
    assert_eq!(
        after.code, 0,
        "case {name}: state unreadable: {}",
        after.stderr
    );
    for line in before.lines() {
        assert!(
            after.stdout.lines().any(|l| l == line),
            "case {name}: {line} lost from state; now:\n{}",
            after.stdout
        );
    }
    // Nothing the provider got wrong was recorded as a good object: a
    // follow-up plan with a well-behaved provider proposes what Terraform's
    // does (compared by the caller), never a crash.
    let replan = run(
        tool,
        dir.path(),
        &rc,
        "",
        &["plan", "-detailed-exitcode", "-input=false"],
    );
    assert!(
        replan.code == 0 || replan.code == 2,
        "case {name}: plan after the failure failed:\n{}{}",
        replan.stdout,
        replan.stderr
    );
    Run {
        code: out.code,
        state: after.stdout.lines().map(str::to_string).collect(),
        replan: (replan.code, verdict(&replan)),
    }
}

/// Each case under terrane and, with the same fixture and steps, under
/// real Terraform: the case fails there with the same title and address,
/// and terrane's exit codes, state and re-plan are Terraform's.
#[test]
fn every_rule_family_is_caught_and_state_is_intact() {
    let terraform = terrane_testkit::terraform().is_some();
    let mut differences = Vec::new();
    for case in CASES {
        let ours = check(Tool::Terrane, case);
        if !terraform {
            continue;
        }
        let theirs = check(Tool::Terraform, case);
        if ours != theirs {
            differences.push(format!(
                "case {}:\n  terraform: {theirs:?}\n  terrane:   {ours:?}",
                case.name
            ));
        }
    }
    assert!(
        differences.is_empty(),
        "terrane differs from Terraform:\n{}",
        differences.join("\n")
    );
}
