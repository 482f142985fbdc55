//! terrane's output, everything the `terrane` binary prints or writes
//! about a plan, a state or a value, in Terraform's shapes. A library
//! beneath the binary: it knows the engine's, state's and value's types
//! and nothing of the command line.
//!
//! - [`text`]: values as text (plan, `show`, HCL) and the [`text::Style`].
//! - [`diff`]: the structural diff of two values the plan prints.
//! - [`human`]: plan text, diagnostics, `Outputs:`.
//! - [`json`]: `show -json` and `plan -json` documents.
//! - [`stream`]: the `-json` streaming UI (one JSON message per line).
//! - [`planfile`]: saved plan files (`plan -out`), sealed when the state is.
//!
//! Imports run one way: `text` <- `diff` <- `human`; `json` <- `stream`;
//! `planfile` stands alone.

pub mod diff;
pub mod human;
pub mod json;
pub mod planfile;
pub mod schemajson;
pub mod stream;
pub mod text;
