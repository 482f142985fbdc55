//! AssertObjectCompatible, one named case per rule of protocol §4.3. Each
//! case lists the exact errors expected (empty when compatible).

use super::dsl::val;
use crate::objchange::assert_object_compatible;
use crate::{Attribute, Block, NestedBlock, ObjectNesting};
use terrane_value::{Type, Value};

fn flat() -> Block {
    Block::new()
        .attr("s", Attribute::optional_computed(Type::String))
        .attr("n", Attribute::optional_computed(Type::Number))
        .attr("b", Attribute::optional_computed(Type::Bool))
        .attr("d", Attribute::optional_computed(Type::Dynamic))
        .attr("l", Attribute::optional_computed(Type::list(Type::String)))
        .attr("m", Attribute::optional_computed(Type::map(Type::String)))
        .attr("st", Attribute::optional_computed(Type::set(Type::String)))
        .attr(
            "o",
            Attribute::optional_computed(Type::object([("a", Type::String)])),
        )
        .attr("pw", Attribute::optional_computed(Type::String).sensitive())
}

fn inner() -> Block {
    Block::new()
        .attr("x", Attribute::optional(Type::String))
        .attr("id", Attribute::computed(Type::String))
}

#[track_caller]
fn check(case: &str, schema: &Block, planned: &str, actual: &str, want: &[&str]) {
    let ty = schema.implied_type();
    check_values(case, schema, &val(&ty, planned), &val(&ty, actual), want);
}

#[track_caller]
fn check_values(case: &str, schema: &Block, planned: &Value, actual: &Value, want: &[&str]) {
    let got: Vec<String> = assert_object_compatible(schema, planned, actual)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(got, want, "case {case}");
}

#[test]
fn root_object() {
    let s = flat();
    check("both_null_ok", &s, "null", "null", &[]);
    check(
        "root_absent_now_present",
        &s,
        "null",
        "{}",
        &["Root object was absent, but now present"],
    );
    check(
        "root_present_now_absent",
        &s,
        "{}",
        "null",
        &["Root object was present, but now absent"],
    );
    check(
        "equal_ok",
        &s,
        r#"{s="a", n=1, l=["x"]}"#,
        r#"{s="a", n=1, l=["x"]}"#,
        &[],
    );
}

#[test]
fn primitives_and_nulls() {
    let s = flat();
    check(
        "primitive_changed",
        &s,
        r#"{s="a"}"#,
        r#"{s="b"}"#,
        &[".s: was \"a\", but now \"b\""],
    );
    check(
        "number_changed",
        &s,
        "{n=1}",
        "{n=2}",
        &[".n: was 1, but now 2"],
    );
    check(
        "number_equal_in_other_form_ok",
        &s,
        "{n=1.50}",
        "{n=1.5}",
        &[],
    );
    check(
        "bool_changed",
        &s,
        "{b=true}",
        "{b=false}",
        &[".b: was true, but now false"],
    );
    check(
        "was_value_now_null",
        &s,
        r#"{s="a"}"#,
        "{s=null}",
        &[".s: was \"a\", but now null"],
    );
    check(
        "was_null_now_value",
        &s,
        "{s=null}",
        r#"{s="a"}"#,
        &[".s: was null, but now \"a\""],
    );
    check(
        "was_known_now_unknown",
        &s,
        r#"{s="a"}"#,
        "{s=?}",
        &[".s: was known, but now unknown"],
    );
    check(
        "several_errors_all_reported",
        &s,
        r#"{s="a", n=1}"#,
        r#"{s="b", n=2}"#,
        &[".n: was 1, but now 2", ".s: was \"a\", but now \"b\""],
    );
}

#[test]
fn unknown_placeholders() {
    let s = flat();
    check(
        "unknown_becomes_any_value_ok",
        &s,
        "{s=?}",
        r#"{s="x"}"#,
        &[],
    );
    check("unknown_becomes_null_ok", &s, "{s=?}", "{s=null}", &[]);
    check(
        "unknown_prefix_kept_ok",
        &s,
        r#"{s=?"ab"}"#,
        r#"{s="abc"}"#,
        &[],
    );
    check(
        "unknown_prefix_violated",
        &s,
        r#"{s=?"ab"}"#,
        r#"{s="xy"}"#,
        &[".s: final value \"xy\" does not conform to planning placeholder (known after apply: not null, starts with \"ab\")"],
    );
    check(
        "unknown_not_null_violated",
        &s,
        "{s=?!}",
        "{s=null}",
        &[".s: final value null does not conform to planning placeholder (known after apply: not null)"],
    );
    check("unknown_number_bounds_ok", &s, "{n=?[0,10)}", "{n=0}", &[]);
    check(
        "unknown_number_upper_exclusive_violated",
        &s,
        "{n=?[0,10)}",
        "{n=10}",
        &[".n: final value 10 does not conform to planning placeholder (known after apply: not null, >= 0, < 10)"],
    );
    check(
        "unknown_number_lower_exclusive_violated",
        &s,
        "{n=?(0,10]}",
        "{n=0}",
        &[".n: final value 0 does not conform to planning placeholder (known after apply: not null, > 0, <= 10)"],
    );
    check(
        "unknown_length_bounds_ok",
        &s,
        "{l=?#1..2}",
        r#"{l=["a"]}"#,
        &[],
    );
    check(
        "unknown_length_bounds_violated",
        &s,
        "{l=?#1..2}",
        r#"{l=["a", "b", "c"]}"#,
        &[".l: final value [\"a\", \"b\", \"c\"] does not conform to planning placeholder (known after apply: not null, length 1..2)"],
    );
    check("dynamic_unknown_allows_any_type", &s, "{d=?}", "{d=5}", &[]);
}

#[test]
fn wrong_final_type() {
    let s = flat();
    let ty = s.implied_type();
    let planned = val(&ty, r#"{d="a"}"#);
    let actual = Value::object_typed(
        &ty,
        planned
            .entries()
            .unwrap()
            .iter()
            .map(|(k, v)| {
                (
                    k.clone(),
                    if k == "d" {
                        Value::number(5)
                    } else {
                        v.clone()
                    },
                )
            })
            .collect(),
    );
    check_values(
        "wrong_final_value_type",
        &s,
        &planned,
        &actual,
        &[".d: wrong final value type: string required, but now number"],
    );
}

#[test]
fn collections() {
    let s = flat();
    check(
        "list_element_vanished",
        &s,
        r#"{l=["a", "b"]}"#,
        r#"{l=["a"]}"#,
        &[".l: element 1 has vanished"],
    );
    check(
        "list_element_appeared",
        &s,
        r#"{l=["a"]}"#,
        r#"{l=["a", "b"]}"#,
        &[".l: new element 1 has appeared"],
    );
    check(
        "list_element_changed",
        &s,
        r#"{l=["a"]}"#,
        r#"{l=["z"]}"#,
        &[".l[0]: was \"a\", but now \"z\""],
    );
    check(
        "list_unknown_element_resolves_ok",
        &s,
        r#"{l=["a", ?]}"#,
        r#"{l=["a", "b"]}"#,
        &[],
    );
    check(
        "map_element_vanished",
        &s,
        r#"{m={k="v"}}"#,
        "{m={}}",
        &[".m: element \"k\" has vanished"],
    );
    check(
        "map_element_appeared",
        &s,
        "{m={}}",
        r#"{m={k="v"}}"#,
        &[".m: new element \"k\" has appeared"],
    );
    check(
        "map_element_changed",
        &s,
        r#"{m={k="v"}}"#,
        r#"{m={k="w"}}"#,
        &[".m[\"k\"]: was \"v\", but now \"w\""],
    );
    check(
        "object_attribute_changed",
        &s,
        r#"{o={a="1"}}"#,
        r#"{o={a="2"}}"#,
        &[".o.a: was \"1\", but now \"2\""],
    );
    check(
        "object_unknown_attribute_resolves_ok",
        &s,
        "{o={a=?}}",
        r#"{o={a="2"}}"#,
        &[],
    );
}

#[test]
fn sets() {
    let s = flat();
    check(
        "set_equal_ok",
        &s,
        r#"{st=["a", "b"]}"#,
        r#"{st=["b", "a"]}"#,
        &[],
    );
    check(
        "set_unknown_element_resolves_ok",
        &s,
        r#"{st=["a", ?]}"#,
        r#"{st=["a", "b"]}"#,
        &[],
    );
    check(
        "set_unknowns_coalesce_ok",
        &s,
        r#"{st=["a", ?]}"#,
        r#"{st=["a"]}"#,
        &[],
    );
    check(
        "set_grew",
        &s,
        r#"{st=["a"]}"#,
        r#"{st=["a", "b"]}"#,
        &[
            ".st: actual set element \"b\" does not correlate with any element in plan",
            ".st: length changed from 1 to 2",
        ],
    );
    check(
        "set_planned_element_missing",
        &s,
        r#"{st=["a", "b"]}"#,
        r#"{st=["a"]}"#,
        &[".st: planned set element \"b\" does not correlate with any element in actual"],
    );
    check(
        "set_element_replaced",
        &s,
        r#"{st=["a"]}"#,
        r#"{st=["z"]}"#,
        &[".st: planned set element \"a\" does not correlate with any element in actual"],
    );
    check(
        "set_prefix_unknown_resolves_ok",
        &s,
        r#"{st=[?"a"]}"#,
        r#"{st=["ab"]}"#,
        &[],
    );
    check(
        "set_prefix_unknown_violated",
        &s,
        r#"{st=[?"a"]}"#,
        r#"{st=["zz"]}"#,
        &[".st: planned set element (known after apply) does not correlate with any element in actual"],
    );
}

#[test]
fn sensitive_values_collapse() {
    let s = flat();
    check(
        "sensitive_schema_attribute",
        &s,
        r#"{pw="a"}"#,
        r#"{pw="b"}"#,
        &[".pw: inconsistent values for sensitive attribute"],
    );
    check(
        "sensitive_marked_value",
        &s,
        r#"{s=$"a"}"#,
        r#"{s="b"}"#,
        &[".s: inconsistent values for sensitive attribute"],
    );
    check("sensitive_equal_ok", &s, r#"{pw=$"a"}"#, r#"{pw="a"}"#, &[]);
    let nested = Block::new().attr(
        "n",
        Attribute::nested(
            Attribute::optional(Type::Dynamic),
            ObjectNesting::List,
            [
                ("x".to_string(), Attribute::optional(Type::String)),
                (
                    "key".to_string(),
                    Attribute::computed(Type::String).sensitive(),
                ),
            ]
            .into(),
        ),
    );
    check(
        "nested_attribute_with_sensitive_inner",
        &nested,
        r#"{n=[{key="a"}]}"#,
        r#"{n=[{key="b"}]}"#,
        &[".n: inconsistent values for sensitive attribute"],
    );
    let plain_nested = Block::new().attr(
        "n",
        Attribute::nested(
            Attribute::optional(Type::Dynamic),
            ObjectNesting::List,
            inner().attributes,
        ),
    );
    check(
        "nested_list_attribute_element_changed",
        &plain_nested,
        r#"{n=[{x="a", id=?}]}"#,
        r#"{n=[{x="b", id="1"}]}"#,
        &[".n[0].x: was \"a\", but now \"b\""],
    );
}

#[test]
fn blocks() {
    let single = Block::new()
        .block("s", NestedBlock::single(inner()))
        .block("g", NestedBlock::group(inner()));
    check(
        "single_unknown_to_null_ok",
        &single,
        "{s=?, g={}}",
        "{s=null, g={}}",
        &[],
    );
    check(
        "single_unknown_to_value_ok",
        &single,
        "{s=?, g={}}",
        r#"{s={x="a"}, g={}}"#,
        &[],
    );
    check(
        "single_inner_changed",
        &single,
        r#"{s={x="a"}, g={}}"#,
        r#"{s={x="b"}, g={}}"#,
        &[".s.x: was \"a\", but now \"b\""],
    );
    check(
        "single_absent_now_present",
        &single,
        "{s=null, g={}}",
        r#"{s={x="a"}, g={}}"#,
        &[".s: was absent, but now present"],
    );
    check(
        "single_present_now_absent",
        &single,
        r#"{s={x="a"}, g={}}"#,
        "{s=null, g={}}",
        &[".s: was present, but now absent"],
    );
    check(
        "group_inner_changed",
        &single,
        r#"{s=null, g={x="a"}}"#,
        r#"{s=null, g={x="b"}}"#,
        &[".g.x: was \"a\", but now \"b\""],
    );
    check(
        "block_computed_inner_resolves_ok",
        &single,
        r#"{s={x="a", id=?}, g={}}"#,
        r#"{s={x="a", id="1"}, g={}}"#,
        &[],
    );

    let list = Block::new().block("l", NestedBlock::list(inner()));
    check(
        "list_block_count_changed",
        &list,
        r#"{l=[{x="a"}]}"#,
        r#"{l=[{x="a"}, {x="b"}]}"#,
        &[".l: block count changed from 1 to 2"],
    );
    check(
        "list_block_inner_changed",
        &list,
        r#"{l=[{x="a"}]}"#,
        r#"{l=[{x="b"}]}"#,
        &[".l[0].x: was \"a\", but now \"b\""],
    );
    check(
        "list_block_planned_unknown_skipped",
        &list,
        "{l=?}",
        r#"{l=[{x="a"}, {x="b"}]}"#,
        &[],
    );

    let map = Block::new().block("m", NestedBlock::map(inner()));
    check(
        "map_block_key_vanished",
        &map,
        r#"{m={a={x="1"}}}"#,
        "{m={}}",
        &[".m: block key \"a\" has vanished"],
    );
    check(
        "map_block_key_appeared",
        &map,
        "{m={}}",
        r#"{m={z={x="1"}}}"#,
        &[".m: new block key \"z\" has appeared"],
    );
    check(
        "map_block_inner_changed",
        &map,
        r#"{m={a={x="1"}}}"#,
        r#"{m={a={x="2"}}}"#,
        &[".m[\"a\"].x: was \"1\", but now \"2\""],
    );
    check(
        "map_block_planned_unknown_skipped",
        &map,
        "{m=?}",
        r#"{m={a={x="2"}}}"#,
        &[],
    );

    let set = Block::new().block("st", NestedBlock::set(inner()));
    check(
        "set_block_computed_resolves_ok",
        &set,
        r#"{st=[{x="a", id=?}]}"#,
        r#"{st=[{x="a", id="1"}]}"#,
        &[],
    );
    check(
        "set_block_no_correlation",
        &set,
        r#"{st=[{x="a", id=?}]}"#,
        r#"{st=[{x="b", id="1"}]}"#,
        &[
            ".st: planned set element { id = (known after apply), x = \"a\" } does not correlate with any element in actual",
        ],
    );
    check(
        "set_block_grew",
        &set,
        r#"{st=[{x="a", id=?}]}"#,
        r#"{st=[{x="a", id="1"}, {x="a", id="2"}]}"#,
        &[".st: block set length changed from 1 to 2"],
    );
    check(
        "set_block_unknowns_coalesce_ok",
        &set,
        r#"{st=[{x="a", id=?}, {x="a", id="1"}]}"#,
        r#"{st=[{x="a", id="1"}]}"#,
        &[],
    );
    // Issue 12 item 15: two planned blocks equal apart from unknowns are two
    // elements (not merged), so two distinct results are consistent.
    check(
        "item15_set_blocks_alike_but_unknown_ok",
        &set,
        r#"{st=[{x="a", id=?}, {x="a", id=?}]}"#,
        r#"{st=[{x="a", id="1"}, {x="a", id="2"}]}"#,
        &[],
    );
    check(
        "item15_set_unknown_strings_ok",
        &flat(),
        r#"{st=[?, ?]}"#,
        r#"{st=["a", "b"]}"#,
        &[],
    );

    let computed = Block::new().block("c", NestedBlock::list(inner().computed_block()));
    check(
        "computed_block_null_after_apply",
        &computed,
        r#"{c=[{x="a"}]}"#,
        "{c=null}",
        &[".c: null block value after apply"],
    );
    check(
        "computed_block_unknown_plan_anything_ok",
        &computed,
        "{c=?}",
        r#"{c=[{x="z"}]}"#,
        &[],
    );
}
