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
fn maps_and_objects() {
    check(
        "merge",
        vec![obj(vec![("a", num("1"))]), obj(vec![("a", st("x"))])],
        Ok(obj(vec![("a", st("x"))])),
    );
    check(
        "merge",
        vec![smap(vec![("a", num("1"))]), smap(vec![("b", num("2"))])],
        Ok(smap(vec![("a", num("1")), ("b", num("2"))])),
    );
    check(
        "merge",
        vec![obj(vec![("a", num("1"))]), null(Type::Dynamic)],
        Ok(obj(vec![("a", num("1"))])),
    );
    check("merge", vec![num("1")], Err("Error in function call: Call to function \"merge\" failed: arguments must be maps or objects, got \"number\"."));
    check("lookup", vec![obj(vec![("a", num("1"))]), st("b")], Err("Invalid function argument: Invalid value for \"inputMap\" parameter: the given object has no attribute \"b\"."));
    check("lookup", vec![smap(vec![("a", st("x"))]), st("b")], Err("Error in function call: Call to function \"lookup\" failed: lookup failed to find key \"b\"."));
    check(
        "lookup",
        vec![smap(vec![("a", st("x"))]), st("b"), st("d")],
        Ok(st("d")),
    );
    check(
        "keys",
        vec![obj(vec![("b", num("1")), ("a", st("x"))])],
        Ok(tup(vec![st("a"), st("b")])),
    );
    check(
        "values",
        vec![smap(vec![("b", num("1")), ("a", num("2"))])],
        Ok(nums(&[2, 1])),
    );
    check("zipmap", vec![strs(&["a"]), nums(&[1, 2])], Err("Error in function call: Call to function \"zipmap\" failed: number of keys (1) does not match number of values (2)."));
    check(
        "zipmap",
        vec![strs(&["a", "b"]), tup(vec![num("1"), st("x")])],
        Ok(obj(vec![("a", num("1")), ("b", st("x"))])),
    );
    let t = Value::map(
        Type::list(Type::String),
        [
            ("a".to_string(), strs(&["x", "y"])),
            ("b".to_string(), strs(&["x"])),
        ]
        .into(),
    );
    check(
        "transpose",
        vec![t],
        Ok(Value::map(
            Type::list(Type::String),
            [
                ("x".to_string(), strs(&["a", "b"])),
                ("y".to_string(), strs(&["a"])),
            ]
            .into(),
        )),
    );
    check("merge", vec![unk(Type::Dynamic)], Ok(unk_nn(Type::Dynamic)));
}
