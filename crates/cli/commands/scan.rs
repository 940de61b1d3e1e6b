//! `tagpin scan`: every reference found, with its status.

use std::path::PathBuf;

use serde::Serialize;
use tagpin_formats::chart::TagSource;
use tagpin_formats::{EditSite, FileKind, Finding, Status, Warning};
use tagpin_reference::Digest;

use super::{Collected, FileError, Skipped};
use crate::settings::Settings;

/// What `scan` found: the JSON document `scan --format json` prints.
///
/// `references` and `errors` are the contract of DESIGN.md §2; `warnings` (per reference) and
/// `skipped` are additions. The report keeps each file's findings and makes a
/// [`ReferenceRow`] of each only as it is printed: a tree of 100,000 files would otherwise hold
/// every reference twice, once found and once as a row.
#[derive(Debug, Default)]
pub struct ScanReport {
    /// The files with references, sorted by path, each one's findings in file order.
    pub files: Vec<FileFindings>,
    pub errors: Vec<FileError>,
    pub skipped: Vec<Skipped>,
    /// How many files were scanned.
    pub files_scanned: usize,
}

/// One file's references, under the path shown for it.
#[derive(Debug)]
pub struct FileFindings {
    pub display: String,
    pub findings: Vec<Finding>,
}

impl Serialize for ScanReport {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;
        let mut document = serializer.serialize_struct("ScanReport", 3)?;
        document.serialize_field("references", &Rows(self))?;
        document.serialize_field("errors", &self.errors)?;
        document.serialize_field("skipped", &self.skipped)?;
        document.end()
    }
}

/// The `references` array, one row made at a time.
struct Rows<'a>(&'a ScanReport);

impl Serialize for Rows<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.rows())
    }
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
        let view = RowView { path, finding };
        Self {
            path: path.to_owned(),
            line: finding.line,
            column: finding.column,
            kind: finding.kind,
            text: finding.text.clone(),
            status: finding.status,
            registry: view.registry().map(str::to_owned),
            repository: view.repository().map(str::to_owned),
            tag: view.tag().map(str::to_owned),
            digest: view.digest().map(ToString::to_string),
            warnings: WarningRow::rows(&finding.warnings),
            tag_source: finding.tag_source,
            unwritable: view.unwritable().map(str::to_owned),
        }
    }
}

/// A [`ReferenceRow`]'s fields as its finding holds them, borrowed: what a printer that
/// writes rows itself reads, without a copy of each string per row.
#[derive(Clone, Copy)]
pub struct RowView<'a> {
    pub path: &'a str,
    pub finding: &'a Finding,
}

impl<'a> RowView<'a> {
    pub fn registry(self) -> Option<&'a str> {
        self.finding
            .reference
            .as_ref()
            .map(tagpin_reference::ImageReference::registry)
    }

    pub fn repository(self) -> Option<&'a str> {
        self.finding
            .reference
            .as_ref()
            .map(tagpin_reference::ImageReference::repository)
    }

    /// No tag and no digest means `latest`; a digest-only reference has no tag.
    pub fn tag(self) -> Option<&'a str> {
        self.finding
            .reference
            .as_ref()
            .and_then(|r| match (r.tag(), r.digest()) {
                (Some(tag), _) => Some(tag),
                (None, None) => Some(r.tag_or_latest()),
                (None, Some(_)) => None,
            })
    }

    pub fn digest(self) -> Option<&'a Digest> {
        self.finding.reference.as_ref().and_then(|r| r.digest())
    }

    /// Why `pin` cannot write a digest here, when it cannot.
    pub fn unwritable(self) -> Option<&'a str> {
        match &self.finding.site {
            EditSite::Unsupported { reason }
                if matches!(
                    self.finding.status,
                    Status::Floating | Status::Pinned | Status::Ignored
                ) =>
            {
                Some(reason)
            }
            _ => None,
        }
    }
}

impl ScanReport {
    pub fn from_collected(collected: Collected) -> Self {
        let files = collected
            .files
            .into_iter()
            .map(|file| FileFindings {
                display: file.display,
                findings: file.findings,
            })
            .collect();
        Self {
            files,
            errors: collected.errors,
            skipped: collected.skipped,
            files_scanned: collected.files_scanned,
        }
    }

    /// Every finding with the path shown for its file, in report order.
    pub fn findings(&self) -> impl Iterator<Item = (&str, &Finding)> {
        self.files.iter().flat_map(|file| {
            file.findings
                .iter()
                .map(|finding| (file.display.as_str(), finding))
        })
    }

    /// Every finding as a [`RowView`], in report order.
    pub fn views(&self) -> impl Iterator<Item = RowView<'_>> {
        self.findings()
            .map(|(path, finding)| RowView { path, finding })
    }

    /// One row per reference, in report order.
    pub fn rows(&self) -> impl Iterator<Item = ReferenceRow> {
        self.findings()
            .map(|(path, finding)| ReferenceRow::new(path, finding))
    }

    /// How many references there are.
    pub fn len(&self) -> usize {
        self.files.iter().map(|file| file.findings.len()).sum()
    }

    /// Whether no reference was found.
    pub fn is_empty(&self) -> bool {
        self.files.iter().all(|file| file.findings.is_empty())
    }

    /// How many references have `status`.
    pub fn count(&self, status: Status) -> usize {
        self.findings()
            .filter(|(_, finding)| finding.status == status)
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
