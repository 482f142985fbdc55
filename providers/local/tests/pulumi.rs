//! The local provider binary served over Pulumi's protocol, driven by a
//! client built from Pulumi's own generated stubs (PyPI `pulumi`): a file
//! previewed, created, replaced on a content change, refreshed after it
//! was removed outside (an empty ID), destroyed; a sensitive file's content
//! as a secret; Invoke of the provider function and of a data source.

use serde_json::json;
use terrane_testkit::pulumi::{urn, PulumiClient};

const BIN: &str = env!("CARGO_BIN_EXE_terraform-provider-local");
const UNKNOWN: &str = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
const SECRET_SIG: &str = "1b47061264138c4ac30d75fd1eb44270";

fn client() -> PulumiClient {
    let mut c = PulumiClient::start(BIN.as_ref(), &[], &[]);
    c.ok("Configure", json!({"args": {}, "acceptSecrets": true}));
    c
}

#[test]
fn item2_local_pulumi_file_lifecycle() {
    let dir = terrane_testkit::temp_dir();
    let path = dir.path().join("sub/hello.txt");
    let file = path.display().to_string();
    let mut c = client();
    let u = urn("local:index:File", "hello");
    let news = json!({"filename": file, "content": "hi\n"});
    let checked = c.ok("Check", json!({"urn": u, "news": news}));
    assert_eq!(checked["failures"], json!([]), "{checked}");
    assert_eq!(
        checked["inputs"]["filePermission"], "0777",
        "defaults: {checked}"
    );
    let preview = c.ok(
        "Create",
        json!({"urn": u, "properties": checked["inputs"], "preview": true}),
    );
    assert_eq!(preview["properties"]["contentSha256"], UNKNOWN, "{preview}");
    assert!(
        preview["properties"].get("id").is_none(),
        "the ID is not a property"
    );
    assert!(!path.exists(), "a preview writes nothing");
    let created = c.ok("Create", json!({"urn": u, "properties": checked["inputs"]}));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "hi\n");
    let state = created["properties"].clone();
    let changed = c.ok("Check", json!({"urn": u, "olds": checked["inputs"], "news": {"filename": file, "content": "bye\n"}}));
    let d = c.ok(
        "Diff",
        json!({"urn": u, "id": created["id"], "olds": state, "news": changed["inputs"]}),
    );
    assert_eq!(
        d["detailedDiff"]["content"]["kind"], "UPDATE_REPLACE",
        "{d}"
    );
    // Invoke: the provider function and the data source.
    let r = c.ok("Invoke", json!({"tok": "local:index:direxists", "args": {"path": dir.path().join("sub").display().to_string()}}));
    assert_eq!(r["return"]["result"], true, "{r}");
    let r = c.ok(
        "Invoke",
        json!({"tok": "local:index:direxists", "args": {"path": path.display().to_string()}}),
    );
    assert_eq!(r["failures"][0]["property"], "path", "{r}");
    let r = c.ok(
        "Invoke",
        json!({"tok": "local:index:getFile", "args": {"filename": file}}),
    );
    assert_eq!(r["return"]["content"], "hi\n", "{r}");
    // Removed outside: refresh answers an empty ID.
    std::fs::remove_file(&path).unwrap();
    let gone = c.ok(
        "Read",
        json!({"urn": u, "id": created["id"], "properties": state, "inputs": checked["inputs"]}),
    );
    assert_eq!(gone["id"], "", "{gone}");
    c.ok(
        "Delete",
        json!({"urn": u, "id": created["id"], "properties": state}),
    );
    let (exit, stderr) = c.stop();
    assert_eq!(exit, 0, "{stderr}");
}

#[test]
fn item2_local_pulumi_sensitive_file_is_secret() {
    let dir = terrane_testkit::temp_dir();
    let file = dir.path().join("secret.txt").display().to_string();
    let mut c = client();
    let u = urn("local:index:SensitiveFile", "s");
    let checked = c.ok(
        "Check",
        json!({"urn": u, "news": {"filename": file, "content": "pw"}}),
    );
    assert_eq!(
        checked["inputs"]["content"]["4dabf18193072939515e22adb298388d"], SECRET_SIG,
        "{checked}"
    );
    let created = c.ok("Create", json!({"urn": u, "properties": checked["inputs"]}));
    assert_eq!(created["properties"]["content"]["value"], "pw", "{created}");
    assert_eq!(
        created["properties"]["content"]["4dabf18193072939515e22adb298388d"],
        SECRET_SIG
    );
    c.ok(
        "Delete",
        json!({"urn": u, "id": created["id"], "properties": created["properties"]}),
    );
    assert!(!std::path::Path::new(&file).exists());
}

#[test]
fn item2_local_launches_both_ways() {
    terrane_testkit::pulumi::assert_launches_both_ways(BIN.as_ref(), "0.1.0");
}
