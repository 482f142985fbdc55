//! Schema upgrades: the kv provider's `kv_versioned` takes its schema
//! version from the file `kv-schema-version` in the scenario directory, so
//! a step can raise it (version 1 renamed `size_gb` to `size_mb`) or lower
//! it below the state's.

use crate::harness::{step, Act, Step};

fn v0(size_gb: u32) -> String {
    format!(
        r#"resource "kv_versioned" "v" {{
  name    = "disk"
  size_gb = {size_gb}
}}
output "id" {{ value = kv_versioned.v.id }}"#
    )
}

fn v1(size_mb: u32) -> String {
    format!(
        r#"resource "kv_versioned" "v" {{
  name    = "disk"
  size_mb = {size_mb}
}}
output "id" {{ value = kv_versioned.v.id }}"#
    )
}

/// The upgraded state matches the new configuration: nothing to do.
pub fn schema_upgrade_noop() -> Vec<Step> {
    vec![
        step(&v0(2)).file("kv-schema-version", "0\n").exits(0),
        step(&v1(2048)).file("kv-schema-version", "1\n").exits(0),
        Step::same(Act::PlanOnly(&[])).exits(0),
    ]
}

/// The upgraded state differs from the new configuration: an update.
pub fn schema_upgrade_then_update() -> Vec<Step> {
    vec![
        step(&v0(2)).file("kv-schema-version", "0\n").exits(0),
        step(&v1(4096)).file("kv-schema-version", "1\n").exits(0),
    ]
}

/// `refresh` upgrades the state and writes it at the new version.
pub fn schema_upgrade_by_refresh() -> Vec<Step> {
    vec![
        step(&v0(1)).file("kv-schema-version", "0\n").exits(0),
        step(&v1(1024))
            .file("kv-schema-version", "1\n")
            .act(Act::Refresh)
            .exits(0),
        Step::same(Act::PlanOnly(&[])).exits(0),
    ]
}
