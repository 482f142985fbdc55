//! The strict command line (issue 20 items 1 and 2), side by side with real
//! Terraform on the same directory: unknown flags, bad flag values, extra
//! arguments, unknown commands and `-help` give the same exit code and the
//! same message (tool names aside); `-help` never runs anything; and the
//! commands that need configuration refuse an empty directory without
//! creating a state.

use std::path::Path;
use terrane_testkit::{isolated, temp_dir, terraform, Out};

fn terrane(dir: &Path, args: &[&str]) -> Out {
    let cli = dir.join("cli.tfrc");
    std::fs::write(&cli, "").unwrap();
    isolated(env!("CARGO_BIN_EXE_terrane"), dir)
        .args(args)
        .env("TF_CLI_CONFIG_FILE", &cli)
        .output()
        .expect("terrane runs")
        .into()
}

fn terraform_in(dir: &Path, args: &[&str]) -> Option<Out> {
    let tf = terraform()?;
    let cli = dir.join("cli.tfrc");
    std::fs::write(&cli, "").unwrap();
    let o = tf.run(
        dir,
        args,
        &[
            ("TF_CLI_CONFIG_FILE", cli.to_str().unwrap()),
            ("CHECKPOINT_DISABLE", "1"),
        ],
    );
    Some(Out {
        code: o.code,
        stdout: o.stdout,
        stderr: o.stderr,
    })
}

/// Text with the tool's name made neutral and its whitespace collapsed
/// (Terraform wraps a diagnostic's detail at 78 columns; terrane prints
/// it as one line).
fn neutral(s: &str) -> String {
    s.replace("terraform", "TOOL")
        .replace("Terraform", "TOOL")
        .replace("terrane", "TOOL")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether running left anything a command creates: a state or a data
/// directory.
fn untouched(dir: &Path) -> bool {
    ![".terrane", "terraform.tfstate", ".terraform"]
        .iter()
        .any(|f| dir.join(f).exists())
}

#[derive(Clone, Copy, PartialEq)]
enum Compare {
    /// All of stderr, and stdout up to a usage text (whose prose is ours).
    Whole,
    /// stderr up to Terraform's closing help pointer.
    Diagnostic,
    /// The `Error:` line alone (the detail names other things).
    Summary,
}

struct Case {
    name: &'static str,
    args: &'static [&'static str],
    /// Write a configuration first.
    config: bool,
    /// What to compare besides the exit code.
    compare: Compare,
}

const CONFIG: &str = "resource \"terraform_data\" \"d\" {\n  input = \"x\"\n}\n";

fn check(c: &Case) {
    let ours = temp_dir();
    let theirs = temp_dir();
    if c.config {
        std::fs::write(ours.path().join("main.tf"), CONFIG).unwrap();
        std::fs::write(theirs.path().join("main.tf"), CONFIG).unwrap();
    }
    let t = terrane(ours.path(), c.args);
    let Some(tf) = terraform_in(theirs.path(), c.args) else {
        return;
    };
    assert_eq!(
        t.code, tf.code,
        "case {}: exit code\nterrane stderr:\n{}\nterraform stderr:\n{}",
        c.name, t.stderr, tf.stderr
    );
    let upto = |s: &str, end: &str| neutral(&s[..s.find(end).unwrap_or(s.len())]);
    let summary = |s: &str| {
        let line = s.lines().find(|l| l.starts_with("Error:"));
        neutral(line.unwrap_or_default())
    };
    match c.compare {
        Compare::Whole => {
            assert_eq!(
                neutral(&t.stderr),
                neutral(&tf.stderr),
                "case {}: stderr",
                c.name
            );
            assert_eq!(
                upto(&t.stdout, "Usage:"),
                upto(&tf.stdout, "Usage:"),
                "case {}: stdout",
                c.name
            );
        }
        Compare::Diagnostic => assert_eq!(
            upto(&t.stderr, "\n\nFor more help"),
            upto(&tf.stderr, "\n\nFor more help"),
            "case {}: stderr",
            c.name
        ),
        Compare::Summary => assert_eq!(summary(&t.stderr), summary(&tf.stderr), "case {}", c.name),
    }
    // The usage line of -help output.
    let usage = |s: &str| s.lines().find(|l| l.starts_with("Usage:")).map(neutral);
    assert_eq!(
        usage(&t.stdout),
        usage(&tf.stdout),
        "case {}: usage line",
        c.name
    );
    assert!(
        untouched(ours.path()),
        "case {}: terrane created a state or data directory",
        c.name
    );
}

#[test]
fn item1_flags_are_strict_as_in_terraform() {
    let cases = [
        Case {
            name: "unknown_flag_plan",
            args: &["plan", "-auto-aprove", "-no-color"],
            config: true,
            compare: Compare::Whole,
        },
        Case {
            name: "unknown_flag_apply",
            args: &["apply", "-auto-aprove", "-no-color"],
            config: true,
            compare: Compare::Whole,
        },
        Case {
            name: "unknown_flag_state_list",
            args: &["state", "list", "-bogus", "-no-color"],
            config: true,
            compare: Compare::Diagnostic,
        },
        Case {
            name: "bad_count",
            args: &["plan", "-parallelism=x", "-no-color"],
            config: true,
            compare: Compare::Whole,
        },
        Case {
            name: "bad_bool",
            args: &["plan", "-refresh=x", "-no-color"],
            config: true,
            compare: Compare::Whole,
        },
        Case {
            name: "missing_value",
            args: &["plan", "-no-color", "-out"],
            config: true,
            compare: Compare::Whole,
        },
        Case {
            name: "too_many_arguments",
            args: &["plan", "-no-color", "extra"],
            config: true,
            compare: Compare::Whole,
        },
        Case {
            name: "unknown_command",
            args: &["bogus"],
            config: true,
            compare: Compare::Diagnostic,
        },
        Case {
            name: "flag_before_command",
            args: &["-bogus", "plan"],
            config: true,
            compare: Compare::Whole,
        },
        Case {
            name: "apply_double_dash_help_runs_nothing",
            args: &["apply", "--help"],
            config: true,
            compare: Compare::Whole,
        },
        Case {
            name: "apply_dash_h_runs_nothing",
            args: &["apply", "-auto-approve", "-h"],
            config: true,
            compare: Compare::Whole,
        },
        Case {
            name: "plan_help",
            args: &["plan", "-help"],
            config: true,
            compare: Compare::Whole,
        },
        Case {
            name: "destroy_help",
            args: &["destroy", "-help"],
            config: true,
            compare: Compare::Whole,
        },
        Case {
            name: "validate_help",
            args: &["validate", "-help"],
            config: true,
            compare: Compare::Whole,
        },
    ];
    for c in &cases {
        check(c);
    }
}

#[test]
fn item2_no_configuration_no_work() {
    let cases = [
        Case {
            name: "plan_empty_dir",
            args: &["plan", "-no-color"],
            config: false,
            compare: Compare::Summary,
        },
        Case {
            name: "apply_empty_dir",
            args: &["apply", "-auto-approve", "-no-color"],
            config: false,
            compare: Compare::Summary,
        },
        Case {
            name: "init_empty_dir",
            args: &["init", "-no-color"],
            config: false,
            compare: Compare::Summary,
        },
        Case {
            name: "validate_empty_dir",
            args: &["validate", "-no-color"],
            config: false,
            compare: Compare::Summary,
        },
        Case {
            name: "import_empty_dir",
            args: &["import", "-no-color", "terraform_data.d", "x"],
            config: false,
            compare: Compare::Summary,
        },
    ];
    for c in &cases {
        check(c);
    }
    // Terraform's destroy and refresh succeed in an empty directory (and
    // Terraform writes an empty state file); terrane succeeds too, and
    // creates nothing.
    for (name, args, says) in [
        (
            "destroy_empty_dir",
            &["destroy", "-auto-approve", "-no-color"][..],
            "Destroy complete! Resources: 0 destroyed.",
        ),
        (
            "refresh_empty_dir",
            &["refresh", "-no-color"][..],
            "Empty or non-existent state",
        ),
    ] {
        let dir = temp_dir();
        let t = terrane(dir.path(), args);
        assert_eq!(t.code, 0, "case {name}: {}", t.stderr);
        assert!(
            format!("{}{}", t.stdout, t.stderr).contains(says),
            "case {name}: {}{}",
            t.stdout,
            t.stderr
        );
        assert!(untouched(dir.path()), "case {name}: a state was created");
        if let Some(tf) = terraform_in(dir.path(), args) {
            assert_eq!(tf.code, 0, "case {name}: terraform: {}", tf.stderr);
        }
    }
    // The summaries Terraform gives for the refusals.
    for (name, args, summary) in [
        (
            "plan_says_why",
            &["plan", "-no-color"][..],
            "Error: No configuration files",
        ),
        (
            "apply_says_why",
            &["apply", "-auto-approve", "-no-color"][..],
            "Error: No configuration files",
        ),
    ] {
        let dir = temp_dir();
        let t = terrane(dir.path(), args);
        assert!(t.stderr.contains(summary), "case {name}: {}", t.stderr);
    }
}

#[test]
fn item1_help_for_every_command() {
    let dir = temp_dir();
    for c in [
        "init", "validate", "plan", "apply", "destroy", "fmt", "graph", "import",
    ] {
        for way in ["-help", "-h", "--help"] {
            let t = terrane(dir.path(), &[c, way]);
            assert_eq!(t.code, 0, "case {c}_{way}: {}", t.stderr);
            assert!(
                t.stdout
                    .starts_with(&format!("Usage: terrane [global options] {c}")),
                "case {c}_{way}: {}",
                t.stdout
            );
        }
        let t = terrane(dir.path(), &["help", c]);
        assert_eq!(t.code, 0, "case help_{c}");
        assert!(t.stdout.contains(&format!("terrane [global options] {c}")));
    }
    let t = terrane(dir.path(), &["-help"]);
    assert_eq!(t.code, 0);
    assert!(t.stdout.contains("Main commands:"), "case overview");
    assert!(untouched(dir.path()), "case help_runs_nothing");
}

/// Runs the same steps in two directories holding the same configuration,
/// one with terrane and one with Terraform, comparing exit codes and
/// output (tool names and whitespace made neutral).
fn side_by_side(name: &str, steps: &[&[&str]]) {
    let ours = temp_dir();
    let theirs = temp_dir();
    for d in [ours.path(), theirs.path()] {
        std::fs::write(d.join("main.tf"), CONFIG).unwrap();
    }
    for args in steps {
        let t = terrane(ours.path(), args);
        let Some(tf) = terraform_in(theirs.path(), args) else {
            return;
        };
        let step = format!("{name} {}", args.join(" "));
        assert_eq!(
            t.code, tf.code,
            "case {step}: exit code\nterrane:\n{}{}\nterraform:\n{}{}",
            t.stdout, t.stderr, tf.stdout, tf.stderr
        );
        if ["taint", "untaint", "state"].contains(&args[0]) {
            assert_eq!(
                neutral(&t.stdout),
                neutral(&tf.stdout),
                "case {step}: stdout"
            );
            assert_eq!(
                neutral(&t.stderr),
                neutral(&tf.stderr),
                "case {step}: stderr"
            );
        }
        if args[0] == "plan" {
            let says = |s: &str| s.contains("is tainted, so must be replaced");
            assert_eq!(
                says(&t.stdout),
                says(&tf.stdout),
                "case {step}: {}",
                t.stdout
            );
        }
    }
}

#[test]
fn item3_taint_and_untaint_as_in_terraform() {
    const APPLY: &[&str] = &["apply", "-auto-approve", "-no-color"];
    const PLAN: &[&str] = &["plan", "-detailed-exitcode", "-no-color"];
    side_by_side(
        "taint_then_plan_replaces",
        &[
            APPLY,
            &["taint", "-no-color", "terraform_data.d"],
            &["taint", "-no-color", "terraform_data.d"],
            PLAN,
            &["untaint", "-no-color", "terraform_data.d"],
            &["untaint", "-no-color", "terraform_data.d"],
            PLAN,
        ],
    );
    side_by_side(
        "missing_instances",
        &[
            APPLY,
            &["taint", "-no-color", "terraform_data.nope"],
            &[
                "taint",
                "-allow-missing",
                "-no-color",
                "terraform_data.nope",
            ],
            &["untaint", "-no-color", "terraform_data.nope"],
            &["taint", "-no-color"],
        ],
    );
}

#[test]
fn item3_environment_variables_as_in_terraform() {
    let ours = temp_dir();
    let theirs = temp_dir();
    for d in [ours.path(), theirs.path()] {
        std::fs::write(d.join("main.tf"), CONFIG).unwrap();
        std::fs::write(d.join("cli.tfrc"), "").unwrap();
    }
    let run_ours = |args: &[&str], env: &[(&str, &str)]| -> Out {
        let mut c = isolated(env!("CARGO_BIN_EXE_terrane"), ours.path());
        c.args(args)
            .env("TF_CLI_CONFIG_FILE", ours.path().join("cli.tfrc"));
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().expect("terrane runs").into()
    };
    let Some(tf) = terraform() else {
        return;
    };
    let cli = theirs.path().join("cli.tfrc");
    let run_theirs = |args: &[&str], env: &[(&str, &str)]| {
        let mut all = vec![("TF_CLI_CONFIG_FILE", cli.to_str().unwrap())];
        all.extend_from_slice(env);
        tf.run(theirs.path(), args, &all)
    };
    // Flags from TF_CLI_ARGS_plan are checked like any other.
    let env = [("TF_CLI_ARGS_plan", "-bogus")];
    let (t, f) = (
        run_ours(&["plan", "-no-color"], &env),
        run_theirs(&["plan", "-no-color"], &env),
    );
    assert_eq!(
        (t.code, neutral(&t.stderr)),
        (f.code, neutral(&f.stderr)),
        "case bad_flag_from_env"
    );
    // TF_CLI_ARGS reaches the command: -detailed-exitcode from it.
    let env = [("TF_CLI_ARGS", "-detailed-exitcode")];
    let (t, f) = (
        run_ours(&["plan", "-no-color"], &env),
        run_theirs(&["plan", "-no-color"], &env),
    );
    assert_eq!(
        (t.code, f.code),
        (2, 2),
        "case flag_from_env_applies: {}",
        t.stderr
    );
    // TF_IN_AUTOMATION: no suggestion of a next command after the plan.
    let note = "You didn't use the -out option";
    let env = [("TF_IN_AUTOMATION", "1")];
    let t = run_ours(&["plan", "-no-color"], &env);
    assert!(
        !t.stdout.contains(note),
        "case in_automation_no_note: {}",
        t.stdout
    );
    let t = run_ours(&["plan", "-no-color"], &[]);
    assert!(t.stdout.contains(note), "case note_otherwise: {}", t.stdout);
    // TF_INPUT=0: apply without -auto-approve cannot ask, so it fails
    // without applying, as Terraform's does.
    let env = [("TF_INPUT", "0")];
    let (t, f) = (
        run_ours(&["apply", "-no-color"], &env),
        run_theirs(&["apply", "-no-color"], &env),
    );
    assert_eq!(
        t.code, f.code,
        "case tf_input_false: {}\n{}",
        t.stderr, f.stderr
    );
    assert!(
        untouched_state(ours.path()),
        "case tf_input_false_applied_nothing"
    );
}

/// Whether no resource has been recorded (the state may exist).
fn untouched_state(dir: &Path) -> bool {
    let mut c = isolated(env!("CARGO_BIN_EXE_terrane"), dir);
    c.args(["state", "list"])
        .env("TF_CLI_CONFIG_FILE", dir.join("cli.tfrc"));
    let o: Out = c.output().expect("terrane runs").into();
    o.stdout.trim().is_empty()
}

/// `providers schema -json` for the same provider binaries (a plugin
/// under `dev_overrides`) gives the same document as Terraform's.
#[test]
fn item3_providers_schema_json_as_in_terraform() {
    let Some(tf) = terraform() else {
        return;
    };
    let work = temp_dir();
    let random =
        terrane_testkit::built_binary("terrane-provider-random", "terraform-provider-random");
    let rc = terrane_testkit::dev_overrides(work.path(), &[("hashicorp/random", &random)]);
    let config = "terraform {\n  required_providers {\n    random = { source = \"hashicorp/random\" }\n  }\n}\nresource \"random_id\" \"x\" {\n  byte_length = 4\n}\n";
    let (ours, theirs) = (work.path().join("ours"), work.path().join("theirs"));
    for d in [&ours, &theirs] {
        std::fs::create_dir_all(d).unwrap();
        std::fs::write(d.join("main.tf"), config).unwrap();
    }
    let t: Out = isolated(env!("CARGO_BIN_EXE_terrane"), &ours)
        .args(["providers", "schema", "-json"])
        .env("TF_CLI_CONFIG_FILE", &rc)
        .output()
        .expect("terrane runs")
        .into();
    let f = tf.run(
        &theirs,
        &["providers", "schema", "-json"],
        &[("TF_CLI_CONFIG_FILE", &rc)],
    );
    assert_eq!(
        (t.code, f.code),
        (0, 0),
        "case exit_codes: {}\n{}",
        t.stderr,
        f.stderr
    );
    let parse = |s: &str| -> serde_json::Value {
        serde_json::from_str(s).unwrap_or_else(|e| panic!("not JSON ({e}): {s}"))
    };
    let (t, f) = (parse(&t.stdout), parse(&f.stdout));
    assert_eq!(
        t["format_version"], f["format_version"],
        "case format_version"
    );
    let key = "registry.terraform.io/hashicorp/random";
    assert!(
        f["provider_schemas"][key].is_object(),
        "case terraform_lists_it: {f}"
    );
    assert_eq!(
        t["provider_schemas"][key], f["provider_schemas"][key],
        "case same_schema_document"
    );
    // The tree of requirements names it as Terraform's does.
    let t: Out = isolated(env!("CARGO_BIN_EXE_terrane"), &ours)
        .args(["providers", "-no-color"])
        .env("TF_CLI_CONFIG_FILE", &rc)
        .output()
        .expect("terrane runs")
        .into();
    let f = tf.run(
        &theirs,
        &["providers", "-no-color"],
        &[("TF_CLI_CONFIG_FILE", &rc)],
    );
    assert_eq!(t.code, f.code, "case providers_exit: {}", t.stderr);
    let tree = |s: &str| -> Vec<String> {
        s.lines()
            .filter(|l| l.contains("provider["))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(
        tree(&t.stdout),
        tree(&f.stdout),
        "case providers_tree:\n{}\n{}",
        t.stdout,
        f.stdout
    );
}

#[test]
fn item3_state_replace_provider_as_in_terraform() {
    side_by_side(
        "replace_provider",
        &[
            &["apply", "-auto-approve", "-no-color"],
            &[
                "state",
                "replace-provider",
                "-auto-approve",
                "-no-color",
                "terraform.io/builtin/terraform",
                "acme/terraform",
            ],
            &[
                "state",
                "replace-provider",
                "-auto-approve",
                "-no-color",
                "hashicorp/nothing",
                "acme/nothing",
            ],
            &["state", "replace-provider", "-no-color", "only-one"],
        ],
    );
    // What the state records afterwards is the new address.
    let dir = temp_dir();
    std::fs::write(dir.path().join("main.tf"), CONFIG).unwrap();
    terrane(dir.path(), &["apply", "-auto-approve", "-no-color"]);
    let args = [
        "state",
        "replace-provider",
        "-auto-approve",
        "terraform.io/builtin/terraform",
        "acme/terraform",
    ];
    assert_eq!(terrane(dir.path(), &args).code, 0, "case replaced");
    let pulled = terrane(dir.path(), &["state", "pull"]).stdout;
    assert!(
        pulled.contains("provider[\\\"registry.terraform.io/acme/terraform\\\"]"),
        "case recorded: {pulled}"
    );
}

const UNFORMATTED: &str =
    "resource \"terraform_data\" \"d\" {\ninput = \"x\"\n  triggers_replace = [1,2]\n}\n";

/// Runs `program args` in `dir` with `input` on standard input.
fn piped(program: &Path, dir: &Path, args: &[&str], input: &str) -> Out {
    use std::io::Write;
    let mut child = isolated(program, dir)
        .args(args)
        .env("TF_CLI_CONFIG_FILE", dir.join("cli.tfrc"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().expect("finishes").into()
}

#[test]
fn item3_fmt_options_as_in_terraform() {
    let Some(tf) = terraform() else {
        return;
    };
    let steps: &[&[&str]] = &[
        &["fmt", "-no-color", "-diff", "-write=false"],
        &["fmt", "-no-color", "-list=false", "-check"],
        &["fmt", "-no-color", "-check"],
        &["fmt", "-no-color", "-list=false"],
        &["fmt", "-no-color", "-check"],
    ];
    let (ours, theirs) = (temp_dir(), temp_dir());
    for d in [ours.path(), theirs.path()] {
        std::fs::write(d.join("main.tf"), UNFORMATTED).unwrap();
        std::fs::write(d.join("cli.tfrc"), "").unwrap();
    }
    for args in steps {
        let t = terrane(ours.path(), args);
        let f = terraform_in(theirs.path(), args).unwrap();
        let step = args.join(" ");
        assert_eq!(
            t.code, f.code,
            "case {step}: exit\n{}\n{}",
            t.stderr, f.stderr
        );
        assert_eq!(t.stdout, f.stdout, "case {step}: stdout");
        let (a, b) = (
            std::fs::read_to_string(ours.path().join("main.tf")).unwrap(),
            std::fs::read_to_string(theirs.path().join("main.tf")).unwrap(),
        );
        assert_eq!(a, b, "case {step}: the file afterwards");
    }
    // Standard input to standard output, and -check on it.
    let dir = temp_dir();
    std::fs::write(dir.path().join("cli.tfrc"), "").unwrap();
    for args in [&["fmt", "-"][..], &["fmt", "-check", "-"][..]] {
        let t = piped(
            Path::new(env!("CARGO_BIN_EXE_terrane")),
            dir.path(),
            args,
            UNFORMATTED,
        );
        let f = piped(&tf.program, dir.path(), args, UNFORMATTED);
        let step = args.join(" ");
        assert_eq!(
            (t.code, &t.stdout),
            (f.code, &f.stdout),
            "case stdin {step}: {}",
            t.stderr
        );
    }
}

#[test]
fn item3_compact_warnings_as_in_terraform() {
    let Some(tf) = terraform() else {
        return;
    };
    let config = "resource \"terraform_data\" \"d\" {\n  input = \"x\"\n}\n\ncheck \"c\" {\n  assert {\n    condition     = terraform_data.d.input == \"y\"\n    error_message = \"not y\"\n  }\n}\n";
    let (ours, theirs) = (temp_dir(), temp_dir());
    for d in [ours.path(), theirs.path()] {
        std::fs::write(d.join("main.tf"), config).unwrap();
        std::fs::write(d.join("cli.tfrc"), "").unwrap();
    }
    let args = ["plan", "-no-color", "-compact-warnings"];
    let t = terrane(ours.path(), &args);
    let f = tf.run(
        theirs.path(),
        &args,
        &[(
            "TF_CLI_CONFIG_FILE",
            theirs.path().join("cli.tfrc").to_str().unwrap(),
        )],
    );
    assert_eq!(t.code, f.code, "case exit: {}\n{}", t.stderr, f.stderr);
    let block = |s: &str| -> String {
        let start = s.find("Warnings:").unwrap_or(s.len());
        let end = s
            .find("without -compact-warnings")
            .map_or(s.len(), |e| e + 25);
        neutral(&s[start..end.max(start)])
    };
    assert!(
        !block(&f.stdout).is_empty(),
        "case terraform_warns: {}",
        f.stdout
    );
    assert_eq!(
        block(&t.stdout),
        block(&f.stdout),
        "case compact_block:\n{}\n{}",
        t.stdout,
        f.stdout
    );
    assert!(
        !t.stdout.contains("error_message") && !t.stdout.contains("\nWarning:"),
        "case no_full_warning: {}",
        t.stdout
    );
}
