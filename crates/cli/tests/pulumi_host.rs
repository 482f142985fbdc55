//! terrane hosts Pulumi resource providers (issue 18 item 1), through a
//! real `terrane` and a real plugin process: `tests/pulumi/echo_provider.py`,
//! written with Pulumi's official Python SDK (`pulumi.provider.experimental`,
//! from .venv-pulumi, made by scripts/setup-pulumi), installed where Pulumi
//! keeps plugins (`$HOME/.pulumi/plugins/resource-echo-v0.1.0/`). The
//! plugin journals every call it receives; the tests assert those calls,
//! the plugin's own store and terrane's state.

use serde_json::Value as J;
use std::path::{Path, PathBuf};
use std::sync::Once;
use terrane_testkit::Out;

/// One project: a home with the plugin installed, a working directory,
/// the plugin's journal and store.
struct Project {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    dir: PathBuf,
    journal: PathBuf,
    store: PathBuf,
    env: Vec<(String, String)>,
}

fn setup_venv() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let root = terrane_testkit::repo_root();
        let st = std::process::Command::new(root.join("scripts/setup-pulumi"))
            .status()
            .expect("scripts/setup-pulumi runs");
        assert!(st.success(), "scripts/setup-pulumi failed");
    });
}

/// A `pulumi-resource-<pkg>` launcher running `script` (shell text).
fn install_plugin(home: &Path, package: &str, script: &str) {
    let dir = home.join(format!(".pulumi/plugins/resource-{package}-v0.1.0"));
    std::fs::create_dir_all(&dir).unwrap();
    let bin = dir.join(format!("pulumi-resource-{package}"));
    std::fs::write(&bin, format!("#!/bin/sh\n{script}\n")).unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
}

impl Project {
    fn new(main_tf: &str) -> Project {
        setup_venv();
        let tmp = terrane_testkit::temp_dir();
        let home = tmp.path().join("home");
        let dir = tmp.path().join("proj");
        std::fs::create_dir_all(&dir).unwrap();
        let root = terrane_testkit::repo_root();
        let python = root.join(".venv-pulumi/bin/python");
        let script = root.join("crates/cli/tests/pulumi/echo_provider.py");
        install_plugin(
            &home,
            "echo",
            &format!("exec {} {} \"$@\"", python.display(), script.display()),
        );
        let p = Project {
            journal: tmp.path().join("journal"),
            store: tmp.path().join("store.json"),
            home,
            dir,
            _tmp: tmp,
            env: Vec::new(),
        };
        p.write(main_tf);
        p
    }

    fn write(&self, main_tf: &str) {
        std::fs::write(self.dir.join("main.tf"), main_tf).unwrap();
    }

    fn run(&self, args: &[&str]) -> Out {
        let mut c = terrane_testkit::isolated(env!("CARGO_BIN_EXE_terrane"), &self.dir);
        c.args(args)
            .env("HOME", &self.home)
            .env_remove("PULUMI_HOME")
            .env("TF_CLI_CONFIG_FILE", "/dev/null")
            .env("ECHO_JOURNAL", &self.journal)
            .env("ECHO_STORE", &self.store)
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        terrane_testkit::output_within(&mut c, std::time::Duration::from_secs(180))
            .unwrap_or_else(|o| panic!("terrane {args:?} hung\n{}", o.stderr))
    }

    /// Runs a step; checks its exit code; returns its output.
    fn step(&self, name: &str, args: &[&str], code: i32) -> Out {
        let _ = std::fs::remove_file(&self.journal);
        let o = self.run(args);
        assert_eq!(
            o.code, code,
            "{name}: exit code\nstdout:\n{}\nstderr:\n{}",
            o.stdout, o.stderr
        );
        o
    }

    /// The calls the plugin received in the last step, as
    /// `Op` or `Op(preview)` for Create/Update.
    fn calls(&self) -> Vec<String> {
        self.journal_entries()
            .iter()
            .map(|e| {
                let op = e["op"].as_str().unwrap_or_default().to_string();
                match e.get("preview").and_then(J::as_bool) {
                    Some(true) => format!("{op}(preview)"),
                    _ => op,
                }
            })
            .collect()
    }

    fn journal_entries(&self) -> Vec<J> {
        std::fs::read_to_string(&self.journal)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("journal line is JSON"))
            .collect()
    }

    fn store(&self) -> J {
        std::fs::read_to_string(&self.store)
            .map(|s| serde_json::from_str(&s).unwrap())
            .unwrap_or(J::Null)
    }

    fn state(&self) -> J {
        let o = self.run(&["state", "pull"]);
        assert_eq!(o.code, 0, "state pull\n{}", o.stderr);
        serde_json::from_str(&o.stdout).expect("state is JSON")
    }
}

/// The attributes of the managed resource `ty.name` in a pulled state.
fn attrs(state: &J, ty: &str, name: &str) -> Option<J> {
    state["resources"].as_array()?.iter().find_map(|r| {
        (r["mode"] == "managed" && r["type"] == ty && r["name"] == name)
            .then(|| r["instances"][0]["attributes"].clone())
    })
}

const HEADER: &str = r#"terraform {
  required_providers {
    echo = { source = "pulumi/echo" }
  }
}

provider "echo" {
  prefix = "p-"
}
"#;

fn item(value: &str, size: Option<u32>, extra: &str) -> String {
    let size = size
        .map(|s| format!("  size     = {s}\n"))
        .unwrap_or_default();
    format!(
        "{HEADER}\nresource \"echo_item\" \"a\" {{\n  value    = \"{value}\"\n  password = \"hunter2\"\n{size}  tags     = {{ team = \"x\" }}\n{extra}}}\n\noutput \"upper\" {{ value = echo_item.a.upper_value }}\n"
    )
}

/// Neither the secret input nor the secret output reaches human output.
fn no_secrets(name: &str, o: &Out) {
    for secret in ["hunter2", "sha-1", "sha-2"] {
        assert!(
            !o.stdout.contains(secret) && !o.stderr.contains(secret),
            "{name}: secret {secret:?} shown\nstdout:\n{}\nstderr:\n{}",
            o.stdout,
            o.stderr
        );
    }
}

#[test]
fn item1_pulumi_provider_plan_apply_update_replace_destroy() {
    let p = Project::new(&item("hello", None, ""));
    // (step, args, exit code, calls the plugin must receive in order,
    //  text the output must hold)
    type Step<'a> = (&'a str, &'a [&'a str], i32, &'a [&'a str], &'a [&'a str]);
    let plan_create: Step = (
        "plan",
        &["plan", "-no-color"],
        0,
        &[
            "GetSchema",
            "CheckConfig",
            "Configure",
            "Check",
            "Create(preview)",
        ],
        &[
            "+ resource \"echo_item\" \"a\"",
            "upper_value = \"HELLO\"",
            "serial      = (known after apply)",
            "password    = (sensitive value)",
            "urn         = \"urn:pulumi:default::proj::echo:index:Item::echo_item.a\"",
            // Check's default.
            "size        = 1",
        ],
    );
    let apply_create: Step = (
        "apply",
        &["apply", "-auto-approve", "-no-color"],
        0,
        &["Check", "Create(preview)", "Check", "Create"],
        &["Apply complete! Resources: 1 added", "upper = \"HELLO\""],
    );
    let no_change: Step = (
        "no-change plan",
        &["plan", "-no-color", "-detailed-exitcode"],
        0,
        &["Read", "Check", "Diff"],
        &["No changes."],
    );
    for (name, args, code, calls, texts) in [plan_create, apply_create, no_change] {
        let o = p.step(name, args, code);
        check_calls(name, &p.calls(), calls);
        for t in texts {
            assert!(o.stdout.contains(t), "{name}: missing {t:?}\n{}", o.stdout);
        }
        no_secrets(name, &o);
        // The plugin's log line came through the Engine service.
        assert!(
            o.stderr
                .contains("pulumi-resource-echo: info: echo configured (prefix 'p-')"),
            "{name}: Engine.Log not shown\n{}",
            o.stderr
        );
        if name == "plan" {
            assert!(p.store().is_null(), "a preview created something");
        }
    }
    let st = p.state();
    let a = attrs(&st, "echo_item", "a").expect("echo_item.a in state");
    assert_eq!(a["id"], "item-1");
    assert_eq!(a["serial"], 1);
    assert_eq!(a["upper_value"], "HELLO");
    assert_eq!(
        a["urn"],
        "urn:pulumi:default::proj::echo:index:Item::echo_item.a"
    );
    // Secrets went to the plugin as secrets, both ways.
    let created = p.store();
    assert_eq!(
        created["objects"]["item-1"]["password"],
        serde_json::json!({"secret": "hunter2"})
    );
    assert_eq!(
        created["objects"]["item-1"]["digest"],
        serde_json::json!({"secret": "sha-1"})
    );
    // show -json carries the URN next to the address.
    let shown = p.step("show -json", &["show", "-json"], 0);
    let shown: J = serde_json::from_str(&shown.stdout).unwrap();
    let res = &shown["values"]["root_module"]["resources"][0];
    assert_eq!(res["address"], "echo_item.a");
    assert_eq!(res["values"]["urn"], a["urn"]);

    // Update in place: Diff says UPDATE, Update previews then applies.
    p.write(&item("hello2", None, ""));
    let o = p.step("update", &["apply", "-auto-approve", "-no-color"], 0);
    check_calls(
        "update",
        &p.calls(),
        &[
            "Read",
            "Check",
            "Diff",
            "Update(preview)",
            "Check",
            "Update",
        ],
    );
    assert!(
        o.stdout.contains("~ upper_value = \"HELLO\" -> \"HELLO2\""),
        "{}",
        o.stdout
    );
    no_secrets("update", &o);
    let a = attrs(&p.state(), "echo_item", "a").unwrap();
    assert_eq!(
        (a["id"].as_str(), a["upper_value"].as_str()),
        (Some("item-1"), Some("HELLO2"))
    );

    // Replace: Diff says UPDATE_REPLACE on size.
    p.write(&item("hello2", Some(3), ""));
    let o = p.step("replace", &["apply", "-auto-approve", "-no-color"], 0);
    check_calls(
        "replace",
        &p.calls(),
        &[
            "Read",
            "Check",
            "Diff",
            "Check",
            "Create(preview)",
            "Delete",
            "Check",
            "Create",
        ],
    );
    assert!(
        o.stdout
            .contains("~ size        = 1 -> 3 # forces replacement"),
        "{}",
        o.stdout
    );
    no_secrets("replace", &o);
    let a = attrs(&p.state(), "echo_item", "a").unwrap();
    assert_eq!(a["id"], "item-2");
    assert_eq!(p.store()["objects"].as_object().map(|o| o.len()), Some(1));

    // Destroy.
    let o = p.step("destroy", &["destroy", "-auto-approve", "-no-color"], 0);
    check_calls("destroy", &p.calls(), &["Read", "Delete"]);
    no_secrets("destroy", &o);
    assert_eq!(p.store()["objects"], serde_json::json!({}));
    assert!(attrs(&p.state(), "echo_item", "a").is_none());
}

/// `want` appear in `got` in this order (other calls may come between:
/// the provider is configured once per walk).
#[track_caller]
fn check_calls(name: &str, got: &[String], want: &[&str]) {
    let mut it = got.iter();
    for w in want {
        assert!(
            it.any(|g| g == w),
            "{name}: the plugin did not receive {w} in order; it received {got:?}"
        );
    }
}

#[test]
fn item1_unknown_at_plan_time_reaches_the_plugin_as_unknown() {
    let main = format!(
        "{}\nresource \"echo_item\" \"b\" {{\n  value = echo_item.a.id\n}}\n",
        item("hello", None, "")
    );
    let p = Project::new(&main);
    let o = p.step("plan", &["plan", "-no-color"], 0);
    let checks: Vec<J> = p
        .journal_entries()
        .into_iter()
        .filter(|e| {
            e["op"] == "Check"
                && e["urn"]
                    .as_str()
                    .is_some_and(|u| u.ends_with("::echo_item.b"))
        })
        .collect();
    assert_eq!(checks.len(), 1, "{:?}", p.journal_entries());
    assert_eq!(checks[0]["news"]["value"], "<unknown>");
    // b's upper_value depends on an unknown: the preview leaves it out.
    let b = o
        .stdout
        .split("# echo_item.b will be created")
        .nth(1)
        .unwrap_or_default();
    assert!(
        b.contains("upper_value = (known after apply)"),
        "{}",
        o.stdout
    );
    assert!(
        b.contains("value       = (known after apply)"),
        "{}",
        o.stdout
    );
    p.step("apply", &["apply", "-auto-approve", "-no-color"], 0);
    let b = attrs(&p.state(), "echo_item", "b").unwrap();
    assert_eq!(b["value"], "item-1");
    assert_eq!(b["upper_value"], "ITEM-1");
}

#[test]
fn item1_import_reads_the_object_by_id() {
    let p = Project::new(&item("imported", None, ""));
    std::fs::write(
        &p.store,
        r#"{"next": 8, "objects": {"item-7": {"value": "imported", "size": 1.0, "password": {"secret": "hunter2"}, "tags": {"team": "x"}, "upperValue": "IMPORTED", "serial": 7.0, "digest": {"secret": "sha-7"}}}}"#,
    )
    .unwrap();
    let o = p.step(
        "import",
        &["import", "-no-color", "echo_item.a", "item-7"],
        0,
    );
    no_secrets("import", &o);
    let reads: Vec<J> = p
        .journal_entries()
        .into_iter()
        .filter(|e| e["op"] == "Read")
        .collect();
    assert!(!reads.is_empty(), "{:?}", p.calls());
    assert_eq!(reads[0]["id"], "item-7");
    // Import is by ID alone.
    assert_eq!(reads[0]["properties"], serde_json::json!({}));
    let a = attrs(&p.state(), "echo_item", "a").unwrap();
    assert_eq!(
        (a["serial"].as_i64(), a["upper_value"].as_str()),
        (Some(7), Some("IMPORTED"))
    );
    // The object matches the configuration: only the new output is a
    // change (exit code 2 for it).
    let o = p.step(
        "plan after import",
        &["plan", "-detailed-exitcode", "-no-color"],
        2,
    );
    assert!(!o.stdout.contains("echo_item.a will be"), "{}", o.stdout);
    assert!(!o.stdout.contains("echo_item.a must be"), "{}", o.stdout);
    assert!(o.stdout.contains("+ upper = \"IMPORTED\""), "{}", o.stdout);
}

#[test]
fn item1_check_failure_is_shown_at_the_attribute_line() {
    let p = Project::new(&item("bad", None, ""));
    let o = p.step("plan", &["plan", "-no-color"], 1);
    let text = terrane_testkit::unwrapped(&o.stderr);
    assert!(text.contains("value must not be \"bad\""), "{}", o.stderr);
    // `value = "bad"` is line 12 of main.tf.
    assert!(
        text.contains("on main.tf line 12, in resource \"echo_item\" \"a\":"),
        "{}",
        o.stderr
    );
    assert!(
        !p.calls().iter().any(|c| c.starts_with("Create")),
        "{:?}",
        p.calls()
    );
}

#[test]
fn item1_check_failure_with_a_nested_property_path() {
    let main = format!(
        "{HEADER}\nresource \"echo_item\" \"a\" {{\n  value = \"fine\"\n  tags = {{\n    team = \"x\"\n    role = \"bad\"\n  }}\n}}\n"
    );
    let p = Project::new(&main);
    let o = p.step("plan", &["plan", "-no-color"], 1);
    let text = terrane_testkit::unwrapped(&o.stderr);
    assert!(
        text.contains("echo:index:Item: property tags.role: tag values must not be \"bad\""),
        "{}",
        o.stderr
    );
    // The failure's path `tags.role` is the attribute `tags`, line 13.
    assert!(
        text.contains("on main.tf line 13, in resource \"echo_item\" \"a\":"),
        "{}",
        o.stderr
    );
}

#[test]
fn item1_replace_of_a_prevent_destroy_resource_is_refused() {
    let p = Project::new(&item("keep", None, ""));
    p.step("apply", &["apply", "-auto-approve", "-no-color"], 0);
    let before = p.state();
    p.write(&item(
        "keep",
        Some(5),
        "  lifecycle {\n    prevent_destroy = true\n  }\n",
    ));
    let o = p.step("replace", &["apply", "-auto-approve", "-no-color"], 1);
    assert!(
        o.stderr.contains("Instance cannot be destroyed"),
        "{}",
        o.stderr
    );
    assert!(
        !p.calls().iter().any(|c| c == "Delete" || c == "Create"),
        "{:?}",
        p.calls()
    );
    assert_eq!(
        attrs(&p.state(), "echo_item", "a"),
        attrs(&before, "echo_item", "a")
    );
    assert!(p.store()["objects"]["item-1"].is_object());
}

#[test]
fn item1_crash_mid_apply_keeps_what_was_applied() {
    let main = format!(
        "{}\nresource \"echo_item\" \"z\" {{\n  value = \"boom\"\n  depends_on = [echo_item.a]\n}}\n",
        item("fine", None, "")
    );
    let mut p = Project::new(&main);
    p.env.push(("ECHO_CRASH_ON_CREATE".into(), "boom".into()));
    let o = p.step("apply", &["apply", "-auto-approve", "-no-color"], 1);
    let text = terrane_testkit::unwrapped(&o.stderr);
    assert!(
        text.contains("The plugin for registry.terraform.io/pulumi/echo crashed during Create"),
        "{}",
        o.stderr
    );
    let st = p.state();
    assert_eq!(attrs(&st, "echo_item", "a").unwrap()["id"], "item-1");
    assert!(attrs(&st, "echo_item", "z").is_none());
}

#[test]
fn item1_a_plugin_that_prints_no_port_or_garbage_is_refused() {
    // (case, plugin script, start timeout, text the error must hold)
    let cases = [
        (
            "exits_without_port",
            "echo 'cannot start: no credentials' >&2; exit 2",
            "60",
            "exited before completing the handshake",
        ),
        ("never_prints_a_port", "exec sleep 30", "2", "did not complete the handshake within 2 s"),
        (
            "prints_garbage",
            "echo 'hello from a confused plugin'; exec sleep 30",
            "60",
            "expected its gRPC port as the first line of its output, got \"hello from a confused plugin\"",
        ),
    ];
    for (case, script, timeout, want) in cases {
        let mut p = Project::new(&item("x", None, ""));
        install_plugin(&p.home, "echo", script);
        p.env
            .push(("TERRANE_PLUGIN_START_TIMEOUT".into(), timeout.into()));
        let o = p.step(case, &["plan", "-no-color"], 1);
        let text = terrane_testkit::unwrapped(&o.stderr);
        assert!(text.contains(want), "{case}: want {want:?}\n{}", o.stderr);
        if case == "exits_without_port" {
            assert!(
                text.contains("cannot start: no credentials"),
                "{case}: {}",
                o.stderr
            );
        }
    }
}

#[test]
fn item1_delete_before_replace_wins_over_create_before_destroy() {
    let slot = |name: &str| {
        format!(
            "{HEADER}\nresource \"echo_slot\" \"s\" {{\n  name = \"{name}\"\n  lifecycle {{\n    create_before_destroy = true\n  }}\n}}\n"
        )
    };
    let p = Project::new(&slot("one"));
    p.step("create", &["apply", "-auto-approve", "-no-color"], 0);
    p.write(&slot("two"));
    let o = p.step("replace", &["apply", "-auto-approve", "-no-color"], 0);
    // Diff answered UPDATE_REPLACE with deleteBeforeReplace: the old slot
    // goes before the new one is made, despite create_before_destroy.
    check_calls("replace", &p.calls(), &["Diff", "Delete", "Create"]);
    let creates = p.calls().iter().position(|c| c == "Create");
    let deletes = p.calls().iter().position(|c| c == "Delete");
    assert!(deletes < creates, "{:?}", p.calls());
    let text = terrane_testkit::unwrapped(&o.stdout);
    assert!(
        text.contains("-/+ resource \"echo_slot\" \"s\""),
        "{}",
        o.stdout
    );
    assert!(
        text.contains("-/+ destroy and then create replacement"),
        "{}",
        o.stdout
    );
    assert!(
        text.contains("Warning: Replacement deletes first")
            && text.contains("create_before_destroy does not apply"),
        "{}",
        o.stdout
    );
    let s = attrs(&p.state(), "echo_slot", "s").unwrap();
    assert_eq!(
        (s["id"].as_str(), s["name"].as_str()),
        (Some("slot-2"), Some("two"))
    );
}

#[test]
fn item1_second_interrupt_sends_cancel_to_the_plugin() {
    let p = Project::new(&item("slow", None, ""));
    let mut c = terrane_testkit::isolated(env!("CARGO_BIN_EXE_terrane"), &p.dir);
    c.args(["apply", "-auto-approve", "-no-color"])
        .env("HOME", &p.home)
        .env_remove("PULUMI_HOME")
        .env("TF_CLI_CONFIG_FILE", "/dev/null")
        .env("ECHO_JOURNAL", &p.journal)
        .env("ECHO_STORE", &p.store)
        .env("ECHO_SLOW_CREATE", "4")
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(p.dir.join("apply.err")).expect("stderr file"));
    let mut child = c.spawn().expect("terrane starts");
    // Wait for the real Create to be under way.
    let started = std::time::Instant::now();
    while !p.calls().iter().any(|c| c == "Create") {
        assert!(
            started.elapsed().as_secs() < 60,
            "no Create: {:?}",
            p.calls()
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // As in Terraform, the first interrupt stops new work; the second asks
    // the providers to stop theirs: Cancel. Each is sent once terrane has
    // said it handled the one before (no timed gap: two signals sent too
    // close together merge into one).
    let said = |text: &str| {
        let started = std::time::Instant::now();
        loop {
            let err = std::fs::read_to_string(p.dir.join("apply.err")).unwrap_or_default();
            if err.contains(text) {
                return;
            }
            assert!(
                started.elapsed().as_secs() < 60,
                "terrane never said {text:?}:\n{err}"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    };
    for answer in ["Interrupt received.", "Two interrupts received."] {
        let st = std::process::Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(st.success());
        said(answer);
    }
    let status = child.wait().unwrap();
    assert!(!status.success(), "an interrupted apply reports failure");
    assert!(p.calls().iter().any(|c| c == "Cancel"), "{:?}", p.calls());
}

#[test]
fn item1_init_uses_the_installed_pulumi_plugin_and_installs_nothing() {
    let p = Project::new(&item("x", None, ""));
    let o = p.step("init", &["init", "-no-color"], 0);
    let want = format!(
        "- Using Pulumi plugin pulumi/echo from {}",
        p.home
            .join(".pulumi/plugins/resource-echo-v0.1.0/pulumi-resource-echo")
            .display()
    );
    assert!(o.stdout.contains(&want), "{}", o.stdout);
    // Nothing to lock or download for a Pulumi plugin.
    assert!(!p.dir.join(".terraform/providers").exists());
    // A missing plugin is a clear error naming where terrane looked.
    std::fs::remove_dir_all(p.home.join(".pulumi")).unwrap();
    let o = p.step("plan without the plugin", &["plan", "-no-color"], 1);
    let text = terrane_testkit::unwrapped(&o.stderr);
    assert!(
        text.contains("no executable pulumi-resource-echo in"),
        "{}",
        o.stderr
    );
}

/// A configuration with the provider's `prefix` and an item and a slot.
fn two_resources(prefix: &str) -> String {
    format!(
        "terraform {{\n  required_providers {{\n    echo = {{ source = \"pulumi/echo\" }}\n  }}\n}}\n\nprovider \"echo\" {{\n  prefix = \"{prefix}\"\n}}\n\nresource \"echo_item\" \"a\" {{\n  value = \"hello\"\n}}\n\nresource \"echo_slot\" \"s\" {{\n  name = \"one\"\n}}\n"
    )
}

/// The DiffConfig calls of the last step, as (olds prefix, news prefix).
fn diff_configs(p: &Project) -> Vec<(J, J)> {
    p.journal_entries()
        .into_iter()
        .filter(|e| e["op"] == "DiffConfig")
        .map(|e| (e["olds"]["prefix"].clone(), e["news"]["prefix"].clone()))
        .collect()
}

#[test]
fn item1_diffconfig_replace_replaces_every_resource_of_the_provider() {
    let mut p = Project::new(&two_resources("p-"));
    p.env.push(("ECHO_DIFFCONFIG".into(), "replace".into()));
    p.step("create", &["apply", "-auto-approve", "-no-color"], 0);
    let ids = |st: &J| {
        (
            attrs(st, "echo_item", "a").unwrap()["id"].clone(),
            attrs(st, "echo_slot", "s").unwrap()["id"].clone(),
        )
    };
    let before = ids(&p.state());
    // An unchanged configuration asks DiffConfig nothing.
    let o = p.step(
        "same configuration",
        &["plan", "-no-color", "-detailed-exitcode"],
        0,
    );
    assert!(diff_configs(&p).is_empty(), "{:?}", p.calls());
    assert!(o.stdout.contains("No changes."), "{}", o.stdout);

    p.write(&two_resources("q-"));
    let o = p.step("plan", &["plan", "-no-color"], 0);
    // Asked once for the instance, with the recorded and the new
    // configuration.
    assert_eq!(
        diff_configs(&p),
        vec![(J::from("p-"), J::from("q-"))],
        "{:?}",
        p.calls()
    );
    let text = terrane_testkit::unwrapped(&o.stdout);
    for want in [
        "# echo_item.a must be replaced",
        "# echo_slot.s must be replaced",
        "# forces replacement",
        "Plan: 2 to add, 0 to change, 2 to destroy.",
        "Warning: Provider configuration change replaces this resource",
        "(prefix) cannot keep managing the objects made under the old one",
    ] {
        assert!(text.contains(want), "plan: missing {want:?}\n{}", o.stdout);
    }
    // The plan changed nothing.
    assert_eq!(ids(&p.state()), before);

    let o = p.step("apply", &["apply", "-auto-approve", "-no-color"], 0);
    assert!(
        o.stdout
            .contains("Apply complete! Resources: 2 added, 0 changed, 2 destroyed."),
        "{}",
        o.stdout
    );
    let deleted: Vec<J> = p
        .journal_entries()
        .into_iter()
        .filter(|e| e["op"] == "Delete")
        .map(|e| e["id"].clone())
        .collect();
    assert_eq!(deleted.len(), 2, "{:?}", p.calls());
    assert!(
        deleted.contains(&before.0) && deleted.contains(&before.1),
        "{deleted:?}"
    );
    let after = ids(&p.state());
    assert!(
        after.0 != before.0 && after.1 != before.1,
        "not replaced: {before:?} -> {after:?}"
    );
    let objects = p.store()["objects"].clone();
    assert_eq!(objects.as_object().map(|o| o.len()), Some(2), "{objects}");
    // The new objects recorded the new configuration: nothing more to do.
    let o = p.step(
        "after the replacement",
        &["plan", "-no-color", "-detailed-exitcode"],
        0,
    );
    assert!(diff_configs(&p).is_empty(), "{:?}", p.calls());
    assert!(o.stdout.contains("No changes."), "{}", o.stdout);
}

#[test]
fn item1_diffconfig_without_replacement_or_broken_keeps_the_resources() {
    // (case, ECHO_DIFFCONFIG, warning the plan must show or "")
    let cases = [
        ("sdk_default_answer", "", ""),
        (
            "detailed_diff_breaks_the_sdk",
            "detailed",
            "Warning: DiffConfig failed; the resources are kept",
        ),
    ];
    for (case, mode, warning) in cases {
        let mut p = Project::new(&two_resources("p-"));
        if !mode.is_empty() {
            p.env.push(("ECHO_DIFFCONFIG".into(), mode.into()));
        }
        p.step(case, &["apply", "-auto-approve", "-no-color"], 0);
        p.write(&two_resources("q-"));
        let o = p.step(case, &["plan", "-no-color", "-detailed-exitcode"], 0);
        assert_eq!(
            diff_configs(&p),
            vec![(J::from("p-"), J::from("q-"))],
            "{case}: {:?}",
            p.calls()
        );
        let text = terrane_testkit::unwrapped(&o.stdout);
        assert!(text.contains("No changes."), "{case}: {}", o.stdout);
        assert!(!text.contains("must be replaced"), "{case}: {}", o.stdout);
        if warning.is_empty() {
            assert!(!text.contains("Warning:"), "{case}: {}", o.stdout);
        } else {
            assert!(
                text.contains(warning) && text.contains("as for a provider without DiffConfig"),
                "{case}: {}",
                o.stdout
            );
        }
        let a = attrs(&p.state(), "echo_item", "a").unwrap();
        assert!(
            a["id"].as_str().is_some_and(|i| i.starts_with("item-")),
            "{case}: {a}"
        );
        assert_eq!(
            p.store()["objects"].as_object().map(|o| o.len()),
            Some(2),
            "{case}"
        );
    }
}

/// The `timeout` the plugin received in the last step's real (not
/// preview) call `op`.
fn timeouts_of(p: &Project, op: &str) -> Vec<J> {
    p.journal_entries()
        .into_iter()
        .filter(|e| e["op"] == op && e["preview"] != true)
        .map(|e| e["timeout"].clone())
        .collect()
}

#[test]
fn item1_timeouts_reach_create_update_and_delete() {
    let block =
        "  timeouts {\n    create = \"5m\"\n    update = \"1m30s\"\n    delete = \"1h\"\n  }\n";
    let p = Project::new(&item("hello", None, block));
    // (step, configuration, args, call, timeout it must carry)
    let steps = [
        (
            "create",
            item("hello", None, block),
            &["apply", "-auto-approve", "-no-color"][..],
            "Create",
            300.0,
        ),
        (
            "update",
            item("hello2", None, block),
            &["apply", "-auto-approve", "-no-color"][..],
            "Update",
            90.0,
        ),
        (
            "destroy",
            item("hello2", None, block),
            &["destroy", "-auto-approve", "-no-color"][..],
            "Delete",
            3600.0,
        ),
    ];
    for (name, main, args, op, want) in steps {
        p.write(&main);
        p.step(name, args, 0);
        assert_eq!(
            timeouts_of(&p, op),
            vec![J::from(want)],
            "{name}: {:?}",
            p.calls()
        );
    }
    // No block: 0, the plugin's own default.
    let p = Project::new(&item("plain", None, ""));
    p.step("no timeouts", &["apply", "-auto-approve", "-no-color"], 0);
    assert_eq!(timeouts_of(&p, "Create"), vec![J::from(0.0)]);
    // Changing only the block calls nothing at apply.
    p.write(&item(
        "plain",
        None,
        "  timeouts {\n    delete = \"10s\"\n  }\n",
    ));
    let o = p.step("timeouts only", &["apply", "-auto-approve", "-no-color"], 0);
    assert!(o.stdout.contains("1 changed"), "{}", o.stdout);
    assert!(!p.calls().iter().any(|c| c == "Update"), "{:?}", p.calls());
    p.step("destroy", &["destroy", "-auto-approve", "-no-color"], 0);
    assert_eq!(timeouts_of(&p, "Delete"), vec![J::from(10.0)]);
}

#[test]
fn item1_timeouts_that_are_no_duration_are_refused_at_their_line() {
    let p = Project::new(&item(
        "x",
        None,
        "  timeouts {\n    create = \"soon\"\n  }\n",
    ));
    let o = p.step("plan", &["plan", "-no-color"], 1);
    let text = terrane_testkit::unwrapped(&o.stderr);
    assert!(text.contains("Invalid timeout"), "{}", o.stderr);
    assert!(text.contains("\"soon\" is not a duration"), "{}", o.stderr);
    // `create = "soon"` is line 16 of main.tf.
    assert!(text.contains("on main.tf line 16"), "{}", o.stderr);
    assert!(
        !p.calls().iter().any(|c| c.starts_with("Create")),
        "{:?}",
        p.calls()
    );
}

const STORED_ITEM: &str = r#"{"next": 8, "objects": {"item-7": {"value": "imported", "size": 1.0, "password": {"secret": "hunter2"}, "tags": {"team": "x"}, "upperValue": "IMPORTED", "serial": 7.0, "digest": {"secret": "sha-7"}}}}"#;

#[test]
fn item1_strict_import_checks_the_object_against_the_configuration() {
    let import = [
        "import",
        "-no-color",
        "-pulumi-strict-import",
        "echo_item.a",
        "item-7",
    ];
    // A matching object: Read, then Check with the read inputs as olds,
    // then an empty Diff; imported.
    let p = Project::new(&item("imported", None, ""));
    std::fs::write(&p.store, STORED_ITEM).unwrap();
    let o = p.step("matching", &import, 0);
    no_secrets("matching", &o);
    check_calls("matching", &p.calls(), &["Read", "Check", "Diff"]);
    let check = p
        .journal_entries()
        .into_iter()
        .find(|e| e["op"] == "Check")
        .unwrap();
    assert_eq!(check["olds"]["value"], "imported");
    assert_eq!(check["news"]["value"], "imported");
    let a = attrs(&p.state(), "echo_item", "a").unwrap();
    assert_eq!(
        (a["id"].as_str(), a["urn"].as_str()),
        (
            Some("item-7"),
            Some("urn:pulumi:default::proj::echo:index:Item::echo_item.a")
        )
    );

    // A differing object is refused, naming the property; nothing stored.
    let p = Project::new(&item("other", None, ""));
    std::fs::write(&p.store, STORED_ITEM).unwrap();
    let o = p.step("differing", &import, 1);
    let text = terrane_testkit::unwrapped(&o.stderr);
    assert!(
        text.contains("Imported object does not match the configuration"),
        "{}",
        o.stderr
    );
    assert!(text.contains("finds differences in: value"), "{}", o.stderr);
    assert!(text.contains("on main.tf line 12"), "{}", o.stderr);
    no_secrets("differing", &o);
    assert!(attrs(&p.state(), "echo_item", "a").is_none());
    // Without the flag the same import is accepted (the next plan shows
    // the difference).
    let o = p.step(
        "not strict",
        &["import", "-no-color", "echo_item.a", "item-7"],
        0,
    );
    assert!(!p.calls().iter().any(|c| c == "Diff"), "{:?}", p.calls());
    assert!(o.stdout.contains("Import successful!"), "{}", o.stdout);
    let a = attrs(&p.state(), "echo_item", "a").unwrap();
    assert_eq!(a["id"], "item-7");
    // The URN is named after the address imported to (it was
    // `echo_item.imported` before the import command passed it down).
    assert_eq!(
        a["urn"],
        "urn:pulumi:default::proj::echo:index:Item::echo_item.a"
    );
}

#[test]
fn item1_update_sends_the_prior_inputs_as_old_inputs() {
    let p = Project::new(&item("hello", None, ""));
    p.step("create", &["apply", "-auto-approve", "-no-color"], 0);
    p.write(&item("hello2", None, ""));
    p.step("update", &["apply", "-auto-approve", "-no-color"], 0);
    // (preview, the `value` of old_inputs): the object's inputs before the
    // update, in the previews (plan, and apply's plan again) and in the
    // real call (which used to get the new inputs).
    let got: Vec<(J, J)> = p
        .journal_entries()
        .into_iter()
        .filter(|e| e["op"] == "UpdateOldInputs")
        .map(|e| (e["preview"].clone(), e["old_inputs"]["value"].clone()))
        .collect();
    let real: Vec<&(J, J)> = got.iter().filter(|(preview, _)| preview == false).collect();
    assert_eq!(real.len(), 1, "{got:?}");
    assert!(got.iter().all(|(_, old)| old == "hello"), "{got:?}");
}

#[test]
fn item1_strict_import_refuses_a_non_pulumi_provider() {
    let p = Project::new("resource \"terraform_data\" \"x\" {\n  input = \"a\"\n}\n");
    let o = p.step(
        "strict import of terraform_data",
        &[
            "import",
            "-no-color",
            "-pulumi-strict-import",
            "terraform_data.x",
            "some-id",
        ],
        1,
    );
    let text = terrane_testkit::unwrapped(&o.stderr);
    assert!(
        text.contains("Strict import needs a Pulumi provider")
            && text.contains("terraform_data.x belongs to terraform.io/builtin/terraform"),
        "{}",
        o.stderr
    );
    assert!(attrs(&p.state(), "terraform_data", "x").is_none());
}

/// Issue 18, data exchange: `whisper` comes back from the plugin as a
/// secret although the schema does not mark it secret. It is sensitive
/// everywhere Terraform treats a sensitive attribute: never in clear in
/// plan, apply, show, state show or output; `show -json` lists it under
/// sensitive_values; the state records its path; it goes back to the
/// plugin as a secret; it causes no spurious change.
#[test]
fn item1_per_value_secret_is_never_shown() {
    let derived =
        "output \"w\" {\n  value     = \"x-${echo_item.a.whisper}\"\n  sensitive = true\n}\n";
    let p = Project::new(&(item("hello", None, "") + derived));
    // (step, args, exit code, text the output must hold)
    let steps: &[(&str, &[&str], i32, &[&str])] = &[
        (
            "plan",
            &["plan", "-no-color"],
            0,
            &["whisper     = (sensitive value)"],
        ),
        (
            "apply",
            &["apply", "-auto-approve", "-no-color"],
            0,
            &["Apply complete! Resources: 1 added", "w = <sensitive>"],
        ),
        (
            "no-change plan",
            &["plan", "-no-color", "-detailed-exitcode"],
            0,
            &["No changes."],
        ),
        (
            "show",
            &["show", "-no-color"],
            0,
            &["whisper     = (sensitive value)"],
        ),
        (
            "state show",
            &["state", "show", "-no-color", "echo_item.a"],
            0,
            &["whisper     = (sensitive value)"],
        ),
        ("output", &["output", "-no-color"], 0, &["w = <sensitive>"]),
        (
            "output w",
            &["output", "-no-color", "w"],
            0,
            &["(sensitive value)"],
        ),
    ];
    let check = |name: &str, o: &Out, texts: &[&str]| {
        for t in texts {
            assert!(o.stdout.contains(t), "{name}: missing {t:?}\n{}", o.stdout);
        }
        assert!(
            !o.stdout.contains("whisper-") && !o.stderr.contains("whisper-"),
            "{name}: the per-value secret is shown\nstdout:\n{}\nstderr:\n{}",
            o.stdout,
            o.stderr
        );
        no_secrets(name, o);
    };
    for (name, args, code, texts) in steps {
        let o = p.step(name, args, *code);
        check(name, &o, texts);
    }
    // The state records the path as sensitive, as Terraform records a
    // sensitive attribute's.
    let st = p.state();
    let inst = &st["resources"][0]["instances"][0];
    assert_eq!(inst["attributes"]["whisper"], "whisper-hello");
    let paths = inst["sensitive_attributes"].to_string();
    assert!(
        paths.contains("\"whisper\""),
        "sensitive_attributes: {paths}"
    );
    // show -json: the value under values (as Terraform gives it), marked
    // under sensitive_values.
    let o = p.step("show -json", &["show", "-json"], 0);
    let shown: J = serde_json::from_str(&o.stdout).unwrap();
    let res = &shown["values"]["root_module"]["resources"][0];
    assert_eq!(res["sensitive_values"]["whisper"], true, "{res}");
    // An update: the plan shows the change as sensitive; the prior value
    // goes back to the plugin as a secret.
    p.write(&(item("hello2", None, "") + derived));
    let o = p.step("update", &["apply", "-auto-approve", "-no-color"], 0);
    check("update", &o, &["~ whisper     = (sensitive value)"]);
    let diff = p
        .journal_entries()
        .into_iter()
        .find(|e| e["op"] == "Diff")
        .expect("Diff called");
    assert_eq!(
        diff["olds"]["whisper"],
        serde_json::json!({"secret": "whisper-hello"}),
        "{diff}"
    );
    // An output of it not declared sensitive is refused, as in Terraform.
    p.write(&(item("hello2", None, "") + "output \"w\" { value = echo_item.a.whisper }\n"));
    let o = p.step("plain output", &["plan", "-no-color"], 1);
    assert!(
        o.stderr.contains("Output refers to sensitive values"),
        "{}",
        o.stderr
    );
    check("plain output", &o, &[]);
}

/// The hashes the plugin's Check received (journaled raw as RawCheck).
fn raw_hashes(p: &Project) -> J {
    p.journal_entries()
        .into_iter()
        .find(|e| e["op"] == "RawCheck")
        .map(|e| e["hashes"].clone())
        .expect("Check called for the bundle")
}

/// Issue 18, data exchange: assets and archives behind `https://` URIs
/// are fetched and hashed as Pulumi's engine hashes them before they go to
/// the plugin: an asset as the SHA-256 of its bytes, an archive file as
/// that of the file, an archive of assets (one of them remote) as that of
/// the tar stream Go's writer makes of its members. The server is a real
/// HTTPS server on loopback; a URL that answers 404 is an error naming it,
/// and the state stays as it was.
#[test]
fn item2_uri_assets_and_archives_are_fetched_and_hashed() {
    use sha2::Digest as _;
    let reg = terrane_testkit::registry::Registry::start();
    let zip = terrane_testkit::registry::zip_files(&[("index.js", "exports.x = 1;\n")]);
    reg.set(
        "/files/hello.txt",
        terrane_testkit::registry::Answer::Body(b"hello".to_vec()),
    );
    reg.set(
        "/files/site.zip",
        terrane_testkit::registry::Answer::Body(zip.clone()),
    );
    let base = reg.base();
    let config = |source: &str| {
        format!(
            "{HEADER}\nresource \"echo_bundle\" \"b\" {{\n  source = {{ uri = \"{base}/files/{source}\" }}\n  code   = {{ uri = \"{base}/files/site.zip\" }}\n  files  = {{ assets = {{\n    \"a.txt\"      = {{ text = \"A\" }}\n    \"remote.txt\" = {{ uri = \"{base}/files/hello.txt\" }}\n  }} }}\n}}\n"
        )
    };
    let mut p = Project::new(&config("hello.txt"));
    p.env = reg.env();
    p.env.retain(|(k, _)| k != "TF_CLI_CONFIG_FILE");
    let sha = |b: &[u8]| hex::encode(sha2::Sha256::digest(b));
    // Go's archive/tar over the members a.txt "A" and remote.txt "hello"
    // (headers {Name, Mode 0600, Size}), as Pulumi's engine writes them.
    let files = "ed72688c56e73e1ec2492866a6baae26ceb0bcdd3fcf9dc36a839d30f6c717b0";
    p.step("apply", &["apply", "-auto-approve", "-no-color"], 0);
    assert_eq!(
        raw_hashes(&p),
        serde_json::json!({"source": sha(b"hello"), "code": sha(&zip), "files": files}),
        "the hashes the plugin received"
    );
    // Each URL fetched once in the run, though two properties name one.
    let gets = |reg: &terrane_testkit::registry::Registry| {
        reg.requests()
            .iter()
            .filter(|r| r.path.starts_with("/files/"))
            .count()
    };
    assert_eq!(gets(&reg), 2, "{:?}", reg.requests());
    p.step(
        "no-change plan",
        &["plan", "-no-color", "-detailed-exitcode"],
        0,
    );
    // The remote contents change: the next Check gets the new hash.
    reg.set(
        "/files/hello.txt",
        terrane_testkit::registry::Answer::Body(b"hello, again".to_vec()),
    );
    p.step("plan after a change", &["plan", "-no-color"], 0);
    assert_eq!(raw_hashes(&p)["source"], sha(b"hello, again"));
    // A URL that answers 404: an error that names it; nothing changes.
    let before = p.state();
    p.write(&config("gone.txt"));
    let o = p.step("missing", &["apply", "-auto-approve", "-no-color"], 1);
    assert!(
        o.stderr
            .contains(&format!("{base}/files/gone.txt answered 404")),
        "{}",
        o.stderr
    );
    assert_eq!(p.state()["resources"], before["resources"]);
}
