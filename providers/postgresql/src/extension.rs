//! `postgresql_extension`: an extension installed in one database (where
//! the server has it available). Schema and version change in place;
//! name and database replace it. Import ID: `database.extension`.

use crate::pool::{code_of, read_diag, run_in_tx, ConnectError, Pool};
use crate::sql::Stmt;
use crate::values::{b, pool_of, s, typed_object, with, Identifier};
use async_trait::async_trait;
use std::sync::Arc;
use terrane_sdk::{
    Applied, Attr, Ctx, Diagnostics, Path, PlanState, Resource, ResourceSchema, ResourceTypeOf,
    Type, Value,
};

pub fn extension_schema() -> ResourceSchema {
    ResourceSchema::new(0)
        .describe("A PostgreSQL extension in a database.")
        .attr(
            "name",
            Attr::string()
                .required()
                .requires_replace()
                .validate(Identifier),
        )
        .attr(
            "database",
            Attr::string()
                .optional_computed()
                .use_state_for_unknown()
                .requires_replace()
                .validate(Identifier),
        )
        .attr(
            "schema",
            Attr::string()
                .optional_computed()
                .use_state_for_unknown()
                .validate(Identifier),
        )
        .attr(
            "version",
            Attr::string().optional_computed().use_state_for_unknown(),
        )
        .attr("create_cascade", Attr::bool().default(Value::bool(false)))
        .attr("drop_cascade", Attr::bool().default(Value::bool(false)))
        .attr("id", Attr::string().computed().use_state_for_unknown())
}

/// The `postgresql_extension` resource type.
pub(crate) const EXTENSION: ResourceTypeOf<Extension, Pool> =
    ResourceTypeOf::new("postgresql_extension", extension_schema, |data| Extension {
        data,
    });

pub(crate) struct Extension {
    data: Option<Arc<Pool>>,
}

pub fn create_stmt(planned: &Value) -> Stmt {
    let mut st = Stmt::new()
        .kw("CREATE EXTENSION IF NOT EXISTS ")
        .ident(&s(planned, "name").unwrap_or_default());
    if let Some(sc) = s(planned, "schema") {
        st = st.kw(" SCHEMA ").ident(&sc);
    }
    if let Some(v) = s(planned, "version") {
        st = st.kw(" VERSION ").lit(&v);
    }
    if b(planned, "create_cascade").unwrap_or(false) {
        st = st.kw(" CASCADE");
    }
    st
}

pub fn update_stmts(prior: &Value, planned: &Value) -> Vec<Stmt> {
    let name = s(planned, "name").unwrap_or_default();
    let mut out = Vec::new();
    if let Some(sc) = s(planned, "schema").filter(|x| Some(x) != s(prior, "schema").as_ref()) {
        out.push(
            Stmt::new()
                .kw("ALTER EXTENSION ")
                .ident(&name)
                .kw(" SET SCHEMA ")
                .ident(&sc),
        );
    }
    if let Some(v) = s(planned, "version").filter(|x| Some(x) != s(prior, "version").as_ref()) {
        out.push(
            Stmt::new()
                .kw("ALTER EXTENSION ")
                .ident(&name)
                .kw(" UPDATE TO ")
                .lit(&v),
        );
    }
    out
}

fn blame(e: &tokio_postgres::Error, st: &Stmt) -> Option<Path> {
    let attr = match code_of(e)? {
        "0A000" | "58P01" => "name",
        "3F000" => "schema",
        "22023" if st.shown.contains("VERSION") || st.shown.contains("UPDATE TO") => "version",
        _ => return None,
    };
    Some(Path::root().attr(attr))
}

async fn fetch(
    pool: &Pool,
    database: &str,
    name: &str,
) -> Result<Option<(String, String)>, Diagnostics> {
    let mut conn = match pool.get(Some(database)).await {
        Ok(c) => c,
        Err(ConnectError::NoDatabase) => return Ok(None),
        Err(e) => return Err(e.into_diags(database)),
    };
    let row = conn
        .query_opt_prepared("SELECT n.nspname::text, e.extversion FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = $1", &[&name])
        .await
        .map_err(|e| read_diag(&e, "extension"))?;
    Ok(row.map(|r| (r.get(0), r.get(1))))
}

fn state_from(prior: &Value, database: &str, name: &str, schema: &str, version: &str) -> Value {
    typed_object(
        &extension_schema(),
        [
            ("name", Value::string(name)),
            ("database", Value::string(database)),
            ("schema", Value::string(schema)),
            ("version", Value::string(version)),
            (
                "create_cascade",
                Value::bool(b(prior, "create_cascade").unwrap_or(false)),
            ),
            (
                "drop_cascade",
                Value::bool(b(prior, "drop_cascade").unwrap_or(false)),
            ),
            ("id", Value::string(format!("{database}.{name}"))),
        ],
    )
}

impl Extension {
    fn database(&self, pool: &Pool, v: &Value) -> String {
        s(v, "database").unwrap_or_else(|| pool.default_database().to_string())
    }

    async fn read_state(&self, state: &Value) -> Result<Option<Applied>, Diagnostics> {
        let pool = pool_of(&self.data)?;
        let db = self.database(&pool, state);
        let name = s(state, "name").unwrap_or_default();
        Ok(fetch(&pool, &db, &name)
            .await?
            .map(|(sc, v)| Applied::new(state_from(state, &db, &name, &sc, &v))))
    }

    async fn run(&self, v: &Value, stmts: &[Stmt], summary: &str) -> Result<(), Diagnostics> {
        let pool = pool_of(&self.data)?;
        let db = self.database(&pool, v);
        let mut conn = pool.get(Some(&db)).await.map_err(|e| e.into_diags(&db))?;
        run_in_tx(&mut conn, stmts, summary, blame).await
    }
}

#[async_trait]
impl Resource for Extension {
    async fn create(
        &self,
        _ctx: &Ctx,
        planned: &Value,
        _config: &Value,
    ) -> Result<Applied, Diagnostics> {
        self.run(planned, &[create_stmt(planned)], "Cannot create extension")
            .await?;
        self.read_state(planned).await?.ok_or_else(|| {
            Diagnostics::error(
                "Extension vanished",
                "The extension was created but could not be read back.",
            )
        })
    }

    async fn read(
        &self,
        _ctx: &Ctx,
        state: &Value,
        _private: &[u8],
    ) -> Result<Option<Applied>, Diagnostics> {
        self.read_state(state).await
    }

    async fn update(
        &self,
        _ctx: &Ctx,
        prior: &Value,
        planned: &Value,
        _config: &Value,
    ) -> Result<Applied, Diagnostics> {
        self.run(
            planned,
            &update_stmts(prior, planned),
            "Cannot update extension",
        )
        .await?;
        self.read_state(planned).await?.ok_or_else(|| {
            Diagnostics::error(
                "Extension vanished",
                "The extension was updated but could not be read back.",
            )
        })
    }

    async fn delete(&self, _ctx: &Ctx, prior: &Value) -> Result<(), Diagnostics> {
        let pool = pool_of(&self.data)?;
        let db = self.database(&pool, prior);
        let mut conn = match pool.get(Some(&db)).await {
            Ok(c) => c,
            Err(ConnectError::NoDatabase) => return Ok(()),
            Err(e) => return Err(e.into_diags(&db)),
        };
        let st = Stmt::new()
            .kw("DROP EXTENSION IF EXISTS ")
            .ident(&s(prior, "name").unwrap_or_default())
            .kw(if b(prior, "drop_cascade").unwrap_or(false) {
                " CASCADE"
            } else {
                " RESTRICT"
            });
        run_in_tx(&mut conn, &[st], "Cannot drop extension", |_, _| {
            Some(Path::root().attr("drop_cascade"))
        })
        .await
    }

    async fn modify_plan(&self, _ctx: &Ctx, plan: &mut PlanState) -> Diagnostics {
        if plan.prior.is_null() && plan.config.get_attr("database").is_none_or(Value::is_null) {
            if let Ok(pool) = pool_of(&self.data) {
                plan.planned = with(
                    &plan.planned,
                    [("database", Value::string(pool.default_database()))],
                );
            }
        }
        if let (Some(db), Some(name)) = (s(&plan.planned, "database"), s(&plan.planned, "name")) {
            plan.planned = with(
                &plan.planned,
                [("id", Value::string(format!("{db}.{name}")))],
            );
        }
        Diagnostics::new()
    }

    async fn import(&self, _ctx: &Ctx, id: &str) -> Result<Value, Diagnostics> {
        let pool = pool_of(&self.data)?;
        let Some((db, name)) = id.split_once('.') else {
            return Err(Diagnostics::error(
                "Invalid import ID",
                format!("{id:?} is not of the form database.extension."),
            ));
        };
        match fetch(&pool, db, name).await? {
            Some((sc, v)) => Ok(state_from(&Value::null(Type::Dynamic), db, name, &sc, &v)),
            None => Err(Diagnostics::error("Cannot import extension", format!("The extension {name:?} is not installed in database {db:?} (import ID {id:?}, of the form database.extension)."))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(case: &str, got: Vec<Stmt>, want: &[&str]) {
        let shown: Vec<&str> = got.iter().map(|s| s.shown.as_str()).collect();
        assert_eq!(shown, want, "case {case}");
    }

    #[test]
    fn statements() {
        let v = typed_object(
            &extension_schema(),
            [
                ("name", Value::string("hstore")),
                ("schema", Value::string("ext")),
                ("version", Value::string("1.8")),
                ("create_cascade", Value::bool(true)),
            ],
        );
        check(
            "create_full",
            vec![create_stmt(&v)],
            &[r#"CREATE EXTENSION IF NOT EXISTS "hstore" SCHEMA "ext" VERSION '1.8' CASCADE"#],
        );
        let moved = with(
            &v,
            [
                ("schema", Value::string("public")),
                ("version", Value::string("1.7")),
            ],
        );
        check(
            "move_and_update",
            update_stmts(&v, &moved),
            &[
                r#"ALTER EXTENSION "hstore" SET SCHEMA "public""#,
                r#"ALTER EXTENSION "hstore" UPDATE TO '1.7'"#,
            ],
        );
        check("nothing_to_do", update_stmts(&v, &v), &[]);
    }
}
