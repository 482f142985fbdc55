//! terrane's store over Terraform's backends (issue 17 items 1, 2 and 4),
//! against real files, a real HTTP state server on loopback, the real
//! PostgreSQL test server, and a real process killed with SIGKILL.

use std::io::BufRead;
use std::path::Path;
use std::time::Duration;
use terrane_backend::{BackendStore, Settings};
use terrane_state::{
    Change, InstanceAddr, LockInfo, ObjectState, OutputState, StateError, StateStore,
};
use terrane_testkit::httpstate::HttpStateServer;

const PROVIDER: &str = "provider[\"terraform.io/builtin/terraform\"]";

fn set(n: usize) -> Change {
    Change::SetObject {
        addr: InstanceAddr::parse(&format!("terraform_data.d{n}")).unwrap(),
        deposed: None,
        provider: PROVIDER.into(),
        object: ObjectState {
            attributes: serde_json::json!({ "id": format!("id-{n}"), "input": n }).into(),
            ..Default::default()
        },
    }
}

fn secret_output() -> Change {
    Change::SetOutput {
        name: "token".into(),
        output: OutputState {
            value: serde_json::json!("s3cr3t"),
            ty: serde_json::json!("string"),
            sensitive: true,
        },
    }
}

fn settings(pairs: &[(&str, &str)]) -> Settings {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), serde_json::Value::String(v.to_string())))
        .collect()
}

fn local_store(dir: &Path, every: Duration) -> BackendStore {
    let backend = terrane_backend::local::LocalBackend::new(&Settings::new(), dir).unwrap();
    BackendStore::new(Box::new(backend), dir.join(".terraform/terrane-journal")).upload_every(every)
}

fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn item2_local_backend_writes_terraforms_layout() {
    let dir = terrane_testkit::temp_dir();
    let store = local_store(dir.path(), Duration::from_secs(3600));
    let mut run = store
        .lock("default", LockInfo::new("OperationTypeApply", ""))
        .unwrap();
    let lock_info = dir.path().join(".terraform.tfstate.lock.info");
    let holder = read_json(&lock_info);
    assert_eq!(
        holder["ID"],
        run.lock_info().id.as_str(),
        "case lock_info_file"
    );
    for n in 0..3 {
        run.persist(&[set(n)]).unwrap();
    }
    run.persist(&[secret_output()]).unwrap();
    run.finish().unwrap();
    let state_file = dir.path().join("terraform.tfstate");
    let state = read_json(&state_file);
    assert_eq!(state["version"], 4, "case v4");
    assert_eq!(state["serial"], 4, "case serial_per_change_set");
    assert_eq!(
        state["resources"].as_array().unwrap().len(),
        3,
        "case objects"
    );
    assert_eq!(
        state["outputs"]["token"]["sensitive"], true,
        "case sensitive_output"
    );
    assert_eq!(mode(&state_file), 0o600, "case state_file_0600");
    assert!(!lock_info.exists(), "case lock_info_removed");
    assert!(
        !dir.path()
            .join(".terraform/terrane-journal/default.journal")
            .exists(),
        "case journal_removed_after_upload"
    );
    // A second run backs the state up before its first write.
    let mut run = store
        .lock("default", LockInfo::new("OperationTypeApply", ""))
        .unwrap();
    run.persist(&[Change::RemoveObject {
        addr: InstanceAddr::parse("terraform_data.d0").unwrap(),
        deposed: None,
    }])
    .unwrap();
    run.finish().unwrap();
    let backup = read_json(&dir.path().join("terraform.tfstate.backup"));
    assert_eq!(backup["serial"], 4, "case backup_holds_previous_state");
    let state = read_json(&state_file);
    assert_eq!(
        state["resources"].as_array().unwrap().len(),
        2,
        "case removed"
    );
    assert_eq!(
        store.snapshot("default").unwrap().lineage,
        state["lineage"].as_str().unwrap(),
        "case lineage_read_back"
    );
    // Workspaces: terraform.tfstate.d/NAME/terraform.tfstate.
    let mut run = store
        .lock("dev", LockInfo::new("OperationTypeApply", ""))
        .unwrap();
    run.persist(&[set(9)]).unwrap();
    run.finish().unwrap();
    assert!(
        dir.path()
            .join("terraform.tfstate.d/dev/terraform.tfstate")
            .exists(),
        "case workspace_file"
    );
    assert_eq!(
        store.workspaces().unwrap(),
        ["default", "dev"],
        "case workspaces"
    );
    store.delete_workspace("dev").unwrap();
    assert_eq!(store.workspaces().unwrap(), ["default"], "case deleted");
}

#[test]
fn item2_local_lock_blocks_the_other_holder_naming_it() {
    let dir = terrane_testkit::temp_dir();
    let a = local_store(dir.path(), Duration::ZERO);
    let b = local_store(dir.path(), Duration::ZERO);
    let held = a
        .lock("default", LockInfo::new("OperationTypeApply", ""))
        .unwrap();
    match b.lock("default", LockInfo::new("OperationTypePlan", "")) {
        Err(StateError::Locked { holder, .. }) => {
            assert_eq!(holder.id, held.lock_info().id, "case holder_id");
            assert_eq!(
                holder.operation, "OperationTypeApply",
                "case holder_operation"
            );
            assert_eq!(holder.who, held.lock_info().who, "case holder_who");
        }
        Err(e) => panic!("case blocked: {e}"),
        Ok(_) => panic!("case blocked: the second lock was granted"),
    }
    held.finish().unwrap();
    // The lock is an open-file-description lock: a child process another
    // test of this binary forks at that moment holds a copy of the file
    // until it execs (the copy is close-on-exec), so the release may show
    // a moment late. It must show.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let again = loop {
        match b.lock("default", LockInfo::new("OperationTypePlan", "")) {
            Err(StateError::Locked { .. }) if std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20))
            }
            other => break other,
        }
    };
    assert!(again.is_ok(), "case released: {:?}", again.err());
}

fn check_refused(name: &str, dir: &Path, content: &[u8], want: &str) {
    let state_file = dir.join("terraform.tfstate");
    std::fs::write(&state_file, content).unwrap();
    let store = local_store(dir, Duration::ZERO);
    let read = store.snapshot("default").map(|_| ());
    let locked = store
        .lock("default", LockInfo::new("OperationTypeApply", ""))
        .map(|_| ());
    for (what, got) in [("read", read), ("lock", locked)] {
        let e = got.expect_err(&format!("case {name} {what}: refused"));
        let text = e.to_string();
        assert!(text.contains(want), "case {name} {what}: {text}");
        assert!(
            text.contains("terraform.tfstate"),
            "case {name} {what}: names the object: {text}"
        );
    }
    assert_eq!(
        std::fs::read(&state_file).unwrap(),
        content,
        "case {name}: nothing overwritten"
    );
    assert!(
        !dir.join("terraform.tfstate.backup").exists(),
        "case {name}: no backup written"
    );
}

#[test]
fn item1_bad_remote_state_is_refused_and_kept() {
    let newer = br#"{"version": 4, "terraform_version": "9.1.0", "serial": 3, "lineage": "x", "outputs": {}, "resources": []}"#;
    let format5 = br#"{"version": 5, "terraform_version": "1.0.0", "serial": 3, "lineage": "x"}"#;
    let cases: [(&str, &[u8], &str); 4] = [
        ("newer_terraform", newer, "written by Terraform v9.1.0"),
        (
            "corrupt_json",
            b"{\"version\": 4, \"serial\": ",
            "not valid JSON",
        ),
        (
            "newer_format",
            format5,
            "unsupported state format version 5",
        ),
        ("not_a_state", b"[1, 2]", "not a usable Terraform state"),
    ];
    for (name, content, want) in cases {
        let dir = terrane_testkit::temp_dir();
        check_refused(name, dir.path(), content, want);
    }
}

/// The child of `item4_sigkill_after_ack_loses_nothing`: persists change
/// sets without uploading, says how many were acknowledged, and waits to
/// be killed.
fn sigkill_child(dir: &Path, count: usize) {
    let store = local_store(dir, Duration::from_secs(3600));
    let mut run = store
        .lock("default", LockInfo::new("OperationTypeApply", ""))
        .unwrap();
    for n in 0..count {
        run.persist(&[set(n)]).unwrap();
    }
    println!("acknowledged {count}");
    std::io::Write::flush(&mut std::io::stdout()).unwrap();
    std::thread::sleep(Duration::from_secs(600));
}

#[test]
fn item4_sigkill_after_ack_loses_nothing() {
    const COUNT: usize = 200;
    if let Ok(dir) = std::env::var("TERRANE_BACKEND_SIGKILL_CHILD") {
        sigkill_child(Path::new(&dir), COUNT);
        return;
    }
    let dir = terrane_testkit::temp_dir();
    // The previous state, uploaded: the child's run starts from it.
    let store = local_store(dir.path(), Duration::ZERO);
    let mut run = store
        .lock("default", LockInfo::new("OperationTypeApply", ""))
        .unwrap();
    run.persist(&[secret_output()]).unwrap();
    run.finish().unwrap();
    let lineage = store.snapshot("default").unwrap().lineage;
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "item4_sigkill_after_ack_loses_nothing",
            "--nocapture",
        ])
        .env("TERRANE_BACKEND_SIGKILL_CHILD", dir.path())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = std::io::BufReader::new(child.stdout.take().unwrap());
    let acked = out
        .lines()
        .map_while(Result::ok)
        .any(|l| l == format!("acknowledged {COUNT}"));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    child.wait().unwrap();
    assert!(acked, "case child_acknowledged");
    let state_file = dir.path().join("terraform.tfstate");
    let before = read_json(&state_file);
    assert_eq!(
        before["resources"].as_array().map_or(0, Vec::len),
        0,
        "case not_uploaded_before_the_kill (the journal alone holds them)"
    );
    // Reading sees the journalled changes; the next run uploads them.
    assert_eq!(
        store.snapshot("default").unwrap().object_count(),
        COUNT,
        "case read_sees_journal"
    );
    let run = store
        .lock("default", LockInfo::new("OperationTypeApply", ""))
        .unwrap();
    run.finish().unwrap();
    let after = read_json(&state_file);
    assert_eq!(
        after["resources"].as_array().unwrap().len(),
        COUNT,
        "case recovered_objects"
    );
    assert_eq!(after["serial"], 1 + COUNT as u64, "case recovered_serial");
    assert_eq!(after["lineage"], lineage.as_str(), "case lineage_kept");
    assert_eq!(
        after["outputs"]["token"]["value"], "s3cr3t",
        "case earlier_state_kept"
    );
    assert!(
        !dir.path()
            .join(".terraform/terrane-journal/default.journal")
            .exists(),
        "case journal_removed"
    );
}

#[test]
fn item2_http_backend_round_trip_and_locks() {
    let server = HttpStateServer::start();
    let open = |extra: &[(&str, &str)]| {
        let mut s = settings(&[
            ("address", &server.address()),
            ("lock_address", &server.lock_address()),
            ("unlock_address", &server.lock_address()),
        ]);
        s.extend(settings(extra));
        let dir = terrane_testkit::temp_dir();
        let b = terrane_backend::open("http", &s).unwrap();
        (BackendStore::new(b, dir.path().join("j")), dir)
    };
    let (store, _d) = open(&[]);
    let mut run = store
        .lock("default", LockInfo::new("OperationTypeApply", ""))
        .unwrap();
    let id = run.lock_info().id.clone();
    let held: serde_json::Value =
        serde_json::from_str(server.stored.lock().unwrap().lock.as_deref().unwrap()).unwrap();
    assert_eq!(held["ID"], id.as_str(), "case lock_body_is_terraforms_json");
    run.persist(&[set(1), secret_output()]).unwrap();
    run.finish().unwrap();
    {
        let s = server.stored.lock().unwrap();
        assert!(s.lock.is_none(), "case unlocked");
        assert_eq!(
            s.writes.last(),
            Some(&Some(id)),
            "case post_carries_lock_id"
        );
        let state: serde_json::Value = serde_json::from_slice(s.state.as_ref().unwrap()).unwrap();
        assert_eq!(
            state["resources"].as_array().unwrap().len(),
            1,
            "case stored"
        );
    }
    // Someone else's lock is reported with its holder.
    server.stored.lock().unwrap().lock = Some(
        r#"{"ID":"0f1e","Operation":"OperationTypeApply","Info":"","Who":"alice@elsewhere","Version":"1.9.0","Created":"2026-01-01T00:00:00Z","Path":""}"#.into(),
    );
    match store.lock("default", LockInfo::new("OperationTypePlan", "")) {
        Err(e @ StateError::Locked { .. }) => {
            let text = e.to_string();
            assert!(
                text.contains("alice@elsewhere") && text.contains("0f1e"),
                "case holder_named: {text}"
            );
        }
        other => panic!("case holder_named: {:?}", other.err()),
    }
    store.force_unlock("default", "0f1e").unwrap();
    assert!(
        server.stored.lock().unwrap().lock.is_none(),
        "case force_unlock"
    );
    // Wrong credentials: a clear error that does not show the password.
    server.stored.lock().unwrap().auth = Some("u:right".into());
    let (wrong, _d) = open(&[("username", "u"), ("password", "hunter2")]);
    let e = wrong.snapshot("default").unwrap_err().to_string();
    assert!(
        e.contains("invalid credentials"),
        "case wrong_password: {e}"
    );
    assert!(!e.contains("hunter2"), "case password_not_shown: {e}");
    let (right, _d) = open(&[("username", "u"), ("password", "right")]);
    assert_eq!(
        right.snapshot("default").unwrap().object_count(),
        1,
        "case right_password"
    );
}

#[test]
fn item2_backend_settings_are_checked() {
    let cases: [(&str, &str, Settings, &str); 4] = [
        (
            "local_unknown",
            "local",
            settings(&[("paht", "x")]),
            "\"paht\" is not expected",
        ),
        (
            "http_no_address",
            "http",
            settings(&[]),
            "address is required",
        ),
        (
            "http_not_url",
            "http",
            settings(&[("address", "ftp://x")]),
            "is not an http:// or https:// URL",
        ),
        (
            "unknown_kind",
            "consul",
            settings(&[]),
            "does not support the \"consul\" backend",
        ),
    ];
    for (name, kind, s, want) in cases {
        std::env::remove_var("TF_HTTP_ADDRESS");
        match terrane_backend::open(kind, &s) {
            Err(e) => assert!(e.to_string().contains(want), "case {name}: {e}"),
            Ok(_) => panic!("case {name}: accepted"),
        }
    }
}

#[test]
fn item2_pg_backend_uses_terraforms_table_and_locks() {
    let Some(url) = terrane_testkit::pg_url() else {
        return;
    };
    let schema = format!("tf_back_{}", std::process::id());
    let s = settings(&[("conn_str", &url), ("schema_name", &schema)]);
    let dir = terrane_testkit::temp_dir();
    let open = || {
        BackendStore::new(
            terrane_backend::open("pg", &s).unwrap(),
            dir.path().join("j"),
        )
    };
    let (a, b) = (open(), open());
    let mut run = a
        .lock("default", LockInfo::new("OperationTypeApply", ""))
        .unwrap();
    // A new workspace is created under Terraform's creation lock (-1).
    assert!(
        matches!(
            b.lock("default", LockInfo::new("OperationTypePlan", "")),
            Err(StateError::Locked { .. })
        ),
        "case creation_lock_blocks"
    );
    run.persist(&[set(1), secret_output()]).unwrap();
    run.finish().unwrap();
    let run = a
        .lock("default", LockInfo::new("OperationTypeApply", ""))
        .unwrap();
    match b.lock("default", LockInfo::new("OperationTypePlan", "")) {
        Err(e @ StateError::Locked { .. }) => {
            assert!(
                e.to_string().contains("advisory lock"),
                "case row_lock_blocks: {e}"
            )
        }
        other => panic!("case row_lock_blocks: {:?}", other.err()),
    }
    run.finish().unwrap();
    let mut c = terrane_state::pg_connect(&url).unwrap();
    let row = c
        .query_one(
            &format!("SELECT data FROM {schema}.states WHERE name = 'default'"),
            &[],
        )
        .unwrap();
    let state: serde_json::Value = serde_json::from_str(&row.get::<_, String>(0)).unwrap();
    assert_eq!(
        state["outputs"]["token"]["value"], "s3cr3t",
        "case stored_in_states_table"
    );
    assert_eq!(
        b.snapshot("default").unwrap().object_count(),
        1,
        "case read_by_other"
    );
    let mut run = b
        .lock("dev", LockInfo::new("OperationTypeApply", ""))
        .unwrap();
    run.persist(&[set(2)]).unwrap();
    run.finish().unwrap();
    assert_eq!(
        a.backend().workspaces().unwrap(),
        ["default", "dev"],
        "case workspaces"
    );
    c.batch_execute(&format!("DROP SCHEMA {schema} CASCADE"))
        .unwrap();
}

/// Terraform locks its state file with a POSIX process lock (fcntl
/// F_SETLK), as Python's `fcntl.lockf` does: such a holder blocks terrane,
/// which names it from `.terraform.tfstate.lock.info`; once the holder
/// process is dead, its lock is gone with it.
#[test]
fn item2_local_terraform_style_lock_blocks_terrane_until_its_holder_dies() {
    let dir = terrane_testkit::temp_dir();
    let state = dir.path().join("terraform.tfstate");
    std::fs::write(&state, "").unwrap();
    std::fs::write(
        dir.path().join(".terraform.tfstate.lock.info"),
        r#"{"ID":"tf-lock-1","Operation":"OperationTypeApply","Info":"","Who":"tf@build-host","Version":"1.9.0","Created":"2026-01-01T00:00:00Z","Path":"terraform.tfstate"}"#,
    )
    .unwrap();
    let script = "import fcntl,sys,time\nf=open(sys.argv[1],'r+')\nfcntl.lockf(f,fcntl.LOCK_EX|fcntl.LOCK_NB)\nprint('locked',flush=True)\ntime.sleep(120)\n";
    let mut holder = std::process::Command::new("python3")
        .args(["-c", script])
        .arg(&state)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs");
    let mut line = String::new();
    std::io::BufReader::new(holder.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "locked", "case holder_locked");
    let store = local_store(dir.path(), Duration::ZERO);
    let got = store.lock("default", LockInfo::new("OperationTypeApply", ""));
    match got {
        Err(e @ StateError::Locked { .. }) => {
            let text = e.to_string();
            assert!(
                text.contains("tf-lock-1") && text.contains("tf@build-host"),
                "case holder_named: {text}"
            );
        }
        Err(e) => panic!("case blocked: {e}"),
        Ok(_) => panic!("case blocked: granted while Terraform-style lock held"),
    }
    holder.kill().unwrap();
    holder.wait().unwrap();
    let run = store.lock("default", LockInfo::new("OperationTypeApply", ""));
    assert!(run.is_ok(), "case dead_holder_lock_gone: {:?}", run.err());
}

/// A run killed before it uploaded (simulated: the run is leaked, its
/// lock then released as `force-unlock` would): a torn last journal line
/// was never acknowledged and is dropped; a damaged complete line is an
/// error naming the journal, and nothing is uploaded over the state.
#[test]
fn item4_torn_journal_tail_is_dropped_a_damaged_journal_is_refused() {
    let cases: [(&str, &[u8], Option<&str>); 3] = [
        ("clean_kill", b"", None),
        ("torn_last_line", b"{\"serial\": 9, \"chan", None),
        ("damaged_line", b"not json\n", Some("cannot be read")),
    ];
    for (name, tail, err) in cases {
        let server = HttpStateServer::start();
        let dir = terrane_testkit::temp_dir();
        let s = settings(&[
            ("address", &server.address()),
            ("lock_address", &server.lock_address()),
            ("unlock_address", &server.lock_address()),
        ]);
        let open = || {
            BackendStore::new(
                terrane_backend::open("http", &s).unwrap(),
                dir.path().join("j"),
            )
            .upload_every(Duration::from_secs(3600))
        };
        let store = open();
        let mut run = store
            .lock("default", LockInfo::new("OperationTypeApply", ""))
            .unwrap();
        for n in 0..3 {
            run.persist(&[set(n)]).unwrap();
        }
        std::mem::forget(run);
        assert!(
            server.stored.lock().unwrap().state.is_none(),
            "case {name}: nothing uploaded yet"
        );
        server.stored.lock().unwrap().lock = None;
        let journal = dir.path().join("j/default.journal");
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&journal)
            .unwrap();
        std::io::Write::write_all(&mut f, tail).unwrap();
        drop(f);
        let got = open().lock("default", LockInfo::new("OperationTypeApply", ""));
        match (got, err) {
            (Ok(run), None) => {
                run.finish().unwrap();
                let stored = server.stored.lock().unwrap().state.clone().unwrap();
                let state: serde_json::Value = serde_json::from_slice(&stored).unwrap();
                assert_eq!(
                    state["resources"].as_array().unwrap().len(),
                    3,
                    "case {name}: recovered"
                );
                assert_eq!(
                    state["serial"], 3,
                    "case {name}: serial of the last acknowledged"
                );
                assert!(!journal.exists(), "case {name}: journal removed");
            }
            (Err(e), Some(want)) => {
                let text = e.to_string();
                assert!(
                    text.contains(want) && text.contains("default.journal"),
                    "case {name}: {text}"
                );
                assert!(
                    server.stored.lock().unwrap().state.is_none(),
                    "case {name}: nothing uploaded"
                );
                assert!(journal.exists(), "case {name}: journal kept");
                assert!(
                    server.stored.lock().unwrap().lock.is_none(),
                    "case {name}: lock released"
                );
            }
            (got, want) => panic!("case {name}: got {:?}, want error {want:?}", got.err()),
        }
    }
}
