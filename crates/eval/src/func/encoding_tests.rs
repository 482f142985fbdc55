use super::super::test_support::*;
use super::{go_json_string, parse_csv};
use proptest::prelude::*;
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
fn encodings() {
    check(
        "jsonencode",
        vec![obj(vec![(
            "a",
            tup(vec![num("1"), st("<"), null(Type::String)]),
        )])],
        Ok(st("{\"a\":[1,\"\\u003c\",null]}")),
    );
    check("jsonencode", vec![null(Type::Dynamic)], Ok(st("null")));
    check(
        "jsondecode",
        vec![st("{\"a\":[1,true]}")],
        Ok(obj(vec![("a", tup(vec![num("1"), bl(true)]))])),
    );
    check(
        "jsondecode",
        vec![st("123456789012345678901234567890.5")],
        Ok(num("123456789012345678901234567890.5")),
    );
    check(
        "jsondecode",
        vec![unk(Type::String)],
        Ok(unk(Type::Dynamic)),
    );
    check("base64decode", vec![st("SGk=")], Ok(st("Hi")));
    check("base64decode", vec![st("/w==")], Err("Invalid function argument: Invalid value for \"str\" parameter: the result of decoding the provided string is not valid UTF-8."));
    check("urlencode", vec![st("a b&é")], Ok(st("a+b%26%C3%A9")));
    let row = |a: &str, b: &str| obj(vec![("a", st(a)), ("b", st(b))]);
    check(
        "csvdecode",
        vec![st("a,b\n1,\"x\"\"y\"\r\n")],
        Ok(Value::list(
            row("1", "x\"y").ty().clone(),
            vec![row("1", "x\"y")],
        )),
    );
    check("csvdecode", vec![st("a,b\n1")], Err("Error in function call: Call to function \"csvdecode\" failed: record on line 2: wrong number of fields."));
}

#[test]
fn jsonencode_of_unknown_keeps_a_prefix() {
    let known_obj = obj(vec![("a", unk(Type::String))]);
    let want = Value::unknown_refined(Type::String, Refinements::not_null().with_prefix("{"));
    check("jsonencode", vec![known_obj], Ok(want));
    check(
        "jsonencode",
        vec![unk(Type::String)],
        Ok(unk_nn(Type::String)),
    );
    check(
        "jsonencode",
        vec![st("x").mark_sensitive()],
        Ok(st("\"x\"").mark_sensitive()),
    );
}

proptest! {
    #[test]
    fn json_round_trips(text in "\\PC*", n in -1_000_000i64..1_000_000) {
        let v = obj(vec![("s", st(&text)), ("n", num(&n.to_string()))]);
        let enc = run("jsonencode", vec![v.clone()]).unwrap();
        prop_assert_eq!(run("jsondecode", vec![enc]).unwrap(), v);
    }

    #[test]
    fn base64_round_trips(text in "\\PC*") {
        let enc = run("base64encode", vec![st(&text)]).unwrap();
        prop_assert_eq!(run("base64decode", vec![enc]).unwrap(), st(&text));
    }

    #[test]
    fn csv_round_trips(fields in proptest::collection::vec("[a-z ,\"\n]{0,6}", 2..4)) {
        let quoted: Vec<String> = fields.iter().map(|f| format!("\"{}\"", f.replace('"', "\"\""))).collect();
        let text = format!("{}\n{}\n", (0..fields.len()).map(|i| format!("h{i}")).collect::<Vec<_>>().join(","), quoted.join(","));
        let recs = parse_csv(&text).unwrap();
        prop_assert_eq!(&recs[1], &fields);
    }
}

#[test]
fn go_json_escapes() {
    assert_eq!(
        go_json_string("a\u{1}\u{2028}&"),
        "\"a\\u0001\\u2028\\u0026\""
    );
}

/// `jsondecode` of broken JSON fails the call (not the argument), in Go's
/// words, as `terraform validate` showed for each input.
#[test]
fn item1_jsondecode_syntax_errors_fail_the_call() {
    let cases = [
        ("{", "EOF"),
        ("", "EOF"),
        ("[1,", "EOF"),
        ("tru", "unexpected EOF"),
        ("a", "invalid character 'a' looking for beginning of value"),
        (
            "{\"a\":}",
            "invalid character '}' looking for beginning of value",
        ),
        ("[1 2]", "invalid character '2' after array element"),
        ("1 2", "extraneous data after JSON object"),
    ];
    for (text, msg) in cases {
        let want =
            format!("Error in function call: Call to function \"jsondecode\" failed: {msg}.");
        check("jsondecode", vec![st(text)], Err(want.as_str()));
    }
}
