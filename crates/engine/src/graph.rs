//! The dependency graph of a configuration: one node per variable, local,
//! output, resource, module call and provider configuration of every
//! module in the tree (configuration level: a node expands into instances
//! when the walk reaches it), edges from the references each expression
//! makes and from `depends_on`. Cycles are reported with every member and
//! its source position.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use terrane_config::{Config, Diagnostic, Expr, Reference, SourceRange, Subject};
use terrane_state::Mode;

/// What a node stands for, inside one module (configuration path).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NodeKind {
    Var(String),
    Local(String),
    Output(String),
    Resource {
        mode: Mode,
        ty: String,
        name: String,
    },
    /// An `ephemeral` block: opened during plan and apply, never stored.
    Ephemeral {
        ty: String,
        name: String,
    },
    /// Expansion of a module call (count/for_each) made in this module.
    Call(String),
    /// A provider configuration: local name and alias.
    Provider {
        name: String,
        alias: Option<String>,
    },
}

/// A configuration-level node.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Node {
    /// Module call names from the root.
    pub module: Vec<String>,
    pub kind: NodeKind,
}

impl fmt::Display for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for m in &self.module {
            write!(f, "module.{m}.")?;
        }
        match &self.kind {
            NodeKind::Var(n) => write!(f, "var.{n}"),
            NodeKind::Local(n) => write!(f, "local.{n}"),
            NodeKind::Output(n) => write!(f, "output.{n}"),
            NodeKind::Resource {
                mode: Mode::Data,
                ty,
                name,
            } => write!(f, "data.{ty}.{name}"),
            NodeKind::Resource { ty, name, .. } => write!(f, "{ty}.{name}"),
            NodeKind::Ephemeral { ty, name } => write!(f, "ephemeral.{ty}.{name}"),
            NodeKind::Call(n) => write!(f, "module.{n} (expand)"),
            NodeKind::Provider {
                name,
                alias: Some(a),
            } => write!(f, "provider[\"{name}\"].{a}"),
            NodeKind::Provider { name, alias: None } => write!(f, "provider[\"{name}\"]"),
        }
    }
}

pub type NodeId = usize;

/// Nodes and their dependencies.
#[derive(Debug, Default)]
pub struct Graph {
    pub nodes: Vec<Node>,
    /// `deps[n]`: the nodes `n` depends on.
    pub deps: Vec<BTreeSet<NodeId>>,
    pub ranges: Vec<Option<SourceRange>>,
    index: HashMap<Node, NodeId>,
    /// Each node's display name, made once (state records names).
    names: std::sync::OnceLock<Vec<String>>,
}

impl Graph {
    pub fn id(&self, n: &Node) -> Option<NodeId> {
        self.index.get(n).copied()
    }

    fn add(&mut self, n: Node, range: Option<SourceRange>) -> NodeId {
        if let Some(i) = self.index.get(&n) {
            return *i;
        }
        let id = self.nodes.len();
        self.index.insert(n.clone(), id);
        self.nodes.push(n);
        self.deps.push(BTreeSet::new());
        self.ranges.push(range);
        id
    }

    /// Dependents of every node (the reverse edges).
    pub fn dependents(&self) -> Vec<Vec<NodeId>> {
        let mut out = vec![Vec::new(); self.nodes.len()];
        for (n, ds) in self.deps.iter().enumerate() {
            for d in ds {
                out[*d].push(n);
            }
        }
        out
    }

    /// Resources a node depends on through non-resource nodes (what state
    /// records as an object's dependencies).
    pub fn resource_dependencies(&self, id: NodeId) -> BTreeSet<NodeId> {
        let mut out = BTreeSet::new();
        let mut seen = BTreeSet::new();
        let mut stack: Vec<NodeId> = self.deps[id].iter().copied().collect();
        while let Some(n) = stack.pop() {
            if !seen.insert(n) {
                continue;
            }
            match &self.nodes[n].kind {
                // Terraform records ephemeral resources among them too.
                NodeKind::Resource { .. } | NodeKind::Ephemeral { .. } => {
                    out.insert(n);
                }
                NodeKind::Provider { .. } => {}
                _ => stack.extend(self.deps[n].iter().copied()),
            }
        }
        out
    }

    /// What state records as an object's dependencies: every resource and
    /// data source upstream, through anything (resources included), as
    /// Terraform records them.
    pub fn recorded_dependencies(&self, id: NodeId) -> BTreeSet<NodeId> {
        self.recorded_dependency_ids(id).into_iter().collect()
    }

    /// [`Self::recorded_dependencies`] in id order, found with a flat seen
    /// list: upstream sets of long chains are large, so no tree per visit.
    fn recorded_dependency_ids(&self, id: NodeId) -> Vec<NodeId> {
        let mut out = Vec::new();
        let mut seen = vec![false; self.nodes.len()];
        let mut stack: Vec<NodeId> = self.deps[id].iter().copied().collect();
        while let Some(n) = stack.pop() {
            if std::mem::replace(&mut seen[n], true) {
                continue;
            }
            match &self.nodes[n].kind {
                NodeKind::Provider { .. } => continue,
                NodeKind::Resource { .. } | NodeKind::Ephemeral { .. } => out.push(n),
                _ => {}
            }
            stack.extend(self.deps[n].iter().copied());
        }
        out.sort_unstable();
        out
    }

    /// What state keeps as an object's dependencies: the resources and data
    /// sources it refers to directly (through variables, locals, outputs and
    /// module calls, not through other resources). Terraform writes the
    /// transitive closure; `closure_dependencies` computes it from these
    /// when state is shown or exported, so state stays linear in size (a
    /// 5,000-long chain would otherwise hold 12.5 million names).
    pub fn direct_dependency_names(&self, id: NodeId) -> Vec<String> {
        let names = self
            .names
            .get_or_init(|| self.nodes.iter().map(Node::to_string).collect());
        self.resource_dependencies(id)
            .into_iter()
            .map(|d| names[d].clone())
            .collect()
    }

    /// The names state records as the dependencies of node `id`.
    pub fn recorded_dependency_names(&self, id: NodeId) -> Vec<String> {
        let names = self
            .names
            .get_or_init(|| self.nodes.iter().map(Node::to_string).collect());
        self.recorded_dependency_ids(id)
            .into_iter()
            .map(|d| names[d].clone())
            .collect()
    }

    /// A topological order, or the cycles found (each a list of members).
    pub fn order(&self) -> Result<Vec<NodeId>, Vec<Vec<NodeId>>> {
        let n = self.nodes.len();
        let mut state = vec![0u8; n];
        let mut order = Vec::with_capacity(n);
        let mut cycles = Vec::new();
        for start in 0..n {
            if state[start] != 0 {
                continue;
            }
            // Iterative DFS: (node, next dependency index).
            let mut stack: Vec<(NodeId, Vec<NodeId>, usize)> =
                vec![(start, self.deps[start].iter().copied().collect(), 0)];
            state[start] = 1;
            while let Some((node, deps, i)) = stack.last_mut() {
                if *i < deps.len() {
                    let d = deps[*i];
                    *i += 1;
                    match state[d] {
                        0 => {
                            state[d] = 1;
                            let dd = self.deps[d].iter().copied().collect();
                            stack.push((d, dd, 0));
                        }
                        1 => {
                            let pos = stack.iter().position(|(x, _, _)| *x == d).unwrap_or(0);
                            cycles.push(stack[pos..].iter().map(|(x, _, _)| *x).collect());
                        }
                        _ => {}
                    }
                } else {
                    state[*node] = 2;
                    order.push(*node);
                    stack.pop();
                }
            }
        }
        if cycles.is_empty() {
            Ok(order)
        } else {
            Err(cycles)
        }
    }

    /// The cycle report: `Cycle: a, b, c`, each member's position in the
    /// detail.
    pub fn cycle_diagnostic(&self, cycle: &[NodeId]) -> Diagnostic {
        let names: Vec<String> = cycle.iter().map(|n| self.nodes[*n].to_string()).collect();
        let mut detail = String::from("The configuration refers to itself in a cycle; break it by removing one of these references:");
        for n in cycle {
            let at = self.ranges[*n]
                .as_ref()
                .map(|r| format!(" ({r})"))
                .unwrap_or_default();
            detail.push_str(&format!("\n  {}{at}", self.nodes[*n]));
        }
        // Unplaced, as Terraform reports a cycle: it has no one position;
        // the detail gives each member's.
        Diagnostic::error(format!("Cycle: {}", names.join(", ")), detail, None)
    }
}

/// The local provider name a resource type belongs to by default
/// (`random_pet` -> `random`; `terraform_data` -> `terraform`).
pub fn default_provider_name(resource_type: &str) -> &str {
    resource_type.split('_').next().unwrap_or(resource_type)
}

/// The provider configuration a resource uses: its `provider` argument
/// (`random.second`) or the default for its type.
pub fn resource_provider(r: &terrane_config::Resource) -> (String, Option<String>) {
    match &r.provider_ref {
        Some(p) => (p.name.clone(), p.alias.clone()),
        None => (default_provider_name(&r.ty).to_string(), None),
    }
}

/// The provider configuration that `name` (with `alias`) means in the
/// module at `module`, as Terraform resolves it: a provider block of that
/// module; else what the module call passes with `providers = { ... }`
/// (a call with a `providers` argument passes only what it lists); else,
/// for a default (unaliased) configuration, the parent's, inherited; at
/// the root, the implied empty configuration. Returns the module path of
/// the configuration and its name and alias there.
pub fn resolve_provider(
    config: &Config,
    module: &[String],
    name: &str,
    alias: Option<&str>,
) -> (Vec<String>, String, Option<String>) {
    let mut here = Some(config);
    for m in module {
        here = here.and_then(|c| c.children.get(m));
    }
    let declared = here.is_some_and(|c| {
        c.module
            .providers
            .iter()
            .any(|p| p.name == name && p.alias.as_deref() == alias)
    });
    let owned = || (module.to_vec(), name.to_string(), alias.map(str::to_string));
    let Some((call_name, parent)) = module.split_last() else {
        return owned();
    };
    if declared {
        return owned();
    }
    let mut up = Some(config);
    for m in parent {
        up = up.and_then(|c| c.children.get(m));
    }
    let Some(call) = up.and_then(|c| c.module.module_calls.get(call_name)) else {
        return owned();
    };
    let key = match alias {
        Some(a) => format!("{name}.{a}"),
        None => name.to_string(),
    };
    if let Some(r) = call.providers.get(&key) {
        return resolve_provider(config, parent, &r.name, r.alias.as_deref());
    }
    if call.providers.is_empty() && alias.is_none() {
        return resolve_provider(config, parent, name, None);
    }
    owned()
}

struct Builder<'c> {
    g: Graph,
    pending: Vec<(NodeId, Vec<String>, Vec<Reference>)>,
    config: &'c Config,
}

/// Builds the graph of a configuration tree.
pub fn build(config: &Config) -> Graph {
    let mut b = Builder {
        g: Graph::default(),
        pending: Vec::new(),
        config,
    };
    b.module(config, &[]);
    // Resolve references now that every node exists.
    let pending = std::mem::take(&mut b.pending);
    for (id, module, refs) in pending {
        for r in refs {
            b.link(id, &module, config, &r.subject);
        }
    }
    b.g
}

fn refs_of<'a>(exprs: impl IntoIterator<Item = &'a Expr>) -> Vec<Reference> {
    exprs
        .into_iter()
        .flat_map(|e| e.refs.iter().cloned())
        .collect()
}

/// References inside nested blocks (kept as syntax by the configuration).
fn block_refs(
    blocks: &[terrane_hcl::structure::Block],
    index: &terrane_config::LineIndex,
) -> Vec<Reference> {
    let mut out = Vec::new();
    for b in blocks {
        for a in b.body.attributes() {
            out.extend(terrane_config::references(&a.value, index).0);
        }
        let inner: Vec<terrane_hcl::structure::Block> = b.body.blocks().cloned().collect();
        out.extend(block_refs(&inner, index));
    }
    out
}

impl Builder<'_> {
    /// Makes node `id` (a resource of module `path`) depend on the
    /// provider configuration it uses: declared here, passed by the module
    /// call or inherited.
    fn depend_on_provider(&mut self, id: NodeId, path: &[String], r: &terrane_config::Resource) {
        let (pname, alias) = resource_provider(r);
        let (pmodule, pname, alias) = resolve_provider(self.config, path, &pname, alias.as_deref());
        let pid = self.g.add(
            Node {
                module: pmodule,
                kind: NodeKind::Provider { name: pname, alias },
            },
            None,
        );
        self.g.deps[id].insert(pid);
    }

    fn module(&mut self, c: &Config, path: &[String]) {
        let m = &c.module;
        let node = |kind: NodeKind| Node {
            module: path.to_vec(),
            kind,
        };
        for (name, v) in &m.variables {
            let id = self
                .g
                .add(node(NodeKind::Var(name.clone())), v.range.clone());
            self.pending
                .push((id, path.to_vec(), refs_of(v.default.iter())));
        }
        for (name, e) in &m.locals {
            let id = self
                .g
                .add(node(NodeKind::Local(name.clone())), e.range.clone());
            self.pending.push((id, path.to_vec(), e.refs.clone()));
        }
        for (name, o) in &m.outputs {
            let id = self
                .g
                .add(node(NodeKind::Output(name.clone())), o.range.clone());
            self.pending.push((
                id,
                path.to_vec(),
                refs_of(o.value.iter().chain(o.depends_on.iter())),
            ));
        }
        for p in &m.providers {
            let id = self.g.add(
                node(NodeKind::Provider {
                    name: p.name.clone(),
                    alias: p.alias.clone(),
                }),
                p.range.clone(),
            );
            let mut refs = refs_of(p.attributes.values().chain(p.for_each.iter()));
            refs.extend(block_refs(&p.blocks, &p.index));
            self.pending.push((id, path.to_vec(), refs));
        }
        for r in &m.resources {
            let mode = if r.data { Mode::Data } else { Mode::Managed };
            let id = self.g.add(
                node(NodeKind::Resource {
                    mode,
                    ty: r.ty.clone(),
                    name: r.name.clone(),
                }),
                r.range.clone(),
            );
            let mut refs = refs_of(
                r.attributes
                    .values()
                    .chain(r.count.as_deref())
                    .chain(r.for_each.as_deref())
                    .chain(r.depends_on.as_deref())
                    .chain(r.lifecycle.replace_triggered_by.as_deref())
                    // `provider = aws.by_region[local.k]`
                    .chain(r.provider_ref.iter().filter_map(|p| p.key.as_deref())),
            );
            if let Some(index) = r
                .attributes
                .values()
                .next()
                .map(|e| e.index.clone())
                .or_else(|| r.count.as_ref().map(|e| e.index.clone()))
                .or_else(|| r.for_each.as_ref().map(|e| e.index.clone()))
            {
                refs.extend(block_refs(&r.blocks, &index));
            } else if !r.blocks.is_empty() {
                let index = terrane_config::LineIndex::new("", "");
                refs.extend(block_refs(&r.blocks, &index));
            }
            // Provisioners and connections may use ephemeral values, which
            // must be open when they run (their other references are
            // evaluated against the state as it is then).
            let conns = r
                .connection
                .iter()
                .chain(r.provisioners.iter().filter_map(|p| p.connection.as_ref()));
            let run_time = r
                .provisioners
                .iter()
                .flat_map(|p| p.attributes.values())
                .chain(conns.flat_map(|c| c.attributes.values()));
            refs.extend(
                refs_of(run_time)
                    .into_iter()
                    .filter(|r| matches!(r.subject, Subject::Ephemeral { .. })),
            );
            self.pending.push((id, path.to_vec(), refs));
            self.depend_on_provider(id, path, r);
        }
        for r in &m.ephemeral_resources {
            let id = self.g.add(
                node(NodeKind::Ephemeral {
                    ty: r.ty.clone(),
                    name: r.name.clone(),
                }),
                r.range.clone(),
            );
            let mut refs = refs_of(
                r.attributes
                    .values()
                    .chain(r.count.as_deref())
                    .chain(r.for_each.as_deref())
                    .chain(r.depends_on.as_deref())
                    // Its conditions run in the node (before and after
                    // the open): what they read comes first.
                    .chain(
                        r.lifecycle
                            .preconditions
                            .iter()
                            .chain(&r.lifecycle.postconditions)
                            .flat_map(|c| c.condition.iter().chain(&c.error_message)),
                    ),
            );
            let index = r
                .attributes
                .values()
                .next()
                .map(|e| e.index.clone())
                .unwrap_or_else(|| std::sync::Arc::new(terrane_config::LineIndex::new("", "")));
            refs.extend(block_refs(&r.blocks, &index));
            self.pending.push((id, path.to_vec(), refs));
            self.depend_on_provider(id, path, r);
        }
        for (name, call) in &m.module_calls {
            let id = self
                .g
                .add(node(NodeKind::Call(name.clone())), call.range.clone());
            self.pending.push((
                id,
                path.to_vec(),
                refs_of(call.count.iter().chain(call.for_each.iter())),
            ));
            let Some(child) = c.children.get(name) else {
                continue;
            };
            let mut child_path = path.to_vec();
            child_path.push(name.clone());
            self.module(child, &child_path);
            // Inputs are evaluated in this module and set the child's vars.
            for (input, e) in &call.inputs {
                if let Some(vid) = self.g.id(&Node {
                    module: child_path.clone(),
                    kind: NodeKind::Var(input.clone()),
                }) {
                    self.pending.push((vid, path.to_vec(), e.refs.clone()));
                }
            }
            // Everything in the child waits for the call's expansion.
            let child_nodes: Vec<NodeId> = (0..self.g.nodes.len())
                .filter(|n| self.g.nodes[*n].module.starts_with(&child_path))
                .collect();
            for n in child_nodes {
                if n != id {
                    self.g.deps[n].insert(id);
                }
            }
        }
    }

    fn link(&mut self, from: NodeId, module: &[String], config: &Config, subject: &Subject) {
        let node = |kind: NodeKind| Node {
            module: module.to_vec(),
            kind,
        };
        let targets: Vec<NodeId> = match subject {
            Subject::Var(n) => self
                .g
                .id(&node(NodeKind::Var(n.clone())))
                .into_iter()
                .collect(),
            Subject::Local(n) => self
                .g
                .id(&node(NodeKind::Local(n.clone())))
                .into_iter()
                .collect(),
            Subject::Resource { data, ty, name } => {
                let mode = if *data { Mode::Data } else { Mode::Managed };
                self.g
                    .id(&node(NodeKind::Resource {
                        mode,
                        ty: ty.clone(),
                        name: name.clone(),
                    }))
                    .into_iter()
                    .collect()
            }
            Subject::Ephemeral { ty, name } => self
                .g
                .id(&node(NodeKind::Ephemeral {
                    ty: ty.clone(),
                    name: name.clone(),
                }))
                .into_iter()
                .collect(),
            Subject::Module(call) => {
                let mut child = module.to_vec();
                child.push(call.clone());
                let mut ids: Vec<NodeId> = self
                    .g
                    .id(&node(NodeKind::Call(call.clone())))
                    .into_iter()
                    .collect();
                let mut c = Some(config);
                for m in &child {
                    c = c.and_then(|c| c.children.get(m));
                }
                if let Some(c) = c {
                    for o in c.module.outputs.keys() {
                        ids.extend(self.g.id(&Node {
                            module: child.clone(),
                            kind: NodeKind::Output(o.clone()),
                        }));
                    }
                }
                ids
            }
            _ => Vec::new(),
        };
        for t in targets {
            if t != from
                || matches!(
                    self.g.nodes[from].kind,
                    NodeKind::Local(_) | NodeKind::Var(_) | NodeKind::Output(_)
                )
            {
                self.g.deps[from].insert(t);
            }
        }
    }
}

/// Nodes of the graph in a deterministic order of names, for `graph`.
pub fn to_dot(g: &Graph) -> String {
    let mut out = String::from(
        "digraph {\n  compound = \"true\"\n  newrank = \"true\"\n  subgraph \"root\" {\n",
    );
    let mut names: BTreeMap<String, NodeId> = BTreeMap::new();
    for (i, n) in g.nodes.iter().enumerate() {
        names.insert(n.to_string(), i);
    }
    for name in names.keys() {
        out.push_str(&format!(
            "    \"[root] {}\" [label = \"{}\", shape = \"box\"]\n",
            name.replace('"', "\\\""),
            name.replace('"', "\\\"")
        ));
    }
    for (name, id) in &names {
        let mut deps: Vec<String> = g.deps[*id]
            .iter()
            .map(|d| g.nodes[*d].to_string())
            .collect();
        deps.sort();
        for d in deps {
            out.push_str(&format!(
                "    \"[root] {}\" -> \"[root] {}\"\n",
                name.replace('"', "\\\""),
                d.replace('"', "\\\"")
            ));
        }
    }
    out.push_str("  }\n}\n");
    out
}
