//! `init`: load the configuration, report the providers it uses and
//! record them in the dependency lock file, create `.terrane`.

use crate::session::{load, Ui};
use std::os::unix::fs::DirBuilderExt;
use std::path::Path;

pub async fn init(ui: &Ui, dir: &Path) -> u8 {
    if !crate::session::has_config_files(dir) {
        println!(
            "{}",
            ui.style.bold("terrane initialized in an empty directory!")
        );
        println!("\nThe directory has no configuration files. You may begin working with terrane\nonce you create configuration files (.tf) here.");
        return 0;
    }
    let engine = match load(ui, dir) {
        Ok(e) => e,
        Err(c) => return c,
    };
    println!("Initializing the backend...\nInitializing provider plugins...");
    let mut lockfile =
        terrane_engine::provider::discovery::lockfile::LockFile::load(dir).unwrap_or_default();
    let mut changed = false;
    for (name, addr) in engine.core.provider_addrs.iter() {
        if let Some(src) = engine.core.host.source(addr) {
            match &src {
                terrane_engine::provider::ProviderSource::Plugin(p) => {
                    println!("- Using {} from {}", addr.for_display(), p.binary.display());
                    if let Some((v, h1)) = src.lock_entry() {
                        lockfile.record(addr, v, None, h1);
                        changed = true;
                    }
                }
                terrane_engine::provider::ProviderSource::Builtin(_) => {
                    println!("- Using built-in {} ({name})", addr.for_display())
                }
            }
            // Fetch the schema once so a broken provider shows up now
            // (only for providers the configuration uses: a required
            // but unused one is not started, as Terraform does not).
            if let Err(e) = engine.core.host.schema(addr).await {
                engine.shutdown().await;
                return ui.error("Failed to load provider schema", e.to_string());
            }
        }
    }
    engine.shutdown().await;
    if changed {
        if let Err(e) = lockfile.save(dir) {
            return ui.error("Failed to write the dependency lock file", e.to_string());
        }
    }
    if let Err(e) = std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir.join(".terrane"))
    {
        return ui.error("Failed to create .terrane", e.to_string());
    }
    println!(
        "\n{}",
        ui.style.bold("terrane has been successfully initialized!")
    );
    0
}
