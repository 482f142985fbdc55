//! Making apply's changes durable: each change is written to the state
//! store before it counts as done, then mirrored in the walk's state.
//! Concurrent changes share transactions (group commit). A change that
//! cannot be recorded is kept aside for the emergency state file, and
//! from then on no new work starts.
//!
//! Layering: imports only [`crate::sync`]; the state to mirror into is a
//! parameter.

use crate::sync::lock;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use terrane_config::{DiagId, Diagnostic};
use terrane_state::{Change as StateChange, Snapshot};

/// A state store's run, shared by the writer and the apply.
pub type SharedRun = Arc<Mutex<Box<dyn terrane_state::Run>>>;

/// Where one apply's (or import's) changes are made durable.
pub struct Persist {
    /// The store's run; `None` keeps changes in memory only.
    run: Option<SharedRun>,
    /// Concurrent changes share transactions (each still durable before
    /// it is acknowledged).
    commits: GroupCommit,
    /// Changes made to real objects that could not be recorded (lock
    /// lost, disk full, database gone), in the order they happened.
    unrecorded: Mutex<Vec<StateChange>>,
    /// Set at the first failure to record; no new work starts.
    failed: AtomicBool,
    /// The newest serial the store returned.
    last_serial: AtomicU64,
}

impl Persist {
    pub fn new(run: Option<SharedRun>) -> Persist {
        Persist {
            run,
            commits: GroupCommit::default(),
            unrecorded: Mutex::new(Vec::new()),
            failed: AtomicBool::new(false),
            last_serial: AtomicU64::new(0),
        }
    }

    /// Whether a change could not be recorded (no new work may start).
    pub fn failed(&self) -> bool {
        self.failed.load(Ordering::SeqCst)
    }

    /// The newest serial the store returned.
    pub fn last_serial(&self) -> u64 {
        self.last_serial.load(Ordering::SeqCst)
    }

    /// The changes that could not be recorded, in order.
    pub fn take_unrecorded(&self) -> Vec<StateChange> {
        std::mem::take(&mut *lock(&self.unrecorded))
    }

    /// Makes a change durable, then mirrors it in `state` and counts it in
    /// `progress`.
    pub fn record(
        &self,
        state: &Mutex<Snapshot>,
        progress: &AtomicUsize,
        change: StateChange,
    ) -> Result<(), Diagnostic> {
        if let Some(p) = &self.run {
            // Off the walk's thread: a store may block on a runtime of its own
            // (the PostgreSQL client does), which cannot start inside ours.
            let r = {
                let mut guard = lock(p);
                let run: &mut Box<dyn terrane_state::Run> = &mut guard;
                let change = &change;
                std::thread::scope(|s| {
                    s.spawn(move || {
                        run.persist(std::slice::from_ref(change))
                            .map_err(|e| e.to_string())
                    })
                    .join()
                })
                .unwrap_or_else(|_| Err("the state store panicked while writing".to_string()))
            };
            match r {
                Ok(serial) => self.recorded(serial),
                Err(e) => return Err(self.unrecorded(change, e)),
            }
        }
        lock(state).apply(change);
        progress.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Makes a change durable like [`Persist::record`], sharing the
    /// transaction with other instances' changes made at the same time.
    /// The write runs on a blocking thread, so the walk keeps working
    /// while the disk syncs.
    pub async fn record_durable(
        &self,
        state: &Mutex<Snapshot>,
        progress: &AtomicUsize,
        change: StateChange,
    ) -> Result<(), Diagnostic> {
        let Some(run) = &self.run else {
            return self.record(state, progress, change);
        };
        let (tx, rx) = tokio::sync::oneshot::channel();
        let start_writer = {
            let mut g = lock(&self.commits.inner);
            g.0.push((change.clone(), tx));
            !std::mem::replace(&mut g.1, true)
        };
        if start_writer {
            let (queue, run) = (self.commits.inner.clone(), run.clone());
            tokio::task::spawn_blocking(move || write_commits(&queue, run));
        }
        let result = rx
            .await
            .unwrap_or_else(|_| Err("the state writer stopped".into()));
        match result {
            Ok(serial) => self.recorded(serial),
            Err(e) => return Err(self.unrecorded(change, e)),
        }
        lock(state).apply(change);
        progress.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    fn recorded(&self, serial: u64) {
        self.last_serial.fetch_max(serial, Ordering::SeqCst);
    }

    /// A change that happened but could not be recorded: kept for the
    /// emergency state file, and no new work starts after it. Only the first
    /// failure says why; the rest would repeat it.
    fn unrecorded(&self, change: StateChange, why: String) -> Diagnostic {
        lock(&self.unrecorded).push(change);
        let first = !self.failed.swap(true, Ordering::SeqCst);
        if first {
            let detail = format!("{why}\n\nNo new changes will be started; changes already in progress finish and are kept for the emergency state file.");
            Diagnostic::error("Failed to persist state", detail, None)
        } else {
            let detail = format!("{why} (see the first \"Failed to persist state\" error)");
            Diagnostic::error("Failed to persist state", detail, None)
                .with_id(DiagId::RepeatedPersistFailure)
        }
    }
}

type Commit = (
    StateChange,
    tokio::sync::oneshot::Sender<Result<u64, String>>,
);

/// Group commit of concurrent instance changes: changes that arrive while
/// a transaction is being written wait and go together in the next one.
/// Each change is still durable before its `record_durable` returns (so
/// before dependents start and before it counts as done); what is shared
/// is the fsync, not the guarantee.
#[derive(Default)]
struct GroupCommit {
    inner: Arc<std::sync::Mutex<(Vec<Commit>, bool)>>,
}

/// The writer: one transaction per batch of waiting changes until none
/// is left. A failed batch is retried change by change so one bad change
/// does not fail the others. The run handle is released before the last
/// batch is acknowledged, so once every caller has its answer the apply
/// holds the only reference again.
fn write_commits(queue: &std::sync::Mutex<(Vec<Commit>, bool)>, run: SharedRun) {
    let mut run = Some(run);
    loop {
        let batch = std::mem::take(&mut lock(queue).0);
        let (changes, senders): (Vec<StateChange>, Vec<_>) = batch.into_iter().unzip();
        let results: Vec<Result<u64, String>> = match run.as_ref() {
            Some(r) => {
                let mut r = lock(r);
                match r.persist(&changes) {
                    Ok(serial) => changes.iter().map(|_| Ok(serial)).collect(),
                    Err(e) if changes.len() == 1 => vec![Err(e.to_string())],
                    Err(_) => changes
                        .iter()
                        .map(|c| {
                            r.persist(std::slice::from_ref(c))
                                .map_err(|e| e.to_string())
                        })
                        .collect(),
                }
            }
            None => changes
                .iter()
                .map(|_| Err("the state writer stopped".to_string()))
                .collect(),
        };
        let last = {
            let mut g = lock(queue);
            if g.0.is_empty() {
                g.1 = false;
                true
            } else {
                false
            }
        };
        if last {
            drop(run.take());
        }
        for (s, r) in senders.into_iter().zip(results) {
            let _ = s.send(r);
        }
        if last {
            return;
        }
    }
}
