//! The few token rewrites Terraform's `fmt` makes besides blanks, each of
//! which keeps the meaning:
//! * an attribute whose whole value is one interpolation, `"${x}"`, becomes
//!   `x` (a template of a single interpolation yields the value itself;
//!   a value spanning lines is wrapped in parentheses);
//! * a root `variable` block's `type`: the bare `list`, `map`, `set`
//!   become `list(any)` etc., and the legacy quoted `"string"`, `"list"`,
//!   `"map"` become `string`, `list(string)`, `map(string)`;
//! * block labels written as bare names are quoted.
//!
//! Only attributes of bodies are rewritten (not object elements), and the
//! literal text of a string is never changed.

use super::tokens::{Kind, Token};

/// Rewrites the body tokens of a whole file.
pub fn rewrite(toks: Vec<Token>) -> Vec<Token> {
    let mut w = Walker {
        toks,
        i: 0,
        out: Vec::new(),
    };
    w.body(&mut Vec::new(), false);
    // Anything a malformed tail left over is kept as it is.
    let rest: Vec<Token> = w.toks.drain(w.i..).collect();
    w.out.extend(rest);
    w.out
}

struct Walker {
    toks: Vec<Token>,
    i: usize,
    out: Vec<Token>,
}

impl Walker {
    fn peek(&self) -> Option<&Token> {
        self.toks.get(self.i)
    }

    fn take(&mut self) {
        if let Some(t) = self.toks.get(self.i) {
            self.out.push(t.clone());
            self.i += 1;
        }
    }

    /// A body's items; inside a block (`nested`) it stops before the `}`.
    fn body(&mut self, blocks: &mut Vec<String>, nested: bool) {
        while let Some(t) = self.peek() {
            match t.kind {
                Kind::CBrace if nested => return,
                Kind::Ident => {
                    let name = t.text.clone();
                    let next = self.toks.get(self.i + 1).map(|t| t.kind);
                    if next == Some(Kind::Equal) {
                        self.take();
                        self.take();
                        self.attribute(&name, blocks);
                    } else {
                        self.block(&name, blocks);
                    }
                }
                _ => self.take(),
            }
        }
    }

    fn attribute(&mut self, name: &str, blocks: &[String]) {
        let start = self.i;
        let mut depth = 0i32;
        while let Some(t) = self.peek() {
            if depth == 0 && (t.ends_line() || t.kind == Kind::CBrace) {
                break;
            }
            depth += match t.kind {
                Kind::OQuote | Kind::OHeredoc => 1,
                Kind::CQuote | Kind::CHeredoc => -1,
                _ => t.nesting(),
            };
            self.i += 1;
        }
        let expr = &self.toks[start..self.i];
        let new = if blocks.len() == 1 && blocks[0] == "variable" && name == "type" {
            type_expr(expr)
        } else {
            value_expr(expr)
        };
        self.out.extend(new.unwrap_or_else(|| expr.to_vec()));
    }

    fn block(&mut self, ty: &str, blocks: &mut Vec<String>) {
        self.take();
        while let Some(t) = self.peek() {
            match t.kind {
                Kind::Ident => {
                    let label = t.text.clone();
                    self.out.extend([
                        Token::new(Kind::OQuote, "\""),
                        Token::new(Kind::QuotedLit, label),
                        Token::new(Kind::CQuote, "\""),
                    ]);
                    self.i += 1;
                }
                Kind::OQuote => {
                    while let Some(t) = self.peek() {
                        let end = t.kind == Kind::CQuote;
                        self.take();
                        if end {
                            break;
                        }
                    }
                }
                Kind::OBrace => {
                    self.take();
                    blocks.push(ty.to_string());
                    self.body(blocks, true);
                    blocks.pop();
                    self.take();
                    return;
                }
                Kind::Comment if !t.ends_line() => self.take(),
                _ => return,
            }
        }
    }
}

/// `"${x}"` as `x`, when the value is exactly one interpolation.
fn value_expr(expr: &[Token]) -> Option<Vec<Token>> {
    let n = expr.len();
    if n < 5
        || expr[0].kind != Kind::OQuote
        || expr[1].kind != Kind::TemplateInterp
        || expr[n - 2].kind != Kind::TemplateSeqEnd
        || expr[n - 1].kind != Kind::CQuote
    {
        return None;
    }
    let inner = &expr[2..n - 2];
    let mut quotes = 0i32;
    for t in inner {
        match t.kind {
            Kind::OQuote => quotes += 1,
            Kind::CQuote => quotes -= 1,
            // Literal text or a second sequence in the outer template.
            Kind::QuotedLit
            | Kind::TemplateInterp
            | Kind::TemplateControl
            | Kind::TemplateSeqEnd
                if quotes == 0 =>
            {
                return None
            }
            _ => {}
        }
    }
    let mut a = 0;
    let mut b = inner.len();
    while a < b && inner[a].kind == Kind::Newline {
        a += 1;
    }
    while b > a && inner[b - 1].kind == Kind::Newline {
        b -= 1;
    }
    let inner = &inner[a..b];
    if inner.is_empty() {
        return None;
    }
    let multiline = inner.iter().any(Token::ends_line);
    let wrapped = inner[0].kind == Kind::OParen && inner[inner.len() - 1].kind == Kind::CParen;
    let mut out = Vec::new();
    if multiline && !wrapped {
        out.push(Token::new(Kind::OParen, "("));
    }
    out.extend(inner.iter().cloned());
    if multiline && !wrapped {
        out.push(Token::new(Kind::CParen, ")"));
    }
    Some(out)
}

fn type_expr(expr: &[Token]) -> Option<Vec<Token>> {
    let call = |name: &str, arg: &str| {
        vec![
            Token::new(Kind::Ident, name),
            Token::new(Kind::OParen, "("),
            Token::new(Kind::Ident, arg),
            Token::new(Kind::CParen, ")"),
        ]
    };
    match expr {
        [t] if t.kind == Kind::Ident && matches!(t.text.as_str(), "list" | "map" | "set") => {
            Some(call(&t.text, "any"))
        }
        [o, s, c]
            if o.kind == Kind::OQuote && s.kind == Kind::QuotedLit && c.kind == Kind::CQuote =>
        {
            match s.text.as_str() {
                "string" => Some(vec![Token::new(Kind::Ident, "string")]),
                "list" | "map" => Some(call(&s.text, "string")),
                _ => None,
            }
        }
        _ => None,
    }
}
