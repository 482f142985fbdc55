//! The rest of Terraform's command line (issue 20 leftovers), side by side
//! with real Terraform: `TF_DATA_DIR`, `metadata functions -json` and
//! `console`.

use std::path::Path;
use terrane_testkit::{fixture, isolated, temp_dir, terraform, Out};

/// `terrane ARGS` in `dir` with an empty CLI configuration, the given
/// environment and `input` on standard input.
fn terrane(dir: &Path, args: &[&str], env: &[(&str, &str)], input: &str) -> Out {
    use std::io::Write;
    let cli = dir.join("cli.tfrc");
    if !cli.exists() {
        std::fs::write(&cli, "").unwrap();
    }
    let mut cmd = isolated(env!("CARGO_BIN_EXE_terrane"), dir);
    cmd.args(args)
        .env("TF_CLI_CONFIG_FILE", &cli)
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().expect("terrane runs");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
    drop(stdin);
    child.wait_with_output().expect("terrane runs").into()
}

/// `terraform ARGS` in `dir`, as [`terrane`] runs terrane; `None` when real
/// Terraform is not set up (locally only: under CI that fails).
fn terraform_in(dir: &Path, args: &[&str], env: &[(&str, &str)], input: &str) -> Option<Out> {
    use std::io::Write;
    let tf = terraform()?;
    let cli = dir.join("cli.tfrc");
    if !cli.exists() {
        std::fs::write(&cli, "").unwrap();
    }
    let mut cmd = isolated(&tf.program, dir);
    cmd.args(args)
        .env("TF_CLI_CONFIG_FILE", &cli)
        .env("TF_IN_AUTOMATION", "1")
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().expect("terraform runs");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
    drop(stdin);
    Some(child.wait_with_output().expect("terraform runs").into())
}

const THING: &str = "terraform {\n  required_providers {\n    thing = {\n      source = \"acme/thing\"\n    }\n  }\n}\n\nprovider \"thing\" {}\n";

/// Places the fixture provider as an unpacked package of
/// `acme/thing` 0.1.0 under `root`.
fn package(root: &Path) {
    let dir = root.join(format!(
        "registry.terraform.io/acme/thing/0.1.0/{}",
        os_arch()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        fixture("terrane-plugin-fixture"),
        dir.join("terraform-provider-thing"),
    )
    .unwrap();
}

fn os_arch() -> String {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        a => a,
    };
    format!("{}_{arch}", std::env::consts::OS)
}

/// Item 1: with `TF_DATA_DIR`, the data directory (Terraform's, where
/// installed providers live) is that one. Terraform installs the provider
/// there at init (from a mirror); then, with no mirror configured, both
/// tools plan in that directory with the variable set, both fail without
/// it (the provider is nowhere else), and neither makes `.terraform`.
#[test]
fn item1_tf_data_dir_as_in_terraform() {
    let d = temp_dir();
    std::fs::write(d.path().join("main.tf"), THING).unwrap();
    package(&d.path().join("mirror"));
    std::fs::write(
        d.path().join("cli.tfrc"),
        format!(
            "provider_installation {{\n  filesystem_mirror {{\n    path = \"{}\"\n  }}\n}}\n",
            d.path().join("mirror").display()
        ),
    )
    .unwrap();
    let with = [("TF_DATA_DIR", "elsewhere/data")];
    let Some(init) = terraform_in(d.path(), &["init", "-no-color"], &with, "") else {
        return;
    };
    assert_eq!(
        init.code, 0,
        "terraform init: {}{}",
        init.stdout, init.stderr
    );
    // From now on the provider is found only through what Terraform
    // installed (a link into the mirror, which no configuration names).
    std::fs::write(d.path().join("cli.tfrc"), "").unwrap();
    let steps: &[(&str, bool, i32)] = &[("plan", true, 0), ("plan_without_data_dir", false, 1)];
    for (name, set, want) in steps {
        let env: &[(&str, &str)] = if *set { &with } else { &[] };
        let args = &["plan", "-no-color"];
        let t = terrane(d.path(), args, env, "");
        let tf = terraform_in(d.path(), args, env, "").expect("terraform ran above");
        for (tool, o) in [("terrane", &t), ("terraform", &tf)] {
            assert_eq!(
                o.code, *want,
                "case {name}: {tool} exit code\n{}{}",
                o.stdout, o.stderr
            );
        }
        assert!(
            !d.path().join(".terraform").exists(),
            "case {name}: a tool made .terraform"
        );
    }
}

/// The JSON document without its descriptions (terrane has none of
/// Terraform's prose).
fn without_descriptions(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(m) => {
            m.remove("description");
            m.values_mut().for_each(without_descriptions);
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(without_descriptions),
        _ => {}
    }
}

/// Item 2: every function terrane has is listed with Terraform's
/// signature (parameters, nullability, variadic parameter, result type),
/// under its name and `core::NAME`; none that Terraform lacks. Without
/// `-json` both refuse, exit 1.
#[test]
fn item2_metadata_functions_json_as_in_terraform() {
    let dir = temp_dir();
    let t = terrane(dir.path(), &["metadata", "functions", "-json"], &[], "");
    assert_eq!(t.code, 0, "case json: {}", t.stderr);
    let ours: serde_json::Value = serde_json::from_str(&t.stdout).expect("terrane's JSON");
    assert_eq!(ours["format_version"], "1.0", "case format_version");
    let bare = terrane(dir.path(), &["metadata", "functions"], &[], "");
    assert_eq!(bare.code, 1, "case without_json");
    assert!(
        bare.stderr.contains("requires the `-json` flag"),
        "case without_json: {}",
        bare.stderr
    );
    let Some(tf) = terraform_in(dir.path(), &["metadata", "functions", "-json"], &[], "") else {
        return;
    };
    assert_eq!(tf.code, 0, "case terraform: {}", tf.stderr);
    let mut theirs: serde_json::Value = serde_json::from_str(&tf.stdout).expect("Terraform's JSON");
    without_descriptions(&mut theirs);
    let ours = ours["function_signatures"].as_object().unwrap();
    let theirs = theirs["function_signatures"].as_object().unwrap();
    let mut differ = Vec::new();
    for (name, sig) in ours {
        match theirs.get(name) {
            None => differ.push(format!("{name}: Terraform has no such function")),
            Some(t) if t != sig => differ.push(format!("{name}: ours {sig}, Terraform's {t}")),
            Some(_) => {}
        }
    }
    assert!(differ.is_empty(), "case signatures:\n{}", differ.join("\n"));
    // The order of the document, too: sorted by name, as Go writes a map.
    let names: Vec<&String> = ours.keys().collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "case sorted");
    let bare_tf = terraform_in(dir.path(), &["metadata", "functions"], &[], "").unwrap();
    assert_eq!(bare.code, bare_tf.code, "case without_json: exit code");
}

const CONSOLE_CONFIG: &str = r#"variable "name" {
  type    = string
  default = "world"
}

locals {
  greeting = "hello ${var.name}"
  nums     = [1, 2, 3]
}

resource "terraform_data" "d" {
  input = local.greeting
}

output "o" {
  value = terraform_data.d.output
}
"#;

/// Text with the tool's name made neutral, and the generated id of
/// `terraform_data.d` (different in each directory) replaced.
fn neutral(s: &str, ids: &[&str]) -> String {
    let mut s = s
        .replace("terraform", "TOOL")
        .replace("Terraform", "TOOL")
        .replace("terrane", "TOOL");
    for id in ids {
        s = s.replace(id, "ID");
    }
    s
}

/// Item 3: `echo EXPR | console` after an apply, in both tools: the same
/// exit code, the same value printed (lists, maps, sets, objects, heredoc
/// strings, sensitive values, the state's resources, variables given on
/// the command line) and the same error for an undeclared reference.
#[test]
fn item3_console_piped_as_in_terraform() {
    let ours = temp_dir();
    let theirs = temp_dir();
    for d in [ours.path(), theirs.path()] {
        std::fs::write(d.join("main.tf"), CONSOLE_CONFIG).unwrap();
    }
    // Before any apply: the configuration's values, and no state made.
    let before = terrane(
        ours.path(),
        &["console", "-no-color"],
        &[],
        "local.greeting\n",
    );
    assert_eq!(
        before.stdout, "\"hello world\"\n",
        "case before_apply: {}",
        before.stderr
    );
    assert!(
        !ours.path().join(".terrane").exists(),
        "case before_apply: console made a state"
    );
    let apply = ["apply", "-auto-approve", "-no-color"];
    let t = terrane(ours.path(), &apply, &[], "");
    assert_eq!(t.code, 0, "case apply: {}", t.stderr);
    let Some(tf) = terraform_in(theirs.path(), &apply, &[], "") else {
        return;
    };
    assert_eq!(tf.code, 0, "case apply: {}", tf.stderr);
    let id = |o: Out| o.stdout.trim().trim_matches('"').to_string();
    let ask = ["console", "-no-color"];
    let our_id = id(terrane(ours.path(), &ask, &[], "terraform_data.d.id\n"));
    let their_id = id(terraform_in(theirs.path(), &ask, &[], "terraform_data.d.id\n").unwrap());
    assert!(!our_id.is_empty() && !their_id.is_empty(), "case ids");
    let cases: &[(&str, &[&str], &str)] = &[
        ("local", &[], "local.greeting\n"),
        ("arithmetic", &[], "1 + 2\n"),
        ("tuple", &[], "local.nums\n"),
        ("object", &[], "{a = 1, b = \"x\"}\n"),
        ("resource", &[], "terraform_data.d\n"),
        ("attribute", &[], "terraform_data.d.output\n"),
        ("for_expression", &[], "[for n in local.nums : n * 2]\n"),
        ("map", &[], "tomap({a = 1})\n"),
        ("set", &[], "toset([\"b\", \"a\"])\n"),
        ("list", &[], "tolist([1, 2])\n"),
        ("empty_collections", &[], "[tolist([]), {}, tomap({})]\n"),
        ("null", &[], "null\n"),
        ("heredoc", &[], "\"multi\\nline\"\n"),
        ("sensitive", &[], "sensitive(\"x\")\n"),
        ("nested", &[], "jsondecode(\"{\\\"a\\\":[1,{}]}\")\n"),
        (
            "path_and_workspace",
            &[],
            "[path.module, terraform.workspace]\n",
        ),
        ("last_line_wins", &[], "1\n2\n"),
        ("empty_line_last", &[], "1\n\n"),
        ("exit", &[], "1\nexit\n2\n"),
        ("empty_input", &[], ""),
        ("var_flag", &["-var", "name=you"], "local.greeting\n"),
        ("undeclared_resource", &[], "nope.x\n1\n"),
        ("undeclared_variable", &[], "var.nope\n"),
    ];
    for (name, flags, input) in cases {
        let mut args = vec!["console", "-no-color"];
        args.extend_from_slice(flags);
        let t = terrane(ours.path(), &args, &[], input);
        let tf = terraform_in(theirs.path(), &args, &[], input).unwrap();
        let why = format!(
            "case {name}\nterrane:\n{}{}\nterraform:\n{}{}",
            t.stdout, t.stderr, tf.stdout, tf.stderr
        );
        assert_eq!(t.code, tf.code, "{why}");
        assert_eq!(
            neutral(&t.stdout, &[&our_id]),
            neutral(&tf.stdout, &[&their_id]),
            "{why}"
        );
        let summary = |s: &str| {
            s.lines()
                .find(|l| l.starts_with("Error: "))
                .map(str::to_string)
        };
        assert_eq!(summary(&t.stderr), summary(&tf.stderr), "{why}");
        if *name == "undeclared_resource" {
            assert_eq!(collapsed(&t.stderr), collapsed(&tf.stderr), "{why}");
        }
    }
}

/// Output with whitespace collapsed and the tool's name neutral
/// (Terraform wraps a diagnostic's detail at 78 columns; terrane prints
/// it as one line).
fn collapsed(s: &str) -> String {
    neutral(s, &[])
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Item 5: `test` over the suite in tests/tftest (24 files: plan and apply
/// runs, file and run variables, run outputs, expected failures of
/// variables, resources, outputs and check blocks, a failed check block, failing assertions, a run skipped
/// after an error) reports, run by run and file by file, what `terraform
/// test` reports, with the same summary and exit code; each tool's wall
/// time is printed.
#[test]
fn item5_terrane_test_as_in_terraform() {
    let suite = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tftest");
    let ours = temp_dir();
    let theirs = temp_dir();
    for d in [ours.path(), theirs.path()] {
        copy_dir(&suite, d);
    }
    let started = std::time::Instant::now();
    let t = terrane(ours.path(), &["test", "-no-color"], &[], "");
    let our_time = started.elapsed();
    assert!(
        !ours.path().join(".terrane").exists(),
        "case no_state_in_working_directory"
    );
    assert!(
        t.stdout
            .contains("tests/22_expected_failure_with_apply.tftest.hcl... fail"),
        "case ran: {}{}",
        t.stdout,
        t.stderr
    );
    let Some(init) = terraform_in(theirs.path(), &["init", "-no-color"], &[], "") else {
        return;
    };
    assert_eq!(init.code, 0, "case terraform_init: {}", init.stderr);
    let started = std::time::Instant::now();
    let tf = terraform_in(theirs.path(), &["test", "-no-color"], &[], "").unwrap();
    let their_time = started.elapsed();
    eprintln!("terrane test: {our_time:?}; terraform test: {their_time:?}");
    assert_eq!(
        t.code, tf.code,
        "case exit_code\nterrane:\n{}{}\nterraform:\n{}{}",
        t.stdout, t.stderr, tf.stdout, tf.stderr
    );
    let lines = |s: &str| -> Vec<String> {
        s.lines()
            .filter(|l| {
                l.contains("... ") || l.starts_with("Success!") || l.starts_with("Failure!")
            })
            .map(str::to_string)
            .collect()
    };
    assert_eq!(lines(&t.stdout), lines(&tf.stdout), "case runs_and_files");
    assert_eq!(collapsed(&t.stdout), collapsed(&tf.stdout), "case stdout");
    // Each error's summary with its place, in any order (Terraform lists
    // a run's failed check blocks first).
    let summaries = |s: &str| -> Vec<String> {
        let lines: Vec<&str> = s.lines().collect();
        let mut out: Vec<String> = lines
            .iter()
            .enumerate()
            .filter(|(_, l)| l.starts_with("Error: "))
            .map(|(i, l)| {
                let on = lines.get(i + 2).filter(|n| n.starts_with("  on "));
                format!("{l} {}", on.copied().unwrap_or_default())
            })
            .collect();
        out.sort();
        out
    };
    assert_eq!(summaries(&t.stderr), summaries(&tf.stderr), "case errors");
}

/// Item 5: a block `terrane test` does not know, at a file's top level or
/// in a run, fails the file with Terraform's diagnostic at its line (no
/// block context for a top-level header, the run's for a nested one); the
/// file never runs as if the block were not there. (Provider, mock and
/// override blocks run: see tests/test_doubles.rs and tests/front2.rs.)
#[test]
fn item5_unknown_test_blocks_are_refused_not_ignored() {
    let cases = [
        (
            "top_level",
            "foo \"x\" {}\nrun \"r\" {\n  command = plan\n}\n",
            "on a.tftest.hcl line 1:\n   1: foo \"x\" {}\n\nBlocks of type \"foo\" are not expected here.",
        ),
        (
            "in_a_run",
            "run \"r\" {\n  command = plan\n  bar {}\n}\n",
            "on a.tftest.hcl line 3, in run \"r\":\n   3:   bar {}\n\nBlocks of type \"bar\" are not expected here.",
        ),
    ];
    let check = |name: &str, file: &str, expected: &str| {
        let dir = temp_dir();
        std::fs::write(dir.path().join("main.tf"), CONSOLE_CONFIG).unwrap();
        std::fs::write(dir.path().join("a.tftest.hcl"), file).unwrap();
        let t = terrane(dir.path(), &["test", "-no-color"], &[], "");
        assert_eq!(t.code, 1, "case {name}: {}{}", t.stdout, t.stderr);
        assert!(
            t.stderr.contains("Error: Unsupported block type") && t.stderr.contains(expected),
            "case {name}: {}",
            t.stderr
        );
        assert!(!t.stdout.contains("pass"), "case {name}: {}", t.stdout);
    };
    for (name, file, expected) in cases {
        check(name, file, expected);
    }
}

fn copy_dir(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
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

    /// The pane's text once `want` shows (or after ten seconds).
    fn wait_for(&self, want: &str) -> String {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let pane =
                String::from_utf8_lossy(&self.run(&["capture-pane", "-p", "-t", "c"]).stdout)
                    .into_owned();
            if pane.contains(want) || std::time::Instant::now() > deadline {
                return pane;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

/// Item 3: `console` in a real terminal (tmux: send-keys, capture-pane),
/// for each tool: a `> ` prompt, each value printed as it is entered, an
/// error reported without leaving, `exit` ending the program.
#[test]
fn item3_console_interactive_in_a_terminal() {
    if std::process::Command::new("tmux")
        .arg("-V")
        .output()
        .is_err()
    {
        terrane_testkit::skip("tmux is not installed");
        return;
    }
    let ours = temp_dir();
    let theirs = temp_dir();
    let mut tools = vec![(
        "terrane",
        ours.path(),
        env!("CARGO_BIN_EXE_terrane").to_string(),
    )];
    if let Some(tf) = terraform() {
        tools.push(("terraform", theirs.path(), tf.program.display().to_string()));
    }
    for (tool, dir, program) in tools {
        std::fs::write(dir.join("main.tf"), CONSOLE_CONFIG).unwrap();
        std::fs::write(dir.join("cli.tfrc"), "").unwrap();
        let tmux = Tmux {
            socket: format!("terrane-console-{tool}-{}", std::process::id()),
        };
        // The command leaves a marker file when it ends, with its code.
        let script = format!(
            "cd {dir} && env -u TF_DATA_DIR -u TF_CLI_ARGS TF_CLI_CONFIG_FILE={dir}/cli.tfrc CHECKPOINT_DISABLE=1 {program} console -no-color; echo $? > {dir}/ended; sleep 30",
            dir = dir.display()
        );
        let started = tmux.run(&[
            "new-session",
            "-d",
            "-s",
            "c",
            "-x",
            "100",
            "-y",
            "40",
            &script,
        ]);
        assert!(started.status.success(), "case {tool}: tmux: {:?}", started);
        // (capture-pane drops the blank after the prompt's `>`.)
        let pane = tmux.wait_for(">");
        assert!(
            pane.lines().any(|l| l.trim_end() == ">"),
            "case {tool} prompt:\n{pane}"
        );
        for (name, keys, want) in [
            ("value", "local.greeting", "\"hello world\""),
            ("list", "[for n in local.nums : n * 2]", "  6,"),
            (
                "error_then_on",
                "nope.x",
                "Reference to undeclared resource",
            ),
            ("after_error", "upper(var.name)", "\"WORLD\""),
        ] {
            tmux.run(&["send-keys", "-t", "c", keys, "Enter"]);
            let pane = tmux.wait_for(want);
            assert!(pane.contains(want), "case {tool} {name}:\n{pane}");
        }
        tmux.run(&["send-keys", "-t", "c", "exit", "Enter"]);
        // The shell creates the marker before it writes the code: wait for
        // a whole line, not for the file.
        let ended = || std::fs::read_to_string(dir.join("ended")).unwrap_or_default();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while !ended().ends_with('\n') && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let code = ended();
        assert_eq!(code.trim(), "0", "case {tool} exit");
    }
}

const IMPORTS: &str = r#"import {
  to = random_string.s
  id = "abcdef"
}

import {
  to = random_integer.i
  id = "15,1,20"
}

import {
  to = random_id.r
  id = "aGVsbG8"
}
"#;

/// A generated file's resource blocks, each with its comment, sorted (the
/// order Terraform writes them in is the order its imports finished).
fn generated_blocks(text: &str) -> Vec<String> {
    let text = neutral(text, &[]);
    let mut blocks: Vec<String> = text
        .split("\n\n")
        .skip(1)
        .map(|b| b.trim().to_string())
        .collect();
    blocks.sort();
    blocks
}

/// Item 4: `plan -generate-config-out=FILE` for import blocks of random
/// resources writes the file Terraform writes (arguments sorted and
/// aligned, unset ones `null`), with its header, and plans the imports;
/// without the flag, an import block with no target configuration is an
/// error in both (terrane used to leave it out of the plan silently); an
/// existing FILE is refused.
#[test]
fn item4_generate_config_out_as_in_terraform() {
    let ours = temp_dir();
    let theirs = temp_dir();
    for d in [ours.path(), theirs.path()] {
        std::fs::write(d.join("main.tf"), IMPORTS).unwrap();
    }
    let random =
        terrane_testkit::built_binary("terrane-provider-random", "terraform-provider-random");
    let rc = terrane_testkit::dev_overrides(
        &theirs.path().join("plugins"),
        &[("hashicorp/random", &random)],
    );
    std::fs::copy(&rc, theirs.path().join("cli.tfrc")).unwrap();
    let plain = ["plan", "-no-color"];
    let t = terrane(ours.path(), &plain, &[], "");
    assert_eq!(
        t.code, 1,
        "case undeclared_target: {}{}",
        t.stdout, t.stderr
    );
    assert!(
        t.stderr
            .contains("Error: Configuration for import target does not exist"),
        "case undeclared_target: {}",
        t.stderr
    );
    let generate = ["plan", "-no-color", "-generate-config-out=generated.tf"];
    let t = terrane(ours.path(), &generate, &[], "");
    assert_eq!(t.code, 0, "case generate: {}{}", t.stdout, t.stderr);
    assert!(
        t.stdout
            .contains("Plan: 3 to import, 0 to add, 0 to change, 0 to destroy."),
        "case generate_plans: {}",
        t.stdout
    );
    let our_file = std::fs::read_to_string(ours.path().join("generated.tf")).unwrap();
    assert!(
        our_file.starts_with("# __generated__ by terrane\n# Please review these resources and move them into your main configuration files.\n\n"),
        "case header: {our_file}"
    );
    let again = terrane(ours.path(), &generate, &[], "");
    assert_eq!(again.code, 1, "case file_exists: {}", again.stderr);
    assert!(
        again
            .stderr
            .contains("Target generated file already exists"),
        "case file_exists: {}",
        again.stderr
    );
    let Some(tf) = terraform_in(theirs.path(), &plain, &[], "") else {
        return;
    };
    assert_eq!(tf.code, 1, "case undeclared_target: terraform");
    assert!(tf
        .stderr
        .contains("Error: Configuration for import target does not exist"));
    let tf = terraform_in(theirs.path(), &generate, &[], "").unwrap();
    assert_eq!(tf.code, 0, "case generate: terraform: {}", tf.stderr);
    assert!(tf
        .stdout
        .contains("Plan: 3 to import, 0 to add, 0 to change, 0 to destroy."));
    let their_file = std::fs::read_to_string(theirs.path().join("generated.tf")).unwrap();
    assert_eq!(
        generated_blocks(&our_file),
        generated_blocks(&their_file),
        "case same_file\nterrane:\n{our_file}\nterraform:\n{their_file}"
    );
    assert_eq!(
        neutral(
            our_file
                .lines()
                .take(2)
                .collect::<Vec<_>>()
                .join("\n")
                .as_str(),
            &[]
        ),
        neutral(
            their_file
                .lines()
                .take(2)
                .collect::<Vec<_>>()
                .join("\n")
                .as_str(),
            &[]
        ),
        "case same_header"
    );
    let again = terraform_in(theirs.path(), &generate, &[], "").unwrap();
    assert_eq!(again.code, 1, "case file_exists: terraform");
}
