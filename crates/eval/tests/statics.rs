//! Module `source` and `version` evaluated at load as Terraform 1.15's init
//! does (terrane-config's `statics`, implemented by `InitStatics`): each
//! case is a root module (and its local children) loaded with some given
//! root inputs; it names the sources and versions the tree ends up with,
//! or the one error it gets, with its line.

use terrane_config::statics::Inputs;
use terrane_config::{Config, Severity};
use terrane_eval::statics::InitStatics;
use terrane_value::Value;

struct Case {
    name: &'static str,
    root: &'static str,
    /// Other files, by path under the root directory.
    files: &'static [(&'static str, &'static str)],
    given: &'static [(&'static str, &'static str)],
    /// `key source version` of every call in the tree, or `Error: summary
    /// @line` of the one error.
    want: &'static [&'static str],
}

const LEAF: &str = "output \"o\" {\n  value = 1\n}\n";

const CASES: &[Case] = &[
    Case {
        name: "literals_stay_as_they_are",
        root: "module \"a\" {\n  source  = \"x/y/z\"\n  version = \"1.0.0\"\n}\n",
        files: &[],
        given: &[],
        want: &["a x/y/z 1.0.0"],
    },
    Case {
        name: "const_variable_default",
        root: "variable \"v\" {\n  const   = true\n  default = \"2.0.0\"\n}\nmodule \"a\" {\n  source  = \"x/y/z\"\n  version = var.v\n}\n",
        files: &[],
        given: &[],
        want: &["a x/y/z 2.0.0"],
    },
    Case {
        name: "const_variable_given",
        root: "variable \"v\" {\n  const   = true\n  default = \"2.0.0\"\n}\nmodule \"a\" {\n  source  = \"x/y/z\"\n  version = \"~> ${var.v}\"\n}\n",
        files: &[],
        given: &[("v", "3.1.0")],
        want: &["a x/y/z ~> 3.1.0"],
    },
    Case {
        name: "local_over_const_variable_and_pure_function",
        root: "variable \"which\" {\n  const = true\n  type  = string\n}\nlocals {\n  dir = \"./${lower(var.which)}\"\n}\nmodule \"a\" {\n  source = local.dir\n}\n",
        files: &[("leaf/main.tf", LEAF)],
        given: &[("which", "LEAF")],
        want: &["a ./leaf -"],
    },
    Case {
        name: "child_const_variable_from_the_calling_block",
        root: "variable \"w\" {\n  const   = true\n  default = \"leaf\"\n}\nmodule \"mid\" {\n  source = \"./mid\"\n  which  = var.w\n}\n",
        files: &[
            ("mid/main.tf", "variable \"which\" {\n  const = true\n}\nmodule \"leaf\" {\n  source = \"../${var.which}\"\n}\n"),
            ("leaf/main.tf", LEAF),
        ],
        given: &[],
        want: &["mid ./mid -", "mid.leaf ../leaf -"],
    },
    Case {
        name: "null_version_is_no_version",
        root: "locals {\n  v = null\n}\nmodule \"a\" {\n  source  = \"./leaf\"\n  version = local.v\n}\n",
        files: &[("leaf/main.tf", LEAF)],
        given: &[],
        want: &["a ./leaf -"],
    },
    Case {
        name: "variable_that_is_not_const",
        root: "variable \"v\" {\n  default = \"./leaf\"\n}\nmodule \"a\" {\n  source = var.v\n}\n",
        files: &[("leaf/main.tf", LEAF)],
        given: &[],
        want: &["Error: Unknown module source @5"],
    },
    Case {
        name: "impure_function",
        root: "locals {\n  t = timestamp()\n}\nmodule \"a\" {\n  source  = \"x/y/z\"\n  version = local.t\n}\n",
        files: &[],
        given: &[],
        want: &["Error: Unknown module version @6"],
    },
    Case {
        name: "resource_attribute",
        root: "resource \"terraform_data\" \"d\" {}\nmodule \"a\" {\n  source = terraform_data.d.output\n}\n",
        files: &[],
        given: &[],
        want: &["Error: Unknown module source @3"],
    },
    Case {
        name: "required_const_variable_not_given",
        root: "variable \"v\" {\n  const = true\n}\nmodule \"a\" {\n  source = var.v\n}\n",
        files: &[],
        given: &[],
        want: &["Error: No value for required variable @1"],
    },
    Case {
        name: "sensitive_value",
        root: "locals {\n  s = sensitive(\"./leaf\")\n}\nmodule \"a\" {\n  source = local.s\n}\n",
        files: &[("leaf/main.tf", LEAF)],
        given: &[],
        want: &["Error: Sensitive value not allowed @5"],
    },
    Case {
        name: "local_directory_with_a_version",
        root: "variable \"v\" {\n  const   = true\n  default = \"1.0.0\"\n}\nmodule \"a\" {\n  source  = \"./leaf\"\n  version = var.v\n}\n",
        files: &[("leaf/main.tf", LEAF)],
        given: &[],
        want: &["Error: Invalid registry module source address @6"],
    },
];

fn calls(c: &Config, prefix: &str, out: &mut Vec<String>) {
    for (name, call) in &c.module.module_calls {
        let key = format!("{prefix}{name}");
        out.push(format!(
            "{key} {} {}",
            call.source.as_deref().unwrap_or("?"),
            call.version.as_deref().unwrap_or("-")
        ));
        if let Some(child) = c.children.get(name) {
            calls(child, &format!("{key}."), out);
        }
    }
}

fn check(c: &Case) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("main.tf"), c.root).unwrap();
    for (path, text) in c.files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let given: Inputs = c
        .given
        .iter()
        .map(|(k, v)| (k.to_string(), Value::string(*v)))
        .collect();
    let statics = InitStatics::new(move |_: &terrane_config::Module| Ok(given.clone()));
    let (config, diags) = terrane_config::load_config(dir.path(), &statics);
    let errors: Vec<String> = diags
        .iter()
        // Registry modules are not installed here; only where they are
        // and what version they ask for matters.
        .filter(|d| d.severity == Severity::Error && d.summary != "Module not installed")
        .map(|d| {
            let line = d.range.as_ref().map_or(0, |r| r.start.line);
            format!("Error: {} @{line}", d.summary)
        })
        .collect();
    let got = if errors.is_empty() {
        let mut out = Vec::new();
        calls(&config, "", &mut out);
        out
    } else {
        errors
    };
    assert_eq!(got, c.want, "case {}", c.name);
}

#[test]
fn module_sources_and_versions_at_init() {
    for c in CASES {
        check(c);
    }
}
