//! The diagnostics code recognises carry a typed id (issue 13 item 2): the
//! evaluator places a missing-argument error by its id, not by its text,
//! and the engine rewords a module call's missing variable by its id.

use std::collections::BTreeMap;
use std::path::Path;
use terrane_config::{DiagId, Diagnostic};
use terrane_eval::module::{input_variables, ModuleScope};
use terrane_eval::{default_ctx, eval_str, MapScope};

/// One expression case: the id and `line:col` of its one diagnostic.
struct Case {
    name: &'static str,
    src: &'static str,
    id: Option<DiagId>,
    at: &'static str,
}

fn check(c: &Case, diags: &[Diagnostic]) {
    assert_eq!(diags.len(), 1, "{}: {diags:?}", c.name);
    let d = &diags[0];
    assert_eq!(d.id, c.id, "{}: id of {d}", c.name);
    let r = d.range.as_ref().expect("a range");
    assert_eq!(
        format!("{}:{}", r.start.line, r.start.col),
        c.at,
        "{}",
        c.name
    );
}

#[test]
fn item2_function_call_errors_carry_typed_ids() {
    let cases = [
        Case {
            name: "not_enough_arguments_at_closing_parenthesis",
            src: "upper()",
            id: Some(DiagId::NotEnoughFunctionArguments),
            at: "1:7",
        },
        Case {
            name: "not_enough_arguments_of_variadic",
            src: "format()",
            id: Some(DiagId::NotEnoughFunctionArguments),
            at: "1:8",
        },
        Case {
            name: "too_many_arguments_at_first_extra",
            src: "upper(\"a\", 2)",
            id: Some(DiagId::TooManyFunctionArguments),
            at: "1:12",
        },
        Case {
            name: "wrong_argument_has_no_id",
            src: "abs([1])",
            id: None,
            at: "1:5",
        },
        Case {
            name: "unknown_function_has_no_id",
            src: "upperr(\"x\")",
            id: None,
            at: "1:1",
        },
    ];
    let scope = MapScope::new();
    let ctx = default_ctx(Path::new("."));
    for c in &cases {
        let (_, diags) = eval_str("t.tf", c.src, &scope, &ctx);
        check(c, &diags);
    }
}

#[test]
fn item2_missing_required_variable_carries_typed_id() {
    let (module, diags) = terrane_config::parse_str(
        "main.tf",
        "variable \"a\" {}\nvariable \"b\" {\n  default = 1\n}\n",
    );
    assert!(diags.is_empty(), "{diags:?}");
    let ctx = default_ctx(Path::new("."));
    let mut scope = ModuleScope::new(&module, [".".into(), ".".into(), ".".into()], None);
    let diags = input_variables(&module, &BTreeMap::new(), &ctx, &mut scope);
    let ids: Vec<_> = diags.iter().map(|d| d.id).collect();
    assert_eq!(ids, [Some(DiagId::NoValueForRequiredVariable)], "{diags:?}");
}
