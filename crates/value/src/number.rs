//! Arbitrary-precision numbers.
//!
//! Terraform keeps numbers as 512-bit binary floats; terrane keeps them as
//! exact decimals (`BigDecimal`) plus the two infinities, which is at least as
//! precise for every number a user can write and survives decimal text round
//! trips exactly (`123456789012345678901234567890.125` stays as written).
//! Values decoded from binary floats are converted exactly.

use bigdecimal::BigDecimal;
use num_bigint::{BigInt, Sign};
use num_traits::{ToPrimitive, Zero};
use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

/// A number of the value model.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Number {
    NegInfinity,
    Finite(BigDecimal),
    PosInfinity,
}

/// The largest decimal exponent (either sign) a number may have.
pub const MAX_SCALE: i64 = 8192;

/// Why text is not a number.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is not a valid number")]
pub struct ParseNumberError {
    pub text: String,
}

impl Number {
    pub fn zero() -> Number {
        Number::Finite(BigDecimal::zero())
    }

    pub fn is_finite(&self) -> bool {
        matches!(self, Number::Finite(_))
    }

    pub fn as_decimal(&self) -> Option<&BigDecimal> {
        match self {
            Number::Finite(d) => Some(d),
            _ => None,
        }
    }

    /// Parses decimal text as Terraform accepts it: optional sign, digits,
    /// optional fraction and exponent. `Infinity`/`-Infinity` are accepted too.
    pub fn parse(text: &str) -> Result<Number, ParseNumberError> {
        let err = || ParseNumberError {
            text: text.to_string(),
        };
        let t = text.trim();
        match t {
            "Infinity" | "+Infinity" | "+Inf" | "Inf" => return Ok(Number::PosInfinity),
            "-Infinity" | "-Inf" => return Ok(Number::NegInfinity),
            _ => {}
        }
        let body = t.strip_prefix(['-', '+']).unwrap_or(t);
        // A plain integer that fits i64 (the usual literal, `count = 3`),
        // without the decimal parser: the same normalized value.
        if (1..=18).contains(&body.len()) && body.bytes().all(|b| b.is_ascii_digit()) {
            if let Ok(i) = t.parse::<i64>() {
                return Ok(Number::Finite(normalize(BigDecimal::from(i))));
            }
        }
        let (mantissa, exponent) = match body.find(['e', 'E']) {
            Some(i) => (&body[..i], Some(&body[i + 1..])),
            None => (body, None),
        };
        let digits_ok = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        let (int_part, frac_part) = match mantissa.find('.') {
            Some(i) => (&mantissa[..i], &mantissa[i + 1..]),
            None => (mantissa, ""),
        };
        if (int_part.is_empty() && frac_part.is_empty())
            || !(int_part.is_empty() || digits_ok(int_part))
            || !(frac_part.is_empty() || digits_ok(frac_part))
            || (mantissa.ends_with('.') && int_part.is_empty())
        {
            return Err(err());
        }
        if let Some(e) = exponent {
            let e = e.strip_prefix(['-', '+']).unwrap_or(e);
            if !digits_ok(e) || e.len() > 9 {
                return Err(err());
            }
        }
        let d = normalize(BigDecimal::from_str(t).map_err(|_| err())?);
        // Keep numbers materializable: 10^±8192 is far beyond any real
        // configuration value (Terraform's own floats top out near 10^±646
        // million only in theory) and bounds the text we may have to write.
        if d.as_bigint_and_exponent().1.abs() > MAX_SCALE {
            return Err(err());
        }
        Ok(Number::Finite(d))
    }

    pub fn from_i64(n: i64) -> Number {
        Number::Finite(BigDecimal::from(n))
    }

    pub fn from_u64(n: u64) -> Number {
        Number::Finite(BigDecimal::from(n))
    }

    /// Converts a binary float exactly (no rounding): every finite f64 is a
    /// finite decimal. NaN has no representation and gives `None`.
    pub fn from_f64(f: f64) -> Option<Number> {
        if f.is_nan() {
            return None;
        }
        if f.is_infinite() {
            return Some(if f > 0.0 {
                Number::PosInfinity
            } else {
                Number::NegInfinity
            });
        }
        if f == 0.0 {
            return Some(Number::zero());
        }
        let bits = f.to_bits();
        let negative = bits >> 63 == 1;
        let exp_bits = ((bits >> 52) & 0x7ff) as i64;
        let frac = bits & ((1u64 << 52) - 1);
        let (mantissa, exp) = if exp_bits == 0 {
            (frac, -1074)
        } else {
            (frac | (1u64 << 52), exp_bits - 1075)
        };
        let mut m = BigInt::from(mantissa);
        if negative {
            m = -m;
        }
        let d = if exp >= 0 {
            BigDecimal::from(m << (exp as usize))
        } else {
            // m * 2^exp = m * 5^-exp / 10^-exp
            let five = BigInt::from(5u8).pow((-exp) as u32);
            BigDecimal::new(m * five, -exp)
        };
        Some(Number::Finite(normalize(d)))
    }

    /// The value as an `i64` if it is an integer in range.
    pub fn to_i64(&self) -> Option<i64> {
        let d = self.as_decimal()?;
        if !d.is_integer() {
            return None;
        }
        d.to_i64()
    }

    /// The value as a `u64` if it is a non-negative integer in range.
    pub fn to_u64(&self) -> Option<u64> {
        let d = self.as_decimal()?;
        if !d.is_integer() {
            return None;
        }
        d.to_u64()
    }

    pub fn is_integer(&self) -> bool {
        self.as_decimal().is_some_and(|d| d.is_integer())
    }

    /// The nearest `f64` (infinities map to infinities).
    pub fn to_f64_lossy(&self) -> f64 {
        match self {
            Number::NegInfinity => f64::NEG_INFINITY,
            Number::PosInfinity => f64::INFINITY,
            Number::Finite(d) => decimal_text(d).parse::<f64>().unwrap_or(f64::NAN),
        }
    }

    /// The value as an `f64` only if the conversion is exact.
    pub fn to_f64_exact(&self) -> Option<f64> {
        let f = self.to_f64_lossy();
        if f.is_nan() {
            return None;
        }
        (Number::from_f64(f).as_ref() == Some(self)).then_some(f)
    }
}

/// Strips trailing zeros so that equal numbers have one representation
/// (`1.50` and `1.5` hash alike).
fn normalize(d: BigDecimal) -> BigDecimal {
    if d.is_zero() {
        return BigDecimal::zero();
    }
    d.normalized()
}

/// Plain decimal text without exponent, shortest exact form: `1`, `-0.5`,
/// `123456789012345678901234567890.125`.
fn decimal_text(d: &BigDecimal) -> String {
    let (digits, scale) = d.as_bigint_and_exponent();
    let negative = digits.sign() == Sign::Minus;
    let mut s = digits.magnitude().to_string();
    let mut scale = scale;
    // Drop trailing zeros of the fraction.
    while scale > 0 && s.len() > 1 && s.ends_with('0') {
        s.pop();
        scale -= 1;
    }
    let body = if scale <= 0 {
        if s == "0" {
            s
        } else {
            s + &"0".repeat((-scale) as usize)
        }
    } else {
        let scale = scale as usize;
        if s.len() > scale {
            let (i, f) = s.split_at(s.len() - scale);
            format!("{i}.{f}")
        } else {
            format!("0.{}{}", "0".repeat(scale - s.len()), s)
        }
    };
    if negative && body != "0" {
        format!("-{body}")
    } else {
        body
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Number::NegInfinity => f.write_str("-Infinity"),
            Number::PosInfinity => f.write_str("Infinity"),
            Number::Finite(d) => f.write_str(&decimal_text(d)),
        }
    }
}

impl PartialOrd for Number {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Number {
    fn cmp(&self, other: &Self) -> Ordering {
        use Number::*;
        match (self, other) {
            (NegInfinity, NegInfinity) | (PosInfinity, PosInfinity) => Ordering::Equal,
            (NegInfinity, _) | (_, PosInfinity) => Ordering::Less,
            (_, NegInfinity) | (PosInfinity, _) => Ordering::Greater,
            (Finite(a), Finite(b)) => a.cmp(b),
        }
    }
}

impl From<i64> for Number {
    fn from(n: i64) -> Number {
        Number::from_i64(n)
    }
}

impl From<BigDecimal> for Number {
    fn from(d: BigDecimal) -> Number {
        Number::Finite(normalize(d))
    }
}

impl FromStr for Number {
    type Err = ParseNumberError;
    fn from_str(s: &str) -> Result<Number, ParseNumberError> {
        Number::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(input: &str, want: &str) {
        assert_eq!(
            Number::parse(input).unwrap().to_string(),
            want,
            "input {input}"
        );
    }

    #[test]
    fn text_round_trips() {
        check("0", "0");
        check("-0", "0");
        check("1.50", "1.5");
        check(
            "123456789012345678901234567890.125",
            "123456789012345678901234567890.125",
        );
        check("1e3", "1000");
        check("1.5e-3", "0.0015");
        check("-12.000", "-12");
        check("Infinity", "Infinity");
    }

    #[test]
    fn rejects_garbage() {
        for bad in [
            "",
            "abc",
            "1.2.3",
            "--1",
            "1e",
            ".",
            "0x10",
            "1e99999999999",
            "1e9000",
            ".02e5120101",
            "1e-9000",
        ] {
            assert!(Number::parse(bad).is_err(), "{bad:?} accepted");
        }
    }

    proptest::proptest! {
        /// The plain-integer shortcut gives what the decimal parser gives,
        /// representation included: signs, leading zeros, trailing zeros
        /// (normalized away) and lengths on both sides of the cut-off.
        #[test]
        fn integers_parse_as_the_decimal_parser_does(
            sign in proptest::sample::select(vec!["", "-", "+"]),
            zeros in 0usize..3,
            digits in "[0-9]{1,20}",
        ) {
            let text = format!("{sign}{}{digits}", "0".repeat(zeros));
            let slow = normalize(BigDecimal::from_str(&text).unwrap());
            let Number::Finite(fast) = Number::parse(&text).unwrap() else {
                panic!("{text} parsed as an infinity");
            };
            proptest::prop_assert_eq!(fast.as_bigint_and_exponent(), slow.as_bigint_and_exponent());
        }
    }

    #[test]
    fn floats_convert_exactly() {
        assert_eq!(Number::from_f64(0.5).unwrap().to_string(), "0.5");
        assert_eq!(
            Number::from_f64(0.1).unwrap().to_string(),
            "0.1000000000000000055511151231257827021181583404541015625"
        );
        assert_eq!(Number::from_f64(-3.0).unwrap().to_i64(), Some(-3));
        assert_eq!(Number::parse("0.1").unwrap().to_f64_exact(), None);
        assert_eq!(Number::parse("2.25").unwrap().to_f64_exact(), Some(2.25));
    }
}
