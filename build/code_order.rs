// The build script of terrane's binaries (`build = "../../build/code_order.rs"`
// in the manifests of `terrane` and the four provider plugins): a release
// build on x86-64 Linux links their functions in the order of
// `build/code-order.txt`, so the code one run executes sits together.
//
// Why: the kernel maps a binary's code in 64 KB windows around each page a
// run touches. Linked in the compiler's order, the 2.4-3.5 MB of functions a
// plan or a provider call runs are spread over the whole 23 MB text, and a
// 5,000-instance plan kept 15 MB of code resident; clustered, 5 MB. The list is
// made by `scripts/code-order` from the functions real runs execute. A
// symbol missing from the binary (the code changed since) is skipped, so a
// stale list costs memory, never correctness. The rust-lld that Rust uses
// to link on this target reads the list; set TERRANE_CODE_ORDER=0 to build
// without it (another linker, or to measure).
//
// The same release builds link a position-dependent executable (`-no-pie`),
// which is also Go's default build mode on linux/amd64. A PIE
// carries 28,000 dynamic relocations (a 677 KB `.rela.dyn`) that the loader
// reads at every start, and it writes a pointer into every page of the
// 482 KB `.data.rel.ro`, so all of both were resident in every run. With
// the addresses fixed at link time, those tables go and only the pages a
// run reads are mapped: a 1,000-instance apply through a plugin peaks
// 1.1 MB lower. The code is still compiled position-independent, and the
// shared libraries are still placed at random; set TERRANE_PIE=1 to link a
// PIE.

use std::path::Path;

fn main() {
    // Every package built with this script sits two levels down.
    let list = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../build/code-order.txt");
    println!("cargo:rerun-if-changed={}", list.display());
    println!("cargo:rerun-if-env-changed=TERRANE_CODE_ORDER");
    println!("cargo:rerun-if-env-changed=TERRANE_PIE");
    let release_linux = std::env::var("PROFILE").as_deref() == Ok("release")
        && std::env::var("TARGET").as_deref() == Ok("x86_64-unknown-linux-gnu");
    if release_linux && std::env::var("TERRANE_PIE").as_deref() != Ok("1") {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
    let wanted = release_linux && std::env::var("TERRANE_CODE_ORDER").as_deref() != Ok("0");
    if wanted && list.is_file() {
        println!(
            "cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}",
            list.display()
        );
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}
