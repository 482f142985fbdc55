//! Issue 12 items 5, 6 and 17 with the real `terrane` binary: a panic in an
//! in-process provider is an error naming the resource (never "Apply
//! complete!" with exit 0); sizes that would abort the process on a failed
//! allocation or overflow the stack are refused with diagnostics (random
//! lengths at their attribute, `templatefile` inside a template, `format`
//! widths); a root output whose value is null is no change.
//!
//! Every case runs in a fresh directory; each step is one command with the
//! exit code it must give and texts its output must (and must not) hold.

use std::path::Path;
use std::process::Command;
use terrane_testkit::isolated;

struct Step {
    args: &'static [&'static str],
    code: i32,
    has: &'static [&'static str],
    lacks: &'static [&'static str],
}

struct Case {
    name: &'static str,
    files: &'static [(&'static str, &'static str)],
    steps: &'static [Step],
}

fn terrane(dir: &Path) -> Command {
    let mut c = isolated(env!("CARGO_BIN_EXE_terrane"), dir);
    c.env("TF_CLI_CONFIG_FILE", dir.join("empty.tfrc"))
        .env("RUST_BACKTRACE", "0");
    c
}

fn check(case: &Case) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("empty.tfrc"), "").unwrap();
    for (name, text) in case.files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    for (i, step) in case.steps.iter().enumerate() {
        let out = terrane(dir.path()).args(step.args).output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        // Diagnostics are wrapped at no fixed column; compare on one line.
        let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let at = format!("{} step {i} ({})", case.name, step.args.join(" "));
        assert_eq!(
            out.status.code(),
            Some(step.code),
            "{at}: exit code\n{text}"
        );
        for h in step.has {
            assert!(flat.contains(h), "{at}: output lacks {h:?}\n{text}");
        }
        for l in step.lacks {
            assert!(!flat.contains(l), "{at}: output has {l:?}\n{text}");
        }
    }
}

const APPLY: &[&str] = &["apply", "-auto-approve", "-input=false", "-no-color"];
const VALIDATE: &[&str] = &["validate", "-no-color"];
const PLAN_EXIT: &[&str] = &["plan", "-input=false", "-no-color", "-detailed-exitcode"];

#[test]
fn item5_provider_panic_is_an_error_naming_the_resource() {
    // chrono panics ("TimeDelta::days out of bounds") inside the in-process
    // time provider's create; terraform_data beside it applies normally.
    check(&Case {
        name: "time_offset_panic",
        files: &[("main.tf", "resource \"time_offset\" \"a\" {\n  offset_days = 1e15\n}\nresource \"terraform_data\" \"ok\" {\n  input = \"x\"\n}\n")],
        steps: &[
            Step { args: APPLY, code: 1, has: &["Error: Internal error: a task panicked", "while working on time_offset.a", "TimeDelta::days out of bounds", "terraform_data.ok: Creation complete"], lacks: &["Apply complete!"] },
            // Nothing was recorded for the panicked instance: the next plan
            // still creates it, and only it.
            Step { args: PLAN_EXIT, code: 2, has: &["time_offset.a will be created", "Plan: 1 to add, 0 to change, 0 to destroy."], lacks: &[] },
        ],
    });
}

#[test]
fn item6_random_sizes_refused_at_the_attribute() {
    let cases = [
        Case {
            name: "random_string_length_1e11",
            files: &[(
                "main.tf",
                "resource \"random_string\" \"a\" {\n  length = 1e11\n}\n",
            )],
            steps: &[
                Step {
                    args: VALIDATE,
                    code: 1,
                    has: &[
                        "Error: Invalid Attribute Value",
                        "Attribute length value must be between 1 and 65536, got: 100000000000",
                        "with random_string.a",
                    ],
                    lacks: &[],
                },
                Step {
                    args: APPLY,
                    code: 1,
                    has: &["Attribute length value must be between 1 and 65536"],
                    lacks: &["Apply complete!", "panicked"],
                },
            ],
        },
        Case {
            name: "random_string_length_9e18",
            files: &[(
                "main.tf",
                "resource \"random_string\" \"a\" {\n  length = 9e18\n}\n",
            )],
            steps: &[Step {
                args: APPLY,
                code: 1,
                has: &[
                    "Attribute length value must be between 1 and 65536, got: 9000000000000000000",
                ],
                lacks: &["Apply complete!", "panicked"],
            }],
        },
        Case {
            name: "random_password_min_upper",
            files: &[(
                "main.tf",
                "resource \"random_password\" \"p\" {\n  length    = 16\n  min_upper = 1e11\n}\n",
            )],
            steps: &[Step {
                args: VALIDATE,
                code: 1,
                has: &["Attribute min_upper value must be between 0 and 65536, got: 100000000000"],
                lacks: &[],
            }],
        },
        Case {
            name: "random_id_byte_length",
            files: &[(
                "main.tf",
                "resource \"random_id\" \"i\" {\n  byte_length = 1e11\n}\n",
            )],
            steps: &[Step {
                args: VALIDATE,
                code: 1,
                has: &["Attribute byte_length value must be between 1 and 4096, got: 100000000000"],
                lacks: &[],
            }],
        },
        Case {
            name: "random_pet_length",
            files: &[(
                "main.tf",
                "resource \"random_pet\" \"p\" {\n  length = 1e9\n}\n",
            )],
            steps: &[Step {
                args: VALIDATE,
                code: 1,
                has: &["Attribute length value must be between 1 and 1024, got: 1000000000"],
                lacks: &[],
            }],
        },
        Case {
            name: "random_string_in_bounds_applies",
            files: &[(
                "main.tf",
                "resource \"random_string\" \"a\" {\n  length = 65536\n}\n",
            )],
            steps: &[Step {
                args: APPLY,
                code: 0,
                has: &["Apply complete! Resources: 1 added"],
                lacks: &[],
            }],
        },
    ];
    for c in &cases {
        check(c);
    }
}

#[test]
fn item6_recursion_and_allocation_bombs_are_diagnosed() {
    let cases = [
        Case {
            name: "templatefile_renders_itself",
            files: &[("main.tf", "output \"t\" {\n  value = templatefile(\"${path.module}/t.tpl\", {})\n}\n"), ("t.tpl", "x${templatefile(\"t.tpl\", {})}")],
            steps: &[
                Step { args: VALIDATE, code: 1, has: &["Error: Error in function call", "cannot recursively call templatefile from inside another template function"], lacks: &["overflow"] },
                Step { args: APPLY, code: 1, has: &["cannot recursively call templatefile from inside another template function"], lacks: &["overflow", "Apply complete!"] },
            ],
        },
        Case {
            name: "templatefile_one_level_still_works",
            files: &[("main.tf", "output \"t\" {\n  value = templatefile(\"${path.module}/t.tpl\", { n = \"x\" })\n}\n"), ("t.tpl", "hi ${n}")],
            steps: &[Step { args: APPLY, code: 0, has: &["t = \"hi x\""], lacks: &[] }],
        },
        Case {
            name: "format_width",
            files: &[("main.tf", "output \"o\" {\n  value = format(\"%999999999999d\", 1)\n}\n")],
            steps: &[Step { args: VALIDATE, code: 1, has: &["Call to function \"format\" failed: the width or precision at offset 0 is larger than 10000000"], lacks: &["memory allocation"] }],
        },
        Case {
            name: "format_precision",
            files: &[("main.tf", "output \"o\" {\n  value = format(\"%.99999999999999999999f\", 1)\n}\n")],
            steps: &[Step { args: VALIDATE, code: 1, has: &["is larger than 10000000"], lacks: &["memory allocation"] }],
        },
        Case {
            name: "range_count",
            files: &[("main.tf", "output \"o\" {\n  value = length(range(1e10))\n}\n")],
            steps: &[Step { args: VALIDATE, code: 1, has: &["more than 1024 values were generated"], lacks: &[] }],
        },
    ];
    for c in &cases {
        check(c);
    }
}

#[test]
fn item17_null_root_output_is_no_change() {
    check(&Case {
        name: "null_output",
        files: &[(
            "main.tf",
            "output \"n\" {\n  value = null\n}\noutput \"s\" {\n  value = \"x\"\n}\n",
        )],
        steps: &[
            Step {
                args: APPLY,
                code: 0,
                has: &["Apply complete!"],
                lacks: &[],
            },
            Step {
                args: PLAN_EXIT,
                code: 0,
                has: &["No changes."],
                lacks: &["n = null", "Changes to Outputs"],
            },
            Step {
                args: PLAN_EXIT,
                code: 0,
                has: &["No changes."],
                lacks: &["n = null"],
            },
        ],
    });
}
