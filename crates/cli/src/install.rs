//! What `init` and `providers lock`/`providers mirror` share: the
//! providers a configuration requires (every module's constraints
//! merged), where each may come from over the network, and the installer.

use crate::session::Ui;
use std::collections::BTreeMap;
use std::path::Path;
use terrane_config::{Config, Diagnostic};
use terrane_engine::provider::discovery::cliconfig::{CliConfig, MethodKind};
use terrane_engine::provider::discovery::lockfile::LockedProvider;
use terrane_engine::provider::discovery::version::Constraints;
use terrane_engine::provider::discovery::{data_dir, plugindir, Discovery};
use terrane_engine::provider::ProviderAddr;
use terrane_registry::packed::{self, PackedZip};
use terrane_registry::Installer;

/// Terraform's default registry client timeout, in seconds
/// (`TF_REGISTRY_CLIENT_TIMEOUT` overrides it).
const DEFAULT_TIMEOUT_SECS: u64 = 10;

/// The installer for `dir` (packages under `<data dir>/providers`).
pub fn installer(ui: &Ui, dir: &Path, cli: &CliConfig) -> Result<Installer, u8> {
    let timeout = std::env::var("TF_REGISTRY_CLIENT_TIMEOUT")
        .ok()
        .and_then(|t| t.parse::<u64>().ok())
        .filter(|t| *t > 0)
        .unwrap_or(DEFAULT_TIMEOUT_SECS);
    Installer::new(
        cli.clone(),
        data_dir(dir).join("providers"),
        std::time::Duration::from_secs(timeout),
    )
    .map_err(|e| ui.error("Failed to install providers", e.to_string()))
}

/// Where `addr` may be installed from over the network: `Some(None)` its
/// registry (no `provider_installation` block, Terraform's implied
/// `direct`, or a `direct` method admitting it), `Some(Some(url))` a
/// `network_mirror`, the first such method in file order whose
/// include/exclude admit it; `None` when no method allows either.
pub fn remote_source(cli: &CliConfig, addr: &ProviderAddr) -> Option<Option<String>> {
    match &cli.methods {
        None => Some(None),
        Some(methods) => methods
            .iter()
            .filter(|m| m.admits(addr))
            .find_map(|m| match &m.kind {
                MethodKind::Direct => Some(None),
                MethodKind::NetworkMirror(url) => Some(Some(url.clone())),
                MethodKind::FilesystemMirror(_) => None,
            }),
    }
}

/// The packed filesystem-mirror package (a release zip) `init` installs
/// for `addr`, when one is what Terraform would pick: the directories
/// discovery searches (the mirrors whose include/exclude admit `addr`, in
/// file order, then the plugin directory) offer the union of their
/// unpacked and packed versions; the version is the locked one (unless
/// `upgrade`), else the newest the constraints allow, and the first
/// directory holding it supplies it (unpacked first within a directory).
/// `None` leaves `addr` to discovery (an unpacked package, a built-in)
/// and the registry, which also report a version the lock or the
/// constraints exclude.
pub fn packed_choice(
    local: &Discovery,
    addr: &ProviderAddr,
    constraints: &Constraints,
    locked: Option<&LockedProvider>,
    upgrade: bool,
) -> Option<PackedZip> {
    let dirs = local.search_dirs(addr);
    let unpacked: Vec<(usize, plugindir::Package)> = dirs
        .iter()
        .enumerate()
        .flat_map(|(i, d)| {
            plugindir::packages(d, addr, &local.os_arch)
                .into_iter()
                .map(move |p| (i, p))
        })
        .collect();
    let zips: Vec<(usize, PackedZip)> = dirs
        .iter()
        .enumerate()
        .flat_map(|(i, d)| {
            packed::find(d, addr, &local.os_arch)
                .into_iter()
                .map(move |p| (i, p))
        })
        .collect();
    if zips.is_empty() {
        return None;
    }
    let version = match locked.filter(|_| !upgrade) {
        Some(l) if constraints.allows(&l.version) => l.version.clone(),
        Some(_) => return None,
        None => constraints
            .newest(
                unpacked
                    .iter()
                    .map(|(_, p)| &p.version)
                    .chain(zips.iter().map(|(_, z)| &z.version)),
            )?
            .clone(),
    };
    let first_zip = zips.into_iter().find(|(_, z)| z.version == version)?;
    match unpacked.iter().find(|(_, p)| p.version == version) {
        Some((i, _)) if *i <= first_zip.0 => None,
        _ => Some(first_zip.1),
    }
}

/// Every provider the configuration requires, with the constraints of
/// every module merged: `required_providers` entries, and the implied
/// `hashicorp/NAME` of providers used (by resources, data sources and
/// provider blocks) without one.
pub fn requirements(
    config: &Config,
    out: &mut BTreeMap<ProviderAddr, Constraints>,
    errors: &mut Vec<Diagnostic>,
) {
    let m = &config.module;
    let mut local: BTreeMap<String, ProviderAddr> = BTreeMap::new();
    for (name, req) in &m.required_providers {
        let addr = match req.source.as_deref() {
            Some(s) => match ProviderAddr::parse(s) {
                Ok(a) => a,
                Err(e) => {
                    errors.push(Diagnostic::error(
                        "Invalid provider source address",
                        e.to_string(),
                        None,
                    ));
                    continue;
                }
            },
            None => implied(name),
        };
        let c = match req.version.as_deref().map(Constraints::parse) {
            None => Constraints::any(),
            Some(Ok(c)) => c,
            Some(Err(e)) => {
                errors.push(Diagnostic::error(
                    "Invalid version constraint",
                    format!("provider {name}: {e}"),
                    None,
                ));
                continue;
            }
        };
        let merged = match out.remove(&addr) {
            Some(x) => x.and(&c),
            None => c,
        };
        out.insert(addr.clone(), merged);
        local.insert(name.clone(), addr);
    }
    let used = m
        .resources
        .iter()
        .map(|r| terrane_engine::resource_provider(r).0)
        .chain(m.providers.iter().map(|p| p.name.clone()));
    for name in used {
        if !local.contains_key(&name) {
            out.entry(implied(&name)).or_insert_with(Constraints::any);
        }
    }
    for child in config.children.values() {
        requirements(child, out, errors);
    }
}

/// The address a local name implies without a `required_providers` entry.
pub fn implied(name: &str) -> ProviderAddr {
    if name == "terraform" {
        return ProviderAddr::builtin_terraform();
    }
    ProviderAddr::new("registry.terraform.io", "hashicorp", name)
}
