//! The same postgresql provider binary under real Terraform (tfplugin6)
//! and under a Pulumi-protocol client (Pulumi's own generated stubs, PyPI
//! `pulumi`), managing the same database objects on the test server:
//! Terraform creates, Pulumi imports and updates in place, Terraform sees
//! the change, Pulumi creates and destroys its own role (password secret),
//! Terraform destroys what it made.

mod support;

use serde_json::{json, Value};
use support::{Tool, Work};
use terrane_testkit::pulumi::{urn, PulumiClient};

const BIN: &str = env!("CARGO_BIN_EXE_terraform-provider-postgresql");
const SECRET_SIG: &str = "1b47061264138c4ac30d75fd1eb44270";

fn config(srv: &support::Server, x: &str, limit: i64) -> String {
    let mut t = srv.provider_block("");
    t.push_str(&format!(
        r#"
resource "postgresql_role" "app" {{
  name             = "pul_{x}"
  login            = true
  connection_limit = {limit}
}}

resource "postgresql_database" "app" {{
  name  = "puldb_{x}"
  owner = postgresql_role.app.name
}}
"#
    ));
    t
}

fn pulumi(srv: &support::Server) -> PulumiClient {
    let mut c = PulumiClient::start(BIN.as_ref(), &[], &[]);
    let news = json!({
        "host": srv.host, "port": srv.port, "username": srv.user,
        "password": srv.password, "database": srv.database, "sslmode": "disable",
        "version": "0.1.0",
    });
    let checked = c.ok(
        "CheckConfig",
        json!({"urn": urn("pulumi:providers:postgresql", "pg"), "news": news}),
    );
    assert_eq!(checked["failures"], json!([]), "{checked}");
    c.ok(
        "Configure",
        json!({"args": checked["inputs"], "acceptSecrets": true}),
    );
    c
}

#[test]
fn item2_postgresql_same_binary_under_terraform_and_pulumi() {
    let Some((tf, srv)) = support::peers(Tool::Terraform) else {
        return;
    };
    let x = support::suffix();
    let role = format!("pul_{x}");
    let work = Work::new(tf, Tool::Terraform);
    work.write("main.tf", &config(&srv, &x, 3));
    work.apply();
    let limit = |name: &str| {
        srv.one(
            None,
            &format!("SELECT rolconnlimit FROM pg_roles WHERE rolname = '{name}'"),
        )
    };
    assert_eq!(limit(&role).as_deref(), Some("3"));

    // Pulumi: import the role Terraform made (Read with the ID only, then
    // Check and Diff: nothing to do).
    let mut c = pulumi(&srv);
    let u = urn("postgresql:index:Role", "app");
    let imported = c.ok("Read", json!({"urn": u, "id": role}));
    assert_eq!(imported["id"], role.as_str(), "{imported}");
    assert_eq!(imported["properties"]["connectionLimit"], 3.0);
    let inputs = imported["inputs"].clone();
    let checked = c.ok("Check", json!({"urn": u, "olds": inputs, "news": inputs}));
    assert_eq!(checked["failures"], json!([]), "{checked}");
    let d = c.ok(
        "Diff",
        json!({"urn": u, "id": role, "olds": imported["properties"], "news": checked["inputs"]}),
    );
    assert_eq!(d["changes"], "DIFF_NONE", "{d}");

    // Pulumi: update in place (connection limit 3 -> 5): preview, then update.
    let mut news = inputs.clone();
    news["connectionLimit"] = json!(5);
    let checked = c.ok("Check", json!({"urn": u, "olds": inputs, "news": news}));
    let d = c.ok(
        "Diff",
        json!({"urn": u, "id": role, "olds": imported["properties"], "news": checked["inputs"]}),
    );
    assert_eq!(d["changes"], "DIFF_SOME", "{d}");
    assert_eq!(
        d["detailedDiff"]["connectionLimit"]["kind"], "UPDATE",
        "{d}"
    );
    assert_eq!(d["replaces"], json!([]));
    let req = json!({"urn": u, "id": role, "olds": imported["properties"], "news": checked["inputs"], "preview": true});
    let preview = c.ok("Update", req.clone());
    assert_eq!(preview["properties"]["connectionLimit"], 5.0);
    assert_eq!(
        limit(&role).as_deref(),
        Some("3"),
        "a preview changes nothing"
    );
    let mut req = req;
    req["preview"] = json!(false);
    let updated = c.ok("Update", req);
    assert_eq!(updated["properties"]["connectionLimit"], 5.0);
    assert_eq!(limit(&role).as_deref(), Some("5"));

    // Terraform sees the change Pulumi made as drift; its config catching
    // up leaves nothing to do.
    work.plan(2);
    work.write("main.tf", &config(&srv, &x, 5));
    work.plan(0);

    // Pulumi: refresh reads the same object.
    let refreshed = c.ok(
        "Read",
        json!({"urn": u, "id": role, "properties": updated["properties"], "inputs": checked["inputs"]}),
    );
    assert_eq!(refreshed["properties"]["connectionLimit"], 5.0);

    // Pulumi: a role of its own, with a secret password; then destroy it.
    let own = format!("pulown_{x}");
    let u2 = urn("postgresql:index:Role", "own");
    let checked = c.ok(
        "Check",
        json!({"urn": u2, "news": {"name": own, "login": true, "password": "s3cret-pw"}}),
    );
    assert_eq!(checked["failures"], json!([]), "{checked}");
    let preview = c.ok(
        "Create",
        json!({"urn": u2, "properties": checked["inputs"], "preview": true}),
    );
    assert_eq!(limit(&own), None, "a preview creates nothing: {preview}");
    let created = c.ok(
        "Create",
        json!({"urn": u2, "properties": checked["inputs"]}),
    );
    assert_eq!(created["id"], own.as_str());
    assert_eq!(
        created["properties"]["password"]["4dabf18193072939515e22adb298388d"],
        SECRET_SIG
    );
    assert_eq!(limit(&own).as_deref(), Some("-1"));
    c.ok(
        "Delete",
        json!({"urn": u2, "id": own, "properties": created["properties"]}),
    );
    assert_eq!(limit(&own), None);
    // Refresh of a deleted object answers an empty ID.
    let gone = c.ok(
        "Read",
        json!({"urn": u2, "id": own, "properties": created["properties"]}),
    );
    assert_eq!(gone["id"], "", "{gone}");
    let (exit, stderr) = c.stop();
    assert_eq!(exit, 0, "{stderr}");
    assert!(
        !stderr.contains("s3cret-pw"),
        "the password reached the plugin's output"
    );

    work.expect(
        &["destroy", "-auto-approve", "-input=false", "-no-color"],
        0,
    );
    assert_eq!(limit(&role), None);
    srv.cleanup(&x);
}

#[test]
fn item2_postgresql_pulumi_check_failure_paths() {
    let Some(url) = terrane_testkit::pg_url() else {
        return;
    };
    let srv = support::parse_url(&url);
    let mut c = pulumi(&srv);
    let u = urn("postgresql:index:Role", "bad");
    let cases: &[(&str, Value, &str)] = &[
        (
            "limit below -1",
            json!({"name": "ok", "connectionLimit": -5}),
            "connectionLimit",
        ),
        (
            "bad identifier in a set",
            json!({"name": "ok", "roles": ["a\u{0}b"]}),
            "roles",
        ),
    ];
    for (name, news, property) in cases {
        let r = c.ok("Check", json!({"urn": u, "news": news}));
        let f = r["failures"].as_array().unwrap();
        assert!(
            f.iter()
                .any(|f| f["property"].as_str().unwrap().starts_with(property)),
            "{name}: {r}"
        );
    }
}

#[test]
fn item2_postgresql_launches_both_ways() {
    terrane_testkit::pulumi::assert_launches_both_ways(BIN.as_ref(), "0.1.0");
}
