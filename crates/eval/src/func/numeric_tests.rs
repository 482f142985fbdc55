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

/// Go's `math.Pow` on the values no HCL number literal reaches (signed
/// zeros, infinities, NaN) and on the loop's edges. Bit patterns are
/// compared, so -0 is not 0 and NaN is NaN.
#[test]
fn go_pow_edges() {
    use super::go_pow;
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    let cases: &[(&str, f64, f64, f64)] = &[
        ("any to the 0", nan, 0.0, 1.0),
        ("1 to NaN", 1.0, nan, 1.0),
        ("x to the 1", -3.5, 1.0, -3.5),
        ("NaN base", nan, 2.0, nan),
        ("-0 to odd negative", -0.0, -3.0, -inf),
        ("-0 to even negative", -0.0, -2.0, inf),
        ("-0 to odd positive", -0.0, 3.0, -0.0),
        ("+0 to fraction", 0.0, 2.5, 0.0),
        ("0 to -inf", 0.0, -inf, inf),
        ("-1 to inf", -1.0, inf, 1.0),
        ("small to inf", 0.5, inf, 0.0),
        ("large to -inf", 2.0, -inf, 0.0),
        ("-inf to odd", -inf, 3.0, -inf),
        ("-inf to negative odd", -inf, -3.0, -0.0),
        ("inf to negative", inf, -1.5, 0.0),
        ("negative to fraction", -8.0, 1.0 / 3.0, nan),
        ("square root", 2.0, 0.5, std::f64::consts::SQRT_2),
        ("huge even exponent", 1.5, 1e19, inf),
        ("huge negative exponent", 1.5, -1e19, 0.0),
        ("overflow in the loop", 10.0, 400.0, inf),
        ("underflow in the loop", 10.0, -400.0, 0.0),
        ("rounds each product", 1.1, 2.0, 1.2100000000000002),
    ];
    for &(name, x, y, want) in cases {
        let got = go_pow(x, y);
        let same = got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan());
        assert!(same, "{name}: pow({x}, {y}) = {got:?}, want {want:?}");
    }
}

/// Terraform's shortest decimals where they are not Rust's: powers of two
/// and subnormals; other floats keep Rust's.
#[test]
fn go_shortest_decimals() {
    let cases: &[(&str, f64, &str)] = &[
        ("2^64", 18446744073709551616.0, "18446744073709550000"),
        ("-2^65", -36893488147419103232.0, "-36893488147419100000"),
        (
            "2^-60",
            2f64.powi(-60),
            "0.0000000000000000008673617379884035",
        ),
        (
            "smallest subnormal",
            f64::from_bits(1),
            "4.940656458412465e-324",
        ),
        ("2^53, exact", 9007199254740992.0, "9007199254740992"),
        ("not a power of two", 0.1, "0.1"),
    ];
    for &(name, f, want) in cases {
        let got = super::float_result(f).expect(name);
        assert_eq!(got, num(want), "{name}");
    }
}
