//! Differential tests: every scenario runs through real Terraform and
//! terrane with the same provider binaries (our random and local plugins,
//! a provider written with PyPI's `tf` framework, built-in terraform_data),
//! and their saved plans and final states (`show -json`) must agree.
//!
//! Under `CI=true` a missing Terraform fails; locally the tests skip.

mod harness;
mod normalize;
mod scenarios;

fn check(name: &str, steps: Vec<harness::Step>) {
    let Some(peers) = harness::peers() else {
        return;
    };
    let problems = harness::run(peers, name, steps);
    assert!(
        problems.is_empty(),
        "terrane differs from Terraform in {name}:\n{}",
        problems.join("\n")
    );
}

macro_rules! differential {
    ($($module:ident :: $name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                check(stringify!($name), scenarios::$module::$name());
            }
        )*
    };
}

differential! {
    basic::create_all_providers,
    basic::create_random_family,
    basic::second_plan_is_noop,
    basic::update_terraform_data_input,
    basic::update_kv_value,
    basic::replace_local_file_content,
    basic::replace_kv_key,
    basic::replace_create_before_destroy,
    basic::replace_triggers_replace,
    basic::replace_random_keepers,
    basic::replace_dependent_update,
    expand::count_grow,
    expand::count_shrink,
    expand::for_each_grow,
    expand::for_each_shrink,
    expand::for_each_map_values,
    expand::module_single,
    expand::nested_modules,
    lifecycle::data_known_at_plan,
    lifecycle::data_local_file_existing,
    lifecycle::drift_refresh_command,
    lifecycle::drift_ignored_with_refresh_false,
    lifecycle::orphan_deleted,
    lifecycle::tainted_by_failed_create,
    lifecycle::ignore_changes_attribute,
    lifecycle::ignore_changes_all,
    lifecycle::replace_triggered_by,
    lifecycle::prevent_destroy_blocks_replacement,
    lifecycle::moved_rename,
    lifecycle::moved_into_count,
    lifecycle::import_cli,
    lifecycle::import_cli_terraform_data,
    lifecycle::import_block,
    lifecycle::destroy_command,
    lifecycle::destroy_plan_file,
    lifecycle::state_rm_then_plan,
    exprs::unknown_in_template,
    exprs::unknown_in_conditional,
    exprs::unknown_in_for_expression,
    exprs::unknown_update_propagates,
    exprs::unknown_functions,
    exprs::replace_flag,
    exprs::target_flag,
    exprs::apply_auto_approve,
    exprs::variables,
    exprs::outputs_sensitive,
    exprs::outputs_removed_and_added,
    exprs::sensitive_values_in_resources,
    expand::count_to_single_instance,
    lifecycle::data_deferred_by_reference,
    lifecycle::data_deferred_by_depends_on,
    exprs::depends_on_chain,
    lifecycle::drift_file_deleted,
    lifecycle::drift_file_edited,
    lifecycle::drift_refresh_only,
    expand::module_for_each,
    expand::module_count,
}

// Scenarios kept out of the run list while terrane still differs (each is
// a function in scenarios/; add it above once fixed):
// - legacy_create_then_noop, legacy_blocks_added_and_removed,
//   legacy_replace_and_destroy, legacy_import (the legacy-SDK fixture over
//   protocol 5): actions and refreshed values agree since reads are
//   normalized; still different: the plan text of blocks (`timeouts = {}`
//   where Terraform prints `+ timeouts {}`, issue 15 item 5),
//   `after_unknown` of known blocks (terrane `{}`, Terraform omits the
//   key), and the state after applying the perpetual update the fixture's
//   null list block causes (Terraform reports 0 changed and keeps the
//   refreshed `rule = []`; terrane applies and stores the provider's null)
// - tainted_cbd_replacement: Terraform keeps the deposed kv_item after a create_before_destroy replacement through the tf-framework provider; terrane deletes it

/// The scenarios kept out of the run list still build their steps.
#[test]
fn known_gaps_are_well_formed() {
    {
        let steps = scenarios::lifecycle::tainted_cbd_replacement();
        assert!(!steps.is_empty());
    }
    for steps in [
        scenarios::legacy::legacy_create_then_noop(),
        scenarios::legacy::legacy_blocks_added_and_removed(),
        scenarios::legacy::legacy_replace_and_destroy(),
        scenarios::legacy::legacy_import(),
    ] {
        assert!(!steps.is_empty());
    }
}
