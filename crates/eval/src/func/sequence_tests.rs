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
fn sequences() {
    check(
        "concat",
        vec![strs(&["a"]), strs(&["b"])],
        Ok(strs(&["a", "b"])),
    );
    check(
        "concat",
        vec![tup(vec![num("1")]), tup(vec![st("a")])],
        Ok(tup(vec![num("1"), st("a")])),
    );
    check("concat", vec![st("a")], Err("Invalid function argument: Invalid value for \"seqs\" parameter: all arguments must be lists or tuples; got string."));
    check(
        "flatten",
        vec![tup(vec![
            tup(vec![num("1")]),
            tup(vec![tup(vec![st("a")])]),
        ])],
        Ok(tup(vec![num("1"), st("a")])),
    );
    check(
        "flatten",
        vec![tup(vec![unk(Type::list(Type::String))])],
        Ok(unk_nn(Type::Dynamic)),
    );
    check(
        "slice",
        vec![strs(&["a", "b", "c"]), num("1"), num("3")],
        Ok(strs(&["b", "c"])),
    );
    check("slice", vec![strs(&["a"]), num("0"), num("2")], Err("Invalid function argument: Invalid value for \"end_index\" parameter: end index must not be greater than the length of the list."));
    check(
        "sort",
        vec![tup(vec![num("10"), num("2")])],
        Ok(strs(&["10", "2"])),
    );
    check(
        "reverse",
        vec![tup(vec![num("1"), st("a")])],
        Ok(tup(vec![st("a"), num("1")])),
    );
    check(
        "distinct",
        vec![strs(&["a", "b", "a"])],
        Ok(strs(&["a", "b"])),
    );
}
