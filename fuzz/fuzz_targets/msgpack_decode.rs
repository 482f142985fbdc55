//! Fuzz target: the msgpack decoder must never panic, whatever the bytes.
//! The first byte picks a type from a fixed menu (covering every kind of
//! type, dynamic included); when the input starts with a length-prefixed
//! type-JSON blob, that type is used instead, so the fuzzer explores types
//! too. Successfully decoded values must re-encode and decode to themselves.
#![no_main]

use libfuzzer_sys::fuzz_target;
use terrane_value::{msgpack, typejson, Type};

fn menu(i: u8) -> Type {
    let obj = Type::object([
        ("a", Type::String),
        ("b", Type::set(Type::Number)),
        ("d", Type::Dynamic),
    ]);
    match i % 8 {
        0 => Type::String,
        1 => Type::Number,
        2 => Type::Bool,
        3 => Type::Dynamic,
        4 => Type::list(obj.clone()),
        5 => Type::map(Type::tuple(vec![Type::Bool, Type::Dynamic])),
        6 => Type::set(Type::list(Type::String)),
        _ => obj,
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let (ty, body) = if first == 0xff && !rest.is_empty() {
        let n = usize::from(rest[0]).min(rest.len() - 1);
        match typejson::from_bytes(&rest[1..1 + n]) {
            Ok(t) => (t, &rest[1 + n..]),
            Err(_) => return,
        }
    } else {
        (menu(first), rest)
    };
    if let Ok(v) = msgpack::decode(body, &ty) {
        let again = msgpack::encode(&v, &ty).expect("a decoded value re-encodes");
        let back = msgpack::decode(&again, &ty).expect("a re-encoded value decodes");
        assert!(back == v, "round trip changed the value");
    }
});
