//! `removed` blocks (forget or destroy) and `check` blocks (passing,
//! failing, with a scoped data source).

use crate::harness::{step, Act, Step};

const TWO: &str = r#"resource "kv_item" "keep" { key = "keep" }
resource "kv_item" "old" { key = "old" }"#;

pub fn removed_destroy_false() -> Vec<Step> {
    vec![
        step(TWO).exits(0),
        step(
            r#"resource "kv_item" "keep" { key = "keep" }
removed {
  from = kv_item.old
  lifecycle {
    destroy = false
  }
}"#,
        )
        .exits(0),
        Step::same(Act::PlanOnly(&[])).exits(0),
    ]
}

pub fn removed_destroy_true() -> Vec<Step> {
    vec![
        step(TWO).exits(0),
        step(
            r#"resource "kv_item" "keep" { key = "keep" }
removed {
  from = kv_item.old
  lifecycle {
    destroy = true
  }
}"#,
        )
        .exits(0),
        Step::same(Act::PlanOnly(&[])).exits(0),
    ]
}

pub fn removed_counted_resource() -> Vec<Step> {
    vec![
        step(
            r#"resource "terraform_data" "n" {
  count = 2
  input = count.index
}"#,
        )
        .exits(0),
        step(
            r#"removed {
  from = terraform_data.n
  lifecycle {
    destroy = false
  }
}"#,
        )
        .exits(0),
    ]
}

/// A `removed` block for a resource still in the configuration is an error.
pub fn removed_still_configured() -> Vec<Step> {
    vec![
        step(TWO).exits(0),
        step(&format!(
            r#"{TWO}
removed {{
  from = kv_item.old
  lifecycle {{
    destroy = false
  }}
}}"#
        ))
        .exits(1),
    ]
}

pub fn check_passing() -> Vec<Step> {
    let tf = r#"resource "kv_item" "c" {
  key   = "c"
  value = "fine"
}
check "value_is_fine" {
  assert {
    condition     = kv_item.c.value == "fine"
    error_message = "The value is not fine."
  }
}"#;
    vec![step(tf).exits(0), step(tf).exits(0)]
}

pub fn check_failing() -> Vec<Step> {
    let tf = |v: &str| {
        format!(
            r#"resource "kv_item" "c" {{
  key   = "c"
  value = "{v}"
}}
check "value_is_fine" {{
  assert {{
    condition     = kv_item.c.value == "fine"
    error_message = "The value is not fine."
  }}
}}"#
        )
    };
    vec![
        step(&tf("bad")).exits(0),
        Step::same(Act::PlanOnly(&[])).exits(0),
        step(&tf("fine")).exits(0),
    ]
}

pub fn check_scoped_data_source() -> Vec<Step> {
    let tf = |k: &str| {
        format!(
            r#"resource "kv_item" "c" {{ key = "c" }}
check "lookup" {{
  data "kv_lookup" "l" {{
    key = "{k}"
  }}
  assert {{
    condition     = data.kv_lookup.l.value == "value-of-c"
    error_message = "The lookup found ${{data.kv_lookup.l.value}}."
  }}
}}"#
        )
    };
    vec![
        step(&tf("c")).exits(0),
        step(&tf("other")).exits(0),
        Step::same(Act::PlanOnly(&[])).exits(0),
    ]
}

/// A check's data source that depends on a resource being created is read
/// at apply.
pub fn check_scoped_data_deferred() -> Vec<Step> {
    let tf = r#"resource "kv_item" "c" { key = "c" }
check "lookup" {
  data "kv_lookup" "l" {
    key = kv_item.c.id
  }
  assert {
    condition     = data.kv_lookup.l.value == "value-of-kv-c"
    error_message = "The lookup found ${data.kv_lookup.l.value}."
  }
}"#;
    vec![step(tf).exits(0), step(tf).exits(0)]
}
