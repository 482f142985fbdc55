//! The framework schema: what a provider author writes instead of protocol
//! schemas. An [`Attr`] is a value type plus who sets it, and the behaviour
//! the framework implements for the author: a default for an unset
//! optional+computed attribute, "requires replace", "use state for
//! unknown", and validators. [`ResourceSchema::block`] gives the protocol
//! schema Terraform sees.

use crate::validate::Validator;
use std::collections::BTreeMap;
use std::sync::Arc;
use terrane_schema::{Attribute, Block, NestedBlock};
use terrane_value::{Type, Value};

/// One attribute with framework behaviour.
#[derive(Clone)]
pub struct Attr {
    pub(crate) proto: Attribute,
    pub(crate) default: Option<Value>,
    pub(crate) requires_replace: bool,
    pub(crate) use_state_for_unknown: bool,
    pub(crate) validators: Vec<Arc<dyn Validator>>,
    pub(crate) replace_if: Option<ReplaceIf>,
    pub(crate) semantic_eq: Option<SemanticEq>,
    pub(crate) default_fn: Option<DefaultFn>,
}

/// Computes a default from the whole configuration object.
pub type DefaultFn = Arc<dyn Fn(&Value) -> Value + Send + Sync>;

/// Decides whether a change from `prior` to `planned` needs replacement.
pub type ReplaceIf = Arc<dyn Fn(&Value, &Value) -> bool + Send + Sync>;
/// Decides whether a configured value means the same as the prior one (so
/// the prior, remote spelling is kept and no change is planned).
pub type SemanticEq = Arc<dyn Fn(&Value, &Value) -> bool + Send + Sync>;

impl Attr {
    /// An optional attribute of type `ty` (change with the flag methods).
    pub fn of(ty: Type) -> Attr {
        Attr {
            proto: Attribute::optional(ty),
            default: None,
            requires_replace: false,
            use_state_for_unknown: false,
            validators: Vec::new(),
            replace_if: None,
            semantic_eq: None,
            default_fn: None,
        }
    }
    /// An optional string attribute.
    pub fn string() -> Attr {
        Attr::of(Type::String)
    }
    /// An optional number attribute.
    pub fn number() -> Attr {
        Attr::of(Type::Number)
    }
    /// An optional bool attribute.
    pub fn bool() -> Attr {
        Attr::of(Type::Bool)
    }
    fn flags(mut self, required: bool, optional: bool, computed: bool) -> Attr {
        self.proto.required = required;
        self.proto.optional = optional;
        self.proto.computed = computed;
        self
    }
    /// Must be set in configuration.
    pub fn required(self) -> Attr {
        self.flags(true, false, false)
    }
    /// May be set in configuration; null otherwise.
    pub fn optional(self) -> Attr {
        self.flags(false, true, false)
    }
    /// Set by the provider only.
    pub fn computed(self) -> Attr {
        self.flags(false, false, true)
    }
    /// May be set in configuration; the provider fills it in otherwise.
    pub fn optional_computed(self) -> Attr {
        self.flags(false, true, true)
    }
    /// Hidden in plans and output (still stored in state).
    pub fn sensitive(mut self) -> Attr {
        self.proto.sensitive = true;
        self
    }
    /// Sent by configuration, never planned, stored or returned.
    pub fn write_only(mut self) -> Attr {
        self.proto.write_only = true;
        self
    }
    /// The documentation of the attribute.
    pub fn describe(mut self, text: &str) -> Attr {
        self.proto.description = text.into();
        self
    }
    /// The value planned when configuration leaves the attribute unset;
    /// makes the attribute optional and computed.
    pub fn default(self, v: Value) -> Attr {
        let mut a = self.optional_computed();
        a.default = Some(v);
        a
    }
    /// A default computed from the configuration when the attribute is
    /// unset (it must not depend on unknown values to be useful: while the
    /// configuration has unknowns, return an unknown); makes the attribute
    /// optional and computed.
    pub fn default_fn(self, f: impl Fn(&Value) -> Value + Send + Sync + 'static) -> Attr {
        let mut a = self.optional_computed();
        a.default_fn = Some(Arc::new(f));
        a
    }

    /// Any change of this attribute replaces the resource.
    pub fn requires_replace(mut self) -> Attr {
        self.requires_replace = true;
        self
    }
    /// A computed value that never changes after creation keeps its prior
    /// value in plans instead of becoming "(known after apply)".
    pub fn use_state_for_unknown(mut self) -> Attr {
        self.use_state_for_unknown = true;
        self
    }
    /// Replaces the resource when `f(prior, planned)` says so.
    pub fn requires_replace_if(
        mut self,
        f: impl Fn(&Value, &Value) -> bool + Send + Sync + 'static,
    ) -> Attr {
        self.replace_if = Some(Arc::new(f));
        self
    }
    /// Treats a configured value as unchanged when `f(prior, config)` says
    /// it means the same (JSON that differs only in whitespace, say): the
    /// plan keeps the prior value, as the lifecycle contract allows.
    pub fn semantic_equality(
        mut self,
        f: impl Fn(&Value, &Value) -> bool + Send + Sync + 'static,
    ) -> Attr {
        self.semantic_eq = Some(Arc::new(f));
        self
    }
    /// Adds a [`Validator`] run on every configuration.
    pub fn validate(mut self, v: impl Validator + 'static) -> Attr {
        self.validators.push(Arc::new(v));
        self
    }
    /// The attribute's value type.
    pub fn ty(&self) -> Type {
        self.proto.implied_type()
    }
}

/// A resource, data source or provider schema.
#[derive(Clone, Default)]
pub struct ResourceSchema {
    /// The schema version, raised when the state layout changes (see `Resource::upgrade_state`).
    pub version: i64,
    /// The documentation of the resource.
    pub description: String,
    pub(crate) attrs: BTreeMap<String, Attr>,
    pub(crate) blocks: BTreeMap<String, NestedBlock>,
}

impl ResourceSchema {
    /// An empty schema at `version` (0 for a new resource).
    pub fn new(version: i64) -> ResourceSchema {
        ResourceSchema {
            version,
            ..Default::default()
        }
    }
    /// Adds attribute `name`.
    pub fn attr(mut self, name: &str, a: Attr) -> ResourceSchema {
        self.attrs.insert(name.into(), a);
        self
    }
    /// A nested block, declared with the protocol schema types.
    pub fn block(mut self, name: &str, b: NestedBlock) -> ResourceSchema {
        self.blocks.insert(name.into(), b);
        self
    }
    /// Sets the description.
    pub fn describe(mut self, text: &str) -> ResourceSchema {
        self.description = text.into();
        self
    }
    /// The schema of a data source that looks up what this resource
    /// schema describes: the attributes named in `arguments` become
    /// required, every other attribute computed (sensitivity and
    /// descriptions kept; defaults, plan modifiers and validators dropped).
    /// Nested blocks are left out. The SDKv2 counterpart is
    /// `DataSourceSchemaFromResourceSchema`.
    ///
    /// ```
    /// use terrane_sdk::{Attr, Schema};
    /// let resource = Schema::new(0)
    ///     .attr("key", Attr::string().required().requires_replace())
    ///     .attr("value", Attr::string().required());
    /// let data = resource.data_source(&["key"]).block_schema();
    /// assert!(data.attributes["key"].required);
    /// assert!(data.attributes["value"].computed && !data.attributes["value"].required);
    /// ```
    pub fn data_source(&self, arguments: &[&str]) -> ResourceSchema {
        let mut out = ResourceSchema::new(0).describe(&self.description);
        for (name, a) in &self.attrs {
            let mut b = Attr::of(a.ty());
            b.proto.description = a.proto.description.clone();
            b.proto.sensitive = a.proto.sensitive;
            b = if arguments.contains(&name.as_str()) {
                b.required()
            } else {
                b.computed()
            };
            out = out.attr(name, b);
        }
        out
    }
    /// The type of the objects this schema describes (its protocol
    /// block's implied type).
    pub fn value_type(&self) -> Type {
        self.block_schema().implied_type()
    }
    /// The protocol block.
    pub fn block_schema(&self) -> Block {
        let mut b = Block::new().describe(self.description.clone());
        for (n, a) in &self.attrs {
            b = b.attr(n.clone(), a.proto.clone());
        }
        for (n, nb) in &self.blocks {
            b = b.block(n.clone(), nb.clone());
        }
        b
    }
    /// The attributes, by name.
    pub fn attrs(&self) -> impl Iterator<Item = (&String, &Attr)> {
        self.attrs.iter()
    }
}
