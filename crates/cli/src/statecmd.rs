//! `state list|rm|mv|pull|push` (`state show` is in `stateshow`).

use crate::args::Args;
use crate::commands::{lock, open_store, Ui};
use std::path::Path;
use terrane_state::{Change, InstanceAddr, Snapshot};

pub(crate) fn workspace() -> String {
    std::env::var("TF_WORKSPACE").ok().filter(|w| !w.is_empty()).unwrap_or_else(|| "default".into())
}

/// Instances of `s` whose address matches `pattern` (an instance, or a
/// resource meaning all its instances, or a module prefix).
pub(crate) fn matching(s: &Snapshot, pattern: &str) -> Vec<InstanceAddr> {
    let mut out = Vec::new();
    for (raddr, r) in &s.resources {
        for key in r.instances.keys() {
            let a = raddr.instance(key.clone());
            let text = a.to_string();
            let res = raddr.to_string();
            if text == pattern || res == pattern || text.starts_with(&format!("{pattern}.")) || text.starts_with(&format!("{pattern}[")) {
                out.push(a);
            }
        }
    }
    out
}

pub fn run(ui: &Ui, dir: &Path, sub: &str, a: &Args) -> u8 {
    let store = match open_store(dir) {
        Ok(s) => s,
        Err(e) => return ui.error("Failed to open state", e),
    };
    let read = || store.snapshot(&workspace()).map_err(|e| ui.error("Failed to read state", e.to_string()));
    match sub {
        "list" => {
            let s = match read() {
                Ok(s) => s,
                Err(c) => return c,
            };
            for (raddr, r) in &s.resources {
                for key in r.instances.keys() {
                    let addr = raddr.instance(key.clone()).to_string();
                    if a.positional.is_empty() || a.positional.iter().any(|p| addr == *p || addr.starts_with(&format!("{p}[")) || addr.starts_with(&format!("{p}."))) {
                        println!("{addr}");
                    }
                }
            }
            0
        }
        "pull" => {
            let s = match read() {
                Ok(s) => s,
                Err(c) => return c,
            };
            // Terraform's format records every upstream dependency. A
            // closed pipe (`| head`) is not an error worth a panic.
            let text = terrane_state::tfstate::export(&terrane_engine::model::with_closure_dependencies(&s));
            let _ = std::io::Write::write_all(&mut std::io::stdout(), text.as_bytes());
            0
        }
        "rm" | "mv" | "push" => {
            let mut run = match lock(ui, store.as_ref(), "OperationTypeInvalid") {
                Ok(r) => r,
                Err(c) => return c,
            };
            let code = mutate(ui, run.as_mut(), sub, a);
            if let Err(e) = run.finish() {
                return ui.error("Failed to release the state lock", e.to_string());
            }
            code
        }
        other => ui.error("Unknown state subcommand", format!("{other:?} is not one of list, show, rm, mv, pull, push.")),
    }
}

fn mutate(ui: &Ui, run: &mut dyn terrane_state::Run, sub: &str, a: &Args) -> u8 {
    let s = match run.snapshot() {
        Ok(s) => s,
        Err(e) => return ui.error("Failed to read state", e.to_string()),
    };
    match sub {
        "rm" => {
            let mut changes = Vec::new();
            for p in &a.positional {
                let found = matching(&s, p);
                if found.is_empty() {
                    return ui.error("Invalid target address", format!("No matching objects found. To view the available instances, use \"terrane state list\". Please modify the address to reference a specific instance: {p}"));
                }
                for x in found {
                    if let Some(inst) = s.resources.get(&x.resource).and_then(|r| r.instances.get(&x.key)) {
                        for k in inst.deposed.keys() {
                            changes.push(Change::RemoveObject { addr: x.clone(), deposed: Some(k.clone()) });
                        }
                    }
                    changes.push(Change::RemoveObject { addr: x.clone(), deposed: None });
                    println!("Removed {x}");
                }
            }
            match run.persist(&changes) {
                Ok(_) => {
                    println!("Successfully removed {} resource instance(s).", a.positional.len().max(1));
                    0
                }
                Err(e) => ui.error("Failed to persist state", e.to_string()),
            }
        }
        "mv" => {
            let [src, dst] = a.positional.as_slice() else { return ui.error("Invalid arguments", "Usage: terrane state mv SOURCE DESTINATION") };
            let (Ok(from), Ok(to)) = (InstanceAddr::parse(src), InstanceAddr::parse(dst)) else {
                return ui.error("Invalid address", format!("{src:?} or {dst:?} is not a resource instance address."));
            };
            let Some(o) = s.object(&from, None).cloned() else {
                return ui.error("Invalid source address", format!("Cannot move {src}: does not match anything in the current state."));
            };
            if s.object(&to, None).is_some() {
                return ui.error("Invalid target address", format!("Cannot move to {dst}: there is already a resource instance at that address in the current state."));
            }
            let provider = s.resources.get(&from.resource).map(|r| r.provider.clone()).unwrap_or_default();
            let changes = vec![Change::SetObject { addr: to.clone(), deposed: None, provider, object: o }, Change::RemoveObject { addr: from.clone(), deposed: None }];
            match run.persist(&changes) {
                Ok(_) => {
                    println!("Move {src:?} to {dst:?}\nSuccessfully moved 1 object(s).");
                    0
                }
                Err(e) => ui.error("Failed to persist state", e.to_string()),
            }
        }
        "push" => {
            let Some(f) = a.positional.first() else { return ui.error("Missing file", "Usage: terrane state push FILE") };
            let bytes = if f == "-" {
                let mut b = Vec::new();
                let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut b);
                b
            } else {
                match std::fs::read(f) {
                    Ok(b) => b,
                    Err(e) => return ui.error("Failed to read state file", format!("{f}: {e}")),
                }
            };
            // An emergency file sealed because state encryption is on.
            let bytes = match crate::errored::open(bytes) {
                Ok(b) => b,
                Err(e) => return ui.error("Invalid state file", format!("{f}: {e}")),
            };
            let incoming = match terrane_state::tfstate::import(&bytes) {
                Ok(x) => x,
                Err(e) => return ui.error("Invalid state file", e.to_string()),
            };
            if !a.has("force") && !s.resources.is_empty() && incoming.lineage != s.lineage {
                return ui.error("Failed to write state", "cannot import state with lineage different from the current state; use -force to overwrite.");
            }
            match run.replace(&incoming) {
                Ok(_) => 0,
                Err(e) => ui.error("Failed to write state", e.to_string()),
            }
        }
        _ => 1,
    }
}
