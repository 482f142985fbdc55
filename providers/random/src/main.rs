//! `terraform-provider-random`: serves the random provider as a plugin for
//! `registry.terraform.io/terrane/random`.

fn main() {
    terrane_sdk::serve("terrane", terrane_provider_random::RandomProvider)
}
