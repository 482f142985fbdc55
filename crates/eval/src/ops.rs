//! Binary operators: arithmetic, comparison, equality and logic, with
//! Terraform's operand conversions, unknown results and marks.

use crate::arith;
use crate::marks::{mark, unknown_not_null};
use std::ops::Range;
use terrane_hcl::expr::BinaryOperator;
use terrane_value::convert::convert;
use terrane_value::{Kind, Type, Value};

/// An operand or operation error, for the evaluator to record at `span`.
pub(crate) struct OpError {
    pub span: Option<Range<usize>>,
    pub summary: &'static str,
    pub detail: String,
}

fn op_error(span: Option<Range<usize>>, summary: &'static str, detail: String) -> Vec<OpError> {
    vec![OpError {
        span,
        summary,
        detail,
    }]
}

/// Applies `op`; errors come back in the order they are to be reported.
pub(crate) fn binary(
    op: BinaryOperator,
    l: Value,
    r: Value,
    lspan: Option<Range<usize>>,
    rspan: Option<Range<usize>>,
    span: Option<Range<usize>>,
) -> Result<Value, Vec<OpError>> {
    use BinaryOperator::*;
    let sens = l.deep_marks() | r.deep_marks();
    let (l, r) = (l.unmark_deep(), r.unmark_deep());
    if matches!(op, Eq | NotEq) {
        let out = match equals(&l, &r) {
            Some(b) => Value::bool(if op == Eq { b } else { !b }),
            None => unknown_not_null(Type::Bool),
        };
        return Ok(mark(out, sens));
    }
    let operand = match op {
        And | Or => Type::Bool,
        _ => Type::Number,
    };
    let what = if operand == Type::Bool {
        "a bool is required"
    } else {
        "a number is required"
    };
    let lc = convert(&l, &operand);
    let rc = convert(&r, &operand);
    let (l, r) = match (lc, rc) {
        (Ok(l), Ok(r)) => (l, r),
        (Err(_), rc) => {
            let mut errs = op_error(
                lspan,
                "Invalid operand",
                format!("Unsuitable value for left operand: {what}."),
            );
            if rc.is_err() {
                errs.extend(op_error(
                    rspan,
                    "Invalid operand",
                    format!("Unsuitable value for right operand: {what}."),
                ));
            }
            return Err(errs);
        }
        (_, Err(_)) => {
            return Err(op_error(
                rspan,
                "Invalid operand",
                format!("Unsuitable value for right operand: {what}."),
            ))
        }
    };
    if l.is_null() || r.is_null() {
        let at = if l.is_null() { lspan } else { rspan };
        let _ = span;
        return Err(op_error(
            at,
            "Operation failed",
            "Error during operation: argument must not be null.".into(),
        ));
    }
    if matches!(op, And | Or) {
        let short = op == Or; // the value that decides the result alone
        let out = match (l.as_bool(), r.as_bool()) {
            (Some(a), Some(b)) => Value::bool(if op == And { a && b } else { a || b }),
            (Some(a), None) | (None, Some(a)) if a == short => Value::bool(short),
            _ => unknown_not_null(Type::Bool),
        };
        return Ok(mark(out, sens));
    }
    let (Some(a), Some(b)) = (l.as_number(), r.as_number()) else {
        let ty = if matches!(op, Less | LessEq | Greater | GreaterEq) {
            Type::Bool
        } else {
            Type::Number
        };
        return Ok(mark(unknown_not_null(ty), sens));
    };
    let result = match op {
        Plus => arith::add(a, b).map(Value::number),
        Minus => arith::sub(a, b).map(Value::number),
        Mul => arith::mul(a, b).map(Value::number),
        Div => arith::div(a, b).map(Value::number),
        Mod => arith::rem(a, b).map(Value::number),
        Less => Ok(Value::bool(a < b)),
        LessEq => Ok(Value::bool(a <= b)),
        Greater => Ok(Value::bool(a > b)),
        GreaterEq => Ok(Value::bool(a >= b)),
        Eq | NotEq | And | Or => unreachable!("handled above"),
    };
    match result {
        Ok(v) => Ok(mark(v, sens)),
        Err(e) => Err(op_error(
            span,
            "Operation failed",
            format!("Error during operation: {}.", e.0),
        )),
    }
}

/// cty's equality: `None` when it cannot be decided yet. Nulls are equal
/// whatever their types; a null and an unknown refined as not null are
/// known to differ; values of different types are never equal.
pub(crate) fn equals(a: &Value, b: &Value) -> Option<bool> {
    match (a.is_known(), b.is_known()) {
        (false, false) => return None,
        (true, false) | (false, true) => {
            let (k, u) = if a.is_known() { (a, b) } else { (b, a) };
            if k.is_null() {
                return if u.is_known_not_null() {
                    Some(false)
                } else {
                    None
                };
            }
            if u.ty().has_dynamic() || k.ty().has_dynamic() {
                return None;
            }
            return if k.ty() != u.ty() { Some(false) } else { None };
        }
        (true, true) => {}
    }
    match (a.is_null(), b.is_null()) {
        (true, true) => return Some(true),
        (true, false) | (false, true) => return Some(false),
        _ => {}
    }
    if a.ty().has_dynamic() || b.ty().has_dynamic() {
        if !a.ty().conforms_to(b.ty()) && !b.ty().conforms_to(a.ty()) {
            return Some(false);
        }
        return None;
    }
    if a.ty() != b.ty() {
        return Some(false);
    }
    match (a.kind(), b.kind()) {
        (Kind::String(x), Kind::String(y)) => Some(x == y),
        (Kind::Number(x), Kind::Number(y)) => Some(x == y),
        (Kind::Bool(x), Kind::Bool(y)) => Some(x == y),
        (Kind::Seq(x), Kind::Seq(y)) => {
            if x.len() != y.len() {
                return Some(false);
            }
            for (p, q) in x.iter().zip(y.iter()) {
                match equals(p, q) {
                    None => return None,
                    Some(false) => return Some(false),
                    Some(true) => {}
                }
            }
            Some(true)
        }
        (Kind::Set(x), Kind::Set(y)) => {
            if !a.is_wholly_known() || !b.is_wholly_known() {
                return None;
            }
            Some(
                x.len() == y.len()
                    && x.iter()
                        .zip(y.iter())
                        .all(|(p, q)| p.eq_ignoring_refinements(q)),
            )
        }
        (Kind::Map(x), Kind::Map(y)) => {
            if x.len() != y.len() || x.keys().ne(y.keys()) {
                return Some(false);
            }
            for (p, q) in x.values().zip(y.values()) {
                match equals(p, q) {
                    None => return None,
                    Some(false) => return Some(false),
                    Some(true) => {}
                }
            }
            Some(true)
        }
        _ => Some(false),
    }
}
