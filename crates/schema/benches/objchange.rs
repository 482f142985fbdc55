//! Benchmarks of the objchange functions on large objects: a block of 10,000
//! attributes with a nested set block of 1,000 elements. Run with
//! `cargo bench -p terrane-schema --bench objchange`.

use criterion::{criterion_group, criterion_main, Criterion};
use std::collections::BTreeMap;
use terrane_schema::objchange::{assert_object_compatible, assert_plan_valid, proposed_new};
use terrane_schema::{Attribute, Block, NestedBlock};
use terrane_value::{Number, Type, Value};

fn schema(n: usize) -> Block {
    let mut b = Block::new();
    for i in 0..n {
        let a = match i % 3 {
            0 => Attribute::optional(Type::String),
            1 => Attribute::computed(Type::String),
            _ => Attribute::optional_computed(Type::String),
        };
        b = b.attr(format!("a{i:05}"), a);
    }
    let rule = Block::new()
        .attr("name", Attribute::required(Type::String))
        .attr("port", Attribute::optional(Type::Number))
        .attr("id", Attribute::computed(Type::String));
    b.block("rule", NestedBlock::set(rule))
}

fn values(schema: &Block, n: usize, set_len: usize) -> (Value, Value) {
    let mut prior = BTreeMap::new();
    let mut config = BTreeMap::new();
    for i in 0..n {
        let name = format!("a{i:05}");
        prior.insert(name.clone(), Value::string(format!("prior {i}")));
        let c = if i % 3 == 1 {
            Value::null(Type::String)
        } else {
            Value::string(format!("config {i}"))
        };
        config.insert(name, c);
    }
    let rule_ty = schema.block_type("rule").unwrap().block.implied_type();
    let rule = |i: usize, id: Value| {
        Value::object_from([
            ("name", Value::string(format!("r{i}"))),
            ("port", Value::number(Number::from_i64(i as i64))),
            ("id", id),
        ])
    };
    prior.insert(
        "rule".into(),
        Value::set(
            rule_ty.clone(),
            (0..set_len)
                .map(|i| rule(i, Value::string(format!("id-{i}"))))
                .collect(),
        ),
    );
    config.insert(
        "rule".into(),
        Value::set(
            rule_ty,
            (0..set_len)
                .map(|i| rule(i, Value::null(Type::String)))
                .collect(),
        ),
    );
    (Value::object(prior), Value::object(config))
}

fn bench(c: &mut Criterion) {
    let s = schema(10_000);
    let (prior, config) = values(&s, 10_000, 1_000);
    let planned = proposed_new(&s, &prior, &config);
    assert!(assert_plan_valid(&s, &prior, &config, &planned).is_empty());
    c.bench_function("proposed_new_10000_attrs_set_1000", |b| {
        b.iter(|| proposed_new(&s, &prior, &config))
    });
    c.bench_function("assert_plan_valid_10000_attrs_set_1000", |b| {
        b.iter(|| assert_plan_valid(&s, &prior, &config, &planned))
    });
    c.bench_function("assert_object_compatible_10000_attrs_set_1000", |b| {
        b.iter(|| assert_object_compatible(&s, &planned, &planned))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
