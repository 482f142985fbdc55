//! `workspace list|show|new|select|delete`, as Terraform's: workspaces
//! live in the state's backend or store; the selected one is recorded in
//! the data directory's `environment` file (TF_WORKSPACE wins over it).

use crate::args::Args;
use crate::session::{open_store, workspace as current, Ui};
use std::path::Path;
use terrane_state::Snapshot;

/// A workspace name Terraform accepts: not empty, no `/` or `..`-like
/// path parts, nothing that must be escaped in a URL or a file name.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !name.starts_with('.')
}

fn one_name<'a>(ui: &Ui, sub: &str, a: &'a Args) -> Result<&'a str, u8> {
    let [name] = a.positional.as_slice() else {
        return Err(ui.error(
            "Expected a single argument: NAME",
            format!("Usage: terrane workspace {sub} NAME"),
        ));
    };
    if !valid_name(name) {
        return Err(ui.error(
            "Invalid workspace name",
            format!("{name:?}: a workspace name contains only letters, digits, '-', '_' and '.', and does not start with '.'."),
        ));
    }
    Ok(name)
}

pub fn workspace(ui: &Ui, dir: &Path, sub: &str, a: &Args) -> u8 {
    if sub == "show" {
        println!("{}", current());
        return 0;
    }
    let store = match open_store(ui, dir) {
        Ok(s) => s,
        Err(c) => return c,
    };
    let existing = match store.workspaces() {
        Ok(w) => w,
        Err(e) => return ui.error("Failed to list workspaces", e.to_string()),
    };
    let exists = |n: &str| n == "default" || existing.iter().any(|w| w == n);
    match sub {
        "list" => {
            let here = current();
            let mut names = existing.clone();
            if !names.iter().any(|n| n == "default") {
                names.insert(0, "default".into());
            }
            for n in names {
                let mark = if n == here { "*" } else { " " };
                println!("{mark} {n}");
            }
            println!();
            0
        }
        "new" => {
            let name = match one_name(ui, sub, a) {
                Ok(n) => n,
                Err(c) => return c,
            };
            if exists(name) {
                return ui.error(
                    "Workspace already exists",
                    format!("Workspace {name:?} already exists"),
                );
            }
            let start = match a.value("state") {
                None => Snapshot::empty(),
                Some(f) => match std::fs::read(dir.join(f))
                    .map_err(|e| e.to_string())
                    .and_then(|b| terrane_state::tfstate::import(&b).map_err(|e| e.to_string()))
                {
                    Ok(s) => s,
                    Err(e) => return ui.error("Invalid state file", format!("{f}: {e}")),
                },
            };
            // The workspace exists once its (empty) state is written.
            let info = terrane_state::LockInfo::new("OperationTypeInvalid", "workspace new");
            let mut run = match store.lock(name, info) {
                Ok(r) => r,
                Err(e) => return ui.error("Failed to create the workspace", e.to_string()),
            };
            let written = run.replace(&start).and_then(|_| run.finish());
            if let Err(e) = written {
                return ui.error("Failed to create the workspace", e.to_string());
            }
            if let Err(e) = crate::backendconf::select_workspace(dir, name) {
                return ui.error("Failed to select the workspace", e.to_string());
            }
            println!(
                "{}\n\nYou're now on a new, empty workspace. Workspaces isolate their state,\nso if you run \"terrane plan\" terrane will not see any existing state\nfor this configuration.",
                ui.style.bold(&format!("Created and switched to workspace {name:?}!"))
            );
            0
        }
        "select" => {
            let name = match one_name(ui, sub, a) {
                Ok(n) => n,
                Err(c) => return c,
            };
            if !exists(name) {
                if a.has("or-create") {
                    return workspace(ui, dir, "new", a);
                }
                return ui.error(
                    "Workspace doesn't exist",
                    format!("Workspace {name:?} doesn't exist.\n\nYou can create this workspace with the \"new\" subcommand or include the \"-or-create\" flag with the \"select\" subcommand."),
                );
            }
            if let Err(e) = crate::backendconf::select_workspace(dir, name) {
                return ui.error("Failed to select the workspace", e.to_string());
            }
            println!(
                "{}",
                ui.style.bold(&format!("Switched to workspace {name:?}."))
            );
            0
        }
        "delete" => {
            let name = match one_name(ui, sub, a) {
                Ok(n) => n,
                Err(c) => return c,
            };
            if name == "default" {
                return ui.error(
                    "Cannot delete the default workspace",
                    "The \"default\" workspace always exists.",
                );
            }
            if !exists(name) {
                return ui.error(
                    "Workspace doesn't exist",
                    format!("Workspace {name:?} doesn't exist."),
                );
            }
            if name == current() {
                return ui.error(
                    "Cannot delete the current workspace",
                    format!("Workspace {name:?} is your active workspace. You cannot delete the currently active workspace. Please switch to another workspace and try again."),
                );
            }
            // The store deletes it under its lock; its state must be
            // empty unless -force.
            let state = match store.snapshot(name) {
                Ok(s) => s,
                Err(e) => return ui.error("Failed to read state", e.to_string()),
            };
            if !state.resources.is_empty() && !a.has("force") {
                return ui.error(
                    "Workspace is not empty",
                    format!("Workspace {name:?} is currently tracking {} resources. Deleting it would leave them managed by nothing. Destroy them first, or delete with -force to forget them.", state.resources.len()),
                );
            }
            if let Err(e) = store.delete_workspace(name) {
                return ui.error("Failed to delete the workspace", e.to_string());
            }
            println!("{}", ui.style.bold(&format!("Deleted workspace {name:?}!")));
            0
        }
        other => unreachable!("workspace {other} is not in the command table"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn item5_workspace_names() {
        let cases = [
            ("plain", "dev", true),
            ("dashes_dots", "team-a.prod_1", true),
            ("empty", "", false),
            ("slash", "a/b", false),
            ("dot_first", ".x", false),
            ("space", "a b", false),
        ];
        for (name, ws, want) in cases {
            assert_eq!(super::valid_name(ws), want, "case {name}");
        }
    }
}
