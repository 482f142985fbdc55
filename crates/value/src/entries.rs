//! The entries of a known map and the attributes of a known object: one
//! shared, immutable slice of `(key, value)` pairs sorted by key.
//!
//! A `BTreeMap` held them before. Its smallest node has room for eleven
//! entries, so a typical resource object of four attributes took about a
//! kilobyte in two allocations plus one per key; the slice takes what its
//! entries take, in one allocation plus the keys. Lookups are a binary
//! search, as inside a B-tree node. The API follows `BTreeMap`'s (`get`,
//! `iter`, `keys`, `values`, `insert`, `remove`), so code reading entries
//! reads them the same way; changing an entry copies the slice first when
//! another value shares it.

use crate::Value;
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

/// See the module documentation. Cloning shares the entries.
#[derive(Clone)]
pub struct Entries(Arc<[(String, Value)]>);

impl Default for Entries {
    fn default() -> Entries {
        Entries::new()
    }
}

impl Entries {
    /// No entries: one empty slice shared by every caller, so a default
    /// (`unwrap_or_default`, an `&Entries::new()` stand-in) allocates
    /// nothing.
    pub fn new() -> Entries {
        static EMPTY: OnceLock<Arc<[(String, Value)]>> = OnceLock::new();
        Entries(EMPTY.get_or_init(|| Arc::from(Vec::new())).clone())
    }

    /// Entries from pairs already sorted by key, each key once.
    pub(crate) fn from_sorted(pairs: Vec<(String, Value)>) -> Entries {
        debug_assert!(pairs.windows(2).all(|w| w[0].0 < w[1].0));
        Entries(Arc::from(pairs))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn find(&self, key: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|(k, _)| k.as_str().cmp(key))
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.find(key).ok().map(|i| &self.0[i].1)
    }

    /// The stored key and value of `key`.
    pub fn get_key_value(&self, key: &str) -> Option<(&String, &Value)> {
        self.find(key).ok().map(|i| {
            let (k, v) = &self.0[i];
            (k, v)
        })
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.find(key).is_ok()
    }

    /// The entries in key order.
    pub fn iter(&self) -> Iter<'_> {
        Iter(self.0.iter())
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &String> + ExactSizeIterator + Clone {
        self.0.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &Value> + ExactSizeIterator + Clone {
        self.0.iter().map(|(_, v)| v)
    }

    /// The first entry in key order.
    pub fn first_key_value(&self) -> Option<(&String, &Value)> {
        self.0.first().map(|(k, v)| (k, v))
    }

    /// The last entry in key order.
    pub fn last_key_value(&self) -> Option<(&String, &Value)> {
        self.0.last().map(|(k, v)| (k, v))
    }

    /// The value of `key`, to change in place (the entries are copied
    /// first if another value shares them).
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        let i = self.find(key).ok()?;
        Some(&mut Arc::make_mut(&mut self.0)[i].1)
    }

    /// Every entry, its value to change in place (copied first if shared).
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&String, &mut Value)> {
        Arc::make_mut(&mut self.0).iter_mut().map(|(k, v)| (&*k, v))
    }

    /// Every value, to change in place (copied first if shared).
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut Value> {
        Arc::make_mut(&mut self.0).iter_mut().map(|(_, v)| v)
    }

    /// Sets `key` to `value`, returning the value it replaces.
    pub fn insert(&mut self, key: String, value: Value) -> Option<Value> {
        match self.find(&key) {
            Ok(i) => Some(std::mem::replace(
                &mut Arc::make_mut(&mut self.0)[i].1,
                value,
            )),
            Err(i) => {
                let mut pairs = self.0.to_vec();
                pairs.insert(i, (key, value));
                self.0 = Arc::from(pairs);
                None
            }
        }
    }

    /// Removes `key`, returning its value.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        let i = self.find(key).ok()?;
        let mut pairs = self.0.to_vec();
        let (_, v) = pairs.remove(i);
        self.0 = Arc::from(pairs);
        Some(v)
    }

    /// Whether both share the same entries (then they are equal).
    pub fn ptr_eq(a: &Entries, b: &Entries) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }

    /// The entries as a map, to build a changed copy from.
    pub fn to_map(&self) -> BTreeMap<String, Value> {
        self.0.iter().cloned().collect()
    }
}

/// The entries of an [`Entries`] in key order, as `BTreeMap::iter` gives
/// them.
#[derive(Clone)]
pub struct Iter<'a>(std::slice::Iter<'a, (String, Value)>);

impl<'a> Iterator for Iter<'a> {
    type Item = (&'a String, &'a Value);

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(k, v)| (k, v))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.0.next_back().map(|(k, v)| (k, v))
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl<'a> IntoIterator for &'a Entries {
    type Item = (&'a String, &'a Value);
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

/// The entries, owned: each a copy (keys and values are shared slices'
/// parts, as cheap to copy as a value is).
impl IntoIterator for Entries {
    type Item = (String, Value);
    type IntoIter = IntoIter;

    fn into_iter(self) -> IntoIter {
        IntoIter {
            entries: self,
            next: 0,
        }
    }
}

/// See `Entries::into_iter`.
pub struct IntoIter {
    entries: Entries,
    next: usize,
}

impl Iterator for IntoIter {
    type Item = (String, Value);

    fn next(&mut self) -> Option<(String, Value)> {
        let pair = self.entries.0.get(self.next)?.clone();
        self.next += 1;
        Some(pair)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.entries.len() - self.next;
        (left, Some(left))
    }
}

impl ExactSizeIterator for IntoIter {}

impl From<BTreeMap<String, Value>> for Entries {
    fn from(m: BTreeMap<String, Value>) -> Entries {
        Entries::from_sorted(m.into_iter().collect())
    }
}

/// Entries from pairs in any order; of two pairs with one key, the later
/// wins (as inserting them into a map in turn would).
impl FromIterator<(String, Value)> for Entries {
    fn from_iter<I: IntoIterator<Item = (String, Value)>>(it: I) -> Entries {
        let mut pairs: Vec<(String, Value)> = it.into_iter().collect();
        if !pairs.windows(2).all(|w| w[0].0 < w[1].0) {
            // Stable: equal keys stay in the order they came.
            pairs.sort_by(|a, b| a.0.cmp(&b.0));
            pairs.dedup_by(|later, kept| {
                let same = later.0 == kept.0;
                if same {
                    std::mem::swap(later, kept);
                }
                same
            });
        }
        Entries::from_sorted(pairs)
    }
}

/// Adds the pairs, each replacing the entry of its key.
impl Extend<(String, Value)> for Entries {
    fn extend<I: IntoIterator<Item = (String, Value)>>(&mut self, it: I) {
        let pairs = self.0.iter().cloned().chain(it);
        *self = pairs.collect();
    }
}

impl PartialEq for Entries {
    fn eq(&self, other: &Entries) -> bool {
        Entries::ptr_eq(self, other) || self.0[..] == other.0[..]
    }
}

impl Eq for Entries {}

impl std::fmt::Debug for Entries {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl std::ops::Index<&str> for Entries {
    type Output = Value;

    fn index(&self, key: &str) -> &Value {
        self.get(key).unwrap_or_else(|| panic!("no entry {key:?}"))
    }
}

/// The value named `name` from `pairs`, a run of `(name, value)` sorted by
/// name (an object's entries, an object type's attributes) read for names
/// asked in ascending order: the smaller names before it are passed and
/// its pair taken, so reading every name is one pass rather than one
/// search each. `None` when the next name is larger: `name` is absent, or
/// was asked out of order (the caller then searches).
pub fn take_named<'a, T>(
    pairs: &mut std::iter::Peekable<impl Iterator<Item = (&'a String, T)>>,
    name: &str,
) -> Option<T> {
    // The usual case, the very next name, with one comparison.
    if let Some((_, v)) = pairs.next_if(|(k, _)| k.as_str() == name) {
        return Some(v);
    }
    while pairs.next_if(|(k, _)| k.as_str() < name).is_some() {}
    pairs.next_if(|(k, _)| k.as_str() == name).map(|(_, v)| v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_taken_in_order() {
        let check = |case: &str, asked: &[&str], want: &[Option<&str>]| {
            let base: Entries = pairs(&[("a", "1"), ("b", "2"), ("d", "4")]).collect();
            let mut run = base.iter().peekable();
            let got: Vec<Option<Value>> = asked
                .iter()
                .map(|n| take_named(&mut run, n).cloned())
                .collect();
            let want: Vec<Option<Value>> = want.iter().map(|w| w.map(s)).collect();
            assert_eq!(got, want, "{case}");
        };
        check(
            "every name",
            &["a", "b", "d"],
            &[Some("1"), Some("2"), Some("4")],
        );
        check("names skipped", &["a", "d"], &[Some("1"), Some("4")]);
        check(
            "an absent name",
            &["a", "c", "d"],
            &[Some("1"), None, Some("4")],
        );
        check("out of order", &["b", "a"], &[Some("2"), None]);
        check("one name twice", &["b", "b"], &[Some("2"), None]);
        check("past the end", &["z", "a"], &[None, None]);
    }

    fn s(x: &str) -> Value {
        Value::string(x)
    }

    /// The pairs as entries are made of, in the order given.
    fn pairs<'a>(xs: &'a [(&'a str, &'a str)]) -> impl Iterator<Item = (String, Value)> + 'a {
        xs.iter().map(|(k, v)| (k.to_string(), s(v)))
    }

    fn check(name: &str, got: &Entries, want: &[(&str, &str)]) {
        let got: Vec<(String, Value)> = got.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        assert_eq!(got, pairs(want).collect::<Vec<_>>(), "{name}");
    }

    /// Entries stay sorted with each key once, however they are built and
    /// changed, and a change never shows through a copy that shared them.
    #[test]
    fn entries_stay_sorted_and_unshared() {
        let base: Entries = pairs(&[("b", "2"), ("a", "1"), ("c", "3")]).collect();
        type Case = (
            &'static str,
            Box<dyn Fn(&mut Entries)>,
            Vec<(&'static str, &'static str)>,
        );
        let cases: Vec<Case> = vec![
            (
                "as_built",
                Box::new(|_| {}),
                vec![("a", "1"), ("b", "2"), ("c", "3")],
            ),
            (
                "insert_new_first",
                Box::new(|e| assert!(e.insert("0".into(), s("0")).is_none())),
                vec![("0", "0"), ("a", "1"), ("b", "2"), ("c", "3")],
            ),
            (
                "insert_new_last",
                Box::new(|e| assert!(e.insert("d".into(), s("4")).is_none())),
                vec![("a", "1"), ("b", "2"), ("c", "3"), ("d", "4")],
            ),
            (
                "insert_replaces",
                Box::new(|e| assert_eq!(e.insert("b".into(), s("x")), Some(s("2")))),
                vec![("a", "1"), ("b", "x"), ("c", "3")],
            ),
            (
                "remove_middle",
                Box::new(|e| assert_eq!(e.remove("b"), Some(s("2")))),
                vec![("a", "1"), ("c", "3")],
            ),
            (
                "remove_missing",
                Box::new(|e| assert_eq!(e.remove("z"), None)),
                vec![("a", "1"), ("b", "2"), ("c", "3")],
            ),
            (
                "get_mut",
                Box::new(|e| *e.get_mut("c").unwrap() = s("y")),
                vec![("a", "1"), ("b", "2"), ("c", "y")],
            ),
            (
                "values_mut",
                Box::new(|e| e.values_mut().for_each(|v| *v = s("v"))),
                vec![("a", "v"), ("b", "v"), ("c", "v")],
            ),
        ];
        for (name, change, want) in cases {
            let mut e = base.clone();
            change(&mut e);
            check(name, &e, &want);
            check(name, &base, &[("a", "1"), ("b", "2"), ("c", "3")]);
            for (k, v) in &want {
                assert_eq!(e.get(k), Some(&s(v)), "{name}: get {k}");
            }
            assert_eq!(e.get("zz"), None, "{name}");
        }
    }

    /// Every empty entries is the one shared slice: defaults allocate
    /// nothing.
    #[test]
    fn empty_entries_are_shared() {
        let (a, b) = (Entries::new(), Entries::default());
        assert!(Entries::ptr_eq(&a, &b));
        assert!(a.is_empty() && a.get("k").is_none());
        let mut c = b.clone();
        c.insert("k".into(), s("v"));
        assert!(!Entries::ptr_eq(&c, &a) && Entries::new().is_empty());
    }

    /// Of pairs with one key, the later wins, as in a map.
    #[test]
    fn later_duplicate_wins() {
        let given = [("k", "1"), ("a", "0"), ("k", "2")];
        let e: Entries = pairs(&given).collect();
        check("duplicates", &e, &[("a", "0"), ("k", "2")]);
        let m: BTreeMap<String, Value> = pairs(&given).collect();
        assert_eq!(Entries::from(m.clone()).to_map(), m);
    }
}
