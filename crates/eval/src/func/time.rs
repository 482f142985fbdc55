//! Time functions over RFC 3339 timestamps: `timestamp` (impure),
//! `plantimestamp` (the plan's, from [`FuncCtx::plan_timestamp`]), `timeadd` (Go duration syntax), `timecmp`, `formatdate`.

use super::spec::{arg_err, call_err, p_str, s, Func, Res};
use super::FuncCtx;
use chrono::{DateTime, Datelike, FixedOffset, SecondsFormat, Timelike, Utc};
use terrane_value::{Number, Type, Value};

pub(super) const NAMES: &[&str] = &[
    "timestamp",
    "plantimestamp",
    "timeadd",
    "timecmp",
    "formatdate",
];

pub(super) fn lookup(name: &str) -> Option<Func> {
    Some(match name {
        "timestamp" => Func::new(vec![], Type::String, |_, _, _| {
            Ok(Value::string(
                Utc::now().to_rfc3339_opts(SecondsFormat::Secs, true),
            ))
        })
        .impure(),
        // The plan's time, the same at plan and at apply; unknown during
        // validation (Terraform's result there is unknown, unrefined).
        "plantimestamp" => Func::new(vec![], Type::String, |_, _, ctx| {
            Ok(match ctx.plan_timestamp {
                Some(t) => Value::string(t),
                None => Value::unknown(Type::String),
            })
        }),
        "timeadd" => Func::new(
            vec![p_str("timestamp"), p_str("duration")],
            Type::String,
            timeadd,
        ),
        "timecmp" => Func::new(
            vec![p_str("timestamp_a"), p_str("timestamp_b")],
            Type::Number,
            |a, _, _| {
                let (x, y) = (parse_ts(a, 0)?, parse_ts(a, 1)?);
                Ok(Value::number(Number::from_i64(x.cmp(&y) as i64)))
            },
        ),
        "formatdate" => Func::new(
            vec![p_str("format"), p_str("time")],
            Type::String,
            formatdate,
        ),
        _ => return None,
    })
}

/// The current time as `plantimestamp` gives it: RFC 3339 in UTC, whole
/// seconds (Go's `time.RFC3339`).
pub fn now_rfc3339() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Secs, true)
}

fn parse_ts(a: &[Value], i: usize) -> Res<DateTime<FixedOffset>> {
    let t = s(&a[i]);
    let ok_shape = t.len() >= 20
        && t.as_bytes()
            .get(10)
            .is_some_and(|b| *b == b'T' || *b == b't');
    match DateTime::parse_from_rfc3339(t) {
        Ok(d) if ok_shape => Ok(d),
        _ => arg_err(
            i,
            format!("not a valid RFC3339 timestamp: cannot use {t:?} as a timestamp"),
        ),
    }
}

/// RFC 3339 as Go's `time.RFC3339` layout writes it (whole seconds, `Z`
/// for UTC).
fn rfc3339(d: &DateTime<FixedOffset>) -> String {
    if d.offset().local_minus_utc() == 0 {
        d.format("%Y-%m-%dT%H:%M:%SZ").to_string()
    } else {
        d.format("%Y-%m-%dT%H:%M:%S%:z").to_string()
    }
}

/// A Go duration string (`1h30m`, `-1.5s`, `300ms`) in nanoseconds.
pub(crate) fn parse_duration(text: &str) -> Option<i128> {
    let (neg, mut rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    if rest == "0" {
        return Some(0);
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: f64 = 0.0;
    let mut exact: i128 = 0;
    while !rest.is_empty() {
        let num_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if num_end == 0 {
            return None;
        }
        let num = &rest[..num_end];
        rest = &rest[num_end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = &rest[..unit_end];
        rest = &rest[unit_end..];
        let scale: i128 = match unit {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return None,
        };
        if num.contains('.') {
            total += num.parse::<f64>().ok()? * scale as f64;
        } else {
            exact = exact.checked_add(num.parse::<i128>().ok()?.checked_mul(scale)?)?;
        }
    }
    let ns = exact + total as i128;
    Some(if neg { -ns } else { ns })
}

fn timeadd(a: &[Value], _: &Type, _: &FuncCtx) -> Res<Value> {
    let t = parse_ts(a, 0)?;
    let Some(ns) = parse_duration(s(&a[1])) else {
        return arg_err(
            1,
            format!(
                "time: invalid duration {}",
                super::encoding::go_json_string(s(&a[1]))
            ),
        );
    };
    let d = chrono::Duration::nanoseconds(ns as i64);
    match t.checked_add_signed(d) {
        Some(r) => Ok(Value::string(rfc3339(&r))),
        None => call_err("time out of range"),
    }
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const DAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

fn formatdate(a: &[Value], _: &Type, _: &FuncCtx) -> Res<Value> {
    let t = parse_ts(a, 1)?;
    let spec: Vec<char> = s(&a[0]).chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < spec.len() {
        let c = spec[i];
        if c == '\'' {
            if spec.get(i + 1) == Some(&'\'') {
                out.push('\'');
                i += 2;
                continue;
            }
            // A quoted literal; a doubled quote inside it is one quote.
            let mut j = i + 1;
            loop {
                match spec.get(j) {
                    None => return arg_err(0, "unterminated literal '"),
                    Some('\'') if spec.get(j + 1) == Some(&'\'') => {
                        out.push('\'');
                        j += 2;
                    }
                    Some('\'') => break,
                    Some(&c) => {
                        out.push(c);
                        j += 1;
                    }
                }
            }
            i = j + 1;
            continue;
        }
        if !c.is_ascii_alphabetic() {
            out.push(c);
            i += 1;
            continue;
        }
        let run = spec[i..].iter().take_while(|&&x| x == c).count();
        let verb: String = spec[i..i + run].iter().collect();
        i += run;
        let off = t.offset().local_minus_utc();
        let (oh, om) = (off.abs() / 3600, (off.abs() % 3600) / 60);
        let sign = if off < 0 { '-' } else { '+' };
        let h12 = match t.hour() % 12 {
            0 => 12,
            h => h,
        };
        let piece = match verb.as_str() {
            "YYYY" => format!("{:04}", t.year()),
            "YY" => format!("{:02}", t.year() % 100),
            "MMMM" => MONTHS[t.month0() as usize].to_string(),
            "MMM" => MONTHS[t.month0() as usize][..3].to_string(),
            "MM" => format!("{:02}", t.month()),
            "M" => t.month().to_string(),
            "DD" => format!("{:02}", t.day()),
            "D" => t.day().to_string(),
            "EEEE" => DAYS[t.weekday().num_days_from_monday() as usize].to_string(),
            "EEE" => DAYS[t.weekday().num_days_from_monday() as usize][..3].to_string(),
            "hh" => format!("{:02}", t.hour()),
            "h" => t.hour().to_string(),
            "HH" => format!("{h12:02}"),
            "H" => h12.to_string(),
            "AA" => (if t.hour() < 12 { "AM" } else { "PM" }).to_string(),
            "aa" => (if t.hour() < 12 { "am" } else { "pm" }).to_string(),
            "mm" => format!("{:02}", t.minute()),
            "m" => t.minute().to_string(),
            "ss" => format!("{:02}", t.second()),
            "s" => t.second().to_string(),
            "ZZZZZ" => format!("{sign}{oh:02}:{om:02}"),
            "ZZZZ" => format!("{sign}{oh:02}{om:02}"),
            "ZZZ" => {
                if off == 0 {
                    "UTC".to_string()
                } else {
                    format!("{sign}{oh:02}{om:02}")
                }
            }
            "Z" => {
                if off == 0 {
                    "Z".to_string()
                } else {
                    format!("{sign}{oh:02}:{om:02}")
                }
            }
            _ => {
                return arg_err(
                    0,
                    format!("invalid date format verb {verb:?}: unsupported format specifier"),
                )
            }
        };
        out.push_str(&piece);
    }
    Ok(Value::string(out))
}

#[cfg(test)]
#[path = "time_tests.rs"]
mod tests;
