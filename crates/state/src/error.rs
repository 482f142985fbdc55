//! Typed errors of the state stores. Every message names what it is about
//! (file, workspace, lock holder) and none shows a state value.

use crate::lock::LockInfo;

/// A state operation that could not be carried out. Whatever the error,
/// the stored state is unchanged.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("Error acquiring the state lock: workspace {workspace:?} is already locked\n{holder}")]
    Locked {
        workspace: String,
        holder: Box<LockInfo>,
    },
    #[error("the state lock of workspace {workspace:?} was released or taken over by someone else (lock {id}); nothing more was written")]
    LockLost { workspace: String, id: String },
    #[error("no lock with ID {id:?} is held on workspace {workspace:?}")]
    NoSuchLock { workspace: String, id: String },
    #[error("{path}: not a usable terrane state database: {detail}")]
    Corrupt { path: String, detail: String },
    #[error("{path}: the state is encrypted, but no key was given; name the variable holding it with encryption_key_env in the terraform {{ state \"...\" {{ }} }} block (or set TERRANE_STATE_PASSPHRASE)")]
    EncryptedNoKey { path: String },
    #[error("the state encryption key variable {var} {detail}; the state is never read or written unencrypted when a key is configured")]
    KeyVariable { var: String, detail: String },
    #[error("{path}: the state is encrypted in format 1 (before values were bound to their rows), which this terrane no longer reads; run `terrane state rotate-key` to re-encrypt it in the current format")]
    OldEncryptionFormat { path: String },
    #[error(
        "{path}: the state passphrase is wrong (the key check failed); nothing was read or changed"
    )]
    WrongKey { path: String },
    #[error("{path}: the state is not encrypted, but a key was given; encrypt it with `terrane state rotate-key`")]
    NotEncrypted { path: String },
    #[error("{path}: stored data failed to decrypt (tampered or corrupt): {what}")]
    Decrypt { path: String, what: String },
    #[error("invalid Terraform state file: {0}")]
    InvalidTfstate(String),
    #[error("Saved plan is stale: the state was written (serial {current}) after the plan was made (serial {planned})")]
    StalePlan { planned: u64, current: u64 },
    #[error("Saved plan does not match the given state: it was made for lineage {planned}, the state has lineage {current}")]
    PlanLineage { planned: String, current: String },
    #[error("workspace {0:?} does not exist")]
    NoWorkspace(String),
    #[error("the default workspace cannot be deleted")]
    DefaultWorkspace,
    #[error("SQLite state store {path}: {source}")]
    Sqlite {
        path: String,
        source: rusqlite::Error,
    },
    #[error("PostgreSQL state store: {0}")]
    Postgres(#[from] postgres::Error),
    #[error("PostgreSQL state store: {0}")]
    PostgresSession(String),
    /// A Terraform backend (terrane-backend) failed: the message names the
    /// backend and the object.
    #[error("{0}")]
    Backend(String),
    #[error("state data for {what} is invalid: {detail}")]
    Data { what: String, detail: String },
}

pub type Result<T> = std::result::Result<T, StateError>;
