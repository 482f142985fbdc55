//! The syntax tree. Every node the parser makes carries its byte span in
//! the parsed text; nodes made by hand (`new`) have none. Equality ignores
//! spans: two trees are equal when they say the same thing, wherever it
//! was written.
//!
//! The shapes follow HCL's grammar closely enough that code walking the
//! tree reads like the grammar: an expression is a term (literal,
//! collection, template, variable, call, parenthesis, `for`) with
//! traversal steps after it, combined by operators and the conditional.

use std::ops::{Deref, DerefMut, Range};

pub use hcl_primitives::expr::{BinaryOperator, UnaryOperator};
pub use hcl_primitives::template::Strip;
pub use hcl_primitives::{Ident, Number};

/// A node's place in the text it was parsed from: a zero-based byte range.
pub trait Span {
    fn span(&self) -> Option<Range<usize>>;
}

impl<T: Span> Span for Box<T> {
    fn span(&self) -> Option<Range<usize>> {
        (**self).span()
    }
}

/// A byte range that never makes two nodes unequal. Held as two `u32`s,
/// which is why the parser refuses a text of 4 GiB or more (`u32::MAX`
/// marks no range): a third of the size of an `Option<Range<usize>>`,
/// in every node.
#[derive(Clone, Copy)]
pub struct At {
    start: u32,
    end: u32,
}

impl At {
    /// No range (a node made by hand).
    pub const NONE: At = At {
        start: u32::MAX,
        end: u32::MAX,
    };

    /// The range, if any.
    pub fn range(&self) -> Option<Range<usize>> {
        (self.start != u32::MAX).then_some(self.start as usize..self.end as usize)
    }
}

impl Default for At {
    fn default() -> Self {
        At::NONE
    }
}

impl std::fmt::Debug for At {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("At").field(&self.range()).finish()
    }
}

impl PartialEq for At {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for At {}

impl From<Range<usize>> for At {
    /// A range of a text the parser accepted (under 4 GiB).
    fn from(r: Range<usize>) -> Self {
        let narrow = |n: usize| u32::try_from(n).ok().filter(|n| *n != u32::MAX);
        match (narrow(r.start), narrow(r.end)) {
            (Some(start), Some(end)) => At { start, end },
            _ => panic!("a span beyond 4 GiB: {r:?}"),
        }
    }
}

/// A value with its span.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decorated<T> {
    value: T,
    at: At,
}

/// The same as [`Decorated`], for values inside templates.
pub type Spanned<T> = Decorated<T>;

impl<T> Decorated<T> {
    pub fn new(value: T) -> Self {
        Decorated {
            value,
            at: At::NONE,
        }
    }

    pub fn at(value: T, span: Range<usize>) -> Self {
        Decorated {
            value,
            at: span.into(),
        }
    }

    pub fn value(&self) -> &T {
        &self.value
    }

    pub fn value_mut(&mut self) -> &mut T {
        &mut self.value
    }

    pub fn into_value(self) -> T {
        self.value
    }
}

impl<T> Span for Decorated<T> {
    fn span(&self) -> Option<Range<usize>> {
        self.at.range()
    }
}

impl<T> Deref for Decorated<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T> DerefMut for Decorated<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.value
    }
}

impl<T> From<T> for Decorated<T> {
    fn from(value: T) -> Self {
        Decorated::new(value)
    }
}

/// A number with the text it was written as (`1.50`, `- 2`), which keeps
/// every digit a binary float would lose (held inline when short, as
/// names are). Equality compares the values.
#[derive(Clone, Debug)]
pub struct Formatted<T> {
    value: T,
    repr: Option<hcl_primitives::InternalString>,
    at: At,
}

impl<T> Formatted<T> {
    pub fn new(value: T) -> Self {
        Formatted {
            value,
            repr: None,
            at: At::NONE,
        }
    }

    pub(crate) fn parsed(value: T, repr: &str, span: Range<usize>) -> Self {
        Formatted {
            value,
            repr: Some(repr.into()),
            at: span.into(),
        }
    }

    pub fn value(&self) -> &T {
        &self.value
    }

    /// The source text, when parsed.
    pub fn as_repr(&self) -> Option<&str> {
        self.repr.as_deref()
    }
}

impl<T: PartialEq> PartialEq for Formatted<T> {
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}

impl<T: Eq> Eq for Formatted<T> {}

impl<T> Span for Formatted<T> {
    fn span(&self) -> Option<Range<usize>> {
        self.at.range()
    }
}

/// The `null` keyword.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Null;

/// `*` in a splat.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Splat;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expression {
    Null(Decorated<Null>),
    Bool(Decorated<bool>),
    Number(Formatted<Number>),
    /// A quoted string without interpolations or directives, unescaped.
    String(Decorated<String>),
    Array(Array),
    Object(Object),
    StringTemplate(StringTemplate),
    HeredocTemplate(Box<HeredocTemplate>),
    Parenthesis(Box<Parenthesis>),
    Variable(Decorated<Ident>),
    Conditional(Box<Conditional>),
    FuncCall(Box<FuncCall>),
    Traversal(Box<Traversal>),
    UnaryOp(Box<UnaryOp>),
    BinaryOp(Box<BinaryOp>),
    ForExpr(Box<ForExpr>),
}

impl Expression {
    pub fn is_null(&self) -> bool {
        matches!(self, Expression::Null(_))
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Expression::String(s) => Some(s.as_str()),
            _ => None,
        }
    }
}

impl Span for Expression {
    fn span(&self) -> Option<Range<usize>> {
        match self {
            Expression::Null(e) => e.span(),
            Expression::Bool(e) => e.span(),
            Expression::Number(e) => e.span(),
            Expression::String(e) => e.span(),
            Expression::Array(e) => e.span(),
            Expression::Object(e) => e.span(),
            Expression::StringTemplate(e) => e.span(),
            Expression::HeredocTemplate(e) => e.span(),
            Expression::Parenthesis(e) => e.span(),
            Expression::Variable(e) => e.span(),
            Expression::Conditional(e) => e.span(),
            Expression::FuncCall(e) => e.span(),
            Expression::Traversal(e) => e.span(),
            Expression::UnaryOp(e) => e.span(),
            Expression::BinaryOp(e) => e.span(),
            Expression::ForExpr(e) => e.span(),
        }
    }
}

macro_rules! spanned_node {
    ($($t:ty),* $(,)?) => {$(
        impl Span for $t {
            fn span(&self) -> Option<Range<usize>> {
                self.at.range()
            }
        }
    )*};
}

spanned_node!(
    Array,
    Object,
    StringTemplate,
    HeredocTemplate,
    Parenthesis,
    Conditional,
    FuncCall,
    FuncArgs,
    Traversal,
    UnaryOp,
    BinaryOp,
    ForExpr,
    ForIntro,
    ForCond,
    Template,
    Interpolation,
    IfDirective,
    ForDirective,
    Attribute,
    Block,
    Body,
);

macro_rules! into_expression {
    ($($t:ident => $v:ident),* $(,)?) => {$(
        impl From<$t> for Expression {
            fn from(e: $t) -> Self {
                Expression::$v(e.into())
            }
        }
    )*};
}

into_expression!(
    Array => Array,
    Object => Object,
    StringTemplate => StringTemplate,
    HeredocTemplate => HeredocTemplate,
    Parenthesis => Parenthesis,
    Conditional => Conditional,
    FuncCall => FuncCall,
    Traversal => Traversal,
    UnaryOp => UnaryOp,
    BinaryOp => BinaryOp,
    ForExpr => ForExpr,
);

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Array {
    values: Vec<Expression>,
    pub(crate) at: At,
}

impl Array {
    pub fn new(values: Vec<Expression>) -> Self {
        Array {
            values,
            at: At::NONE,
        }
    }

    pub fn iter(&self) -> std::slice::Iter<'_, Expression> {
        self.values.iter()
    }

    pub fn iter_mut(&mut self) -> std::slice::IterMut<'_, Expression> {
        self.values.iter_mut()
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    pub fn get(&self, i: usize) -> Option<&Expression> {
        self.values.get(i)
    }
}

impl<'a> IntoIterator for &'a Array {
    type Item = &'a Expression;
    type IntoIter = std::slice::Iter<'a, Expression>;
    fn into_iter(self) -> Self::IntoIter {
        self.values.iter()
    }
}

/// An object constructor's key: a bare name, or an expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ObjectKey {
    Ident(Decorated<Ident>),
    Expression(Expression),
}

impl Span for ObjectKey {
    fn span(&self) -> Option<Range<usize>> {
        match self {
            ObjectKey::Ident(i) => i.span(),
            ObjectKey::Expression(e) => e.span(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectValue {
    expr: Expression,
}

impl ObjectValue {
    pub fn new(expr: Expression) -> Self {
        ObjectValue { expr }
    }

    pub fn expr(&self) -> &Expression {
        &self.expr
    }

    pub fn expr_mut(&mut self) -> &mut Expression {
        &mut self.expr
    }
}

/// An object constructor's items in source order. A key given twice keeps
/// only its last item, as HCL evaluates it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Object {
    items: Vec<(ObjectKey, ObjectValue)>,
    pub(crate) at: At,
}

impl Object {
    pub fn new() -> Self {
        Object::default()
    }

    /// Adds an item; an earlier item with an equal key is removed.
    pub fn insert(&mut self, key: ObjectKey, value: ObjectValue) {
        self.items.retain(|(k, _)| *k != key);
        self.items.push((key, value));
    }

    /// An object of items whose keys are all different.
    pub(crate) fn from_unique(items: Vec<(ObjectKey, ObjectValue)>, span: Range<usize>) -> Self {
        Object {
            items,
            at: span.into(),
        }
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&ObjectKey, &ObjectValue)> + '_ {
        self.items.iter().map(|(k, v)| (k, v))
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&ObjectKey, &mut ObjectValue)> + '_ {
        self.items.iter_mut().map(|(k, v)| (&*k, v))
    }

    pub fn get(&self, key: &ObjectKey) -> Option<&ObjectValue> {
        self.items.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

/// A template written in quotes (`"a-${b}"`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StringTemplate {
    template: Template,
    pub(crate) at: At,
}

impl StringTemplate {
    pub fn new(template: Template) -> Self {
        StringTemplate {
            template,
            at: At::NONE,
        }
    }
}

impl Deref for StringTemplate {
    type Target = Template;
    fn deref(&self) -> &Template {
        &self.template
    }
}

impl DerefMut for StringTemplate {
    fn deref_mut(&mut self) -> &mut Template {
        &mut self.template
    }
}

/// `<<EOT` ... `EOT`, or `<<-EOT` (flush: the lines' common indentation
/// removed from its top-level literals).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeredocTemplate {
    pub delimiter: Ident,
    pub template: Template,
    pub(crate) at: At,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parenthesis {
    pub(crate) inner: Expression,
    pub(crate) at: At,
}

impl Parenthesis {
    pub fn new(inner: Expression) -> Self {
        Parenthesis {
            inner,
            at: At::NONE,
        }
    }

    pub fn inner(&self) -> &Expression {
        &self.inner
    }

    pub fn inner_mut(&mut self) -> &mut Expression {
        &mut self.inner
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conditional {
    pub cond_expr: Expression,
    pub true_expr: Expression,
    pub false_expr: Expression,
    pub(crate) at: At,
}

/// A function's name: `f`, or `provider::p::f` (namespace `provider`,
/// `p`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FuncName {
    pub namespace: Vec<Decorated<Ident>>,
    pub name: Decorated<Ident>,
}

impl FuncName {
    pub fn is_namespaced(&self) -> bool {
        !self.namespace.is_empty()
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FuncCall {
    pub name: FuncName,
    pub args: FuncArgs,
    pub(crate) at: At,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FuncArgs {
    pub(crate) args: Vec<Expression>,
    pub(crate) expand_final: bool,
    pub(crate) at: At,
}

impl FuncArgs {
    pub fn iter(&self) -> std::slice::Iter<'_, Expression> {
        self.args.iter()
    }

    pub fn iter_mut(&mut self) -> std::slice::IterMut<'_, Expression> {
        self.args.iter_mut()
    }

    pub fn len(&self) -> usize {
        self.args.len()
    }

    pub fn is_empty(&self) -> bool {
        self.args.is_empty()
    }

    pub fn get(&self, i: usize) -> Option<&Expression> {
        self.args.get(i)
    }

    /// Whether the last argument ends with `...` (its elements are the
    /// remaining arguments).
    pub fn expand_final(&self) -> bool {
        self.expand_final
    }
}

impl<'a> IntoIterator for &'a FuncArgs {
    type Item = &'a Expression;
    type IntoIter = std::slice::Iter<'a, Expression>;
    fn into_iter(self) -> Self::IntoIter {
        self.args.iter()
    }
}

/// A term followed by attribute, index and splat steps. Each step's span
/// covers its `.` or brackets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Traversal {
    pub expr: Expression,
    pub operators: Vec<Decorated<TraversalOperator>>,
    pub(crate) at: At,
}

impl Traversal {
    pub fn new(expr: Expression, operators: Vec<Decorated<TraversalOperator>>) -> Self {
        Traversal {
            expr,
            operators,
            at: At::NONE,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TraversalOperator {
    /// `.*`
    AttrSplat(Decorated<Splat>),
    /// `[*]`
    FullSplat(Decorated<Splat>),
    /// `.name`
    GetAttr(Decorated<Ident>),
    /// `[expr]`
    Index(Expression),
    /// `.0`
    LegacyIndex(Decorated<u64>),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnaryOp {
    pub operator: Spanned<UnaryOperator>,
    pub expr: Expression,
    pub(crate) at: At,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BinaryOp {
    pub lhs_expr: Expression,
    pub operator: Decorated<BinaryOperator>,
    pub rhs_expr: Expression,
    pub(crate) at: At,
}

/// `[for ...]` (no `key_expr`) or `{for ... => ...}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForExpr {
    pub intro: ForIntro,
    pub key_expr: Option<Expression>,
    pub value_expr: Expression,
    /// `...` after the value: values with the same key are grouped.
    pub grouping: bool,
    pub cond: Option<ForCond>,
    pub(crate) at: At,
}

/// `for k, v in collection:`
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForIntro {
    pub key_var: Option<Decorated<Ident>>,
    pub value_var: Decorated<Ident>,
    pub collection_expr: Expression,
    pub(crate) at: At,
}

/// `if cond` at the end of a `for` expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForCond {
    pub expr: Expression,
    pub(crate) at: At,
}

/// Literal text, interpolations and directives in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Template {
    elements: Vec<Element>,
    pub(crate) at: At,
}

impl Template {
    pub fn new(elements: Vec<Element>) -> Self {
        Template {
            elements,
            at: At::NONE,
        }
    }

    pub fn iter(&self) -> std::slice::Iter<'_, Element> {
        self.elements.iter()
    }

    pub fn iter_mut(&mut self) -> std::slice::IterMut<'_, Element> {
        self.elements.iter_mut()
    }

    pub fn len(&self) -> usize {
        self.elements.len()
    }

    pub fn get(&self, i: usize) -> Option<&Element> {
        self.elements.get(i)
    }

    pub fn is_empty(&self) -> bool {
        self.elements.is_empty()
    }

    pub(crate) fn elements_mut(&mut self) -> &mut Vec<Element> {
        &mut self.elements
    }
}

impl<'a> IntoIterator for &'a Template {
    type Item = &'a Element;
    type IntoIter = std::slice::Iter<'a, Element>;
    fn into_iter(self) -> Self::IntoIter {
        self.elements.iter()
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Element {
    /// Text. In a quoted string its escapes are resolved, except inside
    /// directives; in a heredoc or a template file it is as written, with
    /// `$${` and `%%{` resolved.
    Literal(Spanned<String>),
    Interpolation(Interpolation),
    Directive(Box<Directive>),
}

impl Span for Element {
    fn span(&self) -> Option<Range<usize>> {
        match self {
            Element::Literal(l) => l.span(),
            Element::Interpolation(i) => i.span(),
            Element::Directive(d) => d.span(),
        }
    }
}

/// `${ expr }`
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Interpolation {
    pub expr: Expression,
    pub strip: Strip,
    pub(crate) at: At,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Directive {
    If(IfDirective),
    For(ForDirective),
}

impl Span for Directive {
    fn span(&self) -> Option<Range<usize>> {
        match self {
            Directive::If(d) => d.span(),
            Directive::For(d) => d.span(),
        }
    }
}

/// `%{ if c }...%{ else }...%{ endif }`
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IfDirective {
    pub if_expr: IfTemplateExpr,
    pub else_expr: Option<ElseTemplateExpr>,
    pub endif_expr: EndifTemplateExpr,
    pub(crate) at: At,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IfTemplateExpr {
    pub cond_expr: Expression,
    pub template: Template,
    pub strip: Strip,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElseTemplateExpr {
    pub template: Template,
    pub strip: Strip,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EndifTemplateExpr {
    pub strip: Strip,
}

/// `%{ for k, v in c }...%{ endfor }`
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForDirective {
    pub for_expr: ForTemplateExpr,
    pub endfor_expr: EndforTemplateExpr,
    pub(crate) at: At,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForTemplateExpr {
    pub key_var: Option<Decorated<Ident>>,
    pub value_var: Decorated<Ident>,
    pub collection_expr: Expression,
    pub template: Template,
    pub strip: Strip,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EndforTemplateExpr {
    pub strip: Strip,
}

/// A file or a block's body: its arguments and blocks in source order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Body {
    pub(crate) structures: Vec<Structure>,
    pub(crate) at: At,
}

impl Body {
    pub fn new() -> Self {
        Body::default()
    }

    pub fn iter(&self) -> std::slice::Iter<'_, Structure> {
        self.structures.iter()
    }

    pub fn iter_mut(&mut self) -> std::slice::IterMut<'_, Structure> {
        self.structures.iter_mut()
    }

    pub fn len(&self) -> usize {
        self.structures.len()
    }

    pub fn is_empty(&self) -> bool {
        self.structures.is_empty()
    }

    pub fn attributes(&self) -> impl Iterator<Item = &Attribute> + '_ {
        self.structures.iter().filter_map(Structure::as_attribute)
    }

    pub fn blocks(&self) -> impl Iterator<Item = &Block> + '_ {
        self.structures.iter().filter_map(Structure::as_block)
    }

    pub fn get_attribute(&self, key: &str) -> Option<&Attribute> {
        self.attributes().find(|a| a.key.as_str() == key)
    }

    pub fn get_attribute_mut(&mut self, key: &str) -> Option<&mut Attribute> {
        self.structures.iter_mut().find_map(|s| match s {
            Structure::Attribute(a) if a.key.as_str() == key => Some(a),
            _ => None,
        })
    }

    pub fn has_attribute(&self, key: &str) -> bool {
        self.get_attribute(key).is_some()
    }

    pub fn get_blocks<'a>(&'a self, ident: &'a str) -> impl Iterator<Item = &'a Block> + 'a {
        self.blocks().filter(move |b| b.ident.as_str() == ident)
    }

    pub fn get_blocks_mut<'a>(
        &'a mut self,
        ident: &'a str,
    ) -> impl Iterator<Item = &'a mut Block> + 'a {
        self.structures.iter_mut().filter_map(move |s| match s {
            Structure::Block(b) if b.ident.as_str() == ident => Some(b),
            _ => None,
        })
    }
}

impl<'a> IntoIterator for &'a Body {
    type Item = &'a Structure;
    type IntoIter = std::slice::Iter<'a, Structure>;
    fn into_iter(self) -> Self::IntoIter {
        self.structures.iter()
    }
}

impl IntoIterator for Body {
    type Item = Structure;
    type IntoIter = std::vec::IntoIter<Structure>;
    fn into_iter(self) -> Self::IntoIter {
        self.structures.into_iter()
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Structure {
    Attribute(Attribute),
    Block(Block),
}

impl Structure {
    pub fn as_attribute(&self) -> Option<&Attribute> {
        match self {
            Structure::Attribute(a) => Some(a),
            Structure::Block(_) => None,
        }
    }

    pub fn as_block(&self) -> Option<&Block> {
        match self {
            Structure::Block(b) => Some(b),
            Structure::Attribute(_) => None,
        }
    }

    pub fn is_attribute(&self) -> bool {
        matches!(self, Structure::Attribute(_))
    }

    pub fn is_block(&self) -> bool {
        matches!(self, Structure::Block(_))
    }
}

impl Span for Structure {
    fn span(&self) -> Option<Range<usize>> {
        match self {
            Structure::Attribute(a) => a.span(),
            Structure::Block(b) => b.span(),
        }
    }
}

/// `key = value`; its span runs from the key to the end of the value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attribute {
    pub key: Decorated<Ident>,
    pub value: Expression,
    pub(crate) at: At,
}

impl Attribute {
    pub fn new(key: Decorated<Ident>, value: Expression) -> Self {
        Attribute {
            key,
            value,
            at: At::NONE,
        }
    }
}

/// `type "label" ... { body }`; its span runs to the closing brace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    pub ident: Decorated<Ident>,
    pub labels: Vec<BlockLabel>,
    pub body: Body,
    pub(crate) at: At,
}

impl Block {
    pub fn has_ident(&self, ident: &str) -> bool {
        self.ident.as_str() == ident
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BlockLabel {
    Ident(Decorated<Ident>),
    String(Decorated<String>),
}

impl BlockLabel {
    pub fn as_str(&self) -> &str {
        match self {
            BlockLabel::Ident(i) => i.as_str(),
            BlockLabel::String(s) => s.as_str(),
        }
    }
}

impl Span for BlockLabel {
    fn span(&self) -> Option<Range<usize>> {
        match self {
            BlockLabel::Ident(i) => i.span(),
            BlockLabel::String(s) => s.span(),
        }
    }
}

impl StringTemplate {
    pub(crate) fn with_span(template: Template, span: Range<usize>) -> Self {
        StringTemplate {
            template,
            at: span.into(),
        }
    }
}

impl std::str::FromStr for Expression {
    type Err = crate::Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        crate::parse_expr(s)
    }
}

impl std::str::FromStr for Body {
    type Err = crate::Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        crate::parse_body(s)
    }
}
