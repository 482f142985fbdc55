use super::super::test_support::*;
use terrane_value::{Refinements, Type, Value};

#[track_caller]
fn check(args: Vec<Value>, want: Result<Value, &str>) {
    let got = run("format", args);
    match want {
        Ok(v) => assert_eq!(got, Ok(v)),
        Err(m) => assert_eq!(got.unwrap_err(), m),
    }
}

#[test]
fn verbs() {
    check(
        vec![st("%d-%5.2f-%q"), num("12"), num("3.14159"), st("x")],
        Ok(st("12- 3.14-\"x\"")),
    );
    check(
        vec![st("%v|%v"), num("1e21"), null(Type::String)],
        Ok(st("1e+21|null")),
    );
    check(
        vec![st("%s"), num("1e21")],
        Ok(st("1000000000000000000000")),
    );
    check(
        vec![st("%#v"), obj(vec![("a", num("1"))])],
        Ok(st("{\"a\":1}")),
    );
    check(vec![st("%[2]s %[1]s"), st("a"), st("b")], Ok(st("b a")));
    check(
        vec![st("%05d|%x"), num("-42"), num("255")],
        Ok(st("-0042|ff")),
    );
    check(vec![st("100%%")], Ok(st("100%")));
}

#[test]
fn errors() {
    check(vec![st("%d"), num("1.5")], Err("Error in function call: Call to function \"format\" failed: unsupported value for \"%d\" at 0: an integer is required."));
    check(vec![st("%s")], Err("Error in function call: Call to function \"format\" failed: not enough arguments for \"%s\" at 0: need index 1 but have 0 total."));
    check(vec![st("%z"), num("1")], Err("Error in function call: Call to function \"format\" failed: unsupported format verb 'z' in \"%z\" at offset 0."));
    check(vec![st("%s"), null(Type::String)], Err("Error in function call: Call to function \"format\" failed: unsupported value for \"%s\" at 0: null value cannot be formatted."));
}

#[test]
fn unknown_keeps_known_prefix() {
    let want = Value::unknown_refined(Type::String, Refinements::not_null().with_prefix("ab-"));
    check(vec![st("ab-%s-%s"), unk(Type::String), st("x")], Ok(want));
    check(vec![unk(Type::String), st("x")], Ok(unk_nn(Type::String)));
    check(
        vec![st("%s"), st("x").mark_sensitive()],
        Ok(st("x").mark_sensitive()),
    );
}

#[test]
fn formatlist_rows() {
    let got = run("formatlist", vec![st("%s-%d"), strs(&["a", "b"]), num("1")]);
    assert_eq!(got, Ok(strs(&["a-1", "b-1"])));
    assert_eq!(
        run("formatlist", vec![st("%s"), unk(Type::list(Type::String))]),
        Ok(unk_nn(Type::list(Type::String)))
    );
}
