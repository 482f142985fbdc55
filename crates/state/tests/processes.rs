//! Tests with real processes: a writer killed with SIGKILL at random points
//! loses nothing it acknowledged; two processes racing for one lock get
//! exactly one winner, the loser learning who won. SQLite always; the same
//! against the real PostgreSQL server (`TERRANE_TEST_PG_URL`).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use terrane_state::{InstanceKey, LockInfo, ResourceAddr, SqliteStore, StateError, StateStore};

fn tool() -> std::path::PathBuf {
    terrane_testkit::fixture("terrane-state-tool")
}

/// Runs `persist-loop`, kills it once `kill_after` acknowledgements were
/// read, and returns the last index it acknowledged before dying. The writer
/// keeps going while the pipe is read, so the acknowledgements it wrote
/// between the read and the kill are drained from the pipe afterwards: every
/// one of them was acknowledged and must survive too.
fn run_and_kill(
    target: &str,
    n: u64,
    name: &str,
    kill_after: u64,
    env: &[(&str, &str)],
) -> Option<u64> {
    let mut child = Command::new(tool())
        .args(["persist-loop", target, &n.to_string(), name])
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut last = None;
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut killed = false;
    while let Some(Ok(line)) = lines.next() {
        let Some(i) = line
            .strip_prefix("ack ")
            .and_then(|i| i.parse::<u64>().ok())
        else {
            break;
        }; // a line cut by the kill
        last = Some(i);
        if !killed && i + 1 >= kill_after {
            child.kill().unwrap(); // SIGKILL
            killed = true;
        }
    }
    if !killed {
        child.kill().ok();
    }
    child.wait().unwrap();
    last
}

fn check_after_kill(store: &dyn StateStore, name: &str, last_ack: Option<u64>, case: &str) {
    let snap = store
        .snapshot("default")
        .unwrap_or_else(|e| panic!("case {case}: store must open cleanly: {e}"));
    let addr = ResourceAddr::managed("terraform_data", name);
    let present: Vec<i64> = snap
        .resources
        .get(&addr)
        .map(|r| {
            r.instances
                .keys()
                .map(|k| match k {
                    InstanceKey::Int(i) => *i,
                    _ => -1,
                })
                .collect()
        })
        .unwrap_or_default();
    let acked = last_ack.map(|l| l + 1).unwrap_or(0);
    assert!(
        present.len() as u64 >= acked,
        "case {case}: {} acknowledged, only {} present",
        acked,
        present.len()
    );
    assert!(present.len() as u64 <= acked + 1, "case {case}: more changes present than were acknowledged plus the one in flight at the kill");
    for (idx, i) in present.iter().enumerate() {
        assert_eq!(
            *i, idx as i64,
            "case {case}: changes are present in order without gaps"
        );
        let obj = snap
            .object(&addr.instance(InstanceKey::Int(*i)), None)
            .unwrap();
        assert_eq!(
            obj.attributes.json()["id"],
            serde_json::json!(format!("id-{i}")),
            "case {case}: object {i} complete"
        );
        assert_eq!(
            obj.attributes.json()["input"]["value"]["text"]
                .as_str()
                .map(str::len),
            Some(64),
            "case {case}: object {i} not half-written"
        );
    }
}

/// The crash loop on one store: kill at five random points, force-unlock the
/// dead holder's lock (reported as dead), check, go on.
/// The kill points are seeded: the seed is printed, and
/// `TERRANE_TEST_SEED=<seed>` replays the same points.
fn crash_loop(target: &str, open: &dyn Fn() -> Box<dyn StateStore>, env: &[(&str, &str)]) {
    let mut points = terrane_testkit::Seeded::new("kill points");
    for round in 0..5 {
        let name = format!("item{round}");
        let kill_after = 1 + points.below(3000);
        let last = run_and_kill(target, 5000, &name, kill_after, env);
        let store = open();
        check_after_kill(
            store.as_ref(),
            &name,
            last,
            &format!(
                "round_{round}_killed_after_{kill_after} (TERRANE_TEST_SEED={})",
                points.seed()
            ),
        );
        // The dead writer's lock is gone for the next writer: PostgreSQL
        // released it with the dead session; the embedded store takes over
        // a lock whose holder provably died, and says whose it was.
        match store.lock(
            "default",
            terrane_state::LockInfo::new("OperationTypeApply", "after crash"),
        ) {
            Ok(run) => run.finish().unwrap(),
            Err(e) => panic!("round {round}: the dead holder's lock was not released: {e}"),
        }
    }
}

#[test]
fn sqlite_sigkill_loses_nothing_acknowledged() {
    let dir = terrane_testkit::temp_dir();
    let db = dir.path().join("crash.db");
    let target = db.display().to_string();
    let open = || Box::new(SqliteStore::open(&db, None).unwrap()) as Box<dyn StateStore>;
    crash_loop(&target, &open, &[]);
}

#[test]
fn postgres_sigkill_loses_nothing_acknowledged() {
    let Some(url) = terrane_testkit::pg_url() else {
        return;
    };
    let schema = format!("t_crash_{}", std::process::id());
    let open = || {
        Box::new(terrane_state::PgStore::open(&url, &schema, None).unwrap()) as Box<dyn StateStore>
    };
    crash_loop(&url, &open, &[("TERRANE_PG_SCHEMA", &schema)]);
}

/// Waits until the child `pid` has exited but is not reaped yet (state
/// `Z` in /proc/PID/stat): a synchronization on the process itself, not a
/// timed guess that a loaded machine can outrun.
fn wait_until_zombie(pid: u32) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // The state follows the command name, which is in parentheses.
        let state = stat
            .rsplit_once(") ")
            .and_then(|(_, rest)| rest.chars().next());
        if state == Some('Z') {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "case zombie_appears: process {pid} is still {state:?} after 60s"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Two processes ask for the lock at once. The winner holds it until its
/// standard input closes, which happens only after both answered, so the
/// loser always finds it held: no timed hold for a slow machine to outrun.
fn race(target: &str, ws: &str, env: &[(&str, &str)]) {
    let spawn = || {
        Command::new(tool())
            .args(["lock", target, ws, "stdin"])
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let mut children = [spawn(), spawn()];
    let outs: Vec<String> = children
        .iter_mut()
        .map(|c| {
            let mut line = String::new();
            BufReader::new(c.stdout.as_mut().unwrap())
                .read_line(&mut line)
                .unwrap();
            line
        })
        .collect();
    for mut c in children {
        drop(c.stdin.take()); // the winner lets go
        assert!(c.wait().unwrap().success(), "case both_exit_cleanly");
    }
    let winners: Vec<&String> = outs.iter().filter(|o| o.starts_with("locked ")).collect();
    let losers: Vec<&String> = outs.iter().filter(|o| o.starts_with("refused ")).collect();
    assert_eq!(
        (winners.len(), losers.len()),
        (1, 1),
        "case exactly_one_winner: {outs:?}"
    );
    let winner_id = winners[0].trim().trim_start_matches("locked ");
    assert!(
        losers[0].contains("already locked") && losers[0].contains(winner_id),
        "case loser_learns_holder: {}",
        losers[0]
    );
    assert!(
        losers[0].contains("OperationTypeApply") && losers[0].contains("Created:"),
        "case holder_details: {}",
        losers[0]
    );
}

#[test]
fn sqlite_two_processes_race_for_the_lock() {
    let dir = terrane_testkit::temp_dir();
    let db = dir.path().join("race.db");
    SqliteStore::open(&db, None).unwrap();
    race(&db.display().to_string(), "default", &[]);
}

#[test]
fn postgres_two_processes_race_for_the_lock() {
    let Some(url) = terrane_testkit::pg_url() else {
        return;
    };
    let schema = format!("t_race_{}", std::process::id());
    terrane_state::PgStore::open(&url, &schema, None).unwrap();
    race(&url, "default", &[("TERRANE_PG_SCHEMA", &schema)]);
}

/// A lock row as another holder would have left it.
fn plant_lock(db: &std::path::Path, info: &LockInfo) {
    let c = rusqlite::Connection::open(db).unwrap();
    c.execute(
        "INSERT INTO locks(workspace, id, operation, info, who, created, pid, host, start_time) VALUES ('default', ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        rusqlite::params![info.id, info.operation, info.info, info.who, info.created, info.pid, info.host, info.start_time.map(|t| t as i64)],
    )
    .unwrap();
}

#[test]
fn item3_lock_of_a_dead_holder_is_taken_over() {
    let dir = terrane_testkit::temp_dir();
    let db = dir.path().join("takeover.db");
    SqliteStore::open(&db, None).unwrap();
    // A real holder killed with SIGKILL while it holds the lock.
    let mut child = Command::new(tool())
        .args(["lock", &db.display().to_string(), "default", "600"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let dead_id = line
        .trim()
        .strip_prefix("locked ")
        .unwrap_or_else(|| panic!("holder did not lock: {line}"))
        .to_string();
    let store = SqliteStore::open(&db, None).unwrap();
    assert!(
        matches!(
            store.lock("default", LockInfo::new("OperationTypePlan", "")),
            Err(StateError::Locked { .. })
        ),
        "case live_holder_refuses"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    let run = store
        .lock("default", LockInfo::new("OperationTypePlan", ""))
        .unwrap_or_else(|e| panic!("case sigkilled_holder_taken_over: {e}"));
    assert_eq!(
        run.taken_over().map(|h| h.id.as_str()),
        Some(dead_id.as_str()),
        "case takeover_names_dead_lock"
    );
    run.finish().unwrap();

    // Planted holders: who is provably dead, who is not. A holder that
    // exited but was not reaped yet (a zombie) holds nothing either.
    let mut zombie = Command::new("true").spawn().unwrap();
    wait_until_zombie(zombie.id());
    let zombie_start = terrane_state::process_start_time(zombie.id());
    assert!(zombie_start.is_some(), "case zombie_has_start_time");
    let me = LockInfo::new("OperationTypeApply", "");
    let cases: Vec<(&str, LockInfo, bool)> = vec![
        (
            "pid_reused_by_other_process",
            LockInfo {
                start_time: me.start_time.map(|t| t + 1),
                ..me.clone()
            },
            true,
        ),
        (
            "pid_gone",
            LockInfo {
                pid: u32::MAX - 7,
                ..me.clone()
            },
            true,
        ),
        (
            "exited_not_reaped",
            LockInfo {
                pid: zombie.id(),
                start_time: zombie_start,
                ..me.clone()
            },
            true,
        ),
        ("live_same_process", me.clone(), false),
        (
            "other_host",
            LockInfo {
                host: format!("{}-elsewhere", me.host),
                pid: u32::MAX - 7,
                ..me.clone()
            },
            false,
        ),
        (
            "no_pid_recorded",
            LockInfo {
                pid: 0,
                ..me.clone()
            },
            false,
        ),
    ];
    for (case, info, dead) in cases {
        let info = LockInfo {
            id: format!("planted-{case}"),
            ..info
        };
        plant_lock(&db, &info);
        match store.lock("default", LockInfo::new("OperationTypePlan", "")) {
            Ok(run) => {
                assert!(
                    dead,
                    "case {case}: a live or remote holder's lock was taken over"
                );
                assert_eq!(
                    run.taken_over().map(|h| h.id.clone()),
                    Some(info.id.clone()),
                    "case {case}"
                );
                run.finish().unwrap();
            }
            Err(StateError::Locked { holder, .. }) => {
                assert!(
                    !dead,
                    "case {case}: a dead holder's lock was not taken over"
                );
                assert_eq!(holder.id, info.id, "case {case}");
                store.force_unlock("default", &info.id).unwrap();
            }
            Err(e) => panic!("case {case}: {e}"),
        }
    }
    zombie.wait().unwrap();
}
