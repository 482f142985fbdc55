//! Small value helpers every evaluation module uses: carrying the
//! sensitive mark over to a result, and not-null unknowns. A leaf: it
//! imports nothing of the crate.

use terrane_value::{Refinements, Type, Value};

/// A value marked sensitive when `sensitive` is true.
pub(crate) fn mark(v: Value, sensitive: bool) -> Value {
    if sensitive && !v.is_sensitive() {
        v.mark_sensitive()
    } else {
        v
    }
}

/// An unknown of type `ty`, refined as not null.
pub(crate) fn unknown_not_null(ty: Type) -> Value {
    Value::unknown_refined(ty, Refinements::not_null())
}
