//! Terraform's machine-readable formats, so tools written for Terraform's
//! JSON read ours: `show -json` of state (format 1.0) and of a plan
//! (format 1.2: planned_values, resource_changes with actions, before,
//! after, after_unknown, before_sensitive, after_sensitive, output_changes,
//! prior_state, configuration).

use serde_json::{json, Map, Value as Json};
use std::collections::BTreeMap;
use terrane_engine::{Action, Plan};
use terrane_state::{InstanceKey, Mode, ResourceAddr, Snapshot};
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

/// One stored object (a current one, or a deposed one with its key) of
/// `show -json`'s state values, with the dependencies Terraform records
/// (`deps`: the object's closure, see
/// [`terrane_engine::closure_dependencies`]).
fn object_json(
    raddr: &ResourceAddr,
    provider: &str,
    key: &InstanceKey,
    o: &terrane_state::ObjectState,
    deposed: Option<&String>,
    deps: &[String],
) -> Json {
    let addr = raddr.instance(key.clone());
    let attributes = unwrap_dynamic(&o.attributes.json());
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
    m.insert("provider_name".into(), json!(provider_name(provider)));
    m.insert("schema_version".into(), json!(o.schema_version));
    m.insert("values".into(), attributes);
    m.insert("sensitive_values".into(), sensitive_or_empty(&value));
    if !deps.is_empty() {
        m.insert("depends_on".into(), json!(deps));
    }
    if o.status == terrane_state::Status::Tainted {
        m.insert("tainted".into(), json!(true));
    }
    if let Some(k) = deposed {
        m.insert("deposed_key".into(), json!(k));
    }
    Json::Object(m)
}

/// `show -json` of a state as a document (a plan's `prior_state`): what
/// [`write_state`] writes, read back.
pub fn state(s: &Snapshot) -> Json {
    let mut out = Vec::new();
    write_state(s, &mut out).expect("writing to memory cannot fail");
    serde_json::from_slice(&out).expect("write_state writes valid JSON")
}

/// `show -json` of a state (format 1.0), written to `w` as it is built:
/// one object at a time, so the document never exists whole in memory
/// beside the state it is made from (issue 19). The bytes are those of the
/// whole document serialized at once: `format_version`,
/// `terraform_version`, then `values` with `root_module` (`resources`,
/// then `child_modules`, each `resources` and `address`) and `outputs`,
/// modules in address order, objects in state order (the current object,
/// then the deposed ones, as Terraform lists them); a newline ends it.
pub fn write_state(s: &Snapshot, w: &mut impl std::io::Write) -> std::io::Result<()> {
    let mut writer = StateWriter::new(w);
    s.stream(&mut |item| writer.visit(item));
    writer.finish()
}

/// [`write_state`] of the state `store` holds for `workspace`, read one
/// object at a time ([`terrane_state::StateStore::stream`]): neither the
/// state nor the document is ever held whole. A store error is returned
/// as is; a write error (a reader gone) ends the stream and is returned.
pub fn write_store_state(
    store: &dyn terrane_state::StateStore,
    workspace: &str,
    w: &mut impl std::io::Write,
) -> Result<std::io::Result<()>, terrane_state::StateError> {
    let mut writer = StateWriter::new(w);
    store.stream(workspace, &mut |item| writer.visit(item))?;
    Ok(writer.finish())
}

/// Writes `show -json`'s state document from a stream
/// ([`terrane_state::Streamed`] items, objects in module order).
struct StateWriter<'w, W: std::io::Write> {
    w: &'w mut W,
    deps: terrane_engine::DependencyClosure,
    /// The outputs, written last; None: the state is empty (and the
    /// document written whole).
    outputs: Option<Json>,
    /// The module whose `resources` are being written (None: the root's
    /// not yet begun).
    module: Option<String>,
    /// Whether an object was written in the current module's `resources`.
    first: bool,
    failed: Option<std::io::Error>,
}

impl<'w, W: std::io::Write> StateWriter<'w, W> {
    fn new(w: &'w mut W) -> Self {
        StateWriter {
            w,
            deps: Default::default(),
            outputs: None,
            module: None,
            first: true,
            failed: None,
        }
    }

    fn visit(&mut self, item: terrane_state::Streamed<'_>) -> std::ops::ControlFlow<()> {
        match self.write(item) {
            Ok(()) => std::ops::ControlFlow::Continue(()),
            Err(e) => {
                self.failed = Some(e);
                std::ops::ControlFlow::Break(())
            }
        }
    }

    fn write(&mut self, item: terrane_state::Streamed<'_>) -> std::io::Result<()> {
        use terrane_state::Streamed;
        match item {
            Streamed::Start { outputs, resources } => {
                if !resources && outputs.is_empty() {
                    return writeln!(self.w, "{}", json!({"format_version": "1.0"}));
                }
                let mut m = Map::new();
                for (name, o) in outputs {
                    m.insert(
                        name.clone(),
                        json!({"sensitive": o.sensitive, "value": o.value, "type": o.ty}),
                    );
                }
                self.outputs = Some(Json::Object(m));
                write!(
                    self.w,
                    "{{\"format_version\":\"1.0\",\"terraform_version\":{},\"values\":{{\"root_module\":{{\"resources\":[",
                    Json::from(terrane_engine::TERRAFORM_VERSION)
                )?;
                self.module = Some(String::new());
            }
            Streamed::Dependencies {
                resource,
                dependencies,
            } => self.deps.add_direct(resource, dependencies),
            Streamed::Object {
                addr,
                deposed,
                provider,
                object,
            } => {
                let raddr = &addr.resource;
                let module = raddr.module.to_string();
                if self.module.as_deref() != Some(module.as_str()) {
                    if self.module.as_deref() == Some("") {
                        self.w.write_all(b"],\"child_modules\":[")?;
                    } else {
                        self.end_child()?;
                        self.w.write_all(b",")?;
                    }
                    self.w.write_all(b"{\"resources\":[")?;
                    self.module = Some(module);
                    self.first = true;
                }
                let d = self.deps.of(raddr, &object.dependencies);
                let deposed = deposed.map(str::to_string);
                let j = object_json(raddr, provider, &addr.key, object, deposed.as_ref(), &d);
                if !self.first {
                    self.w.write_all(b",")?;
                }
                self.first = false;
                serde_json::to_writer(&mut *self.w, &j)?;
            }
        }
        Ok(())
    }

    /// Closes a child module's entry.
    fn end_child(&mut self) -> std::io::Result<()> {
        let addr = self.module.as_deref().unwrap_or_default();
        write!(self.w, "],\"address\":{}}}", Json::from(addr))
    }

    fn finish(mut self) -> std::io::Result<()> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        let Some(outputs) = self.outputs.take() else {
            // Empty: written whole at the start.
            return Ok(());
        };
        match self.module.as_deref() {
            Some("") | None => self.w.write_all(b"]")?,
            Some(_) => {
                self.end_child()?;
                self.w.write_all(b"]")?;
            }
        }
        self.w.write_all(b"}")?;
        if outputs.as_object().is_some_and(|m| !m.is_empty()) {
            write!(self.w, ",\"outputs\":{outputs}")?;
        }
        self.w.write_all(b"}}\n")
    }
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

/// `show -json` of a plan.
/// One deferred part of a plan, as Terraform's `deferred_changes` entry
/// (`reason`, `resource_change`), with terrane's `detail` for people.
fn deferred_json(d: &terrane_engine::Deferred) -> Json {
    json!({
        "reason": d.reason.json(),
        "detail": d.detail,
        "resource_change": {
            "address": d.addr,
            "mode": d.mode.as_str(),
            "type": d.ty,
            "name": d.name,
        },
    })
}

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
        let (after_unknown, before_sensitive, after_sensitive) = marks_json(&before_v, &c.after);
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
            // Terraform leaves out values that are all unknown (a data
            // source read at apply whose configuration is unknown).
            let values = known(&c.after.unmark_deep());
            if values.as_object().is_none_or(|m| !m.is_empty()) {
                r.insert("values".into(), values);
            }
            // Nothing planned (an object forgotten by a `removed` block):
            // no sensitive values at all, as Terraform writes it.
            let sensitive = if c.after.is_null() {
                json!(false)
            } else {
                sensitive_or_empty(&c.after)
            };
            r.insert("sensitive_values".into(), sensitive);
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
            // A value and its type only when wholly known, as Terraform.
            let after = o.after.unmark_deep();
            let mut planned = json!({"sensitive": sens});
            if after.is_wholly_known() {
                planned["value"] = known(&after);
                planned["type"] = terrane_value::typejson::to_json(after.ty());
            }
            planned_outputs.insert(name.clone(), planned);
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
        // A plan with deferred parts is partial: the next plan has more.
        "complete": p.deferred.is_empty(),
        "errored": p.has_errors(),
    });
    if !p.timestamp.is_empty() {
        out["timestamp"] = json!(p.timestamp);
    }
    if !p.deferred.is_empty() {
        out["deferred_changes"] = Json::Array(p.deferred.iter().map(deferred_json).collect());
    }
    if !p.variables.is_empty() {
        out["variables"] = Json::Object(
            p.variables
                .iter()
                .map(|(k, v)| (k.clone(), json!({"value": known(&v.unmark_deep())})))
                .collect(),
        );
    }
    if let Some(s) = &p.prior_state {
        // Without the data sources read at apply: Terraform's prior state
        // holds no object for them until apply reads them (what depends
        // on them keeps its dependencies through them).
        let mut s = terrane_engine::with_closure_dependencies(s);
        for c in &p.changes {
            if c.action != Action::Read || c.deposed.is_some() {
                continue;
            }
            let now_empty = s.resources.get_mut(&c.addr.resource).is_some_and(|r| {
                r.instances.remove(&c.addr.key);
                r.instances.is_empty()
            });
            if now_empty {
                s.resources.remove(&c.addr.resource);
            }
        }
        // Terraform's plan writes every output whose value it knows into
        // the refreshed state: the prior state holds those values.
        for (name, o) in &p.outputs {
            let after = o.after.unmark_deep();
            let removed = after.is_null() && after.ty().is_dynamic() && o.before.is_some();
            if removed {
                // A removed output stays in the refreshed state until apply.
                continue;
            }
            if after.is_null() {
                // A null value is no output in state.
                s.outputs.remove(name);
                continue;
            }
            if !after.is_wholly_known() {
                continue;
            }
            if let Ok(value) = terrane_value::json::encode(&after, after.ty()) {
                s.outputs.insert(
                    name.clone(),
                    terrane_state::OutputState {
                        value,
                        ty: terrane_value::typejson::to_json(after.ty()),
                        sensitive: o.sensitive || o.after.has_sensitive(),
                    },
                );
            }
        }
        out["prior_state"] = state(&s);
    }
    if !p.drift.is_empty() {
        out["resource_drift"] = Json::Array(
            p.drift
                .iter()
                .map(|c| {
                    let (after_unknown, before_sensitive, after_sensitive) =
                        marks_json(&c.before, &c.after);
                    json!({"address": c.addr.to_string(), "mode": c.addr.resource.mode.as_str(), "type": c.addr.resource.ty, "name": c.addr.resource.name,
                        "provider_name": c.provider.addr.to_string(),
                        "change": {"actions": c.action.json_actions(), "before": known(&c.before.unmark_deep()), "after": known(&c.after.unmark_deep()),
                            "after_unknown": after_unknown, "before_sensitive": before_sensitive, "after_sensitive": after_sensitive}})
                })
                .collect(),
        );
    }
    out
}

/// A change's `after_unknown`, `before_sensitive` and `after_sensitive`
/// (resource changes and drift alike).
fn marks_json(before: &Value, after: &Value) -> (Json, Json, Json) {
    // As Terraform writes it: a wholly known value has nothing unknown to
    // show (no empty collections shaped like it either).
    let after_unknown = if after.is_null() || after.is_wholly_known() {
        json!({})
    } else {
        match unknown_as_bool(after) {
            Json::Bool(false) => json!({}),
            j => j,
        }
    };
    let before_sensitive = if before.is_null() {
        json!(false)
    } else {
        sensitive_or_empty(before)
    };
    let after_sensitive = if after.is_null() {
        json!(false)
    } else {
        sensitive_or_empty(after)
    };
    (after_unknown, before_sensitive, after_sensitive)
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
fn constant(e: &terrane_hcl::expr::Expression) -> Option<Json> {
    use terrane_hcl::expr::Expression as E;
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
                    terrane_hcl::expr::ObjectKey::Ident(i) => i.as_str().to_string(),
                    terrane_hcl::expr::ObjectKey::Expression(E::String(s)) => s.value().to_string(),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A v4 state file of `resources` (and `outputs`).
    fn snapshot(resources: Json, outputs: Json) -> Snapshot {
        let doc = json!({
            "version": 4, "terraform_version": "1.9.0", "serial": 3,
            "lineage": "11111111-2222-3333-4444-555555555555",
            "outputs": outputs, "resources": resources,
        });
        terrane_state::tfstate::import(doc.to_string().as_bytes()).expect("state")
    }

    fn resource(module: Option<&str>, name: &str, instances: Json) -> Json {
        let mut r = json!({
            "mode": "managed", "type": "terraform_data", "name": name,
            "provider": "provider[\"terraform.io/builtin/terraform\"]",
            "instances": instances,
        });
        if let Some(m) = module {
            r["module"] = json!(m);
        }
        r
    }

    fn object(id: &str) -> Json {
        json!({"schema_version": 0, "attributes": {"id": id, "input": null}})
    }

    /// One object as `show -json` lists it, keys in Terraform's order.
    fn listed(address: &str, name: &str, id: &str, extra: &[(&str, Json)]) -> Json {
        let mut m = Map::new();
        m.insert("address".into(), json!(address));
        m.insert("mode".into(), json!("managed"));
        m.insert("type".into(), json!("terraform_data"));
        m.insert("name".into(), json!(name));
        for (k, v) in extra.iter().filter(|(k, _)| *k == "index") {
            m.insert((*k).into(), v.clone());
        }
        m.insert(
            "provider_name".into(),
            json!("terraform.io/builtin/terraform"),
        );
        m.insert("schema_version".into(), json!(0));
        m.insert("values".into(), json!({"id": id, "input": null}));
        m.insert("sensitive_values".into(), json!({}));
        for (k, v) in extra.iter().filter(|(k, _)| *k != "index") {
            m.insert((*k).into(), v.clone());
        }
        Json::Object(m)
    }

    struct Case {
        name: &'static str,
        state: Snapshot,
        want: Json,
    }

    /// `write_state`'s bytes are the whole document serialized at once
    /// (key order included), then a newline.
    fn check(c: &Case) {
        let mut out = Vec::new();
        write_state(&c.state, &mut out).expect("write");
        let got = String::from_utf8(out).expect("utf-8");
        assert_eq!(got, format!("{}\n", c.want), "case {}", c.name);
    }

    #[test]
    fn issue19_show_json_streams_the_same_document() {
        let tv = terrane_engine::TERRAFORM_VERSION;
        let a = || resource(None, "a", json!([object("a")]));
        // `b` depends on `a`; `m.c` on `b`, so it lists both (the closure).
        let mut b = resource(None, "b", json!([object("b")]));
        b["instances"][0]["dependencies"] = json!(["terraform_data.a"]);
        let mut c = resource(
            Some("module.m"),
            "c",
            json!([object("c0"), object("c1"), object("cd")]),
        );
        c["instances"][0]["index_key"] = json!(0);
        c["instances"][0]["dependencies"] = json!(["terraform_data.b"]);
        c["instances"][1]["index_key"] = json!(1);
        c["instances"][1]["status"] = json!("tainted");
        c["instances"][2]["index_key"] = json!(1);
        c["instances"][2]["deposed"] = json!("00000001");
        let outputs = json!({"o": {"value": "x", "type": "string", "sensitive": true}});
        let cases = [
            Case {
                name: "empty",
                state: snapshot(json!([]), json!({})),
                want: json!({"format_version": "1.0"}),
            },
            Case {
                name: "root resources and outputs",
                state: snapshot(json!([a()]), outputs.clone()),
                want: json!({
                    "format_version": "1.0", "terraform_version": tv,
                    "values": {
                        "root_module": {"resources": [listed("terraform_data.a", "a", "a", &[])]},
                        "outputs": {"o": {"sensitive": true, "value": "x", "type": "string"}},
                    },
                }),
            },
            Case {
                name: "outputs only",
                state: snapshot(json!([]), outputs),
                want: json!({
                    "format_version": "1.0", "terraform_version": tv,
                    "values": {
                        "root_module": {"resources": []},
                        "outputs": {"o": {"sensitive": true, "value": "x", "type": "string"}},
                    },
                }),
            },
            Case {
                name: "child module, deposed, tainted, closure dependencies",
                state: snapshot(json!([a(), b, c]), json!({})),
                want: json!({
                    "format_version": "1.0", "terraform_version": tv,
                    "values": {"root_module": {
                        "resources": [
                            listed("terraform_data.a", "a", "a", &[]),
                            listed("terraform_data.b", "b", "b",
                                &[("depends_on", json!(["terraform_data.a"]))]),
                        ],
                        "child_modules": [{
                            "resources": [
                                listed("module.m.terraform_data.c[0]", "c", "c0", &[
                                    ("index", json!(0)),
                                    ("depends_on", json!(["terraform_data.a", "terraform_data.b"])),
                                ]),
                                listed("module.m.terraform_data.c[1]", "c", "c1", &[
                                    ("index", json!(1)),
                                    ("tainted", json!(true)),
                                ]),
                                listed("module.m.terraform_data.c[1]", "c", "cd", &[
                                    ("index", json!(1)),
                                    ("deposed_key", json!("00000001")),
                                ]),
                            ],
                            "address": "module.m",
                        }],
                    }},
                }),
            },
        ];
        for c in &cases {
            check(c);
        }
    }
}
