use super::super::test_support::*;
use terrane_value::{Bound, Number, Refinements, Type, Value};

#[track_caller]
fn check(name: &str, args: Vec<Value>, want: Result<Value, &str>) {
    let got = run(name, args);
    match want {
        Ok(v) => assert_eq!(got, Ok(v), "{name}"),
        Err(m) => assert_eq!(got.unwrap_err(), m, "{name}"),
    }
}

#[test]
fn picks() {
    check("length", vec![st("héllo")], Ok(num("5")));
    check("length", vec![obj(vec![("a", num("1"))])], Ok(num("1")));
    check("element", vec![strs(&["a", "b"]), num("-1")], Ok(st("b")));
    check("element", vec![tup(vec![])], Err("Not enough function arguments: Function \"element\" expects 2 argument(s). Missing value for \"index\"."));
    check("element", vec![strs(&[]), num("0")], Err("Error in function call: Call to function \"element\" failed: cannot use element function with an empty list."));
    check("index", vec![strs(&["a", "b"]), st("b")], Ok(num("1")));
    check(
        "index",
        vec![nums(&[1]), st("1")],
        Err("Error in function call: Call to function \"index\" failed: item not found."),
    );
    check("contains", vec![nums(&[1, 2]), st("2")], Ok(bl(false)));
    check("one", vec![strs(&[])], Ok(null(Type::String)));
    check(
        "coalesce",
        vec![null(Type::String), st(""), st("b")],
        Ok(st("b")),
    );
    check("coalesce", vec![num("1"), st("a")], Ok(st("1")));
    check("coalesce", vec![null(Type::String)], Err("Error in function call: Call to function \"coalesce\" failed: no non-null, non-empty-string arguments."));
    check(
        "compact",
        vec![Value::list(
            Type::String,
            vec![st("a"), st(""), null(Type::String)],
        )],
        Ok(strs(&["a"])),
    );
    check(
        "alltrue",
        vec![tup(vec![null(Type::Bool), bl(true)])],
        Ok(bl(false)),
    );
    check(
        "anytrue",
        vec![tup(vec![null(Type::Bool), bl(true)])],
        Ok(bl(true)),
    );
    check("sum", vec![tup(vec![st("1"), num("2.5")])], Ok(num("3.5")));
    check("sum", vec![tup(vec![])], Err("Invalid function argument: Invalid value for \"list\" parameter: cannot sum an empty list."));
    check(
        "range",
        vec![num("0"), num("1"), num("0.25")],
        Ok(Value::list(
            Type::Number,
            vec![num("0"), num("0.25"), num("0.5"), num("0.75")],
        )),
    );
    check(
        "range",
        vec![num("5"), num("0"), num("-2")],
        Ok(nums(&[5, 3, 1])),
    );
    check(
        "chunklist",
        vec![nums(&[1, 2, 3]), num("2")],
        Ok(Value::list(
            Type::list(Type::Number),
            vec![nums(&[1, 2]), nums(&[3])],
        )),
    );
}

#[test]
fn length_of_unknowns_is_refined() {
    let bounded = Value::unknown_refined(
        Type::list(Type::String),
        Refinements::default().with_length_bounds(Some(2), Some(4)),
    );
    let want = Refinements::not_null().with_number_bounds(
        Some(Bound {
            value: Number::from_i64(2),
            inclusive: true,
        }),
        Some(Bound {
            value: Number::from_i64(4),
            inclusive: true,
        }),
    );
    check(
        "length",
        vec![bounded],
        Ok(Value::unknown_refined(Type::Number, want)),
    );
    check(
        "length",
        vec![unk(Type::tuple(vec![Type::String, Type::Number]))],
        Ok(num("2")),
    );
    check(
        "length",
        vec![strs(&["a"]).mark_sensitive()],
        Ok(num("1").mark_sensitive()),
    );
    check(
        "length",
        vec![Value::list(Type::String, vec![st("a").mark_sensitive()])],
        Ok(num("1")),
    );
    check("length", vec![null(Type::String)], Err("Invalid function argument: Invalid value for \"value\" parameter: argument must not be null."));
}

#[test]
fn unknown_elements() {
    check(
        "sum",
        vec![Value::list(Type::Number, vec![unk(Type::Number)])],
        Ok(unk_nn(Type::Number)),
    );
    check(
        "coalesce",
        vec![unk(Type::String), st("a")],
        Ok(unk_nn(Type::String)),
    );
    check(
        "contains",
        vec![strs(&["a"]), unk(Type::String)],
        Ok(unk_nn(Type::Bool)),
    );
    check(
        "element",
        vec![strs(&["a"]), unk(Type::Number)],
        Ok(Value::unknown(Type::String)),
    );
}
