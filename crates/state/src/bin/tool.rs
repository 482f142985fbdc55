//! terrane-state-tool: drives a state store from the outside, for the crash
//! and concurrency tests and the persistence benchmark.
//!
//! * `persist-loop DB N [NAME]` — locks `default`, persists N single-instance
//!   changes one by one, printing `ack I` after each commit (the crash test
//!   kills it at random and checks every acknowledged change survived).
//! * `lock DB|PGURL WORKSPACE SECONDS` — takes the lock, prints `locked ID`
//!   or the lock error, holds it for SECONDS.
//! * `bench DB|PGURL N...` — persists N changes one by one into a fresh
//!   workspace and prints the mean cost per change for each N.

use std::io::Write;
use std::time::Instant;
use terrane_state::{
    Change, InstanceKey, LockInfo, ObjectState, PgStore, ResourceAddr, SqliteStore, StateStore,
};

fn open(target: &str) -> Box<dyn StateStore> {
    let res: terrane_state::Result<Box<dyn StateStore>> =
        if target.starts_with("postgres://") || target.starts_with("postgresql://") {
            PgStore::open(
                target,
                &std::env::var("TERRANE_PG_SCHEMA").unwrap_or_else(|_| "terrane".into()),
                None,
            )
            .map(|s| Box::new(s) as Box<dyn StateStore>)
        } else {
            SqliteStore::open(std::path::Path::new(target), None)
                .map(|s| Box::new(s) as Box<dyn StateStore>)
        };
    res.unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(1)
    })
}

/// The i-th change: an instance of `terraform_data.item` with a payload.
pub fn change(name: &str, i: u64) -> Change {
    let addr = ResourceAddr::managed("terraform_data", name).instance(InstanceKey::Int(i as i64));
    let attributes = serde_json::json!({"id": format!("id-{i}"), "input": {"value": {"n": i, "text": "x".repeat(64)}, "type": ["object", {"n": "number", "text": "string"}]}, "output": null, "triggers_replace": null});
    Change::SetObject {
        addr,
        deposed: None,
        provider: "provider[\"terraform.io/builtin/terraform\"]".into(),
        object: ObjectState {
            attributes,
            ..Default::default()
        },
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let out = std::io::stdout();
    match args.get(1).map(String::as_str) {
        Some("persist-loop") => {
            let store = open(&args[2]);
            let n: u64 = args[3].parse().expect("count");
            let name = args.get(4).cloned().unwrap_or_else(|| "item".into());
            let mut run = store
                .lock("default", LockInfo::new("OperationTypeApply", "crash test"))
                .unwrap_or_else(|e| panic!("{e}"));
            for i in 0..n {
                run.persist(&[change(&name, i)])
                    .unwrap_or_else(|e| panic!("{e}"));
                let mut o = out.lock();
                writeln!(o, "ack {i}").ok();
                o.flush().ok();
            }
            run.finish().ok();
        }
        Some("lock") => {
            let store = open(&args[2]);
            match store.lock(&args[3], LockInfo::new("OperationTypeApply", "race")) {
                Ok(run) => {
                    println!("locked {}", run.lock_info().id);
                    std::thread::sleep(std::time::Duration::from_secs_f64(
                        args[4].parse().unwrap_or(1.0),
                    ));
                    run.finish().ok();
                }
                Err(e) => {
                    println!("refused {}", e.to_string().replace('\n', " | "));
                }
            }
        }
        Some("bench") => {
            for n in &args[3..] {
                let n: u64 = n.parse().expect("count");
                let target = if args[2].starts_with("postgres") {
                    args[2].clone()
                } else {
                    format!("{}-{n}.db", args[2])
                };
                let _ = std::fs::remove_file(&target);
                let store = open(&target);
                let ws = format!("bench-{n}-{}", std::process::id());
                let mut run = store
                    .lock(&ws, LockInfo::new("OperationTypeApply", "bench"))
                    .expect("lock");
                let start = Instant::now();
                let mut first_10pct = None;
                for i in 0..n {
                    run.persist(&[change("item", i)]).expect("persist");
                    if i + 1 == n / 10 {
                        first_10pct = Some(start.elapsed());
                    }
                }
                let total = start.elapsed();
                run.finish().ok();
                let last = total - first_10pct.unwrap_or_default();
                println!(
                    "n={n} per_change_us={:.1} first_10pct_us={:.1} last_90pct_us={:.1}",
                    total.as_secs_f64() * 1e6 / n as f64,
                    first_10pct.unwrap_or_default().as_secs_f64() * 1e6 / (n / 10).max(1) as f64,
                    last.as_secs_f64() * 1e6 / (n - n / 10).max(1) as f64
                );
                if !args[2].starts_with("postgres") {
                    let _ = std::fs::remove_file(&target);
                }
            }
        }
        _ => {
            eprintln!("usage: terrane-state-tool persist-loop DB N | lock TARGET WORKSPACE SECONDS | bench TARGET N...");
            std::process::exit(2);
        }
    }
}
