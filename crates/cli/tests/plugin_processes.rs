//! Provider plugins as processes of a real `terrane` (issue 12 items 4
//! and 14): SIGKILL of terrane in the middle of an apply takes its plugins,
//! and the processes they started, down within a short bounded wait and
//! leaves no socket directory behind; a running plugin's environment has
//! none of terrane's secrets.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A process by pid and start time (a reused pid is not mistaken for it).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Proc {
    pid: u32,
    start: u64,
}

/// (state, ppid, start time) from /proc/PID/stat.
fn stat(pid: u32) -> Option<(char, u32, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some((
        f[0].chars().next()?,
        f[1].parse().ok()?,
        f[19].parse().ok()?,
    ))
}

/// Running: a zombie only waits to be reaped.
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

fn cmdline(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/cmdline"))
        .unwrap_or_default()
        .replace('\0', " ")
}

fn socket_dirs(base: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(base)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("terrane-plugin-"))
                })
                .collect()
        })
        .unwrap_or_default()
}

struct Case {
    name: &'static str,
    /// Source address served by the plugin.
    source: &'static str,
    /// The plugin binary.
    binary: fn() -> PathBuf,
    config: &'static str,
    /// Whether the plugin starts a child process during the apply.
    has_child: bool,
}

fn time_plugin() -> PathBuf {
    terrane_testkit::built_binary("terrane-provider-time", "terraform-provider-time")
}

fn broken_plugin() -> PathBuf {
    terrane_testkit::fixture("terrane-contract-fixture")
}

const TIME: &str = "terraform {\n  required_providers {\n    time = { source = \"terrane/time\" }\n  }\n}\n\nresource \"time_sleep\" \"s\" {\n  create_duration = \"300s\"\n}\n";
const BROKEN: &str = "terraform {\n  required_providers {\n    broken = { source = \"terrane/broken\" }\n  }\n}\n\nresource \"broken_thing\" \"t\" {\n  value = \"v\"\n}\n";

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "time_sleep_through_the_time_plugin",
            source: "registry.terraform.io/terrane/time",
            binary: time_plugin,
            config: TIME,
            has_child: false,
        },
        Case {
            name: "plugin_with_a_child_process",
            source: "registry.terraform.io/terrane/broken",
            binary: broken_plugin,
            config: BROKEN,
            has_child: true,
        },
    ]
}

/// A running `terrane apply` of `case`, its plugin (and the plugin's
/// child) found under it, its plugins' socket directories under `sockets`.
struct Running {
    terrane: Child,
    plugins: Vec<Proc>,
    children: Vec<Proc>,
}

fn start(case: &Case, dir: &Path, sockets: &Path, env: &[(&str, &str)]) -> Running {
    let rc = terrane_testkit::dev_overrides(dir, &[(case.source, &(case.binary)())]);
    std::fs::write(dir.join("main.tf"), case.config).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_terrane"));
    cmd.args(["apply", "-auto-approve", "-input=false", "-no-color"])
        .current_dir(dir)
        .env("TF_CLI_CONFIG_FILE", &rc)
        .env("CHECKPOINT_DISABLE", "1")
        .env("TERRANE_BROKEN_MODE", "hang_with_child")
        .env("PLUGIN_UNIX_SOCKET_DIR", sockets)
        .env_remove("TERRANE_PG_URL")
        .env_remove("TERRANE_STATE_PASSPHRASE")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(dir.join("apply.out")).unwrap())
        .stderr(std::fs::File::create(dir.join("apply.err")).unwrap());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut terrane = cmd.spawn().expect("terrane starts");
    let log = || {
        format!(
            "{}\n{}",
            std::fs::read_to_string(dir.join("apply.out")).unwrap_or_default(),
            std::fs::read_to_string(dir.join("apply.err")).unwrap_or_default()
        )
    };
    // The apply is under way once the resource is being created (and,
    // for the fixture, once its child runs).
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = terrane.try_wait().unwrap() {
            panic!(
                "case {}: terrane ended ({status}) before the apply got going:\n{}",
                case.name,
                log()
            );
        }
        let creating = std::fs::read_to_string(dir.join("apply.out"))
            .unwrap_or_default()
            .contains("Creating...");
        let plugins: Vec<Proc> = children_of(terrane.id())
            .into_iter()
            .filter(|p| cmdline(p.pid).contains("terraform-provider-"))
            .collect();
        let children: Vec<Proc> = plugins.iter().flat_map(|p| children_of(p.pid)).collect();
        if creating && !plugins.is_empty() && (!case.has_child || !children.is_empty()) {
            return Running {
                terrane,
                plugins,
                children,
            };
        }
        if Instant::now() > deadline {
            let _ = terrane.kill();
            panic!(
                "case {}: the apply did not get going within 60 s:\n{}",
                case.name,
                log()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// item 4: `kill -9` of terrane during an apply through a plugin: within a
/// short bounded wait no plugin of that run, nor a process a plugin
/// started, is left, and neither is a plugin socket directory.
#[test]
fn item4_engine_sigkill_takes_plugins_and_their_children_down() {
    for case in cases() {
        let dir = terrane_testkit::temp_dir();
        let sockets = dir.path().join("sockets");
        std::fs::create_dir(&sockets).unwrap();
        let mut run = start(&case, dir.path(), &sockets, &[]);
        assert!(
            !socket_dirs(&sockets).is_empty(),
            "case {}: the plugin's socket directory is where PLUGIN_UNIX_SOCKET_DIR says",
            case.name
        );
        run.terrane.kill().unwrap();
        let killed = Instant::now();
        run.terrane.wait().unwrap();
        let limit = Duration::from_secs(5);
        let watched: Vec<Proc> = run.plugins.iter().chain(&run.children).copied().collect();
        while watched.iter().any(|p| alive(*p)) || !socket_dirs(&sockets).is_empty() {
            if killed.elapsed() > limit {
                let left: Vec<String> = watched
                    .iter()
                    .filter(|p| alive(**p))
                    .map(|p| format!("{} ({})", p.pid, cmdline(p.pid)))
                    .collect();
                for p in &watched {
                    let _ = Command::new("kill")
                        .args(["-9", &p.pid.to_string()])
                        .status();
                }
                panic!("case {}: {limit:?} after SIGKILL of terrane, still running: {left:?}; socket directories left: {:?}", case.name, socket_dirs(&sockets));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        eprintln!("case {}: {} plugin(s) and {} child process(es) gone, socket directory removed, {:?} after SIGKILL", case.name, run.plugins.len(), run.children.len(), killed.elapsed());
    }
}

/// item 14: a plugin started by terrane has neither the state passphrase
/// nor the variable a state block's `encryption_key_env` names in its
/// environment (read from /proc/PID/environ while it runs); other
/// variables reach it.
#[test]
fn item14_running_plugin_has_no_terrane_secrets() {
    let case = cases()
        .into_iter()
        .find(|c| c.name == "plugin_with_a_child_process")
        .unwrap();
    let dir = terrane_testkit::temp_dir();
    let sockets = dir.path().join("sockets");
    std::fs::create_dir(&sockets).unwrap();
    let config = format!("{}\nterraform {{\n  state \"sqlite\" {{\n    encryption_key_env = \"TERRANE_TEST_STATE_KEY\"\n  }}\n}}\n", case.config);
    let case = Case {
        config: Box::leak(config.into_boxed_str()),
        ..case
    };
    let env = [
        ("TERRANE_STATE_PASSPHRASE", "passphrase-secret-1"),
        ("TERRANE_TEST_STATE_KEY", "key-secret-2"),
        ("TERRANE_TEST_HARMLESS", "1"),
    ];
    let mut run = start(&case, dir.path(), &sockets, &env);
    let environ = std::fs::read(format!("/proc/{}/environ", run.plugins[0].pid)).unwrap();
    run.terrane.kill().unwrap();
    run.terrane.wait().unwrap();
    let text = String::from_utf8_lossy(&environ).into_owned();
    let names: Vec<&str> = text
        .split('\0')
        .filter_map(|kv| kv.split('=').next())
        .collect();
    let checks = [
        ("passphrase_withheld", "TERRANE_STATE_PASSPHRASE", false),
        (
            "encryption_key_env_withheld",
            "TERRANE_TEST_STATE_KEY",
            false,
        ),
        ("other_variables_inherited", "TERRANE_TEST_HARMLESS", true),
    ];
    for (name, var, want) in checks {
        assert_eq!(
            names.contains(&var),
            want,
            "case {name}: {var} in {names:?}"
        );
    }
    assert!(
        !text.contains("secret-1") && !text.contains("secret-2"),
        "case no_secret_value: a secret value is in the plugin's environment"
    );
}
