//! `terraform-provider-time`: serves the time provider as a plugin for
//! `registry.terraform.io/terrane/time`.

// The plugin spends much of each call in allocation (h2 frames, msgpack
// values); glibc's allocator costs about a quarter of its CPU there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    terrane_sdk::serve("terrane", terrane_provider_time::TimeProvider)
}
