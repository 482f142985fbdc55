//! terrane-backend: state kept where Terraform keeps it.
//!
//! Terraform's backends store each workspace's state as one whole JSON
//! document (state format v4) and lock it by their own means (a lock file,
//! an advisory lock, a conditional write, a DynamoDB item, a blob lease, an
//! HTTP LOCK request). terrane reads and writes the same objects with the
//! same locks, so Terraform and terrane can work on one state one after the
//! other during a migration.
//!
//! The shape, shared by every backend:
//! * [`Backend`]: one configured backend; lists and deletes workspaces and
//!   hands out a [`RemoteClient`] per workspace.
//! * [`RemoteClient`]: one workspace's state object: read it whole, write it
//!   whole, delete it, lock and unlock it. Implementations never
//!   interpret the document; they move bytes and hold locks.
//! * [`RemoteLock`]: Terraform's lock description, in Terraform's own JSON
//!   field names, because backends store it where Terraform reads it.
//!
//! Settings come from the `backend "KIND" { }` block (merged with
//! `-backend-config`), already evaluated to JSON values; [`Settings`]
//! carries them. A setting a backend does not know, or a required one that
//! is missing, is an error naming it: never a default store.

use std::collections::BTreeMap;

pub mod azurerm;
mod cloud;
pub mod fetch;
pub mod gcs;
pub mod http;
mod httptls;
pub mod local;
pub mod pg;
pub mod s3;
mod schema;
pub mod store;

pub use schema::{normalize, same_setting, schema, secrets, terraform_hash, Schema, Ty};
pub use store::BackendStore;

/// The backend kinds this crate serves (the others are refused at the
/// block's line by the CLI).
pub const KINDS: &[&str] = &["local", "pg", "http", "s3", "gcs", "azurerm"];

/// Opens the backend `kind` configured with `settings`. A `local`
/// backend's relative paths are relative to the working directory.
pub fn open(kind: &str, settings: &Settings) -> Result<Box<dyn Backend>> {
    match kind {
        "local" => Ok(Box::new(local::LocalBackend::new(
            settings,
            std::path::Path::new(""),
        )?)),
        "pg" => Ok(Box::new(pg::PgBackend::new(settings)?)),
        "http" => Ok(Box::new(http::HttpBackend::new(settings)?)),
        "s3" => Ok(Box::new(s3::S3Backend::new(settings)?)),
        "gcs" => Ok(Box::new(gcs::GcsBackend::new(settings)?)),
        "azurerm" => Ok(Box::new(azurerm::AzurermBackend::new(settings)?)),
        other => Err(BackendError::Settings {
            backend: other.into(),
            detail: format!("terrane does not support the {other:?} backend yet"),
        }),
    }
}

/// The evaluated attributes of a `backend "KIND" { }` block, merged with
/// `-backend-config` values, by attribute name.
pub type Settings = BTreeMap<String, serde_json::Value>;

/// Terraform's lock description (`statemgr.LockInfo`), with its JSON field
/// names: what a backend stores with a lock and shows when it is held.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RemoteLock {
    #[serde(rename = "ID")]
    pub id: String,
    #[serde(rename = "Operation")]
    pub operation: String,
    #[serde(rename = "Info")]
    pub info: String,
    #[serde(rename = "Who")]
    pub who: String,
    #[serde(rename = "Version")]
    pub version: String,
    #[serde(rename = "Created")]
    pub created: String,
    #[serde(rename = "Path")]
    pub path: String,
}

impl RemoteLock {
    /// Terraform's description of terrane's own lock information.
    pub fn from_info(info: &terrane_state::LockInfo, path: &str) -> RemoteLock {
        RemoteLock {
            id: info.id.clone(),
            operation: info.operation.clone(),
            info: info.info.clone(),
            who: info.who.clone(),
            version: env!("CARGO_PKG_VERSION").into(),
            created: info.created.clone(),
            path: path.into(),
        }
    }
}

/// What went wrong talking to a backend. Messages name the backend, the
/// object (bucket/key, table, URL) and the reason; they never hold
/// credentials.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// The workspace's state is locked by someone else.
    #[error("Error acquiring the state lock: {path} is already locked\nLock Info:\n  ID:        {}\n  Path:      {}\n  Operation: {}\n  Who:       {}\n  Version:   {}\n  Created:   {}\n  Info:      {}", holder.id, holder.path, holder.operation, holder.who, holder.version, holder.created, holder.info)]
    Locked {
        path: String,
        holder: Box<RemoteLock>,
    },
    /// A setting is missing, unknown or has the wrong type.
    #[error("backend \"{backend}\": {detail}")]
    Settings { backend: String, detail: String },
    /// The stored object is not what it should be (corrupt, truncated,
    /// checksum mismatch, written by a newer Terraform).
    #[error("{path}: {detail}")]
    Corrupt { path: String, detail: String },
    /// The workspace does not exist.
    #[error("workspace {0:?} does not exist")]
    NoWorkspace(String),
    /// Any other failure reaching or using the backend.
    #[error("{backend}: {detail}")]
    Io { backend: String, detail: String },
}

pub type Result<T> = std::result::Result<T, BackendError>;

/// A stored state document with the checksum the backend reports for it
/// (MD5 for the backends that record one; empty otherwise).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Payload {
    pub data: Vec<u8>,
    pub md5: Vec<u8>,
}

/// One workspace's state object on a backend. Blocking calls: callers run
/// them off the async runtime's worker threads.
pub trait RemoteClient: Send + Sync {
    /// Where the state lives, for messages (`s3://bucket/key`, a path, a URL).
    fn path(&self) -> String;
    /// The stored document; None when the workspace has no state yet.
    fn get(&self) -> Result<Option<Payload>>;
    /// Replaces the stored document whole.
    fn put(&self, data: &[u8]) -> Result<()>;
    /// Removes the stored document.
    fn delete(&self) -> Result<()>;
    /// Takes the lock, recording `lock`; returns the lock ID to unlock with.
    /// Fails fast with [`BackendError::Locked`] naming the holder.
    fn lock(&self, lock: &RemoteLock) -> Result<String>;
    /// Releases the lock with this ID (also used by `force-unlock`).
    fn unlock(&self, id: &str) -> Result<()>;
}

/// One configured backend.
pub trait Backend: Send + Sync {
    /// The backend's type name, as in `backend "s3"`.
    fn kind(&self) -> &'static str;
    /// Existing workspaces, sorted, `default` included when it exists or
    /// the backend always has it (as Terraform lists them).
    fn workspaces(&self) -> Result<Vec<String>>;
    /// Deletes a workspace's state (never `default`).
    fn delete_workspace(&self, name: &str) -> Result<()>;
    /// The state object of `workspace`.
    fn client(&self, workspace: &str) -> Result<Box<dyn RemoteClient>>;
}

/// Checks that `settings` holds only the attributes a backend knows, so a
/// misspelt setting is an error, as in Terraform.
pub fn check_known(backend: &str, settings: &Settings, known: &[&str]) -> Result<()> {
    match settings.keys().find(|k| !known.contains(&k.as_str())) {
        Some(k) => Err(BackendError::Settings {
            backend: backend.into(),
            detail: format!("An argument named {k:?} is not expected here."),
        }),
        None => Ok(()),
    }
}

/// A string setting, if given; an error naming it if it is not a string.
pub fn string_setting(backend: &str, settings: &Settings, name: &str) -> Result<Option<String>> {
    match settings.get(name) {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(BackendError::Settings {
            backend: backend.into(),
            detail: format!("{name}: a string is required, got {other}"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Case<'a> = (&'a str, &'a [(&'a str, serde_json::Value)], Option<&'a str>);

    fn check(settings: &[(&str, serde_json::Value)], known: &[&str], err: Option<&str>) {
        let s: Settings = settings
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        match (check_known("s3", &s, known), err) {
            (Ok(()), None) => {}
            (Err(e), Some(want)) => assert!(e.to_string().contains(want), "{e}"),
            (got, want) => panic!("got {got:?}, want error {want:?}"),
        }
    }

    #[test]
    fn settings_are_checked_by_name() {
        let cases: &[Case] = &[
            (
                "all known",
                &[("bucket", "b".into()), ("key", "k".into())],
                None,
            ),
            ("empty", &[], None),
            (
                "misspelt",
                &[("bucket", "b".into()), ("kye", "k".into())],
                Some("An argument named \"kye\" is not expected here."),
            ),
        ];
        for (name, settings, err) in cases {
            eprintln!("case {name}");
            check(settings, &["bucket", "key"], *err);
        }
    }

    /// Hashes Terraform 1.15 recorded in `.terraform/terraform.tfstate`
    /// for these blocks.
    #[test]
    fn item2_backend_hash_is_terraforms() {
        type Case<'a> = (&'a str, &'a str, Vec<(&'a str, serde_json::Value)>, u64);
        let cases: [Case; 4] = [
            ("local_empty", "local", vec![], 666019178),
            (
                "local_quoted_path",
                "local",
                vec![("path", "a \"q\" b.tfstate".into())],
                2976452,
            ),
            (
                "pg_schema",
                "pg",
                vec![("schema_name", "hback_schema_probe".into())],
                260374809,
            ),
            (
                "http_number_bool",
                "http",
                vec![
                    ("address", "http://127.0.0.1:9/x".into()),
                    ("retry_max", 3.into()),
                    ("skip_cert_verification", true.into()),
                ],
                2389911929,
            ),
        ];
        for (name, kind, settings, want) in cases {
            let s: Settings = settings
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect();
            let schema = schema(kind).unwrap();
            assert_eq!(terraform_hash(kind, schema, &s), want, "case {name}");
        }
    }

    #[test]
    fn lock_json_uses_terraforms_field_names() {
        let lock = RemoteLock {
            id: "x".into(),
            operation: "OperationTypeApply".into(),
            ..Default::default()
        };
        let json = serde_json::to_value(&lock).unwrap();
        assert_eq!(json["ID"], "x");
        assert_eq!(json["Operation"], "OperationTypeApply");
        let back: RemoteLock = serde_json::from_value(json).unwrap();
        assert_eq!(back, lock);
    }
}
