//! Never a silent empty state (issue 17 item 1): a Terraform backend block
//! terrane does not serve is an error at its line for every command that
//! uses state, and a
//! Terraform state file next to the configuration stops plan and apply
//! until it is moved into terrane's store, which `state push` does with
//! nothing changed: the next plan finds no changes.

mod recovery;

use std::path::Path;
use terrane_testkit::{isolated, temp_dir, terraform, unwrapped, Out};

fn terrane(dir: &Path, args: &[&str]) -> Out {
    isolated(env!("CARGO_BIN_EXE_terrane"), dir)
        .args(args)
        .env("TF_CLI_CONFIG_FILE", dir.join("cli.tfrc"))
        .output()
        .expect("terrane runs")
        .into()
}

const RESOURCE: &str = "resource \"terraform_data\" \"d\" {\n  input = \"x\"\n}\n";

#[test]
fn item1_backend_block_is_an_error_at_its_line() {
    let cases = [
        (
            "kubernetes",
            "terraform {\n  backend \"kubernetes\" {\n    secret_suffix = \"s\"\n  }\n}\n",
        ),
        ("consul", "terraform {\n  backend \"consul\" {}\n}\n"),
        (
            "cloud",
            "terraform {\n  cloud {\n    organization = \"o\"\n  }\n}\n",
        ),
    ];
    for (name, terraform_block) in cases {
        let dir = temp_dir();
        std::fs::write(dir.path().join("cli.tfrc"), "").unwrap();
        std::fs::write(
            dir.path().join("main.tf"),
            format!("{terraform_block}{RESOURCE}"),
        )
        .unwrap();
        for args in [
            &["init", "-no-color"][..],
            &["plan", "-no-color"][..],
            &["apply", "-auto-approve", "-no-color"][..],
            &["state", "list"][..],
            &["output"][..],
        ] {
            let o = terrane(dir.path(), args);
            let step = format!("{name}: {}", args.join(" "));
            assert_eq!(o.code, 1, "case {step}: {}{}", o.stdout, o.stderr);
            assert!(
                o.stderr.contains("Unsupported backend") && o.stderr.contains("main.tf line 2"),
                "case {step}: the error is at the block's line: {}",
                o.stderr
            );
            assert!(
                o.stderr.contains("state push"),
                "case {step}: the error says how to move the state: {}",
                o.stderr
            );
        }
        assert!(
            !dir.path().join(".terrane/state.db").exists(),
            "case {name}: no empty store was created"
        );
        // validate uses no state: a backend block is fine there.
        let o = terrane(dir.path(), &["validate", "-no-color"]);
        assert_eq!(o.code, 0, "case {name}: validate: {}", o.stderr);
    }
}

#[test]
fn item1_terraform_state_file_is_not_ignored() {
    let Some(tf) = terraform() else {
        return;
    };
    let dir = temp_dir();
    std::fs::write(dir.path().join("cli.tfrc"), "").unwrap();
    std::fs::write(dir.path().join("main.tf"), RESOURCE).unwrap();
    let rc = dir.path().join("cli.tfrc");
    let env = [("TF_CLI_CONFIG_FILE", rc.to_str().unwrap())];
    let applied = tf.run(dir.path(), &["apply", "-auto-approve", "-no-color"], &env);
    assert_eq!(applied.code, 0, "terraform apply: {}", applied.stderr);
    assert!(dir.path().join("terraform.tfstate").exists());
    for args in [
        &["plan", "-no-color"][..],
        &["apply", "-auto-approve", "-no-color"][..],
    ] {
        let o = terrane(dir.path(), args);
        let step = args.join(" ");
        assert_eq!(o.code, 1, "case {step}: {}{}", o.stdout, o.stderr);
        assert!(
            unwrapped(&o.stderr).contains("terrane state push terraform.tfstate"),
            "case {step}: names the command that moves it: {}",
            o.stderr
        );
        assert!(
            !o.stdout.contains("will be created"),
            "case {step}: planned nothing"
        );
    }
    // Moved over, the state plans no changes, and its lineage is kept.
    let pushed = terrane(dir.path(), &["state", "push", "terraform.tfstate"]);
    assert_eq!(pushed.code, 0, "case push: {}", pushed.stderr);
    let plan = terrane(dir.path(), &["plan", "-detailed-exitcode", "-no-color"]);
    assert_eq!(
        plan.code, 0,
        "case no_changes_after_push: {}{}",
        plan.stdout, plan.stderr
    );
    let lineage = |text: &str| -> String {
        let v: serde_json::Value = serde_json::from_str(text).expect("state JSON");
        v["lineage"].as_str().unwrap_or_default().to_string()
    };
    let theirs = std::fs::read_to_string(dir.path().join("terraform.tfstate")).unwrap();
    let ours = terrane(dir.path(), &["state", "pull"]).stdout;
    assert_eq!(lineage(&ours), lineage(&theirs), "case lineage_kept");
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

fn config(backend: &str, input: &str) -> String {
    format!("terraform {{\n  backend {backend}\n}}\nresource \"terraform_data\" \"d\" {{\n  input = \"{input}\"\n}}\noutput \"secret\" {{\n  value     = \"s3cr3t-{input}\"\n  sensitive = true\n}}\n")
}

fn ok(step: &str, o: &Out) {
    assert_eq!(o.code, 0, "case {step}: {}{}", o.stdout, o.stderr);
}

/// Terraform applies, terrane plans no changes, terrane applies a change,
/// Terraform plans no changes: both read and write the one state.
fn share_state(name: &str, dir: &Path, backend: &str, init_args: &[&str]) {
    let Some(tf) = terraform() else {
        return;
    };
    write(dir, "cli.tfrc", "");
    write(dir, "main.tf", &config(backend, "one"));
    let rc = dir.join("cli.tfrc");
    let env = [("TF_CLI_CONFIG_FILE", rc.to_str().unwrap())];
    let tf_ok = |step: &str, args: &[&str]| {
        let o = tf.run(dir, args, &env);
        assert_eq!(o.code, 0, "case {name} {step}: {}{}", o.stdout, o.stderr);
        o
    };
    let mut init = vec!["init", "-input=false", "-no-color"];
    init.extend(init_args);
    tf_ok("terraform_init", &init);
    tf_ok(
        "terraform_apply",
        &["apply", "-auto-approve", "-input=false", "-no-color"],
    );
    let mut init = vec!["init", "-no-color"];
    init.extend(init_args);
    ok(&format!("{name} terrane_init"), &terrane(dir, &init));
    let plan = terrane(dir, &["plan", "-detailed-exitcode", "-no-color"]);
    ok(&format!("{name} terrane_plans_no_changes"), &plan);
    write(dir, "main.tf", &config(backend, "two"));
    let applied = terrane(dir, &["apply", "-auto-approve", "-no-color"]);
    ok(&format!("{name} terrane_applies_a_change"), &applied);
    assert!(
        !applied.stdout.contains("s3cr3t"),
        "case {name}: the secret is not shown"
    );
    let plan = tf.run(
        dir,
        &["plan", "-detailed-exitcode", "-input=false", "-no-color"],
        &env,
    );
    assert_eq!(
        plan.code, 0,
        "case {name} terraform_plans_no_changes: {}{}",
        plan.stdout, plan.stderr
    );
    let out = tf_ok("terraform_output", &["output", "-raw", "secret"]);
    assert_eq!(
        out.stdout, "s3cr3t-two",
        "case {name}: terrane's output read by Terraform"
    );
}

#[test]
fn item2_local_backend_shared_with_terraform() {
    let dir = temp_dir();
    share_state("local", dir.path(), "\"local\" {}", &[]);
    if terraform().is_none() {
        return;
    }
    assert!(
        dir.path().join("terraform.tfstate.backup").exists(),
        "case backup_written"
    );
    // terrane's lock blocks Terraform, which names terrane's lock: a
    // second configuration on the same state file, planned by Terraform
    // while a terrane apply sleeps holding the lock.
    let tf = terraform().unwrap();
    let other = temp_dir();
    write(other.path(), "cli.tfrc", "");
    let path = dir.path().join("terraform.tfstate");
    write(
        other.path(),
        "main.tf",
        &config(
            &format!("\"local\" {{\n    path = \"{}\"\n  }}", path.display()),
            "two",
        ),
    );
    let rc = other.path().join("cli.tfrc");
    let env = [("TF_CLI_CONFIG_FILE", rc.to_str().unwrap())];
    assert_eq!(
        tf.run(other.path(), &["init", "-input=false", "-no-color"], &env)
            .code,
        0
    );
    let mut slow = config("\"local\" {}", "two");
    slow.push_str("resource \"time_sleep\" \"wait\" {\n  create_duration = \"6s\"\n}\n");
    write(dir.path(), "main.tf", &slow);
    let mut holder = isolated(env!("CARGO_BIN_EXE_terrane"), dir.path())
        .args(["apply", "-auto-approve", "-no-color"])
        .env("TF_CLI_CONFIG_FILE", dir.path().join("cli.tfrc"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let lock_info = dir.path().join(".terraform.tfstate.lock.info");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !lock_info.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let blocked = tf.run(other.path(), &["plan", "-input=false", "-no-color"], &env);
    let _ = holder.wait();
    assert_eq!(
        blocked.code, 1,
        "case terraform_blocked: {}{}",
        blocked.stdout, blocked.stderr
    );
    assert!(
        blocked.stderr.contains("Error acquiring the state lock")
            && blocked.stderr.contains("OperationTypeApply"),
        "case terraform_names_terranes_lock: {}",
        blocked.stderr
    );
}

#[test]
fn item2_http_backend_shared_with_terraform() {
    let server = terrane_testkit::httpstate::HttpStateServer::start();
    let dir = temp_dir();
    let block = format!(
        "\"http\" {{\n    address        = \"{a}\"\n    lock_address   = \"{l}\"\n    unlock_address = \"{l}\"\n  }}",
        a = server.address(),
        l = server.lock_address()
    );
    share_state("http", dir.path(), &block, &[]);
    if terraform().is_some() {
        assert!(
            server.stored.lock().unwrap().lock.is_none(),
            "case http: unlocked"
        );
    }
}

#[test]
fn item2_pg_backend_shared_with_terraform() {
    let Some(url) = terrane_testkit::pg_url() else {
        return;
    };
    let schema = format!("tf_share_{}", std::process::id());
    let dir = temp_dir();
    // Partial configuration: the connection string comes from
    // -backend-config, as Terraform's documentation recommends.
    let block = format!("\"pg\" {{\n    schema_name = \"{schema}\"\n  }}");
    let conn = format!("-backend-config=conn_str={url}");
    share_state("pg", dir.path(), &block, &[&conn]);
    if terraform().is_some() {
        let record =
            std::fs::read_to_string(dir.path().join(".terraform/terraform.tfstate")).unwrap();
        assert!(
            record.contains(&schema),
            "case pg: init recorded the backend"
        );
    }
    let mut c = terrane_state::pg_connect(&url).unwrap();
    let _ = c.batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"));
}

#[test]
fn item2_backend_needs_init_and_refuses_changes() {
    let dir = temp_dir();
    write(dir.path(), "cli.tfrc", "");
    write(dir.path(), "main.tf", &config("\"local\" {}", "one"));
    let o = terrane(dir.path(), &["plan", "-no-color"]);
    assert_eq!(o.code, 1, "case not_initialized: {}", o.stderr);
    assert!(
        o.stderr.contains("terrane init") && unwrapped(&o.stderr).contains("main.tf line 2"),
        "case not_initialized: {}",
        o.stderr
    );
    ok("init", &terrane(dir.path(), &["init", "-no-color"]));
    ok(
        "apply",
        &terrane(dir.path(), &["apply", "-auto-approve", "-no-color"]),
    );
    // A changed path: init refuses until told to migrate or reconfigure.
    write(
        dir.path(),
        "main.tf",
        &config("\"local\" {\n    path = \"moved.tfstate\"\n  }", "one"),
    );
    let o = terrane(dir.path(), &["plan", "-no-color"]);
    assert!(
        o.code == 1 && unwrapped(&o.stderr).contains("changed since the last init"),
        "case changed_block: {}",
        o.stderr
    );
    let o = terrane(dir.path(), &["init", "-no-color"]);
    assert!(
        o.code == 1 && o.stderr.contains("-migrate-state"),
        "case init_refuses: {}{}",
        o.stdout,
        o.stderr
    );
    ok(
        "migrate",
        &terrane(dir.path(), &["init", "-migrate-state", "-no-color"]),
    );
    let plan = terrane(dir.path(), &["plan", "-detailed-exitcode", "-no-color"]);
    ok("no_changes_after_migration", &plan);
    // Removing the block does not fall back to an empty store.
    write(dir.path(), "main.tf", RESOURCE);
    let o = terrane(dir.path(), &["plan", "-no-color"]);
    assert!(
        o.code == 1 && unwrapped(&o.stderr).contains("no longer has a backend block"),
        "case block_removed: {}",
        o.stderr
    );
    assert!(
        !dir.path().join(".terrane/state.db").exists(),
        "case no_empty_store"
    );
    // Bad settings are reported at the block's line.
    write(
        dir.path(),
        "main.tf",
        &config("\"http\" {\n    adress = \"x\"\n  }", "one"),
    );
    let o = terrane(dir.path(), &["init", "-reconfigure", "-no-color"]);
    assert!(
        o.code == 1
            && unwrapped(&o.stderr).contains("\"adress\" is not expected")
            && unwrapped(&o.stderr).contains("main.tf line 2"),
        "case bad_setting: {}",
        o.stderr
    );
}

fn lineage_serial(text: &str) -> (String, u64) {
    let v: serde_json::Value = serde_json::from_str(text).expect("state JSON");
    (
        v["lineage"].as_str().unwrap_or_default().into(),
        v["serial"].as_u64().unwrap_or(0),
    )
}

#[test]
fn item1_migrate_state_local_sqlite_pg_and_back() {
    let Some(tf) = terraform() else {
        return;
    };
    let dir = temp_dir();
    write(dir.path(), "cli.tfrc", "");
    // Terraform's own default: terraform.tfstate, no backend block.
    let plain = "resource \"terraform_data\" \"d\" {\n  input = \"x\"\n}\noutput \"secret\" {\n  value     = \"s3cr3t\"\n  sensitive = true\n}\n";
    write(dir.path(), "main.tf", plain);
    let rc = dir.path().join("cli.tfrc");
    let env = [("TF_CLI_CONFIG_FILE", rc.to_str().unwrap())];
    let o = tf.run(dir.path(), &["apply", "-auto-approve", "-no-color"], &env);
    assert_eq!(o.code, 0, "terraform apply: {}", o.stderr);
    let theirs = std::fs::read_to_string(dir.path().join("terraform.tfstate")).unwrap();
    let want = lineage_serial(&theirs);
    // local terraform.tfstate -> terrane's SQLite store.
    ok(
        "to_sqlite",
        &terrane(dir.path(), &["init", "-migrate-state", "-no-color"]),
    );
    let pulled = terrane(dir.path(), &["state", "pull"]);
    assert_eq!(
        lineage_serial(&pulled.stdout),
        want,
        "case sqlite_lineage_serial"
    );
    assert!(
        pulled.stdout.contains("s3cr3t"),
        "case sqlite_sensitive_output_kept"
    );
    ok(
        "sqlite_no_changes",
        &terrane(dir.path(), &["plan", "-detailed-exitcode", "-no-color"]),
    );
    let Some(url) = terrane_testkit::pg_url() else {
        return;
    };
    // SQLite -> the pg backend (Terraform's tables).
    let schema = format!("tf_mig_{}", std::process::id());
    let pg_block =
        format!("terraform {{\n  backend \"pg\" {{\n    schema_name = \"{schema}\"\n  }}\n}}\n");
    write(dir.path(), "main.tf", &format!("{pg_block}{plain}"));
    let conn = format!("-backend-config=conn_str={url}");
    ok(
        "to_pg",
        &terrane(dir.path(), &["init", "-migrate-state", &conn, "-no-color"]),
    );
    let pulled = terrane(dir.path(), &["state", "pull"]);
    assert_eq!(
        lineage_serial(&pulled.stdout),
        want,
        "case pg_lineage_serial"
    );
    assert!(
        pulled.stdout.contains("s3cr3t"),
        "case pg_sensitive_output_kept"
    );
    // terrane recorded the backend as Terraform does (its hash of the
    // block): Terraform plans on it without a new init.
    let o = tf.run(
        dir.path(),
        &["plan", "-detailed-exitcode", "-input=false", "-no-color"],
        &env,
    );
    assert_eq!(
        o.code, 0,
        "case terraform_reads_pg: {}{}",
        o.stdout, o.stderr
    );
    // And back: pg -> SQLite (the block removed), into a fresh store.
    std::fs::remove_file(dir.path().join(".terrane/state.db")).unwrap();
    write(dir.path(), "main.tf", plain);
    ok(
        "back_to_sqlite",
        &terrane(dir.path(), &["init", "-migrate-state", "-no-color"]),
    );
    let pulled = terrane(dir.path(), &["state", "pull"]);
    assert_eq!(
        lineage_serial(&pulled.stdout),
        want,
        "case back_lineage_serial"
    );
    assert!(
        pulled.stdout.contains("s3cr3t"),
        "case back_sensitive_output_kept"
    );
    ok(
        "back_no_changes",
        &terrane(dir.path(), &["plan", "-detailed-exitcode", "-no-color"]),
    );
    let mut c = terrane_state::pg_connect(&url).unwrap();
    let _ = c.batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"));
}

#[test]
fn item5_workspaces() {
    let dir = temp_dir();
    write(dir.path(), "cli.tfrc", "");
    let ws_config = "terraform {\n  backend \"local\" {}\n}\nresource \"terraform_data\" \"d\" {\n  input = terraform.workspace\n}\noutput \"ws\" {\n  value = terraform.workspace\n}\n";
    write(dir.path(), "main.tf", ws_config);
    ok("init", &terrane(dir.path(), &["init", "-no-color"]));
    let show = terrane(dir.path(), &["workspace", "show"]);
    assert_eq!(show.stdout, "default\n", "case show_default");
    ok("new", &terrane(dir.path(), &["workspace", "new", "dev"]));
    assert_eq!(
        std::fs::read_to_string(dir.path().join(".terraform/environment")).unwrap(),
        "dev",
        "case environment_file"
    );
    ok(
        "apply_dev",
        &terrane(dir.path(), &["apply", "-auto-approve", "-no-color"]),
    );
    let out = terrane(dir.path(), &["output", "-raw", "ws"]);
    assert_eq!(out.stdout, "dev", "case terraform_workspace_in_expressions");
    assert!(
        dir.path()
            .join("terraform.tfstate.d/dev/terraform.tfstate")
            .exists(),
        "case dev_state_file"
    );
    let list = terrane(dir.path(), &["workspace", "list"]);
    assert_eq!(list.stdout, "  default\n* dev\n\n", "case list");
    let o = terrane(dir.path(), &["workspace", "delete", "dev"]);
    assert!(
        o.code == 1 && o.stderr.contains("active workspace"),
        "case delete_current_refused: {}",
        o.stderr
    );
    ok(
        "select_default",
        &terrane(dir.path(), &["workspace", "select", "default"]),
    );
    let o = terrane(dir.path(), &["workspace", "select", "nope"]);
    assert!(
        o.code == 1 && o.stderr.contains("doesn't exist"),
        "case select_missing: {}",
        o.stderr
    );
    // TF_WORKSPACE wins over the environment file.
    let o = isolated(env!("CARGO_BIN_EXE_terrane"), dir.path())
        .args(["output", "-raw", "ws"])
        .env("TF_CLI_CONFIG_FILE", dir.path().join("cli.tfrc"))
        .env("TF_WORKSPACE", "dev")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "dev",
        "case tf_workspace_env"
    );
    let o = terrane(dir.path(), &["workspace", "delete", "dev"]);
    assert!(
        o.code == 1 && o.stderr.contains("not empty"),
        "case delete_non_empty_refused: {}",
        o.stderr
    );
    ok(
        "delete_forced",
        &terrane(dir.path(), &["workspace", "delete", "-force", "dev"]),
    );
    let list = terrane(dir.path(), &["workspace", "list"]);
    assert_eq!(list.stdout, "* default\n\n", "case deleted");
}

#[test]
fn item6_terraform_remote_state_reads_another_state() {
    let producer = temp_dir();
    write(producer.path(), "cli.tfrc", "");
    write(producer.path(), "main.tf", "terraform {\n  backend \"local\" {}\n}\noutput \"name\" {\n  value = \"net-1\"\n}\noutput \"token\" {\n  value     = \"s3cr3t\"\n  sensitive = true\n}\n");
    ok(
        "producer_init",
        &terrane(producer.path(), &["init", "-no-color"]),
    );
    ok(
        "producer_apply",
        &terrane(producer.path(), &["apply", "-auto-approve", "-no-color"]),
    );
    let consumer = temp_dir();
    write(consumer.path(), "cli.tfrc", "");
    let state = producer.path().join("terraform.tfstate");
    write(
        consumer.path(),
        "main.tf",
        &format!("data \"terraform_remote_state\" \"net\" {{\n  backend = \"local\"\n  config = {{\n    path = \"{}\"\n  }}\n  defaults = {{\n    missing = \"dflt\"\n  }}\n}}\noutput \"name\" {{\n  value = data.terraform_remote_state.net.outputs.name\n}}\noutput \"missing\" {{\n  value = data.terraform_remote_state.net.outputs.missing\n}}\noutput \"token\" {{\n  value     = data.terraform_remote_state.net.outputs.token\n  sensitive = true\n}}\n", state.display()),
    );
    let applied = terrane(consumer.path(), &["apply", "-auto-approve", "-no-color"]);
    ok("consumer_apply", &applied);
    assert!(
        !applied.stdout.contains("s3cr3t"),
        "case sensitive_not_shown"
    );
    let name = terrane(consumer.path(), &["output", "-raw", "name"]);
    assert_eq!(name.stdout, "net-1", "case output_read");
    let missing = terrane(consumer.path(), &["output", "-raw", "missing"]);
    assert_eq!(missing.stdout, "dflt", "case default_used");
    // A missing backend setting is an error naming it.
    write(consumer.path(), "main.tf", "data \"terraform_remote_state\" \"x\" {\n  backend = \"local\"\n  config = {\n    paht = \"x\"\n  }\n}\n");
    let o = terrane(consumer.path(), &["plan", "-no-color"]);
    assert!(
        o.code == 1 && o.stderr.contains("\"paht\" is not expected"),
        "case bad_config: {}",
        o.stderr
    );
}

/// SIGKILL during a 2,000-resource apply on the local backend, uploads
/// held back (`TERRANE_BACKEND_UPLOAD_INTERVAL=1h`) so the journal alone
/// holds what was acknowledged: every object a reader saw before the kill
/// is in `terraform.tfstate` after the next run, which recovers the
/// journal under the lock and plans exactly the rest.
#[test]
fn item4_sigkill_during_local_backend_apply_loses_nothing() {
    const N: usize = 2000;
    let dir = temp_dir();
    let d = dir.path();
    write(d, "cli.tfrc", "");
    write(
        d,
        "main.tf",
        &format!("terraform {{\n  backend \"local\" {{}}\n}}\nresource \"terraform_data\" \"r\" {{\n  count = {N}\n  input = \"v-${{count.index}}\"\n}}\n"),
    );
    ok("init", &terrane(d, &["init", "-no-color"]));
    let mut child = isolated(env!("CARGO_BIN_EXE_terrane"), d)
        .args(["apply", "-auto-approve", "-no-color"])
        .env("TF_CLI_CONFIG_FILE", d.join("cli.tfrc"))
        .env("TERRANE_BACKEND_UPLOAD_INTERVAL", "1h")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let reader = || {
        let backend = terrane_backend::local::LocalBackend::new(&Default::default(), d).ok()?;
        let store = terrane_backend::BackendStore::new(
            Box::new(backend),
            d.join(".terraform/terrane-journal"),
        );
        terrane_state::StateStore::snapshot(&store, "default").ok()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let seen = loop {
        let s = reader();
        if s.as_ref().is_some_and(|s| s.object_count() >= 200) {
            break s.unwrap();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "case apply_progressed"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let status = child.wait().unwrap();
    assert!(status.code().is_none(), "case killed: {status}");
    let before = std::fs::read(d.join("terraform.tfstate")).unwrap_or_default();
    assert!(
        before.is_empty(),
        "case nothing_uploaded_before_the_kill (the journal alone holds the objects)"
    );
    let plan = terrane(d, &["plan", "-no-color"]);
    assert_eq!(plan.code, 0, "case plan_after_kill: {}", plan.stderr);
    recovery::check_recovered(
        &std::fs::read(d.join("terraform.tfstate")).unwrap(),
        &seen,
        &plan.stdout,
        d,
        N,
    );
}

#[test]
fn item2_backend_config_file_and_pairs() {
    let dir = temp_dir();
    let d = dir.path();
    write(d, "cli.tfrc", "");
    write(d, "main.tf", &config("\"local\" {}", "one"));
    // A file of key = value lines, then a key=value pair that wins.
    write(
        d,
        "be.hcl",
        "path          = \"from-file.tfstate\"\nworkspace_dir = \"wsdir\"\n",
    );
    ok(
        "init",
        &terrane(
            d,
            &[
                "init",
                "-backend-config=be.hcl",
                "-backend-config=path=pair.tfstate",
                "-no-color",
            ],
        ),
    );
    ok(
        "apply",
        &terrane(d, &["apply", "-auto-approve", "-no-color"]),
    );
    assert!(d.join("pair.tfstate").exists(), "case pair_wins_over_file");
    assert!(
        !d.join("terraform.tfstate").exists(),
        "case default_path_unused"
    );
    ok("new_ws", &terrane(d, &["workspace", "new", "w1"]));
    assert!(
        d.join("wsdir/w1/terraform.tfstate").exists(),
        "case file_setting_used"
    );
    let record = std::fs::read_to_string(d.join(".terraform/terraform.tfstate")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&record).unwrap();
    assert_eq!(
        v["backend"]["config"]["path"], "pair.tfstate",
        "case recorded"
    );
    // A bad file is an error naming it, and nothing is recorded anew.
    write(d, "bad.hcl", "path = var.x\n");
    let o = terrane(
        d,
        &[
            "init",
            "-reconfigure",
            "-backend-config=bad.hcl",
            "-no-color",
        ],
    );
    assert!(
        o.code == 1 && o.stderr.contains("bad.hcl"),
        "case bad_file: {}",
        o.stderr
    );
    let o = terrane(d, &["init", "-backend-config=missing.hcl", "-no-color"]);
    assert!(
        o.code == 1 && o.stderr.contains("missing.hcl"),
        "case missing_file: {}",
        o.stderr
    );
    assert_eq!(
        std::fs::read_to_string(d.join(".terraform/terraform.tfstate")).unwrap(),
        record,
        "case record_unchanged"
    );
}

#[test]
fn item1_backend_and_state_blocks_conflict() {
    let dir = temp_dir();
    write(dir.path(), "cli.tfrc", "");
    write(
        dir.path(),
        "main.tf",
        "terraform {\n  backend \"local\" {}\n  state \"sqlite\" {}\n}\n",
    );
    for args in [&["init", "-no-color"][..], &["plan", "-no-color"][..]] {
        let o = terrane(dir.path(), args);
        assert!(
            o.code == 1 && o.stderr.contains("Conflicting state settings"),
            "case {}: {}",
            args[0],
            o.stderr
        );
    }
}

#[test]
fn item6_terraform_remote_state_over_http() {
    let server = terrane_testkit::httpstate::HttpStateServer::start();
    let producer = temp_dir();
    write(producer.path(), "cli.tfrc", "");
    write(
        producer.path(),
        "main.tf",
        &format!("terraform {{\n  backend \"http\" {{\n    address = \"{}\"\n  }}\n}}\noutput \"name\" {{\n  value = \"over-http\"\n}}\n", server.address()),
    );
    ok(
        "producer_init",
        &terrane(producer.path(), &["init", "-no-color"]),
    );
    ok(
        "producer_apply",
        &terrane(producer.path(), &["apply", "-auto-approve", "-no-color"]),
    );
    let consumer = temp_dir();
    write(consumer.path(), "cli.tfrc", "");
    write(
        consumer.path(),
        "main.tf",
        &format!("data \"terraform_remote_state\" \"p\" {{\n  backend = \"http\"\n  config = {{\n    address = \"{}\"\n  }}\n}}\noutput \"name\" {{\n  value = data.terraform_remote_state.p.outputs.name\n}}\n", server.address()),
    );
    ok(
        "consumer_apply",
        &terrane(consumer.path(), &["apply", "-auto-approve", "-no-color"]),
    );
    let name = terrane(consumer.path(), &["output", "-raw", "name"]);
    assert_eq!(name.stdout, "over-http", "case output_read_over_http");
}

/// Issue 17 item 1: `init -reconfigure` switches to the new backend
/// location without copying the state there, as Terraform does: the old
/// state stays as it was, and the next plan starts from the new, empty
/// location. Both tools run the same steps, each in its own directory.
#[test]
fn item1_reconfigure_switches_location_without_copying() {
    let Some(tf) = terraform() else {
        return;
    };
    // Each tool's run of a command: its exit code and standard output.
    type Run<'a> = &'a dyn Fn(&Path, &[&str]) -> (i32, String);
    let steps = |run: Run, dir: &Path| -> Vec<String> {
        write(dir, "cli.tfrc", "");
        write(
            dir,
            "main.tf",
            &config("\"local\" {\n    path = \"a.tfstate\"\n  }", "one"),
        );
        let mut seen = Vec::new();
        let step = |seen: &mut Vec<String>, name: &str, args: &[&str]| {
            let (code, stdout) = run(dir, args);
            seen.push(format!("{name}: exit {code}"));
            stdout
        };
        step(&mut seen, "init", &["init", "-input=false", "-no-color"]);
        step(
            &mut seen,
            "apply",
            &["apply", "-auto-approve", "-input=false", "-no-color"],
        );
        let before = std::fs::read(dir.join("a.tfstate")).unwrap();
        write(
            dir,
            "main.tf",
            &config("\"local\" {\n    path = \"b.tfstate\"\n  }", "one"),
        );
        step(
            &mut seen,
            "reconfigure",
            &["init", "-reconfigure", "-input=false", "-no-color"],
        );
        seen.push(format!(
            "b.tfstate after reconfigure: {}",
            dir.join("b.tfstate").exists()
        ));
        let plan = step(
            &mut seen,
            "plan",
            &["plan", "-detailed-exitcode", "-input=false", "-no-color"],
        );
        seen.push(format!(
            "plan adds: {}",
            plan.contains("Plan: 1 to add, 0 to change, 0 to destroy.")
        ));
        seen.push(format!(
            "a.tfstate unchanged: {}",
            std::fs::read(dir.join("a.tfstate")).unwrap() == before
        ));
        seen
    };
    let theirs_dir = temp_dir();
    let rc = theirs_dir.path().join("cli.tfrc");
    let theirs = steps(
        &|d, args| {
            let o = tf.run(d, args, &[("TF_CLI_CONFIG_FILE", rc.to_str().unwrap())]);
            (o.code, o.stdout)
        },
        theirs_dir.path(),
    );
    let ours_dir = temp_dir();
    let ours = steps(
        &|d, args| {
            let o = terrane(d, args);
            (o.code, o.stdout)
        },
        ours_dir.path(),
    );
    assert_eq!(
        theirs,
        [
            "init: exit 0",
            "apply: exit 0",
            "reconfigure: exit 0",
            "b.tfstate after reconfigure: false",
            "plan: exit 2",
            "plan adds: true",
            "a.tfstate unchanged: true",
        ],
        "Terraform"
    );
    assert_eq!(ours, theirs, "terrane as Terraform");
}
