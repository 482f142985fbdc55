//! Terraform's machine-readable formats, so tools written for Terraform's
//! JSON read ours: `show -json` of state (format 1.0) and of a plan
//! (format 1.2: planned_values, resource_changes with actions, before,
//! after, after_unknown, before_sensitive, after_sensitive, output_changes,
//! prior_state, configuration).

use serde_json::{json, Map, Value as Json};
use std::collections::BTreeMap;
use terrane_engine::{Action, Plan};
use terrane_state::{InstanceKey, Mode, Snapshot};
use terrane_value::{Kind, Value};

/// A value with unknowns left out (unknown attributes omitted, unknown
/// elements null), as JSON.
pub fn known(v: &Value) -> Json {
    match v.kind() {
        Kind::Null | Kind::Unknown(_) => Json::Null,
        Kind::String(s) => Json::String(s.to_string()),
        Kind::Number(n) => serde_json::from_str(&n.to_string()).unwrap_or(Json::Null),
        Kind::Bool(b) => Json::Bool(*b),
        Kind::Seq(es) | Kind::Set(es) => Json::Array(es.iter().map(known).collect()),
        Kind::Map(m) => Json::Object(
            m.iter()
                .filter(|(_, x)| x.is_known())
                .map(|(k, x)| (k.clone(), known(x)))
                .collect(),
        ),
    }
}

/// `true` where unknown, objects keeping only the non-false leaves.
pub fn unknown_as_bool(v: &Value) -> Json {
    as_bool(v, &|x: &Value| !x.is_known())
}

/// `true` where sensitive.
pub fn sensitive_as_bool(v: &Value) -> Json {
    as_bool(v, &|x: &Value| x.is_sensitive())
}

fn as_bool(v: &Value, leaf: &dyn Fn(&Value) -> bool) -> Json {
    if leaf(v) {
        return Json::Bool(true);
    }
    // An unknown collection says nothing about its elements: Terraform
    // writes an empty array or object for it.
    if !v.is_known() {
        return match v.ty() {
            terrane_value::Type::List(_)
            | terrane_value::Type::Set(_)
            | terrane_value::Type::Tuple(_) => json!([]),
            terrane_value::Type::Map(_) | terrane_value::Type::Object(_) => json!({}),
            _ => Json::Bool(false),
        };
    }
    match v.kind() {
        Kind::Seq(es) | Kind::Set(es) => Json::Array(es.iter().map(|e| as_bool(e, leaf)).collect()),
        Kind::Map(m) => Json::Object(
            m.iter()
                .map(|(k, x)| (k.clone(), as_bool(x, leaf)))
                .filter(|(_, j)| *j != Json::Bool(false))
                .collect(),
        ),
        _ => Json::Bool(false),
    }
}

fn index_json(k: &InstanceKey) -> Option<Json> {
    match k {
        InstanceKey::None => None,
        InstanceKey::Int(i) => Some(json!(i)),
        InstanceKey::Str(s) => Some(json!(s)),
    }
}

fn provider_name(provider: &str) -> String {
    // provider["registry.terraform.io/hashicorp/random"].alias -> the address
    provider.split('"').nth(1).unwrap_or(provider).to_string()
}

/// `values` of the JSON state format, from a snapshot (values decoded
/// without a schema: state JSON is already the value).
pub fn state_values(s: &Snapshot) -> Json {
    // Dependencies as Terraform records them (terrane keeps direct ones).
    let full = terrane_engine::with_closure_dependencies(s);
    let s = &full;
    let mut modules: BTreeMap<String, Vec<Json>> = BTreeMap::new();
    for (raddr, r) in &s.resources {
        for (key, inst) in &r.instances {
            // The current object, then the deposed ones (with their keys),
            // as Terraform lists them.
            let objects = inst
                .current
                .iter()
                .map(|o| (o, None))
                .chain(inst.deposed.iter().map(|(k, o)| (o, Some(k))));
            for (o, deposed) in objects {
                let addr = raddr.instance(key.clone());
                let attributes = unwrap_dynamic(&o.attributes);
                let value = terrane_value::json::decode_loose(&attributes);
                let value = terrane_value::marks::mark_paths(&value, &o.sensitive_paths);
                let mut m = Map::new();
                m.insert("address".into(), json!(addr.to_string()));
                m.insert("mode".into(), json!(raddr.mode.as_str()));
                m.insert("type".into(), json!(raddr.ty));
                m.insert("name".into(), json!(raddr.name));
                if let Some(i) = index_json(key) {
                    m.insert("index".into(), i);
                }
                m.insert("provider_name".into(), json!(provider_name(&r.provider)));
                m.insert("schema_version".into(), json!(o.schema_version));
                m.insert("values".into(), attributes);
                m.insert("sensitive_values".into(), sensitive_or_empty(&value));
                if !o.dependencies.is_empty() {
                    m.insert("depends_on".into(), json!(o.dependencies));
                }
                if o.status == terrane_state::Status::Tainted {
                    m.insert("tainted".into(), json!(true));
                }
                if let Some(k) = deposed {
                    m.insert("deposed_key".into(), json!(k));
                }
                modules
                    .entry(raddr.module.to_string())
                    .or_default()
                    .push(Json::Object(m));
            }
        }
    }
    let mut outputs = Map::new();
    for (name, o) in &s.outputs {
        outputs.insert(
            name.clone(),
            json!({"sensitive": o.sensitive, "value": o.value, "type": o.ty}),
        );
    }
    let mut root = json!({"resources": modules.remove("").unwrap_or_default()});
    if !modules.is_empty() {
        root["child_modules"] = Json::Array(
            modules
                .into_iter()
                .map(|(addr, rs)| json!({"resources": rs, "address": addr}))
                .collect(),
        );
    }
    let mut values = json!({"root_module": root});
    if !outputs.is_empty() {
        values["outputs"] = Json::Object(outputs);
    }
    values
}

/// State JSON keeps a `dynamic` attribute's value as `{"value": V, "type":
/// T}`; Terraform's `show -json` prints just V. Without a schema at hand,
/// an object of exactly those two keys whose `type` is a type constraint is
/// taken for such a wrapper.
fn unwrap_dynamic(j: &Json) -> Json {
    match j {
        Json::Object(m)
            if m.len() == 2
                && m.contains_key("value")
                && m.get("type")
                    .is_some_and(|t| terrane_value::typejson::from_json(t).is_ok()) =>
        {
            m["value"].clone()
        }
        Json::Object(m) => Json::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), unwrap_dynamic(v)))
                .collect(),
        ),
        Json::Array(a) => Json::Array(a.iter().map(unwrap_dynamic).collect()),
        other => other.clone(),
    }
}

/// [`unwrap_dynamic`] for a value the engine decoded from state JSON
/// without a schema (the `before` of a delete), keeping sensitive marks.
fn unwrap_loose(v: &Value) -> Value {
    let out = match v.kind() {
        Kind::Map(m) if matches!(v.ty(), terrane_value::Type::Object(_)) => {
            let wrapped = m.len() == 2
                && m.contains_key("value")
                && m.get("type")
                    .is_some_and(|t| terrane_value::typejson::from_json(&known(t)).is_ok());
            if wrapped {
                m["value"].clone()
            } else {
                Value::object(
                    m.iter()
                        .map(|(k, x)| (k.clone(), unwrap_loose(x)))
                        .collect(),
                )
            }
        }
        Kind::Seq(es) if matches!(v.ty(), terrane_value::Type::Tuple(_)) => {
            Value::tuple(es.iter().map(unwrap_loose).collect())
        }
        _ => return v.clone(),
    };
    if v.is_sensitive() {
        out.mark_sensitive()
    } else {
        out
    }
}

fn sensitive_or_empty(v: &Value) -> Json {
    match sensitive_as_bool(v) {
        Json::Bool(false) => json!({}),
        j => j,
    }
}

/// `show -json` of a state.
pub fn state(s: &Snapshot) -> Json {
    if s.resources.is_empty() && s.outputs.is_empty() {
        return json!({"format_version": "1.0"});
    }
    json!({"format_version": "1.0", "terraform_version": terrane_engine::TERRAFORM_VERSION, "values": state_values(s)})
}

/// `show -json` of a plan.
pub fn plan(p: &Plan, config: &terrane_config::Config) -> Json {
    let mut changes = Vec::new();
    let mut planned: BTreeMap<String, Vec<Json>> = BTreeMap::new();
    for c in &p.changes {
        let mut m = Map::new();
        m.insert("address".into(), json!(c.addr.to_string()));
        if let Some(d) = &c.deposed {
            m.insert("deposed".into(), json!(d));
        }
        if !c.addr.resource.module.0.is_empty() {
            m.insert(
                "module_address".into(),
                json!(c.addr.resource.module.to_string()),
            );
        }
        m.insert("mode".into(), json!(c.addr.resource.mode.as_str()));
        m.insert("type".into(), json!(c.addr.resource.ty));
        m.insert("name".into(), json!(c.addr.resource.name));
        if let Some(i) = index_json(&c.addr.key) {
            m.insert("index".into(), i);
        }
        m.insert("provider_name".into(), json!(c.provider.addr.to_string()));
        let before_v = if c.action == Action::Delete {
            unwrap_loose(&c.before)
        } else {
            c.before.clone()
        };
        let before = if before_v.is_null() {
            Json::Null
        } else {
            known(&before_v.unmark_deep())
        };
        let after = if c.after.is_null() {
            Json::Null
        } else {
            known(&c.after.unmark_deep())
        };
        // As Terraform writes it: a wholly known value has nothing unknown
        // to show (no empty collections shaped like it either).
        let after_unknown = if c.after.is_null() || c.after.is_wholly_known() {
            json!({})
        } else {
            match unknown_as_bool(&c.after) {
                Json::Bool(false) => json!({}),
                j => j,
            }
        };
        let before_sensitive = if before_v.is_null() {
            json!(false)
        } else {
            sensitive_or_empty(&before_v)
        };
        let after_sensitive = if c.after.is_null() {
            json!(false)
        } else {
            sensitive_or_empty(&c.after)
        };
        let mut change = json!({
            "actions": c.action.json_actions(),
            "before": before,
            "after": after,
            "after_unknown": after_unknown,
            "before_sensitive": before_sensitive,
            "after_sensitive": after_sensitive,
        });
        if !c.requires_replace.is_empty() {
            change["replace_paths"] = Json::Array(
                c.requires_replace
                    .iter()
                    .map(|p| Json::Array(p.0.iter().map(step_json).collect()))
                    .collect(),
            );
        }
        if let Some(id) = &c.importing {
            change["importing"] = json!({"id": id});
        }
        m.insert("change".into(), change);
        if let Some(r) = &c.reason {
            m.insert("action_reason".into(), json!(r.json()));
        }
        if let Some((from, _)) = p
            .moved
            .iter()
            .find(|(_, to)| *to == c.addr)
            .filter(|_| c.deposed.is_none())
        {
            m.insert("previous_address".into(), json!(from.to_string()));
        }
        changes.push(Json::Object(m));
        if c.action != Action::Delete && c.deposed.is_none() {
            let mut r = Map::new();
            r.insert("address".into(), json!(c.addr.to_string()));
            r.insert("mode".into(), json!(c.addr.resource.mode.as_str()));
            r.insert("type".into(), json!(c.addr.resource.ty));
            r.insert("name".into(), json!(c.addr.resource.name));
            if let Some(i) = index_json(&c.addr.key) {
                r.insert("index".into(), i);
            }
            r.insert("provider_name".into(), json!(c.provider.addr.to_string()));
            r.insert("schema_version".into(), json!(c.schema_version));
            r.insert("values".into(), known(&c.after.unmark_deep()));
            r.insert("sensitive_values".into(), sensitive_or_empty(&c.after));
            planned
                .entry(c.addr.resource.module.to_string())
                .or_default()
                .push(Json::Object(r));
        }
    }
    let mut output_changes = Map::new();
    let mut planned_outputs = Map::new();
    for (name, o) in &p.outputs {
        let removed = o.after.is_null() && o.after.ty().is_dynamic() && o.before.is_some();
        let actions: &[&str] = match (&o.before, removed) {
            (None, _) => &["create"],
            (Some(_), true) => &["delete"],
            (Some(b), false)
                if b.unmark_deep()
                    .eq_ignoring_refinements(&o.after.unmark_deep())
                    && o.after.is_wholly_known() =>
            {
                &["no-op"]
            }
            _ => &["update"],
        };
        let sens = o.sensitive || o.after.has_sensitive();
        // As Terraform writes them: no `after` for a wholly unknown value,
        // `after_unknown` shaped like the value, and a sensitive output's
        // `before_sensitive` true even when it is new.
        let mut change = json!({
            "actions": actions,
            "before": o.before.as_ref().map(|b| known(&b.unmark_deep())).unwrap_or(Json::Null),
            "after_unknown": if removed || o.after.is_wholly_known() { json!(false) } else { unknown_as_bool(&o.after) },
            "before_sensitive": o.before.as_ref().is_some_and(|b| b.has_sensitive()) || o.sensitive,
            "after_sensitive": sens,
        });
        if removed {
            change["after"] = Json::Null;
        } else if o.after.is_known() {
            change["after"] = known(&o.after.unmark_deep());
        }
        output_changes.insert(name.clone(), change);
        if !removed {
            planned_outputs.insert(
                name.clone(),
                json!({"sensitive": sens, "value": known(&o.after.unmark_deep())}),
            );
        }
    }
    let mut root = json!({"resources": planned.remove("").unwrap_or_default()});
    if !planned.is_empty() {
        root["child_modules"] = Json::Array(
            planned
                .into_iter()
                .map(|(addr, rs)| json!({"resources": rs, "address": addr}))
                .collect(),
        );
    }
    let mut out = json!({
        "format_version": "1.2",
        "terraform_version": terrane_engine::TERRAFORM_VERSION,
        "planned_values": {"outputs": planned_outputs, "root_module": root},
        "resource_changes": changes,
        "output_changes": output_changes,
        "configuration": configuration(config),
        "applyable": p.applyable && p.has_changes(),
        "complete": true,
        "errored": p.has_errors(),
    });
    if !p.variables.is_empty() {
        out["variables"] = Json::Object(
            p.variables
                .iter()
                .map(|(k, v)| (k.clone(), json!({"value": known(&v.unmark_deep())})))
                .collect(),
        );
    }
    if let Some(s) = &p.prior_state {
        out["prior_state"] = state(s);
    }
    if !p.drift.is_empty() {
        out["resource_drift"] = Json::Array(
            p.drift
                .iter()
                .map(|c| {
                    json!({"address": c.addr.to_string(), "mode": c.addr.resource.mode.as_str(), "type": c.addr.resource.ty, "name": c.addr.resource.name,
                        "provider_name": c.provider.addr.to_string(),
                        "change": {"actions": c.action.json_actions(), "before": known(&c.before.unmark_deep()), "after": known(&c.after.unmark_deep())}})
                })
                .collect(),
        );
    }
    out
}

fn step_json(s: &terrane_value::Step) -> Json {
    match s {
        terrane_value::Step::Attr(a) | terrane_value::Step::Key(a) => json!(a),
        terrane_value::Step::Index(i) => json!(i),
    }
}

/// The `configuration` section: resources with their expressions'
/// references or constant values, module calls, outputs, providers.
fn configuration(c: &terrane_config::Config) -> Json {
    fn expr(e: &terrane_config::Expr) -> Json {
        if e.refs.is_empty() {
            if let Some(v) = constant(&e.expr) {
                return json!({"constant_value": v});
            }
        }
        let mut refs: Vec<String> = Vec::new();
        for r in &e.refs {
            let s = match &r.subject {
                terrane_config::Subject::Var(n) => format!("var.{n}"),
                terrane_config::Subject::Local(n) => format!("local.{n}"),
                terrane_config::Subject::Module(n) => format!("module.{n}"),
                terrane_config::Subject::Resource {
                    data: true,
                    ty,
                    name,
                } => format!("data.{ty}.{name}"),
                terrane_config::Subject::Resource { ty, name, .. } => format!("{ty}.{name}"),
                terrane_config::Subject::Ephemeral { ty, name } => format!("ephemeral.{ty}.{name}"),
                terrane_config::Subject::CountIndex => "count.index".into(),
                terrane_config::Subject::EachKey => "each.key".into(),
                terrane_config::Subject::EachValue => "each.value".into(),
                terrane_config::Subject::Path(p) => format!("path.{p}"),
                terrane_config::Subject::TerraformWorkspace => "terraform.workspace".into(),
                terrane_config::Subject::SelfRef => "self".into(),
            };
            if !refs.contains(&s) {
                refs.push(s);
            }
        }
        json!({"references": refs})
    }
    fn module(c: &terrane_config::Config) -> Json {
        let m = &c.module;
        let resources: Vec<Json> = m
            .resources
            .iter()
            .map(|r| {
                let mode = if r.data { Mode::Data } else { Mode::Managed };
                let addr = if r.data { format!("data.{}.{}", r.ty, r.name) } else { format!("{}.{}", r.ty, r.name) };
                let mut j = json!({
                    "address": addr, "mode": mode.as_str(), "type": r.ty, "name": r.name,
                    "provider_config_key": terrane_engine::resource_provider(r).0,
                    "expressions": Json::Object(r.attributes.iter().map(|(k, e)| (k.clone(), expr(e))).collect()),
                    "schema_version": 0,
                });
                if let Some(e) = &r.count {
                    j["count_expression"] = expr(e);
                }
                if let Some(e) = &r.for_each {
                    j["for_each_expression"] = expr(e);
                }
                j
            })
            .collect();
        let outputs: Map<String, Json> = m
            .outputs
            .iter()
            .map(|(k, o)| {
                let mut j = json!({"expression": o.value.as_ref().map(expr).unwrap_or(Json::Null)});
                if o.sensitive {
                    j["sensitive"] = json!(true);
                }
                (k.clone(), j)
            })
            .collect();
        let calls: Map<String, Json> = m
            .module_calls
            .iter()
            .map(|(k, call)| {
                let child = c.children.get(k).map(module).unwrap_or(Json::Null);
                (k.clone(), json!({"source": call.source, "expressions": Json::Object(call.inputs.iter().map(|(n, e)| (n.clone(), expr(e))).collect()), "module": child}))
            })
            .collect();
        let variables: Map<String, Json> = m
            .variables
            .iter()
            .map(|(k, v)| {
                let mut j = json!({});
                if let Some(d) = v.default.as_ref().and_then(|d| constant(&d.expr)) {
                    j["default"] = d;
                }
                if let Some(desc) = &v.description {
                    j["description"] = json!(desc);
                }
                if v.sensitive {
                    j["sensitive"] = json!(true);
                }
                (k.clone(), j)
            })
            .collect();
        let mut out = json!({"resources": resources});
        if !outputs.is_empty() {
            out["outputs"] = Json::Object(outputs);
        }
        if !calls.is_empty() {
            out["module_calls"] = Json::Object(calls);
        }
        if !variables.is_empty() {
            out["variables"] = Json::Object(variables);
        }
        out
    }
    let providers: Map<String, Json> = c
        .module
        .providers
        .iter()
        .map(|p| {
            let key = match &p.alias {
                Some(a) => format!("{}.{a}", p.name),
                None => p.name.clone(),
            };
            (key, json!({"name": p.name, "alias": p.alias, "expressions": Json::Object(p.attributes.iter().map(|(k, e)| (k.clone(), expr(e))).collect())}))
        })
        .collect();
    json!({"provider_config": providers, "root_module": module(c)})
}

/// A literal expression's JSON value.
fn constant(e: &hcl_edit::expr::Expression) -> Option<Json> {
    use hcl_edit::expr::Expression as E;
    Some(match e {
        E::Null(_) => Json::Null,
        E::Bool(b) => json!(*b.value()),
        E::Number(n) => serde_json::from_str(
            n.as_repr()
                .map(|r| r.to_string())
                .unwrap_or_else(|| n.value().to_string())
                .trim(),
        )
        .ok()?,
        E::String(s) => json!(s.value().as_str()),
        E::Array(a) => Json::Array(a.iter().map(constant).collect::<Option<Vec<_>>>()?),
        E::Object(o) => {
            let mut m = Map::new();
            for (k, v) in o.iter() {
                let key = match k {
                    hcl_edit::expr::ObjectKey::Ident(i) => i.as_str().to_string(),
                    hcl_edit::expr::ObjectKey::Expression(E::String(s)) => s.value().to_string(),
                    _ => return None,
                };
                m.insert(key, constant(v.expr())?);
            }
            Json::Object(m)
        }
        E::Parenthesis(p) => constant(p.inner())?,
        _ => return None,
    })
}
