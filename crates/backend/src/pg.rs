//! `backend "pg"`: Terraform's PostgreSQL layout, so that Terraform's pg
//! backend and terrane read each other's writes and exclude each other.
//!
//! Facts of Terraform's layout: schema `schema_name` (default
//! `terraform_remote_state`), table `states (id bigint primary key
//! default nextval('public.global_states_id_seq'), name text unique, data
//! text)`, one row per workspace named by the workspace. Locks are session
//! advisory locks: on the row's `id` for an existing workspace, and on -1
//! while a workspace is being created. Terraform keeps no lock
//! description, so a held lock is reported without one.

use crate::{check_known, string_setting, Backend, BackendError, Payload, RemoteClient, Result};
use crate::{RemoteLock, Settings};
use std::sync::Mutex;

/// The pg backend's connection string and schema. Connections are made
/// per call (a workspace's client keeps one while it holds the session's
/// advisory lock) and closed on the thread that used them: a synchronous
/// PostgreSQL client must not be dropped on an async runtime's thread.
pub struct PgBackend {
    conn_str: String,
    schema: String,
}

fn err(detail: impl std::fmt::Display) -> BackendError {
    BackendError::Io {
        backend: "pg".into(),
        detail: detail.to_string(),
    }
}

fn db_err(e: postgres::Error) -> BackendError {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        text.push_str(&format!(": {s}"));
        source = s.source();
    }
    err(text)
}

fn bool_setting(settings: &Settings, name: &str) -> Result<bool> {
    match settings.get(name) {
        None | Some(serde_json::Value::Null) => Ok(false),
        Some(serde_json::Value::Bool(b)) => Ok(*b),
        Some(other) => Err(BackendError::Settings {
            backend: "pg".into(),
            detail: format!("{name}: a bool is required, got {other}"),
        }),
    }
}

/// A schema name usable unquoted in SQL, as Terraform's pg backend
/// interpolates it.
fn check_identifier(name: &str) -> Result<()> {
    let ok = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
    if ok {
        Ok(())
    } else {
        Err(BackendError::Settings {
            backend: "pg".into(),
            detail: format!("schema_name {name:?} is not a plain SQL identifier"),
        })
    }
}

/// The settings of Terraform's pg backend (its schema's attributes).
pub const ATTRIBUTES: &[&str] = &[
    "conn_str",
    "schema_name",
    "skip_schema_creation",
    "skip_table_creation",
    "skip_index_creation",
];

impl PgBackend {
    /// Connects with `conn_str` (or `PG_CONN_STR`) and makes Terraform's
    /// schema, sequence, table and index unless told to skip them.
    pub fn new(settings: &Settings) -> Result<PgBackend> {
        check_known("pg", settings, ATTRIBUTES)?;
        let conn_str = string_setting("pg", settings, "conn_str")?
            .or_else(|| std::env::var("PG_CONN_STR").ok())
            .filter(|c| !c.is_empty())
            .ok_or_else(|| BackendError::Settings {
                backend: "pg".into(),
                detail: "conn_str is required (or PG_CONN_STR in the environment)".into(),
            })?;
        let schema = string_setting("pg", settings, "schema_name")?
            .or_else(|| std::env::var("PG_SCHEMA_NAME").ok())
            .filter(|c| !c.is_empty())
            .unwrap_or_else(|| "terraform_remote_state".into());
        check_identifier(&schema)?;
        let mut conn = connect(&conn_str)?;
        if !bool_setting(settings, "skip_schema_creation")? {
            conn.batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS {schema}"))
                .map_err(db_err)?;
        }
        if !bool_setting(settings, "skip_table_creation")? {
            conn.batch_execute(&format!(
                "CREATE SEQUENCE IF NOT EXISTS public.global_states_id_seq AS bigint;
                 CREATE TABLE IF NOT EXISTS {schema}.states (
                   id bigint NOT NULL DEFAULT nextval('public.global_states_id_seq') PRIMARY KEY,
                   name text UNIQUE,
                   data text)"
            ))
            .map_err(db_err)?;
        }
        if !bool_setting(settings, "skip_index_creation")? {
            conn.batch_execute(&format!(
                "CREATE UNIQUE INDEX IF NOT EXISTS states_by_name ON {schema}.states (name)"
            ))
            .map_err(db_err)?;
        }
        Ok(PgBackend { conn_str, schema })
    }
}

fn connect(conn_str: &str) -> Result<postgres::Client> {
    terrane_state::pg_connect(conn_str).map_err(|e| err(e.to_string()))
}

impl Backend for PgBackend {
    fn kind(&self) -> &'static str {
        "pg"
    }

    fn workspaces(&self) -> Result<Vec<String>> {
        let mut c = connect(&self.conn_str)?;
        let rows = c
            .query(
                &format!(
                    "SELECT name FROM {}.states WHERE name != 'default' ORDER BY name",
                    self.schema
                ),
                &[],
            )
            .map_err(db_err)?;
        let mut out = vec!["default".to_string()];
        out.extend(rows.iter().map(|r| r.get::<_, String>(0)));
        Ok(out)
    }

    fn delete_workspace(&self, name: &str) -> Result<()> {
        let mut c = connect(&self.conn_str)?;
        let n = c
            .execute(
                &format!("DELETE FROM {}.states WHERE name = $1", self.schema),
                &[&name],
            )
            .map_err(db_err)?;
        if n == 0 {
            return Err(BackendError::NoWorkspace(name.into()));
        }
        Ok(())
    }

    fn client(&self, workspace: &str) -> Result<Box<dyn RemoteClient>> {
        Ok(Box::new(PgClient {
            conn_str: self.conn_str.clone(),
            conn: Mutex::new(None),
            schema: self.schema.clone(),
            name: workspace.into(),
            held: Mutex::new(None),
        }))
    }
}

/// One workspace's row; while locked, the advisory lock's key (held by
/// this client's connection).
struct PgClient {
    conn_str: String,
    conn: Mutex<Option<postgres::Client>>,
    schema: String,
    name: String,
    held: Mutex<Option<(String, i64)>>,
}

impl PgClient {
    /// This client's connection, made on first use.
    fn conn(&self) -> Result<std::sync::MutexGuard<'_, Option<postgres::Client>>> {
        let mut c = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        if c.is_none() {
            *c = Some(connect(&self.conn_str)?);
        }
        Ok(c)
    }

    fn locked_out(&self, why: &str) -> BackendError {
        BackendError::Locked {
            path: self.path(),
            holder: Box::new(RemoteLock {
                path: self.path(),
                info: format!(
                    "{why} (Terraform's pg backend records no holder: the lock is a PostgreSQL advisory lock held by another session, see pg_locks)"
                ),
                ..Default::default()
            }),
        }
    }
}

impl RemoteClient for PgClient {
    fn path(&self) -> String {
        format!("pg {}.states name={:?}", self.schema, self.name)
    }

    fn get(&self) -> Result<Option<Payload>> {
        let mut guard = self.conn()?;
        let c = guard.as_mut().expect("connected");
        let row = c
            .query_opt(
                &format!("SELECT data FROM {}.states WHERE name = $1", self.schema),
                &[&self.name],
            )
            .map_err(db_err)?;
        Ok(row
            .and_then(|r| r.get::<_, Option<String>>(0))
            .map(|d| Payload {
                data: d.into_bytes(),
                md5: Vec::new(),
            }))
    }

    fn put(&self, data: &[u8]) -> Result<()> {
        let text = std::str::from_utf8(data).map_err(err)?.to_string();
        let mut guard = self.conn()?;
        let c = guard.as_mut().expect("connected");
        c.execute(
            &format!(
                "INSERT INTO {s}.states (name, data) VALUES ($1, $2)
                 ON CONFLICT (name) DO UPDATE SET data = $2 WHERE {s}.states.name = $1",
                s = self.schema
            ),
            &[&self.name, &text],
        )
        .map_err(db_err)?;
        Ok(())
    }

    fn delete(&self) -> Result<()> {
        let mut guard = self.conn()?;
        let c = guard.as_mut().expect("connected");
        c.execute(
            &format!("DELETE FROM {}.states WHERE name = $1", self.schema),
            &[&self.name],
        )
        .map_err(db_err)?;
        Ok(())
    }

    fn lock(&self, lock: &RemoteLock) -> Result<String> {
        let mut guard = self.conn()?;
        let c = guard.as_mut().expect("connected");
        let row = c
            .query_opt(
                &format!(
                    "SELECT id, pg_try_advisory_lock(id), pg_try_advisory_lock(-1) FROM {}.states WHERE name = $1",
                    self.schema
                ),
                &[&self.name],
            )
            .map_err(db_err)?;
        let unlock = |c: &mut postgres::Client, key: i64| {
            let _ = c.execute("SELECT pg_advisory_unlock($1)", &[&key]);
        };
        let key = match row {
            None => {
                // A new workspace: the creation lock.
                let got: bool = c
                    .query_one("SELECT pg_try_advisory_lock(-1)", &[])
                    .map_err(db_err)?
                    .get(0);
                if !got {
                    return Err(self.locked_out("already locked for workspace creation"));
                }
                -1
            }
            Some(r) => {
                let (id, mine, create): (i64, bool, bool) = (r.get(0), r.get(1), r.get(2));
                match (mine, create) {
                    (false, true) => {
                        unlock(c, -1);
                        return Err(self.locked_out("workspace is already locked"));
                    }
                    (false, false) => {
                        return Err(self.locked_out("workspace is already locked"));
                    }
                    (true, false) => {
                        unlock(c, id);
                        return Err(self.locked_out("already locked for workspace creation"));
                    }
                    (true, true) => {
                        unlock(c, -1);
                        id
                    }
                }
            }
        };
        *self.held.lock().unwrap_or_else(|p| p.into_inner()) = Some((lock.id.clone(), key));
        Ok(lock.id.clone())
    }

    fn unlock(&self, id: &str) -> Result<()> {
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        match held.as_ref() {
            Some((held_id, key)) if held_id == id => {
                let mut guard = self.conn()?;
        let c = guard.as_mut().expect("connected");
                c.execute("SELECT pg_advisory_unlock($1)", &[key])
                    .map_err(db_err)?;
                *held = None;
                Ok(())
            }
            _ => Err(err(format!(
                "{}: an advisory lock belongs to the session holding it and ends with it; no lock {id:?} is held by this session",
                self.path()
            ))),
        }
    }
}
