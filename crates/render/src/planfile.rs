//! Saved plans (`plan -out=FILE`, `apply FILE`, `show FILE`): a JSON
//! document holding every change with its values as msgpack (unknowns
//! survive), sensitive paths, private data, the refreshed prior state as a
//! Terraform v4 state document, and the lineage and serial the plan was
//! made against, so a stale plan is refused.
//!
//! When the state is encrypted, the document is sealed with the store's
//! key (AES-256-GCM, bound to being a plan file) behind the [`SEALED`]
//! marker: the prior state and the variables never sit in a plan file in
//! plaintext. Plan files are created 0600 (see [`save`]).

use base64::Engine as _;
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use terrane_engine::provider::{ProviderAddr, ProviderConfigKey};
use terrane_engine::Reason;
use terrane_engine::{Action, Change, DeferReason, Deferred, OutputChange, Plan, PlanMode};
use terrane_state::{InstanceAddr, Mode};
use terrane_value::marks::{mark_paths, sensitive_paths};
use terrane_value::{typejson, Path, Type, Value};

const FORMAT: &str = "terrane-plan/1";
/// The first bytes of a sealed plan file.
pub const SEALED: &[u8] = b"terrane-sealed-plan/1\n";

fn plan_aad() -> Vec<u8> {
    terrane_state::crypt::aad(&[b"plan-file", FORMAT.as_bytes()])
}

/// Writes `bytes` to `path` readable by the owner only: a fresh file is
/// created 0600 beside it and renamed over `path`, so the contents never
/// exist under a looser mode (not even an existing file's).
pub fn save(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "plan".into());
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Whether `bytes` is a sealed plan file.
pub fn is_sealed(bytes: &[u8]) -> bool {
    bytes.starts_with(SEALED)
}

fn b64(b: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(b)
}

fn unb64(s: &str) -> Result<Vec<u8>, String> {
    base64::engine::general_purpose::STANDARD
        .decode(s)
        .map_err(|e| e.to_string())
}

fn value_json(v: &Value) -> Json {
    let ty = v.ty().clone();
    let plain = v.unmark_deep();
    let bytes = terrane_value::msgpack::encode(&plain, &ty).unwrap_or_default();
    json!({
        "type": typejson::to_json(&ty),
        "msgpack": b64(&bytes),
        "sensitive": sensitive_paths(v).iter().map(terrane_state::tfstate::path_to_json).collect::<Vec<_>>(),
    })
}

fn value_from(j: &Json) -> Result<Value, String> {
    let ty = typejson::from_json(&j["type"]).map_err(|e| e.to_string())?;
    let bytes = unb64(j["msgpack"].as_str().unwrap_or_default())?;
    let v = terrane_value::msgpack::decode(&bytes, &ty).map_err(|e| e.to_string())?;
    let paths: Vec<Path> = j["sensitive"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| terrane_state::tfstate::path_from_json(p).ok())
        .collect();
    Ok(mark_paths(&v, &paths))
}

fn action_name(a: Action) -> &'static str {
    match a {
        Action::NoOp => "no-op",
        Action::Create => "create",
        Action::Read => "read",
        Action::Update => "update",
        Action::DeleteThenCreate => "delete-then-create",
        Action::CreateThenDelete => "create-then-delete",
        Action::Delete => "delete",
        Action::Forget => "forget",
    }
}

fn action_from(s: &str) -> Option<Action> {
    Some(match s {
        "no-op" => Action::NoOp,
        "create" => Action::Create,
        "read" => Action::Read,
        "update" => Action::Update,
        "delete-then-create" => Action::DeleteThenCreate,
        "create-then-delete" => Action::CreateThenDelete,
        "delete" => Action::Delete,
        "forget" => Action::Forget,
        _ => return None,
    })
}

fn reason_from(s: &str) -> Option<Reason> {
    [
        Reason::Tainted,
        Reason::CannotUpdate,
        Reason::ReplaceByRequest,
        Reason::ReplaceByTriggers,
        Reason::NoResourceConfig,
        Reason::NoModule,
        Reason::WrongRepetition,
        Reason::CountIndex,
        Reason::EachKey,
        Reason::ReadBecauseConfigUnknown,
        Reason::ReadBecauseDependencyPending,
    ]
    .into_iter()
    .find(|r| r.json() == s)
}

fn change_json(c: &Change) -> Json {
    json!({
        "address": c.addr.to_string(),
        "deposed": c.deposed,
        "provider": {"addr": c.provider.addr.to_string(), "alias": c.provider.alias, "module": c.provider.module},
        "action": action_name(c.action),
        "before": value_json(&c.before),
        "after": value_json(&c.after),
        "schema_version": c.schema_version,
        "requires_replace": c.requires_replace.iter().map(terrane_state::tfstate::path_to_json).collect::<Vec<_>>(),
        "planned_private": b64(&c.planned_private),
        "prior_private": b64(&c.prior_private),
        "reason": c.reason.as_ref().map(Reason::json),
        "importing": c.importing,
        "dependencies": c.dependencies,
        "create_before_destroy": c.create_before_destroy,
    })
}

fn change_from(c: &Json) -> Result<Change, String> {
    let addr = InstanceAddr::parse(c["address"].as_str().unwrap_or_default())
        .map_err(|e| format!("{e:?}"))?;
    let paddr = ProviderAddr::parse(c["provider"]["addr"].as_str().unwrap_or_default())
        .map_err(|e| e.to_string())?;
    let mut key = ProviderConfigKey::root(paddr);
    key.module = c["provider"]["module"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    key.alias = c["provider"]["alias"].as_str().map(str::to_string);
    let before = value_from(&c["before"])?;
    let after = value_from(&c["after"])?;
    let ty = if after.is_null() {
        before.ty().clone()
    } else {
        after.ty().clone()
    };
    Ok(Change {
        schema: None,
        addr,
        deposed: c["deposed"].as_str().map(str::to_string),
        provider: key.into(),
        action: action_from(c["action"].as_str().unwrap_or_default())
            .ok_or("unknown action in plan file")?,
        before,
        after,
        ty,
        schema_version: c["schema_version"].as_i64().unwrap_or(0),
        requires_replace: c["requires_replace"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| terrane_state::tfstate::path_from_json(p).ok())
            .collect(),
        planned_private: unb64(c["planned_private"].as_str().unwrap_or_default())?,
        prior_private: unb64(c["prior_private"].as_str().unwrap_or_default())?,
        reason: c["reason"].as_str().and_then(reason_from),
        importing: c["importing"].as_str().map(str::to_string),
        dependencies: c["dependencies"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|d| d.as_str().map(str::to_string))
            .collect(),
        create_before_destroy: c["create_before_destroy"].as_bool().unwrap_or(false),
    })
}

/// Writes a plan, sealed with `cipher` when the state is encrypted.
pub fn write(p: &Plan, cipher: Option<&terrane_state::Cipher>) -> Vec<u8> {
    let doc = write_plain(p);
    match cipher {
        Some(c) => {
            let mut out = SEALED.to_vec();
            out.extend(c.seal(&doc, &plan_aad()));
            out
        }
        None => doc,
    }
}

/// A deferred part of the plan (its source range is not kept: `show`
/// and apply need the address, reason and detail).
fn deferred_json(d: &Deferred) -> Json {
    json!({
        "addr": d.addr,
        "module": d.module_cfg,
        "mode": d.mode.as_str(),
        "type": d.ty,
        "name": d.name,
        "reason": d.reason.json(),
        "detail": d.detail,
    })
}

fn deferred_from(d: &Json) -> Result<Deferred, String> {
    let text = |k: &str| {
        d[k].as_str()
            .map(str::to_string)
            .ok_or_else(|| format!("deferred change without {k:?}"))
    };
    let reason = text("reason")?;
    Ok(Deferred {
        addr: text("addr")?,
        module_cfg: d["module"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m.as_str().map(str::to_string))
            .collect(),
        mode: if text("mode")? == "data" {
            Mode::Data
        } else {
            Mode::Managed
        },
        ty: text("type")?,
        name: text("name")?,
        reason: DeferReason::from_json(&reason)
            .ok_or_else(|| format!("unknown deferral reason {reason:?}"))?,
        detail: text("detail")?,
        range: None,
    })
}

fn write_plain(p: &Plan) -> Vec<u8> {
    let changes: Vec<Json> = p.changes.iter().map(change_json).collect();
    let outputs: BTreeMap<String, Json> = p
        .outputs
        .iter()
        .map(|(k, o)| (k.clone(), json!({"before": o.before.as_ref().map(value_json), "after": value_json(&o.after), "sensitive": o.sensitive})))
        .collect();
    let doc = json!({
        "format": FORMAT,
        "mode": match p.mode { PlanMode::Normal => "normal", PlanMode::Destroy => "destroy", PlanMode::RefreshOnly => "refresh-only" },
        "lineage": p.lineage,
        "serial": p.serial,
        "timestamp": p.timestamp,
        "variables": p.variables.iter().map(|(k, v)| (k.clone(), value_json(v))).collect::<BTreeMap<_, _>>(),
        "changes": changes,
        "outputs": outputs,
        "prior_state": p.prior_state.as_ref().map(terrane_state::tfstate::export),
        "drift": p.drift.iter().map(change_json).collect::<Vec<_>>(),
        "moved": p.moved.iter().map(|(a, b)| json!([a.to_string(), b.to_string()])).collect::<Vec<_>>(),
        "deferred": p.deferred.iter().map(deferred_json).collect::<Vec<_>>(),
    });
    serde_json::to_vec_pretty(&doc).unwrap_or_default()
}

/// Reads a plan written by [`write`]; a sealed one needs the key of the
/// store it was made from.
pub fn read(bytes: &[u8], cipher: Option<&terrane_state::Cipher>) -> Result<Plan, String> {
    if let Some(sealed) = bytes.strip_prefix(SEALED) {
        let Some(c) = cipher else {
            return Err("the plan file is encrypted with the state's key, but no key is configured: name the variable holding it with encryption_key_env in the terraform { state \"...\" { } } block".into());
        };
        let plain = c.open(sealed, &plan_aad()).ok_or("the plan file is encrypted, and the state's key does not open it: it was made with another key, or it was altered")?;
        return read_plain(&plain);
    }
    read_plain(bytes)
}

fn read_plain(bytes: &[u8]) -> Result<Plan, String> {
    let doc: Json =
        serde_json::from_slice(bytes).map_err(|e| format!("not a terrane plan file: {e}"))?;
    if doc["format"] != FORMAT {
        return Err(format!(
            "not a terrane plan file (format {:?})",
            doc["format"]
        ));
    }
    let mut p = Plan {
        mode: match doc["mode"].as_str() {
            Some("destroy") => PlanMode::Destroy,
            Some("refresh-only") => PlanMode::RefreshOnly,
            _ => PlanMode::Normal,
        },
        lineage: doc["lineage"].as_str().unwrap_or_default().to_string(),
        serial: doc["serial"].as_u64().unwrap_or(0),
        timestamp: doc["timestamp"].as_str().unwrap_or_default().to_string(),
        applyable: true,
        ..Default::default()
    };
    for (k, v) in doc["variables"].as_object().into_iter().flatten() {
        p.variables.insert(k.clone(), value_from(v)?);
    }
    for c in doc["changes"].as_array().into_iter().flatten() {
        p.changes.push(change_from(c)?);
    }
    for c in doc["drift"].as_array().into_iter().flatten() {
        p.drift.push(change_from(c)?);
    }
    for (k, o) in doc["outputs"].as_object().into_iter().flatten() {
        let before = if o["before"].is_null() {
            None
        } else {
            Some(value_from(&o["before"])?)
        };
        let after = value_from(&o["after"]).unwrap_or_else(|_| Value::null(Type::Dynamic));
        p.outputs.insert(
            k.clone(),
            OutputChange {
                before,
                after,
                sensitive: o["sensitive"].as_bool().unwrap_or(false),
            },
        );
    }
    for m in doc["moved"].as_array().into_iter().flatten() {
        if let (Some(a), Some(b)) = (m[0].as_str(), m[1].as_str()) {
            let (a, b) = (
                InstanceAddr::parse(a).map_err(|e| format!("{e:?}"))?,
                InstanceAddr::parse(b).map_err(|e| format!("{e:?}"))?,
            );
            p.moved.push((a, b));
        }
    }
    for d in doc["deferred"].as_array().into_iter().flatten() {
        p.deferred.push(deferred_from(d)?);
    }
    if let Some(s) = doc["prior_state"].as_str() {
        p.prior_state =
            Some(terrane_state::tfstate::import(s.as_bytes()).map_err(|e| e.to_string())?);
    }
    Ok(p)
}
