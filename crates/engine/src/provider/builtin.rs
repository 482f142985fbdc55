//! Providers served in-process: the ones the program embedding the engine
//! registers ([`Builtins`]). The engine carries none itself; the `terrane`
//! binary registers random, local, time, postgresql and `terraform_data`
//! (see the `terrane-builtins` crate).
//!
//! Each instance is a fresh SDK `ProviderServer` called directly, without a
//! socket or a process, through the same value layer as plugins
//! ([`ProtocolProvider`]), so callers cannot tell them apart.
//!
//! Which addresses they answer for: the source addresses given at
//! registration. A built-in under Terraform's built-in host
//! (`terraform.io/builtin/...`) can never be overridden, as in Terraform;
//! any other gives way to a plugin binary that discovery finds for its
//! address (a dev override, a mirror or the plugin directory always wins).

use crate::provider::addr::ProviderAddr;
use crate::provider::api::Provider;
use crate::provider::grpc::rpc::InProcess;
use crate::provider::grpc::{ClientCapabilities, ProtocolProvider, SchemaCell};
use crate::provider::pulumi::UriFetcher;
use std::fmt;
use std::sync::Arc;
use terrane_sdk::ProviderServer;

type Make = dyn Fn(&str, SchemaCell, ClientCapabilities) -> Arc<dyn Provider> + Send + Sync;

/// One registered in-process provider.
#[derive(Clone)]
pub struct Builtin {
    name: String,
    version: String,
    make: Arc<Make>,
}

impl Builtin {
    /// The provider's type name as it reports it (`random`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The provider's own version.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// A fresh, unconfigured instance.
    pub fn instance(
        &self,
        address: &str,
        schema: SchemaCell,
        caps: ClientCapabilities,
    ) -> Arc<dyn Provider> {
        (self.make)(address, schema, caps)
    }
}

impl fmt::Debug for Builtin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Builtin({} {})", self.name, self.version)
    }
}

/// Two registrations are the same built-in when they serve the same
/// provider (type name and version).
impl PartialEq for Builtin {
    fn eq(&self, other: &Builtin) -> bool {
        self.name == other.name && self.version == other.version
    }
}

impl Eq for Builtin {}

/// The in-process providers of one program, by source address.
#[derive(Clone, Debug, Default)]
pub struct Builtins {
    entries: Vec<(ProviderAddr, Builtin)>,
    /// How this program fetches `http(s)://` contents for Pulumi providers
    /// (see [`Builtins::fetch_uris_with`]).
    uri_fetcher: Option<UriFetcher>,
}

impl Builtins {
    /// No built-ins: every provider must come from a plugin binary.
    pub fn none() -> Builtins {
        Builtins::default()
    }

    /// Serves `make()`'s provider in-process for each of `sources`
    /// (source addresses as `required_providers` writes them, e.g.
    /// `hashicorp/random`). A source that does not parse is a programming
    /// error of the caller and panics with the source named.
    pub fn register<P, F>(mut self, sources: &[&str], make: F) -> Builtins
    where
        P: terrane_sdk::Provider,
        F: Fn() -> P + Send + Sync + 'static,
    {
        let sample = make();
        let builtin = Builtin {
            name: sample.type_name().to_string(),
            version: sample.version().to_string(),
            make: Arc::new(move |address, schema, caps| {
                Arc::new(ProtocolProvider::new(
                    address,
                    InProcess::new(ProviderServer::new(make())),
                    schema,
                    caps,
                ))
            }),
        };
        for source in sources {
            let addr = ProviderAddr::parse(source)
                .unwrap_or_else(|e| panic!("built-in provider source {source:?}: {e}"));
            self.entries.push((addr, builtin.clone()));
        }
        self
    }

    /// Fetches the `http(s)://` URIs of Pulumi assets and archives that
    /// come without a hash with `f`, so that they are hashed as Pulumi's
    /// engine hashes them. Without one, such an asset or archive is sent
    /// without a hash (the plugin may compute it).
    pub fn fetch_uris_with(mut self, f: UriFetcher) -> Builtins {
        self.uri_fetcher = Some(f);
        self
    }

    /// The fetcher registered with [`Builtins::fetch_uris_with`].
    pub fn uri_fetcher(&self) -> Option<UriFetcher> {
        self.uri_fetcher.clone()
    }

    /// The built-in serving `addr`, if one was registered for it.
    pub fn for_addr(&self, addr: &ProviderAddr) -> Option<&Builtin> {
        self.entries.iter().find(|(a, _)| a == addr).map(|(_, b)| b)
    }

    /// Whether a plugin may take the place of the built-in at `addr`: all
    /// but those under Terraform's built-in host.
    pub fn overridable(addr: &ProviderAddr) -> bool {
        !addr.is_builtin()
    }
}

/// Built-ins for the engine's own unit tests: providers with nothing in
/// them, named random (hashicorp/ and terrane/), time (the same) and
/// terraform (Terraform's built-in address).
#[cfg(test)]
pub(crate) fn for_tests() -> Builtins {
    use tests::Named;
    Builtins::none()
        .register(&["hashicorp/random", "terrane/random"], || Named("random"))
        .register(&["hashicorp/time", "terrane/time"], || Named("time"))
        .register(&["terraform"], || Named("terraform"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use terrane_sdk::ResourceType;

    /// A provider with nothing in it, reporting the name it was given.
    pub(super) struct Named(pub &'static str);

    #[async_trait::async_trait]
    impl terrane_sdk::Provider for Named {
        type Data = ();
        fn type_name(&self) -> &str {
            self.0
        }
        fn version(&self) -> &str {
            "1.2.3"
        }
        fn resources(&self) -> Vec<Arc<dyn ResourceType>> {
            Vec::new()
        }
    }

    fn check(case: &str, builtins: &Builtins, source: &str, want: Option<&str>) {
        let addr = ProviderAddr::parse(source).unwrap();
        assert_eq!(
            builtins.for_addr(&addr).map(Builtin::name),
            want,
            "case {case}"
        );
    }

    #[test]
    fn which_addresses_are_built_in() {
        let b = Builtins::none()
            .register(&["hashicorp/random", "terrane/random"], || Named("random"))
            .register(&["terraform"], || Named("terraform"));
        check("registered", &b, "hashicorp/random", Some("random"));
        check("second_source", &b, "terrane/random", Some("random"));
        check("bare_name_is_hashicorp", &b, "random", Some("random"));
        check("builtin_terraform", &b, "terraform", Some("terraform"));
        check("other_namespace", &b, "acme/random", None);
        check("other_host", &b, "example.com/hashicorp/random", None);
        check("not_registered", &b, "hashicorp/aws", None);
        check(
            "none_registered",
            &Builtins::none(),
            "hashicorp/random",
            None,
        );
        let terraform = ProviderAddr::parse("terraform").unwrap();
        let random = ProviderAddr::parse("hashicorp/random").unwrap();
        assert!(!Builtins::overridable(&terraform));
        assert!(Builtins::overridable(&random));
        assert_eq!(b.for_addr(&random).unwrap().version(), "1.2.3");
    }
}
