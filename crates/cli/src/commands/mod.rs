//! The commands, one module each, and [`dispatch`], the one place that
//! maps a command line to its module. Exit codes follow Terraform's: 0
//! success, 1 error, and with `-detailed-exitcode` 2 for a plan with
//! changes. Commands import the session and terrane-render; none imports
//! another, except `show` using `state::show` for the state's objects.

mod apply;
mod console;
mod fmt;
mod force_unlock;
mod generate;
mod get;
mod graph;
mod import;
mod init;
mod init_backend;
mod metadata;
mod output;
mod plan;
mod providers;
mod show;
mod state;
mod taint;
mod test;
mod test_diff;
mod validate;
mod workspace;

use crate::args::{ArgError, Args};
use crate::session::{off_runtime, Ui};
use std::io::IsTerminal;
use std::path::PathBuf;
use terrane_engine::PlanMode;
use terrane_render::stream;
use terrane_render::text::Style;

pub async fn dispatch(a: Args) -> u8 {
    let cmd: Vec<&str> = a.command.iter().map(String::as_str).collect();
    let streaming = matches!(
        cmd.as_slice(),
        ["plan"] | ["apply"] | ["destroy"] | ["refresh"]
    ) && a.has("json");
    let ui = Ui {
        style: Style {
            color: !a.has("no-color") && !streaming && std::io::stdout().is_terminal(),
        },
        json: a.has("json"),
        stream: streaming,
    };
    if streaming {
        println!("{}", stream::version());
    }
    let dir = PathBuf::from(".");
    crate::vars::remember(&a);
    match cmd.as_slice() {
        ["version"] => {
            if ui.json {
                println!(
                    "{}",
                    serde_json::json!({"terraform_version": terrane_engine::TERRAFORM_VERSION, "terrane_version": env!("CARGO_PKG_VERSION"), "platform": platform(), "provider_selections": {}})
                );
            } else {
                println!(
                    "terrane v{}\non {}\n(compatible with Terraform v{})",
                    env!("CARGO_PKG_VERSION"),
                    platform(),
                    terrane_engine::TERRAFORM_VERSION
                );
            }
            0
        }
        ["init"] => init::init(&ui, &dir, &a).await,
        ["get"] => get::get(&ui, &dir, &a).await,
        ["validate"] => validate::validate(&ui, &dir, &a).await,
        ["plan"] => plan::plan(&ui, &dir, &a).await,
        ["apply"] => apply::apply(&ui, &dir, &a, None).await,
        ["destroy"] => apply::apply(&ui, &dir, &a, Some(PlanMode::Destroy)).await,
        ["refresh"] => apply::apply(&ui, &dir, &a, Some(PlanMode::RefreshOnly)).await,
        ["import"] => import::import(&ui, &dir, &a).await,
        ["show"] => show::show(&ui, &dir, &a).await,
        ["metadata", "functions"] => metadata::functions(&ui),
        ["output"] => off_runtime(|| output::output(&ui, &dir, &a)),
        ["graph"] => graph::graph(&ui, &dir, &a),
        ["console"] => console::console(&ui, &dir, &a).await,
        ["fmt"] => fmt::fmt(&ui, &dir, &a),
        ["force-unlock"] => off_runtime(|| force_unlock::force_unlock(&ui, &dir, &a)),
        ["providers"] => providers::tree(&ui, &dir),
        ["providers", "schema"] => providers::schema(&ui, &dir).await,
        ["providers", "lock"] => providers::lock(&ui, &dir, &a).await,
        ["providers", "mirror"] => providers::mirror(&ui, &dir, &a).await,
        ["test"] => test::test(&ui, &dir, &a).await,
        ["taint"] => off_runtime(|| taint::taint(&ui, &dir, &a, true)),
        ["untaint"] => off_runtime(|| taint::taint(&ui, &dir, &a, false)),
        ["state", "show"] => state::show::state_show(&ui, &dir, &a).await,
        ["state", "replace-provider"] => {
            off_runtime(|| state::replace_provider::replace_provider(&ui, &dir, &a))
        }
        ["state", "push"] => state::push(&ui, &dir, &a).await,
        ["workspace", sub] => off_runtime(|| workspace::workspace(&ui, &dir, sub, &a)),
        ["state", sub] => off_runtime(|| state::subcommand(&ui, &dir, sub, &a)),
        // The parser admits only the commands of the table.
        other => unreachable!("command {other:?} is in the table but not dispatched"),
    }
}

/// The message for a command line that cannot run, as Terraform words
/// it (`-no-color` cannot be known here: plain text).
pub fn arg_error(e: &ArgError) -> String {
    let more = |command: &str| {
        format!("\nFor more help on using this command, run:\n  terrane {command} -help\n")
    };
    match e {
        ArgError::BeforeCommand(c) => format!("Invalid flags before the subcommand. If these flags are for\nthe subcommand, please put them after the subcommand.\n\n{}", c.map(crate::cmdspec::help).unwrap_or_default()),
        ArgError::UnknownCommand(c) => format!("terrane has no command named {c:?}.\n\nTo see all of terrane's top-level commands, run:\n  terrane -help\n"),
        ArgError::Flag { command, message } => {
            format!("\nError: Failed to parse command-line flags\n\n{message}\n{}", more(command))
        }
        ArgError::Env { variable, message } => {
            format!("\nError: Failed to parse command-line flags\n\nThe value of {variable} cannot be split into arguments: {message}.\n")
        }
        ArgError::TooMany { command } => format!("\nError: Too many command line arguments\n\nTo specify a working directory for the {command}, use the global -chdir flag.\n{}", more(command)),
    }
}

fn platform() -> String {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        a => a,
    };
    format!("{}_{arch}", std::env::consts::OS)
}
