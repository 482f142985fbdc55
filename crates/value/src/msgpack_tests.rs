//! Byte-exact msgpack vectors written by hand from the wire rules, decode
//! cases for every accepted alternative form, error cases, and property
//! round trips over generated types and values.

use super::*;
use crate::test_support::{arb_type_and_value, strip_marks};
use crate::{Number, Refinements, Type, Value};
use proptest::prelude::*;

fn n(x: &str) -> Value {
    Value::number(Number::parse(x).unwrap())
}
fn s(x: &str) -> Value {
    Value::string(x)
}
fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}
fn unhex(h: &str) -> Vec<u8> {
    h.split_whitespace()
        .map(|b| u8::from_str_radix(b, 16).unwrap())
        .collect()
}

/// Encodes `v` as `ty`, compares with the hand-written bytes, and decodes
/// the bytes back to `v`.
#[track_caller]
fn check(v: Value, ty: Type, want_hex: &str) {
    let got = encode(&v, &ty).unwrap();
    assert_eq!(hex(&got), want_hex, "encoding {v:?} as {ty}");
    let back = decode(&got, &ty).unwrap();
    assert_eq!(back, v, "decoding {want_hex}");
}

#[test]
fn integers_use_the_smallest_encoding() {
    check(n("0"), Type::Number, "00");
    check(n("1"), Type::Number, "01");
    check(n("127"), Type::Number, "7f");
    check(n("128"), Type::Number, "cc 80");
    check(n("255"), Type::Number, "cc ff");
    check(n("256"), Type::Number, "cd 01 00");
    check(n("65536"), Type::Number, "ce 00 01 00 00");
    check(n("4294967296"), Type::Number, "cf 00 00 00 01 00 00 00 00");
    check(n("-1"), Type::Number, "ff");
    check(n("-32"), Type::Number, "e0");
    check(n("-33"), Type::Number, "d0 df");
    check(n("-129"), Type::Number, "d1 ff 7f");
    check(n("-32769"), Type::Number, "d2 ff ff 7f ff");
    check(
        n("9223372036854775807"),
        Type::Number,
        "cf 7f ff ff ff ff ff ff ff",
    );
    check(
        n("-9223372036854775808"),
        Type::Number,
        "d3 80 00 00 00 00 00 00 00",
    );
}

#[test]
fn non_integers_are_float64_or_decimal_text() {
    check(n("1.5"), Type::Number, "cb 3f f8 00 00 00 00 00 00");
    check(n("-0.25"), Type::Number, "cb bf d0 00 00 00 00 00 00");
    // 2^63 is exact in float64 but not in int64.
    check(
        n("9223372036854775808"),
        Type::Number,
        "cb 43 e0 00 00 00 00 00 00",
    );
    // 0.1 has no exact float64: decimal text.
    check(n("0.1"), Type::Number, "a3 30 2e 31");
    check(
        n("18446744073709551617"),
        Type::Number,
        "b4 31 38 34 34 36 37 34 34 30 37 33 37 30 39 35 35 31 36 31 37",
    );
    let big = "123456789012345678901234567890.125";
    let want = format!("d9 22 {}", hex(big.as_bytes()));
    check(n(big), Type::Number, &want);
    check(
        Value::number(Number::PosInfinity),
        Type::Number,
        "cb 7f f0 00 00 00 00 00 00",
    );
    check(
        Value::number(Number::NegInfinity),
        Type::Number,
        "cb ff f0 00 00 00 00 00 00",
    );
}

#[test]
fn primitives_and_null() {
    check(Value::bool(true), Type::Bool, "c3");
    check(Value::bool(false), Type::Bool, "c2");
    check(s("hi"), Type::String, "a2 68 69");
    check(s(""), Type::String, "a0");
    check(Value::null(Type::String), Type::String, "c0");
    check(
        Value::null(Type::list(Type::Number)),
        Type::list(Type::Number),
        "c0",
    );
}

#[test]
fn unknowns_and_refinements() {
    check(Value::unknown(Type::String), Type::String, "d4 00 00");
    check(
        Value::unknown(Type::object([("a", Type::Bool)])),
        Type::object([("a", Type::Bool)]),
        "d4 00 00",
    );
    // not null: {1: false}
    check(
        Value::unknown_refined(Type::String, Refinements::not_null()),
        Type::String,
        "c7 03 0c 81 01 c2",
    );
    // prefix "ab": {1: false, 2: "ab"}
    check(
        Value::unknown_refined(Type::String, Refinements::default().with_prefix("ab")),
        Type::String,
        "c7 07 0c 82 01 c2 02 a2 61 62",
    );
    // number bounds: {3: [0, true], 4: [10, false]}
    let r = Refinements::default().with_number_bounds(
        Some(crate::Bound {
            value: Number::from_i64(0),
            inclusive: true,
        }),
        Some(crate::Bound {
            value: Number::from_i64(10),
            inclusive: false,
        }),
    );
    check(
        Value::unknown_refined(Type::Number, r),
        Type::Number,
        "c7 09 0c 82 03 92 00 c3 04 92 0a c2",
    );
    // length bounds: {5: 1, 6: 3}
    let r = Refinements {
        not_null: true,
        ..Default::default()
    }
    .with_length_bounds(Some(1), Some(3));
    check(
        Value::unknown_refined(Type::list(Type::String), r),
        Type::list(Type::String),
        "c7 07 0c 83 01 c2 05 01 06 03",
    );
}

#[test]
fn dynamic_values_are_wrapped_with_their_type() {
    // ["\"string\"" as bin, "x"]
    check(
        s("x"),
        Type::Dynamic,
        "92 c4 08 22 73 74 72 69 6e 67 22 a1 78",
    );
    check(Value::null(Type::Dynamic), Type::Dynamic, "c0");
    check(Value::unknown(Type::Dynamic), Type::Dynamic, "d4 00 00");
    // A typed null in a dynamic position keeps its type.
    check(
        Value::null(Type::Bool),
        Type::Dynamic,
        "92 c4 06 22 62 6f 6f 6c 22 c0",
    );
    let ty = Type::object([("d", Type::Dynamic)]);
    check(
        Value::object_from([("d", Value::list(Type::Number, vec![n("1")]))]),
        ty,
        "81 a1 64 92 c4 11 5b 22 6c 69 73 74 22 2c 22 6e 75 6d 62 65 72 22 5d 91 01",
    );
}

#[test]
fn collections_and_structures() {
    check(
        Value::list(Type::String, vec![s("b"), s("a")]),
        Type::list(Type::String),
        "92 a1 62 a1 61",
    );
    // Sets are written in canonical order whatever the input order.
    check(
        Value::set(Type::String, vec![s("b"), s("a"), s("b")]),
        Type::set(Type::String),
        "92 a1 61 a1 62",
    );
    check(
        Value::set(Type::Number, vec![n("10"), n("-1"), n("2")]),
        Type::set(Type::Number),
        "93 ff 02 0a",
    );
    check(
        Value::set(Type::Bool, vec![Value::bool(true), Value::bool(false)]),
        Type::set(Type::Bool),
        "92 c2 c3",
    );
    check(
        Value::map(
            Type::Number,
            [("z".into(), n("1")), ("a".into(), n("2"))].into(),
        ),
        Type::map(Type::Number),
        "82 a1 61 02 a1 7a 01",
    );
    let ty = Type::object([("b", Type::Bool), ("a", Type::String)]);
    check(
        Value::object_from([("b", Value::bool(true)), ("a", s("x"))]),
        ty,
        "82 a1 61 a1 78 a1 62 c3",
    );
    check(
        Value::tuple(vec![s("a"), n("1")]),
        Type::tuple(vec![Type::String, Type::Number]),
        "92 a1 61 01",
    );
    let inner = Type::object([("k", Type::set(Type::String))]);
    check(
        Value::list(
            inner.clone(),
            vec![Value::object_from([(
                "k",
                Value::set(Type::String, vec![s("y"), s("x")]),
            )])],
        ),
        Type::list(inner),
        "91 81 a1 6b 92 a1 78 a1 79",
    );
    check(
        Value::list(Type::String, vec![]),
        Type::list(Type::String),
        "90",
    );
    check(
        Value::map(Type::String, Default::default()),
        Type::map(Type::String),
        "80",
    );
}

#[track_caller]
fn check_decode(h: &str, ty: Type, want: Result<Value, &str>) {
    let got = decode(&unhex(h), &ty);
    match (got, want) {
        (Ok(g), Ok(w)) => assert_eq!(g, w, "{h}"),
        (Err(e), Err(w)) => assert!(
            e.to_string().contains(w),
            "{h}: error {e:?} does not contain {w:?}"
        ),
        (g, w) => panic!("{h}: got {g:?}, want {w:?}"),
    }
}

#[test]
fn decoding_accepts_alternative_forms() {
    check_decode("d0 05", Type::Number, Ok(n("5")));
    check_decode("cd 00 05", Type::Number, Ok(n("5")));
    check_decode("ca 3f c0 00 00", Type::Number, Ok(n("1.5")));
    check_decode("cb 40 00 00 00 00 00 00 00", Type::Number, Ok(n("2")));
    check_decode("a4 31 2e 32 35", Type::Number, Ok(n("1.25")));
    check_decode("d4 05 00", Type::String, Ok(Value::unknown(Type::String)));
    // Attributes in any order; absent attributes are null.
    let ty = Type::object([("a", Type::String), ("b", Type::Bool)]);
    check_decode(
        "81 a1 62 c3",
        ty.clone(),
        Ok(Value::object_from([
            ("a", Value::null(Type::String)),
            ("b", Value::bool(true)),
        ])),
    );
    // Keys in reverse order, and a key between two of the type's.
    check_decode(
        "82 a1 62 c3 a1 61 a1 78",
        ty.clone(),
        Ok(Value::object_from([
            ("a", s("x")),
            ("b", Value::bool(true)),
        ])),
    );
    let abc = Type::object([("a", Type::Bool), ("b", Type::Bool), ("c", Type::Bool)]);
    check_decode(
        "82 a1 63 c3 a1 61 c2",
        abc,
        Ok(Value::object_from([
            ("a", Value::bool(false)),
            ("b", Value::null(Type::Bool)),
            ("c", Value::bool(true)),
        ])),
    );
    // Unknown refinement keys are ignored.
    check_decode(
        "c7 06 0c 82 09 a1 78 01 c2",
        Type::String,
        Ok(Value::unknown_refined(
            Type::String,
            Refinements::not_null(),
        )),
    );
    // A dynamic type JSON as str instead of bin.
    check_decode(
        "92 a6 22 62 6f 6f 6c 22 c3",
        Type::Dynamic,
        Ok(Value::bool(true)),
    );
}

/// Issue 12 item 15: a decoded set keeps elements that differ only by
/// unknowns apart (two unknowns are never known to be equal), and still
/// merges wholly known duplicates.
#[test]
fn item15_decoded_set_keeps_unknown_elements_distinct() {
    let obj = Type::object([("a", Type::String), ("b", Type::String)]);
    let unknown_a = || Value::object_from([("a", Value::unknown(Type::String)), ("b", s("x"))]);
    // [{a: unknown, b: "x"}, {a: unknown, b: "x"}]
    let two_unknown = "92 82 a1 61 d4 00 00 a1 62 a1 78 82 a1 61 d4 00 00 a1 62 a1 78";
    let got = decode(&unhex(two_unknown), &Type::set(obj.clone())).unwrap();
    assert_eq!(got.elements().map(<[Value]>::len), Some(2), "{got:?}");
    assert_eq!(got, Value::set(obj.clone(), vec![unknown_a(), unknown_a()]));
    // Two wholly unknown strings, and two equal known strings.
    check_decode(
        "92 d4 00 00 d4 00 00",
        Type::set(Type::String),
        Ok(Value::set(
            Type::String,
            vec![Value::unknown(Type::String), Value::unknown(Type::String)],
        )),
    );
    let merged = decode(&unhex("92 a1 78 a1 78"), &Type::set(Type::String)).unwrap();
    assert_eq!(merged.elements().map(<[Value]>::len), Some(1));
}

#[test]
fn decoding_errors() {
    check_decode("", Type::String, Err("unexpected end of data"));
    check_decode("a3 61", Type::String, Err("unexpected end of data"));
    check_decode("c1", Type::String, Err("invalid marker"));
    check_decode("01 02", Type::Number, Err("1 unexpected bytes"));
    check_decode("01", Type::String, Err("string required"));
    check_decode("a1 78", Type::Number, Err("number required"));
    check_decode("a2 c3 28", Type::String, Err("UTF-8"));
    check_decode(
        "81 a1 7a c3",
        Type::object([("a", Type::Bool)]),
        Err("unsupported attribute \"z\""),
    );
    check_decode(
        "82 a1 61 c3 a1 61 c2",
        Type::object([("a", Type::Bool)]),
        Err("duplicate attribute"),
    );
    check_decode(
        "81 a2 c3 28 c3",
        Type::object([("a", Type::Bool)]),
        Err("map key is not valid UTF-8"),
    );
    check_decode(
        "81 01 c3",
        Type::map(Type::Bool),
        Err("map keys must be strings"),
    );
    check_decode("91 a1 78", Type::list(Type::Number), Err("at [0]"));
    check_decode(
        "92 01",
        Type::tuple(vec![Type::Number]),
        Err("tuple of 1 elements required"),
    );
    check_decode(
        "d5 05 01 02",
        Type::String,
        Err("unsupported msgpack extension 5"),
    );
    check_decode(
        "d6 00 00 00 00 00",
        Type::String,
        Err("unsupported msgpack extension 0"),
    );
    check_decode("a1 78", Type::Dynamic, Err("[type, value] pair"));
    check_decode(
        "92 c4 03 66 6f 6f 01",
        Type::Dynamic,
        Err("invalid type constraint JSON"),
    );
    check_decode(
        "dd ff ff ff ff",
        Type::list(Type::Bool),
        Err("unexpected end of data"),
    );
    // Found by the fuzzer: an exponent of five million must not be expanded.
    check_decode(
        "ab 2e 30 32 65 35 31 32 30 31 30 31",
        Type::Number,
        Err("number required"),
    );
    let deep = format!("{}c0", "91 ".repeat(300));
    let mut ty = Type::Bool;
    for _ in 0..300 {
        ty = Type::list(ty);
    }
    check_decode(&deep, ty, Err("nested too deeply"));
}

#[test]
fn encoding_errors() {
    fn check(name: &str, v: Value, ty: Type, want: &str) {
        let err = encode(&v, &ty).expect_err(name);
        assert_eq!(err.to_string(), want, "{name}");
    }
    fn num(name: &str) -> (&str, Type) {
        (name, Type::Number)
    }
    let ab = Type::object([num("a"), num("b")]);
    let one = |k: &str| Value::object_from([(k, n("1"))]);
    check(
        "top level",
        s("x"),
        Type::Number,
        "cannot encode value: a string value cannot be written as number",
    );
    check(
        "in an attribute",
        Value::object_from([("a", s("x"))]),
        Type::object([num("a")]),
        "cannot encode value at .a: a string value cannot be written as number",
    );
    check(
        "the path through every kind of step, outermost first",
        Value::object_from([(
            "outer",
            Value::map(
                Type::list(Type::Number),
                [(
                    "k".to_string(),
                    Value::list(Type::Number, vec![n("1"), s("x")]),
                )]
                .into(),
            ),
        )]),
        Type::object([("outer", Type::map(Type::list(Type::Number)))]),
        "cannot encode value at .outer[\"k\"][1]: a string value cannot be written as number",
    );
    check(
        "a missing attribute",
        one("a"),
        ab.clone(),
        "cannot encode value: missing attribute \"b\"",
    );
    check(
        "an extra attribute after all the type's",
        Value::object_from([("a", n("1")), ("b", n("2")), ("c", n("3"))]),
        ab.clone(),
        "cannot encode value: unexpected attribute \"c\"",
    );
    check(
        "an extra attribute among the type's",
        Value::object_from([("a", n("1")), ("aa", n("2")), ("b", n("3"))]),
        ab.clone(),
        "cannot encode value: unexpected attribute \"aa\"",
    );
    check(
        "a missing attribute is named before an extra one",
        Value::object_from([("a", n("1")), ("c", n("2"))]),
        ab.clone(),
        "cannot encode value: missing attribute \"b\"",
    );
    check(
        "a later attribute's error comes before an extra one",
        Value::object_from([("a", n("1")), ("aa", n("2")), ("b", s("x"))]),
        ab,
        "cannot encode value at .b: a string value cannot be written as number",
    );
}

#[test]
fn sensitive_marks_are_not_written() {
    let v = Value::list(Type::String, vec![s("secret").mark_sensitive()]);
    assert_eq!(hex(&encode(&v, v.ty()).unwrap()), "91 a6 73 65 63 72 65 74");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    #[test]
    fn round_trips((ty, v) in arb_type_and_value(true)) {
        let bytes = encode(&v, &ty).unwrap();
        let back = decode(&bytes, &ty).unwrap();
        prop_assert_eq!(&back, &strip_marks(&v));
        prop_assert_eq!(encode(&back, &ty).unwrap(), bytes);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        for ty in [Type::Dynamic, Type::list(Type::String), Type::object([("a", Type::Number), ("b", Type::set(Type::Bool))])] {
            let _ = decode(&bytes, &ty);
        }
    }
}
