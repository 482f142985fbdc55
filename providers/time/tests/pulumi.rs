//! The time provider binary served over Pulumi's protocol, driven by a
//! client built from Pulumi's own generated stubs (PyPI `pulumi`): preview
//! with unknown computed values, create, an in-place update with computed
//! values recomputed, import, refresh, destroy.

use serde_json::json;
use terrane_testkit::pulumi::{urn, PulumiClient};

const BIN: &str = env!("CARGO_BIN_EXE_terraform-provider-time");
const UNKNOWN: &str = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

fn client() -> PulumiClient {
    let mut c = PulumiClient::start(BIN.as_ref(), &[], &[]);
    c.ok("Configure", json!({"args": {}, "acceptSecrets": true}));
    c
}

#[test]
fn item2_time_pulumi_static_preview_create_import_refresh_destroy() {
    let mut c = client();
    let u = urn("time:index:Static", "now");
    let checked = c.ok("Check", json!({"urn": u, "news": {}}));
    assert_eq!(checked["failures"], json!([]), "{checked}");
    let preview = c.ok(
        "Create",
        json!({"urn": u, "properties": checked["inputs"], "preview": true}),
    );
    assert_eq!(preview["properties"]["rfc3339"], UNKNOWN, "{preview}");
    assert_eq!(preview["properties"]["year"], UNKNOWN);
    let fixed = json!({"rfc3339": "2031-02-03T04:05:06Z"});
    let checked = c.ok("Check", json!({"urn": u, "news": fixed}));
    let created = c.ok("Create", json!({"urn": u, "properties": checked["inputs"]}));
    assert_eq!(created["id"], "2031-02-03T04:05:06Z", "{created}");
    assert_eq!(created["properties"]["year"], 2031.0);
    let read = c.ok(
        "Read",
        json!({"urn": u, "id": created["id"], "properties": created["properties"], "inputs": checked["inputs"]}),
    );
    assert_eq!(read["properties"], created["properties"]);
    let imported = c.ok(
        "Read",
        json!({"urn": urn("time:index:Static", "imp"), "id": "2031-02-03T04:05:06Z"}),
    );
    assert_eq!(imported["properties"]["month"], 2.0, "{imported}");
    assert_eq!(imported["inputs"]["rfc3339"], "2031-02-03T04:05:06Z");
    // Changing rfc3339 replaces (requires replace), delete first.
    let changed = c.ok(
        "Check",
        json!({"urn": u, "olds": checked["inputs"], "news": {"rfc3339": "2032-01-01T00:00:00Z"}}),
    );
    let d = c.ok(
        "Diff",
        json!({"urn": u, "id": created["id"], "olds": created["properties"], "news": changed["inputs"]}),
    );
    assert_eq!(d["replaces"], json!(["rfc3339"]), "{d}");
    assert_eq!(d["deleteBeforeReplace"], true);
    c.ok(
        "Delete",
        json!({"urn": u, "id": created["id"], "properties": created["properties"]}),
    );
    let (exit, stderr) = c.stop();
    assert_eq!(exit, 0, "{stderr}");
}

#[test]
fn item2_time_pulumi_offset_update_in_place() {
    let mut c = client();
    let u = urn("time:index:Offset", "later");
    let news = json!({"baseRfc3339": "2030-01-01T00:00:00Z", "offsetDays": 1});
    let checked = c.ok("Check", json!({"urn": u, "news": news}));
    assert_eq!(checked["failures"], json!([]), "{checked}");
    let created = c.ok("Create", json!({"urn": u, "properties": checked["inputs"]}));
    assert_eq!(
        created["properties"]["rfc3339"], "2030-01-02T00:00:00Z",
        "{created}"
    );
    let news = json!({"baseRfc3339": "2030-01-01T00:00:00Z", "offsetDays": 2});
    let checked2 = c.ok(
        "Check",
        json!({"urn": u, "olds": checked["inputs"], "news": news}),
    );
    let d = c.ok(
        "Diff",
        json!({"urn": u, "id": created["id"], "olds": created["properties"], "news": checked2["inputs"]}),
    );
    assert_eq!(d["changes"], "DIFF_SOME", "{d}");
    assert_eq!(d["detailedDiff"]["offsetDays"]["kind"], "UPDATE", "{d}");
    assert_eq!(d["replaces"], json!([]));
    let req = json!({"urn": u, "id": created["id"], "olds": created["properties"], "news": checked2["inputs"], "preview": true});
    let preview = c.ok("Update", req.clone());
    assert_eq!(preview["properties"]["rfc3339"], UNKNOWN, "{preview}");
    let mut req = req;
    req["preview"] = json!(false);
    let updated = c.ok("Update", req);
    assert_eq!(
        updated["properties"]["rfc3339"], "2030-01-03T00:00:00Z",
        "{updated}"
    );
}

#[test]
fn item2_time_launches_both_ways() {
    terrane_testkit::pulumi::assert_launches_both_ways(BIN.as_ref(), "0.1.0");
}
