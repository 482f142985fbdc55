//! Source positions and diagnostics. Lines and columns are 1-based, as
//! Terraform reports them; a diagnostic renders as
//! `file:line:col: Error: summary: detail`.

use std::fmt;
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Pos {
    pub line: usize,
    pub col: usize,
    pub byte: usize,
}

/// A range of one file.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct SourceRange {
    pub file: Arc<str>,
    pub start: Pos,
    pub end: Pos,
}

impl fmt::Display for SourceRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.start.line, self.start.col)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub summary: String,
    pub detail: String,
    pub range: Option<SourceRange>,
}

impl Diagnostic {
    pub fn error(summary: impl Into<String>, detail: impl Into<String>, range: Option<SourceRange>) -> Diagnostic {
        Diagnostic { severity: Severity::Error, summary: summary.into(), detail: detail.into(), range }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(r) = &self.range {
            write!(f, "{r}: ")?;
        }
        let sev = match self.severity {
            Severity::Error => "Error",
            Severity::Warning => "Warning",
        };
        write!(f, "{sev}: {}", self.summary)?;
        if !self.detail.is_empty() {
            write!(f, ": {}", self.detail)?;
        }
        Ok(())
    }
}

/// Maps byte offsets of one file to line/column positions.
#[derive(PartialEq, Eq)]
pub struct LineIndex {
    file: Arc<str>,
    starts: Vec<usize>,
    text: Arc<str>,
}

impl LineIndex {
    pub fn new(file: &str, text: &str) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { file: file.into(), starts, text: text.into() }
    }

    pub fn pos(&self, byte: usize) -> Pos {
        let byte = byte.min(self.text.len());
        let line = self.starts.partition_point(|s| *s <= byte);
        let start = self.starts[line - 1];
        let col = self.text.get(start..byte).map(|s| s.chars().count()).unwrap_or(byte - start) + 1;
        Pos { line, col, byte }
    }

    pub fn range(&self, span: Option<std::ops::Range<usize>>) -> Option<SourceRange> {
        span.map(|r| SourceRange { file: self.file.clone(), start: self.pos(r.start), end: self.pos(r.end) })
    }

    /// The range of a 1-based line/column (for parser errors).
    pub fn at(&self, line: usize, col: usize) -> SourceRange {
        let start = self.starts.get(line.saturating_sub(1)).copied().unwrap_or(0);
        let p = Pos { line, col, byte: start + col.saturating_sub(1) };
        SourceRange { file: self.file.clone(), start: p, end: p }
    }

    pub fn file(&self) -> &Arc<str> {
        &self.file
    }
}

impl fmt::Debug for LineIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LineIndex({})", self.file)
    }
}
