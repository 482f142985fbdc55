//! Launching a Pulumi resource plugin (`pulumi-resource-<pkg>`), as
//! Pulumi's engine does it (the implementer's guide, out-of-process plugin
//! lifecycle): the engine's gRPC address is the last argument; the plugin
//! prints the TCP port it listens on (loopback) as its first stdout line;
//! everything else it writes is diagnostics; the connection is plain
//! HTTP/2 gRPC without TLS; it is stopped with SIGINT, then killed.
//!
//! The process is started like every other plugin ([`crate::process`]):
//! own process group, parent-death signal, terrane's secrets withheld.
//! What it writes after the port (stdout and stderr) is forwarded to
//! terrane's stderr, prefixed with the plugin's name, and the last lines
//! are kept for error messages ([`PulumiPlugin::output_tail`]).

use crate::client::{Conn, LaunchError, MAX_HANDSHAKE_LINE};
use crate::process;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::{Child, Command};

/// How many of the plugin's last output lines are kept.
const TAIL_LINES: usize = 40;

/// How to launch a Pulumi plugin.
#[derive(Clone, Debug)]
pub struct PulumiLaunch {
    /// The engine's address (`127.0.0.1:PORT`), passed as the last argument.
    pub engine_address: String,
    /// How long the plugin may take to print its port.
    pub timeout: Duration,
    /// Extra environment (never one of the withheld secret variables).
    pub env: Vec<(String, String)>,
    /// The prefix of forwarded output lines (`pulumi-resource-echo`).
    pub label: String,
}

/// A running Pulumi plugin and a plaintext gRPC connection to it.
pub struct PulumiPlugin {
    child: Child,
    pid: u32,
    conn: Conn,
    port: u16,
    tail: Arc<Mutex<VecDeque<String>>>,
    /// Set once terrane stops the plugin: what it writes while going down
    /// (Python's shutdown noise) is kept in the tail but not shown.
    quiet: Arc<AtomicBool>,
    pub path: PathBuf,
}

/// The plugin's output lines kept for messages.
type Tail = Arc<Mutex<VecDeque<String>>>;

fn remember(tail: &Tail, line: &str) {
    let mut t = tail.lock().unwrap_or_else(|p| p.into_inner());
    if t.len() == TAIL_LINES {
        t.pop_front();
    }
    t.push_back(line.to_string());
}

/// Parses the first stdout line: a TCP port, nothing else.
pub fn parse_port(line: &str) -> Result<u16, String> {
    let t = line.trim();
    match t.parse::<u16>() {
        Ok(p) if p > 0 => Ok(p),
        _ => {
            let shown: String = t.chars().take(120).collect();
            Err(format!(
                "expected its gRPC port as the first line of its output, got {shown:?}"
            ))
        }
    }
}

/// Launches the Pulumi plugin at `path` and connects to it.
pub async fn launch_pulumi(path: &Path, opts: PulumiLaunch) -> Result<PulumiPlugin, LaunchError> {
    let name = path.display().to_string();
    let mut cmd = Command::new(path);
    cmd.arg(&opts.engine_address)
        .envs(opts.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    process::prepare(&mut cmd);
    let mut child = process::spawn(cmd)
        .await
        .map_err(|source| LaunchError::Spawn {
            path: name.clone(),
            source,
        })?;
    let pid = child.id().unwrap_or_default();
    let stdout = child.stdout.take().expect("piped stdout");
    let stderr = child.stderr.take().expect("piped stderr");
    let tail: Tail = Arc::default();
    let quiet = Arc::new(AtomicBool::new(false));
    // stderr is diagnostics from the start.
    tokio::spawn(forward(
        BufReader::new(stderr),
        opts.label.clone(),
        tail.clone(),
        quiet.clone(),
    ));
    let mut stdout = BufReader::new(stdout);
    let mut line = String::new();
    let first = tokio::time::timeout(opts.timeout, async {
        let mut limited = (&mut stdout).take(MAX_HANDSHAKE_LINE as u64);
        limited.read_line(&mut line).await
    })
    .await;
    let fail = |child: &mut Child| {
        if let Some(pid) = child.id() {
            process::kill_group(pid);
        }
    };
    match first {
        Err(_) => {
            fail(&mut child);
            let _ = child.wait().await;
            return Err(LaunchError::Timeout {
                path: name,
                secs: opts.timeout.as_secs(),
            });
        }
        Ok(Ok(0)) | Ok(Err(_)) => {
            let status = child
                .wait()
                .await
                .map(|s| s.to_string())
                .unwrap_or_else(|e| e.to_string());
            process::kill_group(pid);
            // Give the stderr forwarder a moment to take the last lines.
            tokio::time::sleep(Duration::from_millis(100)).await;
            return Err(LaunchError::Exited {
                path: name,
                status,
                stderr: tail_text(&tail),
            });
        }
        Ok(Ok(_)) => {}
    }
    let port = match parse_port(&line) {
        Ok(p) => p,
        Err(reason) => {
            fail(&mut child);
            let _ = child.wait().await;
            return Err(LaunchError::Handshake { path: name, reason });
        }
    };
    tokio::spawn(forward(
        stdout,
        opts.label.clone(),
        tail.clone(),
        quiet.clone(),
    ));
    let conn = match connect_tcp(port).await {
        Ok(c) => c,
        Err(reason) => {
            fail(&mut child);
            let _ = child.wait().await;
            return Err(LaunchError::Connect { path: name, reason });
        }
    };
    Ok(PulumiPlugin {
        child,
        pid,
        conn,
        port,
        tail,
        quiet,
        path: path.to_path_buf(),
    })
}

fn tail_text(tail: &Tail) -> String {
    let t = tail.lock().unwrap_or_else(|p| p.into_inner());
    t.iter().cloned().collect::<Vec<_>>().join("\n")
}

/// Forwards the plugin's output lines to terrane's stderr, prefixed with
/// its name, keeping the last ones.
async fn forward<R: AsyncBufRead + Unpin>(
    mut r: R,
    label: String,
    tail: Tail,
    quiet: Arc<AtomicBool>,
) {
    loop {
        let mut buf = Vec::new();
        let mut limited = (&mut r).take(MAX_HANDSHAKE_LINE as u64);
        match limited.read_until(b'\n', &mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let text = String::from_utf8_lossy(&buf);
        let text = text.trim_end();
        if text.is_empty() {
            continue;
        }
        remember(&tail, text);
        if quiet.load(Ordering::Acquire) {
            continue;
        }
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), "{label}: {text}");
    }
}

/// A plaintext HTTP/2 connection to `127.0.0.1:port`.
async fn connect_tcp(port: u16) -> Result<Conn, String> {
    let stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .map_err(|e| e.to_string())?;
    let _ = stream.set_nodelay(true);
    Conn::handshake(stream, None)
        .await
        .map_err(|e| format!("HTTP/2 handshake: {e}"))
}

impl PulumiPlugin {
    /// The gRPC connection (clone it into a generated client).
    pub fn conn(&self) -> Conn {
        self.conn.clone()
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The plugin's last output lines, for error messages.
    pub fn output_tail(&self) -> String {
        tail_text(&self.tail)
    }

    /// Whether the process has exited (it crashed, or was stopped).
    pub fn exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// Stops the plugin as Pulumi's engine does: SIGINT to its process
    /// group, up to two seconds to exit, then SIGKILL to the group.
    /// Returns whether it exited on its own.
    pub async fn shutdown(mut self) -> bool {
        self.quiet.store(true, Ordering::Release);
        if let Ok(pid) = i32::try_from(self.pid) {
            if pid > 0 {
                let _ = nix::sys::signal::killpg(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGINT,
                );
            }
        }
        let exited = tokio::time::timeout(Duration::from_secs(2), self.child.wait())
            .await
            .is_ok();
        // Whatever it left behind goes with its group.
        process::kill_group(self.pid);
        if !exited {
            let _ = self.child.wait().await;
        }
        exited
    }
}

impl Drop for PulumiPlugin {
    fn drop(&mut self) {
        if let Some(pid) = self.child.id() {
            process::kill_group(pid);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse_port;

    #[test]
    fn the_first_line_must_be_a_port() {
        let cases = [
            ("plain", "41234\n", Ok(41234)),
            ("spaces", "  8080  \r\n", Ok(8080)),
            ("zero", "0\n", Err(())),
            ("garbage", "hello world\n", Err(())),
            ("too big", "70000\n", Err(())),
            ("empty", "\n", Err(())),
        ];
        for (name, line, want) in cases {
            assert_eq!(parse_port(line).map_err(|_| ()), want, "{name}");
        }
    }
}
