//! terrane-config: Terraform-style configuration (`*.tf` and `*.tf.json`)
//! read into a module model ([`Module`]) that keeps every source range,
//! with the references each expression makes, and a static reference
//! check ([`validate_references`]). Loading never fails outright: it returns the model
//! plus every diagnostic it found (syntax errors with file:line:column,
//! duplicate names, conflicting meta-arguments, malformed references).
//!
//! Syntax comes from terrane-hcl (re-exported as [`hcl`]); expressions are
//! kept unevaluated for the evaluator; variable type constraints are parsed
//! into terrane-value types. No I/O beyond reading the files of
//! [`load_module`]; not async; depends only on terrane-value.

pub mod canon;
mod constant;
mod decode;
mod decode_resource;
mod diag;
mod json;
mod load_checks;
mod model;
pub mod modules;
mod provisioner;
mod refs;
mod source;
pub mod statics;
mod testfiles;
mod typeexpr;
mod validate;
// Front-end recovery and override files (issue 14).
mod overrides;
mod recover;

pub use diag::{DiagId, Diagnostic, LineIndex, Pos, Severity, SourceRange};
pub use load_checks::mismatch as type_mismatch_message;
pub use model::*;
pub use refs::{calls_of, references, references_bound, Reference, Subject};
pub use terrane_hcl as hcl;
pub use testfiles::{
    check_test_file, check_test_files, run_module_key, test_file_names, test_run_modules, RunModule,
};
pub use typeexpr::{parse_type, TypeConstraint};
pub use validate::validate_references;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// Loads every `*.tf` and `*.tf.json` file of `dir` (sorted by name) into
/// one module. OpenTofu's `*.tofu` and `*.tofu.json` files are read too,
/// and shadow the `.tf`/`.tf.json` file of the same name. Override files
/// (`override.tf`, `*_override.tf` and their other forms) are merged into
/// the declarations of the others, in name order (see `overrides`).
pub fn load_module(dir: &Path) -> (Module, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    let mut files: Vec<_> = match std::fs::read_dir(dir) {
        Ok(rd) => rd
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| is_config_file(p))
            .collect(),
        Err(e) => {
            diags.push(Diagnostic::error(
                "Failed to read module directory",
                format!("{}: {e}", dir.display()),
                None,
            ));
            return (Module::default(), diags);
        }
    };
    files.sort();
    let mut texts = Vec::new();
    let mut unread = Vec::new();
    for f in files {
        let name = f.display().to_string();
        match std::fs::read_to_string(&f) {
            Ok(text) => texts.push((name, text)),
            Err(e) => {
                diags.push(Diagnostic::error(
                    "Failed to read file",
                    format!("{name}: {e}"),
                    None,
                ));
                unread.push(name);
            }
        }
    }
    let (mut module, d) = load_files(texts);
    diags.extend(d);
    module.files.extend(unread);
    (module, diags)
}

/// Loads one module from files given as (name, text), as [`load_module`]
/// reads a directory: `.tofu` files shadow the `.tf` of the same name,
/// override files are merged into the others (in name order), and a name
/// ending in `.json` is JSON syntax.
pub fn load_files(mut files: Vec<(String, String)>) -> (Module, Vec<Diagnostic>) {
    let mut module = Module::default();
    let mut diags = Vec::new();
    files.sort_by(|a, b| a.0.cmp(&b.0));
    let names: std::collections::HashSet<String> = files.iter().map(|f| f.0.clone()).collect();
    files.retain(|f| !shadowed_by_tofu(&f.0, &names));
    let (overrides, primary): (Vec<_>, Vec<_>) = files.into_iter().partition(|f| {
        let base = f.0.rsplit(['/', '\\']).next().unwrap_or_default();
        overrides::is_override(base)
    });
    let mut parsed = Vec::new();
    for (name, text) in &primary {
        module.files.push(name.clone());
        if let Some(p) = parse_file(name, text, &mut diags) {
            parsed.push(p);
        }
    }
    for (name, text) in &overrides {
        module.files.push(name.clone());
        if let Some(p) = parse_file(name, text, &mut diags) {
            overrides::merge(&mut parsed, p, &mut diags);
        }
    }
    for p in parsed {
        decode_into(&mut module, p, &mut diags);
    }
    (module, diags)
}

fn is_config_file(p: &Path) -> bool {
    let Some(name) = p.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    [".tf", ".tf.json", ".tofu", ".tofu.json"]
        .iter()
        .any(|ext| name.ends_with(ext))
        && !name.starts_with('.')
        && p.is_file()
}

/// `x.tf` when `x.tofu` exists, `x.tf.json` when `x.tofu.json` does
/// (OpenTofu reads the `.tofu` file instead).
fn shadowed_by_tofu(name: &str, all: &std::collections::HashSet<String>) -> bool {
    let tofu = if let Some(stem) = name.strip_suffix(".tf.json") {
        format!("{stem}.tofu.json")
    } else if let Some(stem) = name.strip_suffix(".tf") {
        format!("{stem}.tofu")
    } else {
        return false;
    };
    all.contains(&tofu)
}

/// Parses one file's text into a fresh module (tests, single files); a
/// name ending in `.json` is read as JSON configuration syntax.
pub fn parse_str(name: &str, text: &str) -> (Module, Vec<Diagnostic>) {
    let mut module = Module::default();
    let mut diags = Vec::new();
    parse_file_into(&mut module, name, text, &mut diags);
    (module, diags)
}

/// Parses one file's text into `module` (several files make one module).
pub fn parse_file_into(module: &mut Module, name: &str, text: &str, diags: &mut Vec<Diagnostic>) {
    module.files.push(name.to_string());
    if let Some(p) = parse_file(name, text, diags) {
        decode_into(module, p, diags);
    }
}

/// One file's syntax, not yet decoded.
fn parse_file(name: &str, text: &str, diags: &mut Vec<Diagnostic>) -> Option<overrides::Parsed> {
    let index = Arc::new(LineIndex::new(name, text));
    let json = name.ends_with(".json");
    let body = if json {
        match json::parse(text, &index) {
            Ok(v) => json::Converter {
                text,
                index: &index,
                diags,
            }
            .root(&v),
            Err(d) => {
                diags.push(d);
                return None;
            }
        }
    } else {
        let b = parse_native(text, &index, diags)?;
        source::from_hcl(b, &index, 0, diags)
    };
    Some(overrides::Parsed { index, body, json })
}

fn decode_into(module: &mut Module, p: overrides::Parsed, diags: &mut Vec<Diagnostic>) {
    let mut cx = decode::Cx {
        index: &p.index,
        diags,
        bound: Vec::new(),
        json: p.json,
    };
    cx.file(module, p.body);
}

/// Parses a native file with terrane-hcl, in time linear in its size.
///
/// A file that does not parse is diagnosed in Terraform's words, chosen by
/// the parser's message. An argument set twice is
/// reported as Terraform reports it and the repeated argument is blanked
/// out so the rest of the file is still read. An unclosed block is
/// reported at its opening brace. Any other syntax error is reported once,
/// at its position, and the top-level block holding it is blanked out so
/// the file's other blocks are still read, as Terraform's parser recovers.
/// Blanking and folding keep every byte offset.
pub(crate) fn parse_native(
    text: &str,
    index: &LineIndex,
    diags: &mut Vec<Diagnostic>,
) -> Option<terrane_hcl::structure::Body> {
    let mut text = std::borrow::Cow::Borrowed(text);
    let mut folded = false;
    for _ in 0..64 {
        let e = match terrane_hcl::parser::parse_body(&text) {
            // The parser takes a newline inside a quoted string (`terrane
            // console` evaluates such templates); HCL does not in a file.
            Ok(_) if multiline_string(&text, index, diags) => return None,
            Ok(b) => return Some(b),
            Err(e) => e,
        };
        let mut off = e.offset().min(text.len());
        while !text.is_char_boundary(off) {
            off -= 1;
        }
        if e.message().contains("redefined attribute") {
            let rest = &text[off..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '-')
                .collect();
            if !name.is_empty() {
                diags.push(Diagnostic::error(
                    "Attribute redefined",
                    format!("The argument {name:?} was already set. Each argument may be set only once."),
                    Some(index.at_offset(off)),
                ));
                let end = rest.find('\n').map(|i| off + i).unwrap_or(text.len());
                text = std::borrow::Cow::Owned(recover::blank(&text, off..end));
                continue;
            }
        }
        if !folded {
            folded = true;
            if let Some(f) = recover::fold_newlines(&text) {
                text = std::borrow::Cow::Owned(f);
                continue;
            }
        }
        if text[off..].trim().is_empty() {
            if let Some(open) = unclosed_brace(&text) {
                diags.push(Diagnostic::error(
                    "Unclosed configuration block",
                    "There is no closing brace for this block before the end of the file. This may be caused by incorrect brace nesting elsewhere in this file.",
                    Some(index.at_offset(open)),
                ));
                return None;
            }
        }
        if multiline_string(&text, index, diags) {
            return None;
        }
        // An item that starts with a name but is neither an argument nor
        // a block (`a 1`), or does not start with a name at all.
        if e.message().starts_with("invalid structure")
            || e.message().starts_with("invalid block body")
        {
            let (range, detail) = match recover::item_name_before(&text, off) {
                Some(r) => (index.range(Some(r)), "An argument or block definition is required here. To set an argument, use the equals sign \"=\" to introduce the argument value."),
                None => (Some(token_range(&text, off, index)), "An argument or block definition is required here."),
            };
            diags.push(Diagnostic::error(
                "Argument or block definition required",
                detail,
                range,
            ));
            let item = recover::top_level_items(&text)
                .into_iter()
                .find(|r| r.contains(&off) || r.end == off)?;
            text = std::borrow::Cow::Owned(recover::blank(&text, item));
            continue;
        }
        let (summary, detail) = syntax_words(e.message(), &text[..off]);
        // Terraform's range is the token at fault (a newline included).
        let range = if summary == "Invalid syntax" {
            index.at_offset(off)
        } else {
            token_range(&text, off, index)
        };
        diags.push(Diagnostic::error(summary, detail, Some(range)));
        let item = recover::top_level_items(&text)
            .into_iter()
            .find(|r| r.contains(&off) || r.end == off)?;
        text = std::borrow::Cow::Owned(recover::blank(&text, item));
    }
    None
}

/// A quoted string split over lines: HCL's scanner reports every newline
/// up to the next quote, and the string as unterminated; nothing after it
/// in the file is read. Whether there was one.
fn multiline_string(text: &str, index: &LineIndex, diags: &mut Vec<Diagnostic>) -> bool {
    let Some(m) = recover::multiline_string(text) else {
        return false;
    };
    for &n in &m.newlines {
        diags.push(Diagnostic::error(
            "Invalid multi-line string",
            "Quoted strings may not be split over multiple lines. To produce a multi-line string, either use the \\n escape to represent a newline character or use the \"heredoc\" multi-line template syntax.",
            index.range(Some(n..n + 1)),
        ));
    }
    let at = m.newlines.first().copied().unwrap_or(text.len());
    let mut range = index.at_offset(at);
    range.end = index.pos(at + 1);
    if range.end.byte == range.start.byte {
        // At the end of the file: one column past it.
        range.end.col += 1;
        range.end.byte += 1;
    }
    diags.push(Diagnostic::error(
        "Unterminated template string",
        "No closing marker was found for the string.",
        Some(range),
    ));
    true
}

/// The range of the token at `off`: a name, or one character (a newline
/// included).
fn token_range(text: &str, off: usize, index: &LineIndex) -> SourceRange {
    let rest = &text[off..];
    let word = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let len = match word {
        0 => rest.chars().next().map_or(0, char::len_utf8),
        n => n,
    };
    index
        .range(Some(off..off + len))
        .unwrap_or_else(|| index.at_offset(off))
}

/// A parse error in Terraform's words (HCL's summary and detail) where
/// the parser's message identifies the case; `before` is the text up to
/// the error. Anything else keeps the parser's message.
fn syntax_words(message: &str, before: &str) -> (&'static str, String) {
    let words = |s: &'static str, d: &str| (s, d.to_string());
    if message.starts_with("invalid expression") {
        return words(
            "Invalid expression",
            "Expected the start of an expression, but found an invalid expression token.",
        );
    }
    match message {
        "expected newline or eof" => words(
            "Missing newline after argument",
            "An argument definition must end with a newline.",
        ),
        "expected `]`" => words(
            "Missing item separator",
            "Expected a comma to mark the beginning of the next item.",
        ),
        // A colon is wanted by a conditional (after its true result) or
        // by a `for` (after its collection): the nearer one is waiting.
        "expected `:`" if before.rfind('?') > before.rfind("for ") => words(
            "Missing false expression in conditional",
            "The conditional operator (...?...:...) requires a false expression, delimited by a colon.",
        ),
        "expected `:`" => words(
            "Invalid 'for' expression",
            "For expression requires a colon after the collection expression.",
        ),
        "invalid object item; expected `}`, `,` or newline" => words(
            "Missing attribute separator",
            "Expected a newline or comma to mark the beginning of the next attribute.",
        ),
        _ => ("Invalid syntax", message.to_string()),
    }
}

/// The outermost `{` left open at the end of `text` (strings, comments
/// and interpolations accounted for roughly; heredocs not).
fn unclosed_brace(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    let mut stack = Vec::new();
    let mut i = 0;
    let mut in_string = false;
    while i < b.len() {
        let c = b[i];
        if in_string {
            match c {
                b'\\' => i += 1,
                b'"' => in_string = false,
                b'\n' => in_string = false,
                _ => {}
            }
        } else {
            match c {
                b'"' => in_string = true,
                b'#' => i = text[i..].find('\n').map(|n| i + n).unwrap_or(b.len()),
                b'/' if b.get(i + 1) == Some(&b'/') => {
                    i = text[i..].find('\n').map(|n| i + n).unwrap_or(b.len())
                }
                b'/' if b.get(i + 1) == Some(&b'*') => {
                    i = text[i + 2..]
                        .find("*/")
                        .map(|n| i + n + 3)
                        .unwrap_or(b.len())
                }
                b'{' => stack.push(i),
                b'}' => {
                    stack.pop();
                }
                _ => {}
            }
        }
        i += 1;
    }
    stack.first().copied()
}

/// One error per `ephemeral` block of `config` and its children: they load
/// and validate, but the engine does not run them yet (plan and apply
/// refuse them at their block).
pub fn ephemeral_not_supported(config: &Config) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = config
        .module
        .ephemeral_resources
        .iter()
        .map(|r| {
            Diagnostic::error(
                "Ephemeral resources are not yet supported",
                format!("terrane loads and validates ephemeral.{}.{}, but cannot plan or apply ephemeral resources yet.", r.ty, r.name),
                r.range.clone(),
            )
        })
        .collect();
    for child in config.children.values() {
        out.extend(ephemeral_not_supported(child));
    }
    out
}

/// A module and the modules it calls, loaded from local sources.
#[derive(Clone, Debug, Default)]
pub struct Config {
    pub module: Module,
    /// Directory of this module.
    pub dir: std::path::PathBuf,
    /// Child modules by call name.
    pub children: BTreeMap<String, Config>,
}

/// Loads the root module in `dir` and, recursively, every module it calls:
/// local sources (`./`, `../`) relative to the calling module, remote ones
/// where `init` installed them, as the module manifest
/// `<data dir>/modules/modules.json` records (the data directory is
/// `TF_DATA_DIR`, else `.terraform`, relative to `dir`). A remote module
/// not installed, installed from another source, or calls that would
/// recurse into a module already being loaded are diagnosed.
/// `source` and `version` arguments given as expressions are evaluated
/// with `statics` ([`statics`]).
pub fn load_config(dir: &Path, statics: &dyn statics::Statics) -> (Config, Vec<Diagnostic>) {
    let data_dir = match std::env::var_os("TF_DATA_DIR").filter(|d| !d.is_empty()) {
        Some(d) => dir.join(d),
        None => dir.join(".terraform"),
    };
    let mut diags = Vec::new();
    let manifest = match modules::ModuleManifest::load(&modules::manifest_path(&data_dir)) {
        Ok(m) => m,
        Err(e) => {
            diags.push(Diagnostic::error(
                "Failed to read module manifest",
                format!("{e}. Run \"terrane init\" to install all modules required by this configuration."),
                None,
            ));
            None
        }
    };
    let mut stack = Vec::new();
    let mut walk = Walk {
        root: dir,
        manifest: manifest.as_ref(),
        stack: &mut stack,
        diags: &mut diags,
        statics,
    };
    let config = load_tree(dir, "", &mut walk, None);
    (config, diags)
}

/// What [`load_tree`] carries down the module tree.
struct Walk<'a> {
    root: &'a Path,
    manifest: Option<&'a modules::ModuleManifest>,
    stack: &'a mut Vec<std::path::PathBuf>,
    diags: &'a mut Vec<Diagnostic>,
    statics: &'a dyn statics::Statics,
}

/// The module that calls the one being loaded: its directory, model and
/// const inputs, and the call.
type Caller<'a> = (&'a Path, &'a Module, &'a statics::Inputs, &'a ModuleCall);

fn load_tree(dir: &Path, key: &str, w: &mut Walk<'_>, caller: Option<Caller<'_>>) -> Config {
    let canonical = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let (mut module, d) = load_module(dir);
    // As Terraform: a module with errors is not built further, so its
    // calls are not followed (their errors would only add noise).
    let broken = d.iter().any(Diagnostic::is_error);
    w.diags.extend(d);
    // A call whose source cannot be known is reported and not followed;
    // the others still are, as Terraform's init does.
    let inputs = if broken {
        statics::Inputs::new()
    } else {
        let (inputs, mut d) = match caller {
            None => statics::root_inputs(w.statics, &module),
            Some((cdir, cmod, cin, call)) => {
                statics::child_inputs(w.statics, cdir, cmod, cin, call, &module)
            }
        };
        d.extend(statics::resolve_calls(w.statics, dir, &mut module, &inputs));
        w.diags.extend(d);
        inputs
    };
    w.stack.push(canonical);
    let mut children = BTreeMap::new();
    for (name, call) in module.module_calls.iter().filter(|_| !broken) {
        let Some(source) = &call.source else { continue };
        let child_key = if key.is_empty() {
            name.clone()
        } else {
            format!("{key}.{name}")
        };
        let not_installed = |detail: &str| {
            Diagnostic::error(
                if detail.starts_with("The source") {
                    "Module source has changed"
                } else {
                    "Module not installed"
                },
                format!("Module {child_key:?} ({source}): {detail} Run \"terrane init\" to install all modules required by this configuration."),
                // A changed source is shown where it is given.
                if detail.starts_with("The source") {
                    call.source_range.clone().or_else(|| call.range.clone())
                } else {
                    call.range.clone()
                },
            )
        };
        let child_dir = if modules::is_local_source(source) {
            // A local module needs no installing, but one that init
            // recorded from another source (a const variable changed
            // since) is stale, as Terraform finds it.
            if let Some(r) = w.manifest.and_then(|m| m.get(&child_key)) {
                if r.source != *source {
                    w.diags.push(not_installed(
                        "The source address was changed since this module was installed.",
                    ));
                    continue;
                }
            }
            dir.join(source)
        } else {
            match w.manifest.and_then(|m| m.get(&child_key)) {
                None => {
                    w.diags
                        .push(not_installed("This module is not yet installed."));
                    continue;
                }
                Some(r) if r.source != modules::normalize_source(source) => {
                    w.diags.push(not_installed(
                        "The source address was changed since this module was installed.",
                    ));
                    continue;
                }
                Some(r) => w.root.join(&r.dir),
            }
        };
        let child_canonical = child_dir
            .canonicalize()
            .unwrap_or_else(|_| child_dir.clone());
        if !child_dir.is_dir() {
            w.diags.push(Diagnostic::error(
                "Module not found",
                format!(
                    "Module {name:?}: the directory {} does not exist.",
                    child_dir.display()
                ),
                call.range.clone(),
            ));
            continue;
        }
        if w.stack.contains(&child_canonical) {
            w.diags.push(Diagnostic::error("Module recursion", format!("Module {name:?} calls {source:?}, which is already being loaded: modules cannot call themselves."), call.range.clone()));
            continue;
        }
        let caller = (dir, &module, &inputs, call);
        children.insert(
            name.clone(),
            load_tree(&child_dir, &child_key, w, Some(caller)),
        );
    }
    w.stack.pop();
    Config {
        module,
        dir: dir.to_path_buf(),
        children,
    }
}
