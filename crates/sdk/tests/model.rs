//! `#[derive(Model)]`: typed structs to and from object values, with null,
//! unknown, collections, renames, and conversion errors on the right path.

use std::collections::BTreeMap;
use terrane_sdk::{Known, Model, Type, Value};

#[derive(Model, Debug, PartialEq)]
struct Server {
    name: String,
    port: i64,
    enabled: bool,
    note: Option<String>,
    id: Known<String>,
    tags: Vec<String>,
    labels: BTreeMap<String, String>,
    #[model(rename = "type")]
    kind: String,
}

fn sample() -> Server {
    Server {
        name: "web".into(),
        port: 8080,
        enabled: true,
        note: None,
        id: Known::Unknown,
        tags: vec!["a".into(), "b".into()],
        labels: [("env".to_string(), "prod".to_string())].into(),
        kind: "vm".into(),
    }
}

#[test]
fn round_trip_and_types() {
    let v = sample().to_value();
    assert!(
        v.ty().conforms_to(&Server::object_type()),
        "case value_has_model_type: {}",
        v.ty()
    );
    assert!(
        v.get_attr("note").is_some_and(Value::is_null),
        "case none_is_null"
    );
    assert!(
        v.get_attr("id").is_some_and(|i| !i.is_known()),
        "case unknown_is_unknown"
    );
    assert_eq!(
        v.get_attr("type").and_then(Value::as_str),
        Some("vm"),
        "case rename"
    );
    assert_eq!(Server::from_value(&v).unwrap(), sample(), "case round_trip");
    assert_eq!(
        Server::object_type().attr_type("tags"),
        Some(&Type::list(Type::String))
    );
}

#[test]
fn conversion_errors_name_the_path() {
    let mut m = sample().to_value().entries().unwrap().clone();
    m.insert("port".into(), Value::string("eighty"));
    let err = Server::from_value(&Value::object_of(m))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(".port: expected a whole number, got a string"),
        "case wrong_type_path: {err}"
    );
    let mut m = sample().to_value().entries().unwrap().clone();
    m.insert(
        "tags".into(),
        Value::list(
            Type::String,
            vec![Value::string("a"), Value::unknown(Type::String)],
        ),
    );
    let err = Server::from_value(&Value::object_of(m))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(".tags[1]: expected a string, got an unknown value"),
        "case unknown_in_list_path: {err}"
    );
}
