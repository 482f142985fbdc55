//! Table tests for the objchange rules. Each table case is named after the
//! rule it pins; values are written in a small literal language (see
//! [`dsl`]) and shaped to the schema's implied type, so a case reads like
//! the configuration it stands for.

mod compatible_tests;
mod dsl;
mod normalize_tests;
mod plan_valid_tests;
mod proposed_tests;
