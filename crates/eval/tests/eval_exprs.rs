//! Table tests of the evaluator, one construct family per test: every
//! case names what it shows, gives the source and the expected result
//! (type and value, unknowns with their refinements, sensitive marks) or
//! the expected diagnostic (summary at line:column).

use std::collections::BTreeMap;
use std::path::Path;
use terrane_eval::{default_ctx, eval_str, MapScope};
use terrane_value::{Kind, Refinements, Type, Value};

/// A compact rendering that shows what matters: types, unknowns with
/// refinements, nulls and sensitive marks at every level.
fn show(v: &Value) -> String {
    let inner = match v.kind() {
        Kind::Null => format!("null({})", v.ty()),
        Kind::Unknown(_) => match v.refinements() {
            Some(r) => format!("unknown({}, {r})", v.ty()),
            None => format!("unknown({})", v.ty()),
        },
        Kind::String(s) => format!("{s:?}"),
        Kind::Number(n) => n.to_string(),
        Kind::Bool(b) => b.to_string(),
        Kind::Seq(es) | Kind::Set(es) => {
            let open = match v.ty() {
                Type::List(_) => "list[",
                Type::Set(_) => "set[",
                _ => "[",
            };
            format!(
                "{open}{}]",
                es.iter().map(show).collect::<Vec<_>>().join(", ")
            )
        }
        Kind::Map(m) => {
            let open = if matches!(v.ty(), Type::Map(_)) {
                "map{"
            } else {
                "{"
            };
            format!(
                "{open}{}}}",
                m.iter()
                    .map(|(k, x)| format!("{k}={}", show(x)))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    };
    if v.is_sensitive() {
        format!("sensitive({inner})")
    } else {
        inner
    }
}

fn scope() -> MapScope {
    let obj = |pairs: &[(&str, Value)]| {
        Value::object(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect::<BTreeMap<_, _>>(),
        )
    };
    let var = obj(&[
        ("name", Value::string("web")),
        ("n", Value::number(3)),
        (
            "list",
            Value::list(
                Type::String,
                vec![Value::string("a"), Value::string("b"), Value::string("c")],
            ),
        ),
        (
            "set",
            Value::set(Type::String, vec![Value::string("y"), Value::string("x")]),
        ),
        (
            "map",
            Value::map(
                Type::Number,
                [
                    ("one".to_string(), Value::number(1)),
                    ("two".to_string(), Value::number(2)),
                ]
                .into(),
            ),
        ),
        ("unknown_str", Value::unknown(Type::String)),
        (
            "unknown_nn",
            Value::unknown_refined(Type::String, Refinements::not_null()),
        ),
        ("unknown_num", Value::unknown(Type::Number)),
        ("unknown_bool", Value::unknown(Type::Bool)),
        ("unknown_list", Value::unknown(Type::list(Type::String))),
        (
            "unknown_obj",
            Value::unknown(Type::object([("id", Type::String)])),
        ),
        ("unknown_any", Value::unknown(Type::Dynamic)),
        ("secret", Value::string("hunter2").mark_sensitive()),
        ("secret_n", Value::number(7).mark_sensitive()),
        ("null_str", Value::null(Type::String)),
        (
            "missing_obj",
            Value::null(Type::object([("x", Type::String)])),
        ),
        (
            "people",
            Value::list(
                Type::Dynamic,
                vec![
                    obj(&[("name", Value::string("ann")), ("age", Value::number(30))]),
                    obj(&[("name", Value::string("bob")), ("age", Value::number(40))]),
                ],
            ),
        ),
        ("one_obj", obj(&[("name", Value::string("solo"))])),
        (
            "tuple",
            Value::tuple(vec![Value::string("t"), Value::number(1)]),
        ),
    ]);
    MapScope::new().with("var", var)
}

#[track_caller]
fn check(cases: &[(&str, &str, &str)]) {
    let scope = scope();
    let ctx = default_ctx(Path::new("."));
    let mut failures = Vec::new();
    for (name, src, want) in cases {
        let (v, diags) = eval_str("t.tf", src, &scope, &ctx);
        let got = match diags.first() {
            Some(d) => {
                let at = d
                    .range
                    .as_ref()
                    .map(|r| format!("{}:{}", r.start.line, r.start.col))
                    .unwrap_or_default();
                format!("error: {} @{at}", d.summary)
            }
            None => show(&v),
        };
        if got != *want {
            failures.push(format!("case {name}: {src}\n   got: {got}\n  want: {want}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failing case(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn literals_and_collections() {
    check(&[
        ("null", "null", "null(any)"),
        ("bool", "true", "true"),
        ("integer", "42", "42"),
        ("decimal", "1.50", "1.5"),
        ("exponent", "1.5e3", "1500"),
        (
            "big_integer",
            "123456789012345678901234567890",
            "123456789012345678901234567890",
        ),
        ("string_escapes", r#""a\tb\"c""#, "\"a\\tb\\\"c\""),
        ("tuple", r#"[1, "a", true]"#, r#"[1, "a", true]"#),
        ("empty_tuple", "[]", "[]"),
        ("object", r#"{a = 1, b = "x"}"#, r#"{a=1, b="x"}"#),
        ("object_colon", r#"{"a b": 1}"#, "{a b=1}"),
        ("object_expr_key", r#"{(var.name) = 1}"#, "{web=1}"),
        ("object_number_key", r#"{(1) = "x"}"#, r#"{1="x"}"#),
        (
            "object_unknown_key",
            r#"{(var.unknown_str) = 1}"#,
            "unknown(any)",
        ),
        (
            "object_null_key",
            r#"{(var.null_str) = 1}"#,
            "error: Null value as key @1:19",
        ),
        (
            "object_sensitive_key",
            r#"{(var.secret) = 1}"#,
            "sensitive({hunter2=1})",
        ),
        (
            "nested",
            r#"{a = [1, {b = null}]}"#,
            "{a=[1, {b=null(any)}]}",
        ),
        ("paren", "(1)", "1"),
    ]);
}

#[test]
fn operators() {
    check(&[
        ("add", "1 + 2", "3"),
        ("precedence", "1 + 2 * 3", "7"),
        ("parens", "(1 + 2) * 3", "9"),
        ("sub_neg", "1 - 2.5", "-1.5"),
        ("division_third", "1 / 3", "0.33333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333335"),
        ("modulo", "-7 % 3", "-1"),
        ("string_operand_converted", r#""2" * 3"#, "6"),
        ("decimal_sum_exact", "0.1 + 0.2 == 0.3", "true"),
        ("bad_operand", r#""a" + 1"#, "error: Invalid operand @1:1"),
        ("bad_right_operand", r#"1 + "a""#, "error: Invalid operand @1:5"),
        ("null_operand", "var.null_str + 1", "error: Operation failed @1:1"),
        ("unknown_operand", "var.unknown_num + 1", "unknown(number, not null)"),
        ("sensitive_operand", "var.secret_n + 1", "sensitive(8)"),
        ("negate", "-var.n", "-3"),
        ("not", "!true", "false"),
        ("not_unknown", "!var.unknown_bool", "unknown(bool, not null)"),
        ("compare", "2 > 1", "true"),
        ("compare_eq", "2 >= 2", "true"),
        ("compare_unknown", "var.unknown_num < 1", "unknown(bool, not null)"),
        ("and", "true && false", "false"),
        ("or", "false || true", "true"),
        ("and_unknown_false", "var.unknown_bool && false", "false"),
        ("or_unknown_true", "var.unknown_bool || true", "true"),
        ("and_unknown", "var.unknown_bool && true", "unknown(bool, not null)"),
        ("and_bad", "1 && true", "error: Invalid operand @1:1"),
        ("eq_strings", r#""a" == "a""#, "true"),
        ("eq_types_differ", r#"1 == "1""#, "false"),
        ("eq_null_null", "null == null", "true"),
        ("eq_typed_null", "var.null_str == null", "true"),
        ("neq_null", "var.name != null", "true"),
        ("eq_unknown", r#"var.unknown_str == "a""#, "unknown(bool, not null)"),
        ("eq_unknown_null", "var.unknown_str == null", "unknown(bool, not null)"),
        ("neq_not_null_unknown_null", "var.unknown_nn != null", "true"),
        ("eq_unknown_other_type", "var.unknown_str == 1", "false"),
        ("eq_tuples", r#"[1, "a"] == [1, "a"]"#, "true"),
        ("eq_tuples_differ", "[1, 2] == [1, 3]", "false"),
        ("eq_list_tuple", r#"var.list == ["a", "b", "c"]"#, "false"),
        ("eq_objects", "{a = 1} == {a = 1}", "true"),
        ("eq_sensitive", r#"var.secret == "x""#, "sensitive(false)"),
    ]);
}

#[test]
fn conditionals() {
    check(&[
        ("true_branch", r#"true ? "a" : "b""#, r#""a""#),
        ("false_branch", r#"false ? "a" : "b""#, r#""b""#),
        ("unified_to_string", r#"true ? 1 : "a""#, r#""1""#),
        (
            "unknown_condition",
            r#"var.unknown_bool ? "a" : "b""#,
            "unknown(string)",
        ),
        (
            "null_condition",
            r#"var.null_str == null ? "yes" : "no""#,
            r#""yes""#,
        ),
        (
            "condition_null",
            r#"null ? 1 : 2"#,
            "error: Null condition @1:1",
        ),
        (
            "condition_not_bool",
            r#""x" ? 1 : 2"#,
            "error: Incorrect condition type @1:1",
        ),
        ("condition_string_bool", r#""true" ? 1 : 2"#, "1"),
        (
            "only_chosen_branch_errors",
            r#"var.null_str != null ? var.null_str.x : "fallback""#,
            r#""fallback""#,
        ),
        (
            "chosen_branch_error",
            r#"true ? var.nope : 1"#,
            "error: Unsupported attribute @1:11",
        ),
        (
            "inconsistent",
            r#"true ? [1] : {a = 1}"#,
            "error: Inconsistent conditional result types @1:8",
        ),
        (
            "sensitive_condition",
            r#"var.secret == "x" ? 1 : 2"#,
            "sensitive(2)",
        ),
        ("null_branch", r#"false ? "a" : null"#, "null(string)"),
    ]);
}

#[test]
fn traversals() {
    check(&[
        ("attr", "var.name", r#""web""#),
        ("index_list", "var.list[1]", r#""b""#),
        ("index_string_key", r#"var.list["2"]"#, r#""c""#),
        ("legacy_index", "var.list.0", r#""a""#),
        ("index_map", r#"var.map["two"]"#, "2"),
        ("map_attr", "var.map.one", "1"),
        ("index_tuple", "var.tuple[1]", "1"),
        (
            "index_out_of_range",
            "var.list[5]",
            "error: Invalid index @1:9",
        ),
        (
            "index_negative",
            "var.list[-1]",
            "error: Invalid index @1:9",
        ),
        (
            "index_fraction",
            "var.list[0.5]",
            "error: Invalid index @1:9",
        ),
        (
            "index_missing_key",
            r#"var.map["three"]"#,
            "error: Invalid index @1:8",
        ),
        ("index_set", "var.set[0]", "error: Invalid index @1:8"),
        (
            "index_null_string",
            "var.null_str[0]",
            "error: Invalid index @1:13",
        ),
        (
            "index_null_object",
            "var.missing_obj[0]",
            "error: Attempt to index null value @1:16",
        ),
        (
            "index_null_key",
            "var.list[null]",
            "error: Invalid index @1:9",
        ),
        (
            "index_string_value",
            "var.name[0]",
            "error: Invalid index @1:9",
        ),
        (
            "missing_attr",
            "var.nope",
            "error: Unsupported attribute @1:4",
        ),
        (
            "missing_map_key",
            "var.map.three",
            "error: Missing map element @1:8",
        ),
        (
            "attr_of_null_string",
            "var.null_str.x",
            "error: Unsupported attribute @1:13",
        ),
        (
            "attr_of_null_object",
            "var.missing_obj.x",
            "error: Attempt to get attribute from null value @1:16",
        ),
        (
            "attr_of_string",
            "var.name.x",
            "error: Unsupported attribute @1:9",
        ),
        (
            "attr_of_list",
            "var.people.name",
            "error: Unsupported attribute @1:11",
        ),
        ("unknown_variable", "nope.x", "error: Unknown variable @1:1"),
        (
            "attr_of_unknown_object",
            "var.unknown_obj.id",
            "unknown(string)",
        ),
        (
            "attr_missing_on_unknown_object",
            "var.unknown_obj.nope",
            "error: Unsupported attribute @1:16",
        ),
        ("attr_of_unknown_any", "var.unknown_any.x.y", "unknown(any)"),
        (
            "index_unknown_list",
            "var.unknown_list[0]",
            "unknown(string)",
        ),
        (
            "index_unknown_key",
            "var.list[var.unknown_num]",
            "unknown(string)",
        ),
        (
            "index_sensitive_key",
            "var.list[var.secret_n - 6]",
            r#"sensitive("b")"#,
        ),
        ("splat_full", "var.people[*].name", r#"list["ann", "bob"]"#),
        ("splat_attr", "var.people.*.age", "list[30, 40]"),
        (
            "splat_index_after",
            "var.people[*].name[0]",
            "error: Invalid index @1:19",
        ),
        (
            "splat_then_index_attr_splat",
            "var.people.*.name[1]",
            r#""bob""#,
        ),
        ("splat_single_value", "var.one_obj[*].name", r#"["solo"]"#),
        ("splat_null", "var.null_str[*]", "[]"),
        (
            "splat_unknown_list",
            "var.unknown_list[*]",
            "unknown(list(string))",
        ),
        ("splat_set", "var.set[*]", r#"list["x", "y"]"#),
        ("splat_tuple", "var.tuple[*]", r#"["t", 1]"#),
    ]);
}

#[test]
fn templates() {
    check(&[
        ("plain", r#""hello""#, r#""hello""#),
        ("interpolation", r#""name=${var.name}""#, r#""name=web""#),
        ("number_interpolation", r#""n=${var.n + 1}""#, r#""n=4""#),
        ("bool_interpolation", r#""${true}!""#, r#""true!""#),
        ("unwrapped_single", r#""${var.n}""#, "3"),
        (
            "unwrapped_list",
            r#""${var.list}""#,
            r#"list["a", "b", "c"]"#,
        ),
        ("escape_dollar", r#""$${x}""#, r#""${x}""#),
        ("escape_percent", r#""%%{x}""#, r#""%{x}""#),
        (
            "unknown_prefix",
            r#""id-${var.unknown_str}-x""#,
            r#"unknown(string, not null, starts with "id-")"#,
        ),
        (
            "unknown_first",
            r#""${var.unknown_str}-x""#,
            "unknown(string, not null)",
        ),
        (
            "sensitive",
            r#""pw=${var.secret}""#,
            r#"sensitive("pw=hunter2")"#,
        ),
        (
            "null_interpolation",
            r#""a${var.null_str}""#,
            "error: Invalid template interpolation value @1:5",
        ),
        (
            "list_interpolation",
            r#""a${var.list}""#,
            "error: Invalid template interpolation value @1:5",
        ),
        (
            "if_true",
            r#""%{if var.n > 1}big%{else}small%{endif}""#,
            r#""big""#,
        ),
        (
            "if_false",
            r#""%{if var.n > 5}big%{else}small%{endif}""#,
            r#""small""#,
        ),
        ("if_no_else", r#""a%{if false}b%{endif}c""#, r#""ac""#),
        (
            "if_unknown",
            r#""x%{if var.unknown_bool}y%{endif}""#,
            r#"unknown(string, not null, starts with "x")"#,
        ),
        (
            "if_not_bool",
            r#""%{if "x"}y%{endif}""#,
            "error: Invalid template directive @1:7",
        ),
        (
            "for",
            r#""%{for x in var.list}${x},%{endfor}""#,
            r#""a,b,c,""#,
        ),
        (
            "for_key",
            r#""%{for k, v in var.map}${k}=${v};%{endfor}""#,
            r#""one=1;two=2;""#,
        ),
        (
            "for_unknown",
            r#""%{for x in var.unknown_list}${x}%{endfor}""#,
            "unknown(string, not null)",
        ),
        ("strip_both", r#""a ${~ "b" ~} c""#, r#""abc""#),
        (
            "strip_directive",
            "\"x\n  %{~ for v in [1,2] ~}\n  ${v}\n  %{~ endfor ~}\n  y\"",
            r#""x12y""#,
        ),
        (
            "heredoc",
            "<<EOT\nhello ${var.name}\nEOT",
            "\"hello web\\n\"",
        ),
        (
            "heredoc_indented",
            "<<-EOT\n    a\n      b\n    EOT",
            "\"a\\n  b\\n\"",
        ),
        ("heredoc_not_unwrapped", "<<EOT\n${var.n}\nEOT", "\"3\\n\""),
    ]);
}

#[test]
fn for_expressions() {
    check(&[
        (
            "tuple",
            "[for s in var.list : upper_not_needed(s)]",
            "error: Call to unknown function @1:22",
        ),
        (
            "tuple_plain",
            r#"[for s in var.list : "${s}!"]"#,
            r#"["a!", "b!", "c!"]"#,
        ),
        ("tuple_index", "[for i, s in var.list : i]", "[0, 1, 2]"),
        (
            "filter",
            "[for n in [1, 2, 3, 4] : n if n % 2 == 0]",
            "[2, 4]",
        ),
        (
            "object",
            r#"{for s in var.list : s => "${s}${s}"}"#,
            r#"{a="aa", b="bb", c="cc"}"#,
        ),
        (
            "object_from_map",
            "{for k, v in var.map : v => k}",
            r#"{1="one", 2="two"}"#,
        ),
        (
            "grouping",
            r#"{for p in [{k = "a", v = 1}, {k = "b", v = 2}, {k = "a", v = 3}] : p.k => p.v...}"#,
            "{a=[1, 3], b=[2]}",
        ),
        (
            "duplicate_key",
            r#"{for s in ["a", "a"] : s => 1}"#,
            "error: Duplicate object key @1:24",
        ),
        ("over_set", "[for s in var.set : s]", r#"["x", "y"]"#),
        (
            "over_object",
            "[for k, v in var.one_obj : k]",
            r#"["name"]"#,
        ),
        (
            "unknown_collection",
            "[for s in var.unknown_list : s]",
            "unknown(any)",
        ),
        (
            "unknown_condition",
            "[for s in var.list : s if var.unknown_bool]",
            "unknown(any)",
        ),
        (
            "unknown_key",
            "{for s in var.list : var.unknown_str => s}",
            "unknown(any)",
        ),
        (
            "unknown_element_kept",
            "[for x in [var.unknown_str, \"a\"] : x]",
            r#"[unknown(string), "a"]"#,
        ),
        (
            "null_collection",
            "[for s in var.null_str : s]",
            "error: Iteration over null value @1:11",
        ),
        (
            "not_iterable",
            "[for s in var.name : s]",
            "error: Iteration over non-iterable value @1:11",
        ),
        (
            "condition_not_bool",
            r#"[for s in var.list : s if "x"]"#,
            "error: Invalid 'for' condition @1:27",
        ),
        (
            "null_key",
            "{for s in var.list : null => s}",
            "error: Invalid object key @1:22",
        ),
        (
            "sensitive_collection",
            "[for s in sensitive_list_placeholder : s]",
            "error: Unknown variable @1:11",
        ),
        (
            "nested",
            "[for a in [1, 2] : [for b in [10, 20] : a * b]]",
            "[[10, 20], [20, 40]]",
        ),
        ("shadowing", r#"[for var in [1] : var]"#, "[1]"),
    ]);
}

#[test]
fn try_and_can() {
    check(&[
        ("try_first_ok", "try(var.name, \"x\")", r#""web""#),
        ("try_fallback", "try(var.nope, \"x\")", r#""x""#),
        (
            "try_index_fallback",
            "try(var.list[9], \"none\")",
            r#""none""#,
        ),
        (
            "try_all_fail",
            "try(var.nope, var.nada)",
            "error: Error in function call @1:1",
        ),
        ("try_unknown", "try(var.unknown_str, \"x\")", "unknown(any)"),
        ("can_ok", "can(var.list[0])", "true"),
        ("can_fail", "can(var.list[9])", "false"),
        (
            "can_unknown",
            "can(var.unknown_obj.id)",
            "unknown(bool, not null)",
        ),
        (
            "can_arity",
            "can(1, 2)",
            "error: Invalid function call @1:1",
        ),
    ]);
}

#[test]
fn syntax_errors_have_positions() {
    check(&[
        (
            "unclosed_bracket",
            "[1, 2",
            "error: Invalid expression @1:6",
        ),
        // Where the missing operand would start, as Terraform reports it
        // (`terraform validate -json` on `a = 1 +` points past the `+`).
        ("dangling_operator", "1 +", "error: Invalid expression @1:4"),
    ]);
}

/// A call failing as a whole is reported at the function's name and its
/// opening parenthesis, as `terraform validate` reports
/// `jsondecode("{")` (2:7-2:18) and `element([], 0)` (2:7-2:15); an
/// argument's error stays at the argument.
#[test]
fn item1_call_error_range_is_name_and_parenthesis() {
    let scope = scope();
    let ctx = default_ctx(Path::new("."));
    let cases = [
        (
            "jsondecode_eof",
            "jsondecode(\"{\")",
            "Error in function call 1:1-1:12",
        ),
        (
            "element_empty",
            "element([], 0)",
            "Error in function call 1:1-1:9",
        ),
        (
            "argument_error",
            "upper(1, 2)",
            "Too many function arguments 1:10-1:11",
        ),
    ];
    for (name, src, want) in cases {
        let (_, diags) = eval_str("t.tf", src, &scope, &ctx);
        let d = diags.first().unwrap_or_else(|| panic!("{name}: no error"));
        let r = d.range.as_ref().expect("a range");
        let got = format!(
            "{} {}:{}-{}:{}",
            d.summary, r.start.line, r.start.col, r.end.line, r.end.col
        );
        assert_eq!(got, want, "{name}");
    }
}

/// Item 1: `convert(value, type)` reads its second argument as a type
/// constraint (optional attributes and defaults included), keeps marks and
/// unknowns, and fails with Terraform's words at the value (results and
/// messages as `terraform console` gives them; the corpus in
/// tests/corpus compares them with real Terraform).
#[test]
fn item1_convert_with_a_type_expression() {
    check(&[
        ("string_to_number", "convert(\"1\", number)", "1"),
        (
            "tuple_to_list",
            "convert([1, \"a\"], list(string))",
            "list[\"1\", \"a\"]",
        ),
        (
            "object_to_map",
            "convert({ a = 1 }, map(string))",
            "map{a=\"1\"}",
        ),
        (
            "optional_default",
            "convert({}, object({ a = optional(string, \"d\"), b = optional(number) }))",
            "{a=\"d\", b=null(number)}",
        ),
        ("null_typed", "convert(null, string)", "null(string)"),
        ("any", "convert(1, any)", "1"),
        (
            "sensitive_kept",
            "convert(var.secret_n, string)",
            "sensitive(\"7\")",
        ),
        (
            "unknown_typed",
            "convert(var.unknown_any, list(string))",
            "unknown(list(string))",
        ),
        (
            "not_convertible",
            "convert(\"x\", number)",
            "error: Invalid function argument @1:10",
        ),
        (
            "kind_mismatch",
            "convert(1, list(string))",
            "error: Invalid function argument @1:9",
        ),
        (
            "nested",
            "convert({ a = \"x\" }, object({ a = number }))",
            "error: Invalid function argument @1:9",
        ),
        (
            "quoted_type",
            "convert(1, \"string\")",
            "error: Invalid type specification @1:12",
        ),
        (
            "optional_outside_object",
            "convert(1, optional(string))",
            "error: Invalid type specification @1:12",
        ),
        (
            "missing_type",
            "convert(1)",
            "error: Not enough function arguments @1:10",
        ),
        (
            "extra_argument",
            "convert(1, string, 2)",
            "error: Too many function arguments @1:20",
        ),
        // Outside the console: `plantimestamp` exists (unknown without a
        // plan), `type` does not.
        (
            "plantimestamp_unplanned",
            "plantimestamp()",
            "unknown(string)",
        ),
        (
            "type_outside_console",
            "type(1)",
            "error: Call to unknown function @1:1",
        ),
    ]);
}
