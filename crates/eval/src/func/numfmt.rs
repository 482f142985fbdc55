//! Number text the way Go's big.Float formats it for `%e`, `%f` and `%g`
//! (decimal digits rounded half to even), and integers in any radix.

use terrane_value::Number;

/// A finite number as decimal digits: value = 0.`mant` × 10^`exp`, `mant`
/// without leading or trailing zeros (empty for zero).
struct Digits {
    neg: bool,
    mant: Vec<u8>,
    exp: i64,
}

fn digits(n: &Number) -> Option<Digits> {
    let d = n.as_decimal()?;
    let (int, scale) = d.as_bigint_and_exponent();
    let neg = int.sign() == num_bigint::Sign::Minus;
    let text = int.magnitude().to_string();
    let mut mant: Vec<u8> = text.bytes().map(|b| b - b'0').collect();
    let exp = mant.len() as i64 - scale;
    while mant.last() == Some(&0) {
        mant.pop();
    }
    if mant.is_empty() {
        return Some(Digits { neg, mant, exp: 0 });
    }
    Some(Digits { neg, mant, exp })
}

impl Digits {
    /// Rounds to `n` significant digits, half to even, trimming zeros.
    fn round(&mut self, n: i64) {
        if n < 0 || n as usize >= self.mant.len() {
            if n < 0 {
                self.mant.clear();
                self.exp = 0;
            }
            return;
        }
        let n = n as usize;
        let up = if self.mant[n] == 5 && n + 1 == self.mant.len() {
            n > 0 && self.mant[n - 1] % 2 == 1
        } else {
            self.mant[n] >= 5
        };
        self.mant.truncate(n);
        if up {
            let mut i = n;
            loop {
                if i == 0 {
                    self.mant.insert(0, 1);
                    self.exp += 1;
                    break;
                }
                i -= 1;
                if self.mant[i] < 9 {
                    self.mant[i] += 1;
                    break;
                }
                self.mant[i] = 0;
            }
        }
        while self.mant.last() == Some(&0) {
            self.mant.pop();
        }
        if self.mant.is_empty() {
            self.exp = 0;
        }
    }

    fn digit(&self, i: i64) -> char {
        if i < 0 {
            return '0';
        }
        self.mant
            .get(i as usize)
            .map(|d| (b'0' + d) as char)
            .unwrap_or('0')
    }

    fn sign(&self) -> &'static str {
        if self.neg {
            "-"
        } else {
            ""
        }
    }

    fn fmt_f(&self, prec: usize) -> String {
        let mut out = self.sign().to_string();
        if self.exp > 0 {
            for i in 0..self.exp {
                out.push(self.digit(i));
            }
        } else {
            out.push('0');
        }
        if prec > 0 {
            out.push('.');
            for i in 0..prec as i64 {
                out.push(self.digit(self.exp + i));
            }
        }
        out
    }

    fn fmt_e(&self, prec: usize, upper: bool) -> String {
        let mut out = self.sign().to_string();
        out.push(self.digit(0));
        if prec > 0 {
            out.push('.');
            for i in 1..=prec as i64 {
                out.push(self.digit(i));
            }
        }
        let exp = if self.mant.is_empty() {
            0
        } else {
            self.exp - 1
        };
        out.push(if upper { 'E' } else { 'e' });
        out.push(if exp < 0 { '-' } else { '+' });
        out.push_str(&format!("{:02}", exp.abs()));
        out
    }
}

fn special(n: &Number) -> Option<String> {
    match n {
        Number::PosInfinity => Some("+Inf".into()),
        Number::NegInfinity => Some("-Inf".into()),
        Number::Finite(_) => None,
    }
}

/// `%f` with `prec` decimals.
pub(crate) fn fixed(n: &Number, prec: usize) -> String {
    let Some(mut d) = digits(n) else {
        return special(n).unwrap_or_default();
    };
    d.round(d.exp + prec as i64);
    d.fmt_f(prec)
}

/// `%e` with `prec` decimals in the mantissa.
pub(crate) fn exp(n: &Number, prec: usize, upper: bool) -> String {
    let Some(mut d) = digits(n) else {
        return special(n).unwrap_or_default();
    };
    d.round(1 + prec as i64);
    d.fmt_e(prec, upper)
}

/// `%g`: shortest when `prec` is `None`, else `prec` significant digits.
pub(crate) fn general(n: &Number, prec: Option<usize>, upper: bool) -> String {
    let Some(mut d) = digits(n) else {
        return special(n).unwrap_or_default();
    };
    let shortest = prec.is_none();
    let mut prec = match prec {
        Some(0) => 1,
        Some(p) => p as i64,
        None => d.mant.len() as i64,
    };
    if !shortest {
        d.round(prec);
    }
    let len = d.mant.len() as i64;
    let mut eprec = prec;
    if eprec > len && len >= d.exp {
        eprec = len;
    }
    if shortest {
        eprec = 6;
    }
    let e = d.exp - 1;
    if e < -4 || e >= eprec {
        if prec > len {
            prec = len;
        }
        return d.fmt_e((prec - 1).max(0) as usize, upper);
    }
    if prec > d.exp {
        prec = len;
    }
    d.fmt_f((prec - d.exp).max(0) as usize)
}

/// An integer in `radix`, or `None` when the number is not a whole number.
pub(crate) fn integer(n: &Number, radix: u32) -> Option<String> {
    let d = n.as_decimal()?;
    if !d.is_integer() {
        return None;
    }
    let (int, _) = d.with_scale(0).as_bigint_and_exponent();
    Some(int.to_str_radix(radix))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(got: String, want: &str) {
        assert_eq!(got, want);
    }

    fn num(t: &str) -> Number {
        Number::parse(t).unwrap()
    }

    #[test]
    fn go_float_verbs() {
        check(fixed(&num("3.14159"), 2), "3.14");
        check(fixed(&num("0.25"), 1), "0.2");
        check(fixed(&num("2.5"), 0), "2");
        check(fixed(&num("-0.001"), 2), "-0.00");
        check(fixed(&num("9.999"), 2), "10.00");
        check(exp(&num("123456"), 2, false), "1.23e+05");
        check(exp(&num("0"), 6, false), "0.000000e+00");
        check(exp(&num("1234.5"), 6, false), "1.234500e+03");
        check(general(&num("1234.5678"), Some(3), false), "1.23e+03");
        check(general(&num("0.000012345"), None, false), "1.2345e-05");
        check(general(&num("1e21"), None, false), "1e+21");
        check(general(&num("100000000"), None, false), "1e+08");
        check(general(&num("1e-7"), None, true), "1E-07");
        check(general(&num("1"), Some(3), false), "1");
        check(general(&num("0"), None, false), "0");
        check(general(&num("123456"), None, false), "123456");
        check(general(&num("1234567"), None, false), "1.234567e+06");
        check(integer(&num("-255"), 16).unwrap(), "-ff");
        assert_eq!(integer(&num("1.5"), 10), None);
    }
}
