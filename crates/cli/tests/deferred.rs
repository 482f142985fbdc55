//! Deferred changes (issue 21 item 4) through the real `terrane` binary:
//! when `count`/`for_each` is not known at plan time (or a provider
//! answers `Deferred`), terrane plans the rest, lists the deferred part
//! with its reason (plan text, `show -json`, saved plans), applies the
//! known part, and the next plan picks up the rest. `-defer=false` is
//! Terraform's strict behaviour, compared with real Terraform's errors.
//! The state is checked after every step.

use std::path::Path;
use terrane_testkit::{isolated, Out};

fn terrane(dir: &Path, rc: &str, env: &[(&str, &str)], args: &[&str]) -> Out {
    isolated(env!("CARGO_BIN_EXE_terrane"), dir)
        .args(args)
        .env("TF_CLI_CONFIG_FILE", rc)
        .env("NO_COLOR", "1")
        .envs(env.iter().copied())
        .output()
        .expect("terrane runs")
        .into()
}

/// One step of a scenario: a command, the exit code it must give, text
/// its output must hold and must not hold, and the state's addresses
/// after it (`state list`).
struct Step<'a> {
    args: &'a [&'a str],
    code: i32,
    holds: &'a [&'a str],
    lacks: &'a [&'a str],
    state: &'a [&'a str],
}

/// Runs the steps in `dir`, failing with the step's output on the first
/// difference.
fn check(name: &str, dir: &Path, rc: &str, env: &[(&str, &str)], steps: &[Step]) {
    for (i, s) in steps.iter().enumerate() {
        let o = terrane(dir, rc, env, s.args);
        let all = format!("{}{}", o.stdout, o.stderr);
        let what = format!("{name} step {i} {:?}:\n{all}", s.args);
        assert_eq!(o.code, s.code, "exit code of {what}");
        for h in s.holds {
            assert!(all.contains(h), "{h:?} missing from {what}");
        }
        for l in s.lacks {
            assert!(!all.contains(l), "{l:?} present in {what}");
        }
        let listed = terrane(dir, rc, env, &["state", "list"]);
        let mut got: Vec<&str> = listed.stdout.lines().filter(|l| !l.is_empty()).collect();
        got.sort();
        let mut want = s.state.to_vec();
        want.sort();
        assert_eq!(got, want, "state after {what}\n{}", listed.stderr);
    }
}

fn empty_rc(dir: &Path) -> String {
    let rc = dir.join("empty.tfrc");
    std::fs::write(&rc, "").expect("CLI config");
    rc.display().to_string()
}

const FOR_EACH_IDS: &str = r#"resource "terraform_data" "base" {
  count = 2
  input = "b${count.index}"
}

resource "terraform_data" "known" {
  input = "k"
}

resource "terraform_data" "per_id" {
  for_each = toset(terraform_data.base[*].id)
  input    = each.key
}

resource "terraform_data" "downstream" {
  input = [for k, v in terraform_data.per_id : v.id]
}
"#;

/// `show -json PLANFILE`.
fn show_json(dir: &Path, rc: &str, plan: &str) -> serde_json::Value {
    let o = terrane(dir, rc, &[], &["show", "-json", plan]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    serde_json::from_str(&o.stdout).expect("show -json")
}

/// A JSON plan's deferred changes: `ADDRESS REASON`, sorted.
fn deferred_of(j: &serde_json::Value) -> Vec<String> {
    let mut v: Vec<String> = j["deferred_changes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            format!(
                "{} {}",
                c["resource_change"]["address"].as_str().unwrap_or("?"),
                c["reason"].as_str().unwrap_or("?")
            )
        })
        .collect();
    v.sort();
    v
}

/// The `id` of `addr` in the state (`show -json`).
fn id_in_state(dir: &Path, rc: &str, addr: &str) -> String {
    let show = terrane(dir, rc, &[], &["show", "-json"]);
    assert_eq!(show.code, 0, "{}", show.stderr);
    let j: serde_json::Value = serde_json::from_str(&show.stdout).expect("show -json");
    let mut all: Vec<serde_json::Value> = Vec::new();
    let root = &j["values"]["root_module"];
    all.extend(root["resources"].as_array().cloned().unwrap_or_default());
    for m in root["child_modules"].as_array().into_iter().flatten() {
        all.extend(m["resources"].as_array().cloned().unwrap_or_default());
    }
    all.iter()
        .find(|r| r["address"] == addr)
        .and_then(|r| r["values"]["id"].as_str().map(str::to_string))
        .unwrap_or_else(|| panic!("{addr} in state: {}", show.stdout))
}

#[test]
fn item4_for_each_over_unknown_ids_converges_in_two_applies() {
    let dir = terrane_testkit::temp_dir();
    let d = dir.path();
    std::fs::write(d.join("main.tf"), FOR_EACH_IDS).unwrap();
    let rc = empty_rc(d);
    let known = [
        "terraform_data.base[0]",
        "terraform_data.base[1]",
        "terraform_data.known",
    ];
    check(
        "first",
        d,
        &rc,
        &[],
        &[
            // A partial plan: the known part planned, the rest deferred
            // with the reason; -detailed-exitcode says "more to do".
            Step {
                args: &["plan", "-detailed-exitcode", "-out=p"],
                code: 2,
                holds: &[
                    "Plan: 3 to add, 0 to change, 0 to destroy.",
                    "Deferred changes:",
                    "terraform_data.per_id[*] (instance_count_unknown): its for_each value is not known until apply",
                    "terraform_data.downstream (deferred_prereq): it depends on terraform_data.per_id, which is deferred",
                ],
                lacks: &["Invalid for_each argument", "# terraform_data.per_id"],
                state: &[],
            },
            // The saved plan keeps its deferred part.
            Step {
                args: &["show", "p"],
                code: 0,
                holds: &["Deferred changes:", "terraform_data.per_id[*]"],
                lacks: &[],
                state: &[],
            },
        ],
    );
    // `show -json` of the partial saved plan: incomplete, with reasons.
    let j = show_json(d, &rc, "p");
    assert_eq!(j["complete"], false, "{j}");
    assert_eq!(
        deferred_of(&j),
        [
            "terraform_data.downstream deferred_prereq",
            "terraform_data.per_id[*] instance_count_unknown",
        ],
        "{j}"
    );
    // `plan -json` streams one `deferred_change` line per deferred part.
    let o = terrane(d, &rc, &[], &["plan", "-json"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let mut streamed: Vec<String> = o
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|j| j["type"] == "deferred_change")
        .map(|j| {
            let c = &j["deferred_change"];
            format!(
                "{} {}",
                c["resource"]["addr"].as_str().unwrap_or("?"),
                c["reason"].as_str().unwrap_or("?")
            )
        })
        .collect();
    streamed.sort();
    assert_eq!(streamed, deferred_of(&j), "{}", o.stdout);
    check(
        "first_apply",
        d,
        &rc,
        &[],
        &[Step {
            args: &["apply", "p"],
            code: 0,
            holds: &[
                "Apply complete! Resources: 3 added, 0 changed, 0 destroyed.",
                "The plan was partial: 2 deferred part(s) were not applied.",
            ],
            lacks: &[],
            state: &known,
        }],
    );
    // The next plan is complete: per_id's keys are known now.
    let o = terrane(d, &rc, &[], &["plan", "-out=p2"]);
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    let j = show_json(d, &rc, "p2");
    assert_eq!(j["complete"], true, "{j}");
    assert!(deferred_of(&j).is_empty(), "{j}");
    let ids: Vec<String> = ["terraform_data.base[0]", "terraform_data.base[1]"]
        .iter()
        .map(|a| id_in_state(d, &rc, a))
        .collect();
    let per_id: Vec<String> = ids
        .iter()
        .map(|id| format!("terraform_data.per_id[\"{id}\"]"))
        .collect();
    let mut full: Vec<&str> = known.to_vec();
    full.extend(per_id.iter().map(String::as_str));
    full.push("terraform_data.downstream");
    check(
        "second",
        d,
        &rc,
        &[],
        &[
            // The next apply plans (and creates) the rest.
            Step {
                args: &["apply", "-auto-approve"],
                code: 0,
                holds: &["Apply complete! Resources: 3 added, 0 changed, 0 destroyed."],
                lacks: &["Deferred changes:", "partial"],
                state: &full,
            },
            // Converged: nothing planned, nothing deferred.
            Step {
                args: &["plan", "-detailed-exitcode"],
                code: 0,
                holds: &["No changes."],
                lacks: &["Deferred changes:"],
                state: &full,
            },
        ],
    );
}

const MODULE_ROOT: &str = r#"resource "terraform_data" "known" {
  input = "k"
}

module "m" {
  source = "./m"
  count  = terraform_data.known.output == "k" ? 1 : 0
}

resource "terraform_data" "uses" {
  input = module.m[*].id
}
"#;

const MODULE_CHILD: &str = r#"resource "terraform_data" "inner" {
  input = "i"
}

resource "terraform_data" "second" {
  count = 2
}

output "id" {
  value = terraform_data.inner.id
}
"#;

#[test]
fn item4_module_count_depending_on_a_resource_defers_its_whole_content() {
    let dir = terrane_testkit::temp_dir();
    let d = dir.path();
    std::fs::create_dir(d.join("m")).unwrap();
    std::fs::write(d.join("main.tf"), MODULE_ROOT).unwrap();
    std::fs::write(d.join("m/main.tf"), MODULE_CHILD).unwrap();
    let rc = empty_rc(d);
    let init = terrane(d, &rc, &[], &["init"]);
    assert_eq!(init.code, 0, "{}{}", init.stdout, init.stderr);
    check(
        "partial",
        d,
        &rc,
        &[],
        &[
            Step {
                args: &["plan", "-out=p"],
                code: 0,
                holds: &[
                    "Plan: 1 to add, 0 to change, 0 to destroy.",
                    "module.m[*].terraform_data.inner (instance_count_unknown): the count or for_each of module \"m\" is not known until apply",
                    "module.m[*].terraform_data.second[*] (instance_count_unknown)",
                    "terraform_data.uses (deferred_prereq)",
                ],
                lacks: &["Invalid count argument", "# module.m"],
                state: &[],
            },
        ],
    );
    let j = show_json(d, &rc, "p");
    assert_eq!(
        deferred_of(&j),
        [
            "module.m[*].terraform_data.inner instance_count_unknown",
            "module.m[*].terraform_data.second[*] instance_count_unknown",
            "terraform_data.uses deferred_prereq",
        ],
        "{j}"
    );
    let full = [
        "module.m[0].terraform_data.inner",
        "module.m[0].terraform_data.second[0]",
        "module.m[0].terraform_data.second[1]",
        "terraform_data.known",
        "terraform_data.uses",
    ];
    check(
        "converge",
        d,
        &rc,
        &[],
        &[
            Step {
                args: &["apply", "p"],
                code: 0,
                holds: &[
                    "Resources: 1 added",
                    "The plan was partial: 3 deferred part(s)",
                ],
                lacks: &[],
                state: &["terraform_data.known"],
            },
            Step {
                args: &["apply", "-auto-approve"],
                code: 0,
                holds: &["Resources: 4 added, 0 changed, 0 destroyed."],
                lacks: &["Deferred changes:"],
                state: &full,
            },
            Step {
                args: &["plan", "-detailed-exitcode"],
                code: 0,
                holds: &["No changes."],
                lacks: &["Deferred changes:"],
                state: &full,
            },
        ],
    );
}

/// Existing objects of a resource that becomes deferred are kept, never
/// planned for deletion as orphans.
#[test]
fn item4_deferred_resource_keeps_its_objects() {
    let dir = terrane_testkit::temp_dir();
    let d = dir.path();
    let rc = empty_rc(d);
    let before = r#"resource "terraform_data" "gate" {
  input = "a"
}

resource "terraform_data" "many" {
  count = 2
}
"#;
    // `many` now counts on gate's output, which a replacement makes unknown.
    let after = r#"resource "terraform_data" "gate" {
  input = "b"
}

resource "terraform_data" "many" {
  count = terraform_data.gate.output == "b" ? 3 : 2
}
"#;
    std::fs::write(d.join("main.tf"), before).unwrap();
    let o = terrane(d, &rc, &[], &["apply", "-auto-approve"]);
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    std::fs::write(d.join("main.tf"), after).unwrap();
    let state = [
        "terraform_data.gate",
        "terraform_data.many[0]",
        "terraform_data.many[1]",
    ];
    check(
        "kept",
        d,
        &rc,
        &[],
        &[
            Step {
                args: &["plan"],
                code: 0,
                holds: &[
                    "terraform_data.many[*] (instance_count_unknown)",
                    "0 to destroy",
                ],
                lacks: &["# terraform_data.many"],
                state: &state,
            },
            Step {
                args: &["apply", "-auto-approve"],
                code: 0,
                holds: &["0 destroyed"],
                lacks: &[],
                state: &state,
            },
            Step {
                args: &["apply", "-auto-approve"],
                code: 0,
                holds: &["Resources: 1 added, 0 changed, 0 destroyed."],
                lacks: &["Deferred changes:"],
                state: &[&state[..], &["terraform_data.many[2]"]].concat(),
            },
        ],
    );
}

/// The diagnostics of a `plan -json` run: `summary | detail | file
/// start-end`, sorted.
fn diagnostics(stdout: &str) -> Vec<String> {
    let pos = |p: &serde_json::Value| format!("{}:{}", p["line"], p["column"]);
    let mut v: Vec<String> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|j| j["type"] == "diagnostic")
        .map(|j| {
            let d = &j["diagnostic"];
            format!(
                "{} | {} | {} {}-{}",
                d["summary"].as_str().unwrap_or("?"),
                d["detail"].as_str().unwrap_or("?"),
                d["range"]["filename"].as_str().unwrap_or("-"),
                pos(&d["range"]["start"]),
                pos(&d["range"]["end"]),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn item4_strict_flag_reproduces_terraforms_error() {
    let cases: &[(&str, &str)] = &[
        ("for_each_set_of_ids", FOR_EACH_IDS),
        ("module_and_resource_count", MODULE_ROOT),
        (
            "for_each_map_unknown_keys",
            r#"resource "terraform_data" "known" {
  input = "k"
}

resource "terraform_data" "mp" {
  for_each = { for x in [terraform_data.known.id] : x => x }
}
"#,
        ),
    ];
    let tf = terrane_testkit::terraform();
    for (name, main) in cases {
        let dir = terrane_testkit::temp_dir();
        let d = dir.path();
        std::fs::write(d.join("main.tf"), main).unwrap();
        std::fs::create_dir(d.join("m")).unwrap();
        std::fs::write(d.join("m/main.tf"), MODULE_CHILD).unwrap();
        let rc = empty_rc(d);
        let init = terrane(d, &rc, &[], &["init"]);
        assert_eq!(init.code, 0, "{name}: {}{}", init.stdout, init.stderr);
        let ours = terrane(d, &rc, &[], &["plan", "-json", "-defer=false"]);
        assert_eq!(ours.code, 1, "{name}: {}{}", ours.stdout, ours.stderr);
        let got = diagnostics(&ours.stdout);
        assert!(!got.is_empty(), "{name}: {}", ours.stdout);
        // Nothing was written: no state at all.
        let listed = terrane(d, &rc, &[], &["state", "list"]);
        assert_eq!(listed.stdout.trim(), "", "{name}");
        // By default the same configuration plans (partially).
        let default = terrane(d, &rc, &[], &["plan", "-json"]);
        assert_eq!(
            default.code, 0,
            "{name}: {}{}",
            default.stdout, default.stderr
        );
        let Some(tf) = &tf else {
            continue;
        };
        let rc_text = rc.as_str();
        let env = [("TF_CLI_CONFIG_FILE", rc_text), ("CHECKPOINT_DISABLE", "1")];
        let init = tf.run(d, &["init", "-input=false"], &env);
        assert_eq!(
            init.code, 0,
            "{name}: terraform init {}{}",
            init.stdout, init.stderr
        );
        let theirs = tf.run(d, &["plan", "-json", "-input=false"], &env);
        assert_eq!(theirs.code, 1, "{name}: terraform {}", theirs.stdout);
        assert_eq!(got, diagnostics(&theirs.stdout), "{name}");
    }
}

const PROVIDER_HEAD: &str = r#"terraform {
  required_providers {
    defer = { source = "example.com/terrane/defer" }
  }
}
"#;

#[test]
fn item4_provider_deferred_answer_is_honoured() {
    let fixture = terrane_testkit::fixture("terrane-defer-fixture");
    let rcdir = terrane_testkit::temp_dir();
    let rc =
        terrane_testkit::dev_overrides(rcdir.path(), &[("example.com/terrane/defer", &fixture)]);
    let dir = terrane_testkit::temp_dir();
    let d = dir.path();
    let log = d.join("calls.log");
    let log_text = log.display().to_string();
    let env = [("TERRANE_DEFER_LOG", log_text.as_str())];
    let config = |wait: &str| {
        format!(
            r#"{PROVIDER_HEAD}
resource "defer_thing" "now" {{
  value = "a"
}}

resource "defer_thing" "wait" {{
  value = "{wait}"
}}

resource "defer_thing" "after" {{
  value = defer_thing.wait.id
}}
"#
        )
    };
    std::fs::write(d.join("main.tf"), config("later")).unwrap();
    check(
        "provider_deferred",
        d,
        &rc,
        &env,
        &[
            Step {
                args: &["plan", "-detailed-exitcode", "-out=p"],
                code: 2,
                holds: &[
                    "Plan: 1 to add,",
                    "defer_thing.wait (resource_config_unknown): the provider deferred it in PlanResourceChange",
                    "defer_thing.after (deferred_prereq): it depends on defer_thing.wait, which is deferred",
                ],
                lacks: &["# defer_thing.wait"],
                state: &[],
            },
            Step {
                args: &["apply", "p"],
                code: 0,
                holds: &["Resources: 1 added"],
                lacks: &[],
                state: &["defer_thing.now"],
            },
        ],
    );
    let j = show_json(d, &rc, "p");
    assert_eq!(
        deferred_of(&j),
        [
            "defer_thing.after deferred_prereq",
            "defer_thing.wait resource_config_unknown"
        ],
        "{j}"
    );
    // The capability was sent: the provider saw deferral allowed.
    let calls = std::fs::read_to_string(&log).unwrap();
    assert!(calls.contains("defer_thing later allowed=true"), "{calls}");
    assert!(!calls.contains("allowed=false"), "{calls}");
    // Strict: the provider is told it may not defer, and plans normally.
    std::fs::remove_file(&log).unwrap();
    let strict = terrane(d, &rc, &env, &["plan", "-defer=false"]);
    assert_eq!(strict.code, 0, "{}{}", strict.stdout, strict.stderr);
    assert!(
        strict.stdout.contains("# defer_thing.wait will be created"),
        "{}",
        strict.stdout
    );
    let calls = std::fs::read_to_string(&log).unwrap();
    assert!(calls.contains("defer_thing later allowed=false"), "{calls}");
    // Once the provider stops deferring, the rest is planned and applied.
    std::fs::write(d.join("main.tf"), config("ready")).unwrap();
    let all = ["defer_thing.after", "defer_thing.now", "defer_thing.wait"];
    check(
        "provider_ready",
        d,
        &rc,
        &env,
        &[
            Step {
                args: &["apply", "-auto-approve"],
                code: 0,
                holds: &["Resources: 2 added, 0 changed, 0 destroyed."],
                lacks: &["Deferred changes:"],
                state: &all,
            },
            Step {
                args: &["plan", "-detailed-exitcode"],
                code: 0,
                holds: &["No changes."],
                lacks: &[],
                state: &all,
            },
        ],
    );
}

/// A provider's Deferred answer to ReadDataSource and ImportResourceState
/// (issue 21 item 4): the data source and the imported resource wait, and
/// what reads the data source waits with it; the rest is planned and
/// applied. Once the provider answers, the next plan reads, imports and
/// creates the rest. `-defer=false` sends no permission, and the provider
/// answers normally.
#[test]
fn item4_provider_deferred_read_and_import() {
    let fixture = terrane_testkit::fixture("terrane-defer-fixture");
    let rcdir = terrane_testkit::temp_dir();
    let rc =
        terrane_testkit::dev_overrides(rcdir.path(), &[("example.com/terrane/defer", &fixture)]);
    let dir = terrane_testkit::temp_dir();
    let d = dir.path();
    let log = d.join("calls.log");
    let log_text = log.display().to_string();
    let env = [("TERRANE_DEFER_LOG", log_text.as_str())];
    let config = |key: &str, id: &str| {
        format!(
            r#"{PROVIDER_HEAD}
data "defer_lookup" "l" {{
  key = "{key}"
}}

resource "defer_thing" "uses" {{
  value = data.defer_lookup.l.value
}}

resource "defer_thing" "now" {{
  value = "a"
}}

import {{
  to = defer_thing.imp
  id = "{id}"
}}

resource "defer_thing" "imp" {{
  value = "b"
}}
"#
        )
    };
    std::fs::write(d.join("main.tf"), config("later", "later-b")).unwrap();
    check(
        "read_and_import_deferred",
        d,
        &rc,
        &env,
        &[
            Step {
                args: &["plan", "-detailed-exitcode", "-out=p"],
                code: 2,
                holds: &[
                    "Plan: 1 to add,",
                    "data.defer_lookup.l (absent_prereq): the provider deferred it in ReadDataSource",
                    "defer_thing.uses (deferred_prereq): it depends on data.defer_lookup.l, which is deferred",
                    "defer_thing.imp (resource_config_unknown): the provider deferred it in ImportResourceState",
                ],
                lacks: &["# defer_thing.uses", "# defer_thing.imp"],
                state: &[],
            },
            Step {
                args: &["apply", "p"],
                code: 0,
                holds: &["Resources: 1 added"],
                lacks: &[],
                state: &["defer_thing.now"],
            },
        ],
    );
    let j = show_json(d, &rc, "p");
    assert_eq!(
        deferred_of(&j),
        [
            "data.defer_lookup.l absent_prereq",
            "defer_thing.imp resource_config_unknown",
            "defer_thing.uses deferred_prereq",
        ],
        "{j}"
    );
    // Strict: no permission is sent, and the provider answers.
    std::fs::remove_file(&log).unwrap();
    let strict = terrane(d, &rc, &env, &["plan", "-defer=false"]);
    assert_eq!(strict.code, 0, "{}{}", strict.stdout, strict.stderr);
    let calls = std::fs::read_to_string(&log).unwrap();
    assert!(
        calls.contains("defer_lookup later allowed=false"),
        "{calls}"
    );
    assert!(calls.contains("import later-b allowed=false"), "{calls}");
    // Once the provider answers, everything is read, imported and created.
    std::fs::write(d.join("main.tf"), config("ready", "id-b")).unwrap();
    let all = [
        "data.defer_lookup.l",
        "defer_thing.imp",
        "defer_thing.now",
        "defer_thing.uses",
    ];
    check(
        "read_and_import_ready",
        d,
        &rc,
        &env,
        &[
            Step {
                args: &["apply", "-auto-approve"],
                code: 0,
                holds: &["Resources: 1 imported, 1 added, 0 changed, 0 destroyed."],
                lacks: &["Deferred changes:"],
                state: &all,
            },
            Step {
                args: &["plan", "-detailed-exitcode"],
                code: 0,
                holds: &["No changes."],
                lacks: &[],
                state: &all,
            },
        ],
    );
}
