//! AssertObjectCompatible: is `actual` a valid completion of `planned`?
//! (protocol §4.3)
//!
//! Known planned values must stay as they were; unknown planned values may
//! become anything of the right type that their refinements admit; sets are
//! correlated element by element and may shrink (unknowns can coalesce) but
//! never grow. Sensitive attributes collapse every problem into one vague
//! message so nothing secret is disclosed.

use super::{attr_of, err, PlanError};
use crate::{Block, BlockNesting};
use terrane_value::{Kind, Path, Step, Type, Value};

/// All the ways `actual` departs from `planned`; empty when compatible.
pub fn assert_object_compatible(schema: &Block, planned: &Value, actual: &Value) -> Vec<PlanError> {
    let mut errs = Vec::new();
    check_object(schema, planned, actual, &mut Path::root(), &mut errs);
    errs
}

fn check_object(
    schema: &Block,
    planned: &Value,
    actual: &Value,
    path: &mut Path,
    errs: &mut Vec<PlanError>,
) {
    let root = if path.is_root() { "Root object " } else { "" };
    if planned.is_null() && !actual.is_null() {
        errs.push(err(path, format!("{root}was absent, but now present")));
        return;
    }
    if actual.is_null() && !planned.is_null() {
        errs.push(err(path, format!("{root}was present, but now absent")));
        return;
    }
    if planned.is_null() {
        return;
    }
    for (name, attr) in &schema.attributes {
        let ty = || attr.implied_type();
        let (p, a) = (attr_of(planned, name, ty), attr_of(actual, name, ty));
        path.push(Step::Attr(name.clone()));
        let sensitive =
            attr.sensitive || p.has_sensitive() || a.has_sensitive() || nested_sensitive(attr);
        let mut found = Vec::new();
        check_value(&p.unmark_deep(), &a.unmark_deep(), path, &mut found);
        if sensitive && !found.is_empty() {
            errs.push(err(path, "inconsistent values for sensitive attribute"));
        } else {
            errs.extend(found);
        }
        path.pop();
    }
    for (name, bt) in &schema.block_types {
        let ty = || bt.implied_type();
        let (p, a) = (
            attr_of(planned, name, ty).unmark_deep(),
            attr_of(actual, name, ty).unmark_deep(),
        );
        path.push(Step::Attr(name.clone()));
        check_block(bt.nesting, &bt.block, &p, &a, path, errs);
        path.pop();
    }
}

/// Whether a nested-attribute object declares sensitive attributes inside.
fn nested_sensitive(attr: &crate::Attribute) -> bool {
    attr.nested_object().is_some_and(|o| {
        o.attributes
            .values()
            .any(|a| a.sensitive || nested_sensitive(a))
    })
}

fn check_block(
    nesting: BlockNesting,
    block: &Block,
    planned: &Value,
    actual: &Value,
    path: &mut Path,
    errs: &mut Vec<PlanError>,
) {
    if block.computed && nesting != BlockNesting::Single && actual.is_null() && !planned.is_null() {
        errs.push(err(path, "null block value after apply"));
        return;
    }
    if block.computed && !planned.is_known() {
        check_value(planned, actual, path, errs);
        return;
    }
    match nesting {
        BlockNesting::Single | BlockNesting::Group => {
            if !planned.is_known() && actual.is_null() {
                return;
            }
            check_object(block, planned, actual, path, errs);
        }
        BlockNesting::List => {
            let (Some(pl), Some(al)) = (planned.elements(), actual.elements()) else {
                return;
            };
            if pl.len() != al.len() {
                errs.push(err(
                    path,
                    format!("block count changed from {} to {}", pl.len(), al.len()),
                ));
                return;
            }
            for (i, (p, a)) in pl.iter().zip(al.iter()).enumerate() {
                path.push(Step::Index(i as i64));
                check_object(block, p, a, path, errs);
                path.pop();
            }
        }
        BlockNesting::Map => {
            if !planned.is_known() || planned.is_null() || actual.is_null() {
                return;
            }
            let (Some(pm), Some(am)) = (planned.entries(), actual.entries()) else {
                return;
            };
            let object = matches!(planned.ty(), Type::Object(_));
            for (k, p) in pm.iter() {
                let Some(a) = am.get(k) else {
                    errs.push(err(path, format!("block key {k:?} has vanished")));
                    continue;
                };
                path.push(if object {
                    Step::Attr(k.clone())
                } else {
                    Step::Key(k.clone())
                });
                check_object(block, p, a, path, errs);
                path.pop();
            }
            for k in am.keys().filter(|k| !pm.contains_key(k)) {
                errs.push(err(path, format!("new block key {k:?} has appeared")));
            }
        }
        BlockNesting::Set => {
            let (Some(pl), Some(al)) = (planned.elements(), actual.elements()) else {
                return;
            };
            correlate_sets(pl, al, path, errs, |p, a| {
                let mut e = Vec::new();
                check_object(block, p, a, &mut Path::root(), &mut e);
                e.is_empty()
            });
            if pl.len() < al.len() {
                errs.push(err(
                    path,
                    format!("block set length changed from {} to {}", pl.len(), al.len()),
                ));
            }
        }
    }
}

fn check_value(planned: &Value, actual: &Value, path: &mut Path, errs: &mut Vec<PlanError>) {
    if planned.ty().is_dynamic() {
        return;
    }
    if !actual.ty().conforms_to(planned.ty()) {
        errs.push(err(
            path,
            format!(
                "wrong final value type: {} required, but now {}",
                planned.ty(),
                actual.ty()
            ),
        ));
        return;
    }
    if !planned.is_known() {
        let admitted = planned.refinements().is_none_or(|r| r.admits(actual));
        if !admitted {
            let placeholder = planned
                .refinements()
                .map(|r| format!("(known after apply: {r})"))
                .unwrap_or_default();
            errs.push(err(
                path,
                format!(
                    "final value {actual} does not conform to planning placeholder {placeholder}"
                ),
            ));
        }
        return;
    }
    if actual.is_null() {
        if !planned.is_null() {
            errs.push(err(path, format!("was {planned}, but now null")));
        }
        return;
    }
    if planned.is_null() {
        errs.push(err(path, format!("was null, but now {actual}")));
        return;
    }
    if !actual.is_known() {
        errs.push(err(path, "was known, but now unknown"));
        return;
    }
    match (planned.kind(), actual.kind()) {
        (Kind::Seq(pl), Kind::Seq(al)) => {
            for (i, p) in pl.iter().enumerate() {
                path.push(Step::Index(i as i64));
                match al.get(i) {
                    Some(a) => check_value(p, a, path, errs),
                    None => {
                        path.pop();
                        errs.push(err(path, format!("element {i} has vanished")));
                        continue;
                    }
                }
                path.pop();
            }
            for i in pl.len()..al.len() {
                errs.push(err(path, format!("new element {i} has appeared")));
            }
        }
        (Kind::Map(pm), Kind::Map(am)) => {
            let object = matches!(planned.ty(), Type::Object(_));
            for (k, p) in pm.iter() {
                match am.get(k) {
                    Some(a) => {
                        path.push(if object {
                            Step::Attr(k.clone())
                        } else {
                            Step::Key(k.clone())
                        });
                        check_value(p, a, path, errs);
                        path.pop();
                    }
                    None => errs.push(err(path, format!("element {k:?} has vanished"))),
                }
            }
            for k in am.keys().filter(|k| !pm.contains_key(k)) {
                errs.push(err(path, format!("new element {k:?} has appeared")));
            }
        }
        (Kind::Set(pl), Kind::Set(al)) => {
            correlate_sets(pl, al, path, errs, |p, a| {
                let mut e = Vec::new();
                check_value(p, a, &mut Path::root(), &mut e);
                e.is_empty()
            });
            if pl.len() < al.len() {
                errs.push(err(
                    path,
                    format!("length changed from {} to {}", pl.len(), al.len()),
                ));
            }
        }
        _ => {
            if !planned.eq_ignoring_refinements(actual) {
                errs.push(err(path, format!("was {planned}, but now {actual}")));
            }
        }
    }
}

/// Every planned element must be compatible with some actual element and
/// vice versa. Equal elements pair up first, so the common case of an
/// unchanged set stays linear; the rest are compared pairwise.
fn correlate_sets(
    planned: &[Value],
    actual: &[Value],
    path: &Path,
    errs: &mut Vec<PlanError>,
    compatible: impl Fn(&Value, &Value) -> bool,
) {
    let mut p_ok = vec![false; planned.len()];
    let mut a_ok = vec![false; actual.len()];
    for (i, p) in planned.iter().enumerate() {
        if let Some(a) = actual.get(i) {
            if p.is_wholly_known() && p.eq_ignoring_refinements(a) {
                p_ok[i] = true;
                a_ok[i] = true;
            }
        }
    }
    for (i, p) in planned.iter().enumerate() {
        for (j, a) in actual.iter().enumerate() {
            if p_ok[i] && a_ok[j] {
                continue;
            }
            if compatible(p, a) {
                p_ok[i] = true;
                a_ok[j] = true;
            }
        }
    }
    let mut found = false;
    for (i, ok) in p_ok.iter().enumerate() {
        if !ok {
            found = true;
            errs.push(err(
                path,
                format!(
                    "planned set element {} does not correlate with any element in actual",
                    planned[i]
                ),
            ));
        }
    }
    if found {
        return;
    }
    for (j, ok) in a_ok.iter().enumerate() {
        if !ok {
            errs.push(err(
                path,
                format!(
                    "actual set element {} does not correlate with any element in plan",
                    actual[j]
                ),
            ));
        }
    }
}
