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

/// The fixture limited to `protocol` by the SDK's variable (and with a
/// nested attribute type when `nested`), launched offering `offered`.
async fn launch_fixture(
    protocol: &str,
    nested: bool,
    offered: Vec<u32>,
) -> Result<terrane_plugin::PluginClient, LaunchError> {
    let mut env = vec![(
        terrane_plugin::PROTOCOL_ENV.to_string(),
        protocol.to_string(),
    )];
    if nested {
        env.push(("TERRANE_FIXTURE_NESTED".into(), "1".into()));
    }
    launch(
        &terrane_testkit::fixture("terrane-plugin-fixture"),
        LaunchOptions {
            versions: offered,
            env,
            ..LaunchOptions::default()
        },
    )
    .await
}

#[tokio::test]
async fn item1_item2_protocol_negotiation_with_a_real_plugin() {
    struct Case {
        name: &'static str,
        serves: &'static str,
        nested: bool,
        offered: Vec<u32>,
        /// Ok(chosen version) or Err(words the error must hold).
        want: Result<u32, Vec<&'static str>>,
    }
    let cases = [
        Case {
            name: "both_offered_highest_wins",
            serves: "5,6",
            nested: false,
            offered: vec![5, 6],
            want: Ok(6),
        },
        Case {
            name: "protocol5_only_plugin",
            serves: "5",
            nested: false,
            offered: vec![5, 6],
            want: Ok(5),
        },
        Case {
            name: "host_offers_only_5",
            serves: "5,6",
            nested: false,
            offered: vec![5],
            want: Ok(5),
        },
        Case {
            name: "no_common_version",
            serves: "5",
            nested: false,
            offered: vec![6],
            want: Err(vec!["offered plugin protocol versions", "\"6\"", "[5]"]),
        },
        Case {
            name: "nested_attributes_need_6",
            serves: "5,6",
            nested: true,
            offered: vec![5],
            want: Err(vec![
                "cannot serve plugin protocol 5",
                "the provider configuration attribute \"endpoints\" uses a nested attribute type",
            ]),
        },
        Case {
            name: "nested_attributes_fine_under_6",
            serves: "5,6",
            nested: true,
            offered: vec![5, 6],
            want: Ok(6),
        },
    ];
    for c in cases {
        let got = launch_fixture(c.serves, c.nested, c.offered).await;
        match (got, c.want) {
            (Ok(client), Ok(v)) => {
                assert_eq!(client.protocol, v, "case {}", c.name);
                // The schema answers over the chosen protocol.
                let has_provider = if v == 5 {
                    client
                        .provider5()
                        .get_schema(terrane_tfplugin5::tfplugin5::get_provider_schema::Request {})
                        .await
                        .unwrap()
                        .into_inner()
                        .provider
                        .is_some()
                } else {
                    client
                        .provider()
                        .get_provider_schema(
                            terrane_tfplugin6::tfplugin6::get_provider_schema::Request {},
                        )
                        .await
                        .unwrap()
                        .into_inner()
                        .provider
                        .is_some()
                };
                assert!(has_provider, "case {}: schema over protocol {v}", c.name);
                assert!(client.shutdown().await, "case {}", c.name);
            }
            (Err(e), Err(words)) => {
                let text = e.to_string();
                for w in words {
                    assert!(text.contains(w), "case {}: {w:?} in {text}", c.name);
                }
            }
            (Ok(c2), Err(_)) => panic!("case {}: launched with protocol {}", c.name, c2.protocol),
            (Err(e), Ok(_)) => panic!("case {}: {e}", c.name),
        }
    }
}

#[tokio::test]
async fn item1_a_plugin_choosing_a_version_we_do_not_speak() {
    let dir = terrane_testkit::temp_dir();
    let p = dir.path().join("v7");
    std::fs::write(&p, "#!/bin/sh\necho '1|7|unix|/nowhere|grpc|'\nsleep 5\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    let err = launch(
        &p,
        LaunchOptions {
            versions: vec![5, 6],
            ..LaunchOptions::default()
        },
    )
    .await
    .err()
    .expect("refused");
    let text = err.to_string();
    assert!(
        text.contains(
            "Incompatible API version with plugin. Plugin version: 7, Client versions: [5, 6]"
        ),
        "{text}"
    );
}
