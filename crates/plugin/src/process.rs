//! Plugin processes as the launcher keeps them: started so they cannot
//! outlive the engine, without terrane's secrets in their environment,
//! and taken down with everything they started.
//!
//! * **Death signal.** Each plugin is forked with `PR_SET_PDEATHSIG`
//!   (SIGKILL) set before it execs, so it dies if the engine dies, however
//!   it dies (SIGKILL included). The kernel sends that signal when the
//!   *thread* that forked the child exits, not the process; a tokio worker
//!   or blocking-pool thread may well exit while the engine runs on, so
//!   every fork happens on one dedicated launcher thread that lives as long
//!   as the process. The launch only borrows it for the `fork`: the child's
//!   pipes and reaping stay with the caller's runtime.
//! * **Process group.** Each plugin leads its own process group, so the
//!   processes it starts can be killed with it: on shutdown the launcher
//!   kills the group, and a plugin served by terrane kills its group when
//!   its parent dies (see `server`). Its own group also keeps a terminal's
//!   Ctrl-C away from plugins; the engine asks them to stop itself.
//! * **Environment.** Variables holding terrane's own secrets
//!   ([`SECRET_ENV`] and any name given to [`withhold_env`]) are removed.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use tokio::process::{Child, Command};

/// Environment variables that hold terrane's own secrets: the state
/// encryption passphrase and the PostgreSQL state URL (which carries its
/// password). No plugin is given them; a provider is someone else's code
/// and has no business with the state's keys.
pub const SECRET_ENV: &[&str] = &["TERRANE_STATE_PASSPHRASE", "TERRANE_PG_URL"];

fn extra_secret_env() -> &'static Mutex<BTreeSet<String>> {
    static EXTRA: OnceLock<Mutex<BTreeSet<String>>> = OnceLock::new();
    EXTRA.get_or_init(Mutex::default)
}

/// Withholds one more environment variable from every plugin started
/// from now on in this process: e.g. the variable a state block's
/// `encryption_key_env` names.
pub fn withhold_env(name: &str) {
    if !name.is_empty() {
        extra_secret_env()
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(name.to_string());
    }
}

/// Every variable withheld from plugins: [`SECRET_ENV`] and those added
/// with [`withhold_env`].
pub fn withheld_env() -> Vec<String> {
    let extra = extra_secret_env().lock().unwrap_or_else(|p| p.into_inner());
    SECRET_ENV
        .iter()
        .map(|s| s.to_string())
        .chain(extra.iter().cloned())
        .collect()
}

/// Prepares `cmd` as described in the module docs: own process group,
/// secrets removed, death signal. Launch it with [`spawn`].
pub(crate) fn prepare(cmd: &mut Command) {
    for name in withheld_env() {
        cmd.env_remove(name);
    }
    cmd.process_group(0);
    die_with_parent(cmd);
}

/// Sets the child's parent-death signal to SIGKILL between fork and exec.
///
/// This is the crate's only unsafe code: `pre_exec` is unsafe because the
/// hook runs in the forked child of a possibly multi-threaded process,
/// where only async-signal-safe calls are sound. The hook makes two plain
/// system calls (prctl(2), getppid(2)) and on failure returns an
/// `io::Error` built from a raw errno, which does not allocate. Nothing in
/// std offers the death signal; without it a plugin outlives an engine
/// killed with SIGKILL.
///
/// If the engine died between the fork and the prctl, the signal would
/// never come; the hook then sees another parent and fails the exec.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn die_with_parent(cmd: &mut Command) {
    let parent = nix::unistd::getpid();
    let hook = move || -> std::io::Result<()> {
        nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)
            .map_err(|e| std::io::Error::from_raw_os_error(e as i32))?;
        if nix::unistd::getppid() != parent {
            return Err(std::io::Error::from_raw_os_error(
                nix::errno::Errno::ESRCH as i32,
            ));
        }
        Ok(())
    };
    // SAFETY: see the function's documentation: the hook only makes
    // async-signal-safe system calls and does not allocate.
    unsafe {
        cmd.pre_exec(hook);
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent(_cmd: &mut Command) {}

type Job = Box<dyn FnOnce() + Send>;

/// The launcher thread (see the module docs): runs fork jobs for the rest
/// of the process.
fn launcher() -> &'static std::sync::mpsc::Sender<Job> {
    static LAUNCHER: OnceLock<std::sync::mpsc::Sender<Job>> = OnceLock::new();
    LAUNCHER.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel::<Job>();
        let spawned = std::thread::Builder::new()
            .name("terrane-plugin-launcher".into())
            .spawn(move || {
                for job in rx {
                    job();
                }
            });
        if let Err(e) = spawned {
            // Without the thread every send below fails and launches
            // report it; nothing is forked from a thread that may exit.
            eprintln!("cannot start the plugin launcher thread: {e}");
        }
        tx
    })
}

/// Spawns `cmd` from the launcher thread, registering the child's pipes
/// and its reaping with the caller's runtime.
pub(crate) async fn spawn(mut cmd: Command) -> std::io::Result<Child> {
    let handle = tokio::runtime::Handle::current();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let job: Job = Box::new(move || {
        let _runtime = handle.enter();
        let _ = tx.send(cmd.spawn());
    });
    launcher()
        .send(job)
        .map_err(|_| std::io::Error::other("the plugin launcher thread is not running"))?;
    rx.await
        .map_err(|_| std::io::Error::other("the plugin launcher thread did not answer"))?
}

/// Sends SIGKILL to the process group `pid` leads. Call it while the
/// leader is not yet reaped (its pid cannot be reused then); after reaping,
/// only when it may have left members behind, whose group keeps the id
/// reserved for as long as any of them lives.
pub(crate) fn kill_group(pid: u32) {
    if let Ok(pid) = i32::try_from(pid) {
        if pid > 0 {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

/// The socket directory a plugin announced, if it is one terrane's plugin
/// server made for this very process (`terrane-plugin-<pid>-…`, see
/// `server::socket_dir`): the only kind the launcher ever deletes, when the
/// plugin could not do it itself (killed).
pub(crate) fn own_socket_dir(addr: &str, pid: u32) -> Option<PathBuf> {
    let dir = Path::new(addr).parent()?;
    let name = dir.file_name()?.to_str()?;
    name.starts_with(&format!("terrane-plugin-{pid}-"))
        .then(|| dir.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_plugins_own_socket_dir_is_removed() {
        let cases = [
            (
                "terrane_plugin_dir",
                "/tmp/terrane-plugin-42-1a2b-0/plugin.sock",
                42,
                Some("/tmp/terrane-plugin-42-1a2b-0"),
            ),
            (
                "other_pid",
                "/tmp/terrane-plugin-43-1a2b-0/plugin.sock",
                42,
                None,
            ),
            (
                "pid_prefix_only",
                "/tmp/terrane-plugin-421-1a2b-0/plugin.sock",
                42,
                None,
            ),
            ("go_plugin_dir", "/tmp/plugin123456/plugin.sock", 42, None),
            (
                "a_users_directory",
                "/home/me/project/plugin.sock",
                42,
                None,
            ),
            ("bare_name", "plugin.sock", 42, None),
        ];
        for (name, addr, pid, want) in cases {
            assert_eq!(
                own_socket_dir(addr, pid),
                want.map(PathBuf::from),
                "case {name}"
            );
        }
    }

    #[test]
    fn secrets_are_withheld_and_the_list_extends() {
        withhold_env("TERRANE_TEST_EXTRA_KEY");
        withhold_env("");
        let all = withheld_env();
        for name in [
            "TERRANE_STATE_PASSPHRASE",
            "TERRANE_PG_URL",
            "TERRANE_TEST_EXTRA_KEY",
        ] {
            assert!(all.iter().any(|n| n == name), "case {name}: {all:?}");
        }
        assert!(!all.iter().any(String::is_empty), "case empty_name_ignored");
    }
}
