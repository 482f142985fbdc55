//! Root variable values from files and the environment: terraform.tfvars,
//! *.auto.tfvars (in name order), -var-file, and their precedence with
//! -var and TF_VAR_.

use crate::harness::{step, Act, Step};

const VARS: &str = r#"variable "a" {
  type    = string
  default = "default-a"
}
variable "b" {
  type    = string
  default = "default-b"
}
variable "n" {
  type    = number
  default = 0
}
variable "tags" {
  type    = map(string)
  default = {}
}
resource "terraform_data" "d" { input = "${var.a}/${var.b}/${var.n}" }
output "a" { value = var.a }
output "b" { value = var.b }
output "n" { value = var.n }
output "tags" { value = var.tags }"#;

pub fn tfvars_terraform_tfvars() -> Vec<Step> {
    vec![
        step(VARS)
            .file(
                "terraform.tfvars",
                "a    = \"from-tfvars\"\nn    = 7\ntags = { team = \"core\" }\n",
            )
            .exits(0),
        Step::same(Act::PlanOnly(&[])).exits(0),
    ]
}

pub fn tfvars_auto_in_name_order() -> Vec<Step> {
    vec![step(VARS)
        .file(
            "terraform.tfvars",
            "a = \"from-tfvars\"\nb = \"from-tfvars\"\n",
        )
        .file(
            "a.auto.tfvars",
            "a = \"from-a-auto\"\nb = \"from-a-auto\"\n",
        )
        .file("b.auto.tfvars", "b = \"from-b-auto\"\n")
        .exits(0)]
}

pub fn tfvars_json_files() -> Vec<Step> {
    vec![step(VARS)
        .file("terraform.tfvars.json", r#"{"a": "from-json", "n": 3}"#)
        .file("z.auto.tfvars.json", r#"{"tags": {"env": "json"}}"#)
        .exits(0)]
}

pub fn tfvars_var_file_flag() -> Vec<Step> {
    vec![
        step(VARS)
            .file("terraform.tfvars", "a = \"from-tfvars\"\n")
            .file("extra.tfvars", "a = \"from-var-file\"\nn = 12\n")
            .act(Act::Plan(&["-var-file=extra.tfvars"]))
            .exits(0),
        Step::same(Act::PlanOnly(&["-var-file=extra.tfvars"])).exits(0),
        Step::same(Act::PlanOnly(&[])).exits(2),
    ]
}

/// Later wins: TF_VAR_ < terraform.tfvars < *.auto.tfvars < -var-file and
/// -var in command-line order.
pub fn tfvars_precedence() -> Vec<Step> {
    vec![
        step(VARS)
            .file("terraform.tfvars", "b = \"from-tfvars\"\n")
            .file("x.auto.tfvars", "n = 5\n")
            .file("one.tfvars", "a = \"from-var-file\"\nn = 6\n")
            .env("TF_VAR_a", "from-env")
            .env("TF_VAR_b", "from-env")
            .env("TF_VAR_n", "4")
            .act(Act::Plan(&["-var=a=from-var", "-var-file=one.tfvars"]))
            .exits(0),
        Step::same(Act::PlanOnly(&["-var-file=one.tfvars", "-var=a=from-var"]))
            .env("TF_VAR_tags", "{ from = \"env\" }")
            .exits(2),
    ]
}

pub fn tfvars_env_only() -> Vec<Step> {
    vec![step(VARS)
        .env("TF_VAR_a", "from-env")
        .env("TF_VAR_n", "9")
        .env("TF_VAR_tags", "{ k = \"v\" }")
        .exits(0)]
}

/// A file value for a variable the configuration does not declare is a
/// warning; a -var for one is an error.
pub fn tfvars_undeclared() -> Vec<Step> {
    vec![
        step(VARS)
            .file("terraform.tfvars", "a = \"x\"\nnot_declared = 1\n")
            .exits(0),
        Step::same(Act::PlanOnly(&["-var=also_not_declared=1"])).exits(1),
    ]
}

pub fn tfvars_bad_value_type() -> Vec<Step> {
    vec![step(VARS)
        .file("terraform.tfvars", "n = \"not a number\"\n")
        .exits(1)]
}
