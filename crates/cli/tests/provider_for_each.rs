//! Provider `for_each` (issue 21 item 3), end to end with OpenTofu 1.9's
//! semantics: the real `terrane` binary drives the blocks fixture provider
//! (`terrane-blocks-fixture`, one plugin process per provider instance),
//! which records what ConfigureProvider received and gives each object the
//! configuration it was planned with (`provider_config`), so each case can
//! assert which provider instance served which resource instance. Terraform
//! refuses the argument; one case checks that it still does.

use std::path::Path;
use terrane_testkit::{isolated, Out};

const HEAD: &str = r#"terraform {
  required_providers {
    blocks = { source = "example.com/terrane/blocks" }
  }
}
"#;

/// The provider configuration with one instance per region key.
const BY_REGION: &str = r#"variable "regions" {
  default = { a = "eu", b = "us" }
}
provider "blocks" {
  alias       = "by_region"
  for_each    = var.regions
  region      = each.value
  record_file = "configured-${each.key}.json"
  features {}
}
"#;

struct Dir {
    dir: tempfile::TempDir,
    rc: String,
}

impl Dir {
    fn new() -> Dir {
        let dir = terrane_testkit::temp_dir();
        let rc = terrane_testkit::dev_overrides(
            dir.path(),
            &[(
                "example.com/terrane/blocks",
                &terrane_testkit::fixture("terrane-blocks-fixture"),
            )],
        );
        Dir { dir, rc }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes `main.tf` (and the given module files), each with the
    /// requirements.
    fn write(&self, files: &[(&str, &str)]) {
        for (path, text) in files {
            let p = self.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, format!("{HEAD}{text}")).unwrap();
        }
    }

    fn run(&self, args: &[&str]) -> Out {
        isolated(env!("CARGO_BIN_EXE_terrane"), self.path())
            .args(args)
            .env("TF_CLI_CONFIG_FILE", &self.rc)
            .env("NO_COLOR", "1")
            .output()
            .expect("terrane runs")
            .into()
    }

    /// Runs `args`, asserting the exit code; returns stdout and stderr.
    #[track_caller]
    fn expect(&self, case: &str, args: &[&str], code: i32) -> String {
        let o = self.run(args);
        let all = format!("{}{}", o.stdout, o.stderr);
        assert_eq!(o.code, code, "case {case}: {args:?} exit:\n{all}");
        all
    }
}

#[track_caller]
fn contains(case: &str, text: &str, wants: &[&str]) {
    let flat = terrane_testkit::unwrapped(text);
    for w in wants {
        assert!(
            text.contains(w) || flat.contains(w),
            "case {case}: lacks {w:?}:\n{text}"
        );
    }
}

/// The state as Terraform's v4 JSON (`state pull`).
fn pulled(d: &Dir, case: &str) -> serde_json::Value {
    let text = d.expect(case, &["state", "pull"], 0);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("case {case}: {e}: {text}"))
}

/// The `provider_config` the provider instance gave `addr`'s object.
fn served(state: &serde_json::Value, ty_name: &str, key: Option<&str>) -> (String, String) {
    let (ty, name) = ty_name.split_once('.').unwrap();
    let r = state["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["type"] == ty && r["name"] == name)
        .unwrap_or_else(|| panic!("{ty_name} not in state: {state:#}"));
    let i = r["instances"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["index_key"].as_str() == key)
        .unwrap_or_else(|| panic!("{ty_name}[{key:?}] not in state: {state:#}"));
    let provider = i["provider"]
        .as_str()
        .or(r["provider"].as_str())
        .unwrap_or_default()
        .to_string();
    let cfg = i["attributes"]["provider_config"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    (provider, cfg)
}

const INSTANCE: &str = r#"provider["example.com/terrane/blocks"].by_region"#;

#[test]
fn item3_two_instances_each_resource_instance_bound_to_its_own() {
    let case = "two_instances";
    let d = Dir::new();
    d.write(&[(
        "main.tf",
        &format!(
            r#"{BY_REGION}
resource "blocks_server" "s" {{
  for_each = var.regions
  provider = blocks.by_region[each.key]
  name     = each.key
}}
resource "blocks_server" "lit" {{
  provider = blocks.by_region["b"]
  name     = "lit"
}}
resource "blocks_server" "counted" {{
  count    = 2
  provider = blocks.by_region[count.index == 0 ? "a" : "b"]
  name     = "c${{count.index}}"
}}"#
        ),
    )]);
    d.expect(case, &["init"], 0);
    let out = d.expect(case, &["apply", "-auto-approve"], 0);
    contains(case, &out, &["Apply complete! Resources: 5 added"]);
    // Each instance received its own configuration.
    for (k, region) in [("a", "eu"), ("b", "us")] {
        let rec = std::fs::read_to_string(d.path().join(format!("configured-{k}.json")))
            .unwrap_or_else(|e| panic!("case {case}: instance {k} not configured: {e}"));
        contains(case, &rec, &[&format!(r#""region":"{region}""#)]);
    }
    let state = pulled(&d, case);
    for (addr, key, region, pkey) in [
        ("blocks_server.s", Some("a"), "eu", "a"),
        ("blocks_server.s", Some("b"), "us", "b"),
        ("blocks_server.lit", None, "us", "b"),
    ] {
        let (provider, cfg) = served(&state, addr, key);
        assert_eq!(
            provider,
            format!(r#"{INSTANCE}["{pkey}"]"#),
            "case {case}: {addr}"
        );
        contains(case, &cfg, &[&format!(r#""region":"{region}""#)]);
    }
    // count.index selects too; integer resource keys.
    let r = state["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "counted")
        .unwrap();
    // As OpenTofu writes it: per-instance providers, none on the resource.
    assert!(r.get("provider").is_none(), "case {case}: {r:#}");
    let regions: Vec<&str> = r["instances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["provider"].as_str().unwrap())
        .collect();
    assert_eq!(
        regions,
        [format!(r#"{INSTANCE}["a"]"#), format!(r#"{INSTANCE}["b"]"#)],
        "case {case}"
    );
    // A second plan finds nothing to do: the recorded instances are
    // the ones the configuration selects.
    let again = d.expect(case, &["plan", "-detailed-exitcode"], 0);
    contains(case, &again, &["No changes."]);
}

#[test]
fn item3_removing_a_key_still_used_is_refused_then_retired_in_two_steps() {
    let case = "remove_key";
    let d = Dir::new();
    let resource = r#"
resource "blocks_server" "s" {
  for_each = var.regions
  provider = blocks.by_region[each.key]
  name     = each.key
}"#;
    d.write(&[("main.tf", &format!("{BY_REGION}{resource}"))]);
    d.expect(case, &["init"], 0);
    d.expect(case, &["apply", "-auto-approve"], 0);
    let before = d.expect(case, &["state", "pull"], 0);
    // Same collection for both: removing "a" removes the provider
    // instance that must destroy blocks_server.s["a"]. OpenTofu refuses.
    let shrunk = BY_REGION.replace(r#"{ a = "eu", b = "us" }"#, r#"{ b = "us" }"#);
    d.write(&[("main.tf", &format!("{shrunk}{resource}"))]);
    let out = d.expect(case, &["plan"], 1);
    contains(
        case,
        &out,
        &[
            "Error: Provider instance not present",
            r#"To work with blocks_server.s["a"] its original provider instance at provider["example.com/terrane/blocks"].by_region["a"] is required, but it has been removed."#,
            "Re-add the for_each element to destroy",
        ],
    );
    let out = d.expect(case, &["apply", "-auto-approve"], 1);
    contains(case, &out, &["Error: Provider instance not present"]);
    // State intact.
    assert_eq!(d.expect(case, &["state", "pull"], 0), before, "case {case}");
    // OpenTofu's way out: keep the provider instance, drop the resource's.
    let subset = resource.replace("for_each = var.regions", r#"for_each = { b = "us" }"#);
    d.write(&[("main.tf", &format!("{BY_REGION}{subset}"))]);
    let out = d.expect(case, &["apply", "-auto-approve"], 0);
    contains(
        case,
        &out,
        &[
            r#"blocks_server.s["a"]: Destroying"#,
            "Resources: 0 added, 0 changed, 1 destroyed",
        ],
    );
    // Now the key can go.
    d.write(&[("main.tf", &format!("{shrunk}{subset}"))]);
    let out = d.expect(case, &["plan", "-detailed-exitcode"], 0);
    contains(case, &out, &["No changes."]);
}

#[test]
fn item3_module_gets_one_instance_by_static_key() {
    let case = "module_static_key";
    let d = Dir::new();
    d.write(&[
        (
            "main.tf",
            &format!(
                r#"{BY_REGION}
module "m" {{
  source    = "./m"
  providers = {{ blocks = blocks.by_region["b"] }}
}}"#
            ),
        ),
        (
            "m/main.tf",
            r#"resource "blocks_server" "m" { name = "m" }"#,
        ),
    ]);
    d.expect(case, &["init"], 0);
    d.expect(case, &["apply", "-auto-approve"], 0);
    let state = pulled(&d, case);
    let (provider, cfg) = served(&state, "blocks_server.m", None);
    assert_eq!(provider, format!(r#"{INSTANCE}["b"]"#), "case {case}");
    contains(case, &cfg, &[r#""region":"us""#]);
}

/// One diagnostic case: a configuration, the command that must fail, and
/// what its output must hold (OpenTofu's words, the file:line).
struct Diag {
    name: &'static str,
    text: &'static str,
    args: &'static [&'static str],
    wants: &'static [&'static str],
}

fn check_diag(c: &Diag) {
    let d = Dir::new();
    // (An empty module `m` for the cases that call one.)
    d.write(&[("main.tf", c.text), ("m/main.tf", "")]);
    let init = d.run(&["init"]);
    let out = if init.code != 0 {
        format!("{}{}", init.stdout, init.stderr)
    } else {
        d.expect(c.name, c.args, 1)
    };
    contains(c.name, &out, c.wants);
}

#[test]
fn item3_diagnostics() {
    let cases = [
        Diag {
            name: "for_each_without_alias",
            text: r#"provider "blocks" {
  for_each = toset(["a"])
  features {}
}"#,
            args: &["validate"],
            wants: &[
                "Error: Alias required when using \"for_each\"",
                "The for_each argument is allowed only for provider configurations with an alias.",
                "main.tf line 7",
            ],
        },
        Diag {
            name: "count_on_provider",
            text: r#"provider "blocks" {
  alias = "x"
  count = 2
  features {}
}"#,
            args: &["validate"],
            wants: &[
                "Error: Reserved argument name in provider block",
                "The provider argument name \"count\" is reserved",
                "main.tf line 8",
            ],
        },
        Diag {
            name: "for_each_from_a_resource",
            text: r#"resource "blocks_server" "r" { name = "r" }
provider "blocks" {
  alias    = "x"
  for_each = toset([blocks_server.r.id])
  features {}
}
provider "blocks" {
  features {}
}"#,
            args: &["plan"],
            wants: &[
                "Error: Dynamic value in static context",
                "Unable to use blocks_server.r in static context, which is required by provider.blocks.x.for_each",
                "main.tf line 9",
            ],
        },
        Diag {
            name: "key_not_in_for_each",
            text: r#"provider "blocks" {
  alias    = "x"
  for_each = toset(["a"])
  features {}
}
resource "blocks_server" "r" {
  provider = blocks.x["zz"]
  name     = "r"
}"#,
            args: &["plan"],
            wants: &[
                "Error: Provider instance not present",
                r#"provider["example.com/terrane/blocks"].x["zz"]"#,
                "main.tf line 12",
            ],
        },
        Diag {
            name: "key_on_provider_without_for_each",
            text: r#"provider "blocks" {
  alias = "x"
  features {}
}
resource "blocks_server" "r" {
  provider = blocks.x["a"]
  name     = "r"
}"#,
            args: &["validate"],
            wants: &[
                "Error: Invalid resource provider configuration",
                "An instance key can be specified only for a provider configuration that uses for_each.",
                "main.tf line 11",
            ],
        },
        Diag {
            name: "no_key_on_provider_with_for_each",
            text: r#"provider "blocks" {
  alias    = "x"
  for_each = toset(["a"])
  features {}
}
resource "blocks_server" "r" {
  provider = blocks.x
  name     = "r"
}"#,
            args: &["validate"],
            wants: &[
                "Error: Invalid resource provider configuration",
                "A reference to a provider configuration which uses for_each requires an instance key.",
                "main.tf line 12",
            ],
        },
        Diag {
            name: "module_without_key",
            text: r#"provider "blocks" {
  alias    = "x"
  for_each = toset(["a"])
  features {}
}
module "m" {
  source    = "./m"
  providers = { blocks = blocks.x }
}"#,
            args: &["validate"],
            wants: &[
                "Error: Invalid module provider configuration",
                "Passing a collection of provider instances into a child module is not allowed.",
            ],
        },
        Diag {
            name: "key_without_alias",
            text: r#"resource "blocks_server" "r" {
  provider = blocks["a"]
  name     = "r"
}"#,
            args: &["validate"],
            wants: &[
                "Error: Invalid provider configuration reference",
                "Provider assignment requires an alias when specifying an instance key",
                "main.tf line 7",
            ],
        },
        Diag {
            name: "unknown_key",
            text: r#"provider "blocks" {
  alias    = "x"
  for_each = toset(["a"])
  features {}
}
resource "blocks_server" "k" { name = "k" }
resource "blocks_server" "r" {
  provider = blocks.x[blocks_server.k.id]
  name     = "r"
}
provider "blocks" {
  features {}
}"#,
            args: &["plan"],
            wants: &[
                "Error: Invalid provider instance key",
                "The provider instance key for blocks_server.r depends on values that cannot be determined until apply",
                "main.tf line 13",
            ],
        },
    ];
    for c in &cases {
        check_diag(c);
    }
}

/// An ephemeral resource opened through the provider instance its key
/// selects, as a resource is bound: each instance of the configuration is
/// configured and each opens its own token; a key the provider's for_each
/// lacks is OpenTofu's error.
#[test]
fn item3_ephemeral_resources_bound_to_provider_instances() {
    let d = Dir::new();
    d.write(&[(
        "main.tf",
        &format!(
            r#"{BY_REGION}
ephemeral "blocks_token" "t" {{
  for_each = var.regions
  provider = blocks.by_region[each.key]
  name     = "t-${{each.key}}"
  journal  = "${{path.root}}/journal.txt"
}}
"#
        ),
    )]);
    let out = d.expect("ephemeral_plan", &["plan"], 0);
    contains(
        "ephemeral_plan",
        &out,
        &[
            "ephemeral.blocks_token.t[\"a\"]: Opening...",
            "ephemeral.blocks_token.t[\"b\"]: Opening...",
        ],
    );
    let journal = std::fs::read_to_string(d.path().join("journal.txt")).unwrap_or_default();
    for line in ["open t-a", "open t-b", "close t-a", "close t-b"] {
        assert!(
            journal.lines().any(|l| l == line),
            "case journal: {line:?} in\n{journal}"
        );
    }
    for key in ["a", "b"] {
        assert!(
            d.path().join(format!("configured-{key}.json")).exists(),
            "case configured_{key}"
        );
    }
    d.write(&[(
        "main.tf",
        &format!(
            r#"{BY_REGION}
ephemeral "blocks_token" "t" {{
  provider = blocks.by_region["zz"]
  name     = "t"
}}
"#
        ),
    )]);
    let out = d.expect("ephemeral_missing_instance", &["plan"], 1);
    contains(
        "ephemeral_missing_instance",
        &out,
        &["Error: Provider instance not present"],
    );
}

/// Terraform refuses the argument at load (it is reserved there); terrane
/// follows OpenTofu, which accepts it.
#[test]
fn item3_terraform_refuses_provider_for_each() {
    let Some(tf) = terrane_testkit::terraform() else {
        return;
    };
    let dir = terrane_testkit::temp_dir();
    std::fs::write(
        dir.path().join("main.tf"),
        r#"provider "null" {
  alias    = "x"
  for_each = toset(["a"])
}
"#,
    )
    .unwrap();
    let out = tf.run(dir.path(), &["validate", "-no-color"], &[]);
    let all = format!("{}{}", out.stdout, out.stderr);
    assert_ne!(out.code, 0, "terraform accepted provider for_each:\n{all}");
    assert!(
        all.contains("Reserved argument name in provider block"),
        "terraform's refusal changed:\n{all}"
    );
}
