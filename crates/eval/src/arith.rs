//! Number arithmetic with Terraform's results.
//!
//! terrane keeps numbers as exact decimals. Addition, subtraction and
//! multiplication are exact, as Terraform's are for every number a user
//! writes. Terraform divides 512-bit binary floats and prints the shortest
//! decimal that identifies the rounded quotient (`1/3` is
//! `0.333…335`, 155 digits), so [`div`] rounds the exact quotient to 512
//! binary bits and picks that same shortest decimal.

use bigdecimal::BigDecimal;
use num_bigint::{BigInt, Sign};
use num_traits::{One, Signed, Zero};
use terrane_value::Number;

/// Mantissa bits of Terraform's numbers.
const PRECISION: u64 = 512;

/// An arithmetic failure, worded as cty words it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArithError(pub &'static str);

fn nan() -> ArithError {
    ArithError("can't compute a result that is not a number")
}

pub fn add(a: &Number, b: &Number) -> Result<Number, ArithError> {
    use Number::*;
    Ok(match (a, b) {
        (Finite(x), Finite(y)) => Finite(binary_op(x, y, Op::Add)),
        (PosInfinity, NegInfinity) | (NegInfinity, PosInfinity) => return Err(nan()),
        (PosInfinity, _) | (_, PosInfinity) => PosInfinity,
        (NegInfinity, _) | (_, NegInfinity) => NegInfinity,
    })
}

pub fn neg(a: &Number) -> Number {
    match a {
        Number::Finite(x) => Number::Finite(-x),
        Number::PosInfinity => Number::NegInfinity,
        Number::NegInfinity => Number::PosInfinity,
    }
}

pub fn sub(a: &Number, b: &Number) -> Result<Number, ArithError> {
    add(a, &neg(b))
}

fn sign(a: &Number) -> i8 {
    match a {
        Number::Finite(x) => match x.sign() {
            Sign::Minus => -1,
            Sign::NoSign => 0,
            Sign::Plus => 1,
        },
        Number::PosInfinity => 1,
        Number::NegInfinity => -1,
    }
}

fn infinity(sign: i8) -> Number {
    if sign < 0 {
        Number::NegInfinity
    } else {
        Number::PosInfinity
    }
}

pub fn mul(a: &Number, b: &Number) -> Result<Number, ArithError> {
    match (a, b) {
        (Number::Finite(x), Number::Finite(y)) => Ok(Number::Finite(binary_op(x, y, Op::Mul))),
        _ => {
            let s = sign(a) * sign(b);
            if s == 0 {
                return Err(nan());
            }
            Ok(infinity(s))
        }
    }
}

pub fn div(a: &Number, b: &Number) -> Result<Number, ArithError> {
    match (a, b) {
        (Number::Finite(x), Number::Finite(y)) => {
            if y.is_zero() {
                if x.is_zero() {
                    return Err(ArithError("can't divide zero by zero"));
                }
                return Ok(infinity(sign(a)));
            }
            Ok(Number::Finite(binary_op(x, y, Op::Div)))
        }
        (Number::Finite(_), _) => Ok(Number::zero()),
        (_, Number::Finite(_)) => Ok(infinity(sign(a) * if sign(b) < 0 { -1 } else { 1 })),
        _ => Err(ArithError("can't divide infinity by infinity")),
    }
}

/// Remainder with the sign of the dividend (`-7 % 3` is `-1`).
pub fn rem(a: &Number, b: &Number) -> Result<Number, ArithError> {
    match (a, b) {
        (Number::Finite(x), Number::Finite(y)) => {
            if y.is_zero() {
                return Err(ArithError("can't use modulo by zero"));
            }
            let (xm, xs) = x.as_bigint_and_exponent();
            let (ym, ys) = y.as_bigint_and_exponent();
            let scale = xs.max(ys);
            let xi = xm * pow10((scale - xs) as u64);
            let yi = ym * pow10((scale - ys) as u64);
            Ok(Number::Finite(BigDecimal::new(xi % yi, scale).normalized()))
        }
        (Number::Finite(_), _) => Ok(a.clone()),
        _ => Err(ArithError("can't use modulo with an infinite dividend")),
    }
}

fn pow10(n: u64) -> BigInt {
    num_traits::pow(BigInt::from(10u8), n as usize)
}

fn pow5(n: u64) -> BigInt {
    num_traits::pow(BigInt::from(5u8), n as usize)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Add,
    Mul,
    Div,
}

/// A finite binary float as Terraform holds it: `mant * 2^-exp` with a
/// mantissa of exactly 512 bits (or zero).
struct Binary {
    negative: bool,
    mant: BigInt,
    exp: i64,
}

/// `x op y` as Terraform computes it: both operands rounded to 512-bit
/// binary floats, the exact result rounded to 512 bits again, written as
/// the shortest decimal that identifies it. Integer results that fit are
/// exact either way and take a fast path.
fn binary_op(x: &BigDecimal, y: &BigDecimal, op: Op) -> BigDecimal {
    if op != Op::Div && x.is_integer() && y.is_integer() {
        let exact = if op == Op::Add { x + y } else { x * y };
        let (digits, _) = exact.as_bigint_and_exponent();
        if digits.bits() <= PRECISION {
            return exact.normalized();
        }
    }
    let (a, b) = (to_binary(x), to_binary(y));
    let (negative, num, den) = match op {
        Op::Mul | Op::Div => {
            let negative = a.negative != b.negative;
            if op == Op::Mul {
                (negative, &a.mant * &b.mant, a.exp + b.exp)
            } else {
                if b.mant.is_zero() {
                    return BigDecimal::zero();
                }
                // (ma 2^-ea) / (mb 2^-eb) = (ma 2^eb) / (mb 2^ea)
                let out = round(&a.mant << (PRECISION + 2), &b.mant);
                let exp = out.exp + (PRECISION as i64 + 2) + a.exp - b.exp;
                return finish(negative, &out.mant, exp);
            }
        }
        Op::Add => {
            let e = a.exp.max(b.exp);
            let sa = signed(&a) << (e - a.exp) as u64;
            let sb = signed(&b) << (e - b.exp) as u64;
            let sum = sa + sb;
            (sum.is_negative(), sum.abs(), e)
        }
    };
    if num.is_zero() {
        return BigDecimal::zero();
    }
    // num * 2^-den rounded to 512 bits.
    let out = round(num, &BigInt::one());
    finish(negative, &out.mant, out.exp + den)
}

fn signed(b: &Binary) -> BigInt {
    if b.negative {
        -b.mant.clone()
    } else {
        b.mant.clone()
    }
}

fn finish(negative: bool, mant: &BigInt, exp: i64) -> BigDecimal {
    if mant.is_zero() {
        return BigDecimal::zero();
    }
    let out = shortest(mant, exp);
    if negative {
        -out
    } else {
        out
    }
}

/// The 512-bit binary float nearest to a decimal (ties to even).
fn to_binary(x: &BigDecimal) -> Binary {
    let (digits, scale) = x.as_bigint_and_exponent();
    let negative = digits.is_negative();
    let mut n = digits.abs();
    if n.is_zero() {
        return Binary {
            negative: false,
            mant: BigInt::zero(),
            exp: 0,
        };
    }
    let mut d = BigInt::one();
    if scale > 0 {
        d = pow10(scale as u64);
    } else {
        n *= pow10((-scale) as u64);
    }
    let r = round(n, &d);
    Binary {
        negative,
        mant: r.mant,
        exp: r.exp,
    }
}

/// `n / d` (both positive) rounded to a 512-bit mantissa: `mant * 2^-exp`.
fn round(n: BigInt, d: &BigInt) -> Binary {
    let mut e = PRECISION as i64 - (n.bits() as i64 - d.bits() as i64);
    let (m, r, den) = loop {
        let (num, den) = if e >= 0 {
            (&n << e as u64, d.clone())
        } else {
            (n.clone(), d << (-e) as u64)
        };
        let m = &num / &den;
        let bits = m.bits();
        if bits > PRECISION {
            e -= 1;
        } else if bits < PRECISION {
            e += 1;
        } else {
            let r = num - &m * &den;
            break (m, r, den);
        }
    };
    let twice = &r << 1u8;
    let mut m = if twice > den || (twice == den && m.bit(0)) {
        m + 1u8
    } else {
        m
    };
    if m.bits() > PRECISION {
        m >>= 1u8;
        e -= 1;
    }
    Binary {
        negative: false,
        mant: m,
        exp: e,
    }
}

/// A finite float64 as Terraform shows a float result (`log`, `pow`): Go's
/// `big.Float` keeps it at 53 bits, and [`shortest`] gives the decimal
/// within half a unit of the 53rd bit on either side. That is Rust's
/// shortest decimal for every float except exact powers of two, whose next
/// float below is half as far as the next above (2^64 is
/// 18446744073709550000, Rust's 18446744073709552000), and subnormals,
/// which have fewer than 53 bits (the smallest is 4.940656458412465e-324,
/// Rust's 5e-324).
pub(crate) fn float64_decimal(f: f64) -> BigDecimal {
    if f == 0.0 || !f.is_finite() {
        return BigDecimal::zero();
    }
    let bits = f.abs().to_bits();
    let (biased, frac) = ((bits >> 52) as i64, bits & ((1 << 52) - 1));
    // |f| = m * 2^-e with m of exactly 53 bits.
    let (m, e) = match biased {
        0 => {
            let pad = i64::from(frac.leading_zeros()) - 11;
            (frac << pad, 1074 + pad)
        }
        _ => (frac | 1 << 52, 1075 - biased),
    };
    finish(f < 0.0, &BigInt::from(m), e)
}

/// The shortest decimal inside the rounding interval of `m * 2^-e`
/// (inclusive when `m` is even), choosing the nearer candidate where both
/// the rounded-down and rounded-up digits qualify.
fn shortest(m: &BigInt, e: i64) -> BigDecimal {
    // Express value, lower and upper bounds as integers at one decimal scale.
    let two_m = m << 1u8;
    let (x, lo, hi, scale) = if e >= 0 {
        let t = (e + 1) as u64;
        let f = pow5(t);
        (
            &two_m * &f,
            (&two_m - 1u8) * &f,
            (&two_m + 1u8) * &f,
            t as i64,
        )
    } else {
        let f = BigInt::one() << ((-e - 1) as u64);
        (&two_m * &f, (&two_m - 1u8) * &f, (&two_m + 1u8) * &f, 0)
    };
    let inclusive = !m.bit(0);
    let digits = x.to_string().len() as u64;
    for i in 1..=digits {
        let unit = pow10(digits - i);
        let down = (&x / &unit) * &unit;
        let up = &down + &unit;
        let ok_down = down > lo || (inclusive && down == lo);
        let ok_up = up < hi || (inclusive && up == hi);
        let pick = match (ok_down, ok_up) {
            (true, true) => {
                let below = &x - &down;
                let above = &up - &x;
                if below < above || (below == above && ((&down / &unit) % 2u8).is_zero()) {
                    down
                } else {
                    up
                }
            }
            (true, false) => down,
            (false, true) => up,
            (false, false) => continue,
        };
        return BigDecimal::new(pick, scale).normalized();
    }
    BigDecimal::new(x, scale).normalized()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn num(s: &str) -> Number {
        Number::parse(s).unwrap()
    }

    fn check(name: &str, got: Result<Number, ArithError>, want: Result<&str, &str>) {
        let got = got.map(|n| n.to_string()).map_err(|e| e.0.to_string());
        let want = want.map(str::to_string).map_err(str::to_string);
        assert_eq!(got, want, "case {name}");
    }

    const THIRD: &str = "0.33333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333335";
    const TWO_SEVENTHS: &str = "0.2857142857142857142857142857142857142857142857142857142857142857142857142857142857142857142857142857142857142857142857142857142857142857142857142857142857";

    #[test]
    fn division_matches_terraform() {
        let cases: &[(&str, &str, &str, Result<&str, &str>)] = &[
            ("one_third", "1", "3", Ok(THIRD)),
            ("two_sevenths", "2", "7", Ok(TWO_SEVENTHS)),
            ("exact_quarter", "1", "4", Ok("0.25")),
            ("exact_integer", "10", "5", Ok("2")),
            ("negative", "-1", "4", Ok("-0.25")),
            ("decimal_operands", "0.5", "0.25", Ok("2")),
            ("inexact_operands", "1.1", "1.1", Ok("1")),
            ("by_zero", "5", "0", Ok("Infinity")),
            ("zero_by_zero", "0", "0", Err("can't divide zero by zero")),
        ];
        for (name, a, b, want) in cases {
            check(name, div(&num(a), &num(b)), *want);
        }
    }

    #[test]
    fn other_operations() {
        check("add_exact", add(&num("0.1"), &num("0.2")), Ok("0.3"));
        check("sub", sub(&num("1"), &num("2.5")), Ok("-1.5"));
        check("mul", mul(&num("1.5"), &num("4")), Ok("6"));
        check("mul_inexact_operands", mul(&num("1.1"), &num("1.1")), Ok("1.2100000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000001"));
        check(
            "add_big_integers",
            add(&num("123456789012345678901234567890"), &num("1")),
            Ok("123456789012345678901234567891"),
        );
        check("rem_sign_of_dividend", rem(&num("-7"), &num("3")), Ok("-1"));
        check("rem_fraction", rem(&num("10"), &num("3.5")), Ok("3"));
        check(
            "rem_zero",
            rem(&num("1"), &num("0")),
            Err("can't use modulo by zero"),
        );
        check(
            "inf_minus_inf",
            sub(&Number::PosInfinity, &Number::PosInfinity),
            Err("can't compute a result that is not a number"),
        );
        check(
            "inf_times_neg",
            mul(&Number::PosInfinity, &num("-2")),
            Ok("-Infinity"),
        );
    }

    /// Where the float lies exactly halfway between the two shortest
    /// decimals that round-trip, Terraform takes the one with the even last
    /// digit; Rust's formatting may take the other. The value below was
    /// found by the property test; `pow(1500875173292538.25, 1)` in
    /// `terraform console` (v1.15.5) prints 1500875173292538.2.
    #[test]
    fn float64_decimal_ties_take_the_even_digit() {
        let f = f64::from_bits(1073 << 52 | 1499901065799657);
        assert_eq!(float64_decimal(f).to_string(), "1500875173292538.2");
    }

    proptest::proptest! {
        /// Outside powers of two and subnormals, Terraform's 53-bit
        /// shortest decimal is Rust's shortest round-trip decimal, except
        /// at an exact tie between two shortest decimals: then both
        /// round-trip, lie equally far from the float's exact value, and
        /// Terraform's has the even last digit.
        #[test]
        fn float64_decimal_is_rusts_elsewhere(exp in 1u64..2047, frac in 1u64..(1 << 52), negative: bool) {
            let f = f64::from_bits(u64::from(negative) << 63 | exp << 52 | frac);
            let rust: BigDecimal = format!("{f:e}").parse::<BigDecimal>().unwrap().normalized();
            let ours = float64_decimal(f);
            if ours != rust {
                let Some(Number::Finite(exact)) = Number::from_f64(f) else {
                    panic!("{f:e} has no exact decimal");
                };
                proptest::prop_assert_eq!(ours.to_string().parse::<f64>().unwrap(), f);
                proptest::prop_assert_eq!(ours.digits(), rust.digits());
                proptest::prop_assert_eq!((&exact - &ours).abs(), (&exact - &rust).abs());
                let (digits, _) = ours.as_bigint_and_exponent();
                proptest::prop_assert!(digits % 2 == BigInt::from(0), "{ours} against {rust}");
            }
        }
    }
}
