//! Spreading a large expansion's instances over every core during a plan.
//!
//! The walk runs on one thread (the CLI's current-thread runtime): its
//! nodes are short and wake each other all the time, which a thread pool
//! would turn into cross-thread wake-ups. The instances of one resource
//! with a large `count` or `for_each` are the exception: thousands of
//! independent pieces of work (evaluating the configuration, the
//! provider's plan, checking it) that only meet again when the resource is
//! done. Those go to a pool of worker threads (one per core): a runner
//! task per worker takes batches of instances from a shared feed and runs
//! a few at once, so the cross-thread cost is paid per batch, not per
//! instance.

use crate::provider::Provider;
use crate::walk::{Done, Phase};
use futures_util::stream::{FuturesUnordered, StreamExt};
use std::future::Future;
use std::sync::{Arc, OnceLock};
use tokio::runtime::Handle;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

/// Fewer instances than this stay on the walk's own thread: moving them
/// costs more than it saves.
const MIN_INSTANCES: usize = 64;

/// The worker pool, started on first use: one thread per core (up to 16),
/// or none on a single core. Each worker is a runtime of its own, so a
/// runner stays on the thread it was given: instances of different
/// runners wake each other (the `-parallelism` semaphore hands a permit
/// to the oldest waiter), and a shared pool would move the woken runner
/// onto the waker's thread, gathering every runner on one thread.
pub(crate) struct Pool {
    workers: Vec<Handle>,
}

fn pool() -> Option<&'static Pool> {
    static POOL: OnceLock<Option<Pool>> = OnceLock::new();
    POOL.get_or_init(|| {
        let cores = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .min(16);
        if cores < 2 {
            return None;
        }
        let mut workers = Vec::with_capacity(cores);
        for i in 0..cores {
            // A worker that cannot start leaves the instances to the
            // others, or all of them to the walk's thread: slower, never
            // wrong.
            match worker(i) {
                Some(h) => workers.push(h),
                None => break,
            }
        }
        (!workers.is_empty()).then_some(Pool { workers })
    })
    .as_ref()
}

/// Starts worker `i`: a thread driving a current-thread runtime for the
/// rest of the process; its handle spawns onto it.
fn worker(i: usize) -> Option<Handle> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .ok()?;
    let handle = rt.handle().clone();
    std::thread::Builder::new()
        .name(format!("terrane-instances-{i}"))
        .spawn(move || rt.block_on(std::future::pending::<()>()))
        .ok()?;
    Some(handle)
}

/// Where a plan spreads an expansion of `instances` instances of a
/// resource of `provider`: the pool to run its instances on, or `None` to
/// run them on the walk's thread (other phases, small expansions, a
/// provider whose calls wait on a plugin, a single core).
pub(crate) fn pool_for(
    phase: Phase,
    instances: usize,
    provider: &dyn Provider,
) -> Option<&'static Pool> {
    spreads(phase, instances, provider.calls_run_here())
        .then(pool)
        .flatten()
}

/// Whether a plan's expansion of `instances` instances is worth spreading
/// (see [`pool_for`]).
fn spreads(phase: Phase, instances: usize, calls_run_here: bool) -> bool {
    phase == Phase::Plan && instances >= MIN_INSTANCES && calls_run_here
}

/// Instances handed to the runners in batches of this many: a runner
/// waiting for work is woken once per batch, and takes a whole batch (the
/// last batches leave the workers at most this many instances apart).
const BATCH: usize = 32;

/// A large expansion's instances on the pool: [`Spread::start`] starts the
/// runners, [`Spread::push`] hands them each instance's future as the walk
/// makes it (the workers start on the first instances while the walk's
/// thread makes the rest), [`Spread::finish`] says there are no more.
///
/// Each worker gets a runner that takes the next batch from the shared
/// feed whenever it runs short, so a worker that drew quick instances
/// takes more. A runner has a few instances started at a time, so that the
/// runners share the `-parallelism` permits: the semaphore serves its
/// waiters in order, and a runner that queued all its instances at once
/// would hold the others back until every one of its own had started,
/// running them one after another.
pub(crate) struct Spread<F> {
    feed: mpsc::UnboundedSender<Vec<(usize, F)>>,
    batch: Vec<(usize, F)>,
    made: usize,
}

impl<F: Future<Output = Done> + Send + 'static> Spread<F> {
    /// Starts a runner on each of `pool`'s workers, and one task in
    /// `tasks` whose result joins the instances' results as [`Done`]: every
    /// instance succeeded; their diagnostics in the order of the instances
    /// (as on one thread, whichever worker finished first).
    pub(crate) fn start(tasks: &mut JoinSet<Done>, pool: &Pool, parallelism: usize) -> Self {
        let (feed, rx) = mpsc::unbounded_channel();
        let rx = Arc::new(tokio::sync::Mutex::new(rx));
        // Enough started per runner for every permit to be in use, and one
        // more, so a runner always has an instance waiting its turn.
        let window = parallelism.div_ceil(pool.workers.len()) + 1;
        let mut runners = JoinSet::new();
        for worker in &pool.workers {
            runners.spawn_on(run(rx.clone(), window), worker);
        }
        tasks.spawn(join(runners));
        Spread {
            feed,
            batch: Vec::with_capacity(BATCH),
            made: 0,
        }
    }

    /// Hands the next instance's future to the runners.
    pub(crate) fn push(&mut self, work: F) {
        self.batch.push((self.made, work));
        self.made += 1;
        if self.batch.len() == BATCH {
            self.send();
        }
    }

    fn send(&mut self) {
        let batch = std::mem::replace(&mut self.batch, Vec::with_capacity(BATCH));
        // The runners are gone only if the walk was cancelled: the
        // instance is not run, as no instance is then.
        let _ = self.feed.send(batch);
    }

    /// No more instances: the runners stop once they have run the rest.
    pub(crate) fn finish(mut self) {
        if !self.batch.is_empty() {
            self.send();
        }
    }
}

/// The runners' shared feed of batches of instances, each instance with
/// its place in the expansion.
type Feed<F> = Arc<tokio::sync::Mutex<mpsc::UnboundedReceiver<Vec<(usize, F)>>>>;

/// A runner's instances that failed or reported something: their place
/// and result.
type Reports = Vec<(usize, Done)>;

/// The next batch from `feed`; `None` once the feed is closed and empty.
async fn next_batch<F>(feed: &Feed<F>) -> Option<Vec<(usize, F)>> {
    feed.lock().await.recv().await
}

/// Runs instances from `feed`, at most `window` at once, until the feed is
/// closed and every instance taken has finished.
async fn run<F: Future<Output = Done>>(feed: Feed<F>, window: usize) -> Reports {
    let placed = |(at, f): (usize, F)| async move { (at, f.await) };
    let mut out = Vec::new();
    let mut waiting = std::collections::VecDeque::new();
    let mut running = FuturesUnordered::new();
    let mut open = true;
    loop {
        while running.len() < window {
            match waiting.pop_front() {
                Some(w) => running.push(placed(w)),
                None => break,
            }
        }
        let short = waiting.is_empty() && open;
        let done = if short && running.is_empty() {
            // Nothing to do but wait for more.
            match next_batch(&feed).await {
                Some(b) => waiting.extend(b),
                None => open = false,
            }
            None
        } else if short {
            // Fetch more while the running ones go on.
            tokio::select! {
                biased;
                d = running.next() => d,
                b = next_batch(&feed) => {
                    match b {
                        Some(b) => waiting.extend(b),
                        None => open = false,
                    }
                    None
                }
            }
        } else {
            match running.next().await {
                Some(d) => Some(d),
                // Nothing running, nothing waiting, the feed closed.
                None => break,
            }
        };
        if let Some((at, (good, diags))) = done {
            if !good || !diags.is_empty() {
                out.push((at, (good, diags)));
            }
        }
    }
    out
}

/// Waits for every runner and joins their reports in instance order. The
/// runners are stopped if this is dropped first (the walk was cancelled:
/// dropping the set aborts them).
async fn join(mut runners: JoinSet<Reports>) -> Done {
    let mut reports = Vec::new();
    while let Some(r) = runners.join_next().await {
        match r {
            Ok(r) => reports.extend(r),
            // The instances' own panics are caught (`guarded`): this is the
            // runner's, which fails this task as it would have failed the
            // runner's own.
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(e) => panic!("an instance runner was cancelled: {e}"),
        }
    }
    reports.sort_unstable_by_key(|(at, _)| *at);
    let ok = reports.iter().all(|(_, (good, _))| *good);
    (ok, reports.into_iter().flat_map(|(_, (_, d))| d).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use terrane_config::Diagnostic;

    /// A future that succeeds, or fails with one diagnostic naming it,
    /// after yielding a number of times that varies with `i` (so that
    /// instances finish out of order).
    async fn instance(i: usize, good: bool) -> Done {
        for _ in 0..=(i * 7919) % 13 {
            tokio::task::yield_now().await;
        }
        let diags = if good {
            vec![]
        } else {
            vec![Diagnostic::error("failed", format!("instance {i}"), None)]
        };
        (good, diags)
    }

    fn check(name: &str, n: usize, failing: &[usize], workers: usize) {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let pool = Pool {
            workers: (0..workers).map(|i| worker(i).unwrap()).collect(),
        };
        let (ok, diags, spawned) = rt.block_on(async {
            let mut tasks = JoinSet::new();
            let mut spread = Spread::start(&mut tasks, &pool, 10);
            for i in 0..n {
                spread.push(Box::pin(instance(i, !failing.contains(&i))));
            }
            spread.finish();
            let spawned = tasks.len();
            let mut ok = true;
            let mut diags = Vec::new();
            while let Some(r) = tasks.join_next().await {
                let (good, d) = r.unwrap();
                ok &= good;
                diags.extend(d);
            }
            (ok, diags, spawned)
        });
        assert_eq!(ok, failing.is_empty(), "{name}: success");
        let got: Vec<String> = diags.iter().map(|d| d.detail.clone()).collect();
        let want: Vec<String> = failing.iter().map(|i| format!("instance {i}")).collect();
        assert_eq!(got, want, "{name}: diagnostics in instance order");
        assert_eq!(spawned, 1, "{name}: one task joins them");
    }

    #[test]
    fn runners_join_every_instance() {
        let cases: &[(&str, usize, &[usize], usize)] = &[
            ("all succeed", 1000, &[], 2),
            ("one fails", 1000, &[517], 2),
            ("first and last fail", 100, &[0, 99], 3),
            ("fewer instances than workers", 1, &[0], 2),
            ("one worker", 64, &[63], 1),
            ("nothing to run", 0, &[], 2),
        ];
        for (name, n, failing, workers) in cases {
            check(name, *n, failing, *workers);
        }
    }

    #[test]
    fn only_large_plans_of_in_process_providers_spread() {
        let cases = [
            ("validate", Phase::Validate, 10_000, true, false),
            ("apply", Phase::Apply, 10_000, true, false),
            ("small plan", Phase::Plan, MIN_INSTANCES - 1, true, false),
            ("plan through a plugin", Phase::Plan, 10_000, false, false),
            (
                "smallest spread plan",
                Phase::Plan,
                MIN_INSTANCES,
                true,
                true,
            ),
            ("large plan", Phase::Plan, 10_000, true, true),
        ];
        for (name, phase, n, here, want) in cases {
            assert_eq!(spreads(phase, n, here), want, "{name}");
        }
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(pool().is_some(), cores > 1, "a pool on {cores} cores");
    }
}
