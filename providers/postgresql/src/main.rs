//! `terraform-provider-postgresql`: serves the postgresql provider as a
//! plugin for `registry.terraform.io/terrane/postgresql`.

fn main() {
    terrane_sdk::serve("terrane", terrane_provider_postgresql::PostgresProvider)
}
