//! The differences of issue 22 point 8 that the suite used to miss, each
//! found by a newcomer against Terraform 1.15.

use crate::harness::{step, Act, Step};
use std::path::Path;

/// A plain replacement destroys one object: apply must say "1 destroyed"
/// (terrane counted the replaced object twice).
pub fn point8_replace_reports_one_destroyed() -> Vec<Step> {
    let tf = r#"variable "t" { type = string }
resource "terraform_data" "d" { triggers_replace = var.t }"#;
    vec![
        step(tf).act(Act::Plan(&["-var", "t=1"])),
        step(tf).act(Act::Plan(&["-var", "t=2"])),
        step(tf).act(Act::Apply(&["-var", "t=3"])),
    ]
}

/// A managed file deleted outside. A normal plan whose changes do not
/// depend on it has no note (Terraform shows only drift that its
/// relevant_attributes name); a refresh-only plan notes that the object
/// "has been deleted". The normal plan whose changes do depend on it is
/// drift_file_deleted, a known gap (main.rs).
pub fn point8_drift_note_for_deleted_file() -> Vec<Step> {
    let tf = r#"resource "local_file" "f" {
  filename = "${path.module}/gone.txt"
  content  = "will be deleted outside"
}"#;
    fn delete(d: &Path) {
        std::fs::remove_file(d.join("gone.txt")).unwrap();
    }
    vec![
        step(tf),
        Step::same(Act::PlanOnly(&[])).outside(delete).exits(2),
        Step::same(Act::PlanOnly(&["-refresh-only"])).exits(2),
    ]
}

/// A data source read deferred to apply (it depends on a resource that
/// changes) shows its sensitive attribute as `(sensitive value)`.
pub fn point8_deferred_data_sensitive() -> Vec<Step> {
    let tf = |c: &str| {
        format!(
            r#"resource "local_file" "src" {{
  filename = "${{path.module}}/secret.txt"
  content  = "{c}"
}}
data "local_sensitive_file" "read" {{
  filename   = local_file.src.filename
  depends_on = [local_file.src]
}}
resource "terraform_data" "copy" {{ input = data.local_sensitive_file.read.content }}"#
        )
    };
    vec![step(&tf("one")), step(&tf("two"))]
}
