use super::*;
use serde_json::json;

fn range() -> SourceRange {
    SourceRange {
        file: "main.tf".into(),
        start: Pos {
            line: 3,
            col: 5,
            byte: 40,
        },
        end: Pos {
            line: 3,
            col: 9,
            byte: 44,
        },
    }
}

fn path() -> Path {
    Path::root().attr("rule").index(0).key("k\"x")
}

/// One case: a diagnostic, its text and its `-json` object.
struct Case {
    name: &'static str,
    diag: Diagnostic,
    text: &'static str,
    json: serde_json::Value,
}

fn check(c: &Case) {
    assert_eq!(c.diag.to_string(), c.text, "{}: text", c.name);
    assert_eq!(c.diag.to_json(), c.json, "{}: json", c.name);
}

#[test]
fn display_and_json_of_each_field() {
    let file_range = json!({
        "filename": "main.tf",
        "start": {"line": 3, "column": 5, "byte": 40},
        "end": {"line": 3, "column": 9, "byte": 44},
    });
    let cases = [
        Case {
            name: "error_summary_only",
            diag: Diagnostic::error("Bad thing", "", None),
            text: "Error: Bad thing",
            json: json!({"severity": "error", "summary": "Bad thing", "detail": ""}),
        },
        Case {
            name: "warning_with_detail",
            diag: Diagnostic::warning("Careful", "It is deprecated.", None),
            text: "Warning: Careful: It is deprecated.",
            json: json!({"severity": "warning", "summary": "Careful", "detail": "It is deprecated."}),
        },
        Case {
            name: "range_prefixes_text_and_fills_json_range",
            diag: Diagnostic::error("Unsupported argument", "No \"x\" here.", Some(range())),
            text: "main.tf:3:5: Error: Unsupported argument: No \"x\" here.",
            json: json!({"severity": "error", "summary": "Unsupported argument",
                         "detail": "No \"x\" here.", "range": file_range}),
        },
        Case {
            name: "path_in_text_not_in_json",
            diag: Diagnostic::error("Invalid value", "Too long.", None).at_path(path()),
            text: "Error: Invalid value (at .rule[0][\"k\\\"x\"]): Too long.",
            json: json!({"severity": "error", "summary": "Invalid value", "detail": "Too long."}),
        },
        Case {
            name: "id_in_neither_text_nor_json",
            diag: Diagnostic::error("Not enough function arguments", "Missing \"b\".", None)
                .with_id(DiagId::NotEnoughFunctionArguments),
            text: "Error: Not enough function arguments: Missing \"b\".",
            json: json!({"severity": "error", "summary": "Not enough function arguments",
                         "detail": "Missing \"b\"."}),
        },
        Case {
            name: "every_field",
            diag: Diagnostic::warning("W", "D", Some(range()))
                .at_path(Path::root().attr("a"))
                .with_id(DiagId::TooManyFunctionArguments),
            text: "main.tf:3:5: Warning: W (at .a): D",
            json: json!({"severity": "warning", "summary": "W", "detail": "D",
                         "range": file_range}),
        },
    ];
    for c in &cases {
        check(c);
    }
}

#[test]
fn constructors_set_each_field() {
    let d = Diagnostic::new(Severity::Warning, "S", "D", Some(range()));
    assert_eq!(d.severity, Severity::Warning);
    assert_eq!((d.summary.as_str(), d.detail.as_str()), ("S", "D"));
    assert_eq!(d.range, Some(range()));
    assert_eq!((d.path.clone(), d.id), (None, None));
    assert!(!d.is_error());
    let d = d
        .at_path(path())
        .with_id(DiagId::NoValueForRequiredVariable);
    assert_eq!(d.path, Some(path()));
    assert!(d.is(DiagId::NoValueForRequiredVariable));
    assert!(!d.is(DiagId::TooManyFunctionArguments));
    assert!(Diagnostic::error("S", "D", None).is_error());
    assert_eq!(Diagnostic::default().severity, Severity::Error);
}

#[test]
fn ids_name_their_terraform_summary() {
    let cases: [(DiagId, &str); 5] = [
        (
            DiagId::NotEnoughFunctionArguments,
            "Not enough function arguments",
        ),
        (
            DiagId::TooManyFunctionArguments,
            "Too many function arguments",
        ),
        (
            DiagId::NoValueForRequiredVariable,
            "No value for required variable",
        ),
        (DiagId::RepeatedPersistFailure, "Failed to persist state"),
        (
            DiagId::ProviderNotInstalled,
            "Failed to query available provider packages",
        ),
    ];
    assert_eq!(cases.map(|c| c.0), DiagId::ALL, "the table covers every id");
    for (id, want) in cases {
        assert_eq!(id.summary(), want, "{id:?}");
    }
}

#[test]
fn a_diagnostic_is_small_enough_for_an_err() {
    // clippy.toml's large-error-threshold (result_large_err) is 160 bytes.
    assert!(std::mem::size_of::<Diagnostic>() < 160);
}

#[test]
fn range_and_severity_render_as_terraform_does() {
    assert_eq!(range().to_string(), "main.tf:3:5");
    assert_eq!(
        (Severity::Error.title(), Severity::Error.json_name()),
        ("Error", "error")
    );
    assert_eq!(
        (Severity::Warning.title(), Severity::Warning.json_name()),
        ("Warning", "warning")
    );
}

/// `validate -json` named `./main.tf` where Terraform names `main.tf`
/// (validate_differential compares the file names since issue 14's
/// leftovers).
#[test]
fn item1_json_filename_has_no_dot_slash() {
    let mut r = range();
    r.file = "./modules/x/main.tf".into();
    let j = Diagnostic::error("Bad", "", Some(r)).to_json();
    assert_eq!(j["range"]["filename"], "modules/x/main.tf");
    let j = Diagnostic::error("Bad", "", Some(range())).to_json();
    assert_eq!(j["range"]["filename"], "main.tf");
}
