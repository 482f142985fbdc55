use super::*;

type Members = Vec<(String, Blob)>;

fn bytes(s: &str) -> Blob {
    Blob::Bytes(s.as_bytes().to_vec())
}

/// One case: members in, the hash Go's writer would give (or None).
fn check(name: &str, members: Members, want: Option<&str>) {
    let got = tar_hash(members).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(Some(got.as_str()), want, "case {name}");
}

/// The expected hashes come from Python's tarfile writing the same members
/// as USTAR (mode 0600, mtime 0), cut after the two zero blocks as Go ends
/// the stream, with devmajor/devminor (NUL in Python's headers for files)
/// set to octal zero as Go writes them: an implementation independent of
/// this one.
#[test]
fn item2_tar_stream_hash_as_go_writes_it() {
    let dir = tempfile::tempdir().unwrap();
    let hello = dir.path().join("hello");
    std::fs::write(&hello, "hello").unwrap();
    let long = format!("{}/{}", "d".repeat(60), "f".repeat(59));
    let cases: Vec<(&str, Members, Option<&str>)> = vec![
        (
            "no_members",
            vec![],
            Some("5f70bf18a086007016e948b04aed3b82103a36bea41755b6cddfaf10ace3c6ef"),
        ),
        (
            "file_contents",
            vec![("hello.txt".into(), Blob::File(hello.clone()))],
            Some("38298ce62a85e93838d28242b1cc81774e9e3fc19cc6ff4b4191fc3ddaf22786"),
        ),
        (
            "members_in_the_given_order",
            vec![
                ("a/x.txt".into(), bytes("xyz")),
                ("b.txt".into(), bytes("b")),
            ],
            Some("8d1c104a6b16ed83ec15e4940b7e5b69a0aedd7ca2aa2a2439cb80daa8e4d007"),
        ),
        (
            "first_of_a_name_wins",
            vec![("a/x".into(), bytes("1")), ("a/x".into(), bytes("2"))],
            Some("546ae17d163efa8f5357da409899b06b8bad8dddccfad14777457765fde0c9df"),
        ),
        (
            "whole_block_has_no_padding",
            vec![("block".into(), bytes(&"z".repeat(512)))],
            Some("15477c12038a65310c2980986faf3a5cb67bc2d93ee1e719b0431bd3b322310c"),
        ),
        (
            "long_name_split_into_prefix",
            vec![(long, bytes("long"))],
            Some("49cf9dee138cc52101ca9314a37a21374bc2df5d38f47e27f078e2472966a347"),
        ),
        // PAX: the hashes below are those of Go's own archive/tar writer
        // (Go 1.19, Debian's golang-go) given the same members, headers
        // {Name, Mode: 0600, Size}, as Pulumi's engine gives them.
        (
            "non_ascii_name",
            vec![("é.txt".into(), bytes("x"))],
            Some("1e6e93eb34a7f88fa180fc7877c3b0966d140fe997c02dfeafa259a177e0b645"),
        ),
        (
            "long_name_without_slash",
            vec![("n".repeat(101), bytes("x"))],
            Some("2fea9249863ed8bb63ec05b478f2a6c421b582614939fd40bce717c84e009da1"),
        ),
        (
            "non_ascii_in_a_directory_then_ustar",
            vec![
                ("dír/ünï.txt".into(), bytes("ü")),
                ("b.txt".into(), bytes("b")),
            ],
            Some("27f266c9d5aa94675cc078a8d93cfecd74fc482f1e0d4249afefe1bcc15d3542"),
        ),
        (
            "cut_name_ends_in_slash",
            vec![(
                format!("é{}/{}", "a".repeat(99), "b".repeat(120)),
                bytes("y"),
            )],
            Some("856824b4ade718f6ee5c1837f907a2f9499473017a675c76ef2551a7cb11c805"),
        ),
        (
            "suffix_too_long_to_split",
            vec![(
                format!("{}/{}", "c".repeat(20), "d".repeat(101)),
                bytes("z"),
            )],
            Some("8923e6d8dfa2d5d3655ef6461b00b38860c9b6a87bf53445fac0e84efcede14d"),
        ),
        (
            "record_length_gains_a_digit",
            vec![("r".repeat(991), bytes("q"))],
            Some("34a40fd9180412fe14fa98e4a1f7e90734ee76a5825fa1ff66161f07e1d5ab5d"),
        ),
    ];
    for (name, members, want) in cases {
        check(name, members, want);
    }
    let nul = tar_hash(vec![("a\0b".into(), bytes("q"))]);
    assert!(
        nul.as_ref().is_err_and(|e| e.contains("NUL")),
        "case nul_in_name (Go: invalid PAX record): {nul:?}"
    );
    let gone = tar_hash(vec![("x".into(), Blob::File(dir.path().join("gone")))]);
    assert!(
        gone.as_ref().is_err_and(|e| e.contains("gone")),
        "case missing_file: {gone:?}"
    );
}

/// Members of 8 GiB or more, header by header (hashing their contents
/// would take minutes): SHA-256 and length of what Go's writer emits for
/// `WriteHeader` alone.
#[test]
fn item2_pax_size_records_as_go_writes_them() {
    use sha2::Digest as _;
    let long = format!("{}/{}", "d".repeat(60), "f".repeat(59));
    let cases = [
        (
            "size_over_octal",
            "big.bin",
            1u64 << 33,
            "a3875497c1092ab41d1339e8eef5f1392e69bc7be724a1d9df881fdda3ea8c78",
            1536,
        ),
        (
            "size_and_splittable_name",
            long.as_str(),
            1 << 33,
            "4b8b2e56b7eeb2e7bd849d346b4a7cbcc67d8dfe158dc8a35b600b8ed26d07ae",
            1536,
        ),
        (
            "largest_octal_size_stays_ustar",
            "big.bin",
            (1 << 33) - 1,
            "5b6d571a63a7c59bfd91a343833c94fb904a66f24823b6e7f3f26e71d4ab3722",
            512,
        ),
    ];
    for (name, member, size, sha, len) in cases {
        let got = headers(member, size).unwrap();
        assert_eq!(got.len(), len, "case {name}");
        assert_eq!(hex::encode(sha2::Sha256::digest(&got)), sha, "case {name}");
    }
}

#[test]
fn item2_names_cleaned_as_go_cleans_them() {
    let cases = [
        ("plain", "a/b", "a/b"),
        ("dot_and_double_slash", "./a//b/", "a/b"),
        ("parent_removed", "a/../b", "b"),
        ("leading_parent_kept", "../x", "../x"),
        ("rooted_parent_dropped", "/../a", "/a"),
        ("empty", "", "."),
    ];
    for (name, input, want) in cases {
        assert_eq!(clean(input), want, "case {name}");
    }
    assert_eq!(join("pkg", "lib/../m.txt"), "pkg/m.txt", "case join");
}

#[test]
fn item2_directory_members_in_walk_order() {
    let dir = tempfile::tempdir().unwrap();
    for f in ["b", "a-c", "a/z", "a/b/y", ".pulumi/skip"] {
        let p = dir.path().join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, f).unwrap();
    }
    std::os::unix::fs::symlink(dir.path().join("a"), dir.path().join("link-dir")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("b"), dir.path().join("link-file")).unwrap();
    let names: Vec<String> = dir_members(dir.path())
        .unwrap()
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    // Each directory's entries sorted by name: "a" before "a-c", so a/...
    // comes first; a link to a directory is skipped, one to a file kept.
    assert_eq!(names, ["a/b/y", "a/z", "a-c", "b", "link-file"]);
}
