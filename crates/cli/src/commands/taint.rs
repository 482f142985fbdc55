//! `taint` and `untaint`: mark one managed resource instance's object to
//! be replaced at the next apply, or take that mark away, under the state
//! lock. Nothing else in the state changes.

use crate::args::Args;
use crate::session::{lock, open_store, Ui};
use std::path::Path;
use terrane_config::Diagnostic;
use terrane_state::{Change, InstanceAddr, Mode, Status};

pub fn taint(ui: &Ui, dir: &Path, a: &Args, taint: bool) -> u8 {
    let verb = if taint { "taint" } else { "untaint" };
    let [p] = a.positional.as_slice() else {
        return ui.error(
            "Required argument missing",
            format!("The {verb} command expects exactly one argument: the address of the resource to {verb}."),
        );
    };
    let addr = match InstanceAddr::parse(p) {
        Ok(x) => x,
        Err(e) => return ui.error("Invalid address", format!("{p:?}: {e:?}")),
    };
    if addr.resource.mode == Mode::Data {
        return ui.error(
            "Invalid resource address",
            format!("{addr} is a data resource: only managed resources have objects to {verb}."),
        );
    }
    let store = match open_store(ui, dir) {
        Ok(s) => s,
        Err(c) => return c,
    };
    let mut run = match lock(ui, store.as_ref(), "OperationTypeInvalid", a) {
        Ok(r) => r,
        Err(c) => return c,
    };
    let code = mark(ui, run.as_mut(), &addr, taint, a.has("allow-missing"));
    if let Err(e) = run.finish() {
        return ui.error("Failed to release the state lock", e.to_string());
    }
    code
}

fn mark(
    ui: &Ui,
    run: &mut dyn terrane_state::Run,
    addr: &InstanceAddr,
    taint: bool,
    allow_missing: bool,
) -> u8 {
    let s = match run.snapshot() {
        Ok(s) => s,
        Err(e) => return ui.error("Failed to read state", e.to_string()),
    };
    let Some(object) = s.object(addr, None) else {
        if allow_missing {
            ui.diags(&[Diagnostic::warning(
                "No such resource instance",
                format!("Resource instance {addr} was not found, but this is not an error because -allow-missing was set."),
                None,
            )]);
            return 0;
        }
        // Terraform says "tainted" for untaint too; so does terrane.
        return ui.error("No such resource instance", format!("There is no resource instance in the state with the address {addr}. If the resource configuration has just been added, you must run \"terrane apply\" once to create the corresponding instance(s) before they can be tainted."));
    };
    let want = if taint {
        Status::Tainted
    } else {
        Status::Ready
    };
    if !taint && object.status != Status::Tainted {
        return ui.error(
            "Resource instance is not tainted",
            format!(
                "Resource instance {addr} is not currently tainted, and so it cannot be untainted."
            ),
        );
    }
    let provider = s
        .resources
        .get(&addr.resource)
        .map(|r| r.instance_provider(&addr.key))
        .unwrap_or_default();
    let mut object = object.clone();
    object.status = want;
    let change = Change::SetObject {
        addr: addr.clone(),
        deposed: None,
        provider,
        object,
    };
    if let Err(e) = run.persist(&[change]) {
        return ui.error("Failed to persist state", e.to_string());
    }
    if taint {
        println!("Resource instance {addr} has been marked as tainted.");
    } else {
        println!("Resource instance {addr} has been successfully untainted.");
    }
    0
}
