//! The SSH communicator of the `file` and `remote-exec` provisioners, over
//! russh: a connection (through a bastion host when one is configured),
//! key or password authentication, commands run on a session channel with
//! their output streamed, and uploads through the remote `scp -t` sink,
//! as Terraform's communicator does.

use russh::client::{self, Handle, Handler};
use russh::keys::{decode_secret_key, PrivateKeyWithHashAlg, PublicKeyOrCertificate};
use russh::ChannelMsg;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Where and how to log in (a `connection` block, evaluated).
#[derive(Clone, Debug)]
pub struct Target {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: Option<String>,
    pub private_key: Option<String>,
    /// The expected host key (`host_key`, authorized_keys format); any key
    /// is accepted without one, as in Terraform.
    pub host_key: Option<String>,
}

/// A logged-in session.
pub struct Session {
    handle: Handle<Client>,
    /// The bastion's session, kept open while this one lives.
    _via: Option<Handle<Client>>,
}

struct Client {
    host_key: Option<russh::keys::PublicKey>,
}

impl Handler for Client {
    type Error = russh::Error;

    async fn check_server_key(
        &mut self,
        key: &PublicKeyOrCertificate,
    ) -> Result<bool, Self::Error> {
        Ok(match (&self.host_key, key) {
            (None, _) => true,
            (Some(want), PublicKeyOrCertificate::PublicKey { key, .. }) => {
                key.key_data() == want.key_data()
            }
            (Some(_), PublicKeyOrCertificate::Certificate(_)) => false,
        })
    }
}

/// No inactivity limit (a remote script may be silent for long), but
/// keepalives, so that a vanished host ends the session.
fn config() -> Arc<client::Config> {
    Arc::new(client::Config {
        inactivity_timeout: None,
        keepalive_interval: Some(Duration::from_secs(10)),
        ..Default::default()
    })
}

fn client(t: &Target) -> Result<Client, String> {
    let host_key = match &t.host_key {
        Some(k) => Some(
            russh::keys::PublicKey::from_openssh(k.trim())
                .map_err(|e| format!("Failed to parse host_key: {e}"))?,
        ),
        None => None,
    };
    Ok(Client { host_key })
}

async fn authenticate(h: &mut Handle<Client>, t: &Target) -> Result<(), String> {
    let mut tried = Vec::new();
    if let Some(pem) = &t.private_key {
        let key = decode_secret_key(pem, None)
            .map_err(|e| format!("Failed to parse ssh private key: {e}"))?;
        let hash = h
            .best_supported_rsa_hash()
            .await
            .map_err(|e| e.to_string())?
            .flatten();
        let with = PrivateKeyWithHashAlg::new(Arc::new(key), hash);
        let r = h
            .authenticate_publickey(t.user.clone(), with)
            .await
            .map_err(|e| e.to_string())?;
        if r.success() {
            return Ok(());
        }
        tried.push("publickey");
    }
    if let Some(pw) = &t.password {
        let r = h
            .authenticate_password(t.user.clone(), pw.clone())
            .await
            .map_err(|e| e.to_string())?;
        if r.success() {
            return Ok(());
        }
        tried.push("password");
    }
    if tried.is_empty() {
        tried.push("none");
    }
    Err(format!(
        "ssh: handshake failed: ssh: unable to authenticate, attempted methods [{}], no supported methods remain",
        tried.join(" ")
    ))
}

/// Connects to `t` (through `bastion` when set) and logs in, retrying
/// until `timeout` as Terraform does; `attempt` runs before each try (the
/// caller announces it).
pub async fn connect(
    t: &Target,
    bastion: Option<&Target>,
    timeout: Duration,
    attempt: &(dyn Fn() + Sync),
) -> Result<Session, String> {
    let deadline = Instant::now() + timeout;
    loop {
        attempt();
        let left = deadline.saturating_duration_since(Instant::now());
        let tried = tokio::time::timeout(left, connect_once(t, bastion)).await;
        let tried = tried.unwrap_or_else(|_| Err(("i/o timeout".to_string(), true)));
        match tried {
            Ok(s) => return Ok(s),
            // Authentication and key problems do not go away by waiting.
            Err((e, false)) => return Err(e),
            Err((e, true)) => {
                if Instant::now() + Duration::from_secs(1) >= deadline {
                    return Err(format!("timeout - last error: {e}"));
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    }
}

/// A TCP connection, its failure worded as Go's dialer words it.
async fn dial(host: &str, port: u16) -> Result<tokio::net::TcpStream, String> {
    tokio::net::TcpStream::connect((host, port))
        .await
        .map_err(|e| {
            let why = match e.kind() {
                std::io::ErrorKind::ConnectionRefused => "connect: connection refused".to_string(),
                _ => e.to_string(),
            };
            format!("dial tcp {host}:{port}: {why}")
        })
}

/// One attempt; the error says whether another may succeed.
async fn connect_once(t: &Target, bastion: Option<&Target>) -> Result<Session, (String, bool)> {
    let retry = |e: String| (e, true);
    let fatal = |e: String| (e, false);
    let handshake = |e: russh::Error| (format!("ssh: handshake failed: {e}"), true);
    match bastion {
        None => {
            let tcp = dial(&t.host, t.port).await.map_err(retry)?;
            let mut h = client::connect_stream(config(), tcp, client(t).map_err(fatal)?)
                .await
                .map_err(handshake)?;
            authenticate(&mut h, t).await.map_err(fatal)?;
            Ok(Session {
                handle: h,
                _via: None,
            })
        }
        Some(b) => {
            let tcp = dial(&b.host, b.port).await.map_err(retry)?;
            let mut bh = client::connect_stream(config(), tcp, client(b).map_err(fatal)?)
                .await
                .map_err(handshake)?;
            authenticate(&mut bh, b).await.map_err(fatal)?;
            let ch = bh
                .channel_open_direct_tcpip(t.host.clone(), t.port.into(), "127.0.0.1", 0)
                .await
                .map_err(|e| retry(format!("Error connecting to bastion: {e}")))?;
            let stream = ch.into_stream();
            let mut h = client::connect_stream(config(), stream, client(t).map_err(fatal)?)
                .await
                .map_err(handshake)?;
            authenticate(&mut h, t).await.map_err(fatal)?;
            Ok(Session {
                handle: h,
                _via: Some(bh),
            })
        }
    }
}

/// Single-quotes `s` for the remote shell.
pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

impl Session {
    /// Runs `command`, passing each line of its output (standard output
    /// and error) to `say`; its exit status.
    pub async fn run(&self, command: &str, say: &(dyn Fn(&str) + Sync)) -> Result<u32, String> {
        let mut ch = self
            .handle
            .channel_open_session()
            .await
            .map_err(|e| e.to_string())?;
        ch.exec(true, command).await.map_err(|e| e.to_string())?;
        let mut pending: Vec<u8> = Vec::new();
        let mut status = None;
        let flush = |pending: &mut Vec<u8>, all: bool| {
            while let Some(i) = pending.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = pending.drain(..=i).collect();
                let text = String::from_utf8_lossy(&line);
                say(text.trim_end_matches(['\n', '\r']));
            }
            if all && !pending.is_empty() {
                say(&String::from_utf8_lossy(pending));
                pending.clear();
            }
        };
        while let Some(msg) = ch.wait().await {
            match msg {
                ChannelMsg::Data { data } | ChannelMsg::ExtendedData { data, .. } => {
                    pending.extend_from_slice(&data);
                    flush(&mut pending, false);
                }
                ChannelMsg::ExitStatus { exit_status } => status = Some(exit_status),
                ChannelMsg::ExitSignal { signal_name, .. } => {
                    flush(&mut pending, true);
                    return Err(format!("Process exited with signal {signal_name:?}"));
                }
                _ => {}
            }
        }
        flush(&mut pending, true);
        status.ok_or_else(|| "Process exited without an exit status".to_string())
    }

    /// Uploads `data` as the file `path` (mode 0644) through `scp -t`.
    pub async fn upload(&self, path: &str, data: &[u8]) -> Result<(), String> {
        let (dir, name) = match path.rsplit_once('/') {
            Some(("", n)) => ("/", n),
            Some((d, n)) => (d, n),
            None => (".", path),
        };
        let mut s = self.scp(&format!("scp -t {}", shell_quote(dir))).await?;
        s.file(name, 0o644, data).await?;
        s.finish().await
    }

    /// Uploads the local directory `src` into the remote `dst`: its
    /// contents when `src` ends with `/`, else the directory itself (the
    /// `file` provisioner's rule).
    pub async fn upload_dir(
        &self,
        src: &Path,
        contents_only: bool,
        dst: &str,
    ) -> Result<(), String> {
        let mut s = self.scp(&format!("scp -rt {}", shell_quote(dst))).await?;
        if contents_only {
            s.dir_entries(src).await?;
        } else {
            let name = src
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| ".".into());
            s.dir(&name, src).await?;
        }
        s.finish().await
    }

    async fn scp(&self, command: &str) -> Result<Scp, String> {
        let ch = self
            .handle
            .channel_open_session()
            .await
            .map_err(|e| e.to_string())?;
        ch.exec(true, command).await.map_err(|e| e.to_string())?;
        let mut s = Scp {
            stream: ch.into_stream(),
        };
        s.ack().await?;
        Ok(s)
    }

    pub async fn close(self) {
        let _ = self
            .handle
            .disconnect(russh::Disconnect::ByApplication, "", "en")
            .await;
    }
}

/// The sending side of the scp protocol.
struct Scp {
    stream: russh::ChannelStream<client::Msg>,
}

impl Scp {
    async fn ack(&mut self) -> Result<(), String> {
        let mut b = [0u8; 1];
        self.stream
            .read_exact(&mut b)
            .await
            .map_err(|e| format!("scp: {e}"))?;
        if b[0] == 0 {
            return Ok(());
        }
        let mut msg = Vec::new();
        loop {
            let mut c = [0u8; 1];
            match self.stream.read(&mut c).await {
                Ok(1) if c[0] != b'\n' => msg.push(c[0]),
                _ => break,
            }
        }
        Err(format!("scp: {}", String::from_utf8_lossy(&msg).trim()))
    }

    async fn send(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.stream
            .write_all(bytes)
            .await
            .map_err(|e| format!("scp: {e}"))
    }

    async fn file(&mut self, name: &str, mode: u32, data: &[u8]) -> Result<(), String> {
        self.send(format!("C{mode:04o} {} {name}\n", data.len()).as_bytes())
            .await?;
        self.ack().await?;
        self.send(data).await?;
        self.send(&[0]).await?;
        self.ack().await
    }

    async fn dir(&mut self, name: &str, src: &Path) -> Result<(), String> {
        self.send(format!("D0755 0 {name}\n").as_bytes()).await?;
        self.ack().await?;
        Box::pin(self.dir_entries(src)).await?;
        self.send(b"E\n").await?;
        self.ack().await
    }

    async fn dir_entries(&mut self, src: &Path) -> Result<(), String> {
        let mut entries: Vec<_> = std::fs::read_dir(src)
            .map_err(|e| format!("{}: {e}", src.display()))?
            .filter_map(Result::ok)
            .collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if p.is_dir() {
                Box::pin(self.dir(&name, &p)).await?;
            } else {
                let data = std::fs::read(&p).map_err(|e| format!("{}: {e}", p.display()))?;
                self.file(&name, 0o644, &data).await?;
            }
        }
        Ok(())
    }

    async fn finish(mut self) -> Result<(), String> {
        let _ = self.stream.shutdown().await;
        let mut rest = Vec::new();
        let _ = self.stream.read_to_end(&mut rest).await;
        Ok(())
    }
}
