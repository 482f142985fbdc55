//! The one diagnostics type of terrane, shared by configuration loading,
//! expression evaluation, the engine and the provider SDK.
//!
//! A [`Diagnostic`] has a severity, a one-line summary and a detail, and
//! may point at a source range (where configuration is concerned: lines
//! and columns are 1-based, as Terraform reports them) and at an attribute
//! path (where a provider or a schema check is concerned). Diagnostics
//! that code must recognise carry a typed [`DiagId`]; code branches on the
//! id, never on the text, so wording can change without changing
//! behaviour.
//!
//! A diagnostic renders as `file:line:col: Error: summary: detail`
//! ([`fmt::Display`]) and as Terraform's `-json` diagnostic object
//! ([`Diagnostic::to_json`]).

use std::fmt;
use std::sync::Arc;
use terrane_value::Path;

/// A position in one file: 1-based line and column (in characters), and
/// the 0-based byte offset.
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

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Severity {
    #[default]
    Error,
    Warning,
}

impl Severity {
    /// The word Terraform prints before the summary: `Error`, `Warning`.
    pub fn title(self) -> &'static str {
        match self {
            Severity::Error => "Error",
            Severity::Warning => "Warning",
        }
    }

    /// The `severity` of Terraform's `-json` output: `error`, `warning`.
    pub fn json_name(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// The diagnostics that code recognises (to move, reword, filter or
/// re-place them). Only these carry an id; every other diagnostic is for
/// the user alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DiagId {
    /// A function call with fewer arguments than parameters: reported at
    /// the call's closing parenthesis.
    NotEnoughFunctionArguments,
    /// A function call with more arguments than a non-variadic function
    /// takes: reported at the first extra argument.
    TooManyFunctionArguments,
    /// A root or module input variable without a value and without a
    /// default. For a module call the engine rewords it as a missing
    /// argument of the call.
    NoValueForRequiredVariable,
    /// A second or later "Failed to persist state" of one apply: the
    /// first says why, the emergency state file's report counts them all,
    /// so the apply leaves these out of what it shows.
    RepeatedPersistFailure,
    /// A provider the configuration needs is not installed (no package
    /// found, no built-in of that name): `validate` then checks what
    /// needs no provider schema.
    ProviderNotInstalled,
}

impl DiagId {
    /// Every id, for tables and exhaustive checks.
    pub const ALL: [DiagId; 5] = [
        DiagId::NotEnoughFunctionArguments,
        DiagId::TooManyFunctionArguments,
        DiagId::NoValueForRequiredVariable,
        DiagId::RepeatedPersistFailure,
        DiagId::ProviderNotInstalled,
    ];

    /// The summary Terraform prints for this diagnostic.
    pub fn summary(self) -> &'static str {
        match self {
            DiagId::NotEnoughFunctionArguments => "Not enough function arguments",
            DiagId::TooManyFunctionArguments => "Too many function arguments",
            DiagId::NoValueForRequiredVariable => "No value for required variable",
            DiagId::RepeatedPersistFailure => "Failed to persist state",
            DiagId::ProviderNotInstalled => "Failed to query available provider packages",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Diagnostic {
    pub severity: Severity,
    pub summary: String,
    pub detail: String,
    /// Where in the configuration, if anywhere.
    pub range: Option<SourceRange>,
    /// The attribute concerned, within the object the diagnostic is about.
    pub path: Option<Path>,
    /// Set for the diagnostics code must recognise.
    pub id: Option<DiagId>,
}

impl Diagnostic {
    pub fn error(
        summary: impl Into<String>,
        detail: impl Into<String>,
        range: Option<SourceRange>,
    ) -> Diagnostic {
        Diagnostic::new(Severity::Error, summary, detail, range)
    }

    pub fn warning(
        summary: impl Into<String>,
        detail: impl Into<String>,
        range: Option<SourceRange>,
    ) -> Diagnostic {
        Diagnostic::new(Severity::Warning, summary, detail, range)
    }

    pub fn new(
        severity: Severity,
        summary: impl Into<String>,
        detail: impl Into<String>,
        range: Option<SourceRange>,
    ) -> Diagnostic {
        Diagnostic {
            severity,
            summary: summary.into(),
            detail: detail.into(),
            range,
            path: None,
            id: None,
        }
    }

    /// The same diagnostic about the attribute at `path`.
    pub fn at_path(mut self, path: Path) -> Diagnostic {
        self.path = Some(path);
        self
    }

    /// The same diagnostic, recognisable by `id`.
    pub fn with_id(mut self, id: DiagId) -> Diagnostic {
        self.id = Some(id);
        self
    }

    pub fn is(&self, id: DiagId) -> bool {
        self.id == Some(id)
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// Terraform's `-json` diagnostic object: severity, summary, detail
    /// and, when known, the range. The attribute path and the id are not
    /// part of Terraform's format and are left out.
    pub fn to_json(&self) -> serde_json::Value {
        let mut j = serde_json::json!({
            "severity": self.severity.json_name(),
            "summary": self.summary,
            "detail": self.detail,
        });
        if let Some(r) = &self.range {
            let pos =
                |p: &Pos| serde_json::json!({"line": p.line, "column": p.col, "byte": p.byte});
            // Terraform names a file of the working directory without a
            // leading `./` (`main.tf`, `modules/x/main.tf`).
            let file = r.file.strip_prefix("./").unwrap_or(&r.file);
            j["range"] = serde_json::json!({
                "filename": file,
                "start": pos(&r.start),
                "end": pos(&r.end),
            });
        }
        j
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(r) = &self.range {
            write!(f, "{r}: ")?;
        }
        write!(f, "{}: {}", self.severity.title(), self.summary)?;
        if let Some(p) = &self.path {
            write!(f, " (at {p})")?;
        }
        if !self.detail.is_empty() {
            write!(f, ": {}", self.detail)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
