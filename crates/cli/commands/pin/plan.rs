//! Turning scanned files and resolved digests into edits: the pure heart of `pin`.
//!
//! Nothing here touches the disk or the network, so the rules (what gets pinned, what gets
//! refreshed, what is counted as skipped) are tested with plain values.

use std::collections::BTreeMap;

use serde::Serialize;
use tagpin_formats::{Edit, EditSite, FileKind, Finding, Status};
use tagpin_reference::{Digest, ImageReference, TagKey};
use tagpin_registry::{DigestKey, Platform, ResolveError};

use crate::commands::ScannedFile;
use crate::commands::scan::WarningRow;
use crate::platforms::Verdict;
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
    /// The platforms whose manifests changed, when the old and new digests were compared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub platforms_changed: Option<Vec<String>>,
    /// With `--details`: each image of the new digest (one per platform in force for an
    /// index) and when it was built (`crate::details`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub built: Option<Vec<crate::details::Built>>,
    /// `imagePullPolicy: IfNotPresent` was added to the container, or a chart's values map got
    /// `pullPolicy: IfNotPresent` (`--latest pull-policy`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub pull_policy_added: bool,
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

impl Unresolved {
    fn of(
        file: &ScannedFile,
        finding: &Finding,
        reference: &ImageReference,
        key: &TagKey,
        error: &'static str,
        message: String,
    ) -> Self {
        Self {
            path: file.display.clone(),
            line: finding.line,
            column: finding.column,
            kind: finding.kind,
            text: finding.text.clone(),
            image: reference.name_as_written().to_owned(),
            tag: key.tag.clone(),
            error,
            message,
        }
    }
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

impl Unsupported {
    fn of(file: &ScannedFile, finding: &Finding, reason: String) -> Self {
        Self {
            path: file.display.clone(),
            line: finding.line,
            column: finding.column,
            text: finding.text.clone(),
            reason,
        }
    }
}

/// A pinned reference whose tag moved to a digest that serves every platform in force with
/// the same manifests: "index moved, platforms unchanged". Not rewritten.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PlatformsUnchanged {
    pub path: String,
    pub line: usize,
    pub column: usize,
    pub text: String,
    pub image: String,
    pub tag: String,
    /// The digest written, kept.
    pub digest: String,
    /// The tag's digest now.
    pub new_digest: String,
}

/// A reference whose new digest lacks platforms in force: not written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MissingPlatform {
    pub path: String,
    pub line: usize,
    pub column: usize,
    pub text: String,
    pub image: String,
    pub tag: String,
    /// The digest written, if any: kept.
    pub digest: Option<String>,
    /// The tag's digest now, refused.
    pub new_digest: String,
    /// The platforms in force (`os/arch[/variant]`).
    pub platforms: Vec<String>,
    /// Those the new digest does not serve.
    pub missing: Vec<String>,
}

/// The edits of one file that changes. The file is read again to apply them: no text is kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rewrite {
    /// Index into the scanned files.
    pub file: usize,
    pub edits: Vec<Edit>,
    /// The `--latest pull-policy` edits, apart: a chart's proof may refuse them alone.
    pub policies: Vec<Edit>,
}

/// Everything `pin` would do.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Plan {
    pub rewrites: Vec<Rewrite>,
    pub edits: Vec<EditRecord>,
    pub unresolved: Vec<Unresolved>,
    pub unsupported: Vec<Unsupported>,
    /// Pinned references whose digest is current (those in `platforms_unchanged` included).
    pub unchanged: usize,
    pub platforms_unchanged: Vec<PlatformsUnchanged>,
    pub missing_platform: Vec<MissingPlatform>,
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

/// The manifests the platform rules still need (`crate::platforms::needed`) for every
/// reference that would get a new digest, given the platforms in force for each and the
/// manifests `fetched` so far.
pub fn manifests_needed(
    files: &[ScannedFile],
    digests: &BTreeMap<TagKey, Result<Digest, ResolveError>>,
    refresh: bool,
    platforms: &dyn Fn(&Finding) -> Vec<Platform>,
    fetched: &crate::platforms::Fetched,
) -> Vec<DigestKey> {
    files
        .iter()
        .flat_map(|file| &file.findings)
        .filter_map(|finding| Some((finding, wants_lookup(finding, refresh)?)))
        .filter_map(|(finding, reference)| {
            let key = reference.tag_key();
            let new = digests.get(&key)?.as_ref().ok()?;
            Some(crate::platforms::needed(
                &key,
                reference.digest(),
                new,
                &platforms(finding),
                fetched,
            ))
        })
        .flatten()
        .collect()
}

/// For each tag to look up, the distinct `(pinned digest, platforms in force)` of the
/// references to it: what the platform rules will ask of its new digest.
pub type FollowUps = BTreeMap<TagKey, Vec<(Option<Digest>, Vec<Platform>)>>;

/// The [`FollowUps`] of `files`.
pub fn follow_ups(
    files: &[ScannedFile],
    refresh: bool,
    platforms: &dyn Fn(&Finding) -> Vec<Platform>,
) -> FollowUps {
    let mut follow = FollowUps::new();
    for finding in files.iter().flat_map(|file| &file.findings) {
        let Some(reference) = wants_lookup(finding, refresh) else {
            continue;
        };
        let entry = (reference.digest().cloned(), platforms(finding));
        let known = follow.entry(reference.tag_key()).or_default();
        if !known.contains(&entry) {
            known.push(entry);
        }
    }
    follow
}

/// Decides, for a reference about to get a new digest, what the platform rules say
/// (`crate::platforms`): the finding, its tag and the new digest.
pub type Judge<'a> = dyn Fn(&Finding, &TagKey, &Digest) -> Verdict + 'a;

/// [`plan_with`] writing every resolved digest (no platform rules).
#[cfg(test)]
pub fn plan(
    files: &[ScannedFile],
    digests: &BTreeMap<TagKey, Result<Digest, ResolveError>>,
    refresh: bool,
) -> Plan {
    plan_with(files, digests, refresh, false, &|_, _, _| Verdict::Write {
        changed: None,
    })
}

/// The edits that write `digests` into `files`: one record per reference, one rewrite per file
/// that changes. A tag is looked up once however many references use it, so every reference
/// to it gets the same digest. `judge` may keep a digest out (platforms unchanged, or one
/// missing). With `pull_policy`, a Kubernetes container with the tag `latest` that gets a
/// digest also gets `imagePullPolicy: IfNotPresent` where the scanner offers the insertion.
pub fn plan_with(
    files: &[ScannedFile],
    digests: &BTreeMap<TagKey, Result<Digest, ResolveError>>,
    refresh: bool,
    pull_policy: bool,
    judge: &Judge<'_>,
) -> Plan {
    let mut plan = Plan::default();
    for (index, file) in files.iter().enumerate() {
        let mut edits = Vec::new();
        let mut policies = Vec::new();
        for finding in &file.findings {
            let Some(reference) = wants_lookup(finding, refresh) else {
                match &finding.site {
                    EditSite::Unsupported { reason }
                        if finding.status == Status::Floating
                            || (refresh && finding.status == Status::Pinned) =>
                    {
                        plan.unsupported
                            .push(Unsupported::of(file, finding, reason.clone()));
                    }
                    _ => *plan.skipped.entry(finding.status).or_default() += 1,
                }
                continue;
            };
            let key = reference.tag_key();
            let digest = match digests.get(&key) {
                Some(Ok(digest)) => digest,
                Some(Err(error)) => {
                    plan.unresolved.push(Unresolved::of(
                        file,
                        finding,
                        reference,
                        &key,
                        error.kind(),
                        resolve::with_causes(error),
                    ));
                    continue;
                }
                None => {
                    plan.unresolved.push(Unresolved::of(
                        file,
                        finding,
                        reference,
                        &key,
                        "not-looked-up",
                        format!("{key} was not looked up"),
                    ));
                    continue;
                }
            };
            if reference.digest() == Some(digest) {
                plan.unchanged += 1;
                continue;
            }
            let platforms_changed = match judge(finding, &key, digest) {
                Verdict::Write { changed } => {
                    changed.map(|changed| changed.iter().map(ToString::to_string).collect())
                }
                Verdict::Same => {
                    plan.unchanged += 1;
                    plan.platforms_unchanged.push(PlatformsUnchanged {
                        path: file.display.clone(),
                        line: finding.line,
                        column: finding.column,
                        text: finding.text.clone(),
                        image: reference.name_as_written().to_owned(),
                        tag: key.tag.clone(),
                        digest: reference
                            .digest()
                            .map(ToString::to_string)
                            .unwrap_or_default(),
                        new_digest: digest.to_string(),
                    });
                    continue;
                }
                Verdict::Missing { wanted, missing } => {
                    plan.missing_platform.push(MissingPlatform {
                        path: file.display.clone(),
                        line: finding.line,
                        column: finding.column,
                        text: finding.text.clone(),
                        image: reference.name_as_written().to_owned(),
                        tag: key.tag.clone(),
                        digest: reference.digest().map(ToString::to_string),
                        new_digest: digest.to_string(),
                        platforms: wanted.iter().map(ToString::to_string).collect(),
                        missing: missing.iter().map(ToString::to_string).collect(),
                    });
                    continue;
                }
                Verdict::Unverified { error, message } => {
                    plan.unresolved.push(Unresolved::of(
                        file, finding, reference, &key, error, message,
                    ));
                    continue;
                }
            };
            let Some(edit) = finding.edit(digest) else {
                let reason = match &finding.site {
                    EditSite::Unsupported { reason } => reason.clone(),
                    _ => "the scanner gave no edit for this reference".to_owned(),
                };
                plan.unsupported
                    .push(Unsupported::of(file, finding, reason));
                continue;
            };
            edits.push(edit);
            let policy = finding.pull_policy().filter(|_| pull_policy);
            policies.extend(policy.cloned());
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
                platforms_changed,
                built: None,
                pull_policy_added: policy.is_some(),
                // The policy added is what the warning asks for.
                warnings: if policy.is_some() {
                    Vec::new()
                } else {
                    WarningRow::rows(&finding.warnings)
                },
            });
        }
        if !edits.is_empty() {
            plan.rewrites.push(Rewrite {
                file: index,
                edits,
                policies,
            });
        }
    }
    plan
}

#[cfg(test)]
mod tests;
