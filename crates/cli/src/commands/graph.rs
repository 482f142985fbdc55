//! `graph`: the configuration's graph as DOT (or SVG through Graphviz).

use crate::args::Args;
use crate::session::{has_errors, Ui};
use std::io::Write;
use std::path::Path;

pub fn graph(ui: &Ui, dir: &Path, a: &Args) -> u8 {
    let (config, diags) = terrane_config::load_config(dir, &crate::vars::statics(dir));
    if has_errors(&diags) {
        ui.diags(&diags);
        return 1;
    }
    let g = terrane_engine::build_graph(&config);
    let dot = terrane_engine::to_dot(&g);
    if a.value("format") == Some("svg") || a.has("svg") {
        let child = std::process::Command::new("dot")
            .arg("-Tsvg")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn();
        match child {
            Ok(mut c) => {
                if let Some(mut stdin) = c.stdin.take() {
                    let _ = stdin.write_all(dot.as_bytes());
                }
                match c.wait_with_output() {
                    Ok(o) => {
                        let _ = std::io::stdout().write_all(&o.stdout);
                        return u8::from(!o.status.success());
                    }
                    Err(e) => return ui.error("Graphviz failed", e.to_string()),
                }
            }
            Err(_) => return ui.error("Graphviz is not installed", "SVG output needs Graphviz's `dot` on PATH (apt-get install graphviz); without -format=svg the graph is written as DOT."),
        }
    }
    print!("{dot}");
    0
}
