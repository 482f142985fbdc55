//! Resolution order: named cases over a temporary working directory with a
//! plugin directory, a mirror, a dev override and a lock file.

use super::*;
use crate::provider::builtin;

struct World {
    _tmp: tempfile::TempDir,
    work: PathBuf,
    mirror: PathBuf,
    dev: PathBuf,
}

fn exe(p: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, format!("#!/bin/sh\n# {}\n", p.display())).unwrap();
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn world() -> World {
    let tmp = terrane_testkit::temp_dir();
    let work = tmp.path().join("work");
    let mirror = tmp.path().join("mirror");
    let dev = tmp.path().join("dev");
    std::fs::create_dir_all(&work).unwrap();
    World {
        _tmp: tmp,
        work,
        mirror,
        dev,
    }
}

fn package(root: &Path, addr: &str, version: &str) {
    let a = ProviderAddr::parse(addr).unwrap();
    exe(&root
        .join(&a.host)
        .join(&a.namespace)
        .join(&a.type_name)
        .join(version)
        .join(plugindir::current_os_arch())
        .join(format!("terraform-provider-{}", a.type_name)));
}

/// What a resolution gave, as a short string: `builtin:random`,
/// `plugin:<dir label>/<version>`, `dev:<file name>`, or `error:<text>`.
fn describe(w: &World, r: Result<ProviderSource, DiscoveryError>) -> String {
    match r {
        Ok(ProviderSource::Builtin(b)) => format!("builtin:{}", b.name()),
        Ok(ProviderSource::Pulumi(p)) => format!("pulumi:{}", p.binary.display()),
        Ok(ProviderSource::Plugin(p)) if p.dev_override => {
            format!("dev:{}", p.binary.file_name().unwrap().to_string_lossy())
        }
        Ok(ProviderSource::Plugin(p)) => {
            let label = if p.binary.starts_with(&w.mirror) {
                "mirror"
            } else if p.binary.starts_with(w.work.join(PLUGIN_DIR)) {
                "plugins"
            } else {
                "elsewhere"
            };
            assert!(
                p.h1.as_deref().is_some_and(|h| h.starts_with("h1:")),
                "packages are hashed"
            );
            format!("plugin:{label}/{}", p.version.unwrap())
        }
        Err(e) => format!("error:{e}"),
    }
}

struct Case<'a> {
    name: &'a str,
    /// CLI config text; `{mirror}` and `{dev}` are replaced.
    cli: &'a str,
    mirror: &'a [(&'a str, &'a str)],
    plugins: &'a [(&'a str, &'a str)],
    dev: &'a [&'a str],
    /// Lock file text (`""` = none).
    lock: &'a str,
    addr: &'a str,
    constraints: &'a str,
    /// Expected `describe` output (prefix match for errors).
    want: &'a str,
}

fn check(c: Case<'_>) {
    let w = world();
    for (a, v) in c.mirror {
        package(&w.mirror, a, v);
    }
    for (a, v) in c.plugins {
        package(&w.work.join(PLUGIN_DIR), a, v);
    }
    for name in c.dev {
        exe(&w.dev.join(name));
    }
    let cli = CliConfig::parse(
        &c.cli
            .replace("{mirror}", &w.mirror.display().to_string())
            .replace("{dev}", &w.dev.display().to_string()),
        &w.work,
    )
    .unwrap();
    let mut d = Discovery::new(&w.work, cli, builtin::for_tests());
    d.implied_mirrors.clear();
    let lock = LockFile::parse(c.lock).unwrap();
    let got = describe(
        &w,
        d.resolve(
            &ProviderAddr::parse(c.addr).unwrap(),
            &Constraints::parse(c.constraints).unwrap(),
            &lock,
        ),
    );
    if let Some(prefix) = c.want.strip_prefix("error:") {
        assert!(
            got.starts_with("error:") && got.contains(prefix),
            "case {}: got {got}",
            c.name
        );
    } else {
        assert_eq!(got, c.want, "case {}", c.name);
    }
}

const R: &str = "hashicorp/random";
const MIRROR_CLI: &str =
    "provider_installation {\n  filesystem_mirror {\n    path = \"{mirror}\"\n  }\n}\n";
const DEV_CLI: &str = "provider_installation {\n  dev_overrides {\n    \"hashicorp/random\" = \"{dev}\"\n  }\n  filesystem_mirror {\n    path = \"{mirror}\"\n  }\n}\n";
const NO: &[(&str, &str)] = &[];

fn lock_random(version: &str, hashes: &str) -> String {
    format!("provider \"registry.terraform.io/hashicorp/random\" {{\n  version = \"{version}\"\n  hashes = [{hashes}]\n}}\n")
}

#[test]
fn resolution_order() {
    let base = Case {
        name: "",
        cli: "",
        mirror: NO,
        plugins: NO,
        dev: &[],
        lock: "",
        addr: R,
        constraints: "",
        want: "",
    };
    check(Case {
        name: "builtin_by_default",
        want: "builtin:random",
        ..base
    });
    check(Case {
        name: "builtin_local_time",
        addr: "terrane/time",
        want: "builtin:time",
        ..base
    });
    check(Case {
        name: "terraform_is_always_builtin",
        addr: "terraform",
        plugins: &[("terraform.io/builtin/terraform", "1.0.0")],
        want: "builtin:terraform",
        ..base
    });
    check(Case {
        name: "plugin_dir_beats_builtin",
        plugins: &[(R, "3.6.0")],
        want: "plugin:plugins/3.6.0",
        ..base
    });
    check(Case {
        name: "mirror_beats_plugin_dir_same_version",
        cli: MIRROR_CLI,
        mirror: &[(R, "3.6.0")],
        plugins: &[(R, "3.6.0")],
        want: "plugin:mirror/3.6.0",
        ..base
    });
    check(Case {
        name: "newest_across_dirs",
        cli: MIRROR_CLI,
        mirror: &[(R, "3.5.0")],
        plugins: &[(R, "3.6.0")],
        want: "plugin:plugins/3.6.0",
        ..base
    });
    check(Case {
        name: "constraints_pick",
        plugins: &[(R, "3.6.0"), (R, "4.0.0")],
        constraints: "~> 3.0",
        want: "plugin:plugins/3.6.0",
        ..base
    });
    check(Case {
        name: "constraints_exclude_all",
        plugins: &[(R, "4.0.0")],
        constraints: "~> 3.0",
        want: "error:no available version matches",
        ..base
    });
    check(Case {
        name: "dev_override_wins",
        cli: DEV_CLI,
        mirror: &[(R, "3.6.0")],
        dev: &["terraform-provider-random"],
        want: "dev:terraform-provider-random",
        ..base
    });
    check(Case {
        name: "dev_override_ignores_constraints",
        cli: DEV_CLI,
        dev: &["terraform-provider-random_v9"],
        constraints: "= 1.0.0",
        want: "dev:terraform-provider-random_v9",
        ..base
    });
    check(Case {
        name: "dev_override_missing_binary",
        cli: DEV_CLI,
        want: "error:no executable terraform-provider-random",
        ..base
    });
    check(Case { name: "mirror_excluded_falls_back", cli: "provider_installation {\n  filesystem_mirror {\n    path = \"{mirror}\"\n    exclude = [\"hashicorp/*\"]\n  }\n}\n", mirror: &[(R, "3.6.0")], want: "builtin:random", ..base });
    check(Case {
        name: "unknown_provider",
        addr: "acme/thing",
        want: "error:Failed to find provider registry.terraform.io/acme/thing",
        ..base
    });
    check(Case {
        name: "unknown_provider_lists_dirs",
        addr: "acme/thing",
        want: "error:.terrane/plugins",
        ..base
    });
    check(Case {
        name: "third_party_from_plugin_dir",
        addr: "acme/thing",
        plugins: &[("acme/thing", "0.1.0")],
        want: "plugin:plugins/0.1.0",
        ..base
    });
    let locked_old = lock_random("3.5.0", "");
    check(Case {
        name: "lock_pins_older",
        plugins: &[(R, "3.5.0"), (R, "3.6.0")],
        lock: &locked_old,
        want: "plugin:plugins/3.5.0",
        ..base
    });
    check(Case {
        name: "locked_version_missing",
        plugins: &[(R, "3.6.0")],
        lock: &locked_old,
        want: "error:the version recorded in the dependency lock file",
        ..base
    });
    check(Case {
        name: "locked_version_excluded",
        plugins: &[(R, "3.5.0")],
        lock: &locked_old,
        constraints: ">= 3.6",
        want: "error:does not match the configured version constraints",
        ..base
    });
    let bad_hash = lock_random("3.6.0", "\"h1:nottherighthash=\"");
    check(Case {
        name: "hash_mismatch",
        plugins: &[(R, "3.6.0")],
        lock: &bad_hash,
        want: "error:does not match any of the checksums",
        ..base
    });
    let zh_only = lock_random("3.6.0", "\"zh:abcdef\"");
    check(Case {
        name: "zh_only_lock_accepted",
        plugins: &[(R, "3.6.0")],
        lock: &zh_only,
        want: "plugin:plugins/3.6.0",
        ..base
    });
}

#[test]
fn matching_hash_and_lock_entry() {
    let w = world();
    package(&w.work.join(PLUGIN_DIR), R, "3.6.0");
    let d = Discovery::new(&w.work, CliConfig::default(), builtin::for_tests());
    let addr = ProviderAddr::parse(R).unwrap();
    let first = d
        .resolve(&addr, &Constraints::any(), &LockFile::default())
        .unwrap();
    let (version, h1) = first.lock_entry().expect("packages are locked");
    let mut lock = LockFile::default();
    lock.record(&addr, version, Some("~> 3.0".into()), h1);
    assert_eq!(
        d.resolve(&addr, &Constraints::parse("~> 3.0").unwrap(), &lock)
            .unwrap(),
        first,
        "case locked_hash_matches"
    );
    assert_eq!(
        ProviderSource::Builtin(builtin::for_tests().for_addr(&addr).unwrap().clone()).lock_entry(),
        None,
        "case builtins_not_locked"
    );
}
