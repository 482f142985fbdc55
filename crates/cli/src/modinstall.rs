//! Module installation for `init` and `get`, as Terraform does it: every
//! module call of the tree, walked from the root; local sources recorded
//! where they are, remote ones (registry addresses, `git::`, https
//! archives) fetched by terrane-registry into `<data dir>/modules/<key>`
//! (`Key` the call names joined by `.`), and the tree recorded in
//! `<data dir>/modules/modules.json` in Terraform's format, so either tool
//! uses the other's installation.
//!
//! Nothing half-installed remains: every package is fetched into one
//! staging directory inside `<data dir>/modules`; only when the whole tree
//! installed are the packages renamed into place and the manifest written
//! (through a temporary file and a rename). A failure drops the staging
//! directory and leaves the previous installation and manifest as they
//! were.
//!
//! A `source` or `version` given as an expression is evaluated as
//! Terraform 1.15's init does (literals, const variables, locals over
//! them: terrane-config's `statics`), each module with its caller's values
//! for its const variables. The modules of test files' run blocks are
//! installed too, under Terraform's keys (`test.<file>.<run>`).

use crate::session::Ui;
use std::collections::VecDeque;
use std::path::{Component, Path, PathBuf};
use std::rc::Rc;
use terrane_config::modules::{
    is_local_source, manifest_path, normalize_source, registry_address, ModuleManifest,
    ModuleRecord,
};
use terrane_config::{statics, Diagnostic, Module};
use terrane_engine::provider::discovery::cliconfig::CliConfig;
use terrane_engine::provider::discovery::data_dir;
use terrane_engine::provider::discovery::version::{Constraints, Version};
use terrane_registry::redact::redact;

/// One module whose calls are still to be read.
struct Pending {
    key: String,
    /// Where its files are now (a staged package may not be in place yet).
    actual: PathBuf,
    /// Its `Dir` in the manifest.
    dir: String,
    /// The module that calls it, and the call's name (`None` for the root).
    caller: Option<(Rc<Caller>, String)>,
    /// For a test file's run modules: their calls, as a module of the
    /// working directory whose calls are the runs (so their keys are
    /// Terraform's `test.<file>.<run>`).
    runs: Option<Module>,
}

/// A module whose calls are being installed, as its children's const
/// variables need it: where it is, its model and its own const inputs.
struct Caller {
    actual: PathBuf,
    module: Module,
    inputs: statics::Inputs,
}

/// Installs the module tree of the configuration in `dir`; prints
/// Terraform's progress lines. `upgrade` (`get -update`, `init -upgrade`)
/// fetches every remote module again, else an installed one whose source
/// and version still fit is kept. `header`: `init` titles the section,
/// `get` does not.
pub async fn install_modules(
    ui: &Ui,
    dir: &Path,
    cli: &CliConfig,
    upgrade: bool,
    header: bool,
) -> Result<(), u8> {
    let data = data_dir(dir);
    let modules_dir = data.join("modules");
    // `Dir` values are relative to the working directory, as Terraform
    // writes them (`.terraform/modules/x`, or under TF_DATA_DIR).
    let rel_modules = data_dir(Path::new("")).join("modules");
    let old = match ModuleManifest::load(&manifest_path(&data)) {
        Ok(m) => m.unwrap_or_default(),
        Err(e) => return Err(ui.error("Failed to read module manifest", e)),
    };
    let (root, _) = terrane_config::load_module(dir);
    let run_modules = test_run_modules(dir);
    if root.module_calls.is_empty() && run_modules.is_empty() && old.records.len() <= 1 {
        // Nothing to install, and nothing installed to forget: Terraform
        // says nothing about modules then.
        return Ok(());
    }
    let title = if upgrade {
        "Upgrading modules..."
    } else {
        "Initializing modules..."
    };
    if header {
        println!("{}", ui.style.bold(title));
    }
    let mut records = vec![ModuleRecord {
        key: String::new(),
        source: String::new(),
        version: None,
        dir: ".".into(),
    }];
    let mut staged: Vec<String> = Vec::new();
    let mut staging: Option<tempfile::TempDir> = None;
    let mut installer = None;
    let mut queue = VecDeque::from([Pending {
        key: String::new(),
        actual: dir.to_path_buf(),
        dir: ".".into(),
        caller: None,
        runs: None,
    }]);
    queue.extend(run_modules.into_iter().map(|(key, runs)| Pending {
        key,
        actual: dir.to_path_buf(),
        dir: ".".into(),
        caller: None,
        runs: Some(runs),
    }));
    let vars = crate::vars::statics(dir);
    // Calls whose source or version cannot be known at init: reported,
    // not installed, and init fails once the others are in place.
    let mut unresolved = Vec::new();
    while let Some(mut p) = queue.pop_front() {
        let (mut module, diags) = match p.runs.take() {
            Some(runs) => (runs, Vec::new()),
            None => terrane_config::load_module(&p.actual),
        };
        if diags.iter().any(Diagnostic::is_error) {
            ui.diags(&diags);
            return Err(1);
        }
        let (inputs, mut d) = match &p.caller {
            None => statics::root_inputs(&vars, &module),
            Some((c, call)) => match c.module.module_calls.get(call) {
                Some(call) => {
                    statics::child_inputs(&vars, &c.actual, &c.module, &c.inputs, call, &module)
                }
                None => Default::default(),
            },
        };
        d.extend(statics::resolve_calls(
            &vars,
            &p.actual,
            &mut module,
            &inputs,
        ));
        unresolved.extend(d);
        let here = Rc::new(Caller {
            actual: p.actual.clone(),
            module,
            inputs,
        });
        for (name, call) in &here.module.module_calls {
            let caller = Some((here.clone(), name.clone()));
            let Some(source) = call.source.clone() else {
                continue;
            };
            let key = if p.key.is_empty() {
                name.clone()
            } else {
                format!("{}.{name}", p.key)
            };
            let fail = |summary: &str, reason: String| {
                ui.diags(&[Diagnostic::error(
                    summary,
                    redact(&format!("Module {key:?} (source {source:?}): {reason}")),
                    call.range.clone(),
                )]);
                1u8
            };
            if is_local_source(&source) {
                let child_dir = clean_join(&p.dir, &source);
                let record = ModuleRecord {
                    key: key.clone(),
                    source: source.clone(),
                    version: None,
                    dir: child_dir.clone(),
                };
                // As Terraform: a local module is announced when new.
                if old.get(&key) != Some(&record) {
                    println!("- {key} in {child_dir}");
                }
                records.push(record);
                queue.push_back(Pending {
                    key,
                    actual: p.actual.join(&source),
                    dir: child_dir,
                    caller,
                    runs: None,
                });
                continue;
            }
            let normalized = normalize_source(&source);
            let registry = registry_address(&source);
            let constraints = match call.version.as_deref().map(Constraints::parse) {
                None => Constraints::any(),
                Some(Ok(c)) => c,
                Some(Err(e)) => return Err(fail("Invalid version constraint", e.to_string())),
            };
            if call.version.is_some() && registry.is_none() {
                return Err(fail(
                    "Invalid registry module source address",
                    "a version constraint is only allowed for registry modules".into(),
                ));
            }
            // An installed module whose source and version still fit.
            if !upgrade {
                if let Some(r) = old.get(&key).filter(|r| {
                    r.source == normalized
                        && dir.join(&r.dir).is_dir()
                        && match (&registry, &r.version) {
                            (Some(_), Some(v)) => {
                                Version::parse(v).is_ok_and(|v| constraints.allows(&v))
                            }
                            (Some(_), None) => false,
                            (None, _) => true,
                        }
                }) {
                    records.push(r.clone());
                    queue.push_back(Pending {
                        key,
                        actual: dir.join(&r.dir),
                        dir: r.dir.clone(),
                        caller,
                        runs: None,
                    });
                    continue;
                }
            }
            if installer.is_none() {
                installer = Some(crate::install::installer(ui, dir, cli)?);
            }
            let inst = installer.as_ref().expect("set above");
            if staging.is_none() {
                let made = std::fs::create_dir_all(&modules_dir).and_then(|_| {
                    tempfile::Builder::new()
                        .prefix(".terrane-install-")
                        .tempdir_in(&modules_dir)
                });
                staging = Some(made.map_err(|e| {
                    ui.error(
                        "Failed to install modules",
                        format!(
                            "cannot create a directory in {}: {e}",
                            modules_dir.display()
                        ),
                    )
                })?);
            }
            let dest = staging.as_ref().expect("set above").path().join(&key);
            let (location, version, mut subdir) = match &registry {
                Some((host, ns, mname, provider, subdir)) => {
                    let version = inst
                        .module_select(host, ns, mname, provider, &constraints)
                        .await
                        .map_err(|e| {
                            let summary = if e.starts_with("no available version") {
                                "Unresolvable module version constraint"
                            } else {
                                "Error accessing remote module registry"
                            };
                            fail(summary, e)
                        })?;
                    println!("Downloading {normalized} {version} for {key}...");
                    let location = inst
                        .module_location(host, ns, mname, provider, &version)
                        .await
                        .map_err(|e| fail("Error accessing remote module registry", e))?;
                    (location, Some(version.to_string()), subdir.clone())
                }
                None => {
                    println!("Downloading {} for {key}...", redact(&source));
                    (source.clone(), None, None)
                }
            };
            let inner = inst.fetch_package(&location, &dest).await.map_err(|e| {
                let from = if location == source {
                    String::new()
                } else {
                    format!(" from {location}")
                };
                fail(
                    "Failed to download module",
                    format!("download{from} failed: {e}"),
                )
            })?;
            // The registry's location may name a subdirectory too; the
            // address's own one is inside it.
            subdir = match (inner, subdir) {
                (Some(a), Some(b)) => Some(format!("{a}/{b}")),
                (a, b) => a.or(b),
            };
            let mut final_dir = rel_modules.join(&key);
            let mut actual = dest.clone();
            if let Some(s) = &subdir {
                let rel = Path::new(s);
                if !rel.components().all(|c| matches!(c, Component::Normal(_))) {
                    return Err(fail(
                        "Failed to download module",
                        format!("the subdirectory {s:?} is not inside the package"),
                    ));
                }
                final_dir = final_dir.join(rel);
                actual = actual.join(rel);
                if !actual.is_dir() {
                    return Err(fail(
                        "Failed to download module",
                        format!("the package has no subdirectory {s:?}"),
                    ));
                }
            }
            let final_dir = final_dir.to_string_lossy().into_owned();
            println!("- {key} in {final_dir}");
            staged.push(key.clone());
            records.push(ModuleRecord {
                key: key.clone(),
                source: normalized,
                version,
                dir: final_dir.clone(),
            });
            queue.push_back(Pending {
                key,
                actual,
                dir: final_dir,
                caller,
                runs: None,
            });
        }
    }
    if unresolved.iter().any(Diagnostic::is_error) {
        ui.diags(&unresolved);
        return Err(1);
    }
    records.sort_by(|a, b| a.key.cmp(&b.key));
    let manifest = ModuleManifest { records };
    if staged.is_empty() && manifest == old {
        return Ok(());
    }
    commit(ui, &modules_dir, staging.as_ref(), &staged, &manifest)
}

/// The run modules of the working directory's test files (and those of
/// `tests/`), grouped by file: each file's runs as the calls of a module
/// keyed `test.<file>`, so each run's module gets Terraform's key
/// `test.<file>.<run>`.
fn test_run_modules(dir: &Path) -> Vec<(String, Module)> {
    let mut out: Vec<(String, Module)> = Vec::new();
    for r in terrane_config::test_run_modules(dir, "tests") {
        let key = terrane_config::run_module_key(&r.file, "");
        let key = key.trim_end_matches('.').to_string();
        if out.last().is_none_or(|(k, _)| *k != key) {
            out.push((key.clone(), Module::default()));
        }
        let calls = &mut out.last_mut().expect("pushed above").1.module_calls;
        calls.insert(
            r.run.clone(),
            terrane_config::ModuleCall {
                name: r.run,
                range: r.range,
                source: Some(r.source),
                count: None,
                for_each: None,
                inputs: Default::default(),
                version: r.version,
                source_expr: None,
                version_expr: None,
                source_range: r.source_range,
                depends_on: None,
                providers: Default::default(),
            },
        );
    }
    out
}

/// Moves every staged package into place, then writes the manifest.
fn commit(
    ui: &Ui,
    modules_dir: &Path,
    staging: Option<&tempfile::TempDir>,
    staged: &[String],
    manifest: &ModuleManifest,
) -> Result<(), u8> {
    let fail = |e: String| ui.error("Failed to install modules", e);
    std::fs::create_dir_all(modules_dir)
        .map_err(|e| fail(format!("cannot create {}: {e}", modules_dir.display())))?;
    if let Some(staging) = staging {
        for key in staged {
            let to = modules_dir.join(key);
            if std::fs::symlink_metadata(&to).is_ok() {
                std::fs::remove_dir_all(&to)
                    .or_else(|_| std::fs::remove_file(&to))
                    .map_err(|e| fail(format!("cannot replace {}: {e}", to.display())))?;
            }
            std::fs::rename(staging.path().join(key), &to)
                .map_err(|e| fail(format!("cannot move module {key} into place: {e}")))?;
        }
    }
    let path = modules_dir.join("modules.json");
    let tmp = modules_dir.join(".modules.json.tmp");
    std::fs::write(&tmp, manifest.to_json())
        .and_then(|_| std::fs::rename(&tmp, &path))
        .map_err(|e| fail(format!("cannot write {}: {e}", path.display())))
}

/// `base/rel` cleaned as Go's `filepath.Join` cleans it (`.` and `..`
/// folded, `.` for nothing), which is how Terraform writes `Dir`.
fn clean_join(base: &str, rel: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    let mut ups = 0usize;
    for seg in base.split('/').chain(rel.split('/')) {
        match seg {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    ups += 1;
                }
            }
            s => parts.push(s),
        }
    }
    let mut out: Vec<&str> = std::iter::repeat_n("..", ups).collect();
    out.extend(parts);
    if out.is_empty() {
        ".".into()
    } else {
        out.join("/")
    }
}

#[cfg(test)]
mod tests {
    use super::clean_join;

    #[test]
    fn item3_manifest_dirs_cleaned_as_terraform() {
        let cases = [
            ("root_local", ".", "./modules/a", "modules/a"),
            ("nested", "modules/a", "../b", "modules/b"),
            (
                "in_package",
                ".terraform/modules/x",
                "./sub",
                ".terraform/modules/x/sub",
            ),
            ("above_root", ".", "../shared", "../shared"),
            ("itself", "modules/a", "./", "modules/a"),
        ];
        for (case, base, rel, want) in cases {
            assert_eq!(clean_join(base, rel), want, "case {case}");
        }
    }
}
