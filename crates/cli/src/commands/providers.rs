//! `providers`: the providers the configuration and the state require;
//! `providers schema -json`: their schemas in Terraform's format, which
//! editors, policy and documentation tools read.

use crate::session::{load, Ui};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use terrane_config::Config;
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
    let (config, diags) = terrane_config::load_config(dir);
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
