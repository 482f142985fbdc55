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
        "legacy_flatmap_not_strings",
        r#"{"version": 4, "serial": 1, "lineage": "x", "resources": [{"mode": "managed", "type": "t", "name": "n", "provider": "p", "instances": [{"attributes_flat": {"id": 1}}]}]}"#,
        "t.n: \"attributes_flat\" must be an object of strings",
    );
    check_bad(
        "legacy_flatmap_and_attributes",
        r#"{"version": 4, "serial": 1, "lineage": "x", "resources": [{"mode": "managed", "type": "t", "name": "n", "provider": "p", "instances": [{"attributes": {}, "attributes_flat": {"id": "1"}}]}]}"#,
        "t.n has both \"attributes\" and \"attributes_flat\"",
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

/// A v4 state as Terraform 0.12's upgrade of a 0.11 state left it: an
/// object in flatmap form (`attributes_flat`) and one in JSON.
const FLAT: &str = r#"{
  "version": 4,
  "terraform_version": "0.12.31",
  "serial": 3,
  "lineage": "5f0e6f2c-9a57-4d8b-a4b6-0d3a4c0a7d21",
  "outputs": {},
  "resources": [
    {
      "mode": "managed",
      "type": "null_resource",
      "name": "a",
      "provider": "provider.null",
      "instances": [
        {
          "schema_version": 0,
          "attributes_flat": {
            "id": "6190112264328462128",
            "triggers.%": "1",
            "triggers.version": "3"
          }
        }
      ]
    },
    {
      "mode": "managed",
      "type": "null_resource",
      "name": "b",
      "provider": "provider.null",
      "instances": [
        {
          "schema_version": 0,
          "attributes": {"id": "1", "triggers": null}
        }
      ]
    }
  ]
}"#;

/// Issue 15 item 3: a pre-0.12 object is kept as its flatmap, verbatim,
/// until the provider upgrades it; a v4 export writes it back as
/// `attributes_flat` (as Terraform writes a state it has not upgraded).
#[test]
fn item3_attributes_flat_kept_until_upgrade() {
    let snap = import(FLAT.as_bytes()).unwrap();
    let obj = |name: &str| {
        snap.resources
            .iter()
            .find(|(a, _)| a.name == name)
            .and_then(|(_, r)| r.instances.get(&InstanceKey::None))
            .and_then(|i| i.current.clone())
            .unwrap()
    };
    let a = obj("a");
    let want: BTreeMap<String, String> = [
        ("id", "6190112264328462128"),
        ("triggers.%", "1"),
        ("triggers.version", "3"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let check = |case: &str, ok: bool| assert!(ok, "case {case}");
    check(
        "flatmap_kept_verbatim",
        a.attributes_flat.as_ref() == Some(&want),
    );
    check("no_attributes_until_upgrade", a.attributes.is_null());
    check(
        "json_object_has_no_flatmap",
        obj("b").attributes_flat.is_none(),
    );
    let out: Json = serde_json::from_str(&export(&snap)).unwrap();
    let inst = |i: usize| out["resources"][i]["instances"][0].clone();
    check(
        "export_writes_attributes_flat",
        inst(0)["attributes_flat"] == json!(want) && inst(0).get("attributes").is_none(),
    );
    check(
        "export_writes_json_attributes",
        inst(1)["attributes"] == json!({"id": "1", "triggers": null})
            && inst(1).get("attributes_flat").is_none(),
    );
    check(
        "round_trip",
        import(export(&snap).as_bytes()).unwrap() == snap,
    );
    // Once upgraded, the object is attributes JSON like any other.
    let mut up = snap.clone();
    let addr = snap
        .resources
        .keys()
        .next()
        .unwrap()
        .instance(InstanceKey::None);
    up.apply(crate::Change::SetObject {
        addr,
        deposed: None,
        provider: "provider.null".into(),
        object: ObjectState {
            attributes: json!({"id": "6190112264328462128", "triggers": {"version": "3"}}).into(),
            attributes_flat: None,
            ..a.clone()
        },
    });
    let out: Json = serde_json::from_str(&export(&up)).unwrap();
    check(
        "upgraded_exported_as_attributes",
        out["resources"][0]["instances"][0]
            .get("attributes_flat")
            .is_none()
            && out["resources"][0]["instances"][0]["attributes"]["triggers"]["version"] == "3",
    );
}

/// `state push` checks a flatmap against the resource type's schema when
/// it has one: a value the type cannot hold is refused, naming the key;
/// one that fits is still kept verbatim.
#[test]
fn item3_attributes_flat_checked_against_schema() {
    let ty = terrane_value::Type::object([
        ("id", terrane_value::Type::String),
        (
            "triggers",
            terrane_value::Type::map(terrane_value::Type::String),
        ),
    ]);
    let asked = std::cell::RefCell::new(Vec::new());
    let snap = import_with(FLAT.as_bytes(), &|addr, provider, version| {
        asked
            .borrow_mut()
            .push(format!("{addr} {provider} {version}"));
        Some(ty.clone())
    })
    .unwrap();
    // Only the flatmap object needs the schema.
    assert_eq!(asked.into_inner(), ["null_resource.a provider.null 0"]);
    assert_eq!(snap, import(FLAT.as_bytes()).unwrap(), "case kept_verbatim");
    let found = flatmap_resources(FLAT.as_bytes()).unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].0.to_string(), "null_resource.a");
    assert_eq!(found[0].1, "provider.null");
    // A value the schema's type cannot hold: refused, naming the key.
    let boolean = terrane_value::Type::object([("id", terrane_value::Type::Bool)]);
    let e = import_with(FLAT.as_bytes(), &|_, _, _| Some(boolean.clone()))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(
            "null_resource.a: attributes_flat: \"id\": \"6190112264328462128\" is not a valid bool"
        ),
        "{e}"
    );
}

/// OpenTofu's layout for a resource served by a provider with for_each:
/// each instance names its provider instance, the resource none.
const TOFU_KEYED: &str = r#"{
  "version": 4,
  "terraform_version": "1.9.0",
  "serial": 3,
  "lineage": "0b6cfa3c-2f2b-4d0a-9d5e-1f1a8a2c9b11",
  "outputs": {},
  "resources": [
    {
      "mode": "managed",
      "type": "blocks_server",
      "name": "s",
      "each": "map",
      "instances": [
        {
          "index_key": "a",
          "provider": "provider[\"example.com/terrane/blocks\"].by_region[\"a\"]",
          "schema_version": 0,
          "attributes": {"id": "1"}
        },
        {
          "index_key": "b",
          "provider": "provider[\"example.com/terrane/blocks\"].by_region[\"b \\\"q\\\"]\"]",
          "schema_version": 0,
          "attributes": {"id": "2"}
        }
      ]
    }
  ],
  "check_results": null
}
"#;

fn check_split(case: &str, s: &str, config: &str, key: Option<&str>) {
    let (c, k) = crate::model::split_provider_instance(s);
    assert_eq!((c.as_str(), k.as_deref()), (config, key), "case {case}");
    assert_eq!(
        crate::model::provider_instance_string(&c, k.as_deref()),
        s,
        "case {case}: round trip"
    );
}

#[test]
fn item3_provider_instance_keys_split_and_join() {
    let p = r#"provider["registry.opentofu.org/hashicorp/aws"]"#;
    check_split("default", p, p, None);
    let a = format!("{p}.by_region");
    check_split("alias", &a, &a, None);
    check_split(
        "keyed",
        &format!(r#"{a}["eu-west-1"]"#),
        &a,
        Some("eu-west-1"),
    );
    check_split("bracket_in_key", &format!(r#"{a}["x]"]"#), &a, Some("x]"));
    check_split("quote_in_key", &format!(r#"{a}["q\"]"]"#), &a, Some("q\"]"));
    let m = format!(r#"module.m.{a}["k"]"#);
    check_split("module", &m, &format!("module.m.{a}"), Some("k"));
}

#[test]
fn item3_opentofu_instance_providers_import_and_export() {
    let s = import(TOFU_KEYED.as_bytes()).expect("OpenTofu's keyed layout imports");
    let r = s.resources.values().next().unwrap();
    assert_eq!(
        r.provider,
        r#"provider["example.com/terrane/blocks"].by_region"#
    );
    let keys: Vec<Option<&str>> = r
        .instances
        .values()
        .map(|i| i.provider_key.as_deref())
        .collect();
    assert_eq!(keys, [Some("a"), Some("b \"q\"]")]);
    assert_eq!(
        r.instance_provider(&InstanceKey::Str("a".into())),
        r#"provider["example.com/terrane/blocks"].by_region["a"]"#
    );
    let out = export(&s);
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    let res = &j["resources"][0];
    assert!(res.get("provider").is_none(), "{out}");
    assert_eq!(
        res["instances"][1]["provider"],
        r#"provider["example.com/terrane/blocks"].by_region["b \"q\"]"]"#
    );
    // And back: the same snapshot.
    assert_eq!(import(out.as_bytes()).unwrap().resources, s.resources);
    // A change through a keyed provider keeps the other instances' keys.
    let mut s2 = s.clone();
    let addr = s
        .resources
        .keys()
        .next()
        .unwrap()
        .instance(InstanceKey::Str("a".into()));
    let object = s.object(&addr, None).cloned().unwrap();
    s2.apply(crate::model::Change::SetObject {
        addr,
        deposed: None,
        provider: r#"provider["example.com/terrane/blocks"].by_region["c"]"#.into(),
        object,
    });
    let r2 = s2.resources.values().next().unwrap();
    let keys: Vec<Option<&str>> = r2
        .instances
        .values()
        .map(|i| i.provider_key.as_deref())
        .collect();
    assert_eq!(keys, [Some("c"), Some("b \"q\"]")]);
    // An instance naming another configuration than its resource: refused.
    let bad = TOFU_KEYED.replacen(
        r#"provider[\"example.com/terrane/blocks\"].by_region[\"a\"]"#,
        r#"provider[\"example.com/terrane/blocks\"].other[\"a\"]"#,
        1,
    );
    let bad = bad.replacen(
        r#""each": "map","#,
        r#""each": "map", "provider": "provider[\"example.com/terrane/blocks\"].by_region","#,
        1,
    );
    let e = import(bad.as_bytes()).unwrap_err().to_string();
    assert!(e.contains("is not the resource's"), "{e}");
}
