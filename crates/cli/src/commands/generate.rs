//! `plan -generate-config-out=FILE`: configuration for the `import`
//! blocks of the root module whose target has none. Each object is
//! imported (into a private temporary state, never the workspace's) and
//! read, and written to FILE as Terraform writes it: its arguments (the
//! attributes that are required or optional), sorted, with `null` for
//! those unset and `null # sensitive` for sensitive ones. The plan then
//! runs with FILE as part of the configuration.

use crate::args::Args;
use crate::session::{load_engine, off_runtime, options, Ui};
use std::fmt::Write as _;
use std::path::Path;
use terrane_config::Diagnostic;
use terrane_engine::PlanMode;
use terrane_state::InstanceAddr;
use terrane_value::{Kind, Value};

/// One import block with no configuration for its target.
struct Target {
    addr: InstanceAddr,
    ty: String,
    name: String,
    id: String,
}

/// Writes `out` (relative to the working directory) for the import blocks
/// that need configuration. An error is reported and its exit code
/// returned; nothing is left behind then.
pub async fn generate(ui: &Ui, dir: &Path, a: &Args, out: &str) -> Result<(), u8> {
    let path = dir.join(out);
    if path.exists() {
        return Err(ui.error("Target generated file already exists", "terrane can only write generated config into a new file. Either choose a different target location or move all existing configuration out of the target file, delete it and try again."));
    }
    let (config, diags) = terrane_config::load_config(dir, &crate::vars::statics(dir));
    if crate::session::has_errors(&diags) {
        ui.diags(&diags);
        return Err(1);
    }
    let targets = targets(&config.module).map_err(|d| {
        ui.diags(&d);
        1
    })?;
    if targets.is_empty() {
        return Ok(());
    }
    // An empty block per target, so the engine has a resource to import
    // into; replaced below by the generated configuration.
    let stub: String = targets
        .iter()
        .map(|t| format!("resource {:?} {:?} {{\n}}\n", t.ty, t.name))
        .collect();
    std::fs::write(&path, stub)
        .map_err(|e| ui.error("Failed to write generated config", e.to_string()))?;
    let generated = import_all(ui, dir, a, &targets).await;
    match generated {
        Ok(text) => std::fs::write(&path, text).map_err(|e| {
            let _ = std::fs::remove_file(&path);
            ui.error("Failed to write generated config", e.to_string())
        }),
        Err(c) => {
            let _ = std::fs::remove_file(&path);
            Err(c)
        }
    }
}

/// The import blocks of `m` whose target the configuration does not
/// declare (root module, no `for_each`: others are an error here).
fn targets(m: &terrane_config::Module) -> Result<Vec<Target>, Vec<Diagnostic>> {
    let mut out = Vec::new();
    let mut diags = Vec::new();
    for i in &m.imports {
        let Some(to) = &i.to_addr else { continue };
        let Ok(addr) = InstanceAddr::parse(to) else {
            continue;
        };
        let (ty, name) = (addr.resource.ty.clone(), addr.resource.name.clone());
        if m.resources
            .iter()
            .any(|r| !r.data && r.ty == ty && r.name == name)
        {
            continue;
        }
        if !addr.resource.module.0.is_empty() || i.for_each.is_some() {
            diags.push(Diagnostic::error(
                "Cannot generate configuration",
                format!("terrane generates configuration only for a single resource instance of the root module; {to} is not one."),
                i.range.clone(),
            ));
            continue;
        }
        let id = i.id.as_ref().map(|e| {
            let scope = terrane_eval::MapScope::new();
            let ctx = terrane_eval::default_ctx(Path::new("."));
            terrane_eval::eval_expr(e, &scope, &ctx)
        });
        match id {
            Some((v, d)) if d.is_empty() && v.as_str().is_some() => out.push(Target {
                addr,
                ty,
                name,
                id: v.as_str().unwrap_or_default().to_string(),
            }),
            _ => diags.push(Diagnostic::error(
                "Invalid import id argument",
                "The import block's id must be a known string to generate configuration from it.",
                i.id.as_ref()
                    .and_then(|e| e.range.clone())
                    .or(i.range.clone()),
            )),
        }
    }
    if diags.is_empty() {
        Ok(out)
    } else {
        Err(diags)
    }
}

/// Imports every target into a private state and renders the file.
async fn import_all(ui: &Ui, dir: &Path, a: &Args, targets: &[Target]) -> Result<String, u8> {
    let engine = load_engine(dir).map_err(|d| {
        ui.diags(&d);
        1
    })?;
    let result = import_with(ui, &engine, a, targets).await;
    engine.shutdown().await;
    result
}

async fn import_with(
    ui: &Ui,
    engine: &terrane_engine::Engine,
    a: &Args,
    targets: &[Target],
) -> Result<String, u8> {
    let opts = options(ui, engine, a, PlanMode::Normal)?;
    let tmp = tempfile::Builder::new()
        .prefix(".terrane-generate-")
        .tempdir()
        .map_err(|e| ui.error("Failed to create a temporary state", e.to_string()))?;
    let config = terrane_state::StoreConfig {
        location: terrane_state::StoreLocation::Sqlite(tmp.path().join("state.db")),
        encryption: None,
    };
    let store = off_runtime(|| terrane_state::open_store(&config))
        .map_err(|e| ui.error("Failed to create a temporary state", e.to_string()))?;
    let mut text = String::from("# __generated__ by terrane\n# Please review these resources and move them into your main configuration files.\n");
    for t in targets {
        let lock = off_runtime(|| {
            store.lock(
                "default",
                terrane_state::LockInfo::new("OperationTypeImport", ""),
            )
        })
        .map_err(|e| ui.error("Failed to lock the temporary state", e.to_string()))?;
        let snapshot = off_runtime(|| store.snapshot("default"))
            .map_err(|e| ui.error("Failed to read the temporary state", e.to_string()))?;
        let (diags, lock) = engine
            .import(&snapshot, lock, &t.addr, &t.id, opts.clone())
            .await;
        let _ = off_runtime(|| lock.finish());
        if crate::session::has_errors(&diags) {
            ui.diags(&diags);
            return Err(1);
        }
        let snapshot = off_runtime(|| store.snapshot("default"))
            .map_err(|e| ui.error("Failed to read the temporary state", e.to_string()))?;
        let provider = snapshot
            .resources
            .get(&t.addr.resource)
            .map(|r| r.provider.clone())
            .unwrap_or_default();
        let Some(object) = snapshot.object(&t.addr, None) else {
            return Err(ui.error(
                "Import returned no object",
                format!(
                    "The provider imported nothing for {} from ID {:?}.",
                    t.addr, t.id
                ),
            ));
        };
        let value = engine.stored_object_value(&t.addr, object, &provider).await;
        let schema = resource_schema(engine, &provider, &t.ty).await;
        let (Some(value), Some(schema)) = (value, schema) else {
            return Err(ui.error(
                "Cannot generate configuration",
                format!(
                    "No schema of the provider of {} describes the imported object.",
                    t.addr
                ),
            ));
        };
        let _ = write!(
            text,
            "\n# __generated__ by terrane from {:?}\nresource {:?} {:?} {{\n{}}}\n",
            t.id,
            t.ty,
            t.name,
            body(&schema.block, &value, 1)
        );
    }
    Ok(text)
}

/// The schema of `ty` from the provider the state records the object
/// under (`provider["registry.terraform.io/hashicorp/random"]`).
async fn resource_schema(
    engine: &terrane_engine::Engine,
    provider: &str,
    ty: &str,
) -> Option<terrane_schema::Schema> {
    let source = provider.split('"').nth(1)?;
    let addr = terrane_engine::provider::ProviderAddr::parse(source).ok()?;
    let schema = engine.core.host.schema(&addr).await.ok()?;
    schema.resources.get(ty).cloned()
}

/// A block's arguments and nested blocks, as Terraform's generator writes
/// them: arguments first, sorted, their `=` aligned; then nested blocks.
fn body(block: &terrane_schema::Block, v: &Value, depth: usize) -> String {
    let pad = "  ".repeat(depth);
    let args: Vec<(&String, &terrane_schema::Attribute)> = block
        .attributes
        .iter()
        .filter(|(_, a)| (a.required || a.optional) && !a.write_only)
        .collect();
    let width = args.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    let mut out = String::new();
    for (name, a) in args {
        let value = v.get_attr(name);
        let text = match value {
            _ if a.sensitive => "null # sensitive".to_string(),
            None => "null".to_string(),
            Some(x) => literal(x, depth),
        };
        let _ = writeln!(out, "{pad}{name:<width$} = {text}");
    }
    for (name, nb) in &block.block_types {
        let Some(inner) = v.get_attr(name) else {
            continue;
        };
        let items: Vec<Value> = match inner.kind() {
            Kind::Seq(es) | Kind::Set(es) => es.to_vec(),
            Kind::Map(_) => vec![inner.clone()],
            _ => Vec::new(),
        };
        for item in items {
            let _ = write!(
                out,
                "{pad}{name} {{\n{}{pad}}}\n",
                body(&nb.block, &item, depth + 1)
            );
        }
    }
    out
}

/// A value as an HCL literal.
fn literal(v: &Value, depth: usize) -> String {
    let pad = "  ".repeat(depth);
    if v.is_sensitive() {
        return "null # sensitive".into();
    }
    match v.kind() {
        Kind::Null | Kind::Unknown(_) => "null".into(),
        Kind::String(s) => terrane_value::render::quote(s),
        Kind::Number(n) => n.to_string(),
        Kind::Bool(b) => b.to_string(),
        Kind::Seq(es) | Kind::Set(es) => {
            let items: Vec<String> = es.iter().map(|e| literal(e, depth + 1)).collect();
            format!("[{}]", items.join(", "))
        }
        Kind::Map(m) => {
            if m.is_empty() {
                return "{}".into();
            }
            let width = m.keys().map(|k| k.len()).max().unwrap_or(0);
            let mut out = String::from("{\n");
            for (k, e) in m.iter() {
                let key = if is_identifier(k) {
                    k.to_string()
                } else {
                    terrane_value::render::quote(k)
                };
                let _ = writeln!(out, "{pad}  {key:<width$} = {}", literal(e, depth + 1));
            }
            format!("{out}{pad}}}")
        }
    }
}

/// Whether `k` can be written bare as an object key.
fn is_identifier(k: &str) -> bool {
    let mut chars = k.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '-')
}
