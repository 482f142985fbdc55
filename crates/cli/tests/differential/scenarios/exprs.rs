//! Unknown values through expressions, planning flags and outputs.

use crate::harness::{step, Act, Step};

pub fn unknown_in_template() -> Vec<Step> {
    vec![step(
        r#"resource "kv_item" "a" { key = "a" }
resource "terraform_data" "t" { input = "id is ${kv_item.a.id}, rev ${kv_item.a.revision}" }
resource "local_file" "f" {
  filename = "${path.module}/t.txt"
  content  = "key=${kv_item.a.key} id=${kv_item.a.id}"
}"#,
    )]
}

pub fn unknown_in_conditional() -> Vec<Step> {
    vec![step(
        r#"resource "kv_item" "a" { key = "a" }
resource "terraform_data" "c" {
  input = {
    unknown_cond = kv_item.a.revision > 0 ? "pos" : "neg"
    known_cond   = kv_item.a.key == "a" ? "yes" : kv_item.a.id
    unknown_arm  = true ? kv_item.a.id : "never"
  }
}"#,
    )]
}

pub fn unknown_in_for_expression() -> Vec<Step> {
    vec![step(
        r#"resource "kv_item" "m" {
  for_each = toset(["x", "y"])
  key      = each.key
}
resource "terraform_data" "f" {
  input = {
    ids  = { for k, v in kv_item.m : k => v.id }
    keys = [for k, v in kv_item.m : upper(k)]
    len  = length(kv_item.m)
  }
}"#,
    )]
}

pub fn unknown_update_propagates() -> Vec<Step> {
    let tf = |v: &str| {
        format!(
            r#"resource "kv_item" "a" {{
  key   = "a"
  value = "{v}"
}}
resource "terraform_data" "rev" {{ input = kv_item.a.revision }}
resource "kv_item" "b" {{
  key   = "b"
  value = "rev ${{kv_item.a.revision}}"
}}"#
        )
    };
    vec![step(&tf("1")), step(&tf("2"))]
}

pub fn unknown_functions() -> Vec<Step> {
    vec![step(
        r#"resource "kv_item" "a" { key = "a" }
resource "terraform_data" "fn" {
  input = {
    joined  = join("-", [kv_item.a.id, "x"])
    coal    = coalesce(kv_item.a.value, "dflt")
    tostr   = tostring(kv_item.a.revision)
    jsonish = jsonencode({ id = kv_item.a.id })
  }
}"#,
    )]
}

const TWO: &str = r#"resource "terraform_data" "a" { input = "a" }
resource "terraform_data" "b" { input = terraform_data.a.output }
resource "kv_item" "c" { key = "c" }"#;

pub fn replace_flag() -> Vec<Step> {
    vec![
        step(TWO),
        Step::same(Act::Plan(&["-replace=terraform_data.a"])),
        Step::same(Act::Plan(&["-replace=kv_item.c"])),
    ]
}

pub fn target_flag() -> Vec<Step> {
    let tf = |v: &str| {
        format!(
            r#"resource "terraform_data" "a" {{ input = "{v}" }}
resource "terraform_data" "b" {{ input = terraform_data.a.output }}
resource "kv_item" "c" {{
  key   = "c"
  value = "{v}"
}}"#
        )
    };
    vec![
        step(&tf("1")).act(Act::Plan(&["-target=terraform_data.a"])),
        step(&tf("1")).act(Act::Plan(&["-target=terraform_data.b"])),
        step(&tf("2")).act(Act::Plan(&["-target=kv_item.c"])),
        Step::same(Act::Plan(&[])),
    ]
}

pub fn apply_auto_approve() -> Vec<Step> {
    vec![
        step(TWO).act(Act::Apply(&[])),
        Step::same(Act::PlanOnly(&[])),
    ]
}

pub fn variables() -> Vec<Step> {
    let tf = r#"variable "name" {
  type    = string
  default = "dflt"
}
variable "n" {
  type    = number
  default = 1
}
resource "terraform_data" "v" {
  count = var.n
  input = "${var.name}-${count.index}"
}"#;
    vec![
        step(tf),
        step(tf).act(Act::Plan(&["-var", "name=given", "-var", "n=2"])),
    ]
}

pub fn outputs_sensitive() -> Vec<Step> {
    let tf = |v: &str| {
        format!(
            r#"resource "kv_item" "s" {{
  key   = "s"
  value = "{v}"
}}
resource "random_password" "pw" {{ length = 10 }}
output "plain" {{ value = kv_item.s.value }}
output "secret" {{
  value     = kv_item.s.value
  sensitive = true
}}
output "pw" {{
  value     = random_password.pw.result
  sensitive = true
}}
output "computed" {{ value = kv_item.s.revision }}
output "literal" {{ value = {{ a = [1, 2], b = "x" }} }}"#
        )
    };
    vec![step(&tf("one")), step(&tf("two"))]
}

pub fn outputs_removed_and_added() -> Vec<Step> {
    vec![
        step(
            r#"resource "terraform_data" "d" { input = "x" }
output "old" { value = terraform_data.d.output }"#,
        ),
        step(
            r#"resource "terraform_data" "d" { input = "x" }
output "new" { value = terraform_data.d.id }"#,
        ),
    ]
}

pub fn sensitive_values_in_resources() -> Vec<Step> {
    vec![step(
        r#"variable "secret" {
  type      = string
  default   = "hush"
  sensitive = true
}
resource "terraform_data" "s" { input = var.secret }
resource "local_sensitive_file" "f" {
  filename = "${path.module}/s.txt"
  content  = "sensitive"
}"#,
    )]
}

pub fn depends_on_chain() -> Vec<Step> {
    vec![step(
        r#"resource "kv_item" "first" { key = "first" }
resource "terraform_data" "second" {
  input      = "x"
  depends_on = [kv_item.first]
}
resource "kv_item" "third" {
  key        = "third"
  depends_on = [terraform_data.second]
}"#,
    )]
}
