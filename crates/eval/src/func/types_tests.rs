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

/// `ephemeralasnull` (issue 21 item 2): ephemeral parts, however deep,
/// become nulls of their types; the rest (and the sensitive mark) stays.
#[test]
fn item2_ephemeralasnull_deep() {
    let e = |v: Value| v.mark_ephemeral();
    let cases: Vec<(&str, Value, Value)> = vec![
        ("plain", st("x"), st("x")),
        ("ephemeral", e(st("x")), Value::null(Type::String)),
        (
            "sensitive_kept",
            e(st("x")).mark_sensitive(),
            Value::null(Type::String).mark_sensitive(),
        ),
        ("unknown", e(unk(Type::String)), Value::null(Type::String)),
        (
            "deep",
            Value::object_from([
                ("a", e(st("x"))),
                ("b", st("y")),
                ("c", Value::tuple(vec![st("z"), e(Value::number(1))])),
            ]),
            Value::object_from([
                ("a", Value::null(Type::String)),
                ("b", st("y")),
                ("c", Value::tuple(vec![st("z"), Value::null(Type::Number)])),
            ]),
        ),
    ];
    for (name, arg, want) in cases {
        let got = run("ephemeralasnull", vec![arg]);
        assert_eq!(got, Ok(want), "case {name}");
    }
}
