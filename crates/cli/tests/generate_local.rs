//! `plan -generate-config-out=FILE` for the local provider (issue 20
//! leftovers, item 3), side by side with real Terraform driving the
//! plugin build of the same provider code.

use std::path::Path;
use terrane_testkit::{built_binary, isolated, temp_dir, terraform, Out};

const CONFIG: &str = "terraform {\n  required_providers {\n    local = { source = \"hashicorp/local\" }\n  }\n}\n\nimport {\n  to = local_file.f\n  id = \"x.txt\"\n}\n";

fn run(program: &Path, dir: &Path, args: &[&str], cli: &Path) -> Out {
    let mut cmd = isolated(program, dir);
    cmd.args(args)
        .env("TF_CLI_CONFIG_FILE", cli)
        .env("TF_IN_AUTOMATION", "1")
        .stdin(std::process::Stdio::null());
    cmd.output().expect("the program runs").into()
}

/// An import of a local_file without configuration: terrane plans the
/// import and writes the block Terraform writes (its header naming the
/// tool and the import id, the arguments sorted and aligned, unset ones
/// `null`), and leaves the file it imported untouched.
#[test]
fn item3_generate_config_out_for_local_file_as_in_terraform() {
    let ours = temp_dir();
    std::fs::write(ours.path().join("main.tf"), CONFIG).unwrap();
    std::fs::write(ours.path().join("x.txt"), "hi\n").unwrap();
    let cli = ours.path().join("cli.tfrc");
    std::fs::write(&cli, "").unwrap();
    let args = ["plan", "-no-color", "-generate-config-out=generated.tf"];
    let t = run(
        Path::new(env!("CARGO_BIN_EXE_terrane")),
        ours.path(),
        &args,
        &cli,
    );
    assert_eq!(t.code, 0, "case plans: {}{}", t.stdout, t.stderr);
    assert!(
        t.stdout
            .contains("Plan: 1 to import, 0 to add, 0 to change, 0 to destroy."),
        "case plans_import: {}",
        t.stdout
    );
    let our_file = std::fs::read_to_string(ours.path().join("generated.tf")).unwrap();
    let want_block = "# __generated__ by terrane from \"x.txt\"\nresource \"local_file\" \"f\" {\n  content              = \"hi\\n\"\n  content_base64       = null\n  directory_permission = \"0755\"\n  file_permission      = \"0644\"\n  filename             = \"x.txt\"\n  source               = null\n}\n";
    assert!(our_file.contains(want_block), "case block: {our_file}");
    assert_eq!(
        std::fs::read_to_string(ours.path().join("x.txt")).unwrap(),
        "hi\n",
        "case file_untouched"
    );
    let Some(tf) = terraform() else { return };
    let theirs = temp_dir();
    std::fs::write(theirs.path().join("main.tf"), CONFIG).unwrap();
    std::fs::write(theirs.path().join("x.txt"), "hi\n").unwrap();
    let local = built_binary("terrane-provider-local", "terraform-provider-local");
    let rc = terrane_testkit::dev_overrides(
        &theirs.path().join("plugins"),
        &[("hashicorp/local", &local)],
    );
    let o = run(Path::new(&tf.program), theirs.path(), &args, Path::new(&rc));
    assert_eq!(o.code, 0, "case terraform_plans: {}", o.stderr);
    let their_file = std::fs::read_to_string(theirs.path().join("generated.tf")).unwrap();
    assert_eq!(
        our_file.replace("by terrane", "by Terraform"),
        their_file,
        "case same_file"
    );
}
