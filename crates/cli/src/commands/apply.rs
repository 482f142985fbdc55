//! `apply`, `destroy` and `refresh`: plan (or read a saved plan), confirm,
//! apply under the lock, and save an errored state when the state cannot
//! be written.

use crate::args::Args;
use crate::session::{
    has_config_files, load, off_runtime, on_interrupt, options, start_from_state, store_config,
    StateFailure, Ui,
};
use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;
use std::sync::atomic::Ordering;
use terrane_config::Diagnostic;
use terrane_engine::{Engine, Plan, PlanMode};
use terrane_render::{human, planfile, stream, text};
use terrane_state::Snapshot;

pub async fn apply(ui: &Ui, dir: &Path, a: &Args, mode: Option<PlanMode>) -> u8 {
    if !has_config_files(dir) && a.positional.is_empty() {
        if let Some(code) = without_configuration(ui, dir, mode) {
            return code;
        }
    }
    let engine = match load(ui, dir) {
        Ok(e) => e,
        Err(c) => return c,
    };
    let config = match store_config(ui, dir, &engine.core.config.module) {
        Ok(c) => c,
        Err(c) => return c,
    };
    // The key an emergency state file would be sealed with.
    let sealing = config.encryption.clone();
    let key_var = crate::errored::key_var(engine.core.config.module.state.as_ref()).to_string();
    // A saved plan is opened with the store's key: the store is opened
    // first then (otherwise while the providers start).
    let mut store_or_config = Err(config);
    let saved: Option<Plan> = match (a.positional.first(), mode) {
        (Some(f), None) => {
            let bytes = match std::fs::read(f) {
                Ok(b) => b,
                Err(e) => return ui.error("Failed to load the saved plan", format!("{f}: {e}")),
            };
            let store = match store_or_config {
                Err(config) => match off_runtime(|| crate::backendconf::open(&config)) {
                    Ok(s) => s,
                    Err(e) => return StateFailure::Open(e.to_string()).report(ui),
                },
                Ok(s) => s,
            };
            let plan = planfile::read(&bytes, store.cipher());
            store_or_config = Ok(store);
            match plan {
                Ok(p) => Some(p),
                Err(e) => return ui.error("Failed to load the saved plan", format!("{f}: {e}")),
            }
        }
        _ => None,
    };
    let mut opts = match options(ui, &engine, a, mode.unwrap_or(PlanMode::Normal)) {
        Ok(o) => o,
        Err(c) => return c,
    };
    if let Some(p) = &saved {
        // The plan's variables, and the ephemeral ones given now: a plan
        // file never records those.
        let given = std::mem::replace(&mut opts.vars, p.variables.clone());
        let declared = &engine.core.config.module.variables;
        for (k, v) in given {
            if declared.get(&k).is_some_and(|d| d.ephemeral) {
                opts.vars.insert(k, v);
            }
        }
        opts.mode = p.mode;
    }
    let op = if opts.mode == PlanMode::Destroy {
        "OperationTypeDestroy"
    } else {
        "OperationTypeApply"
    };
    let timeout = match crate::session::lock_timeout(ui, a) {
        Ok(t) => t,
        Err(c) => return c,
    };
    engine.prestart_providers();
    let started = start_from_state(store_or_config, op, Some(timeout), true).await;
    let (_store, mut run, mut snapshot) = match started {
        Ok((store, Some(run), s, taken_over)) => {
            if let Some(h) = taken_over {
                ui.diags(&[crate::stateconf::takeover_note(&h)]);
            }
            (store, run, s)
        }
        Ok((_, None, _, _)) => unreachable!("a kept lock is returned"),
        Err(f) => {
            engine.shutdown().await;
            return f.report(ui);
        }
    };
    if let Some(d) =
        crate::stateconf::unmigrated_tfstate(dir, &engine.core.config.module, &snapshot)
    {
        engine.shutdown().await;
        let _ = off_runtime(|| run.finish());
        ui.diags(&[d]);
        return 1;
    }
    on_interrupt(&engine);
    let plan = match saved {
        Some(p) => {
            if let Err(e) = terrane_state::check_plan_freshness(&snapshot, &p.lineage, p.serial) {
                let _ = off_runtime(|| run.finish());
                return ui.error("Saved plan is stale", e.to_string());
            }
            p
        }
        None => {
            // The plan takes the state (one copy of a large state, not
            // two); it is read again below, under the lock this run
            // holds, so nothing has written it meanwhile.
            let p = engine.plan_owned(snapshot, opts.clone()).await;
            ui.plan_diags(&p.diagnostics, a);
            if p.has_errors() {
                if !ui.stream {
                    ui.print_plan(&p);
                }
                engine.shutdown().await;
                let _ = off_runtime(|| run.finish());
                return 1;
            }
            snapshot = match off_runtime(|| run.snapshot()) {
                Ok(s) => s,
                Err(e) => {
                    engine.shutdown().await;
                    let _ = off_runtime(|| run.finish());
                    return ui.error("Failed to read state", e.to_string());
                }
            };
            if ui.stream {
                for l in stream::plan(&p, "apply") {
                    println!("{l}");
                }
            } else if !refresh_command(a) {
                ui.print_plan(&p);
                ui.compact_warnings(&p.diagnostics, a);
            }
            // Refresh can change the state without drift (an object
            // upgraded to its provider's current schema): then the apply
            // runs, to record it, as Terraform's does.
            let refreshed = p
                .prior_state
                .as_ref()
                .is_some_and(|s| s.resources != snapshot.resources);
            if !p.has_changes()
                && !refreshed
                && (opts.mode != PlanMode::RefreshOnly || p.drift.is_empty())
            {
                engine.shutdown().await;
                let _ = off_runtime(|| run.finish());
                if ui.stream {
                    println!("{}", stream::apply_summary((0, 0, 0, 0), "apply"));
                } else {
                    if !refresh_command(a) {
                        println!("\n{}", ui.style.bold(&summary(opts.mode, (0, 0, 0, 0))));
                    }
                    print_outputs_after(&snapshot);
                }
                return 0;
            }
            let question = match opts.mode {
                PlanMode::Destroy => "Do you really want to destroy all resources?",
                _ => "Do you want to perform these actions?",
            };
            // Nothing to approve when only the refreshed state is saved.
            if (p.has_changes() || !refreshed) && !confirm(ui, a, question) {
                engine.shutdown().await;
                let _ = off_runtime(|| run.finish());
                return 1;
            }
            p
        }
    };
    let total = plan
        .changes
        .iter()
        .filter(|c| c.action != terrane_engine::Action::NoOp)
        .count();
    let deferred = plan.deferred.len();
    let ticker = progress(&engine, total);
    let (result, run) = engine.apply_owned(plan, snapshot, run, opts.clone()).await;
    ticker.abort();
    engine.shutdown().await;
    if let Err(e) = off_runtime(|| run.finish()) {
        ui.diags(&[Diagnostic::error(
            "Failed to release the state lock",
            e.to_string(),
            None,
        )]);
    }
    ui.diags(&result.diagnostics);
    if let Some((state, unrecorded)) = &result.errored_state {
        let key = sealing
            .as_ref()
            .map(|enc| crate::errored::Key { enc, var: &key_var });
        crate::errored::save(ui, dir, state, *unrecorded, key);
    }
    let interrupted = engine.interrupt_flag().load(Ordering::SeqCst);
    if interrupted {
        eprintln!("\nterrane was interrupted: operations in flight finished and were saved; run apply again to finish the rest.");
    }
    if result.has_errors() || interrupted {
        return 1;
    }
    if ui.stream {
        let op = if opts.mode == PlanMode::Destroy {
            "destroy"
        } else {
            "apply"
        };
        println!(
            "{}",
            stream::apply_summary(
                (
                    result.imported,
                    result.added,
                    result.changed,
                    result.destroyed
                ),
                op
            )
        );
        println!("{}", stream::outputs(&result.outputs));
        return 0;
    }
    // `refresh` says only what it refreshed and the outputs, as
    // Terraform's does.
    if !refresh_command(a) {
        let line = summary(
            opts.mode,
            (
                result.imported,
                result.added,
                result.changed,
                result.destroyed,
            ),
        );
        println!("\n{}", ui.style.bold(&line));
    }
    if deferred > 0 {
        println!("\n{}", human::wrap(&format!("The plan was partial: {deferred} deferred part(s) were not applied. Run \"terrane apply\" again to plan and apply them.")));
    }
    if !result.outputs.is_empty() {
        println!("\n{}\n", ui.style.bold("Outputs:"));
        print!("{}", human::outputs(&result.outputs));
    } else if let Some(s) = result.state.as_ref().filter(|_| refresh_command(a)) {
        // A refresh evaluates no outputs: those it recorded.
        print_outputs_after(s);
    }
    0
}

/// Whether this is the `refresh` command (not `apply -refresh-only`).
fn refresh_command(a: &Args) -> bool {
    a.command.first().is_some_and(|c| c == "refresh")
}

fn confirm(ui: &Ui, a: &Args, what: &str) -> bool {
    if ui.stream && !a.has("auto-approve") {
        ui.error("Plan approval required", "The -json option needs -auto-approve: the approval prompt cannot be answered in machine-readable mode.");
        return false;
    }
    // `refresh` changes no remote object: it never asks, as Terraform's.
    if a.has("auto-approve") || refresh_command(a) {
        return true;
    }
    if a.is_false("input") {
        ui.error("No value for required variable", "The approval prompt is not available with -input=false; use -auto-approve to apply without confirmation.");
        return false;
    }
    println!("\n{}\n  terrane will perform the actions described above.\n  Only 'yes' will be accepted to approve.\n", ui.style.bold(what));
    print!("  {} ", ui.style.bold("Enter a value:"));
    let _ = std::io::stdout().flush();
    let mut line = String::new();
    let _ = std::io::stdin().lock().read_line(&mut line);
    if line.trim() == "yes" {
        println!();
        true
    } else {
        eprintln!("\nError: Apply cancelled.");
        false
    }
}

/// A ticker on stderr while a long apply runs.
fn progress(engine: &Engine, total: usize) -> tokio::task::JoinHandle<()> {
    let counter = engine.core.progress.clone();
    counter.store(0, Ordering::Relaxed);
    let tty = std::io::stderr().is_terminal();
    tokio::spawn(async move {
        let start = std::time::Instant::now();
        loop {
            tokio::time::sleep(std::time::Duration::from_secs(if tty { 1 } else { 10 })).await;
            let n = counter.load(Ordering::Relaxed).min(total);
            if tty {
                eprint!(
                    "\r  applying: {n}/{total} changes saved ({}s elapsed)",
                    start.elapsed().as_secs()
                );
            } else {
                eprintln!(
                    "Still applying... {n}/{total} changes saved ({}s elapsed)",
                    start.elapsed().as_secs()
                );
            }
        }
    })
}

fn print_outputs_after(s: &Snapshot) {
    if s.outputs.is_empty() {
        return;
    }
    print!(
        "\nOutputs:\n\n{}",
        human::stored_outputs(s, "<sensitive>", text::hcl_value)
    );
}

/// The closing line of an apply or a destroy (imports counted only when
/// there were some, as Terraform words it).
fn summary(mode: PlanMode, counts: (usize, usize, usize, usize)) -> String {
    let (imported, added, changed, destroyed) = counts;
    if mode == PlanMode::Destroy {
        format!("Destroy complete! Resources: {destroyed} destroyed.")
    } else {
        let imported = if imported > 0 {
            format!("{imported} imported, ")
        } else {
            String::new()
        };
        format!(
            "Apply complete! Resources: {imported}{added} added, {changed} changed, {destroyed} destroyed."
        )
    }
}

/// `apply`, `destroy` or `refresh` in a directory without configuration
/// files: apply refuses (it would plan to destroy everything); destroy and
/// refresh, with no state recorded either, have nothing to do and say so
/// without creating a state. `None`: go ahead (a state is recorded).
fn without_configuration(ui: &Ui, dir: &Path, mode: Option<PlanMode>) -> Option<u8> {
    let Some(mode) = mode else {
        return Some(ui.error("No configuration files", "Apply requires configuration to be present. Applying without a configuration would mark everything for destruction, which is normally not what is desired. If you would like to destroy everything, run 'terrane destroy' instead."));
    };
    match crate::session::state_recorded(ui, dir) {
        Err(code) => Some(code),
        Ok(true) => None,
        Ok(false) if mode == PlanMode::Destroy => {
            let empty = Plan {
                mode,
                ..Default::default()
            };
            ui.print_plan(&empty);
            println!("\n{}", ui.style.bold(&summary(mode, (0, 0, 0, 0))));
            Some(0)
        }
        Ok(false) => {
            ui.diags(&[Diagnostic::warning(
                "Empty or non-existent state",
                "There are currently no remote objects tracked in the state, so there is nothing to refresh.",
                None,
            )]);
            Some(0)
        }
    }
}
