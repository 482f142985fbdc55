//! What a backend's SIGKILL crash test checks once the next run has
//! recovered (shared by the local-backend and s3 tests).

use std::collections::BTreeMap;
use std::path::Path;

/// After an apply of `n` counted objects was killed and the next `plan`
/// recovered: every object a reader saw before the kill is in the recovered
/// state document `doc` (Terraform's JSON) with the same id, the plan adds
/// exactly the rest, and the journal is gone. Returns how many objects the
/// recovered state holds.
pub fn check_recovered(
    doc: &[u8],
    seen: &terrane_state::Snapshot,
    plan_stdout: &str,
    dir: &Path,
    n: usize,
) -> usize {
    let state: serde_json::Value = serde_json::from_slice(doc).unwrap();
    let ids: BTreeMap<String, String> = state["resources"][0]["instances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["index_key"].to_string(),
                i["attributes"]["id"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect();
    let created = ids.len();
    for (addr, r) in &seen.resources {
        for (key, inst) in &r.instances {
            let attrs = inst.current.as_ref().unwrap().attributes.json();
            let id = attrs["id"].as_str().unwrap();
            let k = match key {
                terrane_state::InstanceKey::Int(i) => i.to_string(),
                other => panic!("unexpected key {other:?} of {addr}"),
            };
            assert_eq!(
                ids.get(&k).map(String::as_str),
                Some(id),
                "case seen_object_kept {addr}[{k}]"
            );
        }
    }
    assert!(
        created >= seen.object_count() && created < n,
        "case partial: {created}"
    );
    assert!(
        plan_stdout.contains(&format!(
            "Plan: {} to add, 0 to change, 0 to destroy.",
            n - created
        )),
        "case plans_exactly_the_rest ({created} created): {plan_stdout}"
    );
    assert!(
        !dir.join(".terraform/terrane-journal/default.journal")
            .exists(),
        "case journal_removed"
    );
    created
}
