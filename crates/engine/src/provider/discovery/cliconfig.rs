//! Terraform's CLI configuration file (`TF_CLI_CONFIG_FILE`, else
//! `~/.terraformrc`), the parts that decide where providers come from:
//!
//! ```hcl
//! provider_installation {
//!   dev_overrides {
//!     "hashicorp/random" = "/home/me/src/random/target/debug"
//!   }
//!   filesystem_mirror {
//!     path    = "/usr/share/terraform/providers"
//!     include = ["registry.terraform.io/hashicorp/*"]
//!   }
//!   direct {
//!     exclude = ["registry.terraform.io/hashicorp/*"]
//!   }
//! }
//! ```
//!
//! The file is HCL 1, which (unlike HCL 2) allows quoted argument names as
//! in `dev_overrides`; those are rewritten to placeholder identifiers before
//! hcl-edit parses the text, and mapped back.
//!
//! Also read for `init`'s installer (terrane-registry): `host` blocks
//! (a registry's services without service discovery), `credentials`
//! blocks (bearer tokens by host; the token is never shown) and
//! `plugin_cache_dir`. Other top-level settings are accepted and ignored.

use super::{hcl_string, hcl_strings};
use crate::provider::addr::{ProviderAddr, DEFAULT_HOST};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// An installation method of `provider_installation`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MethodKind {
    FilesystemMirror(PathBuf),
    NetworkMirror(String),
    Direct,
}

/// A method with its include/exclude patterns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Method {
    pub kind: MethodKind,
    pub include: Vec<String>,
    pub exclude: Vec<String>,
}

impl Method {
    /// Whether this method may supply `addr`.
    pub fn admits(&self, addr: &ProviderAddr) -> bool {
        (self.include.is_empty() || self.include.iter().any(|p| pattern_matches(p, addr)))
            && !self.exclude.iter().any(|p| pattern_matches(p, addr))
    }
}

/// `host/namespace/type` or `namespace/type` with `*` for a whole part.
fn pattern_matches(pattern: &str, addr: &ProviderAddr) -> bool {
    let parts: Vec<&str> = pattern.split('/').collect();
    let (h, n, t) = match parts.as_slice() {
        [n, t] => (DEFAULT_HOST, *n, *t),
        [h, n, t] => (*h, *n, *t),
        _ => return false,
    };
    let part = |p: &str, v: &str| p == "*" || p.eq_ignore_ascii_case(v);
    part(h, &addr.host) && part(n, &addr.namespace) && part(t, &addr.type_name)
}

/// The provider-related parts of a CLI configuration.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CliConfig {
    /// Where the file came from (for messages).
    pub path: Option<PathBuf>,
    /// Provider address -> directory holding its binary.
    pub dev_overrides: BTreeMap<ProviderAddr, PathBuf>,
    /// Installation methods in order; `None` when the file had no
    /// `provider_installation` block (Terraform's implied defaults).
    pub methods: Option<Vec<Method>>,
    /// `host "NAME" { services = { "providers.v1" = "URL" } }`, by host
    /// name in lower case.
    pub hosts: BTreeMap<String, BTreeMap<String, String>>,
    /// `credentials "NAME" { token = "..." }`, by host name in lower case.
    pub credentials: BTreeMap<String, Secret>,
    /// `plugin_cache_dir`.
    pub plugin_cache_dir: Option<PathBuf>,
}

/// A credential: its `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(pub String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("(sensitive value)")
    }
}

/// A CLI configuration that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct CliConfigError {
    pub path: String,
    pub message: String,
}

impl CliConfig {
    /// Reads the file Terraform would read: `TF_CLI_CONFIG_FILE` if set,
    /// else `$HOME/.terraformrc`; a missing file is an empty configuration.
    pub fn load_from_env() -> Result<CliConfig, CliConfigError> {
        let path = match std::env::var_os("TF_CLI_CONFIG_FILE").filter(|p| !p.is_empty()) {
            Some(p) => PathBuf::from(p),
            None => match std::env::var_os("HOME") {
                Some(h) => PathBuf::from(h).join(".terraformrc"),
                None => return Ok(CliConfig::default()),
            },
        };
        CliConfig::load(&path)
    }

    /// Reads `path`; a missing file is an empty configuration.
    pub fn load(path: &Path) -> Result<CliConfig, CliConfigError> {
        match std::fs::read_to_string(path) {
            Ok(text) => {
                let mut c = CliConfig::parse(&text, path.parent().unwrap_or(Path::new(".")))
                    .map_err(|message| CliConfigError {
                        path: path.display().to_string(),
                        message,
                    })?;
                c.path = Some(path.to_path_buf());
                Ok(c)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(CliConfig::default()),
            Err(e) => Err(CliConfigError {
                path: path.display().to_string(),
                message: e.to_string(),
            }),
        }
    }

    /// Parses the text; relative paths are taken relative to `base` (the
    /// file's directory); `~/` is the home directory.
    pub fn parse(text: &str, base: &Path) -> Result<CliConfig, String> {
        let (text, quoted) = unquote_keys(text);
        let key = |k: &str| -> String {
            k.strip_prefix(QUOTED)
                .and_then(|n| n.parse::<usize>().ok())
                .and_then(|i| quoted.get(i).cloned())
                .unwrap_or_else(|| k.to_string())
        };
        let body =
            terrane_hcl::parser::parse_body(&text).map_err(|e| format!("invalid HCL: {e}"))?;
        let mut out = CliConfig::default();
        for a in body.attributes() {
            if a.key.as_str() == "plugin_cache_dir" {
                let dir = hcl_string(&a.value).ok_or_else(|| {
                    "plugin_cache_dir must be a directory path string".to_string()
                })?;
                out.plugin_cache_dir = Some(resolve(base, &dir));
            }
        }
        for block in body.blocks() {
            let ident = block.ident.as_str();
            if ident == "host" || ident == "credentials" {
                let [label] = block.labels.as_slice() else {
                    return Err(format!("a {ident} block needs one label, the host name"));
                };
                let host = label.as_str().to_ascii_lowercase();
                for a in block.body.attributes() {
                    match (ident, a.key.as_str()) {
                        ("host", "services") => {
                            let services = hcl_string_map(&a.value, &key).ok_or_else(|| {
                                format!("host {host:?}: services must be an object of strings")
                            })?;
                            out.hosts.insert(host.clone(), services);
                        }
                        ("credentials", "token") => {
                            let token = hcl_string(&a.value).ok_or_else(|| {
                                format!("credentials {host:?}: token must be a string")
                            })?;
                            out.credentials.insert(host.clone(), Secret(token));
                        }
                        (_, k) => {
                            return Err(format!("{ident} {host:?}: unsupported argument {k:?}"))
                        }
                    }
                }
                continue;
            }
            if ident != "provider_installation" {
                continue;
            }
            if out.methods.is_some() {
                return Err("only one provider_installation block is allowed".into());
            }
            let mut methods = Vec::new();
            if let Some(a) = block.body.attributes().next() {
                return Err(format!(
                    "provider_installation: unexpected argument {:?}",
                    a.key.as_str()
                ));
            }
            for m in block.body.blocks() {
                let name = m.ident.as_str();
                if name == "dev_overrides" {
                    for a in m.body.attributes() {
                        let name = key(a.key.as_str());
                        let addr = ProviderAddr::parse(&name)
                            .map_err(|e| format!("dev_overrides: {e}"))?;
                        let dir = hcl_string(&a.value).ok_or_else(|| {
                            format!("dev_overrides: {name:?} must be a directory path string")
                        })?;
                        out.dev_overrides.insert(addr, resolve(base, &dir));
                    }
                    continue;
                }
                let mut include = Vec::new();
                let mut exclude = Vec::new();
                let mut location = None;
                for a in m.body.attributes() {
                    let key = a.key.as_str();
                    match key {
                        "include" | "exclude" => {
                            let list = hcl_strings(&a.value).ok_or_else(|| {
                                format!("{name}: {key} must be a list of strings")
                            })?;
                            for p in &list {
                                if !(1..=2).contains(&p.matches('/').count()) {
                                    return Err(format!("{name}: invalid provider pattern {p:?}: expected [host/]namespace/type with * wildcards"));
                                }
                            }
                            if key == "include" {
                                include = list
                            } else {
                                exclude = list
                            }
                        }
                        "path" | "url" => {
                            location = Some(
                                hcl_string(&a.value)
                                    .ok_or_else(|| format!("{name}: {key} must be a string"))?,
                            )
                        }
                        k => return Err(format!("{name}: unsupported argument {k:?}")),
                    }
                }
                let kind = match (name, location) {
                    ("filesystem_mirror", Some(p)) => {
                        MethodKind::FilesystemMirror(resolve(base, &p))
                    }
                    ("filesystem_mirror", None) => {
                        return Err("filesystem_mirror: the path argument is required".into())
                    }
                    ("network_mirror", Some(u)) => MethodKind::NetworkMirror(u),
                    ("network_mirror", None) => {
                        return Err("network_mirror: the url argument is required".into())
                    }
                    ("direct", None) => MethodKind::Direct,
                    ("direct", Some(_)) => return Err("direct takes no location".into()),
                    (other, _) => {
                        return Err(format!(
                            "provider_installation: unknown installation method {other:?}"
                        ))
                    }
                };
                methods.push(Method {
                    kind,
                    include,
                    exclude,
                });
            }
            out.methods = Some(methods);
        }
        Ok(out)
    }

    /// The filesystem mirrors that may supply `addr`, in order.
    pub fn mirrors_for(&self, addr: &ProviderAddr) -> Vec<&Path> {
        self.methods
            .iter()
            .flatten()
            .filter(|m| m.admits(addr))
            .filter_map(|m| match &m.kind {
                MethodKind::FilesystemMirror(p) => Some(p.as_path()),
                _ => None,
            })
            .collect()
    }
}

/// An object of strings (`{ "providers.v1" = "https://..." }`); `key`
/// maps the placeholders of HCL 1 quoted names back.
fn hcl_string_map(
    e: &terrane_hcl::expr::Expression,
    key: &dyn Fn(&str) -> String,
) -> Option<BTreeMap<String, String>> {
    let terrane_hcl::expr::Expression::Object(o) = e else {
        return None;
    };
    o.iter()
        .map(|(k, v)| {
            let key = match k {
                terrane_hcl::expr::ObjectKey::Ident(i) => key(i.as_str()),
                terrane_hcl::expr::ObjectKey::Expression(x) => hcl_string(x)?,
            };
            Some((key, hcl_string(v.expr())?))
        })
        .collect()
}

const QUOTED: &str = "terrane_quoted_key_";

/// Rewrites HCL 1 quoted argument names (`"a/b" = ...` at the start of a
/// line) into placeholder identifiers; returns the text and the names.
fn unquote_keys(text: &str) -> (String, Vec<String>) {
    let mut names = Vec::new();
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        if let Some(rest) = trimmed.strip_prefix('"') {
            if let Some((name, after)) = rest.split_once('"') {
                if after.trim_start().starts_with('=') && !name.contains('\\') {
                    out.push_str(&format!("{indent}{QUOTED}{}{after}", names.len()));
                    names.push(name.to_string());
                    continue;
                }
            }
        }
        out.push_str(line);
    }
    (out, names)
}

fn resolve(base: &Path, p: &str) -> PathBuf {
    if let Some(rest) = p.strip_prefix("~/") {
        if let Some(home) = std::env::var_os("HOME") {
            return PathBuf::from(home).join(rest);
        }
    }
    base.join(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(case: &str, text: &str, want: Result<&str, &str>) {
        match (CliConfig::parse(text, Path::new("/etc")), want) {
            (Ok(c), Ok(w)) => {
                let mut got = Vec::new();
                for (a, d) in &c.dev_overrides {
                    got.push(format!("dev {a}={}", d.display()));
                }
                for m in c.methods.iter().flatten() {
                    let k = match &m.kind {
                        MethodKind::FilesystemMirror(p) => format!("fs {}", p.display()),
                        MethodKind::NetworkMirror(u) => format!("net {u}"),
                        MethodKind::Direct => "direct".into(),
                    };
                    got.push(format!("{k} +{:?} -{:?}", m.include, m.exclude));
                }
                if c.methods.is_none() {
                    got.push("implied".into());
                }
                assert_eq!(got.join("; "), w, "case {case}");
            }
            (Err(e), Err(w)) => assert!(e.contains(w), "case {case}: {e}"),
            (got, want) => panic!("case {case}: got {got:?}, want {want:?}"),
        }
    }

    #[test]
    fn parsing() {
        check("empty", "", Ok("implied"));
        check(
            "other_settings_ignored",
            "disable_checkpoint = true\n",
            Ok("implied"),
        );
        check(
            "dev_overrides",
            "provider_installation {\n  dev_overrides {\n    \"hashicorp/random\" = \"/src/random\"\n    \"example.com/acme/thing\" = \"bin\"\n  }\n  direct {}\n}\n",
            Ok("dev example.com/acme/thing=/etc/bin; dev registry.terraform.io/hashicorp/random=/src/random; direct +[] -[]"),
        );
        check(
            "mirror_then_direct",
            "provider_installation {\n  filesystem_mirror {\n    path    = \"/usr/share/tf\"\n    include = [\"hashicorp/*\"]\n  }\n  direct {\n    exclude = [\"hashicorp/*\"]\n  }\n}\n",
            Ok("fs /usr/share/tf +[\"hashicorp/*\"] -[]; direct +[] -[\"hashicorp/*\"]"),
        );
        check("network_mirror", "provider_installation {\n  network_mirror {\n    url = \"https://m.example.com/\"\n  }\n}\n", Ok("net https://m.example.com/ +[] -[]"));
        check(
            "empty_block_disables_implied",
            "provider_installation {\n}\n",
            Ok(""),
        );
        check(
            "mirror_without_path",
            "provider_installation {\n  filesystem_mirror {\n  }\n}\n",
            Err("path argument is required"),
        );
        check(
            "unknown_method",
            "provider_installation {\n  carrier_pigeon {}\n}\n",
            Err("unknown installation method"),
        );
        check(
            "bad_override_address",
            "provider_installation {\n  dev_overrides {\n    \"a/b/c/d\" = \"/x\"\n  }\n}\n",
            Err("at most three parts"),
        );
        check(
            "override_not_string",
            "provider_installation {\n  dev_overrides {\n    \"a/b\" = 3\n  }\n}\n",
            Err("directory path string"),
        );
        check(
            "bad_pattern",
            "provider_installation {\n  direct {\n    include = [\"random\"]\n  }\n}\n",
            Err("invalid provider pattern"),
        );
        check(
            "two_blocks",
            "provider_installation {\n}\nprovider_installation {\n}\n",
            Err("only one"),
        );
        check("bad_hcl", "provider_installation {", Err("invalid HCL"));
    }

    /// `host`, `credentials` and `plugin_cache_dir`, read for the
    /// installer; a token never shows in `Debug`.
    #[test]
    fn registry_settings() {
        let text = "plugin_cache_dir = \"cache\"\nhost \"Registry.Terrane.Test\" {\n  services = {\n    \"providers.v1\" = \"https://127.0.0.1:1/v1/providers/\"\n  }\n}\ncredentials \"registry.terrane.test\" {\n  token = \"s3cret\"\n}\n";
        let c = CliConfig::parse(text, Path::new("/etc")).unwrap();
        assert_eq!(
            c.plugin_cache_dir.as_deref(),
            Some(Path::new("/etc/cache")),
            "case cache_dir_relative_to_file"
        );
        assert_eq!(
            c.hosts["registry.terrane.test"]["providers.v1"], "https://127.0.0.1:1/v1/providers/",
            "case host_services"
        );
        assert_eq!(
            c.credentials["registry.terrane.test"].0, "s3cret",
            "case token"
        );
        assert!(
            !format!("{c:?}").contains("s3cret"),
            "case token_not_in_debug"
        );
        let bad = [
            (
                "host_without_label",
                "host {\n  services = {}\n}\n",
                "one label",
            ),
            (
                "services_not_object",
                "host \"h\" {\n  services = \"x\"\n}\n",
                "object of strings",
            ),
            (
                "token_not_string",
                "credentials \"h\" {\n  token = 1\n}\n",
                "token must be a string",
            ),
            (
                "unknown_credential_argument",
                "credentials \"h\" {\n  password = \"x\"\n}\n",
                "unsupported argument",
            ),
        ];
        for (case, text, want) in bad {
            let e = CliConfig::parse(text, Path::new("/")).unwrap_err();
            assert!(e.contains(want), "case {case}: {e}");
        }
    }

    #[test]
    fn include_exclude_patterns() {
        let m = |inc: &[&str], exc: &[&str]| Method {
            kind: MethodKind::Direct,
            include: inc.iter().map(|s| s.to_string()).collect(),
            exclude: exc.iter().map(|s| s.to_string()).collect(),
        };
        let random = ProviderAddr::parse("hashicorp/random").unwrap();
        let acme = ProviderAddr::parse("example.com/acme/thing").unwrap();
        let cases = [
            ("no_patterns", m(&[], &[]), &random, true),
            ("include_namespace", m(&["hashicorp/*"], &[]), &random, true),
            (
                "include_other_host",
                m(&["example.com/*/*"], &[]),
                &random,
                false,
            ),
            ("include_full", m(&["example.com/*/*"], &[]), &acme, true),
            (
                "exclude_wins",
                m(&["*/*"], &["hashicorp/random"]),
                &random,
                false,
            ),
            (
                "case_insensitive",
                m(&["HashiCorp/Random"], &[]),
                &random,
                true,
            ),
        ];
        for (case, method, addr, want) in cases {
            assert_eq!(method.admits(addr), want, "case {case}");
        }
        let c = CliConfig::parse("provider_installation {\n  filesystem_mirror {\n    path = \"/a\"\n    include = [\"hashicorp/*\"]\n  }\n  filesystem_mirror {\n    path = \"/b\"\n  }\n}\n", Path::new("/")).unwrap();
        assert_eq!(
            c.mirrors_for(&random),
            [Path::new("/a"), Path::new("/b")],
            "case mirrors_in_order"
        );
        assert_eq!(
            c.mirrors_for(&acme),
            [Path::new("/b")],
            "case mirror_filtered"
        );
    }
}
