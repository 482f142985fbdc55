//! An object's attribute value as state JSON text.
//!
//! A state holds every object's attributes, and a plan reads each one once
//! (decoding it with its schema). Kept as a parsed `serde_json::Value`, a
//! small object costs about 1.7 KB (an ordered map per object, a heap
//! string per key and value); as its compact text it costs the text. The
//! text is checked to be JSON when it is made, and parsed only where a
//! tree is needed (decoding, export, `show`).

use serde::de::IgnoredAny;
use serde_json::Value as Json;
use std::sync::Arc;

/// Compact JSON text of one object's attributes (`null` for an object
/// still in the pre-0.12 flatmap form). Cloning shares the text.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Attributes(Arc<str>);

impl Attributes {
    /// The JSON `null`.
    pub fn null() -> Self {
        Self(Arc::from("null"))
    }

    /// The compact text of `j`.
    pub fn from_json(j: &Json) -> Self {
        Self(Arc::from(j.to_string()))
    }

    /// `v` written as state JSON of type `ty` (`terrane_value::json`),
    /// straight to text.
    pub fn encode(
        v: &terrane_value::Value,
        ty: &terrane_value::Type,
    ) -> Result<Self, terrane_value::json::JsonError> {
        terrane_value::json::encode_string(v, ty).map(|s| Self(Arc::from(s)))
    }

    /// The value, read as state JSON of type `ty` (`terrane_value::json`).
    pub fn decode(
        &self,
        ty: &terrane_value::Type,
    ) -> Result<terrane_value::Value, terrane_value::json::JsonError> {
        terrane_value::json::decode_bytes(self.0.as_bytes(), ty)
    }

    /// `bytes`, which must be one JSON value in UTF-8 (checked without
    /// building a tree), kept as they are.
    pub fn parse_bytes(bytes: Vec<u8>) -> Result<Self, serde_json::Error> {
        serde_json::from_slice::<IgnoredAny>(&bytes)?;
        // serde_json has checked the bytes are UTF-8.
        let text = String::from_utf8(bytes).map_err(|e| {
            <serde_json::Error as serde::de::Error>::custom(format!("invalid UTF-8: {e}"))
        })?;
        Ok(Self(Arc::from(text)))
    }

    /// The JSON text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The parsed value.
    pub fn json(&self) -> Json {
        // Checked to be JSON when made; a failure here is a bug, not bad
        // input, and shows as null rather than a made-up object.
        serde_json::from_str(&self.0).unwrap_or(Json::Null)
    }

    pub fn is_null(&self) -> bool {
        &*self.0 == "null"
    }

    /// One top-level attribute (`id`, for progress lines), parsed alone:
    /// the rest of the text is skipped without building anything.
    pub fn get(&self, name: &str) -> Option<Json> {
        struct One<'a>(&'a str);
        impl<'de> serde::de::DeserializeSeed<'de> for One<'_> {
            type Value = Option<Json>;
            fn deserialize<D: serde::Deserializer<'de>>(
                self,
                d: D,
            ) -> Result<Self::Value, D::Error> {
                d.deserialize_any(self)
            }
        }
        impl<'de> serde::de::Visitor<'de> for One<'_> {
            type Value = Option<Json>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<Self::Value, A::Error> {
                let mut found = None;
                while let Some(k) = m.next_key::<std::borrow::Cow<'de, str>>()? {
                    if found.is_none() && k == self.0 {
                        found = Some(m.next_value::<Json>()?);
                    } else {
                        m.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(found)
            }
        }
        let mut de = serde_json::Deserializer::from_str(&self.0);
        serde::de::DeserializeSeed::deserialize(One(name), &mut de)
            .ok()
            .flatten()
    }
}

impl Default for Attributes {
    fn default() -> Self {
        Self::null()
    }
}

impl From<Json> for Attributes {
    fn from(j: Json) -> Self {
        Self::from_json(&j)
    }
}

impl From<&Json> for Attributes {
    fn from(j: &Json) -> Self {
        Self::from_json(j)
    }
}

impl std::fmt::Debug for Attributes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn texts() {
        let check = |name: &str, text: &str, ok: bool| {
            assert_eq!(
                Attributes::parse_bytes(text.as_bytes().to_vec()).is_ok(),
                ok,
                "{name}"
            );
        };
        check("object", r#"{"id":"a","n":1}"#, true);
        check("null", "null", true);
        check("truncated", r#"{"id":"a""#, false);
        check("two values", r#"{} {}"#, false);
        check("empty", "", false);
    }

    #[test]
    fn lookups() {
        let a = Attributes::from_json(&json!({"b": [1, {"id": "inner"}], "id": "x-1", "z": null}));
        let cases: &[(&str, &Attributes, &str, Option<Json>)] = &[
            ("top-level id", &a, "id", Some(json!("x-1"))),
            ("nested id is not top-level", &a, "c", None),
            ("a list", &a, "b", Some(json!([1, {"id": "inner"}]))),
            ("a null", &a, "z", Some(Json::Null)),
            ("on null", &Attributes::null(), "id", None),
        ];
        for (name, attrs, key, want) in cases {
            assert_eq!(attrs.get(key), *want, "{name}");
        }
        assert_eq!(
            a.json(),
            json!({"b": [1, {"id": "inner"}], "id": "x-1", "z": null})
        );
        assert!(Attributes::default().is_null());
        // Numbers keep their digits (arbitrary precision).
        let big = Attributes::parse_bytes(br#"{"n":12345678901234567890.5}"#.to_vec()).unwrap();
        assert_eq!(Attributes::from_json(&big.json()), big);
    }
}
