//! v4 import/export: field shapes, ordering, and every kind of bad input.

use super::*;
use crate::addr::InstanceKey;

const SAMPLE: &str = r#"{
  "version": 4,
  "terraform_version": "1.15.5",
  "serial": 7,
  "lineage": "0b6cfa3c-2f2b-4d0a-9d5e-1f1a8a2c9b11",
  "outputs": {
    "pw": {
      "value": "hunter2",
      "type": "string",
      "sensitive": true
    }
  },
  "resources": [
    {
      "mode": "managed",
      "type": "terraform_data",
      "name": "x",
      "provider": "provider[\"terraform.io/builtin/terraform\"]",
      "instances": [
        {
          "index_key": 1,
          "status": "tainted",
          "schema_version": 0,
          "attributes": {
            "id": "b",
            "input": {
              "value": {
                "k": [
                  1,
                  2
                ]
              },
              "type": [
                "object",
                {
                  "k": [
                    "list",
                    "number"
                  ]
                }
              ]
            }
          },
          "sensitive_attributes": [
            [
              {
                "type": "get_attr",
                "value": "input"
              },
              {
                "type": "index",
                "value": {
                  "value": 0,
                  "type": "number"
                }
              }
            ]
          ],
          "private": "AQID",
          "dependencies": [
            "terraform_data.y"
          ],
          "create_before_destroy": true
        },
        {
          "index_key": 1,
          "deposed": "00c0ffee",
          "schema_version": 0,
          "attributes": {
            "id": "old"
          },
          "sensitive_attributes": []
        },
        {
          "index_key": "a",
          "schema_version": 0,
          "attributes": {
            "id": "a"
          },
          "sensitive_attributes": []
        }
      ]
    },
    {
      "module": "module.app[\"eu\"]",
      "mode": "data",
      "type": "local_file",
      "name": "cfg",
      "provider": "provider[\"registry.terraform.io/hashicorp/local\"]",
      "instances": [
        {
          "schema_version": 0,
          "attributes": {
            "filename": "a.txt"
          },
          "sensitive_attributes": []
        }
      ]
    }
  ],
  "check_results": null
}
"#;

#[test]
fn import_then_export_is_byte_identical() {
    let snap = import(SAMPLE.as_bytes()).unwrap();
    assert_eq!(snap.serial, 7);
    assert_eq!(snap.object_count(), 4);
    let x = ResourceAddr::managed("terraform_data", "x").instance(InstanceKey::Int(1));
    let obj = snap.object(&x, None).unwrap();
    assert_eq!(obj.status, Status::Tainted);
    assert_eq!(obj.private.as_deref(), Some(&[1u8, 2, 3][..]));
    assert_eq!(obj.sensitive_paths[0].to_string(), ".input[0]");
    assert!(snap.object(&x, Some("00c0ffee")).is_some());
    assert_eq!(export(&snap), SAMPLE);
}

#[track_caller]
fn check_bad(case: &str, text: &str, want: &str) {
    let err = import(text.as_bytes()).unwrap_err().to_string();
    assert!(
        err.contains(want),
        "case {case}: {err:?} does not contain {want:?}"
    );
}

#[test]
fn bad_input_is_a_clear_error() {
    check_bad("invalid_json", "{\"version\": 4,", "not valid JSON");
    check_bad("not_an_object", "[]", "must be a JSON object");
    check_bad(
        "wrong_version",
        r#"{"version": 3, "serial": 1, "lineage": "x"}"#,
        "unsupported state format version 3",
    );
    check_bad(
        "no_version",
        r#"{"serial": 1, "lineage": "x"}"#,
        "has no \"version\"",
    );
    check_bad(
        "unknown_top_field",
        r#"{"version": 4, "serial": 1, "lineage": "x", "extra": 1}"#,
        "unsupported field \"extra\"",
    );
    check_bad(
        "no_lineage",
        r#"{"version": 4, "serial": 1}"#,
        "needs a string \"lineage\"",
    );
    check_bad(
        "unknown_instance_field",
        r#"{"version": 4, "serial": 1, "lineage": "x", "resources": [{"mode": "managed", "type": "t", "name": "n", "provider": "p", "instances": [{"bogus": 1}]}]}"#,
        "unsupported field \"bogus\"",
    );
    check_bad(
        "bad_mode",
        r#"{"version": 4, "serial": 1, "lineage": "x", "resources": [{"mode": "weird", "type": "t", "name": "n", "provider": "p", "instances": []}]}"#,
        "resource mode \"weird\"",
    );
    check_bad(
        "legacy_flatmap",
        r#"{"version": 4, "serial": 1, "lineage": "x", "resources": [{"mode": "managed", "type": "t", "name": "n", "provider": "p", "instances": [{"attributes_flat": {"id": "1"}}]}]}"#,
        "legacy flatmap",
    );
    check_bad(
        "bad_private",
        r#"{"version": 4, "serial": 1, "lineage": "x", "resources": [{"mode": "managed", "type": "t", "name": "n", "provider": "p", "instances": [{"private": "!!"}]}]}"#,
        "not base64",
    );
    check_bad(
        "bad_module",
        r#"{"version": 4, "serial": 1, "lineage": "x", "resources": [{"module": "mod.x", "mode": "managed", "type": "t", "name": "n", "provider": "p", "instances": []}]}"#,
        "invalid module address",
    );
}

#[test]
fn paths_round_trip() {
    let p = terrane_value::Path::root().attr("a").key("k").index(2);
    assert_eq!(path_from_json(&path_to_json(&p)).unwrap(), p);
    assert!(path_from_json(&serde_json::json!([{"type": "nope"}])).is_err());
}

/// A one-resource state with `resources` spliced in, for the cases below.
fn with_resources(serial: &str, resources: &str) -> String {
    format!(r#"{{"version": 4, "serial": {serial}, "lineage": "x", "resources": [{resources}]}}"#)
}

const R: &str = r#"{"mode": "managed", "type": "terraform_data", "name": "a", "provider": "p", "instances": [{"attributes": {"id": "1"}}]}"#;

#[test]
fn item8_state_push_input_is_range_checked_and_unique() {
    // The largest serial a store can hold still imports...
    assert_eq!(
        import(with_resources("9223372036854775807", R).as_bytes())
            .unwrap()
            .serial,
        i64::MAX as u64,
        "case largest_serial"
    );
    let two = |a: &str, b: &str| with_resources("1", &format!("{a}, {b}"));
    let inst = |i: &str| {
        format!(
            r#"{{"mode": "managed", "type": "terraform_data", "name": "a", "provider": "p", "instances": [{i}]}}"#
        )
    };
    let cases: Vec<(&str, String, &str)> = vec![
        ("serial_u64_max", with_resources("18446744073709551615", R), "out of range"),
        ("serial_above_i64", with_resources("9223372036854775808", R), "out of range"),
        ("serial_negative", with_resources("-1", R), "out of range"),
        ("serial_fraction", with_resources("1.5", R), "out of range"),
        ("serial_string", with_resources("\"6\"", R), "must be a number"),
        ("duplicate_resource", two(R, R), "terraform_data.a appears more than once"),
        ("duplicate_instance", with_resources("1", &inst(r#"{"attributes": {}}, {"attributes": {}}"#)), "terraform_data.a appears more than once"),
        ("duplicate_deposed", with_resources("1", &inst(r#"{"deposed": "aa", "attributes": {}}, {"deposed": "aa", "attributes": {}}"#)), "deposed object aa more than once"),
        ("control_char_in_name", with_resources("1", &R.replace("\"name\": \"a\"", "\"name\": \"a\\u001b[31m\"")), "not a valid name"),
        ("newline_in_type", with_resources("1", &R.replace("\"type\": \"terraform_data\"", "\"type\": \"t\\nx\"")), "not a valid name"),
        ("control_char_in_output", r#"{"version": 4, "serial": 1, "lineage": "x", "outputs": {"o\u0007": {"value": 1, "type": "number"}}}"#.into(), "output name"),
        ("control_char_in_deposed_key", with_resources("1", &inst(r#"{"deposed": "a\u0000", "attributes": {}}"#)), "deposed key"),
        ("attributes_not_object", with_resources("1", &inst(r#"{"attributes": [1]}"#)), "must be an object"),
        ("attributes_missing", with_resources("1", &inst(r#"{"schema_version": 0}"#)), "has no \"attributes\""),
        ("schema_version_out_of_range", with_resources("1", &inst(r#"{"schema_version": 18446744073709551615, "attributes": {}}"#)), "schema_version 18446744073709551615 is out of range"),
    ];
    for (case, text, want) in cases {
        check_bad(case, &text, want);
    }
}
