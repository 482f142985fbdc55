//! The cloud backends (s3, gcs, azurerm) through the real `terrane`
//! binary, against real emulators on loopback (moto, the GCS emulator,
//! Azurite) and real Terraform (issue 17): Terraform's backend hash in the
//! record `init` writes, secrets kept out of it, round trips between the
//! two tools, `-migrate-state` from local and back, and a SIGKILL during a
//! 2,000-resource apply on s3.

#[path = "../../backend/tests/common/mod.rs"]
mod common;

mod recovery;

use serde_json::Value as Json;
use std::path::Path;
use terrane_testkit::{isolated, temp_dir, terraform, Out};

const BUCKET: &str = "tfstate";
/// Azurite's well-known development account and key.
const AZ_ACCOUNT: &str = "devstoreaccount1";
const AZ_KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
/// A secret no file terrane writes may hold.
const SECRET: &str = "hb2-Secret-Value-7f3a";

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

fn config(backend: &str, input: &str) -> String {
    format!("terraform {{\n  backend {backend}\n}}\nresource \"terraform_data\" \"d\" {{\n  input = \"{input}\"\n}}\noutput \"o\" {{\n  value = terraform_data.d.output\n}}\n")
}

/// One cloud backend on its emulator: the block, and the environment
/// both tools run with.
struct Cloud {
    /// The server (emulator process, or test server) kept alive.
    _server: Box<dyn std::any::Any>,
    /// The throwaway CA and certificate of an emulator served over TLS.
    _tls: Option<tempfile::TempDir>,
    /// Reached at production URLs (`https://<account>.blob.core.windows.net`
    /// through a CONNECT proxy), read back with Azure's Python SDK.
    production: bool,
    kind: &'static str,
    /// `"s3" { … }` with `{key}` standing for the state's key.
    block: String,
    env: Vec<(String, String)>,
}

impl Cloud {
    fn block(&self, key: &str) -> String {
        self.block.replace("{key}", key)
    }

    /// The backend the block names, opened in this process with the
    /// credentials the environment gives the CLI (this process's own
    /// environment is left alone: tests run in parallel).
    fn open(&self, key: &str) -> Box<dyn terrane_backend::Backend> {
        let dir = temp_dir();
        write(dir.path(), "main.tf", &config(&self.block(key), "x"));
        let (module, _) = terrane_config::load_module(dir.path());
        let mut s = module.backend.unwrap().settings;
        s.retain(|_, v| !v.is_null());
        let env = |k: &str| {
            let v = &self.env.iter().find(|(n, _)| n == k).unwrap().1;
            Json::String(v.clone())
        };
        match self.kind {
            "s3" => {
                s.insert("access_key".into(), env("AWS_ACCESS_KEY_ID"));
                s.insert("secret_key".into(), env("AWS_SECRET_ACCESS_KEY"));
            }
            "gcs" => {
                s.insert("access_token".into(), env("GOOGLE_OAUTH_ACCESS_TOKEN"));
            }
            "pg" => {
                s.insert("conn_str".into(), env("PG_CONN_STR"));
            }
            "http" => {
                if let Some((_, v)) = self.env.iter().find(|(n, _)| n == "TF_HTTP_PASSWORD") {
                    s.insert("password".into(), Json::String(v.clone()));
                }
            }
            _ => {
                s.insert("access_key".into(), env("ARM_ACCESS_KEY"));
                let ep = env("TERRANE_AZURE_BLOB_ENDPOINT");
                return Box::new(
                    terrane_backend::azurerm::AzurermBackend::with_blob_endpoint(&s, ep.as_str())
                        .unwrap(),
                );
            }
        }
        terrane_backend::open(self.kind, &s).unwrap()
    }

    fn terrane(&self, dir: &Path, args: &[&str]) -> Out {
        self.terrane_env(dir, args, &[])
    }

    /// `terrane ARGS` with `extra` added to the environment.
    fn terrane_env(&self, dir: &Path, args: &[&str], extra: &[(&str, &str)]) -> Out {
        let mut c = isolated(env!("CARGO_BIN_EXE_terrane"), dir);
        c.args(args).env("TF_CLI_CONFIG_FILE", dir.join("cli.tfrc"));
        for (k, v) in &self.env {
            c.env(k, v);
        }
        for (k, v) in extra {
            c.env(k, v);
        }
        c.output().expect("terrane runs").into()
    }

    fn terraform(&self, tf: &terrane_testkit::Terraform, dir: &Path, args: &[&str]) -> Out {
        let rc = dir.join("cli.tfrc");
        let mut env: Vec<(&str, &str)> = vec![("TF_CLI_CONFIG_FILE", rc.to_str().unwrap())];
        env.extend(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        let o = tf.run(dir, args, &env);
        Out {
            code: o.code,
            stdout: o.stdout,
            stderr: o.stderr,
        }
    }
}

fn s3() -> Option<Cloud> {
    let server = common::moto(false)?;
    common::python(
        &format!(
            "import boto3\n\
             boto3.client('s3',endpoint_url='{}',region_name='us-east-1',aws_access_key_id='test',\
             aws_secret_access_key='test').create_bucket(Bucket='{BUCKET}')\n",
            server.url()
        ),
        &[],
    );
    let block = format!(
        "\"s3\" {{\n    bucket = \"{BUCKET}\"\n    key = \"{{key}}\"\n    region = \"us-east-1\"\n    endpoints = {{ s3 = \"{url}\" }}\n    use_path_style = true\n    use_lockfile = true\n    skip_credentials_validation = true\n    skip_requesting_account_id = true\n    skip_metadata_api_check = true\n    skip_region_validation = true\n  }}",
        url = server.url()
    );
    Some(Cloud {
        _server: Box::new(server),
        _tls: None,
        production: false,
        kind: "s3",
        block,
        env: vec![
            ("AWS_ACCESS_KEY_ID".into(), "test".into()),
            ("AWS_SECRET_ACCESS_KEY".into(), "test".into()),
        ],
    })
}

fn gcs() -> Option<Cloud> {
    let prog = common::installed(".venv-cloud/bin/gcp-storage-emulator")?;
    let server = common::start(
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
    );
    let block = format!(
        "\"gcs\" {{\n    bucket = \"{BUCKET}\"\n    prefix = \"{{key}}\"\n    storage_custom_endpoint = \"{}/storage/v1/\"\n  }}",
        server.url()
    );
    Some(Cloud {
        _server: Box::new(server),
        _tls: None,
        production: false,
        kind: "gcs",
        block,
        env: vec![("GOOGLE_OAUTH_ACCESS_TOKEN".into(), "emulator".into())],
    })
}

fn azurerm() -> Option<Cloud> {
    let prog = common::installed(".npm-cloud/node_modules/.bin/azurite-blob")?;
    let server = common::start(
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
    common::python(
        &format!(
            "from azure.storage.blob import BlobServiceClient\n\
             BlobServiceClient.from_connection_string('DefaultEndpointsProtocol=http;AccountName={AZ_ACCOUNT};AccountKey={AZ_KEY};BlobEndpoint={}/{AZ_ACCOUNT};').create_container('tfstate')\n",
            server.url()
        ),
        &[],
    );
    let block = format!(
        "\"azurerm\" {{\n    storage_account_name = \"{AZ_ACCOUNT}\"\n    container_name = \"tfstate\"\n    key = \"{{key}}\"\n  }}"
    );
    let endpoint = server.url();
    Some(Cloud {
        _server: Box::new(server),
        _tls: None,
        production: false,
        kind: "azurerm",
        block,
        env: vec![
            ("ARM_ACCESS_KEY".into(), AZ_KEY.into()),
            ("TERRANE_AZURE_BLOB_ENDPOINT".into(), endpoint),
        ],
    })
}

#[track_caller]
fn ok(step: &str, o: &Out) {
    assert_eq!(o.code, 0, "case {step}: {}{}", o.stdout, o.stderr);
}

/// The backend record init wrote in `dir`.
fn record(dir: &Path) -> Json {
    let text = std::fs::read_to_string(dir.join(".terraform/terraform.tfstate")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Every file under `dir` (recursively) holding `needle`, but for the
/// configuration itself.
fn files_holding(dir: &Path, needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == "main.tf") {
                continue;
            } else if std::fs::read(&p)
                .map(|b| String::from_utf8_lossy(&b).contains(needle))
                .unwrap_or(false)
            {
                found.push(p.display().to_string());
            }
        }
    }
    found
}

/// Item 1: for each block, `terraform init` and `terrane init` record the
/// same hash; neither tool then asks for init after the other's; the
/// secret in the block is in terrane's record nowhere.
fn hash_matches_terraform(cloud: &Cloud, blocks: &[(&str, String, Vec<&str>)]) {
    let Some(tf) = terraform() else { return };
    for (name, block, extra) in blocks {
        let case = format!("{} {name}", cloud.kind);
        let by_tf = temp_dir();
        let by_tr = temp_dir();
        for d in [by_tf.path(), by_tr.path()] {
            write(d, "cli.tfrc", "");
            write(d, "main.tf", &config(block, "one"));
        }
        let mut init = vec!["init", "-input=false", "-no-color"];
        init.extend(extra.iter().copied());
        ok(
            &format!("{case} terraform_init"),
            &cloud.terraform(&tf, by_tf.path(), &init),
        );
        let o = cloud.terrane(by_tr.path(), &init);
        ok(&format!("{case} terrane_init"), &o);
        if extra.iter().any(|a| a.contains(SECRET)) {
            assert!(
                format!("{}{}", o.stdout, o.stderr)
                    .contains("Secret backend settings are not recorded"),
                "case {case} warns_of_unrecorded_secrets: {}{}",
                o.stdout,
                o.stderr
            );
        }
        let (tf_rec, tr_rec) = (record(by_tf.path()), record(by_tr.path()));
        assert_eq!(
            tr_rec["backend"]["hash"], tf_rec["backend"]["hash"],
            "case {case}: hash\nterraform: {tf_rec}\nterrane: {tr_rec}"
        );
        let leaks = files_holding(by_tr.path(), SECRET);
        assert!(leaks.is_empty(), "case {case}: secret written to {leaks:?}");
        // Each tool plans with the other's record, without init.
        let plan = ["plan", "-input=false", "-no-color", "-lock=false"];
        let o = cloud.terraform(&tf, by_tr.path(), &plan);
        ok(&format!("{case} terraform_plans_after_terrane_init"), &o);
        let o = cloud.terrane(by_tf.path(), &plan);
        ok(&format!("{case} terrane_plans_after_terraform_init"), &o);
        // And each one's init accepts the other's record as it is.
        let o = cloud.terrane(by_tf.path(), &init);
        ok(&format!("{case} terrane_init_after_terraform_init"), &o);
        assert!(
            o.stdout.contains("Using the previously initialized"),
            "case {case} terrane_init_keeps_terraforms_record: {}",
            o.stdout
        );
        let o = cloud.terraform(&tf, by_tr.path(), &init);
        if extra.iter().any(|a| a.contains(SECRET)) {
            // The price of keeping the secret out of the record: Terraform
            // compares its -backend-config secret with the record, finds
            // it missing, and asks for -reconfigure (which copies nothing).
            assert!(
                o.code == 1 && o.stderr.contains("Backend configuration changed"),
                "case {case} terraform_init_with_secret_override: {}{}",
                o.stdout,
                o.stderr
            );
            init.push("-reconfigure");
            let o = cloud.terraform(&tf, by_tr.path(), &init);
            ok(&format!("{case} terraform_init_reconfigure"), &o);
        } else {
            ok(&format!("{case} terraform_init_after_terrane_init"), &o);
        }
    }
}

#[test]
fn item1_s3_backend_hash_is_terraforms() {
    let Some(cloud) = s3() else { return };
    let full = cloud.block("h/full.tfstate");
    let partial = cloud.block("h/partial.tfstate").replace(
        &format!("    bucket = \"{BUCKET}\"\n"),
        "    workspace_key_prefix = \"ws\"\n",
    );
    let with_secret = cloud.block("h/secret.tfstate").replace(
        "    region",
        &format!("    access_key = \"test\"\n    secret_key = \"{SECRET}\"\n    region"),
    );
    let bucket = format!("-backend-config=bucket={BUCKET}");
    let given_secret = format!("-backend-config=secret_key={SECRET}");
    hash_matches_terraform(
        &cloud,
        &[
            ("full_block", full.clone(), vec![]),
            ("partial_block", partial, vec![&bucket]),
            ("secret_in_block", with_secret, vec![]),
            (
                "secret_from_backend_config",
                full.replace("h/full", "h/given"),
                vec!["-backend-config=access_key=test", &given_secret],
            ),
        ],
    );
}

#[test]
fn item1_gcs_backend_hash_is_terraforms() {
    let Some(cloud) = gcs() else { return };
    let full = cloud.block("h-full");
    let with_secret = cloud.block("h-secret").replace(
        "    prefix",
        &format!("    access_token = \"{SECRET}\"\n    prefix"),
    );
    let partial = cloud
        .block("h-partial")
        .replace(&format!("    bucket = \"{BUCKET}\"\n"), "");
    let bucket = format!("-backend-config=bucket={BUCKET}");
    hash_matches_terraform(
        &cloud,
        &[
            ("full_block", full, vec![]),
            ("partial_block", partial, vec![&bucket]),
            ("secret_in_block", with_secret, vec![]),
        ],
    );
}

/// Terraform's azurerm backend has no endpoint setting, so Terraform
/// cannot init against Azurite; its own check of terrane's record is
/// still observable: with a `-backend-config` value the block lacks,
/// Terraform accepts the record only if the hash is its own, and asks for
/// init otherwise (the control case, with the hash altered).
#[test]
fn item1_azurerm_backend_hash_is_terraforms() {
    let Some(tf) = terraform() else { return };
    let Some(cloud) = azurerm() else { return };
    let dir = temp_dir();
    let d = dir.path();
    write(d, "cli.tfrc", "");
    let block = cloud.block("unused").replace("    key = \"unused\"\n", "");
    // The account key in the block: a secret terrane must not record.
    let block = block.replace(
        "    container_name",
        &format!("    access_key = \"{AZ_KEY}\"\n    container_name"),
    );
    write(d, "main.tf", &config(&block, "one"));
    let o = cloud.terrane(
        d,
        &["init", "-no-color", "-backend-config=key=h/az.tfstate"],
    );
    ok("azurerm terrane_init", &o);
    ok(
        "azurerm terrane_plan_takes_the_key_from_the_block",
        &cloud.terrane(d, &["plan", "-no-color"]),
    );
    let leaks = files_holding(d, AZ_KEY);
    assert!(
        leaks.is_empty(),
        "case azurerm: secret written to {leaks:?}"
    );
    let rec = record(d);
    assert_eq!(rec["backend"]["config"]["key"], "h/az.tfstate", "{rec}");
    let plan = ["plan", "-input=false", "-no-color", "-lock=false"];
    let o = cloud.terraform(&tf, d, &plan);
    assert!(
        !o.stderr.contains("Backend initialization required"),
        "case azurerm terraform_accepts_terranes_record: {}{}",
        o.stdout,
        o.stderr
    );
    // Control: the same record with another hash is refused.
    let mut altered = rec.clone();
    altered["backend"]["hash"] = (rec["backend"]["hash"].as_u64().unwrap() ^ 1).into();
    write(
        d,
        ".terraform/terraform.tfstate",
        &serde_json::to_string(&altered).unwrap(),
    );
    let o = cloud.terraform(&tf, d, &plan);
    assert!(
        o.stderr.contains("Backend initialization required"),
        "case azurerm control_altered_hash_refused: {}{}",
        o.stdout,
        o.stderr
    );
}

/// (lineage, serial) of a state document.
fn lineage_serial(doc: &[u8]) -> (String, u64) {
    let v: Json = serde_json::from_slice(doc).unwrap();
    (
        v["lineage"].as_str().unwrap().to_string(),
        v["serial"].as_u64().unwrap(),
    )
}

/// The state document of the default workspace on `cloud` at `key`, read
/// through terrane's backend client (not the CLI).
fn remote_doc(cloud: &Cloud, key: &str) -> Option<Vec<u8>> {
    if cloud.production {
        return azure_blob(cloud, key);
    }
    let b = cloud.open(key);
    b.client("default").unwrap().get().unwrap().map(|p| p.data)
}

/// Item 2: `-migrate-state` from the local backend to `cloud`, terrane and
/// Terraform taking turns on the state there (each plans no changes after
/// the other's apply; Terraform without an init of its own, on the record
/// terrane wrote), and `-migrate-state` back to local; lineage kept
/// throughout, serials as written.
fn round_trip(cloud: &Cloud, with_terraform: bool) {
    let tf = if with_terraform {
        match terraform() {
            Some(tf) => Some(tf),
            None => return,
        }
    } else {
        None
    };
    let kind = cloud.kind;
    let dir = temp_dir();
    let d = dir.path();
    write(d, "cli.tfrc", "");
    let key = "rt/terraform.tfstate";
    let local = "\"local\" {}";
    write(d, "main.tf", &config(local, "one"));
    ok(
        &format!("{kind} init_local"),
        &cloud.terrane(d, &["init", "-no-color"]),
    );
    ok(
        &format!("{kind} apply_local"),
        &cloud.terrane(d, &["apply", "-auto-approve", "-no-color"]),
    );
    let (lineage, serial) = lineage_serial(&std::fs::read(d.join("terraform.tfstate")).unwrap());

    write(d, "main.tf", &config(&cloud.block(key), "one"));
    let o = cloud.terrane(d, &["init", "-no-color", "-migrate-state"]);
    ok(&format!("{kind} migrate_local_to_{kind}"), &o);
    let doc = remote_doc(cloud, key).expect("the state was copied");
    assert_eq!(
        lineage_serial(&doc),
        (lineage.clone(), serial),
        "case {kind} copied_with_lineage_and_serial"
    );
    let no_changes = ["plan", "-detailed-exitcode", "-input=false", "-no-color"];
    ok(
        &format!("{kind} terrane_plans_no_changes_after_migration"),
        &cloud.terrane(d, &no_changes),
    );
    if let Some(tf) = &tf {
        ok(
            &format!("{kind} terraform_plans_no_changes_on_terranes_init"),
            &cloud.terraform(tf, d, &no_changes),
        );
        write(d, "main.tf", &config(&cloud.block(key), "two"));
        ok(
            &format!("{kind} terraform_applies"),
            &cloud.terraform(
                tf,
                d,
                &["apply", "-auto-approve", "-input=false", "-no-color"],
            ),
        );
        ok(
            &format!("{kind} terrane_plans_no_changes_after_terraform"),
            &cloud.terrane(d, &no_changes),
        );
    }
    write(d, "main.tf", &config(&cloud.block(key), "three"));
    ok(
        &format!("{kind} terrane_applies"),
        &cloud.terrane(d, &["apply", "-auto-approve", "-no-color"]),
    );
    ok(
        &format!("{kind} terrane_plans_no_changes_after_its_apply"),
        &cloud.terrane(d, &no_changes),
    );
    if let Some(tf) = &tf {
        ok(
            &format!("{kind} terraform_plans_no_changes_after_terrane"),
            &cloud.terraform(tf, d, &no_changes),
        );
        let out = cloud.terraform(tf, d, &["output", "-raw", "o"]);
        assert_eq!(
            out.stdout, "three",
            "case {kind} terraform_reads_terranes_output"
        );
    }
    let doc = remote_doc(cloud, key).unwrap();
    let (l, remote_serial) = lineage_serial(&doc);
    assert_eq!(l, lineage, "case {kind} lineage_kept_on_{kind}");
    assert!(remote_serial > serial, "case {kind} serial_advanced");

    write(d, "main.tf", &config(local, "three"));
    let o = cloud.terrane(d, &["init", "-no-color", "-migrate-state"]);
    ok(&format!("{kind} migrate_{kind}_to_local"), &o);
    let back = std::fs::read(d.join("terraform.tfstate")).unwrap();
    assert_eq!(
        lineage_serial(&back),
        (lineage, remote_serial),
        "case {kind} copied_back_with_lineage_and_serial"
    );
    ok(
        &format!("{kind} terrane_plans_no_changes_back_on_local"),
        &cloud.terrane(d, &no_changes),
    );
}

#[test]
fn item2_s3_cli_round_trip_with_terraform() {
    let Some(cloud) = s3() else { return };
    round_trip(&cloud, true);
}

#[test]
fn item2_gcs_cli_round_trip_with_terraform() {
    let Some(cloud) = gcs() else { return };
    round_trip(&cloud, true);
}

/// Azurite at its path-style URL (`TERRANE_AZURE_BLOB_ENDPOINT`), which
/// Terraform's azurerm backend has no setting for: terrane alone, through
/// the CLI (with Terraform: `item2_azurerm_cli_round_trip_with_terraform`).
#[test]
fn item2_azurerm_cli_round_trip() {
    let Some(cloud) = azurerm() else { return };
    round_trip(&cloud, false);
}

/// A storage account Azurite serves besides its development one. Not
/// `devstoreaccount1`: Terraform's Azure SDK leaves that account's name out
/// of the resource it signs (it expects the emulator's path-style URLs,
/// whose path starts with the account), so at a production URL its
/// signature never matches.
const AZ_PROD_ACCOUNT: &str = "terranetest";
/// Base64 of "terrane-throwaway-key-0123456789abcdef".
const AZ_PROD_KEY: &str = "dGVycmFuZS10aHJvd2F3YXkta2V5LTAxMjM0NTY3ODlhYmNkZWY=";

/// A CONNECT proxy on loopback that tunnels `host:443` to 127.0.0.1:`to`
/// and refuses anything else: with `HTTPS_PROXY` pointing at it, both
/// tools reach production URLs on the emulator, TLS end to end (no hosts
/// entry, no port 443). Serves until the test process ends; returns its
/// port.
fn connect_proxy(host: String, to: u16) -> u16 {
    use std::io::{Read, Write};
    use std::net::{Shutdown, TcpListener, TcpStream};
    fn tunnel(mut client: TcpStream, host: &str, to: u16) -> std::io::Result<()> {
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            if client.read(&mut byte)? == 0 || head.len() > 8192 {
                return Ok(());
            }
            head.push(byte[0]);
        }
        let text = String::from_utf8_lossy(&head);
        let wanted = format!("CONNECT {host}:443 ");
        if !text.starts_with(&wanted) {
            return client.write_all(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n");
        }
        let mut upstream = TcpStream::connect(("127.0.0.1", to))?;
        client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")?;
        let (mut c2, mut u2) = (client.try_clone()?, upstream.try_clone()?);
        let up = std::thread::spawn(move || {
            let _ = std::io::copy(&mut c2, &mut u2);
            let _ = u2.shutdown(Shutdown::Write);
        });
        let _ = std::io::copy(&mut upstream, &mut client);
        let _ = client.shutdown(Shutdown::Write);
        let _ = up.join();
        Ok(())
    }
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind the proxy");
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            let host = host.clone();
            std::thread::spawn(move || tunnel(conn, &host, to));
        }
    });
    port
}

/// Azurite over TLS at production URLs: account `terranetest`, its
/// certificate for `terranetest.blob.core.windows.net` signed by a
/// throwaway CA that both tools trust through `SSL_CERT_FILE`, reached
/// through [`connect_proxy`] named by `HTTPS_PROXY`. Terraform's azurerm
/// backend has no endpoint setting: this is how it reaches an emulator.
fn azurerm_production() -> Option<Cloud> {
    let prog = common::installed(".npm-cloud/node_modules/.bin/azurite-blob")?;
    let host = format!("{AZ_PROD_ACCOUNT}.blob.core.windows.net");
    let tls = temp_dir();
    let (ca, cert, key) = terrane_testkit::registry::throwaway_tls(tls.path(), &[&host]);
    let accounts = format!("{AZ_PROD_ACCOUNT}:{AZ_PROD_KEY}");
    let server = common::start(
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
            "--cert",
            cert.to_str().unwrap(),
            "--key",
            key.to_str().unwrap(),
        ],
        &[("AZURITE_ACCOUNTS", &accounts)],
    );
    let proxy = format!(
        "http://127.0.0.1:{}",
        connect_proxy(host.clone(), server.port)
    );
    let env: Vec<(String, String)> = vec![
        ("ARM_ACCESS_KEY".into(), AZ_PROD_KEY.into()),
        ("HTTPS_PROXY".into(), proxy),
        ("SSL_CERT_FILE".into(), ca.display().to_string()),
        ("NO_PROXY".into(), String::new()),
    ];
    let cloud = Cloud {
        _server: Box::new(server),
        _tls: Some(tls),
        production: true,
        kind: "azurerm",
        block: format!(
            "\"azurerm\" {{\n    storage_account_name = \"{AZ_PROD_ACCOUNT}\"\n    container_name = \"tfstate\"\n    key = \"{{key}}\"\n  }}"
        ),
        env,
    };
    azure_python(&cloud, "s.create_container('tfstate')");
    Some(cloud)
}

/// Runs `code` with `s`, a client of Azure's Python SDK for `cloud`'s
/// account (production URL, through its proxy, trusting its CA); returns
/// what it printed.
fn azure_python(cloud: &Cloud, code: &str) -> Vec<u8> {
    let py = terrane_testkit::repo_root().join(".venv-cloud/bin/python");
    let script = format!(
        "import os, sys\n\
         from azure.storage.blob import BlobServiceClient\n\
         s = BlobServiceClient(account_url='https://{AZ_PROD_ACCOUNT}.blob.core.windows.net', \
         credential={{'account_name': '{AZ_PROD_ACCOUNT}', 'account_key': os.environ['ARM_ACCESS_KEY']}}, \
         connection_verify=os.environ['SSL_CERT_FILE'])\n\
         {code}\n"
    );
    let mut cmd = std::process::Command::new(py);
    cmd.arg("-c").arg(script);
    for (k, v) in &cloud.env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("python runs");
    assert!(
        out.status.success(),
        "Azure's Python SDK failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The blob at `key` in the `tfstate` container, read with Azure's Python
/// SDK (not terrane's client).
fn azure_blob(cloud: &Cloud, key: &str) -> Option<Vec<u8>> {
    let out = azure_python(
        cloud,
        &format!(
            "b = s.get_blob_client('tfstate', '{key}')\n\
             if b.exists():\n    sys.stdout.buffer.write(b'Y' + b.download_blob().readall())"
        ),
    );
    out.strip_prefix(b"Y").map(<[u8]>::to_vec)
}

/// Terraform reaches Azurite only at production URLs
/// ([`azurerm_production`]): there both tools take turns on the state.
#[test]
fn item2_azurerm_cli_round_trip_with_terraform() {
    let Some(cloud) = azurerm_production() else {
        return;
    };
    round_trip(&cloud, true);
}

/// Item 3: SIGKILL during a 2,000-resource apply on the s3 backend, uploads
/// held back (`TERRANE_BACKEND_UPLOAD_INTERVAL=1h`) so the local journal
/// alone holds what was acknowledged: every object a reader saw before the
/// kill is in the s3 object after the next run, which finishes the
/// interrupted upload under the lock and plans exactly the rest. The dead
/// run's lock object stays until `force-unlock`, as with Terraform.
#[test]
fn item3_sigkill_during_s3_apply_of_2000_resources_loses_nothing() {
    const N: usize = 2000;
    let Some(cloud) = s3() else { return };
    let key = "crash/terraform.tfstate";
    let dir = temp_dir();
    let d = dir.path();
    write(d, "cli.tfrc", "");
    write(
        d,
        "main.tf",
        &format!(
            "terraform {{\n  backend {}\n}}\nresource \"terraform_data\" \"r\" {{\n  count = {N}\n  input = \"v-${{count.index}}\"\n}}\n",
            cloud.block(key)
        ),
    );
    ok("init", &cloud.terrane(d, &["init", "-no-color"]));
    let mut cmd = isolated(env!("CARGO_BIN_EXE_terrane"), d);
    cmd.args(["apply", "-auto-approve", "-no-color"])
        .env("TF_CLI_CONFIG_FILE", d.join("cli.tfrc"))
        .env("TERRANE_BACKEND_UPLOAD_INTERVAL", "1h")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    for (k, v) in &cloud.env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    // A reader as terrane's own commands read: the remote object plus the
    // journal the apply keeps in the data directory.
    let reader = || {
        let store = terrane_backend::BackendStore::new(
            cloud.open(key),
            d.join(".terraform/terrane-journal"),
        );
        terrane_state::StateStore::snapshot(&store, "default").ok()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(180);
    let seen = loop {
        let s = reader();
        if s.as_ref().is_some_and(|s| s.object_count() >= 200) {
            break s.unwrap();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "case apply_progressed"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let status = child.wait().unwrap();
    assert!(status.code().is_none(), "case killed: {status}");
    assert!(
        remote_doc(&cloud, key).is_none(),
        "case nothing_uploaded_before_the_kill (the journal alone holds the objects)"
    );
    // The killed run's lock object stays, as Terraform's would: the next
    // run stops naming it, and leaves the journal and the bucket alone.
    let journal = d.join(".terraform/terrane-journal/default.journal");
    let blocked = cloud.terrane(d, &["plan", "-no-color"]);
    assert_eq!(
        blocked.code, 1,
        "case dead_lock_refused: {}",
        blocked.stdout
    );
    let id = blocked
        .stderr
        .lines()
        .find_map(|l| l.trim().strip_prefix("ID:"))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| panic!("case dead_lock_named: {}", blocked.stderr));
    assert!(
        blocked.stderr.contains("OperationTypeApply") && journal.exists(),
        "case dead_lock_refused_journal_kept: {}",
        blocked.stderr
    );
    assert!(
        remote_doc(&cloud, key).is_none(),
        "case dead_lock_refused_nothing_written"
    );
    ok(
        "force_unlock",
        &cloud.terrane(d, &["force-unlock", "-force", &id]),
    );
    let plan = cloud.terrane(d, &["plan", "-no-color"]);
    assert_eq!(plan.code, 0, "case plan_after_kill: {}", plan.stderr);
    let doc = remote_doc(&cloud, key).expect("case recovered_upload");
    recovery::check_recovered(&doc, &seen, &plan.stdout, d, N);
    // The rest applies, and the object holds all of it.
    ok(
        "apply_the_rest",
        &cloud.terrane(d, &["apply", "-auto-approve", "-no-color"]),
    );
    let state: Json = serde_json::from_slice(&remote_doc(&cloud, key).unwrap()).unwrap();
    assert_eq!(
        state["resources"][0]["instances"].as_array().unwrap().len(),
        N,
        "case all_applied"
    );
}

/// A place the migration chain keeps the state in.
#[derive(Clone, Copy)]
enum Place<'a> {
    /// terrane's SQLite store in the working directory.
    Sqlite(&'a Path),
    /// The s3 backend, the state at this key.
    S3(&'a str),
    /// terrane's PostgreSQL store: (url, schema).
    Pg(&'a str, &'a str),
}

/// A lock on the default workspace of a place, held by this process.
enum Held {
    Store(Box<dyn terrane_state::Run>),
    Remote(Box<dyn terrane_backend::RemoteClient>, String),
}

impl Held {
    fn release(self) {
        match self {
            Held::Store(run) => run.finish().unwrap(),
            Held::Remote(client, id) => client.unlock(&id).unwrap(),
        }
    }
}

fn store_at(place: Place<'_>) -> Box<dyn terrane_state::StateStore> {
    match place {
        Place::Sqlite(dir) => Box::new(
            terrane_state::SqliteStore::open(&dir.join(".terrane/state.db"), None).unwrap(),
        ),
        Place::Pg(url, schema) => {
            Box::new(terrane_state::PgStore::open(url, schema, None).unwrap())
        }
        Place::S3(_) => unreachable!("s3 is a backend"),
    }
}

/// Takes the default workspace's lock at `place` as another process
/// would; returns it and the lock's ID (which the holder's details show).
fn hold(cloud: &Cloud, place: Place<'_>) -> Result<(Held, String), String> {
    let info = terrane_state::LockInfo::new("OperationTypeApply", "held by the chain test");
    let id = info.id.clone();
    match place {
        Place::S3(key) => {
            let client = cloud.open(key).client("default").unwrap();
            let lock = terrane_backend::RemoteLock::from_info(&info, key);
            let got = client.lock(&lock).map_err(|e| e.to_string())?;
            Ok((Held::Remote(client, got), id))
        }
        _ => {
            let run = store_at(place)
                .lock("default", info)
                .map_err(|e| e.to_string())?;
            Ok((Held::Store(run), id))
        }
    }
}

/// (workspace, lineage, serial) of every workspace holding a state at
/// `place`, read without the CLI.
fn states_at(cloud: &Cloud, place: Place<'_>) -> Vec<(String, String, u64)> {
    let mut out = Vec::new();
    match place {
        Place::S3(key) => {
            let b = cloud.open(key);
            for ws in b.workspaces().unwrap() {
                if let Some(p) = b.client(&ws).unwrap().get().unwrap() {
                    let (l, s) = lineage_serial(&p.data);
                    out.push((ws, l, s));
                }
            }
        }
        Place::Sqlite(dir) if !dir.join(".terrane/state.db").exists() => {}
        _ => {
            let store = store_at(place);
            for ws in store.workspaces().unwrap() {
                let snap = store.snapshot(&ws).unwrap();
                if snap.serial > 0 {
                    out.push((ws, snap.lineage, snap.serial));
                }
            }
        }
    }
    out
}

/// Issue 17: the state moved SQLite -> s3 -> PostgreSQL -> s3 -> SQLite
/// with `init -migrate-state` through the real CLI, two workspaces with
/// different serials, a sensitive output. At each hop: while another
/// process holds the source's lock the migration fails naming that lock
/// and copies nothing; once it is released the migration copies every
/// workspace with lineage and serial kept, gives the source's lock back,
/// and terrane plans no changes in either workspace at the destination.
#[test]
fn item4_migration_chain_sqlite_s3_postgres_and_back() {
    let Some(cloud) = s3() else { return };
    let Some(url) = terrane_testkit::pg_url() else {
        return;
    };
    let schema = format!("chain_{}", std::process::id());
    let dir = temp_dir();
    let d = dir.path();
    write(d, "cli.tfrc", "");
    let body = "resource \"terraform_data\" \"d\" {\n  input = terraform.workspace\n}\noutput \"ws\" {\n  value = terraform.workspace\n}\noutput \"secret\" {\n  value     = \"s3cr3t-chain\"\n  sensitive = true\n}\n";
    write(d, "main.tf", body);
    let run = |args: &[&str], env: &[(&str, &str)]| cloud.terrane_env(d, args, env);
    ok("init_sqlite", &run(&["init", "-no-color"], &[]));
    ok(
        "apply_default",
        &run(&["apply", "-auto-approve", "-no-color"], &[]),
    );
    ok("new_staging", &run(&["workspace", "new", "staging"], &[]));
    ok(
        "apply_staging",
        &run(&["apply", "-auto-approve", "-no-color"], &[]),
    );
    let replace = [
        "apply",
        "-auto-approve",
        "-no-color",
        "-replace=terraform_data.d",
    ];
    ok("replace_staging", &run(&replace, &[]));
    let want = states_at(&cloud, Place::Sqlite(d));
    assert_eq!(want.len(), 2, "case two_workspaces {want:?}");
    assert_ne!(want[0].2, want[1].2, "case different_serials {want:?}");

    let s3_block = |key: &str| format!("terraform {{\n  backend {}\n}}\n", cloud.block(key));
    let pg_block =
        format!("terraform {{\n  state \"postgres\" {{\n    schema = \"{schema}\"\n  }}\n}}\n");
    let pg_url = [("TERRANE_PG_URL", url.as_str())];
    let pg_env = [
        ("TERRANE_PG_URL", url.as_str()),
        ("TERRANE_PG_SCHEMA", schema.as_str()),
    ];
    struct Hop<'a> {
        name: &'a str,
        from: Place<'a>,
        to: Place<'a>,
        header: String,
        env: &'a [(&'a str, &'a str)],
    }
    let hops = [
        Hop {
            name: "sqlite_to_s3",
            from: Place::Sqlite(d),
            to: Place::S3("chain/a.tfstate"),
            header: s3_block("chain/a.tfstate"),
            env: &[],
        },
        Hop {
            name: "s3_to_postgres",
            from: Place::S3("chain/a.tfstate"),
            to: Place::Pg(&url, &schema),
            header: pg_block,
            env: &pg_url,
        },
        Hop {
            // The PostgreSQL store named by the environment, as terrane
            // finds it without a state block.
            name: "postgres_to_s3",
            from: Place::Pg(&url, &schema),
            to: Place::S3("chain/b.tfstate"),
            header: s3_block("chain/b.tfstate"),
            env: &pg_env,
        },
        Hop {
            name: "s3_to_sqlite",
            from: Place::S3("chain/b.tfstate"),
            to: Place::Sqlite(d),
            header: String::new(),
            env: &[],
        },
    ];
    let migrate = ["init", "-migrate-state", "-input=false", "-no-color"];
    for hop in hops {
        let case = hop.name;
        if matches!(hop.to, Place::Sqlite(_)) {
            // A fresh store: what is there after the hop was copied.
            std::fs::remove_file(d.join(".terrane/state.db")).unwrap();
        }
        write(d, "main.tf", &format!("{}{body}", hop.header));
        let (held, id) = hold(&cloud, hop.from).unwrap_or_else(|e| panic!("case {case}: {e}"));
        let o = run(&migrate, hop.env);
        assert_eq!(
            o.code, 1,
            "case {case}_while_locked: {}{}",
            o.stdout, o.stderr
        );
        assert!(
            o.stderr.contains("already locked") && o.stderr.contains(&id),
            "case {case}_names_the_lock: {}",
            o.stderr
        );
        assert_eq!(
            states_at(&cloud, hop.to),
            vec![],
            "case {case}_nothing_copied_while_locked"
        );
        held.release();
        let o = run(&migrate, hop.env);
        ok(&format!("{case}_migrates"), &o);
        assert!(
            o.stdout.contains("workspace(s) default, staging"),
            "case {case}_every_workspace: {}",
            o.stdout
        );
        assert_eq!(
            states_at(&cloud, hop.to),
            want,
            "case {case}_lineage_and_serial_kept"
        );
        let (again, _) = hold(&cloud, hop.from)
            .unwrap_or_else(|e| panic!("case {case}_source_lock_given_back: {e}"));
        again.release();
        let list = run(&["workspace", "list"], hop.env);
        ok(&format!("{case}_list"), &list);
        assert!(
            list.stdout.contains("default") && list.stdout.contains("staging"),
            "case {case}_workspaces_listed: {}",
            list.stdout
        );
        for (ws, lineage, serial) in &want {
            ok(
                &format!("{case}_select_{ws}"),
                &run(&["workspace", "select", ws], hop.env),
            );
            let pulled = run(&["state", "pull"], hop.env);
            ok(&format!("{case}_pull_{ws}"), &pulled);
            assert_eq!(
                lineage_serial(pulled.stdout.as_bytes()),
                (lineage.clone(), *serial),
                "case {case}_pulled_{ws}"
            );
            assert!(
                pulled.stdout.contains("s3cr3t-chain"),
                "case {case}_sensitive_output_kept_{ws}"
            );
            let plan = ["plan", "-detailed-exitcode", "-input=false", "-no-color"];
            ok(&format!("{case}_no_changes_{ws}"), &run(&plan, hop.env));
        }
    }
    let mut c = terrane_state::pg_connect(&url).unwrap();
    let _ = c.batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"));
}

/// Issue 17: a lock held by one tool blocks the other, which names the
/// holder. Each tool in turn applies a replacement whose `local-exec`
/// provisioner marks a file and then sleeps, so the lock is held; the other
/// tool's plan meanwhile fails with the lock's details (Terraform's
/// "Lock Info" block: ID, operation, who); then the holder finishes.
/// `turns`: (holder, blocked) pairs.
fn locks_block_each_other(cloud: &Cloud, turns: &[(&str, &str)]) {
    let Some(tf) = terraform() else { return };
    let kind = cloud.kind;
    let dir = temp_dir();
    let d = dir.path();
    write(d, "cli.tfrc", "");
    let key = "locks/terraform.tfstate";
    let marker = d.join("started");
    let config_for = |holder: &str| {
        format!(
            "{}resource \"terraform_data\" \"sleep\" {{\n  triggers_replace = \"{holder}\"\n  provisioner \"local-exec\" {{\n    command = \"touch {} && sleep 8\"\n  }}\n}}\n",
            config(&cloud.block(key), "one"),
            marker.display()
        )
    };
    write(d, "main.tf", &config_for("none"));
    let apply = ["apply", "-auto-approve", "-input=false", "-no-color"];
    ok(
        &format!("{kind} terraform_init"),
        &cloud.terraform(&tf, d, &["init", "-input=false", "-no-color"]),
    );
    let _ = std::fs::remove_file(&marker);
    ok(&format!("{kind} terrane_apply"), &cloud.terrane(d, &apply));
    for &(holder, blocked) in turns {
        let case = format!("{kind} {holder}_blocks_{blocked}");
        write(d, "main.tf", &config_for(holder));
        let _ = std::fs::remove_file(&marker);
        let mut cmd = if holder == "terrane" {
            let mut c = isolated(env!("CARGO_BIN_EXE_terrane"), d);
            c.args(apply);
            c
        } else {
            let mut c = std::process::Command::new(&tf.program);
            c.args(apply).current_dir(d);
            c
        };
        cmd.env("TF_CLI_CONFIG_FILE", d.join("cli.tfrc"))
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        for (k, v) in &cloud.env {
            cmd.env(k, v);
        }
        let child = cmd.spawn().unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        while !marker.exists() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        assert!(marker.exists(), "case {case}: the holder never started");
        let plan = ["plan", "-input=false", "-no-color"];
        let o = if blocked == "terrane" {
            cloud.terrane(d, &plan)
        } else {
            cloud.terraform(&tf, d, &plan)
        };
        let held: Out = child.wait_with_output().unwrap().into();
        ok(&format!("{case}: the holder's apply"), &held);
        assert_eq!(o.code, 1, "case {case}: {}{}", o.stdout, o.stderr);
        let text = terrane_testkit::unwrapped(&o.stderr);
        // pg's advisory locks carry no information: both tools can only
        // say the workspace is locked (Terraform shows its own attempt).
        let names_holder = kind != "pg";
        // Terraform's s3 message is the refused conditional write
        // (PreconditionFailed) and the lock's details, without the word
        // "locked" when its PutObject of the lock file is what failed.
        let says_locked = text.contains("locked") || (blocked == "terraform" && names_holder);
        assert!(
            text.contains("Error acquiring the state lock")
                && says_locked
                && (!names_holder
                    || (text.contains("Lock Info:") && text.contains("OperationTypeApply"))),
            "case {case}: the holder's details\n{}",
            o.stderr
        );
    }
}

const BOTH_WAYS: &[(&str, &str)] = &[("terrane", "terraform"), ("terraform", "terrane")];

#[test]
fn item2_s3_locks_block_the_other_tool() {
    let Some(cloud) = s3() else { return };
    locks_block_each_other(&cloud, BOTH_WAYS);
}

/// Terraform's http backend on the testkit's state server (GitLab's
/// protocol: LOCK/UNLOCK at the lock address).
#[test]
fn item2_http_locks_block_the_other_tool() {
    let server = terrane_testkit::httpstate::HttpStateServer::start();
    let block = format!(
        "\"http\" {{\n    address        = \"{a}\"\n    lock_address   = \"{l}\"\n    unlock_address = \"{l}\"\n  }}",
        a = server.address(),
        l = server.lock_address()
    );
    let cloud = Cloud {
        _server: Box::new(server),
        _tls: None,
        production: false,
        kind: "http",
        block,
        env: Vec::new(),
    };
    locks_block_each_other(&cloud, BOTH_WAYS);
}

/// Terraform's pg backend (its tables and advisory locks) on the shared
/// PostgreSQL test server, the connection string in `PG_CONN_STR`.
#[test]
fn item2_pg_locks_block_the_other_tool() {
    let Some(url) = terrane_testkit::pg_url() else {
        return;
    };
    let schema = format!("tf_locks_{}", std::process::id());
    let cloud = Cloud {
        _server: Box::new(()),
        _tls: None,
        production: false,
        kind: "pg",
        block: format!("\"pg\" {{\n    schema_name = \"{schema}\"\n  }}"),
        env: vec![("PG_CONN_STR".into(), url.clone())],
    };
    locks_block_each_other(&cloud, BOTH_WAYS);
    let mut c = terrane_state::pg_connect(&url).unwrap();
    let _ = c.batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"));
}

/// One way only: the GCS emulator ignores `ifGenerationMatch=0`, the
/// precondition Terraform's lock relies on alone, so Terraform takes a lock
/// terrane holds there (real GCS refuses it). terrane also reads the lock
/// object first, so it is blocked by Terraform's on the emulator too.
#[test]
fn item2_gcs_locks_block_the_other_tool() {
    let Some(cloud) = gcs() else { return };
    locks_block_each_other(&cloud, &[("terraform", "terrane")]);
}

#[test]
fn item2_azurerm_locks_block_the_other_tool() {
    let Some(cloud) = azurerm_production() else {
        return;
    };
    locks_block_each_other(&cloud, BOTH_WAYS);
}

/// The wrong-credentials (or wrong-place) variant of a backend for
/// [`bad_input_is_refused_and_kept`].
struct Wrong {
    case: &'static str,
    /// Replaces the block (after `init` with it, which must fail there or
    /// leave `plan` to fail).
    block: Option<String>,
    /// Added to the environment of every run.
    env: Vec<(&'static str, String)>,
    /// What the error must say.
    want: &'static str,
    /// What it must not say.
    secret: Option<String>,
}

/// Issue 17, bad input on one backend, through the CLI: a corrupt object, a
/// state written by a newer Terraform, a newer state format, a lock left by
/// a killed run, and wrong credentials or a wrong place each stop `plan`
/// and `apply` with an error that names the state's place (or the holder),
/// and the remote object is left exactly as it was.
fn bad_input_is_refused_and_kept(cloud: &Cloud, wrong: Wrong) {
    let kind = cloud.kind;
    let key = "bad/terraform.tfstate";
    let dir = temp_dir();
    let d = dir.path();
    write(d, "cli.tfrc", "");
    // The gate holds the apply of the killed-run case open: a local-exec
    // provisioner that waits for a file the test never writes.
    let gate = d.join("gate.waiting");
    let main = format!(
        "{}resource \"terraform_data\" \"gate\" {{\n  provisioner \"local-exec\" {{\n    command = \"touch {} && sleep 300\"\n  }}\n}}\n",
        config(&cloud.block(key), "one"),
        gate.display()
    );
    write(d, "main.tf", &main);
    ok(
        &format!("{kind} init"),
        &cloud.terrane(d, &["init", "-input=false", "-no-color"]),
    );
    let client = cloud.open(key).client("default").unwrap();
    let place = client.path();
    let stored = || client.get().unwrap().map(|p| p.data);
    let plan = ["plan", "-input=false", "-no-color"];
    let apply = ["apply", "-auto-approve", "-input=false", "-no-color"];

    let newer = br#"{"version": 4, "terraform_version": "9.1.0", "serial": 3, "lineage": "l-newer", "outputs": {}, "resources": []}"#;
    let format5 =
        br#"{"version": 5, "terraform_version": "1.0.0", "serial": 3, "lineage": "l-five"}"#;
    let docs: [(&str, &[u8], &str); 4] = [
        (
            "corrupt_object",
            b"{\"version\": 4, \"serial\": ",
            "not valid JSON",
        ),
        ("not_a_state", b"[1, 2]", "not a usable Terraform state"),
        ("newer_terraform", newer, "written by Terraform v9.1.0"),
        (
            "newer_format",
            format5,
            "unsupported state format version 5",
        ),
    ];
    for (name, doc, want) in docs {
        let case = format!("{kind} {name}");
        client.put(doc).unwrap();
        for args in [&plan[..], &apply[..]] {
            let o = cloud.terrane(d, args);
            let text = terrane_testkit::unwrapped(&o.stderr);
            assert_eq!(
                o.code, 1,
                "case {case} {}: {}{}",
                args[0], o.stdout, o.stderr
            );
            assert!(
                text.contains(want) && text.contains(&place),
                "case {case} {}: the error names the problem and {place}:\n{}",
                args[0],
                o.stderr
            );
        }
        assert_eq!(
            stored().as_deref(),
            Some(doc),
            "case {case}: the object is left as it was"
        );
        assert!(!gate.exists(), "case {case}: nothing was applied");
        // And no lock was left behind by the refused runs.
        let id = client
            .lock(&common::terrane_lock("probe"))
            .unwrap_or_else(|e| panic!("case {case} no_lock_left: {e}"));
        client.unlock(&id).unwrap();
    }

    // A lock left by a run that was killed: refused naming the holder,
    // the object untouched, until `force-unlock` (pg's advisory locks die
    // with the session, so there the next run goes ahead, as Terraform's).
    let case = format!("{kind} dead_holder_lock");
    let before = common::state_doc("l-dead", 7, "kept");
    client.put(&before).unwrap();
    let mut cmd = isolated(env!("CARGO_BIN_EXE_terrane"), d);
    cmd.args(apply)
        .env("TF_CLI_CONFIG_FILE", d.join("cli.tfrc"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    for (k, v) in &cloud.env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while !gate.exists() {
        assert!(
            std::time::Instant::now() < deadline && child.try_wait().unwrap().is_none(),
            "case {case}: the apply never reached the gate"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let o = cloud.terrane(d, &plan);
    if kind == "pg" {
        assert_eq!(
            o.code, 0,
            "case {case} released_with_the_session: {}{}",
            o.stdout, o.stderr
        );
    } else {
        let text = terrane_testkit::unwrapped(&o.stderr);
        assert_eq!(o.code, 1, "case {case} refused: {}{}", o.stdout, o.stderr);
        let id = o
            .stderr
            .lines()
            .find_map(|l| l.trim().strip_prefix("ID:"))
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|| panic!("case {case} holder_named: {}", o.stderr));
        assert!(
            text.contains("Error acquiring the state lock")
                && text.contains("OperationTypeApply")
                && text.contains("force-unlock"),
            "case {case} holder_details: {}",
            o.stderr
        );
        assert_eq!(
            stored().as_deref(),
            Some(&before[..]),
            "case {case}: the object is left as it was"
        );
        ok(
            &format!("{case} force_unlock"),
            &cloud.terrane(d, &["force-unlock", "-force", &id]),
        );
        let o = cloud.terrane(d, &plan);
        assert_eq!(
            o.code, 0,
            "case {case} plan_after_force_unlock: {}{}",
            o.stdout, o.stderr
        );
    }
    let after_plan = stored().unwrap();
    assert_eq!(
        lineage_serial(&after_plan).0,
        "l-dead",
        "case {case}: lineage kept"
    );

    // Wrong credentials or a wrong place: an error saying so, no secret
    // shown, nothing written anywhere.
    let case = format!("{kind} {}", wrong.case);
    let extra: Vec<(&str, &str)> = wrong.env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let o = match &wrong.block {
        Some(block) => {
            write(d, "main.tf", &config(block, "one"));
            // As Terraform's, init lists the workspaces there and fails.
            let init = cloud.terrane_env(
                d,
                &["init", "-input=false", "-no-color", "-reconfigure"],
                &extra,
            );
            assert!(
                init.stderr.contains("Failed to get existing workspaces"),
                "case {case} init_fails: {}{}",
                init.stdout,
                init.stderr
            );
            init
        }
        None => cloud.terrane_env(d, &plan, &extra),
    };
    let text = terrane_testkit::unwrapped(&o.stderr);
    assert_eq!(o.code, 1, "case {case}: {}{}", o.stdout, o.stderr);
    assert!(
        text.contains(wrong.want),
        "case {case} says_why: {}",
        o.stderr
    );
    eprintln!("{case}: {}", text.trim());
    if let Some(secret) = &wrong.secret {
        assert!(
            !format!("{}{}", o.stdout, o.stderr).contains(secret.as_str()),
            "case {case} secret_not_shown: {}",
            o.stderr
        );
    }
    assert_eq!(
        stored().as_deref(),
        Some(&after_plan[..]),
        "case {case}: the object is left as it was"
    );
    let listing = |p: &Path| {
        std::fs::read_dir(p)
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
    };
    assert!(
        !d.join("terraform.tfstate").exists() && listing(&d.join(".terrane")).is_empty(),
        "case {case}: no local state written instead: {:?} {:?}",
        listing(d),
        listing(&d.join(".terrane"))
    );
}

/// The block of `cloud` (s3 or gcs) naming a bucket that does not exist.
fn wrong_bucket(cloud: &Cloud) -> Wrong {
    let block = cloud.block("bad/terraform.tfstate").replace(
        &format!("bucket = \"{BUCKET}\""),
        "bucket = \"no-such-bucket\"",
    );
    Wrong {
        case: "wrong_bucket",
        block: Some(block),
        env: Vec::new(),
        want: "no-such-bucket",
        secret: None,
    }
}

#[test]
fn item_bad_input_s3() {
    let Some(cloud) = s3() else { return };
    bad_input_is_refused_and_kept(&cloud, wrong_bucket(&cloud));
}

#[test]
fn item_bad_input_gcs() {
    let Some(cloud) = gcs() else { return };
    bad_input_is_refused_and_kept(&cloud, wrong_bucket(&cloud));
}

#[test]
fn item_bad_input_azurerm() {
    let Some(cloud) = azurerm() else { return };
    // Another well-formed key: Azurite checks the shared-key signature.
    let key = "d3JvbmctYWNjb3VudC1rZXktZm9yLXRoZS1iYWQtaW5wdXQtdGVzdHMtb25seQ==";
    let wrong = Wrong {
        case: "wrong_credentials",
        block: None,
        env: vec![("ARM_ACCESS_KEY", key.into())],
        want: "403",
        secret: Some(key.into()),
    };
    bad_input_is_refused_and_kept(&cloud, wrong);
}

#[test]
fn item_bad_input_http() {
    let server = terrane_testkit::httpstate::HttpStateServer::start();
    server.stored.lock().unwrap().auth = Some("tf:right-password".into());
    let block = format!(
        "\"http\" {{\n    address        = \"{a}\"\n    lock_address   = \"{l}\"\n    unlock_address = \"{l}\"\n    username       = \"tf\"\n  }}",
        a = server.address(),
        l = server.lock_address()
    );
    let cloud = Cloud {
        _server: Box::new(server),
        _tls: None,
        production: false,
        kind: "http",
        block: block.clone(),
        env: vec![("TF_HTTP_PASSWORD".into(), "right-password".into())],
    };
    let wrong = Wrong {
        case: "wrong_credentials",
        block: None,
        env: vec![("TF_HTTP_PASSWORD", "hunter2-wrong".into())],
        want: "invalid credentials",
        secret: Some("hunter2-wrong".into()),
    };
    bad_input_is_refused_and_kept(&cloud, wrong);
}

#[test]
fn item_bad_input_pg() {
    let Some(admin) = terrane_testkit::pg_url() else {
        return;
    };
    let tag = std::process::id();
    let (schema, role) = (format!("tf_bad_{tag}"), format!("tf_bad_user_{tag}"));
    let mut c = terrane_state::pg_connect(&admin).unwrap();
    c.batch_execute(&format!(
        "DROP ROLE IF EXISTS {role}; CREATE ROLE {role} LOGIN SUPERUSER IN ROLE terrane_password PASSWORD 'right-password'"
    ))
    .unwrap();
    let url_with = |password: &str| {
        let (scheme_user, rest) = admin.split_once('@').unwrap();
        let scheme = scheme_user.split("//").next().unwrap();
        format!("{scheme}//{role}:{password}@{rest}")
    };
    let cloud = Cloud {
        _server: Box::new(()),
        _tls: None,
        production: false,
        kind: "pg",
        block: format!("\"pg\" {{\n    schema_name = \"{schema}\"\n  }}"),
        env: vec![("PG_CONN_STR".into(), url_with("right-password"))],
    };
    let wrong = Wrong {
        case: "wrong_credentials",
        block: None,
        env: vec![("PG_CONN_STR", url_with("hunter2-wrong"))],
        want: "password authentication failed",
        secret: Some("hunter2-wrong".into()),
    };
    bad_input_is_refused_and_kept(&cloud, wrong);
    let _ = c.batch_execute(&format!(
        "DROP SCHEMA IF EXISTS {schema} CASCADE; DROP ROLE IF EXISTS {role}"
    ));
}
