//! The expansion of resources and module calls by `count` / `for_each`:
//! evaluated into an [`Expansion`] (errors as Terraform words them; an
//! unknown one is deferred, see [`crate::defer`]), the instance variables
//! (`count.index`, `each.*`) of one instance, and a resource's expansion
//! registered for references. Used by the non-resource nodes, ephemeral
//! blocks and both phase drivers.
//!
//! Layering: imports walk, values, instance and the bottom layers; never
//! nodes, ephemeral, plan, apply or run.

use crate::instance::ResourceCtx;
use crate::values::{Expansion, InstanceVars, ResourceValues};
use crate::walk::{is_error, Phase, Walk};
use std::collections::BTreeMap;
use terrane_config::{Diagnostic, Expr};
use terrane_state::{InstanceKey, ModulePath};
use terrane_value::convert::convert;
use terrane_value::{Type, Value};

/// `count.index` / `each.*` of a module call instance.
fn call_vars(exp: &Expansion, key: &InstanceKey) -> InstanceVars {
    match key {
        InstanceKey::Int(i) => InstanceVars {
            count_index: Some(*i),
            ..Default::default()
        },
        InstanceKey::Str(k) => InstanceVars {
            each: Some((
                k.clone(),
                exp.each_value(key)
                    .unwrap_or_else(|| Value::unknown(Type::Dynamic)),
            )),
            ..Default::default()
        },
        InstanceKey::None => InstanceVars::default(),
    }
}

/// Evaluates `count` / `for_each` into an expansion; errors as Terraform
/// words them. During validate unknowns are fine.
pub fn expansion(
    w: &Walk,
    module: &ModulePath,
    count: Option<&Expr>,
    for_each: Option<&Expr>,
) -> Result<Expansion, Vec<Diagnostic>> {
    if let Some(e) = count {
        let (v, d) = w.eval(module, InstanceVars::default(), e);
        if d.iter().any(is_error) {
            return Err(d);
        }
        let v = v.unmark_deep();
        if !v.is_known() {
            // Validate checks the body once; a plan with deferral on
            // defers the resource ([`crate::defer`]).
            if w.phase == Phase::Validate || w.opts.defer {
                return Ok(Expansion::Unknown);
            }
            return Err(vec![Diagnostic::error(
                "Invalid count argument",
                "The \"count\" value depends on resource attributes that cannot be determined until apply, so Terraform cannot predict how many instances will be created. To work around this, use the -target argument to first apply only the resources that the count depends on.",
                e.range.clone(),
            )]);
        }
        let n = convert(&v, &Type::Number)
            .ok()
            .and_then(|n| n.as_number().cloned());
        return match n {
            _ if v.is_null() => Err(vec![Diagnostic::error("Invalid count argument", "The given \"count\" argument value is null. An integer is required.", e.range.clone())]),
            Some(n) if n.is_integer() && n >= terrane_value::Number::zero() => Ok(Expansion::Count(n.to_u64().unwrap_or(0) as usize)),
            Some(n) if n.is_integer() => Err(vec![Diagnostic::error("Invalid count argument", "The given \"count\" argument value is unsuitable: must be greater than or equal to zero.", e.range.clone())]),
            Some(_) => Err(vec![Diagnostic::error("Invalid count argument", "The given \"count\" argument value is unsuitable: the given number is not a whole number.", e.range.clone())]),
            None => Err(vec![Diagnostic::error("Invalid count argument", "The given \"count\" argument value is unsuitable: number required.", e.range.clone())]),
        };
    }
    if let Some(e) = for_each {
        let (v, d) = w.eval(module, InstanceVars::default(), e);
        if d.iter().any(is_error) {
            return Err(d);
        }
        if v.has_sensitive() {
            return Err(vec![Diagnostic::error(
                "Invalid for_each argument",
                "Sensitive values, or values derived from sensitive values, cannot be used as for_each arguments. If used, the sensitive value could be exposed as a resource instance key.",
                e.range.clone(),
            )]);
        }
        if v.is_null() {
            return Err(vec![Diagnostic::error("Invalid for_each argument", "The given \"for_each\" argument value is unsuitable: the given \"for_each\" argument value is null. A map, or set of strings is allowed.", e.range.clone())]);
        }
        // A map or object whose keys are known expands even if some of
        // its values are not; anything else must be wholly known.
        let keys_known = v.is_known() && matches!(v.ty(), Type::Map(_) | Type::Object(_));
        if !(v.is_wholly_known() || keys_known) {
            if w.phase == Phase::Validate || w.opts.defer {
                return Ok(Expansion::Unknown);
            }
            // Terraform's words (1.15), one for sets and one for the rest.
            let what = if matches!(v.ty(), Type::Set(_)) {
                "The \"for_each\" set includes values derived from resource attributes that cannot be determined until apply, and so Terraform cannot determine the full set of keys that will identify the instances of this resource.\n\nWhen working with unknown values in for_each, it's better to use a map value where the keys are defined statically in your configuration and where only the values contain apply-time results."
            } else {
                "The \"for_each\" map includes keys derived from resource attributes that cannot be determined until apply, and so Terraform cannot determine the full set of keys that will identify the instances of this resource.\n\nWhen working with unknown values in for_each, it's better to define the map keys statically in your configuration and place apply-time results only in the map values."
            };
            return Err(vec![Diagnostic::error(
                "Invalid for_each argument",
                format!("{what}\n\nAlternatively, you could use the -target planning option to first apply only the resources that the for_each value depends on, and then apply a second time to fully converge."),
                e.range.clone(),
            )]);
        }
        let mut m = BTreeMap::new();
        match v.ty() {
            Type::Map(_) | Type::Object(_) => {
                for (k, x) in v.entries().into_iter().flatten() {
                    m.insert(k.clone(), x.clone());
                }
            }
            Type::Set(t) if **t == Type::String || t.is_dynamic() => {
                for x in v.elements().into_iter().flatten() {
                    match x.as_str() {
                        Some(s) => {
                            m.insert(s.to_string(), x.clone());
                        }
                        None => {
                            return Err(vec![Diagnostic::error("Invalid for_each set argument", "The given \"for_each\" argument value is unsuitable: \"for_each\" sets must not contain null values.", e.range.clone())]);
                        }
                    }
                }
            }
            Type::Set(_) => {
                return Err(vec![Diagnostic::error("Invalid for_each set argument", "The given \"for_each\" argument value is unsuitable: \"for_each\" supports sets of strings, but you have provided a set containing type number.", e.range.clone())])
            }
            t => {
                return Err(vec![Diagnostic::error(
                    "Invalid for_each argument",
                    format!("The given \"for_each\" argument value is unsuitable: the \"for_each\" argument must be a map, or set of strings, and you have provided a value of type {}.", t.friendly_name()),
                    e.range.clone(),
                )])
            }
        }
        return Ok(Expansion::ForEach(m));
    }
    Ok(Expansion::Single)
}

/// Registers a resource's expansion in a module instance.
pub fn register_resource(
    w: &Walk,
    module: &ModulePath,
    mode: terrane_state::Mode,
    ty: &str,
    name: &str,
    exp: Expansion,
    value_ty: Type,
) {
    w.values.update(module, |m| {
        m.resources.insert(
            (mode, ty.to_string(), name.to_string()),
            ResourceValues {
                expansion: exp,
                instances: BTreeMap::new(),
                ty: value_ty,
            },
        );
    });
}

/// `count.index` / `each.*` for a resource instance.
pub fn instance_vars(exp: &Expansion, key: &InstanceKey) -> InstanceVars {
    call_vars(exp, key)
}

/// The expansion of a resource in one module instance, registered for
/// references; `None` after reporting why it cannot be known.
pub fn expand_resource(
    w: &Walk,
    rc: &ResourceCtx,
    module: &ModulePath,
    out: &mut Vec<Diagnostic>,
) -> Option<Expansion> {
    match expansion(
        w,
        module,
        rc.res.count.as_deref(),
        rc.res.for_each.as_deref(),
    ) {
        Ok(exp) => {
            register_resource(
                w,
                module,
                rc.mode,
                &rc.res.ty,
                &rc.res.name,
                exp.clone(),
                (*rc.ty).clone(),
            );
            Some(exp)
        }
        Err(d) => {
            out.extend(d);
            None
        }
    }
}
