//! Provisioners load and validate, but terrane does not run them yet: a
//! plan of a configuration with a provisioner is refused at the
//! provisioner's line, rather than planned as if it were not there.

use std::path::Path;
use std::process::{Command, Stdio};

const MAIN: &str = r#"resource "terraform_data" "a" {
  input = "x"
}

resource "terraform_data" "b" {
  provisioner "local-exec" {
    when    = destroy
    command = "echo ${self.id}"
  }
}
"#;

fn terrane(dir: &Path, args: &[&str]) -> (i32, String) {
    let rc = dir.join("empty.tfrc");
    std::fs::write(&rc, "").expect("write CLI config");
    let o = Command::new(env!("CARGO_BIN_EXE_terrane"))
        .args(args)
        .current_dir(dir)
        .env("HOME", dir)
        .env("TF_CLI_CONFIG_FILE", &rc)
        .stdin(Stdio::null())
        .output()
        .expect("terrane runs");
    let out = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.code().unwrap_or(-1), out)
}

const REMOVED: &str = r#"removed {
  from = terraform_data.gone

  provisioner "local-exec" {
    when    = destroy
    command = "echo ${self.id}"
  }
}
"#;

/// `validate` accepts `main_tf`; `plan` refuses it naming `what` at
/// `main.tf line N`.
#[track_caller]
fn check(case: &str, main_tf: &str, what: &str, line: usize) {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("main.tf"), main_tf).expect("write");
    let (code, out) = terrane(dir.path(), &["validate", "-no-color"]);
    assert_eq!(code, 0, "case {case}: validate accepts it: {out}");
    let (code, out) = terrane(dir.path(), &["plan", "-no-color"]);
    assert_eq!(code, 1, "case {case}: plan refuses: {out}");
    assert!(
        out.contains("Provisioners are not supported"),
        "case {case}: names the problem: {out}"
    );
    assert!(out.contains(what), "case {case}: names {what:?}: {out}");
    assert!(
        out.contains(&format!("main.tf line {line}")),
        "case {case}: at the block's line {line}: {out}"
    );
}

#[test]
fn item5_validate_accepts_and_plan_refuses_provisioners() {
    check(
        "resource_provisioner",
        MAIN,
        "terraform_data.b has a \"local-exec\" provisioner",
        6,
    );
    check(
        "removed_block_provisioner",
        REMOVED,
        "The removed block for terraform_data.gone has a \"local-exec\" provisioner",
        4,
    );
}
