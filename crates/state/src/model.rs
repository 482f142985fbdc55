//! The state model: what a store holds for one workspace.
//!
//! Attribute values are kept as the state JSON of the schema's implied type
//! (`terrane_value::json`), so stores never need schemas; the engine decodes
//! them with the schema it has. Everything here is plain data.

use crate::addr::{InstanceAddr, InstanceKey, ResourceAddr};
pub use crate::attrs::Attributes;
use std::collections::BTreeMap;
use terrane_value::Path;

/// Whether an object is usable or must be replaced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Status {
    #[default]
    Ready,
    Tainted,
}

/// One remote object as last recorded.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ObjectState {
    /// State JSON text of the attribute value (null while
    /// `attributes_flat` holds the object).
    pub attributes: Attributes,
    /// An object as Terraform before 0.12 wrote it (a v4 state file's
    /// `attributes_flat`), kept verbatim until the provider's
    /// UpgradeResourceState turns it into attributes (Terraform sends it as
    /// RawState.flatmap); None for every object written since.
    pub attributes_flat: Option<BTreeMap<String, String>>,
    pub schema_version: u64,
    pub status: Status,
    /// Provider-private bytes, opaque to terrane.
    pub private: Option<Vec<u8>>,
    pub sensitive_paths: Vec<Path>,
    /// Configuration addresses this object depended on when written.
    pub dependencies: Vec<String>,
    pub create_before_destroy: bool,
    /// The provider's resource identity schema version, when it reported one.
    pub identity_schema_version: Option<u64>,
}

/// The objects of one resource instance: the current one, and deposed ones
/// (replaced under create_before_destroy but not yet destroyed), by key.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct InstanceState {
    pub current: Option<ObjectState>,
    pub deposed: BTreeMap<String, ObjectState>,
    /// The instance key of the provider configuration (one with OpenTofu's
    /// provider `for_each`) this instance's objects belong to; None for a
    /// configuration without for_each.
    pub provider_key: Option<String>,
}

/// `provider["..."].by_region["a"]` split into the configuration
/// (`provider["..."].by_region`) and the instance key (`a`), as OpenTofu
/// writes an instance's provider; a configuration without a key is whole.
pub fn split_provider_instance(s: &str) -> (String, Option<String>) {
    let base = match s.find("provider[\"") {
        Some(i) => i + "provider[".len(),
        None => return (s.to_string(), None),
    };
    // The end of the quoted source address.
    let Some(end) = s[base + 1..].find("\"]").map(|e| base + 1 + e + 2) else {
        return (s.to_string(), None);
    };
    let rest = &s[end..];
    let Some(open) = rest.find('[') else {
        return (s.to_string(), None);
    };
    let quoted = rest[open + 1..].strip_suffix(']').unwrap_or_default();
    match serde_json::from_str::<String>(quoted) {
        Ok(k) => (s[..end + open].to_string(), Some(k)),
        Err(_) => (s.to_string(), None),
    }
}

/// A configuration address with an optional instance key, as state
/// records an instance's provider.
pub fn provider_instance_string(config: &str, key: Option<&str>) -> String {
    match key {
        Some(k) => format!("{config}[{}]", serde_json::Value::String(k.into())),
        None => config.to_string(),
    }
}

/// A resource: its provider configuration address and its instances.
#[derive(Clone, Debug, PartialEq)]
pub struct ResourceState {
    /// e.g. `provider["registry.terraform.io/hashicorp/random"]`.
    pub provider: String,
    pub instances: BTreeMap<InstanceKey, InstanceState>,
}

impl ResourceState {
    /// The provider (configuration and, for a configuration with for_each,
    /// instance key) the instance at `key` belongs to.
    pub fn instance_provider(&self, key: &InstanceKey) -> String {
        let k = self
            .instances
            .get(key)
            .and_then(|i| i.provider_key.as_deref());
        provider_instance_string(&self.provider, k)
    }
}

/// A root-module output value.
#[derive(Clone, Debug, PartialEq)]
pub struct OutputState {
    /// State JSON of the value, of type `ty`.
    pub value: serde_json::Value,
    /// Type-constraint JSON of the value.
    pub ty: serde_json::Value,
    pub sensitive: bool,
}

impl OutputState {
    /// The value with its recorded type (a list stays a list, a map a
    /// map); without a usable type, decoded loosely. Not marked: whether it
    /// is sensitive is [`OutputState::sensitive`].
    pub fn stored_value(&self) -> terrane_value::Value {
        use terrane_value::{json, typejson, Type};
        let ty = typejson::from_json(&self.ty).unwrap_or(Type::Dynamic);
        json::decode(&self.value, &ty).unwrap_or_else(|_| json::decode_loose(&self.value))
    }
}

/// A whole workspace's state at one serial.
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    pub lineage: String,
    pub serial: u64,
    pub terraform_version: String,
    pub resources: BTreeMap<ResourceAddr, ResourceState>,
    pub outputs: BTreeMap<String, OutputState>,
}

/// One durable change to a workspace.
#[derive(Clone, Debug, PartialEq)]
pub enum Change {
    /// Creates or replaces an object (current when `deposed` is None).
    SetObject {
        addr: InstanceAddr,
        deposed: Option<String>,
        provider: String,
        object: ObjectState,
    },
    /// Removes an object; a resource with no objects left disappears.
    RemoveObject {
        addr: InstanceAddr,
        deposed: Option<String>,
    },
    /// Moves the current object to a deposed key (create_before_destroy).
    Depose {
        addr: InstanceAddr,
        key: String,
    },
    SetOutput {
        name: String,
        output: OutputState,
    },
    RemoveOutput {
        name: String,
    },
}

impl Snapshot {
    /// An empty state with a fresh lineage.
    pub fn empty() -> Snapshot {
        Snapshot {
            lineage: uuid::Uuid::new_v4().to_string(),
            serial: 0,
            terraform_version: crate::TERRAFORM_VERSION.into(),
            resources: BTreeMap::new(),
            outputs: BTreeMap::new(),
        }
    }

    /// The object at `addr` (current, or the given deposed key).
    pub fn object(&self, addr: &InstanceAddr, deposed: Option<&str>) -> Option<&ObjectState> {
        let inst = self
            .resources
            .get(&addr.resource)?
            .instances
            .get(&addr.key)?;
        match deposed {
            None => inst.current.as_ref(),
            Some(k) => inst.deposed.get(k),
        }
    }

    /// Number of objects (current and deposed) in the state.
    pub fn object_count(&self) -> usize {
        self.resources
            .values()
            .flat_map(|r| r.instances.values())
            .map(|i| usize::from(i.current.is_some()) + i.deposed.len())
            .sum()
    }

    /// Applies one change in memory, exactly as the stores apply it durably
    /// (the object moves into the snapshot).
    pub fn apply(&mut self, change: Change) {
        match change {
            Change::SetObject {
                addr,
                deposed,
                provider,
                object,
            } => {
                let (config, key) = split_provider_instance(&provider);
                let res = self
                    .resources
                    .entry(addr.resource)
                    .or_insert_with(|| ResourceState {
                        provider: config.clone(),
                        instances: BTreeMap::new(),
                    });
                if res.provider != config {
                    // Another configuration: the stores rewrite every
                    // object's provider to it (without instance keys).
                    res.provider = config;
                    res.instances
                        .values_mut()
                        .for_each(|i| i.provider_key = None);
                }
                let inst = res.instances.entry(addr.key).or_default();
                inst.provider_key = key;
                match deposed {
                    None => inst.current = Some(object),
                    Some(k) => {
                        inst.deposed.insert(k, object);
                    }
                }
            }
            Change::RemoveObject { addr, deposed } => {
                if let Some(res) = self.resources.get_mut(&addr.resource) {
                    if let Some(inst) = res.instances.get_mut(&addr.key) {
                        match deposed {
                            None => inst.current = None,
                            Some(k) => {
                                inst.deposed.remove(&k);
                            }
                        }
                        if inst.current.is_none() && inst.deposed.is_empty() {
                            res.instances.remove(&addr.key);
                        }
                    }
                    if res.instances.is_empty() {
                        self.resources.remove(&addr.resource);
                    }
                }
            }
            Change::Depose { addr, key } => {
                if let Some(inst) = self
                    .resources
                    .get_mut(&addr.resource)
                    .and_then(|r| r.instances.get_mut(&addr.key))
                {
                    if let Some(cur) = inst.current.take() {
                        inst.deposed.insert(key, cur);
                    }
                }
            }
            Change::SetOutput { name, output } => {
                self.outputs.insert(name, output);
            }
            Change::RemoveOutput { name } => {
                self.outputs.remove(&name);
            }
        }
    }
}

/// A fresh deposed key: 8 lowercase hex digits.
pub fn new_deposed_key() -> String {
    format!("{:08x}", rand::random::<u32>())
}

/// The changes that build `s` from an empty state.
pub fn changes_for(s: &Snapshot) -> Vec<Change> {
    let mut out = Vec::with_capacity(s.object_count() + s.outputs.len());
    for (raddr, r) in &s.resources {
        for (key, inst) in &r.instances {
            let addr = raddr.instance(key.clone());
            let objects = inst
                .current
                .iter()
                .map(|o| (None, o))
                .chain(inst.deposed.iter().map(|(k, o)| (Some(k.clone()), o)));
            let provider = r.instance_provider(key);
            for (deposed, o) in objects {
                out.push(Change::SetObject {
                    addr: addr.clone(),
                    deposed,
                    provider: provider.clone(),
                    object: o.clone(),
                });
            }
        }
    }
    for (name, o) in &s.outputs {
        out.push(Change::SetOutput {
            name: name.clone(),
            output: o.clone(),
        });
    }
    out
}
