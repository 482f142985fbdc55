//! Terraform state v4 JSON: import (`terraform.tfstate`, `terraform state
//! pull` output) into a [`Snapshot`] and export a snapshot in exactly the
//! shape Terraform writes, so Terraform accepts what terrane exports.
//!
//! Reading is strict: a wrong version, a field this format does not have, or
//! invalid JSON is an error naming what is wrong, and nothing is written
//! anywhere by a failed read.

use crate::addr::{InstanceAddr, InstanceKey, Mode, ModulePath, ResourceAddr};
use crate::error::{Result, StateError};
use crate::model::{Attributes, ObjectState, OutputState, ResourceState, Snapshot, Status};
use base64::Engine as _;
use serde_json::{json, Map, Value as Json};
use std::collections::BTreeMap;
use terrane_value::{Path, Step};

fn invalid(msg: impl Into<String>) -> StateError {
    StateError::InvalidTfstate(msg.into())
}

/// A path as Terraform writes it in `sensitive_attributes`.
pub fn path_to_json(p: &Path) -> Json {
    Json::Array(
        p.steps()
            .iter()
            .map(|s| match s {
                Step::Attr(n) => json!({"type": "get_attr", "value": n}),
                Step::Key(k) => json!({"type": "index", "value": {"value": k, "type": "string"}}),
                Step::Index(i) => json!({"type": "index", "value": {"value": i, "type": "number"}}),
            })
            .collect(),
    )
}

/// Parses a path written by [`path_to_json`] (or by Terraform).
pub fn path_from_json(j: &Json) -> std::result::Result<Path, String> {
    let Json::Array(steps) = j else {
        return Err("a path must be an array of steps".into());
    };
    let mut out = Vec::with_capacity(steps.len());
    for s in steps {
        let step = match (s.get("type").and_then(Json::as_str), s.get("value")) {
            (Some("get_attr"), Some(Json::String(n))) => Step::Attr(n.clone()),
            (Some("index"), Some(v)) => {
                match (v.get("type").and_then(Json::as_str), v.get("value")) {
                    (Some("string"), Some(Json::String(k))) => Step::Key(k.clone()),
                    (Some("number"), Some(Json::Number(n))) => {
                        Step::Index(n.as_i64().ok_or("index steps must be integers")?)
                    }
                    _ => return Err(format!("unsupported index step {v}")),
                }
            }
            _ => return Err(format!("unsupported path step {s}")),
        };
        out.push(step);
    }
    Ok(Path(out))
}

fn check_fields(obj: &Map<String, Json>, allowed: &[&str], what: &str) -> Result<()> {
    match obj.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(invalid(format!("{what} has an unsupported field {k:?}"))),
        None => Ok(()),
    }
}

fn as_object<'a>(j: &'a Json, what: &str) -> Result<&'a Map<String, Json>> {
    j.as_object()
        .ok_or_else(|| invalid(format!("{what} must be a JSON object")))
}

fn str_field<'a>(o: &'a Map<String, Json>, name: &str, what: &str) -> Result<&'a str> {
    o.get(name)
        .and_then(Json::as_str)
        .ok_or_else(|| invalid(format!("{what} needs a string {name:?}")))
}

/// Parses "module.a[\"x\"].module.b" into a module path.
fn parse_module(text: &str) -> Result<ModulePath> {
    if text.is_empty() {
        return Ok(ModulePath::default());
    }
    let probe = format!("{text}.t.n");
    InstanceAddr::parse(&probe)
        .map(|a| a.resource.module)
        .map_err(|e| invalid(format!("invalid module address {text:?}: {}", e.reason)))
}

/// A number that must fit a store's BIGINT column (serials, schema
/// versions): at most `i64::MAX`.
fn bounded_u64(j: Option<&Json>, what: &str) -> Result<Option<u64>> {
    match j {
        None | Some(Json::Null) => Ok(None),
        Some(Json::Number(n)) => match n.as_u64() {
            Some(v) if v <= i64::MAX as u64 => Ok(Some(v)),
            _ => Err(invalid(format!(
                "{what} {n} is out of range: it must be a whole number from 0 to {}",
                i64::MAX
            ))),
        },
        Some(other) => Err(invalid(format!("{what} must be a number, not {other}"))),
    }
}

/// A resource type or name, output or module name: an identifier as
/// Terraform's are (letters, digits, `_`, `-`; not starting with a digit
/// or `-`), which rules out control characters and anything else that
/// could not be written back in an address.
fn check_name(name: &str, what: &str) -> Result<()> {
    let ok = name
        .chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-');
    if ok {
        Ok(())
    } else {
        Err(invalid(format!("{what} {:?} is not a valid name (letters, digits, underscores and dashes, starting with a letter or underscore)", name.escape_debug().to_string())))
    }
}

/// Reads a v4 state file: every object once, names that are identifiers,
/// serials and versions in range, attributes an object. Nothing needing a
/// provider schema is checked here (this crate has none): an object in
/// Terraform's pre-0.12 flatmap form (`attributes_flat`) must be a map of
/// strings and is kept verbatim for the provider's UpgradeResourceState
/// (see [`import_with`] to check it against a schema too).
pub fn import(bytes: &[u8]) -> Result<Snapshot> {
    import_with(bytes, &|_, _, _| None)
}

/// The resources of a v4 state file that hold objects in flatmap form
/// (`attributes_flat`), with their provider addresses: the schemas
/// [`import_with`] needs to decode them.
pub fn flatmap_resources(bytes: &[u8]) -> Result<Vec<(ResourceAddr, String)>> {
    let top: Json = serde_json::from_slice(bytes)
        .map_err(|e| invalid(format!("the state is not valid JSON: {e}")))?;
    let mut out = Vec::new();
    for r in top
        .get("resources")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
    {
        let flat = r
            .get("instances")
            .and_then(Json::as_array)
            .is_some_and(|is| {
                is.iter()
                    .any(|i| i.get("attributes_flat").is_some_and(|a| !a.is_null()))
            });
        let field = |k: &str| r.get(k).and_then(Json::as_str).unwrap_or_default();
        let Some(mode) = Mode::parse(field("mode")).filter(|_| flat) else {
            continue;
        };
        out.push((
            ResourceAddr {
                module: parse_module(field("module"))?,
                mode,
                ty: field("type").into(),
                name: field("name").into(),
            },
            field("provider").to_string(),
        ));
    }
    Ok(out)
}

/// [`import`], checking objects in flatmap form (`attributes_flat`, states
/// written before Terraform 0.12) against the type `flat_type` gives for
/// their resource address, provider address and recorded schema version
/// (the resource type schema's implied type, when the provider's schema
/// is at that version; an older object is the provider's to migrate)
/// when it gives one: a flatmap that does not decode is
/// refused, naming the object and the flat key. The flatmap itself is
/// kept, as Terraform keeps it, until the provider's UpgradeResourceState
/// turns it into attributes (RawState.flatmap) on the next plan.
pub fn import_with(
    bytes: &[u8],
    flat_type: &dyn Fn(&ResourceAddr, &str, u64) -> Option<terrane_value::Type>,
) -> Result<Snapshot> {
    let root: Json =
        serde_json::from_slice(bytes).map_err(|e| invalid(format!("not valid JSON: {e}")))?;
    let top = as_object(&root, "the state")?;
    match top.get("version").and_then(Json::as_u64) {
        Some(4) => {}
        Some(v) => return Err(invalid(format!("unsupported state format version {v}; terrane reads version 4 (Terraform 0.12 and later)"))),
        None => return Err(invalid("the state has no \"version\"")),
    }
    check_fields(
        top,
        &[
            "version",
            "terraform_version",
            "serial",
            "lineage",
            "outputs",
            "resources",
            "check_results",
        ],
        "the state",
    )?;
    let mut snap = Snapshot {
        lineage: str_field(top, "lineage", "the state")?.to_string(),
        serial: bounded_u64(top.get("serial"), "the state's \"serial\"")?
            .ok_or_else(|| invalid("the state needs a numeric \"serial\""))?,
        terraform_version: top
            .get("terraform_version")
            .and_then(Json::as_str)
            .unwrap_or(crate::TERRAFORM_VERSION)
            .to_string(),
        resources: BTreeMap::new(),
        outputs: BTreeMap::new(),
    };
    if let Some(outs) = top.get("outputs") {
        for (name, o) in as_object(outs, "\"outputs\"")? {
            let what = format!("output {name:?}");
            check_name(name, "output name")?;
            let o = as_object(o, &what)?;
            check_fields(o, &["value", "type", "sensitive"], &what)?;
            let ty = o
                .get("type")
                .cloned()
                .ok_or_else(|| invalid(format!("{what} has no \"type\"")))?;
            let sensitive = o.get("sensitive").and_then(Json::as_bool).unwrap_or(false);
            snap.outputs.insert(
                name.clone(),
                OutputState {
                    value: o.get("value").cloned().unwrap_or(Json::Null),
                    ty,
                    sensitive,
                },
            );
        }
    }
    let resources = match top.get("resources") {
        None | Some(Json::Null) => Vec::new(),
        Some(Json::Array(rs)) => rs.clone(),
        Some(_) => return Err(invalid("\"resources\" must be an array")),
    };
    for r in &resources {
        let r = as_object(r, "a resource")?;
        check_fields(
            r,
            &[
                "module",
                "mode",
                "type",
                "name",
                "each",
                "provider",
                "instances",
            ],
            "a resource",
        )?;
        let mode_text = str_field(r, "mode", "a resource")?;
        let mode = Mode::parse(mode_text).ok_or_else(|| {
            invalid(format!(
                "resource mode {mode_text:?} is not \"managed\" or \"data\""
            ))
        })?;
        let addr = ResourceAddr {
            module: parse_module(r.get("module").and_then(Json::as_str).unwrap_or(""))?,
            mode,
            ty: str_field(r, "type", "a resource")?.into(),
            name: str_field(r, "name", "a resource")?.into(),
        };
        check_name(&addr.ty, "resource type")?;
        check_name(&addr.name, "resource name")?;
        let what = addr.to_string();
        // OpenTofu writes the provider on each instance instead when a
        // configuration with for_each serves the resource.
        let first_instance_provider = r
            .get("instances")
            .and_then(Json::as_array)
            .and_then(|is| is.first())
            .and_then(|i| i.get("provider"))
            .and_then(Json::as_str)
            .map(|p| crate::model::split_provider_instance(p).0);
        let provider = match (r.get("provider"), first_instance_provider) {
            (None | Some(Json::Null), Some(p)) => p,
            _ => str_field(r, "provider", &what)?.to_string(),
        };
        if provider.chars().any(char::is_control) {
            return Err(invalid(format!(
                "{what}: the provider address has control characters"
            )));
        }
        if snap.resources.contains_key(&addr) {
            return Err(invalid(format!(
                "{what} appears more than once in \"resources\""
            )));
        }
        let res = snap
            .resources
            .entry(addr.clone())
            .or_insert_with(|| ResourceState {
                provider,
                instances: BTreeMap::new(),
            });
        let instances = r
            .get("instances")
            .and_then(Json::as_array)
            .ok_or_else(|| invalid(format!("{what} needs an \"instances\" array")))?;
        for inst in instances {
            let i = as_object(inst, &what)?;
            check_fields(
                i,
                &[
                    "index_key",
                    "status",
                    "deposed",
                    "provider",
                    "schema_version",
                    "attributes",
                    "attributes_flat",
                    "sensitive_attributes",
                    "identity_schema_version",
                    "identity",
                    "private",
                    "dependencies",
                    "create_before_destroy",
                ],
                &format!("an instance of {what}"),
            )?;
            let key = match i.get("index_key") {
                None | Some(Json::Null) => InstanceKey::None,
                Some(Json::Number(n)) => InstanceKey::Int(
                    n.as_i64()
                        .ok_or_else(|| invalid(format!("{what}: index_key must be an integer")))?,
                ),
                Some(Json::String(s)) => InstanceKey::Str(s.clone()),
                Some(other) => return Err(invalid(format!("{what}: invalid index_key {other}"))),
            };
            let iwhat = addr.instance(key.clone()).to_string();
            let schema_version =
                bounded_u64(i.get("schema_version"), &format!("{iwhat}: schema_version"))?
                    .unwrap_or(0);
            let flat = match i.get("attributes_flat") {
                None | Some(Json::Null) => None,
                Some(f) => Some(flat_attributes(f, &iwhat, || {
                    flat_type(&addr, &res.provider, schema_version)
                })?),
            };
            if i.get("identity").is_some_and(|a| !a.is_null()) {
                return Err(invalid(format!(
                    "{iwhat} has a resource identity, which terrane does not store yet"
                )));
            }
            let status = match i.get("status").and_then(Json::as_str) {
                None | Some("") => Status::Ready,
                Some("tainted") => Status::Tainted,
                Some(s) => return Err(invalid(format!("{iwhat}: unknown status {s:?}"))),
            };
            let sensitive_paths = match i.get("sensitive_attributes") {
                None | Some(Json::Null) => Vec::new(),
                Some(Json::Array(ps)) => ps
                    .iter()
                    .map(|p| {
                        path_from_json(p)
                            .map_err(|e| invalid(format!("{iwhat}: sensitive_attributes: {e}")))
                    })
                    .collect::<Result<_>>()?,
                Some(_) => {
                    return Err(invalid(format!(
                        "{iwhat}: sensitive_attributes must be an array"
                    )))
                }
            };
            let private = match i.get("private").and_then(Json::as_str) {
                Some(b) => Some(
                    base64::engine::general_purpose::STANDARD
                        .decode(b)
                        .map_err(|e| invalid(format!("{iwhat}: private is not base64: {e}")))?,
                ),
                None => None,
            };
            let dependencies = match i.get("dependencies") {
                None | Some(Json::Null) => Vec::new(),
                Some(d) => serde_json::from_value::<Vec<String>>(d.clone())
                    .map_err(|_| invalid(format!("{iwhat}: dependencies must be strings")))?,
            };
            let attributes = match (i.get("attributes"), &flat) {
                (None | Some(Json::Null), Some(_)) => Attributes::null(),
                (Some(_), Some(_)) => {
                    return Err(invalid(format!(
                        "{iwhat} has both \"attributes\" and \"attributes_flat\""
                    )))
                }
                (Some(a @ Json::Object(_)), None) => Attributes::from_json(a),
                (None | Some(Json::Null), None) => {
                    return Err(invalid(format!("{iwhat} has no \"attributes\"")))
                }
                (Some(_), None) => {
                    return Err(invalid(format!(
                        "{iwhat}: \"attributes\" must be an object"
                    )))
                }
            };
            let object = ObjectState {
                attributes,
                attributes_flat: flat,
                schema_version,
                status,
                private,
                sensitive_paths,
                dependencies,
                create_before_destroy: i
                    .get("create_before_destroy")
                    .and_then(Json::as_bool)
                    .unwrap_or(false),
                identity_schema_version: bounded_u64(
                    i.get("identity_schema_version"),
                    &format!("{iwhat}: identity_schema_version"),
                )?,
            };
            let slot = res.instances.entry(key).or_default();
            if let Some(p) = i.get("provider").and_then(Json::as_str) {
                let (config, k) = crate::model::split_provider_instance(p);
                if config != res.provider {
                    return Err(invalid(format!(
                        "{iwhat}: its provider {p:?} is not the resource's {:?}",
                        res.provider
                    )));
                }
                slot.provider_key = k;
            }
            match i.get("deposed").and_then(Json::as_str) {
                Some(d) if !d.is_empty() => {
                    if !d.chars().all(|c| c.is_ascii_alphanumeric()) {
                        return Err(invalid(format!(
                            "{iwhat}: deposed key {:?} must be letters and digits",
                            d.escape_debug().to_string()
                        )));
                    }
                    if slot.deposed.insert(d.to_string(), object).is_some() {
                        return Err(invalid(format!(
                            "{iwhat} has deposed object {d} more than once"
                        )));
                    }
                }
                _ => {
                    if slot.current.replace(object).is_some() {
                        return Err(invalid(format!("{iwhat} appears more than once")));
                    }
                }
            }
        }
    }
    Ok(snap)
}

/// An `attributes_flat` object: a map of strings, checked against its
/// resource type's type when one is known.
fn flat_attributes(
    f: &Json,
    iwhat: &str,
    ty: impl FnOnce() -> Option<terrane_value::Type>,
) -> Result<BTreeMap<String, String>> {
    let flat: BTreeMap<String, String> = serde_json::from_value(f.clone()).map_err(|_| {
        invalid(format!(
            "{iwhat}: \"attributes_flat\" must be an object of strings"
        ))
    })?;
    if let Some(ty) = ty() {
        crate::flatmap::decode(&flat, &ty)
            .map_err(|e| invalid(format!("{iwhat}: attributes_flat: {e}")))?;
    }
    Ok(flat)
}

/// Writes a snapshot as Terraform writes v4 state: fields in Terraform's
/// order, resources sorted by module, mode, type and name, instances by key
/// (no key, numbers, strings) then deposed key; 2-space indent and a
/// trailing newline.
pub fn export(s: &Snapshot) -> String {
    let mut out = Vec::new();
    // Writing to memory cannot fail, and serde_json writes UTF-8.
    let _ = export_to(s, &mut out);
    String::from_utf8(out).unwrap_or_default()
}

/// [`export`] written to `w` as it is made, one resource at a time: the
/// whole document is never held beside the state (`state pull` of a large
/// state). The same bytes as [`export`].
pub fn export_to(s: &Snapshot, w: &mut impl std::io::Write) -> std::io::Result<()> {
    use serde::ser::{SerializeMap, SerializeSeq, Serializer as _};
    let mut outputs = Map::new();
    for (name, o) in &s.outputs {
        let mut m = Map::new();
        m.insert("value".into(), o.value.clone());
        m.insert("type".into(), o.ty.clone());
        if o.sensitive {
            m.insert("sensitive".into(), json!(true));
        }
        outputs.insert(name.clone(), Json::Object(m));
    }
    let mut res: Vec<(&ResourceAddr, &ResourceState)> = s.resources.iter().collect();
    res.sort_by(|(a, _), (b, _)| {
        (a.module.to_string(), a.mode.as_str(), &a.ty, &a.name).cmp(&(
            b.module.to_string(),
            b.mode.as_str(),
            &b.ty,
            &b.name,
        ))
    });
    /// The resources, each made into JSON only when it is written.
    struct Resources<'a>(Vec<(&'a ResourceAddr, &'a ResourceState)>);
    impl serde::Serialize for Resources<'_> {
        fn serialize<S: serde::Serializer>(&self, ser: S) -> std::result::Result<S::Ok, S::Error> {
            let mut seq = ser.serialize_seq(Some(self.0.len()))?;
            for (addr, r) in &self.0 {
                seq.serialize_element(&resource_json(addr, r))?;
            }
            seq.end()
        }
    }
    let mut ser = serde_json::Serializer::pretty(&mut *w);
    let mut top = ser.serialize_map(Some(7)).map_err(std::io::Error::other)?;
    let entries = || -> std::result::Result<(), serde_json::Error> {
        top.serialize_entry("version", &4)?;
        top.serialize_entry("terraform_version", &s.terraform_version)?;
        top.serialize_entry("serial", &s.serial)?;
        top.serialize_entry("lineage", &s.lineage)?;
        top.serialize_entry("outputs", &outputs)?;
        top.serialize_entry("resources", &Resources(res))?;
        top.serialize_entry("check_results", &Json::Null)?;
        Ok(())
    };
    entries().map_err(std::io::Error::other)?;
    SerializeMap::end(top).map_err(std::io::Error::other)?;
    w.write_all(b"\n")
}

/// One resource of the v4 document, its instances included.
fn resource_json(addr: &ResourceAddr, r: &ResourceState) -> Json {
    let mut m = Map::new();
    if !addr.module.0.is_empty() {
        m.insert("module".into(), json!(addr.module.to_string()));
    }
    m.insert("mode".into(), json!(addr.mode.as_str()));
    m.insert("type".into(), json!(addr.ty));
    m.insert("name".into(), json!(addr.name));
    // As OpenTofu writes it: with provider instance keys, each instance
    // names its provider and the resource none.
    let keyed = r.instances.values().any(|i| i.provider_key.is_some());
    if !keyed {
        m.insert("provider".into(), json!(r.provider));
    }
    let mut instances = Vec::new();
    for (key, inst) in &r.instances {
        let objects = inst
            .current
            .iter()
            .map(|o| (None, o))
            .chain(inst.deposed.iter().map(|(k, o)| (Some(k), o)));
        for (deposed, o) in objects {
            let mut j = instance_json(key, deposed, o);
            if let (true, Json::Object(m)) = (keyed, &mut j) {
                m.insert("provider".into(), json!(r.instance_provider(key)));
            }
            instances.push(j);
        }
    }
    m.insert("instances".into(), Json::Array(instances));
    Json::Object(m)
}

fn instance_json(key: &InstanceKey, deposed: Option<&String>, o: &ObjectState) -> Json {
    let mut m = Map::new();
    match key {
        InstanceKey::None => {}
        InstanceKey::Int(i) => {
            m.insert("index_key".into(), json!(i));
        }
        InstanceKey::Str(k) => {
            m.insert("index_key".into(), json!(k));
        }
    }
    if o.status == Status::Tainted {
        m.insert("status".into(), json!("tainted"));
    }
    if let Some(d) = deposed {
        m.insert("deposed".into(), json!(d));
    }
    m.insert("schema_version".into(), json!(o.schema_version));
    // Terraform writes one of the two: the flatmap while no provider has
    // upgraded the object yet.
    match &o.attributes_flat {
        Some(flat) => m.insert("attributes_flat".into(), json!(flat)),
        None => m.insert("attributes".into(), o.attributes.json()),
    };
    m.insert(
        "sensitive_attributes".into(),
        Json::Array(o.sensitive_paths.iter().map(path_to_json).collect()),
    );
    if let Some(v) = o.identity_schema_version {
        m.insert("identity_schema_version".into(), json!(v));
    }
    if let Some(p) = &o.private {
        m.insert(
            "private".into(),
            json!(base64::engine::general_purpose::STANDARD.encode(p)),
        );
    }
    if !o.dependencies.is_empty() {
        m.insert("dependencies".into(), json!(o.dependencies));
    }
    if o.create_before_destroy {
        m.insert("create_before_destroy".into(), json!(true));
    }
    Json::Object(m)
}

#[cfg(test)]
#[path = "tfstate_tests.rs"]
mod tests;
