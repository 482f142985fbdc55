use super::*;
use proptest::prelude::*;

fn s(v: &str) -> PValue {
    pv(PKind::StringValue(v.into()))
}

fn obj(fields: &[(&str, PValue)]) -> PValue {
    let mut st = Struct::default();
    for (k, v) in fields {
        st.fields.insert(k.to_string(), v.clone());
    }
    pv(PKind::StructValue(st))
}

fn props(list: &[(&str, Shape)]) -> Shape {
    Shape::Object(
        list.iter()
            .map(|(k, s)| (k.to_string(), s.clone()))
            .collect(),
    )
}

/// Decodes `wire` under `shape`, compares with `want`, then encodes back
/// and decodes again (the value survives the trip).
fn check(name: &str, wire: PValue, shape: &Shape, want: Value) {
    let got = decode(&wire, shape).unwrap_or_else(|e| panic!("{name}: decode: {e}"));
    assert_eq!(got, want, "{name}: decoded");
    let back = encode(&got, shape, EncodeOptions::default())
        .unwrap_or_else(|e| panic!("{name}: encode: {e}"));
    assert_eq!(decode(&back, shape).unwrap(), want, "{name}: round trip");
}

#[test]
fn decodes_the_guides_special_values() {
    let asset = Value::object_typed(
        &asset_type(),
        BTreeMap::from([
            ("hash".into(), Value::string("abc")),
            ("path".into(), Value::null(Type::String)),
            ("text".into(), Value::string("hello")),
            ("uri".into(), Value::null(Type::String)),
        ]),
    );
    let cases: Vec<(&str, PValue, Shape, Value)> = vec![
        (
            "unknown string",
            s(UNKNOWN),
            Shape::String,
            Value::unknown(Type::String),
        ),
        (
            "unknown any",
            s(UNKNOWN),
            Shape::Any,
            Value::unknown(Type::Dynamic),
        ),
        (
            "secret string",
            obj(&[(SIG_KEY, s(SECRET_SIG)), ("value", s("hunter2"))]),
            Shape::String,
            Value::string("hunter2").mark_sensitive(),
        ),
        (
            "secret unknown",
            obj(&[(SIG_KEY, s(SECRET_SIG)), ("value", s(UNKNOWN))]),
            Shape::Number,
            Value::unknown(Type::Number).mark_sensitive(),
        ),
        (
            "asset with text",
            obj(&[
                (SIG_KEY, s(ASSET_SIG)),
                ("hash", s("abc")),
                ("text", s("hello")),
            ]),
            Shape::Asset,
            asset.clone(),
        ),
        (
            "integer",
            pv(PKind::NumberValue(42.0)),
            Shape::Integer,
            Value::number(42),
        ),
        (
            "object with absent property",
            obj(&[("fooBar", s("x"))]),
            props(&[("fooBar", Shape::String), ("n", Shape::Number)]),
            Value::object_from([
                ("fooBar", Value::string("x")),
                ("n", Value::null(Type::Number)),
            ]),
        ),
        (
            "list of strings",
            pv(PKind::ListValue(ListValue {
                values: vec![s("a"), s(UNKNOWN)],
            })),
            Shape::Array(Box::new(Shape::String)),
            Value::list(
                Type::String,
                vec![Value::string("a"), Value::unknown(Type::String)],
            ),
        ),
    ];
    for (name, wire, shape, want) in cases {
        check(name, wire, &shape, want);
    }
}

#[test]
fn decodes_output_values_and_resource_references() {
    let cases: Vec<(&str, PValue, Value)> = vec![
        (
            "reference with id is the id",
            obj(&[
                (SIG_KEY, s(RESOURCE_REF_SIG)),
                ("urn", s("urn:pulumi:s::p::echo:index:Item::a")),
                ("id", s("item-1")),
            ]),
            Value::string("item-1"),
        ),
        (
            "reference with empty id is unknown",
            obj(&[
                (SIG_KEY, s(RESOURCE_REF_SIG)),
                ("urn", s("urn:x")),
                ("id", s("")),
            ]),
            Value::unknown(Type::String),
        ),
        (
            "reference without id is the urn",
            obj(&[(SIG_KEY, s(RESOURCE_REF_SIG)), ("urn", s("urn:x"))]),
            Value::string("urn:x"),
        ),
        (
            "output value without value is unknown",
            obj(&[(SIG_KEY, s(OUTPUT_VALUE_SIG))]),
            Value::unknown(Type::String),
        ),
        (
            "secret output value",
            obj(&[
                (SIG_KEY, s(OUTPUT_VALUE_SIG)),
                ("value", s("v")),
                ("secret", pv(PKind::BoolValue(true))),
            ]),
            Value::string("v").mark_sensitive(),
        ),
    ];
    for (name, wire, want) in cases {
        assert_eq!(decode(&wire, &Shape::String).unwrap(), want, "{name}");
    }
}

#[test]
fn refuses_values_that_do_not_fit_naming_the_path() {
    let shape = props(&[("items", Shape::Array(Box::new(Shape::Integer)))]);
    let cases: Vec<(&str, PValue, &str)> = vec![
        (
            "fraction where integer",
            obj(&[(
                "items",
                pv(PKind::ListValue(ListValue {
                    values: vec![pv(PKind::NumberValue(1.5))],
                })),
            )]),
            "items[0]: expected an integer, got 1.5",
        ),
        (
            "string where array",
            obj(&[("items", s("x"))]),
            "items: expected an array, got a string",
        ),
        (
            "extra property",
            obj(&[("nope", s("x"))]),
            "nope: unexpected property: the schema has no such property",
        ),
        (
            "unknown signature",
            obj(&[("items", obj(&[(SIG_KEY, s("ffff"))]))]),
            "items: unknown special object signature \"ffff\"",
        ),
    ];
    for (name, wire, want) in cases {
        let err = decode(&wire, &shape).expect_err(name);
        assert_eq!(err.to_string(), want, "{name}");
    }
}

#[test]
fn secrets_go_plain_when_the_plugin_does_not_accept_them() {
    let v = Value::object_from([("pw", Value::string("hunter2").mark_sensitive())]);
    let shape = props(&[("pw", Shape::String)]);
    let plain = encode_struct(
        &v,
        &shape,
        EncodeOptions {
            keep_secrets: false,
            fetched: None,
        },
    )
    .unwrap();
    assert_eq!(plain.fields["pw"], s("hunter2"));
    let kept = encode_struct(&v, &shape, EncodeOptions::default()).unwrap();
    assert_eq!(
        kept.fields["pw"],
        obj(&[(SIG_KEY, s(SECRET_SIG)), ("value", s("hunter2"))])
    );
}

// ---- property tests: value -> wire -> value ------------------------------

fn shape_strategy() -> impl Strategy<Value = Shape> {
    let leaf = prop_oneof![
        Just(Shape::Any),
        Just(Shape::Bool),
        Just(Shape::Number),
        Just(Shape::Integer),
        Just(Shape::String),
        Just(Shape::Asset),
        Just(Shape::Archive),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            inner.clone().prop_map(|s| Shape::Array(Box::new(s))),
            inner.clone().prop_map(|s| Shape::Map(Box::new(s))),
            prop::collection::btree_map("[a-z][a-zA-Z]{0,5}", inner, 0..4).prop_map(Shape::Object),
        ]
    })
}

fn key() -> impl Strategy<Value = String> {
    "[a-z][a-zA-Z0-9 ]{0,5}"
}

/// A value of `shape`; `secret_ok` is false under a sensitive node (the
/// wire has no secrets inside secrets).
fn value_for(shape: Shape, secret_ok: bool) -> BoxedStrategy<Value> {
    let ty = shape.ty();
    let special = prop_oneof![
        Just(Value::null(ty.clone())),
        Just(Value::unknown(ty.clone()))
    ];
    let known: BoxedStrategy<Value> = match shape.clone() {
        Shape::Bool => any::<bool>().prop_map(Value::bool).boxed(),
        Shape::Number => any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| Value::number(Number::from_f64(f).unwrap()))
            .boxed(),
        Shape::Integer => any::<i32>().prop_map(|n| Value::number(n as i64)).boxed(),
        Shape::String => "\\PC{0,8}".prop_map(|s: String| Value::string(s)).boxed(),
        Shape::Any => prop_oneof![
            any::<bool>().prop_map(Value::bool),
            any::<i32>().prop_map(|n| Value::number(n as i64)),
            "[a-z]{0,6}".prop_map(|s: String| Value::string(s)),
            prop::collection::vec(any::<bool>().prop_map(Value::bool), 0..3).prop_map(Value::tuple),
            prop::collection::btree_map(
                key(),
                "[a-z]{0,3}".prop_map(|s: String| Value::string(s)),
                0..3
            )
            .prop_map(Value::object),
        ]
        .boxed(),
        Shape::Asset | Shape::AssetOrArchive => (0..3usize, "[a-f0-9]{8}", "\\PC{1,6}")
            .prop_map(|(which, hash, body)| asset(which, hash, body))
            .boxed(),
        Shape::Archive => (
            0..3usize,
            "[a-f0-9]{8}",
            prop::collection::btree_map(key(), (0..3usize, "[a-f0-9]{8}", "\\PC{1,6}"), 1..3),
        )
            .prop_map(|(which, hash, members)| {
                let mut attrs = BTreeMap::from([
                    ("assets".to_string(), Value::null(Type::Dynamic)),
                    ("hash".to_string(), Value::string(hash)),
                    ("path".to_string(), Value::null(Type::String)),
                    ("uri".to_string(), Value::null(Type::String)),
                ]);
                match which {
                    0 => {
                        let m = members
                            .into_iter()
                            .map(|(k, (w, h, b))| (k, asset(w, h, b)))
                            .collect();
                        attrs.insert("assets".into(), Value::object(m));
                    }
                    1 => {
                        attrs.insert("path".into(), Value::string("dir/a.tgz"));
                    }
                    _ => {
                        attrs.insert("uri".into(), Value::string("https://example.com/a.zip"));
                    }
                }
                Value::object_typed(&archive_type(), attrs)
            })
            .boxed(),
        Shape::Array(elem) => {
            let dynamic = elem.ty().has_dynamic();
            let ety = elem.ty();
            prop::collection::vec(value_for(*elem, secret_ok), 0..3)
                .prop_map(move |elems| {
                    if dynamic {
                        Value::tuple(elems)
                    } else {
                        Value::list(ety.clone(), elems)
                    }
                })
                .boxed()
        }
        Shape::Map(elem) => {
            let dynamic = elem.ty().has_dynamic();
            let ety = elem.ty();
            prop::collection::btree_map(key(), value_for(*elem, secret_ok), 0..3)
                .prop_map(move |entries| {
                    if dynamic {
                        Value::object(entries)
                    } else {
                        Value::map(ety.clone(), entries)
                    }
                })
                .boxed()
        }
        Shape::Object(props) => {
            let ty = ty.clone();
            let fields: Vec<_> = props
                .into_iter()
                .map(|(k, p)| value_for(p, secret_ok).prop_map(move |v| (k.clone(), v)))
                .collect();
            fields
                .prop_map(move |attrs| Value::object_typed(&ty, attrs.into_iter().collect()))
                .boxed()
        }
    };
    let plain = prop_oneof![1 => special, 4 => known];
    if secret_ok {
        // A sensitive node is drawn with no marks below it.
        let sensitive = value_for(shape, false).prop_map(Value::mark_sensitive);
        prop_oneof![4 => plain, 1 => sensitive].boxed()
    } else {
        plain.boxed()
    }
}

fn asset(which: usize, hash: String, body: String) -> Value {
    let mut attrs = BTreeMap::from([
        ("hash".to_string(), Value::string(hash)),
        ("path".to_string(), Value::null(Type::String)),
        ("text".to_string(), Value::null(Type::String)),
        ("uri".to_string(), Value::null(Type::String)),
    ]);
    let member = ["text", "path", "uri"][which];
    attrs.insert(member.into(), Value::string(body));
    Value::object_typed(&asset_type(), attrs)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn values_round_trip_through_the_wire(
        (shape, v) in shape_strategy().prop_flat_map(|s| (Just(s.clone()), value_for(s, true)))
    ) {
        let wire = encode(&v, &shape, EncodeOptions::default())
            .map_err(|e| TestCaseError::fail(format!("encode: {e}")))?;
        let back = decode(&wire, &shape)
            .map_err(|e| TestCaseError::fail(format!("decode: {e}")))?;
        prop_assert_eq!(back, v);
    }

    #[test]
    fn property_objects_round_trip_as_structs(
        (shape, v) in prop::collection::btree_map("[a-z][a-zA-Z]{0,5}", shape_strategy(), 0..4)
            .prop_map(Shape::Object)
            .prop_flat_map(|s| (Just(s.clone()), value_for(s, false)))
            .prop_filter("a known object", |(_, v)| v.is_known() && !v.is_null())
    ) {
        let st = encode_struct(&v, &shape, EncodeOptions::default())
            .map_err(|e| TestCaseError::fail(format!("encode: {e}")))?;
        prop_assert_eq!(decode_struct(&st, &shape).unwrap(), v);
    }
}

#[test]
fn item1_asset_hash_is_added_when_absent() {
    let dir = std::env::temp_dir().join(format!("terrane-asset-hash-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("a.txt");
    std::fs::write(&file, "hello").unwrap();
    let file = file.to_string_lossy().into_owned();
    let missing = dir.join("missing.txt").to_string_lossy().into_owned();
    // sha256("hello")
    let hello = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";
    let asset = |member: &str, body: &str, hash: Option<&str>| {
        let mut attrs = BTreeMap::from([
            ("hash".to_string(), Value::null(Type::String)),
            ("path".to_string(), Value::null(Type::String)),
            ("text".to_string(), Value::null(Type::String)),
            ("uri".to_string(), Value::null(Type::String)),
        ]);
        attrs.insert(member.into(), Value::string(body));
        if let Some(h) = hash {
            attrs.insert("hash".into(), Value::string(h));
        }
        Value::object_typed(&asset_type(), attrs)
    };
    // (case, asset, hash sent or the error's text)
    type Want<'a> = Result<Option<&'a str>, String>;
    let cases: Vec<(&str, Value, Want)> = vec![
        ("text", asset("text", "hello", None), Ok(Some(hello))),
        ("path", asset("path", &file, None), Ok(Some(hello))),
        (
            "given_hash_kept",
            asset("text", "hello", Some("abc")),
            Ok(Some("abc")),
        ),
        (
            "uri_not_fetched",
            asset("uri", "https://example.com/a", None),
            Ok(None),
        ),
        (
            "unreadable_path",
            asset("path", &missing, None),
            Err(format!("cannot read the asset file {missing:?} to hash it")),
        ),
    ];
    let file_uri = format!("file://{file}");
    let fetched: Fetched = BTreeMap::from([("https://h.test/a".to_string(), b"hello".to_vec())]);
    let cases = cases.into_iter().map(|(n, v, w)| (n, v, w, None)).chain([
        (
            "file_uri",
            asset("uri", &file_uri, None),
            Ok(Some(hello)),
            None,
        ),
        (
            "file_uri_localhost",
            asset("uri", &format!("file://localhost{file}"), None),
            Ok(Some(hello)),
            None,
        ),
        (
            "https_uri_fetched",
            asset("uri", "https://h.test/a", None),
            Ok(Some(hello)),
            Some(&fetched),
        ),
        (
            "https_uri_to_fetch",
            asset("uri", "https://h.test/b", None),
            Err("\"https://h.test/b\" has not been fetched".into()),
            Some(&fetched),
        ),
    ]);
    for (name, v, want, fetched) in cases {
        let opts = EncodeOptions {
            fetched,
            ..EncodeOptions::default()
        };
        let got = encode(&v, &Shape::Asset, opts);
        match (got, want) {
            (
                Ok(PValue {
                    kind: Some(PKind::StructValue(s)),
                }),
                Ok(h),
            ) => {
                let sent = s.fields.get("hash").and_then(|v| match &v.kind {
                    Some(PKind::StringValue(h)) => Some(h.as_str()),
                    _ => None,
                });
                assert_eq!(sent, h, "{name}");
                // Decoded, the hash is part of the value.
                let back = decode(
                    &PValue {
                        kind: Some(PKind::StructValue(s)),
                    },
                    &Shape::Asset,
                )
                .unwrap();
                assert_eq!(back.get_attr("hash").and_then(Value::as_str), h, "{name}");
            }
            (Err(e), Err(text)) => assert!(e.to_string().contains(&text), "{name}: {e}"),
            (got, want) => panic!("{name}: got {got:?}, want {want:?}"),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 18, data exchange: an archive file terrane sends without a hash
/// goes with the SHA-256 of its bytes, as Pulumi's engine computes it (the
/// expected values computed independently with `sha256sum`).
#[test]
fn item2_archive_file_hash_is_added_when_absent() {
    let dir = std::env::temp_dir().join(format!("terrane-archive-hash-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("tree")).unwrap();
    let write = |name: &str| {
        let f = dir.join(name);
        std::fs::write(&f, "hello").unwrap();
        f.to_string_lossy().into_owned()
    };
    // sha256sum of the 5 bytes "hello"
    let hello = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";
    let (zip, tgz, jar) = (write("a.zip"), write("a.tar.gz"), write("a.jar"));
    // A directory as Go's filepath.Walk visits it: `.pulumi` skipped,
    // subdirectories in name order.
    for (f, body) in [
        ("tree/b", "bb"),
        ("tree/a/c", "c"),
        ("tree/.pulumi/skip", "x"),
    ] {
        let f = dir.join(f);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, body).unwrap();
    }
    let tree = dir.join("tree").to_string_lossy().into_owned();
    let missing = dir.join("missing.tar").to_string_lossy().into_owned();
    let plain = write("plain.txt");
    // A zip whose members an archive of assets flattens (its directory
    // entry is no member).
    let member_zip = dir.join("member.zip");
    {
        use std::io::Write as _;
        let mut zw = zip::ZipWriter::new(std::fs::File::create(&member_zip).unwrap());
        let opts = zip::write::SimpleFileOptions::default();
        zw.add_directory("lib/", opts).unwrap();
        zw.start_file("lib/m.txt", opts).unwrap();
        zw.write_all(b"from zip").unwrap();
        zw.start_file("top.txt", opts).unwrap();
        zw.write_all(b"top").unwrap();
        zw.finish().unwrap();
    }
    let member_zip = member_zip.to_string_lossy().into_owned();
    let archive = |member: &str, body: &str, hash: Option<&str>| {
        let mut attrs = BTreeMap::from([
            ("hash".to_string(), Value::null(Type::String)),
            ("path".to_string(), Value::null(Type::String)),
            ("uri".to_string(), Value::null(Type::String)),
        ]);
        attrs.insert(member.into(), Value::string(body));
        if let Some(h) = hash {
            attrs.insert("hash".into(), Value::string(h));
        }
        let ty = archive_type();
        let Type::Object(ot) = &ty else {
            unreachable!()
        };
        for (k, t) in ot.attrs() {
            attrs
                .entry(k.clone())
                .or_insert_with(|| Value::null(t.clone()));
        }
        Value::object_typed(&ty, attrs)
    };
    let with_assets = |members: BTreeMap<String, Value>| {
        let mut attrs = BTreeMap::from([
            ("hash".to_string(), Value::null(Type::String)),
            ("path".to_string(), Value::null(Type::String)),
            ("uri".to_string(), Value::null(Type::String)),
        ]);
        attrs.insert("assets".into(), Value::object(members));
        Value::object_typed(&archive_type(), attrs)
    };
    let empty_assets = with_assets(BTreeMap::new());
    type Want<'a> = Result<Option<&'a str>, String>;
    let cases: Vec<(&str, Value, Want)> = vec![
        ("zip", archive("path", &zip, None), Ok(Some(hello))),
        ("tar_gz", archive("path", &tgz, None), Ok(Some(hello))),
        ("jar", archive("path", &jar, None), Ok(Some(hello))),
        (
            "given_hash_kept",
            archive("path", &zip, Some("abc")),
            Ok(Some("abc")),
        ),
        // The expected hashes below were computed with Python's tarfile
        // (USTAR, mode 0600, mtime 0, the stream cut after its two zero
        // blocks as Go ends it; devmajor/devminor, which Python leaves NUL
        // for files, set to octal zero as Go writes them), an
        // implementation independent of ours.
        (
            "directory",
            archive("path", &tree, None),
            Ok(Some(
                "9c4d6ca7230cc20facbb4b9a8935b38e959ccc8b813e1a4356cbccac63b4ad04",
            )),
        ),
        // Pulumi's archive.go names this hash as that of an empty archive.
        (
            "no_assets",
            empty_assets.clone(),
            Ok(Some(
                "5f70bf18a086007016e948b04aed3b82103a36bea41755b6cddfaf10ace3c6ef",
            )),
        ),
        (
            "one_text_asset",
            with_assets(BTreeMap::from([(
                "hello.txt".to_string(),
                asset(0, String::new(), "hello".into()),
            )])),
            Ok(Some(
                "38298ce62a85e93838d28242b1cc81774e9e3fc19cc6ff4b4191fc3ddaf22786",
            )),
        ),
        (
            "nested_archive_flattened",
            with_assets(BTreeMap::from([
                (
                    "dir".to_string(),
                    with_assets(BTreeMap::from([(
                        "inner.txt".to_string(),
                        asset(0, String::new(), "in".into()),
                    )])),
                ),
                ("top".to_string(), asset(0, String::new(), "t".into())),
            ])),
            Ok(Some(
                "2c57353dda2bbc1af1a35269140c3aa7a761914b693c1f341129793f7b34ec6b",
            )),
        ),
        (
            "zip_member_flattened",
            with_assets(BTreeMap::from([(
                "pkg".to_string(),
                archive("path", &member_zip, None),
            )])),
            Ok(Some(
                "fad6b415060c3f6f70f11f4e120a28f9a41449de59aaf76227a3ec1be78e27d6",
            )),
        ),
        (
            "uri_member_not_fetched",
            with_assets(BTreeMap::from([(
                "a.txt".to_string(),
                asset(2, String::new(), "https://example.com/a.txt".into()),
            )])),
            Ok(None),
        ),
        (
            "neither_archive_nor_directory",
            archive("path", &plain, None),
            Err(format!(
                "{plain:?} is neither a recognized archive type nor a directory"
            )),
        ),
        (
            "uri_not_fetched",
            archive("uri", "https://example.com/a.zip", None),
            Ok(None),
        ),
        (
            "unreadable_path",
            archive("path", &missing, None),
            Err(format!(
                "cannot read the archive file {missing:?} to hash it"
            )),
        ),
    ];
    let check = |name: &str, got: Result<PValue, CodecError>, want: Want| match (got, want) {
        (
            Ok(PValue {
                kind: Some(PKind::StructValue(s)),
            }),
            Ok(h),
        ) => {
            let sent = s.fields.get("hash").and_then(|v| match &v.kind {
                Some(PKind::StringValue(h)) => Some(h.as_str()),
                _ => None,
            });
            assert_eq!(sent, h, "{name}");
        }
        (Err(e), Err(text)) => assert!(e.to_string().contains(&text), "{name}: {e}"),
        (got, want) => panic!("{name}: got {got:?}, want {want:?}"),
    };
    for (name, v, want) in cases {
        check(
            name,
            encode(&v, &Shape::Archive, EncodeOptions::default()),
            want,
        );
    }
    // URIs, as Pulumi's engine reads them: `file://` here, `http(s)://`
    // from what the caller fetched. A URI archive's contents hash as the
    // same bytes at a path do, and a URI member as the same member given
    // otherwise.
    let zip_bytes = std::fs::read(&member_zip).unwrap();
    let fetched: Fetched = BTreeMap::from([
        ("https://h.test/m.zip".to_string(), zip_bytes.clone()),
        ("https://h.test/hello.txt".to_string(), b"hello".to_vec()),
    ]);
    let opts = EncodeOptions {
        fetched: Some(&fetched),
        ..EncodeOptions::default()
    };
    let hash_of = |v: &Value| -> Option<String> {
        match encode(v, &Shape::Archive, opts) {
            Ok(PValue {
                kind: Some(PKind::StructValue(s)),
            }) => match s.fields.get("hash").and_then(|h| h.kind.clone()) {
                Some(PKind::StringValue(h)) => Some(h),
                _ => None,
            },
            other => panic!("{other:?}"),
        }
    };
    let by_path = hash_of(&archive("path", &member_zip, None));
    let zip_member_by_path = hash_of(&with_assets(BTreeMap::from([(
        "pkg".to_string(),
        archive("path", &member_zip, None),
    )])));
    let text_member = hash_of(&with_assets(BTreeMap::from([(
        "a.txt".to_string(),
        asset(0, String::new(), "hello".into()),
    )])));
    let file_uri = format!("file://{}", member_zip.replace(' ', "%20"));
    type UriWant = Result<Option<String>, String>;
    let uri_cases: Vec<(&str, Value, UriWant)> = vec![
        (
            "file_uri",
            archive("uri", &file_uri, None),
            Ok(by_path.clone()),
        ),
        (
            "https_uri",
            archive("uri", "https://h.test/m.zip", None),
            Ok(by_path.clone()),
        ),
        (
            "https_uri_member_flattened",
            with_assets(BTreeMap::from([(
                "pkg".to_string(),
                archive("uri", "https://h.test/m.zip", None),
            )])),
            Ok(zip_member_by_path),
        ),
        (
            "https_asset_member",
            with_assets(BTreeMap::from([(
                "a.txt".to_string(),
                asset(2, String::new(), "https://h.test/hello.txt".into()),
            )])),
            Ok(text_member),
        ),
        (
            "not_an_archive_extension",
            archive("uri", "https://h.test/m.txt", None),
            Err("is not a recognized archive format".into()),
        ),
        (
            "file_uri_missing",
            archive("uri", &format!("file://{missing}"), None),
            Err(format!("cannot read \"file://{missing}\"")),
        ),
        (
            "unsupported_scheme",
            archive("uri", "ftp://h.test/m.zip", None),
            Err("unsupported URI scheme".into()),
        ),
    ];
    for (name, v, want) in uri_cases {
        let want = want.as_ref().map(|h| h.as_deref()).map_err(Clone::clone);
        check(name, encode(&v, &Shape::Archive, opts), want);
    }
    // A URI not fetched yet is the error that names it.
    let e = encode(
        &archive("uri", "https://h.test/other.tar.gz", None),
        &Shape::Archive,
        opts,
    )
    .unwrap_err();
    assert_eq!(
        e.fetch.as_deref(),
        Some("https://h.test/other.tar.gz"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
