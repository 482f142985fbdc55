//! Spinning before a runtime thread sleeps, while the peer's next message
//! is likely microseconds away.
//!
//! The engine and a plugin take turns: the engine sends a batch of calls
//! and waits, the plugin answers them and waits for the next batch. Each
//! turn takes tens to hundreds of microseconds, and a process that waits
//! in `epoll_wait` must be woken by the kernel when the peer writes (on a
//! virtual machine, an idle vCPU halts and needs an interrupt from the
//! other one). On the 2-core VM the benchmarks run on, a 1,000-instance
//! no-op plan through the random plugin took 122 ms sleeping and 74 ms
//! spinning, a plan 54 and 45 ms (medians of 20 alternated runs). The
//! spinning costs CPU time: the no-op plan's two processes used 129 and
//! 133 ms of it, the plan's 54 and 70 ms.
//!
//! So a runtime thread that is about to sleep while it waits for its peer
//! first polls its plugin connections ([`watch`]) without blocking, for
//! up to the budget: [`BUDGET_ENV`] microseconds, 0 turns it off. Unset,
//! the engine spins for [`DEFAULT_BUDGET_US`] and passes its budget to the
//! plugins it launches ([`plugin_env`]); a plugin that Terraform launched
//! does not spin, since a spinning plugin would take a CPU that Terraform's
//! own threads could use. Go's scheduler likewise spins before it parks
//! a thread. Between polls the thread yields, so a peer that shares its
//! CPU still runs. A thread waits for its peer when
//! - on the engine's side, a call to a plugin is awaiting its answer;
//! - on a plugin's side, no call is in progress (so the next thing to
//!   come is a request: a call in progress may be waiting for a database
//!   or a cloud API instead, which a spin on the engine's socket would
//!   only delay).
//!
//! There is no spinning:
//! - with fewer than two CPUs available (the peer could only run once the
//!   spinner stopped);
//! - in a process with no plugin connection (the engine with in-process
//!   providers only);
//! - after a spin that caught nothing and a wait that outlasted the
//!   budget or was ended by something else, until a wait ended by the
//!   peer is short again ([`Pacer`]): a slow provider's calls cost one
//!   budget, not one per wake-up.
//!
//! The runtimes that hold plugin connections run [`before_park`] and
//! [`after_unpark`] as their park hooks: the `terrane` binary's and
//! `serve_main`'s current-thread runtime.

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use std::cell::Cell;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The environment variable that sets the budget in microseconds.
pub const BUDGET_ENV: &str = "TERRANE_PLUGIN_SPIN_US";

/// The engine's budget when [`BUDGET_ENV`] is unset: long enough to cover the
/// peer's turn at the default parallelism of 10 (10 calls of 20-50 µs).
pub const DEFAULT_BUDGET_US: u64 = 500;

/// Which end of a connection this process is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The engine, calling a plugin.
    Client,
    /// A plugin, serving the engine.
    Server,
}

impl Side {
    fn index(self) -> usize {
        match self {
            Side::Client => 0,
            Side::Server => 1,
        }
    }
}

/// The connections a spinning thread polls: a duplicate of each socket's
/// descriptor, removed when its [`Watch`] is dropped.
static WATCHED: Mutex<Vec<(u64, OwnedFd)>> = Mutex::new(Vec::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(0);
/// Watched connections and calls in progress, by [`Side::index`].
static CONNECTIONS: [AtomicUsize; 2] = [AtomicUsize::new(0), AtomicUsize::new(0)];
static CALLS: [AtomicUsize; 2] = [AtomicUsize::new(0), AtomicUsize::new(0)];

/// Keeps a connection's socket among the watched ones; dropping it closes
/// the duplicate descriptor, so the socket closes when its owner closes
/// it. Hold it exactly as long as the connection.
pub struct Watch {
    id: u64,
    side: Side,
}

impl Drop for Watch {
    fn drop(&mut self) {
        let mut watched = WATCHED.lock().unwrap_or_else(|p| p.into_inner());
        watched.retain(|(id, _)| *id != self.id);
        CONNECTIONS[self.side.index()].fetch_sub(1, Ordering::Relaxed);
    }
}

/// Watches the socket `fd` of a connection on `side` until the returned
/// guard is dropped; `None` if the descriptor could not be duplicated
/// (then the connection simply never spins).
pub fn watch(fd: impl AsFd, side: Side) -> Option<Watch> {
    let owned = fd.as_fd().try_clone_to_owned().ok()?;
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let mut watched = WATCHED.lock().unwrap_or_else(|p| p.into_inner());
    watched.push((id, owned));
    CONNECTIONS[side.index()].fetch_add(1, Ordering::Relaxed);
    Some(Watch { id, side })
}

/// A call in progress on `side` for as long as it is held: on the client
/// from sending the request until the answer's head arrives (or the call
/// is dropped), on the server while a call is being answered.
pub(crate) struct Call(Side);

impl Call {
    pub(crate) fn start(side: Side) -> Call {
        CALLS[side.index()].fetch_add(1, Ordering::Relaxed);
        Call(side)
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        CALLS[self.0.index()].fetch_sub(1, Ordering::Relaxed);
    }
}

/// What decides whether a thread waits for its peer (see the module
/// docs): watched connections and calls in progress on each side.
#[derive(Clone, Copy, Debug, Default)]
struct Counts {
    client_connections: usize,
    client_calls: usize,
    server_connections: usize,
    server_calls: usize,
}

impl Counts {
    fn now() -> Counts {
        Counts {
            client_connections: CONNECTIONS[0].load(Ordering::Relaxed),
            client_calls: CALLS[0].load(Ordering::Relaxed),
            server_connections: CONNECTIONS[1].load(Ordering::Relaxed),
            server_calls: CALLS[1].load(Ordering::Relaxed),
        }
    }

    fn awaits_peer(self) -> bool {
        (self.client_connections > 0 && self.client_calls > 0)
            || (self.server_connections > 0 && self.server_calls == 0)
    }
}

/// The budget [`BUDGET_ENV`] sets, if it is set to a number of
/// microseconds (anything else counts as unset).
fn configured() -> Option<u64> {
    static CONFIGURED: OnceLock<Option<u64>> = OnceLock::new();
    *CONFIGURED.get_or_init(|| {
        std::env::var(BUDGET_ENV)
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
    })
}

fn cpus() -> usize {
    static CPUS: OnceLock<usize> = OnceLock::new();
    *CPUS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The budget: [`BUDGET_ENV`]; unset, [`DEFAULT_BUDGET_US`] for the
/// engine's side and none for a plugin's (Terraform does not spin, and a
/// plugin spinning beside it would only take a CPU from it: the engine
/// passes its budget to the plugins it launches, [`plugin_env`]); zero
/// with fewer than two CPUs available.
fn budget(c: Counts) -> Duration {
    budget_for(configured(), cpus(), c)
}

fn budget_for(configured: Option<u64>, cpus: usize, c: Counts) -> Duration {
    let us = match configured {
        Some(us) => us,
        None if c.client_connections > 0 => DEFAULT_BUDGET_US,
        None => 0,
    };
    if cpus < 2 {
        Duration::ZERO
    } else {
        Duration::from_micros(us)
    }
}

/// The variable the engine sets in a plugin's environment: its own
/// budget, so that the plugin spins as long while it awaits the engine.
pub fn plugin_env() -> (&'static str, String) {
    (
        BUDGET_ENV,
        configured().unwrap_or(DEFAULT_BUDGET_US).to_string(),
    )
}

/// Polls `fds` (each asking for `POLLIN`, [`for_input`]) without blocking
/// until one is readable (true) or `budget` has passed (false). An error
/// (a closed descriptor) ends it at once: the runtime's own wait will see
/// what happened.
fn spin_until_ready(fds: &mut [PollFd<'_>], budget: Duration) -> bool {
    let deadline = Instant::now() + budget;
    loop {
        match poll(fds, PollTimeout::ZERO) {
            Ok(0) => {}
            Ok(_) => return true,
            Err(_) => return false,
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::yield_now();
    }
}

/// Whether a thread spins before its next sleep: it does while its waits
/// for the peer are short. A spin that caught the peer keeps it on. A
/// wait after a spin that caught nothing (or without a spin) turns it on
/// if the wait ended within the budget with the peer's input, and off
/// otherwise (a long wait, or one that something else ended).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Pacer {
    spin: bool,
    /// When the thread went to sleep without a spin catching anything.
    slept_at: Option<Instant>,
}

impl Pacer {
    const START: Pacer = Pacer {
        spin: true,
        slept_at: None,
    };

    /// Before sleeping: `caught` says whether a spin saw input.
    fn before_sleep(&mut self, caught: bool, now: Instant) {
        self.slept_at = if caught { None } else { Some(now) };
    }

    /// Whether [`Pacer::after_wake`] needs to know if the peer's input
    /// is waiting.
    fn judges_wake(&self) -> bool {
        self.slept_at.is_some()
    }

    /// After waking; `peer_ready` says whether a watched socket has input.
    fn after_wake(&mut self, now: Instant, budget: Duration, peer_ready: bool) {
        if let Some(at) = self.slept_at.take() {
            self.spin = peer_ready && now.saturating_duration_since(at) <= budget;
        }
    }
}

thread_local! {
    static PACER: Cell<Pacer> = const { Cell::new(Pacer::START) };
}

/// The watched sockets, polled once (`budget` zero) or until one has
/// input or the budget has passed.
fn peer_ready(budget: Duration) -> bool {
    let watched = WATCHED.lock().unwrap_or_else(|p| p.into_inner());
    let mut fds: Vec<PollFd<'_>> = watched
        .iter()
        .map(|(_, fd)| for_input(fd.as_fd()))
        .collect();
    !fds.is_empty() && spin_until_ready(&mut fds, budget)
}

fn for_input(fd: BorrowedFd<'_>) -> PollFd<'_> {
    PollFd::new(fd, PollFlags::POLLIN)
}

/// The runtime's `on_thread_park` hook: spins while this thread waits for
/// its peer and its recent waits were short.
pub fn before_park() {
    let counts = Counts::now();
    let budget = budget(counts);
    if budget.is_zero() {
        return;
    }
    let mut pacer = PACER.get();
    let awaits = counts.awaits_peer();
    let caught = awaits && pacer.spin && peer_ready(budget);
    if awaits {
        pacer.before_sleep(caught, Instant::now());
    } else {
        // A wait for something else says nothing about the peer.
        pacer.slept_at = None;
    }
    PACER.set(pacer);
}

/// The runtime's `on_thread_unpark` hook.
pub fn after_unpark() {
    let budget = budget(Counts::now());
    if budget.is_zero() {
        return;
    }
    let mut pacer = PACER.get();
    if pacer.judges_wake() {
        let ready = peer_ready(Duration::ZERO);
        pacer.after_wake(Instant::now(), budget, ready);
        PACER.set(pacer);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::unix::net::UnixStream;

    /// One wait of a thread: whether a spin caught the peer's input (if
    /// the thread was spinning), else how long it slept and whether the
    /// peer's input was what woke it.
    #[derive(Clone, Copy)]
    struct Wait {
        caught: bool,
        slept_us: u64,
        by_peer: bool,
    }

    fn check(name: &str, waits: &[Wait], want: &[bool]) {
        let budget = Duration::from_micros(500);
        let mut pacer = Pacer::START;
        let mut got = vec![pacer.spin];
        let t0 = Instant::now();
        for wait in waits {
            pacer.before_sleep(wait.caught && pacer.spin, t0);
            let woke = t0 + Duration::from_micros(wait.slept_us);
            pacer.after_wake(woke, budget, wait.by_peer);
            got.push(pacer.spin);
        }
        assert_eq!(got, want, "{name}");
    }

    #[test]
    fn pacer() {
        let caught = Wait {
            caught: true,
            slept_us: 0,
            by_peer: true,
        };
        let peer = |slept_us| Wait {
            caught: false,
            slept_us,
            by_peer: true,
        };
        let other = |slept_us| Wait {
            caught: false,
            slept_us,
            by_peer: false,
        };
        let cases: Vec<(&str, Vec<Wait>, Vec<bool>)> = vec![
            ("starts spinning", vec![], vec![true]),
            (
                "caught spins keep spinning",
                vec![caught, caught],
                vec![true, true, true],
            ),
            (
                "a long wait stops it",
                vec![peer(20_000)],
                vec![true, false],
            ),
            (
                "a miss the peer ended soon after keeps it",
                vec![peer(400)],
                vec![true, true],
            ),
            (
                "a wait something else ended stops it",
                vec![other(10)],
                vec![true, false],
            ),
            (
                "stays off while waits are long",
                vec![peer(20_000), peer(900), peer(5_000)],
                vec![true, false, false, false],
            ),
            (
                "a short wait for the peer turns it back on",
                vec![peer(20_000), peer(100), caught],
                vec![true, false, true, true],
            ),
            (
                "short waits for something else leave it off",
                vec![peer(20_000), other(5), other(5)],
                vec![true, false, false, false],
            ),
            (
                "a wait of exactly the budget counts as short",
                vec![peer(20_000), peer(500)],
                vec![true, false, true],
            ),
            (
                "input that came while not spinning is not a catch",
                vec![peer(20_000), caught],
                vec![true, false, true],
            ),
        ];
        for (name, waits, want) in &cases {
            check(name, waits, want);
        }
    }

    #[test]
    fn awaits_peer() {
        let c = |client_connections, client_calls, server_connections, server_calls| Counts {
            client_connections,
            client_calls,
            server_connections,
            server_calls,
        };
        let cases = [
            ("nothing watched", c(0, 0, 0, 0), false),
            ("engine, no call out", c(1, 0, 0, 0), false),
            ("engine, calls out", c(2, 3, 0, 0), true),
            ("plugin, idle", c(0, 0, 1, 0), true),
            ("plugin, a call in progress", c(0, 0, 1, 1), false),
            ("calls counted but no connection", c(0, 1, 0, 0), false),
        ];
        for (name, counts, want) in cases {
            assert_eq!(counts.awaits_peer(), want, "{name}");
        }
    }

    #[test]
    fn budgets() {
        let engine = Counts {
            client_connections: 1,
            ..Counts::default()
        };
        let plugin = Counts {
            server_connections: 1,
            ..Counts::default()
        };
        let us = Duration::from_micros;
        let cases = [
            ("engine, unset", None, 2, engine, us(DEFAULT_BUDGET_US)),
            (
                "plugin, unset (Terraform launched it)",
                None,
                2,
                plugin,
                us(0),
            ),
            ("plugin, set by its engine", Some(300), 2, plugin, us(300)),
            ("engine, set", Some(1000), 8, engine, us(1000)),
            ("engine, turned off", Some(0), 2, engine, us(0)),
            ("one CPU", Some(300), 1, plugin, us(0)),
            ("one CPU, unset", None, 1, engine, us(0)),
        ];
        for (name, configured, cpus, counts, want) in cases {
            assert_eq!(budget_for(configured, cpus, counts), want, "{name}");
        }
    }

    #[test]
    fn spin_sees_input() {
        let (a, mut b) = UnixStream::pair().unwrap();
        let (c, _d) = UnixStream::pair().unwrap();
        let budget = Duration::from_micros(50);
        let spin = |socks: &[&UnixStream], budget| {
            let mut fds: Vec<PollFd<'_>> = socks.iter().map(|s| for_input(s.as_fd())).collect();
            spin_until_ready(&mut fds, budget)
        };
        assert!(!spin(&[&a], budget), "nothing sent yet");
        assert!(!spin(&[&a], Duration::ZERO), "one poll");
        b.write_all(b"x").unwrap();
        assert!(spin(&[&a], budget), "one byte waiting");
        assert!(spin(&[&a], Duration::ZERO), "seen by one poll");
        assert!(spin(&[&c, &a], budget), "input on any watched socket");
    }

    #[test]
    fn dropping_the_watch_lets_the_socket_close() {
        let (a, mut b) = UnixStream::pair().unwrap();
        let w = watch(&a, Side::Client).unwrap();
        drop(a);
        b.set_nonblocking(true).unwrap();
        let mut buf = [0u8; 1];
        let err = b.read(&mut buf).unwrap_err();
        assert_eq!(
            err.kind(),
            std::io::ErrorKind::WouldBlock,
            "the duplicate holds it open"
        );
        drop(w);
        assert_eq!(
            b.read(&mut buf).unwrap(),
            0,
            "closed once the watch is gone"
        );
    }
}
