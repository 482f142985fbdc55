//! Error quality: malformed module directories, each giving a diagnostic
//! with the right summary at the right file:line:column. A case is a set
//! of files written to a temporary directory; `diagnose` runs what a
//! `validate` runs without providers: load the module tree (`.tf` and
//! `.tf.json`), the static reference check, input variables against their
//! type constraints, locals in dependency order, and every output and
//! resource argument (and dynamic `for_each`) whose references are all
//! static (var, local, path). Where Terraform has the same check, the
//! summary and position are Terraform's (`terraform validate -json`).

use std::collections::BTreeMap;
use std::path::Path;
use terrane_config::{Diagnostic, Expr, NestedBlock, Subject};
use terrane_eval::module::{evaluate_locals, input_variables, ModuleScope};
use terrane_eval::{default_ctx, eval_expr};

fn static_only(e: &Expr) -> bool {
    e.refs.iter().all(|r| {
        matches!(
            r.subject,
            Subject::Var(_) | Subject::Local(_) | Subject::Path(_)
        )
    })
}

fn nested_exprs<'a>(b: &'a NestedBlock, out: &mut Vec<&'a Expr>) {
    if let Some(d) = &b.dynamic {
        out.push(&d.for_each);
        return; // the content needs the iterator
    }
    out.extend(b.attributes.values());
    for nb in &b.blocks {
        nested_exprs(nb, out);
    }
}

fn diagnose(dir: &Path) -> Vec<Diagnostic> {
    let (config, mut diags) =
        terrane_config::load_config(dir, &terrane_eval::statics::defaults_only());
    diags.extend(terrane_config::validate_references(&config));
    let module = &config.module;
    let ctx = default_ctx(dir);
    let mut scope = ModuleScope::new(
        module,
        [".".into(), ".".into(), dir.display().to_string()],
        None,
    );
    diags.extend(input_variables(module, &BTreeMap::new(), &ctx, &mut scope));
    diags.extend(evaluate_locals(module, &ctx, &mut scope));
    let mut exprs: Vec<&Expr> = module
        .outputs
        .values()
        .filter_map(|o| o.value.as_ref())
        .collect();
    for r in &module.resources {
        exprs.extend(r.attributes.values());
        for b in &r.body {
            nested_exprs(b, &mut exprs);
        }
    }
    for e in exprs.into_iter().filter(|e| static_only(e)) {
        diags.extend(eval_expr(e, &scope, &ctx).1);
    }
    diags
}

/// Writes `files` to a fresh directory (`name/` prefixes make child
/// module directories) and asserts that one diagnostic reads `want`:
/// `file:line:col: summary`.
fn check(case: &str, files: &[(&str, &str)], want: &str) -> Result<(), String> {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let prefix = format!("{}/", dir.path().display());
    let got: Vec<String> = diagnose(dir.path())
        .iter()
        .map(|d| match &d.range {
            Some(r) => format!(
                "{}:{}:{}: {}",
                r.file.strip_prefix(prefix.as_str()).unwrap_or(&r.file),
                r.start.line,
                r.start.col,
                d.summary
            ),
            None => format!("?: {}", d.summary),
        })
        .collect();
    if got.iter().any(|g| g == want) {
        Ok(())
    } else {
        Err(format!("case {case}: want {want:?}, got {got:?}"))
    }
}

const CHILD: (&str, &str) = ("child/main.tf", "output \"id\" {\n  value = 1\n}\n");

/// A named case: files (name, text) and the expected first diagnostic.
type Case = (
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static str,
);

#[rustfmt::skip]
const CASES: &[Case] = &[
    // Syntax.
    ("unclosed_block", &[("main.tf", "resource \"terraform_data\" \"a\" {\n  input = 1\n")], "main.tf:1:31: Unclosed configuration block"),
    ("missing_equals", &[("main.tf", "locals {\n  a 1\n}\n")], "main.tf:2:3: Argument or block definition required"),
    ("dangling_operator", &[("main.tf", "locals {\n  a = 1 +\n}\n")], "main.tf:2:10: Invalid expression"),
    ("unterminated_string", &[("main.tf", "variable \"v\" {\n  default = \"abc\n}\n")], "main.tf:2:17: Unterminated template string"),
    ("error_in_second_file", &[("a.tf", "locals {\n  a = 1\n}\n"), ("b.tf", "locals {\n  b = [1,\n}\n")], "b.tf:3:1: Invalid expression"),
    // Unknown references.
    ("undeclared_variable", &[("main.tf", "output \"o\" {\n  value = var.nope\n}\n")], "main.tf:2:11: Reference to undeclared input variable"),
    ("undeclared_local", &[("main.tf", "output \"o\" {\n  value = local.nope\n}\n")], "main.tf:2:11: Reference to undeclared local value"),
    ("undeclared_resource", &[("main.tf", "locals {\n  c = terraform_data.nope.id\n}\n")], "main.tf:2:7: Reference to undeclared resource"),
    ("undeclared_data_source", &[("main.tf", "locals {\n  e = data.terraform_remote_state.nope.outputs\n}\n")], "main.tf:2:7: Reference to undeclared resource"),
    ("undeclared_module", &[("main.tf", "locals {\n  d = module.nope.x\n}\n")], "main.tf:2:7: Reference to undeclared module"),
    ("missing_module_output", &[("main.tf", "module \"c\" {\n  source = \"./child\"\n}\noutput \"o\" {\n  value = module.c.missing\n}\n"), CHILD], "main.tf:5:19: Unsupported attribute"),
    ("count_in_uncounted_resource", &[("main.tf", "resource \"terraform_data\" \"a\" {\n  input = count.index\n}\n")], "main.tf:2:11: Reference to \"count\" in non-counted context"),
    ("each_in_local", &[("main.tf", "locals {\n  g = each.key\n}\n")], "main.tf:2:7: Reference to \"each\" in context without for_each"),
    ("self_in_precondition", &[("main.tf", "resource \"terraform_data\" \"a\" {\n  input = 1\n  lifecycle {\n    precondition {\n      condition     = self.output == 1\n      error_message = \"bad\"\n    }\n  }\n}\n")], "main.tf:5:23: Invalid \"self\" reference"),
    ("undeclared_in_template", &[("main.tf", "output \"o\" {\n  value = \"x-${var.nope}\"\n}\n")], "main.tf:2:16: Reference to undeclared input variable"),
    ("undeclared_in_dynamic_content", &[("main.tf", "resource \"terraform_data\" \"a\" {\n  dynamic \"x\" {\n    for_each = [1]\n    content {\n      v = x.value + local.nope\n    }\n  }\n}\n")], "main.tf:5:21: Reference to undeclared local value"),
    ("undeclared_depends_on", &[("main.tf", "resource \"terraform_data\" \"a\" {\n  depends_on = [terraform_data.b]\n}\n")], "main.tf:2:17: Reference to undeclared resource"),
    // Wrong types.
    ("default_not_a_number", &[("main.tf", "variable \"n\" {\n  type    = number\n  default = \"abc\"\n}\n")], "main.tf:3:13: Invalid default value for variable"),
    ("default_list_for_string", &[("main.tf", "variable \"s\" {\n  type    = string\n  default = [\"a\"]\n}\n")], "main.tf:3:13: Invalid default value for variable"),
    ("default_object_missing_attribute", &[("main.tf", "variable \"o\" {\n  type    = object({ a = string, b = number })\n  default = { a = \"x\" }\n}\n")], "main.tf:3:13: Invalid default value for variable"),
    ("bad_type_keyword", &[("main.tf", "variable \"v\" {\n  type = strin\n}\n")], "main.tf:2:10: Invalid type specification"),
    ("arithmetic_on_string", &[("main.tf", "locals {\n  a = \"x\" * 2\n}\n")], "main.tf:2:7: Invalid operand"),
    // Cycles among locals.
    ("two_local_cycle", &[("main.tf", "locals {\n  a = local.b\n  b = local.a\n}\n")], "main.tf:2:7: Cycle in local values"),
    ("self_referencing_local", &[("main.tf", "locals {\n  x = 1\n  y = local.y + 1\n}\n")], "main.tf:3:7: Cycle in local values"),
    // Bad function arguments.
    ("unknown_function", &[("main.tf", "locals {\n  a = upperr(\"x\")\n}\n")], "main.tf:2:7: Call to unknown function"),
    ("not_enough_arguments", &[("main.tf", "locals {\n  a = upper()\n}\n")], "main.tf:2:13: Not enough function arguments"),
    ("too_many_arguments", &[("main.tf", "locals {\n  a = upper(\"a\", 2)\n}\n")], "main.tf:2:18: Too many function arguments"),
    ("wrong_argument_type", &[("main.tf", "locals {\n  a = abs([1])\n}\n")], "main.tf:2:11: Invalid function argument"),
    ("bad_index", &[("main.tf", "locals {\n  a = [1, 2][5]\n}\n")], "main.tf:2:13: Invalid index"),
    // Dynamic blocks.
    ("dynamic_for_each_number", &[("main.tf", "resource \"terraform_data\" \"a\" {\n  dynamic \"x\" {\n    for_each = 5\n    content {}\n  }\n}\n")], "main.tf:3:16: Invalid dynamic for_each value"),
    ("dynamic_without_content", &[("main.tf", "resource \"terraform_data\" \"a\" {\n  dynamic \"x\" {\n    for_each = [1]\n  }\n}\n")], "main.tf:2:15: Missing required block"),
    ("dynamic_without_for_each", &[("main.tf", "resource \"terraform_data\" \"a\" {\n  dynamic \"x\" {\n    content {}\n  }\n}\n")], "main.tf:2:15: Missing required argument"),
    ("dynamic_bad_iterator", &[("main.tf", "resource \"terraform_data\" \"a\" {\n  dynamic \"x\" {\n    for_each = [1]\n    iterator = \"it\"\n    content {}\n  }\n}\n")], "main.tf:4:16: Invalid dynamic iterator name"),
    // Meta-arguments and block structure.
    ("duplicate_argument", &[("main.tf", "resource \"terraform_data\" \"a\" {\n  input = 1\n  input = 2\n}\n")], "main.tf:3:3: Attribute redefined"),
    ("count_and_for_each", &[("main.tf", "resource \"terraform_data\" \"a\" {\n  count    = 1\n  for_each = {}\n}\n")], "main.tf:3:3: Invalid combination of \"count\" and \"for_each\""),
    ("lifecycle_unknown_argument", &[("main.tf", "resource \"terraform_data\" \"a\" {\n  lifecycle {\n    bogus = true\n  }\n}\n")], "main.tf:3:5: Unsupported argument"),
    ("provider_not_a_reference", &[("main.tf", "resource \"terraform_data\" \"a\" {\n  provider = terraform[0]\n}\n")], "main.tf:2:14: Invalid provider configuration reference"),
    ("depends_on_literal", &[("main.tf", "resource \"terraform_data\" \"a\" {\n  depends_on = [1]\n}\n")], "main.tf:2:17: Invalid expression"),
    ("replace_triggered_by_without_resource", &[("main.tf", "resource \"terraform_data\" \"a\" {\n  lifecycle {\n    replace_triggered_by = [1]\n  }\n}\n")], "main.tf:3:29: Invalid replace_triggered_by expression"),
    ("validation_without_error_message", &[("main.tf", "variable \"x\" {\n  validation {\n    condition = var.x != \"\"\n  }\n}\n")], "main.tf:2:14: Missing required argument"),
    ("check_without_assert", &[("main.tf", "check \"c\" {\n}\n")], "main.tf:1:1: Zero assert blocks"),
    ("import_without_id", &[("main.tf", "import {\n  to = terraform_data.b\n}\nresource \"terraform_data\" \"b\" {}\n")], "main.tf:1:1: Invalid import block"),
    // JSON configuration syntax.
    ("json_trailing_comma", &[("main.tf.json", "{\n  \"resource\": {\n    \"terraform_data\": {\n      \"a\": {\n        \"input\": \"x\",\n      }\n    }\n  }\n}\n")], "main.tf.json:5:21: Trailing comma in object"),
    ("json_bad_keyword", &[("main.tf.json", "{\n  \"locals\": {\n    \"a\": tru\n  }\n}\n")], "main.tf.json:3:10: Invalid JSON keyword"),
    ("json_undeclared_variable", &[("main.tf.json", "{\n  \"resource\": {\n    \"terraform_data\": {\n      \"a\": {\n        \"input\": \"${var.nope}\"\n      }\n    }\n  }\n}\n")], "main.tf.json:5:21: Reference to undeclared input variable"),
    ("json_bad_template", &[("main.tf.json", "{\n  \"locals\": {\n    \"a\": \"${1 +}\"\n  }\n}\n")], "main.tf.json:3:16: Invalid expression"),
    ("json_unknown_block_type", &[("main.tf.json", "{\n  \"variable\": {\n    \"x\": {\n      \"type\": \"string\"\n    }\n  },\n  \"bogus\": {}\n}\n")], "main.tf.json:7:3: Extraneous JSON object property"),
    ("json_bad_type", &[("main.tf.json", "{\n  \"variable\": {\n    \"x\": {\n      \"type\": \"strin\"\n    }\n  }\n}\n")], "main.tf.json:4:15: Invalid type specification"),
    ("json_block_not_an_object", &[("main.tf.json", "{\n  \"resource\": {\n    \"terraform_data\": {\n      \"a\": \"x\"\n    }\n  }\n}\n")], "main.tf.json:4:12: Incorrect JSON value type"),
    ("json_duplicate_property", &[("main.tf.json", "{\n  \"locals\": {\n    \"a\": 1,\n    \"a\": 2\n  }\n}\n")], "main.tf.json:4:5: Duplicate argument"),
    ("json_function_error", &[("main.tf.json", "{\n  \"locals\": {\n    \"a\": \"${upper(1, 2)}\"\n  }\n}\n")], "main.tf.json:3:22: Too many function arguments"),
    ("json_default_wrong_type", &[("main.tf.json", "{\n  \"variable\": {\n    \"n\": {\n      \"type\": \"number\",\n      \"default\": [1]\n    }\n  }\n}\n")], "main.tf.json:5:18: Invalid default value for variable"),
];

#[test]
fn malformed_modules_give_diagnostics_at_the_right_place() {
    assert!(CASES.len() >= 30);
    let failures: Vec<String> = CASES
        .iter()
        .filter_map(|(case, files, want)| check(case, files, want).err())
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
}
