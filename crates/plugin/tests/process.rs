//! Plugin processes, with real processes: a plugin's children and its
//! socket directory go with it however it ends; a plugin outlives the
//! thread that launched it (the death signal follows the forking thread);
//! an endless handshake line is refused; terrane's secrets are not in a
//! plugin's environment. Engine death (SIGKILL of `terrane`) is tested in
//! crates/cli/tests/plugin_processes.rs.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use terrane_plugin::{launch, LaunchError, LaunchOptions, PluginClient};

fn fixture() -> std::path::PathBuf {
    terrane_testkit::fixture("terrane-plugin-fixture")
}

/// A process by pid and start time (so a reused pid is not mistaken for it).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Proc {
    pid: u32,
    start: u64,
}

/// (state, ppid, start time) from /proc/PID/stat.
fn stat(pid: u32) -> Option<(char, u32, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    Some((
        fields[0].chars().next()?,
        fields[1].parse().ok()?,
        fields[19].parse().ok()?,
    ))
}

fn proc_of(pid: u32) -> Proc {
    Proc {
        pid,
        start: stat(pid).expect("process exists").2,
    }
}

/// Running (a zombie is dead: it only waits to be reaped).
fn alive(p: Proc) -> bool {
    stat(p.pid).is_some_and(|(state, _, start)| state != 'Z' && start == p.start)
}

fn children_of(pid: u32) -> Vec<Proc> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(p) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        if let Some((state, ppid, start)) = stat(p) {
            if ppid == pid && state != 'Z' {
                out.push(Proc { pid: p, start });
            }
        }
    }
    out
}

/// Waits up to `limit` for `cond`; returns how long it took.
fn wait_until(limit: Duration, what: &str, mut cond: impl FnMut() -> bool) -> Duration {
    let t = Instant::now();
    while !cond() {
        assert!(t.elapsed() < limit, "{what} within {limit:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
    t.elapsed()
}

fn socket_dirs(base: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(base)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("terrane-plugin-"))
        })
        .collect()
}

/// Launches the fixture with a child process, its socket directory under
/// `base`; returns the client, the plugin and its child.
async fn launch_with_child(base: &Path) -> (PluginClient, Proc, Proc) {
    let env = vec![
        ("TERRANE_FIXTURE_CHILD".to_string(), "1".to_string()),
        (
            "PLUGIN_UNIX_SOCKET_DIR".to_string(),
            base.display().to_string(),
        ),
    ];
    let client = launch(
        &fixture(),
        LaunchOptions {
            env,
            ..LaunchOptions::default()
        },
    )
    .await
    .expect("fixture launches");
    let plugin = proc_of(client.pid());
    let mut child = None;
    wait_until(
        Duration::from_secs(10),
        "the fixture's child appears",
        || {
            child = children_of(plugin.pid).first().copied();
            child.is_some()
        },
    );
    (client, plugin, child.unwrap())
}

enum End {
    Shutdown,
    Drop,
    Sigterm,
}

/// item 4: whichever way a plugin ends, it and its children are gone and
/// its socket directory (private while it ran) is removed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn item4_plugin_children_and_socket_dir_go_with_the_plugin() {
    let cases = [
        ("graceful_shutdown", End::Shutdown),
        ("client_dropped", End::Drop),
        ("sigterm_to_plugin", End::Sigterm),
    ];
    for (name, end) in cases {
        let base = terrane_testkit::temp_dir();
        let (client, plugin, child) = launch_with_child(base.path()).await;
        let dirs = socket_dirs(base.path());
        assert_eq!(dirs.len(), 1, "case {name}: one socket directory: {dirs:?}");
        let mode = std::fs::metadata(&dirs[0]).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "case {name}: socket directory mode {mode:o}");
        match end {
            End::Shutdown => assert!(client.shutdown().await, "case {name}: exits on Shutdown"),
            End::Drop => drop(client),
            End::Sigterm => {
                nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(plugin.pid as i32),
                    nix::sys::signal::Signal::SIGTERM,
                )
                .unwrap();
                // The plugin removes its own directory on SIGTERM.
                wait_until(
                    Duration::from_secs(5),
                    &format!("case {name}: plugin exits on SIGTERM"),
                    || !alive(plugin),
                );
                assert!(
                    socket_dirs(base.path()).is_empty(),
                    "case {name}: the plugin removed its socket directory"
                );
                client.shutdown().await;
            }
        }
        let took = wait_until(
            Duration::from_secs(5),
            &format!("case {name}: plugin and child gone"),
            || !alive(plugin) && !alive(child),
        );
        assert!(
            socket_dirs(base.path()).is_empty(),
            "case {name}: socket directory left: {:?}",
            socket_dirs(base.path())
        );
        eprintln!("case {name}: plugin and child gone {took:?} after the end");
    }
}

/// item 4: `PR_SET_PDEATHSIG` fires when the thread that forked exits,
/// not the process. A plugin launched from a thread that then ends (here
/// a thread with its own runtime, as a blocking-pool thread would be)
/// must keep running while the process does: one that does not watch its
/// parent itself (as Go plugins do not) has only the launcher's death
/// signal, and one served by terrane must not take the thread's exit for
/// its parent's.
#[test]
fn item4_plugin_outlives_the_thread_that_launched_it() {
    // The plugins are killed at the end: their socket directories go
    // with this temporary one.
    let base = terrane_testkit::temp_dir();
    for (name, unwatched) in [
        ("plugin_without_parent_watch", "1"),
        ("terrane_served_plugin", "0"),
    ] {
        let sockets = base.path().display().to_string();
        let (pid, start) = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            let env = vec![
                (
                    "TERRANE_FIXTURE_UNWATCHED".to_string(),
                    unwatched.to_string(),
                ),
                ("PLUGIN_UNIX_SOCKET_DIR".to_string(), sockets),
            ];
            let client = rt
                .block_on(launch(
                    &fixture(),
                    LaunchOptions {
                        env,
                        ..LaunchOptions::default()
                    },
                ))
                .expect("fixture launches");
            let p = proc_of(client.pid());
            // Leave the process alone: neither shutdown nor kill on drop.
            std::mem::forget(client);
            (p.pid, p.start)
        })
        .join()
        .unwrap();
        let plugin = Proc { pid, start };
        std::thread::sleep(Duration::from_millis(500));
        let still = alive(plugin);
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pid as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
        assert!(
            still,
            "case {name}: the plugin died with the thread that launched it"
        );
    }
}

/// item 14: a handshake line is read up to 64 KiB; a plugin writing more
/// without a newline gets a clear error naming it, quickly, and it and
/// what it started are killed.
#[tokio::test]
async fn item14_handshake_line_is_capped() {
    let dir = terrane_testkit::temp_dir();
    let script = |name: &str, body: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    };
    let cases = [
        ("endless_line", script("endless", "exec cat /dev/zero")),
        (
            "long_line_then_waits",
            script("long", "head -c 200000 /dev/zero | tr '\\000' x; sleep 37"),
        ),
    ];
    for (name, plugin) in cases {
        let t = Instant::now();
        let launched = tokio::time::timeout(
            Duration::from_secs(20),
            launch(&plugin, LaunchOptions::default()),
        )
        .await;
        let err = match launched.unwrap_or_else(|_| panic!("case {name}: no answer within 20 s")) {
            Err(e @ LaunchError::Handshake { .. }) => e.to_string(),
            Err(e) => panic!("case {name}: {e}"),
            Ok(_) => panic!("case {name}: launched"),
        };
        assert!(
            err.contains(&plugin.display().to_string()) && err.contains("64 KiB"),
            "case {name}: {err}"
        );
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "case {name}: took {:?}",
            t.elapsed()
        );
        assert!(
            children_of(std::process::id())
                .iter()
                .all(|p| !cmdline(p.pid).contains(&plugin.display().to_string())),
            "case {name}: the plugin still runs"
        );
    }
    wait_until(
        Duration::from_secs(5),
        "the script's sleep was killed with its group",
        || !any_cmdline("sleep\x0037"),
    );
}

fn cmdline(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap_or_default()
}

fn any_cmdline(text: &str) -> bool {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
        .any(|p| cmdline(p).contains(text) && stat(p).is_some_and(|s| s.0 != 'Z'))
}

const PROBE: &str = "TERRANE_TEST_ENV_PROBE";

/// The half of `item14_plugins_do_not_inherit_terrane_secrets` that runs in
/// a child test process (so the environment it inherits is set by the
/// parent test, not by mutating this process's). Prints the names in the
/// launched plugin's environment.
#[tokio::test]
#[ignore = "run by item14_plugins_do_not_inherit_terrane_secrets"]
async fn secret_env_probe() {
    assert_eq!(
        std::env::var(PROBE).as_deref(),
        Ok("1"),
        "run by item14_plugins_do_not_inherit_terrane_secrets"
    );
    terrane_plugin::withhold_env("TERRANE_TEST_STATE_KEY");
    let client = launch(&fixture(), LaunchOptions::default())
        .await
        .expect("fixture launches");
    let environ = std::fs::read(format!("/proc/{}/environ", client.pid())).unwrap();
    let names: Vec<String> = environ
        .split(|b| *b == 0)
        .filter_map(|kv| kv.split(|b| *b == b'=').next())
        .map(|n| String::from_utf8_lossy(n).into_owned())
        .collect();
    println!("PLUGIN_ENV_NAMES={}", names.join(","));
    client.shutdown().await;
}

/// item 14: the state passphrase, the PostgreSQL state URL and a variable
/// added with `withhold_env` (as for a state block's `encryption_key_env`)
/// are not in a launched plugin's environment; other variables are.
#[test]
fn item14_plugins_do_not_inherit_terrane_secrets() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "secret_env_probe",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(PROBE, "1")
        .env("TERRANE_STATE_PASSPHRASE", "passphrase-secret")
        .env("TERRANE_PG_URL", "postgres://u:pw-secret@127.0.0.1:1/db")
        .env("TERRANE_TEST_STATE_KEY", "key-secret")
        .env("TERRANE_TEST_HARMLESS", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "probe failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let names: Vec<&str> = stdout
        .lines()
        .find_map(|l| l.split_once("PLUGIN_ENV_NAMES=").map(|(_, names)| names))
        .expect("probe printed the names")
        .split(',')
        .collect();
    let cases = [
        ("passphrase_withheld", "TERRANE_STATE_PASSPHRASE", false),
        ("pg_url_withheld", "TERRANE_PG_URL", false),
        ("registered_name_withheld", "TERRANE_TEST_STATE_KEY", false),
        ("other_variables_inherited", "TERRANE_TEST_HARMLESS", true),
        ("cookie_set", "TF_PLUGIN_MAGIC_COOKIE", true),
    ];
    for (name, var, want) in cases {
        assert_eq!(
            names.contains(&var),
            want,
            "case {name}: {var} in {names:?}"
        );
    }
}
