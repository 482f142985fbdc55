//! Runs one scenario through real Terraform and terrane side by side, with
//! the same provider binaries, and compares what they plan and record.

use crate::normalize::{self, Subst};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use terrane_testkit::Terraform;

/// The two tools and the CLI config file that points both at our plugins.
pub struct Peers {
    terraform: Terraform,
    terrane: PathBuf,
    cli_config: String,
}

/// The provider requirements every scenario's configuration starts with.
pub const PROVIDERS: &str = r#"terraform {
  required_providers {
    random = { source = "hashicorp/random" }
    local  = { source = "hashicorp/local" }
    kv     = { source = "example.com/terrane/kv" }
    legacy = { source = "terrane/legacy" }
  }
}
"#;

/// Real Terraform plus our plugins, set up once per test process; `None`
/// (locally) when Terraform is not installed.
pub fn peers() -> Option<&'static Peers> {
    static PEERS: OnceLock<Option<Peers>> = OnceLock::new();
    PEERS
        .get_or_init(|| {
            let terraform = terrane_testkit::terraform()?;
            let random = terrane_testkit::built_binary(
                "terrane-provider-random",
                "terraform-provider-random",
            );
            let local =
                terrane_testkit::built_binary("terrane-provider-local", "terraform-provider-local");
            // The nested-block fixture (scenarios/blocks.rs).
            let blocks = terrane_testkit::fixture("terrane-blocks-fixture");
            // Protocol 5 only, as legacy-SDK providers are.
            let legacy = terrane_testkit::fixture("terrane-legacy-fixture");
            // Per protocol mode; dev_overrides makes each test process its
            // own directory under it (a second run copying its plugins
            // over binaries the first is running would fail).
            let dir = random
                .parent()
                .expect("profile dir")
                .join(format!("differential-p{}", protocol().replace(',', "")));
            std::fs::create_dir_all(&dir).expect("plugin dir");
            let rc = terrane_testkit::dev_overrides(
                &dir,
                &[
                    ("hashicorp/random", &random),
                    ("hashicorp/local", &local),
                    ("example.com/terrane/blocks", &blocks),
                    ("terrane/legacy", &legacy),
                ],
            );
            // The Python provider runs from the source tree: its launcher
            // finds the .venv relative to itself.
            let py = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/differential/pyprovider");
            let text = std::fs::read_to_string(&rc).expect("CLI config");
            let text = text.replacen(
                "dev_overrides {\n",
                &format!(
                    "dev_overrides {{\n    \"example.com/terrane/kv\" = \"{}\"\n",
                    py.display()
                ),
                1,
            );
            std::fs::write(&rc, text).expect("CLI config");
            Some(Peers {
                terraform,
                // TERRANE_DIFFERENTIAL_BIN runs another build of terrane
                // against this suite (a mutation check, a bisection).
                terrane: std::env::var_os("TERRANE_DIFFERENTIAL_BIN")
                    .map(PathBuf::from)
                    .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_terrane"))),
                cli_config: rc,
            })
        })
        .as_ref()
}

/// The plugin protocol versions the SDK providers serve in this run, from
/// `TERRANE_PLUGIN_PROTOCOL` (`5`: both tools must negotiate protocol 5
/// with them; default `5,6`: they negotiate 6). scripts/test runs the
/// suite in both modes.
pub fn protocol() -> &'static str {
    static P: OnceLock<String> = OnceLock::new();
    P.get_or_init(|| {
        let p = std::env::var(terrane_plugin::PROTOCOL_ENV).unwrap_or_default();
        let p = p.trim();
        match p {
            "" => "5,6".to_string(),
            "5" | "6" | "5,6" | "6,5" => p.to_string(),
            other => panic!(
                "{}={other:?}: use 5, 6 or 5,6",
                terrane_plugin::PROTOCOL_ENV
            ),
        }
    })
}

/// One tool's run of a command.
pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Tool {
    Terraform,
    Terrane,
}

impl Peers {
    pub fn run(&self, tool: Tool, dir: &Path, args: &[&str]) -> Out {
        self.run_with(tool, dir, args, &[])
    }

    /// `run` with extra environment variables (a step's `TF_VAR_*`,
    /// `TF_WORKSPACE`).
    pub fn run_with(&self, tool: Tool, dir: &Path, args: &[&str], extra: &[(&str, &str)]) -> Out {
        let mut env = vec![
            ("TF_CLI_CONFIG_FILE", self.cli_config.as_str()),
            ("CHECKPOINT_DISABLE", "1"),
            ("TF_IN_AUTOMATION", "1"),
            (terrane_plugin::PROTOCOL_ENV, protocol()),
        ];
        env.extend_from_slice(extra);
        match tool {
            Tool::Terraform => {
                let o = self.terraform.run(dir, args, &env);
                Out {
                    code: o.code,
                    stdout: o.stdout,
                    stderr: o.stderr,
                }
            }
            Tool::Terrane => {
                let mut cmd = Command::new(&self.terrane);
                cmd.args(args)
                    .current_dir(dir)
                    .stdin(Stdio::null())
                    .envs(env.iter().copied());
                let o = cmd.output().expect("terrane runs");
                Out {
                    code: o.status.code().unwrap_or(-1),
                    stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
                    stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
                }
            }
        }
    }
}

/// What a step does after writing its files.
pub enum Act {
    /// `plan -out=p -detailed-exitcode ARGS`, `show -json p`, `apply p`.
    Plan(&'static [&'static str]),
    /// `plan -out=p -detailed-exitcode ARGS` and `show -json p` only.
    PlanOnly(&'static [&'static str]),
    /// `apply -auto-approve ARGS`.
    Apply(&'static [&'static str]),
    /// `destroy -auto-approve`.
    Destroy,
    /// `refresh`.
    Refresh,
    /// `import ADDR ID`.
    Import(&'static str, &'static str),
    /// `state rm ADDR`.
    StateRm(&'static str),
}

/// One step of a scenario.
pub struct Step {
    /// Files to write (relative to the scenario directory); `None` removes.
    pub files: Vec<(&'static str, Option<String>)>,
    /// Changes made outside the tools before the commands (drift).
    pub outside: Option<fn(&Path)>,
    pub act: Act,
    /// Environment variables for the step's commands (not for `init`).
    pub env: Vec<(&'static str, String)>,
    /// The exit code Terraform ends the step with (see [`Step::exits`]).
    pub exit: i32,
}

/// `main.tf` (with the provider requirements prepended) and a plan/apply.
pub fn step(main_tf: &str) -> Step {
    Step {
        files: vec![("main.tf", Some(format!("{PROVIDERS}{main_tf}")))],
        outside: None,
        act: Act::Plan(&[]),
        env: vec![],
        exit: 0,
    }
}

impl Step {
    pub fn act(mut self, act: Act) -> Step {
        self.act = act;
        self
    }
    /// Pins the exit code Terraform ends this step with: the code of the
    /// step's last command. For [`Act::Plan`] that is the apply of the
    /// saved plan, or the plan itself when it fails (1); for
    /// [`Act::PlanOnly`] it is `plan -detailed-exitcode`: 0 without
    /// changes, 2 with changes, 1 on error; otherwise the one command.
    /// Default 0, so a `PlanOnly` step that expects changes says
    /// `.exits(2)` and a step expected to fail says `.exits(1)`. A
    /// Terraform run that ends otherwise fails the scenario (a scenario in
    /// which both tools fail the same way cannot pass by accident), and
    /// terrane must exit as Terraform does at every command.
    pub fn exits(mut self, code: i32) -> Step {
        self.exit = code;
        self
    }
    pub fn file(mut self, name: &'static str, text: &str) -> Step {
        self.files.push((name, Some(text.to_string())));
        self
    }
    pub fn outside(mut self, f: fn(&Path)) -> Step {
        self.outside = Some(f);
        self
    }
    /// Sets an environment variable for the step's commands.
    pub fn env(mut self, name: &'static str, value: &str) -> Step {
        self.env.push((name, value.to_string()));
        self
    }
    /// A step that changes nothing in the configuration.
    pub fn same(act: Act) -> Step {
        Step {
            files: vec![],
            outside: None,
            act,
            env: vec![],
            exit: 0,
        }
    }
}

struct Side {
    tool: Tool,
    dir: PathBuf,
}

/// Runs the scenario and returns every difference found (empty: the tools
/// agree), each prefixed with the step it came from. Every step compares
/// the exit codes (Terraform's against the step's pin, terrane's against
/// Terraform's), the diagnostics, the human plan, the saved plan's JSON,
/// what apply, destroy, refresh, import and `state rm` print, and the
/// final state; random values are paired by [`Subst`].
pub fn run(peers: &Peers, name: &str, steps: Vec<Step>) -> Vec<String> {
    let root = terrane_testkit::temp_dir();
    let sides = [
        Side {
            tool: Tool::Terraform,
            dir: root.path().join("terraform"),
        },
        Side {
            tool: Tool::Terrane,
            dir: root.path().join("terrane"),
        },
    ];
    let mut problems = Vec::new();
    // Random values are learned per workspace: the same address holds
    // another object in each.
    let mut substs: std::collections::BTreeMap<String, Subst> = Default::default();
    for (i, st) in steps.iter().enumerate() {
        let workspace = st
            .env
            .iter()
            .find(|(k, _)| *k == "TF_WORKSPACE")
            .map_or("default", |(_, v)| v.as_str());
        let subst = substs.entry(workspace.to_string()).or_default();
        let at = format!("{name} step {}", i + 1);
        for s in &sides {
            std::fs::create_dir_all(&s.dir).expect("scenario dir");
            for (f, text) in &st.files {
                let p = s.dir.join(f);
                match text {
                    Some(t) => {
                        std::fs::create_dir_all(p.parent().expect("parent")).expect("dir");
                        std::fs::write(&p, t).expect("write file");
                    }
                    None => {
                        let _ = std::fs::remove_file(&p);
                    }
                }
            }
            if i == 0 {
                let o = peers.run(s.tool, &s.dir, &["init", "-input=false"]);
                assert_eq!(
                    o.code, 0,
                    "{at}: {:?} init failed:\n{}{}",
                    s.tool, o.stdout, o.stderr
                );
                if s.tool == Tool::Terrane {
                    // dev_overrides must make terrane launch our plugin
                    // binaries, not its in-process built-ins.
                    for p in ["hashicorp/random", "hashicorp/local"] {
                        assert!(
                            !o.stdout.contains(&format!("built-in {p}")),
                            "{at}: terrane used its built-in {p}:\n{}",
                            o.stdout
                        );
                    }
                }
            }
            if let Some(f) = st.outside {
                f(&s.dir);
            }
        }
        let env: Vec<(&str, &str)> = st.env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let outs: Vec<StepOut> = sides
            .iter()
            .map(|s| run_step(peers, s, &st.act, &env))
            .collect();
        let (tf, tr) = (&outs[0], &outs[1]);
        problems.extend(
            compare_step(st, tf, tr, subst)
                .into_iter()
                .map(|d| format!("{at}: {d}")),
        );
    }
    problems
}

/// Every difference between the two sides' runs of one step; `subst`
/// learns the step's random values.
fn compare_step(st: &Step, tf: &StepOut, tr: &StepOut, subst: &mut Subst) -> Vec<String> {
    let mut problems = Vec::new();
    let logs = || format!("--- terraform:\n{}\n--- terrane:\n{}", tf.log, tr.log);
    if tf.last_code() != Some(st.exit) {
        problems.push(format!(
            "terraform ended the step with exit code {:?}, the scenario pins {}\n{}",
            tf.last_code(),
            st.exit,
            logs()
        ));
    }
    for (what, a, b) in [
        ("plan", &tf.plan_code, &tr.plan_code),
        ("apply", &tf.apply_code, &tr.apply_code),
    ] {
        if a != b {
            problems.push(format!(
                "{what} exit code: terraform {a:?}, terrane {b:?}\n{}",
                logs()
            ));
        }
    }
    if let Some(d) = normalize::compare_diagnostics(&tf.printed, &tr.printed) {
        problems.push(format!("diagnostics differ:\n{d}"));
    }
    if let Some(p) = &tf.plan {
        subst.learn_plan_deps(p);
        subst.learn_moves(p);
    }
    if let (Some(a), Some(b)) = (&tf.plan, &tr.plan) {
        problems.extend(
            normalize::compare_plans(a, b, subst)
                .into_iter()
                .map(|d| format!("plan: {d}")),
        );
    }
    if let (Some(a), Some(b)) = (&tf.plan_text, &tr.plan_text) {
        if let Some(d) = normalize::compare_plan_texts(a, b, subst) {
            problems.push(format!("plan text: {d}"));
        }
    }
    // What the step may replace: what Terraform's saved plan creates;
    // anything for an apply without a saved plan; nothing otherwise.
    let replaced: Option<std::collections::BTreeSet<String>> = match (&st.act, &tf.plan) {
        (Act::Apply(_), _) => None,
        (_, Some(p)) => Some(
            p["resource_changes"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|rc| {
                    rc["change"]["actions"]
                        .as_array()
                        .is_some_and(|a| a.iter().any(|x| x == "create"))
                })
                .filter_map(|rc| rc["address"].as_str().map(str::to_string))
                .collect(),
        ),
        _ => Some(Default::default()),
    };
    let before = subst.clone();
    problems.extend(
        subst
            .learn(&tf.state, &tr.state, replaced.as_ref())
            .into_iter()
            .map(|d| format!("state: {d}")),
    );
    problems.extend(
        normalize::compare_states(&tf.state, &tr.state, subst)
            .into_iter()
            .map(|d| format!("state: {d}")),
    );
    if let (Some(a), Some(b)) = (&tf.apply_text, &tr.apply_text) {
        if let Some(d) = normalize::compare_run_texts(a, b, &[&before, subst]) {
            problems.push(format!("{} output: {d}", st.act.command()));
        }
    }
    problems
}

impl Act {
    /// The command whose output a step compares after the plan.
    fn command(&self) -> &'static str {
        match self {
            Act::Plan(_) | Act::PlanOnly(_) | Act::Apply(_) => "apply",
            Act::Destroy => "destroy",
            Act::Refresh => "refresh",
            Act::Import(..) => "import",
            Act::StateRm(_) => "state rm",
        }
    }
}

struct StepOut {
    plan_code: Option<i32>,
    /// What `plan` printed for people.
    plan_text: Option<String>,
    apply_code: Option<i32>,
    /// What the step's command after the plan printed (stdout).
    apply_text: Option<String>,
    plan: Option<Value>,
    state: Value,
    /// Everything the step's commands printed (stdout and stderr), for
    /// the diagnostics.
    printed: String,
    log: String,
}

impl StepOut {
    /// The exit code of the step's last command.
    fn last_code(&self) -> Option<i32> {
        self.apply_code.or(self.plan_code)
    }
}

fn json_of(o: &Out, what: &str) -> Value {
    serde_json::from_str(&o.stdout)
        .unwrap_or_else(|e| panic!("{what}: not JSON ({e}):\n{}\n{}", o.stdout, o.stderr))
}

fn run_step(peers: &Peers, s: &Side, act: &Act, env: &[(&str, &str)]) -> StepOut {
    let mut log = String::new();
    let mut printed = String::new();
    let mut cmd = |args: &[&str]| {
        let o = peers.run_with(s.tool, &s.dir, args, env);
        log.push_str(&format!(
            "$ {args:?} -> {}\n{}{}",
            o.code, o.stdout, o.stderr
        ));
        if args.first() != Some(&"show") {
            printed.push_str(&o.stdout);
            printed.push('\n');
            printed.push_str(&o.stderr);
            printed.push('\n');
        }
        o
    };
    let mut out = StepOut {
        plan_code: None,
        plan_text: None,
        apply_code: None,
        apply_text: None,
        plan: None,
        state: Value::Null,
        printed: String::new(),
        log: String::new(),
    };
    // terrane defers what an unknown count or for_each holds up by default
    // (tests/deferred.rs); Terraform fails instead, which is terrane's
    // -defer=false, the behaviour this suite compares.
    let strict: &[&str] = match s.tool {
        Tool::Terrane => &["-defer=false"],
        Tool::Terraform => &[],
    };
    let plan = |extra: &[&str], cmd: &mut dyn FnMut(&[&str]) -> Out, out: &mut StepOut| -> bool {
        let mut args = vec!["plan", "-input=false", "-out=p", "-detailed-exitcode"];
        args.extend_from_slice(strict);
        args.extend_from_slice(extra);
        let o = cmd(&args);
        out.plan_code = Some(o.code);
        out.plan_text = Some(o.stdout.clone());
        if o.code == 1 {
            return false;
        }
        out.plan = Some(json_of(&cmd(&["show", "-json", "p"]), "show -json p"));
        true
    };
    let last = |o: Out, out: &mut StepOut| {
        out.apply_code = Some(o.code);
        out.apply_text = Some(o.stdout);
    };
    match act {
        Act::Plan(extra) => {
            if plan(extra, &mut cmd, &mut out) {
                last(cmd(&["apply", "-input=false", "p"]), &mut out);
            }
        }
        Act::PlanOnly(extra) => {
            plan(extra, &mut cmd, &mut out);
        }
        Act::Apply(extra) => {
            let mut args = vec!["apply", "-input=false", "-auto-approve"];
            args.extend_from_slice(strict);
            args.extend_from_slice(extra);
            last(cmd(&args), &mut out);
        }
        Act::Destroy => last(cmd(&["destroy", "-input=false", "-auto-approve"]), &mut out),
        Act::Refresh => last(cmd(&["refresh", "-input=false"]), &mut out),
        Act::Import(addr, id) => last(cmd(&["import", "-input=false", addr, id]), &mut out),
        Act::StateRm(addr) => last(cmd(&["state", "rm", addr]), &mut out),
    }
    out.state = json_of(&cmd(&["show", "-json"]), "show -json");
    out.printed = printed;
    out.log = log;
    out
}
