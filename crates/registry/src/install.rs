//! Installing providers as `terraform init` does: for each required
//! provider, a version (the locked one, or the newest the merged
//! constraints allow among the versions speaking a protocol terrane
//! speaks), its package for this platform from the registry (service
//! discovery, download metadata, signed SHA256SUMS, the zip's SHA-256),
//! unpacked into `<data dir>/providers/<host>/<ns>/<type>/<version>/<os_arch>`
//! and recorded in the lock file with its `h1:` and `zh:` hashes (a `zh:`
//! for every line of the signed SHA256SUMS, as Terraform records them).
//!
//! Nothing half-installed remains: a package is downloaded and unpacked in
//! a temporary directory inside the providers directory (same file
//! system), verified, and only then renamed into place. A temporary
//! directory is removed when its install fails.

use crate::http::{Client, HttpError, Url};
use crate::sums;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use terrane_engine::provider::discovery::cliconfig::CliConfig;
use terrane_engine::provider::discovery::lockfile::{hash_dir, LockedProvider};
use terrane_engine::provider::discovery::plugindir;
use terrane_engine::provider::discovery::version::{Constraints, Version};
use terrane_engine::provider::ProviderAddr;

/// The plugin protocol major versions terrane speaks.
pub const PROTOCOLS: &[u32] = &[5, 6];

/// Why a provider could not be installed. Every message names the
/// provider (or host) and the reason; none contains a credential.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("Failed to query available provider packages for {addr}: {reason}")]
    Query { addr: String, reason: String },
    #[error("Failed to query available provider packages for {addr}: no available releases match the given constraints {constraints} (available: {available})")]
    NoMatch {
        addr: String,
        constraints: String,
        available: String,
    },
    #[error("Locked provider {addr} {locked} does not match the configured version constraints {constraints}; run init -upgrade to allow selecting a new version")]
    LockedExcluded {
        addr: String,
        locked: String,
        constraints: String,
    },
    #[error("Error while installing {addr} v{version} from {source_url}: {reason}")]
    Install {
        addr: String,
        version: String,
        source_url: String,
        reason: String,
    },
    #[error("Error while installing {addr} v{version}: the cached package in {path} (checksum {got}) does not match {expected}; it was altered after it was cached. Remove it from the plugin cache directory and run init again")]
    CacheTampered {
        addr: String,
        version: String,
        path: String,
        got: String,
        expected: String,
    },
    #[error("Error while installing {addr} v{version}: the downloaded package's checksums {got} do not match any of the checksums recorded in the dependency lock file ({locked})")]
    LockMismatch {
        addr: String,
        version: String,
        got: String,
        locked: String,
    },
}

/// What the installer needs to know about one provider.
#[derive(Clone, Debug)]
pub struct Requirement {
    pub addr: ProviderAddr,
    pub constraints: Constraints,
    /// The lock file's entry, when there is one.
    pub locked: Option<LockedProvider>,
    /// The network mirror (base URL) to install from instead of the
    /// provider's registry.
    pub mirror: Option<String>,
    /// A packed filesystem-mirror package to install (its version already
    /// selected) instead of anything remote.
    pub packed: Option<crate::packed::PackedZip>,
}

/// The result for one provider.
#[derive(Clone, Debug)]
pub struct Installed {
    pub addr: ProviderAddr,
    pub version: Version,
    /// The unpacked package directory.
    pub dir: PathBuf,
    /// Hashes to lock: the old ones (same version), `h1:` of the package,
    /// and a `zh:` for every line of the signed SHA256SUMS.
    pub hashes: Vec<String>,
    /// `Some(key id)` when downloaded now; `None` when an installed copy
    /// was reused.
    pub signed_by: Option<String>,
    /// Linked from the plugin cache directory without a download.
    pub from_cache: bool,
}

/// The registry's answer to `GET <providers.v1><ns>/<type>/versions`.
#[derive(Deserialize)]
struct VersionList {
    versions: Vec<VersionEntry>,
}

#[derive(Deserialize)]
struct VersionEntry {
    version: String,
    #[serde(default)]
    protocols: Vec<String>,
}

/// The answer to `.../<version>/download/<os>/<arch>`.
#[derive(Deserialize)]
struct DownloadMeta {
    #[serde(default)]
    protocols: Vec<String>,
    filename: String,
    download_url: String,
    shasums_url: String,
    shasums_signature_url: String,
    shasum: String,
    signing_keys: SigningKeys,
}

#[derive(Deserialize)]
struct SigningKeys {
    #[serde(default)]
    gpg_public_keys: Vec<GpgKey>,
}

#[derive(Deserialize)]
struct GpgKey {
    ascii_armor: String,
}

/// A downloaded, verified package in a temporary directory.
pub struct Fetched {
    /// The zip's file name (`terraform-provider-x_1.0.0_linux_amd64.zip`).
    pub file_name: String,
    pub zip_url: String,
    pub zip_path: PathBuf,
    pub unpacked: PathBuf,
    /// `h1:` of the unpacked package.
    pub h1: String,
    /// `zh:` of the zip.
    pub zh: String,
    /// Hashes to record besides `h1` (a `zh:` for every line of the
    /// signed SHA256SUMS, or the mirror's).
    pub lock_hashes: Vec<String>,
    pub key_id: Option<String>,
    _tmp: tempfile::TempDir,
}

/// A package to download and what it must match.
struct Package {
    file_name: String,
    zip_url: String,
    /// The zip's SHA-256 the signed checksums list (registry).
    zip_sha256: Option<String>,
    /// The key that signed the checksums (registry).
    key_id: Option<String>,
    /// Hashes to record besides the package's own `h1:`.
    lock_hashes: Vec<String>,
    /// Hashes one of which the package must have (network mirror).
    acceptable: Vec<String>,
}

/// A network mirror's `index.json`.
#[derive(Deserialize)]
struct MirrorIndex {
    versions: BTreeMap<String, serde_json::Value>,
}

/// A network mirror's `<version>.json`.
#[derive(Deserialize)]
struct MirrorVersion {
    archives: BTreeMap<String, MirrorArchive>,
}

#[derive(Deserialize)]
struct MirrorArchive {
    url: String,
    #[serde(default)]
    hashes: Vec<String>,
}

/// Whether one of `protocols` (`"5.0"`, `"6"`) has a major we speak. An
/// empty list is allowed (older registries omit it).
fn speaks(protocols: &[String]) -> bool {
    protocols.is_empty()
        || protocols.iter().any(|p| {
            p.split('.')
                .next()
                .and_then(|m| m.parse::<u32>().ok())
                .is_some_and(|m| PROTOCOLS.contains(&m))
        })
}

/// The installer for one `init`.
#[derive(Clone, Debug)]
pub struct Installer {
    pub(crate) client: Client,
    pub(crate) cli: CliConfig,
    /// `<data dir>/providers`.
    pub providers_dir: PathBuf,
    pub os_arch: String,
    /// The shared plugin cache directory (`TF_PLUGIN_CACHE_DIR`, else the
    /// CLI configuration's `plugin_cache_dir`), same layout.
    pub cache_dir: Option<PathBuf>,
    /// Service discovery's answers by "host service-id", asked once per `init`.
    services: std::sync::Arc<std::sync::Mutex<BTreeMap<String, String>>>,
}

/// Bearer tokens: the CLI configuration's `credentials` blocks, then
/// `TF_TOKEN_<host>` variables (dots as `_`, dashes as `__`), which win.
pub fn tokens(cli: &CliConfig) -> BTreeMap<String, String> {
    tokens_from(
        cli,
        std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))),
    )
}

/// [`tokens`] over the given environment.
pub fn tokens_from(
    cli: &CliConfig,
    vars: impl Iterator<Item = (String, String)>,
) -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, String> = cli
        .credentials
        .iter()
        .map(|(h, s)| (h.clone(), s.0.clone()))
        .collect();
    for (k, v) in vars {
        if let Some(host) = k.strip_prefix("TF_TOKEN_") {
            if host.is_empty() || v.is_empty() {
                continue;
            }
            let host = host
                .replace("__", "\u{0}")
                .replace('_', ".")
                .replace('\u{0}', "-")
                .to_ascii_lowercase();
            out.insert(host, v.to_string());
        }
    }
    out
}

impl Installer {
    pub fn new(
        cli: CliConfig,
        providers_dir: PathBuf,
        timeout: std::time::Duration,
    ) -> Result<Installer, HttpError> {
        let client = Client::new(tokens(&cli), timeout)?;
        let cache_dir = std::env::var_os("TF_PLUGIN_CACHE_DIR")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .or_else(|| cli.plugin_cache_dir.clone());
        Ok(Installer {
            client,
            cli,
            providers_dir,
            os_arch: plugindir::current_os_arch(),
            cache_dir,
            services: Default::default(),
        })
    }

    /// The base URL of `host`'s `providers.v1` service: the CLI
    /// configuration's `host` block, else `/.well-known/terraform.json`.
    pub async fn provider_service(&self, addr: &ProviderAddr) -> Result<String, InstallError> {
        self.service(&addr.host, "providers.v1")
            .await
            .map_err(|reason| InstallError::Query {
                addr: addr.to_string(),
                reason,
            })
    }

    /// The base URL of `host`'s service `id` (`providers.v1`,
    /// `modules.v1`): the CLI configuration's `host` block, else the
    /// host's `/.well-known/terraform.json`.
    pub async fn service(&self, host: &str, id: &str) -> Result<String, String> {
        let host = host.to_ascii_lowercase();
        if let Some(services) = self.cli.hosts.get(&host) {
            return services.get(id).cloned().ok_or_else(|| {
                format!("the CLI configuration's host block for {host} offers no {id} service")
            });
        }
        let key = format!("{host} {id}");
        if let Some(known) = self.services.lock().ok().and_then(|s| s.get(&key).cloned()) {
            return Ok(known);
        }
        let well_known = format!("https://{host}/.well-known/terraform.json");
        let body = self
            .client
            .get(&well_known)
            .await
            .map_err(|e| format!("service discovery failed: {e}"))?;
        let doc: serde_json::Value = serde_json::from_slice(&body).map_err(|e| {
            format!("service discovery failed: {well_known} is not a JSON document: {e}")
        })?;
        let service = doc.get(id).and_then(|v| v.as_str()).ok_or_else(|| {
            let what = if id == "modules.v1" {
                "module"
            } else {
                "provider"
            };
            format!("host {host} does not offer a Terraform {what} registry")
        })?;
        let base = Url::parse(&well_known)
            .map_err(|e| e.to_string())?
            .join(service);
        if let Ok(mut s) = self.services.lock() {
            s.insert(key, base.clone());
        }
        Ok(base)
    }

    /// The versions of `addr` that speak our protocols, newest first.
    pub async fn versions(&self, addr: &ProviderAddr) -> Result<Vec<Version>, InstallError> {
        let q = |reason: String| InstallError::Query {
            addr: addr.to_string(),
            reason,
        };
        let base = self.provider_service(addr).await?;
        let url = Url::parse(&base)
            .map_err(|e| q(e.to_string()))?
            .join(&format!("{}/{}/versions", addr.namespace, addr.type_name));
        let body = self.client.get(&url).await.map_err(|e| match e {
            HttpError::Status { status: 404, .. } => q(format!(
                "provider registry {} does not have a provider named {addr}",
                addr.host
            )),
            e => q(e.to_string()),
        })?;
        let list: VersionList = serde_json::from_slice(&body).map_err(|e| {
            q(format!(
                "the registry's answer from {url} is not a version list: {e}"
            ))
        })?;
        let mut out: Vec<Version> = list
            .versions
            .iter()
            .filter(|v| speaks(&v.protocols))
            .filter_map(|v| Version::parse(&v.version).ok())
            .collect();
        out.sort();
        out.reverse();
        out.dedup();
        Ok(out)
    }

    /// The directory a package of `addr` `version` is installed in.
    pub fn package_dir(&self, addr: &ProviderAddr, version: &Version) -> PathBuf {
        self.package_dir_in(&self.providers_dir, addr, version)
    }

    fn package_dir_in(&self, root: &Path, addr: &ProviderAddr, version: &Version) -> PathBuf {
        root.join(&addr.host)
            .join(&addr.namespace)
            .join(&addr.type_name)
            .join(version.to_string())
            .join(&self.os_arch)
    }

    /// The version to install for `req`: the locked one (unless
    /// `upgrade`), which must still meet the constraints; else the newest
    /// allowed one.
    pub async fn select(&self, req: &Requirement, upgrade: bool) -> Result<Version, InstallError> {
        if let Some(p) = &req.packed {
            return Ok(p.version.clone());
        }
        if let Some(l) = req.locked.as_ref().filter(|_| !upgrade) {
            if !req.constraints.allows(&l.version) {
                return Err(InstallError::LockedExcluded {
                    addr: req.addr.to_string(),
                    locked: l.version.to_string(),
                    constraints: req.constraints.to_string(),
                });
            }
            return Ok(l.version.clone());
        }
        let versions = match &req.mirror {
            Some(base) => self.mirror_versions(&req.addr, base).await?,
            None => self.versions(&req.addr).await?,
        };
        req.constraints
            .newest(versions.iter())
            .cloned()
            .ok_or_else(|| InstallError::NoMatch {
                addr: req.addr.to_string(),
                constraints: if req.constraints.is_empty() {
                    "(none)".into()
                } else {
                    req.constraints.to_string()
                },
                available: if versions.is_empty() {
                    "none".into()
                } else {
                    versions
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                },
            })
    }

    /// An installed copy of `version` that the lock accepts (when the
    /// lock has `h1:` hashes for this version); its `h1:` hash.
    /// As Terraform does, the installed tree is hashed once (nothing is
    /// downloaded or unpacked again); without a lock entry for the
    /// version there is nothing to vouch for it.
    pub async fn reusable(
        &self,
        req: &Requirement,
        version: &Version,
    ) -> Option<(PathBuf, String)> {
        let locked = req.locked.as_ref().filter(|l| &l.version == version)?;
        let dir = self.package_dir(&req.addr, version);
        plugindir::find_binary(&dir, &req.addr.type_name)?;
        let h1 = hash_dir_blocking(dir.clone()).await.ok()?;
        locked.hashes.contains(&h1).then_some((dir, h1))
    }

    /// Where the registry's package of `version` for this platform is,
    /// after its SHA256SUMS signature and entry were checked.
    async fn registry_package(
        &self,
        addr: &ProviderAddr,
        version: &Version,
        os_arch: &str,
    ) -> Result<Package, InstallError> {
        let (os, arch) = os_arch.split_once('_').unwrap_or((os_arch, ""));
        let base = self.provider_service(addr).await?;
        let meta_url = Url::parse(&base)
            .map_err(|e| InstallError::Query {
                addr: addr.to_string(),
                reason: e.to_string(),
            })?
            .join(&format!(
                "{}/{}/{version}/download/{os}/{arch}",
                addr.namespace, addr.type_name
            ));
        let fail = |url: &str, reason: String| InstallError::Install {
            addr: addr.to_string(),
            version: version.to_string(),
            source_url: url.to_string(),
            reason,
        };
        let body = self.client.get(&meta_url).await.map_err(|e| match e {
            HttpError::Status { status: 404, .. } => fail(
                &meta_url,
                format!("the registry has no package of this version for {os}_{arch}"),
            ),
            e => fail(&meta_url, e.to_string()),
        })?;
        let meta: DownloadMeta = serde_json::from_slice(&body).map_err(|e| {
            fail(
                &meta_url,
                format!("the registry's answer is not a package description: {e}"),
            )
        })?;
        if !speaks(&meta.protocols) {
            return Err(fail(
                &meta_url,
                format!(
                    "the package speaks plugin protocols {:?}; terrane speaks 5 and 6",
                    meta.protocols
                ),
            ));
        }
        let meta_base = Url::parse(&meta_url).map_err(|e| fail(&meta_url, e.to_string()))?;
        let sums_url = meta_base.join(&meta.shasums_url);
        let sig_url = meta_base.join(&meta.shasums_signature_url);
        let zip_url = meta_base.join(&meta.download_url);
        let sums_doc = self
            .client
            .get(&sums_url)
            .await
            .map_err(|e| fail(&sums_url, e.to_string()))?;
        let signature = self
            .client
            .get(&sig_url)
            .await
            .map_err(|e| fail(&sig_url, e.to_string()))?;
        let keys: Vec<String> = meta
            .signing_keys
            .gpg_public_keys
            .iter()
            .map(|k| k.ascii_armor.clone())
            .collect();
        if keys.is_empty() {
            return Err(fail(&meta_url, "the registry lists no signing keys".into()));
        }
        let key_id = sums::verify(&sums_doc, &signature, &keys)
            .map_err(|e| fail(&sig_url, e.to_string()))?;
        let sums_text = std::str::from_utf8(&sums_doc)
            .map_err(|_| fail(&sums_url, "the SHA256SUMS document is not text".into()))?;
        let sums = sums::parse(sums_text).map_err(|e| fail(&sums_url, e))?;
        let listed = sums
            .iter()
            .find(|s| s.file == meta.filename)
            .ok_or_else(|| {
                fail(
                    &sums_url,
                    format!("the signed checksums have no entry for {}", meta.filename),
                )
            })?;
        if !listed.sha256.eq_ignore_ascii_case(&meta.shasum) {
            return Err(fail(
                &sums_url,
                format!(
                    "the signed checksums list SHA-256 {} for {}, but the registry says {}",
                    listed.sha256, meta.filename, meta.shasum
                ),
            ));
        }
        Ok(Package {
            file_name: meta.filename.clone(),
            zip_url,
            zip_sha256: Some(listed.sha256.clone()),
            key_id: Some(key_id),
            // Every line of the signed document, as Terraform records
            // them (other platforms' zips and the manifest alike).
            lock_hashes: sums.iter().map(|s| format!("zh:{}", s.sha256)).collect(),
            acceptable: Vec::new(),
        })
    }

    /// The versions a network mirror (`base`, ending in `/`) offers for
    /// `addr`: `<base><host>/<ns>/<type>/index.json`.
    async fn mirror_versions(
        &self,
        addr: &ProviderAddr,
        base: &str,
    ) -> Result<Vec<Version>, InstallError> {
        let q = |reason: String| InstallError::Query {
            addr: addr.to_string(),
            reason,
        };
        let url = Url::parse(base)
            .map_err(|e| q(format!("network mirror: {e}")))?
            .join(&format!(
                "{}/{}/{}/index.json",
                addr.host, addr.namespace, addr.type_name
            ));
        let body = self.client.get_json(&url).await.map_err(|e| match e {
            HttpError::Status { status: 404, .. } => q(format!(
                "the network mirror at {base} has no provider named {addr}"
            )),
            e => q(format!("network mirror: {e}")),
        })?;
        let index: MirrorIndex = serde_json::from_slice(&body).map_err(|e| {
            q(format!(
                "the network mirror's answer from {url} is not a version index: {e}"
            ))
        })?;
        let mut out: Vec<Version> = index
            .versions
            .keys()
            .filter_map(|v| Version::parse(v).ok())
            .collect();
        out.sort();
        out.reverse();
        Ok(out)
    }

    /// Where the network mirror's package of `version` for this platform
    /// is, with the checksums it must match
    /// (`<base><host>/<ns>/<type>/<version>.json`).
    async fn mirror_package(
        &self,
        addr: &ProviderAddr,
        version: &Version,
        base: &str,
        os_arch: &str,
    ) -> Result<Package, InstallError> {
        let fail = |url: &str, reason: String| InstallError::Install {
            addr: addr.to_string(),
            version: version.to_string(),
            source_url: url.to_string(),
            reason,
        };
        let url = Url::parse(base)
            .map_err(|e| fail(base, e.to_string()))?
            .join(&format!(
                "{}/{}/{}/{version}.json",
                addr.host, addr.namespace, addr.type_name
            ));
        let body = self
            .client
            .get_json(&url)
            .await
            .map_err(|e| fail(&url, e.to_string()))?;
        let doc: MirrorVersion = serde_json::from_slice(&body).map_err(|e| {
            fail(
                &url,
                format!("the network mirror's answer is not a package list: {e}"),
            )
        })?;
        let archive = doc.archives.get(os_arch).ok_or_else(|| {
            fail(
                &url,
                format!("the network mirror has no package for {os_arch}"),
            )
        })?;
        let zip_url = Url::parse(&url)
            .map_err(|e| fail(&url, e.to_string()))?
            .join(&archive.url);
        let file_name = format!(
            "terraform-provider-{}_{version}_{os_arch}.zip",
            addr.type_name
        );
        Ok(Package {
            file_name,
            zip_url,
            zip_sha256: None,
            key_id: None,
            lock_hashes: archive.hashes.clone(),
            acceptable: archive.hashes.clone(),
        })
    }

    /// Downloads and verifies the package of `version` for `os_arch` into a
    /// temporary directory under `staging` (removed when the result is
    /// dropped): the zip and its unpacked contents, with their hashes.
    pub async fn fetch(
        &self,
        req: &Requirement,
        version: &Version,
        os_arch: &str,
        staging: &Path,
    ) -> Result<Fetched, InstallError> {
        let addr = &req.addr;
        let pkg = match &req.mirror {
            Some(base) => self.mirror_package(addr, version, base, os_arch).await?,
            None => self.registry_package(addr, version, os_arch).await?,
        };
        let zip_url = pkg.zip_url.clone();
        let fail = |url: &str, reason: String| InstallError::Install {
            addr: addr.to_string(),
            version: version.to_string(),
            source_url: url.to_string(),
            reason,
        };
        // Download and unpack in a temporary directory on the same file
        // system; it is removed when anything below fails.
        std::fs::create_dir_all(staging).map_err(|e| {
            fail(
                &zip_url,
                format!("cannot create {}: {e}", staging.display()),
            )
        })?;
        let tmp = tempfile::Builder::new()
            .prefix(".terrane-install-")
            .tempdir_in(staging)
            .map_err(|e| {
                fail(
                    &zip_url,
                    format!("cannot create a temporary directory: {e}"),
                )
            })?;
        let zip_path = tmp.path().join("package.zip");
        let mut file = tokio::fs::File::create(&zip_path)
            .await
            .map_err(|e| fail(&zip_url, e.to_string()))?;
        // The zip is hashed as it arrives, and inflated and hashed (`h1:`)
        // in one pass on a blocking thread: a package is read once and
        // unpacked once, and several unpack at the same time.
        let (_, got) = self
            .client
            .download(&zip_url, &mut file)
            .await
            .map_err(|e| fail(&zip_url, e.to_string()))?;
        drop(file);
        if let Some(want) = pkg.zip_sha256.as_ref().filter(|w| **w != got) {
            return Err(fail(
                &zip_url,
                format!("archive has incorrect checksum zh:{got} (expected zh:{want})"),
            ));
        }
        let unpacked = tmp.path().join("package");
        let h1 = blocking({
            let (zip_path, unpacked) = (zip_path.clone(), unpacked.clone());
            move || unpack(&zip_path, &unpacked)
        })
        .await
        .map_err(|e| fail(&zip_url, e))?;
        if plugindir::find_binary(&unpacked, &addr.type_name).is_none() {
            return Err(fail(
                &zip_url,
                format!(
                    "the package holds no executable terraform-provider-{}",
                    addr.type_name
                ),
            ));
        }
        let zh_own = format!("zh:{got}");
        if !pkg.acceptable.is_empty()
            && !pkg.acceptable.contains(&h1)
            && !pkg.acceptable.contains(&zh_own)
        {
            return Err(fail(
                &zip_url,
                format!(
                    "the package's checksums {h1}, {zh_own} match none of the mirror's ({})",
                    pkg.acceptable.join(", ")
                ),
            ));
        }
        Ok(Fetched {
            file_name: pkg.file_name,
            zip_url,
            zip_path,
            unpacked,
            h1,
            zh: zh_own,
            lock_hashes: pkg.lock_hashes,
            key_id: pkg.key_id,
            _tmp: tmp,
        })
    }

    /// Installs `version` of `req.addr`: downloads, verifies, unpacks and
    /// renames into place (replacing an installed copy that failed the
    /// lock's checksums).
    pub async fn install(
        &self,
        req: &Requirement,
        version: &Version,
    ) -> Result<Installed, InstallError> {
        let addr = &req.addr;
        if let Some(p) = req.packed.as_ref().filter(|p| &p.version == version) {
            return self.install_packed(req, &p.zip, version).await;
        }
        let locked = req.locked.as_ref().filter(|l| &l.version == version);
        if let Some(cache) = &self.cache_dir {
            let cached = self.package_dir_in(cache, addr, version);
            if plugindir::find_binary(&cached, &addr.type_name).is_some() {
                if let Some(l) = locked.filter(|l| l.hashes.iter().any(|h| h.starts_with("h1:"))) {
                    let h1 = hash_dir_blocking(cached.clone()).await.unwrap_or_default();
                    if !l.hashes.contains(&h1) {
                        return Err(InstallError::CacheTampered {
                            addr: addr.to_string(),
                            version: version.to_string(),
                            path: cached.display().to_string(),
                            got: h1,
                            expected: "any of the checksums recorded in the dependency lock file"
                                .into(),
                        });
                    }
                    let dest = self.package_dir(addr, version);
                    link(&cached, &dest).map_err(|reason| InstallError::Install {
                        addr: addr.to_string(),
                        version: version.to_string(),
                        source_url: cached.display().to_string(),
                        reason,
                    })?;
                    return Ok(Installed {
                        addr: addr.clone(),
                        version: version.clone(),
                        dir: dest,
                        hashes: l.hashes.clone(),
                        signed_by: None,
                        from_cache: true,
                    });
                }
            }
        }
        // With a plugin cache the package is staged inside the cache (one
        // rename puts it in place, no copy); else inside the providers
        // directory.
        let staging = self.cache_dir.as_deref().unwrap_or(&self.providers_dir);
        let fetched = self.fetch(req, version, &self.os_arch, staging).await?;
        let (zip_url, unpacked, h1, zh_own) = (
            fetched.zip_url.clone(),
            fetched.unpacked.clone(),
            fetched.h1.clone(),
            fetched.zh.clone(),
        );
        let fail = |url: &str, reason: String| InstallError::Install {
            addr: addr.to_string(),
            version: version.to_string(),
            source_url: url.to_string(),
            reason,
        };
        if let Some(l) = locked.filter(|l| !l.hashes.is_empty()) {
            if !l.hashes.contains(&h1) && !l.hashes.contains(&zh_own) {
                return Err(InstallError::LockMismatch {
                    addr: addr.to_string(),
                    version: version.to_string(),
                    got: format!("{h1}, {zh_own}"),
                    locked: l.hashes.join(", "),
                });
            }
        }
        let mut hashes: Vec<String> = locked.map(|l| l.hashes.clone()).unwrap_or_default();
        hashes.push(h1.clone());
        hashes.extend(fetched.lock_hashes.iter().cloned());
        hashes.sort();
        hashes.dedup();
        let dest = self.package_dir(addr, version);
        match &self.cache_dir {
            Some(cache) => {
                // Into the shared cache first (another init may get there
                // first: its copy must then be the same package), then
                // linked into the working directory.
                let cached = self.package_dir_in(cache, addr, version);
                let parent = cached.parent().unwrap_or(cache);
                std::fs::create_dir_all(parent).map_err(|e| {
                    fail(&zip_url, format!("cannot create {}: {e}", parent.display()))
                })?;
                if std::fs::rename(&unpacked, &cached).is_err() {
                    let theirs = hash_dir_blocking(cached.clone()).await.unwrap_or_default();
                    if theirs != h1 {
                        return Err(InstallError::CacheTampered {
                            addr: addr.to_string(),
                            version: version.to_string(),
                            path: cached.display().to_string(),
                            got: theirs,
                            expected: format!("the verified download ({h1})"),
                        });
                    }
                }
                link(&cached, &dest).map_err(|e| fail(&zip_url, e))?;
            }
            None => {
                let parent = dest.parent().unwrap_or(&self.providers_dir);
                std::fs::create_dir_all(parent).map_err(|e| {
                    fail(&zip_url, format!("cannot create {}: {e}", parent.display()))
                })?;
                remove_existing(&dest).map_err(|e| fail(&zip_url, e))?;
                std::fs::rename(&unpacked, &dest).map_err(|e| {
                    fail(
                        &zip_url,
                        format!("cannot move the package into {}: {e}", dest.display()),
                    )
                })?;
            }
        }
        Ok(Installed {
            addr: addr.clone(),
            version: version.clone(),
            dir: dest,
            hashes,
            signed_by: fetched.key_id.clone(),
            from_cache: false,
        })
    }
}

impl Installer {
    /// Installs a packed filesystem-mirror package: unpacked (and hashed)
    /// in a temporary directory inside the providers directory, checked
    /// against the lock (its `h1:`, else the zip's `zh:`), then renamed
    /// into place. Only its `h1:` is recorded, as Terraform records it:
    /// nothing signed vouches for a mirror's zip.
    async fn install_packed(
        &self,
        req: &Requirement,
        zip: &Path,
        version: &Version,
    ) -> Result<Installed, InstallError> {
        let addr = &req.addr;
        let source = zip.display().to_string();
        let fail = |reason: String| InstallError::Install {
            addr: addr.to_string(),
            version: version.to_string(),
            source_url: source.clone(),
            reason,
        };
        std::fs::create_dir_all(&self.providers_dir).map_err(|e| {
            fail(format!(
                "cannot create {}: {e}",
                self.providers_dir.display()
            ))
        })?;
        let tmp = tempfile::Builder::new()
            .prefix(".terrane-install-")
            .tempdir_in(&self.providers_dir)
            .map_err(|e| fail(format!("cannot create a temporary directory: {e}")))?;
        let unpacked = tmp.path().join("package");
        let h1 = blocking({
            let (zip, unpacked) = (zip.to_path_buf(), unpacked.clone());
            move || unpack(&zip, &unpacked)
        })
        .await
        .map_err(&fail)?;
        if plugindir::find_binary(&unpacked, &addr.type_name).is_none() {
            return Err(fail(format!(
                "the package holds no executable terraform-provider-{}",
                addr.type_name
            )));
        }
        let locked = req.locked.as_ref().filter(|l| &l.version == version);
        if let Some(l) = locked.filter(|l| !l.hashes.is_empty() && !l.hashes.contains(&h1)) {
            let zip = zip.to_path_buf();
            let zh = blocking(move || {
                let mut f = std::fs::File::open(&zip).map_err(|e| e.to_string())?;
                let mut sha = Sha256::new();
                std::io::copy(&mut f, &mut sha).map_err(|e| e.to_string())?;
                Ok(format!("zh:{}", hex::encode(sha.finalize())))
            })
            .await
            .map_err(&fail)?;
            if !l.hashes.contains(&zh) {
                return Err(InstallError::LockMismatch {
                    addr: addr.to_string(),
                    version: version.to_string(),
                    got: format!("{h1}, {zh}"),
                    locked: l.hashes.join(", "),
                });
            }
        }
        let mut hashes: Vec<String> = locked.map(|l| l.hashes.clone()).unwrap_or_default();
        hashes.push(h1);
        hashes.sort();
        hashes.dedup();
        let dest = self.package_dir(addr, version);
        let parent = dest.parent().unwrap_or(&self.providers_dir);
        std::fs::create_dir_all(parent)
            .map_err(|e| fail(format!("cannot create {}: {e}", parent.display())))?;
        remove_existing(&dest).map_err(&fail)?;
        std::fs::rename(&unpacked, &dest).map_err(|e| {
            fail(format!(
                "cannot move the package into {}: {e}",
                dest.display()
            ))
        })?;
        Ok(Installed {
            addr: addr.clone(),
            version: version.clone(),
            dir: dest,
            hashes,
            signed_by: None,
            from_cache: false,
        })
    }
}

/// Points `dest` at `cached` with a symbolic link (as Terraform links
/// cached packages), replacing whatever `dest` was; the link is made
/// under a temporary name and renamed into place.
fn link(cached: &Path, dest: &Path) -> Result<(), String> {
    let target = std::path::absolute(cached).map_err(|e| e.to_string())?;
    let parent = dest
        .parent()
        .ok_or_else(|| format!("{} has no parent directory", dest.display()))?;
    std::fs::create_dir_all(parent)
        .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    remove_existing(dest)?;
    let tmp = parent.join(format!(".terrane-link-{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink(&target, &tmp)
        .map_err(|e| format!("cannot link {}: {e}", dest.display()))?;
    std::fs::rename(&tmp, dest).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("cannot link {}: {e}", dest.display())
    })
}

/// Removes an installed package directory (or a symbolic link to one).
fn remove_existing(dest: &Path) -> Result<(), String> {
    match std::fs::symlink_metadata(dest) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(dest),
        Ok(_) => std::fs::remove_file(dest),
        Err(_) => Ok(()),
    }
    .map_err(|e| format!("cannot replace {}: {e}", dest.display()))
}

/// Runs `f` on a blocking thread (hashing and inflating are CPU work
/// that must not stall the other downloads on the runtime).
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, String> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| format!("the unpacking task failed: {e}"))?
}

/// [`hash_dir`] on a blocking thread.
async fn hash_dir_blocking(dir: PathBuf) -> Result<String, String> {
    blocking(move || hash_dir(&dir).map_err(|e| e.to_string())).await
}

/// Unpacks the provider zip at `zip_path` into `dir` (created), refusing
/// entries that would land outside it and keeping the files' permission
/// bits; returns the `h1:` hash of what it unpacked (the same as
/// [`hash_dir`] of `dir`), computed while inflating.
pub fn unpack(zip_path: &Path, dir: &Path) -> Result<String, String> {
    let file = std::fs::File::open(zip_path).map_err(|e| e.to_string())?;
    let mut archive = zip::ZipArchive::new(std::io::BufReader::new(file))
        .map_err(|e| format!("the package is not a valid zip archive: {e}"))?;
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    // Relative path ("/"-separated) -> SHA-256 of the file as written; a
    // repeated entry overwrites, on disk and here alike.
    let mut sums: BTreeMap<String, String> = BTreeMap::new();
    for i in 0..archive.len() {
        let mut entry = archive
            .by_index(i)
            .map_err(|e| format!("the package is not a valid zip archive: {e}"))?;
        let Some(rel) = entry.enclosed_name() else {
            return Err(format!(
                "the package holds an entry outside its directory: {:?}",
                entry.name()
            ));
        };
        let path = dir.join(&rel);
        if entry.is_dir() {
            std::fs::create_dir_all(&path).map_err(|e| e.to_string())?;
            continue;
        }
        if let Some(p) = path.parent() {
            std::fs::create_dir_all(p).map_err(|e| e.to_string())?;
        }
        let out = std::fs::File::create(&path).map_err(|e| e.to_string())?;
        let mut out = HashingWriter {
            inner: std::io::BufWriter::with_capacity(1 << 16, out),
            sha: Sha256::new(),
        };
        std::io::copy(&mut entry, &mut out)
            .and_then(|_| std::io::Write::flush(&mut out))
            .map_err(|e| format!("the package's {:?} cannot be unpacked: {e}", entry.name()))?;
        if let Some(mode) = entry.unix_mode() {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode & 0o777))
                .map_err(|e| e.to_string())?;
        }
        let rel = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        sums.insert(rel, hex::encode(out.sha.finalize()));
    }
    Ok(h1_of(&sums))
}

/// The `h1:` hash of a package from its files' SHA-256 sums (relative
/// path -> hex), as [`hash_dir`] computes it: the SHA-256 of the sorted
/// `"<sum>  <path>\n"` lines, base64.
fn h1_of(sums: &BTreeMap<String, String>) -> String {
    let mut summary = Sha256::new();
    for (path, sum) in sums {
        summary.update(format!("{sum}  {path}\n").as_bytes());
    }
    format!(
        "h1:{}",
        base64::Engine::encode(
            &base64::engine::general_purpose::STANDARD,
            summary.finalize()
        )
    )
}

/// A writer that hashes what passes through it.
struct HashingWriter<W> {
    inner: W,
    sha: Sha256,
}

impl<W: std::io::Write> std::io::Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.sha.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocols_spoken() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let cases = [
            ("five", s(&["5.0"]), true),
            ("six", s(&["6.3"]), true),
            ("four_only", s(&["4.0"]), false),
            ("seven_only", s(&["7"]), false),
            ("unlisted", s(&[]), true),
        ];
        for (case, p, want) in cases {
            assert_eq!(speaks(&p), want, "case {case}");
        }
    }

    /// The `h1:` computed while inflating is the one [`hash_dir`] computes
    /// over the unpacked files (what the lock and a later reuse compare).
    #[test]
    fn item1_unpack_hashes_in_one_pass() {
        use std::io::Write;
        let check = |case: &str, entries: &[(&str, &[u8])]| {
            let tmp = tempfile::tempdir().unwrap();
            let zip_path = tmp.path().join("p.zip");
            let mut w = zip::ZipWriter::new(std::fs::File::create(&zip_path).unwrap());
            let opts = zip::write::SimpleFileOptions::default().unix_permissions(0o755);
            for (name, bytes) in entries {
                if let Some(dir) = name.strip_suffix('/') {
                    w.add_directory(dir, opts).unwrap();
                } else {
                    w.start_file(*name, opts).unwrap();
                    w.write_all(bytes).unwrap();
                }
            }
            w.finish().unwrap();
            let out = tmp.path().join("out");
            let h1 = unpack(&zip_path, &out).unwrap_or_else(|e| panic!("case {case}: {e}"));
            assert_eq!(h1, hash_dir(&out).unwrap(), "case {case}");
        };
        check(
            "one_binary",
            &[("terraform-provider-x_v1.0.0", b"#!/bin/sh\n")],
        );
        check(
            "several_files_out_of_order",
            &[("b", b"2"), ("a", b"1"), ("LICENSE", b"text")],
        );
        check(
            "nested",
            &[("docs/", b""), ("docs/readme.md", b"hi"), ("bin", b"x")],
        );
        check("empty_file", &[("empty", b"")]);
    }

    #[test]
    fn item1_tf_token_variables() {
        let mut cli = CliConfig::default();
        cli.credentials.insert(
            "a.example.com".into(),
            terrane_engine::provider::discovery::cliconfig::Secret("from-file".into()),
        );
        let env = [
            ("TF_TOKEN_tok__test_example_com", "t0k"),
            ("TF_TOKEN_a_example_com", "from-env"),
            ("TF_TOKEN_", "ignored"),
            ("OTHER", "x"),
        ];
        let t = tokens_from(
            &cli,
            env.iter().map(|(k, v)| (k.to_string(), v.to_string())),
        );
        let got: Vec<(&str, &str)> = t.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(
            got,
            [
                ("a.example.com", "from-env"),
                ("tok-test.example.com", "t0k")
            ]
        );
    }
}
