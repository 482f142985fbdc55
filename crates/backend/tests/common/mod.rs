//! Real object-store servers on loopback for the cloud backend tests:
//! moto (S3 + DynamoDB), the GCS emulator and Azurite, installed by
//! `scripts/setup-cloud` into `.venv-cloud` and `.npm-cloud`. A test
//! starts its own server on a free port and stops it when done.
#![allow(dead_code)]

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running emulator process, killed (by its own PID) on drop.
pub struct Server {
    pub port: u16,
    pub dir: tempfile::TempDir,
    child: Child,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The last lines of the server's log (its requests and their
    /// statuses), for a failure's message.
    pub fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    l.local_addr().expect("local address").port()
}

/// A program installed by scripts/setup-cloud, or a (CI: failing) skip.
pub fn installed(rel: &str) -> Option<PathBuf> {
    let p = terrane_testkit::repo_root().join(rel);
    if p.exists() {
        Some(p)
    } else {
        terrane_testkit::skip(&format!("{rel} is not installed: run scripts/setup-cloud"));
        None
    }
}

/// Starts `program args…` (with `{port}` and `{dir}` in args replaced)
/// and waits until it accepts connections. The port is one the OS just
/// handed out and released, so another process may take it first: a
/// server that exits before it listens (its port taken) is started again
/// on a fresh port, and a listener counts only while our server still
/// runs.
pub fn start(program: &Path, args: &[&str], env: &[(&str, &str)]) -> Server {
    const ATTEMPTS: usize = 5;
    for attempt in 1..=ATTEMPTS {
        match start_once(program, args, env) {
            Ok(server) => return server,
            Err(log) if attempt < ATTEMPTS => {
                eprintln!(
                    "{} exited before listening (attempt {attempt}), trying another port:\n{log}",
                    program.display()
                );
            }
            Err(log) => panic!(
                "{} exited before listening, {ATTEMPTS} times:\n{log}",
                program.display()
            ),
        }
    }
    unreachable!("the last attempt returns or panics")
}

/// One start on a fresh port: the running server, or the log of a server
/// that exited before it listened.
fn start_once(program: &Path, args: &[&str], env: &[(&str, &str)]) -> Result<Server, String> {
    let dir = tempfile::tempdir().expect("server directory");
    let port = free_port();
    let args: Vec<String> = args
        .iter()
        .map(|a| {
            a.replace("{port}", &port.to_string())
                .replace("{dir}", &dir.path().display().to_string())
        })
        .collect();
    let log = std::fs::File::create(dir.path().join("server.log")).expect("server log");
    let mut cmd = Command::new(program);
    cmd.args(&args)
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(log.try_clone().expect("log handle"))
        .stderr(log);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("{} does not start: {e}", program.display()));
    let mut server = Server { port, dir, child };
    let read_log =
        |s: &Server| std::fs::read_to_string(s.dir.path().join("server.log")).unwrap_or_default();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let exited = server.child.try_wait().expect("server status").is_some();
        if exited {
            return Err(read_log(&server));
        }
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            // Listening, and still ours: a server that lost the port to
            // another process exits instead of running on.
            if server.child.try_wait().expect("server status").is_none() {
                return Ok(server);
            }
            return Err(read_log(&server));
        }
        if Instant::now() > deadline {
            panic!(
                "{} did not listen on {port} within 60s:\n{}",
                program.display(),
                read_log(&server)
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// moto's server (S3 and DynamoDB on one port). `auth` turns on moto's
/// credential checks from the first request.
pub fn moto(auth: bool) -> Option<Server> {
    let prog = installed(".venv-cloud/bin/moto_server")?;
    let env: &[(&str, &str)] = if auth {
        &[("INITIAL_NO_AUTH_ACTION_COUNT", "0")]
    } else {
        &[]
    };
    Some(start(&prog, &["-H", "127.0.0.1", "-p", "{port}"], env))
}

/// Runs a Python snippet with the emulators' venv (boto3 and the Google
/// client ship with it) to prepare buckets and tables; panics on failure.
pub fn python(code: &str, env: &[(&str, &str)]) {
    let py = terrane_testkit::repo_root().join(".venv-cloud/bin/python");
    let mut cmd = Command::new(py);
    cmd.arg("-c").arg(code);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("python runs");
    assert!(
        out.status.success(),
        "python setup failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A minimal v4 state document with one output, as Terraform writes it.
pub fn state_doc(lineage: &str, serial: u64, output: &str) -> Vec<u8> {
    serde_json::to_vec_pretty(&serde_json::json!({
        "version": 4,
        "terraform_version": "1.15.0",
        "serial": serial,
        "lineage": lineage,
        "outputs": {"o": {"value": output, "type": "string"}},
        "resources": [],
        "check_results": null
    }))
    .unwrap()
}

/// A lock as terrane records it.
pub fn terrane_lock(id: &str) -> terrane_backend::RemoteLock {
    terrane_backend::RemoteLock {
        id: id.into(),
        operation: "OperationTypeApply".into(),
        info: String::new(),
        who: "tester@terrane-test".into(),
        version: "0.0.0".into(),
        created: "2026-01-01T00:00:00Z".into(),
        path: String::new(),
    }
}
