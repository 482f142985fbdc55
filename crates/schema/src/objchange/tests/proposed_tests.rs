//! ProposedNew, PlannedDataResourceObject and PrepareComputedBlocks, one
//! named case per rule of protocol §4.1.

use super::dsl::val;
use crate::objchange::{planned_data_resource_object, prepare_computed_blocks, proposed_new};
use crate::{Attribute, Block, NestedBlock, ObjectNesting};
use std::collections::BTreeMap;
use terrane_value::{Type, Value};

/// name (required), opt (optional), id (computed), oc (optional+computed).
fn flat() -> Block {
    Block::new()
        .attr("name", Attribute::required(Type::String))
        .attr("opt", Attribute::optional(Type::String))
        .attr("id", Attribute::computed(Type::String))
        .attr("oc", Attribute::optional_computed(Type::String))
}

/// x (optional), id (computed), oc (optional+computed).
fn inner() -> Block {
    Block::new()
        .attr("x", Attribute::optional(Type::String))
        .attr("id", Attribute::computed(Type::String))
        .attr("oc", Attribute::optional_computed(Type::String))
}

fn with_block(name: &str, nb: NestedBlock) -> Block {
    Block::new().block(name, nb)
}

fn inner_attrs() -> BTreeMap<String, Attribute> {
    inner().attributes
}

fn with_nested(nesting: ObjectNesting, flags: Attribute) -> Block {
    Block::new().attr("n", Attribute::nested(flags, nesting, inner_attrs()))
}

#[track_caller]
fn check(case: &str, schema: &Block, prior: &str, config: &str, want: &str) {
    let ty = schema.implied_type();
    let got = proposed_new(schema, &val(&ty, prior), &val(&ty, config));
    let want = val(&ty, want);
    assert!(
        got.eq_ignoring_refinements(&want) && got.refinements() == want.refinements(),
        "case {case}:\n got  {got:?}\n want {want:?}"
    );
    assert_eq!(
        format!("{got:?}"),
        format!("{want:?}"),
        "case {case}: rendering (refinements, marks)"
    );
}

#[test]
fn top_level_attributes() {
    let s = flat();
    check("both_null_returns_prior_null", &s, "null", "null", "null");
    check(
        "prior_null_uses_empty_value",
        &s,
        "null",
        r#"{name="a"}"#,
        r#"{name="a"}"#,
    );
    check(
        "config_null_returns_prior",
        &s,
        r#"{name="a", id="x"}"#,
        "null",
        r#"{name="a", id="x"}"#,
    );
    check(
        "config_unknown_returns_prior",
        &s,
        r#"{name="a", id="x"}"#,
        "?",
        r#"{name="a", id="x"}"#,
    );
    check(
        "computed_unset_keeps_prior",
        &s,
        r#"{name="a", id="x"}"#,
        r#"{name="b"}"#,
        r#"{name="b", id="x"}"#,
    );
    check(
        "optional_computed_unset_keeps_prior",
        &s,
        r#"{name="a", oc="p"}"#,
        r#"{name="a"}"#,
        r#"{name="a", oc="p"}"#,
    );
    check(
        "optional_computed_set_takes_config",
        &s,
        r#"{name="a", oc="p"}"#,
        r#"{name="a", oc="c"}"#,
        r#"{name="a", oc="c"}"#,
    );
    check(
        "optional_unset_takes_null_config",
        &s,
        r#"{name="a", opt="p"}"#,
        r#"{name="a"}"#,
        r#"{name="a"}"#,
    );
    check(
        "required_takes_config",
        &s,
        r#"{name="a"}"#,
        r#"{name="b"}"#,
        r#"{name="b"}"#,
    );
    check(
        "computed_with_config_value_takes_config",
        &s,
        r#"{name="a", id="x"}"#,
        r#"{name="a", id="y"}"#,
        r#"{name="a", id="y"}"#,
    );
    check(
        "unknown_config_attribute_kept",
        &s,
        r#"{name="a"}"#,
        r#"{name=?}"#,
        r#"{name=?}"#,
    );
    check(
        "refined_unknown_config_kept_with_refinements",
        &s,
        r#"{name="a"}"#,
        r#"{name=?"pre"}"#,
        r#"{name=?"pre"}"#,
    );
    check(
        "sensitive_config_mark_kept",
        &s,
        r#"{name="a"}"#,
        r#"{name=$"s"}"#,
        r#"{name=$"s"}"#,
    );
    check(
        "sensitive_prior_mark_kept_for_computed",
        &s,
        r#"{name="a", id=$"x"}"#,
        r#"{name="a"}"#,
        r#"{name="a", id=$"x"}"#,
    );
}

#[test]
fn prior_unknown_makes_computed_unknown() {
    let s = flat();
    let ty = s.implied_type();
    let got = proposed_new(
        &s,
        &Value::unknown(ty.clone()),
        &val(&ty, r#"{name="a", oc="set"}"#),
    );
    assert_eq!(
        got,
        val(&ty, r#"{name="a", id=?, oc="set"}"#),
        "case prior_unknown_computed_unset_is_unknown"
    );
}

#[test]
fn single_and_group_blocks() {
    let single = with_block("b", NestedBlock::single(inner()));
    check(
        "single_null_config_is_null",
        &single,
        r#"{b={x="a", id="1"}}"#,
        "{b=null}",
        "{b=null}",
    );
    check(
        "single_merges_computed_from_prior",
        &single,
        r#"{b={x="a", id="1"}}"#,
        r#"{b={x="c"}}"#,
        r#"{b={x="c", id="1"}}"#,
    );
    check(
        "single_prior_null_uses_empty",
        &single,
        "{b=null}",
        r#"{b={x="c"}}"#,
        r#"{b={x="c"}}"#,
    );
    check(
        "single_unknown_config_block_kept",
        &single,
        r#"{b={x="a", id="1"}}"#,
        "{b=?}",
        "{b=?}",
    );
    let group = with_block("g", NestedBlock::group(inner()));
    check(
        "group_merges_computed_from_prior",
        &group,
        r#"{g={x="a", id="1", oc="o"}}"#,
        r#"{g={x="a"}}"#,
        r#"{g={x="a", id="1", oc="o"}}"#,
    );
    check(
        "group_prior_null_root_uses_empty_group",
        &group,
        "null",
        r#"{g={x="a"}}"#,
        r#"{g={x="a"}}"#,
    );
    let nested = with_block(
        "outer",
        NestedBlock::single(Block::new().block("in", NestedBlock::single(inner()))),
    );
    check(
        "single_nested_twice_recurses",
        &nested,
        r#"{outer={in={x="a", id="1"}}}"#,
        r#"{outer={in={x="a"}}}"#,
        r#"{outer={in={x="a", id="1"}}}"#,
    );
}

#[test]
fn list_blocks() {
    let s = with_block("b", NestedBlock::list(inner()));
    check(
        "list_pairs_by_index",
        &s,
        r#"{b=[{x="a", id="1"}, {x="b", id="2"}]}"#,
        r#"{b=[{x="a"}, {x="c"}]}"#,
        r#"{b=[{x="a", id="1"}, {x="c", id="2"}]}"#,
    );
    check(
        "list_extra_config_element_taken_as_is",
        &s,
        r#"{b=[{x="a", id="1"}]}"#,
        r#"{b=[{x="a"}, {x="new"}]}"#,
        r#"{b=[{x="a", id="1"}, {x="new"}]}"#,
    );
    check(
        "list_shorter_config_drops_prior_elements",
        &s,
        r#"{b=[{x="a", id="1"}, {x="b", id="2"}]}"#,
        r#"{b=[{x="a"}]}"#,
        r#"{b=[{x="a", id="1"}]}"#,
    );
    check(
        "list_empty_config_stays_empty",
        &s,
        r#"{b=[{x="a", id="1"}]}"#,
        "{b=[]}",
        "{b=[]}",
    );
    check(
        "list_unknown_config_block_kept",
        &s,
        r#"{b=[{x="a", id="1"}]}"#,
        "{b=?}",
        "{b=?}",
    );
    check(
        "list_prior_null_root",
        &s,
        "null",
        r#"{b=[{x="a"}]}"#,
        r#"{b=[{x="a"}]}"#,
    );
    let ty = s.implied_type();
    let got = proposed_new(&s, &val(&ty, "{b=?}"), &val(&ty, r#"{b=[{x="a"}]}"#));
    assert_eq!(
        got,
        val(&ty, r#"{b=[{x="a", id=?, oc=?}]}"#),
        "case list_unknown_prior_makes_computed_unknown"
    );
}

#[test]
fn dynamic_list_and_map_blocks_keep_structural_kind() {
    let dynamic = Block::new()
        .attr("d", Attribute::optional(Type::Dynamic))
        .attr("id", Attribute::computed(Type::String));
    let s =
        with_block("b", NestedBlock::list(dynamic.clone())).block("m", NestedBlock::map(dynamic));
    let obj = |d: Value, id: Value| Value::object_from([("d", d), ("id", id)]);
    let prior = Value::object_from([
        (
            "b",
            Value::tuple(vec![obj(Value::string("s"), Value::string("1"))]),
        ),
        (
            "m",
            Value::object_from([("k", obj(Value::bool(true), Value::string("2")))]),
        ),
    ]);
    let config = Value::object_from([
        (
            "b",
            Value::tuple(vec![obj(Value::number(5), Value::null(Type::String))]),
        ),
        (
            "m",
            Value::object_from([("k", obj(Value::bool(false), Value::null(Type::String)))]),
        ),
    ]);
    let got = proposed_new(&s, &prior, &config);
    let want = Value::object_from([
        (
            "b",
            Value::tuple(vec![obj(Value::number(5), Value::string("1"))]),
        ),
        (
            "m",
            Value::object_from([("k", obj(Value::bool(false), Value::string("2")))]),
        ),
    ]);
    assert_eq!(got, want, "case dynamic_blocks_tuple_and_object_kept");
}

#[test]
fn map_blocks() {
    let s = with_block("m", NestedBlock::map(inner()));
    check(
        "map_pairs_by_key",
        &s,
        r#"{m={a={x="1", id="A"}, b={x="2", id="B"}}}"#,
        r#"{m={b={x="9"}}}"#,
        r#"{m={b={x="9", id="B"}}}"#,
    );
    check(
        "map_new_key_gets_null_prior",
        &s,
        r#"{m={a={x="1", id="A"}}}"#,
        r#"{m={a={x="1"}, c={x="3"}}}"#,
        r#"{m={a={x="1", id="A"}, c={x="3"}}}"#,
    );
    check(
        "map_empty_config_stays_empty",
        &s,
        r#"{m={a={x="1", id="A"}}}"#,
        "{m={}}",
        "{m={}}",
    );
    check(
        "map_unknown_config_kept",
        &s,
        r#"{m={a={x="1", id="A"}}}"#,
        "{m=?}",
        "{m=?}",
    );
    let ty = s.implied_type();
    let got = proposed_new(&s, &val(&ty, "{m=?}"), &val(&ty, r#"{m={a={x="1"}}}"#));
    assert_eq!(
        got,
        val(&ty, r#"{m={a={x="1", id=?, oc=?}}}"#),
        "case map_unknown_prior_makes_computed_unknown"
    );
}

#[test]
fn set_blocks() {
    let s = with_block("s", NestedBlock::set(inner()));
    check(
        "set_matches_element_differing_only_in_computed",
        &s,
        r#"{s=[{x="a", id="1"}]}"#,
        r#"{s=[{x="a"}]}"#,
        r#"{s=[{x="a", id="1"}]}"#,
    );
    check(
        "set_matches_equal_element",
        &s,
        r#"{s=[{x="a", id="1"}]}"#,
        r#"{s=[{x="a", id="1"}]}"#,
        r#"{s=[{x="a", id="1"}]}"#,
    );
    check(
        "set_non_computed_difference_gets_null_prior",
        &s,
        r#"{s=[{x="a", id="1"}]}"#,
        r#"{s=[{x="b"}]}"#,
        r#"{s=[{x="b"}]}"#,
    );
    check(
        "set_configured_computed_value_differing_gets_null_prior",
        &s,
        r#"{s=[{x="a", id="1", oc="p"}]}"#,
        r#"{s=[{x="a", oc="q"}]}"#,
        r#"{s=[{x="a", oc="q"}]}"#,
    );
    check(
        "set_optional_computed_unset_matches_and_keeps_prior",
        &s,
        r#"{s=[{x="a", id="1", oc="p"}]}"#,
        r#"{s=[{x="a"}]}"#,
        r#"{s=[{x="a", id="1", oc="p"}]}"#,
    );
    check(
        "set_prior_element_used_once",
        &s,
        r#"{s=[{x="a", id="1", oc="p"}]}"#,
        r#"{s=[{x="a"}, {x="a", oc="p"}]}"#,
        r#"{s=[{x="a", oc="p", id="1"}, {x="a"}]}"#,
    );
    check(
        "set_two_elements_each_find_their_prior",
        &s,
        r#"{s=[{x="a", id="1"}, {x="b", id="2"}]}"#,
        r#"{s=[{x="b"}, {x="a"}]}"#,
        r#"{s=[{x="a", id="1"}, {x="b", id="2"}]}"#,
    );
    check(
        "set_unknown_config_element_gets_null_prior",
        &s,
        r#"{s=[{x="a", id="1"}]}"#,
        r#"{s=[{x=?}]}"#,
        r#"{s=[{x=?}]}"#,
    );
    check(
        "set_empty_config_stays_empty",
        &s,
        r#"{s=[{x="a", id="1"}]}"#,
        "{s=[]}",
        "{s=[]}",
    );
    check(
        "set_prior_null_root",
        &s,
        "null",
        r#"{s=[{x="a"}]}"#,
        r#"{s=[{x="a"}]}"#,
    );

    let tags = Block::new()
        .attr("x", Attribute::optional(Type::String))
        .attr(
            "tags",
            Attribute::optional_computed(Type::set(Type::String)),
        )
        .attr("id", Attribute::computed(Type::String));
    let s2 = with_block("s", NestedBlock::set(tags));
    check(
        "set_nested_set_must_match_exactly",
        &s2,
        r#"{s=[{x="a", tags=["t"], id="1"}]}"#,
        r#"{s=[{x="a", tags=["t", "u"]}]}"#,
        r#"{s=[{x="a", tags=["t", "u"]}]}"#,
    );
    check(
        "set_nested_set_equal_matches",
        &s2,
        r#"{s=[{x="a", tags=["t"], id="1"}]}"#,
        r#"{s=[{x="a", tags=["t"]}]}"#,
        r#"{s=[{x="a", tags=["t"], id="1"}]}"#,
    );

    let deep = with_block(
        "s",
        NestedBlock::set(
            Block::new()
                .attr("x", Attribute::optional(Type::String))
                .block("in", NestedBlock::single(inner())),
        ),
    );
    check(
        "set_descends_into_nested_blocks",
        &deep,
        r#"{s=[{x="a", in={x="i", id="9"}}]}"#,
        r#"{s=[{x="a", in={x="i"}}]}"#,
        r#"{s=[{x="a", in={x="i", id="9"}}]}"#,
    );
    check(
        "set_nested_block_non_computed_difference_no_match",
        &deep,
        r#"{s=[{x="a", in={x="i", id="9"}}]}"#,
        r#"{s=[{x="a", in={x="j"}}]}"#,
        r#"{s=[{x="a", in={x="j"}}]}"#,
    );
    let ty = s.implied_type();
    let got = proposed_new(&s, &val(&ty, "{s=?}"), &val(&ty, r#"{s=[{x="a"}]}"#));
    assert_eq!(
        got,
        val(&ty, r#"{s=[{x="a"}]}"#),
        "case set_unknown_prior_elements_get_null_prior"
    );
}

#[test]
fn nested_attributes() {
    let single = with_nested(ObjectNesting::Single, Attribute::optional(Type::Dynamic));
    check(
        "nested_single_merges_computed",
        &single,
        r#"{n={x="a", id="1"}}"#,
        r#"{n={x="b"}}"#,
        r#"{n={x="b", id="1"}}"#,
    );
    check(
        "nested_single_null_config_is_null",
        &single,
        r#"{n={x="a", id="1"}}"#,
        "{n=null}",
        "{n=null}",
    );
    check(
        "nested_single_unknown_config_kept",
        &single,
        r#"{n={x="a", id="1"}}"#,
        "{n=?}",
        "{n=?}",
    );
    check(
        "nested_single_prior_null",
        &single,
        "{n=null}",
        r#"{n={x="b"}}"#,
        r#"{n={x="b"}}"#,
    );

    let list = with_nested(ObjectNesting::List, Attribute::optional(Type::Dynamic));
    check(
        "nested_list_pairs_by_index",
        &list,
        r#"{n=[{x="a", id="1"}]}"#,
        r#"{n=[{x="z"}, {x="y"}]}"#,
        r#"{n=[{x="z", id="1"}, {x="y"}]}"#,
    );
    check(
        "nested_list_null_config_is_null",
        &list,
        r#"{n=[{x="a", id="1"}]}"#,
        "{n=null}",
        "{n=null}",
    );

    let map = with_nested(ObjectNesting::Map, Attribute::optional(Type::Dynamic));
    check(
        "nested_map_pairs_by_key",
        &map,
        r#"{n={k={x="a", id="1"}}}"#,
        r#"{n={k={x="b"}, j={x="c"}}}"#,
        r#"{n={k={x="b", id="1"}, j={x="c"}}}"#,
    );

    let set = with_nested(ObjectNesting::Set, Attribute::optional(Type::Dynamic));
    check(
        "nested_set_correlates_by_heuristic",
        &set,
        r#"{n=[{x="a", id="1"}, {x="b", id="2"}]}"#,
        r#"{n=[{x="b"}]}"#,
        r#"{n=[{x="b", id="2"}]}"#,
    );

    let oc = with_nested(
        ObjectNesting::Single,
        Attribute::optional_computed(Type::Dynamic),
    );
    check(
        "nested_optional_computed_unset_keeps_computed_only_prior",
        &oc,
        r#"{n={id="1"}}"#,
        "{n=null}",
        r#"{n={id="1"}}"#,
    );
    check(
        "nested_optional_computed_unset_after_configured_becomes_null",
        &oc,
        r#"{n={x="from config", id="1"}}"#,
        "{n=null}",
        "{n=null}",
    );
    let oc_list = with_nested(
        ObjectNesting::List,
        Attribute::optional_computed(Type::Dynamic),
    );
    check(
        "nested_optional_computed_list_any_configured_element_makes_null",
        &oc_list,
        r#"{n=[{id="1"}, {x="set", id="2"}]}"#,
        "{n=null}",
        "{n=null}",
    );
    check(
        "nested_optional_computed_list_computed_only_prior_kept",
        &oc_list,
        r#"{n=[{id="1"}]}"#,
        "{n=null}",
        r#"{n=[{id="1"}]}"#,
    );
    let computed = with_nested(ObjectNesting::Single, Attribute::computed(Type::Dynamic));
    check(
        "nested_computed_only_keeps_prior",
        &computed,
        r#"{n={x="a", id="1"}}"#,
        "{n=null}",
        r#"{n={x="a", id="1"}}"#,
    );
}

#[test]
fn planned_data_objects() {
    let s = flat()
        .block("b", NestedBlock::list(inner()))
        .block("one", NestedBlock::single(inner()));
    let ty = s.implied_type();
    let dcheck = |case: &str, config: &str, want: &str| {
        let got = planned_data_resource_object(&s, &val(&ty, config));
        assert_eq!(got, val(&ty, want), "case {case}");
    };
    dcheck(
        "data_computed_unset_becomes_unknown",
        r#"{name="a", b=[]}"#,
        r#"{name="a", id=?, oc=?, b=[], one=null}"#,
    );
    dcheck(
        "data_optional_computed_set_kept",
        r#"{name="a", oc="o", b=[]}"#,
        r#"{name="a", id=?, oc="o", b=[], one=null}"#,
    );
    dcheck(
        "data_optional_unset_stays_null",
        r#"{name="a", opt=null, b=[]}"#,
        r#"{name="a", id=?, oc=?, b=[], one=null}"#,
    );
    dcheck(
        "data_list_block_elements_get_unknown_computed",
        r#"{name="a", b=[{x="1"}]}"#,
        r#"{name="a", id=?, oc=?, b=[{x="1", id=?, oc=?}], one=null}"#,
    );
    dcheck(
        "data_single_block_gets_unknown_computed",
        r#"{name="a", b=[], one={x="1"}}"#,
        r#"{name="a", id=?, oc=?, b=[], one={x="1", id=?, oc=?}}"#,
    );
}

#[test]
fn computed_blocks_are_prepared() {
    let s = with_block("c", NestedBlock::list(inner().computed_block()))
        .block("plain", NestedBlock::list(inner()))
        .block("cs", NestedBlock::set(inner().computed_block()));
    let ty = s.implied_type();
    let pcheck = |case: &str, config: &str, want: &str| {
        assert_eq!(
            prepare_computed_blocks(&s, &val(&ty, config)),
            val(&ty, want),
            "case {case}"
        );
    };
    pcheck(
        "computed_empty_list_becomes_null",
        "{c=[], plain=[], cs=[]}",
        "{c=null, plain=[], cs=null}",
    );
    pcheck(
        "computed_non_empty_unchanged",
        r#"{c=[{x="a"}], plain=[], cs=[{x="b"}]}"#,
        r#"{c=[{x="a"}], plain=[], cs=[{x="b"}]}"#,
    );
    pcheck(
        "computed_unknown_unchanged",
        "{c=?, plain=[], cs=[]}",
        "{c=?, plain=[], cs=null}",
    );
}

/// Issue 12 item 16: a map-nested element with no prior element is the
/// configuration's element unchanged (as lists already were): a null
/// dynamic attribute keeps its type, and a data source's planned object
/// keeps computed attributes inside object-typed map elements null.
#[test]
fn item16_map_elements_without_prior_take_config() {
    // A map block whose elements hold a dynamic attribute is an object.
    let dynamic = Block::new()
        .attr("d", Attribute::optional_computed(Type::Dynamic))
        .attr("id", Attribute::computed(Type::String));
    let s = with_block("m", NestedBlock::map(dynamic.clone()));
    let elem = |d: Value, id: Value| Value::object_from([("d", d), ("id", id)]);
    let prior = Value::object_from([(
        "m",
        Value::object_from([("old", elem(Value::string("x"), Value::string("1")))]),
    )]);
    // A null string in the configuration, as conversion leaves it.
    let config = Value::object_from([(
        "m",
        Value::object_from([(
            "new",
            elem(Value::null(Type::String), Value::null(Type::String)),
        )]),
    )]);
    let got = proposed_new(&s, &prior, &config);
    assert_eq!(
        got, config,
        "case item16_new_key_keeps_config_element_and_its_types"
    );
    assert_eq!(
        got.get_attr("m")
            .unwrap()
            .get_attr("new")
            .unwrap()
            .get_attr("d")
            .unwrap()
            .ty(),
        &Type::String,
        "case item16_null_dynamic_keeps_type"
    );

    let data = planned_data_resource_object(&s, &config);
    assert_eq!(
        data.get_attr("m"),
        config.get_attr("m"),
        "case item16_data_object_map_computed_stay_null"
    );

    // The same through a nested attribute of map nesting.
    let nested = Block::new().attr(
        "n",
        Attribute::nested(
            Attribute::optional(Type::Dynamic),
            ObjectNesting::Map,
            dynamic.attributes.clone(),
        ),
    );
    let nconfig = Value::object_from([(
        "n",
        Value::object_from([(
            "k",
            elem(Value::null(Type::String), Value::null(Type::String)),
        )]),
    )]);
    let nprior = Value::object_from([(
        "n",
        Value::object_from([("j", elem(Value::bool(true), Value::string("2")))]),
    )]);
    assert_eq!(
        proposed_new(&nested, &nprior, &nconfig),
        nconfig,
        "case item16_nested_map_new_key_as_configured"
    );
    assert_eq!(
        planned_data_resource_object(&nested, &nconfig),
        nconfig,
        "case item16_nested_map_data_object_computed_stay_null"
    );

    // A nested set element with no prior is also taken as configured.
    let set = Block::new().attr(
        "n",
        Attribute::nested(
            Attribute::optional(Type::Dynamic),
            ObjectNesting::Set,
            inner_attrs(),
        ),
    );
    check(
        "item16_nested_set_without_prior_as_configured",
        &set,
        r#"{n=[{x="a", id="1"}]}"#,
        r#"{n=[{x="b"}]}"#,
        r#"{n=[{x="b"}]}"#,
    );
}
