//! A Pulumi package schema (GetSchema's JSON) as terrane sees it: resource
//! tokens and functions under their HCL names (the naming rule of
//! terrane-pulumirpc), property types as terrane types and codec shapes,
//! secret properties sensitive; and the renaming of values between the
//! two namings (wire names ⇄ snake_case attribute names), at every level.

use std::collections::BTreeMap;
use terrane_pulumirpc::naming::{camel_to_snake, token_to_hcl, NameMap};
use terrane_pulumirpc::Shape;
use terrane_schema::{AttrType, Attribute, Block, Schema};
use terrane_value::{Kind, Type, Value};

/// The attributes every Pulumi resource gets besides its properties.
pub const ID: &str = "id";
pub const URN: &str = "urn";
/// Terraform's `timeouts { create = "5m" }` block, which every resource
/// gets unless it has a property of that name: Pulumi's customTimeouts,
/// sent as Create/Update/Delete's `timeout`.
pub const TIMEOUTS: &str = "timeouts";
/// The operations a `timeouts` block times.
pub const TIMED: [&str; 3] = ["create", "update", "delete"];

/// A property type.
#[derive(Clone, Debug, PartialEq)]
pub enum PType {
    Any,
    Bool,
    Number,
    Integer,
    String,
    Array(Box<PType>),
    Map(Box<PType>),
    Object(Vec<Prop>),
    Asset,
    Archive,
    AssetOrArchive,
}

/// One property: its wire and HCL names and type, and what it is.
#[derive(Clone, Debug, PartialEq)]
pub struct Prop {
    pub wire: String,
    pub hcl: String,
    pub ty: PType,
    /// An input property (`inputProperties`).
    pub input: bool,
    /// An output property (`properties`).
    pub output: bool,
    /// Required as an input (`requiredInputs`, or `required` in a type).
    pub required: bool,
    pub secret: bool,
    pub description: String,
}

/// A resource type.
#[derive(Clone, Debug)]
pub struct Resource {
    pub token: String,
    pub props: Vec<Prop>,
}

/// A function (a data source).
#[derive(Clone, Debug)]
pub struct Function {
    pub token: String,
    pub inputs: Vec<Prop>,
    pub outputs: Vec<Prop>,
}

/// What terrane keeps of a package schema.
#[derive(Clone, Debug, Default)]
pub struct Package {
    pub name: String,
    pub version: String,
    pub config: Vec<Prop>,
    pub resources: BTreeMap<String, Resource>,
    pub functions: BTreeMap<String, Function>,
}

type J = serde_json::Value;

/// How deep `#/types/` references are followed (a recursive type becomes
/// `Any` below this).
const MAX_DEPTH: usize = 8;

impl Package {
    /// Reads GetSchema's JSON text.
    pub fn parse(text: &str) -> Result<Package, String> {
        let j: J =
            serde_json::from_str(text).map_err(|e| format!("the schema is not JSON: {e}"))?;
        let types = j.get("types").cloned().unwrap_or(J::Null);
        let cx = Cx { types: &types };
        let mut pkg = Package {
            name: str_of(&j, "name").to_string(),
            version: str_of(&j, "version").to_string(),
            ..Package::default()
        };
        if pkg.name.is_empty() {
            return Err("the schema has no package name".into());
        }
        // Provider configuration: the provider resource's inputs, else the
        // config variables.
        let provider_inputs = j.pointer("/provider/inputProperties");
        let config_vars = j.pointer("/config/variables");
        if let Some(props) = provider_inputs.or(config_vars) {
            let required = strings(
                j.pointer("/provider/requiredInputs")
                    .or(j.pointer("/config/required")),
            );
            pkg.config = cx.props(props, &required, true, false, "provider configuration", 0)?;
        }
        let resources = j.get("resources").and_then(J::as_object);
        let tokens: Vec<&str> = resources
            .map(|r| r.keys().map(String::as_str).collect())
            .unwrap_or_default();
        let names = NameMap::tokens(tokens.iter().copied()).map_err(|e| e.to_string())?;
        for (token, spec) in resources.into_iter().flatten() {
            let hcl = names.to_hcl(token).unwrap_or_default().to_string();
            if spec.get("isComponent").and_then(J::as_bool) == Some(true) {
                // Components come through Construct (see docs/architecture.md).
                continue;
            }
            let required = strings(spec.get("requiredInputs"));
            let mut props = match spec.get("inputProperties") {
                Some(p) => cx.props(p, &required, true, false, token, 0)?,
                None => Vec::new(),
            };
            if let Some(outs) = spec.get("properties") {
                for o in cx.props(outs, &[], false, true, token, 0)? {
                    match props.iter_mut().find(|p| p.wire == o.wire) {
                        Some(p) => {
                            p.output = true;
                            p.secret |= o.secret;
                        }
                        None => props.push(o),
                    }
                }
            }
            for p in &props {
                if p.hcl == ID || p.hcl == URN {
                    return Err(format!(
                        "{token}: property {:?} clashes with the {:?} attribute terrane adds",
                        p.wire, p.hcl
                    ));
                }
            }
            check_unique(token, &props)?;
            pkg.resources.insert(
                hcl,
                Resource {
                    token: token.clone(),
                    props,
                },
            );
        }
        let functions = j.get("functions").and_then(J::as_object);
        let ftokens: Vec<&str> = functions
            .map(|r| r.keys().map(String::as_str).collect())
            .unwrap_or_default();
        let fnames = NameMap::tokens(ftokens.iter().copied()).map_err(|e| e.to_string())?;
        for (token, spec) in functions.into_iter().flatten() {
            let hcl = fnames.to_hcl(token).unwrap_or_default().to_string();
            let inputs = match spec.pointer("/inputs/properties") {
                Some(p) => cx.props(
                    p,
                    &strings(spec.pointer("/inputs/required")),
                    true,
                    false,
                    token,
                    0,
                )?,
                None => Vec::new(),
            };
            let outputs = match spec.pointer("/outputs/properties") {
                Some(p) => cx.props(p, &[], false, true, token, 0)?,
                None => Vec::new(),
            };
            pkg.functions.insert(
                hcl,
                Function {
                    token: token.clone(),
                    inputs,
                    outputs,
                },
            );
        }
        Ok(pkg)
    }
}

fn check_unique(token: &str, props: &[Prop]) -> Result<(), String> {
    NameMap::properties(props.iter().map(|p| p.wire.as_str()))
        .map(|_| ())
        .map_err(|e| format!("{token}: {e}"))
}

fn str_of<'a>(j: &'a J, key: &str) -> &'a str {
    j.get(key).and_then(J::as_str).unwrap_or_default()
}

fn strings(j: Option<&J>) -> Vec<String> {
    j.and_then(J::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

struct Cx<'a> {
    types: &'a J,
}

impl Cx<'_> {
    fn props(
        &self,
        props: &J,
        required: &[String],
        input: bool,
        output: bool,
        owner: &str,
        depth: usize,
    ) -> Result<Vec<Prop>, String> {
        let Some(map) = props.as_object() else {
            return Err(format!("{owner}: properties must be an object"));
        };
        let mut out = Vec::new();
        for (wire, spec) in map {
            out.push(Prop {
                wire: wire.clone(),
                hcl: camel_to_snake(wire),
                ty: self.ty(spec, owner, depth)?,
                input,
                output,
                required: required.contains(wire),
                secret: spec.get("secret").and_then(J::as_bool).unwrap_or(false),
                description: str_of(spec, "description").to_string(),
            });
        }
        Ok(out)
    }

    fn ty(&self, spec: &J, owner: &str, depth: usize) -> Result<PType, String> {
        if let Some(r) = spec.get("$ref").and_then(J::as_str) {
            return match r {
                "pulumi.json#/Any" | "pulumi.json#/Json" => Ok(PType::Any),
                "pulumi.json#/Asset" => Ok(PType::AssetOrArchive),
                "pulumi.json#/Archive" => Ok(PType::Archive),
                _ => match r.strip_prefix("#/types/") {
                    Some(_) if depth >= MAX_DEPTH => Ok(PType::Any),
                    Some(tok) => {
                        let Some(t) = self.types.get(tok) else {
                            return Err(format!(
                                "{owner}: reference to the undefined type {tok:?}"
                            ));
                        };
                        if t.get("enum").is_some() {
                            return self.ty(&serde_json::json!({"type": t.get("type").cloned().unwrap_or(J::Null)}), owner, depth);
                        }
                        let required = strings(t.get("required"));
                        let props = match t.get("properties") {
                            Some(p) => self.props(p, &required, true, true, tok, depth + 1)?,
                            None => Vec::new(),
                        };
                        check_unique(tok, &props)?;
                        Ok(PType::Object(props))
                    }
                    // Another package's types or resources: as they come.
                    None => Ok(PType::Any),
                },
            };
        }
        if spec.get("oneOf").is_some() {
            return Ok(PType::Any);
        }
        match spec.get("type").and_then(J::as_str) {
            Some("string") => Ok(PType::String),
            Some("boolean") => Ok(PType::Bool),
            Some("number") => Ok(PType::Number),
            Some("integer") => Ok(PType::Integer),
            Some("array") => {
                let items = spec.get("items").cloned().unwrap_or(J::Null);
                Ok(PType::Array(Box::new(self.ty(&items, owner, depth)?)))
            }
            Some("object") => match spec.get("additionalProperties") {
                Some(a) => Ok(PType::Map(Box::new(self.ty(a, owner, depth)?))),
                None => Ok(PType::Map(Box::new(PType::Any))),
            },
            None => Ok(PType::Any),
            Some(other) => Err(format!("{owner}: unknown property type {other:?}")),
        }
    }
}

impl PType {
    /// The terrane type (HCL attribute names).
    pub fn ty(&self) -> Type {
        match self {
            PType::Any | PType::AssetOrArchive => Type::Dynamic,
            PType::Bool => Type::Bool,
            PType::Number | PType::Integer => Type::Number,
            PType::String => Type::String,
            PType::Array(e) => Type::list(e.ty()),
            PType::Map(e) => Type::map(e.ty()),
            PType::Object(props) => Type::object(props.iter().map(|p| (p.hcl.clone(), p.ty.ty()))),
            PType::Asset => terrane_pulumirpc::codec::asset_type(),
            PType::Archive => terrane_pulumirpc::codec::archive_type(),
        }
    }

    /// The codec's shape (wire names).
    pub fn shape(&self) -> Shape {
        match self {
            PType::Any => Shape::Any,
            PType::Bool => Shape::Bool,
            PType::Number => Shape::Number,
            PType::Integer => Shape::Integer,
            PType::String => Shape::String,
            PType::Array(e) => Shape::Array(Box::new(e.shape())),
            PType::Map(e) => Shape::Map(Box::new(e.shape())),
            PType::Object(props) => object_shape(props.iter()),
            PType::Asset => Shape::Asset,
            PType::Archive => Shape::Archive,
            PType::AssetOrArchive => Shape::AssetOrArchive,
        }
    }
}

/// The shape of an object with these properties.
pub fn object_shape<'a>(props: impl Iterator<Item = &'a Prop>) -> Shape {
    Shape::Object(props.map(|p| (p.wire.clone(), p.ty.shape())).collect())
}

/// The type of an object with these properties (HCL names).
pub fn object_type<'a>(props: impl Iterator<Item = &'a Prop>) -> Type {
    Type::object(props.map(|p| (p.hcl.clone(), p.ty.ty())))
}

/// Renames a value of type `t` between the namings: `to_wire` takes HCL
/// attribute names to wire names, else the other way. Marks, nulls and
/// unknowns are kept (retyped).
pub fn rename(v: &Value, t: &PType, to_wire: bool) -> Value {
    let out = match (v.kind(), t) {
        (Kind::Null, _) => Value::null(if to_wire { v.ty().clone() } else { t.ty() }),
        (Kind::Unknown(_), _) => Value::unknown(if to_wire { v.ty().clone() } else { t.ty() }),
        (Kind::Map(attrs), PType::Object(props)) => {
            Value::object(rename_attrs(attrs, props, to_wire))
        }
        (Kind::Seq(elems) | Kind::Set(elems), PType::Array(e)) => {
            let elems: Vec<Value> = elems.iter().map(|x| rename(x, e, to_wire)).collect();
            if to_wire || e.ty().has_dynamic() {
                Value::tuple(elems)
            } else {
                Value::list(e.ty(), elems)
            }
        }
        (Kind::Map(entries), PType::Map(e)) => {
            let entries = entries
                .iter()
                .map(|(k, x)| (k.clone(), rename(x, e, to_wire)))
                .collect();
            if to_wire || e.ty().has_dynamic() {
                Value::object(entries)
            } else {
                Value::map(e.ty(), entries)
            }
        }
        _ => v.clone().with_sensitive(false),
    };
    out.with_sensitive(v.is_sensitive())
}

fn rename_attrs(
    attrs: &terrane_value::Entries,
    props: &[Prop],
    to_wire: bool,
) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for p in props {
        let (from, to) = if to_wire {
            (&p.hcl, &p.wire)
        } else {
            (&p.wire, &p.hcl)
        };
        let v = match attrs.get(from) {
            Some(v) => rename(v, &p.ty, to_wire),
            None if to_wire => continue,
            None => Value::null(p.ty.ty()),
        };
        out.insert(to.clone(), v);
    }
    out
}

/// The HCL object of `props` from a decoded wire object (absent
/// properties null), typed by `object_type`.
pub fn from_wire(v: &Value, props: &[Prop]) -> BTreeMap<String, Value> {
    match v.kind() {
        Kind::Map(attrs) => rename_attrs(attrs, props, false),
        _ => props
            .iter()
            .map(|p| (p.hcl.clone(), Value::null(p.ty.ty())))
            .collect(),
    }
}

/// The wire object of the `props` set in HCL object `v` (nulls left out).
pub fn to_wire(v: &Value, props: &[&Prop]) -> Value {
    let mut out = BTreeMap::new();
    for p in props {
        if let Some(x) = v.get_attr(&p.hcl) {
            if !x.is_null() || x.is_sensitive() {
                // A secret property goes as a secret whatever its marks.
                let x = rename(x, &p.ty, true);
                let x = if p.secret { x.mark_sensitive() } else { x };
                out.insert(p.wire.clone(), x);
            }
        }
    }
    Value::object(out)
}

fn attribute(p: &Prop, kind: AttrKind) -> Attribute {
    let mut a = match kind {
        AttrKind::Required => Attribute::required(p.ty.ty()),
        AttrKind::OptionalComputed => {
            let mut a = Attribute::optional(p.ty.ty());
            a.computed = true;
            a
        }
        AttrKind::Optional => Attribute::optional(p.ty.ty()),
        AttrKind::Computed => Attribute::computed(p.ty.ty()),
    };
    a.sensitive = p.secret;
    a.description = p.description.clone();
    // An asset or archive is written as an object with only the members
    // it uses (`{ uri = "..." }`): a single nested object whose members
    // are all optional, of the same type as the codec's.
    let blob = match &p.ty {
        PType::Asset => Some(terrane_pulumirpc::codec::asset_type()),
        PType::Archive => Some(terrane_pulumirpc::codec::archive_type()),
        _ => None,
    };
    if let Some(Type::Object(o)) = blob {
        a.ty = AttrType::Nested(terrane_schema::NestedObject {
            attributes: o
                .attrs()
                .iter()
                .map(|(k, t)| (k.clone(), Attribute::optional(t.clone())))
                .collect(),
            nesting: terrane_schema::ObjectNesting::Single,
        });
    }
    a
}

enum AttrKind {
    Required,
    Optional,
    OptionalComputed,
    Computed,
}

impl Resource {
    /// The terrane schema: required inputs required, other inputs
    /// optional and computed (Check may fill defaults), outputs computed;
    /// plus `id` and `urn`.
    pub fn schema(&self) -> Schema {
        let mut block = Block::new();
        for p in &self.props {
            let kind = match (p.input, p.required) {
                (true, true) => AttrKind::Required,
                (true, false) => AttrKind::OptionalComputed,
                (false, _) => AttrKind::Computed,
            };
            block.attributes.insert(p.hcl.clone(), attribute(p, kind));
        }
        block
            .attributes
            .insert(ID.into(), Attribute::computed(Type::String));
        block
            .attributes
            .insert(URN.into(), Attribute::computed(Type::String));
        if self.has_timeouts() {
            let mut t = Block::new();
            for op in TIMED {
                t = t.attr(op, Attribute::optional(Type::String));
            }
            block.block_types.insert(
                TIMEOUTS.into(),
                terrane_schema::NestedBlock {
                    block: t,
                    nesting: terrane_schema::BlockNesting::Single,
                    min_items: 0,
                    max_items: 0,
                },
            );
        }
        Schema::new(0, block)
    }

    /// Whether the resource gets the `timeouts` block (no property of its
    /// own takes the name).
    pub fn has_timeouts(&self) -> bool {
        !self.props.iter().any(|p| p.hcl == TIMEOUTS)
    }

    pub fn inputs(&self) -> Vec<&Prop> {
        self.props.iter().filter(|p| p.input).collect()
    }

    pub fn prop_by_wire(&self, wire: &str) -> Option<&Prop> {
        self.props.iter().find(|p| p.wire == wire)
    }
}

impl Function {
    /// The data source schema: arguments as inputs, results computed.
    pub fn schema(&self) -> Schema {
        let mut block = Block::new();
        for p in &self.outputs {
            block
                .attributes
                .insert(p.hcl.clone(), attribute(p, AttrKind::Computed));
        }
        for p in &self.inputs {
            let kind = if p.required {
                AttrKind::Required
            } else {
                AttrKind::Optional
            };
            block.attributes.insert(p.hcl.clone(), attribute(p, kind));
        }
        Schema::new(0, block)
    }
}

/// The provider configuration schema.
pub fn config_schema(props: &[Prop]) -> Schema {
    let mut block = Block::new();
    for p in props {
        let kind = if p.required {
            AttrKind::Required
        } else {
            AttrKind::Optional
        };
        block.attributes.insert(p.hcl.clone(), attribute(p, kind));
    }
    Schema::new(0, block)
}

/// A property path from a Check failure (`tags.foo`, `items[0].name`,
/// `["odd key"]`) as a terrane path with HCL names, when it parses.
pub fn property_path(path: &str, props: &[Prop]) -> Option<terrane_value::Path> {
    let mut out = terrane_value::Path::root();
    // The properties at this level (the top level, or an object type),
    // or the type of the value the path is in.
    let top = PType::Object(props.to_vec());
    let mut cur: Option<&PType> = Some(&top);
    let mut rest = path.trim();
    let mut first = true;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']')?;
            let inner = &r[..end];
            rest = &r[end + 1..];
            if let Ok(i) = inner.parse::<i64>() {
                out.push(terrane_value::Step::Index(i));
            } else {
                let key: String = serde_json::from_str(inner).ok()?;
                out.push(terrane_value::Step::Key(key));
            }
            cur = element(cur);
        } else {
            let r = if first { rest } else { rest.strip_prefix('.')? };
            let end = r.find(['.', '[']).unwrap_or(r.len());
            let name = &r[..end];
            rest = &r[end..];
            let found = match cur {
                Some(PType::Object(ps)) => ps.iter().find(|p| p.wire == name),
                _ => None,
            };
            match found {
                Some(p) => {
                    out.push(terrane_value::Step::Attr(p.hcl.clone()));
                    cur = Some(&p.ty);
                }
                None => {
                    out.push(terrane_value::Step::Key(name.to_string()));
                    cur = element(cur);
                }
            }
        }
        first = false;
    }
    Some(out)
}

/// The element type of an array or map type.
fn element(t: Option<&PType>) -> Option<&PType> {
    match t {
        Some(PType::Array(e) | PType::Map(e)) => Some(e.as_ref()),
        _ => None,
    }
}

/// The HCL name of a token (for messages).
pub fn hcl_name(token: &str) -> String {
    token_to_hcl(token).unwrap_or_else(|_| token.to_string())
}

/// Implements the `AttrType` accessor the host needs.
pub fn plain_type(a: &Attribute) -> Type {
    match &a.ty {
        AttrType::Type(t) => t.clone(),
        AttrType::Nested(_) => Type::Dynamic,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCHEMA: &str = r##"{
      "name": "aws", "version": "1.0.0",
      "config": {"variables": {"region": {"type": "string"}}},
      "types": {
        "aws:s3/Rule:Rule": {"type": "object", "properties": {"maxAge": {"type": "integer"}}, "required": ["maxAge"]}
      },
      "resources": {
        "aws:s3/bucket:Bucket": {
          "inputProperties": {
            "bucketName": {"type": "string"},
            "apiKey": {"type": "string", "secret": true},
            "rules": {"type": "array", "items": {"$ref": "#/types/aws:s3/Rule:Rule"}},
            "tags": {"type": "object", "additionalProperties": {"type": "string"}},
            "code": {"$ref": "pulumi.json#/Archive"}
          },
          "requiredInputs": ["bucketName"],
          "properties": {"bucketName": {"type": "string"}, "arn": {"type": "string"}}
        },
        "aws:index:Thing": {"inputProperties": {}, "properties": {}}
      },
      "functions": {
        "aws:s3/getBucket:getBucket": {
          "inputs": {"properties": {"bucketName": {"type": "string"}}, "required": ["bucketName"]},
          "outputs": {"properties": {"arn": {"type": "string"}}}
        }
      }
    }"##;

    #[test]
    fn item1_schema_maps_tokens_types_and_secrets() {
        let pkg = Package::parse(SCHEMA).unwrap();
        let names: Vec<&str> = pkg.resources.keys().map(String::as_str).collect();
        assert_eq!(names, ["aws_s3_bucket", "aws_thing"]);
        assert!(pkg.functions.contains_key("aws_s3_get_bucket"));
        let s = pkg.resources["aws_s3_bucket"].schema();
        let a = &s.block.attributes;
        // (attribute, required, optional, computed, sensitive, type)
        let cases = [
            ("bucket_name", true, false, false, false, Type::String),
            ("api_key", false, true, true, true, Type::String),
            ("arn", false, false, true, false, Type::String),
            ("id", false, false, true, false, Type::String),
            ("urn", false, false, true, false, Type::String),
            (
                "rules",
                false,
                true,
                true,
                false,
                Type::list(Type::object([("max_age", Type::Number)])),
            ),
            ("tags", false, true, true, false, Type::map(Type::String)),
        ];
        for (name, required, optional, computed, sensitive, ty) in cases {
            let at = &a[name];
            assert_eq!(
                (
                    at.required,
                    at.optional,
                    at.computed,
                    at.sensitive,
                    plain_type(at)
                ),
                (required, optional, computed, sensitive, ty),
                "{name}"
            );
        }
        assert_eq!(pkg.config[0].hcl, "region");
    }

    #[test]
    fn item1_values_rename_between_wire_and_hcl_names() {
        let pkg = Package::parse(SCHEMA).unwrap();
        let res = &pkg.resources["aws_s3_bucket"];
        let hcl = Value::object_from([
            ("bucket_name", Value::string("b")),
            (
                "rules",
                Value::list(
                    Type::object([("max_age", Type::Number)]),
                    vec![Value::object_from([("max_age", Value::number(5))])],
                ),
            ),
            ("arn", Value::null(Type::String)),
        ]);
        let wire = to_wire(&hcl, &res.inputs());
        assert_eq!(wire.get_attr("bucketName"), Some(&Value::string("b")));
        let rules = wire.get_attr("rules").unwrap().elements().unwrap();
        assert_eq!(rules[0].get_attr("maxAge"), Some(&Value::number(5)));
        let back = from_wire(&wire, &res.props);
        assert_eq!(back["bucket_name"], Value::string("b"));
        assert_eq!(
            back["rules"].elements().unwrap()[0].get_attr("max_age"),
            Some(&Value::number(5))
        );
        assert!(back["arn"].is_null());
    }

    #[test]
    fn item1_check_failure_paths_become_attribute_paths() {
        let pkg = Package::parse(SCHEMA).unwrap();
        let props = &pkg.resources["aws_s3_bucket"].props;
        let cases = [
            ("top", "bucketName", ".bucket_name"),
            ("nested", "rules[0].maxAge", ".rules[0].max_age"),
            ("map key", "tags[\"env\"]", ".tags[\"env\"]"),
        ];
        for (name, path, want) in cases {
            let p = property_path(path, props).unwrap();
            assert_eq!(p.to_string(), want, "{name}");
        }
    }

    #[test]
    fn item1_bad_schemas_are_refused() {
        let cases = [
            ("not json", "{", "not JSON"),
            ("no name", r#"{"resources": {}}"#, "no package name"),
            (
                "colliding tokens",
                r#"{"name": "a", "resources": {"a:m/x:T": {}, "a:m/y:T": {}}}"#,
                "both map to",
            ),
            (
                "undefined type",
                r##"{"name": "a", "resources": {"a:index:T": {"inputProperties": {"x": {"$ref": "#/types/a:index:Nope"}}}}}"##,
                "undefined type",
            ),
        ];
        for (name, text, want) in cases {
            let e = Package::parse(text).unwrap_err();
            assert!(e.contains(want), "{name}: {e}");
        }
    }
}
