//! Configurations both tools must refuse, and where: dependency cycles, bad
//! references, unknown count/for_each, variable validation, pre- and
//! postconditions. Each step pins Terraform's exit code.

use crate::harness::{step, Act, Step};

/// A valid first step: `init` succeeds on it in both tools (terrane's
/// init refuses a configuration with a cycle, Terraform's does not), and
/// the error steps after it must leave its state alone.
fn first() -> Step {
    step(r#"resource "kv_item" "first" { key = "first" }"#).exits(0)
}

pub fn error_dependency_cycle() -> Vec<Step> {
    vec![
        first(),
        step(
            r#"resource "terraform_data" "a" { input = terraform_data.b.output }
resource "terraform_data" "b" { input = terraform_data.a.output }"#,
        )
        .exits(1),
    ]
}

pub fn error_cycle_through_locals() -> Vec<Step> {
    vec![
        first(),
        step(
            r#"locals {
  x = kv_item.k.id
}
resource "kv_item" "k" {
  key   = "k"
  value = local.x
}"#,
        )
        .exits(1),
    ]
}

pub fn error_undeclared_resource() -> Vec<Step> {
    vec![
        first(),
        step(r#"resource "terraform_data" "d" { input = kv_item.missing.id }"#).exits(1),
    ]
}

pub fn error_unsupported_attribute() -> Vec<Step> {
    vec![step(
        r#"resource "kv_item" "a" { key = "a" }
resource "terraform_data" "d" { input = kv_item.a.no_such_attribute }"#,
    )
    .exits(1)]
}

pub fn error_undeclared_variable() -> Vec<Step> {
    vec![
        first(),
        step(r#"resource "terraform_data" "d" { input = var.not_declared }"#).exits(1),
    ]
}

/// A good first step, then a bad reference: the state from step 1 stays.
pub fn error_bad_reference_keeps_state() -> Vec<Step> {
    vec![
        step(r#"resource "kv_item" "a" { key = "a" }"#).exits(0),
        step(
            r#"resource "kv_item" "a" { key = "a" }
output "o" { value = kv_item.b.id }"#,
        )
        .exits(1),
    ]
}

pub fn error_unknown_count() -> Vec<Step> {
    vec![step(
        r#"resource "kv_item" "a" { key = "a" }
resource "terraform_data" "n" {
  count = kv_item.a.revision
  input = count.index
}"#,
    )
    .exits(1)]
}

pub fn error_unknown_for_each() -> Vec<Step> {
    vec![step(
        r#"resource "kv_item" "a" { key = "a" }
resource "terraform_data" "n" {
  for_each = toset([kv_item.a.id])
  input    = each.key
}"#,
    )
    .exits(1)]
}

/// Known once the first step has applied, the same count plans fine.
pub fn error_unknown_count_then_targeted() -> Vec<Step> {
    let tf = r#"resource "kv_item" "a" { key = "a" }
resource "terraform_data" "n" {
  count = kv_item.a.revision
  input = count.index
}"#;
    vec![
        step(tf).act(Act::Plan(&["-target=kv_item.a"])).exits(0),
        step(tf).exits(0),
    ]
}

const VALIDATED: &str = r#"variable "size" {
  type = number
  validation {
    condition     = var.size > 0 && var.size < 10
    error_message = "The size must be between 1 and 9."
  }
}
resource "terraform_data" "d" { input = var.size }"#;

pub fn error_variable_validation() -> Vec<Step> {
    vec![
        step(VALIDATED).act(Act::Plan(&["-var=size=42"])).exits(1),
        step(VALIDATED).act(Act::Plan(&["-var=size=3"])).exits(0),
    ]
}

pub fn error_variable_type() -> Vec<Step> {
    vec![step(VALIDATED).act(Act::Plan(&["-var=size=big"])).exits(1)]
}

pub fn error_precondition_at_plan() -> Vec<Step> {
    let tf = |v: &str| {
        format!(
            r#"variable "v" {{ default = "{v}" }}
resource "kv_item" "p" {{
  key   = "p"
  value = var.v
  lifecycle {{
    precondition {{
      condition     = length(var.v) > 3
      error_message = "The value is too short."
    }}
  }}
}}"#
        )
    };
    vec![step(&tf("long enough")).exits(0), step(&tf("no")).exits(1)]
}

pub fn error_postcondition_at_apply() -> Vec<Step> {
    vec![step(
        r#"resource "kv_item" "p" {
  key = "p"
  lifecycle {
    postcondition {
      condition     = self.revision > 1
      error_message = "The revision must be above 1."
    }
  }
}
resource "terraform_data" "after" { input = kv_item.p.id }"#,
    )
    .exits(1)]
}

pub fn error_output_precondition() -> Vec<Step> {
    vec![step(
        r#"resource "kv_item" "o" { key = "o" }
output "id" {
  value = kv_item.o.id
  precondition {
    condition     = kv_item.o.id == "wrong"
    error_message = "The id is not the expected one."
  }
}"#,
    )
    .exits(1)]
}
