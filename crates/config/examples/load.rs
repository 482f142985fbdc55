//! Load-only front end check: `load DIR...` reads each directory as one
//! module (its `.tf`/`.tf.json` files, no child modules, no providers),
//! runs the static reference check and prints every diagnostic, then
//! one line `DIR: clean` or `DIR: N error(s)`. The directory's test files
//! (`*.tftest.hcl`, also under `tests/`) are loaded too, as Terraform's
//! loader tests load them. Exit status 1 if any
//! directory had an error. `--no-refs` (first argument) skips the
//! reference check, as Terraform's own loader tests do. Used by
//! scripts/corpus-load.

use std::path::Path;
use terrane_config::{check_test_files, load_module, validate_references, Config, Severity};

fn main() {
    let mut failed = false;
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let refs = args.first().map(String::as_str) != Some("--no-refs");
    if !refs {
        args.remove(0);
    }
    for dir in args {
        let (module, mut diags) = load_module(Path::new(&dir));
        let config = Config {
            module,
            dir: dir.clone().into(),
            children: Default::default(),
        };
        diags.extend(check_test_files(Path::new(&dir), "tests", Some(&config)));
        if refs && !diags.iter().any(|d| d.severity == Severity::Error) {
            diags.extend(validate_references(&config));
        }
        let errors = diags
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count();
        for d in &diags {
            println!("  {}", d.to_string().lines().next().unwrap_or_default());
        }
        if errors == 0 {
            println!("{dir}: clean");
        } else {
            failed = true;
            println!("{dir}: {errors} error(s)");
        }
    }
    std::process::exit(i32::from(failed));
}
