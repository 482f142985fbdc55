use super::super::test_support::*;
use super::{basename, dirname};
use terrane_value::{Type, Value};

#[track_caller]
fn check(dir: &std::path::Path, name: &str, args: Vec<Value>, want: Result<Value, &str>) {
    let got = run_in(dir, name, args);
    match want {
        Ok(v) => assert_eq!(got, Ok(v), "{name}"),
        Err(m) => assert_eq!(got.unwrap_err(), m, "{name}"),
    }
}

#[test]
fn files() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::create_dir_all(d.join("sub/deep")).unwrap();
    std::fs::write(d.join("a.txt"), "hello").unwrap();
    std::fs::write(d.join("sub/b.txt"), "b").unwrap();
    std::fs::write(d.join("sub/deep/c.md"), "c").unwrap();
    std::fs::write(d.join("t.tpl"), "hi ${name}").unwrap();
    check(d, "file", vec![st("a.txt")], Ok(st("hello")));
    check(d, "fileexists", vec![st("a.txt")], Ok(bl(true)));
    check(d, "fileexists", vec![st("nope")], Ok(bl(false)));
    let set = |xs: &[&str]| Value::set(Type::String, xs.iter().map(|x| st(x)).collect());
    check(
        d,
        "fileset",
        vec![st("."), st("*.txt")],
        Ok(set(&["a.txt"])),
    );
    check(
        d,
        "fileset",
        vec![st("."), st("**/*.txt")],
        Ok(set(&["a.txt", "sub/b.txt"])),
    );
    check(
        d,
        "fileset",
        vec![st("sub"), st("{deep/*.md,b.txt}")],
        Ok(set(&["b.txt", "deep/c.md"])),
    );
    check(
        d,
        "templatefile",
        vec![st("t.tpl"), obj(vec![("name", st("x"))])],
        Ok(st("hi x")),
    );
    check(
        d,
        "templatefile",
        vec![st("t.tpl"), obj(vec![("a-b", st("x"))])],
        Ok(st("hi ${name}")),
    );
    assert!(run_in(d, "file", vec![st("missing")]).unwrap_err().starts_with("Invalid function argument: Invalid value for \"path\" parameter: no file exists at \"missing\""));
}

#[test]
fn path_strings() {
    for (p, dir, base) in [
        ("/a/b/c.txt", "/a/b", "c.txt"),
        ("c.txt", ".", "c.txt"),
        ("a/b/", "a/b", "b"),
        ("", ".", "."),
        ("/", "/", "/"),
    ] {
        assert_eq!(dirname(p), dir, "dirname({p:?})");
        assert_eq!(basename(p), base, "basename({p:?})");
    }
}
