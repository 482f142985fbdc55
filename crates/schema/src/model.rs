//! The schema model: what a provider declares about a resource type, a data
//! source or its own configuration. A [`Block`] has attributes and nested
//! block types; an [`Attribute`] has a value type or a nested object
//! ([`NestedObject`], "structural attributes"), plus the flags that decide
//! who sets it (required / optional / computed) and how it is treated
//! (sensitive, write-only, deprecated).
//!
//! Builders with documented defaults keep provider code and tests terse:
//! `Block::new().attr("id", Attribute::computed(Type::String))`.

use std::collections::BTreeMap;
use terrane_value::Type;

/// How descriptions are formatted (the protocol's StringKind).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum StringKind {
    #[default]
    Plain,
    Markdown,
}

/// A schema with its version (written to state as `schema_version`).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Schema {
    pub version: i64,
    pub block: Block,
}

impl Schema {
    pub fn new(version: i64, block: Block) -> Schema {
        Schema { version, block }
    }
}

/// A block: attributes and nested block types, by name.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Block {
    pub attributes: BTreeMap<String, Attribute>,
    pub block_types: BTreeMap<String, NestedBlock>,
    pub description: String,
    pub description_kind: StringKind,
    pub deprecated: bool,
    pub deprecation_message: String,
    /// Protocol 6.11 computed blocks: the provider may fill the block.
    pub computed: bool,
}

/// What an attribute holds: a plain value type or a nested object.
#[derive(Clone, Debug, PartialEq)]
pub enum AttrType {
    Type(Type),
    Nested(NestedObject),
}

/// An attribute of a block or nested object.
#[derive(Clone, Debug, PartialEq)]
pub struct Attribute {
    pub ty: AttrType,
    pub description: String,
    pub description_kind: StringKind,
    pub required: bool,
    pub optional: bool,
    pub computed: bool,
    pub sensitive: bool,
    pub deprecated: bool,
    pub deprecation_message: String,
    /// Set in configuration, sent to the provider, never stored or planned.
    pub write_only: bool,
}

/// Nesting of a nested-attribute object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjectNesting {
    Single,
    List,
    Set,
    Map,
}

/// The object type of a structural attribute.
#[derive(Clone, Debug, PartialEq)]
pub struct NestedObject {
    pub attributes: BTreeMap<String, Attribute>,
    pub nesting: ObjectNesting,
}

/// Nesting of a nested block type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockNesting {
    Single,
    List,
    Set,
    Map,
    Group,
}

/// A nested block type.
#[derive(Clone, Debug, PartialEq)]
pub struct NestedBlock {
    pub block: Block,
    pub nesting: BlockNesting,
    /// Minimum number of blocks (0 = no minimum).
    pub min_items: u64,
    /// Maximum number of blocks (0 = no maximum).
    pub max_items: u64,
}

impl Block {
    /// An empty block.
    pub fn new() -> Block {
        Block::default()
    }

    /// Adds (or replaces) an attribute.
    pub fn attr(mut self, name: impl Into<String>, a: Attribute) -> Block {
        self.attributes.insert(name.into(), a);
        self
    }

    /// Adds (or replaces) a nested block type.
    pub fn block(mut self, name: impl Into<String>, b: NestedBlock) -> Block {
        self.block_types.insert(name.into(), b);
        self
    }

    pub fn describe(mut self, text: impl Into<String>) -> Block {
        self.description = text.into();
        self
    }

    pub fn computed_block(mut self) -> Block {
        self.computed = true;
        self
    }

    pub fn attribute(&self, name: &str) -> Option<&Attribute> {
        self.attributes.get(name)
    }

    pub fn block_type(&self, name: &str) -> Option<&NestedBlock> {
        self.block_types.get(name)
    }

    /// Whether any attribute, at any depth, has a `dynamic` type.
    pub fn has_dynamic(&self) -> bool {
        self.attributes.values().any(Attribute::has_dynamic)
            || self.block_types.values().any(|b| b.block.has_dynamic())
    }
}

impl Attribute {
    fn with_flags(ty: AttrType, required: bool, optional: bool, computed: bool) -> Attribute {
        Attribute {
            ty,
            description: String::new(),
            description_kind: StringKind::Plain,
            required,
            optional,
            computed,
            sensitive: false,
            deprecated: false,
            deprecation_message: String::new(),
            write_only: false,
        }
    }

    /// Must be set in configuration.
    pub fn required(ty: Type) -> Attribute {
        Attribute::with_flags(AttrType::Type(ty), true, false, false)
    }

    /// May be set in configuration; null otherwise.
    pub fn optional(ty: Type) -> Attribute {
        Attribute::with_flags(AttrType::Type(ty), false, true, false)
    }

    /// Set only by the provider.
    pub fn computed(ty: Type) -> Attribute {
        Attribute::with_flags(AttrType::Type(ty), false, false, true)
    }

    /// May be set in configuration; the provider chooses a value otherwise.
    pub fn optional_computed(ty: Type) -> Attribute {
        Attribute::with_flags(AttrType::Type(ty), false, true, true)
    }

    /// A structural attribute with the given flags taken from `flags`
    /// (built with one of the constructors above on any type).
    pub fn nested(
        flags: Attribute,
        nesting: ObjectNesting,
        attributes: BTreeMap<String, Attribute>,
    ) -> Attribute {
        Attribute {
            ty: AttrType::Nested(NestedObject {
                attributes,
                nesting,
            }),
            ..flags
        }
    }

    pub fn sensitive(mut self) -> Attribute {
        self.sensitive = true;
        self
    }

    pub fn write_only(mut self) -> Attribute {
        self.write_only = true;
        self
    }

    pub fn describe(mut self, text: impl Into<String>) -> Attribute {
        self.description = text.into();
        self
    }

    pub fn deprecated(mut self, message: impl Into<String>) -> Attribute {
        self.deprecated = true;
        self.deprecation_message = message.into();
        self
    }

    pub fn nested_object(&self) -> Option<&NestedObject> {
        match &self.ty {
            AttrType::Nested(o) => Some(o),
            AttrType::Type(_) => None,
        }
    }

    pub fn has_dynamic(&self) -> bool {
        match &self.ty {
            AttrType::Type(t) => t.has_dynamic(),
            AttrType::Nested(o) => o.attributes.values().any(Attribute::has_dynamic),
        }
    }
}

impl NestedBlock {
    pub fn new(nesting: BlockNesting, block: Block) -> NestedBlock {
        NestedBlock {
            block,
            nesting,
            min_items: 0,
            max_items: 0,
        }
    }

    pub fn single(block: Block) -> NestedBlock {
        NestedBlock::new(BlockNesting::Single, block)
    }

    pub fn group(block: Block) -> NestedBlock {
        NestedBlock::new(BlockNesting::Group, block)
    }

    pub fn list(block: Block) -> NestedBlock {
        NestedBlock::new(BlockNesting::List, block)
    }

    pub fn set(block: Block) -> NestedBlock {
        NestedBlock::new(BlockNesting::Set, block)
    }

    pub fn map(block: Block) -> NestedBlock {
        NestedBlock::new(BlockNesting::Map, block)
    }

    pub fn items(mut self, min: u64, max: u64) -> NestedBlock {
        self.min_items = min;
        self.max_items = max;
        self
    }
}
