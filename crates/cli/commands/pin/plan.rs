//! Turning scanned files and resolved digests into edits: the pure heart of `pin`.
//!
//! Nothing here touches the disk or the network, so the rules (what gets pinned, what gets
//! refreshed, what is counted as skipped) are tested with plain values.

use std::collections::BTreeMap;

use serde::Serialize;
use tagpin_formats::{Edit, EditSite, FileKind, Finding, Status};
use tagpin_reference::{Digest, ImageReference, TagKey};
use tagpin_registry::ResolveError;

use crate::commands::ScannedFile;
use crate::commands::scan::WarningRow;
use crate::resolve;

/// What an edit does to a reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Change {
    /// A floating reference gained a digest.
    Pinned,
    /// A pinned reference's tag moved; its digest was replaced.
    Refreshed,
}

/// One reference rewritten.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EditRecord {
    pub path: String,
    pub line: usize,
    pub column: usize,
    pub kind: FileKind,
    /// The reference as written before the edit.
    pub text: String,
    /// The name as written (`busybox`, `quay.io/org/img`).
    pub image: String,
    /// The tag looked up (`latest` when none is written).
    pub tag: String,
    pub old_digest: Option<String>,
    pub new_digest: String,
    pub change: Change,
    /// The Kubernetes `latest` pull-policy warning, when the reference has it.
    pub warnings: Vec<WarningRow>,
}

/// A reference whose tag could not be resolved; the file keeps it as it was.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Unresolved {
    pub path: String,
    pub line: usize,
    pub column: usize,
    pub kind: FileKind,
    pub text: String,
    pub image: String,
    pub tag: String,
    /// [`ResolveError::kind`]: `not-found`, `unauthorized`, `rate-limited`, `timeout`, …
    pub error: &'static str,
    pub message: String,
}

/// A reference that resolved but that the scanner cannot rewrite in place (for example a
/// double-quoted YAML scalar with escapes); the file keeps it as it was.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Unsupported {
    pub path: String,
    pub line: usize,
    pub column: usize,
    pub text: String,
    pub reason: String,
}

/// The edits of one file that changes. The file is read again to apply them: no text is kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rewrite {
    /// Index into the scanned files.
    pub file: usize,
    pub edits: Vec<Edit>,
}

/// Everything `pin` would do.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Plan {
    pub rewrites: Vec<Rewrite>,
    pub edits: Vec<EditRecord>,
    pub unresolved: Vec<Unresolved>,
    pub unsupported: Vec<Unsupported>,
    /// Pinned references whose digest is current.
    pub unchanged: usize,
    /// References left alone because of their status (`pinned` ones with `--no-refresh`).
    pub skipped: BTreeMap<Status, usize>,
}

/// Whether `pin` looks this finding up: floating ones always, pinned ones unless told not to;
/// never one that cannot be written (a lookup would cost a request for nothing).
fn wants_lookup(finding: &Finding, refresh: bool) -> Option<&ImageReference> {
    if matches!(finding.site, EditSite::Unsupported { .. }) {
        return None;
    }
    match finding.status {
        Status::Floating => finding.lookup(),
        Status::Pinned if refresh => finding.lookup(),
        _ => None,
    }
}

/// The tag of every reference to look up, in file order: the resolver looks each distinct
/// one up once and counts the lookups the repeats saved.
pub fn keys_to_resolve(files: &[ScannedFile], refresh: bool) -> Vec<TagKey> {
    files
        .iter()
        .flat_map(|file| &file.findings)
        .filter_map(|finding| wants_lookup(finding, refresh))
        .map(ImageReference::tag_key)
        .collect()
}

/// The edits that write `digests` into `files`: one record per reference, one rewrite per file
/// that changes. A tag is looked up once however many references use it, so every reference
/// to it gets the same digest.
pub fn plan(
    files: &[ScannedFile],
    digests: &BTreeMap<TagKey, Result<Digest, ResolveError>>,
    refresh: bool,
) -> Plan {
    let mut plan = Plan::default();
    for (index, file) in files.iter().enumerate() {
        let mut edits = Vec::new();
        for finding in &file.findings {
            let Some(reference) = wants_lookup(finding, refresh) else {
                match &finding.site {
                    EditSite::Unsupported { reason }
                        if finding.status == Status::Floating
                            || (refresh && finding.status == Status::Pinned) =>
                    {
                        plan.unsupported.push(Unsupported {
                            path: file.display.clone(),
                            line: finding.line,
                            column: finding.column,
                            text: finding.text.clone(),
                            reason: reason.clone(),
                        });
                    }
                    _ => *plan.skipped.entry(finding.status).or_default() += 1,
                }
                continue;
            };
            let key = reference.tag_key();
            let digest = match digests.get(&key) {
                Some(Ok(digest)) => digest,
                Some(Err(error)) => {
                    plan.unresolved.push(Unresolved {
                        path: file.display.clone(),
                        line: finding.line,
                        column: finding.column,
                        kind: finding.kind,
                        text: finding.text.clone(),
                        image: reference.name_as_written().to_owned(),
                        tag: key.tag.clone(),
                        error: error.kind(),
                        message: resolve::with_causes(error),
                    });
                    continue;
                }
                None => {
                    plan.unresolved.push(Unresolved {
                        path: file.display.clone(),
                        line: finding.line,
                        column: finding.column,
                        kind: finding.kind,
                        text: finding.text.clone(),
                        image: reference.name_as_written().to_owned(),
                        tag: key.tag.clone(),
                        error: "not-looked-up",
                        message: format!("{key} was not looked up"),
                    });
                    continue;
                }
            };
            if reference.digest() == Some(digest) {
                plan.unchanged += 1;
                continue;
            }
            let Some(edit) = finding.edit(digest) else {
                let reason = match &finding.site {
                    EditSite::Unsupported { reason } => reason.clone(),
                    _ => "the scanner gave no edit for this reference".to_owned(),
                };
                plan.unsupported.push(Unsupported {
                    path: file.display.clone(),
                    line: finding.line,
                    column: finding.column,
                    text: finding.text.clone(),
                    reason,
                });
                continue;
            };
            edits.push(edit);
            plan.edits.push(EditRecord {
                path: file.display.clone(),
                line: finding.line,
                column: finding.column,
                kind: finding.kind,
                text: finding.text.clone(),
                image: reference.name_as_written().to_owned(),
                tag: key.tag,
                old_digest: reference.digest().map(ToString::to_string),
                new_digest: digest.to_string(),
                change: if finding.status == Status::Pinned {
                    Change::Refreshed
                } else {
                    Change::Pinned
                },
                warnings: WarningRow::rows(&finding.warnings),
            });
        }
        if !edits.is_empty() {
            plan.rewrites.push(Rewrite { file: index, edits });
        }
    }
    plan
}

#[cfg(test)]
mod tests;
