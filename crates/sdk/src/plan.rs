//! The plan logic an author should not have to write, applied to every
//! PlanResourceChange before the resource's own `modify_plan`:
//!
//! * defaults for unset optional+computed attributes;
//! * computed attributes left unset in configuration become unknown on
//!   create, and on update whenever anything else changes (unless marked
//!   "use state for unknown");
//! * "requires replace" attributes whose planned value differs from the
//!   prior one are reported so Terraform replaces the resource.

use crate::schema::ResourceSchema;
use terrane_value::{Entries, Path, Value};

/// The framework's planned value and replace paths for a non-destroy plan.
pub fn plan(
    schema: &ResourceSchema,
    prior: &Value,
    proposed: &Value,
    config: &Value,
) -> (Value, Vec<Path>) {
    let Some(entries) = proposed.entries() else {
        return (proposed.clone(), Vec::new());
    };
    // Shared with `proposed` until the first change copies it.
    let mut planned = entries.clone();
    for (name, attr) in schema.attrs() {
        let cfg_null = config.get_attr(name).is_none_or(Value::is_null);
        if let (Some(d), true) = (&attr.default, cfg_null) {
            set(&mut planned, name, d.clone());
        } else if let (Some(f), true) = (&attr.default_fn, cfg_null) {
            set(&mut planned, name, f(config));
        }
    }
    let creating = prior.is_null();
    if !creating {
        for (name, attr) in schema.attrs() {
            let (Some(eq), Some(p), Some(c)) = (
                &attr.semantic_eq,
                prior.get_attr(name),
                config.get_attr(name),
            ) else {
                continue;
            };
            if !p.is_null()
                && c.is_wholly_known()
                && !c.is_null()
                && !p.eq_ignoring_refinements(c)
                && eq(p, c)
            {
                set(&mut planned, name, p.clone());
            }
        }
    }
    let changed = creating || !Value::object_of(planned.clone()).eq_ignoring_refinements(prior);
    if changed {
        for (name, attr) in schema.attrs() {
            let cfg_null = config.get_attr(name).is_none_or(Value::is_null);
            if !attr.proto.computed
                || !cfg_null
                || attr.default.is_some()
                || attr.default_fn.is_some()
            {
                continue;
            }
            let keep = attr.use_state_for_unknown
                && !creating
                && prior.get_attr(name).is_some_and(|p| !p.is_null());
            if !keep {
                set(&mut planned, name, Value::unknown(attr.ty()));
            }
        }
    }
    let mut replace = Vec::new();
    if !creating {
        for (name, attr) in schema.attrs() {
            if !attr.requires_replace && attr.replace_if.is_none() {
                continue;
            }
            let (before, after) = (prior.get_attr(name), planned.get(name));
            if let (Some(b), Some(a)) = (before, after) {
                let differs = !a.eq_ignoring_refinements(b);
                let wanted =
                    attr.requires_replace || attr.replace_if.as_ref().is_some_and(|f| f(b, a));
                if differs && wanted {
                    replace.push(Path::root().attr(name.clone()));
                }
            }
        }
    }
    (
        Value::object_of(planned).with_sensitive(proposed.is_sensitive()),
        replace,
    )
}

/// Sets attribute `name` (in place when present: no copy of the name).
fn set(planned: &mut Entries, name: &str, v: Value) {
    match planned.get_mut(name) {
        Some(slot) => *slot = v,
        None => {
            planned.insert(name.to_string(), v);
        }
    }
}

/// JSON texts that parse to the same document (whitespace, key order and
/// number spelling aside) are semantically equal: a ready-made hook for
/// [`crate::Attr::semantic_equality`].
pub fn json_equivalent(a: &Value, b: &Value) -> bool {
    match (a.as_str(), b.as_str()) {
        (Some(x), Some(y)) => match (
            serde_json::from_str::<serde_json::Value>(x),
            serde_json::from_str::<serde_json::Value>(y),
        ) {
            (Ok(p), Ok(q)) => p == q,
            _ => false,
        },
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::Attr;
    use terrane_value::Type;

    fn schema() -> ResourceSchema {
        ResourceSchema::new(0)
            .attr("length", Attr::number().required().requires_replace())
            .attr(
                "special",
                Attr::bool().default(Value::bool(true)).requires_replace(),
            )
            .attr("note", Attr::string().optional())
            .attr("id", Attr::string().computed().use_state_for_unknown())
            .attr("result", Attr::string().computed())
    }

    fn obj(length: i64, special: Value, note: Value, id: Value, result: Value) -> Value {
        Value::object_from([
            ("length", Value::number(length)),
            ("special", special),
            ("note", note),
            ("id", id),
            ("result", result),
        ])
    }

    #[track_caller]
    fn check(
        case: &str,
        prior: Value,
        proposed: Value,
        config: Value,
        want: Value,
        want_replace: &[&str],
    ) {
        let (got, replace) = plan(&schema(), &prior, &proposed, &config);
        assert_eq!(got, want, "case {case}");
        let got_replace: Vec<String> = replace.iter().map(ToString::to_string).collect();
        assert_eq!(got_replace, want_replace, "case {case}: requires_replace");
    }

    #[test]
    fn function_default_uses_configuration() {
        let s = ResourceSchema::new(0)
            .attr("name", Attr::string().required())
            .attr(
                "label",
                Attr::string().default_fn(|cfg| {
                    match cfg.get_attr("name").and_then(Value::as_str) {
                        Some(n) => Value::string(format!("{n}-label")),
                        None => Value::unknown(Type::String),
                    }
                }),
            );
        let cfg = Value::object_from([
            ("name", Value::string("web")),
            ("label", Value::null(Type::String)),
        ]);
        let (got, _) = plan(&s, &Value::null(cfg.ty().clone()), &cfg, &cfg);
        assert_eq!(
            got.get_attr("label"),
            Some(&Value::string("web-label")),
            "case default_fn_from_config"
        );
        let set = Value::object_from([
            ("name", Value::string("web")),
            ("label", Value::string("mine")),
        ]);
        assert_eq!(
            plan(&s, &Value::null(cfg.ty().clone()), &set, &set)
                .0
                .get_attr("label"),
            Some(&Value::string("mine")),
            "case configured_wins"
        );
    }

    #[test]
    fn semantic_equality_and_replace_if() {
        let s = ResourceSchema::new(0)
            .attr(
                "doc",
                Attr::string().optional().semantic_equality(json_equivalent),
            )
            .attr(
                "size",
                Attr::number()
                    .optional()
                    .requires_replace_if(|p, a| a.as_number() < p.as_number()),
            );
        let obj = |doc: &str, size: i64| {
            Value::object_from([("doc", Value::string(doc)), ("size", Value::number(size))])
        };
        let prior = obj(r#"{"a": 1, "b": [1, 2]}"#, 10);
        let config = obj(r#"{ "b":[1,2],"a":1 }"#, 10);
        let (got, replace) = plan(&s, &prior, &config, &config);
        assert_eq!(got, prior, "case json_whitespace_keeps_prior_spelling");
        assert!(replace.is_empty());
        let config = obj(r#"{"a": 2}"#, 10);
        assert_eq!(
            plan(&s, &prior, &config, &config).0,
            config,
            "case real_json_change_planned"
        );
        let grow = obj(r#"{"a": 1, "b": [1, 2]}"#, 20);
        assert!(
            plan(&s, &prior, &grow, &grow).1.is_empty(),
            "case growing_in_place"
        );
        let shrink = obj(r#"{"a": 1, "b": [1, 2]}"#, 5);
        assert_eq!(
            plan(&s, &prior, &shrink, &shrink).1,
            vec![Path::root().attr("size")],
            "case shrinking_replaces"
        );
    }

    #[test]
    fn plan_logic() {
        let ns = || Value::null(Type::String);
        let nb = || Value::null(Type::Bool);
        let us = || Value::unknown(Type::String);
        check(
            "create_defaults_and_unknown_computed",
            Value::null(schema().block_schema().implied_type()),
            obj(8, nb(), ns(), ns(), ns()),
            obj(8, nb(), ns(), ns(), ns()),
            obj(8, Value::bool(true), ns(), us(), us()),
            &[],
        );
        let prior = obj(
            8,
            Value::bool(true),
            ns(),
            Value::string("i"),
            Value::string("r"),
        );
        check(
            "no_change_keeps_prior",
            prior.clone(),
            prior.clone(),
            obj(8, nb(), ns(), ns(), ns()),
            prior.clone(),
            &[],
        );
        check(
            "update_marks_computed_unknown_but_keeps_state_for_unknown",
            prior.clone(),
            obj(
                8,
                Value::bool(true),
                Value::string("n"),
                Value::string("i"),
                Value::string("r"),
            ),
            obj(8, nb(), Value::string("n"), ns(), ns()),
            obj(
                8,
                Value::bool(true),
                Value::string("n"),
                Value::string("i"),
                us(),
            ),
            &[],
        );
        check(
            "requires_replace_on_change",
            prior.clone(),
            obj(
                9,
                Value::bool(true),
                ns(),
                Value::string("i"),
                Value::string("r"),
            ),
            obj(9, nb(), ns(), ns(), ns()),
            obj(9, Value::bool(true), ns(), Value::string("i"), us()),
            &[".length"],
        );
        check(
            "configured_value_over_default_requires_replace",
            prior.clone(),
            obj(
                8,
                Value::bool(false),
                ns(),
                Value::string("i"),
                Value::string("r"),
            ),
            obj(8, Value::bool(false), ns(), ns(), ns()),
            obj(8, Value::bool(false), ns(), Value::string("i"), us()),
            &[".special"],
        );
    }
}
