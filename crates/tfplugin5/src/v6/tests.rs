use super::*;

fn dv(tag: u8) -> Option<t5::DynamicValue> {
    Some(t5::DynamicValue {
        msgpack: vec![tag],
        json: vec![tag, tag],
    })
}

fn diag() -> Vec<t5::Diagnostic> {
    vec![t5::Diagnostic {
        severity: 2,
        summary: "s".into(),
        detail: "d".into(),
        attribute: Some(t5::AttributePath {
            steps: vec![
                t5::attribute_path::Step {
                    selector: Some(t5::attribute_path::step::Selector::AttributeName(
                        "a".into(),
                    )),
                },
                t5::attribute_path::Step {
                    selector: Some(t5::attribute_path::step::Selector::ElementKeyInt(3)),
                },
            ],
        }),
    }]
}

fn caps() -> Option<t5::ClientCapabilities> {
    Some(t5::ClientCapabilities {
        deferral_allowed: true,
        write_only_attributes_allowed: true,
    })
}

fn identity() -> Option<t5::ResourceIdentityData> {
    Some(t5::ResourceIdentityData {
        identity_data: dv(9),
    })
}

/// A fully populated protocol-5 message survives the trip to protocol 6
/// and back unchanged, and `six` sees the fields under its own names.
#[track_caller]
fn check<A, B>(name: &str, five: A, six: impl Fn(&B))
where
    A: Message + Default + PartialEq + std::fmt::Debug,
    B: Message + Default,
{
    assert_ne!(five, A::default(), "case {name}: populate the message");
    let b: B = transcode(&five).unwrap_or_else(|e| panic!("case {name}: {e}"));
    six(&b);
    let back: A = transcode(&b).unwrap();
    assert_eq!(back, five, "case {name}: lossless both ways");
}

#[test]
fn item1_protocol5_messages_carry_over_to_protocol6_by_field() {
    check(
        "prepare_provider_config_request",
        t5::prepare_provider_config::Request { config: dv(1) },
        |r: &t6::validate_provider_config::Request| {
            assert_eq!(r.config.as_ref().unwrap().msgpack, [1])
        },
    );
    check(
        "prepare_provider_config_response",
        t5::prepare_provider_config::Response {
            prepared_config: None,
            diagnostics: diag(),
        },
        |r: &t6::validate_provider_config::Response| assert_eq!(r.diagnostics[0].summary, "s"),
    );
    check(
        "validate_resource_type_config",
        t5::validate_resource_type_config::Request {
            type_name: "t".into(),
            config: dv(2),
            client_capabilities: caps(),
        },
        |r: &t6::validate_resource_config::Request| {
            assert_eq!(r.type_name, "t");
            assert!(r.client_capabilities.unwrap().write_only_attributes_allowed);
        },
    );
    check(
        "validate_data_source_config",
        t5::validate_data_source_config::Request {
            type_name: "d".into(),
            config: dv(3),
        },
        |r: &t6::validate_data_resource_config::Request| assert_eq!(r.type_name, "d"),
    );
    check(
        "configure",
        t5::configure::Request {
            terraform_version: "1.9.0".into(),
            config: dv(4),
            client_capabilities: caps(),
        },
        |r: &t6::configure_provider::Request| assert_eq!(r.terraform_version, "1.9.0"),
    );
    check(
        "upgrade_resource_state_flatmap",
        t5::upgrade_resource_state::Request {
            type_name: "t".into(),
            version: 2,
            raw_state: Some(t5::RawState {
                json: vec![],
                flatmap: [("id".to_string(), "x".to_string())].into(),
            }),
        },
        |r: &t6::upgrade_resource_state::Request| {
            assert_eq!(r.raw_state.as_ref().unwrap().flatmap["id"], "x")
        },
    );
    check(
        "read_resource_request",
        t5::read_resource::Request {
            type_name: "t".into(),
            current_state: dv(5),
            private: vec![1, 2],
            provider_meta: dv(6),
            client_capabilities: caps(),
            current_identity: identity(),
        },
        |r: &t6::read_resource::Request| assert_eq!(r.private, [1, 2]),
    );
    check(
        "read_resource_response",
        t5::read_resource::Response {
            new_state: dv(5),
            diagnostics: diag(),
            private: vec![3],
            deferred: Some(t5::Deferred { reason: 3 }),
            new_identity: identity(),
        },
        |r: &t6::read_resource::Response| assert_eq!(r.deferred.unwrap().reason, 3),
    );
    check(
        "plan_resource_change_request",
        t5::plan_resource_change::Request {
            type_name: "t".into(),
            prior_state: dv(1),
            proposed_new_state: dv(2),
            config: dv(3),
            prior_private: vec![4],
            provider_meta: dv(5),
            client_capabilities: caps(),
            prior_identity: identity(),
        },
        |r: &t6::plan_resource_change::Request| {
            assert_eq!(r.proposed_new_state.as_ref().unwrap().msgpack, [2])
        },
    );
    check(
        "plan_resource_change_response_legacy",
        t5::plan_resource_change::Response {
            planned_state: dv(1),
            requires_replace: vec![t5::AttributePath::default()],
            planned_private: vec![2],
            diagnostics: diag(),
            legacy_type_system: true,
            deferred: Some(t5::Deferred { reason: 1 }),
            planned_identity: identity(),
        },
        |r: &t6::plan_resource_change::Response| assert!(r.legacy_type_system),
    );
    check(
        "apply_resource_change_request",
        t5::apply_resource_change::Request {
            type_name: "t".into(),
            prior_state: dv(1),
            planned_state: dv(2),
            config: dv(3),
            planned_private: vec![4],
            provider_meta: dv(5),
            planned_identity: identity(),
        },
        |r: &t6::apply_resource_change::Request| assert_eq!(r.planned_private, [4]),
    );
    check(
        "apply_resource_change_response_legacy",
        t5::apply_resource_change::Response {
            new_state: dv(1),
            private: vec![2],
            diagnostics: diag(),
            legacy_type_system: true,
            new_identity: identity(),
        },
        |r: &t6::apply_resource_change::Response| assert!(r.legacy_type_system),
    );
    check(
        "import_resource_state_response",
        t5::import_resource_state::Response {
            imported_resources: vec![t5::import_resource_state::ImportedResource {
                type_name: "t".into(),
                state: dv(1),
                private: vec![2],
                identity: identity(),
            }],
            diagnostics: diag(),
            deferred: Some(t5::Deferred { reason: 2 }),
        },
        |r: &t6::import_resource_state::Response| {
            assert_eq!(r.imported_resources[0].type_name, "t")
        },
    );
    check(
        "read_data_source_request",
        t5::read_data_source::Request {
            type_name: "d".into(),
            config: dv(1),
            provider_meta: dv(2),
            client_capabilities: caps(),
        },
        |r: &t6::read_data_source::Request| assert_eq!(r.type_name, "d"),
    );
    check(
        "call_function",
        t5::call_function::Response {
            result: dv(1),
            error: Some(t5::FunctionError {
                text: "bad".into(),
                function_argument: Some(1),
            }),
        },
        |r: &t6::call_function::Response| assert_eq!(r.error.as_ref().unwrap().text, "bad"),
    );
    check(
        "stop",
        t5::stop::Response { error: "x".into() },
        |r: &t6::stop_provider::Response| assert_eq!(r.error, "x"),
    );
    check(
        "function_signature",
        t5::Function {
            parameters: vec![t5::function::Parameter {
                name: "p".into(),
                r#type: b"\"string\"".to_vec(),
                allow_null_value: true,
                allow_unknown_values: true,
                description: "d".into(),
                description_kind: 1,
            }],
            variadic_parameter: None,
            r#return: Some(t5::function::Return {
                r#type: b"\"number\"".to_vec(),
            }),
            summary: "s".into(),
            description: "d".into(),
            description_kind: 1,
            deprecation_message: "old".into(),
        },
        |f: &t6::Function| assert_eq!(f.deprecation_message, "old"),
    );
}

#[test]
fn item1_protocol6_only_fields_are_dropped_for_protocol5() {
    let six = t6::plan_resource_change::Request {
        type_name: "t".into(),
        planned_private: vec![7],
        client_capabilities: Some(t6::ClientCapabilities {
            deferral_allowed: true,
            write_only_attributes_allowed: true,
            store_planned_private: true,
            computed_blocks_allowed: true,
        }),
        ..Default::default()
    };
    let five: t5::plan_resource_change::Request = transcode(&six).unwrap();
    let again: t6::plan_resource_change::Request = transcode(&five).unwrap();
    assert_eq!(again.planned_private, Vec::<u8>::new());
    let c = again.client_capabilities.unwrap();
    assert!(c.deferral_allowed && c.write_only_attributes_allowed);
    assert!(!c.store_planned_private && !c.computed_blocks_allowed);
}

fn attr5(name: &str, write_only: bool) -> t5::schema::Attribute {
    t5::schema::Attribute {
        name: name.into(),
        r#type: b"\"string\"".to_vec(),
        optional: true,
        write_only,
        description: "about".into(),
        ..Default::default()
    }
}

fn schema5() -> t5::Schema {
    t5::Schema {
        version: 3,
        block: Some(t5::schema::Block {
            attributes: vec![attr5("name", false), attr5("password", true)],
            block_types: vec![t5::schema::NestedBlock {
                type_name: "rule".into(),
                nesting: t5::schema::nested_block::NestingMode::Set as i32,
                min_items: 1,
                max_items: 4,
                block: Some(t5::schema::Block {
                    attributes: vec![attr5("port", false)],
                    ..Default::default()
                }),
            }],
            deprecated: true,
            ..Default::default()
        }),
    }
}

#[test]
fn item1_schema_conversion_moves_write_only_and_keeps_blocks() {
    let six = schema_to6(&schema5());
    let b = six.block.as_ref().unwrap();
    assert_eq!(six.version, 3);
    assert!(!b.attributes[0].write_only && b.attributes[1].write_only);
    assert!(b.attributes.iter().all(|a| a.nested_type.is_none()));
    assert_eq!(b.block_types[0].nesting, 3);
    assert_eq!(
        (b.block_types[0].min_items, b.block_types[0].max_items),
        (1, 4)
    );
    // Field 10 is write_only in 5 and nested_type in 6: a byte copy would
    // have been wrong, the conversion is not.
    let raw: Result<t6::Schema, _> = transcode(&schema5());
    assert!(!raw
        .map(|s| s.block.unwrap().attributes[1].write_only)
        .unwrap_or(false));
    assert_eq!(schema_to5(&six, "x").unwrap(), schema5(), "and back");
}

#[test]
fn item2_nested_attributes_need_protocol6() {
    let mut six = schema_to6(&schema5());
    let rule = six.block.as_mut().unwrap().block_types[0]
        .block
        .as_mut()
        .unwrap();
    rule.attributes.push(t6::schema::Attribute {
        name: "targets".into(),
        nested_type: Some(Default::default()),
        ..Default::default()
    });
    let resp = t6::get_provider_schema::Response {
        resource_schemas: [("x_fw".to_string(), six)].into(),
        ..Default::default()
    };
    let e = needs_protocol6(&resp).expect("nested attribute found");
    assert_eq!(
        e.to_string(),
        "resource \"x_fw\" block \"rule\" attribute \"targets\" uses a nested attribute type, which only plugin protocol 6 can carry"
    );
    let plain = t6::get_provider_schema::Response {
        resource_schemas: [("x_fw".to_string(), schema_to6(&schema5()))].into(),
        ..Default::default()
    };
    assert_eq!(needs_protocol6(&plain), None);
}

#[test]
fn item1_provider_schema_answers_map_actions_and_capabilities() {
    let five = t5::get_provider_schema::Response {
        provider: Some(schema5()),
        resource_schemas: [("x_a".to_string(), schema5())].into(),
        action_schemas: [(
            "x_act".to_string(),
            t5::ActionSchema {
                schema: Some(schema5()),
                r#type: None,
            },
        )]
        .into(),
        server_capabilities: Some(t5::ServerCapabilities {
            plan_destroy: true,
            get_provider_schema_optional: true,
            move_resource_state: false,
        }),
        diagnostics: diag(),
        ..Default::default()
    };
    let six = provider_schema_to6(&five).unwrap();
    assert!(six.action_schemas.contains_key("x_act"));
    assert!(six.state_store_schemas.is_empty());
    assert!(
        six.server_capabilities
            .unwrap()
            .get_provider_schema_optional
    );
    assert_eq!(six.diagnostics[0].detail, "d");
    let back = provider_schema_to5(&six).unwrap();
    assert_eq!(back, five);
}

/// The calls a protocol-5 server may route to the protocol-6 service as
/// they are: the per-instance ones whose messages `item1_*` pins field by
/// field; never one that is converted (schema, metadata) or streams.
#[test]
fn same_paths() {
    let check = |path5: &str, want: Option<&str>| assert_eq!(same_path6(path5), want, "{path5}");
    for (five, six) in [
        ("ValidateResourceTypeConfig", "ValidateResourceConfig"),
        ("ValidateDataSourceConfig", "ValidateDataResourceConfig"),
        ("UpgradeResourceState", "UpgradeResourceState"),
        ("ReadResource", "ReadResource"),
        ("PlanResourceChange", "PlanResourceChange"),
        ("ApplyResourceChange", "ApplyResourceChange"),
        ("ImportResourceState", "ImportResourceState"),
        ("ReadDataSource", "ReadDataSource"),
    ] {
        check(
            &format!("/tfplugin5.Provider/{five}"),
            Some(&format!("/tfplugin6.Provider/{six}")),
        );
    }
    for kept in [
        "/tfplugin5.Provider/GetSchema",
        "/tfplugin5.Provider/GetMetadata",
        "/tfplugin5.Provider/ListResource",
        "/tfplugin5.Provider/Configure",
        "/tfplugin5.Provider/Stop",
        "/tfplugin6.Provider/ReadResource",
        "/tfplugin5.Provisioner/Stop",
    ] {
        check(kept, None);
    }
}
