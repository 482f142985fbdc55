//! Terraform-style command lines: `terrane [-chdir=DIR] COMMAND [-flag
//! | -flag=value | -flag value]... [ARGS]`. Flags take one dash (two are
//! accepted too), as Terraform's do; clap's long flags need two, so this
//! small parser keeps scripts written for Terraform working unchanged.

/// A parsed command line.
#[derive(Debug, Default)]
pub struct Args {
    pub chdir: Option<String>,
    pub command: Vec<String>,
    /// Flags in order; repeated flags (`-var`, `-target`) keep every value.
    pub flags: Vec<(String, Option<String>)>,
    pub positional: Vec<String>,
}

/// Flags that take a separate value when written without `=`.
const VALUED: &[&str] = &[
    "var",
    "var-file",
    "target",
    "exclude",
    "replace",
    "out",
    "parallelism",
    "state",
    "chdir",
    "lock-timeout",
    "type",
    "format",
    "new-key-env",
];

/// Subcommands that have their own subcommand (`state list`).
const NESTED: &[&str] = &["state"];

pub fn parse(argv: &[String]) -> Args {
    let mut a = Args::default();
    let mut it = argv.iter().peekable();
    while let Some(arg) = it.next() {
        let flag = arg
            .strip_prefix("--")
            .or_else(|| arg.strip_prefix('-'))
            .filter(|f| !f.is_empty() && arg != "-");
        match flag {
            Some(f) => {
                let (name, value) = match f.split_once('=') {
                    Some((n, v)) => (n.to_string(), Some(v.to_string())),
                    None if VALUED.contains(&f) => (f.to_string(), it.next().cloned()),
                    None => (f.to_string(), None),
                };
                if name == "chdir" && a.command.is_empty() {
                    a.chdir = value;
                } else {
                    a.flags.push((name, value));
                }
            }
            None => {
                let nested = a.command.len() == 1 && NESTED.contains(&a.command[0].as_str());
                if a.command.is_empty() || (nested && a.positional.is_empty()) {
                    a.command.push(arg.clone());
                } else {
                    a.positional.push(arg.clone());
                }
            }
        }
    }
    a
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

    /// `-flag=false` explicitly.
    pub fn is_false(&self, name: &str) -> bool {
        self.flags
            .iter()
            .any(|(n, v)| n == name && v.as_deref() == Some("false"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(line: &str, cmd: &[&str], flags: &[(&str, Option<&str>)], pos: &[&str]) {
        let argv: Vec<String> = line.split_whitespace().map(str::to_string).collect();
        let a = parse(&argv);
        assert_eq!(a.command, cmd, "{line}");
        let got: Vec<(&str, Option<&str>)> = a
            .flags
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_deref()))
            .collect();
        assert_eq!(got, flags, "{line}");
        assert_eq!(a.positional, pos, "{line}");
    }

    #[test]
    fn command_lines() {
        check(
            "apply -auto-approve",
            &["apply"],
            &[("auto-approve", None)],
            &[],
        );
        check(
            "plan -out=tf.plan -var a=1 -var=b=2",
            &["plan"],
            &[
                ("out", Some("tf.plan")),
                ("var", Some("a=1")),
                ("var", Some("b=2")),
            ],
            &[],
        );
        check(
            "plan --refresh=false",
            &["plan"],
            &[("refresh", Some("false"))],
            &[],
        );
        check(
            "state list random_pet.p",
            &["state", "list"],
            &[],
            &["random_pet.p"],
        );
        check(
            "import random_integer.n 42,1,100",
            &["import"],
            &[],
            &["random_integer.n", "42,1,100"],
        );
        check("apply tf.plan", &["apply"], &[], &["tf.plan"]);
        check(
            "plan -target random_pet.p",
            &["plan"],
            &[("target", Some("random_pet.p"))],
            &[],
        );
    }

    #[test]
    fn chdir_is_global() {
        let argv: Vec<String> = ["-chdir=dir", "plan"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let a = parse(&argv);
        assert_eq!(a.chdir.as_deref(), Some("dir"));
        assert_eq!(a.command, ["plan"]);
    }
}
