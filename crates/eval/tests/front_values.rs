//! Issue 14 items 1-4, the values: a module using the constructs the
//! front end now reads (multi-line expressions inside `for`, brackets and
//! interpolations, a key given twice, constant heredoc descriptions, the
//! legacy `list`/`map` variable types, override files) is applied by real
//! Terraform and evaluated by terrane; every output must have the same
//! type and value.

use std::collections::BTreeMap;
use terrane_eval::module::{evaluate_locals, input_variables, ModuleScope};
use terrane_eval::{default_ctx, eval_expr};
use terrane_value::typejson;

const MAIN: &str = r#"variable "names" {
  description = <<-EOT
    Names, one per line.
  EOT
  type    = list
  default = ["x", "y"]
}

variable "tags" {
  type    = map
  default = { a = "1" }
}

locals {
  item2_object_for = { for k in var.names : k => k == "x" ? "first" :
    "other" # a comment inside the for
  }
  item2_list_for = [for k in var.names : k == "x" ? upper(k) :
    k
  ]
  item2_interpolation = "n-${
    length(var.names) > 1 ? "many" :
    "one"
  }"
  item2_duplicate_key = {
    a = [1,
      2]
    b = 0
    a = 3
  }
  item4_overridden = "base"
  item4_kept       = "kept"
}

output "item2_object_for" {
  value = local.item2_object_for
}
output "item2_list_for" {
  value = local.item2_list_for
}
output "item2_interpolation" {
  value = local.item2_interpolation
}
output "item2_duplicate_key" {
  value = local.item2_duplicate_key
}
output "item3_legacy_list" {
  value = var.names
}
output "item3_legacy_map" {
  value = var.tags
}
output "item4_overridden" {
  value = local.item4_overridden
}
output "item4_kept" {
  value       = local.item4_kept
  description = "base"
}
"#;

const OVERRIDE: &str = r#"locals {
  item4_overridden = "from ${"override"}"
}

output "item4_kept" {
  description = "over"
}
"#;

#[test]
fn front_end_constructs_evaluate_as_terraform() {
    let Some(tf) = terrane_testkit::terraform() else {
        return;
    };
    let dir = terrane_testkit::temp_dir();
    std::fs::write(dir.path().join("main.tf"), MAIN).unwrap();
    std::fs::write(dir.path().join("main_override.tf"), OVERRIDE).unwrap();
    tf.expect(dir.path(), &["init", "-input=false"], 0);
    tf.expect(dir.path(), &["apply", "-auto-approve", "-input=false"], 0);
    let state: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("terraform.tfstate")).unwrap())
            .unwrap();

    let (module, diags) = terrane_config::load_module(dir.path());
    assert!(diags.is_empty(), "{diags:?}");
    let ctx = default_ctx(dir.path());
    let cwd = dir.path().display().to_string();
    let mut scope = ModuleScope::new(&module, [".".into(), ".".into(), cwd], None);
    let d = input_variables(&module, &BTreeMap::new(), &ctx, &mut scope);
    assert!(d.is_empty(), "variables: {d:?}");
    let d = evaluate_locals(&module, &ctx, &mut scope);
    assert!(d.is_empty(), "locals: {d:?}");
    assert_eq!(module.outputs.len(), 8);
    for (name, o) in &module.outputs {
        let (v, d) = eval_expr(o.value.as_ref().unwrap(), &scope, &ctx);
        assert!(d.is_empty(), "case {name}: {d:?}");
        let theirs = &state["outputs"][name];
        let ty = typejson::from_json(&theirs["type"]).expect("Terraform's type");
        let val = terrane_value::json::decode(&theirs["value"], &ty).expect("Terraform's value");
        assert!(
            v.ty() == &ty && v.unmark_deep().eq_ignoring_refinements(&val),
            "case {name}: terrane {} {:?}, terraform {ty} {}",
            v.ty(),
            v,
            theirs["value"]
        );
    }
    assert_eq!(
        module.outputs["item4_kept"].description.as_deref(),
        Some("over")
    );
    assert_eq!(
        module.variables["names"].description.as_deref(),
        Some("Names, one per line.\n")
    );
}
