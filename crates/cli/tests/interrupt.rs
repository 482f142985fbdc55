//! Interrupting a long apply, with the `terrane` binary as a real process.
//!
//! * SIGINT during a 2,000-resource apply: no new operation starts, the
//!   ones in flight finish and are saved, the process exits non-zero saying
//!   so and releases its lock; the next plan creates exactly the rest.
//! * SIGKILL during the same apply: every object a reader had seen
//!   committed before the kill is still there unchanged, the state opens
//!   cleanly, the next plan takes over the dead holder's lock (saying so)
//!   and creates exactly the rest. A gate (`terraform_data.gate`, whose
//!   `local-exec` provisioner waits for the test's `release` file) keeps
//!   that apply from finishing before the kill however fast it goes.

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};
use terrane_state::{SqliteStore, StateStore};
use terrane_testkit::isolated;

const N: usize = 2000;

fn terrane(dir: &Path) -> Command {
    let mut c = isolated(env!("CARGO_BIN_EXE_terrane"), dir);
    c.env("TF_CLI_CONFIG_FILE", dir.join("empty.tfrc"));
    c
}

fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("empty.tfrc"), "").unwrap();
    std::fs::write(dir.path().join("main.tf"), format!("resource \"terraform_data\" \"r\" {{\n  count = {N}\n  input = \"value-${{count.index}}\"\n}}\n")).unwrap();
    dir
}

/// [`setup`] plus `terraform_data.gate`, whose provisioner waits for a
/// `release` file (five minutes at most): the apply cannot finish before
/// the test creates it.
fn setup_gated() -> tempfile::TempDir {
    let dir = setup();
    let wait =
        "i=0; while [ ! -e release ]; do i=$((i+1)); [ $i -gt 6000 ] && exit 1; sleep 0.05; done";
    let gate = format!("\nresource \"terraform_data\" \"gate\" {{\n  provisioner \"local-exec\" {{\n    command = \"{wait}\"\n  }}\n}}\n");
    let main = dir.path().join("main.tf");
    let text = std::fs::read_to_string(&main).unwrap() + &gate;
    std::fs::write(main, text).unwrap();
    dir
}

const GATE: &str = "terraform_data.gate";

/// The committed objects (address -> id), as any reader sees them; None
/// while the store cannot be read (e.g. not created yet).
fn committed(dir: &Path) -> Option<BTreeMap<String, String>> {
    let path = SqliteStore::default_path(dir);
    if !path.exists() {
        return None;
    }
    let store = SqliteStore::open(&path, None).ok()?;
    let snap = store.snapshot("default").ok()?;
    let mut out = BTreeMap::new();
    for (raddr, r) in &snap.resources {
        for (key, inst) in &r.instances {
            if let Some(o) = &inst.current {
                let id = o
                    .attributes
                    .get("id")
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default();
                out.insert(raddr.instance(key.clone()).to_string(), id);
            }
        }
    }
    Some(out)
}

fn start_apply(dir: &Path) -> Child {
    terrane(dir)
        .args(["apply", "-auto-approve", "-input=false", "-no-color"])
        .stdout(std::fs::File::create(dir.join("apply.out")).unwrap())
        .stderr(std::fs::File::create(dir.join("apply.err")).unwrap())
        .stdin(Stdio::null())
        .spawn()
        .expect("terrane starts")
}

/// Waits until at least `min` objects, but fewer than `total`, are
/// committed, and returns with the process stopped (SIGSTOP) and everything
/// seen committed along the way. The state is only read while the process
/// is stopped, and the process runs a few milliseconds between two reads:
/// however fast the apply goes, and however slowly this reader runs on a
/// loaded machine, the count read is the count the signal the test sends
/// next will find, and a run that has not finished is caught mid-way. The
/// caller resumes the process with SIGCONT (or kills it).
fn wait_for(dir: &Path, child: &mut Child, min: usize, total: usize) -> BTreeMap<String, String> {
    let deadline = Instant::now() + Duration::from_secs(300);
    let mut seen = BTreeMap::new();
    loop {
        signal(child, Signal::SIGSTOP);
        if !stopped(child) {
            let status = child.wait().unwrap();
            panic!(
                "apply ended ({status}) before {min} objects were committed:\n{}",
                log(dir)
            );
        }
        if let Some(objs) = committed(dir) {
            let n = objs.len();
            seen.extend(objs);
            assert!(
                n < total,
                "all {n} objects were committed before the test could stop the apply:\n{}",
                log(dir)
            );
            if n >= min {
                return seen;
            }
        }
        assert!(
            Instant::now() < deadline,
            "apply too slow to reach {min} objects"
        );
        signal(child, Signal::SIGCONT);
        std::thread::sleep(Duration::from_millis(3));
    }
}

/// Waits until every thread of `child` is stopped (state `T` in /proc):
/// SIGSTOP is delivered asynchronously. False if the process has ended.
fn stopped(child: &Child) -> bool {
    let tasks = format!("/proc/{}/task", child.id());
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let Ok(entries) = std::fs::read_dir(&tasks) else {
            return false;
        };
        let states: Vec<char> = entries
            .flatten()
            .filter_map(|t| {
                let stat = std::fs::read_to_string(t.path().join("stat")).ok()?;
                // "pid (comm) S ...": the state follows the last ')'.
                stat.rsplit_once(')')?.1.trim_start().chars().next()
            })
            .collect();
        if states.contains(&'Z') || states.contains(&'X') {
            return false;
        }
        if !states.is_empty() && states.iter().all(|c| matches!(c, 'T' | 't')) {
            return true;
        }
        assert!(Instant::now() < deadline, "terrane did not stop on SIGSTOP");
        std::thread::sleep(Duration::from_micros(200));
    }
}

fn log(dir: &Path) -> String {
    let out = std::fs::read_to_string(dir.join("apply.out")).unwrap_or_default();
    let err = std::fs::read_to_string(dir.join("apply.err")).unwrap_or_default();
    let tail = |s: &str| {
        s.lines()
            .rev()
            .take(30)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("\n")
    };
    format!(
        "--- stdout (tail)\n{}\n--- stderr (tail)\n{}",
        tail(&out),
        tail(&err)
    )
}

fn signal(child: &Child, sig: Signal) {
    let pid = Pid::from_raw(child.id() as i32);
    kill(pid, sig).unwrap_or_else(|e| panic!("kill -{sig} failed: {e}"));
}

fn wait_exit(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("terrane did not exit within {limit:?} of the signal");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// "Plan: X to add, Y to change, Z to destroy." of a plan's output.
fn plan_counts(out: &Output) -> (usize, usize, usize) {
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("Plan: "))
        .unwrap_or_else(|| {
            panic!(
                "no plan summary in:\n{text}\n{}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
    let nums: Vec<usize> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect();
    (nums[0], nums[1], nums[2])
}

fn plan(dir: &Path) -> Output {
    terrane(dir)
        .args(["plan", "-input=false", "-no-color", "-detailed-exitcode"])
        .output()
        .unwrap()
}

/// Every object is complete: id known, input as configured, output = input.
fn check_objects(dir: &Path) {
    let store =
        SqliteStore::open(&SqliteStore::default_path(dir), None).expect("state opens cleanly");
    let snap = store.snapshot("default").expect("state reads cleanly");
    for (raddr, r) in &snap.resources {
        if raddr.to_string() == GATE {
            continue;
        }
        for (key, inst) in &r.instances {
            let addr = raddr.instance(key.clone());
            let o = inst
                .current
                .as_ref()
                .unwrap_or_else(|| panic!("{addr} has no current object"));
            assert!(inst.deposed.is_empty(), "{addr} has deposed objects");
            let terrane_state::InstanceKey::Int(i) = key else {
                panic!("unexpected key {key:?}")
            };
            let want = serde_json::json!({"value": format!("value-{i}"), "type": "string"});
            assert_eq!(
                o.attributes.get("input"),
                Some(want.clone()),
                "{addr} input"
            );
            assert_eq!(o.attributes.get("output"), Some(want), "{addr} output");
            assert!(
                o.attributes
                    .get("id")
                    .is_some_and(|v| v.as_str().is_some_and(|s| !s.is_empty())),
                "{addr} id"
            );
        }
    }
}

#[test]
fn sigint_stops_new_work_saves_in_flight_and_plan_finishes_the_rest() {
    let dir = setup();
    let d = dir.path();
    let mut child = start_apply(d);
    let seen = wait_for(d, &mut child, 100, N);
    signal(&child, Signal::SIGINT);
    signal(&child, Signal::SIGCONT);
    let status = wait_exit(&mut child, Duration::from_secs(60));
    let err = std::fs::read_to_string(d.join("apply.err")).unwrap();
    assert!(
        !status.success(),
        "an interrupted apply must fail:\n{}",
        log(d)
    );
    assert!(
        status.code().is_some(),
        "terrane must exit by itself, not die of the signal ({status})"
    );
    assert!(
        err.contains("Interrupt received"),
        "no interrupt message:\n{}",
        log(d)
    );
    assert!(
        err.contains("interrupted"),
        "no closing message:\n{}",
        log(d)
    );
    let after = committed(d).expect("state readable after the interrupt");
    let created = after.len();
    assert!(created >= seen.len(), "objects seen committed were lost");
    for (addr, id) in &seen {
        assert_eq!(
            after.get(addr),
            Some(id),
            "{addr} changed or vanished after the interrupt"
        );
    }
    assert!(
        created < N,
        "the interrupt did not stop the apply (all {N} created)"
    );
    check_objects(d);
    // The lock was released: plan runs, and creates exactly the rest.
    let out = plan(d);
    assert_eq!(
        out.status.code(),
        Some(2),
        "plan after interrupt:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (add, change, destroy) = plan_counts(&out);
    assert_eq!(
        (add, change, destroy),
        (N - created, 0, 0),
        "created {created} + planned {add} must be {N}"
    );
    eprintln!(
        "SIGINT after {} seen committed: {created} created, {add} planned",
        seen.len()
    );
}

#[test]
fn item3_sigkill_loses_nothing_committed_and_next_plan_takes_over_the_lock() {
    let dir = setup_gated();
    let d = dir.path();
    let mut child = start_apply(d);
    let seen = wait_for(d, &mut child, 200, N + 1);
    signal(&child, Signal::SIGKILL);
    let status = wait_exit(&mut child, Duration::from_secs(30));
    // The gate's waiting command outlived terrane: let it end.
    std::fs::write(d.join("release"), "").unwrap();
    assert!(
        status.code().is_none(),
        "terrane should have died of SIGKILL ({status})"
    );
    let after = committed(d).expect("state opens cleanly after SIGKILL");
    for (addr, id) in &seen {
        assert_eq!(
            after.get(addr),
            Some(id),
            "{addr} was seen committed but is lost or changed after SIGKILL"
        );
    }
    // The apply could not finish before the kill: the gate's provisioner
    // waits for `release`, written only after it (the gate's object itself
    // is recorded before its provisioner runs, as Terraform records it),
    // and terrane died of the SIGKILL, so the kill landed mid-apply.
    let created = after.len();
    check_objects(d);
    // The dead holder's lock (issue 12 item 3): the next plan proceeds
    // without force-unlock, as after a kernel-released OS file lock, and
    // says whose stale lock it released.
    let out = plan(d);
    // A warning, so on standard output as Terraform prints warnings.
    let err = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(2), "plan after SIGKILL:\n{err}");
    assert!(
        err.contains("Released a stale state lock")
            && err.contains(&format!("held by process {}", child.id())),
        "item3: plan must note the dead holder's lock it took over:\n{err}"
    );
    let (add, change, destroy) = plan_counts(&out);
    assert_eq!(
        (add, change, destroy),
        (N + 1 - created, 0, 0),
        "created {created} + planned {add} must be {N} and the gate"
    );
    // And the rest applies cleanly on top.
    let out = terrane(d)
        .args(["apply", "-auto-approve", "-input=false", "-no-color"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "apply after SIGKILL: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(committed(d).unwrap().len(), N + 1);
    check_objects(d);
    eprintln!(
        "SIGKILL after {} seen committed: {created} committed, {add} planned",
        seen.len()
    );
}
