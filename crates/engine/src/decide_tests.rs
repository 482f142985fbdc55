//! The planning decisions, one named case per rule: every [`Action`] and
//! every [`Reason`] the plan renderer prints is reached by some case.

use super::*;
use terrane_schema::Attribute;
use terrane_value::Type;

fn obj(attrs: &[(&str, Value)]) -> Value {
    Value::object_from(attrs.iter().map(|(k, v)| (*k, v.clone())))
}

fn s(text: &str) -> Value {
    Value::string(text)
}

/// A managed instance as planning may find it; each case changes a few
/// of these.
#[derive(Clone)]
struct Managed {
    prior: Value,
    planned: Value,
    tainted: bool,
    requested: bool,
    triggered: bool,
    requires: Vec<Path>,
    cbd: bool,
}

fn existing() -> Managed {
    Managed {
        prior: obj(&[("a", s("x"))]),
        planned: obj(&[("a", s("x"))]),
        tainted: false,
        requested: false,
        triggered: false,
        requires: Vec::new(),
        cbd: false,
    }
}

fn new_object() -> Managed {
    Managed {
        prior: Value::null(Type::object([("a", Type::String)])),
        planned: obj(&[("a", s("x"))]),
        ..existing()
    }
}

fn changed() -> Managed {
    Managed {
        planned: obj(&[("a", s("y"))]),
        ..existing()
    }
}

/// An action and its reason.
type Choice = (Action, Option<Reason>);

#[test]
fn managed_actions() {
    #[track_caller]
    fn check(case: &str, m: Managed, want: Choice) {
        let got = managed(&Facts {
            prior: &m.prior,
            planned: &m.planned,
            tainted: m.tainted,
            replace_requested: m.requested,
            replace_triggered: m.triggered,
            requires_replace: &m.requires,
            create_before_destroy: m.cbd,
        });
        assert_eq!(got, want, "case {case}");
    }
    let a = || vec![Path::root().attr("a")];
    let cases: Vec<(&str, Managed, Choice)> = vec![
        ("create_without_prior", new_object(), (Action::Create, None)),
        (
            "create_ignores_replace_request_without_prior",
            Managed {
                requested: true,
                ..new_object()
            },
            (Action::Create, None),
        ),
        (
            "create_ignores_trigger_without_prior",
            Managed {
                triggered: true,
                ..new_object()
            },
            (Action::Create, None),
        ),
        (
            "create_ignores_requires_replace_without_prior",
            Managed {
                requires: a(),
                ..new_object()
            },
            (Action::Create, None),
        ),
        (
            "create_with_create_before_destroy_is_a_plain_create",
            Managed {
                cbd: true,
                ..new_object()
            },
            (Action::Create, None),
        ),
        (
            "noop_when_planned_equals_prior",
            existing(),
            (Action::NoOp, None),
        ),
        (
            "noop_with_create_before_destroy",
            Managed {
                cbd: true,
                ..existing()
            },
            (Action::NoOp, None),
        ),
        (
            "update_when_an_attribute_changes",
            changed(),
            (Action::Update, None),
        ),
        (
            "update_when_planned_has_an_unknown",
            Managed {
                planned: obj(&[("a", Value::unknown(Type::String))]),
                ..existing()
            },
            (Action::Update, None),
        ),
        (
            "update_with_create_before_destroy_stays_an_update",
            Managed {
                cbd: true,
                ..changed()
            },
            (Action::Update, None),
        ),
        (
            "replace_tainted_deletes_first",
            Managed {
                tainted: true,
                ..existing()
            },
            (Action::DeleteThenCreate, Some(Reason::Tainted)),
        ),
        (
            "replace_tainted_with_create_before_destroy",
            Managed {
                tainted: true,
                cbd: true,
                ..existing()
            },
            (Action::CreateThenDelete, Some(Reason::Tainted)),
        ),
        (
            "replace_by_request",
            Managed {
                requested: true,
                ..existing()
            },
            (Action::DeleteThenCreate, Some(Reason::ReplaceByRequest)),
        ),
        (
            "replace_by_request_with_create_before_destroy",
            Managed {
                requested: true,
                cbd: true,
                ..changed()
            },
            (Action::CreateThenDelete, Some(Reason::ReplaceByRequest)),
        ),
        (
            "replace_by_triggers",
            Managed {
                triggered: true,
                ..existing()
            },
            (Action::DeleteThenCreate, Some(Reason::ReplaceByTriggers)),
        ),
        (
            "replace_by_triggers_with_create_before_destroy",
            Managed {
                triggered: true,
                cbd: true,
                ..existing()
            },
            (Action::CreateThenDelete, Some(Reason::ReplaceByTriggers)),
        ),
        (
            "replace_because_cannot_update",
            Managed {
                requires: a(),
                ..changed()
            },
            (Action::DeleteThenCreate, Some(Reason::CannotUpdate)),
        ),
        (
            "replace_because_cannot_update_with_create_before_destroy",
            Managed {
                requires: a(),
                cbd: true,
                ..changed()
            },
            (Action::CreateThenDelete, Some(Reason::CannotUpdate)),
        ),
        (
            "tainted_is_named_before_a_request",
            Managed {
                tainted: true,
                requested: true,
                triggered: true,
                requires: a(),
                ..changed()
            },
            (Action::DeleteThenCreate, Some(Reason::Tainted)),
        ),
        (
            "request_is_named_before_triggers",
            Managed {
                requested: true,
                triggered: true,
                requires: a(),
                ..changed()
            },
            (Action::DeleteThenCreate, Some(Reason::ReplaceByRequest)),
        ),
        (
            "triggers_are_named_before_requires_replace",
            Managed {
                triggered: true,
                requires: a(),
                ..changed()
            },
            (Action::DeleteThenCreate, Some(Reason::ReplaceByTriggers)),
        ),
        (
            "tainted_replaces_even_without_a_change",
            Managed {
                tainted: true,
                ..existing()
            },
            (Action::DeleteThenCreate, Some(Reason::Tainted)),
        ),
    ];
    assert!(cases.len() >= 20);
    for (name, m, want) in cases {
        check(name, m, want);
    }
}

#[test]
fn requires_replace_paths() {
    #[track_caller]
    fn check(case: &str, paths: &[Path], prior: &Value, planned: &Value, want: &[Path]) {
        let got = requires_replace(paths.to_vec(), prior, planned);
        assert_eq!(got, want, "case {case}");
    }
    let a = Path::root().attr("a");
    let b = Path::root().attr("b");
    let list = |xs: &[&str]| Value::list(Type::String, xs.iter().map(|x| s(x)).collect());
    check(
        "changed_path_is_kept",
        std::slice::from_ref(&a),
        &obj(&[("a", s("x"))]),
        &obj(&[("a", s("y"))]),
        std::slice::from_ref(&a),
    );
    check(
        "unchanged_path_is_dropped",
        std::slice::from_ref(&a),
        &obj(&[("a", s("x"))]),
        &obj(&[("a", s("x"))]),
        &[],
    );
    check(
        "path_becoming_unknown_is_kept",
        std::slice::from_ref(&a),
        &obj(&[("a", s("x"))]),
        &obj(&[("a", Value::unknown(Type::String))]),
        std::slice::from_ref(&a),
    );
    check(
        "path_absent_on_both_sides_is_dropped",
        std::slice::from_ref(&b),
        &obj(&[("a", s("x"))]),
        &obj(&[("a", s("y"))]),
        &[],
    );
    check(
        "path_present_on_one_side_is_kept",
        std::slice::from_ref(&b),
        &obj(&[("a", s("x"))]),
        &obj(&[("a", s("x")), ("b", s("new"))]),
        std::slice::from_ref(&b),
    );
    check(
        "only_the_changed_of_several_are_kept",
        &[a.clone(), b.clone()],
        &obj(&[("a", s("x")), ("b", s("same"))]),
        &obj(&[("a", s("y")), ("b", s("same"))]),
        std::slice::from_ref(&a),
    );
    let l0 = Path::root().attr("l").index(0);
    check(
        "nested_index_changed_is_kept",
        std::slice::from_ref(&l0),
        &obj(&[("l", list(&["p"]))]),
        &obj(&[("l", list(&["q"]))]),
        std::slice::from_ref(&l0),
    );
}

#[test]
fn data_source_reads() {
    #[track_caller]
    fn check(case: &str, known: bool, pending: bool, want: DataPlan) {
        assert_eq!(data_source(known, pending), want, "case {case}");
    }
    check(
        "read_now_when_known_and_nothing_pending",
        true,
        false,
        DataPlan::ReadNow,
    );
    check(
        "read_because_config_unknown",
        false,
        false,
        DataPlan::Defer(Action::Read, Reason::ReadBecauseConfigUnknown),
    );
    check(
        "read_because_dependency_pending",
        true,
        true,
        DataPlan::Defer(Action::Read, Reason::ReadBecauseDependencyPending),
    );
    check(
        "unknown_config_is_the_reason_given_first",
        false,
        true,
        DataPlan::Defer(Action::Read, Reason::ReadBecauseConfigUnknown),
    );
}

#[test]
fn orphans() {
    #[track_caller]
    fn check(
        case: &str,
        config: OrphanConfig,
        key: InstanceKey,
        removed: Option<bool>,
        want: (Action, Reason),
    ) {
        let got = (orphan_action(removed), orphan_reason(config, &key));
        assert_eq!(got, want, "case {case}");
    }
    let res = |count, for_each| OrphanConfig::Resource { count, for_each };
    let int = InstanceKey::Int(3);
    let key = || InstanceKey::Str("k".into());
    let cases = vec![
        (
            "delete_because_no_module",
            OrphanConfig::NoModule,
            InstanceKey::None,
            None,
            (Action::Delete, Reason::NoModule),
        ),
        (
            "delete_because_no_resource_config",
            OrphanConfig::NoResource,
            InstanceKey::None,
            None,
            (Action::Delete, Reason::NoResourceConfig),
        ),
        (
            "delete_because_count_index",
            res(true, false),
            int.clone(),
            None,
            (Action::Delete, Reason::CountIndex),
        ),
        (
            "delete_because_each_key",
            res(false, true),
            key(),
            None,
            (Action::Delete, Reason::EachKey),
        ),
        (
            "wrong_repetition_index_without_count",
            res(false, false),
            int.clone(),
            None,
            (Action::Delete, Reason::WrongRepetition),
        ),
        (
            "wrong_repetition_key_without_for_each",
            res(true, false),
            key(),
            None,
            (Action::Delete, Reason::WrongRepetition),
        ),
        (
            "wrong_repetition_no_key_with_count",
            res(true, false),
            InstanceKey::None,
            None,
            (Action::Delete, Reason::WrongRepetition),
        ),
        (
            "forget_when_removed_without_destroy",
            OrphanConfig::NoResource,
            InstanceKey::None,
            Some(false),
            (Action::Forget, Reason::NoResourceConfig),
        ),
        (
            "delete_when_removed_with_destroy",
            OrphanConfig::NoResource,
            InstanceKey::None,
            Some(true),
            (Action::Delete, Reason::NoResourceConfig),
        ),
    ];
    for (name, config, key, removed, want) in cases {
        check(name, config, key, removed, want);
    }
}

#[test]
fn refresh_and_apply_actions() {
    #[track_caller]
    fn check(case: &str, got: Action, want: Action) {
        assert_eq!(got, want, "case {case}");
    }
    let null = Value::null(Type::object([("a", Type::String)]));
    let some = obj(&[("a", s("x"))]);
    check(
        "drift_object_gone_is_a_delete",
        drift(&null),
        Action::Delete,
    );
    check(
        "drift_object_changed_is_an_update",
        drift(&some),
        Action::Update,
    );
    check(
        "apply_without_prior_creates",
        apply_action(&null),
        Action::Create,
    );
    check(
        "apply_with_prior_updates",
        apply_action(&some),
        Action::Update,
    );
    check(
        "replacement_without_cbd_deletes_first",
        replacement(false),
        Action::DeleteThenCreate,
    );
    check(
        "replacement_with_cbd_creates_first",
        replacement(true),
        Action::CreateThenDelete,
    );
    let ignores = |a| {
        if ignores_at_apply(a) {
            Action::Update
        } else {
            Action::NoOp
        }
    };
    check(
        "apply_keeps_ignored_attributes_on_update",
        ignores(Action::Update),
        Action::Update,
    );
    check(
        "apply_does_not_ignore_on_create",
        ignores(Action::Create),
        Action::NoOp,
    );
    check(
        "apply_does_not_ignore_on_replace",
        ignores(Action::DeleteThenCreate),
        Action::NoOp,
    );
}

#[test]
fn ignore_changes_rules() {
    #[track_caller]
    fn check(case: &str, rule: &str, prior: &Value, config: &Value, want: &Value) {
        let schema = Block::new()
            .attr("a", Attribute::optional(Type::String))
            .attr("b", Attribute::optional(Type::String))
            .attr("c", Attribute::optional_computed(Type::String))
            .attr("id", Attribute::computed(Type::String));
        let expr: terrane_hcl::expr::Expression = rule.parse().expect("rule parses");
        let rule = IgnoreChanges::from_expr(&expr);
        let got = ignore_changes(&rule, &schema, prior, config);
        assert_eq!(&got, want, "case {case}");
    }
    let row = |a: &str, b: &str, c: &str, id: &str| {
        obj(&[("a", s(a)), ("b", s(b)), ("c", s(c)), ("id", s(id))])
    };
    let prior = row("a0", "b0", "c0", "i0");
    let config = row("a1", "b1", "c1", "i1");
    let null = Value::null(config.ty().clone());
    check(
        "no_prior_keeps_the_configuration",
        "[a]",
        &null,
        &config,
        &config,
    );
    check(
        "listed_attribute_keeps_its_prior_value",
        "[a]",
        &prior,
        &config,
        &row("a0", "b1", "c1", "i1"),
    );
    check(
        "quoted_name_keeps_its_prior_value",
        "[\"b\"]",
        &prior,
        &config,
        &row("a1", "b0", "c1", "i1"),
    );
    check(
        "several_names",
        "[a, b]",
        &prior,
        &config,
        &row("a0", "b0", "c1", "i1"),
    );
    check(
        "unlisted_attributes_change",
        "[c]",
        &prior,
        &config,
        &row("a1", "b1", "c0", "i1"),
    );
    check(
        "name_not_in_the_configuration_is_skipped",
        "[zz]",
        &prior,
        &config,
        &config,
    );
    check(
        "all_keeps_every_settable_attribute",
        "all",
        &prior,
        &config,
        &row("a0", "b0", "c0", "i1"),
    );
    check(
        "not_a_list_ignores_nothing",
        "\"a\"",
        &prior,
        &config,
        &config,
    );
}

#[test]
fn replace_triggered_by_refs() {
    #[track_caller]
    fn check(case: &str, subject: Subject, want: bool) {
        let refs = [Reference {
            subject,
            range: None,
            attr: None,
        }];
        let changing = |mode: Mode, ty: &str, name: &str| {
            (mode, ty, name) == (Mode::Managed, "t", "changing")
                || (mode, ty, name) == (Mode::Data, "d", "changing")
        };
        assert_eq!(replace_triggered(&refs, changing), want, "case {case}");
    }
    let res = |data: bool, ty: &str, name: &str| Subject::Resource {
        data,
        ty: ty.into(),
        name: name.into(),
    };
    check(
        "changing_resource_triggers",
        res(false, "t", "changing"),
        true,
    );
    check(
        "unchanged_resource_does_not",
        res(false, "t", "steady"),
        false,
    );
    check(
        "changing_data_source_triggers",
        res(true, "d", "changing"),
        true,
    );
    check(
        "managed_and_data_are_different_objects",
        res(true, "t", "changing"),
        false,
    );
    check(
        "a_variable_never_triggers",
        Subject::Var("changing".into()),
        false,
    );
}
