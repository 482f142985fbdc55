//! Terraform-style command lines: `terrane [-chdir=DIR] COMMAND [-flag
//! | -flag=value | -flag value]... [ARGS]`. Flags take one dash (two are
//! accepted too), as Terraform's do; clap's long flags need two, so this
//! small parser keeps scripts written for Terraform working unchanged.

use crate::cmdspec::{self, Command, Takes};

/// A parsed command line.
#[derive(Debug, Default)]
pub struct Args {
    pub chdir: Option<String>,
    pub command: Vec<String>,
    /// Flags in order, each one the command's table has; repeated flags
    /// (`-var`, `-target`) keep every value.
    pub flags: Vec<(String, Option<String>)>,
    pub positional: Vec<String>,
}

/// What the command line asks for.
#[derive(Debug)]
pub enum Parsed {
    /// Run a command.
    Run(Args),
    /// Print the help of a command, or the command list (`None`); runs
    /// nothing.
    Help(Option<&'static Command>),
}

/// Why a command line cannot run, with Terraform's wording.
#[derive(Debug)]
pub enum ArgError {
    /// A flag before the subcommand other than -chdir, -help, -version
    /// (with the subcommand, when one follows, for its help).
    BeforeCommand(Option<&'static Command>),
    /// No such command.
    UnknownCommand(String),
    /// A flag the command does not have, or a bad value for one.
    Flag {
        command: &'static str,
        message: String,
    },
    /// More positional arguments than the command takes.
    TooMany { command: &'static str },
    /// `TF_CLI_ARGS` or `TF_CLI_ARGS_<command>` cannot be split into
    /// arguments (an unclosed quote).
    Env { variable: String, message: String },
}

/// `-x`, `--x`, `-x=v` → (`x`, `v`); `None` for a positional argument
/// (`-` alone is one: standard input).
fn split_flag(arg: &str) -> Option<(&str, Option<&str>)> {
    let f = arg.strip_prefix("--").or_else(|| arg.strip_prefix('-'))?;
    if f.is_empty() {
        return None;
    }
    Some(match f.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (f, None),
    })
}

fn is_help(name: &str) -> bool {
    matches!(name, "h" | "help")
}

/// Go's boolean spellings, which Terraform's flags accept.
fn parse_bool(v: &str) -> Option<bool> {
    match v {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Some(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Some(false),
        _ => None,
    }
}

/// [`parse_with`] the process environment.
pub fn parse(argv: &[String]) -> Result<Parsed, ArgError> {
    parse_with(argv, &|name| std::env::var(name).ok())
}

/// Parses `terrane [global options] COMMAND [flags and arguments]`
/// against the command table: every flag must be the command's, with a
/// value of the right kind; `-h`, `-help` or `--help` anywhere (before a
/// `--`) asks for help and runs nothing.
///
/// As Terraform does, `TF_CLI_ARGS` and then `TF_CLI_ARGS_<command>`
/// (`TF_CLI_ARGS_plan`; `TF_CLI_ARGS_state_list` for a subcommand) are
/// split as a shell would and go right after the command words, so flags
/// given on the command line come later and win; `TF_INPUT=false` (or
/// `0`) is `-input=false` for the commands that have `-input`.
pub fn parse_with(
    argv: &[String],
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Parsed, ArgError> {
    let mut a = Args::default();
    let mut it = argv.iter().peekable();
    // Global options.
    while let Some(arg) = it.peek() {
        let Some((name, value)) = split_flag(arg) else {
            break;
        };
        it.next();
        match name {
            "chdir" => {
                a.chdir = match value {
                    Some(v) => Some(v.to_string()),
                    None => it.next().cloned(),
                }
            }
            n if is_help(n) => return Ok(Parsed::Help(None)),
            "v" | "version" => {
                a.command.push("version".into());
                return Ok(Parsed::Run(a));
            }
            _ => {
                let words: Vec<&str> = it
                    .filter(|a| split_flag(a).is_none())
                    .take(2)
                    .map(String::as_str)
                    .collect();
                let cmd =
                    cmdspec::find(&words).or_else(|| cmdspec::find(&words[..words.len().min(1)]));
                return Err(ArgError::BeforeCommand(cmd));
            }
        }
    }
    let Some(first) = it.next() else {
        return Ok(Parsed::Help(None));
    };
    let mut words = vec![first.as_str()];
    if first == "help" {
        let rest: Vec<&str> = it.by_ref().map(String::as_str).collect();
        if rest.is_empty() {
            return Ok(Parsed::Help(None));
        }
        return match cmdspec::find(&rest) {
            Some(c) => Ok(Parsed::Help(Some(c))),
            None => Err(ArgError::UnknownCommand(rest.join(" "))),
        };
    }
    // A subcommand (`state list`, `providers schema`): the next word when
    // the pair names a command. A group that is no command itself
    // (`state`) needs one.
    let standalone = cmdspec::find(&words).is_some();
    let next = it.peek().map(|n| n.as_str());
    match next.map(split_flag) {
        Some(None) if cmdspec::find(&[first.as_str(), next.unwrap_or_default()]).is_some() => {
            words.push(next.unwrap_or_default());
            it.next();
        }
        Some(None) if !standalone && cmdspec::is_group(first) => {
            return Err(ArgError::UnknownCommand(format!(
                "{first} {}",
                next.unwrap_or_default()
            )));
        }
        Some(Some((n, _))) if !standalone && is_help(n) => return Ok(Parsed::Help(None)),
        None | Some(Some(_)) if !standalone && cmdspec::is_group(first) => {
            return Err(ArgError::UnknownCommand(first.clone()))
        }
        _ => {}
    }
    let Some(cmd) = cmdspec::find(&words) else {
        return Err(ArgError::UnknownCommand(words.join(" ")));
    };
    a.command = words.iter().map(|w| w.to_string()).collect();
    let mut from_env: Vec<String> = Vec::new();
    for variable in [
        "TF_CLI_ARGS".to_string(),
        format!("TF_CLI_ARGS_{}", cmd.name.replace(' ', "_")),
    ] {
        if let Some(text) = env(&variable).filter(|t| !t.trim().is_empty()) {
            let words = shell_words::split(&text).map_err(|e| ArgError::Env {
                variable: variable.clone(),
                message: e.to_string(),
            })?;
            from_env.extend(words);
        }
    }
    if cmd.flag("input").is_some()
        && env("TF_INPUT").is_some_and(|v| parse_bool(v.trim()) == Some(false))
    {
        a.flags.push(("input".into(), Some("false".into())));
    }
    let rest: Vec<&String> = from_env.iter().chain(it).collect();
    // Help wins over everything else, as in Terraform.
    for arg in &rest {
        if *arg == "--" {
            break;
        }
        if split_flag(arg).is_some_and(|(n, v)| is_help(n) && v.is_none()) {
            return Ok(Parsed::Help(Some(cmd)));
        }
    }
    let flag_error = |message: String| ArgError::Flag {
        command: cmd.name,
        message,
    };
    let mut rest = rest.into_iter();
    let mut only_positional = false;
    while let Some(arg) = rest.next() {
        if only_positional {
            a.positional.push(arg.clone());
            continue;
        }
        if arg == "--" {
            only_positional = true;
            continue;
        }
        let Some((name, value)) = split_flag(arg) else {
            a.positional.push(arg.clone());
            continue;
        };
        let Some(flag) = cmd.flag(name) else {
            return Err(flag_error(format!(
                "flag provided but not defined: -{name}"
            )));
        };
        let value = match (flag.takes, value) {
            (Takes::Switch, None) => None,
            (Takes::Switch, Some(v)) => match parse_bool(v) {
                Some(b) => Some(b.to_string()),
                None => {
                    return Err(flag_error(format!(
                        "invalid boolean value {v:?} for -{name}: parse error"
                    )))
                }
            },
            (Takes::Text(_) | Takes::Count(_), v) => {
                let v = match v {
                    Some(v) => v.to_string(),
                    None => match rest.next() {
                        Some(v) => v.clone(),
                        None => return Err(flag_error(format!("flag needs an argument: -{name}"))),
                    },
                };
                if matches!(flag.takes, Takes::Count(_)) && v.parse::<u32>().is_err() {
                    return Err(flag_error(format!(
                        "invalid value {v:?} for flag -{name}: parse error"
                    )));
                }
                Some(v)
            }
        };
        a.flags.push((name.to_string(), value));
    }
    if cmd.max_args.is_some_and(|m| a.positional.len() > m) {
        return Err(ArgError::TooMany { command: cmd.name });
    }
    Ok(Parsed::Run(a))
}

impl Args {
    pub fn has(&self, name: &str) -> bool {
        self.flags
            .iter()
            .any(|(n, v)| n == name && v.as_deref().is_none_or(|v| v != "false"))
    }

    pub fn value(&self, name: &str) -> Option<&str> {
        self.flags
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .and_then(|(_, v)| v.as_deref())
    }

    pub fn values(&self, name: &str) -> Vec<String> {
        self.flags
            .iter()
            .filter(|(n, _)| n == name)
            .filter_map(|(_, v)| v.clone())
            .collect()
    }

    /// `-flag=false`, as the last mention of the flag says.
    pub fn is_false(&self, name: &str) -> bool {
        self.flags
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .is_some_and(|(_, v)| v.as_deref() == Some("false"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a command line parses to, as one short string:
    /// `run plan [out=tf.plan] (x y)`, `help plan`, `help`, or the error.
    fn describe(line: &str) -> String {
        describe_with(line, &|_| None)
    }

    /// What `line` parses to with environment `env`, as one short string.
    fn describe_with(line: &str, env: &dyn Fn(&str) -> Option<String>) -> String {
        let argv: Vec<String> = line.split_whitespace().map(str::to_string).collect();
        match parse_with(&argv, env) {
            Ok(Parsed::Run(a)) => {
                let flags: Vec<String> = a
                    .flags
                    .iter()
                    .map(|(n, v)| match v {
                        Some(v) => format!("{n}={v}"),
                        None => n.clone(),
                    })
                    .collect();
                let chdir = a.chdir.map(|d| format!(" chdir={d}")).unwrap_or_default();
                format!(
                    "run {}{chdir} [{}] ({})",
                    a.command.join(" "),
                    flags.join(" "),
                    a.positional.join(" ")
                )
            }
            Ok(Parsed::Help(Some(c))) => format!("help {}", c.name),
            Ok(Parsed::Help(None)) => "help".into(),
            Err(ArgError::BeforeCommand(c)) => {
                format!("error BeforeCommand({})", c.map_or("-", |c| c.name))
            }
            Err(e) => format!("error {e:?}"),
        }
    }

    fn check(name: &str, line: &str, want: &str) {
        assert_eq!(describe(line), want, "case {name}: {line}");
    }

    #[test]
    fn environment_arguments() {
        /// Name, command line, environment, what it parses to.
        type EnvCase = (
            &'static str,
            &'static str,
            &'static [(&'static str, &'static str)],
            &'static str,
        );
        let cases: [EnvCase; 7] = [
            (
                "tf_cli_args_after_command",
                "plan -out=b",
                &[("TF_CLI_ARGS", "-out=a -no-color")],
                "run plan [out=a no-color out=b] ()",
            ),
            (
                "per_command_after_general",
                "plan",
                &[("TF_CLI_ARGS", "-parallelism=2"), ("TF_CLI_ARGS_plan", "-parallelism=3")],
                "run plan [parallelism=2 parallelism=3] ()",
            ),
            (
                "other_command_not_affected",
                "plan",
                &[("TF_CLI_ARGS_apply", "-auto-approve")],
                "run plan [] ()",
            ),
            (
                "quoted_words",
                "plan",
                &[("TF_CLI_ARGS_plan", "-var 'greeting=hello world'")],
                "run plan [var=greeting=hello world] ()",
            ),
            (
                "subcommand_name",
                "state list",
                &[("TF_CLI_ARGS_state_list", "-no-color")],
                "run state list [no-color] ()",
            ),
            (
                "tf_input_false",
                "apply",
                &[("TF_INPUT", "0")],
                "run apply [input=false] ()",
            ),
            (
                "env_flags_are_checked_too",
                "plan",
                &[("TF_CLI_ARGS", "-auto-approve")],
                "error Flag { command: \"plan\", message: \"flag provided but not defined: -auto-approve\" }",
            ),
        ];
        for (name, line, vars, want) in cases {
            let env = |k: &str| {
                vars.iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            };
            let got = describe_with(line, &env);
            assert_eq!(got, want, "case {name}");
        }
        let bad = parse_with(&["plan".to_string()], &|k| {
            (k == "TF_CLI_ARGS").then(|| "-var 'x".to_string())
        });
        assert!(
            matches!(bad, Err(ArgError::Env { .. })),
            "case unclosed_quote"
        );
    }

    #[test]
    fn command_lines() {
        let cases = [
            ("switch", "apply -auto-approve", "run apply [auto-approve] ()"),
            (
                "values_both_ways",
                "plan -out=tf.plan -var a=1 -var=b=2",
                "run plan [out=tf.plan var=a=1 var=b=2] ()",
            ),
            ("two_dashes", "plan --refresh=false", "run plan [refresh=false] ()"),
            ("go_bool_spelling", "plan -refresh=0", "run plan [refresh=false] ()"),
            ("subcommand", "state list random_pet.p", "run state list [] (random_pet.p)"),
            ("two_positionals", "import random_integer.n 42,1,100", "run import [] (random_integer.n 42,1,100)"),
            ("saved_plan", "apply tf.plan", "run apply [] (tf.plan)"),
            ("separate_value", "plan -target random_pet.p", "run plan [target=random_pet.p] ()"),
            ("chdir_global", "-chdir=dir plan", "run plan chdir=dir [] ()"),
            ("chdir_separate", "-chdir dir plan", "run plan chdir=dir [] ()"),
            ("version_flag", "-version", "run version [] ()"),
            ("stdin_dash_is_positional", "fmt -", "run fmt [] (-)"),
            ("after_double_dash", "fmt -- -odd.tf", "run fmt [] (-odd.tf)"),
            ("nothing_is_help", "", "help"),
            ("help_flag", "-help", "help"),
            ("help_command", "help plan", "help plan"),
            ("help_subcommand", "help state list", "help state list"),
            ("dash_h_never_runs", "apply -h", "help apply"),
            ("double_dash_help_never_runs", "apply --help", "help apply"),
            ("help_after_other_flags", "apply -auto-approve -help", "help apply"),
            ("help_wins_over_bad_flag", "plan -bogus -help", "help plan"),
            ("state_help", "state -help", "help"),
            ("group_and_command", "providers", "run providers [] ()"),
            ("group_subcommand", "providers schema -json", "run providers schema [json] ()"),
            ("state_alone", "state", "error UnknownCommand(\"state\")"),
            ("state_sub_help", "state rm -h", "help state rm"),
            (
                "unknown_flag",
                "plan -auto-aprove",
                "error Flag { command: \"plan\", message: \"flag provided but not defined: -auto-aprove\" }",
            ),
            (
                "flag_of_another_command",
                "plan -auto-approve",
                "error Flag { command: \"plan\", message: \"flag provided but not defined: -auto-approve\" }",
            ),
            (
                "bad_count",
                "plan -parallelism=x",
                "error Flag { command: \"plan\", message: \"invalid value \\\"x\\\" for flag -parallelism: parse error\" }",
            ),
            (
                "bad_bool",
                "plan -refresh=x",
                "error Flag { command: \"plan\", message: \"invalid boolean value \\\"x\\\" for -refresh: parse error\" }",
            ),
            (
                "missing_value",
                "plan -out",
                "error Flag { command: \"plan\", message: \"flag needs an argument: -out\" }",
            ),
            ("too_many", "plan extra", "error TooMany { command: \"plan\" }"),
            ("unknown_command", "bogus", "error UnknownCommand(\"bogus\")"),
            ("unknown_subcommand", "state bogus", "error UnknownCommand(\"state bogus\")"),
            ("flag_before_command", "-bogus plan", "error BeforeCommand(plan)"),
            ("help_unknown", "help bogus", "error UnknownCommand(\"bogus\")"),
        ];
        for (name, line, want) in cases {
            check(name, line, want);
        }
    }

    #[test]
    fn every_command_has_help_and_distinct_flags() {
        for c in cmdspec::COMMANDS {
            let mut names: Vec<&str> = c.all_flags().map(|f| f.name).collect();
            let n = names.len();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), n, "case {}: a flag listed twice", c.name);
            assert!(
                !names.iter().any(|n| is_help(n)),
                "case {}: help is not a flag",
                c.name
            );
            let h = cmdspec::help(c);
            assert!(h.starts_with(&format!("Usage: terrane [global options] {}", c.name)));
            for f in c.all_flags() {
                assert!(
                    h.contains(&format!("-{}", f.name)),
                    "case {}: -{} in help",
                    c.name,
                    f.name
                );
            }
        }
    }
}
