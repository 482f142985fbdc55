//! `terraform-provider-local`: serves the local provider as a plugin for
//! `registry.terraform.io/terrane/local`.

fn main() {
    terrane_sdk::serve("terrane", terrane_provider_local::LocalProvider)
}
