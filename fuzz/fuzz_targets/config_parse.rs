//! Fuzz target: the configuration front end end to end must never panic on
//! any input. The input is read as a native `.tf` file and as a
//! `.tf.json` file, and, split at lines `#--file NAME`, as the files of
//! one module (override files, `.tofu` files and JSON files among them);
//! each module goes through the loader, the static
//! reference check, input variables and locals, and the evaluation of
//! every expression the model holds with terrane-eval. Every problem must
//! come back as a diagnostic with 1-based positions.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::collections::BTreeMap;
use std::path::Path;
use terrane_config::{Config, Expr, Module, NestedBlock};
use terrane_eval::module::{evaluate_locals, input_variables, ModuleScope};

fn nested<'a>(b: &'a NestedBlock, out: &mut Vec<&'a Expr>) {
    if let Some(d) = &b.dynamic {
        out.push(&d.for_each);
        out.extend(&d.labels);
    }
    out.extend(b.attributes.values());
    for nb in &b.blocks {
        nested(nb, out);
    }
}

fn exprs(m: &Module) -> Vec<&Expr> {
    let mut out: Vec<&Expr> = m.locals.values().collect();
    for o in m.outputs.values() {
        out.extend(o.value.iter().chain(&o.depends_on));
        out.extend(
            o.preconditions
                .iter()
                .flat_map(|r| r.condition.iter().chain(&r.error_message)),
        );
    }
    for v in m.variables.values() {
        out.extend(v.default.iter());
        out.extend(
            v.validations
                .iter()
                .flat_map(|r| r.condition.iter().chain(&r.error_message)),
        );
    }
    for r in m
        .resources
        .iter()
        .chain(&m.ephemeral_resources)
        .chain(m.checks.iter().flat_map(|c| &c.data))
    {
        out.extend(
            r.count
                .iter()
                .chain(&r.for_each)
                .chain(&r.provider)
                .chain(&r.depends_on),
        );
        out.extend(r.attributes.values());
        out.extend(&r.lifecycle.replace_triggered_by_entries);
        out.extend(
            r.lifecycle
                .preconditions
                .iter()
                .chain(&r.lifecycle.postconditions)
                .flat_map(|r| r.condition.iter().chain(&r.error_message)),
        );
        for b in &r.body {
            nested(b, &mut out);
        }
    }
    for c in m.module_calls.values() {
        out.extend(c.inputs.values().chain(&c.count).chain(&c.for_each));
    }
    for p in &m.providers {
        out.extend(p.attributes.values());
    }
    for i in &m.imports {
        out.extend(i.id.iter().chain(&i.for_each).chain(&i.to));
    }
    out
}

fn positions_ok(diags: &[terrane_config::Diagnostic]) {
    for d in diags {
        if let Some(r) = &d.range {
            assert!(
                r.start.line >= 1 && r.start.col >= 1,
                "diagnostic positions are 1-based: {d}"
            );
        }
    }
}

/// The input as the files of one module: `#--file NAME` lines start a
/// file (text before the first such line is `main.tf`).
fn files(text: &str) -> Vec<(String, String)> {
    let mut out = vec![("main.tf".to_string(), String::new())];
    for line in text.split_inclusive('\n') {
        match line.trim_end().strip_prefix("#--file ") {
            Some(name) => out.push((name.trim().to_string(), String::new())),
            None => out.last_mut().expect("one file").1.push_str(line),
        }
    }
    out
}

fn run(name: &str, text: &str) {
    let (module, diags) = terrane_config::parse_str(name, text);
    check(module, &diags);
}

fn check(module: Module, diags: &[terrane_config::Diagnostic]) {
    positions_ok(diags);
    let config = Config {
        module,
        dir: ".".into(),
        children: BTreeMap::new(),
    };
    positions_ok(&terrane_config::validate_references(&config));
    let module = &config.module;
    let ctx = terrane_eval::func::FuncCtx {
        base_dir: Path::new("/nonexistent-fuzz-dir"),
        render_template: &terrane_eval::render_template,
        pure_only: true,
        plan_timestamp: None,
        console: false,
    };
    let mut scope = ModuleScope::new(module, [".".into(), ".".into(), ".".into()], None);
    positions_ok(&input_variables(module, &BTreeMap::new(), &ctx, &mut scope));
    positions_ok(&evaluate_locals(module, &ctx, &mut scope));
    for e in exprs(module) {
        positions_ok(&terrane_eval::eval_expr(e, &scope, &ctx).1);
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    run("fuzz.tf", text);
    run("fuzz.tf.json", text);
    if text.contains("#--file ") {
        let (module, diags) = terrane_config::load_files(files(text));
        check(module, &diags);
    }
});
