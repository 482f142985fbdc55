//! Data sources `postgresql_schemas` and `postgresql_tables`: names in one
//! database, filtered by LIKE patterns (any / all / none) and a regular
//! expression, all passed to the server as parameters.

use crate::pool::{read_diag, Pool};
use crate::values::{b, list_value, pool_of, s, strings, with};
use async_trait::async_trait;
use std::sync::Arc;
use terrane_sdk::{
    Attr, Ctx, DataSource, DataSourceType, Diagnostics, ResourceSchema, Type, Value,
};

fn patterns(s: ResourceSchema) -> ResourceSchema {
    let list = || Attr::of(Type::list(Type::String)).optional();
    s.attr(
        "like_any_patterns",
        list().describe("Keep names matching any of these LIKE patterns."),
    )
    .attr(
        "like_all_patterns",
        list().describe("Keep names matching all of these LIKE patterns."),
    )
    .attr(
        "not_like_all_patterns",
        list().describe("Drop names matching any of these LIKE patterns."),
    )
    .attr(
        "regex_pattern",
        Attr::string()
            .optional()
            .describe("Keep names matching this regular expression."),
    )
    .attr(
        "database",
        Attr::string()
            .optional()
            .describe("Database to look in (default: the provider's)."),
    )
    .attr("id", Attr::string().computed())
}

fn schemas_schema() -> ResourceSchema {
    patterns(ResourceSchema::new(0))
        .describe("Schema names in a database.")
        .attr("include_system_schemas", Attr::bool().optional())
        .attr("schemas", Attr::of(Type::list(Type::String)).computed())
}

fn table_type() -> Type {
    Type::object([
        ("object_name", Type::String),
        ("schema_name", Type::String),
        ("table_type", Type::String),
    ])
}

fn tables_schema() -> ResourceSchema {
    patterns(ResourceSchema::new(0))
        .describe("Tables and views in a database.")
        .attr(
            "schemas",
            Attr::of(Type::list(Type::String))
                .optional()
                .describe("Schemas to look in (default: all but the system schemas)."),
        )
        .attr(
            "table_types",
            Attr::of(Type::list(Type::String))
                .optional()
                .describe("information_schema table types to keep, e.g. BASE TABLE, VIEW."),
        )
        .attr("tables", Attr::of(Type::list(table_type())).computed())
}

/// The filter parameters: like-any, like-all, not-like-all, regex.
fn filters(config: &Value) -> (Vec<String>, Vec<String>, Vec<String>, Option<String>) {
    let l = |a| strings(config, a).unwrap_or_default();
    (
        l("like_any_patterns"),
        l("like_all_patterns"),
        l("not_like_all_patterns"),
        s(config, "regex_pattern"),
    )
}

const FILTER: &str = "(cardinality($1::text[]) = 0 OR {col} LIKE ANY($1::text[])) AND (cardinality($2::text[]) = 0 OR {col} LIKE ALL($2::text[])) AND (cardinality($3::text[]) = 0 OR {col} NOT LIKE ALL($3::text[])) AND ($4::text IS NULL OR {col} ~ $4::text)";

async fn conn_for(pool: &Pool, config: &Value) -> Result<(crate::pool::Conn, String), Diagnostics> {
    let db = s(config, "database").unwrap_or_else(|| pool.default_database().to_string());
    let c = pool.get(Some(&db)).await.map_err(|e| e.into_diags(&db))?;
    Ok((c, db))
}

pub struct SchemasType;

impl DataSourceType<Pool> for SchemasType {
    fn name(&self) -> &str {
        "postgresql_schemas"
    }
    fn schema(&self) -> Result<ResourceSchema, Diagnostics> {
        Ok(schemas_schema())
    }
    fn instance(&self, data: Option<Arc<Pool>>) -> Box<dyn DataSource> {
        Box::new(Schemas { data })
    }
}

struct Schemas {
    data: Option<Arc<Pool>>,
}

#[async_trait]
impl DataSource for Schemas {
    async fn read(&self, _ctx: &Ctx, config: &Value) -> Result<Value, Diagnostics> {
        let pool = pool_of(&self.data)?;
        let (conn, db) = conn_for(&pool, config).await?;
        let (any, all, none, re) = filters(config);
        let system = b(config, "include_system_schemas").unwrap_or(false);
        let q = format!("SELECT nspname::text FROM pg_namespace WHERE ($5 OR (nspname NOT LIKE 'pg\\_%' AND nspname <> 'information_schema')) AND {} ORDER BY 1", FILTER.replace("{col}", "nspname"));
        let rows = conn
            .query(&q, &[&any, &all, &none, &re, &system])
            .await
            .map_err(|e| read_diag(&e, "schemas"))?;
        let names: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
        Ok(with(
            config,
            [("schemas", list_value(&names)), ("id", Value::string(db))],
        ))
    }
}

pub struct TablesType;

impl DataSourceType<Pool> for TablesType {
    fn name(&self) -> &str {
        "postgresql_tables"
    }
    fn schema(&self) -> Result<ResourceSchema, Diagnostics> {
        Ok(tables_schema())
    }
    fn instance(&self, data: Option<Arc<Pool>>) -> Box<dyn DataSource> {
        Box::new(Tables { data })
    }
}

struct Tables {
    data: Option<Arc<Pool>>,
}

#[async_trait]
impl DataSource for Tables {
    async fn read(&self, _ctx: &Ctx, config: &Value) -> Result<Value, Diagnostics> {
        let pool = pool_of(&self.data)?;
        let (conn, db) = conn_for(&pool, config).await?;
        let (any, all, none, re) = filters(config);
        let schemas = strings(config, "schemas").unwrap_or_default();
        let types = strings(config, "table_types").unwrap_or_default();
        let q = format!(
            "SELECT table_name::text, table_schema::text, table_type::text FROM information_schema.tables WHERE \
             (CASE WHEN cardinality($5::text[]) = 0 THEN table_schema NOT IN ('pg_catalog', 'information_schema') ELSE table_schema = ANY($5::text[]) END) \
             AND (cardinality($6::text[]) = 0 OR table_type = ANY($6::text[])) AND {} ORDER BY 2, 1",
            FILTER.replace("{col}", "table_name")
        );
        let rows = conn
            .query(&q, &[&any, &all, &none, &re, &schemas, &types])
            .await
            .map_err(|e| read_diag(&e, "tables"))?;
        let tables: Vec<Value> = rows
            .iter()
            .map(|r| {
                Value::object_from([
                    ("object_name", Value::string(r.get::<_, String>(0))),
                    ("schema_name", Value::string(r.get::<_, String>(1))),
                    ("table_type", Value::string(r.get::<_, String>(2))),
                ])
            })
            .collect();
        Ok(with(
            config,
            [
                ("tables", Value::list(table_type(), tables)),
                ("id", Value::string(db)),
            ],
        ))
    }
}
