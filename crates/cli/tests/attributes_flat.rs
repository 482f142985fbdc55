//! v4 state with objects in Terraform 0.11's flatmap form
//! (`attributes_flat`), through the provider's UpgradeResourceState
//! (issue 15 item 3). The same state and configuration, the same provider
//! binary (the legacy fixture, protocol 5 only, as legacy-SDK providers
//! are), planned and applied by real Terraform and by terrane: the
//! flatmap is kept verbatim until the provider upgrades it, the plan is
//! the same no-op, and the upgraded object is the same. A flatmap the
//! provider rejects stops the plan with its error naming the resource,
//! and the state keeps the flatmap.

use std::path::Path;
use std::process::{Command, Stdio};
use terrane_testkit::Out;

const PROVIDER: &str = "provider[\"registry.terraform.io/terrane/legacy\"]";

const CONFIG: &str = r#"terraform {
  required_providers {
    legacy = { source = "terrane/legacy" }
  }
}

resource "legacy_old" "o" {
  name   = "one"
  labels = { team = "core", "env.tier" = "prod" }
  ports  = [80, 443]
  zones  = ["a", "b"]
  disk {
    size = 10
    kind = "ssd"
  }
  disk {
    size = 20
    kind = "hdd"
  }
  access {
    cidr = "10.0.0.0/8"
  }
  access {
    cidr = "192.168.0.0/16"
  }
}
"#;

/// The object as Terraform 0.11 stored it (schema version 0: the map was
/// `tags` then): a map key with a dot, a set of numbers and a set of
/// blocks keyed by hash, a list, list blocks.
fn flat(ports_count: &str) -> serde_json::Value {
    serde_json::json!({
        "id": "old-one",
        "name": "one",
        "tags.%": "2",
        "tags.team": "core",
        "tags.env.tier": "prod",
        "ports.#": ports_count,
        "ports.1234": "80",
        "ports.5678": "443",
        "zones.#": "2",
        "zones.0": "a",
        "zones.1": "b",
        "disk.#": "2",
        "disk.0.size": "10",
        "disk.0.kind": "ssd",
        "disk.1.size": "20",
        "disk.1.kind": "hdd",
        "access.#": "2",
        "access.1111.cidr": "10.0.0.0/8",
        "access.2222.cidr": "192.168.0.0/16"
    })
}

fn state_file(flat: &serde_json::Value) -> String {
    serde_json::json!({
        "version": 4,
        "terraform_version": "0.12.31",
        "serial": 3,
        "lineage": "0c9d5f7e-3f3a-4b7e-9d55-6a1f0f1f2e10",
        "outputs": {},
        "resources": [{
            "mode": "managed",
            "type": "legacy_old",
            "name": "o",
            "provider": PROVIDER,
            "instances": [{"schema_version": 0, "attributes_flat": flat}]
        }]
    })
    .to_string()
}

fn terrane(dir: &Path, env: &[(&str, &str)], args: &[&str]) -> Out {
    Command::new(env!("CARGO_BIN_EXE_terrane"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .envs(env.iter().copied())
        .output()
        .expect("terrane runs")
        .into()
}

/// One tool in a fresh directory holding the configuration and, as its
/// state, the v4 file with the flatmap object.
struct Tool {
    name: &'static str,
    dir: tempfile::TempDir,
    env: Vec<(&'static str, String)>,
    tf: Option<terrane_testkit::Terraform>,
}

impl Tool {
    fn new(name: &'static str, state: &str) -> Tool {
        let fixture = terrane_testkit::fixture("terrane-legacy-fixture");
        let legacy = ("registry.terraform.io/terrane/legacy", fixture.as_path());
        Tool::with(name, state, CONFIG, legacy, &[])
    }

    /// `name` with `config`, the plugin `provider` (source address, path)
    /// and extra environment (for the plugin too).
    fn with(
        name: &'static str,
        state: &str,
        config: &str,
        provider: (&str, &Path),
        env: &[(&'static str, &str)],
    ) -> Tool {
        let dir = terrane_testkit::temp_dir();
        let d = dir.path();
        let rc = terrane_testkit::dev_overrides(d, &[provider]);
        std::fs::write(d.join("main.tf"), config).unwrap();
        std::fs::write(d.join("old.tfstate"), state).unwrap();
        let mut env: Vec<(&'static str, String)> =
            env.iter().map(|(k, v)| (*k, v.to_string())).collect();
        env.push(("TF_CLI_CONFIG_FILE", rc));
        let tool = Tool {
            name,
            dir,
            env,
            tf: (name == "terraform").then(|| terrane_testkit::terraform().expect("terraform")),
        };
        let pushed = tool.run(&["state", "push", "old.tfstate"]);
        assert_eq!(pushed.code, 0, "case {name}_push\n{}", pushed.stderr);
        tool
    }

    fn run(&self, args: &[&str]) -> Out {
        let d = self.dir.path();
        let env: Vec<(&str, &str)> = self.env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        match &self.tf {
            Some(tf) => {
                let o = tf.run(d, args, &env);
                Out {
                    code: o.code,
                    stdout: o.stdout,
                    stderr: o.stderr,
                }
            }
            None => terrane(d, &env, args),
        }
    }

    /// The one instance object of the state, as `state pull` prints it.
    fn instance(&self) -> serde_json::Value {
        let out = self.run(&["state", "pull"]);
        assert_eq!(out.code, 0, "case {}_pull\n{}", self.name, out.stderr);
        let st: serde_json::Value = serde_json::from_str(&out.stdout).expect("state JSON");
        st["resources"][0]["instances"][0].clone()
    }
}

fn tools() -> Vec<&'static str> {
    let mut v = vec!["terrane"];
    if terrane_testkit::terraform().is_some() {
        v.push("terraform");
    }
    v
}

/// The plan text from the refresh on, as words: the product's name and
/// the line wrapping it moves differ by tool alone, and Terraform's
/// development-overrides warning comes before.
fn plan_words(out: &Out) -> Vec<String> {
    let from = out.stdout.find("legacy_old.o: Refreshing").unwrap_or(0);
    out.stdout[from..]
        .replace("Terraform", "terrane")
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

#[test]
fn item3_attributes_flat_upgraded_like_terraform() {
    let state = state_file(&flat("2"));
    let mut upgraded = Vec::new();
    let mut plans = Vec::new();
    for name in tools() {
        let t = Tool::new(name, &state);
        // Kept verbatim until the provider upgrades it.
        let kept = t.instance();
        assert_eq!(
            kept["attributes_flat"],
            flat("2"),
            "case {name}_flatmap_kept\n{kept}"
        );
        assert!(
            kept.get("attributes").is_none_or(|a| a.is_null()),
            "case {name}_no_attributes_before_upgrade\n{kept}"
        );
        // The same configuration: nothing to change once upgraded.
        let plan = t.run(&["plan", "-no-color", "-detailed-exitcode"]);
        assert_eq!(
            plan.code, 0,
            "case {name}_noop_plan\n{}\n{}",
            plan.stdout, plan.stderr
        );
        plans.push((name, plan_words(&plan)));
        let apply = t.run(&["apply", "-no-color", "-auto-approve"]);
        assert_eq!(
            apply.code, 0,
            "case {name}_apply\n{}\n{}",
            apply.stdout, apply.stderr
        );
        let up = t.instance();
        assert!(
            up.get("attributes_flat").is_none(),
            "case {name}_flatmap_replaced\n{up}"
        );
        assert_eq!(up["schema_version"], 1, "case {name}_schema_version\n{up}");
        assert_eq!(
            up["attributes"],
            serde_json::json!({
                "id": "old-one",
                "name": "one",
                "labels": {"team": "core", "env.tier": "prod"},
                "ports": [80, 443],
                "zones": ["a", "b"],
                "disk": [{"size": 10, "kind": "ssd"}, {"size": 20, "kind": "hdd"}],
                "access": [{"cidr": "10.0.0.0/8"}, {"cidr": "192.168.0.0/16"}]
            }),
            "case {name}_upgraded_object\n{up}"
        );
        upgraded.push((name, up["attributes"].clone()));
    }
    if let [(_, terrane), (_, terraform)] = &upgraded[..] {
        assert_eq!(terrane, terraform, "case same_upgraded_state");
    }
    if let [(_, terrane), (_, terraform)] = &plans[..] {
        assert_eq!(terrane, terraform, "case same_noop_plan_text");
    }
}

#[test]
fn item3_rejected_flatmap_names_address_state_intact() {
    // A set count the provider cannot read: its UpgradeResourceState fails.
    let bad = flat("two");
    let state = state_file(&bad);
    for name in tools() {
        let t = Tool::new(name, &state);
        let plan = t.run(&["plan", "-no-color"]);
        let text = plan.stderr.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(plan.code, 1, "case {name}_plan_fails\n{}", plan.stderr);
        assert!(
            text.contains("Failed to migrate legacy state")
                && text.contains("legacy_old.o")
                && text.contains("ports.#"),
            "case {name}_error_names_address\n{}",
            plan.stderr
        );
        let apply = t.run(&["apply", "-no-color", "-auto-approve"]);
        assert_eq!(apply.code, 1, "case {name}_apply_fails\n{}", apply.stderr);
        let kept = t.instance();
        assert_eq!(
            kept["attributes_flat"], bad,
            "case {name}_state_intact\n{kept}"
        );
    }
}

/// random_integer as Terraform 0.11 stored it.
const RANDOM_STATE: &str = r#"{"version": 4, "terraform_version": "0.12.31", "serial": 2,
  "lineage": "7a0c2e1d-6f44-4b1e-8d0a-3c5b9e2f4a11", "outputs": {},
  "resources": [{"mode": "managed", "type": "random_integer", "name": "n",
    "provider": "provider[\"registry.terraform.io/hashicorp/random\"]",
    "instances": [{"schema_version": 0, "attributes_flat": {
      "id": "42", "min": "1", "max": "100", "result": "42",
      "keepers.%": "1", "keepers.k": "v"}}]}]}"#;

const RANDOM_CONFIG: &str = r#"terraform {
  required_providers {
    random = { source = "hashicorp/random" }
  }
}

resource "random_integer" "n" {
  min     = 1
  max     = 100
  keepers = { k = "v" }
}
"#;

/// An SDK provider plugin (our random) upgrades a 0.11 object from
/// RawState.flatmap under either protocol, for Terraform and terrane
/// alike: the same no-op plan, the same upgraded object.
#[test]
fn item3_sdk_plugin_upgrades_flatmap_over_protocol_5_and_6() {
    let random =
        terrane_testkit::built_binary("terrane-provider-random", "terraform-provider-random");
    for protocol in ["5", "6"] {
        let mut upgraded = Vec::new();
        for name in tools() {
            let t = Tool::with(
                name,
                RANDOM_STATE,
                RANDOM_CONFIG,
                ("hashicorp/random", random.as_path()),
                &[(terrane_plugin::PROTOCOL_ENV, protocol)],
            );
            let case = format!("{name}_protocol{protocol}");
            let plan = t.run(&["plan", "-no-color", "-detailed-exitcode"]);
            assert_eq!(
                plan.code, 0,
                "case {case}_noop_plan\n{}\n{}",
                plan.stdout, plan.stderr
            );
            let apply = t.run(&["apply", "-no-color", "-auto-approve"]);
            assert_eq!(apply.code, 0, "case {case}_apply\n{}", apply.stderr);
            let up = t.instance();
            assert_eq!(
                up["attributes"],
                serde_json::json!({"id": "42", "min": 1, "max": 100, "seed": null,
                    "keepers": {"k": "v"}, "result": 42}),
                "case {case}_upgraded\n{up}"
            );
            assert!(
                up.get("attributes_flat").is_none(),
                "case {case}_flatmap_replaced\n{up}"
            );
            // The object and its version (Terraform also records an
            // identity_schema_version for this provider, which is not the
            // upgrade's business).
            upgraded.push((up["attributes"].clone(), up["schema_version"].clone()));
        }
        if let [terrane, terraform] = &upgraded[..] {
            assert_eq!(terrane, terraform, "case protocol{protocol}_same_state");
        }
    }
}
