//! The go-plugin handshake as Terraform speaks it: the magic cookie, the
//! protocol version negotiation, and the one line the plugin prints on
//! stdout, `CORE|APP|NETWORK|ADDR|PROTOCOL|SERVERCERT`.

use base64::Engine as _;

/// The cookie Terraform puts in its plugins' environment.
pub const MAGIC_COOKIE_KEY: &str = "TF_PLUGIN_MAGIC_COOKIE";
pub const MAGIC_COOKIE_VALUE: &str =
    "d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2";
/// go-plugin's core protocol version.
pub const CORE_PROTOCOL: u32 = 1;

/// What a person running the binary by hand sees.
pub const NOT_BY_HAND: &str = "This binary is a plugin. These are not meant to be executed directly.\nPlease execute the program that consumes these plugins, which will\nload any plugins automatically.";

/// Picks the highest version offered by the client (`PLUGIN_PROTOCOL_VERSIONS`,
/// comma-separated, any order) that we support; `None` if there is none.
/// Without an offer, the lowest supported version is used, as go-plugin does.
pub fn negotiate(offered: Option<&str>, supported: &[u32]) -> Option<u32> {
    let Some(offered) = offered.filter(|s| !s.trim().is_empty()) else {
        return supported.iter().copied().min();
    };
    let offers: Vec<u32> = offered
        .split(',')
        .filter_map(|v| v.trim().parse().ok())
        .collect();
    supported
        .iter()
        .copied()
        .filter(|v| offers.contains(v))
        .max()
}

/// The handshake line (without the newline).
pub fn line(version: u32, network: &str, addr: &str, server_cert_der: Option<&[u8]>) -> String {
    let cert = server_cert_der
        .map(|d| base64::engine::general_purpose::STANDARD_NO_PAD.encode(d))
        .unwrap_or_default();
    format!("{CORE_PROTOCOL}|{version}|{network}|{addr}|grpc|{cert}")
}

/// A parsed handshake line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handshake {
    pub version: u32,
    pub network: String,
    pub addr: String,
    pub server_cert_der: Option<Vec<u8>>,
}

/// Parses a plugin's handshake line, checking it as the client must.
pub fn parse(text: &str, offered: &[u32]) -> Result<Handshake, String> {
    let parts: Vec<&str> = text.trim().split('|').collect();
    if parts.len() < 4 {
        return Err(format!(
            "unrecognized handshake line {text:?}: expected at least 4 |-separated fields"
        ));
    }
    if parts[0] != CORE_PROTOCOL.to_string() {
        return Err(format!(
            "incompatible core plugin protocol {:?} (want {CORE_PROTOCOL})",
            parts[0]
        ));
    }
    let version: u32 = parts[1]
        .parse()
        .map_err(|_| format!("invalid plugin protocol version {:?}", parts[1]))?;
    if !offered.contains(&version) {
        // Terraform's (go-plugin's) words first, then ours.
        return Err(format!(
            "Incompatible API version with plugin. Plugin version: {version}, Client versions: {offered:?} (the plugin chose protocol version {version}, which was not offered)"
        ));
    }
    if parts.get(4).is_some_and(|p| *p != "grpc") {
        return Err(format!(
            "unsupported plugin protocol {:?}; only grpc is supported",
            parts[4]
        ));
    }
    let server_cert_der = match parts.get(5) {
        Some(c) if c.len() > 50 => Some(
            base64::engine::general_purpose::STANDARD_NO_PAD
                .decode(c.trim_end_matches('='))
                .map_err(|e| format!("invalid server certificate in handshake: {e}"))?,
        ),
        _ => None,
    };
    Ok(Handshake {
        version,
        network: parts[2].to_string(),
        addr: parts[3].to_string(),
        server_cert_der,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(offered: Option<&str>, want: Option<u32>) {
        assert_eq!(negotiate(offered, &[6]), want, "offered {offered:?}");
    }

    #[test]
    fn version_negotiation() {
        check(Some("5,6"), Some(6));
        check(Some("6,5"), Some(6));
        check(Some(" 6 "), Some(6));
        check(Some("5"), None);
        check(Some("7,8"), None);
        check(None, Some(6));
        assert_eq!(negotiate(Some("5,6"), &[5, 6]), Some(6));
    }

    #[test]
    fn line_round_trip_and_errors() {
        let cert = vec![7u8; 120];
        let l = line(6, "unix", "/tmp/p/sock", Some(&cert));
        assert!(l.starts_with("1|6|unix|/tmp/p/sock|grpc|"));
        assert!(!l.ends_with('='), "RawStdEncoding has no padding");
        let h = parse(&format!("{l}\n"), &[6]).unwrap();
        assert_eq!(h.server_cert_der, Some(cert));
        assert_eq!(h.addr, "/tmp/p/sock");
        for (bad, want) in [
            ("1|6|unix", "at least 4"),
            ("2|6|unix|x|grpc", "core plugin protocol"),
            ("1|5|unix|x|grpc", "not offered"),
            ("1|6|unix|x|netrpc", "only grpc"),
        ] {
            assert!(parse(bad, &[6]).unwrap_err().contains(want), "{bad}");
        }
        assert_eq!(
            parse("1|6|unix|x|grpc|short", &[6])
                .unwrap()
                .server_cert_der,
            None,
            "short cert field ignored"
        );
    }
}
