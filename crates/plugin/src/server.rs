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
//! to shut down (or SIGTERM). The tonic-generated services are served
//! over h2 directly (`serve_connection`), not through tonic's server and
//! hyper, whose task per call and channels cost more than the calls. In debug mode it skips the cookie and TLS and
//! prints a `TF_REATTACH_PROVIDERS` value instead. The socket lives in a
//! private (0700) directory that is removed on every way out; when the
//! launching process dies the plugin stops at once and takes its process
//! group down (see `ParentWatch`).

use crate::body::RecvBody;
use crate::cert::{cert_from_pem, Identity, Pinned};
use crate::handshake::{self, MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE};
use bytes::Bytes;
use futures_util::stream::{FuturesUnordered, StreamExt as _};
use std::convert::Infallible;
use std::future::Future as _;
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
use tonic::server::NamedService;
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
    /// 10-15% less time and CPU than with a worker per core). On a
    /// current-thread runtime the calls of a connection run on the
    /// connection's own task, which also batches the responses: it takes
    /// every request that arrived, runs every call that can go on, then
    /// writes what they answered in one flush instead of once per call
    /// (see `serve_connection`). With more workers each call gets a task of
    /// its own, so that calls use several cores. A provider with CPU-heavy
    /// calls should move that work to `spawn_blocking` or raise this.
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
    let acceptor = tls.as_ref().map(|(a, _)| a.clone());

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
    let provider = Arc::new(provider);
    let provider6 = ProviderServer::from_arc(provider.clone())
        .max_decoding_message_size(MAX_MESSAGE_SIZE)
        .max_encoding_message_size(MAX_MESSAGE_SIZE);
    if version == 5 {
        let provider5 = Provider5Server::new(Serve5(provider))
            .max_decoding_message_size(MAX_MESSAGE_SIZE)
            .max_encoding_message_size(MAX_MESSAGE_SIZE);
        let services = Services::new(provider5, health_service, controller, Some(provider6));
        serve_until(listener, acceptor, services, stopped).await;
    } else {
        let services = Services::new(
            provider6,
            health_service,
            controller,
            None::<ProviderServer<P>>,
        );
        serve_until(listener, acceptor, services, stopped).await;
    }
    drop(dir);
    Ok(())
}

/// Accepts connections and serves each on a task of its own (see
/// [`serve_connection`]) until `stopped`; then closes every connection
/// gracefully and returns once all are closed.
async fn serve_until<P: GrpcService, H: GrpcService, S: GrpcService>(
    listener: UnixListener,
    acceptor: Option<tokio_rustls::TlsAcceptor>,
    services: Services<P, H, S>,
    stopped: impl std::future::Future<Output = ()>,
) {
    // A multi-thread runtime (`worker_threads` > 1) gets a task per call,
    // so that calls run on several cores; on a current-thread runtime
    // every call runs on its connection's task.
    let spawn_calls = tokio::runtime::Handle::current().runtime_flavor()
        != tokio::runtime::RuntimeFlavor::CurrentThread;
    // Set when serving stops. Serving ends once every connection task has
    // dropped its receiver.
    let (closing, _) = tokio::sync::watch::channel(false);
    let mut stopped = std::pin::pin!(stopped);
    loop {
        tokio::select! {
            _ = &mut stopped => break,
            accepted = listener.accept() => {
                // The listener failing ends serving, gracefully, as it
                // did when tonic's server saw its incoming stream end.
                let Ok((stream, _)) = accepted else { break };
                tokio::spawn(serve_connection(
                    stream,
                    acceptor.clone(),
                    services.clone(),
                    closing.subscribe(),
                    spawn_calls,
                ));
            }
        }
    }
    drop(listener);
    closing.send_replace(true);
    closing.closed().await;
}

/// Runs [`serve`] on a new runtime and exits the process as go-plugin
/// servers do: 1 with a friendly message when run by hand.
pub fn serve_main<P: Provider>(provider: P, opts: ServeOptions) -> ! {
    // One worker is a current-thread runtime: see `ServeOptions::worker_threads`.
    let built = if opts.worker_threads <= 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .on_thread_park(crate::spin::before_park)
            .on_thread_unpark(crate::spin::after_unpark)
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

/// The services a plugin serves (the provider, and go-plugin's health,
/// controller and stdio services), routed by the service name that starts
/// a call's path (`/tfplugin6.Provider/PlanResourceChange`). tonic's
/// `Routes` does the same through an axum router, which boxes each request
/// body and response once more and matches the path against a route table.
///
/// Serving protocol 5, `same6` is the protocol-6 service of the same
/// provider: a per-instance call that `Serve5` would only transcode goes
/// to it directly, its path rewritten (`terrane_tfplugin5::v6::same_path6`),
/// which spares decoding and encoding each message twice more.
#[derive(Clone)]
struct Services<P, H, S> {
    provider: P,
    health: H,
    controller: grpc_controller_server::GrpcControllerServer<Controller>,
    stdio: grpc_stdio_server::GrpcStdioServer<Stdio>,
    same6: Option<S>,
}

/// A call's answer as tonic's generated servers produce it (each of them
/// already boxes its future, so routing adds no box of its own).
type Call = tonic::codegen::BoxFuture<http::Response<tonic::body::Body>, Infallible>;

/// A tonic-generated gRPC service reading its requests from h2.
trait GrpcService: NamedService + Clone + Send + 'static {
    /// Starts a call. tonic's generated servers are always ready
    /// (`poll_ready` holds no capacity back), so each is called without
    /// asking.
    fn start(&mut self, req: http::Request<RecvBody>) -> Call;
}

impl<S> GrpcService for S
where
    S: tower::Service<
            http::Request<RecvBody>,
            Response = http::Response<tonic::body::Body>,
            Error = Infallible,
            Future = Call,
        > + NamedService
        + Clone
        + Send
        + 'static,
{
    fn start(&mut self, req: http::Request<RecvBody>) -> Call {
        self.call(req)
    }
}

impl<P: GrpcService, H: GrpcService, S: GrpcService> Services<P, H, S> {
    fn new(provider: P, health: H, controller: Controller, same6: Option<S>) -> Services<P, H, S> {
        Services {
            provider,
            health,
            controller: grpc_controller_server::GrpcControllerServer::new(controller),
            stdio: grpc_stdio_server::GrpcStdioServer::new(Stdio),
            same6,
        }
    }

    /// Starts the call `req` names; a path naming no service is answered
    /// UNIMPLEMENTED as tonic's router answers it (the status in the
    /// headers, with the gRPC content type, which Terraform needs to read
    /// the status).
    fn call(&mut self, mut req: http::Request<RecvBody>) -> Call {
        let path = req.uri().path();
        let service = path
            .strip_prefix('/')
            .and_then(|p| p.split_once('/'))
            .map_or("", |(service, _)| service);
        if service == P::NAME {
            if let (Some(same6), Some(path6)) =
                (&mut self.same6, terrane_tfplugin5::v6::same_path6(path))
            {
                *req.uri_mut() = http::Uri::from_static(path6);
                return same6.start(req);
            }
            self.provider.start(req)
        } else if service == H::NAME {
            self.health.start(req)
        } else if service == <grpc_controller_server::GrpcControllerServer<Controller>>::NAME {
            self.controller.start(req)
        } else if service == <grpc_stdio_server::GrpcStdioServer<Stdio>>::NAME {
            self.stdio.start(req)
        } else {
            Box::pin(std::future::ready(
                Ok(Status::unimplemented("").into_http()),
            ))
        }
    }
}

/// Serves one connection: the TLS handshake (if any), then HTTP/2 driven
/// by h2 directly. hyper's server (under tonic's) spawned a task per
/// stream and passed every request and response body through channels;
/// here, on a current-thread runtime, the calls run on this task, polled
/// with the connection: every request the peer sent is taken first, then
/// every call that can make progress runs, then the connection writes what
/// they answered (in one flush, for the calls that were ready together).
/// A call that waits (a streaming response, a provider awaiting I/O) only
/// waits; the others go on. With `spawn_calls` each call gets a task.
///
/// When `closing` is set the connection shuts down gracefully, as hyper's
/// did: GOAWAY, the calls in flight finish, then it closes. A failed TLS
/// handshake only drops this connection.
async fn serve_connection<P: GrpcService, H: GrpcService, S: GrpcService>(
    stream: UnixStream,
    tls: Option<tokio_rustls::TlsAcceptor>,
    mut services: Services<P, H, S>,
    mut closing: tokio::sync::watch::Receiver<bool>,
    spawn_calls: bool,
) {
    let _watch = crate::spin::watch(&stream, crate::spin::Side::Server);
    // Resolves when serving stops (or the server is gone).
    let mut closing = std::pin::pin!(async move {
        let _ = closing.wait_for(|c| *c).await;
    });
    let io = match tls {
        Some(acceptor) => tokio::select! {
            tls = acceptor.accept(stream) => match tls {
                Ok(tls) => Conn::Tls(Box::new(tls)),
                // Say why on stderr, which Terraform logs.
                Err(e) => {
                    eprintln!("plugin: refused a connection: TLS handshake failed: {e}");
                    return;
                }
            },
            _ = &mut closing => return,
        },
        None => Conn::Plain(stream),
    };
    // hyper's HTTP/2 server defaults, which tonic's server kept: 1 MiB
    // stream and connection windows, 16 KiB frames and header lists, no
    // stream limit, no limit on the streams reset for our own errors, at
    // most 400 KiB queued per stream.
    let handshake = h2::server::Builder::new()
        .initial_window_size(1 << 20)
        .initial_connection_window_size(1 << 20)
        .max_frame_size(16 << 10)
        .max_header_list_size(16 << 10)
        .max_local_error_reset_streams(None)
        .max_send_buffer_size(400 << 10)
        .handshake::<_, Bytes>(io);
    let mut conn = tokio::select! {
        conn = handshake => match conn {
            Ok(conn) => conn,
            Err(_) => return,
        },
        _ = &mut closing => return,
    };
    let mut calls = FuturesUnordered::new();
    let mut shutting_down = false;
    std::future::poll_fn(|cx| {
        if !shutting_down && closing.as_mut().poll(cx).is_ready() {
            conn.graceful_shutdown();
            shutting_down = true;
        }
        loop {
            // Reads what the peer sent and writes what the calls queued.
            // `None` once the connection is closed: after a graceful
            // shutdown only when no call is in flight any more.
            loop {
                match conn.poll_accept(cx) {
                    Poll::Ready(Some(Ok((req, respond)))) => {
                        let call = respond_to(services.call(req.map(RecvBody::new)), respond);
                        if spawn_calls {
                            tokio::spawn(call);
                        } else {
                            calls.push(call);
                        }
                    }
                    Poll::Ready(Some(Err(_)) | None) => return Poll::Ready(()),
                    Poll::Pending => break,
                }
            }
            // A call that finished queued its last frames: accept again to
            // write them (and read what came meanwhile). A call still in
            // flight that queued some has woken this task through h2.
            let mut finished = false;
            while let Poll::Ready(Some(())) = calls.poll_next_unpin(cx) {
                finished = true;
            }
            if !finished {
                return Poll::Pending;
            }
        }
    })
    .await
}

/// Answers one call on its stream: awaits the service's response (dropping
/// the call if the client resets the stream first, as a cancelled or timed
/// out call does), then sends its headers, data and trailers. The body is
/// sent the way hyper's server sends it: wait for a byte of send capacity,
/// then hand h2 the next frame whole (h2 sends it as the peer's window
/// allows and gives the stream no more capacity while `max_send_buffer_size`
/// is queued), so a streaming response streams and a slow reader holds
/// only its own stream back.
async fn respond_to(mut call: Call, mut respond: h2::server::SendResponse<Bytes>) {
    use http_body::Body as _;
    // While a call is in progress the next thing this plugin waits for
    // may be something other than the engine (see `crate::spin`).
    let _in_progress = crate::spin::Call::start(crate::spin::Side::Server);
    let answered = std::future::poll_fn(|cx| match call.as_mut().poll(cx) {
        Poll::Ready(answer) => Poll::Ready(Some(answer)),
        Poll::Pending => respond.poll_reset(cx).map(|_| None),
    })
    .await;
    let response = match answered {
        Some(Ok(response)) => response,
        Some(Err(never)) => match never {},
        None => return,
    };
    let (mut head, body) = response.into_parts();
    // As hyper does: a body of known size (an error's empty body) says so.
    if let Some(len) = body.size_hint().exact() {
        head.headers
            .entry(http::header::CONTENT_LENGTH)
            .or_insert_with(|| len.into());
    }
    let end = body.is_end_stream();
    let Ok(mut send) = respond.send_response(http::Response::from_parts(head, ()), end) else {
        return;
    };
    if end {
        return;
    }
    let mut body = std::pin::pin!(body);
    loop {
        send.reserve_capacity(1);
        if send.capacity() == 0 {
            loop {
                match std::future::poll_fn(|cx| send.poll_capacity(cx)).await {
                    Some(Ok(0)) => {}
                    Some(Ok(_)) => break,
                    // Reset or gone: nobody reads the rest.
                    Some(Err(_)) | None => return,
                }
            }
        }
        let frame = std::future::poll_fn(|cx| match body.as_mut().poll_frame(cx) {
            Poll::Ready(frame) => Poll::Ready(Some(frame)),
            Poll::Pending => send.poll_reset(cx).map(|_| None),
        })
        .await;
        match frame {
            None => return,
            Some(None) => {
                let _ = send.send_data(Bytes::new(), true);
                return;
            }
            Some(Some(Err(_))) => {
                send.send_reset(h2::Reason::INTERNAL_ERROR);
                return;
            }
            Some(Some(Ok(frame))) => match frame.into_data() {
                Ok(data) => {
                    let last = body.is_end_stream();
                    if send.send_data(data, last).is_err() || last {
                        return;
                    }
                }
                Err(frame) => {
                    if let Ok(trailers) = frame.into_trailers() {
                        send.reserve_capacity(0);
                        let _ = send.send_trailers(trailers);
                        return;
                    }
                }
            },
        }
    }
}

/// A served connection, with or without TLS.
enum Conn {
    Plain(UnixStream),
    Tls(Box<tokio_rustls::server::TlsStream<UnixStream>>),
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
mod serving_tests {
    use super::*;
    use std::time::Duration;
    use tonic_health::pb::health_check_response::ServingStatus as Wire;
    use tonic_health::pb::health_client::HealthClient;
    use tonic_health::pb::HealthCheckRequest;

    /// A provider whose schema call answers only once `gate` opens.
    struct Gated {
        gate: Arc<Notify>,
    }

    #[tonic::async_trait]
    impl Provider for Gated {
        async fn get_provider_schema(
            &self,
            _req: Request<terrane_tfplugin6::tfplugin6::get_provider_schema::Request>,
        ) -> Result<Response<terrane_tfplugin6::tfplugin6::get_provider_schema::Response>, Status>
        {
            self.gate.notified().await;
            Ok(Response::new(Default::default()))
        }
    }

    fn health_request() -> HealthCheckRequest {
        HealthCheckRequest {
            service: "plugin".into(),
        }
    }

    /// One connection, calls on its task and with a task each: a call
    /// waiting in the provider and a server-streaming call (health Watch)
    /// hold nothing else up; the stream streams; a path naming no service
    /// is UNIMPLEMENTED with the gRPC content type; once serving stops,
    /// the call in flight still answers and the connection closes when the
    /// last stream ends.
    #[tokio::test]
    async fn calls_streams_unknown_paths_and_graceful_shutdown() {
        for spawn_calls in [false, true] {
            let case = |what: &str| format!("case {what} (spawn_calls {spawn_calls})");
            let (health, health_service) = tonic_health::server::health_reporter();
            health
                .set_service_status("plugin", tonic_health::ServingStatus::Serving)
                .await;
            let gate = Arc::new(Notify::new());
            let services = Services::new(
                ProviderServer::new(Gated { gate: gate.clone() }),
                health_service,
                Controller {
                    shutdown: Arc::new(Notify::new()),
                },
                None::<ProviderServer<Gated>>,
            );
            let (client_io, server_io) = UnixStream::pair().unwrap();
            let (closing, closing_rx) = tokio::sync::watch::channel(false);
            let served = tokio::spawn(serve_connection(
                server_io,
                None,
                services,
                closing_rx,
                spawn_calls,
            ));
            let conn = crate::client::Conn::handshake(client_io, None)
                .await
                .unwrap();
            let origin = http::Uri::from_static("http://localhost");
            let mut health_client = HealthClient::with_origin(conn.clone(), origin.clone());

            let mut watch = health_client
                .watch(health_request())
                .await
                .unwrap()
                .into_inner();
            let first = watch.message().await.unwrap().unwrap();
            assert_eq!(first.status(), Wire::Serving, "{}", case("watch_first"));

            let mut provider =
                terrane_tfplugin6::tfplugin6::provider_client::ProviderClient::with_origin(
                    conn.clone(),
                    origin.clone(),
                );
            let waiting = tokio::spawn(async move {
                provider
                    .get_provider_schema(
                        terrane_tfplugin6::tfplugin6::get_provider_schema::Request {},
                    )
                    .await
            });

            let checked = health_client
                .check(health_request())
                .await
                .unwrap()
                .into_inner();
            assert_eq!(
                checked.status(),
                Wire::Serving,
                "{}",
                case("concurrent_call")
            );

            let mut unknown = crate::client::Conn::clone(&conn);
            let req = http::Request::builder()
                .method("POST")
                .uri("http://localhost/nothing.Here/Call")
                .header("content-type", "application/grpc")
                .header("te", "trailers")
                .body(tonic::body::Body::empty())
                .unwrap();
            let res = tower::Service::call(&mut unknown, req).await.unwrap();
            assert_eq!(
                res.headers().get("grpc-status").map(|v| v.as_bytes()),
                Some(&b"12"[..]),
                "{}",
                case("unknown_path_unimplemented")
            );
            assert_eq!(
                res.headers().get("content-type").map(|v| v.as_bytes()),
                Some(&b"application/grpc"[..]),
                "{}",
                case("unknown_path_content_type")
            );

            health
                .set_service_status("plugin", tonic_health::ServingStatus::NotServing)
                .await;
            let next = watch.message().await.unwrap().unwrap();
            assert_eq!(next.status(), Wire::NotServing, "{}", case("watch_streams"));

            closing.send_replace(true);
            tokio::time::sleep(Duration::from_millis(50)).await;
            assert!(!waiting.is_finished(), "{}", case("call_still_waiting"));
            gate.notify_one();
            let answered = tokio::time::timeout(Duration::from_secs(5), waiting)
                .await
                .unwrap()
                .unwrap();
            assert!(
                answered.is_ok(),
                "{}: {answered:?}",
                case("in_flight_call_finishes")
            );
            assert!(
                !served.is_finished(),
                "{}",
                case("open_stream_keeps_connection")
            );
            drop(watch);
            tokio::time::timeout(Duration::from_secs(5), served)
                .await
                .unwrap_or_else(|_| panic!("{}", case("connection_closes")))
                .unwrap();
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
