//! Secrets never reach human-readable output: `show` and `state show` of
//! objects whose dynamic attributes hold sensitive values (compared with
//! real Terraform's output for the same configuration), and errors about
//! a sensitive variable's malformed value (which Terraform never echoes).

use std::path::Path;
use terrane_testkit::{isolated, Out};

fn terrane(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Out {
    isolated(env!("CARGO_BIN_EXE_terrane"), dir)
        .args(args)
        .envs(env.iter().copied())
        .output()
        .expect("terrane runs")
        .into()
}

/// Object ids are random UUIDs; everything else must match byte for byte.
fn without_ids(text: &str) -> String {
    text.lines()
        .map(|l| {
            if l.trim_start().starts_with("id ") {
                "    id = <id>"
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The text of every top-level attribute `name` of the printed objects:
/// its `    name = ...` line and the deeper lines that continue it.
fn attribute_texts(out: &str, name: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut current: Option<String> = None;
    for line in out.lines() {
        let top = line.starts_with("    ") && !line.starts_with("     ");
        if top || !line.starts_with("    ") {
            found.extend(current.take());
        }
        if top && line[4..].split_whitespace().next() == Some(name) {
            current = Some(String::new());
        }
        if let Some(c) = current.as_mut() {
            c.push_str(line);
            c.push('\n');
        }
    }
    found.extend(current);
    found
}

struct ShowCase {
    name: &'static str,
    config: &'static str,
    /// The secret, which no human output may contain.
    secret: &'static str,
    /// The command after apply: `show` or `state show ADDR`.
    args: &'static [&'static str],
}

fn show_cases() -> Vec<ShowCase> {
    // Secrets sit in `triggers_replace` (dynamic, and not echoed into
    // `output`); `input` holds a sensitive part too, whose copy in `output`
    // Terraform prints in clear (it marks configuration paths only).
    const CONFIG: &str = r#"
variable "pw" {
  type      = string
  sensitive = true
  default   = "hunter2-var"
}
resource "terraform_data" "whole" {
  triggers_replace = sensitive("hunter2-whole")
}
resource "terraform_data" "nested" {
  triggers_replace = { user = "bob", pass = var.pw, ports = [80, 443] }
  input            = { user = "bob", pass = sensitive("copied-to-output") }
}
resource "terraform_data" "listed" {
  triggers_replace = ["a", var.pw]
}
resource "terraform_data" "multiline" {
  input            = { v = "a\nb\n", w = ["x\ny"] }
  triggers_replace = "l1\nl2"
}
output "o" {
  value = terraform_data.nested.input.user
}
"#;
    vec![
        ShowCase {
            name: "show",
            config: CONFIG,
            secret: "hunter2",
            args: &["show", "-no-color"],
        },
        ShowCase {
            name: "state_show_nested",
            config: CONFIG,
            secret: "hunter2",
            args: &["state", "show", "-no-color", "terraform_data.nested"],
        },
        ShowCase {
            name: "state_show_whole",
            config: CONFIG,
            secret: "hunter2",
            args: &["state", "show", "-no-color", "terraform_data.whole"],
        },
        ShowCase {
            name: "state_show_listed",
            config: CONFIG,
            secret: "hunter2",
            args: &["state", "show", "-no-color", "terraform_data.listed"],
        },
    ]
}

/// Applies `case.config` with terrane (and Terraform when present), runs
/// the case's command and checks: no secret in terrane's output, the
/// marker shown, the same text as Terraform's, and `show -json` still
/// carrying the values with their `sensitive_values` marks.
fn check_show(case: &ShowCase, terraform: Option<&terrane_testkit::Terraform>) {
    let dir = terrane_testkit::temp_dir();
    let ours = dir.path().join("terrane");
    std::fs::create_dir_all(&ours).expect("dir");
    std::fs::write(ours.join("main.tf"), case.config).expect("config");
    for args in [&["init"][..], &["apply", "-auto-approve", "-no-color"]] {
        let o = terrane(&ours, args, &[]);
        assert_eq!(
            o.code, 0,
            "{}: terrane {args:?} failed:\n{}{}",
            case.name, o.stdout, o.stderr
        );
    }
    let o = terrane(&ours, case.args, &[]);
    assert_eq!(
        o.code, 0,
        "{}: terrane {:?} failed:\n{}{}",
        case.name, case.args, o.stdout, o.stderr
    );
    assert!(
        !o.stdout.contains(case.secret) && !o.stderr.contains(case.secret),
        "{}: the secret is printed:\n{}{}",
        case.name,
        o.stdout,
        o.stderr
    );
    assert!(
        o.stdout.contains("(sensitive value)"),
        "{}: no (sensitive value) marker:\n{}",
        case.name,
        o.stdout
    );

    // `input` itself never shows its sensitive part (its copy in `output`
    // is shown, as Terraform shows it).
    let inputs = attribute_texts(&o.stdout, "input");
    for input in &inputs {
        assert!(
            !input.contains("copied-to-output"),
            "{}: a sensitive part of input is printed:\n{input}",
            case.name
        );
    }
    if case.args[0] == "show" {
        assert!(
            inputs
                .iter()
                .any(|t| t.contains("pass = (sensitive value)")),
            "{}: the nested input's sensitive part is not marked:\n{}",
            case.name,
            o.stdout
        );
    }
    let json = terrane(&ours, &["show", "-json"], &[]);
    assert_eq!(
        json.code, 0,
        "{}: show -json failed: {}",
        case.name, json.stderr
    );
    assert!(
        json.stdout.contains("hunter2-whole")
            && json
                .stdout
                .contains("\"sensitive_values\":{\"triggers_replace\":true}"),
        "{}: show -json lost values or marks:\n{}",
        case.name,
        json.stdout
    );

    if let Some(tf) = terraform {
        let theirs = dir.path().join("terraform");
        std::fs::create_dir_all(&theirs).expect("dir");
        std::fs::write(theirs.join("main.tf"), case.config).expect("config");
        tf.expect(&theirs, &["init", "-no-color"], 0);
        tf.expect(&theirs, &["apply", "-auto-approve", "-no-color"], 0);
        let t = tf.expect(&theirs, case.args, 0);
        assert_eq!(
            without_ids(&o.stdout),
            without_ids(&t.stdout),
            "{}: terrane's output (left) differs from Terraform's (right)",
            case.name
        );
    }
}

#[test]
fn item10_show_and_state_show_hide_sensitive_values_in_dynamic_attributes() {
    let terraform = terrane_testkit::terraform();
    for case in show_cases() {
        check_show(&case, terraform.as_ref());
    }
}

struct VarCase {
    name: &'static str,
    /// `TF_VAR_pw` (env) or `-var pw=...` (flag).
    env: bool,
    value: &'static str,
}

fn var_cases() -> Vec<VarCase> {
    let mut out = Vec::new();
    for (name, value) in [
        ("unclosed_object", "{not valid hunter2"),
        ("bare_word", "hunter2"),
        ("word_in_object", "{a = hunter2}"),
        ("function_call", "{a = upper(\"hunter2\")}"),
        ("unclosed_tuple", "[\"hunter2\""),
        ("wrong_type", "{a = [\"hunter2\"]}"),
        ("arithmetic", "{a = \"hunter2\" + 1}"),
    ] {
        out.push(VarCase {
            name,
            env: true,
            value,
        });
        out.push(VarCase {
            name,
            env: false,
            value,
        });
    }
    out
}

#[test]
fn item14_bad_value_of_sensitive_variable_is_not_echoed() {
    let dir = terrane_testkit::temp_dir();
    std::fs::write(
        dir.path().join("main.tf"),
        "variable \"pw\" {\n  type      = map(string)\n  sensitive = true\n}\noutput \"n\" {\n  value     = var.pw\n  sensitive = true\n}\n",
    )
    .expect("config");
    assert_eq!(terrane(dir.path(), &["init"], &[]).code, 0);
    for c in var_cases() {
        let flag = format!("pw={}", c.value);
        let o = if c.env {
            terrane(
                dir.path(),
                &["plan", "-no-color"],
                &[("TF_VAR_pw", c.value)],
            )
        } else {
            terrane(dir.path(), &["plan", "-no-color", "-var", &flag], &[])
        };
        let how = if c.env { "TF_VAR_pw" } else { "-var" };
        assert_eq!(
            o.code, 1,
            "{} ({how}): plan should fail:\n{}{}",
            c.name, o.stdout, o.stderr
        );
        assert!(
            o.stderr.contains("Error"),
            "{} ({how}): no error reported:\n{}",
            c.name,
            o.stderr
        );
        assert!(
            !o.stdout.contains("hunter2") && !o.stderr.contains("hunter2"),
            "{} ({how}): the value is echoed:\n{}{}",
            c.name,
            o.stdout,
            o.stderr
        );
    }
    // A well-formed value still works.
    let o = terrane(
        dir.path(),
        &["plan", "-no-color"],
        &[("TF_VAR_pw", "{a = \"hunter2\"}")],
    );
    assert_eq!(o.code, 0, "a valid value fails:\n{}{}", o.stdout, o.stderr);
}
