//! `terrane init`/`get` installing modules (issue 16 item 2) from a real
//! local HTTPS registry (the Module Registry Protocol, two versions of a
//! module, downloads through `X-Terraform-Get`), a local bare git
//! repository (`git::file://`, with `?ref=` and `//subdir`) and archives
//! served by the same HTTPS server (`.zip`, `.tar.gz` with a subdir), side
//! by side with real Terraform pointed at the same registry: the same
//! module tree and `modules.json`, each tool working in the directory the
//! other initialized, then the same plan. Every failure has a named test
//! that asserts the message and that nothing was left half-installed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use terrane_testkit::registry::{tar_gz_of, zip_files, Answer, Registry};
use terrane_testkit::{isolated, temp_dir, terraform, Out};

fn terrane(reg: &Registry, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Out {
    let mut c = isolated(env!("CARGO_BIN_EXE_terrane"), dir);
    c.args(args)
        .env_remove("TF_DATA_DIR")
        .env_remove("TF_PLUGIN_CACHE_DIR");
    for (k, v) in reg.env() {
        c.env(k, v);
    }
    for (k, v) in env {
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

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A bare repository with `mods/g/main.tf` at tag `v1` (and a later commit
/// on main that changes it, so the ref matters). Returns its file:// URL.
fn git_repo(root: &Path) -> String {
    let work = root.join("gitwork");
    std::fs::create_dir_all(work.join("mods/g")).unwrap();
    git(&work, &["init", "-q"]);
    std::fs::write(
        work.join("mods/g/main.tf"),
        "output \"v\" {\n  value = \"git-v1\"\n}\n",
    )
    .unwrap();
    git(&work, &["add", "."]);
    git(&work, &["commit", "-q", "-m", "one"]);
    git(&work, &["tag", "v1"]);
    std::fs::write(
        work.join("mods/g/main.tf"),
        "output \"v\" {\n  value = \"git-main\"\n}\n",
    )
    .unwrap();
    git(&work, &["commit", "-q", "-am", "two"]);
    git(root, &["clone", "-q", "--bare", "gitwork", "repo.git"]);
    format!("file://{}", root.join("repo.git").display())
}

fn net_module(version: &str, git_url: &str) -> Vec<(String, String)> {
    let mut files = vec![
        (
            "main.tf".to_string(),
            format!(
                "variable \"n\" {{}}\n\nmodule \"sub\" {{\n  source = \"./modules/sub\"\n}}\n\noutput \"v\" {{\n  value = \"net-{version}-${{var.n}}-${{module.sub.v}}\"\n}}\n"
            ),
        ),
        (
            "modules/sub/main.tf".to_string(),
            "output \"v\" {\n  value = \"sub\"\n}\n".to_string(),
        ),
    ];
    if version == "1.1.0" {
        // The newer version calls a remote module of its own.
        files[0].1.push_str(&format!(
            "\nmodule \"inner\" {{\n  source = \"git::{git_url}//mods/g?ref=v1\"\n}}\n\noutput \"inner\" {{\n  value = module.inner.v\n}}\n"
        ));
    }
    files
}

struct World {
    reg: Registry,
    root: tempfile::TempDir,
    git_url: String,
}

fn world() -> World {
    let reg = Registry::start();
    let root = temp_dir();
    let git_url = git_repo(root.path());
    for v in ["1.0.0", "1.1.0"] {
        let files = net_module(v, &git_url);
        let files: Vec<(&str, &str)> = files
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        reg.publish_module("test", "net", "null", v, &files);
    }
    reg.set(
        "/archives/z.zip",
        Answer::Body(zip_files(&[(
            "main.tf",
            "output \"v\" {\n  value = \"zip\"\n}\n",
        )])),
    );
    reg.set(
        "/archives/t.tar.gz",
        Answer::Body(tar_gz_of(&[
            ("README", "not a module"),
            ("inner/main.tf", "output \"v\" {\n  value = \"tgz\"\n}\n"),
        ])),
    );
    World { reg, root, git_url }
}

impl World {
    fn config(&self) -> String {
        let base = self.reg.base();
        let git_url = &self.git_url;
        format!(
            r#"module "net" {{
  source  = "registry.terrane.test/test/net/null"
  version = "~> 1.0"
  n       = "a"
}}

module "old" {{
  source  = "registry.terrane.test/test/net/null"
  version = "1.0.0"
  n       = "b"
}}

module "gitmod" {{
  source = "git::{git_url}//mods/g?ref=v1"
}}

module "zipped" {{
  source = "{base}/archives/z.zip"
}}

module "tgz" {{
  source = "{base}/archives/t.tar.gz//inner"
}}

module "local" {{
  source = "./local"
}}

output "all" {{
  value = [module.net.v, module.net.inner, module.old.v, module.gitmod.v, module.zipped.v, module.tgz.v, module.local.v]
}}
"#
        )
    }

    /// A working directory holding `config` and the local module.
    fn dir(&self, name: &str, config: &str) -> PathBuf {
        let d = self.root.path().join(name);
        std::fs::create_dir_all(d.join("local")).unwrap();
        std::fs::write(d.join("main.tf"), config).unwrap();
        std::fs::write(
            d.join("local/main.tf"),
            "output \"v\" {\n  value = \"local\"\n}\n",
        )
        .unwrap();
        d
    }
}

/// Every file under `root` except git's own, relative, with its bytes.
fn tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.file_name().is_some_and(|n| n == ".git") {
                continue;
            }
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

fn manifest(dir: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join(".terraform/modules/modules.json"))
        .unwrap_or_else(|e| panic!("no modules.json in {}: {e}", dir.display()));
    serde_json::from_str(&text).unwrap()
}

/// The plan's "Changes to Outputs" section, without the closing sentence
/// (which names the tool).
fn outputs_section(plan: &str) -> String {
    let start = plan
        .find("Changes to Outputs:")
        .unwrap_or_else(|| panic!("no output changes in\n{plan}"));
    plan[start..]
        .lines()
        .take_while(|l| !l.starts_with("You can apply") && !l.starts_with('─'))
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_string()
}

#[test]
fn item2_init_installs_modules_like_terraform_tree_manifest_and_plan() {
    let w = world();
    let config = w.config();
    let ours = w.dir("terrane", &config);
    let theirs = w.dir("terraform", &config);
    let o = terrane(&w.reg, &ours, &["init", "-input=false", "-no-color"], &[]);
    assert_eq!(o.code, 0, "case terrane_init\n{}\n{}", o.stdout, o.stderr);
    for line in [
        "Initializing modules...",
        "Downloading registry.terrane.test/test/net/null 1.1.0 for net...",
        "- net in .terraform/modules/net",
        "Downloading registry.terrane.test/test/net/null 1.0.0 for old...",
        "- net.sub in .terraform/modules/net/modules/sub",
        "- local in local",
        "- tgz in .terraform/modules/tgz/inner",
        "- net.inner in .terraform/modules/net.inner/mods/g",
    ] {
        assert!(
            o.stdout.contains(line),
            "case progress {line:?}\n{}",
            o.stdout
        );
    }
    let modules_at = o.stdout.find("Initializing modules...").unwrap();
    let providers_at = o.stdout.find("Initializing provider plugins").unwrap();
    assert!(modules_at < providers_at, "case modules_before_providers");

    let t = tf(&w.reg, &theirs, &["init", "-input=false", "-no-color"]);
    assert_eq!(t.code, 0, "case terraform_init\n{}\n{}", t.stdout, t.stderr);
    assert_eq!(manifest(&ours), manifest(&theirs), "case same_modules_json");
    let (a, b) = (
        tree(&ours.join(".terraform/modules")),
        tree(&theirs.join(".terraform/modules")),
    );
    assert_eq!(
        a.keys().collect::<Vec<_>>(),
        b.keys().collect::<Vec<_>>(),
        "case same_module_paths"
    );
    assert!(a == b, "case same_module_bytes");

    // The same plan, and each tool plans in the directory the other
    // initialized.
    let ours_plan = terrane(&w.reg, &ours, &["plan", "-no-color"], &[]);
    assert_eq!(ours_plan.code, 0, "case terrane_plan\n{}", ours_plan.stderr);
    let theirs_plan = tf(&w.reg, &theirs, &["plan", "-no-color"]);
    assert_eq!(
        theirs_plan.code, 0,
        "case terraform_plan\n{}",
        theirs_plan.stderr
    );
    let want = outputs_section(&theirs_plan.stdout);
    assert!(
        want.contains("\"net-1.1.0-a-sub\""),
        "case versions_selected\n{want}"
    );
    assert!(want.contains("\"git-v1\""), "case git_ref_honoured\n{want}");
    assert_eq!(outputs_section(&ours_plan.stdout), want, "case same_plan");
    let cross = terrane(&w.reg, &theirs, &["plan", "-no-color"], &[]);
    assert_eq!(
        cross.code, 0,
        "case terrane_in_terraform_dir\n{}",
        cross.stderr
    );
    assert_eq!(
        outputs_section(&cross.stdout),
        want,
        "case terrane_reads_terraform_install"
    );
    let cross = tf(&w.reg, &ours, &["plan", "-no-color"]);
    assert_eq!(
        cross.code, 0,
        "case terraform_in_terrane_dir\n{}",
        cross.stderr
    );
    assert_eq!(
        outputs_section(&cross.stdout),
        want,
        "case terraform_reads_terrane_install"
    );
}

#[test]
fn item4_get_and_get_update() {
    let w = world();
    let config = "module \"net\" {\n  source  = \"registry.terrane.test/test/net/null\"\n  version = \"1.0.0\"\n  n       = \"a\"\n}\n";
    let d = w.dir("get", config);
    let o = terrane(&w.reg, &d, &["get", "-no-color"], &[]);
    assert_eq!(o.code, 0, "case get\n{}\n{}", o.stdout, o.stderr);
    assert!(
        o.stdout
            .contains("Downloading registry.terrane.test/test/net/null 1.0.0 for net..."),
        "case get_downloads\n{}",
        o.stdout
    );
    let m = manifest(&d);
    assert_eq!(m["Modules"][1]["Version"], "1.0.0", "case recorded_version");
    // Installed and still fitting: nothing downloaded again.
    let before = w.reg.requests().len();
    let o = terrane(&w.reg, &d, &["get"], &[]);
    assert_eq!(o.code, 0, "case get_again\n{}", o.stderr);
    assert!(!o.stdout.contains("Downloading"), "case kept\n{}", o.stdout);
    assert_eq!(w.reg.requests().len(), before, "case no_request_when_kept");
    // A wider constraint: -update fetches the newest allowed.
    std::fs::write(d.join("main.tf"), config.replace("\"1.0.0\"", "\">= 1.0\"")).unwrap();
    let o = terrane(&w.reg, &d, &["get", "-update"], &[]);
    assert_eq!(o.code, 0, "case update\n{}\n{}", o.stdout, o.stderr);
    assert_eq!(
        manifest(&d)["Modules"][1]["Version"],
        "1.1.0",
        "case updated"
    );
    assert!(
        d.join(".terraform/modules/net.inner/mods/g/main.tf")
            .is_file(),
        "case nested_remote_installed"
    );
}

#[test]
fn item3_tf_data_dir_honoured() {
    let w = world();
    let config = "module \"z\" {\n  source = \"BASE/archives/z.zip\"\n}\n\noutput \"v\" {\n  value = module.z.v\n}\n"
        .replace("BASE", &w.reg.base());
    let d = w.dir("datadir", &config);
    let env = [("TF_DATA_DIR", "elsewhere")];
    let o = terrane(&w.reg, &d, &["init", "-no-color"], &env);
    assert_eq!(o.code, 0, "case init\n{}\n{}", o.stdout, o.stderr);
    assert!(
        o.stdout.contains("- z in elsewhere/modules/z"),
        "case line\n{}",
        o.stdout
    );
    assert!(
        d.join("elsewhere/modules/z/main.tf").is_file(),
        "case installed_there"
    );
    assert!(
        !d.join(".terraform/modules").exists(),
        "case not_in_default"
    );
    let p = terrane(&w.reg, &d, &["plan", "-no-color"], &env);
    assert_eq!(p.code, 0, "case plan_with_data_dir\n{}", p.stderr);
    let p = terrane(&w.reg, &d, &["plan", "-no-color"], &[]);
    assert_eq!(p.code, 1, "case plan_without_data_dir");
    assert!(
        p.stderr.contains("Module not installed"),
        "case not_installed\n{}",
        p.stderr
    );
}

/// Runs `init` on a configuration whose `good` module installs and whose
/// `bad` one fails; checks the message names the module, the source and
/// the reason, and that nothing was left behind.
fn check_failure(case: &str, w: &World, bad_source: &str, bad_version: Option<&str>, reason: &str) {
    check_failure_env(case, w, bad_source, bad_version, reason, &[]);
}

/// [`check_failure`] with `env` added to terrane's environment.
fn check_failure_env(
    case: &str,
    w: &World,
    bad_source: &str,
    bad_version: Option<&str>,
    reason: &str,
    env: &[(&str, &str)],
) {
    let version = bad_version
        .map(|v| format!("  version = \"{v}\"\n"))
        .unwrap_or_default();
    let config = format!(
        "module \"good\" {{\n  source = \"{}/archives/z.zip\"\n}}\n\nmodule \"bad\" {{\n  source = \"{bad_source}\"\n{version}}}\n",
        w.reg.base()
    );
    let d = w.dir(case, &config);
    let o = terrane(&w.reg, &d, &["init", "-no-color"], env);
    assert_eq!(o.code, 1, "case {case}: exit\n{}\n{}", o.stdout, o.stderr);
    for want in ["Module \"bad\"", bad_source, reason] {
        assert!(
            terrane_testkit::unwrapped(&o.stderr).contains(&terrane_testkit::unwrapped(want)),
            "case {case}: {want:?} missing from\n{}",
            o.stderr
        );
    }
    let modules = d.join(".terraform/modules");
    let left: Vec<String> = std::fs::read_dir(&modules)
        .map(|r| {
            r.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    assert!(left.is_empty(), "case {case}: left behind {left:?}");
}

#[test]
fn item5_module_version_that_does_not_exist() {
    let w = world();
    check_failure(
        "no_version",
        &w,
        "registry.terrane.test/test/net/null",
        Some("9.9.9"),
        "no available version matches the constraint \"9.9.9\" (available: 1.1.0, 1.0.0)",
    );
}

#[test]
fn item5_registry_404_500_and_garbage() {
    let w = world();
    let versions = "/v1/modules/test/net/null/versions";
    let download = "/v1/modules/test/net/null/1.1.0/download";
    let cases: Vec<(&str, &str, Answer, &str)> = vec![
        (
            "registry_404",
            versions,
            Answer::Status(404),
            "has no module test/net/null",
        ),
        (
            "registry_500",
            versions,
            Answer::Status(500),
            "answered 500",
        ),
        (
            "registry_garbage",
            versions,
            Answer::Body(b"<html>".to_vec()),
            "is not JSON",
        ),
        (
            "download_500",
            download,
            Answer::Status(500),
            "answered 500",
        ),
        (
            "download_without_location",
            download,
            Answer::Body(b"{}".to_vec()),
            "has no location",
        ),
    ];
    for (case, path, answer, reason) in cases {
        let saved = w.reg.get(path);
        w.reg.set(path, answer);
        check_failure(
            case,
            &w,
            "registry.terrane.test/test/net/null",
            None,
            reason,
        );
        w.reg.set(path, saved.expect("published"));
    }
}

/// A module registry that answers nothing: the client's timeout
/// (`TF_REGISTRY_CLIENT_TIMEOUT`, as Terraform's) ends the wait.
#[test]
fn item5_module_registry_timeout() {
    let w = world();
    for path in [
        "/v1/modules/test/net/null/versions",
        "/v1/modules/test/net/null/1.1.0/download",
    ] {
        let saved = w.reg.get(path);
        w.reg.set(path, Answer::Silence);
        check_failure_env(
            &format!("silent{}", path.replace('/', "_")),
            &w,
            "registry.terrane.test/test/net/null",
            None,
            "timed out after 2s",
            &[("TF_REGISTRY_CLIENT_TIMEOUT", "2")],
        );
        w.reg.set(path, saved.expect("published"));
    }
}

#[test]
fn item5_git_ref_that_does_not_exist() {
    let w = world();
    let source = format!("git::{}//mods/g?ref=nope", w.git_url);
    check_failure(
        "git_ref",
        &w,
        &source,
        None,
        "the git ref \"nope\" does not exist",
    );
}

#[test]
fn item5_bad_archive() {
    let w = world();
    let escape = {
        // A hostile archive: an entry that climbs out of the package.
        let mut header = tar::Header::new_gnu();
        header.set_size(1);
        header.set_mode(0o644);
        header.set_entry_type(tar::EntryType::Regular);
        let name = b"../../escaped";
        header.as_old_mut().name[..name.len()].copy_from_slice(name);
        header.set_cksum();
        let mut b = tar::Builder::new(flate2::write::GzEncoder::new(
            Vec::new(),
            flate2::Compression::default(),
        ));
        b.append(&header, &b"x"[..]).unwrap();
        b.into_inner().unwrap().finish().unwrap()
    };
    w.reg
        .set("/archives/garbage.zip", Answer::Body(b"garbage".to_vec()));
    w.reg.set("/archives/escape.tar.gz", Answer::Body(escape));
    w.reg.set(
        "/archives/cut.tar.gz",
        Answer::CutShort(tar_gz_of(&[("main.tf", "# x\n")])),
    );
    let cases = [
        ("bad_zip", "garbage.zip", "not a valid zip file"),
        ("escape", "escape.tar.gz", "outside its directory"),
        ("cut_short", "cut.tar.gz", "download"),
        ("missing", "missing.zip", "answered 404"),
    ];
    for (case, file, reason) in cases {
        let source = format!("{}/archives/{file}", w.reg.base());
        check_failure(case, &w, &source, None, reason);
        assert!(
            !w.root.path().join("escaped").exists(),
            "case {case}: escaped"
        );
    }
}

#[test]
fn item1_registry_download_through_json_location() {
    let w = world();
    let archive = w.reg.publish_module(
        "test",
        "json",
        "null",
        "2.0.0",
        &[("main.tf", "output \"v\" {\n  value = \"json\"\n}\n")],
    );
    // The newer form of the download answer: 200 with a JSON location,
    // relative to the download URL.
    w.reg.set(
        "/v1/modules/test/json/null/2.0.0/download",
        Answer::Body(format!("{{\"location\":\"{archive}\"}}").into_bytes()),
    );
    let config = "module \"j\" {\n  source = \"registry.terrane.test/test/json/null\"\n}\n";
    let d = w.dir("json_location", config);
    let o = terrane(&w.reg, &d, &["get", "-no-color"], &[]);
    assert_eq!(o.code, 0, "case get\n{}\n{}", o.stdout, o.stderr);
    assert!(
        d.join(".terraform/modules/j/main.tf").is_file(),
        "case installed"
    );
    assert_eq!(
        manifest(&d)["Modules"][1]["Version"],
        "2.0.0",
        "case version"
    );
}

/// Credentials inside a module source (a password or token in the URL, a
/// presigned archive's signature) never reach the progress lines or the
/// error, while the module and the rest of its address are still named.
#[test]
fn secrets_in_module_sources_are_not_printed() {
    let w = world();
    let base = w.reg.base();
    let host = base.trim_start_matches("https://");
    let cases = [
        (
            "git_password",
            format!("git::https://alice:s3cr3t-pw@{host}/nothing.git?ref=v1"),
            "git::https://alice:REDACTED@",
        ),
        (
            "git_token_as_user",
            format!("git::https://ghp_s3cr3t@{host}/nothing.git"),
            "git::https://REDACTED@",
        ),
        (
            "presigned_archive",
            format!("{base}/archives/missing.zip?X-Amz-Signature=sig-s3cr3t&x=1"),
            "X-Amz-Signature=REDACTED&x=1",
        ),
    ];
    for (case, source, shown) in cases {
        let d = w.dir(
            case,
            &format!("module \"bad\" {{\n  source = \"{source}\"\n}}\n"),
        );
        let o = terrane(&w.reg, &d, &["init", "-no-color"], &[]);
        let all = format!("{}\n{}", o.stdout, o.stderr);
        assert_eq!(o.code, 1, "case {case}: exit\n{all}");
        assert!(
            !all.contains("s3cr3t"),
            "case {case}: secret printed\n{all}"
        );
        let text = terrane_testkit::unwrapped(&all);
        for want in ["Module \"bad\"", shown] {
            assert!(
                text.contains(want),
                "case {case}: {want:?} missing from\n{all}"
            );
        }
    }
}

/// `args` run by terrane or by real Terraform, in `dir`.
fn either(tool: &str, reg: &Registry, dir: &Path, args: &[&str]) -> Out {
    if tool == "terrane" {
        return terrane(reg, dir, args, &[]);
    }
    let o = tf(reg, dir, args);
    Out {
        code: o.code,
        stdout: o.stdout,
        stderr: o.stderr,
    }
}

/// `init -get=false` (Terraform's meaning): no module is installed or
/// updated, the module registry is not asked, and a module not installed
/// yet is an error, from both tools alike.
#[test]
fn item3_init_get_false_installs_no_module() {
    let w = world();
    let config = "module \"net\" {\n  source  = \"registry.terrane.test/test/net/null\"\n  version = \"1.0.0\"\n  n       = \"a\"\n}\n";
    struct Case {
        name: &'static str,
        /// Installs 1.0.0 first (with `get`), then widens the constraint.
        installed: bool,
        code: i32,
        stderr: &'static str,
    }
    let cases = [
        Case {
            name: "not_installed",
            installed: false,
            code: 1,
            stderr: "Module not installed",
        },
        Case {
            name: "installed_kept",
            installed: true,
            code: 0,
            stderr: "",
        },
    ];
    let module_requests = || {
        w.reg
            .requests()
            .iter()
            .filter(|s| s.path.starts_with("/v1/modules/") || s.path.starts_with("/archives/"))
            .count()
    };
    for c in cases {
        for tool in ["terrane", "terraform"] {
            let case = format!("{}_{tool}", c.name);
            let d = w.dir(&case, config);
            if c.installed {
                let o = either(tool, &w.reg, &d, &["get"]);
                assert_eq!(o.code, 0, "case {case}: get\n{}", o.stderr);
                std::fs::write(d.join("main.tf"), config.replace("\"1.0.0\"", "\">= 1.0\""))
                    .unwrap();
            }
            let before = module_requests();
            let args = [
                "init",
                "-get=false",
                "-upgrade",
                "-input=false",
                "-no-color",
            ];
            let o = either(tool, &w.reg, &d, &args);
            assert_eq!(
                o.code, c.code,
                "case {case}: exit\n{}\n{}",
                o.stdout, o.stderr
            );
            assert!(
                o.stderr.contains(c.stderr),
                "case {case}: {:?} missing\n{}",
                c.stderr,
                o.stderr
            );
            assert!(
                !o.stdout.contains("modules..."),
                "case {case}: modules were handled\n{}",
                o.stdout
            );
            assert_eq!(module_requests(), before, "case {case}: asked the registry");
            let modules = d.join(".terraform/modules");
            if c.installed {
                assert_eq!(
                    manifest(&d)["Modules"][1]["Version"],
                    "1.0.0",
                    "case {case}: kept the installed version"
                );
            } else {
                assert!(!modules.exists(), "case {case}: installed a module");
            }
        }
    }
}

/// Terraform 1.15 evaluates a module's `source` and `version` at init
/// from literals, const variables and locals over them, the calling
/// module's arguments included. Each step runs under both tools, each in
/// its own directory: the same exit code, the same `modules.json` after
/// an init, the same output changes after a plan, the same error summary
/// and line after a failure.
#[test]
fn const_variables_in_module_sources_and_versions() {
    let w = world();
    let config = r#"variable "net_version" {
  const   = true
  default = "1.0.0"
}

variable "which" {
  const   = true
  type    = string
  default = "leafa"
}

variable "not_const" {
  default = "1.0.0"
}

locals {
  v = var.net_version
}

module "net" {
  source  = "registry.terrane.test/test/net/null"
  version = local.v
  n       = "a"
}

module "mid" {
  source = "./mid"
  which  = var.which
}

output "all" {
  value = [module.net.v, module.mid.o]
}
"#;
    let mid = "variable \"which\" {\n  const = true\n  type  = string\n}\n\nmodule \"leaf\" {\n  source = \"../${var.which}\"\n}\n\noutput \"o\" {\n  value = module.leaf.o\n}\n";
    struct Step {
        name: &'static str,
        args: &'static [&'static str],
        /// Replaces the configuration's text before the step, when set.
        edit: Option<(&'static str, &'static str)>,
        code: i32,
        /// An error summary both must report (failures), or the text the
        /// output changes must hold (plans).
        expect: &'static str,
    }
    let steps = [
        Step {
            name: "init_with_defaults",
            args: &["init", "-input=false", "-no-color"],
            edit: None,
            code: 0,
            expect: "",
        },
        Step {
            name: "plan_with_defaults",
            args: &["plan", "-input=false", "-no-color"],
            edit: None,
            code: 0,
            expect: "\"net-1.0.0-a-sub\",\n      + \"leaf a\",",
        },
        Step {
            name: "init_with_vars",
            args: &[
                "init",
                "-input=false",
                "-no-color",
                "-var=which=leafb",
                "-var=net_version=1.1.0",
            ],
            edit: None,
            code: 0,
            expect: "",
        },
        Step {
            name: "plan_with_vars",
            args: &[
                "plan",
                "-input=false",
                "-no-color",
                "-var=which=leafb",
                "-var=net_version=1.1.0",
            ],
            edit: None,
            code: 0,
            expect: "\"net-1.1.0-a-sub\",\n      + \"leaf b\",",
        },
        Step {
            name: "plan_after_the_source_changed",
            args: &[
                "plan",
                "-input=false",
                "-no-color",
                "-var=net_version=1.1.0",
            ],
            edit: None,
            code: 1,
            expect: "Module source has changed",
        },
        Step {
            name: "init_with_a_variable_that_is_not_const",
            args: &["init", "-input=false", "-no-color"],
            edit: Some(("version = local.v", "version = var.not_const")),
            code: 1,
            expect: "Unknown module version",
        },
    ];
    let check = |step: &Step, dirs: &[(&str, PathBuf)]| {
        let mut runs = Vec::new();
        for (tool, d) in dirs {
            if let Some((from, to)) = step.edit {
                let text = std::fs::read_to_string(d.join("main.tf")).unwrap();
                std::fs::write(d.join("main.tf"), text.replace(from, to)).unwrap();
            }
            let o = either(tool, &w.reg, d, step.args);
            assert_eq!(
                o.code, step.code,
                "case {}: {tool}\n{}\n{}",
                step.name, o.stdout, o.stderr
            );
            runs.push(o);
        }
        let (ours, theirs) = (&runs[0], &runs[1]);
        if step.code != 0 {
            let summary = |s: &str| {
                s.lines()
                    .filter(|l| l.starts_with("Error: "))
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            };
            let want = [format!("Error: {}", step.expect)];
            assert_eq!(summary(&ours.stderr), want, "case {}", step.name);
            assert_eq!(summary(&theirs.stderr), want, "case {}", step.name);
            let place = |s: &str| {
                s.lines()
                    .find(|l| l.trim_start().starts_with("on "))
                    .map(|l| {
                        l.trim()
                            .split(',')
                            .next()
                            .unwrap_or_default()
                            .replace("./", "")
                    })
            };
            assert_eq!(
                place(&ours.stderr),
                place(&theirs.stderr),
                "case {}: place",
                step.name
            );
        } else if step.args[0] == "init" {
            assert_eq!(
                manifest(&dirs[0].1),
                manifest(&dirs[1].1),
                "case {}",
                step.name
            );
        } else {
            let want = outputs_section(&theirs.stdout);
            assert!(want.contains(step.expect), "case {}: {want}", step.name);
            assert_eq!(outputs_section(&ours.stdout), want, "case {}", step.name);
        }
    };
    let dirs: Vec<(&str, PathBuf)> = ["terrane", "terraform"]
        .into_iter()
        .map(|tool| {
            let d = w.dir(&format!("const_{tool}"), config);
            std::fs::create_dir_all(d.join("mid")).unwrap();
            std::fs::write(d.join("mid/main.tf"), mid).unwrap();
            for leaf in ["leafa", "leafb"] {
                std::fs::create_dir_all(d.join(leaf)).unwrap();
                let name = leaf.replace("leaf", "leaf ");
                std::fs::write(
                    d.join(leaf).join("main.tf"),
                    format!("output \"o\" {{\n  value = \"{name}\"\n}}\n"),
                )
                .unwrap();
            }
            (tool, d)
        })
        .collect();
    for step in &steps {
        check(step, &dirs);
    }
}

/// A run block's `module` from a registry (and a local one beside it):
/// `init` installs it under Terraform's key (`test.tests.main.setup`) in
/// both tools, with the same `modules.json`, and `test` runs it with the
/// same verdicts. Before `init`, the run's module is not installed.
#[test]
fn registry_module_in_a_test_run() {
    let w = world();
    let config = "output \"x\" {\n  value = 1\n}\n";
    let tests = r#"run "setup" {
  module {
    source  = "registry.terrane.test/test/net/null"
    version = "1.0.0"
  }

  variables {
    n = "t"
  }

  assert {
    condition     = output.v == "net-1.0.0-t-sub"
    error_message = "v is ${output.v}"
  }
}

run "local" {
  module {
    source = "./local"
  }

  assert {
    condition     = output.v == "local"
    error_message = "v is ${output.v}"
  }
}

run "root" {
  assert {
    condition     = output.x == 1
    error_message = "x is ${output.x}"
  }
}
"#;
    let dirs: Vec<(&str, PathBuf)> = ["terrane", "terraform"]
        .into_iter()
        .map(|tool| {
            let d = w.dir(&format!("runmod_{tool}"), config);
            std::fs::create_dir_all(d.join("tests")).unwrap();
            std::fs::write(d.join("tests/main.tftest.hcl"), tests).unwrap();
            (tool, d)
        })
        .collect();
    let before = terrane(&w.reg, &dirs[0].1, &["test", "-no-color"], &[]);
    assert_eq!(before.code, 1, "case not_installed: {}", before.stdout);
    assert!(
        before.stderr.contains("Error: Module not installed"),
        "case not_installed: {}",
        before.stderr
    );
    let verdicts = |s: &str| -> Vec<String> {
        s.lines()
            .filter(|l| {
                l.contains("... ") || l.starts_with("Success!") || l.starts_with("Failure!")
            })
            .map(str::to_string)
            .collect()
    };
    let mut tested = Vec::new();
    for (tool, d) in &dirs {
        let init = either(tool, &w.reg, d, &["init", "-input=false", "-no-color"]);
        assert_eq!(
            init.code, 0,
            "case init_{tool}\n{}\n{}",
            init.stdout, init.stderr
        );
        let t = either(tool, &w.reg, d, &["test", "-no-color"]);
        assert_eq!(t.code, 0, "case test_{tool}\n{}\n{}", t.stdout, t.stderr);
        tested.push(verdicts(&t.stdout));
    }
    let keys = |d: &Path| -> Vec<String> {
        manifest(d)["Modules"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["Key"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(
        keys(&dirs[1].1).contains(&"test.tests.main.setup".to_string()),
        "case terraform_key: {:?}",
        keys(&dirs[1].1)
    );
    assert_eq!(
        manifest(&dirs[0].1),
        manifest(&dirs[1].1),
        "case same_modules_json"
    );
    assert_eq!(tested[0], tested[1], "case same_verdicts");
}
