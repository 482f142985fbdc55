//! How model objects become table rows and back, shared by the SQLite and
//! PostgreSQL stores: addresses split into columns (module and key as small
//! JSON texts), values as (optionally encrypted) JSON bytes.

use crate::addr::{InstanceAddr, InstanceKey, Mode, ModulePath, ResourceAddr};
use crate::crypt::Cipher;
use crate::error::{Result, StateError};
use crate::model::{Attributes, ObjectState, OutputState, ResourceState, Snapshot, Status};
use crate::tfstate::{path_from_json, path_to_json};
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;

/// The columns of an object row as the stores select them, in
/// [`ObjectRow`]'s field order (each store reads them by position).
pub(crate) const OBJECT_COLUMNS: &str = "module, mode, type, name, key, deposed, provider, schema_version, tainted, attributes, private, sensitive, dependencies, cbd, identity_schema_version, attributes_flat";

/// One object row.
#[derive(Debug, Clone)]
pub(crate) struct ObjectRow {
    pub module: String,
    pub mode: String,
    pub ty: String,
    pub name: String,
    pub key: String,
    /// Empty for the current object.
    pub deposed: String,
    pub provider: String,
    pub schema_version: i64,
    pub tainted: bool,
    pub attributes: Vec<u8>,
    /// A pre-0.12 object's flatmap (JSON of a string map), sealed like
    /// `attributes` under its own column name; NULL once upgraded.
    pub attributes_flat: Option<Vec<u8>>,
    pub private: Option<Vec<u8>>,
    pub sensitive: String,
    pub dependencies: String,
    pub cbd: bool,
    pub identity_schema_version: Option<i64>,
}

/// One output row.
#[derive(Debug, Clone)]
pub(crate) struct OutputRow {
    pub name: String,
    pub value: Vec<u8>,
    pub ty: String,
    pub sensitive: bool,
}

pub(crate) fn key_json(k: &InstanceKey) -> String {
    match k {
        InstanceKey::None => "null".into(),
        InstanceKey::Int(i) => i.to_string(),
        InstanceKey::Str(s) => Json::String(s.clone()).to_string(),
    }
}

fn key_from_json(j: &Json) -> Result<InstanceKey> {
    match j {
        Json::Null => Ok(InstanceKey::None),
        Json::Number(n) => n
            .as_i64()
            .map(InstanceKey::Int)
            .ok_or_else(|| bad("instance key", "not an integer")),
        Json::String(s) => Ok(InstanceKey::Str(s.clone())),
        _ => Err(bad("instance key", "must be null, a number or a string")),
    }
}

pub(crate) fn module_json(m: &ModulePath) -> String {
    Json::Array(
        m.0.iter()
            .map(|(n, k)| {
                json!([
                    n,
                    serde_json::from_str::<Json>(&key_json(k)).unwrap_or(Json::Null)
                ])
            })
            .collect(),
    )
    .to_string()
}

fn bad(what: &str, detail: &str) -> StateError {
    StateError::Data {
        what: what.into(),
        detail: detail.into(),
    }
}

fn parse_json(what: &str, text: &str) -> Result<Json> {
    serde_json::from_str(text).map_err(|e| bad(what, &e.to_string()))
}

fn seal(cipher: Option<&Cipher>, plain: Vec<u8>, aad: &[u8]) -> Vec<u8> {
    match cipher {
        Some(c) => c.seal(&plain, aad),
        None => plain,
    }
}

/// The column's plaintext. The associated data (`aad`) and the name in
/// the error (`what`) are only made when a cipher needs them.
fn unseal(
    cipher: Option<&Cipher>,
    data: &[u8],
    aad: impl FnOnce() -> Vec<u8>,
    what: impl FnOnce() -> String,
    path: &str,
) -> Result<Vec<u8>> {
    match cipher {
        Some(c) => c.open(data, &aad()).ok_or_else(|| StateError::Decrypt {
            path: path.into(),
            what: what(),
        }),
        None => Ok(data.to_vec()),
    }
}

/// What an object's encrypted column is bound to: workspace, instance
/// address columns and column name. The deposed key is left out: deposing
/// moves a row to a deposed key without re-encrypting it.
pub(crate) fn object_aad(
    workspace: &str,
    module: &str,
    mode: &str,
    ty: &str,
    name: &str,
    key: &str,
    column: &str,
) -> Vec<u8> {
    crate::crypt::aad(&[
        b"object",
        workspace.as_bytes(),
        module.as_bytes(),
        mode.as_bytes(),
        ty.as_bytes(),
        name.as_bytes(),
        key.as_bytes(),
        column.as_bytes(),
    ])
}

/// What an output's encrypted value is bound to.
pub(crate) fn output_aad(workspace: &str, name: &str) -> Vec<u8> {
    crate::crypt::aad(&[b"output", workspace.as_bytes(), name.as_bytes()])
}

/// A serial as stored (SQL BIGINT): at most `i64::MAX`.
pub(crate) fn serial_to_sql(serial: u64) -> Result<i64> {
    i64::try_from(serial).map_err(|_| {
        bad(
            "serial",
            &format!(
                "{serial} is out of range: a state serial is at most {}",
                i64::MAX
            ),
        )
    })
}

/// A serial read back: a negative one is corruption, never read as 0.
pub(crate) fn serial_from_sql(serial: i64, path: &str) -> Result<u64> {
    u64::try_from(serial).map_err(|_| StateError::Corrupt {
        path: path.into(),
        detail: format!("the stored serial {serial} is negative"),
    })
}

pub(crate) fn object_row(
    workspace: &str,
    addr: &InstanceAddr,
    deposed: Option<&str>,
    provider: &str,
    o: &ObjectState,
    cipher: Option<&Cipher>,
) -> ObjectRow {
    let (module, mode, key) = (
        module_json(&addr.resource.module),
        addr.resource.mode.as_str(),
        key_json(&addr.key),
    );
    let aad = |column: &str| {
        object_aad(
            workspace,
            &module,
            mode,
            &addr.resource.ty,
            &addr.resource.name,
            &key,
            column,
        )
    };
    ObjectRow {
        attributes: seal(
            cipher,
            o.attributes.as_str().as_bytes().to_vec(),
            &aad("attributes"),
        ),
        attributes_flat: o.attributes_flat.as_ref().map(|f| {
            seal(
                cipher,
                serde_json::to_vec(f).unwrap_or_default(),
                &aad("attributes_flat"),
            )
        }),
        private: o
            .private
            .as_ref()
            .map(|p| seal(cipher, p.clone(), &aad("private"))),
        module,
        mode: mode.into(),
        ty: addr.resource.ty.clone(),
        name: addr.resource.name.clone(),
        key,
        deposed: deposed.unwrap_or("").into(),
        provider: provider.into(),
        schema_version: o.schema_version as i64,
        tainted: o.status == Status::Tainted,
        sensitive: Json::Array(o.sensitive_paths.iter().map(path_to_json).collect()).to_string(),
        dependencies: Json::from(o.dependencies.clone()).to_string(),
        cbd: o.create_before_destroy,
        identity_schema_version: o.identity_schema_version.map(|v| v as i64),
    }
}

pub(crate) fn output_row(
    workspace: &str,
    name: &str,
    o: &OutputState,
    cipher: Option<&Cipher>,
) -> OutputRow {
    OutputRow {
        name: name.into(),
        value: seal(
            cipher,
            serde_json::to_vec(&o.value).unwrap_or_default(),
            &output_aad(workspace, name),
        ),
        ty: o.ty.to_string(),
        sensitive: o.sensitive,
    }
}

/// The module path a row's `module` column holds.
pub(crate) fn module_from_json(module: &str) -> Result<ModulePath> {
    match parse_json("module path", module)? {
        Json::Array(steps) => Ok(ModulePath(
            steps
                .iter()
                .map(|s| match s {
                    Json::Array(pair) if pair.len() == 2 => Ok((
                        pair[0].as_str().unwrap_or_default().to_string(),
                        key_from_json(&pair[1])?,
                    )),
                    _ => Err(bad("module path", "steps must be [name, key] pairs")),
                })
                .collect::<Result<_>>()?,
        )),
        _ => Err(bad("module path", "must be an array")),
    }
}

/// The instance address a row's address columns name.
pub(crate) fn addr_from_row(
    module: &str,
    mode: &str,
    ty: String,
    name: String,
    key: &str,
) -> Result<InstanceAddr> {
    let module = module_from_json(module)?;
    let mode = Mode::parse(mode).ok_or_else(|| bad("resource mode", mode))?;
    Ok(InstanceAddr {
        resource: ResourceAddr {
            module,
            mode,
            ty,
            name,
        },
        key: key_from_json(&parse_json("instance key", key)?)?,
    })
}

/// One object row decoded (and opened, when sealed): its address, deposed
/// key (empty for the current object), the provider string as stored and
/// the object; `path` names the store in errors.
pub(crate) struct DecodedRow {
    pub addr: InstanceAddr,
    pub deposed: String,
    pub provider: String,
    pub object: ObjectState,
}

pub(crate) fn object_from_row(
    workspace: &str,
    r: ObjectRow,
    cipher: Option<&Cipher>,
    path: &str,
) -> Result<DecodedRow> {
    let addr = addr_from_row(&r.module, &r.mode, r.ty, r.name, &r.key)?;
    // The row's type and name columns moved into the address unchanged.
    let aad = |column: &str| {
        object_aad(
            workspace,
            &r.module,
            &r.mode,
            &addr.resource.ty,
            &addr.resource.name,
            &r.key,
            column,
        )
    };
    let what = || addr.to_string();
    let attributes = Attributes::parse_bytes(unseal(
        cipher,
        &r.attributes,
        || aad("attributes"),
        what,
        path,
    )?)
    .map_err(|e| bad(&what(), &e.to_string()))?;
    let attributes_flat = match &r.attributes_flat {
        Some(f) => Some(
            serde_json::from_slice::<BTreeMap<String, String>>(&unseal(
                cipher,
                f,
                || aad("attributes_flat"),
                what,
                path,
            )?)
            .map_err(|e| bad(&what(), &format!("attributes_flat: {e}")))?,
        ),
        None => None,
    };
    let private = match &r.private {
        Some(p) => Some(unseal(cipher, p, || aad("private"), what, path)?),
        None => None,
    };
    let sensitive_paths = match parse_json("sensitive paths", &r.sensitive)? {
        Json::Array(ps) => ps
            .iter()
            .map(|p| path_from_json(p).map_err(|e| bad(&what(), &e)))
            .collect::<Result<Vec<_>>>()?,
        _ => return Err(bad(&what(), "sensitive paths must be an array")),
    };
    let dependencies = dependencies_from_row(&r.dependencies, what)?;
    let object = ObjectState {
        attributes,
        attributes_flat,
        schema_version: u64::try_from(r.schema_version)
            .map_err(|_| bad(&what(), "negative schema version"))?,
        status: if r.tainted {
            Status::Tainted
        } else {
            Status::Ready
        },
        private,
        sensitive_paths,
        dependencies,
        create_before_destroy: r.cbd,
        identity_schema_version: r
            .identity_schema_version
            .map(|v| u64::try_from(v).map_err(|_| bad(&what(), "negative identity schema version")))
            .transpose()?,
    };
    Ok(DecodedRow {
        addr,
        deposed: r.deposed,
        provider: r.provider,
        object,
    })
}

/// A row's `dependencies` column; `what` names the object in errors.
/// The dependencies column; `what` names the object in an error.
pub(crate) fn dependencies_from_row(
    text: &str,
    what: impl FnOnce() -> String,
) -> Result<Vec<String>> {
    serde_json::from_str::<Vec<String>>(text).map_err(|e| bad(&what(), &e.to_string()))
}

/// Output rows decoded (and opened, when sealed).
pub(crate) fn outputs_from_rows(
    workspace: &str,
    outputs: Vec<OutputRow>,
    cipher: Option<&Cipher>,
    path: &str,
) -> Result<BTreeMap<String, OutputState>> {
    let mut outs = BTreeMap::new();
    for o in outputs {
        let value = serde_json::from_slice(&unseal(
            cipher,
            &o.value,
            || output_aad(workspace, &o.name),
            || format!("output {}", o.name),
            path,
        )?)
        .map_err(|e| bad(&o.name, &e.to_string()))?;
        outs.insert(
            o.name.clone(),
            OutputState {
                value,
                ty: parse_json("output type", &o.ty)?,
                sensitive: o.sensitive,
            },
        );
    }
    Ok(outs)
}

/// Rebuilds a snapshot from rows, each decoded as it comes (a store may
/// hand them over while reading them, never holding them all); `path`
/// names the store in errors.
#[allow(clippy::too_many_arguments)]
pub(crate) fn snapshot_from_rows(
    workspace: &str,
    lineage: String,
    serial: i64,
    terraform_version: String,
    objects: impl IntoIterator<Item = Result<ObjectRow>>,
    outputs: Vec<OutputRow>,
    cipher: Option<&Cipher>,
    path: &str,
) -> Result<Snapshot> {
    let serial = serial_from_sql(serial, path)?;
    let mut resources: BTreeMap<ResourceAddr, ResourceState> = BTreeMap::new();
    for r in objects {
        let r = r?;
        let DecodedRow {
            addr,
            deposed,
            provider,
            object,
        } = object_from_row(workspace, r, cipher, path)?;
        let (config, provider_key) = crate::model::split_provider_instance(&provider);
        let res = resources
            .entry(addr.resource.clone())
            .or_insert_with(|| ResourceState {
                provider: config,
                instances: BTreeMap::new(),
            });
        let inst = res.instances.entry(addr.key.clone()).or_default();
        inst.provider_key = provider_key;
        if deposed.is_empty() {
            inst.current = Some(object);
        } else {
            inst.deposed.insert(deposed, object);
        }
    }
    Ok(Snapshot {
        lineage,
        serial,
        terraform_version,
        resources,
        outputs: outputs_from_rows(workspace, outputs, cipher, path)?,
    })
}
