//! `yamlencode` and `yamldecode`.
use super::spec::Func;
pub(super) const NAMES: &[&str] = &["yamlencode", "yamldecode"];
pub(super) fn lookup(_name: &str) -> Option<Func> { None }
