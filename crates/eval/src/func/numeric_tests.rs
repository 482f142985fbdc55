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
fn numbers() {
    check("min", vec![num("3"), num("1.5")], Ok(num("1.5")));
    check("max", vec![], Err("Error in function call: Call to function \"max\" failed: must pass at least one number."));
    check("abs", vec![num("-0.5")], Ok(num("0.5")));
    check("ceil", vec![num("-1.2")], Ok(num("-1")));
    check("floor", vec![num("-1.2")], Ok(num("-2")));
    check(
        "pow",
        vec![num("2"), num("0.5")],
        Ok(num("1.4142135623730951")),
    );
    check("pow", vec![num("10"), num("30")], Ok(num("1e30")));
    check("log", vec![num("8"), num("2")], Ok(num("3")));
    check("signum", vec![num("-7")], Ok(num("-1")));
    check("parseint", vec![st("ff"), num("16")], Ok(num("255")));
    check("parseint", vec![st("g"), num("16")], Err("Invalid function argument: Invalid value for \"number\" parameter: cannot parse \"g\" as a base 16 integer."));
    check(
        "abs",
        vec![st("x")],
        Err(
            "Invalid function argument: Invalid value for \"num\" parameter: a number is required.",
        ),
    );
    check("abs", vec![unk(Type::Number)], Ok(unk_nn(Type::Number)));
    check(
        "max",
        vec![num("1"), num("2").mark_sensitive()],
        Ok(num("2").mark_sensitive()),
    );
}
