//! terrane-eval: evaluation of Terraform-style expressions (hcl-edit's
//! syntax tree, as kept by terrane-config) over terrane values.
//!
//! Unknown values ("known after apply") and sensitive marks flow through
//! every operator and function the way Terraform's do; results are refined
//! where Terraform refines them. Errors are diagnostics pointing at the
//! exact sub-expression that failed.
//!
//! Key parts: the evaluator and its scope, the function library
//! ([`func`]). Architecture invariant: no async; the only I/O is the
//! filesystem functions (`file`, `fileset`, `templatefile`, ...) reading
//! files under the directory given in [`func::FuncCtx`].

pub mod func;
