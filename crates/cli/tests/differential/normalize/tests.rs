//! The normalizer's own tests: tables of named cases. The `hole*` tests
//! are the three ways the old normalizer hid real differences (issue 22
//! point 1); each must report the difference.

use super::*;
use serde_json::json;

/// A learned pair: terrane's value and Terraform's.
fn pair(terrane: Value, terraform: Value) -> Pair {
    Pair { terrane, terraform }
}

fn state(resources: Value) -> Value {
    json!({"values": {"root_module": {"resources": resources}}})
}

fn res(addr: &str, ty: &str, values: Value) -> Value {
    json!({"address": addr, "type": ty, "values": values})
}

fn pet(id: &str) -> Value {
    res("random_pet.p", "random_pet", json!({"id": id, "length": 2}))
}

fn file(content: &str, sha: &str) -> Value {
    json!({"address": "local_file.f", "type": "local_file", "values": {"content": content, "content_sha1": sha, "id": sha}, "depends_on": ["random_pet.p"]})
}

fn plan(rcs: Value) -> Value {
    json!({"resource_changes": rcs})
}

fn rc(addr: &str, ty: &str, actions: Value, before: Value, after: Value, unknown: Value) -> Value {
    json!({"address": addr, "type": ty, "change": {"actions": actions, "before": before, "after": after, "after_unknown": unknown}})
}

/// One table case: the differences compare_states reports after
/// learning from the same two states.
fn check_states(name: &str, tf: Value, tr: Value, want: &[&str]) {
    let mut s = Subst::default();
    let learned = s.learn(&tf, &tr, None);
    assert_eq!(learned, Vec::<String>::new(), "{name}: learning");
    let got = compare_states(&tf, &tr, &s);
    assert_eq!(got, want, "{name}");
}

fn check_plans(name: &str, learn: (Value, Value), tf: Value, tr: Value, want: &[&str]) {
    let mut s = Subst::default();
    s.learn(&learn.0, &learn.1, None);
    let got = compare_plans(&tf, &tr, &s);
    assert_eq!(got, want, "{name}");
}

#[test]
fn states() {
    check_states(
        "equal",
        state(json!([pet("alpha-bee")])),
        state(json!([pet("alpha-bee")])),
        &[],
    );
    check_states(
        "random ids are paired",
        state(json!([pet("alpha-bee")])),
        state(json!([pet("gamma-doe")])),
        &[],
    );
    check_states(
        "random-derived content and its digests",
        state(json!([pet("alpha-bee"), file("x alpha-bee", "111")])),
        state(json!([pet("gamma-doe"), file("x gamma-doe", "222")])),
        &[],
    );
    check_states(
        "digests compared when the content is not random",
        state(json!([file("fixed", "111")])),
        state(json!([file("fixed", "222")])),
        &[
            "local_file.f: values.content_sha1: terraform \"111\", terrane \"222\"",
            "local_file.f: values.id: terraform \"111\", terrane \"222\"",
        ],
    );
    check_states(
        "config value differs",
        state(json!([pet("alpha-bee"), file("x alpha-bee", "1")])),
        state(json!([pet("gamma-doe"), file("y gamma-doe", "2")])),
        &[
            "local_file.f: values.content: terraform \"x alpha-bee\", terrane \"y alpha-bee\"",
            "local_file.f: values.content_sha1: terraform \"1\", terrane \"2\"",
            "local_file.f: values.id: terraform \"1\", terrane \"2\"",
        ],
    );
    check_states(
        "missing instance",
        state(json!([pet("alpha-bee"), file("x", "1")])),
        state(json!([pet("gamma-doe")])),
        &["addresses: terraform has [\"local_file.f\", \"random_pet.p\"], terrane has [\"random_pet.p\"]"],
    );
    check_states(
        "tainted flag",
        state(json!([{"address": "kv_item.a", "type": "kv_item", "tainted": true, "values": {}}])),
        state(json!([{"address": "kv_item.a", "type": "kv_item", "values": {}}])),
        &["kv_item.a: tainted: terraform true, terrane null"],
    );
    check_states(
        "outputs",
        json!({"values": {"outputs": {"o": {"value": "s", "sensitive": true}}, "root_module": {}}}),
        json!({"values": {"outputs": {"o": {"value": "s", "sensitive": false}}, "root_module": {}}}),
        &["outputs.o.sensitive: terraform true, terrane false"],
    );
    check_states(
        "child modules and depends_on",
        json!({"values": {"root_module": {"child_modules": [{"resources": [{"address": "module.m.terraform_data.d", "type": "terraform_data", "values": {"id": "0c1e0e3a-0000-4000-8000-000000000001"}, "depends_on": ["b", "a"]}]}]}}}),
        json!({"values": {"root_module": {"child_modules": [{"resources": [{"address": "module.m.terraform_data.d", "type": "terraform_data", "values": {"id": "0c1e0e3a-0000-4000-8000-000000000002"}, "depends_on": ["a"]}]}]}}}),
        &["module.m.terraform_data.d: depends_on: terraform [\"a\", \"b\"], terrane [\"a\"]"],
    );
}

/// Hole 1: every attribute of a random_* resource was learned, so a
/// configured attribute that differs was paired away.
#[test]
fn hole1_configured_attributes_of_random_resources_are_compared() {
    let s = |len: i64, special: bool, upper: bool, r: &str| {
        state(json!([res(
            "random_string.s",
            "random_string",
            json!({"id": r, "result": r, "length": len, "special": special, "upper": upper, "keepers": {"k": "abcdefgh"}})
        )]))
    };
    check_states(
        "length differs",
        s(12, false, true, "abcdefghijkl"),
        s(13, false, true, "mnopqrstuvwxy"),
        &["random_string.s: values.length: terraform 12, terrane 13"],
    );
    check_states(
        "special differs",
        s(12, false, true, "abcdefghijkl"),
        s(12, true, true, "mnopqrstuvwx"),
        &["random_string.s: values.special: terraform false, terrane true"],
    );
    let k = |v: &str| {
        state(json!([res(
            "random_pet.p",
            "random_pet",
            json!({"id": "alpha-bee", "length": 2, "keepers": {"k": v}})
        )]))
    };
    check_states(
        "keepers differ",
        k("abcdefgh"),
        k("zyxwvuts"),
        &["random_pet.p: values.keepers.k: terraform \"abcdefgh\", terrane \"zyxwvuts\""],
    );
    // The random values themselves are still paired.
    check_states(
        "result and id are random",
        s(12, false, true, "abcdefghijkl"),
        s(12, false, true, "mnopqrstuvwx"),
        &[],
    );
    // ... and must meet the resource's own constraints, which pairing
    // cannot see.
    let mut sub = Subst::default();
    let got = sub.learn(
        &s(12, false, false, "abcdefghijkl"),
        &s(12, false, false, "abcdefGHIjkl"),
        None,
    );
    assert_eq!(
        got,
        ["random_string.s: random value breaks upper = false: result \"abcdefGHIjkl\""],
        "upper = false ignored"
    );
}

/// Hole 2: learned pairs applied everywhere, so a pair of numbers or a
/// shared random string hid a mismatch in an unrelated resource or output.
#[test]
fn hole2_pairs_apply_only_where_their_value_can_flow() {
    let int = |r: i64| {
        res(
            "random_integer.n",
            "random_integer",
            json!({"id": r.to_string(), "result": r, "min": 1, "max": 9}),
        )
    };
    let kv = |rev: i64| res("kv_item.a", "kv_item", json!({"id": "a", "revision": rev}));
    check_states(
        "a number pair does not touch an unrelated number",
        state(json!([int(5), kv(5)])),
        state(json!([int(7), kv(7)])),
        &["kv_item.a: values.revision: terraform 5, terrane 7"],
    );
    let data = |input: &str, deps: Value| json!({"address": "terraform_data.t", "type": "terraform_data", "values": {"id": "0c1e0e3a-0000-4000-8000-000000000001", "input": input}, "depends_on": deps});
    check_states(
        "a random string does not touch an unrelated resource",
        state(json!([pet("alpha-bee"), data("alpha-bee", json!([]))])),
        state(json!([pet("gamma-doe"), data("gamma-doe", json!([]))])),
        &["terraform_data.t: values.input: terraform \"alpha-bee\", terrane \"gamma-doe\""],
    );
    check_states(
        "... but does touch what depends on it",
        state(json!([
            pet("alpha-bee"),
            data("alpha-bee", json!(["random_pet.p"]))
        ])),
        state(json!([
            pet("gamma-doe"),
            data("gamma-doe", json!(["random_pet.p"]))
        ])),
        &[],
    );
    let out = |v: Value, pet_id: &str| json!({"values": {"outputs": {"o": {"value": v, "sensitive": false}}, "root_module": {"resources": [pet(pet_id)]}}});
    check_states(
        "a random string does not touch an unrelated output",
        out(json!("alpha-bee"), "alpha-bee"),
        out(json!("gamma-doe"), "gamma-doe"),
        &["outputs.o.value: terraform \"alpha-bee\", terrane \"gamma-doe\""],
    );
    // An output that references the resource (in the plan's
    // configuration) may hold its value.
    let mut s = Subst::default();
    s.learn_plan_deps(&json!({"configuration": {"root_module": {"outputs": {"o": {"expression": {"references": ["random_pet.p.id", "random_pet.p"]}}}}}}));
    let (tf, tr) = (
        out(json!("alpha-bee"), "alpha-bee"),
        out(json!("gamma-doe"), "gamma-doe"),
    );
    assert_eq!(s.learn(&tf, &tr, None), Vec::<String>::new());
    assert_eq!(
        compare_states(&tf, &tr, &s),
        Vec::<String>::new(),
        "referencing output"
    );
    // Another instance of the same resource is unrelated too.
    let two = |a: &str, b: &str| {
        state(json!([
            res(
                "random_pet.p[0]",
                "random_pet",
                json!({"id": a, "length": 2})
            ),
            res(
                "terraform_data.x[0]",
                "terraform_data",
                json!({"id": "0c1e0e3a-0000-4000-8000-000000000001", "input": b})
            ),
        ]))
    };
    check_states(
        "instances",
        two("alpha-bee", "alpha-bee"),
        two("gamma-doe", "gamma-doe"),
        &["terraform_data.x[0]: values.input: terraform \"alpha-bee\", terrane \"gamma-doe\""],
    );
}

/// Hole 3: a random value terrane regenerated in a later step was simply
/// learned again.
#[test]
fn hole3_a_regenerated_random_value_is_reported() {
    let d = |id: &str| {
        state(json!([res(
            "terraform_data.d",
            "terraform_data",
            json!({"id": id})
        )]))
    };
    let (t1, t2) = (
        "11111111-0000-4000-8000-000000000000",
        "22222222-0000-4000-8000-000000000000",
    );
    let (r1, r2) = (
        "aaaaaaaa-0000-4000-8000-000000000000",
        "bbbbbbbb-0000-4000-8000-000000000000",
    );
    let planned: BTreeSet<String> = ["terraform_data.d".to_string()].into();
    let none = BTreeSet::new();
    let check =
        |name: &str, tr2: &str, tf2: &str, replaced: Option<&BTreeSet<String>>, want: usize| {
            let mut s = Subst::default();
            assert_eq!(
                s.learn(&d(t1), &d(r1), Some(&none)),
                Vec::<String>::new(),
                "{name}"
            );
            let got = s.learn(&d(tf2), &d(tr2), replaced);
            assert_eq!(got.len(), want, "{name}: {got:?}");
            assert!(compare_states(&d(tf2), &d(tr2), &s).is_empty(), "{name}");
        };
    check(
        "terrane regenerates, Terraform keeps",
        r2,
        t1,
        Some(&none),
        1,
    );
    check(
        "terrane keeps, Terraform replaces",
        r1,
        t2,
        Some(&planned),
        1,
    );
    check(
        "both change without a planned replacement",
        r2,
        t2,
        Some(&none),
        1,
    );
    check("both replace as planned", r2, t2, Some(&planned), 0);
    check("an apply without a saved plan may replace", r2, t2, None, 0);
    check("both keep", r1, t1, Some(&none), 0);
}

#[test]
fn shapes() {
    let check = |name: &str, ty: &str, values: Value, bad: bool| {
        let got = shape_problems("x.y", ty, &values);
        assert_eq!(!got.is_empty(), bad, "{name}: {got:?}");
    };
    check(
        "string ok",
        "random_string",
        json!({"result": "ab1", "length": 3, "special": false, "upper": false}),
        false,
    );
    check(
        "string length",
        "random_string",
        json!({"result": "ab1", "length": 4}),
        true,
    );
    check(
        "string special",
        "random_string",
        json!({"result": "a!1", "length": 3, "special": false}),
        true,
    );
    check(
        "override special",
        "random_password",
        json!({"result": "a!1", "length": 3, "override_special": "_"}),
        true,
    );
    check(
        "min_numeric",
        "random_string",
        json!({"result": "abc", "length": 3, "min_numeric": 1}),
        true,
    );
    check(
        "pet ok",
        "random_pet",
        json!({"id": "x-alpha-bee", "length": 2, "prefix": "x", "separator": "-"}),
        false,
    );
    check(
        "pet length",
        "random_pet",
        json!({"id": "alpha-bee-cat", "length": 2, "separator": "-"}),
        true,
    );
    check(
        "integer range",
        "random_integer",
        json!({"id": "10", "result": 10, "min": 1, "max": 9}),
        true,
    );
    check(
        "id ok",
        "random_id",
        json!({"hex": "00ff", "b64_url": "AP8", "b64_std": "AP8=", "byte_length": 2}),
        false,
    );
    check(
        "id b64",
        "random_id",
        json!({"hex": "00ff", "b64_url": "AP9", "b64_std": "AP8=", "byte_length": 2}),
        true,
    );
    check(
        "uuid",
        "random_uuid",
        json!({"id": "x", "result": "x"}),
        true,
    );
    check(
        "data id",
        "terraform_data",
        json!({"id": "11111111-0000-4000-8000-000000000000"}),
        false,
    );
    check(
        "data id kept old form",
        "terraform_data",
        json!({"id": "not-a-uuid"}),
        true,
    );
}

#[test]
fn plans() {
    let none = (json!({}), json!({}));
    let create = |unknown: Value, after: Value, action: &str| {
        plan(json!([rc(
            "a.b",
            "terraform_data",
            json!([action]),
            json!(null),
            after,
            unknown
        )]))
    };
    check_plans(
        "equal create",
        none.clone(),
        create(json!({"id": true}), json!({"input": 1}), "create"),
        create(json!({"id": true}), json!({"input": 1}), "create"),
        &[],
    );
    check_plans(
        "actions and unknowns differ",
        none.clone(),
        create(
            json!({"id": true, "output": true}),
            json!({"input": 1}),
            "create",
        ),
        create(
            json!({"id": true}),
            json!({"input": 1, "output": 1}),
            "update",
        ),
        &[
            "a.b: actions[0]: terraform \"create\", terrane \"update\"",
            "a.b: after_unknown.output: terraform true, terrane has no such key",
            "a.b: after.output: terrane 1, terraform has no such key",
        ],
    );
    check_plans(
        "prior random values are paired in before and after",
        (
            state(json!([pet("alpha-bee")])),
            state(json!([pet("gamma-doe")])),
        ),
        plan(json!([rc(
            "random_pet.p",
            "random_pet",
            json!(["no-op"]),
            json!({"id": "alpha-bee"}),
            json!({"id": "alpha-bee"}),
            json!({})
        )])),
        plan(json!([rc(
            "random_pet.p",
            "random_pet",
            json!(["no-op"]),
            json!({"id": "gamma-doe"}),
            json!({"id": "gamma-doe"}),
            json!({})
        )])),
        &[],
    );
    check_plans(
        "reasons and addresses",
        none.clone(),
        plan(
            json!([{"address": "x.y", "action_reason": "replace_because_tainted", "change": {"actions": ["delete", "create"]}}]),
        ),
        plan(
            json!([{"address": "x.y", "change": {"actions": ["delete", "create"]}}, {"address": "x.z", "change": {"actions": ["create"]}}]),
        ),
        &[
            "resource_changes addresses: terraform has [\"x.y\"], terrane has [\"x.y\", \"x.z\"]",
            "x.y: action_reason: terraform \"replace_because_tainted\", terrane null",
        ],
    );
    check_plans(
        "replace paths",
        none.clone(),
        plan(
            json!([{"address": "x.y", "change": {"actions": ["delete", "create"], "replace_paths": [["key"]]}}]),
        ),
        plan(json!([{"address": "x.y", "change": {"actions": ["delete", "create"]}}])),
        &["x.y: replace_paths: terraform [[\"key\"]], terrane null"],
    );
    check_plans(
        "output changes (missing means none)",
        none.clone(),
        json!({"resource_changes": [], "output_changes": {"o": {"actions": ["create"], "after_unknown": true}}}),
        json!({"resource_changes": []}),
        &["output_changes.o: terraform {\"actions\":[\"create\"],\"after_unknown\":true}, terrane has no such key"],
    );
    check_plans(
        "drift values",
        none.clone(),
        json!({"resource_drift": [{"address": "f.g", "change": {"actions": ["update"], "before": {"c": "a"}, "after": {"c": "b"}}}]}),
        json!({"resource_drift": [{"address": "f.g", "change": {"actions": ["update"], "before": {"c": "a"}, "after": {"c": "a"}}}]}),
        &["resource_drift f.g: after.c: terraform \"b\", terrane \"a\""],
    );
    check_plans(
        "prior state and planned values",
        none.clone(),
        json!({"prior_state": state(json!([res("k.a", "k", json!({"v": 1}))])), "planned_values": {"root_module": {"resources": [res("k.a", "k", json!({"v": 2}))]}}}),
        json!({"prior_state": state(json!([res("k.a", "k", json!({"v": 0}))])), "planned_values": {"root_module": {"resources": [res("k.a", "k", json!({"v": 3}))]}}}),
        &[
            "prior_state: k.a: values.v: terraform 1, terrane 0",
            "planned_values: k.a: values.v: terraform 2, terrane 3",
        ],
    );
    check_plans(
        "relevant attributes and checks",
        none,
        json!({"relevant_attributes": [{"resource": "a.b", "attribute": ["id"]}], "checks": [{"address": {"to_display": "a.b"}, "status": "pass"}], "applyable": true}),
        json!({"relevant_attributes": [], "checks": [{"address": {"to_display": "a.b"}, "status": "unknown"}], "applyable": true}),
        &[
            "relevant_attributes: terraform only [\"a.b [\\\"id\\\"]\"], terrane only []",
            "checks[0].status: terraform \"pass\", terrane \"unknown\"",
        ],
    );
}

#[test]
fn dependencies_from_the_configuration() {
    let mut s = Subst::default();
    s.learn_plan_deps(&json!({"configuration": {"root_module": {
        "resources": [{"address": "random_pet.p", "expressions": {}}],
        "outputs": {"o": {"expression": {"references": ["module.m.id", "module.m"]}}},
        "module_calls": {"m": {
            "expressions": {"name": {"references": ["random_pet.p.id", "random_pet.p"]}},
            "module": {"resources": [{"address": "kv_item.k", "expressions": {"key": {"references": ["var.name"]}}}, {"address": "kv_item.other", "expressions": {}}]}
        }}
    }}}));
    let check = |target: &str, source: &str, want: bool| {
        assert_eq!(s.reaches(target, source), want, "{target} <- {source}");
    };
    check("module.m.kv_item.k", "random_pet.p", true);
    check("module.m.kv_item.other", "random_pet.p", false);
    check("output.o", "random_pet.p", true);
    check("random_pet.p", "module.m.kv_item.k", false);
    assert_eq!(
        config_addr("module.m[\"a]b\"].kv_item.k[0]"),
        "module.m.kv_item.k"
    );
}

#[test]
fn substitution_prefers_longer_values() {
    let (a, b) = (
        pair(json!("abcdefg"), json!("X")),
        pair(json!("abcdefgh"), json!("Y")),
    );
    let n = pair(json!(7), json!(9));
    let s = Scope {
        pairs: vec![&a, &b, &n],
    };
    assert_eq!(s.apply(&json!(["abcdefgh-abcdefg"])), json!(["Y-X"]));
    assert_eq!(s.apply(&json!({"n": 7, "m": 8})), json!({"n": 9, "m": 8}));
    // A value already equal to Terraform's is not rewritten, even when
    // it equals a random value of terrane's.
    assert_eq!(
        s.apply_against(&json!({"len": 7, "r": 9}), &json!({"len": 7, "r": 7})),
        json!({"len": 7, "r": 9})
    );
}

#[test]
fn substitution_is_one_pass() {
    // terrane's replacement drew the name Terraform had drawn first: each
    // line keeps its own object's name, not the other's replaced again.
    let (old, new) = (
        pair(json!("brave-otter"), json!("calm-heron")),
        pair(json!("calm-heron"), json!("tidy-lynx")),
    );
    let cases: &[(&str, Vec<&Pair>, &str, &str)] = &[
        (
            "old then new",
            vec![&old, &new],
            "p: Destroying... [id=brave-otter]\np: Creation complete [id=calm-heron]",
            "p: Destroying... [id=calm-heron]\np: Creation complete [id=tidy-lynx]",
        ),
        (
            "new then old",
            vec![&new, &old],
            "p: Destroying... [id=brave-otter]\np: Creation complete [id=calm-heron]",
            "p: Destroying... [id=calm-heron]\np: Creation complete [id=tidy-lynx]",
        ),
        (
            "inside longer text",
            vec![&old, &new],
            "brave-otter/calm-heron",
            "calm-heron/tidy-lynx",
        ),
        ("nothing learned", vec![], "brave-otter", "brave-otter"),
    ];
    for (name, pairs, text, want) in cases {
        let s = Scope {
            pairs: pairs.clone(),
        };
        assert_eq!(s.replace_in(text), *want, "{name}");
    }
}

#[test]
fn texts() {
    let check = |name: &str, tf: &str, tr: &str, same: bool| {
        let got = first_difference(&run_text(tf, &[]), &run_text(tr, &[]));
        assert_eq!(got.is_none(), same, "{name}: {got:?}");
    };
    check(
        "durations and order of concurrent instances",
        "a.x: Creating...\nb.y: Creating...\na.x: Creation complete after 1s [id=1]\nb.y: Creation complete after 0s [id=2]\n\nApply complete! Resources: 2 added, 0 changed, 0 destroyed.\n",
        "b.y: Creating...\na.x: Creating...\nb.y: Creation complete after 0s [id=2]\na.x: Creation complete after 12s [id=1]\n\nApply complete! Resources: 2 added, 0 changed, 0 destroyed.\n",
        true,
    );
    check(
        "counts differ",
        "Apply complete! Resources: 1 added, 0 changed, 1 destroyed.\n",
        "Apply complete! Resources: 1 added, 0 changed, 2 destroyed.\n",
        false,
    );
    check(
        "one instance's order matters",
        "a.x: Destroying... [id=1]\na.x: Destruction complete after 0s\n",
        "a.x: Destruction complete after 0s\na.x: Destroying... [id=1]\n",
        false,
    );
    check(
        "prose wraps around the tool's name",
        "Terraform will do this and that and\nthe other.\n",
        "terrane will do this and that and the\nother.\n",
        true,
    );
    check(
        "still lines are left out",
        "a.x: Creating...\na.x: Still creating... [10s elapsed]\n",
        "a.x: Creating...\n",
        true,
    );
}

#[test]
fn diagnostic_boxes() {
    let tf = "\u{2577}\n\u{2502} Error: Instance cannot be destroyed\n\u{2502} \n\u{2502}   on main.tf line 3:\n\u{2502}    3: resource \"x\" \"y\" {\n\u{2502} \n\u{2502} Detail\n\u{2575}\n\u{2577}\n\u{2502} Warning: Careful\n\u{2502} \n\u{2502}   with kv_item.t,\n\u{2502}   on main.tf line 9, in resource \"kv_item\" \"t\":\n\u{2575}\n";
    assert_eq!(
        diagnostics(tf),
        [
            Diag {
                severity: "Error".into(),
                summary: "Instance cannot be destroyed".into(),
                address: None,
                at: Some("main.tf:3".into())
            },
            Diag {
                severity: "Warning".into(),
                summary: "Careful".into(),
                address: Some("kv_item.t".into()),
                at: Some("main.tf:9".into())
            },
        ]
    );
    assert!(compare_diagnostics(tf, tf).is_none());
    let plain = "Error: Instance cannot be destroyed\n\n  on main.tf line 3:\n   3: resource \"x\" \"y\" {\n\nDetail with the plan, either\n\nWarning: Careful\n\n  on main.tf line 9, in resource \"kv_item\" \"t\":\n\nwith kv_item.t\n";
    assert_eq!(diagnostics(plain), diagnostics(tf), "plain and boxed");
    assert!(compare_diagnostics(tf, "").is_some(), "missing diagnostics");
    assert!(
        compare_diagnostics(tf, &tf.replace("line 3", "line 4")).is_some(),
        "error line"
    );
    assert!(
        compare_diagnostics(tf, &tf.replace("Error: Instance", "Warning: Instance")).is_some(),
        "severity"
    );
    // Warnings are consolidated by summary.
    let twice = format!(
        "{tf}{}",
        tf.replace("kv_item.t", "kv_item.u")
            .replace("Error: Instance cannot be destroyed", "Error: Other")
    );
    assert!(
        compare_diagnostics(
            &twice,
            &format!(
                "{tf}\u{2577}\n\u{2502} Error: Other\n\u{2502}   on main.tf line 3:\n\u{2575}\n"
            )
        )
        .is_none(),
        "consolidated warnings"
    );
}

/// A cycle's members are compared as a set (Terraform's order changes from
/// run to run), but a different member is still a difference.
#[test]
fn cycle_members_in_any_order() {
    let cycle = |members: &str| format!("Error: Cycle: {members}\n\n  on main.tf line 1:\n");
    let cases = [
        ("same_order", "terraform_data.a, terraform_data.b", true),
        ("other_order", "terraform_data.b, terraform_data.a", true),
        ("other_member", "terraform_data.a, terraform_data.c", false),
        ("missing_member", "terraform_data.a", false),
    ];
    let ours = cycle("terraform_data.a, terraform_data.b");
    for (name, theirs, same) in cases {
        assert_eq!(
            compare_diagnostics(&cycle(theirs), &ours).is_none(),
            same,
            "case {name}"
        );
    }
}
