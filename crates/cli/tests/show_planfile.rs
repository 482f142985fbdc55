//! `show PLANFILE` as text (issue 15 item 5): a saved plan carries no
//! schema, so `show` loads the providers' schemas as Terraform's does, and
//! nested blocks print as blocks (`network {`, `# (1 unchanged block
//! hidden)`), line for line as `terraform show PLANFILE` prints them. Both
//! tools run the blocks fixture provider (`terrane-blocks-fixture`).

use std::path::Path;
use terrane_testkit::{isolated, Out};

const HEAD: &str = r#"terraform {
  required_providers {
    blocks = { source = "example.com/terrane/blocks" }
  }
}

provider "blocks" {
  features {}
}
"#;

const CREATE: &str = r#"resource "blocks_server" "s" {
  name = "web"
  network {
    cidr = "10.0.0.0/16"
    subnet {
      cidr = "10.0.1.0/24"
      zone = "a"
    }
  }
  disk {
    size  = 10
    label = "root"
  }
  disk {
    size  = 20
    label = "data"
  }
  rule {
    port     = 80
    protocol = "tcp"
  }
  label "env" { value = "prod" }
}
"#;

/// One block changed, the others unchanged (hidden with counts).
const UPDATE: &str = r#"resource "blocks_server" "s" {
  name = "web"
  network {
    cidr = "10.0.0.0/16"
    subnet {
      cidr = "10.0.1.0/24"
      zone = "a"
    }
  }
  disk {
    size  = 10
    label = "root"
  }
  disk {
    size  = 30
    label = "data"
  }
  rule {
    port     = 80
    protocol = "tcp"
  }
  label "env" { value = "prod" }
}
"#;

fn terrane(dir: &Path, rc: &str, args: &[&str]) -> Out {
    isolated(env!("CARGO_BIN_EXE_terrane"), dir)
        .args(args)
        .env("TF_CLI_CONFIG_FILE", rc)
        .env("NO_COLOR", "1")
        .output()
        .expect("terrane runs")
        .into()
}

/// The changes of a plan's text: from the first resource heading to the
/// `Plan:` line, with the tool's name made one.
fn changes(text: &str) -> String {
    let start = text.find("  # ").unwrap_or(text.len());
    let body = &text[start..];
    let end = body.find("\nPlan:").map_or(body.len(), |i| {
        i + body[i + 1..].find('\n').map_or(body.len() - i, |j| j + 1)
    });
    body[..end].replace("Terraform", "terrane")
}

/// `plan -out=p` and `show -no-color p` of `config` for one tool (after
/// applying `before`, if any): the shown changes, and the changes the
/// plan command itself printed.
/// Runs one tool's command in a directory: exit code and output.
type Runner<'a> = &'a dyn Fn(&Path, &[&str]) -> (i32, String);

fn shown(run: Runner, before: Option<&str>, config: &str) -> (String, String) {
    let dir = terrane_testkit::temp_dir();
    let d = dir.path();
    std::fs::write(
        d.join("main.tf"),
        format!("{HEAD}{}", before.unwrap_or(config)),
    )
    .unwrap();
    let (code, out) = run(d, &["init", "-no-color", "-input=false"]);
    assert_eq!(code, 0, "init:\n{out}");
    if before.is_some() {
        let (code, out) = run(d, &["apply", "-no-color", "-auto-approve", "-input=false"]);
        assert_eq!(code, 0, "apply:\n{out}");
    }
    std::fs::write(d.join("main.tf"), format!("{HEAD}{config}")).unwrap();
    let (code, planned) = run(d, &["plan", "-no-color", "-input=false", "-out=p"]);
    assert_eq!(code, 0, "plan:\n{planned}");
    let (code, out) = run(d, &["show", "-no-color", "p"]);
    assert_eq!(code, 0, "show:\n{out}");
    (changes(&out), changes(&planned))
}

fn check(name: &str, before: Option<&str>, config: &str, wants: &[&str]) {
    let fixture = terrane_testkit::fixture("terrane-blocks-fixture");
    let rcdir = terrane_testkit::temp_dir();
    let rc =
        terrane_testkit::dev_overrides(rcdir.path(), &[("example.com/terrane/blocks", &fixture)]);
    let ours = |d: &Path, args: &[&str]| {
        let o = terrane(d, &rc, args);
        (o.code, format!("{}{}", o.stdout, o.stderr))
    };
    let (show, plan) = shown(&ours, before, config);
    for want in wants {
        assert!(
            show.contains(want),
            "case {name}: show lacks {want:?}:\n{show}"
        );
    }
    assert_eq!(show, plan, "case {name}: show PLANFILE differs from plan");
    let Some(tf) = terrane_testkit::terraform() else {
        return;
    };
    let theirs = |d: &Path, args: &[&str]| {
        let o = tf.run(d, args, &[("TF_CLI_CONFIG_FILE", rc.as_str())]);
        (o.code, format!("{}{}", o.stdout, o.stderr))
    };
    let (tf_show, _) = shown(&theirs, before, config);
    assert_eq!(
        show, tf_show,
        "case {name}: terrane show PLANFILE differs from Terraform's"
    );
}

#[test]
fn item3_show_planfile_prints_blocks_as_blocks() {
    check(
        "create",
        None,
        CREATE,
        &[
            "      + network {\n",
            "          + subnet {\n",
            "      + disk {\n",
            "      + rule {\n",
            "      + label \"env\" {\n",
        ],
    );
    check(
        "update_hides_unchanged_blocks",
        Some(CREATE),
        UPDATE,
        &["      ~ disk {\n", "unchanged blocks hidden"],
    );
}
