//! TLS for terrane's PostgreSQL connections — the PostgreSQL state store
//! (`crates/state`) and the postgresql provider — with libpq's meaning of
//! `sslmode` and `sslrootcert`, over rustls (aws-lc-rs).
//!
//! | sslmode | what a connection does |
//! |---|---|
//! | `disable` | plaintext only |
//! | `allow` | plaintext; TLS when the server refuses the plaintext session |
//! | `prefer` (default) | TLS when the server offers it; plaintext when it does not, when the handshake fails or when the server refuses the TLS session |
//! | `require` | TLS or nothing; the certificate is unchecked unless a root certificate is there (then as `verify-ca`) |
//! | `verify-ca` | TLS; the certificate must chain to `sslrootcert`; the host name is not checked |
//! | `verify-full` | TLS; chain and host name (DNS name or IP address in the certificate) checked |
//!
//! `sslrootcert` is a PEM file of CA certificates, or `system` for the
//! machine's trusted roots (then only `verify-full` is accepted, as in
//! libpq). Without it, `~/.postgresql/root.crt` is used when it exists;
//! the `verify-*` modes refuse to connect without a root certificate. An
//! `sslrootcert` that is named but cannot be read is an error in every
//! mode that may use TLS (libpq would quietly skip the check).
//!
//! Unix-domain sockets never use TLS ([`TlsOptions::for_config`]), as in
//! libpq.
//!
//! Over TLS the SCRAM exchange is bound to the server's certificate
//! (`tls-server-end-point` channel binding), so `channel_binding=require`
//! works.
//!
//! tokio-postgres knows neither `allow`, `verify-ca`, `verify-full` nor
//! `sslrootcert`: [`parse`] takes them out of the connection string, and
//! [`Attempt`]s carry what tokio-postgres is told for each try.

mod tls;

pub use tls::{HandshakeError, HandshakeFailure, MakeRustls, RustlsConnect, RustlsStream};

use std::path::{Path, PathBuf};
use std::sync::Arc;

/// libpq's `sslmode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SslMode {
    Disable,
    Allow,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    /// Every spelling, in libpq's order.
    pub const NAMES: [&'static str; 6] = [
        "disable",
        "allow",
        "prefer",
        "require",
        "verify-ca",
        "verify-full",
    ];

    pub fn parse(text: &str) -> Option<SslMode> {
        Some(match text {
            "disable" => SslMode::Disable,
            "allow" => SslMode::Allow,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Allow => "allow",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }
}

/// The TLS settings of one connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsOptions {
    pub mode: SslMode,
    /// `sslrootcert`: a PEM file, or `system`.
    pub root_cert: Option<String>,
}

impl Default for TlsOptions {
    fn default() -> TlsOptions {
        TlsOptions {
            mode: SslMode::Prefer,
            root_cert: None,
        }
    }
}

/// A TLS setting that cannot be used. The message names the setting and
/// never shows the connection string (which may hold a password).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error(pub String);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

/// Splits `sslmode` and `sslrootcert` off a connection string (a
/// `postgres://` / `postgresql://` URL or libpq's `key=value` form) and
/// parses the rest with tokio-postgres.
pub fn parse(conn: &str) -> Result<(tokio_postgres::Config, TlsOptions), Error> {
    let (rest, tls) = split(conn)?;
    let config = rest
        .parse::<tokio_postgres::Config>()
        .map_err(|e| Error(format!("invalid PostgreSQL connection string: {e}")))?;
    Ok((config, tls))
}

/// The connection string without the TLS settings, and those settings.
pub fn split(conn: &str) -> Result<(String, TlsOptions), Error> {
    let trimmed = conn.trim_start();
    let pairs = if trimmed.starts_with("postgres://") || trimmed.starts_with("postgresql://") {
        split_url(conn)?
    } else {
        split_key_values(conn)?
    };
    let (rest, taken) = pairs;
    let mut tls = TlsOptions::default();
    for (key, value) in taken {
        match key.as_str() {
            "sslmode" => {
                tls.mode = SslMode::parse(&value).ok_or_else(|| {
                    Error(format!(
                        "invalid sslmode {value:?}: expected one of {}",
                        SslMode::NAMES.join(", ")
                    ))
                })?
            }
            _ => tls.root_cert = Some(value).filter(|v| !v.is_empty()),
        }
    }
    Ok((rest, tls))
}

fn ours(key: &str) -> bool {
    key == "sslmode" || key == "sslrootcert"
}

type Split = (String, Vec<(String, String)>);

fn split_url(url: &str) -> Result<Split, Error> {
    let after_auth = url.rfind('@').map(|i| i + 1).unwrap_or(0);
    let Some(q) = url[after_auth..].find('?').map(|i| i + after_auth) else {
        return Ok((url.to_string(), Vec::new()));
    };
    let (base, query) = (&url[..q], &url[q + 1..]);
    let mut kept = Vec::new();
    let mut taken = Vec::new();
    for part in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = part.split_once('=').unwrap_or((part, ""));
        let key = percent_decode(k)?;
        if ours(&key) {
            taken.push((key, percent_decode(v)?));
        } else {
            kept.push(part);
        }
    }
    let rest = if kept.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    Ok((rest, taken))
}

fn percent_decode(text: &str) -> Result<String, Error> {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = b
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok());
            let Some(byte) = hex else {
                return Err(Error(
                    "invalid percent-encoding in a connection URL parameter".into(),
                ));
            };
            out.push(byte);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out)
        .map_err(|_| Error("a connection URL parameter is not UTF-8 once percent-decoded".into()))
}

/// libpq's `key = value` list: values are bare words or single-quoted,
/// with backslash escapes in both.
fn split_key_values(conn: &str) -> Result<Split, Error> {
    let mut chars = conn.chars().peekable();
    let mut kept = Vec::new();
    let mut taken = Vec::new();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.peek().is_none() {
            break;
        }
        let mut key = String::new();
        while let Some(c) = chars.next_if(|c| *c != '=' && !c.is_whitespace()) {
            key.push(c);
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.next() != Some('=') {
            return Err(Error(format!(
                "invalid PostgreSQL connection string: {key:?} is not followed by \"=\""
            )));
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let mut value = String::new();
        if chars.next_if_eq(&'\'').is_some() {
            loop {
                match chars.next() {
                    Some('\'') => break,
                    Some('\\') => value.push(chars.next().ok_or_else(|| {
                        Error(
                            "invalid PostgreSQL connection string: unterminated quoted value"
                                .into(),
                        )
                    })?),
                    Some(c) => value.push(c),
                    None => {
                        return Err(Error(
                            "invalid PostgreSQL connection string: unterminated quoted value"
                                .into(),
                        ))
                    }
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                if c == '\\' {
                    if let Some(n) = chars.next() {
                        value.push(n);
                    }
                } else {
                    value.push(c);
                }
            }
        }
        if ours(&key) {
            taken.push((key, value));
        } else {
            kept.push(format!(
                "{key}='{}'",
                value.replace('\\', "\\\\").replace('\'', "\\'")
            ));
        }
    }
    Ok((kept.join(" "), taken))
}

/// What a failed attempt lets happen next (libpq's fallbacks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fallback {
    Never,
    /// `prefer`: plaintext again when the TLS handshake failed, or the
    /// server refused the session it made over TLS.
    OnTlsFailure,
    /// `allow`: TLS when the server refused the plaintext session.
    OnServerRefusal,
}

/// One try at connecting: what tokio-postgres is told (`ssl_mode`) and the
/// TLS connector to give it.
#[derive(Clone)]
pub struct Attempt {
    pub ssl_mode: tokio_postgres::config::SslMode,
    pub tls: MakeRustls,
    fallback: Fallback,
}

impl Attempt {
    /// Whether the next attempt may run after this one failed with `e`.
    pub fn may_fall_back(&self, e: &tokio_postgres::Error) -> bool {
        match self.fallback {
            Fallback::Never => false,
            Fallback::OnTlsFailure => {
                self.tls.handshake_failed()
                    || (self.tls.handshake_succeeded() && e.as_db_error().is_some())
            }
            Fallback::OnServerRefusal => e.as_db_error().is_some(),
        }
    }
}

impl TlsOptions {
    /// As in libpq, TLS is never used over Unix-domain sockets: when every
    /// host of `config` is a socket directory (and no `hostaddr` is given),
    /// the connection is plaintext whatever sslmode says.
    pub fn for_config(mut self, config: &tokio_postgres::Config) -> TlsOptions {
        let hosts = config.get_hosts();
        let sockets_only = !hosts.is_empty()
            && config.get_hostaddrs().is_empty()
            && hosts
                .iter()
                .all(|h| !matches!(h, tokio_postgres::config::Host::Tcp(_)));
        if sockets_only {
            self.mode = SslMode::Disable;
        }
        self
    }

    /// The attempts a connection makes, in order. Reads the root
    /// certificates (so a missing or broken `sslrootcert` is reported
    /// here, before any network traffic).
    pub fn attempts(&self) -> Result<Vec<Attempt>, Error> {
        use tokio_postgres::config::SslMode as Wire;
        let plain = |fallback| Attempt {
            ssl_mode: Wire::Disable,
            tls: MakeRustls::plaintext(),
            fallback,
        };
        if self.mode == SslMode::Disable {
            return Ok(vec![plain(Fallback::Never)]);
        }
        let tls = MakeRustls::new(tls::client_config(self.check()?)?);
        let with_tls = |ssl_mode, fallback| Attempt {
            ssl_mode,
            tls: tls.clone(),
            fallback,
        };
        Ok(match self.mode {
            SslMode::Disable => unreachable!("handled above"),
            SslMode::Allow => vec![
                plain(Fallback::OnServerRefusal),
                with_tls(Wire::Require, Fallback::Never),
            ],
            SslMode::Prefer => vec![
                with_tls(Wire::Prefer, Fallback::OnTlsFailure),
                plain(Fallback::Never),
            ],
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => {
                vec![with_tls(Wire::Require, Fallback::Never)]
            }
        })
    }

    /// The rustls configuration for this mode and root certificate.
    pub fn client_config(&self) -> Result<Arc<rustls::ClientConfig>, Error> {
        Ok(tls::client_config(self.check()?)?.0)
    }

    /// What is checked of the server's certificate.
    fn check(&self) -> Result<tls::Check, Error> {
        let roots = self.roots()?;
        Ok(match (self.mode, roots) {
            (SslMode::VerifyFull, Some(r)) => tls::Check::Full(r),
            (SslMode::VerifyCa, Some(r)) => tls::Check::Chain(r),
            (SslMode::VerifyFull | SslMode::VerifyCa, None) => {
                unreachable!("roots() refuses verify modes without a root certificate")
            }
            // libpq: with a root certificate at hand, require (and prefer,
            // allow) check the chain as verify-ca does.
            (_, Some(r)) => tls::Check::Chain(r),
            (_, None) => tls::Check::Nothing,
        })
    }

    /// The trust anchors, if any apply.
    fn roots(&self) -> Result<Option<tls::Roots>, Error> {
        self.roots_with(default_root_cert())
    }

    /// [`TlsOptions::roots`] with `default` for `~/.postgresql/root.crt`.
    fn roots_with(&self, default: Option<PathBuf>) -> Result<Option<tls::Roots>, Error> {
        let verify = matches!(self.mode, SslMode::VerifyCa | SslMode::VerifyFull);
        match self.root_cert.as_deref() {
            Some("system") => {
                if self.mode != SslMode::VerifyFull {
                    return Err(Error(format!("sslmode {:?} may not be used with sslrootcert=system (use verify-full)", self.mode.as_str())));
                }
                let path = system_bundle().ok_or_else(|| Error("sslrootcert=system: no trusted root certificate bundle found (set SSL_CERT_FILE)".into()))?;
                tls::Roots::load(&path, "sslrootcert=system").map(Some)
            }
            Some(path) => tls::Roots::load(Path::new(path), "sslrootcert").map(Some),
            None => match default {
                Some(path) if path.is_file() => tls::Roots::load(&path, "the default root certificate").map(Some),
                _ if verify => Err(Error(format!(
                    "sslmode {:?} needs the CA certificate that signed the server's certificate: set sslrootcert to its PEM file (or to \"system\" for the machine's trusted roots); ~/.postgresql/root.crt does not exist",
                    self.mode.as_str()
                ))),
                _ => Ok(None),
            },
        }
    }
}

fn default_root_cert() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| PathBuf::from(h).join(".postgresql/root.crt"))
}

fn system_bundle() -> Option<PathBuf> {
    let from_env = std::env::var_os("SSL_CERT_FILE").map(PathBuf::from);
    let known = [
        "/etc/ssl/certs/ca-certificates.crt",
        "/etc/pki/tls/certs/ca-bundle.crt",
        "/etc/ssl/cert.pem",
    ]
    .map(PathBuf::from);
    from_env.into_iter().chain(known).find(|p| p.is_file())
}

/// Runs the attempts in order until one connects or one's failure allows
/// no fallback; the error is the last attempt's.
pub fn connect_blocking<C>(
    attempts: Vec<Attempt>,
    mut connect: impl FnMut(
        tokio_postgres::config::SslMode,
        MakeRustls,
    ) -> Result<C, tokio_postgres::Error>,
) -> Result<C, tokio_postgres::Error> {
    let mut last = None;
    for a in attempts {
        match connect(a.ssl_mode, a.tls.clone()) {
            Ok(c) => return Ok(c),
            Err(e) => {
                let go_on = a.may_fall_back(&e);
                last = Some(e);
                if !go_on {
                    break;
                }
            }
        }
    }
    Err(last.expect("at least one attempt"))
}

/// [`connect_blocking`] for async connects.
pub async fn connect_async<C, F, Fut>(
    attempts: Vec<Attempt>,
    mut connect: F,
) -> Result<C, tokio_postgres::Error>
where
    F: FnMut(tokio_postgres::config::SslMode, MakeRustls) -> Fut,
    Fut: std::future::Future<Output = Result<C, tokio_postgres::Error>>,
{
    let mut last = None;
    for a in attempts {
        match connect(a.ssl_mode, a.tls.clone()).await {
            Ok(c) => return Ok(c),
            Err(e) => {
                let go_on = a.may_fall_back(&e);
                last = Some(e);
                if !go_on {
                    break;
                }
            }
        }
    }
    Err(last.expect("at least one attempt"))
}

/// The handshake failure behind a connection error, if TLS was why it
/// failed (for a diagnostic on the right setting).
pub fn handshake_error(e: &tokio_postgres::Error) -> Option<&HandshakeError> {
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if let Some(h) = s.downcast_ref::<HandshakeError>() {
            return Some(h);
        }
        source = s.source();
    }
    None
}

#[cfg(test)]
mod tests;
