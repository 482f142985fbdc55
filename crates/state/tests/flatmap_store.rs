//! Issue 15 item 3: objects of a v4 state held as a pre-0.12 flatmap
//! (`attributes_flat`) are kept by both stores, sealed like the attributes,
//! until the provider's UpgradeResourceState replaces them; stores made
//! before the column existed gain it on open with nothing lost.

use std::collections::BTreeMap;
use terrane_state::{
    pg_connect, Change, Encryption, InstanceKey, LockInfo, ObjectState, PgStore, ResourceAddr,
    Snapshot, SqliteStore, StateStore,
};

const SECRET: &str = "FLATMAP-SECRET-7d1c";

fn flat_object() -> ObjectState {
    let flat: BTreeMap<String, String> = [
        ("id", "old-1"),
        ("name", "one"),
        ("password", SECRET),
        ("ports.#", "2"),
        ("ports.1234", "80"),
        ("ports.5678", "443"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    ObjectState {
        attributes_flat: Some(flat),
        ..Default::default()
    }
}

fn upgraded_object() -> ObjectState {
    ObjectState {
        attributes: serde_json::json!({"id": "old-1", "name": "one", "password": SECRET, "ports": [80, 443]}).into(),
        schema_version: 1,
        ..Default::default()
    }
}

fn set(name: &str, object: ObjectState) -> Change {
    Change::SetObject {
        addr: ResourceAddr::managed("legacy_old", name).instance(InstanceKey::None),
        deposed: None,
        provider: "provider[\"registry.terraform.io/terrane/legacy\"]".into(),
        object,
    }
}

fn persist(store: &dyn StateStore, changes: &[Change]) -> Snapshot {
    let mut run = store
        .lock("default", LockInfo::new("OperationTypeApply", ""))
        .unwrap();
    run.persist(changes).unwrap();
    let snap = run.snapshot().unwrap();
    run.finish().unwrap();
    snap
}

fn object(s: &Snapshot, name: &str) -> ObjectState {
    let addr = ResourceAddr::managed("legacy_old", name).instance(InstanceKey::None);
    s.object(&addr, None).cloned().expect("object stored")
}

fn enc(pass: &str) -> Encryption {
    Encryption {
        passphrase: pass.into(),
        iterations: 1000,
    }
}

/// Every file of an SQLite store, concatenated (database, WAL, shm).
fn all_bytes(path: &std::path::Path) -> Vec<u8> {
    let mut out = Vec::new();
    for suffix in ["", "-wal", "-shm", "-journal"] {
        out.extend(std::fs::read(format!("{}{suffix}", path.display())).unwrap_or_default());
    }
    out
}

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

fn check(case: &str, ok: bool) {
    assert!(ok, "case {case}");
}

#[test]
fn item3_sqlite_keeps_flatmap_encrypted_until_upgrade() {
    let dir = terrane_testkit::temp_dir();
    let path = dir.path().join("flat.db");
    let key = enc("flat key");
    let store = SqliteStore::open(&path, Some(&key)).unwrap();
    let snap = persist(&store, &[set("o", flat_object())]);
    check("flatmap_kept_verbatim", object(&snap, "o") == flat_object());
    check(
        "flatmap_sealed_on_disk",
        !contains(&all_bytes(&path), SECRET),
    );
    drop(store);
    let reopened = SqliteStore::open(&path, Some(&key)).unwrap();
    check(
        "flatmap_read_back_with_key",
        reopened.snapshot("default").unwrap() == snap,
    );
    // Rotation re-seals the flatmap column too (to plaintext here, so the
    // secret must now be readable in the file: proof the column was
    // recoded, not left under the old key).
    let mut rot = SqliteStore::open(&path, Some(&key)).unwrap();
    rot.rotate(None).unwrap();
    let plain = SqliteStore::open(&path, None).unwrap();
    check(
        "rotation_keeps_flatmap",
        plain.snapshot("default").unwrap().resources == snap.resources,
    );
    check(
        "rotation_recoded_flatmap",
        contains(&all_bytes(&path), SECRET),
    );
    // The provider's upgrade replaces it: attributes, no flatmap.
    let up = persist(&plain, &[set("o", upgraded_object())]);
    check(
        "upgrade_replaces_flatmap",
        object(&up, "o") == upgraded_object(),
    );
    let c = rusqlite::Connection::open(&path).unwrap();
    let nulls: i64 = c
        .query_row(
            "SELECT count(*) FROM objects WHERE attributes_flat IS NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    check("upgraded_row_has_no_flatmap", nulls == 1);
}

#[test]
fn item3_sqlite_old_database_migrates() {
    let dir = terrane_testkit::temp_dir();
    let path = dir.path().join("old.db");
    let key = enc("old key");
    let before = {
        let store = SqliteStore::open(&path, Some(&key)).unwrap();
        persist(&store, &[set("kept", upgraded_object())])
    };
    // The store as a terrane without the column left it.
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch("ALTER TABLE objects DROP COLUMN attributes_flat")
            .unwrap();
    }
    let store = SqliteStore::open(&path, Some(&key)).unwrap();
    check(
        "old_objects_kept",
        store.snapshot("default").unwrap() == before,
    );
    let snap = persist(&store, &[set("o", flat_object())]);
    check(
        "migrated_store_holds_flatmap",
        object(&snap, "o") == flat_object(),
    );
    check(
        "migrated_store_keeps_old",
        object(&snap, "kept") == upgraded_object(),
    );
    check(
        "migrated_flatmap_sealed",
        !contains(&all_bytes(&path), SECRET),
    );
    // Opening again does not add it twice.
    check(
        "reopen_after_migration",
        SqliteStore::open(&path, Some(&key))
            .unwrap()
            .snapshot("default")
            .unwrap()
            == snap,
    );
}

fn pg_flat_rows(url: &str, schema: &str) -> Vec<Option<Vec<u8>>> {
    let mut c = pg_connect(url).unwrap();
    c.query(
        &format!("SELECT attributes_flat FROM {schema}.objects ORDER BY name"),
        &[],
    )
    .unwrap()
    .iter()
    .map(|r| r.get(0))
    .collect()
}

#[test]
fn item3_postgres_keeps_flatmap_encrypted_until_upgrade() {
    let Some(url) = terrane_testkit::pg_url() else {
        return;
    };
    let schema = format!("t_flat_{}", std::process::id());
    let key = enc("pg flat key");
    let store = PgStore::open(&url, &schema, Some(&key)).unwrap();
    let snap = persist(&store, &[set("o", flat_object())]);
    check(
        "pg_flatmap_kept_verbatim",
        object(&snap, "o") == flat_object(),
    );
    let rows = pg_flat_rows(&url, &schema);
    check(
        "pg_flatmap_sealed",
        rows.len() == 1 && rows[0].as_deref().is_some_and(|b| !contains(b, SECRET)),
    );
    check(
        "pg_flatmap_read_back_with_key",
        PgStore::open(&url, &schema, Some(&key))
            .unwrap()
            .snapshot("default")
            .unwrap()
            == snap,
    );
    let mut rot = PgStore::open(&url, &schema, Some(&key)).unwrap();
    rot.rotate(None).unwrap();
    let plain = PgStore::open(&url, &schema, None).unwrap();
    check(
        "pg_rotation_keeps_flatmap",
        plain.snapshot("default").unwrap().resources == snap.resources,
    );
    let rows = pg_flat_rows(&url, &schema);
    check(
        "pg_rotation_recoded_flatmap",
        rows[0].as_deref().is_some_and(|b| contains(b, SECRET)),
    );
    let up = persist(&plain, &[set("o", upgraded_object())]);
    check(
        "pg_upgrade_replaces_flatmap",
        object(&up, "o") == upgraded_object(),
    );
    check(
        "pg_upgraded_row_has_no_flatmap",
        pg_flat_rows(&url, &schema) == vec![None],
    );
}

#[test]
fn item3_postgres_old_schema_migrates() {
    let Some(url) = terrane_testkit::pg_url() else {
        return;
    };
    let schema = format!("t_flat_old_{}", std::process::id());
    let key = enc("pg old key");
    let before = {
        let store = PgStore::open(&url, &schema, Some(&key)).unwrap();
        persist(&store, &[set("kept", upgraded_object())])
    };
    pg_connect(&url)
        .unwrap()
        .batch_execute(&format!(
            "ALTER TABLE {schema}.objects DROP COLUMN attributes_flat"
        ))
        .unwrap();
    let store = PgStore::open(&url, &schema, Some(&key)).unwrap();
    check(
        "pg_old_objects_kept",
        store.snapshot("default").unwrap() == before,
    );
    let snap = persist(&store, &[set("o", flat_object())]);
    check(
        "pg_migrated_holds_flatmap",
        object(&snap, "o") == flat_object(),
    );
    check(
        "pg_migrated_keeps_old",
        object(&snap, "kept") == upgraded_object(),
    );
    check(
        "pg_migrated_flatmap_sealed",
        pg_flat_rows(&url, &schema)
            .iter()
            .flatten()
            .all(|b| !contains(b, SECRET)),
    );
}
