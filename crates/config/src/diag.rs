//! Source positions and diagnostics. The types are terrane-diag's (one
//! diagnostics type for config, eval, engine and SDK), re-exported here;
//! this module adds [`LineIndex`], which maps byte offsets of a file to
//! their 1-based lines and columns.

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

pub use terrane_diag::{DiagId, Diagnostic, Pos, Severity, SourceRange};

/// Maps byte offsets of one file to line/column positions, each in
/// constant time (a line found by binary search, or at once when it is
/// the line of the previous position, as positions are mostly asked for
/// in order; a column counted without reading the line).
///
/// An index may also be *shifted* ([`LineIndex::shifted`]): offsets then
/// belong to a piece of text that was cut out of the file (a string of a
/// `.tf.json` file parsed as an expression) and are mapped back into the
/// file, so ranges still point at the file the user wrote.
pub struct LineIndex {
    file: Arc<str>,
    starts: Arc<[usize]>,
    text: Arc<str>,
    /// Offset of byte 0 of the piece within the file.
    base: usize,
    /// `(piece offset, bytes inserted before it)`, sorted: where the piece
    /// was made longer (escape rewrites) or shorter (escapes decoded, a
    /// negative count) than the file's text.
    inserted: Arc<[(usize, isize)]>,
    /// How many bytes that continue a UTF-8 character come before each
    /// block of [`BLOCK`] bytes (empty for a text all ASCII): a column,
    /// counted in characters, is the bytes from the line's start less
    /// those.
    continuations: Arc<[usize]>,
    /// The line of the last position (a hint, never a result).
    last_line: AtomicUsize,
}

/// The block size of [`LineIndex`]'s continuation-byte counts.
const BLOCK: usize = 64;

fn is_continuation(b: u8) -> bool {
    (0x80..0xC0).contains(&b)
}

impl Clone for LineIndex {
    fn clone(&self) -> Self {
        LineIndex {
            file: self.file.clone(),
            starts: self.starts.clone(),
            text: self.text.clone(),
            base: self.base,
            inserted: self.inserted.clone(),
            continuations: self.continuations.clone(),
            last_line: AtomicUsize::new(self.last_line.load(Ordering::Relaxed)),
        }
    }
}

impl PartialEq for LineIndex {
    fn eq(&self, o: &Self) -> bool {
        self.file == o.file
            && self.starts == o.starts
            && self.text == o.text
            && self.base == o.base
            && self.inserted == o.inserted
    }
}

impl Eq for LineIndex {}

impl LineIndex {
    pub fn new(file: &str, text: &str) -> LineIndex {
        let lines = text.bytes().filter(|b| *b == b'\n').count() + 1;
        let mut starts = Vec::with_capacity(lines);
        starts.push(0);
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        let mut continuations = Vec::new();
        if !text.is_ascii() {
            let mut before = 0;
            for block in text.as_bytes().chunks(BLOCK) {
                continuations.push(before);
                before += block.iter().filter(|b| is_continuation(**b)).count();
            }
        }
        LineIndex {
            file: file.into(),
            starts: starts.into(),
            text: text.into(),
            base: 0,
            inserted: Arc::from(Vec::new()),
            continuations: continuations.into(),
            last_line: AtomicUsize::new(1),
        }
    }

    /// An index for a piece of this file starting at byte `base`, where
    /// `inserted` lists `(piece offset, total bytes inserted before it)`
    /// (negative where the piece is shorter than the file).
    pub fn shifted(&self, base: usize, inserted: Vec<(usize, isize)>) -> LineIndex {
        LineIndex {
            file: self.file.clone(),
            starts: self.starts.clone(),
            text: self.text.clone(),
            base,
            inserted: inserted.into(),
            continuations: self.continuations.clone(),
            last_line: AtomicUsize::new(1),
        }
    }

    /// The continuation bytes before `byte` (a char boundary).
    fn continuations_before(&self, byte: usize) -> usize {
        let Some(before) = self.continuations.get(byte / BLOCK) else {
            return 0;
        };
        let from = byte / BLOCK * BLOCK;
        before
            + self.text.as_bytes()[from..byte]
                .iter()
                .filter(|b| is_continuation(**b))
                .count()
    }

    /// The 1-based line holding `byte`: looked for first within a few
    /// lines of the previous position's.
    fn line_of(&self, byte: usize) -> usize {
        const NEAR: usize = 16;
        let hint = self.last_line.load(Ordering::Relaxed).max(1);
        let within = |line: usize| {
            self.starts.get(line - 1).is_some_and(|s| *s <= byte)
                && self.starts.get(line).is_none_or(|s| *s > byte)
        };
        let near = if self.starts.get(hint - 1).is_some_and(|s| *s <= byte) {
            (hint..hint + NEAR).find(|l| within(*l))
        } else {
            (hint.saturating_sub(NEAR).max(1)..hint)
                .rev()
                .find(|l| within(*l))
        };
        let line = near.unwrap_or_else(|| self.starts.partition_point(|s| *s <= byte));
        self.last_line.store(line, Ordering::Relaxed);
        line
    }

    fn to_file(&self, byte: usize) -> usize {
        let i = self.inserted.partition_point(|(at, _)| *at <= byte);
        let extra = if i == 0 { 0 } else { self.inserted[i - 1].1 };
        let at = (self.base + byte) as isize - extra;
        at.max(0) as usize
    }

    pub fn pos(&self, byte: usize) -> Pos {
        let byte = self.to_file(byte).min(self.text.len());
        let line = self.line_of(byte);
        let start = self.starts[line - 1];
        // Characters from the line's start; bytes when `byte` falls
        // inside a character.
        let col = if self.text.is_char_boundary(byte) {
            byte - start - (self.continuations_before(byte) - self.continuations_before(start))
        } else {
            byte - start
        } + 1;
        Pos { line, col, byte }
    }

    pub fn range(&self, span: Option<std::ops::Range<usize>>) -> Option<SourceRange> {
        span.map(|r| SourceRange {
            file: self.file.clone(),
            start: self.pos(r.start),
            end: self.pos(r.end),
        })
    }

    /// The range of a 1-based line/column (for parser errors).
    pub fn at(&self, line: usize, col: usize) -> SourceRange {
        if self.base != 0 || !self.inserted.is_empty() {
            // Line and column of the piece: find its byte offset first.
            let piece = self.text.get(self.base..).unwrap_or("");
            let mut off = 0;
            for (i, l) in piece.split_inclusive('\n').enumerate() {
                if i + 1 == line {
                    off += l
                        .char_indices()
                        .nth(col.saturating_sub(1))
                        .map(|(b, _)| b)
                        .unwrap_or(l.len());
                    break;
                }
                off += l.len();
            }
            let p = self.pos(off);
            return SourceRange {
                file: self.file.clone(),
                start: p,
                end: p,
            };
        }
        let start = self
            .starts
            .get(line.saturating_sub(1))
            .copied()
            .unwrap_or(0);
        let p = Pos {
            line,
            col,
            byte: start + col.saturating_sub(1),
        };
        SourceRange {
            file: self.file.clone(),
            start: p,
            end: p,
        }
    }

    /// The range of a byte offset (parser errors carry one).
    pub fn at_offset(&self, byte: usize) -> SourceRange {
        let p = self.pos(byte);
        SourceRange {
            file: self.file.clone(),
            start: p,
            end: p,
        }
    }

    pub fn file(&self) -> &Arc<str> {
        &self.file
    }

    /// The whole text of the file.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether this index maps a piece cut out of the file (see
    /// [`LineIndex::shifted`]) rather than the file itself.
    pub fn is_shifted(&self) -> bool {
        self.base != 0 || !self.inserted.is_empty()
    }
}

impl fmt::Debug for LineIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LineIndex({})", self.file)
    }
}

/// Terraform's `file:line,col-col` rendering of a range, used inside
/// details ("already has a connection block at main.tf:11,3-13"); files
/// of the working directory are named as Terraform names them, without
/// a leading `./`.
pub(crate) fn hcl_range(r: &Option<SourceRange>) -> String {
    match r {
        Some(r) => {
            let file = r.file.strip_prefix("./").unwrap_or(&r.file);
            if r.start.line == r.end.line {
                format!("{file}:{},{}-{}", r.start.line, r.start.col, r.end.col)
            } else {
                let (l, c) = (r.end.line, r.end.col);
                format!("{file}:{},{}-{l},{c}", r.start.line, r.start.col)
            }
        }
        None => "(unknown)".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Line and column as counted by reading the text from its start.
    fn counted(text: &str, byte: usize) -> (usize, usize) {
        let byte = byte.min(text.len());
        let before = &text.as_bytes()[..byte];
        let start = before
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |i| i + 1);
        let line = before.iter().filter(|b| **b == b'\n').count() + 1;
        let col = text
            .get(start..byte)
            .map(|s| s.chars().count())
            .unwrap_or(byte - start)
            + 1;
        (line, col)
    }

    #[test]
    fn positions_are_those_counted_from_the_start_in_any_order() {
        let long: String = "é".repeat(100) + &"a".repeat(150) + "ü€𝄞";
        for text in [
            String::new(),
            "a = 1\nb = \"x\"\n".to_string(),
            format!("x\n{long}\n\ny = \"{long}\"\r\nz"),
            long.repeat(3),
        ] {
            let index = LineIndex::new("f.tf", &text);
            let order: Vec<usize> = (0..=text.len() + 2)
                .chain((0..=text.len()).rev())
                .chain((0..text.len() + 1).step_by(7).rev())
                .collect();
            for byte in order {
                let p = index.pos(byte);
                assert_eq!((p.line, p.col), counted(&text, byte), "{byte} in {text:?}");
                assert_eq!(p.byte, byte.min(text.len()));
            }
        }
    }
}
