//! Attribute paths: a sequence of steps (attribute name, string key, integer
//! index) that addresses a part of a value, as the protocol's AttributePath
//! does. Rendered the way Terraform renders them: `.a[0]["k"]`.

use crate::{Kind, Value};
use std::fmt;

/// One step of a path.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Step {
    /// `.name`: an object attribute.
    Attr(String),
    /// `["key"]`: a map element.
    Key(String),
    /// `[3]`: a list or tuple element.
    Index(i64),
}

/// A path from the root of a value.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Path(pub Vec<Step>);

/// Why a path does not lead anywhere in a value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("{at}: cannot step into a null value")]
    Null { at: Path },
    #[error("{at}: value is not known")]
    Unknown { at: Path },
    #[error("{at}: no attribute {name:?}")]
    NoAttr { at: Path, name: String },
    #[error("{at}: no element {key:?}")]
    NoKey { at: Path, key: String },
    #[error("{at}: index {index} out of range")]
    NoIndex { at: Path, index: i64 },
    #[error("{at}: a {ty} value cannot be indexed this way")]
    WrongStep { at: Path, ty: String },
}

impl Path {
    pub fn root() -> Path {
        Path(Vec::new())
    }

    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    pub fn steps(&self) -> &[Step] {
        &self.0
    }

    /// A new path one attribute step deeper.
    pub fn attr(&self, name: impl Into<String>) -> Path {
        self.child(Step::Attr(name.into()))
    }

    /// A new path one map-key step deeper.
    pub fn key(&self, key: impl Into<String>) -> Path {
        self.child(Step::Key(key.into()))
    }

    /// A new path one index step deeper.
    pub fn index(&self, i: i64) -> Path {
        self.child(Step::Index(i))
    }

    pub fn child(&self, step: Step) -> Path {
        let mut steps = Vec::with_capacity(self.0.len() + 1);
        steps.extend_from_slice(&self.0);
        steps.push(step);
        Path(steps)
    }

    pub fn push(&mut self, step: Step) {
        self.0.push(step);
    }

    pub fn pop(&mut self) -> Option<Step> {
        self.0.pop()
    }

    pub fn starts_with(&self, prefix: &Path) -> bool {
        self.0.starts_with(&prefix.0)
    }

    /// Follows the path through `root`.
    pub fn apply<'v>(&self, root: &'v Value) -> Result<&'v Value, PathError> {
        let mut cur = root;
        for (i, step) in self.0.iter().enumerate() {
            let at = || Path(self.0[..i].to_vec());
            match cur.kind() {
                Kind::Null => return Err(PathError::Null { at: at() }),
                Kind::Unknown(_) => return Err(PathError::Unknown { at: at() }),
                _ => {}
            }
            cur = match (step, cur.kind()) {
                (Step::Attr(n), Kind::Map(m)) if cur.ty().object_type().is_some() => {
                    m.get(n).ok_or_else(|| PathError::NoAttr {
                        at: at(),
                        name: n.clone(),
                    })?
                }
                (Step::Key(k), Kind::Map(m)) => m.get(k).ok_or_else(|| PathError::NoKey {
                    at: at(),
                    key: k.clone(),
                })?,
                (Step::Index(ix), Kind::Seq(es)) => usize::try_from(*ix)
                    .ok()
                    .and_then(|u| es.get(u))
                    .ok_or(PathError::NoIndex {
                        at: at(),
                        index: *ix,
                    })?,
                _ => {
                    return Err(PathError::WrongStep {
                        at: at(),
                        ty: cur.ty().friendly_name(),
                    })
                }
            };
        }
        Ok(cur)
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for step in &self.0 {
            match step {
                Step::Attr(n) => write!(f, ".{n}")?,
                Step::Key(k) => write!(f, "[{}]", crate::render::quote(k))?,
                Step::Index(i) => write!(f, "[{i}]")?,
            }
        }
        Ok(())
    }
}

impl From<Vec<Step>> for Path {
    fn from(steps: Vec<Step>) -> Path {
        Path(steps)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Type;

    #[track_caller]
    fn check(path: Path, want_render: &str, want: Result<&str, &str>) {
        let root = Value::object_from([
            (
                "a",
                Value::list(Type::String, vec![Value::string("x"), Value::string("y")]),
            ),
            (
                "m",
                Value::map(Type::String, [("k".to_string(), Value::string("v"))].into()),
            ),
            ("n", Value::null(Type::String)),
        ]);
        assert_eq!(path.to_string(), want_render);
        let got = path
            .apply(&root)
            .map(|v| v.as_str().unwrap_or("?").to_string())
            .map_err(|e| e.to_string());
        assert_eq!(got, want.map(str::to_string).map_err(str::to_string));
    }

    #[test]
    fn paths() {
        check(Path::root().attr("a").index(1), ".a[1]", Ok("y"));
        check(Path::root().attr("m").key("k"), ".m[\"k\"]", Ok("v"));
        check(
            Path::root().attr("a").index(2),
            ".a[2]",
            Err(".a: index 2 out of range"),
        );
        check(Path::root().attr("zz"), ".zz", Err(": no attribute \"zz\""));
        check(
            Path::root().attr("n").attr("q"),
            ".n.q",
            Err(".n: cannot step into a null value"),
        );
        check(
            Path::root().attr("a").key("k"),
            ".a[\"k\"]",
            Err(".a: a list of string value cannot be indexed this way"),
        );
    }
}
