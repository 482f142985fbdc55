//! `postgresql_grant`: the exact set of privileges a role holds on a
//! database, a schema, or tables/sequences/functions of a schema (all of
//! them when `objects` is empty). Create and update revoke and re-grant in
//! one transaction, so the set is exact and a rejected privilege leaves
//! nothing behind. Reading looks at the objects' ACLs (direct grants
//! only); a privilege missing on any object is drift.
//!
//! ID and import ID: `role:database:object_type[:schema[:obj1,obj2]]`,
//! e.g. `app:shop:database`, `app:shop:schema:sales`,
//! `app:shop:table:sales` (all tables), `app:shop:table:sales:orders,items`.
//! The role `public` means PUBLIC.

use crate::normalize::{all_privileges, canonical_privilege, same_privileges};
use crate::pool::{code_of, read_diag, run_in_tx, ConnectError, Pool};
use crate::sql::Stmt;
use crate::values::{b, pool_of, s, set_value, string_set, typed_object, with, Identifier};
use async_trait::async_trait;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use terrane_sdk::validate::{OneOf, Validator};
use terrane_sdk::{
    Applied, Attr, Ctx, Diagnostic, Diagnostics, Path, PlanState, Resource, ResourceSchema,
    ResourceTypeOf, Type, Value,
};

const OBJECT_TYPES: [&str; 5] = ["database", "schema", "table", "sequence", "function"];

/// Privilege names must be PostgreSQL privilege keywords: they are the
/// only words of a GRANT that cannot be quoted.
struct PrivilegeNames;

impl Validator for PrivilegeNames {
    fn check(&self, path: &Path, v: &Value, _config: &Value) -> Vec<Diagnostic> {
        let Some(es) = v.elements().filter(|_| v.is_wholly_known()) else {
            return Vec::new();
        };
        es.iter()
            .filter_map(Value::as_str)
            .filter(|p| canonical_privilege(p).is_none())
            .map(|p| {
                let detail = format!(
                    "{p:?} is not a PostgreSQL privilege; use {} (or TEMP, ALL PRIVILEGES).",
                    crate::normalize::PRIVILEGES.join(", ")
                );
                Diagnostic::error("Unknown privilege", detail, None).at_path(path.clone())
            })
            .collect()
    }
}

pub fn grant_schema() -> ResourceSchema {
    ResourceSchema::new(0)
        .describe("Privileges of a role on a database, schema, or objects in a schema.")
        .attr(
            "role",
            Attr::string()
                .required()
                .requires_replace()
                .validate(Identifier),
        )
        .attr(
            "database",
            Attr::string()
                .required()
                .requires_replace()
                .validate(Identifier),
        )
        .attr(
            "schema",
            Attr::string()
                .optional()
                .requires_replace()
                .validate(Identifier),
        )
        .attr(
            "object_type",
            Attr::string()
                .required()
                .requires_replace()
                .validate(OneOf(OBJECT_TYPES.iter().map(|t| t.to_string()).collect())),
        )
        .attr(
            "objects",
            Attr::of(Type::set(Type::String))
                .optional()
                .requires_replace()
                .validate(Identifier),
        )
        .attr(
            "privileges",
            Attr::of(Type::set(Type::String))
                .required()
                .validate(PrivilegeNames),
        )
        .attr(
            "with_grant_option",
            Attr::bool().default(Value::bool(false)),
        )
        .attr("id", Attr::string().computed().use_state_for_unknown())
}

/// The `postgresql_grant` resource type.
pub(crate) const GRANT: ResourceTypeOf<Grant, Pool> =
    ResourceTypeOf::new("postgresql_grant", grant_schema, |data| Grant { data });

pub(crate) struct Grant {
    data: Option<Arc<Pool>>,
}

/// What a grant is about, from a state, plan or import ID.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub role: String,
    pub database: String,
    pub object_type: String,
    pub schema: Option<String>,
    pub objects: BTreeSet<String>,
}

impl Target {
    pub fn of(v: &Value) -> Target {
        Target {
            role: s(v, "role").unwrap_or_default(),
            database: s(v, "database").unwrap_or_default(),
            object_type: s(v, "object_type").unwrap_or_default(),
            schema: s(v, "schema"),
            objects: string_set(v, "objects").unwrap_or_default(),
        }
    }

    pub fn id(&self) -> String {
        let mut id = format!("{}:{}:{}", self.role, self.database, self.object_type);
        if let Some(sc) = &self.schema {
            id.push(':');
            id.push_str(sc);
            if !self.objects.is_empty() {
                id.push(':');
                id.push_str(&self.objects.iter().cloned().collect::<Vec<_>>().join(","));
            }
        }
        id
    }

    pub fn parse(id: &str) -> Result<Target, String> {
        let parts: Vec<&str> = id.splitn(5, ':').collect();
        if parts.len() < 3 || parts.iter().take(3).any(|p| p.is_empty()) {
            return Err(format!(
                "{id:?} is not of the form role:database:object_type[:schema[:obj1,obj2]]"
            ));
        }
        let object_type = parts[2].to_ascii_lowercase();
        if !OBJECT_TYPES.contains(&object_type.as_str()) {
            return Err(format!(
                "object type {:?} in {id:?} is not one of {}",
                parts[2],
                OBJECT_TYPES.join(", ")
            ));
        }
        let schema = parts
            .get(3)
            .filter(|x| !x.is_empty())
            .map(|x| x.to_string());
        if object_type != "database" && schema.is_none() {
            return Err(format!("{id:?} names no schema; object type {object_type} needs role:database:{object_type}:schema"));
        }
        let objects = parts
            .get(4)
            .map(|o| {
                o.split(',')
                    .filter(|x| !x.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        Ok(Target {
            role: parts[0].into(),
            database: parts[1].into(),
            object_type,
            schema,
            objects,
        })
    }

    fn is_public(&self) -> bool {
        self.role.eq_ignore_ascii_case("public")
    }

    /// `ON ...` part of GRANT/REVOKE.
    fn on(&self, st: Stmt) -> Stmt {
        let schema = self.schema.clone().unwrap_or_default();
        let (one, all) = match self.object_type.as_str() {
            "database" => return st.kw("DATABASE ").ident(&self.database),
            "schema" => return st.kw("SCHEMA ").ident(&schema),
            "sequence" => ("SEQUENCE ", "ALL SEQUENCES IN SCHEMA "),
            "function" => ("FUNCTION ", "ALL FUNCTIONS IN SCHEMA "),
            _ => ("TABLE ", "ALL TABLES IN SCHEMA "),
        };
        if self.objects.is_empty() {
            return st.kw(all).ident(&schema);
        }
        let mut st = st.kw(one);
        for (i, o) in self.objects.iter().enumerate() {
            if i > 0 {
                st = st.kw(", ");
            }
            st = st.ident(&schema).kw(".").ident(o);
        }
        st
    }

    fn grantee(&self, st: Stmt) -> Stmt {
        if self.is_public() {
            st.kw("PUBLIC")
        } else {
            st.ident(&self.role)
        }
    }
}

/// Privileges in canonical spelling with ALL expanded for the object type
/// (`None` if a name is unknown).
pub fn expand(privileges: &BTreeSet<String>, object_type: &str) -> Option<BTreeSet<String>> {
    let mut out = BTreeSet::new();
    for p in privileges {
        match canonical_privilege(p)? {
            "ALL" => out.extend(all_privileges(object_type).iter().map(|x| x.to_string())),
            c => {
                out.insert(c.to_string());
            }
        }
    }
    Some(out)
}

/// REVOKE ALL then GRANT: the role ends with exactly `privileges`.
pub fn grant_stmts(t: &Target, privileges: &BTreeSet<String>, grant_option: bool) -> Vec<Stmt> {
    let mut out = vec![revoke_stmt(t)];
    let words: BTreeSet<&str> = privileges
        .iter()
        .filter_map(|p| canonical_privilege(p))
        .collect();
    if words.is_empty() {
        return out;
    }
    let mut st = Stmt::new().kw("GRANT ");
    for (i, w) in words.iter().enumerate() {
        st = st.kw(if i > 0 { ", " } else { "" }).kw(w);
    }
    st = t.grantee(t.on(st.kw(" ON ")).kw(" TO "));
    if grant_option {
        st = st.kw(" WITH GRANT OPTION");
    }
    out.push(st);
    out
}

pub fn revoke_stmt(t: &Target) -> Stmt {
    t.grantee(t.on(Stmt::new().kw("REVOKE ALL ON ")).kw(" FROM "))
}

/// Per object: privilege name -> grantable.
type Acl = BTreeMap<String, BTreeMap<String, bool>>;

/// The privileges held on every object, whether all of them are held with
/// grant option, and whether the objects disagree (`None` when the scope
/// has no objects at all).
pub fn summarize(acl: &Acl) -> Option<(BTreeSet<String>, bool, bool)> {
    let mut sets = acl
        .values()
        .map(|m| m.keys().cloned().collect::<BTreeSet<String>>());
    let first = sets.next()?;
    let mut common = first.clone();
    let mut uneven = false;
    for s in sets {
        if s != first {
            uneven = true;
        }
        common = common.intersection(&s).cloned().collect();
    }
    let grantable: Vec<bool> = acl
        .values()
        .flat_map(|m| {
            m.iter()
                .filter(|(k, _)| common.contains(*k))
                .map(|(_, g)| *g)
        })
        .collect();
    let all_grantable = !grantable.is_empty() && grantable.iter().all(|g| *g);
    let mixed = grantable.iter().any(|g| *g) && !all_grantable;
    Some((common, all_grantable, uneven || mixed))
}

/// The ACL entries of `role` on the target's objects; `None` when the
/// database, the role or the schema is gone.
///
/// Reads that wait at the same time are read together: a refresh makes
/// one read per grant, up to `-parallelism` at once, and one statement
/// for all of them costs the server about what one costs. Reads go to a
/// queue per database, object type and "named objects or all" (what one
/// statement can answer); the first read of an idle queue starts a task
/// that takes a connection, then everything queued by then, runs it as
/// one statement, answers each read, and goes on while reads wait.
async fn fetch(pool: &Pool, t: &Target) -> Result<Option<Acl>, Diagnostics> {
    let reads = pool.shared::<GrantReads>();
    let key = ReadKey {
        database: t.database.clone(),
        object_type: t.object_type.clone(),
        named: !t.objects.is_empty(),
    };
    let (reply, answer) = tokio::sync::oneshot::channel();
    let waiting = Waiting {
        target: t.clone(),
        reply,
    };
    let start = {
        let mut queues = reads.lock();
        match queues.get_mut(&key) {
            Some(queue) => {
                queue.push(waiting);
                false
            }
            None => {
                queues.insert(key.clone(), vec![waiting]);
                true
            }
        }
    };
    if start {
        tokio::spawn(drain(pool.clone(), reads, key));
    }
    answer.await.unwrap_or_else(|_| {
        Err(Diagnostics::error(
            "Cannot read grant",
            "The provider stopped reading grants before this one was read.",
        ))
    })
}

/// The most grants one statement reads.
const READ_BATCH: usize = 256;

type Reply = Result<Option<Acl>, Diagnostics>;

struct Waiting {
    target: Target,
    reply: tokio::sync::oneshot::Sender<Reply>,
}

/// What one statement can read together.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct ReadKey {
    database: String,
    object_type: String,
    named: bool,
}

/// The grant reads waiting, per queue; a queue is in the map while its
/// task runs.
#[derive(Default)]
struct GrantReads(std::sync::Mutex<std::collections::HashMap<ReadKey, Vec<Waiting>>>);

impl GrantReads {
    fn lock(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<ReadKey, Vec<Waiting>>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Removes a queue whose task ended without emptying it (a panic, or its
/// runtime shutting down): the reads waiting there then fail with a
/// diagnostic instead of waiting for ever, and the next read starts a
/// new task.
struct Abandon<'a> {
    reads: &'a GrantReads,
    key: &'a ReadKey,
    armed: bool,
}

impl Drop for Abandon<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.reads.lock().remove(self.key);
        }
    }
}

/// The task of one queue: reads what is queued, batch by batch, until the
/// queue is empty (then it is removed, under the same lock a new read
/// takes, so no read is left behind).
async fn drain(pool: Pool, reads: Arc<GrantReads>, key: ReadKey) {
    let mut abandon = Abandon {
        reads: &reads,
        key: &key,
        armed: true,
    };
    let sql = read_sql(&key);
    loop {
        // The connection first: reads that arrive while it is awaited join
        // this batch.
        let conn = pool.get(Some(&key.database)).await;
        let batch: Vec<Waiting> = {
            let mut queues = reads.lock();
            let Some(queue) = queues.get_mut(&key) else {
                abandon.armed = false;
                return;
            };
            if queue.is_empty() {
                queues.remove(&key);
                abandon.armed = false;
                return;
            }
            let rest = queue.split_off(queue.len().min(READ_BATCH));
            std::mem::replace(queue, rest)
        };
        let (targets, replies): (Vec<Target>, Vec<_>) =
            batch.into_iter().map(|w| (w.target, w.reply)).unzip();
        let answers: Vec<Reply> = match conn {
            Ok(mut conn) => match fetch_many(&mut conn, &sql, &targets).await {
                Ok(acls) => acls.into_iter().map(Ok).collect(),
                Err(e) => vec![Err(read_diag(&e, "grant")); targets.len()],
            },
            Err(ConnectError::NoDatabase) => vec![Ok(None); targets.len()],
            Err(e) => vec![Err(e.into_diags(&key.database)); targets.len()],
        };
        for (reply, answer) in replies.into_iter().zip(answers) {
            let _ = reply.send(answer); // a read whose caller gave up
        }
    }
}

/// The statement that reads the grants of one queue: fixed per object
/// type and per "named objects or all", so each connection prepares it
/// once (`Conn::query_prepared`).
///
/// Every target gets a row saying whether its role and its schema exist,
/// carrying its first ACL entry; further rows carry the others.
fn read_sql(key: &ReadKey) -> String {
    let lateral = |acl: &str, kind: &str, owner: &str| {
        format!("LEFT JOIN LATERAL (SELECT x.privilege_type::text AS p, x.is_grantable AS g FROM aclexplode(coalesce({acl}, acldefault('{kind}', {owner}))) x WHERE x.grantee = h.grantee) a ON true")
    };
    // $1 the targets' numbers, $2 their roles, $3 whether each is PUBLIC
    // (grantee 0), $4 their schemas (NULL for a database grant); $5 and $6
    // pair a target's number with each object it names.
    let named = |column: &str| {
        if key.named {
            format!(" AND {column} IN (SELECT w.name FROM unnest($5::int[], $6::text[]) AS w(k, name) WHERE w.k = h.k)")
        } else {
            String::new()
        }
    };
    let inner = match key.object_type.as_str() {
        "database" => format!(
            "SELECT d.datname::text AS o, a.p, a.g FROM pg_database d {} WHERE d.datname = current_database()",
            lateral("d.datacl", "d", "d.datdba")
        ),
        "schema" => format!(
            "SELECT n.nspname::text AS o, a.p, a.g FROM pg_namespace n {} WHERE n.nspname = h.sch",
            lateral("n.nspacl", "n", "n.nspowner")
        ),
        "function" => format!(
            "SELECT p.proname::text AS o, a.p, a.g FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace {} WHERE n.nspname = h.sch AND p.prokind = 'f'{}",
            lateral("p.proacl", "f", "p.proowner"),
            named("p.proname")
        ),
        kind => {
            let (kinds, acl_kind) = if kind == "sequence" { ("'S'", "s") } else { ("'r','v','m','f','p'", "r") };
            format!(
                "SELECT c.relname::text AS o, a.p, a.g FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace {} WHERE n.nspname = h.sch AND c.relkind IN ({kinds}){}",
                lateral("c.relacl", acl_kind, "c.relowner"),
                named("c.relname")
            )
        }
    };
    format!(
        "WITH h AS (SELECT r.k, r.sch, CASE WHEN r.pub THEN 0::oid ELSE (SELECT oid FROM pg_roles WHERE rolname = r.role) END AS grantee, \
         r.sch IS NULL OR EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = r.sch) AS schema_found \
         FROM unnest($1::int[], $2::text[], $3::bool[], $4::text[]) AS r(k, role, pub, sch)) \
         SELECT h.k, h.grantee IS NOT NULL, h.schema_found, e.o, e.p, e.g FROM h LEFT JOIN LATERAL ({inner}) e ON h.grantee IS NOT NULL AND h.schema_found"
    )
}

/// The ACLs of `targets` (all of one queue: one database, one object
/// type, all with named objects or all without), by that queue's
/// statement `sql` ([`read_sql`]) on `conn`.
async fn fetch_many(
    conn: &mut crate::pool::Conn,
    sql: &str,
    targets: &[Target],
) -> Result<Vec<Option<Acl>>, tokio_postgres::Error> {
    let numbers: Vec<i32> = (0..targets.len() as i32).collect();
    let roles: Vec<&str> = targets.iter().map(|t| t.role.as_str()).collect();
    let public: Vec<bool> = targets.iter().map(Target::is_public).collect();
    let schemas: Vec<Option<&str>> = targets.iter().map(|t| t.schema.as_deref()).collect();
    let (object_numbers, object_names): (Vec<i32>, Vec<&str>) = numbers
        .iter()
        .zip(targets)
        .flat_map(|(k, t)| t.objects.iter().map(move |o| (*k, o.as_str())))
        .unzip();
    let rows = if object_names.is_empty() {
        conn.query_prepared(sql, &[&numbers, &roles, &public, &schemas])
            .await?
    } else {
        conn.query_prepared(
            sql,
            &[
                &numbers,
                &roles,
                &public,
                &schemas,
                &object_numbers,
                &object_names,
            ],
        )
        .await?
    };
    let mut found = vec![false; targets.len()];
    let mut acls: Vec<Acl> = targets
        .iter()
        // a named object that is gone holds nothing
        .map(|t| {
            t.objects
                .iter()
                .map(|o| (o.clone(), BTreeMap::new()))
                .collect()
        })
        .collect();
    for r in rows {
        let Some(k) = usize::try_from(r.get::<_, i32>(0))
            .ok()
            .filter(|k| *k < targets.len())
        else {
            continue;
        };
        found[k] = r.get::<_, bool>(1) && r.get::<_, bool>(2);
        let Some(object) = r.get::<_, Option<String>>(3) else {
            continue;
        };
        let entry = acls[k].entry(object).or_default();
        if let (Some(p), Some(g)) = (r.get::<_, Option<String>>(4), r.get::<_, Option<bool>>(5)) {
            entry.insert(p, g);
        }
    }
    // the role is gone, or the schema and every grant in it
    Ok(acls
        .into_iter()
        .zip(found)
        .map(|(acl, found)| found.then_some(acl))
        .collect())
}

fn state_of(t: &Target, privileges: Value, grant_option: bool, objects: Value) -> Value {
    typed_object(
        &grant_schema(),
        [
            ("role", Value::string(t.role.as_str())),
            ("database", Value::string(t.database.as_str())),
            ("schema", crate::values::str_value(t.schema.as_deref())),
            ("object_type", Value::string(t.object_type.as_str())),
            ("objects", objects),
            ("privileges", privileges),
            ("with_grant_option", Value::bool(grant_option)),
            ("id", Value::string(t.id())),
        ],
    )
}

/// The state after a read: the prior privileges when the server holds the
/// same set (whatever their spelling), else the server's set.
pub fn read_state(prior: &Value, acl: &Acl) -> Value {
    let t = Target::of(prior);
    let prior_privs = string_set(prior, "privileges").unwrap_or_default();
    let prior_go = b(prior, "with_grant_option").unwrap_or(false);
    let objects = prior
        .get_attr("objects")
        .cloned()
        .unwrap_or_else(|| Value::null(Type::set(Type::String)));
    let Some((held, grantable, _)) = summarize(acl) else {
        return state_of(&t, set_value(&prior_privs), prior_go, objects);
    };
    let privileges = if same_privileges(&prior_privs, &held, &t.object_type) {
        set_value(&prior_privs)
    } else {
        set_value(&held)
    };
    let go = if held.is_empty() { prior_go } else { grantable };
    state_of(&t, privileges, go, objects)
}

fn blame(e: &tokio_postgres::Error, _st: &Stmt) -> Option<Path> {
    let attr = match code_of(e)? {
        "0LP01" | "42601" | "22023" => "privileges",
        "42704" => "role",
        "3F000" => "schema",
        "42P01" | "42883" => "objects",
        _ => return None,
    };
    Some(Path::root().attr(attr))
}

impl Grant {
    async fn apply(&self, planned: &Value, summary: &str) -> Result<Applied, Diagnostics> {
        let pool = pool_of(&self.data)?;
        let t = Target::of(planned);
        let privileges = string_set(planned, "privileges").unwrap_or_default();
        let mut conn = pool
            .get(Some(&t.database))
            .await
            .map_err(|e| e.into_diags(&t.database))?;
        run_in_tx(
            &mut conn,
            &grant_stmts(
                &t,
                &privileges,
                b(planned, "with_grant_option").unwrap_or(false),
            ),
            summary,
            blame,
        )
        .await?;
        Ok(Applied::new(with(planned, [("id", Value::string(t.id()))])))
    }
}

#[async_trait]
impl Resource for Grant {
    async fn create(
        &self,
        _ctx: &Ctx,
        planned: &Value,
        _config: &Value,
    ) -> Result<Applied, Diagnostics> {
        self.apply(planned, "Cannot grant privileges").await
    }

    async fn read(
        &self,
        _ctx: &Ctx,
        state: &Value,
        private: &[u8],
    ) -> Result<Option<Applied>, Diagnostics> {
        let pool = pool_of(&self.data)?;
        Ok(fetch(&pool, &Target::of(state)).await?.map(|acl| Applied {
            state: read_state(state, &acl),
            private: private.to_vec(),
        }))
    }

    async fn update(
        &self,
        _ctx: &Ctx,
        _prior: &Value,
        planned: &Value,
        _config: &Value,
    ) -> Result<Applied, Diagnostics> {
        self.apply(planned, "Cannot change privileges").await
    }

    async fn delete(&self, _ctx: &Ctx, prior: &Value) -> Result<(), Diagnostics> {
        let pool = pool_of(&self.data)?;
        let t = Target::of(prior);
        let mut conn = match pool.get(Some(&t.database)).await {
            Ok(c) => c,
            Err(ConnectError::NoDatabase) => return Ok(()),
            Err(e) => return Err(e.into_diags(&t.database)),
        };
        match run_in_tx(
            &mut conn,
            &[revoke_stmt(&t)],
            "Cannot revoke privileges",
            blame,
        )
        .await
        {
            // The role, schema or objects are already gone: nothing is held.
            Err(d)
                if d.0.iter().any(|x| {
                    x.path.as_ref().is_some_and(|p| {
                        ["role", "schema", "objects"]
                            .iter()
                            .any(|a| p == &Path::root().attr(*a))
                    })
                }) =>
            {
                Ok(())
            }
            other => other,
        }
    }

    async fn validate(&self, config: &Value) -> Diagnostics {
        let mut d = Diagnostics::new();
        let (Some(ty), true) = (s(config, "object_type"), config.is_wholly_known()) else {
            return d;
        };
        let schema_set = config.get_attr("schema").is_some_and(|v| !v.is_null());
        let objects_set = string_set(config, "objects").is_some_and(|o| !o.is_empty());
        if ty != "database" && !schema_set {
            d.extend(Diagnostics::attr_error(
                Path::root().attr("schema"),
                "Missing schema",
                format!("object_type {ty:?} needs the schema the objects are in."),
            ));
        }
        if (ty == "database" || ty == "schema") && objects_set {
            d.extend(Diagnostics::attr_error(
                Path::root().attr("objects"),
                "objects not allowed",
                format!("object_type {ty:?} grants on the {ty} itself; objects must be empty."),
            ));
        }
        if ty == "database" && schema_set {
            d.extend(Diagnostics::attr_error(
                Path::root().attr("schema"),
                "schema not allowed",
                "object_type \"database\" grants on the database itself; leave schema unset.",
            ));
        }
        d
    }

    async fn modify_plan(&self, _ctx: &Ctx, plan: &mut PlanState) -> Diagnostics {
        let t = Target::of(&plan.planned);
        // The same privileges in another spelling (case, TEMP, ALL) keep
        // the prior value: no change is planned.
        if let (Some(prior), Some(now)) = (
            string_set(&plan.prior, "privileges"),
            string_set(&plan.planned, "privileges"),
        ) {
            if prior != now
                && expand(&prior, &t.object_type)
                    .is_some_and(|p| Some(p) == expand(&now, &t.object_type))
            {
                plan.planned = with(&plan.planned, [("privileges", set_value(&prior))]);
            }
        }
        if plan.planned.is_wholly_known()
            || ["role", "database", "object_type", "schema", "objects"]
                .iter()
                .all(|a| plan.planned.get_attr(a).is_some_and(Value::is_wholly_known))
        {
            plan.planned = with(&plan.planned, [("id", Value::string(t.id()))]);
        }
        Diagnostics::new()
    }

    async fn import(&self, _ctx: &Ctx, id: &str) -> Result<Value, Diagnostics> {
        let t = Target::parse(id).map_err(|e| Diagnostics::error("Invalid grant import ID", e))?;
        let pool = pool_of(&self.data)?;
        let acl = fetch(&pool, &t).await?.ok_or_else(|| {
            Diagnostics::error(
                "Cannot import grant",
                format!(
                    "The database {:?} or the role {:?} does not exist.",
                    t.database, t.role
                ),
            )
        })?;
        let Some((held, grantable, uneven)) = summarize(&acl) else {
            return Err(Diagnostics::error(
                "Cannot import grant",
                format!("{id:?} names no existing object, so there are no privileges to read."),
            ));
        };
        if held.is_empty() {
            return Err(Diagnostics::error(
                "Cannot import grant",
                format!(
                    "The role {:?} holds no privileges on {id:?}; there is nothing to import.",
                    t.role
                ),
            ));
        }
        if uneven {
            return Err(Diagnostics::error(
                "Cannot import grant: its state cannot be read fully",
                format!(
                    "The role {:?} holds different privileges (or grant options) on the objects of {id:?}, which one postgresql_grant cannot describe; commonly held: {}. Make them uniform, or import each object separately (role:database:{}:{}:object).",
                    t.role,
                    held.iter().cloned().collect::<Vec<_>>().join(", "),
                    t.object_type,
                    t.schema.clone().unwrap_or_default()
                ),
            ));
        }
        let objects = if t.objects.is_empty() {
            Value::null(Type::set(Type::String))
        } else {
            set_value(&t.objects)
        };
        Ok(state_of(&t, set_value(&held), grantable, objects))
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

    fn set(xs: &[&str]) -> BTreeSet<String> {
        xs.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn statements() {
        let db = Target::parse("app:shop:database").unwrap();
        check(
            "database_temp_alias",
            grant_stmts(&db, &set(&["connect", "temp"]), false),
            &[
                r#"REVOKE ALL ON DATABASE "shop" FROM "app""#,
                r#"GRANT CONNECT, TEMPORARY ON DATABASE "shop" TO "app""#,
            ],
        );
        let tables = Target::parse("Readers:shop:table:Sales").unwrap();
        check(
            "all_tables_with_grant_option",
            grant_stmts(&tables, &set(&["SELECT"]), true),
            &[
                r#"REVOKE ALL ON ALL TABLES IN SCHEMA "Sales" FROM "Readers""#,
                r#"GRANT SELECT ON ALL TABLES IN SCHEMA "Sales" TO "Readers" WITH GRANT OPTION"#,
            ],
        );
        let some = Target::parse("public:shop:table:s:b,a").unwrap();
        check(
            "named_tables_to_public",
            grant_stmts(&some, &set(&["ALL"]), false),
            &[
                r#"REVOKE ALL ON TABLE "s"."a", "s"."b" FROM PUBLIC"#,
                r#"GRANT ALL ON TABLE "s"."a", "s"."b" TO PUBLIC"#,
            ],
        );
        check(
            "no_privileges_only_revokes",
            grant_stmts(&db, &set(&[]), false),
            &[r#"REVOKE ALL ON DATABASE "shop" FROM "app""#],
        );
        let f = Target::parse("app:shop:function:s").unwrap();
        check(
            "functions",
            vec![revoke_stmt(&f)],
            &[r#"REVOKE ALL ON ALL FUNCTIONS IN SCHEMA "s" FROM "app""#],
        );
    }

    #[test]
    fn ids() {
        for id in [
            "app:shop:database",
            "app:shop:schema:sales",
            "app:shop:table:sales",
            "app:shop:table:sales:items,orders",
        ] {
            assert_eq!(
                Target::parse(id).map(|t| t.id()),
                Ok(id.to_string()),
                "case round_trip {id}"
            );
        }
        assert!(Target::parse("app:shop").is_err(), "case too_short");
        assert!(
            Target::parse("app:shop:table").is_err(),
            "case table_needs_schema"
        );
        assert!(
            Target::parse("app:shop:view:s").is_err(),
            "case unknown_type"
        );
    }

    fn acl(objects: &[(&str, &[(&str, bool)])]) -> Acl {
        objects
            .iter()
            .map(|(o, ps)| {
                (
                    o.to_string(),
                    ps.iter().map(|(p, g)| (p.to_string(), *g)).collect(),
                )
            })
            .collect()
    }

    #[test]
    fn summaries() {
        assert_eq!(summarize(&acl(&[])), None, "case no_objects");
        assert_eq!(
            summarize(&acl(&[
                ("a", &[("SELECT", false)]),
                ("b", &[("SELECT", false)])
            ])),
            Some((set(&["SELECT"]), false, false)),
            "case uniform"
        );
        assert_eq!(
            summarize(&acl(&[
                ("a", &[("SELECT", false), ("INSERT", false)]),
                ("b", &[("SELECT", false)])
            ])),
            Some((set(&["SELECT"]), false, true)),
            "case uneven"
        );
        assert_eq!(
            summarize(&acl(&[
                ("a", &[("SELECT", true)]),
                ("b", &[("SELECT", false)])
            ])),
            Some((set(&["SELECT"]), false, true)),
            "case mixed_grant_option"
        );
        assert_eq!(
            summarize(&acl(&[("a", &[("SELECT", true)])])),
            Some((set(&["SELECT"]), true, false)),
            "case grantable"
        );
    }

    #[test]
    fn reads() {
        let prior = typed_object(
            &grant_schema(),
            [
                ("role", Value::string("app")),
                ("database", Value::string("shop")),
                ("object_type", Value::string("database")),
                ("privileges", set_value(&set(&["connect", "temp"]))),
                ("with_grant_option", Value::bool(false)),
            ],
        );
        let same = read_state(
            &prior,
            &acl(&[("shop", &[("CONNECT", false), ("TEMPORARY", false)])]),
        );
        assert_eq!(
            string_set(&same, "privileges"),
            Some(set(&["connect", "temp"])),
            "case spelling_kept"
        );
        let revoked = read_state(&prior, &acl(&[("shop", &[("CONNECT", false)])]));
        assert_eq!(
            string_set(&revoked, "privileges"),
            Some(set(&["CONNECT"])),
            "case revoke_is_drift"
        );
        assert_eq!(
            expand(&set(&["all"]), "schema"),
            Some(set(&["CREATE", "USAGE"])),
            "case expand_all"
        );
    }

    /// A queue task that dies (here: panics) takes its queue with it, so
    /// the reads waiting there fail instead of hanging, and a read after
    /// that finds no queue and starts a new task.
    #[tokio::test(flavor = "current_thread")]
    async fn a_dead_queue_task_fails_its_reads() {
        let reads = Arc::new(GrantReads::default());
        let key = ReadKey {
            database: "d".into(),
            object_type: "table".into(),
            named: true,
        };
        let (reply, answer) = tokio::sync::oneshot::channel();
        let target = Target {
            role: "r".into(),
            database: "d".into(),
            object_type: "table".into(),
            schema: Some("s".into()),
            objects: set(&["t"]),
        };
        reads
            .lock()
            .insert(key.clone(), vec![Waiting { target, reply }]);
        let task = {
            let (reads, key) = (reads.clone(), key.clone());
            tokio::spawn(async move {
                let _abandon = Abandon {
                    reads: &reads,
                    key: &key,
                    armed: true,
                };
                panic!("a bug in the queue task");
            })
        };
        assert!(task.await.is_err(), "the task panicked");
        assert!(reads.lock().get(&key).is_none(), "the queue is gone");
        assert!(
            answer.await.is_err(),
            "the waiting read learns it will get no answer"
        );
    }

    /// `fetch` against the real server: every object type, named objects
    /// and all of a schema's, PUBLIC, a grant option, and the three ways a
    /// grant vanishes (role, schema, database gone). All cases are read at
    /// once three times (batched reads), then each alone twice on one
    /// connection, so the second read runs the prepared statement.
    #[tokio::test(flavor = "current_thread")]
    async fn reads_acls_from_the_server() {
        let Some(url) = terrane_testkit::pg_url() else {
            return;
        };
        let cfg: tokio_postgres::Config = url.parse().expect("server URL");
        let host = match &cfg.get_hosts()[0] {
            tokio_postgres::config::Host::Tcp(h) => h.clone(),
            other => panic!("TCP host expected, got {other:?}"),
        };
        let sfx = format!("{}_{}", std::process::id(), rand::random::<u32>());
        let (db, role) = (format!("grr_{sfx}"), format!("grr_{sfx}"));
        let pool = Pool::new(crate::pool::Settings {
            host,
            port: cfg.get_ports()[0],
            username: cfg.get_user().expect("user").to_string(),
            password: cfg
                .get_password()
                .map(|p| String::from_utf8_lossy(p).into_owned()),
            database: cfg.get_dbname().expect("database").to_string(),
            sslmode: "disable".into(),
            sslrootcert: None,
            connect_timeout: std::time::Duration::from_secs(5),
            max_connections: 1,
        });
        let admin = pool.get(None).await.expect("connection");
        admin
            .batch_execute(&format!("CREATE ROLE \"{role}\""))
            .await
            .expect("role");
        admin
            .batch_execute(&format!("CREATE DATABASE \"{db}\""))
            .await
            .expect("database");
        admin
            .batch_execute(&format!("GRANT CONNECT ON DATABASE \"{db}\" TO \"{role}\""))
            .await
            .expect("database grant");
        drop(admin);
        let setup = pool.get(Some(&db)).await.expect("connection");
        setup
            .batch_execute(&format!(
                "CREATE SCHEMA s; CREATE SCHEMA doomed; CREATE TABLE s.t1 (id int); CREATE TABLE s.t2 (id int); \
                 CREATE SEQUENCE s.q1; CREATE FUNCTION s.f1() RETURNS int LANGUAGE sql AS 'SELECT 1'; \
                 GRANT USAGE ON SCHEMA s TO \"{role}\"; GRANT SELECT ON s.t1 TO \"{role}\" WITH GRANT OPTION; \
                 GRANT INSERT ON s.t1 TO \"{role}\"; GRANT USAGE ON SEQUENCE s.q1 TO \"{role}\"; \
                 GRANT EXECUTE ON FUNCTION s.f1() TO \"{role}\"; CREATE TABLE doomed.t (id int); \
                 GRANT SELECT ON doomed.t TO \"{role}\"; DROP SCHEMA doomed CASCADE"
            ))
            .await
            .expect("objects");
        drop(setup);
        let target = |who: &str,
                      object_type: &str,
                      schema: Option<&str>,
                      objects: &[&str],
                      database: &str| Target {
            role: who.to_string(),
            database: database.to_string(),
            object_type: object_type.to_string(),
            schema: schema.map(str::to_string),
            objects: set(objects),
        };
        let acl = |entries: &[(&str, &[(&str, bool)])]| -> Option<Acl> {
            Some(
                entries
                    .iter()
                    .map(|(o, ps)| {
                        (
                            o.to_string(),
                            ps.iter().map(|(p, g)| (p.to_string(), *g)).collect(),
                        )
                    })
                    .collect(),
            )
        };
        let cases: Vec<(&str, Target, Option<Acl>)> = vec![
            (
                "table named",
                target(&role, "table", Some("s"), &["t1"], &db),
                acl(&[("t1", &[("INSERT", false), ("SELECT", true)])]),
            ),
            (
                "table named and one gone",
                target(&role, "table", Some("s"), &["t2", "gone"], &db),
                acl(&[("gone", &[]), ("t2", &[])]),
            ),
            (
                "every table of the schema",
                target(&role, "table", Some("s"), &[], &db),
                acl(&[("t1", &[("INSERT", false), ("SELECT", true)]), ("t2", &[])]),
            ),
            (
                "sequence",
                target(&role, "sequence", Some("s"), &["q1"], &db),
                acl(&[("q1", &[("USAGE", false)])]),
            ),
            (
                "function",
                target(&role, "function", Some("s"), &["f1"], &db),
                acl(&[("f1", &[("EXECUTE", false)])]),
            ),
            (
                "function to PUBLIC by default",
                target("public", "function", Some("s"), &[], &db),
                acl(&[("f1", &[("EXECUTE", false)])]),
            ),
            (
                "schema",
                target(&role, "schema", Some("s"), &[], &db),
                acl(&[("s", &[("USAGE", false)])]),
            ),
            (
                "database",
                target(&role, "database", None, &[], &db),
                acl(&[(db.as_str(), &[("CONNECT", false)])]),
            ),
            (
                "database to PUBLIC by default",
                target("PUBLIC", "database", None, &[], &db),
                acl(&[(db.as_str(), &[("CONNECT", false), ("TEMPORARY", false)])]),
            ),
            (
                "role gone",
                target("grr_nobody", "table", Some("s"), &["t1"], &db),
                None,
            ),
            (
                "schema gone",
                target(&role, "table", Some("doomed"), &["t"], &db),
                None,
            ),
            (
                "database gone",
                target(&role, "database", None, &[], "grr_no_such_db"),
                None,
            ),
        ];
        // All at once, three times over: the reads of one kind share
        // statements, and each still gets its own answer.
        let mut reads = tokio::task::JoinSet::new();
        for _ in 0..3 {
            for (i, (_, t, _)) in cases.iter().enumerate() {
                let (pool, t) = (pool.clone(), t.clone());
                reads.spawn(async move { (i, fetch(&pool, &t).await) });
            }
        }
        while let Some(done) = reads.join_next().await {
            let (i, got) = done.expect("read task");
            let (name, _, want) = &cases[i];
            let got = got.unwrap_or_else(|d| panic!("case {name}: {d:?}"));
            assert_eq!(&got, want, "case {name} (concurrent)");
        }
        for (name, t, want) in &cases {
            for round in ["prepares", "reuses"] {
                let got = fetch(&pool, t)
                    .await
                    .unwrap_or_else(|d| panic!("case {name}: {d:?}"));
                assert_eq!(&got, want, "case {name} ({round})");
            }
        }
        pool.evict(&db);
        let admin = pool.get(None).await.expect("connection");
        for sql in [
            format!("DROP DATABASE \"{db}\" WITH (FORCE)"),
            format!("DROP ROLE \"{role}\""),
        ] {
            admin.batch_execute(&sql).await.expect("cleanup");
        }
    }
}
