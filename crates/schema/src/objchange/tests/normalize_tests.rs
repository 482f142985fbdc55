//! normalize_from_legacy_sdk: the legacy SDK's block artefacts settled,
//! everything else untouched (issue 15 item 3).

use super::dsl::val;
use crate::objchange::normalize_from_legacy_sdk;
use crate::{Attribute, Block, NestedBlock};
use terrane_value::Type;

fn inner() -> Block {
    Block::new().attr("port", Attribute::optional(Type::Number))
}

fn schema() -> Block {
    Block::new()
        .attr("name", Attribute::optional(Type::String))
        .attr("tags", Attribute::optional(Type::list(Type::String)))
        .block("rule", NestedBlock::list(inner()))
        .block("tag", NestedBlock::set(inner()))
        .block("timeouts", NestedBlock::single(inner()))
        .block("group", NestedBlock::group(inner()))
        .block("by_key", NestedBlock::map(inner()))
}

#[track_caller]
fn check(name: &str, input: &str, want: &str) {
    let s = schema();
    let ty = s.implied_type();
    let got = normalize_from_legacy_sdk(&s, &val(&ty, input));
    assert_eq!(got, val(&ty, want), "case {name}");
}

#[test]
fn item3_legacy_sdk_results_are_normalized() {
    let cases = [
        (
            "null_list_and_set_blocks_become_empty",
            "{ name = \"a\", rule = null, tag = null, group = {} }",
            "{ name = \"a\", rule = [], tag = [], group = {} }",
        ),
        (
            "null_group_block_becomes_its_empty_value",
            "{ group = null, rule = [], tag = [] }",
            "{ group = { port = null }, rule = [], tag = [] }",
        ),
        (
            "null_single_block_stays_null",
            "{ timeouts = null, rule = [], tag = [], group = {} }",
            "{ timeouts = null, rule = [], tag = [], group = {} }",
        ),
        (
            "present_blocks_are_normalized_inside",
            "{ rule = [{ port = 1 }, { port = 2 }], tag = [{ port = 3 }], timeouts = { port = 4 }, group = {} }",
            "{ rule = [{ port = 1 }, { port = 2 }], tag = [{ port = 3 }], timeouts = { port = 4 }, group = {} }",
        ),
        (
            "unknown_list_block_becomes_a_stub",
            "{ rule = ?, tag = [], group = {} }",
            "{ rule = [{ port = ? }], tag = [], group = {} }",
        ),
        (
            "unknown_single_block_becomes_a_stub",
            "{ timeouts = ?, rule = [], tag = [], group = {} }",
            "{ timeouts = { port = ? }, rule = [], tag = [], group = {} }",
        ),
        (
            "attributes_are_untouched",
            "{ name = \"\", tags = null, rule = [], tag = [], group = {} }",
            "{ name = \"\", tags = null, rule = [], tag = [], group = {} }",
        ),
        (
            "map_blocks_as_they_came",
            "{ by_key = null, rule = [], tag = [], group = {} }",
            "{ by_key = null, rule = [], tag = [], group = {} }",
        ),
        ("null_object_stays_null", "null", "null"),
    ];
    for (name, input, want) in cases {
        check(name, input, want);
    }
}

/// Issue 13 ("no slower"): a block-less schema has nothing to settle, and
/// the early return gives back the very object, whatever its attributes
/// hold; with blocks, the full normalization still runs.
#[test]
fn item1_block_less_schema_is_the_identity() {
    let flat = inner().attr("name", Attribute::optional(Type::String));
    let ty = flat.implied_type();
    let cases = [
        ("known_attributes", "{ port = 1, name = \"a\" }"),
        ("null_attributes", "{ port = null, name = null }"),
        ("unknown_attribute", "{ port = ?, name = \"a\" }"),
        ("null_object", "null"),
    ];
    for (name, input) in cases {
        let v = val(&ty, input);
        assert_eq!(normalize_from_legacy_sdk(&flat, &v), v, "case {name}");
    }
    let sensitive = val(&ty, "{ port = 1, name = \"a\" }").mark_sensitive();
    let got = normalize_from_legacy_sdk(&flat, &sensitive);
    assert_eq!(
        got.unmark_deep(),
        sensitive.unmark_deep(),
        "case sensitive_object"
    );
    check(
        "blocks_still_normalized",
        "{ name = \"a\", rule = null, tag = null, group = {} }",
        "{ name = \"a\", rule = [], tag = [], group = {} }",
    );
}
