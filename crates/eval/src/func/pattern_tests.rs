use super::super::test_support::*;
use terrane_value::{Type, Value};

#[track_caller]
fn check(name: &str, args: Vec<Value>, want: Result<Value, &str>) {
    let got = run(name, args);
    match want {
        Ok(v) => assert_eq!(got, Ok(v), "{name}"),
        Err(m) => assert_eq!(got.unwrap_err(), m, "{name}"),
    }
}

#[test]
fn matches() {
    check("regex", vec![st("[a-z]+"), st("12ab3")], Ok(st("ab")));
    check(
        "regex",
        vec![st("(\\d)(x)?"), st("1")],
        Ok(tup(vec![st("1"), null(Type::String)])),
    );
    check(
        "regex",
        vec![st("(?P<a>\\d)"), st("7")],
        Ok(obj(vec![("a", st("7"))])),
    );
    check(
        "regexall",
        vec![st("\\d"), st("a1b2")],
        Ok(strs(&["1", "2"])),
    );
    check(
        "replace",
        vec![st("hello"), st("/l(.)/"), st("<$1>")],
        Ok(st("he<l>o")),
    );
    check("replace", vec![st("a.b"), st("."), st("-")], Ok(st("a-b")));
    check("regex", vec![st("x"), st("abc")], Err("Error in function call: Call to function \"regex\" failed: pattern did not match any part of the given string."));
    check(
        "regex",
        vec![unk(Type::String), st("abc")],
        Ok(unk_nn(Type::Dynamic)),
    );
    check(
        "regex",
        vec![st("(a)"), unk(Type::String)],
        Ok(unk_nn(Type::tuple(vec![Type::String]))),
    );
}
