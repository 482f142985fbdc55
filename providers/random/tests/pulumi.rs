//! The random provider binary served over Pulumi's protocol, driven by a
//! client built from Pulumi's own generated stubs (PyPI `pulumi`,
//! `pulumi.runtime.proto`) through the provider guide's call sequences:
//! preview, update, replace, import, refresh, destroy; Check failures with
//! property paths; secrets from sensitive attributes; and the same binary
//! still speaking go-plugin when Terraform launches it.

use serde_json::{json, Value};
use terrane_testkit::pulumi::{urn, PulumiClient};

const BIN: &str = env!("CARGO_BIN_EXE_terraform-provider-random");

fn client() -> PulumiClient {
    let mut c = PulumiClient::start(BIN.as_ref(), &[], &[]);
    let checked = c.ok(
        "CheckConfig",
        json!({"urn": urn("pulumi:providers:random", "p"), "news": {"version": "0.1.0"}}),
    );
    assert_eq!(checked["failures"], json!([]), "{checked}");
    c.ok(
        "Configure",
        json!({"args": checked["inputs"], "acceptSecrets": true}),
    );
    c
}

/// One step of a call sequence and what its answer must hold.
struct Case {
    name: &'static str,
    method: &'static str,
    request: Value,
    check: fn(&Value),
}

fn check(c: &mut PulumiClient, cases: &[Case]) {
    for case in cases {
        let got = c.ok(case.method, case.request.clone());
        eprintln!("{}: {got}", case.name);
        (case.check)(&got);
    }
}

const UNKNOWN: &str = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
const SECRET_SIG: &str = "1b47061264138c4ac30d75fd1eb44270";

#[test]
fn item2_random_pulumi_plugin_info_handshake_and_schema() {
    let mut c = PulumiClient::start(BIN.as_ref(), &[], &[]);
    let info = c.ok("GetPluginInfo", json!({}));
    assert_eq!(info["version"], "0.1.0");
    let hs = c.ok("Handshake", json!({"engine_address": "127.0.0.1:1"}));
    assert_eq!(hs["accept_secrets"], true);
    let schema = c.ok("GetSchema", json!({"version": 0}));
    let s: Value = serde_json::from_str(schema["schema"].as_str().unwrap()).unwrap();
    assert_eq!(s["name"], "random");
    let id = &s["resources"]["random:index:Id"];
    assert_eq!(
        id["inputProperties"]["byteLength"]["type"], "number",
        "{id}"
    );
    assert!(id["requiredInputs"]
        .as_array()
        .unwrap()
        .contains(&json!("byteLength")));
    assert!(
        id["inputProperties"].get("hex").is_none(),
        "outputs are not inputs"
    );
    assert_eq!(id["properties"]["hex"]["type"], "string");
    assert_eq!(
        s["resources"]["random:index:Password"]["properties"]["result"]["secret"], true,
        "sensitive becomes secret"
    );
    let (exit, stderr) = c.stop();
    assert_eq!(exit, 0, "the plugin exits cleanly on SIGINT: {stderr}");
}

#[test]
fn item2_random_pulumi_preview_update_replace_refresh_import_destroy() {
    let mut c = client();
    let u = urn("random:index:Id", "server");
    let news = json!({"byteLength": 8, "prefix": "srv-", "keepers": {"rotation": "one"}});
    // preview: Check, then Create with preview=true answers unknown outputs.
    let checked = c.ok("Check", json!({"urn": u, "olds": {}, "news": news}));
    assert_eq!(checked["failures"], json!([]));
    let inputs = checked["inputs"].clone();
    check(
        &mut c,
        &[Case {
            name: "create preview",
            method: "Create",
            request: json!({"urn": u, "properties": inputs, "preview": true}),
            check: |r| {
                assert_eq!(r["properties"]["hex"], UNKNOWN, "{r}");
                assert_eq!(r["properties"]["byteLength"], 8.0);
            },
        }],
    );
    // update: Create for real.
    let created = c.ok(
        "Create",
        json!({"urn": u, "properties": inputs, "preview": false}),
    );
    let id = created["id"].as_str().unwrap().to_string();
    let state = created["properties"].clone();
    assert_eq!(id.len(), 11, "8 bytes, URL-safe base64: {created}");
    assert!(
        state["hex"].as_str().unwrap().starts_with("srv-"),
        "{state}"
    );
    assert_eq!(state["hex"].as_str().unwrap().len(), 4 + 16, "{state}");
    // no-change preview: Check with olds, then Diff answers DIFF_NONE.
    let again = c.ok("Check", json!({"urn": u, "olds": inputs, "news": news}));
    let diff = c.ok(
        "Diff",
        json!({"urn": u, "id": id, "olds": state, "news": again["inputs"], "old_inputs": inputs}),
    );
    assert_eq!(diff["changes"], "DIFF_NONE", "{diff}");
    // replace: keepers change (requires replace), delete before replace.
    let changed = json!({"byteLength": 8, "prefix": "srv-", "keepers": {"rotation": "two"}});
    let rechecked = c.ok("Check", json!({"urn": u, "olds": inputs, "news": changed}));
    let diff = c.ok(
        "Diff",
        json!({"urn": u, "id": id, "olds": state, "news": rechecked["inputs"]}),
    );
    assert_eq!(diff["changes"], "DIFF_SOME", "{diff}");
    assert_eq!(diff["replaces"], json!(["keepers"]));
    assert_eq!(diff["detailedDiff"]["keepers"]["kind"], "UPDATE_REPLACE");
    assert_eq!(diff["deleteBeforeReplace"], true);
    // ignoreChanges hides the change.
    let diff = c.ok(
        "Diff",
        json!({"urn": u, "id": id, "olds": state, "news": rechecked["inputs"], "ignoreChanges": ["keepers"]}),
    );
    assert_eq!(diff["changes"], "DIFF_NONE", "{diff}");
    // refresh: Read with the state answers the same object.
    let read = c.ok(
        "Read",
        json!({"urn": u, "id": id, "properties": state, "inputs": inputs}),
    );
    assert_eq!(read["id"], id);
    assert_eq!(read["properties"], state);
    assert_eq!(read["inputs"], inputs);
    // import: Read with only the ID answers state and inputs; Check and
    // Diff of those inputs against that state find nothing to do.
    let imported = c.ok(
        "Read",
        json!({"urn": urn("random:index:Id", "imp"), "id": format!("srv-,{id}")}),
    );
    assert_eq!(imported["properties"]["hex"], state["hex"], "{imported}");
    assert_eq!(imported["inputs"]["prefix"], "srv-");
    assert!(
        imported["inputs"].get("hex").is_none(),
        "outputs are not inputs"
    );
    let ic = c.ok(
        "Check",
        json!({"urn": urn("random:index:Id", "imp"), "olds": imported["inputs"], "news": imported["inputs"]}),
    );
    assert_eq!(ic["failures"], json!([]), "{ic}");
    let idiff = c.ok(
        "Diff",
        json!({"urn": urn("random:index:Id", "imp"), "id": id, "olds": imported["properties"], "news": ic["inputs"]}),
    );
    assert_eq!(idiff["changes"], "DIFF_NONE", "{idiff}");
    // destroy.
    c.ok("Delete", json!({"urn": u, "id": id, "properties": state}));
    let (exit, stderr) = c.stop();
    assert_eq!(exit, 0, "{stderr}");
}

#[test]
fn item2_random_pulumi_check_failures_have_property_paths() {
    let mut c = client();
    let u = urn("random:index:Id", "bad");
    let cases: &[(&str, Value, &str, &str)] = &[
        ("validator", json!({"byteLength": 0}), "byteLength", "1"),
        (
            "missing required",
            json!({}),
            "byteLength",
            "missing required",
        ),
        (
            "wrong type",
            json!({"byteLength": "eight"}),
            "byteLength",
            "number",
        ),
        (
            "no such property",
            json!({"byteLength": 8, "colour": "red"}),
            "colour",
            "no such property",
        ),
        (
            "output set",
            json!({"byteLength": 8, "hex": "00"}),
            "hex",
            "output",
        ),
        (
            "nested map element",
            json!({"byteLength": 8, "keepers": {"a": [1]}}),
            "keepers[\"a\"]",
            "expected a string",
        ),
    ];
    for (name, news, property, reason) in cases {
        let r = c.ok("Check", json!({"urn": u, "news": news}));
        let failures = r["failures"].as_array().unwrap();
        assert!(
            failures
                .iter()
                .any(|f| f["property"] == *property
                    && f["reason"].as_str().unwrap().contains(reason)),
            "{name}: {r}"
        );
    }
}

#[test]
fn item2_random_pulumi_secrets_from_sensitive_and_unknown_inputs() {
    let mut c = client();
    let u = urn("random:index:Password", "pw");
    let checked = c.ok("Check", json!({"urn": u, "news": {"length": 20}}));
    assert_eq!(
        checked["inputs"]["special"], true,
        "defaults applied: {checked}"
    );
    let created = c.ok("Create", json!({"urn": u, "properties": checked["inputs"]}));
    let result = &created["properties"]["result"];
    assert_eq!(
        result["4dabf18193072939515e22adb298388d"], SECRET_SIG,
        "{created}"
    );
    assert_eq!(result["value"].as_str().unwrap().len(), 20);
    // An unknown input (a value from another resource not yet made) plans
    // unknown outputs in preview.
    let u = urn("random:index:Id", "later");
    let checked = c.ok(
        "Check",
        json!({"urn": u, "news": {"byteLength": 4, "prefix": UNKNOWN}}),
    );
    assert_eq!(checked["inputs"]["prefix"], UNKNOWN, "{checked}");
    let p = c.ok(
        "Create",
        json!({"urn": u, "properties": checked["inputs"], "preview": true}),
    );
    assert_eq!(p["properties"]["hex"], UNKNOWN);
    assert!(
        p["properties"].get("id").is_none(),
        "the ID is not a property: {p}"
    );
    // A secret input stays secret in the outputs.
    let u = urn("random:index:Id", "s");
    let secret_prefix = json!({"4dabf18193072939515e22adb298388d": SECRET_SIG, "value": "hidden-"});
    let checked = c.ok(
        "Check",
        json!({"urn": u, "news": {"byteLength": 4, "prefix": secret_prefix}}),
    );
    assert_eq!(checked["inputs"]["prefix"], secret_prefix, "{checked}");
    let created = c.ok("Create", json!({"urn": u, "properties": checked["inputs"]}));
    assert_eq!(created["properties"]["prefix"], secret_prefix, "{created}");
}

#[test]
fn item2_random_launches_both_ways() {
    terrane_testkit::pulumi::assert_launches_both_ways(BIN.as_ref(), "0.1.0");
}

/// Pulumi's engine may die without a SIGINT: the plugin notices its parent
/// is gone and exits instead of serving on.
#[test]
fn item2_random_pulumi_plugin_exits_when_the_engine_is_gone() {
    use std::io::BufRead;
    // A shell stands in for the engine: it starts the plugin and waits.
    let mut engine = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("'{BIN}' 127.0.0.1:1 & echo \"pid $!\"; wait"))
        .env_remove("TF_PLUGIN_MAGIC_COOKIE")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = std::io::BufReader::new(engine.stdout.take().unwrap());
    // The shell's line and the plugin's port line come in either order.
    let (mut pid, mut port) = (String::new(), String::new());
    for _ in 0..2 {
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        match line.strip_prefix("pid ") {
            Some(p) => pid = p.to_string(),
            None => port = line,
        }
    }
    assert!(
        port.trim().parse::<u16>().is_ok(),
        "the port line: {port:?}"
    );
    let stat = format!("/proc/{}/stat", pid.trim());
    let running = || {
        std::fs::read_to_string(&stat)
            .map(|s| {
                !s.rsplit(')')
                    .next()
                    .unwrap_or("")
                    .trim_start()
                    .starts_with('Z')
            })
            .unwrap_or(false)
    };
    assert!(running(), "the plugin runs while the engine does");
    engine.kill().unwrap();
    engine.wait().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while running() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(!running(), "the plugin outlived its engine by 10 s");
}

/// terrane's engine hosting this same binary as the Pulumi plugin
/// `pulumi-resource-random` (`source = "pulumi/random"`, found on `PATH`):
/// init, apply, a no-change plan, destroy, all over Pulumi's protocol.
#[test]
fn item2_random_under_terrane_as_a_pulumi_plugin() {
    let terrane = terrane_testkit::built_binary("terrane-cli", "terrane");
    let dir = terrane_testkit::temp_dir();
    let bin_dir = dir.path().join("bin");
    std::fs::create_dir(&bin_dir).unwrap();
    std::os::unix::fs::symlink(BIN, bin_dir.join("pulumi-resource-random")).unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    std::fs::write(
        work.join("main.tf"),
        r#"
terraform {
  required_providers {
    random = { source = "pulumi/random" }
  }
}

resource "random_id" "x" {
  byte_length = 4
  prefix      = "p-"
}

output "hex" {
  value = random_id.x.hex
}
"#,
    )
    .unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let run = |args: &[&str], want: i32| {
        let out = std::process::Command::new(&terrane)
            .args(args)
            .current_dir(&work)
            .env("PATH", &path)
            .env("PULUMI_HOME", dir.path().join("pulumi-home"))
            .env("TF_CLI_CONFIG_FILE", dir.path().join("none.tfrc"))
            .output()
            .unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        );
        assert_eq!(
            out.status.code(),
            Some(want),
            "terrane {args:?}\n{stdout}\n{stderr}"
        );
        stdout
    };
    std::fs::write(dir.path().join("none.tfrc"), "").unwrap();
    run(&["init", "-no-color"], 0);
    run(&["apply", "-auto-approve", "-no-color"], 0);
    let hex = run(&["output", "-raw", "hex"], 0);
    assert!(hex.starts_with("p-") && hex.len() == 2 + 8, "{hex:?}");
    run(&["plan", "-detailed-exitcode", "-no-color"], 0);
    run(&["destroy", "-auto-approve", "-no-color"], 0);
}
