//! Walking the tree: [`Visit`] reads it, [`VisitMut`] may change it. Each
//! trait method's default walks into the node's children, through the
//! free function of the same name; an implementation that overrides a
//! method calls that function to keep walking.

use crate::ast::*;

pub trait Visit {
    fn visit_body(&mut self, b: &Body) {
        visit_body(self, b)
    }
    fn visit_block(&mut self, b: &Block) {
        visit_block(self, b)
    }
    fn visit_attribute(&mut self, a: &Attribute) {
        visit_attribute(self, a)
    }
    fn visit_expr(&mut self, e: &Expression) {
        visit_expr(self, e)
    }
    fn visit_for_expr(&mut self, f: &ForExpr) {
        visit_for_expr(self, f)
    }
    fn visit_template(&mut self, t: &Template) {
        visit_template(self, t)
    }
    fn visit_for_template_expr(&mut self, f: &ForTemplateExpr) {
        visit_for_template_expr(self, f)
    }
}

pub fn visit_body<V: Visit + ?Sized>(v: &mut V, b: &Body) {
    for s in b {
        match s {
            Structure::Attribute(a) => v.visit_attribute(a),
            Structure::Block(bl) => v.visit_block(bl),
        }
    }
}

pub fn visit_block<V: Visit + ?Sized>(v: &mut V, b: &Block) {
    v.visit_body(&b.body)
}

pub fn visit_attribute<V: Visit + ?Sized>(v: &mut V, a: &Attribute) {
    v.visit_expr(&a.value)
}

pub fn visit_expr<V: Visit + ?Sized>(v: &mut V, e: &Expression) {
    match e {
        Expression::Null(_)
        | Expression::Bool(_)
        | Expression::Number(_)
        | Expression::String(_)
        | Expression::Variable(_) => {}
        Expression::Array(a) => a.iter().for_each(|e| v.visit_expr(e)),
        Expression::Object(o) => {
            for (k, val) in o.iter() {
                if let ObjectKey::Expression(k) = k {
                    v.visit_expr(k);
                }
                v.visit_expr(val.expr());
            }
        }
        Expression::StringTemplate(t) => v.visit_template(t),
        Expression::HeredocTemplate(h) => v.visit_template(&h.template),
        Expression::Parenthesis(p) => v.visit_expr(p.inner()),
        Expression::Conditional(c) => {
            v.visit_expr(&c.cond_expr);
            v.visit_expr(&c.true_expr);
            v.visit_expr(&c.false_expr);
        }
        Expression::FuncCall(f) => f.args.iter().for_each(|e| v.visit_expr(e)),
        Expression::Traversal(t) => {
            v.visit_expr(&t.expr);
            for op in &t.operators {
                if let TraversalOperator::Index(i) = op.value() {
                    v.visit_expr(i);
                }
            }
        }
        Expression::UnaryOp(u) => v.visit_expr(&u.expr),
        Expression::BinaryOp(b) => {
            v.visit_expr(&b.lhs_expr);
            v.visit_expr(&b.rhs_expr);
        }
        Expression::ForExpr(f) => v.visit_for_expr(f),
    }
}

pub fn visit_for_expr<V: Visit + ?Sized>(v: &mut V, f: &ForExpr) {
    v.visit_expr(&f.intro.collection_expr);
    if let Some(k) = &f.key_expr {
        v.visit_expr(k);
    }
    v.visit_expr(&f.value_expr);
    if let Some(c) = &f.cond {
        v.visit_expr(&c.expr);
    }
}

pub fn visit_template<V: Visit + ?Sized>(v: &mut V, t: &Template) {
    for e in t {
        match e {
            Element::Literal(_) => {}
            Element::Interpolation(i) => v.visit_expr(&i.expr),
            Element::Directive(d) => match &**d {
                Directive::If(d) => {
                    v.visit_expr(&d.if_expr.cond_expr);
                    v.visit_template(&d.if_expr.template);
                    if let Some(e) = &d.else_expr {
                        v.visit_template(&e.template);
                    }
                }
                Directive::For(d) => v.visit_for_template_expr(&d.for_expr),
            },
        }
    }
}

pub fn visit_for_template_expr<V: Visit + ?Sized>(v: &mut V, f: &ForTemplateExpr) {
    v.visit_expr(&f.collection_expr);
    v.visit_template(&f.template);
}

pub trait VisitMut {
    fn visit_body_mut(&mut self, b: &mut Body) {
        visit_body_mut(self, b)
    }
    fn visit_block_mut(&mut self, b: &mut Block) {
        visit_block_mut(self, b)
    }
    fn visit_block_label_mut(&mut self, _l: &mut BlockLabel) {}
    fn visit_expr_mut(&mut self, e: &mut Expression) {
        visit_expr_mut(self, e)
    }
    fn visit_template_mut(&mut self, t: &mut Template) {
        visit_template_mut(self, t)
    }
}

pub fn visit_body_mut<V: VisitMut + ?Sized>(v: &mut V, b: &mut Body) {
    for s in b.iter_mut() {
        match s {
            Structure::Attribute(a) => v.visit_expr_mut(&mut a.value),
            Structure::Block(bl) => v.visit_block_mut(bl),
        }
    }
}

pub fn visit_block_mut<V: VisitMut + ?Sized>(v: &mut V, b: &mut Block) {
    for l in &mut b.labels {
        v.visit_block_label_mut(l);
    }
    v.visit_body_mut(&mut b.body)
}

pub fn visit_expr_mut<V: VisitMut + ?Sized>(v: &mut V, e: &mut Expression) {
    match e {
        Expression::Null(_)
        | Expression::Bool(_)
        | Expression::Number(_)
        | Expression::String(_)
        | Expression::Variable(_) => {}
        Expression::Array(a) => a.iter_mut().for_each(|e| v.visit_expr_mut(e)),
        Expression::Object(o) => {
            // Keys are not visited mutably: an object's items are found
            // by key.
            for (_, val) in o.iter_mut() {
                v.visit_expr_mut(val.expr_mut());
            }
        }
        Expression::StringTemplate(t) => v.visit_template_mut(t),
        Expression::HeredocTemplate(h) => v.visit_template_mut(&mut h.template),
        Expression::Parenthesis(p) => v.visit_expr_mut(p.inner_mut()),
        Expression::Conditional(c) => {
            v.visit_expr_mut(&mut c.cond_expr);
            v.visit_expr_mut(&mut c.true_expr);
            v.visit_expr_mut(&mut c.false_expr);
        }
        Expression::FuncCall(f) => f.args.iter_mut().for_each(|e| v.visit_expr_mut(e)),
        Expression::Traversal(t) => {
            v.visit_expr_mut(&mut t.expr);
            for op in &mut t.operators {
                if let TraversalOperator::Index(i) = op.value_mut() {
                    v.visit_expr_mut(i);
                }
            }
        }
        Expression::UnaryOp(u) => v.visit_expr_mut(&mut u.expr),
        Expression::BinaryOp(b) => {
            v.visit_expr_mut(&mut b.lhs_expr);
            v.visit_expr_mut(&mut b.rhs_expr);
        }
        Expression::ForExpr(f) => {
            v.visit_expr_mut(&mut f.intro.collection_expr);
            if let Some(k) = &mut f.key_expr {
                v.visit_expr_mut(k);
            }
            v.visit_expr_mut(&mut f.value_expr);
            if let Some(c) = &mut f.cond {
                v.visit_expr_mut(&mut c.expr);
            }
        }
    }
}

pub fn visit_template_mut<V: VisitMut + ?Sized>(v: &mut V, t: &mut Template) {
    for e in t.iter_mut() {
        match e {
            Element::Literal(_) => {}
            Element::Interpolation(i) => v.visit_expr_mut(&mut i.expr),
            Element::Directive(d) => match &mut **d {
                Directive::If(d) => {
                    v.visit_expr_mut(&mut d.if_expr.cond_expr);
                    v.visit_template_mut(&mut d.if_expr.template);
                    if let Some(e) = &mut d.else_expr {
                        v.visit_template_mut(&mut e.template);
                    }
                }
                Directive::For(d) => {
                    v.visit_expr_mut(&mut d.for_expr.collection_expr);
                    v.visit_template_mut(&mut d.for_expr.template);
                }
            },
        }
    }
}
