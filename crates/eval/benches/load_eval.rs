//! Load + evaluate time of a generated configuration of N resources
//! (`terraform_data` with an object input referring to locals, plus
//! for_each resources), at several sizes so growth per resource shows:
//! the per-resource cost must stay flat as N grows: the benchmark fails
//! when the largest size costs more than twice as much per resource as
//! the smallest (medians of several runs).
//!
//! Run: `cargo bench -p terrane-eval --bench load_eval` (N defaults to
//! 1000,5000,10000,20000 or is taken from `LOAD_EVAL_SIZES=10000`). Under
//! `cargo test --all-targets` (no `--bench` argument) it loads and
//! evaluates one small configuration once, so the benchmark keeps working;
//! it times nothing then.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;
use std::time::{Duration, Instant};
use terrane_eval::module::{evaluate_locals, input_variables, ModuleScope};
use terrane_eval::{default_ctx, eval_expr, MapScope};
use terrane_value::Value;

fn generate(dir: &Path, n: usize) {
    let mut s = String::new();
    s.push_str("variable \"env\" {\n  type    = string\n  default = \"bench\"\n}\n\n");
    s.push_str("locals {\n  tags  = { env = var.env, team = \"infra\", owner = \"terrane\" }\n  names = [for i in range(100) : \"n-${i}\"]\n  sizes = { small = 1, large = 8 }\n}\n\n");
    s.push_str("resource \"terraform_data\" \"each\" {\n  for_each = toset(local.names)\n  input    = { name = each.key, tags = merge(local.tags, { n = each.value }) }\n}\n\n");
    for i in 0..n {
        writeln!(s, "resource \"terraform_data\" \"r_{i}\" {{\n  input = {{\n    name = \"x-${{var.env}}-{i}\"\n    tags = local.tags\n    n    = {i} * 2\n    size = lookup(local.sizes, \"small\", 0)\n  }}\n}}\n").unwrap();
    }
    std::fs::write(dir.join("main.tf"), s).unwrap();
}

struct Figures {
    load: Duration,
    check: Duration,
    eval: Duration,
    exprs: usize,
}

fn run(dir: &Path) -> Figures {
    let t = Instant::now();
    let (module, diags) = terrane_config::load_module(dir);
    let load = t.elapsed();
    assert!(diags.is_empty(), "{diags:?}");
    let t = Instant::now();
    let config = terrane_config::Config {
        module,
        dir: dir.to_path_buf(),
        children: BTreeMap::new(),
    };
    let d = terrane_config::validate_references(&config);
    assert!(d.is_empty(), "{d:?}");
    let check = t.elapsed();
    let module = &config.module;
    let t = Instant::now();
    let ctx = default_ctx(dir);
    let each = MapScope::new().with(
        "each",
        Value::object_from([
            ("key", Value::string("n-0")),
            ("value", Value::string("n-0")),
        ]),
    );
    let mut scope = ModuleScope::new(module, [".".into(), ".".into(), ".".into()], Some(&each));
    assert!(input_variables(module, &BTreeMap::new(), &ctx, &mut scope).is_empty());
    assert!(evaluate_locals(module, &ctx, &mut scope).is_empty());
    let mut exprs = 0;
    for r in &module.resources {
        for e in r.attributes.values() {
            let (v, d) = eval_expr(e, &scope, &ctx);
            assert!(d.is_empty() && v.is_known(), "{d:?}");
            exprs += 1;
        }
    }
    Figures {
        load,
        check,
        eval: t.elapsed(),
        exprs,
    }
}

/// Timed runs per size under `cargo bench`, after one warm-up run.
const RUNS: usize = 5;

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        let dir = tempfile::tempdir().unwrap();
        generate(dir.path(), 50);
        let f = run(dir.path());
        assert_eq!(f.exprs, 51, "one input per resource");
        return;
    }
    let sizes: Vec<usize> = std::env::var("LOAD_EVAL_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1000, 5000, 10000, 20000]);
    let mut per_resource = Vec::new();
    for &n in &sizes {
        let dir = tempfile::tempdir().unwrap();
        generate(dir.path(), n);
        let bytes = std::fs::metadata(dir.path().join("main.tf")).unwrap().len();
        run(dir.path()); // warm-up: file cache, allocator
        let mut runs: Vec<Figures> = (0..RUNS).map(|_| run(dir.path())).collect();
        runs.sort_by_key(|f| f.load + f.check + f.eval);
        let (fast, f, slow) = (&runs[0], &runs[RUNS / 2], &runs[RUNS - 1]);
        let text = std::fs::read_to_string(dir.path().join("main.tf")).unwrap();
        let t = Instant::now();
        terrane_config::hcl::parser::parse_body(&text).unwrap();
        let syntax = t.elapsed();
        let total = f.load + f.check + f.eval;
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        println!(
            "{n:>6} resources ({:.1} MB), median of {RUNS}: load {:>7.1} ms (of which terrane-hcl syntax {:>7.1} ms), reference check {:>5.1} ms, evaluate {} expressions {:>7.1} ms, total {:>7.1} ms (min {:.1}, max {:.1}) = {:.1} us/resource",
            bytes as f64 / 1e6,
            ms(f.load),
            ms(syntax),
            ms(f.check),
            f.exprs,
            ms(f.eval),
            ms(total),
            ms(fast.load + fast.check + fast.eval),
            ms(slow.load + slow.check + slow.eval),
            total.as_secs_f64() * 1e6 / n as f64,
        );
        per_resource.push((n, total.as_secs_f64() / n as f64));
    }
    if let (Some(&(n0, first)), Some(&(n1, last))) = (per_resource.first(), per_resource.last()) {
        if last > 2.0 * first {
            eprintln!(
                "per-resource cost is not flat: {:.1} us at {n1} resources, {:.1} us at {n0}",
                last * 1e6,
                first * 1e6
            );
            std::process::exit(1);
        }
    }
}
