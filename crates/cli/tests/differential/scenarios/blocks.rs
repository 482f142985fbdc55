//! Nested blocks (single, list, set, map), sets of objects, dynamic
//! blocks and attributes, JSON strings, write-only attributes, and
//! provider configuration: nested blocks reaching ConfigureProvider,
//! aliases, module `providers`, child-module providers and the errors for
//! a provider block the schema rejects. All through the blocks fixture
//! provider (`terrane-blocks-fixture`), which runs under both tools.

use crate::harness::{Act, Step};
use std::path::Path;

/// The requirements of a blocks scenario.
const HEAD: &str = r#"terraform {
  required_providers {
    blocks = { source = "example.com/terrane/blocks" }
  }
}
"#;

/// The provider block most scenarios use: the required `features` block.
const PROVIDER: &str = r#"provider "blocks" {
  features {}
}
"#;

/// `main.tf` with the requirements prepended, then plan and apply.
fn step(main_tf: &str) -> Step {
    Step::same(Act::Plan(&[])).file("main.tf", &format!("{HEAD}{main_tf}"))
}

/// [`step`] with the default provider block.
fn with_provider(main_tf: &str) -> Step {
    step(&format!("{PROVIDER}{main_tf}"))
}

/// A child module's files declare their own requirement.
fn module_file(body: &str) -> String {
    format!("{HEAD}{body}")
}

pub fn blocks_single_nested() -> Vec<Step> {
    let v1 = r#"resource "blocks_server" "s" {
  name = "web"
  network {
    cidr = "10.0.0.0/16"
    subnet {
      cidr = "10.0.1.0/24"
      zone = "a"
    }
  }
}"#;
    let v2 = r#"resource "blocks_server" "s" {
  name = "web"
  network {
    cidr = "10.0.0.0/16"
    dns  = true
    subnet {
      cidr = "10.0.1.0/24"
      zone = "a"
    }
    subnet {
      cidr = "10.0.2.0/24"
      zone = "b"
    }
  }
}"#;
    let v3 = r#"resource "blocks_server" "s" { name = "web" }"#;
    vec![
        with_provider(v1),
        with_provider(v2),
        Step::same(Act::PlanOnly(&[])),
        with_provider(v3),
    ]
}

pub fn blocks_list_nested() -> Vec<Step> {
    let disks = |ds: &[(u32, &str)]| {
        let mut s = String::from("resource \"blocks_server\" \"s\" {\n  name = \"db\"\n");
        for (size, label) in ds {
            s.push_str(&format!(
                "  disk {{\n    size  = {size}\n    label = \"{label}\"\n  }}\n"
            ));
        }
        s.push('}');
        s
    };
    vec![
        with_provider(&disks(&[(10, "root"), (20, "data")])),
        with_provider(&disks(&[(10, "root"), (30, "data"), (40, "logs")])),
        with_provider(&disks(&[(30, "data"), (40, "logs")])),
        with_provider(&disks(&[])),
    ]
}

pub fn blocks_set_nested() -> Vec<Step> {
    let rules = |rs: &[(u32, &str)]| {
        let mut s = String::from("resource \"blocks_server\" \"s\" {\n  name = \"fw\"\n");
        for (port, proto) in rs {
            s.push_str(&format!(
                "  rule {{\n    port     = {port}\n    protocol = \"{proto}\"\n  }}\n"
            ));
        }
        s.push('}');
        s
    };
    vec![
        with_provider(&rules(&[(80, "tcp"), (443, "tcp")])),
        with_provider(&rules(&[(80, "tcp"), (443, "udp"), (22, "tcp")])),
        Step::same(Act::PlanOnly(&[])),
    ]
}

pub fn blocks_map_nested() -> Vec<Step> {
    let v1 = r#"resource "blocks_server" "s" {
  name = "m"
  label "env" { value = "prod" }
  label "team" { value = "core" }
}"#;
    let v2 = r#"resource "blocks_server" "s" {
  name = "m"
  label "env" { value = "staging" }
  label "owner" { value = "ops" }
}"#;
    vec![with_provider(v1), with_provider(v2)]
}

pub fn blocks_set_of_objects() -> Vec<Step> {
    let v1 = r#"resource "blocks_server" "s" {
  name   = "files"
  mounts = [
    { path = "/data", ro = false },
    { path = "/etc", ro = true },
  ]
  tags = { a = "1" }
}"#;
    let v2 = r#"resource "blocks_server" "s" {
  name   = "files"
  mounts = [
    { path = "/data", ro = true },
    { path = "/etc", ro = true },
    { path = "/var", ro = false },
  ]
  tags = { a = "1", b = "2" }
}"#;
    vec![with_provider(v1), with_provider(v2)]
}

pub fn blocks_dynamic_blocks() -> Vec<Step> {
    let tf = |disks: &str| {
        format!(
            r#"variable "disks" {{
  default = {disks}
}}
resource "blocks_server" "s" {{
  name = "dyn"
  dynamic "disk" {{
    for_each = var.disks
    content {{
      size  = disk.value
      label = "d${{disk.key}}"
    }}
  }}
  dynamic "rule" {{
    for_each = toset(var.disks)
    iterator = r
    content {{ port = r.value }}
  }}
}}"#
        )
    };
    vec![
        with_provider(&tf("[10, 20]")),
        with_provider(&tf("[10, 25, 30]")),
        with_provider(&tf("[]")),
    ]
}

pub fn blocks_dynamic_attribute() -> Vec<Step> {
    vec![
        with_provider(
            r#"resource "blocks_server" "s" {
  name  = "x"
  extra = { a = 1, b = ["p", "q"] }
}"#,
        ),
        with_provider(
            r#"resource "blocks_server" "s" {
  name  = "x"
  extra = { a = 2, b = ["p", "q", "r"] }
}"#,
        ),
        with_provider(
            r#"resource "blocks_server" "s" {
  name  = "x"
  extra = "now a string"
}"#,
        ),
    ]
}

pub fn blocks_json_string() -> Vec<Step> {
    vec![
        with_provider(
            r#"resource "blocks_server" "s" {
  name   = "j"
  policy = jsonencode({ Version = "1", Statement = [{ Effect = "Allow", Action = "read" }] })
}"#,
        ),
        with_provider(
            r#"resource "blocks_server" "s" {
  name   = "j"
  policy = jsonencode({ Version = "1", Statement = [{ Effect = "Deny", Action = "read" }, { Effect = "Allow", Action = "list" }] })
}"#,
        ),
        with_provider(
            r#"resource "blocks_server" "s" {
  name   = "j"
  policy = "{\"Version\": \"1\", \"Statement\": [{\"Effect\": \"Deny\", \"Action\": \"read\"}, {\"Effect\": \"Allow\", \"Action\": \"list\"}]}"
}"#,
        ),
        with_provider(
            r#"resource "blocks_server" "s" {
  name   = "j"
  policy = "not json"
}"#,
        ),
    ]
}

pub fn blocks_write_only() -> Vec<Step> {
    vec![
        with_provider(
            r#"resource "blocks_server" "s" {
  name     = "w"
  password = "hunter2"
}"#,
        ),
        with_provider(
            r#"resource "blocks_server" "s" {
  name     = "w"
  password = "hunter3"
  tags     = { rotated = "yes" }
}"#,
        ),
    ]
}

/// Issue 21 item 2: an ephemeral token (opened at plan and at apply, never
/// stored) feeding a write-only attribute, then a no-change plan.
pub fn blocks_ephemeral_write_only() -> Vec<Step> {
    let v1 = r#"ephemeral "blocks_token" "t" {
  name = "db"
}

resource "blocks_server" "s" {
  name     = "w"
  password = ephemeral.blocks_token.t.token
}"#;
    vec![with_provider(v1), Step::same(Act::PlanOnly(&[]))]
}

const STORED: &str = r#"provider "blocks" {
  features {}
  store = "store"
}
resource "blocks_server" "s" {
  name = "d"
  tags = { owner = "me" }
  disk {
    size = 10
  }
}"#;

fn change_outside(d: &Path) {
    let f = d.join("store/srv-d.json");
    let text = std::fs::read_to_string(&f).expect("stored object");
    let mut j: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    j["tags"]["owner"] = "someone else".into();
    j["disk"][0]["size"] = 99.into();
    std::fs::write(&f, j.to_string()).expect("write stored object");
}

fn delete_outside(d: &Path) {
    std::fs::remove_file(d.join("store/srv-d.json")).expect("stored object");
}

pub fn blocks_drift_refresh_only() -> Vec<Step> {
    vec![
        step(STORED),
        Step::same(Act::PlanOnly(&["-refresh-only"]))
            .outside(change_outside)
            .exits(2),
        Step::same(Act::Plan(&[])),
    ]
}

pub fn blocks_drift_deleted() -> Vec<Step> {
    vec![
        step(STORED),
        Step::same(Act::PlanOnly(&["-refresh-only"]))
            .outside(delete_outside)
            .exits(2),
    ]
}

/// Nested blocks of the provider block reach ConfigureProvider: the
/// resource records the configuration it was planned with, so both tools'
/// states hold what the provider received.
pub fn provider_nested_blocks() -> Vec<Step> {
    let tf = |role: &str| {
        format!(
            r#"provider "blocks" {{
  region      = "eu"
  record_file = "configured.json"
  features {{
    verbose = true
  }}
  assume_role {{
    role_arn     = "{role}"
    session_name = "terrane"
  }}
  default_tags {{
    tags = {{ team = "infra" }}
  }}
  endpoint {{
    service = "s3"
    url     = "http://s3.local"
  }}
  endpoint {{
    service = "iam"
    url     = "http://iam.local"
  }}
  allowed_account {{ id = "111" }}
  allowed_account {{ id = "222" }}
}}
resource "blocks_server" "s" {{ name = "p" }}"#
        )
    };
    vec![
        step(&tf("arn:role/one")),
        step(&tf("arn:role/two")),
        Step::same(Act::PlanOnly(&[])),
    ]
}

pub fn provider_dynamic_blocks() -> Vec<Step> {
    let tf = |services: &str| {
        format!(
            r#"locals {{
  services = {services}
}}
provider "blocks" {{
  features {{}}
  dynamic "endpoint" {{
    for_each = local.services
    content {{
      service = endpoint.key
      url     = "http://${{endpoint.value}}"
    }}
  }}
}}
resource "blocks_server" "s" {{ name = "dyn" }}"#
        )
    };
    vec![
        step(&tf(r#"{ s3 = "s3.local", sts = "sts.local" }"#)),
        step(&tf(r#"{ s3 = "s3.other" }"#)),
    ]
}

pub fn provider_alias() -> Vec<Step> {
    vec![step(
        r#"provider "blocks" {
  features {}
  region = "default"
}
provider "blocks" {
  alias  = "west"
  region = "west"
  features {}
  assume_role { role_arn = "arn:west" }
}
resource "blocks_server" "a" { name = "a" }
resource "blocks_server" "b" {
  provider = blocks.west
  name     = "b"
}"#,
    )]
}

pub fn provider_passed_to_module() -> Vec<Step> {
    let child = module_file(
        r#"resource "blocks_server" "c" { name = "child" }
output "seen" { value = blocks_server.c.provider_config }"#,
    );
    vec![
        step(
            r#"provider "blocks" {
  features {}
  region = "default"
}
provider "blocks" {
  alias  = "west"
  region = "west"
  features {}
}
module "m" {
  source    = "./m"
  providers = { blocks = blocks.west }
}
module "inherits" {
  source = "./m"
}
output "seen" { value = module.m.seen }"#,
        )
        .file("m/main.tf", &child),
        // Destroy configures each module's provider configuration too.
        Step::same(Act::Destroy),
    ]
}

pub fn provider_in_child_module() -> Vec<Step> {
    let child = |region: &str| {
        module_file(&format!(
            r#"variable "role" {{}}
provider "blocks" {{
  region = "{region}"
  features {{}}
  assume_role {{ role_arn = var.role }}
}}
resource "blocks_server" "c" {{ name = "own" }}"#
        ))
    };
    vec![
        step(
            r#"module "c" {
  source = "./c"
  role   = "arn:child"
}"#,
        )
        .file("c/main.tf", &child("child")),
        step(
            r#"module "c" {
  source = "./c"
  role   = "arn:child"
}"#,
        )
        .file("c/main.tf", &child("moved")),
        Step::same(Act::Destroy),
    ]
}

/// `features` is required: leaving it out fails the plan at the
/// provider block, under both tools.
pub fn provider_required_block_missing() -> Vec<Step> {
    vec![step(
        r#"provider "blocks" {
  region = "eu"
}
resource "blocks_server" "s" { name = "x" }"#,
    )
    .exits(1)]
}

pub fn provider_block_rejected() -> Vec<Step> {
    vec![step(
        r#"provider "blocks" {
  features {}
  no_such_block {
    x = 1
  }
}
resource "blocks_server" "s" { name = "x" }"#,
    )
    .exits(1)]
}

pub fn provider_assume_role_missing_argument() -> Vec<Step> {
    vec![step(
        r#"provider "blocks" {
  features {}
  assume_role {
    session_name = "no role"
  }
}
resource "blocks_server" "s" { name = "x" }"#,
    )
    .exits(1)]
}
