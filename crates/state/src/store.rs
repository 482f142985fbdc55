//! The `StateStore` trait: what the engine needs from any store.
//!
//! Reads need no lock. Writing happens inside a [`Run`] obtained by
//! [`StateStore::lock`], which fails fast, naming the current holder, when
//! someone else holds the workspace. Each [`Run::persist`] call is one
//! durable transaction that bumps the serial; its cost depends on the size
//! of the change, never on the size of the state.

use crate::error::Result;
use crate::lock::LockInfo;
use crate::model::{Change, Snapshot};

/// A store of workspaces' states.
pub trait StateStore: Send + Sync {
    /// The key stored values are encrypted with (None: not encrypted);
    /// saved plans of an encrypted store are sealed with it too.
    fn cipher(&self) -> Option<&crate::crypt::Cipher>;
    /// Re-encrypts every stored value for `new` (None: decrypts) and
    /// leaves no page holding a value under the old key.
    fn rotate_key(&mut self, new: Option<&crate::Encryption>) -> Result<()>;
    /// The latest committed state of `workspace` (empty if it never existed).
    fn snapshot(&self, workspace: &str) -> Result<Snapshot>;
    /// The addresses of `workspace`'s resource instances (those with a
    /// current or a deposed object), in state order: what `state list`
    /// needs. A store may answer without decoding any object's attributes.
    fn addresses(&self, workspace: &str) -> Result<Vec<crate::InstanceAddr>> {
        let s = self.snapshot(workspace)?;
        Ok(s.resources
            .iter()
            .flat_map(|(raddr, r)| r.instances.keys().map(|k| raddr.instance(k.clone())))
            .collect())
    }
    /// `workspace`'s state one object at a time, in module order (see
    /// [`crate::stream`]), within one read: the caller never holds the
    /// whole state. A store whose state is one document (a Terraform
    /// backend) reads it whole and streams that: this default.
    fn stream(&self, workspace: &str, visit: &mut crate::stream::Visit<'_>) -> Result<()> {
        self.snapshot(workspace)?.stream(visit);
        Ok(())
    }
    /// Takes the workspace lock; fails fast naming the holder.
    fn lock(&self, workspace: &str, info: LockInfo) -> Result<Box<dyn Run>>;
    /// Removes a lock by ID, whoever holds it.
    fn force_unlock(&self, workspace: &str, id: &str) -> Result<()>;
    /// Names of existing workspaces, sorted.
    fn workspaces(&self) -> Result<Vec<String>>;
    /// Deletes a workspace and its state (not `default`; not while locked).
    fn delete_workspace(&self, workspace: &str) -> Result<()>;
}

/// Writing access to one workspace while holding its lock. Dropping a run
/// releases the lock.
pub trait Run: Send {
    /// The lock held.
    fn lock_info(&self) -> &LockInfo;
    /// The state as of the last persisted change.
    fn snapshot(&mut self) -> Result<Snapshot>;
    /// Persists the changes atomically and durably; returns the new serial.
    fn persist(&mut self, changes: &[Change]) -> Result<u64>;
    /// Replaces the whole workspace state (objects, outputs, lineage and
    /// serial) with `snapshot` in one transaction: import and `state push`.
    fn replace(&mut self, snapshot: &Snapshot) -> Result<u64>;
    /// Releases the lock.
    fn finish(self: Box<Self>) -> Result<()>;
    /// The lock this run replaced because its holder had provably died
    /// (embedded store only), for the caller to report.
    fn taken_over(&self) -> Option<&LockInfo> {
        None
    }
}

/// Refuses a saved plan made against another lineage or an older serial.
pub fn check_plan_freshness(state: &Snapshot, plan_lineage: &str, plan_serial: u64) -> Result<()> {
    if state.lineage != plan_lineage {
        return Err(crate::StateError::PlanLineage {
            planned: plan_lineage.into(),
            current: state.lineage.clone(),
        });
    }
    if state.serial != plan_serial {
        return Err(crate::StateError::StalePlan {
            planned: plan_serial,
            current: state.serial,
        });
    }
    Ok(())
}
