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
fn conversions() {
    check(
        "tostring",
        vec![num("1e21")],
        Ok(st("1000000000000000000000")),
    );
    check(
        "tostring",
        vec![null(Type::Dynamic)],
        Ok(null(Type::String)),
    );
    check("tonumber", vec![st("x")], Err("Invalid function argument: Invalid value for \"v\" parameter: cannot convert \"x\" to number; given string must be a decimal representation of a number."));
    check(
        "tolist",
        vec![tup(vec![num("1"), st("a")])],
        Ok(strs(&["1", "a"])),
    );
    check("tolist", vec![obj(vec![("a", num("1"))])], Err("Invalid function argument: Invalid value for \"v\" parameter: cannot convert object to list of any single type."));
    check(
        "toset",
        vec![strs(&["b", "a", "b"])],
        Ok(Value::set(Type::String, vec![st("a"), st("b")])),
    );
    check(
        "tomap",
        vec![obj(vec![("a", num("1"))])],
        Ok(smap(vec![("a", num("1"))])),
    );
    check("tostring", vec![unk(Type::Number)], Ok(unk(Type::String)));
    check(
        "tostring",
        vec![st("s").mark_sensitive()],
        Ok(st("s").mark_sensitive()),
    );
}

#[test]
fn marks() {
    check("sensitive", vec![st("x")], Ok(st("x").mark_sensitive()));
    check("nonsensitive", vec![st("x").mark_sensitive()], Ok(st("x")));
    check("nonsensitive", vec![st("x")], Ok(st("x")));
    check("issensitive", vec![st("x").mark_sensitive()], Ok(bl(true)));
    check("issensitive", vec![unk(Type::String)], Ok(bl(false)));
    check(
        "sensitive",
        vec![unk(Type::String)],
        Ok(unk(Type::String).mark_sensitive()),
    );
    check("type", vec![strs(&["a"])], Ok(st("list(string)")));
}
