//! `show` (of the state) and `state show`: stored objects as Terraform
//! prints them. Values are decoded with their resource type's schema, so
//! a dynamic attribute (`terraform_data.input`) loses its stored
//! `{"type", "value"}` wrapper and the recorded sensitive paths mark the
//! nodes they name: `(sensitive value)` appears where Terraform shows it.

use crate::args::Args;
use crate::session::Ui;
use std::path::Path;
use terrane_engine::Engine;
use terrane_render::{human, text};
use terrane_state::{InstanceAddr, ObjectState, Snapshot};
use terrane_value::Value;

/// Decodes stored objects with provider schemas.
struct Decoder {
    /// None when the configuration cannot be loaded; every object is then
    /// decoded loosely.
    engine: Option<Engine>,
}

impl Decoder {
    fn new(dir: &Path) -> Decoder {
        Decoder {
            engine: crate::session::load_engine(dir).ok(),
        }
    }

    async fn value(&self, s: &Snapshot, a: &InstanceAddr, o: &ObjectState) -> Value {
        let provider = s
            .resources
            .get(&a.resource)
            .map(|r| r.provider.as_str())
            .unwrap_or_default();
        if let Some(e) = &self.engine {
            if let Some(v) = e.stored_object_value(a, o, provider).await {
                return v;
            }
        }
        loose(o)
    }

    async fn shutdown(&self) {
        if let Some(e) = &self.engine {
            e.shutdown().await;
        }
    }
}

/// Without a schema the stored JSON is all there is, and a sensitive path
/// into a dynamic attribute does not name a node of it (the type wrapper
/// sits in between); so each attribute a sensitive path starts in is
/// hidden whole: more than Terraform hides, never less.
fn loose(o: &ObjectState) -> Value {
    let v = terrane_value::json::decode_loose(&o.attributes.json());
    let heads: Vec<terrane_value::Path> = o
        .sensitive_paths
        .iter()
        .map(|p| terrane_value::Path(p.0.iter().take(1).cloned().collect()))
        .collect();
    terrane_value::marks::mark_paths(&v, &heads)
}

/// `show` without a plan file: every object, then the outputs.
pub async fn show_all(dir: &Path, s: &Snapshot) {
    print!("{}", render_all(dir, s).await);
}

/// The text of [`show_all`]: every object, then the outputs (also what
/// `test -verbose` prints under an apply run).
pub async fn render_all(dir: &Path, s: &Snapshot) -> String {
    if s.resources.is_empty() && s.outputs.is_empty() {
        return "The state file is empty. No resources are represented.\n".to_string();
    }
    let d = Decoder::new(dir);
    let mut blocks = Vec::new();
    for (raddr, r) in &s.resources {
        for key in r.instances.keys() {
            blocks.extend(block(&d, s, &raddr.instance(key.clone())).await);
        }
    }
    d.shutdown().await;
    // Blocks are separated by one blank line, and the outputs by two.
    let mut out = blocks.join("\n");
    if !s.outputs.is_empty() {
        let gap = if blocks.is_empty() { "" } else { "\n\n" };
        out.push_str(&format!(
            "{gap}Outputs:\n\n{}",
            human::stored_outputs(s, "(sensitive value)", text::show_value)
        ));
    }
    out
}

/// `state show ADDRESS`.
pub async fn state_show(ui: &Ui, dir: &Path, a: &Args) -> u8 {
    let Some(p) = a.positional.first() else {
        return ui.error("Missing address", "Usage: terrane state show ADDRESS");
    };
    let target = match super::targets(ui, std::slice::from_ref(p)) {
        Ok(mut t) => t.remove(0),
        Err(c) => return c,
    };
    // The store is read off the runtime thread (see `off_runtime`).
    let s = match crate::session::read_state(ui, dir) {
        Ok(s) => s,
        Err(c) => return c,
    };
    let found = super::matching(&s, &target);
    if found.is_empty() {
        return ui.error("No instance found for the given address!", format!("This command requires that the address references one specific instance. {p:?} matched nothing."));
    }
    let d = Decoder::new(dir);
    let mut blocks = Vec::new();
    for x in found {
        blocks.extend(block(&d, &s, &x).await);
    }
    print!("{}", blocks.join("\n"));
    d.shutdown().await;
    0
}

async fn block(d: &Decoder, s: &Snapshot, a: &InstanceAddr) -> Option<String> {
    let o = s.object(a, None)?;
    let v = d.value(s, a, o).await;
    Some(object_text(a, o, &v))
}

/// One object's block: non-null attributes, `=` aligned, nested values
/// four spaces deeper per level.
fn object_text(a: &InstanceAddr, o: &ObjectState, v: &Value) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let kw = if a.resource.mode == terrane_state::Mode::Data {
        "data"
    } else {
        "resource"
    };
    let _ = writeln!(
        out,
        "# {a}:{}",
        if o.status == terrane_state::Status::Tainted {
            " (tainted)"
        } else {
            ""
        }
    );
    let _ = writeln!(out, "{kw} \"{}\" \"{}\" {{", a.resource.ty, a.resource.name);
    if let Some(m) = v.entries() {
        let width = m
            .iter()
            .filter(|(_, x)| !x.is_null())
            .map(|(k, _)| k.len())
            .max()
            .unwrap_or(0);
        for (k, x) in m {
            if x.is_null() {
                continue;
            }
            let _ = writeln!(out, "    {k:<width$} = {}", text::show_value(x, 4));
        }
    }
    out.push_str("}\n");
    out
}
