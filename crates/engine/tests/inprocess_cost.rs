//! Measures what the in-process path costs per call, and how much of it is
//! the msgpack round trip the built-ins deliberately keep (so the SDK
//! server checks every value against its schema exactly as for plugins):
//! 2,000 terraform_data creates (validate, plan, apply) through the trait,
//! against the same values only encoded and decoded. Prints the numbers;
//! asserts only a generous bound so a loaded CI machine does not flake.

mod support;

use std::time::Instant;
use support::*;
use terrane_engine::provider::*;
use terrane_schema::objchange::proposed_new;
use terrane_value::{msgpack, Value};

const N: usize = 2000;

#[tokio::test]
async fn inprocess_cost() {
    let host = ProviderHost::new(HostOptions::default());
    let addr = ProviderAddr::builtin_terraform();
    host.register(addr.clone(), builtin(&addr));
    let p = host.instance(&ProviderConfigKey::root(addr)).await.unwrap();
    configure(p.as_ref()).await;
    let s = p.get_schema().await.unwrap();
    let block = &s.resource("terraform_data").unwrap().block;
    let ty = block.implied_type();
    let null = Value::null(ty.clone());

    let start = Instant::now();
    let mut last = null.clone();
    for i in 0..N {
        let config = object(
            &s,
            "terraform_data",
            &[("input", Value::string(format!("value-{i}")))],
        );
        assert!(!p
            .validate_resource_config("terraform_data", &config)
            .await
            .unwrap()
            .has_errors());
        let proposed = proposed_new(block, &null, &config);
        let plan = p
            .plan_resource_change(PlanRequest {
                type_name: "terraform_data",
                prior_state: &null,
                proposed_new_state: &proposed,
                config: &config,
                prior_private: &[],
                provider_meta: None,
            })
            .await
            .unwrap();
        let applied = p
            .apply_resource_change(ApplyRequest {
                type_name: "terraform_data",
                prior_state: &null,
                planned_state: &plan.planned_state,
                config: &config,
                planned_private: &[],
                provider_meta: None,
            })
            .await
            .unwrap();
        last = applied.new_state;
    }
    let through_trait = start.elapsed();

    // The msgpack share: the same number of values encoded and decoded as
    // the calls above move (validate 1, plan 3 + 1, apply 3 + 1).
    let start = Instant::now();
    for _ in 0..N * 9 {
        let bytes = msgpack::encode(&last, &ty).unwrap();
        std::hint::black_box(msgpack::decode(&bytes, &ty).unwrap());
    }
    let codec = start.elapsed();
    let per_create = through_trait / N as u32;
    eprintln!("in-process terraform_data create (validate+plan+apply): {per_create:?} each; msgpack share {:?} each ({:.0}%)", codec / N as u32, 100.0 * codec.as_secs_f64() / through_trait.as_secs_f64());
    assert!(last.is_wholly_known());
    assert!(
        through_trait.as_secs() < 60,
        "in-process calls far too slow: {through_trait:?} for {N}"
    );
    host.shutdown().await;
}
