//! The scenarios, grouped by theme. Each returns its steps.

pub mod basic;
pub mod blocks;
pub mod expand;
pub mod exprs;
pub mod lifecycle;
