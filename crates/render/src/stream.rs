//! `-json` on plan and apply: Terraform's machine-readable UI, one JSON
//! object per line (`version`, `planned_change`, `change_summary`,
//! `diagnostic`, `outputs`), so tools that read Terraform's stream read
//! ours.

use serde_json::{json, Value as Json};
use terrane_config::Diagnostic;
use terrane_engine::{Action, Plan};

/// One line of the stream: `extra`'s fields after the common ones.
pub fn line(level: &str, message: &str, kind: &str, mut extra: Json) -> String {
    let obj = extra
        .as_object_mut()
        .map(std::mem::take)
        .unwrap_or_default();
    let mut out = serde_json::Map::new();
    out.insert("@level".into(), json!(level));
    out.insert("@message".into(), json!(message));
    out.insert("@module".into(), json!("terrane.ui"));
    out.insert("@timestamp".into(), json!(humantime_now()));
    out.insert("type".into(), json!(kind));
    out.extend(obj);
    Json::Object(out).to_string()
}

fn humantime_now() -> String {
    humantime::format_rfc3339_micros(std::time::SystemTime::now()).to_string()
}

pub fn version() -> String {
    line(
        "info",
        &format!("terrane {}", env!("CARGO_PKG_VERSION")),
        "version",
        json!({"terraform": terrane_engine::TERRAFORM_VERSION, "ui": "1.2"}),
    )
}

pub fn diagnostic(d: &Diagnostic) -> String {
    line(
        d.severity.json_name(),
        &format!("{}: {}", d.severity.title(), d.summary),
        "diagnostic",
        json!({"diagnostic": d.to_json()}),
    )
}

fn action_name(a: Action) -> &'static str {
    match a {
        Action::NoOp => "noop",
        Action::Create => "create",
        Action::Read => "read",
        Action::Update => "update",
        Action::DeleteThenCreate | Action::CreateThenDelete => "replace",
        Action::Delete => "delete",
        Action::Forget => "forget",
    }
}

/// The lines of a plan: each change and the summary.
pub fn plan(p: &Plan, operation: &str) -> Vec<String> {
    let mut out = Vec::new();
    for c in p.changes.iter().filter(|c| c.action != Action::NoOp) {
        let key = match &c.addr.key {
            terrane_state::InstanceKey::None => Json::Null,
            terrane_state::InstanceKey::Int(i) => json!(i),
            terrane_state::InstanceKey::Str(s) => json!(s),
        };
        let resource = json!({
            "addr": c.addr.to_string(),
            "module": c.addr.resource.module.to_string(),
            "resource": terrane_engine::config_addr(&c.addr),
            "implied_provider": terrane_engine::default_provider_name(&c.addr.resource.ty),
            "resource_type": c.addr.resource.ty,
            "resource_name": c.addr.resource.name,
            "resource_key": key,
        });
        let mut change = json!({"resource": resource, "action": action_name(c.action)});
        if let Some(r) = &c.reason {
            change["reason"] = json!(r.json());
        }
        out.push(line(
            "info",
            &format!("{}: Plan to {}", c.addr, action_name(c.action)),
            "planned_change",
            json!({"change": change}),
        ));
    }
    // The deferred part of a partial plan, one line each.
    for d in &p.deferred {
        out.push(line(
            "info",
            &format!("{}: Deferred ({})", d.addr, d.reason.json()),
            "deferred_change",
            json!({"deferred_change": {
                "resource": {
                    "addr": d.addr,
                    "resource_type": d.ty,
                    "resource_name": d.name,
                },
                "reason": d.reason.json(),
                "detail": d.detail,
            }}),
        ));
    }
    let (add, change, remove) = p.counts();
    let imports = p.changes.iter().filter(|c| c.importing.is_some()).count();
    out.push(line(
        "info",
        &format!("Plan: {add} to add, {change} to change, {remove} to destroy."),
        "change_summary",
        json!({"changes": {"add": add, "change": change, "import": imports, "remove": remove, "operation": operation}}),
    ));
    out
}

/// The closing `change_summary` message; `counts` are (imported, added,
/// changed, removed).
pub fn apply_summary(counts: (usize, usize, usize, usize), operation: &str) -> String {
    let (imported, added, changed, removed) = counts;
    let imports = if imported > 0 {
        format!("{imported} imported, ")
    } else {
        String::new()
    };
    line(
        "info",
        &format!(
            "Apply complete! Resources: {imports}{added} added, {changed} changed, {removed} destroyed."
        ),
        "change_summary",
        json!({"changes": {"add": added, "change": changed, "import": imported, "remove": removed, "operation": operation}}),
    )
}

pub fn outputs(outs: &std::collections::BTreeMap<String, (terrane_value::Value, bool)>) -> String {
    let m: serde_json::Map<String, Json> = outs
        .iter()
        .map(|(k, (v, sensitive))| {
            let sens = *sensitive || v.has_sensitive();
            let mut o =
                json!({"sensitive": sens, "type": terrane_value::typejson::to_json(v.ty())});
            if !sens {
                o["value"] = crate::json::known(&v.unmark_deep());
            }
            (k.clone(), o)
        })
        .collect();
    line(
        "info",
        &format!("Outputs: {}", m.len()),
        "outputs",
        json!({"outputs": m}),
    )
}
