//! Unit tests: connection-string splitting, the attempts each sslmode
//! makes, root-certificate errors, channel-binding hashes. The handshakes
//! against a real server are in crates/state/tests and the provider's
//! tests.

use super::*;

#[track_caller]
fn check<T: PartialEq + std::fmt::Debug>(case: &str, got: T, want: T) {
    assert_eq!(got, want, "case {case}");
}

fn opts(mode: SslMode, root: Option<&str>) -> TlsOptions {
    TlsOptions {
        mode,
        root_cert: root.map(str::to_string),
    }
}

#[test]
fn item13_connection_strings_split() {
    let ok = |s: &str| split(s).unwrap_or_else(|e| panic!("{s}: {e}"));
    check(
        "url_without_query",
        ok("postgres://u:p@h:5/db"),
        ("postgres://u:p@h:5/db".into(), TlsOptions::default()),
    );
    check(
        "url_both_taken_others_kept",
        ok("postgresql://u:p@h/db?application_name=x&sslmode=verify-full&connect_timeout=3&sslrootcert=%2Ftmp%2Fca%20dir%2Fca.pem"),
        ("postgresql://u:p@h/db?application_name=x&connect_timeout=3".into(), opts(SslMode::VerifyFull, Some("/tmp/ca dir/ca.pem"))),
    );
    check(
        "url_only_sslmode",
        ok("postgres://h/db?sslmode=disable"),
        ("postgres://h/db".into(), opts(SslMode::Disable, None)),
    );
    check(
        "url_question_mark_in_password_is_not_the_query",
        ok("postgres://u:a?b@h/db?sslmode=require"),
        ("postgres://u:a?b@h/db".into(), opts(SslMode::Require, None)),
    );
    check(
        "key_values_quoted",
        ok("host=h  user = 'o k' password='it\\'s' sslmode=verify-ca sslrootcert='/a b/ca.pem'"),
        (
            "host='h' user='o k' password='it\\'s'".into(),
            opts(SslMode::VerifyCa, Some("/a b/ca.pem")),
        ),
    );
    check(
        "empty_sslrootcert_is_none",
        ok("host=h sslrootcert=''").1,
        TlsOptions::default(),
    );
    check(
        "parsed_rest_is_usable",
        parse("postgres://u:p@h:5433/db?sslmode=verify-full&sslrootcert=/x")
            .map(|(c, t)| (c.get_ports().to_vec(), t.mode)),
        Ok((vec![5433], SslMode::VerifyFull)),
    );
    let mode_for = |s: &str| parse(s).map(|(c, t)| t.for_config(&c).mode);
    check(
        "unix_socket_is_plaintext_as_in_libpq",
        mode_for("host=/run/postgresql sslmode=verify-full"),
        Ok(SslMode::Disable),
    );
    check(
        "tcp_host_keeps_mode",
        mode_for("host=/run/postgresql,db.example sslmode=verify-full"),
        Ok(SslMode::VerifyFull),
    );
    check(
        "hostaddr_keeps_mode",
        mode_for("host=/run/postgresql hostaddr=127.0.0.1 sslmode=require"),
        Ok(SslMode::Require),
    );
    check(
        "no_host_keeps_mode",
        mode_for("dbname=x sslmode=require"),
        Ok(SslMode::Require),
    );
    let bad = |s: &str| split(s).expect_err(s).0;
    assert!(
        bad("postgres://h/db?sslmode=verify").contains("invalid sslmode \"verify\""),
        "case bad_sslmode_named"
    );
    assert!(
        bad("postgres://h/db?sslrootcert=%zz").contains("percent-encoding"),
        "case bad_percent_encoding"
    );
    assert!(
        bad("host=h password='unterminated").contains("unterminated"),
        "case unterminated_quote"
    );
    assert!(
        !bad("host=h password='hunter2").contains("hunter2"),
        "case password_not_in_message"
    );
    assert!(
        bad("host").contains("\"host\" is not followed by"),
        "case key_without_value"
    );
}

fn pem_file(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

fn ca_pem() -> String {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    params.self_signed(&key).unwrap().pem()
}

#[test]
fn item13_attempts_follow_libpq() {
    use tokio_postgres::config::SslMode as Wire;
    let dir = std::env::temp_dir().join(format!("terrane-pgtls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ca = pem_file(&dir, "ca.pem", &ca_pem());
    let modes = |o: TlsOptions| {
        o.attempts()
            .map(|a| a.iter().map(|a| a.ssl_mode).collect::<Vec<_>>())
            .map_err(|e| e.0)
    };
    check(
        "disable_plain_only",
        modes(opts(SslMode::Disable, None)),
        Ok(vec![Wire::Disable]),
    );
    check(
        "disable_ignores_rootcert",
        modes(opts(SslMode::Disable, Some("/nonexistent/ca.pem"))),
        Ok(vec![Wire::Disable]),
    );
    check(
        "allow_plain_then_tls",
        modes(opts(SslMode::Allow, Some(&ca))),
        Ok(vec![Wire::Disable, Wire::Require]),
    );
    check(
        "prefer_tls_then_plain",
        modes(opts(SslMode::Prefer, Some(&ca))),
        Ok(vec![Wire::Prefer, Wire::Disable]),
    );
    check(
        "require_tls_only",
        modes(opts(SslMode::Require, Some(&ca))),
        Ok(vec![Wire::Require]),
    );
    check(
        "verify_ca_tls_only",
        modes(opts(SslMode::VerifyCa, Some(&ca))),
        Ok(vec![Wire::Require]),
    );
    check(
        "verify_full_tls_only",
        modes(opts(SslMode::VerifyFull, Some(&ca))),
        Ok(vec![Wire::Require]),
    );

    let err = |o: TlsOptions| {
        o.roots_with(None)
            .map(|r| r.is_some())
            .expect_err("an error")
            .0
    };
    assert!(
        err(opts(SslMode::VerifyFull, None)).contains("needs the CA certificate"),
        "case verify_full_without_root"
    );
    assert!(
        err(opts(SslMode::VerifyCa, None)).contains("set sslrootcert"),
        "case verify_ca_without_root"
    );
    assert!(
        err(opts(SslMode::Require, Some("system")))
            .contains("may not be used with sslrootcert=system"),
        "case system_roots_need_verify_full"
    );
    let missing = dir.join("missing.pem").display().to_string();
    assert!(
        err(opts(SslMode::Require, Some(&missing)))
            .contains(&format!("sslrootcert {missing}: cannot read the file")),
        "case named_root_missing"
    );
    let empty = pem_file(&dir, "empty.pem", "no certificates here\n");
    assert!(
        err(opts(SslMode::VerifyFull, Some(&empty))).contains("holds no PEM certificate"),
        "case root_file_without_certificate"
    );
    check(
        "require_without_root_checks_nothing",
        opts(SslMode::Require, None)
            .roots_with(None)
            .map(|r| r.is_none()),
        Ok(true),
    );
    let default = PathBuf::from(&ca);
    check(
        "default_root_used_when_present",
        opts(SslMode::VerifyFull, None)
            .roots_with(Some(default))
            .map(|r| r.is_some()),
        Ok(true),
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn item13_channel_binding_hash_follows_signature_algorithm() {
    use aws_lc_rs::digest::{digest, SHA256, SHA384};
    let cert = |alg: &'static rcgen::SignatureAlgorithm| {
        let key = rcgen::KeyPair::generate_for(alg).unwrap();
        rcgen::CertificateParams::new(vec!["localhost".to_string()])
            .unwrap()
            .self_signed(&key)
            .unwrap()
            .der()
            .to_vec()
    };
    let p256 = cert(&rcgen::PKCS_ECDSA_P256_SHA256);
    check(
        "ecdsa_sha256",
        tls::server_end_point(&p256),
        Some(digest(&SHA256, &p256).as_ref().to_vec()),
    );
    let p384 = cert(&rcgen::PKCS_ECDSA_P384_SHA384);
    check(
        "ecdsa_sha384",
        tls::server_end_point(&p384),
        Some(digest(&SHA384, &p384).as_ref().to_vec()),
    );
    check(
        "ed25519_has_none",
        tls::server_end_point(&cert(&rcgen::PKCS_ED25519)),
        None,
    );
    check(
        "garbage_has_none",
        tls::server_end_point(b"\x30\x03\x02\x01"),
        None,
    );
    check(
        "truncated_has_none",
        tls::server_end_point(&p256[..40]),
        None,
    );
}
