//! `validate -json` of real Terraform and of terrane on the same module,
//! for every load-time check of terrane-config's case table
//! (`crates/config/tests/load_cases/NAME.tf` or `.tf.json`, one check
//! each, or a directory `NAME/` of several files): the same
//! validity, and the same diagnostics (severity, file, summary, detail, start
//! and end line:column). The modules use only the built-in
//! `terraform_data` and `terraform_remote_state`, so neither tool needs
//! `init`.
//!
//! Under `CI=true` a missing Terraform fails; locally the test skips.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};

/// The comparable part of a `validate -json` result: validity and one
/// line per diagnostic, sorted.
fn summary(out: &str, who: &str, case: &str) -> (bool, Vec<String>) {
    let j: Value = serde_json::from_str(out)
        .unwrap_or_else(|e| panic!("case {case}: {who} printed no JSON ({e}): {out}"));
    let pos = |p: &Value| format!("{}:{}", p["line"], p["column"]);
    let mut diags: Vec<String> = j["diagnostics"]
        .as_array()
        .map(|a| a.as_slice())
        .unwrap_or_default()
        .iter()
        .map(|d| {
            format!(
                "{} {} {}-{} {} | {}",
                d["severity"].as_str().unwrap_or("?"),
                d["range"]["filename"].as_str().unwrap_or("-"),
                pos(&d["range"]["start"]),
                pos(&d["range"]["end"]),
                d["summary"].as_str().unwrap_or("?"),
                d["detail"].as_str().unwrap_or("?"),
            )
        })
        .collect();
    diags.sort();
    (j["valid"].as_bool().unwrap_or(false), diags)
}

fn terrane(dir: &Path, rc: &Path) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_terrane"))
        .args(["validate", "-json"])
        .current_dir(dir)
        .env("TF_CLI_CONFIG_FILE", rc)
        .env("HOME", dir)
        .stdin(Stdio::null())
        .output()
        .expect("terrane runs");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Runs one case through both tools; the differences, if any.
fn check(
    tf: &terrane_testkit::Terraform,
    case: &str,
    files: &[(String, String)],
) -> Option<String> {
    let dir = tempfile::tempdir().expect("temp dir");
    for (file, text) in files {
        let path = dir.path().join(file);
        std::fs::create_dir_all(path.parent().expect("a file in the directory"))
            .expect("make the case's directories");
        std::fs::write(path, text).expect("write the module");
    }
    let rc = dir.path().join("empty.tfrc");
    std::fs::write(&rc, "").expect("write CLI config");
    let rc_text = rc.display().to_string();
    let env = [
        ("TF_CLI_CONFIG_FILE", rc_text.as_str()),
        ("CHECKPOINT_DISABLE", "1"),
    ];
    let want = tf.run(dir.path(), &["validate", "-json"], &env);
    let want = summary(&want.stdout, "terraform", case);
    let got = summary(&terrane(dir.path(), &rc), "terrane", case);
    (want != got).then(|| format!("case {case}:\n  terraform: {want:?}\n  terrane:   {got:?}"))
}

/// The files of a directory case, subdirectories (`tests/`) included, as
/// (path relative to the case, text).
fn dir_files(dir: &Path, prefix: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).expect("case directory") {
        let f = e.expect("directory entry").path();
        let name = format!("{prefix}{}", f.file_name().unwrap().to_string_lossy());
        if f.is_dir() {
            out.extend(dir_files(&f, &format!("{name}/")));
        } else {
            out.push((name, std::fs::read_to_string(&f).expect("case file")));
        }
    }
    out
}

#[test]
fn load_checks_match_terraform_validate() {
    let Some(tf) = terrane_testkit::terraform() else {
        return;
    };
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../config/tests/load_cases");
    let mut cases: Vec<_> = std::fs::read_dir(&dir)
        .expect("case directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_dir()
                || p.to_string_lossy().ends_with(".tf")
                || p.to_string_lossy().ends_with(".tf.json")
        })
        .collect();
    cases.sort();
    assert!(
        cases.len() >= 40,
        "the case table is there: {}",
        dir.display()
    );
    let problems: Vec<String> = cases
        .iter()
        .filter_map(|p| {
            let name = p.file_name()?.to_string_lossy().into_owned();
            // A directory case is a module of several files (overrides).
            let files: Vec<(String, String)> = if p.is_dir() {
                dir_files(p, "")
            } else {
                let file = if name.ends_with(".json") {
                    "main.tf.json"
                } else {
                    "main.tf"
                };
                vec![(file.into(), std::fs::read_to_string(p).expect("case file"))]
            };
            check(&tf, &name, &files)
        })
        .collect();
    assert!(
        problems.is_empty(),
        "terrane's validate differs from Terraform's:\n{}",
        problems.join("\n")
    );
}
