//! `state list|rm|mv|pull|push|rotate-key`, and `state show` in [`show`]
//! (which `show` of the whole state uses too).

pub mod replace_provider;
pub mod show;

use crate::args::Args;
use crate::session::{lock, off_runtime, open_store, store_config, workspace, Ui};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use terrane_config::Diagnostic;
// `StateChange`: a write to the store, not the engine's planned `Change`.
use terrane_state::{Change as StateChange, InstanceAddr, Snapshot, Target};

/// Instances of `s` the target means (an instance; a resource, meaning
/// all its instances; a module instance, meaning everything in it).
pub(crate) fn matching(s: &Snapshot, target: &Target) -> Vec<InstanceAddr> {
    let mut out = Vec::new();
    for (raddr, r) in &s.resources {
        for key in r.instances.keys() {
            let a = raddr.instance(key.clone());
            if target.matches(&a) {
                out.push(a);
            }
        }
    }
    out
}

/// Parses the address arguments strictly, reporting the first bad one as
/// Terraform does ("Invalid address").
pub(crate) fn targets(ui: &Ui, args: &[String]) -> Result<Vec<Target>, u8> {
    args.iter()
        .map(|p| {
            Target::parse(p)
                .map_err(|e| ui.error("Invalid address", format!("{:?}: {}", e.text, e.reason)))
        })
        .collect()
}

pub fn subcommand(ui: &Ui, dir: &Path, sub: &str, a: &Args) -> u8 {
    if sub == "rotate-key" {
        return rotate_key(ui, dir, a);
    }
    let store = match open_store(ui, dir) {
        Ok(s) => s,
        Err(c) => return c,
    };
    let read = || {
        store
            .snapshot(&workspace())
            .map_err(|e| ui.error("Failed to read state", e.to_string()))
    };
    match sub {
        "list" => {
            let filter = match targets(ui, &a.positional) {
                Ok(t) => t,
                Err(c) => return c,
            };
            // The addresses alone: a store may list them without decoding
            // every object's attributes.
            let addrs = match store.addresses(&workspace()) {
                Ok(a) => a,
                Err(e) => return ui.error("Failed to read state", e.to_string()),
            };
            // One buffered stream, not a write per line; a closed reader
            // ends it quietly (crate::out).
            use std::io::Write;
            let mut w = std::io::BufWriter::new(std::io::stdout().lock());
            for addr in addrs {
                let wanted = filter.is_empty() || filter.iter().any(|t| t.matches(&addr));
                if wanted && writeln!(w, "{addr}").is_err() {
                    return 0;
                }
            }
            let _ = w.flush();
            0
        }
        "pull" => {
            let mut s = match read() {
                Ok(s) => s,
                Err(c) => return c,
            };
            // Terraform's format records every upstream dependency (set in
            // place: no second copy of the state). Streamed: the document
            // is never held whole. A closed pipe (`| head`) is not an
            // error worth a panic.
            terrane_engine::set_closure_dependencies(&mut s);
            use std::io::Write;
            let mut w = std::io::BufWriter::new(std::io::stdout().lock());
            let _ = terrane_state::tfstate::export_to(&s, &mut w).and_then(|()| w.flush());
            0
        }
        "rm" | "mv" => {
            let mut run = match lock(ui, store.as_ref(), "OperationTypeInvalid", a) {
                Ok(r) => r,
                Err(c) => return c,
            };
            let code = mutate(ui, run.as_mut(), sub, a);
            if let Err(e) = run.finish() {
                return ui.error("Failed to release the state lock", e.to_string());
            }
            code
        }
        other => ui.error(
            "Unknown state subcommand",
            format!("{other:?} is not one of list, show, rm, mv, pull, push, rotate-key."),
        ),
    }
}

fn mutate(ui: &Ui, run: &mut dyn terrane_state::Run, sub: &str, a: &Args) -> u8 {
    let s = match run.snapshot() {
        Ok(s) => s,
        Err(e) => return ui.error("Failed to read state", e.to_string()),
    };
    match sub {
        "rm" => {
            if a.positional.is_empty() {
                return ui.error(
                    "Invalid number of arguments",
                    "At least one address is required.",
                );
            }
            let targets = match targets(ui, &a.positional) {
                Ok(t) => t,
                Err(c) => return c,
            };
            // Every target must match something; nothing is removed otherwise.
            let mut removed: BTreeSet<InstanceAddr> = BTreeSet::new();
            for (t, p) in targets.iter().zip(&a.positional) {
                let found = matching(&s, t);
                if found.is_empty() {
                    return ui.error("Invalid target address", format!("No matching objects found. To view the available instances, use \"terrane state list\". Please modify the address to reference a specific instance: {p}"));
                }
                removed.extend(found);
            }
            let mut changes = Vec::new();
            for x in &removed {
                if let Some(inst) = s
                    .resources
                    .get(&x.resource)
                    .and_then(|r| r.instances.get(&x.key))
                {
                    for k in inst.deposed.keys() {
                        changes.push(StateChange::RemoveObject {
                            addr: x.clone(),
                            deposed: Some(k.clone()),
                        });
                    }
                }
                changes.push(StateChange::RemoveObject {
                    addr: x.clone(),
                    deposed: None,
                });
            }
            match run.persist(&changes) {
                Ok(_) => {
                    let mut out = String::new();
                    for x in &removed {
                        out.push_str(&format!("Removed {x}\n"));
                    }
                    out.push_str(&format!(
                        "Successfully removed {} resource instance(s).\n",
                        removed.len()
                    ));
                    let _ = std::io::Write::write_all(&mut std::io::stdout(), out.as_bytes());
                    0
                }
                Err(e) => ui.error("Failed to persist state", e.to_string()),
            }
        }
        "mv" => {
            let [src, dst] = a.positional.as_slice() else {
                return ui.error(
                    "Invalid arguments",
                    "Usage: terrane state mv SOURCE DESTINATION",
                );
            };
            let (Ok(from), Ok(to)) = (InstanceAddr::parse(src), InstanceAddr::parse(dst)) else {
                return ui.error(
                    "Invalid address",
                    format!("{src:?} or {dst:?} is not a resource instance address."),
                );
            };
            let Some(o) = s.object(&from, None).cloned() else {
                return ui.error(
                    "Invalid source address",
                    format!("Cannot move {src}: does not match anything in the current state."),
                );
            };
            if s.object(&to, None).is_some() {
                return ui.error("Invalid target address", format!("Cannot move to {dst}: there is already a resource instance at that address in the current state."));
            }
            let provider = s
                .resources
                .get(&from.resource)
                .map(|r| r.instance_provider(&from.key))
                .unwrap_or_default();
            let changes = vec![
                StateChange::SetObject {
                    addr: to.clone(),
                    deposed: None,
                    provider,
                    object: o,
                },
                StateChange::RemoveObject {
                    addr: from.clone(),
                    deposed: None,
                },
            ];
            match run.persist(&changes) {
                Ok(_) => {
                    println!("Move {src:?} to {dst:?}\nSuccessfully moved 1 object(s).");
                    0
                }
                Err(e) => ui.error("Failed to persist state", e.to_string()),
            }
        }
        _ => 1,
    }
}

/// Whether `incoming` may replace `current` without `-force`, in
/// Terraform's words: never another lineage over a non-empty state, never
/// an older serial, never different content under the same serial. (The
/// serial rule holds even over an empty state of the same lineage:
/// rolling the serial back would make a stale saved plan valid again.)
pub fn push_refusal(current: &Snapshot, incoming: &Snapshot) -> Option<String> {
    let empty = current.resources.is_empty() && current.outputs.is_empty();
    if incoming.lineage != current.lineage {
        if empty {
            return None;
        }
        return Some(format!(
            "cannot import state with lineage {:?} over unrelated state with lineage {:?}",
            incoming.lineage, current.lineage
        ));
    }
    if incoming.serial < current.serial {
        return Some(format!(
            "cannot import state with serial {} over newer state with serial {}",
            incoming.serial, current.serial
        ));
    }
    if incoming.serial == current.serial
        && (incoming.resources != current.resources || incoming.outputs != current.outputs)
    {
        return Some(format!("cannot overwrite existing state with serial {} with a different state that has the same serial", current.serial));
    }
    None
}

/// `provider["registry.terraform.io/hashicorp/random"].alias` → the
/// provider's address.
fn provider_of(s: &str) -> Option<terrane_engine::provider::ProviderAddr> {
    let start = s.find("provider[\"")? + "provider[\"".len();
    let end = s[start..].find("\"]")? + start;
    terrane_engine::provider::ProviderAddr::parse(&s[start..end]).ok()
}

/// The implied type and schema version of a resource type in the state,
/// from its provider's schema (the provider must be installed).
async fn resource_type(
    engine: &terrane_engine::Engine,
    raddr: &terrane_state::ResourceAddr,
    provider: &str,
) -> Result<(terrane_value::Type, i64), Diagnostic> {
    let Some(paddr) = provider_of(provider) else {
        return Err(Diagnostic::error(
            "Invalid state file",
            format!("{raddr}: {provider:?} is not a provider configuration address"),
            None,
        ));
    };
    let schema = match engine.core.ensure_provider(&paddr) {
        Ok(()) => engine
            .core
            .host
            .schema(&paddr)
            .await
            .map_err(|e| e.to_string()),
        Err(e) => Err(e),
    };
    let schema = schema.map_err(|e| {
        Diagnostic::error(
            "Cannot check the state against its provider",
            format!("{raddr} belongs to {}, whose schema is not available ({e}); run terrane init with a configuration that requires it, then push again.", paddr.for_display()),
            None,
        )
    })?;
    let rs = match raddr.mode {
        terrane_state::Mode::Managed => schema.resource(&raddr.ty),
        terrane_state::Mode::Data => schema.data_source(&raddr.ty),
    };
    let Some(rs) = rs else {
        return Err(Diagnostic::error(
            "Invalid state file",
            format!(
                "{raddr}: provider {} has no {} type {:?}",
                paddr.for_display(),
                if raddr.mode == terrane_state::Mode::Data {
                    "data source"
                } else {
                    "resource"
                },
                raddr.ty
            ),
            None,
        ));
    };
    Ok((rs.block.implied_type(), rs.version))
}

/// The types (and schema versions) that check the state file's flatmap
/// objects (Terraform 0.11's `attributes_flat`), by resource and provider
/// address; the objects themselves are kept for the provider to upgrade.
async fn flatmap_types(
    engine: &terrane_engine::Engine,
    bytes: &[u8],
) -> Result<BTreeMap<(String, String), (terrane_value::Type, i64)>, Vec<Diagnostic>> {
    // A file that does not parse is reported by the import itself.
    let wanted = terrane_state::tfstate::flatmap_resources(bytes).unwrap_or_default();
    let mut types = BTreeMap::new();
    let mut diags = Vec::new();
    for (raddr, provider) in wanted {
        match resource_type(engine, &raddr, &provider).await {
            Ok(tv) => {
                types.insert((raddr.to_string(), provider), tv);
            }
            Err(d) => diags.push(d),
        }
    }
    if diags.is_empty() {
        Ok(types)
    } else {
        Err(diags)
    }
}

/// Checks every object's attributes against its provider's schema (the
/// state crate has no schemas): the resource type must exist, its schema
/// version must not be newer than the provider's, and attributes at the
/// provider's version must decode with the schema's type. Objects at an
/// older version are left for the provider's upgrade on the next plan.
async fn check_schemas(engine: &terrane_engine::Engine, snap: &Snapshot) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    for (raddr, r) in &snap.resources {
        let (ty, version) = match resource_type(engine, raddr, &r.provider).await {
            Ok(x) => x,
            Err(d) => {
                diags.push(d);
                continue;
            }
        };
        for (key, inst) in &r.instances {
            let addr = raddr.instance(key.clone());
            for (deposed, o) in inst
                .current
                .iter()
                .map(|o| (None, o))
                .chain(inst.deposed.iter().map(|(k, o)| (Some(k), o)))
            {
                let what = match deposed {
                    Some(k) => format!("{addr} (deposed object {k})"),
                    None => addr.to_string(),
                };
                if o.schema_version as i64 > version {
                    diags.push(Diagnostic::error(
                        "Invalid state file",
                        format!(
                            "{what}: schema version {} is newer than the provider's ({})",
                            o.schema_version, version
                        ),
                        None,
                    ));
                } else if o.schema_version as i64 == version && o.attributes_flat.is_none() {
                    if let Err(e) = o.attributes.decode(&ty) {
                        diags.push(Diagnostic::error(
                            "Invalid state file",
                            format!(
                                "{what}: the attributes do not fit the schema of {}: {e}",
                                raddr.ty
                            ),
                            None,
                        ));
                    }
                }
            }
        }
    }
    diags
}

/// `state push FILE|-`: replaces the workspace's state with a v4 file,
/// after checking it (state crate: shape, names, ranges, duplicates; here:
/// attributes against provider schemas; lineage and serial against the
/// current state unless `-force`).
pub async fn push(ui: &Ui, dir: &Path, a: &Args) -> u8 {
    let Some(f) = a.positional.first() else {
        return ui.error("Missing file", "Usage: terrane state push [-force] FILE");
    };
    let bytes = if f == "-" {
        let mut b = Vec::new();
        if let Err(e) = std::io::Read::read_to_end(&mut std::io::stdin(), &mut b) {
            return ui.error("Failed to read state file", format!("standard input: {e}"));
        }
        b
    } else {
        match std::fs::read(f) {
            Ok(b) => b,
            Err(e) => return ui.error("Failed to read state file", format!("{f}: {e}")),
        }
    };
    let engine = match crate::session::load_engine(dir) {
        Ok(e) => e,
        Err(d) => {
            ui.diags(&d);
            return 1;
        }
    };
    let settings = engine.core.config.module.state.as_ref();
    let config = match store_config(ui, dir, &engine.core.config.module) {
        Ok(c) => c,
        Err(c) => return c,
    };
    // An emergency file (errored.tfstate) sealed because encryption is on.
    let key_var = crate::errored::key_var(settings);
    let key = config
        .encryption
        .as_ref()
        .map(|enc| crate::errored::Key { enc, var: key_var });
    let bytes = match crate::errored::open(bytes, key) {
        Ok(b) => b,
        Err(e) => return ui.error("Invalid state file", format!("{f}: {e}")),
    };
    let flat = match flatmap_types(&engine, &bytes).await {
        Ok(t) => t,
        Err(d) => {
            engine.shutdown().await;
            ui.diags(&d);
            return 1;
        }
    };
    // Only an object at the provider's schema version can be checked here:
    // an older one is the provider's to migrate (its UpgradeResourceState).
    let flat_type = |raddr: &terrane_state::ResourceAddr, provider: &str, version: u64| {
        flat.get(&(raddr.to_string(), provider.to_string()))
            .filter(|(_, v)| *v == version as i64)
            .map(|(ty, _)| ty.clone())
    };
    let incoming = match terrane_state::tfstate::import_with(&bytes, &flat_type) {
        Ok(x) => x,
        Err(e) => {
            engine.shutdown().await;
            return ui.error("Invalid state file", format!("{f}: {e}"));
        }
    };
    let diags = check_schemas(&engine, &incoming).await;
    engine.shutdown().await;
    if !diags.is_empty() {
        ui.diags(&diags);
        return 1;
    }
    off_runtime(|| {
        let store = match crate::backendconf::open(&config) {
            Ok(s) => s,
            Err(e) => return ui.error("Failed to open state", e.to_string()),
        };
        let mut run = match lock(ui, store.as_ref(), "OperationTypeInvalid", a) {
            Ok(r) => r,
            Err(c) => return c,
        };
        let result = run
            .snapshot()
            .map_err(|e| ui.error("Failed to read state", e.to_string()))
            .and_then(|current| {
                if let Some(why) = push_refusal(&current, &incoming).filter(|_| !a.has("force")) {
                    return Err(ui.error("Failed to write state", why));
                }
                run.replace(&incoming)
                    .map_err(|e| ui.error("Failed to write state", e.to_string()))
            });
        if let Err(e) = run.finish() {
            return ui.error("Failed to release the state lock", e.to_string());
        }
        u8::from(result.is_err())
    })
}

/// `state rotate-key -new-key-env=VAR | -decrypt`: re-encrypts the whole
/// store with the key in `$VAR` (or decrypts it), then leaves no page with
/// an old value. The current key comes from the state settings as for
/// every command; afterwards the settings must name the new key.
fn rotate_key(ui: &Ui, dir: &Path, a: &Args) -> u8 {
    let new = match (a.value("new-key-env"), a.has("decrypt")) {
        (Some(_), true) => return ui.error("Invalid arguments", "-new-key-env and -decrypt cannot be used together."),
        (None, false) => return ui.error("Missing new key", "Usage: terrane state rotate-key -new-key-env=VAR (the variable holding the new key), or -decrypt to store the state unencrypted."),
        (Some(var), false) => match terrane_state::Encryption::from_named_env(var) {
            Ok(e) => Some((var.to_string(), e)),
            Err(e) => return ui.error("New state key not available", e.to_string()),
        },
        (None, true) => None,
    };
    let module = match crate::stateconf::module_of(dir) {
        Ok(m) => m,
        Err(d) => {
            ui.diags(&d);
            return 1;
        }
    };
    let config = match store_config(ui, dir, &module) {
        Ok(c) => c,
        Err(c) => return c,
    };
    let mut store = match terrane_state::open_store_for_rotation(&config) {
        Ok(s) => s,
        Err(e) => return ui.error("Failed to open state", e.to_string()),
    };
    if let Err(e) = store.rotate_key(new.as_ref().map(|(_, e)| e)) {
        return ui.error("Failed to rotate the state key", e.to_string());
    }
    match new {
        Some((var, _)) => println!(
            "{}\n\nThe state is now encrypted with the key in {var}. Before the next command, set encryption_key_env = {var:?} in the terraform {{ state \"...\" {{ }} }} block (or give the old variable the new key).",
            ui.style.bold("State key rotated.")
        ),
        None => println!("{}\n\nThe state is stored unencrypted. Remove encryption_key_env from the state block before the next command.", ui.style.bold("State decrypted.")),
    }
    0
}
