//! Refinements: what is already known about an unknown value.
//!
//! Terraform narrows "known after apply" placeholders with facts that hold
//! for whatever final value arrives: it will not be null, a string starts with
//! a prefix, a number lies within bounds, a collection's length lies within
//! bounds. Refinements never change equality (see
//! [`Value::eq_ignoring_refinements`](crate::Value::eq_ignoring_refinements))
//! but a final value must satisfy them ([`Refinements::admits`]).

use crate::{Kind, Number, Value};

/// A number bound: the limit and whether it is inclusive.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Bound {
    pub value: Number,
    pub inclusive: bool,
}

/// Facts about an unknown value. `Default` is "nothing known".
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Refinements {
    /// The final value is definitely not null.
    pub not_null: bool,
    /// The final string starts with this prefix.
    pub string_prefix: Option<String>,
    pub number_lower: Option<Bound>,
    pub number_upper: Option<Bound>,
    /// Inclusive lower bound on a collection's length.
    pub length_min: Option<u64>,
    /// Inclusive upper bound on a collection's length.
    pub length_max: Option<u64>,
}

/// cty truncates string prefix refinements to this many bytes.
pub const MAX_PREFIX_BYTES: usize = 256;

impl Refinements {
    pub fn is_empty(&self) -> bool {
        self == &Refinements::default()
    }

    pub fn not_null() -> Refinements {
        Refinements {
            not_null: true,
            ..Default::default()
        }
    }

    /// A string prefix refinement; it implies not-null. Long prefixes are
    /// cut to at most [`MAX_PREFIX_BYTES`] on a character boundary.
    pub fn with_prefix(mut self, prefix: &str) -> Refinements {
        let mut end = prefix.len().min(MAX_PREFIX_BYTES);
        while !prefix.is_char_boundary(end) {
            end -= 1;
        }
        self.not_null = true;
        self.string_prefix = (end > 0).then(|| prefix[..end].to_string());
        self
    }

    pub fn with_number_bounds(mut self, lower: Option<Bound>, upper: Option<Bound>) -> Refinements {
        self.number_lower = lower;
        self.number_upper = upper;
        self
    }

    pub fn with_length_bounds(mut self, min: Option<u64>, max: Option<u64>) -> Refinements {
        self.length_min = min.filter(|m| *m > 0);
        self.length_max = max;
        self
    }

    /// Whether `v` (a known or null value, or another unknown) could be the
    /// final value of an unknown refined this way. An unknown `v` is admitted
    /// when its own refinements are at least as narrow (a conservative check).
    pub fn admits(&self, v: &Value) -> bool {
        match v.kind() {
            Kind::Null => !self.not_null,
            Kind::Unknown(r) => {
                let r = r.as_deref().cloned().unwrap_or_default();
                (!self.not_null || r.not_null)
                    && self.string_prefix.as_ref().is_none_or(|p| {
                        r.string_prefix
                            .as_ref()
                            .is_some_and(|q| q.starts_with(p.as_str()))
                    })
                    && self
                        .number_lower
                        .as_ref()
                        .is_none_or(|b| r.number_lower.as_ref().is_some_and(|c| lower_within(c, b)))
                    && self
                        .number_upper
                        .as_ref()
                        .is_none_or(|b| r.number_upper.as_ref().is_some_and(|c| upper_within(c, b)))
                    && self
                        .length_min
                        .is_none_or(|m| r.length_min.is_some_and(|n| n >= m))
                    && self
                        .length_max
                        .is_none_or(|m| r.length_max.is_some_and(|n| n <= m))
            }
            Kind::String(s) => self
                .string_prefix
                .as_ref()
                .is_none_or(|p| s.starts_with(p.as_str())),
            Kind::Number(n) => {
                self.number_lower.as_ref().is_none_or(|b| {
                    if b.inclusive {
                        **n >= b.value
                    } else {
                        **n > b.value
                    }
                }) && self.number_upper.as_ref().is_none_or(|b| {
                    if b.inclusive {
                        **n <= b.value
                    } else {
                        **n < b.value
                    }
                })
            }
            Kind::Bool(_) => true,
            Kind::Seq(_) | Kind::Set(_) | Kind::Map(_) => {
                let n = v.length().unwrap_or(0) as u64;
                self.length_min.is_none_or(|m| n >= m) && self.length_max.is_none_or(|m| n <= m)
            }
        }
    }
}

/// `c` is at least as tight a lower bound as `b`.
fn lower_within(c: &Bound, b: &Bound) -> bool {
    c.value > b.value || (c.value == b.value && (b.inclusive || !c.inclusive))
}

/// `c` is at least as tight an upper bound as `b`.
fn upper_within(c: &Bound, b: &Bound) -> bool {
    c.value < b.value || (c.value == b.value && (b.inclusive || !c.inclusive))
}

/// Reads like `not null, starts with "ab", >= 0, < 10, length 1..3`.
impl std::fmt::Display for Refinements {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts: Vec<String> = Vec::new();
        if self.not_null {
            parts.push("not null".into());
        }
        if let Some(p) = &self.string_prefix {
            parts.push(format!("starts with {}", crate::render::quote(p)));
        }
        if let Some(b) = &self.number_lower {
            parts.push(format!(
                "{} {}",
                if b.inclusive { ">=" } else { ">" },
                b.value
            ));
        }
        if let Some(b) = &self.number_upper {
            parts.push(format!(
                "{} {}",
                if b.inclusive { "<=" } else { "<" },
                b.value
            ));
        }
        match (self.length_min, self.length_max) {
            (None, None) => {}
            (lo, hi) => parts.push(format!(
                "length {}..{}",
                lo.unwrap_or(0),
                hi.map(|h| h.to_string()).unwrap_or_default()
            )),
        }
        f.write_str(&parts.join(", "))
    }
}
