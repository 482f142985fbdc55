//! Issue 12 item 13: the provider speaks TLS with libpq's sslmode and
//! sslrootcert, under real Terraform and under terrane (the real plugin),
//! against the test server (ssl=on, a certificate for `localhost` only
//! from a throwaway CA). What went over the wire is proved by the server's
//! pg_hba rules: a member of `terrane_tls_only` is refused without TLS, a
//! member of `terrane_plain_only` over TLS. Failures are diagnosed on the
//! provider attribute to fix.

mod support;

use support::{peers, suffix, Server, Tool, Work};

#[test]
fn item13_provider_tls_modes_under_terraform() {
    provider_tls_modes(Tool::Terraform);
}

#[test]
fn item13_provider_tls_modes_under_terrane() {
    provider_tls_modes(Tool::Terrane);
}

struct Case {
    name: &'static str,
    host: &'static str,
    user: String,
    sslmode: &'static str,
    root: Option<String>,
    /// `None`: plan succeeds; else the summary, the attribute whose line
    /// the diagnostic points at, and a part of its detail.
    fails: Option<(&'static str, &'static str, &'static str)>,
}

fn main_tf(srv: &Server, c: &Case) -> String {
    let root = c
        .root
        .as_ref()
        .map(|r| format!("  sslrootcert     = \"{r}\"\n"))
        .unwrap_or_default();
    format!(
        "terraform {{\n  required_providers {{\n    postgresql = {{ source = \"terrane/postgresql\" }}\n  }}\n}}\n\nprovider \"postgresql\" {{\n  host            = \"{}\"\n  port            = {}\n  username        = \"{}\"\n  database        = \"{}\"\n  sslmode         = \"{}\"\n{root}  connect_timeout = 5\n}}\n\ndata \"postgresql_schemas\" \"all\" {{}}\n\noutput \"count\" {{\n  value = length(data.postgresql_schemas.all.schemas)\n}}\n",
        c.host, srv.port, c.user, srv.database, c.sslmode
    )
}

#[track_caller]
fn check(work: &Work, srv: &Server, c: &Case) {
    let src = main_tf(srv, c);
    work.write("main.tf", &src);
    let out = work.run_env(
        &["plan", "-input=false", "-no-color"],
        &[("PGSSLMODE", ""), ("PGSSLROOTCERT", "")],
    );
    let text = format!("{}\n{}", out.stdout, out.stderr);
    let Some((summary, attr, detail)) = c.fails else {
        assert_eq!(out.code, 0, "case {}: plan should succeed\n{text}", c.name);
        return;
    };
    assert_ne!(out.code, 0, "case {}: plan should fail\n{text}", c.name);
    assert!(
        text.contains(summary),
        "case {}: summary {summary:?} missing\n{text}",
        c.name
    );
    assert!(
        text.contains(detail),
        "case {}: detail {detail:?} missing\n{text}",
        c.name
    );
    let line = src
        .lines()
        .position(|l| l.trim_start().starts_with(&format!("{attr} ")))
        .expect("attribute in main.tf")
        + 1;
    let placed = text
        .lines()
        .skip_while(|l| !l.contains(summary))
        .take(6)
        .any(|l| l.contains(&format!("on main.tf line {line},")));
    assert!(
        placed,
        "case {}: the diagnostic is not on main.tf line {line} ({attr})\n{text}",
        c.name
    );
}

fn wrong_ca(dir: &std::path::Path) -> String {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let path = dir.join("wrong-ca.pem");
    std::fs::write(&path, params.self_signed(&key).unwrap().pem()).unwrap();
    path.display().to_string()
}

fn provider_tls_modes(tool: Tool) {
    let Some((tf, srv)) = peers(tool) else { return };
    let Some(ca) = terrane_testkit::pg_ca() else {
        return;
    };
    let x = suffix();
    let (tls_user, plain_user) = (format!("tlsonly_{x}"), format!("plainonly_{x}"));
    srv.exec(None, &format!("CREATE ROLE {tls_user} LOGIN IN ROLE terrane_tls_only; CREATE ROLE {plain_user} LOGIN IN ROLE terrane_plain_only"));
    let work = Work::new(tf, tool);
    let ca = Some(ca.display().to_string());
    let wrong = Some(wrong_ca(work.path()));
    let case = |name, host, user: &str, sslmode, root: &Option<String>, fails| Case {
        name,
        host,
        user: user.to_string(),
        sslmode,
        root: root.clone(),
        fails,
    };
    let mut cases = vec![
        case(
            "require_is_tls",
            "127.0.0.1",
            &tls_user,
            "require",
            &None,
            None,
        ),
        case(
            "prefer_is_tls",
            "127.0.0.1",
            &tls_user,
            "prefer",
            &None,
            None,
        ),
        case(
            "verify_full_right_ca_and_host",
            "localhost",
            &tls_user,
            "verify-full",
            &ca,
            None,
        ),
        case(
            "verify_full_wrong_ca",
            "localhost",
            &tls_user,
            "verify-full",
            &wrong,
            Some((
                "the server's certificate is not trusted",
                "sslrootcert",
                "no CA in sslrootcert",
            )),
        ),
        case(
            "verify_full_wrong_host",
            "127.0.0.1",
            &tls_user,
            "verify-full",
            &ca,
            Some((
                "the server's certificate is for another host",
                "host",
                "does not name the host \"127.0.0.1\"",
            )),
        ),
        case(
            "verify_ca_ignores_host",
            "127.0.0.1",
            &tls_user,
            "verify-ca",
            &ca,
            None,
        ),
        case(
            "verify_ca_wrong_ca",
            "127.0.0.1",
            &tls_user,
            "verify-ca",
            &wrong,
            Some((
                "the server's certificate is not trusted",
                "sslrootcert",
                "no CA in sslrootcert",
            )),
        ),
        case(
            "allow_retries_with_tls",
            "127.0.0.1",
            &tls_user,
            "allow",
            &None,
            None,
        ),
        case(
            "disable_is_plaintext",
            "127.0.0.1",
            &plain_user,
            "disable",
            &None,
            None,
        ),
        case(
            "tls_only_role_refused_by_disable",
            "127.0.0.1",
            &tls_user,
            "disable",
            &None,
            Some(("PostgreSQL rejected the user", "username", "no encryption")),
        ),
        case(
            "plain_only_role_refused_by_require",
            "127.0.0.1",
            &plain_user,
            "require",
            &None,
            Some(("PostgreSQL rejected the user", "username", "SSL encryption")),
        ),
        case(
            "unreadable_root_named",
            "localhost",
            &tls_user,
            "verify-full",
            &Some("/nonexistent/ca.pem".to_string()),
            Some((
                "Invalid TLS settings",
                "sslrootcert",
                "cannot read the file",
            )),
        ),
    ];
    let home_root =
        std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".postgresql/root.crt"));
    if !home_root.is_some_and(|p| p.exists()) {
        cases.push(case(
            "verify_full_without_root",
            "localhost",
            &tls_user,
            "verify-full",
            &None,
            Some((
                "Invalid TLS settings",
                "sslmode",
                "needs the CA certificate",
            )),
        ));
    }
    work.write("main.tf", &main_tf(&srv, &cases[0]));
    work.expect(&["init", "-input=false", "-no-color"], 0);
    for c in &cases {
        check(&work, &srv, c);
    }
    srv.cleanup(&x);
}
