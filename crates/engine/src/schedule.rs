//! The one scheduler: runs items of work in dependency order, each as soon
//! as everything it waits for is done, many at once. Used for the graph
//! walk (nodes) and for apply's deletes (objects) alike.
//!
//! - dependency counts: an item starts when its count reaches zero (no
//!   rounds, no rescans: a long chain costs the same per item);
//! - a failed (or skipped) item skips everything that waits for it,
//!   transitively, while independent items go on;
//! - an optional concurrency limit (`-parallelism`) and an optional stop
//!   signal (an interrupt): once it is set, no new item starts and the
//!   items not started count as failed.
//!
//! Layering: this module imports nothing from the engine; the work is a
//! closure.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::Arc;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, TryAcquireError};
use tokio::task::JoinSet;

/// What the scheduler's wait ended with.
enum Either<J> {
    /// A task ended (None: no task was running).
    Joined(Option<J>),
    /// A permit of the limit became free (None: the limit was closed).
    Permit(Option<OwnedSemaphorePermit>),
}

/// Which items wait for which.
pub struct Order {
    /// For every item, the items that wait for it.
    dependents: Vec<Vec<usize>>,
    /// For every item, how many items it waits for.
    waiting: Vec<usize>,
}

impl Order {
    /// From every item's items it waits for (each listed at most once).
    pub fn new<W, I>(waits_for: W) -> Order
    where
        W: ExactSizeIterator<Item = I>,
        I: IntoIterator<Item = usize>,
    {
        let n = waits_for.len();
        let mut dependents = vec![Vec::new(); n];
        let mut waiting = vec![0; n];
        for (i, ws) in waits_for.enumerate() {
            for w in ws {
                waiting[i] += 1;
                dependents[w].push(i);
            }
        }
        Order {
            dependents,
            waiting,
        }
    }
}

/// What may hold an item back: a concurrency limit and a stop signal.
#[derive(Clone, Default)]
pub struct Gate {
    /// Permits an item holds while it runs.
    pub limit: Option<Arc<Semaphore>>,
    /// When true, no new item starts.
    pub stop: Option<Arc<dyn Fn() -> bool + Send + Sync>>,
}

impl Gate {
    fn stopped(&self) -> bool {
        self.stop.as_ref().is_some_and(|s| s())
    }
}

/// How a schedule ended.
pub struct Outcome<R> {
    /// Every item ran and succeeded.
    pub ok: bool,
    /// Tasks that ended abnormally (cancelled, or a panic the work did not
    /// catch), as text; their dependents never start.
    pub lost: Vec<String>,
    /// What each item that ran reported, in the order they finished.
    pub reports: Vec<R>,
}

/// Runs every item of `order` through `work` (which returns whether it
/// succeeded and its report), in dependency order and under `gate`.
pub async fn execute<F, Fut, R>(order: Order, gate: Gate, work: F) -> Outcome<R>
where
    F: Fn(usize) -> Fut,
    Fut: Future<Output = (bool, R)> + Send + 'static,
    R: Send + 'static,
{
    let Order {
        dependents,
        mut waiting,
    } = order;
    let mut failed = vec![false; waiting.len()];
    let mut outcome = Outcome {
        ok: true,
        lost: Vec::new(),
        reports: Vec::new(),
    };
    let mut ready: Vec<usize> = (0..waiting.len()).filter(|i| waiting[*i] == 0).collect();
    // Ready items waiting for a permit of the limit. An item's task (and
    // with it the work's future, tens of kilobytes for a resource) is
    // made only once it holds one: ten thousand independent resources
    // under `-parallelism=10` hold ten futures, not ten thousand.
    let mut queued: VecDeque<usize> = VecDeque::new();
    let mut tasks = tokio::task::JoinSet::new();
    let spawn = |tasks: &mut JoinSet<(usize, bool, Option<R>)>,
                 i: usize,
                 permit: Option<OwnedSemaphorePermit>| {
        // The work's future is small: its callers build the large part on
        // the heap when it first runs (`walk::guarded`).
        let (fut, gate) = (work(i), gate.clone());
        tasks.spawn(async move {
            let _permit = permit;
            if gate.stopped() {
                return (i, false, None);
            }
            let (good, report) = fut.await;
            (i, good, Some(report))
        });
    };
    loop {
        // Skipped items finish at once and may make others ready in turn.
        while !ready.is_empty() {
            for i in std::mem::take(&mut ready) {
                if failed[i] || gate.stopped() {
                    outcome.ok = false;
                    finish(i, false, &dependents, &mut waiting, &mut failed, &mut ready);
                    continue;
                }
                queued.push_back(i);
            }
        }
        // Start what the limit lets start now.
        while let Some(&i) = queued.front() {
            let permit = match &gate.limit {
                Some(l) => match l.clone().try_acquire_owned() {
                    Ok(p) => Some(p),
                    Err(TryAcquireError::NoPermits) => break,
                    Err(TryAcquireError::Closed) => None,
                },
                None => None,
            };
            queued.pop_front();
            spawn(&mut tasks, i, permit);
        }
        // Wait for a task to end, or (when items are queued) for a permit
        // the limit's other holders give back.
        let limit = gate.limit.clone().filter(|_| !queued.is_empty());
        let r = match limit {
            Some(l) if tasks.is_empty() => Either::Permit(l.acquire_owned().await.ok()),
            Some(l) => tokio::select! {
                r = tasks.join_next() => Either::Joined(r),
                p = l.acquire_owned() => Either::Permit(p.ok()),
            },
            None => Either::Joined(tasks.join_next().await),
        };
        let r = match r {
            Either::Permit(p) => {
                if let Some(i) = queued.pop_front() {
                    spawn(&mut tasks, i, p);
                }
                continue;
            }
            Either::Joined(None) => break,
            Either::Joined(Some(r)) => r,
        };
        match r {
            Ok((i, good, report)) => {
                outcome.ok &= good;
                outcome.reports.extend(report);
                finish(i, good, &dependents, &mut waiting, &mut failed, &mut ready);
            }
            Err(e) => {
                outcome.ok = false;
                outcome.lost.push(e.to_string());
            }
        }
    }
    outcome
}

/// Item `i` is done (or skipped): a failure skips its dependents; those
/// waiting for nothing else become ready.
fn finish(
    i: usize,
    good: bool,
    dependents: &[Vec<usize>],
    waiting: &mut [usize],
    failed: &mut [bool],
    ready: &mut Vec<usize>,
) {
    for j in &dependents[i] {
        if !good {
            failed[*j] = true;
        }
        waiting[*j] -= 1;
        if waiting[*j] == 0 {
            ready.push(*j);
        }
    }
}

#[cfg(test)]
#[path = "schedule_tests.rs"]
mod tests;
