//! Serving a tfplugin6 provider the way Terraform launches plugins.
//!
//! [`serve`] checks the magic cookie, negotiates the protocol version (5
//! and 6 by default, the highest the host offers; a protocol-5 host gets
//! the provider through terrane-tfplugin5's `Serve5`, after a check that
//! its schema has nothing only 6 can carry),
//! listens on a unix socket, turns on AutoMTLS when Terraform sent its
//! client certificate, registers the provider next to the go-plugin
//! services (health "plugin" SERVING, GRPCController.Shutdown,
//! GRPCStdio), prints the handshake line and serves until Terraform asks it
//! to shut down (or SIGTERM). In debug mode it skips the cookie and TLS and
//! prints a `TF_REATTACH_PROVIDERS` value instead. The socket lives in a
//! private (0700) directory that is removed on every way out; when the
//! launching process dies the plugin stops at once and takes its process
//! group down (see `ParentWatch`).

use crate::cert::{cert_from_pem, Identity, Pinned};
use crate::handshake::{self, MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE};
use std::io::Write;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use terrane_tfplugin5::tfplugin5::provider_server::ProviderServer as Provider5Server;
use terrane_tfplugin5::v6::Serve5;
use terrane_tfplugin6::plugin::{grpc_controller_server, grpc_stdio_server, Empty, StdioData};
use terrane_tfplugin6::tfplugin6::provider_server::{Provider, ProviderServer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::Notify;
use tonic::transport::server::Connected;
use tonic::{Request, Response, Status};

/// Largest message either way (terraform-plugin-go uses the same cap).
pub const MAX_MESSAGE_SIZE: usize = 256 << 20;

/// How to serve.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// Protocol versions this provider speaks. Default: `[5, 6]`, or what
    /// `TERRANE_PLUGIN_PROTOCOL` names (`5`, `6` or `5,6`); see
    /// [`ServeOptions::only`].
    pub versions: Vec<u32>,
    /// Debug mode: no cookie, no TLS, print `TF_REATTACH_PROVIDERS`.
    /// Default: on when `TERRANE_PLUGIN_DEBUG=1`.
    pub debug: bool,
    /// The provider's source address, for the reattach line in debug mode,
    /// e.g. `registry.terraform.io/terrane/random`.
    pub address: String,
    /// Worker threads of the runtime [`serve_main`] builds. Default 1,
    /// which is a current-thread runtime: a plugin serves one connection
    /// whose calls are short, and one thread spares every call a wake-up
    /// of another (measured: a 1,000-instance plan through the plugin took
    /// 10-15% less time and CPU than with a worker per core). A
    /// current-thread runtime also batches the responses: a woken task
    /// waits its turn behind the tasks already queued (a multi-thread
    /// runtime runs it next, from its LIFO slot), so the connection task
    /// flushes after every call that was ready has answered, in one write,
    /// instead of once per call (a 1,000-instance no-op plan: ~3,000
    /// writes -> ~300, and ~20% less CPU over both processes). A provider
    /// with CPU-heavy calls should move that work to `spawn_blocking` or
    /// raise this.
    pub worker_threads: usize,
    /// Stop as soon as the launching process is gone (`ParentWatch`).
    /// Default on; off only stands in for a plugin that does not watch
    /// (as Go plugins do not), in tests.
    pub watch_parent: bool,
}

impl ServeOptions {
    pub fn new(address: impl Into<String>) -> ServeOptions {
        ServeOptions {
            versions: protocol_setting(std::env::var(PROTOCOL_ENV).ok().as_deref()),
            debug: std::env::var("TERRANE_PLUGIN_DEBUG").is_ok_and(|v| v == "1"),
            address: address.into(),
            worker_threads: 1,
            watch_parent: true,
        }
    }

    /// Serves only protocol `version` (5 or 6), whatever the environment says.
    pub fn only(mut self, version: u32) -> ServeOptions {
        self.versions = vec![version];
        self
    }
}

/// The variable that limits the protocol versions an SDK provider serves:
/// `5`, `6`, or both (`5,6`, the default when unset).
pub const PROTOCOL_ENV: &str = "TERRANE_PLUGIN_PROTOCOL";

/// The versions [`PROTOCOL_ENV`] names; empty (refused by [`serve`], which
/// says why) when it names anything but 5 and 6.
fn protocol_setting(v: Option<&str>) -> Vec<u32> {
    let Some(v) = v.filter(|v| !v.trim().is_empty()) else {
        return SUPPORTED.to_vec();
    };
    let mut out = Vec::new();
    for part in v.split(',') {
        match part.trim().parse::<u32>() {
            Ok(n) if SUPPORTED.contains(&n) => out.push(n),
            _ => return Vec::new(),
        }
    }
    out
}

/// The protocol versions a provider served by this crate can speak.
pub const SUPPORTED: [u32; 2] = [5, 6];

impl ServeOptions {
    fn check_versions(&self) -> Result<(), ServeError> {
        if self.versions.is_empty() || self.versions.iter().any(|v| !SUPPORTED.contains(v)) {
            return Err(ServeError::BadProtocolSetting(
                std::env::var(PROTOCOL_ENV).unwrap_or_default(),
            ));
        }
        Ok(())
    }
}

/// Why serving stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("{}", handshake::NOT_BY_HAND)]
    NotLaunchedByTerraform,
    #[error("Terraform offered plugin protocol versions {offered:?}, but this provider speaks {supported:?}")]
    NoCommonVersion {
        offered: String,
        supported: Vec<u32>,
    },
    #[error("{PROTOCOL_ENV}={0:?} names no plugin protocol this provider speaks: use 5, 6 or 5,6")]
    BadProtocolSetting(String),
    #[error("this provider cannot serve plugin protocol 5, the only version the host offered ({offered}): its schema needs protocol 6: {reason}")]
    NeedsProtocol6 { offered: String, reason: String },
    #[error("cannot listen for Terraform: {0}")]
    Listen(std::io::Error),
    #[error(transparent)]
    Cert(#[from] crate::cert::CertError),
    #[error("TLS setup: {0}")]
    Tls(#[from] rustls::Error),
    #[error("gRPC server: {0}")]
    Grpc(#[from] tonic::transport::Error),
}

/// Serves `provider` until shutdown. See the module docs.
pub async fn serve<P: Provider>(provider: P, opts: ServeOptions) -> Result<(), ServeError> {
    if !opts.debug && std::env::var(MAGIC_COOKIE_KEY).ok().as_deref() != Some(MAGIC_COOKIE_VALUE) {
        return Err(ServeError::NotLaunchedByTerraform);
    }
    opts.check_versions()?;
    // In debug mode nobody offers: the developer's Terraform attaches with
    // the version in the reattach value, the highest this provider speaks.
    let offered = match opts.debug {
        true => None,
        false => std::env::var("PLUGIN_PROTOCOL_VERSIONS").ok(),
    };
    let highest = opts.versions.iter().max().map(u32::to_string);
    let offer = if opts.debug {
        highest.as_deref()
    } else {
        offered.as_deref()
    };
    let version =
        handshake::negotiate(offer, &opts.versions).ok_or_else(|| ServeError::NoCommonVersion {
            offered: offered.clone().unwrap_or_default(),
            supported: opts.versions.clone(),
        })?;

    if version == 5 {
        // Before the handshake, so the host reports why the plugin stopped.
        let schema = provider
            .get_provider_schema(Request::new(Default::default()))
            .await;
        if let Some(n) = schema
            .ok()
            .and_then(|r| terrane_tfplugin5::v6::needs_protocol6(r.get_ref()))
        {
            return Err(ServeError::NeedsProtocol6 {
                offered: offered.unwrap_or_default(),
                reason: n.to_string(),
            });
        }
    }

    // Before anything is created that would need cleaning up.
    let parent = if opts.debug || !opts.watch_parent {
        None
    } else {
        Some(ParentWatch::start().map_err(ServeError::Listen)?)
    };

    let dir = SocketDir::create().map_err(ServeError::Listen)?;
    let path = dir.0.join("plugin.sock");
    let listener = UnixListener::bind(&path).map_err(ServeError::Listen)?;
    if let Some(parent) = parent {
        let dir = dir.0.clone();
        tokio::spawn(async move {
            parent.gone().await;
            orphaned(&dir)
        });
    }

    let tls = match (opts.debug, std::env::var("PLUGIN_CLIENT_CERT").ok()) {
        (false, Some(pem)) if !pem.trim().is_empty() => {
            let identity = Identity::generate()?;
            let client = cert_from_pem(&pem)?;
            let mut config = rustls::ServerConfig::builder_with_provider(crate::cert::provider())
                .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])?
                .with_client_cert_verifier(Pinned::new(client))
                .with_single_cert(vec![identity.cert_der.clone()], identity.key())?;
            config.alpn_protocols = vec![b"h2".to_vec()];
            Some((tokio_rustls::TlsAcceptor::from(Arc::new(config)), identity))
        }
        _ => None,
    };

    let shutdown = Arc::new(Notify::new());
    let (tx, rx) = tokio::sync::mpsc::channel::<std::io::Result<Conn>>(16);
    let acceptor = tls.as_ref().map(|(a, _)| a.clone());
    let accept_task = tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                break;
            };
            let tx = tx.clone();
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let conn = match acceptor {
                    Some(a) => a.accept(stream).await.map(|s| Conn::Tls(Box::new(s))),
                    None => Ok(Conn::Plain(stream)),
                };
                // A failed TLS handshake (wrong client certificate) only
                // drops that connection; say why on stderr, which Terraform
                // logs.
                match conn {
                    Ok(c) => {
                        let _ = tx.send(Ok(c)).await;
                    }
                    Err(e) => eprintln!("plugin: refused a connection: TLS handshake failed: {e}"),
                }
            });
        }
    });

    let (health, health_service) = tonic_health::server::health_reporter();
    health
        .set_service_status("plugin", tonic_health::ServingStatus::Serving)
        .await;
    let controller = Controller {
        shutdown: shutdown.clone(),
    };

    let addr = path.display().to_string();
    let mut out = std::io::stdout().lock();
    if opts.debug {
        let reattach = serde_json::json!({ opts.address.clone(): {
            "Protocol": "grpc", "ProtocolVersion": version, "Pid": std::process::id(), "Test": true,
            "Addr": { "Network": "unix", "String": addr },
        }});
        writeln!(out, "Provider started. To attach Terraform, set TF_REATTACH_PROVIDERS to this value:\n\n\tTF_REATTACH_PROVIDERS='{reattach}'\n").ok();
    } else {
        writeln!(
            out,
            "{}",
            handshake::line(
                version,
                "unix",
                &addr,
                tls.as_ref().map(|(_, id)| id.cert_der.as_ref())
            )
        )
        .ok();
    }
    out.flush().ok();
    drop(out);

    let stop = shutdown.clone();
    let debug = opts.debug;
    let stopped = async move {
        let mut term =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        let term_fut = async {
            match term.as_mut() {
                Some(t) => {
                    t.recv().await;
                }
                None => std::future::pending::<()>().await,
            }
        };
        // Terraform handles Ctrl-C itself (StopProvider, then Shutdown), so
        // plugins ignore SIGINT, except in debug mode where the developer
        // stops the provider with it.
        let int_fut = async {
            if debug {
                let _ = tokio::signal::ctrl_c().await;
            } else {
                std::future::pending::<()>().await
            }
        };
        tokio::select! {
            _ = stop.notified() => {},
            _ = term_fut => {},
            _ = int_fut => {},
        }
    };
    let incoming = tokio_stream::wrappers::ReceiverStream::new(rx);
    let mut builder = tonic::transport::Server::builder();
    let router = if version == 5 {
        builder.add_service(
            Provider5Server::new(Serve5(provider))
                .max_decoding_message_size(MAX_MESSAGE_SIZE)
                .max_encoding_message_size(MAX_MESSAGE_SIZE),
        )
    } else {
        builder.add_service(
            ProviderServer::new(provider)
                .max_decoding_message_size(MAX_MESSAGE_SIZE)
                .max_encoding_message_size(MAX_MESSAGE_SIZE),
        )
    };
    let result = router
        .add_service(health_service)
        .add_service(grpc_controller_server::GrpcControllerServer::new(
            controller,
        ))
        .add_service(grpc_stdio_server::GrpcStdioServer::new(Stdio))
        .serve_with_incoming_shutdown(incoming, stopped)
        .await;
    accept_task.abort();
    drop(dir);
    result.map_err(ServeError::from)
}

/// Runs [`serve`] on a new runtime and exits the process as go-plugin
/// servers do: 1 with a friendly message when run by hand.
pub fn serve_main<P: Provider>(provider: P, opts: ServeOptions) -> ! {
    // One worker is a current-thread runtime: see `ServeOptions::worker_threads`.
    let built = if opts.worker_threads <= 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(opts.worker_threads)
            .enable_all()
            .build()
    };
    let rt = match built {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("cannot start the async runtime: {e}");
            std::process::exit(1)
        }
    };
    match rt.block_on(serve(provider, opts)) {
        Ok(()) => std::process::exit(0),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1)
        }
    }
}

/// The plugin's private socket directory (0700, as go-plugin makes it),
/// removed when serving ends, however it ends (SIGTERM and Shutdown end it
/// normally; on parent death [`orphaned`] removes it).
struct SocketDir(PathBuf);

impl SocketDir {
    /// `terrane-plugin-<pid>-…` under `PLUGIN_UNIX_SOCKET_DIR` or the
    /// temporary directory. The launcher relies on the pid in the name:
    /// it removes the directory of a plugin it had to kill only when the
    /// name carries that plugin's pid.
    fn create() -> std::io::Result<SocketDir> {
        use std::os::unix::fs::DirBuilderExt;
        let base = std::env::var_os("PLUGIN_UNIX_SOCKET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(std::env::temp_dir);
        for attempt in 0..100u32 {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or(0);
            let dir = base.join(format!(
                "terrane-plugin-{}-{nanos:x}-{attempt}",
                std::process::id()
            ));
            match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
                Ok(()) => return Ok(SocketDir(dir)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(std::io::Error::other("could not create a socket directory"))
    }
}

impl Drop for SocketDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Notices that the process that launched this plugin is gone, so that an
/// orphaned plugin does not run on (terrane's launcher already sets a
/// death signal, Terraform's does not; either may be killed outright).
///
/// On Linux the plugin asks for SIGHUP when its parent dies
/// (`PR_SET_PDEATHSIG`, replacing the launcher's SIGKILL now that the
/// signal is handled). The kernel also sends it when only the parent's
/// forking *thread* exits; the parent is then still there and still our
/// parent, so every signal is checked against `getppid`, which changes
/// only when the parent process is gone. Elsewhere `getppid` is polled.
struct ParentWatch {
    parent: nix::unistd::Pid,
    hangup: tokio::signal::unix::Signal,
}

impl ParentWatch {
    fn start() -> std::io::Result<ParentWatch> {
        let parent = nix::unistd::getppid();
        // The handler first, so the signal never finds the default action
        // (terminate) in place.
        let hangup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())?;
        #[cfg(target_os = "linux")]
        nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGHUP)
            .map_err(std::io::Error::from)?;
        Ok(ParentWatch { parent, hangup })
    }

    /// Resolves once the parent is gone (at once if it died before the
    /// death signal was armed).
    async fn gone(mut self) {
        while nix::unistd::getppid() == self.parent {
            if cfg!(target_os = "linux") {
                if self.hangup.recv().await.is_none() {
                    // The runtime is going away, and the plugin with it.
                    std::future::pending::<()>().await;
                }
            } else {
                tokio::select! {
                    _ = self.hangup.recv() => {}
                    _ = tokio::time::sleep(std::time::Duration::from_millis(500)) => {}
                }
            }
        }
    }
}

/// The parent died: nobody will read a response. Remove the socket
/// directory, then take down the plugin's process group (whatever the
/// provider started) and the plugin with it, without waiting for calls in
/// flight. Only when the plugin leads its own group, as terrane launches
/// it: under Terraform the group is Terraform's, and the plugin just exits.
fn orphaned(dir: &std::path::Path) -> ! {
    let _ = std::fs::remove_dir_all(dir);
    let me = nix::unistd::getpid();
    if nix::unistd::getpgrp() == me {
        let _ = nix::sys::signal::killpg(me, nix::sys::signal::Signal::SIGKILL);
    }
    std::process::exit(1)
}

struct Controller {
    shutdown: Arc<Notify>,
}

#[tonic::async_trait]
impl grpc_controller_server::GrpcController for Controller {
    async fn shutdown(&self, _req: Request<Empty>) -> Result<Response<Empty>, Status> {
        self.shutdown.notify_one();
        Ok(Response::new(Empty {}))
    }
}

struct Stdio;

#[tonic::async_trait]
impl grpc_stdio_server::GrpcStdio for Stdio {
    /// Our stdout/stderr go straight to Terraform's pipes, so the stream
    /// has nothing to carry.
    async fn stream_stdio(
        &self,
        _req: Request<()>,
    ) -> Result<Response<tonic::codegen::BoxStream<StdioData>>, Status> {
        Ok(Response::new(Box::pin(tokio_stream::empty())))
    }
}

/// A served connection, with or without TLS.
enum Conn {
    Plain(UnixStream),
    Tls(Box<tokio_rustls::server::TlsStream<UnixStream>>),
}

impl Connected for Conn {
    type ConnectInfo = ();
    fn connect_info(&self) -> Self::ConnectInfo {}
}

impl AsyncRead for Conn {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Conn::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Conn::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Conn {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Conn::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Conn::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Conn::Plain(s) => Pin::new(s).poll_flush(cx),
            Conn::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Conn::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Conn::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::protocol_setting;

    #[test]
    fn item2_protocol_setting() {
        let cases: [(&str, Option<&str>, Vec<u32>); 6] = [
            ("unset_serves_both", None, vec![5, 6]),
            ("empty_serves_both", Some(" "), vec![5, 6]),
            ("only_5", Some("5"), vec![5]),
            ("only_6", Some("6"), vec![6]),
            ("both_spaced", Some("6, 5"), vec![6, 5]),
            ("unknown_version_refused", Some("5,7"), vec![]),
        ];
        for (name, v, want) in cases {
            assert_eq!(protocol_setting(v), want, "case {name}");
        }
    }
}
