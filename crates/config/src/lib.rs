//! terrane-config: Terraform-style configuration (`*.tf`) read into a
//! module model that keeps every source range, with the references each
//! expression makes. Loading never fails outright: it returns the model
//! plus every diagnostic it found (syntax errors with file:line:column,
//! duplicate names, conflicting meta-arguments, malformed references).
//!
//! Syntax comes from `hcl-edit` (re-exported as [`hcl`]); expressions are
//! kept unevaluated for the evaluator; variable type constraints are parsed
//! into terrane-value types. No I/O beyond reading the files of
//! [`load_module`]; not async; depends only on terrane-value.

mod diag;
mod refs;
mod typeexpr;

pub use diag::{Diagnostic, LineIndex, Pos, Severity, SourceRange};
pub use hcl_edit as hcl;
pub use refs::{references, Reference, Subject};
pub use typeexpr::{parse_type, TypeConstraint};

use hcl_edit::expr::Expression;
use hcl_edit::structure::{Block, BlockLabel, Body};
use hcl_edit::Span;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// An unevaluated expression with its range and references.
#[derive(Clone, Debug)]
pub struct Expr {
    pub expr: Expression,
    pub range: Option<SourceRange>,
    pub refs: Vec<Reference>,
    /// The line index of the file the expression is in, so evaluation
    /// diagnostics can point at sub-expressions.
    pub index: Arc<LineIndex>,
}

/// `lifecycle { ... }` of a resource.
#[derive(Clone, Debug, Default)]
pub struct Lifecycle {
    pub create_before_destroy: Option<Expr>,
    pub prevent_destroy: Option<Expr>,
    pub ignore_changes: Option<Expr>,
    pub replace_triggered_by: Option<Expr>,
}

/// A `resource` or `data` block.
#[derive(Clone, Debug)]
pub struct Resource {
    pub data: bool,
    pub ty: String,
    pub name: String,
    pub range: Option<SourceRange>,
    pub count: Option<Expr>,
    pub for_each: Option<Expr>,
    pub provider: Option<Expr>,
    pub depends_on: Option<Expr>,
    pub lifecycle: Lifecycle,
    /// The other arguments, unevaluated.
    pub attributes: BTreeMap<String, Expr>,
    /// Nested blocks, kept as written.
    pub blocks: Vec<Block>,
}

#[derive(Clone, Debug)]
pub struct Variable {
    pub name: String,
    pub range: Option<SourceRange>,
    pub ty: Option<Expr>,
    /// The parsed type constraint (None when absent or invalid).
    pub constraint: Option<TypeConstraint>,
    pub default: Option<Expr>,
    pub sensitive: bool,
    pub nullable: bool,
    pub description: Option<String>,
}

#[derive(Clone, Debug)]
pub struct Output {
    pub name: String,
    pub range: Option<SourceRange>,
    pub value: Option<Expr>,
    pub sensitive: bool,
    pub depends_on: Option<Expr>,
}

#[derive(Clone, Debug)]
pub struct ModuleCall {
    pub name: String,
    pub range: Option<SourceRange>,
    pub source: Option<String>,
    pub count: Option<Expr>,
    pub for_each: Option<Expr>,
    pub inputs: BTreeMap<String, Expr>,
}

#[derive(Clone, Debug)]
pub struct ProviderConfig {
    pub name: String,
    pub alias: Option<String>,
    pub range: Option<SourceRange>,
    pub attributes: BTreeMap<String, Expr>,
}

/// `terraform { required_providers { ... } }` entry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequiredProvider {
    pub source: Option<String>,
    pub version: Option<String>,
}

/// A module: everything its files declare.
#[derive(Clone, Debug, Default)]
pub struct Module {
    pub files: Vec<String>,
    pub required_version: Option<String>,
    pub required_providers: BTreeMap<String, RequiredProvider>,
    pub providers: Vec<ProviderConfig>,
    pub variables: BTreeMap<String, Variable>,
    pub locals: BTreeMap<String, Expr>,
    pub outputs: BTreeMap<String, Output>,
    pub resources: Vec<Resource>,
    pub module_calls: BTreeMap<String, ModuleCall>,
    /// `moved`, `import`, `removed` and `check` blocks, kept as written.
    pub other_blocks: Vec<(String, Option<SourceRange>)>,
}

/// Loads every `*.tf` file of `dir` (sorted by name) into one module.
pub fn load_module(dir: &Path) -> (Module, Vec<Diagnostic>) {
    let mut module = Module::default();
    let mut diags = Vec::new();
    let mut files: Vec<_> = match std::fs::read_dir(dir) {
        Ok(rd) => rd.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "tf")).collect(),
        Err(e) => {
            diags.push(Diagnostic::error("Failed to read module directory", format!("{}: {e}", dir.display()), None));
            return (module, diags);
        }
    };
    files.sort();
    for f in files {
        let name = f.display().to_string();
        match std::fs::read_to_string(&f) {
            Ok(text) => parse_into(&mut module, &name, &text, &mut diags),
            Err(e) => diags.push(Diagnostic::error("Failed to read file", format!("{name}: {e}"), None)),
        }
    }
    (module, diags)
}

/// Parses one file's text into a fresh module (tests, single files).
pub fn parse_str(name: &str, text: &str) -> (Module, Vec<Diagnostic>) {
    let mut module = Module::default();
    let mut diags = Vec::new();
    parse_into(&mut module, name, text, &mut diags);
    (module, diags)
}

fn parse_into(module: &mut Module, name: &str, text: &str, diags: &mut Vec<Diagnostic>) {
    let index = Arc::new(LineIndex::new(name, text));
    module.files.push(name.to_string());
    let body = match hcl_edit::parser::parse_body(text) {
        Ok(b) => b,
        Err(e) => {
            let loc = e.location();
            diags.push(Diagnostic::error("Invalid syntax", e.message().to_string(), Some(index.at(loc.line(), loc.column()))));
            return;
        }
    };
    let mut cx = Cx { index: &index, diags };
    if let Some(attr) = body.attributes().next() {
        cx.error("Unsupported argument", format!("An argument named {:?} is not expected here.", attr.key.as_str()), attr.span());
    }
    for block in body.blocks() {
        cx.block(module, block);
    }
}

struct Cx<'a> {
    index: &'a Arc<LineIndex>,
    diags: &'a mut Vec<Diagnostic>,
}

fn label(l: &BlockLabel) -> &str {
    match l {
        BlockLabel::Ident(i) => i.as_str(),
        BlockLabel::String(s) => s.as_str(),
    }
}

fn valid_name(n: &str) -> bool {
    let mut c = n.chars();
    matches!(c.next(), Some(f) if f.is_alphabetic() || f == '_') && c.all(|c| c.is_alphanumeric() || c == '_' || c == '-')
}

/// A literal string expression's value.
fn literal_string(e: &Expression) -> Option<String> {
    match e {
        Expression::String(s) => Some(s.as_str().to_string()),
        _ => None,
    }
}

fn literal_bool(e: &Expression) -> Option<bool> {
    match e {
        Expression::Bool(b) => Some(*b.value()),
        _ => None,
    }
}

impl Cx<'_> {
    fn error(&mut self, summary: &str, detail: String, span: Option<std::ops::Range<usize>>) {
        let range = self.index.range(span);
        self.diags.push(Diagnostic::error(summary, detail, range));
    }

    fn expr(&mut self, e: &Expression) -> Expr {
        let (refs, d) = references(e, self.index);
        self.diags.extend(d);
        Expr { expr: e.clone(), range: self.index.range(e.span()), refs, index: self.index.clone() }
    }

    fn labels<'b>(&mut self, b: &'b Block, want: usize, what: &str) -> Option<Vec<&'b str>> {
        let labels: Vec<&str> = b.labels.iter().map(label).collect();
        if labels.len() != want {
            self.error(
                "Missing name for block",
                format!("A {what} block expects {want} label(s), got {}.", labels.len()),
                b.span(),
            );
            return None;
        }
        for (l, raw) in labels.iter().zip(&b.labels) {
            if !valid_name(l) {
                self.error("Invalid name", format!("{l:?} is not a valid name: names must start with a letter or underscore and contain only letters, digits, underscores and dashes."), raw.span());
                return None;
            }
        }
        Some(labels)
    }

    fn block(&mut self, module: &mut Module, b: &Block) {
        let kind = b.ident.as_str();
        let range = self.index.range(b.span());
        match kind {
            "resource" | "data" => {
                let Some(l) = self.labels(b, 2, kind) else { return };
                let data = kind == "data";
                if let Some(prev) = module.resources.iter().find(|r| r.data == data && r.ty == l[0] && r.name == l[1]) {
                    let at = prev.range.as_ref().map(|r| format!(" (first declared at {r})")).unwrap_or_default();
                    self.error("Duplicate resource", format!("A {kind} {:?} named {:?} was already declared{at}.", l[0], l[1]), b.span());
                    return;
                }
                let r = self.resource(data, l[0], l[1], range, &b.body);
                module.resources.push(r);
            }
            "variable" => {
                let Some(l) = self.labels(b, 1, kind) else { return };
                if module.variables.contains_key(l[0]) {
                    return self.error("Duplicate variable declaration", format!("A variable named {:?} was already declared.", l[0]), b.span());
                }
                let v = self.variable(l[0], range, &b.body);
                module.variables.insert(l[0].to_string(), v);
            }
            "output" => {
                let Some(l) = self.labels(b, 1, kind) else { return };
                if module.outputs.contains_key(l[0]) {
                    return self.error("Duplicate output definition", format!("An output named {:?} was already defined.", l[0]), b.span());
                }
                let get = |n: &str| b.body.get_attribute(n).map(|a| a.value.clone());
                let value = get("value").map(|e| self.expr(&e));
                if value.is_none() {
                    self.error("Missing required argument", "The argument \"value\" is required, but no definition was found.".into(), b.span());
                }
                let sensitive = get("sensitive").and_then(|e| literal_bool(&e)).unwrap_or(false);
                let depends_on = get("depends_on").map(|e| self.expr(&e));
                module.outputs.insert(l[0].to_string(), Output { name: l[0].to_string(), range, value, sensitive, depends_on });
            }
            "locals" => {
                for a in b.body.attributes() {
                    let name = a.key.as_str().to_string();
                    if module.locals.contains_key(&name) {
                        self.error("Duplicate local value definition", format!("A local value named {name:?} was already defined."), a.span());
                        continue;
                    }
                    let e = self.expr(&a.value);
                    module.locals.insert(name, e);
                }
            }
            "provider" => {
                let Some(l) = self.labels(b, 1, kind) else { return };
                let mut attributes = BTreeMap::new();
                let mut alias = None;
                for a in b.body.attributes() {
                    if a.key.as_str() == "alias" {
                        alias = literal_string(&a.value);
                    } else {
                        attributes.insert(a.key.as_str().to_string(), self.expr(&a.value));
                    }
                }
                if module.providers.iter().any(|p| p.name == l[0] && p.alias == alias) {
                    let which = alias.as_ref().map(|a| format!("{}.{a}", l[0])).unwrap_or_else(|| l[0].to_string());
                    return self.error("Duplicate provider configuration", format!("A provider configuration for {which:?} was already given."), b.span());
                }
                module.providers.push(ProviderConfig { name: l[0].to_string(), alias, range, attributes });
            }
            "module" => {
                let Some(l) = self.labels(b, 1, kind) else { return };
                let mut call = ModuleCall { name: l[0].to_string(), range, source: None, count: None, for_each: None, inputs: BTreeMap::new() };
                for a in b.body.attributes() {
                    match a.key.as_str() {
                        "source" => call.source = literal_string(&a.value),
                        "count" => call.count = Some(self.expr(&a.value)),
                        "for_each" => call.for_each = Some(self.expr(&a.value)),
                        "version" | "providers" | "depends_on" => {}
                        k => {
                            let e = self.expr(&a.value);
                            call.inputs.insert(k.to_string(), e);
                        }
                    }
                }
                if call.source.is_none() {
                    self.error("Missing required argument", "The argument \"source\" is required, but no definition was found.".into(), b.span());
                }
                if module.module_calls.insert(l[0].to_string(), call).is_some() {
                    self.error("Duplicate module call", format!("A module call named {:?} was already defined.", l[0]), b.span());
                }
            }
            "terraform" => self.terraform(module, &b.body),
            "moved" | "import" | "removed" | "check" => module.other_blocks.push((kind.to_string(), range)),
            other => self.error("Unsupported block type", format!("Blocks of type {other:?} are not expected here."), b.ident.span()),
        }
    }

    fn resource(&mut self, data: bool, ty: &str, name: &str, range: Option<SourceRange>, body: &Body) -> Resource {
        let mut r = Resource {
            data,
            ty: ty.into(),
            name: name.into(),
            range,
            count: None,
            for_each: None,
            provider: None,
            depends_on: None,
            lifecycle: Lifecycle::default(),
            attributes: BTreeMap::new(),
            blocks: Vec::new(),
        };
        for a in body.attributes() {
            let e = self.expr(&a.value);
            match a.key.as_str() {
                "count" => r.count = Some(e),
                "for_each" => r.for_each = Some(e),
                "provider" => r.provider = Some(e),
                "depends_on" => r.depends_on = Some(e),
                k => {
                    r.attributes.insert(k.to_string(), e);
                }
            }
        }
        if let (Some(_), Some(fe)) = (&r.count, &r.for_each) {
            self.diags.push(Diagnostic::error(
                "Invalid combination of \"count\" and \"for_each\"",
                "The \"count\" and \"for_each\" meta-arguments are mutually-exclusive, only one should be used to be explicit about the number of resources to be created.",
                fe.range.clone(),
            ));
        }
        for b in body.blocks() {
            if b.ident.as_str() == "lifecycle" && !data {
                for a in b.body.attributes() {
                    let e = if a.key.as_str() == "ignore_changes" { self.expr_no_refs(&a.value) } else { self.expr(&a.value) };
                    match a.key.as_str() {
                        "create_before_destroy" => r.lifecycle.create_before_destroy = Some(e),
                        "prevent_destroy" => r.lifecycle.prevent_destroy = Some(e),
                        // Attribute names of this resource, not references.
                        "ignore_changes" => r.lifecycle.ignore_changes = Some(e),
                        "replace_triggered_by" => r.lifecycle.replace_triggered_by = Some(e),
                        k => self.error("Unsupported argument", format!("An argument named {k:?} is not expected in a lifecycle block."), a.key.span()),
                    }
                }
            } else {
                r.blocks.push(b.clone());
            }
        }
        r
    }

    fn variable(&mut self, name: &str, range: Option<SourceRange>, body: &Body) -> Variable {
        let mut v = Variable { name: name.into(), range, ty: None, constraint: None, default: None, sensitive: false, nullable: true, description: None };
        for a in body.attributes() {
            match a.key.as_str() {
                "type" => {
                    match parse_type(&a.value, self.index) {
                        Ok(tc) => v.constraint = Some(tc),
                        Err(d) => self.diags.push(d),
                    }
                    v.ty = Some(self.expr_no_refs(&a.value));
                }
                "default" => v.default = Some(self.expr(&a.value)),
                "sensitive" => v.sensitive = literal_bool(&a.value).unwrap_or(false),
                "nullable" => v.nullable = literal_bool(&a.value).unwrap_or(true),
                "description" => v.description = literal_string(&a.value),
                "ephemeral" => {}
                k => self.error("Unsupported argument", format!("An argument named {k:?} is not expected in a variable block."), a.key.span()),
            }
        }
        v
    }

    /// Type constraints are keywords, not references.
    fn expr_no_refs(&mut self, e: &Expression) -> Expr {
        Expr { expr: e.clone(), range: self.index.range(e.span()), refs: Vec::new(), index: self.index.clone() }
    }

    fn terraform(&mut self, module: &mut Module, body: &Body) {
        for a in body.attributes() {
            if a.key.as_str() == "required_version" {
                module.required_version = literal_string(&a.value);
            }
        }
        for b in body.blocks() {
            if b.ident.as_str() != "required_providers" {
                continue;
            }
            for a in b.body.attributes() {
                let mut rp = RequiredProvider::default();
                match &a.value {
                    Expression::Object(o) => {
                        for (k, v) in o.iter() {
                            let key = match k {
                                hcl_edit::expr::ObjectKey::Ident(i) => i.as_str().to_string(),
                                hcl_edit::expr::ObjectKey::Expression(e) => literal_string(e).unwrap_or_default(),
                            };
                            match key.as_str() {
                                "source" => rp.source = literal_string(v.expr()),
                                "version" => rp.version = literal_string(v.expr()),
                                _ => {}
                            }
                        }
                    }
                    Expression::String(s) => rp.version = Some(s.as_str().to_string()),
                    _ => self.error("Invalid required_providers object", "required_providers entries must be objects with source and version.".into(), a.value.span()),
                }
                module.required_providers.insert(a.key.as_str().to_string(), rp);
            }
        }
    }
}

/// A module and the modules it calls, loaded from local sources.
#[derive(Clone, Debug, Default)]
pub struct Config {
    pub module: Module,
    /// Directory of this module.
    pub dir: std::path::PathBuf,
    /// Child modules by call name.
    pub children: BTreeMap<String, Config>,
}

/// Loads the root module in `dir` and, recursively, every module it calls
/// with a local `source` (`./` or `../`). Remote sources and calls that
/// would recurse into a module already being loaded are diagnosed.
pub fn load_config(dir: &Path) -> (Config, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    let mut stack = Vec::new();
    let config = load_tree(dir, &mut stack, &mut diags);
    (config, diags)
}

fn load_tree(dir: &Path, stack: &mut Vec<std::path::PathBuf>, diags: &mut Vec<Diagnostic>) -> Config {
    let canonical = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let (module, d) = load_module(dir);
    diags.extend(d);
    stack.push(canonical);
    let mut children = BTreeMap::new();
    for (name, call) in &module.module_calls {
        let Some(source) = &call.source else { continue };
        if !(source.starts_with("./") || source.starts_with("../")) {
            diags.push(Diagnostic::error(
                "Unsupported module source",
                format!("Module {name:?} has source {source:?}; only local paths (starting with ./ or ../) are supported."),
                call.range.clone(),
            ));
            continue;
        }
        let child_dir = dir.join(source);
        let child_canonical = child_dir.canonicalize().unwrap_or_else(|_| child_dir.clone());
        if !child_dir.is_dir() {
            diags.push(Diagnostic::error("Module not found", format!("Module {name:?}: the directory {} does not exist.", child_dir.display()), call.range.clone()));
            continue;
        }
        if stack.contains(&child_canonical) {
            diags.push(Diagnostic::error("Module recursion", format!("Module {name:?} calls {source:?}, which is already being loaded: modules cannot call themselves."), call.range.clone()));
            continue;
        }
        children.insert(name.clone(), load_tree(&child_dir, stack, diags));
    }
    stack.pop();
    Config { module, dir: dir.to_path_buf(), children }
}
