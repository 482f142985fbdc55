//! The s3 backend against a real S3 + DynamoDB server (moto) on loopback,
//! and against real Terraform sharing that server.

mod common;

use common::{moto, python, state_doc, terrane_lock, Server};
use serde_json::json;
use terrane_backend::s3::S3Backend;
use terrane_backend::{Backend, BackendError, Settings};

const BUCKET: &str = "tfstate";
const TABLE: &str = "locks";

fn settings(server: &Server, key: &str, extra: serde_json::Value) -> Settings {
    let mut s = json!({
        "bucket": BUCKET,
        "key": key,
        "region": "us-east-1",
        "endpoints": {"s3": server.url(), "dynamodb": server.url()},
        "use_path_style": true,
        "access_key": "test",
        "secret_key": "test",
    });
    for (k, v) in extra.as_object().unwrap() {
        s[k] = v.clone();
    }
    serde_json::from_value(s).unwrap()
}

fn backend(server: &Server, key: &str, extra: serde_json::Value) -> S3Backend {
    S3Backend::new(&settings(server, key, extra)).expect("backend settings are valid")
}

/// moto with the bucket and the lock table Terraform's docs describe.
fn moto_ready() -> Option<Server> {
    let server = moto(false)?;
    python(
        &format!(
            "import boto3\n\
             kw=dict(endpoint_url='{url}',region_name='us-east-1',aws_access_key_id='test',aws_secret_access_key='test')\n\
             boto3.client('s3',**kw).create_bucket(Bucket='{BUCKET}')\n\
             boto3.client('dynamodb',**kw).create_table(TableName='{TABLE}',\
             KeySchema=[{{'AttributeName':'LockID','KeyType':'HASH'}}],\
             AttributeDefinitions=[{{'AttributeName':'LockID','AttributeType':'S'}}],\
             BillingMode='PAY_PER_REQUEST')\n",
            url = server.url()
        ),
        &[],
    );
    Some(server)
}

/// Reads an object straight from moto with boto3 (an independent client).
fn raw_object(server: &Server, key: &str) -> Option<String> {
    let out = std::process::Command::new(terrane_testkit::repo_root().join(".venv-cloud/bin/python"))
        .arg("-c")
        .arg(format!(
            "import boto3,sys\n\
             c=boto3.client('s3',endpoint_url='{}',region_name='us-east-1',aws_access_key_id='test',aws_secret_access_key='test')\n\
             try:\n  sys.stdout.write(c.get_object(Bucket='{BUCKET}',Key='{key}')['Body'].read().decode())\n\
             except c.exceptions.NoSuchKey:\n  sys.exit(3)\n",
            server.url()
        ))
        .output()
        .unwrap();
    match out.status.code() {
        Some(0) => Some(String::from_utf8(out.stdout).unwrap()),
        Some(3) => None,
        _ => panic!("boto3: {}", String::from_utf8_lossy(&out.stderr)),
    }
}

/// Writes an object straight into moto with boto3, bypassing the backend.
fn raw_put(server: &Server, key: &str, body: &str) {
    python(
        &format!(
            "import boto3\n\
             c=boto3.client('s3',endpoint_url='{}',region_name='us-east-1',aws_access_key_id='test',aws_secret_access_key='test')\n\
             c.put_object(Bucket='{BUCKET}',Key='{key}',Body={body:?}.encode())\n",
            server.url()
        ),
        &[],
    );
}

#[track_caller]
fn check(case: &str, cond: bool, what: impl std::fmt::Display) {
    assert!(cond, "case {case}: {what}");
}

type Case = (&'static str, fn(&str, &Server));

#[test]
fn s3_backend_against_moto() {
    let Some(server) = moto_ready() else { return };
    let cases: &[Case] = &[
        ("put_get_round_trip", |name, srv| {
            let b = backend(srv, "rt/terraform.tfstate", json!({}));
            let c = b.client("default").unwrap();
            check(name, c.get().unwrap().is_none(), "no state yet");
            let doc = state_doc("l-rt", 1, "a");
            c.put(&doc).unwrap();
            let got = c.get().unwrap().expect("state after put");
            check(name, got.data == doc, "same bytes back");
            check(name, got.md5.len() == 16, "an MD5 digest");
            let raw = raw_object(srv, "rt/terraform.tfstate").expect("object at the key");
            check(name, raw.as_bytes() == doc, "stored at Terraform's key");
            check(
                name,
                c.path() == "s3://tfstate/rt/terraform.tfstate",
                c.path(),
            );
        }),
        ("workspaces_list_and_delete", |name, srv| {
            let b = backend(srv, "ws/terraform.tfstate", json!({}));
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
                raw_object(srv, "env:/dev/ws/terraform.tfstate").is_some(),
                "workspace dev under env:/dev/<key>",
            );
            let ws = b.workspaces().unwrap();
            check(name, ws == ["default", "dev", "prod"], format!("{ws:?}"));
            b.delete_workspace("dev").unwrap();
            let ws = b.workspaces().unwrap();
            check(name, ws == ["default", "prod"], format!("{ws:?}"));
            let err = b.delete_workspace("default").unwrap_err().to_string();
            check(name, err.contains("default"), err);
            let custom = backend(
                srv,
                "ws2/t.tfstate",
                json!({"workspace_key_prefix": "teams/a"}),
            );
            custom
                .client("qa")
                .unwrap()
                .put(&state_doc("l-qa", 1, "q"))
                .unwrap();
            check(
                name,
                raw_object(srv, "teams/a/qa/ws2/t.tfstate").is_some(),
                "custom prefix",
            );
            let ws = custom.workspaces().unwrap();
            check(name, ws == ["default", "qa"], format!("{ws:?}"));
        }),
        ("lockfile_blocks_second_lock_naming_holder", |name, srv| {
            let b = backend(srv, "lf/terraform.tfstate", json!({"use_lockfile": true}));
            let c = b.client("default").unwrap();
            let id = c
                .lock(&terrane_lock("11111111-1111-4111-8111-111111111111"))
                .unwrap();
            check(name, id == "11111111-1111-4111-8111-111111111111", &id);
            let raw = raw_object(srv, "lf/terraform.tfstate.tflock").expect("the .tflock object");
            let info: serde_json::Value = serde_json::from_str(&raw).unwrap();
            check(name, info["ID"] == id.as_str(), &raw);
            check(name, info["Path"] == "tfstate/lf/terraform.tfstate", &raw);
            let err = c
                .lock(&terrane_lock("22222222-2222-4222-8222-222222222222"))
                .unwrap_err();
            match &err {
                BackendError::Locked { holder, .. } => check(
                    name,
                    holder.id == id && holder.who == "tester@terrane-test",
                    &err,
                ),
                other => panic!("case {name}: want Locked, got {other}"),
            }
            check(name, err.to_string().contains("tester@terrane-test"), &err);
            let wrong = c
                .unlock("22222222-2222-4222-8222-222222222222")
                .unwrap_err();
            check(name, wrong.to_string().contains("does not match"), &wrong);
            c.unlock(&id).unwrap();
            check(
                name,
                raw_object(srv, "lf/terraform.tfstate.tflock").is_none(),
                "lock removed",
            );
            let again = c.lock(&terrane_lock("")).unwrap();
            check(name, again.len() == 36, format!("a fresh UUID: {again}"));
            c.unlock(&again).unwrap();
        }),
        ("dynamodb_lock_blocks_and_digest_is_kept", |name, srv| {
            let b = backend(
                srv,
                "dy/terraform.tfstate",
                json!({"dynamodb_table": TABLE}),
            );
            let c = b.client("default").unwrap();
            let id = c
                .lock(&terrane_lock("33333333-3333-4333-8333-333333333333"))
                .unwrap();
            let err = c
                .lock(&terrane_lock("44444444-4444-4444-8444-444444444444"))
                .unwrap_err();
            check(
                name,
                matches!(&err, BackendError::Locked { holder, .. } if holder.id == id),
                &err,
            );
            c.put(&state_doc("l-dy", 1, "x")).unwrap();
            check(
                name,
                c.get().unwrap().is_some(),
                "reads back with the digest matching",
            );
            c.unlock(&id).unwrap();
            c.lock(&terrane_lock("55555555-5555-4555-8555-555555555555"))
                .unwrap();
            c.unlock("55555555-5555-4555-8555-555555555555").unwrap();
        }),
        ("both_locks_and_no_half_lock_left", |name, srv| {
            let extra = json!({"dynamodb_table": TABLE, "use_lockfile": true});
            let b = backend(srv, "both/terraform.tfstate", extra);
            let c = b.client("default").unwrap();
            // Someone holds only the DynamoDB lock: ours must fail and
            // must not leave its lock file behind.
            let only_dynamo = backend(
                srv,
                "both/terraform.tfstate",
                json!({"dynamodb_table": TABLE}),
            );
            let other = only_dynamo.client("default").unwrap();
            let held = other
                .lock(&terrane_lock("66666666-6666-4666-8666-666666666666"))
                .unwrap();
            let err = c
                .lock(&terrane_lock("77777777-7777-4777-8777-777777777777"))
                .unwrap_err();
            check(
                name,
                matches!(&err, BackendError::Locked { holder, .. } if holder.id == held),
                &err,
            );
            check(
                name,
                raw_object(srv, "both/terraform.tfstate.tflock").is_none(),
                "no half lock",
            );
            other.unlock(&held).unwrap();
            let id = c.lock(&terrane_lock("")).unwrap();
            c.unlock(&id).unwrap();
        }),
        (
            "corrupt_object_against_digest_is_an_error_and_kept",
            |name, srv| {
                let b = backend(
                    srv,
                    "co/terraform.tfstate",
                    json!({"dynamodb_table": TABLE}),
                );
                let c = b.client("default").unwrap();
                c.put(&state_doc("l-co", 3, "good")).unwrap();
                raw_put(
                    srv,
                    "co/terraform.tfstate",
                    "{\"version\": 4, \"serial\": tru",
                );
                let err = c.get().unwrap_err();
                check(name, matches!(err, BackendError::Corrupt { .. }), &err);
                check(name, err.to_string().contains("expected content"), &err);
                check(
                    name,
                    raw_object(srv, "co/terraform.tfstate")
                        .unwrap()
                        .contains("tru"),
                    "the object is left as it was",
                );
            },
        ),
        ("large_state_round_trip_2000_resources", |name, srv| {
            let b = backend(
                srv,
                "big/terraform.tfstate",
                json!({"dynamodb_table": TABLE}),
            );
            let c = b.client("default").unwrap();
            let resources: Vec<_> = (0..2000)
                .map(|i| {
                    json!({"mode": "managed", "type": "terraform_data", "name": "r",
                        "provider": "provider[\"terraform.io/builtin/terraform\"]",
                        "instances": [{"index_key": i, "schema_version": 0, "attributes": {
                            "id": format!("{i:08}-0000-4000-8000-000000000000"),
                            "input": {"value": format!("value-{i}"), "type": "string"},
                            "output": {"value": format!("value-{i}"), "type": "string"},
                            "triggers_replace": null}, "sensitive_attributes": []}]})
                })
                .collect();
            let doc = serde_json::to_vec_pretty(&json!({"version": 4, "serial": 1,
                "lineage": "l-big", "terraform_version": "1.15.5", "outputs": {},
                "resources": resources}))
            .unwrap();
            let t = std::time::Instant::now();
            c.put(&doc).unwrap();
            let put = t.elapsed();
            let t = std::time::Instant::now();
            let got = c.get().unwrap().unwrap();
            let get = t.elapsed();
            check(name, got.data == doc, "same bytes back");
            eprintln!(
                "case {name}: {} bytes, put {:?}, get {:?} (moto, with the DynamoDB digest)",
                doc.len(),
                put,
                get
            );
        }),
        (
            "wrong_bucket_is_an_error_not_an_empty_state",
            |name, srv| {
                let mut s = settings(srv, "x/terraform.tfstate", json!({}));
                s.insert("bucket".into(), "no-such-bucket".into());
                let b = S3Backend::new(&s).unwrap();
                let c = b.client("default").unwrap();
                let err = c.get().unwrap_err().to_string();
                check(
                    name,
                    err.contains("no-such-bucket") && err.contains("does not exist"),
                    &err,
                );
                let err = c.put(b"{}").unwrap_err().to_string();
                check(name, err.contains("no-such-bucket"), &err);
                let err = b.workspaces().unwrap_err().to_string();
                check(name, err.contains("no-such-bucket"), &err);
            },
        ),
        ("missing_table_is_an_error", |name, srv| {
            let b = backend(
                srv,
                "mt/terraform.tfstate",
                json!({"dynamodb_table": "no-such-table"}),
            );
            let c = b.client("default").unwrap();
            let err = c.lock(&terrane_lock("")).unwrap_err().to_string();
            check(
                name,
                err.contains("no-such-table") && err.contains("does not exist"),
                &err,
            );
        }),
        ("settings_errors_name_the_setting", |name, srv| {
            let mut bad = settings(srv, "k", json!({"kye": "x"}));
            let err = S3Backend::new(&bad).err().unwrap().to_string();
            check(name, err.contains("\"kye\""), &err);
            bad = settings(srv, "k", json!({}));
            bad.remove("bucket");
            let err = S3Backend::new(&bad).err().unwrap().to_string();
            check(
                name,
                err.contains("\"bucket\"") && err.contains("required"),
                &err,
            );
            let err = S3Backend::new(&settings(srv, "k", json!({"kms_key_id": "k"})))
                .err()
                .unwrap()
                .to_string();
            check(
                name,
                err.contains("kms_key_id") && err.contains("does not support"),
                &err,
            );
            let err = S3Backend::new(&settings(srv, "/k", json!({})))
                .err()
                .unwrap()
                .to_string();
            check(name, err.contains("must not start"), &err);
            let err = S3Backend::new(&settings(srv, "k", json!({"encrypt": "yes"})))
                .err()
                .unwrap()
                .to_string();
            check(name, err.contains("encrypt") && err.contains("bool"), &err);
        }),
        ("secrets_never_in_errors", |name, srv| {
            let mut s = settings(srv, "sec/terraform.tfstate", json!({}));
            s.insert("bucket".into(), "no-such-bucket".into());
            s.insert("secret_key".into(), "VERY-SECRET-KEY-123".into());
            let b = S3Backend::new(&s).unwrap();
            let err = b.client("default").unwrap().get().unwrap_err();
            check(
                name,
                !format!("{err} {err:?}").contains("VERY-SECRET"),
                &err,
            );
        }),
    ];
    for (name, case) in cases {
        eprintln!("case {name}");
        case(name, &server);
    }
}

#[test]
fn s3_wrong_credentials_are_refused() {
    let Some(server) = moto(true) else { return };
    let b = backend(
        &server,
        "k/terraform.tfstate",
        json!({"dynamodb_table": TABLE}),
    );
    let c = b.client("default").unwrap();
    let err = c.get().unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, BackendError::Io { .. }), "{text}");
    assert!(
        text.contains("InvalidAccessKeyId") || text.contains("403") || text.contains("credentials"),
        "{text}"
    );
    assert!(
        !text.contains("secret_key") && !text.contains("\"test\""),
        "{text}"
    );
    let err = c.put(b"{}").unwrap_err().to_string();
    assert!(
        err.contains("403") || err.contains("InvalidAccessKeyId"),
        "{err}"
    );
}

/// Terraform applies with the s3 backend on moto; terrane's client reads
/// the object Terraform wrote, its lock refuses `terraform plan` naming
/// the holder, and Terraform reads the state terrane writes back.
#[test]
fn s3_interop_with_terraform() {
    let Some(tf) = terrane_testkit::terraform() else {
        return;
    };
    let Some(server) = moto_ready() else { return };
    let dir = terrane_testkit::temp_dir();
    let key = "interop/terraform.tfstate";
    std::fs::write(
        dir.path().join("main.tf"),
        format!(
            r#"terraform {{
  backend "s3" {{
    bucket         = "{BUCKET}"
    key            = "{key}"
    region         = "us-east-1"
    endpoints      = {{ s3 = "{url}", dynamodb = "{url}" }}
    use_path_style = true
    use_lockfile   = true
    dynamodb_table = "{TABLE}"
    access_key     = "test"
    secret_key     = "test"
    skip_credentials_validation = true
    skip_requesting_account_id  = true
    skip_metadata_api_check     = true
    skip_region_validation      = true
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
    let extra = json!({"use_lockfile": true, "dynamodb_table": TABLE});
    let b = backend(&server, key, extra);
    let dynamo_only = backend(&server, key, json!({"dynamodb_table": TABLE}));
    let file_only = backend(&server, key, json!({"use_lockfile": true}));

    // While Terraform applies, terrane sees both of its locks.
    let (out, seen) = std::thread::scope(|s| {
        let apply = s.spawn(|| {
            tf.run(
                d,
                &["apply", "-auto-approve", "-input=false", "-no-color"],
                &[],
            )
        });
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(90);
        let mut seen = None;
        while seen.is_none() && !apply.is_finished() && std::time::Instant::now() < deadline {
            if let (Some(f), Some(y)) = (
                file_only.lock_holder("default").unwrap(),
                dynamo_only.lock_holder("default").unwrap(),
            ) {
                seen = Some((f, y));
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        (apply.join().unwrap(), seen)
    });
    assert_eq!(
        out.code,
        0,
        "{}\n{}\nmoto's log:\n{}",
        out.stdout,
        out.stderr,
        server.log_tail()
    );
    let (file_lock, item_lock) = seen.expect("terrane sees Terraform's locks during its apply");
    assert_eq!(file_lock.operation, "OperationTypeApply", "{file_lock:?}");
    assert_eq!(file_lock.path, format!("{BUCKET}/{key}"), "{file_lock:?}");
    assert_eq!(file_lock.id, item_lock.id, "one lock ID in both places");
    assert!(
        b.lock_holder("default").unwrap().is_none(),
        "Terraform released them"
    );
    let c = b.client("default").unwrap();
    let payload = c.get().unwrap().expect("Terraform's state object");
    let mut doc: serde_json::Value = serde_json::from_slice(&payload.data).unwrap();
    assert_eq!(doc["outputs"]["o"]["value"], "from-terraform", "{doc}");
    let serial = doc["serial"].as_u64().unwrap();

    // terrane's lock refuses Terraform, naming terrane's lock.
    let id = c
        .lock(&terrane_lock("99999999-9999-4999-8999-999999999999"))
        .unwrap();
    let out = tf.run(
        d,
        &["plan", "-input=false", "-no-color", "-lock-timeout=0s"],
        &[],
    );
    assert_ne!(out.code, 0, "plan must be refused:\n{}", out.stdout);
    assert!(
        out.stderr.contains(&id) && out.stderr.contains("tester@terrane-test"),
        "Terraform names terrane's lock:\n{}",
        out.stderr
    );
    c.unlock(&id).unwrap();

    // Terraform reads what terrane writes (and its DynamoDB digest).
    doc["serial"] = (serial + 1).into();
    doc["outputs"]["o"]["value"] = "from-terrane".into();
    c.put(&serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    let out = tf.expect(d, &["output", "-raw", "-no-color", "o"], 0);
    assert_eq!(out.stdout.trim(), "from-terrane", "{}", out.stderr);

    // Workspaces Terraform makes are terrane's too, and the reverse.
    tf.expect(d, &["workspace", "new", "-no-color", "dev"], 0);
    let ws = b.workspaces().unwrap();
    assert_eq!(ws, ["default", "dev"]);
    b.client("qa")
        .unwrap()
        .put(&state_doc("l-qa", 1, "qa"))
        .unwrap();
    let out = tf.expect(d, &["workspace", "list", "-no-color"], 0);
    assert!(out.stdout.contains("qa"), "{}", out.stdout);
}
