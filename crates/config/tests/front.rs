//! Issue 14 items 1-4: the configuration front end against real modules.
//! One named case per construct: the files of a module directory, and the
//! diagnostics (summary, line, column) terrane must give when loading it
//! and checking its references; where the case is differential, real
//! Terraform's `terraform validate -json` on the same directory must give
//! the same positioned errors.

use std::collections::BTreeSet;
use std::path::Path;
use terrane_config::{load_module, validate_references, Config, Severity};

struct Case {
    name: &'static str,
    files: &'static [(&'static str, &'static str)],
    /// Errors and warnings as `"severity file:line:col summary"`.
    want: &'static [&'static str],
    /// Compared with `terraform validate -json` (cases Terraform can
    /// validate without `init`).
    differential: bool,
}

fn diag_lines(diags: &[terrane_config::Diagnostic]) -> BTreeSet<String> {
    diags
        .iter()
        .map(|d| {
            let sev = match d.severity {
                Severity::Error => "error",
                _ => "warning",
            };
            let (l, c) = d
                .range
                .as_ref()
                .map(|r| (r.start.line, r.start.col))
                .unwrap_or((0, 0));
            let file = d
                .range
                .as_ref()
                .map(|r| r.file.rsplit('/').next().unwrap_or_default().to_string())
                .unwrap_or_default();
            format!("{sev} {file}:{l}:{c} {}", d.summary)
        })
        .collect()
}

/// Loads `dir` as the load example and `terrane validate` do: the module,
/// then (when it loaded without errors) its references.
fn load(dir: &Path) -> (terrane_config::Module, Vec<terrane_config::Diagnostic>) {
    let (module, mut diags) = load_module(dir);
    let config = Config {
        module,
        dir: dir.to_path_buf(),
        children: Default::default(),
    };
    if !diags.iter().any(|d| d.severity == Severity::Error) {
        diags.extend(validate_references(&config));
    }
    (config.module, diags)
}

/// Terraform's positioned diagnostics for `dir`, as `diag_lines` writes them.
fn terraform_lines(tf: &terrane_testkit::Terraform, dir: &Path) -> BTreeSet<String> {
    let out = tf.run(dir, &["validate", "-json", "-no-color"], &[]);
    let v: serde_json::Value = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("terraform validate -json: {e}\n{}", out.stdout));
    v["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|d| {
            let start = &d["range"]["start"];
            Some(format!(
                "{} {}:{}:{} {}",
                d["severity"].as_str()?,
                d["range"]["filename"].as_str()?,
                start["line"].as_u64()?,
                start["column"].as_u64()?,
                d["summary"].as_str()?
            ))
        })
        .collect()
}

#[track_caller]
fn check(cases: &[Case]) {
    let tf = if cases.iter().any(|c| c.differential) {
        terrane_testkit::terraform()
    } else {
        None
    };
    for case in cases {
        let dir = terrane_testkit::temp_dir();
        for (name, text) in case.files {
            let p = dir.path().join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let (_, diags) = load(dir.path());
        let got = diag_lines(&diags);
        let want: BTreeSet<String> = case.want.iter().map(|s| s.to_string()).collect();
        assert_eq!(got, want, "case {}: terrane", case.name);
        if let (true, Some(tf)) = (case.differential, &tf) {
            let theirs = terraform_lines(tf, dir.path());
            assert_eq!(theirs, want, "case {}: terraform validate -json", case.name);
        }
    }
}

/// The model of a single-file module that must load cleanly.
#[track_caller]
fn module(case: &str, text: &str) -> terrane_config::Module {
    let (m, diags) = terrane_config::parse_str("main.tf", text);
    assert!(diags.is_empty(), "case {case}: {diags:?}");
    m
}

#[test]
fn item1_constant_strings() {
    let m = module(
        "item1_heredoc_description",
        "variable \"a\" {\n  description = <<-EOT\n    Hello\n      world\n  EOT\n}\n",
    );
    assert_eq!(
        m.variables["a"].description.as_deref(),
        Some("Hello\n  world\n")
    );
    let m = module(
        "item1_constant_template_description",
        "variable \"a\" {\n  description = \"x-${\"y\"}-${1 + 2}-${true}\"\n}\noutput \"o\" {\n  value       = 1\n  description = \"a\" == \"a\" ? 5 : \"no\"\n}\n",
    );
    assert_eq!(m.variables["a"].description.as_deref(), Some("x-y-3-true"));
    assert_eq!(m.outputs["o"].description.as_deref(), Some("5"));
    let m = module(
        "item1_heredoc_module_source_and_version",
        "module \"m\" {\n  source  = <<EOT\n./here\nEOT\n}\n",
    );
    assert_eq!(m.module_calls["m"].source.as_deref(), Some("./here\n"));
    let m = module(
        "item1_template_module_version",
        "module \"m\" {\n  source  = \"hashicorp/consul/aws\"\n  version = \"${\"1.0\"}\"\n}\n",
    );
    assert_eq!(m.module_calls["m"].version.as_deref(), Some("1.0"));
    check(&[
        Case {
            // The heredoc's newline stays in the address, which then has
            // no valid target system.
            name: "item1_heredoc_registry_source_with_version",
            files: &[(
                "main.tf",
                "module \"m\" {\n  source  = <<EOT\nhashicorp/consul/aws\nEOT\n  version = \"1.0\"\n}\n",
            )],
            want: &["error main.tf:2:13 Invalid registry module source address"],
            differential: true,
        },
        Case {
            name: "item1_variable_in_description",
            files: &[(
                "main.tf",
                "variable \"a\" {\n  description = \"x-${var.b}\"\n}\nvariable \"b\" {\n  description = var.x.y\n}\n",
            )],
            want: &[
                "error main.tf:2:22 Variables not allowed",
                "error main.tf:2:18 Unsuitable value type",
                "error main.tf:5:17 Variables not allowed",
                "error main.tf:5:17 Unsuitable value type",
            ],
            differential: true,
        },
        Case {
            name: "item1_function_in_description",
            files: &[(
                "main.tf",
                "output \"o\" {\n  value       = 1\n  description = upper(\"x\")\n}\n",
            )],
            want: &[
                "error main.tf:3:17 Function calls not allowed",
                "error main.tf:3:17 Unsuitable value type",
            ],
            differential: true,
        },
        Case {
            name: "item1_unsuitable_description_types",
            files: &[(
                "main.tf",
                "variable \"d\" {\n  description = [\"x\"]\n}\nvariable \"e\" {\n  description = {a = 1}\n}\nvariable \"f\" {\n  description = \"${null}\"\n}\nvariable \"h\" {\n  description = \"a\" == \"a\" ? var.q : \"no\"\n}\n",
            )],
            want: &[
                "error main.tf:2:17 Unsuitable value type",
                "error main.tf:5:17 Unsuitable value type",
                "error main.tf:8:17 Unsuitable value type",
                "error main.tf:11:30 Variables not allowed",
                "error main.tf:11:18 Unsuitable value type",
            ],
            differential: true,
        },
    ]);
}

#[test]
fn item2_newlines_inside_expressions() {
    check(&[
        Case {
            name: "item2_multiline_conditional_in_object_for",
            files: &[(
                "main.tf",
                "locals {\n  a = { for k in [\"x\"] : k => true ? \"a\" :\n      \"b\"\n  }\n  b = [for k in [\"x\"] : k == \"x\" ? \"a\" :\n    \"b\" # comment\n  ]\n}\noutput \"a\" {\n  value = local.a\n}\noutput \"b\" {\n  value = local.b\n}\n",
            )],
            want: &[],
            differential: true,
        },
        Case {
            name: "item2_multiline_interpolation",
            files: &[(
                "main.tf",
                "variable \"t\" {\n  default = \"a\"\n}\noutput \"o\" {\n  value = \"x-${\n    var.t == \"a\" ? \"1\" :\n    \"2\"\n  }\"\n}\n",
            )],
            want: &[],
            differential: true,
        },
        Case {
            // Terraform: 4:23 "Invalid expression" (its parser's summary, which
        // terrane gives now too).
            name: "item2_newline_in_object_item_is_still_an_error",
            files: &[(
                "main.tf",
                "locals {\n  o = { for k in [\"x\"] : k => {\n    a = 1\n    b = k == \"x\" ? 2 :\n      3\n  } }\n}\noutput \"o\" {\n  value = local.o\n}\n",
            )],
            want: &["error main.tf:4:23 Invalid expression"],
            differential: true,
        },
        // HCL accepts a key given twice in an object constructor (the
        // later one wins); the parser refuses it, the loader does not.
        Case {
            name: "item2_duplicate_object_key_last_wins",
            files: &[(
                "main.tf",
                "locals {\n  x = {\n    a = [1,\n      2]\n    b = 0\n    a = 3\n  }\n}\noutput \"x\" {\n  value = local.x\n}\n",
            )],
            want: &[],
            differential: true,
        },
        // Terraform: 2:10 "Invalid expression", and 6:3 from the next block.
        Case {
            name: "item2_parse_error_keeps_other_blocks",
            files: &[(
                "main.tf",
                "locals {\n  a = 1 +\n  b = 2\n}\nvariable \"x\" {\n  bogus = 1\n}\noutput \"o\" {\n  value = local.b\n}\n",
            )],
            want: &[
                "error main.tf:2:10 Invalid expression",
                "error main.tf:6:3 Unsupported argument",
            ],
            differential: true,
        },
    ]);
}

#[test]
fn item3_terraform_1_10_to_1_15_syntax() {
    let m = module(
        "item3_ephemeral_block_decoded",
        "ephemeral \"random_password\" \"db\" {\n  length = 16\n  lifecycle {\n    postcondition {\n      condition     = self.result != \"\"\n      error_message = \"empty\"\n    }\n  }\n}\noutput \"o\" {\n  value     = ephemeral.random_password.db.result\n  ephemeral = true\n}\n",
    );
    assert!(m.resources.is_empty(), "case item3_ephemeral_not_managed");
    let e = &m.ephemeral_resources[0];
    assert_eq!((e.ty.as_str(), e.name.as_str()), ("random_password", "db"));
    assert_eq!(e.lifecycle.postconditions.len(), 1);
    assert_eq!(
        m.outputs["o"].value.as_ref().unwrap().refs[0].subject,
        terrane_config::Subject::Ephemeral {
            ty: "random_password".into(),
            name: "db".into()
        },
        "case item3_ephemeral_reference"
    );
    let m = module(
        "item3_deprecated_and_const",
        "variable \"v\" {\n  type       = string\n  default    = \"x\"\n  const      = true\n  deprecated = \"use w\"\n}\noutput \"o\" {\n  value      = var.v\n  deprecated = <<EOT\ngone\nEOT\n}\n",
    );
    assert!(m.variables["v"].constant);
    assert_eq!(m.variables["v"].deprecated.as_deref(), Some("use w"));
    assert_eq!(m.outputs["o"].deprecated.as_deref(), Some("gone\n"));
    let m = module(
        "item3_legacy_list_and_map_types",
        "variable \"l\" {\n  type = list\n}\nvariable \"m\" {\n  type = map\n}\n",
    );
    let ty = |n: &str| m.variables[n].constraint.as_ref().map(|c| c.ty.to_string());
    assert_eq!(ty("l").as_deref(), Some("list(any)"));
    assert_eq!(ty("m").as_deref(), Some("map(any)"));
    check(&[
        Case {
            name: "item3_legacy_types_and_root_output_deprecated",
            files: &[(
                "main.tf",
                "variable \"l\" {\n  type    = list\n  default = [\"a\"]\n}\nvariable \"m\" {\n  type    = map\n  default = {}\n}\noutput \"o\" {\n  value      = var.l\n  deprecated = \"gone\"\n}\n",
            )],
            want: &["error main.tf:11:3 Root module output deprecated"],
            differential: true,
        },
        Case {
            name: "item3_legacy_set_is_not_a_type",
            files: &[("main.tf", "variable \"s\" {\n  type = set\n}\n")],
            want: &["error main.tf:2:10 Invalid type specification"],
            differential: true,
        },
        Case {
            name: "item3_quoted_legacy_types",
            files: &[(
                "main.tf",
                "variable \"a\" {\n  type = \"string\"\n}\nvariable \"b\" {\n  type = \"list\"\n}\nvariable \"c\" {\n  type = \"map\"\n}\nvariable \"d\" {\n  type = \"number\"\n}\n",
            )],
            want: &[
                "error main.tf:2:10 Invalid quoted type constraints",
                "error main.tf:5:10 Invalid quoted type constraints",
                "error main.tf:8:10 Invalid quoted type constraints",
                "error main.tf:11:10 Invalid legacy variable type hint",
            ],
            differential: true,
        },
        Case {
            name: "item3_const_cannot_be_sensitive_or_ephemeral",
            files: &[(
                "main.tf",
                "variable \"a\" {\n  const     = true\n  sensitive = true\n  default   = 1\n}\nvariable \"b\" {\n  const     = true\n  ephemeral = true\n  default   = 1\n}\n",
            )],
            want: &[
                "error main.tf:1:1 Const variable cannot be sensitive",
                "error main.tf:6:1 Const variable cannot be ephemeral",
            ],
            differential: true,
        },
        Case {
            name: "item3_ephemeral_lifecycle_arguments",
            files: &[(
                "main.tf",
                "ephemeral \"test_resource\" \"test\" {\n  lifecycle {\n    create_before_destroy = true\n  }\n}\n",
            )],
            want: &["error main.tf:3:5 Invalid ephemeral resource lifecycle argument"],
            differential: true,
        },
        Case {
            name: "item3_ephemeral_invalid_labels",
            files: &[("main.tf", "ephemeral \"test resource\" \"no pe\" {\n}\n")],
            want: &[
                "error main.tf:1:11 Invalid ephemeral resource type",
                "error main.tf:1:27 Invalid ephemeral resource name",
            ],
            differential: true,
        },
        Case {
            name: "item3_undeclared_ephemeral_reference",
            files: &[(
                "main.tf",
                "ephemeral \"test_resource\" \"a\" {\n}\noutput \"o\" {\n  value     = ephemeral.test_resource.b.id\n  ephemeral = true\n}\n",
            )],
            want: &["error main.tf:4:15 Reference to undeclared resource"],
            differential: false,
        },
    ]);
}

/// Loads a directory of files that must load without errors.
#[track_caller]
fn module_dir(case: &str, files: &[(&str, &str)]) -> terrane_config::Module {
    let dir = terrane_testkit::temp_dir();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let (m, diags) = load(dir.path());
    assert!(diags.is_empty(), "case {case}: {diags:?}");
    m
}

const PRIMARY: &str = r#"terraform {
  required_version = ">= 1.0"
}

variable "v" {
  type        = string
  default     = "base"
  description = "base"
}

locals {
  l = "base"
  k = "kept"
}

resource "terraform_data" "r" {
  input            = "base"
  triggers_replace = [local.k]
  lifecycle {
    create_before_destroy = true
    prevent_destroy       = false
  }
}

output "o" {
  value       = terraform_data.r.output
  description = "base"
}
"#;

const OVERRIDE: &str = r#"terraform {
  required_version = ">= 1.5"
}

variable "v" {
  default = "over"
}

locals {
  l = "over"
}

resource "terraform_data" "r" {
  input = var.v
  lifecycle {
    prevent_destroy = true
  }
}

output "o" {
  description = "over"
}
"#;

#[test]
fn item4_override_files() {
    let m = module_dir(
        "item4_override_merges_by_argument",
        &[("main.tf", PRIMARY), ("main_override.tf", OVERRIDE)],
    );
    let v = &m.variables["v"];
    assert_eq!(
        v.default.as_ref().unwrap().expr.to_string().trim(),
        "\"over\""
    );
    assert_eq!(
        v.description.as_deref(),
        Some("base"),
        "case item4_unset_arguments_kept"
    );
    assert!(v.constraint.is_some());
    assert_eq!(m.locals["l"].expr.to_string().trim(), "\"over\"");
    assert_eq!(m.locals["k"].expr.to_string().trim(), "\"kept\"");
    assert_eq!(m.required_version.as_deref(), Some(">= 1.5"));
    let r = &m.resources[0];
    assert_eq!(r.attributes["input"].expr.to_string().trim(), "var.v");
    assert!(r.attributes.contains_key("triggers_replace"));
    assert!(
        r.lifecycle.create_before_destroy.is_some() && r.lifecycle.prevent_destroy.is_some(),
        "case item4_lifecycle_merged_by_argument"
    );
    assert_eq!(
        r.lifecycle
            .prevent_destroy
            .as_ref()
            .unwrap()
            .expr
            .to_string()
            .trim(),
        "true"
    );
    assert_eq!(m.outputs["o"].description.as_deref(), Some("over"));
    assert!(
        m.outputs["o"].value.is_some(),
        "case item4_output_value_kept"
    );
    // The override's ranges point into the override file.
    let at = r.attributes["input"].range.as_ref().unwrap();
    assert!(at.file.ends_with("main_override.tf") && at.start.line == 14);

    let m = module_dir(
        "item4_nested_blocks_replaced_by_type",
        &[
            (
                "main.tf",
                "provider \"p\" {\n  a = 1\n  x {\n    n = 1\n  }\n  x {\n    n = 2\n  }\n  y {\n  }\n}\nresource \"r\" \"s\" {\n  b {\n  }\n  dynamic \"c\" {\n    for_each = []\n    content {\n    }\n  }\n}\n",
            ),
            (
                "override.tf",
                "provider \"p\" {\n  x {\n    n = 3\n  }\n}\nprovider \"q\" {\n}\nresource \"r\" \"s\" {\n  c {\n  }\n}\n",
            ),
        ],
    );
    let p = &m.providers[0];
    assert_eq!(p.attributes.len(), 1, "case item4_provider_arguments_kept");
    assert_eq!(m.providers.len(), 2, "case item4_default_provider_added");
    let r = &m.resources[0];
    let types: Vec<&str> = r.body.iter().map(|b| b.type_name.as_str()).collect();
    assert_eq!(types, ["b", "c"], "case item4_dynamic_replaced_by_static");
    assert!(r.body[1].dynamic.is_none());

    let m = module_dir(
        "item4_json_override",
        &[
            ("main.tf", "variable \"v\" {\n  default = 1\n}\n"),
            (
                "override.tf.json",
                "{\"variable\": {\"v\": {\"default\": 2}}}\n",
            ),
        ],
    );
    assert_eq!(
        m.variables["v"]
            .default
            .as_ref()
            .unwrap()
            .expr
            .to_string()
            .trim(),
        "2"
    );

    check(&[
        Case {
            name: "item4_override_validates_like_terraform",
            files: &[("main.tf", PRIMARY), ("main_override.tf", OVERRIDE)],
            want: &[],
            differential: true,
        },
        Case {
            name: "item4_missing_base_declarations",
            files: &[
                ("main.tf", "variable \"v\" {\n}\n"),
                (
                    "override.tf",
                    "variable \"w\" {\n}\nlocals {\n  x = 1\n}\noutput \"o\" {\n  value = 1\n}\nresource \"terraform_data\" \"r\" {\n}\nprovider \"aws\" {\n  alias = \"east\"\n}\n",
                ),
            ],
            want: &[
                "error override.tf:1:1 Missing base variable declaration to override",
                "error override.tf:4:3 Missing base local value definition to override",
                "error override.tf:6:1 Missing base output definition to override",
                "error override.tf:9:1 Missing resource to override",
                "error override.tf:11:1 Missing base provider configuration for override",
            ],
            differential: true,
        },
        Case {
            name: "item4_depends_on_not_overridable",
            files: &[
                (
                    "main.tf",
                    "resource \"terraform_data\" \"a\" {\n}\nresource \"terraform_data\" \"b\" {\n}\n",
                ),
                (
                    "b_override.tf",
                    "resource \"terraform_data\" \"b\" {\n  depends_on = [terraform_data.a]\n}\n",
                ),
            ],
            want: &["error b_override.tf:2:17 Unsupported override"],
            differential: true,
        },
        Case {
            name: "item4_moved_and_import_refused_in_override",
            files: &[
                ("main.tf", "resource \"terraform_data\" \"a\" {\n}\n"),
                (
                    "override.tf",
                    "moved {\n  from = terraform_data.x\n  to   = terraform_data.a\n}\nimport {\n  to = terraform_data.a\n  id = \"x\"\n}\n",
                ),
            ],
            want: &[
                "error override.tf:1:1 Cannot override 'moved' blocks",
                "error override.tf:5:1 Cannot override 'import' blocks",
            ],
            differential: true,
        },
        Case {
            name: "item4_override_argument_errors_in_override_file",
            files: &[
                ("main.tf", "variable \"v\" {\n}\n"),
                ("override.tf", "variable \"v\" {\n  colour = 1\n}\n"),
            ],
            want: &["error override.tf:2:3 Unsupported argument"],
            differential: true,
        },
        Case {
            name: "item4_json_override_argument_positions",
            files: &[
                ("main.tf.json", "{\"variable\": {\"v\": {}}}\n"),
                (
                    "override.tf.json",
                    "{\n  \"variable\": {\n    \"v\": {\n      \"colour\": 1\n    }\n  }\n}\n",
                ),
            ],
            want: &["error override.tf.json:4:7 Extraneous JSON object property"],
            differential: true,
        },
        // Terraform ignores these silently; terrane says so.
        Case {
            name: "item4_unmergeable_block_warned",
            files: &[
                ("main.tf", "variable \"v\" {\n}\n"),
                (
                    "override.tf",
                    "removed {\n  from = terraform_data.x\n}\n",
                ),
            ],
            want: &["warning override.tf:1:1 Block ignored in override file"],
            differential: false,
        },
        // OpenTofu: `a.tofu` shadows `a.tf` (Terraform reads only `a.tf`).
        Case {
            name: "item4_tofu_shadows_tf",
            files: &[
                ("a.tf", "resorce \"x\" \"y\" {}\n"),
                ("a.tofu", "variable \"v\" {\n}\n"),
                ("b.tofu.json", "{\"output\": {\"o\": {\"value\": \"${var.v}\"}}}\n"),
                ("b.tf.json", "{\"bogus\": {}}\n"),
            ],
            want: &[],
            differential: false,
        },
        Case {
            name: "item4_tofu_override_file",
            files: &[
                ("main.tofu", "variable \"v\" {\n}\n"),
                ("main_override.tofu", "variable \"w\" {\n}\n"),
            ],
            want: &["error main_override.tofu:1:1 Missing base variable declaration to override"],
            differential: false,
        },
    ]);
}

/// The fuzz target's seeds (fuzz/corpus/config_parse), read as the target
/// reads them (split at `#--file NAME` lines into the files of one
/// module), load without panicking and with 1-based positions; the
/// override seed gives the errors an override file must give.
#[test]
fn fuzz_seeds_with_override_files_load() {
    let dir = terrane_testkit::repo_root().join("fuzz/corpus/config_parse");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
        let mut files = vec![("main.tf".to_string(), String::new())];
        for line in text.split_inclusive('\n') {
            match line.trim_end().strip_prefix("#--file ") {
                Some(name) => files.push((name.trim().to_string(), String::new())),
                None => files.last_mut().unwrap().1.push_str(line),
            }
        }
        let multi = files.len() > 1;
        let (_, diags) = terrane_config::load_files(files);
        for d in &diags {
            if let Some(r) = &d.range {
                assert!(r.start.line >= 1 && r.start.col >= 1, "{path:?}: {d}");
            }
        }
        if path.ends_with("override_files") {
            assert!(multi);
            let got = diag_lines(&diags);
            for want in [
                "error main_override.tf:8:17 Unsupported override",
                "error override.tf.json:1:57 Missing base local value definition to override",
                "error extra_override.tofu:1:1 Cannot override 'moved' blocks",
            ] {
                assert!(
                    got.contains(want),
                    "case fuzz_seed_override_files: {want} in {got:?}"
                );
            }
        }
        seen += 1;
    }
    assert!(seen >= 10, "seeds found: {seen}");
}

#[test]
fn item3_engine_refuses_ephemeral_resources_at_their_block() {
    let dir = terrane_testkit::temp_dir();
    std::fs::create_dir_all(dir.path().join("child")).unwrap();
    std::fs::write(
        dir.path().join("main.tf"),
        "module \"c\" {\n  source = \"./child\"\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("child/main.tf"),
        "\nephemeral \"random_password\" \"p\" {\n  length = 4\n}\n",
    )
    .unwrap();
    let (config, diags) =
        terrane_config::load_config(dir.path(), &terrane_config::statics::LiteralsOnly);
    assert!(diags.is_empty(), "{diags:?}");
    assert!(
        validate_references(&config).is_empty(),
        "case validate_accepts"
    );
    let refused = terrane_config::ephemeral_not_supported(&config);
    let lines = diag_lines(&refused);
    assert_eq!(
        lines.into_iter().collect::<Vec<_>>(),
        ["error main.tf:2:1 Ephemeral resources are not yet supported"],
        "case refused_at_block"
    );
}

#[test]
fn item2_duplicate_object_key_keeps_the_later_item() {
    let m = module(
        "item2_duplicate_object_key_keeps_the_later_item",
        "locals {\n  x = { a = 1, b = 2, a = 3 }\n}\n",
    );
    let text = m.locals["x"].expr.to_string();
    assert!(text.contains("a = 3") && !text.contains("a = 1"), "{text}");
}

/// Terraform 1.15's `deprecated` seen from the calling module: a value
/// given to a deprecated variable, a deprecated output used (warnings at
/// the argument and at the reference, as `terraform validate` gives them
/// after `init`).
#[test]
fn item3_deprecated_seen_by_the_caller() {
    let dir = terrane_testkit::temp_dir();
    std::fs::create_dir_all(dir.path().join("child")).unwrap();
    std::fs::write(
        dir.path().join("child/main.tf"),
        "variable \"old\" {\n  type       = string\n  default    = null\n  deprecated = \"use new\"\n}\noutput \"o\" {\n  value      = var.old\n  deprecated = \"out is old\"\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("main.tf"),
        "module \"c\" {\n  source = \"./child\"\n  old    = \"x\"\n}\noutput \"p\" {\n  value = module.c.o\n}\n",
    )
    .unwrap();
    let (config, diags) =
        terrane_config::load_config(dir.path(), &terrane_config::statics::LiteralsOnly);
    assert!(diags.is_empty(), "{diags:?}");
    let got = diag_lines(&validate_references(&config));
    let want: BTreeSet<String> = [
        "warning main.tf:3:12 Deprecated variable got a value",
        "warning main.tf:6:11 Deprecated value used",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(got, want, "case item3_deprecated_seen_by_the_caller");
    if let Some(tf) = terrane_testkit::terraform() {
        tf.expect(dir.path(), &["init", "-input=false"], 0);
        let theirs = terraform_lines(&tf, dir.path());
        assert_eq!(theirs, want, "terraform validate -json");
    }
}
