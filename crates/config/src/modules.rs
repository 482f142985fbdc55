//! The installed-module manifest, `<data dir>/modules/modules.json`, in
//! Terraform's format: `{"Modules":[{"Key":"","Source":"","Dir":"."},…]}`
//! with one record per module call (`Key` the call names joined by `.`,
//! `Source` the normalized source address, `Version` for registry modules,
//! `Dir` relative to the working directory). `init`/`get` write it; the
//! loader reads remote modules through it, so a directory initialized by
//! Terraform loads in terrane and the other way round.

use std::path::{Path, PathBuf};

/// The registry host a source without one means.
pub const DEFAULT_MODULE_REGISTRY: &str = "registry.terraform.io";

/// One installed module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModuleRecord {
    pub key: String,
    pub source: String,
    pub version: Option<String>,
    pub dir: String,
}

/// The manifest's records, in file order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModuleManifest {
    pub records: Vec<ModuleRecord>,
}

/// `<data dir>/modules/modules.json`.
pub fn manifest_path(data_dir: &Path) -> PathBuf {
    data_dir.join("modules").join("modules.json")
}

/// Whether a module source is a local path (`./`, `../`).
pub fn is_local_source(source: &str) -> bool {
    source.starts_with("./") || source.starts_with("../")
}

/// Splits a registry module address `[host/]namespace/name/provider` with
/// an optional `//subdir` into (host, namespace, name, provider, subdir);
/// `None` when `source` is not one.
pub fn registry_address(source: &str) -> Option<(String, String, String, String, Option<String>)> {
    if is_local_source(source) || source.contains("::") || source.contains("://") {
        return None;
    }
    let (pkg, subdir) = match source.split_once("//") {
        Some((p, s)) => (p, Some(s.trim_matches('/').to_string())),
        None => (source, None),
    };
    let parts: Vec<&str> = pkg.split('/').collect();
    let (host, rest) = match parts.len() {
        3 => (DEFAULT_MODULE_REGISTRY.to_string(), &parts[..]),
        4 if (parts[0].contains('.') || parts[0].contains(':')) && hostname_ok(parts[0]) => {
            (parts[0].to_ascii_lowercase(), &parts[1..])
        }
        _ => return None,
    };
    let name_ok = |s: &str| {
        !s.is_empty()
            && s.len() <= 64
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            && s.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
    };
    let provider_ok = target_system_ok;
    // A well-known VCS host's shorthand (github.com/a/b) is not a registry
    // address.
    if ["github.com", "bitbucket.org"].contains(&host.as_str()) {
        return None;
    }
    if !(name_ok(rest[0]) && name_ok(rest[1]) && provider_ok(rest[2])) {
        return None;
    }
    Some((
        host,
        rest[0].to_string(),
        rest[1].to_string(),
        rest[2].to_string(),
        subdir.filter(|s| !s.is_empty()),
    ))
}

/// A module's target system (the provider part of `ns/name/system`): one
/// to 64 lowercase ASCII letters or digits, as Terraform accepts it (its
/// message says "letters or digits", but it refuses capitals).
fn target_system_ok(s: &str) -> bool {
    (1..=64).contains(&s.len())
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
}

/// A registry host as Terraform accepts one: dot-separated labels of
/// letters, digits and inner dashes, and an optional numeric port.
fn hostname_ok(host: &str) -> bool {
    let label_ok = |l: &str| {
        !l.is_empty()
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.chars().all(|c| c.is_alphanumeric() || c == '-')
    };
    let (name, port_ok) = match host.split_once(':') {
        Some((name, port)) => (
            name,
            !port.is_empty() && port.chars().all(|c| c.is_ascii_digit()),
        ),
        None => (host, true),
    };
    name.split('.').all(label_ok) && port_ok
}

/// Why `source` is not a module registry address ([`registry_address`]
/// refuses it), in Terraform's words where they are known: for a call
/// that sets `version`, which only registry modules take.
pub fn registry_address_problem(source: &str) -> Option<String> {
    if registry_address(source).is_some() {
        return None;
    }
    if is_local_source(source) {
        return Some(format!(
            "can't use local directory {source:?} as a module registry address."
        ));
    }
    if source.contains('?') {
        return Some("module registry addresses may not include a query string portion.".into());
    }
    // The package's subdirectory starts at a `//` that is not a URL
    // scheme's (`https://`), as go-getter splits it.
    let cut = source
        .match_indices("//")
        .map(|(i, _)| i)
        .find(|&i| !source[..i].ends_with(':'));
    let pkg = cut.map_or(source, |i| &source[..i]);
    let parts: Vec<&str> = pkg.split('/').collect();
    if !(3..=4).contains(&parts.len()) {
        return Some(
            "a module registry source address must have either three or four slash-separated components.".into(),
        );
    }
    if parts.len() == 4 && !hostname_ok(parts[0]) {
        return Some(format!("invalid module registry hostname {:?}.", parts[0]));
    }
    let system = parts[parts.len() - 1];
    if !target_system_ok(system) {
        return Some(format!(
            "invalid target system {system:?}: must be between one and 64 ASCII letters or digits."
        ));
    }
    Some(format!(
        "{source:?} is not a module registry address: its namespace and name must be letters, digits, dashes and underscores."
    ))
}

/// The form of a source address the manifest records: registry addresses
/// with their host, everything else as written.
pub fn normalize_source(source: &str) -> String {
    match registry_address(source) {
        Some((host, ns, name, provider, subdir)) => {
            let mut s = format!("{host}/{ns}/{name}/{provider}");
            if let Some(d) = subdir {
                s.push_str("//");
                s.push_str(&d);
            }
            s
        }
        None => source.to_string(),
    }
}

impl ModuleManifest {
    /// Reads `path`; `Ok(None)` when there is no manifest.
    pub fn load(path: &Path) -> Result<Option<ModuleManifest>, String> {
        match std::fs::read_to_string(path) {
            Ok(text) => ModuleManifest::parse(&text)
                .map(Some)
                .map_err(|e| format!("{}: {e}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("cannot read {}: {e}", path.display())),
        }
    }

    pub fn parse(text: &str) -> Result<ModuleManifest, String> {
        let doc: serde_json::Value =
            serde_json::from_str(text).map_err(|e| format!("not a JSON document: {e}"))?;
        let list = doc
            .get("Modules")
            .and_then(|m| m.as_array())
            .ok_or("no \"Modules\" list")?;
        let mut records = Vec::new();
        for (i, m) in list.iter().enumerate() {
            let field = |name: &str| m.get(name).and_then(|v| v.as_str()).map(str::to_string);
            let need = |name: &str| {
                field(name).ok_or_else(|| format!("module record {i} has no string {name:?}"))
            };
            records.push(ModuleRecord {
                key: need("Key")?,
                source: field("Source").unwrap_or_default(),
                version: field("Version").filter(|v| !v.is_empty()),
                dir: need("Dir")?,
            });
        }
        Ok(ModuleManifest { records })
    }

    /// The record of the module call `key`.
    pub fn get(&self, key: &str) -> Option<&ModuleRecord> {
        self.records.iter().find(|r| r.key == key)
    }

    /// The manifest as Terraform writes it: compact JSON, fields in the
    /// order Key, Source, Version (only when set), Dir.
    pub fn to_json(&self) -> String {
        let s = |v: &str| serde_json::Value::String(v.to_string()).to_string();
        let items: Vec<String> = self
            .records
            .iter()
            .map(|r| {
                let version = r
                    .version
                    .as_deref()
                    .map(|v| format!(",\"Version\":{}", s(v)))
                    .unwrap_or_default();
                format!(
                    "{{\"Key\":{},\"Source\":{}{version},\"Dir\":{}}}",
                    s(&r.key),
                    s(&r.source),
                    s(&r.dir)
                )
            })
            .collect();
        format!("{{\"Modules\":[{}]}}", items.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_addresses() {
        let cases = [
            ("default_host", "a/b/c", Some("registry.terraform.io/a/b/c")),
            (
                "own_host",
                "Reg.Example.com/a/b/c",
                Some("reg.example.com/a/b/c"),
            ),
            (
                "subdir",
                "a/b/c//x/y",
                Some("registry.terraform.io/a/b/c//x/y"),
            ),
            ("local", "./a/b/c", None),
            ("git", "git::https://h/a/b/c", None),
            ("github_shorthand", "github.com/a/b/c", None),
            ("two_parts", "a/b", None),
            ("provider_upper", "a/b/C", None),
        ];
        for (case, src, want) in cases {
            let got = registry_address(src).map(|_| normalize_source(src));
            assert_eq!(got.as_deref(), want, "case {case}");
        }
    }

    #[test]
    fn manifest_round_trip() {
        let text = r#"{"Modules":[{"Key":"","Source":"","Dir":"."},{"Key":"a","Source":"registry.terraform.io/x/y/z","Version":"1.0.0","Dir":".terraform/modules/a"}]}"#;
        let m = ModuleManifest::parse(text).unwrap();
        assert_eq!(m.to_json(), text);
        assert_eq!(m.get("a").unwrap().version.as_deref(), Some("1.0.0"));
        for (case, bad) in [
            ("not_json", "{"),
            ("no_list", "{}"),
            ("no_dir", r#"{"Modules":[{"Key":""}]}"#),
        ] {
            assert!(ModuleManifest::parse(bad).is_err(), "case {case}");
        }
    }
}
