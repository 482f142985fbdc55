//! The commands, one module each, and [`dispatch`], the one place that
//! maps a command line to its module. Exit codes follow Terraform's: 0
//! success, 1 error, and with `-detailed-exitcode` 2 for a plan with
//! changes. Commands import the session and terrane-render; none imports
//! another, except `show` using `state::show` for the state's objects.

mod apply;
mod fmt;
mod force_unlock;
mod graph;
mod import;
mod init;
mod output;
mod plan;
mod show;
mod state;
mod validate;

use crate::args::Args;
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
    match cmd.as_slice() {
        [] | ["help"] => {
            print!("{}", USAGE);
            0
        }
        ["version"] | ["-version"] => {
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
        ["init"] => init::init(&ui, &dir).await,
        ["validate"] => validate::validate(&ui, &dir).await,
        ["plan"] => plan::plan(&ui, &dir, &a).await,
        ["apply"] => apply::apply(&ui, &dir, &a, None).await,
        ["destroy"] => apply::apply(&ui, &dir, &a, Some(PlanMode::Destroy)).await,
        ["refresh"] => apply::apply(&ui, &dir, &a, Some(PlanMode::RefreshOnly)).await,
        ["import"] => import::import(&ui, &dir, &a).await,
        ["show"] => show::show(&ui, &dir, &a).await,
        ["output"] => off_runtime(|| output::output(&ui, &dir, &a)),
        ["graph"] => graph::graph(&ui, &dir, &a),
        ["fmt"] => fmt::fmt(&ui, &dir, &a),
        ["force-unlock"] => off_runtime(|| force_unlock::force_unlock(&ui, &dir, &a)),
        ["state", "show"] => state::show::state_show(&ui, &dir, &a).await,
        ["state", "push"] => state::push(&ui, &dir, &a).await,
        ["state", sub] => off_runtime(|| state::subcommand(&ui, &dir, sub, &a)),
        other => ui.error(
            "Unknown command",
            format!(
                "{:?} is not a terrane command. Run \"terrane help\" for the list.",
                other.join(" ")
            ),
        ),
    }
}

const USAGE: &str = "Usage: terrane [global options] <subcommand> [args]

Main commands:
  init          Prepare the working directory (providers, lock file)
  validate      Check whether the configuration is valid
  plan          Show changes required by the current configuration
  apply         Create or update infrastructure
  destroy       Destroy previously-created infrastructure

All other commands:
  fmt           Reformat your configuration in the standard style
  force-unlock  Release a stuck lock on the current workspace
  graph         Generate a Graphviz graph of the steps in an operation
  import        Associate existing infrastructure with a terrane resource
  output        Show output values from your root module
  refresh       Update the state to match remote systems
  show          Show the current state or a saved plan
  state         Advanced state management (list, show, rm, mv, pull, push,
                rotate-key)
  version       Show the current terrane version

Global options:
  -chdir=DIR    Switch to a different working directory before executing the
                given subcommand.
";

fn platform() -> String {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        a => a,
    };
    format!("{}_{arch}", std::env::consts::OS)
}
