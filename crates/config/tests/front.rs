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
    /// Errors and warnings as `"severity line:col summary"`.
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
            format!("{sev} {l}:{c} {}", d.summary)
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
                "{} {}:{} {}",
                d["severity"].as_str()?,
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
        "module \"m\" {\n  source  = <<EOT\nhashicorp/consul/aws\nEOT\n  version = \"${\"1.0\"}\"\n}\n",
    );
    assert_eq!(
        m.module_calls["m"].source.as_deref(),
        Some("hashicorp/consul/aws\n")
    );
    assert_eq!(m.module_calls["m"].version.as_deref(), Some("1.0"));
    check(&[
        Case {
            name: "item1_variable_in_description",
            files: &[(
                "main.tf",
                "variable \"a\" {\n  description = \"x-${var.b}\"\n}\nvariable \"b\" {\n  description = var.x.y\n}\n",
            )],
            want: &[
                "error 2:22 Variables not allowed",
                "error 2:18 Unsuitable value type",
                "error 5:17 Variables not allowed",
                "error 5:17 Unsuitable value type",
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
                "error 3:17 Function calls not allowed",
                "error 3:17 Unsuitable value type",
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
                "error 2:17 Unsuitable value type",
                "error 5:17 Unsuitable value type",
                "error 8:17 Unsuitable value type",
                "error 11:30 Variables not allowed",
                "error 11:18 Unsuitable value type",
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
            // Terraform: 4:23 "Invalid expression" (its parser's summary).
            name: "item2_newline_in_object_item_is_still_an_error",
            files: &[(
                "main.tf",
                "locals {\n  o = { for k in [\"x\"] : k => {\n    a = 1\n    b = k == \"x\" ? 2 :\n      3\n  } }\n}\noutput \"o\" {\n  value = local.o\n}\n",
            )],
            want: &["error 4:23 Invalid syntax"],
            differential: false,
        },
        // Terraform: 2:10 "Invalid expression", and 6:3 from the next block.
        Case {
            name: "item2_parse_error_keeps_other_blocks",
            files: &[(
                "main.tf",
                "locals {\n  a = 1 +\n  b = 2\n}\nvariable \"x\" {\n  bogus = 1\n}\noutput \"o\" {\n  value = local.b\n}\n",
            )],
            want: &[
                "error 2:10 Invalid syntax",
                "error 6:3 Unsupported argument",
            ],
            differential: false,
        },
    ]);
}
