//! Structured logging to stderr in the line format Terraform's plugin
//! client understands (one JSON object per line with `@level`, `@message`,
//! `@module`, `@timestamp` and extra fields), so provider logs appear in
//! Terraform's own log at the right level with `TF_LOG`.
//!
//! Values logged through [`value_field`] render with terrane's renderer, so
//! anything marked sensitive reads `(sensitive value)`.

use std::io::Write;
use terrane_value::Value;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
/// How important a log line is (`TF_LOG` filters on it).
pub enum Level {
    /// Finest detail.
    Trace,
    /// Detail for debugging.
    Debug,
    /// Normal progress.
    Info,
    /// Something unexpected but not fatal.
    Warn,
    /// A failure.
    Error,
}

impl Level {
    fn as_str(self) -> &'static str {
        match self {
            Level::Trace => "trace",
            Level::Debug => "debug",
            Level::Info => "info",
            Level::Warn => "warn",
            Level::Error => "error",
        }
    }
}

/// One log line as Terraform reads it.
pub fn line(level: Level, message: &str, fields: &[(&str, String)]) -> String {
    let mut m = serde_json::Map::new();
    m.insert("@level".into(), level.as_str().into());
    m.insert("@message".into(), message.into());
    m.insert("@module".into(), "provider.terrane_sdk".into());
    m.insert(
        "@timestamp".into(),
        humantime::format_rfc3339_micros(std::time::SystemTime::now())
            .to_string()
            .into(),
    );
    for (k, v) in fields {
        m.insert((*k).to_string(), v.clone().into());
    }
    serde_json::Value::Object(m).to_string()
}

static ENABLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Marks plugin mode (`serve()`), where stderr is the host's log. Lines
/// are written, in plugin mode and in-process alike, when the host's log
/// level (`TERRANE_LOG`, else `TF_LOG`, inherited from Terraform or
/// terrane) asks for that level — as providers built on Terraform's Go
/// libraries do — or always with `TERRANE_PROVIDER_LOG=1`. Formatting and
/// writing a line per call that nobody shows cost every RPC.
pub fn enable() {
    ENABLED.store(true, std::sync::atomic::Ordering::Relaxed);
}

fn enabled(level: Level) -> bool {
    static FORCED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *FORCED.get_or_init(|| std::env::var("TERRANE_PROVIDER_LOG").is_ok_and(|v| v == "1"))
        || host_threshold().is_some_and(|t| level >= t)
}

/// The lowest level the host's log shows: `TERRANE_LOG` or `TF_LOG` (a
/// value that is not a level means trace, as for Terraform).
fn host_threshold() -> Option<Level> {
    static T: std::sync::OnceLock<Option<Level>> = std::sync::OnceLock::new();
    *T.get_or_init(|| {
        let v = std::env::var("TERRANE_LOG")
            .or_else(|_| std::env::var("TF_LOG"))
            .ok()
            .filter(|v| !v.is_empty())?;
        Some(match v.to_ascii_lowercase().as_str() {
            "debug" => Level::Debug,
            "info" => Level::Info,
            "warn" => Level::Warn,
            "error" => Level::Error,
            _ => Level::Trace,
        })
    })
}

/// Writes a log line to stderr (when enabled).
pub fn log(level: Level, message: &str, fields: &[(&str, String)]) {
    if !enabled(level) {
        return;
    }
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{}", line(level, message, fields));
}

/// Logs at debug level (never log secrets).
pub fn debug(message: &str, fields: &[(&str, String)]) {
    log(Level::Debug, message, fields)
}

/// Logs at info level (never log secrets).
pub fn info(message: &str, fields: &[(&str, String)]) {
    log(Level::Info, message, fields)
}

/// Logs at warn level (never log secrets).
pub fn warn(message: &str, fields: &[(&str, String)]) {
    log(Level::Warn, message, fields)
}

/// A value as a log field; sensitive parts are redacted.
pub fn value_field(v: &Value) -> String {
    v.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_hclog_json_and_redact_secrets() {
        let secret = Value::object_from([
            ("user", Value::string("ada")),
            ("password", Value::string("hunter2").mark_sensitive()),
        ]);
        let l = line(
            Level::Info,
            "configured",
            &[("config", value_field(&secret))],
        );
        let j: serde_json::Value = serde_json::from_str(&l).unwrap();
        assert_eq!(j["@level"], "info");
        assert_eq!(j["@message"], "configured");
        assert!(
            !l.contains("hunter2") && l.contains("(sensitive value)"),
            "case secrets_redacted: {l}"
        );
    }
}
