//! `terrane validate` in a fresh directory: no `.terrane`, no lock file,
//! no provider installed (HOME and the CLI configuration point nowhere).
//! A valid module that uses a provider that is not installed is valid;
//! a broken one gets Terraform's load-time errors at their line:column,
//! and the static reference check still runs.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};

const PROVIDER: &str = r#"terraform {
  required_providers {
    aws = { source = "hashicorp/aws", version = ">= 5.0" }
  }
}

provider "aws" {
  region = var.region
}

variable "region" {
  type    = string
  default = "eu-west-1"
}
"#;

const VALID: &str = r#"
resource "aws_instance" "web" {
  count         = 2
  ami           = "ami-123"
  instance_type = "t3.micro"

  provisioner "local-exec" {
    when       = destroy
    on_failure = continue
    command    = "echo ${self.id} ${count.index}"
  }

  lifecycle {
    ignore_changes = [tags]
  }
}

output "ids" {
  value = aws_instance.web[*].id
}
"#;

const BROKEN: &str = r#"
resource "aws_instance" "web" {
  ami = var.image

  provisioner "local-exec" {
    when    = later
    command = "true"
  }
}
"#;

const UNDECLARED: &str = r#"
resource "aws_instance" "web" {
  ami = var.image
}
"#;

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn terrane(dir: &Path, args: &[&str]) -> Run {
    let rc = dir.join("empty.tfrc");
    std::fs::write(&rc, "").expect("write CLI config");
    let o = Command::new(env!("CARGO_BIN_EXE_terrane"))
        .args(args)
        .current_dir(dir)
        .env("HOME", dir)
        .env("TF_CLI_CONFIG_FILE", &rc)
        .env_remove("TF_PLUGIN_CACHE_DIR")
        .stdin(Stdio::null())
        .output()
        .expect("terrane runs");
    Run {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// Validates `main_tf` in a fresh directory: text and `-json` must agree
/// on validity; `want` lists `line:col summary` of every error.
#[track_caller]
fn check(case: &str, main_tf: &str, want_valid: bool, want: &[&str]) {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("main.tf"), format!("{PROVIDER}{main_tf}")).expect("write");
    let text = terrane(dir.path(), &["validate"]);
    let json = terrane(dir.path(), &["validate", "-json"]);
    assert!(
        !dir.path().join(".terrane").exists(),
        "case {case}: validate creates no .terrane"
    );
    let j: Value = serde_json::from_str(&json.stdout)
        .unwrap_or_else(|e| panic!("case {case}: no JSON ({e}): {}", json.stdout));
    let errors: Vec<String> = j["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter(|d| d["severity"] == "error")
        .map(|d| {
            format!(
                "{}:{} {}",
                d["range"]["start"]["line"],
                d["range"]["start"]["column"],
                d["summary"].as_str().unwrap_or("?")
            )
        })
        .collect();
    assert_eq!(errors, want, "case {case}: errors");
    assert_eq!(j["valid"], want_valid, "case {case}: {}", json.stdout);
    assert_eq!(
        json.code,
        i32::from(!want_valid),
        "case {case}: -json exit code"
    );
    assert_eq!(text.code, i32::from(!want_valid), "case {case}: exit code");
    if want_valid {
        assert!(
            text.stdout.contains("Success! The configuration is valid."),
            "case {case}: {}",
            text.stdout
        );
        assert!(
            text.stderr.contains("1 provider(s) are not installed"),
            "case {case}: says what was skipped: {}",
            text.stderr
        );
    } else {
        for e in want {
            let summary = e.split_once(' ').map(|x| x.1).unwrap_or(e);
            assert!(
                text.stdout.contains(summary) || text.stderr.contains(summary),
                "case {case}: text output names {summary:?}: {}{}",
                text.stdout,
                text.stderr
            );
        }
    }
}

#[test]
fn validate_without_providers_valid_module_succeeds() {
    check("valid_module_uninstalled_provider", VALID, true, &[]);
}

#[test]
fn validate_without_providers_reports_load_errors() {
    check(
        "broken_module_uninstalled_provider",
        BROKEN,
        false,
        &["20:15 Invalid \"when\" keyword"],
    );
}

#[test]
fn validate_without_providers_checks_references() {
    check(
        "undeclared_variable_uninstalled_provider",
        UNDECLARED,
        false,
        &["17:9 Reference to undeclared input variable"],
    );
}

/// Locals and outputs are evaluated although the provider their module
/// uses is not installed: its resources are unknown values, so a
/// reference to one is fine and an expression error elsewhere is still
/// reported, at Terraform's position with Terraform's summary (checked
/// against `terraform validate -json` on the same lines with a built-in
/// resource in place of the uninstalled one).
const EXPRESSION_ERRORS: &str = r#"
locals {
  sum = 1 + "a"
  ids = aws_instance.web[*].id
}

resource "aws_instance" "web" {
  ami = "ami-123"
}

output "first" {
  value = local.ids[0]
}

output "bad" {
  value = !"text"
}
"#;

#[test]
fn item4_validate_without_providers_evaluates_locals_and_outputs() {
    check(
        "expression_errors_uninstalled_provider",
        EXPRESSION_ERRORS,
        false,
        &["17:13 Invalid operand", "30:12 Invalid operand"],
    );
}
