//! `terraform-provider-time`: serves the time provider as a plugin for
//! `registry.terraform.io/terrane/time`.

fn main() {
    terrane_sdk::serve("terrane", terrane_provider_time::TimeProvider)
}
