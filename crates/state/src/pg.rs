//! The PostgreSQL store, for teams: the same semantics as the SQLite store
//! on a shared server. Tables live in one schema (default `terrane`) and
//! are created on first use; workspaces are rows.
//!
//! Locks are **session advisory locks** keyed by a hash of schema and
//! workspace, held by the run's own connection: if the holder crashes, its
//! connection dies and the lock is released by the server. A `locks` row
//! carries the holder's details for the error a second writer gets, and the
//! holder's backend pid so `force-unlock` can end a stuck session.

use crate::crypt::{Cipher, Encryption, NewKey};
use crate::error::{Result, StateError};
use crate::lock::LockInfo;
use crate::model::{Change, Snapshot};
use crate::rows::{
    key_json, module_json, object_aad, object_row, output_aad, output_row, serial_from_sql,
    serial_to_sql, snapshot_from_rows, ObjectRow, OutputRow, OBJECT_COLUMNS,
};
use crate::store::{Run, StateStore};
use postgres::{Client, GenericClient};

/// The PostgreSQL state store.
pub struct PgStore {
    url: String,
    schema: String,
    cipher: Option<Cipher>,
    /// Encrypted in format 1: only [`PgStore::rotate`] may use it.
    legacy_v1: bool,
}

fn valid_schema_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() < 60
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !s.starts_with(|c: char| c.is_ascii_digit())
}

impl PgStore {
    /// Connects to `url`, creating the schema's tables on first use.
    pub fn open(url: &str, schema: &str, encryption: Option<&Encryption>) -> Result<PgStore> {
        PgStore::open_with(url, schema, encryption, false)
    }

    /// Like [`PgStore::open`], but also opens a store encrypted in the old
    /// format 1, for [`PgStore::rotate`] to re-encrypt.
    pub fn open_for_rotation(
        url: &str,
        schema: &str,
        encryption: Option<&Encryption>,
    ) -> Result<PgStore> {
        PgStore::open_with(url, schema, encryption, true)
    }

    fn open_with(
        url: &str,
        schema: &str,
        encryption: Option<&Encryption>,
        allow_legacy: bool,
    ) -> Result<PgStore> {
        if !valid_schema_name(schema) {
            return Err(StateError::Data {
                what: "PostgreSQL schema name".into(),
                detail: format!("{schema:?} must be lowercase letters, digits and underscores"),
            });
        }
        let mut store = PgStore {
            url: url.into(),
            schema: schema.into(),
            cipher: None,
            legacy_v1: false,
        };
        let mut c = store.client()?;
        let s = &store.schema;
        let mut tx = c.transaction()?;
        // Serialize concurrent first-time creation.
        tx.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
            &[&format!("terrane-schema-init/{s}")],
        )?;
        tx.batch_execute(&format!(
            "CREATE SCHEMA IF NOT EXISTS {s};
             CREATE TABLE IF NOT EXISTS {s}.meta(key TEXT PRIMARY KEY, value BYTEA NOT NULL);
             CREATE TABLE IF NOT EXISTS {s}.workspaces(name TEXT PRIMARY KEY, lineage TEXT NOT NULL, serial BIGINT NOT NULL, terraform_version TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS {s}.objects(
               workspace TEXT NOT NULL, module TEXT NOT NULL, mode TEXT NOT NULL, type TEXT NOT NULL, name TEXT NOT NULL,
               key TEXT NOT NULL, deposed TEXT NOT NULL, provider TEXT NOT NULL, schema_version BIGINT NOT NULL,
               tainted BOOLEAN NOT NULL, attributes BYTEA NOT NULL, private BYTEA, sensitive TEXT NOT NULL,
               dependencies TEXT NOT NULL, cbd BOOLEAN NOT NULL, identity_schema_version BIGINT,
               PRIMARY KEY(workspace, module, mode, type, name, key, deposed));
             -- Schemas made before objects could hold a pre-0.12 flatmap
             -- (sealed like the attributes; NULL once upgraded) migrate here.
             ALTER TABLE {s}.objects ADD COLUMN IF NOT EXISTS attributes_flat BYTEA;
             CREATE TABLE IF NOT EXISTS {s}.outputs(workspace TEXT NOT NULL, name TEXT NOT NULL, value BYTEA NOT NULL, type TEXT NOT NULL,
               sensitive BOOLEAN NOT NULL, PRIMARY KEY(workspace, name));
             CREATE TABLE IF NOT EXISTS {s}.locks(workspace TEXT PRIMARY KEY, id TEXT NOT NULL, operation TEXT NOT NULL, info TEXT NOT NULL,
               who TEXT NOT NULL, created TEXT NOT NULL, pid BIGINT NOT NULL, host TEXT NOT NULL, backend_pid INTEGER NOT NULL);"
        ))?;
        let check: Option<Vec<u8>> = tx
            .query_opt(
                &format!("SELECT value FROM {s}.meta WHERE key='key_check'"),
                &[],
            )?
            .map(|r| r.get(0));
        let fresh: i64 = tx
            .query_one(&format!("SELECT count(*) FROM {s}.workspaces"), &[])?
            .get(0);
        let what = format!("PostgreSQL schema {s}");
        store.cipher = match (check, encryption) {
            (None, Some(enc)) if fresh == 0 => {
                let key = NewKey::derive(enc)?;
                for (k, v) in key.meta_rows() {
                    tx.execute(
                        &format!("INSERT INTO {s}.meta(key, value) VALUES ($1, $2)"),
                        &[&k, &v],
                    )?;
                }
                Some(key.cipher)
            }
            _ => {
                let mut get = |k: &str| -> Result<Option<Vec<u8>>> {
                    Ok(tx
                        .query_opt(&format!("SELECT value FROM {s}.meta WHERE key=$1"), &[&k])?
                        .map(|r| r.get(0)))
                };
                let unlocked = crate::crypt::unlock(&mut get, encryption, &what, allow_legacy)?;
                store.legacy_v1 = unlocked.legacy_v1;
                unlocked.cipher
            }
        };
        tx.commit()?;
        Ok(store)
    }

    /// Re-encrypts every stored value for `new` (None = decrypt) in one
    /// transaction. Refused while any workspace is locked.
    pub fn rotate(&mut self, new: Option<&Encryption>) -> Result<()> {
        let s = self.schema.clone();
        let what = format!("PostgreSQL schema {s}");
        let mut c = pg_connect(&self.url)?;
        let mut tx = c.transaction()?;
        tx.execute(
            &format!("LOCK TABLE {s}.locks, {s}.objects, {s}.outputs, {s}.meta IN EXCLUSIVE MODE"),
            &[],
        )?;
        if let Some(w) = tx.query_opt(&format!("SELECT workspace FROM {s}.locks LIMIT 1"), &[])? {
            let workspace: String = w.get(0);
            let holder = read_lock(&mut tx, &s, &workspace)?.expect("lock row just seen");
            return Err(StateError::Locked {
                workspace,
                holder: Box::new(holder),
            });
        }
        let new_key = new.map(NewKey::derive).transpose()?;
        let old = self.cipher.clone();
        let recode = |data: &[u8], aad: &[u8]| -> Result<Vec<u8>> {
            crate::crypt::recode(
                old.as_ref(),
                self.legacy_v1,
                new_key.as_ref().map(|k| &k.cipher),
                data,
                aad,
            )
            .ok_or_else(|| StateError::Decrypt {
                path: what.clone(),
                what: "a stored value".into(),
            })
        };
        let rows = tx.query(&format!("SELECT workspace, module, mode, type, name, key, deposed, attributes, private, attributes_flat FROM {s}.objects"), &[])?;
        for r in rows {
            let (attrs, private): (Vec<u8>, Option<Vec<u8>>) = (r.get(7), r.get(8));
            let flat: Option<Vec<u8>> = r.get(9);
            let col = |i: usize| r.get::<_, String>(i);
            let aad = |column: &str| {
                object_aad(&col(0), &col(1), &col(2), &col(3), &col(4), &col(5), column)
            };
            let private = private.map(|p| recode(&p, &aad("private"))).transpose()?;
            let flat = flat
                .map(|f| recode(&f, &aad("attributes_flat")))
                .transpose()?;
            let attrs = recode(&attrs, &aad("attributes"))?;
            tx.execute(
                &format!("UPDATE {s}.objects SET attributes=$8, private=$9, attributes_flat=$10 WHERE workspace=$1 AND module=$2 AND mode=$3 AND type=$4 AND name=$5 AND key=$6 AND deposed=$7"),
                &[&r.get::<_, String>(0), &r.get::<_, String>(1), &r.get::<_, String>(2), &r.get::<_, String>(3), &r.get::<_, String>(4), &r.get::<_, String>(5), &r.get::<_, String>(6), &attrs, &private, &flat],
            )?;
        }
        for r in tx.query(
            &format!("SELECT workspace, name, value FROM {s}.outputs"),
            &[],
        )? {
            let (w, n, v): (String, String, Vec<u8>) = (r.get(0), r.get(1), r.get(2));
            tx.execute(
                &format!("UPDATE {s}.outputs SET value=$3 WHERE workspace=$1 AND name=$2"),
                &[&w, &n, &recode(&v, &output_aad(&w, &n))?],
            )?;
        }
        tx.execute(
            &format!("DELETE FROM {s}.meta WHERE key = ANY($1)"),
            &[&crate::crypt::META_KEYS],
        )?;
        if let Some(key) = &new_key {
            for (k, v) in key.meta_rows() {
                tx.execute(
                    &format!("INSERT INTO {s}.meta(key, value) VALUES ($1, $2)"),
                    &[&k, &v],
                )?;
            }
        }
        tx.commit()?;
        // Old row versions keep the old blobs until vacuumed: rewrite now.
        c.batch_execute(&format!("VACUUM FULL {s}.objects, {s}.outputs, {s}.meta"))?;
        self.cipher = new_key.map(|k| k.cipher);
        self.legacy_v1 = false;
        Ok(())
    }

    fn client(&self) -> Result<Client> {
        if self.legacy_v1 {
            return Err(StateError::OldEncryptionFormat {
                path: format!("PostgreSQL schema {}", self.schema),
            });
        }
        pg_connect(&self.url)
    }

    fn lock_key(&self, workspace: &str) -> String {
        format!("terrane-state/{}/{workspace}", self.schema)
    }
}

/// Connects to `url` (a `postgres://` URL or libpq's `key=value` form),
/// honouring libpq's `sslmode` (default `prefer`) and `sslrootcert`: TLS
/// over rustls, `verify-ca` checks the issuer, `verify-full` also the host
/// name (see terrane-pgtls).
pub fn pg_connect(url: &str) -> Result<Client> {
    let (config, tls) = terrane_pgtls::parse(url).map_err(|e| StateError::PostgresSession(e.0))?;
    let attempts = tls
        .for_config(&config)
        .attempts()
        .map_err(|e| StateError::PostgresSession(e.0))?;
    let config = postgres::Config::from(config);
    terrane_pgtls::connect_blocking(attempts, |mode, tls| {
        config.clone().ssl_mode(mode).connect(tls)
    })
    .map_err(|e| StateError::PostgresSession(format!("cannot connect: {}", with_causes(&e))))
}

/// An error and its causes, `: `-separated (tokio-postgres shows only the
/// kind, "db error" or "error performing TLS handshake", by itself).
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(&format!(": {s}"));
        source = s.source();
    }
    text
}

fn read_lock(c: &mut impl GenericClient, s: &str, workspace: &str) -> Result<Option<LockInfo>> {
    let row = c.query_opt(
        &format!(
            "SELECT id, operation, info, who, created, pid, host FROM {s}.locks WHERE workspace=$1"
        ),
        &[&workspace],
    )?;
    Ok(row.map(|r| LockInfo {
        id: r.get(0),
        operation: r.get(1),
        info: r.get(2),
        who: r.get(3),
        created: r.get(4),
        pid: r.get::<_, i64>(5) as u32,
        host: r.get(6),
        start_time: None,
    }))
}

/// One row of the columns [`OBJECT_COLUMNS`] names, in its order.
fn object_row_of(r: &postgres::Row) -> ObjectRow {
    ObjectRow {
        module: r.get(0),
        mode: r.get(1),
        ty: r.get(2),
        name: r.get(3),
        key: r.get(4),
        deposed: r.get(5),
        provider: r.get(6),
        schema_version: r.get(7),
        tainted: r.get(8),
        attributes: r.get(9),
        private: r.get(10),
        sensitive: r.get(11),
        dependencies: r.get(12),
        cbd: r.get(13),
        identity_schema_version: r.get(14),
        attributes_flat: r.get(15),
    }
}

fn read_outputs(c: &mut impl GenericClient, s: &str, workspace: &str) -> Result<Vec<OutputRow>> {
    Ok(c.query(
        &format!("SELECT name, value, type, sensitive FROM {s}.outputs WHERE workspace=$1"),
        &[&workspace],
    )?
    .iter()
    .map(|r| OutputRow {
        name: r.get(0),
        value: r.get(1),
        ty: r.get(2),
        sensitive: r.get(3),
    })
    .collect())
}

/// A read-only transaction that sees one snapshot of the database.
fn read_transaction(c: &mut Client) -> Result<postgres::Transaction<'_>> {
    Ok(c.build_transaction()
        .isolation_level(postgres::IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()?)
}

/// Rows fetched per round trip while streaming.
const STREAM_BATCH: i32 = 256;

/// [`StateStore::stream`] within the read transaction `tx`: the outputs,
/// every object's dependencies (that column alone), then one query per
/// module and mode, ordered by the server, read through a portal a batch
/// at a time and decoded one row at a time.
fn stream_rows(
    tx: &mut postgres::Transaction<'_>,
    s: &str,
    workspace: &str,
    cipher: Option<&Cipher>,
    visit: &mut crate::stream::Visit<'_>,
) -> Result<()> {
    let path = format!("PostgreSQL schema {s}");
    let exists = tx
        .query_opt(
            &format!("SELECT 1 FROM {s}.workspaces WHERE name=$1"),
            &[&workspace],
        )?
        .is_some();
    let (outputs, modules) = if exists {
        let outputs = read_outputs(tx, s, workspace)?;
        let modules: Vec<String> = tx
            .query(
                &format!("SELECT DISTINCT module FROM {s}.objects WHERE workspace=$1"),
                &[&workspace],
            )?
            .iter()
            .map(|r| r.get(0))
            .collect();
        (outputs, modules)
    } else {
        Default::default()
    };
    let outputs = crate::rows::outputs_from_rows(workspace, outputs, cipher, &path)?;
    let start = crate::stream::Streamed::Start {
        outputs: &outputs,
        resources: !modules.is_empty(),
    };
    if visit(start).is_break() {
        return Ok(());
    }
    let portal = tx.bind(
        &format!("SELECT module, mode, type, name, key, dependencies FROM {s}.objects WHERE workspace=$1 AND dependencies <> '[]'"),
        &[&workspace],
    )?;
    loop {
        let rows = tx.query_portal(&portal, STREAM_BATCH)?;
        if rows.is_empty() {
            break;
        }
        for r in rows {
            let columns = [r.get(0), r.get(1), r.get(2), r.get(3), r.get(4)];
            if crate::stream::visit_dependencies(columns, r.get(5), visit)?.is_break() {
                return Ok(());
            }
        }
    }
    let modules = crate::stream::modules_in_order(modules)?;
    let order = crate::stream::order_by("COLLATE \"C\"", "key::bigint", "(key::jsonb #>> '{}')");
    let query = format!(
        "SELECT {OBJECT_COLUMNS} FROM {s}.objects WHERE workspace=$1 AND module=$2 AND mode=$3 {order}"
    );
    for module in &modules {
        for mode in [crate::Mode::Managed, crate::Mode::Data] {
            let portal = tx.bind(&query, &[&workspace, module, &mode.as_str()])?;
            loop {
                let rows = tx.query_portal(&portal, STREAM_BATCH)?;
                if rows.is_empty() {
                    break;
                }
                for r in &rows {
                    let row =
                        crate::rows::object_from_row(workspace, object_row_of(r), cipher, &path)?;
                    if crate::stream::visit_row(&row, visit).is_break() {
                        return Ok(());
                    }
                }
            }
        }
    }
    Ok(())
}

fn read_snapshot(
    c: &mut impl GenericClient,
    s: &str,
    workspace: &str,
    cipher: Option<&Cipher>,
) -> Result<Snapshot> {
    let Some(ws) = c.query_opt(
        &format!("SELECT lineage, serial, terraform_version FROM {s}.workspaces WHERE name=$1"),
        &[&workspace],
    )?
    else {
        return Ok(Snapshot::empty());
    };
    let objects: Vec<ObjectRow> = c
        .query(
            &format!("SELECT {OBJECT_COLUMNS} FROM {s}.objects WHERE workspace=$1"),
            &[&workspace],
        )?
        .iter()
        .map(object_row_of)
        .collect();
    let outputs = read_outputs(c, s, workspace)?;
    let objects = objects.into_iter().map(Ok);
    snapshot_from_rows(
        workspace,
        ws.get(0),
        ws.get(1),
        ws.get(2),
        objects,
        outputs,
        cipher,
        &format!("PostgreSQL schema {s}"),
    )
}

impl StateStore for PgStore {
    fn cipher(&self) -> Option<&Cipher> {
        self.cipher.as_ref()
    }

    fn rotate_key(&mut self, new: Option<&Encryption>) -> Result<()> {
        self.rotate(new)
    }

    fn snapshot(&self, workspace: &str) -> Result<Snapshot> {
        let mut c = self.client()?;
        let mut tx = read_transaction(&mut c)?;
        read_snapshot(&mut tx, &self.schema, workspace, self.cipher.as_ref())
    }

    fn stream(&self, workspace: &str, visit: &mut crate::stream::Visit<'_>) -> Result<()> {
        let mut c = self.client()?;
        let mut tx = read_transaction(&mut c)?;
        stream_rows(
            &mut tx,
            &self.schema,
            workspace,
            self.cipher.as_ref(),
            visit,
        )
    }

    fn lock(&self, workspace: &str, info: LockInfo) -> Result<Box<dyn Run>> {
        let s = &self.schema;
        let mut c = self.client()?;
        let got: bool = c
            .query_one(
                "SELECT pg_try_advisory_lock(hashtextextended($1, 0))",
                &[&self.lock_key(workspace)],
            )?
            .get(0);
        if !got {
            // The winner writes its details right after taking the advisory
            // lock; give it a moment, and ignore rows left by dead sessions.
            let mut holder = None;
            for _ in 0..40 {
                let live = c.query_opt(
                    &format!("SELECT id FROM {s}.locks WHERE workspace=$1 AND backend_pid IN (SELECT pid FROM pg_locks WHERE locktype='advisory' AND granted)"),
                    &[&workspace],
                )?;
                if live.is_some() {
                    holder = read_lock(&mut c, s, workspace)?;
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            let holder = holder.unwrap_or_else(|| LockInfo {
                id: "(not yet recorded)".into(),
                operation: "(another session is taking the lock)".into(),
                info: String::new(),
                who: "(unknown)".into(),
                created: String::new(),
                pid: 0,
                host: String::new(),
                start_time: None,
            });
            return Err(StateError::Locked {
                workspace: workspace.into(),
                holder: Box::new(holder),
            });
        }
        let fresh = Snapshot::empty();
        let mut tx = c.transaction()?;
        tx.execute(
            &format!(
                "INSERT INTO {s}.locks(workspace, id, operation, info, who, created, pid, host, backend_pid) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, pg_backend_pid())
                 ON CONFLICT (workspace) DO UPDATE SET id=EXCLUDED.id, operation=EXCLUDED.operation, info=EXCLUDED.info, who=EXCLUDED.who,
                 created=EXCLUDED.created, pid=EXCLUDED.pid, host=EXCLUDED.host, backend_pid=EXCLUDED.backend_pid"
            ),
            &[&workspace, &info.id, &info.operation, &info.info, &info.who, &info.created, &(info.pid as i64), &info.host],
        )?;
        tx.execute(
            &format!("INSERT INTO {s}.workspaces(name, lineage, serial, terraform_version) VALUES ($1, $2, 0, $3) ON CONFLICT (name) DO NOTHING"),
            &[&workspace, &fresh.lineage, &fresh.terraform_version],
        )?;
        tx.commit()?;
        Ok(Box::new(PgRun {
            client: c,
            schema: s.clone(),
            workspace: workspace.into(),
            info,
            cipher: self.cipher.clone(),
            released: false,
        }))
    }

    fn force_unlock(&self, workspace: &str, id: &str) -> Result<()> {
        let s = &self.schema;
        let mut c = self.client()?;
        let Some(row) = c.query_opt(
            &format!("DELETE FROM {s}.locks WHERE workspace=$1 AND id=$2 RETURNING backend_pid"),
            &[&workspace, &id],
        )?
        else {
            return Err(StateError::NoSuchLock {
                workspace: workspace.into(),
                id: id.into(),
            });
        };
        let backend: i32 = row.get(0);
        // End the holder's session if it is still there: that releases its
        // advisory lock. (It may already be gone.) The backend exits
        // asynchronously, so wait until it and its locks are gone: the lock
        // is free when force-unlock returns, and the next `lock` cannot race
        // the dying session.
        c.execute(
            "SELECT pg_terminate_backend($1) FROM pg_stat_activity WHERE pid=$1",
            &[&backend],
        )?;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let alive: bool = c.query_one("SELECT EXISTS(SELECT 1 FROM pg_stat_activity WHERE pid=$1) OR EXISTS(SELECT 1 FROM pg_locks WHERE pid=$1)", &[&backend])?.get(0);
            if !alive {
                return Ok(());
            }
            if std::time::Instant::now() > deadline {
                return Err(StateError::PostgresSession(format!("force-unlock of workspace {workspace:?}: the lock holder's session (backend {backend}) was told to end but is still running after 10 s; its lock is not released yet")));
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    fn workspaces(&self) -> Result<Vec<String>> {
        let mut c = self.client()?;
        Ok(c.query(
            &format!("SELECT name FROM {}.workspaces ORDER BY name", self.schema),
            &[],
        )?
        .iter()
        .map(|r| r.get(0))
        .collect())
    }

    fn delete_workspace(&self, workspace: &str) -> Result<()> {
        if workspace == "default" {
            return Err(StateError::DefaultWorkspace);
        }
        let mut run = self.lock(workspace, LockInfo::new("OperationTypeDeleteWorkspace", ""))?;
        let s = &self.schema;
        let mut c = self.client()?;
        let mut tx = c.transaction()?;
        if tx.execute(
            &format!("DELETE FROM {s}.workspaces WHERE name=$1"),
            &[&workspace],
        )? == 0
        {
            return Err(StateError::NoWorkspace(workspace.into()));
        }
        tx.execute(
            &format!("DELETE FROM {s}.objects WHERE workspace=$1"),
            &[&workspace],
        )?;
        tx.execute(
            &format!("DELETE FROM {s}.outputs WHERE workspace=$1"),
            &[&workspace],
        )?;
        tx.commit()?;
        let _ = run.persist(&[]);
        Ok(())
    }
}

struct PgRun {
    client: Client,
    schema: String,
    workspace: String,
    info: LockInfo,
    cipher: Option<Cipher>,
    released: bool,
}

fn apply_change(
    tx: &mut postgres::Transaction<'_>,
    s: &str,
    ws: &str,
    cipher: Option<&Cipher>,
    c: &Change,
) -> Result<()> {
    match c {
        Change::SetObject {
            addr,
            deposed,
            provider,
            object,
        } => {
            let r = object_row(ws, addr, deposed.as_deref(), provider, object, cipher);
            // The rows of a resource always agree on the provider, so the
            // first one tells whether the others need rewriting.
            let current: Option<String> = tx
                .query_opt(&format!("SELECT provider FROM {s}.objects WHERE workspace=$1 AND module=$2 AND mode=$3 AND type=$4 AND name=$5 LIMIT 1"), &[&ws, &r.module, &r.mode, &r.ty, &r.name])?
                .map(|row| row.get(0));
            // (An instance key of a provider with for_each is the
            // object's own: only the configuration is compared.)
            let config = crate::model::split_provider_instance(&r.provider).0;
            if current.is_some_and(|p| crate::model::split_provider_instance(&p).0 != config) {
                tx.execute(
                    &format!("UPDATE {s}.objects SET provider=$6 WHERE workspace=$1 AND module=$2 AND mode=$3 AND type=$4 AND name=$5"),
                    &[&ws, &r.module, &r.mode, &r.ty, &r.name, &config],
                )?;
            }
            tx.execute(
                &format!(
                    "INSERT INTO {s}.objects(workspace, module, mode, type, name, key, deposed, provider, schema_version, tainted, attributes, private, sensitive, dependencies, cbd, identity_schema_version, attributes_flat)
                     VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17)
                     ON CONFLICT (workspace, module, mode, type, name, key, deposed) DO UPDATE SET provider=EXCLUDED.provider,
                     schema_version=EXCLUDED.schema_version, tainted=EXCLUDED.tainted, attributes=EXCLUDED.attributes, private=EXCLUDED.private,
                     sensitive=EXCLUDED.sensitive, dependencies=EXCLUDED.dependencies, cbd=EXCLUDED.cbd, identity_schema_version=EXCLUDED.identity_schema_version,
                     attributes_flat=EXCLUDED.attributes_flat"
                ),
                &[&ws, &r.module, &r.mode, &r.ty, &r.name, &r.key, &r.deposed, &r.provider, &r.schema_version, &r.tainted, &r.attributes, &r.private, &r.sensitive, &r.dependencies, &r.cbd, &r.identity_schema_version, &r.attributes_flat],
            )?;
        }
        Change::RemoveObject { addr, deposed } => {
            tx.execute(
                &format!("DELETE FROM {s}.objects WHERE workspace=$1 AND module=$2 AND mode=$3 AND type=$4 AND name=$5 AND key=$6 AND deposed=$7"),
                &[&ws, &module_json(&addr.resource.module), &addr.resource.mode.as_str(), &addr.resource.ty, &addr.resource.name, &key_json(&addr.key), &deposed.as_deref().unwrap_or("")],
            )?;
        }
        Change::Depose { addr, key } => {
            tx.execute(
                &format!("UPDATE {s}.objects SET deposed=$7 WHERE workspace=$1 AND module=$2 AND mode=$3 AND type=$4 AND name=$5 AND key=$6 AND deposed=''"),
                &[&ws, &module_json(&addr.resource.module), &addr.resource.mode.as_str(), &addr.resource.ty, &addr.resource.name, &key_json(&addr.key), key],
            )?;
        }
        Change::SetOutput { name, output } => {
            let r = output_row(ws, name, output, cipher);
            tx.execute(
                &format!("INSERT INTO {s}.outputs(workspace, name, value, type, sensitive) VALUES ($1,$2,$3,$4,$5) ON CONFLICT (workspace, name) DO UPDATE SET value=EXCLUDED.value, type=EXCLUDED.type, sensitive=EXCLUDED.sensitive"),
                &[&ws, &r.name, &r.value, &r.ty, &r.sensitive],
            )?;
        }
        Change::RemoveOutput { name } => {
            tx.execute(
                &format!("DELETE FROM {s}.outputs WHERE workspace=$1 AND name=$2"),
                &[&ws, name],
            )?;
        }
    }
    Ok(())
}

impl PgRun {
    fn write(&mut self, changes: &[Change], replace: Option<&Snapshot>) -> Result<u64> {
        let (s, ws) = (self.schema.clone(), self.workspace.clone());
        let mut tx = self.client.transaction()?;
        let holder: Option<String> = tx
            .query_opt(
                &format!("SELECT id FROM {s}.locks WHERE workspace=$1 FOR UPDATE"),
                &[&ws],
            )?
            .map(|r| r.get(0));
        if holder.as_deref() != Some(self.info.id.as_str()) {
            return Err(StateError::LockLost {
                workspace: ws,
                id: self.info.id.clone(),
            });
        }
        if let Some(snap) = replace {
            let serial = serial_to_sql(snap.serial)?;
            tx.execute(
                &format!("DELETE FROM {s}.objects WHERE workspace=$1"),
                &[&ws],
            )?;
            tx.execute(
                &format!("DELETE FROM {s}.outputs WHERE workspace=$1"),
                &[&ws],
            )?;
            for c in crate::model::changes_for(snap) {
                apply_change(&mut tx, &s, &ws, self.cipher.as_ref(), &c)?;
            }
            tx.execute(
                &format!("UPDATE {s}.workspaces SET lineage=$2, serial=$3, terraform_version=$4 WHERE name=$1"),
                &[&ws, &snap.lineage, &serial, &snap.terraform_version],
            )?;
            tx.commit()?;
            return Ok(snap.serial);
        }
        for c in changes {
            apply_change(&mut tx, &s, &ws, self.cipher.as_ref(), c)?;
        }
        let serial: i64 = tx
            .query_one(
                &format!(
                    "UPDATE {s}.workspaces SET serial = serial + 1 WHERE name=$1 RETURNING serial"
                ),
                &[&ws],
            )?
            .get(0);
        tx.commit()?;
        serial_from_sql(serial, &format!("PostgreSQL schema {s}"))
    }

    fn release(&mut self) -> Result<()> {
        let s = &self.schema;
        self.client.execute(
            &format!("DELETE FROM {s}.locks WHERE workspace=$1 AND id=$2"),
            &[&self.workspace, &self.info.id],
        )?;
        self.client.execute(
            "SELECT pg_advisory_unlock(hashtextextended($1, 0))",
            &[&format!("terrane-state/{s}/{}", self.workspace)],
        )?;
        Ok(())
    }
}

impl Run for PgRun {
    fn lock_info(&self) -> &LockInfo {
        &self.info
    }

    fn snapshot(&mut self) -> Result<Snapshot> {
        let (s, ws) = (self.schema.clone(), self.workspace.clone());
        read_snapshot(&mut self.client, &s, &ws, self.cipher.as_ref())
    }

    fn persist(&mut self, changes: &[Change]) -> Result<u64> {
        self.write(changes, None)
    }

    fn replace(&mut self, snapshot: &Snapshot) -> Result<u64> {
        self.write(&[], Some(snapshot))
    }

    fn finish(mut self: Box<Self>) -> Result<()> {
        self.released = true;
        self.release()
    }
}

impl Drop for PgRun {
    fn drop(&mut self) {
        if !self.released {
            let _ = self.release();
        }
    }
}
