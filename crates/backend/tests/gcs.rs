//! The gcs backend against a real GCS emulator (PyPI's
//! gcp-storage-emulator) on loopback.

mod common;

use common::{installed, start, state_doc, terrane_lock, Server};
use serde_json::json;
use terrane_backend::gcs::GcsBackend;
use terrane_backend::{Backend, BackendError, Settings};

const BUCKET: &str = "tfstate";

fn emulator() -> Option<Server> {
    let prog = installed(".venv-cloud/bin/gcp-storage-emulator")?;
    Some(start(
        &prog,
        &[
            "start",
            "--host",
            "127.0.0.1",
            "--port",
            "{port}",
            "--in-memory",
            "--default-bucket",
            BUCKET,
        ],
        &[],
    ))
}

fn settings(server: &Server, extra: serde_json::Value) -> Settings {
    let mut s = json!({
        "bucket": BUCKET,
        "storage_custom_endpoint": format!("{}/storage/v1/", server.url()),
    });
    for (k, v) in extra.as_object().unwrap() {
        s[k] = v.clone();
    }
    serde_json::from_value(s).unwrap()
}

fn backend(server: &Server, extra: serde_json::Value) -> GcsBackend {
    GcsBackend::new(&settings(server, extra)).expect("backend settings are valid")
}

/// An object read straight from the emulator (not through the backend).
fn raw_object(server: &Server, name: &str) -> Option<String> {
    let b = backend(server, json!({"prefix": ""}));
    let ws = name.strip_suffix(".tfstate")?;
    b.client(ws)
        .unwrap()
        .get()
        .unwrap()
        .map(|p| String::from_utf8(p.data).unwrap())
}

#[track_caller]
fn check(case: &str, cond: bool, what: impl std::fmt::Display) {
    assert!(cond, "case {case}: {what}");
}

type Case = (&'static str, fn(&str, &Server));

#[test]
fn gcs_backend_against_emulator() {
    let Some(server) = emulator() else { return };
    let cases: &[Case] = &[
        ("put_get_round_trip", |name, srv| {
            let b = backend(srv, json!({"prefix": "rt"}));
            let c = b.client("default").unwrap();
            check(name, c.get().unwrap().is_none(), "no state yet");
            let doc = state_doc("l-rt", 1, "a");
            c.put(&doc).unwrap();
            let got = c.get().unwrap().expect("state after put");
            check(name, got.data == doc, "same bytes back");
            check(
                name,
                c.path() == "gs://tfstate/rt/default.tfstate",
                c.path(),
            );
        }),
        ("workspaces_list_and_delete", |name, srv| {
            let b = backend(srv, json!({"prefix": "ws/"}));
            b.client("dev")
                .unwrap()
                .put(&state_doc("l-dev", 1, "d"))
                .unwrap();
            b.client("prod")
                .unwrap()
                .put(&state_doc("l-prod", 1, "p"))
                .unwrap();
            let ws = b.workspaces().unwrap();
            check(name, ws == ["default", "dev", "prod"], format!("{ws:?}"));
            b.delete_workspace("dev").unwrap();
            let ws = b.workspaces().unwrap();
            check(name, ws == ["default", "prod"], format!("{ws:?}"));
            check(
                name,
                b.delete_workspace("default").is_err(),
                "default stays",
            );
            let top = backend(srv, json!({}));
            top.client("top")
                .unwrap()
                .put(&state_doc("l-top", 1, "t"))
                .unwrap();
            check(
                name,
                raw_object(srv, "top.tfstate").is_some(),
                "no prefix: <ws>.tfstate",
            );
        }),
        ("lock_blocks_second_lock_naming_holder", |name, srv| {
            let b = backend(srv, json!({"prefix": "lk"}));
            let c = b.client("default").unwrap();
            let id = c
                .lock(&terrane_lock("ignored-gcs-uses-generations"))
                .unwrap();
            check(
                name,
                id.parse::<i64>().is_ok(),
                format!("generation as lock ID: {id}"),
            );
            let err = c.lock(&terrane_lock("second")).unwrap_err();
            match &err {
                BackendError::Locked { holder, .. } => check(
                    name,
                    holder.id == id
                        && holder.who == "tester@terrane-test"
                        && holder.path == "gs://tfstate/lk/default.tflock",
                    &err,
                ),
                other => panic!("case {name}: want Locked, got {other}"),
            }
            let wrong = c.unlock("12345").unwrap_err().to_string();
            check(name, wrong.contains("does not match"), &wrong);
            let bad = c.unlock("not-a-number").unwrap_err().to_string();
            check(name, bad.contains("numerical"), &bad);
            c.unlock(&id).unwrap();
            let again = c.lock(&terrane_lock("")).unwrap();
            c.unlock(&again).unwrap();
            let err = c.unlock(&again).unwrap_err().to_string();
            check(name, err.contains("no lock"), &err);
        }),
        (
            "wrong_bucket_is_an_error_not_an_empty_state",
            |name, srv| {
                let mut s = settings(srv, json!({}));
                s.insert("bucket".into(), "no-such-bucket".into());
                let b = GcsBackend::new(&s).unwrap();
                let c = b.client("default").unwrap();
                let err = c.get().unwrap_err().to_string();
                check(
                    name,
                    err.contains("no-such-bucket") && err.contains("does not exist"),
                    &err,
                );
                let err = b.workspaces().unwrap_err().to_string();
                check(name, err.contains("no-such-bucket"), &err);
                let err = c.lock(&terrane_lock("")).unwrap_err().to_string();
                check(name, err.contains("no-such-bucket"), &err);
            },
        ),
        ("corrupt_object_is_returned_untouched", |name, srv| {
            let b = backend(srv, json!({"prefix": "co"}));
            let c = b.client("default").unwrap();
            c.put(b"{\"version\": 4, \"serial\": tru").unwrap();
            let got = c.get().unwrap().unwrap();
            check(
                name,
                got.data.ends_with(b"tru"),
                "bytes as stored, for the caller to reject",
            );
        }),
        ("settings_errors_name_the_setting", |name, srv| {
            let err = GcsBackend::new(&settings(srv, json!({"prefx": "x"})))
                .err()
                .unwrap()
                .to_string();
            check(name, err.contains("\"prefx\""), &err);
            let mut s = settings(srv, json!({}));
            s.remove("bucket");
            let err = GcsBackend::new(&s).err().unwrap().to_string();
            check(name, err.contains("\"bucket\""), &err);
            let err = GcsBackend::new(&settings(srv, json!({"encryption_key": "k"})))
                .err()
                .unwrap()
                .to_string();
            check(
                name,
                err.contains("encryption_key") && err.contains("does not support"),
                &err,
            );
        }),
    ];
    for (name, case) in cases {
        eprintln!("case {name}");
        case(name, &server);
    }
}

/// Terraform applies with the gcs backend on the emulator: while its
/// apply runs, terrane sees Terraform's lock (holder, operation, the
/// generation as ID); then terrane reads the state Terraform wrote, and
/// Terraform reads the state terrane writes back.
#[test]
fn gcs_interop_with_terraform() {
    let Some(tf) = terrane_testkit::terraform() else {
        return;
    };
    let Some(server) = emulator() else { return };
    let dir = terrane_testkit::temp_dir();
    std::fs::write(
        dir.path().join("main.tf"),
        format!(
            r#"terraform {{
  backend "gcs" {{
    bucket                  = "{BUCKET}"
    prefix                  = "interop"
    storage_custom_endpoint = "{url}/storage/v1/"
    access_token            = "emulator"
  }}
}}
resource "terraform_data" "x" {{
  input = "from-terraform"
  provisioner "local-exec" {{
    command = "sleep 6"
  }}
}}
output "o" {{
  value = terraform_data.x.output
}}
"#,
            url = server.url()
        ),
    )
    .unwrap();
    let d = dir.path();
    tf.expect(d, &["init", "-input=false", "-no-color"], 0);
    let b = backend(&server, json!({"prefix": "interop"}));
    let apply = std::thread::scope(|s| {
        let run = s.spawn(|| {
            tf.run(
                d,
                &["apply", "-auto-approve", "-input=false", "-no-color"],
                &[],
            )
        });
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let mut seen = None;
        while seen.is_none() && !run.is_finished() && std::time::Instant::now() < deadline {
            seen = b.lock_holder("default").unwrap();
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        (run.join().unwrap(), seen)
    });
    let (out, seen) = apply;
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let holder = seen.expect("terrane sees Terraform's lock while its apply runs");
    assert_eq!(holder.operation, "OperationTypeApply", "{holder:?}");
    assert!(
        holder.id.parse::<i64>().is_ok(),
        "the generation is the ID: {holder:?}"
    );
    assert_eq!(
        holder.path, "gs://tfstate/interop/default.tflock",
        "{holder:?}"
    );
    assert!(
        b.lock_holder("default").unwrap().is_none(),
        "Terraform released it"
    );

    let c = b.client("default").unwrap();
    let payload = c.get().unwrap().expect("Terraform's state object");
    let mut doc: serde_json::Value = serde_json::from_slice(&payload.data).unwrap();
    assert_eq!(doc["outputs"]["o"]["value"], "from-terraform", "{doc}");
    let serial = doc["serial"].as_u64().unwrap();
    doc["serial"] = (serial + 1).into();
    doc["outputs"]["o"]["value"] = "from-terrane".into();
    c.put(&serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    let out = tf.expect(d, &["output", "-raw", "-no-color", "o"], 0);
    assert_eq!(out.stdout.trim(), "from-terrane", "{}", out.stderr);

    tf.expect(d, &["workspace", "new", "-no-color", "dev"], 0);
    assert_eq!(b.workspaces().unwrap(), ["default", "dev"]);
}
