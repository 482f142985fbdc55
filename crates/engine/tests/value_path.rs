//! The in-process value path (validate, read, plan and apply on values,
//! no msgpack) answers exactly as the wire path does: each case runs the
//! same calls against a built-in provider served both ways and compares
//! the answers. Provider-chosen values (what a plan leaves unknown: ids,
//! random bytes) differ between two applies by nature, so an apply is
//! compared with those attributes left out, and the read that follows is
//! given the same state on both paths.

use std::collections::BTreeMap;
use std::sync::Arc;
use terrane_engine::provider::grpc::rpc::InProcess;
use terrane_engine::provider::grpc::ProtocolProvider;
use terrane_engine::provider::*;
use terrane_schema::objchange::proposed_new;
use terrane_sdk::ProviderServer;
use terrane_value::{Type, Value};

/// One provider served on the value path and on the wire path.
type Pair = (Arc<dyn Provider>, Arc<dyn Provider>);

struct Case {
    name: &'static str,
    provider: fn() -> Pair,
    type_name: &'static str,
    /// The configuration of the first plan (from no object).
    create: Value,
    /// A second configuration, planned and applied over the first's state.
    update: Option<Value>,
}

fn both<P: terrane_sdk::Provider>(make: fn() -> P) -> Pair {
    let caps = ClientCapabilities {
        deferral_allowed: true,
        write_only_attributes_allowed: true,
    };
    let values: Arc<dyn Provider> = Arc::new(ProtocolProvider::new(
        "values",
        InProcess::new(ProviderServer::new(make())),
        Default::default(),
        caps,
    ));
    let wire: Arc<dyn Provider> = Arc::new(ProtocolProvider::new(
        "values",
        InProcess::wire_only(ProviderServer::new(make())),
        Default::default(),
        caps,
    ));
    (values, wire)
}

fn terraform() -> Pair {
    both(|| terrane_provider_terraform::TerraformProvider)
}

fn random() -> Pair {
    both(|| terrane_provider_random::RandomProvider)
}

fn s(v: &str) -> Value {
    Value::string(v)
}

fn obj(attrs: &[(&str, Value)]) -> Value {
    Value::object(
        attrs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect::<BTreeMap<_, _>>(),
    )
}

/// A configuration of `type_name` with the given attributes set and every
/// other attribute null, as the engine decodes a resource block.
async fn config(p: &dyn Provider, type_name: &str, set: &Value) -> Value {
    let schema = p.get_schema().await.expect("schema");
    let block = &schema.resources[type_name].block;
    let mut attrs = block.empty_value().entries().cloned().unwrap_or_default();
    for (k, v) in set.entries().expect("object") {
        attrs.insert(k.clone(), v.clone());
    }
    Value::object_typed_of(&block.implied_type(), attrs)
}

/// The attributes the plan left unknown (the provider chooses them at
/// apply) nulled, so two applies compare.
fn chosen_nulled(applied: &Value, planned: &Value) -> Value {
    let (Some(a), Some(p)) = (applied.entries(), planned.entries()) else {
        return applied.clone();
    };
    let mut m = a.clone();
    for (k, v) in p {
        if !v.is_known() {
            m.insert(k.clone(), Value::null(m[k].ty().clone()));
        }
    }
    Value::object_of(m)
}

/// Validate, plan and apply `set` over `prior` on both paths; compares
/// every answer and returns the wire path's new state.
async fn step(case: &Case, (values, wire): &Pair, prior: &Value, set: &Value) -> Value {
    let n = case.name;
    let t = case.type_name;
    let cfg = config(wire.as_ref(), t, set).await;
    let valid_v = values
        .validate_resource_config(t, &cfg)
        .await
        .expect("validate");
    let valid_w = wire
        .validate_resource_config(t, &cfg)
        .await
        .expect("validate");
    assert_eq!(valid_v, valid_w, "case {n}: validate");
    let schema = wire.get_schema().await.expect("schema");
    let proposed = proposed_new(&schema.resources[t].block, prior, &cfg);
    let req = PlanRequest {
        type_name: t,
        prior_state: prior,
        proposed_new_state: &proposed,
        config: &cfg,
        prior_private: b"",
        provider_meta: None,
    };
    let plan_v = values
        .plan_resource_change(req.clone())
        .await
        .expect("plan");
    let plan_w = wire.plan_resource_change(req).await.expect("plan");
    assert_eq!(
        plan_v.planned_state, plan_w.planned_state,
        "case {n}: planned state"
    );
    assert_eq!(
        plan_v.planned_state.ty(),
        plan_w.planned_state.ty(),
        "case {n}: planned type"
    );
    assert_eq!(
        plan_v.requires_replace, plan_w.requires_replace,
        "case {n}: requires_replace"
    );
    assert_eq!(
        plan_v.planned_private, plan_w.planned_private,
        "case {n}: planned private"
    );
    assert_eq!(
        plan_v.diagnostics, plan_w.diagnostics,
        "case {n}: plan diagnostics"
    );
    if plan_w.diagnostics.has_errors() {
        return prior.clone();
    }
    let req = ApplyRequest {
        type_name: t,
        prior_state: prior,
        planned_state: &plan_w.planned_state,
        config: &cfg,
        planned_private: &plan_w.planned_private,
        provider_meta: None,
    };
    let apply_v = values
        .apply_resource_change(req.clone())
        .await
        .expect("apply");
    let apply_w = wire.apply_resource_change(req).await.expect("apply");
    assert_eq!(
        apply_v.diagnostics, apply_w.diagnostics,
        "case {n}: apply diagnostics"
    );
    assert_eq!(
        apply_v.new_state.ty(),
        apply_w.new_state.ty(),
        "case {n}: applied type"
    );
    assert_eq!(
        chosen_nulled(&apply_v.new_state, &plan_w.planned_state),
        chosen_nulled(&apply_w.new_state, &plan_w.planned_state),
        "case {n}: applied state"
    );
    let read = ReadRequest {
        type_name: t,
        prior_state: &apply_w.new_state,
        private: &apply_w.private,
        provider_meta: None,
    };
    let read_v = values.read_resource(read.clone()).await.expect("read");
    let read_w = wire.read_resource(read).await.expect("read");
    assert_eq!(read_v.new_state, read_w.new_state, "case {n}: read state");
    assert_eq!(
        read_v.new_state.ty(),
        read_w.new_state.ty(),
        "case {n}: read type"
    );
    assert_eq!(read_v.private, read_w.private, "case {n}: read private");
    assert_eq!(
        read_v.diagnostics, read_w.diagnostics,
        "case {n}: read diagnostics"
    );
    apply_w.new_state
}

async fn check(case: Case) {
    let pair = (case.provider)();
    let schema = pair.1.get_schema().await.expect("schema");
    let ty: Type = schema.resources[case.type_name].block.implied_type();
    let created = step(&case, &pair, &Value::null(ty), &case.create).await;
    if let Some(update) = &case.update {
        step(&case, &pair, &created, update).await;
    }
}

#[tokio::test]
async fn value_path_answers_as_the_wire_path() {
    let cases = vec![
        Case {
            name: "data_string_input",
            provider: terraform,
            type_name: "terraform_data",
            create: obj(&[("input", s("a"))]),
            update: Some(obj(&[("input", s("b"))])),
        },
        Case {
            name: "data_object_input_in_dynamic",
            provider: terraform,
            type_name: "terraform_data",
            create: obj(&[(
                "input",
                obj(&[
                    ("n", Value::number(3)),
                    ("tags", Value::list(Type::String, vec![s("x")])),
                ]),
            )]),
            update: Some(obj(&[("input", obj(&[("n", Value::number(4))]))])),
        },
        Case {
            name: "data_unknown_input",
            provider: terraform,
            type_name: "terraform_data",
            create: obj(&[("input", Value::unknown(Type::String))]),
            update: None,
        },
        Case {
            name: "data_triggers_replace",
            provider: terraform,
            type_name: "terraform_data",
            create: obj(&[("triggers_replace", s("one"))]),
            update: Some(obj(&[("triggers_replace", s("two"))])),
        },
        Case {
            name: "random_id_keepers",
            provider: random,
            type_name: "random_id",
            create: obj(&[
                ("byte_length", Value::number(8)),
                (
                    "keepers",
                    Value::map(Type::String, BTreeMap::from([("k".to_string(), s("1"))])),
                ),
            ]),
            update: Some(obj(&[
                ("byte_length", Value::number(8)),
                (
                    "keepers",
                    Value::map(Type::String, BTreeMap::from([("k".to_string(), s("2"))])),
                ),
            ])),
        },
        Case {
            name: "random_id_invalid_length",
            provider: random,
            type_name: "random_id",
            create: obj(&[("byte_length", Value::number(0))]),
            update: None,
        },
        Case {
            name: "random_password",
            provider: random,
            type_name: "random_password",
            create: obj(&[
                ("length", Value::number(12)),
                ("special", Value::bool(false)),
            ]),
            update: Some(obj(&[
                ("length", Value::number(14)),
                ("special", Value::bool(false)),
            ])),
        },
        Case {
            name: "random_shuffle_list",
            provider: random,
            type_name: "random_shuffle",
            create: obj(&[
                (
                    "input",
                    Value::list(Type::String, vec![s("a"), s("b"), s("c")]),
                ),
                ("seed", s("fixed")),
            ]),
            update: None,
        },
    ];
    for case in cases {
        check(case).await;
    }
}
