//! Opening an SQLite store: a reader opens a current store without the
//! write lock (so `show` or `state list` beside a running apply neither
//! waits for nor fails on the apply's transactions), and a store made
//! before a column existed gains it on open.

use terrane_state::{LockInfo, SqliteStore, StateStore};

fn has_column(db: &std::path::Path, table: &str, column: &str) -> bool {
    let c = rusqlite::Connection::open(db).unwrap();
    c.query_row(
        "SELECT count(*) > 0 FROM pragma_table_info(?1) WHERE name=?2",
        rusqlite::params![table, column],
        |r| r.get(0),
    )
    .unwrap()
}

fn check(case: &str, ok: bool, detail: &str) {
    assert!(ok, "case {case}: {detail}");
}

#[test]
fn a_current_store_opens_while_a_writer_holds_the_lock() {
    let dir = terrane_testkit::temp_dir();
    let db = dir.path().join("busy.db");
    SqliteStore::open(&db, None).unwrap();
    // Another process's apply, in the middle of a write transaction.
    let writer = rusqlite::Connection::open(&db).unwrap();
    writer
        .execute_batch("BEGIN IMMEDIATE; INSERT INTO meta(key, value) VALUES ('in-flight', 'x');")
        .unwrap();
    let opened = SqliteStore::open(&db, None);
    check(
        "open_beside_writer",
        opened.is_ok(),
        &format!("{:?}", opened.as_ref().err()),
    );
    let snap = opened.unwrap().snapshot("default");
    check(
        "snapshot_beside_writer",
        snap.is_ok(),
        &format!("{:?}", snap.as_ref().err()),
    );
    writer.execute_batch("ROLLBACK").unwrap();
}

#[test]
fn a_store_made_before_a_column_existed_gains_it() {
    let cases: &[(&str, &str, &str)] = &[
        ("lock_start_time", "locks", "start_time"),
        ("object_flatmap", "objects", "attributes_flat"),
    ];
    for (case, table, column) in cases {
        let dir = terrane_testkit::temp_dir();
        let db = dir.path().join("old.db");
        SqliteStore::open(&db, None).unwrap();
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch(&format!("ALTER TABLE {table} DROP COLUMN {column}"))
            .unwrap();
        drop(c);
        check(case, !has_column(&db, table, column), "column still there");
        let store = SqliteStore::open(&db, None)
            .unwrap_or_else(|e| panic!("case {case}: old store must open: {e}"));
        check(case, has_column(&db, table, column), "column not added");
        // The upgraded store works: a lock is recorded and released, and
        // the state reads.
        let run = store
            .lock("default", LockInfo::new("OperationTypePlan", ""))
            .unwrap_or_else(|e| panic!("case {case}: lock: {e}"));
        run.finish().unwrap();
        let snap = store.snapshot("default");
        check(case, snap.is_ok(), &format!("{:?}", snap.err()));
        // A second open finds it current, and adds nothing.
        SqliteStore::open(&db, None).unwrap_or_else(|e| panic!("case {case}: reopen: {e}"));
    }
}
