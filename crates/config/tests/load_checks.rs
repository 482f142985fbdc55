//! Terraform's load-time checks, one named case per check: each case is a
//! module file in `tests/load_cases/NAME.tf` and the diagnostics real
//! Terraform (v1.15, `terraform validate -json`) gives for it, as
//! `severity start-end summary | detail`; terrane must give exactly these.
//! (`crates/cli/tests/validate_differential.rs` runs both tools on the
//! same files.)

use terrane_config::{
    check_test_files, load_files, parse_str, Config, Diagnostic, ProvisionerOnFailure,
    ProvisionerWhen, Severity,
};

/// One line per diagnostic, in the form the table uses.
fn line(d: &Diagnostic) -> String {
    let sev = if d.severity == Severity::Error {
        "e"
    } else {
        "w"
    };
    let at = d
        .range
        .as_ref()
        .map(|r| {
            format!(
                "{}:{}-{}:{}",
                r.start.line, r.start.col, r.end.line, r.end.col
            )
        })
        .unwrap_or_else(|| "None:None-None:None".into());
    format!("{sev} {at} {} | {}", d.summary, d.detail)
}

/// The case file: `NAME.tf`, or `NAME.tf.json` for JSON syntax.
fn case_file(case: &str) -> (String, &'static str) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/load_cases");
    let native = format!("{dir}/{case}.tf");
    if std::path::Path::new(&native).exists() {
        (native, "main.tf")
    } else {
        (format!("{native}.json"), "main.tf.json")
    }
}

/// A directory case (`tests/load_cases/NAME/`, several files, override
/// files among them): loaded as one module, with its test files
/// (`*.tftest.hcl`, also under `tests/`), each line naming its file.
fn load_dir(dir: &std::path::Path) -> Vec<String> {
    let mut files = Vec::new();
    for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let p = e.expect("directory entry").path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if p.is_dir() || name.ends_with(".tftest.hcl") {
            continue;
        }
        files.push((name, std::fs::read_to_string(&p).expect("case file")));
    }
    let (module, mut diags) = load_files(files);
    let config = Config {
        module,
        dir: dir.to_path_buf(),
        children: Default::default(),
    };
    diags.extend(check_test_files(dir, "tests", Some(&config)));
    diags
        .iter()
        .map(|d| {
            let file = d
                .range
                .as_ref()
                .map(|r| r.file.to_string())
                .unwrap_or_default();
            format!("{file} {}", line(d))
        })
        .collect()
}

#[track_caller]
fn check(case: &str, want: &[&str]) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/load_cases")
        .join(case);
    let mut got: Vec<String> = if dir.is_dir() {
        load_dir(&dir)
    } else {
        let (path, name) = case_file(case);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let (_, diags) = parse_str(name, &text);
        diags.iter().map(line).collect()
    };
    let mut want: Vec<String> = want.iter().map(|s| s.to_string()).collect();
    got.sort();
    want.sort();
    assert_eq!(got, want, "case {case}");
}

macro_rules! cases {
    ($($name:ident => [$($want:expr),* $(,)?]),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                check(stringify!($name), &[$($want),*]);
            }
        )*
        /// Every case file has a case in this table.
        const NAMES: &[&str] = &[$(stringify!($name)),*];
    };
}

cases! {
    // Issue 14: Terraform's language edition and registry-address checks.
    item14_language_edition_valid => [],
    item14_language_edition_quoted => [
        "e 2:14-2:22 Invalid language edition | The language argument expects a bare language edition keyword. Terraform 1.15.5 supports only language edition TF2021, which is the default.",
    ],
    item14_language_edition_unsupported => [
        "e 2:14-2:20 Unsupported language edition | Terraform v1.15.5 only supports language edition TF2021. This module requires a newer version of Terraform CLI.",
    ],
    item14_module_local_source_with_version => [
        "e 2:13-2:22 Invalid registry module source address | Failed to parse module registry address: can't use local directory \"../boop\" as a module registry address.\n\nTerraform assumed that you intended a module registry source address because you also set the argument \"version\", which applies only to registry modules.",
    ],
    item14_module_version_needs_registry_source => [
        "e 2:13-2:22 Invalid registry module source address | Failed to parse module registry address: a module registry source address must have either three or four slash-separated components.\n\nTerraform assumed that you intended a module registry source address because you also set the argument \"version\", which applies only to registry modules.",
        "e 7:13-7:43 Invalid registry module source address | Failed to parse module registry address: a module registry source address must have either three or four slash-separated components.\n\nTerraform assumed that you intended a module registry source address because you also set the argument \"version\", which applies only to registry modules.",
        "e 12:13-12:26 Invalid registry module source address | Failed to parse module registry address: module registry addresses may not include a query string portion.\n\nTerraform assumed that you intended a module registry source address because you also set the argument \"version\", which applies only to registry modules.",
    ],
    item1_provider_meta_invalid_name => [
        "e 2:3-2:31 Invalid provider local name | chunky_bacon is an invalid provider local name: must contain only letters, digits, and dashes, and may not use leading or trailing dashes",
        "e 5:3-5:23 Invalid provider local name | Provider names must be normalized. Replace \"TEST\" with \"test\" to fix this error.",
    ],
    item1_experiments_refused => [
        "e 2:3-2:14 Module uses experimental features | Experimental features are intended only for gathering early feedback on new language designs, and so are available only in alpha releases of Terraform.",
    ],
    item1_duplicate_escaping_block => [
        "e 5:5-5:6 Duplicate escaping block | The special block type \"_\" can be used to force particular arguments to be interpreted as provisioner-typpe-specific rather than as meta-arguments, but each provisioner block can have only one such block. The first escaping block was at main.tf:4,5-6.",
    ],
    // Loads clean: the error is `validate`'s, when it evaluates the local
    // ("Error in function call", validate_differential compares it).
    item1_jsondecode_eof => [],
    item1_syntax_missing_equals => [
        "e 2:3-2:4 Argument or block definition required | An argument or block definition is required here. To set an argument, use the equals sign \"=\" to introduce the argument value.",
    ],
    item1_syntax_item_not_a_name => [
        "e 2:3-2:4 Argument or block definition required | An argument or block definition is required here.",
    ],
    item1_syntax_unterminated_string => [
        "e 2:11-3:1 Invalid multi-line string | Quoted strings may not be split over multiple lines. To produce a multi-line string, either use the \\n escape to represent a newline character or use the \"heredoc\" multi-line template syntax.",
        "e 3:2-4:1 Invalid multi-line string | Quoted strings may not be split over multiple lines. To produce a multi-line string, either use the \\n escape to represent a newline character or use the \"heredoc\" multi-line template syntax.",
        "e 2:11-3:1 Unterminated template string | No closing marker was found for the string.",
    ],
    item1_syntax_multiline_string => [
        "e 2:11-3:1 Invalid multi-line string | Quoted strings may not be split over multiple lines. To produce a multi-line string, either use the \\n escape to represent a newline character or use the \"heredoc\" multi-line template syntax.",
        "e 2:11-3:1 Unterminated template string | No closing marker was found for the string.",
    ],
    item1_syntax_unterminated_string_at_eof => [
        "e 2:11-2:12 Unterminated template string | No closing marker was found for the string.",
    ],
    item1_syntax_stray_closing_bracket => [
        "e 2:8-2:9 Missing newline after argument | An argument definition must end with a newline.",
    ],
    item1_multiple_backends => [
        "e 3:3-3:18 Duplicate 'backend' configuration block | A module may have only one 'backend' configuration block. The backend was previously configured at main.tf:2,3-18.",
    ],
    item1_multiple_cloud => [
        "e 8:3-8:8 Duplicate HCP Terraform configurations | A module may have only one 'cloud' block configuring HCP Terraform or Terraform Enterprise. The 'cloud' block was previously configured at main.tf:2,3-8.",
    ],
    item1_cloud_and_backend => [
        "e 5:3-5:18 Conflicting 'cloud' and 'backend' configuration blocks are present | A module may declare either one 'cloud' block OR one 'backend' block for configuring state storage. The 'cloud' block is configured at main.tf:2,3-8; a 'backend' is configured at main.tf:5,3-18. Remove the 'backend' block to configure HCP Terraform or Terraform Enterprise.",
    ],
    item1_state_store_needs_experiment => [
        "e 2:3-2:14 Unsupported block type | Blocks of type \"state_store\" are not expected here.",
    ],
    item1_dir_backends_in_two_files => [
        "b.tf e 2:3-2:18 Duplicate 'backend' configuration block | A module may have only one 'backend' configuration block. The backend was previously configured at a.tf:2,3-18.",
    ],
    item1_dir_override_cloud_duplicates => [
        "override.tf e 8:3-8:8 Duplicate HCP Terraform configurations | A module may have only one 'cloud' block configuring HCP Terraform or Terraform Enterprise. The 'cloud' block was previously configured at override.tf:2,3-8.",
    ],
    item1_dir_override_state_store => [
        "main.tf e 2:3-2:14 Unsupported block type | Blocks of type \"state_store\" are not expected here.",
        "override.tf e 2:3-2:14 Unsupported block type | Blocks of type \"state_store\" are not expected here.",
    ],
    json_item5_item6_resource_checks => [
        "e 6:29-6:43 Invalid ignore_changes wildcard | The [\"*\"] form of ignore_changes wildcard is was deprecated and is now invalid. Use \"ignore_changes = all\" to ignore changes to all attributes.",
        "e 6:30-6:33 Invalid ignore_changes ruleset | Cannot mix wildcard string \"*\" with non-wildcard references.",
        "e 9:56-9:85 Invalid reference from destroy provisioner | Destroy-time provisioners and their connection configurations may only reference attributes of the related resource, via 'self', 'count.index', or 'each.key'.\n\nReferences to other resources during the destroy phase can cause dependency cycles and interact poorly with create_before_destroy.",
        "e 15:36-15:42 Unsuitable value type | Unsuitable value: a bool is required",
        "e 18:34-18:41 Invalid \"when\" keyword | The \"when\" argument requires one of the following keywords: create or destroy.",
    ],
    json_item6_provider_and_variable_checks => [
        "e 2:24-2:25 Invalid provider local name | Provider names must be normalized. Replace \"TEST\" with \"test\" to fix this error.",
        "e 2:36-2:43 Reserved argument name in provider block | The provider argument name \"count\" is reserved for use by Terraform in a future version.",
        "e 3:56-3:80 Invalid provider type | Provider source \"a/terraform-provider-x\" has a type with the prefix \"terraform-provider-\", which isn't valid. Although that prefix is often used in the names of version control repositories for Terraform providers, provider source strings should not include it.\n\nDid you mean \"a/x\"?",
        "e 4:51-4:56 Invalid default value for variable | This default value is not compatible with the variable's type constraint: a number is required.",
    ],
    json_valid_provisioners => [
    ],
    item5_destroy_connection_reference => [
        "e 10:14-10:24 Invalid reference from destroy provisioner | Destroy-time provisioners and their connection configurations may only reference attributes of the related resource, via 'self', 'count.index', or 'each.key'.\n\nReferences to other resources during the destroy phase can cause dependency cycles and interact poorly with create_before_destroy.",
    ],
    item5_destroy_provisioner_each_value => [
        "e 5:15-5:25 Invalid reference from destroy provisioner | Destroy-time provisioners and their connection configurations may only reference attributes of the related resource, via 'self', 'count.index', or 'each.key'.\n\nReferences to other resources during the destroy phase can cause dependency cycles and interact poorly with create_before_destroy.",
    ],
    item5_destroy_provisioner_reference => [
        "e 5:15-5:82 Invalid reference from destroy provisioner | Destroy-time provisioners and their connection configurations may only reference attributes of the related resource, via 'self', 'count.index', or 'each.key'.\n\nReferences to other resources during the destroy phase can cause dependency cycles and interact poorly with create_before_destroy.",
    ],
    item5_destroy_resource_connection_reference => [
        "e 8:12-8:22 Invalid reference from destroy provisioner | Destroy-time provisioners and their connection configurations may only reference attributes of the related resource, via 'self', 'count.index', or 'each.key'.\n\nReferences to other resources during the destroy phase can cause dependency cycles and interact poorly with create_before_destroy.",
    ],
    item5_duplicate_provisioner_connection => [
        "e 7:5-7:15 Duplicate connection block | This provisioner already has a connection block at main.tf:4,5-15.",
    ],
    item5_duplicate_resource_connection => [
        "e 5:3-5:13 Duplicate connection block | This resource already has a connection block at main.tf:2,3-13.",
    ],
    item5_invalid_on_failure => [
        "e 3:18-3:24 Invalid \"on_failure\" keyword | The \"on_failure\" argument requires one of the following keywords: continue or fail.",
    ],
    item5_invalid_when => [
        "e 3:15-3:20 Invalid \"when\" keyword | The \"when\" argument requires one of the following keywords: create or destroy.",
    ],
    item5_lifecycle_in_provisioner => [
        "e 4:5-4:14 Reserved block type name in provisioner block | The block type name \"lifecycle\" is reserved for use by Terraform in a future version.",
    ],
    item5_missing_provisioner_type => [
        "e 2:15-2:16 Missing type for provisioner | All provisioner blocks must have 1 labels (type).",
    ],
    item5_quoted_keywords => [
        "w 3:18-3:27 Quoted keywords are deprecated | In this context, keywords are expected literally rather than in quotes. Terraform 0.11 and earlier required quotes, but quoted keywords are now deprecated and will be removed in a future version of Terraform. Remove the quotes surrounding this keyword to silence this warning.",
        "w 4:18-4:28 Quoted keywords are deprecated | In this context, keywords are expected literally rather than in quotes. Terraform 0.11 and earlier required quotes, but quoted keywords are now deprecated and will be removed in a future version of Terraform. Remove the quotes surrounding this keyword to silence this warning.",
    ],
    item5_removed_block_provisioners => [
        "e 6:3-6:27 Invalid provisioner block | Only destroy-time provisioners are valid in \"removed\" blocks. To declare a destroy-time provisioner, use:\n    when = destroy",
        "e 11:15-11:32 Invalid reference from destroy provisioner | Destroy-time provisioners and their connection configurations may only reference attributes of the related resource, via 'self', 'count.index', or 'each.key'.\n\nReferences to other resources during the destroy phase can cause dependency cycles and interact poorly with create_before_destroy.",
        "e 13:15-13:21 The \"chef\" provisioner has been removed | The \"chef\" provisioner was deprecated in Terraform 0.13.4 has been removed from Terraform. Visit https://learn.hashicorp.com/collections/terraform/provision for alternatives to using provisioners that are a better fit for the Terraform workflow.",
        "e 19:3-19:13 Duplicate connection block | This \"removed\" block already has a connection block at main.tf:16,3-13.",
    ],
    item5_removed_provisioner_type => [
        "e 2:15-2:32 The \"salt-masterless\" provisioner has been removed | The \"salt-masterless\" provisioner was deprecated in Terraform 0.13.4 has been removed from Terraform. Visit https://learn.hashicorp.com/collections/terraform/provision for alternatives to using provisioners that are a better fit for the Terraform workflow.",
    ],
    item6_create_before_destroy_function => [
        "e 3:29-3:43 Function calls not allowed | Functions may not be called here.",
        "e 3:29-3:36 Unsuitable value type | Unsuitable value: value must be known",
    ],
    item6_create_before_destroy_string => [
        "e 3:30-3:44 Unsuitable value type | Unsuitable value: a bool is required",
    ],
    item6_data_lifecycle_argument => [
        "e 4:5-4:26 Invalid data resource lifecycle argument | The lifecycle argument \"create_before_destroy\" is defined only for managed resources (\"resource\" blocks), and is not valid for data resources.",
    ],
    item6_data_postcondition_self_reference => [
        "e 5:23-5:68 Invalid reference in postcondition | Configuration for data.terraform_remote_state.a may not refer to itself.",
    ],
    item6_data_reserved_locals => [
        "e 3:3-3:9 Reserved block type name in data block | The block type name \"locals\" is reserved for use by Terraform in a future version.",
    ],
    item6_default_list_element => [
        "e 3:13-3:22 Invalid default value for variable | This default value is not compatible with the variable's type constraint: element 1: string required, but have object.",
    ],
    item1_default_tuple_length => [
        "e 3:13-3:19 Invalid default value for variable | This default value is not compatible with the variable's type constraint: tuple required.",
    ],
    item6_default_map_element => [
        "e 3:13-3:34 Invalid default value for variable | This default value is not compatible with the variable's type constraint: element \"b\": number required, but have bool.",
    ],
    item6_default_missing_attribute => [
        "e 3:13-3:27 Invalid default value for variable | This default value is not compatible with the variable's type constraint: attribute \"size\" is required.",
    ],
    item6_default_nested_object => [
        "e 6:13-9:4 Invalid default value for variable | This default value is not compatible with the variable's type constraint: .size.cpu: a number is required.",
    ],
    item6_default_null_not_nullable => [
        "e 4:14-4:18 Invalid default value for variable | A null default value is not valid when nullable=false.",
    ],
    item6_default_variable_reference => [
        "e 6:13-6:16 Variables not allowed | Variables may not be used here.",
    ],
    item6_default_wrong_primitive => [
        "e 3:13-3:21 Invalid default value for variable | This default value is not compatible with the variable's type constraint: a number is required.",
    ],
    item6_duplicate_resource_still_checked => [
        "e 4:30-4:32 Unsuitable value type | Unsuitable value: a bool is required",
        "e 2:1-2:30 Duplicate resource \"terraform_data\" configuration | A terraform_data resource named \"a\" was already declared at main.tf:1,1-30. Resource names must be unique per type in each module.",
        "e 10:1-10:34 Duplicate data \"terraform_remote_state\" configuration | A terraform_remote_state data resource named \"d\" was already declared at main.tf:7,1-34. Resource names must be unique per type in each module.",
    ],
    item6_duplicate_required_providers => [
        "e 5:3-5:21 Duplicate required providers configuration | A module may have only one required providers configuration. The required providers were previously configured at main.tf:2,3-21.",
    ],
    item6_ignore_changes_quoted_all => [
        "e 3:23-3:26 Invalid expression | A static list expression is required.",
    ],
    item6_ignore_changes_quoted_reference => [
        "w 4:23-4:30 Quoted references are deprecated | In this context, references are expected literally rather than in quotes. Terraform 0.11 and earlier required quotes, but quoted references are now deprecated and will be removed in a future version of Terraform. Remove the quotes surrounding this reference to silence this warning.",
    ],
    item6_ignore_changes_star => [
        "e 3:22-3:27 Invalid ignore_changes wildcard | The [\"*\"] form of ignore_changes wildcard is was deprecated and is now invalid. Use \"ignore_changes = all\" to ignore changes to all attributes.",
    ],
    item6_ignore_changes_star_mixed => [
        "e 3:22-3:34 Invalid ignore_changes wildcard | The [\"*\"] form of ignore_changes wildcard is was deprecated and is now invalid. Use \"ignore_changes = all\" to ignore changes to all attributes.",
        "e 3:23-3:26 Invalid ignore_changes ruleset | Cannot mix wildcard string \"*\" with non-wildcard references.",
    ],
    item6_postcondition_self_reference => [
        "e 7:23-7:64 Invalid reference in postcondition | Configuration for terraform_data.a may not refer to itself.",
    ],
    item6_precondition_self_reference => [
        "e 5:23-5:51 Invalid reference in precondition | Configuration for terraform_data.a may not refer to itself.",
    ],
    item6_prevent_destroy_variable => [
        "e 8:23-8:26 Variables not allowed | Variables may not be used here.",
        "e 8:23-8:34 Unsuitable value type | Unsuitable value: value must be known",
    ],
    item6_provider_meta_interpolation => [
        "e 7:24-7:27 Variables not allowed | Variables may not be used here.",
        "e 8:19-8:29 Function calls not allowed | Functions may not be called here.",
    ],
    item6_module_providers_local_names => [
        "e 4:5-4:8 Invalid provider local name | Provider names must be normalized. Replace \"AWS\" with \"aws\" to fix this error.",
        "e 5:13-5:19 Invalid provider local name | Provider names must be normalized. Replace \"Google\" with \"google\" to fix this error.",
    ],
    item6_provider_alias_invalid => [
        "e None:None-None:None Invalid provider configuration alias | An alias must be a valid name. A name must start with a letter or underscore and may contain only letters, digits, underscores, and dashes.",
    ],
    item6_required_providers_local_names => [
        "e 3:16-3:44 Invalid provider local name | Provider names must be normalized. Replace \"AWS\" with \"aws\" to fix this error.",
        "e 4:16-4:46 Invalid provider local name | my_thing is an invalid provider local name: must contain only letters, digits, and dashes, and may not use leading or trailing dashes",
    ],
    item6_provider_name_invalid => [
        "e 1:1-1:20 Invalid provider local name | my_cloud is an invalid provider local name: must contain only letters, digits, and dashes, and may not use leading or trailing dashes",
    ],
    item6_provider_name_not_normalized => [
        "e 1:1-1:16 Invalid provider local name | Provider names must be normalized. Replace \"TEST\" with \"test\" to fix this error.",
    ],
    item6_provider_ref_double_dash => [
        "e 2:14-2:23 Invalid provider local name | my--cloud is an invalid provider local name: cannot use multiple consecutive dashes",
    ],
    item6_provider_ref_not_normalized => [
        "e 2:14-2:23 Invalid provider local name | Provider names must be normalized. Replace \"Terraform\" with \"terraform\" to fix this error.",
    ],
    item6_provider_reserved_arguments => [
        "w 7:16-7:24 Version constraints inside provider configuration blocks are deprecated | Terraform 0.13 and earlier allowed provider version constraints inside the provider configuration block, but that is now deprecated and will be removed in a future version of Terraform. To silence this warning, move the provider version constraint into the required_providers block.",
        "e 3:3-3:8 Reserved argument name in provider block | The provider argument name \"count\" is reserved for use by Terraform in a future version.",
        "e 4:3-4:13 Reserved argument name in provider block | The provider argument name \"depends_on\" is reserved for use by Terraform in a future version.",
        "e 6:3-6:9 Reserved argument name in provider block | The provider argument name \"source\" is reserved for use by Terraform in a future version.",
    ],
    item6_provider_reserved_blocks => [
        "e 2:3-2:12 Reserved block type name in provider block | The block type name \"lifecycle\" is reserved for use by Terraform in a future version.",
        "e 5:3-5:9 Reserved block type name in provider block | The block type name \"locals\" is reserved for use by Terraform in a future version.",
    ],
    item6_provider_source_prefix => [
        "e 4:16-4:50 Invalid provider type | Provider source \"hashicorp/terraform-provider-aws\" has a type with the prefix \"terraform-provider-\", which isn't valid. Although that prefix is often used in the names of version control repositories for Terraform providers, provider source strings should not include it.\n\nDid you mean \"hashicorp/aws\"?",
    ],
    item6_provider_source_terraform_prefix => [
        "e 4:16-4:39 Invalid provider type | Provider source \"registry.terraform.io/example/terraform-foo\" has a type with the prefix \"terraform-\", which isn't allowed because it would be redundant to name a Terraform provider with that prefix. If you are the author of this provider, rename it to not include the prefix.",
    ],
    item6_quoted_provider_reference => [
        "w 2:14-2:25 Quoted references are deprecated | In this context, references are expected literally rather than in quotes. Terraform 0.11 and earlier required quotes, but quoted references are now deprecated and will be removed in a future version of Terraform. Remove the quotes surrounding this reference to silence this warning.",
    ],
    item6_required_providers_top_level => [
        "e 1:1-1:19 Invalid required_providers block | A \"required_providers\" block must be nested inside a \"terraform\" block.",
    ],
    item6_resource_reserved_locals => [
        "e 2:3-2:9 Reserved block type name in resource block | The block type name \"locals\" is reserved for use by Terraform in a future version.",
    ],
    valid_unset_variables => [],
    valid_provisioners => [
    ],
    item6_validation_condition_without_references => [
        "e 3:21-3:25 Invalid validation expression | The condition expression must refer to at least one object from elsewhere in the configuration, or else its result would not be checking anything.",
        "e 3:21-3:25 Invalid variable validation condition | The condition for variable \"port\" must refer to var.port in order to test incoming values.",
    ],
    item4_syntax_attribute_separator => [
        "e 2:15-2:16 Missing attribute separator | Expected a newline or comma to mark the beginning of the next attribute.",
    ],
    item4_syntax_conditional_without_false => [
        "e 2:15-3:1 Missing false expression in conditional | The conditional operator (...?...:...) requires a false expression, delimited by a colon.",
    ],
    item4_syntax_for_without_colon => [
        "e 2:21-2:22 Invalid 'for' expression | For expression requires a colon after the collection expression.",
    ],
    item4_syntax_invalid_expression => [
        "e 2:10-3:1 Invalid expression | Expected the start of an expression, but found an invalid expression token.",
    ],
    item4_syntax_missing_item_separator => [
        "e 3:1-3:2 Missing item separator | Expected a comma to mark the beginning of the next item.",
    ],
    item4_syntax_missing_newline => [
        "e 2:11-2:12 Missing newline after argument | An argument definition must end with a newline.",
    ],
    // Test files are loaded with the module, as Terraform's validate and
    // loader load them (the two `tests-*` invalid-modules cases of
    // Terraform's loader suite, the file and run schemas, `tests/`).
    item1_tests_duplicate_run_blocks => [
        "main.tftest.hcl e 4:5-4:11 Duplicate \"run\" block names | This test file already has a run named same block defined at main.tftest.hcl:2,1-11.",
    ],
    item1_tests_invalid_run_block_name => [
        "main.tftest.hcl e 2:5-2:22 Invalid run block name | A name must start with a letter or underscore and may contain only letters, digits, underscores, and dashes.",
    ],
    item1_tests_file_schema => [
        "a.tftest.hcl e 22:5-22:6 Missing name for run | All run blocks must have 1 labels (name).",
        "a.tftest.hcl e 10:1-10:4 Unsupported argument | An argument named \"foo\" is not expected here.",
        "a.tftest.hcl e 11:1-11:6 Unsupported block type | Blocks of type \"bogus\" are not expected here.",
        "a.tftest.hcl e 7:1-7:10 Multiple \"variables\" blocks | This test file already has a variables block defined at a.tftest.hcl:4,1-10.",
        "a.tftest.hcl e 17:3-17:6 Unsupported argument | An argument named \"zzz\" is not expected here.",
        "a.tftest.hcl e 18:3-18:7 Unsupported block type | Blocks of type \"nope\" are not expected here.",
        "a.tftest.hcl e 13:13-13:19 Invalid \"command\" keyword | The \"command\" argument requires one of the following keywords without quotes: apply or plan.",
        "a.tftest.hcl e 16:3-16:15 Invalid attribute | The skip_cleanup attribute is only available in experimental builds of Terraform.",
        "a.tftest.hcl e 20:5-20:9 Duplicate \"run\" block names | This test file already has a run named ok block defined at a.tftest.hcl:12,1-9.",
        "a.tftest.hcl e 21:5-21:11 Invalid run block name | A name must start with a letter or underscore and may contain only letters, digits, underscores, and dashes.",
        "tests/b.tftest.hcl e 2:5-2:8 Duplicate \"run\" block names | This test file already has a run named t block defined at tests/b.tftest.hcl:1,1-8.",
    ],
    item1_tests_run_backend => [
        "a.tftest.hcl e 2:3-2:18 Invalid block | The backend block is only available within run blocks in experimental builds of Terraform.",
    ],
    item1_tests_valid => [
        "main.tftest.hcl w 25:3-25:41 Invalid override target | The override target data.terraform_remote_state.s does not exist within the configuration under test. This could indicate a typo in the target address or an unnecessary override.",
        "main.tftest.hcl w 30:3-30:21 Invalid override target | The override target module.m does not exist within the configuration under test. This could indicate a typo in the target address or an unnecessary override.",
        "main.tftest.hcl w 58:5-58:23 Invalid override target | The override target module.m does not exist within the configuration under test. This could indicate a typo in the target address or an unnecessary override.",
    ],
    // An output's `type` (Terraform 1.15) is parsed as a variable's is.
    item2_output_type_invalid => [
        "e 2:11-2:24 Invalid type specification | Keyword \"lisst\" is not a valid type constructor.",
        "e 7:11-7:19 Invalid type specification | A type specification is either a primitive type keyword (bool, number, string) or a complex type constructor call, like list(string).",
    ],
    // Loads clean: the value that does not conform is validate's error
    // ("Invalid output value", validate_differential compares it).
    item2_output_type_mismatch => [],
    item6_variable_sensitive_not_bool => [
        "e 2:16-2:19 Unsuitable value type | Unsuitable value: a bool is required",
    ],
}

#[test]
fn every_case_file_is_in_the_table() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/load_cases");
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let e = e.ok()?;
            let name = e.file_name().into_string().ok()?;
            if e.path().is_dir() {
                return Some(name);
            }
            let stem = name.strip_suffix(".json").unwrap_or(&name);
            stem.strip_suffix(".tf").map(String::from)
        })
        .collect();
    files.sort();
    let mut names: Vec<&str> = NAMES.to_vec();
    names.sort();
    assert_eq!(files, names);
}

#[test]
fn item5_provisioners_are_decoded() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/load_cases/valid_provisioners.tf"
    );
    let (m, diags) = parse_str("main.tf", &std::fs::read_to_string(path).unwrap());
    assert!(diags.is_empty(), "{diags:?}");
    let r = &m.resources[0];
    assert!(
        r.body.is_empty(),
        "provisioners and connections are not resource arguments"
    );
    assert_eq!(
        r.connection
            .as_ref()
            .map(|c| c.attributes.keys().cloned().collect::<Vec<_>>()),
        Some(vec!["host".to_string(), "type".to_string()])
    );
    let got: Vec<_> = r
        .provisioners
        .iter()
        .map(|p| (p.ty.as_str(), p.when, p.on_failure, p.connection.is_some()))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "local-exec",
                ProvisionerWhen::Create,
                ProvisionerOnFailure::Fail,
                false
            ),
            (
                "local-exec",
                ProvisionerWhen::Destroy,
                ProvisionerOnFailure::Continue,
                true
            ),
            (
                "file",
                ProvisionerWhen::Create,
                ProvisionerOnFailure::Fail,
                false
            ),
        ]
    );
    assert_eq!(
        r.provisioners[1].range.as_ref().map(|r| r.start.line),
        Some(14)
    );
    assert!(r.provisioners[1].attributes["command"]
        .refs
        .iter()
        .all(|x| x.subject != terrane_config::Subject::Var("x".into())),);
}

/// Item 3 (issue 14): Terraform 1.14's `action` blocks and
/// `lifecycle { action_trigger {} }` are refused by name at load, with a
/// diagnostic saying terrane does not run them yet: never ignored, never
/// the generic "Unsupported block type". (Terraform itself loads them and
/// needs the provider's action schema; not compared, as terrane differs.)
#[test]
fn item3_actions_refused_by_name() {
    let text = "action \"terraform_nope\" \"a\" {\n  config {\n    x = 1\n  }\n}\n\nresource \"terraform_data\" \"d\" {\n  input = 1\n  lifecycle {\n    action_trigger {\n      events  = [before_create]\n      actions = [action.terraform_nope.a]\n    }\n  }\n}\n";
    let (_, diags) = parse_str("main.tf", text);
    let mut got: Vec<String> = diags.iter().map(line).collect();
    got.sort();
    assert_eq!(
        got,
        [
            "e 10:5-10:19 Action triggers are not supported yet | terrane does not run Terraform's actions (Terraform 1.14) yet, so this resource's action_trigger block cannot be honoured. Remove it, or run this configuration with Terraform.",
            "e 1:1-1:28 Actions are not supported yet | terrane does not run Terraform's actions (Terraform 1.14) yet, so action.terraform_nope.a cannot be loaded. Remove it, or run this configuration with Terraform.",
        ]
    );
}

/// Item 3 (issue 14): the checks Terraform makes of an `action_trigger`
/// block at load come before terrane's refusal, with Terraform's summary,
/// detail and range (from `terraform validate -json` v1.15 on this text):
/// unknown and destroy events, a duplicate event, missing arguments.
#[test]
fn item3_action_trigger_checked_as_terraform() {
    let text = "resource \"terraform_data\" \"d\" {\n  input = 1\n  lifecycle {\n    action_trigger {\n      events  = [before_create, nope, before_destroy, before_create]\n      actions = [action.terraform_nope.a]\n    }\n    action_trigger {\n      condition = true\n    }\n  }\n}\n";
    let (_, diags) = parse_str("main.tf", text);
    let got: Vec<String> = diags
        .iter()
        .map(line)
        .filter(|l| !l.contains("not supported yet"))
        .collect();
    let want = [
        "e 5:33-5:37 Invalid \"event\" value nope | The \"event\" argument supports the following values: before_create, after_create, before_update, after_update.",
        "e 5:39-5:53 Invalid \"event\" value before_destroy | The \"event\" argument supports the following values: before_create, after_create, before_update, after_update.",
        "e 5:55-5:68 Duplicate \"before_create\" event | The event is already defined in this action_trigger block.",
        "e 8:20-8:21 Missing required argument | The argument \"events\" is required, but no definition was found.",
        "e 8:20-8:21 Missing required argument | The argument \"actions\" is required, but no definition was found.",
        "e 8:5-8:19 No actions specified | At least one action must be specified for an action_trigger.",
        "e 8:5-8:19 No events specified | At least one event must be specified for an action_trigger.",
    ];
    let (mut got, mut want) = (got, want.map(String::from).to_vec());
    got.sort();
    want.sort();
    assert_eq!(got, want);
    assert_eq!(
        diags
            .iter()
            .filter(|d| d.summary == "Action triggers are not supported yet")
            .count(),
        2,
        "each action_trigger is still refused by name"
    );
}

/// Item 3 (issue 14): Terraform's load-time checks of an `action` block
/// (labels, arguments, `count` with `for_each`, one `config` block), with
/// its summary, detail and range (`terraform validate -json` v1.15 on this
/// text), before terrane's refusal.
#[test]
fn item3_action_block_checked_as_terraform() {
    let text = "action \"terraform_nope\" \"a\" {\n  count    = 1\n  for_each = {}\n  bogus    = 1\n  config {}\n  config {}\n}\n\naction \"1bad\" \"b c\" {\n}\n";
    let (_, diags) = parse_str("main.tf", text);
    let mut got: Vec<String> = diags
        .iter()
        .map(line)
        .filter(|l| !l.contains("not supported yet"))
        .collect();
    got.sort();
    let mut want: Vec<String> = [
        "e 4:3-4:8 Unsupported argument | An argument named \"bogus\" is not expected here.",
        "e 3:3-3:11 Invalid combination of \"count\" and \"for_each\" | The \"count\" and \"for_each\" meta-arguments are mutually-exclusive, only one should be used.",
        "e 6:3-6:9 Duplicate config block | An action must contain only one nested \"config\" block.",
        "e 9:8-9:14 Invalid action type name | A name must start with a letter or underscore and may contain only letters, digits, underscores, and dashes.",
        "e 9:15-9:20 Invalid action name | A name must start with a letter or underscore and may contain only letters, digits, underscores, and dashes.",
    ]
    .map(String::from)
    .to_vec();
    want.sort();
    assert_eq!(got, want);
}
