//! The kv provider under real Terraform and under terrane (issue 23): the
//! same steps (create, no-change plan, drift, import, destroy) give the same
//! exit codes under both, and leave the same store file.

use std::path::Path;
use std::process::{Command, Stdio};

/// `(name, arguments, exit code, text stdout must hold)`.
type Step = (&'static str, &'static [&'static str], i32, &'static str);

const STEPS: [Step; 9] = [
    (
        "create",
        &["apply", "-auto-approve", "-no-color"],
        0,
        "v = \"red\"",
    ),
    (
        "no_change",
        &["plan", "-detailed-exitcode", "-no-color"],
        0,
        "No changes.",
    ),
    (
        "drift_plan",
        &["plan", "-detailed-exitcode", "-no-color"],
        2,
        "\"green\" -> \"red\"",
    ),
    (
        "drift_apply",
        &["apply", "-auto-approve", "-no-color"],
        0,
        "v = \"red\"",
    ),
    (
        "drift_gone",
        &["plan", "-detailed-exitcode", "-no-color"],
        0,
        "No changes.",
    ),
    (
        "import",
        &["import", "-no-color", "kv_entry.s", "size"],
        0,
        "Import successful",
    ),
    (
        "import_clean",
        &["plan", "-detailed-exitcode", "-no-color"],
        0,
        "No changes.",
    ),
    ("bad_key", &["plan", "-no-color", "-var", "key=Bad"], 1, ""),
    (
        "destroy",
        &["destroy", "-auto-approve", "-no-color"],
        0,
        "2 destroyed",
    ),
];

fn config(store: &Path, with_import: bool) -> String {
    let imported = if with_import {
        "resource \"kv_entry\" \"s\" {\n  key   = \"size\"\n  value = \"big\"\n}\n"
    } else {
        ""
    };
    format!(
        "terraform {{\n  required_providers {{\n    kv = {{ source = \"terrane/kv\" }}\n  }}\n}}\n\nvariable \"key\" {{\n  default = \"colour\"\n}}\n\nprovider \"kv\" {{\n  path = \"{}\"\n}}\n\nresource \"kv_entry\" \"c\" {{\n  key    = var.key\n  value  = \"red\"\n  secret = \"s3cret\"\n}}\n\ndata \"kv_entry\" \"c\" {{\n  key = kv_entry.c.key\n}}\n\noutput \"v\" {{\n  value = data.kv_entry.c.value\n}}\n{imported}",
        store.display()
    )
}

/// Runs every step with `run`, returns the exit codes and the final store.
/// Runs one tool in a directory: exit code, stdout, stderr.
type Run<'a> = &'a dyn Fn(&Path, &[&str]) -> (i32, String, String);

fn scenario(tool: &str, run: Run) -> Vec<i32> {
    let dir = terrane_testkit::temp_dir();
    let d = dir.path();
    let store = d.join("kv.json");
    std::fs::write(d.join("main.tf"), config(&store, false)).unwrap();
    let mut codes = Vec::new();
    for (name, args, code, want) in STEPS {
        match name {
            "drift_plan" => {
                let text = std::fs::read_to_string(&store).unwrap();
                std::fs::write(&store, text.replace("\"red\"", "\"green\"")).unwrap();
            }
            "import" => {
                let mut m: serde_json::Value =
                    serde_json::from_str(&std::fs::read_to_string(&store).unwrap()).unwrap();
                m["size"] = serde_json::json!({"key": "size", "value": "big", "secret": null, "version": 7, "id": "size"});
                std::fs::write(&store, m.to_string()).unwrap();
                std::fs::write(d.join("main.tf"), config(&store, true)).unwrap();
            }
            _ => {}
        }
        let (got, stdout, stderr) = run(d, args);
        let flat = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
        let want_flat = want.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(got, code, "{tool} case {name}\n{stdout}\n{stderr}");
        assert!(
            flat.contains(&want_flat),
            "{tool} case {name}\n{stdout}\n{stderr}"
        );
        assert!(
            !stderr.contains("Provider produced"),
            "{tool} case {name}\n{stderr}"
        );
        assert!(
            !stdout.contains("s3cret"),
            "{tool} case {name}: secret shown\n{stdout}"
        );
        if name == "bad_key" {
            let flat = stderr.split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(
                flat.contains("Attribute key must be lowercase letters"),
                "{tool} case bad_key_sentence\n{stderr}"
            );
        }
        codes.push(got);
    }
    assert_eq!(
        std::fs::read_to_string(&store).unwrap(),
        "{}",
        "{tool} case store_emptied"
    );
    codes
}

fn provider() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_BIN_EXE_terraform-provider-kv"))
}

#[test]
fn item23_kv_under_terraform_and_terrane() {
    let terrane = terrane_testkit::built_binary("terrane-cli", "terrane");
    let plugins = terrane_testkit::temp_dir();
    let rc = terrane_testkit::dev_overrides(plugins.path(), &[("terrane/kv", &provider())]);
    let env = [("TF_CLI_CONFIG_FILE", rc.as_str())];
    let by_terrane = scenario("terrane", &|d, args| {
        let o = Command::new(&terrane)
            .args(args)
            .current_dir(d)
            .stdin(Stdio::null())
            .envs(env)
            .output()
            .expect("terrane runs");
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        (
            o.status.code().unwrap_or(-1),
            text(&o.stdout),
            text(&o.stderr),
        )
    });
    let Some(tf) = terrane_testkit::terraform() else {
        return;
    };
    let by_terraform = scenario("terraform", &|d, args| {
        let o = tf.run(d, args, &env);
        (o.code, o.stdout, o.stderr)
    });
    assert_eq!(by_terrane, by_terraform, "case same_exit_codes");
}
