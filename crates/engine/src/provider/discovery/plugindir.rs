//! The unpacked provider directory layout shared by Terraform's filesystem
//! mirrors and terrane's plugin directory:
//! `<root>/<host>/<namespace>/<type>/<version>/<os>_<arch>/terraform-provider-<type>[_vX.Y.Z]`.
//!
//! (Terraform's "packed" layout, release zips directly under `<type>/`, is
//! not read: terrane does not unpack archives.)

use super::version::Version;
use crate::provider::addr::ProviderAddr;
use std::path::{Path, PathBuf};

/// The platform directory name Terraform uses for this machine
/// (`linux_amd64`, `darwin_arm64`, ...).
pub fn current_os_arch() -> String {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        other => other,
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        other => other,
    };
    format!("{os}_{arch}")
}

/// One unpacked package found in a layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Package {
    pub version: Version,
    /// The `<os>_<arch>` directory (what the `h1:` hash covers).
    pub dir: PathBuf,
    pub binary: PathBuf,
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The provider binary in `dir`: `terraform-provider-<type>` exactly, else
/// the first (by name) executable `terraform-provider-<type>_*` (the
/// release archives name it `terraform-provider-<type>_v1.2.3`).
pub fn find_binary(dir: &Path, type_name: &str) -> Option<PathBuf> {
    let exact = dir.join(format!("terraform-provider-{type_name}"));
    if is_executable(&exact) {
        return Some(exact);
    }
    let prefix = format!("terraform-provider-{type_name}_");
    let mut candidates: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&prefix))
                && is_executable(p)
        })
        .collect();
    candidates.sort();
    candidates.into_iter().next()
}

/// Every package of `addr` for `os_arch` under `root`, newest first.
/// Directories that are not versions, or hold no executable, are skipped.
pub fn packages(root: &Path, addr: &ProviderAddr, os_arch: &str) -> Vec<Package> {
    let base = root
        .join(&addr.host)
        .join(&addr.namespace)
        .join(&addr.type_name);
    let Ok(entries) = std::fs::read_dir(&base) else {
        return Vec::new();
    };
    let mut out: Vec<Package> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let version = Version::parse(e.file_name().to_str()?).ok()?;
            let dir = e.path().join(os_arch);
            let binary = find_binary(&dir, &addr.type_name)?;
            Some(Package {
                version,
                dir,
                binary,
            })
        })
        .collect();
    out.sort_by(|a, b| b.version.cmp(&a.version));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lays out `files` (relative paths; `*` suffix = executable) under a
    /// temp root and lists the packages of `hashicorp/random` for linux_amd64.
    fn check(case: &str, files: &[&str], want: &[(&str, &str)]) {
        let root = terrane_testkit::temp_dir();
        for f in files {
            let (rel, exec) = match f.strip_suffix('*') {
                Some(r) => (r, true),
                None => (*f, false),
            };
            let p = root.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, b"#!/bin/sh\n").unwrap();
            if exec {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
            }
        }
        let addr = ProviderAddr::parse("hashicorp/random").unwrap();
        let got: Vec<(String, String)> = packages(root.path(), &addr, "linux_amd64")
            .iter()
            .map(|p| {
                (
                    p.version.to_string(),
                    p.binary
                        .strip_prefix(root.path())
                        .unwrap()
                        .display()
                        .to_string(),
                )
            })
            .collect();
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(v, b)| (v.to_string(), b.to_string()))
            .collect();
        assert_eq!(got, want, "case {case}");
    }

    const R: &str = "registry.terraform.io/hashicorp/random";

    #[test]
    fn layouts() {
        check("empty", &[], &[]);
        check(
            "exact_name",
            &[&format!("{R}/3.6.0/linux_amd64/terraform-provider-random*")],
            &[(
                "3.6.0",
                &format!("{R}/3.6.0/linux_amd64/terraform-provider-random"),
            )],
        );
        check(
            "versioned_name",
            &[&format!(
                "{R}/3.6.0/linux_amd64/terraform-provider-random_v3.6.0_x5*"
            )],
            &[(
                "3.6.0",
                &format!("{R}/3.6.0/linux_amd64/terraform-provider-random_v3.6.0_x5"),
            )],
        );
        check(
            "newest_first",
            &[
                &format!("{R}/3.1.0/linux_amd64/terraform-provider-random*"),
                &format!("{R}/3.10.0/linux_amd64/terraform-provider-random*"),
                &format!("{R}/3.2.0/linux_amd64/terraform-provider-random*"),
            ],
            &[
                (
                    "3.10.0",
                    &format!("{R}/3.10.0/linux_amd64/terraform-provider-random"),
                ),
                (
                    "3.2.0",
                    &format!("{R}/3.2.0/linux_amd64/terraform-provider-random"),
                ),
                (
                    "3.1.0",
                    &format!("{R}/3.1.0/linux_amd64/terraform-provider-random"),
                ),
            ],
        );
        check(
            "other_platform_only",
            &[&format!(
                "{R}/3.6.0/darwin_arm64/terraform-provider-random*"
            )],
            &[],
        );
        check(
            "not_executable",
            &[&format!("{R}/3.6.0/linux_amd64/terraform-provider-random")],
            &[],
        );
        check(
            "not_a_version",
            &[&format!(
                "{R}/latest/linux_amd64/terraform-provider-random*"
            )],
            &[],
        );
        check(
            "other_type_binary",
            &[&format!(
                "{R}/3.6.0/linux_amd64/terraform-provider-randomx*"
            )],
            &[],
        );
        check(
            "packed_zip_ignored",
            &[&format!(
                "{R}/terraform-provider-random_3.6.0_linux_amd64.zip"
            )],
            &[],
        );
    }

    #[test]
    fn platform_name() {
        let p = current_os_arch();
        assert!(
            p.contains('_') && !p.contains("x86_64") && !p.contains("macos"),
            "{p}"
        );
    }
}
