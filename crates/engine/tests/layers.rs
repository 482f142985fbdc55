//! The engine's layering invariant (docs/architecture.md), checked on the
//! source: each module imports only modules of lower layers (the bottom
//! layer's modules may import each other, without a circle). A new import
//! that points up or sideways fails here, naming the file and the module.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Layers from the top (0) down; a module imports only from larger numbers.
const LAYERS: &[&[&str]] = &[
    &["run"],
    &["plan", "apply"],
    &["nodes"],
    &["ephemeral"],
    &["provider_each", "expand"],
    &["instance"],
    &[
        "conditions",
        "provision",
        "module_override",
        "output_type",
        "spread",
    ],
    &["walk"],
    &["decide", "checks", "decode", "persist"],
    &["schedule"],
    &[
        "values", "graph", "model", "provider", "sync", "defer", "duration",
    ],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// The engine modules `text` names through `crate::`.
fn imports(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    for (i, _) in text.match_indices("crate::") {
        let rest = &text[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // Top-level items of the group: commas outside inner braces,
            // up to the brace that closes the group.
            let mut depth = 0;
            let mut start = 0;
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        out.insert(ident(&group[start..j]));
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        out.insert(ident(&group[start..j]));
                        start = j + 1;
                    }
                    _ => {}
                }
            }
        } else {
            out.insert(ident(rest));
        }
    }
    out.retain(|m| !m.is_empty());
    out
}

/// Module name → the engine modules it imports (test files left out).
fn module_imports(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut map: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut visit = |module: String, path: &Path| {
        let text = std::fs::read_to_string(path).unwrap();
        let found = imports(&text);
        map.entry(module.clone())
            .or_default()
            .extend(found.into_iter().filter(|m| *m != module));
    };
    for entry in std::fs::read_dir(src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            let mut stack = vec![path.clone()];
            while let Some(dir) = stack.pop() {
                for e in std::fs::read_dir(&dir).unwrap() {
                    let p = e.unwrap().path();
                    if p.is_dir() {
                        stack.push(p);
                    } else if p.extension().is_some_and(|x| x == "rs") {
                        visit(name.clone(), &p);
                    }
                }
            }
        } else if let Some(stem) = name.strip_suffix(".rs") {
            if stem != "lib" && !stem.ends_with("_tests") {
                visit(stem.to_string(), &path);
            }
        }
    }
    map
}

#[test]
fn reader_finds_single_and_grouped_imports() {
    let cases: &[(&str, &str, &[&str])] = &[
        ("single", "use crate::walk::Walk;", &["walk"]),
        (
            "path_in_code",
            "let x = crate::model::Plan::default();",
            &["model"],
        ),
        (
            "group",
            "use crate::{graph::{NodeId, NodeKind}, sync::lock, values};",
            &["graph", "sync", "values"],
        ),
        ("none", "use std::sync::Arc; // crate", &[]),
    ];
    for (name, text, want) in cases {
        let got: Vec<String> = imports(text).into_iter().collect();
        assert_eq!(got, *want, "case {name}");
    }
}

#[test]
fn every_engine_module_imports_only_lower_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let map = module_imports(&src);
    let mut wrong = Vec::new();
    for (module, used) in &map {
        let Some(mine) = layer_of(module) else {
            wrong.push(format!(
                "{module}: not in any layer (add it to LAYERS and to docs/architecture.md)"
            ));
            continue;
        };
        for other in used {
            match layer_of(other) {
                None if map.contains_key(other) => {}
                None => continue, // not a module: a re-exported item of lib.rs
                Some(l) if l > mine || (l == mine && mine == LAYERS.len() - 1) => continue,
                Some(_) => {}
            }
            wrong.push(format!("{module} imports {other}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the layering:\n{}",
        wrong.join("\n")
    );

    // The bottom layer's modules may use each other, but without a circle.
    let bottom = LAYERS[LAYERS.len() - 1];
    fn reaches(
        map: &BTreeMap<String, BTreeSet<String>>,
        from: &str,
        to: &str,
        seen: &mut BTreeSet<String>,
    ) -> bool {
        map.get(from)
            .into_iter()
            .flatten()
            .any(|m| m == to || (seen.insert(m.clone()) && reaches(map, m, to, seen)))
    }
    for m in bottom {
        assert!(
            !reaches(&map, m, m, &mut BTreeSet::new()),
            "{m} reaches itself through the bottom layer's imports"
        );
    }
}
