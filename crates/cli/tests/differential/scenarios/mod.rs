//! The scenarios, grouped by theme. Each returns its steps.

pub mod basic;
pub mod blocks;
pub mod deposed;
pub mod errors;
pub mod expand;
pub mod exprs;
pub mod legacy;
pub mod lifecycle;
pub mod point8;
pub mod removed_check;
pub mod tfvars;
pub mod upgrade;
pub mod workspaces;
