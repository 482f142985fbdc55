//! Every command and its flags, in one table. Parsing ([`crate::args`]),
//! `-help` and the command reference in `docs/commands.md` are all made
//! from it, so what a command accepts and what it says it accepts cannot
//! drift apart. A flag that is not in a command's table is an error, never
//! silently ignored.

/// What a flag takes after its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Takes {
    /// A switch: `-flag`, or `-flag=true|false` (Go's boolean spellings).
    Switch,
    /// Text: `-flag=VALUE` or `-flag VALUE`; the name is the placeholder
    /// shown in help.
    Text(&'static str),
    /// A whole number ≥ 0, like `Text`.
    Count(&'static str),
}

/// One flag of a command.
#[derive(Debug)]
pub struct Flag {
    pub name: &'static str,
    pub takes: Takes,
    pub help: &'static str,
}

/// One command (or subcommand, `state list`).
#[derive(Debug)]
pub struct Command {
    /// The words that name it: `plan`, `state list`.
    pub name: &'static str,
    /// Positional arguments, as help shows them (`[PLAN]`, `ADDR ID`).
    pub args: &'static str,
    /// How many positional arguments it takes at most (`None`: any).
    pub max_args: Option<usize>,
    /// One line for the command list.
    pub summary: &'static str,
    /// A paragraph for its help.
    pub about: &'static str,
    /// Listed among the main commands.
    pub main: bool,
    /// Its flags, in groups shared between commands.
    pub flags: &'static [&'static [Flag]],
}

impl Command {
    /// The flag called `name`, if the command has one.
    pub fn flag(&self, name: &str) -> Option<&'static Flag> {
        self.flags
            .iter()
            .flat_map(|g| g.iter())
            .find(|f| f.name == name)
    }

    /// Every flag, in table order.
    pub fn all_flags(&self) -> impl Iterator<Item = &'static Flag> {
        self.flags.iter().flat_map(|g| g.iter())
    }
}

const fn switch(name: &'static str, help: &'static str) -> Flag {
    Flag {
        name,
        takes: Takes::Switch,
        help,
    }
}

const fn text(name: &'static str, placeholder: &'static str, help: &'static str) -> Flag {
    Flag {
        name,
        takes: Takes::Text(placeholder),
        help,
    }
}

const NO_COLOR: &[Flag] = &[switch("no-color", "Print without terminal colors.")];

const JSON: &[Flag] = &[switch(
    "json",
    "Print machine-readable JSON instead of text.",
)];

const VARS: &[Flag] = &[
    VAR,
    VAR_FILE,
    switch(
        "input",
        "With -input=false, never ask on the terminal: a missing variable or approval is an error.",
    ),
];

const VAR: Flag = text(
    "var",
    "NAME=VALUE",
    "Set an input variable of the root module; repeatable. Given later than -var-file, so it wins over it.",
);

const VAR_FILE: Flag = text(
    "var-file",
    "FILE",
    "Read input variables from a .tfvars (or .tfvars.json) file; repeatable.",
);

/// `init` and `validate` read variables only for what init evaluates:
/// module `source` and `version` over const variables.
const CONST_VARS: &[Flag] = &[
    text(
        "var",
        "NAME=VALUE",
        "Set an input variable of the root module; repeatable. Only const variables are read here, where a module's source or version uses them.",
    ),
    VAR_FILE,
];

const NO_LOCK: &[Flag] = &[switch(
    "lock",
    "With -lock=false, do not take the workspace's state lock. Dangerous when others work on the same state.",
)];

const LOCK_TIMEOUT: &[Flag] = &[text(
    "lock-timeout",
    "DURATION",
    "Wait up to DURATION (30s, 2m, 1m30s) for a lock someone else holds, instead of failing at once.",
)];

const MODES: &[Flag] = &[
    switch(
        "destroy",
        "Plan to destroy every object this configuration manages.",
    ),
    switch(
        "refresh-only",
        "Plan only to record in the state the changes made outside terrane; propose no other action.",
    ),
    switch(
        "refresh",
        "With -refresh=false, plan against the state as recorded, without reading the remote objects first.",
    ),
    switch(
        "defer",
        "With -defer=false, fail as Terraform does when count or for_each is not known until apply (or a provider defers), instead of planning the rest and deferring that part to the next plan.",
    ),
    text(
        "replace",
        "ADDRESS",
        "Plan to replace this resource instance even if nothing about it changed; repeatable.",
    ),
];

const SCOPE: &[Flag] = &[
    text(
        "target",
        "ADDRESS",
        "Plan only this resource or module, and what it depends on; repeatable.",
    ),
    text(
        "exclude",
        "ADDRESS",
        "Leave this resource or module, and what depends on it, out of the plan; repeatable.",
    ),
    Flag {
        name: "parallelism",
        takes: Takes::Count("N"),
        help: "Call providers for at most N objects at once (default 10).",
    },
];

const VARS_INPUT: &[Flag] = &[switch(
    "input",
    "With -input=false, never ask on the terminal: approval must come from -auto-approve.",
)];

const COMPACT: &[Flag] = &[switch(
    "compact-warnings",
    "When there is no error, list warnings after the plan by summary and place only.",
)];

const APPROVE: &[Flag] = &[switch(
    "auto-approve",
    "Apply without showing the plan and asking for approval first.",
)];

const ALLOW_MISSING: &[Flag] = &[switch(
    "allow-missing",
    "Succeed, with a warning, when ADDRESS has no object in the state.",
)];

/// The commands, in the order help lists them.
pub const COMMANDS: &[Command] = &[
    Command {
        name: "init",
        args: "",
        max_args: Some(0),
        summary: "Prepare the working directory: find or install the providers, write the lock file",
        about: "Installs the modules the configuration calls (as get does), then finds every provider the configuration requires (plugin directory, filesystem mirrors, dev overrides or terrane's built-ins) and installs the others from their registries into .terraform/providers (signed checksums verified), checks each against the dependency lock file and records the selections in .terraform.lock.hcl.",
        main: true,
        flags: &[
            NO_COLOR,
            &[
                switch("input", "Accepted for Terraform compatibility; init never asks."),
                switch("upgrade", "Select the newest versions the constraints allow, ignoring the versions in the lock file."),
                switch("get", "With -get=false, install no module: use the modules already installed (a module not installed is an error)."),
                text("lockfile", "MODE", "Set to \"readonly\" to fail instead of changing the dependency lock file."),
                text("backend-config", "FILE|KEY=VALUE", "Backend settings to add to the backend block: a file of key = value lines, or one key=value (repeatable)."),
                switch("reconfigure", "Record the configured backend, ignoring the one recorded before (no state is copied)."),
                switch("migrate-state", "Copy every workspace's state from the previously used backend or store to the configured one, lineage and serial kept, the source locked meanwhile."),
                switch("force-copy", "With -migrate-state, overwrite a destination workspace that already holds another state."),
                switch("backend", "With -backend=false, leave the backend as it is."),
            ],
            CONST_VARS,
            LOCK_TIMEOUT,
        ],
    },
    Command {
        name: "get",
        args: "",
        max_args: Some(0),
        summary: "Install or upgrade the configuration's modules",
        about: "Installs every module the configuration calls into .terraform/modules (registry modules, git:: and https archive sources) and records them in .terraform/modules/modules.json, as init does, without touching providers or the backend.",
        main: false,
        flags: &[
            NO_COLOR,
            &[switch("update", "Fetch every remote module again (the newest version its constraint allows), even if it is installed.")],
        ],
    },
    Command {
        name: "validate",
        args: "",
        max_args: Some(0),
        summary: "Check whether the configuration is valid",
        about: "Checks the configuration on its own: syntax, references, types, and what the providers' schemas and validation say; its test files (.tftest.hcl) are checked too, as Terraform loads them. It reads no state and calls no remote API.",
        main: true,
        flags: &[NO_COLOR, JSON, CONST_VARS, &[
                switch("no-tests", "Do not check the test files."),
                text("test-directory", "DIR", "The directory of test files besides the working directory (default tests)."),
            ]],
    },
    Command {
        name: "plan",
        args: "",
        max_args: Some(0),
        summary: "Show the changes the configuration requires",
        about: "Compares the configuration with the recorded state (refreshed from the remote objects first) and shows what apply would do. With -out the plan is saved, sealed, for apply to carry out exactly. What cannot be planned yet (count or for_each known only after apply, a provider's deferral) is listed under \"Deferred changes\" with its reason and left for the next plan; the rest is planned (a partial plan; saved plans keep the deferred list and apply applies the rest).",
        main: true,
        flags: &[MODES, SCOPE, VARS, NO_LOCK, LOCK_TIMEOUT, COMPACT, &[
                text("out", "FILE", "Save the plan to FILE (mode 0600) for a later apply."),
                text("generate-config-out", "FILE", "Write configuration for the import blocks whose target has none to FILE (which must not exist), then plan with it."),
                switch(
                    "detailed-exitcode",
                    "Exit 0 when nothing changes, 2 when something does or part of the plan is deferred (a partial plan: see -defer), 1 on an error.",
                ),
            ], NO_COLOR, JSON],
    },
    Command {
        name: "apply",
        args: "[PLAN]",
        max_args: Some(1),
        summary: "Create or update infrastructure",
        about: "Plans as plan does, asks for approval and carries the plan out, recording every change in the state as it happens. Given a saved PLAN, carries out exactly that plan, without asking.",
        main: true,
        flags: &[APPROVE, MODES, SCOPE, VARS, LOCK_TIMEOUT, COMPACT, NO_COLOR, JSON],
    },
    Command {
        name: "destroy",
        args: "",
        max_args: Some(0),
        summary: "Destroy the infrastructure this configuration manages",
        about: "Plans to destroy every object in the state, asks for approval, and destroys them, dependents first.",
        main: true,
        flags: &[APPROVE, MODES, SCOPE, VARS, LOCK_TIMEOUT, COMPACT, NO_COLOR, JSON],
    },
    Command {
        name: "fmt",
        args: "[PATH...]",
        max_args: None,
        summary: "Rewrite configuration files in the standard style",
        about: "Rewrites .tf, .tfvars and .tftest.hcl files in the canonical layout. Without PATH, the files of the current directory; with -, standard input to standard output.",
        main: false,
        flags: &[&[switch("check", "Change nothing; exit 3 when a file is not formatted."),
                switch("diff", "Print a unified diff of each change."),
                switch("list", "With -list=false, do not print the names of the files changed."),
                switch("write", "With -write=false, change no file (with -diff, only show)."), switch("recursive", "Also the files of subdirectories.")], NO_COLOR],
    },
    Command {
        name: "console",
        args: "",
        max_args: Some(0),
        summary: "Evaluate expressions against the state and the configuration",
        about: "Evaluates each expression read from standard input in the root module, with the configuration and the state loaded, and prints its value. From a pipe, the last line's value is printed and an error ends it; on a terminal, each value is printed in turn. The state is never changed.",
        main: false,
        flags: &[VARS, &[switch("plan", "Evaluate against a new plan, refreshed first as plan does, instead of the state as recorded.")], NO_COLOR],
    },
    Command {
        name: "force-unlock",
        args: "LOCK_ID",
        max_args: Some(1),
        summary: "Release a stuck lock on the current workspace's state",
        about: "Removes the lock LOCK_ID (as the lock error printed it) from the state. Only for a lock whose holder is gone.",
        main: false,
        flags: &[&[switch("force", "Do not ask for confirmation.")], NO_COLOR],
    },
    Command {
        name: "graph",
        args: "",
        max_args: Some(0),
        summary: "Print the dependency graph of the configuration",
        about: "Prints the graph of resources, providers, variables, locals, outputs and modules in Graphviz DOT, or as SVG through Graphviz's dot.",
        main: false,
        flags: &[&[text("format", "dot|svg", "The output format (default dot)."), switch("svg", "The same as -format=svg.")], NO_COLOR],
    },
    Command {
        name: "import",
        args: "ADDR ID",
        max_args: Some(2),
        summary: "Bring an existing object under management",
        about: "Asks the provider of the resource at ADDR (which must be in the configuration) for the object with ID, reads it and records it in the state.",
        main: false,
        flags: &[VARS, LOCK_TIMEOUT, &[switch("pulumi-strict-import", "For a Pulumi provider's resource: import only an object that matches the configuration (Read, then Check, then an empty Diff, as Pulumi's import does); otherwise refuse, naming the properties that differ.")], NO_COLOR],
    },
    Command {
        name: "metadata functions",
        args: "",
        max_args: Some(0),
        summary: "Print the signatures of the built-in functions as JSON",
        about: "Prints the parameters and result type of every built-in function (by its name and as core::NAME) in Terraform's function signatures format (1.0). Requires -json.",
        main: false,
        flags: &[JSON],
    },
    Command {
        name: "output",
        args: "[NAME]",
        max_args: Some(1),
        summary: "Show the root module's output values",
        about: "Prints the output values recorded in the state; one of them with NAME. Sensitive values show as such unless -json or -raw asks for them.",
        main: false,
        flags: &[JSON, &[switch("raw", "Print NAME's string, number or bool as is, for scripts.")], NO_COLOR],
    },
    Command {
        name: "providers",
        args: "",
        max_args: Some(0),
        summary: "Show the providers the configuration and the state require",
        about: "Prints, module by module, the providers the configuration requires with their version constraints, then the providers the state's resources name.",
        main: false,
        flags: &[NO_COLOR],
    },
    Command {
        name: "providers lock",
        args: "[PROVIDER...]",
        max_args: None,
        summary: "Add checksums for other platforms to the dependency lock file",
        about: "For each provider the configuration installs from a registry or network mirror (or only those named), fetches the selected version's package for every platform given, verifies it (signed checksums from a registry) and records its checksums in .terraform.lock.hcl.",
        main: false,
        flags: &[
            NO_COLOR,
            &[text("platform", "OS_ARCH", "A target platform (repeatable); default: this machine's.")],
        ],
    },
    Command {
        name: "providers mirror",
        args: "DIR",
        max_args: Some(1),
        summary: "Save the required providers' packages into a local mirror directory",
        about: "Downloads and verifies the selected version of each provider the configuration installs from a registry, for every platform given, into DIR as release zips in Terraform's packed layout, with the network mirror protocol's index.json and <version>.json files, so DIR serves as a filesystem or network mirror.",
        main: false,
        flags: &[
            NO_COLOR,
            &[text("platform", "OS_ARCH", "A target platform (repeatable); default: this machine's.")],
        ],
    },
    Command {
        name: "providers schema",
        args: "",
        max_args: Some(0),
        summary: "Print the schemas of the configuration's providers as JSON",
        about: "Prints the configuration, resource, data source and function schemas of every provider the configuration uses, in Terraform's providers schema format (1.0). Requires -json.",
        main: false,
        flags: &[JSON, NO_COLOR],
    },
    Command {
        name: "refresh",
        args: "",
        max_args: Some(0),
        summary: "Record in the state what changed outside terrane",
        about: "Reads every managed object and records what changed outside terrane, proposing nothing else. The same as apply -refresh-only -auto-approve.",
        main: false,
        flags: &[SCOPE, VARS, LOCK_TIMEOUT, NO_COLOR, JSON],
    },
    Command {
        name: "show",
        args: "[PLAN]",
        max_args: Some(1),
        summary: "Show the state or a saved plan",
        about: "Prints the objects and outputs of the state, or a plan saved with plan -out.",
        main: false,
        flags: &[NO_COLOR, JSON],
    },
    Command {
        name: "workspace list",
        args: "",
        max_args: Some(0),
        summary: "List workspaces",
        about: "Lists the workspaces of the state's backend or store, the current one marked with *.",
        main: false,
        flags: &[NO_COLOR],
    },
    Command {
        name: "workspace show",
        args: "",
        max_args: Some(0),
        summary: "Show the name of the current workspace",
        about: "Prints the current workspace: TF_WORKSPACE, else the one selected (recorded in the data directory's environment file), else default.",
        main: false,
        flags: &[NO_COLOR],
    },
    Command {
        name: "workspace new",
        args: "NAME",
        max_args: Some(1),
        summary: "Create a new workspace",
        about: "Creates workspace NAME with an empty state (or the state in -state=FILE) and selects it.",
        main: false,
        flags: &[LOCK_TIMEOUT, &[switch("lock", "With -lock=false, do not lock the new workspace's state."), text("state", "FILE", "Start the workspace from this state file (Terraform's format).")], NO_COLOR],
    },
    Command {
        name: "workspace select",
        args: "NAME",
        max_args: Some(1),
        summary: "Select a workspace",
        about: "Makes NAME the current workspace (recorded in the data directory's environment file).",
        main: false,
        flags: &[&[switch("or-create", "Create the workspace when it does not exist.")], NO_COLOR],
    },
    Command {
        name: "workspace delete",
        args: "NAME",
        max_args: Some(1),
        summary: "Delete a workspace",
        about: "Deletes workspace NAME and its state; refuses the current workspace, default, and a workspace whose state still has resources unless -force.",
        main: false,
        flags: &[LOCK_TIMEOUT, &[switch("force", "Delete even when the state still has resources (they are forgotten, not destroyed)."), switch("lock", "Accepted for Terraform compatibility; the workspace is always locked while deleted.")], NO_COLOR],
    },
    Command {
        name: "state list",
        args: "[ADDRESS...]",
        max_args: None,
        summary: "List the objects in the state",
        about: "Lists the resource instances in the state, those under ADDRESS when given.",
        main: false,
        flags: &[NO_COLOR],
    },
    Command {
        name: "state show",
        args: "ADDRESS",
        max_args: Some(1),
        summary: "Show one object of the state",
        about: "Prints the attributes of the resource instance at ADDRESS.",
        main: false,
        flags: &[NO_COLOR],
    },
    Command {
        name: "state rm",
        args: "ADDRESS...",
        max_args: None,
        summary: "Forget objects without destroying them",
        about: "Removes the instances at ADDRESS from the state; the remote objects stay as they are.",
        main: false,
        flags: &[LOCK_TIMEOUT, NO_COLOR],
    },
    Command {
        name: "state mv",
        args: "SOURCE DESTINATION",
        max_args: Some(2),
        summary: "Move an object to another address in the state",
        about: "Records the object at SOURCE under DESTINATION instead, as a moved block would.",
        main: false,
        flags: &[LOCK_TIMEOUT, NO_COLOR],
    },
    Command {
        name: "state pull",
        args: "",
        max_args: Some(0),
        summary: "Print the state as Terraform's JSON state file",
        about: "Prints the current workspace's state in Terraform's state file format (version 4).",
        main: false,
        flags: &[NO_COLOR],
    },
    Command {
        name: "state push",
        args: "FILE",
        max_args: Some(1),
        summary: "Replace the state with a state file",
        about: "Replaces the current workspace's state with FILE (Terraform's format), refusing an older serial or another lineage unless forced.",
        main: false,
        flags: &[LOCK_TIMEOUT, &[switch("force", "Replace even with an older serial or another lineage.")], NO_COLOR],
    },
    Command {
        name: "state replace-provider",
        args: "FROM TO",
        max_args: Some(2),
        summary: "Change the provider the state's resources are managed by",
        about: "Every resource in the state whose provider is FROM (with any alias) is recorded under TO instead, after approval. The objects themselves do not change.",
        main: false,
        flags: &[APPROVE, VARS_INPUT, LOCK_TIMEOUT, NO_COLOR],
    },
    Command {
        name: "state rotate-key",
        args: "",
        max_args: Some(0),
        summary: "Re-encrypt the state with a new key",
        about: "Re-encrypts every workspace of the state store with the key in the variable -new-key-env names, or decrypts it.",
        main: false,
        flags: &[&[text(
                "new-key-env",
                "VARIABLE",
                "The environment variable holding the new key.",
            ), switch("decrypt", "Store the state unencrypted from now on.")], NO_COLOR],
    },
    Command {
        name: "taint",
        args: "ADDRESS",
        max_args: Some(1),
        summary: "Mark a resource instance to be replaced at the next apply",
        about: "Marks the object of the managed resource instance at ADDRESS as tainted: the next plan replaces it. Only the state changes.",
        main: false,
        flags: &[ALLOW_MISSING, LOCK_TIMEOUT, NO_COLOR],
    },
    Command {
        name: "test",
        args: "",
        max_args: Some(0),
        summary: "Run the configuration's tests (.tftest.hcl files)",
        about: "Runs every .tftest.hcl file of the working directory and of the test directory: each run block plans or applies the root module with its variables and checks its assert blocks or expect_failures, each file in a private state whose objects are destroyed when the file is done. mock_provider, override_resource, override_data and override_module replace providers, objects and modules as in Terraform. A failed equality assertion shows Terraform's Diff block.",
        main: false,
        flags: &[&[
                text("filter", "FILE", "Run only this test file (as listed, e.g. tests/a.tftest.hcl); repeatable."),
                text("test-directory", "DIR", "The directory of test files besides the working directory (default tests)."),
                text("junit-xml", "FILE", "Also write the results to FILE in Terraform's JUnit XML format."),
                switch("json", "Print the results as Terraform's machine-readable test UI, one JSON object a line."),
                switch("verbose", "Print the plan or state of each run block as it completes."),
            ], VARS, NO_COLOR],
    },
    Command {
        name: "untaint",
        args: "ADDRESS",
        max_args: Some(1),
        summary: "Take the tainted mark off a resource instance",
        about: "Marks the tainted object of the managed resource instance at ADDRESS as ready again, so the next plan keeps it.",
        main: false,
        flags: &[ALLOW_MISSING, LOCK_TIMEOUT, NO_COLOR],
    },
    Command {
        name: "version",
        args: "",
        max_args: Some(0),
        summary: "Show terrane's version",
        about: "Prints terrane's version, the platform and the Terraform version it is compatible with.",
        main: false,
        flags: &[JSON],
    },
];

/// The command named by `words` (`["state", "list"]`).
pub fn find(words: &[&str]) -> Option<&'static Command> {
    let name = words.join(" ");
    COMMANDS.iter().find(|c| c.name == name)
}

/// Whether `word` starts a command with subcommands (`state`).
pub fn is_group(word: &str) -> bool {
    COMMANDS
        .iter()
        .any(|c| c.name.split_once(' ').is_some_and(|(g, _)| g == word))
}

/// The list of commands, as `terrane -help` prints it.
pub fn overview() -> String {
    let width = COMMANDS.iter().map(|c| c.name.len()).max().unwrap_or(0) + 2;
    let mut out =
        String::from("Usage: terrane [global options] <subcommand> [args]\n\nMain commands:\n");
    let line = |c: &Command| format!("  {:<width$}{}\n", c.name, c.summary);
    for c in COMMANDS.iter().filter(|c| c.main) {
        out.push_str(&line(c));
    }
    out.push_str("\nAll other commands:\n");
    for c in COMMANDS.iter().filter(|c| !c.main) {
        out.push_str(&line(c));
    }
    out.push_str(
        "\nGlobal options (before the subcommand):\n  -chdir=DIR    Work in DIR, as if terrane had been started there.\n  -help         This list; COMMAND -help (or terrane help COMMAND) for one command.\n  -version      The same as the version command.\n",
    );
    out
}

/// One command's help: usage, what it does, its flags.
pub fn help(c: &Command) -> String {
    let mut out = format!("Usage: terrane [global options] {}", c.name);
    if c.flags.iter().any(|g| !g.is_empty()) {
        out.push_str(" [options]");
    }
    if !c.args.is_empty() {
        out.push(' ');
        out.push_str(c.args);
    }
    out.push_str("\n\n");
    out.push_str(&wrap(c.about, 2, 78));
    let flags: Vec<&Flag> = c.all_flags().collect();
    if !flags.is_empty() {
        out.push_str("\nOptions:\n\n");
        for f in flags {
            out.push_str(&format!("  {}\n", spelling(f)));
            out.push_str(&wrap(f.help, 6, 78));
        }
    }
    out
}

/// How a flag is written: `-out=FILE`, `-refresh=false`, `-json`.
fn spelling(f: &Flag) -> String {
    match f.takes {
        Takes::Switch => format!("-{}", f.name),
        Takes::Text(p) | Takes::Count(p) => format!("-{}={p}", f.name),
    }
}

/// `text` wrapped at `width` columns, each line indented by `indent`.
fn wrap(text: &str, indent: usize, width: usize) -> String {
    let pad = " ".repeat(indent);
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && indent + line.len() + 1 + word.len() > width {
            out.push_str(&format!("{pad}{line}\n"));
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        out.push_str(&format!("{pad}{line}\n"));
    }
    out
}

/// The command reference (`docs/commands.md`), generated from the table.
#[cfg(test)]
fn reference() -> String {
    let mut out = String::from(
        "# Command reference\n\nGenerated from the command table in `crates/cli/src/cmdspec.rs` (the same table\nparsing and `-help` use); a test of that module fails when this file differs\nfrom it (`TERRANE_BLESS=1` rewrites it). Flags take one dash, as Terraform's do (two work too);\na value follows `=` or comes as the next argument. A flag a command does not\nlist is an error.\n\nEnvironment, as Terraform reads it: `TF_CLI_ARGS` and `TF_CLI_ARGS_<command>`\n(`TF_CLI_ARGS_plan`, `TF_CLI_ARGS_state_list`) are split as a shell would and\ninserted right after the command, so the command line wins; `TF_INPUT=false`\nis `-input=false`; `TF_IN_AUTOMATION` (any value) drops the hints about which\ncommand to run next; `TF_WORKSPACE` selects the workspace.\n",
    );
    for c in COMMANDS {
        out.push_str(&format!("\n## `terrane {}`", c.name));
        if !c.args.is_empty() {
            out.push_str(&format!(" `{}`", c.args));
        }
        out.push_str(&format!("\n\n{}\n", c.about));
        let flags: Vec<&Flag> = c.all_flags().collect();
        if !flags.is_empty() {
            out.push_str("\n| flag | meaning |\n|---|---|\n");
            for f in flags {
                out.push_str(&format!("| `{}` | {} |\n", spelling(f), f.help));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    /// The committed reference is the table's: regenerate it with
    /// `TERRANE_BLESS=1 cargo test -p terrane-cli reference`.
    #[test]
    fn reference_matches_the_table() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/commands.md");
        let want = super::reference();
        if std::env::var("TERRANE_BLESS").as_deref() == Ok("1") {
            std::fs::write(&path, &want).unwrap();
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            have == want,
            "docs/commands.md differs from the command table; run TERRANE_BLESS=1 cargo test -p terrane-cli reference"
        );
    }
}
