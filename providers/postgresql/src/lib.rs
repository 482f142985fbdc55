//! The postgresql provider on terrane's SDK, with the names, arguments and
//! behaviour users know from the widely used community PostgreSQL
//! provider: `postgresql_role`, `postgresql_database`, `postgresql_schema`,
//! `postgresql_grant`, `postgresql_extension`, and the data sources
//! `postgresql_schemas` and `postgresql_tables`.
//!
//! The provider is the first on the SDK with a real remote system, so it
//! carries the hard half of the lifecycle: ReadResource keeps the prior
//! value when the server only spells it differently ([`normalize`]),
//! reports the server's value when it was changed outside (drift), and
//! returns null for a vanished object so a create is planned. Renames are
//! followed through the object id kept in private state. Every resource
//! imports by its natural identifier.
//!
//! Key pieces: [`pool`] (one pool per configured provider, shared by all
//! instances, a semaphore bounding concurrent statements), [`sql`] (the
//! only place SQL text is built: identifiers and literals always quoted,
//! secrets hidden from logs), one module per resource. Depends on the SDK
//! and a PostgreSQL client only.

pub mod normalize;
pub mod pool;
pub mod sql;

mod data;
mod database;
mod extension;
mod grant;
mod role;
mod schema;
mod values;

use async_trait::async_trait;
use pool::{Pool, Settings};
use std::sync::Arc;
use std::time::Duration;
use terrane_sdk::validate::{AtLeast, OneOf};
use terrane_sdk::{
    Attr, Ctx, DataSourceType, Diagnostics, Path, Provider, ResourceSchema, ResourceType, Value,
};
use values::{n, s};

/// The provider; `configure` makes its connection pool.
pub struct PostgresProvider;

const SSLMODES: [&str; 6] = terrane_pgtls::SslMode::NAMES;

fn provider_schema() -> ResourceSchema {
    ResourceSchema::new(0)
        .attr("host", Attr::string().optional().describe("Server host (PGHOST; default localhost)."))
        .attr("port", Attr::number().optional().validate(AtLeast(1)).describe("Server port (PGPORT; default 5432)."))
        .attr("username", Attr::string().optional().describe("User to connect as (PGUSER; default postgres)."))
        .attr("password", Attr::string().optional().sensitive().describe("Password (PGPASSWORD)."))
        .attr("database", Attr::string().optional().describe("Database to connect to (PGDATABASE; default postgres)."))
        .attr("sslmode", Attr::string().optional().validate(OneOf(SSLMODES.iter().map(|m| m.to_string()).collect())).describe("disable, allow, prefer, require, verify-ca or verify-full, as libpq defines them (PGSSLMODE; default prefer). verify-ca checks that sslrootcert issued the server's certificate, verify-full also its host name."))
        .attr("sslrootcert", Attr::string().optional().describe("PEM file of the CA certificates that may issue the server's certificate, or \"system\" for the machine's trusted roots (PGSSLROOTCERT; default ~/.postgresql/root.crt when it exists)."))
        .attr("connect_timeout", Attr::number().optional().validate(AtLeast(1)).describe("Seconds to wait for a connection (PGCONNECT_TIMEOUT; default 15)."))
        .attr("max_connections", Attr::number().optional().validate(AtLeast(1)).describe("Most connections (and so statements) in use at once (default 10)."))
}

/// A configured string, else the environment variable, else the default.
fn setting(config: &Value, attr: &str, env: &str, default: &str) -> String {
    s(config, attr)
        .or_else(|| std::env::var(env).ok().filter(|v| !v.is_empty()))
        .unwrap_or_else(|| default.to_string())
}

/// The provider configuration resolved against the environment.
pub fn resolve(config: &Value) -> Result<Settings, Diagnostics> {
    let port_text = n(config, "port")
        .map(|p| p.to_string())
        .unwrap_or_else(|| setting(config, "port", "PGPORT", "5432"));
    let port: u16 = port_text.parse().map_err(|_| {
        Diagnostics::attr_error(
            Path::root().attr("port"),
            "Invalid port",
            format!("{port_text:?} is not a TCP port number."),
        )
    })?;
    let timeout = match n(config, "connect_timeout") {
        Some(t) => t,
        None => setting(config, "connect_timeout", "PGCONNECT_TIMEOUT", "15")
            .parse()
            .unwrap_or(15),
    };
    let sslmode = setting(config, "sslmode", "PGSSLMODE", "prefer");
    if !SSLMODES.contains(&sslmode.as_str()) {
        return Err(Diagnostics::attr_error(
            Path::root().attr("sslmode"),
            "Invalid sslmode",
            format!("{sslmode:?} is not one of {}.", SSLMODES.join(", ")),
        ));
    }
    let settings = Settings {
        host: setting(config, "host", "PGHOST", "localhost"),
        port,
        username: setting(config, "username", "PGUSER", "postgres"),
        password: s(config, "password").or_else(|| std::env::var("PGPASSWORD").ok()),
        database: setting(config, "database", "PGDATABASE", "postgres"),
        sslmode,
        sslrootcert: s(config, "sslrootcert")
            .or_else(|| std::env::var("PGSSLROOTCERT").ok())
            .filter(|v| !v.is_empty()),
        connect_timeout: Duration::from_secs(timeout.max(1) as u64),
        max_connections: n(config, "max_connections").unwrap_or(10).max(1) as usize,
    };
    // A root certificate that cannot be used is reported now, on its
    // attribute, not at the first connection.
    settings.tls_attempts()?;
    Ok(settings)
}

#[async_trait]
impl Provider for PostgresProvider {
    type Data = Pool;
    fn type_name(&self) -> &str {
        "postgresql"
    }
    fn version(&self) -> &str {
        env!("CARGO_PKG_VERSION")
    }
    fn schema(&self) -> Result<ResourceSchema, Diagnostics> {
        Ok(provider_schema())
    }
    async fn configure(&self, _ctx: &Ctx, config: &Value) -> Result<Option<Pool>, Diagnostics> {
        if !config.is_wholly_known() {
            return Ok(None);
        }
        let pool = Pool::new(resolve(config)?);
        // Check the settings now, so a wrong password or port is reported
        // on the provider block before any resource is touched.
        let db = pool.default_database().to_string();
        drop(pool.get(None).await.map_err(|e| e.into_diags(&db))?);
        terrane_sdk::log::info(
            "connected to PostgreSQL",
            &[
                ("host", pool.settings().host.clone()),
                ("port", pool.settings().port.to_string()),
                ("database", db),
            ],
        );
        Ok(Some(pool))
    }
    fn resources(&self) -> Vec<Arc<dyn ResourceType<Pool>>> {
        vec![
            Arc::new(role::ROLE),
            Arc::new(database::DATABASE),
            Arc::new(schema::SCHEMA),
            Arc::new(grant::GRANT),
            Arc::new(extension::EXTENSION),
        ]
    }
    fn data_sources(&self) -> Vec<Arc<dyn DataSourceType<Pool>>> {
        vec![Arc::new(data::SchemasType), Arc::new(data::TablesType)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(case: &str, config: Value, want: Result<(&str, u16, &str), &str>) {
        match (resolve(&config), want) {
            (Ok(s), Ok((host, port, db))) => assert_eq!(
                (s.host.as_str(), s.port, s.database.as_str()),
                (host, port, db),
                "case {case}"
            ),
            (Err(d), Err(attr)) => assert_eq!(
                d.0[0].path.as_ref().map(ToString::to_string).as_deref(),
                Some(attr),
                "case {case}"
            ),
            (got, want) => panic!(
                "case {case}: got {:?}, want {want:?}",
                got.map(|s| format!("{s:?}"))
            ),
        }
    }

    fn cfg(pairs: &[(&'static str, Value)]) -> Value {
        values::typed_object(&provider_schema(), pairs.iter().cloned())
    }

    #[test]
    fn settings() {
        check(
            "explicit",
            cfg(&[
                ("host", Value::string("db.internal")),
                ("port", Value::number(6543)),
                ("database", Value::string("app")),
            ]),
            Ok(("db.internal", 6543, "app")),
        );
        check(
            "tls_mode_accepted",
            cfg(&[
                ("host", Value::string("h")),
                ("port", Value::number(1)),
                ("database", Value::string("d")),
                ("sslmode", Value::string("require")),
            ]),
            Ok(("h", 1, "d")),
        );
        check(
            "unknown_sslmode",
            cfg(&[
                ("host", Value::string("h")),
                ("port", Value::number(1)),
                ("database", Value::string("d")),
                ("sslmode", Value::string("verify")),
            ]),
            Err(".sslmode"),
        );
        check(
            "unreadable_sslrootcert",
            cfg(&[
                ("host", Value::string("h")),
                ("port", Value::number(1)),
                ("database", Value::string("d")),
                ("sslmode", Value::string("verify-full")),
                ("sslrootcert", Value::string("/nonexistent/ca.pem")),
            ]),
            Err(".sslrootcert"),
        );
        check(
            "port_out_of_range",
            cfg(&[
                ("host", Value::string("h")),
                ("port", Value::number(70000)),
                ("database", Value::string("d")),
            ]),
            Err(".port"),
        );
    }
}
