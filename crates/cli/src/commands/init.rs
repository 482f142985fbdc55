//! `init`: find or install every provider the configuration requires,
//! record the selections in the dependency lock file, create `.terrane`.
//!
//! Per provider (the address and the constraints of every module merged):
//! the terraform built-in and dev overrides are used as they are; a
//! release zip in a filesystem mirror (the packed layout) is unpacked into
//! `<data dir>/providers` when it is the pick (`install::packed_choice`);
//! an unpacked package in a filesystem mirror or the plugin directory is
//! used in place; else a provider terrane has built in is served in-process;
//! anything else is installed from its registry by terrane-registry into
//! `<data dir>/providers` (Terraform's layout), in parallel, and locked
//! with its `h1:` and signed `zh:` hashes. The lock file is written only
//! when every provider succeeded.

use crate::args::Args;
use crate::session::Ui;
use std::collections::BTreeMap;
use std::os::unix::fs::DirBuilderExt;
use std::path::Path;
use terrane_config::Diagnostic;
use terrane_engine::provider::discovery::cliconfig::CliConfig;
use terrane_engine::provider::discovery::lockfile::{LockFile, LOCK_FILE_NAME};
use terrane_engine::provider::discovery::{Discovery, DiscoveryError};
use terrane_engine::provider::ProviderSource;
use terrane_registry::{InstallError, Requirement};

pub async fn init(ui: &Ui, dir: &Path, a: &Args) -> u8 {
    if !crate::session::has_config_files(dir) {
        println!(
            "{}",
            ui.style.bold("terrane initialized in an empty directory!")
        );
        println!("\nThe directory has no configuration files. You may begin working with terrane\nonce you create configuration files (.tf) here.");
        return 0;
    }
    let upgrade = a.has("upgrade");
    let readonly = match a.value("lockfile") {
        None => false,
        Some("readonly") => true,
        Some(other) => {
            return ui.error(
                "Invalid -lockfile option",
                format!("The -lockfile option accepts only \"readonly\", not {other:?}."),
            )
        }
    };
    if readonly && upgrade {
        return ui.error(
            "Invalid CLI option combination",
            "The -upgrade flag conflicts with -lockfile=readonly.",
        );
    }
    let cli = match CliConfig::load_from_env() {
        Ok(c) => c,
        Err(e) => return ui.error("Invalid CLI configuration", e.to_string()),
    };
    // Modules first, as Terraform does: the configuration cannot be loaded
    // whole before they are installed. With -get=false, as Terraform: none
    // is installed or updated, and loading the configuration below reports
    // any module that is not installed yet.
    if !a.is_false("get") {
        if let Err(code) = crate::modinstall::install_modules(ui, dir, &cli, upgrade, true).await {
            return code;
        }
    }
    let (config, diags) = terrane_config::load_config(dir, &crate::vars::statics(dir));
    if crate::session::has_errors(&diags) {
        ui.diags(&diags);
        return 1;
    }
    let mut reqs = BTreeMap::new();
    let mut errors = Vec::new();
    crate::install::requirements(&config, &mut reqs, &mut errors);
    if !errors.is_empty() {
        ui.diags(&errors);
        return 1;
    }
    let old_lock = match LockFile::load(dir) {
        Ok(l) => l,
        Err(e) => return ui.error("Failed to read the dependency lock file", e.to_string()),
    };
    if let Err(d) = crate::stateconf::refuse_backend(&config.module) {
        ui.diags(&[d]);
        return 1;
    }
    println!("Initializing the backend...");
    let module = config.module.clone();
    if let Err(c) =
        crate::session::off_runtime(|| super::init_backend::init_backend(ui, dir, a, &module))
    {
        return c;
    }
    println!("Initializing provider plugins...");
    let builtins = terrane_builtins::standard();
    let mut local = Discovery::new(dir, cli.clone(), builtins);
    local.installed_dir = None;
    let mut lock = LockFile::default();
    let mut remote: Vec<Requirement> = Vec::new();
    let mut failures: Vec<Diagnostic> = Vec::new();
    for (addr, constraints) in &reqs {
        let constraints_text = Some(constraints.lock_text());
        let resolved = local.resolve(addr, constraints, &old_lock);
        // A dev override or Terraform's own built-in is used as it is;
        // otherwise a release zip in a filesystem mirror may be the pick.
        let pinned = match &resolved {
            Ok(ProviderSource::Plugin(p)) => p.dev_override,
            Ok(ProviderSource::Builtin(_)) => addr.is_builtin(),
            Ok(ProviderSource::Pulumi(_)) => true,
            Err(_) => false,
        };
        let locked = old_lock.providers.get(addr);
        if let Some(zip) = (!pinned)
            .then(|| crate::install::packed_choice(&local, addr, constraints, locked, upgrade))
            .flatten()
        {
            remote.push(Requirement {
                addr: addr.clone(),
                constraints: constraints.clone(),
                locked: locked.cloned(),
                mirror: None,
                packed: Some(zip),
            });
            continue;
        }
        match resolved {
            Ok(ProviderSource::Plugin(p)) => {
                println!("- Using {} from {}", addr.for_display(), p.binary.display());
                if let Some((v, h1)) = ProviderSource::Plugin(p).lock_entry() {
                    let mut one = LockFile::default();
                    if let Some(old) = old_lock.providers.get(addr) {
                        one.providers.insert(addr.clone(), old.clone());
                    }
                    one.record(addr, v, constraints_text, h1);
                    lock.providers.extend(one.providers);
                }
            }
            Ok(ProviderSource::Pulumi(p)) => {
                println!(
                    "- Using Pulumi plugin {} from {}",
                    addr.for_display(),
                    p.binary.display()
                );
            }
            Ok(ProviderSource::Builtin(_)) => {
                if !addr.is_builtin() {
                    println!("- Using built-in {}", addr.for_display());
                }
                // A selection another tool (Terraform) recorded stays.
                if let Some(old) = old_lock.providers.get(addr) {
                    lock.providers.insert(addr.clone(), old.clone());
                }
            }
            Err(DiscoveryError::NotFound { .. })
                if crate::install::remote_source(&cli, addr).is_some() =>
            {
                remote.push(Requirement {
                    addr: addr.clone(),
                    constraints: constraints.clone(),
                    locked: old_lock.providers.get(addr).cloned(),
                    mirror: crate::install::remote_source(&cli, addr).flatten(),
                    packed: None,
                });
            }
            Err(e) => failures.push(Diagnostic::error(
                "Failed to query available provider packages",
                e.to_string(),
                None,
            )),
        }
    }
    if !failures.is_empty() {
        ui.diags(&failures);
        return 1;
    }
    if !remote.is_empty() {
        if let Err(c) = install(ui, dir, &cli, remote, upgrade, &mut lock).await {
            return c;
        }
    }
    let changed = lock != old_lock;
    if changed && readonly {
        let which: Vec<String> = lock
            .providers
            .keys()
            .chain(old_lock.providers.keys())
            .filter(|a| lock.providers.get(a) != old_lock.providers.get(a))
            .map(|a| a.to_string())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        return ui.error(
            "Provider dependency changes detected",
            format!("Changes to the required provider dependencies were detected ({}), but the lock file is read-only. To use and record these requirements, run \"terrane init\" without the \"-lockfile=readonly\" flag.", which.join(", ")),
        );
    }
    if changed {
        if let Err(e) = lock.save(dir) {
            return ui.error("Failed to write the dependency lock file", e.to_string());
        }
        if old_lock.providers.is_empty() {
            println!("\nterrane has created a lock file {LOCK_FILE_NAME} to record the provider\nselections it made above. Include this file in your version control repository\nso that terrane can guarantee to make the same selections by default when\nyou run \"terrane init\" in the future.");
        } else {
            println!("\nterrane has made some changes to the provider dependency selections recorded\nin the {LOCK_FILE_NAME} file. Review those changes and commit them to your\nversion control system if they represent changes you intended to make.");
        }
    }
    // No provider is started here: Terraform's init launches none, and
    // starting each (a schema fetch per provider) was most of a warm
    // init's time. A provider that cannot start is reported by the first
    // command that needs it.
    if let Err(e) = std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir.join(".terrane"))
    {
        return ui.error("Failed to create .terrane", e.to_string());
    }
    println!(
        "\n{}",
        ui.style.bold("terrane has been successfully initialized!")
    );
    0
}

/// What happened to one provider installed from a registry.
enum Outcome {
    Reused(terrane_registry::install::Installed),
    Installed(terrane_registry::install::Installed),
}

/// Selects versions (printing Terraform's "Finding" lines), then installs
/// every package at once, then reports each as Terraform does; records
/// the results in `lock`. On failure every error is shown and nothing is
/// recorded.
async fn install(
    ui: &Ui,
    dir: &Path,
    cli: &CliConfig,
    remote: Vec<Requirement>,
    upgrade: bool,
    lock: &mut LockFile,
) -> Result<(), u8> {
    let installer = crate::install::installer(ui, dir, cli)?;
    for r in &remote {
        let shown = r.addr.for_display();
        if r.locked.is_some() && !upgrade {
            println!("- Reusing previous version of {shown} from the dependency lock file");
        } else if r.constraints.is_empty() {
            println!("- Finding latest version of {shown}...");
        } else {
            println!(
                "- Finding {shown} versions matching \"{}\"...",
                r.constraints.lock_text()
            );
        }
    }
    let mut tasks = tokio::task::JoinSet::new();
    for (i, r) in remote.iter().cloned().enumerate() {
        let installer = installer.clone();
        tasks.spawn(async move {
            let result = async {
                let version = installer.select(&r, upgrade).await?;
                if let Some((dir, _)) = installer.reusable(&r, &version).await {
                    let hashes = r
                        .locked
                        .as_ref()
                        .map(|l| l.hashes.clone())
                        .unwrap_or_default();
                    return Ok::<_, InstallError>(Outcome::Reused(
                        terrane_registry::install::Installed {
                            addr: r.addr.clone(),
                            version,
                            dir,
                            hashes,
                            signed_by: None,
                            from_cache: false,
                        },
                    ));
                }
                installer
                    .install(&r, &version)
                    .await
                    .map(Outcome::Installed)
            }
            .await;
            (i, result)
        });
    }
    // Each provider is reported, in the order of the requirements, as
    // soon as it and every one before it have finished.
    let mut results: Vec<Option<Result<Outcome, InstallError>>> =
        (0..remote.len()).map(|_| None).collect();
    let mut errors = Vec::new();
    let mut signed = false;
    let mut next = 0;
    while let Some(joined) = tasks.join_next().await {
        match joined {
            Ok((i, r)) => results[i] = Some(r),
            Err(e) => return Err(ui.error("Failed to install providers", e.to_string())),
        }
        while let Some(result) = results.get_mut(next).and_then(Option::take) {
            let r = &remote[next];
            next += 1;
            signed |= report(r, result, lock, &mut errors);
        }
    }
    for r in &remote[next..] {
        errors.push(Diagnostic::error(
            "Failed to install provider",
            format!("the installation of {} did not finish", r.addr),
            None,
        ));
    }
    if !errors.is_empty() {
        ui.diags(&errors);
        return Err(1);
    }
    if signed {
        println!("\nPartner and community providers are signed by their developers.\nIf you'd like to know more about provider signing, you can read about it here:\nhttps://www.terraform.io/docs/cli/plugins/signing.html");
    }
    Ok(())
}

/// Prints Terraform's lines for one provider's outcome and records it in
/// `lock` (an error goes to `errors`); whether it was downloaded and
/// signature-checked now.
fn report(
    r: &Requirement,
    result: Result<Outcome, InstallError>,
    lock: &mut LockFile,
    errors: &mut Vec<Diagnostic>,
) -> bool {
    let shown = r.addr.for_display();
    let constraints = Some(r.constraints.lock_text());
    match result {
        Ok(Outcome::Reused(p)) => {
            println!("- Using previously-installed {shown} v{}", p.version);
            lock.record_hashes(&p.addr, p.version, constraints, p.hashes);
            false
        }
        Ok(Outcome::Installed(p)) if p.from_cache => {
            println!(
                "- Using {shown} v{} from the shared cache directory",
                p.version
            );
            lock.record_hashes(&p.addr, p.version, constraints, p.hashes);
            false
        }
        Ok(Outcome::Installed(p)) => {
            println!("- Installing {shown} v{}...", p.version);
            // As Terraform words it: a network mirror's package matched
            // the mirror's checksums; a filesystem mirror's is vouched for
            // by nothing.
            let how = match &p.signed_by {
                Some(key) => format!("self-signed, key ID {key}"),
                None if r.mirror.is_some() => "verified checksum".into(),
                None => "unauthenticated".into(),
            };
            println!("- Installed {shown} v{} ({how})", p.version);
            let signed = p.signed_by.is_some();
            lock.record_hashes(&p.addr, p.version, constraints, p.hashes);
            signed
        }
        Err(e) => {
            let summary = match e {
                InstallError::Query { .. } | InstallError::NoMatch { .. } => {
                    "Failed to query available provider packages"
                }
                InstallError::LockedExcluded { .. } => "Failed to resolve provider packages",
                _ => "Failed to install provider",
            };
            errors.push(Diagnostic::error(summary, e.to_string(), None));
            false
        }
    }
}
