//! Which state store a working directory uses, from the configuration's
//! `terraform { state "sqlite" | "postgres" { ... } }` block, read before
//! any store is opened by every command that opens one.
//!
//! * `state "sqlite" { path = "..." }`: the embedded store at `path`
//!   (relative to the working directory; default `.terrane/state.db`).
//! * `state "postgres" { url = "...", schema = "..." }`: the PostgreSQL
//!   store; `url` may come from `TERRANE_PG_URL` instead, `schema`
//!   defaults to `terrane`.
//! * `encryption_key_env = "VAR"` (either kind): the state is encrypted
//!   with the key in `$VAR`; unset or empty is an error, never plaintext.
//!
//! Without a block: `TERRANE_PG_URL` (and `TERRANE_PG_SCHEMA`) choose
//! PostgreSQL, else `.terrane/state.db`; `TERRANE_STATE_PASSPHRASE`, when
//! set, is the key. A block that cannot be honoured is an error: nothing
//! falls back to another store or to plaintext.

use std::path::Path;
use terrane_config::{Diagnostic, StateBackend, StateSettings};
use terrane_state::{Encryption, StoreConfig, StoreLocation};

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

fn at(s: &StateSettings) -> String {
    s.range
        .as_ref()
        .map(|r| format!(" (at {r})"))
        .unwrap_or_default()
}

/// The store `settings` (the root module's state block, if any) describe
/// for the working directory `dir`.
pub fn store_config(
    dir: &Path,
    settings: Option<&StateSettings>,
) -> Result<StoreConfig, Diagnostic> {
    let fail = |summary: &str, detail: String| {
        Err(Diagnostic::error(
            summary,
            detail,
            settings.and_then(|s| s.range.clone()),
        ))
    };
    let Some(s) = settings else {
        let location = match env("TERRANE_PG_URL") {
            Some(url) => StoreLocation::Postgres {
                url,
                schema: env("TERRANE_PG_SCHEMA").unwrap_or_else(|| "terrane".into()),
            },
            None => StoreLocation::Sqlite(terrane_state::SqliteStore::default_path(dir)),
        };
        return Ok(StoreConfig {
            location,
            encryption: Encryption::from_env(),
        });
    };
    let encryption = match &s.encryption_key_env {
        Some(var) if var.is_empty() => return fail("Invalid state setting", format!("The state block{} names an empty encryption_key_env.", at(s))),
        Some(var) => match Encryption::from_named_env(var) {
            Ok(e) => Some(e),
            Err(e) => return fail("State encryption key not available", format!("The state block{} sets encryption_key_env = {var:?}, but {e}. Set {var} to the state's key.", at(s))),
        },
        None => Encryption::from_env(),
    };
    let location = match s.backend {
        StateBackend::Sqlite => {
            let path = match s.path.as_deref() {
                Some("") => {
                    return fail(
                        "Invalid state setting",
                        format!("The state block{} sets an empty path.", at(s)),
                    )
                }
                Some(p) => dir.join(p),
                None => terrane_state::SqliteStore::default_path(dir),
            };
            StoreLocation::Sqlite(path)
        }
        StateBackend::Postgres => {
            let Some(url) = s
                .url
                .clone()
                .filter(|u| !u.is_empty())
                .or_else(|| env("TERRANE_PG_URL"))
            else {
                return fail("Incomplete state settings", format!("The state \"postgres\" block{} has no url, and TERRANE_PG_URL is not set: terrane cannot tell which PostgreSQL server holds the state.", at(s)));
            };
            if !(url.starts_with("postgres://")
                || url.starts_with("postgresql://")
                || url.contains('='))
            {
                return fail("Invalid state setting", format!("The state \"postgres\" block{} has a url that is not a PostgreSQL connection string (postgres://... or key=value pairs).", at(s)));
            }
            StoreLocation::Postgres {
                url,
                schema: s.schema.clone().unwrap_or_else(|| "terrane".into()),
            }
        }
    };
    Ok(StoreConfig {
        location,
        encryption,
    })
}

/// The root module, for commands that do not load the whole
/// configuration: the module in `dir` is parsed, and errors in it stop
/// the command (the state settings could be among them).
pub fn module_of(dir: &Path) -> Result<terrane_config::Module, Vec<Diagnostic>> {
    let (module, diags) = terrane_config::load_module(dir);
    if diags
        .iter()
        .any(|d| d.severity == terrane_config::Severity::Error)
    {
        return Err(diags);
    }
    refuse_backend(&module).map_err(|d| vec![d])?;
    Ok(module)
}

/// A backend block and a state block together: an error at the backend
/// block, so it is clear where the state lives.
pub fn check_conflict(module: &terrane_config::Module) -> Result<(), Diagnostic> {
    if let (Some(b), Some(s)) = (&module.backend, &module.state) {
        return Err(Diagnostic::error(
            "Conflicting state settings",
            format!(
                "The configuration has both a backend \"{}\" block and a state block{}: keep one, so it is clear where the state lives.",
                b.ty,
                at(s)
            ),
            b.range.clone(),
        ));
    }
    Ok(())
}

/// The store the root module `module` names for the working directory
/// `dir`: the backend recorded by init for its backend block (checked
/// against the block), else its state block's store (or the defaults).
pub fn store_config_for(
    dir: &Path,
    module: &terrane_config::Module,
) -> Result<StoreConfig, Diagnostic> {
    refuse_backend(module)?;
    check_conflict(module)?;
    match crate::backendconf::resolve(dir, module.backend.as_ref())? {
        Some(rec) => Ok(StoreConfig {
            location: crate::backendconf::location(dir, &rec),
            encryption: None,
        }),
        None => store_config(dir, module.state.as_ref()),
    }
}

/// A Terraform backend (or `cloud`) block of a kind terrane does not serve
/// yet is an error at its line for every command that uses state:
/// starting from its own empty store would plan to create everything
/// again. The error says how to move the state over.
pub fn refuse_backend(module: &terrane_config::Module) -> Result<(), Diagnostic> {
    let Some(b) = &module.backend else {
        return Ok(());
    };
    if terrane_backend::KINDS.contains(&b.ty.as_str()) {
        return Ok(());
    }
    // `local` is served, so the state is elsewhere: Terraform pulls it.
    let how = "To move it into terrane's store: with Terraform, run \"terraform state pull > terraform.tfstate.json\"; remove the backend block (terrane's store is configured with a terraform { state \"sqlite\" { } } or state \"postgres\" block, SQLite in .terrane/state.db by default); then run \"terrane state push terraform.tfstate.json\".";
    let what = if b.ty == "cloud" {
        "HCP Terraform (a cloud block)".to_string()
    } else {
        format!("Terraform's {:?} backend", b.ty)
    };
    Err(Diagnostic::error(
        "Unsupported backend",
        format!("This configuration keeps its state in {what}, which terrane cannot read yet. terrane will not start from an empty state instead: it would plan to create every resource again. {how}"),
        b.range.clone(),
    ))
}

/// A Terraform state file (`terraform.tfstate`) with resources next to
/// the configuration while terrane's own state is empty: the project was
/// managed by Terraform, and planning from the empty store would create
/// everything again. The error names the command that moves it over.
pub fn unmigrated_tfstate(
    dir: &Path,
    module: &terrane_config::Module,
    current: &terrane_state::Snapshot,
) -> Option<Diagnostic> {
    // With a backend block, the backend's state is the state.
    if !current.resources.is_empty() || module.backend.is_some() {
        return None;
    }
    let path = dir.join("terraform.tfstate");
    let text = std::fs::read_to_string(&path).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    let resources = json.get("resources")?.as_array()?;
    if resources.is_empty() {
        return None;
    }
    Some(Diagnostic::error(
        "Terraform state not yet moved to terrane",
        format!("terraform.tfstate holds {} resources Terraform manages for this configuration, and terrane's state is empty: planning now would create them all again. Move the state into terrane's store first with \"terrane state push terraform.tfstate\" or \"terrane init -migrate-state\" (lineage and serial are kept), then plan again.", resources.len()),
        None,
    ))
}

/// The note printed when a lock left by a dead process was taken over.
pub fn takeover_note(holder: &terrane_state::LockInfo) -> Diagnostic {
    Diagnostic::warning(
        "Released a stale state lock",
        format!(
            "The state lock {} ({}, taken {} by {}) was held by process {} on this host, which is no longer running; terrane released it and took the lock. The operation that held it did not finish: the state holds every change it saved before it stopped.",
            holder.id, holder.operation, holder.created, holder.who, holder.pid
        ),
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(
        backend: StateBackend,
        path: Option<&str>,
        url: Option<&str>,
        key_env: Option<&str>,
    ) -> StateSettings {
        StateSettings {
            backend,
            path: path.map(Into::into),
            url: url.map(Into::into),
            schema: None,
            encryption_key_env: key_env.map(Into::into),
            range: None,
        }
    }

    #[test]
    fn item1_state_block_is_honoured_or_refused() {
        // Names unique to this test, so parallel tests do not interfere.
        std::env::set_var("TERRANE_ITEM1_KEY", "k");
        std::env::remove_var("TERRANE_ITEM1_UNSET");
        std::env::set_var("TERRANE_ITEM1_EMPTY", "");
        let dir = Path::new("/w");
        type Case = (
            &'static str,
            StateSettings,
            Result<(StoreLocation, bool), &'static str>,
        );
        let cases: Vec<Case> = vec![
            (
                "sqlite_path",
                settings(StateBackend::Sqlite, Some("s/x.db"), None, None),
                Ok((StoreLocation::Sqlite("/w/s/x.db".into()), false)),
            ),
            (
                "sqlite_key",
                settings(StateBackend::Sqlite, None, None, Some("TERRANE_ITEM1_KEY")),
                Ok((StoreLocation::Sqlite("/w/.terrane/state.db".into()), true)),
            ),
            (
                "key_var_unset",
                settings(
                    StateBackend::Sqlite,
                    None,
                    None,
                    Some("TERRANE_ITEM1_UNSET"),
                ),
                Err("is not set"),
            ),
            (
                "key_var_empty",
                settings(
                    StateBackend::Sqlite,
                    None,
                    None,
                    Some("TERRANE_ITEM1_EMPTY"),
                ),
                Err("is set but empty"),
            ),
            (
                "postgres_url",
                settings(
                    StateBackend::Postgres,
                    None,
                    Some("postgres://u@h/db"),
                    Some("TERRANE_ITEM1_KEY"),
                ),
                Ok((
                    StoreLocation::Postgres {
                        url: "postgres://u@h/db".into(),
                        schema: "terrane".into(),
                    },
                    true,
                )),
            ),
            (
                "postgres_bad_url",
                settings(StateBackend::Postgres, None, Some("mysql://h"), None),
                Err("not a PostgreSQL connection string"),
            ),
            (
                "sqlite_empty_path",
                settings(StateBackend::Sqlite, Some(""), None, None),
                Err("empty path"),
            ),
        ];
        for (case, s, want) in cases {
            let got = store_config(dir, Some(&s));
            match (got, want) {
                (Ok(c), Ok((loc, encrypted))) => {
                    assert_eq!(c.location, loc, "case {case}");
                    assert_eq!(c.encryption.is_some(), encrypted, "case {case}");
                }
                (Err(d), Err(w)) => assert!(d.detail.contains(w), "case {case}: {}", d.detail),
                (got, want) => panic!(
                    "case {case}: got {:?}, want {want:?}",
                    got.map(|c| c.location).map_err(|d| d.detail)
                ),
            }
        }
    }
}
