//! `terrane init` installing providers from a real local HTTPS registry
//! (issue 16 item 1), side by side with real Terraform pointed at the same
//! registry through the same CLI configuration and CA file: the same lock
//! file byte for byte, fresh and after `-upgrade`, the same installed
//! tree, then the same plan. The published provider is the project's own
//! random provider, zipped as a registry package and signed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use terrane_testkit::registry::{script_binary, zip_of, Registry};
use terrane_testkit::{isolated, temp_dir, terraform, Out};

fn terrane(reg: &Registry, dir: &Path, args: &[&str]) -> Out {
    let mut c = isolated(env!("CARGO_BIN_EXE_terrane"), dir);
    c.args(args)
        .env_remove("TF_DATA_DIR")
        .env_remove("TF_PLUGIN_CACHE_DIR");
    for (k, v) in reg.env() {
        c.env(k, v);
    }
    c.output().expect("terrane runs").into()
}

fn tf(reg: &Registry, dir: &Path, args: &[&str]) -> terrane_testkit::Output {
    let tf = terraform().expect("real Terraform");
    let env = reg.env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    tf.run(dir, args, &env)
}

fn random_binary() -> Vec<u8> {
    std::fs::read(terrane_testkit::built_binary(
        "terrane-provider-random",
        "terraform-provider-random",
    ))
    .expect("random provider binary")
}

/// Every file under `root`, relative, with its bytes (symlinks followed).
fn tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().display().to_string();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

const CONFIG: &str = r#"terraform {
  required_providers {
    random = {
      source  = "registry.terrane.test/test/random"
      version = "~> 1.0"
    }
    other = {
      source = "registry.terrane.test/test/other"
    }
  }
}

resource "random_id" "x" {
  byte_length = 4
}
"#;

/// Both tools' working directories for one configuration.
fn pair(config: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let root = temp_dir();
    let ours = root.path().join("terrane");
    let theirs = root.path().join("terraform");
    for d in [&ours, &theirs] {
        std::fs::create_dir(d).unwrap();
        std::fs::write(d.join("main.tf"), config).unwrap();
    }
    (root, ours, theirs)
}

fn lock(dir: &Path) -> String {
    std::fs::read_to_string(dir.join(".terraform.lock.hcl")).unwrap_or_default()
}

/// Both tools installed the same files with the same bytes under
/// `.terraform/providers`; returns the tree (terrane's).
#[track_caller]
fn same_installed_tree(ours: &Path, theirs: &Path) -> BTreeMap<String, Vec<u8>> {
    let (a, b) = (
        tree(&ours.join(".terraform/providers")),
        tree(&theirs.join(".terraform/providers")),
    );
    assert_eq!(
        a.keys().collect::<Vec<_>>(),
        b.keys().collect::<Vec<_>>(),
        "case same_installed_paths"
    );
    assert!(a == b, "case same_installed_bytes");
    a
}

#[test]
fn item1_init_installs_like_terraform_lock_tree_and_plan() {
    let reg = Registry::start();
    let bin = random_binary();
    for (ty, v) in [("random", "1.0.0"), ("random", "2.0.0"), ("other", "0.1.0")] {
        reg.publish("test", ty, v, &bin, &["6.0"]);
    }
    let (_root, ours, theirs) = pair(CONFIG);
    let o = terrane(&reg, &ours, &["init", "-input=false"]);
    assert_eq!(o.code, 0, "case terrane_init\n{}\n{}", o.stdout, o.stderr);
    for line in [
        "- Finding registry.terrane.test/test/random versions matching \"~> 1.0\"...",
        "- Finding latest version of registry.terrane.test/test/other...",
        "- Installing registry.terrane.test/test/random v1.0.0...",
        &format!(
            "- Installed registry.terrane.test/test/random v1.0.0 (self-signed, key ID {})",
            reg.key.id
        ),
    ] {
        assert!(
            o.stdout.contains(line),
            "case progress_line {line:?}\n{}",
            o.stdout
        );
    }
    let t = tf(&reg, &theirs, &["init", "-input=false", "-no-color"]);
    assert_eq!(t.code, 0, "case terraform_init\n{}\n{}", t.stdout, t.stderr);
    assert_eq!(lock(&ours), lock(&theirs), "case lock_byte_identical_fresh");
    same_installed_tree(&ours, &theirs);
    // A newer release within the constraints: -upgrade moves both.
    reg.publish("test", "random", "1.1.0", &bin, &["6.0"]);
    let o = terrane(&reg, &ours, &["init", "-input=false"]);
    assert_eq!(o.code, 0, "case terrane_reinit\n{}\n{}", o.stdout, o.stderr);
    assert!(
        o.stdout
            .contains("- Using previously-installed registry.terrane.test/test/random v1.0.0"),
        "case reuse_installed\n{}",
        o.stdout
    );
    let o = terrane(&reg, &ours, &["init", "-input=false", "-upgrade"]);
    assert_eq!(
        o.code, 0,
        "case terrane_upgrade\n{}\n{}",
        o.stdout, o.stderr
    );
    let t = tf(
        &reg,
        &theirs,
        &["init", "-input=false", "-upgrade", "-no-color"],
    );
    assert_eq!(
        t.code, 0,
        "case terraform_upgrade\n{}\n{}",
        t.stdout, t.stderr
    );
    assert!(
        lock(&ours).contains("version     = \"1.1.0\""),
        "case upgraded\n{}",
        lock(&ours)
    );
    assert_eq!(
        lock(&ours),
        lock(&theirs),
        "case lock_byte_identical_after_upgrade"
    );
    // Each tool plans in the directory the other initialized.
    let o = terrane(&reg, &theirs, &["plan", "-input=false", "-no-color"]);
    assert_eq!(
        o.code, 0,
        "case terrane_plans_terraform_dir\n{}\n{}",
        o.stdout, o.stderr
    );
    assert!(
        o.stdout
            .contains("Plan: 1 to add, 0 to change, 0 to destroy."),
        "case terrane_plan\n{}",
        o.stdout
    );
    let t = tf(&reg, &ours, &["plan", "-input=false", "-no-color"]);
    assert_eq!(
        t.code, 0,
        "case terraform_plans_terrane_dir\n{}\n{}",
        t.stdout, t.stderr
    );
    assert!(
        t.stdout
            .contains("Plan: 1 to add, 0 to change, 0 to destroy."),
        "case terraform_plan\n{}",
        t.stdout
    );
}

#[test]
fn item1_lockfile_readonly_refuses_changes() {
    let reg = Registry::start();
    reg.publish("test", "random", "1.0.0", &random_binary(), &["6.0"]);
    let (_root, ours, _) = pair(
        "terraform {\n  required_providers {\n    random = {\n      source = \"registry.terrane.test/test/random\"\n    }\n  }\n}\n",
    );
    let o = terrane(&reg, &ours, &["init", "-lockfile=readonly"]);
    assert_eq!(o.code, 1, "case readonly_without_lock\n{}", o.stdout);
    assert!(
        o.stderr.contains("Provider dependency changes detected")
            && o.stderr.contains("registry.terrane.test/test/random"),
        "case message\n{}",
        o.stderr
    );
    assert!(
        !ours.join(".terraform.lock.hcl").exists(),
        "case no_lock_written"
    );
    let o = terrane(&reg, &ours, &["init"]);
    assert_eq!(o.code, 0, "case init\n{}{}", o.stdout, o.stderr);
    let o = terrane(&reg, &ours, &["init", "-lockfile=readonly"]);
    assert_eq!(
        o.code, 0,
        "case readonly_with_matching_lock\n{}{}",
        o.stdout, o.stderr
    );
}

#[test]
fn item1_lock_hash_mismatch_names_provider_and_hashes() {
    let reg = Registry::start();
    reg.publish("test", "random", "1.0.0", &random_binary(), &["6.0"]);
    let (_root, ours, _) = pair(
        "terraform {\n  required_providers {\n    random = {\n      source = \"registry.terrane.test/test/random\"\n    }\n  }\n}\n",
    );
    std::fs::write(
        ours.join(".terraform.lock.hcl"),
        "provider \"registry.terrane.test/test/random\" {\n  version = \"1.0.0\"\n  hashes = [\n    \"h1:bm90IHRoZSByaWdodCBoYXNo\",\n  ]\n}\n",
    )
    .unwrap();
    let before = lock(&ours);
    let o = terrane(&reg, &ours, &["init"]);
    assert_eq!(o.code, 1, "case fails\n{}", o.stdout);
    assert!(
        o.stderr
            .contains("registry.terrane.test/test/random v1.0.0")
            && o.stderr.contains("h1:bm90IHRoZSByaWdodCBoYXNo")
            && o.stderr.contains("zh:"),
        "case message_names_both\n{}",
        o.stderr
    );
    assert_eq!(lock(&ours), before, "case lock_untouched");
    assert!(
        !ours
            .join(".terraform/providers/registry.terrane.test/test/random/1.0.0")
            .exists(),
        "case nothing_installed"
    );
}

const ONE_PROVIDER: &str = "terraform {\n  required_providers {\n    random = {\n      source  = \"registry.terrane.test/test/random\"\n      version = \">= 1.0\"\n    }\n  }\n}\n";

/// `providers lock -platform=...` and `providers mirror DIR`, each run by
/// both tools on the same configuration and registry: the same lock file
/// byte for byte, the same mirror files (zips byte for byte, JSON by
/// value).
#[test]
fn item2_providers_lock_and_mirror_like_terraform() {
    let reg = Registry::start();
    reg.publish("test", "random", "1.0.0", &random_binary(), &["6.0"]);
    let (_root, ours, theirs) = pair(ONE_PROVIDER);
    let (os, arch) = terrane_testkit::registry::os_arch();
    let here = format!("-platform={os}_{arch}");
    let args = ["providers", "lock", here.as_str(), "-platform=darwin_arm64"];
    let o = terrane(&reg, &ours, &args);
    assert_eq!(o.code, 0, "case terrane_lock\n{}{}", o.stdout, o.stderr);
    let t = tf(&reg, &theirs, &args);
    assert_eq!(t.code, 0, "case terraform_lock\n{}{}", t.stdout, t.stderr);
    assert_eq!(lock(&ours), lock(&theirs), "case lock_byte_identical");
    assert_eq!(
        lock(&ours).matches("\"h1:").count(),
        2,
        "case h1_per_platform\n{}",
        lock(&ours)
    );
    let o = terrane(
        &reg,
        &ours,
        &["providers", "mirror", here.as_str(), "../mirror-ours"],
    );
    assert_eq!(o.code, 0, "case terrane_mirror\n{}{}", o.stdout, o.stderr);
    let t = tf(
        &reg,
        &theirs,
        &["providers", "mirror", here.as_str(), "../mirror-theirs"],
    );
    assert_eq!(t.code, 0, "case terraform_mirror\n{}{}", t.stdout, t.stderr);
    let (a, b) = (
        tree(&ours.join("../mirror-ours")),
        tree(&theirs.join("../mirror-theirs")),
    );
    assert_eq!(
        a.keys().collect::<Vec<_>>(),
        b.keys().collect::<Vec<_>>(),
        "case same_mirror_files"
    );
    for (path, bytes) in &a {
        if path.ends_with(".json") {
            let x: serde_json::Value = serde_json::from_slice(bytes).unwrap();
            let y: serde_json::Value = serde_json::from_slice(&b[path]).unwrap();
            assert_eq!(x, y, "case same_json {path}");
        } else {
            assert!(bytes == &b[path], "case same_bytes {path}");
        }
    }
}

/// Two inits sharing TF_PLUGIN_CACHE_DIR at the same time: both succeed,
/// the cache holds one package, both working directories link to it.
#[test]
fn item2_plugin_cache_two_concurrent_inits() {
    let reg = Registry::start();
    reg.publish("test", "random", "1.0.0", &random_binary(), &["6.0"]);
    let root = temp_dir();
    let cache = root.path().join("cache");
    std::fs::create_dir(&cache).unwrap();
    let dirs: Vec<PathBuf> = (0..2).map(|i| root.path().join(format!("w{i}"))).collect();
    let children: Vec<_> = dirs
        .iter()
        .map(|d| {
            std::fs::create_dir(d).unwrap();
            std::fs::write(d.join("main.tf"), ONE_PROVIDER).unwrap();
            let mut c = isolated(env!("CARGO_BIN_EXE_terrane"), d);
            c.args(["init", "-input=false"])
                .env("TF_PLUGIN_CACHE_DIR", &cache)
                .env_remove("TF_DATA_DIR")
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped());
            for (k, v) in reg.env() {
                c.env(k, v);
            }
            c.spawn().expect("terrane runs")
        })
        .collect();
    for (i, c) in children.into_iter().enumerate() {
        let o: Out = c.wait_with_output().expect("wait").into();
        assert_eq!(o.code, 0, "case init_{i}\n{}{}", o.stdout, o.stderr);
    }
    let (os, arch) = terrane_testkit::registry::os_arch();
    let rel = format!("registry.terrane.test/test/random/1.0.0/{os}_{arch}");
    for (i, d) in dirs.iter().enumerate() {
        let link = std::fs::read_link(d.join(".terraform/providers").join(&rel))
            .unwrap_or_else(|e| panic!("case linked_{i}: {e}"));
        assert_eq!(link, cache.join(&rel), "case links_to_cache_{i}");
    }
    assert_eq!(lock(&dirs[0]), lock(&dirs[1]), "case same_lock");
    let leftovers = terrane_testkit::registry::leftovers(&cache);
    assert!(leftovers.is_empty(), "case no_temp_in_cache: {leftovers:?}");
}

/// Requests for package zips (`/dl/...`) after the first `since`.
fn downloads(reg: &Registry, since: usize) -> Vec<String> {
    reg.requests()
        .into_iter()
        .skip(since)
        .map(|s| s.path)
        .filter(|p| p.starts_with("/dl/"))
        .collect()
}

const THING: &str = "terraform {\n  required_providers {\n    thing = {\n      source = \"registry.terrane.test/test/thing\"\n    }\n  }\n}\n";

/// Issue 16 item 1: `init` starts no provider (Terraform's does not): a
/// configuration using a provider whose binary cannot serve anything (it
/// leaves a mark and exits) initializes with both tools, and neither ran
/// it. Before, terrane fetched every used provider's schema at init.
#[test]
fn item1_init_starts_no_provider() {
    let reg = Registry::start();
    let root = temp_dir();
    let mark = root.path().join("started");
    let bin = format!("#!/bin/sh\necho started >> '{}'\nexit 1\n", mark.display());
    reg.publish("test", "thing", "1.0.0", bin.as_bytes(), &["6.0"]);
    let config = format!("{THING}resource \"thing_x\" \"a\" {{}}\n");
    let (_root, ours, theirs) = pair(&config);
    let o = terrane(&reg, &ours, &["init", "-input=false"]);
    assert_eq!(o.code, 0, "case terrane_init\n{}{}", o.stdout, o.stderr);
    let t = tf(&reg, &theirs, &["init", "-input=false", "-no-color"]);
    assert_eq!(t.code, 0, "case terraform_init\n{}{}", t.stdout, t.stderr);
    assert!(!mark.exists(), "case no_provider_started");
    assert_eq!(lock(&ours), lock(&theirs), "case same_lock");
}

/// The configuration and CLI configuration of the packed-mirror test:
/// `random` comes from the filesystem mirror (a release zip; an older
/// unpacked version beside it), `other` is excluded from the mirror (its
/// zip there must be ignored) and comes from the registry.
fn packed_setup(reg: &Registry, mirror: &Path) {
    let (os, arch) = terrane_testkit::registry::os_arch();
    let base = mirror.join("registry.terrane.test/test");
    std::fs::create_dir_all(base.join("random")).unwrap();
    std::fs::create_dir_all(base.join("other")).unwrap();
    std::fs::write(
        base.join(format!(
            "random/terraform-provider-random_1.0.0_{os}_{arch}.zip"
        )),
        zip_of(
            "terraform-provider-random_v1.0.0",
            &script_binary("mirror random 1.0.0"),
        ),
    )
    .unwrap();
    let old = base.join(format!("random/0.9.0/{os}_{arch}"));
    std::fs::create_dir_all(&old).unwrap();
    let exe = old.join("terraform-provider-random_v0.9.0");
    std::fs::write(&exe, script_binary("mirror random 0.9.0")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(
        base.join(format!(
            "other/terraform-provider-other_0.1.0_{os}_{arch}.zip"
        )),
        zip_of(
            "terraform-provider-other_v0.1.0",
            &script_binary("mirror other, excluded"),
        ),
    )
    .unwrap();
    reg.publish(
        "test",
        "other",
        "0.1.0",
        &script_binary("registry other"),
        &["6.0"],
    );
    reg.write_cli_config(&format!(
        "provider_installation {{\n  filesystem_mirror {{\n    path    = \"{}\"\n    include = [\"registry.terrane.test/test/*\"]\n    exclude = [\"registry.terrane.test/test/other\"]\n  }}\n  direct {{\n    exclude = [\"registry.terrane.test/test/random\"]\n  }}\n}}\n",
        mirror.display()
    ));
}

const PACKED_CONFIG: &str = "terraform {\n  required_providers {\n    random = {\n      source = \"registry.terrane.test/test/random\"\n    }\n    other = {\n      source = \"registry.terrane.test/test/other\"\n    }\n  }\n}\n";

/// Issue 16 item 3: a packed filesystem mirror (release zips beside the
/// unpacked layout) with include/exclude, against Terraform: the same
/// lock file bytes, the same installed tree; a warm re-init reuses the
/// installed package; a mirror zip that no longer matches the lock is an
/// error naming the provider and both hashes, leaving nothing installed.
#[test]
fn item3_packed_filesystem_mirror_like_terraform() {
    let reg = Registry::start();
    let (root, ours, theirs) = pair(PACKED_CONFIG);
    let mirror = root.path().join("mirror");
    packed_setup(&reg, &mirror);
    let o = terrane(&reg, &ours, &["init", "-input=false"]);
    assert_eq!(o.code, 0, "case terrane_init\n{}{}", o.stdout, o.stderr);
    assert!(
        o.stdout
            .contains("- Installed registry.terrane.test/test/random v1.0.0 (unauthenticated)"),
        "case installed_from_zip\n{}",
        o.stdout
    );
    let t = tf(&reg, &theirs, &["init", "-input=false", "-no-color"]);
    assert_eq!(t.code, 0, "case terraform_init\n{}{}", t.stdout, t.stderr);
    assert_eq!(lock(&ours), lock(&theirs), "case lock_byte_identical");
    assert!(
        lock(&ours).contains("version = \"1.0.0\""),
        "case newest_of_both_layouts\n{}",
        lock(&ours)
    );
    let a = same_installed_tree(&ours, &theirs);
    let installed = String::from_utf8_lossy(
        a.iter()
            .find(|(k, _)| k.contains("/other/"))
            .map(|(_, v)| v.as_slice())
            .unwrap_or_default(),
    )
    .to_string();
    assert!(
        installed.contains("registry other"),
        "case excluded_zip_ignored: {installed}"
    );
    let since = reg.requests().len();
    let o = terrane(&reg, &ours, &["init", "-input=false"]);
    assert_eq!(o.code, 0, "case warm\n{}{}", o.stdout, o.stderr);
    assert!(
        o.stdout
            .contains("- Using previously-installed registry.terrane.test/test/random v1.0.0"),
        "case warm_reuses\n{}",
        o.stdout
    );
    assert_eq!(
        downloads(&reg, since),
        Vec::<String>::new(),
        "case warm_downloads_nothing"
    );
    // The mirror's zip replaced by another build: the lock no longer
    // vouches for it.
    let (os, arch) = terrane_testkit::registry::os_arch();
    std::fs::write(
        mirror.join(format!(
            "registry.terrane.test/test/random/terraform-provider-random_1.0.0_{os}_{arch}.zip"
        )),
        zip_of(
            "terraform-provider-random_v1.0.0",
            &script_binary("tampered"),
        ),
    )
    .unwrap();
    let fresh = root.path().join("fresh");
    std::fs::create_dir(&fresh).unwrap();
    std::fs::write(fresh.join("main.tf"), PACKED_CONFIG).unwrap();
    std::fs::write(fresh.join(".terraform.lock.hcl"), lock(&ours)).unwrap();
    let o = terrane(&reg, &fresh, &["init", "-input=false"]);
    assert_eq!(
        o.code, 1,
        "case tampered_zip_fails\n{}{}",
        o.stdout, o.stderr
    );
    assert!(
        o.stderr
            .contains("registry.terrane.test/test/random v1.0.0")
            && o.stderr.contains("zh:")
            && o.stderr.contains("h1:"),
        "case message_names_both\n{}",
        o.stderr
    );
    assert_eq!(lock(&fresh), lock(&ours), "case lock_untouched");
    let random = fresh.join(".terraform/providers/registry.terrane.test/test/random");
    assert!(!random.join("1.0.0").exists(), "case nothing_installed");
    let left = terrane_testkit::registry::leftovers(&fresh.join(".terraform"));
    assert!(left.is_empty(), "case no_temp_left: {left:?}");
}

/// Issue 16 item 4: a `.terraform/providers` tree Terraform installed is
/// reused by terrane's init (nothing downloaded, the lock and the tree
/// untouched), and Terraform reuses the tree terrane installed.
#[test]
fn item4_init_reuses_tree_the_other_tool_installed() {
    let reg = Registry::start();
    reg.publish("test", "thing", "1.0.0", &script_binary("thing"), &["6.0"]);
    let (_root, ours, theirs) = pair(THING);
    let t = tf(&reg, &theirs, &["init", "-input=false", "-no-color"]);
    assert_eq!(t.code, 0, "case terraform_init\n{}{}", t.stdout, t.stderr);
    let (lock_before, tree_before) = (lock(&theirs), tree(&theirs.join(".terraform/providers")));
    let since = reg.requests().len();
    let o = terrane(&reg, &theirs, &["init", "-input=false"]);
    assert_eq!(
        o.code, 0,
        "case terrane_in_terraform_dir\n{}{}",
        o.stdout, o.stderr
    );
    assert!(
        o.stdout
            .contains("- Using previously-installed registry.terrane.test/test/thing v1.0.0"),
        "case terrane_reuses\n{}",
        o.stdout
    );
    assert_eq!(
        downloads(&reg, since),
        Vec::<String>::new(),
        "case terrane_downloads_nothing"
    );
    assert_eq!(lock(&theirs), lock_before, "case lock_untouched");
    assert!(
        tree(&theirs.join(".terraform/providers")) == tree_before,
        "case tree_untouched"
    );
    let o = terrane(&reg, &ours, &["init", "-input=false"]);
    assert_eq!(o.code, 0, "case terrane_init\n{}{}", o.stdout, o.stderr);
    let lock_ours = lock(&ours);
    let since = reg.requests().len();
    let t = tf(&reg, &ours, &["init", "-input=false", "-no-color"]);
    assert_eq!(
        t.code, 0,
        "case terraform_in_terrane_dir\n{}{}",
        t.stdout, t.stderr
    );
    assert!(
        t.stdout
            .contains("- Using previously-installed registry.terrane.test/test/thing v1.0.0"),
        "case terraform_reuses\n{}",
        t.stdout
    );
    assert_eq!(
        downloads(&reg, since),
        Vec::<String>::new(),
        "case terraform_downloads_nothing"
    );
    assert_eq!(lock(&ours), lock_ours, "case terraform_keeps_lock");
}

/// Issue 16 point 4 through the CLI, with a shared plugin cache: each
/// failure is an error naming the provider and the reason, from both tools,
/// and leaves no lock file, nothing under `.terraform/providers` and nothing
/// (not even a temporary directory) in the plugin cache. The conflicting
/// constraints come from two modules: the root and a child it calls.
#[test]
fn item4_init_failures_leave_no_provider_in_any_cache() {
    const SOURCE: &str = "registry.terrane.test/test/random";
    let (os, arch) = terrane_testkit::registry::os_arch();
    let dl = "/dl/test/random/1.0.0/terraform-provider-random_1.0.0";
    let zip = format!("{dl}_{os}_{arch}.zip");
    let sums = format!("{dl}_SHA256SUMS");
    let needs = |constraint: &str| {
        format!("terraform {{\n  required_providers {{\n    random = {{\n      source  = \"{SOURCE}\"\n      version = \"{constraint}\"\n    }}\n  }}\n}}\n")
    };
    /// How a published file is replaced: its bytes to the new answer.
    type Breaks = fn(Vec<u8>) -> terrane_testkit::registry::Answer;
    struct Case {
        name: &'static str,
        /// The child module's constraint (the root asks for `~> 1.0`).
        child: &'static str,
        /// What to break on the registry: the path and how.
        broken: Option<(String, Breaks)>,
        want: &'static str,
    }
    use terrane_testkit::registry::Answer;
    let cases = [
        Case {
            name: "conflicting_constraints_across_modules",
            child: ">= 2.0",
            broken: None,
            want: "no available releases match the given constraints ~> 1.0, >= 2.0",
        },
        Case {
            name: "interrupted_download",
            child: ">= 1.0",
            broken: Some((zip.clone(), Answer::CutShort)),
            want: "request to https://127.0.0.1",
        },
        Case {
            name: "bad_checksum",
            child: ">= 1.0",
            broken: Some((zip.clone(), |_| Answer::Body(zip_of("x", b"evil")))),
            want: "archive has incorrect checksum",
        },
        Case {
            name: "bad_signature",
            child: ">= 1.0",
            broken: Some((sums.clone(), |mut s| {
                s.extend_from_slice(b"0000  extra.zip\n");
                Answer::Body(s)
            })),
            want: "does not verify",
        },
    ];
    for c in cases {
        let reg = Registry::start();
        for v in ["1.0.0", "2.0.0"] {
            reg.publish("test", "random", v, &script_binary(v), &["6.0"]);
        }
        if let Some((path, how)) = &c.broken {
            let Some(Answer::Body(body)) = reg.get(path) else {
                panic!("case {}: {path} not published", c.name)
            };
            reg.set(path, how(body));
        }
        let root = temp_dir();
        for tool in ["terrane", "terraform"] {
            let case = format!("{}_{tool}", c.name);
            let d = root.path().join(tool);
            let cache = root.path().join(format!("cache-{tool}"));
            std::fs::create_dir_all(d.join("child")).unwrap();
            std::fs::create_dir_all(&cache).unwrap();
            std::fs::write(
                d.join("main.tf"),
                format!(
                    "{}\nmodule \"child\" {{\n  source = \"./child\"\n}}\n",
                    needs("~> 1.0")
                ),
            )
            .unwrap();
            std::fs::write(d.join("child/main.tf"), needs(c.child)).unwrap();
            let cache_env = cache.display().to_string();
            let (code, stderr) = if tool == "terrane" {
                let mut cmd = isolated(env!("CARGO_BIN_EXE_terrane"), &d);
                cmd.args(["init", "-input=false", "-no-color"])
                    .env_remove("TF_DATA_DIR")
                    .env("TF_PLUGIN_CACHE_DIR", &cache_env);
                for (k, v) in reg.env() {
                    cmd.env(k, v);
                }
                let o: Out = cmd.output().expect("terrane runs").into();
                (o.code, o.stderr)
            } else {
                let env = reg.env();
                let mut env: Vec<(&str, &str)> =
                    env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
                env.push(("TF_PLUGIN_CACHE_DIR", &cache_env));
                let o = terraform().expect("real Terraform").run(
                    &d,
                    &["init", "-input=false", "-no-color"],
                    &env,
                );
                (o.code, o.stderr)
            };
            assert_eq!(code, 1, "case {case}: exit\n{stderr}");
            if tool == "terrane" {
                let flat = terrane_testkit::unwrapped(&stderr);
                assert!(
                    flat.contains(SOURCE) && flat.contains(c.want),
                    "case {case}: {:?} and {SOURCE} expected in\n{stderr}",
                    c.want
                );
            }
            assert!(
                !d.join(".terraform.lock.hcl").exists(),
                "case {case}: lock file written"
            );
            let installed = tree(&d.join(".terraform/providers"));
            assert!(installed.is_empty(), "case {case}: installed {installed:?}");
            let cached = tree(&cache);
            assert!(cached.is_empty(), "case {case}: cached {cached:?}");
            if tool == "terrane" {
                let temp = terrane_testkit::registry::leftovers(&cache);
                assert!(temp.is_empty(), "case {case}: temporary {temp:?}");
            }
        }
    }
}

/// Issue 16 item 1: `init` through a `network_mirror` block (the
/// registry's releases served under Terraform's Provider Network Mirror
/// Protocol), side by side with Terraform given the same CLI
/// configuration: the same lock file byte for byte (the mirror's `h1:`
/// for this platform, no signed `zh:` list), the same installed tree, and
/// neither tool asks the registry's API.
#[test]
fn item1_init_through_a_network_mirror_like_terraform() {
    let reg = Registry::start();
    let bin = random_binary();
    for (ty, v) in [("random", "1.0.0"), ("random", "1.1.0"), ("other", "0.1.0")] {
        reg.publish("test", ty, v, &bin, &["6.0"]);
    }
    reg.write_cli_config(&format!(
        "provider_installation {{\n  network_mirror {{\n    url = \"{}\"\n  }}\n}}\n",
        reg.mirror_url()
    ));
    let (_root, ours, theirs) = pair(CONFIG);
    let since = reg.requests().len();
    let o = terrane(&reg, &ours, &["init", "-input=false"]);
    assert_eq!(o.code, 0, "case terrane_init\n{}\n{}", o.stdout, o.stderr);
    let t = tf(&reg, &theirs, &["init", "-input=false", "-no-color"]);
    assert_eq!(t.code, 0, "case terraform_init\n{}\n{}", t.stdout, t.stderr);
    assert_eq!(lock(&ours), lock(&theirs), "case lock_byte_identical");
    assert!(
        lock(&ours).contains("version     = \"1.1.0\"") && !lock(&ours).contains("zh:"),
        "case newest_matching_with_mirror_hashes\n{}",
        lock(&ours)
    );
    same_installed_tree(&ours, &theirs);
    // The mirror's documents point at the packages (under /dl/); the
    // registry's own API is never asked.
    let asked: Vec<String> = reg.requests()[since..]
        .iter()
        .map(|s| s.path.clone())
        .filter(|p| !p.starts_with("/mirror/") && !p.starts_with("/dl/"))
        .collect();
    assert_eq!(asked, Vec::<String>::new(), "case registry_api_not_asked");
    let plan = terrane(&reg, &ours, &["plan", "-input=false", "-no-color"]);
    assert!(
        plan.code == 0 && plan.stdout.contains("Plan: 1 to add"),
        "case plan\n{}{}",
        plan.stdout,
        plan.stderr
    );
}

/// Issue 16 item 1, bad input: a network mirror that answers its version
/// index as something other than JSON (an HTML error page, say) is refused
/// by both tools, terrane naming the URL and the type; nothing installed.
#[test]
fn item1_network_mirror_answer_that_is_not_json_is_refused() {
    use terrane_testkit::registry::{Answer, HOST};
    let reg = Registry::start();
    reg.publish("test", "random", "1.0.0", &random_binary(), &["6.0"]);
    reg.write_cli_config(&format!(
        "provider_installation {{\n  network_mirror {{\n    url = \"{}\"\n  }}\n}}\n",
        reg.mirror_url()
    ));
    let index = format!("/mirror/{HOST}/test/random/index.json");
    let Some(Answer::Body(body)) = reg.get(&index) else {
        panic!("case published: no index at {index}")
    };
    reg.set(&index, Answer::Typed(body, "text/html; charset=utf-8"));
    let (_root, ours, theirs) = pair(CONFIG);
    let o = terrane(&reg, &ours, &["init", "-input=false", "-no-color"]);
    let text = terrane_testkit::unwrapped(&o.stderr);
    assert!(
        o.code == 1 && text.contains("index.json") && text.contains("text/html"),
        "case terrane_refuses\n{}\n{}",
        o.stdout,
        o.stderr
    );
    assert!(
        !ours.join(".terraform/providers").exists() && !ours.join(".terraform.lock.hcl").exists(),
        "case terrane_installs_nothing"
    );
    let t = tf(&reg, &theirs, &["init", "-input=false", "-no-color"]);
    assert_eq!(
        t.code, 1,
        "case terraform_refuses\n{}\n{}",
        t.stdout, t.stderr
    );
}
