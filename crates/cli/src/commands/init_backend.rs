//! `init`'s backend step: record the configured backend (merged with
//! `-backend-config`) as Terraform does, and with `-migrate-state` copy
//! every workspace from the backend or store used before to the one now
//! configured, lineage and serial kept, the source's lock held meanwhile.
//!
//! Where the state was before: the backend recorded by the last init;
//! else, without one, terrane's own store (its state block, or the
//! defaults) when it exists, or Terraform's `terraform.tfstate` (the
//! implicit local backend) when that exists and terrane's store does not.

use crate::args::Args;
use crate::backendconf::{self, Recorded};
use crate::session::Ui;
use serde_json::Value as Json;
use std::path::Path;
use terrane_config::{Diagnostic, Module};
use terrane_state::{LockInfo, StateStore, StoreConfig, StoreLocation};

fn fail(ui: &Ui, d: Diagnostic) -> u8 {
    ui.diags(&[d]);
    1
}

/// Where the state is now configured to be, and what to record.
fn configured(
    ui: &Ui,
    dir: &Path,
    a: &Args,
    module: &Module,
) -> Result<(StoreConfig, Option<Recorded>), u8> {
    crate::stateconf::check_conflict(module).map_err(|d| fail(ui, d))?;
    let extra =
        backendconf::backend_config(dir, &a.values("backend-config")).map_err(|d| fail(ui, d))?;
    let Some(b) = &module.backend else {
        if !extra.is_empty() {
            return Err(ui.error("Invalid -backend-config", "-backend-config was given, but the configuration has no backend block to add it to."));
        }
        let config =
            crate::stateconf::store_config(dir, module.state.as_ref()).map_err(|d| fail(ui, d))?;
        return Ok((config, None));
    };
    let mut config: std::collections::BTreeMap<String, Json> = b
        .settings
        .iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    config.extend(extra);
    let rec = Recorded {
        kind: b.ty.clone(),
        config,
    };
    // Settings are checked now, at the block's line.
    if let Err(e) = terrane_backend::open(&rec.kind, &rec.config) {
        return Err(fail(
            ui,
            Diagnostic::error(
                "Failed to configure the backend",
                // The error names the backend itself.
                e.to_string(),
                b.range.clone(),
            ),
        ));
    }
    Ok((
        StoreConfig {
            location: backendconf::location(dir, &rec),
            encryption: None,
        },
        Some(rec),
    ))
}

/// Whether a store holds any state worth copying.
fn holds_state(store: &dyn StateStore) -> terrane_state::Result<bool> {
    for ws in store.workspaces()? {
        let s = store.snapshot(&ws)?;
        if !s.resources.is_empty() || !s.outputs.is_empty() || s.serial > 0 {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Copies every workspace of `from` to `to`.
fn migrate(from: &dyn StateStore, to: &dyn StateStore, force: bool) -> Result<Vec<String>, String> {
    let mut copied = Vec::new();
    for ws in from.workspaces().map_err(|e| e.to_string())? {
        let src = from
            .lock(
                &ws,
                LockInfo::new("OperationTypeMigrate", "init -migrate-state"),
            )
            .map_err(|e| format!("source workspace {ws:?}: {e}"))?;
        let mut src = src;
        let snap = src.snapshot().map_err(|e| e.to_string())?;
        if snap.resources.is_empty() && snap.outputs.is_empty() && snap.serial == 0 {
            src.finish().map_err(|e| e.to_string())?;
            continue;
        }
        let mut dst = to
            .lock(
                &ws,
                LockInfo::new("OperationTypeMigrate", "init -migrate-state"),
            )
            .map_err(|e| format!("destination workspace {ws:?}: {e}"))?;
        let cur = dst.snapshot().map_err(|e| e.to_string())?;
        let occupied = !cur.resources.is_empty() || !cur.outputs.is_empty();
        if occupied && cur.lineage != snap.lineage && !force {
            return Err(format!("the destination workspace {ws:?} already holds another state (lineage {}, serial {}); nothing was copied to it. Use -force-copy to overwrite it with the source's (lineage {}, serial {}).", cur.lineage, cur.serial, snap.lineage, snap.serial));
        }
        if occupied && cur.lineage == snap.lineage && cur.serial > snap.serial && !force {
            return Err(format!("the destination workspace {ws:?} holds a newer serial ({}) of the same state than the source ({}); nothing was copied to it. Use -force-copy to overwrite it.", cur.serial, snap.serial));
        }
        dst.replace(&snap).map_err(|e| e.to_string())?;
        dst.finish().map_err(|e| e.to_string())?;
        src.finish().map_err(|e| e.to_string())?;
        copied.push(ws);
    }
    Ok(copied)
}

fn describe(config: &StoreConfig) -> String {
    match &config.location {
        StoreLocation::Sqlite(p) => format!("terrane's SQLite store ({})", p.display()),
        StoreLocation::Postgres { schema, .. } => {
            format!("terrane's PostgreSQL store (schema {schema})")
        }
        StoreLocation::Backend { kind, .. } => format!("the {kind:?} backend"),
    }
}

/// The store the state was in before this init, if any holds state.
fn previous(
    dir: &Path,
    module: &Module,
    old: Option<&Recorded>,
    migrating: bool,
) -> Result<Option<StoreConfig>, Diagnostic> {
    if let Some(r) = old {
        return Ok(Some(StoreConfig {
            location: backendconf::location(dir, r),
            encryption: None,
        }));
    }
    let own = crate::stateconf::store_config(dir, module.state.as_ref())?;
    let own_exists = match &own.location {
        StoreLocation::Sqlite(p) => p.exists(),
        _ => true,
    };
    if own_exists {
        return Ok(Some(own));
    }
    if dir.join("terraform.tfstate").exists() && migrating {
        let implicit = Recorded {
            kind: "local".into(),
            config: Default::default(),
        };
        return Ok(Some(StoreConfig {
            location: backendconf::location(dir, &implicit),
            encryption: None,
        }));
    }
    Ok(None)
}

/// Lists the workspaces of the backend `config` names, as Terraform's init
/// does, so a missing bucket or refused credentials stop `init` (before
/// anything is recorded) rather than the first plan.
fn reachable(ui: &Ui, config: &StoreConfig) -> Result<(), u8> {
    let StoreLocation::Backend { kind, settings, .. } = &config.location else {
        return Ok(());
    };
    if kind == "local" {
        return Ok(());
    }
    let listed = crate::session::off_runtime(|| {
        terrane_backend::open(kind, settings).and_then(|b| b.workspaces())
    });
    listed
        .map(|_| ())
        .map_err(|e| ui.error("Failed to get existing workspaces", e.to_string()))
}

/// The backend step of init; prints what it did.
pub fn init_backend(ui: &Ui, dir: &Path, a: &Args, module: &Module) -> Result<(), u8> {
    if a.is_false("backend") {
        return Ok(());
    }
    let (new_config, new_rec) = configured(ui, dir, a, module)?;
    let old_rec = backendconf::recorded(dir).map_err(|d| fail(ui, d))?;
    if let Some(new) = &new_rec {
        let given: Vec<&str> = terrane_backend::secrets(&new.kind)
            .iter()
            .filter(|s| {
                let in_block = module
                    .backend
                    .as_ref()
                    .is_some_and(|b| b.settings.get(**s).is_some_and(|v| !v.is_null()));
                !in_block && new.config.contains_key(**s)
            })
            .copied()
            .collect();
        if !given.is_empty() {
            ui.diags(&[Diagnostic::warning(
                "Secret backend settings are not recorded",
                format!("{} came from -backend-config: terrane does not write secrets into {} (Terraform does, in plaintext), so later commands will not have them. Give them in the environment instead (for example AWS_SECRET_ACCESS_KEY, GOOGLE_OAUTH_ACCESS_TOKEN, ARM_ACCESS_KEY).", given.join(", "), backendconf::data_dir(dir).join("terraform.tfstate").display()),
                None,
            )]);
        }
    }
    reachable(ui, &new_config)?;
    if let (Some(old), Some(new)) = (&old_rec, &new_rec) {
        if backendconf::same_record(old, new) {
            // Unchanged: the record stays as written (by Terraform, maybe).
            println!("Using the previously initialized {:?} backend.", new.kind);
            return Ok(());
        }
    }
    let reconfigure = a.has("reconfigure");
    let from = if reconfigure {
        None
    } else {
        previous(dir, module, old_rec.as_ref(), a.has("migrate-state")).map_err(|d| fail(ui, d))?
    };
    let from = from.filter(|f| f.location != new_config.location);
    if let Some(from_config) = from {
        let opened = crate::session::off_runtime(|| -> Result<Option<String>, String> {
            let src = backendconf::open(&from_config).map_err(|e| e.to_string())?;
            if !holds_state(src.as_ref()).map_err(|e| e.to_string())? {
                return Ok(None);
            }
            if !a.has("migrate-state") {
                return Ok(Some(String::new()));
            }
            let dst = backendconf::open(&new_config).map_err(|e| e.to_string())?;
            let copied = migrate(src.as_ref(), dst.as_ref(), a.has("force-copy"))?;
            Ok(Some(copied.join(", ")))
        });
        match opened {
            Err(e) => {
                return Err(ui.error(
                    "Failed to migrate the state",
                    format!(
                        "From {} to {}: {e}",
                        describe(&from_config),
                        describe(&new_config)
                    ),
                ))
            }
            Ok(Some(ws)) if ws.is_empty() && !a.has("migrate-state") => {
                return Err(ui.error(
                    "Backend configuration changed",
                    format!("The state is in {}, and the configuration now keeps it in {}. Run \"terrane init -migrate-state\" to copy every workspace over (lineage and serial kept), or \"terrane init -reconfigure\" to use the new location without copying.", describe(&from_config), describe(&new_config)),
                ));
            }
            Ok(Some(ws)) => println!(
                "Copied the state of workspace(s) {ws} from {} to {}.",
                describe(&from_config),
                describe(&new_config)
            ),
            Ok(None) => {}
        }
    }
    let block = module
        .backend
        .as_ref()
        .map(|b| b.settings.clone())
        .unwrap_or_default();
    if let Err(e) = backendconf::write_record(dir, new_rec.as_ref(), &block) {
        return Err(ui.error("Failed to record the backend", e.to_string()));
    }
    if let Some(r) = &new_rec {
        println!(
            "\n{}",
            ui.style.bold(&format!(
                "Successfully configured the backend {:?}!",
                r.kind
            ))
        );
    }
    Ok(())
}
