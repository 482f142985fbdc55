//! `metadata functions -json`: the signatures of the built-in functions,
//! in Terraform's format (`format_version` 1.0), for editors and language
//! servers. Each function is listed under its name and under `core::NAME`,
//! as Terraform lists them. Descriptions are left out (the format makes
//! them optional): terrane has no prose of its own for each function.

use crate::session::Ui;
use serde_json::{json, Map, Value as Json};
use std::collections::BTreeMap;
use terrane_eval::func::{signature, SigParam, Signature};
use terrane_value::typejson::to_json;
use terrane_value::Type;

/// `metadata functions`: requires `-json`, as Terraform's does.
pub fn functions(ui: &Ui) -> u8 {
    if !ui.json {
        eprint!(
            "The `terrane metadata functions` command requires the `-json` flag.\n\n{}",
            crate::cmdspec::find(&["metadata", "functions"])
                .map(crate::cmdspec::help)
                .unwrap_or_default()
        );
        return 1;
    }
    println!("{}", document());
    0
}

/// The whole document: every function terrane has, sorted by name (the
/// order Go's JSON encoder gives Terraform's map).
pub fn document() -> Json {
    let mut sigs: BTreeMap<String, Json> = BTreeMap::new();
    for (name, sig) in all() {
        let entry = entry(&sig);
        sigs.insert(format!("core::{name}"), entry.clone());
        sigs.insert(name.to_string(), entry);
    }
    json!({
        "format_version": "1.0",
        "function_signatures": sigs.into_iter().collect::<Map<String, Json>>(),
    })
}

/// Every function with its signature: the library's, and the evaluator's
/// two special forms (`can`, `try`), whose arguments are expressions.
fn all() -> Vec<(&'static str, Signature)> {
    let expr = |name| SigParam {
        name,
        ty: Type::Dynamic,
        nullable: false,
    };
    // `type` is Terraform's console-only function: its document leaves it
    // out.
    let mut out: Vec<(&'static str, Signature)> = terrane_eval::func::names()
        .filter(|n| *n != "type")
        .filter_map(|n| signature(n).map(|s| (n, s)))
        .collect();
    out.push((
        "can",
        Signature {
            params: vec![expr("expression")],
            variadic: None,
            ret: Type::Bool,
        },
    ));
    out.push((
        "try",
        Signature {
            params: vec![],
            variadic: Some(expr("expressions")),
            ret: Type::Dynamic,
        },
    ));
    out
}

/// One function's entry: fields in the order Terraform writes them.
fn entry(sig: &Signature) -> Json {
    let mut e = Map::new();
    e.insert("return_type".into(), to_json(&sig.ret));
    if !sig.params.is_empty() {
        e.insert(
            "parameters".into(),
            Json::Array(sig.params.iter().map(param).collect()),
        );
    }
    if let Some(v) = &sig.variadic {
        e.insert("variadic_parameter".into(), param(v));
    }
    Json::Object(e)
}

fn param(p: &SigParam) -> Json {
    let mut o = Map::new();
    o.insert("name".into(), Json::from(p.name));
    if p.nullable {
        o.insert("is_nullable".into(), Json::Bool(true));
    }
    o.insert("type".into(), to_json(&p.ty));
    Json::Object(o)
}
