//! Create, no-op, in-place update and replacement (both orders).

use crate::harness::{step, Act, Step};

pub fn create_all_providers() -> Vec<Step> {
    vec![step(
        r#"
resource "random_pet" "p" {}
resource "terraform_data" "d" { input = "x" }
resource "kv_item" "a" {
  key   = "a"
  value = "v1"
}
resource "local_file" "f" {
  filename = "${path.module}/out.txt"
  content  = "hello"
}
"#,
    )]
}

pub fn create_random_family() -> Vec<Step> {
    vec![step(
        r#"
resource "random_id" "i" { byte_length = 6 }
resource "random_string" "s" {
  length  = 12
  special = false
}
resource "random_integer" "n" {
  min = 1
  max = 100
}
resource "random_password" "pw" { length = 16 }
resource "random_uuid" "u" {}
resource "random_string" "lower" {
  length  = 48
  upper   = false
  special = false
}
"#,
    )]
}

pub fn second_plan_is_noop() -> Vec<Step> {
    let tf = r#"
resource "random_pet" "p" { length = 3 }
resource "terraform_data" "d" { input = random_pet.p.id }
resource "kv_item" "a" {
  key   = "a"
  value = "v-${random_pet.p.id}"
}
resource "local_file" "f" {
  filename = "${path.module}/pet.txt"
  content  = random_pet.p.id
}
"#;
    vec![step(tf), step(tf), Step::same(Act::PlanOnly(&[]))]
}

pub fn update_terraform_data_input() -> Vec<Step> {
    vec![
        step(r#"resource "terraform_data" "d" { input = { name = "a", ports = [80] } }"#),
        step(r#"resource "terraform_data" "d" { input = { name = "b", ports = [80, 443] } }"#),
        step(r#"resource "terraform_data" "d" { input = null }"#),
    ]
}

pub fn update_kv_value() -> Vec<Step> {
    vec![
        step(r#"resource "kv_item" "a" { key = "a" }"#),
        step(
            r#"resource "kv_item" "a" {
  key   = "a"
  value = "one"
}"#,
        ),
        step(
            r#"resource "kv_item" "a" {
  key   = "a"
  value = "two"
}"#,
        ),
    ]
}

pub fn replace_local_file_content() -> Vec<Step> {
    let f = |c: &str| {
        format!(
            r#"resource "local_file" "f" {{
  filename        = "${{path.module}}/f.txt"
  content         = "{c}"
  file_permission = "0644"
}}"#
        )
    };
    vec![step(&f("one")), step(&f("two"))]
}

pub fn replace_kv_key() -> Vec<Step> {
    vec![
        step(
            r#"resource "kv_item" "a" {
  key   = "a"
  value = "v"
}"#,
        ),
        step(
            r#"resource "kv_item" "a" {
  key   = "b"
  value = "v"
}"#,
        ),
    ]
}

pub fn replace_create_before_destroy() -> Vec<Step> {
    let tf = |k: &str| {
        format!(
            r#"resource "random_pet" "a" {{
  keepers = {{ k = "{k}" }}
  lifecycle {{
    create_before_destroy = true
  }}
}}
resource "terraform_data" "t" {{
  triggers_replace = "{k}"
  lifecycle {{
    create_before_destroy = true
  }}
}}"#
        )
    };
    vec![step(&tf("a")), step(&tf("b"))]
}

pub fn replace_triggers_replace() -> Vec<Step> {
    vec![
        step(
            r#"resource "terraform_data" "t" {
  input            = "same"
  triggers_replace = ["a"]
}"#,
        ),
        step(
            r#"resource "terraform_data" "t" {
  input            = "same"
  triggers_replace = ["a", "b"]
}"#,
        ),
    ]
}

pub fn replace_random_keepers() -> Vec<Step> {
    vec![
        step(r#"resource "random_pet" "p" { keepers = { v = "1" } }"#),
        step(r#"resource "random_pet" "p" { keepers = { v = "2" } }"#),
        step(
            r#"resource "random_pet" "p" {
  keepers = { v = "2" }
  length  = 4
}"#,
        ),
    ]
}

pub fn replace_dependent_update() -> Vec<Step> {
    let tf = |k: &str| {
        format!(
            r#"resource "kv_item" "a" {{ key = "{k}" }}
resource "terraform_data" "d" {{ input = kv_item.a.id }}
resource "kv_item" "b" {{
  key   = "b"
  value = "from ${{kv_item.a.id}}"
}}"#
        )
    };
    vec![step(&tf("a")), step(&tf("z"))]
}
