//! `ephemeral "random_password"`: a password generated each time the
//! host opens the resource, as upstream hashicorp/random serves it. It is
//! never stored: a configuration feeds it to write-only attributes or
//! other ephemeral consumers. Same arguments as the managed resource minus
//! `keepers` and `id` (nothing is kept); the switches and minimums are
//! optional and computed, their defaults filled in at open.

use super::{bad, random_string, MAX_LENGTH};
use async_trait::async_trait;
use std::collections::BTreeMap;
use terrane_sdk::validate::Between;
use terrane_sdk::{Attr, Ctx, Diagnostics, EphemeralResource, Opened, ResourceSchema, Value};

pub(crate) fn password_schema() -> ResourceSchema {
    let flag = || Attr::bool().optional_computed();
    let min = || {
        Attr::number()
            .optional_computed()
            .validate(Between(0, MAX_LENGTH))
    };
    ResourceSchema::new(0)
        .attr(
            "length",
            Attr::number().required().validate(Between(1, MAX_LENGTH)),
        )
        .attr("special", flag())
        .attr("upper", flag())
        .attr("lower", flag())
        .attr("numeric", flag())
        .attr("min_numeric", min())
        .attr("min_upper", min())
        .attr("min_lower", min())
        .attr("min_special", min())
        .attr("override_special", Attr::string().optional())
        .attr("result", Attr::string().computed().sensitive())
        .attr("bcrypt_hash", Attr::string().computed().sensitive())
}

#[derive(Clone)]
pub(crate) struct EphemeralPassword;

/// `config` with the defaults of unset switches (true) and minimums (0).
fn with_defaults(config: &Value) -> BTreeMap<String, Value> {
    let mut m = config.entries().map(|e| e.to_map()).unwrap_or_default();
    for (name, default) in [
        ("special", Value::bool(true)),
        ("upper", Value::bool(true)),
        ("lower", Value::bool(true)),
        ("numeric", Value::bool(true)),
        ("min_numeric", Value::number(0)),
        ("min_upper", Value::number(0)),
        ("min_lower", Value::number(0)),
        ("min_special", Value::number(0)),
    ] {
        if m.get(name).is_none_or(Value::is_null) {
            m.insert(name.into(), default);
        }
    }
    m
}

#[async_trait]
impl EphemeralResource for EphemeralPassword {
    async fn open(&self, _ctx: &Ctx, config: &Value) -> Result<Opened, Diagnostics> {
        let mut m = with_defaults(config);
        let filled = Value::object(m.clone());
        // bcrypt is slow on purpose: off the runtime thread.
        let (result, hash) = tokio::task::spawn_blocking(move || {
            let s = random_string(&filled, &mut rand::thread_rng())?;
            let hash = bcrypt::hash(&s, bcrypt::DEFAULT_COST)
                .map_err(|e| bad("bcrypt failed", e.to_string()))?;
            Ok::<_, Diagnostics>((s, hash))
        })
        .await
        .map_err(|e| bad("bcrypt failed", e.to_string()))??;
        m.insert("result".into(), Value::string(result));
        m.insert("bcrypt_hash".into(), Value::string(hash));
        Ok(Opened::new(Value::object(m)))
    }
}
