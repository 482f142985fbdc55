//! The time provider on terrane's SDK, with the names and behaviour users
//! know from the widely used `time` provider: `time_static` (a timestamp
//! fixed at creation), `time_offset` (a base time plus offsets, updated in
//! place when the offsets change), `time_rotating` (re-created once its
//! rotation time has passed, noticed on refresh) and `time_sleep` (waits on
//! create/destroy, cancelled when Terraform stops the provider). Times are
//! RFC 3339 in UTC with whole seconds.

use async_trait::async_trait;
use chrono::{DateTime, Datelike, Duration, Months, SecondsFormat, Timelike, Utc};
use std::collections::BTreeMap;
use std::sync::Arc;
use terrane_sdk::{
    Applied, Attr, Ctx, Diagnostics, Path, Provider, Resource, ResourceSchema, ResourceType,
    SimpleResource, Type, Value,
};

pub struct TimeProvider;

impl Provider for TimeProvider {
    type Data = ();
    fn type_name(&self) -> &str {
        "time"
    }
    fn version(&self) -> &str {
        env!("CARGO_PKG_VERSION")
    }
    fn resources(&self) -> Vec<Arc<dyn ResourceType>> {
        vec![
            Arc::new(SimpleResource {
                name: "time_static",
                schema: static_schema,
                resource: Time(Kind::Static),
            }),
            Arc::new(SimpleResource {
                name: "time_offset",
                schema: offset_schema,
                resource: Time(Kind::Offset),
            }),
            Arc::new(SimpleResource {
                name: "time_rotating",
                schema: rotating_schema,
                resource: Time(Kind::Rotating),
            }),
            Arc::new(SimpleResource {
                name: "time_sleep",
                schema: sleep_schema,
                resource: Time(Kind::Sleep),
            }),
        ]
    }
}

const PARTS: [&str; 7] = ["year", "month", "day", "hour", "minute", "second", "unix"];

fn triggers() -> Attr {
    Attr::of(Type::map(Type::String))
        .optional()
        .requires_replace()
}

fn with_parts(s: ResourceSchema) -> ResourceSchema {
    PARTS
        .iter()
        .fold(s, |s, p| s.attr(p, Attr::number().computed()))
}

fn static_schema() -> ResourceSchema {
    with_parts(
        ResourceSchema::new(0)
            .attr(
                "rfc3339",
                Attr::string()
                    .optional_computed()
                    .requires_replace()
                    .use_state_for_unknown(),
            )
            .attr("triggers", triggers())
            .attr("id", Attr::string().computed().use_state_for_unknown()),
    )
}

const OFFSETS: [&str; 6] = [
    "offset_years",
    "offset_months",
    "offset_days",
    "offset_hours",
    "offset_minutes",
    "offset_seconds",
];

fn offset_schema() -> ResourceSchema {
    let s = ResourceSchema::new(0)
        .attr(
            "base_rfc3339",
            Attr::string()
                .optional_computed()
                .requires_replace()
                .use_state_for_unknown(),
        )
        .attr("rfc3339", Attr::string().computed())
        .attr("triggers", triggers())
        .attr("id", Attr::string().computed().use_state_for_unknown());
    with_parts(
        OFFSETS
            .iter()
            .fold(s, |s, o| s.attr(o, Attr::number().optional())),
    )
}

const ROTATIONS: [&str; 5] = [
    "rotation_years",
    "rotation_months",
    "rotation_days",
    "rotation_hours",
    "rotation_minutes",
];

fn rotating_schema() -> ResourceSchema {
    let s = ResourceSchema::new(0)
        .attr(
            "rfc3339",
            Attr::string()
                .optional_computed()
                .requires_replace()
                .use_state_for_unknown(),
        )
        .attr(
            "rotation_rfc3339",
            Attr::string().optional_computed().requires_replace(),
        )
        .attr("triggers", triggers())
        .attr("id", Attr::string().computed().use_state_for_unknown());
    with_parts(ROTATIONS.iter().fold(s, |s, r| {
        s.attr(r, Attr::number().optional().requires_replace())
    }))
}

fn sleep_schema() -> ResourceSchema {
    ResourceSchema::new(0)
        .attr("create_duration", Attr::string().optional())
        .attr("destroy_duration", Attr::string().optional())
        .attr("triggers", triggers())
        .attr("id", Attr::string().computed().use_state_for_unknown())
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Static,
    Offset,
    Rotating,
    Sleep,
}

#[derive(Clone)]
struct Time(Kind);

fn fmt(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

fn parse(attr: &str, s: &str) -> Result<DateTime<Utc>, Diagnostics> {
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| {
            Diagnostics::attr_error(
                Path::root().attr(attr),
                "Invalid RFC 3339 time",
                format!("{s:?}: {e}"),
            )
        })
}

fn num(v: &Value, name: &str) -> i64 {
    v.get_attr(name)
        .and_then(Value::as_number)
        .and_then(|n| n.to_i64())
        .unwrap_or(0)
}

fn parts(t: DateTime<Utc>) -> BTreeMap<String, Value> {
    let mut m = BTreeMap::new();
    m.insert("year".into(), Value::number(i64::from(t.year())));
    m.insert("month".into(), Value::number(i64::from(t.month())));
    m.insert("day".into(), Value::number(i64::from(t.day())));
    m.insert("hour".into(), Value::number(i64::from(t.hour())));
    m.insert("minute".into(), Value::number(i64::from(t.minute())));
    m.insert("second".into(), Value::number(i64::from(t.second())));
    m.insert("unix".into(), Value::number(t.timestamp()));
    m
}

/// `t` moved by years, months, days, hours, minutes and seconds.
fn shift(t: DateTime<Utc>, v: &Value, names: &[&str]) -> Option<DateTime<Utc>> {
    let get = |suffix: &str| {
        names
            .iter()
            .find(|n| n.ends_with(suffix))
            .map(|n| num(v, n))
            .unwrap_or(0)
    };
    let months = get("years") * 12 + get("months");
    let t = if months >= 0 {
        t.checked_add_months(Months::new(months as u32))?
    } else {
        t.checked_sub_months(Months::new((-months) as u32))?
    };
    t.checked_add_signed(
        Duration::days(get("days"))
            + Duration::hours(get("hours"))
            + Duration::minutes(get("minutes"))
            + Duration::seconds(get("seconds")),
    )
}

fn parse_duration(attr: &str, s: &str) -> Result<std::time::Duration, Diagnostics> {
    let bad = || {
        Diagnostics::attr_error(
            Path::root().attr(attr),
            "Invalid duration",
            format!("{s:?} is not a duration like \"30s\", \"5m\" or \"1h30m\""),
        )
    };
    let mut total = 0f64;
    let mut num = String::new();
    for c in s.chars() {
        if c.is_ascii_digit() || c == '.' {
            num.push(c);
            continue;
        }
        let n: f64 = num.parse().map_err(|_| bad())?;
        num.clear();
        total += n * match c {
            'h' => 3600.0,
            'm' => 60.0,
            's' => 1.0,
            _ => return Err(bad()),
        };
    }
    if !num.is_empty() || s.is_empty() {
        return Err(bad());
    }
    Ok(std::time::Duration::from_secs_f64(total))
}

async fn sleep(ctx: &Ctx, v: &Value, attr: &str) -> Result<(), Diagnostics> {
    let Some(d) = terrane_sdk::str_attr(v, attr) else {
        return Ok(());
    };
    let d = parse_duration(attr, &d)?;
    tokio::select! {
        _ = tokio::time::sleep(d) => Ok(()),
        _ = ctx.cancel.cancelled() => Err(Diagnostics::error("Interrupted", format!("{attr} sleep was interrupted"))),
    }
}

fn object(base: &Value, extra: BTreeMap<String, Value>) -> Value {
    let mut m = base.entries().map(|e| (*e).clone()).unwrap_or_default();
    m.extend(extra);
    Value::object_of(m)
}

impl Time {
    fn compute(
        &self,
        planned: &Value,
        now: DateTime<Utc>,
    ) -> Result<BTreeMap<String, Value>, Diagnostics> {
        let given = |a: &str| terrane_sdk::str_attr(planned, a);
        let mut m = BTreeMap::new();
        match self.0 {
            Kind::Static => {
                let t = match given("rfc3339") {
                    Some(s) => parse("rfc3339", &s)?,
                    None => now,
                };
                m.extend(parts(t));
                m.insert("rfc3339".into(), Value::string(fmt(t)));
                m.insert("id".into(), Value::string(fmt(t)));
            }
            Kind::Offset => {
                let base = match given("base_rfc3339") {
                    Some(s) => parse("base_rfc3339", &s)?,
                    None => now,
                };
                let t = shift(base, planned, &OFFSETS).ok_or_else(|| {
                    Diagnostics::error("Invalid offset", "the offset moves the time out of range")
                })?;
                m.extend(parts(t));
                m.insert("base_rfc3339".into(), Value::string(fmt(base)));
                m.insert("rfc3339".into(), Value::string(fmt(t)));
                m.insert("id".into(), Value::string(fmt(base)));
            }
            Kind::Rotating => {
                let base = match given("rfc3339") {
                    Some(s) => parse("rfc3339", &s)?,
                    None => now,
                };
                let rotation = match given("rotation_rfc3339") {
                    Some(s) => parse("rotation_rfc3339", &s)?,
                    None => {
                        if ROTATIONS.iter().all(|r| num(planned, r) == 0) {
                            return Err(Diagnostics::error("Missing rotation", "one of rotation_years, rotation_months, rotation_days, rotation_hours, rotation_minutes or rotation_rfc3339 must be set"));
                        }
                        shift(base, planned, &ROTATIONS).ok_or_else(|| {
                            Diagnostics::error(
                                "Invalid rotation",
                                "the rotation moves the time out of range",
                            )
                        })?
                    }
                };
                m.extend(parts(base));
                m.insert("rfc3339".into(), Value::string(fmt(base)));
                m.insert("rotation_rfc3339".into(), Value::string(fmt(rotation)));
                m.insert("id".into(), Value::string(fmt(base)));
            }
            Kind::Sleep => {
                m.insert("id".into(), Value::string(fmt(now)));
            }
        }
        Ok(m)
    }
}

#[async_trait]
impl Resource for Time {
    async fn create(
        &self,
        ctx: &Ctx,
        planned: &Value,
        _config: &Value,
    ) -> Result<Applied, Diagnostics> {
        if self.0 == Kind::Sleep {
            sleep(ctx, planned, "create_duration").await?;
        }
        Ok(Applied::new(object(
            planned,
            self.compute(planned, Utc::now())?,
        )))
    }

    async fn read(
        &self,
        _ctx: &Ctx,
        state: &Value,
        private: &[u8],
    ) -> Result<Option<Applied>, Diagnostics> {
        if self.0 == Kind::Rotating {
            if let Some(r) = terrane_sdk::str_attr(state, "rotation_rfc3339") {
                if Utc::now() >= parse("rotation_rfc3339", &r)? {
                    return Ok(None); // rotated: plan a new one
                }
            }
        }
        Ok(Some(Applied {
            state: state.clone(),
            private: private.to_vec(),
        }))
    }

    async fn update(
        &self,
        _ctx: &Ctx,
        prior: &Value,
        planned: &Value,
        _config: &Value,
    ) -> Result<Applied, Diagnostics> {
        // Only time_offset has in-place arguments (the offsets): recompute
        // from the kept base time.
        let base = terrane_sdk::str_attr(prior, "base_rfc3339")
            .or_else(|| terrane_sdk::str_attr(prior, "rfc3339"));
        let now = match base {
            Some(b) => parse("base_rfc3339", &b)?,
            None => Utc::now(),
        };
        Ok(Applied::new(object(planned, self.compute(planned, now)?)))
    }

    async fn delete(&self, ctx: &Ctx, prior: &Value) -> Result<(), Diagnostics> {
        if self.0 == Kind::Sleep {
            sleep(ctx, prior, "destroy_duration").await?;
        }
        Ok(())
    }

    async fn import(&self, _ctx: &Ctx, id: &str) -> Result<Value, Diagnostics> {
        let schema = match self.0 {
            Kind::Static => static_schema(),
            _ => {
                return Err(Diagnostics::error(
                    "Resource Import Not Implemented",
                    "only time_static can be imported, by its RFC 3339 time",
                ))
            }
        };
        let t = parse("rfc3339", id)?;
        let base = schema.block_schema().empty_value();
        let mut m = parts(t);
        m.insert("rfc3339".into(), Value::string(fmt(t)));
        m.insert("id".into(), Value::string(fmt(t)));
        Ok(Value::object_typed_of(
            &schema.block_schema().implied_type(),
            object(&base, m)
                .entries()
                .map(|e| (*e).clone())
                .unwrap_or_default(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(s: &str, want: Option<f64>) {
        assert_eq!(
            parse_duration("d", s).ok().map(|d| d.as_secs_f64()),
            want,
            "{s}"
        );
    }

    #[test]
    fn durations() {
        check("30s", Some(30.0));
        check("1h30m", Some(5400.0));
        check("0.5s", Some(0.5));
        check("", None);
        check("10", None);
        check("5d", None);
    }

    #[test]
    fn offsets_add_calendar_months() {
        let base = parse("b", "2024-01-31T00:00:00Z").unwrap();
        let v = Value::object_from([
            ("offset_months", Value::number(1)),
            ("offset_days", Value::number(1)),
        ]);
        assert_eq!(
            fmt(shift(base, &v, &OFFSETS).unwrap()),
            "2024-03-01T00:00:00Z"
        );
    }
}
