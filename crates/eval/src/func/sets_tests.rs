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

fn set(items: &[&str]) -> Value {
    Value::set(Type::String, items.iter().map(|s| st(s)).collect())
}

#[test]
fn algebra() {
    check(
        "setunion",
        vec![strs(&["a"]), tup(vec![num("1")])],
        Ok(set(&["1", "a"])),
    );
    check(
        "setintersection",
        vec![strs(&["a", "b"]), strs(&["b", "c"])],
        Ok(set(&["b"])),
    );
    check(
        "setsubtract",
        vec![strs(&["a", "b"]), strs(&["b"])],
        Ok(set(&["a"])),
    );
    check("setproduct", vec![strs(&["a"])], Err("Error in function call: Call to function \"setproduct\" failed: at least two arguments are required."));
    let pair = Type::tuple(vec![Type::String, Type::Number]);
    check(
        "setproduct",
        vec![strs(&["a"]), nums(&[1])],
        Ok(Value::list(
            pair.clone(),
            vec![tup(vec![st("a"), num("1")])],
        )),
    );
    check(
        "setunion",
        vec![strs(&["a"]), unk(Type::set(Type::String))],
        Ok(unk_nn(Type::set(Type::String))),
    );
}
