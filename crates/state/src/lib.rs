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
pub use pg::PgStore;
pub use sqlite::SqliteStore;
pub use store::{check_plan_freshness, LockInfo, Run, StateStore};

/// The Terraform version terrane writes into exported state files: the CLI
/// protocol level it is compatible with.
pub const TERRAFORM_VERSION: &str = "1.15.5";
