//! The msgpack codec of DynamicValue, type-directed, as Terraform and
//! providers exchange values on the wire.
//!
//! Writing: objects are maps with keys in sorted order; numbers are the most
//! compact integer when exact in i64, float64 when exactly representable,
//! and otherwise decimal text in a string; infinities are float64; unknowns
//! are the extension `d4 00 00`, or extension 12 carrying an integer-keyed
//! map of refinements; a value in a `dynamic` position is the pair
//! `[type JSON as bin, value]`; sets are written in canonical order.
//! Sensitive marks are not part of the wire format and are not written.
//!
//! Reading accepts any key order and any numeric form, treats every
//! extension as unknown (checked before the type), and returns a typed
//! [`DecodeError`] with the path where decoding failed, never panicking on
//! arbitrary bytes.

use crate::{
    typejson, Bound, Entries, Kind, Number, ObjectType, Path, Refinements, Step, Type, Value,
};
use std::collections::btree_map::Entry;
use std::collections::BTreeMap;
use std::fmt;

/// msgpack extension code of a refined unknown.
const EXT_REFINED: i8 = 12;
/// cty refuses refinement payloads larger than this.
const MAX_EXT_PAYLOAD: usize = 1024;
/// Nesting deeper than this is refused instead of risking the stack.
const MAX_DEPTH: usize = 256;

/// A value that does not match the type it is encoded with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodeError {
    pub path: Path,
    pub message: String,
}

/// Bytes that are not a valid encoding of a value of the expected type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    pub path: Path,
    pub message: String,
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot encode value{}: {}", at(&self.path), self.message)
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid msgpack value{}: {}",
            at(&self.path),
            self.message
        )
    }
}

fn at(p: &Path) -> String {
    if p.is_root() {
        String::new()
    } else {
        format!(" at {p}")
    }
}

impl std::error::Error for EncodeError {}
impl std::error::Error for DecodeError {}

// ---------------------------------------------------------------- encoding

/// Encodes `v` as a value of type `ty`.
pub fn encode(v: &Value, ty: &Type) -> Result<Vec<u8>, EncodeError> {
    let mut out = Vec::with_capacity(64);
    enc(&mut out, v, ty).map_err(|mut e| {
        e.path.0.reverse();
        e
    })?;
    Ok(out)
}

/// A failure where it happened; each level it unwinds through adds its
/// step (so the path is built innermost first and reversed at the top,
/// and a value that encodes builds no path at all).
fn enc_fail<T>(message: impl Into<String>) -> Result<T, EncodeError> {
    Err(EncodeError {
        path: Path::root(),
        message: message.into(),
    })
}

/// The failure `e` one step further out, at `step`.
fn under(mut e: EncodeError, step: Step) -> EncodeError {
    e.path.0.push(step);
    e
}

fn enc(out: &mut Vec<u8>, v: &Value, ty: &Type) -> Result<(), EncodeError> {
    if ty.is_dynamic() && !v.ty().is_dynamic() {
        rmp::encode::write_array_len(out, 2).ok();
        rmp::encode::write_bin(out, &typejson::to_bytes(v.ty())).ok();
        return enc(out, v, v.ty());
    }
    match v.kind() {
        Kind::Unknown(r) => {
            write_unknown(out, r.as_deref());
            return Ok(());
        }
        Kind::Null => {
            rmp::encode::write_nil(out).ok();
            return Ok(());
        }
        _ => {}
    }
    match (ty, v.kind()) {
        (Type::String, Kind::String(s)) => {
            rmp::encode::write_str(out, s).ok();
        }
        (Type::Number, Kind::Number(n)) => write_number(out, n),
        (Type::Bool, Kind::Bool(b)) => {
            rmp::encode::write_bool(out, *b).ok();
        }
        (Type::List(t) | Type::Set(t), Kind::Seq(es) | Kind::Set(es)) => {
            rmp::encode::write_array_len(out, es.len() as u32).ok();
            for (i, e) in es.iter().enumerate() {
                enc(out, e, t).map_err(|e| under(e, Step::Index(i as i64)))?;
            }
        }
        (Type::Tuple(ts), Kind::Seq(es)) => {
            if ts.len() != es.len() {
                return enc_fail(format!(
                    "tuple has {} elements, type wants {}",
                    es.len(),
                    ts.len()
                ));
            }
            rmp::encode::write_array_len(out, es.len() as u32).ok();
            for (i, (e, t)) in es.iter().zip(ts.iter()).enumerate() {
                enc(out, e, t).map_err(|e| under(e, Step::Index(i as i64)))?;
            }
        }
        (Type::Map(t), Kind::Map(m)) => {
            rmp::encode::write_map_len(out, m.len() as u32).ok();
            for (k, e) in m.iter() {
                rmp::encode::write_str(out, k).ok();
                enc(out, e, t).map_err(|e| under(e, Step::Key(k.clone())))?;
            }
        }
        (Type::Object(o), Kind::Map(m)) => {
            let attrs = o.attrs();
            rmp::encode::write_map_len(out, attrs.len() as u32).ok();
            // Both are sorted by key, so a conforming object's entries
            // match the type's attributes one by one; after the first
            // that does not, each attribute is looked up.
            let mut given = m.iter();
            let mut lockstep = true;
            for (k, t) in attrs {
                let next = if lockstep {
                    given.next().filter(|(g, _)| *g == k).map(|(_, e)| e)
                } else {
                    None
                };
                lockstep &= next.is_some();
                let Some(e) = next.or_else(|| m.get(k)) else {
                    return enc_fail(format!("missing attribute {k:?}"));
                };
                rmp::encode::write_str(out, k).ok();
                enc(out, e, t).map_err(|e| under(e, Step::Attr(k.clone())))?;
            }
            let extra = if lockstep {
                given.next().map(|(k, _)| k)
            } else {
                m.keys().find(|k| o.attr(k).is_none())
            };
            if let Some(extra) = extra {
                return enc_fail(format!("unexpected attribute {extra:?}"));
            }
        }
        _ => {
            return enc_fail(format!(
                "a {} value cannot be written as {}",
                v.ty().friendly_name(),
                ty.friendly_name()
            ))
        }
    }
    Ok(())
}

fn write_number(out: &mut Vec<u8>, n: &Number) {
    if let Some(i) = n.to_i64() {
        rmp::encode::write_sint(out, i).ok();
    } else if let Some(f) = n.to_f64_exact().or(match n {
        Number::PosInfinity => Some(f64::INFINITY),
        Number::NegInfinity => Some(f64::NEG_INFINITY),
        Number::Finite(_) => None,
    }) {
        rmp::encode::write_f64(out, f).ok();
    } else {
        rmp::encode::write_str(out, &n.to_string()).ok();
    }
}

fn write_unknown(out: &mut Vec<u8>, r: Option<&Refinements>) {
    let Some(r) = r.filter(|r| !r.is_empty()) else {
        out.extend_from_slice(&[0xd4, 0x00, 0x00]);
        return;
    };
    let mut body = Vec::new();
    let mut n = 0u32;
    let mut entries = Vec::new();
    if r.not_null {
        rmp::encode::write_uint(&mut entries, 1).ok();
        rmp::encode::write_bool(&mut entries, false).ok();
        n += 1;
    }
    if let Some(p) = &r.string_prefix {
        rmp::encode::write_uint(&mut entries, 2).ok();
        rmp::encode::write_str(&mut entries, p).ok();
        n += 1;
    }
    for (key, bound) in [(3u64, &r.number_lower), (4, &r.number_upper)] {
        if let Some(b) = bound {
            rmp::encode::write_uint(&mut entries, key).ok();
            rmp::encode::write_array_len(&mut entries, 2).ok();
            write_number(&mut entries, &b.value);
            rmp::encode::write_bool(&mut entries, b.inclusive).ok();
            n += 1;
        }
    }
    for (key, len) in [(5u64, r.length_min), (6, r.length_max)] {
        if let Some(l) = len {
            rmp::encode::write_uint(&mut entries, key).ok();
            rmp::encode::write_uint(&mut entries, l).ok();
            n += 1;
        }
    }
    rmp::encode::write_map_len(&mut body, n).ok();
    body.extend_from_slice(&entries);
    rmp::encode::write_ext_meta(out, body.len() as u32, EXT_REFINED).ok();
    out.extend_from_slice(&body);
}

// ---------------------------------------------------------------- decoding

/// Decodes bytes holding one value of type `ty`. Trailing bytes are an error.
pub fn decode(bytes: &[u8], ty: &Type) -> Result<Value, DecodeError> {
    let mut r = Reader {
        buf: bytes,
        pos: 0,
        plain: !ty.has_dynamic() && !ty.has_optional_markers(),
    };
    let mut path = Path::root();
    let v = dec(&mut r, ty, &mut path, 0)?;
    if r.pos != bytes.len() {
        return Err(DecodeError {
            path,
            message: format!("{} unexpected bytes after the value", bytes.len() - r.pos),
        });
    }
    Ok(v)
}

/// One msgpack item header (payload for scalars, lengths for containers).
enum Item<'a> {
    Nil,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Str(&'a [u8]),
    Bin(&'a [u8]),
    Array(usize),
    Map(usize),
    Ext(i8, &'a [u8]),
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Whether the type being decoded has no `dynamic` and no optional
    /// markers anywhere, so each object decoded takes its type as is
    /// (checked once per value, not once per object).
    plain: bool,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|e| *e <= self.buf.len())
            .ok_or("unexpected end of data")?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn be(&mut self, n: usize) -> Result<u64, String> {
        Ok(self
            .take(n)?
            .iter()
            .fold(0u64, |acc, b| (acc << 8) | u64::from(*b)))
    }

    fn item(&mut self) -> Result<Item<'a>, String> {
        let m = self.take(1)?[0];
        Ok(match m {
            0x00..=0x7f => Item::UInt(u64::from(m)),
            0x80..=0x8f => Item::Map(usize::from(m & 0x0f)),
            0x90..=0x9f => Item::Array(usize::from(m & 0x0f)),
            0xa0..=0xbf => Item::Str(self.take(usize::from(m & 0x1f))?),
            0xc0 => Item::Nil,
            0xc2 => Item::Bool(false),
            0xc3 => Item::Bool(true),
            0xc4..=0xc6 => {
                let n = self.be(1 << (m - 0xc4))? as usize;
                Item::Bin(self.take(n)?)
            }
            0xc7..=0xc9 => {
                let n = self.be(1 << (m - 0xc7))? as usize;
                let t = self.take(1)?[0] as i8;
                Item::Ext(t, self.take(n)?)
            }
            0xca => Item::Float(f64::from(f32::from_bits(self.be(4)? as u32))),
            0xcb => Item::Float(f64::from_bits(self.be(8)?)),
            0xcc..=0xcf => Item::UInt(self.be(1 << (m - 0xcc))?),
            0xd0 => Item::Int(i64::from(self.be(1)? as u8 as i8)),
            0xd1 => Item::Int(i64::from(self.be(2)? as u16 as i16)),
            0xd2 => Item::Int(i64::from(self.be(4)? as u32 as i32)),
            0xd3 => Item::Int(self.be(8)? as i64),
            0xd4..=0xd8 => {
                let t = self.take(1)?[0] as i8;
                Item::Ext(t, self.take(1 << (m - 0xd4))?)
            }
            0xd9..=0xdb => {
                let n = self.be(1 << (m - 0xd9))? as usize;
                Item::Str(self.take(n)?)
            }
            0xdc | 0xdd => Item::Array(self.be(2 << (m - 0xdc))? as usize),
            0xde | 0xdf => Item::Map(self.be(2 << (m - 0xde))? as usize),
            0xe0..=0xff => Item::Int(i64::from(m as i8)),
            0xc1 => return Err("invalid marker 0xc1".into()),
        })
    }

    /// Skips one whole item (for refinement keys we do not know).
    fn skip(&mut self, depth: usize) -> Result<(), String> {
        if depth > MAX_DEPTH {
            return Err("value nested too deeply".into());
        }
        match self.item()? {
            Item::Array(n) => (0..n).try_for_each(|_| self.skip(depth + 1)),
            Item::Map(n) => (0..n * 2).try_for_each(|_| self.skip(depth + 1)),
            _ => Ok(()),
        }
    }
}

fn dec(r: &mut Reader<'_>, ty: &Type, path: &mut Path, depth: usize) -> Result<Value, DecodeError> {
    let fail = |path: &Path, m: String| DecodeError {
        path: path.clone(),
        message: m,
    };
    if depth > MAX_DEPTH {
        return Err(fail(path, "value nested too deeply".into()));
    }
    let item = r.item().map_err(|m| fail(path, m))?;
    match item {
        Item::Ext(code, payload) => {
            return unknown_from_ext(ty, code, payload).map_err(|m| fail(path, m))
        }
        Item::Nil => return Ok(Value::null(ty.clone())),
        _ => {}
    }
    let wrong = |path: &Path, what: &str| {
        fail(
            path,
            format!("{} required, found {what}", ty.friendly_name()),
        )
    };
    match (ty, item) {
        (Type::Dynamic, Item::Array(2)) => {
            let ty_bytes = match r.item().map_err(|m| fail(path, m))? {
                Item::Bin(b) | Item::Str(b) => b,
                _ => {
                    return Err(fail(
                        path,
                        "dynamic value must start with its type as JSON".into(),
                    ))
                }
            };
            let actual = typejson::from_bytes(ty_bytes).map_err(|e| fail(path, e.to_string()))?;
            if actual.is_dynamic() {
                return Err(fail(
                    path,
                    "dynamic value wrapper must name a concrete type".into(),
                ));
            }
            let plain = std::mem::replace(
                &mut r.plain,
                !actual.has_dynamic() && !actual.has_optional_markers(),
            );
            let v = dec(r, &actual, path, depth + 1);
            r.plain = plain;
            v
        }
        (Type::Dynamic, _) => Err(fail(
            path,
            "dynamic value must be a [type, value] pair".into(),
        )),
        (Type::String, Item::Str(s)) => match std::str::from_utf8(s) {
            Ok(s) => Ok(Value::string(s)),
            Err(_) => Err(fail(path, "string is not valid UTF-8".into())),
        },
        (Type::Number, item) => number_from(item)
            .map(Value::number)
            .ok_or_else(|| wrong(path, "a non-number")),
        (Type::Bool, Item::Bool(b)) => Ok(Value::bool(b)),
        (Type::List(t) | Type::Set(t), Item::Array(n)) => {
            let mut es = Vec::with_capacity(n.min(r.buf.len() - r.pos));
            for i in 0..n {
                path.push(Step::Index(i as i64));
                es.push(dec(r, t, path, depth + 1)?);
                path.pop();
            }
            Ok(if matches!(ty, Type::List(_)) {
                Value::list((**t).clone(), es)
            } else {
                Value::set((**t).clone(), es)
            })
        }
        (Type::Tuple(ts), Item::Array(n)) => {
            if n != ts.len() {
                return Err(fail(
                    path,
                    format!("tuple of {} elements required, found {n}", ts.len()),
                ));
            }
            let mut es = Vec::with_capacity(n);
            for (i, t) in ts.iter().enumerate() {
                path.push(Step::Index(i as i64));
                es.push(dec(r, t, path, depth + 1)?);
                path.pop();
            }
            Ok(Value::tuple(es))
        }
        (Type::Map(t), Item::Map(n)) => {
            let mut m = BTreeMap::new();
            for _ in 0..n {
                let k = key(r).map_err(|e| fail(path, e))?;
                path.push(Step::Key(k));
                let v = dec(r, t, path, depth + 1)?;
                insert_popped(&mut m, path, v)
                    .map_err(|k| fail(path, format!("duplicate map key {k:?}")))?;
            }
            Ok(Value::map((**t).clone(), m))
        }
        (Type::Object(o), Item::Map(n)) => dec_object(r, ty, o, n, path, depth),
        (_, Item::Array(_)) => Err(wrong(path, "an array")),
        (_, Item::Map(_)) => Err(wrong(path, "a map")),
        (_, Item::Str(_)) => Err(wrong(path, "a string")),
        (_, Item::Bool(_)) => Err(wrong(path, "a bool")),
        (_, Item::Bin(_)) => Err(wrong(path, "binary data")),
        (_, _) => Err(wrong(path, "a number")),
    }
}

/// An object of `n` entries (the keys and values follow), kept out of
/// [`dec`] so that the recursion's frame stays small.
#[inline(never)]
fn dec_object(
    r: &mut Reader<'_>,
    ty: &Type,
    o: &ObjectType,
    n: usize,
    path: &mut Path,
    depth: usize,
) -> Result<Value, DecodeError> {
    let fail = |path: &Path, m: String| DecodeError {
        path: path.clone(),
        message: m,
    };
    // Gathered in a vector: encoders write attributes in key order,
    // so it is usually sorted already. Every key is one of the
    // type's attributes, so a duplicate shows within as many keys.
    let mut m: Vec<(String, Value)> = Vec::with_capacity(o.attrs().len());
    let mut sorted = true;
    // The type's attributes in order, as the keys usually come:
    // each key is first tried against the next attribute.
    let mut expect = o.attrs().iter().peekable();
    for _ in 0..n {
        // The expected name's bytes: its copy needs no UTF-8 check.
        let raw = key_bytes(r).map_err(|e| fail(path, e))?;
        let (k, next) = match expect.next_if(|(a, _)| a.as_bytes() == raw) {
            Some((a, t)) => (a.clone(), Some(t)),
            None => {
                let k = String::from_utf8(raw.to_vec())
                    .map_err(|_| fail(path, "map key is not valid UTF-8".into()))?;
                let t = crate::take_named(&mut expect, &k);
                (k, t)
            }
        };
        let Some(t) = next.or_else(|| o.attr(&k)) else {
            return Err(fail(path, format!("unsupported attribute {k:?}")));
        };
        path.push(Step::Attr(k));
        let v = dec(r, t, path, depth + 1)?;
        let k = pop_key(path);
        if m.last().is_some_and(|(last, _)| *last >= k) {
            if m.iter().any(|(seen, _)| *seen == k) {
                return Err(fail(path, format!("duplicate attribute {k:?}")));
            }
            sorted = false;
        }
        m.push((k, v));
    }
    if !sorted {
        m.sort_by(|a, b| a.0.cmp(&b.0));
    }
    if m.len() != o.attrs().len() {
        // Absent attributes are null: merged in, both sides sorted.
        let mut given = m.into_iter().peekable();
        let mut all = Vec::with_capacity(o.attrs().len());
        for (k, t) in o.attrs() {
            match given.next_if(|(g, _)| g == k) {
                Some(pair) => all.push(pair),
                None => all.push((k.clone(), Value::null(t.clone()))),
            }
        }
        m = all;
    }
    let entries = Entries::from_sorted(m);
    Ok(if r.plain {
        Value::object_typed_plain(ty, entries)
    } else {
        Value::object_typed_of(ty, entries)
    })
}

/// Moves the key of the path's last step (pushed while its value
/// decoded) into `m` with `v`: one allocation per key, not three. An
/// error is the key `m` already had.
fn insert_popped(m: &mut BTreeMap<String, Value>, path: &mut Path, v: Value) -> Result<(), String> {
    match m.entry(pop_key(path)) {
        Entry::Vacant(e) => {
            e.insert(v);
            Ok(())
        }
        Entry::Occupied(e) => Err(e.key().clone()),
    }
}

/// The key of the path's last step, taken off the path (the caller
/// pushed it while the key's value decoded).
fn pop_key(path: &mut Path) -> String {
    match path.pop() {
        Some(Step::Attr(k) | Step::Key(k)) => k,
        _ => unreachable!("the caller pushed the key's step"),
    }
}

fn key_bytes<'a>(r: &mut Reader<'a>) -> Result<&'a [u8], String> {
    match r.item()? {
        Item::Str(s) => Ok(s),
        _ => Err("map keys must be strings".into()),
    }
}

fn key(r: &mut Reader<'_>) -> Result<String, String> {
    match r.item()? {
        Item::Str(s) => {
            String::from_utf8(s.to_vec()).map_err(|_| "map key is not valid UTF-8".to_string())
        }
        _ => Err("map keys must be strings".into()),
    }
}

fn number_from(item: Item<'_>) -> Option<Number> {
    match item {
        Item::Int(i) => Some(Number::from_i64(i)),
        Item::UInt(u) => Some(Number::from_u64(u)),
        Item::Float(f) => Number::from_f64(f),
        Item::Str(s) => Number::parse(std::str::from_utf8(s).ok()?).ok(),
        _ => None,
    }
}

fn unknown_from_ext(ty: &Type, code: i8, payload: &[u8]) -> Result<Value, String> {
    if payload.len() > MAX_EXT_PAYLOAD {
        return Err("unknown value refinements are too long".into());
    }
    if code != EXT_REFINED {
        if payload.len() > 1 {
            return Err(format!("unsupported msgpack extension {code}"));
        }
        return Ok(Value::unknown(ty.clone()));
    }
    let mut r = Reader {
        buf: payload,
        pos: 0,
        plain: false,
    };
    let Item::Map(n) = r.item()? else {
        return Err("refinements must be a map".into());
    };
    let mut out = Refinements::default();
    for _ in 0..n {
        let k = match r.item()? {
            Item::UInt(k) => k as i64,
            Item::Int(k) => k,
            _ => return Err("refinement keys must be integers".into()),
        };
        match k {
            1 => match r.item()? {
                Item::Bool(b) => out.not_null = !b,
                _ => return Err("nullness refinement must be a bool".into()),
            },
            2 => match r.item()? {
                Item::Str(s) => out.string_prefix = Some(String::from_utf8_lossy(s).into_owned()),
                _ => return Err("string prefix refinement must be a string".into()),
            },
            3 | 4 => {
                let Item::Array(2) = r.item()? else {
                    return Err("number bound must be [number, inclusive]".into());
                };
                let value = number_from(r.item()?).ok_or("number bound must hold a number")?;
                let Item::Bool(inclusive) = r.item()? else {
                    return Err("number bound inclusiveness must be a bool".into());
                };
                let b = Some(Bound { value, inclusive });
                if k == 3 {
                    out.number_lower = b;
                } else {
                    out.number_upper = b;
                }
            }
            5 | 6 => {
                let l = match r.item()? {
                    Item::UInt(u) => u,
                    Item::Int(i) if i >= 0 => i as u64,
                    _ => return Err("length bound must be a non-negative integer".into()),
                };
                if k == 5 {
                    out.length_min = Some(l);
                } else {
                    out.length_max = Some(l);
                }
            }
            _ => r.skip(0)?,
        }
    }
    if out.string_prefix.is_some() {
        out.not_null = true;
    }
    Ok(Value::unknown_refined(ty.clone(), out))
}

#[cfg(test)]
#[path = "msgpack_tests.rs"]
mod tests;
