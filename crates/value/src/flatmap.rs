//! Terraform's flatmap: how states written before Terraform 0.12 hold an
//! object (`attributes_flat` in a v4 state file): one string per leaf,
//! keyed by its dotted path, with `NAME.#` counting a list's or set's
//! elements and `NAME.%` a map's entries. Only a type says what the
//! strings mean, so decoding needs the resource type's schema: the
//! provider's UpgradeResourceState (the SDK's) and the engine, for objects
//! not yet upgraded, decode with it. The rules are Terraform's:
//! * a primitive absent from the map is null; its string converts to the
//!   attribute's type (`"true"`, `"12"`);
//! * a list, set, map or tuple without its count key is null; a count of
//!   0 is empty;
//! * list elements are `NAME.0`, `NAME.1`, ...; set elements are keyed by
//!   a hash (`NAME.1234`) that only groups the keys of one element;
//! * a map's keys are the rest of the flat key, dots included (flatmap
//!   maps hold primitives only);
//! * a nested object is never null: its attributes decode at `NAME.ATTR`;
//! * a set counted 1 with no element keys held one element whose
//!   attributes were all null (an empty block);
//! * an attribute of any type (which no pre-0.12 schema had) is null when
//!   absent and refused when present.

use crate::{Type, Value};
use std::collections::BTreeMap;

/// Terraform's marker for an unknown value in a flatmap; a state may not
/// hold one.
const UNKNOWN: &str = "74D93920-ED26-11E3-AC10-0800200C9A66";

/// Decodes a flatmap object with the object type `ty` (a resource type's
/// implied type). Errors name the flat key at fault.
pub fn decode(flat: &BTreeMap<String, String>, ty: &Type) -> Result<Value, String> {
    let Type::Object(o) = ty else {
        return Err(format!("a flatmap decodes to an object, not {ty:?}"));
    };
    if let Some((k, _)) = flat.iter().find(|(_, v)| v.as_str() == UNKNOWN) {
        return Err(format!(
            "{k:?} holds an unknown value, which no state may hold"
        ));
    }
    object(flat, "", o.attrs())
}

fn object(
    flat: &BTreeMap<String, String>,
    prefix: &str,
    attrs: &BTreeMap<String, Type>,
) -> Result<Value, String> {
    let mut vals = BTreeMap::new();
    for (name, ty) in attrs {
        vals.insert(name.clone(), value(flat, &format!("{prefix}{name}"), ty)?);
    }
    Ok(Value::object(vals))
}

fn value(flat: &BTreeMap<String, String>, key: &str, ty: &Type) -> Result<Value, String> {
    let prefix = format!("{key}.");
    match ty {
        Type::String | Type::Number | Type::Bool => primitive(flat, key, ty),
        Type::Object(o) => object(flat, &prefix, o.attrs()),
        Type::Tuple(elems) => {
            let Some(n) = count(flat, &prefix, "#")? else {
                return Ok(Value::null(ty.clone()));
            };
            if n != elems.len() {
                return Err(format!(
                    "{prefix}# counts {n} values, but the type needs {}",
                    elems.len()
                ));
            }
            let vals = elems
                .iter()
                .enumerate()
                .map(|(i, e)| value(flat, &format!("{prefix}{i}"), e))
                .collect::<Result<_, _>>()?;
            Ok(Value::tuple(vals))
        }
        Type::List(elem) => {
            let Some(n) = count(flat, &prefix, "#")? else {
                return Ok(Value::null(ty.clone()));
            };
            let vals = (0..n)
                .map(|i| value(flat, &format!("{prefix}{i}"), elem))
                .collect::<Result<_, _>>()?;
            Ok(Value::list((**elem).clone(), vals))
        }
        Type::Map(elem) => {
            if !flat.contains_key(&format!("{prefix}%")) {
                return Ok(Value::null(ty.clone()));
            }
            let mut vals = BTreeMap::new();
            for full in keys_under(flat, &prefix) {
                let rest = &full[prefix.len()..];
                if rest != "%" {
                    vals.insert(rest.to_string(), value(flat, full, elem)?);
                }
            }
            Ok(Value::map((**elem).clone(), vals))
        }
        Type::Set(elem) => {
            let Some(n) = count(flat, &prefix, "#")? else {
                return Ok(Value::null(ty.clone()));
            };
            // Every key under NAME.HASH belongs to one element.
            let mut groups: Vec<String> = Vec::new();
            for full in keys_under(flat, &prefix) {
                let rest = &full[prefix.len()..];
                if rest == "#" {
                    continue;
                }
                let group = match rest.find('.') {
                    Some(dot) => &full[..prefix.len() + dot],
                    None => full,
                };
                if !groups.iter().any(|g| g == group) {
                    groups.push(group.to_string());
                }
            }
            let mut vals = groups
                .iter()
                .map(|g| value(flat, g, elem))
                .collect::<Result<Vec<_>, _>>()?;
            if vals.is_empty() && n == 1 {
                vals.push(empty_element(elem));
            }
            Ok(Value::set((**elem).clone(), vals))
        }
        // No pre-0.12 provider had one: absent, it is null; present, its
        // type cannot be known.
        Type::Dynamic if !flat.contains_key(key) && keys_under(flat, &prefix).next().is_none() => {
            Ok(Value::null(Type::Dynamic))
        }
        Type::Dynamic => Err(format!(
            "{key:?}: an attribute of any type cannot be read from a flatmap"
        )),
    }
}

/// The element a set counted 1 with no keys held: empty, or an object of
/// nulls (an empty block).
fn empty_element(elem: &Type) -> Value {
    match elem {
        Type::Map(e) => Value::map((**e).clone(), BTreeMap::new()),
        Type::List(e) => Value::list((**e).clone(), Vec::new()),
        Type::Set(e) => Value::set((**e).clone(), Vec::new()),
        Type::Object(o) => Value::object(
            o.attrs()
                .iter()
                .map(|(k, t)| (k.clone(), Value::null(t.clone())))
                .collect(),
        ),
        other => Value::null(other.clone()),
    }
}

fn keys_under<'a>(
    flat: &'a BTreeMap<String, String>,
    prefix: &'a str,
) -> impl Iterator<Item = &'a String> + 'a {
    flat.range(prefix.to_string()..)
        .map(|(k, _)| k)
        .take_while(move |k| k.starts_with(prefix))
}

/// The count at `PREFIX#` (or `PREFIX%`), `None` when absent.
fn count(
    flat: &BTreeMap<String, String>,
    prefix: &str,
    mark: &str,
) -> Result<Option<usize>, String> {
    let key = format!("{prefix}{mark}");
    match flat.get(&key) {
        None => Ok(None),
        Some(n) => n
            .parse::<usize>()
            .map(Some)
            .map_err(|_| format!("{key:?} must count elements, not {n:?}")),
    }
}

fn primitive(flat: &BTreeMap<String, String>, key: &str, ty: &Type) -> Result<Value, String> {
    let Some(raw) = flat.get(key) else {
        return Ok(Value::null(ty.clone()));
    };
    crate::convert::convert(&Value::string(raw.as_str()), ty)
        .map_err(|e| format!("{key:?}: {raw:?} is not a valid {}: {e}", type_word(ty)))
}

fn type_word(ty: &Type) -> &'static str {
    match ty {
        Type::Number => "number",
        Type::Bool => "bool",
        _ => "string",
    }
}

#[cfg(test)]
#[path = "flatmap_tests.rs"]
mod tests;
