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
fn yaml() {
    check(
        "yamlencode",
        vec![obj(vec![
            ("a", tup(vec![num("1"), st("x")])),
            ("b", obj(vec![("c", st("l1\nl2"))])),
        ])],
        Ok(st(
            "\"a\":\n- 1\n- \"x\"\n\"b\":\n  \"c\": |-\n    l1\n    l2\n",
        )),
    );
    check(
        "yamlencode",
        vec![null(Type::Dynamic)],
        Ok(st("null\n...\n")),
    );
    check(
        "yamldecode",
        vec![st("a: yes\nb: [1, x]\nc: ~")],
        Ok(obj(vec![
            ("a", bl(true)),
            ("b", tup(vec![num("1"), st("x")])),
            ("c", null(Type::Dynamic)),
        ])),
    );
    check(
        "yamldecode",
        vec![st("d: 2001-12-14")],
        Ok(obj(vec![("d", st("2001-12-14T00:00:00Z"))])),
    );
    check("yamldecode", vec![st("")], Err("Error in function call: Call to function \"yamldecode\" failed: on line 1, column 1: missing start of document."));
    check("yamldecode", vec![st("? [1]\n: 2")], Err("Error in function call: Call to function \"yamldecode\" failed: only strings are allowed as mapping keys."));
    check(
        "yamldecode",
        vec![unk(Type::String)],
        Ok(unk(Type::Dynamic)),
    );
}
