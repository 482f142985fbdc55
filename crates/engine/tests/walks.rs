//! The engine's walks end to end with the built-in (in-process) providers
//! and a real SQLite state store: each named step writes a configuration,
//! plans, checks the actions per address, applies, and checks the state.

use std::collections::BTreeMap;
use std::path::Path;
use terrane_engine::{Action, Engine, Options, PlanMode};
use terrane_state::{LockInfo, SqliteStore, StateStore};

struct Step {
    name: &'static str,
    config: &'static str,
    mode: PlanMode,
    /// Expected non-no-op actions by address.
    want: &'static [(&'static str, Action)],
    /// Addresses in state after apply.
    state: &'static [&'static str],
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn check(steps: &[Step]) {
    let dir = terrane_testkit::temp_dir();
    let store =
        SqliteStore::open(&SqliteStore::default_path(dir.path()), None).expect("state store");
    let rt = rt();
    for step in steps {
        std::fs::write(dir.path().join("main.tf"), step.config).unwrap();
        rt.block_on(async {
            let engine = Engine::load(dir.path(), &terrane_builtins::standard())
                .unwrap_or_else(|d| panic!("step {}: load failed: {d:?}", step.name));
            let mut run = store
                .lock("default", LockInfo::new("test", step.name))
                .unwrap();
            let snapshot = run.snapshot().unwrap();
            let opts = Options {
                mode: step.mode,
                ..Options::default()
            };
            let plan = engine.plan(&snapshot, opts.clone()).await;
            assert!(
                !plan.has_errors(),
                "step {}: plan errors: {:?}",
                step.name,
                plan.diagnostics
            );
            let got: BTreeMap<String, Action> = plan
                .changes
                .iter()
                .filter(|c| c.action != Action::NoOp)
                .map(|c| (c.addr.to_string(), c.action))
                .collect();
            let want: BTreeMap<String, Action> =
                step.want.iter().map(|(a, x)| (a.to_string(), *x)).collect();
            assert_eq!(got, want, "step {}: planned actions", step.name);
            let (result, run) = engine.apply(&plan, &snapshot, run, opts).await;
            engine.shutdown().await;
            run.finish().unwrap();
            assert!(
                !result.has_errors(),
                "step {}: apply errors: {:?}",
                step.name,
                result.diagnostics
            );
        });
        let s = store.snapshot("default").unwrap();
        let mut addrs: Vec<String> = s
            .resources
            .iter()
            .flat_map(|(r, rs)| {
                rs.instances
                    .keys()
                    .map(move |k| r.instance(k.clone()).to_string())
            })
            .collect();
        addrs.sort();
        let mut want: Vec<String> = step.state.iter().map(|s| s.to_string()).collect();
        want.sort();
        assert_eq!(addrs, want, "step {}: state after apply", step.name);
    }
    let _ = Path::new(".");
}

#[test]
fn lifecycle_of_built_in_resources() {
    use Action::*;
    check(&[
        Step {
            name: "create",
            config: r#"
resource "terraform_data" "a" { input = "one" }
resource "terraform_data" "b" {
  count = 2
  input = "${terraform_data.a.output}-${count.index}"
}
resource "random_pet" "p" {
  for_each = toset(["x", "y"])
  prefix   = each.key
}
"#,
            mode: PlanMode::Normal,
            want: &[
                ("terraform_data.a", Create),
                ("terraform_data.b[0]", Create),
                ("terraform_data.b[1]", Create),
                ("random_pet.p[\"x\"]", Create),
                ("random_pet.p[\"y\"]", Create),
            ],
            state: &[
                "terraform_data.a",
                "terraform_data.b[0]",
                "terraform_data.b[1]",
                "random_pet.p[\"x\"]",
                "random_pet.p[\"y\"]",
            ],
        },
        Step {
            name: "no_op",
            config: r#"
resource "terraform_data" "a" { input = "one" }
resource "terraform_data" "b" {
  count = 2
  input = "${terraform_data.a.output}-${count.index}"
}
resource "random_pet" "p" {
  for_each = toset(["x", "y"])
  prefix   = each.key
}
"#,
            mode: PlanMode::Normal,
            want: &[],
            state: &[
                "terraform_data.a",
                "terraform_data.b[0]",
                "terraform_data.b[1]",
                "random_pet.p[\"x\"]",
                "random_pet.p[\"y\"]",
            ],
        },
        Step {
            name: "update_propagates_shrink_and_replace",
            config: r#"
resource "terraform_data" "a" { input = "two" }
resource "terraform_data" "b" {
  count = 1
  input = "${terraform_data.a.output}-${count.index}"
}
resource "random_pet" "p" {
  for_each = toset(["x", "y"])
  prefix   = "${each.key}2"
}
"#,
            mode: PlanMode::Normal,
            want: &[
                ("terraform_data.a", Update),
                ("terraform_data.b[0]", Update),
                ("terraform_data.b[1]", Delete),
                ("random_pet.p[\"x\"]", DeleteThenCreate),
                ("random_pet.p[\"y\"]", DeleteThenCreate),
            ],
            state: &[
                "terraform_data.a",
                "terraform_data.b[0]",
                "random_pet.p[\"x\"]",
                "random_pet.p[\"y\"]",
            ],
        },
        Step {
            name: "create_before_destroy_and_orphan",
            config: r#"
resource "terraform_data" "a" {
  input            = "two"
  triggers_replace = "v2"
  lifecycle { create_before_destroy = true }
}
"#,
            mode: PlanMode::Normal,
            want: &[
                ("terraform_data.a", CreateThenDelete),
                ("terraform_data.b[0]", Delete),
                ("random_pet.p[\"x\"]", Delete),
                ("random_pet.p[\"y\"]", Delete),
            ],
            state: &["terraform_data.a"],
        },
        Step {
            name: "destroy",
            config: r#"resource "terraform_data" "a" { input = "two" }"#,
            mode: PlanMode::Destroy,
            want: &[("terraform_data.a", Delete)],
            state: &[],
        },
    ]);
}

#[test]
fn modules_and_data_sources() {
    let dir = terrane_testkit::temp_dir();
    std::fs::create_dir_all(dir.path().join("m")).unwrap();
    std::fs::write(dir.path().join("m/main.tf"), "variable \"n\" {}\nresource \"terraform_data\" \"t\" { input = var.n }\noutput \"o\" { value = terraform_data.t.output }\n").unwrap();
    std::fs::write(dir.path().join("in.txt"), "hello").unwrap();
    std::fs::write(
        dir.path().join("main.tf"),
        r#"
module "m" {
  source   = "./m"
  for_each = { a = 1, b = 2 }
  n        = each.value * 10
}
data "local_file" "known" { filename = "${path.module}/in.txt" }
resource "terraform_data" "sum" {
  input = [module.m["a"].o, module.m["b"].o, data.local_file.known.content]
}
"#,
    )
    .unwrap();
    let store = SqliteStore::open(&SqliteStore::default_path(dir.path()), None).unwrap();
    rt().block_on(async {
        let engine = Engine::load(dir.path(), &terrane_builtins::standard()).unwrap();
        let mut run = store.lock("default", LockInfo::new("test", "")).unwrap();
        let snapshot = run.snapshot().unwrap();
        let plan = engine.plan(&snapshot, Options::default()).await;
        assert!(!plan.has_errors(), "{:?}", plan.diagnostics);
        let actions: BTreeMap<String, Action> = plan
            .changes
            .iter()
            .map(|c| (c.addr.to_string(), c.action))
            .collect();
        assert_eq!(
            actions.get("module.m[\"a\"].terraform_data.t"),
            Some(&Action::Create)
        );
        assert_eq!(
            actions.get("module.m[\"b\"].terraform_data.t"),
            Some(&Action::Create)
        );
        assert_eq!(actions.get("terraform_data.sum"), Some(&Action::Create));
        // The data source's configuration is known: read during plan.
        assert!(
            !actions.contains_key("data.local_file.known"),
            "read at plan, not planned: {actions:?}"
        );
        let (result, run) = engine
            .apply(&plan, &snapshot, run, Options::default())
            .await;
        run.finish().unwrap();
        assert!(!result.has_errors(), "{:?}", result.diagnostics);
        engine.shutdown().await;
    });
    let s = store.snapshot("default").unwrap();
    let sum = s
        .resources
        .iter()
        .find(|(r, _)| r.name == "sum")
        .map(|(_, r)| {
            r.instances
                .values()
                .next()
                .unwrap()
                .current
                .clone()
                .unwrap()
        })
        .unwrap();
    // A dynamic attribute is stored with its type, as Terraform stores it.
    assert_eq!(
        sum.attributes.json()["output"]["value"],
        serde_json::json!([10, 20, "hello"])
    );
}

#[test]
fn cycles_are_reported_with_every_member() {
    let dir = terrane_testkit::temp_dir();
    std::fs::write(
        dir.path().join("main.tf"),
        "resource \"terraform_data\" \"a\" { input = terraform_data.b.output }\nresource \"terraform_data\" \"b\" { input = terraform_data.a.output }\n",
    )
    .unwrap();
    let Err(diags) = Engine::load(dir.path(), &terrane_builtins::standard()) else {
        panic!("a cycle must not load")
    };
    let d = diags
        .iter()
        .find(|d| d.summary.starts_with("Cycle:"))
        .expect("a cycle diagnostic");
    assert!(
        d.summary.contains("terraform_data.a") && d.summary.contains("terraform_data.b"),
        "{}",
        d.summary
    );
    assert!(
        d.detail.contains("main.tf:1") && d.detail.contains("main.tf:2"),
        "{}",
        d.detail
    );
}
