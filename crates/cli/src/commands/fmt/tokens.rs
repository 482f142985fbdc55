//! A tokenizer for HCL's native syntax, made for formatting: every byte
//! of the source lands in exactly one token except the blanks between
//! tokens, so a formatter that only changes those blanks cannot change a
//! string, template literal, heredoc line or comment. Template sequences
//! (`${ ... }`, `%{ ... }`) inside strings and heredocs are tokenized
//! like any expression; their literal parts stay single tokens.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Ident,
    Number,
    /// `"` opening a quoted template, and the one closing it.
    OQuote,
    CQuote,
    /// Literal text of a quoted template (escapes kept as written).
    QuotedLit,
    /// `<<EOT` or `<<-EOT` with its line break.
    OHeredoc,
    /// The closing marker line of a heredoc, blanks around it included.
    CHeredoc,
    /// Literal text of a heredoc (line breaks included).
    StringLit,
    /// `${` or `${~`.
    TemplateInterp,
    /// `%{` or `%{~`.
    TemplateControl,
    /// `}` or `~}` closing a template sequence.
    TemplateSeqEnd,
    OBrace,
    CBrace,
    OBrack,
    CBrack,
    OParen,
    CParen,
    Comma,
    Dot,
    /// `::` of a provider function name.
    DoubleColon,
    Ellipsis,
    /// `=` of an attribute or object element.
    Equal,
    Colon,
    Question,
    FatArrow,
    Minus,
    Plus,
    Star,
    Slash,
    Percent,
    Bang,
    EqualOp,
    NotEqual,
    Less,
    LessEq,
    Greater,
    GreaterEq,
    And,
    Or,
    /// `#`/`//` comments with their line break, and `/* */` comments.
    Comment,
    Newline,
}

#[derive(Clone, Debug)]
pub struct Token {
    pub kind: Kind,
    pub text: String,
    /// Blanks written before the token (set by the formatter).
    pub spaces: usize,
}

impl Token {
    pub fn new(kind: Kind, text: impl Into<String>) -> Token {
        Token {
            kind,
            text: text.into(),
            spaces: 0,
        }
    }

    /// Whether the token ends a line: a line break, or a line comment
    /// (which holds its own).
    pub fn ends_line(&self) -> bool {
        self.kind == Kind::Newline || (self.kind == Kind::Comment && self.text.ends_with('\n'))
    }

    /// +1 for an opening bracket or template sequence, -1 for a closing one.
    pub fn nesting(&self) -> i32 {
        match self.kind {
            Kind::OBrace
            | Kind::OBrack
            | Kind::OParen
            | Kind::TemplateInterp
            | Kind::TemplateControl => 1,
            Kind::CBrace | Kind::CBrack | Kind::CParen | Kind::TemplateSeqEnd => -1,
            _ => 0,
        }
    }
}

struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    out: Vec<Token>,
    /// Where the last token ends.
    end: usize,
}

fn is_ident_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

fn is_ident_continue(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '-'
}

/// The tokens of `src` and the blanks after the last one; Err with a
/// byte offset when it cannot be tokenized (the caller has parsed it
/// already, so this is unexpected).
pub fn tokenize(src: &str) -> Result<(Vec<Token>, &str), usize> {
    let mut lx = Lexer {
        src,
        pos: 0,
        out: Vec::new(),
        end: 0,
    };
    lx.normal(false)?;
    // Only blanks can follow the last token.
    let tail = &src[lx.end..];
    Ok((lx.out, tail))
}

impl<'a> Lexer<'a> {
    fn rest(&self) -> &'a str {
        &self.src[self.pos..]
    }

    fn push(&mut self, kind: Kind, len: usize) {
        let text = &self.src[self.pos..self.pos + len];
        self.out.push(Token::new(kind, text));
        self.pos += len;
        self.end = self.pos;
    }

    /// Expression tokens until the end of input or, inside a template
    /// sequence (`in_sequence`), until the `}` that closes it.
    fn normal(&mut self, in_sequence: bool) -> Result<(), usize> {
        let mut braces = 0usize;
        loop {
            let rest = self.rest();
            let Some(c) = rest.chars().next() else {
                return if in_sequence { Err(self.pos) } else { Ok(()) };
            };
            match c {
                ' ' | '\t' => self.pos += 1,
                '\r' if rest.starts_with("\r\n") => self.push(Kind::Newline, 2),
                '\n' => self.push(Kind::Newline, 1),
                '#' => self.line_comment(),
                '/' if rest.starts_with("//") => self.line_comment(),
                '/' if rest.starts_with("/*") => {
                    let end = rest[2..].find("*/").ok_or(self.pos)? + 4;
                    self.push(Kind::Comment, end);
                }
                '"' => {
                    self.push(Kind::OQuote, 1);
                    self.quoted()?;
                }
                '<' if rest.starts_with("<<") => self.heredoc()?,
                '~' if in_sequence && braces == 0 && rest.starts_with("~}") => {
                    self.push(Kind::TemplateSeqEnd, 2);
                    return Ok(());
                }
                '{' => {
                    braces += 1;
                    self.push(Kind::OBrace, 1);
                }
                '}' if in_sequence && braces == 0 => {
                    self.push(Kind::TemplateSeqEnd, 1);
                    return Ok(());
                }
                '}' => {
                    braces = braces.saturating_sub(1);
                    self.push(Kind::CBrace, 1);
                }
                c if is_ident_start(c) => {
                    let len = rest
                        .char_indices()
                        .find(|(_, c)| !is_ident_continue(*c))
                        .map(|(i, _)| i)
                        .unwrap_or(rest.len());
                    self.push(Kind::Ident, len);
                }
                c if c.is_ascii_digit() => {
                    let len = number_len(rest);
                    self.push(Kind::Number, len);
                }
                _ => {
                    let (kind, len) = operator(rest).ok_or(self.pos)?;
                    self.push(kind, len);
                }
            }
        }
    }

    fn line_comment(&mut self) {
        let rest = self.rest();
        let len = rest.find('\n').map(|i| i + 1).unwrap_or(rest.len());
        self.push(Kind::Comment, len);
    }

    /// A template sequence opener at the start of `rest`, if any.
    fn sequence_start(rest: &str) -> Option<(Kind, usize)> {
        let kind = if rest.starts_with("${") {
            Kind::TemplateInterp
        } else if rest.starts_with("%{") {
            Kind::TemplateControl
        } else {
            return None;
        };
        Some((kind, if rest[2..].starts_with('~') { 3 } else { 2 }))
    }

    /// The literal parts and sequences of a quoted template, through its
    /// closing quote.
    fn quoted(&mut self) -> Result<(), usize> {
        let mut start = self.pos;
        loop {
            let rest = self.rest();
            let Some(c) = rest.chars().next() else {
                return Err(start);
            };
            if rest.starts_with("$${") || rest.starts_with("%%{") {
                self.pos += 3;
                continue;
            }
            if let Some((kind, len)) = Self::sequence_start(rest) {
                self.literal(start, Kind::QuotedLit);
                self.push(kind, len);
                self.normal(true)?;
                start = self.pos;
                continue;
            }
            match c {
                '\\' => self.pos += 1 + rest[1..].chars().next().map(char::len_utf8).unwrap_or(0),
                '"' => {
                    self.literal(start, Kind::QuotedLit);
                    self.push(Kind::CQuote, 1);
                    return Ok(());
                }
                '\n' => return Err(self.pos),
                c => self.pos += c.len_utf8(),
            }
        }
    }

    fn literal(&mut self, start: usize, kind: Kind) {
        if self.pos > start {
            self.out.push(Token::new(kind, &self.src[start..self.pos]));
            self.end = self.pos;
        }
    }

    /// `<<EOT` / `<<-EOT`, the body's literal lines and sequences, and the
    /// closing marker.
    fn heredoc(&mut self) -> Result<(), usize> {
        let rest = self.rest();
        let after = rest[2..].strip_prefix('-').unwrap_or(&rest[2..]);
        let marker: String = after
            .chars()
            .take_while(|c| is_ident_continue(*c))
            .collect();
        if marker.is_empty() || !marker.starts_with(is_ident_start) {
            return Err(self.pos);
        }
        let head = rest.len() - after.len() + marker.len();
        let nl = if rest[head..].starts_with("\r\n") {
            2
        } else if rest[head..].starts_with('\n') {
            1
        } else {
            return Err(self.pos);
        };
        self.push(Kind::OHeredoc, head + nl);
        let mut at_line_start = true;
        let mut start = self.pos;
        loop {
            let rest = self.rest();
            if rest.is_empty() {
                return Err(start);
            }
            if at_line_start {
                let line = rest.split('\n').next().unwrap_or(rest);
                // Blanks may surround the marker; they stay part of it.
                if line.trim_matches([' ', '\t', '\r']) == marker {
                    self.literal(start, Kind::StringLit);
                    let len = line.len() - if line.ends_with('\r') { 1 } else { 0 };
                    self.push(Kind::CHeredoc, len);
                    return Ok(());
                }
                at_line_start = false;
            }
            if rest.starts_with("$${") || rest.starts_with("%%{") {
                self.pos += 3;
                continue;
            }
            if let Some((kind, len)) = Self::sequence_start(rest) {
                self.literal(start, Kind::StringLit);
                self.push(kind, len);
                self.normal(true)?;
                start = self.pos;
                continue;
            }
            let c = rest.chars().next().expect("not empty");
            self.pos += c.len_utf8();
            if c == '\n' {
                self.literal(start, Kind::StringLit);
                start = self.pos;
                at_line_start = true;
            }
        }
    }
}

fn number_len(s: &str) -> usize {
    let b = s.as_bytes();
    let digits = |mut i: usize| {
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        i
    };
    let mut i = digits(0);
    if i + 1 < b.len() && b[i] == b'.' && b[i + 1].is_ascii_digit() {
        i = digits(i + 1);
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        if j < b.len() && b[j].is_ascii_digit() {
            i = digits(j);
        }
    }
    i
}

fn operator(s: &str) -> Option<(Kind, usize)> {
    const LONG: &[(&str, Kind)] = &[
        ("...", Kind::Ellipsis),
        ("==", Kind::EqualOp),
        ("!=", Kind::NotEqual),
        ("<=", Kind::LessEq),
        (">=", Kind::GreaterEq),
        ("&&", Kind::And),
        ("||", Kind::Or),
        ("=>", Kind::FatArrow),
        ("::", Kind::DoubleColon),
    ];
    for (text, kind) in LONG {
        if s.starts_with(text) {
            return Some((*kind, text.len()));
        }
    }
    let kind = match s.chars().next()? {
        '=' => Kind::Equal,
        '<' => Kind::Less,
        '>' => Kind::Greater,
        '!' => Kind::Bang,
        '+' => Kind::Plus,
        '-' => Kind::Minus,
        '*' => Kind::Star,
        '/' => Kind::Slash,
        '%' => Kind::Percent,
        '?' => Kind::Question,
        ':' => Kind::Colon,
        '.' => Kind::Dot,
        ',' => Kind::Comma,
        '[' => Kind::OBrack,
        ']' => Kind::CBrack,
        '(' => Kind::OParen,
        ')' => Kind::CParen,
        _ => return None,
    };
    Some((kind, 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(src: &str, want: &[(Kind, &str)]) {
        let got: Vec<(Kind, String)> = tokenize(src)
            .expect("tokenizes")
            .0
            .into_iter()
            .map(|t| (t.kind, t.text))
            .collect();
        let want: Vec<(Kind, String)> = want.iter().map(|(k, t)| (*k, t.to_string())).collect();
        assert_eq!(got, want, "{src:?}");
    }

    #[test]
    fn strings_keep_their_text_whole() {
        use Kind::*;
        check(
            r#"a = "--port=8080""#,
            &[
                (Ident, "a"),
                (Equal, "="),
                (OQuote, "\""),
                (QuotedLit, "--port=8080"),
                (CQuote, "\""),
            ],
        );
        check(
            r#""a\"b${ x }$${y}""#,
            &[
                (OQuote, "\""),
                (QuotedLit, "a\\\"b"),
                (TemplateInterp, "${"),
                (Ident, "x"),
                (TemplateSeqEnd, "}"),
                (QuotedLit, "$${y}"),
                (CQuote, "\""),
            ],
        );
        check(
            "\"${~{a=1}~}\"",
            &[
                (OQuote, "\""),
                (TemplateInterp, "${~"),
                (OBrace, "{"),
                (Ident, "a"),
                (Equal, "="),
                (Number, "1"),
                (CBrace, "}"),
                (TemplateSeqEnd, "~}"),
                (CQuote, "\""),
            ],
        );
    }

    #[test]
    fn heredocs_keep_their_lines_whole() {
        use Kind::*;
        check(
            "h = <<-EOT\n  FOO=bar   \n  x ${a} y\n  EOT\n",
            &[
                (Ident, "h"),
                (Equal, "="),
                (OHeredoc, "<<-EOT\n"),
                (StringLit, "  FOO=bar   \n"),
                (StringLit, "  x "),
                (TemplateInterp, "${"),
                (Ident, "a"),
                (TemplateSeqEnd, "}"),
                (StringLit, " y\n"),
                (CHeredoc, "  EOT"),
                (Newline, "\n"),
            ],
        );
    }

    #[test]
    fn comments_numbers_and_operators() {
        use Kind::*;
        check(
            "a = 1.5e3 # c  \n",
            &[
                (Ident, "a"),
                (Equal, "="),
                (Number, "1.5e3"),
                (Comment, "# c  \n"),
            ],
        );
        check(
            "x=>y... a-b != !c /* k */",
            &[
                (Ident, "x"),
                (FatArrow, "=>"),
                (Ident, "y"),
                (Ellipsis, "..."),
                (Ident, "a-b"),
                (NotEqual, "!="),
                (Bang, "!"),
                (Ident, "c"),
                (Comment, "/* k */"),
            ],
        );
        check("a.0", &[(Ident, "a"), (Dot, "."), (Number, "0")]);
    }
}
