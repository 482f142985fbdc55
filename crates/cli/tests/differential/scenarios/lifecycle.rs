//! Data sources, drift, orphans, tainted objects, ignore_changes, moved,
//! import, destroy, replace_triggered_by, prevent_destroy.

use crate::harness::{step, Act, Step};
use std::path::Path;

pub fn data_known_at_plan() -> Vec<Step> {
    vec![step(
        r#"data "kv_lookup" "l" { key = "fixed" }
resource "terraform_data" "d" { input = data.kv_lookup.l.value }
output "looked_up" { value = data.kv_lookup.l.value }"#,
    )]
}

pub fn data_deferred_by_reference() -> Vec<Step> {
    let tf = r#"resource "kv_item" "a" { key = "a" }
data "kv_lookup" "l" { key = kv_item.a.id }
resource "terraform_data" "d" { input = data.kv_lookup.l.value }
output "looked_up" { value = data.kv_lookup.l.value }"#;
    vec![step(tf), step(tf)]
}

pub fn data_deferred_by_depends_on() -> Vec<Step> {
    let tf = r#"resource "local_file" "src" {
  filename = "${path.module}/src.txt"
  content  = "written by the resource"
}
data "local_file" "read" {
  filename   = "${path.module}/src.txt"
  depends_on = [local_file.src]
}
resource "terraform_data" "copy" { input = data.local_file.read.content }"#;
    vec![step(tf), step(tf)]
}

pub fn data_local_file_existing() -> Vec<Step> {
    vec![step(
        r#"data "local_file" "r" { filename = "${path.module}/given.txt" }
output "content" { value = data.local_file.r.content }"#,
    )
    .outside(|d: &Path| std::fs::write(d.join("given.txt"), "made outside").unwrap())]
}

const FILE: &str = r#"resource "local_file" "f" {
  filename = "${path.module}/managed.txt"
  content  = "managed content"
}
resource "terraform_data" "after" { input = local_file.f.id }"#;

fn edit(d: &Path) {
    std::fs::write(d.join("managed.txt"), "edited outside").unwrap();
}

fn delete(d: &Path) {
    std::fs::remove_file(d.join("managed.txt")).unwrap();
}

pub fn drift_file_edited() -> Vec<Step> {
    vec![step(FILE), Step::same(Act::Plan(&[])).outside(edit)]
}

pub fn drift_file_deleted() -> Vec<Step> {
    vec![step(FILE), Step::same(Act::Plan(&[])).outside(delete)]
}

pub fn drift_refresh_only() -> Vec<Step> {
    vec![
        step(FILE),
        Step::same(Act::Plan(&["-refresh-only"])).outside(delete),
        Step::same(Act::Plan(&[])),
    ]
}

pub fn drift_refresh_command() -> Vec<Step> {
    vec![
        step(FILE),
        Step::same(Act::Refresh).outside(delete),
        Step::same(Act::PlanOnly(&[])).exits(2),
    ]
}

pub fn drift_ignored_with_refresh_false() -> Vec<Step> {
    vec![
        step(FILE),
        Step::same(Act::PlanOnly(&["-refresh=false"])).outside(delete),
    ]
}

pub fn orphan_deleted() -> Vec<Step> {
    vec![
        step(
            r#"resource "kv_item" "keep" { key = "keep" }
resource "kv_item" "gone" { key = "gone" }
resource "terraform_data" "gone_too" { input = kv_item.gone.id }"#,
        ),
        step(r#"resource "kv_item" "keep" { key = "keep" }"#),
    ]
}

pub fn tainted_by_failed_create() -> Vec<Step> {
    let tf = |v: &str| {
        format!(
            r#"resource "kv_item" "t" {{
  key   = "t"
  value = "{v}"
}}
resource "terraform_data" "after" {{ input = kv_item.t.id }}"#
        )
    };
    vec![
        step(&tf("fail-on-create")).exits(1),
        step(&tf("fine")),
        Step::same(Act::PlanOnly(&[])),
    ]
}

pub fn tainted_cbd_replacement() -> Vec<Step> {
    let tf = |v: &str| {
        format!(
            r#"resource "kv_item" "t" {{
  key   = "t"
  value = "{v}"
  lifecycle {{
    create_before_destroy = true
  }}
}}"#
        )
    };
    vec![step(&tf("fail-on-create")).exits(1), step(&tf("fine"))]
}

pub fn ignore_changes_attribute() -> Vec<Step> {
    let tf = |input: &str, v: &str| {
        format!(
            r#"resource "terraform_data" "d" {{
  input = "{input}"
  lifecycle {{
    ignore_changes = [input]
  }}
}}
resource "kv_item" "k" {{
  key   = "k"
  value = "{v}"
  lifecycle {{
    ignore_changes = [value]
  }}
}}"#
        )
    };
    vec![step(&tf("a", "x")), step(&tf("b", "y"))]
}

pub fn ignore_changes_all() -> Vec<Step> {
    let tf = |v: &str| {
        format!(
            r#"resource "kv_item" "k" {{
  key   = "k"
  value = "{v}"
  lifecycle {{
    ignore_changes = all
  }}
}}"#
        )
    };
    vec![step(&tf("x")), step(&tf("y"))]
}

pub fn replace_triggered_by() -> Vec<Step> {
    let tf = |v: &str| {
        format!(
            r#"resource "kv_item" "src" {{
  key   = "src"
  value = "{v}"
}}
resource "terraform_data" "follower" {{
  input = "constant"
  lifecycle {{
    replace_triggered_by = [kv_item.src.value]
  }}
}}"#
        )
    };
    vec![step(&tf("1")), step(&tf("2")), step(&tf("2"))]
}

pub fn prevent_destroy_blocks_replacement() -> Vec<Step> {
    let tf = |k: &str| {
        format!(
            r#"resource "kv_item" "p" {{
  key = "{k}"
  lifecycle {{
    prevent_destroy = true
  }}
}}"#
        )
    };
    vec![step(&tf("a")), step(&tf("b")).exits(1)]
}

pub fn moved_rename() -> Vec<Step> {
    vec![
        step(r#"resource "terraform_data" "old" { input = "x" }"#),
        step(
            r#"resource "terraform_data" "new" { input = "x" }
moved {
  from = terraform_data.old
  to   = terraform_data.new
}"#,
        ),
    ]
}

pub fn moved_into_count() -> Vec<Step> {
    vec![
        step(r#"resource "kv_item" "a" { key = "a" }"#),
        step(
            r#"resource "kv_item" "b" {
  count = 2
  key   = count.index == 0 ? "a" : "b"
}
moved {
  from = kv_item.a
  to   = kv_item.b[0]
}"#,
        ),
    ]
}

pub fn import_cli() -> Vec<Step> {
    let tf = r#"resource "kv_item" "i" {
  key   = "imported"
  value = "wanted"
}"#;
    vec![
        step(tf).act(Act::Import("kv_item.i", "imported")),
        Step::same(Act::Plan(&[])),
    ]
}

pub fn import_cli_terraform_data() -> Vec<Step> {
    vec![
        step(r#"resource "terraform_data" "i" {}"#).act(Act::Import(
            "terraform_data.i",
            "4fcbd95f-0b4e-4b5c-9f43-4b1c6b0f8a21",
        )),
        Step::same(Act::Plan(&[])),
    ]
}

pub fn import_block() -> Vec<Step> {
    let tf = r#"import {
  to = kv_item.i
  id = "by-block"
}
resource "kv_item" "i" {
  key   = "by-block"
  value = "wanted"
}"#;
    vec![step(tf), step(tf)]
}

pub fn destroy_command() -> Vec<Step> {
    vec![
        step(
            r#"resource "kv_item" "a" { key = "a" }
resource "terraform_data" "b" { input = kv_item.a.id }
resource "random_pet" "p" {}
output "o" { value = terraform_data.b.output }"#,
        ),
        Step::same(Act::Destroy),
    ]
}

pub fn destroy_plan_file() -> Vec<Step> {
    vec![
        step(
            r#"module "m" {
  source = "./m"
}
resource "terraform_data" "root" { input = module.m.v }"#,
        )
        .file("m/main.tf", "resource \"terraform_data\" \"x\" { input = \"m\" }\noutput \"v\" { value = terraform_data.x.output }\n"),
        Step::same(Act::Plan(&["-destroy"])),
    ]
}

pub fn state_rm_then_plan() -> Vec<Step> {
    let tf = r#"resource "kv_item" "a" { key = "a" }
resource "kv_item" "b" { key = "b" }"#;
    vec![
        step(tf),
        Step::same(Act::StateRm("kv_item.b")),
        Step::same(Act::PlanOnly(&[])).exits(2),
    ]
}
