//! terrane-value: the dynamic value model shared by every part of terrane.
//!
//! This crate defines what a configuration, a plan, a provider message and a
//! state snapshot are made of: [`Type`] (string, number, bool, list, set, map,
//! object with optional-attribute markers, tuple, dynamic) and [`Value`]
//! (known, typed null, typed unknown with [`Refinements`], and a sensitive
//! mark on any node). Numbers are arbitrary precision ([`Number`]); sets have
//! value semantics; values are immutable and cheap to clone.
//!
//! Around the model: [`Path`]s into values, conversions used by the
//! configuration language ([`convert`]), the type-constraint JSON
//! ([`typejson`]), the wire codecs ([`msgpack`], [`json`]), sensitive marks
//! as path lists ([`marks`]) and rendering for messages ([`render`]).
//!
//! Architecture invariant: this crate does no I/O, is not async and depends
//! on no other terrane crate. It knows nothing about schemas, HCL or gRPC.

pub mod convert;
mod entries;
pub mod flatmap;
pub mod json;
pub mod marks;
pub mod msgpack;
mod number;
mod path;
mod refine;
pub mod render;
#[cfg(test)]
mod test_support;
mod ty;
pub mod typejson;
mod value;

pub use entries::{take_named, Entries, Iter as EntriesIter};
pub use number::{Number, ParseNumberError};
pub use path::{Path, PathError, Step};
pub use refine::{Bound, Refinements, MAX_PREFIX_BYTES};
pub use ty::{ObjectType, Type};
pub use value::{Kind, Marks, Value};
