//! Impure functions (`timestamp`, `uuid`, `bcrypt`) are unknown until
//! apply, as in Terraform: a plan shows their attributes as known after
//! apply, so a configuration using them plans a change every time.
//! terrane and real Terraform run the same steps; their exit codes, plan
//! summaries and the attribute lines must agree.

use std::path::Path;
use terrane_testkit::{isolated, Out};

const CONFIG: &str = r#"
resource "terraform_data" "stamp" {
  input = timestamp()
}
resource "terraform_data" "id" {
  input = uuid()
}
"#;

#[derive(Clone, Copy, Debug)]
enum Tool {
    Terrane,
    Terraform,
}

fn run(tool: Tool, dir: &Path, args: &[&str]) -> Out {
    let mut cmd = match tool {
        Tool::Terrane => isolated(env!("CARGO_BIN_EXE_terrane"), dir),
        Tool::Terraform => {
            let tf = terrane_testkit::terraform().expect("Terraform (checked by the test)");
            isolated(tf.program, dir)
        }
    };
    cmd.args(args).arg("-no-color").env("NO_COLOR", "1");
    let rc = dir.join("empty.tfrc");
    std::fs::write(&rc, "").unwrap();
    cmd.env("TF_CLI_CONFIG_FILE", &rc);
    cmd.output().expect("the tool runs").into()
}

/// What a tool does with the configuration: the first plan's and the
/// re-plan's exit codes and summaries, and the re-plan's input lines.
fn steps(tool: Tool) -> Vec<String> {
    let dir = terrane_testkit::temp_dir();
    std::fs::write(dir.path().join("main.tf"), CONFIG).unwrap();
    let mut seen = Vec::new();
    let summary = |out: &Out| {
        out.stdout
            .lines()
            .filter(|l| {
                l.starts_with("Plan: ")
                    || l.trim_start().starts_with("+ input")
                    || l.trim_start().starts_with("~ input")
            })
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .map(|l| match l.split_once(" = \"") {
                // An old value (a time or a UUID) differs between runs.
                Some((attr, rest)) => format!(
                    "{attr} = \"...\"{}",
                    &rest[rest.find('"').map_or(0, |i| i + 1)..]
                ),
                None => l,
            })
            .collect::<Vec<_>>()
            .join(" | ")
    };
    let plan = run(
        tool,
        dir.path(),
        &["plan", "-detailed-exitcode", "-input=false"],
    );
    seen.push(format!("first plan exit {}: {}", plan.code, summary(&plan)));
    let apply = run(
        tool,
        dir.path(),
        &["apply", "-auto-approve", "-input=false"],
    );
    assert_eq!(
        apply.code, 0,
        "{tool:?} apply failed:\n{}{}",
        apply.stdout, apply.stderr
    );
    let replan = run(
        tool,
        dir.path(),
        &["plan", "-detailed-exitcode", "-input=false"],
    );
    seen.push(format!(
        "re-plan exit {}: {}",
        replan.code,
        summary(&replan)
    ));
    seen
}

#[test]
fn impure_functions_are_unknown_until_apply() {
    let ours = steps(Tool::Terrane);
    assert!(
        ours[1].starts_with("re-plan exit 2")
            && ours[1].contains("~ input = \"...\" -> (known after apply)"),
        "case replan_changes_known_after_apply: {ours:?}"
    );
    if terrane_testkit::terraform().is_none() {
        return;
    }
    let theirs = steps(Tool::Terraform);
    assert_eq!(ours, theirs, "case same_as_terraform");
}
