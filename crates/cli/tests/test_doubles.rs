//! `terrane test` with test doubles (issue 20 leftovers, item 1):
//! `mock_provider` (with `mock_resource` and `mock_data` defaults and
//! overrides of its own), `override_resource` and `override_data` in a
//! file and in a run, `override_during = plan`, side by side with real
//! `terraform test` on the same files and the same provider code (random
//! and local: terrane's built-ins, Terraform's plugin builds of them).

use std::path::Path;
use terrane_testkit::{built_binary, isolated, temp_dir, terraform, Out};

fn run(program: &Path, dir: &Path, args: &[&str], cli: &Path) -> Out {
    let mut cmd = isolated(program, dir);
    cmd.args(args)
        .env("TF_CLI_CONFIG_FILE", cli)
        .env("TF_IN_AUTOMATION", "1")
        .stdin(std::process::Stdio::null());
    cmd.output().expect("the program runs").into()
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

/// The lines that say how each run and file ended, and the summary.
fn verdicts(s: &str) -> Vec<String> {
    s.lines()
        .filter(|l| l.contains("... ") || l.starts_with("Success!") || l.starts_with("Failure!"))
        .map(str::to_string)
        .collect()
}

/// Each error's summary with its place, sorted.
fn errors(s: &str) -> Vec<String> {
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
}

/// What terrane says of each file of tests/tftest_mocks, as a table of
/// named cases (file, its verdict), then the same pass and fail, summary,
/// exit code and errors as `terraform test` on the same files; both wall
/// times are printed.
#[test]
fn item1_mock_provider_and_overrides_as_in_terraform() {
    let suite = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tftest_mocks");
    let ours = temp_dir();
    copy_dir(&suite, ours.path());
    let empty = ours.path().join("cli.tfrc");
    std::fs::write(&empty, "").unwrap();
    let started = std::time::Instant::now();
    let t = run(
        Path::new(env!("CARGO_BIN_EXE_terrane")),
        ours.path(),
        &["test", "-no-color"],
        &empty,
    );
    let our_time = started.elapsed();
    let check = |file: &str, want: &str| {
        let line = format!("tests/{file}.tftest.hcl... {want}");
        assert!(
            t.stdout.lines().any(|l| l == line),
            "case {file}: want {want:?}\n{}{}",
            t.stdout,
            t.stderr
        );
    };
    for (file, want) in [
        ("01_mock_defaults", "pass"),
        ("02_generated_values", "pass"),
        ("03_plan_unknown", "fail"),
        ("04_plan_known_config", "pass"),
        ("05_override_during_plan", "pass"),
        ("06_file_overrides", "pass"),
        ("07_run_overrides", "pass"),
        ("08_mock_data_defaults", "pass"),
        ("09_override_in_mock", "pass"),
        ("10_real_provider_without_mock", "pass"),
        ("11_failing_assertion_on_mock", "fail"),
        ("12_child_module_resources", "pass"),
        ("13_override_in_module", "pass"),
        ("14_mock_source", "pass"),
        ("15_mock_source_inline_wins", "pass"),
        ("16_mock_source_overrides_and_json", "pass"),
    ] {
        check(file, want);
    }
    assert!(
        !ours.path().join("absent.txt").exists(),
        "case no_real_file_read_or_written"
    );
    let Some(tf) = terraform() else { return };
    let theirs = temp_dir();
    copy_dir(&suite, theirs.path());
    let plugins = theirs.path().join("plugins");
    let random = built_binary("terrane-provider-random", "terraform-provider-random");
    let local = built_binary("terrane-provider-local", "terraform-provider-local");
    let rc = terrane_testkit::dev_overrides(
        &plugins,
        &[("hashicorp/random", &random), ("hashicorp/local", &local)],
    );
    let rc = Path::new(&rc);
    let get = run(
        Path::new(&tf.program),
        theirs.path(),
        &["get", "-no-color"],
        rc,
    );
    assert_eq!(get.code, 0, "case terraform_get: {}", get.stderr);
    let started = std::time::Instant::now();
    let theirs_out = run(
        Path::new(&tf.program),
        theirs.path(),
        &["test", "-no-color"],
        rc,
    );
    let their_time = started.elapsed();
    eprintln!("terrane test: {our_time:?}; terraform test: {their_time:?}");
    assert_eq!(
        t.code, theirs_out.code,
        "case exit_code\nterrane:\n{}{}\nterraform:\n{}{}",
        t.stdout, t.stderr, theirs_out.stdout, theirs_out.stderr
    );
    assert_eq!(
        verdicts(&t.stdout),
        verdicts(&theirs_out.stdout),
        "case runs_and_files\nterraform:\n{}",
        theirs_out.stderr
    );
    assert_eq!(errors(&t.stderr), errors(&theirs_out.stderr), "case errors");
}

/// A double that cannot work is refused before any run, naming the block:
/// an override of the wrong kind, a missing target, a mock data directory
/// that is missing or holds a block mocks cannot have.
#[test]
fn item1_bad_doubles_are_refused() {
    let dir = temp_dir();
    std::fs::write(
        dir.path().join("main.tf"),
        "resource \"terraform_data\" \"d\" {\n  input = 1\n}\n",
    )
    .unwrap();
    let cli = dir.path().join("cli.tfrc");
    std::fs::write(&cli, "").unwrap();
    std::fs::create_dir_all(dir.path().join("badmocks")).unwrap();
    std::fs::write(
        dir.path().join("badmocks/x.tfmock.hcl"),
        "mock_thing \"x\" {}\n",
    )
    .unwrap();
    for (name, block, summary, place) in [
        (
            "data_target_for_resource",
            "override_resource {\n  target = data.x.y\n}\n",
            "Invalid override target",
            "on a.tftest.hcl line ",
        ),
        (
            "resource_target_for_data",
            "override_data {\n  target = terraform_data.d\n}\n",
            "Invalid override target",
            "on a.tftest.hcl line ",
        ),
        (
            "missing_target",
            "override_resource {\n  values = {}\n}\n",
            "Missing required argument",
            "on a.tftest.hcl line ",
        ),
        (
            "bad_override_during",
            "override_resource {\n  target = terraform_data.d\n  override_during = later\n}\n",
            "Invalid override_during value",
            "on a.tftest.hcl line ",
        ),
        (
            "override_module_not_a_module",
            "override_module {\n  target = terraform_data.d\n}\n",
            "Invalid override target",
            "on a.tftest.hcl line ",
        ),
        (
            "mock_source_missing_directory",
            "mock_provider \"terraform\" {\n  source = \"./nowhere\"\n}\n",
            "Failed to read mock data directory",
            "on a.tftest.hcl line 1:",
        ),
        (
            "mock_source_file_with_an_unknown_block",
            "mock_provider \"terraform\" {\n  source = \"./badmocks\"\n}\n",
            "Unsupported block type",
            "on badmocks/x.tfmock.hcl line 1:",
        ),
    ] {
        std::fs::write(
            dir.path().join("a.tftest.hcl"),
            format!("{block}\nrun \"r\" {{\n  command = plan\n}}\n"),
        )
        .unwrap();
        let t = run(
            Path::new(env!("CARGO_BIN_EXE_terrane")),
            dir.path(),
            &["test", "-no-color"],
            &cli,
        );
        assert_eq!(t.code, 1, "case {name}: {}{}", t.stdout, t.stderr);
        assert!(
            t.stderr.contains(&format!("Error: {summary}")) && t.stderr.contains(place),
            "case {name}: {}",
            t.stderr
        );
        assert!(
            t.stdout.contains("a.tftest.hcl... fail") && !t.stdout.contains("run \"r\"... pass"),
            "case {name}: {}",
            t.stdout
        );
    }
}

/// Item 2: `-junit-xml=FILE` writes Terraform's JUnit XML: a testsuite
/// per file with its counts, a testcase per run with its time and
/// timestamp, and failure (with Terraform's message), error and skipped
/// elements; the tags and their attributes (times left out) are those
/// Terraform writes for the same files.
#[test]
fn item2_junit_xml_as_in_terraform() {
    let suite = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tftest_mocks");
    let args = [
        "test",
        "-no-color",
        "-junit-xml=results.xml",
        "-filter=tests/01_mock_defaults.tftest.hcl",
        "-filter=tests/03_plan_unknown.tftest.hcl",
        "-filter=tests/11_failing_assertion_on_mock.tftest.hcl",
    ];
    // The element lines, without times, in order.
    let tags = |xml: &str| -> Vec<String> {
        xml.lines()
            .map(str::trim)
            .filter(|l| l.starts_with('<'))
            .map(|l| {
                let mut out = String::new();
                let mut rest = l;
                while let Some(i) = rest.find(" time=\"") {
                    out.push_str(&rest[..i]);
                    let after = &rest[i + 7..];
                    rest = after.find('"').map(|j| &after[j + 1..]).unwrap_or("");
                }
                out.push_str(rest);
                out.split(" timestamp=\"")
                    .enumerate()
                    .map(|(i, p)| {
                        if i == 0 {
                            p.to_string()
                        } else {
                            p.split_once('"')
                                .map(|x| x.1.to_string())
                                .unwrap_or_default()
                        }
                    })
                    .collect()
            })
            .collect()
    };
    let ours = temp_dir();
    copy_dir(&suite, ours.path());
    let empty = ours.path().join("cli.tfrc");
    std::fs::write(&empty, "").unwrap();
    let t = run(
        Path::new(env!("CARGO_BIN_EXE_terrane")),
        ours.path(),
        &args,
        &empty,
    );
    assert_eq!(t.code, 1, "case exit_code: {}{}", t.stdout, t.stderr);
    let our_xml = std::fs::read_to_string(ours.path().join("results.xml")).unwrap();
    let check = |name: &str, want: &str| {
        assert!(our_xml.contains(want), "case {name}: {our_xml}");
    };
    check(
        "suite_counts",
        "<testsuite name=\"tests/03_plan_unknown.tftest.hcl\" tests=\"2\" skipped=\"1\" failures=\"0\" errors=\"1\">",
    );
    check(
        "failure_message",
        "<failure message=\"1 of 1 assertions failed: s is not never\"><![CDATA[\nError: Test assertion failed\n",
    );
    check(
        "skipped",
        "Previous testcase \"computed_unknown_in_plan\" ended in error",
    );
    let Some(tf) = terraform() else { return };
    let theirs = temp_dir();
    copy_dir(&suite, theirs.path());
    let random = built_binary("terrane-provider-random", "terraform-provider-random");
    let local = built_binary("terrane-provider-local", "terraform-provider-local");
    let rc = terrane_testkit::dev_overrides(
        &theirs.path().join("plugins"),
        &[("hashicorp/random", &random), ("hashicorp/local", &local)],
    );
    let rc = Path::new(&rc);
    let get = run(
        Path::new(&tf.program),
        theirs.path(),
        &["get", "-no-color"],
        rc,
    );
    assert_eq!(get.code, 0, "case terraform_get: {}", get.stderr);
    let o = run(Path::new(&tf.program), theirs.path(), &args, rc);
    assert_eq!(o.code, 1, "case terraform_exit_code: {}", o.stderr);
    let their_xml = std::fs::read_to_string(theirs.path().join("results.xml")).unwrap();
    assert_eq!(
        tags(&our_xml),
        tags(&their_xml),
        "case tags\nterrane:\n{our_xml}\nterraform:\n{their_xml}"
    );
}

/// Item 2: `-json` prints Terraform's machine-readable test UI: for each
/// line its type, the file and run it is about, the progress and status,
/// and a diagnostic's summary are those Terraform prints for the same
/// files, in the same order (after the version line, which names the
/// tool).
#[test]
fn item2_json_as_in_terraform() {
    let suite = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tftest_mocks");
    let args = [
        "test",
        "-json",
        "-filter=tests/01_mock_defaults.tftest.hcl",
        "-filter=tests/03_plan_unknown.tftest.hcl",
        "-filter=tests/11_failing_assertion_on_mock.tftest.hcl",
    ];
    let events =
        |stdout: &str| -> Vec<String> {
            stdout
                .lines()
                .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                .filter(|v| v["type"] != "version" && v["@level"] != "warn")
                .map(|v| {
                    let kind = v["type"].as_str().unwrap_or_default().to_string();
                    let body = &v[kind.as_str()];
                    format!(
                    "{kind} file={} run={} progress={} status={} summary={} abstract={} counts={}",
                    v["@testfile"],
                    v["@testrun"],
                    body["progress"],
                    body["status"],
                    v["diagnostic"]["summary"],
                    if kind == "test_abstract" { body.to_string() } else { String::new() },
                    if kind == "test_summary" { body.to_string() } else { String::new() },
                )
                })
                .collect()
        };
    let ours = temp_dir();
    copy_dir(&suite, ours.path());
    let empty = ours.path().join("cli.tfrc");
    std::fs::write(&empty, "").unwrap();
    let t = run(
        Path::new(env!("CARGO_BIN_EXE_terrane")),
        ours.path(),
        &args,
        &empty,
    );
    assert_eq!(t.code, 1, "case exit_code: {}{}", t.stdout, t.stderr);
    let our_events = events(&t.stdout);
    assert!(
        our_events.iter().any(|e| e.starts_with("test_summary")),
        "case summary: {}",
        t.stdout
    );
    let Some(tf) = terraform() else { return };
    let theirs = temp_dir();
    copy_dir(&suite, theirs.path());
    let random = built_binary("terrane-provider-random", "terraform-provider-random");
    let local = built_binary("terrane-provider-local", "terraform-provider-local");
    let rc = terrane_testkit::dev_overrides(
        &theirs.path().join("plugins"),
        &[("hashicorp/random", &random), ("hashicorp/local", &local)],
    );
    let rc = Path::new(&rc);
    let get = run(
        Path::new(&tf.program),
        theirs.path(),
        &["get", "-no-color"],
        rc,
    );
    assert_eq!(get.code, 0, "case terraform_get: {}", get.stderr);
    let o = run(Path::new(&tf.program), theirs.path(), &args, rc);
    assert_eq!(o.code, t.code, "case terraform_exit_code: {}", o.stderr);
    assert_eq!(
        our_events,
        events(&o.stdout),
        "case events\nterrane:\n{}\nterraform:\n{}",
        t.stdout,
        o.stdout
    );
}

/// Issue 20, provider blocks in test files: a file's `provider` block
/// replaces the configuration's for its runs (the fixture's resource
/// echoes the configuration it was planned with), and a file without one
/// keeps the configuration's. Same verdicts, summary, exit code and errors
/// as `terraform test` on the same files and the same provider binary.
#[test]
fn item4_provider_blocks_in_test_files() {
    let main = r#"terraform {
  required_providers {
    blocks = { source = "example.com/terrane/blocks" }
  }
}
provider "blocks" {
  region = "config-region"
  features {}
}
resource "blocks_server" "s" {
  name = "p"
}
"#;
    let files: &[(&str, &str)] = &[
        ("main.tf", main),
        (
            "a_override.tftest.hcl",
            "provider \"blocks\" {\n  region = \"test-region\"\n  features {}\n}\n\nrun \"uses_the_test_provider\" {\n  command = plan\n  assert {\n    condition     = strcontains(blocks_server.s.provider_config, \"test-region\")\n    error_message = \"the test file's provider was not used\"\n  }\n}\n\nrun \"applies_with_it\" {\n  assert {\n    condition     = !strcontains(blocks_server.s.provider_config, \"config-region\")\n    error_message = \"the configuration's provider was used\"\n  }\n}\n",
        ),
        (
            "b_plain.tftest.hcl",
            "run \"keeps_the_configuration_provider\" {\n  command = plan\n  assert {\n    condition     = strcontains(blocks_server.s.provider_config, \"config-region\")\n    error_message = \"the configuration's provider was not used\"\n  }\n}\n",
        ),
        (
            "c_module.tftest.hcl",
            "provider \"blocks\" {\n  region = \"module-test-region\"\n  features {}\n}\n\nrun \"module_run_uses_the_test_provider\" {\n  command = plan\n  module {\n    source = \"./mod\"\n  }\n  assert {\n    condition     = strcontains(blocks_server.m.provider_config, \"module-test-region\")\n    error_message = \"the module run did not use the test file's provider\"\n  }\n}\n",
        ),
        (
            "d_invalid_provider.tftest.hcl",
            "provider \"blocks\" {\n  region   = \"test-region\"\n  nonsense = 1\n  features {}\n}\n\nrun \"skipped_one\" {\n  command = plan\n}\n\nrun \"skipped_two\" {\n  command = plan\n}\n",
        ),
        (
            "mod/main.tf",
            "terraform {\n  required_providers {\n    blocks = { source = \"example.com/terrane/blocks\" }\n  }\n}\nprovider \"blocks\" {\n  region = \"module-region\"\n  features {}\n}\nresource \"blocks_server\" \"m\" {\n  name = \"m\"\n}\n",
        ),
    ];
    let setup = |tool: &str| {
        let dir = temp_dir();
        for (name, text) in files {
            let p = dir.path().join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let rc = terrane_testkit::dev_overrides(
            dir.path(),
            &[(
                "example.com/terrane/blocks",
                &terrane_testkit::fixture("terrane-blocks-fixture"),
            )],
        );
        let _ = tool;
        (dir, std::path::PathBuf::from(rc))
    };
    let (ours_dir, ours_rc) = setup("terrane");
    let terrane = Path::new(env!("CARGO_BIN_EXE_terrane"));
    let ours = run(terrane, ours_dir.path(), &["test", "-no-color"], &ours_rc);
    let cases: &[(&str, &str)] = &[
        ("override_plan", "  run \"uses_the_test_provider\"... pass"),
        ("override_apply", "  run \"applies_with_it\"... pass"),
        ("override_file", "a_override.tftest.hcl... pass"),
        (
            "plain_file",
            "  run \"keeps_the_configuration_provider\"... pass",
        ),
        (
            "module_run",
            "  run \"module_run_uses_the_test_provider\"... pass",
        ),
        ("invalid_provider_skips", "  run \"skipped_one\"... skip"),
        (
            "invalid_provider_skips_all",
            "  run \"skipped_two\"... skip",
        ),
        (
            "invalid_provider_file",
            "d_invalid_provider.tftest.hcl... fail",
        ),
    ];
    for (name, want) in cases {
        assert!(
            ours.stdout.lines().any(|l| l == *want),
            "case {name}: no {want:?} in:\n{}\n{}",
            ours.stdout,
            ours.stderr
        );
    }
    assert_eq!(ours.code, 1, "case exit_code: {ours:?}");
    if let Some(tf) = terraform() {
        let (theirs_dir, theirs_rc) = setup("terraform");
        // Terraform installs even a local run module at init.
        let init = run(
            &tf.program,
            theirs_dir.path(),
            &["init", "-no-color"],
            &theirs_rc,
        );
        assert_eq!(init.code, 0, "terraform init: {init:?}");
        let theirs = run(
            &tf.program,
            theirs_dir.path(),
            &["test", "-no-color"],
            &theirs_rc,
        );
        assert_eq!(ours.code, theirs.code, "exit code\n{ours:?}\n{theirs:?}");
        assert_eq!(
            verdicts(&ours.stdout),
            verdicts(&theirs.stdout),
            "verdicts\n{}\n{}",
            theirs.stdout,
            theirs.stderr
        );
        assert_eq!(errors(&ours.stderr), errors(&theirs.stderr), "errors");
    }
}
