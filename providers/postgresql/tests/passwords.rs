//! Issue 12 item 12: role passwords never reach the server log. Under real
//! Terraform and under terrane (the real plugin), roles are created and
//! their passwords rotated (`password` and the write-only `password_wo`)
//! in a database that logs every statement, and a CREATE ROLE is made to
//! fail (the role exists already), which logs the failed statement too.
//! The server log then holds the statements, with SCRAM verifiers, and
//! none of the passwords; and each password works for logging in (the
//! test server asks members of `terrane_password` for a SCRAM password).

mod support;

use std::io::{Read, Seek, SeekFrom};
use support::{parse_url, peers, suffix, Tool, Work};

#[test]
fn item12_passwords_never_reach_the_server_log_under_terraform() {
    passwords_never_reach_the_server_log(Tool::Terraform);
}

#[test]
fn item12_passwords_never_reach_the_server_log_under_terrane() {
    passwords_never_reach_the_server_log(Tool::Terrane);
}

fn config(
    srv: &support::Server,
    x: &str,
    plain: &str,
    wo: &str,
    wo_version: u32,
    duplicate: Option<&str>,
) -> String {
    let mut t = srv.provider_block("");
    t.push_str(&format!(
        r#"
resource "postgresql_role" "plain" {{
  name     = "plain_{x}"
  login    = true
  password = "{plain}"
  roles    = ["terrane_password"]
}}

resource "postgresql_role" "wo" {{
  name                = "wo_{x}"
  login               = true
  password_wo         = "{wo}"
  password_wo_version = {wo_version}
  roles               = ["terrane_password"]
}}
"#
    ));
    if let Some(p) = duplicate {
        t.push_str(&format!("\nresource \"postgresql_role\" \"dup\" {{\n  name     = \"dup_{x}\"\n  password = \"{p}\"\n}}\n"));
    }
    t
}

/// Whether `user` logs in with `password` (over loopback, where the test
/// server asks members of terrane_password for a SCRAM password).
fn logs_in(srv: &support::Server, user: &str, password: &str) -> bool {
    let conn = format!(
        "host={} port={} user={user} password='{password}' dbname={} connect_timeout=10",
        srv.host, srv.port, srv.database
    );
    postgres::Client::connect(&conn, postgres::NoTls).is_ok()
}

/// The log from `offset` on.
fn log_since(path: &std::path::Path, offset: u64) -> String {
    let mut f = std::fs::File::open(path).expect("server log");
    f.seek(SeekFrom::Start(offset))
        .expect("seek in the server log");
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes).expect("read the server log");
    String::from_utf8_lossy(&bytes).into_owned()
}

fn passwords_never_reach_the_server_log(tool: Tool) {
    let Some((tf, admin)) = peers(tool) else {
        return;
    };
    let Some(log) = terrane_testkit::pg_log() else {
        return;
    };
    if admin
        .one(
            None,
            "SELECT 1 FROM pg_roles WHERE rolname = 'terrane_password'",
        )
        .is_none()
    {
        terrane_testkit::skip("the PostgreSQL test server lacks the terrane_password role: it was started by an older scripts/pg; restart it");
        return;
    }
    let x = suffix();
    // A database of the test's own that logs every statement, whatever the
    // server's log_statement: the provider works in it.
    let db = format!("pwlog_{x}");
    admin.exec(None, &format!("CREATE DATABASE {db}"));
    admin.exec(
        None,
        &format!("ALTER DATABASE {db} SET log_statement = 'all'"),
    );
    admin.exec(None, &format!("CREATE ROLE dup_{x}"));
    let srv = support::Server {
        database: db.clone(),
        ..parse_url(&admin.url)
    };
    let start = std::fs::metadata(&log).expect("server log").len();

    let passwords = [
        format!("Plain-One-{x}"),
        format!("WriteOnly-One-{x}"),
        format!("Plain-Two-{x}"),
        format!("WriteOnly-Two-{x}"),
        format!("Duplicate-{x}"),
    ];
    let [p1, w1, p2, w2, dup] = &passwords;
    let work = Work::new(tf, tool);
    work.write("main.tf", &config(&srv, &x, p1, w1, 1, None));
    work.expect(&["init", "-input=false", "-no-color"], 0);
    work.apply();
    let (plain, wo) = (format!("plain_{x}"), format!("wo_{x}"));
    let logins = |what: &str, want: [(&str, &str, bool); 2]| {
        for (user, pw, ok) in want {
            assert_eq!(
                logs_in(&admin, user, pw),
                ok,
                "case {what}: {user} logging in with {pw:?}"
            );
        }
    };
    logins(
        "created_passwords_work",
        [(&plain, p1, true), (&wo, w1, true)],
    );
    logins(
        "wrong_password_refused",
        [(&plain, "wrong", false), (&wo, p1, false)],
    );

    // Rotation: password changes, password_wo by its version.
    work.write("main.tf", &config(&srv, &x, p2, w2, 2, None));
    work.apply();
    logins(
        "rotated_passwords_work",
        [(&plain, p2, true), (&wo, w2, true)],
    );
    logins(
        "old_passwords_refused",
        [(&plain, p1, false), (&wo, w1, false)],
    );

    // A CREATE ROLE that fails: the role exists already.
    work.write("main.tf", &config(&srv, &x, p2, w2, 2, Some(dup)));
    let out = work.run_env(
        &["apply", "-auto-approve", "-input=false", "-no-color"],
        &[],
    );
    assert_ne!(
        out.code, 0,
        "case duplicate_role_fails\n{}\n{}",
        out.stdout, out.stderr
    );
    assert!(
        format!("{}{}", out.stdout, out.stderr).contains("already exists"),
        "case duplicate_role_reported\n{}\n{}",
        out.stdout,
        out.stderr
    );

    let text = log_since(&log, start);
    let logged = |needle: &str| {
        text.lines()
            .any(|l| l.contains(needle) && l.contains("PASSWORD 'SCRAM-SHA-256$4096:"))
    };
    assert!(logged(&format!("CREATE ROLE \"{plain}\"")), "case create_logged_with_verifier: the log shows no CREATE ROLE for {plain}, so it proves nothing");
    assert!(
        logged(&format!("ALTER ROLE \"{plain}\"")),
        "case rotation_logged_with_verifier"
    );
    assert!(
        logged(&format!("ALTER ROLE \"{wo}\"")),
        "case write_only_rotation_logged_with_verifier"
    );
    assert!(
        text.contains(&format!("role \"dup_{x}\" already exists")),
        "case failed_create_logged"
    );
    assert!(
        logged(&format!("CREATE ROLE \"dup_{x}\"")),
        "case failed_create_statement_logged_with_verifier"
    );
    for p in &passwords {
        assert!(
            !text.contains(p.as_str()),
            "case password_not_in_server_log: {p:?} is in {}",
            log.display()
        );
    }
    let shown = format!("{}{}", out.stdout, out.stderr);
    assert!(
        !shown.contains(dup.as_str()),
        "case password_not_in_tool_output"
    );

    work.write("main.tf", &config(&srv, &x, p2, w2, 2, None));
    work.expect(
        &["destroy", "-auto-approve", "-input=false", "-no-color"],
        0,
    );
    admin.cleanup(&x);
}
