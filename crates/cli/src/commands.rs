//! The commands. Exit codes follow Terraform's: 0 success, 1 error, and
//! with `-detailed-exitcode` 2 for a plan with changes.

use crate::args::Args;
use crate::{statecmd, vars};
use std::io::{BufRead, IsTerminal, Write};
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use terrane_config::{Diagnostic, Severity};
use terrane_engine::{Action, Engine, Options, Plan, PlanMode};
use terrane_render::text::{self, Style};
use terrane_render::{human, json, planfile, stream};
use terrane_state::{InstanceAddr, LockInfo, Run, Snapshot, StateStore};

pub struct Ui {
    pub style: Style,
    pub json: bool,
    /// `-json` on plan/apply/destroy/refresh: Terraform's streaming UI.
    pub stream: bool,
}

impl Ui {
    pub fn diags(&self, ds: &[Diagnostic]) {
        if self.stream {
            for d in ds {
                println!("{}", stream::diagnostic(d));
            }
            return;
        }
        let mut err = std::io::stderr().lock();
        for d in ds {
            let _ = write!(err, "{}", human::diagnostic(&self.style, d));
        }
    }

    pub fn error(&self, summary: &str, detail: impl Into<String>) -> u8 {
        self.diags(&[Diagnostic::error(summary, detail, None)]);
        1
    }
}

fn has_errors(ds: &[Diagnostic]) -> bool {
    ds.iter().any(|d| d.severity == Severity::Error)
}

fn workspace() -> String {
    std::env::var("TF_WORKSPACE")
        .ok()
        .filter(|w| !w.is_empty())
        .unwrap_or_else(|| "default".into())
}

/// The store the configuration in `dir` names (its terraform block's
/// state settings, read first), opened; failures are reported.
pub fn open_store(ui: &Ui, dir: &Path) -> Result<Box<dyn StateStore>, u8> {
    let settings = crate::stateconf::settings_of(dir).map_err(|d| {
        ui.diags(&d);
        1
    })?;
    let config = store_config(ui, dir, settings.as_ref())?;
    terrane_state::open_store(&config).map_err(|e| ui.error("Failed to open state", e.to_string()))
}

/// The store configuration for `settings`, or the error reported.
pub fn store_config(
    ui: &Ui,
    dir: &Path,
    settings: Option<&terrane_config::StateSettings>,
) -> Result<terrane_state::StoreConfig, u8> {
    crate::stateconf::store_config(dir, settings).map_err(|d| {
        ui.diags(&[d]);
        1
    })
}

/// Runs `f` on a thread of its own and waits for it. The PostgreSQL
/// store's client is synchronous and runs its own runtime, which cannot
/// start on a thread already driving this one: every store call made from
/// the command's async code goes through here (or a blocking task).
pub fn off_runtime<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        s.spawn(f)
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p))
    })
}

/// Takes the workspace lock, reporting the holder when someone has it,
/// and noting a stale lock of a dead process that was taken over.
pub fn lock(ui: &Ui, store: &dyn StateStore, op: &str) -> Result<Box<dyn Run>, u8> {
    let run = store
        .lock(&workspace(), LockInfo::new(op, ""))
        .map_err(|e| StateFailure::Lock(e.to_string()).report(ui))?;
    if let Some(holder) = run.taken_over() {
        ui.diags(&[crate::stateconf::takeover_note(holder)]);
    }
    Ok(run)
}

/// Why an operation could not start from the state.
enum StateFailure {
    Open(String),
    Lock(String),
    Read(String),
}

impl StateFailure {
    fn report(self, ui: &Ui) -> u8 {
        match self {
            StateFailure::Open(e) => ui.error("Failed to open state", e),
            StateFailure::Lock(e) => ui.error(
                "Error acquiring the state lock",
                format!("{e}\n\nterrane acquires a state lock to protect the state from being written by multiple users at the same time. Please resolve the issue above and try again. For most commands, you can disable locking with the \"-lock=false\" flag, but this is not recommended."),
            ),
            StateFailure::Read(e) => ui.error("Failed to read state", e),
        }
    }
}

/// The state an operation starts from: the store, the lock when it is
/// kept, the snapshot, and a dead holder's lock that was taken over.
type Started = (
    Box<dyn StateStore>,
    Option<Box<dyn Run>>,
    Snapshot,
    Option<LockInfo>,
);

/// Opens the state store, takes the lock for `op` (unless `lock` is false)
/// and reads the snapshot, on a blocking thread, so the provider plugins
/// started by `Engine::prestart_providers` boot meanwhile. With `keep` the
/// lock is returned held (apply); otherwise it is released once read.
/// `store` is either the configuration to open or a store already open.
async fn start_from_state(
    store: Result<Box<dyn StateStore>, terrane_state::StoreConfig>,
    op: &'static str,
    lock: bool,
    keep: bool,
) -> Result<Started, StateFailure> {
    let read = tokio::task::spawn_blocking(move || {
        let store = match store {
            Ok(s) => s,
            Err(config) => {
                terrane_state::open_store(&config).map_err(|e| StateFailure::Open(e.to_string()))?
            }
        };
        if !lock {
            let s = store
                .snapshot(&workspace())
                .map_err(|e| StateFailure::Read(e.to_string()))?;
            return Ok((store, None, s, None));
        }
        let mut run = store
            .lock(&workspace(), LockInfo::new(op, ""))
            .map_err(|e| StateFailure::Lock(e.to_string()))?;
        let taken_over = run.taken_over().cloned();
        let s = run.snapshot();
        let run = if s.is_err() || !keep {
            let _ = run.finish();
            None
        } else {
            Some(run)
        };
        let s = s.map_err(|e| StateFailure::Read(e.to_string()))?;
        Ok((store, run, s, taken_over))
    });
    read.await
        .unwrap_or_else(|e| Err(StateFailure::Read(format!("the state reader stopped: {e}"))))
}

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
        ["init"] => init(&ui, &dir).await,
        ["validate"] => validate(&ui, &dir).await,
        ["plan"] => plan_cmd(&ui, &dir, &a).await,
        ["apply"] => apply_cmd(&ui, &dir, &a, None).await,
        ["destroy"] => apply_cmd(&ui, &dir, &a, Some(PlanMode::Destroy)).await,
        ["refresh"] => apply_cmd(&ui, &dir, &a, Some(PlanMode::RefreshOnly)).await,
        ["import"] => import(&ui, &dir, &a).await,
        ["show"] => show(&ui, &dir, &a).await,
        ["output"] => off_runtime(|| output(&ui, &dir, &a)),
        ["graph"] => graph(&ui, &dir, &a),
        ["fmt"] => crate::fmt::fmt(&ui, &dir, &a),
        ["force-unlock"] => off_runtime(|| force_unlock(&ui, &dir, &a)),
        ["state", "show"] => crate::stateshow::state_show(&ui, &dir, &a).await,
        ["state", "push"] => statecmd::push(&ui, &dir, &a).await,
        ["state", sub] => off_runtime(|| statecmd::run(&ui, &dir, sub, &a)),
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

fn load(ui: &Ui, dir: &Path) -> Result<Engine, u8> {
    let engine = Engine::load(dir).map_err(|d| {
        ui.diags(&d);
        1
    })?;
    if !ui.stream && !ui.json {
        let style = Style {
            color: ui.style.color,
        };
        let _ = engine.core.events.set(std::sync::Arc::new(
            move |e: &terrane_engine::walk::Event| {
                let _ = writeln!(std::io::stdout().lock(), "{}", style.bold(&event_line(e)));
            },
        ));
    }
    Ok(engine)
}

/// A progress event as Terraform's UI words it.
fn event_line(e: &terrane_engine::walk::Event) -> String {
    use terrane_engine::walk::Event;
    let id = |id: &Option<String>| {
        id.as_ref()
            .map(|i| format!(" [id={i}]"))
            .unwrap_or_default()
    };
    let who = |addr: &terrane_state::InstanceAddr, deposed: &Option<&str>| match deposed {
        Some(k) => format!("{addr} (deposed object {k})"),
        None => addr.to_string(),
    };
    match e {
        Event::Refreshing { addr, id: i } => format!("{addr}: Refreshing state...{}", id(i)),
        Event::Started {
            addr,
            deposed,
            action,
            id: i,
        } => {
            let what = match action {
                Action::Create => "Creating...".to_string(),
                Action::Update => format!("Modifying...{}", id(i)),
                Action::Read => "Reading...".to_string(),
                _ => format!("Destroying...{}", id(i)),
            };
            format!("{}: {what}", who(addr, deposed))
        }
        Event::Finished {
            addr,
            deposed,
            action,
            id: i,
            elapsed,
        } => {
            let t = elapsed_text(*elapsed);
            let what = match action {
                Action::Create => format!("Creation complete after {t}{}", id(i)),
                Action::Update => format!("Modifications complete after {t}{}", id(i)),
                Action::Read => format!("Read complete after {t}{}", id(i)),
                _ => format!("Destruction complete after {t}"),
            };
            format!("{}: {what}", who(addr, deposed))
        }
    }
}

/// A duration in whole seconds as Go prints one: `0s`, `42s`, `1m5s`,
/// `2h0m3s`.
fn elapsed_text(d: std::time::Duration) -> String {
    let s = d.as_secs();
    match (s / 3600, (s / 60) % 60, s % 60) {
        (0, 0, sec) => format!("{sec}s"),
        (0, m, sec) => format!("{m}m{sec}s"),
        (h, m, sec) => format!("{h}h{m}m{sec}s"),
    }
}

async fn init(ui: &Ui, dir: &Path) -> u8 {
    let engine = match load(ui, dir) {
        Ok(e) => e,
        Err(c) => return c,
    };
    println!("Initializing the backend...\nInitializing provider plugins...");
    let mut lock =
        terrane_engine::provider::discovery::lockfile::LockFile::load(dir).unwrap_or_default();
    let mut changed = false;
    for (name, addr) in engine.core.provider_addrs.iter() {
        if let Some(src) = engine.core.host.source(addr) {
            match &src {
                terrane_engine::provider::ProviderSource::Plugin(p) => {
                    println!("- Using {} from {}", addr.for_display(), p.binary.display());
                    if let Some((v, h1)) = src.lock_entry() {
                        lock.record(addr, v, None, h1);
                        changed = true;
                    }
                }
                terrane_engine::provider::ProviderSource::Builtin(_) => {
                    println!("- Using built-in {} ({name})", addr.for_display())
                }
            }
            // Fetch the schema once so a broken provider shows up now
            // (only for providers the configuration uses: a required
            // but unused one is not started, as Terraform does not).
            if let Err(e) = engine.core.host.schema(addr).await {
                engine.shutdown().await;
                return ui.error("Failed to load provider schema", e.to_string());
            }
        }
    }
    engine.shutdown().await;
    if changed {
        if let Err(e) = lock.save(dir) {
            return ui.error("Failed to write the dependency lock file", e.to_string());
        }
    }
    if let Err(e) = std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir.join(".terrane"))
    {
        return ui.error("Failed to create .terrane", e.to_string());
    }
    println!(
        "\n{}",
        ui.style.bold("terrane has been successfully initialized!")
    );
    0
}

async fn validate(ui: &Ui, dir: &Path) -> u8 {
    let diags = match Engine::load(dir) {
        Ok(engine) => {
            let d = engine.validate().await;
            engine.shutdown().await;
            d
        }
        Err(d) => d,
    };
    let errors = diags
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    if ui.json {
        let list: Vec<serde_json::Value> = diags
            .iter()
            .map(|d| {
                let mut j = serde_json::json!({"severity": if d.severity == Severity::Error { "error" } else { "warning" }, "summary": d.summary, "detail": d.detail});
                if let Some(r) = &d.range {
                    j["range"] = serde_json::json!({"filename": r.file.to_string(), "start": {"line": r.start.line, "column": r.start.col, "byte": r.start.byte}, "end": {"line": r.end.line, "column": r.end.col, "byte": r.end.byte}});
                }
                j
            })
            .collect();
        println!(
            "{}",
            serde_json::json!({"format_version": "1.0", "valid": errors == 0, "error_count": errors, "warning_count": diags.len() - errors, "diagnostics": list})
        );
    } else if errors == 0 {
        ui.diags(&diags);
        println!("{}", ui.style.bold("Success! The configuration is valid."));
    } else {
        ui.diags(&diags);
    }
    u8::from(errors > 0)
}

fn options(ui: &Ui, engine: &Engine, a: &Args, mode: PlanMode) -> Result<Options, u8> {
    let vars = vars::collect(&engine.core.config.module, Path::new("."), a).map_err(|d| {
        ui.diags(&d);
        1
    })?;
    let parallelism = match a.value("parallelism") {
        Some(p) => p
            .parse()
            .map_err(|_| ui.error("Invalid -parallelism", format!("{p:?} is not a number.")))?,
        None => 10,
    };
    let mode = if a.has("destroy") {
        PlanMode::Destroy
    } else if a.has("refresh-only") {
        PlanMode::RefreshOnly
    } else {
        mode
    };
    Ok(Options {
        parallelism,
        refresh: !a.is_false("refresh"),
        mode,
        targets: a.values("target"),
        excludes: a.values("exclude"),
        replace: a.values("replace"),
        vars,
        workspace: workspace(),
    })
}

/// Ctrl-C: the first stops new work (in-flight operations finish and are
/// saved), the second asks providers to cancel theirs.
fn on_interrupt(engine: &Engine) {
    let flag = engine.interrupt_flag();
    let host = engine.core.host.clone();
    tokio::spawn(async move {
        let mut count = 0;
        while tokio::signal::ctrl_c().await.is_ok() {
            count += 1;
            flag.store(true, Ordering::SeqCst);
            if count == 1 {
                eprintln!("\nInterrupt received.\nPlease wait for terrane to exit or data loss may occur.\nGracefully shutting down...");
            } else {
                eprintln!(
                    "\nTwo interrupts received. Asking providers to stop their operations..."
                );
                host.stop_all().await;
            }
        }
    });
}

async fn plan_cmd(ui: &Ui, dir: &Path, a: &Args) -> u8 {
    let engine = match load(ui, dir) {
        Ok(e) => e,
        Err(c) => return c,
    };
    let opts = match options(ui, &engine, a, PlanMode::Normal) {
        Ok(o) => o,
        Err(c) => return c,
    };
    let config = match store_config(ui, dir, engine.core.config.module.state.as_ref()) {
        Ok(c) => c,
        Err(c) => return c,
    };
    engine.prestart_providers();
    let (store, snapshot) = match start_from_state(
        Err(config),
        "OperationTypePlan",
        !a.is_false("lock"),
        false,
    )
    .await
    {
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
    on_interrupt(&engine);
    let plan = engine.plan(&snapshot, opts).await;
    engine.shutdown().await;
    ui.diags(&plan.diagnostics);
    if plan.has_errors() {
        return 1;
    }
    if ui.stream {
        for l in stream::plan(&plan, "plan") {
            println!("{l}");
        }
    } else {
        print!("{}", human::plan(&ui.style, &plan));
    }
    let rule = "\u{2500}".repeat(77);
    if let Some(out) = a.value("out") {
        if let Err(e) = planfile::save(Path::new(out), &planfile::write(&plan, store.cipher())) {
            return ui.error("Failed to write plan file", e.to_string());
        }
        if !ui.stream {
            println!("\n{rule}\n\nSaved the plan to: {out}\n\nTo perform exactly these actions, run the following command to apply:\n    terrane apply {out:?}");
        }
    } else if !ui.stream && plan.has_changes() {
        println!("\n{rule}\n\n{}", human::wrap("Note: You didn't use the -out option to save this plan, so terrane can't guarantee to take exactly these actions if you run \"terrane apply\" now."));
    }
    if a.has("detailed-exitcode") && plan.has_changes() {
        return 2;
    }
    0
}

fn confirm(ui: &Ui, a: &Args, what: &str) -> bool {
    if ui.stream && !a.has("auto-approve") {
        ui.error("Plan approval required", "The -json option needs -auto-approve: the approval prompt cannot be answered in machine-readable mode.");
        return false;
    }
    // `refresh` changes no remote object: it never asks, as Terraform's.
    if a.has("auto-approve") || a.command.first().is_some_and(|c| c == "refresh") {
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

async fn apply_cmd(ui: &Ui, dir: &Path, a: &Args, mode: Option<PlanMode>) -> u8 {
    let engine = match load(ui, dir) {
        Ok(e) => e,
        Err(c) => return c,
    };
    let config = match store_config(ui, dir, engine.core.config.module.state.as_ref()) {
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
                Err(config) => match off_runtime(|| terrane_state::open_store(&config)) {
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
        opts.vars = p.variables.clone();
        opts.mode = p.mode;
    }
    let op = if opts.mode == PlanMode::Destroy {
        "OperationTypeDestroy"
    } else {
        "OperationTypeApply"
    };
    engine.prestart_providers();
    let (_store, run, snapshot) = match start_from_state(store_or_config, op, true, true).await {
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
            let p = engine.plan(&snapshot, opts.clone()).await;
            ui.diags(&p.diagnostics);
            if p.has_errors() {
                engine.shutdown().await;
                let _ = off_runtime(|| run.finish());
                return 1;
            }
            if ui.stream {
                for l in stream::plan(&p, "apply") {
                    println!("{l}");
                }
            } else {
                print!("{}", human::plan(&ui.style, &p));
            }
            if !p.has_changes() && (opts.mode != PlanMode::RefreshOnly || p.drift.is_empty()) {
                engine.shutdown().await;
                let _ = off_runtime(|| run.finish());
                if ui.stream {
                    println!("{}", stream::apply_summary(0, 0, 0, "apply"));
                } else {
                    println!(
                        "\n{}",
                        ui.style
                            .bold("Apply complete! Resources: 0 added, 0 changed, 0 destroyed.")
                    );
                    print_outputs_after(&snapshot);
                }
                return 0;
            }
            let question = match opts.mode {
                PlanMode::Destroy => "Do you really want to destroy all resources?",
                _ => "Do you want to perform these actions?",
            };
            if !confirm(ui, a, question) {
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
    let ticker = progress(&engine, total);
    let (result, run) = engine.apply(&plan, &snapshot, run, opts.clone()).await;
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
            stream::apply_summary(result.added, result.changed, result.destroyed, op)
        );
        println!("{}", stream::outputs(&result.outputs));
        return 0;
    }
    let verb = if opts.mode == PlanMode::Destroy {
        "Destroy"
    } else {
        "Apply"
    };
    if opts.mode == PlanMode::Destroy {
        println!(
            "\n{}",
            ui.style.bold(&format!(
                "{verb} complete! Resources: {} destroyed.",
                result.destroyed
            ))
        );
    } else {
        println!(
            "\n{}",
            ui.style.bold(&format!(
                "{verb} complete! Resources: {} added, {} changed, {} destroyed.",
                result.added, result.changed, result.destroyed
            ))
        );
    }
    if !result.outputs.is_empty() {
        println!("\n{}\n", ui.style.bold("Outputs:"));
        print!("{}", human::outputs(&result.outputs));
    }
    0
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

async fn import(ui: &Ui, dir: &Path, a: &Args) -> u8 {
    let [addr, id] = a.positional.as_slice() else {
        return ui.error(
            "Invalid arguments",
            "The import command expects two arguments: ADDR ID.",
        );
    };
    let addr = match InstanceAddr::parse(addr) {
        Ok(x) => x,
        Err(e) => return ui.error("Invalid address", format!("{e:?}")),
    };
    let engine = match load(ui, dir) {
        Ok(e) => e,
        Err(c) => return c,
    };
    let opts = match options(ui, &engine, a, PlanMode::Normal) {
        Ok(o) => o,
        Err(c) => return c,
    };
    let config = match store_config(ui, dir, engine.core.config.module.state.as_ref()) {
        Ok(c) => c,
        Err(c) => return c,
    };
    let started = off_runtime(|| {
        let store = terrane_state::open_store(&config)
            .map_err(|e| ui.error("Failed to open state", e.to_string()))?;
        let mut run = lock(ui, store.as_ref(), "OperationTypeImport")?;
        match run.snapshot() {
            Ok(s) => Ok((store, run, s)),
            Err(e) => {
                let _ = run.finish();
                Err(ui.error("Failed to read state", e.to_string()))
            }
        }
    });
    let (_store, run, snapshot) = match started {
        Ok(x) => x,
        Err(c) => return c,
    };
    println!("{}: Importing from ID {id:?}...", addr);
    let (diags, run) = engine.import(&snapshot, run, &addr, id, opts).await;
    engine.shutdown().await;
    let _ = off_runtime(|| run.finish());
    ui.diags(&diags);
    if has_errors(&diags) {
        return 1;
    }
    println!("{addr}: Import prepared!\n{addr}: Refreshing state...\n\n{}\n\nThe resources that were imported are shown above. These resources are now in\nyour terrane state and will henceforth be managed by terrane.", ui.style.bold(&ui.style.bold("Import successful!")));
    0
}

async fn show(ui: &Ui, dir: &Path, a: &Args) -> u8 {
    if let Some(f) = a.positional.first() {
        let bytes = match std::fs::read(f) {
            Ok(b) => b,
            Err(e) => return ui.error("Failed to read the plan file", format!("{f}: {e}")),
        };
        // A sealed plan needs the store's key.
        let store = if planfile::is_sealed(&bytes) {
            match off_runtime(|| open_store(ui, dir)) {
                Ok(s) => Some(s),
                Err(c) => return c,
            }
        } else {
            None
        };
        let plan = match planfile::read(&bytes, store.as_ref().and_then(|s| s.cipher())) {
            Ok(p) => p,
            Err(e) => return ui.error("Failed to read the plan file", format!("{f}: {e}")),
        };
        let (config, _) = terrane_config::load_config(dir);
        if ui.json {
            println!("{}", json::plan(&plan, &config));
        } else {
            print!("{}", human::plan(&ui.style, &plan));
        }
        return 0;
    }
    let s = off_runtime(|| {
        let store = open_store(ui, dir)?;
        store
            .snapshot(&workspace())
            .map_err(|e| ui.error("Failed to read state", e.to_string()))
    });
    let s = match s {
        Ok(s) => s,
        Err(c) => return c,
    };
    if ui.json {
        println!("{}", json::state(&s));
    } else {
        crate::stateshow::show_all(dir, &s).await;
    }
    0
}

fn output(ui: &Ui, dir: &Path, a: &Args) -> u8 {
    let store = match open_store(ui, dir) {
        Ok(s) => s,
        Err(c) => return c,
    };
    let s = match store.snapshot(&workspace()) {
        Ok(s) => s,
        Err(e) => return ui.error("Failed to read state", e.to_string()),
    };
    if let Some(name) = a.positional.first() {
        let Some(o) = s.outputs.get(name) else {
            return ui.error("Output not found", "The output variable requested could not be found in the state file. If you recently added this to your configuration, be sure to run `terrane apply`, since the state won't be updated with new output variables until that command is run.");
        };
        if a.has("raw") {
            match &o.value {
                serde_json::Value::String(v) => print!("{v}"),
                serde_json::Value::Number(n) => print!("{n}"),
                serde_json::Value::Bool(b) => print!("{b}"),
                _ => return ui.error("Unsupported value for raw output", format!("The -raw option only supports strings, numbers, and boolean values, but output value {name:?} is not one of those.")),
            }
        } else if ui.json {
            println!("{}", o.value);
        } else if o.sensitive {
            println!("(sensitive value)");
        } else {
            println!(
                "{}",
                text::hcl_value(&terrane_engine::run::stored_output_value(o), 0)
            );
        }
        return 0;
    }
    if ui.json {
        let m: serde_json::Map<String, serde_json::Value> = s
            .outputs
            .iter()
            .map(|(k, o)| {
                (
                    k.clone(),
                    serde_json::json!({"sensitive": o.sensitive, "type": o.ty, "value": o.value}),
                )
            })
            .collect();
        println!("{}", serde_json::Value::Object(m));
    } else {
        print!(
            "{}",
            human::stored_outputs(&s, "<sensitive>", text::hcl_value)
        );
    }
    0
}

fn graph(ui: &Ui, dir: &Path, a: &Args) -> u8 {
    let (config, diags) = terrane_config::load_config(dir);
    if has_errors(&diags) {
        ui.diags(&diags);
        return 1;
    }
    let g = terrane_engine::graph::build(&config);
    let dot = terrane_engine::graph::to_dot(&g);
    if a.value("format") == Some("svg") || a.has("svg") {
        let child = std::process::Command::new("dot")
            .arg("-Tsvg")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn();
        match child {
            Ok(mut c) => {
                if let Some(mut stdin) = c.stdin.take() {
                    let _ = stdin.write_all(dot.as_bytes());
                }
                match c.wait_with_output() {
                    Ok(o) => {
                        let _ = std::io::stdout().write_all(&o.stdout);
                        return u8::from(!o.status.success());
                    }
                    Err(e) => return ui.error("Graphviz failed", e.to_string()),
                }
            }
            Err(_) => return ui.error("Graphviz is not installed", "SVG output needs Graphviz's `dot` on PATH (apt-get install graphviz); without -format=svg the graph is written as DOT."),
        }
    }
    print!("{dot}");
    0
}

fn force_unlock(ui: &Ui, dir: &Path, a: &Args) -> u8 {
    let Some(id) = a.positional.first() else {
        return ui.error("Missing lock ID", "Usage: terrane force-unlock LOCK_ID");
    };
    let store = match open_store(ui, dir) {
        Ok(s) => s,
        Err(c) => return c,
    };
    match store.force_unlock(&workspace(), id) {
        Ok(()) => {
            println!(
                "{}",
                ui.style
                    .bold("terrane state has been successfully unlocked!")
            );
            0
        }
        Err(e) => ui.error("Failed to unlock state", e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use terrane_engine::walk::{object_id, Event};
    use terrane_value::Value;

    fn check(name: &str, got: String, want: &str) {
        assert_eq!(got, want, "case {name}");
    }

    #[test]
    fn progress_lines_as_terraform_words_them() {
        let addr = terrane_state::ResourceAddr::managed("random_id", "x")
            .instance(terrane_state::InstanceKey::Int(1));
        let id = || Some("abc".to_string());
        let cases: Vec<(&str, Event, &str)> = vec![
            (
                "refreshing",
                Event::Refreshing {
                    addr: &addr,
                    id: id(),
                },
                "random_id.x[1]: Refreshing state... [id=abc]",
            ),
            (
                "refreshing_without_id",
                Event::Refreshing {
                    addr: &addr,
                    id: None,
                },
                "random_id.x[1]: Refreshing state...",
            ),
            (
                "creating",
                Event::Started {
                    addr: &addr,
                    deposed: None,
                    action: Action::Create,
                    id: None,
                },
                "random_id.x[1]: Creating...",
            ),
            (
                "created",
                Event::Finished {
                    addr: &addr,
                    deposed: None,
                    action: Action::Create,
                    id: id(),
                    elapsed: Duration::from_millis(1500),
                },
                "random_id.x[1]: Creation complete after 1s [id=abc]",
            ),
            (
                "modifying",
                Event::Started {
                    addr: &addr,
                    deposed: None,
                    action: Action::Update,
                    id: id(),
                },
                "random_id.x[1]: Modifying... [id=abc]",
            ),
            (
                "modified",
                Event::Finished {
                    addr: &addr,
                    deposed: None,
                    action: Action::Update,
                    id: id(),
                    elapsed: Duration::from_secs(65),
                },
                "random_id.x[1]: Modifications complete after 1m5s [id=abc]",
            ),
            (
                "destroying_deposed",
                Event::Started {
                    addr: &addr,
                    deposed: Some("00aa"),
                    action: Action::Delete,
                    id: id(),
                },
                "random_id.x[1] (deposed object 00aa): Destroying... [id=abc]",
            ),
            (
                "destroyed",
                Event::Finished {
                    addr: &addr,
                    deposed: None,
                    action: Action::Delete,
                    id: None,
                    elapsed: Duration::from_secs(7203),
                },
                "random_id.x[1]: Destruction complete after 2h0m3s",
            ),
            (
                "read",
                Event::Finished {
                    addr: &addr,
                    deposed: None,
                    action: Action::Read,
                    id: id(),
                    elapsed: Duration::ZERO,
                },
                "random_id.x[1]: Read complete after 0s [id=abc]",
            ),
        ];
        for (name, e, want) in cases {
            check(name, event_line(&e), want);
        }
    }

    #[test]
    fn progress_never_shows_a_sensitive_id() {
        let obj = |id: Value| Value::object([("id".to_string(), id)].into_iter().collect());
        assert_eq!(
            object_id(&obj(Value::string("x"))),
            Some("x".to_string()),
            "case plain_id"
        );
        assert_eq!(
            object_id(&obj(Value::string("x").mark_sensitive())),
            None,
            "case sensitive_id"
        );
        assert_eq!(
            object_id(&obj(Value::unknown(terrane_value::Type::String))),
            None,
            "case unknown_id"
        );
    }
}
