//! Normalization: PostgreSQL answers in its own spelling of the value a
//! user wrote (`UTF8` for `utf8`, `TEMPORARY` for `temp`, a timestamp in
//! UTC for `2030-01-01`, privileges in its own order). ReadResource keeps
//! the prior value whenever the server's value means the same; these are
//! the pure functions that decide "means the same". Anything else is drift
//! and the server's value wins.

use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};
use std::collections::BTreeSet;

/// The prior value when the server's means the same, else the server's.
pub fn keep<T: Clone>(prior: Option<&T>, server: T, same: impl Fn(&T, &T) -> bool) -> T {
    match prior {
        Some(p) if same(p, &server) => p.clone(),
        _ => server,
    }
}

fn encoding_key(e: &str) -> String {
    let k: String = e
        .chars()
        .filter(|c| *c != '-' && *c != '_')
        .collect::<String>()
        .to_ascii_uppercase();
    match k.as_str() {
        "UNICODE" => "UTF8".into(),
        "ISO88591" => "LATIN1".into(),
        "ISO88592" => "LATIN2".into(),
        "ISO885915" => "LATIN9".into(),
        "ASCII" => "SQLASCII".into(),
        _ => k,
    }
}

/// Encoding names: case, dashes and the common aliases do not matter.
pub fn same_encoding(a: &str, b: &str) -> bool {
    encoding_key(a) == encoding_key(b)
}

fn locale_key(l: &str) -> String {
    match l.split_once('.') {
        Some((lang, rest)) => {
            let (codeset, modifier) = rest
                .split_once('@')
                .map(|(c, m)| (c, Some(m)))
                .unwrap_or((rest, None));
            let codeset: String = codeset
                .chars()
                .filter(|c| *c != '-' && *c != '_')
                .collect::<String>()
                .to_ascii_lowercase();
            match modifier {
                Some(m) => format!("{lang}.{codeset}@{m}"),
                None => format!("{lang}.{codeset}"),
            }
        }
        None => l.to_string(),
    }
}

/// Locale names: the codeset part is compared as the C library does
/// (`en_US.UTF-8` is `en_US.utf8`); the language part exactly.
pub fn same_locale(a: &str, b: &str) -> bool {
    locale_key(a) == locale_key(b)
}

/// A point in time as PostgreSQL's `timestamptz` understands it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Instant {
    NegInfinity,
    At(DateTime<Utc>),
    Infinity,
}

/// Parses the spellings of a timestamp users write for `valid_until`
/// (RFC 3339, `YYYY-MM-DD[ HH:MM[:SS[.f]]][+ZZ[:ZZ]]`, `infinity`); a time
/// without zone is UTC, which is the zone the provider's sessions use.
pub fn parse_instant(s: &str) -> Option<Instant> {
    let t = s.trim();
    match t.to_ascii_lowercase().as_str() {
        "infinity" | "+infinity" => return Some(Instant::Infinity),
        "-infinity" => return Some(Instant::NegInfinity),
        _ => {}
    }
    let mut x = t.replacen(' ', "T", 1);
    if x.ends_with(" UTC") || x.ends_with("UTC") {
        x = x.trim_end_matches("UTC").trim_end().to_string() + "Z";
    }
    // A "+HH" zone (PostgreSQL's own output) becomes "+HH:00".
    if let Some(pos) = x.rfind(['+', '-']).filter(|p| *p > 10) {
        let zone = &x[pos + 1..];
        if zone.len() == 2 && zone.chars().all(|c| c.is_ascii_digit()) {
            x.push_str(":00");
        } else if zone.len() == 4 && zone.chars().all(|c| c.is_ascii_digit()) {
            x.insert(pos + 3, ':');
        }
    }
    if let Ok(d) = DateTime::parse_from_rfc3339(&x) {
        return Some(Instant::At(d.with_timezone(&Utc)));
    }
    for f in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%dT%H:%M"] {
        if let Ok(n) = NaiveDateTime::parse_from_str(&x, f) {
            return Some(Instant::At(n.and_utc()));
        }
    }
    NaiveDate::parse_from_str(t, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|n| Instant::At(n.and_utc()))
}

/// Two `valid_until` spellings name the same instant.
pub fn same_instant(a: &str, b: &str) -> bool {
    match (parse_instant(a), parse_instant(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// Every privilege keyword the provider passes to GRANT (validated before
/// any SQL is built; nothing else is ever pasted into a statement).
pub const PRIVILEGES: [&str; 14] = [
    "ALL",
    "SELECT",
    "INSERT",
    "UPDATE",
    "DELETE",
    "TRUNCATE",
    "REFERENCES",
    "TRIGGER",
    "CREATE",
    "CONNECT",
    "TEMPORARY",
    "EXECUTE",
    "USAGE",
    "MAINTAIN",
];

/// The canonical spelling of a privilege: upper case, `TEMP` is
/// `TEMPORARY`, `ALL PRIVILEGES` is `ALL`; `None` for an unknown name.
pub fn canonical_privilege(p: &str) -> Option<&'static str> {
    let up = p.trim().to_ascii_uppercase();
    let up = match up.as_str() {
        "TEMP" => "TEMPORARY",
        "ALL PRIVILEGES" => "ALL",
        other => other,
    };
    PRIVILEGES.iter().copied().find(|k| *k == up)
}

/// What `ALL` grants on an object type (PostgreSQL 15; a newer server may
/// grant more, which still counts as all).
pub fn all_privileges(object_type: &str) -> &'static [&'static str] {
    match object_type {
        "database" => &["CREATE", "CONNECT", "TEMPORARY"],
        "schema" => &["USAGE", "CREATE"],
        "table" => &[
            "SELECT",
            "INSERT",
            "UPDATE",
            "DELETE",
            "TRUNCATE",
            "REFERENCES",
            "TRIGGER",
        ],
        "sequence" => &["USAGE", "SELECT", "UPDATE"],
        "function" => &["EXECUTE"],
        _ => &[],
    }
}

/// Whether the privileges a user wrote mean the set the server holds.
pub fn same_privileges(
    written: &BTreeSet<String>,
    server: &BTreeSet<String>,
    object_type: &str,
) -> bool {
    let mut want = BTreeSet::new();
    for p in written {
        match canonical_privilege(p) {
            Some("ALL") => {
                let all = all_privileges(object_type);
                if !all.iter().all(|a| server.contains(*a)) {
                    return false;
                }
                want.extend(server.iter().cloned());
            }
            Some(c) => {
                want.insert(c.to_string());
            }
            None => return false,
        }
    }
    &want == server
}

/// The entries of a `search_path` setting as PostgreSQL stores it
/// (`"$user", public`): split at commas outside quotes, quotes removed.
pub fn parse_search_path(setting: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = setting.chars().peekable();
    let mut any = false;
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                cur.push('"');
            }
            '"' => {
                quoted = !quoted;
                any = true;
            }
            ',' if !quoted => {
                out.push(std::mem::take(&mut cur).trim().to_string());
                any = false;
            }
            c if c.is_whitespace() && !quoted => {}
            c => {
                cur.push(c);
                any = true;
            }
        }
    }
    if any || !cur.is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(case: &str, got: bool, want: bool) {
        assert_eq!(got, want, "case {case}");
    }

    fn set(xs: &[&str]) -> BTreeSet<String> {
        xs.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn encodings() {
        check("case_only", same_encoding("utf8", "UTF8"), true);
        check("dash", same_encoding("UTF-8", "UTF8"), true);
        check("alias_unicode", same_encoding("unicode", "UTF8"), true);
        check("alias_latin1", same_encoding("ISO-8859-1", "LATIN1"), true);
        check("different", same_encoding("LATIN1", "UTF8"), false);
    }

    #[test]
    fn locales() {
        check(
            "codeset_spelling",
            same_locale("en_US.UTF-8", "en_US.utf8"),
            true,
        );
        check("c_utf8", same_locale("C.utf8", "C.UTF-8"), true);
        check("plain_c", same_locale("C", "C"), true);
        check(
            "language_differs",
            same_locale("en_US.UTF-8", "de_DE.UTF-8"),
            false,
        );
        check(
            "language_case_matters",
            same_locale("en_us.UTF-8", "en_US.UTF-8"),
            false,
        );
        check(
            "modifier_kept",
            same_locale("de_DE.UTF-8@euro", "de_DE.utf8@euro"),
            true,
        );
    }

    #[test]
    fn instants() {
        check(
            "date_vs_server_utc",
            same_instant("2031-01-01", "2031-01-01T00:00:00Z"),
            true,
        );
        check(
            "pg_output_short_zone",
            same_instant("2031-01-01 02:00:00+02", "2031-01-01T00:00:00Z"),
            true,
        );
        check(
            "rfc3339_offset",
            same_instant("2031-01-01T05:30:00+05:30", "2031-01-01T00:00:00Z"),
            true,
        );
        check(
            "space_no_zone",
            same_instant("2031-01-01 00:00:00", "2031-01-01T00:00:00Z"),
            true,
        );
        check(
            "fraction",
            same_instant("2031-01-01 00:00:00.000", "2031-01-01T00:00:00Z"),
            true,
        );
        check("infinity_case", same_instant("Infinity", "infinity"), true);
        check(
            "one_second_apart",
            same_instant("2031-01-01 00:00:01", "2031-01-01T00:00:00Z"),
            false,
        );
        check(
            "infinity_vs_date",
            same_instant("infinity", "2031-01-01T00:00:00Z"),
            false,
        );
        check(
            "unparsable_compared_as_text",
            same_instant("soon", "soon"),
            true,
        );
        assert_eq!(parse_instant("-infinity"), Some(Instant::NegInfinity));
        assert_eq!(parse_instant("2031-13-01"), None, "case bad_month");
    }

    #[test]
    fn privileges() {
        let db = "database";
        check(
            "lower_case",
            same_privileges(
                &set(&["connect", "create"]),
                &set(&["CONNECT", "CREATE"]),
                db,
            ),
            true,
        );
        check(
            "temp_alias",
            same_privileges(&set(&["TEMP"]), &set(&["TEMPORARY"]), db),
            true,
        );
        check(
            "all_expands",
            same_privileges(
                &set(&["ALL"]),
                &set(&["CONNECT", "CREATE", "TEMPORARY"]),
                db,
            ),
            true,
        );
        check(
            "all_privileges_spelling",
            same_privileges(
                &set(&["all privileges"]),
                &set(&["CONNECT", "CREATE", "TEMPORARY"]),
                db,
            ),
            true,
        );
        check(
            "all_but_one_revoked",
            same_privileges(&set(&["ALL"]), &set(&["CONNECT", "TEMPORARY"]), db),
            false,
        );
        check(
            "revoked",
            same_privileges(&set(&["connect", "create"]), &set(&["CONNECT"]), db),
            false,
        );
        check(
            "extra_on_server",
            same_privileges(&set(&["USAGE"]), &set(&["USAGE", "CREATE"]), "schema"),
            false,
        );
        check(
            "unknown_name",
            same_privileges(&set(&["FLY"]), &set(&["FLY"]), "table"),
            false,
        );
        check(
            "newer_server_all",
            same_privileges(
                &set(&["ALL"]),
                &set(&[
                    "SELECT",
                    "INSERT",
                    "UPDATE",
                    "DELETE",
                    "TRUNCATE",
                    "REFERENCES",
                    "TRIGGER",
                    "MAINTAIN",
                ]),
                "table",
            ),
            true,
        );
        assert_eq!(canonical_privilege(" Select "), Some("SELECT"));
        assert_eq!(
            canonical_privilege("SELECT; DROP"),
            None,
            "case injection_refused"
        );
    }

    #[test]
    fn search_paths() {
        let sp = |s: &str| parse_search_path(s);
        assert_eq!(
            sp(r#""$user", public"#),
            vec!["$user", "public"],
            "case pg_quotes_dollar_user"
        );
        assert_eq!(
            sp(r#"app,"My Schema""#),
            vec!["app", "My Schema"],
            "case quoted_space"
        );
        assert_eq!(
            sp(r#""a""b", c"#),
            vec![r#"a"b"#, "c"],
            "case doubled_quote"
        );
        assert_eq!(sp(""), Vec::<String>::new(), "case empty");
        assert_eq!(sp(r#""""#), vec![""], "case empty_quoted");
    }

    #[test]
    fn keep_prior_or_server() {
        assert_eq!(
            keep(Some(&"utf8".to_string()), "UTF8".to_string(), |a, b| {
                same_encoding(a, b)
            }),
            "utf8",
            "case normalization_keeps_prior"
        );
        assert_eq!(
            keep(Some(&"utf8".to_string()), "LATIN1".to_string(), |a, b| {
                same_encoding(a, b)
            }),
            "LATIN1",
            "case drift_takes_server"
        );
        assert_eq!(
            keep(None, "UTF8".to_string(), |a, b| same_encoding(a, b)),
            "UTF8",
            "case import_takes_server"
        );
    }
}
