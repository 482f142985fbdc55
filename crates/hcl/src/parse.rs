//! A recursive-descent parser over the bytes of the text. It never
//! backtracks more than a fixed lookahead (a run of blanks, `::`, `for`,
//! a directive's keyword), so its time is linear in the input's size, and
//! its recursion is bounded by [`MAX_DEPTH`].
//!
//! Newlines follow HCL's rules: they end an argument and separate object
//! items, and are ignored inside parentheses, brackets, function
//! arguments, `for` expressions, interpolations and directives.

use crate::ast::*;
use hcl_primitives::ident::{is_id_continue, is_id_start};
use std::collections::HashSet;
use std::fmt;
use std::ops::Range;

/// How deep blocks, expressions and template directives may nest.
pub const MAX_DEPTH: usize = 128;
/// How many binary operators one chain may have (each adds a tree level).
pub const MAX_OPERATORS: usize = 128;

/// A syntax error: what was expected, at a byte offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    offset: usize,
    message: String,
    location: Location,
}

/// Where an error is: one-based line and column (in characters), and the
/// zero-based byte offset.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Location {
    line: usize,
    column: usize,
    offset: usize,
}

impl Location {
    pub fn line(&self) -> usize {
        self.line
    }

    pub fn column(&self) -> usize {
        self.column
    }

    pub fn offset(&self) -> usize {
        self.offset
    }
}

impl Error {
    fn new(offset: usize, message: impl Into<String>) -> Self {
        Error {
            offset,
            message: message.into(),
            location: Location::default(),
        }
    }

    /// Fills in the line and column from the parsed text.
    fn located(mut self, text: &str) -> Self {
        let mut off = self.offset.min(text.len());
        while !text.is_char_boundary(off) {
            off -= 1;
        }
        let before = &text[..off];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        self.location = Location {
            line: before.matches('\n').count() + 1,
            column: before[line_start..].chars().count() + 1,
            offset: self.offset,
        };
        self
    }

    pub fn offset(&self) -> usize {
        self.offset
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    pub fn location(&self) -> Location {
        self.location
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (line {}, column {})",
            self.message, self.location.line, self.location.column
        )
    }
}

impl std::error::Error for Error {}

type R<T> = Result<T, Error>;

/// The largest text the parser reads: spans are held as `u32`s.
pub const MAX_TEXT: usize = u32::MAX as usize - 1;

/// A text too large for spans (see [`MAX_TEXT`]) is refused whole.
fn sized(text: &str) -> R<()> {
    if text.len() > MAX_TEXT {
        return Err(Error::new(0, "text larger than 4 GiB").located(text));
    }
    Ok(())
}

/// Parses a file's body.
pub fn parse_body(text: &str) -> R<Body> {
    sized(text)?;
    Parser::new(text).body(true).map_err(|e| e.located(text))
}

/// Parses one expression, with blanks allowed around it.
pub fn parse_expr(text: &str) -> R<Expression> {
    sized(text)?;
    Parser::new(text).whole_expr().map_err(|e| e.located(text))
}

/// Parses a template file's text (`templatefile`): literal text with
/// interpolations and directives, no escapes but `$${` and `%%{`.
pub fn parse_template(text: &str) -> R<Template> {
    sized(text)?;
    Parser::new(text)
        .whole_template(End::File)
        .map_err(|e| e.located(text))
}

/// What parsing `text` as a file (`body`), an expression and a template
/// costs: the number of times the parser looked at a byte, summed over the
/// three. The time oracle of the fuzz target `hcl_time` and of the
/// regression tests holds it under a constant times the text's size.
pub fn work(text: &str) -> u64 {
    fn counted<'a, T>(text: &'a str, parse: impl FnOnce(&mut Parser<'a>) -> R<T>) -> u64 {
        if sized(text).is_err() {
            return 0;
        }
        let mut p = Parser::new(text);
        let _ = parse(&mut p);
        p.steps.get()
    }
    counted(text, |p| p.body(true))
        + counted(text, Parser::whole_expr)
        + counted(text, |p| p.whole_template(End::File))
}

/// Where a template's text ends.
#[derive(Clone, Copy)]
enum End<'a> {
    /// At the closing `"` (escapes resolved, newlines refused).
    Quote,
    /// Before a line holding only the delimiter (after blanks).
    Heredoc(&'a str),
    /// At the end of the text.
    File,
}

/// Why a template's elements stopped.
enum Stop {
    End,
    /// At a `%{` (its offset) that opens `else`, `endif` or `endfor`.
    Keyword(usize, &'static str),
}

struct Parser<'a> {
    src: &'a str,
    b: &'a [u8],
    pos: usize,
    depth: usize,
    /// How many times a byte was looked at: the parser's work, which
    /// must stay linear in the input's size (see [`work`]).
    steps: std::cell::Cell<u64>,
    /// Where the innermost quoted string being read opened.
    quote_start: usize,
    /// The items of the lists being read.
    stacks: Stacks,
}

/// The items of the lists being read, one stack per item type: a list's
/// items go on its stack and come off, into a list of exactly their
/// number, when it ends. So no list of the tree is grown or keeps spare
/// room. Lists nested in a list's items stack up above it and are taken
/// off first (the parser stops at its first error: nothing is left
/// behind on a stack that is read again).
#[derive(Default)]
struct Stacks {
    structures: Vec<Structure>,
    labels: Vec<BlockLabel>,
    operators: Vec<Decorated<TraversalOperator>>,
    exprs: Vec<Expression>,
    elements: Vec<Element>,
}

/// The items of `stack` from `mark` on, taken off it.
fn take<T>(stack: &mut Vec<T>, mark: usize) -> Vec<T> {
    stack.drain(mark..).collect()
}

fn is_digit(c: Option<u8>) -> bool {
    c.is_some_and(|c| c.is_ascii_digit())
}

impl<'a> Parser<'a> {
    fn new(src: &'a str) -> Self {
        Parser {
            src,
            b: src.as_bytes(),
            pos: 0,
            depth: 0,
            steps: std::cell::Cell::new(0),
            quote_start: 0,
            stacks: Stacks::default(),
        }
    }

    fn step(&self) {
        self.steps.set(self.steps.get() + 1);
    }

    fn err(&self, message: impl Into<String>) -> Error {
        Error::new(self.pos, message)
    }

    fn peek(&self) -> Option<u8> {
        self.step();
        self.b.get(self.pos).copied()
    }

    fn peek_at(&self, k: usize) -> Option<u8> {
        self.step();
        self.b.get(self.pos + k).copied()
    }

    fn starts(&self, s: &str) -> bool {
        self.step();
        self.b[self.pos..].starts_with(s.as_bytes())
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: u8) -> R<()> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.err(format!("expected `{}`", c as char)))
        }
    }

    fn char_at(&self, pos: usize) -> Option<char> {
        self.step();
        match self.b.get(pos) {
            Some(&c) if c < 0x80 => Some(c as char),
            Some(_) => self.src[pos..].chars().next(),
            None => None,
        }
    }

    fn enter(&mut self) -> R<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.err(format!("nesting deeper than {MAX_DEPTH} levels")));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    // ---- blanks ----

    /// The length of a newline at `pos` (`\n` or `\r\n`), 0 if none.
    fn newline_at(&self, pos: usize) -> usize {
        match self.b.get(pos) {
            Some(b'\n') => 1,
            Some(b'\r') if self.b.get(pos + 1) == Some(&b'\n') => 2,
            _ => 0,
        }
    }

    /// Skips a `/* */` comment at `pos`; an unterminated one is an error.
    fn block_comment(&mut self) -> R<()> {
        let start = self.pos;
        match self.src[self.pos + 2..].find("*/") {
            Some(n) => {
                self.pos += 2 + n + 2;
                Ok(())
            }
            None => Err(Error::new(start, "unterminated comment")),
        }
    }

    fn line_comment_here(&self) -> bool {
        self.peek() == Some(b'#') || self.starts("//")
    }

    /// Skips a `#` or `//` comment up to (not including) its newline.
    fn line_comment(&mut self) {
        while let Some(c) = self.peek() {
            if c == b'\n' || self.newline_at(self.pos) > 0 {
                break;
            }
            self.pos += 1;
        }
    }

    /// Spaces, tabs and `/* */` comments: blanks within a line.
    fn sp(&mut self) -> R<()> {
        loop {
            match self.peek() {
                Some(b' ' | b'\t') => self.pos += 1,
                Some(b'\r') if self.peek_at(1) != Some(b'\n') => self.pos += 1,
                Some(b'/') if self.peek_at(1) == Some(b'*') => self.block_comment()?,
                _ => return Ok(()),
            }
        }
    }

    /// Every blank: newlines and comments of every kind included.
    fn ws(&mut self) {
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.pos += 1,
                Some(b'#') => self.line_comment(),
                Some(b'/') if self.peek_at(1) == Some(b'/') => self.line_comment(),
                Some(b'/') if self.peek_at(1) == Some(b'*') => {
                    // An unterminated comment stops the skip; the next
                    // token check reports it.
                    if self.block_comment().is_err() {
                        return;
                    }
                }
                _ => return,
            }
        }
    }

    /// Blanks where newlines are ignored (`nl`) or significant.
    fn blanks(&mut self, nl: bool) -> R<()> {
        if nl {
            self.ws();
            if self.starts("/*") {
                self.block_comment()?;
            }
            Ok(())
        } else {
            self.sp()
        }
    }

    // ---- names ----

    fn ident_start_here(&self) -> bool {
        self.char_at(self.pos).is_some_and(is_id_start)
    }

    /// A name at the current position, and its span.
    fn ident(&mut self) -> Option<(&'a str, Range<usize>)> {
        let start = self.pos;
        let first = self.char_at(start)?;
        if !is_id_start(first) {
            return None;
        }
        self.pos += first.len_utf8();
        while let Some(c) = self.char_at(self.pos) {
            if !is_id_continue(c) {
                break;
            }
            self.pos += c.len_utf8();
        }
        Some((&self.src[start..self.pos], start..self.pos))
    }

    fn need_ident(&mut self) -> R<Decorated<Ident>> {
        match self.ident() {
            Some((s, span)) => Ok(Decorated::at(Ident::new_unchecked(s), span)),
            None => Err(self.err("expected identifier")),
        }
    }

    /// Whether the keyword `kw` (a whole name) is at the current position.
    fn keyword_here(&self, kw: &str) -> bool {
        self.starts(kw)
            && !self
                .char_at(self.pos + kw.len())
                .is_some_and(is_id_continue)
    }

    fn need_keyword(&mut self, kw: &str) -> R<()> {
        if self.keyword_here(kw) {
            self.pos += kw.len();
            Ok(())
        } else {
            Err(self.err(format!("expected `{kw}`")))
        }
    }

    // ---- structure ----

    fn body(&mut self, top: bool) -> R<Body> {
        let mut body = Body::new();
        let start = self.pos;
        let mut keys = Names::default();
        let mark = self.stacks.structures.len();
        loop {
            self.ws();
            match self.peek() {
                None if top => break,
                None => return Err(self.err("expected `}`")),
                Some(b'}') if !top => break,
                Some(b'/') if self.starts("/*") => return Err(self.err("unterminated comment")),
                _ if self.ident_start_here() => {}
                _ if top => {
                    return Err(self.err("invalid structure: expected an argument or a block"))
                }
                _ => return Err(self.err("invalid block body: expected an argument or a block")),
            }
            let item = self.item(&mut keys)?;
            self.stacks.structures.push(item);
            self.sp()?;
            if self.line_comment_here() {
                self.line_comment();
            }
            match self.newline_at(self.pos) {
                0 if self.pos == self.b.len() => {}
                0 => return Err(self.err("expected newline or eof")),
                n => self.pos += n,
            }
        }
        body.structures = take(&mut self.stacks.structures, mark);
        body.at = (start..self.pos).into();
        Ok(body)
    }

    fn item(&mut self, keys: &mut Names<'a>) -> R<Structure> {
        let start = self.pos;
        let (name, name_span) = self.ident().expect("checked by the caller");
        let key = Decorated::at(Ident::new_unchecked(name), name_span);
        self.sp()?;
        match self.peek() {
            Some(b'=') => {
                if !keys.insert(name) {
                    return Err(Error::new(start, "redefined attribute"));
                }
                self.pos += 1;
                self.sp()?;
                let value = self.expr(false)?;
                Ok(Structure::Attribute(Attribute {
                    key,
                    value,
                    at: (start..self.pos).into(),
                }))
            }
            Some(b'{' | b'"') => self.block(start, key),
            _ if self.ident_start_here() => self.block(start, key),
            _ => Err(self.err("invalid structure: expected `=`, `{` or a block label")),
        }
    }

    fn block(&mut self, start: usize, ident: Decorated<Ident>) -> R<Structure> {
        let mark = self.stacks.labels.len();
        loop {
            match self.peek() {
                Some(b'"') => {
                    let l_start = self.pos;
                    match self.quoted()? {
                        Expression::String(s) => self.stacks.labels.push(BlockLabel::String(
                            Decorated::at(s.into_value(), l_start..self.pos),
                        )),
                        _ => {
                            return Err(Error::new(l_start, "a block label cannot hold a template"))
                        }
                    }
                }
                _ if self.ident_start_here() => {
                    let i = self.need_ident()?;
                    self.stacks.labels.push(BlockLabel::Ident(i));
                }
                _ => break,
            }
            self.sp()?;
        }
        let labels = take(&mut self.stacks.labels, mark);
        self.expect(b'{')?;
        self.enter()?;
        self.sp()?;
        if self.line_comment_here() {
            self.line_comment();
        }
        let body = if self.newline_at(self.pos) > 0 {
            self.pos += self.newline_at(self.pos);
            self.body(false)?
        } else {
            // A block on one line holds at most one argument.
            let b_start = self.pos;
            let mut body = Body::new();
            if self.ident_start_here() {
                let a_start = self.pos;
                let key = self.need_ident()?;
                self.sp()?;
                if !self.eat(b'=') {
                    return Err(self.err("expected `=`: a block on one line holds one argument"));
                }
                self.sp()?;
                let value = self.expr(false)?;
                body.structures = vec![Structure::Attribute(Attribute {
                    key,
                    value,
                    at: (a_start..self.pos).into(),
                })];
                self.sp()?;
            }
            body.at = (b_start..self.pos).into();
            body
        };
        if !self.eat(b'}') {
            return Err(self.err("expected `}`"));
        }
        self.leave();
        Ok(Structure::Block(Block {
            ident,
            labels,
            body,
            at: (start..self.pos).into(),
        }))
    }

    // ---- expressions ----

    /// An expression: operators and the conditional over terms.
    fn expr(&mut self, nl: bool) -> R<Expression> {
        self.enter()?;
        let start = self.pos;
        let mut e = self.binary(nl)?;
        let save = self.pos;
        self.blanks(nl)?;
        if self.eat(b'?') {
            self.blanks(nl)?;
            let t = self.expr(nl)?;
            self.blanks(nl)?;
            if !self.eat(b':') {
                return Err(self.err("expected `:`"));
            }
            self.blanks(nl)?;
            let f = self.expr(nl)?;
            e = Expression::Conditional(Box::new(Conditional {
                cond_expr: e,
                true_expr: t,
                false_expr: f,
                at: (start..self.pos).into(),
            }));
        } else {
            self.pos = save;
        }
        self.leave();
        Ok(e)
    }

    /// A binary operator at the current position, and its length.
    fn operator_here(&self) -> Option<(BinaryOperator, usize)> {
        use BinaryOperator as B;
        let c1 = self.peek_at(1);
        Some(match self.peek()? {
            b'=' if c1 == Some(b'=') => (B::Eq, 2),
            b'!' if c1 == Some(b'=') => (B::NotEq, 2),
            b'<' if c1 == Some(b'=') => (B::LessEq, 2),
            b'<' if c1 != Some(b'<') => (B::Less, 1),
            b'>' if c1 == Some(b'=') => (B::GreaterEq, 2),
            b'>' => (B::Greater, 1),
            b'+' => (B::Plus, 1),
            b'-' => (B::Minus, 1),
            b'*' => (B::Mul, 1),
            b'/' if !matches!(c1, Some(b'/' | b'*')) => (B::Div, 1),
            b'%' => (B::Mod, 1),
            b'&' if c1 == Some(b'&') => (B::And, 2),
            b'|' if c1 == Some(b'|') => (B::Or, 2),
            _ => return None,
        })
    }

    fn binary(&mut self, nl: bool) -> R<Expression> {
        let first = self.term(nl)?;
        // Most expressions have no operator: look before allocating.
        let save = self.pos;
        self.blanks(nl)?;
        let Some((op, len)) = self.operator_here() else {
            self.pos = save;
            return Ok(first);
        };
        // Most chains have one operator: no lists for them either.
        let op = Decorated::at(op, self.pos..self.pos + len);
        self.pos += len;
        self.blanks(nl)?;
        let second = self.term(nl)?;
        let save = self.pos;
        self.blanks(nl)?;
        if self.operator_here().is_none() {
            self.pos = save;
            return Ok(binary_op(first, op, second));
        }
        self.pos = save;
        let mut terms = vec![first, second];
        let mut ops: Vec<Decorated<BinaryOperator>> = vec![op];
        loop {
            let save = self.pos;
            self.blanks(nl)?;
            let Some((op, len)) = self.operator_here() else {
                self.pos = save;
                break;
            };
            if ops.len() == MAX_OPERATORS {
                return Err(self.err(format!(
                    "more than {MAX_OPERATORS} chained binary operators"
                )));
            }
            ops.push(Decorated::at(op, self.pos..self.pos + len));
            self.pos += len;
            self.blanks(nl)?;
            terms.push(self.term(nl)?);
        }
        Ok(fold_operators(terms, ops))
    }

    /// A term and the traversal steps after it.
    fn term(&mut self, nl: bool) -> R<Expression> {
        let start = self.pos;
        let e = match self.peek() {
            Some(b'"') => self.quoted()?,
            Some(b'[') => self.array()?,
            Some(b'{') => self.object()?,
            Some(b'0'..=b'9') => self.number(start)?,
            Some(b'<') if self.starts("<<") => self.heredoc()?,
            Some(b'-') => {
                let op_end = self.pos + 1;
                self.pos += 1;
                self.sp()?;
                if is_digit(self.peek()) {
                    self.number(start)?
                } else {
                    self.pos = op_end;
                    self.unary(start, UnaryOperator::Neg, nl)?
                }
            }
            Some(b'!') => {
                self.pos += 1;
                self.unary(start, UnaryOperator::Not, nl)?
            }
            Some(b'(') => {
                self.pos += 1;
                self.enter()?;
                self.ws();
                let inner = self.expr(true)?;
                self.ws();
                self.expect(b')')?;
                self.leave();
                Expression::Parenthesis(Box::new(Parenthesis {
                    inner,
                    at: (start..self.pos).into(),
                }))
            }
            _ if self.ident_start_here() => self.identlike(nl)?,
            Some(b'/') if self.starts("/*") => return Err(self.err("unterminated comment")),
            _ => return Err(self.err("invalid expression: expected the start of an expression")),
        };
        self.traversal(start, e, nl)
    }

    fn unary(&mut self, start: usize, op: UnaryOperator, nl: bool) -> R<Expression> {
        let operator = Decorated::at(op, start..start + 1);
        self.sp()?;
        self.enter()?;
        let expr = self.term(nl)?;
        self.leave();
        Ok(Expression::UnaryOp(Box::new(UnaryOp {
            operator,
            expr,
            at: (start..self.pos).into(),
        })))
    }

    fn traversal(&mut self, start: usize, e: Expression, nl: bool) -> R<Expression> {
        let mark = self.stacks.operators.len();
        loop {
            let save = self.pos;
            self.blanks(nl)?;
            let op_start = self.pos;
            let op = match self.peek() {
                Some(b'.') if self.peek_at(1) != Some(b'.') => {
                    self.pos += 1;
                    self.ws();
                    let at = self.pos;
                    match self.peek() {
                        Some(b'*') => {
                            self.pos += 1;
                            TraversalOperator::AttrSplat(Decorated::at(Splat, at..at + 1))
                        }
                        Some(b'0'..=b'9') => {
                            while is_digit(self.peek()) {
                                self.pos += 1;
                            }
                            let i: u64 = self.src[at..self.pos]
                                .parse()
                                .map_err(|_| Error::new(at, "index out of range"))?;
                            TraversalOperator::LegacyIndex(Decorated::at(i, at..self.pos))
                        }
                        _ => match self.ident() {
                            Some((s, span)) => TraversalOperator::GetAttr(Decorated::at(
                                Ident::new_unchecked(s),
                                span,
                            )),
                            None => {
                                return Err(self
                                    .err("expected `*`, an attribute name or an index after `.`"))
                            }
                        },
                    }
                }
                Some(b'[') => {
                    self.pos += 1;
                    self.enter()?;
                    self.ws();
                    let op = if self.peek() == Some(b'*') {
                        let at = self.pos;
                        self.pos += 1;
                        TraversalOperator::FullSplat(Decorated::at(Splat, at..at + 1))
                    } else {
                        TraversalOperator::Index(self.expr(true)?)
                    };
                    self.ws();
                    self.expect(b']')?;
                    self.leave();
                    op
                }
                _ => {
                    self.pos = save;
                    break;
                }
            };
            self.stacks
                .operators
                .push(Decorated::at(op, op_start..self.pos));
        }
        if self.stacks.operators.len() == mark {
            return Ok(e);
        }
        let ops = take(&mut self.stacks.operators, mark);
        Ok(Expression::Traversal(Box::new(Traversal {
            expr: e,
            operators: ops,
            at: (start..self.pos).into(),
        })))
    }

    fn number(&mut self, start: usize) -> R<Expression> {
        let digits = self.pos;
        while is_digit(self.peek()) {
            self.pos += 1;
        }
        let mut float = false;
        if self.peek() == Some(b'.') && is_digit(self.peek_at(1)) {
            float = true;
            self.pos += 1;
            while is_digit(self.peek()) {
                self.pos += 1;
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            float = true;
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if !is_digit(self.peek()) {
                return Err(self.err("expected a digit in the exponent"));
            }
            while is_digit(self.peek()) {
                self.pos += 1;
            }
        }
        let text = &self.src[digits..self.pos];
        let as_float = || {
            text.parse::<f64>()
                .ok()
                .and_then(Number::from_f64)
                .ok_or_else(|| Error::new(digits, "number out of range"))
        };
        let mut n = if float {
            as_float()?
        } else {
            match text.parse::<u64>() {
                Ok(u) => Number::from(u),
                Err(_) => as_float()?,
            }
        };
        if start != digits {
            n = -n;
        }
        Ok(Expression::Number(Formatted::parsed(
            n,
            &self.src[start..self.pos],
            start..self.pos,
        )))
    }

    fn identlike(&mut self, nl: bool) -> R<Expression> {
        let start = self.pos;
        let (name, span) = self.ident().expect("checked by the caller");
        let save = self.pos;
        self.blanks(nl)?;
        let first = Decorated::at(Ident::new_unchecked(name), span.clone());
        let name = if self.starts("::") {
            let mut parts = vec![first];
            while self.starts("::") {
                self.pos += 2;
                self.blanks(nl)?;
                parts.push(self.need_ident()?);
                self.blanks(nl)?;
            }
            let name = parts.pop().expect("two parts at least");
            FuncName {
                namespace: parts,
                name,
            }
        } else if self.peek() == Some(b'(') {
            FuncName {
                namespace: Vec::new(),
                name: first,
            }
        } else {
            self.pos = save;
            return Ok(match name {
                "null" => Expression::Null(Decorated::at(Null, span)),
                "true" => Expression::Bool(Decorated::at(true, span)),
                "false" => Expression::Bool(Decorated::at(false, span)),
                _ => Expression::Variable(first),
            });
        };
        let args = self.func_args()?;
        Ok(Expression::FuncCall(Box::new(FuncCall {
            name,
            args,
            at: (start..self.pos).into(),
        })))
    }

    fn func_args(&mut self) -> R<FuncArgs> {
        let start = self.pos;
        self.expect(b'(')?;
        self.enter()?;
        let mark = self.stacks.exprs.len();
        let mut expand_final = false;
        loop {
            self.ws();
            if self.eat(b')') {
                break;
            }
            let arg = self.expr(true)?;
            self.stacks.exprs.push(arg);
            self.ws();
            if self.starts("...") {
                self.pos += 3;
                expand_final = true;
                self.ws();
                self.expect(b')')?;
                break;
            }
            if self.eat(b')') {
                break;
            }
            if !self.eat(b',') {
                return Err(self.err("expected `,` or `)`"));
            }
        }
        self.leave();
        Ok(FuncArgs {
            args: take(&mut self.stacks.exprs, mark),
            expand_final,
            at: (start..self.pos).into(),
        })
    }

    /// Whether a `for` expression starts after the bracket at `pos - 1`.
    fn for_follows(&mut self) -> bool {
        let save = self.pos;
        self.ws();
        let yes = self.starts("for")
            && matches!(
                self.peek_at(3),
                Some(b' ' | b'\t' | b'\n' | b'\r' | b'#' | b'/')
            );
        if !yes {
            self.pos = save;
        }
        yes
    }

    /// `for k, v in collection` (at `for`; blanks after it skipped), in a
    /// `for` expression and in a `%{ for }` directive alike.
    fn for_head(&mut self) -> R<(Option<Decorated<Ident>>, Decorated<Ident>, Expression)> {
        self.pos += 3;
        self.ws();
        let first = self.need_ident()?;
        self.ws();
        let (key_var, value_var) = if self.eat(b',') {
            self.ws();
            let second = self.need_ident()?;
            self.ws();
            (Some(first), second)
        } else {
            (None, first)
        };
        self.need_keyword("in")?;
        self.ws();
        let collection_expr = self.expr(true)?;
        self.ws();
        Ok((key_var, value_var, collection_expr))
    }

    fn for_intro(&mut self) -> R<ForIntro> {
        let start = self.pos;
        let (key_var, value_var, collection_expr) = self.for_head()?;
        self.expect(b':')?;
        Ok(ForIntro {
            key_var,
            value_var,
            collection_expr,
            at: (start..self.pos).into(),
        })
    }

    fn for_cond(&mut self) -> R<Option<ForCond>> {
        if !self.keyword_here("if") {
            return Ok(None);
        }
        let start = self.pos;
        self.pos += 2;
        self.ws();
        let expr = self.expr(true)?;
        let at = (start..self.pos).into();
        self.ws();
        Ok(Some(ForCond { expr, at }))
    }

    fn array(&mut self) -> R<Expression> {
        let start = self.pos;
        self.pos += 1;
        self.enter()?;
        if self.for_follows() {
            let intro = self.for_intro()?;
            self.ws();
            let value_expr = self.expr(true)?;
            self.ws();
            let cond = self.for_cond()?;
            self.expect(b']')?;
            self.leave();
            return Ok(Expression::ForExpr(Box::new(ForExpr {
                intro,
                key_expr: None,
                value_expr,
                grouping: false,
                cond,
                at: (start..self.pos).into(),
            })));
        }
        let mark = self.stacks.exprs.len();
        loop {
            self.ws();
            if self.eat(b']') {
                break;
            }
            let value = self.expr(true)?;
            self.stacks.exprs.push(value);
            self.ws();
            if self.eat(b']') {
                break;
            }
            if !self.eat(b',') {
                return Err(self.err("expected `]`"));
            }
        }
        self.leave();
        let mut a = Array::new(take(&mut self.stacks.exprs, mark));
        a.at = (start..self.pos).into();
        Ok(Expression::Array(a))
    }

    fn object(&mut self) -> R<Expression> {
        let start = self.pos;
        self.pos += 1;
        self.enter()?;
        if self.for_follows() {
            let intro = self.for_intro()?;
            self.ws();
            let key_expr = self.expr(true)?;
            self.ws();
            if !self.starts("=>") {
                return Err(self.err("expected `=>`"));
            }
            self.pos += 2;
            self.ws();
            let value_expr = self.expr(true)?;
            self.ws();
            let grouping = self.starts("...");
            if grouping {
                self.pos += 3;
                self.ws();
            }
            let cond = self.for_cond()?;
            self.expect(b'}')?;
            self.leave();
            return Ok(Expression::ForExpr(Box::new(ForExpr {
                intro,
                key_expr: Some(key_expr),
                value_expr,
                grouping,
                cond,
                at: (start..self.pos).into(),
            })));
        }
        let mut items = Items::default();
        loop {
            self.ws();
            if self.eat(b'}') {
                break;
            }
            if self.starts("/*") {
                return Err(self.err("unterminated comment"));
            }
            let key = match self.expr(false)? {
                Expression::Variable(v) => ObjectKey::Ident(v),
                e => ObjectKey::Expression(e),
            };
            self.sp()?;
            if !(self.eat(b'=') || self.eat(b':')) {
                return Err(self.err("expected `=` or `:` after the object key"));
            }
            self.sp()?;
            let value = self.expr(false)?;
            items.insert(key, ObjectValue::new(value));
            self.sp()?;
            if self.eat(b'}') {
                break;
            }
            if self.eat(b',') {
                continue;
            }
            if self.line_comment_here() {
                self.line_comment();
            }
            match self.newline_at(self.pos) {
                0 => return Err(self.err("invalid object item; expected `}`, `,` or newline")),
                n => self.pos += n,
            }
        }
        self.leave();
        Ok(Expression::Object(Object::from_unique(
            items.finish(),
            start..self.pos,
        )))
    }

    // ---- templates ----

    /// The whole text as one expression, blanks around it allowed.
    fn whole_expr(&mut self) -> R<Expression> {
        self.ws();
        let e = self.expr(false)?;
        self.ws();
        if self.pos < self.b.len() {
            return Err(self.err("expected the end of the expression"));
        }
        Ok(e)
    }

    /// A template up to `end`: a closing directive with nothing open
    /// before it is an error.
    fn whole_template(&mut self, end: End<'a>) -> R<Template> {
        match self.template(end, false)? {
            (t, Stop::End) => Ok(t),
            (_, Stop::Keyword(at, kw)) => {
                Err(Error::new(at, format!("unexpected `{kw}` directive")))
            }
        }
    }

    /// A quoted string: a plain string when it has no interpolation or
    /// directive, else a template.
    fn quoted(&mut self) -> R<Expression> {
        let start = self.pos;
        self.quote_start = start;
        self.pos += 1;
        // A string with nothing to resolve (no escape, interpolation,
        // directive or newline) is its text: no template is built.
        let mut end = self.pos;
        while let Some(&b) = self.b.get(end) {
            self.step();
            match b {
                b'"' => {
                    let s = self.src[self.pos..end].to_string();
                    self.pos = end + 1;
                    return Ok(Expression::String(Decorated::at(s, start..self.pos)));
                }
                b'$' | b'%' | b'\\' | b'\n' | b'\r' => break,
                _ => end += 1,
            }
        }
        let mut t = self.whole_template(End::Quote)?;
        self.expect(b'"')?;
        let at = start..self.pos;
        let plain = t.iter().all(|e| matches!(e, Element::Literal(_)));
        if plain {
            let s = match t.elements_mut().pop() {
                Some(Element::Literal(l)) => l.into_value(),
                _ => String::new(),
            };
            return Ok(Expression::String(Decorated::at(s, at)));
        }
        Ok(Expression::StringTemplate(StringTemplate::with_span(t, at)))
    }

    fn heredoc(&mut self) -> R<Expression> {
        let start = self.pos;
        self.pos += 2;
        let flush = self.eat(b'-');
        let Some((delim, _)) = self.ident() else {
            return Err(self.err("expected the heredoc's delimiter name"));
        };
        match self.newline_at(self.pos) {
            0 => return Err(self.err("expected a newline after the heredoc's delimiter")),
            n => self.pos += n,
        }
        let body_start = self.pos;
        let mut t = if self.heredoc_close(delim).is_some() {
            let mut t = Template::default();
            t.at = (body_start..body_start).into();
            t
        } else {
            self.whole_template(End::Heredoc(delim))?
        };
        let close = self
            .heredoc_close(delim)
            .ok_or_else(|| self.err(format!("expected the heredoc's end `{delim}`")))?;
        self.pos = close;
        if flush {
            dedent(&mut t);
        }
        Ok(Expression::HeredocTemplate(Box::new(HeredocTemplate {
            delimiter: Ident::new_unchecked(delim),
            template: t,
            at: (start..self.pos).into(),
        })))
    }

    /// Whether the line at `pos` closes a heredoc: blanks, the delimiter,
    /// and no more of a name. The offset after the delimiter.
    fn heredoc_close(&self, delim: &str) -> Option<usize> {
        let mut i = self.pos;
        while matches!(self.b.get(i), Some(b' ' | b'\t')) {
            i += 1;
        }
        if !self.b[i..].starts_with(delim.as_bytes()) {
            return None;
        }
        let end = i + delim.len();
        if self.char_at(end).is_some_and(is_id_continue) {
            return None;
        }
        Some(end)
    }

    /// Template elements up to `end` or a closing directive. `raw` keeps
    /// a quoted string's escapes as written (inside its directives).
    fn template(&mut self, end: End<'a>, raw: bool) -> R<(Template, Stop)> {
        let start = self.pos;
        let mark = self.stacks.elements.len();
        let mut lit = String::new();
        let mut lit_start = self.pos;
        let stop = loop {
            let Some(c) = self.peek() else {
                match end {
                    End::File => break Stop::End,
                    End::Quote => return Err(Error::new(self.quote_start, "unterminated string")),
                    End::Heredoc(d) => {
                        return Err(self.err(format!("expected the heredoc's end `{d}`")))
                    }
                }
            };
            match c {
                b'$' | b'%' if self.peek_at(1) == Some(c) && self.peek_at(2) == Some(b'{') => {
                    lit.push(c as char);
                    lit.push('{');
                    self.pos += 3;
                }
                b'$' | b'%' if self.peek_at(1) == Some(b'{') => {
                    if self.pos > lit_start {
                        self.stacks.elements.push(Element::Literal(Decorated::at(
                            std::mem::take(&mut lit),
                            lit_start..self.pos,
                        )));
                    }
                    lit_start = self.pos;
                    if c == b'$' {
                        let i = self.interpolation()?;
                        self.stacks.elements.push(Element::Interpolation(i));
                    } else {
                        match self.directive(end, raw)? {
                            Ok(d) => self.stacks.elements.push(Element::Directive(Box::new(d))),
                            Err(kw) => break Stop::Keyword(self.pos, kw),
                        }
                    }
                    lit_start = self.pos;
                }
                b'"' if matches!(end, End::Quote) => break Stop::End,
                b'\\' if matches!(end, End::Quote) => {
                    if raw {
                        lit.push('\\');
                        self.pos += 1;
                        if let Some(n) = self.char_at(self.pos) {
                            if n != '\n' {
                                lit.push(n);
                                self.pos += n.len_utf8();
                            }
                        }
                    } else {
                        let ch = self.escape()?;
                        lit.push(ch);
                    }
                }
                b'\n' | b'\r'
                    if matches!(end, End::Heredoc(_)) && self.newline_at(self.pos) > 0 =>
                {
                    let n = self.newline_at(self.pos);
                    lit.push_str(&self.src[self.pos..self.pos + n]);
                    self.pos += n;
                    if let End::Heredoc(d) = end {
                        if self.heredoc_close(d).is_some() {
                            break Stop::End;
                        }
                    }
                }
                _ => {
                    // A run of text up to the next byte that may mean
                    // something (every other byte is copied as it is).
                    let run = self.pos;
                    let ch = self.char_at(self.pos).expect("not at the end");
                    self.pos += ch.len_utf8();
                    while let Some(&b) = self.b.get(self.pos) {
                        self.step();
                        if matches!(b, b'$' | b'%' | b'"' | b'\\' | b'\n' | b'\r') {
                            break;
                        }
                        self.pos += 1;
                    }
                    lit.push_str(&self.src[run..self.pos]);
                }
            }
        };
        if self.pos > lit_start {
            let lit_end = match stop {
                Stop::Keyword(at, _) => at,
                Stop::End => self.pos,
            };
            if lit_end > lit_start {
                self.stacks
                    .elements
                    .push(Element::Literal(Decorated::at(lit, lit_start..lit_end)));
            }
        }
        let mut t = Template::new(take(&mut self.stacks.elements, mark));
        let t_end = match stop {
            Stop::Keyword(at, _) => at,
            Stop::End => self.pos,
        };
        t.at = (start..t_end).into();
        Ok((t, stop))
    }

    /// A backslash escape in a quoted string.
    fn escape(&mut self) -> R<char> {
        let at = self.pos;
        self.pos += 1;
        let hex = |p: &mut Self, n: usize| -> R<char> {
            let digits = p.src.get(p.pos..p.pos + n).unwrap_or("");
            let ok = digits.len() == n && digits.bytes().all(|b| b.is_ascii_hexdigit());
            let ch = ok
                .then(|| u32::from_str_radix(digits, 16).ok())
                .flatten()
                .and_then(char::from_u32);
            match ch {
                Some(ch) => {
                    p.pos += n;
                    Ok(ch)
                }
                None => Err(Error::new(
                    at,
                    format!("invalid unicode escape: expected {n} hexadecimal digits"),
                )),
            }
        };
        let c = self.peek();
        self.pos += 1;
        Ok(match c {
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'\\') => '\\',
            Some(b'"') => '"',
            Some(b'u') => hex(self, 4)?,
            Some(b'U') => hex(self, 8)?,
            _ => return Err(Error::new(at, "invalid escape sequence")),
        })
    }

    /// `${ expr }`
    fn interpolation(&mut self) -> R<Interpolation> {
        let start = self.pos;
        self.pos += 2;
        self.enter()?;
        let strip_start = self.eat(b'~');
        self.ws();
        let expr = self.expr(true)?;
        self.ws();
        let strip_end = self.eat(b'~');
        self.expect(b'}')?;
        self.leave();
        Ok(Interpolation {
            expr,
            strip: Strip::from((strip_start, strip_end)),
            at: (start..self.pos).into(),
        })
    }

    /// The keyword of the directive at `%{`, without moving.
    fn directive_keyword(&self) -> Option<&'a str> {
        let mut i = self.pos + 2;
        if self.b.get(i) == Some(&b'~') {
            i += 1;
        }
        while matches!(self.b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            i += 1;
        }
        let s = &self.src[i..];
        let n = s
            .char_indices()
            .find(|(_, c)| !is_id_continue(*c))
            .map_or(s.len(), |(n, _)| n);
        Some(&s[..n])
    }

    /// `%{ kw }` with nothing else in it (else, endif, endfor): its strip.
    fn bare_directive(&mut self, kw: &str) -> R<Strip> {
        self.pos += 2;
        let strip_start = self.eat(b'~');
        self.ws();
        self.need_keyword(kw)?;
        self.ws();
        let strip_end = self.eat(b'~');
        self.expect(b'}')?;
        Ok(Strip::from((strip_start, strip_end)))
    }

    /// A directive at `%{`: `Err(keyword)` when it is a closing one (not
    /// consumed).
    fn directive(&mut self, end: End<'a>, raw: bool) -> R<Result<Directive, &'static str>> {
        let raw = raw || matches!(end, End::Quote);
        let start = self.pos;
        let kw = self.directive_keyword().unwrap_or("");
        match kw {
            "else" => return Ok(Err("else")),
            "endif" => return Ok(Err("endif")),
            "endfor" => return Ok(Err("endfor")),
            "if" | "for" => {}
            _ => {
                return Err(self.err(
                    "invalid template directive: expected `if`, `for`, `else`, `endif` or `endfor`",
                ))
            }
        }
        self.enter()?;
        self.pos += 2;
        let strip_start = self.eat(b'~');
        self.ws();
        let d = if kw == "if" {
            self.pos += 2;
            self.ws();
            let cond_expr = self.expr(true)?;
            self.ws();
            let strip_end = self.eat(b'~');
            self.expect(b'}')?;
            let (template, mut stop) = self.template(end, raw)?;
            let if_expr = IfTemplateExpr {
                cond_expr,
                template,
                strip: Strip::from((strip_start, strip_end)),
            };
            let mut else_expr = None;
            if let Stop::Keyword(_, "else") = stop {
                let strip = self.bare_directive("else")?;
                let (template, s) = self.template(end, raw)?;
                else_expr = Some(ElseTemplateExpr { template, strip });
                stop = s;
            }
            if !matches!(stop, Stop::Keyword(_, "endif")) {
                return Err(self.err("expected `%{ endif }`"));
            }
            let endif_expr = EndifTemplateExpr {
                strip: self.bare_directive("endif")?,
            };
            Directive::If(IfDirective {
                if_expr,
                else_expr,
                endif_expr,
                at: (start..self.pos).into(),
            })
        } else {
            let (key_var, value_var, collection_expr) = self.for_head()?;
            let strip_end = self.eat(b'~');
            self.expect(b'}')?;
            let (template, stop) = self.template(end, raw)?;
            if !matches!(stop, Stop::Keyword(_, "endfor")) {
                return Err(self.err("expected `%{ endfor }`"));
            }
            let endfor_expr = EndforTemplateExpr {
                strip: self.bare_directive("endfor")?,
            };
            Directive::For(ForDirective {
                for_expr: ForTemplateExpr {
                    key_var,
                    value_var,
                    collection_expr,
                    template,
                    strip: Strip::from((strip_start, strip_end)),
                },
                endfor_expr,
                at: (start..self.pos).into(),
            })
        };
        self.leave();
        Ok(Ok(d))
    }
}

/// The argument names of a body so far: a scan while there are few, a
/// hash set once there are many (a body's time stays linear).
#[derive(Default)]
struct Names<'a> {
    few: [&'a str; SCANNED_ITEMS],
    len: usize,
    many: Option<HashSet<&'a str>>,
}

impl<'a> Names<'a> {
    /// Adds `name`; false when it was there already.
    fn insert(&mut self, name: &'a str) -> bool {
        if let Some(many) = &mut self.many {
            return many.insert(name);
        }
        if self.few[..self.len].contains(&name) {
            return false;
        }
        if self.len < SCANNED_ITEMS {
            self.few[self.len] = name;
            self.len += 1;
        } else {
            let mut many: HashSet<&'a str> = self.few.iter().copied().collect();
            many.insert(name);
            self.many = Some(many);
        }
        true
    }
}

/// An object constructor's items as they are read. A key given again
/// replaces the earlier item (HCL keeps the last). Keys are compared as
/// (kind, text), an expression key by its canonical text: by a scan while
/// the object is small, by hashing once it grows, so a large object costs
/// linear time and a small one allocates nothing for its keys.
#[derive(Default)]
struct Items {
    items: Vec<(ObjectKey, ObjectValue)>,
    /// Which items a later one with the same key replaced (empty while
    /// none was; then as long as `items` was at the last replacement).
    replaced: Vec<bool>,
    /// The canonical text of each expression key (not a name or a string),
    /// by item position, while keys are scanned.
    texts: Vec<(usize, String)>,
    seen: Option<std::collections::HashMap<(u8, String), usize>>,
}

/// Up to this many items, a repeated key is found by a scan.
const SCANNED_ITEMS: usize = 8;

/// The kind of an object key and its text when it is a name or a string.
fn key_text(key: &ObjectKey) -> Option<(u8, &str)> {
    match key {
        ObjectKey::Ident(i) => Some((0, i.as_str())),
        ObjectKey::Expression(Expression::String(s)) => Some((1, s.as_str())),
        ObjectKey::Expression(_) => None,
    }
}

impl Items {
    fn is_replaced(&self, i: usize) -> bool {
        self.replaced.get(i).copied().unwrap_or(false)
    }

    fn insert(&mut self, key: ObjectKey, value: ObjectValue) {
        let text = match (&key, key_text(&key)) {
            (ObjectKey::Expression(e), None) => Some(e.to_string()),
            _ => None,
        };
        let at = self.items.len();
        if self.seen.is_none() && at >= SCANNED_ITEMS {
            let mut seen = std::collections::HashMap::with_capacity(at * 2);
            for (i, (k, _)) in self.items.iter().enumerate() {
                if !self.is_replaced(i) {
                    seen.insert(self.owned_key(i, k), i);
                }
            }
            self.seen = Some(seen);
        }
        let earlier = match &mut self.seen {
            Some(seen) => {
                let k = match key_text(&key) {
                    Some((kind, t)) => (kind, t.to_string()),
                    None => (2, text.unwrap_or_default()),
                };
                seen.insert(k, at)
            }
            None => {
                let earlier = (0..at).find(|&i| {
                    !self.is_replaced(i)
                        && match (key_text(&self.items[i].0), key_text(&key)) {
                            (Some(a), Some(b)) => a == b,
                            (None, None) => self.text_of(i) == text.as_deref(),
                            _ => false,
                        }
                });
                if let Some(t) = text {
                    self.texts.push((at, t));
                }
                earlier
            }
        };
        if let Some(i) = earlier {
            if self.replaced.len() < at {
                self.replaced.resize(at, false);
            }
            self.replaced[i] = true;
        }
        self.items.push((key, value));
    }

    /// The canonical text of the expression key of item `i`.
    fn text_of(&self, i: usize) -> Option<&str> {
        self.texts
            .iter()
            .find(|(at, _)| *at == i)
            .map(|(_, t)| t.as_str())
    }

    fn owned_key(&self, i: usize, key: &ObjectKey) -> (u8, String) {
        match key_text(key) {
            Some((kind, t)) => (kind, t.to_string()),
            None => (2, self.text_of(i).unwrap_or_default().to_string()),
        }
    }

    fn finish(self) -> Vec<(ObjectKey, ObjectValue)> {
        let Items {
            mut items,
            replaced,
            ..
        } = self;
        if !replaced.is_empty() {
            let mut i = 0;
            items.retain(|_| {
                i += 1;
                !replaced.get(i - 1).copied().unwrap_or(false)
            });
        }
        items
    }
}

/// `lhs op rhs`, spanning from the start of one to the end of the other.
fn binary_op(lhs: Expression, op: Decorated<BinaryOperator>, rhs: Expression) -> Expression {
    let at = match (lhs.span(), rhs.span()) {
        (Some(l), Some(r)) => At::from(l.start..r.end),
        _ => At::NONE,
    };
    Expression::BinaryOp(Box::new(BinaryOp {
        lhs_expr: lhs,
        operator: op,
        rhs_expr: rhs,
        at,
    }))
}

/// Builds the tree of a chain `t0 op1 t1 op2 t2 ...`: higher precedence
/// binds tighter, equal precedence groups to the left.
fn fold_operators(terms: Vec<Expression>, ops: Vec<Decorated<BinaryOperator>>) -> Expression {
    fn reduce(out: &mut Vec<Expression>, op: Decorated<BinaryOperator>) {
        let rhs = out.pop().expect("a right operand");
        let lhs = out.pop().expect("a left operand");
        out.push(binary_op(lhs, op, rhs));
    }
    let mut terms = terms.into_iter();
    let mut out = vec![terms.next().expect("one term at least")];
    let mut pending: Vec<Decorated<BinaryOperator>> = Vec::new();
    for (op, term) in ops.into_iter().zip(terms) {
        while pending
            .last()
            .is_some_and(|top| top.precedence() >= op.precedence())
        {
            let top = pending.pop().expect("checked");
            reduce(&mut out, top);
        }
        pending.push(op);
        out.push(term);
    }
    while let Some(top) = pending.pop() {
        reduce(&mut out, top);
    }
    out.pop().expect("one result")
}

/// The number of leading blanks of each non-empty line of a flush
/// heredoc's top-level literals, the smallest of which is removed from
/// every line. A line that starts with an interpolation or a directive
/// has none, so nothing is removed.
fn dedent(t: &mut Template) {
    let mut indent: Option<usize> = None;
    // Whether the next literal starts in the middle of a line.
    let mut mid_line = false;
    for e in t.iter() {
        match e {
            Element::Literal(l) => {
                for (i, line) in l.split('\n').enumerate() {
                    let line = line.strip_suffix('\r').unwrap_or(line);
                    if (i == 0 && mid_line) || line.is_empty() {
                        continue;
                    }
                    let n = line.chars().take_while(|c| c.is_whitespace()).count();
                    indent = Some(indent.map_or(n, |m| m.min(n)));
                }
                mid_line = !l.ends_with('\n');
            }
            _ if !mid_line => return,
            _ => {}
        }
    }
    let Some(n) = indent.filter(|n| *n > 0) else {
        return;
    };
    let mut mid_line = false;
    for e in t.iter_mut() {
        match e {
            Element::Literal(l) => {
                let mut out = String::with_capacity(l.len());
                for (i, line) in l.split('\n').enumerate() {
                    if i > 0 {
                        out.push('\n');
                    }
                    if i == 0 && mid_line {
                        out.push_str(line);
                    } else {
                        let cut = line.char_indices().nth(n).map_or(line.len(), |(b, _)| b);
                        out.push_str(&line[cut..]);
                    }
                }
                mid_line = !out.ends_with('\n');
                **l = out;
            }
            _ => mid_line = true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An object's keys in order, each with its value's text.
    fn items(src: &str) -> Vec<String> {
        let Expression::Object(o) = parse_expr(src).expect("parses") else {
            panic!("{src}: not an object");
        };
        o.iter()
            .map(|(k, v)| {
                let k = match k {
                    ObjectKey::Ident(i) => i.to_string(),
                    ObjectKey::Expression(e) => e.to_string(),
                };
                format!("{k}={}", v.expr())
            })
            .collect()
    }

    #[test]
    fn a_repeated_object_key_keeps_its_last_item_in_its_last_place() {
        let cases: &[(&str, &str, &[&str])] = &[
            ("names", "{ a = 1, b = 2, a = 3 }", &["b=2", "a=3"]),
            (
                "over lines",
                "{\n  a = [1,\n 2]\n  \"b\" = { a = 0 }\n  a = 3\n}",
                &["\"b\"={ a = 0 }", "a=3"],
            ),
            (
                "quoted and bare differ",
                "{ a = 1, \"a\" = 2 }",
                &["a=1", "\"a\"=2"],
            ),
            (
                "expression keys",
                "{ (k) = 1, (k) = 2, (j) = 3 }",
                &["(k)=2", "(j)=3"],
            ),
        ];
        for (name, src, want) in cases {
            assert_eq!(items(src), *want, "{name}");
        }
    }

    /// Past a few items keys are hashed rather than scanned: repeats found
    /// either way, on both sides of the switch, for every kind of key.
    #[test]
    fn repeated_keys_of_a_large_object_are_found_as_in_a_small_one() {
        let mut src = String::from("{");
        let mut want = Vec::new();
        for i in 0..20 {
            src.push_str(&format!("k{i} = {i}, \"k{i}\" = {i}, (k{i}) = {i}, "));
        }
        for i in (0..20).step_by(3) {
            src.push_str(&format!("k{i} = -1, (k{i}) = -2, "));
        }
        src.push('}');
        for i in 0..20 {
            if i % 3 != 0 {
                want.push(format!("k{i}={i}"));
            }
            want.push(format!("\"k{i}\"={i}"));
            if i % 3 != 0 {
                want.push(format!("(k{i})={i}"));
            }
        }
        for i in (0..20).step_by(3) {
            want.push(format!("k{i}=-1"));
            want.push(format!("(k{i})=-2"));
        }
        assert_eq!(items(&src), want);
        for n in [1, 7, 8, 9, 10, 17] {
            let keys: Vec<String> = (0..n).map(|i| format!("a{i} = {i}")).collect();
            let src = format!("{{ {}, a0 = {n} }}", keys.join(", "));
            let mut want: Vec<String> = (1..n).map(|i| format!("a{i}={i}")).collect();
            want.push(format!("a0={n}"));
            assert_eq!(items(&src), want, "{n} items");
        }
    }

    /// A body's argument set twice is an error however many arguments
    /// come before it (names scanned, then hashed).
    #[test]
    fn a_redefined_argument_is_found_in_a_body_of_any_size() {
        for n in [1, 7, 8, 9, 10, 30] {
            let mut src: String = (0..n).map(|i| format!("a{i} = {i}\n")).collect();
            assert!(parse_body(&src).is_ok(), "{n} arguments");
            let again = format!("a{} = 0\n", n / 2);
            let at = src.len();
            src.push_str(&again);
            let e = parse_body(&src).expect_err("redefined");
            assert_eq!(
                (e.offset(), e.message()),
                (at, "redefined attribute"),
                "{n}"
            );
        }
    }

    /// Quoted strings read without building a template (nothing to
    /// resolve) and those that have something are the same strings.
    #[test]
    fn plain_and_resolved_strings_read_the_same() {
        for (src, want) in [
            ("\"\"", ""),
            ("\"abc\"", "abc"),
            ("\"a\\nb\"", "a\nb"),
            ("\"a$b%c\"", "a$b%c"),
            ("\"a$${b}\"", "a${b}"),
            ("\"é ü\"", "é ü"),
        ] {
            match parse_expr(src).expect("parses") {
                Expression::String(s) => {
                    assert_eq!(s.as_str(), want, "{src}");
                    assert_eq!(s.span(), Some(0..src.len()), "{src}");
                }
                e => panic!("{src}: {e:?}"),
            }
        }
    }
}
