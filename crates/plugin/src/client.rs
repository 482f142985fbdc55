//! The client side of the go-plugin transport, as Terraform does it:
//! launch a plugin binary with the cookie, the offered protocol versions
//! and a fresh client certificate; read and check its handshake line (with
//! a timeout, reporting an early exit with the plugin's stderr); connect
//! over the unix socket with mutual TLS pinned to the certificate the
//! plugin announced; shut it down gracefully (GRPCController.Shutdown, then
//! a kill after two seconds), taking its process group and socket
//! directory with it. How the process is started (death signal, process
//! group, secrets withheld) is in [`crate::process`].
//!
//! The gRPC clients run over [`Conn`], one HTTP/2 connection driven by
//! h2 directly. tonic's `Channel` would put a buffer task, a reconnect
//! layer and per-request middleware in front of it, which a connection to
//! a child process has no use for (it is never re-established: a broken
//! connection means the plugin is gone) and which cost a task hop and
//! several moves of every request; hyper's client would add tasks of its
//! own per request (see [`Conn`]).

use crate::body::RecvBody;
use crate::cert::{provider, Identity, Pinned};
use crate::handshake::{self, MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE};
use crate::process;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;
use terrane_tfplugin5::tfplugin5::provider_client::ProviderClient as Provider5Client;
use terrane_tfplugin6::plugin::grpc_controller_client::GrpcControllerClient;
use terrane_tfplugin6::tfplugin6::provider_client::ProviderClient;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::{Child, Command};

/// A gRPC connection to a plugin (see the module docs); cheap to clone,
/// every clone multiplexes over the same connection.
///
/// Each call runs on the caller's task: it waits for the request body
/// (a unary call's one message), opens a stream on the h2 connection,
/// queues the message with the end of the stream and awaits the answer.
/// hyper's client would hand every request to its connection task
/// through a channel, spawn a task per request to wait for the response
/// (and one more to send the body when the stream had no capacity yet)
/// and answer through a oneshot: three task wake-ups per call that this
/// spares. A request body that streams is gathered before it is sent
/// (tfplugin has no client-streaming call). Once its request is queued, a
/// call polls the connection itself ([`Conn::nudge`]), so the request is
/// written at once rather than after every other ready task has run.
#[derive(Clone)]
pub struct Conn {
    send: h2::client::SendRequest<bytes::Bytes>,
    driver: Arc<Mutex<dyn Drive>>,
}

/// What a failed call reports to tonic, which turns an `h2::Error` into
/// the same statuses as through hyper.
type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The h2 connection, polled by its own task and, once a call has queued
/// its request, by that call (see [`Conn::send`]).
struct Driver<T> {
    /// `None` once the connection has ended: the socket (and its spin
    /// watch) close then, not when the last `Conn` is dropped.
    conn: Option<(
        h2::client::Connection<T, bytes::Bytes>,
        Option<crate::spin::Watch>,
    )>,
    /// The connection task's waker, which a call's poll registers too, so
    /// the socket and h2's timers keep waking the task.
    task: Option<Waker>,
}

trait Drive: Send {
    /// Polls the connection from a call's task, on behalf of the
    /// connection's own task.
    fn nudge(&mut self);
}

impl<T> Driver<T>
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    fn poll_with(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let Some((conn, _)) = &mut self.conn else {
            return Poll::Ready(());
        };
        if Pin::new(conn).poll(cx).is_ready() {
            self.conn = None;
            return Poll::Ready(());
        }
        Poll::Pending
    }
}

impl<T> Drive for Driver<T>
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    fn nudge(&mut self) {
        let (Some(task), Some(_)) = (self.task.clone(), &self.conn) else {
            return;
        };
        if self.poll_with(&mut Context::from_waker(&task)).is_ready() {
            // The task ends when it sees the connection gone.
            task.wake();
        }
    }
}

impl Conn {
    /// An HTTP/2 connection over `io` (TLS over the plugin's unix socket,
    /// or the Pulumi launcher's plaintext TCP), driven by a task of its
    /// own. The settings are hyper's client defaults, which the plugins
    /// were driven with before.
    pub(crate) async fn handshake<T>(
        io: T,
        watch: Option<crate::spin::Watch>,
    ) -> Result<Conn, h2::Error>
    where
        T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let (send, connection) = h2::client::Builder::new()
            .initial_max_send_streams(100)
            .initial_window_size(2 << 20)
            .initial_connection_window_size(5 << 20)
            .max_header_list_size(16 << 10)
            .max_send_buffer_size(1 << 20)
            .enable_push(false)
            .handshake(io)
            .await?;
        let driver = Arc::new(Mutex::new(Driver {
            conn: Some((connection, watch)),
            task: None,
        }));
        // The connection ends when the plugin closes it (it exited): calls
        // in flight and later calls then fail, which the engine reports as
        // a crash.
        let task = driver.clone();
        tokio::spawn(std::future::poll_fn(move |cx| {
            let mut d = task.lock().unwrap_or_else(|p| p.into_inner());
            if !d.task.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                d.task = Some(cx.waker().clone());
            }
            d.poll_with(cx)
        }));
        Ok(Conn { send, driver })
    }

    /// Writes what calls have queued now, instead of when the connection's
    /// task is next polled: on a current-thread runtime that comes only
    /// after every other task that is ready. The plugin answers a batch of
    /// requests in one write; without this the engine then worked through
    /// the whole batch of answers before any next request left, and the
    /// two processes took turns (a 1,000-instance plan through the random
    /// plugin: 20.1 -> 16.3 ms, median of 20). Under TLS the socket's
    /// [`Coalesce`](crate::coalesce) still puts the first flush off once,
    /// so requests leave in twos rather than one write each. The poll uses
    /// the connection task's waker, so the socket and h2's timers wake that
    /// task as before; if the task is being polled (another thread), the
    /// call leaves it to the task.
    fn nudge(&self) {
        if let Ok(mut d) = self.driver.try_lock() {
            d.nudge();
        }
    }
}

impl tower::Service<http::Request<tonic::body::Body>> for Conn {
    type Response = http::Response<RecvBody>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        // Each call waits for the connection's readiness itself, after
        // gathering its body.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<tonic::body::Body>) -> Self::Future {
        let conn = self.clone();
        Box::pin(async move {
            use http_body_util::BodyExt;
            let (head, body) = req.into_parts();
            let data = body.collect().await?.to_bytes();
            let response = conn.send(http::Request::from_parts(head, ()), data).await?;
            Ok(response.map(RecvBody::new))
        })
    }
}

impl Conn {
    /// Opens a stream with `head`, queues `data` as the whole body and
    /// waits for the answer's head.
    pub(crate) async fn send(
        &self,
        head: http::Request<()>,
        data: bytes::Bytes,
    ) -> Result<http::Response<h2::RecvStream>, BoxError> {
        let mut send = self.send.clone().ready().await?;
        let eos = data.is_empty();
        // Until the answer's head arrives this thread waits for the
        // plugin (see `crate::spin`).
        let _waiting = crate::spin::Call::start(crate::spin::Side::Client);
        let (response, mut stream) = send.send_request(head, eos)?;
        if !eos {
            // Queued whole (h2 buffers what the window does not admit
            // yet and sends it as the plugin grants capacity).
            stream.send_data(data, true)?;
        }
        self.nudge();
        Ok(response.await?)
    }
}

/// The authority every request names (the peer is a unix socket).
const ORIGIN: &str = "http://localhost";

/// Why a plugin could not be started or reached.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("failed to start plugin {path}: {source}")]
    Spawn {
        path: String,
        source: std::io::Error,
    },
    #[error("plugin {path} exited before completing the handshake ({status}); its error output:\n{stderr}")]
    Exited {
        path: String,
        status: String,
        stderr: String,
    },
    #[error("plugin {path} did not complete the handshake within {secs} s")]
    Timeout { path: String, secs: u64 },
    #[error("plugin {path}: {reason}")]
    Handshake { path: String, reason: String },
    #[error("plugin {path}: cannot connect: {reason}")]
    Connect { path: String, reason: String },
}

/// The longest handshake line (or plugin log line) the launcher reads: a
/// real one is a few hundred bytes plus a certificate of about 1 KiB. A
/// plugin that writes more without a newline is refused instead of
/// filling memory.
pub const MAX_HANDSHAKE_LINE: usize = 64 << 10;

/// A plugin process as the launcher owns it: on drop (a launch that
/// failed, a client never shut down) its whole process group is killed
/// and its socket directory removed. See [`crate::process`].
struct Process {
    child: Child,
    /// The plugin's own socket directory, once it announced it.
    socket_dir: Option<PathBuf>,
}

impl Process {
    /// Kills the plugin's group, reaps the plugin and removes what it
    /// left behind.
    async fn kill(&mut self) {
        if let Some(pid) = self.child.id() {
            process::kill_group(pid);
        }
        let _ = self.child.wait().await;
        self.clean();
    }

    fn clean(&mut self) {
        if let Some(dir) = self.socket_dir.take() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        // `id` is None once the child was reaped: then there is nothing
        // left to kill under that id.
        if let Some(pid) = self.child.id() {
            process::kill_group(pid);
        }
        self.clean();
    }
}

/// A running plugin and a gRPC channel to it.
pub struct PluginClient {
    process: Process,
    pid: u32,
    conn: Conn,
    /// The protocol version the plugin chose.
    pub protocol: u32,
    pub path: PathBuf,
}

/// How to launch.
pub struct LaunchOptions {
    pub versions: Vec<u32>,
    pub timeout: Duration,
    /// Extra environment for the plugin (never one of the withheld secret
    /// variables, see [`crate::withheld_env`]).
    pub env: Vec<(String, String)>,
}

impl Default for LaunchOptions {
    fn default() -> LaunchOptions {
        LaunchOptions {
            versions: vec![6],
            timeout: Duration::from_secs(60),
            env: Vec::new(),
        }
    }
}

/// Launches the plugin at `path` and connects to it.
pub async fn launch(path: &Path, opts: LaunchOptions) -> Result<PluginClient, LaunchError> {
    let name = path.display().to_string();
    let identity = Identity::generate().map_err(|e| LaunchError::Handshake {
        path: name.clone(),
        reason: e.to_string(),
    })?;
    let offered = opts
        .versions
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",");
    // The plugin spins while it awaits this engine as long as the engine
    // does while it awaits the plugin (see `crate::spin`).
    let spin_env = crate::spin::plugin_env();
    let mut cmd = Command::new(path);
    cmd.env(MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE)
        .env("PLUGIN_PROTOCOL_VERSIONS", &offered)
        .env("PLUGIN_CLIENT_CERT", &identity.cert_pem)
        .env(spin_env.0, spin_env.1)
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
    let mut process = Process {
        child,
        socket_dir: None,
    };
    let mut stdout = BufReader::new(stdout);
    let line = match tokio::time::timeout(opts.timeout, read_line(&mut stdout, MAX_HANDSHAKE_LINE))
        .await
    {
        Err(_) => {
            process.kill().await;
            return Err(LaunchError::Timeout {
                path: name,
                secs: opts.timeout.as_secs(),
            });
        }
        Ok(Ok(Some((line, true)))) => String::from_utf8_lossy(&line).into_owned(),
        Ok(Ok(Some((_, false)))) => {
            process.kill().await;
            return Err(LaunchError::Handshake {
                path: name,
                reason: format!(
                    "the handshake line is longer than {} KiB (no newline); refused",
                    MAX_HANDSHAKE_LINE >> 10
                ),
            });
        }
        Ok(_) => {
            let status = process
                .child
                .wait()
                .await
                .map(|s| s.to_string())
                .unwrap_or_else(|e| e.to_string());
            // Whatever the plugin started goes with it, so nothing holds
            // its stderr open.
            process::kill_group(pid);
            let mut text = Vec::new();
            let _ = tokio::time::timeout(
                Duration::from_secs(5),
                stderr
                    .take(MAX_HANDSHAKE_LINE as u64)
                    .read_to_end(&mut text),
            )
            .await;
            return Err(LaunchError::Exited {
                path: name,
                status,
                stderr: String::from_utf8_lossy(&text).trim().to_string(),
            });
        }
    };
    // Keep draining the plugin's output so it never blocks on a full pipe;
    // its stderr lines are its logs. Both read in bounded pieces.
    tokio::spawn(async move {
        let mut buf = vec![0u8; 8 << 10];
        while matches!(stdout.read(&mut buf).await, Ok(n) if n > 0) {}
    });
    tokio::spawn(forward_logs(BufReader::new(stderr), log_threshold()));
    let hs = handshake::parse(&line, &opts.versions).map_err(|reason| LaunchError::Handshake {
        path: name.clone(),
        reason,
    })?;
    process.socket_dir = process::own_socket_dir(&hs.addr, pid);
    if hs.network != "unix" {
        return Err(LaunchError::Handshake {
            path: name,
            reason: format!("unsupported network {:?}", hs.network),
        });
    }
    let server_cert = hs
        .server_cert_der
        .clone()
        .ok_or_else(|| LaunchError::Handshake {
            path: name.clone(),
            reason: "the plugin did not offer TLS".into(),
        })?;
    let conn = connect(&hs.addr, server_cert, &identity)
        .await
        .map_err(|reason| LaunchError::Connect {
            path: name.clone(),
            reason,
        })?;
    Ok(PluginClient {
        process,
        pid,
        conn,
        protocol: hs.version,
        path: path.to_path_buf(),
    })
}

/// Reads one line of at most `cap` bytes, without its newline: `(bytes,
/// true)` for a whole line (or the last, unterminated one at end of
/// input), `(bytes, false)` when `cap` bytes came without a newline (the
/// rest of the line stays unread), `None` at end of input.
async fn read_line<R: AsyncBufRead + Unpin>(
    r: &mut R,
    cap: usize,
) -> std::io::Result<Option<(Vec<u8>, bool)>> {
    let mut line = Vec::new();
    loop {
        let avail = r.fill_buf().await?;
        if avail.is_empty() {
            return Ok((!line.is_empty()).then_some((line, true)));
        }
        let room = cap - line.len();
        match avail.iter().position(|&b| b == b'\n') {
            Some(i) if i <= room => {
                line.extend_from_slice(&avail[..i]);
                r.consume(i + 1);
                return Ok(Some((line, true)));
            }
            _ if avail.len() >= room => {
                line.extend_from_slice(&avail[..room]);
                r.consume(room);
                return Ok(Some((line, false)));
            }
            _ => {
                let n = avail.len();
                line.extend_from_slice(avail);
                r.consume(n);
            }
        }
    }
}

/// Shows the plugin's stderr lines the user asked for (see [`shown`]). A
/// line longer than [`MAX_HANDSHAKE_LINE`] is passed on in pieces of that
/// size, each judged as its line's first piece was.
async fn forward_logs<R: AsyncBufRead + Unpin>(mut err: R, threshold: Option<u8>) {
    let mut continued: Option<bool> = None;
    while let Ok(Some((piece, whole))) = read_line(&mut err, MAX_HANDSHAKE_LINE).await {
        let text = String::from_utf8_lossy(&piece);
        let show = continued.unwrap_or_else(|| shown(&text, threshold));
        if show {
            // Not eprintln!: a closed standard error must not panic.
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr().lock(), "{text}");
        }
        continued = (!whole).then_some(show);
    }
}

async fn connect(addr: &str, server_cert: Vec<u8>, identity: &Identity) -> Result<Conn, String> {
    // A small RSA key (PyPI's `tf` makes 1024-bit ones) can only be
    // checked in TLS 1.2 with a PKCS#1 signature: see `cert`.
    let versions: &[&rustls::SupportedProtocolVersion] = if crate::cert::small_rsa_key(&server_cert)
    {
        &[&rustls::version::TLS12]
    } else {
        rustls::DEFAULT_VERSIONS
    };
    let mut config = rustls::ClientConfig::builder_with_provider(provider())
        .with_protocol_versions(versions)
        .map_err(|e| e.to_string())?
        .dangerous()
        .with_custom_certificate_verifier(Pinned::new(rustls::pki_types::CertificateDer::from(
            server_cert,
        )))
        .with_client_auth_cert(vec![identity.cert_der.clone()], identity.key())
        .map_err(|e| e.to_string())?;
    config.alpn_protocols = vec![b"h2".to_vec()];
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let stream = tokio::net::UnixStream::connect(addr)
        .await
        .map_err(|e| e.to_string())?;
    let watch = crate::spin::watch(&stream, crate::spin::Side::Client);
    let name = rustls::pki_types::ServerName::try_from("localhost").map_err(|e| e.to_string())?;
    let mut tls = connector
        .connect(name, crate::coalesce::Coalesce::new(stream))
        .await
        .map_err(|e| format!("TLS handshake: {e}"))?;
    tls.get_mut().0.coalesce = true;
    Conn::handshake(tls, watch)
        .await
        .map_err(|e| format!("HTTP/2 handshake: {e}"))
}

impl PluginClient {
    /// The tfplugin5 client (for a plugin that chose protocol 5).
    pub fn provider5(&self) -> Provider5Client<Conn> {
        Provider5Client::with_origin(self.conn.clone(), http::Uri::from_static(ORIGIN))
            .max_decoding_message_size(crate::MAX_MESSAGE_SIZE)
            .max_encoding_message_size(crate::MAX_MESSAGE_SIZE)
    }

    /// The tfplugin6 client.
    pub fn provider(&self) -> ProviderClient<Conn> {
        ProviderClient::with_origin(self.conn.clone(), http::Uri::from_static(ORIGIN))
            .max_decoding_message_size(crate::MAX_MESSAGE_SIZE)
            .max_encoding_message_size(crate::MAX_MESSAGE_SIZE)
    }

    /// The connection, for unary calls without tonic (see [`Conn::unary`]).
    pub fn conn(&self) -> Conn {
        self.conn.clone()
    }

    /// The plugin's process id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Asks the plugin to stop and waits up to two seconds for it to
    /// exit, then kills it. Either way its process group is killed too (the
    /// processes it started and left behind) and a socket directory it left
    /// is removed. Returns whether it exited on its own.
    pub async fn shutdown(mut self) -> bool {
        let mut controller =
            GrpcControllerClient::with_origin(self.conn.clone(), http::Uri::from_static(ORIGIN));
        let process = &mut self.process;
        let exited = tokio::time::timeout(Duration::from_secs(2), async {
            let _ = controller
                .shutdown(terrane_tfplugin6::plugin::Empty {})
                .await;
            process.child.wait().await
        })
        .await
        .is_ok();
        if exited {
            // Reaped: its group id stays reserved only while members
            // remain, which are exactly the ones to kill.
            process::kill_group(self.pid);
            process.clean();
        } else {
            process.kill().await;
        }
        exited
    }
}

/// A warning of the host's own for the log only (never the user's
/// output), shown on stderr when `TF_LOG`/`TERRANE_LOG` asks for warn or
/// more, as Terraform writes its `[WARN]` log lines (the legacy SDK's
/// tolerated plan and apply problems go here, as in Terraform).
pub fn log_warn(message: &str) {
    if log_threshold().is_some_and(|t| t <= 3) {
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), "[WARN]  {message}");
    }
}

/// The log level the user asked for with `TF_LOG` or `TERRANE_LOG`
/// (trace = 0 .. error = 4); `None` shows no structured plugin logs.
fn log_threshold() -> Option<u8> {
    let v = std::env::var("TERRANE_LOG")
        .or_else(|_| std::env::var("TF_LOG"))
        .ok()?;
    level_rank(&v.to_ascii_lowercase()).or(Some(0))
}

fn level_rank(level: &str) -> Option<u8> {
    match level {
        "trace" => Some(0),
        "debug" => Some(1),
        "info" => Some(2),
        "warn" => Some(3),
        "error" => Some(4),
        _ => None,
    }
}

/// Whether a plugin stderr line is shown: structured (hclog JSON) lines
/// only at or above the requested level, as Terraform does; anything else
/// (a panic, a crash message) always.
fn shown(line: &str, threshold: Option<u8>) -> bool {
    let Some(rest) = line.trim_start().strip_prefix("{\"@level\":\"") else {
        return true;
    };
    let level = rest.split('"').next().unwrap_or_default();
    match (level_rank(level), threshold) {
        (Some(l), Some(t)) => l >= t,
        (Some(_), None) => false,
        (None, _) => true,
    }
}

#[cfg(test)]
mod log_tests {
    use super::shown;

    #[test]
    fn plugin_log_lines() {
        let debug = r#"{"@level":"debug","@message":"planning"}"#;
        let error = r#"{"@level":"error","@message":"boom"}"#;
        let cases = [
            ("debug hidden by default", debug, None, false),
            ("debug shown at trace", debug, Some(0), true),
            ("debug hidden at warn", debug, Some(3), false),
            ("error shown at warn", error, Some(3), true),
            (
                "panic always shown",
                "thread 'main' panicked at src/main.rs",
                None,
                true,
            ),
        ];
        for (name, line, threshold, want) in cases {
            assert_eq!(shown(line, threshold), want, "case {name}");
        }
    }
}

#[cfg(test)]
mod nudge_tests {
    use super::Conn;
    use std::future::Future;
    use std::task::Context;
    use tokio::net::UnixStream;

    /// The HTTP/2 frames in `bytes` (after the client preface) as (type,
    /// flags, stream id).
    fn frames(mut bytes: &[u8]) -> Vec<(u8, u8, u32)> {
        const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
        if let Some(rest) = bytes.strip_prefix(PREFACE) {
            bytes = rest;
        }
        let mut out = Vec::new();
        while bytes.len() >= 9 {
            let len = u32::from_be_bytes([0, bytes[0], bytes[1], bytes[2]]) as usize;
            let stream = u32::from_be_bytes([bytes[5], bytes[6], bytes[7], bytes[8]]) & !(1 << 31);
            out.push((bytes[3], bytes[4], stream));
            bytes = &bytes[(9 + len).min(bytes.len())..];
        }
        out
    }

    /// Everything the peer can read now, without waiting.
    fn drain(peer: &std::os::unix::net::UnixStream) -> Vec<u8> {
        use std::io::Read;
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            match (&*peer).read(&mut buf) {
                Ok(0) => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) => panic!("reading the peer: {e}"),
            }
        }
        got
    }

    const HEADERS: u8 = 0x1;
    const DATA: u8 = 0x0;
    const END_STREAM: u8 = 0x1;

    struct Case {
        name: &'static str,
        body: &'static [u8],
        /// The request's frames on stream 1, as (type, END_STREAM set).
        want: Vec<(u8, bool)>,
    }

    fn check(case: Case) {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let (ours, peer) = UnixStream::pair().unwrap();
            let peer = peer.into_std().unwrap();
            let conn = Conn::handshake(ours, None).await.unwrap();
            // The connection task's first poll sends the preface and the
            // settings.
            tokio::task::yield_now().await;
            let before = frames(&drain(&peer));
            assert!(
                before.iter().all(|f| f.2 == 0),
                "case {}: no request before the call: {before:?}",
                case.name
            );
            let head = http::Request::post("http://localhost/tfplugin6.Provider/Test")
                .body(())
                .unwrap();
            let mut call = Box::pin(conn.send(head, bytes::Bytes::from_static(case.body)));
            // One poll of the call, and no other task runs before the peer
            // reads: the request must already be on the socket.
            let waker = std::task::Waker::noop();
            assert!(call
                .as_mut()
                .poll(&mut Context::from_waker(waker))
                .is_pending());
            let got: Vec<(u8, bool)> = frames(&drain(&peer))
                .into_iter()
                .filter(|f| f.2 == 1)
                .map(|(ty, flags, _)| (ty, flags & END_STREAM != 0))
                .collect();
            assert_eq!(got, case.want, "case {}: frames of the request", case.name);
            drop(call);
        });
    }

    #[test]
    fn a_call_writes_its_request_without_waiting_for_the_connection_task() {
        let cases = [
            Case {
                name: "with_a_message",
                body: b"\0\0\0\0\x02hi",
                want: vec![(HEADERS, false), (DATA, true)],
            },
            Case {
                name: "empty_body",
                body: b"",
                want: vec![(HEADERS, true)],
            },
        ];
        for case in cases {
            check(case);
        }
    }
}
