//! terrane values ⇄ Pulumi's `google.protobuf.Struct`/`Value`.
//!
//! Pulumi's data-exchange types are JSON's plus five special objects, each
//! a Struct whose [`SIG_KEY`] holds a signature: secret, resource
//! reference, output value, asset and archive; and unknowns, the string
//! [`UNKNOWN`]. They map onto terrane's value model so:
//!
//! | Pulumi | terrane |
//! |---|---|
//! | null, bool, number, string | null, bool, number, string |
//! | array / object | list, tuple or set / map or object (by [`Shape`]) |
//! | unknown | unknown of the shape's type |
//! | secret `{value}` | the value, marked sensitive |
//! | output value `{value?, secret?, dependencies}` | the value (unknown without one), sensitive if secret |
//! | resource reference `{urn, id?, packageVersion}` | its ID (unknown when empty), else its URN (decode only, as the guide says to treat them) |
//! | asset `{hash, text\|path\|uri}` | object `{hash, text, path, uri}` ([`asset_type`]) |
//! | archive `{hash, assets\|path\|uri}` | object `{hash, assets, path, uri}` ([`archive_type`]) |
//!
//! The [`Shape`] is the Pulumi schema type of the position (or
//! [`Shape::Any`]): it picks list vs tuple and map vs object, and tells
//! which terrane objects are assets and archives on the way out. Errors
//! name the property path (`a.b[0]`).

use std::collections::BTreeMap;
use std::fmt;

use prost_types::value::Kind as PKind;
use prost_types::{ListValue, Struct, Value as PValue};
use terrane_value::{Entries, Kind, Number, Type, Value};

/// The key of the signature of a special object.
pub const SIG_KEY: &str = "4dabf18193072939515e22adb298388d";
pub const SECRET_SIG: &str = "1b47061264138c4ac30d75fd1eb44270";
pub const RESOURCE_REF_SIG: &str = "5cf8f73096256a8f31e491e813e4eb8e";
pub const OUTPUT_VALUE_SIG: &str = "d0e6a833031e9bbcd3f4e8bde6ca49a4";
pub const ASSET_SIG: &str = "c44067f5952c0a294b673a41bacd8c17";
pub const ARCHIVE_SIG: &str = "0def7320c3a5731c473e5ecbe6d01bc7";
/// The string that stands for an unknown value.
pub const UNKNOWN: &str = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/// The Pulumi schema type of a position, as far as the codec needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shape {
    /// No schema type (`pulumi.json#/Any`, or none known): arrays decode
    /// to tuples and objects to objects.
    Any,
    Bool,
    Number,
    /// A number that must be integral.
    Integer,
    String,
    Array(Box<Shape>),
    /// A map with string keys (`additionalProperties`).
    Map(Box<Shape>),
    /// An object type with these properties (by wire name).
    Object(BTreeMap<String, Shape>),
    Asset,
    Archive,
    AssetOrArchive,
}

/// The terrane type of an asset: `{hash, text, path, uri}`, all strings;
/// exactly one of text/path/uri is set.
pub fn asset_type() -> Type {
    Type::object([
        ("hash", Type::String),
        ("path", Type::String),
        ("text", Type::String),
        ("uri", Type::String),
    ])
}

/// The terrane type of an archive: `{hash, assets, path, uri}`, `assets`
/// an object of assets and archives by name; exactly one of assets/path/uri
/// is set.
pub fn archive_type() -> Type {
    Type::object([
        ("assets", Type::Dynamic),
        ("hash", Type::String),
        ("path", Type::String),
        ("uri", Type::String),
    ])
}

impl Shape {
    /// The terrane type of values of this shape.
    pub fn ty(&self) -> Type {
        match self {
            Shape::Any | Shape::AssetOrArchive => Type::Dynamic,
            Shape::Bool => Type::Bool,
            Shape::Number | Shape::Integer => Type::Number,
            Shape::String => Type::String,
            Shape::Array(s) => Type::list(s.ty()),
            Shape::Map(s) => Type::map(s.ty()),
            Shape::Object(props) => Type::object(props.iter().map(|(k, s)| (k.clone(), s.ty()))),
            Shape::Asset => asset_type(),
            Shape::Archive => archive_type(),
        }
    }
}

/// The contents of `http(s)://` URIs, fetched by the caller, by URI as
/// written.
pub type Fetched = BTreeMap<String, Vec<u8>>;

/// How to encode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EncodeOptions<'a> {
    /// Send sensitive values as secrets (the plugin accepted secrets);
    /// otherwise they go as plain values.
    pub keep_secrets: bool,
    /// Hash `http(s)://` assets and archives that come without a hash, as
    /// Pulumi's engine does: their contents are looked up here, and one
    /// missing is the error [`CodecError::fetch`] naming the URI to fetch
    /// (then encode again). None: such assets and archives go without a
    /// hash.
    pub fetched: Option<&'a Fetched>,
}

impl Default for EncodeOptions<'_> {
    fn default() -> Self {
        EncodeOptions {
            keep_secrets: true,
            fetched: None,
        }
    }
}

/// A value that does not fit its shape or Pulumi's value model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {message}", if path.is_empty() { "value" } else { path.as_str() })]
pub struct CodecError {
    /// The property path, in Pulumi's syntax (`a.b[0]["odd key"]`).
    pub path: String,
    pub message: String,
    /// The `http(s)://` URI whose contents the encoding needs and
    /// [`EncodeOptions::fetched`] lacks.
    pub fetch: Option<String>,
}

/// A property path under construction.
#[derive(Clone, Default)]
struct PathBuf(Vec<Seg>);

#[derive(Clone)]
enum Seg {
    Key(String),
    Index(usize),
}

impl PathBuf {
    fn key(&self, k: &str) -> PathBuf {
        let mut p = self.clone();
        p.0.push(Seg::Key(k.to_string()));
        p
    }
    fn index(&self, i: usize) -> PathBuf {
        let mut p = self.clone();
        p.0.push(Seg::Index(i));
        p
    }
    fn err(&self, message: impl Into<String>) -> CodecError {
        CodecError {
            path: self.to_string(),
            message: message.into(),
            fetch: None,
        }
    }
}

impl fmt::Display for PathBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, seg) in self.0.iter().enumerate() {
            match seg {
                Seg::Key(k) if is_identifier(k) => {
                    if i > 0 {
                        f.write_str(".")?;
                    }
                    f.write_str(k)?;
                }
                Seg::Key(k) => write!(f, "[{k:?}]")?,
                Seg::Index(n) => write!(f, "[{n}]")?,
            }
        }
        Ok(())
    }
}

fn is_identifier(k: &str) -> bool {
    let mut chars = k.chars();
    chars
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '$')
}

// ---- decode -----------------------------------------------------------

/// Decodes a property object (a Struct: resource inputs or state) of the
/// given shape (usually [`Shape::Object`] or [`Shape::Any`]).
pub fn decode_struct(s: &Struct, shape: &Shape) -> Result<Value, CodecError> {
    let wire = PValue {
        kind: Some(PKind::StructValue(s.clone())),
    };
    decode(&wire, shape)
}

/// Decodes one wire value of the given shape.
pub fn decode(v: &PValue, shape: &Shape) -> Result<Value, CodecError> {
    decode_at(v, shape, &PathBuf::default())
}

fn decode_at(v: &PValue, shape: &Shape, path: &PathBuf) -> Result<Value, CodecError> {
    let null = PKind::NullValue(0);
    let kind = v.kind.as_ref().unwrap_or(&null);
    match kind {
        PKind::NullValue(_) => return Ok(Value::null(shape.ty())),
        PKind::StringValue(s) if s == UNKNOWN => return Ok(Value::unknown(shape.ty())),
        PKind::StructValue(s) => {
            if let Some(sig) = s.fields.get(SIG_KEY) {
                return decode_special(s, sig, shape, path);
            }
        }
        _ => {}
    }
    let mismatch = |want: &str| path.err(format!("expected {want}, got {}", wire_kind(kind)));
    match (shape, kind) {
        (Shape::Bool | Shape::Any, PKind::BoolValue(b)) => Ok(Value::bool(*b)),
        (Shape::Number | Shape::Any, PKind::NumberValue(n)) => Ok(Value::number(number(*n, path)?)),
        (Shape::Integer, PKind::NumberValue(n)) => {
            if n.fract() != 0.0 || !n.is_finite() {
                return Err(path.err(format!("expected an integer, got {n}")));
            }
            Ok(Value::number(number(*n, path)?))
        }
        (Shape::String | Shape::Any, PKind::StringValue(s)) => Ok(Value::string(s.as_str())),
        (Shape::Array(elem), PKind::ListValue(l)) => {
            let elems = decode_list(l, |_| elem, path)?;
            if elem.ty().has_dynamic() {
                Ok(Value::tuple(elems))
            } else {
                Ok(Value::list(elem.ty(), elems))
            }
        }
        (Shape::Any, PKind::ListValue(l)) => {
            Ok(Value::tuple(decode_list(l, |_| &Shape::Any, path)?))
        }
        (Shape::Map(elem), PKind::StructValue(s)) => {
            let mut entries = BTreeMap::new();
            for (k, v) in &s.fields {
                entries.insert(k.clone(), decode_at(v, elem, &path.key(k))?);
            }
            if elem.ty().has_dynamic() {
                Ok(Value::object(entries))
            } else {
                Ok(Value::map(elem.ty(), entries))
            }
        }
        (Shape::Any, PKind::StructValue(s)) => {
            let mut attrs = BTreeMap::new();
            for (k, v) in &s.fields {
                attrs.insert(k.clone(), decode_at(v, &Shape::Any, &path.key(k))?);
            }
            Ok(Value::object(attrs))
        }
        (Shape::Object(props), PKind::StructValue(s)) => {
            if let Some(extra) = s.fields.keys().find(|k| !props.contains_key(*k)) {
                return Err(path
                    .key(extra)
                    .err("unexpected property: the schema has no such property"));
            }
            let mut attrs = BTreeMap::new();
            for (k, p) in props {
                let v = match s.fields.get(k) {
                    Some(v) => decode_at(v, p, &path.key(k))?,
                    None => Value::null(p.ty()),
                };
                attrs.insert(k.clone(), v);
            }
            Ok(Value::object_typed(&shape.ty(), attrs))
        }
        (Shape::Bool, _) => Err(mismatch("a bool")),
        (Shape::Number, _) => Err(mismatch("a number")),
        (Shape::Integer, _) => Err(mismatch("an integer")),
        (Shape::String, _) => Err(mismatch("a string")),
        (Shape::Array(_), _) => Err(mismatch("an array")),
        (Shape::Map(_) | Shape::Object(_), _) => Err(mismatch("an object")),
        (Shape::Asset, _) => Err(mismatch("an asset")),
        (Shape::Archive, _) => Err(mismatch("an archive")),
        (Shape::AssetOrArchive, _) => Err(mismatch("an asset or archive")),
        (Shape::Any, _) => Err(mismatch("a value")),
    }
}

fn decode_list<'s>(
    l: &ListValue,
    elem: impl Fn(usize) -> &'s Shape,
    path: &PathBuf,
) -> Result<Vec<Value>, CodecError> {
    l.values
        .iter()
        .enumerate()
        .map(|(i, v)| decode_at(v, elem(i), &path.index(i)))
        .collect()
}

fn number(n: f64, path: &PathBuf) -> Result<Number, CodecError> {
    Number::from_f64(n).ok_or_else(|| path.err("NaN is not a number terrane can hold"))
}

fn wire_kind(k: &PKind) -> &'static str {
    match k {
        PKind::NullValue(_) => "null",
        PKind::NumberValue(_) => "a number",
        PKind::StringValue(_) => "a string",
        PKind::BoolValue(_) => "a bool",
        PKind::StructValue(_) => "an object",
        PKind::ListValue(_) => "an array",
    }
}

fn field_str<'a>(s: &'a Struct, key: &str) -> Option<&'a str> {
    match s.fields.get(key)?.kind.as_ref()? {
        PKind::StringValue(v) => Some(v),
        _ => None,
    }
}

fn decode_special(
    s: &Struct,
    sig: &PValue,
    shape: &Shape,
    path: &PathBuf,
) -> Result<Value, CodecError> {
    let Some(PKind::StringValue(sig)) = &sig.kind else {
        return Err(path.err("special object whose signature is not a string"));
    };
    let absent = PValue {
        kind: Some(PKind::NullValue(0)),
    };
    match sig.as_str() {
        SECRET_SIG => {
            let inner = s.fields.get("value").unwrap_or(&absent);
            Ok(decode_at(inner, shape, path)?.mark_sensitive())
        }
        OUTPUT_VALUE_SIG => {
            let v = match s.fields.get("value") {
                Some(inner) => decode_at(inner, shape, path)?,
                None => Value::unknown(shape.ty()),
            };
            let secret = matches!(
                s.fields.get("secret").and_then(|v| v.kind.as_ref()),
                Some(PKind::BoolValue(true))
            );
            Ok(if secret { v.mark_sensitive() } else { v })
        }
        RESOURCE_REF_SIG => {
            if !matches!(shape, Shape::Any | Shape::String) {
                return Err(path.err("a resource reference where the schema wants no string"));
            }
            match (field_str(s, "id"), field_str(s, "urn")) {
                (Some(""), _) => Ok(Value::unknown(Type::String)),
                (Some(id), _) if id == UNKNOWN => Ok(Value::unknown(Type::String)),
                (Some(id), _) => Ok(Value::string(id)),
                (None, Some(urn)) => Ok(Value::string(urn)),
                (None, None) => Err(path.err("resource reference without a URN")),
            }
        }
        ASSET_SIG => {
            if !matches!(shape, Shape::Any | Shape::Asset | Shape::AssetOrArchive) {
                return Err(path.err("an asset where the schema wants none"));
            }
            Ok(decode_blob(
                s,
                ["path", "text", "uri"],
                &asset_type(),
                path,
            )?)
        }
        ARCHIVE_SIG => {
            if !matches!(shape, Shape::Any | Shape::Archive | Shape::AssetOrArchive) {
                return Err(path.err("an archive where the schema wants none"));
            }
            let mut v = decode_blob(s, ["path", "uri", "hash"], &archive_type(), path)?;
            if let Some(assets) = s.fields.get("assets") {
                let Some(PKind::StructValue(members)) = &assets.kind else {
                    return Err(path
                        .key("assets")
                        .err("an archive's assets must be an object"));
                };
                let mut out = BTreeMap::new();
                for (k, m) in &members.fields {
                    out.insert(
                        k.clone(),
                        decode_at(m, &Shape::AssetOrArchive, &path.key("assets").key(k))?,
                    );
                }
                let mut attrs = v.entries().cloned().unwrap_or_default();
                attrs.insert("assets".into(), Value::object(out));
                v = Value::object_typed_of(&archive_type(), attrs);
            }
            Ok(v)
        }
        other => Err(path.err(format!("unknown special object signature {other:?}"))),
    }
}

/// An asset or archive object from the wire: `hash` and the string members.
fn decode_blob<const N: usize>(
    s: &Struct,
    members: [&str; N],
    ty: &Type,
    path: &PathBuf,
) -> Result<Value, CodecError> {
    let Type::Object(ot) = ty else {
        unreachable!("asset and archive types are objects")
    };
    let mut attrs = BTreeMap::new();
    for (name, aty) in ot.attrs() {
        attrs.insert(name.clone(), Value::null(aty.clone()));
    }
    for name in members.into_iter().chain(["hash"]) {
        match s.fields.get(name).and_then(|v| v.kind.as_ref()) {
            None | Some(PKind::NullValue(_)) => {}
            Some(PKind::StringValue(v)) if v.is_empty() && name != "hash" => {}
            Some(PKind::StringValue(v)) => {
                attrs.insert(name.to_string(), Value::string(v.as_str()));
            }
            Some(_) => return Err(path.key(name).err("must be a string")),
        }
    }
    Ok(Value::object_typed(ty, attrs))
}

// ---- encode -----------------------------------------------------------

/// Encodes a property object (resource inputs or state) as a Struct.
pub fn encode_struct(
    v: &Value,
    shape: &Shape,
    opts: EncodeOptions<'_>,
) -> Result<Struct, CodecError> {
    let path = PathBuf::default();
    match encode_at(v, shape, opts, false, &path)?.kind {
        Some(PKind::StructValue(s)) => Ok(s),
        _ => Err(path.err("a property object must be a known, non-null, non-secret object")),
    }
}

/// Encodes one value of the given shape.
pub fn encode(v: &Value, shape: &Shape, opts: EncodeOptions<'_>) -> Result<PValue, CodecError> {
    encode_at(v, shape, opts, false, &PathBuf::default())
}

fn pv(kind: PKind) -> PValue {
    PValue { kind: Some(kind) }
}

fn special(sig: &str, fields: impl IntoIterator<Item = (String, PValue)>) -> PValue {
    let mut s = Struct::default();
    s.fields
        .insert(SIG_KEY.into(), pv(PKind::StringValue(sig.into())));
    s.fields.extend(fields);
    pv(PKind::StructValue(s))
}

fn encode_at(
    v: &Value,
    shape: &Shape,
    opts: EncodeOptions<'_>,
    in_secret: bool,
    path: &PathBuf,
) -> Result<PValue, CodecError> {
    if v.is_sensitive() && opts.keep_secrets && !in_secret {
        let inner = encode_at(v, shape, opts, true, path)?;
        return Ok(special(SECRET_SIG, [("value".to_string(), inner)]));
    }
    let mismatch =
        |want: &str| path.err(format!("expected {want}, got a value of type {}", v.ty()));
    match v.kind() {
        Kind::Null => return Ok(pv(PKind::NullValue(0))),
        Kind::Unknown(_) => return Ok(pv(PKind::StringValue(UNKNOWN.into()))),
        _ => {}
    }
    match shape {
        Shape::Asset => return encode_blob(v, false, opts, in_secret, path),
        Shape::Archive => return encode_blob(v, true, opts, in_secret, path),
        Shape::AssetOrArchive => {
            let archive = v.get_attr("assets").is_some();
            return encode_blob(v, archive, opts, in_secret, path);
        }
        _ => {}
    }
    match (v.kind(), shape) {
        (Kind::Bool(b), Shape::Bool | Shape::Any) => Ok(pv(PKind::BoolValue(*b))),
        (Kind::Number(n), Shape::Number | Shape::Integer | Shape::Any) => {
            if matches!(shape, Shape::Integer) && !n.is_integer() {
                return Err(path.err(format!("expected an integer, got {n}")));
            }
            Ok(pv(PKind::NumberValue(n.to_f64_lossy())))
        }
        (Kind::String(s), Shape::String | Shape::Any) => Ok(pv(PKind::StringValue(s.to_string()))),
        (Kind::Seq(elems) | Kind::Set(elems), Shape::Array(_) | Shape::Any) => {
            let elem = match shape {
                Shape::Array(e) => e.as_ref(),
                _ => &Shape::Any,
            };
            let values = elems
                .iter()
                .enumerate()
                .map(|(i, e)| encode_at(e, elem, opts, in_secret, &path.index(i)))
                .collect::<Result<_, _>>()?;
            Ok(pv(PKind::ListValue(ListValue { values })))
        }
        (Kind::Map(entries), Shape::Map(_) | Shape::Object(_) | Shape::Any) => {
            let mut s = Struct::default();
            for (k, e) in entries.iter() {
                let p = path.key(k);
                let es = match shape {
                    Shape::Map(e) => e.as_ref(),
                    Shape::Object(props) => props.get(k).ok_or_else(|| {
                        p.err("unexpected property: the schema has no such property")
                    })?,
                    _ => &Shape::Any,
                };
                // Pulumi leaves out the properties an object does not set.
                if matches!(shape, Shape::Object(_)) && e.is_null() && !e.is_sensitive() {
                    continue;
                }
                s.fields
                    .insert(k.clone(), encode_at(e, es, opts, in_secret, &p)?);
            }
            Ok(pv(PKind::StructValue(s)))
        }
        (_, Shape::Bool) => Err(mismatch("a bool")),
        (_, Shape::Number) => Err(mismatch("a number")),
        (_, Shape::Integer) => Err(mismatch("an integer")),
        (_, Shape::String) => Err(mismatch("a string")),
        (_, Shape::Array(_)) => Err(mismatch("a list")),
        (_, Shape::Map(_) | Shape::Object(_)) => Err(mismatch("an object")),
        _ => Err(mismatch("a value")),
    }
}

fn encode_blob(
    v: &Value,
    archive: bool,
    opts: EncodeOptions<'_>,
    in_secret: bool,
    path: &PathBuf,
) -> Result<PValue, CodecError> {
    let what = if archive { "an archive" } else { "an asset" };
    let Kind::Map(attrs) = v.kind() else {
        return Err(path.err(format!(
            "expected {what} object, got a value of type {}",
            v.ty()
        )));
    };
    let members: &[&str] = if archive {
        &["assets", "hash", "path", "uri"]
    } else {
        &["hash", "path", "text", "uri"]
    };
    if let Some(extra) = attrs.keys().find(|k| !members.contains(&k.as_str())) {
        return Err(path.key(extra).err(format!("{what} has no such member")));
    }
    let mut fields = Vec::new();
    if attrs.get("hash").is_none_or(Value::is_null) {
        let hash = if archive {
            archive_hash(attrs, opts, path)?
        } else {
            asset_hash(attrs, opts, path)?
        };
        if let Some(h) = hash {
            fields.push(("hash".to_string(), pv(PKind::StringValue(h))));
        }
    }
    for (k, a) in attrs.iter() {
        if a.is_null() {
            continue;
        }
        let p = path.key(k);
        if k == "assets" {
            let Kind::Map(children) = a.kind() else {
                return Err(p.err("an archive's assets must be an object"));
            };
            let mut s = Struct::default();
            for (name, child) in children.iter() {
                let e = encode_at(child, &Shape::AssetOrArchive, opts, in_secret, &p.key(name))?;
                s.fields.insert(name.clone(), e);
            }
            fields.push((k.clone(), pv(PKind::StructValue(s))));
        } else {
            fields.push((
                k.clone(),
                encode_at(a, &Shape::String, opts, in_secret, &p)?,
            ));
        }
    }
    Ok(special(
        if archive { ARCHIVE_SIG } else { ASSET_SIG },
        fields,
    ))
}

/// The contents at `uri` for hashing: a `file://` file read here, an
/// `http(s)://` one looked up in [`EncodeOptions::fetched`] (Ok(None)
/// without a map, the error naming the URI to fetch when the map lacks
/// it). `localhost_ok` as [`crate::uri::source`].
fn uri_contents(
    uri: &str,
    localhost_ok: bool,
    opts: EncodeOptions<'_>,
    path: &PathBuf,
) -> Result<Option<Vec<u8>>, CodecError> {
    let at = path.key("uri");
    match crate::uri::source(uri, localhost_ok).map_err(|e| at.err(e))? {
        crate::uri::Source::Local(f) => std::fs::read(&f).map(Some).map_err(|e| {
            at.err(format!(
                "cannot read {uri:?} ({}) to hash it: {e}",
                f.display()
            ))
        }),
        crate::uri::Source::Remote(u) => match opts.fetched {
            None => Ok(None),
            Some(m) => match m.get(&u) {
                Some(b) => Ok(Some(b.clone())),
                None => Err(CodecError {
                    fetch: Some(u.clone()),
                    ..at.err(format!("{u:?} has not been fetched"))
                }),
            },
        },
    }
}

/// The SHA-256 (hex) of an asset's contents when it has none, as Pulumi's
/// engine adds it before sending an asset: of its text, of the file at its
/// path, or of what its URI holds (a file that cannot be read is an error
/// naming it). An asset whose contents are not known yet goes without.
fn asset_hash(
    attrs: &Entries,
    opts: EncodeOptions<'_>,
    path: &PathBuf,
) -> Result<Option<String>, CodecError> {
    use sha2::Digest as _;
    Ok(asset_contents(attrs, opts, path)?.map(|b| hex::encode(sha2::Sha256::digest(&b))))
}

/// An asset's contents (see [`asset_hash`]); None where they are not at
/// hand (unknown, or a URI no one fetches).
fn asset_contents(
    attrs: &Entries,
    opts: EncodeOptions<'_>,
    path: &PathBuf,
) -> Result<Option<Vec<u8>>, CodecError> {
    if ["path", "text", "uri"].iter().any(|k| unknown_in(attrs, k)) {
        return Ok(None);
    }
    if let Some(text) = attrs.get("text").filter(|v| !v.is_null()) {
        return Ok(text.unmark_deep().as_str().map(|t| t.as_bytes().to_vec()));
    }
    if let Some(f) = blob_str(attrs, "path") {
        let bytes = std::fs::read(&f).map_err(|e| {
            path.key("path")
                .err(format!("cannot read the asset file {f:?} to hash it: {e}"))
        })?;
        return Ok(Some(bytes));
    }
    if let Some(u) = blob_str(attrs, "uri") {
        return uri_contents(&u, true, opts, path);
    }
    Ok(None)
}

/// The SHA-256 (hex) of an archive without one, as Pulumi's engine adds it
/// before sending the archive:
/// - a path archive whose file name ends in an archive extension, or a URI
///   archive (whose path must): the file's bytes as they are;
/// - a directory, or an archive of assets (nested archives flattened into
///   it): the tar stream Go's writer makes of the members
///   ([`crate::tarhash`]).
///
/// A path that cannot be read, or is neither an archive file nor a
/// directory, is an error naming it. An archive with a member not known
/// yet goes without a hash, as does one with an `http(s)://` URI when no
/// one fetches.
fn archive_hash(
    attrs: &Entries,
    opts: EncodeOptions<'_>,
    path: &PathBuf,
) -> Result<Option<String>, CodecError> {
    use sha2::Digest as _;
    if let Some(f) = blob_str(attrs, "path") {
        if crate::tarhash::is_archive_file(&f) {
            let bytes = std::fs::read(&f).map_err(|e| {
                path.key("path").err(format!(
                    "cannot read the archive file {f:?} to hash it: {e}"
                ))
            })?;
            return Ok(Some(hex::encode(sha2::Sha256::digest(&bytes))));
        }
    } else if let Some(u) = blob_str(attrs, "uri") {
        let bytes = archive_uri_contents(&u, opts, path)?;
        return Ok(bytes.map(|b| hex::encode(sha2::Sha256::digest(&b))));
    }
    let mut members = Vec::new();
    if !archive_members(attrs, "", opts, path, &mut members)? {
        return Ok(None);
    }
    crate::tarhash::tar_hash(members)
        .map(Some)
        .map_err(|e| path.err(e))
}

/// The bytes of a URI archive: its path must end in an archive extension,
/// as Pulumi's engine requires.
fn archive_uri_contents(
    uri: &str,
    opts: EncodeOptions<'_>,
    path: &PathBuf,
) -> Result<Option<Vec<u8>>, CodecError> {
    let at = path.key("uri");
    let url_path = crate::uri::path_of(uri).map_err(|e| at.err(e))?;
    if !crate::tarhash::is_archive_file(&url_path) {
        return Err(at.err(format!(
            "file at URL {uri:?} is not a recognized archive format (its path must end in one of {})",
            crate::tarhash::ARCHIVE_EXTS.join(", ")
        )));
    }
    uri_contents(uri, false, opts, path)
}

/// A string member of an asset or archive object, when set, known and not
/// empty.
fn blob_str(attrs: &Entries, key: &str) -> Option<String> {
    attrs
        .get(key)
        .filter(|v| !v.is_null() && v.is_wholly_known())
        .map(Value::unmark_deep)
        .and_then(|v| v.as_str().map(str::to_string))
        .filter(|s| !s.is_empty())
}

/// Adds the members of an archive under `root` to `out`, in the order
/// Pulumi's archive reader gives them (a path, else a URI, else the assets
/// by name). False when a member's contents are not at hand (an unknown,
/// an `http(s)://` URI no one fetches).
fn archive_members(
    attrs: &Entries,
    root: &str,
    opts: EncodeOptions<'_>,
    path: &PathBuf,
    out: &mut Vec<(String, crate::tarhash::Blob)>,
) -> Result<bool, CodecError> {
    use crate::tarhash::{bytes_members, dir_members, file_members, is_archive_file, join};
    if ["path", "uri", "assets"]
        .iter()
        .any(|k| unknown_in(attrs, k))
    {
        return Ok(false);
    }
    let found = if let Some(f) = blob_str(attrs, "path") {
        let p = std::path::Path::new(&f);
        let found = if is_archive_file(&f) {
            file_members(p)
        } else {
            match std::fs::metadata(p) {
                Ok(m) if m.is_dir() => dir_members(p),
                Ok(_) => Err(format!(
                    "{f:?} is neither a recognized archive type nor a directory"
                )),
                Err(e) => Err(format!(
                    "cannot read the archive path {f:?} to hash it: {e}"
                )),
            }
        };
        Some(found.map_err(|e| path.key("path").err(e))?)
    } else if let Some(u) = blob_str(attrs, "uri") {
        let Some(bytes) = archive_uri_contents(&u, opts, path)? else {
            return Ok(false);
        };
        let name = crate::uri::path_of(&u).map_err(|e| path.key("uri").err(e))?;
        Some(bytes_members(&name, bytes).map_err(|e| path.key("uri").err(e))?)
    } else {
        None
    };
    if let Some(found) = found {
        out.extend(found.into_iter().map(|(n, b)| (join(root, &n), b)));
        return Ok(true);
    }
    let Some(assets) = attrs.get("assets").filter(|v| !v.is_null()) else {
        return Ok(true);
    };
    let assets = assets.unmark_deep();
    let Kind::Map(children) = assets.kind() else {
        return Err(path
            .key("assets")
            .err("an archive's assets must be an object"));
    };
    for (name, child) in children.iter() {
        let p = path.key("assets").key(name);
        let Kind::Map(c) = child.kind() else {
            return Err(p.err("an archive member must be an asset or an archive"));
        };
        let member = if root.is_empty() {
            name.clone()
        } else {
            join(root, name)
        };
        if c.contains_key("assets") {
            if !archive_members(c, &member, opts, &p, out)? {
                return Ok(false);
            }
            continue;
        }
        let text = c.get("text").is_some_and(|t| !t.is_null());
        match blob_str(c, "path") {
            // A file is read while the stream is hashed, not held.
            Some(f) if !text && !unknown_in(c, "uri") => {
                out.push((member, crate::tarhash::Blob::File(f.into())))
            }
            _ => match asset_contents(c, opts, &p)? {
                Some(bytes) => out.push((member, crate::tarhash::Blob::Bytes(bytes))),
                None => return Ok(false),
            },
        }
    }
    Ok(true)
}

/// Whether `key` is set to a value not wholly known.
fn unknown_in(attrs: &Entries, key: &str) -> bool {
    attrs.get(key).is_some_and(|v| !v.is_wholly_known())
}

#[cfg(test)]
#[path = "codec_tests.rs"]
mod tests;
