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
    let expr = match hcl_edit::parser::parse_expr(raw) {
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
    hcl_edit::visit::Visit::visit_expr(&mut found, &expr);
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

impl hcl_edit::visit::Visit for NonConstant {
    fn visit_expr(&mut self, e: &hcl_edit::expr::Expression) {
        match e {
            hcl_edit::expr::Expression::Variable(_) => self.variables = true,
            hcl_edit::expr::Expression::FuncCall(_) => self.calls = true,
            _ => {}
        }
        hcl_edit::visit::visit_expr(self, e);
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

/// All root variable values given for `module` from `dir` and `a`.
pub fn collect(
    module: &Module,
    dir: &Path,
    a: &Args,
) -> Result<BTreeMap<String, Value>, Vec<Diagnostic>> {
    let mut out = BTreeMap::new();
    let mut errs = Vec::new();
    for (k, v) in std::env::vars() {
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
            Ok(m) => out.extend(m),
            Err(d) => errs.extend(d),
        }
    }
    for (name, value) in &a.flags {
        let Some(value) = value else { continue };
        match name.as_str() {
            "var-file" => match var_file(Path::new(value)) {
                Ok(m) => out.extend(m),
                Err(d) => errs.extend(d),
            },
            "var" => {
                let Some((k, v)) = value.split_once('=') else {
                    errs.push(Diagnostic::error("Invalid -var option", format!("The given -var option {value:?} is not correctly specified. Must be a variable name and value separated by an equals sign, like -var=\"key=value\"."), None));
                    continue;
                };
                let k = k.trim();
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
        Ok(out)
    } else {
        Err(errs)
    }
}
