//! `plan`: plan from the state, print it (text or streaming `-json`) and
//! save it with `-out`.

use crate::args::Args;
use crate::session::{load, on_interrupt, options, start_from_state, store_config, Ui};
use std::path::Path;
use terrane_engine::PlanMode;
use terrane_render::{human, planfile, stream};

pub async fn plan(ui: &Ui, dir: &Path, a: &Args) -> u8 {
    if !crate::session::has_config_files(dir) && !a.has("destroy") {
        return ui.error("No configuration files", "Plan requires configuration to be present. Planning without a configuration would mark everything for destruction, which is normally not what is desired. If you would like to destroy everything, run plan with the -destroy option. Otherwise, create a terrane configuration file (.tf file) and try again.");
    }
    if let Some(out) = a.value("generate-config-out") {
        if let Err(c) = super::generate::generate(ui, dir, a, out).await {
            return c;
        }
    }
    let engine = match load(ui, dir) {
        Ok(e) => e,
        Err(c) => return c,
    };
    let opts = match options(ui, &engine, a, PlanMode::Normal) {
        Ok(o) => o,
        Err(c) => return c,
    };
    let config = match store_config(ui, dir, &engine.core.config.module) {
        Ok(c) => c,
        Err(c) => return c,
    };
    let lock = match crate::session::lock_timeout(ui, a) {
        Ok(t) => (!a.is_false("lock")).then_some(t),
        Err(c) => return c,
    };
    engine.prestart_providers();
    let (store, snapshot) =
        match start_from_state(Err(config), "OperationTypePlan", lock, false).await {
            Ok((store, _, s, taken_over)) => {
                if let Some(h) = taken_over {
                    ui.diags(&[crate::stateconf::takeover_note(&h)]);
                }
                (store, s)
            }
            Err(f) => {
                engine.shutdown().await;
                return f.report(ui);
            }
        };
    if let Some(d) =
        crate::stateconf::unmigrated_tfstate(dir, &engine.core.config.module, &snapshot)
    {
        engine.shutdown().await;
        ui.diags(&[d]);
        return 1;
    }
    on_interrupt(&engine);
    // The plan is never freed: the process ends after this command, and
    // freeing a large plan's values piece by piece takes longer than
    // rendering it.
    let plan: &'static terrane_engine::Plan =
        Box::leak(Box::new(engine.plan_owned(snapshot, opts).await));
    ui.plan_diags(&plan.diagnostics, a);
    // The text (for a failed plan, what was planned before the failure, as
    // Terraform shows it) is rendered on a thread of its own while the
    // providers shut down: a plugin process takes a while to exit, and the
    // text needs nothing from it.
    let printing = (!ui.stream).then(|| {
        let style = ui.style;
        std::thread::spawn(move || {
            let _ = human::write_plan(&mut std::io::stdout().lock(), &style, plan);
        })
    });
    engine.shutdown().await;
    if let Some(Err(panicked)) = printing.map(std::thread::JoinHandle::join) {
        std::panic::resume_unwind(panicked);
    }
    if plan.has_errors() {
        return 1;
    }
    if ui.stream {
        for l in stream::plan(plan, "plan") {
            println!("{l}");
        }
    } else {
        ui.compact_warnings(&plan.diagnostics, a);
    }
    let rule = "\u{2500}".repeat(77);
    if let Some(out) = a.value("out") {
        if let Err(e) = planfile::save(Path::new(out), &planfile::write(plan, store.cipher())) {
            return ui.error("Failed to write plan file", e.to_string());
        }
        if !ui.stream && !in_automation() {
            println!("\n{rule}\n\nSaved the plan to: {out}\n\nTo perform exactly these actions, run the following command to apply:\n    terrane apply {out:?}");
        }
    } else if !ui.stream && plan.has_changes() && !in_automation() {
        println!("\n{rule}\n\n{}", human::wrap("Note: You didn't use the -out option to save this plan, so terrane can't guarantee to take exactly these actions if you run \"terrane apply\" now."));
    }
    // A partial plan (deferred parts) is never "nothing to do": the next
    // plan has more.
    if a.has("detailed-exitcode") && (plan.has_changes() || !plan.deferred.is_empty()) {
        return 2;
    }
    0
}

/// `TF_IN_AUTOMATION` set (to anything): as Terraform does then, the plan
/// suggests no command to run next.
fn in_automation() -> bool {
    std::env::var_os("TF_IN_AUTOMATION").is_some_and(|v| !v.is_empty())
}
