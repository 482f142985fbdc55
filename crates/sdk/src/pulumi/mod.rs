//! The same provider served over Pulumi's protocol: `pulumirpc.ResourceProvider`
//! on top of the SDK traits, so that a terrane provider is also a Pulumi
//! resource plugin (`pulumi-resource-<name>`) with no code from its author.
//!
//! How the Terraform-shaped SDK answers Pulumi's calls:
//!
//! * **GetSchema** is derived from the SDK schemas (module `schema`): package =
//!   provider type name; `random_id` → `random:index:Id`; data sources are
//!   functions `random:index:getX`; provider functions `random:index:name`;
//!   sensitive attributes are `secret`.
//! * **Check** decodes the inputs against the schema (type failures carry
//!   the property path), runs the validators and the resource's `validate`
//!   (failures with property paths) and applies the defaults.
//! * **Diff** runs the SDK's plan logic (defaults, "use state for unknown",
//!   requires-replace, `modify_plan`) on the prior state and the checked
//!   inputs, as Terraform's PlanResourceChange would, and reports the
//!   changed attributes as a detailed diff. Replacement is always
//!   delete-before-replace: SDK providers are written for Terraform's
//!   default order (destroy, then create), so a replacement with the same
//!   name (a role, a database) must not be created first.
//! * **Create/Update** plan the same way; with `preview` they answer the
//!   planned state (unknown computed values), otherwise they call the
//!   resource's `create`/`update`. **Delete** calls `delete`.
//! * **Read** is refresh (the resource's `read`) and, without prior state,
//!   import (`import`, then `read`); a resource that is gone answers an
//!   empty ID.
//! * **CheckConfig/DiffConfig/Configure** are the provider schema's Check,
//!   a diff that never asks for replacement, and `Provider::configure`.
//! * **Invoke** calls a provider function or reads a data source.
//! * **Cancel** cancels the calls in flight, as StopProvider does.

pub(crate) mod codec;
mod launch;
pub(crate) mod schema;

pub use launch::{engine_address, serve_main};

use crate::diag::Diagnostics;
use crate::plan;
use crate::provider::{PlanState, Provider, ResourceType};
use crate::server::{check_result, null_write_only, run_validators, ProviderServer, Typed};
use codec::{camel, Failure};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use terrane_pulumirpc::pulumirpc as rpc;
use terrane_value::{Path, Step, Value};
use tonic::{Request, Response, Status};

type R<T> = Result<Response<T>, Status>;

/// A provider served as a Pulumi resource plugin.
pub struct PulumiServer<P: Provider> {
    inner: Arc<ProviderServer<P>>,
    names: schema::Tokens,
}

impl<P: Provider> PulumiServer<P> {
    /// Collects the provider's schemas and tokens once.
    pub fn new(provider: P) -> PulumiServer<P> {
        let inner = Arc::new(ProviderServer::new(provider));
        let names = schema::Tokens::new(&inner);
        PulumiServer { inner, names }
    }

    fn package(&self) -> &str {
        self.inner.provider.type_name()
    }

    /// The resource named by a request's URN (or its `type` field).
    fn resource_of(
        &self,
        urn: &str,
        ty: &str,
    ) -> Result<&crate::server::Entry<dyn ResourceType<P::Data>>, Status> {
        let token = if ty.is_empty() { urn_type(urn)? } else { ty };
        let name = self.names.resources.get(token).ok_or_else(|| {
            Status::invalid_argument(format!(
                "the {} provider has no resource type {token:?}",
                self.package()
            ))
        })?;
        self.inner.resource(name).map_err(status)
    }
}

/// The resource type token of a URN
/// (`urn:pulumi:stack::project::[parent$]type::name`).
pub fn urn_type(urn: &str) -> Result<&str, Status> {
    let parts: Vec<&str> = urn.splitn(4, "::").collect();
    if parts.len() != 4 || !parts[0].starts_with("urn:pulumi:") {
        return Err(Status::invalid_argument(format!(
            "{urn:?} is not a Pulumi URN (urn:pulumi:stack::project::type::name)"
        )));
    }
    Ok(parts[2].rsplit('$').next().unwrap_or(parts[2]))
}

/// Diagnostics as a gRPC error (summaries and details, no values).
fn status(d: Diagnostics) -> Status {
    Status::unknown(diag_text(&d))
}

fn diag_text(d: &Diagnostics) -> String {
    d.0.iter()
        .filter(|x| x.severity == crate::diag::Severity::Error)
        .map(|x| {
            let at = x
                .path
                .as_ref()
                .map(|p| format!("{}: ", pulumi_path(p)))
                .unwrap_or_default();
            if x.detail.is_empty() {
                format!("{at}{}", x.summary)
            } else {
                format!("{at}{}: {}", x.summary, x.detail)
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// A path in Pulumi's spelling: camelCase names, `a.b[0]["k"]`.
pub fn pulumi_path(p: &Path) -> String {
    let mut out = String::new();
    for s in p.steps() {
        match s {
            Step::Attr(n) if out.is_empty() => out.push_str(&camel(n)),
            Step::Attr(n) => {
                out.push('.');
                out.push_str(&camel(n));
            }
            Step::Key(k) => out.push_str(&format!("[{k:?}]")),
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

fn failures(d: &Diagnostics) -> Vec<rpc::CheckFailure> {
    d.0.iter()
        .filter(|x| x.severity == crate::diag::Severity::Error)
        .map(|x| rpc::CheckFailure {
            property: x.path.as_ref().map(pulumi_path).unwrap_or_default(),
            reason: if x.detail.is_empty() {
                x.summary.clone()
            } else {
                format!("{}: {}", x.summary, x.detail)
            },
        })
        .collect()
}

fn wire_failures(f: Vec<Failure>) -> Vec<rpc::CheckFailure> {
    f.into_iter()
        .map(|f| rpc::CheckFailure {
            property: f.property,
            reason: f.reason,
        })
        .collect()
}

/// Who sets an attribute: only the provider (an output), or configuration.
fn output_only(s: &Typed, name: &str) -> bool {
    s.attrs
        .get(name)
        .is_some_and(|a| a.proto.computed && !a.proto.optional && !a.proto.required)
}

/// Inputs: the configuration object (computed-only attributes null).
fn inputs_of(s: &Typed, v: &Value) -> Value {
    let Some(entries) = v.entries() else {
        return v.clone();
    };
    let mut m = (*entries).clone();
    for (n, a) in s.attrs() {
        if output_only(s, n) {
            m.insert(n.clone(), Value::null(a.ty()));
        }
    }
    Value::object_typed_of(&s.ty, m)
}

/// Inputs without the outputs, for answers (Pulumi's input objects have
/// only input properties).
fn input_struct(s: &Typed, v: &Value, secret: &BTreeSet<String>) -> prost_types::Struct {
    let mut st = codec::encode_object(v, &sensitive_names(s, secret));
    st.fields
        .retain(|k, _| !s.attrs().any(|(n, _)| &camel(n) == k && output_only(s, n)));
    st
}

/// Sensitive attributes and the properties that arrived as secrets.
fn sensitive_names(s: &Typed, secret: &BTreeSet<String>) -> BTreeSet<String> {
    s.attrs()
        .filter(|(_, a)| a.proto.sensitive)
        .map(|(n, _)| n.clone())
        .chain(secret.iter().cloned())
        .collect()
}

/// Applies defaults to unset attributes, as the plan would.
fn with_defaults(s: &Typed, config: &Value) -> Value {
    let Some(entries) = config.entries() else {
        return config.clone();
    };
    let mut m = (*entries).clone();
    for (n, a) in s.attrs() {
        if m.get(n).is_some_and(|v| !v.is_null()) {
            continue;
        }
        if let Some(d) = &a.default {
            m.insert(n.clone(), d.clone());
        } else if let Some(f) = &a.default_fn {
            m.insert(n.clone(), f(config));
        }
    }
    Value::object_typed_of(&s.ty, m)
}

/// Decodes a property object against a schema; unknown keys are failures
/// unless listed in `allowed_extra`.
fn decode_props(
    s: &Typed,
    props: Option<&prost_types::Struct>,
    allowed_extra: &[&str],
) -> Result<(Value, BTreeSet<String>), Vec<rpc::CheckFailure>> {
    let (v, info) = codec::decode_object(props, &s.ty).map_err(wire_failures)?;
    let extra: Vec<rpc::CheckFailure> = info
        .extra
        .iter()
        .filter(|k| !allowed_extra.contains(&k.as_str()) && !k.starts_with("__"))
        .map(|k| rpc::CheckFailure {
            property: k.clone(),
            reason: "no such property in the schema".into(),
        })
        .collect();
    if !extra.is_empty() {
        return Err(extra);
    }
    Ok((v, info.secret))
}

fn decode_state(s: &Typed, props: Option<&prost_types::Struct>) -> Result<Value, Status> {
    decode_props(s, props, &[])
        .map(|(v, _)| v)
        .map_err(|f| Status::invalid_argument(failure_text(&f)))
}

fn failure_text(f: &[rpc::CheckFailure]) -> String {
    f.iter()
        .map(|f| format!("{}: {}", f.property, f.reason))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Whether the schema's `id` is the provider-set ID Pulumi keeps apart
/// from the properties (`id` is reserved for it in Pulumi's schema).
fn id_apart(s: &Typed) -> bool {
    output_only(s, "id")
}

/// Outputs as Pulumi wants them: without the `id` property, which travels
/// as the resource's ID.
fn outputs(s: &Typed, v: &Value, secret: &BTreeSet<String>) -> prost_types::Struct {
    let mut st = codec::encode_object(v, secret);
    if id_apart(s) {
        st.fields.remove("id");
    }
    st
}

/// A recorded state with its `id` attribute restored from the request's ID.
fn with_id(s: &Typed, v: Value, id: &str) -> Value {
    if !id_apart(s) || id.is_empty() || v.is_null() {
        return v;
    }
    let mut m = v.entries().map(|e| (*e).clone()).unwrap_or_default();
    m.insert("id".into(), Value::string(id));
    Value::object_typed_of(&s.ty, m)
}

/// The ID of a new state: its `id` attribute.
fn id_of(v: &Value) -> Result<String, Status> {
    v.get_attr("id")
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| {
            Status::internal("the new state has no `id` attribute; this is a bug in the provider")
        })
}

/// One planned change: Terraform's PlanResourceChange on Pulumi's inputs.
struct Planned {
    config: Value,
    planned: Value,
    replace: Vec<Path>,
}

impl<P: Provider> PulumiServer<P> {
    async fn plan(
        &self,
        rt: &Arc<dyn ResourceType<P::Data>>,
        s: &Typed,
        prior: &Value,
        inputs: &Value,
        ignore: &[String],
    ) -> Result<Planned, Status> {
        let mut config = inputs_of(s, inputs);
        if !prior.is_null() && !ignore.is_empty() {
            let mut m = config.entries().map(|e| (*e).clone()).unwrap_or_default();
            for (n, _) in s.attrs() {
                if ignore.iter().any(|i| i == &camel(n) || i == n) {
                    if let Some(p) = prior.get_attr(n) {
                        m.insert(n.clone(), p.clone());
                    }
                }
            }
            config = Value::object_typed_of(&s.ty, m);
        }
        // The proposed new state: configuration, with prior values for
        // computed attributes the configuration leaves unset.
        let mut proposed = config.entries().map(|e| (*e).clone()).unwrap_or_default();
        for (n, a) in s.attrs() {
            if a.proto.computed && config.get_attr(n).is_none_or(Value::is_null) {
                let p = prior
                    .get_attr(n)
                    .cloned()
                    .unwrap_or_else(|| Value::null(a.ty()));
                proposed.insert(n.clone(), p);
            }
        }
        let proposed = Value::object_typed_of(&s.ty, proposed);
        let (planned, replace) = plan::plan(s, prior, &proposed, &config);
        let mut ps = PlanState {
            prior: prior.clone(),
            config: config.clone(),
            planned: null_write_only(s, planned),
            requires_replace: replace,
        };
        let d = rt
            .instance(self.inner.data())
            .modify_plan(&self.inner.ctx(), &mut ps)
            .await;
        if d.has_errors() {
            return Err(status(d));
        }
        Ok(Planned {
            config,
            planned: null_write_only(s, ps.planned),
            replace: ps.requires_replace,
        })
    }

    async fn check_props(
        &self,
        s: &Typed,
        news: Option<&prost_types::Struct>,
        allowed_extra: &[&str],
        validate: Option<&Arc<dyn ResourceType<P::Data>>>,
    ) -> rpc::CheckResponse {
        let (v, secret) = match decode_props(s, news, allowed_extra) {
            Ok(x) => x,
            Err(failures) => {
                return rpc::CheckResponse {
                    inputs: news.cloned(),
                    failures,
                }
            }
        };
        let mut f: Vec<rpc::CheckFailure> = s
            .attrs()
            .filter(|(n, _)| output_only(s, n) && v.get_attr(n).is_some_and(|x| !x.is_null()))
            .map(|(n, _)| rpc::CheckFailure {
                property: camel(n),
                reason: "this property is an output of the resource and cannot be set".into(),
            })
            .collect();
        f.extend(
            s.attrs()
                .filter(|(n, a)| a.proto.required && v.get_attr(n).is_none_or(Value::is_null))
                .map(|(n, _)| rpc::CheckFailure {
                    property: camel(n),
                    reason: "missing required property".into(),
                }),
        );
        let config = inputs_of(s, &v);
        let mut d = run_validators(s, &config);
        if let Some(rt) = validate {
            d.extend(rt.instance(self.inner.data()).validate(&config).await);
        }
        f.extend(failures(&d));
        let inputs = with_defaults(s, &config);
        rpc::CheckResponse {
            inputs: Some(input_struct(s, &inputs, &secret)),
            failures: f,
        }
    }

    fn diff_of(&self, s: &Typed, prior: &Value, p: &Planned) -> rpc::DiffResponse {
        use rpc::property_diff::Kind;
        let mut detailed = BTreeMap::new();
        let (mut replaces, mut stables, mut diffs) = (Vec::new(), Vec::new(), Vec::new());
        for (n, a) in s.attrs() {
            let before = prior
                .get_attr(n)
                .cloned()
                .unwrap_or_else(|| Value::null(a.ty()));
            let after = p
                .planned
                .get_attr(n)
                .cloned()
                .unwrap_or_else(|| Value::null(a.ty()));
            let output = output_only(s, n);
            let same =
                before.eq_ignoring_refinements(&after) || (a.proto.write_only && after.is_null());
            let replace = p
                .replace
                .iter()
                .any(|r| matches!(r.steps().first(), Some(Step::Attr(x)) if x == n));
            if same || (output && !after.is_known()) {
                if !output || after.is_known() {
                    stables.push(camel(n));
                }
                continue;
            }
            let kind = match (before.is_null(), after.is_null(), replace) {
                (true, _, false) => Kind::Add,
                (true, _, true) => Kind::AddReplace,
                (false, true, false) => Kind::Delete,
                (false, true, true) => Kind::DeleteReplace,
                (false, false, false) => Kind::Update,
                (false, false, true) => Kind::UpdateReplace,
            };
            if replace {
                replaces.push(camel(n));
            }
            diffs.push(camel(n));
            detailed.insert(
                camel(n),
                rpc::PropertyDiff {
                    kind: kind as i32,
                    input_diff: !output,
                },
            );
        }
        let changes = if diffs.is_empty() {
            rpc::diff_response::DiffChanges::DiffNone
        } else {
            rpc::diff_response::DiffChanges::DiffSome
        };
        rpc::DiffResponse {
            delete_before_replace: !replaces.is_empty(),
            replaces,
            stables,
            changes: changes as i32,
            diffs,
            detailed_diff: detailed.into_iter().collect(),
            has_detailed_diff: true,
        }
    }
}

/// Top-level property names that arrived as secrets.
fn secrets_in(s: &Typed, props: Option<&prost_types::Struct>) -> BTreeSet<String> {
    codec::decode_object(props, &s.ty)
        .map(|(_, i)| i.secret)
        .unwrap_or_default()
}

#[tonic::async_trait]
impl<P: Provider> rpc::resource_provider_server::ResourceProvider for PulumiServer<P> {
    async fn handshake(
        &self,
        _r: Request<rpc::ProviderHandshakeRequest>,
    ) -> R<rpc::ProviderHandshakeResponse> {
        Ok(Response::new(rpc::ProviderHandshakeResponse {
            accept_secrets: true,
            accept_resources: false,
            accept_outputs: false,
            ..Default::default()
        }))
    }

    async fn get_schema(&self, _r: Request<rpc::GetSchemaRequest>) -> R<rpc::GetSchemaResponse> {
        if self.inner.schema_diags.has_errors() {
            return Err(status(self.inner.schema_diags.clone()));
        }
        Ok(Response::new(rpc::GetSchemaResponse {
            schema: schema::package(&self.inner, &self.names).to_string(),
        }))
    }

    async fn check_config(&self, r: Request<rpc::CheckRequest>) -> R<rpc::CheckResponse> {
        let s = &self.inner.provider_schema;
        let allowed = ["version", "pluginDownloadURL"];
        let mut resp = self
            .check_props(s, r.get_ref().news.as_ref(), &allowed, None)
            .await;
        // The engine's own keys go back untouched.
        if let (Some(news), Some(inputs)) = (&r.get_ref().news, resp.inputs.as_mut()) {
            for k in allowed {
                if let Some(v) = news.fields.get(k) {
                    inputs.fields.insert(k.to_string(), v.clone());
                }
            }
        }
        Ok(Response::new(resp))
    }

    async fn diff_config(&self, r: Request<rpc::DiffRequest>) -> R<rpc::DiffResponse> {
        let s = &self.inner.provider_schema;
        let req = r.get_ref();
        let allowed = ["version", "pluginDownloadURL"];
        let decode = |p| {
            decode_props(s, p, &allowed)
                .map(|x| x.0)
                .map_err(|f| Status::invalid_argument(failure_text(&f)))
        };
        let olds = decode(req.old_inputs.as_ref().or(req.olds.as_ref()))?;
        let news = decode(req.news.as_ref())?;
        let mut detailed = BTreeMap::new();
        let mut diffs = Vec::new();
        for (n, _) in s.attrs() {
            let (a, b) = (olds.get_attr(n), news.get_attr(n));
            let same = match (a, b) {
                (Some(a), Some(b)) => a.eq_ignoring_refinements(b),
                (a, b) => a.is_none_or(Value::is_null) && b.is_none_or(Value::is_null),
            };
            if !same {
                diffs.push(camel(n));
                detailed.insert(
                    camel(n),
                    rpc::PropertyDiff {
                        kind: rpc::property_diff::Kind::Update as i32,
                        input_diff: true,
                    },
                );
            }
        }
        let changes = if diffs.is_empty() {
            rpc::diff_response::DiffChanges::DiffNone
        } else {
            rpc::diff_response::DiffChanges::DiffSome
        };
        Ok(Response::new(rpc::DiffResponse {
            changes: changes as i32,
            diffs,
            detailed_diff: detailed.into_iter().collect(),
            has_detailed_diff: true,
            ..Default::default()
        }))
    }

    async fn configure(&self, r: Request<rpc::ConfigureRequest>) -> R<rpc::ConfigureResponse> {
        let s = &self.inner.provider_schema;
        let req = r.get_ref();
        let args = match &req.args {
            Some(a) => a.clone(),
            None => schema::args_from_variables(self.package(), &req.variables),
        };
        let (cfg, _) = decode_props(s, Some(&args), &["version", "pluginDownloadURL"])
            .map_err(|f| Status::invalid_argument(failure_text(&f)))?;
        let d = run_validators(s, &cfg);
        if d.has_errors() {
            return Err(status(d));
        }
        let data = self
            .inner
            .provider
            .configure(&self.inner.ctx(), &cfg)
            .await
            .map_err(status)?;
        if let Ok(mut slot) = self.inner.data.write() {
            *slot = data.map(Arc::new);
        }
        Ok(Response::new(rpc::ConfigureResponse {
            accept_secrets: true,
            supports_preview: true,
            accept_resources: false,
            accept_outputs: false,
            ..Default::default()
        }))
    }

    async fn invoke(&self, r: Request<rpc::InvokeRequest>) -> R<rpc::InvokeResponse> {
        let req = r.get_ref();
        if let Some(name) = self.names.data_sources.get(&req.tok) {
            let (dt, s) = self.inner.data_source(name).map_err(status)?;
            let (cfg, _) = match decode_props(s, req.args.as_ref(), &[]) {
                Ok(x) => x,
                Err(failures) => {
                    return Ok(Response::new(rpc::InvokeResponse {
                        r#return: None,
                        failures,
                    }))
                }
            };
            let d = run_validators(s, &cfg);
            if d.has_errors() {
                return Ok(Response::new(rpc::InvokeResponse {
                    r#return: None,
                    failures: failures(&d),
                }));
            }
            let v = dt
                .instance(self.inner.data())
                .read(&self.inner.ctx(), &cfg)
                .await
                .map_err(status)?;
            let d = check_result(&v, &s.ty, "Read");
            if d.has_errors() {
                return Err(status(d));
            }
            let out = codec::encode_object(&v, &sensitive_names(s, &BTreeSet::new()));
            return Ok(Response::new(rpc::InvokeResponse {
                r#return: Some(out),
                failures: Vec::new(),
            }));
        }
        let Some(fname) = self.names.functions.get(&req.tok) else {
            return Err(Status::invalid_argument(format!(
                "the {} provider has no function {:?}",
                self.package(),
                req.tok
            )));
        };
        let f = &self.inner.functions[fname];
        let params = f.params();
        let fields = req
            .args
            .as_ref()
            .map(|a| a.fields.clone())
            .unwrap_or_default();
        let mut args = Vec::new();
        let mut fails = Vec::new();
        for p in &params {
            let key = camel(&p.name);
            let mut secret = false;
            let raw = fields.get(&key).or_else(|| fields.get(&p.name));
            let v = match raw {
                Some(x) => codec::decode(x, &p.ty, &key, &mut secret),
                None => Ok(Value::null(p.ty.clone())),
            };
            match v {
                Ok(v) if v.is_null() && !p.allow_null => fails.push(rpc::CheckFailure {
                    property: key,
                    reason: "missing required argument".into(),
                }),
                Ok(v) if !v.is_wholly_known() => fails.push(rpc::CheckFailure {
                    property: key,
                    reason: "functions do not accept unknown values".into(),
                }),
                Ok(v) => args.push(v),
                Err(f) => fails.extend(wire_failures(f)),
            }
        }
        if let Some(vp) = f.variadic() {
            if let Some(x) = fields.get(&camel(&vp.name)) {
                let mut secret = false;
                let list = terrane_value::Type::list(vp.ty.clone());
                match codec::decode(x, &list, &camel(&vp.name), &mut secret) {
                    Ok(v) => args.extend(v.elements().unwrap_or_default().iter().cloned()),
                    Err(f) => fails.extend(wire_failures(f)),
                }
            }
        }
        if !fails.is_empty() {
            return Ok(Response::new(rpc::InvokeResponse {
                r#return: None,
                failures: fails,
            }));
        }
        match f.call(&args) {
            Ok(v) => {
                let mut fields = BTreeMap::new();
                fields.insert("result".to_string(), codec::encode(&v.unmark_deep()));
                Ok(Response::new(rpc::InvokeResponse {
                    r#return: Some(prost_types::Struct { fields }),
                    failures: Vec::new(),
                }))
            }
            Err(e) => {
                let property = e
                    .argument
                    .and_then(|i| params.get(i as usize))
                    .map(|p| camel(&p.name))
                    .unwrap_or_default();
                Ok(Response::new(rpc::InvokeResponse {
                    r#return: None,
                    failures: vec![rpc::CheckFailure {
                        property,
                        reason: e.text,
                    }],
                }))
            }
        }
    }

    async fn check(&self, r: Request<rpc::CheckRequest>) -> R<rpc::CheckResponse> {
        let req = r.get_ref();
        let (rt, s) = self.resource_of(&req.urn, &req.r#type)?;
        Ok(Response::new(
            self.check_props(s, req.news.as_ref(), &[], Some(rt)).await,
        ))
    }

    async fn diff(&self, r: Request<rpc::DiffRequest>) -> R<rpc::DiffResponse> {
        let req = r.get_ref();
        let (rt, s) = self.resource_of(&req.urn, &req.r#type)?;
        let prior = with_id(s, decode_state(s, req.olds.as_ref())?, &req.id);
        let news = decode_state(s, req.news.as_ref())?;
        let p = self.plan(rt, s, &prior, &news, &req.ignore_changes).await?;
        Ok(Response::new(self.diff_of(s, &prior, &p)))
    }

    async fn create(&self, r: Request<rpc::CreateRequest>) -> R<rpc::CreateResponse> {
        let req = r.get_ref();
        let (rt, s) = self.resource_of(&req.urn, &req.r#type)?;
        let news = decode_state(s, req.properties.as_ref())?;
        let secret = sensitive_names(s, &secrets_in(s, req.properties.as_ref()));
        let prior = Value::null(s.ty.clone());
        let p = self.plan(rt, s, &prior, &news, &[]).await?;
        if req.preview {
            return Ok(Response::new(rpc::CreateResponse {
                id: String::new(),
                properties: Some(outputs(s, &p.planned, &secret)),
                refresh_before_update: false,
            }));
        }
        if !p.config.is_wholly_known() {
            return Err(Status::invalid_argument(
                "Create without preview got unknown inputs; the engine must resolve them first",
            ));
        }
        let applied = rt
            .instance(self.inner.data())
            .create(&self.inner.ctx(), &p.planned, &p.config)
            .await
            .map_err(status)?;
        let v = null_write_only(s, applied.state);
        let d = check_result(&v, &s.ty, "Create");
        if d.has_errors() {
            return Err(status(d));
        }
        Ok(Response::new(rpc::CreateResponse {
            id: id_of(&v)?,
            properties: Some(outputs(s, &v, &secret)),
            refresh_before_update: false,
        }))
    }

    async fn read(&self, r: Request<rpc::ReadRequest>) -> R<rpc::ReadResponse> {
        let req = r.get_ref();
        let (rt, s) = self.resource_of(&req.urn, &req.r#type)?;
        let inst = rt.instance(self.inner.data());
        let ctx = self.inner.ctx();
        let importing = req.properties.as_ref().is_none_or(|p| p.fields.is_empty());
        let secret = sensitive_names(s, &secrets_in(s, req.properties.as_ref()));
        let state = if importing {
            null_write_only(s, inst.import(&ctx, &req.id).await.map_err(status)?)
        } else {
            with_id(s, decode_state(s, req.properties.as_ref())?, &req.id)
        };
        let Some(a) = inst.read(&ctx, &state, &[]).await.map_err(status)? else {
            // Gone: an empty ID tells the engine so.
            return Ok(Response::new(rpc::ReadResponse::default()));
        };
        let v = null_write_only(s, a.state);
        let d = check_result(&v, &s.ty, "Read");
        if d.has_errors() {
            return Err(status(d));
        }
        let inputs = match (&req.inputs, importing) {
            (Some(i), false) if !i.fields.is_empty() => i.clone(),
            _ => input_struct(s, &inputs_of(s, &v), &secret),
        };
        Ok(Response::new(rpc::ReadResponse {
            id: id_of(&v).unwrap_or_else(|_| req.id.clone()),
            properties: Some(outputs(s, &v, &secret)),
            inputs: Some(inputs),
            refresh_before_update: false,
        }))
    }

    async fn update(&self, r: Request<rpc::UpdateRequest>) -> R<rpc::UpdateResponse> {
        let req = r.get_ref();
        let (rt, s) = self.resource_of(&req.urn, &req.r#type)?;
        let prior = with_id(s, decode_state(s, req.olds.as_ref())?, &req.id);
        let news = decode_state(s, req.news.as_ref())?;
        let mut secret = secrets_in(s, req.news.as_ref());
        secret.extend(secrets_in(s, req.olds.as_ref()));
        let secret = sensitive_names(s, &secret);
        let p = self.plan(rt, s, &prior, &news, &req.ignore_changes).await?;
        if req.preview {
            return Ok(Response::new(rpc::UpdateResponse {
                properties: Some(outputs(s, &p.planned, &secret)),
                refresh_before_update: false,
            }));
        }
        if !p.replace.is_empty() {
            return Err(Status::failed_precondition(format!(
                "Update was asked for a change that requires replacement ({}); \
                 the engine must replace the resource",
                p.replace
                    .iter()
                    .map(pulumi_path)
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        let applied = rt
            .instance(self.inner.data())
            .update(&self.inner.ctx(), &prior, &p.planned, &p.config)
            .await
            .map_err(status)?;
        let v = null_write_only(s, applied.state);
        let d = check_result(&v, &s.ty, "Update");
        if d.has_errors() {
            return Err(status(d));
        }
        Ok(Response::new(rpc::UpdateResponse {
            properties: Some(outputs(s, &v, &secret)),
            refresh_before_update: false,
        }))
    }

    async fn delete(&self, r: Request<rpc::DeleteRequest>) -> R<()> {
        let req = r.get_ref();
        let (rt, s) = self.resource_of(&req.urn, &req.r#type)?;
        let prior = with_id(s, decode_state(s, req.properties.as_ref())?, &req.id);
        rt.instance(self.inner.data())
            .delete(&self.inner.ctx(), &prior)
            .await
            .map_err(status)?;
        Ok(Response::new(()))
    }

    async fn cancel(&self, _r: Request<()>) -> R<()> {
        self.inner.cancel();
        Ok(Response::new(()))
    }

    async fn get_plugin_info(&self, _r: Request<()>) -> R<rpc::PluginInfo> {
        Ok(Response::new(rpc::PluginInfo {
            version: self.inner.provider.version().to_string(),
        }))
    }
}
