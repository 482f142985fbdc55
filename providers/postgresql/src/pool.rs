//! One connection pool per configured provider instance, shared by every
//! resource and data source instance it serves (the type/instance split:
//! the pool is what `configure` hands to the resource types). Connections
//! are kept per database, since roles live in the cluster but schemas,
//! grants and extensions live in one database each. A semaphore of
//! `max_connections` permits bounds how many statements run at once.
//! Each connection keeps the statements its reads prepared, by SQL text:
//! a read that runs again (one per resource instance in a refresh) costs
//! one round trip, with no parse and no plan on the server (sessions use
//! generic plans).
//!
//! Errors become diagnostics here, on the provider attribute that is most
//! likely wrong (password for a rejected password, username for an unknown
//! role, port for a refused connection). No SQL text and no password is
//! ever part of a message.

use crate::sql::Stmt;
use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use terrane_pgtls::{HandshakeFailure, SslMode, TlsOptions};
use terrane_sdk::{Diagnostics, Path};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_postgres::error::SqlState;
use tokio_postgres::{Client, Row, Statement};

/// How to reach the server (the provider configuration, resolved).
#[derive(Clone)]
pub struct Settings {
    pub host: String,
    pub port: u16,
    pub username: String,
    pub password: Option<String>,
    pub database: String,
    pub sslmode: String,
    /// CA certificates (PEM file) for verify-ca/verify-full, or `system`.
    pub sslrootcert: Option<String>,
    pub connect_timeout: Duration,
    pub max_connections: usize,
}

impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Settings")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("username", &self.username)
            .field(
                "password",
                &self.password.as_ref().map(|_| "(sensitive value)"),
            )
            .field("database", &self.database)
            .field("sslmode", &self.sslmode)
            .field("sslrootcert", &self.sslrootcert)
            .finish()
    }
}

impl Settings {
    /// The TLS settings, checked: an unknown sslmode or an unusable
    /// root certificate is a diagnostic on its attribute.
    pub fn tls(&self) -> Result<TlsOptions, Diagnostics> {
        let mode = SslMode::parse(&self.sslmode).ok_or_else(|| {
            Diagnostics::attr_error(
                Path::root().attr("sslmode"),
                "Invalid sslmode",
                format!(
                    "{:?} is not one of {}.",
                    self.sslmode,
                    SslMode::NAMES.join(", ")
                ),
            )
        })?;
        Ok(TlsOptions {
            mode,
            root_cert: self.sslrootcert.clone(),
        })
    }

    /// The connection attempts sslmode calls for (reads the root
    /// certificates).
    pub fn tls_attempts(&self) -> Result<Vec<terrane_pgtls::Attempt>, Diagnostics> {
        let mut host = tokio_postgres::Config::new();
        host.host(&self.host);
        self.tls()?.for_config(&host).attempts().map_err(|e| {
            let attr = if e.0.starts_with("sslrootcert") {
                "sslrootcert"
            } else {
                "sslmode"
            };
            Diagnostics::attr_error(
                Path::root().attr(attr),
                "Invalid TLS settings",
                format!("{e}."),
            )
        })
    }
}

struct Inner {
    settings: Settings,
    idle: Mutex<HashMap<String, Vec<Session>>>,
    permits: Arc<Semaphore>,
    /// State the resource types keep per configured provider, one value
    /// per type (see [`Pool::shared`]).
    shared: Mutex<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>,
}

/// The shared pool.
#[derive(Clone)]
pub struct Pool(Arc<Inner>);

/// An open connection and the statements prepared on it (keyed by their
/// SQL text, which is a fixed text per kind of read).
struct Session {
    client: Client,
    prepared: HashMap<String, Statement>,
}

/// A connection checked out of the pool; goes back when dropped.
pub struct Conn {
    client: Option<Session>,
    database: String,
    pool: Pool,
    _permit: OwnedSemaphorePermit,
}

impl std::ops::Deref for Conn {
    type Target = Client;
    fn deref(&self) -> &Client {
        &self.session().client
    }
}

impl std::ops::DerefMut for Conn {
    fn deref_mut(&mut self) -> &mut Client {
        &mut self.session_mut().client
    }
}

impl Conn {
    fn session(&self) -> &Session {
        self.client.as_ref().expect("client present until drop")
    }

    fn session_mut(&mut self) -> &mut Session {
        self.client.as_mut().expect("client present until drop")
    }

    /// `sql` prepared on this connection, once: later calls with the same
    /// text reuse the statement. For the fixed queries of reads, not for
    /// statements whose text carries values.
    pub async fn prepared(&mut self, sql: &str) -> Result<Statement, tokio_postgres::Error> {
        let session = self.session_mut();
        if let Some(st) = session.prepared.get(sql) {
            return Ok(st.clone());
        }
        let st = session.client.prepare(sql).await?;
        session.prepared.insert(sql.to_string(), st.clone());
        Ok(st)
    }

    /// Runs the read query `sql` as a statement prepared once per connection.
    pub async fn query_prepared(
        &mut self,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> Result<Vec<Row>, tokio_postgres::Error> {
        let st = self.prepared(sql).await?;
        self.query(&st, params).await
    }

    /// As `query_prepared`, for a query of at most one row.
    pub async fn query_opt_prepared(
        &mut self,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> Result<Option<Row>, tokio_postgres::Error> {
        let st = self.prepared(sql).await?;
        self.query_opt(&st, params).await
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        if let Some(c) = self.client.take() {
            if !c.client.is_closed() {
                if let Ok(mut idle) = self.pool.0.idle.lock() {
                    idle.entry(self.database.clone()).or_default().push(c);
                }
            }
        }
    }
}

/// Why a connection could not be made.
#[derive(Debug)]
pub enum ConnectError {
    /// The database does not exist (a vanished object, for reads).
    NoDatabase,
    Other(Diagnostics),
}

impl ConnectError {
    pub fn into_diags(self, database: &str) -> Diagnostics {
        match self {
            ConnectError::NoDatabase => Diagnostics::attr_error(
                Path::root().attr("database"),
                "Database does not exist",
                format!("The database {database:?} does not exist on the server."),
            ),
            ConnectError::Other(d) => d,
        }
    }
}

impl Pool {
    pub fn new(settings: Settings) -> Pool {
        let permits = Arc::new(Semaphore::new(settings.max_connections.max(1)));
        Pool(Arc::new(Inner {
            settings,
            idle: Mutex::new(HashMap::new()),
            permits,
            shared: Mutex::new(HashMap::new()),
        }))
    }

    pub fn settings(&self) -> &Settings {
        &self.0.settings
    }

    /// The pool's one `T`, made on first use: state a resource type
    /// shares between the calls of one configured provider (a resource
    /// instance is made per call).
    pub fn shared<T: Default + Send + Sync + 'static>(&self) -> Arc<T> {
        let mut shared = self.0.shared.lock().unwrap_or_else(|e| e.into_inner());
        let entry = shared
            .entry(TypeId::of::<T>())
            .or_insert_with(|| Arc::new(T::default()));
        Arc::clone(entry)
            .downcast::<T>()
            .expect("one value per TypeId")
    }

    /// The provider's own database.
    pub fn default_database(&self) -> &str {
        &self.0.settings.database
    }

    /// A connection to `database` (the provider's database when `None`).
    pub async fn get(&self, database: Option<&str>) -> Result<Conn, ConnectError> {
        let db = database
            .filter(|d| !d.is_empty())
            .unwrap_or(&self.0.settings.database)
            .to_string();
        let permit = self.0.permits.clone().acquire_owned().await.map_err(|_| {
            ConnectError::Other(Diagnostics::error(
                "Connection pool closed",
                "The provider is shutting down.",
            ))
        })?;
        let reused = self.0.idle.lock().ok().and_then(|mut idle| {
            let list = idle.get_mut(&db)?;
            while let Some(c) = list.pop() {
                if !c.client.is_closed() {
                    return Some(c);
                }
            }
            None
        });
        let client = match reused {
            Some(c) => c,
            None => {
                self.trim_idle();
                Session {
                    client: self.connect(&db).await?,
                    prepared: HashMap::new(),
                }
            }
        };
        Ok(Conn {
            client: Some(client),
            database: db,
            pool: self.clone(),
            _permit: permit,
        })
    }

    /// Closes idle connections to `database` (before it is renamed or
    /// dropped, which the server refuses while sessions are open).
    pub fn evict(&self, database: &str) {
        if let Ok(mut idle) = self.0.idle.lock() {
            idle.remove(database);
        }
    }

    /// Closes idle connections (to other databases) so that open
    /// connections stay within `max_connections` once a new one is made.
    fn trim_idle(&self) {
        let in_use = self.0.settings.max_connections.max(1) - self.0.permits.available_permits();
        let room = self
            .0
            .settings
            .max_connections
            .max(1)
            .saturating_sub(in_use);
        if let Ok(mut idle) = self.0.idle.lock() {
            let mut total: usize = idle.values().map(Vec::len).sum();
            for list in idle.values_mut() {
                while total > room && list.pop().is_some() {
                    total -= 1;
                }
            }
        }
    }

    async fn connect(&self, db: &str) -> Result<Client, ConnectError> {
        let s = &self.0.settings;
        let mut cfg = tokio_postgres::Config::new();
        cfg.host(&s.host)
            .port(s.port)
            .user(&s.username)
            .dbname(db)
            .connect_timeout(s.connect_timeout)
            .application_name("terraform-provider-postgresql")
            .options("-c TimeZone=UTC");
        if let Some(p) = &s.password {
            cfg.password(p.as_bytes());
        }
        let attempts = s.tls_attempts().map_err(ConnectError::Other)?;
        let connected = terrane_pgtls::connect_async(attempts, |mode, tls| {
            let mut cfg = cfg.clone();
            cfg.ssl_mode(mode);
            async move { cfg.connect(tls).await }
        })
        .await;
        match connected {
            Ok((client, connection)) => {
                tokio::spawn(async move {
                    let _ = connection.await;
                });
                // The reads' statements are catalog lookups prepared once per
                // connection: a generic plan serves every execution. In the
                // default mode the server plans each execution anew when it
                // guesses a custom plan cheaper, which it does for them. A
                // server older than 12 has no such setting.
                match client
                    .batch_execute("SET plan_cache_mode = force_generic_plan")
                    .await
                {
                    Err(e) if e.code() != Some(&SqlState::UNDEFINED_OBJECT) => {
                        Err(ConnectError::Other(connect_diag(s, db, &e)))
                    }
                    _ => Ok(client),
                }
            }
            Err(e) if e.code() == Some(&SqlState::INVALID_CATALOG_NAME) && db != s.database => {
                Err(ConnectError::NoDatabase)
            }
            Err(e) => Err(ConnectError::Other(connect_diag(s, db, &e))),
        }
    }
}

/// A connection failure, on the provider attribute to fix.
pub fn connect_diag(s: &Settings, db: &str, e: &tokio_postgres::Error) -> Diagnostics {
    let at = format!("{}:{} as {:?}", s.host, s.port, s.username);
    if let Some(h) = terrane_pgtls::handshake_error(e) {
        let (attr, summary) = match h.failure {
            HandshakeFailure::Untrusted => (
                "sslrootcert",
                "Cannot connect to PostgreSQL: the server's certificate is not trusted",
            ),
            HandshakeFailure::WrongHost => (
                "host",
                "Cannot connect to PostgreSQL: the server's certificate is for another host",
            ),
            HandshakeFailure::BadCertificate | HandshakeFailure::Other => (
                "sslmode",
                "Cannot connect to PostgreSQL: TLS handshake failed",
            ),
        };
        return Diagnostics::attr_error(
            Path::root().attr(attr),
            summary,
            format!("Connecting to {at} with sslmode {:?}: {h}.", s.sslmode),
        );
    }
    if let Some(dbe) = e.as_db_error() {
        let code = dbe.code();
        let (attr, summary) = if *code == SqlState::INVALID_PASSWORD {
            ("password", "PostgreSQL rejected the password")
        } else if *code == SqlState::INVALID_AUTHORIZATION_SPECIFICATION {
            ("username", "PostgreSQL rejected the user")
        } else if *code == SqlState::INVALID_CATALOG_NAME {
            ("database", "Database does not exist")
        } else {
            ("host", "Cannot connect to PostgreSQL")
        };
        return Diagnostics::attr_error(
            Path::root().attr(attr),
            summary,
            format!(
                "Connecting to {at}, database {db:?}: {} (SQLSTATE {}).",
                dbe.message(),
                code.code()
            ),
        );
    }
    let text = e.to_string();
    let source = std::error::Error::source(e)
        .map(|x| x.to_string())
        .unwrap_or_default();
    let refused = source.contains("refused") || text.contains("refused");
    let timed_out = text.contains("timed out") || source.contains("timed out");
    let (attr, summary) = if text.starts_with("error performing TLS handshake") {
        ("sslmode", "Cannot connect to PostgreSQL: TLS failed")
    } else if refused {
        (
            "port",
            "Cannot connect to PostgreSQL: nothing listens there",
        )
    } else if timed_out {
        ("connect_timeout", "Cannot connect to PostgreSQL: timed out")
    } else {
        ("host", "Cannot connect to PostgreSQL")
    };
    let why = if source.is_empty() {
        text
    } else {
        format!("{text}: {source}")
    };
    Diagnostics::attr_error(Path::root().attr(attr), summary, format!("Connecting to {at}: {why}. Check host, port and that the server accepts TCP connections."))
}

/// A failed statement as a diagnostic: the server's message, detail, hint
/// and SQLSTATE, with the statement shown with secrets hidden.
pub fn stmt_diag(
    e: &tokio_postgres::Error,
    summary: &str,
    stmt: Option<&Stmt>,
    path: Option<Path>,
) -> Diagnostics {
    let mut detail = match e.as_db_error() {
        Some(d) => {
            let mut t = format!("{} (SQLSTATE {})", d.message(), d.code().code());
            if let Some(x) = d.detail() {
                t.push_str(&format!("\nDetail: {x}"));
            }
            if let Some(x) = d.hint() {
                t.push_str(&format!("\nHint: {x}"));
            }
            t
        }
        None => e.to_string(),
    };
    if let Some(s) = stmt {
        detail.push_str(&format!("\nStatement: {}", s.shown));
    }
    match path {
        Some(p) => Diagnostics::attr_error(p, summary, detail),
        None => Diagnostics::error(summary, detail),
    }
}

/// The SQLSTATE of a failed statement, if the server sent one.
pub fn code_of(e: &tokio_postgres::Error) -> Option<&str> {
    e.code().map(SqlState::code)
}

/// Runs statements in one transaction (all or nothing), logging each with
/// secrets hidden; on failure `at` picks the attribute to blame.
pub async fn run_in_tx(
    conn: &mut Conn,
    stmts: &[Stmt],
    summary: &str,
    at: impl Fn(&tokio_postgres::Error, &Stmt) -> Option<Path>,
) -> Result<(), Diagnostics> {
    if stmts.is_empty() {
        return Ok(());
    }
    let tx = conn
        .transaction()
        .await
        .map_err(|e| stmt_diag(&e, summary, None, None))?;
    for s in stmts {
        terrane_sdk::log::debug("executing statement", &[("sql", s.shown.clone())]);
        if let Err(e) = tx.batch_execute(&s.sql).await {
            let path = at(&e, s);
            return Err(stmt_diag(&e, summary, Some(s), path));
        }
    }
    tx.commit()
        .await
        .map_err(|e| stmt_diag(&e, summary, None, None))
}

/// Runs one statement outside a transaction (CREATE/DROP DATABASE).
pub async fn run_one(
    conn: &Conn,
    s: &Stmt,
    summary: &str,
    path: Option<Path>,
) -> Result<(), Diagnostics> {
    terrane_sdk::log::debug("executing statement", &[("sql", s.shown.clone())]);
    conn.batch_execute(&s.sql)
        .await
        .map_err(|e| stmt_diag(&e, summary, Some(s), path))
}

/// A read query failed.
pub fn read_diag(e: &tokio_postgres::Error, what: &str) -> Diagnostics {
    stmt_diag(e, &format!("Cannot read {what}"), None, None)
}
