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
    let (_, problems): (Vec<String>, Vec<String>) = harness::run(peers, name, steps)
        .into_iter()
        .partition(|p| normalize::known_gap(p));
    assert!(
        problems.is_empty(),
        "terrane differs from Terraform in {name}:\n{}",
        problems.join("\n")
    );
}

/// A scenario terrane is known to fail: it must still differ (beyond the
/// known gaps), naming `why`; once it passes, this fails, and the
/// scenario moves to the run list.
fn expect_difference(name: &str, steps: Vec<harness::Step>, why: &str) {
    let Some(peers) = harness::peers() else {
        return;
    };
    let problems: Vec<String> = harness::run(peers, name, steps)
        .into_iter()
        .filter(|p| !normalize::known_gap(p))
        .collect();
    assert!(
        problems.iter().any(|p| p.contains(why)),
        "{name} no longer differs from Terraform in {why:?}: move it to the run list\n{}",
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
    basic::replace_triggers_replace,
    basic::replace_random_keepers,
    basic::replace_dependent_update,
    expand::count_grow,
    expand::for_each_grow,
    expand::for_each_map_values,
    expand::module_single,
    expand::nested_modules,
    lifecycle::data_known_at_plan,
    lifecycle::import_block,
    lifecycle::data_local_file_existing,
    lifecycle::drift_ignored_with_refresh_false,
    lifecycle::orphan_deleted,
    lifecycle::tainted_by_failed_create,
    lifecycle::ignore_changes_attribute,
    lifecycle::ignore_changes_all,
    lifecycle::replace_triggered_by,
    lifecycle::moved_rename,
    lifecycle::moved_into_count,
    lifecycle::state_rm_then_plan,
    exprs::unknown_in_template,
    exprs::unknown_in_conditional,
    exprs::unknown_in_for_expression,
    exprs::unknown_update_propagates,
    exprs::unknown_functions,
    exprs::replace_flag,
    exprs::apply_auto_approve,
    exprs::variables,
    exprs::outputs_sensitive,
    exprs::outputs_removed_and_added,
    exprs::sensitive_values_in_resources,
    expand::count_to_single_instance,
    lifecycle::data_deferred_by_reference,
    lifecycle::data_deferred_by_depends_on,
    exprs::depends_on_chain,
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
    blocks::blocks_ephemeral_write_only,
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
    errors::error_undeclared_resource,
    errors::error_undeclared_variable,
    errors::error_bad_reference_keeps_state,
    errors::error_unknown_count,
    errors::error_unknown_for_each,
    errors::error_precondition_at_plan,
    errors::error_postcondition_at_apply,
    errors::error_output_precondition,
    removed_check::removed_destroy_false,
    removed_check::removed_destroy_true,
    removed_check::removed_counted_resource,
    removed_check::check_passing,
    removed_check::check_failing,
    tfvars::tfvars_terraform_tfvars,
    tfvars::tfvars_auto_in_name_order,
    tfvars::tfvars_json_files,
    tfvars::tfvars_var_file_flag,
    tfvars::tfvars_env_only,
    upgrade::schema_upgrade_noop,
    upgrade::schema_upgrade_then_update,
    upgrade::schema_upgrade_by_refresh,
    deposed::deposed_destroy_fails,
    workspaces::workspace_env_separate_state,
    workspaces::workspace_env_destroy_leaves_default,
    workspaces::workspace_name_selects_count,
    legacy::legacy_replace_and_destroy,
    expand::count_shrink,
    expand::for_each_shrink,
    lifecycle::destroy_command,
    lifecycle::drift_refresh_command,
    basic::replace_create_before_destroy,
    legacy::legacy_create_then_noop,
    legacy::legacy_blocks_added_and_removed,
    legacy::legacy_import,
    lifecycle::import_cli,
    lifecycle::import_cli_terraform_data,
    point8::point8_replace_reports_one_destroyed,
    point8::point8_drift_note_for_deleted_file,
    point8::point8_deferred_data_sensitive,
}

/// A scenario in which terrane still differs from Terraform, run in full:
/// the test fails once the tools agree, so that a fixed gap moves to the
/// run list above instead of staying excused.
fn check_gap(name: &str, why: &str, steps: Vec<harness::Step>) {
    let Some(peers) = harness::peers() else {
        return;
    };
    let problems: Vec<String> = harness::run(peers, name, steps)
        .into_iter()
        .filter(|p| !normalize::known_gap(p))
        .collect();
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
}

// Scenarios kept out of the run list while terrane still differs (each is
// a function in scenarios/; add it above once fixed):
// - drift_file_deleted, drift_file_edited: see known_gap_drift_note_in_normal_plans

/// Scenarios in which the whole-run comparison found terrane still
/// differing and that are not fixed yet: each must still differ as named
/// (the first text), for the reason given; once fixed its test fails and
/// the scenario moves to the run list.
macro_rules! known_difference {
    ($($module:ident :: $name:ident => ($why:expr, $reason:expr)),* $(,)?) => {
        mod known_difference {
            use super::*;
            $(
                #[test]
                fn $name() {
                    let _reason: &str = $reason;
                    expect_difference(stringify!($name), scenarios::$module::$name(), $why);
                }
            )*
        }
    };
}

known_difference! {
    deposed::deposed_destroy_fails_twice => ("deposed_destroy_fails_twice step 3: apply output", "deposed objects are not refreshed when planning: Terraform prints their Refreshing state lines"),
    deposed::deposed_then_destroy_command => ("deposed_then_destroy_command step 3: destroy output", "deposed objects are not refreshed when planning (as deposed_destroy_fails_twice)"),
    deposed::deposed_then_replaced_again => ("deposed_then_replaced_again step 3: apply output", "a create_before_destroy replacement beside an older deposed object: Terraform counts 1 changed and 1 destroyed and destroys after creating, terrane counts 2 destroyed"),
    errors::error_cycle_through_locals => ("error_cycle_through_locals step 2: diagnostics differ", "a cycle through a local: Terraform names the nodes in its own order with (expand) suffixes"),
    errors::error_unsupported_attribute => ("error_unsupported_attribute step 1: plan text", "Terraform finds reference errors in its validate walk and prints no partial plan; terrane finds them while planning and prints what it planned"),
    errors::error_variable_type => ("error_variable_type step 1: diagnostics differ", "-var=size=big for a number variable: terrane reports Variables not allowed (the value read as an expression), Terraform Invalid value for input variable at the declaration"),
    errors::error_variable_validation => ("error_variable_validation step 1: diagnostics differ", "a failed variable validation is placed at another line of the variable block than Terraform's (main.tf:12, Terraform main.tf:9)"),
    removed_check::removed_still_configured => ("removed_still_configured step 2: diagnostics differ", "Removed resource still exists is placed one line below Terraform's position (main.tf:11, Terraform main.tf:10)"),
    tfvars::tfvars_precedence => ("tfvars_precedence step 1: diagnostics differ", "applying a saved plan with -var: Terraform warns Ignoring variable when applying a saved plan"),
    tfvars::tfvars_undeclared => ("tfvars_undeclared step 2: diagnostics differ", "an undeclared -var beside an undeclared tfvars value: Terraform also warns about the file's value"),
    lifecycle::destroy_plan_file => ("destroy_plan_file step 2: apply output", "applying a saved destroy plan ends Destroy complete!, Terraform says Apply complete! with all three counts"),
    exprs::target_flag => ("target_flag step 1: plan: complete", "targeted plans: no Resource targeting is in effect warnings, complete is true"),
    lifecycle::prevent_destroy_blocks_replacement => ("prevent_destroy_blocks_replacement step 2: plan text", "a plan failed by prevent_destroy shows nothing of what it planned"),
}

/// Drift that a normal plan's changes depend on: Terraform notes it
/// ("Objects have changed outside"), showing the attributes its
/// relevant_attributes name; terrane has no relevant_attributes yet (see
/// normalize::KNOWN_GAPS) and shows the note only in refresh-only plans.
#[test]
fn known_gap_drift_note_in_normal_plans() {
    for (name, steps) in [
        (
            "drift_file_deleted",
            scenarios::lifecycle::drift_file_deleted(),
        ),
        (
            "drift_file_edited",
            scenarios::lifecycle::drift_file_edited(),
        ),
    ] {
        expect_difference(name, steps, "Note: Objects have changed outside of terrane");
    }
}

/// Terraform's plans name the relevant attributes; terrane's do not yet.
/// Fails once they match, so the gap leaves normalize::KNOWN_GAPS.
#[test]
fn known_gap_relevant_attributes() {
    let Some(peers) = harness::peers() else {
        return;
    };
    let problems = harness::run(
        peers,
        "relevant_attributes",
        scenarios::basic::replace_dependent_update(),
    );
    assert!(
        problems.iter().any(|p| normalize::known_gap(p)),
        "relevant_attributes now agree: remove the gap from normalize::KNOWN_GAPS\n{}",
        problems.join("\n")
    );
}

/// Terraform's plan JSON lists the status of every checkable object;
/// terrane's has no `checks` yet. Fails once they match, so the gap leaves
/// normalize::KNOWN_GAPS.
#[test]
fn known_gap_plan_checks() {
    let Some(peers) = harness::peers() else {
        return;
    };
    let problems = harness::run(
        peers,
        "plan_checks",
        scenarios::removed_check::check_passing(),
    );
    assert!(
        problems.iter().any(|p| p.contains(": plan: checks:")),
        "plan checks now agree: remove the gap from normalize::KNOWN_GAPS\n{}",
        problems.join("\n")
    );
}
