//! The behaviour every state store must have, run against the SQLite store
//! (always) and the PostgreSQL store (a real server: `TERRANE_TEST_PG_URL`,
//! required under CI=true). Each test uses its own workspace/schema so the
//! tests run in parallel.

use terrane_state::{
    check_plan_freshness, Change, Encryption, InstanceKey, LockInfo, ObjectState, OutputState,
    PgStore, ResourceAddr, SqliteStore, StateError, StateStore, Status,
};

fn obj(id: &str) -> ObjectState {
    ObjectState {
        attributes:
            serde_json::json!({"id": id, "n": 123456789012345678901234567890.125f64.to_string()})
                .into(),
        ..Default::default()
    }
}

fn set(name: &str, key: InstanceKey, id: &str) -> Change {
    Change::SetObject {
        addr: ResourceAddr::managed("terraform_data", name).instance(key),
        deposed: None,
        provider: "provider[\"terraform.io/builtin/terraform\"]".into(),
        object: obj(id),
    }
}

/// The shared behaviour, on one store.
fn conformance(store: &dyn StateStore, ws: &str) {
    // An unknown workspace reads as empty.
    let empty = store.snapshot(ws).unwrap();
    assert_eq!(empty.object_count(), 0, "case unknown_workspace_is_empty");
    assert!(
        store.addresses(ws).unwrap().is_empty(),
        "case unknown_workspace_lists_nothing"
    );

    // Lock, persist, read back; the serial grows by one per change set.
    let mut run = store
        .lock(ws, LockInfo::new("OperationTypeApply", "first"))
        .unwrap();
    let s1 = run
        .persist(&[
            set("a", InstanceKey::None, "1"),
            set("b", InstanceKey::Int(0), "2"),
        ])
        .unwrap();
    let s2 = run
        .persist(&[set("b", InstanceKey::Str("k".into()), "3")])
        .unwrap();
    assert_eq!(s2, s1 + 1, "case serial_increments_per_change_set");
    let lineage = run.snapshot().unwrap().lineage;

    // A second writer fails fast and learns who holds the lock.
    let err = store
        .lock(ws, LockInfo::new("OperationTypePlan", "second"))
        .err()
        .expect("second lock must fail");
    match &err {
        StateError::Locked { holder, .. } => {
            assert_eq!(
                holder.id,
                run.lock_info().id,
                "case locked_error_names_holder_id"
            );
            assert_eq!(holder.operation, "OperationTypeApply");
        }
        other => panic!("case second_writer_refused: {other}"),
    }
    let text = err.to_string();
    assert!(
        text.contains("already locked")
            && text.contains(&run.lock_info().id)
            && text.contains("Who:"),
        "case locked_message: {text}"
    );

    // Reads need no lock and see committed changes.
    let snap = store.snapshot(ws).unwrap();
    assert_eq!(snap.object_count(), 3, "case reads_see_committed_changes");
    assert_eq!(snap.serial, s2);

    // Depose, tainted status, outputs, removal.
    let b0 = ResourceAddr::managed("terraform_data", "b").instance(InstanceKey::Int(0));
    run.persist(&[Change::Depose {
        addr: b0.clone(),
        key: "0badcafe".into(),
    }])
    .unwrap();
    let mut tainted = obj("new");
    tainted.status = Status::Tainted;
    tainted.sensitive_paths = vec![terrane_value::Path::root().attr("n")];
    tainted.private = Some(vec![0, 1, 2]);
    run.persist(&[
        Change::SetObject {
            addr: b0.clone(),
            deposed: None,
            provider: "provider[\"terraform.io/builtin/terraform\"]".into(),
            object: tainted.clone(),
        },
        Change::SetOutput {
            name: "o".into(),
            output: OutputState {
                value: serde_json::json!("v"),
                ty: serde_json::json!("string"),
                sensitive: true,
            },
        },
    ])
    .unwrap();
    let snap = run.snapshot().unwrap();
    assert_eq!(
        snap.object(&b0, None),
        Some(&tainted),
        "case tainted_object_round_trips"
    );
    assert_eq!(
        snap.object(&b0, Some("0badcafe"))
            .map(|o| o.attributes.json()["id"].clone()),
        Some(serde_json::json!("2")),
        "case depose_moves_current"
    );
    assert!(snap.outputs["o"].sensitive);
    run.persist(&[
        Change::RemoveObject {
            addr: b0.clone(),
            deposed: Some("0badcafe".into()),
        },
        Change::RemoveOutput { name: "o".into() },
    ])
    .unwrap();
    let snap = run.snapshot().unwrap();
    assert!(
        snap.object(&b0, Some("0badcafe")).is_none(),
        "case remove_deposed"
    );
    assert!(snap.outputs.is_empty());
    // A resource's instances share one provider: changing it through one
    // instance moves them all.
    let moved = "provider[\"registry.terraform.io/hashicorp/other\"]";
    run.persist(&[Change::SetObject {
        addr: ResourceAddr::managed("terraform_data", "b").instance(InstanceKey::Int(0)),
        deposed: None,
        provider: moved.into(),
        object: obj("3"),
    }])
    .unwrap();
    let snap = run.snapshot().unwrap();
    assert_eq!(
        snap.resources[&ResourceAddr::managed("terraform_data", "b")].provider,
        moved,
        "case provider_change_applies_to_all_instances"
    );
    assert!(
        terrane_state::tfstate::export(&snap)
            .matches("hashicorp/other")
            .count()
            == 1
    );
    run.finish().unwrap();

    // Saved plans against older serials or other lineages are refused.
    let snap = store.snapshot(ws).unwrap();
    assert_eq!(snap.lineage, lineage, "case lineage_fixed_at_creation");
    assert!(check_plan_freshness(&snap, &lineage, snap.serial).is_ok());
    assert!(
        matches!(
            check_plan_freshness(&snap, &lineage, snap.serial - 1),
            Err(StateError::StalePlan { .. })
        ),
        "case stale_plan_refused"
    );
    assert!(
        matches!(
            check_plan_freshness(&snap, "other", snap.serial),
            Err(StateError::PlanLineage { .. })
        ),
        "case foreign_lineage_refused"
    );

    // force-unlock frees a stuck lock; the old holder then cannot write.
    let mut stuck = store
        .lock(ws, LockInfo::new("OperationTypeApply", "stuck"))
        .unwrap();
    let id = stuck.lock_info().id.clone();
    assert!(
        matches!(
            store.force_unlock(ws, "not-the-id"),
            Err(StateError::NoSuchLock { .. })
        ),
        "case force_unlock_wrong_id"
    );
    store.force_unlock(ws, &id).unwrap();
    let after = store
        .lock(ws, LockInfo::new("OperationTypeApply", "after"))
        .unwrap();
    assert!(
        stuck.persist(&[set("z", InstanceKey::None, "z")]).is_err(),
        "case lock_lost_after_force_unlock"
    );
    after.finish().unwrap();
    drop(stuck);
    assert_eq!(
        store.snapshot(ws).unwrap().object_count(),
        3,
        "case nothing_written_by_lost_lock"
    );

    // Import replaces everything, keeping the file's lineage and serial.
    let imported = terrane_state::tfstate::import(include_bytes!("data/small.tfstate")).unwrap();
    let mut run = store
        .lock(ws, LockInfo::new("OperationTypeImport", ""))
        .unwrap();
    run.replace(&imported).unwrap();
    run.finish().unwrap();
    let back = store.snapshot(ws).unwrap();
    assert_eq!(back.lineage, imported.lineage, "case import_keeps_lineage");
    assert_eq!(
        terrane_state::tfstate::export(&back),
        terrane_state::tfstate::export(&imported),
        "case import_export_identical"
    );
    // `state list`'s addresses: every instance of the snapshot, in its order.
    let listed: Vec<_> = back
        .resources
        .iter()
        .flat_map(|(r, rs)| rs.instances.keys().map(|k| r.instance(k.clone())))
        .collect();
    assert_eq!(
        store.addresses(ws).unwrap(),
        listed,
        "case addresses_in_state_order"
    );

    assert!(store.workspaces().unwrap().contains(&ws.to_string()));
}

#[test]
fn sqlite_store_conformance() {
    let dir = terrane_testkit::temp_dir();
    let store = SqliteStore::open(&SqliteStore::default_path(dir.path()), None).unwrap();
    conformance(&store, "default");
    store
        .delete_workspace("default")
        .expect_err("case default_workspace_kept");
}

/// The same behaviour with encryption on (item 14): row-bound blobs survive
/// deposing (the deposed key is not part of a blob's binding), moving a
/// resource's provider, removal and import.
#[test]
fn item14_sqlite_store_conformance_encrypted() {
    let dir = terrane_testkit::temp_dir();
    let enc = Encryption {
        passphrase: "conformance".into(),
        iterations: 1000,
    };
    let store = SqliteStore::open(&SqliteStore::default_path(dir.path()), Some(&enc)).unwrap();
    conformance(&store, "default");
}

#[test]
fn item14_postgres_store_conformance_encrypted() {
    let Some(url) = terrane_testkit::pg_url() else {
        return;
    };
    let schema = format!("t_conf_enc_{}", std::process::id());
    let enc = Encryption {
        passphrase: "conformance".into(),
        iterations: 1000,
    };
    let store = PgStore::open(&url, &schema, Some(&enc)).unwrap();
    conformance(&store, "default");
}

#[test]
fn postgres_store_conformance() {
    let Some(url) = terrane_testkit::pg_url() else {
        return;
    };
    let schema = format!("t_conf_{}", std::process::id());
    let store = PgStore::open(&url, &schema, None).unwrap();
    conformance(&store, "default");
    let store2 = PgStore::open(&url, &schema, None).unwrap();
    assert_eq!(
        store2.workspaces().unwrap(),
        vec!["default".to_string()],
        "case tables_created_once_and_reused"
    );
}

#[test]
fn sqlite_bad_files_are_refused_and_untouched() {
    let dir = terrane_testkit::temp_dir();
    let cases: [(&str, Vec<u8>, &str); 2] = [
        (
            "garbage_file",
            b"this is not a database at all, just text that is long enough".repeat(100),
            "not a usable terrane state database",
        ),
        (
            "truncated_header",
            b"SQLite format 3\0".to_vec(),
            "not a usable terrane state database",
        ),
    ];
    for (case, bytes, want) in cases {
        let path = dir.path().join(format!("{case}.db"));
        std::fs::write(&path, &bytes).unwrap();
        let before = std::fs::read(&path).unwrap();
        let err = SqliteStore::open(&path, None)
            .err()
            .unwrap_or_else(|| panic!("case {case}: opened"));
        assert!(err.to_string().contains(want), "case {case}: {err}");
        assert!(
            err.to_string().contains(&path.display().to_string()),
            "case {case}: error names the file: {err}"
        );
        assert_eq!(
            std::fs::read(&path).unwrap(),
            before,
            "case {case}: file untouched"
        );
    }

    // A store truncated in the middle fails clearly too, without rewriting.
    let path = dir.path().join("cut.db");
    {
        let store = SqliteStore::open(&path, None).unwrap();
        let mut run = store
            .lock("default", LockInfo::new("OperationTypeApply", ""))
            .unwrap();
        for i in 0..200 {
            run.persist(&[set("a", InstanceKey::Int(i), &"x".repeat(200))])
                .unwrap();
        }
        run.finish().unwrap();
    }
    let _ = std::fs::remove_file(dir.path().join("cut.db-wal"));
    let _ = std::fs::remove_file(dir.path().join("cut.db-shm"));
    let full = std::fs::read(&path).unwrap();
    std::fs::write(&path, &full[..full.len() / 2]).unwrap();
    let res = SqliteStore::open(&path, None).and_then(|s| s.snapshot("default"));
    assert!(
        matches!(res, Err(StateError::Corrupt { .. })),
        "case truncated_database: {:?}",
        res.err().map(|e| e.to_string())
    );
}

/// Another program's SQLite database (made by SQLite itself, in the given
/// journal mode) is refused with its bytes and journal mode unchanged.
#[test]
fn item14_foreign_sqlite_db_refused_untouched() {
    let dir = terrane_testkit::temp_dir();
    for mode in ["delete", "wal"] {
        // (Only WAL is recorded in the file; other modes read back as "delete".)
        let path = dir.path().join(format!("foreign-{mode}.db"));
        {
            let c = rusqlite::Connection::open(&path).unwrap();
            let got: String = c
                .query_row(&format!("PRAGMA journal_mode={mode}"), [], |r| r.get(0))
                .unwrap();
            assert_eq!(got, mode);
            c.execute_batch("CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes(body) VALUES ('keep me');").unwrap();
        }
        let before = std::fs::read(&path).unwrap();
        let err = SqliteStore::open(&path, None)
            .err()
            .unwrap_or_else(|| panic!("case {mode}: opened a foreign database"));
        assert!(
            err.to_string().contains("not a terrane state") && err.to_string().contains("notes"),
            "case {mode}: {err}"
        );
        assert_eq!(
            std::fs::read(&path).unwrap(),
            before,
            "case {mode}: bytes identical"
        );
        let c = rusqlite::Connection::open(&path).unwrap();
        let after: String = c
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(after, mode, "case {mode}: journal mode unchanged");
    }
}

fn mode_of(p: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .permissions()
        .mode()
        & 0o777
}

#[test]
fn item14_state_files_are_private() {
    let dir = terrane_testkit::temp_dir();
    let path = SqliteStore::default_path(dir.path());
    let store = SqliteStore::open(&path, None).unwrap();
    let run = store
        .lock("default", LockInfo::new("OperationTypeApply", ""))
        .unwrap();
    let parent = path.parent().unwrap();
    let cases: [(&str, std::path::PathBuf, u32); 4] = [
        ("terrane_dir", parent.to_path_buf(), 0o700),
        ("state_db", path.clone(), 0o600),
        ("wal", parent.join("state.db-wal"), 0o600),
        ("shm", parent.join("state.db-shm"), 0o600),
    ];
    for (case, p, want) in &cases {
        assert_eq!(mode_of(p), *want, "case {case}: {}", p.display());
    }
    run.finish().unwrap();
    drop(store);
    // A store left 0644 in a 0755 .terrane by an earlier terrane is
    // tightened when opened.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::set_permissions(parent, std::fs::Permissions::from_mode(0o755)).unwrap();
    SqliteStore::open(&path, None).unwrap();
    assert_eq!(mode_of(&path), 0o600, "case loose_existing_store_tightened");
    assert_eq!(
        mode_of(parent),
        0o700,
        "case loose_existing_terrane_dir_tightened"
    );
}

#[test]
fn sqlite_encryption_at_rest() {
    let dir = terrane_testkit::temp_dir();
    let path = dir.path().join("enc.db");
    let enc = Encryption {
        passphrase: "correct horse".into(),
        iterations: 1000,
    };
    {
        let store = SqliteStore::open(&path, Some(&enc)).unwrap();
        let mut run = store
            .lock("default", LockInfo::new("OperationTypeApply", ""))
            .unwrap();
        run.persist(&[set("secret", InstanceKey::None, "TOPSECRETVALUE")])
            .unwrap();
        run.finish().unwrap();
    }
    let raw = std::fs::read(&path).unwrap();
    let wal = std::fs::read(dir.path().join("enc.db-wal")).unwrap_or_default();
    assert!(
        !raw.windows(14)
            .chain(wal.windows(14))
            .any(|w| w == b"TOPSECRETVALUE"),
        "case plaintext_never_on_disk"
    );
    let before = std::fs::read(&path).unwrap();
    let wrong = Encryption {
        passphrase: "wrong".into(),
        iterations: 1000,
    };
    assert!(
        matches!(
            SqliteStore::open(&path, Some(&wrong)),
            Err(StateError::WrongKey { .. })
        ),
        "case wrong_key_clear_error"
    );
    assert!(
        matches!(
            SqliteStore::open(&path, None),
            Err(StateError::EncryptedNoKey { .. })
        ),
        "case missing_key_clear_error"
    );
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "case wrong_key_changes_nothing"
    );

    let mut store = SqliteStore::open(&path, Some(&enc)).unwrap();
    let snap = store.snapshot("default").unwrap();
    assert_eq!(snap.object_count(), 1, "case right_key_reads");
    let rotated = Encryption {
        passphrase: "new passphrase".into(),
        iterations: 1000,
    };
    store.rotate(Some(&rotated)).unwrap();
    assert!(
        matches!(
            SqliteStore::open(&path, Some(&enc)),
            Err(StateError::WrongKey { .. })
        ),
        "case old_key_refused_after_rotation"
    );
    let store = SqliteStore::open(&path, Some(&rotated)).unwrap();
    assert_eq!(
        store.snapshot("default").unwrap(),
        snap,
        "case rotation_preserves_state"
    );
}

#[test]
fn postgres_encryption_at_rest() {
    let Some(url) = terrane_testkit::pg_url() else {
        return;
    };
    let schema = format!("t_enc_{}", std::process::id());
    let enc = Encryption {
        passphrase: "pg secret".into(),
        iterations: 1000,
    };
    let store = PgStore::open(&url, &schema, Some(&enc)).unwrap();
    let mut run = store
        .lock("default", LockInfo::new("OperationTypeApply", ""))
        .unwrap();
    run.persist(&[set("s", InstanceKey::None, "PGTOPSECRET")])
        .unwrap();
    run.finish().unwrap();
    let wrong = Encryption {
        passphrase: "nope".into(),
        iterations: 1000,
    };
    assert!(
        matches!(
            PgStore::open(&url, &schema, Some(&wrong)),
            Err(StateError::WrongKey { .. })
        ),
        "case pg_wrong_key"
    );
    assert!(
        matches!(
            PgStore::open(&url, &schema, None),
            Err(StateError::EncryptedNoKey { .. })
        ),
        "case pg_missing_key"
    );
    let mut store = PgStore::open(&url, &schema, Some(&enc)).unwrap();
    let snap = store.snapshot("default").unwrap();
    assert_eq!(snap.object_count(), 1);
    let rotated = Encryption {
        passphrase: "rotated".into(),
        iterations: 1000,
    };
    store.rotate(Some(&rotated)).unwrap();
    assert!(
        matches!(
            PgStore::open(&url, &schema, Some(&enc)),
            Err(StateError::WrongKey { .. })
        ),
        "case pg_old_key_refused_after_rotation"
    );
    assert_eq!(
        PgStore::open(&url, &schema, Some(&rotated))
            .unwrap()
            .snapshot("default")
            .unwrap(),
        snap,
        "case pg_rotation_preserves_state"
    );
    let mut store = PgStore::open(&url, &schema, Some(&rotated)).unwrap();
    store.rotate(None).unwrap();
    assert_eq!(
        PgStore::open(&url, &schema, None)
            .unwrap()
            .snapshot("default")
            .unwrap(),
        snap,
        "case pg_decrypt_by_rotation"
    );
}

/// Every file of an SQLite store, concatenated (database, WAL, shm).
fn all_bytes(path: &std::path::Path) -> Vec<u8> {
    let mut out = Vec::new();
    for suffix in ["", "-wal", "-shm", "-journal"] {
        out.extend(std::fs::read(format!("{}{suffix}", path.display())).unwrap_or_default());
    }
    out
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn item14_rotation_leaves_no_old_value_in_any_page() {
    let dir = terrane_testkit::temp_dir();
    let path = dir.path().join("rot.db");
    // Plaintext first, with several versions of the secret written.
    {
        let store = SqliteStore::open(&path, None).unwrap();
        let mut run = store
            .lock("default", LockInfo::new("OperationTypeApply", ""))
            .unwrap();
        for i in 0..20 {
            run.persist(&[set(
                "s",
                InstanceKey::Int(i),
                &format!("PLAINSECRET-{i:02}"),
            )])
            .unwrap();
        }
        run.finish().unwrap();
    }
    assert!(
        contains(&all_bytes(&path), b"PLAINSECRET-07"),
        "the plaintext store holds the value (else the test proves nothing)"
    );
    let enc = Encryption {
        passphrase: "k1".into(),
        iterations: 1000,
    };
    let mut store = SqliteStore::open(&path, None).unwrap();
    store.rotate(Some(&enc)).unwrap();
    assert!(
        !contains(&all_bytes(&path), b"PLAINSECRET"),
        "case plaintext_gone_after_encrypting"
    );
    // Record one blob under the first key, rotate again: it is gone.
    let old_blob: Vec<u8> = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row("SELECT attributes FROM objects LIMIT 1", [], |r| r.get(0))
        .unwrap();
    assert_eq!(old_blob[0], 2, "case blobs_are_format_2");
    let mut store = SqliteStore::open(&path, Some(&enc)).unwrap();
    let before = store.snapshot("default").unwrap();
    let enc2 = Encryption {
        passphrase: "k2".into(),
        iterations: 1000,
    };
    store.rotate(Some(&enc2)).unwrap();
    assert!(
        !contains(&all_bytes(&path), &old_blob[1..]),
        "case old_ciphertext_gone_after_rotation"
    );
    assert_eq!(
        SqliteStore::open(&path, Some(&enc2))
            .unwrap()
            .snapshot("default")
            .unwrap(),
        before,
        "case rotation_keeps_state"
    );
}

#[test]
fn item14_encrypted_values_are_bound_to_their_rows() {
    let dir = terrane_testkit::temp_dir();
    let path = dir.path().join("bind.db");
    let enc = Encryption {
        passphrase: "bind".into(),
        iterations: 1000,
    };
    {
        let store = SqliteStore::open(&path, Some(&enc)).unwrap();
        let mut run = store
            .lock("default", LockInfo::new("OperationTypeApply", ""))
            .unwrap();
        run.persist(&[
            set("a", InstanceKey::None, "AAA"),
            set("b", InstanceKey::None, "BBB"),
        ])
        .unwrap();
        run.finish().unwrap();
    }
    // Someone with write access to the file swaps the two rows' values.
    let c = rusqlite::Connection::open(&path).unwrap();
    c.execute_batch("UPDATE objects SET attributes = (SELECT attributes FROM objects WHERE name='b') WHERE name='a';").unwrap();
    drop(c);
    let err = SqliteStore::open(&path, Some(&enc))
        .unwrap()
        .snapshot("default")
        .expect_err("a value moved to another row must not decrypt");
    assert!(
        matches!(err, StateError::Decrypt { .. }) && err.to_string().contains("terraform_data.a"),
        "case swapped_blob_refused: {err}"
    );
}

/// A store written by terrane before row binding (format 1: `nonce ||
/// ciphertext`, no associated data, no `crypt_format`) is refused with a
/// message naming rotate-key; rotation migrates it.
#[test]
fn item14_format1_store_refused_then_migrated_by_rotation() {
    use aes_gcm::aead::{Aead, KeyInit};
    let dir = terrane_testkit::temp_dir();
    let path = dir.path().join("v1.db");
    {
        let store = SqliteStore::open(&path, None).unwrap();
        let mut run = store
            .lock("default", LockInfo::new("OperationTypeApply", ""))
            .unwrap();
        run.persist(&[set("old", InstanceKey::None, "V1SECRET")])
            .unwrap();
        run.finish().unwrap();
    }
    // Re-encrypt it by hand the way format 1 did.
    let salt = [7u8; 16];
    let mut key = [0u8; 32];
    pbkdf2::pbkdf2_hmac::<sha2::Sha256>(b"old pass", &salt, 1000, &mut key);
    let aead = aes_gcm::Aes256Gcm::new(&key.into());
    let seal = |plain: &[u8]| {
        let nonce = [9u8; 12];
        let mut out = nonce.to_vec();
        out.extend(
            aead.encrypt(aes_gcm::Nonce::from_slice(&nonce), plain)
                .unwrap(),
        );
        out
    };
    let c = rusqlite::Connection::open(&path).unwrap();
    let attrs: Vec<u8> = c
        .query_row("SELECT attributes FROM objects", [], |r| r.get(0))
        .unwrap();
    c.execute("UPDATE objects SET attributes=?1", [seal(&attrs)])
        .unwrap();
    c.execute("INSERT INTO meta(key, value) VALUES ('kdf_salt', ?1), ('kdf_iterations', ?2), ('key_check', ?3)", rusqlite::params![salt.to_vec(), b"1000".to_vec(), seal(b"terrane state key check v1")]).unwrap();
    drop(c);
    let old = Encryption {
        passphrase: "old pass".into(),
        iterations: 1000,
    };
    let err = SqliteStore::open(&path, Some(&old))
        .err()
        .expect("format 1 refused");
    assert!(
        matches!(err, StateError::OldEncryptionFormat { .. })
            && err.to_string().contains("rotate-key"),
        "case format1_refused_clearly: {err}"
    );
    let wrong = Encryption {
        passphrase: "nope".into(),
        iterations: 1000,
    };
    assert!(
        matches!(
            SqliteStore::open_for_rotation(&path, Some(&wrong)),
            Err(StateError::WrongKey { .. })
        ),
        "case format1_wrong_key"
    );
    let mut store = SqliteStore::open_for_rotation(&path, Some(&old)).unwrap();
    assert!(
        store.snapshot("default").is_err(),
        "case format1_not_readable_before_rotation"
    );
    let new = Encryption {
        passphrase: "new pass".into(),
        iterations: 1000,
    };
    store.rotate(Some(&new)).unwrap();
    let snap = SqliteStore::open(&path, Some(&new))
        .unwrap()
        .snapshot("default")
        .unwrap();
    assert_eq!(
        snap.object(
            &ResourceAddr::managed("terraform_data", "old").instance(InstanceKey::None),
            None
        )
        .unwrap()
        .attributes
        .json()["id"],
        "V1SECRET",
        "case migrated_by_rotation"
    );
}

#[test]
fn item8_serials_keep_their_range() {
    let dir = terrane_testkit::temp_dir();
    let store = SqliteStore::open(&dir.path().join("serial.db"), None).unwrap();
    let mut run = store
        .lock("default", LockInfo::new("OperationTypeImport", ""))
        .unwrap();
    let mut snap = terrane_state::Snapshot::empty();
    snap.serial = u64::MAX;
    let err = run.replace(&snap).expect_err("u64::MAX cannot be stored");
    assert!(
        err.to_string().contains("out of range"),
        "case u64_max_refused: {err}"
    );
    assert_eq!(
        run.snapshot().unwrap().serial,
        0,
        "case nothing_written_by_refused_serial"
    );
    snap.serial = i64::MAX as u64;
    run.replace(&snap).unwrap();
    assert_eq!(
        store.snapshot("default").unwrap().serial,
        i64::MAX as u64,
        "case largest_serial_reads_back"
    );
    let err = run
        .persist(&[set("a", InstanceKey::None, "1")])
        .expect_err("no serial after the largest");
    assert!(
        err.to_string().contains("largest serial"),
        "case no_wraparound: {err}"
    );
    run.finish().unwrap();
    // A negative serial in the file is corruption, never read as 0.
    drop(store);
    let c = rusqlite::Connection::open(dir.path().join("serial.db")).unwrap();
    c.execute("UPDATE workspaces SET serial=-1", []).unwrap();
    drop(c);
    let err = SqliteStore::open(&dir.path().join("serial.db"), None)
        .unwrap()
        .snapshot("default")
        .expect_err("negative serial refused");
    assert!(
        err.to_string().contains("negative"),
        "case negative_serial_is_corruption: {err}"
    );
}

/// The PostgreSQL store's format-1 path: refused, then migrated by rotation.
#[test]
fn item14_postgres_format1_store_refused_then_migrated_by_rotation() {
    use aes_gcm::aead::{Aead, KeyInit};
    let Some(url) = terrane_testkit::pg_url() else {
        return;
    };
    let schema = format!("t_v1_{}", std::process::id());
    {
        let store = PgStore::open(&url, &schema, None).unwrap();
        let mut run = store
            .lock("default", LockInfo::new("OperationTypeApply", ""))
            .unwrap();
        run.persist(&[set("old", InstanceKey::None, "PGV1SECRET")])
            .unwrap();
        run.finish().unwrap();
    }
    let salt = [3u8; 16];
    let mut key = [0u8; 32];
    pbkdf2::pbkdf2_hmac::<sha2::Sha256>(b"old pg pass", &salt, 1000, &mut key);
    let aead = aes_gcm::Aes256Gcm::new(&key.into());
    let seal = |plain: &[u8]| {
        let nonce = [5u8; 12];
        let mut out = nonce.to_vec();
        out.extend(
            aead.encrypt(aes_gcm::Nonce::from_slice(&nonce), plain)
                .unwrap(),
        );
        out
    };
    let mut c = terrane_state::pg_connect(&url).unwrap();
    let attrs: Vec<u8> = c
        .query_one(&format!("SELECT attributes FROM {schema}.objects"), &[])
        .unwrap()
        .get(0);
    c.execute(
        &format!("UPDATE {schema}.objects SET attributes=$1"),
        &[&seal(&attrs)],
    )
    .unwrap();
    c.execute(
        &format!("INSERT INTO {schema}.meta(key, value) VALUES ('kdf_salt', $1), ('kdf_iterations', $2), ('key_check', $3)"),
        &[&salt.to_vec(), &b"1000".to_vec(), &seal(b"terrane state key check v1")],
    )
    .unwrap();
    drop(c);
    let old = Encryption {
        passphrase: "old pg pass".into(),
        iterations: 1000,
    };
    let err = PgStore::open(&url, &schema, Some(&old))
        .err()
        .expect("format 1 refused");
    assert!(
        matches!(err, StateError::OldEncryptionFormat { .. })
            && err.to_string().contains("rotate-key"),
        "case pg_format1_refused_clearly: {err}"
    );
    let mut store = PgStore::open_for_rotation(&url, &schema, Some(&old)).unwrap();
    assert!(
        store.snapshot("default").is_err(),
        "case pg_format1_not_readable_before_rotation"
    );
    let new = Encryption {
        passphrase: "new pg pass".into(),
        iterations: 1000,
    };
    store.rotate(Some(&new)).unwrap();
    let snap = PgStore::open(&url, &schema, Some(&new))
        .unwrap()
        .snapshot("default")
        .unwrap();
    assert_eq!(
        snap.object(
            &ResourceAddr::managed("terraform_data", "old").instance(InstanceKey::None),
            None
        )
        .unwrap()
        .attributes
        .json()["id"],
        "PGV1SECRET",
        "case pg_migrated_by_rotation"
    );
}

/// Provider for_each (issue 21 item 3): each object keeps the key of its
/// provider instance; a change through one instance leaves the others'
/// keys alone; moving the resource to another configuration drops them
/// (the stores rewrite every row's provider then), as the model does.
fn provider_instance_keys(store: &dyn StateStore, ws: &str) {
    let by = r#"provider["example.com/terrane/blocks"].by_region"#;
    let keyed = |name: &str, key: &str, pkey: &str| Change::SetObject {
        addr: ResourceAddr::managed("blocks_server", name).instance(InstanceKey::Str(key.into())),
        deposed: None,
        provider: format!(r#"{by}["{pkey}"]"#),
        object: obj(key),
    };
    let mut run = store
        .lock(ws, LockInfo::new("OperationTypeApply", "keys"))
        .unwrap();
    run.persist(&[keyed("s", "a", "eu"), keyed("s", "b", "us")])
        .unwrap();
    run.persist(&[keyed("s", "a", "eu2")]).unwrap();
    let mut want = run.snapshot().unwrap();
    run.finish().unwrap();
    let got = store.snapshot(ws).unwrap();
    let r = got.resources.values().next().unwrap();
    assert_eq!(r.provider, by, "case config_part_on_the_resource");
    let keys: Vec<Option<&str>> = r
        .instances
        .values()
        .map(|i| i.provider_key.as_deref())
        .collect();
    assert_eq!(
        keys,
        [Some("eu2"), Some("us")],
        "case each_instance_its_own_key"
    );
    want.serial = got.serial;
    assert_eq!(
        got.resources, want.resources,
        "case store_agrees_with_model"
    );
    // Another configuration: every row rewritten, keys gone.
    let mut run = store
        .lock(ws, LockInfo::new("OperationTypeApply", "keys"))
        .unwrap();
    let plain = r#"provider["example.com/terrane/blocks"]"#;
    run.persist(&[Change::SetObject {
        addr: ResourceAddr::managed("blocks_server", "s").instance(InstanceKey::Str("a".into())),
        deposed: None,
        provider: plain.into(),
        object: obj("a"),
    }])
    .unwrap();
    let model = run.snapshot().unwrap();
    run.finish().unwrap();
    let got = store.snapshot(ws).unwrap();
    assert_eq!(got.resources, model.resources, "case moved_config_agrees");
    let r = got.resources.values().next().unwrap();
    assert_eq!(r.provider, plain, "case moved_config");
    assert!(
        r.instances.values().all(|i| i.provider_key.is_none()),
        "case moved_config_drops_keys"
    );
}

#[test]
fn item3_sqlite_provider_instance_keys() {
    let dir = terrane_testkit::temp_dir();
    let store = SqliteStore::open(&SqliteStore::default_path(dir.path()), None).unwrap();
    provider_instance_keys(&store, "default");
}

#[test]
fn item3_postgres_provider_instance_keys() {
    let Some(url) = terrane_testkit::pg_url() else {
        return;
    };
    let schema = format!("t_pfe_keys_{}", std::process::id());
    let store = PgStore::open(&url, &schema, None).unwrap();
    provider_instance_keys(&store, "default");
}

/// `state list`'s addresses come from the address columns alone (no
/// attribute decoded): every instance, deposed-only ones too, in state
/// order (numbers by value), as the snapshot lists them.
#[test]
fn sqlite_addresses_in_state_order() {
    let dir = terrane_testkit::temp_dir();
    let store = SqliteStore::open(&SqliteStore::default_path(dir.path()), None).unwrap();
    let mut run = store
        .lock("default", LockInfo::new("OperationTypeApply", ""))
        .unwrap();
    let deposed = Change::SetObject {
        addr: ResourceAddr::managed("terraform_data", "c").instance(InstanceKey::None),
        deposed: Some("00000001".into()),
        provider: "provider[\"terraform.io/builtin/terraform\"]".into(),
        object: obj("6"),
    };
    run.persist(&[
        set("b", InstanceKey::Str("k".into()), "1"),
        set("b", InstanceKey::Int(10), "2"),
        set("b", InstanceKey::Int(2), "3"),
        set("a", InstanceKey::None, "4"),
        set("b", InstanceKey::Int(0), "5"),
        deposed,
    ])
    .unwrap();
    run.finish().unwrap();
    let listed: Vec<String> = store
        .addresses("default")
        .unwrap()
        .iter()
        .map(|a| a.to_string())
        .collect();
    assert_eq!(
        listed,
        [
            "terraform_data.a",
            "terraform_data.b[0]",
            "terraform_data.b[2]",
            "terraform_data.b[10]",
            "terraform_data.b[\"k\"]",
            "terraform_data.c",
        ],
        "case addresses_in_state_order"
    );
    let snap = store.snapshot("default").unwrap();
    let from_snapshot: Vec<_> = snap
        .resources
        .iter()
        .flat_map(|(r, rs)| rs.instances.keys().map(|k| r.instance(k.clone())))
        .collect();
    assert_eq!(
        store.addresses("default").unwrap(),
        from_snapshot,
        "case addresses_as_the_snapshot_lists_them"
    );
}
