//! `validate`: the configuration's diagnostics, as text or `-json`.
//! Everything that needs no provider schema is checked first; the
//! provider-dependent checks run when every provider the configuration
//! needs is installed (as Terraform's validate after `init`). When some
//! are not, the configuration's own diagnostics are the result.

use crate::session::Ui;
use std::path::Path;
use terrane_config::{DiagId, Diagnostic, Severity};

pub async fn validate(ui: &Ui, dir: &Path) -> u8 {
    let diags = match crate::session::load_engine(dir) {
        Ok(engine) => {
            let mut d = engine.warnings.clone();
            d.extend(engine.validate().await);
            engine.shutdown().await;
            d
        }
        Err(d) => without_providers(ui, d),
    };
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
        ui.diags(&diags);
        println!("{}", ui.style.bold("Success! The configuration is valid."));
    } else {
        ui.diags(&diags);
    }
    u8::from(errors > 0)
}

/// When loading failed only because providers are not installed, the
/// diagnostics of the configuration itself (loading, references and
/// cycles all ran before providers were looked up).
fn without_providers(ui: &Ui, mut diags: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let missing = diags
        .iter()
        .filter(|d| d.is(DiagId::ProviderNotInstalled))
        .count();
    let other_errors = diags
        .iter()
        .any(|d| d.is_error() && !d.is(DiagId::ProviderNotInstalled));
    if missing == 0 || other_errors {
        return diags;
    }
    diags.retain(|d| !d.is(DiagId::ProviderNotInstalled));
    if !ui.json {
        eprintln!(
            "Note: {missing} provider(s) are not installed, so the checks that need provider schemas were skipped. Run \"terrane init\" to install them."
        );
    }
    diags
}
