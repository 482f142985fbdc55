//! A light scan of native syntax for what the parser gets wrong or gives
//! up on, used only after a parse error:
//!
//! - HCL ignores newlines inside `for` expressions, parentheses, brackets
//!   and template interpolations. terrane-hcl does too; [`fold_newlines`]
//!   (written for hcl-edit, which did not everywhere) stays as a second
//!   chance after an error, turning those newlines (and comments there)
//!   into spaces. Byte offsets do not move, so every span still points into the
//!   original text.
//! - Terraform's parser recovers after a bad item and reads the rest of the
//!   file. [`top_level_items`] gives the byte range of each top-level block
//!   so a bad one can be blanked out and the others still read.
//!
//! Strings, heredocs and comments are scanned as HCL lexes them: a newline
//! inside a heredoc or an object constructor `{ a = 1 \n b = 2 }` is kept.

use std::ops::Range;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Ctx {
    /// A block body (the file, or the braces of a block).
    Body,
    /// `{ ... }` object constructor: newlines separate items.
    Object,
    /// `{ for ... }`, `[ ... ]`, `( ... )`, `${ ... }`: newlines ignored.
    Fold,
    /// Inside a quoted string.
    Str,
}

struct Scan<'t> {
    b: &'t [u8],
    /// Byte offsets of newlines (and comment bytes) HCL would ignore.
    foldable: Vec<usize>,
    /// Top-level items: first byte to the end of their closing brace/line.
    items: Vec<Range<usize>>,
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'-'
}

impl<'t> Scan<'t> {
    fn run(text: &'t str) -> Self {
        let mut s = Scan {
            b: text.as_bytes(),
            foldable: Vec::new(),
            items: Vec::new(),
        };
        s.scan();
        s
    }

    /// Whether the expression opened at `i` (just after `{` or `[`) is a
    /// `for` expression.
    fn starts_for(&self, mut i: usize) -> bool {
        while i < self.b.len() && self.b[i].is_ascii_whitespace() {
            i += 1;
        }
        self.b[i.min(self.b.len())..].starts_with(b"for")
            && self
                .b
                .get(i + 3)
                .is_some_and(|c| c.is_ascii_whitespace() || *c == b'#' || *c == b'/')
    }

    /// The end of a heredoc opened at `i` (`<<`), past the newline after
    /// its closing marker; `None` if `i` does not open one.
    fn heredoc_end(&self, i: usize) -> Option<usize> {
        let mut j = i + 2;
        if self.b.get(j) == Some(&b'-') {
            j += 1;
        }
        let start = j;
        while j < self.b.len() && is_ident(self.b[j]) {
            j += 1;
        }
        if j == start || self.b.get(j) != Some(&b'\n') && self.b.get(j) != Some(&b'\r') {
            return None;
        }
        let marker = &self.b[start..j];
        let mut line = j + 1;
        while line < self.b.len() {
            let end = self.b[line..]
                .iter()
                .position(|c| *c == b'\n')
                .map(|p| line + p)
                .unwrap_or(self.b.len());
            let l = &self.b[line..end];
            let trimmed = l.trim_ascii();
            if trimmed == marker {
                return Some(end);
            }
            line = end + 1;
        }
        Some(self.b.len())
    }

    fn scan(&mut self) {
        let b = self.b;
        let mut stack: Vec<Ctx> = vec![Ctx::Body];
        // Last significant byte in code (not whitespace, not comment).
        let mut prev: u8 = b'\n';
        let mut item_start: Option<usize> = None;
        let mut i = 0;
        while i < b.len() {
            let ctx = *stack.last().unwrap_or(&Ctx::Body);
            let c = b[i];
            if ctx == Ctx::Str {
                match c {
                    b'\\' => i += 1,
                    b'$' | b'%' if b.get(i + 1) == Some(&c) && b.get(i + 2) == Some(&b'{') => {
                        i += 2
                    }
                    b'$' | b'%' if b.get(i + 1) == Some(&b'{') => {
                        stack.push(Ctx::Fold);
                        i += 1;
                    }
                    b'"' | b'\n' => {
                        stack.pop();
                        prev = b'"';
                    }
                    _ => {}
                }
                i += 1;
                continue;
            }
            let fold = ctx == Ctx::Fold;
            let top = stack.len() == 1;
            if top && item_start.is_none() && !c.is_ascii_whitespace() && c != b'#' && c != b'/' {
                item_start = Some(i);
            }
            match c {
                b'#' => {
                    i = self.comment(i, fold);
                    continue;
                }
                b'/' if b.get(i + 1) == Some(&b'/') => {
                    i = self.comment(i, fold);
                    continue;
                }
                b'/' if b.get(i + 1) == Some(&b'*') => {
                    let end = b[i + 2..]
                        .windows(2)
                        .position(|w| w == b"*/")
                        .map(|p| i + 2 + p + 2)
                        .unwrap_or(b.len());
                    if fold {
                        self.foldable.extend(i..end);
                    }
                    i = end;
                    continue;
                }
                // Newlines and commas separate an object's items: nothing
                // to fold or to record.
                b'\n' | b',' if ctx == Ctx::Object => {}
                b'\n' => {
                    if fold {
                        self.foldable.push(i);
                    } else if top {
                        if let Some(s) = item_start.take() {
                            self.items.push(s..i);
                        }
                    }
                }
                b'"' => {
                    stack.push(Ctx::Str);
                    prev = c;
                }
                b'<' if b.get(i + 1) == Some(&b'<') => {
                    if let Some(end) = self.heredoc_end(i) {
                        i = end;
                        prev = b'"';
                        continue;
                    }
                    prev = c;
                }
                b'{' => {
                    let block = ctx == Ctx::Body && (is_ident(prev) || prev == b'"');
                    let inner = if block {
                        Ctx::Body
                    } else if self.starts_for(i + 1) {
                        Ctx::Fold
                    } else {
                        Ctx::Object
                    };
                    stack.push(inner);
                    prev = c;
                }
                b'[' | b'(' => {
                    stack.push(Ctx::Fold);
                    prev = c;
                }
                // A stray `)` or `]` (`a = 1)`) closes nothing: only a
                // bracket or parenthesis has one to close.
                b']' | b')' if ctx != Ctx::Fold => prev = c,
                b'}' | b']' | b')' => {
                    if stack.len() > 1 {
                        stack.pop();
                    }
                    prev = c;
                    if stack.len() == 1 {
                        if let Some(s) = item_start.take() {
                            self.items.push(s..i + 1);
                        }
                    }
                }
                c if c.is_ascii_whitespace() => {}
                _ => prev = c,
            }
            i += 1;
        }
        if let Some(s) = item_start {
            self.items.push(s..b.len());
        }
    }

    /// Skips a line comment at `i`, up to (not past) its newline; in a
    /// folding context the comment and its newline are foldable.
    fn comment(&mut self, i: usize, fold: bool) -> usize {
        let end = self.b[i..]
            .iter()
            .position(|c| *c == b'\n')
            .map(|p| i + p)
            .unwrap_or(self.b.len());
        if fold {
            self.foldable.extend(i..end);
        }
        end
    }
}

/// `text` with the newlines HCL ignores (inside `for` expressions,
/// brackets, parentheses and interpolations) and the comments there
/// replaced by spaces; `None` when there are none.
pub(crate) fn fold_newlines(text: &str) -> Option<String> {
    let s = Scan::run(text);
    if s.foldable.is_empty() {
        return None;
    }
    let mut bytes = text.as_bytes().to_vec();
    for i in s.foldable {
        bytes[i] = b' ';
    }
    // Only ASCII bytes and whole comments (ending before a newline) were
    // replaced, so the text stays UTF-8; a comment's multi-byte characters
    // are replaced byte by byte.
    String::from_utf8(bytes).ok()
}

/// A quoted string split over lines, as HCL's scanner sees it: the
/// newlines from the first one in the string up to its next quote (or the
/// end of the file), none when the file ends inside a string on its line.
pub(crate) struct MultiLine {
    pub newlines: Vec<usize>,
}

/// The first quoted string of `text` that a newline interrupts, or that
/// the end of the file does (comments, heredocs and interpolations
/// skipped: newlines are allowed there).
pub(crate) fn multiline_string(text: &str) -> Option<MultiLine> {
    let s = Scan {
        b: text.as_bytes(),
        foldable: Vec::new(),
        items: Vec::new(),
    };
    let b = s.b;
    // The brace depth of each code level: the file, then one per
    // interpolation opened inside a string.
    let mut code: Vec<usize> = vec![0];
    let mut in_str = false;
    let mut i = 0;
    while i < b.len() {
        // Bytes that mean nothing where they are are passed over at once.
        let quiet = |c: u8| {
            if in_str {
                !matches!(c, b'\\' | b'$' | b'%' | b'"' | b'\n')
            } else {
                !matches!(c, b'#' | b'/' | b'<' | b'"' | b'{' | b'}')
            }
        };
        i += b[i..].iter().take_while(|c| quiet(**c)).count();
        let Some(&c) = b.get(i) else { break };
        if in_str {
            match c {
                b'\\' => i += 1,
                b'$' | b'%' if b.get(i + 1) == Some(&c) && b.get(i + 2) == Some(&b'{') => i += 2,
                b'$' | b'%' if b.get(i + 1) == Some(&b'{') => {
                    code.push(0);
                    in_str = false;
                    i += 1;
                }
                b'"' => in_str = false,
                b'\n' => {
                    let mut newlines = vec![i];
                    let mut j = i + 1;
                    while j < b.len() && b[j] != b'"' {
                        match b[j] {
                            b'\\' => j += 1,
                            b'\n' => newlines.push(j),
                            _ => {}
                        }
                        j += 1;
                    }
                    return Some(MultiLine { newlines });
                }
                _ => {}
            }
            i += 1;
            continue;
        }
        match c {
            b'#' => {
                i = text[i..].find('\n').map_or(b.len(), |n| i + n);
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                i = text[i..].find('\n').map_or(b.len(), |n| i + n);
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = text[i + 2..].find("*/").map_or(b.len(), |n| i + 2 + n + 2);
                continue;
            }
            b'<' if b.get(i + 1) == Some(&b'<') => {
                if let Some(end) = s.heredoc_end(i) {
                    i = end;
                    continue;
                }
            }
            b'"' => in_str = true,
            b'{' => {
                if let Some(d) = code.last_mut() {
                    *d += 1;
                }
            }
            b'}' => {
                if code.len() > 1 && code.last() == Some(&0) {
                    code.pop();
                    in_str = true;
                } else if let Some(d) = code.last_mut() {
                    *d = d.saturating_sub(1);
                }
            }
            _ => {}
        }
        i += 1;
    }
    in_str.then_some(MultiLine {
        newlines: Vec::new(),
    })
}

/// The name an item starts with when the parser stopped at `off` right
/// after it (`a 1`: an item that is neither an argument nor a block).
pub(crate) fn item_name_before(text: &str, off: usize) -> Option<Range<usize>> {
    let trimmed = text[..off].trim_end_matches([' ', '\t']);
    let end = trimmed.len();
    let start = trimmed
        .char_indices()
        .rev()
        .find(|(_, c)| !(c.is_alphanumeric() || *c == '_' || *c == '-'))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let lead = text[..start].trim_end_matches([' ', '\t']);
    let starts_item = lead.is_empty() || lead.ends_with('\n') || lead.ends_with('{');
    let name = &text[start..end];
    (starts_item && name.starts_with(|c: char| c.is_alphabetic() || c == '_')).then_some(start..end)
}

/// The byte ranges of the top-level items (blocks, stray attributes).
pub(crate) fn top_level_items(text: &str) -> Vec<Range<usize>> {
    Scan::run(text).items
}

/// `text` with `range` blanked out (newlines kept, so lines do not move).
pub(crate) fn blank(text: &str, range: Range<usize>) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for b in &mut bytes[range] {
        if *b != b'\n' {
            *b = b' ';
        }
    }
    String::from_utf8(bytes).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_only_where_hcl_ignores_newlines() {
        let text = "a = { for k in x : k => c ? 1 :\n  2 # note\n}\nb = {\n  x = [1,\n 2]\n  y = <<EOT\n[\nEOT\n}\n";
        let folded = fold_newlines(text).unwrap();
        assert_eq!(folded.len(), text.len());
        assert!(folded.starts_with("a = { for k in x : k => c ? 1 :   2        }\n"));
        assert!(folded.contains("\n  x = [1,  2]\n"), "{folded:?}");
        assert!(
            folded.contains("<<EOT\n[\nEOT\n"),
            "heredoc kept: {folded:?}"
        );
    }

    #[test]
    fn top_level_items_are_whole_blocks() {
        let text = "locals {\n  a = 1\n}\n\nvariable \"x\" {\n  default = { a = 1 }\n}\n";
        let items = top_level_items(text);
        assert_eq!(items.len(), 2);
        assert_eq!(&text[items[0].clone()], "locals {\n  a = 1\n}");
        assert!(text[items[1].clone()].starts_with("variable"));
        assert!(text[items[1].clone()].ends_with("}\n}"));
    }
}
