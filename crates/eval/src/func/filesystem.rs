//! Filesystem functions: the only functions that touch the disk. Relative
//! paths resolve against [`FuncCtx::base_dir`]; path-string functions
//! (`dirname`, `basename`) follow Go's `path/filepath` on Unix.

use super::spec::{arg_err, call_err, p_str, s, Func, Param, Res};
use super::FuncCtx;
use std::path::{Component, Path, PathBuf};
use terrane_value::{Type, Value};

pub(super) const NAMES: &[&str] = &[
    "file",
    "fileexists",
    "fileset",
    "templatefile",
    "abspath",
    "dirname",
    "basename",
    "pathexpand",
];

pub(super) fn lookup(name: &str) -> Option<Func> {
    Some(match name {
        "file" => Func::new(vec![p_str("path")], Type::String, file),
        "fileexists" => Func::new(vec![p_str("path")], Type::Bool, fileexists),
        "fileset" => Func::new(
            vec![p_str("path"), p_str("pattern")],
            Type::set(Type::String),
            fileset,
        ),
        "templatefile" => Func::new(
            vec![p_str("path"), Param::new("vars", Type::Dynamic).unknown()],
            Type::Dynamic,
            templatefile,
        ),
        "abspath" => Func::new(vec![p_str("path")], Type::String, |a, _, c| {
            let p = resolve(c, s(&a[0]));
            let p = if p.is_absolute() {
                p
            } else {
                std::env::current_dir().unwrap_or_default().join(p)
            };
            Ok(Value::string(clean(&p).to_string_lossy().into_owned()))
        }),
        "dirname" => Func::new(vec![p_str("path")], Type::String, |a, _, _| {
            Ok(Value::string(dirname(s(&a[0]))))
        }),
        "basename" => Func::new(vec![p_str("path")], Type::String, |a, _, _| {
            Ok(Value::string(basename(s(&a[0]))))
        }),
        "pathexpand" => Func::new(vec![p_str("path")], Type::String, |a, _, _| {
            Ok(Value::string(expand_home(s(&a[0]))))
        }),
        _ => return None,
    })
}

fn expand_home(p: &str) -> String {
    if p == "~" || p.starts_with("~/") {
        if let Ok(home) = std::env::var("HOME") {
            return format!("{home}{}", &p[1..]);
        }
    }
    p.to_string()
}

fn resolve(ctx: &FuncCtx, p: &str) -> PathBuf {
    let p = PathBuf::from(expand_home(p));
    if p.is_absolute() {
        p
    } else {
        ctx.base_dir.join(p)
    }
}

/// Lexical cleanup like Go's `filepath.Clean` (no symlink resolution).
fn clean(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

fn file(a: &[Value], _: &Type, ctx: &FuncCtx) -> Res<Value> {
    let name = s(&a[0]);
    let bytes = std::fs::read(resolve(ctx, name)).or_else(|_| {
        arg_err(
            0,
            format!(
                "no file exists at \"{name}\"; this function works only with files that are distributed as part of the configuration source code, so if this file will be created by a resource in this configuration you must instead obtain this result from an attribute of that resource"
            ),
        )
    })?;
    match String::from_utf8(bytes) {
        Ok(t) => Ok(Value::string(t)),
        Err(_) => arg_err(
            0,
            format!("contents of \"{name}\" are not valid UTF-8; use the filebase64 function to obtain the Base64 encoded contents or the other file functions (e.g. filemd5, filesha256) to obtain file hashing results instead"),
        ),
    }
}

fn fileexists(a: &[Value], _: &Type, ctx: &FuncCtx) -> Res<Value> {
    let path = resolve(ctx, s(&a[0]));
    match std::fs::metadata(&path) {
        Ok(m) if m.is_file() => Ok(Value::bool(true)),
        Ok(_) => call_err(format!("\"{}\" is a directory, not a file", s(&a[0]))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Value::bool(false)),
        Err(e) => call_err(format!("failed to stat {:?}: {e}", s(&a[0]))),
    }
}

fn fileset(a: &[Value], _: &Type, ctx: &FuncCtx) -> Res<Value> {
    let root = resolve(ctx, s(&a[0]));
    let pattern: Vec<char> = s(&a[1]).chars().collect();
    let mut found = Vec::new();
    walk(&root, "", &mut found);
    let out: Vec<Value> = found
        .into_iter()
        .filter(|rel| glob_match(&pattern, &rel.chars().collect::<Vec<_>>()))
        .map(Value::string)
        .collect();
    Ok(Value::set(Type::String, out))
}

fn walk(dir: &Path, prefix: &str, out: &mut Vec<String>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let rel = if prefix.is_empty() {
            name
        } else {
            format!("{prefix}/{name}")
        };
        let Ok(meta) = std::fs::metadata(e.path()) else {
            continue;
        };
        if meta.is_dir() {
            walk(&e.path(), &rel, out);
        } else {
            out.push(rel);
        }
    }
}

/// Glob matching as Terraform's `fileset` (doublestar): `*` and `?` within
/// one path segment, `**` across segments, `[...]` classes, `{a,b}`.
pub(crate) fn glob_match(p: &[char], t: &[char]) -> bool {
    if p.is_empty() {
        return t.is_empty();
    }
    match p[0] {
        '*' if p.get(1) == Some(&'*') => {
            let rest = if p.get(2) == Some(&'/') {
                &p[3..]
            } else {
                &p[2..]
            };
            (0..=t.len()).any(|i| (i == 0 || t[i - 1] == '/') && glob_match(rest, &t[i..]))
                || glob_match(rest, t)
        }
        '*' => (0..=t.len())
            .take_while(|&i| i == 0 || t[i - 1] != '/')
            .any(|i| glob_match(&p[1..], &t[i..])),
        '?' => !t.is_empty() && t[0] != '/' && glob_match(&p[1..], &t[1..]),
        '[' => {
            let Some(close) = p.iter().skip(1).position(|&c| c == ']').map(|i| i + 1) else {
                return !t.is_empty() && t[0] == '[' && glob_match(&p[1..], &t[1..]);
            };
            if t.is_empty() || t[0] == '/' {
                return false;
            }
            let class = &p[1..close];
            let (neg, class) = match class.first() {
                Some('!') | Some('^') => (true, &class[1..]),
                _ => (false, class),
            };
            let mut hit = false;
            let mut i = 0;
            while i < class.len() {
                if i + 2 < class.len() && class[i + 1] == '-' {
                    hit |= class[i] <= t[0] && t[0] <= class[i + 2];
                    i += 3;
                } else {
                    hit |= class[i] == t[0];
                    i += 1;
                }
            }
            hit != neg && glob_match(&p[close + 1..], &t[1..])
        }
        '{' => {
            let Some(close) = p.iter().position(|&c| c == '}') else {
                return false;
            };
            let rest = &p[close + 1..];
            p[1..close].split(|&c| c == ',').any(|alt| {
                let mut q: Vec<char> = alt.to_vec();
                q.extend_from_slice(rest);
                glob_match(&q, t)
            })
        }
        '\\' if p.len() > 1 => !t.is_empty() && t[0] == p[1] && glob_match(&p[2..], &t[1..]),
        c => !t.is_empty() && t[0] == c && glob_match(&p[1..], &t[1..]),
    }
}

fn valid_ident(name: &str) -> bool {
    let mut cs = name.chars();
    cs.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && cs.all(|c| c.is_alphanumeric() || c == '_' || c == '-')
}

fn templatefile(a: &[Value], _: &Type, ctx: &FuncCtx) -> Res<Value> {
    let name = s(&a[0]);
    let path = resolve(ctx, name);
    let text = match std::fs::read(&path) {
        Ok(b) => String::from_utf8(b).or_else(|_| arg_err(0, format!("contents of \"{name}\" are not valid UTF-8")))?,
        Err(_) => return arg_err(0, format!("no file exists at \"{name}\"; this function works only with files that are distributed as part of the configuration source code, so if this file will be created by a resource in this configuration you must instead obtain this result from an attribute of that resource")),
    };
    let vars = &a[1];
    if !matches!(vars.ty(), Type::Object(_) | Type::Map(_) | Type::Dynamic) {
        return arg_err(1, "invalid vars value: must be a map");
    }
    if vars.is_null() {
        return arg_err(1, "invalid vars value: must be a map");
    }
    for k in vars.entries().into_iter().flat_map(|m| m.keys()) {
        if !valid_ident(k) {
            return arg_err(1, format!("invalid template variable name {k:?}: must start with a letter, followed by zero or more letters, digits, and underscores"));
        }
    }
    (ctx.render_template)(&text, &path, vars).or_else(call_err)
}

/// Go's `filepath.Dir`.
pub(crate) fn dirname(p: &str) -> String {
    let dir = match p.rfind('/') {
        Some(i) => &p[..=i],
        None => "",
    };

    go_clean(dir)
}

/// Go's `filepath.Base`.
pub(crate) fn basename(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let t = p.trim_end_matches('/');
    if t.is_empty() {
        return "/".into();
    }
    t.rsplit('/').next().unwrap_or(t).to_string()
}

/// Go's `path.Clean` on a slash path.
fn go_clean(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let rooted = p.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|l| *l != "..") {
                    parts.pop();
                } else if !rooted {
                    parts.push("..");
                }
            }
            other => parts.push(other),
        }
    }
    let body = parts.join("/");
    match (rooted, body.is_empty()) {
        (true, _) => format!("/{body}"),
        (false, true) => ".".into(),
        (false, false) => body,
    }
}

#[cfg(test)]
#[path = "filesystem_tests.rs"]
mod tests;
