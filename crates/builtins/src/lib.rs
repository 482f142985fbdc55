//! The providers the `terrane` binary serves in-process.
//!
//! The engine carries no provider of its own: the program embedding it
//! registers them. This crate is that registration for `terrane`, so the
//! engine depends on the SDK only and a program that wants other built-ins
//! (or none) builds its own [`Builtins`].
//!
//! Addresses served:
//! * `terraform.io/builtin/terraform` (`terraform_data`), never overridden;
//! * random, local and time under the `hashicorp` and `terrane` namespaces;
//! * postgresql under `terrane` and `cyrilgdn` (the community provider's
//!   address, so existing configurations run unchanged).
//!
//! All but the first give way to a plugin binary discovery finds for the
//! same address.
//!
//! It also gives the engine the `terrane` binary's HTTP client, for the
//! URIs of Pulumi assets and archives.

pub use terrane_engine::provider::Builtins;

/// The built-ins of the `terrane` binary, and how it fetches the
/// `http(s)://` contents of Pulumi assets and archives to hash them
/// (`terrane_backend::fetch::get`: TLS as the http backend's).
pub fn standard() -> Builtins {
    Builtins::none()
        .fetch_uris_with(terrane_engine::provider::UriFetcher(std::sync::Arc::new(
            terrane_backend::fetch::get,
        )))
        .register(&["terraform"], || {
            terrane_provider_terraform::TerraformProvider
        })
        .register(&["hashicorp/random", "terrane/random"], || {
            terrane_provider_random::RandomProvider
        })
        .register(&["hashicorp/local", "terrane/local"], || {
            terrane_provider_local::LocalProvider
        })
        .register(&["hashicorp/time", "terrane/time"], || {
            terrane_provider_time::TimeProvider
        })
        .register(&["terrane/postgresql", "cyrilgdn/postgresql"], || {
            terrane_provider_postgresql::PostgresProvider
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use terrane_engine::provider::ProviderAddr;

    fn check(case: &str, source: &str, want: Option<&str>) {
        let addr = ProviderAddr::parse(source).unwrap();
        assert_eq!(
            standard().for_addr(&addr).map(|b| b.name().to_string()),
            want.map(str::to_string),
            "case {case}"
        );
    }

    #[test]
    fn the_binary_serves_these_addresses() {
        check("hashicorp_random", "hashicorp/random", Some("random"));
        check("bare_local", "local", Some("local"));
        check("terrane_time", "terrane/time", Some("time"));
        check("builtin_terraform", "terraform", Some("terraform"));
        check(
            "terrane_postgresql",
            "terrane/postgresql",
            Some("postgresql"),
        );
        check(
            "community_postgresql",
            "cyrilgdn/postgresql",
            Some("postgresql"),
        );
        check(
            "hashicorp_postgresql_is_not_ours",
            "hashicorp/postgresql",
            None,
        );
        check("other_namespace", "acme/random", None);
        check("other_host", "example.com/hashicorp/random", None);
        check("other_type", "hashicorp/aws", None);
    }
}
