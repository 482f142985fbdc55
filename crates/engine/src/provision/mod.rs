//! Provisioners: the `provisioner` blocks of a managed resource, run after
//! an object is created (`when = create`, the default) or before it is
//! destroyed (`when = destroy`), in the order written. A failure stops the
//! rest unless the block says `on_failure = continue`; the caller taints a
//! new object whose creation-time provisioner failed, and keeps an object
//! whose destroy-time provisioner failed.
//!
//! As in Terraform, each provisioner's progress goes to the UI as events
//! ("Provisioning with 'local-exec'...", then each line it prints), and
//! when its configuration holds a sensitive value every line is replaced
//! by "(output suppressed due to sensitive value in config)". Unlike
//! Terraform, whose error then still quotes the command and its output,
//! terrane's error names neither.
//!
//! Types: `local-exec` (`command`, `interpreter`, `working_dir`,
//! `environment`, `quiet`), and over SSH ([`ssh`], through the resource's
//! `connection` block merged with the provisioner's own) `file` (`source`
//! or `content` to `destination`) and `remote-exec` (`inline`, `script`,
//! `scripts`: uploaded to `script_path` and run).
//!
//! Layering: imports walk, values and the bottom layers only (the layer
//! of `conditions`).

mod ssh;

use crate::values::InstanceVars;
use crate::walk::{Event, Walk};
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;
use terrane_config::{
    Connection, Diagnostic, Expr, Provisioner, ProvisionerOnFailure, ProvisionerWhen, Severity,
};
use terrane_state::{InstanceAddr, InstanceKey, ModulePath};
use terrane_value::{convert::convert, Type, Value};

/// What replaces each output line of a provisioner whose configuration
/// holds a sensitive value (Terraform's words).
pub const SUPPRESSED: &str = "(output suppressed due to sensitive value in config)";

/// What replaces each output line when the configuration takes an
/// ephemeral value (found from its references: values carry no
/// ephemeral mark), as Terraform shows it.
pub const EPHEMERAL_SUPPRESSED: &str = "(output suppressed due to ephemeral value in config)";

/// Whether `p` (or the `connection` it uses) takes an ephemeral value in
/// the module the configuration path of `module` names.
fn takes_ephemeral(
    w: &Walk,
    module: &ModulePath,
    p: &Provisioner,
    connection: Option<&terrane_config::Connection>,
) -> bool {
    let path: Vec<String> = module.0.iter().map(|(n, _)| n.clone()).collect();
    let Some(cfg) = w.module_config(&path) else {
        return false;
    };
    p.attributes
        .values()
        .chain(p.connection.iter().flat_map(|c| c.attributes.values()))
        .chain(connection.iter().flat_map(|c| c.attributes.values()))
        .any(|e| crate::checks::ephemeral_source(cfg, e).is_some())
}

/// How much of a command's output an error quotes: the last 8 KiB, as
/// Terraform keeps.
const KEPT_OUTPUT: usize = 8 * 1024;

/// The provisioner blocks of a resource (or `removed` block) and its
/// shared `connection`.
pub struct Blocks<'a> {
    pub provisioners: &'a [Provisioner],
    pub connection: Option<&'a Connection>,
}

/// Runs the provisioners of `blocks` that run at `when`, for the object at
/// `addr` (`inst.self_value` is the object). Returns false when one
/// failed and its block does not say `on_failure = continue` (the
/// diagnostics say why); later provisioners then do not run.
pub async fn run(
    w: &Walk,
    out: &mut Vec<Diagnostic>,
    module: &ModulePath,
    addr: &InstanceAddr,
    blocks: Blocks<'_>,
    inst: &InstanceVars,
    when: ProvisionerWhen,
) -> bool {
    let connection = blocks.connection;
    for p in blocks.provisioners.iter().filter(|p| p.when == when) {
        if w.interrupted() {
            out.push(Diagnostic::error(
                "Provisioning interrupted",
                format!(
                    "The {:?} provisioner of {addr} did not run: the run was interrupted.",
                    p.ty
                ),
                p.range.clone(),
            ));
            return false;
        }
        w.core.emit(Event::Provisioning { addr, ty: &p.ty });
        let mut diags = Vec::new();
        let Some(args) = arguments(w, &mut diags, module, inst, p) else {
            // A configuration that cannot be evaluated fails whatever
            // `on_failure` says, as in Terraform.
            out.extend(diags);
            return false;
        };
        let ephemeral = takes_ephemeral(w, module, p, connection);
        let ok = match p.ty.as_str() {
            "local-exec" => local_exec(w, &mut diags, addr, p, &args, ephemeral).await,
            "file" | "remote-exec" => {
                let cx = Remote {
                    w,
                    module,
                    inst,
                    addr,
                    p,
                    args: &args,
                    ephemeral,
                };
                cx.run(&mut diags, connection).await
            }
            other => {
                diags.push(Diagnostic::error(
                    "Unsupported provisioner",
                    format!(
                        "{addr} has a {other:?} provisioner, and terrane runs only \"local-exec\" provisioners so far.\n\n  with {addr}"
                    ),
                    p.type_range.clone(),
                ));
                false
            }
        };
        match p.on_failure {
            // A failure ignored, as asked; its warnings are still shown.
            ProvisionerOnFailure::Continue if !ok => {}
            ProvisionerOnFailure::Continue => out.extend(diags),
            ProvisionerOnFailure::Fail => {
                out.extend(diags);
                if !ok {
                    return false;
                }
            }
        }
    }
    true
}

/// The names a destroy-time provisioner of the object `addr` may use:
/// `self` (the object), `count.index` and `each.key`.
pub fn destroy_vars(addr: &InstanceAddr, object: &Value) -> InstanceVars {
    let mut v = InstanceVars {
        self_value: Some(object.clone()),
        ..InstanceVars::default()
    };
    match &addr.key {
        InstanceKey::Int(i) => v.count_index = Some(*i),
        InstanceKey::Str(k) => v.each = Some((k.clone(), Value::null(Type::Dynamic))),
        InstanceKey::None => {}
    }
    v
}

/// One provisioner's arguments, evaluated and checked against its type's
/// arguments. None after an error.
fn arguments(
    w: &Walk,
    out: &mut Vec<Diagnostic>,
    module: &ModulePath,
    inst: &InstanceVars,
    p: &Provisioner,
) -> Option<BTreeMap<String, Value>> {
    let known = schema(&p.ty).unwrap_or_default();
    let known = known.as_slice();
    let attrs: Vec<(&String, &Expr)> = p.attributes.iter().collect();
    let (args, mut failed) = eval_args(w, out, module, inst, &attrs, known);
    for (name, _, required) in known {
        let present = args.get(*name).is_some_and(|v| !v.is_null());
        if *required && !present && !failed {
            out.push(Diagnostic::error(
                "Missing required argument",
                format!("The argument {name:?} is required, but no definition was found."),
                p.range.clone(),
            ));
            failed = true;
        }
    }
    (!failed).then_some(args)
}

/// The arguments of a provisioner type (name, type, required); None for
/// a type terrane does not have.
fn schema(ty: &str) -> Option<Vec<(&'static str, Type, bool)>> {
    Some(match ty {
        "local-exec" => vec![
            ("command", Type::String, true),
            ("interpreter", Type::list(Type::String), false),
            ("working_dir", Type::String, false),
            ("environment", Type::map(Type::String), false),
            ("quiet", Type::Bool, false),
        ],
        "file" => vec![
            ("source", Type::String, false),
            ("content", Type::String, false),
            ("destination", Type::String, true),
        ],
        "remote-exec" => vec![
            ("inline", Type::list(Type::String), false),
            ("script", Type::String, false),
            ("scripts", Type::list(Type::String), false),
        ],
        _ => return None,
    })
}

/// What Terraform checks of a provisioner block before running anything
/// (at validate and plan): its type is one terrane has, every argument is
/// one of its type's, and the required ones are there. `owner` names the
/// resource or removed block.
pub fn static_checks(owner: &str, p: &Provisioner, out: &mut Vec<Diagnostic>) {
    let Some(known) = schema(&p.ty) else {
        out.push(Diagnostic::error(
            "Missing required provisioner plugin",
            format!(
                "{owner} has a {:?} provisioner: this configuration requires provisioner plugin {:?}, which isn't available. terrane has the \"local-exec\", \"file\" and \"remote-exec\" provisioners and runs no external provisioner plugins.",
                p.ty, p.ty
            ),
            p.type_range.clone(),
        ));
        return;
    };
    for (name, e) in &p.attributes {
        if !known.iter().any(|(n, _, _)| n == name) {
            out.push(Diagnostic::error(
                "Unsupported argument",
                format!("An argument named {name:?} is not expected here."),
                e.range.clone(),
            ));
        }
    }
    for (name, _, required) in &known {
        if *required && !p.attributes.contains_key(*name) {
            out.push(Diagnostic::error(
                "Missing required argument",
                format!("The argument {name:?} is required, but no definition was found."),
                p.range.clone(),
            ));
        }
    }
}

/// Evaluates `attrs` against `known` (name, type, required): unknown
/// names, errors and values of the wrong type reported. The values, and
/// whether anything failed.
fn eval_args(
    w: &Walk,
    out: &mut Vec<Diagnostic>,
    module: &ModulePath,
    inst: &InstanceVars,
    attrs: &[(&String, &Expr)],
    known: &[(&str, Type, bool)],
) -> (BTreeMap<String, Value>, bool) {
    let mut args = BTreeMap::new();
    let mut failed = false;
    for (name, e) in attrs {
        let Some((_, ty, _)) = known.iter().find(|(n, _, _)| n == name) else {
            if !known.is_empty() {
                out.push(Diagnostic::error(
                    "Unsupported argument",
                    format!("An argument named {name:?} is not expected here."),
                    e.range.clone(),
                ));
                failed = true;
            }
            continue;
        };
        let (v, d) = w.eval(module, inst.clone(), e);
        let bad = d.iter().any(|d| d.severity == Severity::Error);
        out.extend(d);
        if bad {
            failed = true;
            continue;
        }
        if !v.is_wholly_known() {
            out.push(Diagnostic::error(
                "Invalid provisioner argument",
                format!("The value of {name:?} is not known during apply; this is a bug in terrane's ordering of provisioners."),
                e.range.clone(),
            ));
            failed = true;
            continue;
        }
        let sensitive = v.has_sensitive();
        match convert(&v.unmark_deep(), ty) {
            Ok(c) => {
                args.insert(name.to_string(), c.with_sensitive(sensitive));
            }
            Err(err) => {
                out.push(Diagnostic::error(
                    "Incorrect attribute value type",
                    format!("Inappropriate value for attribute {name:?}: {err}."),
                    e.range.clone(),
                ));
                failed = true;
            }
        }
    }
    (args, failed)
}

/// Go's `%q` of one string (strconv.Quote), which Terraform uses to show
/// the command line it runs.
pub fn go_quote(s: &str) -> String {
    let mut q = String::with_capacity(s.len() + 2);
    q.push('"');
    for c in s.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            '\u{7}' => q.push_str("\\a"),
            '\u{8}' => q.push_str("\\b"),
            '\u{c}' => q.push_str("\\f"),
            '\n' => q.push_str("\\n"),
            '\r' => q.push_str("\\r"),
            '\t' => q.push_str("\\t"),
            '\u{b}' => q.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => q.push_str(&format!("\\x{:02x}", c as u32)),
            c if c.is_control() => q.push_str(&format!("\\u{:04x}", c as u32)),
            c => q.push(c),
        }
    }
    q.push('"');
    q
}

/// How a command ended, as Go's `os/exec` words it ("exit status 3",
/// "signal: killed").
fn exit_text(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => format!("exit status {c}"),
        (None, Some(s)) => format!("signal: {}", signal_name(s)),
        (None, None) => "exit status unknown".into(),
    }
}

fn signal_name(s: i32) -> String {
    match s {
        1 => "hangup".into(),
        2 => "interrupt".into(),
        9 => "killed".into(),
        13 => "broken pipe".into(),
        15 => "terminated".into(),
        n => format!("signal {n}"),
    }
}

/// Runs `local-exec`: the command through the interpreter (`/bin/sh -c`
/// by default), standard output and error merged into one stream shown
/// line by line, the process environment plus `environment`.
async fn local_exec(
    w: &Walk,
    out: &mut Vec<Diagnostic>,
    addr: &InstanceAddr,
    p: &Provisioner,
    args: &BTreeMap<String, Value>,
    ephemeral: bool,
) -> bool {
    let sensitive = args.values().any(Value::has_sensitive);
    let str_of = |name: &str| {
        args.get(name)
            .and_then(|v| v.unmark_deep().as_str().map(str::to_string))
    };
    let command = str_of("command").unwrap_or_default();
    let mut argv: Vec<String> = args
        .get("interpreter")
        .map(Value::unmark_deep)
        .and_then(|v| {
            v.elements().map(|es| {
                es.iter()
                    .filter_map(|e| e.as_str().map(str::to_string))
                    .collect()
            })
        })
        .unwrap_or_default();
    if argv.is_empty() {
        argv = vec!["/bin/sh".into(), "-c".into()];
    }
    argv.push(command.clone());
    let env: Vec<(String, String)> = args
        .get("environment")
        .map(Value::unmark_deep)
        .and_then(|v| {
            v.entries().map(|m| {
                m.iter()
                    .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
                    .collect()
            })
        })
        .unwrap_or_default();
    let dir = str_of("working_dir").filter(|d| !d.is_empty());
    let quiet = args
        .get("quiet")
        .and_then(|v| v.unmark_deep().as_bool())
        .unwrap_or(false);

    let core = w.core.clone();
    let who = (addr.clone(), p.ty.clone());
    let say = Arc::new(move |msg: &str| {
        let msg = match (sensitive, ephemeral) {
            (true, _) => SUPPRESSED,
            (false, true) => EPHEMERAL_SUPPRESSED,
            (false, false) => msg,
        };
        core.emit(Event::ProvisionOutput {
            addr: &who.0,
            ty: &who.1,
            msg,
        });
    });
    if quiet {
        say("local-exec: Executing: Suppressed by quiet=true");
    } else {
        let shown: Vec<String> = argv.iter().map(|a| go_quote(a)).collect();
        say(&format!("Executing: [{}]", shown.join(" ")));
    }
    let group = Arc::new(AtomicI32::new(0));
    let running = group.clone();
    let mut job =
        tokio::task::spawn_blocking(move || execute(&argv, &env, dir.as_deref(), &*say, &running));
    // An interrupt ends the command (its whole process group), which then
    // fails as any failing command does: the object is tainted.
    let mut killed = false;
    let joined = loop {
        tokio::select! {
            r = &mut job => break r,
            _ = tokio::time::sleep(std::time::Duration::from_millis(100)) => {
                let pgid = group.load(Ordering::SeqCst);
                if w.interrupted() && !killed && pgid > 0 {
                    let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
                    killed = true;
                }
            }
        }
    };
    let (result, output) = match joined {
        Ok(r) => r,
        Err(e) => (
            Err(format!("the command's runner stopped: {e}")),
            Vec::new(),
        ),
    };
    let Err(why) = result else { return true };
    let detail = if sensitive {
        format!(
            "Error running command (not shown: its configuration includes a sensitive value): {why}. Output: {SUPPRESSED}"
        )
    } else {
        format!(
            "Error running command '{command}': {why}. Output: {}",
            String::from_utf8_lossy(&output)
        )
    };
    out.push(Diagnostic::error(
        "local-exec provisioner error",
        format!("{}\n\n  with {addr}", detail.trim_end()),
        p.range.clone(),
    ));
    false
}

/// Runs `argv` with its standard output and error on one pipe, passing
/// each line to `say` as it comes; the outcome (Go's wording on failure)
/// and the last [`KEPT_OUTPUT`] bytes of output.
fn execute(
    argv: &[String],
    env: &[(String, String)],
    dir: Option<&str>,
    say: &dyn Fn(&str),
    group: &AtomicI32,
) -> (Result<(), String>, Vec<u8>) {
    let spawned = (|| {
        let (reader, writer) = std::io::pipe()?;
        let mut cmd = std::process::Command::new(&argv[0]);
        cmd.args(&argv[1..])
            .stdin(std::process::Stdio::null())
            .stdout(writer.try_clone()?)
            .stderr(writer)
            .envs(env.iter().map(|(k, v)| (k, v)));
        if let Some(d) = dir {
            cmd.current_dir(d);
        }
        // Its own process group, so that an interrupt ends whatever the
        // command started too.
        cmd.process_group(0);
        let child = cmd.spawn()?;
        group.store(child.id() as i32, Ordering::SeqCst);
        // `cmd` holds the pipe's write end: drop it so the read below
        // ends when the command (and whatever inherited the pipe) exits.
        drop(cmd);
        Ok::<_, std::io::Error>((child, reader))
    })();
    let (mut child, reader) = match spawned {
        Ok(x) => x,
        Err(e) => return (Err(e.to_string()), Vec::new()),
    };
    let mut kept: Vec<u8> = Vec::new();
    let mut r = BufReader::new(reader);
    let mut line = Vec::new();
    loop {
        line.clear();
        match r.by_ref().read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(_) => {
                kept.extend_from_slice(&line);
                if kept.len() > KEPT_OUTPUT {
                    kept.drain(..kept.len() - KEPT_OUTPUT);
                }
                let text = String::from_utf8_lossy(&line);
                say(text.trim_end_matches(['\n', '\r']));
            }
            Err(_) => break,
        }
    }
    // Not reaped yet, so the group cannot be reused while this is set.
    group.store(0, Ordering::SeqCst);
    match child.wait() {
        Ok(s) if s.success() => (Ok(()), kept),
        Ok(s) => (Err(exit_text(s)), kept),
        Err(e) => (Err(e.to_string()), kept),
    }
}

/// The arguments a `connection` block takes (all as strings, as Terraform
/// reads them).
const CONNECTION_ARGS: [&str; 20] = [
    "type",
    "host",
    "port",
    "user",
    "password",
    "private_key",
    "certificate",
    "host_key",
    "timeout",
    "script_path",
    "agent",
    "agent_identity",
    "target_platform",
    "bastion_host",
    "bastion_host_key",
    "bastion_port",
    "bastion_user",
    "bastion_password",
    "bastion_private_key",
    "bastion_certificate",
];

/// A `file` or `remote-exec` provisioner about to run over SSH.
struct Remote<'a> {
    w: &'a Walk,
    module: &'a ModulePath,
    inst: &'a InstanceVars,
    addr: &'a InstanceAddr,
    p: &'a Provisioner,
    args: &'a BTreeMap<String, Value>,
    /// Its configuration takes an ephemeral value: output suppressed.
    ephemeral: bool,
}

impl Remote<'_> {
    fn error(&self, out: &mut Vec<Diagnostic>, summary: &str, detail: String) -> bool {
        out.push(Diagnostic::error(
            summary,
            format!("{}\n\n  with {}", detail.trim_end(), self.addr),
            self.p.range.clone(),
        ));
        false
    }

    /// The provisioner's `connection` (the resource's, overridden
    /// argument by argument by the provisioner's own), evaluated.
    fn connection(
        &self,
        out: &mut Vec<Diagnostic>,
        resource: Option<&Connection>,
    ) -> Option<BTreeMap<String, Value>> {
        let mut merged: BTreeMap<&String, &Expr> = BTreeMap::new();
        for c in resource.into_iter().chain(self.p.connection.as_ref()) {
            merged.extend(c.attributes.iter());
        }
        if resource.is_none() && self.p.connection.is_none() {
            self.error(
                out,
                "Missing connection configuration for provisioner",
                format!(
                    "The {:?} provisioner needs a connection block (in the resource or in the provisioner) saying where to connect.",
                    self.p.ty
                ),
            );
            return None;
        }
        let known: Vec<(&str, Type, bool)> = CONNECTION_ARGS
            .iter()
            .map(|n| (*n, Type::String, *n == "host"))
            .collect();
        let attrs: Vec<(&String, &Expr)> = merged.into_iter().collect();
        let (args, failed) = eval_args(self.w, out, self.module, self.inst, &attrs, &known);
        if failed {
            return None;
        }
        let host = args.get("host").is_some_and(|v| !v.is_null());
        if !host {
            self.error(
                out,
                "Missing required argument",
                "The connection argument \"host\" is required, but no definition was found.".into(),
            );
            return None;
        }
        Some(args)
    }

    async fn run(&self, out: &mut Vec<Diagnostic>, resource: Option<&Connection>) -> bool {
        let Some(conn) = self.connection(out, resource) else {
            return false;
        };
        let get = |k: &str| {
            conn.get(k)
                .and_then(|v| v.unmark_deep().as_str().map(str::to_string))
                .filter(|s| !s.is_empty())
        };
        let ty = get("type").unwrap_or_else(|| "ssh".into());
        if ty != "ssh" {
            let detail =
                format!("The connection type {ty:?} is not supported by terrane; only \"ssh\" is.");
            return self.error(out, "Unsupported connection type", detail);
        }
        let port = |k: &str, default: u16| match get(k) {
            None => Ok(default),
            Some(p) => p
                .parse::<u16>()
                .map_err(|_| format!("Invalid {k} {p:?}: a port number is required.")),
        };
        let target_port = match port("port", 22) {
            Ok(p) => p,
            Err(e) => return self.error(out, "Invalid connection", e),
        };
        let target = ssh::Target {
            host: get("host").unwrap_or_default(),
            port: target_port,
            user: get("user").unwrap_or_else(|| "root".into()),
            password: get("password"),
            private_key: get("private_key"),
            host_key: get("host_key"),
        };
        let bastion = match get("bastion_host") {
            None => None,
            Some(host) => Some(ssh::Target {
                host,
                port: match port("bastion_port", target.port) {
                    Ok(p) => p,
                    Err(e) => return self.error(out, "Invalid connection", e),
                },
                user: get("bastion_user").unwrap_or_else(|| target.user.clone()),
                password: get("bastion_password").or_else(|| target.password.clone()),
                private_key: get("bastion_private_key").or_else(|| target.private_key.clone()),
                host_key: get("bastion_host_key"),
            }),
        };
        let timeout_text = get("timeout").unwrap_or_else(|| "5m".into());
        let Some(timeout) = crate::duration::go_duration(&timeout_text) else {
            let detail = format!("Invalid timeout {timeout_text:?}: a duration such as \"30s\" or \"5m\" is required.");
            return self.error(out, "Invalid connection", detail);
        };
        let sensitive = self.args.values().any(Value::has_sensitive);
        let ephemeral = self.ephemeral;
        let core = self.w.core.clone();
        let (addr, pty) = (self.addr.clone(), self.p.ty.clone());
        let say = move |msg: &str| {
            let msg = match (sensitive, ephemeral) {
                (true, _) => SUPPRESSED,
                (false, true) => EPHEMERAL_SUPPRESSED,
                (false, false) => msg,
            };
            core.emit(Event::ProvisionOutput {
                addr: &addr,
                ty: &pty,
                msg,
            });
        };
        // As in Terraform: the file provisioner connects silently;
        // remote-exec announces every attempt.
        let announce = self.p.ty == "remote-exec";
        let attempt = || {
            if !announce {
                return;
            }
            say(&format!(
                "Connecting to remote host via SSH...\n  Host: {}\n  User: {}\n  Password: {}\n  Private key: {}\n  Certificate: false\n  SSH Agent: false\n  Checking Host Key: {}\n  Target Platform: unix\n",
                target.host,
                target.user,
                target.password.is_some(),
                target.private_key.is_some(),
                target.host_key.is_some()
            ));
            if let Some(b) = &bastion {
                say(&format!(
                    "Using configured bastion host...\n  Host: {}\n  User: {}\n  Password: {}\n  Private key: {}\n  Certificate: false\n  SSH Agent: false\n  Checking Host Key: {}",
                    b.host,
                    b.user,
                    b.password.is_some(),
                    b.private_key.is_some(),
                    b.host_key.is_some()
                ));
            }
        };
        let session = match ssh::connect(&target, bastion.as_ref(), timeout, &attempt).await {
            Ok(s) => s,
            Err(e) => {
                let summary = format!("{} provisioner error", self.p.ty);
                return self.error(out, &summary, e);
            }
        };
        if announce {
            say("Connected!");
        }
        let result = if self.p.ty == "file" {
            self.file(&session).await
        } else {
            let script_path =
                get("script_path").unwrap_or_else(|| "/tmp/terraform_%RAND%.sh".into());
            self.remote_exec(&session, &script_path, &say).await
        };
        session.close().await;
        match result {
            Ok(()) => true,
            Err(e) => {
                let summary = format!("{} provisioner error", self.p.ty);
                self.error(out, &summary, e)
            }
        }
    }

    fn arg(&self, k: &str) -> Option<Value> {
        self.args
            .get(k)
            .map(Value::unmark_deep)
            .filter(|v| !v.is_null())
    }

    fn strings(&self, k: &str) -> Option<Vec<String>> {
        self.arg(k).and_then(|v| {
            v.elements().map(|es| {
                es.iter()
                    .filter_map(|e| e.as_str().map(str::to_string))
                    .collect()
            })
        })
    }

    async fn file(&self, session: &ssh::Session) -> Result<(), String> {
        let dst = self
            .arg("destination")
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        let source = self
            .arg("source")
            .and_then(|v| v.as_str().map(str::to_string));
        let content = self
            .arg("content")
            .and_then(|v| v.as_str().map(str::to_string));
        match (source, content) {
            (Some(_), Some(_)) | (None, None) => {
                Err("Exactly one of \"source\" or \"content\" must be set.".into())
            }
            (None, Some(c)) => session.upload(&dst, c.as_bytes()).await,
            (Some(src), None) => {
                let path = std::path::Path::new(&src);
                if path.is_dir() {
                    session.upload_dir(path, src.ends_with('/'), &dst).await
                } else {
                    let data = std::fs::read(path).map_err(|e| format!("Upload failed: {e}"))?;
                    session.upload(&dst, &data).await
                }
            }
        }
    }

    async fn remote_exec(
        &self,
        session: &ssh::Session,
        script_path: &str,
        say: &(dyn Fn(&str) + Sync),
    ) -> Result<(), String> {
        let inline = self.strings("inline");
        let script = self
            .arg("script")
            .and_then(|v| v.as_str().map(str::to_string));
        let scripts = self.strings("scripts");
        let texts: Vec<String> = match (inline, script, scripts) {
            (Some(lines), None, None) => {
                let mut lines = lines;
                lines.push(String::new());
                vec![lines.join("\n")]
            }
            (None, Some(one), None) => vec![read_script(&one)?],
            (None, None, Some(many)) => many
                .iter()
                .map(|p| read_script(p))
                .collect::<Result<_, _>>()?,
            _ => {
                return Err(
                    "Exactly one of \"inline\", \"script\" or \"scripts\" must be set.".into(),
                )
            }
        };
        for text in texts {
            let text = if text.starts_with("#!") {
                text
            } else {
                format!("#!/bin/sh\n{text}")
            };
            let n: u32 = rand_u31();
            let path = script_path.replace("%RAND%", &n.to_string());
            session
                .upload(&path, text.as_bytes())
                .await
                .map_err(|e| format!("Error uploading script: {e}"))?;
            let quoted = ssh::shell_quote(&path);
            let status = session
                .run(&format!("chmod 0777 {quoted}"), say)
                .await
                .map_err(|e| {
                    format!("Error chmodding script file to 0777 in remote machine: {e}")
                })?;
            if status != 0 {
                return Err(format!(
                    "Error chmodding script file to 0777 in remote machine: exit status {status}"
                ));
            }
            let status = session
                .run(&quoted, say)
                .await
                .map_err(|e| format!("Error starting script: {e}"))?;
            if status != 0 {
                let shown = go_quote(&path);
                return Err(format!(
                    "error executing {shown}: Process exited with status {status}"
                ));
            }
        }
        Ok(())
    }
}

fn read_script(path: &str) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("Failed to open script {path:?}: {e}"))
}

/// A random non-negative 31-bit number for `%RAND%` in `script_path`.
fn rand_u31() -> u32 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default(),
    );
    (h.finish() & 0x7fff_ffff) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(case: &str, got: String, want: &str) {
        assert_eq!(got, want, "case {case}");
    }

    #[test]
    fn item1_command_line_quoted_as_go_quotes_it() {
        let cases = [
            ("plain", "echo hi", r#""echo hi""#),
            ("quotes", r#"echo "a""#, r#""echo \"a\"""#),
            ("backslash_newline_tab", "a\\b\nc\td", r#""a\\b\nc\td""#),
            ("control", "\u{1}x\u{7f}", r#""\x01x\x7f""#),
            ("unicode_kept", "é ✓", r#""é ✓""#),
        ];
        for (case, s, want) in cases {
            check(case, go_quote(s), want);
        }
    }

    #[test]
    fn item1_merged_output_lines_and_go_exit_wording() {
        let lines = std::sync::Mutex::new(Vec::new());
        let say = |l: &str| lines.lock().unwrap().push(l.to_string());
        let argv = |s: &str| vec!["/bin/sh".to_string(), "-c".to_string(), s.to_string()];
        let env = [("FOO".to_string(), "bar".to_string())];
        let g = AtomicI32::new(0);
        let (r, kept) = execute(
            &argv("echo $FOO; echo err >&2; exit 3"),
            &env,
            None,
            &say,
            &g,
        );
        check("exit_status", r.unwrap_err(), "exit status 3");
        check(
            "kept_output",
            String::from_utf8_lossy(&kept).into(),
            "bar\nerr\n",
        );
        check("lines", lines.lock().unwrap().join("|"), "bar|err");
        let (r, _) = execute(&argv("kill -9 $$"), &[], None, &say, &g);
        check("signal", r.unwrap_err(), "signal: killed");
        let (r, _) = execute(&argv("pwd"), &[], Some("/"), &say, &g);
        check("ok", format!("{r:?}"), "Ok(())");
        check(
            "working_dir",
            lines.lock().unwrap().last().unwrap().clone(),
            "/",
        );
        let missing = vec!["/nonexistent/interpreter".to_string()];
        let (r, _) = execute(&missing, &[], None, &say, &g);
        assert!(r.is_err(), "case missing_interpreter");
    }
}
