//! The dependency lock file `.terraform.lock.hcl`: which version of each
//! provider a configuration uses, the constraints it was chosen under and
//! the package checksums, read and written in Terraform's exact layout so
//! the file round-trips between terrane and Terraform.
//!
//! Checksums: `h1:` is Go's dirhash "Hash1" of an unpacked package
//! directory ([`hash_dir`]); `zh:` is the SHA-256 of a release zip (the
//! installer in terrane-registry records them from the signed SHA256SUMS).

use super::version::Version;
use super::{hcl_string, hcl_strings};
use crate::provider::addr::ProviderAddr;
use base64::Engine as _;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The file name, in the configuration's root directory.
pub const LOCK_FILE_NAME: &str = ".terraform.lock.hcl";

const HEADER: &str = "# This file is maintained automatically by \"terraform init\".\n# Manual edits may be lost in future updates.\n";

/// One provider's lock entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockedProvider {
    pub version: Version,
    /// The constraints the version was selected under (as written).
    pub constraints: Option<String>,
    /// Sorted, deduplicated `h1:`/`zh:` checksums.
    pub hashes: Vec<String>,
}

impl LockedProvider {
    /// Whether `h1` is acceptable: true when it is listed, or when there is
    /// no `h1:` checksum to compare with.
    pub fn accepts_h1(&self, h1: &str) -> bool {
        !self.hashes.iter().any(|h| h.starts_with("h1:")) || self.hashes.iter().any(|h| h == h1)
    }
}

/// The whole lock file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LockFile {
    pub providers: BTreeMap<ProviderAddr, LockedProvider>,
}

/// A lock file that cannot be read or written.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

impl LockFile {
    /// Reads `<dir>/.terraform.lock.hcl`; a missing file is an empty lock.
    pub fn load(dir: &Path) -> Result<LockFile, LockError> {
        let path = dir.join(LOCK_FILE_NAME);
        match std::fs::read_to_string(&path) {
            Ok(text) => LockFile::parse(&text).map_err(|message| LockError::Invalid {
                path: path.display().to_string(),
                message,
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(LockFile::default()),
            Err(source) => Err(LockError::Io {
                path: path.display().to_string(),
                source,
            }),
        }
    }

    /// Writes `<dir>/.terraform.lock.hcl` (atomically, via a temp file).
    pub fn save(&self, dir: &Path) -> Result<(), LockError> {
        let path = dir.join(LOCK_FILE_NAME);
        let tmp: PathBuf = dir.join(format!("{LOCK_FILE_NAME}.tmp"));
        let io = |source| LockError::Io {
            path: path.display().to_string(),
            source,
        };
        std::fs::write(&tmp, self.to_hcl()).map_err(io)?;
        std::fs::rename(&tmp, &path).map_err(io)
    }

    pub fn parse(text: &str) -> Result<LockFile, String> {
        let body =
            terrane_hcl::parser::parse_body(text).map_err(|e| format!("invalid HCL: {e}"))?;
        let mut out = LockFile::default();
        if let Some(a) = body.attributes().next() {
            return Err(format!(
                "unexpected argument {:?}; the lock file holds only provider blocks",
                a.key.as_str()
            ));
        }
        for b in body.blocks() {
            if b.ident.as_str() != "provider" {
                // Terraform ignores other block types (future modules).
                continue;
            }
            let [label] = b.labels.as_slice() else {
                return Err(
                    "a provider block needs exactly one label, the provider source address".into(),
                );
            };
            let addr = ProviderAddr::parse(label.as_str()).map_err(|e| e.to_string())?;
            if addr.to_string() != label.as_str() {
                return Err(format!(
                    "the provider address {:?} must be written in full, as {:?}",
                    label.as_str(),
                    addr.to_string()
                ));
            }
            let mut version = None;
            let mut constraints = None;
            let mut hashes = Vec::new();
            for a in b.body.attributes() {
                let at = || format!("provider {:?}: {:?} ", addr.to_string(), a.key.as_str());
                match a.key.as_str() {
                    "version" => {
                        let v = hcl_string(&a.value).ok_or_else(|| at() + "must be a string")?;
                        version = Some(Version::parse(&v).map_err(|e| at() + &e.to_string())?);
                    }
                    "constraints" => {
                        constraints =
                            Some(hcl_string(&a.value).ok_or_else(|| at() + "must be a string")?)
                    }
                    "hashes" => {
                        hashes = hcl_strings(&a.value)
                            .ok_or_else(|| at() + "must be a list of strings")?
                    }
                    k => {
                        return Err(format!(
                            "provider {:?}: unsupported argument {k:?}",
                            addr.to_string()
                        ))
                    }
                }
            }
            let version = version.ok_or_else(|| {
                format!(
                    "provider {:?}: the version argument is required",
                    addr.to_string()
                )
            })?;
            hashes.sort();
            hashes.dedup();
            if out
                .providers
                .insert(
                    addr.clone(),
                    LockedProvider {
                        version,
                        constraints,
                        hashes,
                    },
                )
                .is_some()
            {
                return Err(format!("provider {:?} is locked twice", addr.to_string()));
            }
        }
        Ok(out)
    }

    /// The file text, formatted as Terraform formats it (providers sorted,
    /// `version`/`constraints` aligned, one hash per line).
    pub fn to_hcl(&self) -> String {
        let mut s = String::from(HEADER);
        for (addr, p) in &self.providers {
            s.push_str(&format!("\nprovider \"{addr}\" {{\n"));
            match &p.constraints {
                Some(c) => {
                    s.push_str(&format!("  version     = \"{}\"\n", p.version));
                    s.push_str(&format!("  constraints = \"{c}\"\n"));
                }
                None => s.push_str(&format!("  version = \"{}\"\n", p.version)),
            }
            if !p.hashes.is_empty() {
                s.push_str("  hashes = [\n");
                for h in &p.hashes {
                    s.push_str(&format!("    \"{h}\",\n"));
                }
                s.push_str("  ]\n");
            }
            s.push_str("}\n");
        }
        s
    }

    /// Records a selection: the version and constraints replace the old
    /// entry; hashes are kept when the version did not change, and `h1` is
    /// added.
    pub fn record(
        &mut self,
        addr: &ProviderAddr,
        version: Version,
        constraints: Option<String>,
        h1: Option<String>,
    ) {
        let mut hashes = match self.providers.get(addr) {
            Some(old) if old.version == version => old.hashes.clone(),
            _ => Vec::new(),
        };
        hashes.extend(h1);
        hashes.sort();
        hashes.dedup();
        self.providers.insert(
            addr.clone(),
            LockedProvider {
                version,
                constraints: constraints.filter(|c| !c.is_empty()),
                hashes,
            },
        );
    }
}

impl LockFile {
    /// Records a package installed from a registry: version, constraints
    /// and every hash given (the caller merges old hashes when the
    /// version is unchanged).
    pub fn record_hashes(
        &mut self,
        addr: &ProviderAddr,
        version: Version,
        constraints: Option<String>,
        mut hashes: Vec<String>,
    ) {
        hashes.sort();
        hashes.dedup();
        self.providers.insert(
            addr.clone(),
            LockedProvider {
                version,
                constraints: constraints.filter(|c| !c.is_empty()),
                hashes,
            },
        );
    }
}

/// Go dirhash's Hash1 of a directory: SHA-256 over the lines
/// `"<sha256 hex>  <relative/path>\n"` of every file, sorted by path,
/// base64-encoded with the `h1:` prefix (Terraform's package hash for an
/// unpacked provider directory).
pub fn hash_dir(dir: &Path) -> std::io::Result<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) -> std::io::Result<()> {
        for e in std::fs::read_dir(dir)? {
            let e = e?;
            let p = e.path();
            if std::fs::metadata(&p)?.is_dir() {
                walk(root, &p, out)?;
            } else {
                let rel = p.strip_prefix(root).map_err(std::io::Error::other)?;
                out.push(
                    rel.components()
                        .map(|c| c.as_os_str().to_string_lossy())
                        .collect::<Vec<_>>()
                        .join("/"),
                );
            }
        }
        Ok(())
    }
    let mut files = Vec::new();
    walk(dir, dir, &mut files)?;
    files.sort();
    let mut summary = Sha256::new();
    for f in &files {
        // Streamed through a small buffer: reading a whole provider binary
        // (tens of MB) into memory first cost more in page faults than the
        // hashing itself (issue 16's profile of a warm init).
        let mut file =
            std::io::BufReader::with_capacity(1 << 16, std::fs::File::open(dir.join(f))?);
        let mut sha = Sha256::new();
        std::io::copy(&mut file, &mut sha)?;
        summary.update(format!("{}  {f}\n", hex::encode(sha.finalize())).as_bytes());
    }
    Ok(format!(
        "h1:{}",
        base64::engine::general_purpose::STANDARD.encode(summary.finalize())
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TERRAFORM_WRITTEN: &str = r#"# This file is maintained automatically by "terraform init".
# Manual edits may be lost in future updates.

provider "registry.terraform.io/hashicorp/local" {
  version = "2.5.1"
  hashes = [
    "h1:aaaa=",
  ]
}

provider "registry.terraform.io/hashicorp/random" {
  version     = "3.6.2"
  constraints = "~> 3.0"
  hashes = [
    "h1:bbbb=",
    "zh:0123abcd",
  ]
}
"#;

    /// One expected provider: address, version, constraints, hash count.
    type Want<'a> = (&'a str, &'a str, Option<&'a str>, usize);

    fn check(case: &str, text: &str, want: Result<&[Want], &str>) {
        match (LockFile::parse(text), want) {
            (Ok(l), Ok(w)) => {
                let got: Vec<(String, String, Option<String>, usize)> = l
                    .providers
                    .iter()
                    .map(|(a, p)| {
                        (
                            a.to_string(),
                            p.version.to_string(),
                            p.constraints.clone(),
                            p.hashes.len(),
                        )
                    })
                    .collect();
                let want: Vec<(String, String, Option<String>, usize)> = w
                    .iter()
                    .map(|(a, v, c, n)| (a.to_string(), v.to_string(), c.map(str::to_string), *n))
                    .collect();
                assert_eq!(got, want, "case {case}");
            }
            (Err(e), Err(w)) => assert!(e.contains(w), "case {case}: {e}"),
            (got, want) => panic!("case {case}: got {got:?}, want {want:?}"),
        }
    }

    #[test]
    fn reading() {
        check(
            "terraform_written",
            TERRAFORM_WRITTEN,
            Ok(&[
                ("registry.terraform.io/hashicorp/local", "2.5.1", None, 1),
                (
                    "registry.terraform.io/hashicorp/random",
                    "3.6.2",
                    Some("~> 3.0"),
                    2,
                ),
            ]),
        );
        check("empty", "", Ok(&[]));
        check("header_only", HEADER, Ok(&[]));
        check("other_blocks_ignored", "module \"x\" {\n}\n", Ok(&[]));
        check(
            "short_address",
            "provider \"hashicorp/random\" {\n  version = \"1.0.0\"\n}\n",
            Err("written in full"),
        );
        check(
            "no_version",
            "provider \"registry.terraform.io/hashicorp/random\" {\n}\n",
            Err("version argument is required"),
        );
        check(
            "bad_version",
            "provider \"registry.terraform.io/hashicorp/random\" {\n  version = \"x\"\n}\n",
            Err("invalid version"),
        );
        check("hashes_not_list", "provider \"registry.terraform.io/a/b\" {\n  version = \"1.0.0\"\n  hashes = \"h1:x\"\n}\n", Err("list of strings"));
        check("unknown_argument", "provider \"registry.terraform.io/a/b\" {\n  version = \"1.0.0\"\n  colour = \"red\"\n}\n", Err("unsupported argument"));
        check("duplicate", "provider \"registry.terraform.io/a/b\" {\n  version = \"1.0.0\"\n}\nprovider \"registry.terraform.io/a/b\" {\n  version = \"1.0.0\"\n}\n", Err("locked twice"));
        check("top_level_attribute", "x = 1\n", Err("unexpected argument"));
        check("bad_hcl", "provider {", Err("invalid HCL"));
    }

    /// Real Terraform writes a lock file (`init -plugin-dir` over two
    /// unpacked provider packages, one with a version constraint): terrane
    /// reads and rewrites it byte for byte, and writes the same bytes from
    /// scratch, its `h1:` hashes computed by [`hash_dir`].
    #[test]
    fn writing_is_byte_identical_to_terraform() {
        let Some(tf) = terrane_testkit::terraform() else {
            return;
        };
        let dir = terrane_testkit::temp_dir();
        let packages = [
            ("hashicorp/local", "2.5.1", None, "local package"),
            (
                "hashicorp/random",
                "3.6.2",
                Some("~> 3.0"),
                "random package",
            ),
        ];
        let arch = match std::env::consts::ARCH {
            "x86_64" => "amd64",
            "aarch64" => "arm64",
            other => other,
        };
        let platform = format!("{}_{arch}", std::env::consts::OS);
        let mut requirements = String::new();
        let mut ours = LockFile::default();
        for (source, version, constraints, content) in packages {
            let ty = source.rsplit('/').next().unwrap();
            let package = dir.path().join(format!(
                "mirror/registry.terraform.io/{source}/{version}/{platform}"
            ));
            std::fs::create_dir_all(&package).unwrap();
            let binary = package.join(format!("terraform-provider-{ty}_v{version}"));
            std::fs::write(&binary, content).unwrap();
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755)).unwrap();
            let version_line = constraints
                .map(|c| format!(", version = \"{c}\""))
                .unwrap_or_default();
            requirements.push_str(&format!(
                "    {ty} = {{ source = \"{source}\"{version_line} }}\n"
            ));
            ours.record(
                &ProviderAddr::parse(source).unwrap(),
                Version::parse(version).unwrap(),
                constraints.map(str::to_string),
                Some(hash_dir(&package).unwrap()),
            );
        }
        let work = dir.path().join("work");
        std::fs::create_dir(&work).unwrap();
        std::fs::write(
            work.join("main.tf"),
            format!("terraform {{\n  required_providers {{\n{requirements}  }}\n}}\n"),
        )
        .unwrap();
        tf.expect(&work, &["init", "-input=false", "-plugin-dir=../mirror"], 0);
        let theirs = std::fs::read_to_string(work.join(LOCK_FILE_NAME)).unwrap();
        assert_eq!(
            LockFile::parse(&theirs).unwrap().to_hcl(),
            theirs,
            "case round_trip"
        );
        assert_eq!(ours.to_hcl(), theirs, "case written_from_scratch");
    }

    #[test]
    fn recording_a_selection() {
        let mut l = LockFile::default();
        let a = ProviderAddr::parse("hashicorp/random").unwrap();
        l.record(
            &a,
            Version::parse("3.6.2").unwrap(),
            Some("~> 3.0".into()),
            Some("h1:bbbb=".into()),
        );
        l.record(
            &a,
            Version::parse("3.6.2").unwrap(),
            Some("~> 3.0".into()),
            Some("h1:cccc=".into()),
        );
        assert_eq!(
            l.providers[&a].hashes,
            ["h1:bbbb=", "h1:cccc="],
            "case same_version_keeps_hashes"
        );
        l.record(
            &a,
            Version::parse("3.7.0").unwrap(),
            None,
            Some("h1:dddd=".into()),
        );
        assert_eq!(
            l.providers[&a].hashes,
            ["h1:dddd="],
            "case new_version_drops_hashes"
        );
        assert!(
            l.to_hcl().contains("  version = \"3.7.0\"\n  hashes = [\n"),
            "case no_constraints_unaligned"
        );
        let dir = terrane_testkit::temp_dir();
        l.save(dir.path()).unwrap();
        assert_eq!(LockFile::load(dir.path()).unwrap(), l, "case save_load");
        assert_eq!(
            LockFile::load(&dir.path().join("nowhere")).unwrap(),
            LockFile::default(),
            "case missing_is_empty"
        );
    }

    #[test]
    fn dirhash_h1() {
        let dir = terrane_testkit::temp_dir();
        std::fs::write(dir.path().join("terraform-provider-x"), b"binary").unwrap();
        std::fs::create_dir(dir.path().join("docs")).unwrap();
        std::fs::write(dir.path().join("docs/README"), b"hi\n").unwrap();
        // Computed independently: sha256 of the two summary lines.
        let lines = format!(
            "{}  docs/README\n{}  terraform-provider-x\n",
            hex::encode(Sha256::digest(b"hi\n")),
            hex::encode(Sha256::digest(b"binary"))
        );
        let want = format!(
            "h1:{}",
            base64::engine::general_purpose::STANDARD.encode(Sha256::digest(lines.as_bytes()))
        );
        assert_eq!(hash_dir(dir.path()).unwrap(), want);
        let locked = LockedProvider {
            version: Version::new(1, 0, 0),
            constraints: None,
            hashes: vec!["zh:00".into()],
        };
        assert!(locked.accepts_h1(&want), "case only_zh_accepts");
        let locked = LockedProvider {
            hashes: vec!["h1:other=".into()],
            ..locked
        };
        assert!(!locked.accepts_h1(&want), "case h1_mismatch_refused");
    }
}
