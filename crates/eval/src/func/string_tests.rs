use super::super::test_support::*;
use terrane_value::{Refinements, Type, Value};

#[track_caller]
fn check(name: &str, args: Vec<Value>, want: Result<Value, &str>) {
    let got = run(name, args);
    match want {
        Ok(v) => assert_eq!(got, Ok(v), "{name}"),
        Err(m) => assert_eq!(got.unwrap_err(), m, "{name}"),
    }
}

#[test]
fn known_inputs() {
    check("upper", vec![st("abc")], Ok(st("ABC")));
    check("lower", vec![st("ÄB")], Ok(st("äb")));
    check(
        "title",
        vec![st("hello world-x_y")],
        Ok(st("Hello World-X_y")),
    );
    check("trim", vec![st("?!a?!"), st("!?")], Ok(st("a")));
    check("trimspace", vec![st(" \n a \t")], Ok(st("a")));
    check("chomp", vec![st("a\r\n\n")], Ok(st("a")));
    check("indent", vec![num("2"), st("a\nb")], Ok(st("a\n  b")));
    check(
        "substr",
        vec![st("hello"), num("-3"), num("-1")],
        Ok(st("llo")),
    );
    check(
        "substr",
        vec![st("e\u{301}x"), num("0"), num("1")],
        Ok(st("e\u{301}")),
    );
    check("strrev", vec![st("ab🤔")], Ok(st("🤔ba")));
    check("split", vec![st(","), st("")], Ok(strs(&[""])));
    check(
        "join",
        vec![st("-"), strs(&["a"]), strs(&["b", "c"])],
        Ok(st("a-b-c")),
    );
    check("startswith", vec![st("hello"), st("he")], Ok(bl(true)));
    check("strcontains", vec![st("hello"), st("z")], Ok(bl(false)));
}

#[test]
fn errors_use_terraform_wording() {
    check("upper", vec![tup(vec![st("a")])], Err("Invalid function argument: Invalid value for \"str\" parameter: string required, but have tuple."));
    check("upper", vec![null(Type::String)], Err("Invalid function argument: Invalid value for \"str\" parameter: argument must not be null."));
    check(
        "upper",
        vec![st("a"), st("b")],
        Err("Too many function arguments: Function \"upper\" expects only 1 argument(s)."),
    );
    check("split", vec![st(",")], Err("Not enough function arguments: Function \"split\" expects 2 argument(s). Missing value for \"str\"."));
    check("join", vec![st(",")], Err("Error in function call: Call to function \"join\" failed: at least one list is required."));
    check(
        "nosuch",
        vec![],
        Err("Call to unknown function: There is no function named \"nosuch\"."),
    );
    check("substr", vec![st("ab"), num("5"), num("1")], Err("Invalid function argument: Invalid value for \"offset\" parameter: offset cannot be larger than the length of the string."));
}

#[test]
fn unknown_and_sensitive() {
    let nn = Value::unknown_refined(Type::String, Refinements::not_null());
    check("upper", vec![unk(Type::String)], Ok(nn.clone()));
    check(
        "join",
        vec![st(","), unk(Type::list(Type::String))],
        Ok(nn.clone()),
    );
    check(
        "upper",
        vec![st("a").mark_sensitive()],
        Ok(st("A").mark_sensitive()),
    );
    check(
        "upper",
        vec![unk(Type::String).mark_sensitive()],
        Ok(nn.mark_sensitive()),
    );
    check(
        "join",
        vec![
            st(","),
            Value::list(Type::String, vec![st("a").mark_sensitive()]),
        ],
        Ok(st("a").mark_sensitive()),
    );
    check("upper", vec![unk(Type::Dynamic)], Ok(unk_nn(Type::String)));
}
