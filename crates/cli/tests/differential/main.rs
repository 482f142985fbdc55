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
    lifecycle::tainted_cbd_replacement,
    expand::module_for_each,
    expand::module_count,
    blocks::blocks_single_nested,
    blocks::blocks_list_nested,
    blocks::blocks_set_nested,
    blocks::blocks_map_nested,
    blocks::blocks_set_of_objects,
    blocks::blocks_dynamic_blocks,
    blocks::blocks_dynamic_attribute,
    blocks::blocks_json_string,
    blocks::blocks_write_only,
    blocks::blocks_drift_refresh_only,
    blocks::blocks_drift_deleted,
    blocks::provider_nested_blocks,
    blocks::provider_dynamic_blocks,
    blocks::provider_alias,
    blocks::provider_passed_to_module,
    blocks::provider_in_child_module,
    blocks::provider_required_block_missing,
    blocks::provider_block_rejected,
    blocks::provider_assume_role_missing_argument,
    errors::error_dependency_cycle,
    errors::error_cycle_through_locals,
    errors::error_undeclared_resource,
    errors::error_unsupported_attribute,
    errors::error_undeclared_variable,
    errors::error_bad_reference_keeps_state,
    errors::error_unknown_count,
    errors::error_unknown_for_each,
    errors::error_variable_validation,
    errors::error_variable_type,
    errors::error_precondition_at_plan,
    errors::error_postcondition_at_apply,
    errors::error_output_precondition,
    removed_check::removed_destroy_false,
    removed_check::removed_destroy_true,
    removed_check::removed_counted_resource,
    removed_check::removed_still_configured,
    removed_check::check_passing,
    removed_check::check_failing,
    tfvars::tfvars_terraform_tfvars,
    tfvars::tfvars_auto_in_name_order,
    tfvars::tfvars_json_files,
    tfvars::tfvars_var_file_flag,
    tfvars::tfvars_precedence,
    tfvars::tfvars_env_only,
    tfvars::tfvars_undeclared,
    upgrade::schema_upgrade_noop,
    upgrade::schema_upgrade_then_update,
    upgrade::schema_upgrade_by_refresh,
    deposed::deposed_destroy_fails,
    deposed::deposed_destroy_fails_twice,
    deposed::deposed_then_destroy_command,
    deposed::deposed_then_replaced_again,
    workspaces::workspace_env_separate_state,
    workspaces::workspace_env_destroy_leaves_default,
    workspaces::workspace_name_selects_count,
    legacy::legacy_replace_and_destroy,
}

/// A scenario in which terrane still differs from Terraform, run in full:
/// the test fails once the tools agree, so that a fixed gap moves to the
/// run list above instead of staying excused.
fn check_gap(name: &str, why: &str, steps: Vec<harness::Step>) {
    let Some(peers) = harness::peers() else {
        return;
    };
    let problems = harness::run(peers, name, steps);
    assert!(
        !problems.is_empty(),
        "{name} now agrees with Terraform (the gap was: {why}): move it to the run list"
    );
}

macro_rules! known_gaps {
    ($($module:ident :: $name:ident => $why:literal),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                check_gap(stringify!($name), $why, scenarios::$module::$name());
            }
        )*
    };
}

known_gaps! {
    removed_check::check_scoped_data_source =>
        "a check block's data source is no graph node in terrane: Terraform plans it as a read \
         during apply (config reloaded to verify the check) and keeps it in the state",
    removed_check::check_scoped_data_deferred =>
        "a check block's data source is no graph node in terrane (as check_scoped_data_source)",
    errors::error_unknown_count_then_targeted =>
        "terrane expands every resource before applying -target, so a count unknown outside \
         the targets fails the plan; Terraform prunes the graph to the targets first",
    tfvars::tfvars_bad_value_type =>
        "Terraform 1.15 prints the output changes of a plan that failed on a variable's value \
         before the error; terrane prints no plan when planning fails",
    legacy::legacy_create_then_noop =>
        "legacy-SDK fixture over protocol 5: after_unknown of known blocks (terrane {}, \
         Terraform omits the key) and the state after the perpetual update a null list block \
         causes (Terraform keeps the refreshed rule = [], terrane stores the provider's null)",
    legacy::legacy_blocks_added_and_removed =>
        "legacy-SDK fixture over protocol 5 (as legacy_create_then_noop)",
    legacy::legacy_import => "legacy-SDK fixture over protocol 5 (as legacy_create_then_noop)",
}
