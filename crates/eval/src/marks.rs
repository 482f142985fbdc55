//! Small value helpers every evaluation module uses: carrying the
//! sensitive mark over to a result, and not-null unknowns. A leaf: it
//! imports nothing of the crate.

use terrane_value::{Marks, Refinements, Type, Value};

/// `v` with `marks` (sensitive, ephemeral) added to its own.
pub(crate) fn mark(v: Value, marks: Marks) -> Value {
    v.with_marks(marks)
}

/// An unknown of type `ty`, refined as not null.
pub(crate) fn unknown_not_null(ty: Type) -> Value {
    Value::unknown_refined(ty, Refinements::not_null())
}
