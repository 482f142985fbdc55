//! AssertPlanValid: is a provider's planned state allowed, given the
//! configuration and the prior state? (protocol §4.2)
//!
//! Attributes: equal to config, or equal to a non-null prior with non-null
//! config (the provider suppressing an equivalent change), or computed where
//! config leaves it unset; write-only attributes must plan null; nested
//! attributes are checked element by element. Blocks: counts and keys must
//! match the configuration; no element may be unknown itself.

use super::{err, InOrder, Nested, PlanError};
use crate::{Attribute, Block, BlockNesting, NestedObject, ObjectNesting};
use std::collections::BTreeMap;
use terrane_value::{Path, Step, Type, Value};

/// All the ways `planned` breaks the rules; empty when the plan is valid.
pub fn assert_plan_valid(
    schema: &Block,
    prior: &Value,
    config: &Value,
    planned: &Value,
) -> Vec<PlanError> {
    let mut errs = Vec::new();
    check_block(schema, prior, config, planned, &mut Path::root(), &mut errs);
    errs
}

fn check_block(
    schema: &Block,
    prior: &Value,
    config: &Value,
    planned: &Value,
    path: &mut Path,
    errs: &mut Vec<PlanError>,
) {
    if planned.is_null() && !config.is_null() {
        errs.push(err(path, "planned for absence but config wants existence"));
        return;
    }
    if config.is_null() && !planned.is_null() {
        errs.push(err(path, "planned for existence but config wants absence"));
        return;
    }
    if planned.is_null() {
        return;
    }
    check_attributes(&schema.attributes, prior, config, planned, path, errs);
    let mut planned_in = InOrder::new(planned);
    let mut config_in = InOrder::new(config);
    let mut prior_in = InOrder::new(prior);
    for (name, bt) in &schema.block_types {
        path.push(Step::Attr(name.clone()));
        let ty = || bt.implied_type();
        let planned_v = planned_in.get(name, ty);
        let config_v = config_in.get(name, ty);
        let prior_v = if prior.is_null() {
            Value::null(ty())
        } else {
            prior_in.get(name, ty)
        };
        check_nested_block(
            bt.nesting, &bt.block, &prior_v, &config_v, &planned_v, path, errs,
        );
        path.pop();
    }
}

const UNKNOWN_ELEMENT: &str = "element representing nested block must not be unknown itself; set nested attribute values to unknown instead";

fn check_nested_block(
    nesting: BlockNesting,
    block: &Block,
    prior: &Value,
    config: &Value,
    planned: &Value,
    path: &mut Path,
    errs: &mut Vec<PlanError>,
) {
    if planned.eq_ignoring_refinements(config) {
        return;
    }
    if !config.is_known() {
        errs.push(err(
            path,
            format!("planned value {planned} for unknown dynamic block"),
        ));
        return;
    }
    if config.is_null() && block.computed {
        return;
    }
    if !planned.is_known() {
        errs.push(err(path, "attribute representing nested block must not be unknown itself; set nested attribute values to unknown instead"));
        return;
    }
    let kind = match nesting {
        BlockNesting::Single | BlockNesting::Group => {
            check_block(block, prior, config, planned, path, errs);
            return;
        }
        BlockNesting::List => "list",
        BlockNesting::Set => "set",
        BlockNesting::Map => "map",
    };
    if planned.is_null() {
        errs.push(err(path, format!("attribute representing a {kind} of nested blocks must be empty to indicate no blocks, not null")));
        return;
    }
    let elem_ty = block.implied_type();
    match nesting {
        BlockNesting::List => {
            let (pl, cl) = (
                planned.elements().unwrap_or(&[]),
                config.elements().unwrap_or(&[]),
            );
            if pl.len() != cl.len() {
                errs.push(err(
                    path,
                    format!(
                        "block count in plan ({}) disagrees with count in config ({})",
                        pl.len(),
                        cl.len()
                    ),
                ));
                return;
            }
            for (i, (pev, cev)) in pl.iter().zip(cl.iter()).enumerate() {
                path.push(Step::Index(i as i64));
                if !pev.is_known() {
                    errs.push(err(path, UNKNOWN_ELEMENT));
                } else {
                    let prior_ev = prior
                        .elements()
                        .and_then(|es| es.get(i))
                        .cloned()
                        .unwrap_or_else(|| Value::null(elem_ty.clone()));
                    check_block(block, &prior_ev, cev, pev, path, errs);
                }
                path.pop();
            }
        }
        BlockNesting::Map => {
            let empty = terrane_value::Entries::new();
            let (pm, cm) = (
                planned.entries().unwrap_or(&empty),
                config.entries().unwrap_or(&empty),
            );
            let object = matches!(planned.ty(), Type::Object(_));
            for (k, pev) in pm.iter() {
                let Some(cev) = cm.get(k) else {
                    errs.push(err(
                        path,
                        format!("block key {k:?} from plan is not present in config"),
                    ));
                    continue;
                };
                path.push(if object {
                    Step::Attr(k.clone())
                } else {
                    Step::Key(k.clone())
                });
                if !pev.is_known() {
                    errs.push(err(path, UNKNOWN_ELEMENT));
                } else {
                    let prior_ev = prior
                        .entries()
                        .and_then(|m| m.get(k))
                        .cloned()
                        .unwrap_or_else(|| Value::null(elem_ty.clone()));
                    check_block(block, &prior_ev, cev, pev, path, errs);
                }
                path.pop();
            }
            for k in cm.keys().filter(|k| !pm.contains_key(k)) {
                errs.push(err(
                    path,
                    format!("block key {k:?} from config is not present in plan"),
                ));
            }
        }
        _ => {
            // Set elements have no identity to correlate with config: only
            // check that none is wholly unknown.
            for (i, pev) in planned.elements().unwrap_or(&[]).iter().enumerate() {
                if !pev.is_known() {
                    path.push(Step::Index(i as i64));
                    errs.push(err(path, UNKNOWN_ELEMENT));
                    path.pop();
                }
            }
        }
    }
}

fn check_attributes(
    attrs: &BTreeMap<String, Attribute>,
    prior: &Value,
    config: &Value,
    planned: &Value,
    path: &mut Path,
    errs: &mut Vec<PlanError>,
) {
    let mut planned_in = InOrder::new(planned);
    let mut config_in = InOrder::new(config);
    let mut prior_in = InOrder::new(prior);
    for (name, attr) in attrs {
        let ty = || attr.implied_type();
        let planned_v = planned_in.get(name, ty);
        let config_v = config_in.get(name, ty);
        let prior_v = if prior.is_null() {
            Value::null(ty())
        } else {
            prior_in.get(name, ty)
        };
        // Most attributes pass without looking further: their path is
        // only made for those that may not.
        if settled(attr, &prior_v, &config_v, &planned_v) {
            continue;
        }
        path.push(Step::Attr(name.clone()));
        check_value(attr, &prior_v, &config_v, &planned_v, path, errs);
        path.pop();
    }
}

/// Whether an attribute's planned value is valid without a closer look:
/// it is the configured value, or the prior one where both are set, or
/// the provider may choose it (computed, and not configured unless only
/// computed); never for a write-only attribute.
fn settled(attr: &Attribute, prior: &Value, config: &Value, planned: &Value) -> bool {
    planned.eq_ignoring_refinements(config)
        || (planned.eq_ignoring_refinements(prior) && !prior.is_null() && !config.is_null())
        || (!attr.write_only && attr.computed && (!attr.optional || config.is_null()))
}

fn check_value(
    attr: &Attribute,
    prior: &Value,
    config: &Value,
    planned: &Value,
    path: &mut Path,
    errs: &mut Vec<PlanError>,
) {
    if settled(attr, prior, config, planned) {
        return;
    }
    if attr.write_only {
        if !planned.is_null() {
            errs.push(err(
                path,
                "planned value for write-only attribute is not null",
            ));
        }
        return;
    }
    let sensitive = attr.sensitive
        || planned.has_sensitive()
        || config.has_sensitive()
        || prior.has_sensitive();
    if config.is_null() && !planned.is_null() {
        errs.push(err(
            path,
            if sensitive {
                "planned value for a non-computed attribute".to_string()
            } else {
                format!("planned value {planned} for a non-computed attribute")
            },
        ));
        return;
    }
    if let Some(obj) = attr.nested_object() {
        check_nested_object(obj, prior, config, planned, path, errs);
        return;
    }
    let message = match (prior.is_null(), sensitive) {
        (true, true) => "sensitive planned value does not match config value".to_string(),
        (true, false) => format!("planned value {planned} does not match config value {config}"),
        (false, true) => {
            "sensitive planned value does not match config value nor prior value".to_string()
        }
        (false, false) => format!(
            "planned value {planned} does not match config value {config} nor prior value {prior}"
        ),
    };
    errs.push(err(path, message));
}

fn check_nested_object(
    obj: &NestedObject,
    prior: &Value,
    config: &Value,
    planned: &Value,
    path: &mut Path,
    errs: &mut Vec<PlanError>,
) {
    if planned.is_null() && !config.is_null() {
        errs.push(err(path, "planned for absence but config wants existence"));
        return;
    }
    if config.is_null() && !planned.is_null() {
        errs.push(err(path, "planned for existence but config wants absence"));
        return;
    }
    if !config.is_null() && !planned.is_known() {
        errs.push(err(path, "planned unknown for configured value"));
        return;
    }
    if planned.is_null() {
        return;
    }
    let nested = Nested::Object(obj);
    match obj.nesting {
        ObjectNesting::Single => {
            check_attributes(&obj.attributes, prior, config, planned, path, errs)
        }
        ObjectNesting::List => {
            let (Some(pl), Some(cl)) = (planned.elements(), config.elements()) else {
                if config.is_known() {
                    errs.push(err(path, "planned unknown for configured value"));
                }
                return;
            };
            if pl.len() != cl.len() {
                errs.push(err(
                    path,
                    format!(
                        "count in plan ({}) disagrees with count in config ({})",
                        pl.len(),
                        cl.len()
                    ),
                ));
                return;
            }
            for (i, (pev, cev)) in pl.iter().zip(cl.iter()).enumerate() {
                let prior_ev = prior
                    .elements()
                    .and_then(|es| es.get(i))
                    .cloned()
                    .unwrap_or_else(|| Value::null(nested.element_type()));
                path.push(Step::Index(i as i64));
                check_attributes(&obj.attributes, &prior_ev, cev, pev, path, errs);
                path.pop();
            }
        }
        ObjectNesting::Map => {
            let (Some(pm), Some(cm)) = (planned.entries(), config.entries()) else {
                if config.is_known() {
                    errs.push(err(path, "planned unknown for configured value"));
                }
                return;
            };
            if pm.len() != cm.len() {
                errs.push(err(
                    path,
                    format!(
                        "count in plan ({}) disagrees with count in config ({})",
                        pm.len(),
                        cm.len()
                    ),
                ));
                return;
            }
            for (k, pev) in pm.iter() {
                let Some(cev) = cm.get(k) else {
                    errs.push(err(
                        path,
                        format!("map key {k:?} from plan is not present in config"),
                    ));
                    continue;
                };
                let prior_ev = prior
                    .entries()
                    .and_then(|m| m.get(k))
                    .cloned()
                    .unwrap_or_else(|| Value::null(nested.element_type()));
                path.push(Step::Key(k.clone()));
                check_attributes(&obj.attributes, &prior_ev, cev, pev, path, errs);
                path.pop();
            }
            for k in cm.keys().filter(|k| !pm.contains_key(k)) {
                errs.push(err(
                    path,
                    format!("map key {k:?} from config is not present in plan"),
                ));
            }
        }
        ObjectNesting::Set => {
            let (Some(pl), Some(cl)) = (planned.elements(), config.elements()) else {
                return;
            };
            let (plo, phi) = set_length_range(pl);
            let (clo, chi) = set_length_range(cl);
            if phi < clo || chi < plo {
                errs.push(err(
                    path,
                    format!(
                        "count in plan ({}) disagrees with count in config ({})",
                        pl.len(),
                        cl.len()
                    ),
                ));
            }
        }
    }
}

/// The range of lengths a set can have once its unknowns are known: known
/// elements stay distinct, while elements with unknowns may coalesce with
/// them or with each other.
fn set_length_range(elems: &[Value]) -> (usize, usize) {
    let known = elems.iter().filter(|e| e.is_wholly_known()).count();
    (known.max(usize::from(!elems.is_empty())), elems.len())
}
