//! Root input variables from everywhere Terraform takes them, in its
//! order of precedence (later wins): `TF_VAR_name` environment variables,
//! `terraform.tfvars`, `*.auto.tfvars` (sorted), then `-var-file` and
//! `-var` in command-line order. A `-var` or environment value is a
//! literal string for string (or untyped) variables and an HCL expression
//! otherwise, as Terraform does.

use crate::args::Args;
use std::collections::BTreeMap;
use std::path::Path;
use terrane_config::{Diagnostic, LineIndex, Module};
use terrane_eval::{default_ctx, Evaluator, MapScope};
use terrane_value::{Type, Value};

fn is_string_var(m: &Module, name: &str) -> bool {
    match m.variables.get(name).and_then(|v| v.constraint.as_ref()) {
        None => true,
        Some(tc) => tc.ty == Type::String || tc.ty == Type::Dynamic,
    }
}

fn literal_or_expr(m: &Module, name: &str, raw: &str, source: &str) -> Result<Value, Diagnostic> {
    if is_string_var(m, name)
        && !matches!(
            m.variables
                .get(name)
                .and_then(|v| v.constraint.as_ref())
                .map(|c| &c.ty),
            Some(Type::Dynamic)
        )
    {
        return Ok(Value::string(raw));
    }
    let index = LineIndex::new(source, raw);
    let at = Some(index.at(1, 1));
    // Terraform reads these values as constant expressions: no variables
    // and no function calls. Its messages for them never quote the text,
    // and neither do these, so a sensitive variable's mistyped value is
    // never echoed back (an evaluator message about an unknown variable
    // would name it).
    let expr = match terrane_hcl::parser::parse_expr(raw) {
        Ok(e) => e,
        Err(e) => {
            let loc = e.location();
            return Err(Diagnostic::error(
                "Invalid expression",
                e.message().to_string(),
                Some(index.at(loc.line(), loc.column())),
            ));
        }
    };
    let mut found = NonConstant::default();
    terrane_hcl::visit::Visit::visit_expr(&mut found, &expr);
    if found.variables {
        return Err(Diagnostic::error(
            "Variables not allowed",
            "Variables may not be used here.",
            at,
        ));
    }
    if found.calls {
        return Err(Diagnostic::error(
            "Function calls not allowed",
            "Functions may not be called here.",
            at,
        ));
    }
    let scope = MapScope::new();
    let ctx = default_ctx(Path::new("."));
    let mut ev = Evaluator::new(&scope, &ctx, &index);
    let v = ev.eval(&expr);
    match ev.into_diagnostics().into_iter().next() {
        Some(d) => Err(d),
        None => Ok(v),
    }
}

/// What makes an expression non-constant: a variable or a function call.
#[derive(Default)]
struct NonConstant {
    variables: bool,
    calls: bool,
}

impl terrane_hcl::visit::Visit for NonConstant {
    fn visit_expr(&mut self, e: &terrane_hcl::expr::Expression) {
        match e {
            terrane_hcl::expr::Expression::Variable(_) => self.variables = true,
            terrane_hcl::expr::Expression::FuncCall(_) => self.calls = true,
            _ => {}
        }
        terrane_hcl::visit::visit_expr(self, e);
    }
}

/// Reads a `.tfvars` file (HCL attributes; `.tfvars.json` as JSON).
fn var_file(path: &Path) -> Result<BTreeMap<String, Value>, Vec<Diagnostic>> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| {
        vec![Diagnostic::error(
            "Failed to read variables file",
            format!("Given variables file {name} does not exist or cannot be read: {e}"),
            None,
        )]
    })?;
    let src = if name.ends_with(".json") {
        let j: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
            vec![Diagnostic::error(
                "Invalid JSON variables file",
                format!("{name}: {e}"),
                None,
            )]
        })?;
        let mut out = BTreeMap::new();
        for (k, v) in j.as_object().into_iter().flatten() {
            out.insert(k.clone(), terrane_value::json::decode_loose(v));
        }
        return Ok(out);
    } else {
        text
    };
    let (module, diags) = terrane_config::parse_str(&name, &format!("locals {{\n{src}\n}}\n"));
    if !diags.is_empty() {
        return Err(diags);
    }
    let scope = MapScope::new();
    let ctx = default_ctx(Path::new("."));
    let mut out = BTreeMap::new();
    let mut errs = Vec::new();
    for (k, e) in &module.locals {
        let (v, d) = terrane_eval::eval_expr(e, &scope, &ctx);
        errs.extend(d);
        out.insert(k.clone(), v);
    }
    if errs.is_empty() {
        Ok(out)
    } else {
        Err(errs)
    }
}

/// Root variable values, and warnings about what was given but not used.
pub type Collected = (BTreeMap<String, Value>, Vec<Diagnostic>);

/// All root variable values given for `module` from `dir` and `a`. A file's
/// value for a variable the module does not declare is a warning (and
/// dropped), a `-var` one an error, an environment one ignored: as
/// Terraform treats them.
pub fn collect(module: &Module, dir: &Path, a: &Args) -> Result<Collected, Vec<Diagnostic>> {
    collect_from(module, dir, a, std::env::vars())
}

/// The command line's `-var` and `-var-file` flags, kept for loading the
/// configuration wherever a command does it: module `source` and `version`
/// may read const variables (Terraform 1.15).
static GIVEN: std::sync::OnceLock<Vec<(String, Option<String>)>> = std::sync::OnceLock::new();

/// Remembers `a`'s variable flags for [`statics`] (once, at dispatch).
pub fn remember(a: &Args) {
    let flags = a
        .flags
        .iter()
        .filter(|(n, _)| n == "var" || n == "var-file")
        .cloned()
        .collect();
    let _ = GIVEN.set(flags);
}

/// How loading the configuration in `dir` reads the root module's const
/// variables: from the remembered flags, variable files and environment,
/// as [`collect`] reads every variable. Warnings are left to the
/// command's own [`collect`].
pub fn statics(dir: &Path) -> impl terrane_config::statics::Statics + '_ {
    terrane_eval::statics::InitStatics::new(move |m: &Module| {
        let a = Args {
            flags: GIVEN.get().cloned().unwrap_or_default(),
            ..Args::default()
        };
        collect(m, dir, &a).map(|(values, _warnings)| values)
    })
}

/// Keeps `file`'s values for declared variables, warning about the rest.
fn take_file(
    module: &Module,
    file: &Path,
    values: BTreeMap<String, Value>,
    out: &mut BTreeMap<String, Value>,
    warnings: &mut Vec<Diagnostic>,
) {
    for (k, v) in values {
        if module.variables.contains_key(&k) {
            out.insert(k, v);
        } else {
            let name = file.file_name().map_or_else(
                || file.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            );
            warnings.push(Diagnostic::warning(
                "Value for undeclared variable",
                format!("The root module does not declare a variable named {k:?} but a value was found in file {name:?}. If you meant to use this value, add a \"variable\" block to the configuration.\n\nTo silence these warnings, use TF_VAR_... environment variables to provide certain \"global\" settings to all configurations in your organization. To reduce the verbosity of these warnings, use the -compact-warnings option."),
                None,
            ));
        }
    }
}

/// `collect` with the process environment given as `env`.
fn collect_from(
    module: &Module,
    dir: &Path,
    a: &Args,
    env: impl IntoIterator<Item = (String, String)>,
) -> Result<Collected, Vec<Diagnostic>> {
    let mut out = BTreeMap::new();
    let mut errs = Vec::new();
    let mut warnings = Vec::new();
    for (k, v) in env {
        if let Some(name) = k.strip_prefix("TF_VAR_") {
            if module.variables.contains_key(name) {
                match literal_or_expr(module, name, &v, &format!("<value for var.{name}>")) {
                    Ok(x) => {
                        out.insert(name.to_string(), x);
                    }
                    Err(d) => errs.push(d),
                }
            }
        }
    }
    let mut files: Vec<std::path::PathBuf> = Vec::new();
    for f in ["terraform.tfvars", "terraform.tfvars.json"] {
        let p = dir.join(f);
        if p.exists() {
            files.push(p);
        }
    }
    let mut autos: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| {
                    p.to_string_lossy().ends_with(".auto.tfvars")
                        || p.to_string_lossy().ends_with(".auto.tfvars.json")
                })
                .collect()
        })
        .unwrap_or_default();
    autos.sort();
    files.extend(autos);
    for f in files {
        match var_file(&f) {
            Ok(m) => take_file(module, &f, m, &mut out, &mut warnings),
            Err(d) => errs.extend(d),
        }
    }
    for (name, value) in &a.flags {
        let Some(value) = value else { continue };
        match name.as_str() {
            "var-file" => match var_file(Path::new(value)) {
                Ok(m) => take_file(module, Path::new(value), m, &mut out, &mut warnings),
                Err(d) => errs.extend(d),
            },
            "var" => {
                let Some((k, v)) = value.split_once('=') else {
                    errs.push(Diagnostic::error("Invalid -var option", format!("The given -var option {value:?} is not correctly specified. Must be a variable name and value separated by an equals sign, like -var=\"key=value\"."), None));
                    continue;
                };
                let k = k.trim();
                if !module.variables.contains_key(k) {
                    errs.push(Diagnostic::error(
                        "Value for undeclared variable",
                        format!("A variable named {k:?} was assigned on the command line, but the root module does not declare a variable of that name. To use this value, add a \"variable\" block to the configuration."),
                        None,
                    ));
                    continue;
                }
                match literal_or_expr(module, k, v, &format!("<value for var.{k}>")) {
                    Ok(x) => {
                        out.insert(k.to_string(), x);
                    }
                    Err(d) => errs.push(d),
                }
            }
            _ => {}
        }
    }
    if errs.is_empty() {
        Ok((out, warnings))
    } else {
        Err(errs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One case: the variables declared, the files in the directory, the
    /// environment and the command line; the values wanted (rendered), or
    /// the summary of the first error.
    struct Case {
        name: &'static str,
        declared: &'static str,
        files: &'static [(&'static str, &'static str)],
        env: &'static [(&'static str, &'static str)],
        argv: &'static [&'static str],
        want: Result<&'static [(&'static str, &'static str)], &'static str>,
        /// How many warnings (undeclared variables in files).
        warnings: usize,
    }

    const DECLARED: &str = r#"
variable "a" { type = string }
variable "b" {}
variable "n" { type = number }
variable "tags" { type = map(string) }
variable "any" { type = any }
"#;

    fn check(c: &Case) {
        let dir = tempfile::tempdir().expect("temp dir");
        for (f, text) in c.files {
            std::fs::write(dir.path().join(f), text).expect("write");
        }
        let (module, diags) = terrane_config::parse_str("main.tf", c.declared);
        assert!(diags.is_empty(), "{}: {diags:?}", c.name);
        // A -var-file path is taken from the working directory, which is
        // the configuration's in the CLI: point it there.
        let argv: Vec<String> = c
            .argv
            .iter()
            .map(|a| match a.strip_prefix("-var-file=") {
                Some(f) => format!("-var-file={}", dir.path().join(f).display()),
                None => a.to_string(),
            })
            .collect();
        let args = match crate::args::parse_with(&argv, &|_| None) {
            Ok(crate::args::Parsed::Run(a)) => a,
            other => panic!("{}: {argv:?} does not parse: {other:?}", c.name),
        };
        let env = c.env.iter().map(|(k, v)| (k.to_string(), v.to_string()));
        let got = collect_from(&module, dir.path(), &args, env);
        match (&c.want, got) {
            (Ok(want), Ok((got, warnings))) => {
                let warned: Vec<&str> = warnings.iter().map(|d| d.summary.as_str()).collect();
                assert_eq!(warned.len(), c.warnings, "case {}: {warned:?}", c.name);
                let got: Vec<(String, String)> = got
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_string()))
                    .collect();
                let want: Vec<(String, String)> = want
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect();
                assert_eq!(got, want, "case {}", c.name);
            }
            (Err(summary), Err(ds)) => assert_eq!(
                ds.first().map(|d| d.summary.as_str()),
                Some(*summary),
                "case {}: {ds:?}",
                c.name
            ),
            (want, got) => panic!("case {}: wanted {want:?}, got {got:?}", c.name),
        }
    }

    #[test]
    fn collect_cases() {
        let cases = [
            Case {
                name: "nothing_given",
                declared: DECLARED,
                files: &[],
                env: &[],
                argv: &["plan"],
                warnings: 0,
                want: Ok(&[]),
            },
            Case {
                name: "terraform_tfvars",
                declared: DECLARED,
                files: &[(
                    "terraform.tfvars",
                    "a = \"x\"\nn = 7\ntags = { k = \"v\" }\n",
                )],
                env: &[],
                argv: &["plan"],
                warnings: 0,
                want: Ok(&[("a", "\"x\""), ("n", "7"), ("tags", "{ k = \"v\" }")]),
            },
            Case {
                name: "terraform_tfvars_json_after_hcl",
                declared: DECLARED,
                files: &[
                    ("terraform.tfvars", "a = \"hcl\"\nb = \"hcl\"\n"),
                    ("terraform.tfvars.json", r#"{"a": "json", "n": 2}"#),
                ],
                env: &[],
                argv: &["plan"],
                warnings: 0,
                want: Ok(&[("a", "\"json\""), ("b", "\"hcl\""), ("n", "2")]),
            },
            Case {
                name: "auto_tfvars_in_name_order_after_terraform_tfvars",
                declared: DECLARED,
                files: &[
                    ("terraform.tfvars", "a = \"t\"\nb = \"t\"\nn = 1\n"),
                    ("b.auto.tfvars", "b = \"b-auto\"\n"),
                    ("a.auto.tfvars", "a = \"a-auto\"\nb = \"a-auto\"\n"),
                ],
                env: &[],
                argv: &["plan"],
                warnings: 0,
                want: Ok(&[("a", "\"a-auto\""), ("b", "\"b-auto\""), ("n", "1")]),
            },
            Case {
                name: "files_that_are_not_auto_are_ignored",
                declared: DECLARED,
                files: &[
                    ("other.tfvars", "a = \"no\"\n"),
                    ("auto.tfvars.bak", "a = \"no\"\n"),
                ],
                env: &[],
                argv: &["plan"],
                warnings: 0,
                want: Ok(&[]),
            },
            Case {
                name: "env_string_is_literal",
                declared: DECLARED,
                files: &[],
                env: &[("TF_VAR_a", "{ not = hcl }"), ("TF_VAR_b", "1 + 1")],
                argv: &["plan"],
                warnings: 0,
                want: Ok(&[("a", "\"{ not = hcl }\""), ("b", "\"1 + 1\"")]),
            },
            Case {
                name: "env_typed_is_an_expression",
                declared: DECLARED,
                files: &[],
                env: &[("TF_VAR_n", "4"), ("TF_VAR_tags", "{ team = \"core\" }")],
                argv: &["plan"],
                warnings: 0,
                want: Ok(&[("n", "4"), ("tags", "{ team = \"core\" }")]),
            },
            Case {
                name: "env_for_undeclared_is_ignored",
                declared: DECLARED,
                files: &[],
                env: &[("TF_VAR_nope", "1"), ("TF_VARa", "1"), ("tf_var_a", "1")],
                argv: &["plan"],
                warnings: 0,
                want: Ok(&[]),
            },
            Case {
                name: "files_override_env",
                declared: DECLARED,
                files: &[("terraform.tfvars", "a = \"file\"\n")],
                env: &[("TF_VAR_a", "env"), ("TF_VAR_b", "env")],
                argv: &["plan"],
                warnings: 0,
                want: Ok(&[("a", "\"file\""), ("b", "\"env\"")]),
            },
            Case {
                name: "var_file_overrides_auto",
                declared: DECLARED,
                files: &[
                    ("x.auto.tfvars", "a = \"auto\"\n"),
                    ("given.tfvars", "a = \"given\"\n"),
                ],
                env: &[],
                argv: &["plan", "-var-file=given.tfvars"],
                warnings: 0,
                want: Ok(&[("a", "\"given\"")]),
            },
            Case {
                name: "var_and_var_file_in_command_line_order",
                declared: DECLARED,
                files: &[("one.tfvars", "a = \"file\"\nn = 6\n")],
                env: &[("TF_VAR_a", "env")],
                argv: &["plan", "-var=a=flag", "-var-file=one.tfvars", "-var", "n=8"],
                warnings: 0,
                want: Ok(&[("a", "\"file\""), ("n", "8")]),
            },
            Case {
                name: "var_value_keeps_equals_signs",
                declared: DECLARED,
                files: &[],
                env: &[],
                argv: &["plan", "-var=a=x=y"],
                warnings: 0,
                want: Ok(&[("a", "\"x=y\"")]),
            },
            Case {
                name: "var_any_is_an_expression",
                declared: DECLARED,
                files: &[],
                env: &[],
                argv: &["plan", "-var=any=[1, 2]"],
                warnings: 0,
                want: Ok(&[("any", "[1, 2]")]),
            },
            Case {
                name: "var_without_equals_is_refused",
                declared: DECLARED,
                files: &[],
                env: &[],
                argv: &["plan", "-var=a"],
                warnings: 0,
                want: Err("Invalid -var option"),
            },
            Case {
                name: "var_typed_refuses_variables",
                declared: DECLARED,
                files: &[],
                env: &[],
                argv: &["plan", "-var=n=var.a"],
                warnings: 0,
                want: Err("Variables not allowed"),
            },
            Case {
                name: "var_typed_refuses_function_calls",
                declared: DECLARED,
                files: &[],
                env: &[],
                argv: &["plan", "-var=tags=tomap({})"],
                warnings: 0,
                want: Err("Function calls not allowed"),
            },
            Case {
                name: "var_typed_bad_syntax",
                declared: DECLARED,
                files: &[],
                env: &[],
                argv: &["plan", "-var=n={"],
                warnings: 0,
                want: Err("Invalid expression"),
            },
            Case {
                name: "missing_var_file",
                declared: DECLARED,
                files: &[],
                env: &[],
                argv: &["plan", "-var-file=nowhere.tfvars"],
                warnings: 0,
                want: Err("Failed to read variables file"),
            },
            Case {
                name: "file_value_for_undeclared_is_a_warning",
                declared: DECLARED,
                files: &[
                    ("terraform.tfvars", "a = \"x\"\nnope = 1\n"),
                    ("extra.tfvars", "other = 2\n"),
                ],
                env: &[],
                argv: &["plan", "-var-file=extra.tfvars"],
                warnings: 2,
                want: Ok(&[("a", "\"x\"")]),
            },
            Case {
                name: "var_for_undeclared_is_refused",
                declared: DECLARED,
                files: &[],
                env: &[],
                argv: &["plan", "-var=nope=1"],
                warnings: 0,
                want: Err("Value for undeclared variable"),
            },
            Case {
                name: "bad_json_var_file",
                declared: DECLARED,
                files: &[("terraform.tfvars.json", "{ nope")],
                env: &[],
                argv: &["plan"],
                warnings: 0,
                want: Err("Invalid JSON variables file"),
            },
        ];
        for c in &cases {
            check(c);
        }
    }
}
