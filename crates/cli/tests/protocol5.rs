//! Plugin protocol 5 through a real `terrane` (issue 15 item 1): SDK
//! provider plugins limited to protocol 5 (as most providers are) run a
//! whole lifecycle, and a protocol-5 plugin that crashes in the middle of
//! an apply gets a clear error naming the operation while the state keeps
//! what was applied before, as under real Terraform. A provider behaving
//! like the legacy SDK (protocol 5 only): its flag keeps contract
//! violations warnings, and what it reads is normalized as Terraform
//! normalizes it (issue 15 item 3).

use std::path::Path;
use std::process::{Command, Stdio};

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn terrane(dir: &Path, rc: &str, env: &[(&str, &str)], args: &[&str]) -> Out {
    let o = Command::new(env!("CARGO_BIN_EXE_terrane"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .env("TF_CLI_CONFIG_FILE", rc)
        .envs(env.iter().copied())
        .output()
        .expect("terrane runs");
    Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// The state as `state pull` prints it (Terraform's v4 format).
fn state(pulled: &Out) -> serde_json::Value {
    assert_eq!(pulled.code, 0, "state pull\n{}", pulled.stderr);
    serde_json::from_str(&pulled.stdout).expect("state is JSON")
}

fn ids(state: &serde_json::Value) -> Vec<String> {
    state["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            format!(
                "{}.{}={}",
                r["type"].as_str().unwrap_or_default(),
                r["name"].as_str().unwrap_or_default(),
                r["instances"][0]["attributes"]["id"]
            )
        })
        .collect()
}

#[test]
fn item1_terrane_drives_a_protocol5_only_sdk_plugin() {
    let random =
        terrane_testkit::built_binary("terrane-provider-random", "terraform-provider-random");
    let dir = terrane_testkit::temp_dir();
    let d = dir.path();
    let rc = terrane_testkit::dev_overrides(d, &[("hashicorp/random", &random)]);
    let env = [(terrane_plugin::PROTOCOL_ENV, "5")];
    let write = |length: u32| {
        std::fs::write(
            d.join("main.tf"),
            format!("terraform {{\n  required_providers {{\n    random = {{ source = \"hashicorp/random\" }}\n  }}\n}}\n\nresource \"random_string\" \"s\" {{\n  length = {length}\n}}\n\noutput \"len\" {{\n  value = length(random_string.s.result)\n}}\n"),
        )
        .unwrap();
    };
    write(8);
    // (step, args, exit code, text the output must hold)
    let steps: [(&str, &[&str], i32, &str); 4] = [
        (
            "create",
            &["apply", "-auto-approve", "-no-color"],
            0,
            "len = 8",
        ),
        (
            "no_change_plan",
            &["plan", "-detailed-exitcode", "-no-color"],
            0,
            "No changes.",
        ),
        (
            "replace",
            &["apply", "-auto-approve", "-no-color"],
            0,
            "len = 12",
        ),
        (
            "destroy",
            &["destroy", "-auto-approve", "-no-color"],
            0,
            "Destroy complete! Resources: 1 destroyed.",
        ),
    ];
    for (name, args, code, want) in steps {
        if name == "replace" {
            write(12);
        }
        let out = terrane(d, &rc, &env, args);
        assert_eq!(
            out.code, code,
            "case {name}\n{}\n{}",
            out.stdout, out.stderr
        );
        assert!(
            out.stdout.contains(want),
            "case {name}: {want}\n{}",
            out.stdout
        );
    }
}

const CRASH_CONFIG: &str = r#"terraform {
  required_providers {
    crash = { source = "terrane/crash" }
  }
}

resource "crash_thing" "a" {
  name = "a"
}
"#;

#[test]
fn item1_protocol5_plugin_crashing_mid_apply_keeps_state() {
    let fixture = terrane_testkit::fixture("terrane-engine-crash-fixture");
    let tf = terrane_testkit::terraform();
    // (tool, words of its message about the crashed call)
    let mut tools: Vec<(&str, &str)> = vec![("terrane", "crashed during ApplyResourceChange")];
    if tf.is_some() {
        tools.push((
            "terraform",
            // "Plugin did not respond" or "Request cancelled", whichever
            // Terraform notices first; both name the call.
            "plugin.(*GRPCProvider).ApplyResourceChange",
        ));
    }
    for (tool, words) in tools {
        let dir = terrane_testkit::temp_dir();
        let d = dir.path();
        let rc =
            terrane_testkit::dev_overrides(d, &[("registry.terraform.io/terrane/crash", &fixture)]);
        // The log only where the negotiated version is read: log lines
        // would interleave with the error text.
        let run_logged = |args: &[&str], log: &str| -> Out {
            let env = [
                (terrane_plugin::PROTOCOL_ENV, "5"),
                ("TERRANE_CRASH_IN", "apply"),
                ("TF_LOG", log),
            ];
            match (tool, &tf) {
                ("terraform", Some(tf)) => {
                    let mut e = vec![("TF_CLI_CONFIG_FILE", rc.as_str())];
                    e.extend(env);
                    let o = tf.run(d, args, &e);
                    Out {
                        code: o.code,
                        stdout: o.stdout,
                        stderr: o.stderr,
                    }
                }
                _ => terrane(d, &rc, &env, args),
            }
        };
        let run = |args: &[&str]| run_logged(args, "");
        std::fs::write(d.join("main.tf"), CRASH_CONFIG).unwrap();
        let out = run_logged(&["apply", "-auto-approve", "-no-color"], "DEBUG");
        assert_eq!(
            out.code, 0,
            "case {tool}_first_apply\n{}\n{}",
            out.stdout, out.stderr
        );
        if tool == "terraform" {
            assert!(
                out.stderr.contains("using plugin: version=5"),
                "case {tool}_negotiated_5"
            );
        }
        let before = ids(&state(&run(&["state", "pull"])));
        assert_eq!(before, ["crash_thing.a=\"id-a\""], "case {tool}_applied");
        std::fs::write(
            d.join("main.tf"),
            format!("{CRASH_CONFIG}\nresource \"crash_thing\" \"b\" {{\n  name = \"crash\"\n}}\n"),
        )
        .unwrap();
        let out = run(&["apply", "-auto-approve", "-no-color"]);
        assert_eq!(
            out.code, 1,
            "case {tool}_crash_fails\n{}\n{}",
            out.stdout, out.stderr
        );
        let flat = out.stderr.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            flat.contains(words),
            "case {tool}_message: {words}\n{}",
            out.stderr
        );
        assert_eq!(
            ids(&state(&run(&["state", "pull"]))),
            before,
            "case {tool}_state_intact"
        );
    }
}

const LEGACY_CONFIG: &str = r#"terraform {
  required_providers {
    legacy = { source = "terrane/legacy" }
  }
}

resource "legacy_thing" "t" {
  name = "bare"
}
"#;

#[test]
fn item3_legacy_flag_and_read_normalization_under_protocol5() {
    let fixture = terrane_testkit::fixture("terrane-legacy-fixture");
    let tf = terrane_testkit::terraform();
    let mut tools = vec!["terrane"];
    if tf.is_some() {
        tools.push("terraform");
    }
    for tool in tools {
        let dir = terrane_testkit::temp_dir();
        let d = dir.path();
        let rc = terrane_testkit::dev_overrides(
            d,
            &[("registry.terraform.io/terrane/legacy", &fixture)],
        );
        let run = |args: &[&str], flag: &str| -> Out {
            let env = [("TERRANE_LEGACY_FLAG", flag)];
            match (tool, &tf) {
                ("terraform", Some(tf)) => {
                    let mut e = vec![("TF_CLI_CONFIG_FILE", rc.as_str())];
                    e.extend(env);
                    let o = tf.run(d, args, &e);
                    Out {
                        code: o.code,
                        stdout: o.stdout,
                        stderr: o.stderr,
                    }
                }
                _ => terrane(d, &rc, &env, args),
            }
        };
        std::fs::write(d.join("main.tf"), LEGACY_CONFIG).unwrap();
        // Without the flag the null list block is a contract violation.
        let out = run(&["plan", "-no-color"], "0");
        assert_eq!(out.code, 1, "case {tool}_no_flag_fails\n{}", out.stdout);
        let flat = out.stderr.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            flat.contains("Provider produced invalid plan")
                && flat.contains("must be empty to indicate no blocks, not null"),
            "case {tool}_no_flag_message\n{}",
            out.stderr
        );
        // With it, a warning at most: the plan goes through.
        let out = run(&["plan", "-no-color", "-detailed-exitcode"], "1");
        assert_eq!(
            out.code, 2,
            "case {tool}_flag_tolerated\n{}\n{}",
            out.stdout, out.stderr
        );
        // Tolerated means logged only (Terraform's [WARN] log line): the
        // user sees no diagnostic about it.
        assert!(
            !format!("{}{}", out.stdout, out.stderr).contains("produced an invalid plan"),
            "case {tool}_item1_legacy_violations_only_logged\n{}\n{}",
            out.stdout,
            out.stderr
        );
        // An import reads the object: its null list block is settled to [].
        let out = run(
            &["import", "-no-color", "legacy_thing.t", "legacy-bare"],
            "1",
        );
        assert_eq!(
            out.code, 0,
            "case {tool}_import\n{}\n{}",
            out.stdout, out.stderr
        );
        let pulled = run(&["state", "pull"], "1");
        let st = state(&pulled);
        let attrs = &st["resources"][0]["instances"][0]["attributes"];
        assert_eq!(
            attrs["rule"],
            serde_json::json!([]),
            "case {tool}_read_normalized"
        );
        assert_eq!(
            attrs["timeouts"],
            serde_json::json!({"create": null}),
            "case {tool}_single_block_as_read"
        );
    }
}

/// The launcher of the protocol-5 Python provider (PyPI's inmanta-tfplugin
/// and python-plugin), with its venv made by scripts/setup-python; `None`
/// locally when that venv is missing (under CI it must be there).
fn pyfive() -> Option<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/pyfive");
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv-pyfive/bin/python");
    if !venv.exists() {
        assert!(
            std::env::var("CI").map_or(true, |v| v != "true"),
            "no .venv-pyfive: run scripts/setup-python"
        );
        return None;
    }
    Some(dir)
}

const PYFIVE: &str = r#"terraform {
  required_providers {
    pyfive = { source = "example.com/terrane/pyfive" }
  }
}
"#;

#[test]
fn item1_terrane_drives_a_python_protocol5_provider() {
    let Some(dir5) = pyfive() else {
        return;
    };
    let tf = terrane_testkit::terraform();
    let mut tools = vec!["terrane"];
    if tf.is_some() {
        tools.push("terraform");
    }
    // (step, main.tf body, command, exit code, text stdout must hold)
    let steps: [(&str, &str, &[&str], i32, &str); 6] = [
        (
            "create",
            "resource \"pyfive_note\" \"n\" {\n  text = \"hello\"\n}\n",
            &["apply", "-auto-approve", "-no-color"],
            0,
            "1 added, 0 changed, 0 destroyed",
        ),
        (
            "no_change",
            "resource \"pyfive_note\" \"n\" {\n  text = \"hello\"\n}\n",
            &["plan", "-detailed-exitcode", "-no-color"],
            0,
            "No changes.",
        ),
        (
            "update_in_place",
            "resource \"pyfive_note\" \"n\" {\n  text = \"hello\"\n  tag  = \"t\"\n}\n",
            &["apply", "-auto-approve", "-no-color"],
            0,
            "0 added, 1 changed, 0 destroyed",
        ),
        (
            "replace",
            "resource \"pyfive_note\" \"n\" {\n  text = \"bye\"\n  tag  = \"t\"\n}\n",
            &["apply", "-auto-approve", "-no-color"],
            0,
            "1 added, 0 changed, 1 destroyed",
        ),
        (
            "import",
            "resource \"pyfive_note\" \"n\" {\n  text = \"bye\"\n  tag  = \"t\"\n}\nresource \"pyfive_note\" \"m\" {\n  text = \"found\"\n}\n",
            &["import", "-no-color", "pyfive_note.m", "found"],
            0,
            "Import successful",
        ),
        (
            "destroy",
            "resource \"pyfive_note\" \"n\" {\n  text = \"bye\"\n  tag  = \"t\"\n}\nresource \"pyfive_note\" \"m\" {\n  text = \"found\"\n}\n",
            &["destroy", "-auto-approve", "-no-color"],
            0,
            "2 destroyed",
        ),
    ];
    let mut states: Vec<Vec<String>> = Vec::new();
    for tool in &tools {
        let dir = terrane_testkit::temp_dir();
        let d = dir.path();
        let rc = std::fs::read_to_string(terrane_testkit::dev_overrides(d, &[])).unwrap();
        let rc_text = rc.replacen(
            "dev_overrides {\n",
            &format!(
                "dev_overrides {{\n    \"example.com/terrane/pyfive\" = \"{}\"\n",
                dir5.display()
            ),
            1,
        );
        let rc = d.join("pyfive.tfrc");
        std::fs::write(&rc, rc_text).unwrap();
        let rc = rc.display().to_string();
        let run = |args: &[&str]| -> Out {
            match (*tool, &tf) {
                ("terraform", Some(tf)) => {
                    let o = tf.run(d, args, &[("TF_CLI_CONFIG_FILE", rc.as_str())]);
                    Out {
                        code: o.code,
                        stdout: o.stdout,
                        stderr: o.stderr,
                    }
                }
                _ => terrane(d, &rc, &[], args),
            }
        };
        let mut seen = Vec::new();
        for (name, body, args, code, want) in steps {
            std::fs::write(d.join("main.tf"), format!("{PYFIVE}{body}")).unwrap();
            let out = run(args);
            assert_eq!(
                out.code, code,
                "case {tool}_{name}\n{}\n{}",
                out.stdout, out.stderr
            );
            assert!(
                out.stdout.contains(want),
                "case {tool}_{name}: {want}\n{}",
                out.stdout
            );
            let pulled = run(&["state", "pull"]);
            let st = state(&pulled);
            let mut rows: Vec<String> = st["resources"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|r| format!("{}={}", r["name"], r["instances"][0]["attributes"]))
                .collect();
            rows.sort();
            seen.push(format!("{name}: {}", rows.join(" ")));
        }
        states.push(seen);
    }
    if let [terrane, terraform] = states.as_slice() {
        assert_eq!(terrane, terraform, "the same states step by step");
    }
}

/// Issue 15, bad input: a plugin that answers the handshake with a
/// protocol version neither tool speaks (7). Both refuse it at plan with
/// go-plugin's "incompatible API version" naming the plugin's version,
/// and the state keeps what an earlier apply recorded.
#[test]
fn item1_a_plugin_choosing_an_unknown_protocol_is_refused_state_intact() {
    let tf = terrane_testkit::terraform();
    let mut tools = vec!["terrane"];
    if tf.is_some() {
        tools.push("terraform");
    }
    for tool in tools {
        let dir = terrane_testkit::temp_dir();
        let d = dir.path();
        let plugin = d.join("terraform-provider-vseven");
        std::fs::write(
            &plugin,
            "#!/bin/sh\necho '1|7|unix|/nowhere|grpc|'\nsleep 5\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&plugin, std::fs::Permissions::from_mode(0o755)).unwrap();
        let rc =
            terrane_testkit::dev_overrides(d, &[("registry.terraform.io/terrane/vseven", &plugin)]);
        let run = |args: &[&str]| -> Out {
            match (tool, &tf) {
                ("terraform", Some(tf)) => {
                    let o = tf.run(d, args, &[("TF_CLI_CONFIG_FILE", rc.as_str())]);
                    Out {
                        code: o.code,
                        stdout: o.stdout,
                        stderr: o.stderr,
                    }
                }
                _ => terrane(d, &rc, &[], args),
            }
        };
        let keep = "resource \"terraform_data\" \"keep\" {\n  input = \"x\"\n}\n";
        std::fs::write(d.join("main.tf"), keep).unwrap();
        let out = run(&["apply", "-auto-approve", "-no-color"]);
        assert_eq!(
            out.code, 0,
            "case {tool}_apply\n{}\n{}",
            out.stdout, out.stderr
        );
        let before = state(&run(&["state", "pull"]));
        std::fs::write(
            d.join("main.tf"),
            format!("terraform {{\n  required_providers {{\n    vseven = {{ source = \"terrane/vseven\" }}\n  }}\n}}\n{keep}resource \"vseven_thing\" \"t\" {{}}\n"),
        )
        .unwrap();
        let out = run(&["plan", "-no-color"]);
        assert_eq!(
            out.code, 1,
            "case {tool}_refused\n{}\n{}",
            out.stdout, out.stderr
        );
        // Terraform wraps go-plugin's text in its schema-loading error,
        // lower-cased.
        let flat = out.stderr.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            flat.to_lowercase()
                .contains("incompatible api version with plugin. plugin version: 7"),
            "case {tool}_message\n{}",
            out.stderr
        );
        let after = state(&run(&["state", "pull"]));
        assert_eq!(
            (&after["serial"], ids(&after)),
            (&before["serial"], ids(&before)),
            "case {tool}_state_intact"
        );
    }
}
