//! `for` expressions: `[for k, v in coll : expr if cond]` builds a tuple,
//! `{for k, v in coll : key => value... if cond}` an object (grouped into
//! tuples with `...`). An unknown collection, condition or key makes the
//! whole result unknown; marks on the collection mark the result.

use crate::expr::Evaluator;
use crate::marks::mark;
use std::collections::BTreeMap;
use terrane_hcl::expr::ForExpr;
use terrane_hcl::Span;
use terrane_value::convert::convert;
use terrane_value::{Kind, Number, Type, Value};

/// The (key, value) pairs a known collection iterates over: index and
/// element for lists and tuples, the element twice for sets, key and
/// element for maps and objects. `None` for values that cannot be iterated.
pub(crate) fn iteration_items(coll: &Value) -> Option<Vec<(Value, Value)>> {
    match (coll.ty(), coll.kind()) {
        (Type::List(_) | Type::Tuple(_), Kind::Seq(es)) => Some(
            es.iter()
                .enumerate()
                .map(|(i, e)| (Value::number(Number::from_u64(i as u64)), e.clone()))
                .collect(),
        ),
        (Type::Set(_), Kind::Set(es)) => Some(es.iter().map(|e| (e.clone(), e.clone())).collect()),
        (Type::Map(_) | Type::Object(_), Kind::Map(m)) => Some(
            m.iter()
                .map(|(k, v)| (Value::string(k.as_str()), v.clone()))
                .collect(),
        ),
        _ => None,
    }
}

impl Evaluator<'_> {
    pub(crate) fn for_expr(&mut self, f: &ForExpr) -> Value {
        let coll_expr = &f.intro.collection_expr;
        let coll = self.eval(coll_expr);
        let mut sens = coll.marks();
        if coll.is_null() {
            return self.error(
                coll_expr.span(),
                "Iteration over null value",
                "A null value cannot be used as the collection in a 'for' expression.",
            );
        }
        if !coll.is_known() {
            return mark(Value::unknown(Type::Dynamic), sens);
        }
        let Some(items) = iteration_items(&coll) else {
            return self.error(
                coll_expr.span(),
                "Iteration over non-iterable value",
                format!(
                    "A value of type {} cannot be used as the collection in a 'for' expression.",
                    coll.ty().friendly_name()
                ),
            );
        };
        let key_var = f.intro.key_var.as_ref().map(|k| k.as_str().to_string());
        let value_var = f.intro.value_var.as_str().to_string();
        let depth = self.locals.len();
        let mut known = true;
        let mut tuple = Vec::new();
        let mut object: BTreeMap<String, Value> = BTreeMap::new();
        let mut groups: BTreeMap<String, Vec<Value>> = BTreeMap::new();
        let mut failed = false;
        for (k, v) in items {
            if let Some(kv) = &key_var {
                self.locals.push((kv.clone(), k));
            }
            self.locals.push((value_var.clone(), v));
            let include = match &f.cond {
                None => Some(true),
                Some(c) => {
                    let cv = self.eval(&c.expr);
                    sens |= cv.deep_marks();
                    if cv.is_null() {
                        self.error(
                            c.expr.span(),
                            "Invalid 'for' condition",
                            "The value of the 'if' clause must not be null.",
                        );
                        failed = true;
                        None
                    } else {
                        match convert(&cv.unmark_deep(), &Type::Bool) {
                            Ok(b) => match b.as_bool() {
                                Some(b) => Some(b),
                                None => {
                                    known = false;
                                    None
                                }
                            },
                            Err(_) => {
                                self.error(
                                    c.expr.span(),
                                    "Invalid 'for' condition",
                                    "The 'if' clause value is invalid: bool required.",
                                );
                                failed = true;
                                None
                            }
                        }
                    }
                }
            };
            if include == Some(true) {
                match &f.key_expr {
                    None => tuple.push(self.eval(&f.value_expr)),
                    Some(ke) => {
                        let kv = self.eval(ke);
                        sens |= kv.deep_marks();
                        let val = self.eval(&f.value_expr);
                        if kv.is_null() {
                            self.error(
                                ke.span(),
                                "Invalid object key",
                                "Key expression in 'for' expression must not produce a null value.",
                            );
                            failed = true;
                        } else if !kv.is_known() {
                            known = false;
                        } else {
                            match convert(&kv.unmark_deep(), &Type::String)
                                .ok()
                                .and_then(|s| s.as_str().map(str::to_string))
                            {
                                None => {
                                    self.error(ke.span(), "Invalid object key", "The key expression produced an invalid result: string required.");
                                    failed = true;
                                }
                                Some(key) if f.grouping => groups.entry(key).or_default().push(val),
                                Some(key) => match object.entry(key) {
                                    std::collections::btree_map::Entry::Occupied(e) => {
                                        self.error(
                                            ke.span(),
                                            "Duplicate object key",
                                            format!("Two different items produced the key {:?} in this 'for' expression. If duplicates are expected, use the ellipsis (...) after the value expression to enable grouping by key.", e.key()),
                                        );
                                        failed = true;
                                    }
                                    std::collections::btree_map::Entry::Vacant(e) => {
                                        e.insert(val);
                                    }
                                },
                            }
                        }
                    }
                }
            }
            self.locals.truncate(depth);
        }
        if failed || !known {
            return mark(Value::unknown(Type::Dynamic), sens);
        }
        let out = match &f.key_expr {
            None => Value::tuple(tuple),
            Some(_) if f.grouping => Value::object(
                groups
                    .into_iter()
                    .map(|(k, vs)| (k, Value::tuple(vs)))
                    .collect(),
            ),
            Some(_) => Value::object(object),
        };
        mark(out, sens)
    }
}
