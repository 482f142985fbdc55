//! Terraform's load-time checks, one named case per check: each case is a
//! module file in `tests/load_cases/NAME.tf` and the diagnostics real
//! Terraform (v1.15, `terraform validate -json`) gives for it, as
//! `severity start-end summary | detail`; terrane must give exactly these.
//! (`crates/cli/tests/validate_differential.rs` runs both tools on the
//! same files.)

use terrane_config::{parse_str, Diagnostic, ProvisionerOnFailure, ProvisionerWhen, Severity};

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

#[track_caller]
fn check(case: &str, want: &[&str]) {
    let (path, name) = case_file(case);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let (_, diags) = parse_str(name, &text);
    let mut got: Vec<String> = diags.iter().map(line).collect();
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
        "e 5:3-5:11 Reserved argument name in provider block | The provider argument name \"for_each\" is reserved for use by Terraform in a future version.",
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
            let name = e.ok()?.file_name().into_string().ok()?;
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
