//! `validate`: the configuration's diagnostics, as text or `-json`.
//! Everything that needs no provider schema is checked first; the
//! provider-dependent checks run when every provider the configuration
//! needs is installed (as Terraform's validate after `init`). When some
//! are not, their resources validate as unknown values, so locals,
//! outputs and everything else that needs no schema is still evaluated.
//! The test files (`*.tftest.hcl` here and in `tests/`) are loaded with
//! the configuration, as Terraform's validate loads them (unless
//! `-no-tests`): an error in either stops before the deeper checks.

use crate::args::Args;
use crate::session::Ui;
use std::path::Path;
use terrane_config::Severity;
use terrane_engine::Engine;

pub async fn validate(ui: &Ui, dir: &Path, a: &Args) -> u8 {
    let (config, mut load) = terrane_config::load_config(dir, &crate::vars::statics(dir));
    let tests = if a.has("no-tests") {
        Vec::new()
    } else {
        let test_dir = a.value("test-directory").unwrap_or("tests");
        terrane_config::check_test_files(dir, test_dir, Some(&config))
    };
    let failed = |d: &[terrane_config::Diagnostic]| d.iter().any(|d| d.severity == Severity::Error);
    let diags = if failed(&load) || failed(&tests) {
        // Loading failed: the configuration's own load diagnostics and the
        // test files', nothing deeper.
        load.extend(tests);
        load
    } else {
        let mut d = load_and_validate(ui, dir).await;
        d.extend(tests);
        d
    };
    report(ui, &diags)
}

async fn load_and_validate(ui: &Ui, dir: &Path) -> Vec<terrane_config::Diagnostic> {
    let statics = crate::vars::statics(dir);
    match Engine::load_for_validate(dir, &terrane_builtins::standard(), &statics) {
        Ok(engine) => {
            let mut d = engine.warnings.clone();
            d.extend(engine.validate().await);
            engine.shutdown().await;
            let missing = engine.core.absent.len();
            if missing > 0 && !ui.json {
                eprintln!(
                    "Note: {missing} provider(s) are not installed, so the checks that need provider schemas were skipped. Run \"terrane init\" to install them."
                );
            }
            d
        }
        Err(d) => d,
    }
}

fn report(ui: &Ui, diags: &[terrane_config::Diagnostic]) -> u8 {
    let errors = diags
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    if ui.json {
        let list: Vec<serde_json::Value> = diags
            .iter()
            .map(terrane_config::Diagnostic::to_json)
            .collect();
        println!(
            "{}",
            serde_json::json!({"format_version": "1.0", "valid": errors == 0, "error_count": errors, "warning_count": diags.len() - errors, "diagnostics": list})
        );
    } else if errors == 0 {
        ui.diags(diags);
        println!("{}", ui.style.bold("Success! The configuration is valid."));
    } else {
        ui.diags(diags);
    }
    u8::from(errors > 0)
}
