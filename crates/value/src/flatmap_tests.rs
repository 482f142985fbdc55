//! Flatmap decoding (issue 15 item 3, v4 `attributes_flat`): objects as
//! Terraform 0.11 wrote them, decoded with their resource type's type.

use super::*;
use serde_json::{json, Value as Json};

fn obj(attrs: &[(&str, Type)]) -> Type {
    Type::object(attrs.iter().map(|(k, t)| (k.to_string(), t.clone())))
}

/// An aws_instance-like type: primitives, a map, a set of strings, list
/// and set blocks.
fn instance_type() -> Type {
    let root = obj(&[
        ("volume_size", Type::Number),
        ("delete_on_termination", Type::Bool),
    ]);
    let ebs = obj(&[("device_name", Type::String), ("volume_size", Type::Number)]);
    obj(&[
        ("id", Type::String),
        ("ami", Type::String),
        ("monitoring", Type::Bool),
        ("cpu_core_count", Type::Number),
        ("key_name", Type::String),
        ("tags", Type::map(Type::String)),
        ("security_groups", Type::set(Type::String)),
        ("root_block_device", Type::list(root)),
        ("ebs_block_device", Type::set(ebs)),
        (
            "network_interface",
            Type::list(obj(&[("index", Type::Number)])),
        ),
    ])
}

fn flat(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn check(name: &str, ty: &Type, pairs: &[(&str, &str)], want: Result<Json, &str>) {
    let got = decode(&flat(pairs), ty).map(|v| crate::json::encode(&v, ty).expect("encodes"));
    match (got, want) {
        (Ok(g), Ok(w)) => assert_eq!(g, w, "case {name}"),
        (Err(e), Err(w)) => assert!(e.contains(w), "case {name}: {e:?} should say {w:?}"),
        (got, want) => panic!("case {name}: got {got:?}, want {want:?}"),
    }
}

#[test]
fn item2_flatmap_decodes_terraform_011_objects() {
    let ty = instance_type();
    check(
        "aws_instance_like",
        &ty,
        &[
            ("id", "i-0a1b2c3d"),
            ("ami", "ami-0c55b159"),
            ("monitoring", "false"),
            ("cpu_core_count", "2"),
            ("tags.%", "2"),
            ("tags.Name", "web"),
            ("tags.kubernetes.io/role", "node"),
            ("security_groups.#", "2"),
            ("security_groups.3814588639", "default"),
            ("security_groups.2468917823", "web"),
            ("root_block_device.#", "1"),
            ("root_block_device.0.volume_size", "8"),
            ("root_block_device.0.delete_on_termination", "true"),
            ("ebs_block_device.#", "1"),
            ("ebs_block_device.2576023345.device_name", "/dev/sdg"),
            ("ebs_block_device.2576023345.volume_size", "100"),
            ("network_interface.#", "0"),
        ],
        Ok(json!({
            "id": "i-0a1b2c3d",
            "ami": "ami-0c55b159",
            "monitoring": false,
            "cpu_core_count": 2,
            "key_name": null,
            "tags": {"Name": "web", "kubernetes.io/role": "node"},
            "security_groups": ["default", "web"],
            "root_block_device": [{"volume_size": 8, "delete_on_termination": true}],
            "ebs_block_device": [{"device_name": "/dev/sdg", "volume_size": 100}],
            "network_interface": [],
        })),
    );
    check(
        "absent_counts_are_null",
        &ty,
        &[("id", "i-1"), ("ami", "ami-1")],
        Ok(json!({
            "id": "i-1",
            "ami": "ami-1",
            "monitoring": null,
            "cpu_core_count": null,
            "key_name": null,
            "tags": null,
            "security_groups": null,
            "root_block_device": null,
            "ebs_block_device": null,
            "network_interface": null,
        })),
    );
    let timeouts = obj(&[("create", Type::String)]);
    check(
        "set_counted_one_without_keys_is_an_empty_block",
        &obj(&[("timeouts", Type::set(timeouts.clone()))]),
        &[("timeouts.#", "1")],
        Ok(json!({"timeouts": [{"create": null}]})),
    );
    check(
        "empty_map_and_set",
        &obj(&[
            ("tags", Type::map(Type::String)),
            ("names", Type::set(Type::String)),
        ]),
        &[("tags.%", "0"), ("names.#", "0")],
        Ok(json!({"tags": {}, "names": []})),
    );
    check(
        "nested_object_attribute",
        &obj(&[("single", timeouts)]),
        &[("single.create", "5m")],
        Ok(json!({"single": {"create": "5m"}})),
    );
    check(
        "absent_dynamic_attribute_is_null",
        &obj(&[("id", Type::String), ("input", Type::Dynamic)]),
        &[("id", "x")],
        Ok(json!({"id": "x", "input": null})),
    );
    check(
        "list_of_lists",
        &obj(&[("grid", Type::list(Type::list(Type::Number)))]),
        &[
            ("grid.#", "2"),
            ("grid.0.#", "1"),
            ("grid.0.0", "1"),
            ("grid.1.#", "0"),
        ],
        Ok(json!({"grid": [[1], []]})),
    );
}

#[test]
fn item2_flatmap_refuses_bad_input() {
    let ty = instance_type();
    check(
        "not_a_number",
        &ty,
        &[("cpu_core_count", "two")],
        Err("\"cpu_core_count\": \"two\" is not a valid number"),
    );
    check(
        "bad_count",
        &ty,
        &[("security_groups.#", "x")],
        Err("\"security_groups.#\" must count elements"),
    );
    check(
        "unknown_value",
        &ty,
        &[("ami", "74D93920-ED26-11E3-AC10-0800200C9A66")],
        Err("\"ami\" holds an unknown value"),
    );
    check(
        "dynamic_attribute",
        &obj(&[("input", Type::Dynamic)]),
        &[("input", "x")],
        Err("\"input\": an attribute of any type"),
    );
    check(
        "tuple_count_mismatch",
        &obj(&[("pair", Type::tuple(vec![Type::String, Type::String]))]),
        &[("pair.#", "1"), ("pair.0", "a")],
        Err("pair.# counts 1 values, but the type needs 2"),
    );
}
