//! The azurerm backend against a real Azurite (npm) blob server on
//! loopback.

mod common;

use common::{installed, python, start, state_doc, terrane_lock, Server};
use serde_json::json;
use terrane_backend::azurerm::AzurermBackend;
use terrane_backend::{Backend, BackendError, Settings};

/// Azurite's well-known development account and key.
const ACCOUNT: &str = "devstoreaccount1";
const KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
const CONTAINER: &str = "tfstate";

fn conn(server: &Server) -> String {
    format!(
        "DefaultEndpointsProtocol=http;AccountName={ACCOUNT};AccountKey={KEY};BlobEndpoint={}/{ACCOUNT};",
        server.url()
    )
}

fn azurite() -> Option<Server> {
    let prog = installed(".npm-cloud/node_modules/.bin/azurite-blob")?;
    let server = start(
        &prog,
        &[
            "--blobHost",
            "127.0.0.1",
            "--blobPort",
            "{port}",
            "--location",
            "{dir}",
            "--skipApiVersionCheck",
            "--silent",
        ],
        &[],
    );
    python(
        &format!(
            "from azure.storage.blob import BlobServiceClient\n\
             BlobServiceClient.from_connection_string({:?}).create_container({CONTAINER:?})\n",
            conn(&server)
        ),
        &[],
    );
    Some(server)
}

/// Blob metadata straight from Azurite through the Azure SDK.
fn raw_metadata(server: &Server, blob: &str) -> serde_json::Value {
    let out = std::process::Command::new(terrane_testkit::repo_root().join(".venv-cloud/bin/python"))
        .arg("-c")
        .arg(format!(
            "import json\nfrom azure.storage.blob import BlobServiceClient\n\
             c=BlobServiceClient.from_connection_string({:?}).get_blob_client({CONTAINER:?},{blob:?})\n\
             p=c.get_blob_properties()\n\
             print(json.dumps({{'metadata':p.metadata,'lease':p.lease.status}}))\n",
            conn(server)
        ))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn settings(key: &str, extra: serde_json::Value) -> Settings {
    let mut s = json!({
        "storage_account_name": ACCOUNT,
        "container_name": CONTAINER,
        "key": key,
        "access_key": KEY,
    });
    for (k, v) in extra.as_object().unwrap() {
        s[k] = v.clone();
    }
    serde_json::from_value(s).unwrap()
}

/// The backend on this test's Azurite (Terraform's azurerm backend has
/// no endpoint setting; terrane takes it from TERRANE_AZURE_BLOB_ENDPOINT).
fn new(server: &Server, s: &Settings) -> terrane_backend::Result<AzurermBackend> {
    AzurermBackend::with_blob_endpoint(s, Some(&server.url()))
}

fn backend(server: &Server, key: &str) -> AzurermBackend {
    new(server, &settings(key, json!({}))).expect("backend settings are valid")
}

#[track_caller]
fn check(case: &str, cond: bool, what: impl std::fmt::Display) {
    assert!(cond, "case {case}: {what}");
}

type Case = (&'static str, fn(&str, &Server));

#[test]
fn azurerm_backend_against_azurite() {
    let Some(server) = azurite() else { return };
    let cases: &[Case] = &[
        ("put_get_round_trip", |name, srv| {
            let b = backend(srv, "rt.tfstate");
            let c = b.client("default").unwrap();
            check(name, c.get().unwrap().is_none(), "no state yet");
            let doc = state_doc("l-rt", 1, "a");
            c.put(&doc).unwrap();
            check(
                name,
                c.get().unwrap().unwrap().data == doc,
                "same bytes back",
            );
        }),
        ("workspaces_list_and_delete", |name, srv| {
            let b = backend(srv, "ws.tfstate");
            b.client("dev")
                .unwrap()
                .put(&state_doc("l-dev", 1, "d"))
                .unwrap();
            b.client("prod")
                .unwrap()
                .put(&state_doc("l-prod", 1, "p"))
                .unwrap();
            check(
                name,
                b.client("dev")
                    .unwrap()
                    .path()
                    .ends_with("/ws.tfstateenv:dev"),
                "Terraform's blob name",
            );
            let ws = b.workspaces().unwrap();
            check(name, ws == ["default", "dev", "prod"], format!("{ws:?}"));
            b.delete_workspace("dev").unwrap();
            let ws = b.workspaces().unwrap();
            check(name, ws == ["default", "prod"], format!("{ws:?}"));
        }),
        (
            "lease_lock_blocks_second_lock_naming_holder",
            |name, srv| {
                let b = backend(srv, "lk.tfstate");
                let c = b.client("default").unwrap();
                let id = c
                    .lock(&terrane_lock("aaaaaaaa-1111-4111-8111-111111111111"))
                    .unwrap();
                check(name, id == "aaaaaaaa-1111-4111-8111-111111111111", &id);
                let meta = raw_metadata(srv, "lk.tfstate");
                check(name, meta["lease"] == "locked", &meta);
                let seen = b
                    .lock_holder("default")
                    .unwrap()
                    .expect("lock_holder sees the lease");
                check(
                    name,
                    seen.id == id && seen.who == "tester@terrane-test",
                    format!("{seen:?}"),
                );
                let info = meta["metadata"]["terraformlockid"]
                    .as_str()
                    .expect("lock metadata");
                use base64::Engine;
                let info: serde_json::Value = serde_json::from_slice(
                    &base64::engine::general_purpose::STANDARD
                        .decode(info)
                        .unwrap(),
                )
                .unwrap();
                check(
                    name,
                    info["ID"] == id.as_str() && info["Path"] == "tfstate/lk.tfstate",
                    &info,
                );
                // The holder can write while it holds the lease; others cannot.
                c.put(&state_doc("l-lk", 1, "held")).unwrap();
                let other = b.client("default").unwrap();
                let err = other
                    .lock(&terrane_lock("bbbbbbbb-2222-4222-8222-222222222222"))
                    .unwrap_err();
                check(
                    name,
                    matches!(&err, BackendError::Locked { holder, .. } if holder.id == id),
                    &err,
                );
                let err = other.put(b"{}").unwrap_err();
                check(name, matches!(&err, BackendError::Locked { .. }), &err);
                let wrong = other
                    .unlock("bbbbbbbb-2222-4222-8222-222222222222")
                    .unwrap_err();
                check(name, wrong.to_string().contains("does not match"), &wrong);
                // The lock information survived the write; force-unlock by ID.
                other.unlock(&id).unwrap();
                let meta = raw_metadata(srv, "lk.tfstate");
                check(
                    name,
                    meta["lease"] == "unlocked"
                        && meta["metadata"].get("terraformlockid").is_none(),
                    &meta,
                );
                check(
                    name,
                    other.get().unwrap().unwrap().data == state_doc("l-lk", 1, "held"),
                    "state kept",
                );
                check(
                    name,
                    b.lock_holder("default").unwrap().is_none(),
                    "free again",
                );
            },
        ),
        ("lock_on_new_workspace_reads_as_no_state", |name, srv| {
            let b = backend(srv, "nw.tfstate");
            let c = b.client("fresh").unwrap();
            let id = c.lock(&terrane_lock("")).unwrap();
            check(
                name,
                c.get().unwrap().is_none(),
                "an empty blob is no state",
            );
            c.unlock(&id).unwrap();
        }),
        ("wrong_container_and_wrong_key_are_errors", |name, srv| {
            let mut s = settings("x.tfstate", json!({}));
            s.insert("container_name".into(), "no-such-container".into());
            let b = new(srv, &s).unwrap();
            let err = b.client("default").unwrap().get().unwrap_err().to_string();
            check(
                name,
                err.contains("no-such-container") && err.contains("does not exist"),
                &err,
            );
            let wrong_key = "AAAAbm90LXRoZS1yaWdodC1rZXktYXQtYWxsLW5vdC1hdC1hbGwtbm90LWF0LWFsbA==";
            let b = new(
                srv,
                &settings("x.tfstate", json!({"access_key": wrong_key})),
            )
            .unwrap();
            let err = b.client("default").unwrap().get().unwrap_err().to_string();
            check(name, err.contains("403") && !err.contains(wrong_key), &err);
        }),
        ("settings_errors_name_the_setting", |name, srv| {
            let err = new(srv, &settings("k", json!({"sas_token": "x"})))
                .err()
                .unwrap()
                .to_string();
            check(
                name,
                err.contains("sas_token") && err.contains("does not support"),
                &err,
            );
            let mut s = settings("k", json!({}));
            s.remove("container_name");
            let err = new(srv, &s).err().unwrap().to_string();
            check(name, err.contains("\"container_name\""), &err);
        }),
    ];
    for (name, case) in cases {
        eprintln!("case {name}");
        case(name, &server);
    }
}
