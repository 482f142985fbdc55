//! The installer against a real local HTTPS registry (terrane-testkit's
//! `registry`): rustls with a throwaway CA, packages signed by a
//! throwaway OpenPGP key. One registry per test; the installer's process
//! environment is not touched (the CA is passed through SSL_CERT_FILE,
//! which every test sets to its own registry's CA before building a
//! client, under one lock).

use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;
use terrane_engine::provider::discovery::cliconfig::CliConfig;
use terrane_engine::provider::discovery::lockfile::LockedProvider;
use terrane_engine::provider::discovery::version::{Constraints, Version};
use terrane_engine::provider::ProviderAddr;
use terrane_registry::{InstallError, Installed, Installer, Requirement};
use terrane_testkit::registry::{self, leftovers, script_binary, Answer, Registry};

/// SSL_CERT_FILE is read when a client is built; tests build theirs one
/// at a time.
static ENV: Mutex<()> = Mutex::new(());

fn installer(reg: &Registry, dir: &Path, timeout: Duration) -> Installer {
    let _g = ENV.lock().unwrap_or_else(|e| e.into_inner());
    std::env::set_var("SSL_CERT_FILE", &reg.ca_file);
    let cli = CliConfig::load(&reg.cli_config).expect("CLI config");
    Installer::new(cli, dir.join(".terraform/providers"), timeout).expect("installer")
}

fn req(source: &str, constraints: &str, locked: Option<LockedProvider>) -> Requirement {
    Requirement {
        addr: ProviderAddr::parse(source).unwrap(),
        constraints: Constraints::parse(constraints).unwrap(),
        locked,
        mirror: None,
        packed: None,
    }
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Selects and installs, as init does.
fn run(inst: &Installer, r: &Requirement, upgrade: bool) -> Result<Installed, InstallError> {
    rt().block_on(async {
        let v = inst.select(r, upgrade).await?;
        inst.install(r, &v).await
    })
}

/// A registry publishing `test/thing` 1.0.0, 1.1.0 and 2.0.0.
fn published() -> Registry {
    let reg = Registry::start();
    for v in ["1.0.0", "1.1.0", "2.0.0"] {
        reg.publish("test", "thing", v, &script_binary(v), &["5.0"]);
    }
    reg
}

const THING: &str = "registry.terrane.test/test/thing";

#[test]
fn item1_fresh_install_unpacks_and_hashes() {
    let reg = published();
    let work = terrane_testkit::temp_dir();
    let inst = installer(&reg, work.path(), Duration::from_secs(20));
    let got = run(&inst, &req(THING, "~> 1.0", None), false).unwrap();
    assert_eq!(got.version.to_string(), "1.1.0", "case newest_allowed");
    let (os, arch) = registry::os_arch();
    let want_dir = work.path().join(format!(
        ".terraform/providers/registry.terrane.test/test/thing/1.1.0/{os}_{arch}"
    ));
    assert_eq!(got.dir, want_dir, "case terraform_layout");
    let exe = want_dir.join("terraform-provider-thing_v1.1.0");
    assert_eq!(
        std::fs::read(&exe).unwrap(),
        script_binary("1.1.0"),
        "case unpacked"
    );
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&exe).unwrap().permissions().mode() & 0o111,
        0o111,
        "case executable"
    );
    let h1: Vec<_> = got.hashes.iter().filter(|h| h.starts_with("h1:")).collect();
    let zh: Vec<_> = got.hashes.iter().filter(|h| h.starts_with("zh:")).collect();
    assert_eq!(h1.len(), 1, "case one_h1: {:?}", got.hashes);
    assert_eq!(
        zh.len(),
        3,
        "case zh_for_every_signed_line_zips_and_manifest_as_terraform: {:?}",
        got.hashes
    );
    assert_eq!(
        got.signed_by.as_deref(),
        Some(reg.key.id.as_str()),
        "case key_id"
    );
    assert!(leftovers(work.path()).is_empty(), "case no_temp_left");
}

#[test]
fn item1_versions_filtered_by_protocol() {
    let reg = published();
    reg.publish("test", "thing", "3.0.0", &script_binary("3"), &["4.0"]);
    let work = terrane_testkit::temp_dir();
    let inst = installer(&reg, work.path(), Duration::from_secs(20));
    let got = run(&inst, &req(THING, "", None), false).unwrap();
    assert_eq!(got.version.to_string(), "2.0.0");
}

#[test]
fn item1_locked_version_kept_and_upgrade_moves() {
    let reg = published();
    let work = terrane_testkit::temp_dir();
    let inst = installer(&reg, work.path(), Duration::from_secs(20));
    let first = run(&inst, &req(THING, ">= 1.0", None), false).unwrap();
    assert_eq!(first.version.to_string(), "2.0.0");
    let lock = LockedProvider {
        version: Version::parse("1.0.0").unwrap(),
        constraints: Some(">= 1.0".into()),
        hashes: Vec::new(),
    };
    let kept = run(&inst, &req(THING, ">= 1.0", Some(lock.clone())), false).unwrap();
    assert_eq!(kept.version.to_string(), "1.0.0", "case lock_respected");
    let up = run(&inst, &req(THING, ">= 1.0", Some(lock)), true).unwrap();
    assert_eq!(up.version.to_string(), "2.0.0", "case upgrade");
}

#[test]
fn item1_installed_package_reused_only_when_lock_matches() {
    let reg = published();
    let work = terrane_testkit::temp_dir();
    let inst = installer(&reg, work.path(), Duration::from_secs(20));
    let got = run(&inst, &req(THING, "1.0.0", None), false).unwrap();
    let lock = LockedProvider {
        version: got.version.clone(),
        constraints: None,
        hashes: got.hashes.clone(),
    };
    let r = req(THING, "1.0.0", Some(lock));
    let reusable = |r: &Requirement| rt().block_on(inst.reusable(r, &got.version));
    assert!(reusable(&r).is_some(), "case reused");
    // Tampered: the installed copy is no longer reusable, and a new
    // install replaces it with the verified package.
    let exe = got.dir.join("terraform-provider-thing_v1.0.0");
    std::fs::write(&exe, b"#!/bin/sh\necho evil\n").unwrap();
    assert!(reusable(&r).is_none(), "case tampered_not_reused");
    let again = run(&inst, &r, false).unwrap();
    assert_eq!(
        std::fs::read(&exe).unwrap(),
        script_binary("1.0.0"),
        "case repaired"
    );
    assert_eq!(again.hashes, got.hashes, "case same_hashes");
}

#[test]
fn item1_service_discovery_and_credentials() {
    let reg = published();
    // A host without a host block: discovery through the well-known file
    // (the server's certificate also names localhost).
    reg.set(
        "/.well-known/terraform.json",
        Answer::Body(br#"{"providers.v1":"/v1/providers/","modules.v1":"/v1/modules/"}"#.to_vec()),
    );
    let host = format!("localhost:{}", reg.port);
    std::fs::write(
        &reg.cli_config,
        format!("credentials \"{host}\" {{\n  token = \"t0ken-for-localhost\"\n}}\n"),
    )
    .unwrap();
    let work = terrane_testkit::temp_dir();
    let inst = installer(&reg, work.path(), Duration::from_secs(20));
    let got = run(
        &inst,
        &req(&format!("{host}/test/thing"), "1.0.0", None),
        false,
    )
    .unwrap();
    assert_eq!(got.version.to_string(), "1.0.0", "case discovered");
    let seen = reg.requests();
    assert!(
        seen.iter().any(|s| s.path == "/.well-known/terraform.json"),
        "case well_known_asked"
    );
    let registry_calls: Vec<_> = seen.iter().filter(|s| s.path.starts_with("/v1/")).collect();
    assert!(
        registry_calls
            .iter()
            .all(|s| s.authorization.as_deref() == Some("Bearer t0ken-for-localhost")),
        "case token_sent: {registry_calls:?}"
    );
}

/// One failure case: `setup` breaks the registry (or the lock) and the
/// install must fail with `want` in its message, leaving no package and
/// no temporary directory behind.
fn check(case: &str, setup: impl FnOnce(&Registry) -> Requirement, timeout: u64, want: &str) {
    let reg = published();
    let r = setup(&reg);
    let work = terrane_testkit::temp_dir();
    let inst = installer(&reg, work.path(), Duration::from_secs(timeout));
    let err = match run(&inst, &r, false) {
        Ok(i) => panic!("case {case}: installed {} {}", i.addr, i.version),
        Err(e) => e.to_string(),
    };
    assert!(err.contains(want), "case {case}: {err}");
    assert!(
        err.contains(&r.addr.to_string()),
        "case {case} names the provider: {err}"
    );
    let root = work
        .path()
        .join(".terraform/providers/registry.terrane.test/test/thing");
    let installed: Vec<_> = walk(&root);
    assert!(installed.is_empty(), "case {case}: left {installed:?}");
    assert!(leftovers(work.path()).is_empty(), "case {case}: temp left");
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            if e.path().is_dir() {
                out.extend(walk(&e.path()));
            } else {
                out.push(e.path());
            }
        }
    }
    out
}

fn zip_path(reg: &Registry, version: &str) -> String {
    let (os, arch) = registry::os_arch();
    let _ = reg;
    format!("/dl/test/thing/{version}/terraform-provider-thing_{version}_{os}_{arch}.zip")
}

fn meta_path(version: &str) -> String {
    let (os, arch) = registry::os_arch();
    format!("/v1/providers/test/thing/{version}/download/{os}/{arch}")
}

const SUMS: &str = "/dl/test/thing/1.0.0/terraform-provider-thing_1.0.0_SHA256SUMS";

#[test]
fn item4_bad_checksum() {
    check(
        "zip_replaced",
        |reg| {
            reg.set(
                &zip_path(reg, "1.0.0"),
                Answer::Body(registry::zip_of("x", b"evil")),
            );
            req(THING, "1.0.0", None)
        },
        20,
        "archive has incorrect checksum",
    );
    check(
        "registry_shasum_disagrees_with_signed_sums",
        |reg| {
            let Some(Answer::Body(meta)) = reg.get(&meta_path("1.0.0")) else {
                panic!("no meta")
            };
            let text = String::from_utf8(meta).unwrap();
            let start = text.find("\"shasum\":\"").unwrap() + 10;
            let mut t = text.clone();
            t.replace_range(start..start + 64, &"0".repeat(64));
            reg.set(&meta_path("1.0.0"), Answer::Body(t.into_bytes()));
            req(THING, "1.0.0", None)
        },
        20,
        "but the registry says",
    );
}

#[test]
fn item4_bad_signature() {
    check(
        "sums_altered_after_signing",
        |reg| {
            let Some(Answer::Body(mut sums)) = reg.get(SUMS) else {
                panic!("no sums")
            };
            sums.extend_from_slice(format!("{}  extra.zip\n", "1".repeat(64)).as_bytes());
            reg.set(SUMS, Answer::Body(sums));
            req(THING, "1.0.0", None)
        },
        20,
        "does not verify",
    );
    check(
        "signature_garbage",
        |reg| {
            reg.set(
                &format!("{SUMS}.sig"),
                Answer::Body(b"not a signature".to_vec()),
            );
            req(THING, "1.0.0", None)
        },
        20,
        "signature cannot be read",
    );
}

#[test]
fn item4_unknown_key() {
    check(
        "signed_by_another_key",
        |reg| {
            let other = registry::SigningKey::generate();
            let Some(Answer::Body(sums)) = reg.get(SUMS) else {
                panic!("no sums")
            };
            reg.set(&format!("{SUMS}.sig"), Answer::Body(other.sign(&sums)));
            req(THING, "1.0.0", None)
        },
        20,
        "not one of the registry's signing keys",
    );
}

#[test]
fn item4_missing_version() {
    check(
        "no_such_version",
        |_| req(THING, "9.9.9", None),
        20,
        "no available releases match the given constraints 9.9.9 (available: 2.0.0, 1.1.0, 1.0.0)",
    );
}

#[test]
fn item4_conflicting_constraints() {
    check(
        "two_modules_disagree",
        |_| Requirement {
            constraints: Constraints::parse("~> 1.0")
                .unwrap()
                .and(&Constraints::parse(">= 2.0").unwrap()),
            ..req(THING, "", None)
        },
        20,
        "no available releases match the given constraints ~> 1.0, >= 2.0",
    );
}

#[test]
fn item4_registry_answers_404_500_garbage_nothing() {
    let versions = "/v1/providers/test/thing/versions";
    check(
        "versions_404",
        |reg| {
            reg.set(versions, Answer::Status(404));
            req(THING, "", None)
        },
        20,
        "does not have a provider named",
    );
    check(
        "versions_500",
        |reg| {
            reg.set(versions, Answer::Status(500));
            req(THING, "", None)
        },
        20,
        "answered 500",
    );
    check(
        "versions_garbage",
        |reg| {
            reg.set(versions, Answer::Body(b"<html>hello</html>".to_vec()));
            req(THING, "", None)
        },
        20,
        "is not a version list",
    );
    check(
        "download_meta_garbage",
        |reg| {
            reg.set(&meta_path("1.0.0"), Answer::Body(b"{\"nope\":1}".to_vec()));
            req(THING, "1.0.0", None)
        },
        20,
        "is not a package description",
    );
    check(
        "package_missing_for_platform",
        |reg| {
            reg.set(&meta_path("1.0.0"), Answer::Status(404));
            req(THING, "1.0.0", None)
        },
        20,
        "no package of this version for",
    );
    check(
        "versions_silent",
        |reg| {
            reg.set(versions, Answer::Silence);
            req(THING, "", None)
        },
        2,
        "timed out after 2s",
    );
}

#[test]
fn item4_interrupted_download() {
    check(
        "zip_cut_short",
        |reg| {
            let p = zip_path(reg, "1.0.0");
            let Some(Answer::Body(z)) = reg.get(&p) else {
                panic!("no zip")
            };
            reg.set(&p, Answer::CutShort(z));
            req(THING, "1.0.0", None)
        },
        20,
        "request to https://127.0.0.1",
    );
}

#[test]
fn item4_lock_hash_mismatch_names_both_hashes() {
    check(
        "lock_has_other_hashes",
        |_| {
            req(
                THING,
                "1.0.0",
                Some(LockedProvider {
                    version: Version::parse("1.0.0").unwrap(),
                    constraints: None,
                    hashes: vec!["h1:AAAAlockedAAAA=".into()],
                }),
            )
        },
        20,
        "do not match any of the checksums recorded in the dependency lock file (h1:AAAAlockedAAAA=)",
    );
}

/// An installer for `work` sharing the plugin cache `cache`.
fn cached_installer(reg: &Registry, work: &Path, cache: &Path) -> Installer {
    let mut i = installer(reg, work, Duration::from_secs(20));
    i.cache_dir = Some(cache.to_path_buf());
    i
}

fn lock_of(i: &Installed) -> LockedProvider {
    LockedProvider {
        version: i.version.clone(),
        constraints: None,
        hashes: i.hashes.clone(),
    }
}

#[test]
fn item2_plugin_cache_shared_by_two_concurrent_inits() {
    let reg = published();
    let cache = terrane_testkit::temp_dir();
    let works: Vec<_> = (0..2).map(|_| terrane_testkit::temp_dir()).collect();
    let results: Vec<Installed> = std::thread::scope(|s| {
        let handles: Vec<_> = works
            .iter()
            .map(|w| {
                let inst = cached_installer(&reg, w.path(), cache.path());
                s.spawn(move || run(&inst, &req(THING, "1.0.0", None), false).unwrap())
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(results[0].hashes, results[1].hashes, "case same_hashes");
    let (os, arch) = registry::os_arch();
    let cached = cache.path().join(format!(
        "registry.terrane.test/test/thing/1.0.0/{os}_{arch}"
    ));
    for (i, r) in results.iter().enumerate() {
        let link = std::fs::read_link(&r.dir).unwrap_or_else(|e| panic!("case linked_{i}: {e}"));
        assert_eq!(link, cached, "case links_to_cache_{i}");
    }
    assert_eq!(
        std::fs::read(cached.join("terraform-provider-thing_v1.0.0")).unwrap(),
        script_binary("1.0.0"),
        "case cache_holds_package"
    );
    assert!(leftovers(cache.path()).is_empty(), "case no_temp_in_cache");
    // A third working directory with the lock: linked from the cache,
    // no download.
    let zip = zip_path(&reg, "1.0.0");
    let downloads = || reg.requests().iter().filter(|s| s.path == zip).count();
    let before = downloads();
    let third = terrane_testkit::temp_dir();
    let inst = cached_installer(&reg, third.path(), cache.path());
    let got = run(
        &inst,
        &req(THING, "1.0.0", Some(lock_of(&results[0]))),
        false,
    )
    .unwrap();
    assert!(got.from_cache, "case from_cache");
    assert_eq!(downloads(), before, "case no_download");
}

#[test]
fn item4_tampered_provider_in_cache() {
    let reg = published();
    let cache = terrane_testkit::temp_dir();
    let first = terrane_testkit::temp_dir();
    let inst = cached_installer(&reg, first.path(), cache.path());
    let got = run(&inst, &req(THING, "1.0.0", None), false).unwrap();
    let exe = std::fs::canonicalize(got.dir.join("terraform-provider-thing_v1.0.0")).unwrap();
    std::fs::write(&exe, b"#!/bin/sh\necho evil\n").unwrap();
    let cases = [
        (
            "with_lock",
            Some(lock_of(&got)),
            "does not match any of the checksums recorded",
        ),
        ("without_lock", None, "does not match the verified download"),
    ];
    for (case, locked, want) in cases {
        let work = terrane_testkit::temp_dir();
        let inst = cached_installer(&reg, work.path(), cache.path());
        let err = run(&inst, &req(THING, "1.0.0", locked), false)
            .err()
            .unwrap_or_else(|| panic!("case {case}: installed a tampered package"))
            .to_string();
        assert!(
            err.contains(want)
                && err.contains(THING)
                && err.contains("altered after it was cached"),
            "case {case}: {err}"
        );
        assert!(
            walk(&work.path().join(".terraform")).is_empty(),
            "case {case}: nothing linked"
        );
        assert!(leftovers(cache.path()).is_empty(), "case {case}: no temp");
    }
}

#[test]
fn item2_network_mirror() {
    let reg = published();
    let work = terrane_testkit::temp_dir();
    let inst = installer(&reg, work.path(), Duration::from_secs(20));
    let mirrored = |c: &str| Requirement {
        mirror: Some(reg.mirror_url()),
        ..req(THING, c, None)
    };
    let got = run(&inst, &mirrored("~> 1.0"), false).unwrap();
    assert_eq!(got.version.to_string(), "1.1.0", "case newest_from_index");
    assert_eq!(got.signed_by, None, "case mirrors_are_not_signed");
    let h1: Vec<_> = got.hashes.iter().filter(|h| h.starts_with("h1:")).collect();
    // As Terraform: a mirror's package records the mirror's checksums for
    // this platform (which the package matched), no signed zh: list.
    assert_eq!(
        got.hashes.len(),
        1,
        "case only_own_platform_h1: {:?}",
        got.hashes
    );
    assert_eq!(h1.len(), 1, "case h1: {:?}", got.hashes);
    assert!(
        reg.requests().iter().all(|s| !s.path.starts_with("/v1/")),
        "case registry_not_asked"
    );
    // The mirror's checksum for this platform no longer matches the zip.
    let (os, arch) = registry::os_arch();
    let path = "/mirror/registry.terrane.test/test/thing/1.0.0.json";
    let Some(Answer::Body(doc)) = reg.get(path) else {
        panic!("no mirror document")
    };
    let doc = String::from_utf8(doc).unwrap();
    let ours = format!("\"{os}_{arch}\":{{\"url\":");
    let at = doc.find(&ours).unwrap();
    let h = doc[at..].find("h1:").unwrap() + at;
    let mut bad = doc.clone();
    bad.replace_range(h + 3..h + 7, "AAAA");
    reg.set(path, Answer::Body(bad.into_bytes()));
    let work = terrane_testkit::temp_dir();
    let inst = installer(&reg, work.path(), Duration::from_secs(20));
    let err = run(&inst, &mirrored("1.0.0"), false)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("match none of the mirror's"),
        "case mirror_hash_mismatch: {err}"
    );
    assert!(leftovers(work.path()).is_empty(), "case nothing_left");
    assert!(
        walk(
            &work
                .path()
                .join(".terraform/providers/registry.terrane.test")
        )
        .is_empty(),
        "case nothing_installed"
    );
}
