//! `get [-update]`: install the configuration's modules (as `init` does,
//! without the providers or the backend).

use crate::args::Args;
use crate::session::Ui;
use std::path::Path;
use terrane_engine::provider::discovery::cliconfig::CliConfig;

pub async fn get(ui: &Ui, dir: &Path, a: &Args) -> u8 {
    let cli = match CliConfig::load_from_env() {
        Ok(c) => c,
        Err(e) => return ui.error("Invalid CLI configuration", e.to_string()),
    };
    match crate::modinstall::install_modules(ui, dir, &cli, a.has("update"), false).await {
        Ok(()) => 0,
        Err(code) => code,
    }
}
