//! `validate`: the configuration's diagnostics, as text or `-json`.

use crate::session::Ui;
use std::path::Path;
use terrane_config::Severity;

pub async fn validate(ui: &Ui, dir: &Path) -> u8 {
    let diags = match crate::session::load_engine(dir) {
        Ok(engine) => {
            let d = engine.validate().await;
            engine.shutdown().await;
            d
        }
        Err(d) => d,
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
