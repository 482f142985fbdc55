//! The postgresql provider under real Terraform and under terrane (the
//! same scenario, commands and assertions) against a real PostgreSQL
//! server: create, a no-change plan that proves normalization (encoding,
//! privilege and timestamp spellings), in-place updates (owner, limits,
//! password rotation through a write-only attribute), replacement on an
//! encoding change, drift made with SQL outside the tool (altered role,
//! revoked grant, dropped extension, renamed and dropped databases)
//! detected and repaired, destroy in dependency order; the passwords never
//! appear in plan output, in TF_LOG=trace logs, or (write-only) in state.

mod support;

use support::{peers, suffix, Tool, Work};

fn config(srv: &support::Server, x: &str, v: &Vars) -> String {
    let mut t = srv.provider_block("");
    t.push_str(&format!(
        r#"
resource "postgresql_role" "owner" {{
  name                = "owner_{x}"
  login               = true
  valid_until         = "2031-01-01"
  connection_limit    = {limit}
  password_wo         = "{wo}"
  password_wo_version = {wo_version}
  search_path         = ["$user", "public"]
}}

resource "postgresql_role" "other" {{
  name     = "other_{x}"
  password = "plain-secret-{x}"
}}

resource "postgresql_role" "reader" {{
  name  = "Reader_{x}"
  roles = [postgresql_role.other.name]
}}

resource "postgresql_database" "db" {{
  name             = "db_{x}"
  owner            = {owner}
  encoding         = "utf8"
  lc_collate       = "C"
  lc_ctype         = "C"
  connection_limit = 10
}}

resource "postgresql_database" "scratch" {{
  name       = "scratch_{x}"
  encoding   = "{scratch_encoding}"
  lc_collate = "C"
  lc_ctype   = "C"
}}

resource "postgresql_schema" "sales" {{
  name     = "sales"
  database = postgresql_database.db.name
  owner    = postgresql_role.owner.name
}}

resource "postgresql_grant" "connect" {{
  role        = postgresql_role.reader.name
  database    = postgresql_database.db.name
  object_type = "database"
  privileges  = ["connect", "temp"]
}}

resource "postgresql_grant" "usage" {{
  role        = postgresql_role.reader.name
  database    = postgresql_database.db.name
  schema      = postgresql_schema.sales.name
  object_type = "schema"
  privileges  = ["ALL"]
}}

resource "postgresql_extension" "hstore" {{
  name     = "hstore"
  database = postgresql_database.db.name
  schema   = postgresql_schema.sales.name
}}

data "postgresql_schemas" "sales" {{
  database          = postgresql_database.db.name
  like_any_patterns = ["sal%"]
  depends_on        = [postgresql_schema.sales]
}}

output "schemas" {{
  value = data.postgresql_schemas.sales.schemas
}}
"#,
        limit = v.limit,
        wo = v.wo,
        wo_version = v.wo_version,
        owner = if v.other_owns {
            "postgresql_role.other.name"
        } else {
            "postgresql_role.owner.name"
        },
        scratch_encoding = v.scratch_encoding,
    ));
    t
}

struct Vars {
    limit: i64,
    wo: String,
    wo_version: i64,
    other_owns: bool,
    scratch_encoding: &'static str,
}

#[test]
fn lifecycle_under_terraform() {
    lifecycle(Tool::Terraform);
}

#[test]
fn lifecycle_under_terrane() {
    lifecycle(Tool::Terrane);
}

#[test]
fn lifecycle_under_terrane_in_process() {
    lifecycle(Tool::TerraneInProcess);
}

/// Issue 15: the same lifecycle with the plugin offering only protocol 5,
/// under Terraform and under terrane.
#[test]
fn lifecycle_under_terraform_over_protocol_5() {
    lifecycle_offering(Tool::Terraform, "5");
}

#[test]
fn lifecycle_under_terrane_over_protocol_5() {
    lifecycle_offering(Tool::Terrane, "5");
}

fn lifecycle(tool: Tool) {
    lifecycle_offering(tool, "5,6");
}

fn lifecycle_offering(tool: Tool, protocols: &'static str) {
    let Some((tf, srv)) = peers(tool) else { return };
    let x = suffix();
    let work = Work::new(tf, tool).offering(protocols);
    let wo1 = format!("wo-first-secret-{x}");
    let wo2 = format!("wo-second-secret-{x}");
    let plain = format!("plain-secret-{x}");
    let mut v = Vars {
        limit: 5,
        wo: wo1.clone(),
        wo_version: 1,
        other_owns: false,
        scratch_encoding: "utf8",
    };
    work.write("main.tf", &config(&srv, &x, &v));
    let secrets_absent = |what: &str, text: &str| {
        for s in [&wo1, &wo2, &plain] {
            assert!(
                !text.contains(s.as_str()),
                "case password_never_in_{what}: found a password"
            );
        }
    };
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        work.expect(&["init", "-input=false", "-no-color"], 0);
        work.expect(&["validate", "-no-color"], 0);

        // Create, logging at trace level: no password in the plan or logs.
        let plan = work.plan(2);
        assert!(
            plan.contains("9 to add, 0 to change, 0 to destroy"),
            "case plan_creates_all\n{plan}"
        );
        secrets_absent("plan_output", &plan);
        let applied = work.run_env(
            &["apply", "-auto-approve", "-input=false", "-no-color"],
            &[("TF_LOG", "trace")],
        );
        assert_eq!(
            applied.code, 0,
            "apply\n{}\n{}",
            applied.stdout, applied.stderr
        );
        assert!(
            applied.stderr.contains("executing statement")
                && applied.stderr.contains("CREATE ROLE"),
            "case provider_logs_reach_trace_log"
        );
        assert!(
            applied.stderr.contains("PASSWORD '***'"),
            "case password_redacted_in_logged_statement"
        );
        secrets_absent(
            "trace_log",
            &format!("{}{}", applied.stdout, applied.stderr),
        );

        // The truth on the server.
        let q = |sql: &str| srv.one(None, sql);
        let role = format!("owner_{x}");
        assert_eq!(q(&format!("SELECT rolcanlogin::text || ',' || rolconnlimit || ',' || (rolvaliduntil AT TIME ZONE 'UTC')::text FROM pg_roles WHERE rolname = '{role}'")).as_deref(), Some("true,5,2031-01-01 00:00:00"), "case role_created");
        let hash1 = q(&format!(
            "SELECT rolpassword FROM pg_authid WHERE rolname = '{role}'"
        ))
        .expect("password set");
        assert!(
            hash1.starts_with("SCRAM-SHA-256$"),
            "case write_only_password_sent"
        );
        assert_eq!(
            q(&format!(
                "SELECT array_to_string(rolconfig, ';') FROM pg_roles WHERE rolname = '{role}'"
            ))
            .as_deref(),
            Some("search_path=\"$user\", public"),
            "case search_path_set"
        );
        assert_eq!(q(&format!("SELECT count(*)::text FROM pg_auth_members m JOIN pg_roles r ON r.oid = m.member JOIN pg_roles g ON g.oid = m.roleid WHERE r.rolname = 'Reader_{x}' AND g.rolname = 'other_{x}'")).as_deref(), Some("1"), "case membership");
        let db = format!("db_{x}");
        assert_eq!(
            q(&format!("SELECT pg_get_userbyid(datdba)::text || ',' || pg_encoding_to_char(encoding) || ',' || datcollate || ',' || datconnlimit FROM pg_database WHERE datname = '{db}'")).as_deref(),
            Some(format!("{role},UTF8,C,10").as_str()),
            "case database_created"
        );
        assert_eq!(
            srv.one(
                Some(&db),
                "SELECT pg_get_userbyid(nspowner)::text FROM pg_namespace WHERE nspname = 'sales'"
            )
            .as_deref(),
            Some(role.as_str()),
            "case schema_created"
        );
        let db_privs = |db: &str| {
            q(&format!("SELECT string_agg(a.privilege_type, ',' ORDER BY a.privilege_type) FROM pg_database d, aclexplode(d.datacl) a JOIN pg_roles r ON r.oid = a.grantee WHERE d.datname = '{db}' AND r.rolname = 'Reader_{x}'"))
        };
        assert_eq!(
            db_privs(&db).as_deref(),
            Some("CONNECT,TEMPORARY"),
            "case database_grant"
        );
        assert_eq!(srv.one(Some(&db), &format!("SELECT string_agg(a.privilege_type, ',' ORDER BY a.privilege_type) FROM pg_namespace n, aclexplode(n.nspacl) a JOIN pg_roles r ON r.oid = a.grantee WHERE n.nspname = 'sales' AND r.rolname = 'Reader_{x}'")).as_deref(), Some("CREATE,USAGE"), "case schema_grant_all");
        assert_eq!(srv.one(Some(&db), "SELECT n.nspname::text FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE extname = 'hstore'").as_deref(), Some("sales"), "case extension_created");
        assert_eq!(
            work.expect(&["output", "-json", "schemas"], 0)
                .stdout
                .trim(),
            "[\"sales\"]",
            "case schemas_data_source"
        );

        // Normalization: utf8/UTF8, connect,temp/CONNECT,TEMPORARY,
        // ALL/CREATE,USAGE, 2031-01-01/2031-01-01T00:00:00Z: no change.
        work.plan(0);

        // State: the write-only password is not there, the other is
        // marked sensitive; the state file holds neither write-only value.
        let state = work.show();
        let (owner_v, _) = work.resource(&state, "postgresql_role.owner");
        assert!(
            owner_v["password_wo"].is_null(),
            "case write_only_not_in_state"
        );
        assert_eq!(
            owner_v["valid_until"], "2031-01-01",
            "case prior_spelling_in_state"
        );
        let (_, other_s) = work.resource(&state, "postgresql_role.other");
        assert_eq!(
            other_s["password"],
            serde_json::json!(true),
            "case password_marked_sensitive"
        );
        let raw_state = work.raw_state();
        assert!(
            !raw_state.contains(&wo1),
            "case write_only_not_in_state_file"
        );

        // In-place: limit, owner, password rotation by version.
        v.limit = 8;
        v.other_owns = true;
        v.wo = wo2.clone();
        v.wo_version = 2;
        work.write("main.tf", &config(&srv, &x, &v));
        let plan = work.plan(2);
        assert!(
            plan.contains("postgresql_role.owner will be updated in-place")
                && plan.contains("postgresql_database.db will be updated in-place")
                && plan.contains("0 to add, 2 to change, 0 to destroy"),
            "case in_place_update\n{plan}"
        );
        secrets_absent("update_plan_output", &plan);
        let applied = work.run_env(
            &["apply", "-auto-approve", "-input=false", "-no-color"],
            &[("TF_LOG", "trace")],
        );
        assert_eq!(
            applied.code, 0,
            "apply\n{}\n{}",
            applied.stdout, applied.stderr
        );
        secrets_absent(
            "update_trace_log",
            &format!("{}{}", applied.stdout, applied.stderr),
        );
        assert_eq!(
            q(&format!(
                "SELECT rolconnlimit::text FROM pg_roles WHERE rolname = '{role}'"
            ))
            .as_deref(),
            Some("8"),
            "case limit_updated"
        );
        let hash2 = q(&format!(
            "SELECT rolpassword FROM pg_authid WHERE rolname = '{role}'"
        ))
        .expect("password set");
        assert_ne!(hash1, hash2, "case password_rotated_by_version");
        assert_eq!(
            q(&format!(
                "SELECT pg_get_userbyid(datdba)::text FROM pg_database WHERE datname = '{db}'"
            )),
            Some(format!("other_{x}")),
            "case owner_updated"
        );
        work.plan(0);
        let raw_state = work.raw_state();
        assert!(
            !raw_state.contains(&wo2),
            "case rotated_write_only_not_in_state_file"
        );

        // Replacement: PostgreSQL cannot change a database's encoding.
        let scratch = format!("scratch_{x}");
        let oid_before = q(&format!(
            "SELECT oid::text FROM pg_database WHERE datname = '{scratch}'"
        ));
        v.scratch_encoding = "LATIN1";
        work.write("main.tf", &config(&srv, &x, &v));
        let plan = work.plan(2);
        assert!(
            plan.contains("postgresql_database.scratch must be replaced")
                && plan.contains("1 to add, 0 to change, 1 to destroy"),
            "case encoding_change_replaces\n{plan}"
        );
        work.apply();
        assert_eq!(q(&format!("SELECT pg_encoding_to_char(encoding)::text FROM pg_database WHERE datname = '{scratch}'")).as_deref(), Some("LATIN1"), "case replaced_encoding");
        assert_ne!(
            q(&format!(
                "SELECT oid::text FROM pg_database WHERE datname = '{scratch}'"
            )),
            oid_before,
            "case replaced_is_new"
        );
        work.plan(0);

        // Drift made outside: an altered role, a revoked privilege, a
        // dropped extension. The plan repairs each.
        srv.exec(None, &format!("ALTER ROLE \"{role}\" CONNECTION LIMIT 99; REVOKE TEMPORARY ON DATABASE \"{db}\" FROM \"Reader_{x}\""));
        srv.exec(Some(&db), "DROP EXTENSION hstore");
        let plan = work.plan(2);
        assert!(
            plan.contains("postgresql_role.owner will be updated in-place")
                && plan.contains("postgresql_grant.connect will be updated in-place")
                && plan.contains("postgresql_extension.hstore will be created")
                && plan.contains("1 to add, 2 to change, 0 to destroy"),
            "case drift_detected\n{plan}"
        );
        work.apply();
        assert_eq!(
            q(&format!(
                "SELECT rolconnlimit::text FROM pg_roles WHERE rolname = '{role}'"
            ))
            .as_deref(),
            Some("8"),
            "case role_drift_repaired"
        );
        assert_eq!(
            db_privs(&db).as_deref(),
            Some("CONNECT,TEMPORARY"),
            "case revoked_grant_repaired"
        );
        assert!(
            srv.one(
                Some(&db),
                "SELECT extname::text FROM pg_extension WHERE extname = 'hstore'"
            )
            .is_some(),
            "case dropped_extension_repaired"
        );
        work.plan(0);

        // A database renamed outside is followed by its oid: the plan
        // renames it back in place.
        srv.exec(
            None,
            &format!("ALTER DATABASE \"{scratch}\" RENAME TO \"moved_{x}\""),
        );
        let plan = work.plan(2);
        assert!(
            plan.contains("postgresql_database.scratch will be updated in-place")
                && plan.contains(&format!("\"moved_{x}\" -> \"scratch_{x}\"")),
            "case rename_drift_detected\n{plan}"
        );
        work.apply();
        assert!(
            q(&format!(
                "SELECT 1 FROM pg_database WHERE datname = '{scratch}'"
            ))
            .is_some()
                && q(&format!(
                    "SELECT 1 FROM pg_database WHERE datname = 'moved_{x}'"
                ))
                .is_none(),
            "case rename_repaired"
        );
        work.plan(0);

        // Dropped outside: a create is planned.
        srv.exec(None, &format!("DROP DATABASE \"{scratch}\""));
        let plan = work.plan(2);
        assert!(
            plan.contains("postgresql_database.scratch will be created")
                && plan.contains("1 to add, 0 to change, 0 to destroy"),
            "case vanished_database_recreated\n{plan}"
        );
        work.apply();
        work.plan(0);

        // Destroy in dependency order: grants, extension and schema before
        // the database, the database before its owner role.
        let out = work.expect(
            &["destroy", "-auto-approve", "-input=false", "-no-color"],
            0,
        );
        assert!(
            out.stdout.contains("9 destroyed"),
            "case destroy_all\n{}",
            out.stdout
        );
        let left = q(&format!("SELECT (SELECT count(*) FROM pg_roles WHERE rolname LIKE '%{x}') + (SELECT count(*) FROM pg_database WHERE datname LIKE '%{x}')"));
        assert_eq!(left.as_deref(), Some("0"), "case destroy_leaves_nothing");
    }));
    srv.cleanup(&x);
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }
}
