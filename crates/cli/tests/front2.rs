//! Issue 14's and issue 20's last front-end items, side by side with real
//! Terraform where it can run: test files loaded (item 1), the "Diff:"
//! block of a failed assertion (item 6), the terminal's width (item 8),
//! measured in a real terminal (tmux).

use std::path::Path;
use terrane_testkit::{isolated, temp_dir, terraform, Out};

/// `PROGRAM ARGS` in `dir` with an empty CLI configuration.
fn run(program: &Path, dir: &Path, args: &[&str]) -> Out {
    let cli = dir.join("cli.tfrc");
    std::fs::write(&cli, "").unwrap();
    isolated(program, dir)
        .args(args)
        .env("TF_CLI_CONFIG_FILE", &cli)
        .output()
        .expect("the program runs")
        .into()
}

/// A copy of the test fixture `crates/cli/tests/NAME` in a new temporary
/// directory.
fn fixture_copy(name: &str) -> tempfile::TempDir {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(name);
    let dir = temp_dir();
    copy_tree(&src, dir.path());
    dir
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

/// Runs `args` with terrane and, when it is set up, with Terraform, each
/// in its own copy of `files`; checks `check` on terrane's result and that
/// both printed the same (exit code, stdout, stderr).
fn both(
    case: &str,
    files: &[(&str, &str)],
    fixture: Option<&str>,
    args: &[&str],
    check: impl Fn(&Out),
) {
    let setup = || {
        let dir = match fixture {
            Some(f) => fixture_copy(f),
            None => temp_dir(),
        };
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        dir
    };
    // A fixture with child modules is initialised first.
    let init = |program: &Path, dir: &Path| {
        if dir.join("child").exists() {
            let o = run(program, dir, &["init", "-no-color"]);
            assert_eq!(o.code, 0, "case {case}: init: {o:?}");
        }
    };
    let ours_dir = setup();
    let terrane = Path::new(env!("CARGO_BIN_EXE_terrane"));
    init(terrane, ours_dir.path());
    let ours = run(terrane, ours_dir.path(), args);
    check(&ours);
    if let Some(tf) = terraform() {
        let theirs_dir = setup();
        init(&tf.program, theirs_dir.path());
        let theirs = run(&tf.program, theirs_dir.path(), args);
        assert_eq!(
            ours.code, theirs.code,
            "case {case}: exit code\n{ours:?}\n{theirs:?}"
        );
        assert_eq!(ours.stdout, theirs.stdout, "case {case}: stdout");
        assert_eq!(ours.stderr, theirs.stderr, "case {case}: stderr");
    }
}

/// Item 1: `terrane test` loads every test file before running any, as
/// Terraform does: a duplicate run name is Terraform's error, nothing runs.
#[test]
fn item1_test_refuses_duplicate_run_names() {
    both(
        "duplicate_run",
        &[
            ("main.tf", "variable \"x\" {\n  default = 1\n}\n"),
            (
                "a.tftest.hcl",
                "run \"same\" {\n  command = plan\n}\n\nrun \"same\" {}\n",
            ),
        ],
        None,
        &["test", "-no-color"],
        |o| {
            assert_eq!(o.code, 1, "{o:?}");
            assert!(
                o.stderr.contains("Error: Duplicate \"run\" block names"),
                "{o:?}"
            );
            assert!(!o.stdout.contains("in progress"), "nothing runs: {o:?}");
        },
    );
}

/// Item 6: a failed assertion whose condition is a binary operation shows
/// Terraform's box: the type warning, and the "Diff:" of the two operands
/// as indented JSON (sensitive parts hidden), lines paired as Terraform
/// pairs them; the whole output equal to `terraform test`'s.
#[test]
fn item6_failed_equality_prints_terraforms_diff() {
    both(
        "diff",
        &[],
        Some("tftest_diff"),
        &["test", "-no-color"],
        |o| {
            assert_eq!(o.code, 1, "{o:?}");
            for want in [
            "    │ Diff:\n    │ --- actual\n    │ +++ expected\n    │ - \"hello\"\n    │ + \"world\"\n\n\nx is wrong",
            "    │ Warning: LHS and RHS values are of different types\n    │ Diff:",
            "    │ - \"(sensitive value)\"",
            "    │ - \"\\u003ca\\u0026b\\u003ehello\"",
        ] {
            assert!(o.stderr.contains(want), "missing {want:?} in:\n{}", o.stderr);
        }
            assert!(!o.stderr.contains("secret"), "a sensitive value leaked");
        },
    );
}

/// What differs between two runs by design: the UUIDs terraform_data
/// makes, and the product's name where the plan names it (a shorter name
/// wraps the plan's first sentence one word later).
fn comparable(s: &str) -> String {
    let is_uuid = |w: &[u8]| {
        w.len() == 36
            && w.iter().enumerate().all(|(i, c)| match i {
                8 | 13 | 18 | 23 => *c == b'-',
                _ => c.is_ascii_hexdigit(),
            })
    };
    let b = s.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        if i + 36 <= b.len() && is_uuid(&b[i..i + 36]) {
            out.push_str("<uuid>");
            i += 36;
        } else {
            let c = s[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out.replace("terrane used the selected", "Terraform used the selected")
        .replace("terrane will perform", "Terraform will perform")
        .replace(
            "following execution\nplan. Resource actions",
            "following execution plan.\nResource actions",
        )
        .replace(
            "terrane has compared your real infrastructure against your configuration and\nfound",
            "Terraform has compared your real infrastructure against your configuration\nand found",
        )
}

/// Issue 20, `test -verbose`: under each run, the plan of a plan run and
/// the state of an apply run, printed as Terraform prints them (a plan
/// with changes and outputs, an update, a run that changes nothing, and a
/// failed assertion, which shows its state too); a failed assertion's box
/// also shows both operands and the values the condition read.
#[test]
fn item4_test_verbose_prints_plans_and_states_as_terraform() {
    let files: &[(&str, &str)] = &[
        (
            "main.tf",
            "variable \"name\" {\n  type    = string\n  default = \"x\"\n}\n\nresource \"terraform_data\" \"a\" {\n  input = var.name\n}\n\noutput \"o\" {\n  value = terraform_data.a.output\n}\n\noutput \"secret\" {\n  value     = \"s3cret\"\n  sensitive = true\n}\n\noutput \"m\" {\n  value = { a = var.name, b = [1] }\n}\n",
        ),
        (
            "a.tftest.hcl",
            "run \"plan_it\" {\n  command = plan\n  assert {\n    condition     = terraform_data.a.input == \"x\"\n    error_message = \"bad input\"\n  }\n}\n\nrun \"apply_it\" {\n  variables {\n    name = \"y\"\n  }\n}\n\nrun \"update\" {\n  command = plan\n  variables {\n    name = \"z\"\n  }\n}\n\nrun \"same_again\" {\n  variables {\n    name = \"y\"\n  }\n}\n\nrun \"wrong\" {\n  assert {\n    condition     = output.o == \"nope\"\n    error_message = \"o is not nope\"\n  }\n}\n\nrun \"wrong_map\" {\n  command = plan\n  assert {\n    condition     = output.m == { a = \"q\", b = [1] } && output.secret != \"\"\n    error_message = \"m is not q\"\n  }\n}\n",
        ),
    ];
    let setup = || {
        let dir = temp_dir();
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        dir
    };
    let args = ["test", "-verbose", "-no-color"];
    let ours_dir = setup();
    let ours = run(
        Path::new(env!("CARGO_BIN_EXE_terrane")),
        ours_dir.path(),
        &args,
    );
    assert_eq!(ours.code, 1, "the last run fails: {ours:?}");
    for want in [
        "  run \"plan_it\"... pass\n\nterrane used the selected providers",
        "  + input  = \"x\"",
        "# terraform_data.a:\nresource \"terraform_data\" \"a\" {",
        "secret = (sensitive value)",
        "  ~ input  = \"y\" -> \"z\"",
        "  run \"wrong\"... fail\n\n# terraform_data.a:",
    ] {
        assert!(
            ours.stdout.contains(want),
            "missing {want:?} in:\n{}",
            ours.stdout
        );
    }
    assert!(!ours.stdout.contains("s3cret"), "a sensitive output leaked");
    if let Some(tf) = terraform() {
        let theirs_dir = setup();
        let theirs = run(&tf.program, theirs_dir.path(), &args);
        assert_eq!(ours.code, theirs.code, "exit code\n{ours:?}\n{theirs:?}");
        assert_eq!(
            comparable(&ours.stdout),
            comparable(&theirs.stdout),
            "stdout"
        );
        assert_eq!(ours.stderr, theirs.stderr, "stderr");
    }
}

/// A tmux server of this test's own (its own socket), killed on drop.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn run(&self, args: &[&str]) -> std::process::Output {
        std::process::Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux runs")
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

/// Runs `program ARGS` in `dir` in a terminal `width` columns wide (no
/// `COLUMNS` in its environment) and returns what the terminal shows once
/// it is done.
fn in_terminal(tool: &str, dir: &Path, program: &str, args: &str, width: u16) -> String {
    let tmux = Tmux {
        socket: format!("terrane-front2-{tool}-{width}-{}", std::process::id()),
    };
    let ended = dir.join("ended");
    let _ = std::fs::remove_file(&ended);
    let script = format!(
        "cd {dir} && env -u COLUMNS -u TF_DATA_DIR -u TF_CLI_ARGS TF_CLI_CONFIG_FILE={dir}/cli.tfrc CHECKPOINT_DISABLE=1 {program} {args}; echo $? > {dir}/ended; sleep 30",
        dir = dir.display()
    );
    let w = width.to_string();
    let started = tmux.run(&[
        "new-session",
        "-d",
        "-s",
        "c",
        "-x",
        &w,
        "-y",
        "50",
        &script,
    ]);
    assert!(started.status.success(), "{tool}: tmux: {started:?}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !ended.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(ended.exists(), "{tool} did not finish in the terminal");
    let pane = tmux.run(&["capture-pane", "-p", "-t", "c", "-S", "-50"]);
    String::from_utf8_lossy(&pane.stdout)
        .lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_string()
}

/// An error whose detail is longer than 78 columns.
const LONG_DETAIL: &str = r#"output "o" {
  value = var.an_input_variable_that_nobody_declared
}
"#;

/// Item 8: diagnostics are wrapped to the terminal's own width (asked of
/// the terminal, not taken from `COLUMNS`, which is unset here), exactly
/// as Terraform wraps them, for a narrow and a wide terminal.
#[test]
fn item8_terminal_width_asked_of_the_terminal() {
    if std::process::Command::new("tmux")
        .arg("-V")
        .output()
        .is_err()
    {
        terrane_testkit::skip("tmux is not installed");
        return;
    }
    for width in [60u16, 140] {
        let ours = temp_dir();
        let theirs = temp_dir();
        let mut shown = Vec::new();
        let mut tools = vec![(
            "terrane",
            ours.path(),
            env!("CARGO_BIN_EXE_terrane").to_string(),
        )];
        if let Some(tf) = terraform() {
            tools.push(("terraform", theirs.path(), tf.program.display().to_string()));
        }
        for (tool, dir, program) in tools {
            std::fs::write(dir.join("main.tf"), LONG_DETAIL).unwrap();
            std::fs::write(dir.join("cli.tfrc"), "").unwrap();
            let pane = in_terminal(tool, dir, &program, "validate -no-color", width);
            let longest = pane.lines().map(|l| l.chars().count()).max().unwrap_or(0);
            assert!(
                longest <= usize::from(width),
                "case {tool} {width}: wider than the terminal:\n{pane}"
            );
            if width > 100 {
                assert!(
                    longest > 78,
                    "case {tool} {width}: wrapped as if the terminal were 78 wide:\n{pane}"
                );
            }
            shown.push((tool, pane));
        }
        if let [(_, ours), (_, theirs)] = shown.as_slice() {
            assert_eq!(ours, theirs, "case {width}: terrane and terraform differ");
        }
    }
}

const OUTPUT_TYPES: &str = r#"variable "v" {
  default = "12"
}

output "a" {
  type  = number
  value = var.v
}

output "b" {
  type  = list(string)
  value = [1, true]
}

output "c" {
  type  = object({ x = number, y = optional(string, "d") })
  value = { x = "5" }
}
"#;

/// Item 2: an output's `type` converts its value at plan and apply
/// (optional attributes' defaults filled in): what apply records, read
/// back with `output -json`, is Terraform's; a value that does not
/// conform is Terraform's "Invalid output value" at the value.
#[test]
fn item2_output_type_converts_at_plan_and_apply() {
    let dir = temp_dir();
    std::fs::write(dir.path().join("main.tf"), OUTPUT_TYPES).unwrap();
    let terrane = Path::new(env!("CARGO_BIN_EXE_terrane"));
    let applied = run(
        terrane,
        dir.path(),
        &["apply", "-auto-approve", "-no-color"],
    );
    assert_eq!(applied.code, 0, "{applied:?}");
    let ours = run(terrane, dir.path(), &["output", "-json"]);
    let got: serde_json::Value = serde_json::from_str(&ours.stdout).expect("output -json");
    for (name, want) in [
        ("a", serde_json::json!(12)),
        ("b", serde_json::json!(["1", "true"])),
        ("c", serde_json::json!({"x": 5, "y": "d"})),
    ] {
        assert_eq!(got[name]["value"], want, "case {name}");
    }
    if let Some(tf) = terraform() {
        let theirs_dir = temp_dir();
        std::fs::write(theirs_dir.path().join("main.tf"), OUTPUT_TYPES).unwrap();
        let applied = run(&tf.program, theirs_dir.path(), &["apply", "-auto-approve"]);
        assert_eq!(applied.code, 0, "{applied:?}");
        let theirs = run(&tf.program, theirs_dir.path(), &["output", "-json"]);
        let theirs: serde_json::Value = serde_json::from_str(&theirs.stdout).unwrap();
        assert_eq!(got, theirs, "case output_json");
    }
    let bad = OUTPUT_TYPES.replace("default = \"12\"", "default = \"abc\"");
    let dir = temp_dir();
    std::fs::write(dir.path().join("main.tf"), &bad).unwrap();
    let planned = run(terrane, dir.path(), &["plan", "-no-color"]);
    assert_eq!(planned.code, 1, "{planned:?}");
    assert!(
        planned.stderr.contains("Error: Invalid output value\n\n  on main.tf line 7, in output \"a\":")
            && planned.stderr.contains("The value expression does not match this output value's type constraint: a\nnumber is required."),
        "{}",
        planned.stderr
    );
}

/// Item 7: `metadata functions -json` lists every function Terraform
/// lists (their signatures are compared one by one in cmdline_more's
/// `item2_metadata_functions_json_as_in_terraform`); the last ones,
/// `convert`, `plantimestamp` and `rsadecrypt`, came with issue 20's
/// last items (front3.rs).
#[test]
fn item7_metadata_functions_cover_terraforms() {
    let Some(tf) = terraform() else {
        return;
    };
    let dir = temp_dir();
    let names = |out: &Out| -> std::collections::BTreeSet<String> {
        let j: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
        j["function_signatures"]
            .as_object()
            .unwrap()
            .keys()
            .filter(|k| !k.contains("::"))
            .cloned()
            .collect()
    };
    let args = ["metadata", "functions", "-json"];
    let ours = names(&run(
        Path::new(env!("CARGO_BIN_EXE_terrane")),
        dir.path(),
        &args,
    ));
    let theirs = names(&run(&tf.program, dir.path(), &args));
    let missing: Vec<&String> = theirs.difference(&ours).collect();
    assert!(
        missing.is_empty(),
        "functions Terraform has and terrane does not: {missing:?}"
    );
}

/// Item 5: `override_module` in a test file and in a run block: the
/// module's outputs are the given ones (an output not given is null), at
/// plan and apply, and the same runs pass as in `terraform test`; without
/// the file's override the same assertions fail (the module's real
/// outputs).
#[test]
fn item5_override_module_file_and_run_level() {
    both(
        "override_module",
        &[],
        Some("tftest_override_module"),
        &["test", "-no-color"],
        |o| {
            assert_eq!(o.code, 0, "{o:?}");
            assert!(o.stdout.contains("Success! 3 passed, 0 failed."), "{o:?}");
        },
    );
    let dir = fixture_copy("tftest_override_module");
    let text = std::fs::read_to_string(dir.path().join("a.tftest.hcl")).unwrap();
    let file_level =
        "override_module {\n  target = module.child\n  outputs = {\n    name = \"fake\"\n  }\n}\n";
    assert!(
        text.starts_with(file_level),
        "the fixture starts with its file-level override"
    );
    std::fs::write(dir.path().join("a.tftest.hcl"), &text[file_level.len()..]).unwrap();
    let terrane = Path::new(env!("CARGO_BIN_EXE_terrane"));
    assert_eq!(run(terrane, dir.path(), &["init", "-no-color"]).code, 0);
    let o = run(terrane, dir.path(), &["test", "-no-color"]);
    assert_eq!(o.code, 1, "{o:?}");
    assert!(o.stdout.contains("run \"file_level\"... fail"), "{o:?}");
    assert!(o.stdout.contains("run \"run_level\"... pass"), "{o:?}");
}
