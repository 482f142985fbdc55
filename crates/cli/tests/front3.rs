//! Issue 20's last items, side by side with real Terraform where it can
//! run: `plantimestamp` (item 1: the plan's time, the same at apply,
//! unknown at validate, not in the console), `type` only in the console,
//! and `terrane test` runs naming a local module (`module { source }`)
//! with Terraform's teardown order (item 2).

use std::path::Path;
use terrane_testkit::{isolated, temp_dir, terraform, Out};

/// `PROGRAM ARGS` in `dir` with an empty CLI configuration.
fn run(program: &Path, dir: &Path, args: &[&str]) -> Out {
    run_in(program, dir, args, "")
}

fn run_in(program: &Path, dir: &Path, args: &[&str], stdin: &str) -> Out {
    use std::io::Write;
    let cli = dir.join("cli.tfrc");
    std::fs::write(&cli, "").unwrap();
    let mut child = isolated(program, dir)
        .args(args)
        .env("TF_CLI_CONFIG_FILE", &cli)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the program runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap().into()
}

fn terrane() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_terrane"))
}

fn copy_tree(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let target = to.join(p.file_name().unwrap());
        if p.is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_tree(&p, &target);
        } else {
            std::fs::copy(&p, target).unwrap();
        }
    }
}

fn json(o: &Out) -> serde_json::Value {
    serde_json::from_str(&o.stdout).unwrap_or_else(|e| panic!("JSON: {e}: {o:?}"))
}

const PLAN_TIME: &str = r#"resource "terraform_data" "d" {
  input = plantimestamp()
}

output "t" {
  value = plantimestamp()
}

output "year" {
  value = formatdate("YYYY", plantimestamp())
}
"#;

/// What one tool does with PLAN_TIME: the plan's timestamp (from `show
/// -json`), the planned output, and after a pause the applied output and
/// resource input.
fn plan_time_round(program: &Path) -> [String; 4] {
    let dir = temp_dir();
    std::fs::write(dir.path().join("main.tf"), PLAN_TIME).unwrap();
    let d = dir.path();
    assert_eq!(run(program, d, &["init", "-no-color"]).code, 0);
    let v = run(program, d, &["validate", "-json"]);
    assert_eq!(v.code, 0, "case validate_unknown: {v:?}");
    let p = run(program, d, &["plan", "-no-color", "-out=p.plan"]);
    assert_eq!(p.code, 0, "{p:?}");
    let shown = json(&run(program, d, &["show", "-json", "p.plan"]));
    // Whole seconds: the apply a second later must still see the plan's.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let a = run(program, d, &["apply", "-no-color", "p.plan"]);
    assert_eq!(a.code, 0, "{a:?}");
    let outs = json(&run(program, d, &["output", "-json"]));
    let state = json(&run(program, d, &["show", "-json"]));
    let input = &state["values"]["root_module"]["resources"][0]["values"]["input"];
    [
        shown["timestamp"].as_str().unwrap_or("<none>").to_string(),
        shown["planned_values"]["outputs"]["t"]["value"]
            .as_str()
            .unwrap_or("<none>")
            .to_string(),
        outs["t"]["value"].as_str().unwrap_or("<none>").to_string(),
        input.as_str().unwrap_or("<none>").to_string(),
    ]
}

/// Item 1: `plantimestamp()` is the plan's time: in the saved plan (its
/// `timestamp`), in the planned output, and the same at apply a second
/// later; validate sees an unknown and passes. As in Terraform.
#[test]
fn item1_plantimestamp_fixed_between_plan_and_apply() {
    let check = |tool: &str, got: [String; 4]| {
        let [stamp, planned, applied, input] = &got;
        assert!(chrono_like(stamp), "case {tool}_stamp_is_rfc3339: {got:?}");
        assert_eq!(planned, stamp, "case {tool}_planned_output");
        assert_eq!(applied, stamp, "case {tool}_applied_output");
        assert_eq!(input, stamp, "case {tool}_resource_input");
    };
    check("terrane", plan_time_round(terrane()));
    if let Some(tf) = terraform() {
        check("terraform", plan_time_round(&tf.program));
    }
}

/// `2026-11-26T00:15:49Z`: RFC 3339, UTC, whole seconds.
fn chrono_like(s: &str) -> bool {
    let b = s.as_bytes();
    s.len() == 20
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && b[16] == b':'
        && b[19] == b'Z'
        && s.chars()
            .enumerate()
            .all(|(i, c)| [4, 7, 10, 13, 16, 19].contains(&i) || c.is_ascii_digit())
}

/// Item 1: `plantimestamp` is not a console function and `type` is only
/// one: the same answers as Terraform's, in the console and in
/// `validate -json` (summary, detail, place).
#[test]
fn item1_console_only_and_plan_only_functions() {
    let cases: &[(&str, &str, &str)] = &[
        ("plantimestamp_in_console", "plantimestamp()\n", ""),
        (
            "type_in_console",
            "type([1, \"a\"])\n",
            "tuple([\n    number,\n    string,\n])\n",
        ),
        (
            "type_nested",
            "type(tomap({ a = { b = 1 } }))\n",
            "map(\n    object({\n        b: number,\n    }),\n)\n",
        ),
        ("type_of_null", "type(null)\n", "dynamic\n"),
        (
            "convert_in_console",
            "convert({ a = 1 }, object({ a = string }))\n",
            "{\n  \"a\" = \"1\"\n}\n",
        ),
    ];
    for (case, input, want) in cases {
        let dir = temp_dir();
        std::fs::write(dir.path().join("main.tf"), "").unwrap();
        let ours = run_in(terrane(), dir.path(), &["console", "-no-color"], input);
        assert_eq!(&ours.stdout, want, "case {case}: {ours:?}");
        if want.is_empty() {
            assert!(
                ours.stderr
                    .contains("There is no function named \"plantimestamp\"."),
                "case {case}: {ours:?}"
            );
        }
        if let Some(tf) = terraform() {
            let theirs = run_in(&tf.program, dir.path(), &["console", "-no-color"], input);
            assert_eq!(
                (ours.code, &ours.stdout),
                (theirs.code, &theirs.stdout),
                "case {case}: {ours:?}\n{theirs:?}"
            );
        }
    }
    let dir = temp_dir();
    std::fs::write(
        dir.path().join("main.tf"),
        "output \"a\" {\n  value = type(1)\n}\n",
    )
    .unwrap();
    let diags = |o: &Out| -> Vec<String> {
        json(o)["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                format!(
                    "{} | {} | {}:{}",
                    d["summary"].as_str().unwrap(),
                    d["detail"].as_str().unwrap(),
                    d["range"]["start"]["line"],
                    d["range"]["start"]["column"]
                )
            })
            .collect()
    };
    let ours = diags(&run(terrane(), dir.path(), &["validate", "-json"]));
    assert_eq!(
        ours,
        ["Call to unknown function | There is no function named \"type\". | 2:11"],
        "case type_outside_console"
    );
    if let Some(tf) = terraform() {
        let theirs = diags(&run(&tf.program, dir.path(), &["validate", "-json"]));
        assert_eq!(ours, theirs, "case type_outside_console_as_terraform");
    }
}

/// Item 2: a run's `module { source = "./setup" }` plans or applies that
/// module in a state of its own (kept between its runs, its outputs
/// reachable as `run.NAME.OUTPUT`), and the teardown destroys the state
/// used last first, as Terraform does: the destroy-time provisioners log
/// "bucket, app" for a file whose last run used the module and "app,
/// bucket" for one whose last run used the working directory. Output and
/// logs equal to `terraform test`'s.
#[test]
fn item2_run_module_source_and_teardown_order() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tftest_module_run");
    let round = |program: &Path| {
        let dir = temp_dir();
        copy_tree(&fixture, dir.path());
        assert_eq!(run(program, dir.path(), &["init", "-no-color"]).code, 0);
        let o = run(program, dir.path(), &["test", "-no-color"]);
        let log = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap_or_default();
        (o, log("teardown-t.log"), log("teardown-u.log"))
    };
    let (ours, t, u) = round(terrane());
    assert_eq!(ours.code, 1, "{ours:?}");
    for line in [
        "  run \"setup\"... pass",
        "  run \"app\"... pass",
        "  run \"setup_plan\"... pass",
        "  run \"setup_fails\"... fail",
        "Failure! 5 passed, 1 failed.",
    ] {
        assert!(ours.stdout.contains(line), "case line {line:?}: {ours:?}");
    }
    assert!(
        ours.stderr.contains("a failing assertion in a module run"),
        "case module_assertion: {ours:?}"
    );
    assert_eq!(t, "bucket\napp\n", "case module_used_last_goes_first");
    assert_eq!(u, "app\nbucket\n", "case root_used_last_goes_first");
    if let Some(tf) = terraform() {
        let (theirs, tt, tu) = round(&tf.program);
        assert_eq!(ours.code, theirs.code, "case exit_code");
        assert_eq!(ours.stdout, theirs.stdout, "case stdout");
        assert_eq!(ours.stderr, theirs.stderr, "case stderr");
        assert_eq!((t, u), (tt, tu), "case teardown_logs");
    }
}

/// Item 2: a registry module in a run that `init` has not installed is
/// refused with a clear diagnostic naming the source, never ignored;
/// nothing runs (installed, it runs: modules.rs
/// `registry_module_in_a_test_run`).
#[test]
fn item2_run_module_registry_source_not_installed() {
    let dir = temp_dir();
    std::fs::write(dir.path().join("main.tf"), "").unwrap();
    std::fs::write(
        dir.path().join("a.tftest.hcl"),
        "run \"r\" {\n  module {\n    source = \"hashicorp/consul/aws\"\n  }\n}\n",
    )
    .unwrap();
    let o = run(terrane(), dir.path(), &["test", "-no-color"]);
    assert_eq!(o.code, 1, "{o:?}");
    assert!(
        o.stderr.contains("Error: Module not installed")
            && o.stderr.contains("(hashicorp/consul/aws)"),
        "{o:?}"
    );
    assert!(!o.stdout.contains("... pass"), "{o:?}");
}

/// Item 1: `convert`, `rsadecrypt` and `plantimestamp` answer in the
/// console as in Terraform's: each expression alone, exit code, stdout and
/// stderr equal (errors included, in Terraform's words).
#[test]
fn item1_new_functions_in_the_console_as_terraform() {
    let keys = Path::new(env!("CARGO_MANIFEST_DIR")).join("../eval/tests/corpus/files");
    // "Hello, terrane!" encrypted to the corpus's test key.
    let ciphertext = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../eval/src/func/rsadecrypt_tests.rs"),
    )
    .unwrap()
    .lines()
    .find_map(|l| l.strip_prefix("const CIPHERTEXT: &str = \""))
    .and_then(|l| l.strip_suffix("\";"))
    .expect("the ciphertext constant")
    .to_string();
    let cases: Vec<(&str, String, &str)> = vec![
        ("convert_number", "convert(\"1\", number)".into(), "1\n"),
        (
            "convert_optional_default",
            "convert({}, object({ a = optional(string, \"d\") }))".into(),
            "{\n  \"a\" = \"d\"\n}\n",
        ),
        (
            "convert_null",
            "convert(null, list(string))".into(),
            "tolist(null) /* of string */\n",
        ),
        ("convert_not_a_number", "convert(\"x\", number)".into(), ""),
        ("convert_kind_mismatch", "convert(true, number)".into(), ""),
        (
            "convert_missing_attribute",
            "convert({ a = 1 }, object({ a = number, b = string }))".into(),
            "",
        ),
        (
            "convert_tuple_length",
            "convert([1], tuple([number, string]))".into(),
            "",
        ),
        (
            "convert_map_element",
            "convert({ a = [1] }, map(string))".into(),
            "",
        ),
        ("convert_quoted_type", "convert(1, \"string\")".into(), ""),
        ("convert_one_argument", "convert(1)".into(), ""),
        ("plantimestamp", "plantimestamp()".into(), ""),
        (
            "rsadecrypt_pkcs1",
            format!("rsadecrypt(\"{ciphertext}\", file(\"rsa_pkcs1.pem\"))"),
            "\"Hello, terrane!\"\n",
        ),
        (
            "rsadecrypt_openssh",
            format!("rsadecrypt(\"{ciphertext}\", file(\"rsa_openssh.pem\"))"),
            "\"Hello, terrane!\"\n",
        ),
        (
            "rsadecrypt_bad_base64",
            "rsadecrypt(\"abc\", \"x\")".into(),
            "",
        ),
        (
            "rsadecrypt_passphrase",
            format!("rsadecrypt(\"{ciphertext}\", file(\"rsa_encrypted.pem\"))"),
            "",
        ),
        (
            "rsadecrypt_wrong_ciphertext",
            "rsadecrypt(\"AAAA\", file(\"rsa_pkcs1.pem\"))".into(),
            "",
        ),
    ];
    let dir = temp_dir();
    copy_tree(&keys, dir.path());
    std::fs::write(dir.path().join("main.tf"), "").unwrap();
    let tf = terraform();
    for (case, expr, want) in &cases {
        let input = format!("{expr}\n");
        let ours = run_in(terrane(), dir.path(), &["console", "-no-color"], &input);
        assert_eq!(&ours.stdout, want, "case {case}: {ours:?}");
        assert_eq!(
            ours.code,
            i32::from(want.is_empty()),
            "case {case}: {ours:?}"
        );
        if let Some(tf) = &tf {
            let theirs = run_in(&tf.program, dir.path(), &["console", "-no-color"], &input);
            assert_eq!(
                (ours.code, &ours.stdout, &ours.stderr),
                (theirs.code, &theirs.stdout, &theirs.stderr),
                "case {case}"
            );
        }
    }
}

const SLOW_APPLY: &str = r#"resource "terraform_data" "slow" {
  input = "x"

  provisioner "local-exec" {
    command = "echo started > started.txt; sleep 4"
  }
}
"#;

/// Item 2 (issue 20's `-lock-timeout` honoured; terrane gave up one pause
/// early, before the timeout had passed): while an apply holds the
/// state lock (its provisioner sleeps), a plan with a short
/// `-lock-timeout` fails with Terraform's "Error acquiring the state lock"
/// after waiting that long, and one with a long timeout waits for the
/// apply to finish and then plans. The same with Terraform (local state).
#[test]
fn item2_lock_timeout_honoured() {
    let round = |tool: &str, program: &Path| {
        let dir = temp_dir();
        let d = dir.path();
        std::fs::write(d.join("main.tf"), SLOW_APPLY).unwrap();
        std::fs::write(d.join("cli.tfrc"), "").unwrap();
        assert_eq!(run(program, d, &["init", "-no-color"]).code, 0);
        let mut apply = isolated(program, d)
            .args(["apply", "-auto-approve", "-no-color"])
            .env("TF_CLI_CONFIG_FILE", d.join("cli.tfrc"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let waited = std::time::Instant::now();
        while !d.join("started.txt").exists() {
            assert!(
                waited.elapsed() < std::time::Duration::from_secs(60),
                "case {tool}_apply_started"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let started = std::time::Instant::now();
        let short = run(program, d, &["plan", "-no-color", "-lock-timeout=1s"]);
        let short_took = started.elapsed();
        assert_eq!(short.code, 1, "case {tool}_short_timeout_fails: {short:?}");
        assert!(
            short
                .stderr
                .contains("Error: Error acquiring the state lock"),
            "case {tool}_short_timeout_words: {short:?}"
        );
        assert!(
            short_took >= std::time::Duration::from_millis(900),
            "case {tool}_short_timeout_waits: {short_took:?}"
        );
        let long = run(
            program,
            d,
            &[
                "plan",
                "-no-color",
                "-lock-timeout=60s",
                "-detailed-exitcode",
            ],
        );
        assert!(
            apply.wait().unwrap().success(),
            "case {tool}_apply_succeeds"
        );
        assert_eq!(
            long.code, 0,
            "case {tool}_long_timeout_waits_then_plans: {long:?}"
        );
    };
    round("terrane", terrane());
    if let Some(tf) = terraform() {
        round("terraform", &tf.program);
    }
}
