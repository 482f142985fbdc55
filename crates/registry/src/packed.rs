//! Terraform's packed filesystem-mirror layout: release zips directly
//! under the provider's directory,
//! `<mirror>/<host>/<namespace>/<type>/terraform-provider-<type>_<version>_<os>_<arch>.zip`,
//! beside (or instead of) the unpacked `<version>/<os>_<arch>/` layout.
//! `init` unpacks such a zip into `<data dir>/providers` as it would a
//! download (see [`crate::Installer::install`]).

use std::path::{Path, PathBuf};
use terrane_engine::provider::discovery::version::Version;
use terrane_engine::provider::ProviderAddr;

/// One packed package of a provider.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PackedZip {
    pub version: Version,
    pub zip: PathBuf,
}

/// Every packed package of `addr` for `os_arch` under the mirror `root`,
/// newest first. Files whose names do not follow the pattern, or whose
/// version part is not a version, are not packages and are skipped (as
/// Terraform skips them).
pub fn find(root: &Path, addr: &ProviderAddr, os_arch: &str) -> Vec<PackedZip> {
    let base = root
        .join(&addr.host)
        .join(&addr.namespace)
        .join(&addr.type_name);
    let Ok(entries) = std::fs::read_dir(&base) else {
        return Vec::new();
    };
    let prefix = format!("terraform-provider-{}_", addr.type_name);
    let suffix = format!("_{os_arch}.zip");
    let mut out: Vec<PackedZip> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file() || t.is_symlink()))
        .filter_map(|e| {
            let name = e.file_name();
            let version = name
                .to_str()?
                .strip_prefix(&prefix)?
                .strip_suffix(&suffix)?;
            Some(PackedZip {
                version: Version::parse(version).ok()?,
                zip: e.path(),
            })
        })
        .collect();
    out.sort_by(|a, b| b.version.cmp(&a.version));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Creates `files` (relative to a temporary mirror) and lists the
    /// packed packages of registry.terraform.io/hashicorp/random for
    /// linux_amd64: (version, file name).
    fn check(case: &str, files: &[&str], want: &[(&str, &str)]) {
        let root = terrane_testkit::temp_dir();
        for f in files {
            let p = root.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, b"PK").unwrap();
        }
        let addr = ProviderAddr::parse("hashicorp/random").unwrap();
        let got: Vec<(String, String)> = find(root.path(), &addr, "linux_amd64")
            .into_iter()
            .map(|p| {
                let name = p.zip.file_name().unwrap().to_string_lossy().to_string();
                (p.version.to_string(), name)
            })
            .collect();
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(v, n)| (v.to_string(), n.to_string()))
            .collect();
        assert_eq!(got, want, "case {case}");
    }

    const R: &str = "registry.terraform.io/hashicorp/random";

    #[test]
    fn item3_packed_layout_names() {
        check("empty", &[], &[]);
        check(
            "one",
            &[&format!(
                "{R}/terraform-provider-random_3.6.0_linux_amd64.zip"
            )],
            &[("3.6.0", "terraform-provider-random_3.6.0_linux_amd64.zip")],
        );
        check(
            "newest_first",
            &[
                &format!("{R}/terraform-provider-random_3.2.0_linux_amd64.zip"),
                &format!("{R}/terraform-provider-random_3.10.0_linux_amd64.zip"),
            ],
            &[
                ("3.10.0", "terraform-provider-random_3.10.0_linux_amd64.zip"),
                ("3.2.0", "terraform-provider-random_3.2.0_linux_amd64.zip"),
            ],
        );
        check(
            "prerelease",
            &[&format!(
                "{R}/terraform-provider-random_3.6.0-beta1_linux_amd64.zip"
            )],
            &[(
                "3.6.0-beta1",
                "terraform-provider-random_3.6.0-beta1_linux_amd64.zip",
            )],
        );
        check(
            "other_platform",
            &[&format!(
                "{R}/terraform-provider-random_3.6.0_darwin_arm64.zip"
            )],
            &[],
        );
        check(
            "other_type",
            &[&format!(
                "{R}/terraform-provider-randomx_3.6.0_linux_amd64.zip"
            )],
            &[],
        );
        check(
            "not_a_version",
            &[&format!(
                "{R}/terraform-provider-random_latest_linux_amd64.zip"
            )],
            &[],
        );
        check(
            "not_a_zip",
            &[&format!(
                "{R}/terraform-provider-random_3.6.0_linux_amd64.tar.gz"
            )],
            &[],
        );
        check(
            "unpacked_layout_is_not_packed",
            &[&format!("{R}/3.6.0/linux_amd64/terraform-provider-random")],
            &[],
        );
    }
}
