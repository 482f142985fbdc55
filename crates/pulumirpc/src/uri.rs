//! Where a `uri` asset or archive reads its contents from, as Pulumi's
//! engine reads them (Go's `net/url` parse, then the scheme): `file://` is
//! a local file (its path percent-decoded; no user, query or fragment),
//! `http://` and `https://` are fetched by the caller (the codec is pure:
//! see [`crate::codec::Fetched`]); any other scheme is an error.

use std::path::PathBuf;

/// What a URI's contents come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Source {
    /// A `file://` URI's local file.
    Local(PathBuf),
    /// An `http(s)://` URI, fetched as written.
    Remote(String),
}

/// The parts of a URI this module looks at.
#[derive(Debug, PartialEq, Eq)]
struct Parts<'a> {
    scheme: String,
    /// `user@host:port`, when `//` follows the scheme.
    authority: Option<&'a str>,
    path: &'a str,
    query: Option<&'a str>,
    fragment: Option<&'a str>,
}

fn split(uri: &str) -> Result<Parts<'_>, String> {
    let Some((scheme, rest)) = uri.split_once(':') else {
        return Err(format!("{uri:?} is not a URI: it has no scheme"));
    };
    let valid = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
    if !valid {
        return Err(format!("{uri:?} is not a URI: its scheme is malformed"));
    }
    let (rest, fragment) = match rest.split_once('#') {
        Some((r, f)) => (r, Some(f)),
        None => (rest, None),
    };
    let (rest, query) = match rest.split_once('?') {
        Some((r, q)) => (r, Some(q)),
        None => (rest, None),
    };
    let (authority, path) = match rest.strip_prefix("//") {
        Some(r) => match r.find('/') {
            Some(i) => (Some(&r[..i]), &r[i..]),
            None => (Some(r), ""),
        },
        None => (None, rest),
    };
    Ok(Parts {
        scheme: scheme.to_ascii_lowercase(),
        authority,
        path,
        query,
        fragment,
    })
}

/// `%XX` sequences decoded, as Go's url.Parse decodes a path; a malformed
/// escape is an error.
fn unescape(s: &str, uri: &str) -> Result<String, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = b
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("{uri:?} holds a malformed %-escape"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| format!("{uri:?} decodes to a path that is not UTF-8"))
}

/// The decoded path of `uri` (where Pulumi's engine looks for an archive
/// format's extension).
pub(crate) fn path_of(uri: &str) -> Result<String, String> {
    let p = split(uri)?;
    unescape(p.path, uri)
}

/// Where `uri`'s contents come from. `localhost_ok`: a `file://localhost/`
/// URI is accepted (Pulumi's engine accepts it for assets, not archives).
pub(crate) fn source(uri: &str, localhost_ok: bool) -> Result<Source, String> {
    let p = split(uri)?;
    match p.scheme.as_str() {
        "http" | "https" => {
            if p.authority.is_none_or(str::is_empty) {
                return Err(format!("{uri:?} names no host"));
            }
            Ok(Source::Remote(uri.to_string()))
        }
        "file" => {
            let authority = p.authority.unwrap_or("");
            if authority.contains('@') {
                return Err(format!("file:// URIs cannot have a user: {uri:?}"));
            }
            if p.query.is_some() {
                return Err(format!("file:// URIs cannot have a query string: {uri:?}"));
            }
            if p.fragment.is_some() {
                return Err(format!("file:// URIs cannot have a fragment: {uri:?}"));
            }
            if !(authority.is_empty() || (localhost_ok && authority == "localhost")) {
                return Err(format!(
                    "file:// host {authority:?} not supported (only {}): {uri:?}",
                    if localhost_ok {
                        "none or localhost"
                    } else {
                        "none"
                    }
                ));
            }
            Ok(Source::Local(PathBuf::from(unescape(p.path, uri)?)))
        }
        other => Err(format!("unrecognized or unsupported URI scheme {other:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(name: &str, uri: &str, localhost_ok: bool, want: Result<Source, &str>) {
        match (source(uri, localhost_ok), want) {
            (Ok(got), Ok(want)) => assert_eq!(got, want, "case {name}"),
            (Err(e), Err(part)) => assert!(e.contains(part), "case {name}: {e}"),
            (got, want) => panic!("case {name}: got {got:?}, want {want:?}"),
        }
    }

    #[test]
    fn item2_uri_sources_as_pulumi_reads_them() {
        let local = |p: &str| Ok(Source::Local(PathBuf::from(p)));
        let remote = |u: &str| Ok(Source::Remote(u.to_string()));
        let cases: Vec<(&str, &str, bool, Result<Source, &str>)> = vec![
            ("file", "file:///tmp/a.txt", true, local("/tmp/a.txt")),
            (
                "file_escaped",
                "file:///tmp/a%20b.zip",
                false,
                local("/tmp/a b.zip"),
            ),
            (
                "file_localhost_asset",
                "file://localhost/x",
                true,
                local("/x"),
            ),
            (
                "file_localhost_archive",
                "file://localhost/x.zip",
                false,
                Err("not supported"),
            ),
            (
                "file_other_host",
                "file://example.com/x",
                true,
                Err("not supported"),
            ),
            ("file_user", "file://u@/x", true, Err("user")),
            ("file_query", "file:///x?y=1", true, Err("query")),
            ("file_fragment", "file:///x#y", true, Err("fragment")),
            (
                "file_bad_escape",
                "file:///x%zz",
                true,
                Err("malformed %-escape"),
            ),
            (
                "https",
                "https://h:8443/a.zip?v=1",
                true,
                remote("https://h:8443/a.zip?v=1"),
            ),
            (
                "http_upper_scheme",
                "HTTP://h/a",
                true,
                remote("HTTP://h/a"),
            ),
            ("http_no_host", "http:///a", true, Err("names no host")),
            (
                "ftp",
                "ftp://h/a",
                true,
                Err("unsupported URI scheme \"ftp\""),
            ),
            ("no_scheme", "/tmp/a", true, Err("no scheme")),
            ("bad_scheme", "1x://h/a", true, Err("malformed")),
        ];
        for (name, uri, localhost_ok, want) in cases {
            check(name, uri, localhost_ok, want);
        }
        assert_eq!(
            path_of("https://h/d/a.tar.gz?x=.zip").unwrap(),
            "/d/a.tar.gz"
        );
    }
}
