//! The embedded default store: one SQLite file (`.terrane/state.db`) in WAL
//! mode with `synchronous=FULL` (lock rows alone: `NORMAL`, see
//! [`lock_rows`]); every persisted change set is one
//! IMMEDIATE transaction touching only the rows it changes (indexed by
//! primary key), so its cost does not grow with the state.
//!
//! Locks are rows of the `locks` table, taken in a transaction. A lock
//! whose holder provably died (same host; its PID gone, or reused by a
//! process with another start time) is taken over, and the run says so
//! ([`Run::taken_over`]), as an OS file lock would have been released by
//! the kernel; a lock held from another host needs `force-unlock`. A file
//! that is not a terrane state database is refused before anything is
//! written to it (not even its journal mode changes).
//!
//! Files are private: the directory is created 0700 and the database 0600
//! (SQLite gives its -wal and -shm files the database's mode).

use crate::crypt::{Cipher, Encryption, NewKey};
use crate::error::{Result, StateError};
use crate::lock::LockInfo;
use crate::model::{Change, Snapshot};
use crate::rows::{
    key_json, module_json, object_aad, object_row, output_aad, output_row, serial_from_sql,
    serial_to_sql, snapshot_from_rows, ObjectRow, OutputRow, OBJECT_COLUMNS,
};
use crate::store::{Run, StateStore};
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

const FORMAT: &str = "terrane-state-1";

const SCHEMA: &str = "
CREATE TABLE meta(key TEXT PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE workspaces(name TEXT PRIMARY KEY, lineage TEXT NOT NULL, serial INTEGER NOT NULL, terraform_version TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE objects(
  workspace TEXT NOT NULL, module TEXT NOT NULL, mode TEXT NOT NULL, type TEXT NOT NULL, name TEXT NOT NULL,
  key TEXT NOT NULL, deposed TEXT NOT NULL, provider TEXT NOT NULL, schema_version INTEGER NOT NULL,
  tainted INTEGER NOT NULL, attributes BLOB NOT NULL, private BLOB, sensitive TEXT NOT NULL,
  dependencies TEXT NOT NULL, cbd INTEGER NOT NULL, identity_schema_version INTEGER, attributes_flat BLOB,
  PRIMARY KEY(workspace, module, mode, type, name, key, deposed)) WITHOUT ROWID;
CREATE TABLE outputs(workspace TEXT NOT NULL, name TEXT NOT NULL, value BLOB NOT NULL, type TEXT NOT NULL, sensitive INTEGER NOT NULL,
  PRIMARY KEY(workspace, name)) WITHOUT ROWID;
CREATE TABLE locks(workspace TEXT PRIMARY KEY, id TEXT NOT NULL, operation TEXT NOT NULL, info TEXT NOT NULL, who TEXT NOT NULL,
  created TEXT NOT NULL, pid INTEGER NOT NULL, host TEXT NOT NULL, start_time INTEGER) WITHOUT ROWID;
";

/// The SQLite state store.
pub struct SqliteStore {
    path: PathBuf,
    cipher: Option<Cipher>,
    /// Encrypted in format 1: only [`SqliteStore::rotate`] may use it.
    legacy_v1: bool,
}

/// Creates `dir` (and missing parents) 0700.
fn private_dir(dir: &Path) -> std::io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

fn set_wal(conn: &Connection, name: &str) -> Result<()> {
    conn.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))
        .map_err(|e| corrupt_or(name, e))?;
    conn.execute_batch("PRAGMA synchronous=FULL;")
        .map_err(|e| corrupt_or(name, e))
}

impl SqliteStore {
    /// The default location inside a working directory.
    pub fn default_path(workdir: &Path) -> PathBuf {
        workdir.join(".terrane").join("state.db")
    }

    /// Opens (creating if absent) the store at `path`. With `encryption`,
    /// the store must be encrypted with that passphrase, or be new.
    pub fn open(path: &Path, encryption: Option<&Encryption>) -> Result<SqliteStore> {
        SqliteStore::open_with(path, encryption, false)
    }

    /// Like [`SqliteStore::open`], but also opens a store encrypted in the
    /// old format 1, for [`SqliteStore::rotate`] to re-encrypt; reading or
    /// writing state through it is refused until then.
    pub fn open_for_rotation(path: &Path, encryption: Option<&Encryption>) -> Result<SqliteStore> {
        SqliteStore::open_with(path, encryption, true)
    }

    fn open_with(
        path: &Path,
        encryption: Option<&Encryption>,
        allow_legacy: bool,
    ) -> Result<SqliteStore> {
        let name = path.display().to_string();
        let io = |e: std::io::Error| StateError::Corrupt {
            path: name.clone(),
            detail: e.to_string(),
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            private_dir(dir).map_err(io)?;
        }
        // Create the file with its final mode, before SQLite would create it
        // with the umask's (an empty file is an empty database to SQLite).
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)
        {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(io(e)),
        }
        let store = SqliteStore {
            path: path.to_path_buf(),
            cipher: None,
            legacy_v1: false,
        };
        // Inspect with no pragma that writes: a foreign database is refused
        // untouched (journal mode included).
        let mut conn = store.raw_connect()?;
        let err = |e: rusqlite::Error| corrupt_or(&name, e);
        let tables: Vec<String> = {
            let mut st = conn
                .prepare("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")
                .map_err(err)?;
            let rows = st.query_map([], |r| r.get::<_, String>(0)).map_err(err)?;
            rows.collect::<std::result::Result<_, _>>().map_err(err)?
        };
        if !tables.is_empty() {
            let format: Option<String> = if tables.iter().any(|t| t == "meta") {
                conn.query_row("SELECT value FROM meta WHERE key='format'", [], |r| {
                    r.get(0)
                })
                .optional()
                .map_err(err)?
            } else {
                None
            };
            if format.as_deref() != Some(FORMAT) {
                return Err(StateError::Corrupt {
                    path: name,
                    detail: format!(
                        "it is an SQLite database, but not a terrane state (tables: {})",
                        tables.join(", ")
                    ),
                });
            }
        }
        // Ours (or new): now the journal mode and the file modes.
        set_wal(&conn, &name)?;
        if tables.is_empty() {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(err)?;
            let empty: bool = tx
                .query_row("SELECT count(*) = 0 FROM sqlite_master", [], |r| r.get(0))
                .map_err(err)?;
            if empty {
                tx.execute_batch(SCHEMA).map_err(err)?;
                tx.execute(
                    "INSERT INTO meta(key, value) VALUES ('format', ?1)",
                    params![FORMAT],
                )
                .map_err(err)?;
                if let Some(enc) = encryption {
                    let key = NewKey::derive(enc)?;
                    for (k, v) in key.meta_rows() {
                        tx.execute(
                            "INSERT INTO meta(key, value) VALUES (?1, ?2)",
                            params![k, v],
                        )
                        .map_err(err)?;
                    }
                }
            }
            tx.commit().map_err(err)?;
        } else {
            // Stores made before locks recorded the holder's start time, and
            // before objects could hold a pre-0.12 flatmap (encrypted like
            // the attributes; NULL for every object already stored).
            add_column(&mut conn, "locks", "start_time INTEGER").map_err(err)?;
            add_column(&mut conn, "objects", "attributes_flat BLOB").map_err(err)?;
        }
        // Files (and the default `.terrane` directory) left readable by an
        // earlier terrane are tightened, now that the store is known ours.
        let own_dir = path
            .parent()
            .filter(|d| d.file_name().is_some_and(|n| n == ".terrane"))
            .map(|d| (d.to_path_buf(), 0o700));
        for (f, mode) in own_dir.into_iter().chain(
            ["", "-wal", "-shm"]
                .iter()
                .map(|suffix| (PathBuf::from(format!("{}{suffix}", path.display())), 0o600)),
        ) {
            match std::fs::metadata(&f) {
                Ok(m) if m.permissions().mode() & 0o077 != 0 => {
                    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(mode))
                        .map_err(io)?
                }
                _ => {}
            }
        }
        let unlocked = crate::crypt::unlock(
            &mut |k| {
                conn.query_row("SELECT value FROM meta WHERE key=?1", params![k], |r| {
                    r.get(0)
                })
                .optional()
                .map_err(|e| corrupt_or(&name, e))
            },
            encryption,
            &name,
            allow_legacy,
        )?;
        Ok(SqliteStore {
            cipher: unlocked.cipher,
            legacy_v1: unlocked.legacy_v1,
            ..store
        })
    }

    fn name(&self) -> String {
        self.path.display().to_string()
    }

    /// A connection with no pragma that could write.
    fn raw_connect(&self) -> Result<Connection> {
        let name = self.name();
        let conn = Connection::open(&self.path).map_err(|e| corrupt_or(&name, e))?;
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .map_err(|e| corrupt_or(&name, e))?;
        Ok(conn)
    }

    fn connect(&self) -> Result<Connection> {
        let name = self.name();
        if self.legacy_v1 {
            return Err(StateError::OldEncryptionFormat { path: name });
        }
        let conn = self.raw_connect()?;
        set_wal(&conn, &name)?;
        Ok(conn)
    }

    /// Re-encrypts every stored value for `new` (None = decrypt), in one
    /// transaction, then rewrites the file (VACUUM) and empties the WAL, so
    /// no page keeps a value under the old key (or in plaintext). Refused
    /// while any workspace is locked. A format-1 store (opened with
    /// [`SqliteStore::open_for_rotation`]) comes out in the current format.
    pub fn rotate(&mut self, new: Option<&Encryption>) -> Result<()> {
        let name = self.name();
        let err = |e: rusqlite::Error| corrupt_or(&name, e);
        let mut conn = self.raw_connect()?;
        set_wal(&conn, &name)?;
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err)?;
        let locked: Option<(String, String)> = tx
            .query_row("SELECT workspace, id FROM locks LIMIT 1", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()
            .map_err(err)?;
        if let Some((workspace, _)) = locked {
            let holder = read_lock(&tx, &workspace)
                .map_err(err)?
                .expect("lock row just seen");
            return Err(StateError::Locked {
                workspace,
                holder: Box::new(holder),
            });
        }
        let new_key = new.map(NewKey::derive).transpose()?;
        let (old, old_v1) = (self.cipher.clone(), self.legacy_v1);
        let recode = |data: &[u8], aad: &[u8]| -> Result<Vec<u8>> {
            crate::crypt::recode(
                old.as_ref(),
                old_v1,
                new_key.as_ref().map(|k| &k.cipher),
                data,
                aad,
            )
            .ok_or_else(|| StateError::Decrypt {
                path: name.clone(),
                what: "a stored value".into(),
            })
        };
        {
            type Pk = (String, String, String, String, String, String, String);
            let mut st = tx.prepare("SELECT workspace, module, mode, type, name, key, deposed, attributes, private, attributes_flat FROM objects").map_err(err)?;
            type Sealed = (Vec<u8>, Option<Vec<u8>>, Option<Vec<u8>>);
            let rows: Vec<(Pk, Sealed)> = st
                .query_map([], |r| {
                    Ok((
                        (
                            r.get(0)?,
                            r.get(1)?,
                            r.get(2)?,
                            r.get(3)?,
                            r.get(4)?,
                            r.get(5)?,
                            r.get(6)?,
                        ),
                        (r.get(7)?, r.get(8)?, r.get(9)?),
                    ))
                })
                .map_err(err)?
                .collect::<std::result::Result<_, _>>()
                .map_err(err)?;
            for ((w, m, mo, t, n, k, d), (attrs, private, flat)) in rows {
                let aad = |column: &str| object_aad(&w, &m, &mo, &t, &n, &k, column);
                let private = private.map(|p| recode(&p, &aad("private"))).transpose()?;
                let flat = flat
                    .map(|f| recode(&f, &aad("attributes_flat")))
                    .transpose()?;
                let attrs = recode(&attrs, &aad("attributes"))?;
                tx.execute(
                    "UPDATE objects SET attributes=?8, private=?9, attributes_flat=?10 WHERE workspace=?1 AND module=?2 AND mode=?3 AND type=?4 AND name=?5 AND key=?6 AND deposed=?7",
                    params![w, m, mo, t, n, k, d, attrs, private, flat],
                )
                .map_err(err)?;
            }
            let mut st = tx
                .prepare("SELECT workspace, name, value FROM outputs")
                .map_err(err)?;
            let outs: Vec<(String, String, Vec<u8>)> = st
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .map_err(err)?
                .collect::<std::result::Result<_, _>>()
                .map_err(err)?;
            for (w, n, v) in outs {
                tx.execute(
                    "UPDATE outputs SET value=?1 WHERE workspace=?2 AND name=?3",
                    params![recode(&v, &output_aad(&w, &n))?, w, n],
                )
                .map_err(err)?;
            }
        }
        for k in crate::crypt::META_KEYS {
            tx.execute("DELETE FROM meta WHERE key=?1", params![k])
                .map_err(err)?;
        }
        if let Some(key) = &new_key {
            for (k, v) in key.meta_rows() {
                tx.execute(
                    "INSERT INTO meta(key, value) VALUES (?1, ?2)",
                    params![k, v],
                )
                .map_err(err)?;
            }
        }
        tx.commit().map_err(err)?;
        self.cipher = new_key.map(|k| k.cipher);
        self.legacy_v1 = false;
        // The old blobs still sit in free pages and WAL frames: rewrite the
        // database and truncate the WAL.
        conn.execute_batch("VACUUM;").map_err(err)?;
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .map_err(err)?;
        Ok(())
    }
}

/// Runs `f`, a change to lock rows only, with `synchronous=NORMAL`: its
/// commit is not flushed to disk by itself (the next state write's or the
/// closing checkpoint's flush carries it). A lock row lost to a power cut
/// names a holder that is gone, which the next run takes over; flushing
/// each lock and unlock cost a read-only run such as `plan` four fsyncs.
/// State changes keep `synchronous=FULL`: it is set back however `f` ends.
fn lock_rows<T>(
    conn: &mut Connection,
    f: impl FnOnce(&mut Connection) -> rusqlite::Result<T>,
) -> rusqlite::Result<T> {
    conn.execute_batch("PRAGMA synchronous=NORMAL;")?;
    let out = f(conn);
    let full = conn.execute_batch("PRAGMA synchronous=FULL;");
    let out = out?;
    full?;
    Ok(out)
}

/// SQLite's own words for a damaged or foreign file become `Corrupt`.
fn corrupt_or(path: &str, e: rusqlite::Error) -> StateError {
    let text = e.to_string();
    if text.contains("not a database") || text.contains("malformed") || text.contains("disk image")
    {
        StateError::Corrupt {
            path: path.into(),
            detail: text,
        }
    } else {
        StateError::Sqlite {
            path: path.into(),
            source: e,
        }
    }
}

fn read_lock(conn: &Connection, workspace: &str) -> rusqlite::Result<Option<LockInfo>> {
    conn.query_row("SELECT id, operation, info, who, created, pid, host, start_time FROM locks WHERE workspace=?1", params![workspace], |r| {
        Ok(LockInfo {
            id: r.get(0)?,
            operation: r.get(1)?,
            info: r.get(2)?,
            who: r.get(3)?,
            created: r.get(4)?,
            pid: r.get(5)?,
            host: r.get(6)?,
            start_time: r.get::<_, Option<i64>>(7)?.and_then(|t| u64::try_from(t).ok()),
        })
    })
    .optional()
}

/// One row of the columns [`OBJECT_COLUMNS`] names, in its order.
fn object_row_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<ObjectRow> {
    Ok(ObjectRow {
        module: r.get(0)?,
        mode: r.get(1)?,
        ty: r.get(2)?,
        name: r.get(3)?,
        key: r.get(4)?,
        deposed: r.get(5)?,
        provider: r.get(6)?,
        schema_version: r.get(7)?,
        tainted: r.get(8)?,
        attributes: r.get(9)?,
        private: r.get(10)?,
        sensitive: r.get(11)?,
        dependencies: r.get(12)?,
        cbd: r.get(13)?,
        identity_schema_version: r.get(14)?,
        attributes_flat: r.get(15)?,
    })
}

fn read_outputs(conn: &Connection, workspace: &str, name: &str) -> Result<Vec<OutputRow>> {
    let err = |e: rusqlite::Error| corrupt_or(name, e);
    let mut st = conn
        .prepare("SELECT name, value, type, sensitive FROM outputs WHERE workspace=?1")
        .map_err(err)?;
    let outputs = st
        .query_map(params![workspace], |r| {
            Ok(OutputRow {
                name: r.get(0)?,
                value: r.get(1)?,
                ty: r.get(2)?,
                sensitive: r.get(3)?,
            })
        })
        .map_err(err)?
        .collect::<std::result::Result<_, _>>()
        .map_err(err)?;
    Ok(outputs)
}

/// [`StateStore::stream`] within the read transaction `conn` is in: the
/// outputs, every object's dependencies (that column alone), then one
/// query per module and mode whose rows SQLite orders (sorting within
/// each resource, the primary key giving the rest), decoded one at a time.
fn stream_rows(
    conn: &Connection,
    workspace: &str,
    cipher: Option<&Cipher>,
    name: &str,
    visit: &mut crate::stream::Visit<'_>,
) -> Result<()> {
    use std::ops::ControlFlow;
    let err = |e: rusqlite::Error| corrupt_or(name, e);
    let exists = conn
        .query_row(
            "SELECT 1 FROM workspaces WHERE name=?1",
            params![workspace],
            |_| Ok(()),
        )
        .optional()
        .map_err(err)?
        .is_some();
    let (outputs, modules) = if exists {
        let outputs = read_outputs(conn, workspace, name)?;
        let mut st = conn
            .prepare("SELECT DISTINCT module FROM objects WHERE workspace=?1")
            .map_err(err)?;
        let modules: Vec<String> = st
            .query_map(params![workspace], |r| r.get(0))
            .map_err(err)?
            .collect::<std::result::Result<_, _>>()
            .map_err(err)?;
        (outputs, modules)
    } else {
        Default::default()
    };
    let outputs = crate::rows::outputs_from_rows(workspace, outputs, cipher, name)?;
    let start = crate::stream::Streamed::Start {
        outputs: &outputs,
        resources: !modules.is_empty(),
    };
    if visit(start).is_break() {
        return Ok(());
    }
    {
        let mut st = conn
            .prepare("SELECT module, mode, type, name, key, dependencies FROM objects WHERE workspace=?1 AND dependencies <> '[]'")
            .map_err(err)?;
        let mut rows = st.query(params![workspace]).map_err(err)?;
        while let Some(r) = rows.next().map_err(err)? {
            let text = |i: usize| r.get::<_, String>(i).map_err(err);
            let (module, mode, ty, name, key) = (text(0)?, text(1)?, text(2)?, text(3)?, text(4)?);
            let columns = [
                module.as_str(),
                mode.as_str(),
                ty.as_str(),
                name.as_str(),
                key.as_str(),
            ];
            if crate::stream::visit_dependencies(columns, &text(5)?, visit)?.is_break() {
                return Ok(());
            }
        }
    }
    let modules = crate::stream::modules_in_order(modules)?;
    let order = crate::stream::order_by(
        "COLLATE BINARY",
        "CAST(key AS INTEGER)",
        "json_extract(key, '$')",
    );
    let mut st = conn
        .prepare(&format!(
            "SELECT {OBJECT_COLUMNS} FROM objects WHERE workspace=?1 AND module=?2 AND mode=?3 {order}"
        ))
        .map_err(err)?;
    for module in &modules {
        for mode in [crate::Mode::Managed, crate::Mode::Data] {
            let mut rows = st
                .query(params![workspace, module, mode.as_str()])
                .map_err(err)?;
            while let Some(r) = rows.next().map_err(err)? {
                let row = object_row_of(r).map_err(err)?;
                let row = crate::rows::object_from_row(workspace, row, cipher, name)?;
                if let ControlFlow::Break(()) = crate::stream::visit_row(&row, visit) {
                    return Ok(());
                }
            }
        }
    }
    Ok(())
}

fn read_snapshot(
    conn: &Connection,
    workspace: &str,
    cipher: Option<&Cipher>,
    name: &str,
) -> Result<Snapshot> {
    let err = |e: rusqlite::Error| corrupt_or(name, e);
    let ws: Option<(String, i64, String)> = conn
        .query_row(
            "SELECT lineage, serial, terraform_version FROM workspaces WHERE name=?1",
            params![workspace],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()
        .map_err(err)?;
    let Some((lineage, serial, tfv)) = ws else {
        return Ok(Snapshot::empty());
    };
    let mut st = conn
        .prepare(&format!(
            "SELECT {OBJECT_COLUMNS} FROM objects WHERE workspace=?1"
        ))
        .map_err(err)?;
    let outputs = read_outputs(conn, workspace, name)?;
    // Each row decoded as it is read: the raw rows are never all held
    // beside the snapshot they make.
    let objects = st
        .query_map(params![workspace], object_row_of)
        .map_err(err)?
        .map(|r| r.map_err(err));
    snapshot_from_rows(
        workspace, lineage, serial, tfv, objects, outputs, cipher, name,
    )
}

impl StateStore for SqliteStore {
    fn cipher(&self) -> Option<&Cipher> {
        self.cipher.as_ref()
    }

    fn rotate_key(&mut self, new: Option<&Encryption>) -> Result<()> {
        self.rotate(new)
    }

    fn snapshot(&self, workspace: &str) -> Result<Snapshot> {
        let mut conn = self.connect()?;
        let name = self.name();
        let tx = conn.transaction().map_err(|e| corrupt_or(&name, e))?;
        read_snapshot(&tx, workspace, self.cipher.as_ref(), &name)
    }

    fn stream(&self, workspace: &str, visit: &mut crate::stream::Visit<'_>) -> Result<()> {
        let mut conn = self.connect()?;
        let name = self.name();
        let tx = conn.transaction().map_err(|e| corrupt_or(&name, e))?;
        stream_rows(&tx, workspace, self.cipher.as_ref(), &name, visit)
    }

    /// Read from the address columns alone, unless the store is encrypted
    /// (then the whole state is read, so a wrong key is still noticed by
    /// every read, as before).
    fn addresses(&self, workspace: &str) -> Result<Vec<crate::InstanceAddr>> {
        if self.cipher.is_some() {
            let s = self.snapshot(workspace)?;
            return Ok(s
                .resources
                .iter()
                .flat_map(|(raddr, r)| r.instances.keys().map(|k| raddr.instance(k.clone())))
                .collect());
        }
        let mut conn = self.connect()?;
        let name = self.name();
        let err = |e: rusqlite::Error| corrupt_or(&name, e);
        let tx = conn.transaction().map_err(err)?;
        let mut st = tx
            .prepare(
                "SELECT DISTINCT module, mode, type, name, key FROM objects WHERE workspace=?1",
            )
            .map_err(err)?;
        let mut rows = st.query(params![workspace]).map_err(err)?;
        let mut out = std::collections::BTreeSet::new();
        while let Some(r) = rows.next().map_err(err)? {
            let (module, mode, key): (String, String, String) = (
                r.get(0).map_err(err)?,
                r.get(1).map_err(err)?,
                r.get(4).map_err(err)?,
            );
            out.insert(crate::rows::addr_from_row(
                &module,
                &mode,
                r.get(2).map_err(err)?,
                r.get(3).map_err(err)?,
                &key,
            )?);
        }
        Ok(out.into_iter().collect())
    }

    fn lock(&self, workspace: &str, info: LockInfo) -> Result<Box<dyn Run>> {
        let name = self.name();
        let err = |e: rusqlite::Error| corrupt_or(&name, e);
        let mut conn = self.connect()?;
        let taken = lock_rows(&mut conn, |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let mut taken_over = None;
            if let Some(holder) = read_lock(&tx, workspace)? {
                if !holder.holder_is_dead() {
                    return Ok(Err(holder));
                }
                // The holder died without releasing it (SIGKILL, power
                // loss): the kernel would have released an OS file lock;
                // so do we.
                tx.execute(
                    "DELETE FROM locks WHERE workspace=?1 AND id=?2",
                    params![workspace, holder.id],
                )?;
                taken_over = Some(holder);
            }
            tx.execute(
                "INSERT INTO locks(workspace, id, operation, info, who, created, pid, host, start_time) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![workspace, info.id, info.operation, info.info, info.who, info.created, info.pid, info.host, info.start_time.and_then(|t| i64::try_from(t).ok())],
            )?;
            let fresh = Snapshot::empty();
            tx.execute(
                "INSERT OR IGNORE INTO workspaces(name, lineage, serial, terraform_version) VALUES (?1, ?2, 0, ?3)",
                params![workspace, fresh.lineage, fresh.terraform_version],
            )?;
            tx.commit()?;
            Ok(Ok(taken_over))
        })
        .map_err(err)?;
        let taken_over = match taken {
            Ok(t) => t,
            Err(holder) => {
                return Err(StateError::Locked {
                    workspace: workspace.into(),
                    holder: Box::new(holder),
                })
            }
        };
        Ok(Box::new(SqliteRun {
            conn,
            workspace: workspace.into(),
            info,
            cipher: self.cipher.clone(),
            name,
            released: false,
            taken_over,
        }))
    }

    fn force_unlock(&self, workspace: &str, id: &str) -> Result<()> {
        let name = self.name();
        let conn = self.connect()?;
        let n = conn
            .execute(
                "DELETE FROM locks WHERE workspace=?1 AND id=?2",
                params![workspace, id],
            )
            .map_err(|e| corrupt_or(&name, e))?;
        if n == 0 {
            return Err(StateError::NoSuchLock {
                workspace: workspace.into(),
                id: id.into(),
            });
        }
        Ok(())
    }

    fn workspaces(&self) -> Result<Vec<String>> {
        let name = self.name();
        let err = |e: rusqlite::Error| corrupt_or(&name, e);
        let conn = self.connect()?;
        let mut st = conn
            .prepare("SELECT name FROM workspaces ORDER BY name")
            .map_err(err)?;
        let names = st
            .query_map([], |r| r.get(0))
            .map_err(err)?
            .collect::<std::result::Result<_, _>>()
            .map_err(err)?;
        Ok(names)
    }

    fn delete_workspace(&self, workspace: &str) -> Result<()> {
        if workspace == "default" {
            return Err(StateError::DefaultWorkspace);
        }
        let name = self.name();
        let err = |e: rusqlite::Error| corrupt_or(&name, e);
        let mut conn = self.connect()?;
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err)?;
        if let Some(holder) = read_lock(&tx, workspace).map_err(err)? {
            return Err(StateError::Locked {
                workspace: workspace.into(),
                holder: Box::new(holder),
            });
        }
        if tx
            .execute("DELETE FROM workspaces WHERE name=?1", params![workspace])
            .map_err(err)?
            == 0
        {
            return Err(StateError::NoWorkspace(workspace.into()));
        }
        tx.execute("DELETE FROM objects WHERE workspace=?1", params![workspace])
            .map_err(err)?;
        tx.execute("DELETE FROM outputs WHERE workspace=?1", params![workspace])
            .map_err(err)?;
        tx.commit().map_err(err)
    }
}

struct SqliteRun {
    conn: Connection,
    workspace: String,
    info: LockInfo,
    cipher: Option<Cipher>,
    name: String,
    released: bool,
    taken_over: Option<LockInfo>,
}

impl SqliteRun {
    fn write(
        &mut self,
        f: impl FnOnce(&rusqlite::Transaction<'_>, &str, Option<&Cipher>) -> rusqlite::Result<()>,
        bump_to: Option<(String, u64)>,
    ) -> Result<u64> {
        let name = self.name.clone();
        let err = |e: rusqlite::Error| corrupt_or(&name, e);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err)?;
        let holder: Option<String> = tx
            .prepare_cached("SELECT id FROM locks WHERE workspace=?1")
            .and_then(|mut st| {
                st.query_row(params![self.workspace], |r| r.get(0))
                    .optional()
            })
            .map_err(err)?;
        if holder.as_deref() != Some(self.info.id.as_str()) {
            return Err(StateError::LockLost {
                workspace: self.workspace.clone(),
                id: self.info.id.clone(),
            });
        }
        f(&tx, &self.workspace, self.cipher.as_ref()).map_err(err)?;
        let serial: i64 = match bump_to {
            None => tx
                .prepare_cached("UPDATE workspaces SET serial = serial + 1 WHERE name=?1 AND serial < 9223372036854775807 RETURNING serial")
                .and_then(|mut st| st.query_row(params![self.workspace], |r| r.get::<_, i64>(0)).optional())
                .map_err(err)?
                .ok_or_else(|| StateError::Data { what: "serial".into(), detail: format!("workspace {:?} is at the largest serial ({}); nothing was written", self.workspace, i64::MAX) })?,
            Some((lineage, serial)) => {
                let serial = serial_to_sql(serial)?;
                tx.execute("UPDATE workspaces SET lineage=?2, serial=?3 WHERE name=?1", params![self.workspace, lineage, serial]).map_err(err)?;
                serial
            }
        };
        tx.commit().map_err(err)?;
        serial_from_sql(serial, &name)
    }
}

/// Adds the column `decl` (its name, then its type) to `table` unless the
/// table has it: a store made by an earlier terrane migrates on open, its
/// rows kept. One IMMEDIATE transaction, so two processes opening the same
/// old store at once add it once.
/// Adds a column an older store lacks. The check is a plain read first:
/// opening a current store takes no write lock, so a reader (`show`,
/// `state list`) never waits behind a running apply's transactions. Only a
/// store that lacks the column takes the write lock, and checks again under
/// it.
fn add_column(conn: &mut Connection, table: &str, decl: &str) -> rusqlite::Result<()> {
    let column = decl.split_whitespace().next().unwrap_or_default();
    let has = |c: &Connection| -> rusqlite::Result<bool> {
        c.query_row(
            "SELECT count(*) > 0 FROM pragma_table_info(?1) WHERE name=?2",
            params![table, column],
            |r| r.get(0),
        )
    };
    if has(conn)? {
        return Ok(());
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    if !has(&tx)? {
        tx.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {decl}"))?;
    }
    tx.commit()
}

fn insert_object(
    tx: &rusqlite::Transaction<'_>,
    workspace: &str,
    r: &ObjectRow,
) -> rusqlite::Result<()> {
    tx.prepare_cached(
        "INSERT OR REPLACE INTO objects(workspace, module, mode, type, name, key, deposed, provider, schema_version, tainted, attributes, private, sensitive, dependencies, cbd, identity_schema_version, attributes_flat)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
    )?
    .execute(params![workspace, r.module, r.mode, r.ty, r.name, r.key, r.deposed, r.provider, r.schema_version, r.tainted, r.attributes, r.private, r.sensitive, r.dependencies, r.cbd, r.identity_schema_version, r.attributes_flat],
    )?;
    Ok(())
}

fn apply_change(
    tx: &rusqlite::Transaction<'_>,
    workspace: &str,
    cipher: Option<&Cipher>,
    c: &Change,
) -> rusqlite::Result<()> {
    match c {
        Change::SetObject {
            addr,
            deposed,
            provider,
            object,
        } => {
            // All instances of a resource share its provider configuration;
            // rewrite the others only when it actually changed (one indexed
            // probe normally, so the cost stays independent of the count).
            let (m, mode) = (
                module_json(&addr.resource.module),
                addr.resource.mode.as_str(),
            );
            // The rows of a resource always agree on the provider, so the
            // first one tells.
            let current: Option<String> = tx
                .prepare_cached("SELECT provider FROM objects WHERE workspace=?1 AND module=?2 AND mode=?3 AND type=?4 AND name=?5 LIMIT 1")?
                .query_row(params![workspace, m, mode, addr.resource.ty, addr.resource.name], |r| r.get(0))
                .optional()?;
            // (An instance key of a provider with for_each is the
            // object's own: only the configuration is compared.)
            let config = crate::model::split_provider_instance(provider).0;
            if current.is_some_and(|p| crate::model::split_provider_instance(&p).0 != config) {
                tx.execute(
                    "UPDATE objects SET provider=?6 WHERE workspace=?1 AND module=?2 AND mode=?3 AND type=?4 AND name=?5",
                    params![workspace, m, mode, addr.resource.ty, addr.resource.name, config],
                )?;
            }
            insert_object(
                tx,
                workspace,
                &object_row(
                    workspace,
                    addr,
                    deposed.as_deref(),
                    provider,
                    object,
                    cipher,
                ),
            )?;
        }
        Change::RemoveObject { addr, deposed } => {
            tx.prepare_cached("DELETE FROM objects WHERE workspace=?1 AND module=?2 AND mode=?3 AND type=?4 AND name=?5 AND key=?6 AND deposed=?7")?.execute(
                params![workspace, module_json(&addr.resource.module), addr.resource.mode.as_str(), addr.resource.ty, addr.resource.name, key_json(&addr.key), deposed.as_deref().unwrap_or("")],
            )?;
        }
        Change::Depose { addr, key } => {
            tx.execute(
                "UPDATE objects SET deposed=?7 WHERE workspace=?1 AND module=?2 AND mode=?3 AND type=?4 AND name=?5 AND key=?6 AND deposed=''",
                params![workspace, module_json(&addr.resource.module), addr.resource.mode.as_str(), addr.resource.ty, addr.resource.name, key_json(&addr.key), key],
            )?;
        }
        Change::SetOutput { name, output } => {
            let r = output_row(workspace, name, output, cipher);
            tx.execute("INSERT OR REPLACE INTO outputs(workspace, name, value, type, sensitive) VALUES (?1, ?2, ?3, ?4, ?5)", params![workspace, r.name, r.value, r.ty, r.sensitive])?;
        }
        Change::RemoveOutput { name } => {
            tx.execute(
                "DELETE FROM outputs WHERE workspace=?1 AND name=?2",
                params![workspace, name],
            )?;
        }
    }
    Ok(())
}

impl Run for SqliteRun {
    fn lock_info(&self) -> &LockInfo {
        &self.info
    }

    fn snapshot(&mut self) -> Result<Snapshot> {
        read_snapshot(
            &self.conn,
            &self.workspace,
            self.cipher.as_ref(),
            &self.name,
        )
    }

    fn persist(&mut self, changes: &[Change]) -> Result<u64> {
        self.write(
            |tx, ws, cipher| {
                for c in changes {
                    apply_change(tx, ws, cipher, c)?;
                }
                Ok(())
            },
            None,
        )
    }

    fn replace(&mut self, s: &Snapshot) -> Result<u64> {
        let snap = s.clone();
        self.write(
            move |tx, ws, cipher| {
                tx.execute("DELETE FROM objects WHERE workspace=?1", params![ws])?;
                tx.execute("DELETE FROM outputs WHERE workspace=?1", params![ws])?;
                tx.execute(
                    "UPDATE workspaces SET terraform_version=?2 WHERE name=?1",
                    params![ws, snap.terraform_version],
                )?;
                for c in crate::model::changes_for(&snap) {
                    apply_change(tx, ws, cipher, &c)?;
                }
                Ok(())
            },
            Some((s.lineage.clone(), s.serial)),
        )
    }

    fn taken_over(&self) -> Option<&LockInfo> {
        self.taken_over.as_ref()
    }

    fn finish(mut self: Box<Self>) -> Result<()> {
        self.released = true;
        let name = self.name.clone();
        self.unlock().map_err(|e| corrupt_or(&name, e))?;
        Ok(())
    }
}

impl SqliteRun {
    fn unlock(&mut self) -> rusqlite::Result<usize> {
        let (workspace, id) = (&self.workspace, &self.info.id);
        lock_rows(&mut self.conn, |conn| {
            conn.execute(
                "DELETE FROM locks WHERE workspace=?1 AND id=?2",
                params![workspace, id],
            )
        })
    }
}

impl Drop for SqliteRun {
    fn drop(&mut self) {
        if !self.released {
            let _ = self.unlock();
        }
    }
}
