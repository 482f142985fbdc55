//! Import of objects made before the tool arrived, under real Terraform
//! and under terrane:
//! a role, a database, a schema, a grant on all tables of a schema and an
//! extension, each imported by its natural identifier and followed by a
//! no-change plan although the configuration spells values differently
//! from the server (timestamp, privilege case, encoding case). Imports that
//! cannot be read fully, or name nothing, fail with an explanation. The
//! tables data source lists the pre-existing tables.

mod support;

use support::{peers, suffix, Tool, Work};

fn config(srv: &support::Server, x: &str) -> String {
    let mut t = srv.provider_block("");
    t.push_str(&format!(
        r#"
resource "postgresql_role" "app" {{
  name             = "imp_{x}"
  login            = true
  connection_limit = 3
  valid_until      = "2030-06-01 14:00:00+02"
}}

resource "postgresql_database" "app" {{
  name     = "impdb_{x}"
  owner    = postgresql_role.app.name
  encoding = "utf-8"
}}

resource "postgresql_schema" "app" {{
  name     = "app"
  database = postgresql_database.app.name
  owner    = postgresql_role.app.name
}}

resource "postgresql_grant" "tables" {{
  role        = postgresql_role.app.name
  database    = postgresql_database.app.name
  schema      = postgresql_schema.app.name
  object_type = "table"
  privileges  = ["select", "Insert"]
}}

resource "postgresql_extension" "hstore" {{
  name     = "hstore"
  database = postgresql_database.app.name
}}
"#
    ));
    t
}

#[test]
fn import_existing_objects_then_no_changes_under_terraform() {
    import_existing_objects_then_no_changes(Tool::Terraform);
}

#[test]
fn import_existing_objects_then_no_changes_under_terrane() {
    import_existing_objects_then_no_changes(Tool::Terrane);
}

#[test]
fn import_existing_objects_then_no_changes_under_terrane_in_process() {
    import_existing_objects_then_no_changes(Tool::TerraneInProcess);
}

fn import_existing_objects_then_no_changes(tool: Tool) {
    let Some((tf, srv)) = peers(tool) else { return };
    let x = suffix();
    let work = Work::new(tf, tool);
    let (role, db) = (format!("imp_{x}"), format!("impdb_{x}"));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // Made outside the tool.
        srv.exec(None, &format!("CREATE ROLE \"{role}\" LOGIN CONNECTION LIMIT 3 VALID UNTIL '2030-06-01 12:00:00+00'"));
        srv.exec(
            None,
            &format!(
                "CREATE DATABASE \"{db}\" OWNER \"{role}\" TEMPLATE template0 ENCODING 'UTF8'"
            ),
        );
        srv.exec(
            Some(&db),
            &format!(
                "CREATE SCHEMA app AUTHORIZATION \"{role}\"; CREATE TABLE app.orders (id int); CREATE TABLE app.items (id int); CREATE VIEW app.recent AS SELECT 1 AS id;
                 GRANT SELECT, INSERT ON ALL TABLES IN SCHEMA app TO \"{role}\"; REVOKE INSERT ON app.items FROM \"{role}\"; CREATE EXTENSION hstore"
            ),
        );
        work.write("main.tf", &config(&srv, &x));
        work.expect(&["init", "-input=false", "-no-color"], 0);
        let import = |addr: &str, id: &str| {
            work.run_env(&["import", "-input=false", "-no-color", addr, id], &[])
        };

        // Refused imports explain themselves.
        let grant_id = format!("{role}:{db}:table:app");
        let out = import("postgresql_grant.tables", &grant_id);
        assert!(
            out.code != 0
                && out.stderr.contains("cannot be read fully")
                && out.stderr.contains("different privileges"),
            "case uneven_grant_import_refused\n{}",
            out.stderr
        );
        let out = import("postgresql_role.app", &format!("nobody_{x}"));
        assert!(
            out.code != 0 && out.stderr.contains("No role named"),
            "case missing_role_import_refused\n{}",
            out.stderr
        );
        let out = import("postgresql_grant.tables", "just-a-name");
        assert!(
            out.code != 0 && out.stderr.contains("role:database:object_type"),
            "case bad_grant_id_explained\n{}",
            out.stderr
        );
        let listed = work.run_env(&["state", "list"], &[]);
        assert!(
            listed.stdout.trim().is_empty(),
            "case failed_imports_leave_no_state\n{}",
            listed.stdout
        );

        srv.exec(
            Some(&db),
            &format!("GRANT INSERT ON app.items TO \"{role}\""),
        );
        for (addr, id) in [
            ("postgresql_role.app", role.clone()),
            ("postgresql_database.app", db.clone()),
            ("postgresql_schema.app", format!("{db}.app")),
            ("postgresql_grant.tables", grant_id.clone()),
            ("postgresql_extension.hstore", format!("{db}.hstore")),
        ] {
            let out = import(addr, &id);
            assert_eq!(
                out.code, 0,
                "case import {addr} {id}\n{}\n{}",
                out.stdout, out.stderr
            );
        }
        let plan = work.plan(0);
        assert!(
            plan.contains("No changes"),
            "case no_changes_after_import\n{plan}"
        );

        let state = work.show();
        let (g, _) = work.resource(&state, "postgresql_grant.tables");
        assert_eq!(g["id"], grant_id.as_str(), "case grant_id_format");
        let (r, _) = work.resource(&state, "postgresql_role.app");
        assert_eq!(
            r["valid_until"], "2030-06-01T12:00:00Z",
            "case imported_server_spelling"
        );

        // The tables data source sees the pre-existing tables and views.
        work.write(
            "tables.tf",
            "data \"postgresql_tables\" \"app\" {\n  database = postgresql_database.app.name\n  schemas = [\"app\"]\n  table_types = [\"BASE TABLE\"]\n}\n\noutput \"tables\" {\n  value = [for t in data.postgresql_tables.app.tables : \"${t.schema_name}.${t.object_name}\"]\n}\n",
        );
        work.apply();
        assert_eq!(
            work.expect(&["output", "-json", "tables"], 0).stdout.trim(),
            r#"["app.items","app.orders"]"#,
            "case tables_data_source"
        );

        // Destroy what was imported (the tables go with the database).
        srv.exec(
            Some(&db),
            "DROP TABLE app.orders, app.items; DROP VIEW app.recent",
        );
        let out = work.expect(
            &["destroy", "-auto-approve", "-input=false", "-no-color"],
            0,
        );
        assert!(
            out.stdout.contains("5 destroyed"),
            "case destroy_imported\n{}",
            out.stdout
        );
        assert!(
            srv.one(
                None,
                &format!("SELECT 1 FROM pg_database WHERE datname = '{db}'")
            )
            .is_none()
                && srv
                    .one(
                        None,
                        &format!("SELECT 1 FROM pg_roles WHERE rolname = '{role}'")
                    )
                    .is_none(),
            "case imported_objects_destroyed"
        );
    }));
    srv.cleanup(&x);
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }
}
