//! `override_module` in `terrane test`: the overridden module's outputs
//! take the given values, and nothing else inside it (resources, data
//! sources, locals, variables, nested modules, providers) runs.

use crate::graph::{NodeId, NodeKind};
use crate::walk::Walk;
use terrane_value::Value;

/// Whether node `id` is inside an overridden module and is not one of
/// that module's outputs (which carry the override).
pub(crate) fn skipped(w: &Walk, id: NodeId) -> bool {
    let Some(d) = &w.opts.doubles else {
        return false;
    };
    let node = &w.core.graph.nodes[id];
    if !d.inside_overridden_module(&node.module) {
        return false;
    }
    let own_output =
        matches!(node.kind, NodeKind::Output(_)) && d.module_override(&node.module).is_some();
    !own_output
}

/// The given outputs of module `module`, when it is overridden.
pub(crate) fn outputs<'a>(w: &'a Walk, module: &[String]) -> Option<&'a Value> {
    w.opts
        .doubles
        .as_ref()?
        .module_override(module)
        .map(|m| &m.outputs)
}
