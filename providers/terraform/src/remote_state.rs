//! `data "terraform_remote_state"`: the root outputs of a state kept on a
//! backend (`backend`, `config`, `workspace`), with `defaults` for outputs
//! the state does not have; sensitive outputs stay sensitive. Backends
//! are terrane-backend's; a relative `local` path is relative to the
//! working directory, as in Terraform.

use async_trait::async_trait;
use std::collections::BTreeMap;
use terrane_sdk::{Attr, Ctx, DataSource, Diagnostics, ResourceSchema, Type, Value};

pub fn schema() -> ResourceSchema {
    ResourceSchema::new(0)
        .attr("backend", Attr::string().required())
        .attr("config", Attr::of(Type::Dynamic).optional())
        .attr("defaults", Attr::of(Type::Dynamic).optional())
        .attr("workspace", Attr::string().optional())
        .attr("outputs", Attr::of(Type::Dynamic).computed())
}

#[derive(Clone)]
pub struct RemoteState;

fn fail(detail: impl Into<String>) -> Diagnostics {
    Diagnostics::error("Error loading state", detail)
}

/// The state's outputs by name (None: the workspace has no state).
fn read_outputs(
    kind: &str,
    settings: &terrane_backend::Settings,
    workspace: &str,
) -> Result<Option<BTreeMap<String, terrane_state::OutputState>>, String> {
    let backend = terrane_backend::open(kind, settings).map_err(|e| e.to_string())?;
    let client = backend.client(workspace).map_err(|e| e.to_string())?;
    let Some(payload) = client.get().map_err(|e| e.to_string())? else {
        return Ok(None);
    };
    let snap = terrane_backend::store::parse_remote(&client.path(), &payload.data)
        .map_err(|e| e.to_string())?;
    Ok(snap.map(|s| s.outputs))
}

fn with(config: &Value, name: &str, v: Value) -> Value {
    terrane_sdk::with_attr(config, name, v)
}

#[async_trait]
impl DataSource for RemoteState {
    async fn read(&self, _ctx: &Ctx, config: &Value) -> Result<Value, Diagnostics> {
        let kind = terrane_sdk::str_attr(config, "backend").unwrap_or_default();
        let workspace =
            terrane_sdk::str_attr(config, "workspace").unwrap_or_else(|| "default".into());
        let settings: terrane_backend::Settings = match config.get_attr("config") {
            Some(c) if !c.is_null() => {
                let json = terrane_value::json::encode(c, c.ty())
                    .map_err(|e| fail(format!("config: {e}")))?;
                match json {
                    serde_json::Value::Object(m) => m.into_iter().collect(),
                    _ => return Err(fail("config must be an object of backend settings")),
                }
            }
            _ => BTreeMap::new(),
        };
        // Backend clients block (the pg client runs a runtime of its
        // own): read on a thread of its own.
        let outputs = std::thread::scope(|s| {
            s.spawn(|| read_outputs(&kind, &settings, &workspace))
                .join()
                .unwrap_or_else(|_| Err("the state reader panicked".into()))
        })
        .map_err(|e| fail(format!("backend {kind:?}, workspace {workspace:?}: {e}")))?;
        let mut values: BTreeMap<String, Value> = BTreeMap::new();
        if let Some(d) = config.get_attr("defaults").filter(|d| !d.is_null()) {
            if let Some(entries) = d.entries() {
                values.extend(entries.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
        }
        for (name, o) in outputs.unwrap_or_default() {
            let v = o.stored_value();
            values.insert(name, if o.sensitive { v.mark_sensitive() } else { v });
        }
        let v = with(config, "outputs", Value::object(values));
        Ok(if terrane_sdk::str_attr(config, "workspace").is_none() {
            with(&v, "workspace", Value::string("default"))
        } else {
            v
        })
    }
}
