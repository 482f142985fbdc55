//! Never a silent empty state (issue 17 item 1): a Terraform backend block
//! is an error at its line for every command that uses state, and a
//! Terraform state file next to the configuration stops plan and apply
//! until it is moved into terrane's store, which `state push` does with
//! nothing changed: the next plan finds no changes.

use std::path::Path;
use terrane_testkit::{isolated, temp_dir, terraform, Out};

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
            "s3",
            "terraform {\n  backend \"s3\" {\n    bucket = \"b\"\n    key    = \"k\"\n  }\n}\n",
        ),
        ("local", "terraform {\n  backend \"local\" {}\n}\n"),
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
            o.stderr.contains("terrane state push terraform.tfstate"),
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
