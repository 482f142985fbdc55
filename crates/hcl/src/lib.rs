//! HCL native syntax, as Terraform reads it: a parser in linear time that
//! gives a syntax tree with the byte span of every node, and visitors
//! over that tree.
//!
//! The tree's shape mirrors the grammar (see [`ast`]); its equality
//! ignores spans. Blanks and comments are not kept: formatting works on
//! the text, not on this tree.

pub mod ast;
mod display;
mod parse;
pub mod visit;

pub use ast::*;
pub use parse::{
    parse_body, parse_expr, parse_template, work, Error, Location, MAX_DEPTH, MAX_OPERATORS,
    MAX_TEXT,
};

/// The modules hcl-edit users reach for, under the same names.
pub mod expr {
    pub use crate::ast::{
        Array, BinaryOp, BinaryOperator, Conditional, Expression, ForCond, ForExpr, ForIntro,
        FuncArgs, FuncCall, FuncName, Null, Object, ObjectKey, ObjectValue, Parenthesis, Splat,
        Traversal, TraversalOperator, UnaryOp, UnaryOperator,
    };
}

pub mod structure {
    pub use crate::ast::{Attribute, Block, BlockLabel, Body, Structure};
}

pub mod template {
    pub use crate::ast::{
        Directive, Element, ElseTemplateExpr, EndforTemplateExpr, EndifTemplateExpr, ForDirective,
        ForTemplateExpr, HeredocTemplate, IfDirective, IfTemplateExpr, Interpolation,
        StringTemplate, Strip, Template,
    };
}

pub mod parser {
    pub use crate::parse::{parse_body, parse_expr, parse_template, Error, Location};
}

pub mod visit_mut {
    pub use crate::visit::{
        visit_block_mut, visit_body_mut, visit_expr_mut, visit_template_mut, VisitMut,
    };
}
