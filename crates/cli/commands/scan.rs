//! `tagpin scan`: every reference found, with its status.

use std::path::PathBuf;

use serde::Serialize;
use tagpin_formats::chart::TagSource;
use tagpin_formats::{EditSite, FileKind, Finding, Status, Warning};

use super::{Collected, FileError, Skipped};
use crate::settings::Settings;

/// What `scan` found: the JSON document `scan --format json` prints.
///
/// `references` and `errors` are the contract of DESIGN.md §2; `warnings` (per reference) and
/// `skipped` are additions.
#[derive(Debug, Default, Serialize)]
pub struct ScanReport {
    pub references: Vec<ReferenceRow>,
    pub errors: Vec<FileError>,
    pub skipped: Vec<Skipped>,
    /// How many files were scanned.
    #[serde(skip)]
    pub files_scanned: usize,
}

/// One reference. `text` is the reference as written; `registry`, `repository` and `tag` are
/// the normalised forms a registry is asked for (`docker.io`, `library/busybox`, `latest` when
/// neither tag nor digest is written; `null` for a digest-only reference); all four are `null`
/// when the reference does not parse (templated, stage names).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ReferenceRow {
    pub path: String,
    pub line: usize,
    pub column: usize,
    pub kind: FileKind,
    pub text: String,
    pub status: Status,
    pub registry: Option<String>,
    pub repository: Option<String>,
    pub tag: Option<String>,
    pub digest: Option<String>,
    pub warnings: Vec<WarningRow>,
    /// For a chart's values: where the tag the chart renders comes from (`values`, or
    /// `app-version` when the values leave it empty).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tag_source: Option<TagSource>,
    /// Why `pin` cannot write a digest here, when it cannot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unwritable: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WarningRow {
    pub code: Warning,
    pub message: &'static str,
}

impl WarningRow {
    /// The rows for a finding's warnings, each with its message.
    pub fn rows(warnings: &[Warning]) -> Vec<Self> {
        warnings
            .iter()
            .map(|&code| Self {
                code,
                message: code.message(),
            })
            .collect()
    }
}

impl ReferenceRow {
    pub fn new(path: &str, finding: &Finding) -> Self {
        let reference = finding.reference.as_ref();
        Self {
            path: path.to_owned(),
            line: finding.line,
            column: finding.column,
            kind: finding.kind,
            text: finding.text.clone(),
            status: finding.status,
            registry: reference.map(|r| r.registry().to_owned()),
            repository: reference.map(|r| r.repository().to_owned()),
            // No tag and no digest means `latest`; a digest-only reference has no tag.
            tag: reference.and_then(|r| match (r.tag(), r.digest()) {
                (Some(tag), _) => Some(tag.to_owned()),
                (None, None) => Some(r.tag_or_latest().to_owned()),
                (None, Some(_)) => None,
            }),
            digest: reference.and_then(|r| r.digest()).map(ToString::to_string),
            warnings: WarningRow::rows(&finding.warnings),
            tag_source: finding.tag_source,
            unwritable: match &finding.site {
                EditSite::Unsupported { reason }
                    if matches!(finding.status, Status::Floating | Status::Pinned) =>
                {
                    Some(reason.clone())
                }
                _ => None,
            },
        }
    }
}

impl ScanReport {
    pub fn from_collected(collected: Collected) -> Self {
        // File by file, so that each file's findings are freed as its rows are made.
        let total = collected.files.iter().map(|file| file.findings.len()).sum();
        let mut references = Vec::with_capacity(total);
        for file in collected.files {
            references.extend(
                file.findings
                    .iter()
                    .map(|finding| ReferenceRow::new(&file.display, finding)),
            );
        }
        Self {
            references,
            errors: collected.errors,
            skipped: collected.skipped,
            files_scanned: collected.files_scanned,
        }
    }

    /// How many references have `status`.
    pub fn count(&self, status: Status) -> usize {
        self.references
            .iter()
            .filter(|reference| reference.status == status)
            .count()
    }
}

pub fn run(paths: &[PathBuf], settings: &Settings) -> anyhow::Result<ScanReport> {
    super::check_paths(paths)?;
    Ok(ScanReport::from_collected(super::collect(
        paths,
        settings,
        super::Keep::Findings,
    )))
}
