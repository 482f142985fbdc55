//! Validators: checks on configured values that a schema alone cannot
//! express, each reporting a diagnostic on the attribute's path. Unknown
//! and null values are left alone (they are checked again once known).

use crate::diag::Diagnostic;
use terrane_value::{Kind, Path, Value};

/// A check of one attribute value; `config` is the whole configuration
/// object, for checks that relate attributes.
pub trait Validator: Send + Sync {
    fn check(&self, path: &Path, v: &Value, config: &Value) -> Vec<Diagnostic>;
}

fn invalid(path: &Path, summary: &str, detail: String) -> Vec<Diagnostic> {
    vec![Diagnostic::error(summary, detail, None).at_path(path.clone())]
}

/// A path as the plugin framework's validators print it (`length`, not
/// `.length`).
fn framework_path(path: &Path) -> String {
    path.to_string().trim_start_matches('.').to_string()
}

fn settled(v: &Value) -> bool {
    v.is_wholly_known() && !v.is_null()
}

/// String length (in characters) or collection length within bounds.
pub struct LengthBetween(pub u64, pub u64);

impl Validator for LengthBetween {
    fn check(&self, path: &Path, v: &Value, _c: &Value) -> Vec<Diagnostic> {
        if !settled(v) {
            return vec![];
        }
        let n = match v.kind() {
            Kind::String(s) => s.chars().count() as u64,
            _ => v.length().unwrap_or(0) as u64,
        };
        if n < self.0 || n > self.1 {
            return invalid(
                path,
                "Invalid Attribute Value Length",
                format!(
                    "Attribute {path} length must be between {} and {}, got: {n}",
                    self.0, self.1
                ),
            );
        }
        vec![]
    }
}

/// A number at least this large.
pub struct AtLeast(pub i64);

impl Validator for AtLeast {
    fn check(&self, path: &Path, v: &Value, _c: &Value) -> Vec<Diagnostic> {
        match v.as_number() {
            Some(n) if settled(v) && *n < terrane_value::Number::from_i64(self.0) => invalid(
                path,
                "Invalid Attribute Value",
                format!(
                    "Attribute {} value must be at least {}, got: {n}",
                    framework_path(path),
                    self.0
                ),
            ),
            _ => vec![],
        }
    }
}

/// A number within inclusive bounds: for sizes a provider allocates, so a
/// huge value is refused at its attribute instead of exhausting memory.
pub struct Between(pub i64, pub i64);

impl Validator for Between {
    fn check(&self, path: &Path, v: &Value, _c: &Value) -> Vec<Diagnostic> {
        match v.as_number() {
            Some(n)
                if settled(v)
                    && (*n < terrane_value::Number::from_i64(self.0)
                        || *n > terrane_value::Number::from_i64(self.1)) =>
            {
                invalid(
                    path,
                    "Invalid Attribute Value",
                    format!(
                        "Attribute {} value must be between {} and {}, got: {n}",
                        framework_path(path),
                        self.0,
                        self.1
                    ),
                )
            }
            _ => vec![],
        }
    }
}

/// A string from a fixed list.
pub struct OneOf(pub Vec<String>);

impl Validator for OneOf {
    fn check(&self, path: &Path, v: &Value, _c: &Value) -> Vec<Diagnostic> {
        match v.as_str() {
            Some(s) if settled(v) && !self.0.iter().any(|o| o == s) => {
                let list = self
                    .0
                    .iter()
                    .map(|o| format!("{o:?}"))
                    .collect::<Vec<_>>()
                    .join(", ");
                invalid(
                    path,
                    "Invalid Attribute Value Match",
                    format!("Attribute {path} value must be one of: [{list}], got: {v}"),
                )
            }
            _ => vec![],
        }
    }
}

/// A string matching a regular expression.
pub struct Matches(pub regex::Regex, pub String);

impl Validator for Matches {
    fn check(&self, path: &Path, v: &Value, _c: &Value) -> Vec<Diagnostic> {
        match v.as_str() {
            Some(s) if settled(v) && !self.0.is_match(s) => invalid(
                path,
                "Invalid Attribute Value Match",
                format!("Attribute {path} {}, got: {v}", self.1),
            ),
            _ => vec![],
        }
    }
}

/// This attribute may not be set together with the named ones.
pub struct ConflictsWith(pub Vec<String>);

impl Validator for ConflictsWith {
    fn check(&self, path: &Path, v: &Value, config: &Value) -> Vec<Diagnostic> {
        if v.is_null() {
            return vec![];
        }
        let set: Vec<&String> = self
            .0
            .iter()
            .filter(|n| config.get_attr(n).is_some_and(|o| !o.is_null()))
            .collect();
        if set.is_empty() {
            return vec![];
        }
        let names = set
            .iter()
            .map(|n| format!(".{n}"))
            .collect::<Vec<_>>()
            .join(", ");
        invalid(
            path,
            "Invalid Attribute Combination",
            format!("Attribute {names} cannot be specified when {path} is specified"),
        )
    }
}

/// This attribute needs the named ones set too.
pub struct AlsoRequires(pub Vec<String>);

impl Validator for AlsoRequires {
    fn check(&self, path: &Path, v: &Value, config: &Value) -> Vec<Diagnostic> {
        if v.is_null() {
            return vec![];
        }
        let missing: Vec<&String> = self
            .0
            .iter()
            .filter(|n| config.get_attr(n).is_none_or(|o| o.is_null()))
            .collect();
        if missing.is_empty() {
            return vec![];
        }
        let names = missing
            .iter()
            .map(|n| format!(".{n}"))
            .collect::<Vec<_>>()
            .join(", ");
        invalid(
            path,
            "Invalid Attribute Combination",
            format!("Attribute {names} must be specified when {path} is specified"),
        )
    }
}

/// Exactly one (`exactly`) or at least one of the named attributes must be
/// set; attach it to any one of them.
pub struct OneOfAttributes {
    pub names: Vec<String>,
    pub exactly: bool,
}

impl Validator for OneOfAttributes {
    fn check(&self, path: &Path, _v: &Value, config: &Value) -> Vec<Diagnostic> {
        let values: Vec<&Value> = self
            .names
            .iter()
            .filter_map(|n| config.get_attr(n))
            .collect();
        if values.iter().any(|v| !v.is_known()) {
            return vec![];
        }
        let set = values.iter().filter(|v| !v.is_null()).count();
        let names = self
            .names
            .iter()
            .map(|n| format!(".{n}"))
            .collect::<Vec<_>>()
            .join(", ");
        if set == 0 {
            return invalid(
                path,
                "Invalid Attribute Combination",
                format!("At least one attribute out of [{names}] must be specified"),
            );
        }
        if self.exactly && set > 1 {
            return invalid(
                path,
                "Invalid Attribute Combination",
                format!("Exactly one of these attributes must be configured: [{names}]"),
            );
        }
        vec![]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use terrane_value::Type;

    #[track_caller]
    fn check(case: &str, v: &dyn Validator, value: Value, config: Value, want: Option<&str>) {
        let got = v.check(&Path::root().attr("a"), &value, &config);
        match want {
            None => assert!(got.is_empty(), "case {case}: {got:?}"),
            Some(w) => {
                assert_eq!(got.len(), 1, "case {case}");
                assert!(got[0].detail.contains(w), "case {case}: {}", got[0].detail);
                assert_eq!(
                    got[0].path,
                    Some(Path::root().attr("a")),
                    "case {case}: path"
                );
            }
        }
    }

    #[test]
    fn validators() {
        let cfg = |pairs: &[(&str, Value)]| Value::object_from(pairs.iter().cloned());
        let none = cfg(&[]);
        check(
            "length_ok",
            &LengthBetween(1, 3),
            Value::string("ab"),
            none.clone(),
            None,
        );
        check(
            "length_too_long",
            &LengthBetween(1, 3),
            Value::string("abcd"),
            none.clone(),
            Some("between 1 and 3, got: 4"),
        );
        check(
            "length_unknown_skipped",
            &LengthBetween(1, 3),
            Value::unknown(Type::String),
            none.clone(),
            None,
        );
        check(
            "at_least",
            &AtLeast(1),
            Value::number(0),
            none.clone(),
            Some("at least 1"),
        );
        check(
            "one_of",
            &OneOf(vec!["x".into(), "y".into()]),
            Value::string("z"),
            none.clone(),
            Some("one of: [\"x\", \"y\"]"),
        );
        check(
            "regex",
            &Matches(
                regex::Regex::new("^[0-7]{4}$").unwrap(),
                "must be a 4-digit octal".into(),
            ),
            Value::string("999"),
            none.clone(),
            Some("4-digit octal"),
        );
        let both = cfg(&[("a", Value::string("1")), ("b", Value::string("2"))]);
        check(
            "conflicts",
            &ConflictsWith(vec!["b".into()]),
            Value::string("1"),
            both.clone(),
            Some("Attribute .b cannot be specified"),
        );
        check(
            "also_requires",
            &AlsoRequires(vec!["c".into()]),
            Value::string("1"),
            both.clone(),
            Some("Attribute .c must be specified"),
        );
        check(
            "exactly_one_too_many",
            &OneOfAttributes {
                names: vec!["a".into(), "b".into()],
                exactly: true,
            },
            Value::string("1"),
            both,
            Some("Exactly one"),
        );
        check(
            "at_least_one_none",
            &OneOfAttributes {
                names: vec!["a".into(), "b".into()],
                exactly: false,
            },
            Value::null(Type::String),
            cfg(&[
                ("a", Value::null(Type::String)),
                ("b", Value::null(Type::String)),
            ]),
            Some("At least one"),
        );
    }
}
