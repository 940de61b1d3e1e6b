//! `tagpin check`: fails when a floating reference is not ignored, or a file could not be read.

use std::path::PathBuf;

use serde::Serialize;
use tagpin_formats::Status;

use super::scan::{ReferenceRow, ScanReport};
use super::{FileError, Skipped};
use crate::settings::Settings;

/// What `check` found: the JSON document `check --format json` prints. It has the fields of
/// `scan`'s document plus a `summary`.
#[derive(Debug, Serialize)]
pub struct CheckReport {
    pub references: Vec<ReferenceRow>,
    pub errors: Vec<FileError>,
    pub skipped: Vec<Skipped>,
    pub summary: CheckSummary,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CheckSummary {
    /// Whether the check passed: no floating reference that is not ignored, and every file read.
    pub passed: bool,
    pub files: usize,
    pub references: usize,
    pub floating: usize,
    pub ignored: usize,
    /// References with a warning (Kubernetes `latest` without `imagePullPolicy`).
    pub warnings: usize,
    /// Files that could not be read or parsed.
    pub errors: usize,
}

impl CheckReport {
    pub fn from_scan(scan: ScanReport) -> Self {
        let floating = scan.count(Status::Floating);
        let summary = CheckSummary {
            passed: floating == 0 && scan.errors.is_empty(),
            files: scan.files_scanned,
            references: scan.references.len(),
            floating,
            ignored: scan.count(Status::Ignored),
            warnings: scan
                .references
                .iter()
                .filter(|r| !r.warnings.is_empty() && r.status != Status::Ignored)
                .count(),
            errors: scan.errors.len(),
        };
        Self {
            references: scan.references,
            errors: scan.errors,
            skipped: scan.skipped,
            summary,
        }
    }

    /// The references that fail the check.
    pub fn floating(&self) -> impl Iterator<Item = &ReferenceRow> {
        self.references
            .iter()
            .filter(|reference| reference.status == Status::Floating)
    }

    /// The references with warnings. An ignored reference is left alone, warnings included.
    pub fn warned(&self) -> impl Iterator<Item = &ReferenceRow> {
        self.references.iter().filter(|reference| {
            !reference.warnings.is_empty() && reference.status != Status::Ignored
        })
    }
}

pub fn run(paths: &[PathBuf], online: bool, settings: &Settings) -> anyhow::Result<CheckReport> {
    if online {
        anyhow::bail!(
            "`tagpin check --online` needs registry resolution, which arrives with `tagpin pin`; \
             run `tagpin check` without `--online` to check offline"
        );
    }
    Ok(CheckReport::from_scan(super::scan::run(paths, settings)?))
}
