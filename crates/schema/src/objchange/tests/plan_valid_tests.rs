//! AssertPlanValid, one named case per rule of protocol §4.2. Each case
//! lists the exact errors expected (empty for a valid plan).

use super::dsl::val;
use crate::objchange::assert_plan_valid;
use crate::{Attribute, Block, NestedBlock, ObjectNesting};
use terrane_value::Type;

fn flat() -> Block {
    Block::new()
        .attr("name", Attribute::required(Type::String))
        .attr("opt", Attribute::optional(Type::String))
        .attr("id", Attribute::computed(Type::String))
        .attr("oc", Attribute::optional_computed(Type::String))
        .attr("secret", Attribute::optional(Type::String).sensitive())
        .attr("wo", Attribute::optional(Type::String).write_only())
}

fn inner() -> Block {
    Block::new()
        .attr("x", Attribute::optional(Type::String))
        .attr("id", Attribute::computed(Type::String))
}

#[track_caller]
fn check(case: &str, schema: &Block, prior: &str, config: &str, planned: &str, want: &[&str]) {
    let ty = schema.implied_type();
    let errs = assert_plan_valid(
        schema,
        &val(&ty, prior),
        &val(&ty, config),
        &val(&ty, planned),
    );
    let got: Vec<String> = errs.iter().map(ToString::to_string).collect();
    assert_eq!(got, want, "case {case}");
}

#[test]
fn object_level() {
    let s = flat();
    check("both_null_ok", &s, "null", "null", "null", &[]);
    check(
        "planned_null_config_present",
        &s,
        "null",
        r#"{name="a"}"#,
        "null",
        &["planned for absence but config wants existence"],
    );
    check(
        "planned_present_config_null",
        &s,
        "null",
        "null",
        r#"{name="a"}"#,
        &["planned for existence but config wants absence"],
    );
}

#[test]
fn attribute_rules() {
    let s = flat();
    check(
        "equal_to_config_ok",
        &s,
        "null",
        r#"{name="a"}"#,
        r#"{name="a"}"#,
        &[],
    );
    check(
        "equal_to_config_ignoring_refinements_ok",
        &s,
        "null",
        r#"{name=?"ab"}"#,
        r#"{name=?}"#,
        &[],
    );
    check(
        "equal_to_prior_suppresses_diff_ok",
        &s,
        r#"{name="A"}"#,
        r#"{name="a"}"#,
        r#"{name="A"}"#,
        &[],
    );
    check(
        "prior_rule_needs_non_null_prior",
        &s,
        r#"{name="a", opt=null}"#,
        r#"{name="a", opt="x"}"#,
        r#"{name="a", opt=null}"#,
        &[".opt: planned value null does not match config value \"x\""],
    );
    check(
        "prior_rule_needs_non_null_config",
        &s,
        r#"{name="a", opt="p"}"#,
        r#"{name="a"}"#,
        r#"{name="a", opt="p"}"#,
        &[".opt: planned value \"p\" for a non-computed attribute"],
    );
    check(
        "computed_only_any_value_ok",
        &s,
        "null",
        r#"{name="a"}"#,
        r#"{name="a", id="new"}"#,
        &[],
    );
    check(
        "computed_only_even_when_configured_ok",
        &s,
        "null",
        r#"{name="a", id="cfg"}"#,
        r#"{name="a", id="other"}"#,
        &[],
    );
    check(
        "computed_only_unknown_ok",
        &s,
        "null",
        r#"{name="a"}"#,
        r#"{name="a", id=?}"#,
        &[],
    );
    check(
        "optional_computed_unset_any_value_ok",
        &s,
        "null",
        r#"{name="a"}"#,
        r#"{name="a", oc="chosen"}"#,
        &[],
    );
    check(
        "optional_computed_unset_unknown_ok",
        &s,
        "null",
        r#"{name="a"}"#,
        r#"{name="a", oc=?}"#,
        &[],
    );
    check(
        "optional_computed_set_must_match",
        &s,
        "null",
        r#"{name="a", oc="c"}"#,
        r#"{name="a", oc="d"}"#,
        &[".oc: planned value \"d\" does not match config value \"c\""],
    );
    check(
        "non_computed_unset_planned_value",
        &s,
        "null",
        r#"{name="a"}"#,
        r#"{name="a", opt="x"}"#,
        &[".opt: planned value \"x\" for a non-computed attribute"],
    );
    check(
        "mismatch_without_prior",
        &s,
        "null",
        r#"{name="a"}"#,
        r#"{name="b"}"#,
        &[".name: planned value \"b\" does not match config value \"a\""],
    );
    check(
        "mismatch_with_prior",
        &s,
        r#"{name="p"}"#,
        r#"{name="a"}"#,
        r#"{name="b"}"#,
        &[".name: planned value \"b\" does not match config value \"a\" nor prior value \"p\""],
    );
    check(
        "unknown_planned_for_known_config",
        &s,
        "null",
        r#"{name="a"}"#,
        r#"{name=?}"#,
        &[".name: planned value (known after apply) does not match config value \"a\""],
    );
    check(
        "several_errors_all_reported",
        &s,
        "null",
        r#"{name="a"}"#,
        r#"{name="b", opt="c"}"#,
        &[
            ".name: planned value \"b\" does not match config value \"a\"",
            ".opt: planned value \"c\" for a non-computed attribute",
        ],
    );
}

#[test]
fn sensitive_values_are_never_shown() {
    let s = flat();
    check(
        "sensitive_schema_attr_non_computed",
        &s,
        "null",
        r#"{name="a"}"#,
        r#"{name="a", secret="hunter2"}"#,
        &[".secret: planned value for a non-computed attribute"],
    );
    check(
        "sensitive_schema_attr_mismatch_no_prior",
        &s,
        "null",
        r#"{name="a", secret="x"}"#,
        r#"{name="a", secret="hunter2"}"#,
        &[".secret: sensitive planned value does not match config value"],
    );
    check(
        "sensitive_schema_attr_mismatch_with_prior",
        &s,
        r#"{name="a", secret="old"}"#,
        r#"{name="a", secret="x"}"#,
        r#"{name="a", secret="hunter2"}"#,
        &[".secret: sensitive planned value does not match config value nor prior value"],
    );
    check(
        "sensitive_mark_on_value_redacts",
        &s,
        "null",
        r#"{name=$"a"}"#,
        r#"{name="hunter2"}"#,
        &[".name: sensitive planned value does not match config value"],
    );
}

#[test]
fn write_only_attributes() {
    let s = flat();
    check(
        "write_only_planned_null_ok",
        &s,
        "null",
        r#"{name="a", wo="pw"}"#,
        r#"{name="a", wo=null}"#,
        &[],
    );
    check(
        "write_only_planned_other_value",
        &s,
        "null",
        r#"{name="a", wo="pw"}"#,
        r#"{name="a", wo="other"}"#,
        &[".wo: planned value for write-only attribute is not null"],
    );
    check(
        "write_only_planned_unknown",
        &s,
        "null",
        r#"{name="a", wo="pw"}"#,
        r#"{name="a", wo=?}"#,
        &[".wo: planned value for write-only attribute is not null"],
    );
}

fn nested(nesting: ObjectNesting) -> Block {
    let attrs = [
        ("x".to_string(), Attribute::optional(Type::String)),
        ("id".to_string(), Attribute::computed(Type::String)),
        (
            "pw".to_string(),
            Attribute::optional(Type::String).sensitive(),
        ),
    ]
    .into();
    Block::new().attr(
        "n",
        Attribute::nested(Attribute::optional(Type::Dynamic), nesting, attrs),
    )
}

#[test]
fn nested_attributes() {
    let single = nested(ObjectNesting::Single);
    check(
        "nested_equal_ok",
        &single,
        "null",
        r#"{n={x="a"}}"#,
        r#"{n={x="a"}}"#,
        &[],
    );
    check(
        "nested_computed_inner_ok",
        &single,
        "null",
        r#"{n={x="a"}}"#,
        r#"{n={x="a", id="1"}}"#,
        &[],
    );
    check(
        "nested_planned_absent",
        &single,
        "null",
        r#"{n={x="a"}}"#,
        "{n=null}",
        &[".n: planned for absence but config wants existence"],
    );
    check(
        "nested_planned_present",
        &single,
        "null",
        "{n=null}",
        r#"{n={x="a"}}"#,
        &[".n: planned value { id = null, pw = null, x = \"a\" } for a non-computed attribute"],
    );
    check(
        "nested_inner_mismatch",
        &single,
        "null",
        r#"{n={x="a"}}"#,
        r#"{n={x="b"}}"#,
        &[".n.x: planned value \"b\" does not match config value \"a\""],
    );
    check(
        "nested_inner_sensitive_redacted",
        &single,
        "null",
        r#"{n={pw="a"}}"#,
        r#"{n={pw="b"}}"#,
        &[".n.pw: sensitive planned value does not match config value"],
    );
    check(
        "nested_planned_unknown_for_configured",
        &single,
        "null",
        r#"{n={x="a"}}"#,
        "{n=?}",
        &[".n: planned unknown for configured value"],
    );

    let oc = Block::new().attr(
        "n",
        Attribute::nested(
            Attribute::optional_computed(Type::Dynamic),
            ObjectNesting::Single,
            [("x".to_string(), Attribute::optional(Type::String))].into(),
        ),
    );
    check(
        "nested_optional_computed_unset_any_ok",
        &oc,
        "null",
        "{n=null}",
        r#"{n={x="chosen"}}"#,
        &[],
    );
    check(
        "nested_optional_computed_set_planned_absent",
        &oc,
        "null",
        r#"{n={x="a"}}"#,
        "{n=null}",
        &[".n: planned for absence but config wants existence"],
    );

    let list = nested(ObjectNesting::List);
    check(
        "nested_list_equal_ok",
        &list,
        "null",
        r#"{n=[{x="a"}]}"#,
        r#"{n=[{x="a"}]}"#,
        &[],
    );
    check(
        "nested_list_count_mismatch",
        &list,
        "null",
        r#"{n=[{x="a"}]}"#,
        r#"{n=[{x="a"}, {x="b"}]}"#,
        &[".n: count in plan (2) disagrees with count in config (1)"],
    );
    check(
        "nested_list_inner_mismatch_path",
        &list,
        "null",
        r#"{n=[{x="a"}, {x="b"}]}"#,
        r#"{n=[{x="a"}, {x="c"}]}"#,
        &[".n[1].x: planned value \"c\" does not match config value \"b\""],
    );
    check(
        "nested_list_prior_by_index_suppresses",
        &list,
        r#"{n=[{x="A"}]}"#,
        r#"{n=[{x="a"}]}"#,
        r#"{n=[{x="A"}]}"#,
        &[],
    );

    let map = nested(ObjectNesting::Map);
    check(
        "nested_map_count_mismatch",
        &map,
        "null",
        r#"{n={a={x="1"}}}"#,
        r#"{n={a={x="1"}, b={x="2"}}}"#,
        &[".n: count in plan (2) disagrees with count in config (1)"],
    );
    check(
        "nested_map_keys_differ",
        &map,
        "null",
        r#"{n={a={x="1"}, b={x="2"}}}"#,
        r#"{n={a={x="1"}, c={x="2"}}}"#,
        &[
            ".n: map key \"c\" from plan is not present in config",
            ".n: map key \"b\" from config is not present in plan",
        ],
    );
    check(
        "nested_map_inner_path",
        &map,
        "null",
        r#"{n={a={x="1"}}}"#,
        r#"{n={a={x="2"}}}"#,
        &[".n[\"a\"].x: planned value \"2\" does not match config value \"1\""],
    );

    let set = nested(ObjectNesting::Set);
    check(
        "nested_set_same_length_ok",
        &set,
        "null",
        r#"{n=[{x="a"}, {x="b"}]}"#,
        r#"{n=[{x="a", id=?}, {x="b", id=?}]}"#,
        &[],
    );
    check(
        "nested_set_known_length_mismatch",
        &set,
        "null",
        r#"{n=[{x="a"}, {x="b"}]}"#,
        r#"{n=[{x="a"}]}"#,
        &[".n: count in plan (1) disagrees with count in config (2)"],
    );
    check(
        "nested_set_unknowns_may_cover_config_length",
        &set,
        "null",
        r#"{n=[{x="a"}]}"#,
        r#"{n=[{x="a", id=?}, {x="a", id="1"}]}"#,
        &[],
    );
}

#[test]
fn block_rules() {
    let list = Block::new().block("b", NestedBlock::list(inner()));
    check(
        "block_equal_ok",
        &list,
        "null",
        r#"{b=[{x="a"}]}"#,
        r#"{b=[{x="a"}]}"#,
        &[],
    );
    check(
        "block_computed_inner_ok",
        &list,
        "null",
        r#"{b=[{x="a"}]}"#,
        r#"{b=[{x="a", id="1"}]}"#,
        &[],
    );
    check(
        "unknown_dynamic_block",
        &list,
        "null",
        "{b=?}",
        "{b=[]}",
        &[".b: planned value [] for unknown dynamic block"],
    );
    check(
        "unknown_dynamic_block_kept_ok",
        &list,
        "null",
        "{b=?}",
        "{b=?}",
        &[],
    );
    check(
        "planned_unknown_block",
        &list,
        "null",
        r#"{b=[{x="a"}]}"#,
        "{b=?}",
        &[".b: attribute representing nested block must not be unknown itself; set nested attribute values to unknown instead"],
    );
    check(
        "list_block_null",
        &list,
        "null",
        r#"{b=[{x="a"}]}"#,
        "{b=null}",
        &[".b: attribute representing a list of nested blocks must be empty to indicate no blocks, not null"],
    );
    check(
        "list_block_count",
        &list,
        "null",
        r#"{b=[{x="a"}, {x="b"}]}"#,
        r#"{b=[{x="a"}]}"#,
        &[".b: block count in plan (1) disagrees with count in config (2)"],
    );
    check(
        "list_block_unknown_element",
        &list,
        "null",
        r#"{b=[{x="a"}]}"#,
        "{b=[?]}",
        &[".b[0]: element representing nested block must not be unknown itself; set nested attribute values to unknown instead"],
    );
    check(
        "list_block_inner_path",
        &list,
        "null",
        r#"{b=[{x="a"}]}"#,
        r#"{b=[{x="z"}]}"#,
        &[".b[0].x: planned value \"z\" does not match config value \"a\""],
    );
    check(
        "list_block_prior_by_index_suppresses",
        &list,
        r#"{b=[{x="A"}]}"#,
        r#"{b=[{x="a"}]}"#,
        r#"{b=[{x="A"}]}"#,
        &[],
    );

    let set = Block::new().block("s", NestedBlock::set(inner()));
    check(
        "set_block_null",
        &set,
        "null",
        r#"{s=[{x="a"}]}"#,
        "{s=null}",
        &[".s: attribute representing a set of nested blocks must be empty to indicate no blocks, not null"],
    );
    check(
        "set_block_elements_not_correlated_ok",
        &set,
        "null",
        r#"{s=[{x="a"}]}"#,
        r#"{s=[{x="other"}, {x="more"}]}"#,
        &[],
    );
    check(
        "set_block_unknown_element",
        &set,
        "null",
        r#"{s=[{x="a"}]}"#,
        r#"{s=[{x="a"}, ?]}"#,
        &[".s[1]: element representing nested block must not be unknown itself; set nested attribute values to unknown instead"],
    );

    let map = Block::new().block("m", NestedBlock::map(inner()));
    check(
        "map_block_null",
        &map,
        "null",
        r#"{m={k={x="a"}}}"#,
        "{m=null}",
        &[".m: attribute representing a map of nested blocks must be empty to indicate no blocks, not null"],
    );
    check(
        "map_block_key_from_plan_missing",
        &map,
        "null",
        r#"{m={k={x="a"}}}"#,
        r#"{m={k={x="a"}, z={x="b"}}}"#,
        &[".m: block key \"z\" from plan is not present in config"],
    );
    check(
        "map_block_key_from_config_missing",
        &map,
        "null",
        r#"{m={k={x="a"}, z={x="b"}}}"#,
        r#"{m={k={x="a"}}}"#,
        &[".m: block key \"z\" from config is not present in plan"],
    );
    check(
        "map_block_inner_path",
        &map,
        "null",
        r#"{m={k={x="a"}}}"#,
        r#"{m={k={x="b"}}}"#,
        &[".m[\"k\"].x: planned value \"b\" does not match config value \"a\""],
    );
    check("map_block_unknown_element", &map, "null", r#"{m={k={x="a"}}}"#, "{m={k=?}}", &[".m[\"k\"]: element representing nested block must not be unknown itself; set nested attribute values to unknown instead"]);

    let single = Block::new()
        .block("s", NestedBlock::single(inner()))
        .block("g", NestedBlock::group(inner()));
    check(
        "single_block_absent",
        &single,
        "null",
        r#"{s={x="a"}, g={}}"#,
        r#"{s=null, g={}}"#,
        &[".s: planned for absence but config wants existence"],
    );
    check(
        "single_block_present",
        &single,
        "null",
        r#"{s=null, g={}}"#,
        r#"{s={x="a"}, g={}}"#,
        &[".s: planned for existence but config wants absence"],
    );
    check(
        "single_block_inner",
        &single,
        "null",
        r#"{s={x="a"}, g={}}"#,
        r#"{s={x="b"}, g={}}"#,
        &[".s.x: planned value \"b\" does not match config value \"a\""],
    );
    check(
        "group_block_inner",
        &single,
        "null",
        r#"{s=null, g={x="a"}}"#,
        r#"{s=null, g={x="b"}}"#,
        &[".g.x: planned value \"b\" does not match config value \"a\""],
    );

    let computed = Block::new().block("c", NestedBlock::list(inner().computed_block()));
    check(
        "computed_block_config_null_anything_ok",
        &computed,
        "null",
        "{c=null}",
        r#"{c=[{x="filled"}]}"#,
        &[],
    );
    check(
        "non_computed_block_config_null_planned_blocks",
        &list,
        "null",
        "{b=null}",
        r#"{b=[{x="filled"}]}"#,
        &[".b: block count in plan (1) disagrees with count in config (0)"],
    );
}

#[test]
fn dynamic_map_block_uses_attribute_steps() {
    let dynamic = Block::new().attr("d", Attribute::optional(Type::Dynamic));
    let s = Block::new().block("m", NestedBlock::map(dynamic));
    let cfg = terrane_value::Value::object_from([(
        "m",
        terrane_value::Value::object_from([(
            "k",
            terrane_value::Value::object_from([("d", terrane_value::Value::string("a"))]),
        )]),
    )]);
    let planned = terrane_value::Value::object_from([(
        "m",
        terrane_value::Value::object_from([(
            "k",
            terrane_value::Value::object_from([("d", terrane_value::Value::string("b"))]),
        )]),
    )]);
    let errs: Vec<String> = assert_plan_valid(
        &s,
        &terrane_value::Value::null(s.implied_type()),
        &cfg,
        &planned,
    )
    .iter()
    .map(ToString::to_string)
    .collect();
    assert_eq!(
        errs,
        [".m.k.d: planned value \"b\" does not match config value \"a\""],
        "case map_block_dynamic_object_path"
    );
}
