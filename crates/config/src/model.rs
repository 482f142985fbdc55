//! The module model: what a module's files declare, with a source range on
//! everything and every expression unevaluated (with its references).
//! Built by `decode` from `.tf` and `.tf.json` files alike.

use crate::diag::{LineIndex, SourceRange};
use crate::refs::Reference;
use crate::typeexpr::TypeConstraint;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use terrane_hcl::expr::Expression;
use terrane_hcl::structure::Block;

/// An unevaluated expression with its range and references.
#[derive(Clone, Debug)]
pub struct Expr {
    pub expr: Expression,
    pub range: Option<SourceRange>,
    pub refs: Vec<Reference>,
    /// The line index of the file the expression is in, so evaluation
    /// diagnostics can point at sub-expressions (for `.tf.json` files an
    /// index shifted to the JSON string the expression was parsed from).
    pub index: Arc<LineIndex>,
}

/// A `condition` + `error_message` pair: variable `validation`, output and
/// lifecycle `precondition`/`postcondition`, check `assert`.
#[derive(Clone, Debug)]
pub struct CheckRule {
    pub condition: Option<Expr>,
    pub error_message: Option<Expr>,
    pub range: Option<SourceRange>,
}

/// `lifecycle { ... }` of a resource. Its arguments are boxed: most
/// resources set none, and every resource holds a `Lifecycle`.
#[derive(Clone, Debug, Default)]
pub struct Lifecycle {
    pub create_before_destroy: Option<Box<Expr>>,
    pub prevent_destroy: Option<Box<Expr>>,
    pub ignore_changes: Option<Box<Expr>>,
    pub replace_triggered_by: Option<Box<Expr>>,
    /// The entries of `replace_triggered_by`, one expression each (their
    /// references are what triggers replacement).
    pub replace_triggered_by_entries: Vec<Expr>,
    pub preconditions: Vec<CheckRule>,
    pub postconditions: Vec<CheckRule>,
}

/// A nested block of a resource body as written: static, or `dynamic`
/// (then `dynamic` holds `for_each`/`iterator`/`labels` and the attributes
/// and blocks are those of `content`, with the iterator name bound, so its
/// `.key`/`.value` are not references). The engine expands dynamic blocks
/// per element of `for_each` with the iterator in scope.
#[derive(Clone, Debug)]
pub struct NestedBlock {
    pub type_name: String,
    pub labels: Vec<String>,
    pub range: Option<SourceRange>,
    pub attributes: BTreeMap<String, Expr>,
    pub blocks: Vec<NestedBlock>,
    pub dynamic: Option<DynamicSpec>,
}

/// `dynamic "type_name" { for_each = ..., iterator = ..., labels = [...] }`.
#[derive(Clone, Debug)]
pub struct DynamicSpec {
    pub for_each: Expr,
    /// The iterator's name: `iterator = name`, default the block type.
    pub iterator: String,
    /// Label expressions of the generated blocks (iterator bound).
    pub labels: Vec<Expr>,
    pub range: Option<SourceRange>,
}

/// A provider configuration reference: `aws`, `aws.west`, or an instance
/// of a configuration with `for_each` (OpenTofu's `aws.by_region[each.key]`).
#[derive(Clone, Debug)]
pub struct ProviderRef {
    pub name: String,
    pub alias: Option<String>,
    pub range: Option<SourceRange>,
    /// The instance key expression (`[each.key]`, `["a"]`), evaluated per
    /// resource instance (or, in a module call's `providers`, statically);
    /// boxed, as most references have none.
    pub key: Option<Box<Expr>>,
}

impl PartialEq for ProviderRef {
    /// Equal when they name the same configuration at the same place with
    /// the same key expression (by its source range).
    fn eq(&self, o: &ProviderRef) -> bool {
        let key = |r: &ProviderRef| r.key.as_ref().map(|k| k.range.clone());
        self.name == o.name && self.alias == o.alias && self.range == o.range && key(self) == key(o)
    }
}

impl Eq for ProviderRef {}

/// A `resource` or `data` block.
#[derive(Clone, Debug)]
pub struct Resource {
    pub data: bool,
    pub ty: String,
    pub name: String,
    pub range: Option<SourceRange>,
    pub count: Option<Box<Expr>>,
    pub for_each: Option<Box<Expr>>,
    pub provider: Option<Box<Expr>>,
    /// `provider` as a typed reference (None when absent or invalid).
    pub provider_ref: Option<ProviderRef>,
    pub depends_on: Option<Box<Expr>>,
    pub lifecycle: Lifecycle,
    /// The other arguments, unevaluated.
    pub attributes: BTreeMap<String, Expr>,
    /// Nested blocks, kept as written (`.tf` files only; see `body`).
    pub blocks: Vec<Block>,
    /// Nested blocks as a structure, `dynamic` blocks included
    /// (`provisioner` and `connection` blocks too). In `.tf.json` files,
    /// without a provider schema, an object-valued argument that is not a
    /// known block type stays an attribute (`from_json` says so).
    pub body: Vec<NestedBlock>,
    /// Declared in a `.tf.json` file.
    pub from_json: bool,
    /// `provisioner "type" { ... }` blocks in order (managed resources;
    /// in data blocks they stay in `body` for the provider to refuse).
    pub provisioners: Vec<Provisioner>,
    /// The resource-level `connection` block.
    pub connection: Option<Connection>,
}

/// When a provisioner runs: `when = create` (the default) or `destroy`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ProvisionerWhen {
    #[default]
    Create,
    Destroy,
}

/// What a failing provisioner does: `on_failure = fail` (the default)
/// taints the resource; `continue` ignores the failure.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ProvisionerOnFailure {
    #[default]
    Fail,
    Continue,
}

/// `provisioner "type" { when = ..., on_failure = ..., connection { } }`:
/// the other arguments and blocks are the provisioner's own configuration
/// (`self` is in scope). Running provisioners is not implemented; the
/// engine refuses to plan a resource that has any.
#[derive(Clone, Debug)]
pub struct Provisioner {
    pub ty: String,
    pub range: Option<SourceRange>,
    /// The range of the type label.
    pub type_range: Option<SourceRange>,
    pub when: ProvisionerWhen,
    pub on_failure: ProvisionerOnFailure,
    pub connection: Option<Connection>,
    pub attributes: BTreeMap<String, Expr>,
    pub blocks: Vec<NestedBlock>,
}

/// A `connection { ... }` block of a resource or provisioner: its
/// arguments unevaluated (`self` is in scope).
#[derive(Clone, Debug)]
pub struct Connection {
    pub range: Option<SourceRange>,
    pub attributes: BTreeMap<String, Expr>,
    pub blocks: Vec<NestedBlock>,
}

impl Resource {
    /// `aws_instance.web` or `data.local_file.f`.
    pub fn address(&self) -> String {
        if self.data {
            format!("data.{}.{}", self.ty, self.name)
        } else {
            format!("{}.{}", self.ty, self.name)
        }
    }
}

#[derive(Clone, Debug)]
pub struct Variable {
    pub name: String,
    pub range: Option<SourceRange>,
    pub ty: Option<Expr>,
    /// The parsed type constraint (None when absent or invalid).
    pub constraint: Option<TypeConstraint>,
    pub default: Option<Expr>,
    pub sensitive: bool,
    pub nullable: bool,
    pub description: Option<String>,
    pub ephemeral: bool,
    /// `const = true` (Terraform 1.15): the value is known at init.
    pub constant: bool,
    /// `deprecated = "message"` (Terraform 1.15).
    pub deprecated: Option<String>,
    pub validations: Vec<CheckRule>,
}

#[derive(Clone, Debug)]
pub struct Output {
    pub name: String,
    pub range: Option<SourceRange>,
    pub value: Option<Expr>,
    pub sensitive: bool,
    pub depends_on: Option<Expr>,
    pub description: Option<String>,
    pub ephemeral: bool,
    /// `deprecated = "message"` (Terraform 1.15) and where it is set (a
    /// root module output cannot be deprecated).
    pub deprecated: Option<String>,
    pub deprecated_range: Option<SourceRange>,
    pub preconditions: Vec<CheckRule>,
    /// `type = ...` (Terraform 1.15): the constraint the value is
    /// converted to at plan and apply, as written and as parsed.
    pub ty: Option<Expr>,
    pub constraint: Option<TypeConstraint>,
}

#[derive(Clone, Debug)]
pub struct ModuleCall {
    pub name: String,
    pub range: Option<SourceRange>,
    pub source: Option<String>,
    pub count: Option<Expr>,
    pub for_each: Option<Expr>,
    pub inputs: BTreeMap<String, Expr>,
    pub version: Option<String>,
    /// `source` and `version` given as expressions over const variables
    /// and locals (Terraform 1.15): kept here, and resolved into `source`
    /// and `version` when the module tree is loaded ([`crate::statics`]).
    pub source_expr: Option<Expr>,
    pub version_expr: Option<Expr>,
    /// Where the `source` argument's value is.
    pub source_range: Option<SourceRange>,
    pub depends_on: Option<Expr>,
    /// `providers = { child_name = parent_ref }`, keyed by the provider
    /// reference as the child sees it (`aws` or `aws.west`).
    pub providers: BTreeMap<String, ProviderRef>,
}

#[derive(Clone, Debug)]
pub struct ProviderConfig {
    pub name: String,
    pub alias: Option<String>,
    pub range: Option<SourceRange>,
    /// `for_each` (OpenTofu 1.9): one provider instance per key, with
    /// `each.key`/`each.value` in the block; only with an alias.
    pub for_each: Option<Expr>,
    pub attributes: BTreeMap<String, Expr>,
    /// Nested blocks (`assume_role { ... }`, `features {}`), kept as
    /// written (`.tf` files; see `body`), decoded against the provider's
    /// schema as a resource's are.
    pub blocks: Vec<Block>,
    /// Nested blocks as a structure, `dynamic` blocks included.
    pub body: Vec<NestedBlock>,
    /// The line index of the file the block is in (the spans of `blocks`
    /// are relative to it).
    pub index: Arc<LineIndex>,
    /// Byte offset of the opening brace, where Terraform reports a missing
    /// argument or block.
    pub body_start: Option<usize>,
}

/// A Terraform backend (or `cloud`) block of the root module.
#[derive(Clone, Debug, PartialEq)]
pub struct Backend {
    /// The backend type (`s3`, `local`, ...), or `cloud`.
    pub ty: String,
    pub range: Option<SourceRange>,
    /// The block's type and labels (`backend "s3"`, `cloud`), where
    /// Terraform reports a duplicate or conflicting block.
    pub decl_range: Option<SourceRange>,
    /// The block's attributes, literal values only (backend settings are
    /// read before anything is evaluated), as JSON.
    pub settings: BTreeMap<String, serde_json::Value>,
}

/// `terraform { required_providers { ... } }` entry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequiredProvider {
    pub source: Option<String>,
    pub version: Option<String>,
}

/// `moved { from = ..., to = ... }`.
#[derive(Clone, Debug)]
pub struct Moved {
    pub from: Option<Expr>,
    pub to: Option<Expr>,
    /// The addresses as written (`module.a.aws_instance.b[0]`).
    pub from_addr: Option<String>,
    pub to_addr: Option<String>,
    pub range: Option<SourceRange>,
}

/// `import { to = ..., id = ..., provider = ..., for_each = ... }`.
#[derive(Clone, Debug)]
pub struct Import {
    pub to: Option<Expr>,
    pub to_addr: Option<String>,
    pub id: Option<Expr>,
    pub provider: Option<ProviderRef>,
    pub for_each: Option<Expr>,
    pub range: Option<SourceRange>,
}

/// `removed { from = ..., lifecycle { destroy = ... } }`.
#[derive(Clone, Debug)]
pub struct Removed {
    pub from: Option<Expr>,
    pub from_addr: Option<String>,
    /// `lifecycle { destroy }`; Terraform's default is true.
    pub destroy: bool,
    pub range: Option<SourceRange>,
    /// Destroy-time provisioners (the only kind allowed here) and their
    /// shared `connection`.
    pub provisioners: Vec<Provisioner>,
    pub connection: Option<Connection>,
}

/// `check "name" { data ... {} assert { ... } }`.
#[derive(Clone, Debug)]
pub struct Check {
    pub name: String,
    pub range: Option<SourceRange>,
    /// Scoped data sources (also visible to the check's assertions only).
    pub data: Vec<Resource>,
    pub asserts: Vec<CheckRule>,
}

/// Where terrane keeps state: `terraform { state "sqlite" { ... } }`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StateBackend {
    Sqlite,
    Postgres,
}

/// `terraform { state "sqlite" { path = "..." } }` or
/// `state "postgres" { url = "...", schema = "..." }`, both with an
/// optional `encryption_key_env` naming the environment variable that
/// holds the state encryption key. Values are literal strings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateSettings {
    pub backend: StateBackend,
    pub path: Option<String>,
    pub url: Option<String>,
    pub schema: Option<String>,
    pub encryption_key_env: Option<String>,
    pub range: Option<SourceRange>,
}

/// A module: everything its files declare.
#[derive(Clone, Debug, Default)]
pub struct Module {
    pub files: Vec<String>,
    pub required_version: Option<String>,
    pub required_providers: BTreeMap<String, RequiredProvider>,
    /// Where the module's `required_providers` block is (a module may have
    /// only one).
    pub required_providers_range: Option<SourceRange>,
    pub providers: Vec<ProviderConfig>,
    pub variables: BTreeMap<String, Variable>,
    pub locals: BTreeMap<String, Expr>,
    pub outputs: BTreeMap<String, Output>,
    /// Shared: the engine's per-resource context holds the same
    /// resource rather than a copy of its expressions.
    pub resources: Vec<std::sync::Arc<Resource>>,
    /// `ephemeral "type" "name"` blocks (Terraform 1.10): decoded and
    /// checked like resources (`data` is false), kept apart so nothing
    /// plans them as managed resources.
    pub ephemeral_resources: Vec<Resource>,
    pub module_calls: BTreeMap<String, ModuleCall>,
    /// `moved`, `import`, `removed` and `check` blocks: kind and range
    /// (the typed models are in `moved`, `imports`, `removed`, `checks`).
    pub other_blocks: Vec<(String, Option<SourceRange>)>,
    pub moved: Vec<Moved>,
    pub imports: Vec<Import>,
    pub removed: Vec<Removed>,
    pub checks: Vec<Check>,
    /// `terraform { state "..." { } }`.
    pub state: Option<StateSettings>,
    /// `terraform { backend "TYPE" { } }` or `cloud { }`: where Terraform
    /// keeps this configuration's state. terrane does not read it (yet):
    /// commands that use state refuse to run rather than start from an
    /// empty store.
    pub backend: Option<Backend>,
    /// Position in `resources` by (data, type, name), kept by the loader,
    /// with the header range (`resource "t" "n"`) of each resource, for the
    /// duplicate message.
    pub(crate) resource_index: ResourceIndex,
}

/// Resources by (data, type, name): looked up by borrowed names, so a
/// lookup allocates nothing.
#[derive(Clone, Debug, Default)]
pub(crate) struct ResourceIndex {
    /// Managed resources, then data sources: type to name to position
    /// and header range.
    by_type: [NameMap<NameMap<Indexed>>; 2],
    len: usize,
}

/// A resource's position in `Module::resources` and its header range.
type Indexed = (usize, Option<SourceRange>);

/// A map by name hashed with [`NameHasher`].
type NameMap<V> = HashMap<String, V, std::hash::BuildHasherDefault<NameHasher>>;

/// A multiply-rotate hash of names (the FxHash scheme): the index holds
/// names the configuration declares, no input chosen to collide, and
/// hashing 10,000 of them through a table's growth with SipHash showed in
/// the loader's profile.
#[derive(Default)]
pub(crate) struct NameHasher(u64);

impl std::hash::Hasher for NameHasher {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let word = u64::from_le_bytes(c.try_into().expect("eight bytes"));
            self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(K);
        }
        for &b in chunks.remainder() {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
        }
    }

    fn write_u8(&mut self, b: u8) {
        self.write(&[b]);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

impl ResourceIndex {
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn get(&self, data: bool, ty: &str, name: &str) -> Option<&Indexed> {
        self.by_type[usize::from(data)].get(ty)?.get(name)
    }

    fn insert(&mut self, data: bool, ty: &str, name: &str, at: usize, decl: Option<SourceRange>) {
        let names = match self.by_type[usize::from(data)].get_mut(ty) {
            Some(names) => names,
            None => self.by_type[usize::from(data)]
                .entry(ty.to_string())
                .or_default(),
        };
        if names.insert(name.to_string(), (at, decl)).is_none() {
            self.len += 1;
        }
    }
}

impl Module {
    /// The resource (`data` false) or data source declared with this
    /// type and name; constant time for modules built by the loader.
    pub fn resource(&self, data: bool, ty: &str, name: &str) -> Option<&std::sync::Arc<Resource>> {
        if self.resource_index.len() == self.resources.len() {
            let (i, _) = self.resource_index.get(data, ty, name)?;
            return self.resources.get(*i);
        }
        self.resources
            .iter()
            .find(|r| r.data == data && r.ty == ty && r.name == name)
    }

    /// Adds a resource whose (data, type, name) is not taken, with the
    /// range of its header.
    pub(crate) fn push_resource(&mut self, r: Resource, decl: Option<SourceRange>) {
        self.resource_index
            .insert(r.data, &r.ty, &r.name, self.resources.len(), decl);
        self.resources.push(std::sync::Arc::new(r));
    }
}
