//! The dynamic value: known, null (typed) or unknown (typed, with
//! refinements), with a sensitive mark on any node.
//!
//! A [`Value`] is a type, a [`Kind`] and a mark. Composite kinds hold their
//! parts behind `Arc`, so cloning is a few reference-count bumps and
//! comparing two clones short-cuts on pointer identity. Values are immutable;
//! "changing" one builds a new node and shares every untouched child.
//!
//! Invariants the constructors keep:
//! * a known value's type never has `dynamic` where the value is known: an
//!   object built against a type with `dynamic` attributes takes its type
//!   from its attribute values, as cty does;
//! * set elements are deduplicated (wholly known ones: elements with
//!   unknowns inside stay distinct) and kept in one canonical order
//!   ([`Value::total_cmp`]), so equal sets have equal element slices.

use crate::{Entries, Number, Refinements, Type};
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::Arc;

/// What a value is, independent of its type.
#[derive(Clone, Debug)]
pub enum Kind {
    Null,
    /// Not yet known; `None` means no refinements.
    Unknown(Option<Arc<Refinements>>),
    String(Arc<str>),
    Number(Arc<Number>),
    Bool(bool),
    /// Elements of a list or tuple, in order.
    Seq(Arc<[Value]>),
    /// Elements of a set, deduplicated, in canonical order.
    Set(Arc<[Value]>),
    /// Entries of a map or attributes of an object, by key.
    Map(Entries),
}

/// The marks a value carries: sensitive, ephemeral. Functions and
/// operators carry their operands' marks over to their results.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Marks(u8);

impl Marks {
    pub const NONE: Marks = Marks(0);
    pub const SENSITIVE: Marks = Marks(1);
    pub const EPHEMERAL: Marks = Marks(2);

    pub fn contains(self, m: Marks) -> bool {
        self.0 & m.0 == m.0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub fn without(self, m: Marks) -> Marks {
        Marks(self.0 & !m.0)
    }
}

impl std::ops::BitOr for Marks {
    type Output = Marks;
    fn bitor(self, o: Marks) -> Marks {
        Marks(self.0 | o.0)
    }
}

impl std::ops::BitOrAssign for Marks {
    fn bitor_assign(&mut self, o: Marks) {
        self.0 |= o.0;
    }
}

/// A value of the terrane value model.
#[derive(Clone)]
pub struct Value {
    ty: Type,
    kind: Kind,
    marks: Marks,
}

impl Value {
    // ---- constructors -------------------------------------------------

    pub fn null(ty: Type) -> Value {
        Value {
            ty,
            kind: Kind::Null,
            marks: Marks::NONE,
        }
    }

    pub fn unknown(ty: Type) -> Value {
        Value {
            ty,
            kind: Kind::Unknown(None),
            marks: Marks::NONE,
        }
    }

    /// An unknown with refinements; empty refinements give a plain unknown.
    /// Refinements that make no sense for the type are dropped (a prefix on a
    /// number, bounds on a string), and `dynamic` keeps only not-null.
    pub fn unknown_refined(ty: Type, r: Refinements) -> Value {
        let r = match &ty {
            Type::String => Refinements {
                number_lower: None,
                number_upper: None,
                length_min: None,
                length_max: None,
                ..r
            },
            Type::Number => Refinements {
                string_prefix: None,
                length_min: None,
                length_max: None,
                ..r
            },
            Type::List(_) | Type::Set(_) | Type::Map(_) => Refinements {
                string_prefix: None,
                number_lower: None,
                number_upper: None,
                ..r
            },
            _ => Refinements {
                not_null: r.not_null,
                ..Default::default()
            },
        };
        let kind = if r.is_empty() {
            Kind::Unknown(None)
        } else {
            Kind::Unknown(Some(Arc::new(r)))
        };
        Value {
            ty,
            kind,
            marks: Marks::NONE,
        }
    }

    pub fn string(s: impl Into<Arc<str>>) -> Value {
        Value {
            ty: Type::String,
            kind: Kind::String(s.into()),
            marks: Marks::NONE,
        }
    }

    pub fn number(n: impl Into<Number>) -> Value {
        Value {
            ty: Type::Number,
            kind: Kind::Number(Arc::new(n.into())),
            marks: Marks::NONE,
        }
    }

    pub fn bool(b: bool) -> Value {
        Value {
            ty: Type::Bool,
            kind: Kind::Bool(b),
            marks: Marks::NONE,
        }
    }

    /// A list. `elem` is the element type; when it is `dynamic` and there
    /// are elements, the first element's type is used.
    pub fn list(elem: Type, mut elems: Vec<Value>) -> Value {
        let elem = concrete_elem(elem, &elems);
        retype_untyped(&elem, &mut elems);
        Value {
            ty: Type::list(elem),
            kind: Kind::Seq(elems.into()),
            marks: Marks::NONE,
        }
    }

    /// A set: elements are put in canonical order and duplicates merged
    /// (a merged element is sensitive if any of its duplicates was). An
    /// element with an unknown anywhere inside is never merged: two
    /// unknowns are not known to be equal, so such elements stay distinct
    /// (as in Terraform, a planned set keeps its element count).
    pub fn set(elem: Type, mut elems: Vec<Value>) -> Value {
        let elem = concrete_elem(elem, &elems);
        retype_untyped(&elem, &mut elems);
        Value {
            ty: Type::set(elem),
            kind: Kind::Set(canonical_set(elems).into()),
            marks: Marks::NONE,
        }
    }

    pub fn map(elem: Type, entries: BTreeMap<String, Value>) -> Value {
        Value::map_of(elem, entries.into())
    }

    /// [`Value::map`] of entries already gathered.
    pub fn map_of(elem: Type, mut entries: Entries) -> Value {
        let elem = if elem.has_dynamic() {
            entries
                .values()
                .map(|e| e.ty())
                .find(|t| !t.is_dynamic())
                .cloned()
                .unwrap_or(elem)
        } else {
            elem
        };
        if !elem.is_dynamic() {
            for e in entries.values_mut() {
                if e.ty.is_dynamic()
                    && !matches!(e.kind, Kind::Seq(_) | Kind::Set(_) | Kind::Map(_))
                {
                    e.ty = elem.clone();
                }
            }
        }
        Value {
            ty: Type::map(elem),
            kind: Kind::Map(entries),
            marks: Marks::NONE,
        }
    }

    /// An object whose type is taken from its attribute values.
    pub fn object(attrs: BTreeMap<String, Value>) -> Value {
        Value::object_of(attrs.into())
    }

    /// [`Value::object`] of attributes already gathered.
    pub fn object_of(attrs: Entries) -> Value {
        Value {
            ty: shapes::object_type(&attrs),
            kind: Kind::Map(attrs),
            marks: Marks::NONE,
        }
    }

    /// An object of a known type: the type is reused as is unless it has
    /// `dynamic` somewhere, in which case it is derived from the values.
    /// The caller guarantees that `attrs` has exactly the type's attributes.
    pub fn object_typed(ty: &Type, attrs: BTreeMap<String, Value>) -> Value {
        Value::object_typed_of(ty, attrs.into())
    }

    /// [`Value::object_typed`] of attributes already gathered.
    pub fn object_typed_of(ty: &Type, attrs: Entries) -> Value {
        if ty.has_dynamic() || ty.has_optional_markers() || !matches!(ty, Type::Object(_)) {
            return Value::object_of(attrs);
        }
        Value {
            ty: ty.clone(),
            kind: Kind::Map(attrs),
            marks: Marks::NONE,
        }
    }

    /// [`Value::object_typed_of`] for a type the caller knows to be an
    /// object type without `dynamic` or optional markers anywhere.
    pub(crate) fn object_typed_plain(ty: &Type, attrs: Entries) -> Value {
        debug_assert!(matches!(ty, Type::Object(_)));
        debug_assert!(!ty.has_dynamic() && !ty.has_optional_markers());
        Value {
            ty: ty.clone(),
            kind: Kind::Map(attrs),
            marks: Marks::NONE,
        }
    }

    /// Convenience: an object from `(name, value)` pairs.
    pub fn object_from<I, S>(attrs: I) -> Value
    where
        I: IntoIterator<Item = (S, Value)>,
        S: Into<String>,
    {
        Value::object(attrs.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }

    pub fn tuple(elems: Vec<Value>) -> Value {
        let ty = Type::tuple(elems.iter().map(|v| v.ty.clone()).collect());
        Value {
            ty,
            kind: Kind::Seq(elems.into()),
            marks: Marks::NONE,
        }
    }

    /// Internal: a value with the given parts, no checks. Used by decoders
    /// and conversions that already guarantee the invariants.
    #[allow(dead_code)]
    pub(crate) fn from_parts(ty: Type, kind: Kind) -> Value {
        Value {
            ty,
            kind,
            marks: Marks::NONE,
        }
    }

    // ---- inspection ---------------------------------------------------

    pub fn ty(&self) -> &Type {
        &self.ty
    }

    pub fn kind(&self) -> &Kind {
        &self.kind
    }

    pub fn is_null(&self) -> bool {
        matches!(self.kind, Kind::Null)
    }

    /// Known at the top level (null counts as known).
    pub fn is_known(&self) -> bool {
        !matches!(self.kind, Kind::Unknown(_))
    }

    /// Known everywhere inside.
    pub fn is_wholly_known(&self) -> bool {
        match &self.kind {
            Kind::Unknown(_) => false,
            Kind::Seq(es) | Kind::Set(es) => es.iter().all(Value::is_wholly_known),
            Kind::Map(m) => m.values().all(Value::is_wholly_known),
            _ => true,
        }
    }

    pub fn refinements(&self) -> Option<&Refinements> {
        match &self.kind {
            Kind::Unknown(Some(r)) => Some(r),
            _ => None,
        }
    }

    /// An unknown that is refined as definitely not null.
    pub fn is_known_not_null(&self) -> bool {
        match &self.kind {
            Kind::Null => false,
            Kind::Unknown(r) => r.as_ref().is_some_and(|r| r.not_null),
            _ => true,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            Kind::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_number(&self) -> Option<&Number> {
        match &self.kind {
            Kind::Number(n) => Some(n),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match &self.kind {
            Kind::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// Elements of a known list, tuple or set.
    pub fn elements(&self) -> Option<&[Value]> {
        match &self.kind {
            Kind::Seq(es) | Kind::Set(es) => Some(es),
            _ => None,
        }
    }

    /// Entries of a known map or attributes of a known object.
    pub fn entries(&self) -> Option<&Entries> {
        match &self.kind {
            Kind::Map(m) => Some(m),
            _ => None,
        }
    }

    /// Sets attribute `name` to `value`: the object with it, unmarked at
    /// the top, as [`Value::object`] would make it from the attributes. On
    /// a known object this works in place: the attributes are copied only
    /// when another value shares them, and the type changes only in the
    /// one attribute, instead of being rebuilt from every attribute's
    /// value. Anything else (null, unknown, a map) becomes the object of
    /// its entries and `name`.
    pub fn set_attr(&mut self, name: &str, value: Value) {
        if let (Type::Object(ot), Kind::Map(attrs)) = (&mut self.ty, &mut self.kind) {
            if ot.optional().is_empty() {
                let retyped = ot.attr(name) != Some(&value.ty);
                match attrs.get_mut(name) {
                    Some(v) => *v = value,
                    None => {
                        attrs.insert(name.to_string(), value);
                    }
                }
                if retyped {
                    // A recent type of the new shape, else a new one.
                    self.ty = shapes::object_type(attrs);
                }
                self.marks = Marks::NONE;
                return;
            }
        }
        let mut m = self.entries().cloned().unwrap_or_default();
        m.insert(name.to_string(), value);
        *self = Value::object_of(m);
    }

    /// Attribute `name` of a known object (or entry of a known map).
    pub fn get_attr(&self, name: &str) -> Option<&Value> {
        self.entries().and_then(|m| m.get(name))
    }

    /// Number of elements or entries of a known collection or structure.
    pub fn length(&self) -> Option<usize> {
        match &self.kind {
            Kind::Seq(es) | Kind::Set(es) => Some(es.len()),
            Kind::Map(m) => Some(m.len()),
            _ => None,
        }
    }

    // ---- sensitive marks ---------------------------------------------

    pub fn is_sensitive(&self) -> bool {
        self.marks.contains(Marks::SENSITIVE)
    }

    /// This value with the sensitive mark set.
    pub fn mark_sensitive(mut self) -> Value {
        self.marks |= Marks::SENSITIVE;
        self
    }

    /// This value with the sensitive mark set to `sensitive` (its other
    /// marks, and the marks inside it, kept).
    pub fn with_sensitive(mut self, sensitive: bool) -> Value {
        self.marks = if sensitive {
            self.marks | Marks::SENSITIVE
        } else {
            self.marks.without(Marks::SENSITIVE)
        };
        self
    }

    /// Whether this value or anything inside it is sensitive.
    pub fn has_sensitive(&self) -> bool {
        self.deep_marks().contains(Marks::SENSITIVE)
    }

    /// The marks on this value itself (not those inside it).
    pub fn marks(&self) -> Marks {
        self.marks
    }

    /// This value with `marks` added to its own.
    pub fn with_marks(mut self, marks: Marks) -> Value {
        self.marks |= marks;
        self
    }

    /// The marks on this value and on everything inside it.
    pub fn deep_marks(&self) -> Marks {
        let inner = match &self.kind {
            Kind::Seq(es) | Kind::Set(es) => es.iter().fold(Marks::NONE, |m, e| m | e.deep_marks()),
            Kind::Map(m) => m.values().fold(Marks::NONE, |acc, e| acc | e.deep_marks()),
            _ => Marks::NONE,
        };
        self.marks | inner
    }

    /// Whether this value itself is ephemeral (Terraform 1.10: it may not
    /// reach state or a plan).
    pub fn is_ephemeral(&self) -> bool {
        self.marks.contains(Marks::EPHEMERAL)
    }

    /// This value with the ephemeral mark set.
    pub fn mark_ephemeral(self) -> Value {
        self.with_marks(Marks::EPHEMERAL)
    }

    /// Whether this value or anything inside it is ephemeral.
    pub fn has_ephemeral(&self) -> bool {
        self.deep_marks().contains(Marks::EPHEMERAL)
    }

    /// `ephemeralasnull`: every ephemeral part (this value, or values
    /// inside it, however deep) replaced by a null of its type; other
    /// marks kept.
    pub fn ephemeral_as_null(&self) -> Value {
        if self.is_ephemeral() {
            let mut null = Value::null(self.ty.clone());
            null.marks = self.marks.without(Marks::EPHEMERAL);
            return null;
        }
        if !self.has_ephemeral() {
            return self.clone();
        }
        self.map_children(Value::ephemeral_as_null)
    }

    /// The value with every mark removed, deeply.
    pub fn unmark_deep(&self) -> Value {
        if self.deep_marks() == Marks::NONE {
            return self.clone();
        }
        let mut out = self.map_children(|v| v.unmark_deep());
        out.marks = Marks::NONE;
        out
    }

    /// Rebuilds a composite value with each child replaced by `f(child)`;
    /// the type is kept (children must keep their types). Sets are
    /// re-canonicalized.
    pub fn map_children(&self, mut f: impl FnMut(&Value) -> Value) -> Value {
        let kind = match &self.kind {
            Kind::Seq(es) => Kind::Seq(es.iter().map(&mut f).collect::<Vec<_>>().into()),
            Kind::Set(es) => Kind::Set(canonical_set(es.iter().map(&mut f).collect()).into()),
            Kind::Map(m) => Kind::Map(m.iter().map(|(k, v)| (k.clone(), f(v))).collect()),
            other => other.clone(),
        };
        Value {
            ty: self.ty.clone(),
            kind,
            marks: self.marks,
        }
    }

    /// The same value with refinements removed everywhere.
    pub fn strip_refinements(&self) -> Value {
        match &self.kind {
            Kind::Unknown(Some(_)) => Value {
                ty: self.ty.clone(),
                kind: Kind::Unknown(None),
                marks: self.marks,
            },
            Kind::Seq(_) | Kind::Set(_) | Kind::Map(_) if !self.is_wholly_known() => {
                self.map_children(Value::strip_refinements)
            }
            _ => self.clone(),
        }
    }

    // ---- equality and order --------------------------------------------

    /// Equality that ignores refinements and sensitive marks: the
    /// comparison the plan-validity rules use. Two unknowns of the same type
    /// are equal; nulls are equal when their types are (a `dynamic` null
    /// equals any null).
    pub fn eq_ignoring_refinements(&self, other: &Value) -> bool {
        if let (Kind::Seq(a), Kind::Seq(b)) | (Kind::Set(a), Kind::Set(b)) =
            (&self.kind, &other.kind)
        {
            if Arc::ptr_eq(a, b) {
                return self.ty == other.ty;
            }
        }
        match (&self.kind, &other.kind) {
            (Kind::Null, Kind::Null) => {
                self.ty == other.ty || self.ty.is_dynamic() || other.ty.is_dynamic()
            }
            (Kind::Unknown(_), Kind::Unknown(_)) => {
                self.ty == other.ty || self.ty.is_dynamic() || other.ty.is_dynamic()
            }
            (Kind::String(a), Kind::String(b)) => a == b,
            (Kind::Number(a), Kind::Number(b)) => a == b,
            (Kind::Bool(a), Kind::Bool(b)) => a == b,
            (Kind::Seq(a), Kind::Seq(b)) => {
                self.same_shape(other)
                    && a.len() == b.len()
                    && a.iter()
                        .zip(b.iter())
                        .all(|(x, y)| x.eq_ignoring_refinements(y))
            }
            (Kind::Set(a), Kind::Set(b)) => {
                if !self.same_shape(other) || a.len() != b.len() {
                    return false;
                }
                if a.iter()
                    .zip(b.iter())
                    .all(|(x, y)| x.eq_ignoring_refinements(y))
                {
                    return true;
                }
                // Refinements can change the canonical order of unknowns:
                // fall back to matching each element once.
                let mut used = vec![false; b.len()];
                a.iter().all(|x| {
                    let hit = b
                        .iter()
                        .enumerate()
                        .find(|(i, y)| !used[*i] && x.eq_ignoring_refinements(y));
                    hit.map(|(i, _)| used[i] = true).is_some()
                })
            }
            (Kind::Map(a), Kind::Map(b)) => {
                Entries::ptr_eq(a, b)
                    || (self.same_shape(other)
                        && a.len() == b.len()
                        && a.iter()
                            .zip(b.iter())
                            .all(|((ka, va), (kb, vb))| ka == kb && va.eq_ignoring_refinements(vb)))
            }
            _ => false,
        }
    }

    /// Map vs object and list vs tuple are different even with equal
    /// elements; beyond that, element types are compared through elements.
    fn same_shape(&self, other: &Value) -> bool {
        std::mem::discriminant(&self.ty) == std::mem::discriminant(&other.ty)
    }

    /// A total order over values, used for canonical set order: known values
    /// first (strings by bytes, numbers ascending, false before true,
    /// collections element by element), then unknowns, then nulls. Marks are
    /// ignored; refinements and types only break ties.
    pub fn total_cmp(&self, other: &Value) -> Ordering {
        fn rank(k: &Kind) -> u8 {
            match k {
                Kind::Null => 2,
                Kind::Unknown(_) => 1,
                _ => 0,
            }
        }
        let by_rank = rank(&self.kind).cmp(&rank(&other.kind));
        if by_rank != Ordering::Equal {
            return by_rank;
        }
        let by_kind = match (&self.kind, &other.kind) {
            (Kind::String(a), Kind::String(b)) => a.as_bytes().cmp(b.as_bytes()),
            (Kind::Number(a), Kind::Number(b)) => a.cmp(b),
            (Kind::Bool(a), Kind::Bool(b)) => a.cmp(b),
            (Kind::Seq(a), Kind::Seq(b)) | (Kind::Set(a), Kind::Set(b)) => {
                let mut acc = Ordering::Equal;
                for (x, y) in a.iter().zip(b.iter()) {
                    acc = x.total_cmp(y);
                    if acc != Ordering::Equal {
                        break;
                    }
                }
                acc.then(a.len().cmp(&b.len()))
            }
            (Kind::Map(a), Kind::Map(b)) => {
                let mut acc = Ordering::Equal;
                for ((ka, va), (kb, vb)) in a.iter().zip(b.iter()) {
                    acc = ka.cmp(kb).then_with(|| va.total_cmp(vb));
                    if acc != Ordering::Equal {
                        break;
                    }
                }
                acc.then(a.len().cmp(&b.len()))
            }
            (Kind::Unknown(a), Kind::Unknown(b)) => a.as_deref().cmp(&b.as_deref()),
            _ => Ordering::Equal,
        };
        by_kind.then_with(|| self.ty.cmp(&other.ty))
    }
}

/// Raw equality: same type, same kind, same refinements, same marks.
impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        if self.marks != other.marks || self.ty != other.ty {
            return false;
        }
        match (&self.kind, &other.kind) {
            (Kind::Null, Kind::Null) => true,
            (Kind::Unknown(a), Kind::Unknown(b)) => a.as_deref() == b.as_deref(),
            (Kind::String(a), Kind::String(b)) => a == b,
            (Kind::Number(a), Kind::Number(b)) => a == b,
            (Kind::Bool(a), Kind::Bool(b)) => a == b,
            (Kind::Seq(a), Kind::Seq(b)) | (Kind::Set(a), Kind::Set(b)) => {
                Arc::ptr_eq(a, b) || a[..] == b[..]
            }
            (Kind::Map(a), Kind::Map(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for Value {}

/// The element type of a collection: `elem`, unless it has `dynamic` and
/// an element has a concrete type, which then wins (as in cty, a collection
/// of known values has a concrete element type).
fn concrete_elem(elem: Type, elems: &[Value]) -> Type {
    if !elem.has_dynamic() {
        return elem;
    }
    elems
        .iter()
        .map(|e| e.ty())
        .find(|t| !t.is_dynamic())
        .cloned()
        .unwrap_or(elem)
}

/// Gives untyped (dynamic) nulls and unknowns among `elems` the collection's
/// concrete element type.
fn retype_untyped(elem: &Type, elems: &mut [Value]) {
    if elem.is_dynamic() {
        return;
    }
    for e in elems.iter_mut() {
        if e.ty.is_dynamic() && !matches!(e.kind, Kind::Seq(_) | Kind::Set(_) | Kind::Map(_)) {
            e.ty = elem.clone();
        }
    }
}

/// Sorts set elements canonically and merges duplicates (raw-equal ignoring
/// marks); a merged element keeps the sensitive mark if any copy had it.
/// Elements that are not wholly known are kept apart even when they look
/// alike: their unknown parts may resolve to different values.
pub(crate) fn canonical_set(mut elems: Vec<Value>) -> Vec<Value> {
    elems.sort_by(set_order);
    let mut out: Vec<Value> = Vec::with_capacity(elems.len());
    for e in elems {
        match out.last_mut() {
            Some(last)
                if e.is_wholly_known()
                    && last.total_cmp(&e) == Ordering::Equal
                    && same_ignoring_marks(last, &e) =>
            {
                if !last.deep_marks().contains(e.deep_marks()) {
                    *last = e;
                }
            }
            _ => out.push(e),
        }
    }
    out
}

/// The order of set elements, as Terraform's value library (cty) iterates
/// them, so sets are written, planned and shown in Terraform's order:
/// known before unknown before null; strings, numbers and bools by value;
/// other values (objects, collections) by their set-hash text compared
/// bytewise.
fn set_order(a: &Value, b: &Value) -> Ordering {
    let primitive = |v: &Value| {
        matches!(
            v.kind,
            Kind::String(_) | Kind::Number(_) | Kind::Bool(_) | Kind::Null | Kind::Unknown(_)
        )
    };
    if primitive(a) && primitive(b) {
        return a.total_cmp(b);
    }
    let rank = |v: &Value| match v.kind {
        Kind::Null => 2,
        Kind::Unknown(_) => 1,
        _ => 0,
    };
    rank(a).cmp(&rank(b)).then_with(|| {
        let (mut x, mut y) = (String::new(), String::new());
        set_hash_text(a, &mut x);
        set_hash_text(b, &mut y);
        x.as_bytes().cmp(y.as_bytes())
    })
}

/// cty's set-hash text of a value: `?` unknown, `~` null, numbers with ten
/// significant digits, strings quoted as Go quotes them, `[e;...]` for
/// lists and sets, `{"k":v;...}` for maps, `<v;...>` for objects (by
/// attribute name) and tuples.
fn set_hash_text(v: &Value, out: &mut String) {
    match &v.kind {
        Kind::Unknown(_) => out.push('?'),
        Kind::Null => out.push('~'),
        Kind::Bool(b) => out.push(if *b { 'T' } else { 'F' }),
        Kind::Number(n) => out.push_str(&number_g10(n)),
        Kind::String(s) => go_quote(s, out),
        Kind::Seq(es) => {
            let tuple = matches!(v.ty, Type::Tuple(_));
            out.push(if tuple { '<' } else { '[' });
            for e in es.iter() {
                set_hash_text(e, out);
                out.push(';');
            }
            out.push(if tuple { '>' } else { ']' });
        }
        Kind::Set(es) => {
            out.push('[');
            for e in es.iter() {
                set_hash_text(e, out);
                out.push(';');
            }
            out.push(']');
        }
        Kind::Map(m) => {
            let object = !matches!(v.ty, Type::Map(_));
            out.push(if object { '<' } else { '{' });
            for (k, e) in m.iter() {
                if !object {
                    go_quote(k, out);
                    out.push(':');
                }
                set_hash_text(e, out);
                out.push(';');
            }
            out.push(if object { '>' } else { '}' });
        }
    }
}

/// A number as Go's `big.Float.String()` writes it (`%.10g`).
fn number_g10(n: &Number) -> String {
    if let Some(i) = n.to_i64().filter(|i| i.unsigned_abs() < 10_000_000_000) {
        return i.to_string();
    }
    let x = n.to_f64_lossy();
    if !x.is_finite() {
        return if x > 0.0 { "+Inf" } else { "-Inf" }.to_string();
    }
    // Ten significant digits, then Go's choice of %e or %f.
    let e = format!("{x:.9e}");
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let neg = mant.starts_with('-');
    let digits: String = mant.chars().filter(char::is_ascii_digit).collect();
    let digits = digits.trim_end_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    let sign = if neg { "-" } else { "" };
    if !(-4..10).contains(&exp) {
        let (first, rest) = digits.split_at(1);
        let dot = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{first}{dot}e{esign}{:02}", exp.abs());
    }
    let point = exp + 1;
    if point <= 0 {
        format!("{sign}0.{}{digits}", "0".repeat((-point) as usize))
    } else if point as usize >= digits.len() {
        format!(
            "{sign}{digits}{}",
            "0".repeat(point as usize - digits.len())
        )
    } else {
        let (int, frac) = digits.split_at(point as usize);
        format!("{sign}{int}.{frac}")
    }
}

/// `s` quoted as Go's `%q` quotes it.
fn go_quote(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn same_ignoring_marks(a: &Value, b: &Value) -> bool {
    a.unmark_deep() == b.unmark_deep()
}

/// The object types `Value::object` derived last on this thread. Objects of
/// one shape (the same attribute names and types: every instance of a
/// resource, every element of a block list) then share one type instead of
/// each building its own map of names.
mod shapes {
    use crate::ty::{ObjectType, Type};
    use crate::Entries;
    use std::cell::RefCell;
    use std::sync::Arc;

    /// Enough for the shapes one walk step builds in turn (a resource's
    /// object and its nested blocks' objects).
    const KEPT: usize = 8;

    #[derive(Default)]
    struct Recent {
        types: Vec<Arc<ObjectType>>,
        /// The slot the next new type replaces, once `types` is full.
        next: usize,
    }

    thread_local! {
        static RECENT: RefCell<Recent> = RefCell::new(Recent::default());
    }

    fn fits(t: &ObjectType, attrs: &Entries) -> bool {
        t.attrs().len() == attrs.len()
            && t.attrs()
                .iter()
                .zip(attrs)
                .all(|((tk, tt), (k, v))| tk == k && *tt == v.ty)
    }

    /// The object type of `attrs`: a recent one of the same shape, or a
    /// new one, which is then remembered.
    pub(super) fn object_type(attrs: &Entries) -> Type {
        let build = || {
            Arc::new(ObjectType::new(
                attrs
                    .iter()
                    .map(|(k, v)| (k.clone(), v.ty.clone()))
                    .collect(),
            ))
        };
        let found = RECENT.try_with(|r| {
            let mut r = r.borrow_mut();
            if let Some(t) = r.types.iter().find(|t| fits(t, attrs)) {
                return t.clone();
            }
            let t = build();
            if r.types.len() < KEPT {
                r.types.push(t.clone());
            } else {
                let slot = r.next;
                r.types[slot] = t.clone();
                r.next = (slot + 1) % KEPT;
            }
            t
        });
        // A thread being torn down has no cache left: build the type.
        Type::Object(found.unwrap_or_else(|_| build()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ObjectType;

    fn obj(a: Value) -> Value {
        Value::object_from([("a", a), ("b", Value::string("x"))])
    }

    /// `set_attr` gives what `Value::object` makes from the attributes,
    /// whatever the attribute's type does, and never changes a value that
    /// shared the attributes.
    #[test]
    fn set_attr_is_object_with_the_attribute() {
        let base = obj(Value::string("old"));
        let cases: Vec<(&str, Value, &str, Value)> = vec![
            ("same_type", base.clone(), "a", Value::string("new")),
            (
                "type_changes",
                base.clone(),
                "a",
                Value::unknown(Type::Number),
            ),
            ("new_attribute", base.clone(), "c", Value::bool(true)),
            (
                "null_attribute",
                base.clone(),
                "b",
                Value::null(Type::String),
            ),
            (
                "marked_object",
                base.clone().mark_sensitive(),
                "a",
                Value::string("s"),
            ),
            (
                "null_object",
                Value::null(base.ty().clone()),
                "a",
                Value::string("n"),
            ),
            (
                "unknown_object",
                Value::unknown(base.ty().clone()),
                "a",
                Value::string("u"),
            ),
        ];
        let check = |name: &str, got: &Value, want: &Value| {
            assert_eq!(got, want, "case {name}");
            assert_eq!(got.ty(), want.ty(), "case {name}: type");
            assert_eq!(got.marks(), want.marks(), "case {name}: marks");
        };
        for (name, v, attr, new) in cases {
            let before = v.clone();
            let mut m = v.entries().cloned().unwrap_or_default();
            m.insert(attr.to_string(), new.clone());
            let want = Value::object_of(m);
            let mut got = v.clone();
            got.set_attr(attr, new);
            check(name, &got, &want);
            check(&format!("{name}_shared_unchanged"), &v, &before);
        }
    }

    /// Objects of one shape share one type; any other shape gets a type of
    /// its own, equal to the one derived from its attributes, also once
    /// more shapes than the cache keeps have come by.
    #[test]
    fn objects_of_one_shape_share_their_type() {
        let shape = |n: usize| -> Vec<(String, Value)> {
            (0..n)
                .map(|i| (format!("a{i}"), Value::string(format!("v{i}"))))
                .collect()
        };
        let typed = |attrs: &[(String, Value)]| {
            Type::Object(Arc::new(ObjectType::new(
                attrs
                    .iter()
                    .map(|(k, v)| (k.clone(), v.ty().clone()))
                    .collect(),
            )))
        };
        let shared = |a: &Value, b: &Value| match (a.ty(), b.ty()) {
            (Type::Object(x), Type::Object(y)) => Arc::ptr_eq(x, y),
            _ => false,
        };
        let check = |name: &str, attrs: Vec<(String, Value)>, again: bool| {
            let want = typed(&attrs);
            let a = Value::object(attrs.iter().cloned().collect());
            let b = Value::object(attrs.into_iter().collect());
            assert_eq!(a.ty(), &want, "case {name}: type");
            assert_eq!(b.ty(), &want, "case {name}: second type");
            assert_eq!(shared(&a, &b), again, "case {name}: shared");
        };
        let mut retyped = shape(2);
        retyped[1].1 = Value::bool(true);
        let mut renamed = shape(2);
        renamed[1].0 = "other".into();
        let cases: Vec<(&str, Vec<(String, Value)>)> = vec![
            ("empty", shape(0)),
            ("two_strings", shape(2)),
            ("a_number_instead", retyped),
            ("another_name", renamed),
            (
                "nested",
                vec![("o".into(), Value::object(shape(3).into_iter().collect()))],
            ),
        ];
        for (name, attrs) in cases {
            check(name, attrs, true);
        }
        // Twice as many shapes as are kept, in turn: every type still right.
        for round in 0..2 {
            for n in 1..=16 {
                check(&format!("round{round}_shape{n}"), shape(n), true);
            }
        }
    }

    /// Issue 12 item 15: set construction merges only wholly known
    /// duplicates; elements equal apart from unknowns stay distinct.
    #[test]
    fn item15_set_elements_with_unknowns_stay_distinct() {
        let unk = || Value::unknown(Type::String);
        let known = |s: &str| Value::string(s);
        #[rustfmt::skip]
        let cases: Vec<(&str, Vec<Value>, usize)> = vec![
            ("equal known strings merge", vec![known("x"), known("x")], 1),
            ("two unknown strings stay two", vec![unk(), unk()], 2),
            ("unknown and known stay two", vec![unk(), known("x")], 2),
            ("objects equal apart from an unknown stay two", vec![obj(unk()), obj(unk())], 2),
            ("equal known objects merge", vec![obj(known("y")), obj(known("y"))], 1),
            ("nulls merge", vec![Value::null(Type::String), Value::null(Type::String)], 1),
            ("a sensitive duplicate merges and keeps the mark", vec![known("x"), known("x").mark_sensitive()], 1),
        ];
        for (name, elems, want) in cases {
            check(name, elems, want);
        }
    }

    #[track_caller]
    fn check(name: &str, elems: Vec<Value>, want: usize) {
        let ty = elems[0].ty().clone();
        let set = Value::set(ty, elems.clone());
        let got = set.elements().map(<[Value]>::len).unwrap_or(0);
        assert_eq!(got, want, "{name}: {set:?}");
        // The canonical order does not depend on the input order.
        let reversed = Value::set(elems[0].ty().clone(), elems.into_iter().rev().collect());
        assert_eq!(set, reversed, "{name}: order");
        if name.contains("sensitive") {
            assert!(
                set.elements().unwrap()[0].has_sensitive(),
                "{name}: mark lost"
            );
        }
    }

    /// Issue 15 item 5: set elements come in the order Terraform's value
    /// library iterates them (its set-hash text for objects and
    /// collections, by value for primitives), so states, plans and plan
    /// text list set blocks and sets of objects as Terraform does. Each
    /// case: elements given, the first attribute of each element (or the
    /// element) in the order expected, as Terraform 1.15 wrote them.
    #[test]
    fn item5_set_elements_in_terraforms_order() {
        let rule = |port: i64| {
            Value::object_from([
                ("port", Value::number(port)),
                ("protocol", Value::string("tcp")),
            ])
        };
        let first = |v: &Value| match v.get_attr("port") {
            Some(p) => p.to_string(),
            None => v.to_string(),
        };
        #[rustfmt::skip]
        let cases: Vec<(&str, Vec<Value>, Vec<&str>)> = vec![
            ("objects by hash text", vec![rule(80), rule(443)], vec!["443", "80"]),
            ("three objects", vec![rule(22), rule(80), rule(443)], vec!["22", "443", "80"]),
            ("numbers by value", vec![Value::number(80), Value::number(443)], vec!["80", "443"]),
            ("strings by value", vec![Value::string("b"), Value::string("a")], vec!["\"a\"", "\"b\""]),
        ];
        for (name, elems, want) in cases {
            let ty = elems[0].ty().clone();
            let set = Value::set(ty, elems);
            let got: Vec<String> = set.elements().unwrap_or(&[]).iter().map(first).collect();
            assert_eq!(got, want, "{name}");
        }
    }

    #[test]
    fn set_hash_numbers_as_go_writes_them() {
        for (n, want) in [
            ("80", "80"),
            ("1.5", "1.5"),
            ("0.0001", "0.0001"),
            ("0.00001", "1e-05"),
            ("12345678901", "1.23456789e+10"),
            ("-3", "-3"),
        ] {
            let got = number_g10(&Number::parse(n).unwrap());
            assert_eq!(got, want, "{n}");
        }
    }
}
