//! Human output in Terraform's shape: the plan (`+`, `~`, `-/+`, `+/-`,
//! `-`, `<=`, `(known after apply)`, `(sensitive value)`, `# forces
//! replacement`), the summary lines and diagnostics. Sensitive values are
//! never printed.

use crate::diff::{self, Differ, Opts};
use crate::text::{hcl_value, key_text, Style};
use std::fmt::Write;
use terrane_config::{Diagnostic, Severity};
use terrane_engine::{Action, Change, Plan, PlanMode};
use terrane_value::{Path, Type, Value};

/// An action's symbol, three columns wide as Terraform aligns them.
fn symbol(style: &Style, a: Action) -> &'static str {
    use crate::diff::Act;
    // Coloured as `Style::green`, `red`, `yellow` and `cyan` colour text;
    // the one-column symbols are the attribute lines' own.
    match (a, style.color) {
        (Action::Create, _) => Act::Create.symbol(style),
        (Action::Update, _) => Act::Update.symbol(style),
        (Action::Delete, _) => Act::Delete.symbol(style),
        (Action::NoOp, _) => Act::NoOp.symbol(style),
        (Action::DeleteThenCreate, false) => "-/+",
        (Action::DeleteThenCreate, true) => "\x1b[31m-\x1b[0m/\x1b[32m+\x1b[0m",
        (Action::CreateThenDelete, false) => "+/-",
        (Action::CreateThenDelete, true) => "\x1b[32m+\x1b[0m/\x1b[31m-\x1b[0m",
        (Action::Read, false) => " <=",
        (Action::Read, true) => " \x1b[36m<=\x1b[0m",
        // Terraform prints a forgotten object one column to the left.
        (Action::Forget, _) => " .",
    }
}

/// A resource's `#` lines: what happens to it and why (`moved_from`: the
/// address a `moved` block took it from).
fn headline(c: &Change, moved_from: Option<&terrane_state::InstanceAddr>) -> String {
    use terrane_engine::Reason;
    let addr = match &c.deposed {
        Some(k) => format!("{} (deposed object {k})", c.addr),
        None => c.addr.to_string(),
    };
    let mut text = match c.action {
        Action::Create => format!("# {addr} will be created"),
        Action::Update => format!("# {addr} will be updated in-place"),
        Action::Delete => match &c.reason {
            Some(Reason::NoResourceConfig) => format!("# {addr} will be destroyed\n  # (because {} is not in configuration)", terrane_engine::config_addr(&c.addr)),
            Some(Reason::NoModule) => format!("# {addr} will be destroyed\n  # (because {} is not in configuration)", c.addr.resource.module),
            Some(Reason::CountIndex) => format!("# {addr} will be destroyed\n  # (because index {} is out of range for count)", c.addr.key),
            Some(Reason::EachKey) => format!("# {addr} will be destroyed\n  # (because key {} is not in for_each map)", c.addr.key),
            _ if c.deposed.is_some() => format!("# {addr} will be destroyed\n  # (left over from a partially-failed replacement of this instance)"),
            _ => format!("# {addr} will be destroyed"),
        },
        Action::DeleteThenCreate | Action::CreateThenDelete => match &c.reason {
            Some(Reason::Tainted) => format!("# {addr} is tainted, so must be replaced"),
            Some(Reason::ReplaceByRequest) => format!("# {addr} will be replaced, as requested"),
            Some(Reason::ReplaceByTriggers) => format!("# {addr} will be replaced due to changes in replace_triggered_by"),
            _ => format!("# {addr} must be replaced"),
        },
        Action::Read => match &c.reason {
            Some(Reason::ReadBecauseDependencyPending) => format!("# {addr} will be read during apply\n  # (depends on a resource or a module with changes pending)"),
            _ => format!("# {addr} will be read during apply\n  # (config refers to values not yet known)"),
        },
        Action::Forget => format!("# {addr} will no longer be managed by terrane, but will not be destroyed\n # (destroy = false is set in the configuration)"),
        Action::NoOp if c.importing.is_some() => format!("# {addr} will be imported"),
        Action::NoOp => match moved_from {
            Some(from) => format!("# {from} has moved to {addr}"),
            None => format!("# {addr}"),
        },
    };
    if c.action != Action::NoOp {
        if let Some(from) = moved_from {
            text.push_str(&format!("\n  # (moved from {from})"));
        }
        if let Some(id) = &c.importing {
            text.push_str(&format!(
                "\n  # (imported from {})",
                terrane_value::render::quote(id)
            ));
        }
    }
    text
}

/// The whole plan, as `terraform plan` prints it.
pub fn plan(style: &Style, p: &Plan) -> String {
    let mut text = Vec::new();
    // Writing to memory cannot fail, and every piece written is a `str`.
    let _ = write_plan(&mut text, style, p);
    String::from_utf8(text).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Writes the whole plan to `w` as [`plan`] renders it, the resource
/// blocks as they are rendered: a large plan's text is never held whole.
pub fn write_plan(w: &mut dyn std::io::Write, style: &Style, p: &Plan) -> std::io::Result<()> {
    let mut out = String::new();
    if !p.drift.is_empty() && p.mode == PlanMode::RefreshOnly {
        out.push_str(&style.bold("\nNote: Objects have changed outside of terrane\n\n"));
        out.push_str(&format!("{}\n\n", wrap("terrane detected the following changes made outside of terrane since the last \"terrane apply\" which may have affected this plan:")));
        for c in &p.drift {
            resource(&mut out, style, c, true, None);
        }
    }
    let moved_from = |c: &Change| {
        if c.deposed.is_none() {
            p.moved
                .iter()
                .find(|(_, to)| *to == c.addr)
                .map(|(from, _)| from)
        } else {
            None
        }
    };
    // Changes, imports and moves, in Terraform's order: shallower modules
    // first, then by module, data sources before managed resources, type,
    // name and key.
    let mut visible: Vec<&Change> = p
        .changes
        .iter()
        .filter(|c| c.action != Action::NoOp || c.importing.is_some() || moved_from(c).is_some())
        .collect();
    visible.sort_by(|a, b| listing_key(a).cmp(&listing_key(b)));
    let outputs_changed = p.outputs.iter().any(|(_, o)| output_changed(o));
    // A plan that failed shows what it planned before the failure, and
    // never "No changes".
    let errored = p.has_errors();
    if visible.is_empty() && errored {
        return w.write_all(out.as_bytes());
    }
    let deferred = deferred_section(style, p);
    if visible.is_empty() && !deferred.is_empty() && !outputs_changed {
        // Nothing to do now, but the plan is partial: never "No changes".
        out.push_str(&deferred);
        return w.write_all(out.as_bytes());
    }
    if visible.is_empty() {
        if p.mode == PlanMode::RefreshOnly && !p.drift.is_empty() {
            out.push_str(&format!("\n{}\n", wrap("This is a refresh-only plan, so terrane will not take any actions to undo these. If you were expecting these changes then you can apply this plan to record the updated values in the terrane state without changing any remote objects.")));
            return w.write_all(out.as_bytes());
        }
        if !outputs_changed {
            out.push_str(&format!(
                "\n{}\n\n",
                style.bold(
                    &style.green("No changes. Your infrastructure matches the configuration.")
                )
            ));
            out.push_str(&format!("{}\n", wrap("terrane has compared your real infrastructure against your configuration and found no differences, so no changes are needed.")));
            return w.write_all(out.as_bytes());
        }
    }
    if !visible.is_empty() {
        // The legend in Terraform's order.
        let order = [
            Action::Create,
            Action::Update,
            Action::Delete,
            Action::DeleteThenCreate,
            Action::CreateThenDelete,
            Action::Read,
        ];
        let kinds: Vec<Action> = order
            .into_iter()
            .filter(|k| visible.iter().any(|c| c.action == *k))
            .collect();
        if !kinds.is_empty() {
            out.push_str(&format!("\n{}\n", wrap("terrane used the selected providers to generate the following execution plan. Resource actions are indicated with the following symbols:")));
        }
        for k in &kinds {
            let label = match k {
                Action::Create => "create",
                Action::Update => "update in-place",
                Action::Delete => "destroy",
                Action::DeleteThenCreate => "destroy and then create replacement",
                Action::CreateThenDelete => "create replacement and then destroy",
                Action::Read => "read (data resources)",
                _ => continue,
            };
            out.push_str(&format!("{} {label}\n", symbol(style, *k)));
        }
        out.push_str(if errored {
            "\nterrane planned the following actions, but then encountered a problem:\n\n"
        } else {
            "\nterrane will perform the following actions:\n\n"
        });
        let blocks: Vec<(&Change, Option<&terrane_state::InstanceAddr>)> =
            visible.iter().map(|c| (*c, moved_from(c))).collect();
        w.write_all(out.as_bytes())?;
        out.clear();
        resources(w, style, &blocks)?;
        let (add, change, destroy) = p.counts();
        let imports = p.changes.iter().filter(|c| c.importing.is_some()).count();
        let import_part = if imports > 0 {
            format!("{imports} to import, ")
        } else {
            String::new()
        };
        // Terraform 1.15 counts no forgotten objects in this line.
        out.push_str(&format!(
            "{} {import_part}{add} to add, {change} to change, {destroy} to destroy.\n",
            style.bold("Plan:")
        ));
    }
    if !visible.is_empty() || outputs_changed {
        out.push_str(&deferred);
    }
    if outputs_changed {
        out.push_str("\nChanges to Outputs:\n");
        out.push_str(&output_changes(style, &p.outputs));
        if visible.is_empty() {
            out.push_str(&format!("\n{}\n", wrap("You can apply this plan to save these new output values to the terrane state, without changing any real infrastructure.")));
        }
    }
    w.write_all(out.as_bytes())
}

/// The resource blocks in one batch of rendering: below this a thread's
/// start costs more than rendering the blocks it would take.
const BLOCKS_PER_THREAD: usize = 512;

/// Writes the resource blocks of a plan's changes, in order (each with
/// the address it moved from, if any). Blocks are independent of each
/// other, so a large plan's are rendered on every core: batches of
/// [`BLOCKS_PER_THREAD`] blocks go to the threads in turn, and this thread
/// writes them in order, rendering its own share between. A thread runs at
/// most two batches ahead of the writer, so the text in memory stays a few
/// batches however large the plan; the text is the same as from one thread.
fn resources(
    w: &mut dyn std::io::Write,
    style: &Style,
    blocks: &[(&Change, Option<&terrane_state::InstanceAddr>)],
) -> std::io::Result<()> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(blocks.len() / BLOCKS_PER_THREAD);
    resources_on(w, style, blocks, threads)
}

/// [`resources`] on `threads` threads (this one included).
fn resources_on(
    w: &mut dyn std::io::Write,
    style: &Style,
    blocks: &[(&Change, Option<&terrane_state::InstanceAddr>)],
    threads: usize,
) -> std::io::Result<()> {
    let render = |batch: &[(&Change, Option<&terrane_state::InstanceAddr>)], text: &mut String| {
        for (c, from) in batch {
            resource(text, style, c, false, *from);
        }
    };
    let batches: Vec<_> = blocks.chunks(BLOCKS_PER_THREAD).collect();
    let mut text = String::new();
    if threads <= 1 {
        for batch in &batches {
            text.clear();
            render(batch, &mut text);
            w.write_all(text.as_bytes())?;
        }
        return Ok(());
    }
    std::thread::scope(|scope| {
        // Helper t renders batches t, t + threads, ...; this thread the
        // batches between.
        let helpers: Vec<_> = (1..threads)
            .map(|t| {
                let (send, receive) = std::sync::mpsc::sync_channel::<String>(2);
                let batches = &batches;
                scope.spawn(move || {
                    for batch in batches.iter().skip(t).step_by(threads) {
                        let mut text = String::new();
                        render(batch, &mut text);
                        // The writer stopped (a write failed): so do we.
                        if send.send(text).is_err() {
                            return;
                        }
                    }
                });
                receive
            })
            .collect();
        for (i, batch) in batches.iter().enumerate() {
            match i % threads {
                0 => {
                    text.clear();
                    render(batch, &mut text);
                    w.write_all(text.as_bytes())?;
                }
                t => match helpers[t - 1].recv() {
                    Ok(rendered) => w.write_all(rendered.as_bytes())?,
                    // A helper that ended early panicked: the scope
                    // passes its panic on when it joins it.
                    Err(_) => break,
                },
            }
        }
        Ok(())
    })
}

/// The deferred part of a partial plan ([`terrane_engine::Deferred`]):
/// what waits for a later plan and why; empty for a complete plan.
fn deferred_section(style: &Style, p: &Plan) -> String {
    if p.deferred.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "\n{}\n{}\n\n",
        style.bold("Deferred changes:"),
        wrap("This plan is partial: terrane cannot plan the following yet. Apply this plan, then plan again to plan them.")
    );
    for d in &p.deferred {
        out.push_str(&format!(
            "  {} {} ({}): {}\n",
            style.bold("~>"),
            d.addr,
            d.reason.json(),
            d.detail
        ));
    }
    out
}

/// A paragraph word-wrapped as Terraform wraps its messages when the
/// output is not a terminal (78 columns, lines shorter than that).
pub fn wrap(text: &str) -> String {
    let mut out = String::new();
    let mut len = 0;
    for word in text.split(' ') {
        if len > 0 && len + 1 + word.len() >= 78 {
            out.push('\n');
            len = 0;
        } else if len > 0 {
            out.push(' ');
            len += 1;
        }
        out.push_str(word);
        len += word.chars().count();
    }
    out
}

/// Module depth, module, managed (data sources first), type, name, key,
/// deposed key.
type ListingKey<'a> = (
    usize,
    &'a terrane_state::ModulePath,
    bool,
    &'a str,
    &'a str,
    &'a terrane_state::InstanceKey,
    &'a Option<String>,
);

/// Where a change is listed in the plan, as a borrowed sort key (no copies
/// per comparison of a large plan).
fn listing_key(c: &Change) -> ListingKey<'_> {
    let r = &c.addr.resource;
    (
        r.module.0.len(),
        &r.module,
        r.mode != terrane_state::Mode::Data,
        &r.ty,
        &r.name,
        &c.addr.key,
        &c.deposed,
    )
}

/// The changed root outputs, names aligned, each diffed as a dynamic
/// value (sensitive ones as `(sensitive value)`).
fn output_changes(
    style: &Style,
    outputs: &std::collections::BTreeMap<String, terrane_engine::OutputChange>,
) -> String {
    let mark = |v: &Value, sensitive: bool| {
        if sensitive {
            v.clone().mark_sensitive()
        } else {
            v.clone()
        }
    };
    let differ = Differ {
        requires_replace: &[],
    };
    let changed: Vec<(String, diff::Diff)> = outputs
        .iter()
        .filter(|(_, o)| output_changed(o))
        .map(|(name, o)| {
            let before = o
                .before
                .as_ref()
                .map_or_else(|| Value::null(Type::Dynamic), |b| mark(b, o.sensitive));
            // A removed output is planned as a dynamic null.
            let removed = o.after.is_null() && o.after.ty().is_dynamic();
            let after = if removed {
                Value::null(Type::Dynamic)
            } else {
                mark(&o.after, o.sensitive)
            };
            (
                key_text(name).into_owned(),
                differ.value(
                    &before,
                    &after,
                    &Type::Dynamic,
                    &Path::root().attr(name.clone()),
                ),
            )
        })
        .collect();
    // Names align over every root output, unchanged ones included, as
    // Terraform aligns them.
    let width = outputs.keys().map(|k| key_text(k).len()).max().unwrap_or(0);
    let mut out = String::new();
    for (k, d) in &changed {
        let _ = writeln!(
            out,
            "{} {k:<width$} = {}",
            d.act.symbol(style),
            d.render(style, 0, Opts::default())
        );
    }
    out
}

fn output_changed(o: &terrane_engine::OutputChange) -> bool {
    match &o.before {
        None => true,
        // The comparison ignores sensitive marks.
        Some(b) => !b.eq_ignoring_refinements(&o.after) || !o.after.is_wholly_known(),
    }
}

/// One resource block of the plan, appended to `out`.
fn resource(
    out: &mut String,
    style: &Style,
    c: &Change,
    drift: bool,
    moved_from: Option<&terrane_state::InstanceAddr>,
) {
    // Drift says what happened: deleted, or changed.
    let head = match (drift, c.action) {
        (true, Action::Delete) => format!("# {} has been deleted", c.addr),
        (true, _) => format!("# {} has changed", c.addr),
        (false, _) => headline(c, moved_from),
    };
    let indent = if c.action == Action::Forget && !drift {
        " "
    } else {
        "  "
    };
    let _ = writeln!(out, "{indent}{}", style.bold(&head));
    let (mode, ty, name) = (
        &c.addr.resource.mode,
        &c.addr.resource.ty,
        &c.addr.resource.name,
    );
    let kw = if *mode == terrane_state::Mode::Data {
        "data"
    } else {
        "resource"
    };
    let sym = if drift && c.action != Action::Delete {
        symbol(style, Action::Update)
    } else {
        symbol(style, c.action)
    };
    // A forgotten object shows as it stands, unchanged.
    let after = if c.action == Action::Forget {
        &c.before
    } else {
        &c.after
    };
    let differ = Differ {
        requires_replace: &c.requires_replace,
    };
    let body = match &c.schema {
        Some(schema) => differ.schema_block(&c.before, after, schema),
        None => differ.block(&c.before, after, &c.ty),
    };
    // An import shows the whole imported object.
    let opts = Opts {
        show_unchanged: c.importing.is_some(),
        ..Opts::default()
    };
    let _ = writeln!(
        out,
        "{sym} {kw} \"{ty}\" \"{name}\" {}\n",
        body.render(style, 0, opts)
    );
}

/// Diagnostics in the order Terraform prints them (a stable sort):
/// warnings before errors, those without a source range first, then by
/// file (fewer directories first, then by name) and position.
pub fn terraform_order(ds: &[Diagnostic]) -> Vec<&Diagnostic> {
    let mut out: Vec<&Diagnostic> = ds.iter().collect();
    out.sort_by(|a, b| {
        let sev = |d: &Diagnostic| d.severity == Severity::Error;
        sev(a)
            .cmp(&sev(b))
            .then_with(|| match (&a.range, &b.range) {
                (None, None) => std::cmp::Ordering::Equal,
                (None, Some(_)) => std::cmp::Ordering::Less,
                (Some(_), None) => std::cmp::Ordering::Greater,
                (Some(x), Some(y)) => {
                    let file = |r: &terrane_config::SourceRange| {
                        let f = r.file.strip_prefix("./").unwrap_or(&r.file).to_string();
                        (f.matches('/').count(), f)
                    };
                    file(x)
                        .cmp(&file(y))
                        .then(x.start.byte.cmp(&y.start.byte))
                        .then(x.end.byte.cmp(&y.end.byte))
                }
            })
    });
    out
}

/// The width Terraform assumes for a stream that is not a terminal, and
/// for one whose size it cannot tell.
pub const DEFAULT_COLUMNS: usize = 78;

/// `text` broken into lines of at most `limit` characters at white space,
/// as Terraform's word wrapping breaks a diagnostic's detail: a run of
/// blanks at a break is dropped, a word longer than the limit stays whole
/// on its own line, line breaks already there are kept.
pub fn word_wrap(text: &str, limit: usize) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let (mut word, mut space) = (String::new(), String::new());
    let (mut word_len, mut space_len, mut current) = (0usize, 0usize, 0usize);
    for c in text.chars() {
        if c == '\n' {
            out.push_str(&space);
            out.push_str(&word);
            out.push('\n');
            (word, space) = (String::new(), String::new());
            (word_len, space_len, current) = (0, 0, 0);
        } else if c.is_whitespace() && c != '\u{a0}' {
            if space.is_empty() || !word.is_empty() {
                current += space_len + word_len;
                out.push_str(&space);
                out.push_str(&word);
                (word, space) = (String::new(), String::new());
                (word_len, space_len) = (0, 0);
            }
            space.push(c);
            space_len += 1;
        } else {
            word.push(c);
            word_len += 1;
            if current + space_len + word_len > limit && word_len < limit {
                out.push('\n');
                current = 0;
                space.clear();
                space_len = 0;
            }
        }
    }
    if word.is_empty() {
        if current + space_len <= limit {
            out.push_str(&space);
        }
    } else {
        out.push_str(&space);
        out.push_str(&word);
    }
    out
}

/// A diagnostic's detail as Terraform prints it for a stream `columns`
/// wide: each line wrapped to one less than the width, except lines that
/// start with a blank (preformatted: lists, snippets).
pub fn wrap_detail(detail: &str, columns: usize) -> String {
    if columns <= 1 {
        return detail.to_string();
    }
    detail
        .split('\n')
        .map(|l| {
            if l.starts_with(' ') {
                l.to_string()
            } else {
                word_wrap(l, columns - 1)
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A diagnostic with its source snippet, as Terraform prints them to a
/// stream that is not a terminal ([`DEFAULT_COLUMNS`] wide).
pub fn diagnostic(style: &Style, d: &Diagnostic) -> String {
    diagnostic_for(style, d, DEFAULT_COLUMNS)
}

/// [`diagnostic`] for a stream `columns` wide.
pub fn diagnostic_for(style: &Style, d: &Diagnostic, columns: usize) -> String {
    let mut out = String::new();
    let (sev, paint): (&str, fn(&Style, &str) -> String) = match d.severity {
        Severity::Error => ("Error", |s, t| s.red(t)),
        Severity::Warning => ("Warning", |s, t| s.yellow(t)),
    };
    let _ = writeln!(
        out,
        "\n{}: {}\n",
        paint(style, &style.bold(sev)),
        style.bold(&d.summary)
    );
    if let Some(r) = &d.range {
        // Terraform names root-module files without "./" and adds the
        // block the line is in: `on main.tf line 3, in resource "a" "b":`
        // (`in run "r":` in a test file).
        let file = r.file.strip_prefix("./").unwrap_or(&r.file);
        let text = std::fs::read_to_string(&*r.file).ok();
        let context = text
            .as_deref()
            .filter(|_| file.ends_with(".tf") || file.ends_with(".tftest.hcl"))
            .and_then(|t| block_context(t, r.start.line, r.start.col))
            .map(|c| format!(", in {c}"))
            .unwrap_or_default();
        let _ = writeln!(out, "  on {file} line {}{context}:", r.start.line);
        match text {
            Some(t) => {
                if let Some(line) = t.lines().nth(r.start.line.saturating_sub(1)) {
                    let _ = writeln!(out, "{:>4}: {}", r.start.line, line);
                }
            }
            // As Terraform says of a source it cannot read (a console
            // line, a file gone since).
            None => out.push_str("  (source code not available)\n"),
        }
        out.push('\n');
    }
    if !d.detail.is_empty() {
        let _ = writeln!(out, "{}", wrap_detail(&d.detail, columns));
    }
    out
}

/// The top-level block that line `line` (1-based) of a `.tf` file is in,
/// as Terraform names it (`resource "a" "b"`, `provider "p"`): the nearest
/// header at column 0 at or above the line, unless a closing brace at
/// column 0 comes first. A range starting at column `col` of a header's own
/// line at its first character is the header itself, which is in no block.
fn block_context(text: &str, line: usize, col: usize) -> Option<String> {
    let lines: Vec<&str> = text.lines().take(line).collect();
    for (i, l) in lines.iter().enumerate().rev() {
        if l.starts_with('}') && i + 1 < line {
            return None;
        }
        // A range that starts at a block's header (its type name) is not
        // inside that block: Terraform names the block around it.
        let indent = l.len() - l.trim_start().len();
        if i + 1 == line && col <= indent + 1 {
            continue;
        }
        // A one-line block (`run "r" {}`) is the context of its own line.
        let one_line = (i + 1 == line)
            .then(|| l.trim_end().strip_suffix('}')?.trim_end().strip_suffix('{'))
            .flatten();
        let Some(head) = one_line.or_else(|| l.trim_end().strip_suffix('{')) else {
            continue;
        };
        if !l.starts_with(|c: char| c.is_ascii_alphabetic()) {
            continue;
        }
        let mut words = head.split_whitespace();
        let kind = words.next()?;
        let mut s = kind.to_string();
        for label in words {
            let bare = label.trim_matches('"');
            s.push_str(&format!(" \"{bare}\""));
        }
        return Some(s);
    }
    None
}

/// Stored root outputs (state), one `name = value` line each, each value
/// rendered by `render` ([`hcl_value`] for `output` and apply,
/// [`show_value`](crate::text::show_value) for `show`); sensitive ones read `hidden` (`<sensitive>`
/// or `show`'s `(sensitive value)`).
pub fn stored_outputs(
    s: &terrane_state::Snapshot,
    hidden: &str,
    render: fn(&Value, usize) -> String,
) -> String {
    let mut out = String::new();
    for (name, o) in &s.outputs {
        let v = if o.sensitive {
            hidden.to_string()
        } else {
            render(&o.stored_value(), 0)
        };
        let _ = writeln!(out, "{name} = {v}");
    }
    out
}

/// `Outputs:` after apply: `name = value` in HCL syntax, sensitive ones
/// `<sensitive>`, as Terraform prints them.
pub fn outputs(outs: &std::collections::BTreeMap<String, (Value, bool)>) -> String {
    let mut s = String::new();
    for (name, (v, sensitive)) in outs {
        let text = if *sensitive {
            "<sensitive>".to_string()
        } else {
            hcl_value(v, 0)
        };
        let _ = writeln!(s, "{name} = {text}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The action symbols are fixed text: each is what painting its parts
    /// with the style gives, coloured or not.
    #[test]
    fn action_symbols_are_the_painted_parts() {
        let check = |a: Action, style: &Style, want: String| {
            assert_eq!(symbol(style, a), want, "case {a:?}, colour {}", style.color);
        };
        for color in [false, true] {
            let st = Style { color };
            let cases = [
                (Action::Create, format!("  {}", st.green("+"))),
                (Action::Update, format!("  {}", st.yellow("~"))),
                (Action::Delete, format!("  {}", st.red("-"))),
                (
                    Action::DeleteThenCreate,
                    format!("{}/{}", st.red("-"), st.green("+")),
                ),
                (
                    Action::CreateThenDelete,
                    format!("{}/{}", st.green("+"), st.red("-")),
                ),
                (Action::Read, format!(" {}", st.cyan("<="))),
                (Action::Forget, " .".to_string()),
                (Action::NoOp, "   ".to_string()),
            ];
            for (a, want) in cases {
                check(a, &st, want);
            }
            let acts = [
                (crate::diff::Act::NoOp, "   ".to_string()),
                (crate::diff::Act::Create, format!("  {}", st.green("+"))),
                (crate::diff::Act::Delete, format!("  {}", st.red("-"))),
                (crate::diff::Act::Update, format!("  {}", st.yellow("~"))),
            ];
            for (a, want) in acts {
                assert_eq!(a.symbol(&st), want, "case {a:?}, colour {color}");
            }
        }
    }

    /// Resource blocks rendered on several threads and written in batches
    /// give the text one thread gives, whatever the number of blocks and
    /// threads; a writer that fails stops the rendering with its error.
    #[test]
    fn resource_blocks_stream_in_order() {
        let change = |i: usize| Change {
            addr: terrane_state::InstanceAddr::parse(&format!("terraform_data.r[{i}]"))
                .expect("address"),
            deposed: None,
            provider: terrane_engine::provider::ProviderConfigKey::root(
                terrane_engine::provider::ProviderAddr::parse("terraform.io/builtin/terraform")
                    .expect("provider"),
            )
            .into(),
            action: Action::Create,
            before: Value::null(Type::Dynamic),
            after: Value::object(std::collections::BTreeMap::from([(
                "input".to_string(),
                Value::string(format!("value-{i}")),
            )])),
            ty: Type::object([("input".to_string(), Type::String)]),
            schema_version: 0,
            requires_replace: Vec::new(),
            planned_private: Vec::new(),
            prior_private: Vec::new(),
            reason: None,
            importing: None,
            dependencies: Vec::new(),
            create_before_destroy: false,
            schema: None,
        };
        let style = Style { color: false };
        let changes: Vec<Change> = (0..7 * BLOCKS_PER_THREAD + 7).map(change).collect();
        let check = |name: &str, blocks: usize, threads: usize, fail_after: Option<usize>| {
            let listed: Vec<_> = changes[..blocks].iter().map(|c| (c, None)).collect();
            let mut want = String::new();
            for (c, _) in &listed {
                resource(&mut want, &style, c, false, None);
            }
            let mut sink = Sink {
                text: Vec::new(),
                room: fail_after.unwrap_or(usize::MAX),
            };
            let r = resources_on(&mut sink, &style, &listed, threads);
            match fail_after {
                None => {
                    assert!(r.is_ok(), "case {name}: {r:?}");
                    assert!(
                        String::from_utf8(sink.text).expect("utf-8") == want,
                        "case {name}"
                    );
                }
                Some(_) => assert!(r.is_err(), "case {name}: a failed write is not reported"),
            }
        };
        check("empty", 0, 2, None);
        check("one_block_one_thread", 1, 1, None);
        check("one_batch_two_threads", BLOCKS_PER_THREAD, 2, None);
        check("partial_last_batch", 2 * BLOCKS_PER_THREAD + 3, 2, None);
        check("more_threads_than_batches", BLOCKS_PER_THREAD + 1, 5, None);
        check("three_threads", 3 * BLOCKS_PER_THREAD + 7, 3, None);
        check(
            "helpers_with_many_batches",
            7 * BLOCKS_PER_THREAD + 7,
            2,
            None,
        );
        check(
            "three_threads_many_batches",
            7 * BLOCKS_PER_THREAD + 7,
            3,
            None,
        );
        check(
            "writer_fails_in_first_batch",
            3 * BLOCKS_PER_THREAD,
            2,
            Some(10),
        );
        check(
            "writer_fails_in_a_helpers_batch",
            3 * BLOCKS_PER_THREAD + 7,
            2,
            Some(40_000),
        );
    }

    /// A writer with room for `room` bytes, then failing.
    struct Sink {
        text: Vec<u8>,
        room: usize,
    }

    impl std::io::Write for Sink {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            if self.text.len() + b.len() > self.room {
                return Err(std::io::Error::other("no room"));
            }
            self.text.extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// Item 4: details wrapped as Terraform wraps them when its output is
    /// not a terminal (78 columns: lines of at most 77 characters), the
    /// expected texts copied from real Terraform 1.15's output.
    #[test]
    fn item4_diagnostic_detail_wrapped_as_terraform() {
        let check = |name: &str, detail: &str, want: &str| {
            assert_eq!(wrap_detail(detail, DEFAULT_COLUMNS), want, "case {name}");
        };
        check(
            "unknown_condition",
            "Condition expression could not be evaluated at this time. This means you have executed a `run` block with `command = plan` and one of the values your condition depended on is not known until after the plan has been applied. Either remove this value from your condition, or execute an `apply` command from this `run` block. Alternatively, if there is an override for this value, you can make it available during the plan phase by setting `override_during = plan` in the `override_` block.",
            "Condition expression could not be evaluated at this time. This means you have\nexecuted a `run` block with `command = plan` and one of the values your\ncondition depended on is not known until after the plan has been applied.\nEither remove this value from your condition, or execute an `apply` command\nfrom this `run` block. Alternatively, if there is an override for this value,\nyou can make it available during the plan phase by setting `override_during =\nplan` in the `override_` block.",
        );
        check(
            "dev_overrides_list_kept",
            "The following provider development overrides are set in the CLI configuration:\n - hashicorp/random in /a/very/long/path/that/goes/on/and/on/and/on/and/on/and/on/plugins/r\n\nThe behavior may therefore not match any released version of the provider and applying changes may cause the state to become incompatible with published releases.",
            "The following provider development overrides are set in the CLI\nconfiguration:\n - hashicorp/random in /a/very/long/path/that/goes/on/and/on/and/on/and/on/and/on/plugins/r\n\nThe behavior may therefore not match any released version of the provider and\napplying changes may cause the state to become incompatible with published\nreleases.",
        );
        check("short_unchanged", "A short detail.", "A short detail.");
        let long_word = "x".repeat(90);
        check(
            "long_word_alone",
            &format!("see {long_word} here"),
            &format!("see\n{long_word}\nhere"),
        );
    }
    use crate::text::show_value;
    use terrane_engine::OutputChange;

    fn s(x: &str) -> Value {
        Value::string(x)
    }

    fn obj(kvs: &[(&str, Value)]) -> Value {
        Value::object(
            kvs.iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        )
    }

    fn map(kvs: &[(&str, Value)]) -> Value {
        Value::map(
            Type::String,
            kvs.iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        )
    }

    /// Each case: a renderer's text for a value, checked line for line.
    fn check(name: &str, got: String, want: &str) {
        assert_eq!(got, want, "case {name}:\n--- got\n{got}\n--- want\n{want}");
    }

    #[test]
    fn hcl_values_as_terraform_output_prints_them() {
        let cases: Vec<(&str, Value, &str)> = vec![
            ("string", s("x"), "\"x\""),
            ("number", Value::number(42), "42"),
            ("null", Value::null(Type::String), "tostring(null)"),
            (
                "tuple",
                Value::tuple(vec![s("p"), s("q")]),
                "[\n  \"p\",\n  \"q\",\n]",
            ),
            (
                "list",
                Value::list(Type::String, vec![s("p")]),
                "tolist([\n  \"p\",\n])",
            ),
            ("empty_set", Value::set(Type::String, vec![]), "toset([])"),
            (
                "map_keys_quoted_unaligned",
                map(&[("a b", s("x")), ("c", s("y"))]),
                "tomap({\n  \"a b\" = \"x\"\n  \"c\" = \"y\"\n})",
            ),
            (
                "object",
                obj(&[("k", s("v")), ("kk", Value::number(2))]),
                "{\n  \"k\" = \"v\"\n  \"kk\" = 2\n}",
            ),
            (
                "nested",
                obj(&[("l", Value::tuple(vec![obj(&[("a", s("b"))])]))]),
                "{\n  \"l\" = [\n    {\n      \"a\" = \"b\"\n    },\n  ]\n}",
            ),
            ("heredoc", s("one\ntwo"), "<<EOT\none\ntwo\nEOT"),
            (
                "heredoc_delimiter_grows",
                s("EOT\nx"),
                "<<EOT_\nEOT\nx\nEOT_",
            ),
            (
                "heredoc_indented",
                obj(&[("t", s("a\nb"))]),
                "{\n  \"t\" = <<-EOT\n  a\n  b\n  EOT\n}",
            ),
            (
                "sensitive",
                s("secret").mark_sensitive(),
                "(sensitive value)",
            ),
            // As Terraform's console prints `convert(null, ...)` results.
            (
                "item1_typed_null_string",
                Value::null(Type::String),
                "tostring(null)",
            ),
            (
                "item1_typed_null_list",
                Value::null(Type::list(Type::String)),
                "tolist(null) /* of string */",
            ),
            (
                "item1_typed_null_in_object",
                obj(&[("b", Value::null(Type::Number))]),
                "{\n  \"b\" = tonumber(null)\n}",
            ),
            ("item1_untyped_null", Value::null(Type::Dynamic), "null"),
        ];
        for (name, v, want) in cases {
            check(name, hcl_value(&v, 0), want);
        }
    }

    #[test]
    fn show_values_as_terraform_show_prints_them() {
        let cases: Vec<(&str, Value, &str)> = vec![
            (
                "tuple",
                Value::tuple(vec![s("p"), s("q")]),
                "[\n    \"p\",\n    \"q\",\n]",
            ),
            (
                "map_keys_quoted_aligned",
                map(&[("a b", s("x")), ("c", s("y"))]),
                "{\n    \"a b\" = \"x\"\n    \"c\"   = \"y\"\n}",
            ),
            (
                "object_keys_bare_aligned",
                obj(&[("k", s("v")), ("kk", Value::number(2))]),
                "{\n    k  = \"v\"\n    kk = 2\n}",
            ),
            ("empty_tuple", Value::tuple(vec![]), "[]"),
        ];
        for (name, v, want) in cases {
            check(name, show_value(&v, 0), want);
        }
    }

    #[test]
    fn output_changes_as_terraform_plans_them() {
        let style = Style { color: false };
        let created = |v: Value, sensitive: bool| OutputChange {
            before: None,
            after: v,
            sensitive,
        };
        // (case name, outputs by name, rendered text)
        type OutputCase = (
            &'static str,
            Vec<(&'static str, OutputChange)>,
            &'static str,
        );
        let cases: Vec<OutputCase> = vec![
            (
                "names_aligned_structures_itemized",
                vec![
                    ("a", created(s("x"), false)),
                    ("l", created(Value::tuple(vec![s("p")]), false)),
                    ("longer_name", created(Value::number(42), false)),
                    ("m", created(map(&[("a b", s("x")), ("c", s("y"))]), false)),
                    ("secret", created(s("s"), true)),
                ],
                "  + a           = \"x\"\n  + l           = [\n      + \"p\",\n    ]\n  + longer_name = 42\n  + m           = {\n      + \"a b\" = \"x\"\n      + c     = \"y\"\n    }\n  + secret      = (sensitive value)\n",
            ),
            (
                "update_and_removal",
                vec![
                    ("gone", OutputChange { before: Some(s("old")), after: Value::null(Type::Dynamic), sensitive: false }),
                    ("n", OutputChange { before: Some(Value::number(1)), after: Value::number(2), sensitive: false }),
                    ("same", OutputChange { before: Some(s("x")), after: s("x"), sensitive: false }),
                ],
                "  - gone = \"old\" -> null\n  ~ n    = 1 -> 2\n",
            ),
            ("unknown", vec![("id", created(Value::unknown(Type::String), false))], "  + id = (known after apply)\n"),
        ];
        for (name, outs, want) in cases {
            let outs = outs.into_iter().map(|(k, o)| (k.to_string(), o)).collect();
            check(name, output_changes(&style, &outs), want);
        }
    }

    /// Issue 15 item 4: diagnostics come out in Terraform's order, so a
    /// provider block with several mistakes reads as Terraform's does
    /// (the missing block at the opening brace, line 6, before the
    /// argument missing inside a nested block at line 8).
    #[test]
    fn item4_diagnostics_in_terraform_order() {
        let at = |file: &str, byte: usize| {
            Some(terrane_config::SourceRange {
                file: file.into(),
                start: terrane_config::Pos {
                    line: byte,
                    col: 1,
                    byte,
                },
                end: terrane_config::Pos {
                    line: byte,
                    col: 2,
                    byte: byte + 1,
                },
            })
        };
        let ds = vec![
            Diagnostic::error("inner argument", "", at("./main.tf", 80)),
            Diagnostic::error("child module", "", at("./c/main.tf", 10)),
            Diagnostic::error("unsupported block", "", at("./main.tf", 120)),
            Diagnostic::error("missing block", "", at("./main.tf", 60)),
            Diagnostic::warning("a warning", "", at("./main.tf", 200)),
            Diagnostic::error("no place", "", None),
        ];
        let got: Vec<&str> = terraform_order(&ds)
            .iter()
            .map(|d| d.summary.as_str())
            .collect();
        assert_eq!(
            got,
            [
                "a warning",
                "no place",
                "missing block",
                "inner argument",
                "unsupported block",
                "child module"
            ]
        );
    }
}
