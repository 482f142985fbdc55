//! Deposed objects: a create_before_destroy replacement whose destroy of
//! the old object fails leaves it deposed; later runs destroy it. The kv
//! provider fails deletes while the file `kv-fail-delete` exists.

use crate::harness::{step, Act, Step};
use std::path::Path;

fn cbd(key: &str) -> String {
    format!(
        r#"resource "kv_item" "c" {{
  key = "{key}"
  lifecycle {{
    create_before_destroy = true
  }}
}}
resource "terraform_data" "after" {{ input = kv_item.c.id }}"#
    )
}

fn fail_deletes(d: &Path) {
    std::fs::write(d.join("kv-fail-delete"), "").unwrap();
}

fn allow_deletes(d: &Path) {
    std::fs::remove_file(d.join("kv-fail-delete")).unwrap();
}

/// The old object stays deposed, a plan shows its destroy, and the next
/// apply (deletes allowed again) removes it.
pub fn deposed_destroy_fails() -> Vec<Step> {
    vec![
        step(&cbd("a")).exits(0),
        step(&cbd("b")).outside(fail_deletes).exits(1),
        Step::same(Act::PlanOnly(&[])).exits(2),
        Step::same(Act::Plan(&[])).outside(allow_deletes).exits(0),
        Step::same(Act::PlanOnly(&[])).exits(0),
    ]
}

/// A deposed object whose destroy fails again stays deposed.
pub fn deposed_destroy_fails_twice() -> Vec<Step> {
    vec![
        step(&cbd("a")).exits(0),
        step(&cbd("b")).outside(fail_deletes).exits(1),
        Step::same(Act::Apply(&[])).exits(1),
        Step::same(Act::Apply(&[])).outside(allow_deletes).exits(0),
    ]
}

/// `destroy` removes the current and the deposed object.
pub fn deposed_then_destroy_command() -> Vec<Step> {
    vec![
        step(&cbd("a")).exits(0),
        step(&cbd("b")).outside(fail_deletes).exits(1),
        Step::same(Act::Destroy).outside(allow_deletes).exits(0),
    ]
}

/// A replacement planned while an object is deposed: the new plan
/// replaces the current object and destroys the deposed one.
pub fn deposed_then_replaced_again() -> Vec<Step> {
    vec![
        step(&cbd("a")).exits(0),
        step(&cbd("b")).outside(fail_deletes).exits(1),
        step(&cbd("c")).outside(allow_deletes).exits(0),
    ]
}
