//! A Pulumi-protocol client for tests: `scripts/pulumi-client.py`, run
//! with `.venv-pulumi`'s python (made by `scripts/setup-pulumi`), which
//! launches a resource plugin as Pulumi's engine does and drives it with
//! Pulumi's own generated stubs. One JSON request line in, one JSON answer
//! line out.

use super::repo_root;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// A running client with its plugin.
pub struct PulumiClient {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

/// What a call answered: the response message or the gRPC error.
pub type Answer = Result<Value, (String, String)>;

/// The python of `.venv-pulumi`, set up by `scripts/setup-pulumi` (a
/// setup failure fails the test: Pulumi's SDK is a peer like Terraform).
fn python() -> std::path::PathBuf {
    let root = repo_root();
    let status = Command::new(root.join("scripts/setup-pulumi"))
        .status()
        .expect("run scripts/setup-pulumi");
    assert!(status.success(), "scripts/setup-pulumi failed");
    root.join(".venv-pulumi/bin/python")
}

impl PulumiClient {
    /// Launches `plugin` (with `args` before the engine address) under the
    /// client.
    pub fn start(plugin: &Path, args: &[&str], env: &[(&str, &str)]) -> PulumiClient {
        let mut cmd = Command::new(python());
        cmd.arg(repo_root().join("scripts/pulumi-client.py"))
            .arg(plugin)
            .args(args)
            .env_remove("TF_PLUGIN_MAGIC_COOKIE")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("start scripts/pulumi-client.py");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("client stdout"));
        PulumiClient {
            child,
            stdin,
            stdout,
        }
    }

    fn line(&mut self) -> Value {
        let mut line = String::new();
        self.stdout
            .read_line(&mut line)
            .expect("read client output");
        assert!(!line.is_empty(), "the Pulumi client ended early");
        let v: Value = serde_json::from_str(&line).expect("client output is JSON");
        if let Some(f) = v.get("fatal") {
            panic!("{f}; plugin stderr: {}", v["stderr"]);
        }
        v
    }

    /// Calls `method` of pulumirpc.ResourceProvider with `request` (proto
    /// field names).
    pub fn call(&mut self, method: &str, request: Value) -> Answer {
        let msg = json!({"method": method, "request": request});
        let stdin = self.stdin.as_mut().expect("client still open");
        writeln!(stdin, "{msg}")
            .and_then(|()| stdin.flush())
            .expect("write to the client");
        let v = self.line();
        match v.get("error") {
            Some(e) => Err((
                e["code"].as_str().unwrap_or_default().to_string(),
                e["details"].as_str().unwrap_or_default().to_string(),
            )),
            None => Ok(v["response"].clone()),
        }
    }

    /// Like [`call`](Self::call), failing the test on a gRPC error.
    #[track_caller]
    pub fn ok(&mut self, method: &str, request: Value) -> Value {
        match self.call(method, request) {
            Ok(v) => v,
            Err((code, details)) => panic!("{method} failed: {code}: {details}"),
        }
    }

    /// Ends the session as the engine does (SIGINT): the plugin's exit code
    /// (or why there is none) and its stderr.
    pub fn stop(mut self) -> (Value, String) {
        drop(self.stdin.take());
        let v = self.line();
        let _ = self.child.wait();
        (
            v["exit"].clone(),
            v["stderr"].as_str().unwrap_or_default().to_string(),
        )
    }
}

impl Drop for PulumiClient {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

/// A URN for resource `name` of type `token` in a test stack.
pub fn urn(token: &str, name: &str) -> String {
    format!("urn:pulumi:test::terrane::{token}::{name}")
}

/// The first stdout line of `plugin` launched as Terraform launches it
/// (go-plugin's cookie, protocol 6 offered): its handshake line.
pub fn go_plugin_handshake(plugin: &Path) -> String {
    let mut child = Command::new(plugin)
        .env(
            "TF_PLUGIN_MAGIC_COOKIE",
            "d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2",
        )
        .env("PLUGIN_PROTOCOL_VERSIONS", "6")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("launch the plugin");
    let mut line = String::new();
    let read = BufReader::new(child.stdout.take().expect("plugin stdout")).read_line(&mut line);
    let _ = child.kill();
    let _ = child.wait();
    read.expect("read the handshake line");
    line
}

/// The same binary launched both ways: go-plugin's handshake line under
/// Terraform's cookie, and under Pulumi's launch a port, GetPluginInfo
/// answering `version`, and a clean exit on SIGINT.
#[track_caller]
pub fn assert_launches_both_ways(plugin: &Path, version: &str) {
    let line = go_plugin_handshake(plugin);
    assert!(line.starts_with("1|6|"), "go-plugin handshake: {line:?}");
    let mut c = PulumiClient::start(plugin, &["--logtostderr", "-v=9"], &[]);
    assert_eq!(c.ok("GetPluginInfo", json!({}))["version"], version);
    c.ok("Cancel", json!({}));
    let (exit, stderr) = c.stop();
    assert_eq!(exit, 0, "exit on SIGINT: {stderr}");
}
