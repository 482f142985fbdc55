//! Attribute diffs in the shape of Terraform's plan renderer.
//!
//! A diff is computed first, as a tree whose every node knows its action
//! (a parent's action folds its children's), then rendered. The rules:
//!
//! * A value typed by the schema is compared by its type: an object's
//!   attributes one by one (keys bare when identifiers), a map's entries
//!   (keys always quoted), a list element by element (paired by index when
//!   the lengths agree and it is not a reordering, else along the longest
//!   common subsequence, unchanged elements shown next to a change as
//!   context), a set by matching equal elements, a tuple by index.
//! * A value of a dynamic attribute or output is compared as its JSON
//!   form: objects and maps as objects, lists, sets and tuples as lists,
//!   and two values of different JSON kinds as a type change (`a -> b`).
//! * A value that becomes unknown shows its old value, as deleted, then
//!   `-> (known after apply)`; a sensitive one `(sensitive value)`, with a
//!   warning when its sensitivity changes.
//! * Unchanged children are counted (`# (2 unchanged attributes hidden)`),
//!   except `id`, `name` and `tags`, which are always shown.
//! * Each level indents four columns; each line is `symbol key = value`
//!   with three-column symbols (`  +`, `  -`, `  ~`, `   `).

use crate::text::Style;
use std::fmt::Write;
use terrane_schema::{Block, BlockNesting, NestedBlock};
use terrane_value::{Kind, Path, Type, Value};

/// What happens to one node of the tree.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Act {
    NoOp,
    Create,
    Delete,
    Update,
}

impl Act {
    /// A parent's action after a child's: unchanged children leave it, a
    /// child acting differently from the parent makes it an update.
    fn then(self, child: Act) -> Act {
        match child {
            Act::NoOp => self,
            c if c == self => self,
            _ => Act::Update,
        }
    }

    /// The action a collection starts from before its children fold in.
    fn of(before: &Value, after: &Value) -> Act {
        match (before.is_null(), after.is_null()) {
            (true, false) => Act::Create,
            (false, true) => Act::Delete,
            _ => Act::NoOp,
        }
    }

    /// The column before a line: `+`, `-` or `~`, coloured when `style`
    /// is (the same text `Style::green` and friends make).
    pub fn symbol(self, style: &Style) -> &'static str {
        match (self, style.color) {
            (Act::NoOp, _) => "   ",
            (Act::Create, false) => "  +",
            (Act::Create, true) => "  \x1b[32m+\x1b[0m",
            (Act::Delete, false) => "  -",
            (Act::Delete, true) => "  \x1b[31m-\x1b[0m",
            (Act::Update, false) => "  ~",
            (Act::Update, true) => "  \x1b[33m~\x1b[0m",
        }
    }
}

/// One node of a computed diff.
pub struct Diff {
    pub act: Act,
    /// This node's change forces the replacement of its resource.
    replace: bool,
    node: Node,
}

enum Node {
    Primitive {
        before: Value,
        after: Value,
    },
    Sensitive {
        before: bool,
        after: bool,
        inner: Act,
    },
    /// Becomes unknown; the old value's deletion diff unless created.
    Unknown(Option<Box<Diff>>),
    /// Attributes (of a resource when `block`), by key, and for a body
    /// rendered with its schema, its nested blocks grouped by type.
    Object {
        attrs: Vec<(String, Diff)>,
        block: bool,
        blocks: Vec<BlockGroup>,
    },
    /// A write-only attribute: never planned, never stored.
    WriteOnly,
    Map(Vec<(String, Diff)>),
    List(Vec<Diff>),
    Set(Vec<Diff>),
    TypeChange(Box<Diff>, Box<Diff>),
}

/// The nested blocks of one type in a body: each with its label (` "key"`
/// for a map block, else empty) and diff.
struct BlockGroup {
    name: String,
    items: Vec<(String, Diff)>,
}

/// Computes diffs, knowing which paths force a replacement.
pub struct Differ<'a> {
    pub requires_replace: &'a [Path],
}

fn null() -> Value {
    Value::null(Type::Dynamic)
}

/// Equal as Terraform compares JSON values: marks aside (the comparison
/// ignores them), unknowns never equal.
fn same(a: &Value, b: &Value) -> bool {
    a.is_wholly_known() && b.is_wholly_known() && a.eq_ignoring_refinements(b)
}

/// The JSON kind a dynamic value compares by.
#[derive(PartialEq, Eq)]
enum JsonKind {
    Null,
    Primitive(u8),
    Object,
    Array,
}

fn json_kind(v: &Value) -> JsonKind {
    match v.kind() {
        Kind::Null | Kind::Unknown(_) => JsonKind::Null,
        Kind::String(_) => JsonKind::Primitive(0),
        Kind::Number(_) => JsonKind::Primitive(1),
        Kind::Bool(_) => JsonKind::Primitive(2),
        Kind::Map(_) => JsonKind::Object,
        Kind::Seq(_) | Kind::Set(_) => JsonKind::Array,
    }
}

/// The shape a node is compared as.
enum Shape<'t> {
    Primitive,
    Object(Option<&'t terrane_value::ObjectType>),
    Map(&'t Type),
    List(&'t Type),
    Set(&'t Type),
    Tuple(&'t [Type]),
}

const DYNAMIC: Type = Type::Dynamic;

impl Differ<'_> {
    /// A child's path, built only when some path forces a replacement:
    /// paths serve nothing else here, and most plans have none.
    fn at(&self, child: impl FnOnce() -> Path) -> Path {
        if self.requires_replace.is_empty() {
            Path::root()
        } else {
            child()
        }
    }

    fn leaf(&self, act: Act, path: &Path, node: Node) -> Diff {
        Diff {
            act,
            replace: self.requires_replace.contains(path),
            node,
        }
    }

    /// The diff of a resource object (`before` null for creates, `after`
    /// null for deletes): its attributes, nulls on both sides left out.
    pub fn block(&self, before: &Value, after: &Value, ty: &Type) -> Diff {
        let attrs = self.attributes(before, after, ty.object_type(), &Path::root());
        let act = attrs
            .iter()
            .fold(Act::of(before, after), |a, (_, d)| a.then(d.act));
        self.leaf(
            act,
            &Path::root(),
            Node::Object {
                attrs,
                block: true,
                blocks: Vec::new(),
            },
        )
    }

    /// The diff of a resource object rendered with its schema, as
    /// Terraform renders it: attributes, then nested blocks as blocks
    /// (`name {`), write-only attributes labelled.
    pub fn schema_block(&self, before: &Value, after: &Value, schema: &Block) -> Diff {
        self.body(before, after, schema, &Path::root())
    }

    fn body(&self, before: &Value, after: &Value, schema: &Block, path: &Path) -> Diff {
        let part = |v: &Value, k: &str| {
            if v.is_known() {
                v.get_attr(k).cloned().unwrap_or_else(null)
            } else {
                null()
            }
        };
        let start = Act::of(before, after);
        let mut attrs = Vec::new();
        for (k, a) in &schema.attributes {
            let (bv, av) = (part(before, k), part(after, k));
            let p = self.at(|| path.attr(k.clone()));
            if a.write_only {
                // Terraform cannot know a write-only value: the attribute
                // is listed with the body's action.
                if !(before.is_null() && after.is_null()) {
                    attrs.push((k.clone(), self.leaf(start, &p, Node::WriteOnly)));
                }
                continue;
            }
            if bv.is_null() && av.is_null() {
                continue;
            }
            attrs.push((k.clone(), self.value(&bv, &av, &a.implied_type(), &p)));
        }
        let mut blocks = Vec::new();
        for (k, nb) in &schema.block_types {
            let (bv, av) = (part(before, k), part(after, k));
            let p = self.at(|| path.attr(k.clone()));
            if !bv.is_known() || !av.is_known() || !after.is_known() {
                // Not known yet (a dynamic block over unknown values):
                // shown as a value.
                let d = self.value(&bv, &av, &nb.implied_type(), &p);
                attrs.push((k.clone(), d));
                continue;
            }
            let items = self.nested(&bv, &av, nb, &p);
            if !items.is_empty() {
                blocks.push(BlockGroup {
                    name: k.clone(),
                    items,
                });
            }
        }
        attrs.sort_by(|x, y| x.0.cmp(&y.0));
        let act = attrs
            .iter()
            .map(|(_, d)| d.act)
            .chain(
                blocks
                    .iter()
                    .flat_map(|g| g.items.iter().map(|(_, d)| d.act)),
            )
            .fold(start, Act::then);
        self.leaf(
            act,
            path,
            Node::Object {
                attrs,
                block: true,
                blocks,
            },
        )
    }

    /// The blocks of one nested block type, paired as Terraform pairs
    /// them: single by itself, lists by position, sets by equal elements,
    /// maps by key.
    fn nested(
        &self,
        before: &Value,
        after: &Value,
        nb: &NestedBlock,
        path: &Path,
    ) -> Vec<(String, Diff)> {
        let schema = &nb.block;
        let mut out = Vec::new();
        match nb.nesting {
            BlockNesting::Single | BlockNesting::Group => {
                if !(before.is_null() && after.is_null()) {
                    out.push((String::new(), self.body(before, after, schema, path)));
                }
            }
            BlockNesting::List => {
                // Terraform pairs list blocks by position, whatever the
                // lengths (removing the first of three shows two updates
                // and a delete).
                let (b, a) = (
                    before.elements().unwrap_or(&[]),
                    after.elements().unwrap_or(&[]),
                );
                for i in 0..b.len().max(a.len()) {
                    let bv = b.get(i).cloned().unwrap_or_else(null);
                    let av = a.get(i).cloned().unwrap_or_else(null);
                    let p = self.at(|| path.index(i as i64));
                    out.push((String::new(), self.body(&bv, &av, schema, &p)));
                }
            }
            BlockNesting::Set => {
                let (b, a) = (
                    before.elements().unwrap_or(&[]),
                    after.elements().unwrap_or(&[]),
                );
                let mut taken = vec![false; a.len()];
                for bv in b {
                    let found = (0..a.len()).find(|&j| !taken[j] && same(bv, &a[j]));
                    let av = match found {
                        Some(j) => {
                            taken[j] = true;
                            a[j].clone()
                        }
                        None => null(),
                    };
                    out.push((String::new(), self.body(bv, &av, schema, path)));
                }
                for (av, _) in a.iter().zip(&taken).filter(|(_, t)| !**t) {
                    out.push((String::new(), self.body(&null(), av, schema, path)));
                }
            }
            BlockNesting::Map => {
                for (k, bv, av) in paired_entries(before, after) {
                    let label = format!(" {}", terrane_value::render::quote(&k));
                    let d = self.body(&bv, &av, schema, &self.at(|| path.key(k.clone())));
                    out.push((label, d));
                }
            }
        }
        out
    }

    /// The diff of any value of type `ty` (`Dynamic` compares JSON forms).
    pub fn value(&self, before: &Value, after: &Value, ty: &Type, path: &Path) -> Diff {
        if before.is_sensitive() || after.is_sensitive() {
            let inner = self.value(&before.unmark_deep(), &after.unmark_deep(), ty, path);
            let (bs, as_) = (
                before.is_sensitive() && !before.is_null(),
                after.is_sensitive() && !after.is_null(),
            );
            let act =
                if inner.act == Act::NoOp && bs != as_ && !before.is_null() && !after.is_null() {
                    Act::Update
                } else {
                    inner.act
                };
            return self.leaf(
                act,
                path,
                Node::Sensitive {
                    before: bs,
                    after: as_,
                    inner: inner.act,
                },
            );
        }
        if !after.is_known() {
            if before.is_null() {
                return self.leaf(Act::Create, path, Node::Unknown(None));
            }
            let old = Differ {
                requires_replace: &[],
            }
            .value(before, &null(), ty, path);
            return self.leaf(Act::Update, path, Node::Unknown(Some(Box::new(old))));
        }
        if before.is_null() && after.is_null() {
            return self.leaf(
                Act::NoOp,
                path,
                Node::Primitive {
                    before: before.clone(),
                    after: after.clone(),
                },
            );
        }
        if ty.is_dynamic() && !self.requires_replace.is_empty() {
            // Compared as JSON, a dynamic value's parts never carry
            // `# forces replacement` (Terraform's JSON diff has no paths).
            return Differ {
                requires_replace: &[],
            }
            .value(before, after, ty, path);
        }
        let shape = match ty {
            Type::Dynamic => {
                let (bk, ak) = (json_kind(before), json_kind(after));
                if bk != JsonKind::Null && ak != JsonKind::Null && bk != ak {
                    let b = self.value(before, &null(), ty, path);
                    let a = self.value(&null(), after, ty, path);
                    return self.leaf(
                        Act::Update,
                        path,
                        Node::TypeChange(Box::new(b), Box::new(a)),
                    );
                }
                match if bk == JsonKind::Null { ak } else { bk } {
                    JsonKind::Object => Shape::Object(None),
                    JsonKind::Array => Shape::List(&DYNAMIC),
                    _ => Shape::Primitive,
                }
            }
            Type::Object(o) => Shape::Object(Some(o)),
            Type::Map(e) => Shape::Map(e),
            Type::List(e) => Shape::List(e),
            Type::Set(e) => Shape::Set(e),
            Type::Tuple(ts) => Shape::Tuple(ts),
            _ => Shape::Primitive,
        };
        let start = Act::of(before, after);
        let fold = |children: &mut dyn Iterator<Item = Act>| children.fold(start, Act::then);
        match shape {
            Shape::Primitive => {
                let act = if start != Act::NoOp {
                    start
                } else if same(before, after) {
                    Act::NoOp
                } else {
                    Act::Update
                };
                self.leaf(
                    act,
                    path,
                    Node::Primitive {
                        before: before.clone(),
                        after: after.clone(),
                    },
                )
            }
            Shape::Object(ot) => {
                let attrs = self.attributes(before, after, ot, path);
                let act = fold(&mut attrs.iter().map(|(_, d)| d.act));
                self.leaf(
                    act,
                    path,
                    Node::Object {
                        attrs,
                        block: false,
                        blocks: Vec::new(),
                    },
                )
            }
            Shape::Map(e) => {
                let entries: Vec<(String, Diff)> = paired_entries(before, after)
                    .into_iter()
                    .map(|(k, bv, av)| {
                        let d = self.value(&bv, &av, e, &self.at(|| path.key(k.clone())));
                        (k, d)
                    })
                    .collect();
                let act = fold(&mut entries.iter().map(|(_, d)| d.act));
                self.leaf(act, path, Node::Map(entries))
            }
            Shape::List(e) => {
                let (b, a) = (
                    before.elements().unwrap_or(&[]),
                    after.elements().unwrap_or(&[]),
                );
                let objects = |v: &Value| match e {
                    Type::Dynamic => json_kind(v) == JsonKind::Object,
                    t => t.object_type().is_some(),
                };
                let mut elems = Vec::new();
                walk_slice(b, a, same, objects, |i, j| {
                    let (bv, av) = (
                        i.map_or_else(null, |i| b[i].clone()),
                        j.map_or_else(null, |j| a[j].clone()),
                    );
                    elems.push(self.value(
                        &bv,
                        &av,
                        e,
                        &self.at(|| path.index(j.or(i).unwrap_or(0) as i64)),
                    ));
                });
                let act = fold(&mut elems.iter().map(|d| d.act));
                self.leaf(act, path, Node::List(elems))
            }
            Shape::Tuple(ts) => {
                let (b, a) = (
                    before.elements().unwrap_or(&[]),
                    after.elements().unwrap_or(&[]),
                );
                let elems: Vec<Diff> = (0..b.len().max(a.len()))
                    .map(|i| {
                        let (bv, av) = (
                            b.get(i).cloned().unwrap_or_else(null),
                            a.get(i).cloned().unwrap_or_else(null),
                        );
                        self.value(
                            &bv,
                            &av,
                            ts.get(i).unwrap_or(&DYNAMIC),
                            &self.at(|| path.index(i as i64)),
                        )
                    })
                    .collect();
                let act = fold(&mut elems.iter().map(|d| d.act));
                self.leaf(act, path, Node::List(elems))
            }
            Shape::Set(e) => {
                let (b, a) = (
                    before.elements().unwrap_or(&[]),
                    after.elements().unwrap_or(&[]),
                );
                let mut taken = vec![false; a.len()];
                let mut elems = Vec::new();
                // Equal elements pair up (in the old order); the rest of
                // the old ones are deleted, the rest of the new created.
                for bv in b {
                    let found = (0..a.len()).find(|&j| {
                        !taken[j] && same(bv, &a[j]) && bv.is_sensitive() == a[j].is_sensitive()
                    });
                    let av = match found {
                        Some(j) => {
                            taken[j] = true;
                            a[j].clone()
                        }
                        None => null(),
                    };
                    elems.push(self.value(bv, &av, e, path));
                }
                for (av, _) in a.iter().zip(&taken).filter(|(_, t)| !**t) {
                    elems.push(self.value(&null(), av, e, path));
                }
                let act = fold(&mut elems.iter().map(|d| d.act));
                self.leaf(act, path, Node::Set(elems))
            }
        }
    }

    /// An object's attributes (typed by `ot` when known), those null on
    /// both sides left out.
    fn attributes(
        &self,
        before: &Value,
        after: &Value,
        ot: Option<&terrane_value::ObjectType>,
        path: &Path,
    ) -> Vec<(String, Diff)> {
        // A JSON object (a dynamic value) shows a key written as null, as
        // Terraform's JSON diff does: `+ key = null` when the key is new.
        let has = |v: &Value, k: &str| v.is_known() && v.get_attr(k).is_some();
        paired_entries(before, after)
            .into_iter()
            .filter_map(|(k, bv, av)| {
                let p = self.at(|| path.attr(k.clone()));
                if bv.is_null() && av.is_null() {
                    if ot.is_some() {
                        return None;
                    }
                    let act = match (has(before, &k), has(after, &k)) {
                        (false, true) => Act::Create,
                        (true, false) => Act::Delete,
                        _ => Act::NoOp,
                    };
                    let node = Node::Primitive {
                        before: bv,
                        after: av,
                    };
                    return Some((k, self.leaf(act, &p, node)));
                }
                let ty = ot.and_then(|o| o.attr(&k)).unwrap_or(&DYNAMIC);
                let d = self.value(&bv, &av, ty, &p);
                Some((k, d))
            })
            .collect()
    }
}

/// The union of two objects' or maps' keys, in order, each with its value
/// on both sides (null where absent or the side is not known).
fn paired_entries(before: &Value, after: &Value) -> Vec<(String, Value, Value)> {
    let empty = terrane_value::Entries::new();
    let b = if before.is_known() {
        before.entries().unwrap_or(&empty)
    } else {
        &empty
    };
    let a = if after.is_known() {
        after.entries().unwrap_or(&empty)
    } else {
        &empty
    };
    let mut keys: Vec<&String> = b.keys().chain(a.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .map(|k| {
            (
                k.clone(),
                b.get(k).cloned().unwrap_or_else(null),
                a.get(k).cloned().unwrap_or_else(null),
            )
        })
        .collect()
}

/// Pairs up the elements of two sequences as Terraform's list diff does:
/// by index when the lengths agree and `after` is not a reordering of
/// `before`; otherwise along the longest common subsequence, elements off
/// it deleted then created (an object element paired with the next new
/// object element instead). Calls `f(before index, after index)` in order.
pub fn walk_slice<T>(
    before: &[T],
    after: &[T],
    eq: impl Fn(&T, &T) -> bool,
    object: impl Fn(&T) -> bool,
    mut f: impl FnMut(Option<usize>, Option<usize>),
) {
    // A reordering (every old element still there) is checked only when
    // the lengths agree.
    if before.len() == after.len() && !before.iter().all(|b| after.iter().any(|a| eq(b, a))) {
        for i in 0..before.len() {
            f(Some(i), Some(i));
        }
        return;
    }
    let lcs = longest_common(before, after, &eq);
    let (mut bi, mut ai, mut li) = (0, 0, 0);
    while bi < before.len() || ai < after.len() || li < lcs.len() {
        while bi < before.len() && (li >= lcs.len() || !eq(&before[bi], lcs[li])) {
            if object(&before[bi])
                && ai < after.len()
                && object(&after[ai])
                && (li >= lcs.len() || !eq(&after[ai], lcs[li]))
            {
                f(Some(bi), Some(ai));
                bi += 1;
                ai += 1;
                continue;
            }
            f(Some(bi), None);
            bi += 1;
        }
        while ai < after.len() && (li >= lcs.len() || !eq(&after[ai], lcs[li])) {
            f(None, Some(ai));
            ai += 1;
        }
        if li < lcs.len() {
            f(Some(bi), Some(ai));
            bi += 1;
            ai += 1;
            li += 1;
        }
    }
}

/// The longest common subsequence (elements of `xs`), ties broken as
/// Terraform breaks them so the same edits are shown.
fn longest_common<'a, T>(xs: &'a [T], ys: &[T], eq: &impl Fn(&T, &T) -> bool) -> Vec<&'a T> {
    if xs.is_empty() || ys.is_empty() {
        return Vec::new();
    }
    let w = xs.len();
    let mut len = vec![0usize; xs.len() * ys.len()];
    let mut eqs = vec![false; xs.len() * ys.len()];
    for y in 0..ys.len() {
        for x in 0..xs.len() {
            let at = w * y + x;
            if eq(&xs[x], &ys[y]) {
                eqs[at] = true;
                len[at] = if x == 0 || y == 0 {
                    1
                } else {
                    len[w * (y - 1) + x - 1] + 1
                };
            } else {
                let l = if x > 0 { len[at - 1] } else { 0 };
                let u = if y > 0 { len[at - w] } else { 0 };
                len[at] = l.max(u);
            }
        }
    }
    let mut seq = Vec::with_capacity(len[len.len() - 1]);
    let (mut x, mut y) = (xs.len() as isize - 1, ys.len() as isize - 1);
    while x >= 0 && y >= 0 {
        let at = w * y as usize + x as usize;
        if eqs[at] {
            seq.push(&xs[x as usize]);
            x -= 1;
            y -= 1;
        } else {
            let l = if x > 0 { len[at - 1] } else { 0 };
            let u = if y > 0 { len[at - w] } else { 0 };
            if l > u {
                x -= 1;
            } else {
                y -= 1;
            }
        }
    }
    seq.reverse();
    seq
}

/// How a node renders, as its parent decides.
#[derive(Clone, Copy, Default)]
pub struct Opts {
    /// Show unchanged children instead of counting them.
    pub show_unchanged: bool,
    /// No ` -> null` after a deleted value (its parent says so already).
    pub no_null_suffix: bool,
    /// No `# forces replacement` (its parent carries it).
    pub no_forces: bool,
}

fn pad(indent: usize) -> Pad {
    Pad(indent)
}

/// `n` levels of indentation (four spaces each), written where it is
/// formatted rather than built as a string first.
struct Pad(usize);

impl std::fmt::Display for Pad {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for _ in 0..self.0 {
            f.write_str("    ")?;
        }
        Ok(())
    }
}

/// Appends `n` spaces.
fn spaces(out: &mut String, n: usize) {
    const SPACES: &str = "                                ";
    let mut left = n;
    while left > 0 {
        let k = left.min(SPACES.len());
        out.push_str(&SPACES[..k]);
        left -= k;
    }
}

/// What a child's line shows between its symbol and its value: a key
/// padded to a width, then ` = ` (attributes, map entries), or text as it
/// is (a block's type and label; nothing for a list element).
enum Lead<'k> {
    Key(&'k str, usize),
    Text(&'k str),
}

impl Lead<'_> {
    fn write(&self, out: &mut String) {
        match *self {
            Lead::Key(key, width) => {
                out.push_str(key);
                spaces(out, width.saturating_sub(key.chars().count()));
                out.push_str(" = ");
            }
            Lead::Text(text) => out.push_str(text),
        }
    }
}

/// Attributes Terraform always shows, changed or not.
fn important(key: &str) -> bool {
    matches!(key, "id" | "name" | "tags")
}

/// Writes the line counting `n` hidden unchanged children, if any.
fn hidden_line(out: &mut String, indent: usize, what: &str, n: usize) {
    if n > 0 {
        let _ = writeln!(
            out,
            "{}    # ({n} unchanged {what}{} hidden)",
            pad(indent + 1),
            if n == 1 { "" } else { "s" }
        );
    }
}

/// Writes one child of a structure at `indent`: its warnings, then
/// `symbol lead value tail` (`lead` is `key = ` for keyed children).
fn child_line(
    out: &mut String,
    style: &Style,
    indent: usize,
    lead: Lead<'_>,
    d: &Diff,
    opts: Opts,
    tail: &str,
) {
    for w in d.warnings(style, indent + 1) {
        let _ = writeln!(out, "{}{w}", pad(indent + 1));
    }
    spaces(out, 4 * (indent + 1));
    out.push_str(d.act.symbol(style));
    out.push(' ');
    lead.write(out);
    out.push_str(&d.render(style, indent + 1, opts));
    out.push_str(tail);
    out.push('\n');
}

impl Diff {
    fn null_suffix(&self, o: Opts) -> &'static str {
        if self.act == Act::Delete && !o.no_null_suffix {
            " -> null"
        } else {
            ""
        }
    }

    fn forces(&self, style: &Style, o: Opts) -> String {
        if self.replace && !o.no_forces {
            style.red(" # forces replacement")
        } else {
            String::new()
        }
    }

    /// The warning lines printed above this node's line.
    fn warnings(&self, style: &Style, indent: usize) -> Vec<String> {
        let Node::Sensitive {
            before,
            after,
            inner,
        } = &self.node
        else {
            return Vec::new();
        };
        if before == after || matches!(inner, Act::Create | Act::Delete) {
            return Vec::new();
        }
        let warning = style.yellow("Warning");
        let mut w = if *before {
            format!("  # {warning}: this attribute value will no longer be marked as sensitive\n{}  # after applying this change.", pad(indent))
        } else {
            format!("  # {warning}: this attribute value will be marked as sensitive and will not\n{}  # display in UI output after applying this change.", pad(indent))
        };
        if *inner == Act::NoOp {
            w.push_str(" The value is unchanged.");
        }
        vec![w]
    }

    /// The node's text from the `=` on (multi-line for structures), at
    /// nesting level `indent`.
    pub fn render(&self, style: &Style, indent: usize, o: Opts) -> String {
        let forces = self.forces(style, o);
        match &self.node {
            Node::Primitive { before, after } => self.primitive(style, before, after, indent, o),
            Node::Sensitive { .. } => format!("(sensitive value){}{forces}", self.null_suffix(o)),
            Node::Unknown(None) => {
                let mut text = String::from("(known after apply)");
                text.push_str(&forces);
                text
            }
            Node::Unknown(Some(old)) => {
                let before_opts = Opts {
                    no_null_suffix: true,
                    no_forces: o.no_forces || self.replace,
                    ..o
                };
                format!(
                    "{} -> (known after apply){forces}",
                    old.render(style, indent, before_opts)
                )
            }
            Node::TypeChange(b, a) => {
                let o = Opts {
                    no_null_suffix: true,
                    ..o
                };
                format!(
                    "{} {} {}",
                    b.render(style, indent, o),
                    style.yellow("->"),
                    a.render(style, indent, o)
                )
            }
            Node::WriteOnly => format!("(write-only attribute){}{forces}", self.null_suffix(o)),
            Node::Object {
                attrs,
                block,
                blocks,
            } => {
                if attrs.is_empty() && blocks.is_empty() {
                    return format!(
                        "{{}}{}{forces}",
                        if *block { "" } else { self.null_suffix(o) }
                    );
                }
                let keys: Vec<_> = attrs
                    .iter()
                    .map(|(k, _)| crate::text::key_text(k))
                    .collect();
                let width = keys.iter().map(|k| k.len()).max().unwrap_or(0);
                let child = Opts {
                    no_null_suffix: if *block { o.no_null_suffix } else { true },
                    no_forces: false,
                    show_unchanged: o.show_unchanged,
                };
                let mut out = format!("{{{forces}\n");
                let mut hidden = 0;
                for ((k, d), key) in attrs.iter().zip(&keys) {
                    let opts = if important(k) {
                        Opts {
                            show_unchanged: true,
                            ..child
                        }
                    } else {
                        child
                    };
                    if !important(k) && d.act == Act::NoOp && !o.show_unchanged {
                        hidden += 1;
                        continue;
                    }
                    child_line(&mut out, style, indent, Lead::Key(key, width), d, opts, "");
                }
                hidden_line(&mut out, indent, "attribute", hidden);
                self.blocks(&mut out, style, indent, blocks, !attrs.is_empty(), child);
                let suffix = if *block { "" } else { self.null_suffix(o) };
                let _ = write!(out, "{}    }}{suffix}", pad(indent));
                out
            }
            Node::Map(entries) => {
                if entries.is_empty() {
                    return format!("{{}}{}{forces}", self.null_suffix(o));
                }
                let keys: Vec<String> = entries
                    .iter()
                    .map(|(k, _)| terrane_value::render::quote(k))
                    .collect();
                let width = keys.iter().map(String::len).max().unwrap_or(0);
                let child = Opts {
                    no_null_suffix: self.act == Act::Delete,
                    no_forces: false,
                    show_unchanged: o.show_unchanged,
                };
                let mut out = format!("{{{forces}\n");
                let mut hidden = 0;
                for ((_, d), key) in entries.iter().zip(&keys) {
                    if d.act == Act::NoOp && !o.show_unchanged {
                        hidden += 1;
                        continue;
                    }
                    let comma = if matches!(d.node, Node::Object { .. }) {
                        ","
                    } else {
                        ""
                    };
                    child_line(
                        &mut out,
                        style,
                        indent,
                        Lead::Key(key, width),
                        d,
                        child,
                        comma,
                    );
                }
                hidden_line(&mut out, indent, "element", hidden);
                let _ = write!(out, "{}    }}{}", pad(indent), self.null_suffix(o));
                out
            }
            Node::List(elems) => self.list(style, elems, indent, o, &forces),
            Node::Set(elems) => {
                if elems.is_empty() {
                    return format!("[]{}{forces}", self.null_suffix(o));
                }
                let child = Opts {
                    no_null_suffix: true,
                    ..o
                };
                let mut out = format!("[{forces}\n");
                let mut hidden = 0;
                for d in elems {
                    if d.act == Act::NoOp && !o.show_unchanged {
                        hidden += 1;
                        continue;
                    }
                    child_line(&mut out, style, indent, Lead::Text(""), d, child, ",");
                }
                hidden_line(&mut out, indent, "element", hidden);
                let _ = write!(out, "{}    ]{}", pad(indent), self.null_suffix(o));
                out
            }
        }
    }

    /// Nested blocks after a body's attributes: `name {` (`name "key" {`
    /// for map blocks), each type's changed blocks after a blank line when
    /// the body has attributes, unchanged ones counted.
    fn blocks(
        &self,
        out: &mut String,
        style: &Style,
        indent: usize,
        groups: &[BlockGroup],
        has_attrs: bool,
        o: Opts,
    ) {
        let mut hidden = 0;
        for g in groups {
            let mut first = true;
            for (label, d) in &g.items {
                if d.act == Act::NoOp && !o.show_unchanged {
                    hidden += 1;
                    continue;
                }
                if first && has_attrs {
                    out.push('\n');
                }
                first = false;
                let lead = format!("{}{label} ", crate::text::key_text(&g.name));
                child_line(out, style, indent, Lead::Text(&lead), d, o, "");
            }
        }
        if hidden > 0 {
            out.push('\n');
            hidden_line(out, indent, "block", hidden);
        }
    }

    /// A list: a change shows the unchanged element before and after it
    /// as context; other unchanged runs are counted.
    fn list(&self, style: &Style, elems: &[Diff], indent: usize, o: Opts, forces: &str) -> String {
        if elems.is_empty() {
            return format!("[]{}{forces}", self.null_suffix(o));
        }
        let changed = Opts {
            no_null_suffix: true,
            ..o
        };
        let context = Opts {
            show_unchanged: true,
            ..changed
        };
        let line = |out: &mut String, d: &Diff, opts: Opts| {
            child_line(out, style, indent, Lead::Text(""), d, opts, ",")
        };
        let mut out = format!("[{forces}\n");
        let mut skipped: Vec<&Diff> = Vec::new();
        let mut show_next = false;
        for d in elems {
            if d.act == Act::NoOp && !show_next && !o.show_unchanged {
                skipped.push(d);
                continue;
            }
            show_next = false;
            hidden_line(&mut out, indent, "element", skipped.len().saturating_sub(1));
            if let Some(last) = skipped.last() {
                line(&mut out, last, context);
            }
            skipped.clear();
            if d.act == Act::NoOp {
                line(&mut out, d, context);
            } else {
                show_next = true;
                line(&mut out, d, changed);
            }
        }
        hidden_line(&mut out, indent, "element", skipped.len());
        let _ = write!(out, "{}    ]{}", pad(indent), self.null_suffix(o));
        out
    }

    fn primitive(
        &self,
        style: &Style,
        before: &Value,
        after: &Value,
        indent: usize,
        o: Opts,
    ) -> String {
        let forces = self.forces(style, o);
        if let Some(text) = self.json_string(style, before, after, indent, o) {
            return text;
        }
        let multiline = |v: &Value| v.as_str().is_some_and(|s| s.contains('\n'));
        if multiline(before) || multiline(after) {
            return self.heredoc(style, before, after, indent, o);
        }
        let text = |v: &Value| crate::text::value(v, 0, false);
        match self.act {
            Act::Create => format!("{}{forces}", text(after)),
            Act::Delete => format!("{}{}{forces}", text(before), self.null_suffix(o)),
            Act::NoOp => format!("{}{forces}", text(before)),
            Act::Update => format!(
                "{} {} {}{forces}",
                text(before),
                style.yellow("->"),
                text(after)
            ),
        }
    }

    /// A string holding a JSON object or array, as Terraform shows it:
    /// `jsonencode(...)` around the diff of the two documents (`None`
    /// when neither side is such a string). A string that is JSON on one
    /// side only is shown whole on each side.
    fn json_string(
        &self,
        style: &Style,
        before: &Value,
        after: &Value,
        indent: usize,
        o: Opts,
    ) -> Option<String> {
        let json = |v: &Value| -> Option<Value> {
            let s = v.as_str()?;
            if !(s.starts_with('{') || s.starts_with('[')) {
                return None;
            }
            let j: serde_json::Value = serde_json::from_str(s).ok()?;
            Some(terrane_value::json::decode_loose(&j))
        };
        let (bj, aj) = match self.act {
            Act::Create => (None, json(after)),
            Act::NoOp => (json(after), json(after)),
            Act::Delete => (json(before), None),
            Act::Update => (json(before), json(after)),
        };
        let want = match self.act {
            Act::Create => aj.is_some(),
            Act::Delete => bj.is_some(),
            Act::NoOp | Act::Update => bj.is_some() && aj.is_some(),
        };
        if !want {
            if self.act == Act::Update && (bj.is_some() || aj.is_some()) {
                let show = |v: &Value, act| Diff {
                    act,
                    replace: false,
                    node: Node::Primitive {
                        before: v.clone(),
                        after: v.clone(),
                    },
                };
                let o2 = Opts {
                    no_null_suffix: true,
                    ..o
                };
                return Some(format!(
                    "{} {} {}{}",
                    show(before, Act::Delete).render(style, indent, o2),
                    style.yellow("->"),
                    show(after, Act::Create).render(style, indent, o2),
                    self.forces(style, o)
                ));
            }
            return None;
        }
        let (bj, aj) = (bj.unwrap_or_else(null), aj.unwrap_or_else(null));
        let diff = Differ {
            requires_replace: &[],
        }
        .value(&bj, &aj, &Type::Dynamic, &Path::root());
        let mut inner = Opts {
            no_null_suffix: true,
            no_forces: true,
            ..o
        };
        let mut act = self.act;
        let (mut whitespace, mut replace) = ("", String::new());
        if diff.act == Act::NoOp && self.act == Act::Update {
            // Only whitespace differs: the JSON diff alone would show
            // nothing, so everything is shown, as unchanged.
            whitespace = if self.replace {
                " # whitespace changes force replacement"
            } else {
                " # whitespace changes"
            };
            inner.show_unchanged = true;
            act = Act::NoOp;
        } else {
            replace = self.forces(style, o);
        }
        let rendered = diff.render(style, indent + 1, inner);
        if matches!(self.act, Act::Create | Act::Delete) {
            act = Act::NoOp;
        }
        Some(if rendered.contains('\n') {
            format!(
                "jsonencode({whitespace}\n{}{} {rendered}{replace}\n{}){}",
                pad(indent + 1),
                act.symbol(style),
                pad(indent + 1),
                self.null_suffix(o)
            )
        } else {
            format!("jsonencode({rendered}){whitespace}{replace}")
        })
    }

    /// A string with line breaks: a heredoc, line by line with `+`/`-`
    /// where an update changes lines.
    fn heredoc(
        &self,
        style: &Style,
        before: &Value,
        after: &Value,
        indent: usize,
        o: Opts,
    ) -> String {
        let lines_of = |v: &Value| -> Vec<String> {
            v.as_str()
                .map(|s| {
                    s.strip_suffix('\n')
                        .unwrap_or(s)
                        .split('\n')
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default()
        };
        let (b, a) = (lines_of(before), lines_of(after));
        if self.act == Act::Update && (before.as_str().is_none() || after.as_str().is_none()) {
            // A value and null or a non-string: shown whole on each side.
            let show = |v: &Value, act| Diff {
                act,
                replace: false,
                node: Node::Primitive {
                    before: v.clone(),
                    after: v.clone(),
                },
            };
            let o2 = Opts {
                no_null_suffix: true,
                ..o
            };
            return format!(
                "{} {} {}{}",
                show(before, Act::Delete).render(style, indent, o2),
                style.yellow("->"),
                show(after, Act::Create).render(style, indent, o2),
                self.forces(style, o)
            );
        }
        let row = |sym: &str, text: &str| format!("{}{sym} {text}", pad(indent + 1));
        let mut rows = Vec::new();
        match self.act {
            Act::Create | Act::NoOp => rows.extend(
                if self.act == Act::Create { &a } else { &b }
                    .iter()
                    .map(|l| row(Act::NoOp.symbol(style), l)),
            ),
            Act::Delete => rows.extend(b.iter().map(|l| row(Act::NoOp.symbol(style), l))),
            Act::Update => walk_slice(
                &b,
                &a,
                |x, y| x == y,
                |_| false,
                |i, j| match (i, j) {
                    (Some(i), Some(_)) => rows.push(row(Act::NoOp.symbol(style), &b[i])),
                    (Some(i), None) => rows.push(row(Act::Delete.symbol(style), &b[i])),
                    (None, Some(j)) => rows.push(row(Act::Create.symbol(style), &a[j])),
                    (None, None) => {}
                },
            ),
        }
        format!(
            "<<-EOT{}\n{}\n{}    EOT{}",
            self.forces(style, o),
            rows.join("\n"),
            pad(indent),
            self.null_suffix(o)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(name: &str, before: &[i32], after: &[i32], want: &[(Option<usize>, Option<usize>)]) {
        let mut got = Vec::new();
        walk_slice(
            before,
            after,
            |a, b| a == b,
            |_| false,
            |i, j| got.push((i, j)),
        );
        assert_eq!(got, want, "case {name}");
    }

    #[test]
    fn slices_pair_as_terraform_pairs_them() {
        type Case = (
            &'static str,
            Vec<i32>,
            Vec<i32>,
            Vec<(Option<usize>, Option<usize>)>,
        );
        let cases: Vec<Case> = vec![
            (
                "same_length_by_index",
                vec![1, 2, 3],
                vec![2, 3, 4],
                vec![(Some(0), Some(0)), (Some(1), Some(1)), (Some(2), Some(2))],
            ),
            (
                "reordering_uses_lcs",
                vec![1, 2],
                vec![2, 1],
                vec![(Some(0), None), (Some(1), Some(0)), (None, Some(1))],
            ),
            (
                "append",
                vec![1, 2],
                vec![1, 2, 3],
                vec![(Some(0), Some(0)), (Some(1), Some(1)), (None, Some(2))],
            ),
            (
                "remove_middle",
                vec![1, 2, 3],
                vec![1, 3],
                vec![(Some(0), Some(0)), (Some(1), None), (Some(2), Some(1))],
            ),
            (
                "replace_and_grow",
                vec![1, 2, 3],
                vec![1, 9, 3, 4],
                vec![
                    (Some(0), Some(0)),
                    (Some(1), None),
                    (None, Some(1)),
                    (Some(2), Some(2)),
                    (None, Some(3)),
                ],
            ),
            ("from_empty", vec![], vec![5], vec![(None, Some(0))]),
        ];
        for (name, b, a, want) in cases {
            pairs(name, &b, &a, &want);
        }
    }

    fn s(x: &str) -> Value {
        Value::string(x)
    }
    fn n(x: i64) -> Value {
        Value::number(x)
    }
    fn obj(kvs: Vec<(&str, Value)>) -> Value {
        Value::object(kvs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
    }
    fn tup(vs: Vec<Value>) -> Value {
        Value::tuple(vs)
    }
    fn strs(xs: &[&str]) -> Vec<Value> {
        xs.iter().map(|x| s(x)).collect()
    }

    /// terraform_data's schema type: input and output are dynamic.
    fn data_ty() -> Type {
        Type::object([
            ("id", Type::String),
            ("input", Type::Dynamic),
            ("output", Type::Dynamic),
            ("triggers_replace", Type::Dynamic),
        ])
    }

    fn data(id: &str, input: Value, output: Value) -> Value {
        obj(vec![
            ("id", s(id)),
            ("input", input),
            ("output", output),
            ("triggers_replace", Value::null(Type::Dynamic)),
        ])
    }

    /// Each case: a resource body as `terraform plan` 1.15 printed it for
    /// the same before and after values (checked on this machine).
    fn check(name: &str, before: Value, after: Value, ty: Type, replace: Vec<Path>, want: &str) {
        let style = Style { color: false };
        let got = Differ {
            requires_replace: &replace,
        }
        .block(&before, &after, &ty)
        .render(&style, 0, Opts::default());
        assert_eq!(got, want, "case {name}:\n--- got\n{got}\n--- want\n{want}");
    }

    #[test]
    fn resource_bodies_as_terraform_renders_them() {
        let keepers_ty = Type::object([
            ("id", Type::String),
            ("keepers", Type::map(Type::String)),
            ("input", Type::list(Type::String)),
            ("result", Type::list(Type::String)),
        ]);
        let kv = |pairs: &[(&str, &str)]| {
            Value::map(
                Type::String,
                pairs.iter().map(|(k, v)| (k.to_string(), s(v))).collect(),
            )
        };
        // (case name, before, after, schema type, paths forcing replacement, body)
        type Case = (&'static str, Value, Value, Type, Vec<Path>, &'static str);
        let cases: Vec<Case> = vec![
            (
                "dynamic_update_lists_objects_sets_heredocs",
                data(
                    "i",
                    obj(vec![
                        ("list", tup(strs(&["a", "b", "c", "d", "e", "f"]))),
                        (
                            "map",
                            Value::map(
                                Type::String,
                                [("k1", s("v1")), ("k2", s("v2")), ("k 3", s("v3"))]
                                    .into_iter()
                                    .map(|(k, v)| (k.to_string(), v))
                                    .collect(),
                            ),
                        ),
                        ("ml", s("line1\nline2\nline3\n")),
                        (
                            "nested",
                            tup(vec![
                                obj(vec![("a", n(1)), ("b", s("x"))]),
                                obj(vec![("a", n(2)), ("b", s("y"))]),
                            ]),
                        ),
                        ("same", s("x")),
                        ("set", Value::set(Type::String, strs(&["x", "y", "z"]))),
                        ("tc", s("str")),
                    ]),
                    s("o"),
                ),
                data(
                    "i",
                    obj(vec![
                        ("list", tup(strs(&["a", "b", "X", "d", "e", "f", "g"]))),
                        (
                            "map",
                            Value::map(
                                Type::String,
                                [("k1", s("v1")), ("k2", s("changed")), ("k4", s("new"))]
                                    .into_iter()
                                    .map(|(k, v)| (k.to_string(), v))
                                    .collect(),
                            ),
                        ),
                        ("ml", s("line1\nline2 changed\nline3\nline4\n")),
                        (
                            "nested",
                            tup(vec![
                                obj(vec![("a", n(1)), ("b", s("x"))]),
                                obj(vec![("a", n(3)), ("b", s("y"))]),
                            ]),
                        ),
                        ("same", s("x")),
                        ("set", Value::set(Type::String, strs(&["w", "x", "z"]))),
                        ("tc", tup(strs(&["now"]))),
                    ]),
                    s("o"),
                ),
                data_ty(),
                vec![],
                r#"{
        id     = "i"
      ~ input  = {
          ~ list   = [
                # (1 unchanged element hidden)
                "b",
              - "c",
              + "X",
                "d",
                # (1 unchanged element hidden)
                "f",
              + "g",
            ]
          ~ map    = {
              - "k 3" = "v3"
              ~ k2    = "v2" -> "changed"
              + k4    = "new"
                # (1 unchanged attribute hidden)
            }
          ~ ml     = <<-EOT
                line1
              - line2
              + line2 changed
                line3
              + line4
            EOT
          ~ nested = [
                {
                    a = 1
                    b = "x"
                },
              ~ {
                  ~ a = 2 -> 3
                    # (1 unchanged attribute hidden)
                },
            ]
          ~ set    = [
              ~ "x" -> "w",
              ~ "y" -> "x",
                "z",
            ]
          ~ tc     = "str" -> [
              + "now",
            ]
            # (1 unchanged attribute hidden)
        }
        # (1 unchanged attribute hidden)
    }"#,
            ),
            (
                "becoming_unknown_shows_the_old_value_deleted",
                data(
                    "i",
                    s("k"),
                    obj(vec![("e", tup(vec![])), ("z", tup(strs(&["a"])))]),
                ),
                data("i", s("k2"), Value::unknown(Type::Dynamic)),
                data_ty(),
                vec![],
                r#"{
        id     = "i"
      ~ input  = "k" -> "k2"
      ~ output = {
          - e = []
          - z = [
              - "a",
            ]
        } -> (known after apply)
    }"#,
            ),
            (
                "sensitivity_changes_warn",
                data(
                    "i",
                    obj(vec![
                        ("x", s("plain")),
                        ("y", s("hidden").mark_sensitive()),
                        ("z", tup(strs(&["a"]))),
                    ]),
                    s("o"),
                ),
                data(
                    "i",
                    obj(vec![
                        ("x", s("plain").mark_sensitive()),
                        ("y", s("hidden")),
                        ("z", tup(vec![s("a"), Value::unknown(Type::String)])),
                    ]),
                    s("o"),
                ),
                data_ty(),
                vec![],
                r#"{
        id     = "i"
      ~ input  = {
          # Warning: this attribute value will be marked as sensitive and will not
          # display in UI output after applying this change. The value is unchanged.
          ~ x = (sensitive value)
          # Warning: this attribute value will no longer be marked as sensitive
          # after applying this change. The value is unchanged.
          ~ y = (sensitive value)
          ~ z = [
                "a",
              + (known after apply),
            ]
        }
        # (1 unchanged attribute hidden)
    }"#,
            ),
            (
                "deleted_object_ends_in_null",
                data(
                    "i",
                    obj(vec![
                        ("a", tup(vec![n(1)])),
                        ("s", s("secret").mark_sensitive()),
                        ("m", s("x\ny")),
                    ]),
                    s("o"),
                ),
                Value::null(data_ty()),
                data_ty(),
                vec![],
                r#"{
      - id     = "i" -> null
      - input  = {
          - a = [
              - 1,
            ]
          - m = <<-EOT
                x
                y
            EOT
          - s = (sensitive value)
        } -> null
      - output = "o" -> null
    }"#,
            ),
            (
                "typed_map_keys_quoted_list_context_forces_replacement",
                obj(vec![
                    ("id", s("-")),
                    ("keepers", kv(&[("a", "1"), ("b", "2")])),
                    (
                        "input",
                        Value::list(Type::String, strs(&["a", "b", "c", "d"])),
                    ),
                    ("result", Value::list(Type::String, strs(&["b", "a"]))),
                ]),
                obj(vec![
                    ("id", Value::unknown(Type::String)),
                    ("keepers", kv(&[("a", "1"), ("b", "3"), ("c", "4")])),
                    (
                        "input",
                        Value::list(Type::String, strs(&["a", "b", "x", "d", "e"])),
                    ),
                    ("result", Value::unknown(Type::list(Type::String))),
                ]),
                keepers_ty,
                vec![Path::root().attr("keepers"), Path::root().attr("input")],
                r#"{
      ~ id      = "-" -> (known after apply)
      ~ input   = [ # forces replacement
            # (1 unchanged element hidden)
            "b",
          - "c",
          + "x",
            "d",
          + "e",
        ]
      ~ keepers = { # forces replacement
          ~ "b" = "2" -> "3"
          + "c" = "4"
            # (1 unchanged element hidden)
        }
      ~ result  = [
          - "b",
          - "a",
        ] -> (known after apply)
    }"#,
            ),
            (
                "dynamic_values_never_force_replacement_marks",
                data("i", s("x"), s("x")),
                obj(vec![
                    ("id", s("i")),
                    ("input", s("x")),
                    ("output", s("x")),
                    ("triggers_replace", tup(strs(&["t2"]))),
                ]),
                data_ty(),
                vec![Path::root().attr("triggers_replace")],
                r#"{
        id               = "i"
      + triggers_replace = [
          + "t2",
        ]
        # (2 unchanged attributes hidden)
    }"#,
            ),
        ];
        for (name, before, after, ty, replace, want) in cases {
            check(name, before, after, ty, replace, want);
        }
    }

    /// A schema like the blocks fixture provider's server: attributes, a
    /// write-only one, and nested blocks of every nesting.
    fn server_schema() -> Block {
        use terrane_schema::Attribute;
        let subnet = Block::new()
            .attr("cidr", Attribute::required(Type::String))
            .attr("zone", Attribute::optional(Type::String));
        Block::new()
            .attr("id", Attribute::computed(Type::String))
            .attr("name", Attribute::required(Type::String))
            .attr("password", Attribute::optional(Type::String).write_only())
            .attr("policy", Attribute::optional(Type::String))
            .attr("tags", Attribute::optional(Type::map(Type::String)))
            .block(
                "network",
                NestedBlock::single(
                    Block::new()
                        .attr("cidr", Attribute::required(Type::String))
                        .attr("dns", Attribute::optional(Type::Bool))
                        .block("subnet", NestedBlock::list(subnet)),
                ),
            )
            .block(
                "disk",
                NestedBlock::list(
                    Block::new()
                        .attr("size", Attribute::required(Type::Number))
                        .attr("label", Attribute::optional(Type::String)),
                ),
            )
            .block(
                "rule",
                NestedBlock::set(
                    Block::new()
                        .attr("port", Attribute::required(Type::Number))
                        .attr("protocol", Attribute::optional(Type::String)),
                ),
            )
            .block(
                "label",
                NestedBlock::map(Block::new().attr("value", Attribute::required(Type::String))),
            )
    }

    /// A server object: policy JSON, the second subnet's CIDR, the disk
    /// size and the map block keys vary.
    fn server(policy: &str, subnet2: &str, disk: i64, labels: &[(&str, &str)]) -> Value {
        let schema = server_schema();
        let ty = schema.implied_type();
        let nb = |n: &str| schema.block_types[n].block.implied_type();
        let subnet_ty = schema.block_types["network"].block.block_types["subnet"]
            .block
            .implied_type();
        let subnet = |c: &str| {
            Value::object_typed(
                &subnet_ty,
                [
                    ("cidr".to_string(), s(c)),
                    ("zone".to_string(), Value::null(Type::String)),
                ]
                .into_iter()
                .collect(),
            )
        };
        let obj_of = |t: &Type, kvs: Vec<(&str, Value)>| {
            Value::object_typed(
                t,
                kvs.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
            )
        };
        obj_of(
            &ty,
            vec![
                ("id", s("srv-web")),
                ("name", s("web")),
                ("password", Value::null(Type::String)),
                ("policy", s(policy)),
                (
                    "tags",
                    Value::map(Type::String, [("a".to_string(), s("b"))].into()),
                ),
                (
                    "network",
                    obj_of(
                        &nb("network"),
                        vec![
                            ("cidr", s("10.0.0.0/16")),
                            ("dns", Value::null(Type::Bool)),
                            (
                                "subnet",
                                Value::list(
                                    subnet_ty.clone(),
                                    vec![subnet("10.0.1.0/24"), subnet(subnet2)],
                                ),
                            ),
                        ],
                    ),
                ),
                (
                    "disk",
                    Value::list(
                        nb("disk"),
                        vec![obj_of(
                            &nb("disk"),
                            vec![("size", n(disk)), ("label", Value::null(Type::String))],
                        )],
                    ),
                ),
                (
                    "rule",
                    Value::set(
                        nb("rule"),
                        vec![obj_of(
                            &nb("rule"),
                            vec![("port", n(80)), ("protocol", Value::null(Type::String))],
                        )],
                    ),
                ),
                (
                    "label",
                    Value::map(
                        nb("label"),
                        labels
                            .iter()
                            .map(|(k, v)| {
                                (k.to_string(), obj_of(&nb("label"), vec![("value", s(v))]))
                            })
                            .collect(),
                    ),
                ),
            ],
        )
    }

    /// Issue 15 item 5: bodies rendered with their schema, as `terraform
    /// plan` 1.15 printed them for the blocks fixture provider: blocks as
    /// `name {` (map blocks with their key), a blank line before each type
    /// of block, unchanged blocks counted, write-only attributes labelled,
    /// JSON strings as `jsonencode(...)` diffs.
    #[test]
    fn item5_block_bodies_as_terraform_renders_them() {
        let p1 = r#"{"Statement":[{"Effect":"Allow"}],"Version":"1"}"#;
        let p2 = r#"{"Statement":[{"Effect":"Deny"}],"Version":"1"}"#;
        let create = server(p1, "10.0.2.0/24", 10, &[("env", "prod")]);
        let update = server(p2, "10.0.3.0/24", 20, &[("env", "prod"), ("team", "x")]);
        let null = Value::null(server_schema().implied_type());
        let cases: Vec<(&str, &Value, &Value, &str)> = vec![
            (
                "create",
                &null,
                &create,
                r#"{
      + id       = "srv-web"
      + name     = "web"
      + password = (write-only attribute)
      + policy   = jsonencode(
            {
              + Statement = [
                  + {
                      + Effect = "Allow"
                    },
                ]
              + Version   = "1"
            }
        )
      + tags     = {
          + "a" = "b"
        }

      + disk {
          + size = 10
        }

      + label "env" {
          + value = "prod"
        }

      + network {
          + cidr = "10.0.0.0/16"

          + subnet {
              + cidr = "10.0.1.0/24"
            }
          + subnet {
              + cidr = "10.0.2.0/24"
            }
        }

      + rule {
          + port = 80
        }
    }"#,
            ),
            (
                "update",
                &create,
                &update,
                r#"{
        id       = "srv-web"
        name     = "web"
      ~ policy   = jsonencode(
          ~ {
              ~ Statement = [
                  ~ {
                      ~ Effect = "Allow" -> "Deny"
                    },
                ]
                # (1 unchanged attribute hidden)
            }
        )
        tags     = {
            "a" = "b"
        }
        # (1 unchanged attribute hidden)

      ~ disk {
          ~ size = 10 -> 20
        }

      + label "team" {
          + value = "x"
        }

      ~ network {
            # (1 unchanged attribute hidden)

          ~ subnet {
              ~ cidr = "10.0.2.0/24" -> "10.0.3.0/24"
            }

            # (1 unchanged block hidden)
        }

        # (2 unchanged blocks hidden)
    }"#,
            ),
        ];
        let style = Style { color: false };
        for (name, before, after, want) in cases {
            let got = Differ {
                requires_replace: &[],
            }
            .schema_block(before, after, &server_schema())
            .render(&style, 0, Opts::default());
            assert_eq!(got, want, "case {name}:\n--- got\n{got}\n--- want\n{want}");
        }
    }

    /// Issue 15 item 5: list blocks pair by position (removing the first
    /// of two shows an update and a delete, as Terraform shows it), and a
    /// string that is JSON on one side only is shown whole on each side.
    #[test]
    fn item5_list_blocks_by_position_and_json_to_text() {
        let p1 = r#"{"a":1}"#;
        let two = server(p1, "10.0.2.0/24", 10, &[]);
        let mut one = two.clone();
        if let Some(m) = one.entries().map(|e| (*e).clone()) {
            let mut m = m;
            let net = m["network"].clone();
            let mut nm = (*net.entries().unwrap()).clone();
            let sub = nm["subnet"].elements().unwrap()[1].clone();
            nm.insert("subnet".into(), Value::list(sub.ty().clone(), vec![sub]));
            m.insert("network".into(), Value::object_typed_of(net.ty(), nm));
            m.insert("policy".into(), s("plain"));
            one = Value::object_typed_of(two.ty(), m);
        }
        let got = Differ {
            requires_replace: &[],
        }
        .schema_block(&two, &one, &server_schema())
        .render(&Style { color: false }, 0, Opts::default());
        let want = r#"{
        id       = "srv-web"
        name     = "web"
      ~ policy   = jsonencode(
            {
              - a = 1
            }
        ) -> "plain"
        tags     = {
            "a" = "b"
        }
        # (1 unchanged attribute hidden)

      ~ network {
            # (1 unchanged attribute hidden)

          ~ subnet {
              ~ cidr = "10.0.1.0/24" -> "10.0.2.0/24"
            }
          - subnet {
              - cidr = "10.0.2.0/24" -> null
            }
        }

        # (2 unchanged blocks hidden)
    }"#;
        assert_eq!(got, want, "--- got\n{got}\n--- want\n{want}");
    }
}
