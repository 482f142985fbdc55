//! How the `terrane` executable is linked: the libraries the loader must
//! map at every start. glibc's `libm.so.6` is not one of them, since
//! `log`, `log2` and `pow` are defined in the executable
//! (crates/mathfns); a new caller of another libm function would bring it
//! back, and this test then lists the symbols the executable imports.
#![cfg(target_os = "linux")]

use std::process::Command;

/// Runs `readelf` with `args` on the terrane executable.
fn readelf(args: &[&str]) -> String {
    let bin = env!("CARGO_BIN_EXE_terrane");
    let out = Command::new("readelf")
        .args(args)
        .arg(bin)
        .output()
        .expect("readelf (binutils) runs");
    assert!(out.status.success(), "readelf {args:?} {bin} failed");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `lib` is not among the executable's needed libraries; otherwise the
/// failure lists the executable's undefined symbols, the new caller's
/// among them.
fn check(name: &str, lib: &str, dynamic: &str) {
    let needed: Vec<&str> = dynamic
        .lines()
        .filter(|l| l.contains("(NEEDED)"))
        .filter_map(|l| l.split('[').nth(1)?.split(']').next())
        .collect();
    if needed.contains(&lib) {
        let symbols = readelf(&["--dyn-syms", "-W"]);
        let undefined: Vec<&str> = symbols
            .lines()
            .filter(|l| l.contains(" UND "))
            .filter_map(|l| l.split_whitespace().nth(7))
            .collect();
        panic!("{name}: the executable needs {lib} (needed: {needed:?}); its undefined symbols: {undefined:?}");
    }
    assert!(
        needed.iter().any(|n| n.starts_with("libc.so")),
        "{name}: readelf output not understood: {dynamic}"
    );
}

#[test]
fn libraries_loaded_at_start() {
    let dynamic = readelf(&["-d"]);
    let cases = [("no libm", "libm.so.6")];
    for (name, lib) in cases {
        check(name, lib, &dynamic);
    }
}
