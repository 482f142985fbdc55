//! Provider `for_each` (OpenTofu 1.9; Terraform refuses the argument):
//! one provider instance per key of an aliased configuration, and the
//! instance keys of references (`provider = aws.by_region[each.key]`,
//! `providers = { aws = aws.by_region["a"] }`), with OpenTofu's rules and
//! diagnostics:
//! - `for_each` is evaluated statically (variables, locals, `path`,
//!   `terraform.workspace`): never deferred, never from a resource;
//! - a reference to a configuration with for_each needs a key, and a key
//!   needs such a configuration (checked at load, [`static_checks`]);
//! - each resource instance is bound to one provider instance when it is
//!   expanded ([`bind`]); the state records that instance's key (OpenTofu's
//!   instance-level `provider`), and an object whose provider instance is
//!   gone is an error, never a silent unconfigured provider.
//!
//! The instances themselves are configured by the provider node
//! (`nodes::provider_node`), with [`static_context`]'s check first.
//!
//! Layering: between `nodes` and `instance`; imports instance, walk and
//! the bottom layers.

use crate::instance::ResourceCtx;
use crate::provider::ProviderConfigKey;
use crate::values::InstanceVars;
use crate::walk::{is_error, provider_instance, Phase, Walk};
use std::sync::Arc;
use terrane_config::{Config, Diagnostic, Expr, ProviderConfig, ProviderRef, Subject};
use terrane_state::{InstanceAddr, ModulePath};
use terrane_value::Type;

/// OpenTofu evaluates a provider's `for_each` in its static context:
/// variables, locals, `path.*` and `terraform.workspace` only. The errors
/// for anything else, at the reference.
pub fn static_context(cfg: &ProviderConfig) -> Vec<Diagnostic> {
    let Some(fe) = cfg.for_each.as_ref() else {
        return Vec::new();
    };
    let what = format!(
        "provider.{}.{}.for_each",
        cfg.name,
        cfg.alias.as_deref().unwrap_or("")
    );
    let mut out = Vec::new();
    for r in &fe.refs {
        let (summary, subject) = match &r.subject {
            Subject::Var(_)
            | Subject::Local(_)
            | Subject::Path(_)
            | Subject::TerraformWorkspace => continue,
            Subject::Module(m) => (
                "Module output not supported in static context",
                format!("module.{m}"),
            ),
            Subject::Resource { data, ty, name } => (
                "Dynamic value in static context",
                format!("{}{ty}.{name}", if *data { "data." } else { "" }),
            ),
            Subject::Ephemeral { ty, name } => (
                "Dynamic value in static context",
                format!("ephemeral.{ty}.{name}"),
            ),
            Subject::CountIndex => ("Dynamic value in static context", "count.index".into()),
            Subject::EachKey => ("Dynamic value in static context", "each.key".into()),
            Subject::EachValue => ("Dynamic value in static context", "each.value".into()),
            Subject::SelfRef => ("Dynamic value in static context", "self".into()),
        };
        out.push(Diagnostic::error(
            summary,
            format!("Unable to use {subject} in static context, which is required by {what}"),
            r.range.clone(),
        ));
    }
    out
}

/// The provider configuration block `name`/`alias` of the module at
/// configuration path `module`, if it declares one.
fn declared<'c>(
    config: &'c Config,
    module: &[String],
    name: &str,
    alias: Option<&str>,
) -> Option<&'c ProviderConfig> {
    let mut c = Some(config);
    for m in module {
        c = c.and_then(|c| c.children.get(m));
    }
    c?.module
        .providers
        .iter()
        .find(|p| p.name == name && p.alias.as_deref() == alias)
}

/// OpenTofu's `InstanceValidation`, for every resource's `provider` and
/// every module call's `providers` entry: a key only for a configuration
/// with for_each, and such a configuration only with a key.
pub fn static_checks(config: &Config) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    walk_config(config, config, &mut Vec::new(), &mut out);
    out
}

fn walk_config(root: &Config, c: &Config, path: &mut Vec<String>, out: &mut Vec<Diagnostic>) {
    for r in c.module.resources.iter() {
        if let Some(p) = &r.provider_ref {
            check_ref(root, path, p, "resource", out);
        }
    }
    for call in c.module.module_calls.values() {
        for p in call.providers.values() {
            check_ref(root, path, p, "module", out);
        }
    }
    for r in &c.module.ephemeral_resources {
        if let Some(p) = &r.provider_ref {
            check_ref(root, path, p, "ephemeral resource", out);
        }
    }
    for (name, child) in &c.children {
        path.push(name.clone());
        walk_config(root, child, path, out);
        path.pop();
    }
}

fn check_ref(
    root: &Config,
    module: &[String],
    p: &ProviderRef,
    block: &str,
    out: &mut Vec<Diagnostic>,
) {
    let summary = format!("Invalid {block} provider configuration");
    let cfg = declared(root, module, &p.name, p.alias.as_deref());
    let instanced = cfg.is_some_and(|c| c.for_each.is_some());
    match (&p.key, instanced) {
        (Some(_), true) | (None, false) => {}
        (Some(k), false) => {
            let detail = match (&p.alias, cfg) {
                (None, _) => "An instance key can be specified only for a provider configuration which has an alias and uses for_each.".to_string(),
                (Some(a), None) => format!("This module doesn't declare a provider {:?} block with alias = {a:?}, which is required for use with for_each.", p.name),
                (Some(_), Some(_)) => "An instance key can be specified only for a provider configuration that uses for_each.".to_string(),
            };
            let at = if cfg.is_none() && p.alias.is_some() {
                p.range.clone()
            } else {
                k.range.clone()
            };
            out.push(Diagnostic::error(summary, detail, at));
        }
        (None, true) => out.push(Diagnostic::error(
            summary,
            "A reference to a provider configuration which uses for_each requires an instance key. Passing a collection of provider instances into a child module is not allowed.",
            p.range.clone(),
        )),
    }
}

/// Where the instance key of a resource's provider comes from: its own
/// `provider = name.alias[key]` (evaluated with its `each`/`count`), or a
/// module call's `providers = { x = name.alias["key"] }` above it
/// (evaluated in the calling module, statically). With the module path
/// (configuration) the expression is evaluated in.
fn key_expr(w: &Walk, rc: &ResourceCtx) -> Option<(Expr, Option<usize>)> {
    if let Some(k) = rc.res.provider_ref.as_ref().and_then(|p| p.key.as_deref()) {
        return Some((k.clone(), None));
    }
    let (name, alias) = crate::graph::resource_provider(&rc.res);
    let mut module = rc.module_cfg.clone();
    let (mut name, mut alias) = (name, alias);
    // Up the calls until the configuration is declared.
    loop {
        if declared(&w.core.config, &module, &name, alias.as_deref()).is_some() {
            return None;
        }
        let (call_name, parent) = module.split_last()?;
        let mut up = Some(&w.core.config);
        for m in parent {
            up = up.and_then(|c| c.children.get(m));
        }
        let call = up?.module.module_calls.get(call_name)?;
        let local = match &alias {
            Some(a) => format!("{name}.{a}"),
            None => name.clone(),
        };
        match call.providers.get(&local) {
            Some(r) => {
                if let Some(k) = &r.key {
                    return Some((Expr::clone(k), Some(parent.len())));
                }
                (name, alias) = (r.name.clone(), r.alias.clone());
            }
            None if call.providers.is_empty() && alias.is_none() => {}
            None => return None,
        }
        module = parent.to_vec();
    }
}

/// The resource context of one instance: the same as `rc` unless its
/// provider configuration has for_each, then with the provider instance
/// the instance's key expression selects (OpenTofu's errors when it
/// cannot: sensitive, null, unknown, or an instance that does not exist).
pub(crate) async fn bind(
    w: &Arc<Walk>,
    rc: &Arc<ResourceCtx>,
    module: &ModulePath,
    addr: &(dyn std::fmt::Display + Sync),
    vars: &InstanceVars,
) -> Result<Arc<ResourceCtx>, Vec<Diagnostic>> {
    // Validate checks a configuration with for_each once, under its own key.
    if w.phase == Phase::Validate {
        return Ok(rc.clone());
    }
    let Some((expr, depth)) = key_expr(w, rc) else {
        return Ok(rc.clone());
    };
    let (pm, pn, pa) = {
        let (n, a) = crate::graph::resource_provider(&rc.res);
        crate::graph::resolve_provider(&w.core.config, &rc.module_cfg, &n, a.as_deref())
    };
    if declared(&w.core.config, &pm, &pn, pa.as_deref()).is_none_or(|c| c.for_each.is_none()) {
        // Reported at load ([`static_checks`]).
        return Ok(rc.clone());
    }
    let (at, vars) = match depth {
        None => (module.clone(), vars.clone()),
        Some(d) => (
            ModulePath(module.0[..d.min(module.0.len())].to_vec()),
            InstanceVars::default(),
        ),
    };
    let (v, d) = w.eval(&at, vars, &expr);
    if d.iter().any(is_error) {
        return Err(d);
    }
    let bad = |detail: String| {
        Err(vec![Diagnostic::error(
            "Invalid provider instance key",
            detail,
            expr.range.clone(),
        )])
    };
    if v.has_sensitive() {
        return bad("A provider instance key must not be derived from a sensitive value.".into());
    }
    let v = v.unmark_deep();
    if v.is_null() {
        return bad("A provider instance key must not be null.".into());
    }
    if !v.is_wholly_known() {
        return bad(format!("The provider instance key for {addr} depends on values that cannot be determined until apply, and so OpenTofu cannot select a provider instance to create a plan for this resource instance."));
    }
    let k = match terrane_value::convert::convert(&v, &Type::String) {
        Ok(s) => s.as_str().map(str::to_string).unwrap_or_default(),
        Err(e) => return bad(format!("The given instance key is unsuitable: {e}.")),
    };
    let key = rc.provider_key.config().with_key(k);
    let Some(provider) = provider_instance(w, &key).await else {
        return Err(vec![not_present(addr, None, &key, expr.range.clone())]);
    };
    let mut bound = (**rc).clone();
    bound.provider = provider;
    bound.provider_key = Arc::new(key);
    Ok(Arc::new(bound))
}

/// OpenTofu's error for an object whose provider instance is gone (its key
/// removed from the provider's for_each while the object remains).
pub fn not_present(
    addr: &dyn std::fmt::Display,
    deposed: Option<&str>,
    key: &ProviderConfigKey,
    range: Option<terrane_config::SourceRange>,
) -> Diagnostic {
    let detail = match deposed {
        None => format!(
            "To work with {addr} its original provider instance at {key} is required, but it has been removed. This occurs when an element is removed from the provider configuration's for_each collection while objects created by that the associated provider instance still exist in the state. Re-add the for_each element to destroy {addr}, after which you can remove the provider configuration again.\n\nThis is commonly caused by using the same for_each collection both for a resource (or its containing module) and its associated provider configuration. To successfully remove an instance of a resource it must be possible to remove the corresponding element from the resource's for_each collection while retaining the corresponding element in the provider's for_each collection."
        ),
        Some(d) => format!(
            "To work with {addr}'s deposed object {d} its original provider instance at {key} is required, but it has been removed. This occurs when an element is removed from the provider configuration's for_each collection while objects created by that the associated provider instance still exist in the state. Re-add the for_each element to destroy this deposed object for {addr}, after which you can remove the provider configuration again."
        ),
    };
    Diagnostic::error("Provider instance not present", detail, range)
}

/// For an object of the state about to be deleted: OpenTofu's error when
/// the provider instance it records no longer exists (a key removed), or
/// when it records none but its configuration now has for_each.
pub async fn orphan_check(
    w: &Walk,
    addr: &InstanceAddr,
    deposed: Option<&str>,
    key: &ProviderConfigKey,
) -> Option<Diagnostic> {
    if key.key.is_some() {
        return match provider_instance(w, key).await {
            Some(_) => None,
            None => Some(not_present(addr, deposed, key, None)),
        };
    }
    if !crate::walk::provider_is_repeated(&w.core, key)? {
        return None;
    }
    let resource = &addr.resource;
    Some(Diagnostic::error(
        "Provider instance not present",
        match deposed {
            None => format!("To work with {addr} its original provider instance at {key} is required, but it has been removed. This suggests that you've added for_each to this provider configuration while there are existing instances of {resource} that need to be destroyed by the original single-instance provider configuration.\n\nTo proceed, return to your previous single-instance configuration for {key} and ensure that {resource} has been destroyed or forgotten before using for_each with this provider, or change the resource configuration to still declare an instance with the key {}.", addr.key),
            Some(d) => format!("To work with {addr}'s deposed object {d} its original provider instance at {key} is required, but it has been removed. This suggests that you've added for_each to this provider configuration while there are existing deposed objects of {resource} that need to be destroyed by the original single-instance provider configuration.\n\nTo proceed, return to your previous single-instance configuration for {key} and ensure that all deposed instances of {resource} have been destroyed before using for_each with this provider."),
        },
        None,
    ))
}
