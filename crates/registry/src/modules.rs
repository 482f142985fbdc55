//! Fetching module packages as `terraform init` does: the Module Registry
//! Protocol (service discovery's `modules.v1`, `/versions`, `/download`
//! answering 204 with `X-Terraform-Get` or 200 with a JSON `location`),
//! and the go-getter addresses Terraform accepts that terrane serves:
//! `git::URL?ref=REF` (the system `git`, as Terraform runs it) and https
//! archives (`.zip`, `.tar.gz`/`.tgz`, or `?archive=`), each with an
//! optional `//subdir`.
//!
//! A package is fetched into a directory the caller names and that does
//! not exist yet; on failure the caller removes what was fetched, so
//! nothing half-installed remains. Archive entries that would land
//! outside that directory (absolute paths, `..`, links) are refused.

use crate::http::{HttpError, Url};
use crate::install::Installer;
use std::path::{Component, Path};
use terrane_engine::provider::discovery::version::{Constraints, Version};

/// How a package is fetched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fetch {
    /// `git clone URL`, then `git checkout REF` when a ref is given.
    Git {
        url: String,
        reference: Option<String>,
    },
    /// An archive over https.
    Archive { url: String, kind: ArchiveKind },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArchiveKind {
    Zip,
    TarGz,
}

/// A remote (non-registry) source: how to fetch its package, and the
/// directory inside the package that holds the module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Remote {
    pub fetch: Fetch,
    pub subdir: Option<String>,
}

/// Splits go-getter's `//subdir` off an address: the part after the
/// scheme's `://` and before the query.
pub fn split_subdir(addr: &str) -> (String, Option<String>) {
    let body_start = addr.find("://").map_or(0, |i| i + 3);
    let (before_query, query) = match addr[body_start..].find('?') {
        Some(i) => (&addr[..body_start + i], &addr[body_start + i..]),
        None => (addr, ""),
    };
    match before_query[body_start..].find("//") {
        Some(i) => {
            let cut = body_start + i;
            let subdir = before_query[cut + 2..].trim_matches('/').to_string();
            (
                format!("{}{query}", &before_query[..cut]),
                Some(subdir).filter(|s| !s.is_empty()),
            )
        }
        None => (addr.to_string(), None),
    }
}

/// Parses a go-getter address terrane can fetch.
pub fn parse_remote(addr: &str) -> Result<Remote, String> {
    let (rest, subdir) = split_subdir(addr);
    if let Some(git) = rest.strip_prefix("git::") {
        let (url, query) = match git.split_once('?') {
            Some((u, q)) => (u.to_string(), q),
            None => (git.to_string(), ""),
        };
        let mut reference = None;
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            match pair.split_once('=') {
                Some(("ref", r)) if !r.is_empty() => reference = Some(r.to_string()),
                // Shallow clones are an optimisation; a full clone serves
                // the same ref.
                Some(("depth", _)) => {}
                _ => {
                    return Err(format!(
                        "the git source argument {pair:?} is not supported (only ref and depth are)"
                    ))
                }
            }
        }
        if url.is_empty() {
            return Err("the git source has no URL".into());
        }
        return Ok(Remote {
            fetch: Fetch::Git { url, reference },
            subdir,
        });
    }
    if let Some((getter, _)) = rest.split_once("::") {
        return Err(format!(
            "the {getter:?} source type is not supported by terrane (git:: and https archives are)"
        ));
    }
    if rest.starts_with("https://") {
        let (url, query) = match rest.split_once('?') {
            Some((u, q)) => (u.to_string(), q.to_string()),
            None => (rest.clone(), String::new()),
        };
        let mut kept = Vec::new();
        let mut kind = None;
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            match pair.split_once('=') {
                Some(("archive", a)) => {
                    kind = Some(archive_kind(a).ok_or_else(|| {
                        format!("the archive type {a:?} is not supported (zip, tar.gz and tgz are)")
                    })?)
                }
                _ => kept.push(pair),
            }
        }
        let path = url.to_ascii_lowercase();
        let kind = kind
            .or_else(|| {
                if path.ends_with(".zip") {
                    Some(ArchiveKind::Zip)
                } else if path.ends_with(".tar.gz") || path.ends_with(".tgz") {
                    Some(ArchiveKind::TarGz)
                } else {
                    None
                }
            })
            .ok_or_else(|| {
                "an https source must name an archive (.zip, .tar.gz, .tgz, or ?archive=TYPE)"
                    .to_string()
            })?;
        let url = if kept.is_empty() {
            url
        } else {
            format!("{url}?{}", kept.join("&"))
        };
        return Ok(Remote {
            fetch: Fetch::Archive { url, kind },
            subdir,
        });
    }
    if rest.starts_with("http://") {
        return Err("plain http sources are not supported; use https".into());
    }
    Err("this source address is not supported by terrane (registry addresses, git:: and https archives are)".into())
}

fn archive_kind(name: &str) -> Option<ArchiveKind> {
    match name {
        "zip" => Some(ArchiveKind::Zip),
        "tar.gz" | "tgz" => Some(ArchiveKind::TarGz),
        _ => None,
    }
}

impl Installer {
    /// The base URL of the versions of `ns/name/provider` on `host`.
    async fn module_base(
        &self,
        host: &str,
        ns: &str,
        name: &str,
        provider: &str,
    ) -> Result<Url, String> {
        let service = self.service(host, "modules.v1").await?;
        let url = Url::parse(&service)
            .map_err(|e| e.to_string())?
            .join(&format!("{ns}/{name}/{provider}/"));
        Url::parse(&url).map_err(|e| e.to_string())
    }

    /// The versions of a registry module, newest first.
    pub async fn module_versions(
        &self,
        host: &str,
        ns: &str,
        name: &str,
        provider: &str,
    ) -> Result<Vec<Version>, String> {
        let url = self
            .module_base(host, ns, name, provider)
            .await?
            .join("versions");
        let body = self.client.get(&url).await.map_err(|e| match e {
            HttpError::Status { status: 404, .. } => {
                format!("the module registry at {host} has no module {ns}/{name}/{provider}")
            }
            e => format!("the module registry could not be queried: {e}"),
        })?;
        let doc: serde_json::Value = serde_json::from_slice(&body)
            .map_err(|e| format!("the registry's answer from {url} is not JSON: {e}"))?;
        let list = doc
            .get("modules")
            .and_then(|m| m.get(0))
            .and_then(|m| m.get("versions"))
            .and_then(|v| v.as_array())
            .ok_or_else(|| {
                format!("the registry's answer from {url} is not a module version list")
            })?;
        let mut out: Vec<Version> = list
            .iter()
            .filter_map(|v| v.get("version")?.as_str())
            .filter_map(|v| Version::parse(v).ok())
            .collect();
        out.sort();
        out.reverse();
        out.dedup();
        Ok(out)
    }

    /// The newest version of a registry module `constraints` allow.
    pub async fn module_select(
        &self,
        host: &str,
        ns: &str,
        name: &str,
        provider: &str,
        constraints: &Constraints,
    ) -> Result<Version, String> {
        let versions = self.module_versions(host, ns, name, provider).await?;
        constraints.newest(versions.iter()).cloned().ok_or_else(|| {
            format!(
                "no available version matches the constraint {:?} (available: {})",
                constraints.to_string(),
                if versions.is_empty() {
                    "none".to_string()
                } else {
                    versions
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            )
        })
    }

    /// Where the registry says `version` of a module is: the
    /// `X-Terraform-Get` of a 204 answer, or the `location` of a 200 JSON
    /// answer, resolved against the download URL.
    pub async fn module_location(
        &self,
        host: &str,
        ns: &str,
        name: &str,
        provider: &str,
        version: &Version,
    ) -> Result<String, String> {
        let base = self.module_base(host, ns, name, provider).await?;
        let url = base.join(&format!("{version}/download"));
        let answer = self
            .client
            .get_answer(&url)
            .await
            .map_err(|e| format!("the module registry could not be queried: {e}"))?;
        let location = match (answer.status, answer.terraform_get) {
            (200 | 204, Some(get)) if !get.is_empty() => get,
            (200, _) => {
                let doc: serde_json::Value =
                    serde_json::from_slice(&answer.body).map_err(|_| {
                        format!("the registry's download answer from {url} has neither an X-Terraform-Get header nor a JSON location")
                    })?;
                doc.get("location")
                    .and_then(|l| l.as_str())
                    .filter(|l| !l.is_empty())
                    .ok_or_else(|| {
                        format!("the registry's download answer from {url} has no location")
                    })?
                    .to_string()
            }
            (204, _) => {
                return Err(format!(
                    "the registry's download answer from {url} has no X-Terraform-Get header"
                ))
            }
            (status, _) => return Err(format!("{url} answered {status}")),
        };
        Ok(resolve_location(&answer.url, &location))
    }

    /// Fetches the package at the go-getter address `addr` into `dest`
    /// (which must not exist). Returns the module's subdirectory inside it.
    pub async fn fetch_package(&self, addr: &str, dest: &Path) -> Result<Option<String>, String> {
        let remote = parse_remote(addr)?;
        match &remote.fetch {
            Fetch::Git { url, reference } => git_fetch(url, reference.as_deref(), dest).await?,
            Fetch::Archive { url, kind } => {
                let bytes = self
                    .client
                    .get(url)
                    .await
                    .map_err(|e| format!("downloading the archive failed: {e}"))?;
                std::fs::create_dir_all(dest).map_err(|e| e.to_string())?;
                match kind {
                    ArchiveKind::Zip => unpack_zip(&bytes, dest)?,
                    ArchiveKind::TarGz => unpack_tar_gz(&bytes, dest)?,
                }
            }
        }
        Ok(remote.subdir)
    }
}

/// A location relative to the URL that gave it (`./x.tar.gz`, `/x`) made
/// absolute; a go-getter address with a getter prefix or scheme stays.
fn resolve_location(answered: &str, location: &str) -> String {
    if location.contains("::") || location.contains("://") {
        return location.to_string();
    }
    match Url::parse(answered) {
        Ok(u) => u.join(location.strip_prefix("./").unwrap_or(location)),
        Err(_) => location.to_string(),
    }
}

/// `git clone` then `git checkout REF`, with prompts off; a ref that does
/// not exist is its own error.
async fn git_fetch(url: &str, reference: Option<&str>, dest: &Path) -> Result<(), String> {
    let run = |args: Vec<&std::ffi::OsStr>| {
        let mut cmd = tokio::process::Command::new("git");
        cmd.args(args)
            .env("GIT_TERMINAL_PROMPT", "0")
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true);
        cmd
    };
    let out = run(vec![
        "clone".as_ref(),
        "--quiet".as_ref(),
        "--".as_ref(),
        url.as_ref(),
        dest.as_os_str(),
    ])
    .output()
    .await
    .map_err(|e| format!("cannot run git (is it installed?): {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "git clone of {url} failed: {}",
            first_line(&out.stderr)
        ));
    }
    if let Some(r) = reference {
        let out = run(vec![
            "-C".as_ref(),
            dest.as_os_str(),
            "checkout".as_ref(),
            "--quiet".as_ref(),
            r.as_ref(),
            "--".as_ref(),
        ])
        .output()
        .await
        .map_err(|e| format!("cannot run git: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "the git ref {r:?} does not exist in {url} ({})",
                first_line(&out.stderr)
            ));
        }
    }
    Ok(())
}

fn first_line(stderr: &[u8]) -> String {
    String::from_utf8_lossy(stderr)
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("no message")
        .to_string()
}

/// A relative path made only of normal components (no root, no `..`).
fn contained(name: &Path) -> bool {
    name.components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
        && name.components().any(|c| matches!(c, Component::Normal(_)))
}

fn unpack_zip(bytes: &[u8], dest: &Path) -> Result<(), String> {
    let bad = |e: &dyn std::fmt::Display| format!("the archive is not a valid zip file: {e}");
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(|e| bad(&e))?;
    for i in 0..archive.len() {
        let mut entry = archive.by_index(i).map_err(|e| bad(&e))?;
        let name = entry.name().map_err(|e| bad(&e))?.to_string();
        let rel = Path::new(&name);
        if !contained(rel) {
            return Err(format!(
                "the archive holds an entry outside its directory: {name:?}"
            ));
        }
        if entry.is_symlink() {
            return Err(format!(
                "the archive holds a link, which is refused: {name:?}"
            ));
        }
        let path = dest.join(rel);
        if entry.is_dir() {
            std::fs::create_dir_all(&path).map_err(|e| e.to_string())?;
            continue;
        }
        if let Some(p) = path.parent() {
            std::fs::create_dir_all(p).map_err(|e| e.to_string())?;
        }
        let mut out = std::fs::File::create(&path).map_err(|e| e.to_string())?;
        std::io::copy(&mut entry, &mut out)
            .map_err(|e| format!("the archive's {name:?} cannot be unpacked: {e}"))?;
        if let Some(mode) = entry.unix_mode() {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode & 0o777))
                .map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

fn unpack_tar_gz(bytes: &[u8], dest: &Path) -> Result<(), String> {
    let bad = |e: &dyn std::fmt::Display| format!("the archive is not a valid .tar.gz file: {e}");
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(bytes));
    let mut entries = archive.entries().map_err(|e| bad(&e))?;
    let mut any = false;
    for entry in entries.by_ref() {
        let mut entry = entry.map_err(|e| bad(&e))?;
        let rel = entry.path().map_err(|e| bad(&e))?.into_owned();
        let kind = entry.header().entry_type();
        if rel.as_os_str() == "." || rel.as_os_str() == "./" {
            continue;
        }
        if !contained(&rel) {
            return Err(format!(
                "the archive holds an entry outside its directory: {:?}",
                rel.display().to_string()
            ));
        }
        if !(kind.is_file() || kind.is_dir()) {
            return Err(format!(
                "the archive holds {:?}, which is not a plain file or directory",
                rel.display().to_string()
            ));
        }
        let path = dest.join(&rel);
        if kind.is_dir() {
            std::fs::create_dir_all(&path).map_err(|e| e.to_string())?;
            continue;
        }
        if let Some(p) = path.parent() {
            std::fs::create_dir_all(p).map_err(|e| e.to_string())?;
        }
        let mode = entry.header().mode().unwrap_or(0o644) & 0o777;
        let mut out = std::fs::File::create(&path).map_err(|e| e.to_string())?;
        std::io::copy(&mut entry, &mut out).map_err(|e| {
            format!(
                "the archive's {:?} cannot be unpacked: {e}",
                rel.display().to_string()
            )
        })?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))
            .map_err(|e| e.to_string())?;
        any = true;
    }
    if !any {
        return Err("the archive holds no file".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn item2_go_getter_addresses() {
        let git = |url: &str, r: Option<&str>, sub: Option<&str>| {
            Ok(Remote {
                fetch: Fetch::Git {
                    url: url.into(),
                    reference: r.map(Into::into),
                },
                subdir: sub.map(Into::into),
            })
        };
        let arch = |url: &str, kind, sub: Option<&str>| {
            Ok(Remote {
                fetch: Fetch::Archive {
                    url: url.into(),
                    kind,
                },
                subdir: sub.map(Into::into),
            })
        };
        let cases: Vec<(&str, &str, Result<Remote, ()>)> = vec![
            (
                "git_https_ref_subdir",
                "git::https://h/r.git//mods/a?ref=v1.2.0",
                git("https://h/r.git", Some("v1.2.0"), Some("mods/a")),
            ),
            (
                "git_ssh",
                "git::ssh://git@h/r.git",
                git("ssh://git@h/r.git", None, None),
            ),
            (
                "git_file",
                "git::file:///tmp/r.git?ref=main",
                git("file:///tmp/r.git", Some("main"), None),
            ),
            (
                "zip",
                "https://h/a/m.zip",
                arch("https://h/a/m.zip", ArchiveKind::Zip, None),
            ),
            (
                "tgz_subdir",
                "https://h/a/m.tar.gz//x",
                arch("https://h/a/m.tar.gz", ArchiveKind::TarGz, Some("x")),
            ),
            (
                "archive_param",
                "https://h/get?archive=tgz&v=1",
                arch("https://h/get?v=1", ArchiveKind::TarGz, None),
            ),
            ("no_archive", "https://h/a/m", Err(())),
            ("s3", "s3::https://s3.amazonaws.com/b/m.zip", Err(())),
            ("plain_http", "http://h/m.zip", Err(())),
            ("git_unknown_arg", "git::https://h/r.git?sshkey=x", Err(())),
        ];
        for (case, addr, want) in cases {
            let got = parse_remote(addr).map_err(|_| ());
            assert_eq!(got, want, "case {case}");
        }
    }

    #[test]
    fn item2_archives_refuse_escapes() {
        let tar_gz = |name: &str| {
            let mut header = tar::Header::new_gnu();
            header.set_size(1);
            header.set_mode(0o644);
            header.set_entry_type(tar::EntryType::Regular);
            // set_path refuses `..`; write the raw name as a hostile
            // archive would.
            let raw = &mut header.as_old_mut().name;
            raw[..name.len()].copy_from_slice(name.as_bytes());
            header.set_cksum();
            let mut b = tar::Builder::new(flate2::write::GzEncoder::new(
                Vec::new(),
                flate2::Compression::default(),
            ));
            b.append(&header, &b"x"[..]).unwrap();
            b.into_inner().unwrap().finish().unwrap()
        };
        let cases = [
            ("dotdot", "../evil", true),
            ("absolute", "/tmp/evil", true),
            ("nested_dotdot", "a/../../evil", true),
            ("plain", "a/main.tf", false),
        ];
        for (case, name, refused) in cases {
            let dir = tempfile::tempdir().unwrap();
            let dest = dir.path().join("pkg");
            std::fs::create_dir(&dest).unwrap();
            let got = unpack_tar_gz(&tar_gz(name), &dest);
            assert_eq!(got.is_err(), refused, "case {case}: {got:?}");
            assert!(!dir.path().join("evil").exists(), "case {case}");
        }
        let garbage = unpack_tar_gz(b"not gzip", Path::new("/nonexistent"));
        assert!(garbage.unwrap_err().contains("not a valid .tar.gz"));
        let garbage = unpack_zip(b"not zip", Path::new("/nonexistent"));
        assert!(garbage.unwrap_err().contains("not a valid zip"));
    }
}
