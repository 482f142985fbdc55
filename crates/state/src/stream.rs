//! A workspace's state read one object at a time ([`StateStore::stream`]),
//! so a reader such as `show -json` holds one object, never the state.
//!
//! **Module order**, the order of `show -json`'s resources: module
//! instances by their address text (`module.a["x"]`; the root first), and
//! within a module the state order of resources (managed before data, then
//! type, then name), instances in key order ([`crate::InstanceKey`]'s), each
//! instance's current object before its deposed ones, those by key.
//!
//! [`StateStore::stream`]: crate::StateStore::stream

use crate::addr::{InstanceAddr, ResourceAddr};
use crate::model::{ObjectState, OutputState, Snapshot};
use std::collections::BTreeMap;
use std::ops::ControlFlow;

/// What a stream hands its visitor, in this order: [`Streamed::Start`]
/// once, then [`Streamed::Dependencies`] for every object that records
/// any (in no particular order), then every object in module order as
/// [`Streamed::Object`].
#[derive(Debug)]
pub enum Streamed<'a> {
    /// The outputs (whole: they are few), and whether the workspace holds
    /// any resource.
    Start {
        outputs: &'a BTreeMap<String, OutputState>,
        resources: bool,
    },
    /// One object's resource and the dependencies it records.
    Dependencies {
        resource: &'a ResourceAddr,
        dependencies: &'a [String],
    },
    /// One object: current (`deposed` None) or deposed. `provider` is the
    /// resource's provider configuration (without an instance key).
    Object {
        addr: &'a InstanceAddr,
        deposed: Option<&'a str>,
        provider: &'a str,
        object: &'a ObjectState,
    },
}

/// A stream's visitor: `Break` ends the stream early (a reader gone).
pub type Visit<'v> = dyn FnMut(Streamed<'_>) -> ControlFlow<()> + 'v;

impl Snapshot {
    /// This snapshot as a stream (what a store that cannot do better
    /// streams, after reading the snapshot whole).
    pub fn stream(&self, visit: &mut Visit<'_>) {
        let _ = self.stream_inner(visit);
    }

    fn stream_inner(&self, visit: &mut Visit<'_>) -> ControlFlow<()> {
        visit(Streamed::Start {
            outputs: &self.outputs,
            resources: !self.resources.is_empty(),
        })?;
        for (raddr, r) in &self.resources {
            for inst in r.instances.values() {
                for o in inst.current.iter().chain(inst.deposed.values()) {
                    if !o.dependencies.is_empty() {
                        visit(Streamed::Dependencies {
                            resource: raddr,
                            dependencies: &o.dependencies,
                        })?;
                    }
                }
            }
        }
        let mut modules: BTreeMap<String, Vec<_>> = BTreeMap::new();
        for (raddr, r) in &self.resources {
            modules
                .entry(raddr.module.to_string())
                .or_default()
                .push((raddr, r));
        }
        for rs in modules.values() {
            for &(raddr, r) in rs {
                for (key, inst) in &r.instances {
                    let addr = raddr.instance(key.clone());
                    let objects = inst
                        .current
                        .iter()
                        .map(|o| (o, None))
                        .chain(inst.deposed.iter().map(|(k, o)| (o, Some(k.as_str()))));
                    for (object, deposed) in objects {
                        visit(Streamed::Object {
                            addr: &addr,
                            deposed,
                            provider: &r.provider,
                            object,
                        })?;
                    }
                }
            }
        }
        ControlFlow::Continue(())
    }
}

/// Hands one row's dependencies (the `dependencies` column's text) to the
/// visitor as [`Streamed::Dependencies`]; the other arguments are the
/// row's address columns.
pub(crate) fn visit_dependencies(
    columns: [&str; 5],
    dependencies: &str,
    visit: &mut Visit<'_>,
) -> crate::Result<ControlFlow<()>> {
    let [module, mode, ty, name, key] = columns;
    let addr = crate::rows::addr_from_row(module, mode, ty.into(), name.into(), key)?;
    let deps = crate::rows::dependencies_from_row(dependencies, || addr.to_string())?;
    Ok(visit(Streamed::Dependencies {
        resource: &addr.resource,
        dependencies: &deps,
    }))
}

/// Stored `module` column texts in module order (by address text).
pub(crate) fn modules_in_order(modules: Vec<String>) -> crate::Result<Vec<String>> {
    let mut modules = modules
        .into_iter()
        .map(|text| Ok((crate::rows::module_from_json(&text)?, text)))
        .collect::<crate::Result<Vec<_>>>()?;
    modules.sort_by_cached_key(|(m, _)| m.to_string());
    Ok(modules.into_iter().map(|(_, text)| text).collect())
}

/// Hands a decoded row to the visitor as [`Streamed::Object`].
pub(crate) fn visit_row(row: &crate::rows::DecodedRow, visit: &mut Visit<'_>) -> ControlFlow<()> {
    let (config, _) = crate::model::split_provider_instance(&row.provider);
    visit(Streamed::Object {
        addr: &row.addr,
        deposed: (!row.deposed.is_empty()).then_some(row.deposed.as_str()),
        provider: &config,
        object: &row.object,
    })
}

/// The SQL `ORDER BY` of one module's objects of one mode, in module
/// order: type and name bytewise (`collate`: the collation clause that
/// makes text compare bytewise), then instance keys as
/// [`crate::InstanceKey`] orders them (none, integers, strings; the `key`
/// column holds the key's JSON text, `string_key` is the SQL expression
/// decoding a JSON string), then the deposed key (empty for the current
/// object, so it comes first).
pub(crate) fn order_by(collate: &str, int_key: &str, string_key: &str) -> String {
    format!(
        "ORDER BY type {collate}, name {collate}, \
         CASE WHEN key = 'null' THEN 0 WHEN substr(key, 1, 1) = '\"' THEN 2 ELSE 1 END, \
         CASE WHEN key = 'null' OR substr(key, 1, 1) = '\"' THEN NULL ELSE {int_key} END, \
         CASE WHEN substr(key, 1, 1) = '\"' THEN {string_key} END {collate}, \
         deposed {collate}"
    )
}
