//! References: which objects an expression refers to (`var.x`,
//! `local.y`, `aws_instance.web`, `data.t.n`, `module.m`, `count.index`,
//! `each.key`, `path.module`, `terraform.workspace`, `self`), found by
//! walking the expression, including templates and function arguments,
//! and skipping the names a `for` expression binds. This drives the
//! engine's dependency graph.

use crate::diag::{Diagnostic, LineIndex, SourceRange};
use terrane_hcl::expr::{Expression, ForExpr, TraversalOperator};
use terrane_hcl::template::ForTemplateExpr;
use terrane_hcl::visit::{visit_expr, Visit};
use terrane_hcl::Span;

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Subject {
    Resource {
        data: bool,
        ty: String,
        name: String,
    },
    Var(String),
    Local(String),
    Module(String),
    /// `ephemeral.type.name` (an `ephemeral` block).
    Ephemeral {
        ty: String,
        name: String,
    },
    CountIndex,
    EachKey,
    EachValue,
    Path(String),
    TerraformWorkspace,
    SelfRef,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reference {
    pub subject: Subject,
    pub range: Option<SourceRange>,
    /// The attribute accessed on the subject, past any index or splat
    /// (`module.m[0].out` gives `out`), with the range of its `.name`
    /// step: what the static check matches against module outputs.
    pub attr: Option<(String, Option<SourceRange>)>,
}

struct Finder<'a> {
    index: &'a LineIndex,
    bound: Vec<String>,
    refs: Vec<Reference>,
    diags: Vec<Diagnostic>,
}

fn attr(ops: &[terrane_hcl::Decorated<TraversalOperator>], i: usize) -> Option<String> {
    match ops.get(i).map(|o| o.value()) {
        Some(TraversalOperator::GetAttr(id)) => Some(id.as_str().to_string()),
        _ => None,
    }
}

impl Finder<'_> {
    fn invalid(&mut self, span: Option<std::ops::Range<usize>>, detail: String) {
        self.diags.push(Diagnostic::error(
            "Invalid reference",
            detail,
            self.index.range(span),
        ));
    }

    fn root(
        &mut self,
        name: &str,
        ops: &[terrane_hcl::Decorated<TraversalOperator>],
        span: Option<std::ops::Range<usize>>,
    ) {
        if self.bound.iter().any(|b| b == name) {
            return;
        }
        let a0 = attr(ops, 0);
        let subject = match (name, a0) {
            ("var", Some(n)) => Subject::Var(n),
            ("local", Some(n)) => Subject::Local(n),
            ("module", Some(n)) => Subject::Module(n),
            ("count", Some(n)) if n == "index" => Subject::CountIndex,
            ("each", Some(n)) if n == "key" => Subject::EachKey,
            ("each", Some(n)) if n == "value" => Subject::EachValue,
            ("path", Some(n)) if ["module", "root", "cwd"].contains(&n.as_str()) => Subject::Path(n),
            ("terraform", Some(n)) if n == "workspace" => Subject::TerraformWorkspace,
            ("self", _) => Subject::SelfRef,
            ("data", Some(ty)) => match attr(ops, 1) {
                Some(n) => Subject::Resource { data: true, ty, name: n },
                None => return self.invalid(span, format!("A reference to a data source must be followed by the data source name: data.{ty}.NAME")),
            },
            ("ephemeral", Some(ty)) => match attr(ops, 1) {
                Some(n) => Subject::Ephemeral { ty, name: n },
                None => return self.invalid(span, "The \"ephemeral\" object must be followed by two attribute names: the ephemeral resource type and the resource name.".into()),
            },
            ("ephemeral", None) => return self.invalid(span, "The \"ephemeral\" object must be followed by two attribute names: the ephemeral resource type and the resource name.".into()),
            ("var" | "local" | "module" | "data", None) => {
                return self.invalid(span, format!("The \"{name}\" object cannot be accessed directly. Instead, access one of its attributes."));
            }
            ("count" | "each" | "path" | "terraform", _) => return self.invalid(span, format!("The \"{name}\" object does not have an attribute by that name.")),
            (ty, Some(n)) => Subject::Resource { data: false, ty: ty.to_string(), name: n },
            (ty, None) => return self.invalid(span, format!("A reference to a resource type must be followed by at least one attribute access, specifying the resource name: {ty}.NAME")),
        };
        let range = self.index.range(span);
        let skip = match &subject {
            Subject::Resource { data: true, .. } | Subject::Ephemeral { .. } => 2,
            Subject::Resource { .. } | Subject::Var(_) | Subject::Local(_) | Subject::Module(_) => {
                1
            }
            _ => 0,
        };
        let attr = if skip == 0 {
            None
        } else {
            ops.iter()
                .skip(skip)
                .find(|o| {
                    !matches!(
                        o.value(),
                        TraversalOperator::Index(_)
                            | TraversalOperator::LegacyIndex(_)
                            | TraversalOperator::AttrSplat(_)
                            | TraversalOperator::FullSplat(_)
                    )
                })
                .and_then(|o| match o.value() {
                    TraversalOperator::GetAttr(id) => {
                        Some((id.as_str().to_string(), self.index.range(o.span())))
                    }
                    _ => None,
                })
        };
        self.refs.push(Reference {
            subject,
            range,
            attr,
        });
    }
}

/// The primitive type keywords and `any`.
const TYPE_KEYWORDS: &[&str] = &["string", "number", "bool", "any"];

impl Visit for Finder<'_> {
    fn visit_expr(&mut self, expr: &Expression) {
        match expr {
            // A bare type keyword is no reference (as in Terraform, where it
            // only fails at evaluation, as an unknown variable): it is what
            // `convert`'s type argument is written with.
            Expression::Variable(v) if TYPE_KEYWORDS.contains(&v.as_str()) => {}
            Expression::Variable(v) => self.root(v.as_str(), &[], expr.span()),
            Expression::Traversal(t) => {
                if let Expression::Variable(v) = &t.expr {
                    self.root(v.as_str(), &t.operators, expr.span());
                    for op in &t.operators {
                        if let TraversalOperator::Index(i) = op.value() {
                            self.visit_expr(i);
                        }
                    }
                } else {
                    visit_expr(self, expr);
                }
            }
            _ => visit_expr(self, expr),
        }
    }

    fn visit_for_expr(&mut self, node: &ForExpr) {
        self.visit_expr(&node.intro.collection_expr);
        let before = self.bound.len();
        if let Some(k) = &node.intro.key_var {
            self.bound.push(k.as_str().to_string());
        }
        self.bound.push(node.intro.value_var.as_str().to_string());
        if let Some(k) = &node.key_expr {
            self.visit_expr(k);
        }
        self.visit_expr(&node.value_expr);
        if let Some(c) = &node.cond {
            self.visit_expr(&c.expr);
        }
        self.bound.truncate(before);
    }

    fn visit_for_template_expr(&mut self, node: &ForTemplateExpr) {
        self.visit_expr(&node.collection_expr);
        let before = self.bound.len();
        if let Some(k) = &node.key_var {
            self.bound.push(k.as_str().to_string());
        }
        self.bound.push(node.value_var.as_str().to_string());
        self.visit_template(&node.template);
        self.bound.truncate(before);
    }
}

/// The references `expr` makes, and diagnostics for malformed ones.
pub fn references(expr: &Expression, index: &LineIndex) -> (Vec<Reference>, Vec<Diagnostic>) {
    references_bound(expr, index, &[])
}

/// Like [`references`], with `bound` names (a `dynamic` block's iterator)
/// treated like `for` variables: not references.
pub fn references_bound(
    expr: &Expression,
    index: &LineIndex,
    bound: &[String],
) -> (Vec<Reference>, Vec<Diagnostic>) {
    let mut f = Finder {
        index,
        bound: bound.to_vec(),
        refs: Vec::new(),
        diags: Vec::new(),
    };
    f.visit_expr(expr);
    // Kept with the expression as long as the module: no spare room.
    f.refs.shrink_to_fit();
    (f.refs, f.diags)
}

/// The ranges of the calls of the built-in function `func` in `e` (for
/// `ephemeralasnull`: references inside one do not make the result
/// ephemeral).
pub fn calls_of(e: &crate::Expr, func: &str) -> Vec<SourceRange> {
    struct Calls<'a> {
        func: &'a str,
        index: &'a LineIndex,
        out: Vec<SourceRange>,
    }
    impl Visit for Calls<'_> {
        fn visit_expr(&mut self, e: &Expression) {
            if let Expression::FuncCall(f) = e {
                if f.name.namespace.is_empty() && f.name.name.as_str() == self.func {
                    self.out.extend(self.index.range(e.span()));
                    return;
                }
            }
            visit_expr(self, e);
        }
    }
    let mut c = Calls {
        func,
        index: &e.index,
        out: Vec::new(),
    };
    c.visit_expr(&e.expr);
    c.out
}
