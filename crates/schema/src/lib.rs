//! terrane-schema: what providers declare about their resources, and the
//! rules that bind a provider's plans and results to it.
//!
//! The schema model ([`Schema`], [`Block`], [`Attribute`], [`NestedBlock`],
//! [`NestedObject`]) mirrors the protocol's schema messages with builders for
//! provider code; [`Block::implied_type`] and [`Block::empty_value`] give the
//! value shape a schema implies; [`validate`] explains schema mistakes.
//!
//! [`objchange`] holds the pure functions of the resource lifecycle that
//! Terraform core applies to every provider response: [`objchange::proposed_new`],
//! [`objchange::planned_data_resource_object`], [`objchange::assert_plan_valid`]
//! and [`objchange::assert_object_compatible`].
//!
//! Architecture invariant: no I/O, not async; depends only on terrane-value.
//! Protocol (protobuf) types never appear here.

mod implied;
mod model;
pub mod objchange;
mod validate;

pub use model::{
    AttrType, Attribute, Block, BlockNesting, NestedBlock, NestedObject, ObjectNesting, Schema,
    StringKind,
};
pub use validate::{validate, SchemaError, SchemaKind};
