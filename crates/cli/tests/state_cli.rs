//! The state commands and settings through the real `terrane` binary
//! (issue 12 items 1, 8, 9, 11 and 14): the `terraform { state { } }`
//! block is honoured by every command that opens the store, `state push`
//! refuses what Terraform refuses (and what does not fit), `state rm`
//! parses strictly and counts what it removed, saved plans are sealed and
//! private, and the key can be rotated.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};
use terrane_state::{Encryption, SqliteStore, StateError, StateStore};
use terrane_testkit::isolated;

const KEY_VAR: &str = "TERRANE_TEST_STATE_KEY";

fn terrane(dir: &Path) -> Command {
    let mut c = isolated(env!("CARGO_BIN_EXE_terrane"), dir);
    c.env("TF_CLI_CONFIG_FILE", dir.join("empty.tfrc"))
        .env_remove(KEY_VAR);
    c
}

/// Runs `terrane ARGS` with extra environment variables.
fn run(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    terrane(dir)
        .args(args)
        .args(["-no-color"])
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("terrane runs")
}

fn text(o: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[track_caller]
fn check(case: &str, o: &Output, code: i32, want: &[&str]) {
    let all = text(o);
    assert_eq!(o.status.code(), Some(code), "case {case}: {all}");
    for w in want {
        assert!(
            terrane_testkit::unwrapped(&all).contains(&terrane_testkit::unwrapped(w)),
            "case {case}: {w:?} missing from {all}"
        );
    }
}

fn setup(config: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("empty.tfrc"), "").unwrap();
    std::fs::write(dir.path().join("main.tf"), config).unwrap();
    dir
}

fn mode_of(p: &Path) -> u32 {
    std::fs::metadata(p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .permissions()
        .mode()
        & 0o777
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

const DATA: &str = r#"
resource "terraform_data" "x" {
  input = "ITEM1-PAYLOAD"
}
"#;

#[test]
fn item1_state_block_is_honoured_by_every_command() {
    // A custom path and an encryption key: the state lands there, sealed.
    let dir = setup(&format!("terraform {{\n  state \"sqlite\" {{\n    path = \"keep/s.db\"\n    encryption_key_env = \"{KEY_VAR}\"\n  }}\n}}\n{DATA}"));
    let d = dir.path();
    let key = [(KEY_VAR, "item1 key")];
    check(
        "apply_with_key",
        &run(d, &["apply", "-auto-approve"], &key),
        0,
        &["1 added"],
    );
    let db = d.join("keep/s.db");
    assert!(
        db.exists() && !SqliteStore::default_path(d).exists(),
        "case path_honoured"
    );
    assert!(
        matches!(
            SqliteStore::open(&db, None),
            Err(StateError::EncryptedNoKey { .. })
        ),
        "case state_written_encrypted"
    );
    assert!(
        !contains(&std::fs::read(&db).unwrap(), b"ITEM1-PAYLOAD"),
        "case no_plaintext_in_state_file"
    );
    let snap = SqliteStore::open(&db, Some(&Encryption::new("item1 key")))
        .unwrap()
        .snapshot("default")
        .unwrap();
    assert_eq!(snap.object_count(), 1, "case readable_with_the_key");

    // The key variable unset: every command that opens the store refuses,
    // names the variable, and touches nothing.
    let before = std::fs::read(&db).unwrap();
    std::fs::write(
        d.join("empty.tfstate"),
        r#"{"version": 4, "serial": 9, "lineage": "x", "resources": []}"#,
    )
    .unwrap();
    let commands: [&[&str]; 15] = [
        &["plan"],
        &["apply", "-auto-approve"],
        &["destroy", "-auto-approve"],
        &["refresh"],
        &["import", "terraform_data.y", "some-id"],
        &["show"],
        &["output"],
        &["state", "list"],
        &["state", "show", "terraform_data.x"],
        &["state", "rm", "terraform_data.x"],
        &["state", "mv", "terraform_data.x", "terraform_data.z"],
        &["state", "pull"],
        &["state", "push", "-force", "empty.tfstate"],
        &["state", "rotate-key", "-decrypt"],
        &["force-unlock", "-force", "some-id"],
    ];
    for args in commands {
        let case = format!("unset_key_{}", args.join("_"));
        let o = run(d, args, &[]);
        check(&case, &o, 1, &[KEY_VAR, "is not set"]);
    }
    check(
        "empty_key_refused",
        &run(d, &["plan"], &[(KEY_VAR, "")]),
        1,
        &["is set but empty"],
    );
    assert_eq!(
        std::fs::read(&db).unwrap(),
        before,
        "case refused_commands_change_nothing"
    );
    assert!(
        !SqliteStore::default_path(d).exists(),
        "case no_fallback_to_default_store"
    );

    // A postgres block that cannot be reached is an error, never SQLite.
    let pg = setup(&format!("terraform {{\n  state \"postgres\" {{\n    url = \"postgres://nobody@127.0.0.1:1/none\"\n  }}\n}}\n{DATA}"));
    let o = run(pg.path(), &["plan"], &[]);
    check("unreachable_postgres_refused", &o, 1, &["PostgreSQL"]);
    assert!(
        !SqliteStore::default_path(pg.path()).exists(),
        "case no_sqlite_fallback_for_postgres"
    );
    let nourl = setup(&format!(
        "terraform {{\n  state \"postgres\" {{\n    schema = \"x\"\n  }}\n}}\n{DATA}"
    ));
    check(
        "postgres_without_url_refused",
        &run(nourl.path(), &["plan"], &[]),
        1,
        &["has no url"],
    );
}

#[test]
fn item1_postgres_block_is_honoured() {
    let Some(url) = terrane_testkit::pg_url() else {
        return;
    };
    let schema = format!("t_item1_{}", std::process::id());
    let dir = setup(&format!("terraform {{\n  state \"postgres\" {{\n    url = \"{url}\"\n    schema = \"{schema}\"\n    encryption_key_env = \"{KEY_VAR}\"\n  }}\n}}\n{DATA}"));
    let d = dir.path();
    check(
        "apply_to_postgres",
        &run(d, &["apply", "-auto-approve"], &[(KEY_VAR, "pg key")]),
        0,
        &["1 added"],
    );
    assert!(!SqliteStore::default_path(d).exists(), "case nothing_local");
    assert!(
        matches!(
            terrane_state::PgStore::open(&url, &schema, None),
            Err(StateError::EncryptedNoKey { .. })
        ),
        "case postgres_state_encrypted"
    );
    let store =
        terrane_state::PgStore::open(&url, &schema, Some(&Encryption::new("pg key"))).unwrap();
    assert_eq!(
        store.snapshot("default").unwrap().object_count(),
        1,
        "case state_in_the_named_schema"
    );
    check(
        "list_from_postgres",
        &run(d, &["state", "list"], &[(KEY_VAR, "pg key")]),
        0,
        &["terraform_data.x"],
    );
}

/// Issue 17 item 2: a state block wins over the environment. The block's
/// kind, path, url, schema and key are used whatever `TERRANE_PG_URL`,
/// `TERRANE_PG_SCHEMA` and `TERRANE_STATE_PASSPHRASE` say; the environment
/// fills only what the block leaves out (a postgres block's url, the key
/// of a block without `encryption_key_env`).
#[test]
fn item2_state_block_wins_over_the_environment() {
    let Some(url) = terrane_testkit::pg_url() else {
        return;
    };
    // Nothing listens on port 1: a command that used this would fail.
    let dead = "postgres://nobody@127.0.0.1:1/none";
    let schema = format!("t_item2_{}", std::process::id());
    let sqlite = |extra: &str| {
        format!(
            "terraform {{\n  state \"sqlite\" {{\n    path = \"b/s.db\"\n{extra}  }}\n}}\n{DATA}"
        )
    };
    let postgres = |settings: &str| {
        format!("terraform {{\n  state \"postgres\" {{\n{settings}  }}\n}}\n{DATA}")
    };
    enum Where {
        /// The sqlite file under the directory, and the key that opens it.
        Sqlite(&'static str, Option<&'static str>),
        /// The PostgreSQL schema (at the test server) that holds it.
        Postgres(String),
    }
    // (case, configuration, environment, where the state must land)
    type Case<'a> = (&'a str, String, Vec<(&'a str, String)>, Where);
    let cases: Vec<Case> = vec![
        (
            "sqlite_block_over_pg_url",
            sqlite(""),
            vec![
                ("TERRANE_PG_URL", dead.to_string()),
                ("TERRANE_PG_SCHEMA", "ignored".into()),
            ],
            Where::Sqlite("b/s.db", None),
        ),
        (
            "block_key_over_passphrase",
            sqlite(&format!("    encryption_key_env = \"{KEY_VAR}\"\n")),
            vec![
                (KEY_VAR, "block key".into()),
                ("TERRANE_STATE_PASSPHRASE", "env key".into()),
            ],
            Where::Sqlite("b/s.db", Some("block key")),
        ),
        (
            "passphrase_when_the_block_names_no_key",
            sqlite(""),
            vec![("TERRANE_STATE_PASSPHRASE", "env key".into())],
            Where::Sqlite("b/s.db", Some("env key")),
        ),
        (
            "postgres_block_url_and_schema_over_env",
            postgres(&format!("    url = \"{url}\"\n    schema = \"{schema}\"\n")),
            vec![
                ("TERRANE_PG_URL", dead.to_string()),
                ("TERRANE_PG_SCHEMA", "ignored".into()),
            ],
            Where::Postgres(schema.clone()),
        ),
        (
            "postgres_url_from_env_when_the_block_has_none",
            postgres(&format!("    schema = \"{schema}_env\"\n")),
            vec![("TERRANE_PG_URL", url.clone())],
            Where::Postgres(format!("{schema}_env")),
        ),
    ];
    for (case, config, env, want) in cases {
        let dir = setup(&config);
        let d = dir.path();
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        check(
            case,
            &run(d, &["apply", "-auto-approve"], &env),
            0,
            &["1 added"],
        );
        assert!(
            !SqliteStore::default_path(d).exists(),
            "case {case}: the default store was used"
        );
        let count = match want {
            Where::Sqlite(path, key) => {
                let db = d.join(path);
                if key.is_some() {
                    assert!(
                        SqliteStore::open(&db, None).is_err(),
                        "case {case}: the state is not encrypted"
                    );
                }
                SqliteStore::open(&db, key.map(Encryption::new).as_ref())
                    .unwrap_or_else(|e| panic!("case {case}: {e}"))
                    .snapshot("default")
                    .unwrap()
                    .object_count()
            }
            Where::Postgres(schema) => terrane_state::PgStore::open(&url, &schema, None)
                .unwrap_or_else(|e| panic!("case {case}: {e}"))
                .snapshot("default")
                .unwrap()
                .object_count(),
        };
        assert_eq!(
            count, 1,
            "case {case}: the state is not where the block says"
        );
    }
}

const COUNTED: &str = r#"
resource "terraform_data" "x" {
  count = 40
  input = count.index
}
resource "terraform_data" "y" {
  input = "y"
}
"#;

#[test]
fn item9_state_rm_parses_strictly_and_counts_instances() {
    let dir = setup(COUNTED);
    let d = dir.path();
    check(
        "apply",
        &run(d, &["apply", "-auto-approve"], &[]),
        0,
        &["41 added"],
    );
    let count = || {
        SqliteStore::open(&SqliteStore::default_path(d), None)
            .unwrap()
            .snapshot("default")
            .unwrap()
            .object_count()
    };
    // Terraform's words for a bare type; nothing removed.
    check(
        "bare_type",
        &run(d, &["state", "rm", "terraform_data"], &[]),
        1,
        &[
            "Invalid address",
            "Resource specification must include a resource type and name.",
        ],
    );
    check(
        "bare_type_in_list",
        &run(d, &["state", "list", "terraform_data"], &[]),
        1,
        &["Invalid address"],
    );
    check(
        "one_bad_among_good",
        &run(
            d,
            &["state", "rm", "terraform_data.y", "terraform_data.nope"],
            &[],
        ),
        1,
        &["Invalid target address", "No matching objects found"],
    );
    assert_eq!(count(), 41, "case refused_rm_removes_nothing");
    let o = run(d, &["state", "rm", "terraform_data.x"], &[]);
    check(
        "resource_removes_all_instances",
        &o,
        0,
        &[
            "Removed terraform_data.x[0]",
            "Removed terraform_data.x[39]",
            "Successfully removed 40 resource instance(s).",
        ],
    );
    assert_eq!(
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter(|l| l.starts_with("Removed "))
            .count(),
        40,
        "case one_line_per_instance"
    );
    assert_eq!(count(), 1, "case only_x_removed");
    // The same instance named twice is removed (and counted) once.
    check(
        "duplicate_targets_counted_once",
        &run(
            d,
            &["state", "rm", "terraform_data.y", "terraform_data.y"],
            &[],
        ),
        0,
        &["Successfully removed 1 resource instance(s)."],
    );
}

#[test]
fn item8_state_push_refuses_older_serial() {
    let dir = setup(COUNTED.replace("count = 40", "count = 2").as_str());
    let d = dir.path();
    check(
        "apply",
        &run(d, &["apply", "-auto-approve"], &[]),
        0,
        &["3 added"],
    );
    let backup = run(d, &["state", "pull"], &[]).stdout;
    std::fs::write(d.join("backup.tfstate"), &backup).unwrap();
    // A plan saved now goes stale when the state moves on.
    check("plan_out", &run(d, &["plan", "-out=old.plan"], &[]), 0, &[]);
    std::fs::write(
        d.join("main.tf"),
        COUNTED.replace("count = 40", "count = 3"),
    )
    .unwrap();
    check(
        "apply_more",
        &run(d, &["apply", "-auto-approve"], &[]),
        0,
        &["1 added"],
    );
    let serial = |d: &Path| {
        SqliteStore::open(&SqliteStore::default_path(d), None)
            .unwrap()
            .snapshot("default")
            .unwrap()
            .serial
    };
    let current = serial(d);
    let old_serial = serde_json::from_slice::<serde_json::Value>(&backup).unwrap()["serial"]
        .as_u64()
        .unwrap();
    assert!(old_serial < current);

    let state_with = |f: &dyn Fn(&mut serde_json::Value)| {
        let mut j: serde_json::Value = serde_json::from_slice(&backup).unwrap();
        f(&mut j);
        serde_json::to_vec_pretty(&j).unwrap()
    };
    let older = format!(
        "cannot import state with serial {old_serial} over newer state with serial {current}"
    );
    let cases: Vec<(&str, Vec<u8>, Vec<&str>)> = vec![
        ("older_serial", backup.clone(), vec![&older]),
        (
            "other_lineage",
            state_with(&|j| j["lineage"] = "0b6cfa3c-2f2b-4d0a-9d5e-1f1a8a2c9b11".into()),
            vec!["over unrelated state with lineage"],
        ),
        (
            "same_serial_other_content",
            state_with(&|j| j["serial"] = current.into()),
            vec!["with a different state that has the same serial"],
        ),
        (
            "serial_u64_max",
            state_with(&|j| j["serial"] = u64::MAX.into()),
            vec!["out of range"],
        ),
        (
            "duplicate_resource",
            state_with(&|j| {
                let r = j["resources"][0].clone();
                j["resources"].as_array_mut().unwrap().push(r);
            }),
            vec!["appears more than once"],
        ),
        (
            "control_character_in_name",
            state_with(&|j| j["resources"][0]["name"] = "x\u{1b}[2J".into()),
            vec!["is not a valid name"],
        ),
        (
            "attributes_off_schema",
            state_with(&|j| {
                j["serial"] = (current + 1).into();
                j["resources"][0]["instances"][0]["attributes"]["bogus"] = 1.into();
            }),
            vec!["do not fit the schema of terraform_data"],
        ),
        (
            "unknown_resource_type",
            state_with(&|j| {
                j["serial"] = (current + 1).into();
                j["resources"][0]["type"] = "terraform_nothing".into();
            }),
            vec!["has no resource type \"terraform_nothing\""],
        ),
    ];
    let before = run(d, &["state", "pull"], &[]).stdout;
    for (case, bytes, want) in cases {
        std::fs::write(d.join("push.tfstate"), bytes).unwrap();
        check(
            case,
            &run(d, &["state", "push", "push.tfstate"], &[]),
            1,
            &want,
        );
        assert_eq!(
            run(d, &["state", "pull"], &[]).stdout,
            before,
            "case {case}: state unchanged"
        );
    }
    // The stale plan stays stale; -force pushes the backup, as Terraform's.
    check(
        "stale_plan_still_refused",
        &run(d, &["apply", "old.plan"], &[]),
        1,
        &["Saved plan is stale"],
    );
    check(
        "force_pushes",
        &run(d, &["state", "push", "-force", "backup.tfstate"], &[]),
        0,
        &[],
    );
    assert_eq!(
        serial(d),
        old_serial,
        "case forced_push_writes_the_file_as_is"
    );
    // A newer serial of the same lineage is accepted without -force.
    std::fs::write(
        d.join("newer.tfstate"),
        state_with(&|j| j["serial"] = (current + 5).into()),
    )
    .unwrap();
    check(
        "newer_serial_accepted",
        &run(d, &["state", "push", "newer.tfstate"], &[]),
        0,
        &[],
    );
    assert_eq!(serial(d), current + 5, "case newer_serial_kept");
}

#[test]
fn item11_saved_plans_are_sealed_and_private() {
    let secret = "ITEM11-SECRET-VARIABLE";
    let config = format!("terraform {{\n  state \"sqlite\" {{\n    encryption_key_env = \"{KEY_VAR}\"\n  }}\n}}\nvariable \"pw\" {{\n  type      = string\n  sensitive = true\n}}\nresource \"terraform_data\" \"x\" {{\n  input = var.pw\n}}\n");
    let dir = setup(&config);
    let d = dir.path();
    let env = [(KEY_VAR, "plan key"), ("TF_VAR_pw", secret)];
    // A plan file that already exists with a loose mode is replaced by a 0600 one.
    std::fs::write(d.join("p.plan"), "old").unwrap();
    std::fs::set_permissions(d.join("p.plan"), std::fs::Permissions::from_mode(0o644)).unwrap();
    check(
        "plan_out",
        &run(d, &["plan", "-out=p.plan"], &env),
        0,
        &["Saved the plan to: p.plan"],
    );
    let bytes = std::fs::read(d.join("p.plan")).unwrap();
    assert_eq!(mode_of(&d.join("p.plan")), 0o600, "case plan_file_0600");
    assert!(
        bytes.starts_with(b"terrane-sealed-plan/1\n"),
        "case plan_file_sealed"
    );
    assert!(
        !contains(&bytes, secret.as_bytes())
            && !contains(&bytes, b"prior_state")
            && !contains(&bytes, b"variables"),
        "case nothing_readable_in_plan_file"
    );
    assert_eq!(mode_of(&d.join(".terrane")), 0o700, "case state_dir_0700");
    assert_eq!(
        mode_of(&SqliteStore::default_path(d)),
        0o600,
        "case state_db_0600"
    );
    // Without the key, or with another, the sealed plan is a clear error.
    check(
        "show_without_key",
        &run(d, &["show", "p.plan"], &[]),
        1,
        &[KEY_VAR, "is not set"],
    );
    let other = setup(DATA);
    std::fs::copy(d.join("p.plan"), other.path().join("p.plan")).unwrap();
    check(
        "show_without_configured_key",
        &run(other.path(), &["show", "p.plan"], &[]),
        1,
        &["the plan file is encrypted with the state's key, but no key is configured"],
    );
    check(
        "show_with_the_key",
        &run(d, &["show", "p.plan"], &env),
        0,
        &["terraform_data.x will be created"],
    );
    check(
        "apply_with_the_key",
        &run(d, &["apply", "p.plan"], &[(KEY_VAR, "plan key")]),
        0,
        &["1 added"],
    );
    // Unencrypted state: plan files are still 0600 (and plain).
    let plain = setup(DATA);
    check(
        "plain_plan_out",
        &run(plain.path(), &["plan", "-out=q.plan"], &[]),
        0,
        &[],
    );
    assert_eq!(
        mode_of(&plain.path().join("q.plan")),
        0o600,
        "case plain_plan_file_0600"
    );
    assert!(
        !std::fs::read(plain.path().join("q.plan"))
            .unwrap()
            .starts_with(b"terrane-sealed-plan"),
        "case plain_plan_not_sealed"
    );
}

#[test]
fn item14_state_rotate_key() {
    let new_var = "TERRANE_TEST_NEW_STATE_KEY";
    let dir = setup(&format!("terraform {{\n  state \"sqlite\" {{\n    encryption_key_env = \"{KEY_VAR}\"\n  }}\n}}\n{DATA}"));
    let d = dir.path();
    check(
        "apply",
        &run(d, &["apply", "-auto-approve"], &[(KEY_VAR, "first key")]),
        0,
        &["1 added"],
    );
    check(
        "needs_new_key",
        &run(d, &["state", "rotate-key"], &[(KEY_VAR, "first key")]),
        1,
        &["-new-key-env"],
    );
    check(
        "new_key_unset",
        &run(
            d,
            &["state", "rotate-key", "-new-key-env", new_var],
            &[(KEY_VAR, "first key")],
        ),
        1,
        &[new_var, "is not set"],
    );
    check(
        "rotate",
        &run(
            d,
            &["state", "rotate-key", "-new-key-env", new_var],
            &[(KEY_VAR, "first key"), (new_var, "second key")],
        ),
        0,
        &["State key rotated."],
    );
    check(
        "old_key_refused",
        &run(d, &["state", "list"], &[(KEY_VAR, "first key")]),
        1,
        &["passphrase is wrong"],
    );
    check(
        "new_key_reads",
        &run(d, &["state", "list"], &[(KEY_VAR, "second key")]),
        0,
        &["terraform_data.x"],
    );
    check(
        "plan_with_new_key",
        &run(
            d,
            &["plan", "-detailed-exitcode"],
            &[(KEY_VAR, "second key")],
        ),
        0,
        &["No changes"],
    );
    // Decrypting, then encrypting an unencrypted store again.
    check(
        "decrypt",
        &run(
            d,
            &["state", "rotate-key", "-decrypt"],
            &[(KEY_VAR, "second key")],
        ),
        0,
        &["State decrypted."],
    );
    assert!(
        SqliteStore::open(&SqliteStore::default_path(d), None).is_ok(),
        "case decrypted_store_opens_without_key"
    );
    std::fs::write(d.join("main.tf"), DATA).unwrap();
    check(
        "encrypt_again",
        &run(
            d,
            &["state", "rotate-key", "-new-key-env", new_var],
            &[(new_var, "third key")],
        ),
        0,
        &["State key rotated."],
    );
    assert!(
        matches!(
            SqliteStore::open(&SqliteStore::default_path(d), None),
            Err(StateError::EncryptedNoKey { .. })
        ),
        "case encrypted_again"
    );
    assert!(
        !contains(
            &std::fs::read(SqliteStore::default_path(d)).unwrap(),
            b"ITEM1-PAYLOAD"
        ),
        "case no_plaintext_left_after_encrypting"
    );
}

/// A state Terraform 0.11 wrote, as 0.12's upgrade left it (v4 with the
/// object in flatmap form, `attributes_flat`): `state push` checks it
/// against the resource type's schema (at the provider's schema version)
/// and refuses what no schema type can hold, naming the flat key; what it
/// accepts is kept verbatim until the provider's UpgradeResourceState
/// (issue 15 item 3), which the next plan calls with RawState.flatmap.
#[test]
fn item2_state_push_decodes_attributes_flat() {
    let dir = setup("resource \"terraform_data\" \"x\" {\n}\n");
    let d = dir.path();
    let flat = |attrs: &str| {
        format!(
            r#"{{"version": 4, "terraform_version": "0.12.31", "serial": 1,
  "lineage": "5f0e6f2c-9a57-4d8b-a4b6-0d3a4c0a7d21", "outputs": {{}},
  "resources": [{{"mode": "managed", "type": "terraform_data", "name": "x",
    "provider": "provider[\"terraform.io/builtin/terraform\"]",
    "instances": [{{"schema_version": 0, "attributes_flat": {attrs}}}]}}]}}"#
        )
    };
    let cases: [(&str, String, i32, &[&str]); 2] = [
        (
            "flat_input_refused",
            flat(r#"{"id": "abc", "input.%": "1", "input.k": "v"}"#),
            1,
            &["terraform_data.x: attributes_flat: \"input\": an attribute of any type"],
        ),
        ("flat_kept", flat(r#"{"id": "abc"}"#), 0, &[]),
    ];
    for (case, text, code, want) in cases {
        std::fs::write(d.join("flat.tfstate"), text).unwrap();
        check(
            case,
            &run(d, &["state", "push", "flat.tfstate"], &[]),
            code,
            want,
        );
    }
    let pull = || -> serde_json::Value {
        serde_json::from_slice(&run(d, &["state", "pull"], &[]).stdout).unwrap()
    };
    let pulled = pull();
    let inst = &pulled["resources"][0]["instances"][0];
    assert_eq!(
        inst["attributes_flat"],
        serde_json::json!({"id": "abc"}),
        "case item3_flat_kept_verbatim: {pulled}"
    );
    // The provider upgrades it: nothing to change, and once applied the
    // object is attributes JSON.
    check(
        "flat_upgraded_plans",
        &run(d, &["plan", "-detailed-exitcode"], &[]),
        0,
        &["No changes"],
    );
    check(
        "flat_upgraded_applies",
        &run(d, &["apply", "-auto-approve"], &[]),
        0,
        &[],
    );
    let pulled = pull();
    let inst = &pulled["resources"][0]["instances"][0];
    assert!(
        inst["attributes"]["id"] == "abc"
            && inst["attributes"]["input"].is_null()
            && inst.get("attributes_flat").is_none(),
        "case item3_flat_upgraded: {pulled}"
    );
}
