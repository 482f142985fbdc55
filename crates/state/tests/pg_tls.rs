//! Issue 12 item 13: the PostgreSQL state store speaks TLS with libpq's
//! sslmode and sslrootcert, against the real test server (scripts/pg
//! starts it with ssl=on and a certificate for `localhost` only, issued by
//! a throwaway CA). "TLS on the wire" is read from `pg_stat_ssl` for the
//! session and proved by pg_hba rules: a member of `terrane_tls_only` is
//! refused without TLS, one of `terrane_plain_only` over TLS.

use std::path::Path;
use terrane_state::{pg_connect, PgStore, StateStore};

struct Server {
    port: String,
    ca: String,
    wrong_ca: String,
}

impl Server {
    /// A URL for `user` at `host` with extra parameters.
    fn url(&self, user: &str, host: &str, params: &str) -> String {
        let password = if user == "terrane" { "terrane" } else { "pw" };
        let q = if params.is_empty() {
            String::new()
        } else {
            format!("?{params}")
        };
        format!(
            "postgres://{user}:{password}@{host}:{}/terrane{q}",
            self.port
        )
    }
}

/// Whether the session of `url` is encrypted (from pg_stat_ssl), or the
/// connection error's text.
fn session_ssl(url: &str) -> Result<bool, String> {
    let mut c = pg_connect(url).map_err(|e| e.to_string())?;
    c.query_one(
        "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
        &[],
    )
    .map(|r| r.get(0))
    .map_err(|e| e.to_string())
}

#[derive(Debug)]
enum Want {
    Tls,
    Plain,
    Fails(&'static str),
}

#[track_caller]
fn check(case: &str, got: Result<bool, String>, want: Want) {
    match (&got, &want) {
        (Ok(true), Want::Tls) | (Ok(false), Want::Plain) => {}
        (Err(e), Want::Fails(text)) if e.contains(text) => {
            assert!(
                !e.contains("pw@") && !e.contains(":terrane@"),
                "case {case}: the error shows the URL's password: {e}"
            );
        }
        _ => panic!("case {case}: got {got:?}, want {want:?}"),
    }
}

fn wrong_ca_pem(dir: &Path) -> String {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "terrane test CA");
    let path = dir.join("wrong-ca.pem");
    std::fs::write(&path, params.self_signed(&key).unwrap().pem()).unwrap();
    path.display().to_string()
}

#[test]
fn item13_state_store_tls_modes() {
    let Some(url) = terrane_testkit::pg_url() else {
        return;
    };
    let Some(ca) = terrane_testkit::pg_ca() else {
        return;
    };
    let dir = terrane_testkit::temp_dir();
    let port = url
        .rsplit_once(':')
        .and_then(|(_, p)| p.split('/').next())
        .expect("port in TERRANE_TEST_PG_URL")
        .to_string();
    let srv = Server {
        port,
        ca: ca.display().to_string(),
        wrong_ca: wrong_ca_pem(dir.path()),
    };
    let sfx = format!("{:08x}", rand::random::<u32>());
    let (tls_user, plain_user, pw_user) = (
        format!("tlsonly_{sfx}"),
        format!("plainonly_{sfx}"),
        format!("scram_{sfx}"),
    );
    let mut admin = pg_connect(&srv.url("terrane", "127.0.0.1", "sslmode=disable"))
        .expect("connect as the superuser");
    admin
        .batch_execute(&format!(
            "CREATE ROLE {tls_user} LOGIN SUPERUSER IN ROLE terrane_tls_only;
             CREATE ROLE {plain_user} LOGIN SUPERUSER IN ROLE terrane_plain_only;
             CREATE ROLE {pw_user} LOGIN IN ROLE terrane_password PASSWORD 'pw';"
        ))
        .expect("test roles");

    let (ca, wrong) = (&srv.ca, &srv.wrong_ca);
    let t = |host: &str, params: String| session_ssl(&srv.url("terrane", host, &params));
    let cases: Vec<(&str, Result<bool, String>, Want)> = vec![
        ("require_encrypts", t("127.0.0.1", "sslmode=require".into()), Want::Tls),
        ("default_prefer_encrypts", t("127.0.0.1", String::new()), Want::Tls),
        ("verify_full_right_ca_and_host", t("localhost", format!("sslmode=verify-full&sslrootcert={ca}")), Want::Tls),
        ("verify_full_wrong_ca", t("localhost", format!("sslmode=verify-full&sslrootcert={wrong}")), Want::Fails("the server's certificate is not trusted: no CA in sslrootcert")),
        ("verify_full_wrong_host", t("127.0.0.1", format!("sslmode=verify-full&sslrootcert={ca}")), Want::Fails("does not name the host \"127.0.0.1\"")),
        ("verify_ca_wrong_host_accepted", t("127.0.0.1", format!("sslmode=verify-ca&sslrootcert={ca}")), Want::Tls),
        ("verify_ca_wrong_ca", t("127.0.0.1", format!("sslmode=verify-ca&sslrootcert={wrong}")), Want::Fails("not trusted")),
        ("require_with_root_checks_issuer", t("127.0.0.1", format!("sslmode=require&sslrootcert={wrong}")), Want::Fails("not trusted")),
        ("prefer_falls_back_to_plaintext_on_failed_handshake", t("127.0.0.1", format!("sslmode=prefer&sslrootcert={wrong}")), Want::Plain),
        ("disable_is_plaintext", t("127.0.0.1", "sslmode=disable".into()), Want::Plain),
        ("allow_is_plaintext_first", t("127.0.0.1", "sslmode=allow".into()), Want::Plain),
        ("key_value_form", session_ssl(&format!("host=localhost port={} user=terrane password=terrane dbname=terrane sslmode=verify-full sslrootcert='{ca}'", srv.port)), Want::Tls),
        ("missing_root_file_named", t("localhost", "sslmode=verify-full&sslrootcert=/nonexistent/ca.pem".into()), Want::Fails("sslrootcert /nonexistent/ca.pem: cannot read the file")),
        ("unknown_sslmode_named", t("localhost", "sslmode=verify".into()), Want::Fails("invalid sslmode \"verify\"")),
        // The pg_hba rules prove what went over the wire.
        ("tls_only_role_refused_without_tls", session_ssl(&srv.url(&tls_user, "127.0.0.1", "sslmode=disable")), Want::Fails("no encryption")),
        ("tls_only_role_over_require", session_ssl(&srv.url(&tls_user, "127.0.0.1", "sslmode=require")), Want::Tls),
        ("allow_retries_with_tls_when_refused", session_ssl(&srv.url(&tls_user, "127.0.0.1", "sslmode=allow")), Want::Tls),
        ("plain_only_role_refused_over_tls", session_ssl(&srv.url(&plain_user, "127.0.0.1", "sslmode=require")), Want::Fails("SSL encryption")),
        ("plain_only_role_over_disable", session_ssl(&srv.url(&plain_user, "127.0.0.1", "sslmode=disable")), Want::Plain),
        ("prefer_falls_back_when_tls_session_refused", session_ssl(&srv.url(&plain_user, "127.0.0.1", "sslmode=prefer")), Want::Plain),
        // SCRAM bound to the server's certificate (tls-server-end-point).
        ("channel_binding_required_over_tls", session_ssl(&srv.url(&pw_user, "localhost", &format!("sslmode=verify-full&sslrootcert={ca}&channel_binding=require"))), Want::Tls),
        ("channel_binding_required_without_tls", session_ssl(&srv.url(&pw_user, "127.0.0.1", "sslmode=disable&channel_binding=require")), Want::Fails("channel binding")),
        ("scram_password_over_require", session_ssl(&srv.url(&pw_user, "127.0.0.1", "sslmode=require")), Want::Tls),
    ];
    for (case, got, want) in cases {
        check(case, got, want);
    }

    // The store itself: its sessions are TLS (the tls-only role gets in,
    // the plaintext-only one does not), and verification failures are
    // reported by name.
    let schema = format!("tls_{sfx}");
    let open = |url: String| {
        PgStore::open(&url, &schema, None)
            .and_then(|s| s.workspaces())
            .map(|_| true)
            .map_err(|e| e.to_string())
    };
    check(
        "store_tls_only_role_over_verify_full",
        open(srv.url(
            &tls_user,
            "localhost",
            &format!("sslmode=verify-full&sslrootcert={ca}"),
        )),
        Want::Tls,
    );
    check(
        "store_tls_only_role_over_disable",
        open(srv.url(&tls_user, "localhost", "sslmode=disable")),
        Want::Fails("no encryption"),
    );
    check(
        "store_plain_only_role_over_require",
        open(srv.url(&plain_user, "localhost", "sslmode=require")),
        Want::Fails("SSL encryption"),
    );
    check("store_verify_full_wrong_host", open(srv.url(&tls_user, "127.0.0.1", &format!("sslmode=verify-full&sslrootcert={ca}"))), Want::Fails("PostgreSQL state store: cannot connect: error performing TLS handshake: the server's certificate does not name the host \"127.0.0.1\""));
    check(
        "store_verify_full_wrong_ca",
        open(srv.url(
            &tls_user,
            "localhost",
            &format!("sslmode=verify-full&sslrootcert={wrong}"),
        )),
        Want::Fails("not trusted"),
    );

    admin
        .batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE; DROP ROLE {tls_user}; DROP ROLE {plain_user}; DROP ROLE {pw_user};"))
        .expect("drop test roles");
}
