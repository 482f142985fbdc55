//! Benchmarks of the msgpack codec on large values: an object of 10,000
//! attributes, and a set of 1,000 objects. Run with
//! `cargo bench -p terrane-value --bench codec`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::collections::BTreeMap;
use terrane_value::{msgpack, Number, Type, Value};

fn wide_object(n: usize) -> Value {
    let attrs: BTreeMap<String, Value> = (0..n)
        .map(|i| {
            let v = match i % 3 {
                0 => Value::string(format!("value number {i}")),
                1 => Value::number(Number::from_i64(i as i64 * 7919)),
                _ => Value::bool(i % 2 == 0),
            };
            (format!("attribute_{i:05}"), v)
        })
        .collect();
    Value::object(attrs)
}

fn set_of_objects(n: usize) -> Value {
    let elems: Vec<Value> = (0..n)
        .map(|i| {
            Value::object_from([
                ("name", Value::string(format!("element-{i}"))),
                ("port", Value::number(Number::from_i64(1000 + i as i64))),
                (
                    "tags",
                    Value::set(
                        Type::String,
                        vec![Value::string("a"), Value::string(format!("t{i}"))],
                    ),
                ),
            ])
        })
        .collect();
    let ty = elems[0].ty().clone();
    Value::set(ty, elems)
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("msgpack");
    for (name, v) in [
        ("object_10000_attrs", wide_object(10_000)),
        ("set_1000_objects", set_of_objects(1_000)),
    ] {
        let ty = v.ty().clone();
        let bytes = msgpack::encode(&v, &ty).unwrap();
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_with_input(BenchmarkId::new("encode", name), &v, |b, v| {
            b.iter(|| msgpack::encode(v, &ty).unwrap())
        });
        group.bench_with_input(BenchmarkId::new("decode", name), &bytes, |b, bytes| {
            b.iter(|| msgpack::decode(bytes, &ty).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
