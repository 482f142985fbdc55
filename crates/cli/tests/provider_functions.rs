//! Provider functions (`provider::local::direxists(...)`) through the
//! `terrane` binary, with the local provider built in and as a plugin
//! process. Evaluation is synchronous and the walk runs on one thread, so
//! a function call must never wait for that thread: every case runs under
//! a deadline, and the concurrent case calls the function from many
//! instances while the provider that serves them is still starting.

use std::path::Path;
use std::time::Duration;
use terrane_testkit::{isolated, Out};

const PROVIDERS: &str =
    "terraform {\n  required_providers {\n    local = { source = \"hashicorp/local\" }\n  }\n}\n";

/// Runs terrane in `dir`; a run that outlives the deadline is killed and
/// fails the test (a function call waiting on the walk would hang). Both
/// pipes are read while it runs, so output past the pipe buffer cannot
/// block it.
fn terrane(dir: &Path, rc: &Path, args: &[&str]) -> Out {
    let mut cmd = isolated(env!("CARGO_BIN_EXE_terrane"), dir);
    cmd.args(args).env("TF_CLI_CONFIG_FILE", rc);
    terrane_testkit::output_within(&mut cmd, Duration::from_secs(60)).unwrap_or_else(|out| {
        panic!(
            "terrane {args:?} did not finish within 60 s (a provider function call waiting on the walk?)\nstdout:\n{}\nstderr:\n{}",
            out.stdout, out.stderr
        )
    })
}

/// What a case expects of `plan -detailed-exitcode`, then of apply.
enum Want {
    /// Plan exits with the code, apply succeeds, `output -json` has these
    /// values, and a second plan has no changes.
    Applies {
        plan_code: i32,
        plan_shows: &'static str,
        outputs: &'static [(&'static str, &'static str)],
    },
    /// Plan fails with these texts in its error output.
    Fails(&'static [&'static str]),
}

struct Case {
    name: &'static str,
    config: &'static str,
    want: Want,
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "outputs_and_locals",
            config: r#"
locals {
  here = provider::local::direxists(path.module)
}
resource "terraform_data" "t" {
  input = local.here ? "dir" : "none"
}
output "here" {
  value = local.here
}
output "nowhere" {
  value = provider::local::direxists("${path.module}/nowhere")
}
output "input" {
  value = terraform_data.t.output
}
"#,
            want: Want::Applies {
                plan_code: 2,
                plan_shows: "+ here    = true",
                outputs: &[("here", "true"), ("nowhere", "false"), ("input", "\"dir\"")],
            },
        },
        Case {
            name: "many_instances_while_the_provider_starts",
            config: r#"
resource "local_file" "f" {
  count    = 40
  filename = "${path.module}/out/f${count.index}.txt"
  content  = "${count.index}: ${provider::local::direxists(path.module)}"
}
output "first" {
  value = local_file.f[0].content
}
"#,
            want: Want::Applies {
                plan_code: 2,
                plan_shows: "Plan: 40 to add",
                outputs: &[("first", "\"0: true\"")],
            },
        },
        Case {
            name: "unknown_argument_gives_unknown_result",
            config: r#"
resource "terraform_data" "t" {
  input = path.module
}
output "later" {
  value = provider::local::direxists(terraform_data.t.output)
}
"#,
            want: Want::Applies {
                plan_code: 2,
                plan_shows: "+ later = (known after apply)",
                outputs: &[("later", "true")],
            },
        },
        Case {
            name: "function_error_names_the_argument",
            config: r#"
output "file" {
  value = provider::local::direxists("${path.module}/main.tf")
}
"#,
            want: Want::Fails(&["Invalid function argument", "main.tf", "is not a directory"]),
        },
        Case {
            name: "unknown_function",
            config: r#"
output "x" {
  value = provider::local::nosuch("x")
}
"#,
            want: Want::Fails(&["Call to unknown function", "provider::local::nosuch"]),
        },
    ]
}

fn check(case: &Case, source: &str, rc: &Path) {
    let dir = terrane_testkit::temp_dir();
    let d = dir.path();
    std::fs::write(d.join("main.tf"), format!("{PROVIDERS}{}", case.config)).unwrap();
    let label = format!("case {} ({source})", case.name);
    let init = terrane(d, rc, &["init", "-input=false", "-no-color"]);
    assert_eq!(
        init.code, 0,
        "{label}: init\n{}{}",
        init.stdout, init.stderr
    );
    let plan = terrane(
        d,
        rc,
        &["plan", "-input=false", "-no-color", "-detailed-exitcode"],
    );
    match &case.want {
        Want::Fails(texts) => {
            assert_eq!(
                plan.code, 1,
                "{label}: plan should fail\n{}{}",
                plan.stdout, plan.stderr
            );
            for t in *texts {
                assert!(
                    plan.stderr.contains(t),
                    "{label}: {t:?} missing from\n{}",
                    plan.stderr
                );
            }
        }
        Want::Applies {
            plan_code,
            plan_shows,
            outputs,
        } => {
            assert_eq!(
                plan.code, *plan_code,
                "{label}: plan\n{}{}",
                plan.stdout, plan.stderr
            );
            assert!(
                plan.stdout.contains(plan_shows),
                "{label}: {plan_shows:?} missing from the plan\n{}",
                plan.stdout
            );
            let apply = terrane(
                d,
                rc,
                &["apply", "-auto-approve", "-input=false", "-no-color"],
            );
            assert_eq!(
                apply.code, 0,
                "{label}: apply\n{}{}",
                apply.stdout, apply.stderr
            );
            let out = terrane(d, rc, &["output", "-json"]);
            let json: serde_json::Value = serde_json::from_str(&out.stdout)
                .unwrap_or_else(|e| panic!("{label}: output -json: {e}\n{}", out.stdout));
            for (name, want) in *outputs {
                assert_eq!(
                    json[name]["value"].to_string(),
                    *want,
                    "{label}: output {name}"
                );
            }
            let again = terrane(
                d,
                rc,
                &["plan", "-input=false", "-no-color", "-detailed-exitcode"],
            );
            assert_eq!(
                again.code, 0,
                "{label}: second plan should have no changes\n{}{}",
                again.stdout, again.stderr
            );
        }
    }
}

#[test]
fn provider_functions_built_in() {
    let dir = terrane_testkit::temp_dir();
    let rc = dir.path().join("empty.tfrc");
    std::fs::write(&rc, "").unwrap();
    for case in cases() {
        check(&case, "built in", &rc);
    }
}

#[test]
fn provider_functions_through_a_plugin() {
    let dir = terrane_testkit::temp_dir();
    let local = terrane_testkit::built_binary("terrane-provider-local", "terraform-provider-local");
    let rc = terrane_testkit::dev_overrides(
        dir.path(),
        &[("registry.terraform.io/hashicorp/local", &local)],
    );
    for case in cases() {
        check(&case, "plugin", Path::new(&rc));
    }
}
