//! `tagpin pin`: resolve floating (and, unless `--no-refresh`, pinned) references and compute
//! the rewrite; with `--write`, write the changed files atomically.

mod plan;

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;
use tagpin_formats::Status;
use tagpin_registry::Stats;

pub use plan::{Change, EditRecord, Unresolved, Unsupported};

use super::{FileError, Keep, Skipped};
use crate::resolve::{self, Progress};
use crate::settings::Settings;
use crate::write;

/// How `pin` runs.
#[derive(Clone, Copy, Debug)]
pub struct PinOptions {
    /// Write the changed files (otherwise only report).
    pub write: bool,
    /// Look pinned references up too and replace digests whose tag moved.
    pub refresh: bool,
}

/// What `pin` did: the JSON document `pin --format json` prints.
#[derive(Debug, Serialize)]
pub struct PinReport {
    /// Every reference rewritten (or that `--write` would rewrite).
    pub edits: Vec<EditRecord>,
    /// Every reference whose tag could not be resolved, with the reason.
    pub unresolved: Vec<Unresolved>,
    /// References that resolved but cannot be rewritten in place.
    pub unsupported: Vec<Unsupported>,
    /// Files written (with `--write`).
    pub written: Vec<String>,
    /// Files that should have changed but were not written, and why.
    pub not_written: Vec<FileError>,
    /// Files that could not be read or parsed.
    pub errors: Vec<FileError>,
    pub skipped: Vec<Skipped>,
    pub summary: PinSummary,
    /// What resolving cost: requests by method and status, tokens, retries, lookups.
    pub stats: Stats,
    /// Old and new text of each file that changes, for the diff.
    #[serde(skip)]
    pub rewrites: Vec<FileChange>,
    /// Where each file with findings was read from, by its shown path.
    #[serde(skip)]
    pub sources: BTreeMap<String, PathBuf>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PinSummary {
    pub write: bool,
    pub files: usize,
    pub references: usize,
    /// Floating references that got a digest.
    pub pinned: usize,
    /// Pinned references whose digest moved with their tag.
    pub refreshed: usize,
    /// Pinned references whose digest is current.
    pub unchanged: usize,
    pub unresolved: usize,
    pub unsupported: usize,
    /// References left alone, by status.
    pub skipped: BTreeMap<Status, usize>,
    /// Edited references with the Kubernetes `latest` pull-policy warning.
    pub warnings: usize,
    pub files_changed: usize,
    pub files_written: usize,
    pub files_not_written: usize,
}

/// One file that changes.
#[derive(Clone, Debug)]
pub struct FileChange {
    /// As shown: relative to the PATH given.
    pub path: String,
    /// Where it was read from (and is written to).
    pub source: PathBuf,
    pub old_text: String,
    pub new_text: String,
}

impl PinReport {
    /// Whether everything that should have been done was: every reference resolved, and with
    /// `--write` every changed file written.
    pub fn complete(&self) -> bool {
        self.unresolved.is_empty() && self.not_written.is_empty()
    }
}

/// `pin`: [`compute`], then with `--write` the changed files written atomically.
pub fn run(
    paths: &[PathBuf],
    options: PinOptions,
    settings: &Settings,
    progress: &dyn Progress,
) -> anyhow::Result<PinReport> {
    let mut report = compute(paths, options.refresh, settings, progress)?;
    if options.write {
        write_all(&mut report);
    }
    Ok(report)
}

/// The pin pipeline without writing anything: scan `paths`, resolve the tags, plan the edits
/// and compute each changed file's new text. `pin` writes the result; `pr` commits it.
pub fn compute(
    paths: &[PathBuf],
    refresh: bool,
    settings: &Settings,
    progress: &dyn Progress,
) -> anyhow::Result<PinReport> {
    super::check_paths(paths)?;
    let collected = super::collect(paths, settings, Keep::Text);
    let keys = plan::keys_to_resolve(&collected.files, refresh);
    let resolution = resolve::resolve(keys, settings, progress)?;
    let plan = plan::plan(&collected.files, &resolution.digests, refresh);

    let mut not_written: Vec<FileError> = plan
        .failed
        .iter()
        .map(|(index, message)| FileError {
            path: collected.files[*index].display.clone(),
            message: format!("not written: the edits do not apply ({message})"),
        })
        .collect();
    not_written.sort_by(|a, b| a.path.cmp(&b.path));
    let rewrites: Vec<FileChange> = plan
        .rewrites
        .iter()
        .map(|rewrite| {
            let file = &collected.files[rewrite.file];
            FileChange {
                path: file.display.clone(),
                source: file.path.clone(),
                old_text: file.text.clone().unwrap_or_default(),
                new_text: rewrite.new_text.clone(),
            }
        })
        .collect();
    let sources = collected
        .files
        .iter()
        .map(|file| (file.display.clone(), file.path.clone()))
        .collect();

    let count = |change| plan.edits.iter().filter(|e| e.change == change).count();
    let summary = PinSummary {
        write: false,
        files: collected.files_scanned,
        references: collected.files.iter().map(|f| f.findings.len()).sum(),
        pinned: count(Change::Pinned),
        refreshed: count(Change::Refreshed),
        unchanged: plan.unchanged,
        unresolved: plan.unresolved.len(),
        unsupported: plan.unsupported.len(),
        skipped: plan.skipped,
        warnings: plan.edits.iter().filter(|e| !e.warnings.is_empty()).count(),
        files_changed: rewrites.len(),
        files_written: 0,
        files_not_written: not_written.len(),
    };
    Ok(PinReport {
        edits: plan.edits,
        unresolved: plan.unresolved,
        unsupported: plan.unsupported,
        written: Vec::new(),
        not_written,
        errors: collected.errors,
        skipped: collected.skipped,
        summary,
        stats: resolution.stats,
        rewrites,
        sources,
    })
}

/// Writes every rewrite of `report` atomically and records what was and was not written.
fn write_all(report: &mut PinReport) {
    report.summary.write = true;
    if !report.rewrites.is_empty() {
        tagpin::before_writes();
        for change in &report.rewrites {
            match write::replace(&change.source, &change.old_text, &change.new_text) {
                Ok(()) => {
                    report.written.push(change.path.clone());
                    tagpin::after_write(report.written.len());
                }
                Err(error) => report.not_written.push(FileError {
                    path: change.path.clone(),
                    message: error.to_string(),
                }),
            }
        }
    }
    report.not_written.sort_by(|a, b| a.path.cmp(&b.path));
    report.summary.files_written = report.written.len();
    report.summary.files_not_written = report.not_written.len();
}
