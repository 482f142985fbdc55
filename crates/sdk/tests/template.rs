//! examples/provider-template builds on its own (issue 23 item 4): copied
//! out of the repository into a temporary directory, with its terrane-sdk
//! dependency pointed at this checkout and the workspace's Cargo.lock, it
//! builds offline (from the local registry cache) and its own harness test
//! passes. So it cannot silently depend on the workspace.

use std::path::{Path, PathBuf};
use std::process::Command;

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if e.file_type().unwrap().is_dir() {
            if e.file_name() != "target" {
                copy_tree(&src, &dst);
            }
        } else {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

#[test]
fn item4_provider_template_builds_outside_the_workspace() {
    let root = terrane_testkit::repo_root();
    let tmp = terrane_testkit::temp_dir();
    let crate_dir = tmp.path().join("my-provider");
    copy_tree(&root.join("examples/provider-template"), &crate_dir);
    let manifest = crate_dir.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let sdk = root.join("crates/sdk");
    let line = "terrane-sdk = { path = \"../../crates/sdk\" }";
    assert!(text.contains(line), "case template_names_the_sdk\n{text}");
    let text = text.replace(
        line,
        &format!("terrane-sdk = {{ path = {:?} }}", sdk.display()),
    );
    std::fs::write(&manifest, text).unwrap();
    std::fs::copy(root.join("Cargo.lock"), crate_dir.join("Cargo.lock")).unwrap();
    // A target directory of its own, kept between runs (the workspace's is
    // locked by the `cargo test` running this test).
    let exe = std::env::current_exe().unwrap();
    let target: PathBuf = exe.ancestors().nth(3).unwrap().join("provider-template");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["test", "--offline", "--quiet"])
        .current_dir(&crate_dir)
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "case template_builds_and_tests\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("1 passed"),
        "case template_test_ran\n{stdout}"
    );
    let bin = target.join("debug/terraform-provider-notes");
    assert!(
        bin.exists(),
        "case template_binary_built: {}",
        bin.display()
    );
}
