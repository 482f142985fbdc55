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
    assert!(err.contains(want), "case {case}: {err:?} does not contain {want:?}");
}

#[test]
fn bad_input_is_a_clear_error() {
    check_bad("invalid_json", "{\"version\": 4,", "not valid JSON");
    check_bad("not_an_object", "[]", "must be a JSON object");
    check_bad("wrong_version", r#"{"version": 3, "serial": 1, "lineage": "x"}"#, "unsupported state format version 3");
    check_bad("no_version", r#"{"serial": 1, "lineage": "x"}"#, "has no \"version\"");
    check_bad("unknown_top_field", r#"{"version": 4, "serial": 1, "lineage": "x", "extra": 1}"#, "unsupported field \"extra\"");
    check_bad("no_lineage", r#"{"version": 4, "serial": 1}"#, "needs a string \"lineage\"");
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
