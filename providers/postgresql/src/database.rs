//! `postgresql_database`. CREATE DATABASE cannot run in a transaction, so
//! every property goes into the one CREATE statement (nothing is left
//! half-made if it fails). Encoding, template and locales cannot change
//! after creation: a change replaces the database. Name, owner,
//! connection limit, allow_connections and is_template change in place,
//! in one transaction. PostgreSQL does not record the template, so it is
//! kept as written (and stays null after an import). Import ID: the
//! database name.

use crate::normalize::{keep, same_encoding, same_locale};
use crate::pool::{code_of, read_diag, run_in_tx, run_one, Pool};
use crate::sql::Stmt;
use crate::values::{
    b, n, oid_of, oid_private, pool_of, s, str_value, typed_object, with, Identifier,
};
use async_trait::async_trait;
use std::sync::Arc;
use terrane_sdk::validate::AtLeast;
use terrane_sdk::{
    Applied, Attr, Ctx, Diagnostics, Path, PlanState, Resource, ResourceSchema, ResourceTypeOf,
    Type, Value,
};

fn str_pair(p: &Value, c: &Value) -> Option<(String, String)> {
    Some((p.as_str()?.to_string(), c.as_str()?.to_string()))
}

/// A fixed-at-creation property: replace when the prior value is known
/// and the new one means something else.
fn fixed(eq: fn(&str, &str) -> bool) -> Attr {
    Attr::string()
        .optional_computed()
        .use_state_for_unknown()
        .semantic_equality(move |p, c| str_pair(p, c).is_some_and(|(a, b)| eq(&a, &b)))
        .requires_replace_if(move |p, a| {
            a.is_known() && str_pair(p, a).is_some_and(|(x, y)| !eq(&x, &y))
        })
}

fn exact(a: &str, b: &str) -> bool {
    a == b
}

pub fn database_schema() -> ResourceSchema {
    ResourceSchema::new(0)
        .describe("A PostgreSQL database.")
        .attr("name", Attr::string().required().validate(Identifier))
        .attr("owner", Attr::string().optional_computed().use_state_for_unknown().validate(Identifier))
        .attr("template", fixed(exact).validate(Identifier).describe("Template to copy (default template0); not recorded by PostgreSQL, so null after import."))
        .attr("encoding", fixed(same_encoding))
        .attr("lc_collate", fixed(same_locale))
        .attr("lc_ctype", fixed(same_locale))
        .attr("connection_limit", Attr::number().default(Value::number(-1)).validate(AtLeast(-1)))
        .attr("allow_connections", Attr::bool().default(Value::bool(true)))
        .attr("is_template", Attr::bool().default(Value::bool(false)))
        .attr("id", Attr::string().computed().use_state_for_unknown())
}

/// The `postgresql_database` resource type.
pub(crate) const DATABASE: ResourceTypeOf<Database, Pool> =
    ResourceTypeOf::new("postgresql_database", database_schema, |data| Database {
        data,
    });

pub(crate) struct Database {
    data: Option<Arc<Pool>>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct DatabaseRow {
    pub oid: u32,
    pub name: String,
    pub owner: String,
    pub encoding: String,
    pub lc_collate: String,
    pub lc_ctype: String,
    pub connection_limit: i64,
    pub allow_connections: bool,
    pub is_template: bool,
}

fn with_clause(st: Stmt, v: &Value) -> Stmt {
    st.kw(" CONNECTION LIMIT ")
        .int(n(v, "connection_limit").unwrap_or(-1))
        .kw(if b(v, "allow_connections").unwrap_or(true) {
            " ALLOW_CONNECTIONS true"
        } else {
            " ALLOW_CONNECTIONS false"
        })
        .kw(if b(v, "is_template").unwrap_or(false) {
            " IS_TEMPLATE true"
        } else {
            " IS_TEMPLATE false"
        })
}

/// The one CREATE DATABASE statement.
pub fn create_stmt(planned: &Value) -> Stmt {
    let mut st = Stmt::new()
        .kw("CREATE DATABASE ")
        .ident(&s(planned, "name").unwrap_or_default());
    if let Some(o) = s(planned, "owner") {
        st = st.kw(" OWNER ").ident(&o);
    }
    st = st
        .kw(" TEMPLATE ")
        .ident(&s(planned, "template").unwrap_or_else(|| "template0".into()));
    for (attr, kw) in [
        ("encoding", " ENCODING "),
        ("lc_collate", " LC_COLLATE "),
        ("lc_ctype", " LC_CTYPE "),
    ] {
        if let Some(x) = s(planned, attr) {
            st = st.kw(kw).lit(&x);
        }
    }
    with_clause(st, planned)
}

/// The in-place changes, for one transaction.
pub fn update_stmts(prior: &Value, planned: &Value) -> Vec<Stmt> {
    let old = s(prior, "name").unwrap_or_default();
    let name = s(planned, "name").unwrap_or_default();
    let mut out = Vec::new();
    if old != name {
        out.push(
            Stmt::new()
                .kw("ALTER DATABASE ")
                .ident(&old)
                .kw(" RENAME TO ")
                .ident(&name),
        );
    }
    if let Some(o) = s(planned, "owner").filter(|o| Some(o) != s(prior, "owner").as_ref()) {
        out.push(
            Stmt::new()
                .kw("ALTER DATABASE ")
                .ident(&name)
                .kw(" OWNER TO ")
                .ident(&o),
        );
    }
    out.push(with_clause(
        Stmt::new().kw("ALTER DATABASE ").ident(&name).kw(" WITH"),
        planned,
    ));
    out
}

pub fn state_from(schema: &ResourceSchema, prior: &Value, row: &DatabaseRow) -> Value {
    let kept = |attr: &str, server: &str, eq: fn(&str, &str) -> bool| {
        Value::string(keep(s(prior, attr).as_ref(), server.to_string(), |a, b| {
            eq(a, b)
        }))
    };
    typed_object(
        schema,
        [
            ("name", Value::string(row.name.as_str())),
            ("id", Value::string(row.name.as_str())),
            ("owner", Value::string(row.owner.as_str())),
            ("template", str_value(s(prior, "template").as_deref())),
            ("encoding", kept("encoding", &row.encoding, same_encoding)),
            (
                "lc_collate",
                kept("lc_collate", &row.lc_collate, same_locale),
            ),
            ("lc_ctype", kept("lc_ctype", &row.lc_ctype, same_locale)),
            ("connection_limit", Value::number(row.connection_limit)),
            ("allow_connections", Value::bool(row.allow_connections)),
            ("is_template", Value::bool(row.is_template)),
        ],
    )
}

const SELECT: &str = "SELECT d.oid, d.datname::text, pg_get_userbyid(d.datdba)::text, pg_encoding_to_char(d.encoding)::text, d.datcollate::text, d.datctype::text, d.datconnlimit, d.datallowconn, d.datistemplate FROM pg_database d";

pub async fn fetch(
    pool: &Pool,
    oid: Option<u32>,
    name: &str,
) -> Result<Option<DatabaseRow>, Diagnostics> {
    let mut conn = pool
        .get(None)
        .await
        .map_err(|e| e.into_diags(pool.default_database()))?;
    let mut row = None;
    if let Some(oid) = oid {
        row = conn
            .query_opt_prepared(&format!("{SELECT} WHERE d.oid = $1"), &[&oid])
            .await
            .map_err(|e| read_diag(&e, "database"))?;
    }
    if row.is_none() {
        row = conn
            .query_opt_prepared(&format!("{SELECT} WHERE d.datname = $1"), &[&name])
            .await
            .map_err(|e| read_diag(&e, "database"))?;
    }
    Ok(row.map(|r| DatabaseRow {
        oid: r.get(0),
        name: r.get(1),
        owner: r.get(2),
        encoding: r.get(3),
        lc_collate: r.get(4),
        lc_ctype: r.get(5),
        connection_limit: i64::from(r.get::<_, i32>(6)),
        allow_connections: r.get(7),
        is_template: r.get(8),
    }))
}

/// Which attribute a failed database statement is about; `v` is the
/// planned object (a locale error names the value, which tells which of
/// the two locale attributes it was).
fn blame(e: &tokio_postgres::Error, st: &Stmt, v: &Value) -> Option<Path> {
    let msg = e
        .as_db_error()
        .map(|d| d.message().to_string())
        .unwrap_or_default();
    let names = |attr: &str| s(v, attr).is_some_and(|x| msg.contains(&format!("\"{x}\"")));
    let attr = match code_of(e) {
        Some("42704") if st.shown.contains(" OWNER ") => "owner",
        Some("42P04") => "name",
        Some("3D000") if st.shown.contains(" TEMPLATE ") => "template",
        _ if msg.contains("encoding") && names("encoding") => "encoding",
        _ if msg.contains("encoding") && s(v, "encoding").is_some() && !msg.contains("locale") => {
            "encoding"
        }
        _ if names("lc_collate") => "lc_collate",
        _ if names("lc_ctype") => "lc_ctype",
        _ => return None,
    };
    Some(Path::root().attr(attr))
}

impl Database {
    async fn read_state(
        &self,
        state: &Value,
        oid: Option<u32>,
    ) -> Result<Option<Applied>, Diagnostics> {
        let pool = pool_of(&self.data)?;
        let name = s(state, "name").unwrap_or_default();
        Ok(fetch(&pool, oid, &name).await?.map(|row| Applied {
            state: state_from(&database_schema(), state, &row),
            private: oid_private(row.oid),
        }))
    }
}

#[async_trait]
impl Resource for Database {
    async fn create(
        &self,
        _ctx: &Ctx,
        planned: &Value,
        _config: &Value,
    ) -> Result<Applied, Diagnostics> {
        let pool = pool_of(&self.data)?;
        let planned = with(
            planned,
            [(
                "template",
                Value::string(s(planned, "template").unwrap_or_else(|| "template0".into())),
            )],
        );
        let st = create_stmt(&planned);
        let conn = pool
            .get(None)
            .await
            .map_err(|e| e.into_diags(pool.default_database()))?;
        if let Err(e) = conn.batch_execute(&st.sql).await {
            terrane_sdk::log::debug("statement failed", &[("sql", st.shown.clone())]);
            return Err(crate::pool::stmt_diag(
                &e,
                "Cannot create database",
                Some(&st),
                blame(&e, &st, &planned),
            ));
        }
        drop(conn);
        self.read_state(&planned, None).await?.ok_or_else(|| {
            Diagnostics::error(
                "Database vanished",
                "The database was created but could not be read back.",
            )
        })
    }

    async fn read(
        &self,
        _ctx: &Ctx,
        state: &Value,
        private: &[u8],
    ) -> Result<Option<Applied>, Diagnostics> {
        self.read_state(state, oid_of(private)).await
    }

    async fn update(
        &self,
        _ctx: &Ctx,
        prior: &Value,
        planned: &Value,
        _config: &Value,
    ) -> Result<Applied, Diagnostics> {
        let pool = pool_of(&self.data)?;
        if let Some(old) = s(prior, "name") {
            pool.evict(&old);
        }
        let mut conn = pool
            .get(None)
            .await
            .map_err(|e| e.into_diags(pool.default_database()))?;
        run_in_tx(
            &mut conn,
            &update_stmts(prior, planned),
            "Cannot update database",
            |e, st| blame(e, st, planned),
        )
        .await?;
        drop(conn);
        self.read_state(planned, None).await?.ok_or_else(|| {
            Diagnostics::error(
                "Database vanished",
                "The database was updated but could not be read back.",
            )
        })
    }

    async fn delete(&self, _ctx: &Ctx, prior: &Value) -> Result<(), Diagnostics> {
        let pool = pool_of(&self.data)?;
        let name = s(prior, "name").unwrap_or_default();
        pool.evict(&name);
        let conn = pool
            .get(None)
            .await
            .map_err(|e| e.into_diags(pool.default_database()))?;
        let row = conn.query_opt("SELECT datistemplate, current_setting('server_version_num')::int >= 130000 FROM pg_database WHERE datname = $1", &[&name]).await.map_err(|e| read_diag(&e, "database"))?;
        let Some(row) = row else { return Ok(()) };
        if row.get::<_, bool>(0) {
            run_one(
                &conn,
                &Stmt::new()
                    .kw("ALTER DATABASE ")
                    .ident(&name)
                    .kw(" IS_TEMPLATE false"),
                "Cannot drop database",
                None,
            )
            .await?;
        }
        let mut drop_stmt = Stmt::new().kw("DROP DATABASE IF EXISTS ").ident(&name);
        if row.get::<_, bool>(1) {
            drop_stmt = drop_stmt.kw(" WITH (FORCE)");
        }
        run_one(&conn, &drop_stmt, "Cannot drop database", None).await
    }

    async fn modify_plan(&self, _ctx: &Ctx, plan: &mut PlanState) -> Diagnostics {
        if let Some(name) = plan
            .planned
            .get_attr("name")
            .filter(|v| v.is_known())
            .cloned()
        {
            plan.planned = with(&plan.planned, [("id", name)]);
        }
        if plan.prior.is_null() && plan.config.get_attr("template").is_none_or(Value::is_null) {
            plan.planned = with(&plan.planned, [("template", Value::string("template0"))]);
        }
        Diagnostics::new()
    }

    async fn import(&self, _ctx: &Ctx, id: &str) -> Result<Value, Diagnostics> {
        let pool = pool_of(&self.data)?;
        match fetch(&pool, None, id).await? {
            Some(row) => Ok(state_from(&database_schema(), &Value::null(Type::Dynamic), &row)),
            None => Err(Diagnostics::error("Cannot import database", format!("No database named {id:?} exists on the server. The import ID is the database name, exactly as stored."))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db(pairs: &[(&'static str, Value)]) -> Value {
        typed_object(&database_schema(), pairs.iter().cloned())
    }

    #[track_caller]
    fn check(case: &str, got: Vec<Stmt>, want: &[&str]) {
        let shown: Vec<&str> = got.iter().map(|s| s.shown.as_str()).collect();
        assert_eq!(shown, want, "case {case}");
    }

    #[test]
    fn statements() {
        let v = db(&[
            ("name", Value::string("App DB")),
            ("owner", Value::string("app")),
            ("encoding", Value::string("utf8")),
            ("lc_collate", Value::string("C")),
            ("connection_limit", Value::number(3)),
        ]);
        check(
            "create_all_in_one_statement",
            vec![create_stmt(&v)],
            &[
                r#"CREATE DATABASE "App DB" OWNER "app" TEMPLATE "template0" ENCODING 'utf8' LC_COLLATE 'C' CONNECTION LIMIT 3 ALLOW_CONNECTIONS true IS_TEMPLATE false"#,
            ],
        );
        let moved = with(
            &v,
            [
                ("name", Value::string("app")),
                ("owner", Value::string("ops")),
                ("is_template", Value::bool(true)),
            ],
        );
        check(
            "rename_owner_options",
            update_stmts(&v, &moved),
            &[
                r#"ALTER DATABASE "App DB" RENAME TO "app""#,
                r#"ALTER DATABASE "app" OWNER TO "ops""#,
                r#"ALTER DATABASE "app" WITH CONNECTION LIMIT 3 ALLOW_CONNECTIONS true IS_TEMPLATE true"#,
            ],
        );
        check(
            "options_only",
            update_stmts(&v, &v),
            &[
                r#"ALTER DATABASE "App DB" WITH CONNECTION LIMIT 3 ALLOW_CONNECTIONS true IS_TEMPLATE false"#,
            ],
        );
    }

    #[test]
    fn read_normalizes_and_reports_drift() {
        let prior = db(&[
            ("name", Value::string("app")),
            ("encoding", Value::string("utf8")),
            ("lc_collate", Value::string("C.utf8")),
            ("template", Value::string("template0")),
        ]);
        let row = DatabaseRow {
            oid: 5,
            name: "app".into(),
            owner: "app".into(),
            encoding: "UTF8".into(),
            lc_collate: "C.UTF-8".into(),
            lc_ctype: "C".into(),
            connection_limit: -1,
            allow_connections: true,
            is_template: false,
        };
        let got = state_from(&database_schema(), &prior, &row);
        assert_eq!(
            (
                s(&got, "encoding").as_deref(),
                s(&got, "lc_collate").as_deref(),
                s(&got, "template").as_deref()
            ),
            (Some("utf8"), Some("C.utf8"), Some("template0")),
            "case spellings_kept"
        );
        let renamed = DatabaseRow {
            name: "app_old".into(),
            connection_limit: 9,
            ..row.clone()
        };
        let got = state_from(&database_schema(), &prior, &renamed);
        assert_eq!(
            (s(&got, "name").as_deref(), n(&got, "connection_limit")),
            (Some("app_old"), Some(9)),
            "case rename_and_limit_drift"
        );
        let imported = state_from(&database_schema(), &Value::null(Type::Dynamic), &row);
        assert_eq!(
            (
                s(&imported, "encoding").as_deref(),
                s(&imported, "template")
            ),
            (Some("UTF8"), None),
            "case import_takes_server_values"
        );
    }
}
