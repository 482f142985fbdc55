//! Diagnostics: what a provider tells the user, with a severity, a summary,
//! a detail and, where it concerns one attribute, the attribute's path, so
//! Terraform points at the right line of configuration. [`Diagnostic`] is
//! terrane-diag's, the one diagnostics type of the workspace.

use std::fmt;
use terrane_value::Path;

pub use terrane_diag::{DiagId, Diagnostic, Severity};

/// A list of diagnostics; "has errors" decides success.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    /// No diagnostics.
    pub fn new() -> Diagnostics {
        Diagnostics(Vec::new())
    }

    /// A single error.
    pub fn error(summary: impl Into<String>, detail: impl Into<String>) -> Diagnostics {
        let mut d = Diagnostics::new();
        d.push_error(summary, detail);
        d
    }

    /// A single error about the attribute at `path`.
    pub fn attr_error(
        path: Path,
        summary: impl Into<String>,
        detail: impl Into<String>,
    ) -> Diagnostics {
        Diagnostics(vec![Diagnostic::error(summary, detail, None).at_path(path)])
    }

    /// Adds an error.
    pub fn push_error(&mut self, summary: impl Into<String>, detail: impl Into<String>) {
        self.0.push(Diagnostic::error(summary, detail, None));
    }

    /// Adds a warning.
    pub fn push_warning(&mut self, summary: impl Into<String>, detail: impl Into<String>) {
        self.0.push(Diagnostic::warning(summary, detail, None));
    }

    /// Adds every diagnostic of `other`.
    pub fn extend(&mut self, other: Diagnostics) {
        self.0.extend(other.0);
    }

    /// Whether any diagnostic is an error (the call then failed).
    pub fn has_errors(&self) -> bool {
        self.0.iter().any(|d| d.severity == Severity::Error)
    }

    /// Whether there are no diagnostics at all.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for d in &self.0 {
            let at = d
                .path
                .as_ref()
                .map(|p| format!(" (at {p})"))
                .unwrap_or_default();
            writeln!(f, "{:?}: {}{at}: {}", d.severity, d.summary, d.detail)?;
        }
        Ok(())
    }
}

impl From<Diagnostic> for Diagnostics {
    fn from(d: Diagnostic) -> Diagnostics {
        Diagnostics(vec![d])
    }
}
