//! Traversals: attribute access, indexing and splats (`a.b[0]`, `a[*].b`,
//! `a.*.b`), with Terraform's messages for each way they can fail.

use crate::expr::Evaluator;
use crate::marks::mark;
use std::ops::Range;
use terrane_hcl::expr::{Expression, Traversal, TraversalOperator};
use terrane_hcl::{Decorated, Span};
use terrane_value::convert::convert;
use terrane_value::{Kind, Number, Type, Value};

type Op = Decorated<TraversalOperator>;

impl Evaluator<'_> {
    pub(crate) fn traversal(&mut self, t: &Traversal) -> Value {
        let ops = &t.operators[..];
        let (mut v, mut i) = match &t.expr {
            Expression::Variable(name) if !self.is_local(name.as_str()) => {
                // Let the scope answer `root.attr` directly where it can
                // (large resource sets are not built as one object).
                match ops.first().map(|o| o.value()) {
                    Some(TraversalOperator::GetAttr(attr)) => {
                        if let Some(v) = self.scope().root_attr(name.as_str(), attr.as_str()) {
                            (v, 1)
                        } else {
                            let root = self.variable(name.as_str(), t.expr.span());
                            if root.is_known()
                                && !root.is_null()
                                && root.get_attr(attr.as_str()).is_none()
                                && root.ty().object_type().is_some()
                            {
                                if let Some(m) =
                                    self.scope().missing_attr(name.as_str(), attr.as_str())
                                {
                                    let span = join(t.expr.span(), ops[0].span());
                                    return self.error(span, &m.summary, m.detail);
                                }
                            }
                            (root, 0)
                        }
                    }
                    _ => (self.variable(name.as_str(), t.expr.span()), 0),
                }
            }
            other => (self.eval(other), 0),
        };
        while i < ops.len() {
            match ops[i].value() {
                TraversalOperator::AttrSplat(_) => {
                    let end = ops[i + 1..]
                        .iter()
                        .position(|o| {
                            !matches!(
                                o.value(),
                                TraversalOperator::GetAttr(_) | TraversalOperator::LegacyIndex(_)
                            )
                        })
                        .map(|p| i + 1 + p)
                        .unwrap_or(ops.len());
                    v = self.splat(v, &ops[i + 1..end]);
                    i = end;
                }
                TraversalOperator::FullSplat(_) => {
                    v = self.splat(v, &ops[i + 1..]);
                    i = ops.len();
                }
                _ => {
                    v = self.step(v, &ops[i]);
                    i += 1;
                }
            }
        }
        v
    }

    /// One attribute or index step.
    fn step(&mut self, v: Value, op: &Op) -> Value {
        match op.value() {
            TraversalOperator::GetAttr(name) => self.get_attr(v, name.as_str(), op.span()),
            TraversalOperator::Index(e) => {
                let k = self.eval(e);
                self.index(v, k, op.span())
            }
            TraversalOperator::LegacyIndex(n) => {
                self.index(v, Value::number(Number::from_u64(*n.value())), op.span())
            }
            TraversalOperator::AttrSplat(_) | TraversalOperator::FullSplat(_) => v,
        }
    }

    /// Applies the steps after a splat to each element.
    fn splat(&mut self, v: Value, ops: &[Op]) -> Value {
        let sens = v.marks();
        if v.is_null() {
            return mark(Value::tuple(Vec::new()), sens);
        }
        if !v.is_known() {
            let out = match v.ty() {
                Type::List(e) | Type::Set(e) => match steps_type(e, ops) {
                    Some(t) => Value::unknown(Type::list(t)),
                    None => Value::unknown(Type::Dynamic),
                },
                _ => Value::unknown(Type::Dynamic),
            };
            return mark(out, sens);
        }
        let (elems, as_list) = match (v.ty(), v.kind()) {
            (Type::List(_) | Type::Set(_), Kind::Seq(es) | Kind::Set(es)) => (es.to_vec(), true),
            (Type::Tuple(_), Kind::Seq(es)) => (es.to_vec(), false),
            _ => (vec![v.clone()], false),
        };
        let mut out = Vec::with_capacity(elems.len());
        for e in elems {
            let mut x = e;
            for op in ops {
                x = self.step(x, op);
            }
            out.push(x);
        }
        let result = if as_list {
            let elem = match v.ty().element_type().and_then(|e| steps_type(e, ops)) {
                Some(t) => t,
                None => Type::Dynamic,
            };
            if out.iter().all(|x| x.ty() == out[0].ty()) || elem.is_dynamic() {
                Value::list(elem, out)
            } else {
                Value::tuple(out)
            }
        } else {
            Value::tuple(out)
        };
        mark(result, sens)
    }

    pub(crate) fn get_attr(&mut self, v: Value, name: &str, span: Option<Range<usize>>) -> Value {
        let sens = v.marks();
        if v.is_null() && matches!(v.ty(), Type::Object(_) | Type::Map(_) | Type::Dynamic) {
            return self.error(
                span,
                "Attempt to get attribute from null value",
                "This value is null, so it does not have any attributes.",
            );
        }
        let out = match (v.ty(), v.kind()) {
            (Type::Dynamic, _) => Value::unknown(Type::Dynamic),
            (Type::Object(o), Kind::Unknown(_)) => match o.attr(name) {
                Some(t) => Value::unknown(t.clone()),
                None => return self.unsupported_attr(name, span),
            },
            (Type::Object(_), Kind::Map(m)) => match m.get(name) {
                Some(x) => x.clone(),
                None => return self.unsupported_attr(name, span),
            },
            (Type::Map(e), Kind::Unknown(_)) => Value::unknown((**e).clone()),
            (Type::Map(_), Kind::Map(m)) => match m.get(name) {
                Some(x) => x.clone(),
                None => {
                    return self.error(
                        span,
                        "Missing map element",
                        format!("This map does not have an element with the key {name:?}."),
                    );
                }
            },
            (t, _) => {
                let detail = match t {
                    Type::List(_) | Type::Set(_) | Type::Tuple(_) => format!(
                        "Can't access attributes on a {}. Did you mean to access attribute {name:?} for a specific element of the list, or across all elements of the list?",
                        kind_name(t)
                    ),
                    _ => format!("Can't access attributes on a primitive-typed value ({}).", t.friendly_name()),
                };
                return self.error(span, "Unsupported attribute", detail);
            }
        };
        mark(out, sens)
    }

    fn unsupported_attr(&mut self, name: &str, span: Option<Range<usize>>) -> Value {
        self.error(
            span,
            "Unsupported attribute",
            format!("This object does not have an attribute named {name:?}."),
        )
    }

    pub(crate) fn index(&mut self, v: Value, k: Value, span: Option<Range<usize>>) -> Value {
        let sens = v.marks() | k.deep_marks();
        let k = k.unmark_deep();
        if v.ty().is_primitive() {
            return self.error(
                span,
                "Invalid index",
                format!(
                    "This value does not have any indices: {} values cannot be indexed.",
                    v.ty().friendly_name()
                ),
            );
        }
        if v.is_null() {
            return self.error(
                span,
                "Attempt to index null value",
                "This value is null, so it does not have any indices.",
            );
        }
        if k.is_null() {
            return self.error(
                span,
                "Invalid index",
                "Can't use a null value as an indexing key.",
            );
        }
        let out = match v.ty() {
            Type::Dynamic => Value::unknown(Type::Dynamic),
            Type::Set(_) => {
                return self.error(
                    span,
                    "Invalid index",
                    "Elements of a set are identified only by their value and don't have any separate index or key to select with, so it's only possible to perform operations across all elements of the set.",
                )
            }
            Type::List(_) | Type::Tuple(_) => {
                let Ok(kn) = convert(&k, &Type::Number) else {
                    return self.error(span, "Invalid index", "The given key does not identify an element in this collection value: number required.");
                };
                let elem_ty = match v.ty() {
                    Type::List(e) => Some((**e).clone()),
                    _ => None,
                };
                match (v.kind(), kn.as_number()) {
                    (Kind::Unknown(_), _) | (_, None) => match (elem_ty, kn.as_number().and_then(Number::to_i64), v.ty().tuple_types()) {
                        (Some(t), _, _) => Value::unknown(t),
                        (None, Some(i), Some(ts)) if i >= 0 && (i as usize) < ts.len() => Value::unknown(ts[i as usize].clone()),
                        _ => Value::unknown(Type::Dynamic),
                    },
                    (Kind::Seq(es), Some(n)) => {
                        if !n.is_integer() {
                            return self.error(span, "Invalid index", "The given key does not identify an element in this collection value: the given index is not a whole number.");
                        }
                        if *n < Number::zero() {
                            return self.error(span, "Invalid index", "The given key does not identify an element in this collection value: a negative number is not a valid index for a sequence.");
                        }
                        match n.to_u64().and_then(|i| es.get(i as usize)) {
                            Some(x) => x.clone(),
                            None => return self.missing_key(span),
                        }
                    }
                    _ => Value::unknown(Type::Dynamic),
                }
            }
            Type::Map(_) | Type::Object(_) => {
                let Ok(ks) = convert(&k, &Type::String) else {
                    return self.error(span, "Invalid index", "The given key does not identify an element in this collection value: string required.");
                };
                match (v.kind(), ks.as_str()) {
                    (Kind::Unknown(_), key) | (Kind::Map(_), key @ None) => match v.ty() {
                        Type::Map(e) => Value::unknown((**e).clone()),
                        Type::Object(o) => match key.and_then(|k| o.attr(k)) {
                            Some(t) => Value::unknown(t.clone()),
                            None if key.is_some() => return self.missing_key(span),
                            None => Value::unknown(Type::Dynamic),
                        },
                        _ => Value::unknown(Type::Dynamic),
                    },
                    (Kind::Map(m), Some(key)) => match m.get(key) {
                        Some(x) => x.clone(),
                        None => return self.missing_key(span),
                    },
                    _ => Value::unknown(Type::Dynamic),
                }
            }
            t => {
                return self.error(span, "Invalid index", format!("This value does not have any indices: {} values cannot be indexed.", t.friendly_name()));
            }
        };
        mark(out, sens)
    }

    fn missing_key(&mut self, span: Option<Range<usize>>) -> Value {
        self.error(
            span,
            "Invalid index",
            "The given key does not identify an element in this collection value.",
        )
    }
}

fn kind_name(t: &Type) -> &'static str {
    match t {
        Type::List(_) => "list",
        Type::Set(_) => "set",
        Type::Tuple(_) => "tuple",
        _ => "value",
    }
}

fn join(a: Option<Range<usize>>, b: Option<Range<usize>>) -> Option<Range<usize>> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.start..b.end),
        (a, b) => a.or(b),
    }
}

/// The type reached by `ops` from a value of type `t`, where it can be
/// known from the type alone.
fn steps_type(t: &Type, ops: &[Op]) -> Option<Type> {
    let mut t = t.clone();
    for op in ops {
        t = match (op.value(), &t) {
            (TraversalOperator::GetAttr(n), Type::Object(o)) => o.attr(n.as_str())?.clone(),
            (TraversalOperator::GetAttr(_), Type::Map(e)) => (**e).clone(),
            (
                TraversalOperator::Index(_) | TraversalOperator::LegacyIndex(_),
                Type::List(e) | Type::Map(e),
            ) => (**e).clone(),
            _ => return None,
        };
    }
    Some(t)
}
