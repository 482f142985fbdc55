//! `terrane fmt`: Terraform's canonical layout for `.tf` and `.tfvars`
//! files, produced as Terraform's formatter produces it — from tokens.
//! Only the blanks between tokens change (see `layout`), plus the few
//! meaning-preserving rewrites of `rewrite`; string, template and heredoc
//! text and comments are single tokens and are never touched.
//!
//! Before a file is written its formatted text is parsed again and
//! compared with the original in meaning (`terrane_config::canon`): a
//! difference is refused with an error naming the file and the place. The
//! new text goes to a temporary file in the same directory (the original's
//! permissions) that is then renamed over the original, so a crash leaves
//! either the old file or the new one. `-check` lists unformatted files
//! and exits 3 without writing, and `-recursive` descends into
//! subdirectories, as Terraform's do.

mod layout;
mod rewrite;
mod tokens;

use crate::args::Args;
use crate::session::Ui;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The canonical layout of `src`, or why it cannot be formatted.
pub fn format_source(src: &str) -> Result<String, String> {
    let (toks, tail) =
        tokens::tokenize(src).map_err(|at| format!("cannot read the text at byte {at}"))?;
    let mut toks = rewrite::rewrite(toks);
    layout::layout(&mut toks);
    let mut out = String::with_capacity(src.len());
    for t in &toks {
        out.extend(std::iter::repeat_n(' ', t.spaces));
        out.push_str(&t.text);
    }
    // Blanks after the last token belong to no line and stay as they are
    // (Terraform's formatter keeps them too, and adds no final newline).
    out.push_str(tail);
    Ok(out)
}

/// Why `after` does not mean what `before` means, or None when it does:
/// both parse to the same syntax tree (positions, blanks, comments and
/// the formatter's rewrites aside) and, for a `.tf` file, load as the same
/// module with no diagnostic the original did not have.
pub fn meaning_changed(name: &str, before: &str, after: &str) -> Option<String> {
    let parse = |t: &str| terrane_hcl::parser::parse_body(t).map_err(|e| e.message().to_string());
    match (parse(before), parse(after)) {
        (Ok(a), Ok(b)) if terrane_config::canon::same_body(&a, &b) => {}
        (Ok(a), Ok(b)) => {
            return Some(format!(
                "{} would change",
                terrane_config::canon::body_differences(&a, &b).join(", ")
            ))
        }
        (_, Err(e)) => return Some(format!("the formatted text does not parse: {e}")),
        (Err(e), _) => return Some(format!("the file does not parse: {e}")),
    }
    if name.ends_with(".tfvars") {
        return None;
    }
    let (a, da) = terrane_config::parse_str(name, before);
    let (b, db) = terrane_config::parse_str(name, after);
    // The rewrites may cure a legacy type constraint's error, but nothing
    // may add a diagnostic.
    let mut before_summaries: Vec<&str> = da.iter().map(|d| d.summary.as_str()).collect();
    for d in &db {
        match before_summaries.iter().position(|s| *s == d.summary) {
            Some(i) => {
                before_summaries.remove(i);
            }
            None => {
                return Some(format!(
                    "it would load with a new diagnostic ({:?})",
                    d.summary
                ))
            }
        }
    }
    let diffs = terrane_config::canon::module_differences(&a, &b);
    if diffs.is_empty() {
        None
    } else {
        Some(format!("{} would change", diffs.join(", ")))
    }
}

/// Writes `text` over `path` through a temporary file in the same
/// directory, keeping the original's permissions, then renames it.
fn replace_file(path: &Path, text: &str) -> std::io::Result<()> {
    // A symbolic link keeps pointing at the file it names, now formatted.
    let path = &std::fs::canonicalize(path)?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let perms = std::fs::metadata(path)?.permissions();
    let mut tmp = tempfile::Builder::new()
        .prefix(".terrane-fmt-")
        .tempfile_in(dir)?;
    tmp.write_all(text.as_bytes())?;
    tmp.as_file().sync_all()?;
    tmp.as_file().set_permissions(perms)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

fn is_formattable(p: &Path) -> bool {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    p.is_file()
        && [".tf", ".tfvars", ".tftest.hcl"]
            .iter()
            .any(|e| name.ends_with(e))
}

/// What `fmt` does with each file it finds unformatted.
struct Mode {
    /// `-list` (default true): print the file's name.
    list: bool,
    /// `-write` (default true, false with `-check`): rewrite the file.
    write: bool,
    /// `-diff`: print a unified diff of the change.
    diff: bool,
}

/// A unified diff of `old` to `new` with `old/NAME` and `new/NAME` labels,
/// as Terraform's `fmt -diff` prints it.
fn unified_diff(name: &str, old: &str, new: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&format!("old/{name}"), &format!("new/{name}"))
        .to_string()
}

/// `fmt -`: standard input formatted to standard output (with `-check`,
/// only the exit code says whether it was formatted).
fn fmt_stdin(ui: &Ui, a: &Args) -> u8 {
    let mut text = String::new();
    if let Err(e) = std::io::Read::read_to_string(&mut std::io::stdin(), &mut text) {
        return ui.error("Failed to read standard input", e.to_string());
    }
    if let Err(e) = terrane_hcl::parser::parse_body(&text) {
        let loc = e.location();
        return ui.error(
            "Invalid syntax",
            format!("<stdin>:{}:{}: {}", loc.line(), loc.column(), e.message()),
        );
    }
    let out = match format_source(&text) {
        Ok(o) => o,
        Err(e) => return ui.error("Failed to format input", e.to_string()),
    };
    if let Some(why) = meaning_changed("<stdin>", &text, &out) {
        return ui.error(
            "Formatting would change the configuration",
            format!("<stdin>: {why}. Please report this as a terrane bug."),
        );
    }
    if a.has("check") {
        return if out == text { 0 } else { 3 };
    }
    if a.has("diff") {
        print!("{}", unified_diff("<stdin>", &text, &out));
    } else {
        print!("{out}");
    }
    0
}

/// The formattable files of `dir` in name order, then (with `recursive`)
/// those of its subdirectories, hidden ones (`.terraform`, `.terrane`)
/// left out.
fn collect(dir: &Path, recursive: bool, files: &mut Vec<PathBuf>) -> Result<(), String> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    entries.sort();
    files.extend(entries.iter().filter(|p| is_formattable(p)).cloned());
    if recursive {
        for d in entries.iter().filter(|p| {
            p.is_dir()
                && !p
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        }) {
            collect(d, true, files)?;
        }
    }
    Ok(())
}

/// `fmt [-check] [-recursive] [DIR|FILE]...`: the working directory when
/// none is given.
pub fn fmt(ui: &Ui, dir: &Path, a: &Args) -> u8 {
    if a.positional.iter().any(|p| p == "-") {
        if a.positional.len() > 1 {
            return ui.error(
                "Invalid arguments",
                "Standard input (-) cannot be formatted together with files or directories.",
            );
        }
        return fmt_stdin(ui, a);
    }
    let mode = Mode {
        list: !a.is_false("list"),
        write: !a.is_false("write") && !a.has("check"),
        diff: a.has("diff"),
    };
    let targets: Vec<PathBuf> = if a.positional.is_empty() {
        vec![dir.to_path_buf()]
    } else {
        a.positional.iter().map(PathBuf::from).collect()
    };
    let mut files = Vec::new();
    for t in &targets {
        if t.is_dir() {
            if let Err(e) = collect(t, a.has("recursive"), &mut files) {
                return ui.error("Failed to read directory", e);
            }
        } else if is_formattable(t) {
            files.push(t.clone());
        } else {
            return ui.error(
                "Invalid file",
                format!(
                    "{}: only .tf, .tfvars and .tftest.hcl files can be formatted.",
                    t.display()
                ),
            );
        }
    }
    let mut unformatted = false;
    for f in files {
        let shown = f
            .strip_prefix(dir)
            .ok()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(&f)
            .display()
            .to_string();
        let text = match std::fs::read_to_string(&f) {
            Ok(t) => t,
            Err(e) => return ui.error("Failed to read file", format!("{shown}: {e}")),
        };
        if let Err(e) = terrane_hcl::parser::parse_body(&text) {
            let loc = e.location();
            return ui.error(
                "Invalid syntax",
                format!("{shown}:{}:{}: {}", loc.line(), loc.column(), e.message()),
            );
        }
        let out = match format_source(&text) {
            Ok(o) => o,
            Err(e) => return ui.error("Failed to format file", format!("{shown}: {e}")),
        };
        if out == text {
            continue;
        }
        if let Some(why) = meaning_changed(&shown, &text, &out) {
            return ui.error("Formatting would change the configuration", format!("{shown}: {why}; the file was left unchanged. Please report this as a terrane bug."));
        }
        unformatted = true;
        if mode.list {
            println!("{shown}");
        }
        if mode.diff {
            print!("{}", unified_diff(&shown, &text, &out));
        }
        if mode.write {
            if let Err(e) = replace_file(&f, &out) {
                return ui.error("Failed to write file", format!("{shown}: {e}"));
            }
        }
    }
    if a.has("check") && unformatted {
        3
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(name: &str, input: &str, want: &str) {
        let got = format_source(input).expect("formats");
        assert_eq!(got, want, "{name}");
        assert_eq!(
            format_source(&got).expect("formats"),
            got,
            "{name}: formatting is not idempotent"
        );
        assert_eq!(meaning_changed("t.tf", input, &got), None, "{name}");
    }

    #[test]
    fn layout_cases() {
        check(
            "strings untouched",
            "a = [\"--port=8080\",\"x = y\"]\n",
            "a = [\"--port=8080\", \"x = y\"]\n",
        );
        check(
            "heredoc untouched",
            "h = <<EOT\nFOO=bar  \n  x\nEOT\n",
            "h = <<EOT\nFOO=bar  \n  x\nEOT\n",
        );
        check(
            "alignment",
            "resource \"a\" \"b\" {\n  x = 1\n  long_name=2\n\n  y = 3\n}\n",
            "resource \"a\" \"b\" {\n  x         = 1\n  long_name = 2\n\n  y = 3\n}\n",
        );
        check(
            "indent",
            "x {\n\ty {\n\t\ta = 1\n\t}\n}\n",
            "x {\n  y {\n    a = 1\n  }\n}\n",
        );
        check(
            "comments aligned",
            "a = 1 # one\nbb = 22 # two\n",
            "a  = 1  # one\nbb = 22 # two\n",
        );
        check(
            "labels quoted",
            "resource a b {}\n",
            "resource \"a\" \"b\" {}\n",
        );
        check(
            "unwrap",
            "a = \"${var.x}\"\nb = \"x${var.x}\"\n",
            "a = var.x\nb = \"x${var.x}\"\n",
        );
        check(
            "operators",
            "a = - 1\nb = !x\nc = x+1*2\nd = [for v in l: v if v>0]\n",
            "a = -1\nb = !x\nc = x + 1 * 2\nd = [for v in l : v if v > 0]\n",
        );
        check("no final newline added", "a = 1", "a = 1");
        check("blanks at the end kept", "a = 1  ", "a = 1  ");
        check("comment at the end", "a = 1 # c  ", "a = 1 # c  ");
    }

    /// Blanks between tokens never matter: every input of the differential
    /// table, with blanks (spaces, tabs) sprinkled between its tokens, comes
    /// out exactly as the input itself does.
    #[test]
    fn extra_blanks_between_tokens_change_nothing() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fmt");
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for e in std::fs::read_dir(&dir).expect("tests/fmt") {
            let path = e.expect("entry").path();
            let text = std::fs::read_to_string(&path).expect("input");
            let want = format_source(&text).expect("formats");
            let (toks, tail) = tokens::tokenize(&text).expect("tokenizes");
            for round in 0..20 {
                use tokens::Kind::*;
                let mut messy = String::new();
                let mut prev = None;
                let mut at = 0;
                for t in &toks {
                    // The blanks written before the token stay.
                    let gap = (0..)
                        .find(|k| text[at + k..].starts_with(&t.text))
                        .expect("token in order");
                    messy.push_str(&text[at..at + gap]);
                    at += gap + t.text.len();
                    // Blanks go only where they separate expression tokens;
                    // next to a template's text they would be text.
                    let literal = matches!(
                        prev,
                        None | Some(
                            OQuote | QuotedLit | StringLit | OHeredoc | CHeredoc | TemplateSeqEnd
                        )
                    ) || matches!(
                        t.kind,
                        QuotedLit
                            | StringLit
                            | CQuote
                            | CHeredoc
                            | TemplateInterp
                            | TemplateControl
                    );
                    prev = Some(t.kind);
                    if !literal && next() % 3 == 0 {
                        messy.push_str(["  ", "\t", " \t "][(next() % 3) as usize]);
                    }
                    messy.push_str(&t.text);
                }
                messy.push_str(tail);
                if terrane_hcl::parser::parse_body(&messy).is_err() {
                    continue;
                }
                let got = format_source(&messy)
                    .unwrap_or_else(|e| panic!("{} round {round}: {e}:\n{messy}", path.display()));
                assert_eq!(got, want, "{} round {round}:\n{messy}", path.display());
            }
        }
    }

    #[test]
    fn meaning_check_refuses_changed_text() {
        assert!(meaning_changed(
            "t.tf",
            "a = [\"--port=8080\"]\n",
            "a = [\"--port = 8080\"]\n"
        )
        .is_some());
        assert_eq!(
            meaning_changed("t.tfvars", "a = \"x\"\nb = 1\n", "a = \"y\"\nb = 1\n").as_deref(),
            Some("attribute a would change")
        );
        assert_eq!(
            meaning_changed(
                "t.tf",
                "locals {\n  a = <<EOT\nX=1\nEOT\n}\n",
                "locals {\n  a = <<EOT\nX = 1\nEOT\n}\n"
            )
            .as_deref(),
            Some("block locals would change")
        );
        assert_eq!(
            meaning_changed("t.tfvars", "a   =  \"x\"\n", "a = \"x\"\n"),
            None
        );
    }
}
