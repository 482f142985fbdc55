//! Test doubles for `terrane test`: mocked provider configurations
//! (`mock_provider`) and overridden resources and data sources
//! (`override_resource`, `override_data`) and modules (`override_module`),
//! as Terraform's testing framework has them.
//!
//! A double is a [`Provider`] wrapped around the real one, which still
//! answers the schema, configuration checks, state upgrades and provider
//! functions; it never configures the real provider and never sends it a
//! read, plan, apply or import. Its values follow Terraform's rules:
//! * plan keeps the proposed value; a computed attribute left null becomes
//!   unknown, or, when the double's values apply during plan
//!   (`override_during = plan`), the given value or a generated one;
//! * apply (and a data source's read) replaces what is unknown with the
//!   given value, else a generated one: 8 random lowercase letters and
//!   digits for a string, 0, false, empty collections, objects generated
//!   attribute by attribute;
//! * a read returns the prior value as it was; destroy returns null.
//!
//! The walk wraps a provider configuration's instance when
//! [`TestDoubles::mock_for`] finds its mock, and a resource's provider when
//! [`TestDoubles::override_for`] finds its override.

use crate::provider::addr::{ProviderAddr, ProviderConfigKey};
use crate::provider::api::*;
use std::collections::BTreeMap;
use std::sync::Arc;
use terrane_schema::{AttrType, Block, BlockNesting};
use terrane_value::{Type, Value};

/// Values for a resource or data source: an object of attribute values,
/// and whether they apply during plan already.
#[derive(Clone, Debug)]
pub struct DoubleValues {
    pub values: Value,
    pub during_plan: bool,
}

/// One `mock_provider` block.
#[derive(Clone, Debug)]
pub struct Mock {
    pub addr: ProviderAddr,
    pub alias: Option<String>,
    /// `mock_resource` defaults by resource type.
    pub resources: BTreeMap<String, DoubleValues>,
    /// `mock_data` defaults by data source type.
    pub data: BTreeMap<String, DoubleValues>,
}

/// One `override_resource` or `override_data` block.
#[derive(Clone, Debug)]
pub struct Override {
    /// The resource as configured, without instance keys:
    /// `random_id.x`, `data.local_file.f`, `module.a.random_id.x`.
    pub target: String,
    pub values: DoubleValues,
}

/// One `override_module` block: the module call's outputs are these
/// values (an output not given is null) and nothing inside the module is
/// planned, applied or read.
#[derive(Clone, Debug)]
pub struct ModuleOverride {
    /// The module's configuration path (`module.a.module.b` is `[a, b]`).
    pub path: Vec<String>,
    /// An object of output values.
    pub outputs: Value,
}

/// The doubles of one walk; the first override matching a target wins (a
/// run's, then its file's, then its mock providers').
#[derive(Clone, Debug, Default)]
pub struct TestDoubles {
    pub mocks: Vec<Mock>,
    pub overrides: Vec<Override>,
    pub modules: Vec<ModuleOverride>,
}

impl TestDoubles {
    /// The override of the module at configuration path `module`, if
    /// that very module is overridden.
    pub fn module_override(&self, module: &[String]) -> Option<&ModuleOverride> {
        self.modules.iter().find(|m| m.path == module)
    }

    /// Whether `module` is an overridden module or lies within one (its
    /// contents are then not run).
    pub fn inside_overridden_module(&self, module: &[String]) -> bool {
        self.modules.iter().any(|m| module.starts_with(&m.path))
    }

    /// The mock of a provider configuration (its address and alias; a
    /// child module's configuration is the root's it inherits).
    pub fn mock_for(&self, key: &ProviderConfigKey) -> Option<&Mock> {
        self.mocks
            .iter()
            .find(|m| m.addr == key.addr && m.alias == key.alias)
    }

    /// The override of the resource whose configuration address is
    /// `target`.
    pub fn override_for(&self, target: &str) -> Option<&Override> {
        self.overrides.iter().find(|o| o.target == target)
    }

    /// `inner` as the walk should use it for configuration `key`.
    pub fn provider(&self, key: &ProviderConfigKey, inner: Arc<dyn Provider>) -> Arc<dyn Provider> {
        match self.mock_for(key) {
            Some(m) => Arc::new(Double {
                inner,
                source: Source::Mock(m.clone()),
            }),
            None => inner,
        }
    }

    /// A resource's provider as the walk should use it.
    pub fn resource_provider(&self, target: &str, inner: Arc<dyn Provider>) -> Arc<dyn Provider> {
        match self.override_for(target) {
            Some(o) => Arc::new(Double {
                inner,
                source: Source::Fixed(o.values.clone()),
            }),
            None => inner,
        }
    }
}

enum Source {
    Mock(Mock),
    Fixed(DoubleValues),
}

struct Double {
    inner: Arc<dyn Provider>,
    source: Source,
}

#[derive(Clone, Copy, PartialEq)]
enum Fill {
    /// Computed attributes left null become unknown.
    Unknown,
    /// Null computed attributes and unknown values get values.
    Known,
}

impl Double {
    fn values(&self, type_name: &str, data: bool) -> Option<&DoubleValues> {
        match &self.source {
            Source::Fixed(v) => Some(v),
            Source::Mock(m) if data => m.data.get(type_name),
            Source::Mock(m) => m.resources.get(type_name),
        }
    }

    async fn block(&self, type_name: &str, data: bool) -> Result<Block, ProviderError> {
        let schema = self.inner.get_schema().await?;
        let s = if data {
            schema.data_source(type_name)
        } else {
            schema.resource(type_name)
        };
        Ok(s.map(|s| s.block.clone()).unwrap_or_default())
    }
}

/// A generated value of type `ty`, as Terraform's mocks make them.
pub fn generated(ty: &Type) -> Value {
    use rand::Rng;
    match ty {
        Type::String => {
            const CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
            let mut rng = rand::thread_rng();
            let s: String = (0..8)
                .map(|_| CHARS[rng.gen_range(0..CHARS.len())] as char)
                .collect();
            Value::string(s)
        }
        Type::Number => Value::number(0),
        Type::Bool => Value::bool(false),
        Type::List(e) => Value::list((**e).clone(), Vec::new()),
        Type::Set(e) => Value::set((**e).clone(), Vec::new()),
        Type::Map(e) => Value::map((**e).clone(), BTreeMap::new()),
        Type::Object(o) => Value::object_typed(
            ty,
            o.attrs()
                .iter()
                .map(|(k, t)| (k.clone(), generated(t)))
                .collect(),
        ),
        Type::Tuple(ts) => Value::tuple(ts.iter().map(generated).collect()),
        Type::Dynamic => Value::null(Type::Dynamic),
    }
}

/// The given value for an attribute, converted to its type.
fn given(over: Option<&Value>, name: &str, ty: &Type) -> Result<Option<Value>, String> {
    let Some(v) = over.and_then(|o| o.get_attr(name)) else {
        return Ok(None);
    };
    terrane_value::convert::convert(v, ty)
        .map(Some)
        .map_err(|e| format!("The value for {name:?} is not suitable: {e}."))
}

/// `v` (an object of `block`'s type) with its computed values filled.
fn fill(block: &Block, v: &Value, over: Option<&Value>, how: Fill) -> Result<Value, String> {
    if !v.is_known() {
        return Ok(match how {
            Fill::Known => generated_block(v.ty(), over),
            Fill::Unknown => v.clone(),
        });
    }
    if v.is_null() {
        return Ok(v.clone());
    }
    let Some(entries) = v.entries() else {
        return Ok(v.clone());
    };
    let mut out = entries.clone();
    for (name, a) in &block.attributes {
        let Some(cur) = entries.get(name) else {
            continue;
        };
        let ty = match &a.ty {
            AttrType::Type(t) => t.without_optional_markers(),
            AttrType::Nested(n) => n.implied_type(),
        };
        let new = match how {
            // Write-only: never kept, as a provider keeps none (an
            // ephemeral value fed to it would differ between plan and
            // apply).
            _ if a.write_only => Value::null(ty),
            Fill::Unknown if a.computed && cur.is_null() => Value::unknown(ty),
            Fill::Known if (a.computed && cur.is_null()) || !cur.is_wholly_known() => {
                match given(over, name, &ty)? {
                    Some(g) => g,
                    None if cur.is_null() || !cur.is_known() => generated(&ty),
                    None => known(cur),
                }
            }
            _ => cur.clone(),
        };
        out.insert(name.clone(), new);
    }
    for (name, nb) in &block.block_types {
        let Some(cur) = entries.get(name) else {
            continue;
        };
        let sub = over.and_then(|o| o.get_attr(name));
        let new = match nb.nesting {
            BlockNesting::Single | BlockNesting::Group => fill(&nb.block, cur, sub, how)?,
            _ if !cur.is_known() => fill(&nb.block, cur, None, how)?,
            _ => cur.map_children_try(|c| fill(&nb.block, c, None, how))?,
        };
        out.insert(name.clone(), new);
    }
    Ok(Value::object_typed_of(v.ty(), out))
}

/// A value generated whole (it was unknown), or the one given.
fn generated_block(ty: &Type, over: Option<&Value>) -> Value {
    match over {
        Some(o) => terrane_value::convert::convert(o, ty).unwrap_or_else(|_| generated(ty)),
        None => generated(ty),
    }
}

/// `v` with the unknown values inside it generated.
fn known(v: &Value) -> Value {
    if !v.is_known() {
        return generated(v.ty());
    }
    v.map_children(known)
}

/// Map a value's children, stopping at the first error.
trait TryMap {
    fn map_children_try(
        &self,
        f: impl FnMut(&Value) -> Result<Value, String>,
    ) -> Result<Value, String>;
}

impl TryMap for Value {
    fn map_children_try(
        &self,
        mut f: impl FnMut(&Value) -> Result<Value, String>,
    ) -> Result<Value, String> {
        let mut err = None;
        let v = self.map_children(|c| match f(c) {
            Ok(v) => v,
            Err(e) => {
                err.get_or_insert(e);
                c.clone()
            }
        });
        match err {
            Some(e) => Err(e),
            None => Ok(v),
        }
    }
}

fn invalid(detail: String) -> Diagnostics {
    let mut d = Diagnostics::new();
    d.push(Diagnostic::error(
        "Invalid mock or override value",
        detail,
        None,
    ));
    d
}

#[async_trait::async_trait]
impl Provider for Double {
    fn address(&self) -> &str {
        self.inner.address()
    }
    async fn get_schema(&self) -> Result<Arc<ProviderSchema>, ProviderError> {
        self.inner.get_schema().await
    }
    async fn validate_provider_config(
        &self,
        _config: &Value,
    ) -> Result<Diagnostics, ProviderError> {
        // A mock's configuration is Terraform's, never the provider's.
        match self.source {
            Source::Mock(_) => Ok(Diagnostics::new()),
            Source::Fixed(_) => self.inner.validate_provider_config(_config).await,
        }
    }
    async fn validate_resource_config(
        &self,
        type_name: &str,
        config: &Value,
    ) -> Result<Diagnostics, ProviderError> {
        self.inner.validate_resource_config(type_name, config).await
    }
    async fn validate_data_resource_config(
        &self,
        type_name: &str,
        config: &Value,
    ) -> Result<Diagnostics, ProviderError> {
        self.inner
            .validate_data_resource_config(type_name, config)
            .await
    }
    async fn configure_provider(
        &self,
        terraform_version: &str,
        config: &Value,
    ) -> Result<Diagnostics, ProviderError> {
        match self.source {
            Source::Mock(_) => Ok(Diagnostics::new()),
            Source::Fixed(_) => {
                self.inner
                    .configure_provider(terraform_version, config)
                    .await
            }
        }
    }
    async fn upgrade_resource_state(
        &self,
        req: UpgradeRequest<'_>,
    ) -> Result<UpgradeResponse, ProviderError> {
        self.inner.upgrade_resource_state(req).await
    }
    async fn read_resource(&self, req: ReadRequest<'_>) -> Result<ReadResponse, ProviderError> {
        Ok(ReadResponse {
            new_state: req.prior_state.clone(),
            private: req.private.to_vec(),
            deferred: None,
            diagnostics: Diagnostics::new(),
        })
    }
    async fn plan_resource_change(
        &self,
        req: PlanRequest<'_>,
    ) -> Result<PlanResponse, ProviderError> {
        let mut resp = PlanResponse {
            planned_state: req.proposed_new_state.clone(),
            requires_replace: Vec::new(),
            planned_private: req.prior_private.to_vec(),
            legacy_type_system: false,
            deferred: None,
            diagnostics: Diagnostics::new(),
        };
        if req.proposed_new_state.is_null() {
            return Ok(resp);
        }
        let block = self.block(req.type_name, false).await?;
        let vals = self.values(req.type_name, false);
        let (over, how) = match vals {
            Some(v) if v.during_plan => (Some(&v.values), Fill::Known),
            _ => (None, Fill::Unknown),
        };
        match fill(&block, req.proposed_new_state, over, how) {
            Ok(v) => resp.planned_state = v,
            Err(e) => resp.diagnostics = invalid(e),
        }
        Ok(resp)
    }
    async fn apply_resource_change(
        &self,
        req: ApplyRequest<'_>,
    ) -> Result<ApplyResponse, ProviderError> {
        let mut resp = ApplyResponse {
            new_state: req.planned_state.clone(),
            private: req.planned_private.to_vec(),
            legacy_type_system: false,
            diagnostics: Diagnostics::new(),
        };
        if req.planned_state.is_null() {
            return Ok(resp);
        }
        let block = self.block(req.type_name, false).await?;
        let over = self.values(req.type_name, false).map(|v| &v.values);
        match fill(&block, req.planned_state, over, Fill::Known) {
            Ok(v) => resp.new_state = v,
            Err(e) => resp.diagnostics = invalid(e),
        }
        Ok(resp)
    }
    async fn import_resource_state(
        &self,
        type_name: &str,
        id: &str,
    ) -> Result<ImportResponse, ProviderError> {
        let block = self.block(type_name, false).await?;
        let ty = block.implied_type();
        let mut state = generated(&ty);
        if let (Some(e), true) = (state.entries(), block.attributes.contains_key("id")) {
            let mut e = e.clone();
            e.insert("id".into(), Value::string(id));
            state = Value::object_typed_of(&ty, e);
        }
        Ok(ImportResponse {
            imported: vec![ImportedResource {
                type_name: type_name.to_string(),
                state,
                private: Vec::new(),
            }],
            deferred: None,
            diagnostics: Diagnostics::new(),
        })
    }
    async fn read_data_source(
        &self,
        req: ReadDataRequest<'_>,
    ) -> Result<ReadDataResponse, ProviderError> {
        let block = self.block(req.type_name, true).await?;
        let over = self.values(req.type_name, true).map(|v| &v.values);
        let mut resp = ReadDataResponse {
            state: req.config.clone(),
            deferred: None,
            diagnostics: Diagnostics::new(),
        };
        match fill(&block, req.config, over, Fill::Known) {
            Ok(v) => resp.state = v,
            Err(e) => resp.diagnostics = invalid(e),
        }
        Ok(resp)
    }
    async fn validate_ephemeral_resource_config(
        &self,
        type_name: &str,
        config: &Value,
    ) -> Result<Diagnostics, ProviderError> {
        self.inner
            .validate_ephemeral_resource_config(type_name, config)
            .await
    }
    /// A mocked provider is never configured, so its ephemeral resources
    /// are opened as its data sources are read: computed attributes get
    /// generated values, and nothing reaches the real provider.
    async fn open_ephemeral_resource(
        &self,
        type_name: &str,
        config: &Value,
    ) -> Result<OpenEphemeralResponse, ProviderError> {
        if let Source::Fixed(_) = self.source {
            return self.inner.open_ephemeral_resource(type_name, config).await;
        }
        let schema = self.inner.get_schema().await?;
        let block = schema
            .ephemeral_resources
            .get(type_name)
            .map(|s| s.block.clone())
            .unwrap_or_default();
        let mut resp = OpenEphemeralResponse {
            result: config.clone(),
            private: Vec::new(),
            renew_at: None,
            deferred: None,
            diagnostics: Diagnostics::new(),
        };
        match fill(&block, config, None, Fill::Known) {
            Ok(v) => resp.result = v,
            Err(e) => resp.diagnostics = invalid(e),
        }
        Ok(resp)
    }
    async fn renew_ephemeral_resource(
        &self,
        type_name: &str,
        private: &[u8],
    ) -> Result<RenewEphemeralResponse, ProviderError> {
        match self.source {
            Source::Fixed(_) => {
                self.inner
                    .renew_ephemeral_resource(type_name, private)
                    .await
            }
            Source::Mock(_) => Ok(RenewEphemeralResponse {
                private: private.to_vec(),
                renew_at: None,
                diagnostics: Diagnostics::new(),
            }),
        }
    }
    async fn close_ephemeral_resource(
        &self,
        type_name: &str,
        private: &[u8],
    ) -> Result<Diagnostics, ProviderError> {
        match self.source {
            Source::Fixed(_) => {
                self.inner
                    .close_ephemeral_resource(type_name, private)
                    .await
            }
            Source::Mock(_) => Ok(Diagnostics::new()),
        }
    }
    async fn call_function(
        &self,
        name: &str,
        args: &[Value],
    ) -> Result<Result<Value, FunctionError>, ProviderError> {
        self.inner.call_function(name, args).await
    }
    async fn stop(&self) -> Result<Option<String>, ProviderError> {
        Ok(None)
    }
    async fn close(&self) {
        // The real instance is the host's to close.
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use terrane_schema::Attribute;

    fn attr(ty: Type, computed: bool) -> Attribute {
        Attribute {
            ty: AttrType::Type(ty),
            description: String::new(),
            description_kind: Default::default(),
            required: !computed,
            optional: false,
            computed,
            sensitive: false,
            deprecated: false,
            deprecation_message: String::new(),
            write_only: false,
        }
    }

    fn check(name: &str, how: Fill, over: Option<Value>, want: impl Fn(&Value) -> bool) {
        let block = Block::new()
            .attr("length", attr(Type::Number, false))
            .attr("result", attr(Type::String, true))
            .attr("tags", attr(Type::list(Type::String), true));
        let ty = block.implied_type();
        let v = Value::object_typed(
            &ty,
            [
                ("length".to_string(), Value::number(3)),
                ("result".to_string(), Value::null(Type::String)),
                ("tags".to_string(), Value::null(Type::list(Type::String))),
            ]
            .into(),
        );
        let got = fill(&block, &v, over.as_ref(), how).unwrap();
        assert!(want(&got), "case {name}: {got:?}");
    }

    #[test]
    fn mock_values_as_terraform_makes_them() {
        let result = |v: &Value| v.get_attr("result").cloned().unwrap();
        check("plan_unknown", Fill::Unknown, None, |v| {
            !result(v).is_known() && v.get_attr("length").unwrap().is_known()
        });
        check("generated_string", Fill::Known, None, |v| {
            let r = result(v);
            let s = r.as_str().unwrap();
            s.len() == 8
                && s.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        });
        check("generated_list_empty", Fill::Known, None, |v| {
            v.get_attr("tags").unwrap().length() == Some(0)
        });
        let over = Value::object([("result".to_string(), Value::string("x"))].into());
        check("given_value", Fill::Known, Some(over), |v| {
            result(v).as_str() == Some("x")
        });
    }
}
