//! Go's duration syntax ("5m", "30s", "1m30s", "500ms"), which Terraform
//! uses for timeouts everywhere: provisioner connections, `-lock-timeout`,
//! backend settings and the Pulumi host's `timeouts` block. A leaf module,
//! so that every layer may use it.

/// A Go duration ("5m", "30s", "1m30s", "500ms").
pub fn go_duration(s: &str) -> Option<std::time::Duration> {
    let mut total = 0f64;
    let mut rest = s.trim();
    if rest == "0" {
        return Some(std::time::Duration::ZERO);
    }
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let n = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .filter(|n| *n > 0)?;
        let num: f64 = rest[..n].parse().ok()?;
        rest = &rest[n..];
        let u = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..u] {
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return None,
        };
        total += num * scale;
        rest = &rest[u..];
    }
    Some(std::time::Duration::from_secs_f64(total))
}

#[cfg(test)]
mod tests {
    use super::go_duration;

    #[test]
    fn item1_connection_timeout_read_as_go_durations() {
        let cases = [
            ("minutes", "5m", Some(300.0)),
            ("seconds", "30s", Some(30.0)),
            ("compound", "1m30s", Some(90.0)),
            ("millis", "500ms", Some(0.5)),
            ("zero", "0", Some(0.0)),
            ("no_unit", "5", None),
            ("bad_unit", "5y", None),
            ("empty", "", None),
        ];
        for (case, s, want) in cases {
            let got = go_duration(s).map(|d| d.as_secs_f64());
            assert_eq!(got, want, "case {case}");
        }
    }
}
