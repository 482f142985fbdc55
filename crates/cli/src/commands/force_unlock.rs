//! `force-unlock LOCK_ID`: release a stuck workspace lock.

use crate::args::Args;
use crate::session::{open_store, workspace, Ui};
use std::path::Path;

pub fn force_unlock(ui: &Ui, dir: &Path, a: &Args) -> u8 {
    let Some(id) = a.positional.first() else {
        return ui.error("Missing lock ID", "Usage: terrane force-unlock LOCK_ID");
    };
    let store = match open_store(ui, dir) {
        Ok(s) => s,
        Err(c) => return c,
    };
    match store.force_unlock(&workspace(), id) {
        Ok(()) => {
            println!(
                "{}",
                ui.style
                    .bold("terrane state has been successfully unlocked!")
            );
            0
        }
        Err(e) => ui.error("Failed to unlock state", e.to_string()),
    }
}
