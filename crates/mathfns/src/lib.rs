//! `log`, `log2` and `pow`, defined in terrane's executables so that they do
//! not load glibc's `libm.so.6`.
//!
//! These three are the only functions of libm that the binaries call:
//! bundled SQLite calls `log`, and LLVM lowers `f64::ln`, `f64::log2` and
//! `f64::powf` in dependencies (num-bigint's digit counts, for one) to
//! calls of them. (The `log` and `pow` functions of expressions do not
//! come here: terrane-eval computes them as Go does, with the `libm`
//! crate's routines named directly.) Loading a library for them cost every
//! run about 480 KB of resident memory, and the loader's time: binaries are
//! linked with immediate binding, so the loader looks every symbol of the
//! executable up in libm's hash tables too, and the kernel maps 64 KB of a
//! library around each page that is touched. Defined in the executable, the
//! calls bind here at link time, and `--as-needed` leaves libm out of the
//! binary's needed libraries.
//!
//! The definitions are the `libm` crate's, Rust's port of the FreeBSD
//! msun routines.
//!
//! Every binary names this crate (`use terrane_mathfns as _;`); a crate
//! that nothing names is not linked.

#![deny(unsafe_code)]

/// The natural logarithm, for C callers and LLVM's lowering of `f64::ln`.
#[allow(unsafe_code)]
#[no_mangle]
pub extern "C" fn log(x: f64) -> f64 {
    libm::log(x)
}

/// The base-2 logarithm, for LLVM's lowering of `f64::log2`.
#[allow(unsafe_code)]
#[no_mangle]
pub extern "C" fn log2(x: f64) -> f64 {
    libm::log2(x)
}

/// `x` to the power `y`, for LLVM's lowering of `f64::powf`.
#[allow(unsafe_code)]
#[no_mangle]
pub extern "C" fn pow(x: f64, y: f64) -> f64 {
    libm::pow(x, y)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Compares bit patterns, so NaN matches NaN and -0 is not 0.
    fn check(name: &str, got: f64, want: f64) {
        let same = got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan());
        assert!(same, "{name}: got {got:?}, want {want:?}");
    }

    #[test]
    fn special_and_exact_values() {
        use std::hint::black_box as b;
        let cases: &[(&str, f64, f64)] = &[
            ("log 1", log(b(1.0)), 0.0),
            ("log e", log(b(std::f64::consts::E)), 1.0),
            ("log 0", log(b(0.0)), f64::NEG_INFINITY),
            ("log -1", log(b(-1.0)), f64::NAN),
            ("log inf", log(b(f64::INFINITY)), f64::INFINITY),
            ("log 16 / log 2", log(b(16.0)) / log(b(2.0)), 4.0),
            ("log2 8", log2(b(8.0)), 3.0),
            ("log2 2^-1074", log2(b(f64::from_bits(1))), -1074.0),
            ("log2 0", log2(b(0.0)), f64::NEG_INFINITY),
            ("pow 2 10", pow(b(2.0), b(10.0)), 1024.0),
            ("pow 3 2", pow(b(3.0), b(2.0)), 9.0),
            ("pow 4 0.5", pow(b(4.0), b(0.5)), 2.0),
            ("pow x 0", pow(b(f64::NAN), b(0.0)), 1.0),
            ("pow 0 -1", pow(b(0.0), b(-1.0)), f64::INFINITY),
            ("pow -0 -1", pow(b(-0.0), b(-1.0)), f64::NEG_INFINITY),
            ("pow -8 1/3", pow(b(-8.0), b(1.0 / 3.0)), f64::NAN),
            ("pow -2 3", pow(b(-2.0), b(3.0)), -8.0),
            ("pow 10 309", pow(b(10.0), b(309.0)), f64::INFINITY),
        ];
        for &(name, got, want) in cases {
            check(name, got, want);
        }
    }

    /// The standard library's methods reach the same definitions.
    #[test]
    fn std_methods_agree() {
        let xs: [f64; 8] = [0.1, 0.5, 1.5, 2.0, 10.0, 12345.678, 1e-300, 1e300];
        for x in xs {
            // Not folded at compile time (with the compiler's own libm).
            let x = std::hint::black_box(x);
            check(&format!("ln {x}"), x.ln(), log(x));
            check(&format!("log2 {x}"), x.log2(), log2(x));
            check(&format!("powf {x} 1.7"), x.powf(1.7), pow(x, 1.7));
        }
    }
}
