//! Secrets inside source addresses, kept out of what people read.
//!
//! A module source may carry credentials: a token or password in the URL's
//! user information (`git::https://user:TOKEN@host/repo.git`, or a bare
//! `https://TOKEN@host/...` as GitHub accepts), or go-getter query
//! arguments such as `sshkey=` (a whole private key) and presigned-URL
//! signatures. Terraform prints such addresses as they are written; terrane
//! prints them with the secret parts replaced, in progress lines and in
//! error messages alike. The manifest (`modules.json`) keeps the address as
//! written, as Terraform's does: it is the configuration's own text.

/// What a secret part is replaced with.
const HIDDEN: &str = "REDACTED";

/// `text` with the secret parts of every URL in it replaced: the password
/// of the user information (the user name too when there is no password
/// and the scheme is not ssh, since tokens travel as user names), and the
/// values of query arguments whose names say they hold a key, a token, a
/// password, a secret, a signature or a credential. Other text is kept.
pub fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        // The URL starts after the last separator before `://`.
        let start = rest[..at]
            .rfind(|c: char| c.is_whitespace() || "\"'`(<[{,".contains(c))
            .map(|i| i + 1)
            .unwrap_or(0);
        let end = rest[at..]
            .find(|c: char| c.is_whitespace() || "\"'`)>]},".contains(c))
            .map(|i| at + i)
            .unwrap_or(rest.len());
        out.push_str(&rest[..start]);
        out.push_str(&redact_url(&rest[start..end], at - start));
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// One URL, `sep` being the offset of its `://`.
fn redact_url(url: &str, sep: usize) -> String {
    let scheme = &url[..sep];
    let after = &url[sep + 3..];
    let auth_end = after.find(['/', '?', '#']).unwrap_or(after.len());
    let (authority, tail) = after.split_at(auth_end);
    let mut out = String::with_capacity(url.len());
    out.push_str(scheme);
    out.push_str("://");
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => {
            match userinfo.split_once(':') {
                Some((user, _)) => {
                    out.push_str(user);
                    out.push(':');
                    out.push_str(HIDDEN);
                }
                // `git@host` and `ssh://user@host` name an account, not a
                // secret.
                None if scheme.ends_with("ssh") => out.push_str(userinfo),
                None => out.push_str(HIDDEN),
            }
            out.push('@');
            out.push_str(host);
        }
        None => out.push_str(authority),
    }
    match tail.split_once('?') {
        Some((path, query)) => {
            out.push_str(path);
            out.push('?');
            let (query, fragment) = match query.split_once('#') {
                Some((q, f)) => (q, Some(f)),
                None => (query, None),
            };
            for (i, pair) in query.split('&').enumerate() {
                if i > 0 {
                    out.push('&');
                }
                match pair.split_once('=') {
                    Some((name, _)) if secret_name(name) => {
                        out.push_str(name);
                        out.push('=');
                        out.push_str(HIDDEN);
                    }
                    _ => out.push_str(pair),
                }
            }
            if let Some(f) = fragment {
                out.push('#');
                out.push_str(f);
            }
        }
        None => out.push_str(tail),
    }
    out
}

fn secret_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    [
        "key",
        "token",
        "password",
        "secret",
        "signature",
        "credential",
    ]
    .iter()
    .any(|w| n.contains(w))
}

#[cfg(test)]
mod tests {
    use super::redact;

    fn check(name: &str, input: &str, want: &str) {
        assert_eq!(redact(input), want, "case {name}");
    }

    #[test]
    fn secrets_in_source_addresses_are_hidden() {
        let cases = [
            (
                "password in https user information",
                "git::https://alice:s3cr3t@git.example.com/org/repo.git?ref=v1",
                "git::https://alice:REDACTED@git.example.com/org/repo.git?ref=v1",
            ),
            (
                "token as the user name",
                "git::https://ghp_abc123@github.com/org/repo.git",
                "git::https://REDACTED@github.com/org/repo.git",
            ),
            (
                "ssh account kept",
                "git::ssh://git@github.com/org/repo.git?ref=main",
                "git::ssh://git@github.com/org/repo.git?ref=main",
            ),
            (
                "ssh password hidden",
                "git::ssh://git:pw@host/repo.git",
                "git::ssh://git:REDACTED@host/repo.git",
            ),
            (
                "sshkey argument",
                "git::ssh://git@host/repo.git?sshkey=LS0tLS1CRUdJTg&ref=v2",
                "git::ssh://git@host/repo.git?sshkey=REDACTED&ref=v2",
            ),
            (
                "presigned archive",
                "https://b.example.com/m.zip?X-Amz-Signature=abc&X-Amz-Credential=k&x=1#frag",
                "https://b.example.com/m.zip?X-Amz-Signature=REDACTED&X-Amz-Credential=REDACTED&x=1#frag",
            ),
            (
                "inside a sentence and quotes",
                "fatal: repository 'https://u:p@h/r.git/' not found (from \"https://t@h/x\")",
                "fatal: repository 'https://u:REDACTED@h/r.git/' not found (from \"https://REDACTED@h/x\")",
            ),
            (
                "nothing secret",
                "Downloading https://h.example.com/a.tar.gz//sub for web...",
                "Downloading https://h.example.com/a.tar.gz//sub for web...",
            ),
            ("no url at all", "terraform-aws-modules/vpc/aws", "terraform-aws-modules/vpc/aws"),
            ("at sign in a path", "https://h/x@y", "https://h/x@y"),
        ];
        for (name, input, want) in cases {
            check(name, input, want);
        }
    }
}
