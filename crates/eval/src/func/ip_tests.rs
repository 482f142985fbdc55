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
fn networks() {
    check(
        "cidrhost",
        vec![st("10.12.112.0/20"), num("-1")],
        Ok(st("10.12.127.255")),
    );
    check("cidrhost", vec![st("10.0.0.0/30"), num("4")], Err("Invalid function argument: Invalid value for \"hostnum\" parameter: prefix of 30 does not accommodate a host numbered 4."));
    check(
        "cidrnetmask",
        vec![st("172.16.0.0/12")],
        Ok(st("255.240.0.0")),
    );
    check(
        "cidrsubnet",
        vec![st("172.16.0.0/12"), num("4"), num("2")],
        Ok(st("172.18.0.0/16")),
    );
    check(
        "cidrsubnet",
        vec![st("fd00:fd12:3456:7890::/56"), num("16"), num("162")],
        Ok(st("fd00:fd12:3456:7800:a200::/72")),
    );
    check(
        "cidrsubnets",
        vec![st("10.1.0.0/16"), num("4"), num("4"), num("8"), num("4")],
        Ok(strs(&[
            "10.1.0.0/20",
            "10.1.16.0/20",
            "10.1.32.0/24",
            "10.1.48.0/20",
        ])),
    );
    check("cidrsubnets", vec![st("10.0.0.0/30"), num("1"), num("1"), num("1")], Err("Invalid function argument: Invalid value for \"newbits\" parameter: not enough remaining address space for a subnet with a prefix of 31 bits after 10.0.0.2/31."));
    check("cidrhost", vec![st("nope"), num("1")], Err("Invalid function argument: Invalid value for \"prefix\" parameter: invalid CIDR expression: invalid CIDR address: nope."));
    check(
        "cidrhost",
        vec![unk(Type::String), num("1")],
        Ok(unk_nn(Type::String)),
    );
}
