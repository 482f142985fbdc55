//! The configuration front end: what a module holds, the references each
//! expression makes, and a table of malformed configurations, each giving a
//! diagnostic at the right file:line:column.

use terrane_config::{parse_str, Subject};

const GOOD: &str = r#"
terraform {
  required_version = ">= 1.5"
  required_providers {
    random = { source = "terrane/random", version = "~> 0.1" }
  }
}

provider "random" {}
provider "random" {
  alias = "second"
}

variable "names" {
  type      = list(string)
  default   = ["a", "b"]
  sensitive = false
}

locals {
  prefix = "app-${var.env}"
  upper  = [for n in var.names : upper(n) if n != local.skip]
}

resource "random_pet" "p" {
  for_each  = toset(var.names)
  prefix    = "${local.prefix}-${each.key}"
  lifecycle {
    create_before_destroy = true
    ignore_changes        = [length]
  }
}

resource "terraform_data" "t" {
  count = 2
  input = [random_pet.p["a"].id, count.index, data.local_file.f.content, module.m.out, path.module]
}

data "local_file" "f" {
  filename = "${path.module}/x.txt"
}

module "m" {
  source = "./child"
  in     = terraform_data.t[0].output
}

output "pets" {
  value     = { for k, v in random_pet.p : k => v.id }
  sensitive = true
}
"#;

#[test]
fn a_module_is_read_with_references() {
    let (m, diags) = parse_str("main.tf", GOOD);
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(
        m.required_providers["random"].source.as_deref(),
        Some("terrane/random")
    );
    assert_eq!(m.providers.len(), 2);
    assert_eq!(m.providers[1].alias.as_deref(), Some("second"));
    assert_eq!(m.resources.len(), 3);
    let pet = &m.resources[0];
    assert!(pet.for_each.is_some() && pet.lifecycle.create_before_destroy.is_some());
    assert_eq!(
        pet.range.as_ref().map(|r| r.start.line),
        Some(25),
        "case resource_range_line"
    );
    let refs =
        |e: &terrane_config::Expr| e.refs.iter().map(|r| r.subject.clone()).collect::<Vec<_>>();
    assert_eq!(
        refs(&pet.attributes["prefix"]),
        vec![Subject::Local("prefix".into()), Subject::EachKey],
        "case template_refs"
    );
    assert_eq!(
        refs(&m.resources[1].attributes["input"]),
        vec![
            Subject::Resource {
                data: false,
                ty: "random_pet".into(),
                name: "p".into()
            },
            Subject::CountIndex,
            Subject::Resource {
                data: true,
                ty: "local_file".into(),
                name: "f".into()
            },
            Subject::Module("m".into()),
            Subject::Path("module".into()),
        ],
        "case reference_kinds"
    );
    assert_eq!(
        refs(&m.locals["upper"]),
        vec![Subject::Var("names".into()), Subject::Local("skip".into())],
        "case for_iterator_not_a_reference"
    );
    assert_eq!(
        refs(&m.outputs["pets"].value.clone().unwrap()),
        vec![Subject::Resource {
            data: false,
            ty: "random_pet".into(),
            name: "p".into()
        }]
    );
    assert!(m.outputs["pets"].sensitive);
    assert_eq!(m.module_calls["m"].source.as_deref(), Some("./child"));
    assert!(
        m.variables["names"]
            .ty
            .as_ref()
            .is_some_and(|t| t.refs.is_empty()),
        "case type_constraint_has_no_refs"
    );
    assert_eq!(
        m.variables["names"]
            .constraint
            .as_ref()
            .map(|c| c.ty.to_string())
            .as_deref(),
        Some("list(string)"),
        "case type_constraint_parsed"
    );
}

#[track_caller]
fn check(case: &str, src: &str, want: &str) {
    let (_, diags) = parse_str("bad.tf", src);
    let got: Vec<String> = diags
        .iter()
        .map(|d| {
            format!(
                "{}:{}: {}",
                d.range.as_ref().map(|r| r.start.line).unwrap_or(0),
                d.range.as_ref().map(|r| r.start.col).unwrap_or(0),
                d.summary
            )
        })
        .collect();
    assert!(
        got.iter().any(|g| g == want),
        "case {case}: want {want:?}, got {got:?}"
    );
    assert!(
        diags.iter().all(|d| d.to_string().starts_with("bad.tf:")),
        "case {case}: diagnostics name the file"
    );
}

#[test]
fn malformed_configurations() {
    check(
        "unclosed_block",
        "resource \"a\" \"b\" {\n  x = 1\n",
        "1:18: Unclosed configuration block",
    );
    check(
        "bad_token",
        "resource \"a\" \"b\" {\n  x = = 1\n}\n",
        "2:7: Invalid expression",
    );
    check(
        "missing_labels",
        "resource \"a\" {\n}\n",
        "1:14: Missing name for resource",
    );
    check(
        "too_many_labels",
        "variable \"a\" \"b\" {\n}\n",
        "1:14: Extraneous label for variable",
    );
    check(
        "invalid_name",
        "resource \"aws\" \"1bad\" {\n}\n",
        "1:16: Invalid name",
    );
    check(
        "duplicate_resource",
        "resource \"a\" \"b\" {}\nresource \"a\" \"b\" {}\n",
        "2:1: Duplicate resource \"a\" configuration",
    );
    check(
        "duplicate_variable",
        "variable \"v\" {}\n\nvariable \"v\" {}\n",
        "3:1: Duplicate variable declaration",
    );
    check(
        "duplicate_output",
        "output \"o\" {\n  value = 1\n}\noutput \"o\" {\n  value = 2\n}\n",
        "4:1: Duplicate output definition",
    );
    check(
        "duplicate_local",
        "locals {\n  a = 1\n}\nlocals {\n  a = 2\n}\n",
        "5:3: Duplicate local value definition",
    );
    check(
        "duplicate_provider",
        "provider \"p\" {}\nprovider \"p\" {}\n",
        "2:1: Duplicate provider configuration",
    );
    check(
        "duplicate_module",
        "module \"m\" {\n  source = \"./a\"\n}\nmodule \"m\" {\n  source = \"./b\"\n}\n",
        "4:1: Duplicate module call",
    );
    check(
        "count_and_for_each",
        "resource \"a\" \"b\" {\n  count    = 1\n  for_each = {}\n}\n",
        "3:3: Invalid combination of \"count\" and \"for_each\"",
    );
    check(
        "unknown_block",
        "resorce \"a\" \"b\" {}\n",
        "1:1: Unsupported block type",
    );
    check(
        "top_level_attribute",
        "x = 1\n",
        "1:1: Unsupported argument",
    );
    check(
        "output_without_value",
        "output \"o\" {\n}\n",
        "1:12: Missing required argument",
    );
    check(
        "module_without_source",
        "module \"m\" {\n}\n",
        "1:12: Missing required argument",
    );
    check(
        "bare_var",
        "output \"o\" {\n  value = var\n}\n",
        "2:11: Invalid reference",
    );
    check(
        "bare_local",
        "output \"o\" {\n  value = local\n}\n",
        "2:11: Invalid reference",
    );
    check(
        "resource_without_name",
        "output \"o\" {\n  value = aws_instance\n}\n",
        "2:11: Invalid reference",
    );
    check(
        "data_without_name",
        "output \"o\" {\n  value = data.local_file\n}\n",
        "2:11: Invalid reference",
    );
    check(
        "count_wrong_attr",
        "output \"o\" {\n  value = count.value\n}\n",
        "2:11: Invalid reference",
    );
    check(
        "each_wrong_attr",
        "output \"o\" {\n  value = each.item\n}\n",
        "2:11: Invalid reference",
    );
    check(
        "path_wrong_attr",
        "output \"o\" {\n  value = path.home\n}\n",
        "2:11: Invalid reference",
    );
    check(
        "ref_in_template",
        "output \"o\" {\n  value = \"x-${var}\"\n}\n",
        "2:16: Invalid reference",
    );
    check(
        "ref_in_function_arg",
        "output \"o\" {\n  value = upper(local)\n}\n",
        "2:17: Invalid reference",
    );
    check(
        "lifecycle_unknown_arg",
        "resource \"a\" \"b\" {\n  lifecycle {\n    keep = true\n  }\n}\n",
        "3:5: Unsupported argument",
    );
    check(
        "variable_unknown_arg",
        "variable \"v\" {\n  colour = \"red\"\n}\n",
        "2:3: Unsupported argument",
    );
    check(
        "bad_required_providers",
        "terraform {\n  required_providers {\n    r = 5\n  }\n}\n",
        "3:9: Invalid required_providers object",
    );
    check(
        "unterminated_string",
        "variable \"v\" {\n  default = \"abc\n}\n",
        "2:17: Unterminated template string",
    );
    check(
        "bad_type_constraint",
        "variable \"v\" {\n  type = lst(string)\n}\n",
        "2:10: Invalid type specification",
    );
    check(
        "unicode_columns_count_chars",
        "locals {\n  é = 1\n}\noutput \"ö\" {\n  value = var\n}\n",
        "5:11: Invalid reference",
    );
}

#[test]
fn loading_a_directory_reports_every_file() {
    let dir = terrane_testkit::temp_dir();
    std::fs::write(dir.path().join("a.tf"), "variable \"x\" {}\n").unwrap();
    std::fs::write(
        dir.path().join("b.tf"),
        "variable \"x\" {}\nresource \"r\" {\n}\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("notes.txt"), "not configuration").unwrap();
    let (m, diags) = terrane_config::load_module(dir.path());
    assert_eq!(m.files.len(), 2, "case only_tf_files");
    assert_eq!(diags.len(), 2, "case all_errors_reported: {diags:?}");
    assert!(
        diags[0]
            .to_string()
            .contains("b.tf:1:1: Error: Duplicate variable declaration"),
        "{}",
        diags[0]
    );
}

/// Inputs the fuzzer found crashing, kept as cases.
#[test]
fn fuzz_findings_do_not_panic() {
    let cases: &[(&str, &[u8])] = &[
        // A parser error offset inside a multi-byte character.
        ("error_offset_inside_char", b"ou= { for k, v\xc4\x96"),
    ];
    for (case, bytes) in cases {
        let text = String::from_utf8_lossy(bytes);
        for name in ["f.tf", "f.tf.json"] {
            let (_, diags) = parse_str(name, &text);
            assert!(!diags.is_empty(), "case {case}");
        }
    }
}

#[test]
fn arbitrary_input_never_panics() {
    let mut seed: u64 = 0x9e3779b97f4a7c15;
    let alphabet = b"resource \"{}[]()=.,:?!*$%<>-\n\t0123456789abcxyz#/\\~";
    for _ in 0..3000 {
        let len = (seed % 80) as usize;
        let text: String = (0..len)
            .map(|_| {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                alphabet[(seed >> 33) as usize % alphabet.len()] as char
            })
            .collect();
        let _ = parse_str("fuzz.tf", &text);
        seed = seed.rotate_left(7) ^ len as u64;
    }
}

#[test]
fn module_trees_load_local_sources() {
    let dir = terrane_testkit::temp_dir();
    let d = dir.path();
    std::fs::create_dir_all(d.join("modules/net")).unwrap();
    std::fs::create_dir_all(d.join("modules/loop")).unwrap();
    std::fs::write(d.join("main.tf"), "module \"net\" {\n  source = \"./modules/net\"\n  cidr   = \"10.0.0.0/16\"\n}\nmodule \"far\" {\n  source = \"hashicorp/consul/aws\"\n}\nmodule \"gone\" {\n  source = \"./missing\"\n}\nmodule \"loop\" {\n  source = \"./modules/loop\"\n}\n").unwrap();
    std::fs::write(
        d.join("modules/net/main.tf"),
        "variable \"cidr\" {\n  type = string\n}\noutput \"id\" {\n  value = var.cidr\n}\n",
    )
    .unwrap();
    std::fs::write(
        d.join("modules/loop/main.tf"),
        "module \"again\" {\n  source = \"../loop\"\n}\n",
    )
    .unwrap();
    let (config, diags) = terrane_config::load_config(d, &terrane_config::statics::LiteralsOnly);
    assert_eq!(
        config.children["net"].module.outputs.len(),
        1,
        "case child_loaded"
    );
    assert!(config.children["net"].module.variables.contains_key("cidr"));
    let text: Vec<String> = diags.iter().map(ToString::to_string).collect();
    assert!(
        text.iter()
            .any(|t| t.contains("main.tf:5:1: Error: Module not installed")),
        "case remote_source: {text:?}"
    );
    assert!(
        text.iter()
            .any(|t| t.contains("main.tf:8:1: Error: Module not found")),
        "case missing_dir: {text:?}"
    );
    assert!(
        text.iter().any(|t| t.contains("Module recursion")),
        "case recursion: {text:?}"
    );
    assert_eq!(diags.len(), 3, "{text:?}");
}

const FULL: &str = r#"
terraform {
  state "postgres" {
    url                = "postgres://localhost/terrane"
    schema             = "infra"
    encryption_key_env = "TERRANE_STATE_KEY"
  }
}

variable "name" {
  type      = string
  ephemeral = true
  validation {
    condition     = length(var.name) > 2
    error_message = "Too short."
  }
}

resource "terraform_data" "a" {
  count    = 2
  provider = terraform.west
  input    = var.name
  setting {
    x = local.x
  }
  dynamic "rule" {
    for_each = var.rules
    iterator = r
    labels   = [r.key]
    content {
      port = r.value.port
      dynamic "cidr" {
        for_each = r.value.cidrs
        content {
          block = cidr.value
        }
      }
    }
  }
  lifecycle {
    replace_triggered_by = [terraform_data.b.id]
    precondition {
      condition     = var.name != ""
      error_message = "empty"
    }
    postcondition {
      condition     = self.output != null
      error_message = "no output"
    }
  }
}

module "m" {
  source     = "example/child/aws"
  version    = "1.0"
  providers  = { aws = aws.west }
  depends_on = [terraform_data.a]
}

moved {
  from = terraform_data.old
  to   = terraform_data.a
}

import {
  for_each = toset(["x"])
  to       = terraform_data.b[each.key]
  id       = each.value
  provider = terraform.west
}

removed {
  from = terraform_data.gone
  lifecycle {
    destroy = false
  }
}

check "health" {
  data "http" "h" {
    url = "https://example.com"
  }
  assert {
    condition     = data.http.h.status_code == 200
    error_message = "down"
  }
}

output "o" {
  value = 1
  precondition {
    condition     = var.name != ""
    error_message = "empty"
  }
}
"#;

#[test]
fn every_block_type_has_a_typed_model() {
    let (m, diags) = parse_str("full.tf", FULL);
    assert!(diags.is_empty(), "{diags:?}");
    let st = m.state.as_ref().expect("state settings");
    assert_eq!(
        st.backend,
        terrane_config::StateBackend::Postgres,
        "case state_backend"
    );
    assert_eq!(st.encryption_key_env.as_deref(), Some("TERRANE_STATE_KEY"));
    let v = &m.variables["name"];
    assert!(v.ephemeral && v.validations.len() == 1, "case validation");
    let r = m
        .resource(false, "terraform_data", "a")
        .expect("indexed lookup");
    assert_eq!(
        r.provider_ref
            .as_ref()
            .map(|p| (p.name.as_str(), p.alias.as_deref())),
        Some(("terraform", Some("west"))),
        "case provider_ref"
    );
    assert_eq!(
        r.lifecycle.preconditions.len() + r.lifecycle.postconditions.len(),
        2,
        "case conditions"
    );
    assert_eq!(r.lifecycle.replace_triggered_by_entries.len(), 1);
    assert_eq!(r.body.len(), 2, "case nested_body");
    assert_eq!(r.blocks.len(), 2, "case raw_blocks_kept");
    let dynblock = &r.body[1];
    let spec = dynblock.dynamic.as_ref().expect("dynamic");
    assert_eq!(
        (dynblock.type_name.as_str(), spec.iterator.as_str()),
        ("rule", "r"),
        "case dynamic_iterator"
    );
    assert!(
        spec.labels[0].refs.is_empty(),
        "case iterator_bound_in_labels"
    );
    assert!(
        dynblock.attributes["port"].refs.is_empty(),
        "case iterator_not_a_reference"
    );
    assert!(
        dynblock.blocks[0].attributes["block"].refs.is_empty(),
        "case nested_default_iterator"
    );
    assert_eq!(spec.for_each.refs.len(), 1, "case for_each_refs");
    let call = &m.module_calls["m"];
    assert_eq!(call.version.as_deref(), Some("1.0"));
    assert_eq!(
        call.providers["aws"].alias.as_deref(),
        Some("west"),
        "case module_providers"
    );
    assert!(call.depends_on.is_some() && !call.inputs.contains_key("providers"));
    assert_eq!(
        m.moved[0].from_addr.as_deref(),
        Some("terraform_data.old"),
        "case moved"
    );
    assert_eq!(
        m.imports[0].to_addr.as_deref(),
        Some("terraform_data.b[each.key]"),
        "case import"
    );
    assert!(!m.removed[0].destroy, "case removed");
    assert_eq!(
        (m.checks[0].data.len(), m.checks[0].asserts.len()),
        (1, 1),
        "case check"
    );
    assert_eq!(m.outputs["o"].preconditions.len(), 1);
    assert_eq!(m.other_blocks.len(), 4, "case other_blocks_kept");
}

/// The same module in both syntaxes gives the same model.
#[test]
fn json_syntax_gives_the_same_model() {
    let native = "variable \"n\" {\n  type = list(string)\n}\nlocals {\n  p = \"app-${var.env}\"\n}\nresource \"terraform_data\" \"t\" {\n  count      = 2\n  provider   = terraform.west\n  depends_on = [terraform_data.u]\n  input      = { name = \"x-${count.index}\", n = [1, true, null] }\n  lifecycle {\n    ignore_changes = [input]\n  }\n}\n";
    let json = r#"{
  "//": "a comment",
  "variable": { "n": { "type": "list(string)" } },
  "locals": { "p": "app-${var.env}" },
  "resource": {
    "terraform_data": {
      "t": [{
        "count": 2,
        "provider": "terraform.west",
        "depends_on": ["terraform_data.u"],
        "input": { "name": "x-${count.index}", "n": [1, true, null] },
        "lifecycle": { "ignore_changes": ["input"] }
      }]
    }
  }
}"#;
    let (a, da) = parse_str("main.tf", native);
    let (b, db) = parse_str("main.tf.json", json);
    assert!(da.is_empty() && db.is_empty(), "{da:?} {db:?}");
    let subjects =
        |e: &terrane_config::Expr| e.refs.iter().map(|r| r.subject.clone()).collect::<Vec<_>>();
    assert_eq!(
        subjects(&a.locals["p"]),
        subjects(&b.locals["p"]),
        "case template_refs"
    );
    let (ra, rb) = (&a.resources[0], &b.resources[0]);
    assert_eq!(
        subjects(&ra.attributes["input"]),
        subjects(&rb.attributes["input"]),
        "case object_refs"
    );
    assert_eq!(
        ra.provider_ref.as_ref().map(|p| &p.alias),
        rb.provider_ref.as_ref().map(|p| &p.alias),
        "case provider_expression_mode"
    );
    assert_eq!(
        subjects(ra.depends_on.as_ref().unwrap()),
        subjects(rb.depends_on.as_ref().unwrap()),
        "case depends_on_expression_mode"
    );
    assert_eq!(
        a.variables["n"]
            .constraint
            .as_ref()
            .map(|c| c.ty.to_string()),
        b.variables["n"]
            .constraint
            .as_ref()
            .map(|c| c.ty.to_string()),
        "case type_expression_mode"
    );
    assert!(rb.from_json && rb.lifecycle.ignore_changes.is_some());
    // Ranges point into the JSON file: `count.index` inside the template.
    let r = &rb.attributes["input"].refs[0];
    let at = r.range.as_ref().map(|r| (r.start.line, r.start.col));
    assert_eq!(at, Some((11, 33)), "case json_ranges");
}

#[test]
fn json_escapes_keep_ranges() {
    let json = "{\n  \"locals\": {\n    \"a\": \"\\/x\\/${var.nope}\"\n  }\n}\n";
    let (m, diags) = parse_str("e.tf.json", json);
    assert!(diags.is_empty(), "{diags:?}");
    let r = m.locals["a"].refs[0].range.as_ref().unwrap();
    assert_eq!((r.start.line, r.start.col), (3, 18), "case escape_shift");
}

/// In HCL's JSON syntax a string read as an expression is decoded first,
/// so a keyed provider reference may quote its key with escapes; the
/// expression's positions still point into the file, after the escapes.
#[test]
fn json_expression_strings_with_escapes() {
    struct Case {
        name: &'static str,
        provider: &'static str,
        /// The reference's alias and key text, or the error summary.
        want: Result<(&'static str, &'static str), &'static str>,
    }
    let cases = [
        Case {
            name: "quoted_key",
            provider: r#""random.by[\"a\"]""#,
            want: Ok(("by", "\"a\"")),
        },
        Case {
            name: "unicode_escape",
            provider: r#""random.by[\"\u00e9\"]""#,
            want: Ok(("by", "\"é\"")),
        },
        Case {
            name: "each_key",
            provider: r#""random.by[each.key]""#,
            want: Ok(("by", "each.key")),
        },
        Case {
            name: "bad_escape",
            provider: r#""random.by[\q]""#,
            want: Err("Invalid escape sequence"),
        },
    ];
    let check = |c: &Case| {
        let json = format!(
            "{{\n  \"resource\": {{\n    \"random_id\": {{\n      \"r\": {{\n        \"provider\": {},\n        \"byte_length\": 2\n      }}\n    }}\n  }}\n}}\n",
            c.provider
        );
        let (m, diags) = parse_str("p.tf.json", &json);
        match c.want {
            Ok((alias, key)) => {
                assert!(diags.is_empty(), "case {}: {diags:?}", c.name);
                let p = m.resources[0].provider_ref.as_ref().expect("a provider");
                assert_eq!(p.alias.as_deref(), Some(alias), "case {}", c.name);
                let k = p.key.as_ref().expect("a key");
                let r = k.range.as_ref().unwrap();
                assert_eq!(k.expr.to_string().trim(), key, "case {}: key text", c.name);
                assert_eq!(r.start.line, 5, "case {}: key line", c.name);
            }
            Err(summary) => assert!(
                diags.iter().any(|d| d.summary == summary),
                "case {}: {diags:?}",
                c.name
            ),
        }
    };
    for c in &cases {
        check(c);
    }
}
