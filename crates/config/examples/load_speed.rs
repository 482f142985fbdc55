//! Times `load_module` on each directory given and prints the median,
//! minimum and maximum over several rounds (`ROUNDS`, default 9), after
//! one warm-up round. For profiling the loader:
//! `cargo run --release -p terrane-config --example load_speed -- DIR...`

use std::path::Path;
use std::time::{Duration, Instant};

fn main() {
    let rounds: usize = std::env::var("ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(9)
        .max(1);
    for dir in std::env::args().skip(1) {
        let (_, diags) = terrane_config::load_module(Path::new(&dir));
        let mut times: Vec<Duration> = (0..rounds)
            .map(|_| {
                let t = Instant::now();
                let loaded = terrane_config::load_module(Path::new(&dir));
                let elapsed = t.elapsed();
                drop(loaded);
                elapsed
            })
            .collect();
        times.sort();
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        println!(
            "{dir}: {} diagnostic(s), load median {:.1} ms (min {:.1}, max {:.1}) over {rounds} rounds",
            diags.len(),
            ms(times[rounds / 2]),
            ms(times[0]),
            ms(times[rounds - 1]),
        );
    }
}
