//! The Pulumi package schema of an SDK provider, derived from its SDK
//! schemas, and the tokens of its resources, data sources and functions.
//!
//! Tokens follow the naming rule in reverse (terrane-pulumirpc's
//! `naming`): resource `random_id` of package `random` is `random:index:Id`,
//! and `token_to_hcl` gives `random_id` back. Data sources are functions
//! named as Pulumi names its lookups: `local_file` → `local:index:getFile`.
//! Provider functions keep their name: `local:index:directExec`.

use super::codec::{camel, pascal};
use crate::provider::Provider;
use crate::server::{ProviderServer, Typed};
use serde_json::{json, Map, Value as J};
use std::collections::BTreeMap;
use terrane_value::Type;

/// Token → SDK name, for resources, data sources and functions.
#[derive(Default)]
pub struct Tokens {
    /// Resource tokens.
    pub resources: BTreeMap<String, String>,
    /// Data-source tokens (`getX`).
    pub data_sources: BTreeMap<String, String>,
    /// Provider-function tokens.
    pub functions: BTreeMap<String, String>,
}

/// The part of a type name after the package prefix (`random_id` → `id`).
fn local<'a>(package: &str, name: &'a str) -> &'a str {
    name.strip_prefix(package)
        .and_then(|r| r.strip_prefix('_'))
        .unwrap_or(name)
}

/// The resource token of an SDK resource type name.
pub fn resource_token(package: &str, name: &str) -> String {
    format!("{package}:index:{}", pascal(local(package, name)))
}

/// The function token of an SDK data source.
pub fn data_source_token(package: &str, name: &str) -> String {
    format!("{package}:index:get{}", pascal(local(package, name)))
}

/// The function token of a provider function.
pub fn function_token(package: &str, name: &str) -> String {
    format!("{package}:index:{}", camel(name))
}

impl Tokens {
    pub(crate) fn new<P: Provider>(s: &ProviderServer<P>) -> Tokens {
        let pkg = s.provider.type_name();
        Tokens {
            resources: s
                .resources
                .keys()
                .map(|n| (resource_token(pkg, n), n.clone()))
                .collect(),
            data_sources: s
                .data_sources
                .keys()
                .map(|n| (data_source_token(pkg, n), n.clone()))
                .collect(),
            functions: s
                .functions
                .keys()
                .map(|n| (function_token(pkg, n), n.clone()))
                .collect(),
        }
    }
}

/// Collects named object types (`types` section) while describing
/// properties.
struct Types<'a> {
    package: &'a str,
    out: Map<String, J>,
}

impl Types<'_> {
    /// The property spec of a value type; objects become named types
    /// `pkg:index:<Owner><Property>`.
    fn spec(&mut self, ty: &Type, owner: &str) -> J {
        match ty {
            Type::String => json!({"type": "string"}),
            Type::Number => json!({"type": "number"}),
            Type::Bool => json!({"type": "boolean"}),
            Type::Dynamic | Type::Tuple(_) => json!({"$ref": "pulumi.json#/Any"}),
            Type::List(e) | Type::Set(e) => {
                json!({"type": "array", "items": self.spec(e, owner)})
            }
            Type::Map(e) => json!({"type": "object", "additionalProperties": self.spec(e, owner)}),
            Type::Object(ot) => {
                let token = format!("{}:index:{owner}", self.package);
                let mut props = Map::new();
                for (n, t) in ot.attrs() {
                    let s = self.spec(t, &format!("{owner}{}", pascal(n)));
                    props.insert(camel(n), s);
                }
                let required: Vec<String> = ot
                    .attrs()
                    .keys()
                    .filter(|n| !ot.is_optional(n))
                    .map(|n| camel(n))
                    .collect();
                self.out.insert(
                    token.clone(),
                    json!({"type": "object", "properties": props, "required": required}),
                );
                json!({"$ref": format!("#/types/{token}")})
            }
        }
    }

    /// Property specs and lists for an SDK schema: (all properties,
    /// input properties, required outputs, required inputs).
    /// `resource`: a custom resource, whose output-only `id` is its Pulumi
    /// ID, not a property (Pulumi reserves the name).
    fn object(
        &mut self,
        s: &Typed,
        owner: &str,
        resource: bool,
    ) -> (J, J, Vec<String>, Vec<String>) {
        let Type::Object(ot) = &s.ty else {
            return (json!({}), json!({}), Vec::new(), Vec::new());
        };
        let (mut props, mut inputs) = (Map::new(), Map::new());
        let (mut required, mut required_inputs) = (Vec::new(), Vec::new());
        for (n, t) in ot.attrs() {
            let mut spec = self.spec(t, &format!("{owner}{}", pascal(n)));
            let attr = s.attrs.get(n);
            if let Some(a) = attr {
                if !a.proto.description.is_empty() {
                    spec["description"] = J::String(a.proto.description.clone());
                }
                if a.proto.sensitive {
                    spec["secret"] = J::Bool(true);
                }
                if let Some(d) = &a.default {
                    if let Ok(j) = terrane_value::json::encode(d, d.ty()) {
                        spec["default"] = j;
                    }
                }
            }
            let output_only =
                attr.is_some_and(|a| a.proto.computed && !a.proto.optional && !a.proto.required);
            if resource && output_only && n == "id" {
                continue;
            }
            let write_only = attr.is_some_and(|a| a.proto.write_only);
            if !write_only {
                props.insert(camel(n), spec.clone());
            }
            if !output_only {
                inputs.insert(camel(n), spec);
            }
            if attr.is_some_and(|a| a.proto.required) {
                required_inputs.push(camel(n));
            }
            if attr.is_some_and(|a| a.proto.required || a.proto.computed) && !write_only {
                required.push(camel(n));
            }
        }
        (
            J::Object(props),
            J::Object(inputs),
            required,
            required_inputs,
        )
    }
}

/// The package schema (Pulumi's schema JSON).
pub(crate) fn package<P: Provider>(s: &ProviderServer<P>, tokens: &Tokens) -> J {
    let pkg = s.provider.type_name();
    let mut types = Types {
        package: pkg,
        out: Map::new(),
    };
    let (_, config, _, config_required) = types.object(&s.provider_schema, "Provider", false);
    let mut resources = Map::new();
    for (token, name) in &tokens.resources {
        let (_, t) = &s.resources[name];
        let owner = pascal(local(pkg, name));
        let (props, inputs, required, required_inputs) = types.object(t, &owner, true);
        resources.insert(
            token.clone(),
            json!({
                "description": t.description,
                "properties": props,
                "required": required,
                "inputProperties": inputs,
                "requiredInputs": required_inputs,
            }),
        );
    }
    let mut functions = Map::new();
    for (token, name) in &tokens.data_sources {
        let (_, t) = &s.data_sources[name];
        let owner = format!("Get{}", pascal(local(pkg, name)));
        let (props, inputs, required, required_inputs) = types.object(t, &owner, false);
        functions.insert(
            token.clone(),
            json!({
                "description": t.description,
                "inputs": {"properties": inputs, "required": required_inputs},
                "outputs": {"properties": props, "required": required},
            }),
        );
    }
    for (token, name) in &tokens.functions {
        let f = &s.functions[name];
        let owner = pascal(name);
        let mut props = Map::new();
        let mut required = Vec::new();
        for p in f.params() {
            props.insert(
                camel(&p.name),
                types.spec(&p.ty, &format!("{owner}{}", pascal(&p.name))),
            );
            if !p.allow_null {
                required.push(camel(&p.name));
            }
        }
        if let Some(v) = f.variadic() {
            let list = Type::list(v.ty.clone());
            props.insert(camel(&v.name), types.spec(&list, &owner));
        }
        let result = types.spec(&f.return_type(), &format!("{owner}Result"));
        functions.insert(
            token.clone(),
            json!({
                "description": f.description(),
                "inputs": {"properties": props, "required": required},
                "outputs": {"properties": {"result": result}, "required": ["result"]},
            }),
        );
    }
    json!({
        "name": pkg,
        "version": s.provider.version(),
        "config": {"variables": config, "required": config_required},
        "provider": {"inputProperties": config, "requiredInputs": config_required},
        "resources": resources,
        "functions": functions,
        "types": types.out,
    })
}

/// Configure's deprecated flat form (`pkg:config:key` → JSON text or a
/// plain string) as an args object.
pub(crate) fn args_from_variables(
    package: &str,
    vars: &std::collections::HashMap<String, String>,
) -> prost_types::Struct {
    let prefix = format!("{package}:config:");
    let mut fields = BTreeMap::new();
    for (k, v) in vars {
        let key = k.strip_prefix(&prefix).unwrap_or(k).to_string();
        let value = match serde_json::from_str::<J>(v) {
            Ok(j @ (J::Object(_) | J::Array(_) | J::Bool(_) | J::Number(_))) => to_proto(&j),
            _ => prost_types::Value {
                kind: Some(prost_types::value::Kind::StringValue(v.clone())),
            },
        };
        fields.insert(key, value);
    }
    prost_types::Struct { fields }
}

fn to_proto(j: &J) -> prost_types::Value {
    use prost_types::value::Kind as K;
    let kind = match j {
        J::Null => K::NullValue(0),
        J::Bool(b) => K::BoolValue(*b),
        J::Number(n) => K::NumberValue(n.as_f64().unwrap_or_default()),
        J::String(s) => K::StringValue(s.clone()),
        J::Array(a) => K::ListValue(prost_types::ListValue {
            values: a.iter().map(to_proto).collect(),
        }),
        J::Object(o) => K::StructValue(prost_types::Struct {
            fields: o.iter().map(|(k, v)| (k.clone(), to_proto(v))).collect(),
        }),
    };
    prost_types::Value { kind: Some(kind) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_follow_the_naming_rule() {
        assert_eq!(resource_token("random", "random_id"), "random:index:Id");
        assert_eq!(
            resource_token("postgresql", "postgresql_default_privileges"),
            "postgresql:index:DefaultPrivileges"
        );
        assert_eq!(
            data_source_token("local", "local_file"),
            "local:index:getFile"
        );
        assert_eq!(
            function_token("local", "direxists"),
            "local:index:direxists"
        );
    }
}
