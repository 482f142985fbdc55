//! A literal language for test values, shaped by a type:
//!
//! * `"s"`, `12.5`, `true`, `null`; lists `[a, b]`; objects and maps
//!   `{ a = 1, "k k" = 2 }`; attributes left out of an object literal are
//!   null of their type.
//! * `?` unknown; `?!` unknown and not null; `?"ab"` unknown string with
//!   prefix; `?#1..3` unknown collection with length bounds; `?[0,10)` unknown
//!   number with bounds (`[`/`]` inclusive, `(`/`)` exclusive).
//! * `$v` marks `v` sensitive.

use std::collections::BTreeMap;
use terrane_value::{convert::convert, Bound, Number, Refinements, Type, Value};

/// Parses `src` and shapes it to `ty`.
pub fn val(ty: &Type, src: &str) -> Value {
    let mut p = Parser {
        s: src.as_bytes(),
        i: 0,
    };
    let v = p.value();
    p.ws();
    assert_eq!(p.i, src.len(), "trailing input in {src:?}");
    shape(ty, &v)
}

/// Gives a literal the exact type `ty`: missing object attributes become
/// null, primitives convert, unknowns and nulls take the type.
pub fn shape(ty: &Type, v: &Value) -> Value {
    let sensitive = v.is_sensitive();
    let out = if v.is_null() {
        Value::null(ty.clone())
    } else if !v.is_known() {
        Value::unknown_refined(ty.clone(), v.refinements().cloned().unwrap_or_default())
    } else {
        match ty {
            Type::Dynamic => v.clone(),
            Type::Object(o) => {
                let entries = v
                    .entries()
                    .unwrap_or_else(|| panic!("object literal required for {ty}, got {v}"));
                for k in entries.keys() {
                    assert!(o.attr(k).is_some(), "attribute {k} not in {ty}");
                }
                let attrs: BTreeMap<String, Value> = o
                    .attrs()
                    .iter()
                    .map(|(k, t)| {
                        (
                            k.clone(),
                            entries
                                .get(k)
                                .map(|e| shape(t, e))
                                .unwrap_or_else(|| Value::null(t.clone())),
                        )
                    })
                    .collect();
                Value::object_typed(ty, attrs)
            }
            Type::List(t) | Type::Set(t) => {
                let es: Vec<Value> = v
                    .elements()
                    .unwrap_or_else(|| panic!("list literal required for {ty}"))
                    .iter()
                    .map(|e| shape(t, e))
                    .collect();
                if matches!(ty, Type::List(_)) {
                    Value::list((**t).clone(), es)
                } else {
                    Value::set((**t).clone(), es)
                }
            }
            Type::Map(t) => {
                let m = v
                    .entries()
                    .unwrap_or_else(|| panic!("map literal required for {ty}"));
                Value::map(
                    (**t).clone(),
                    m.iter().map(|(k, e)| (k.clone(), shape(t, e))).collect(),
                )
            }
            Type::Tuple(ts) => {
                let es = v
                    .elements()
                    .unwrap_or_else(|| panic!("list literal required for {ty}"));
                Value::tuple(ts.iter().zip(es.iter()).map(|(t, e)| shape(t, e)).collect())
            }
            prim => convert(v, prim).unwrap_or_else(|e| panic!("{v} as {prim}: {e}")),
        }
    };
    out.with_sensitive(sensitive)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && (self.s[self.i] as char).is_whitespace() {
            self.i += 1;
        }
    }

    fn peek(&mut self) -> u8 {
        self.ws();
        self.s.get(self.i).copied().unwrap_or(0)
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == c {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: u8) {
        assert!(
            self.eat(c),
            "expected {:?} at {} in {:?}",
            c as char,
            self.i,
            String::from_utf8_lossy(self.s)
        );
    }

    fn string(&mut self) -> String {
        self.expect(b'"');
        let start = self.i;
        while self.s[self.i] != b'"' {
            self.i += 1;
        }
        let out = String::from_utf8(self.s[start..self.i].to_vec()).unwrap();
        self.i += 1;
        out
    }

    fn word(&mut self) -> String {
        self.ws();
        let start = self.i;
        while self.i < self.s.len()
            && (self.s[self.i].is_ascii_alphanumeric() || b"_-.".contains(&self.s[self.i]))
        {
            self.i += 1;
        }
        String::from_utf8(self.s[start..self.i].to_vec()).unwrap()
    }

    fn number(&mut self) -> Number {
        Number::parse(&self.word()).unwrap()
    }

    fn value(&mut self) -> Value {
        match self.peek() {
            b'$' => {
                self.i += 1;
                self.value().mark_sensitive()
            }
            b'?' => {
                self.i += 1;
                self.unknown()
            }
            b'"' => Value::string(self.string()),
            b'[' => {
                self.i += 1;
                let mut es = Vec::new();
                while !self.eat(b']') {
                    es.push(self.value());
                    self.eat(b',');
                }
                Value::tuple(es)
            }
            b'{' => {
                self.i += 1;
                let mut m = BTreeMap::new();
                while !self.eat(b'}') {
                    let k = if self.peek() == b'"' {
                        self.string()
                    } else {
                        self.word()
                    };
                    self.expect(b'=');
                    m.insert(k, self.value());
                    self.eat(b',');
                }
                Value::object(m)
            }
            _ => match self.word().as_str() {
                "true" => Value::bool(true),
                "false" => Value::bool(false),
                "null" => Value::null(Type::Dynamic),
                w => {
                    Value::number(Number::parse(w).unwrap_or_else(|_| panic!("bad literal {w:?}")))
                }
            },
        }
    }

    fn unknown(&mut self) -> Value {
        let c = self.s.get(self.i).copied().unwrap_or(0);
        match c {
            b'!' => {
                self.i += 1;
                Value::unknown_refined(Type::String, Refinements::not_null())
            }
            b'"' => {
                let p = self.string();
                Value::unknown_refined(Type::String, Refinements::default().with_prefix(&p))
            }
            b'#' => {
                self.i += 1;
                let w = self.word();
                let (lo, hi) = w.split_once("..").unwrap();
                let r =
                    Refinements::not_null().with_length_bounds(lo.parse().ok(), hi.parse().ok());
                Value::unknown_refined(Type::list(Type::String), r)
            }
            b'[' | b'(' => {
                self.i += 1;
                let lo = self.number();
                self.expect(b',');
                let hi = self.number();
                let close = self.s[self.i];
                self.i += 1;
                let r = Refinements::not_null().with_number_bounds(
                    Some(Bound {
                        value: lo,
                        inclusive: c == b'[',
                    }),
                    Some(Bound {
                        value: hi,
                        inclusive: close == b']',
                    }),
                );
                Value::unknown_refined(Type::Number, r)
            }
            _ => Value::unknown(Type::Dynamic),
        }
    }
}
