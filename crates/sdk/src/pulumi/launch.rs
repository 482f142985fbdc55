//! How a provider binary knows it was launched by Pulumi, and serving it
//! then: Pulumi's out-of-process plugin lifecycle.
//!
//! Terraform (and terrane) launch a plugin with go-plugin's magic cookie in
//! the environment; Pulumi's engine launches `pulumi-resource-<pkg>` with
//! its own gRPC address as the last argument (after flags such as
//! `--logtostderr`). So: no cookie and a last argument that is not a flag
//! means Pulumi. The plugin then listens on a loopback port without TLS,
//! prints the port as the first line of stdout, and serves until SIGINT or
//! SIGTERM, or until its parent (the engine) is gone.

use super::PulumiServer;
use crate::provider::Provider;
use std::io::Write;
use terrane_pulumirpc::pulumirpc::resource_provider_server::ResourceProviderServer;

/// The engine address when the process was launched as a Pulumi plugin:
/// no go-plugin cookie in the environment, and a last argument that is not
/// a flag.
pub fn engine_address() -> Option<String> {
    let cookie = std::env::var_os(terrane_plugin::handshake::MAGIC_COOKIE_KEY);
    detect(cookie.is_some(), std::env::args().skip(1))
}

fn detect(cookie: bool, args: impl Iterator<Item = String>) -> Option<String> {
    if cookie {
        return None;
    }
    let last = args.last()?;
    (!last.starts_with('-') && !last.is_empty()).then_some(last)
}

/// Serves `provider` over Pulumi's protocol and exits when done. Builds its
/// own tokio runtime, as [`crate::serve`] does.
pub fn serve_main<P: Provider>(provider: P, engine: String) -> ! {
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("cannot start the async runtime: {e}");
            std::process::exit(1)
        }
    };
    match rt.block_on(serve(provider, engine)) {
        Ok(()) => std::process::exit(0),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1)
        }
    }
}

async fn serve<P: Provider>(provider: P, engine: String) -> Result<(), String> {
    crate::log::debug(
        "serving over Pulumi's protocol",
        &[("engine", engine.clone())],
    );
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .map_err(|e| format!("cannot listen on a loopback port: {e}"))?;
    let port = listener
        .local_addr()
        .map_err(|e| format!("cannot read the listening port: {e}"))?
        .port();
    let server = PulumiServer::new(provider);
    // The parent and the signal handlers are taken before the port is
    // printed: the engine may stop or die as soon as it has read it.
    use tokio::signal::unix::{signal, SignalKind};
    let parent = nix::unistd::getppid();
    let mut int =
        signal(SignalKind::interrupt()).map_err(|e| format!("cannot handle SIGINT: {e}"))?;
    let mut term =
        signal(SignalKind::terminate()).map_err(|e| format!("cannot handle SIGTERM: {e}"))?;
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{port}")
            .and_then(|()| out.flush())
            .map_err(|e| format!("cannot print the port: {e}"))?;
    }
    let stop = async move {
        let mut tick = tokio::time::interval(std::time::Duration::from_millis(500));
        loop {
            tokio::select! {
                _ = int.recv() => return,
                _ = term.recv() => return,
                _ = tick.tick() => {
                    if nix::unistd::getppid() != parent {
                        return;
                    }
                }
            }
        }
    };
    tonic::transport::Server::builder()
        .add_service(ResourceProviderServer::new(server))
        .serve_with_incoming_shutdown(
            tokio_stream::wrappers::TcpListenerStream::new(listener),
            stop,
        )
        .await
        .map_err(|e| format!("serving over Pulumi's protocol failed: {e}"))
}

#[cfg(test)]
mod tests {
    use super::detect;

    #[test]
    fn item2_launch_detection() {
        let args = |a: &[&str]| {
            a.iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .into_iter()
        };
        let cases: &[(&str, bool, &[&str], Option<&str>)] = &[
            ("terraform cookie wins", true, &["127.0.0.1:5000"], None),
            (
                "pulumi engine address",
                false,
                &["127.0.0.1:5000"],
                Some("127.0.0.1:5000"),
            ),
            (
                "pulumi with flags first",
                false,
                &["--logtostderr", "-v=9", "127.0.0.1:5000"],
                Some("127.0.0.1:5000"),
            ),
            ("no arguments", false, &[], None),
            ("only flags", false, &["--help"], None),
        ];
        for (name, cookie, a, want) in cases {
            assert_eq!(detect(*cookie, args(a)).as_deref(), *want, "{name}");
        }
    }
}
