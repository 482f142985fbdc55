//! The scenarios, grouped by theme. Each returns its steps.

pub mod basic;
pub mod expand;
pub mod exprs;
pub mod legacy;
pub mod lifecycle;
