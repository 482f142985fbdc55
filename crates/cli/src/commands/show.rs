//! `show`: the state or a saved plan, as text or `-json`.

use crate::args::Args;
use crate::session::{off_runtime, open_store, Ui};
use std::path::Path;
use terrane_render::{human, json, planfile};

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
        let plan = match planfile::read(&bytes, store.as_ref().and_then(|s| s.cipher())) {
            Ok(p) => p,
            Err(e) => return ui.error("Failed to read the plan file", format!("{f}: {e}")),
        };
        let (config, _) = terrane_config::load_config(dir);
        if ui.json {
            println!("{}", json::plan(&plan, &config));
        } else {
            print!("{}", human::plan(&ui.style, &plan));
        }
        return 0;
    }
    let s = match crate::session::read_state(ui, dir) {
        Ok(s) => s,
        Err(c) => return c,
    };
    if ui.json {
        println!("{}", json::state(&s));
    } else {
        super::state::show::show_all(dir, &s).await;
    }
    0
}
