use super::super::test_support::*;
use super::super::{call, FuncCtx};
use std::path::Path;
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
fn hashes() {
    check(
        "md5",
        vec![st("hello")],
        Ok(st("5d41402abc4b2a76b9719d911017c592")),
    );
    check(
        "sha1",
        vec![st("hello")],
        Ok(st("aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d")),
    );
    check(
        "base64sha256",
        vec![st("hello")],
        Ok(st("LPJNul+wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ=")),
    );
    check(
        "uuidv5",
        vec![st("dns"), st("example.com")],
        Ok(st("cfbff0d1-9375-5685-968c-48ce8b15ae17")),
    );
    check("sha256", vec![unk(Type::String)], Ok(unk_nn(Type::String)));
}

#[test]
fn impure_functions_are_unknown_during_validation() {
    let ctx = FuncCtx {
        base_dir: Path::new("."),
        render_template: &render_stub,
        pure_only: true,
        plan_timestamp: None,
        console: false,
    };
    assert_eq!(call("uuid", vec![], &ctx), Ok(unk_nn(Type::String)));
    assert_eq!(
        call("bcrypt", vec![st("x")], &ctx),
        Ok(unk_nn(Type::String))
    );
    let h = run("bcrypt", vec![st("secret"), num("4")]).unwrap();
    assert!(h.as_str().unwrap().starts_with("$2a$04$"));
    assert_eq!(run("uuid", vec![]).unwrap().as_str().unwrap().len(), 36);
}
