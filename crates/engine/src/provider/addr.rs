//! Provider source addresses (`hashicorp/random`,
//! `registry.terraform.io/hashicorp/random`, `terraform.io/builtin/terraform`)
//! and provider configuration keys (address + alias + module).
//!
//! Parsing follows Terraform's rules: one part is a type in the
//! `hashicorp` namespace of the default registry, two parts are
//! namespace/type, three are host/namespace/type; the bare name
//! `terraform` is the built-in provider. Host, namespace and type are
//! compared case-insensitively and kept lower-case.

use std::fmt;

/// The default registry host.
pub const DEFAULT_HOST: &str = "registry.terraform.io";
/// The host of Terraform's built-in providers.
pub const BUILTIN_HOST: &str = "terraform.io";

/// A fully-qualified provider source address.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProviderAddr {
    pub host: String,
    pub namespace: String,
    pub type_name: String,
}

/// Why a source address is not valid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Invalid provider source address {source_text:?}: {reason}")]
pub struct AddrError {
    pub source_text: String,
    pub reason: String,
}

fn valid_part(p: &str) -> bool {
    !p.is_empty()
        && !p.starts_with('-')
        && !p.ends_with('-')
        && p.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

fn valid_host(h: &str) -> bool {
    !h.is_empty()
        && h.split(['.', ':'])
            .all(|l| !l.is_empty() && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
}

impl ProviderAddr {
    pub fn new(host: &str, namespace: &str, type_name: &str) -> ProviderAddr {
        ProviderAddr {
            host: host.to_ascii_lowercase(),
            namespace: namespace.to_ascii_lowercase(),
            type_name: type_name.to_ascii_lowercase(),
        }
    }

    /// Terraform's built-in `terraform` provider (terraform_data).
    pub fn builtin_terraform() -> ProviderAddr {
        ProviderAddr::new(BUILTIN_HOST, "builtin", "terraform")
    }

    /// Parses a `required_providers` source address.
    pub fn parse(source: &str) -> Result<ProviderAddr, AddrError> {
        let err = |reason: &str| AddrError {
            source_text: source.to_string(),
            reason: reason.to_string(),
        };
        let parts: Vec<&str> = source.trim().split('/').collect();
        let (host, ns, ty) = match parts.as_slice() {
            [ty] if ty.eq_ignore_ascii_case("terraform") => (BUILTIN_HOST, "builtin", *ty),
            [ty] => (DEFAULT_HOST, "hashicorp", *ty),
            [ns, ty] => (DEFAULT_HOST, *ns, *ty),
            [host, ns, ty] => (*host, *ns, *ty),
            _ => {
                return Err(err(
                    "a source address has at most three parts: [hostname/]namespace/type",
                ))
            }
        };
        if !valid_host(host) {
            return Err(err("invalid hostname"));
        }
        if !valid_part(ns) {
            return Err(err(
                "invalid namespace: letters, digits, dashes and underscores only",
            ));
        }
        if !valid_part(ty) {
            return Err(err(
                "invalid provider type: letters, digits, dashes and underscores only",
            ));
        }
        if ty.to_ascii_lowercase().starts_with("terraform-provider-") {
            return Err(err(
                "the type name must not include the \"terraform-provider-\" prefix",
            ));
        }
        let a = ProviderAddr::new(host, ns, ty);
        if a.host == BUILTIN_HOST && a.namespace == "builtin" && a.type_name != "terraform" {
            return Err(err(
                "the only built-in provider is terraform.io/builtin/terraform",
            ));
        }
        Ok(a)
    }

    pub fn is_builtin(&self) -> bool {
        self.host == BUILTIN_HOST && self.namespace == "builtin"
    }

    /// `hashicorp/random` for the default registry, the full address
    /// otherwise (as Terraform's messages show it).
    pub fn for_display(&self) -> String {
        if self.host == DEFAULT_HOST {
            format!("{}/{}", self.namespace, self.type_name)
        } else {
            self.to_string()
        }
    }
}

impl fmt::Display for ProviderAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/{}", self.host, self.namespace, self.type_name)
    }
}

/// One provider configuration: the provider block (or the implied empty
/// one) at `module` with an optional `alias`. Each gets its own configured
/// instance.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProviderConfigKey {
    /// The module path, `""` for the root (`module.a.module.b`).
    pub module: String,
    pub addr: ProviderAddr,
    pub alias: Option<String>,
    /// The instance key of a configuration with `for_each` (OpenTofu's
    /// provider for_each): `provider["..."].by_region["a"]`. Keys are
    /// always strings there.
    pub key: Option<String>,
}

impl ProviderConfigKey {
    pub fn root(addr: ProviderAddr) -> ProviderConfigKey {
        ProviderConfigKey {
            module: String::new(),
            addr,
            alias: None,
            key: None,
        }
    }

    /// The instance `key` of this configuration.
    pub fn with_key(mut self, key: impl Into<String>) -> ProviderConfigKey {
        self.key = Some(key.into());
        self
    }

    /// The configuration without its instance key.
    pub fn config(&self) -> ProviderConfigKey {
        ProviderConfigKey {
            key: None,
            ..self.clone()
        }
    }

    pub fn with_alias(mut self, alias: impl Into<String>) -> ProviderConfigKey {
        self.alias = Some(alias.into());
        self
    }
}

impl fmt::Display for ProviderConfigKey {
    /// As state records it: `module.m.provider["registry.terraform.io/hashicorp/random"].alias`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.module.is_empty() {
            write!(f, "{}.", self.module)?;
        }
        write!(f, "provider[\"{}\"]", self.addr)?;
        if let Some(a) = &self.alias {
            write!(f, ".{a}")?;
        }
        if let Some(k) = &self.key {
            write!(f, "[{}]", serde_json::Value::String(k.clone()))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(case: &str, source: &str, want: Result<&str, &str>) {
        match (ProviderAddr::parse(source), want) {
            (Ok(a), Ok(w)) => assert_eq!(a.to_string(), w, "case {case}"),
            (Err(e), Err(w)) => assert!(e.to_string().contains(w), "case {case}: {e}"),
            (got, want) => panic!("case {case}: got {got:?}, want {want:?}"),
        }
    }

    #[test]
    fn source_addresses() {
        check(
            "type_only",
            "random",
            Ok("registry.terraform.io/hashicorp/random"),
        );
        check(
            "namespace_type",
            "hashicorp/random",
            Ok("registry.terraform.io/hashicorp/random"),
        );
        check(
            "own_namespace",
            "terrane/local",
            Ok("registry.terraform.io/terrane/local"),
        );
        check(
            "full",
            "example.com:8443/acme/thing",
            Ok("example.com:8443/acme/thing"),
        );
        check(
            "case_folded",
            "HashiCorp/Random",
            Ok("registry.terraform.io/hashicorp/random"),
        );
        check(
            "bare_terraform_is_builtin",
            "terraform",
            Ok("terraform.io/builtin/terraform"),
        );
        check(
            "builtin_full",
            "terraform.io/builtin/terraform",
            Ok("terraform.io/builtin/terraform"),
        );
        check(
            "other_builtin",
            "terraform.io/builtin/nope",
            Err("only built-in provider"),
        );
        check("too_many_parts", "a/b/c/d", Err("at most three parts"));
        check("empty_type", "hashicorp/", Err("invalid provider type"));
        check("bad_char", "hashi corp/random", Err("invalid namespace"));
        check(
            "prefixed",
            "hashicorp/terraform-provider-random",
            Err("prefix"),
        );
        check("bad_host", "exa mple.com/a/b", Err("invalid hostname"));
    }

    #[test]
    fn config_keys_display_as_state_does() {
        let a = ProviderAddr::parse("hashicorp/random").unwrap();
        assert_eq!(
            ProviderConfigKey::root(a.clone()).to_string(),
            "provider[\"registry.terraform.io/hashicorp/random\"]"
        );
        let k = ProviderConfigKey {
            module: "module.m".into(),
            addr: a.clone(),
            alias: Some("east".into()),
            key: None,
        };
        assert_eq!(
            k.to_string(),
            "module.m.provider[\"registry.terraform.io/hashicorp/random\"].east"
        );
        assert_eq!(
            k.clone().with_key("eu \"1\"").to_string(),
            "module.m.provider[\"registry.terraform.io/hashicorp/random\"].east[\"eu \\\"1\\\"\"]"
        );
        assert_eq!(a.for_display(), "hashicorp/random");
        assert!(ProviderAddr::builtin_terraform().is_builtin());
    }
}
