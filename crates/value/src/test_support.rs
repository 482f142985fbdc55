//! Test-only generators shared by the codec property tests: random types
//! (nested collections, objects, tuples, dynamic) and random values that
//! conform to them, including big and fractional numbers, nulls, unknowns
//! with refinements and sensitive marks.

use crate::{Bound, Number, Refinements, Type, Value};
use proptest::prelude::*;
use std::collections::BTreeMap;

pub fn arb_type() -> impl Strategy<Value = Type> {
    let leaf = prop_oneof![
        Just(Type::String),
        Just(Type::Number),
        Just(Type::Bool),
        Just(Type::Dynamic)
    ];
    leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            inner.clone().prop_map(Type::list),
            inner.clone().prop_map(Type::set),
            inner.clone().prop_map(Type::map),
            proptest::collection::btree_map("[a-d]{1,2}", inner.clone(), 0..4)
                .prop_map(Type::object),
            proptest::collection::vec(inner, 0..3).prop_map(Type::tuple),
        ]
    })
}

pub fn arb_number() -> impl Strategy<Value = Number> {
    prop_oneof![
        any::<i64>().prop_map(Number::from_i64),
        any::<u64>().prop_map(Number::from_u64),
        (-1.0e12f64..1.0e12).prop_map(|f| Number::from_f64(f).unwrap_or_else(Number::zero)),
        ("-?[1-9][0-9]{0,40}", "[0-9]{0,12}[1-9]")
            .prop_map(|(i, f)| Number::parse(&format!("{i}.{f}")).unwrap()),
        Just(Number::PosInfinity),
    ]
}

fn arb_refinements(ty: &Type) -> BoxedStrategy<Refinements> {
    match ty {
        Type::String => prop_oneof![
            Just(Refinements::default()),
            Just(Refinements::not_null()),
            "[a-z]{1,5}".prop_map(|p| Refinements::default().with_prefix(&p))
        ]
        .boxed(),
        Type::Number => (any::<i32>(), any::<bool>(), 0i32..100, any::<bool>())
            .prop_map(|(lo, li, span, ui)| {
                Refinements::not_null().with_number_bounds(
                    Some(Bound {
                        value: Number::from_i64(lo.into()),
                        inclusive: li,
                    }),
                    Some(Bound {
                        value: Number::from_i64(i64::from(lo) + i64::from(span)),
                        inclusive: ui,
                    }),
                )
            })
            .boxed(),
        Type::List(_) | Type::Set(_) | Type::Map(_) => (0u64..3, 3u64..9)
            .prop_map(|(a, b)| Refinements::not_null().with_length_bounds(Some(a), Some(b)))
            .boxed(),
        _ => prop_oneof![Just(Refinements::default()), Just(Refinements::not_null())].boxed(),
    }
}

/// A value conforming to `ty`; `unknowns` allows unknown values.
pub fn arb_value(ty: Type, unknowns: bool, depth: u32) -> BoxedStrategy<Value> {
    let special = {
        let ty2 = ty.clone();
        let null = Just(Value::null(ty.clone()));
        if unknowns {
            prop_oneof![
                null,
                arb_refinements(&ty).prop_map(move |r| Value::unknown_refined(ty2.clone(), r))
            ]
            .boxed()
        } else {
            null.boxed()
        }
    };
    let known: BoxedStrategy<Value> = match &ty {
        Type::String => "[a-zA-Z0-9 é\"]{0,8}".prop_map(Value::string).boxed(),
        Type::Number => arb_number().prop_map(Value::number).boxed(),
        Type::Bool => any::<bool>().prop_map(Value::bool).boxed(),
        Type::Dynamic => {
            if depth == 0 {
                Just(Value::string("leaf")).boxed()
            } else {
                arb_type()
                    .prop_flat_map(move |t| arb_value(t, unknowns, depth - 1))
                    .boxed()
            }
        }
        Type::List(t) | Type::Set(t) => {
            let is_list = matches!(ty, Type::List(_));
            let t = (**t).clone();
            proptest::collection::vec(
                arb_value(t.clone(), unknowns, depth.saturating_sub(1)),
                0..4,
            )
            .prop_map(move |es| {
                if is_list {
                    Value::list(t.clone(), es)
                } else {
                    Value::set(t.clone(), es)
                }
            })
            .prop_filter("collection elements must share one type", uniform)
            .boxed()
        }
        Type::Map(t) => {
            let t = (**t).clone();
            proptest::collection::btree_map(
                "[a-z]{0,3}",
                arb_value(t.clone(), unknowns, depth.saturating_sub(1)),
                0..4,
            )
            .prop_map(move |m| Value::map(t.clone(), m))
            .prop_filter("collection elements must share one type", uniform)
            .boxed()
        }
        Type::Object(o) => {
            let fields: Vec<BoxedStrategy<(String, Value)>> = o
                .attrs()
                .iter()
                .map(|(k, t)| {
                    let k = k.clone();
                    arb_value(t.clone(), unknowns, depth.saturating_sub(1))
                        .prop_map(move |v| (k.clone(), v))
                        .boxed()
                })
                .collect();
            fields
                .prop_map(|kv| Value::object(kv.into_iter().collect::<BTreeMap<_, _>>()))
                .boxed()
        }
        Type::Tuple(ts) => {
            let elems: Vec<BoxedStrategy<Value>> = ts
                .iter()
                .map(|t| arb_value(t.clone(), unknowns, depth.saturating_sub(1)))
                .collect();
            elems.prop_map(Value::tuple).boxed()
        }
    };
    let sensitive = any::<u8>();
    (prop_oneof![1 => special, 6 => known], sensitive)
        .prop_map(|(v, m)| if m % 7 == 0 { v.mark_sensitive() } else { v })
        .boxed()
}

/// Collections built from a `dynamic` element type must hold elements of one
/// concrete type; the generator drops the rest.
fn uniform(v: &Value) -> bool {
    let es: Vec<&Value> = match (v.elements(), v.entries()) {
        (Some(es), _) => es.iter().collect(),
        (_, Some(m)) => m.values().collect(),
        _ => return true,
    };
    let want = v.ty().element_type().cloned().unwrap_or(Type::Dynamic);
    es.iter().all(|e| {
        e.ty() == &want
            || (e.ty().is_dynamic() && !e.is_known())
            || (e.is_null() && e.ty().is_dynamic())
    })
}

/// A type and a value of that type.
pub fn arb_type_and_value(unknowns: bool) -> impl Strategy<Value = (Type, Value)> {
    arb_type().prop_flat_map(move |t| (Just(t.clone()), arb_value(t, unknowns, 2)))
}

/// `v` without sensitive marks anywhere.
pub fn strip_marks(v: &Value) -> Value {
    v.unmark_deep()
}
