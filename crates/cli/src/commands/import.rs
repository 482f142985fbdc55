//! `import ADDR ID`: import one object into the state under the lock.

use crate::args::Args;
use crate::session::{has_errors, load, lock, off_runtime, options, store_config, Ui};
use std::path::Path;
use terrane_engine::PlanMode;
use terrane_state::InstanceAddr;

pub async fn import(ui: &Ui, dir: &Path, a: &Args) -> u8 {
    let [addr, id] = a.positional.as_slice() else {
        return ui.error(
            "Invalid arguments",
            "The import command expects two arguments: ADDR ID.",
        );
    };
    let addr = match InstanceAddr::parse(addr) {
        Ok(x) => x,
        Err(e) => return ui.error("Invalid address", format!("{e:?}")),
    };
    if !crate::session::has_config_files(dir) {
        let here = std::env::current_dir().unwrap_or_else(|_| dir.to_path_buf());
        return ui.error("No terrane configuration files", format!("The directory {} does not contain any configuration files (.tf or .tf.json). To import into a configuration in another directory, use the global -chdir option.", here.display()));
    }
    let engine = match load(ui, dir) {
        Ok(e) => e,
        Err(c) => return c,
    };
    let opts = match options(ui, &engine, a, PlanMode::Normal) {
        Ok(o) => o,
        Err(c) => return c,
    };
    let config = match store_config(ui, dir, &engine.core.config.module) {
        Ok(c) => c,
        Err(c) => return c,
    };
    let started = off_runtime(|| {
        let store = crate::backendconf::open(&config)
            .map_err(|e| ui.error("Failed to open state", e.to_string()))?;
        let mut run = lock(ui, store.as_ref(), "OperationTypeImport", a)?;
        match run.snapshot() {
            Ok(s) => Ok((store, run, s)),
            Err(e) => {
                let _ = run.finish();
                Err(ui.error("Failed to read state", e.to_string()))
            }
        }
    });
    let (_store, run, snapshot) = match started {
        Ok(x) => x,
        Err(c) => return c,
    };
    println!("{}: Importing from ID {id:?}...", addr);
    let (diags, mut run) = engine.import(&snapshot, run, &addr, id, opts).await;
    engine.shutdown().await;
    // The imported object's id, for the refresh line as Terraform words it.
    let imported = off_runtime(|| {
        let id = run.snapshot().ok().and_then(|s| imported_id(&s, &addr));
        let _ = run.finish();
        id
    });
    ui.diags(&diags);
    if has_errors(&diags) {
        return 1;
    }
    let id = imported.map(|i| format!(" [id={i}]")).unwrap_or_default();
    println!(
        "{}\n  Prepared {} for import\n{}\n\n{}\n\nThe resources that were imported are shown above. These resources are now in\nyour terrane state and will henceforth be managed by terrane.",
        ui.style.bold(&format!("{addr}: Import prepared!")),
        addr.resource.ty,
        ui.style.bold(&format!("{addr}: Refreshing state...{id}")),
        ui.style.bold(&ui.style.bold("Import successful!"))
    );
    0
}

/// The `id` attribute of the object imported at `addr`, when it is a
/// known string (Terraform's UI shows it as `[id=...]`).
fn imported_id(s: &terrane_state::Snapshot, addr: &InstanceAddr) -> Option<String> {
    let object = s
        .resources
        .get(&addr.resource)?
        .instances
        .get(&addr.key)?
        .current
        .as_ref()?;
    object.attributes.get("id")?.as_str().map(str::to_string)
}
