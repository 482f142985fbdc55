//! Human output in Terraform's shape: the plan (`+`, `~`, `-/+`, `+/-`,
//! `-`, `<=`, `(known after apply)`, `(sensitive value)`, `# forces
//! replacement`), the summary lines and diagnostics. Sensitive values are
//! never printed.

use std::fmt::Write;
use terrane_config::{Diagnostic, Severity};
use terrane_engine::{Action, Change, Plan, PlanMode};
use terrane_value::{Kind, Path, Type, Value};

pub struct Style {
    pub color: bool,
}

impl Style {
    fn paint(&self, code: &str, s: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
    pub fn bold(&self, s: &str) -> String {
        self.paint("1", s)
    }
    fn green(&self, s: &str) -> String {
        self.paint("32", s)
    }
    fn red(&self, s: &str) -> String {
        self.paint("31", s)
    }
    fn yellow(&self, s: &str) -> String {
        self.paint("33", s)
    }
    fn cyan(&self, s: &str) -> String {
        self.paint("36", s)
    }
}

fn symbol(style: &Style, a: Action) -> String {
    match a {
        Action::Create => style.green("+"),
        Action::Update => style.yellow("~"),
        Action::Delete => style.red("-"),
        Action::DeleteThenCreate => format!("{}/{}", style.red("-"), style.green("+")),
        Action::CreateThenDelete => format!("{}/{}", style.green("+"), style.red("-")),
        Action::Read => style.cyan("<="),
        Action::Forget => ".".into(),
        Action::NoOp => " ".into(),
    }
}

fn headline(c: &Change) -> String {
    let addr = match &c.deposed {
        Some(k) => format!("{} (deposed object {k})", c.addr),
        None => c.addr.to_string(),
    };
    match c.action {
        Action::Create => format!("# {addr} will be created"),
        Action::Update => format!("# {addr} will be updated in-place"),
        Action::Delete => match &c.reason {
            Some(terrane_engine::model::Reason::NoResourceConfig) => format!("# {addr} will be destroyed\n  # (because {} is not in configuration)", terrane_engine::apply_node::config_addr(&c.addr)),
            Some(terrane_engine::model::Reason::CountIndex) => format!("# {addr} will be destroyed\n  # (because index {} is out of range for count)", c.addr.key.to_string().trim_matches(['[', ']'])),
            Some(terrane_engine::model::Reason::EachKey) => format!("# {addr} will be destroyed\n  # (because key {} is not in for_each map)", c.addr.key.to_string().trim_matches(['[', ']'])),
            _ => format!("# {addr} will be destroyed"),
        },
        Action::DeleteThenCreate | Action::CreateThenDelete => match &c.reason {
            Some(terrane_engine::model::Reason::Tainted) => format!("# {addr} is tainted, so must be replaced"),
            Some(terrane_engine::model::Reason::ReplaceByRequest) => format!("# {addr} will be replaced, as requested"),
            Some(terrane_engine::model::Reason::ReplaceByTriggers) => format!("# {addr} will be replaced due to changes in replace_triggered_by"),
            _ => format!("# {addr} must be replaced"),
        },
        Action::Read => format!("# {addr} will be read during apply\n  # (config refers to values not yet known)"),
        Action::Forget => format!("# {addr} will no longer be managed by terrane\n  # (the object stays; a removed block says destroy = false)"),
        Action::NoOp if c.importing.is_some() => format!("# {addr} will be imported"),
        Action::NoOp => format!("# {addr}"),
    }
}

/// The whole plan, as `terraform plan` prints it.
pub fn plan(style: &Style, p: &Plan) -> String {
    let mut out = String::new();
    if !p.drift.is_empty() && p.mode == PlanMode::RefreshOnly {
        out.push_str(&style.bold("\nNote: Objects have changed outside of terrane\n\n"));
        out.push_str("terrane detected the following changes made outside of terrane since the last \"terrane apply\":\n\n");
        for c in &p.drift {
            out.push_str(&resource(style, c, true));
        }
    }
    for (from, to) in &p.moved {
        if p.changes.iter().all(|c| c.addr != *to || c.action == Action::NoOp) {
            out.push_str(&format!("\n  {}\n", style.bold(&format!("# {from} has moved to {to}"))));
        }
    }
    let visible: Vec<&Change> = p.changes.iter().filter(|c| c.action != Action::NoOp || c.importing.is_some()).collect();
    let outputs_changed = p.outputs.iter().any(|(_, o)| output_changed(o));
    if visible.is_empty() && !p.moved.is_empty() {
        out.push_str(&format!("\n{} 0 to add, 0 to change, 0 to destroy.\n", style.bold("Plan:")));
    }
    if visible.is_empty() && p.moved.is_empty() {
        if p.mode == PlanMode::RefreshOnly && !p.drift.is_empty() {
            out.push_str("\nThis is a refresh-only plan, so terrane will not take any actions to undo these. If you were expecting these changes then you can apply this plan to record the updated values in the terrane state without changing any remote objects.\n");
            return out;
        }
        if !outputs_changed {
            out.push_str(&format!("\n{}\n\n", style.bold(&style.green("No changes. Your infrastructure matches the configuration."))));
            out.push_str("terrane has compared your real infrastructure against your configuration and found no differences, so no changes are needed.\n");
            return out;
        }
    }
    if !visible.is_empty() {
        let mut kinds: Vec<Action> = visible.iter().map(|c| c.action).collect();
        kinds.sort();
        kinds.dedup();
        out.push_str("\nterrane used the selected providers to generate the following execution plan. Resource actions are indicated with the following symbols:\n");
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
            out.push_str(&format!("  {} {label}\n", symbol(style, *k)));
        }
        out.push_str("\nterrane will perform the following actions:\n\n");
        for c in &visible {
            out.push_str(&resource(style, c, false));
        }
        let (add, change, destroy) = p.counts();
        let imports = p.changes.iter().filter(|c| c.importing.is_some()).count();
        let forgets = p.changes.iter().filter(|c| c.action == Action::Forget).count();
        let import_part = if imports > 0 { format!("{imports} to import, ") } else { String::new() };
        let forget_part = if forgets > 0 { format!(", {forgets} to forget") } else { String::new() };
        out.push_str(&format!("{} {import_part}{add} to add, {change} to change, {destroy} to destroy{forget_part}.\n", style.bold("Plan:")));
    }
    if outputs_changed {
        out.push_str("\nChanges to Outputs:\n");
        out.push_str(&output_changes(style, &p.outputs));
        if visible.is_empty() && p.moved.is_empty() {
            out.push_str("\nYou can apply this plan to save these new output values to the terrane state, without changing any real infrastructure.\n");
        }
    }
    out
}

/// The changed root outputs as one object diff: names aligned, a created
/// or destroyed structure shown element by element, sensitive ones as
/// `(sensitive value)`.
fn output_changes(style: &Style, outputs: &std::collections::BTreeMap<String, terrane_engine::OutputChange>) -> String {
    let mark = |v: &Value, sensitive: bool| if sensitive { v.clone().mark_sensitive() } else { v.clone() };
    let mut before = std::collections::BTreeMap::new();
    let mut after = std::collections::BTreeMap::new();
    for (name, o) in outputs.iter().filter(|(_, o)| output_changed(o)) {
        let b = o.before.as_ref().map_or_else(|| Value::null(Type::Dynamic), |b| mark(b, o.sensitive));
        // A removed output is planned as a dynamic null.
        let removed = o.after.is_null() && o.after.ty().is_dynamic();
        let a = if removed { Value::null(Type::Dynamic) } else { mark(&o.after, o.sensitive) };
        before.insert(name.clone(), b);
        after.insert(name.clone(), a);
    }
    let ctx = DiffCtx { requires_replace: &[], delete: false };
    attrs_diff(style, &Value::object(before), &Value::object(after), &ctx, 2, &Path::root(), None)
}

fn output_changed(o: &terrane_engine::OutputChange) -> bool {
    match &o.before {
        None => true,
        Some(b) => !b.unmark_deep().eq_ignoring_refinements(&o.after.unmark_deep()) || !o.after.is_wholly_known(),
    }
}

/// One resource block of the plan.
pub fn resource(style: &Style, c: &Change, drift: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "  {}", style.bold(&headline(c)));
    let (mode, ty, name) = (&c.addr.resource.mode, &c.addr.resource.ty, &c.addr.resource.name);
    let kw = if *mode == terrane_state::Mode::Data { "data" } else { "resource" };
    let sym = if drift { style.yellow("~") } else { symbol(style, c.action) };
    let _ = writeln!(out, "  {sym} {kw} \"{ty}\" \"{name}\" {{");
    let body = object_diff(style, &c.before, &c.after, c, 6, &Path::root());
    out.push_str(&body);
    let _ = writeln!(out, "    }}\n");
    out
}

fn forces(c: &DiffCtx, p: &Path) -> bool {
    c.requires_replace.iter().any(|r| r == p)
}

fn object_diff(style: &Style, before: &Value, after: &Value, c: &Change, indent: usize, path: &Path) -> String {
    let whole = match c.action {
        Action::Create | Action::Read => Some(style.green("+")),
        Action::Delete => Some(style.red("-")),
        _ => None,
    };
    let ctx = DiffCtx { requires_replace: &c.requires_replace, delete: c.action == Action::Delete };
    attrs_diff(style, before, after, &ctx, indent, path, whole.as_deref())
}

/// What an attribute diff needs to know about the change it belongs to.
struct DiffCtx<'a> {
    /// Paths that force the replacement (marked `# forces replacement`).
    requires_replace: &'a [Path],
    /// The object is deleted as a whole.
    delete: bool,
}

/// Whether a key prints bare (an identifier); any other is quoted, as
/// Terraform's plan renderer does for object attributes and map keys.
fn is_identifier(k: &str) -> bool {
    let mut cs = k.chars();
    cs.next().is_some_and(|c| c.is_alphabetic() || c == '_') && cs.all(|c| c.is_alphanumeric() || c == '_' || c == '-')
}

/// A key as the plan shows it: bare when an identifier, else quoted.
fn key_text(k: &str) -> String {
    if is_identifier(k) {
        k.to_string()
    } else {
        terrane_value::render::quote(k)
    }
}

/// The elements of a known, non-sensitive, non-empty list, tuple or set.
fn known_elements(v: &Value) -> Option<&[Value]> {
    if !v.is_known() || v.is_null() || v.is_sensitive() {
        return None;
    }
    match v.kind() {
        Kind::Seq(es) | Kind::Set(es) if !es.is_empty() => Some(es),
        _ => None,
    }
}

fn is_structure(v: &Value) -> bool {
    v.is_known() && !v.is_null() && !v.is_sensitive() && matches!(v.kind(), Kind::Map(_))
}

/// The attribute lines of an object diff. `whole` is the symbol every
/// line takes when the object is created or destroyed as a whole.
fn attrs_diff(style: &Style, before: &Value, after: &Value, c: &DiffCtx, indent: usize, path: &Path, whole: Option<&str>) -> String {
    let mut out = String::new();
    let pad = " ".repeat(indent);
    let empty = std::collections::BTreeMap::new();
    let b = if before.is_known() && !before.is_sensitive() { before.entries().unwrap_or(&empty) } else { &empty };
    let a = if after.is_known() && !after.is_sensitive() { after.entries().unwrap_or(&empty) } else { &empty };
    let mut names: Vec<&String> = b.keys().chain(a.keys()).collect();
    names.sort();
    names.dedup();
    let width = names
        .iter()
        .filter(|n| !(b.get(**n).is_none_or(Value::is_null) && a.get(**n).is_none_or(Value::is_null)))
        .map(|n| key_text(n).len())
        .max()
        .unwrap_or(0);
    let mut unchanged = 0;
    for n in names {
        let bv = b.get(n).cloned().unwrap_or_else(|| Value::null(Type::Dynamic));
        let av = if after.is_known() { a.get(n).cloned().unwrap_or_else(|| Value::null(Type::Dynamic)) } else { Value::unknown(Type::Dynamic) };
        if bv.is_null() && av.is_null() {
            continue;
        }
        let p = path.attr(n.clone());
        let k = key_text(n);
        let note = if forces(c, &p) { style.red(" # forces replacement") } else { String::new() };
        let same = bv.unmark_deep().eq_ignoring_refinements(&av.unmark_deep()) && av.is_wholly_known() && bv.is_sensitive() == av.is_sensitive();
        if whole.is_none() && same {
            unchanged += 1;
            continue;
        }
        let sym = match whole {
            Some(s) => s.to_string(),
            None if bv.is_null() => style.green("+"),
            None if av.is_null() => style.red("-"),
            None => style.yellow("~"),
        };
        let nested_before = if whole.is_some() || bv.is_null() { &av } else { &bv };
        let added = whole.is_none() && bv.is_null() && is_structure(&av);
        if (is_structure(&av) || av.is_null()) && is_structure(nested_before) && whole.is_some() || (is_structure(&bv) && is_structure(&av) && whole.is_none()) || added {
            let (nb, na) = if whole.is_some() && c.delete { (bv.clone(), Value::null(Type::Dynamic)) } else { (bv.clone(), av.clone()) };
            let plus = style.green("+");
            let inner_whole = whole.or(if bv.is_null() { Some(plus.as_str()) } else { None });
            let _ = writeln!(out, "{pad}{sym} {k:<width$} = {{{note}");
            out.push_str(&attrs_diff(style, &nb, &na, c, indent + 4, &p, inner_whole));
            let _ = writeln!(out, "{pad}  }}");
            continue;
        }
        // A sequence created or destroyed as a whole: each element takes
        // the symbol, as Terraform shows it.
        let destroyed = whole.is_some() && c.delete;
        let whole_seq = if destroyed { Some(&bv) } else if whole.is_some() || bv.is_null() { Some(&av) } else { None };
        if let Some(es) = whole_seq.and_then(known_elements) {
            let esym = whole.map(str::to_string).unwrap_or_else(|| style.green("+"));
            let _ = writeln!(out, "{pad}{sym} {k:<width$} = [{note}");
            for e in es {
                let _ = writeln!(out, "{pad}    {esym} {},", value(e, indent + 4, false));
            }
            let tail = if destroyed { " -> null" } else { "" };
            let _ = writeln!(out, "{pad}  ]{tail}");
            continue;
        }
        let text = if destroyed || (av.is_null() && !bv.is_null()) {
            format!("{} -> null", value(&bv, indent, false))
        } else if bv.is_null() || whole.is_some() {
            value(&av, indent, false)
        } else {
            format!("{} -> {}", value(&bv, indent, false), value(&av, indent, false))
        };
        let _ = writeln!(out, "{pad}{sym} {k:<width$} = {text}{note}");
    }
    if unchanged > 0 {
        let what = if indent > 6 { "element" } else { "attribute" };
        let _ = writeln!(out, "{pad}  # ({unchanged} unchanged {what}{} hidden)", if unchanged == 1 { "" } else { "s" });
    }
    out
}

/// A value as the plan shows it.
pub fn value(v: &Value, indent: usize, force_sensitive: bool) -> String {
    if force_sensitive || v.is_sensitive() {
        return "(sensitive value)".into();
    }
    match v.kind() {
        Kind::Null => "null".into(),
        Kind::Unknown(_) => "(known after apply)".into(),
        Kind::String(s) if s.contains('\n') => {
            let pad = " ".repeat(indent + 4);
            let mut out = String::from("<<-EOT\n");
            for line in s.lines() {
                let _ = writeln!(out, "{pad}{line}");
            }
            out.push_str(&format!("{}EOT", " ".repeat(indent + 2)));
            out
        }
        Kind::String(s) => terrane_value::render::quote(s),
        Kind::Number(n) => n.to_string(),
        Kind::Bool(b) => b.to_string(),
        Kind::Seq(es) | Kind::Set(es) => {
            if es.is_empty() {
                return "[]".into();
            }
            let pad = " ".repeat(indent + 4);
            let mut out = String::from("[\n");
            for e in es.iter() {
                let _ = writeln!(out, "{pad}{},", value(e, indent + 4, false));
            }
            out.push_str(&format!("{}]", " ".repeat(indent + 2)));
            out
        }
        Kind::Map(m) => {
            if m.is_empty() {
                return "{}".into();
            }
            let pad = " ".repeat(indent + 4);
            let width = m.keys().map(|k| key_text(k).len()).max().unwrap_or(0);
            let mut out = String::from("{\n");
            for (k, e) in m.iter() {
                let _ = writeln!(out, "{pad}{:<width$} = {}", key_text(k), value(e, indent + 4, false));
            }
            out.push_str(&format!("{}}}", " ".repeat(indent + 2)));
            out
        }
    }
}

/// A diagnostic with its source snippet, as Terraform prints them.
pub fn diagnostic(style: &Style, d: &Diagnostic) -> String {
    let mut out = String::new();
    let (sev, paint): (&str, fn(&Style, &str) -> String) = match d.severity {
        Severity::Error => ("Error", |s, t| s.red(t)),
        Severity::Warning => ("Warning", |s, t| s.yellow(t)),
    };
    let _ = writeln!(out, "\n{}: {}\n", paint(style, &style.bold(sev)), style.bold(&d.summary));
    if let Some(r) = &d.range {
        // Terraform names root-module files without "./" and adds the
        // block the line is in: `on main.tf line 3, in resource "a" "b":`.
        let file = r.file.strip_prefix("./").unwrap_or(&r.file);
        let text = std::fs::read_to_string(&*r.file).ok();
        let context = text.as_deref().filter(|_| file.ends_with(".tf")).and_then(|t| block_context(t, r.start.line)).map(|c| format!(", in {c}")).unwrap_or_default();
        let _ = writeln!(out, "  on {file} line {}{context}:", r.start.line);
        if let Some(line) = text.as_deref().and_then(|t| t.lines().nth(r.start.line.saturating_sub(1))) {
            let _ = writeln!(out, "  {:>3}: {}", r.start.line, line);
        }
        out.push('\n');
    }
    if !d.detail.is_empty() {
        let _ = writeln!(out, "{}", d.detail);
    }
    out
}

/// The top-level block that line `line` (1-based) of a `.tf` file is in,
/// as Terraform names it (`resource "a" "b"`, `provider "p"`): the nearest
/// header at column 0 at or above the line, unless a closing brace at
/// column 0 comes first.
fn block_context(text: &str, line: usize) -> Option<String> {
    let lines: Vec<&str> = text.lines().take(line).collect();
    for (i, l) in lines.iter().enumerate().rev() {
        if l.starts_with('}') && i + 1 < line {
            return None;
        }
        let Some(head) = l.trim_end().strip_suffix('{') else { continue };
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
/// [`show_value`] for `show`); sensitive ones read `hidden` (`<sensitive>`
/// or `show`'s `(sensitive value)`).
pub fn stored_outputs(s: &terrane_state::Snapshot, hidden: &str, render: fn(&Value, usize) -> String) -> String {
    let mut out = String::new();
    for (name, o) in &s.outputs {
        let v = if o.sensitive { hidden.to_string() } else { render(&terrane_engine::run::stored_output_value(o), 0) };
        let _ = writeln!(out, "{name} = {v}");
    }
    out
}

/// A value as `show` prints stored outputs: four spaces per level, keys
/// aligned, object attributes bare, map keys quoted, no type wrappers.
pub fn show_value(v: &Value, indent: usize) -> String {
    if v.is_sensitive() {
        return "(sensitive value)".into();
    }
    let pad = " ".repeat(indent + 4);
    let close = " ".repeat(indent);
    match v.kind() {
        Kind::Seq(es) | Kind::Set(es) if !es.is_empty() => {
            let mut out = String::from("[\n");
            for e in es.iter() {
                let _ = writeln!(out, "{pad}{},", show_value(e, indent + 4));
            }
            format!("{out}{close}]")
        }
        Kind::Map(m) if !m.is_empty() => {
            let object = v.ty().object_type().is_some();
            let key = |k: &str| if object { key_text(k) } else { terrane_value::render::quote(k) };
            let width = m.keys().map(|k| key(k).len()).max().unwrap_or(0);
            let mut out = String::from("{\n");
            for (k, e) in m.iter() {
                let _ = writeln!(out, "{pad}{:<width$} = {}", key(k), show_value(e, indent + 4));
            }
            format!("{out}{close}}}")
        }
        _ => value(v, indent, false),
    }
}

/// `Outputs:` after apply: `name = value` in HCL syntax, sensitive ones
/// `<sensitive>`, as Terraform prints them.
pub fn outputs(outs: &std::collections::BTreeMap<String, (Value, bool)>) -> String {
    let mut s = String::new();
    for (name, (v, sensitive)) in outs {
        let text = if *sensitive { "<sensitive>".to_string() } else { hcl_value(v, 0) };
        let _ = writeln!(s, "{name} = {text}");
    }
    s
}

/// A value in HCL syntax, as Terraform's `output` command and apply's
/// "Outputs:" print it: typed collections wrapped in `tolist(...)`,
/// `toset(...)` or `tomap(...)` (tuples and objects bare), keys always
/// quoted and not aligned, two spaces per level, list elements ending in
/// a comma, and a string with line breaks as a heredoc (`<<-` when
/// indented; the delimiter grows `_`s until no line equals it).
pub fn hcl_value(v: &Value, indent: usize) -> String {
    if v.is_sensitive() {
        return "(sensitive value)".into();
    }
    let pad = " ".repeat(indent + 2);
    let close = " ".repeat(indent);
    match v.kind() {
        Kind::Null => "null".into(),
        Kind::Unknown(_) => "(known after apply)".into(),
        Kind::String(s) if s.contains('\n') => {
            let lines: Vec<&str> = s.split('\n').collect();
            let mut delim = String::from("EOT");
            while lines.iter().any(|l| l.trim() == delim) {
                delim.push('_');
            }
            let mut out = String::from(if indent > 0 { "<<-" } else { "<<" });
            out.push_str(&delim);
            for l in lines {
                let _ = write!(out, "\n{close}{l}");
            }
            let _ = write!(out, "\n{close}{delim}");
            out
        }
        Kind::String(s) => terrane_value::render::quote(s),
        Kind::Number(n) => n.to_string(),
        Kind::Bool(b) => b.to_string(),
        Kind::Seq(es) | Kind::Set(es) => {
            let (open, end) = match v.ty() {
                Type::List(_) => ("tolist([", "])"),
                Type::Set(_) => ("toset([", "])"),
                _ => ("[", "]"),
            };
            if es.is_empty() {
                return format!("{open}{end}");
            }
            let mut out = format!("{open}\n");
            for e in es.iter() {
                let _ = writeln!(out, "{pad}{},", hcl_value(e, indent + 2));
            }
            format!("{out}{close}{end}")
        }
        Kind::Map(m) => {
            let (open, end) = if matches!(v.ty(), Type::Map(_)) { ("tomap({", "})") } else { ("{", "}") };
            if m.is_empty() {
                return format!("{open}{end}");
            }
            let mut out = format!("{open}\n");
            for (k, e) in m.iter() {
                let _ = writeln!(out, "{pad}{} = {}", terrane_value::render::quote(k), hcl_value(e, indent + 2));
            }
            format!("{out}{close}{end}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use terrane_engine::OutputChange;

    fn s(x: &str) -> Value {
        Value::string(x)
    }

    fn obj(kvs: &[(&str, Value)]) -> Value {
        Value::object(kvs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect())
    }

    fn map(kvs: &[(&str, Value)]) -> Value {
        Value::map(Type::String, kvs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect())
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
            ("null", Value::null(Type::String), "null"),
            ("tuple", Value::tuple(vec![s("p"), s("q")]), "[\n  \"p\",\n  \"q\",\n]"),
            ("list", Value::list(Type::String, vec![s("p")]), "tolist([\n  \"p\",\n])"),
            ("empty_set", Value::set(Type::String, vec![]), "toset([])"),
            ("map_keys_quoted_unaligned", map(&[("a b", s("x")), ("c", s("y"))]), "tomap({\n  \"a b\" = \"x\"\n  \"c\" = \"y\"\n})"),
            ("object", obj(&[("k", s("v")), ("kk", Value::number(2))]), "{\n  \"k\" = \"v\"\n  \"kk\" = 2\n}"),
            ("nested", obj(&[("l", Value::tuple(vec![obj(&[("a", s("b"))])]))]), "{\n  \"l\" = [\n    {\n      \"a\" = \"b\"\n    },\n  ]\n}"),
            ("heredoc", s("one\ntwo"), "<<EOT\none\ntwo\nEOT"),
            ("heredoc_delimiter_grows", s("EOT\nx"), "<<EOT_\nEOT\nx\nEOT_"),
            ("heredoc_indented", obj(&[("t", s("a\nb"))]), "{\n  \"t\" = <<-EOT\n  a\n  b\n  EOT\n}"),
            ("sensitive", s("secret").mark_sensitive(), "(sensitive value)"),
        ];
        for (name, v, want) in cases {
            check(name, hcl_value(&v, 0), want);
        }
    }

    #[test]
    fn show_values_as_terraform_show_prints_them() {
        let cases: Vec<(&str, Value, &str)> = vec![
            ("tuple", Value::tuple(vec![s("p"), s("q")]), "[\n    \"p\",\n    \"q\",\n]"),
            ("map_keys_quoted_aligned", map(&[("a b", s("x")), ("c", s("y"))]), "{\n    \"a b\" = \"x\"\n    \"c\"   = \"y\"\n}"),
            ("object_keys_bare_aligned", obj(&[("k", s("v")), ("kk", Value::number(2))]), "{\n    k  = \"v\"\n    kk = 2\n}"),
            ("empty_tuple", Value::tuple(vec![]), "[]"),
        ];
        for (name, v, want) in cases {
            check(name, show_value(&v, 0), want);
        }
    }

    #[test]
    fn output_changes_as_terraform_plans_them() {
        let style = Style { color: false };
        let created = |v: Value, sensitive: bool| OutputChange { before: None, after: v, sensitive };
        // (case name, outputs by name, rendered text)
        type OutputCase = (&'static str, Vec<(&'static str, OutputChange)>, &'static str);
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
}
