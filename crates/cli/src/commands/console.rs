//! `console`: evaluates expressions in the root module, with the state
//! and the configuration loaded, and prints their values as Terraform's
//! console does (the `output` command's HCL form). From a pipe, as
//! Terraform: every line is evaluated, the first error ends the run (exit
//! 1), and the last line's value is printed at the end (`exit` leaves
//! printing nothing). On a terminal: a
//! `> ` prompt, each value printed as it comes, errors reported without
//! leaving, `exit` or end of input to leave. The state is read, never
//! changed, and not locked.

use crate::args::Args;
use crate::session::{load_engine, options, store_config, Ui};
use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;
use terrane_engine::PlanMode;
use terrane_render::text;

/// Where a console line comes from, in diagnostics (Terraform's name).
const SOURCE: &str = "<console-input>";

pub async fn console(ui: &Ui, dir: &Path, a: &Args) -> u8 {
    let engine = match load_engine(dir) {
        Ok(e) => e,
        Err(d) => {
            ui.diags(&d);
            return 1;
        }
    };
    if let Err(d) = crate::stateconf::refuse_backend(&engine.core.config.module) {
        ui.diags(&[d]);
        return 1;
    }
    let mut opts = match options(ui, &engine, a, PlanMode::Normal) {
        Ok(o) => o,
        Err(c) => return c,
    };
    // Against the state as recorded; -plan refreshes first, as a plan does.
    opts.refresh = a.has("plan");
    let config = match store_config(ui, dir, &engine.core.config.module) {
        Ok(c) => c,
        Err(c) => return c,
    };
    // No SQLite state yet: the empty state, without creating one (the
    // console never writes, as Terraform's creates nothing).
    let unrecorded = matches!(&config.location,
        terrane_state::StoreLocation::Sqlite(path) if !path.exists());
    let snapshot = if unrecorded {
        terrane_state::Snapshot::empty()
    } else {
        match crate::session::start_from_state(Err(config), "OperationTypeInvalid", None, false)
            .await
        {
            Ok((_, _, s, _)) => s,
            Err(f) => {
                engine.shutdown().await;
                return f.report(ui);
            }
        }
    };
    let (eval, diags) = engine.evaluation(&snapshot, opts).await;
    if crate::session::has_errors(&diags) {
        engine.shutdown().await;
        ui.diags(&diags);
        return 1;
    }
    let stdin = std::io::stdin();
    let code = if stdin.is_terminal() {
        interactive(ui, &eval, stdin.lock())
    } else {
        piped(ui, &eval, stdin.lock())
    };
    engine.shutdown().await;
    code
}

/// What one console line asks for.
enum Line {
    /// The value's text (empty for an empty line).
    Value(String),
    Exit,
    Failed(Vec<terrane_config::Diagnostic>),
}

fn handle(eval: &terrane_engine::Evaluation, line: &str) -> Line {
    let line = line.trim();
    match line {
        "" => Line::Value(String::new()),
        "exit" => Line::Exit,
        "help" => Line::Value(HELP.to_string()),
        _ => {
            // `type(X)` answers with X's type, printed as Terraform's
            // console prints its type values (over several lines).
            if let Some(arg) = type_call_argument(line) {
                let (v, diags) = eval.eval_str(SOURCE, arg);
                if crate::session::has_errors(&diags) {
                    return Line::Failed(diags);
                }
                return Line::Value(text::type_text(v.ty(), 0));
            }
            let (v, diags) = eval.eval_str(SOURCE, line);
            if crate::session::has_errors(&diags) {
                return Line::Failed(diags);
            }
            Line::Value(text::hcl_value(&v, 0))
        }
    }
}

/// The argument's text when `line` is exactly one call of `type`.
fn type_call_argument(line: &str) -> Option<&str> {
    let Ok(terrane_hcl::expr::Expression::FuncCall(f)) = terrane_hcl::parser::parse_expr(line)
    else {
        return None;
    };
    if f.name.name.as_str() != "type" || !f.name.namespace.is_empty() || f.args.iter().count() != 1
    {
        return None;
    }
    let span = terrane_hcl::Span::span(f.args.iter().next()?)?;
    line.get(span)
}

const HELP: &str = "The terrane console allows you to experiment with terrane interpolations.\nYou may access resources in the state (if you have one) just as you would\nfrom a configuration. For example: \"aws_instance.foo.id\" would evaluate\nto the ID of \"aws_instance.foo\" if it exists in your state.\n\nType in the interpolation to test and hit <enter> to see the result.\n\nTo exit the console, type \"exit\" and hit <enter>, or use Control-C or\nControl-D.";

/// Lines from a pipe: the last value is printed, the first error ends it.
fn piped(ui: &Ui, eval: &terrane_engine::Evaluation, input: impl BufRead) -> u8 {
    let mut last = String::new();
    for line in input.lines() {
        let line = match line {
            Ok(l) => l,
            Err(e) => return ui.error("Failed to read the console input", e.to_string()),
        };
        match handle(eval, &line) {
            Line::Value(v) => last = v,
            // As Terraform: leaving prints nothing, not even the last value.
            Line::Exit => return 0,
            Line::Failed(d) => {
                ui.diags(&d);
                // Terraform's piped console ends its errors with a blank line.
                eprintln!();
                return 1;
            }
        }
    }
    println!("{last}");
    0
}

/// Lines from a terminal, each answered as it comes.
fn interactive(ui: &Ui, eval: &terrane_engine::Evaluation, mut input: impl BufRead) -> u8 {
    loop {
        print!("> ");
        let _ = std::io::stdout().flush();
        let mut line = String::new();
        match input.read_line(&mut line) {
            Ok(0) => {
                println!();
                return 0;
            }
            Ok(_) => {}
            Err(e) => return ui.error("Failed to read the console input", e.to_string()),
        }
        match handle(eval, &line) {
            Line::Value(v) if v.is_empty() => {}
            Line::Value(v) => println!("{v}"),
            Line::Exit => return 0,
            Line::Failed(d) => ui.diags(&d),
        }
    }
}
