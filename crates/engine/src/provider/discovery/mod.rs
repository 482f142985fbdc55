//! Finding the provider for a `required_providers` source address.
//!
//! Order, first match wins:
//! 1. A registered built-in under `terraform.io/builtin/` (`terraform`) is
//!    always the in-process one.
//! 2. A `dev_overrides` entry of the CLI configuration: the binary in that
//!    directory, no version selection, no lock check (as in Terraform).
//! 3. Packages `init` installed under `<data dir>/providers` (the data
//!    dir is `TF_DATA_DIR`, default `.terraform`, Terraform's layout, so a
//!    directory Terraform initialized works too); then unpacked packages
//!    in the CLI configuration's `filesystem_mirror`s
//!    (those whose include/exclude admit the address, in file order) and
//!    then in the plugin directory `.terrane/plugins`; without a
//!    `provider_installation` block the mirrors are Terraform's implied
//!    local directories `terraform.d/plugins` (in the working directory)
//!    and `~/.terraform.d/plugins`. The version is the one locked in
//!    `.terraform.lock.hcl` if there is one (it must still satisfy the
//!    constraints), else the newest the constraints allow; the first
//!    directory holding that version supplies it, and its `h1:` hash must
//!    match the lock when the lock has `h1:` hashes.
//! 4. The in-process built-in registered for the address, if any (the
//!    `terrane` binary registers random, local, time and postgresql).
//!
//! 5. `pulumi/<package>` (default registry host) is a Pulumi resource
//!    plugin, `pulumi-resource-<package>` (see [`crate::provider::pulumi`]),
//!    looked up after dev overrides.
//!
//! Anything else is a [`DiscoveryError::NotFound`] listing where we looked.

pub mod cliconfig;
pub mod lockfile;
pub mod plugindir;
pub mod version;

use crate::provider::addr::ProviderAddr;
use crate::provider::builtin::{Builtin, Builtins};
use cliconfig::CliConfig;
use lockfile::{hash_dir, LockFile};
use std::path::{Path, PathBuf};
use version::{Constraints, Version};

/// The plugin directory, relative to the working directory, when
/// `TF_DATA_DIR` is not set.
pub const PLUGIN_DIR: &str = ".terrane/plugins";

/// The data directory of `working_dir`, Terraform's: `TF_DATA_DIR` when
/// set (relative to the working directory unless absolute), else
/// `.terraform`. It holds installed providers (`providers`) and the
/// backend record, so a directory either tool initialized works for the
/// other. terrane's own `.terrane` (the SQLite state, the plugin
/// directory) stays where it is whatever `TF_DATA_DIR` says, as
/// Terraform's local state stays in `terraform.tfstate`: another data
/// directory must never mean another, empty, state.
pub fn data_dir(working_dir: &Path) -> PathBuf {
    data_dir_for(working_dir, std::env::var_os("TF_DATA_DIR"))
}

/// [`data_dir`] for a given value of `TF_DATA_DIR` (empty is unset).
fn data_dir_for(working_dir: &Path, tf_data_dir: Option<std::ffi::OsString>) -> PathBuf {
    match tf_data_dir.filter(|d| !d.is_empty()) {
        Some(d) => working_dir.join(d),
        None => working_dir.join(".terraform"),
    }
}

/// Where a provider comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProviderSource {
    /// Served in-process.
    Builtin(Builtin),
    /// A plugin binary.
    Plugin(PluginSource),
    /// A Pulumi resource plugin (`pulumi/<package>`).
    Pulumi(crate::provider::pulumi::PulumiSource),
}

/// A plugin binary and how it was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PluginSource {
    pub binary: PathBuf,
    /// `None` for dev overrides (unversioned, never locked).
    pub version: Option<Version>,
    /// The package's `h1:` hash (packages only).
    pub h1: Option<String>,
    pub dev_override: bool,
}

impl ProviderSource {
    /// A lock entry to record for this source (`None` for built-ins and
    /// dev overrides, which Terraform does not lock either).
    pub fn lock_entry(&self) -> Option<(Version, Option<String>)> {
        match self {
            ProviderSource::Plugin(PluginSource {
                version: Some(v),
                h1,
                dev_override: false,
                ..
            }) => Some((v.clone(), h1.clone())),
            _ => None,
        }
    }
}

/// Why a provider could not be found.
#[derive(Debug, thiserror::Error)]
pub enum DiscoveryError {
    #[error("Failed to find provider {addr}: no plugin binary for {os_arch} in {searched}, and terrane has no built-in provider of that name")]
    NotFound {
        addr: String,
        os_arch: String,
        searched: String,
    },
    #[error("Failed to find provider {addr}: no available version matches the constraints {constraints:?} (found: {found})")]
    NoMatchingVersion {
        addr: String,
        constraints: String,
        found: String,
    },
    #[error("Locked provider {addr} {locked} does not match the configured version constraints {constraints:?}; run init -upgrade to allow selecting a new version")]
    LockedVersionExcluded {
        addr: String,
        locked: String,
        constraints: String,
    },
    #[error("Failed to find provider {addr} {locked}, the version recorded in the dependency lock file (found: {found})")]
    LockedVersionMissing {
        addr: String,
        locked: String,
        found: String,
    },
    #[error("The package for {addr} {version} at {dir} does not match any of the checksums recorded in the dependency lock file")]
    HashMismatch {
        addr: String,
        version: String,
        dir: String,
    },
    #[error("dev_overrides: no executable terraform-provider-{type_name} in {dir} (for {addr})")]
    BadOverride {
        addr: String,
        type_name: String,
        dir: String,
    },
    #[error("Cannot hash the package at {dir}: {source}")]
    Io { dir: String, source: std::io::Error },
}

/// What discovery looks at; build one per run.
#[derive(Clone, Debug)]
pub struct Discovery {
    pub cli_config: CliConfig,
    /// Where `init` installs packages (`<data dir>/providers`), searched
    /// first; `None` to leave installed packages out.
    pub installed_dir: Option<PathBuf>,
    /// The plugin directory (default `<working dir>/.terrane/plugins`).
    pub plugin_dir: PathBuf,
    /// Implied mirrors used when the CLI configuration has no
    /// `provider_installation` block.
    pub implied_mirrors: Vec<PathBuf>,
    pub os_arch: String,
    /// The in-process providers the embedding program registered.
    pub builtins: Builtins,
}

impl Discovery {
    /// Discovery for `working_dir` with the given CLI configuration and
    /// built-in providers.
    pub fn new(working_dir: &Path, cli_config: CliConfig, builtins: Builtins) -> Discovery {
        let mut implied_mirrors = vec![working_dir.join("terraform.d/plugins")];
        if let Some(home) = std::env::var_os("HOME") {
            implied_mirrors.push(PathBuf::from(home).join(".terraform.d/plugins"));
        }
        Discovery {
            cli_config,
            installed_dir: Some(data_dir(working_dir).join("providers")),
            plugin_dir: working_dir.join(PLUGIN_DIR),
            implied_mirrors,
            os_arch: plugindir::current_os_arch(),
            builtins,
        }
    }

    /// The directories searched for packages of `addr`, in order.
    pub fn search_dirs(&self, addr: &ProviderAddr) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = self.installed_dir.iter().cloned().collect();
        dirs.extend(match &self.cli_config.methods {
            Some(_) => self
                .cli_config
                .mirrors_for(addr)
                .into_iter()
                .map(Path::to_path_buf)
                .collect(),
            None => self.implied_mirrors.clone(),
        });
        dirs.push(self.plugin_dir.clone());
        dirs
    }

    /// Finds the provider for `addr` under `constraints` and the lock.
    pub fn resolve(
        &self,
        addr: &ProviderAddr,
        constraints: &Constraints,
        lock: &LockFile,
    ) -> Result<ProviderSource, DiscoveryError> {
        let builtin = self.builtins.for_addr(addr);
        if let Some(b) = builtin.filter(|_| !Builtins::overridable(addr)) {
            return Ok(ProviderSource::Builtin(b.clone()));
        }
        if let Some(dir) = self.cli_config.dev_overrides.get(addr) {
            let binary = if dir.is_file() {
                Some(dir.clone())
            } else {
                plugindir::find_binary(dir, &addr.type_name)
            };
            let binary = binary.ok_or_else(|| DiscoveryError::BadOverride {
                addr: addr.to_string(),
                type_name: addr.type_name.clone(),
                dir: dir.display().to_string(),
            })?;
            return Ok(ProviderSource::Plugin(PluginSource {
                binary,
                version: None,
                h1: None,
                dev_override: true,
            }));
        }
        if addr.host == crate::provider::addr::DEFAULT_HOST
            && addr.namespace == crate::provider::pulumi::NAMESPACE
        {
            return crate::provider::pulumi::discover(
                &addr.type_name,
                constraints,
                &self.plugin_dir,
            )
            .map(ProviderSource::Pulumi)
            .map_err(|searched| DiscoveryError::NotFound {
                addr: addr.to_string(),
                os_arch: self.os_arch.clone(),
                searched,
            });
        }
        let dirs = self.search_dirs(addr);
        let packages: Vec<plugindir::Package> = dirs
            .iter()
            .flat_map(|d| plugindir::packages(d, addr, &self.os_arch))
            .collect();
        if !packages.is_empty() {
            return self
                .select(addr, constraints, lock, &packages)
                .map(ProviderSource::Plugin);
        }
        if let Some(b) = builtin {
            return Ok(ProviderSource::Builtin(b.clone()));
        }
        Err(DiscoveryError::NotFound {
            addr: addr.to_string(),
            os_arch: self.os_arch.clone(),
            searched: dirs
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
        })
    }

    fn select(
        &self,
        addr: &ProviderAddr,
        constraints: &Constraints,
        lock: &LockFile,
        packages: &[plugindir::Package],
    ) -> Result<PluginSource, DiscoveryError> {
        let mut found: Vec<&Version> = packages.iter().map(|p| &p.version).collect();
        found.sort();
        found.dedup();
        let found_text = || {
            found
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let locked = lock.providers.get(addr);
        let version = match locked {
            Some(l) => {
                if !constraints.is_empty() && !constraints.allows(&l.version) {
                    return Err(DiscoveryError::LockedVersionExcluded {
                        addr: addr.to_string(),
                        locked: l.version.to_string(),
                        constraints: constraints.to_string(),
                    });
                }
                l.version.clone()
            }
            None => constraints
                .newest(found.iter().copied())
                .cloned()
                .ok_or_else(|| DiscoveryError::NoMatchingVersion {
                    addr: addr.to_string(),
                    constraints: constraints.to_string(),
                    found: found_text(),
                })?,
        };
        // `packages` keeps directory order, so the first match is the
        // first directory holding that version.
        let Some(p) = packages.iter().find(|p| p.version == version) else {
            return Err(DiscoveryError::LockedVersionMissing {
                addr: addr.to_string(),
                locked: version.to_string(),
                found: found_text(),
            });
        };
        let h1 = hash_dir(&p.dir).map_err(|source| DiscoveryError::Io {
            dir: p.dir.display().to_string(),
            source,
        })?;
        if locked.is_some_and(|l| !l.accepts_h1(&h1)) {
            return Err(DiscoveryError::HashMismatch {
                addr: addr.to_string(),
                version: version.to_string(),
                dir: p.dir.display().to_string(),
            });
        }
        Ok(PluginSource {
            binary: p.binary.clone(),
            version: Some(version),
            h1: Some(h1),
            dev_override: false,
        })
    }
}

/// A literal string expression (`"x"`), as config files write them.
pub(crate) fn hcl_string(e: &terrane_hcl::expr::Expression) -> Option<String> {
    match e {
        terrane_hcl::expr::Expression::String(s) => Some(s.as_str().to_string()),
        _ => None,
    }
}

/// A list of literal strings (`["a", "b"]`).
pub(crate) fn hcl_strings(e: &terrane_hcl::expr::Expression) -> Option<Vec<String>> {
    match e {
        terrane_hcl::expr::Expression::Array(a) => a.iter().map(hcl_string).collect(),
        _ => None,
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod data_dir_tests {
    #[test]
    fn item1_data_dir_follows_tf_data_dir() {
        let check = |case: &str, value: Option<&str>, want: &str| {
            let got = super::data_dir_for(std::path::Path::new("/w"), value.map(Into::into));
            assert_eq!(got, std::path::PathBuf::from(want), "case {case}");
        };
        check("unset", None, "/w/.terraform");
        check("empty_is_unset", Some(""), "/w/.terraform");
        check("relative", Some("elsewhere/data"), "/w/elsewhere/data");
        check("absolute", Some("/var/data"), "/var/data");
    }
}
