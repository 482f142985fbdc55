//! Numeric functions. Exact decimal arithmetic where Terraform's result is
//! exact (`abs`, `ceil`, `floor`, `min`, `max`, integer `pow`); binary
//! floats where Terraform uses Go's `math` (`log`, fractional `pow`).

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
                let (x, base) = (n(&a[0]).to_f64_lossy(), n(&a[1]).to_f64_lossy());
                float_result(x.ln() / base.ln())
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

/// A float result as Terraform shows it: the shortest decimal that reads
/// back as the same float.
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
    Ok(Value::number(
        Number::parse(&format!("{f}")).unwrap_or_else(|_| Number::zero()),
    ))
}

fn pow(a: &[Value], _: &Type, _: &FuncCtx) -> Res<Value> {
    let (x, p) = (n(&a[0]), n(&a[1]));
    if let (Number::Finite(base), Some(e)) = (&x, p.to_i64()) {
        if (0..=4096).contains(&e) {
            let mut acc = BigDecimal::from(1);
            let mut sq = base.clone();
            let mut e = e as u64;
            while e > 0 {
                if e & 1 == 1 {
                    acc = (&acc * &sq).normalized();
                }
                sq = (&sq * &sq).normalized();
                e >>= 1;
            }
            if acc.as_bigint_and_exponent().1.abs() <= 8192 {
                return Ok(Value::number(Number::from(acc)));
            }
        }
    }
    float_result(x.to_f64_lossy().powf(p.to_f64_lossy()))
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
