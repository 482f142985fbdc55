//! Measures what the in-process path costs per call, and what the msgpack
//! round trip of the same values costs, which the wire path adds and the
//! built-ins' value path (crate::provider::grpc) skips:
//! 2,000 terraform_data creates (validate, plan, apply) through the trait,
//! against the same values only encoded and decoded. A benchmark, not a
//! test: it prints the figures (median and spread of several runs) and
//! asserts nothing about time.
//!
//! Run: `cargo bench -p terrane-engine --bench inprocess_cost`. Under
//! `cargo test --all-targets` (no `--bench` argument) it makes a few calls
//! only, so the benchmark keeps building and working.

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::{Duration, Instant};
use support::*;
use terrane_engine::provider::*;
use terrane_schema::objchange::proposed_new;
use terrane_value::{msgpack, Value};

/// Creates per run under `cargo bench`; runs after one warm-up run.
const N: usize = 2000;
const RUNS: usize = 5;

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let (n, runs) = if bench { (N, RUNS) } else { (20, 1) };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    if bench {
        rt.block_on(inprocess_cost(n)); // warm-up
    }
    let mut calls = Vec::new();
    let mut codecs = Vec::new();
    for _ in 0..runs {
        let (call, codec) = rt.block_on(inprocess_cost(n));
        calls.push(call);
        codecs.push(codec);
    }
    let (call, call_min, call_max) = spread(&mut calls);
    let (codec, ..) = spread(&mut codecs);
    eprintln!("in-process terraform_data create (validate+plan+apply), median of {runs} run(s) of {n}: {call:?} each (min {call_min:?}, max {call_max:?}); msgpack round trips of its values (the wire path; skipped in-process) {codec:?} each ({:.0}%)", 100.0 * codec.as_secs_f64() / call.as_secs_f64());
}

/// Median, minimum and maximum.
fn spread(xs: &mut [Duration]) -> (Duration, Duration, Duration) {
    xs.sort();
    (xs[xs.len() / 2], xs[0], xs[xs.len() - 1])
}

/// One run of `n` creates: the time per create through the trait and the
/// time per create of its values' msgpack round trips alone.
async fn inprocess_cost(n: usize) -> (Duration, Duration) {
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
    for i in 0..n {
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

    // What msgpack would add: the same number of values encoded and
    // decoded as the wire calls move (validate 1, plan 3 + 1, apply 3 + 1).
    let start = Instant::now();
    for _ in 0..n * 9 {
        let bytes = msgpack::encode(&last, &ty).unwrap();
        std::hint::black_box(msgpack::decode(&bytes, &ty).unwrap());
    }
    let codec = start.elapsed();
    assert!(last.is_wholly_known());
    host.shutdown().await;
    (through_trait / n as u32, codec / n as u32)
}
