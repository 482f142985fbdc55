//! terrane-state: the state that an infrastructure tool must never lose.
//!
//! * [`model`]: what a workspace's state holds ([`Snapshot`]: resources by
//!   address, each instance's current and deposed objects, outputs, lineage
//!   and serial) and the [`Change`]s applied to it.
//! * [`StateStore`] / [`Run`]: reading without a lock, writing under a lock
//!   that fails fast naming its holder, one durable transaction per change
//!   set. Two stores: [`SqliteStore`] (embedded default, one file) and
//!   [`PgStore`] (PostgreSQL, session advisory locks).
//! * [`stream`]: a workspace's objects one at a time, in module order.
//! * [`tfstate`]: Terraform state v4 JSON import and export.
//! * [`crypt`]: encryption at rest (AES-256-GCM, PBKDF2 key).
//!
//! Attribute values are stored as state JSON; this crate never needs a
//! schema. Architecture invariant: depends only on terrane-value among
//! terrane crates; a failed read never writes anything.

pub mod addr;
mod attrs;
pub mod crypt;
mod error;
pub use terrane_value::flatmap;
mod lock;
pub mod model;
mod pg;
mod rows;
mod sqlite;
mod store;
pub mod stream;
pub mod tfstate;

pub use addr::{InstanceAddr, InstanceKey, Mode, ModulePath, ResourceAddr, Target};
pub use crypt::{Cipher, Encryption};
pub use error::{Result, StateError};
pub use lock::{process_start_time, LockInfo};
pub use model::{
    Attributes, Change, InstanceState, ObjectState, OutputState, ResourceState, Snapshot, Status,
};
pub use pg::{pg_connect, PgStore};
pub use sqlite::SqliteStore;
pub use store::{check_plan_freshness, Run, StateStore};
pub use stream::{Streamed, Visit};

/// Where a working directory's state lives and how it is encrypted,
/// resolved by the caller from the `terraform { state "..." { } }` block
/// (or the defaults: `.terrane/state.db`, `TERRANE_PG_URL`,
/// `TERRANE_STATE_PASSPHRASE`). Nothing here falls back to anything.
#[derive(Clone, Debug)]
pub struct StoreConfig {
    pub location: StoreLocation,
    pub encryption: Option<Encryption>,
}

/// The store a [`StoreConfig`] opens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreLocation {
    /// The embedded store at this file.
    Sqlite(std::path::PathBuf),
    /// The PostgreSQL store in `schema` of the database at `url`.
    Postgres { url: String, schema: String },
    /// A Terraform backend (`backend "KIND" { }` settings, merged with
    /// `-backend-config`), opened by terrane-backend (which depends on
    /// this crate: the CLI opens it); changes not yet uploaded are
    /// journalled in `journal_dir`.
    Backend {
        kind: String,
        settings: std::collections::BTreeMap<String, serde_json::Value>,
        journal_dir: std::path::PathBuf,
    },
}

fn backend_elsewhere(kind: &str) -> StateError {
    StateError::Backend(format!(
        "the {kind:?} backend is opened through terrane-backend, not terrane-state"
    ))
}

/// Opens the store `config` describes.
pub fn open_store(config: &StoreConfig) -> Result<Box<dyn StateStore>> {
    match &config.location {
        StoreLocation::Postgres { url, schema } => Ok(Box::new(PgStore::open(
            url,
            schema,
            config.encryption.as_ref(),
        )?)),
        StoreLocation::Sqlite(path) => Ok(Box::new(SqliteStore::open(
            path,
            config.encryption.as_ref(),
        )?)),
        StoreLocation::Backend { kind, .. } => Err(backend_elsewhere(kind)),
    }
}

/// Opens the store `config` describes for [`StateStore::rotate_key`]: a
/// store still in encryption format 1 opens too (for nothing but
/// re-encryption).
pub fn open_store_for_rotation(config: &StoreConfig) -> Result<Box<dyn StateStore>> {
    match &config.location {
        StoreLocation::Sqlite(path) => Ok(Box::new(SqliteStore::open_for_rotation(
            path,
            config.encryption.as_ref(),
        )?)),
        StoreLocation::Postgres { url, schema } => Ok(Box::new(PgStore::open_for_rotation(
            url,
            schema,
            config.encryption.as_ref(),
        )?)),
        StoreLocation::Backend { kind, .. } => Err(backend_elsewhere(kind)),
    }
}

/// The Terraform version terrane writes into exported state files: the CLI
/// protocol level it is compatible with.
pub const TERRAFORM_VERSION: &str = "1.15.5";
