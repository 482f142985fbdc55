//! Numeric functions. Exact decimal arithmetic where Terraform's result is
//! exact (`abs`, `ceil`, `floor`, `min`, `max`); binary floats where
//! Terraform uses Go's `math` (`log`, `pow`), computed as Go computes them
//! so that the last digits agree too.

use super::spec::{arg_err, call_err, n, p_any, p_num, Func, Res};
use super::FuncCtx;
use bigdecimal::{BigDecimal, RoundingMode};
use num_bigint::BigInt;
use num_traits::Zero;
use terrane_value::{Number, Type, Value};

pub(super) const NAMES: &[&str] = &[
    "min", "max", "abs", "ceil", "floor", "parseint", "pow", "signum", "log",
];

pub(super) fn lookup(name: &str) -> Option<Func> {
    let num1 = |imp| Func::new(vec![p_num("num")], Type::Number, imp);
    Some(match name {
        "min" => {
            Func::new(vec![], Type::Number, |a, _, _| extreme(a, true)).variadic(p_num("numbers"))
        }
        "max" => {
            Func::new(vec![], Type::Number, |a, _, _| extreme(a, false)).variadic(p_num("numbers"))
        }
        "abs" => num1(|a, _, _| {
            Ok(Value::number(match n(&a[0]) {
                Number::Finite(d) => Number::from(d.abs()),
                _ => Number::PosInfinity,
            }))
        }),
        "ceil" => num1(|a, _, _| Ok(Value::number(round(n(&a[0]), RoundingMode::Ceiling)))),
        "floor" => num1(|a, _, _| Ok(Value::number(round(n(&a[0]), RoundingMode::Floor)))),
        "signum" => num1(|a, _, _| {
            let x = n(&a[0]);
            if x.is_finite() && x.to_i64().is_none() {
                return call_err("value must be a whole number, between -9223372036854775808 and 9223372036854775807");
            }
            let sign = match x.cmp(&Number::zero()) {
                std::cmp::Ordering::Less => -1,
                std::cmp::Ordering::Equal => 0,
                std::cmp::Ordering::Greater => 1,
            };
            Ok(Value::number(Number::from_i64(sign)))
        }),
        "pow" => Func::new(vec![p_num("num"), p_num("power")], Type::Number, pow),
        "log" => Func::new(
            vec![p_num("num"), p_num("base")],
            Type::Number,
            |a, _, _| {
                // math.Log(num) / math.Log(base); the libm crate's `log`
                // is the FreeBSD routine Go's is written from.
                let (x, base) = (n(&a[0]).to_f64_lossy(), n(&a[1]).to_f64_lossy());
                float_result(libm::log(x) / libm::log(base))
            },
        ),
        "parseint" => Func::new(vec![p_any("number"), p_num("base")], Type::Number, parseint),
        _ => return None,
    })
}

fn extreme(a: &[Value], min: bool) -> Res<Value> {
    if a.is_empty() {
        return call_err("must pass at least one number");
    }
    let mut best = n(&a[0]);
    for v in &a[1..] {
        let x = n(v);
        if (min && x < best) || (!min && x > best) {
            best = x;
        }
    }
    Ok(Value::number(best))
}

fn round(x: Number, mode: RoundingMode) -> Number {
    match x {
        Number::Finite(d) => Number::from(d.with_scale_round(0, mode)),
        other => other,
    }
}

/// A float result as Terraform shows it: the shortest decimal of the float
/// at 53 bits ([`crate::arith::float64_decimal`]).
pub(crate) fn float_result(f: f64) -> Res<Value> {
    if f.is_nan() {
        return call_err("the result is not a number");
    }
    if f.is_infinite() {
        return Ok(Value::number(if f > 0.0 {
            Number::PosInfinity
        } else {
            Number::NegInfinity
        }));
    }
    Ok(Value::number(Number::from(crate::arith::float64_decimal(
        f,
    ))))
}

fn pow(a: &[Value], _: &Type, _: &FuncCtx) -> Res<Value> {
    let (x, p) = (n(&a[0]).to_f64_lossy(), n(&a[1]).to_f64_lossy());
    float_result(go_pow(x, p))
}

/// `x` to the power `y` as Terraform computes it: Go's `math.Pow`, which
/// does not round as a C library's `pow` does. After the special cases
/// (IEEE 754's, plus square roots for ±0.5) it splits |y| into an integer
/// and a fraction, moves the fraction into (-0.5, 0.5] by carrying one into
/// the integer, raises x to the fraction as exp(fraction × ln x), and to the
/// integer by squaring x's mantissa bit by bit while keeping the binary
/// exponent apart; the exponent is applied last. Every multiplication
/// rounds, so 1.1² is 1.2100000000000002 and 1.0001¹⁰⁰⁰⁰ is
/// 2.718145926824356 (2.7181459268249255 correctly rounded): a plan must
/// show the number Terraform's shows.
pub(crate) fn go_pow(x: f64, y: f64) -> f64 {
    // ±2^63: no float from here on is odd, and no integer loop can run.
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    let odd = |v: f64| v.abs() < TWO_63 && v.fract() == 0.0 && (v as i64) & 1 == 1;
    // Where |x| ≠ 1 and the exponent is beyond any float's range.
    let beyond = |x: f64, y: f64| {
        if x == -1.0 {
            1.0
        } else if (x.abs() < 1.0) == (y > 0.0) {
            0.0
        } else {
            f64::INFINITY
        }
    };
    if y == 0.0 || x == 1.0 {
        return 1.0;
    }
    if y == 1.0 {
        return x;
    }
    if x.is_nan() || y.is_nan() {
        return f64::NAN;
    }
    if x == 0.0 {
        return match (y < 0.0, odd(y)) {
            (true, true) => f64::INFINITY.copysign(x),
            (true, false) => f64::INFINITY,
            (false, true) => x,
            (false, false) => 0.0,
        };
    }
    if y.is_infinite() {
        return beyond(x, y);
    }
    if x.is_infinite() {
        if x < 0.0 {
            return go_pow(-0.0, -y);
        }
        return if y < 0.0 { 0.0 } else { f64::INFINITY };
    }
    if y == 0.5 {
        return x.sqrt();
    }
    if y == -0.5 {
        return 1.0 / x.sqrt();
    }
    let (mut whole, mut frac) = (y.abs().trunc(), y.abs().fract());
    if frac != 0.0 && x < 0.0 {
        return f64::NAN;
    }
    if whole >= TWO_63 {
        return beyond(x, y);
    }
    // The result is mant × 2^exp until the end.
    let mut mant = 1.0;
    let mut exp: i64 = 0;
    if frac != 0.0 {
        if frac > 0.5 {
            frac -= 1.0;
            whole += 1.0;
        }
        mant = libm::exp(frac * libm::log(x));
    }
    let (mut sq, e) = libm::frexp(x);
    let mut sq_exp = i64::from(e);
    let mut bits = whole as i64;
    while bits != 0 {
        if !(-4096..=4096).contains(&sq_exp) {
            // Far out of range: the scaling below overflows or underflows.
            exp += sq_exp;
            break;
        }
        if bits & 1 == 1 {
            mant *= sq;
            exp += sq_exp;
        }
        sq *= sq;
        sq_exp <<= 1;
        if sq < 0.5 {
            sq += sq;
            sq_exp -= 1;
        }
        bits >>= 1;
    }
    if y < 0.0 {
        mant = 1.0 / mant;
        exp = -exp;
    }
    libm::scalbn(mant, exp.clamp(-1_000_000, 1_000_000) as i32)
}

fn parseint(a: &[Value], _: &Type, _: &FuncCtx) -> Res<Value> {
    let Some(base) = n(&a[1]).to_i64().filter(|b| (2..=62).contains(b)) else {
        return arg_err(1, "base must be a whole number between 2 and 62 inclusive");
    };
    let Some(text) = a[0].as_str() else {
        return arg_err(
            0,
            format!(
                "first argument must be a string, not {}",
                a[0].ty().friendly_name()
            ),
        );
    };
    let fail = || {
        arg_err(
            0,
            format!(
                "cannot parse {} as a base {base} integer",
                super::encoding::go_json_string(text)
            ),
        )
    };
    let (neg, digits) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    if digits.is_empty() {
        return fail();
    }
    let mut acc = BigInt::zero();
    for c in digits.chars() {
        let d = match c {
            '0'..='9' => c as u32 - '0' as u32,
            'a'..='z' if base <= 36 => c as u32 - 'a' as u32 + 10,
            'A'..='Z' if base <= 36 => c as u32 - 'A' as u32 + 10,
            'a'..='z' => c as u32 - 'a' as u32 + 10,
            'A'..='Z' => c as u32 - 'A' as u32 + 36,
            _ => return fail(),
        };
        if d as i64 >= base {
            return fail();
        }
        acc = acc * BigInt::from(base) + BigInt::from(d);
    }
    if neg {
        acc = -acc;
    }
    Ok(Value::number(Number::from(BigDecimal::from(acc))))
}

#[cfg(test)]
#[path = "numeric_tests.rs"]
mod tests;
