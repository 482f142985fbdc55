//! The built-in providers served in-process: random, local, time and
//! postgresql (the terrane providers on the SDK) and `terraform_data` under Terraform's
//! built-in address `terraform.io/builtin/terraform`.
//!
//! Each instance is a fresh SDK `ProviderServer` called directly, without a
//! socket or a process, through the same value layer as plugins
//! ([`ProtocolProvider`]), so callers cannot tell them apart.
//!
//! Which addresses they answer for: `terraform.io/builtin/terraform`
//! always (as in Terraform, it cannot be overridden), and
//! `registry.terraform.io/{hashicorp,terrane}/{random,local,time}` when
//! discovery found no plugin binary for the address (a dev override, a
//! mirror or the plugin directory always wins).

use crate::provider::addr::{ProviderAddr, DEFAULT_HOST};
use crate::provider::api::Provider;
use crate::provider::grpc::rpc::InProcess;
use crate::provider::grpc::{ClientCapabilities, ProtocolProvider, SchemaCell};
use std::sync::Arc;
use terrane_sdk::ProviderServer;

/// A provider terrane carries inside itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Builtin {
    Random,
    Local,
    Time,
    Terraform,
    Postgresql,
}

/// Namespaces whose random/local/time the built-ins stand in for.
const NAMESPACES: [&str; 2] = ["hashicorp", "terrane"];

impl Builtin {
    /// The built-in serving `addr`, if there is one.
    pub fn for_addr(addr: &ProviderAddr) -> Option<Builtin> {
        if *addr == ProviderAddr::builtin_terraform() {
            return Some(Builtin::Terraform);
        }
        if addr.host != DEFAULT_HOST {
            return None;
        }
        // The PostgreSQL provider stands in for the community provider's
        // address too, so existing configurations run unchanged.
        if addr.type_name == "postgresql"
            && ["terrane", "cyrilgdn"].contains(&addr.namespace.as_str())
        {
            return Some(Builtin::Postgresql);
        }
        if !NAMESPACES.contains(&addr.namespace.as_str()) {
            return None;
        }
        match addr.type_name.as_str() {
            "random" => Some(Builtin::Random),
            "local" => Some(Builtin::Local),
            "time" => Some(Builtin::Time),
            _ => None,
        }
    }

    /// Whether a plugin may take its place (all but `terraform`).
    pub fn overridable(self) -> bool {
        self != Builtin::Terraform
    }

    pub fn version(self) -> &'static str {
        env!("CARGO_PKG_VERSION")
    }

    /// A fresh, unconfigured instance.
    pub fn instance(
        self,
        address: &str,
        schema: SchemaCell,
        caps: ClientCapabilities,
    ) -> Arc<dyn Provider> {
        fn wrap<P: terrane_sdk::Provider>(
            p: P,
            address: &str,
            schema: SchemaCell,
            caps: ClientCapabilities,
        ) -> Arc<dyn Provider> {
            Arc::new(ProtocolProvider::new(
                address,
                InProcess::new(ProviderServer::new(p)),
                schema,
                caps,
            ))
        }
        match self {
            Builtin::Random => wrap(
                terrane_provider_random::RandomProvider,
                address,
                schema,
                caps,
            ),
            Builtin::Local => wrap(terrane_provider_local::LocalProvider, address, schema, caps),
            Builtin::Time => wrap(terrane_provider_time::TimeProvider, address, schema, caps),
            Builtin::Terraform => wrap(
                terrane_provider_terraform::TerraformProvider,
                address,
                schema,
                caps,
            ),
            Builtin::Postgresql => wrap(
                terrane_provider_postgresql::PostgresProvider,
                address,
                schema,
                caps,
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(case: &str, source: &str, want: Option<Builtin>) {
        assert_eq!(
            Builtin::for_addr(&ProviderAddr::parse(source).unwrap()),
            want,
            "case {case}"
        );
    }

    #[test]
    fn which_addresses_are_built_in() {
        check(
            "hashicorp_random",
            "hashicorp/random",
            Some(Builtin::Random),
        );
        check("bare_local", "local", Some(Builtin::Local));
        check("terrane_time", "terrane/time", Some(Builtin::Time));
        check("builtin_terraform", "terraform", Some(Builtin::Terraform));
        check("other_namespace", "acme/random", None);
        check("other_host", "example.com/hashicorp/random", None);
        check("other_type", "hashicorp/aws", None);
        check(
            "terrane_postgresql",
            "terrane/postgresql",
            Some(Builtin::Postgresql),
        );
        check(
            "community_postgresql",
            "cyrilgdn/postgresql",
            Some(Builtin::Postgresql),
        );
        check(
            "hashicorp_postgresql_is_not_ours",
            "hashicorp/postgresql",
            None,
        );
        assert!(!Builtin::Terraform.overridable());
    }
}
