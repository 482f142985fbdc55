//! Validators: checks on configured values that a schema alone cannot
//! express, each reporting a diagnostic on the attribute's path. Unknown
//! and null values are left alone (they are checked again once known).
//!
//! Messages are whole sentences. [`Pattern`] and [`Check`] take the
//! sentence from the author, with `{path}` and `{value}` replaced by the
//! attribute's path as Terraform prints it (`name`, `tags["env"]`,
//! `rule[0].port`; see [`terraform_path`]) and the offending value:
//!
//! ```
//! use terrane_sdk::validate::{Pattern, Validator};
//! use terrane_sdk::{values, Path};
//!
//! let key = Pattern::new("^[a-z_]+$", "Attribute {path} must be lowercase letters and underscores, got {value}.");
//! let d = key.check(&Path::root().attr("key"), &values::string("Colour"), &values::object([]));
//! assert_eq!(d[0].detail, "Attribute key must be lowercase letters and underscores, got \"Colour\".");
//! assert_eq!(d[0].path, Some(Path::root().attr("key")));
//! ```

use crate::diag::Diagnostic;
use terrane_value::{Kind, Path, Step, Value};

/// A check of one attribute value; `config` is the whole configuration
/// object, for checks that relate attributes.
pub trait Validator: Send + Sync {
    /// The diagnostics for value `v` at `path` (none when it is valid).
    fn check(&self, path: &Path, v: &Value, config: &Value) -> Vec<Diagnostic>;
}

fn invalid(path: &Path, summary: &str, detail: String) -> Vec<Diagnostic> {
    vec![Diagnostic::error(summary, detail, None).at_path(path.clone())]
}

/// A path as Terraform and the plugin framework print it in diagnostics:
/// `key`, `tags["env"]`, `rule[0].port` (no leading dot).
///
/// ```
/// use terrane_sdk::{validate::terraform_path, Path};
/// assert_eq!(terraform_path(&Path::root().attr("tags").key("env")), "tags[\"env\"]");
/// assert_eq!(terraform_path(&Path::root().attr("rule").index(0).attr("port")), "rule[0].port");
/// ```
pub fn terraform_path(path: &Path) -> String {
    let mut out = String::new();
    for step in path.steps() {
        match step {
            Step::Attr(n) if out.is_empty() => out.push_str(n),
            Step::Attr(n) => {
                out.push('.');
                out.push_str(n);
            }
            Step::Key(k) => out.push_str(&format!("[{k:?}]")),
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

fn framework_path(path: &Path) -> String {
    terraform_path(path)
}

/// `message` with `{path}` and `{value}` filled in.
fn sentence(message: &str, path: &Path, v: &Value) -> String {
    message
        .replace("{path}", &terraform_path(path))
        .replace("{value}", &v.to_string())
}

/// A string matching a regular expression, with the author's own sentence
/// when it does not (`{path}` and `{value}` are filled in). An invalid
/// expression is reported as a provider bug when the validator runs, not a
/// panic.
pub struct Pattern {
    re: Result<regex::Regex, String>,
    message: String,
}

impl Pattern {
    /// Values must match `re`; `message` is the whole sentence shown when
    /// they do not.
    pub fn new(re: &str, message: &str) -> Pattern {
        Pattern {
            re: regex::Regex::new(re).map_err(|e| e.to_string()),
            message: message.to_string(),
        }
    }
}

impl Validator for Pattern {
    fn check(&self, path: &Path, v: &Value, _c: &Value) -> Vec<Diagnostic> {
        let re = match &self.re {
            Ok(re) => re,
            Err(e) => {
                return invalid(
                    path,
                    "Invalid Validator",
                    format!(
                        "The pattern for {} does not compile: {e}. This is a bug in the provider.",
                        terraform_path(path)
                    ),
                )
            }
        };
        match v.as_str() {
            Some(s) if settled(v) && !re.is_match(s) => invalid(
                path,
                "Invalid Attribute Value Match",
                sentence(&self.message, path, v),
            ),
            _ => vec![],
        }
    }
}

/// Any check on a known, non-null value, with the author's own sentence
/// when it fails (`{path}` and `{value}` are filled in).
///
/// ```
/// use terrane_sdk::validate::{Check, Validator};
/// use terrane_sdk::{values, Path};
/// let even = Check::new("Attribute {path} must be even, got {value}.", |v| {
///     v.as_number().and_then(|n| n.to_i64()).is_some_and(|n| n % 2 == 0)
/// });
/// let d = even.check(&Path::root().attr("n"), &values::number(3), &values::object([]));
/// assert_eq!(d[0].detail, "Attribute n must be even, got 3.");
/// ```
pub struct Check {
    message: String,
    ok: Box<dyn Fn(&Value) -> bool + Send + Sync>,
}

impl Check {
    /// Values for which `ok` is false get `message`.
    pub fn new(message: &str, ok: impl Fn(&Value) -> bool + Send + Sync + 'static) -> Check {
        Check {
            message: message.to_string(),
            ok: Box::new(ok),
        }
    }
}

impl Validator for Check {
    fn check(&self, path: &Path, v: &Value, _c: &Value) -> Vec<Diagnostic> {
        if !settled(v) || (self.ok)(v) {
            return vec![];
        }
        invalid(
            path,
            "Invalid Attribute Value",
            sentence(&self.message, path, v),
        )
    }
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
                    "Attribute {} length must be between {} and {}, got: {n}",
                    framework_path(path),
                    self.0,
                    self.1
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
                    format!(
                        "Attribute {} value must be one of: [{list}], got: {v}",
                        framework_path(path)
                    ),
                )
            }
            _ => vec![],
        }
    }
}

/// A string matching a regular expression; the message is spliced into
/// "Attribute PATH MESSAGE, got: VALUE". [`Pattern`] takes a whole
/// sentence instead.
pub struct Matches(pub regex::Regex, pub String);

impl Validator for Matches {
    fn check(&self, path: &Path, v: &Value, _c: &Value) -> Vec<Diagnostic> {
        match v.as_str() {
            Some(s) if settled(v) && !self.0.is_match(s) => invalid(
                path,
                "Invalid Attribute Value Match",
                format!("Attribute {} {}, got: {v}", framework_path(path), self.1),
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
    /// The attributes, by name.
    pub names: Vec<String>,
    /// Exactly one (not at least one) must be set.
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
