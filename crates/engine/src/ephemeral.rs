//! The `ephemeral` block node (Terraform 1.10): in each instance of its
//! module, expanded by `count` / `for_each` as a resource is; each
//! instance's configuration evaluated and validated by the provider, its
//! preconditions checked, and during plan and apply opened when wholly
//! known (else its result is unknown, as in Terraform), its postconditions
//! checked against the result (`self`), and held for the rest of the walk.
//! Results go into the walk's values only: never into state or a plan.
//!
//! Layering: a node, as those of `nodes`; imports expand, instance,
//! conditions, walk, values and the bottom layers; never nodes.

use crate::conditions::Outcome;
use crate::expand::{expansion, instance_vars};
use crate::graph::NodeId;
use crate::instance::ResourceCtx;
use crate::values::{Expansion, InstanceVars, ResourceValues};
use crate::walk::{is_error, provider_instance, schema_of, Phase, Walk};
use std::collections::BTreeMap;
use std::sync::Arc;
use terrane_config::{Diagnostic, Subject};
use terrane_state::ModulePath;
use terrane_value::Value;

/// Runs the `ephemeral "ty" "name"` node `id`; false when it failed.
pub async fn node(
    w: &Arc<Walk>,
    id: NodeId,
    ty: &str,
    name: &str,
    out: &mut Vec<Diagnostic>,
) -> bool {
    let node = &w.core.graph.nodes[id];
    let Some(cfg) = w.module_config(&node.module) else {
        return false;
    };
    let Some(res) = cfg
        .module
        .ephemeral_resources
        .iter()
        .find(|r| r.ty == ty && r.name == name)
        .cloned()
    else {
        return false;
    };
    let at = res.range.clone();
    let instances = w.values.instances_of(&node.module);
    let (pname, alias) = crate::graph::resource_provider(&res);
    let key = crate::walk::resolved_provider_key(&w.core, &node.module, &pname, alias.as_deref());
    if w.phase == Phase::Validate && w.core.absent.contains(&key.addr) {
        // Validate without init may lack the provider: the result stays
        // unknown, as for resources of an absent provider.
        return true;
    }
    let all = match schema_of(w, &pname).await {
        Ok(s) => s,
        Err(d) => {
            out.push(d);
            return false;
        }
    };
    let Some(schema) = all.ephemeral_resources.get(ty).cloned() else {
        let key = crate::walk::provider_key(&w.core, &pname, None);
        out.push(Diagnostic::error(
            "Invalid ephemeral resource",
            format!(
                "The provider {} does not support ephemeral resource {ty:?}.",
                key.addr.for_display()
            ),
            at,
        ));
        return false;
    };
    // A configuration with for_each has no instance of its own: each
    // instance is bound to its provider instance below, as resources are.
    let found = match provider_instance(w, &key).await {
        Some(p) => Some(p),
        None => crate::instance::placeholder(w, &key).await,
    };
    let Some(provider) = found else {
        return w.phase == Phase::Validate;
    };
    let rc = ResourceCtx {
        node: id,
        ty: Arc::new(schema.block.implied_type()),
        empty: Arc::new(schema.block.empty_value()),
        module_cfg: node.module.clone(),
        // Not managed: an ephemeral resource's arguments may be ephemeral.
        mode: terrane_state::Mode::Data,
        block: Arc::new(schema.block.clone()),
        schema: Arc::new(schema),
        provider: provider.clone(),
        provider_label: key.addr.to_string(),
        provider_key: Arc::new(key),
        index: crate::instance::resource_index(w, &res),
        res: Arc::new(res),
        dependencies: Vec::new(),
    };
    let rc = Arc::new(rc);
    let mut ok = true;
    for module in instances {
        let exp = match expansion(
            w,
            &module,
            rc.res.count.as_deref(),
            rc.res.for_each.as_deref(),
        ) {
            Ok(e) => e,
            Err(d) => {
                out.extend(d);
                ok = false;
                continue;
            }
        };
        let mut results = BTreeMap::new();
        for k in exp.keys() {
            let addr = format!("{}{k}", ephemeral_addr(&module, ty, name));
            let vars = instance_vars(&exp, &k);
            let bound = match crate::provider_each::bind(w, &rc, &module, &addr, &vars).await {
                Ok(b) => b,
                Err(d) => {
                    out.extend(d);
                    ok = false;
                    continue;
                }
            };
            match open(w, &bound, &module, &addr, vars, out).await {
                Err(()) => ok = false,
                Ok(Some(v)) => {
                    results.insert(k, v);
                }
                Ok(None) => {}
            }
        }
        // A single instance not opened stays absent (unknown to
        // references, of no particular type, as before it is opened).
        if exp == Expansion::Single && results.is_empty() {
            continue;
        }
        let value = ResourceValues {
            expansion: exp,
            instances: results,
            ty: (*rc.ty).clone(),
        }
        .value();
        w.values.update(&module, |m| {
            m.ephemerals
                .insert((ty.to_string(), name.to_string()), value)
        });
    }
    ok
}

/// One instance (`addr`, with `vars` for `count.index` / `each`):
/// preconditions, configuration, validation, and during plan and apply the
/// open and the postconditions. `Ok(None)`: its result is not known
/// (validate, or a configuration not wholly known); `Err`: it failed, the
/// reasons in `out`.
async fn open(
    w: &Arc<Walk>,
    rc: &ResourceCtx,
    module: &ModulePath,
    addr: &str,
    vars: InstanceVars,
    out: &mut Vec<Diagnostic>,
) -> Result<Option<Value>, ()> {
    let ty = rc.res.ty.as_str();
    if !enforce(
        w,
        rc,
        out,
        module,
        &vars,
        &rc.res.lifecycle.preconditions,
        false,
    ) {
        return Err(());
    }
    let (config, d) = rc.config(w, module, vars.clone());
    let failed = d.iter().any(is_error);
    out.extend(d);
    if failed {
        return Err(());
    }
    let plain = config.unmark_deep();
    let validated = rc
        .provider
        .validate_ephemeral_resource_config(ty, &plain)
        .await;
    rc.answer(out, validated, &addr, &rc.res.range).ok_or(())?;
    if w.phase == Phase::Validate || !plain.is_wholly_known() {
        return Ok(None);
    }
    let event = |elapsed| crate::walk::Event::Ephemeral {
        addr,
        closing: false,
        elapsed,
    };
    w.core.emit(event(None));
    let started = std::time::Instant::now();
    let opened = rc.provider.open_ephemeral_resource(ty, &plain).await;
    let opened = rc.answer(out, opened, &addr, &rc.res.range).ok_or(())?;
    w.core.emit(event(Some(started.elapsed())));
    if !opened.result.ty().conforms_to(&rc.ty) || !opened.result.is_wholly_known() {
        out.push(Diagnostic::error(
            "Provider produced invalid object",
            format!("Provider {} produced an invalid value for {addr}: the result of opening it must be a wholly known object of its schema's type. This is a bug in the provider, which should be reported in the provider's own issue tracker.", rc.provider_label()),
            rc.res.range.clone(),
        ));
        return Err(());
    }
    // Sensitive where the configuration was; not by the schema: Terraform
    // marks an ephemeral result as a whole ephemeral (references read it
    // so), and not its schema's sensitive attributes.
    let result = terrane_value::marks::mark_paths(
        &opened.result,
        &terrane_value::marks::sensitive_paths(&config),
    );
    // Held (and so closed at the walk's end) before the postconditions
    // run: a failed postcondition still closes what was opened.
    crate::sync::lock(&w.ephemerals).push(crate::walk::OpenEphemeral::new(
        addr.to_string(),
        ty.to_string(),
        rc.provider.clone(),
        rc.res.range.clone(),
        opened.private,
        opened.renew_at,
    ));
    let post = InstanceVars {
        self_value: Some(result.clone()),
        ..vars
    };
    if !enforce(
        w,
        rc,
        out,
        module,
        &post,
        &rc.res.lifecycle.postconditions,
        true,
    ) {
        return Err(());
    }
    Ok(Some(result))
}

/// An ephemeral resource's pre- or postconditions (`post`), reported as
/// Terraform reports them for ephemeral resources: the error message alone
/// as the detail; an error message that reads an ephemeral value (`self`
/// in a postcondition, an ephemeral variable or resource) is not shown,
/// with Terraform's warning at it. False when any failed or was invalid.
fn enforce(
    w: &Walk,
    rc: &ResourceCtx,
    out: &mut Vec<Diagnostic>,
    module: &ModulePath,
    vars: &InstanceVars,
    rules: &[terrane_config::CheckRule],
    post: bool,
) -> bool {
    let summary = if post {
        "Resource postcondition failed"
    } else {
        "Resource precondition failed"
    };
    let cfg = w.module_config(&rc.module_cfg);
    let mut ok = true;
    for rule in rules {
        match crate::conditions::check(w, module, vars, rule) {
            Outcome::Pass | Outcome::Deferred => {}
            Outcome::Invalid(d) => {
                out.extend(d);
                ok = false;
            }
            Outcome::Fail(msg) => {
                ok = false;
                let at = rule.condition.as_ref().and_then(|c| c.range.clone());
                let reads_ephemeral = rule.error_message.as_ref().is_some_and(|e| {
                    e.refs.iter().any(|r| post && r.subject == Subject::SelfRef)
                        || cfg.is_some_and(|c| crate::checks::ephemeral_source(c, e).is_some())
                });
                let detail = if reads_ephemeral {
                    out.push(Diagnostic::warning(
                        "Error message refers to ephemeral values",
                        "The error expression used to explain this condition refers to ephemeral values, so Terraform will not display the resulting message.\n\nYou can correct this by removing references to ephemeral values, or by using the ephemeralasnull() function on the references to not reveal ephemeral data.",
                        rule.error_message.as_ref().and_then(|e| e.range.clone()),
                    ));
                    "This check failed, but has an invalid error message as described in the other accompanying messages.".to_string()
                } else {
                    msg
                };
                out.push(Diagnostic::error(
                    summary,
                    detail,
                    at.or(rule.range.clone()),
                ));
            }
        }
    }
    ok
}

/// `module.a.ephemeral.T.N`, for messages.
fn ephemeral_addr(module: &ModulePath, ty: &str, name: &str) -> String {
    let m = module.to_string();
    if m.is_empty() {
        format!("ephemeral.{ty}.{name}")
    } else {
        format!("{m}.ephemeral.{ty}.{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use terrane_state::InstanceKey;

    #[test]
    fn item2_instance_addresses() {
        let root = ModulePath::default();
        let cases = [
            (InstanceKey::None, "ephemeral.t.n"),
            (InstanceKey::Int(1), "ephemeral.t.n[1]"),
            (InstanceKey::Str("a".into()), "ephemeral.t.n[\"a\"]"),
        ];
        for (k, want) in cases {
            assert_eq!(format!("{}{k}", ephemeral_addr(&root, "t", "n")), want);
        }
    }
}
