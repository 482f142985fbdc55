//! `postgresql_role`: a cluster-wide role. Every property changes in place
//! (ALTER ROLE ... WITH, RENAME TO, GRANT/REVOKE membership, SET
//! search_path), in one transaction. The password is never sent as text:
//! the provider computes the verifier the server would store (SCRAM-SHA-256,
//! or MD5 when the server's `password_encryption` says so) and sends that,
//! so the password cannot reach the server log (`log_statement`, a failed
//! statement's log line) or pg_stat_statements. It is never read back:
//! `password` stays as written in state; `password_wo` is write-only and is
//! sent on create and whenever `password_wo_version` changes. Import ID:
//! the role name.

use crate::normalize::{keep, parse_search_path, same_instant};
use crate::pool::{code_of, read_diag, run_in_tx, Pool};
use crate::sql::Stmt;
use crate::values::{
    b, n, oid_of, oid_private, pool_of, s, set_value, string_set, strings, typed_object, with,
    Identifier,
};
use async_trait::async_trait;
use std::collections::BTreeSet;
use std::sync::Arc;
use terrane_sdk::validate::{AlsoRequires, AtLeast, ConflictsWith};
use terrane_sdk::{
    Applied, Attr, Ctx, Diagnostics, Path, PlanState, Resource, ResourceSchema, ResourceTypeOf,
    Type, Value,
};

const FLAGS: [(&str, &str, bool); 7] = [
    ("superuser", "SUPERUSER", false),
    ("create_database", "CREATEDB", false),
    ("create_role", "CREATEROLE", false),
    ("inherit", "INHERIT", true),
    ("login", "LOGIN", false),
    ("replication", "REPLICATION", false),
    ("bypass_row_level_security", "BYPASSRLS", false),
];

pub fn role_schema() -> ResourceSchema {
    let mut s = ResourceSchema::new(0)
        .describe("A PostgreSQL role (user or group).")
        .attr("name", Attr::string().required().validate(Identifier))
        .attr("connection_limit", Attr::number().default(Value::number(-1)).validate(AtLeast(-1)))
        .attr("valid_until", Attr::string().default(Value::string("infinity")).semantic_equality(|p, c| matches!((p.as_str(), c.as_str()), (Some(a), Some(b)) if same_instant(a, b))))
        .attr("password", Attr::string().optional().sensitive().validate(ConflictsWith(vec!["password_wo".into()])))
        .attr("password_wo", Attr::string().optional().sensitive().write_only().validate(AlsoRequires(vec!["password_wo_version".into()])).describe("Write-only password: never stored in state; sent when password_wo_version changes."))
        .attr("password_wo_version", Attr::number().optional())
        .attr("roles", Attr::of(Type::set(Type::String)).default(Value::set(Type::String, Vec::new())).validate(Identifier))
        .attr("search_path", Attr::of(Type::list(Type::String)).optional().validate(Identifier))
        .attr("id", Attr::string().computed().use_state_for_unknown());
    for (name, _, default) in FLAGS {
        s = s.attr(name, Attr::bool().default(Value::bool(default)));
    }
    s
}

/// The `postgresql_role` resource type.
pub(crate) const ROLE: ResourceTypeOf<Role, Pool> =
    ResourceTypeOf::new("postgresql_role", role_schema, |data| Role { data });

pub(crate) struct Role {
    data: Option<Arc<Pool>>,
}

/// A role as the server has it.
#[derive(Clone, Debug, PartialEq)]
pub struct RoleRow {
    pub oid: u32,
    pub name: String,
    pub flags: [bool; 7],
    pub connection_limit: i64,
    pub valid_until: String,
    pub roles: BTreeSet<String>,
    pub search_path: Option<Vec<String>>,
}

/// The options clause shared by CREATE ROLE and ALTER ROLE.
fn options(mut st: Stmt, v: &Value) -> Stmt {
    st = st.kw(" WITH");
    for (attr, kw, default) in FLAGS {
        let on = b(v, attr).unwrap_or(default);
        st = st.kw(if on { " " } else { " NO" }).kw(kw);
    }
    st = st
        .kw(" CONNECTION LIMIT ")
        .int(n(v, "connection_limit").unwrap_or(-1));
    st.kw(" VALID UNTIL ")
        .lit(&s(v, "valid_until").unwrap_or_else(|| "infinity".into()))
}

fn search_path_stmt(name: &str, path: Option<&[String]>) -> Stmt {
    match path {
        Some(p) if !p.is_empty() => Stmt::new()
            .kw("ALTER ROLE ")
            .ident(name)
            .kw(" SET search_path TO ")
            .idents(p.iter().map(String::as_str)),
        _ => Stmt::new()
            .kw("ALTER ROLE ")
            .ident(name)
            .kw(" RESET search_path"),
    }
}

/// How the server stores passwords (its `password_encryption`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PasswordEncryption {
    ScramSha256,
    Md5,
}

/// What is sent for `password` of role `role`: the verifier the server
/// would compute itself. A value that already is a verifier
/// (`SCRAM-SHA-256$...`, or `md5` and 32 hex digits) is sent unchanged, as
/// the server would take it as one either way.
pub fn password_verifier(password: &str, role: &str, how: PasswordEncryption) -> String {
    let is_md5 = password.len() == 35
        && password.starts_with("md5")
        && password[3..].bytes().all(|b| b.is_ascii_hexdigit());
    if password.starts_with("SCRAM-SHA-256$") || is_md5 {
        return password.to_string();
    }
    match how {
        PasswordEncryption::ScramSha256 => {
            postgres_protocol::password::scram_sha_256(password.as_bytes())
        }
        PasswordEncryption::Md5 => postgres_protocol::password::md5(password.as_bytes(), role),
    }
}

/// The session's `password_encryption` (md5 or scram-sha-256).
async fn password_encryption(
    conn: &tokio_postgres::Client,
) -> Result<PasswordEncryption, Diagnostics> {
    let row = conn
        .query_one("SELECT current_setting('password_encryption')", &[])
        .await
        .map_err(|e| read_diag(&e, "the server's password_encryption"))?;
    let how: String = row.get(0);
    Ok(if how == "md5" {
        PasswordEncryption::Md5
    } else {
        PasswordEncryption::ScramSha256
    })
}

/// The verifier for `password` of `role`, as this server stores them.
async fn verifier_for(
    conn: &tokio_postgres::Client,
    password: Option<&str>,
    role: &str,
) -> Result<Option<String>, Diagnostics> {
    match password {
        Some(p) => Ok(Some(password_verifier(
            p,
            role,
            password_encryption(conn).await?,
        ))),
        None => Ok(None),
    }
}

/// CREATE ROLE and what goes with it; `password` is the verifier (see
/// [`password_verifier`]) of `password` or the write-only `password_wo`.
pub fn create_stmts(planned: &Value, password: Option<&str>) -> Vec<Stmt> {
    let name = s(planned, "name").unwrap_or_default();
    let mut create = options(Stmt::new().kw("CREATE ROLE ").ident(&name), planned);
    if let Some(p) = password {
        create = create.kw(" PASSWORD ").secret(p);
    }
    let mut out = vec![create];
    for r in string_set(planned, "roles").unwrap_or_default() {
        out.push(Stmt::new().kw("GRANT ").ident(&r).kw(" TO ").ident(&name));
    }
    if let Some(p) = strings(planned, "search_path").filter(|p| !p.is_empty()) {
        out.push(search_path_stmt(&name, Some(&p)));
    }
    out
}

/// What changes a role from `prior` to `planned`; `password` is the new
/// password's verifier when one must be sent, `Some(None)` to remove it.
pub fn update_stmts(prior: &Value, planned: &Value, password: Option<Option<&str>>) -> Vec<Stmt> {
    let old = s(prior, "name").unwrap_or_default();
    let name = s(planned, "name").unwrap_or_default();
    let mut out = Vec::new();
    if old != name {
        out.push(
            Stmt::new()
                .kw("ALTER ROLE ")
                .ident(&old)
                .kw(" RENAME TO ")
                .ident(&name),
        );
    }
    let mut alter = options(Stmt::new().kw("ALTER ROLE ").ident(&name), planned);
    match password {
        Some(Some(p)) => alter = alter.kw(" PASSWORD ").secret(p),
        Some(None) => alter = alter.kw(" PASSWORD NULL"),
        None => {}
    }
    out.push(alter);
    let (was, now) = (
        string_set(prior, "roles").unwrap_or_default(),
        string_set(planned, "roles").unwrap_or_default(),
    );
    for r in was.difference(&now) {
        out.push(Stmt::new().kw("REVOKE ").ident(r).kw(" FROM ").ident(&name));
    }
    for r in now.difference(&was) {
        out.push(Stmt::new().kw("GRANT ").ident(r).kw(" TO ").ident(&name));
    }
    let (sp_was, sp_now) = (
        strings(prior, "search_path"),
        strings(planned, "search_path"),
    );
    if sp_was != sp_now {
        out.push(search_path_stmt(&name, sp_now.as_deref()));
    }
    out
}

/// The new state from the server's row: normalization keeps the prior
/// spelling, drift takes the server's value.
pub fn state_from(schema: &ResourceSchema, prior: &Value, row: &RoleRow) -> Value {
    let prior_vu = s(prior, "valid_until");
    let valid_until = keep(prior_vu.as_ref(), row.valid_until.clone(), |a, b| {
        same_instant(a, b)
    });
    let prior_sp = strings(prior, "search_path");
    let search_path = match (&row.search_path, prior_sp) {
        (None, Some(p)) if p.is_empty() => crate::values::list_value(&p),
        (None, _) => Value::null(Type::list(Type::String)),
        (Some(sp), _) => crate::values::list_value(sp),
    };
    let mut attrs = vec![
        ("name", Value::string(row.name.as_str())),
        ("id", Value::string(row.name.as_str())),
        ("connection_limit", Value::number(row.connection_limit)),
        ("valid_until", Value::string(valid_until)),
        ("roles", set_value(&row.roles)),
        ("search_path", search_path),
        (
            "password",
            prior
                .get_attr("password")
                .cloned()
                .unwrap_or_else(|| Value::null(Type::String)),
        ),
        (
            "password_wo_version",
            prior
                .get_attr("password_wo_version")
                .cloned()
                .unwrap_or_else(|| Value::null(Type::Number)),
        ),
    ];
    for (i, (attr, _, _)) in FLAGS.iter().enumerate() {
        attrs.push((attr, Value::bool(row.flags[i])));
    }
    typed_object(schema, attrs)
}

const SELECT: &str = "SELECT r.oid, r.rolname::text, r.rolsuper, r.rolcreatedb, r.rolcreaterole, r.rolinherit, r.rolcanlogin, r.rolreplication, r.rolbypassrls, r.rolconnlimit,
  CASE WHEN r.rolvaliduntil IS NULL OR r.rolvaliduntil = 'infinity' THEN 'infinity'
       WHEN r.rolvaliduntil = '-infinity' THEN '-infinity'
       ELSE to_char(r.rolvaliduntil AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') END,
  ARRAY(SELECT g.rolname::text FROM pg_auth_members m JOIN pg_roles g ON g.oid = m.roleid WHERE m.member = r.oid),
  (SELECT substr(c, 13) FROM unnest(r.rolconfig) c WHERE c LIKE 'search\\_path=%' LIMIT 1)
FROM pg_roles r";

/// The role by object id (following renames), else by name.
pub async fn fetch(
    pool: &Pool,
    oid: Option<u32>,
    name: &str,
) -> Result<Option<RoleRow>, Diagnostics> {
    let mut conn = pool
        .get(None)
        .await
        .map_err(|e| e.into_diags(pool.default_database()))?;
    let mut row = None;
    if let Some(oid) = oid {
        row = conn
            .query_opt_prepared(&format!("{SELECT} WHERE r.oid = $1"), &[&oid])
            .await
            .map_err(|e| read_diag(&e, "role"))?;
    }
    if row.is_none() {
        row = conn
            .query_opt_prepared(&format!("{SELECT} WHERE r.rolname = $1"), &[&name])
            .await
            .map_err(|e| read_diag(&e, "role"))?;
    }
    Ok(row.map(|r| RoleRow {
        oid: r.get(0),
        name: r.get(1),
        flags: [
            r.get(2),
            r.get(3),
            r.get(4),
            r.get(5),
            r.get(6),
            r.get(7),
            r.get(8),
        ],
        connection_limit: i64::from(r.get::<_, i32>(9)),
        valid_until: r.get(10),
        roles: r.get::<_, Vec<String>>(11).into_iter().collect(),
        search_path: r
            .get::<_, Option<String>>(12)
            .map(|x| parse_search_path(&x)),
    }))
}

/// Which attribute a failed role statement is about.
fn blame(e: &tokio_postgres::Error, st: &Stmt) -> Option<Path> {
    let attr = match code_of(e) {
        Some("42704") if st.shown.starts_with("GRANT") || st.shown.starts_with("REVOKE") => "roles",
        Some("42710") => "name",
        Some("22007") | Some("22008") => "valid_until",
        _ if st.shown.contains("search_path") => "search_path",
        _ => return None,
    };
    Some(Path::root().attr(attr))
}

impl Role {
    async fn read_state(
        &self,
        state: &Value,
        oid: Option<u32>,
    ) -> Result<Option<Applied>, Diagnostics> {
        let pool = pool_of(&self.data)?;
        let name = s(state, "name").unwrap_or_default();
        Ok(fetch(&pool, oid, &name).await?.map(|row| Applied {
            state: state_from(&role_schema(), state, &row),
            private: oid_private(row.oid),
        }))
    }
}

#[async_trait]
impl Resource for Role {
    async fn create(
        &self,
        _ctx: &Ctx,
        planned: &Value,
        config: &Value,
    ) -> Result<Applied, Diagnostics> {
        let pool = pool_of(&self.data)?;
        let password = s(planned, "password").or_else(|| s(config, "password_wo"));
        let mut conn = pool
            .get(None)
            .await
            .map_err(|e| e.into_diags(pool.default_database()))?;
        let verifier = verifier_for(
            &conn,
            password.as_deref(),
            &s(planned, "name").unwrap_or_default(),
        )
        .await?;
        run_in_tx(
            &mut conn,
            &create_stmts(planned, verifier.as_deref()),
            "Cannot create role",
            blame,
        )
        .await?;
        drop(conn);
        self.read_state(planned, None).await?.ok_or_else(|| {
            Diagnostics::error(
                "Role vanished",
                "The role was created but could not be read back.",
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
        config: &Value,
    ) -> Result<Applied, Diagnostics> {
        let pool = pool_of(&self.data)?;
        let wo_changed = n(prior, "password_wo_version") != n(planned, "password_wo_version");
        let pw_now = s(planned, "password");
        let password = if wo_changed && s(config, "password_wo").is_some() {
            Some(s(config, "password_wo"))
        } else if pw_now != s(prior, "password") {
            Some(pw_now)
        } else {
            None
        };
        let mut conn = pool
            .get(None)
            .await
            .map_err(|e| e.into_diags(pool.default_database()))?;
        let verifier = match password {
            Some(p) => Some(
                verifier_for(&conn, p.as_deref(), &s(planned, "name").unwrap_or_default()).await?,
            ),
            None => None,
        };
        run_in_tx(
            &mut conn,
            &update_stmts(prior, planned, verifier.as_ref().map(|p| p.as_deref())),
            "Cannot update role",
            blame,
        )
        .await?;
        drop(conn);
        self.read_state(planned, None).await?.ok_or_else(|| {
            Diagnostics::error(
                "Role vanished",
                "The role was updated but could not be read back.",
            )
        })
    }

    async fn delete(&self, _ctx: &Ctx, prior: &Value) -> Result<(), Diagnostics> {
        let pool = pool_of(&self.data)?;
        let name = s(prior, "name").unwrap_or_default();
        let mut conn = pool
            .get(None)
            .await
            .map_err(|e| e.into_diags(pool.default_database()))?;
        let exists = conn
            .query_opt("SELECT 1 FROM pg_roles WHERE rolname = $1", &[&name])
            .await
            .map_err(|e| read_diag(&e, "role"))?
            .is_some();
        if !exists {
            return Ok(());
        }
        let stmts = [
            Stmt::new()
                .kw("REASSIGN OWNED BY ")
                .ident(&name)
                .kw(" TO CURRENT_USER"),
            Stmt::new().kw("DROP OWNED BY ").ident(&name),
            Stmt::new().kw("DROP ROLE ").ident(&name),
        ];
        run_in_tx(&mut conn, &stmts, "Cannot drop role", |_, _| None).await
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
        Diagnostics::new()
    }

    async fn import(&self, _ctx: &Ctx, id: &str) -> Result<Value, Diagnostics> {
        let pool = pool_of(&self.data)?;
        match fetch(&pool, None, id).await? {
            Some(row) => Ok(state_from(&role_schema(), &Value::null(Type::Dynamic), &row)),
            None => Err(Diagnostics::error("Cannot import role", format!("No role named {id:?} exists on the server. The import ID is the role name, exactly as stored (case matters)."))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn role(pairs: &[(&'static str, Value)]) -> Value {
        typed_object(&role_schema(), pairs.iter().cloned())
    }

    #[track_caller]
    fn check(case: &str, got: Vec<Stmt>, want: &[&str]) {
        let shown: Vec<&str> = got.iter().map(|s| s.shown.as_str()).collect();
        assert_eq!(shown, want, "case {case}");
    }

    #[test]
    fn statements() {
        let base = role(&[
            ("name", Value::string("App")),
            ("login", Value::bool(true)),
            ("connection_limit", Value::number(5)),
            ("valid_until", Value::string("2031-01-01")),
            ("roles", set_value(&["readers".to_string()])),
        ]);
        check(
            "create_with_password_hidden",
            create_stmts(&base, Some("s3cret")),
            &[
                r#"CREATE ROLE "App" WITH NOSUPERUSER NOCREATEDB NOCREATEROLE INHERIT LOGIN NOREPLICATION NOBYPASSRLS CONNECTION LIMIT 5 VALID UNTIL '2031-01-01' PASSWORD '***'"#,
                r#"GRANT "readers" TO "App""#,
            ],
        );
        assert!(
            create_stmts(&base, Some("s3cret"))[0]
                .sql
                .contains("'s3cret'"),
            "case password_sent"
        );
        let renamed = with(
            &base,
            [
                ("name", Value::string("app2")),
                ("roles", set_value(&["writers".to_string()])),
                (
                    "search_path",
                    crate::values::list_value(&["$user".to_string(), "app".to_string()]),
                ),
            ],
        );
        check(
            "rename_membership_search_path",
            update_stmts(&base, &renamed, None),
            &[
                r#"ALTER ROLE "App" RENAME TO "app2""#,
                r#"ALTER ROLE "app2" WITH NOSUPERUSER NOCREATEDB NOCREATEROLE INHERIT LOGIN NOREPLICATION NOBYPASSRLS CONNECTION LIMIT 5 VALID UNTIL '2031-01-01'"#,
                r#"REVOKE "readers" FROM "app2""#,
                r#"GRANT "writers" TO "app2""#,
                r#"ALTER ROLE "app2" SET search_path TO "$user", "app""#,
            ],
        );
        check(
            "password_removed",
            update_stmts(&base, &base, Some(None))[..1].to_vec(),
            &[
                r#"ALTER ROLE "App" WITH NOSUPERUSER NOCREATEDB NOCREATEROLE INHERIT LOGIN NOREPLICATION NOBYPASSRLS CONNECTION LIMIT 5 VALID UNTIL '2031-01-01' PASSWORD NULL"#,
            ],
        );
        let quoted = role(&[("name", Value::string(r#"x" SUPERUSER --"#))]);
        check(
            "hostile_name_quoted",
            create_stmts(&quoted, None),
            &[
                r#"CREATE ROLE "x"" SUPERUSER --" WITH NOSUPERUSER NOCREATEDB NOCREATEROLE INHERIT NOLOGIN NOREPLICATION NOBYPASSRLS CONNECTION LIMIT -1 VALID UNTIL 'infinity'"#,
            ],
        );
    }

    #[test]
    fn item12_password_is_sent_as_a_verifier() {
        let scram = password_verifier("hunter2", "app", PasswordEncryption::ScramSha256);
        let parts: Vec<&str> = scram.split(['$', ':']).collect();
        assert_eq!(
            (parts.len(), parts[0], parts[1]),
            (5, "SCRAM-SHA-256", "4096"),
            "case scram_format: {scram}"
        );
        assert!(!scram.contains("hunter2"), "case scram_hides_password");
        assert_ne!(
            scram,
            password_verifier("hunter2", "app", PasswordEncryption::ScramSha256),
            "case scram_salted_afresh"
        );
        let md5 = password_verifier("hunter2", "app", PasswordEncryption::Md5);
        assert_eq!(
            md5,
            postgres_protocol::password::md5(b"hunter2", "app"),
            "case md5_salted_with_role_name"
        );
        assert!(
            md5.starts_with("md5") && md5.len() == 35 && !md5.contains("hunter2"),
            "case md5_format"
        );
        assert_eq!(
            password_verifier(&scram, "app", PasswordEncryption::Md5),
            scram,
            "case scram_verifier_passed_through"
        );
        assert_eq!(
            password_verifier(&md5, "app", PasswordEncryption::ScramSha256),
            md5,
            "case md5_verifier_passed_through"
        );
        assert!(
            password_verifier("md5-not-a-hash", "app", PasswordEncryption::ScramSha256)
                .starts_with("SCRAM-SHA-256$"),
            "case md5_lookalike_hashed"
        );
        let shown = create_stmts(&role(&[("name", Value::string("app"))]), Some(&scram));
        assert!(
            shown[0].sql.ends_with(&format!("PASSWORD '{scram}'"))
                && shown[0].shown.ends_with("PASSWORD '***'"),
            "case verifier_sent_and_hidden"
        );
    }

    #[test]
    fn read_normalizes_and_reports_drift() {
        let prior = role(&[
            ("name", Value::string("app")),
            ("valid_until", Value::string("2031-01-01")),
            ("password", Value::string("pw")),
            ("search_path", crate::values::list_value(&[])),
        ]);
        let row = RoleRow {
            oid: 1,
            name: "app".into(),
            flags: [false, false, false, true, true, false, false],
            connection_limit: -1,
            valid_until: "2031-01-01T00:00:00Z".into(),
            roles: BTreeSet::new(),
            search_path: None,
        };
        let got = state_from(&role_schema(), &prior, &row);
        assert_eq!(
            s(&got, "valid_until").as_deref(),
            Some("2031-01-01"),
            "case valid_until_spelling_kept"
        );
        assert_eq!(
            s(&got, "password").as_deref(),
            Some("pw"),
            "case password_kept"
        );
        assert_eq!(
            strings(&got, "search_path"),
            Some(vec![]),
            "case empty_search_path_kept"
        );
        let drifted = RoleRow {
            connection_limit: 7,
            valid_until: "2032-06-01T00:00:00Z".into(),
            ..row
        };
        let got = state_from(&role_schema(), &prior, &drifted);
        assert_eq!(
            (
                n(&got, "connection_limit"),
                s(&got, "valid_until").as_deref()
            ),
            (Some(7), Some("2032-06-01T00:00:00Z")),
            "case drift_reported"
        );
    }
}
