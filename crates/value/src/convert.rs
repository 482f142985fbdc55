//! Conversions between types, as the configuration language applies them:
//! a variable value to its type constraint, an argument to a parameter
//! type, list and conditional results to one unified type.
//!
//! The rules follow Terraform's: strings convert to and from numbers and
//! bools where the text allows; tuples convert to lists and sets, objects to
//! maps; structural targets convert element by element; `dynamic` accepts
//! anything. Nulls and unknowns convert to nulls and unknowns of the target
//! type. Sensitive marks travel with every converted node. Errors name the
//! path of the failing element and never show a value.

use crate::{Kind, Path, Refinements, Type, Value};
use std::collections::BTreeMap;
use std::fmt;

/// Why a value cannot be converted: the path of the offending part and a
/// message worded like Terraform's ("a number is required").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConvertError {
    pub path: Path,
    pub message: String,
}

impl fmt::Display for ConvertError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_root() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for ConvertError {}

/// Converts `v` to type `want`. Optional-attribute markers in `want` make
/// missing attributes null; the result's type never carries markers.
pub fn convert(v: &Value, want: &Type) -> Result<Value, ConvertError> {
    conv(v, want, &mut Path::root())
}

fn fail<T>(path: &Path, message: impl Into<String>) -> Result<T, ConvertError> {
    Err(ConvertError {
        path: path.clone(),
        message: message.into(),
    })
}

/// The message for a value of the wrong type, as Terraform words it.
fn required(want: &Type) -> String {
    match want {
        Type::String => "a string is required".into(),
        Type::Number => "a number is required".into(),
        Type::Bool => "a bool is required".into(),
        Type::List(t) => format!("list of {} required", t.friendly_name()),
        Type::Set(t) => format!("set of {} required", t.friendly_name()),
        Type::Map(t) => format!("map of {} required", t.friendly_name()),
        Type::Object(_) => "object required".into(),
        Type::Tuple(ts) => format!("tuple required with exactly {} elements", ts.len()),
        Type::Dynamic => "a value is required".into(),
    }
}

fn conv(v: &Value, want: &Type, path: &mut Path) -> Result<Value, ConvertError> {
    if want.is_dynamic() || v.ty() == want {
        return Ok(v.clone());
    }
    let marks = v.marks();
    let out = match v.kind() {
        Kind::Null => {
            check_convertible(v.ty(), want, path)?;
            Value::null(want.without_optional_markers())
        }
        Kind::Unknown(r) => {
            check_convertible(v.ty(), want, path)?;
            let target = want.without_optional_markers();
            let r: Refinements = r.as_deref().cloned().unwrap_or_default();
            let same_family = std::mem::discriminant(v.ty()) == std::mem::discriminant(&target);
            let kept = if same_family {
                r
            } else {
                Refinements {
                    not_null: r.not_null,
                    ..Default::default()
                }
            };
            Value::unknown_refined(target, kept)
        }
        _ => conv_known(v, want, path)?,
    };
    Ok(out.with_marks(marks))
}

fn conv_known(v: &Value, want: &Type, path: &mut Path) -> Result<Value, ConvertError> {
    match want {
        Type::String => match v.kind() {
            Kind::String(_) => Ok(v.clone()),
            Kind::Number(n) => Ok(Value::string(n.to_string())),
            Kind::Bool(b) => Ok(Value::string(if *b { "true" } else { "false" })),
            _ => fail(path, required(want)),
        },
        Type::Number => match v.kind() {
            Kind::Number(_) => Ok(v.clone()),
            Kind::String(s) => match crate::Number::parse(s) {
                Ok(n) => Ok(Value::number(n)),
                Err(_) => fail(path, "a number is required"),
            },
            _ => fail(path, required(want)),
        },
        Type::Bool => match v.kind() {
            Kind::Bool(_) => Ok(v.clone()),
            Kind::String(s) if &**s == "true" => Ok(Value::bool(true)),
            Kind::String(s) if &**s == "false" => Ok(Value::bool(false)),
            _ => fail(path, required(want)),
        },
        Type::List(t) | Type::Set(t) => {
            let elems = match (v.kind(), v.ty()) {
                (Kind::Seq(es), Type::List(_) | Type::Tuple(_)) | (Kind::Set(es), Type::Set(_)) => {
                    es
                }
                _ => return fail(path, required(want)),
            };
            let (elem_ty, out) = conv_elements(
                elems
                    .iter()
                    .enumerate()
                    .map(|(i, e)| (crate::Step::Index(i as i64), e)),
                t,
                path,
            )?;
            Ok(if matches!(want, Type::List(_)) {
                Value::list(elem_ty, out)
            } else {
                Value::set(elem_ty, out)
            })
        }
        Type::Map(t) => {
            let Kind::Map(m) = v.kind() else {
                return fail(path, required(want));
            };
            let (elem_ty, out) = conv_elements(
                m.iter().map(|(k, e)| (crate::Step::Key(k.clone()), e)),
                t,
                path,
            )?;
            let entries: BTreeMap<String, Value> = m.keys().cloned().zip(out).collect();
            Ok(Value::map(elem_ty, entries))
        }
        Type::Tuple(ts) => {
            let Kind::Seq(es) = v.kind() else {
                return fail(path, required(want));
            };
            if es.len() != ts.len() {
                return fail(path, required(want));
            }
            let mut out = Vec::with_capacity(es.len());
            for (i, (e, t)) in es.iter().zip(ts.iter()).enumerate() {
                path.push(crate::Step::Index(i as i64));
                let r = conv(e, t, path);
                path.pop();
                out.push(r?);
            }
            Ok(Value::tuple(out))
        }
        Type::Object(ot) => {
            let Kind::Map(m) = v.kind() else {
                return fail(path, required(want));
            };
            let mut out = BTreeMap::new();
            for (name, t) in ot.attrs() {
                match m.get(name) {
                    Some(e) => {
                        path.push(crate::Step::Attr(name.clone()));
                        let r = conv(e, t, path);
                        path.pop();
                        out.insert(name.clone(), r?);
                    }
                    None if ot.is_optional(name) => {
                        out.insert(name.clone(), Value::null(t.without_optional_markers()));
                    }
                    None => {
                        return fail(
                            path,
                            format!("attribute {} is required", crate::render::quote(name)),
                        )
                    }
                }
            }
            Ok(Value::object(out))
        }
        Type::Dynamic => Ok(v.clone()),
    }
}

/// Converts collection elements to `elem`; a `dynamic` element type is first
/// unified across the elements.
fn conv_elements<'a>(
    elems: impl Iterator<Item = (crate::Step, &'a Value)> + Clone,
    elem: &Type,
    path: &mut Path,
) -> Result<(Type, Vec<Value>), ConvertError> {
    let target = if elem.has_dynamic() {
        let types: Vec<Type> = elems.clone().map(|(_, e)| e.ty().clone()).collect();
        match unify(&types) {
            Some(t) if elem.is_dynamic() => t,
            Some(_) | None if !elem.is_dynamic() => elem.clone(),
            _ => return fail(path, "all elements must have the same type"),
        }
    } else {
        elem.clone()
    };
    let mut out = Vec::new();
    for (step, e) in elems {
        path.push(step);
        let r = conv(e, &target, path);
        path.pop();
        out.push(r?);
    }
    Ok((target.without_optional_markers(), out))
}

/// Static check used for nulls and unknowns: is there a conversion from
/// type `from` to type `want` at all (ignoring values)?
fn check_convertible(from: &Type, want: &Type, path: &Path) -> Result<(), ConvertError> {
    if type_convertible(from, want) {
        Ok(())
    } else {
        fail(path, required(want))
    }
}

/// Whether some value of type `from` could convert to `want`.
pub fn type_convertible(from: &Type, want: &Type) -> bool {
    use Type::*;
    match (from, want) {
        (Dynamic, _) | (_, Dynamic) => true,
        (String, String | Number | Bool) | (Number, Number | String) | (Bool, Bool | String) => {
            true
        }
        (List(a) | Set(a), List(b) | Set(b)) | (Map(a), Map(b)) => type_convertible(a, b),
        (Tuple(ts), List(b) | Set(b)) => ts.iter().all(|t| type_convertible(t, b)),
        (List(_), Tuple(_)) => true,
        (Tuple(a), Tuple(b)) => {
            a.len() == b.len() && a.iter().zip(b.iter()).all(|(x, y)| type_convertible(x, y))
        }
        (Object(o), Map(b)) => o.attrs().values().all(|t| type_convertible(t, b)),
        (Object(a), Object(b)) => b.attrs().iter().all(|(n, t)| match a.attr(n) {
            Some(s) => type_convertible(s, t),
            None => b.is_optional(n),
        }),
        (Map(a), Object(b)) => b.attrs().values().all(|t| type_convertible(a, t)),
        _ => false,
    }
}

/// The one type that every type in `types` converts to, if there is one.
/// `dynamic` entries (untyped nulls and unknowns) take no part unless all
/// are dynamic; mixing strings with numbers or bools gives string; objects
/// with equal attribute names unify attribute-wise and otherwise become a
/// map; tuples of equal length unify element-wise.
pub fn unify(types: &[Type]) -> Option<Type> {
    let concrete: Vec<&Type> = types.iter().filter(|t| !t.is_dynamic()).collect();
    let Some(first) = concrete.first() else {
        return Some(Type::Dynamic);
    };
    if concrete.iter().all(|t| t == first) {
        return Some((*first).clone());
    }
    if concrete.iter().all(|t| t.is_primitive()) {
        let has = |want: &Type| concrete.contains(&want);
        return if has(&Type::String) {
            Some(Type::String)
        } else {
            None // number with bool
        };
    }
    let elems_of = |pick: fn(&Type) -> Option<&Type>| -> Option<Vec<Type>> {
        concrete.iter().map(|t| pick(t).cloned()).collect()
    };
    if concrete.iter().all(|t| matches!(t, Type::List(_))) {
        return unify(&elems_of(Type::element_type)?).map(Type::list);
    }
    if concrete.iter().all(|t| matches!(t, Type::Set(_))) {
        return unify(&elems_of(Type::element_type)?).map(Type::set);
    }
    if concrete.iter().all(|t| matches!(t, Type::Object(_))) {
        let names: Vec<Vec<&String>> = concrete
            .iter()
            .map(|t| {
                t.object_type()
                    .map(|o| o.attrs().keys().collect())
                    .unwrap_or_default()
            })
            .collect();
        if names.iter().all(|n| n == &names[0]) {
            let mut attrs = BTreeMap::new();
            for name in &names[0] {
                let ts: Vec<Type> = concrete
                    .iter()
                    .filter_map(|t| t.attr_type(name).cloned())
                    .collect();
                attrs.insert((*name).clone(), unify(&ts)?);
            }
            return Some(Type::Object(std::sync::Arc::new(crate::ObjectType::new(
                attrs,
            ))));
        }
    }
    if concrete.iter().all(|t| matches!(t, Type::Tuple(_))) {
        let len = first.tuple_types().map(<[Type]>::len);
        if concrete
            .iter()
            .all(|t| t.tuple_types().map(<[Type]>::len) == len)
        {
            let n = len.unwrap_or(0);
            let mut out = Vec::with_capacity(n);
            for i in 0..n {
                let ts: Vec<Type> = concrete
                    .iter()
                    .filter_map(|t| t.tuple_types().map(|ts| ts[i].clone()))
                    .collect();
                out.push(unify(&ts)?);
            }
            return Some(Type::tuple(out));
        }
    }
    // Structural types of differing shapes fall back to collections.
    if concrete
        .iter()
        .all(|t| matches!(t, Type::Object(_) | Type::Map(_)))
    {
        let ts: Vec<Type> = concrete
            .iter()
            .flat_map(|t| match t {
                Type::Object(o) => o.attrs().values().cloned().collect::<Vec<_>>(),
                Type::Map(e) => vec![(**e).clone()],
                _ => Vec::new(),
            })
            .collect();
        return unify(&ts).map(Type::map);
    }
    if concrete
        .iter()
        .all(|t| matches!(t, Type::Tuple(_) | Type::List(_)))
    {
        let ts: Vec<Type> = concrete
            .iter()
            .flat_map(|t| match t {
                Type::Tuple(ts) => ts.to_vec(),
                Type::List(e) => vec![(**e).clone()],
                _ => Vec::new(),
            })
            .collect();
        return unify(&ts).map(Type::list);
    }
    None
}

/// Unifies the types of `values` and converts each to the result.
pub fn unify_values(values: Vec<Value>) -> Result<(Type, Vec<Value>), ConvertError> {
    let types: Vec<Type> = values.iter().map(|v| v.ty().clone()).collect();
    let Some(ty) = unify(&types) else {
        return fail(&Path::root(), "all values must have the same type");
    };
    let mut out = Vec::with_capacity(values.len());
    for (i, v) in values.iter().enumerate() {
        out.push(conv(v, &ty, &mut Path::root().index(i as i64))?);
    }
    Ok((ty, out))
}

#[cfg(test)]
#[path = "convert_tests.rs"]
mod tests;
