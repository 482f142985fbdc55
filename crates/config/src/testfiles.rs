//! The load-time checks of test files (`*.tftest.hcl` in a module's
//! directory and in its test directory), as Terraform's `validate` and
//! configuration loader make them: the file's and its run blocks' schema,
//! run block names (valid identifiers, unique per file), one `variables`
//! block per file and per run, and `command` as a bare keyword. Running
//! the files is `terrane test`'s business; this only refuses what
//! Terraform refuses before running anything.

use crate::diag::{Diagnostic, LineIndex, SourceRange};
use crate::source::{from_hcl, GAttr, GBlock, GBody};
use crate::Config;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use terrane_hcl::expr::Expression;

/// The test files of `dir` and of `dir/<test_dir>`, as Terraform names
/// them (relative to `dir`), each sorted by name.
pub fn test_file_names(dir: &Path, test_dir: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (sub, prefix) in [
        (dir.to_path_buf(), String::new()),
        (dir.join(test_dir), format!("{test_dir}/")),
    ] {
        let mut names: Vec<String> = std::fs::read_dir(&sub)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tftest.hcl") && !n.starts_with('.'))
            .collect();
        names.sort();
        out.extend(names.into_iter().map(|n| format!("{prefix}{n}")));
    }
    out
}

/// Reads every test file of `dir` (and of its `test_dir`) and returns the
/// diagnostics of their load-time checks; with the configuration under
/// test, also Terraform's warning for an override whose target it does
/// not declare.
pub fn check_test_files(dir: &Path, test_dir: &str, config: Option<&Config>) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    for name in test_file_names(dir, test_dir) {
        match std::fs::read_to_string(dir.join(&name)) {
            Ok(text) => diags.extend(check_test_file(&name, &text, config)),
            Err(e) => diags.push(Diagnostic::error(
                "Failed to read test file",
                format!("{name}: {e}"),
                None,
            )),
        }
    }
    diags
}

/// The load-time diagnostics of one test file's text (`name` as reported).
pub fn check_test_file(name: &str, text: &str, config: Option<&Config>) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    let index = Arc::new(LineIndex::new(name, text));
    let Some(body) = crate::parse_native(text, &index, &mut diags) else {
        return diags;
    };
    let body = from_hcl(body, &index, 0, &mut diags);
    let mut targets = Vec::new();
    Checker {
        index: &index,
        diags: &mut diags,
        targets: &mut targets,
    }
    .file(body);
    if let Some(config) = config {
        for (target, range) in targets {
            if !declares(config, &target) {
                diags.push(Diagnostic::warning(
                    "Invalid override target",
                    format!("The override target {target} does not exist within the configuration under test. This could indicate a typo in the target address or an unnecessary override."),
                    range,
                ));
            }
        }
    }
    diags
}

/// Whether `target` (`type.name`, `data.type.name`, `module.name`, any
/// of them under `module.name.`, instance keys allowed) names something
/// the configuration declares. A module that is not loaded (not
/// installed) declares whatever is asked of it: that is init's error.
fn declares(config: &Config, target: &str) -> bool {
    let mut plain = String::new();
    let mut depth = 0usize;
    for c in target.chars() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            c if depth == 0 && !c.is_whitespace() => plain.push(c),
            _ => {}
        }
    }
    let segs: Vec<&str> = plain.split('.').collect();
    let mut config = config;
    let mut rest = segs.as_slice();
    while let ["module", name, tail @ ..] = rest {
        if !config.module.module_calls.contains_key(*name) {
            return false;
        }
        match config.children.get(*name) {
            Some(child) => config = child,
            None => return true,
        }
        rest = tail;
    }
    let m = &config.module;
    match rest {
        [] => true,
        ["data", ty, name] => m
            .resources
            .iter()
            .any(|r| r.data && r.ty == *ty && r.name == *name),
        [ty, name] => m
            .resources
            .iter()
            .any(|r| !r.data && r.ty == *ty && r.name == *name),
        _ => true,
    }
}

struct Checker<'a> {
    index: &'a Arc<LineIndex>,
    diags: &'a mut Vec<Diagnostic>,
    /// The override blocks' targets as written, with the range of their
    /// `target` argument.
    targets: &'a mut Vec<(String, Option<SourceRange>)>,
}

/// A block's definition range as Terraform writes it in a detail:
/// `file:line,col-col` of its type and labels.
fn def_range_text(r: &SourceRange) -> String {
    if r.start.line == r.end.line {
        format!("{}:{},{}-{}", r.file, r.start.line, r.start.col, r.end.col)
    } else {
        format!(
            "{}:{},{}-{},{}",
            r.file, r.start.line, r.start.col, r.end.line, r.end.col
        )
    }
}

impl Checker<'_> {
    fn error(&mut self, summary: &str, detail: String, range: Option<SourceRange>) {
        self.diags.push(Diagnostic::error(summary, detail, range));
    }

    /// From the block type to the end of its last label.
    fn def_range(&self, b: &GBlock) -> Option<SourceRange> {
        let start = b.ty_span.as_ref()?.start;
        let end = b
            .labels
            .last()
            .and_then(|l| l.1.as_ref())
            .or(b.ty_span.as_ref())?
            .end;
        self.index.range(Some(start..end))
    }

    fn unsupported_arg(&mut self, a: &GAttr) {
        let range = self.index.range(a.name_span.clone());
        self.error(
            "Unsupported argument",
            format!("An argument named {:?} is not expected here.", a.name),
            range,
        );
    }

    fn unsupported_block(&mut self, b: &GBlock) {
        let range = self.index.range(b.ty_span.clone());
        self.error(
            "Unsupported block type",
            format!("Blocks of type {:?} are not expected here.", b.ty),
            range,
        );
    }

    /// A block with exactly one label (`run`, `provider`, `mock_provider`);
    /// the label if it has one.
    fn one_label(&mut self, b: &GBlock) -> Option<(String, Option<SourceRange>)> {
        match b.labels.as_slice() {
            [(l, span)] => Some((l.clone(), self.index.range(span.clone()))),
            [] => {
                // Terraform points at the opening brace.
                let brace = b.body_span.as_ref().map(|s| s.start..s.start + 1);
                let range = self.index.range(brace);
                self.error(
                    &format!("Missing name for {}", b.ty),
                    format!("All {} blocks must have 1 labels (name).", b.ty),
                    range,
                );
                None
            }
            [_, (_, extra), ..] => {
                let range = self.index.range(extra.clone());
                self.error(
                    &format!("Extraneous label for {}", b.ty),
                    format!("Only 1 labels (name) are expected for {} blocks.", b.ty),
                    range,
                );
                None
            }
        }
    }

    /// A second `variables` block where one is already defined.
    fn variables_once(&mut self, seen: &mut Option<String>, b: &GBlock, owner: &str) -> bool {
        let here = self.def_range(b);
        if let Some(first) = seen {
            let detail = format!("This {owner} already has a variables block defined at {first}.");
            self.error("Multiple \"variables\" blocks", detail, here);
            return false;
        }
        *seen = here.as_ref().map(def_range_text);
        true
    }

    fn file(&mut self, body: GBody) {
        for a in &body.attrs {
            self.unsupported_arg(a);
        }
        let mut runs: HashMap<String, String> = HashMap::new();
        let mut variables = None;
        for b in &body.blocks {
            match b.ty.as_str() {
                "run" => {
                    let Some((name, name_range)) = self.one_label(b) else {
                        continue;
                    };
                    if !valid_identifier(&name) {
                        self.error(
                            "Invalid run block name",
                            "A name must start with a letter or underscore and may contain only letters, digits, underscores, and dashes.".into(),
                            name_range,
                        );
                        continue;
                    }
                    self.run(&b.body);
                    let def = self.def_range(b).as_ref().map(def_range_text);
                    match runs.get(&name) {
                        Some(first) => self.error(
                            "Duplicate \"run\" block names",
                            format!("This test file already has a run named {name} block defined at {first}."),
                            name_range,
                        ),
                        None => {
                            runs.insert(name, def.unwrap_or_default());
                        }
                    }
                }
                "variables" => {
                    self.variables_once(&mut variables, b, "test file");
                }
                "provider" | "mock_provider" => {
                    self.one_label(b);
                }
                "override_resource" | "override_data" | "override_module" => self.target(b),
                "test" => {}
                _ => self.unsupported_block(b),
            }
        }
    }

    /// Notes an override block's target.
    fn target(&mut self, b: &GBlock) {
        if let Some(a) = b.body.attrs.iter().find(|a| a.name == "target") {
            let text = terrane_hcl::Span::span(&a.value)
                .and_then(|r| a.index.text().get(r))
                .unwrap_or_default()
                .trim()
                .to_string();
            let range = self.index.range(a.span.clone());
            self.targets.push((text, range));
        }
    }

    fn run(&mut self, body: &GBody) {
        for a in &body.attrs {
            match a.name.as_str() {
                "command" => {
                    let keyword = match &a.value {
                        Expression::Variable(v) => Some(v.as_str()),
                        _ => None,
                    };
                    if !matches!(keyword, Some("plan" | "apply")) {
                        let range = a.index.range(terrane_hcl::Span::span(&a.value));
                        self.error(
                            "Invalid \"command\" keyword",
                            "The \"command\" argument requires one of the following keywords without quotes: apply or plan.".into(),
                            range,
                        );
                    }
                }
                "skip_cleanup" => {
                    let range = self.index.range(a.name_span.clone());
                    self.error(
                        "Invalid attribute",
                        "The skip_cleanup attribute is only available in experimental builds of Terraform.".into(),
                        range,
                    );
                }
                "providers" | "expect_failures" | "state_key" | "parallel" => {}
                _ => self.unsupported_arg(a),
            }
        }
        let mut variables = None;
        for b in &body.blocks {
            match b.ty.as_str() {
                "variables" => {
                    self.variables_once(&mut variables, b, "run block");
                }
                "override_resource" | "override_data" | "override_module" => self.target(b),
                // As released Terraform says (its loader tests, run by an
                // experimental build, accept it).
                "backend" => {
                    let range = self.def_range(b);
                    self.error(
                        "Invalid block",
                        "The backend block is only available within run blocks in experimental builds of Terraform.".into(),
                        range,
                    );
                }
                "plan_options" | "assert" | "module" => {}
                _ => self.unsupported_block(b),
            }
        }
    }
}

/// An HCL identifier: a letter or underscore, then letters, digits,
/// underscores and dashes.
fn valid_identifier(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(f) if f.is_alphabetic() || f == '_')
        && c.all(|c| c.is_alphanumeric() || c == '_' || c == '-')
}

/// A run block's `module { source, version }`: the module a run tests in
/// place of the configuration, installed by `init` as Terraform installs
/// it (under [`run_module_key`]).
#[derive(Clone, Debug)]
pub struct RunModule {
    /// The test file, as [`test_file_names`] names it.
    pub file: String,
    pub run: String,
    pub source: String,
    pub version: Option<String>,
    /// The `module` block's header, where Terraform reports its problems.
    pub range: Option<SourceRange>,
    pub source_range: Option<SourceRange>,
}

/// The key Terraform installs a run's module under: `test`, the test
/// file's directory parts and its name without `.tftest.hcl`, then the
/// run's name, joined by dots (`tests/main.tftest.hcl`'s run `setup` is
/// `test.tests.main.setup`); its own calls follow as usual.
pub fn run_module_key(file: &str, run: &str) -> String {
    let mut parts = vec!["test".to_string()];
    let (dir, base) = file.rsplit_once('/').unwrap_or(("", file));
    parts.extend(
        dir.split('/')
            .filter(|d| !d.is_empty() && *d != ".")
            .map(str::to_string),
    );
    parts.push(base.trim_end_matches(".tftest.hcl").to_string());
    parts.push(run.to_string());
    parts.join(".")
}

/// The run modules of every test file of `dir` (and of `dir/<test_dir>`),
/// in file and run order. Files that do not parse are skipped: their
/// errors are the test command's to report.
pub fn test_run_modules(dir: &Path, test_dir: &str) -> Vec<RunModule> {
    let mut out = Vec::new();
    for name in test_file_names(dir, test_dir) {
        let Ok(text) = std::fs::read_to_string(dir.join(&name)) else {
            continue;
        };
        let mut diags = Vec::new();
        let index = Arc::new(LineIndex::new(&name, &text));
        let Some(body) = crate::parse_native(&text, &index, &mut diags) else {
            continue;
        };
        let body = from_hcl(body, &index, 0, &mut diags);
        for run in body.blocks.iter().filter(|b| b.ty == "run") {
            let Some((run_name, _)) = run.labels.first() else {
                continue;
            };
            for m in run.body.blocks.iter().filter(|b| b.ty == "module") {
                let text_of = |key: &str| {
                    m.body.attrs.iter().find(|a| a.name == key).map(|a| {
                        (
                            crate::constant::const_string(&a.value, &a.index).ok(),
                            a.index.range(terrane_hcl::Span::span(&a.value)),
                        )
                    })
                };
                let Some((Some(source), source_range)) = text_of("source") else {
                    continue;
                };
                out.push(RunModule {
                    file: name.clone(),
                    run: run_name.clone(),
                    source,
                    version: text_of("version").and_then(|(v, _)| v),
                    range: index.range(m.ty_span.clone()),
                    source_range,
                });
            }
        }
    }
    out
}
