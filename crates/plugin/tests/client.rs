//! The client side against real processes: launching the fixture plugin
//! completes the handshake and mutual TLS and serves gRPC calls; Shutdown
//! ends the process; a binary that exits early or prints something else
//! gives an error naming the binary and what went wrong.

use terrane_plugin::{launch, LaunchError, LaunchOptions};

#[tokio::test]
async fn launch_call_and_shut_down() {
    let client = launch(
        &terrane_testkit::fixture("terrane-plugin-fixture"),
        LaunchOptions::default(),
    )
    .await
    .unwrap();
    assert_eq!(client.protocol, 6, "case protocol_negotiated");
    let schema = client
        .provider()
        .get_provider_schema(terrane_tfplugin6::tfplugin6::get_provider_schema::Request {})
        .await
        .unwrap()
        .into_inner();
    assert!(schema.provider.is_some(), "case rpc_over_mutual_tls");
    assert!(client.shutdown().await, "case graceful_shutdown_exits");
}

#[tokio::test]
async fn early_exit_and_bad_handshake_are_clear_errors() {
    let dir = terrane_testkit::temp_dir();
    let script = |name: &str, body: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    };
    let dies = script("dies", "echo 'cannot read credentials' >&2; exit 3");
    match launch(&dies, LaunchOptions::default()).await {
        Err(e @ LaunchError::Exited { .. }) => {
            let text = e.to_string();
            assert!(
                text.contains("dies")
                    && text.contains("cannot read credentials")
                    && text.contains('3'),
                "case early_exit: {text}"
            );
        }
        Err(e) => panic!("case early_exit: {e}"),
        Ok(_) => panic!("case early_exit: launched"),
    }
    let chatty = script("chatty", "echo 'hello, I am not a plugin'; sleep 5");
    let err = launch(&chatty, LaunchOptions::default())
        .await
        .err()
        .expect("case bad_handshake refused");
    assert!(
        err.to_string().contains("unrecognized handshake line"),
        "case bad_handshake: {err}"
    );
    let v5 = script("v5", "echo '1|5|unix|/nowhere|grpc|'; sleep 5");
    let err = launch(&v5, LaunchOptions::default())
        .await
        .err()
        .expect("case wrong_version refused");
    assert!(
        err.to_string().contains("not offered"),
        "case wrong_version: {err}"
    );
}
