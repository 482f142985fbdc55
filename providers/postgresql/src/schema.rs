//! `postgresql_schema`: a schema in one database (the provider's database
//! when `database` is unset). Rename and owner change in place, in one
//! transaction; moving to another database replaces it. Import ID:
//! `database.schema` (split at the first dot).

use crate::pool::{code_of, read_diag, run_in_tx, ConnectError, Pool};
use crate::sql::Stmt;
use crate::values::{b, oid_of, oid_private, pool_of, s, typed_object, with, Identifier};
use async_trait::async_trait;
use std::sync::Arc;
use terrane_sdk::{
    Applied, Attr, Ctx, Diagnostics, Path, PlanState, Resource, ResourceSchema, ResourceTypeOf,
    Type, Value,
};

pub fn schema_schema() -> ResourceSchema {
    ResourceSchema::new(0)
        .describe("A schema in a PostgreSQL database.")
        .attr("name", Attr::string().required().validate(Identifier))
        .attr(
            "database",
            Attr::string()
                .optional_computed()
                .use_state_for_unknown()
                .requires_replace()
                .validate(Identifier),
        )
        .attr(
            "owner",
            Attr::string()
                .optional_computed()
                .use_state_for_unknown()
                .validate(Identifier),
        )
        .attr("if_not_exists", Attr::bool().default(Value::bool(true)))
        .attr("drop_cascade", Attr::bool().default(Value::bool(false)))
        .attr("id", Attr::string().computed().use_state_for_unknown())
}

/// The `postgresql_schema` resource type.
pub(crate) const SCHEMA: ResourceTypeOf<Schema, Pool> =
    ResourceTypeOf::new("postgresql_schema", schema_schema, |data| Schema { data });

pub(crate) struct Schema {
    data: Option<Arc<Pool>>,
}

pub fn create_stmts(planned: &Value) -> Vec<Stmt> {
    let name = s(planned, "name").unwrap_or_default();
    let mut st = Stmt::new()
        .kw(if b(planned, "if_not_exists").unwrap_or(true) {
            "CREATE SCHEMA IF NOT EXISTS "
        } else {
            "CREATE SCHEMA "
        })
        .ident(&name);
    let owner = s(planned, "owner");
    if let Some(o) = &owner {
        st = st.kw(" AUTHORIZATION ").ident(o);
    }
    let mut out = vec![st];
    if let Some(o) = owner.filter(|_| b(planned, "if_not_exists").unwrap_or(true)) {
        // An existing schema adopted by IF NOT EXISTS gets the owner too.
        out.push(
            Stmt::new()
                .kw("ALTER SCHEMA ")
                .ident(&name)
                .kw(" OWNER TO ")
                .ident(&o),
        );
    }
    out
}

pub fn update_stmts(prior: &Value, planned: &Value) -> Vec<Stmt> {
    let (old, name) = (
        s(prior, "name").unwrap_or_default(),
        s(planned, "name").unwrap_or_default(),
    );
    let mut out = Vec::new();
    if old != name {
        out.push(
            Stmt::new()
                .kw("ALTER SCHEMA ")
                .ident(&old)
                .kw(" RENAME TO ")
                .ident(&name),
        );
    }
    if let Some(o) = s(planned, "owner").filter(|o| Some(o) != s(prior, "owner").as_ref()) {
        out.push(
            Stmt::new()
                .kw("ALTER SCHEMA ")
                .ident(&name)
                .kw(" OWNER TO ")
                .ident(&o),
        );
    }
    out
}

pub fn drop_stmt(prior: &Value) -> Stmt {
    let st = Stmt::new()
        .kw("DROP SCHEMA IF EXISTS ")
        .ident(&s(prior, "name").unwrap_or_default());
    st.kw(if b(prior, "drop_cascade").unwrap_or(false) {
        " CASCADE"
    } else {
        " RESTRICT"
    })
}

fn blame(e: &tokio_postgres::Error, st: &Stmt) -> Option<Path> {
    match code_of(e) {
        Some("42704") if st.shown.contains("OWNER") || st.shown.contains("AUTHORIZATION") => {
            Some(Path::root().attr("owner"))
        }
        Some("42P06") => Some(Path::root().attr("name")),
        _ => None,
    }
}

/// `(oid, name, owner)` of the schema, by oid then by name; `None` when it
/// or its database is gone.
async fn fetch(
    pool: &Pool,
    database: &str,
    oid: Option<u32>,
    name: &str,
) -> Result<Option<(u32, String, String)>, Diagnostics> {
    let mut conn = match pool.get(Some(database)).await {
        Ok(c) => c,
        Err(ConnectError::NoDatabase) => return Ok(None),
        Err(e) => return Err(e.into_diags(database)),
    };
    let q = "SELECT n.oid, n.nspname::text, pg_get_userbyid(n.nspowner)::text FROM pg_namespace n WHERE ";
    let mut row = None;
    if let Some(oid) = oid {
        row = conn
            .query_opt_prepared(&format!("{q} n.oid = $1"), &[&oid])
            .await
            .map_err(|e| read_diag(&e, "schema"))?;
    }
    if row.is_none() {
        row = conn
            .query_opt_prepared(&format!("{q} n.nspname = $1"), &[&name])
            .await
            .map_err(|e| read_diag(&e, "schema"))?;
    }
    Ok(row.map(|r| (r.get(0), r.get(1), r.get(2))))
}

fn state_from(prior: &Value, database: &str, name: &str, owner: &str) -> Value {
    typed_object(
        &schema_schema(),
        [
            ("name", Value::string(name)),
            ("database", Value::string(database)),
            ("owner", Value::string(owner)),
            (
                "if_not_exists",
                Value::bool(b(prior, "if_not_exists").unwrap_or(true)),
            ),
            (
                "drop_cascade",
                Value::bool(b(prior, "drop_cascade").unwrap_or(false)),
            ),
            ("id", Value::string(format!("{database}.{name}"))),
        ],
    )
}

impl Schema {
    fn database(&self, pool: &Pool, v: &Value) -> String {
        s(v, "database").unwrap_or_else(|| pool.default_database().to_string())
    }

    async fn read_state(
        &self,
        state: &Value,
        oid: Option<u32>,
    ) -> Result<Option<Applied>, Diagnostics> {
        let pool = pool_of(&self.data)?;
        let db = self.database(&pool, state);
        let name = s(state, "name").unwrap_or_default();
        Ok(fetch(&pool, &db, oid, &name)
            .await?
            .map(|(oid, name, owner)| Applied {
                state: state_from(state, &db, &name, &owner),
                private: oid_private(oid),
            }))
    }

    async fn run(&self, v: &Value, stmts: &[Stmt], summary: &str) -> Result<(), Diagnostics> {
        let pool = pool_of(&self.data)?;
        let db = self.database(&pool, v);
        let mut conn = pool.get(Some(&db)).await.map_err(|e| e.into_diags(&db))?;
        run_in_tx(&mut conn, stmts, summary, blame).await
    }
}

#[async_trait]
impl Resource for Schema {
    async fn create(
        &self,
        _ctx: &Ctx,
        planned: &Value,
        _config: &Value,
    ) -> Result<Applied, Diagnostics> {
        self.run(planned, &create_stmts(planned), "Cannot create schema")
            .await?;
        self.read_state(planned, None).await?.ok_or_else(|| {
            Diagnostics::error(
                "Schema vanished",
                "The schema was created but could not be read back.",
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
        self.run(
            planned,
            &update_stmts(prior, planned),
            "Cannot update schema",
        )
        .await?;
        self.read_state(planned, None).await?.ok_or_else(|| {
            Diagnostics::error(
                "Schema vanished",
                "The schema was updated but could not be read back.",
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
        run_in_tx(
            &mut conn,
            &[drop_stmt(prior)],
            "Cannot drop schema",
            |_, _| Some(Path::root().attr("drop_cascade")),
        )
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
                format!("{id:?} is not of the form database.schema."),
            ));
        };
        match fetch(&pool, db, None, name).await? {
            Some((_, name, owner)) => Ok(state_from(&Value::null(Type::Dynamic), db, &name, &owner)),
            None => Err(Diagnostics::error("Cannot import schema", format!("No schema {name:?} exists in database {db:?} (import ID {id:?}, of the form database.schema)."))),
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
            &schema_schema(),
            [
                ("name", Value::string("Sales")),
                ("owner", Value::string("app")),
                ("if_not_exists", Value::bool(false)),
            ],
        );
        check(
            "create_owned",
            create_stmts(&v),
            &[r#"CREATE SCHEMA "Sales" AUTHORIZATION "app""#],
        );
        let adopt = with(&v, [("if_not_exists", Value::bool(true))]);
        check(
            "create_if_not_exists_sets_owner",
            create_stmts(&adopt),
            &[
                r#"CREATE SCHEMA IF NOT EXISTS "Sales" AUTHORIZATION "app""#,
                r#"ALTER SCHEMA "Sales" OWNER TO "app""#,
            ],
        );
        let moved = with(
            &v,
            [
                ("name", Value::string("sales")),
                ("owner", Value::string("ops")),
            ],
        );
        check(
            "rename_and_owner",
            update_stmts(&v, &moved),
            &[
                r#"ALTER SCHEMA "Sales" RENAME TO "sales""#,
                r#"ALTER SCHEMA "sales" OWNER TO "ops""#,
            ],
        );
        check(
            "drop_restrict",
            vec![drop_stmt(&v)],
            &[r#"DROP SCHEMA IF EXISTS "Sales" RESTRICT"#],
        );
        check(
            "drop_cascade",
            vec![drop_stmt(&with(&v, [("drop_cascade", Value::bool(true))]))],
            &[r#"DROP SCHEMA IF EXISTS "Sales" CASCADE"#],
        );
    }
}
