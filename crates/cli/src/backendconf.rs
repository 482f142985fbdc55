//! Terraform's `backend "KIND" { }` block, as Terraform records it.
//!
//! `init` merges the block's settings with `-backend-config` (files of
//! `key = value` lines, or `key=value`) and records the result where
//! Terraform does, `<data dir>/terraform.tfstate` (`{"version": 3,
//! "backend": {"type", "config", "hash"}}`, 0600: it may hold
//! credentials). Every other command uses the recorded settings, after
//! checking that the block still says what was recorded; a block never
//! initialized, or changed since, is an error at its line ("run terrane
//! init"), and a recorded backend whose block was removed is an error too:
//! the state is there, and starting from terrane's empty store would plan
//! to create everything again. The data directory is `TF_DATA_DIR`, else
//! `.terraform`; the current workspace's name is in its `environment` file.

use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use terrane_config::{Backend, Diagnostic};

/// The data directory of the working directory `dir`.
pub fn data_dir(dir: &Path) -> PathBuf {
    match std::env::var("TF_DATA_DIR") {
        Ok(d) if !d.is_empty() => dir.join(d),
        _ => dir.join(".terraform"),
    }
}

/// A backend as `init` recorded it.
#[derive(Clone, Debug, PartialEq)]
pub struct Recorded {
    pub kind: String,
    /// Settings with no value (Terraform records every attribute) dropped.
    pub config: BTreeMap<String, Json>,
}

fn record_path(dir: &Path) -> PathBuf {
    data_dir(dir).join("terraform.tfstate")
}

/// The recorded backend, if any; an error naming the file when it is
/// unreadable (never treated as "no backend").
pub fn recorded(dir: &Path) -> Result<Option<Recorded>, Diagnostic> {
    let path = record_path(dir);
    let text = match std::fs::read(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(Diagnostic::error(
                "Failed to read the backend record",
                format!("{}: {e}", path.display()),
                None,
            ))
        }
    };
    let bad = |why: String| {
        Diagnostic::error(
            "Invalid backend record",
            format!("{}: {why}. Run \"terrane init -reconfigure\" to record the configured backend again.", path.display()),
            None,
        )
    };
    let v: Json = serde_json::from_slice(&text).map_err(|e| bad(e.to_string()))?;
    let Some(b) = v.get("backend").filter(|b| !b.is_null()) else {
        return Ok(None);
    };
    let kind = b
        .get("type")
        .and_then(Json::as_str)
        .ok_or_else(|| bad("the backend has no type".into()))?
        .to_string();
    let config = match b.get("config") {
        Some(Json::Object(m)) => m
            .iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        None | Some(Json::Null) => BTreeMap::new(),
        Some(_) => return Err(bad("the backend's config is not an object".into())),
    };
    Ok(Some(Recorded { kind, config }))
}

/// The record's `hash`: Terraform's hash of the block's own settings
/// (`-backend-config` values are not part of it), so Terraform accepts a
/// record terrane wrote; for a kind without a known schema, FNV-1a of the
/// settings' JSON.
fn hash(kind: &str, block: &BTreeMap<String, Json>) -> u64 {
    if let Some(schema) = terrane_backend::schema(kind) {
        return terrane_backend::terraform_hash(kind, schema, block);
    }
    let text = serde_json::to_string(block).unwrap_or_default();
    let mut h: u32 = 0x811c_9dc5;
    for b in text.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    u64::from(h)
}

/// `rec` without the settings that hold secrets (`terrane_backend::secrets`):
/// what terrane writes into the record.
pub fn without_secrets(rec: &Recorded) -> Recorded {
    let secrets = terrane_backend::secrets(&rec.kind);
    Recorded {
        kind: rec.kind.clone(),
        config: rec
            .config
            .iter()
            .filter(|(k, _)| !secrets.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    }
}

/// Records `rec` (or removes the record when None), 0600 in a 0700 data
/// directory, as Terraform does: every attribute of the backend's schema
/// (null when unset), and the hash of `block`, the block's own settings.
/// Unlike Terraform, secret settings are left out (null): later commands
/// take them from the block again, or from the environment.
pub fn write_record(
    dir: &Path,
    rec: Option<&Recorded>,
    block: &BTreeMap<String, Json>,
) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let path = record_path(dir);
    let Some(rec) = rec else {
        return match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        };
    };
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(data_dir(dir))?;
    let mut config: serde_json::Map<String, Json> = terrane_backend::schema(&rec.kind)
        .unwrap_or_default()
        .iter()
        .map(|(a, _)| (a.to_string(), Json::Null))
        .collect();
    let rec = without_secrets(rec);
    config.extend(rec.config.iter().map(|(k, v)| (k.clone(), v.clone())));
    let doc = json!({
        "version": 3,
        "terraform_version": terrane_state::TERRAFORM_VERSION,
        "serial": 1,
        "lineage": uuid_like(),
        "backend": { "type": rec.kind, "config": config, "hash": hash(&rec.kind, block) },
    });
    let tmp = path.with_extension("tfstate.tmp");
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)?;
    f.write_all(
        serde_json::to_string_pretty(&doc)
            .unwrap_or_default()
            .as_bytes(),
    )?;
    f.write_all(b"\n")?;
    f.sync_all()?;
    std::fs::rename(&tmp, &path)
}

fn uuid_like() -> String {
    terrane_state::Snapshot::empty().lineage
}

/// Whether the recorded settings are what `block` says (the record may
/// hold more: `-backend-config` values), compared as Terraform decodes
/// them; secrets, never recorded, are not compared.
pub fn matches(rec: &Recorded, block: &Backend) -> bool {
    let secrets = terrane_backend::secrets(&block.ty);
    rec.kind == block.ty
        && block.settings.iter().all(|(k, v)| {
            v.is_null()
                || secrets.contains(&k.as_str())
                || terrane_backend::same_setting(&rec.kind, k, Some(v), rec.config.get(k))
        })
}

/// Whether two records name the same backend with the same settings, as
/// Terraform decodes them (a record Terraform wrote has every nested
/// attribute), secrets aside.
pub fn same_record(a: &Recorded, b: &Recorded) -> bool {
    let secrets = terrane_backend::secrets(&a.kind);
    a.kind == b.kind
        && a.config
            .keys()
            .chain(b.config.keys())
            .filter(|k| !secrets.contains(&k.as_str()))
            .all(|k| terrane_backend::same_setting(&a.kind, k, a.config.get(k), b.config.get(k)))
}

/// The `-backend-config` values: `key=value` pairs, or files of
/// `key = value` lines (HCL attributes with literal values).
pub fn backend_config(dir: &Path, args: &[String]) -> Result<BTreeMap<String, Json>, Diagnostic> {
    let mut out = BTreeMap::new();
    for arg in args {
        match arg.split_once('=') {
            Some((k, v)) if !k.is_empty() && !k.contains(['/', '.']) => {
                out.insert(k.trim().to_string(), Json::String(v.to_string()));
            }
            _ => {
                let path = dir.join(arg);
                let text = std::fs::read_to_string(&path).map_err(|e| {
                    Diagnostic::error(
                        "Invalid -backend-config",
                        format!("{arg}: not a key=value pair, and the file cannot be read: {e}"),
                        None,
                    )
                })?;
                // The file is HCL attributes: wrap it as a backend block
                // of a scratch module and read it as one.
                let scratch = tempfile::tempdir().map_err(|e| {
                    Diagnostic::error("Invalid -backend-config", e.to_string(), None)
                })?;
                std::fs::write(
                    scratch.path().join("backend.tf"),
                    format!("terraform {{\n  backend \"x\" {{\n{text}\n  }}\n}}\n"),
                )
                .map_err(|e| Diagnostic::error("Invalid -backend-config", e.to_string(), None))?;
                let (module, diags) = terrane_config::load_module(scratch.path());
                if let Some(d) = diags
                    .iter()
                    .find(|d| d.severity == terrane_config::Severity::Error)
                {
                    return Err(Diagnostic::error(
                        "Invalid -backend-config",
                        format!("{}: {}: {}", path.display(), d.summary, d.detail),
                        None,
                    ));
                }
                if let Some(b) = module.backend {
                    out.extend(b.settings);
                }
            }
        }
    }
    Ok(out)
}

/// The settings of the recorded backend, for commands other than init:
/// the block must be initialized and unchanged since.
pub fn resolve(dir: &Path, block: Option<&Backend>) -> Result<Option<Recorded>, Diagnostic> {
    let rec = recorded(dir)?;
    match (block, rec) {
        (None, None) => Ok(None),
        (Some(b), Some(mut r)) if matches(&r, b) => {
            // Secrets are not in the record: the block's are used again.
            for name in terrane_backend::secrets(&r.kind) {
                if let Some(v) = b.settings.get(*name).filter(|v| !v.is_null()) {
                    r.config.insert(name.to_string(), v.clone());
                }
            }
            Ok(Some(r))
        }
        (Some(b), rec) => {
            let why = match rec {
                None => format!("The {:?} backend has not been initialized in this working directory.", b.ty),
                Some(r) if r.kind != b.ty => format!("The backend changed from {:?} to {:?} since the last init.", r.kind, b.ty),
                Some(_) => format!("The {:?} backend's settings changed since the last init.", b.ty),
            };
            Err(Diagnostic::error(
                "Backend initialization required, please run \"terrane init\"",
                format!("{why} Run \"terrane init\" (with -migrate-state to copy the state over, or -reconfigure to start using the new settings)."),
                b.range.clone(),
            ))
        }
        (None, Some(r)) => Err(Diagnostic::error(
            "Backend initialization required, please run \"terrane init\"",
            format!("The state of this working directory is kept in the {:?} backend (recorded by init in {}), but the configuration no longer has a backend block: terrane will not start from its own empty store instead. Run \"terrane init -migrate-state\" to move the state to terrane's store, or \"terrane init -reconfigure\" to leave it where it is.", r.kind, record_path(dir).display()),
            None,
        )),
    }
}

/// The store location of a recorded backend.
pub fn location(dir: &Path, rec: &Recorded) -> terrane_state::StoreLocation {
    terrane_state::StoreLocation::Backend {
        kind: rec.kind.clone(),
        settings: rec.config.clone(),
        journal_dir: data_dir(dir).join("terrane-journal"),
    }
}

/// Opens the store `config` names: terrane's own stores, or a backend.
pub fn open(
    config: &terrane_state::StoreConfig,
) -> terrane_state::Result<Box<dyn terrane_state::StateStore>> {
    match &config.location {
        terrane_state::StoreLocation::Backend {
            kind,
            settings,
            journal_dir,
        } => {
            let backend = terrane_backend::open(kind, settings)
                .map_err(|e| terrane_state::StateError::Backend(e.to_string()))?;
            let mut store = terrane_backend::BackendStore::new(backend, journal_dir.clone());
            if let Some(every) = std::env::var("TERRANE_BACKEND_UPLOAD_INTERVAL")
                .ok()
                .and_then(|t| terrane_engine::go_duration(&t))
            {
                store = store.upload_every(every);
            }
            Ok(Box::new(store))
        }
        _ => terrane_state::open_store(config),
    }
}

/// The workspace selected in the environment file, if any.
pub fn selected_workspace(dir: &Path) -> Option<String> {
    std::fs::read_to_string(data_dir(dir).join("environment"))
        .ok()
        .map(|w| w.trim().to_string())
        .filter(|w| !w.is_empty())
}

/// Writes the environment file (`default` removes it, as Terraform).
pub fn select_workspace(dir: &Path, name: &str) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    let path = data_dir(dir).join("environment");
    if name == "default" {
        return match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        };
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(data_dir(dir))?;
    std::fs::write(path, name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(ty: &str, settings: &[(&str, Json)]) -> Backend {
        Backend {
            ty: ty.into(),
            range: None,
            decl_range: None,
            settings: settings
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        }
    }

    #[test]
    fn item2_recorded_backend_must_match_the_block() {
        let rec = Recorded {
            kind: "local".into(),
            config: [("path".to_string(), json!("a.tfstate"))].into(),
        };
        let cases = [
            (
                "same",
                block("local", &[("path", json!("a.tfstate"))]),
                true,
            ),
            ("partial_block", block("local", &[]), true),
            ("other_kind", block("pg", &[]), false),
            (
                "changed_setting",
                block("local", &[("path", json!("b.tfstate"))]),
                false,
            ),
        ];
        for (name, b, want) in cases {
            assert_eq!(matches(&rec, &b), want, "case {name}");
        }
    }

    /// Item 1: the record init writes for a cloud kind holds every schema
    /// attribute, the secrets null; resolving it against the block gives
    /// the block's secrets back (in memory only); a Terraform record with
    /// every nested attribute matches the block's shorter object.
    #[test]
    fn item1_secrets_are_not_recorded_but_used_from_the_block() {
        let dir = tempfile::tempdir().unwrap();
        let b = block(
            "s3",
            &[
                ("bucket", json!("b")),
                ("secret_key", json!("sEcReT-1")),
                ("access_key", json!("AKID-1")),
                ("endpoints", json!({"s3": "http://x"})),
            ],
        );
        let rec = Recorded {
            kind: "s3".into(),
            config: b.settings.clone().into_iter().collect(),
        };
        write_record(dir.path(), Some(&rec), &b.settings).unwrap();
        let text = std::fs::read_to_string(record_path(dir.path())).unwrap();
        let cases = [
            ("secret_absent", !text.contains("sEcReT-1")),
            ("key_id_absent", !text.contains("AKID-1")),
            ("secret_null", text.contains("\"secret_key\": null")),
            (
                "schema_attribute_listed",
                text.contains("\"use_lockfile\": null"),
            ),
        ];
        for (name, ok) in cases {
            assert!(ok, "case {name}: {text}");
        }
        let got = resolve(dir.path(), Some(&b)).unwrap().unwrap();
        assert_eq!(got.config.get("secret_key"), Some(&json!("sEcReT-1")));
        let tf = Recorded {
            kind: "s3".into(),
            config: [
                ("bucket".to_string(), json!("b")),
                (
                    "endpoints".to_string(),
                    json!({"s3": "http://x", "dynamodb": null, "iam": null, "sso": null, "sts": null}),
                ),
            ]
            .into(),
        };
        assert!(matches(&tf, &b), "case terraform_record_matches");
        assert!(
            same_record(&tf, &rec),
            "case same_record_despite_nulls_and_secrets"
        );
    }
}
