//! terrane-state: the state that an infrastructure tool must never lose.
//!
//! * [`model`]: what a workspace's state holds ([`Snapshot`]: resources by
//!   address, each instance's current and deposed objects, outputs, lineage
//!   and serial) and the [`Change`]s applied to it.
//! * [`StateStore`] / [`Run`]: reading without a lock, writing under a lock
//!   that fails fast naming its holder, one durable transaction per change
//!   set. Two stores: [`SqliteStore`] (embedded default, one file) and
//!   [`PgStore`] (PostgreSQL, session advisory locks).
//! * [`tfstate`]: Terraform state v4 JSON import and export.
//! * [`crypt`]: encryption at rest (AES-256-GCM, PBKDF2 key).
//!
//! Attribute values are stored as state JSON; this crate never needs a
//! schema. Architecture invariant: depends only on terrane-value among
//! terrane crates; a failed read never writes anything.

pub mod addr;
pub mod crypt;
mod error;
pub mod model;
mod pg;
mod rows;
mod sqlite;
mod store;
pub mod tfstate;

pub use addr::{InstanceAddr, InstanceKey, Mode, ModulePath, ResourceAddr};
pub use crypt::Encryption;
pub use error::{Result, StateError};
pub use model::{Change, InstanceState, ObjectState, OutputState, ResourceState, Snapshot, Status};
pub use pg::{pg_connect, PgStore};
pub use sqlite::SqliteStore;
pub use store::{check_plan_freshness, LockInfo, Run, StateStore};

/// Where a working directory's state lives: PostgreSQL when a connection
/// string is given (from the `terraform { }` settings, or the
/// `TERRANE_PG_URL` environment variable), otherwise the embedded SQLite
/// file `.terrane/state.db`. Encryption comes from `TERRANE_STATE_PASSPHRASE`.
pub fn open_store(workdir: &std::path::Path, pg_url: Option<&str>, pg_schema: Option<&str>) -> Result<Box<dyn StateStore>> {
    let enc = Encryption::from_env();
    let env_url = std::env::var("TERRANE_PG_URL").ok().filter(|u| !u.is_empty());
    match pg_url.map(str::to_string).or(env_url) {
        Some(url) => Ok(Box::new(PgStore::open(&url, pg_schema.unwrap_or("terrane"), enc.as_ref())?)),
        None => Ok(Box::new(SqliteStore::open(&SqliteStore::default_path(workdir), enc.as_ref())?)),
    }
}

/// The Terraform version terrane writes into exported state files: the CLI
/// protocol level it is compatible with.
pub const TERRAFORM_VERSION: &str = "1.15.5";
