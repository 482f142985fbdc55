//! Table tests for the objchange rules. Each table case is named after the
//! rule it pins; values are written in a small literal language (see
//! [`dsl`]) and shaped to the schema's implied type, so a case reads like
//! the configuration it stands for.

mod compatible_tests;
mod dsl;
mod normalize_tests;
mod plan_valid_tests;
mod proposed_tests;

/// `InOrder` answers what `attr_of` answers, whatever order the names
/// come in.
#[test]
fn in_order_reads_as_attr_of() {
    use super::{attr_of, InOrder};
    use terrane_value::{Type, Value};
    let object = Value::object_from([
        ("a", Value::string("1")),
        ("b", Value::string("2")),
        ("d", Value::string("4")),
    ]);
    let ty = object.ty().clone();
    let null = Value::null(ty.clone());
    let unknown = Value::unknown(ty);
    let check = |case: &str, v: &Value, names: &[&str]| {
        let mut reader = InOrder::new(v);
        for name in names {
            let got = reader.get(name, || Type::String);
            let want = attr_of(v, name, || Type::String);
            assert_eq!(format!("{got:?}"), format!("{want:?}"), "{case}: {name}");
        }
    };
    check("every name in order", &object, &["a", "b", "d"]);
    check("some names skipped", &object, &["a", "d"]);
    check(
        "a missing name between two present",
        &object,
        &["a", "c", "d"],
    );
    check("a name before the last asked", &object, &["d", "a", "b"]);
    check("one name twice", &object, &["b", "b"]);
    check("past the end, then back", &object, &["z", "a"]);
    check("a null object", &null, &["a", "b"]);
    check("an unknown object", &unknown, &["a", "d"]);
}
