//! Sensitive marks and the paths that record them. A value carries its
//! marks on its nodes; state and plan files record them as a list of
//! paths. [`sensitive_paths`] lists them and [`mark_paths`] puts them back
//! (the round trip keeps them, as the property test checks).

use crate::{Kind, Path, Step, Type, Value};
use std::collections::BTreeMap;

/// Paths of every sensitive-marked node in `v`.
pub fn sensitive_paths(v: &Value) -> Vec<Path> {
    let mut out = Vec::new();
    // Most values carry no mark: one walk without building paths.
    if !v.has_sensitive() {
        return out;
    }
    collect(v, &mut Path::root(), &mut out);
    out
}

fn collect(v: &Value, path: &mut Path, out: &mut Vec<Path>) {
    if v.is_sensitive() {
        out.push(path.clone());
        return;
    }
    match v.kind() {
        Kind::Seq(es) => {
            for (i, e) in es.iter().enumerate() {
                path.push(Step::Index(i as i64));
                collect(e, path, out);
                path.pop();
            }
        }
        Kind::Map(m) => {
            let object = v.ty().object_type().is_some();
            for (k, e) in m.iter() {
                path.push(if object {
                    Step::Attr(k.clone())
                } else {
                    Step::Key(k.clone())
                });
                collect(e, path, out);
                path.pop();
            }
        }
        Kind::Set(es) if es.iter().any(Value::has_sensitive) => {
            out.push(path.clone());
        }
        _ => {}
    }
}

/// `v` with the nodes at `paths` marked sensitive (paths that do not exist
/// are ignored).
pub fn mark_paths(v: &Value, paths: &[Path]) -> Value {
    if paths.is_empty() {
        return v.clone();
    }
    if paths.iter().any(Path::is_root) {
        return v.clone().mark_sensitive();
    }
    let mut children: BTreeMap<String, Vec<Path>> = BTreeMap::new();
    let mut index_children: BTreeMap<i64, Vec<Path>> = BTreeMap::new();
    for p in paths {
        let (first, rest) = p.0.split_first().expect("non-root path");
        let rest = Path(rest.to_vec());
        match first {
            Step::Attr(a) | Step::Key(a) => children.entry(a.clone()).or_default().push(rest),
            Step::Index(i) => index_children.entry(*i).or_default().push(rest),
        }
    }
    match v.kind() {
        Kind::Map(m) => {
            let mut out = m.clone();
            for (k, ps) in children {
                if let Some(x) = out.get(&k) {
                    let marked = mark_paths(x, &ps);
                    out.insert(k, marked);
                }
            }
            let rebuilt = match v.ty() {
                Type::Map(e) => Value::map_of((**e).clone(), out),
                _ => Value::object_typed_of(v.ty(), out),
            };
            rebuilt.with_sensitive(v.is_sensitive())
        }
        Kind::Seq(es) => {
            let out: Vec<Value> = es
                .iter()
                .enumerate()
                .map(|(i, e)| match index_children.get(&(i as i64)) {
                    Some(ps) => mark_paths(e, ps),
                    None => e.clone(),
                })
                .collect();
            let rebuilt = match v.ty() {
                Type::List(e) => Value::list((**e).clone(), out),
                _ => Value::tuple(out),
            };
            rebuilt.with_sensitive(v.is_sensitive())
        }
        _ => v.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn leaf() -> impl Strategy<Value = Value> {
        prop_oneof![
            any::<String>().prop_map(|s| Value::string(s.as_str())),
            any::<i64>().prop_map(Value::number),
            any::<bool>().prop_map(Value::bool)
        ]
    }

    /// Values with sensitive marks anywhere (objects, tuples and maps of
    /// strings), as configurations produce them.
    fn marked() -> impl Strategy<Value = Value> {
        let node = leaf().prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::btree_map("[a-z]{1,3}", inner.clone(), 0..4)
                    .prop_map(Value::object),
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::tuple),
                prop::collection::btree_map("[a-z]{1,3}", any::<String>(), 0..4).prop_map(|m| {
                    Value::map(
                        Type::String,
                        m.into_iter()
                            .map(|(k, v)| (k, Value::string(v.as_str())))
                            .collect(),
                    )
                }),
            ]
        });
        (node, any::<u64>()).prop_map(|(v, seed)| sprinkle(&v, seed))
    }

    /// Marks some nodes sensitive, chosen by the bits of `seed`.
    fn sprinkle(v: &Value, seed: u64) -> Value {
        let mut n = seed;
        fn go(v: &Value, n: &mut u64) -> Value {
            let bit = *n & 1 == 1;
            *n = n.rotate_right(1) ^ 0x9e37_79b9_7f4a_7c15;
            let inner = match v.kind() {
                Kind::Seq(_) | Kind::Map(_) => {
                    let kids: Vec<(Option<String>, Value)> = match v.kind() {
                        Kind::Seq(es) => es.iter().map(|e| (None, go(e, n))).collect(),
                        Kind::Map(m) => {
                            m.iter().map(|(k, e)| (Some(k.clone()), go(e, n))).collect()
                        }
                        _ => unreachable!(),
                    };
                    match v.ty() {
                        Type::Map(e) => Value::map(
                            (**e).clone(),
                            kids.into_iter()
                                .map(|(k, x)| (k.unwrap_or_default(), x))
                                .collect(),
                        ),
                        Type::Object(_) => Value::object(
                            kids.into_iter()
                                .map(|(k, x)| (k.unwrap_or_default(), x))
                                .collect(),
                        ),
                        _ => Value::tuple(kids.into_iter().map(|(_, x)| x).collect()),
                    }
                }
                _ => v.clone(),
            };
            if bit && (*n).is_multiple_of(3) {
                inner.mark_sensitive()
            } else {
                inner
            }
        }
        go(v, &mut n)
    }

    proptest! {
        #[test]
        fn marks_survive_the_trip_through_state_paths(v in marked()) {
            let paths = sensitive_paths(&v);
            let back = mark_paths(&v.unmark_deep(), &paths);
            prop_assert_eq!(sensitive_paths(&back), paths);
            prop_assert!(back.unmark_deep() == v.unmark_deep());
        }
    }

    #[test]
    fn named_paths() {
        let v = Value::object_from([
            ("a", Value::string("x").mark_sensitive()),
            (
                "b",
                Value::tuple(vec![Value::number(1), Value::number(2).mark_sensitive()]),
            ),
        ]);
        let got: Vec<String> = sensitive_paths(&v)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(got, [".a", ".b[1]"]);
    }
}
