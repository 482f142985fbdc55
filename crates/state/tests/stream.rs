//! `StateStore::stream`: every object once, in module order (modules by
//! address text, then state order; the current object before the deposed
//! ones), with the outputs first and each object's recorded dependencies
//! before any object, as `Snapshot::stream` gives them; on the SQLite
//! store and the PostgreSQL store (`TERRANE_TEST_PG_URL`, required under
//! CI=true), plain and encrypted. An encrypted store still opens (and so
//! checks) every object it streams.

use std::ops::ControlFlow;
use terrane_state::{
    Change, Encryption, InstanceKey, LockInfo, Mode, ModulePath, ObjectState, OutputState, PgStore,
    ResourceAddr, SqliteStore, StateStore, Streamed,
};

const PROVIDER: &str = "provider[\"terraform.io/builtin/terraform\"]";

fn module(steps: &[(&str, InstanceKey)]) -> ModulePath {
    ModulePath(
        steps
            .iter()
            .map(|(n, k)| (n.to_string(), k.clone()))
            .collect(),
    )
}

fn raddr(m: ModulePath, mode: Mode, ty: &str, name: &str) -> ResourceAddr {
    ResourceAddr {
        module: m,
        mode,
        ty: ty.into(),
        name: name.into(),
    }
}

fn obj(id: &str, deps: &[&str]) -> ObjectState {
    ObjectState {
        attributes: serde_json::json!({"id": id}).into(),
        dependencies: deps.iter().map(|d| d.to_string()).collect(),
        ..Default::default()
    }
}

fn set(r: &ResourceAddr, key: InstanceKey, deposed: Option<&str>, o: ObjectState) -> Change {
    Change::SetObject {
        addr: r.instance(key),
        deposed: deposed.map(str::to_string),
        provider: PROVIDER.into(),
        object: o,
    }
}

fn root_managed(name: &str) -> ResourceAddr {
    raddr(ModulePath::default(), Mode::Managed, "terraform_data", name)
}

/// A stream as text lines: `start`, the dependency lines sorted (their
/// order is not specified), then the objects as they came.
fn lines(stream: impl FnOnce(&mut dyn FnMut(Streamed<'_>) -> ControlFlow<()>)) -> Vec<String> {
    let (mut start, mut deps, mut objects) = (Vec::new(), Vec::new(), Vec::new());
    stream(&mut |item| {
        match item {
            Streamed::Start { outputs, resources } => start.push(format!(
                "start outputs={:?} resources={resources}",
                outputs.keys().collect::<Vec<_>>()
            )),
            Streamed::Dependencies {
                resource,
                dependencies,
            } => deps.push(format!("deps {resource} {dependencies:?}")),
            Streamed::Object {
                addr,
                deposed,
                provider,
                object,
            } => objects.push(format!(
                "{addr} deposed={deposed:?} provider={provider} id={}",
                object.attributes.json()["id"]
            )),
        }
        ControlFlow::Continue(())
    });
    deps.sort();
    start.into_iter().chain(deps).chain(objects).collect()
}

/// One case: the changes persisted, then the objects (address, deposed
/// key) the stream must give, in order.
struct Case {
    name: &'static str,
    changes: Vec<Change>,
    order: Vec<&'static str>,
}

fn cases() -> Vec<Case> {
    let b = root_managed("b");
    let data = raddr(ModulePath::default(), Mode::Data, "a_first_type", "d");
    let m2 = module(&[("a", InstanceKey::Int(2))]);
    let m10 = module(&[("a", InstanceKey::Int(10))]);
    let nested = module(&[("a", InstanceKey::Int(2)), ("b", InstanceKey::None)]);
    let mx = module(&[("m", InstanceKey::Str("x".into()))]);
    vec![
        Case {
            name: "empty",
            changes: vec![],
            order: vec![],
        },
        Case {
            name: "outputs_only",
            changes: vec![Change::SetOutput {
                name: "o".into(),
                output: OutputState {
                    value: serde_json::json!("v"),
                    ty: serde_json::json!("string"),
                    sensitive: false,
                },
            }],
            order: vec![],
        },
        Case {
            name: "instance_keys_in_state_order",
            changes: vec![
                set(&b, InstanceKey::Str("a".into()), None, obj("1", &[])),
                set(&b, InstanceKey::Int(10), None, obj("2", &[])),
                set(&b, InstanceKey::Str("Z".into()), None, obj("3", &[])),
                set(&b, InstanceKey::Int(2), None, obj("4", &[])),
                set(&b, InstanceKey::Str("a\"b".into()), None, obj("5", &[])),
                set(&b, InstanceKey::Int(0), None, obj("6", &[])),
                set(&root_managed("a"), InstanceKey::None, None, obj("7", &[])),
            ],
            order: vec![
                "terraform_data.a",
                "terraform_data.b[0]",
                "terraform_data.b[2]",
                "terraform_data.b[10]",
                "terraform_data.b[\"Z\"]",
                "terraform_data.b[\"a\"]",
                "terraform_data.b[\"a\\\"b\"]",
            ],
        },
        Case {
            name: "managed_before_data",
            changes: vec![
                set(&data, InstanceKey::None, None, obj("1", &[])),
                set(&b, InstanceKey::None, None, obj("2", &[])),
            ],
            order: vec!["terraform_data.b", "data.a_first_type.d"],
        },
        Case {
            name: "deposed_after_current",
            changes: vec![
                set(&b, InstanceKey::Int(0), Some("00000002"), obj("1", &[])),
                set(&b, InstanceKey::Int(0), None, obj("2", &[])),
                set(&b, InstanceKey::Int(0), Some("00000001"), obj("3", &[])),
                set(&b, InstanceKey::Int(1), Some("00000003"), obj("4", &[])),
            ],
            order: vec![
                "terraform_data.b[0]",
                "terraform_data.b[0] deposed 00000001",
                "terraform_data.b[0] deposed 00000002",
                "terraform_data.b[1] deposed 00000003",
            ],
        },
        Case {
            name: "modules_by_address_text",
            changes: vec![
                set(
                    &raddr(m2.clone(), Mode::Managed, "t", "r"),
                    InstanceKey::None,
                    None,
                    obj("1", &[]),
                ),
                set(
                    &raddr(nested, Mode::Managed, "t", "r"),
                    InstanceKey::None,
                    None,
                    obj("2", &[]),
                ),
                set(
                    &raddr(m10, Mode::Managed, "t", "r"),
                    InstanceKey::None,
                    None,
                    obj("3", &[]),
                ),
                set(
                    &raddr(mx, Mode::Data, "t", "r"),
                    InstanceKey::None,
                    None,
                    obj("4", &[]),
                ),
                set(
                    &raddr(m2, Mode::Data, "t", "a"),
                    InstanceKey::None,
                    None,
                    obj("5", &[]),
                ),
                set(&b, InstanceKey::None, None, obj("6", &[])),
            ],
            order: vec![
                "terraform_data.b",
                "module.a[10].t.r",
                "module.a[2].t.r",
                "module.a[2].data.t.a",
                "module.a[2].module.b.t.r",
                "module.m[\"x\"].data.t.r",
            ],
        },
        Case {
            name: "dependencies_first",
            changes: vec![
                set(
                    &b,
                    InstanceKey::None,
                    None,
                    obj("1", &["data.a_first_type.d"]),
                ),
                set(
                    &data,
                    InstanceKey::None,
                    None,
                    obj("2", &["terraform_data.a"]),
                ),
                set(&root_managed("a"), InstanceKey::None, None, obj("3", &[])),
            ],
            order: vec![
                "terraform_data.a",
                "terraform_data.b",
                "data.a_first_type.d",
            ],
        },
    ]
}

/// The objects' (address, deposed key) of a stream's lines.
fn objects_of(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .filter(|l| !l.starts_with("start") && !l.starts_with("deps "))
        .map(|l| {
            let (addr, rest) = l.split_once(" deposed=").unwrap();
            match rest.split_once(' ').unwrap().0 {
                "None" => addr.to_string(),
                d => format!(
                    "{addr} deposed {}",
                    d.trim_start_matches("Some(\"").trim_end_matches("\")")
                ),
            }
        })
        .collect()
}

/// Streams each case from `open()`'s store (a workspace per case) and
/// checks it against the case's order and the snapshot's stream.
fn check_store(store: &dyn StateStore, label: &str) {
    for case in cases() {
        let ws = case.name;
        if !case.changes.is_empty() {
            let mut run = store
                .lock(ws, LockInfo::new("OperationTypeApply", ""))
                .unwrap();
            run.persist(&case.changes).unwrap();
            run.finish().unwrap();
        }
        let streamed = lines(|v| store.stream(ws, v).unwrap());
        let snap = store.snapshot(ws).unwrap();
        let from_snapshot = lines(|v| snap.stream(v));
        let name = format!("{label} case {}", case.name);
        assert_eq!(streamed, from_snapshot, "{name}: as the snapshot streams");
        assert_eq!(objects_of(&streamed), case.order, "{name}: module order");
        assert!(
            streamed[0].ends_with(&format!("resources={}", !case.order.is_empty())),
            "{name}: start says whether resources exist: {}",
            streamed[0]
        );
    }
    // A visitor that breaks stops the stream.
    let mut seen = 0;
    store
        .stream("instance_keys_in_state_order", &mut |item| {
            if matches!(item, Streamed::Object { .. }) {
                seen += 1;
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        })
        .unwrap();
    assert_eq!(seen, 1, "{label} case break_stops");
}

fn enc() -> Encryption {
    Encryption {
        passphrase: "stream".into(),
        iterations: 1000,
    }
}

#[test]
fn sqlite_stream_in_module_order() {
    let dir = terrane_testkit::temp_dir();
    let store = SqliteStore::open(&SqliteStore::default_path(dir.path()), None).unwrap();
    check_store(&store, "sqlite");
}

#[test]
fn sqlite_encrypted_stream_in_module_order_and_checked() {
    let dir = terrane_testkit::temp_dir();
    let path = SqliteStore::default_path(dir.path());
    let store = SqliteStore::open(&path, Some(&enc())).unwrap();
    check_store(&store, "sqlite encrypted");
    // A blob moved to another row fails to open: the stream says so.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute(
        "UPDATE objects SET attributes=(SELECT attributes FROM objects WHERE workspace='managed_before_data' AND type='terraform_data') WHERE workspace='managed_before_data' AND type='a_first_type'",
        [],
    )
    .unwrap();
    let err = store
        .stream("managed_before_data", &mut |_| ControlFlow::Continue(()))
        .expect_err("case moved_blob_refused");
    assert!(
        matches!(err, terrane_state::StateError::Decrypt { .. }),
        "case moved_blob_refused: {err}"
    );
}

#[test]
fn postgres_stream_in_module_order() {
    let Some(url) = terrane_testkit::pg_url() else {
        return;
    };
    let schema = format!("t_stream_{}", std::process::id());
    let store = PgStore::open(&url, &schema, None).unwrap();
    check_store(&store, "postgres");
}

#[test]
fn postgres_encrypted_stream_in_module_order() {
    let Some(url) = terrane_testkit::pg_url() else {
        return;
    };
    let schema = format!("t_stream_enc_{}", std::process::id());
    let store = PgStore::open(&url, &schema, Some(&enc())).unwrap();
    check_store(&store, "postgres encrypted");
}
