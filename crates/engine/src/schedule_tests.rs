//! The scheduler, one named case per rule, with work that records what
//! ran (in-process: the scheduler takes any closure).

use super::*;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

/// A schedule to run: items' waits-for lists, the items that fail, the
/// concurrency limit, and after how many started items to stop.
struct Case {
    waits_for: Vec<Vec<usize>>,
    failing: Vec<usize>,
    panicking: Vec<usize>,
    limit: Option<usize>,
    stop_after: Option<usize>,
}

fn case(waits_for: &[&[usize]]) -> Case {
    Case {
        waits_for: waits_for.iter().map(|w| w.to_vec()).collect(),
        failing: Vec::new(),
        panicking: Vec::new(),
        limit: None,
        stop_after: None,
    }
}

/// Runs a case; `want` sees the items that ran (in the order they
/// started) and the most that ran at once.
#[track_caller]
fn check(name: &str, c: Case, want_ok: bool, want_lost: usize, want: impl Fn(&[usize], usize)) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .unwrap();
    let ran = Arc::new(Mutex::new(Vec::new()));
    let (now, peak) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let stopped = Arc::new(AtomicBool::new(false));
    let stop_after = c.stop_after;
    let gate = Gate {
        limit: c.limit.map(|n| Arc::new(Semaphore::new(n))),
        stop: stop_after.map(|_| {
            let stopped = stopped.clone();
            Arc::new(move || stopped.load(Ordering::SeqCst)) as Arc<dyn Fn() -> bool + Send + Sync>
        }),
    };
    let order = Order::new(c.waits_for.clone().into_iter());
    let (failing, panicking) = (c.failing.clone(), c.panicking.clone());
    let c_panicking = c.panicking.clone();
    let outcome = rt.block_on(execute(order, gate, |i| {
        let (ran, now, peak, stopped) = (ran.clone(), now.clone(), peak.clone(), stopped.clone());
        let fail = failing.contains(&i);
        let panic = panicking.contains(&i);
        async move {
            let started = {
                let mut r = ran.lock().unwrap();
                r.push(i);
                r.len()
            };
            if stop_after.is_some_and(|n| started >= n) {
                stopped.store(true, Ordering::SeqCst);
            }
            let running = now.fetch_add(1, Ordering::SeqCst) + 1;
            peak.fetch_max(running, Ordering::SeqCst);
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            now.fetch_sub(1, Ordering::SeqCst);
            assert!(!panic, "item {i} panics");
            (!fail, i)
        }
    }));
    let ran = ran.lock().unwrap().clone();
    assert_eq!(outcome.ok, want_ok, "case {name}: ok (ran {ran:?})");
    assert_eq!(outcome.lost.len(), want_lost, "case {name}: lost");
    // Every item that ran to its end reported, once; a panicked one did not.
    let mut reported = outcome.reports.clone();
    reported.sort();
    let mut finished: Vec<usize> = ran
        .iter()
        .filter(|i| !c_panicking.contains(i))
        .copied()
        .collect();
    finished.sort();
    assert_eq!(reported, finished, "case {name}: reports");
    want(&ran, peak.load(Ordering::SeqCst));
}

fn pos(ran: &[usize], i: usize) -> usize {
    ran.iter().position(|x| *x == i).expect("item ran")
}

#[test]
fn scheduling_rules() {
    check("nothing_to_do", case(&[]), true, 0, |ran, _| {
        assert!(ran.is_empty())
    });
    check(
        "chain_runs_in_dependency_order",
        case(&[&[], &[0], &[1], &[2]]),
        true,
        0,
        |ran, peak| {
            assert_eq!(ran, [0, 1, 2, 3], "chain order");
            assert_eq!(peak, 1, "a chain never overlaps");
        },
    );
    check(
        "diamond_joins_after_both_branches",
        case(&[&[], &[0], &[0], &[1, 2]]),
        true,
        0,
        |ran, _| {
            assert_eq!(ran.len(), 4);
            assert!(pos(ran, 3) > pos(ran, 1) && pos(ran, 3) > pos(ran, 2));
        },
    );
    check(
        "independent_items_run_at_once",
        case(&[&[], &[], &[], &[]]),
        true,
        0,
        |ran, peak| {
            assert_eq!(ran.len(), 4);
            assert!(peak > 1, "no overlap without a limit: peak {peak}");
        },
    );
    check(
        "limit_bounds_concurrency",
        Case {
            limit: Some(2),
            ..case(&[&[], &[], &[], &[], &[], &[]])
        },
        true,
        0,
        |ran, peak| {
            assert_eq!(ran.len(), 6);
            assert!(peak <= 2, "limit 2, peak {peak}");
        },
    );
    check(
        "failure_skips_dependents_transitively",
        Case {
            failing: vec![0],
            ..case(&[&[], &[0], &[1], &[]])
        },
        false,
        0,
        |ran, _| {
            let mut r = ran.to_vec();
            r.sort();
            assert_eq!(r, [0, 3], "1 and 2 skipped, 3 independent");
        },
    );
    check(
        "failure_skips_a_join_with_one_failed_branch",
        Case {
            failing: vec![1],
            ..case(&[&[], &[0], &[0], &[1, 2]])
        },
        false,
        0,
        |ran, _| assert!(!ran.contains(&3) && ran.contains(&2)),
    );
    check(
        "stop_starts_nothing_new",
        Case {
            stop_after: Some(1),
            ..case(&[&[], &[0], &[1]])
        },
        false,
        0,
        |ran, _| assert_eq!(ran, [0]),
    );
    check(
        "stop_lets_started_items_finish",
        Case {
            stop_after: Some(2),
            limit: Some(1),
            ..case(&[&[], &[], &[], &[]])
        },
        false,
        0,
        |ran, _| assert_eq!(ran.len(), 2, "two started, then none"),
    );
    check(
        "lost_task_is_reported_and_its_dependents_never_start",
        Case {
            panicking: vec![0],
            ..case(&[&[], &[0], &[]])
        },
        false,
        1,
        |ran, _| assert!(!ran.contains(&1) && ran.contains(&2)),
    );
}

/// Issue 19 (memory at scale): a ready item's work future is made only
/// once the item holds a permit of the limit, so ten thousand independent
/// resources under `-parallelism=10` hold ten futures, not ten thousand;
/// and a permit held outside the schedule (the limit is shared), given
/// back while nothing of the schedule runs, still starts the queued items.
#[test]
fn issue19_queued_items_make_no_future_before_a_permit() {
    struct Case {
        name: &'static str,
        items: usize,
        limit: usize,
        /// Permits held outside the schedule, given back after 20 ms.
        held_outside: u32,
    }
    fn check(c: &Case) {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let limit = Arc::new(Semaphore::new(c.limit));
        let made = Arc::new(AtomicUsize::new(0));
        let done = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let outcome = rt.block_on(async {
            if c.held_outside > 0 {
                let held = limit.clone().acquire_many_owned(c.held_outside).await;
                tokio::spawn(async move {
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                    drop(held);
                });
            }
            let gate = Gate {
                limit: Some(limit.clone()),
                stop: None,
            };
            let order = Order::new((0..c.items).map(|_| Vec::new()));
            execute(order, gate, |i| {
                let alive = made.fetch_add(1, Ordering::SeqCst) + 1 - done.load(Ordering::SeqCst);
                peak.fetch_max(alive, Ordering::SeqCst);
                let done = done.clone();
                async move {
                    tokio::time::sleep(std::time::Duration::from_millis(1)).await;
                    done.fetch_add(1, Ordering::SeqCst);
                    (true, i)
                }
            })
            .await
        });
        assert!(outcome.ok, "case {}: ok", c.name);
        assert_eq!(
            outcome.reports.len(),
            c.items,
            "case {}: every item ran",
            c.name
        );
        let peak = peak.load(Ordering::SeqCst);
        assert!(
            peak <= c.limit,
            "case {}: {peak} futures alive at once, limit {}",
            c.name,
            c.limit
        );
    }
    for c in [
        Case {
            name: "many_ready_items_under_a_small_limit",
            items: 200,
            limit: 3,
            held_outside: 0,
        },
        Case {
            name: "the_only_permit_held_outside_then_given_back",
            items: 5,
            limit: 1,
            held_outside: 1,
        },
    ] {
        check(&c);
    }
}
