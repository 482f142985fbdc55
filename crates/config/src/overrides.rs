//! Override files (`override.tf`, `*_override.tf`, their `.tf.json` and
//! OpenTofu `.tofu`/`.tofu.json` forms), merged into the primary files'
//! bodies before anything is decoded, as Terraform merges them: each
//! override file in name order, each of its blocks into the one block of
//! the primary files it names.
//!
//! - `variable`, `output`, `module`, `resource`, `data`, `ephemeral`,
//!   `provider`: every argument the override sets replaces the base one
//!   (module inputs and resource arguments included); `depends_on` may not
//!   be overridden. A nested block type the override uses replaces every
//!   base block of that type (`dynamic "x"` counts as `x`); a resource's
//!   `lifecycle` is merged argument by argument (`create_before_destroy`,
//!   `prevent_destroy`, `ignore_changes`). Nested blocks of a `variable`
//!   or `output` override (validations, preconditions) are not merged, as
//!   in Terraform.
//! - `locals`: each value replaces the base value of that name.
//! - `terraform`: `required_version` and the state/backend/cloud blocks are
//!   replaced, `required_providers` entries replaced by name.
//! - A default (unaliased) provider configuration may be added by an
//!   override; anything else must override something declared, or it is
//!   reported with Terraform's "Missing base ..." error. `moved` and
//!   `import` blocks are refused in override files.
//!
//! Merged arguments and blocks keep their own file's positions.
//!
//! One difference, on purpose: Terraform 1.15 silently ignores `ephemeral`
//! blocks in override files (its merge has no case for them); terrane
//! merges them like resources. Other block types an override cannot
//! override (`check`, `removed`, ...) get a warning, not silence.

use crate::decode::literal_string;
use crate::diag::{Diagnostic, LineIndex};
use crate::source::{GAttr, GBlock, GBody};
use std::sync::Arc;
use terrane_hcl::Span;

/// One parsed file: its line index and body.
pub(crate) struct Parsed {
    pub index: Arc<LineIndex>,
    pub body: GBody,
    pub json: bool,
}

/// Whether `name` (a file name) is an override file.
pub(crate) fn is_override(name: &str) -> bool {
    let stem = [".tf.json", ".tofu.json", ".tf", ".tofu"]
        .iter()
        .find_map(|ext| name.strip_suffix(ext));
    stem.is_some_and(|s| s == "override" || s.ends_with("_override"))
}

/// Merges the override file `ov` into `base` (the primary files).
pub(crate) fn merge(base: &mut Vec<Parsed>, ov: Parsed, diags: &mut Vec<Diagnostic>) {
    let index = ov.index.clone();
    // Blocks the override adds (a default provider configuration, a first
    // `terraform` block) are read as part of the override file itself.
    let mut added = GBody::default();
    let err = |diags: &mut Vec<Diagnostic>, summary: &str, detail: String, b: &GBlock| {
        diags.push(Diagnostic::error(
            summary,
            detail,
            index.range(b.span.clone()),
        ));
    };
    for a in &ov.body.attrs {
        diags.push(Diagnostic::error(
            "Unsupported argument",
            format!("An argument named {:?} is not expected here.", a.name),
            a.file.range(a.name_span.clone()),
        ));
    }
    let mut seen = Vec::new();
    for ob in ov.body.blocks {
        let label = |i: usize| ob.labels.get(i).map(|l| l.0.as_str()).unwrap_or_default();
        match ob.ty.as_str() {
            "locals" => {
                for a in ob.body.attrs {
                    match find_local(base, &a.name) {
                        Some(slot) => *slot = a,
                        None => diags.push(Diagnostic::error(
                            "Missing base local value definition to override",
                            format!("There is no local value named {:?}. An override file can only override a local value that was already defined in a primary configuration file.", a.name),
                            a.file.range(a.span.clone()),
                        )),
                    }
                }
            }
            "terraform" => {
                if let Some(ob) = merge_terraform(base, ob, ov.json, &mut seen, diags) {
                    added.blocks.push(ob);
                }
            }
            "provider" => {
                let alias = ob
                    .body
                    .attrs
                    .iter()
                    .find(|a| a.name == "alias")
                    .and_then(|a| literal_string(&a.value));
                let name = label(0).to_string();
                match find_block(base, |b| {
                    b.ty == "provider"
                        && b.labels.first().map(|l| l.0.as_str()) == Some(name.as_str())
                        && b.body
                            .attrs
                            .iter()
                            .find(|a| a.name == "alias")
                            .and_then(|a| literal_string(&a.value))
                            == alias
                }) {
                    Some(b) => merge_body(&mut b.body, ob.body, Kind::Other, diags),
                    None if alias.is_none() => added.blocks.push(ob),
                    None => err(
                        diags,
                        "Missing base provider configuration for override",
                        format!("There is no {name} provider configuration with the alias {:?}. An override file can only override an aliased provider configuration that was already defined in a primary configuration file.", alias.unwrap_or_default()),
                        &ob,
                    ),
                }
            }
            "moved" | "import" => {
                let (summary, detail) = if ob.ty == "moved" {
                    ("Cannot override 'moved' blocks", "Records of moved objects can appear only in normal files, not in override files.")
                } else {
                    ("Cannot override 'import' blocks", "Import blocks can appear only in normal files, not in override files.")
                };
                err(diags, summary, detail.into(), &ob);
            }
            "variable" | "output" | "module" | "resource" | "data" | "ephemeral" => {
                let (ty, name, labels) = (ob.ty.clone(), label(0), ob.labels.len());
                let found = find_block(base, |b| {
                    b.ty == ty
                        && b.labels.len() == labels
                        && b.labels.iter().zip(&ob.labels).all(|(x, y)| x.0 == y.0)
                });
                let Some(b) = found else {
                    let (summary, detail) = match ty.as_str() {
                        "variable" => ("Missing base variable declaration to override", format!("There is no variable named {name:?}. An override file can only override a variable that was already declared in a primary configuration file.")),
                        "output" => ("Missing base output definition to override", format!("There is no output named {name:?}. An override file can only override an output that was already defined in a primary configuration file.")),
                        "module" => ("Missing module call to override", format!("There is no module call named {name:?}. An override file can only override a module call that was defined in a primary configuration file.")),
                        "data" => ("Missing data resource to override", format!("There is no {name} data resource named {:?}. An override file can only override a data block defined in a primary configuration file.", label(1))),
                        "ephemeral" => ("Missing resource to override", format!("There is no {name} ephemeral resource named {:?}. An override file can only override an ephemeral block defined in a primary configuration file.", label(1))),
                        _ => ("Missing resource to override", format!("There is no {name} resource named {:?}. An override file can only override a resource block defined in a primary configuration file.", label(1))),
                    };
                    err(diags, summary, detail, &ob);
                    continue;
                };
                let kind = match ty.as_str() {
                    "variable" | "output" => Kind::Named,
                    "module" => Kind::Module,
                    _ => Kind::Resource,
                };
                merge_body(&mut b.body, ob.body, kind, diags);
            }
            _ => diags.push(Diagnostic::warning(
                "Block ignored in override file",
                format!(
                    "Override files merge into declarations of the primary files; a {:?} block there has nothing to override and is ignored.",
                    ob.ty
                ),
                index.range(ob.ty_span.clone()),
            )),
        }
    }
    if !added.blocks.is_empty() {
        base.push(Parsed {
            index,
            body: added,
            json: ov.json,
        });
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// `variable`, `output`: arguments only.
    Named,
    Module,
    Resource,
    /// `provider`, nested bodies.
    Other,
}

fn find_block(base: &mut [Parsed], mut pred: impl FnMut(&GBlock) -> bool) -> Option<&mut GBlock> {
    base.iter_mut()
        .flat_map(|p| p.body.blocks.iter_mut())
        .find(|b| pred(b))
}

fn find_local<'b>(base: &'b mut [Parsed], name: &str) -> Option<&'b mut GAttr> {
    base.iter_mut()
        .flat_map(|p| p.body.blocks.iter_mut())
        .filter(|b| b.ty == "locals")
        .flat_map(|b| b.body.attrs.iter_mut())
        .find(|a| a.name == name)
}

/// The block type a nested block overrides (`dynamic "x"` is `x`).
fn block_type(b: &GBlock) -> &str {
    if b.ty == "dynamic" {
        b.labels.first().map(|l| l.0.as_str()).unwrap_or_default()
    } else {
        &b.ty
    }
}

fn set_attr(body: &mut GBody, a: GAttr) {
    match body.attrs.iter_mut().find(|x| x.name == a.name) {
        Some(slot) => *slot = a,
        None => body.attrs.push(a),
    }
}

fn merge_body(base: &mut GBody, ov: GBody, kind: Kind, diags: &mut Vec<Diagnostic>) {
    for a in ov.attrs {
        if a.name == "depends_on" && kind != Kind::Other {
            let first = match &a.value {
                terrane_hcl::expr::Expression::Array(items) => {
                    items.iter().next().and_then(|e| e.span())
                }
                _ => None,
            };
            diags.push(Diagnostic::error(
                "Unsupported override",
                "The depends_on argument may not be overridden.",
                a.index.range(first.or(a.value.span())),
            ));
            continue;
        }
        set_attr(base, a);
    }
    if kind == Kind::Named {
        return;
    }
    let mut blocks = Vec::new();
    for b in ov.blocks {
        if kind == Kind::Resource && b.ty == "lifecycle" {
            match base.blocks.iter_mut().find(|x| x.ty == "lifecycle") {
                Some(l) => {
                    for a in b.body.attrs {
                        if matches!(
                            a.name.as_str(),
                            "create_before_destroy" | "prevent_destroy" | "ignore_changes"
                        ) {
                            set_attr(&mut l.body, a);
                        }
                    }
                }
                None => base.blocks.push(b),
            }
            continue;
        }
        blocks.push(b);
    }
    let replaced: Vec<String> = blocks.iter().map(|b| block_type(b).to_string()).collect();
    base.blocks
        .retain(|b| b.ty == "lifecycle" || !replaced.iter().any(|t| t == block_type(b)));
    base.blocks.extend(blocks);
}

/// Merges an override `terraform` block; gives it back when the primary
/// files have none.
fn merge_terraform(
    base: &mut [Parsed],
    mut ob: GBlock,
    json: bool,
    seen: &mut Vec<(bool, String)>,
    diags: &mut Vec<Diagnostic>,
) -> Option<GBlock> {
    let Some(tb) = find_block(base, |b| b.ty == "terraform") else {
        return Some(ob);
    };
    // An override file may itself hold only one backend and one cloud
    // block (`seen`: those of its earlier `terraform` blocks); a second
    // one is reported as in a primary file, and dropped.
    ob.body.blocks.retain(|b| {
        if !matches!(b.ty.as_str(), "backend" | "cloud") {
            return true;
        }
        let cloud = b.ty == "cloud";
        let decl = b.index.range(crate::source::def_span(b, json));
        let at = crate::diag::hcl_range(&decl);
        match seen.iter().find(|(c, _)| *c == cloud) {
            Some((_, prev)) => {
                let (summary, detail) = if cloud {
                    ("Duplicate HCP Terraform configurations", format!("A module may have only one 'cloud' block configuring HCP Terraform or Terraform Enterprise. The 'cloud' block was previously configured at {prev}."))
                } else {
                    ("Duplicate 'backend' configuration block", format!("A module may have only one 'backend' configuration block. The backend was previously configured at {prev}."))
                };
                diags.push(Diagnostic::error(summary, detail, decl));
                false
            }
            None => {
                seen.push((cloud, at));
                true
            }
        }
    });
    for a in ob.body.attrs {
        set_attr(&mut tb.body, a);
    }
    for b in ob.body.blocks {
        match b.ty.as_str() {
            "required_providers" => {
                match tb
                    .body
                    .blocks
                    .iter_mut()
                    .find(|x| x.ty == "required_providers")
                {
                    Some(rp) => {
                        for a in b.body.attrs {
                            set_attr(&mut rp.body, a);
                        }
                    }
                    None => tb.body.blocks.push(b),
                }
            }
            "backend" | "cloud" | "state" | "state_store" => {
                tb.body.blocks.retain(|x| {
                    let replaced =
                        matches!(x.ty.as_str(), "backend" | "cloud" | "state" | "state_store");
                    // Terraform decodes each file before merging: a
                    // `state_store` block (not served without experiments)
                    // is reported even when an override replaces it.
                    if replaced && x.ty == "state_store" {
                        diags.push(Diagnostic::error(
                            "Unsupported block type",
                            "Blocks of type \"state_store\" are not expected here.",
                            x.index.range(x.ty_span.clone()),
                        ));
                    }
                    !replaced
                });
                tb.body.blocks.push(b);
            }
            _ => tb.body.blocks.push(b),
        }
    }
    None
}
