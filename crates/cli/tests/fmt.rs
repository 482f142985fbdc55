//! `terrane fmt` (issue 12 item 7): the same bytes as real Terraform's
//! `fmt` on a table of named inputs (`tests/fmt/`), strings, heredocs and
//! comments never touched, a rewrite that would change the configuration
//! refused, files replaced through a rename with their mode kept, and —
//! over every configuration the repository's tests and examples use — a
//! formatted configuration that loads as the same module and plans no
//! change after an apply.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use terrane_testkit::{isolated, Out};

fn terrane(dir: &Path, args: &[&str]) -> Out {
    isolated(env!("CARGO_BIN_EXE_terrane"), dir)
        .args(args)
        .output()
        .expect("terrane runs")
        .into()
}

fn inputs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fmt")
}

/// The named inputs: file name → bytes.
fn inputs() -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(inputs_dir()).expect("tests/fmt") {
        let p = e.expect("entry").path();
        out.insert(
            p.file_name().expect("name").to_string_lossy().into_owned(),
            std::fs::read(&p).expect("input"),
        );
    }
    assert!(out.len() >= 15, "the input table shrank: {:?}", out.keys());
    out
}

fn write_all(dir: &Path, files: &BTreeMap<String, Vec<u8>>) {
    std::fs::create_dir_all(dir).expect("dir");
    for (name, bytes) in files {
        std::fs::write(dir.join(name), bytes).expect("write input");
    }
}

fn read_all(dir: &Path, names: impl Iterator<Item = String>) -> BTreeMap<String, Vec<u8>> {
    names
        .map(|n| (n.clone(), std::fs::read(dir.join(&n)).expect("read output")))
        .collect()
}

fn listed(stdout: &str) -> Vec<String> {
    let mut v: Vec<String> = stdout.lines().map(str::to_string).collect();
    v.sort();
    v
}

#[test]
fn item7_fmt_output_equals_terraform_fmt_byte_for_byte() {
    let files = inputs();
    let root = terrane_testkit::temp_dir();
    let ours = root.path().join("terrane");
    write_all(&ours, &files);
    let check = terrane(&ours, &["fmt", "-check"]);
    assert_eq!(
        check.code, 3,
        "fmt -check on unformatted inputs exits 3:\n{}{}",
        check.stdout, check.stderr
    );
    assert_eq!(
        read_all(&ours, files.keys().cloned()),
        files,
        "fmt -check wrote files"
    );
    let o = terrane(&ours, &["fmt"]);
    assert_eq!(o.code, 0, "terrane fmt failed:\n{}{}", o.stdout, o.stderr);
    let formatted = read_all(&ours, files.keys().cloned());
    // The inputs of the issue are formatted already: nothing may change.
    for (name, bytes) in &files {
        if name.starts_with("item7_") {
            assert_eq!(
                String::from_utf8_lossy(&formatted[name]),
                String::from_utf8_lossy(bytes),
                "{name}: terrane fmt changed a formatted file"
            );
            assert!(
                !o.stdout.lines().any(|l| l == name),
                "{name} listed as changed"
            );
        }
    }
    let Some(tf) = terrane_testkit::terraform() else {
        return;
    };
    let theirs = root.path().join("terraform");
    write_all(&theirs, &files);
    let t = tf.run(&theirs, &["fmt", "-no-color"], &[]);
    assert_eq!(t.code, 0, "terraform fmt failed:\n{}{}", t.stdout, t.stderr);
    assert_eq!(
        listed(&o.stdout),
        listed(&t.stdout),
        "the files each tool reports as changed differ"
    );
    let expected = read_all(&theirs, files.keys().cloned());
    for (name, want) in &expected {
        assert_eq!(
            String::from_utf8_lossy(&formatted[name]),
            String::from_utf8_lossy(want),
            "{name}: terrane fmt (left) differs from terraform fmt (right)"
        );
    }
    // A second pass: Terraform's formatter is not always idempotent (it
    // unwraps one `"${...}"` level per run); terrane must agree there too.
    let o2 = terrane(&ours, &["fmt"]);
    let t2 = tf.run(&theirs, &["fmt", "-no-color"], &[]);
    assert_eq!(
        listed(&o2.stdout),
        listed(&t2.stdout),
        "second pass: the files each tool reports as changed differ"
    );
    assert_eq!(
        read_all(&ours, files.keys().cloned()),
        read_all(&theirs, files.keys().cloned()),
        "second pass: the outputs differ"
    );
}

#[test]
fn item7_fmt_refuses_a_rewrite_that_would_change_the_configuration() {
    // Terraform unwraps this interpolation into `x = (a)` and a dangling
    // `+ (b)` line, a file that no longer parses; terrane checks the result
    // and leaves the file alone.
    let dir = terrane_testkit::temp_dir();
    let text = "locals {\n  x = \"${\n(a)\n+ (b)\n}\"\n}\n";
    std::fs::write(dir.path().join("broken_by_unwrap.tf"), text).expect("write");
    std::fs::write(dir.path().join("fine.tf"), "locals {\n  y = 1\n}\n").expect("write");
    let o = terrane(dir.path(), &["fmt", "-no-color"]);
    assert_eq!(o.code, 1, "fmt should fail:\n{}{}", o.stdout, o.stderr);
    assert!(
        o.stderr.contains("broken_by_unwrap.tf")
            && o.stderr
                .contains("Formatting would change the configuration"),
        "the error does not name the file:\n{}",
        o.stderr
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("broken_by_unwrap.tf")).expect("read"),
        text,
        "the file was written"
    );
}

#[test]
fn item7_fmt_replaces_files_by_rename_keeping_their_mode() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = terrane_testkit::temp_dir();
    let cases: &[(&str, u32)] = &[
        ("group_readable.tf", 0o640),
        ("private.tf", 0o600),
        ("shared.tfvars", 0o644),
    ];
    for (name, mode) in cases {
        let p = dir.path().join(name);
        std::fs::write(&p, "a   =   1\nbb = 2\n").expect("write");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(*mode)).expect("chmod");
    }
    let inodes: Vec<u64> = cases
        .iter()
        .map(|(n, _)| std::fs::metadata(dir.path().join(n)).expect("stat").ino())
        .collect();
    let o = terrane(dir.path(), &["fmt"]);
    assert_eq!(o.code, 0, "fmt failed:\n{}{}", o.stdout, o.stderr);
    for ((name, mode), ino) in cases.iter().zip(inodes) {
        let p = dir.path().join(name);
        let m = std::fs::metadata(&p).expect("stat");
        assert_eq!(
            std::fs::read_to_string(&p).expect("read"),
            "a  = 1\nbb = 2\n",
            "{name}"
        );
        assert_eq!(
            m.permissions().mode() & 0o777,
            *mode,
            "{name}: mode changed"
        );
        assert_ne!(
            m.ino(),
            ino,
            "{name}: written in place, not through a rename"
        );
    }
    // A symbolic link stays a link to the (formatted) file it names.
    let real = dir.path().join("real.tf");
    std::fs::write(&real, "x   =   1\n").expect("write");
    std::os::unix::fs::symlink(&real, dir.path().join("link.tf")).expect("symlink");
    let o = terrane(dir.path(), &["fmt", "link.tf"]);
    assert_eq!(o.code, 0, "fmt of a link failed:\n{}", o.stderr);
    assert!(
        std::fs::symlink_metadata(dir.path().join("link.tf"))
            .expect("stat")
            .file_type()
            .is_symlink(),
        "the link was replaced by a file"
    );
    assert_eq!(std::fs::read_to_string(&real).expect("read"), "x = 1\n");
    std::fs::remove_file(dir.path().join("link.tf")).expect("rm");
    std::fs::remove_file(&real).expect("rm");
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        ["group_readable.tf", "private.tf", "shared.tfvars"],
        "temporary files left behind"
    );
}

// ---- every configuration the tests and examples use ----

/// String literals of a Rust source file (raw and escaped), unescaped.
fn rust_strings(src: &str) -> Vec<String> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'/') {
            i = src[i..].find('\n').map(|n| i + n).unwrap_or(b.len());
        } else if b[i] == b'\'' {
            // A char literal ('"', '\'') or a lifetime: skip the quote only.
            i += if b.get(i + 2) == Some(&b'\'') {
                3
            } else if b.get(i + 1) == Some(&b'\\') && b.get(i + 3) == Some(&b'\'') {
                4
            } else {
                1
            };
        } else if b[i] == b'r'
            && (b.get(i + 1) == Some(&b'"')
                || (b.get(i + 1) == Some(&b'#') && i > 0 && !b[i - 1].is_ascii_alphanumeric()))
        {
            let hashes = b[i + 1..].iter().take_while(|c| **c == b'#').count();
            if b.get(i + 1 + hashes) != Some(&b'"') {
                i += 1;
                continue;
            }
            let start = i + 2 + hashes;
            let close = format!("\"{}", "#".repeat(hashes));
            let end = src[start..]
                .find(&close)
                .map(|n| start + n)
                .unwrap_or(b.len());
            out.push(src[start..end].to_string());
            i = end + close.len();
        } else if b[i] == b'"' {
            let mut s = String::new();
            let mut j = i + 1;
            let chars: Vec<char> = src[j..].chars().take(200_000).collect();
            let mut k = 0;
            while k < chars.len() && chars[k] != '"' {
                if chars[k] == '\\' && k + 1 < chars.len() {
                    match chars[k + 1] {
                        'n' => s.push('\n'),
                        't' => s.push('\t'),
                        'r' => s.push('\r'),
                        '\n' => {
                            // A line continuation skips the next line's indentation.
                            k += 2;
                            while k < chars.len() && chars[k].is_whitespace() {
                                k += 1;
                            }
                            continue;
                        }
                        c => s.push(c),
                    }
                    k += 2;
                } else {
                    s.push(chars[k]);
                    k += 1;
                }
            }
            j += chars[..k.min(chars.len())]
                .iter()
                .map(|c| c.len_utf8())
                .sum::<usize>();
            out.push(s);
            i = j + 1;
        } else {
            i += 1;
        }
    }
    out
}

/// A `format!` template as text: `{{`/`}}` unescaped, placeholders as `x`.
fn fill_template(s: &str) -> String {
    if !s.contains("{{") {
        return s.to_string();
    }
    let mut out = String::new();
    let mut rest = s;
    while let Some(c) = rest.chars().next() {
        if rest.starts_with("{{") || rest.starts_with("}}") {
            out.push(c);
            rest = &rest[2..];
        } else if c == '{' {
            let end = rest.find('}').unwrap_or(rest.len() - 1);
            if rest[1..end]
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == ':' || c == '?')
            {
                out.push('x');
                rest = &rest[end + 1..];
            } else {
                out.push(c);
                rest = &rest[1..];
            }
        } else {
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// Configurations written inline in the repository's tests: string
/// literals that parse as HCL and declare at least one block.
fn inline_configs() -> Vec<(String, String)> {
    let root = terrane_testkit::repo_root();
    let mut files = Vec::new();
    let mut stack = vec![
        root.join("crates"),
        root.join("providers"),
        root.join("examples"),
    ];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() && p.file_name().is_some_and(|n| n != "target") {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs")
                && p.components().any(|c| c.as_os_str() == "tests")
                && !p.ends_with("crates/cli/tests/fmt.rs")
            {
                // (This file's own inputs include one fmt must refuse.)
                files.push(p);
            }
        }
    }
    files.sort();
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for f in files {
        let src = std::fs::read_to_string(&f).expect("test source");
        for s in rust_strings(&src) {
            let text = fill_template(&s);
            let declares = [
                "resource \"",
                "variable \"",
                "output \"",
                "locals {",
                "module \"",
                "data \"",
                "terraform {",
            ]
            .iter()
            .any(|k| text.contains(k));
            if !declares
                || terrane_hcl::parser::parse_body(&text).is_err()
                || !seen.insert(text.clone())
            {
                continue;
            }
            let rel = f.strip_prefix(&root).unwrap_or(&f).display().to_string();
            out.push((rel, text));
        }
    }
    out
}

/// One `.tf` file of outputs from an expression corpus of crates/eval
/// (one expression per line; a heredoc runs to its closing marker).
fn corpus_config(name: &str) -> String {
    let text = std::fs::read_to_string(
        terrane_testkit::repo_root()
            .join("crates/eval/tests/corpus")
            .join(name),
    )
    .expect("corpus");
    let mut out = String::new();
    let mut lines = text.lines();
    let mut n = 0;
    while let Some(line) = lines.next() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let mut expr = line.to_string();
        if let Some(pos) = line.rfind("<<") {
            let marker = line[pos + 2..].trim_start_matches('-').trim().to_string();
            for l in lines.by_ref() {
                expr.push('\n');
                expr.push_str(l);
                if l.trim() == marker {
                    break;
                }
            }
        }
        n += 1;
        out.push_str(&format!("output \"e{n}\" {{\n  value = {expr}\n}}\n"));
    }
    out
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("dir");
    for e in std::fs::read_dir(from).expect("read dir").flatten() {
        let p = e.path();
        let name = e.file_name();
        if p.is_dir() {
            if name != ".terrane" && name != "out" && name != ".terraform" {
                copy_tree(&p, &to.join(name));
            }
        } else {
            std::fs::copy(&p, to.join(name)).expect("copy");
        }
    }
}

/// Where the module trees in `a` and `b` differ in meaning.
fn config_differences(
    a: &terrane_config::Config,
    b: &terrane_config::Config,
    at: &str,
) -> Vec<String> {
    let mut out: Vec<String> = terrane_config::canon::module_differences(&a.module, &b.module)
        .into_iter()
        .map(|d| format!("{at}{d}"))
        .collect();
    if !a.children.keys().eq(b.children.keys()) {
        out.push(format!("{at}(child modules)"));
    }
    for (k, c) in &a.children {
        if let Some(d) = b.children.get(k) {
            out.extend(config_differences(c, d, &format!("{at}module.{k}.")));
        }
    }
    out
}

/// Every directory of `dirs` formatted in one run must load as the same
/// module tree as before, and a second run must change nothing.
fn check_meaning_kept(dirs: &[(String, PathBuf)]) {
    let before: Vec<terrane_config::Config> = dirs
        .iter()
        .map(|(_, d)| terrane_config::load_config(d, &terrane_eval::statics::defaults_only()).0)
        .collect();
    let cwd = dirs[0].1.parent().expect("parent").to_path_buf();
    // Real Terraform formats a copy, for a byte comparison afterwards.
    let terraform = terrane_testkit::terraform();
    let theirs = terrane_testkit::temp_dir();
    if let Some(tf) = &terraform {
        copy_tree(&cwd, theirs.path());
        let t = tf.run(theirs.path(), &["fmt", "-recursive", "-no-color"], &[]);
        assert_eq!(t.code, 0, "terraform fmt failed:\n{}{}", t.stdout, t.stderr);
    }
    let mut args = vec!["fmt".to_string()];
    let mut all: Vec<PathBuf> = Vec::new();
    for (_, d) in dirs {
        let mut stack = vec![d.clone()];
        while let Some(x) = stack.pop() {
            all.push(x.clone());
            stack.extend(
                std::fs::read_dir(&x)
                    .expect("dir")
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| p.is_dir()),
            );
        }
    }
    args.extend(all.iter().map(|p| p.display().to_string()));
    let args_ref: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = terrane(&cwd, &args_ref);
    if o.code != 0 {
        let culprit: Vec<String> = dirs
            .iter()
            .filter(|(_, d)| o.stderr.contains(&format!("{}/", d.display())))
            .map(|(n, d)| {
                format!(
                    "{n}:\n{}",
                    std::fs::read_to_string(d.join("main.tf")).unwrap_or_default()
                )
            })
            .collect();
        panic!("terrane fmt failed:\n{}\n{}", o.stderr, culprit.join("\n"));
    }
    assert!(
        !o.stdout.trim().is_empty(),
        "fmt changed nothing at all: the corpus is not exercising it"
    );
    eprintln!(
        "{} configurations, {} files reformatted",
        dirs.len(),
        o.stdout.lines().count()
    );
    for ((name, d), b) in dirs.iter().zip(&before) {
        let after = terrane_config::load_config(d, &terrane_eval::statics::defaults_only()).0;
        let diffs = config_differences(b, &after, "");
        assert!(diffs.is_empty(), "{name}: fmt changed {diffs:?}");
    }
    if terraform.is_some() {
        let mut differ = Vec::new();
        for ((name, d), _) in dirs.iter().zip(&before) {
            let rel = d.strip_prefix(&cwd).expect("inside");
            let (ours, theirs) = (
                std::fs::read_to_string(d.join("main.tf")).unwrap_or_default(),
                std::fs::read_to_string(theirs.path().join(rel).join("main.tf"))
                    .unwrap_or_default(),
            );
            if ours != theirs {
                differ.push(format!(
                    "{name}:\n--- terrane\n{ours}\n--- terraform\n{theirs}"
                ));
            }
        }
        assert!(
            differ.is_empty(),
            "terrane fmt and terraform fmt differ on {} configurations:\n{}",
            differ.len(),
            differ.join("\n")
        );
    }
    let again = terrane(&cwd, &args_ref);
    assert_eq!(
        (again.code, again.stdout.as_str()),
        (0, ""),
        "a second fmt still changes files: {}",
        again.stderr
    );
}

/// A layout Terraform's formatter would change, same meaning: one-line
/// arguments outside heredocs lose their alignment and gain indentation.
fn unformat(text: &str) -> String {
    let mut out = String::new();
    let mut heredoc: Option<String> = None;
    for line in text.lines() {
        if let Some(m) = &heredoc {
            if line.trim() == m {
                heredoc = None;
            }
            out.push_str(line);
        } else if let Some((k, v)) = line.split_once('=').filter(|(k, v)| {
            let k = k.trim();
            !k.is_empty()
                && k.chars().all(|c| c.is_alphanumeric() || c == '_')
                && !v.starts_with(['=', '>'])
        }) {
            out.push_str(&format!("    {}={}", k.trim(), v.trim_start()));
        } else {
            out.push_str(line);
        }
        if let Some(pos) = line.find("<<") {
            heredoc = Some(line[pos + 2..].trim_start_matches('-').trim().to_string());
        }
        out.push('\n');
    }
    out
}

#[test]
fn item7_fmt_over_every_test_configuration_keeps_its_meaning() {
    let root = terrane_testkit::temp_dir();
    let repo = terrane_testkit::repo_root();
    let mut dirs: Vec<(String, PathBuf)> = Vec::new();
    for (name, src) in [
        ("examples/quickstart", repo.join("examples/quickstart")),
        (
            "crates/eval/tests/corpus",
            repo.join("crates/eval/tests/corpus"),
        ),
    ] {
        let to = root.path().join(name.replace('/', "_"));
        copy_tree(&src, &to);
        dirs.push((name.to_string(), to));
    }
    for corpus in ["expressions.txt", "functions.txt"] {
        let to = root.path().join(corpus.replace('.', "_"));
        std::fs::create_dir_all(&to).expect("dir");
        std::fs::write(to.join("main.tf"), corpus_config(corpus)).expect("write");
        dirs.push((
            format!("crates/eval/tests/corpus/{corpus} (as outputs)"),
            to,
        ));
    }
    let inline = inline_configs();
    assert!(
        inline.len() >= 60,
        "found only {} inline configurations",
        inline.len()
    );
    for (i, (file, text)) in inline.iter().enumerate() {
        let to = root.path().join(format!("inline_{i:03}"));
        std::fs::create_dir_all(&to).expect("dir");
        std::fs::write(to.join("main.tf"), text).expect("write");
        dirs.push((format!("{file} (string {i})"), to));
        // The same configuration laid out badly must come back to the same meaning.
        let messy = root.path().join(format!("inline_{i:03}_messy"));
        std::fs::create_dir_all(&messy).expect("dir");
        std::fs::write(messy.join("main.tf"), unformat(text)).expect("write");
        let (a, _) = terrane_config::parse_str("main.tf", text);
        let (b, _) = terrane_config::parse_str("main.tf", &unformat(text));
        if terrane_config::canon::module_differences(&a, &b).is_empty() {
            dirs.push((format!("{file} (string {i}, unformatted)"), messy));
        }
    }
    check_meaning_kept(&dirs);
}

#[test]
fn item7_plan_after_fmt_of_an_applied_configuration_has_no_changes() {
    let root = terrane_testkit::temp_dir();
    let repo = terrane_testkit::repo_root();
    let mut cases: Vec<(String, PathBuf)> = Vec::new();
    let quickstart = root.path().join("quickstart");
    copy_tree(&repo.join("examples/quickstart"), &quickstart);
    cases.push(("examples/quickstart".into(), quickstart));
    // Differential scenarios that need only terrane's built-in providers.
    let scenarios = terrane_testkit::repo_root().join("crates/cli/tests/differential/scenarios");
    let mut picked = 0;
    for f in ["basic.rs", "expand.rs", "exprs.rs"] {
        let src = std::fs::read_to_string(scenarios.join(f)).expect("scenario source");
        for s in rust_strings(&src) {
            let text = fill_template(&s);
            let simple = text.contains("resource \"")
                && !text.contains("kv_")
                && !text.contains("module \"")
                && !text.contains("variable \"")
                && !text.contains("data \"");
            if picked < 6 && simple && terrane_hcl::parser::parse_body(&text).is_ok() {
                let d = root.path().join(format!("scenario_{picked}"));
                std::fs::create_dir_all(&d).expect("dir");
                std::fs::write(d.join("main.tf"), &text).expect("write");
                cases.push((
                    format!(
                        "{f}: {}",
                        text.lines()
                            .find(|l| l.contains("resource"))
                            .unwrap_or_default()
                    ),
                    d,
                ));
                picked += 1;
            }
        }
    }
    assert!(picked >= 4, "only {picked} runnable scenarios found");
    let mut reformatted = Vec::new();
    for (name, dir) in &cases {
        // Lay the configuration out badly (same meaning), apply it, format
        // it, and plan: nothing may change.
        let mut stack = vec![dir.clone()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).expect("dir").flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "tf") {
                    let text = std::fs::read_to_string(&p).expect("read");
                    let messy = unformat(&text);
                    let (a, _) = terrane_config::parse_str("main.tf", &text);
                    let (b, _) = terrane_config::parse_str("main.tf", &messy);
                    assert!(
                        terrane_config::canon::module_differences(&a, &b).is_empty(),
                        "{name}: the test's own unformatting changed the configuration"
                    );
                    std::fs::write(&p, messy).expect("write");
                }
            }
        }
        for args in [
            &["init"][..],
            &["apply", "-auto-approve", "-input=false", "-no-color"],
        ] {
            let o = terrane(dir, args);
            assert_eq!(
                o.code, 0,
                "{name}: terrane {args:?} failed:\n{}{}",
                o.stdout, o.stderr
            );
        }
        let f = terrane(dir, &["fmt", "-recursive"]);
        assert_eq!(f.code, 0, "{name}: fmt failed:\n{}", f.stderr);
        if !f.stdout.trim().is_empty() {
            reformatted.push(name.clone());
        }
        let p = terrane(
            dir,
            &["plan", "-detailed-exitcode", "-input=false", "-no-color"],
        );
        assert_eq!(
            p.code, 0,
            "{name}: the plan after fmt is not empty:\n{}{}",
            p.stdout, p.stderr
        );
    }
    assert!(
        reformatted.contains(&"examples/quickstart".to_string()) && reformatted.len() >= 4,
        "fmt had too little to do: only {reformatted:?} changed"
    );
}
