//! Fuzz target: the configuration front end (HCL parser, module model,
//! reference finder, type-constraint parser) must never panic on any
//! input; every problem must come back as a diagnostic with a range inside
//! the input.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (_, diags) = terrane_config::parse_str("fuzz.tf", text);
    for d in diags {
        if let Some(r) = d.range {
            assert!(r.start.line >= 1 && r.start.col >= 1, "diagnostic positions are 1-based");
        }
    }
});
