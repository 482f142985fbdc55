//! Provider versions and version constraints as `required_providers` and
//! the lock file write them: `"~> 3.0"`, `">= 1.2, < 2.0"`, `"= 1.0.0"`,
//! `"!= 1.1.0"`, a bare `"1.0.0"` (exact).
//!
//! Rules (Terraform's): missing minor/patch parts are zero; `~> X.Y`
//! allows any X.* at or above X.Y, `~> X.Y.Z` any X.Y.* at or above
//! X.Y.Z, `~> X` is `~> X.0`; a pre-release version is selected only by an
//! exact `=` (or bare) constraint naming it; build metadata is ignored.

use std::cmp::Ordering;
use std::fmt;

/// A semantic version.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Version {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
    /// Pre-release label without the dash (`beta.1`), empty for a release.
    pub pre: String,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid version {text:?}: {reason}")]
pub struct VersionError {
    pub text: String,
    pub reason: String,
}

impl Version {
    pub fn new(major: u64, minor: u64, patch: u64) -> Version {
        Version {
            major,
            minor,
            patch,
            pre: String::new(),
        }
    }

    /// Parses `1.2.3`, `1.2`, `1`, `v1.2.3`, `1.2.3-beta.1+build`; returns
    /// the version and how many numeric parts were written.
    fn parse_parts(text: &str) -> Result<(Version, usize), VersionError> {
        let err = |reason: &str| VersionError {
            text: text.to_string(),
            reason: reason.to_string(),
        };
        let t = text.trim();
        let t = t.strip_prefix('v').unwrap_or(t);
        let t = t.split('+').next().unwrap_or_default();
        let (nums, pre) = match t.split_once('-') {
            Some((n, p)) if !p.is_empty() => (n, p.to_string()),
            Some(_) => return Err(err("empty pre-release label")),
            None => (t, String::new()),
        };
        let parts: Vec<&str> = nums.split('.').collect();
        if parts.is_empty() || parts.len() > 3 {
            return Err(err("expected MAJOR[.MINOR[.PATCH]]"));
        }
        let mut n = [0u64; 3];
        for (i, p) in parts.iter().enumerate() {
            if p.is_empty() || !p.chars().all(|c| c.is_ascii_digit()) {
                return Err(err("version parts must be numbers"));
            }
            n[i] = p.parse().map_err(|_| err("version part too large"))?;
        }
        Ok((
            Version {
                major: n[0],
                minor: n[1],
                patch: n[2],
                pre,
            },
            parts.len(),
        ))
    }

    pub fn parse(text: &str) -> Result<Version, VersionError> {
        Version::parse_parts(text).map(|(v, _)| v)
    }

    pub fn is_prerelease(&self) -> bool {
        !self.pre.is_empty()
    }
}

fn cmp_pre(a: &str, b: &str) -> Ordering {
    match (a.is_empty(), b.is_empty()) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Greater,
        (false, true) => return Ordering::Less,
        _ => {}
    }
    let (mut x, mut y) = (a.split('.'), b.split('.'));
    loop {
        match (x.next(), y.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(p), Some(q)) => {
                let o = match (p.parse::<u64>(), q.parse::<u64>()) {
                    (Ok(m), Ok(n)) => m.cmp(&n),
                    (Ok(_), Err(_)) => Ordering::Less,
                    (Err(_), Ok(_)) => Ordering::Greater,
                    (Err(_), Err(_)) => p.cmp(q),
                };
                if o != Ordering::Equal {
                    return o;
                }
            }
        }
    }
}

impl Ord for Version {
    fn cmp(&self, o: &Version) -> Ordering {
        (self.major, self.minor, self.patch)
            .cmp(&(o.major, o.minor, o.patch))
            .then_with(|| cmp_pre(&self.pre, &o.pre))
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, o: &Version) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        if !self.pre.is_empty() {
            write!(f, "-{}", self.pre)?;
        }
        Ok(())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
    Pessimistic,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Constraint {
    op: Op,
    version: Version,
    /// How many numeric parts were written (for `~>`).
    parts: usize,
}

impl Constraint {
    fn allows(&self, v: &Version) -> bool {
        let c = &self.version;
        match self.op {
            Op::Eq => v == c,
            Op::Ne => v != c,
            Op::Gt => v > c,
            Op::Ge => v >= c,
            Op::Lt => v < c,
            Op::Le => v <= c,
            Op::Pessimistic => {
                let upper_ok = match self.parts {
                    3 => v.major == c.major && v.minor == c.minor,
                    _ => v.major == c.major,
                };
                v >= c && upper_ok
            }
        }
    }
}

/// A conjunction of constraints (the empty set allows every release).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Constraints {
    items: Vec<Constraint>,
    text: String,
}

impl Constraints {
    /// No constraint at all.
    pub fn any() -> Constraints {
        Constraints::default()
    }

    /// Parses a comma-separated constraint string.
    pub fn parse(text: &str) -> Result<Constraints, VersionError> {
        let mut items = Vec::new();
        for part in text.split(',') {
            let p = part.trim();
            if p.is_empty() {
                if text.trim().is_empty() {
                    break;
                }
                return Err(VersionError {
                    text: text.to_string(),
                    reason: "empty constraint between commas".into(),
                });
            }
            let (op, rest) = [
                ("~>", Op::Pessimistic),
                (">=", Op::Ge),
                ("<=", Op::Le),
                ("!=", Op::Ne),
                ("=", Op::Eq),
                (">", Op::Gt),
                ("<", Op::Lt),
            ]
            .iter()
            .find_map(|(s, op)| p.strip_prefix(s).map(|r| (*op, r)))
            .unwrap_or((Op::Eq, p));
            let (version, parts) = Version::parse_parts(rest.trim()).map_err(|e| VersionError {
                text: text.to_string(),
                reason: e.reason,
            })?;
            items.push(Constraint { op, version, parts });
        }
        Ok(Constraints {
            items,
            text: text.trim().to_string(),
        })
    }

    /// Merges the constraints of several modules requiring one provider.
    pub fn and(mut self, other: &Constraints) -> Constraints {
        self.items.extend(other.items.iter().cloned());
        self.text = match (self.text.is_empty(), other.text.is_empty()) {
            (_, true) => self.text,
            (true, false) => other.text.clone(),
            (false, false) => format!("{}, {}", self.text, other.text),
        };
        self
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn allows(&self, v: &Version) -> bool {
        if v.is_prerelease() && !self.items.iter().any(|c| c.op == Op::Eq && &c.version == v) {
            return false;
        }
        self.items.iter().all(|c| c.allows(v))
    }

    /// The constraints as Terraform writes them in the lock file and its
    /// messages: each normalized (`>= 3` as `>= 3.0.0`, `~> 3` as
    /// `~> 3.0`, an exact version without `=`), duplicates removed, ordered
    /// by version and, for one version, `>`, `>=`, exact, `~>`, `<=`, `<`,
    /// `!=`.
    pub fn lock_text(&self) -> String {
        let rank = |op: Op| match op {
            Op::Gt => 0,
            Op::Ge => 1,
            Op::Eq => 2,
            Op::Pessimistic => 3,
            Op::Le => 4,
            Op::Lt => 5,
            Op::Ne => 6,
        };
        let mut items: Vec<(&Version, u8, String)> = self
            .items
            .iter()
            .map(|c| {
                let v = &c.version;
                let pre = if v.pre.is_empty() {
                    String::new()
                } else {
                    format!("-{}", v.pre)
                };
                let text = match c.op {
                    Op::Pessimistic if c.parts < 3 => format!("~> {}.{}{pre}", v.major, v.minor),
                    Op::Pessimistic => format!("~> {v}"),
                    Op::Eq => v.to_string(),
                    Op::Gt => format!("> {v}"),
                    Op::Ge => format!(">= {v}"),
                    Op::Lt => format!("< {v}"),
                    Op::Le => format!("<= {v}"),
                    Op::Ne => format!("!= {v}"),
                };
                (v, rank(c.op), text)
            })
            .collect();
        items.sort_by(|a, b| a.0.cmp(b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        items.dedup_by(|a, b| a.2 == b.2);
        items
            .into_iter()
            .map(|(_, _, t)| t)
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The newest of `versions` these constraints allow.
    pub fn newest<'a>(
        &self,
        versions: impl IntoIterator<Item = &'a Version>,
    ) -> Option<&'a Version> {
        versions.into_iter().filter(|v| self.allows(v)).max()
    }
}

impl fmt::Display for Constraints {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Terraform's normalized constraint text (the lock file's
    /// `constraints`), cases from Terraform's documented behaviour.
    #[test]
    fn item1_lock_constraints_text() {
        let cases = [
            ("exact", "1.2.3", "1.2.3"),
            ("exact_with_operator", "= 1.2.3", "1.2.3"),
            ("prerelease", "1.2.3-beta", "1.2.3-beta"),
            ("major_only", ">= 3", ">= 3.0.0"),
            ("pessimistic_major", "~> 3", "~> 3.0"),
            ("pessimistic_minor", "~>3.0", "~> 3.0"),
            ("pessimistic_patch", "~> 3.0.0", "~> 3.0.0"),
            ("multiple", ">= 3.0, < 4.0", ">= 3.0.0, < 4.0.0"),
            ("duplicates", ">= 1.2.3, 1.2.3, ~> 1.2, 1.2.3", "~> 1.2, >= 1.2.3, 1.2.3"),
            ("equivalent_duplicates", ">= 2.68, >= 2.68.0", ">= 2.68.0"),
            (
                "same_version_operator_order",
                "< 1.2.3, <= 1.2.3, != 1.2.3, = 1.2.4, = 1.2.3, > 2, > 1.2.3, >= 1.2.3, ~> 1.2.3, ~> 1.2",
                "~> 1.2, > 1.2.3, >= 1.2.3, 1.2.3, ~> 1.2.3, <= 1.2.3, < 1.2.3, != 1.2.3, 1.2.4, > 2.0.0",
            ),
            ("typical", "~> 1.2, >= 1.2, 1.2.4", ">= 1.2.0, ~> 1.2, 1.2.4"),
            ("disjoint", ">= 2, >= 1.2, < 1.3", ">= 1.2.0, < 1.3.0, >= 2.0.0"),
        ];
        for (case, text, want) in cases {
            assert_eq!(
                Constraints::parse(text).unwrap().lock_text(),
                want,
                "case {case}"
            );
        }
    }

    fn check(case: &str, constraints: &str, version: &str, want: bool) {
        let c = Constraints::parse(constraints).unwrap_or_else(|e| panic!("case {case}: {e}"));
        let v = Version::parse(version).unwrap_or_else(|e| panic!("case {case}: {e}"));
        assert_eq!(
            c.allows(&v),
            want,
            "case {case}: {constraints:?} allows {version}"
        );
    }

    #[test]
    fn constraints() {
        check("pessimistic_minor_same", "~> 3.0", "3.6.2", true);
        check("pessimistic_minor_next_major", "~> 3.0", "4.0.0", false);
        check("pessimistic_minor_below", "~> 3.1", "3.0.9", false);
        check("pessimistic_patch_same_minor", "~> 3.1.2", "3.1.9", true);
        check("pessimistic_patch_next_minor", "~> 3.1.2", "3.2.0", false);
        check("pessimistic_patch_below", "~> 3.1.2", "3.1.1", false);
        check("pessimistic_major_only", "~> 3", "3.9.0", true);
        check("pessimistic_major_only_next", "~> 3", "4.0.0", false);
        check("range_inside", ">= 1.2, < 2.0", "1.9.9", true);
        check("range_upper_excluded", ">= 1.2, < 2.0", "2.0.0", false);
        check("range_lower_included", ">= 1.2, < 2.0", "1.2.0", true);
        check("bare_is_exact", "1.0.0", "1.0.0", true);
        check("bare_is_exact_other", "1.0.0", "1.0.1", false);
        check("eq_short", "= 1.2", "1.2.0", true);
        check("not_equal", "!= 1.1.0", "1.1.0", false);
        check("not_equal_other", "!= 1.1.0", "1.1.1", true);
        check("greater", "> 1.0", "1.0.0", false);
        check("less_equal", "<= 1.0", "1.0.0", true);
        check("empty_allows_release", "", "9.9.9", true);
        check("empty_refuses_prerelease", "", "2.0.0-beta1", false);
        check("range_refuses_prerelease", ">= 1.0", "2.0.0-rc.1", false);
        check("exact_prerelease", "= 2.0.0-rc.1", "2.0.0-rc.1", true);
        check("no_spaces", ">=1.0,<2", "1.5.0", true);
        check("v_prefix_and_build", "~> 1.0", "v1.4.0+linux", true);
    }

    #[test]
    fn bad_constraints_and_ordering() {
        for (case, text) in [
            ("letters", "~> abc"),
            ("dangling_comma", ">= 1.0,"),
            ("four_parts", "1.2.3.4"),
            ("empty_op", ">="),
        ] {
            assert!(Constraints::parse(text).is_err(), "case {case}");
        }
        let vs: Vec<Version> = [
            "1.0.0",
            "1.10.0",
            "1.9.0",
            "2.0.0-beta.2",
            "2.0.0-beta.10",
            "2.0.0",
        ]
        .iter()
        .map(|v| Version::parse(v).unwrap())
        .collect();
        let mut sorted = vs.clone();
        sorted.sort();
        let names: Vec<String> = sorted.iter().map(ToString::to_string).collect();
        assert_eq!(
            names,
            [
                "1.0.0",
                "1.9.0",
                "1.10.0",
                "2.0.0-beta.2",
                "2.0.0-beta.10",
                "2.0.0"
            ]
        );
        assert_eq!(
            Constraints::parse("~> 1.0")
                .unwrap()
                .newest(&vs)
                .unwrap()
                .to_string(),
            "1.10.0"
        );
        assert_eq!(
            Constraints::parse("~> 1.0")
                .unwrap()
                .and(&Constraints::parse("< 1.10").unwrap())
                .newest(&vs)
                .unwrap()
                .to_string(),
            "1.9.0"
        );
    }
}
