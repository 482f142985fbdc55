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
            // Per protocol mode, so both modes can run at once.
            // Protocol 5 only, as legacy-SDK providers are.
            let legacy = terrane_testkit::fixture("terrane-legacy-fixture");
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
                terrane: PathBuf::from(env!("CARGO_BIN_EXE_terrane")),
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
    /// Terraform's exit code for the step, pinned: the code of its last
    /// command (the apply of a plan that succeeded, else the plan).
    pub exit: Option<i32>,
}

/// `main.tf` (with the provider requirements prepended) and a plan/apply.
pub fn step(main_tf: &str) -> Step {
    Step {
        files: vec![("main.tf", Some(format!("{PROVIDERS}{main_tf}")))],
        outside: None,
        act: Act::Plan(&[]),
        env: vec![],
        exit: None,
    }
}

impl Step {
    pub fn act(mut self, act: Act) -> Step {
        self.act = act;
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
    /// Pins Terraform's exit code for the step (see `Step::exit`).
    pub fn exits(mut self, code: i32) -> Step {
        self.exit = Some(code);
        self
    }
    /// A step that changes nothing in the configuration.
    pub fn same(act: Act) -> Step {
        Step {
            files: vec![],
            outside: None,
            act,
            env: vec![],
            exit: None,
        }
    }
}

struct Side {
    tool: Tool,
    dir: PathBuf,
}

/// Runs the scenario and returns every difference found (empty: the tools
/// agree), each prefixed with the step it came from.
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
    let mut subst = Subst::default();
    for (i, st) in steps.iter().enumerate() {
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
        if let Some(want) = st.exit {
            let got = tf.apply_code.or(tf.plan_code);
            if got != Some(want) {
                problems.push(format!(
                    "{at}: terraform exit code {got:?}, the scenario pins {want}\n--- terraform:\n{}",
                    tf.log
                ));
            }
        }
        for (what, a, b) in [
            ("plan", &tf.plan_code, &tr.plan_code),
            ("apply", &tf.apply_code, &tr.apply_code),
        ] {
            if a != b {
                problems.push(format!("{at}: {what} exit code: terraform {a:?}, terrane {b:?}\n--- terraform:\n{}\n--- terrane:\n{}", tf.log, tr.log));
            }
        }
        if let (Some(a), Some(b)) = (&tf.plan, &tr.plan) {
            problems.extend(
                normalize::compare_plans(a, b, &subst)
                    .into_iter()
                    .map(|d| format!("{at}: plan: {d}")),
            );
        }
        if let (Some(a), Some(b)) = (&tf.plan_text, &tr.plan_text) {
            if let Some(d) = normalize::compare_plan_texts(a, b, &subst) {
                problems.push(format!("{at}: plan text: {d}"));
            }
        }
        let mut learned = subst.clone();
        learned.learn(&tf.state, &tr.state);
        problems.extend(
            normalize::compare_states(&tf.state, &tr.state, &learned)
                .into_iter()
                .map(|d| format!("{at}: state: {d}")),
        );
        subst = learned;
    }
    problems
}

struct StepOut {
    plan_code: Option<i32>,
    /// What `plan` printed for people.
    plan_text: Option<String>,
    apply_code: Option<i32>,
    plan: Option<Value>,
    state: Value,
    log: String,
}

fn json_of(o: &Out, what: &str) -> Value {
    serde_json::from_str(&o.stdout)
        .unwrap_or_else(|e| panic!("{what}: not JSON ({e}):\n{}\n{}", o.stdout, o.stderr))
}

fn run_step(peers: &Peers, s: &Side, act: &Act, env: &[(&str, &str)]) -> StepOut {
    let mut log = String::new();
    let mut cmd = |args: &[&str]| {
        let o = peers.run_with(s.tool, &s.dir, args, env);
        log.push_str(&format!(
            "$ {args:?} -> {}\n{}{}",
            o.code, o.stdout, o.stderr
        ));
        o
    };
    let mut out = StepOut {
        plan_code: None,
        plan_text: None,
        apply_code: None,
        plan: None,
        state: Value::Null,
        log: String::new(),
    };
    let plan = |extra: &[&str], cmd: &mut dyn FnMut(&[&str]) -> Out, out: &mut StepOut| -> bool {
        let mut args = vec!["plan", "-input=false", "-out=p", "-detailed-exitcode"];
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
    match act {
        Act::Plan(extra) => {
            if plan(extra, &mut cmd, &mut out) {
                out.apply_code = Some(cmd(&["apply", "-input=false", "p"]).code);
            }
        }
        Act::PlanOnly(extra) => {
            plan(extra, &mut cmd, &mut out);
        }
        Act::Apply(extra) => {
            let mut args = vec!["apply", "-input=false", "-auto-approve"];
            args.extend_from_slice(extra);
            out.apply_code = Some(cmd(&args).code);
        }
        Act::Destroy => {
            out.apply_code = Some(cmd(&["destroy", "-input=false", "-auto-approve"]).code)
        }
        Act::Refresh => out.apply_code = Some(cmd(&["refresh", "-input=false"]).code),
        Act::Import(addr, id) => {
            out.apply_code = Some(cmd(&["import", "-input=false", addr, id]).code)
        }
        Act::StateRm(addr) => out.apply_code = Some(cmd(&["state", "rm", addr]).code),
    }
    out.state = json_of(&cmd(&["show", "-json"]), "show -json");
    out.log = log;
    out
}
