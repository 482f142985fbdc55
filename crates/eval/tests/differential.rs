//! Differential test against real Terraform: every expression of the
//! corpus (`corpus/expressions.txt`, `corpus/functions.txt`) becomes an
//! output of one configuration that also holds `corpus/prelude.tf`;
//! Terraform applies it and terrane evaluates the same files, and each
//! output's type and value must be equal. `corpus/errors.txt` holds
//! expressions that must fail: `terraform validate` and terrane must report
//! the same summary at the same line and column.

use std::collections::BTreeMap;
use std::path::Path;
use terrane_eval::module::{evaluate_locals, input_variables, ModuleScope};
use terrane_eval::{default_ctx, eval_expr};
use terrane_value::{typejson, Value};

fn corpus_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

/// The expressions of a corpus file: non-empty lines that are not comments.
fn corpus(name: &str) -> Vec<String> {
    let path = corpus_dir().join(name);
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Vec::new();
    };
    // A line ending in a heredoc opener (`<<EOT`, `<<-EOT`) continues to
    // the line holding only its tag.
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let tag = l
            .rfind("<<")
            .map(|i| l[i + 2..].trim_start_matches('-').to_string())
            .filter(|t| !t.is_empty() && t.chars().all(|c| c.is_alphanumeric() || c == '_'));
        match tag {
            Some(tag) => {
                let mut expr = String::from(line);
                for more in lines.by_ref() {
                    expr.push('\n');
                    expr.push_str(more);
                    if more.trim() == tag {
                        break;
                    }
                }
                expr.push('\n');
                out.push(expr);
            }
            None => out.push(l.to_string()),
        }
    }
    out
}

/// A directory holding the prelude, the fixture files and `name` with one
/// output per expression.
fn workdir(name: &str, exprs: &[String]) -> tempfile::TempDir {
    let dir = terrane_testkit::temp_dir();
    std::fs::copy(
        corpus_dir().join("prelude.tf"),
        dir.path().join("prelude.tf"),
    )
    .unwrap();
    std::fs::create_dir_all(dir.path().join("files")).unwrap();
    for f in std::fs::read_dir(corpus_dir().join("files")).unwrap() {
        let f = f.unwrap();
        std::fs::copy(f.path(), dir.path().join("files").join(f.file_name())).unwrap();
    }
    // One line per output (the error corpus relies on line = index + 1);
    // heredocs need the block's closing brace on its own line.
    let body: String = exprs
        .iter()
        .enumerate()
        .map(|(i, e)| {
            if e.contains('\n') {
                format!("output \"e{i}\" {{\n  value = {e}}}\n")
            } else {
                format!("output \"e{i}\" {{ value = {e} }}\n")
            }
        })
        .collect();
    std::fs::write(dir.path().join(name), body).unwrap();
    dir
}

/// terrane's view of a directory: each output's value and diagnostics.
fn terrane_outputs(dir: &Path) -> BTreeMap<String, (Value, Vec<terrane_config::Diagnostic>)> {
    let (module, diags) = terrane_config::load_module(dir);
    assert!(
        diags.is_empty(),
        "the corpus configuration loads cleanly: {diags:?}"
    );
    let ctx = default_ctx(dir);
    let cwd = dir.display().to_string();
    let mut scope = ModuleScope::new(&module, [".".into(), ".".into(), cwd], None);
    let d = input_variables(&module, &BTreeMap::new(), &ctx, &mut scope);
    assert!(d.is_empty(), "variables: {d:?}");
    let d = evaluate_locals(&module, &ctx, &mut scope);
    assert!(d.is_empty(), "locals: {d:?}");
    module
        .outputs
        .iter()
        .map(|(name, o)| {
            let e = o.value.as_ref().expect("output value");
            (name.clone(), eval_expr(e, &scope, &ctx))
        })
        .collect()
}

#[test]
fn values_equal_terraform() {
    let Some(tf) = terrane_testkit::terraform() else {
        return;
    };
    let mut exprs = corpus("expressions.txt");
    exprs.extend(corpus("functions.txt"));
    assert!(
        exprs.len() >= 100,
        "the corpus has {} expressions",
        exprs.len()
    );
    let dir = workdir("corpus.tf", &exprs);
    tf.expect(dir.path(), &["init", "-input=false"], 0);
    tf.expect(dir.path(), &["apply", "-auto-approve", "-input=false"], 0);
    let state: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("terraform.tfstate")).unwrap())
            .unwrap();
    let ours = terrane_outputs(dir.path());
    let mut failures = Vec::new();
    for (i, e) in exprs.iter().enumerate() {
        let key = format!("e{i}");
        let theirs = &state["outputs"][&key];
        let (v, diags) = &ours[&key];
        if theirs.is_null() {
            // Terraform does not record outputs whose value is null.
            if !diags.is_empty() || !v.is_null() {
                failures.push(format!(
                    "{e}\n    terrane:   {v:?} {diags:?}\n    terraform: null"
                ));
            }
            continue;
        }
        let their_ty = typejson::from_json(&theirs["type"]).expect("Terraform's type JSON");
        let their_val = terrane_value::json::decode(&theirs["value"], &their_ty)
            .expect("Terraform's value JSON");
        if !diags.is_empty() {
            failures.push(format!(
                "{e}\n    terrane failed: {}\n    terraform: {}",
                diags[0], theirs["value"]
            ));
            continue;
        }
        let same = v.ty() == &their_ty
            && v.unmark_deep().eq_ignoring_refinements(&their_val)
            && !v.has_sensitive();
        if !same {
            let ours_json = terrane_value::json::encode(&v.unmark_deep(), v.ty())
                .map(|j| j.to_string())
                .unwrap_or_else(|e| format!("<{e}>"));
            failures.push(format!(
                "{e}\n    terrane:   {} : {}{}\n    terraform: {} : {}",
                v.ty(),
                ours_json,
                if v.has_sensitive() {
                    " (sensitive)"
                } else {
                    ""
                },
                their_ty,
                theirs["value"]
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} expressions differ from Terraform:\n{}",
        failures.len(),
        exprs.len(),
        failures.join("\n")
    );
    eprintln!(
        "{} expressions equal under Terraform and terrane",
        exprs.len()
    );
}

#[test]
fn errors_equal_terraform() {
    let Some(tf) = terrane_testkit::terraform() else {
        return;
    };
    let exprs = corpus("errors.txt");
    assert!(
        exprs.len() >= 30,
        "the error corpus has {} expressions",
        exprs.len()
    );
    let dir = workdir("errors.tf", &exprs);
    tf.expect(dir.path(), &["init", "-input=false"], 0);
    let out = tf.run(dir.path(), &["validate", "-json"], &[]);
    let report: serde_json::Value =
        serde_json::from_str(&out.stdout).expect("validate -json output");
    // Terraform's first diagnostic per line of errors.tf.
    let mut theirs: BTreeMap<u64, (String, u64)> = BTreeMap::new();
    for d in report["diagnostics"].as_array().into_iter().flatten() {
        if d["range"]["filename"].as_str() != Some("errors.tf") {
            continue;
        }
        let line = d["range"]["start"]["line"].as_u64().unwrap();
        let col = d["range"]["start"]["column"].as_u64().unwrap();
        theirs
            .entry(line)
            .or_insert((d["summary"].as_str().unwrap().to_string(), col));
    }
    let ours = terrane_outputs(dir.path());
    let mut failures = Vec::new();
    for (i, e) in exprs.iter().enumerate() {
        let line = i as u64 + 1;
        let Some((summary, col)) = theirs.get(&line) else {
            failures.push(format!(
                "{e}\n    Terraform reports no error: remove it from errors.txt"
            ));
            continue;
        };
        let (_, diags) = &ours[&format!("e{i}")];
        let got = diags.first().map(|d| {
            let r = d.range.as_ref().expect("diagnostic has a range");
            (
                d.summary.clone(),
                r.start.line as u64,
                r.start.col as u64,
                r.file.to_string(),
            )
        });
        match got {
            Some((s, l, c, f))
                if &s == summary && l == line && c == *col && f.ends_with("errors.tf") => {}
            other => failures.push(format!(
                "{e}\n    terrane:   {other:?}\n    terraform: {summary:?} at {line}:{col}"
            )),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} error cases differ from Terraform:\n{}",
        failures.len(),
        exprs.len(),
        failures.join("\n")
    );
}

#[test]
fn prelude_evaluates_cleanly() {
    // The prelude's variables convert and its locals evaluate without
    // diagnostics in terrane (asserted inside `terrane_outputs`).
    let dir = workdir("empty.tf", &[]);
    assert!(terrane_outputs(dir.path()).is_empty());
}
