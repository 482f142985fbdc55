//! `terrane plan | head -1` and friends (issue 22 item 8.4): every command
//! survives a standard output or error whose reader went away. Each run
//! gets a pipe whose read end is closed before terrane starts, so every
//! write fails with EPIPE (deterministically, not only past a pipe
//! buffer). The run must exit with its usual code, not panic (Rust's
//! `println!` would exit 101 with "failed printing to stdout"), and an
//! apply must still record what it created.

use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::Stdio;
use terrane_testkit::isolated;

const CONFIG: &str = r#"
resource "terraform_data" "t" {
  input = "x"
}
output "o" {
  value = terraform_data.t.output
}
"#;

/// A pipe's write end whose read end is already closed.
fn closed_pipe() -> OwnedFd {
    let (read, write) = nix::unistd::pipe().expect("pipe");
    drop(read);
    write
}

#[derive(Clone, Copy, Debug)]
enum Closed {
    Stdout,
    Stderr,
    Both,
}

struct Case {
    name: &'static str,
    args: &'static [&'static str],
    closed: Closed,
    /// The exit code the command has with a reader on both streams.
    code: i32,
}

/// Runs terrane in `dir` with the `closed` stream(s) on a reader-less
/// pipe; returns the exit code and the text of the open stream, if any.
fn run(dir: &Path, args: &[&str], closed: Closed) -> (i32, String) {
    let mut cmd = isolated(env!("CARGO_BIN_EXE_terrane"), dir);
    cmd.args(args)
        .env("NO_COLOR", "1")
        .env("RUST_BACKTRACE", "1");
    let stdout_closed = matches!(closed, Closed::Stdout | Closed::Both);
    let stderr_closed = matches!(closed, Closed::Stderr | Closed::Both);
    cmd.stdout(if stdout_closed {
        Stdio::from(closed_pipe())
    } else {
        Stdio::piped()
    });
    cmd.stderr(if stderr_closed {
        Stdio::from(closed_pipe())
    } else {
        Stdio::piped()
    });
    let out = cmd.output().expect("terrane runs");
    let open = if stdout_closed {
        &out.stderr
    } else {
        &out.stdout
    };
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(open).into_owned(),
    )
}

fn check(dir: &Path, case: &Case) {
    let (code, open) = run(dir, case.args, case.closed);
    assert!(
        !open.contains("panicked") && !open.contains("Broken pipe"),
        "case {}: terrane panicked on a closed {:?}:\n{open}",
        case.name,
        case.closed
    );
    assert_eq!(
        code, case.code,
        "case {}: exit code with a closed {:?} (101 is a panic); open stream:\n{open}",
        case.name, case.closed
    );
}

#[test]
fn item8_4_closed_stdout_or_stderr_is_not_a_panic() {
    let dir = terrane_testkit::temp_dir();
    std::fs::write(dir.path().join("main.tf"), CONFIG).unwrap();
    let before_apply = [
        Case {
            name: "version_stdout",
            args: &["version"],
            closed: Closed::Stdout,
            code: 0,
        },
        Case {
            name: "help_stdout",
            args: &["-help"],
            closed: Closed::Stdout,
            code: 0,
        },
        Case {
            name: "plan_stdout",
            args: &["plan", "-detailed-exitcode"],
            closed: Closed::Stdout,
            code: 2,
        },
        Case {
            name: "plan_json_stdout",
            args: &["plan", "-json"],
            closed: Closed::Stdout,
            code: 0,
        },
        Case {
            name: "plan_both",
            args: &["plan", "-detailed-exitcode"],
            closed: Closed::Both,
            code: 2,
        },
        Case {
            name: "plan_error_stderr",
            args: &["plan", "-var-file=missing.tfvars"],
            closed: Closed::Stderr,
            code: 1,
        },
        // The apply's progress and summary go nowhere, yet it finishes and
        // records the object (checked below).
        Case {
            name: "apply_stdout",
            args: &["apply", "-auto-approve"],
            closed: Closed::Stdout,
            code: 0,
        },
    ];
    for case in &before_apply {
        check(dir.path(), case);
    }
    let after_apply = [
        Case {
            name: "state_list_stdout",
            args: &["state", "list"],
            closed: Closed::Stdout,
            code: 0,
        },
        Case {
            name: "state_pull_stdout",
            args: &["state", "pull"],
            closed: Closed::Stdout,
            code: 0,
        },
        Case {
            name: "show_stdout",
            args: &["show"],
            closed: Closed::Stdout,
            code: 0,
        },
        Case {
            name: "show_json_stdout",
            args: &["show", "-json"],
            closed: Closed::Stdout,
            code: 0,
        },
        Case {
            name: "output_stdout",
            args: &["output"],
            closed: Closed::Stdout,
            code: 0,
        },
        Case {
            name: "output_raw_stdout",
            args: &["output", "-raw", "o"],
            closed: Closed::Stdout,
            code: 0,
        },
        Case {
            name: "noop_plan_both",
            args: &["plan", "-detailed-exitcode"],
            closed: Closed::Both,
            code: 0,
        },
        Case {
            name: "missing_output_stderr",
            args: &["output", "nope"],
            closed: Closed::Stderr,
            code: 1,
        },
    ];
    for case in &after_apply {
        check(dir.path(), case);
    }
    // The apply whose stdout was closed recorded its object.
    let list = isolated(env!("CARGO_BIN_EXE_terrane"), dir.path())
        .args(["state", "list"])
        .output()
        .expect("terrane runs");
    assert_eq!(
        String::from_utf8_lossy(&list.stdout),
        "terraform_data.t\n",
        "case apply_stdout_recorded"
    );
}
