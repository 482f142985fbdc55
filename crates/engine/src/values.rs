//! The values a walk has computed so far, per module instance: input
//! variables, locals, outputs, module-call expansions and resource instance
//! values (planned values during plan, new states during apply), and the
//! [`InstanceScope`] that lets expressions read them.
//!
//! Lookups are keyed (module instance, resource), never scans: evaluating a
//! reference costs the same whatever the number of resources.

use std::collections::{BTreeMap, HashMap};
use std::sync::RwLock;
use terrane_config::Config;
use terrane_eval::{Missing, Scope};
use terrane_state::{InstanceKey, Mode, ModulePath};
use terrane_value::{Type, Value};

/// How a resource or module call expanded.
#[derive(Clone, Debug, PartialEq)]
pub enum Expansion {
    Single,
    Count(usize),
    /// Keys and their `each.value`.
    ForEach(BTreeMap<String, Value>),
    /// Not known yet (count/for_each unknown during plan).
    Unknown,
}

impl Expansion {
    pub fn keys(&self) -> Vec<InstanceKey> {
        match self {
            Expansion::Single => vec![InstanceKey::None],
            Expansion::Count(n) => (0..*n as i64).map(InstanceKey::Int).collect(),
            Expansion::ForEach(m) => m.keys().map(|k| InstanceKey::Str(k.clone())).collect(),
            Expansion::Unknown => Vec::new(),
        }
    }

    pub fn each_value(&self, key: &InstanceKey) -> Option<Value> {
        match (self, key) {
            (Expansion::ForEach(m), InstanceKey::Str(k)) => m.get(k).cloned(),
            _ => None,
        }
    }
}

/// One resource's instances.
#[derive(Clone, Debug)]
pub struct ResourceValues {
    pub expansion: Expansion,
    pub instances: BTreeMap<InstanceKey, Value>,
    /// The type of an instance value, for unknown placeholders.
    pub ty: Type,
}

impl ResourceValues {
    /// The value references see: an object (single), a tuple (count) or an
    /// object by key (for_each); unknown while the expansion is unknown.
    pub fn value(&self) -> Value {
        let get = |k: &InstanceKey| {
            self.instances
                .get(k)
                .cloned()
                .unwrap_or_else(|| Value::unknown(self.ty.clone()))
        };
        match &self.expansion {
            Expansion::Single => get(&InstanceKey::None),
            Expansion::Count(n) => {
                Value::tuple((0..*n as i64).map(|i| get(&InstanceKey::Int(i))).collect())
            }
            Expansion::ForEach(m) => Value::object(
                m.keys()
                    .map(|k| (k.clone(), get(&InstanceKey::Str(k.clone()))))
                    .collect(),
            ),
            Expansion::Unknown => Value::unknown(Type::Dynamic),
        }
    }
}

/// Values of one module instance.
#[derive(Clone, Debug, Default)]
pub struct ModuleValues {
    pub vars: BTreeMap<String, Value>,
    pub locals: BTreeMap<String, Value>,
    pub outputs: BTreeMap<String, Value>,
    pub resources: HashMap<(Mode, String, String), ResourceValues>,
    /// Expansion of each module call made from this instance.
    pub calls: BTreeMap<String, Expansion>,
    /// Results of this instance's open ephemeral resources, by (type,
    /// name): held only in memory for the walk.
    pub ephemerals: BTreeMap<(String, String), Value>,
}

/// Everything computed so far, shared by the tasks of a walk.
#[derive(Default)]
pub struct Values {
    modules: RwLock<HashMap<ModulePath, ModuleValues>>,
}

impl Values {
    pub fn new() -> Values {
        Values::default()
    }

    pub fn with<R>(&self, module: &ModulePath, f: impl FnOnce(&ModuleValues) -> R) -> Option<R> {
        let g = self.modules.read().unwrap_or_else(|p| p.into_inner());
        g.get(module).map(f)
    }

    pub fn update<R>(&self, module: &ModulePath, f: impl FnOnce(&mut ModuleValues) -> R) -> R {
        let mut g = self.modules.write().unwrap_or_else(|p| p.into_inner());
        f(g.entry(module.clone()).or_default())
    }

    pub fn set_instance(
        &self,
        module: &ModulePath,
        mode: Mode,
        ty: &str,
        name: &str,
        key: InstanceKey,
        v: Value,
    ) {
        self.update(module, |m| {
            if let Some(r) = m
                .resources
                .get_mut(&(mode, ty.to_string(), name.to_string()))
            {
                r.instances.insert(key, v);
            }
        });
    }

    /// The module instances of one configuration path (call names),
    /// expanded so far, in order.
    pub fn instances_of(&self, config_path: &[String]) -> Vec<ModulePath> {
        let g = self.modules.read().unwrap_or_else(|p| p.into_inner());
        let mut paths: Vec<ModulePath> = vec![ModulePath::default()];
        for call in config_path {
            let mut next = Vec::new();
            for p in &paths {
                if let Some(exp) = g.get(p).and_then(|m| m.calls.get(call)) {
                    for k in exp.keys() {
                        let mut q = p.0.clone();
                        q.push((call.clone(), k));
                        next.push(ModulePath(q));
                    }
                }
            }
            paths = next;
        }
        paths
    }
}

/// Names of one resource instance's evaluation: `count.index`,
/// `each.key`/`each.value`, `self`.
#[derive(Clone, Debug, Default)]
pub struct InstanceVars {
    pub count_index: Option<i64>,
    pub each: Option<(String, Value)>,
    pub self_value: Option<Value>,
}

/// The scope of an expression in one module instance.
pub struct InstanceScope<'a> {
    pub values: &'a Values,
    pub module: &'a ModulePath,
    pub config: &'a Config,
    pub inst: InstanceVars,
    pub paths: &'a [String; 3],
    pub workspace: &'a str,
}

impl InstanceScope<'_> {
    fn module_call_value(&self, name: &str) -> Option<Value> {
        let g = self
            .values
            .modules
            .read()
            .unwrap_or_else(|p| p.into_inner());
        let exp = g.get(self.module)?.calls.get(name)?.clone();
        let out_of = |key: InstanceKey| -> Value {
            let mut p = self.module.0.clone();
            p.push((name.to_string(), key));
            let outs = g
                .get(&ModulePath(p))
                .map(|m| m.outputs.clone())
                .unwrap_or_default();
            Value::object(outs)
        };
        Some(match &exp {
            Expansion::Single => out_of(InstanceKey::None),
            Expansion::Count(n) => Value::tuple(
                (0..*n as i64)
                    .map(|i| out_of(InstanceKey::Int(i)))
                    .collect(),
            ),
            Expansion::ForEach(m) => Value::object(
                m.keys()
                    .map(|k| (k.clone(), out_of(InstanceKey::Str(k.clone()))))
                    .collect(),
            ),
            Expansion::Unknown => Value::unknown(Type::Dynamic),
        })
    }

    fn resources_of(&self, mode: Mode, ty: &str) -> Value {
        let g = self
            .values
            .modules
            .read()
            .unwrap_or_else(|p| p.into_inner());
        let mut out = BTreeMap::new();
        if let Some(m) = g.get(self.module) {
            for ((md, t, n), r) in &m.resources {
                if *md == mode && t == ty {
                    out.insert(n.clone(), r.value());
                }
            }
        }
        Value::object(out)
    }

    /// `ephemeral.TYPE` in this module instance: each ephemeral resource
    /// of that type by name, unknown while it has not been opened (during
    /// validate, or when its configuration is not yet known).
    fn ephemerals_of(&self, ty: &str) -> Option<Value> {
        let cfg = self.config_module()?;
        let mut out = BTreeMap::new();
        for r in cfg.module.ephemeral_resources.iter().filter(|r| r.ty == ty) {
            let v = self
                .values
                .with(self.module, |m| {
                    m.ephemerals.get(&(ty.to_string(), r.name.clone())).cloned()
                })
                .flatten()
                .unwrap_or_else(|| Value::unknown(Type::Dynamic));
            out.insert(r.name.clone(), v.mark_ephemeral());
        }
        if out.is_empty() {
            // Undeclared: validation reports it at the reference.
            return Some(Value::unknown(Type::Dynamic));
        }
        Some(Value::object(out))
    }

    /// `path.module`: the root's path as given, a child module's directory
    /// (relative to the working directory, as Terraform gives it).
    fn module_dir(&self) -> String {
        if self.module.0.is_empty() {
            return self.paths[0].clone();
        }
        match self.config_module() {
            Some(c) => {
                let d = c.dir.display().to_string();
                d.strip_prefix("./")
                    .map(|r| format!("./{}", r.trim_start_matches("./")))
                    .unwrap_or(d)
            }
            None => self.paths[0].clone(),
        }
    }

    fn config_module(&self) -> Option<&Config> {
        let mut c = self.config;
        for (name, _) in &self.module.0 {
            c = c.children.get(name)?;
        }
        Some(c)
    }
}

impl Scope for InstanceScope<'_> {
    fn root(&self, name: &str) -> Option<Value> {
        let m = self.module;
        match name {
            "var" => self
                .values
                .with(m, |v| Value::object(v.vars.clone()))
                .or_else(|| Some(Value::object(BTreeMap::new()))),
            "local" => self
                .values
                .with(m, |v| Value::object(v.locals.clone()))
                .or_else(|| Some(Value::object(BTreeMap::new()))),
            "path" => Some(Value::object_from([
                ("module", Value::string(self.module_dir())),
                ("root", Value::string(self.paths[1].as_str())),
                ("cwd", Value::string(self.paths[2].as_str())),
            ])),
            "terraform" => Some(Value::object_from([(
                "workspace",
                Value::string(self.workspace),
            )])),
            "count" => self
                .inst
                .count_index
                .map(|i| Value::object_from([("index", Value::number(i))])),
            "each" => self.inst.each.as_ref().map(|(k, v)| {
                Value::object_from([("key", Value::string(k.as_str())), ("value", v.clone())])
            }),
            "self" => self.inst.self_value.clone(),
            "module" => {
                let cfg = self.config_module()?;
                Some(Value::object(
                    cfg.module
                        .module_calls
                        .keys()
                        .filter_map(|n| self.module_call_value(n).map(|v| (n.clone(), v)))
                        .collect(),
                ))
            }
            "data" => {
                let cfg = self.config_module()?;
                let mut types: BTreeMap<String, Value> = BTreeMap::new();
                for r in cfg.module.resources.iter().filter(|r| r.data) {
                    if !types.contains_key(&r.ty) {
                        types.insert(r.ty.clone(), self.resources_of(Mode::Data, &r.ty));
                    }
                }
                Some(Value::object(types))
            }
            // Not resources of a type named "ephemeral": the open ones'
            // results, the others unknown.
            "ephemeral" => {
                let cfg = self.config_module()?;
                let mut types: BTreeMap<String, Value> = BTreeMap::new();
                for r in &cfg.module.ephemeral_resources {
                    if !types.contains_key(&r.ty) {
                        types.insert(r.ty.clone(), self.ephemerals_of(&r.ty)?);
                    }
                }
                Some(Value::object(types))
            }
            ty => {
                let cfg = self.config_module()?;
                if cfg.module.resources.iter().any(|r| !r.data && r.ty == ty) {
                    Some(self.resources_of(Mode::Managed, ty))
                } else {
                    // Undeclared: attribute access reports the resource.
                    Some(Value::object(BTreeMap::new()))
                }
            }
        }
    }

    fn root_attr(&self, name: &str, attr: &str) -> Option<Value> {
        let m = self.module;
        match name {
            "var" => self.values.with(m, |v| v.vars.get(attr).cloned()).flatten(),
            "local" => self
                .values
                .with(m, |v| v.locals.get(attr).cloned())
                .flatten(),
            "module" => self.module_call_value(attr),
            "data" => {
                Some(self.resources_of(Mode::Data, attr)).filter(|v| v.length().unwrap_or(0) > 0)
            }
            "path" | "terraform" | "count" | "each" | "self" => None,
            "ephemeral" => self.ephemerals_of(attr),
            ty => self
                .values
                .with(m, |v| {
                    v.resources
                        .get(&(Mode::Managed, ty.to_string(), attr.to_string()))
                        .map(ResourceValues::value)
                })
                .flatten(),
        }
    }

    fn missing_attr(&self, name: &str, attr: &str) -> Option<Missing> {
        let cfg = self.config_module()?;
        let in_module = if self.module.0.is_empty() {
            "the root module".to_string()
        } else {
            format!(
                "module.{}",
                self.module
                    .0
                    .iter()
                    .map(|(n, _)| n.as_str())
                    .collect::<Vec<_>>()
                    .join(".module.")
            )
        };
        match name {
            "var" if !cfg.module.variables.contains_key(attr) => Some(Missing {
                summary: "Reference to undeclared input variable".into(),
                detail: format!("An input variable with the name {attr:?} has not been declared. This variable can be declared with a variable {attr:?} {{}} block."),
            }),
            "local" if !cfg.module.locals.contains_key(attr) => Some(Missing {
                summary: "Reference to undeclared local value".into(),
                detail: format!("A local value with the name {attr:?} has not been declared."),
            }),
            "module" if !cfg.module.module_calls.contains_key(attr) => Some(Missing {
                summary: "Reference to undeclared module".into(),
                detail: format!("No module call named {attr:?} is declared in {in_module}."),
            }),
            "var" | "local" | "module" | "path" | "terraform" | "count" | "each" | "self" | "data"
            | "ephemeral" => None,
            ty if cfg.module.resource(false, ty, attr).is_none() => Some(Missing {
                summary: "Reference to undeclared resource".into(),
                detail: format!("A managed resource {ty:?} {attr:?} has not been declared in {in_module}."),
            }),
            _ => None,
        }
    }
}
