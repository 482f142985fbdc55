//! Workspaces through TF_WORKSPACE (terrane has no `workspace` command):
//! each workspace keeps its own state, and `terraform.workspace` names it.

use crate::harness::{step, Act, Step};

const NAMED: &str = r#"resource "terraform_data" "d" { input = "in-${terraform.workspace}" }
resource "kv_item" "k" { key = terraform.workspace }
output "workspace" { value = terraform.workspace }"#;

pub fn workspace_env_separate_state() -> Vec<Step> {
    vec![
        step(NAMED).exits(0),
        Step::same(Act::Plan(&[]))
            .env("TF_WORKSPACE", "staging")
            .exits(0),
        Step::same(Act::PlanOnly(&[])).exits(0),
        Step::same(Act::PlanOnly(&[]))
            .env("TF_WORKSPACE", "staging")
            .exits(0),
    ]
}

pub fn workspace_env_destroy_leaves_default() -> Vec<Step> {
    vec![
        step(NAMED).exits(0),
        Step::same(Act::Apply(&[]))
            .env("TF_WORKSPACE", "prod")
            .exits(0),
        Step::same(Act::Destroy)
            .env("TF_WORKSPACE", "prod")
            .exits(0),
        Step::same(Act::PlanOnly(&[])).exits(0),
    ]
}

pub fn workspace_name_selects_count() -> Vec<Step> {
    let tf = r#"resource "terraform_data" "n" {
  count = terraform.workspace == "default" ? 1 : 3
  input = "${terraform.workspace}-${count.index}"
}"#;
    vec![
        step(tf).exits(0),
        Step::same(Act::Plan(&[]))
            .env("TF_WORKSPACE", "wide")
            .exits(0),
        Step::same(Act::PlanOnly(&[])).exits(0),
    ]
}
