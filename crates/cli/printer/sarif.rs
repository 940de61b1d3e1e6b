//! SARIF 2.1.0 for code-scanning upload: one result per floating reference, warning and file
//! that could not be read.

use serde_json::{Value, json};

use crate::commands::check::{CheckReport, OnlineKind};

const FLOATING: &str = "floating-image-reference";
const NOT_CHECKED: &str = "file-not-checked";

fn location(path: &str, line_column: Option<(usize, usize)>) -> Value {
    let mut physical = json!({ "artifactLocation": { "uri": path } });
    if let Some((line, column)) = line_column {
        physical["region"] = json!({ "startLine": line, "startColumn": column });
    }
    json!([{ "physicalLocation": physical }])
}

pub fn check(report: &CheckReport) -> Value {
    let mut rules = vec![
        json!({
            "id": FLOATING,
            "name": "FloatingImageReference",
            "shortDescription": { "text": "Image reference without a digest" },
            "fullDescription": { "text": "A tag without a digest does not record which image runs: a rollback does not roll the image back, and the registry is asked at every pull. Pin it to a digest (name:tag@sha256:…)." },
            "defaultConfiguration": { "level": "error" },
        }),
        json!({
            "id": NOT_CHECKED,
            "name": "FileNotChecked",
            "shortDescription": { "text": "File could not be read or parsed" },
            "defaultConfiguration": { "level": "error" },
        }),
    ];
    if report.online.is_some() {
        for (kind, text) in [
            (
                OnlineKind::Stale,
                "The pinned digest is no longer the tag's: the tag moved. Run tagpin pin to refresh it.",
            ),
            (
                OnlineKind::Missing,
                "The registry no longer has the pinned tag or repository.",
            ),
            (
                OnlineKind::Unverified,
                "The pinned digest could not be checked against the registry.",
            ),
            (
                OnlineKind::MissingPlatform,
                "The digest (the pinned one, or the one its tag now points to) lacks a platform in force (platforms: in the config, --platform, else the pinned digest's own).",
            ),
        ] {
            rules.push(json!({
                "id": kind.rule(),
                "shortDescription": { "text": kind.title() },
                "fullDescription": { "text": text },
                "defaultConfiguration": { "level": "error" },
            }));
        }
    }
    let mut warning_rules = std::collections::BTreeSet::new();
    let mut results = Vec::new();
    for reference in report.floating() {
        results.push(json!({
            "ruleId": FLOATING,
            "level": "error",
            "message": { "text": format!("{} is a floating image reference: pin it to a digest", reference.text) },
            "locations": location(&reference.path, Some((reference.line, reference.column))),
        }));
    }
    for (kind, problem) in report.online_problems() {
        results.push(json!({
            "ruleId": kind.rule(),
            "level": "error",
            "message": { "text": format!("{}: {}", problem.text, problem.message) },
            "locations": location(&problem.path, Some((problem.line, problem.column))),
        }));
    }
    for reference in report.warned() {
        for warning in &reference.warnings {
            let id = serde_json::to_value(warning.code).expect("a unit variant serialises");
            let id = id.as_str().expect("serialises as a string").to_owned();
            if warning_rules.insert(id.clone()) {
                rules.push(json!({
                    "id": id,
                    "shortDescription": { "text": warning.message },
                    "defaultConfiguration": { "level": "warning" },
                }));
            }
            results.push(json!({
                "ruleId": id,
                "level": "warning",
                "message": { "text": format!("{}: {}", reference.text, warning.message) },
                "locations": location(&reference.path, Some((reference.line, reference.column))),
            }));
        }
    }
    for error in &report.errors {
        results.push(json!({
            "ruleId": NOT_CHECKED,
            "level": "error",
            "message": { "text": error.message },
            "locations": location(&error.path, None),
        }));
    }
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "tagpin",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": env!("CARGO_PKG_REPOSITORY"),
                "rules": rules,
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    })
}
