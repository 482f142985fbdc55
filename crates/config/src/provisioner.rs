//! `provisioner` and `connection` blocks of managed resources, and the
//! reserved `locals` block of resources and data sources, decoded with
//! the checks Terraform makes when it loads them: the `when` and
//! `on_failure` keywords (quoted keywords are deprecated), removed
//! provisioner types, a second `connection` block, `lifecycle` inside a
//! provisioner, and the references a destroy-time provisioner may make
//! (only `self`, `count.index`, `each.key`, `path.*` and `terraform.*`).
//! Running provisioners is not implemented; this only loads them.

use crate::decode::{literal_string, Cx};
use crate::diag::{hcl_range, Diagnostic};
use crate::model::*;
use crate::refs::Subject;
use crate::source::{def_span, GAttr, GBlock, GBody};
use std::collections::BTreeMap;
use terrane_hcl::expr::Expression;
use terrane_hcl::Span;

const REMOVED_PROVISIONERS: [&str; 4] = ["chef", "habitat", "puppet", "salt-masterless"];

const DESTROY_REFS: &str = "Destroy-time provisioners and their connection configurations may only reference attributes of the related resource, via 'self', 'count.index', or 'each.key'.\n\nReferences to other resources during the destroy phase can cause dependency cycles and interact poorly with create_before_destroy.";

impl Cx<'_> {
    /// Takes the meta blocks of a resource body: `locals` (reserved in
    /// resources and data sources), and in managed resources `provisioner`
    /// and `connection`. Returns any other block untouched.
    pub(crate) fn resource_meta_block(&mut self, r: &mut Resource, b: GBlock) -> Option<GBlock> {
        match (b.ty.as_str(), r.data) {
            ("locals", data) => {
                let what = if data { "data" } else { "resource" };
                self.error(
                    &format!("Reserved block type name in {what} block"),
                    format!(
                        "The block type name {:?} is reserved for use by Terraform in a future version.",
                        b.ty
                    ),
                    b.ty_span.clone(),
                );
                None
            }
            ("provisioner", false) => {
                if let Some(p) = self.provisioner(b) {
                    r.provisioners.push(p);
                }
                None
            }
            ("connection", false) => {
                if let Some(prev) = &r.connection {
                    let detail = format!(
                        "This resource already has a connection block at {}.",
                        hcl_range(&prev.range)
                    );
                    self.error(
                        "Duplicate connection block",
                        detail,
                        def_span(&b, self.json),
                    );
                } else {
                    r.connection = Some(self.connection(b, false));
                }
                None
            }
            _ => Some(b),
        }
    }

    /// `provisioner` and `connection` blocks of a `removed` block: only
    /// destroy-time provisioners are allowed there.
    pub(crate) fn removed_meta_block(
        &mut self,
        provisioners: &mut Vec<Provisioner>,
        connection: &mut Option<Connection>,
        b: GBlock,
    ) {
        let def = def_span(&b, self.json);
        if b.ty == "connection" {
            if let Some(prev) = connection {
                let detail = format!(
                    "This \"removed\" block already has a connection block at {}.",
                    hcl_range(&prev.range)
                );
                self.error("Duplicate connection block", detail, def);
            } else {
                *connection = Some(self.connection(b, true));
            }
            return;
        }
        let Some(p) = self.provisioner(b) else { return };
        if p.when != ProvisionerWhen::Destroy {
            self.error(
                "Invalid provisioner block",
                "Only destroy-time provisioners are valid in \"removed\" blocks. To declare a destroy-time provisioner, use:\n    when = destroy".into(),
                def,
            );
            return;
        }
        provisioners.push(p);
    }

    fn provisioner(&mut self, mut b: GBlock) -> Option<Provisioner> {
        let ty = match b.labels.as_slice() {
            [(l, _)] => l.clone(),
            [] => {
                let at = b.body_span.as_ref().map(|s| s.start..s.start + 1);
                self.error(
                    "Missing type for provisioner",
                    "All provisioner blocks must have 1 labels (type).".into(),
                    at,
                );
                return None;
            }
            [_, (_, extra), ..] => {
                self.error(
                    "Extraneous label for provisioner",
                    "Only 1 labels (type) are expected for provisioner blocks.".into(),
                    extra.clone(),
                );
                return None;
            }
        };
        let type_span = b.labels[0].1.clone();
        if REMOVED_PROVISIONERS.contains(&ty.as_str()) {
            self.error(
                &format!("The {ty:?} provisioner has been removed"),
                format!("The {ty:?} provisioner was deprecated in Terraform 0.13.4 has been removed from Terraform. Visit https://learn.hashicorp.com/collections/terraform/provision for alternatives to using provisioners that are a better fit for the Terraform workflow."),
                type_span,
            );
            return None;
        }
        let mut p = Provisioner {
            ty,
            range: self.range(b.span.clone()),
            type_range: self.range(type_span),
            when: ProvisionerWhen::Create,
            on_failure: ProvisionerOnFailure::Fail,
            connection: None,
            attributes: BTreeMap::new(),
            blocks: Vec::new(),
        };
        if let Some(a) = b.body.take("when") {
            match self.keyword(&a).as_deref() {
                Some("create") => p.when = ProvisionerWhen::Create,
                Some("destroy") => p.when = ProvisionerWhen::Destroy,
                _ => self.diags.push(Diagnostic::error(
                    "Invalid \"when\" keyword",
                    "The \"when\" argument requires one of the following keywords: create or destroy.",
                    a.index.range(a.value.span()),
                )),
            }
        }
        let destroy = p.when == ProvisionerWhen::Destroy;
        if let Some(a) = b.body.take("on_failure") {
            match self.keyword(&a).as_deref() {
                Some("continue") => p.on_failure = ProvisionerOnFailure::Continue,
                Some("fail") => p.on_failure = ProvisionerOnFailure::Fail,
                _ => self.diags.push(Diagnostic::error(
                    "Invalid \"on_failure\" keyword",
                    "The \"on_failure\" argument requires one of the following keywords: continue or fail.",
                    a.index.range(a.value.span()),
                )),
            }
        }
        let blocks = std::mem::take(&mut b.body.blocks);
        p.attributes = self.provisioner_attrs(b.body, destroy);
        // The first `_` (escaping) block, where a second one is refused.
        let mut escaping = None;
        for blk in blocks {
            match blk.ty.as_str() {
                "_" if escaping.is_some() => {
                    let detail = format!(
                        "The special block type \"_\" can be used to force particular arguments to be interpreted as provisioner-typpe-specific rather than as meta-arguments, but each provisioner block can have only one such block. The first escaping block was at {}.",
                        hcl_range(&escaping)
                    );
                    self.error("Duplicate escaping block", detail, def_span(&blk, self.json));
                }
                "connection" => {
                    if let Some(prev) = &p.connection {
                        let detail = format!(
                            "This provisioner already has a connection block at {}.",
                            hcl_range(&prev.range)
                        );
                        self.error("Duplicate connection block", detail, def_span(&blk, self.json));
                        continue;
                    }
                    p.connection = Some(self.connection(blk, destroy));
                }
                "lifecycle" => self.error(
                    "Reserved block type name in provisioner block",
                    "The block type name \"lifecycle\" is reserved for use by Terraform in a future version.".into(),
                    blk.ty_span.clone(),
                ),
                ty => {
                    if ty == "_" {
                        escaping = self.range(def_span(&blk, self.json));
                    }
                    if let Some(nb) = self.nested_block(blk) {
                        p.blocks.push(nb);
                    }
                }
            }
        }
        Some(p)
    }

    /// A `connection` block; in a destroy-time provisioner its arguments
    /// may only refer to the resource itself.
    fn connection(&mut self, mut b: GBlock, destroy: bool) -> Connection {
        let range = self.range(def_span(&b, self.json));
        let blocks = std::mem::take(&mut b.body.blocks);
        let attributes = self.provisioner_attrs(b.body, destroy);
        let blocks = blocks
            .into_iter()
            .filter_map(|nb| self.nested_block(nb))
            .collect();
        Connection {
            range,
            attributes,
            blocks,
        }
    }

    fn provisioner_attrs(&mut self, body: GBody, destroy: bool) -> BTreeMap<String, Expr> {
        let mut out = BTreeMap::new();
        for a in body.attrs {
            let name = a.name.clone();
            let e = self.expr(a);
            if destroy {
                self.destroy_refs(&e);
            }
            out.insert(name, e);
        }
        out
    }

    /// A destroy-time provisioner's argument may refer only to the
    /// resource itself: one error per other reference.
    fn destroy_refs(&mut self, e: &Expr) {
        for r in &e.refs {
            let allowed = matches!(
                r.subject,
                Subject::SelfRef
                    | Subject::CountIndex
                    | Subject::EachKey
                    | Subject::Path(_)
                    | Subject::TerraformWorkspace
            );
            if !allowed {
                self.diags.push(Diagnostic::error(
                    "Invalid reference from destroy provisioner",
                    DESTROY_REFS,
                    e.range.clone(),
                ));
            }
        }
    }

    /// The resource-level connection is used by destroy-time provisioners
    /// too, so with one of them it follows their reference rule.
    pub(crate) fn connection_destroy_refs(&mut self, r: &Resource) {
        let Some(c) = &r.connection else { return };
        if r.provisioners
            .iter()
            .any(|p| p.when == ProvisionerWhen::Destroy)
        {
            for e in c.attributes.values() {
                self.destroy_refs(e);
            }
        }
    }

    /// A keyword argument (`when = destroy`): a bare name, or in native
    /// syntax a quoted one with Terraform's deprecation warning (in JSON a
    /// string is how a keyword is written).
    pub(crate) fn keyword(&mut self, a: &GAttr) -> Option<String> {
        match &a.value {
            Expression::Variable(v) => Some(v.as_str().to_string()),
            e @ (Expression::String(_) | Expression::StringTemplate(_)) => {
                let s = literal_string(e)?;
                if !self.json {
                    self.diags.push(Diagnostic::warning(
                        "Quoted keywords are deprecated",
                        "In this context, keywords are expected literally rather than in quotes. Terraform 0.11 and earlier required quotes, but quoted keywords are now deprecated and will be removed in a future version of Terraform. Remove the quotes surrounding this keyword to silence this warning.",
                        a.index.range(e.span()),
                    ));
                }
                Some(s)
            }
            _ => None,
        }
    }
}
