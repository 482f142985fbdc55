//! `providers`: the providers the configuration and the state require;
//! `providers schema -json`: their schemas in Terraform's format, which
//! editors, policy and documentation tools read; `providers lock` and
//! `providers mirror`: checksums and mirrors from the registries.

use crate::args::Args;
use crate::session::{load, Ui};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use terrane_config::Config;
use terrane_engine::provider::discovery::cliconfig::CliConfig;
use terrane_engine::provider::discovery::lockfile::LockFile;
use terrane_engine::provider::ProviderAddr;
use terrane_registry::Requirement;
use terrane_render::schemajson;

/// `providers schema -json`.
pub async fn schema(ui: &Ui, dir: &Path) -> u8 {
    if !ui.json {
        return ui.error(
            "The -json flag is required",
            "The \"providers schema\" command requires the -json flag.",
        );
    }
    let engine = match load(ui, dir) {
        Ok(e) => e,
        Err(c) => return c,
    };
    let addrs: BTreeSet<_> = engine.core.provider_addrs.values().cloned().collect();
    let mut schemas = BTreeMap::new();
    for addr in addrs {
        match engine.core.host.schema(&addr).await {
            Ok(s) => {
                schemas.insert(addr.to_string(), (*s).clone());
            }
            Err(e) => {
                engine.shutdown().await;
                return ui.error("Failed to load plugin schemas", e.to_string());
            }
        }
    }
    engine.shutdown().await;
    println!("{}", schemajson::provider_schemas(&schemas));
    0
}

/// `providers`: the requirements of each module, as a tree, then the
/// providers the state's resources name.
pub fn tree(ui: &Ui, dir: &Path) -> u8 {
    let (config, diags) = terrane_config::load_config(dir, &crate::vars::statics(dir));
    if crate::session::has_errors(&diags) {
        ui.diags(&diags);
        return 1;
    }
    let mut out = String::from("\nProviders required by configuration:\n.\n");
    module_tree(&config, "", &mut out);
    let state = match crate::session::read_state(ui, dir) {
        Ok(s) => s,
        Err(c) => return c,
    };
    let in_state: BTreeSet<String> = state
        .resources
        .values()
        .map(|r| provider_of_state(&r.provider))
        .collect();
    if !in_state.is_empty() {
        out.push_str("\nProviders required by state:\n\n");
        for p in in_state {
            out.push_str(&format!("    provider[{p}]\n\n"));
        }
    }
    print!("{out}");
    0
}

/// `provider["registry.terraform.io/hashicorp/random"]` (and an alias)
/// as the address Terraform lists: `registry.terraform.io/hashicorp/random`.
fn provider_of_state(p: &str) -> String {
    p.split_once("[\"")
        .and_then(|(_, rest)| rest.split_once("\"]"))
        .map(|(addr, _)| addr.to_string())
        .unwrap_or_else(|| p.to_string())
}

/// One module's requirements (`provider[ADDR] CONSTRAINTS`) and then its
/// child modules, drawn with Terraform's tree characters.
fn module_tree(config: &Config, indent: &str, out: &mut String) {
    let mut lines: Vec<(String, Option<&Config>)> = Vec::new();
    let required: BTreeMap<String, String> = requirements(config);
    for (addr, constraint) in required {
        let text = if constraint.is_empty() {
            format!("provider[{addr}]")
        } else {
            format!("provider[{addr}] {constraint}")
        };
        lines.push((text, None));
    }
    for (name, child) in &config.children {
        lines.push((format!("module.{name}"), Some(child)));
    }
    let n = lines.len();
    for (i, (text, child)) in lines.into_iter().enumerate() {
        let last = i + 1 == n;
        out.push_str(&format!(
            "{indent}{}{text}\n",
            if last { "└── " } else { "├── " }
        ));
        if let Some(c) = child {
            let deeper = format!("{indent}{}", if last { "    " } else { "│   " });
            module_tree(c, &deeper, out);
        }
    }
}

/// The providers one module requires, by source address, with their
/// version constraints: `required_providers` entries, and the implied
/// `hashicorp/NAME` of providers used without one.
fn requirements(config: &Config) -> BTreeMap<String, String> {
    let addr_of = |source: &str| {
        terrane_engine::provider::ProviderAddr::parse(source)
            .map(|a| a.to_string())
            .unwrap_or_else(|_| source.to_string())
    };
    let mut out = BTreeMap::new();
    let m = &config.module;
    for (name, req) in &m.required_providers {
        let source = req.source.clone().unwrap_or_else(|| name.clone());
        out.insert(addr_of(&source), req.version.clone().unwrap_or_default());
    }
    // Providers used (by a resource or a provider block) without an entry.
    let used = m
        .resources
        .iter()
        .map(|r| terrane_engine::resource_provider(r).0)
        .chain(m.providers.iter().map(|p| p.name.clone()));
    for name in used {
        if !m.required_providers.contains_key(&name) {
            out.entry(addr_of(&name)).or_default();
        }
    }
    out
}

/// The providers `providers lock`/`providers mirror` work on: every
/// requirement of the configuration that comes from a registry or a
/// network mirror (built-ins and local packages need no checksums from
/// the network), optionally only those named on the command line.
fn remote_requirements(
    ui: &Ui,
    dir: &Path,
    only: &[String],
) -> Result<(CliConfig, LockFile, Vec<Requirement>), u8> {
    let (config, diags) = terrane_config::load_config(dir, &crate::vars::statics(dir));
    if crate::session::has_errors(&diags) {
        ui.diags(&diags);
        return Err(1);
    }
    let mut reqs = BTreeMap::new();
    let mut errors = Vec::new();
    crate::install::requirements(&config, &mut reqs, &mut errors);
    if !errors.is_empty() {
        ui.diags(&errors);
        return Err(1);
    }
    let cli = CliConfig::load_from_env()
        .map_err(|e| ui.error("Invalid CLI configuration", e.to_string()))?;
    let lock = LockFile::load(dir)
        .map_err(|e| ui.error("Failed to read the dependency lock file", e.to_string()))?;
    let mut wanted = Vec::new();
    for name in only {
        match ProviderAddr::parse(name) {
            Ok(a) if reqs.contains_key(&a) => wanted.push(a),
            Ok(a) => {
                return Err(ui.error(
                    "Invalid provider argument",
                    format!("The provider {a} is not required by the current configuration."),
                ))
            }
            Err(e) => return Err(ui.error("Invalid provider argument", e.to_string())),
        }
    }
    let out = reqs
        .into_iter()
        .filter(|(a, _)| !a.is_builtin() && (wanted.is_empty() || wanted.contains(a)))
        .filter_map(|(addr, constraints)| {
            let mirror = crate::install::remote_source(&cli, &addr)?;
            Some(Requirement {
                locked: lock.providers.get(&addr).cloned(),
                addr,
                constraints,
                mirror,
                packed: None,
            })
        })
        .collect();
    Ok((cli, lock, out))
}

/// `-platform=os_arch` values (each checked), or this machine's.
fn platforms(ui: &Ui, a: &Args) -> Result<Vec<String>, u8> {
    let given = a.values("platform");
    if given.is_empty() {
        return Ok(vec![
            terrane_engine::provider::discovery::plugindir::current_os_arch(),
        ]);
    }
    for p in &given {
        let ok = p
            .split_once('_')
            .is_some_and(|(o, r)| !o.is_empty() && !r.is_empty() && !r.contains('_'));
        if !ok {
            return Err(ui.error(
                "Invalid target platform",
                format!("The string {p:?} given in -platform is not a valid platform name: must be an operating system name and a CPU architecture separated by an underscore, like linux_amd64."),
            ));
        }
    }
    let mut given = given;
    given.sort();
    given.dedup();
    Ok(given)
}

/// `providers lock [-platform=os_arch]... [PROVIDER]...`: the checksums of
/// each provider's selected version for every platform named, verified
/// against the registry's signed SHA256SUMS, added to the lock file.
pub async fn lock(ui: &Ui, dir: &Path, a: &Args) -> u8 {
    let platforms = match platforms(ui, a) {
        Ok(p) => p,
        Err(c) => return c,
    };
    let (cli, old, reqs) = match remote_requirements(ui, dir, &a.positional) {
        Ok(x) => x,
        Err(c) => return c,
    };
    let installer = match crate::install::installer(ui, dir, &cli) {
        Ok(i) => i,
        Err(c) => return c,
    };
    let staging = temp_staging(dir);
    let mut lock = old.clone();
    for r in &reqs {
        let shown = r.addr.for_display();
        let version = match installer.select(r, false).await {
            Ok(v) => v,
            Err(e) => return ui.error("Could not retrieve providers for locking", e.to_string()),
        };
        let mut hashes: Vec<String> = r
            .locked
            .as_ref()
            .filter(|l| l.version == version)
            .map(|l| l.hashes.clone())
            .unwrap_or_default();
        for p in &platforms {
            println!("- Fetching {shown} {version} for {p}...");
            let f = match installer.fetch(r, &version, p, &staging).await {
                Ok(f) => f,
                Err(e) => {
                    return ui.error("Could not retrieve providers for locking", e.to_string())
                }
            };
            match &f.key_id {
                Some(k) => {
                    println!("- Retrieved {shown} {version} for {p} (self-signed, key ID {k})")
                }
                None => println!("- Retrieved {shown} {version} for {p} (unauthenticated)"),
            }
            let before = hashes.len();
            hashes.push(f.h1.clone());
            hashes.extend(f.lock_hashes.iter().cloned());
            hashes.sort();
            hashes.dedup();
            if hashes.len() == before {
                println!("- Obtained {shown} checksums for {p}; All checksums for this platform were already tracked in the lock file");
            } else {
                println!("- Obtained {shown} checksums for {p}; Additional checksums for this platform are now tracked in the lock file");
            }
        }
        lock.record_hashes(&r.addr, version, Some(r.constraints.lock_text()), hashes);
    }
    let _ = std::fs::remove_dir_all(&staging);
    if lock == old {
        println!("\nSuccess! terrane has validated the lock file and found no need for changes.");
        return 0;
    }
    if let Err(e) = lock.save(dir) {
        return ui.error("Failed to write the dependency lock file", e.to_string());
    }
    println!("\nSuccess! terrane has updated the lock file.\n\nReview the changes in .terraform.lock.hcl and then commit to your\nversion control system to retain the new checksums.");
    0
}

/// A staging directory for downloads that are not installed.
fn temp_staging(dir: &Path) -> std::path::PathBuf {
    terrane_engine::provider::discovery::data_dir(dir).join("providers")
}

/// `providers mirror [-platform=os_arch]... DIR`: each provider's selected
/// version for every platform named, verified, as release zips in
/// Terraform's packed layout under DIR, with the network mirror
/// protocol's `index.json` and `<version>.json` beside them, so DIR works
/// as a filesystem mirror or, served over HTTPS, a network mirror.
pub async fn mirror(ui: &Ui, dir: &Path, a: &Args) -> u8 {
    let Some(target) = a.positional.first().map(std::path::PathBuf::from) else {
        return ui.error(
            "No output directory specified",
            "The providers mirror command requires an output directory as a command-line argument.",
        );
    };
    let platforms = match platforms(ui, a) {
        Ok(p) => p,
        Err(c) => return c,
    };
    let (cli, _, reqs) = match remote_requirements(ui, dir, &[]) {
        Ok(x) => x,
        Err(c) => return c,
    };
    let installer = match crate::install::installer(ui, dir, &cli) {
        Ok(i) => i,
        Err(c) => return c,
    };
    for r in &reqs {
        let shown = r.addr.for_display();
        println!("- Mirroring {shown}...");
        let version = match installer.select(r, false).await {
            Ok(v) => v,
            Err(e) => return ui.error("Provider not available", e.to_string()),
        };
        if r.locked.as_ref().is_some_and(|l| l.version == version) {
            println!("  - Selected v{version} to match dependency lock file");
        } else if r.constraints.is_empty() {
            println!("  - Selected v{version} (the newest available)");
        } else {
            println!(
                "  - Selected v{version} to meet constraints {}",
                r.constraints.lock_text()
            );
        }
        let base = target
            .join(&r.addr.host)
            .join(&r.addr.namespace)
            .join(&r.addr.type_name);
        if let Err(e) = std::fs::create_dir_all(&base) {
            return ui.error(
                "Cannot create the mirror directory",
                format!("{}: {e}", base.display()),
            );
        }
        let mut archives = serde_json::Map::new();
        let version_file = base.join(format!("{version}.json"));
        if let Some(serde_json::Value::Object(old)) = read_json(&version_file)
            .as_ref()
            .and_then(|v| v.get("archives"))
        {
            archives = old.clone();
        }
        for p in &platforms {
            println!("  - Downloading package for {p}...");
            let f = match installer.fetch(r, &version, p, &base).await {
                Ok(f) => f,
                Err(e) => return ui.error("Cannot download provider", e.to_string()),
            };
            let dest = base.join(&f.file_name);
            if let Err(e) = std::fs::rename(&f.zip_path, &dest) {
                return ui.error(
                    "Cannot write the mirror",
                    format!("{}: {e}", dest.display()),
                );
            }
            println!(
                "  - Package authenticated: {}",
                match &f.key_id {
                    Some(k) => format!("self-signed, key ID {k}"),
                    None => "verified checksum".to_string(),
                }
            );
            archives.insert(
                p.clone(),
                serde_json::json!({"url": f.file_name, "hashes": [f.h1]}),
            );
        }
        let mut index = read_json(&base.join("index.json"))
            .and_then(|v| v.get("versions").and_then(|v| v.as_object()).cloned())
            .unwrap_or_default();
        index.insert(version.to_string(), serde_json::json!({}));
        for (path, doc) in [
            (version_file, serde_json::json!({ "archives": archives })),
            (
                base.join("index.json"),
                serde_json::json!({ "versions": index }),
            ),
        ] {
            let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
            if let Err(e) = std::fs::write(&path, text + "\n") {
                return ui.error(
                    "Cannot write the mirror",
                    format!("{}: {e}", path.display()),
                );
            }
        }
    }
    0
}

fn read_json(path: &Path) -> Option<serde_json::Value> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}
