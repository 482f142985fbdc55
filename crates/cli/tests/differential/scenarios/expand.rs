//! count, for_each and module instances growing and shrinking.

use crate::harness::{step, Step, PROVIDERS};

fn counted(n: usize) -> String {
    format!(
        r#"resource "terraform_data" "c" {{
  count = {n}
  input = "item-${{count.index}}"
}}
resource "kv_item" "k" {{
  count = {n}
  key   = "k${{count.index}}"
  value = terraform_data.c[count.index].input
}}"#
    )
}

pub fn count_grow() -> Vec<Step> {
    vec![step(&counted(1)), step(&counted(3))]
}

pub fn count_shrink() -> Vec<Step> {
    vec![step(&counted(3)), step(&counted(1)), step(&counted(0))]
}

pub fn count_to_single_instance() -> Vec<Step> {
    vec![
        step(
            r#"resource "terraform_data" "d" {
  count = 1
  input = "x"
}"#,
        ),
        step(r#"resource "terraform_data" "d" { input = "x" }"#),
    ]
}

fn each(keys: &str) -> String {
    format!(
        r#"resource "kv_item" "e" {{
  for_each = toset([{keys}])
  key      = each.key
  value    = "v-${{each.value}}"
}}
resource "terraform_data" "e" {{
  for_each = kv_item.e
  input    = each.value.value
}}"#
    )
}

pub fn for_each_grow() -> Vec<Step> {
    vec![step(&each(r#""a""#)), step(&each(r#""a", "b", "c""#))]
}

pub fn for_each_shrink() -> Vec<Step> {
    vec![
        step(&each(r#""a", "b", "c""#)),
        step(&each(r#""b""#)),
        step(&each("")),
    ]
}

pub fn for_each_map_values() -> Vec<Step> {
    let m = |v: &str| {
        format!(
            r#"locals {{
  items = {{ x = "1", y = "{v}" }}
}}
resource "terraform_data" "m" {{
  for_each = local.items
  input    = "${{each.key}}=${{each.value}}"
}}"#
        )
    };
    vec![step(&m("2")), step(&m("3"))]
}

const MODULE_BODY: &str = r#"variable "name" { type = string }
resource "terraform_data" "d" { input = var.name }
resource "kv_item" "k" {
  key   = var.name
  value = terraform_data.d.output
}
output "id" { value = kv_item.k.id }
"#;

/// The child module: its own provider requirements, then the body.
fn module() -> String {
    format!("{PROVIDERS}{MODULE_BODY}")
}

pub fn module_single() -> Vec<Step> {
    vec![
        step(
            r#"module "m" {
  source = "./mod"
  name   = "one"
}
output "from_module" { value = module.m.id }"#,
        )
        .file("mod/main.tf", &module()),
        step(
            r#"module "m" {
  source = "./mod"
  name   = "two"
}
output "from_module" { value = module.m.id }"#,
        ),
    ]
}

pub fn module_count() -> Vec<Step> {
    let tf = |n: usize| {
        format!(
            r#"module "m" {{
  source = "./mod"
  count  = {n}
  name   = "c${{count.index}}"
}}
output "ids" {{ value = module.m[*].id }}"#
        )
    };
    vec![
        step(&tf(1)).file("mod/main.tf", &module()),
        step(&tf(3)),
        step(&tf(2)),
    ]
}

pub fn module_for_each() -> Vec<Step> {
    let tf = |keys: &str| {
        format!(
            r#"module "m" {{
  source   = "./mod"
  for_each = toset([{keys}])
  name     = each.key
}}
output "ids" {{ value = {{ for k, m in module.m : k => m.id }} }}"#
        )
    };
    vec![
        step(&tf(r#""a", "b""#)).file("mod/main.tf", &module()),
        step(&tf(r#""b", "c""#)),
    ]
}

pub fn nested_modules() -> Vec<Step> {
    vec![step(
        r#"module "outer" {
  source = "./outer"
}
output "inner" { value = module.outer.inner }"#,
    )
    .file(
        "outer/main.tf",
        r#"module "inner" {
  source = "../mod"
  name   = "nested"
}
output "inner" { value = module.inner.id }
"#,
    )
    .file("mod/main.tf", &module())]
}
