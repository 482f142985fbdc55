//! A provider behaving like Terraform's legacy SDK (the legacy fixture:
//! protocol 5 only, the legacy type-system flag, null for an empty list
//! block, an empty block for a null single block, null for ""): Terraform
//! and terrane must agree on its plans, states and plan text (issue 15
//! item 3).

use crate::harness::{step, Act, Step};

const BARE: &str = r#"resource "legacy_thing" "t" {
  name = "bare"
  note = ""
}"#;

pub fn legacy_create_then_noop() -> Vec<Step> {
    vec![step(BARE), Step::same(Act::Plan(&[]))]
}

const BLOCKS: &str = r#"resource "legacy_thing" "t" {
  name = "blocks"
  note = "n"
  rule {
    port = 80
  }
  rule {
    port = 443
  }
  timeouts {
    create = "5m"
  }
}"#;

const BLOCKS_REMOVED: &str = r#"resource "legacy_thing" "t" {
  name = "blocks"
  note = "n"
}"#;

pub fn legacy_blocks_added_and_removed() -> Vec<Step> {
    vec![
        step(BLOCKS),
        Step::same(Act::Plan(&[])),
        step(BLOCKS_REMOVED),
        Step::same(Act::Plan(&[])),
    ]
}

pub fn legacy_replace_and_destroy() -> Vec<Step> {
    vec![
        step(BARE),
        step(&BARE.replace("\"bare\"", "\"other\"")),
        Step::same(Act::Destroy),
    ]
}

pub fn legacy_import() -> Vec<Step> {
    vec![
        step(BARE.replace("  note = \"\"\n", "").as_str())
            .act(Act::Import("legacy_thing.t", "legacy-bare")),
        Step::same(Act::Plan(&[])),
    ]
}
