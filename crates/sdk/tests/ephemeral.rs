//! SDK ephemeral resources under real Terraform (issue 21 item 2): the
//! blocks fixture's `blocks_token` asks to be renewed every 400 ms and
//! journals each call; a provisioner that sleeps keeps it open, so
//! Terraform must open, renew and close it in that order, over
//! protocol 5 and over 6.

const CONFIG: &str = r#"
terraform {
  required_providers {
    blocks = { source = "example.com/terrane/blocks" }
  }
}

provider "blocks" {
  features {}
}

ephemeral "blocks_token" "t" {
  name           = "db"
  renew_after_ms = 400
  journal        = "${path.cwd}/journal.out"
}

resource "terraform_data" "wait" {
  input = "x"
  provisioner "local-exec" {
    command = "sleep 2; test -n '${ephemeral.blocks_token.t.token}'"
  }
}
"#;

/// The journal's lines with repeated renewals folded into one, since how
/// many happen depends on timing.
fn calls(journal: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for l in journal.lines() {
        if out.last().is_none_or(|p| p != l || !l.starts_with("renew")) {
            out.push(l.to_string());
        }
    }
    out
}

#[test]
fn item2_open_renew_close_in_order_under_terraform() {
    let Some(tf) = terrane_testkit::terraform() else {
        return;
    };
    let fixture = terrane_testkit::fixture("terrane-blocks-fixture");
    for protocol in ["5", "6"] {
        let dir = terrane_testkit::temp_dir();
        let d = dir.path();
        let rc = terrane_testkit::dev_overrides(d, &[("example.com/terrane/blocks", &fixture)]);
        std::fs::write(d.join("main.tf"), CONFIG).unwrap();
        let env = [
            ("TF_CLI_CONFIG_FILE", rc.as_str()),
            ("TERRANE_PLUGIN_PROTOCOL", protocol),
        ];
        let case = format!("protocol {protocol}");
        let plan = tf.run(d, &["plan", "-input=false", "-no-color"], &env);
        assert_eq!(
            plan.code, 0,
            "{case}: plan\n{}\n{}",
            plan.stdout, plan.stderr
        );
        let journal = std::fs::read_to_string(d.join("journal.out")).unwrap_or_default();
        assert_eq!(calls(&journal), ["open db", "close db"], "{case}: plan");
        std::fs::remove_file(d.join("journal.out")).unwrap();
        let apply = tf.run(
            d,
            &["apply", "-auto-approve", "-input=false", "-no-color"],
            &env,
        );
        assert_eq!(
            apply.code, 0,
            "{case}: apply\n{}\n{}",
            apply.stdout, apply.stderr
        );
        let journal = std::fs::read_to_string(d.join("journal.out")).unwrap_or_default();
        // `apply` plans first (open, close), then applies: opened again
        // and renewed while the provisioner holds it.
        assert_eq!(
            calls(&journal),
            ["open db", "close db", "open db", "renew db", "close db"],
            "{case}: apply renews while the provisioner holds the token"
        );
        let state = std::fs::read_to_string(d.join("terraform.tfstate")).unwrap();
        assert!(
            !state.contains("token-for-db"),
            "{case}: the token is in the state"
        );
    }
}
