//! The parser's work stays linear in its input's size: a table of inputs
//! built to defeat a backtracking parser (nesting, unclosed directives,
//! long operator chains, large objects), scaled up, and every file of the
//! `hcl_time` fuzz target's corpora: its own seeds, `fuzz/slow-inputs`
//! (what the fuzzer found slow), the `config_parse` corpus and the
//! loader's error cases. Work is counted, not timed ([`terrane_hcl::work`]: how
//! many times a byte was looked at), so the check is exact on any machine.

use std::path::Path;

/// Looks at each byte at most this many times on average (nesting makes
/// the blanks after a term be looked at once per enclosing level, and
/// nesting is bounded).
const PER_BYTE: u64 = 64;
const BASE: u64 = 512;

fn within(name: &str, text: &str) -> Result<(), String> {
    let work = terrane_hcl::work(text);
    let budget = BASE + PER_BYTE * text.len() as u64;
    if work <= budget {
        Ok(())
    } else {
        Err(format!(
            "{name}: {} bytes took {work} steps (budget {budget})",
            text.len()
        ))
    }
}

struct Case {
    name: &'static str,
    /// The text at size `n`.
    make: fn(usize) -> String,
}

const CASES: &[Case] = &[
    Case {
        name: "nested unclosed directives",
        make: |n| format!("a = \"{}\"", "%{ if x }".repeat(n)),
    },
    Case {
        name: "nested unclosed interpolations",
        make: |n| format!("a = \"{}\"", "${ [".repeat(n)),
    },
    Case {
        name: "nested templates in directives",
        make: |n| "x%{if a}%{for b in c}${d}".repeat(n),
    },
    Case {
        name: "nested brackets then a missing close",
        make: |n| format!("a = {}", "[(".repeat(n.min(60))) + &" ".repeat(n),
    },
    Case {
        name: "long operator chains",
        make: |n| {
            (0..n)
                .map(|i| format!("a{i} = {}\n", "1 + ".repeat(100) + "1"))
                .collect()
        },
    },
    Case {
        name: "one large object",
        make: |n| {
            format!(
                "a = {{\n{}}}\n",
                (0..n * 4)
                    .map(|i| format!("  k{i} = {i}\n"))
                    .collect::<String>()
            )
        },
    },
    Case {
        name: "an object with the same key again and again",
        make: |n| format!("a = {{ {} }}\n", "k = 1, ".repeat(n * 4)),
    },
    Case {
        name: "many blocks",
        make: |n| {
            (0..n)
                .map(|i| {
                    format!(
                        "resource \"t\" \"r{i}\" {{\n  count = 2\n  v = \"${{var.x}}-{i}\"\n}}\n"
                    )
                })
                .collect()
        },
    },
    Case {
        name: "unterminated comment",
        make: |n| format!("a = 1 /* {}", "x".repeat(n * 10)),
    },
    Case {
        name: "unterminated heredoc",
        make: |n| format!("a = <<EOT\n{}", "line ${x}\n".repeat(n)),
    },
    Case {
        name: "blanks after nested terms",
        make: |n| {
            format!(
                "a = {}a{}",
                "(".repeat(60),
                format!("{})", " ".repeat(n)).repeat(60)
            )
        },
    },
];

#[test]
fn work_is_linear_in_size_for_hostile_inputs() {
    let mut bad = Vec::new();
    for c in CASES {
        for n in [10, 100, 1000] {
            let text = (c.make)(n);
            if let Err(e) = within(&format!("{} (n={n})", c.name), &text) {
                bad.push(e);
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn slow_inputs_and_the_fuzz_corpora_take_linear_work() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut bad = Vec::new();
    let mut n = 0;
    // The directories the README's `cargo fuzz run hcl_time` reads.
    for dir in [
        "fuzz/corpus/hcl_time",
        "fuzz/slow-inputs",
        "fuzz/corpus/config_parse",
        "crates/config/tests/load_cases",
    ] {
        let rd = std::fs::read_dir(root.join(dir)).unwrap_or_else(|e| panic!("{dir}: {e}"));
        for e in rd.flatten() {
            if e.path().is_dir() {
                continue;
            }
            let Ok(bytes) = std::fs::read(e.path()) else {
                continue;
            };
            let text = String::from_utf8_lossy(&bytes);
            n += 1;
            if let Err(e) = within(&e.path().display().to_string(), &text) {
                bad.push(e);
            }
        }
    }
    assert!(n >= 50, "only {n} inputs found under {}", root.display());
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
