//! `state replace-provider FROM TO`: every resource whose provider is FROM
//! (any alias) gets TO instead, under the state lock, after approval
//! (or `-auto-approve`). Objects are untouched otherwise.

use crate::args::Args;
use crate::session::{lock, open_store, Ui};
use std::io::{BufRead, Write};
use std::path::Path;
use terrane_engine::provider::ProviderAddr;
use terrane_state::Change;

pub fn replace_provider(ui: &Ui, dir: &Path, a: &Args) -> u8 {
    let [from, to] = a.positional.as_slice() else {
        return ui.error(
            "Required argument missing",
            "Exactly two arguments expected: the from and to provider addresses.",
        );
    };
    let parse = |p: &String| {
        ProviderAddr::parse(p)
            .map_err(|e| ui.error("Invalid provider address", format!("{p:?}: {e}")))
    };
    let (from, to) = match (parse(from), parse(to)) {
        (Ok(f), Ok(t)) => (f, t),
        (Err(c), _) | (_, Err(c)) => return c,
    };
    let store = match open_store(ui, dir) {
        Ok(s) => s,
        Err(c) => return c,
    };
    let mut run = match lock(ui, store.as_ref(), "OperationTypeInvalid", a) {
        Ok(r) => r,
        Err(c) => return c,
    };
    let code = replace(ui, run.as_mut(), a, &from, &to);
    if let Err(e) = run.finish() {
        return ui.error("Failed to release the state lock", e.to_string());
    }
    code
}

/// `provider["ADDR"]` or `provider["ADDR"].ALIAS` with ADDR = `from`
/// rewritten to `to`; `None` for any other provider.
fn rewritten(provider: &str, from: &ProviderAddr, to: &ProviderAddr) -> Option<String> {
    let rest = provider.strip_prefix("provider[\"")?;
    let (addr, alias) = rest.split_once("\"]")?;
    (ProviderAddr::parse(addr).ok()? == *from).then(|| format!("provider[\"{to}\"]{alias}"))
}

fn replace(
    ui: &Ui,
    run: &mut dyn terrane_state::Run,
    a: &Args,
    from: &ProviderAddr,
    to: &ProviderAddr,
) -> u8 {
    let s = match run.snapshot() {
        Ok(s) => s,
        Err(e) => return ui.error("Failed to read state", e.to_string()),
    };
    let moved: Vec<String> = s
        .resources
        .iter()
        .filter(|(_, r)| rewritten(&r.provider, from, to).is_some())
        .map(|(raddr, _)| raddr.to_string())
        .collect();
    // Every object (current and deposed) of those resources, recorded
    // again under the new provider.
    let changes: Vec<Change> = terrane_state::model::changes_for(&s)
        .into_iter()
        .filter_map(|c| match c {
            Change::SetObject {
                addr,
                deposed,
                provider,
                object,
            } => rewritten(&provider, from, to).map(|provider| Change::SetObject {
                addr,
                deposed,
                provider,
                object,
            }),
            _ => None,
        })
        .collect();
    if moved.is_empty() {
        println!("No matching resources found.");
        return 0;
    }
    let mut text = format!(
        "terrane will perform the following actions:\n\n  ~ Updating provider:\n    - {from}\n    + {to}\n\nChanging {} resources:\n\n",
        moved.len()
    );
    for m in &moved {
        text.push_str(&format!("  {m}\n"));
    }
    println!("{text}");
    if !a.has("auto-approve") {
        if a.is_false("input") {
            return ui.error("Approval required", "Replacing providers asks for approval, which -input=false rules out; use -auto-approve.");
        }
        print!("Do you want to make these changes?\nOnly 'yes' will be accepted to continue.\n\nEnter a value: ");
        let _ = std::io::stdout().flush();
        let mut line = String::new();
        let _ = std::io::stdin().lock().read_line(&mut line);
        if line.trim() != "yes" {
            return ui.error(
                "Approval rejected",
                "Replacement of providers aborted; the state is unchanged.",
            );
        }
    }
    if let Err(e) = run.persist(&changes) {
        return ui.error("Failed to persist state", e.to_string());
    }
    println!(
        "Successfully replaced provider for {} resources.",
        moved.len()
    );
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn which_providers_are_rewritten() {
        let p = |s: &str| ProviderAddr::parse(s).unwrap();
        let (from, to) = (p("hashicorp/random"), p("acme/random"));
        let cases = [
            (
                "plain",
                "provider[\"registry.terraform.io/hashicorp/random\"]",
                Some("provider[\"registry.terraform.io/acme/random\"]"),
            ),
            (
                "alias_kept",
                "provider[\"registry.terraform.io/hashicorp/random\"].second",
                Some("provider[\"registry.terraform.io/acme/random\"].second"),
            ),
            (
                "other",
                "provider[\"registry.terraform.io/hashicorp/local\"]",
                None,
            ),
            ("malformed", "random", None),
        ];
        for (name, text, want) in cases {
            assert_eq!(rewritten(text, &from, &to).as_deref(), want, "case {name}");
        }
    }
}
