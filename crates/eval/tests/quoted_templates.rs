//! Quoted-string templates keep HCL's escapes inside `%{if}`/`%{for}`
//! directives, and strip markers trim the escaped newlines next to them
//! (issue 13 item 5; results checked against Terraform 1.x, also in the
//! differential corpus).

use std::path::Path;
use terrane_eval::{default_ctx, eval_str, MapScope};

fn check(name: &str, src: &str, want: &str) {
    let (v, diags) = eval_str("t.tf", src, &MapScope::new(), &default_ctx(Path::new(".")));
    assert!(diags.is_empty(), "{name}: {diags:?}");
    assert_eq!(v.as_str(), Some(want), "{name}");
}

#[test]
fn item5_quoted_template_escapes_inside_directives() {
    let cases = [
        (
            "if_body_newlines_stripped",
            r#""a\n%{ if true ~}\n  b\n%{~ endif }\nc\n""#,
            "a\nb\nc\n",
        ),
        (
            "for_body_newlines_stripped",
            r#""x\n  %{~ for v in [1, 2] ~}\n  ${v}\n  %{~ endfor ~}\ny\n""#,
            "x12y\n",
        ),
        (
            "escapes_in_if_body",
            r#""%{ if true }\t\"q\"\\ \u00e9%{ else }-%{ endif }""#,
            "\t\"q\"\\ \u{e9}",
        ),
        (
            "escapes_in_else_body",
            r#""%{ if false }-%{ else }1\n2%{ endif }""#,
            "1\n2",
        ),
        (
            "top_level_unchanged",
            r#""a\tb $${x} %%{y}""#,
            "a\tb ${x} %{y}",
        ),
    ];
    for (name, src, want) in cases {
        check(name, src, want);
    }
}
