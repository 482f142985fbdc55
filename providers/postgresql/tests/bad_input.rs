//! Bad input under real Terraform and under terrane: wrong credentials,
//! an unreachable server, a privilege name that is not one, a privilege
//! PostgreSQL rejects for the object type, a locale the server does not
//! have. Each
//! gives a clear diagnostic that the tool shows at the offending
//! attribute, and nothing is left half-created.

mod support;

use support::{peers, suffix, Server, Tool, Work};

fn provider(srv: &Server, username: &str, port: u16) -> String {
    format!(
        "terraform {{\n  required_providers {{\n    postgresql = {{ source = \"terrane/postgresql\" }}\n  }}\n}}\n\nprovider \"postgresql\" {{\n  host            = \"{}\"\n  port            = {port}\n  username        = \"{username}\"\n  password        = \"{}\"\n  database        = \"{}\"\n  sslmode         = \"disable\"\n  connect_timeout = 5\n}}\n",
        srv.host, srv.password, srv.database
    )
}

/// The diagnostic's summary is there and the tool places it on the line
/// of `file` (whose text is `source`) that contains `needle`: the
/// attribute the diagnostic names.
#[track_caller]
fn diagnosed(
    out: &terrane_testkit::Output,
    summary: &str,
    file: &str,
    source: &str,
    needle: &str,
    case: &str,
) {
    assert_ne!(out.code, 0, "case {case}: should fail\n{}", out.stdout);
    let text = format!("{}\n{}", out.stdout, out.stderr);
    assert!(
        text.contains(summary),
        "case {case}: summary {summary:?} missing\n{text}"
    );
    let n = source
        .lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle:?} not in {file}"))
        + 1;
    let at = text
        .lines()
        .skip_while(|l| !l.contains(summary))
        .take(6)
        .any(|l| l.contains(&format!("on {file} line {n},")));
    assert!(
        at,
        "case {case}: the diagnostic is not placed on {file} line {n} ({needle:?})\n{text}"
    );
}

#[test]
fn connection_problems_are_reported_on_the_provider_attribute_under_terraform() {
    connection_problems_are_reported_on_the_provider_attribute(Tool::Terraform);
}

#[test]
fn connection_problems_are_reported_on_the_provider_attribute_under_terrane() {
    connection_problems_are_reported_on_the_provider_attribute(Tool::Terrane);
}

#[test]
fn connection_problems_are_reported_on_the_provider_attribute_under_terrane_in_process() {
    connection_problems_are_reported_on_the_provider_attribute(Tool::TerraneInProcess);
}

fn connection_problems_are_reported_on_the_provider_attribute(tool: Tool) {
    let Some((tf, srv)) = peers(tool) else { return };
    let x = suffix();
    let work = Work::new(tf, tool);
    let role = format!("never_{x}");
    let body = format!("\nresource \"postgresql_role\" \"r\" {{\n  name = \"{role}\"\n}}\n");
    let src = format!("{}{body}", provider(&srv, &format!("nobody_{x}"), srv.port));
    work.write("main.tf", &src);
    work.expect(&["init", "-input=false", "-no-color"], 0);
    let out = work.run_env(
        &["apply", "-auto-approve", "-input=false", "-no-color"],
        &[],
    );
    diagnosed(
        &out,
        "PostgreSQL rejected the user",
        "main.tf",
        &src,
        "username",
        "wrong_credentials",
    );
    assert!(
        out.stderr.contains(&format!("nobody_{x}")),
        "case wrong_credentials_names_user"
    );

    // A loopback port nothing listens on.
    let dead = terrane_testkit::refused_port();
    let src = format!("{}{body}", provider(&srv, &srv.user, dead.port));
    work.write("main.tf", &src);
    let out = work.run_env(
        &["apply", "-auto-approve", "-input=false", "-no-color"],
        &[],
    );
    diagnosed(
        &out,
        "nothing listens there",
        "main.tf",
        &src,
        "port ",
        "unreachable_server",
    );
    assert!(
        srv.one(
            None,
            &format!("SELECT 1 FROM pg_roles WHERE rolname = '{role}'")
        )
        .is_none(),
        "case nothing_created_without_connection"
    );
}

#[test]
fn rejected_values_are_reported_on_the_resource_attribute_under_terraform() {
    rejected_values_are_reported_on_the_resource_attribute(Tool::Terraform);
}

#[test]
fn rejected_values_are_reported_on_the_resource_attribute_under_terrane() {
    rejected_values_are_reported_on_the_resource_attribute(Tool::Terrane);
}

#[test]
fn rejected_values_are_reported_on_the_resource_attribute_under_terrane_in_process() {
    rejected_values_are_reported_on_the_resource_attribute(Tool::TerraneInProcess);
}

fn rejected_values_are_reported_on_the_resource_attribute(tool: Tool) {
    let Some((tf, srv)) = peers(tool) else { return };
    let x = suffix();
    let work = Work::new(tf, tool);
    let (role, table) = (format!("grantee_{x}"), format!("t_{x}"));
    srv.exec(None, &format!("CREATE TABLE public.\"{table}\" (id int)"));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let grant = |privileges: &str| {
            format!(
                "{}\nresource \"postgresql_role\" \"r\" {{\n  name = \"{role}\"\n}}\n\nresource \"postgresql_grant\" \"g\" {{\n  role        = postgresql_role.r.name\n  database    = \"{}\"\n  schema      = \"public\"\n  object_type = \"table\"\n  objects     = [\"{table}\"]\n  privileges  = {privileges}\n}}\n",
                srv.provider_block(""),
                srv.database
            )
        };
        // Not a privilege at all: refused before anything runs.
        let src = grant(r#"["SELECT", "FLY"]"#);
        work.write("main.tf", &src);
        work.expect(&["init", "-input=false", "-no-color"], 0);
        let out = work.run_env(&["validate", "-no-color"], &[]);
        diagnosed(
            &out,
            "Unknown privilege",
            "main.tf",
            &src,
            "privileges",
            "unknown_privilege_name",
        );

        // A real privilege PostgreSQL rejects for tables: the whole grant
        // transaction rolls back, so not even SELECT is left granted.
        let src = grant(r#"["SELECT", "EXECUTE"]"#);
        work.write("main.tf", &src);
        let out = work.run_env(
            &["apply", "-auto-approve", "-input=false", "-no-color"],
            &[],
        );
        diagnosed(
            &out,
            "Cannot grant privileges",
            "main.tf",
            &src,
            "privileges",
            "server_rejected_privilege",
        );
        assert!(
            out.stderr
                .contains("invalid privilege type EXECUTE for relation"),
            "case server_message_passed_on\n{}",
            out.stderr
        );
        let held = srv.one(None, &format!("SELECT count(*)::text FROM pg_class c, aclexplode(c.relacl) a JOIN pg_roles r ON r.oid = a.grantee WHERE c.relname = '{table}' AND r.rolname = '{role}'"));
        assert_eq!(held.as_deref(), Some("0"), "case nothing_half_granted");
        let listed = work.expect(&["state", "list"], 0);
        assert!(
            !listed.stdout.contains("postgresql_grant.g"),
            "case failed_grant_not_in_state\n{}",
            listed.stdout
        );

        // Fixed, it applies.
        work.write("main.tf", &grant(r#"["select"]"#));
        work.apply();
        work.plan(0);

        // A locale the server lacks: CREATE DATABASE fails as one
        // statement, and no database exists afterwards.
        let db = format!("badlocale_{x}");
        let src = format!("resource \"postgresql_database\" \"d\" {{\n  name       = \"{db}\"\n  lc_collate = \"xx_XX.nothing\"\n}}\n");
        work.write("db.tf", &src);
        let out = work.run_env(
            &["apply", "-auto-approve", "-input=false", "-no-color"],
            &[],
        );
        diagnosed(
            &out,
            "Cannot create database",
            "db.tf",
            &src,
            "lc_collate",
            "unknown_locale",
        );
        assert!(
            srv.one(
                None,
                &format!("SELECT 1 FROM pg_database WHERE datname = '{db}'")
            )
            .is_none(),
            "case no_half_created_database"
        );
        std::fs::remove_file(work.path().join("db.tf")).unwrap();
        work.expect(
            &["destroy", "-auto-approve", "-input=false", "-no-color"],
            0,
        );
    }));
    srv.exec(None, &format!("DROP TABLE IF EXISTS public.\"{table}\""));
    srv.cleanup(&x);
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }
}
