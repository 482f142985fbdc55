//! `state list|rm|mv|pull|push` (`state show` is in `stateshow`) and `fmt`.

use crate::args::Args;
use crate::commands::{lock, open_store, Ui};
use std::path::Path;
use terrane_state::{Change, InstanceAddr, Snapshot};

pub(crate) fn workspace() -> String {
    std::env::var("TF_WORKSPACE").ok().filter(|w| !w.is_empty()).unwrap_or_else(|| "default".into())
}

/// Instances of `s` whose address matches `pattern` (an instance, or a
/// resource meaning all its instances, or a module prefix).
pub(crate) fn matching(s: &Snapshot, pattern: &str) -> Vec<InstanceAddr> {
    let mut out = Vec::new();
    for (raddr, r) in &s.resources {
        for key in r.instances.keys() {
            let a = raddr.instance(key.clone());
            let text = a.to_string();
            let res = raddr.to_string();
            if text == pattern || res == pattern || text.starts_with(&format!("{pattern}.")) || text.starts_with(&format!("{pattern}[")) {
                out.push(a);
            }
        }
    }
    out
}

pub fn run(ui: &Ui, dir: &Path, sub: &str, a: &Args) -> u8 {
    let store = match open_store(dir) {
        Ok(s) => s,
        Err(e) => return ui.error("Failed to open state", e),
    };
    let read = || store.snapshot(&workspace()).map_err(|e| ui.error("Failed to read state", e.to_string()));
    match sub {
        "list" => {
            let s = match read() {
                Ok(s) => s,
                Err(c) => return c,
            };
            for (raddr, r) in &s.resources {
                for key in r.instances.keys() {
                    let addr = raddr.instance(key.clone()).to_string();
                    if a.positional.is_empty() || a.positional.iter().any(|p| addr == *p || addr.starts_with(&format!("{p}[")) || addr.starts_with(&format!("{p}."))) {
                        println!("{addr}");
                    }
                }
            }
            0
        }
        "pull" => {
            let s = match read() {
                Ok(s) => s,
                Err(c) => return c,
            };
            // Terraform's format records every upstream dependency. A
            // closed pipe (`| head`) is not an error worth a panic.
            let text = terrane_state::tfstate::export(&terrane_engine::model::with_closure_dependencies(&s));
            let _ = std::io::Write::write_all(&mut std::io::stdout(), text.as_bytes());
            0
        }
        "rm" | "mv" | "push" => {
            let mut run = match lock(ui, store.as_ref(), "OperationTypeInvalid") {
                Ok(r) => r,
                Err(c) => return c,
            };
            let code = mutate(ui, run.as_mut(), sub, a);
            if let Err(e) = run.finish() {
                return ui.error("Failed to release the state lock", e.to_string());
            }
            code
        }
        other => ui.error("Unknown state subcommand", format!("{other:?} is not one of list, show, rm, mv, pull, push.")),
    }
}

fn mutate(ui: &Ui, run: &mut dyn terrane_state::Run, sub: &str, a: &Args) -> u8 {
    let s = match run.snapshot() {
        Ok(s) => s,
        Err(e) => return ui.error("Failed to read state", e.to_string()),
    };
    match sub {
        "rm" => {
            let mut changes = Vec::new();
            for p in &a.positional {
                let found = matching(&s, p);
                if found.is_empty() {
                    return ui.error("Invalid target address", format!("No matching objects found. To view the available instances, use \"terrane state list\". Please modify the address to reference a specific instance: {p}"));
                }
                for x in found {
                    if let Some(inst) = s.resources.get(&x.resource).and_then(|r| r.instances.get(&x.key)) {
                        for k in inst.deposed.keys() {
                            changes.push(Change::RemoveObject { addr: x.clone(), deposed: Some(k.clone()) });
                        }
                    }
                    changes.push(Change::RemoveObject { addr: x.clone(), deposed: None });
                    println!("Removed {x}");
                }
            }
            match run.persist(&changes) {
                Ok(_) => {
                    println!("Successfully removed {} resource instance(s).", a.positional.len().max(1));
                    0
                }
                Err(e) => ui.error("Failed to persist state", e.to_string()),
            }
        }
        "mv" => {
            let [src, dst] = a.positional.as_slice() else { return ui.error("Invalid arguments", "Usage: terrane state mv SOURCE DESTINATION") };
            let (Ok(from), Ok(to)) = (InstanceAddr::parse(src), InstanceAddr::parse(dst)) else {
                return ui.error("Invalid address", format!("{src:?} or {dst:?} is not a resource instance address."));
            };
            let Some(o) = s.object(&from, None).cloned() else {
                return ui.error("Invalid source address", format!("Cannot move {src}: does not match anything in the current state."));
            };
            if s.object(&to, None).is_some() {
                return ui.error("Invalid target address", format!("Cannot move to {dst}: there is already a resource instance at that address in the current state."));
            }
            let provider = s.resources.get(&from.resource).map(|r| r.provider.clone()).unwrap_or_default();
            let changes = vec![Change::SetObject { addr: to.clone(), deposed: None, provider, object: o }, Change::RemoveObject { addr: from.clone(), deposed: None }];
            match run.persist(&changes) {
                Ok(_) => {
                    println!("Move {src:?} to {dst:?}\nSuccessfully moved 1 object(s).");
                    0
                }
                Err(e) => ui.error("Failed to persist state", e.to_string()),
            }
        }
        "push" => {
            let Some(f) = a.positional.first() else { return ui.error("Missing file", "Usage: terrane state push FILE") };
            let bytes = if f == "-" {
                let mut b = Vec::new();
                let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut b);
                b
            } else {
                match std::fs::read(f) {
                    Ok(b) => b,
                    Err(e) => return ui.error("Failed to read state file", format!("{f}: {e}")),
                }
            };
            let incoming = match terrane_state::tfstate::import(&bytes) {
                Ok(x) => x,
                Err(e) => return ui.error("Invalid state file", e.to_string()),
            };
            if !a.has("force") && !s.resources.is_empty() && incoming.lineage != s.lineage {
                return ui.error("Failed to write state", "cannot import state with lineage different from the current state; use -force to overwrite.");
            }
            match run.replace(&incoming) {
                Ok(_) => 0,
                Err(e) => ui.error("Failed to write state", e.to_string()),
            }
        }
        _ => 1,
    }
}

/// `fmt`: re-indents blocks by two spaces, aligns the `=` of consecutive
/// one-line arguments and trims trailing space; heredoc bodies are kept.
/// `-check` exits 3 when a file is not formatted, as Terraform does.
pub fn fmt(ui: &Ui, dir: &Path, a: &Args) -> u8 {
    let mut files: Vec<std::path::PathBuf> = match std::fs::read_dir(dir) {
        Ok(rd) => rd.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "tf" || e == "tfvars")).collect(),
        Err(e) => return ui.error("Failed to read directory", e.to_string()),
    };
    files.sort();
    let mut unformatted = false;
    for f in files {
        let Ok(text) = std::fs::read_to_string(&f) else { continue };
        if let Err(e) = hcl_edit::parser::parse_body(&text) {
            return ui.error("Invalid syntax", format!("{}: {}", f.display(), e.message()));
        }
        let out = format_text(&text);
        if out != text {
            unformatted = true;
            println!("{}", f.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default());
            if !a.has("check") {
                if let Err(e) = std::fs::write(&f, out) {
                    return ui.error("Failed to write file", e.to_string());
                }
            }
        }
    }
    if a.has("check") && unformatted {
        3
    } else {
        0
    }
}

pub fn format_text(text: &str) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut depth: i64 = 0;
    let mut heredoc: Option<String> = None;
    for raw in text.lines() {
        if let Some(end) = &heredoc {
            if raw.trim() == end {
                heredoc = None;
                lines.push(format!("{}{}", "  ".repeat(depth.max(0) as usize), raw.trim()));
            } else {
                lines.push(raw.to_string());
            }
            continue;
        }
        let t = raw.trim();
        let closes = t.chars().take_while(|c| matches!(c, '}' | ']' | ')')).count() as i64;
        let indent = (depth - closes).max(0) as usize;
        lines.push(if t.is_empty() { String::new() } else { format!("{}{}", "  ".repeat(indent), t) });
        if let Some(pos) = t.find("<<") {
            let tag: String = t[pos + 2..].trim_start_matches('-').chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if !tag.is_empty() {
                heredoc = Some(tag);
            }
        }
        let mut in_str = false;
        let mut prev = ' ';
        for c in t.chars() {
            if c == '"' && prev != '\\' {
                in_str = !in_str;
            } else if !in_str {
                match c {
                    '{' | '[' | '(' => depth += 1,
                    '}' | ']' | ')' => depth -= 1,
                    '#' => break,
                    _ => {}
                }
            }
            prev = c;
        }
    }
    // Align `=` in runs of one-line arguments at the same indentation.
    let mut i = 0;
    while i < lines.len() {
        let key_of = |l: &str| -> Option<(usize, usize)> {
            let ind = l.len() - l.trim_start().len();
            let t = l.trim_start();
            let eq = t.find(" = ").or_else(|| t.find('='))?;
            let key = t[..eq].trim_end();
            if key.is_empty() || !key.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '-' || c == '"') || t.ends_with('{') && !t.contains("= {") {
                return None;
            }
            Some((ind, key.len()))
        };
        let Some((ind, _)) = key_of(&lines[i]) else {
            i += 1;
            continue;
        };
        let mut j = i;
        let mut width = 0;
        while j < lines.len() {
            match key_of(&lines[j]) {
                Some((ind2, w)) if ind2 == ind => {
                    width = width.max(w);
                    j += 1;
                }
                _ => break,
            }
        }
        for line in lines.iter_mut().take(j).skip(i) {
            let t = line.trim_start().to_string();
            let eq = t.find('=').unwrap_or(0);
            let key = t[..eq].trim_end();
            let rest = t[eq + 1..].trim_start();
            *line = format!("{}{key:<width$} = {rest}", " ".repeat(ind));
        }
        i = j.max(i + 1);
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}
