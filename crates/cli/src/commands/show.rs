//! `show`: the state or a saved plan, as text or `-json`.

use crate::args::Args;
use crate::session::{off_runtime, open_store, Ui};
use std::path::Path;
use terrane_render::{json, planfile};

pub async fn show(ui: &Ui, dir: &Path, a: &Args) -> u8 {
    if let Some(f) = a.positional.first() {
        let bytes = match std::fs::read(f) {
            Ok(b) => b,
            Err(e) => return ui.error("Failed to read the plan file", format!("{f}: {e}")),
        };
        // A sealed plan needs the store's key.
        let store = if planfile::is_sealed(&bytes) {
            match off_runtime(|| open_store(ui, dir)) {
                Ok(s) => Some(s),
                Err(c) => return c,
            }
        } else {
            None
        };
        let mut plan = match planfile::read(&bytes, store.as_ref().and_then(|s| s.cipher())) {
            Ok(p) => p,
            Err(e) => return ui.error("Failed to read the plan file", format!("{f}: {e}")),
        };
        let (config, _) = terrane_config::load_config(dir, &crate::vars::statics(dir));
        if ui.json {
            println!("{}", json::plan(&plan, &config));
        } else {
            // The plan file has no schemas: load them as `show` of the
            // state does, so nested blocks print as blocks.
            if let Ok(engine) = crate::session::load_engine(dir) {
                for c in plan.changes.iter_mut().chain(plan.drift.iter_mut()) {
                    if c.schema.is_none() {
                        c.schema = engine.change_schema(c).await;
                    }
                }
                engine.shutdown().await;
            }
            ui.print_plan(&plan);
        }
        return 0;
    }
    if ui.json {
        // Streamed from the store one object at a time: neither the state
        // nor the document is held whole (issue 19). A write that fails (a
        // reader gone) ends it quietly, as `println!` does here
        // (crate::out).
        return off_runtime(|| {
            let store = open_store(ui, dir)?;
            use std::io::Write;
            let mut w = std::io::BufWriter::new(std::io::stdout().lock());
            match json::write_store_state(store.as_ref(), &crate::session::workspace(), &mut w) {
                Ok(written) => {
                    let _ = written.and_then(|()| w.flush());
                    Ok(0)
                }
                Err(e) => {
                    let _ = w.flush();
                    Err(ui.error("Failed to read state", e.to_string()))
                }
            }
        })
        .unwrap_or_else(|c| c);
    }
    let s = match crate::session::read_state(ui, dir) {
        Ok(s) => s,
        Err(c) => return c,
    };
    super::state::show::show_all(dir, &s).await;
    0
}
