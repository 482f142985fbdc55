use super::super::test_support::*;
use super::parse_duration;
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
fn times() {
    check(
        "timeadd",
        vec![st("2024-01-01T00:00:00Z"), st("1h30m")],
        Ok(st("2024-01-01T01:30:00Z")),
    );
    check(
        "timeadd",
        vec![st("2024-01-01T00:00:00+02:00"), st("-1.5h")],
        Ok(st("2023-12-31T22:30:00+02:00")),
    );
    check(
        "timecmp",
        vec![st("2024-01-01T00:00:00Z"), st("2024-01-01T01:00:00+01:00")],
        Ok(num("0")),
    );
    check(
        "formatdate",
        vec![
            st("DD MMM YYYY hh:mm 'o''clock' ZZZ"),
            st("2024-03-05T07:08:09Z"),
        ],
        Ok(st("05 Mar 2024 07:08 o'clock UTC")),
    );
    check(
        "formatdate",
        vec![st("EEEE H AA"), st("2024-03-09T13:00:00Z")],
        Ok(st("Saturday 1 PM")),
    );
    check(
        "timeadd",
        vec![unk(Type::String), st("1h")],
        Ok(unk_nn(Type::String)),
    );
    assert!(run("timeadd", vec![st("nope"), st("1h")]).is_err());
    assert!(run("timeadd", vec![st("2024-01-01T00:00:00Z"), st("1d")]).is_err());
    assert_eq!(
        run("timestamp", vec![]).unwrap().as_str().unwrap().len(),
        20
    );
}

#[test]
fn durations() {
    assert_eq!(parse_duration("1h30m"), Some(5_400_000_000_000));
    assert_eq!(parse_duration("-300ms"), Some(-300_000_000));
    assert_eq!(parse_duration("0"), Some(0));
    assert_eq!(parse_duration("1x"), None);
}
