//! An output value's `type` constraint (Terraform 1.15): the value is
//! converted to it (optional attributes' defaults filled in) wherever the
//! output is evaluated, and a value that does not conform is Terraform's
//! "Invalid output value" at the value expression.

use crate::walk::Walk;
use terrane_config::{Diagnostic, Output};
use terrane_eval::{convert_to_constraint, ConstraintError};
use terrane_value::Value;

/// `v` converted to the output's constraint (unchanged without one).
pub(crate) fn convert(w: &Walk, o: &Output, v: Value) -> Result<Value, Diagnostic> {
    let (Some(tc), Some(te)) = (&o.constraint, &o.ty) else {
        return Ok(v);
    };
    convert_to_constraint(&v, tc, &w.func_ctx(), &te.index).map_err(|e| {
        let why = match e {
            ConstraintError::Convert(c) => c.to_string(),
            other => other.to_string(),
        };
        Diagnostic::error(
            "Invalid output value",
            format!(
                "The value expression does not match this output value's type constraint: {why}."
            ),
            o.value.as_ref().and_then(|e| e.range.clone()),
        )
    })
}
