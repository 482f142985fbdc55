//! Plans of large expansions, which the engine spreads over a pool of
//! worker threads (64 or more instances of one resource, more than one
//! core), on a current-thread runtime as the `terrane` binary runs them:
//! every instance is planned once with its own `count.index`/`each.key`,
//! and the instances' diagnostics come in instance order, whichever worker
//! finished first.

use std::collections::BTreeMap;
use terrane_engine::{Action, Engine, Options};
use terrane_state::Snapshot;

struct Case {
    name: &'static str,
    config: &'static str,
    parallelism: usize,
    /// Every planned create: address and its planned `input`, or `None`
    /// where it is not known yet.
    creates: fn() -> BTreeMap<String, Option<String>>,
    /// The first lines of the plan's error diagnostics' details, in order.
    errors: &'static [&'static str],
}

fn check(c: &Case) {
    let dir = terrane_testkit::temp_dir();
    std::fs::write(dir.path().join("main.tf"), c.config).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let plan = rt.block_on(async {
        let engine = Engine::load(dir.path(), &terrane_builtins::standard())
            .unwrap_or_else(|d| panic!("{}: load failed: {d:?}", c.name));
        let opts = Options {
            parallelism: c.parallelism,
            ..Options::default()
        };
        let plan = engine.plan(&Snapshot::empty(), opts).await;
        engine.shutdown().await;
        plan
    });
    let errors: Vec<&str> = plan
        .diagnostics
        .iter()
        .filter(|d| d.severity == terrane_config::Severity::Error)
        .map(|d| d.detail.lines().next().unwrap_or_default())
        .collect();
    assert_eq!(errors, c.errors, "{}: errors, in instance order", c.name);
    let mut creates = BTreeMap::new();
    for ch in &plan.changes {
        assert_eq!(ch.action, Action::Create, "{}: {}", c.name, ch.addr);
        let input = match ch.after.get_attr("input") {
            Some(v) if !v.is_known() => None,
            Some(v) => match v.as_str() {
                Some(s) => Some(s.to_string()),
                None => panic!("{}: {}: input {v:?}", c.name, ch.addr),
            },
            None => panic!("{}: {}: no input", c.name, ch.addr),
        };
        let again = creates.insert(ch.addr.to_string(), input);
        assert!(again.is_none(), "{}: {} planned twice", c.name, ch.addr);
    }
    assert_eq!(creates, (c.creates)(), "{}: planned creates", c.name);
}

fn counted(ty: &str, n: usize) -> BTreeMap<String, Option<String>> {
    (0..n)
        .map(|i| (format!("{ty}[{i}]"), Some(format!("v-{i}"))))
        .collect()
}

#[test]
fn large_expansions_plan_every_instance_once() {
    let cases = [
        Case {
            name: "count of 300",
            config: r#"
resource "terraform_data" "r" {
  count = 300
  input = "v-${count.index}"
}
"#,
            parallelism: 10,
            creates: || counted("terraform_data.r", 300),
            errors: &[],
        },
        Case {
            name: "parallelism of one",
            config: r#"
resource "terraform_data" "r" {
  count = 100
  input = "v-${count.index}"
}
"#,
            parallelism: 1,
            creates: || counted("terraform_data.r", 100),
            errors: &[],
        },
        Case {
            name: "for_each of 128 keys",
            config: r#"
resource "terraform_data" "r" {
  for_each = toset([for i in range(128) : "k${i}"])
  input    = "v-${each.key}"
}
"#,
            parallelism: 10,
            creates: || {
                (0..128)
                    .map(|i| {
                        (
                            format!("terraform_data.r[\"k{i}\"]"),
                            Some(format!("v-k{i}")),
                        )
                    })
                    .collect()
            },
            errors: &[],
        },
        Case {
            name: "beside a small resource it depends on",
            config: r#"
resource "terraform_data" "a" {
  input = "a"
}
resource "terraform_data" "b" {
  count = 64
  input = terraform_data.a.output
}
"#,
            parallelism: 10,
            creates: || {
                let mut m: BTreeMap<String, Option<String>> = (0..64)
                    .map(|i| (format!("terraform_data.b[{i}]"), None))
                    .collect();
                m.insert("terraform_data.a".into(), Some("a".into()));
                m
            },
            errors: &[],
        },
    ];
    for c in &cases {
        check(c);
    }
}

#[test]
fn failing_instances_report_in_instance_order() {
    let cases = [
        Case {
            name: "preconditions failing across the expansion",
            config: r#"
resource "terraform_data" "r" {
  count = 200
  input = "v-${count.index}"
  lifecycle {
    precondition {
      condition     = count.index % 40 != 7
      error_message = "instance ${count.index} refused"
    }
  }
}
"#,
            parallelism: 10,
            creates: || {
                let mut m = counted("terraform_data.r", 200);
                for i in [7, 47, 87, 127, 167] {
                    m.remove(&format!("terraform_data.r[{i}]"));
                }
                m
            },
            errors: &[
                "instance 7 refused",
                "instance 47 refused",
                "instance 87 refused",
                "instance 127 refused",
                "instance 167 refused",
            ],
        },
        Case {
            name: "the first and the last failing",
            config: r#"
resource "terraform_data" "r" {
  count = 70
  input = "v-${count.index}"
  lifecycle {
    precondition {
      condition     = count.index != 0 && count.index != 69
      error_message = "instance ${count.index} refused"
    }
  }
}
"#,
            parallelism: 3,
            creates: || {
                let mut m = counted("terraform_data.r", 70);
                m.remove("terraform_data.r[0]");
                m.remove("terraform_data.r[69]");
                m
            },
            errors: &["instance 0 refused", "instance 69 refused"],
        },
    ];
    for c in &cases {
        check(c);
    }
}
