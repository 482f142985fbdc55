//! The session every command runs in: the [`Ui`] (style, `-json`,
//! streaming), the state store opened from the configuration, its lock,
//! the workspace, the engine loaded with its progress lines, and the plan
//! options read from the arguments. Commands import this; it imports no
//! command.

use crate::args::Args;
use crate::vars;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::Ordering;
use terrane_config::{Diagnostic, Severity};
use terrane_engine::{Action, Engine, Options, PlanMode};
use terrane_render::text::Style;
use terrane_render::{human, stream};
use terrane_state::{LockInfo, Run, Snapshot, StateStore};

/// The width diagnostics are wrapped to, as Terraform's: 78 columns for
/// a stream that is not a terminal (errors go to standard error, warnings
/// to standard output); for a terminal, its width as the terminal reports
/// it, or `COLUMNS` when the terminal does not say, else 78.
fn columns(severity: Severity) -> usize {
    use std::io::IsTerminal;
    let width = match severity {
        Severity::Error => {
            let e = std::io::stderr();
            e.is_terminal().then(|| terminal_width(&e))
        }
        Severity::Warning => {
            let o = std::io::stdout();
            o.is_terminal().then(|| terminal_width(&o))
        }
    };
    let from_env = || std::env::var("COLUMNS").ok()?.trim().parse::<usize>().ok();
    match width.map(|w| w.or_else(from_env)) {
        Some(Some(c)) if c > 1 => c,
        _ => human::DEFAULT_COLUMNS,
    }
}

/// The columns of the terminal `fd` is (TIOCGWINSZ); None when it does
/// not answer or answers 0 (a terminal with no size set).
pub(crate) fn terminal_width(fd: &impl std::os::fd::AsFd) -> Option<usize> {
    let size = rustix::termios::tcgetwinsize(fd).ok()?;
    (size.ws_col > 0).then_some(usize::from(size.ws_col))
}

/// How the command talks to the user: colours, `-json`, streaming.
pub struct Ui {
    pub style: Style,
    pub json: bool,
    /// `-json` on plan/apply/destroy/refresh: Terraform's streaming UI.
    pub stream: bool,
}

impl Ui {
    /// One error diagnostic with the lines Terraform shows in a box below
    /// its source line (a failed test assertion's operands), as
    /// [`Ui::diags`] prints it otherwise.
    pub fn diag_with_box(&self, d: &Diagnostic, boxed: Option<&[String]>) {
        let (Some(lines), Some(r), false) = (boxed, &d.range, self.stream) else {
            return self.diags(std::slice::from_ref(d));
        };
        let mut text = human::diagnostic_for(&self.style, d, columns(d.severity));
        let source = format!("\n{:>4}: ", r.start.line);
        if let Some(at) = text.find(&source) {
            let end = text[at + 1..]
                .find('\n')
                .map_or(text.len(), |e| at + 1 + e + 1);
            // An empty line in the box is a blank line; the box ends with
            // one unless it holds one already (what follows it under
            // `test -verbose`).
            let mut boxed: String = lines
                .iter()
                .map(|l| {
                    if l.is_empty() {
                        "\n".to_string()
                    } else {
                        format!("    {l}\n")
                    }
                })
                .collect();
            if !lines.iter().any(String::is_empty) {
                boxed.push('\n');
            }
            text.insert_str(end, &boxed);
        }
        let sink = if d.severity == Severity::Error {
            write!(std::io::stderr().lock(), "{text}")
        } else {
            write!(std::io::stdout().lock(), "{text}")
        };
        let _ = sink;
    }

    pub fn diags(&self, ds: &[Diagnostic]) {
        if self.stream {
            for d in ds {
                println!("{}", stream::diagnostic(d));
            }
            return;
        }
        // In Terraform's order; as Terraform: errors on standard error,
        // warnings on standard output (with the rest of what the command
        // says).
        for d in human::terraform_order(ds) {
            let text = human::diagnostic_for(&self.style, d, columns(d.severity));
            if d.severity == Severity::Error {
                let _ = write!(std::io::stderr().lock(), "{text}");
            } else {
                let _ = write!(std::io::stdout().lock(), "{text}");
            }
        }
    }

    /// A plan's text, as `terraform plan` prints it, written to standard
    /// output as it is rendered. As with diagnostics, a closed standard
    /// output does not fail the run.
    pub fn print_plan(&self, p: &terrane_engine::Plan) {
        let _ = human::write_plan(&mut std::io::stdout().lock(), &self.style, p);
    }

    /// A plan's diagnostics, before its text: all of them, or with
    /// `-compact-warnings` and no error, none (see [`Ui::compact_warnings`]).
    pub fn plan_diags(&self, ds: &[Diagnostic], a: &Args) {
        if !a.has("compact-warnings") || has_errors(ds) || self.stream {
            self.diags(ds);
        }
    }

    /// With `-compact-warnings` and no error, after the plan's text: each
    /// warning's summary and where it is, as Terraform lists them.
    pub fn compact_warnings(&self, ds: &[Diagnostic], a: &Args) {
        if !a.has("compact-warnings") || has_errors(ds) || ds.is_empty() || self.stream {
            return;
        }
        let mut out = format!("\n{}\n\n", self.style.bold("Warnings:"));
        for d in ds {
            out.push_str(&format!("- {}\n", d.summary));
            if let Some(r) = &d.range {
                let file = r.file.strip_prefix("./").unwrap_or(&r.file);
                out.push_str(&format!("  on {file} line {}\n", r.start.line));
            }
        }
        out.push_str("\nTo see the full warning notes, run terrane without -compact-warnings.\n");
        print!("{out}");
    }

    pub fn error(&self, summary: &str, detail: impl Into<String>) -> u8 {
        self.diags(&[Diagnostic::error(summary, detail, None)]);
        1
    }
}

/// Whether any of `ds` is an error.
pub fn has_errors(ds: &[Diagnostic]) -> bool {
    ds.iter().any(|d| d.severity == Severity::Error)
}

/// Whether `dir` holds configuration files: `.tf` or `.tf.json` (and
/// OpenTofu's `.tofu`, `.tofu.json`). Without them plan and apply refuse,
/// as Terraform does, and no state is created.
pub fn has_config_files(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| {
        let name = e.file_name();
        let name = name.to_string_lossy();
        let config = [".tf", ".tf.json", ".tofu", ".tofu.json"]
            .iter()
            .any(|ext| name.ends_with(ext));
        config && !name.starts_with('.') && e.path().is_file()
    })
}

/// Whether a state has been recorded where this directory's commands
/// would look for it: always assumed for PostgreSQL; for SQLite, whether
/// the database file exists.
pub fn state_recorded(ui: &Ui, dir: &Path) -> Result<bool, u8> {
    let config = crate::stateconf::store_config(dir, None).map_err(|d| {
        ui.diags(&[d]);
        1u8
    })?;
    Ok(match &config.location {
        terrane_state::StoreLocation::Sqlite(path) => path.exists(),
        _ => true,
    })
}

/// The workspace: `TF_WORKSPACE` when set, else the one `workspace
/// select` recorded in the data directory's `environment` file, else
/// `default`.
pub fn workspace() -> String {
    std::env::var("TF_WORKSPACE")
        .ok()
        .filter(|w| !w.is_empty())
        .or_else(|| crate::backendconf::selected_workspace(Path::new(".")))
        .unwrap_or_else(|| "default".into())
}

/// The store the configuration in `dir` names (its terraform block's
/// state settings, read first), opened; failures are reported.
pub fn open_store(ui: &Ui, dir: &Path) -> Result<Box<dyn StateStore>, u8> {
    let module = crate::stateconf::module_of(dir).map_err(|d| {
        ui.diags(&d);
        1
    })?;
    let config = store_config(ui, dir, &module)?;
    crate::backendconf::open(&config).map_err(|e| ui.error("Failed to open state", e.to_string()))
}

/// The current workspace's state from the store `dir` names, read off the
/// runtime thread (see [`off_runtime`]); failures are reported.
pub fn read_state(ui: &Ui, dir: &Path) -> Result<Snapshot, u8> {
    off_runtime(|| {
        let store = open_store(ui, dir)?;
        store
            .snapshot(&workspace())
            .map_err(|e| ui.error("Failed to read state", e.to_string()))
    })
}

/// The store configuration of the root module `module`, or the error
/// reported.
pub fn store_config(
    ui: &Ui,
    dir: &Path,
    module: &terrane_config::Module,
) -> Result<terrane_state::StoreConfig, u8> {
    crate::stateconf::store_config_for(dir, module).map_err(|d| {
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
pub fn lock(ui: &Ui, store: &dyn StateStore, op: &str, a: &Args) -> Result<Box<dyn Run>, u8> {
    let timeout = lock_timeout(ui, a)?;
    let run = lock_waiting(store, op, timeout)
        .map_err(|e| StateFailure::Lock(e.to_string()).report(ui))?;
    if let Some(holder) = run.taken_over() {
        ui.diags(&[crate::stateconf::takeover_note(holder)]);
    }
    Ok(run)
}

/// `-lock-timeout=DURATION` (Go's duration syntax: `30s`, `1m30s`,
/// `500ms`; default 0: a held lock is reported at once).
pub fn lock_timeout(ui: &Ui, a: &Args) -> Result<std::time::Duration, u8> {
    match a.value("lock-timeout") {
        None => Ok(std::time::Duration::ZERO),
        Some(t) => parse_duration(t).ok_or_else(|| {
            ui.error(
                "Invalid -lock-timeout",
                format!("{t:?} is not a duration (for example 30s, 2m or 1m30s)."),
            )
        }),
    }
}

/// A Go duration (`30s`, `1m30s`, `500ms`), as `-lock-timeout` takes one.
pub use terrane_engine::go_duration as parse_duration;

/// Takes the workspace lock, retrying while someone else holds it until
/// `timeout` has passed (as Terraform's `-lock-timeout`).
pub fn lock_waiting(
    store: &dyn StateStore,
    op: &str,
    timeout: std::time::Duration,
) -> terrane_state::Result<Box<dyn Run>> {
    let deadline = std::time::Instant::now() + timeout;
    let mut pause = std::time::Duration::from_millis(100);
    loop {
        // The last try is at the deadline: the whole timeout is waited,
        // as Terraform waits it (the pause is cut short to end there).
        match store.lock(&workspace(), LockInfo::new(op, "")) {
            Err(terrane_state::StateError::Locked { .. })
                if std::time::Instant::now() < deadline =>
            {
                let left = deadline.saturating_duration_since(std::time::Instant::now());
                std::thread::sleep(pause.min(left));
                pause = (pause * 2).min(std::time::Duration::from_secs(2));
            }
            other => return other,
        }
    }
}

/// Why an operation could not start from the state.
pub enum StateFailure {
    Open(String),
    Lock(String),
    Read(String),
}

impl StateFailure {
    pub fn report(self, ui: &Ui) -> u8 {
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
pub type Started = (
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
pub async fn start_from_state(
    store: Result<Box<dyn StateStore>, terrane_state::StoreConfig>,
    op: &'static str,
    lock: Option<std::time::Duration>,
    keep: bool,
) -> Result<Started, StateFailure> {
    let read = tokio::task::spawn_blocking(move || {
        let store = match store {
            Ok(s) => s,
            Err(config) => {
                crate::backendconf::open(&config).map_err(|e| StateFailure::Open(e.to_string()))?
            }
        };
        let Some(timeout) = lock else {
            let s = store
                .snapshot(&workspace())
                .map_err(|e| StateFailure::Read(e.to_string()))?;
            return Ok((store, None, s, None));
        };
        let mut run = lock_waiting(store.as_ref(), op, timeout)
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

/// Loads the configuration in `dir` with the providers this binary serves
/// in-process (`terrane_builtins::standard`) and plugins.
pub fn load_engine(dir: &Path) -> Result<Engine, Vec<Diagnostic>> {
    Engine::load_given(
        dir,
        &terrane_builtins::standard(),
        &crate::vars::statics(dir),
    )
}

/// The engine for the configuration in `dir`, printing progress lines
/// unless the output is JSON; diagnostics are reported.
pub fn load(ui: &Ui, dir: &Path) -> Result<Engine, u8> {
    let engine = load_engine(dir).map_err(|d| {
        ui.diags(&d);
        1
    })?;
    if let Err(d) = crate::stateconf::refuse_backend(&engine.core.config.module) {
        ui.diags(&[d]);
        return Err(1);
    }
    if !ui.stream && !ui.json {
        let style = Style {
            color: ui.style.color,
        };
        let _ = engine
            .core
            .events
            .set(std::sync::Arc::new(move |e: &terrane_engine::Event| {
                let line = match e {
                    terrane_engine::Event::ProvisionOutput { addr, ty, msg } => {
                        provision_output(&style, &format!("{addr} ({ty}): "), msg)
                    }
                    _ => style.bold(&event_line(e)),
                };
                let _ = writeln!(std::io::stdout().lock(), "{line}");
            }));
    }
    Ok(engine)
}

/// A progress event as Terraform's UI words it.
fn event_line(e: &terrane_engine::Event) -> String {
    use terrane_engine::Event;
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
        Event::PreparingImport { addr, id } => format!("{addr}: Preparing import... [id={id}]"),
        Event::Importing {
            addr,
            id,
            done: false,
        } => format!("{addr}: Importing... [id={id}]"),
        Event::Importing {
            addr,
            id,
            done: true,
        } => format!("{addr}: Import complete [id={id}]"),
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
                // Terraform names a deposed object's destruction
                // "Destroying..." with its key, and its completion by
                // address only.
                _ => return format!("{addr}: Destruction complete after {t}"),
            };
            format!("{}: {what}", who(addr, deposed))
        }
        Event::Provisioning { addr, ty } => format!("{addr}: Provisioning with '{ty}'..."),
        Event::ProvisionOutput { addr, ty, msg } => {
            provision_output(&Style { color: false }, &format!("{addr} ({ty}): "), msg)
        }
        Event::Ephemeral {
            addr,
            closing,
            elapsed,
        } => {
            let verb = if *closing { "Closing" } else { "Opening" };
            match elapsed {
                None => format!("{addr}: {verb}..."),
                Some(t) => format!("{addr}: {verb} complete after {}", elapsed_text(*t)),
            }
        }
    }
}

/// A provisioner's message as Terraform's UI prints it: each non-empty
/// line (trailing space trimmed) after the bold `addr (type): ` prefix.
fn provision_output(style: &Style, prefix: &str, msg: &str) -> String {
    let lines: Vec<String> = msg
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.is_empty())
        .map(|l| format!("{}{l}", style.bold(prefix)))
        .collect();
    lines.join("\n")
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

/// The plan options the arguments ask for (`-var`, `-parallelism`,
/// `-destroy`, `-refresh-only`, `-target`, ...), `mode` unless a flag
/// overrides it.
pub fn options(ui: &Ui, engine: &Engine, a: &Args, mode: PlanMode) -> Result<Options, u8> {
    let (vars, warnings) =
        vars::collect(&engine.core.config.module, Path::new("."), a).map_err(|d| {
            ui.diags(&d);
            1
        })?;
    ui.diags(&warnings);
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
        doubles: None,
        defer: !a.is_false("defer"),
        pulumi_strict_import: a.has("pulumi-strict-import"),
        plan_timestamp: None,
    })
}

/// Ctrl-C: the first stops new work (in-flight operations finish and are
/// saved), the second asks providers to cancel theirs.
pub fn on_interrupt(engine: &Engine) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use terrane_engine::{object_id, Event};
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
                "preparing_import",
                Event::PreparingImport {
                    addr: &addr,
                    id: "abc",
                },
                "random_id.x[1]: Preparing import... [id=abc]",
            ),
            (
                "importing",
                Event::Importing {
                    addr: &addr,
                    id: "abc",
                    done: false,
                },
                "random_id.x[1]: Importing... [id=abc]",
            ),
            (
                "imported",
                Event::Importing {
                    addr: &addr,
                    id: "abc",
                    done: true,
                },
                "random_id.x[1]: Import complete [id=abc]",
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
            (
                "provisioning",
                Event::Provisioning {
                    addr: &addr,
                    ty: "local-exec",
                },
                "random_id.x[1]: Provisioning with 'local-exec'...",
            ),
            (
                "provision_output_trimmed",
                Event::ProvisionOutput {
                    addr: &addr,
                    ty: "local-exec",
                    msg: "hello  ",
                },
                "random_id.x[1] (local-exec): hello",
            ),
            (
                "provision_output_empty_line",
                Event::ProvisionOutput {
                    addr: &addr,
                    ty: "local-exec",
                    msg: "",
                },
                "",
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

    #[test]
    fn lock_timeouts_in_go_duration_syntax() {
        let cases = [
            ("zero", "0", Some(Duration::ZERO)),
            ("seconds", "30s", Some(Duration::from_secs(30))),
            (
                "minutes_and_seconds",
                "1m30s",
                Some(Duration::from_secs(90)),
            ),
            ("hours", "2h", Some(Duration::from_secs(7200))),
            ("milliseconds", "500ms", Some(Duration::from_millis(500))),
            ("decimal", "1.5s", Some(Duration::from_millis(1500))),
            ("no_unit", "30", None),
            ("unknown_unit", "3d", None),
            ("not_a_number", "soon", None),
        ];
        for (name, text, want) in cases {
            assert_eq!(parse_duration(text), want, "case {name}");
        }
    }

    /// A held lock: with no timeout the second taker fails at once; with
    /// one, it gets the lock once the holder lets go. (The holder lets go
    /// a moment after the waiter starts; the outcome does not depend on
    /// that moment, only whether waiting was needed does.)
    #[test]
    fn lock_timeout_waits_for_the_holder() {
        let dir = terrane_testkit::temp_dir();
        let path = dir.path().join("state.db");
        let a = terrane_state::SqliteStore::open(&path, None).unwrap();
        let b = terrane_state::SqliteStore::open(&path, None).unwrap();
        let held = a.lock("default", LockInfo::new("test", "")).unwrap();
        let refused = lock_waiting(&b, "test", Duration::ZERO);
        assert!(
            matches!(refused, Err(terrane_state::StateError::Locked { .. })),
            "case no_timeout_fails_at_once"
        );
        let holder = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            held.finish().unwrap();
        });
        let got = lock_waiting(&b, "test", Duration::from_secs(60));
        holder.join().unwrap();
        assert!(got.is_ok(), "case waits_until_released: {:?}", got.err());
        got.unwrap().finish().unwrap();
    }
}
