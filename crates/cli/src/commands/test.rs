//! `test`: Terraform's testing framework over terrane's engine. Every
//! `*.tftest.hcl` file of the working directory and of `tests/` (or
//! `-test-directory`) is a sequence of `run` blocks against the root
//! module: each plans (`command = plan`) or applies (the default) with the
//! file's and its own `variables`, then checks its `assert` conditions
//! (with `output.NAME` and `run.NAME.OUTPUT` of earlier runs), or, with
//! `expect_failures`, that the conditions of those objects failed. A file
//! has its own state, in a private temporary store that is never the
//! working directory's; what its runs created is destroyed when the file
//! is done. Output, summary and exit code are Terraform's. `-verbose`
//! prints, under each run that passed or failed an assertion, the plan of
//! a plan run or the state an apply run left, as Terraform does.
//!
//! `mock_provider` (with `mock_resource`, `mock_data` and overrides of
//! its own), `override_resource` and `override_data` (in the file or in a
//! run) become the engine's test doubles
//! ([`terrane_engine::provider::mock`]): the mocked or overridden objects
//! never reach the real provider. A run's `module { source = "./dir" }`
//! plans or applies that local module instead, in a state of its own;
//! the state used last is torn down first. A file's `provider` blocks
//! replace the configuration's for its runs. Not built yet, and refused
//! with a diagnostic rather than ignored: a mock's `source` and registry
//! modules in a run.

use crate::args::Args;
use crate::session::{load_engine, options, Ui};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use terrane_config::{Diagnostic, Expr, LineIndex, SourceRange};
use terrane_engine::{Engine, PlanMode};
use terrane_hcl::expr::Expression;
use terrane_hcl::structure::{BlockLabel, Body, Structure};
use terrane_hcl::Span;
use terrane_render::text::Style;
use terrane_value::Value;

/// One `assert` block.
struct Assert {
    condition: Expr,
    error_message: Expr,
}

/// One `run` block.
struct Run {
    name: String,
    apply: bool,
    variables: Vec<(String, Expr)>,
    asserts: Vec<Assert>,
    /// The addresses as written (`var.name`) and where.
    expect_failures: Vec<(String, Option<SourceRange>)>,
    overrides: Vec<OverrideBlock>,
    /// `module { source = "./dir" }`: the local module this run plans or
    /// applies instead of the working directory's configuration.
    module: Option<String>,
}

/// An `override_resource` or `override_data` block, or the defaults of a
/// `mock_resource` or `mock_data` block (whose target is the type).
struct OverrideBlock {
    target: String,
    /// An `override_module` block (its `values` are the module's outputs).
    module: bool,
    values: Option<Expr>,
    during_plan: bool,
}

/// A `mock_provider` block.
struct MockBlock {
    name: String,
    alias: Option<String>,
    resources: Vec<OverrideBlock>,
    data: Vec<OverrideBlock>,
    overrides: Vec<OverrideBlock>,
}

/// A test file as read.
struct TestFile {
    /// As Terraform names it: relative to the working directory.
    name: String,
    variables: Vec<(String, Expr)>,
    runs: Vec<Run>,
    mocks: Vec<MockBlock>,
    overrides: Vec<OverrideBlock>,
    /// `provider` blocks: they replace the configuration's (see
    /// [`Engine::load_test_file`]).
    providers: Vec<terrane_config::ProviderConfig>,
}

pub async fn test(ui: &Ui, dir: &Path, a: &Args) -> u8 {
    let test_dir = a.value("test-directory").unwrap_or("tests").to_string();
    let filters = a.values("filter");
    let mut files = terrane_config::test_file_names(dir, &test_dir);
    if !filters.is_empty() {
        files.retain(|f| filters.iter().any(|x| x == f));
    }
    let engine = match load_engine(dir) {
        Ok(e) => e,
        Err(d) => {
            ui.diags(&d);
            return 1;
        }
    };
    // The test files load with the configuration, as in Terraform: an
    // error in any of them (a duplicate run name, ...) stops everything.
    let load: Vec<Diagnostic> = terrane_config::check_test_files(dir, &test_dir, None)
        .into_iter()
        .filter(|d| d.severity == terrane_config::Severity::Error)
        .collect();
    if !load.is_empty() {
        ui.diags(&load);
        engine.shutdown().await;
        return 1;
    }
    if let Err(d) = crate::stateconf::refuse_backend(&engine.core.config.module) {
        ui.diags(&[d]);
        return 1;
    }
    let base = match options(ui, &engine, a, PlanMode::Normal) {
        Ok(o) => o,
        Err(c) => return c,
    };
    // Files are independent (each has its own state): they run at once,
    // and what each says is printed afterwards, file by file, in order.
    let (engine_ref, base_ref) = (&engine, &base);
    let verbose = a.has("verbose").then_some(&ui.style);
    let runs = files.iter().map(|name| async move {
        let read = read_file(dir, name).and_then(|file| {
            if file.providers.is_empty() {
                return Ok((file, None));
            }
            let own = Engine::load_test_file(dir, &terrane_builtins::standard(), &file.providers)?;
            Ok((file, Some(own)))
        });
        match read {
            Ok((file, None)) => run_file(engine_ref, base_ref, dir, &file, verbose).await,
            Ok((file, Some(own))) => {
                let invalid = provider_block_errors(&own, &file).await;
                let r = if invalid.is_empty() {
                    run_file(&own, base_ref, dir, &file, verbose).await
                } else {
                    skipped_file(&file, invalid)
                };
                own.shutdown().await;
                r
            }
            Err(d) => {
                let mut r = Report::default();
                r.line(format!("{name}... in progress"));
                r.line(format!("{name}... tearing down"));
                r.verdict = Some(name.clone());
                r.diags(d);
                r.failed_file = true;
                r
            }
        }
    });
    let reports = join_all(runs.collect()).await;
    engine.shutdown().await;
    if let Some(path) = a.value("junit-xml") {
        if let Err(e) = std::fs::write(dir.join(path), junit(&reports)) {
            ui.diags(&[Diagnostic::error(
                "Failed to write JUnit XML file",
                format!("Cannot write {path}: {e}."),
                None,
            )]);
            return 1;
        }
    }
    if a.has("json") {
        return json_report(&reports);
    }
    let (mut passed, mut failed, mut skipped, mut any_failed) = (0, 0, 0, false);
    for r in &reports {
        r.print(ui);
        passed += r.passed;
        failed += r.failed;
        skipped += r.skipped;
        any_failed |= r.failed_file;
    }
    let skipped = if skipped > 0 {
        format!(", {skipped} skipped")
    } else {
        String::new()
    };
    if any_failed {
        println!(
            "\n{} {passed} passed, {failed} failed{skipped}.",
            ui.style.bold("Failure!")
        );
        1
    } else {
        println!(
            "\n{} {passed} passed, {failed} failed{skipped}.",
            ui.style.bold("Success!")
        );
        0
    }
}

/// `-json`: what the runs said as Terraform's machine-readable test UI,
/// one JSON object a line (`version`, `test_abstract`, `test_file`,
/// `test_run`, `diagnostic` with `@testfile` and `@testrun`,
/// `test_summary`); returns the exit code.
fn json_report(reports: &[Report]) -> u8 {
    use serde_json::{json, Value as Json};
    use terrane_render::stream;
    let emit =
        |level: &str, msg: &str, kind: &str, extra: Json, file: Option<&str>, run: Option<&str>| {
            let text = stream::line(level, msg, kind, extra);
            let mut v: Json = serde_json::from_str(&text).unwrap_or(Json::Null);
            if let Some(o) = v.as_object_mut() {
                if let Some(f) = file {
                    o.insert("@testfile".into(), json!(f));
                }
                if let Some(r) = run {
                    o.insert("@testrun".into(), json!(r));
                }
            }
            println!("{v}");
        };
    println!("{}", stream::version());
    let mut abstract_ = serde_json::Map::new();
    let mut runs = 0;
    for r in reports {
        if let Some(f) = &r.verdict {
            let names: Vec<&str> = r.cases.iter().map(|c| c.name.as_str()).collect();
            runs += names.len();
            abstract_.insert(f.clone(), json!(names));
        }
    }
    emit(
        "info",
        &format!(
            "Found {} and {}",
            plural(abstract_.len(), "file"),
            plural(runs, "run block")
        ),
        "test_abstract",
        json!({ "test_abstract": abstract_ }),
        None,
        None,
    );
    let (mut passed, mut failed, mut errored, mut skipped) = (0, 0, 0, 0);
    for r in reports {
        let Some(file) = r.verdict.as_deref() else {
            continue;
        };
        let mut case = 0;
        let mut current: Option<&str> = None;
        for s in &r.said {
            match s {
                Said::Line(l) if l.ends_with("... in progress") => emit(
                    "info",
                    l,
                    "test_file",
                    json!({"test_file": {"path": file, "progress": "starting"}}),
                    Some(file),
                    None,
                ),
                Said::Line(l) if l.ends_with("... tearing down") => {
                    current = None;
                    emit(
                        "info",
                        l,
                        "test_file",
                        json!({"test_file": {"path": file, "progress": "teardown"}}),
                        Some(file),
                        None,
                    );
                    if let Some(run) = &r.teardown_run {
                        emit(
                            "info",
                            &format!("  {run:?}... tearing down"),
                            "test_run",
                            json!({"test_run": {"path": file, "run": run, "progress": "teardown", "elapsed": 0}}),
                            Some(file),
                            Some(run),
                        );
                    }
                }
                Said::Line(_) => {
                    let Some(c) = r.cases.get(case) else { continue };
                    case += 1;
                    current = Some(c.name.as_str());
                    let status = match c.outcome {
                        Outcome::Pass => "pass",
                        Outcome::Failure(_) => "fail",
                        Outcome::Error => "error",
                        Outcome::Skipped(_) => "skip",
                    };
                    if c.timing.is_some() {
                        emit(
                            "info",
                            &format!("  {:?}... in progress", c.name),
                            "test_run",
                            json!({"test_run": {"path": file, "run": c.name, "progress": "starting", "elapsed": 0}}),
                            Some(file),
                            current,
                        );
                    }
                    let shown = if status == "error" { "fail" } else { status };
                    emit(
                        "info",
                        &format!("  {:?}... {shown}", c.name),
                        "test_run",
                        json!({"test_run": {"path": file, "run": c.name, "progress": "complete", "status": status}}),
                        Some(file),
                        current,
                    );
                }
                // `-verbose`'s text is for people; the JSON stream leaves
                // it out.
                Said::Text(_) => {}
                Said::Diags(_) | Said::Failed(..) => {
                    let ds = match s {
                        Said::Failed(d, _) => std::slice::from_ref(d),
                        Said::Diags(ds) => ds.as_slice(),
                        Said::Line(_) | Said::Text(_) => &[],
                    };
                    for d in ds {
                        let mut v: Json =
                            serde_json::from_str(&stream::diagnostic(d)).unwrap_or(Json::Null);
                        if let Some(o) = v.as_object_mut() {
                            o.insert("@testfile".into(), json!(file));
                            if let Some(run) = current {
                                o.insert("@testrun".into(), json!(run));
                            }
                        }
                        println!("{v}");
                    }
                }
            }
        }
        let worst = if r.cases.iter().any(|c| matches!(c.outcome, Outcome::Error)) {
            "error"
        } else if r.failed_file {
            "fail"
        } else {
            "pass"
        };
        let verdict = if r.failed_file { "fail" } else { "pass" };
        emit(
            "info",
            &format!("{file}... {verdict}"),
            "test_file",
            json!({"test_file": {"path": file, "progress": "complete", "status": worst}}),
            Some(file),
            None,
        );
        for d in &r.after {
            let mut v: Json = serde_json::from_str(&stream::diagnostic(d)).unwrap_or(Json::Null);
            if let Some(o) = v.as_object_mut() {
                o.insert("@testfile".into(), json!(file));
            }
            println!("{v}");
        }
        for c in &r.cases {
            match c.outcome {
                Outcome::Pass => passed += 1,
                Outcome::Failure(_) => failed += 1,
                Outcome::Error => errored += 1,
                Outcome::Skipped(_) => skipped += 1,
            }
        }
    }
    let any_failed = reports.iter().any(|r| r.failed_file);
    let status = if errored > 0 {
        "error"
    } else if any_failed {
        "fail"
    } else {
        "pass"
    };
    let skipped_text = if skipped > 0 {
        format!(", {skipped} skipped")
    } else {
        String::new()
    };
    let head = if any_failed { "Failure!" } else { "Success!" };
    emit(
        "info",
        &format!(
            "{head} {passed} passed, {} failed{skipped_text}.",
            failed + errored
        ),
        "test_summary",
        json!({"test_summary": {"status": status, "passed": passed, "failed": failed, "errored": errored, "skipped": skipped}}),
        None,
        None,
    );
    u8::from(any_failed)
}

/// `1 file`, `2 files`.
fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

/// Terraform's JUnit XML report of the files' runs: a testsuite per file,
/// a testcase per run with its time, and its failure, error or skip with
/// the diagnostics as printed without colour.
fn junit(reports: &[Report]) -> String {
    use std::fmt::Write as _;
    let plain = terrane_render::text::Style { color: false };
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?><testsuites>\n");
    for r in reports {
        let Some(file) = &r.verdict else { continue };
        let count = |f: fn(&Outcome) -> bool| r.cases.iter().filter(|c| f(&c.outcome)).count();
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{}\" skipped=\"{}\" failures=\"{}\" errors=\"{}\">",
            xml_attr(file),
            r.cases.len(),
            count(|o| matches!(o, Outcome::Skipped(_))),
            count(|o| matches!(o, Outcome::Failure(_))),
            count(|o| matches!(o, Outcome::Error)),
        );
        for c in &r.cases {
            let _ = write!(
                out,
                "    <testcase name=\"{}\" classname=\"{}\"",
                xml_attr(&c.name),
                xml_attr(file)
            );
            if let Some((secs, at)) = &c.timing {
                let _ = write!(out, " time=\"{secs}\" timestamp=\"{at}\"");
            }
            out.push('>');
            let body: String = c
                .diags
                .iter()
                .map(|d| terrane_render::human::diagnostic(&plain, d))
                .collect();
            match &c.outcome {
                Outcome::Pass => {}
                Outcome::Failure(msg) => {
                    let _ = write!(
                        out,
                        "\n      <failure message=\"{}\">{}</failure>\n    ",
                        xml_attr(msg),
                        cdata(&body)
                    );
                }
                Outcome::Error => {
                    let _ = write!(
                        out,
                        "\n      <error message=\"Encountered an error\">{}</error>\n    ",
                        cdata(&body)
                    );
                }
                Outcome::Skipped(skip) => {
                    let why = match skip {
                        Skip::After(after) if after.is_empty() => "The file's variables could not be evaluated, which caused the tests in the file to be skipped".to_string(),
                        Skip::After(after) => format!("Previous testcase {after:?} ended in error, which caused the remaining tests in the file to be skipped"),
                        Skip::Providers => "The file's provider configuration is not valid, which caused the tests in the file to be skipped".to_string(),
                    };
                    let _ = write!(
                        out,
                        "\n      <skipped message=\"Testcase skipped due to a previous testcase error\">{}</skipped>\n    ",
                        cdata(&why)
                    );
                }
            }
            out.push_str("</testcase>\n");
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>");
    out
}

fn xml_attr(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// `s` as CDATA sections (a `]]>` inside split across two).
fn cdata(s: &str) -> String {
    format!("<![CDATA[{}]]>", s.replace("]]>", "]]]]><![CDATA[>"))
}

/// `t` as RFC 3339 in UTC to the second (`2026-11-25T17:56:14Z`).
fn utc_timestamp(t: std::time::SystemTime) -> String {
    let secs = t
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    // Days since 1970-01-01 to a civil date (proleptic Gregorian).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3_600,
        rem % 3_600 / 60,
        rem % 60
    )
}

/// Runs futures at once on this thread and returns their outputs in
/// order (every future is polled again whenever one is woken: a handful
/// of test files, not thousands).
async fn join_all<F: std::future::Future>(futs: Vec<F>) -> Vec<F::Output> {
    use std::task::Poll;
    let mut futs: Vec<std::pin::Pin<Box<F>>> = futs.into_iter().map(Box::pin).collect();
    let mut outs: Vec<Option<F::Output>> = futs.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (f, out) in futs.iter_mut().zip(outs.iter_mut()) {
            if out.is_none() {
                match f.as_mut().poll(cx) {
                    Poll::Ready(o) => *out = Some(o),
                    Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    outs.into_iter().flatten().collect()
}

/// How one run ended, for `-junit-xml`.
enum Outcome {
    Pass,
    /// Assertions failed: the message.
    Failure(String),
    Error,
    /// Skipped, and why.
    Skipped(Skip),
}

/// Why a run was skipped.
enum Skip {
    /// The named run ended in error (empty: the file's variables could not
    /// be evaluated).
    After(String),
    /// The file's own provider configuration does not validate.
    Providers,
}

/// One run, for `-junit-xml`.
struct Case {
    name: String,
    outcome: Outcome,
    /// Seconds it took and when it started (none when skipped).
    timing: Option<(f64, String)>,
    diags: Vec<Diagnostic>,
}

/// What one file's runs said, in order, printed once all are done.
#[derive(Default)]
struct Report {
    said: Vec<Said>,
    cases: Vec<Case>,
    passed: usize,
    failed: usize,
    skipped: usize,
    failed_file: bool,
    /// The file's name, for its closing line.
    verdict: Option<String>,
    /// The last run that applied, whose state the teardown destroys.
    teardown_run: Option<String>,
    /// Diagnostics Terraform prints after the file's closing line (a test
    /// file's provider configuration that does not validate).
    after: Vec<Diagnostic>,
}

enum Said {
    Line(String),
    /// Text printed as it is (`-verbose`'s plan or state).
    Text(String),
    Diags(Vec<Diagnostic>),
    /// A failed assertion, with the box Terraform shows below its source
    /// line (see `test_diff`), if any.
    Failed(Diagnostic, Option<Vec<String>>),
}

impl Report {
    fn line(&mut self, l: String) {
        self.said.push(Said::Line(l));
    }
    fn diags(&mut self, d: Vec<Diagnostic>) {
        if !d.is_empty() {
            self.said.push(Said::Diags(d));
        }
    }
    fn error(&mut self, summary: &str, detail: String) {
        self.diags(vec![Diagnostic::error(summary, detail, None)]);
    }
    fn print(&self, ui: &Ui) {
        let Some(name) = &self.verdict else { return };
        // A file's diagnostics come before its closing line, as in
        // Terraform.
        for s in &self.said {
            match s {
                Said::Line(l) => println!("{l}"),
                Said::Text(t) => print!("{t}"),
                Said::Diags(d) => ui.diags(d),
                Said::Failed(d, boxed) => ui.diag_with_box(d, boxed.as_deref()),
            }
        }
        let verdict = if self.failed_file { "fail" } else { "pass" };
        println!("{name}... {}", ui.style.bold(verdict));
        ui.diags(&self.after);
    }
}

/// The errors of a test file's own `provider` blocks (in `own`, the
/// engine that carries them), found by validating before any run: as in
/// Terraform, such a file runs nothing.
async fn provider_block_errors(own: &Engine, file: &TestFile) -> Vec<Diagnostic> {
    own.validate()
        .await
        .into_iter()
        .filter(|d| {
            d.severity == terrane_config::Severity::Error
                && d.range.as_ref().is_some_and(|r| *r.file == *file.name)
        })
        .collect()
}

/// The report of a file that runs nothing: every run skipped, the file
/// failed, `errors` after its closing line (Terraform's order).
fn skipped_file(file: &TestFile, errors: Vec<Diagnostic>) -> Report {
    let mut r = Report {
        verdict: Some(file.name.clone()),
        failed_file: true,
        after: errors,
        ..Default::default()
    };
    r.line(format!("{}... in progress", file.name));
    for run in &file.runs {
        r.line(format!("  run {:?}... skip", run.name));
        r.skipped += 1;
        r.cases.push(Case {
            name: run.name.clone(),
            outcome: Outcome::Skipped(Skip::Providers),
            timing: None,
            diags: Vec::new(),
        });
    }
    r.line(format!("{}... tearing down", file.name));
    r
}

/// Reads and parses one test file; blocks terrane cannot run yet are
/// errors here, before any run starts.
fn read_file(dir: &Path, name: &str) -> Result<TestFile, Vec<Diagnostic>> {
    let path: PathBuf = dir.join(name);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        vec![Diagnostic::error(
            "Failed to read test file",
            format!("Cannot read {name}: {e}."),
            None,
        )]
    })?;
    let index = Arc::new(LineIndex::new(name, &text));
    let body = terrane_hcl::parser::parse_body(&text).map_err(|e| {
        let loc = e.location();
        vec![Diagnostic::error(
            "Invalid test file",
            e.message().to_string(),
            Some(index.at(loc.line(), loc.column())),
        )]
    })?;
    let mut diags = Vec::new();
    let mut file = TestFile {
        name: name.to_string(),
        variables: Vec::new(),
        runs: Vec::new(),
        mocks: Vec::new(),
        overrides: Vec::new(),
        providers: Vec::new(),
    };
    // The byte ranges of the `provider` blocks, read afterwards as a
    // module's (see `read_providers`).
    let mut provider_spans = Vec::new();
    for s in body {
        match s {
            Structure::Attribute(at) => diags.push(Diagnostic::error(
                "Unsupported argument",
                format!(
                    "An argument named {:?} is not expected here.",
                    at.key.as_str()
                ),
                index.range(at.key.span()),
            )),
            Structure::Block(b) => {
                let ty = b.ident.as_str().to_string();
                let at = index.range(b.ident.span());
                match ty.as_str() {
                    "variables" => file.variables.extend(attrs(b.body, &index)),
                    "run" => match b.labels.first().map(label) {
                        Some(n) => file.runs.push(read_run(n, b.body, &index, dir, &mut diags)),
                        None => diags.push(Diagnostic::error(
                            "Missing name for run block",
                            "A run block must have a name label.",
                            at,
                        )),
                    },
                    "override_resource" | "override_data" | "override_module" => {
                        if let Some(o) = read_override(&ty, b.body, &index, at.clone(), &mut diags)
                        {
                            file.overrides.push(o);
                        }
                    }
                    "mock_provider" => match b.labels.first().map(label) {
                        Some(n) => {
                            if let Some(m) =
                                read_mock(n, b.body, &index, dir, at.clone(), &mut diags)
                            {
                                file.mocks.push(m);
                            }
                        }
                        None => diags.push(Diagnostic::error(
                            "Missing name for mock_provider block",
                            "A mock_provider block must have a name label.",
                            at,
                        )),
                    },
                    "provider" => provider_spans.extend(b.span()),
                    other => diags.push(Diagnostic::error(
                        "Unsupported block type",
                        format!("Blocks of type {other:?} are not expected here."),
                        at,
                    )),
                }
            }
        }
    }
    if !provider_spans.is_empty() {
        let (providers, d) = read_providers(name, &text, &provider_spans);
        file.providers = providers;
        diags.extend(
            d.into_iter()
                .filter(|d| d.severity == terrane_config::Severity::Error),
        );
    }
    if diags.is_empty() {
        Ok(file)
    } else {
        Err(diags)
    }
}

/// A test file's `provider` blocks, decoded as the configuration's are:
/// the file's text with everything but those blocks blanked out (lines and
/// columns kept, so diagnostics point into the test file) read as a module.
fn read_providers(
    name: &str,
    text: &str,
    spans: &[std::ops::Range<usize>],
) -> (Vec<terrane_config::ProviderConfig>, Vec<Diagnostic>) {
    // Byte for byte, so the blocks keep their offsets.
    let mut kept = String::with_capacity(text.len());
    for (i, c) in text.char_indices() {
        if c == '\n' || spans.iter().any(|r| r.contains(&i)) {
            kept.push(c);
        } else {
            kept.extend(std::iter::repeat_n(' ', c.len_utf8()));
        }
    }
    let (module, diags) = terrane_config::parse_str(name, &kept);
    (module.providers, diags)
}

fn label(l: &BlockLabel) -> String {
    match l {
        BlockLabel::Ident(i) => i.as_str().to_string(),
        BlockLabel::String(s) => s.as_str().to_string(),
    }
}

fn expr(value: Expression, index: &Arc<LineIndex>) -> Expr {
    let range = index.range(value.span());
    Expr {
        expr: value,
        range,
        refs: Vec::new(),
        index: index.clone(),
    }
}

/// The arguments of a `variables` block.
fn attrs(body: Body, index: &Arc<LineIndex>) -> Vec<(String, Expr)> {
    body.into_iter()
        .filter_map(|s| match s {
            Structure::Attribute(a) => Some((a.key.as_str().to_string(), expr(a.value, index))),
            Structure::Block(_) => None,
        })
        .collect()
}

/// A run's `module` block: its `source` and `version`. A local directory
/// (`./x`, `../x`) is used where it is; any other source must have been
/// installed by `init`, under Terraform's key for the run
/// (`test.<file>.<run>`). Returns the module's directory, relative to the
/// working directory. `place`: the working directory, the test file's name
/// and the run's.
fn read_run_module(
    body: Body,
    index: &Arc<LineIndex>,
    at: Option<SourceRange>,
    place: (&Path, &str, &str),
    diags: &mut Vec<Diagnostic>,
) -> Option<String> {
    let mut source = None;
    for s in body {
        let Structure::Attribute(a) = s else {
            continue;
        };
        let where_ = index.range(a.value.span());
        match (a.key.as_str(), &a.value) {
            ("source", Expression::String(text)) => {
                source = Some((text.value().to_string(), where_))
            }
            ("source", _) => {
                diags.push(Diagnostic::error(
                    "Invalid module source",
                    "The module source must be a literal string.",
                    where_,
                ));
                return None;
            }
            // Constraints are init's to check, as for any module call.
            ("version", Expression::String(_)) => {}
            ("version", _) => {
                diags.push(Diagnostic::error(
                    "Invalid version constraint",
                    "The module version must be a literal string.",
                    where_,
                ));
                return None;
            }
            (key, _) => {
                diags.push(Diagnostic::error(
                    "Unsupported argument",
                    format!("An argument named {key:?} is not expected here."),
                    index.range(a.key.span()),
                ));
                return None;
            }
        }
    }
    let Some((source, where_)) = source else {
        diags.push(Diagnostic::error(
            "Missing required argument",
            "The argument \"source\" is required, but no definition was found.",
            at,
        ));
        return None;
    };
    if source.starts_with("./") || source.starts_with("../") {
        return Some(source);
    }
    let (root, file, run) = place;
    let key = terrane_config::run_module_key(file, run);
    let data = terrane_engine::provider::discovery::data_dir(root);
    let manifest = terrane_config::modules::ModuleManifest::load(
        &terrane_config::modules::manifest_path(&data),
    );
    let record = match manifest {
        Ok(Some(m)) => m.get(&key).cloned(),
        Ok(None) => None,
        Err(e) => {
            diags.push(Diagnostic::error(
                "Failed to read module manifest",
                format!("{e}. Run \"terrane init\" to install all modules required by this configuration."),
                where_,
            ));
            return None;
        }
    };
    match record {
        Some(r) if r.source == terrane_config::modules::normalize_source(&source) => Some(r.dir),
        Some(_) => {
            diags.push(Diagnostic::error(
                "Module source has changed",
                format!("The source address of run {run:?}'s module was changed since it was installed. Run \"terrane init\" to install all modules required by this configuration."),
                where_,
            ));
            None
        }
        None => {
            diags.push(Diagnostic::error(
                "Module not installed",
                format!("The module of run {run:?} ({source}) is not yet installed. Run \"terrane init\" to install all modules required by this configuration."),
                at,
            ));
            None
        }
    }
}

fn read_run(
    name: String,
    body: Body,
    index: &Arc<LineIndex>,
    root: &Path,
    diags: &mut Vec<Diagnostic>,
) -> Run {
    let mut run = Run {
        name,
        apply: true,
        variables: Vec::new(),
        asserts: Vec::new(),
        expect_failures: Vec::new(),
        overrides: Vec::new(),
        module: None,
    };
    for s in body {
        match s {
            Structure::Attribute(at) => {
                let key = at.key.as_str().to_string();
                let where_ = index.range(at.value.span());
                match (key.as_str(), &at.value) {
                    ("command", Expression::Variable(v)) if v.as_str() == "plan" => {
                        run.apply = false
                    }
                    ("command", Expression::Variable(v)) if v.as_str() == "apply" => {
                        run.apply = true
                    }
                    ("command", _) => diags.push(Diagnostic::error(
                        "Invalid \"command\" keyword",
                        "The \"command\" argument requires one of the following keywords without quotes: apply or plan.",
                        where_,
                    )),
                    ("expect_failures", Expression::Array(items)) => {
                        for item in items.iter() {
                            let text = item
                                .span()
                                .and_then(|r| index.text().get(r))
                                .unwrap_or_default()
                                .trim()
                                .to_string();
                            run.expect_failures.push((text, index.range(item.span())));
                        }
                    }
                    ("expect_failures", _) => diags.push(Diagnostic::error(
                        "Invalid expect_failures",
                        "expect_failures must be a list of references to checkable objects: var.NAME, output.NAME, resources, check.NAME.",
                        where_,
                    )),
                    _ => diags.push(Diagnostic::error(
                        "Unsupported argument",
                        format!("An argument named {key:?} is not expected here."),
                        index.range(at.key.span()),
                    )),
                }
            }
            Structure::Block(b) => {
                let at = index.range(b.ident.span());
                match b.ident.as_str() {
                    "variables" => run.variables.extend(attrs(b.body, index)),
                    "module" => {
                        let place = (root, index.file().as_ref(), run.name.as_str());
                        run.module = read_run_module(b.body, index, at, place, diags);
                    }
                    ty @ ("override_resource" | "override_data" | "override_module") => {
                        let ty = ty.to_string();
                        if let Some(o) = read_override(&ty, b.body, index, at, diags) {
                            run.overrides.push(o);
                        }
                    }
                    "assert" => {
                        let mut cond = None;
                        let mut msg = None;
                        for s in b.body {
                            if let Structure::Attribute(a) = s {
                                match a.key.as_str() {
                                    "condition" => cond = Some(expr(a.value, index)),
                                    "error_message" => msg = Some(expr(a.value, index)),
                                    _ => {}
                                }
                            }
                        }
                        match (cond, msg) {
                            (Some(condition), Some(error_message)) => run.asserts.push(Assert {
                                condition,
                                error_message,
                            }),
                            _ => diags.push(Diagnostic::error(
                                "Missing required argument",
                                "An assert block requires a condition and an error_message.",
                                at,
                            )),
                        }
                    }
                    other => diags.push(Diagnostic::error(
                        "Unsupported test block",
                        format!("terrane test does not run {other:?} blocks in a run block yet; this file cannot be run as written."),
                        at,
                    )),
                }
            }
        }
    }
    run
}

/// The source text of `e`, without blanks and instance keys: the
/// configuration address an override targets.
fn target_text(e: &Expression, index: &LineIndex) -> String {
    let text = e
        .span()
        .and_then(|r| index.text().get(r))
        .unwrap_or_default();
    let mut out = String::new();
    let mut depth = 0;
    for c in text.chars().filter(|c| !c.is_whitespace()) {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

/// `override_during = plan|apply`.
fn during(e: &Expression, at: Option<SourceRange>, diags: &mut Vec<Diagnostic>) -> bool {
    match e {
        Expression::Variable(v) if v.as_str() == "plan" => true,
        Expression::Variable(v) if v.as_str() == "apply" => false,
        _ => {
            diags.push(Diagnostic::error(
                "Invalid override_during value",
                "The override_during attribute must be a keyword without quotes: apply or plan.",
                at,
            ));
            false
        }
    }
}

/// An `override_resource` or `override_data` block (`kind` is which); a
/// target of the wrong kind is an error.
fn read_override(
    kind: &str,
    body: Body,
    index: &Arc<LineIndex>,
    block_at: Option<SourceRange>,
    diags: &mut Vec<Diagnostic>,
) -> Option<OverrideBlock> {
    let mut target = None;
    let mut o = OverrideBlock {
        target: String::new(),
        module: kind == "override_module",
        values: None,
        during_plan: false,
    };
    for s in body {
        match s {
            Structure::Attribute(a) => {
                let at = index.range(a.value.span());
                match a.key.as_str() {
                    "target" => target = Some((target_text(&a.value, index), at)),
                    // A module's override gives its outputs, the others
                    // their objects' attribute values.
                    "values" if kind != "override_module" => o.values = Some(expr(a.value, index)),
                    "outputs" if kind == "override_module" => o.values = Some(expr(a.value, index)),
                    "override_during" => o.during_plan = during(&a.value, at, diags),
                    other => diags.push(Diagnostic::error(
                        "Unsupported argument",
                        format!("An argument named {other:?} is not expected here."),
                        index.range(a.key.span()),
                    )),
                }
            }
            Structure::Block(b) => diags.push(Diagnostic::error(
                "Unsupported block type",
                format!(
                    "Blocks of type {:?} are not expected here.",
                    b.ident.as_str()
                ),
                index.range(b.ident.span()),
            )),
        }
    }
    let Some((t, at)) = target else {
        diags.push(Diagnostic::error(
            "Missing required argument",
            format!("The argument \"target\" is required in an {kind} block."),
            block_at,
        ));
        return None;
    };
    if kind == "override_module" {
        // module.NAME, possibly nested (module.a.module.b).
        let parts: Vec<&str> = t.split('.').collect();
        let module_path = parts.len() >= 2
            && parts.len().is_multiple_of(2)
            && parts.iter().step_by(2).all(|p| *p == "module")
            && parts
                .iter()
                .skip(1)
                .step_by(2)
                .all(|p| !p.is_empty() && !p.contains('['));
        if !module_path {
            diags.push(Diagnostic::error(
                "Invalid override target",
                format!("You can only target modules from override_module blocks, not {t}."),
                at,
            ));
            return None;
        }
        o.target = t;
        return Some(o);
    }
    let is_data = t.split('.').any(|p| p == "data");
    let resource_like = t.split('.').filter(|p| !p.is_empty()).count() >= 2;
    if !resource_like || is_data != (kind == "override_data") {
        let want = if kind == "override_data" {
            "a data source"
        } else {
            "a managed resource"
        };
        diags.push(Diagnostic::error(
            "Invalid override target",
            format!("The target of an {kind} block must be {want}; {t} is not."),
            at,
        ));
        return None;
    }
    o.target = t;
    Some(o)
}

/// A `mock_provider` block. Its `source` names a directory (relative to
/// the working directory, as Terraform reads it) of `*.tfmock.hcl` and
/// `*.tfmock.json` files holding more `mock_*` and `override_*` blocks;
/// the block's own mocks win over the files' for the same type.
fn read_mock(
    name: String,
    body: Body,
    index: &Arc<LineIndex>,
    root: &Path,
    at: Option<SourceRange>,
    diags: &mut Vec<Diagnostic>,
) -> Option<MockBlock> {
    let mut m = MockBlock {
        name,
        alias: None,
        resources: Vec::new(),
        data: Vec::new(),
        overrides: Vec::new(),
    };
    let before = diags.len();
    let mut source = None;
    for s in body {
        match s {
            Structure::Attribute(a) => {
                let at = index.range(a.value.span());
                match (a.key.as_str(), &a.value) {
                    ("alias", Expression::String(v)) => m.alias = Some(v.as_str().to_string()),
                    ("alias", _) => diags.push(Diagnostic::error(
                        "Invalid alias",
                        "The alias of a mock_provider block must be a string.",
                        at,
                    )),
                    ("source", Expression::String(v)) => source = Some(v.as_str().to_string()),
                    ("source", _) => diags.push(Diagnostic::error(
                        "Invalid source",
                        "The source of a mock_provider block must be a string: the directory of its .tfmock.hcl files.",
                        at,
                    )),
                    (other, _) => diags.push(Diagnostic::error(
                        "Unsupported argument",
                        format!("An argument named {other:?} is not expected here."),
                        index.range(a.key.span()),
                    )),
                }
            }
            Structure::Block(b) => mock_item(b, index, &mut m, diags),
        }
    }
    if let Some(src) = source {
        let mut files = MockBlock {
            name: String::new(),
            alias: None,
            resources: Vec::new(),
            data: Vec::new(),
            overrides: Vec::new(),
        };
        read_mock_dir(root, &src, at, &mut files, diags);
        let has = |list: &[OverrideBlock], ty: &str| list.iter().any(|d| d.target == ty);
        files.resources.retain(|d| !has(&m.resources, &d.target));
        files.data.retain(|d| !has(&m.data, &d.target));
        m.resources.extend(files.resources);
        m.data.extend(files.data);
        m.overrides.extend(files.overrides);
    }
    (diags.len() == before).then_some(m)
}

/// One block of a mock provider, in its `mock_provider` block or in a
/// mock data file: `mock_resource`/`mock_data` defaults of a type,
/// `override_resource`/`override_data` of one object.
fn mock_item(
    b: terrane_hcl::structure::Block,
    index: &Arc<LineIndex>,
    m: &mut MockBlock,
    diags: &mut Vec<Diagnostic>,
) {
    let at = index.range(b.ident.span());
    let kind = b.ident.as_str().to_string();
    match kind.as_str() {
        "mock_resource" | "mock_data" => {
            let Some(ty) = b.labels.first().map(label) else {
                diags.push(Diagnostic::error(
                    "Missing type for mock block",
                    format!("A {kind} block must have the type it mocks as its label."),
                    at,
                ));
                return;
            };
            let mut d = OverrideBlock {
                module: false,
                target: ty,
                values: None,
                during_plan: false,
            };
            for s in b.body {
                let Structure::Attribute(a) = s else { continue };
                let at = index.range(a.value.span());
                match a.key.as_str() {
                    "defaults" => d.values = Some(expr(a.value, index)),
                    "override_during" => d.during_plan = during(&a.value, at, diags),
                    other => diags.push(Diagnostic::error(
                        "Unsupported argument",
                        format!("An argument named {other:?} is not expected here."),
                        index.range(a.key.span()),
                    )),
                }
            }
            if kind == "mock_data" {
                m.data.push(d);
            } else {
                m.resources.push(d);
            }
        }
        "override_resource" | "override_data" => {
            if let Some(o) = read_override(&kind, b.body, index, at, diags) {
                m.overrides.push(o);
            }
        }
        other => diags.push(Diagnostic::error(
            "Unsupported block type",
            format!("Blocks of type {other:?} are not expected here."),
            at,
        )),
    }
}

/// The mock data files of directory `src` (relative to `root`), in name
/// order, into `m`. `.tfmock.json` files are read by writing each block as
/// the native syntax it stands for (diagnostics then name the JSON file,
/// at the block's line in that rendering).
fn read_mock_dir(
    root: &Path,
    src: &str,
    at: Option<SourceRange>,
    m: &mut MockBlock,
    diags: &mut Vec<Diagnostic>,
) {
    let unreadable = |diags: &mut Vec<Diagnostic>| {
        diags.push(Diagnostic::error(
            "Failed to read mock data directory",
            format!("Mock data directory {src} does not exist or cannot be read."),
            at.clone(),
        ))
    };
    let Ok(entries) = std::fs::read_dir(root.join(src)) else {
        return unreadable(diags);
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            let n = p.to_string_lossy();
            n.ends_with(".tfmock.hcl") || n.ends_with(".tfmock.json")
        })
        .collect();
    files.sort();
    for path in files {
        let name = Path::new(src)
            .join(path.file_name().unwrap_or_default())
            .to_string_lossy()
            .into_owned();
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) => {
                diags.push(Diagnostic::error(
                    "Failed to read mock data file",
                    format!("Cannot read {name}: {e}."),
                    at.clone(),
                ));
                continue;
            }
        };
        let text = if name.ends_with(".json") {
            match mock_json_as_native(&text) {
                Ok(t) => t,
                Err(e) => {
                    diags.push(Diagnostic::error(
                        "Invalid mock data file",
                        format!("{name}: {e}."),
                        at.clone(),
                    ));
                    continue;
                }
            }
        } else {
            text
        };
        let index = Arc::new(LineIndex::new(&name, &text));
        let body = match terrane_hcl::parser::parse_body(&text) {
            Ok(b) => b,
            Err(e) => {
                let loc = e.location();
                diags.push(Diagnostic::error(
                    "Invalid mock data file",
                    e.message().to_string(),
                    Some(index.at(loc.line(), loc.column())),
                ));
                continue;
            }
        };
        for s in body {
            match s {
                Structure::Block(b) => mock_item(b, &index, m, diags),
                Structure::Attribute(a) => diags.push(Diagnostic::error(
                    "Unsupported argument",
                    format!(
                        "An argument named {:?} is not expected here.",
                        a.key.as_str()
                    ),
                    index.range(a.key.span()),
                )),
            }
        }
    }
}

/// A `.tfmock.json` document as the native-syntax blocks it stands for:
/// `mock_resource`/`mock_data` are objects keyed by type, `override_*`
/// objects or arrays of objects whose `target` is an expression in a
/// string; values are literal (a string's `${` stays text).
fn mock_json_as_native(text: &str) -> Result<String, String> {
    let doc: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let top = doc.as_object().ok_or("the document is not an object")?;
    let mut out = String::new();
    for (kind, v) in top {
        match kind.as_str() {
            "mock_resource" | "mock_data" => {
                let types = v
                    .as_object()
                    .ok_or(format!("{kind} must be an object keyed by type"))?;
                for (ty, body) in types {
                    out.push_str(&format!(
                        "{kind} {} {{\n",
                        json_hcl(&serde_json::Value::String(ty.clone()))
                    ));
                    let body = body
                        .as_object()
                        .ok_or(format!("{kind} {ty:?} must be an object"))?;
                    for (k, v) in body {
                        out.push_str(&format!("  {k} = {}\n", json_hcl(v)));
                    }
                    out.push_str("}\n");
                }
            }
            "override_resource" | "override_data" => {
                let items = match v {
                    serde_json::Value::Array(a) => a.clone(),
                    other => vec![other.clone()],
                };
                for item in items {
                    let body = item
                        .as_object()
                        .ok_or(format!("{kind} must be an object"))?;
                    out.push_str(&format!("{kind} {{\n"));
                    for (k, v) in body {
                        match (k.as_str(), v) {
                            ("target", serde_json::Value::String(t)) => {
                                out.push_str(&format!("  target = {t}\n"))
                            }
                            _ => out.push_str(&format!("  {k} = {}\n", json_hcl(v))),
                        }
                    }
                    out.push_str("}\n");
                }
            }
            other => out.push_str(&format!("{other} {{\n}}\n")),
        }
    }
    Ok(out)
}

/// A JSON value as a literal native-syntax expression.
fn json_hcl(v: &serde_json::Value) -> String {
    use serde_json::Value as J;
    match v {
        J::Null => "null".into(),
        J::Bool(b) => b.to_string(),
        J::Number(n) => n.to_string(),
        J::String(s) => {
            let quoted = serde_json::to_string(s).unwrap_or_default();
            quoted.replace("${", "$${").replace("%{", "%%{")
        }
        J::Array(a) => format!(
            "[{}]",
            a.iter().map(json_hcl).collect::<Vec<_>>().join(", ")
        ),
        J::Object(o) => format!(
            "{{ {} }}",
            o.iter()
                .map(|(k, v)| format!("{} = {}", json_hcl(&J::String(k.clone())), json_hcl(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The values of an override or mock block: an object (none given is an
/// empty one).
fn double_values(
    o: &OverrideBlock,
    run_outputs: &BTreeMap<String, Value>,
) -> Result<terrane_engine::provider::mock::DoubleValues, Vec<Diagnostic>> {
    let values = match &o.values {
        Some(e) => {
            let (v, d) = constant(e, run_outputs);
            if crate::session::has_errors(&d) {
                return Err(d);
            }
            if !v.is_null()
                && !matches!(
                    v.ty(),
                    terrane_value::Type::Object(_) | terrane_value::Type::Map(_)
                )
            {
                return Err(vec![Diagnostic::error(
                    "Invalid override values",
                    "The values of an override or mock block must be an object of attribute values.",
                    e.range.clone(),
                )]);
            }
            v.unmark_deep()
        }
        None => Value::object(BTreeMap::new()),
    };
    Ok(terrane_engine::provider::mock::DoubleValues {
        values,
        during_plan: o.during_plan,
    })
}

/// The test doubles of a walk: the run's overrides (`run` may be none:
/// the teardown), then the file's, then its mock providers', with the
/// mocks. `None` when the file has none.
fn doubles(
    engine: &Engine,
    file: &TestFile,
    runs: &[&Run],
    run_outputs: &BTreeMap<String, Value>,
) -> Result<Option<Arc<terrane_engine::provider::mock::TestDoubles>>, Vec<Diagnostic>> {
    use terrane_engine::provider::mock::{Mock, ModuleOverride, Override, TestDoubles};
    let run_overrides = runs.iter().flat_map(|r| r.overrides.iter());
    if file.mocks.is_empty() && file.overrides.is_empty() && run_overrides.clone().next().is_none()
    {
        return Ok(None);
    }
    let mut d = TestDoubles::default();
    let mock_overrides = file.mocks.iter().flat_map(|m| m.overrides.iter());
    for o in run_overrides.chain(&file.overrides).chain(mock_overrides) {
        let values = double_values(o, run_outputs)?;
        if o.module {
            d.modules.push(ModuleOverride {
                path: o
                    .target
                    .split('.')
                    .skip(1)
                    .step_by(2)
                    .map(str::to_string)
                    .collect(),
                outputs: values.values,
            });
        } else {
            d.overrides.push(Override {
                target: o.target.clone(),
                values,
            });
        }
    }
    for m in &file.mocks {
        let addr = engine
            .core
            .provider_addrs
            .get(&m.name)
            .cloned()
            .unwrap_or_else(|| {
                terrane_engine::provider::ProviderAddr::new(
                    "registry.terraform.io",
                    "hashicorp",
                    &m.name,
                )
            });
        let by_type = |bs: &[OverrideBlock]| -> Result<BTreeMap<_, _>, Vec<Diagnostic>> {
            bs.iter()
                .map(|b| Ok((b.target.clone(), double_values(b, run_outputs)?)))
                .collect()
        };
        d.mocks.push(Mock {
            addr,
            alias: m.alias.clone(),
            resources: by_type(&m.resources)?,
            data: by_type(&m.data)?,
        });
    }
    Ok(Some(Arc::new(d)))
}

/// How one run ended.
#[derive(PartialEq)]
enum Status {
    Pass,
    /// An assertion failed: later runs still run.
    Fail,
    /// An error (a plan or apply failed, a missing expected failure):
    /// later runs of the file are skipped.
    Error,
}

/// A blocking state store call, off this thread so other files' runs go
/// on meanwhile.
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T, String> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| format!("the state store call stopped: {e}"))
}

/// Runs one file's runs in order, then destroys what they created.
/// A private state of a test file: the working directory's configuration
/// has one, and each module a run names (`module { source }`) has its own,
/// created when a run first uses it.
struct FileState {
    /// The module source; empty for the working directory's configuration.
    key: String,
    /// The module's engine; `None` for the working directory's.
    engine: Option<Engine>,
    store: Arc<dyn terrane_state::StateStore>,
    /// Holds the store's directory until the file is done.
    _dir: tempfile::TempDir,
    /// The variables of the last run on this state, for its teardown.
    last_vars: BTreeMap<String, Value>,
    /// The runs that used this state (their overrides apply at teardown).
    runs: Vec<usize>,
}

/// A new private state store (SQLite in a temporary directory that is
/// never the working directory's).
async fn private_store() -> Result<(tempfile::TempDir, Arc<dyn terrane_state::StateStore>), String>
{
    let store_dir = tempfile::Builder::new()
        .prefix(".terrane-test-")
        .tempdir()
        .map_err(|e| e.to_string())?;
    let config = terrane_state::StoreConfig {
        location: terrane_state::StoreLocation::Sqlite(store_dir.path().join("state.db")),
        encryption: None,
    };
    let store = blocking(move || terrane_state::open_store(&config))
        .await?
        .map_err(|e| e.to_string())?;
    Ok((store_dir, Arc::from(store)))
}

async fn run_file(
    engine: &Engine,
    base: &terrane_engine::Options,
    dir: &Path,
    file: &TestFile,
    verbose: Option<&Style>,
) -> Report {
    let mut r = Report {
        verdict: Some(file.name.clone()),
        ..Default::default()
    };
    r.line(format!("{}... in progress", file.name));
    let mut states: Vec<FileState> = Vec::new();
    match private_store().await {
        Ok((d, store)) => states.push(FileState {
            key: String::new(),
            engine: None,
            store,
            _dir: d,
            last_vars: BTreeMap::new(),
            runs: Vec::new(),
        }),
        Err(e) => {
            r.error("Failed to create the test state", e);
            r.failed = file.runs.len();
            r.failed_file = true;
            return r;
        }
    }
    let mut run_outputs: BTreeMap<String, Value> = BTreeMap::new();
    let mut file_vars: BTreeMap<String, Value> = BTreeMap::new();
    let mut skip_rest = false;
    for (name, e) in &file.variables {
        let (v, d) = constant(e, &BTreeMap::new());
        if crate::session::has_errors(&d) {
            r.diags(d);
            r.failed_file = true;
            skip_rest = true;
        }
        file_vars.insert(name.clone(), v);
    }
    states[0].last_vars = file_vars.clone();
    let mut errored_run = String::new();
    for (run_index, run) in file.runs.iter().enumerate() {
        if skip_rest {
            r.line(format!("  run {:?}... skip", run.name));
            r.skipped += 1;
            r.cases.push(Case {
                name: run.name.clone(),
                outcome: Outcome::Skipped(Skip::After(errored_run.clone())),
                timing: None,
                diags: Vec::new(),
            });
            continue;
        }
        let mark = r.said.len();
        let started = std::time::Instant::now();
        let timestamp = utc_timestamp(std::time::SystemTime::now());
        let key = run.module.clone().unwrap_or_default();
        let status = match state_for(&mut states, &key, dir, &file.providers).await {
            Err(d) => {
                r.line(format!("  run {:?}... fail", run.name));
                r.diags(d);
                Status::Error
            }
            Ok(i) => {
                let st = &mut states[i];
                let run_engine = st.engine.as_ref().unwrap_or(engine);
                // A module takes the file's variables it declares.
                let vars: BTreeMap<String, Value> = match &st.engine {
                    None => file_vars.clone(),
                    Some(e) => file_vars
                        .iter()
                        .filter(|(k, _)| e.core.config.module.variables.contains_key(*k))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                };
                let (status, used) = one_run(
                    &mut r,
                    (run_engine, base),
                    &st.store,
                    run,
                    (&vars, file),
                    &mut run_outputs,
                    verbose.map(|style| (dir, style)),
                )
                .await;
                st.last_vars = used;
                st.runs.push(run_index);
                status
            }
        };
        if run.apply {
            r.teardown_run = Some(run.name.clone());
        }
        let diags: Vec<Diagnostic> = r.said[mark..]
            .iter()
            .flat_map(|s| match s {
                Said::Diags(d) => d.clone(),
                Said::Failed(d, _) => vec![d.clone()],
                Said::Line(_) | Said::Text(_) => Vec::new(),
            })
            .collect();
        let outcome = match status {
            Status::Pass => Outcome::Pass,
            Status::Fail => {
                let failed: Vec<&Diagnostic> = diags
                    .iter()
                    .filter(|d| d.summary == "Test assertion failed")
                    .collect();
                let first = failed.first().map(|d| d.detail.as_str()).unwrap_or("");
                Outcome::Failure(format!(
                    "{} of {} assertions failed: {first}",
                    failed.len(),
                    run.asserts.len()
                ))
            }
            Status::Error => {
                errored_run = run.name.clone();
                Outcome::Error
            }
        };
        r.cases.push(Case {
            name: run.name.clone(),
            outcome,
            timing: Some((started.elapsed().as_secs_f64(), timestamp)),
            diags,
        });
        match status {
            Status::Pass => r.passed += 1,
            Status::Fail => {
                r.failed += 1;
                r.failed_file = true;
            }
            Status::Error => {
                r.failed += 1;
                r.failed_file = true;
                skip_rest = true;
            }
        }
    }
    r.line(format!("{}... tearing down", file.name));
    // As in Terraform, the state used last is destroyed first (a setup
    // module used only by the first runs outlives what later runs made
    // with it). The working directory's state keeps the overrides of
    // every run, as before; a module's, those of its own runs.
    let mut order: Vec<&FileState> = states.iter().collect();
    order.sort_by_key(|st| std::cmp::Reverse(st.runs.last().copied()));
    for st in order {
        let st_engine = st.engine.as_ref().unwrap_or(engine);
        let runs: Vec<&Run> = if st.engine.is_none() {
            file.runs.iter().collect()
        } else {
            st.runs.iter().map(|i| &file.runs[*i]).collect()
        };
        let mut base = base.clone();
        match doubles(st_engine, file, &runs, &run_outputs) {
            Ok(d) => base.doubles = d,
            Err(d) => {
                r.diags(d);
                r.failed_file = true;
                continue;
            }
        }
        if let Err(d) = teardown(st_engine, &base, &st.store, &st.last_vars).await {
            r.diags(d);
            r.failed_file = true;
        }
    }
    for st in states {
        if let Some(e) = st.engine {
            e.shutdown().await;
        }
    }
    r
}

/// The index of the state of `key` in `states`, created (with its
/// module's engine) on first use.
async fn state_for(
    states: &mut Vec<FileState>,
    key: &str,
    dir: &Path,
    providers: &[terrane_config::ProviderConfig],
) -> Result<usize, Vec<Diagnostic>> {
    if let Some(i) = states.iter().position(|s| s.key == key) {
        return Ok(i);
    }
    let module_dir = dir.join(key);
    if !module_dir.is_dir() {
        return Err(vec![Diagnostic::error(
            "Failed to load the run's module",
            format!("The module source {key:?} is not a directory."),
            None,
        )]);
    }
    let engine = terrane_engine::Engine::load_test_module(
        &module_dir,
        dir,
        &terrane_builtins::standard(),
        providers,
    )?;
    let (d, store) = private_store().await.map_err(|e| {
        vec![Diagnostic::error(
            "Failed to create the test state",
            e,
            None,
        )]
    })?;
    states.push(FileState {
        key: key.to_string(),
        engine: Some(engine),
        store,
        _dir: d,
        last_vars: BTreeMap::new(),
        runs: Vec::new(),
    });
    Ok(states.len() - 1)
}

/// Evaluates a `variables` value: constants and references to earlier
/// runs' outputs (`run.NAME.OUTPUT`).
fn constant(e: &Expr, run_outputs: &BTreeMap<String, Value>) -> (Value, Vec<Diagnostic>) {
    let scope = terrane_eval::MapScope::new().with("run", Value::object(run_outputs.clone()));
    let ctx = terrane_eval::default_ctx(Path::new("."));
    terrane_eval::eval_expr(e, &scope, &ctx)
}

/// One run: plan (and apply), then its expected failures or assertions.
/// Returns how it ended and the variables it ran with.
async fn one_run(
    r: &mut Report,
    (engine, base): (&Engine, &terrane_engine::Options),
    store: &Arc<dyn terrane_state::StateStore>,
    run: &Run,
    (file_vars, file): (&BTreeMap<String, Value>, &TestFile),
    run_outputs: &mut BTreeMap<String, Value>,
    verbose: Option<(&Path, &Style)>,
) -> (Status, BTreeMap<String, Value>) {
    let file_exprs = &file.variables;
    let mut opts = base.clone();
    let name = &run.name;
    match doubles(engine, file, &[run], run_outputs) {
        Ok(d) => opts.doubles = d,
        Err(d) => {
            r.line(format!("  run {name:?}... fail"));
            r.diags(d);
            return (Status::Error, opts.vars);
        }
    }
    for (k, v) in file_vars {
        opts.vars.insert(k.clone(), v.clone());
    }
    for (var, e) in &run.variables {
        let (v, d) = constant(e, run_outputs);
        if crate::session::has_errors(&d) {
            r.line(format!("  run {name:?}... fail"));
            r.diags(d);
            return (Status::Error, opts.vars);
        }
        opts.vars.insert(var.clone(), v);
    }
    let s = store.clone();
    let snapshot = match blocking(move || s.snapshot("default")).await {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => {
            r.line(format!("  run {name:?}... fail"));
            r.error("Failed to read the test state", e.to_string());
            return (Status::Error, opts.vars);
        }
        Err(e) => {
            r.line(format!("  run {name:?}... fail"));
            r.error("Failed to read the test state", e);
            return (Status::Error, opts.vars);
        }
    };
    let mut diags: Vec<Diagnostic> = Vec::new();
    let mut state = snapshot.clone();
    // An apply run whose plan failed as expected could not apply.
    let mut plan_failed = false;
    if run.apply {
        let plan = engine.plan(&snapshot, opts.clone()).await;
        diags.extend(plan.diagnostics.iter().cloned());
        plan_failed = plan.has_errors();
        if !plan_failed {
            match apply(engine, store, &plan, &snapshot, &opts).await {
                Ok(result) => {
                    diags.extend(result.diagnostics.iter().cloned());
                    if let Some(s) = result.state {
                        state = s;
                    }
                }
                Err(d) => {
                    r.line(format!("  run {name:?}... fail"));
                    r.diags(d);
                    return (Status::Error, opts.vars);
                }
            }
        }
    }
    // Asserts are checked against the values of a walk over the state the
    // run left (planned values for a plan run).
    let mut eval_opts = opts.clone();
    eval_opts.refresh = !run.apply;
    let (eval, walk_diags) = engine.evaluation(&state, eval_opts).await;
    if !run.apply {
        diags.extend(walk_diags);
    }
    // A plan and the apply after it may report the same thing.
    let mut seen = Vec::new();
    diags.retain(|d| {
        let key = (d.summary.clone(), d.detail.clone(), d.range.clone());
        let new = !seen.contains(&key);
        seen.push(key);
        new
    });
    // A failed check block fails the run, as in Terraform's tests: its
    // warning is an error here.
    for d in diags.iter_mut() {
        if d.summary == "Check block assertion failed" {
            d.severity = terrane_config::Severity::Error;
        }
    }
    // A variable's failed validation points at where the test file set
    // its value, as Terraform's does (the run's, else the file's).
    for d in diags.iter_mut() {
        if d.summary != "Invalid value for variable" {
            continue;
        }
        let set_at = run
            .variables
            .iter()
            .chain(file_exprs)
            .find(|(var, _)| concerns(d, &format!("var.{var}")));
        if let Some((_, e)) = set_at {
            d.range = e.range.clone();
        }
    }
    let is_error = |d: &&Diagnostic| d.severity == terrane_config::Severity::Error;
    let errors: Vec<Diagnostic> = diags.iter().filter(is_error).cloned().collect();
    // `-verbose`: the run's plan or state, shown under its line.
    let shown = match verbose {
        Some((dir, style)) if !plan_failed && errors.is_empty() => {
            Some(verbose_text(engine, &snapshot, &state, &opts, run, dir, style).await)
        }
        _ => None,
    };
    let show = |r: &mut Report| {
        if let Some(t) = &shown {
            r.said.push(Said::Text(t.clone()));
        }
    };
    if !run.expect_failures.is_empty() {
        let mut missing = Vec::new();
        for (addr, at) in &run.expect_failures {
            if !errors.iter().any(|d| concerns(d, addr)) {
                missing.push(Diagnostic::error(
                    "Missing expected failure",
                    format!("The checkable object, {addr}, was expected to report an error but did not."),
                    at.clone(),
                ));
            }
        }
        let unexpected: Vec<Diagnostic> = errors
            .iter()
            .filter(|d| {
                !run.expect_failures
                    .iter()
                    .any(|(addr, _)| concerns(d, addr))
            })
            .cloned()
            .collect();
        if missing.is_empty() && unexpected.is_empty() && !plan_failed {
            r.line(format!("  run {name:?}... pass"));
            show(r);
            return (Status::Pass, opts.vars);
        }
        r.line(format!("  run {name:?}... fail"));
        if missing.is_empty() && unexpected.is_empty() {
            // Terraform's note, then the failure itself.
            let addrs: Vec<&str> = run
                .expect_failures
                .iter()
                .map(|(a, _)| a.as_str())
                .collect();
            r.diags(vec![Diagnostic::warning(
                "Expected failure while planning",
                format!("A custom condition within {} failed during the planning stage and prevented the requested apply operation. While this was an expected failure, the apply operation could not be executed and so the overall test case will be marked as a failure and the original diagnostic included in the test report.", addrs.join(", ")),
                None,
            )]);
            r.diags(errors);
        } else {
            r.diags(unexpected);
            r.diags(missing);
        }
        return (Status::Error, opts.vars);
    }
    if !errors.is_empty() {
        r.line(format!("  run {name:?}... fail"));
        r.diags(diags);
        return (Status::Error, opts.vars);
    }
    let outputs = eval.outputs();
    let mut roots = BTreeMap::new();
    roots.insert("output".to_string(), Value::object(outputs.clone()));
    roots.insert("run".to_string(), Value::object(run_outputs.clone()));
    let mut failures = Vec::new();
    let mut errored = Vec::new();
    for assert in &run.asserts {
        let (v, d) = eval.eval_with(&assert.condition, &roots);
        if crate::session::has_errors(&d) {
            errored.extend(d);
            continue;
        }
        let holds = v.unmark_deep();
        if !holds.is_known() {
            errored.push(Diagnostic::error(
                "Unknown condition value",
                "Condition expression could not be evaluated at this time. This means you have executed a `run` block with `command = plan` and one of the values your condition depended on is not known until after the plan has been applied. Either remove this value from your condition, or execute an `apply` command from this `run` block. Alternatively, if there is an override for this value, you can make it available during the plan phase by setting `override_during = plan` in the `override_` block.",
                assert.condition.range.clone(),
            ));
            continue;
        }
        if holds.as_bool() == Some(true) {
            continue;
        }
        let (msg, md) = eval.eval_with(&assert.error_message, &roots);
        let detail = match msg.unmark_deep().as_str() {
            Some(s) if md.is_empty() => s.to_string(),
            _ => "The assertion failed, and its error message could not be evaluated.".into(),
        };
        // `-verbose` shows the operands and what the condition read.
        let values = verbose.map(|_| {
            super::test_diff::reference_values(&assert.condition.expr, |e| {
                let (v, d) = eval.eval_with(&sub_expr(&assert.condition, e), &roots);
                (!crate::session::has_errors(&d)).then_some(v)
            })
        });
        let boxed =
            super::test_diff::binary_box(operands(&eval, &assert.condition, &roots), values);
        failures.push((
            Diagnostic::error(
                "Test assertion failed",
                detail,
                assert.condition.range.clone(),
            ),
            boxed,
        ));
    }
    run_outputs.insert(run.name.clone(), Value::object(outputs));
    let warnings: Vec<Diagnostic> = diags.into_iter().filter(|d| !is_error(&d)).collect();
    r.diags(warnings);
    if failures.is_empty() && errored.is_empty() {
        r.line(format!("  run {name:?}... pass"));
        show(r);
        return (Status::Pass, opts.vars);
    }
    r.line(format!("  run {name:?}... fail"));
    let status = if errored.is_empty() {
        show(r);
        Status::Fail
    } else {
        Status::Error
    };
    for (d, boxed) in failures {
        r.said.push(Said::Failed(d, boxed));
    }
    r.diags(errored);
    (status, opts.vars)
}

/// What `-verbose` prints under a run's line: the plan of a plan run (as
/// `plan` prints it), or the state an apply run left (as `show` does),
/// each followed by a blank line.
async fn verbose_text(
    engine: &Engine,
    snapshot: &terrane_state::Snapshot,
    state: &terrane_state::Snapshot,
    opts: &terrane_engine::Options,
    run: &Run,
    dir: &Path,
    style: &Style,
) -> String {
    if run.apply {
        let dir = match &run.module {
            Some(m) => dir.join(m),
            None => dir.to_path_buf(),
        };
        format!("\n{}\n", super::state::show::render_all(&dir, state).await)
    } else {
        let plan = engine.plan(snapshot, opts.clone()).await;
        format!("{}\n", terrane_render::human::plan(style, &plan))
    }
}

/// The values of a binary condition's two operands (evaluated as the
/// condition was), for the box under a failed assertion.
fn operands(
    eval: &terrane_engine::Evaluation,
    condition: &Expr,
    roots: &BTreeMap<String, Value>,
) -> Option<(Value, Value)> {
    let Expression::BinaryOp(op) = &condition.expr else {
        return None;
    };
    let side = |e: &Expression| eval.eval_with(&sub_expr(condition, e), roots).0;
    Some((side(&op.lhs_expr), side(&op.rhs_expr)))
}

/// A part of `condition` as an expression of its own, in the same file.
fn sub_expr(condition: &Expr, e: &Expression) -> Expr {
    Expr {
        expr: e.clone(),
        range: condition.index.range(e.span()),
        refs: Vec::new(),
        index: condition.index.clone(),
    }
}

/// Applies `plan` to the file's state under its lock.
async fn apply(
    engine: &Engine,
    store: &Arc<dyn terrane_state::StateStore>,
    plan: &terrane_engine::Plan,
    snapshot: &terrane_state::Snapshot,
    opts: &terrane_engine::Options,
) -> Result<terrane_engine::ApplyResult, Vec<Diagnostic>> {
    let fail = |e: String| vec![Diagnostic::error("Failed to lock the test state", e, None)];
    let s = store.clone();
    let lock = blocking(move || {
        s.lock(
            "default",
            terrane_state::LockInfo::new("OperationTypeApply", ""),
        )
    })
    .await
    .map_err(fail)?
    .map_err(|e| fail(e.to_string()))?;
    let (result, lock) = engine.apply(plan, snapshot, lock, opts.clone()).await;
    blocking(move || lock.finish())
        .await
        .map_err(|e| {
            vec![Diagnostic::error(
                "Failed to record the test state",
                e,
                None,
            )]
        })?
        .map_err(|e| {
            vec![Diagnostic::error(
                "Failed to record the test state",
                e.to_string(),
                None,
            )]
        })?;
    Ok(result)
}

/// Whether the error `d` is a failed condition of the checkable object
/// `addr` (`var.x`, `output.y`, a resource, `check.z`).
fn concerns(d: &Diagnostic, addr: &str) -> bool {
    if let Some(name) = addr.strip_prefix("check.") {
        return d.detail.contains(&format!("in check {name:?}"));
    }
    let subject = format!("the condition for {addr}");
    d.detail.match_indices(&subject).any(|(i, _)| {
        let rest = &d.detail[i + subject.len()..];
        rest.starts_with(' ') || rest.starts_with('.') || rest.starts_with('[')
    })
}

/// Destroys what the file's runs created.
async fn teardown(
    engine: &Engine,
    base: &terrane_engine::Options,
    store: &Arc<dyn terrane_state::StateStore>,
    vars: &BTreeMap<String, Value>,
) -> Result<(), Vec<Diagnostic>> {
    let s = store.clone();
    let read = |e: String| vec![Diagnostic::error("Failed to read the test state", e, None)];
    let snapshot = blocking(move || s.snapshot("default"))
        .await
        .map_err(read)?
        .map_err(|e| read(e.to_string()))?;
    if snapshot.resources.is_empty() {
        return Ok(());
    }
    let mut opts = base.clone();
    opts.mode = PlanMode::Destroy;
    opts.vars = vars.clone();
    let plan = engine.plan(&snapshot, opts.clone()).await;
    if plan.has_errors() {
        return Err(plan.diagnostics);
    }
    let result = apply(engine, store, &plan, &snapshot, &opts).await?;
    if result.has_errors() {
        return Err(result.diagnostics);
    }
    Ok(())
}
