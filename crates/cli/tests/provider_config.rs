//! Full provider configuration (issue 15 item 4), end to end: the real
//! `terrane` binary drives the blocks fixture provider
//! (`terrane-blocks-fixture`), which records what ConfigureProvider
//! received. Nested blocks (static and dynamic) reach the provider;
//! provider configurations of child modules and aliases passed with
//! `providers = { ... }` configure their own instances; a provider block
//! the schema rejects fails at its line.

use std::path::Path;
use terrane_testkit::{isolated, Out};

const HEAD: &str = r#"terraform {
  required_providers {
    blocks = { source = "example.com/terrane/blocks" }
  }
}
"#;

fn terrane(dir: &Path, rc: &str, args: &[&str]) -> Out {
    isolated(env!("CARGO_BIN_EXE_terrane"), dir)
        .args(args)
        .env("TF_CLI_CONFIG_FILE", rc)
        .env("NO_COLOR", "1")
        .output()
        .expect("terrane runs")
        .into()
}

/// What one case writes and what it expects.
struct Case {
    name: &'static str,
    /// Files (relative path, text), each given the requirements.
    files: &'static [(&'static str, &'static str)],
    /// Exit code of `apply -auto-approve`.
    code: i32,
    /// Text the output must hold (stdout and stderr together).
    output: &'static [&'static str],
    /// Each recorded configuration file and what it must hold.
    recorded: &'static [(&'static str, &'static [&'static str])],
    /// Addresses `state list` must hold afterwards.
    state: &'static [&'static str],
}

fn check(case: &Case) {
    let dir = terrane_testkit::temp_dir();
    let rc = terrane_testkit::dev_overrides(
        dir.path(),
        &[(
            "example.com/terrane/blocks",
            &terrane_testkit::fixture("terrane-blocks-fixture"),
        )],
    );
    for (path, text) in case.files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        // Every module states its own requirement, as Terraform wants.
        std::fs::write(p, format!("{HEAD}{text}")).unwrap();
    }
    let init = terrane(dir.path(), &rc, &["init"]);
    assert_eq!(
        init.code, 0,
        "case {}: init:\n{}{}",
        case.name, init.stdout, init.stderr
    );
    let o = terrane(dir.path(), &rc, &["apply", "-auto-approve"]);
    let all = format!("{}{}", o.stdout, o.stderr);
    assert_eq!(o.code, case.code, "case {}: apply exit:\n{all}", case.name);
    for want in case.output {
        assert!(
            all.contains(want),
            "case {}: output lacks {want:?}:\n{all}",
            case.name
        );
    }
    for (file, wants) in case.recorded {
        let text = std::fs::read_to_string(dir.path().join(file))
            .unwrap_or_else(|e| panic!("case {}: {file}: {e}\n{all}", case.name));
        for want in *wants {
            assert!(
                text.contains(want),
                "case {}: {file} lacks {want:?}: {text}",
                case.name
            );
        }
    }
    let list = terrane(dir.path(), &rc, &["state", "list"]).stdout;
    for want in case.state {
        assert!(
            list.lines().any(|l| l == *want),
            "case {}: state lacks {want}:\n{list}",
            case.name
        );
    }
}

#[test]
fn item4_nested_blocks_reach_configure_provider() {
    check(&Case {
        name: "assume_role_and_friends",
        files: &[(
            "main.tf",
            r#"provider "blocks" {
  record_file = "configured.json"
  features {}
  assume_role {
    role_arn     = "arn:role/deploy"
    session_name = "terrane"
  }
  default_tags {
    tags = { team = "infra" }
  }
  endpoint {
    service = "s3"
    url     = "http://s3.local"
  }
  allowed_account { id = "111" }
  allowed_account { id = "222" }
}
resource "blocks_server" "s" { name = "p" }"#,
        )],
        code: 0,
        output: &["Apply complete! Resources: 1 added"],
        recorded: &[(
            "configured.json",
            &[
                r#""assume_role":{"role_arn":"arn:role/deploy","session_name":"terrane"}"#,
                r#""default_tags":{"tags":{"team":"infra"}}"#,
                r#""endpoint":[{"service":"s3","url":"http://s3.local"}]"#,
                r#""allowed_account":[{"id":"111"},{"id":"222"}]"#,
                r#""features":{"verbose":null}"#,
            ],
        )],
        state: &["blocks_server.s"],
    });
}

#[test]
fn item4_dynamic_blocks_in_provider_configuration() {
    check(&Case {
        name: "dynamic_endpoint",
        files: &[(
            "main.tf",
            r#"variable "services" {
  default = { s3 = "s3.local", sts = "sts.local" }
}
provider "blocks" {
  record_file = "configured.json"
  features {}
  dynamic "endpoint" {
    for_each = var.services
    content {
      service = endpoint.key
      url     = "http://${endpoint.value}"
    }
  }
}
resource "blocks_server" "s" { name = "p" }"#,
        )],
        code: 0,
        output: &[],
        recorded: &[(
            "configured.json",
            &[
                r#""endpoint":[{"service":"s3","url":"http://s3.local"},{"service":"sts","url":"http://sts.local"}]"#,
            ],
        )],
        state: &["blocks_server.s"],
    });
}

#[test]
fn item4_child_module_provider_configuration() {
    check(&Case {
        name: "child_declares_its_own",
        files: &[
            (
                "main.tf",
                r#"provider "blocks" {
  record_file = "root.json"
  region      = "root"
  features {}
}
resource "blocks_server" "r" { name = "r" }
module "c" {
  source = "./c"
  role   = "arn:child"
}"#,
            ),
            (
                "c/main.tf",
                r#"variable "role" {}
provider "blocks" {
  record_file = "child.json"
  region      = "child"
  features {}
  assume_role { role_arn = var.role }
}
resource "blocks_server" "c" { name = "c" }"#,
            ),
        ],
        code: 0,
        output: &["Resources: 2 added"],
        recorded: &[
            (
                "root.json",
                &[r#""region":"root""#, r#""assume_role":null"#],
            ),
            (
                "child.json",
                &[r#""region":"child""#, r#""role_arn":"arn:child""#],
            ),
        ],
        state: &["blocks_server.r", "module.c.blocks_server.c"],
    });
}

#[test]
fn item4_alias_passed_to_module() {
    check(&Case {
        name: "providers_map",
        files: &[
            (
                "main.tf",
                r#"provider "blocks" {
  record_file = "default.json"
  region      = "default"
  features {}
}
provider "blocks" {
  alias       = "west"
  record_file = "west.json"
  region      = "west"
  features {}
}
module "m" {
  source    = "./m"
  providers = { blocks = blocks.west }
}"#,
            ),
            (
                "m/main.tf",
                r#"resource "blocks_server" "m" { name = "m" }
output "seen" { value = blocks_server.m.provider_config }"#,
            ),
        ],
        code: 0,
        output: &["module.m.blocks_server.m: Creation complete"],
        recorded: &[("west.json", &[r#""region":"west""#])],
        state: &["module.m.blocks_server.m"],
    });
}

#[test]
fn item4_missing_required_block_is_an_error_at_the_block() {
    check(&Case {
        name: "features_left_out",
        files: &[(
            "main.tf",
            r#"provider "blocks" {
  region = "eu"
}
resource "blocks_server" "s" { name = "x" }"#,
        )],
        code: 1,
        // The provider block is on line 6 (after the requirements).
        output: &[
            "Error: Missing features block",
            "A block of type \"features\" is required here.",
            "on main.tf line 6, in provider \"blocks\":",
        ],
        recorded: &[],
        state: &[],
    });
}

#[test]
fn item4_block_the_schema_rejects_is_an_error() {
    check(&Case {
        name: "unsupported_block",
        files: &[(
            "main.tf",
            r#"provider "blocks" {
  features {}
  no_such_block {}
}
resource "blocks_server" "s" { name = "x" }"#,
        )],
        code: 1,
        output: &[
            "Error: Unsupported block type",
            "Blocks of type \"no_such_block\" are not expected here.",
            "on main.tf line 8, in provider \"blocks\":",
        ],
        recorded: &[],
        state: &[],
    });
}
