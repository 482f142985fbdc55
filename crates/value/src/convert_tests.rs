//! Table tests for conversions and unification: one case per rule and per
//! error, plus property tests for identity and number text round trips.

use super::*;
use crate::{Number, Type, Value};
use proptest::prelude::*;

fn s(x: &str) -> Value {
    Value::string(x)
}
fn n(x: &str) -> Value {
    Value::number(Number::parse(x).unwrap())
}
fn b(x: bool) -> Value {
    Value::bool(x)
}
fn obj(attrs: &[(&str, Value)]) -> Value {
    Value::object_from(attrs.iter().cloned())
}

#[track_caller]
fn check(input: Value, want_ty: Type, want: Result<Value, &str>) {
    let got = convert(&input, &want_ty);
    match (got, want) {
        (Ok(g), Ok(w)) => assert_eq!(g, w, "converting {input:?} to {want_ty}"),
        (Err(e), Err(w)) => assert_eq!(e.to_string(), w),
        (g, w) => panic!("converting {input:?} to {want_ty}: got {g:?}, want {w:?}"),
    }
}

#[test]
fn primitives() {
    check(s("12.5"), Type::Number, Ok(n("12.5")));
    check(
        s("123456789012345678901234567890.125"),
        Type::Number,
        Ok(n("123456789012345678901234567890.125")),
    );
    check(
        n("123456789012345678901234567890.125"),
        Type::String,
        Ok(s("123456789012345678901234567890.125")),
    );
    check(s("abc"), Type::Number, Err("a number is required"));
    check(s("true"), Type::Bool, Ok(b(true)));
    check(s("false"), Type::Bool, Ok(b(false)));
    check(s("yes"), Type::Bool, Err("a bool is required"));
    check(b(true), Type::String, Ok(s("true")));
    check(n("1"), Type::Bool, Err("a bool is required"));
    check(b(false), Type::Number, Err("a number is required"));
    check(
        Value::list(Type::String, vec![]),
        Type::String,
        Err("a string is required"),
    );
    check(s("x"), Type::Dynamic, Ok(s("x")));
}

#[test]
fn nulls_and_unknowns() {
    check(
        Value::null(Type::String),
        Type::Number,
        Ok(Value::null(Type::Number)),
    );
    check(
        Value::null(Type::Dynamic),
        Type::list(Type::String),
        Ok(Value::null(Type::list(Type::String))),
    );
    check(
        Value::null(Type::Bool),
        Type::Number,
        Err("a number is required"),
    );
    check(
        Value::unknown(Type::String),
        Type::Number,
        Ok(Value::unknown(Type::Number)),
    );
    check(
        Value::unknown_refined(Type::String, Refinements::default().with_prefix("ab")),
        Type::Number,
        Ok(Value::unknown_refined(
            Type::Number,
            Refinements::not_null(),
        )),
    );
    check(
        Value::unknown_refined(
            Type::list(Type::Number),
            Refinements::default().with_length_bounds(Some(2), None),
        ),
        Type::list(Type::String),
        Ok(Value::unknown_refined(
            Type::list(Type::String),
            Refinements::default().with_length_bounds(Some(2), None),
        )),
    );
}

#[test]
fn collections() {
    let tup = Value::tuple(vec![s("a"), n("1")]);
    check(
        tup.clone(),
        Type::list(Type::String),
        Ok(Value::list(Type::String, vec![s("a"), s("1")])),
    );
    check(
        tup.clone(),
        Type::set(Type::String),
        Ok(Value::set(Type::String, vec![s("1"), s("a")])),
    );
    check(
        tup.clone(),
        Type::list(Type::Number),
        Err("[0]: a number is required"),
    );
    check(
        tup.clone(),
        Type::list(Type::Dynamic),
        Ok(Value::list(Type::String, vec![s("a"), s("1")])),
    );
    check(
        Value::tuple(vec![s("a"), s("a")]),
        Type::set(Type::String),
        Ok(Value::set(Type::String, vec![s("a")])),
    );
    check(
        Value::set(Type::String, vec![s("b"), s("a")]),
        Type::list(Type::String),
        Ok(Value::list(Type::String, vec![s("a"), s("b")])),
    );
    check(
        tup.clone(),
        Type::tuple(vec![Type::String, Type::String]),
        Ok(Value::tuple(vec![s("a"), s("1")])),
    );
    check(
        tup,
        Type::tuple(vec![Type::String]),
        Err("tuple required with exactly 1 elements"),
    );
    check(
        obj(&[("a", n("1")), ("b", s("2"))]),
        Type::map(Type::Number),
        Ok(Value::map(
            Type::Number,
            [("a".into(), n("1")), ("b".into(), n("2"))].into(),
        )),
    );
    check(
        obj(&[("a", b(true))]),
        Type::map(Type::Number),
        Err("[\"a\"]: a number is required"),
    );
    check(
        s("x"),
        Type::list(Type::String),
        Err("list of string required"),
    );
    check(
        s("x"),
        Type::map(Type::String),
        Err("map of string required"),
    );
}

#[test]
fn objects() {
    let want = Type::object_with_optional([("a", Type::String), ("b", Type::Number)], &["b"]);
    check(
        obj(&[("a", s("x"))]),
        want.clone(),
        Ok(obj(&[("a", s("x")), ("b", Value::null(Type::Number))])),
    );
    check(
        obj(&[("a", s("x")), ("b", s("2")), ("extra", b(true))]),
        want.clone(),
        Ok(obj(&[("a", s("x")), ("b", n("2"))])),
    );
    check(
        obj(&[("b", n("1"))]),
        want.clone(),
        Err("attribute \"a\" is required"),
    );
    check(
        Value::map(Type::String, [("a".into(), s("x"))].into()),
        want.clone(),
        Ok(obj(&[("a", s("x")), ("b", Value::null(Type::Number))])),
    );
    let nested = Type::list(Type::object([("port", Type::Number)]));
    check(
        Value::tuple(vec![obj(&[("port", n("80"))]), obj(&[("port", s("http"))])]),
        nested,
        Err("[1].port: a number is required"),
    );
    check(s("x"), want, Err("object required"));
}

#[test]
fn sensitive_marks_travel() {
    let v = Value::tuple(vec![s("1").mark_sensitive(), s("2")]).mark_sensitive();
    let got = convert(&v, &Type::list(Type::Number)).unwrap();
    assert!(got.is_sensitive());
    assert!(got.elements().unwrap()[0].is_sensitive());
    assert!(!got.elements().unwrap()[1].is_sensitive());
    let err = convert(&s("hunter2").mark_sensitive(), &Type::Number).unwrap_err();
    assert!(!err.to_string().contains("hunter2"));
}

#[track_caller]
fn check_unify(types: Vec<Type>, want: Option<Type>) {
    assert_eq!(unify(&types), want, "unify {types:?}");
}

#[test]
fn unification() {
    check_unify(vec![Type::String, Type::String], Some(Type::String));
    check_unify(vec![Type::String, Type::Number], Some(Type::String));
    check_unify(vec![Type::Bool, Type::String], Some(Type::String));
    check_unify(vec![Type::Bool, Type::Number], None);
    check_unify(vec![Type::Dynamic, Type::Number], Some(Type::Number));
    check_unify(vec![Type::Dynamic], Some(Type::Dynamic));
    check_unify(vec![], Some(Type::Dynamic));
    check_unify(
        vec![Type::list(Type::String), Type::list(Type::Number)],
        Some(Type::list(Type::String)),
    );
    check_unify(
        vec![
            Type::object([("a", Type::String)]),
            Type::object([("a", Type::Number)]),
        ],
        Some(Type::object([("a", Type::String)])),
    );
    check_unify(
        vec![
            Type::object([("a", Type::String)]),
            Type::object([("b", Type::Number)]),
        ],
        Some(Type::map(Type::String)),
    );
    check_unify(
        vec![
            Type::tuple(vec![Type::String]),
            Type::tuple(vec![Type::Number]),
        ],
        Some(Type::tuple(vec![Type::String])),
    );
    check_unify(
        vec![Type::tuple(vec![Type::String]), Type::list(Type::Number)],
        Some(Type::list(Type::String)),
    );
    check_unify(
        vec![Type::list(Type::String), Type::set(Type::String)],
        None,
    );
}

#[test]
fn unify_values_converts() {
    let (ty, vs) = unify_values(vec![s("a"), n("2"), Value::null(Type::Dynamic)]).unwrap();
    assert_eq!(ty, Type::String);
    assert_eq!(vs, vec![s("a"), s("2"), Value::null(Type::String)]);
    assert_eq!(
        unify_values(vec![b(true), n("1")]).unwrap_err().to_string(),
        "all values must have the same type"
    );
}

proptest! {
    #[test]
    fn number_text_round_trips(int in any::<i64>(), frac in 0u32..1_000_000, big in "[1-9][0-9]{0,40}") {
        for text in [format!("{int}.{frac:06}"), big.clone(), format!("-{big}.5")] {
            let v = n(&text);
            let as_str = convert(&v, &Type::String).unwrap();
            let back = convert(&as_str, &Type::Number).unwrap();
            prop_assert_eq!(back, v);
        }
    }

    #[test]
    fn identity_on_own_type(xs in proptest::collection::vec("[a-z]{0,4}", 0..6)) {
        let v = Value::list(Type::String, xs.iter().map(|x| s(x)).collect());
        prop_assert_eq!(convert(&v, v.ty()).unwrap(), v.clone());
        let set = Value::set(Type::String, xs.iter().map(|x| s(x)).collect());
        prop_assert_eq!(convert(&set, set.ty()).unwrap(), set);
    }
}
