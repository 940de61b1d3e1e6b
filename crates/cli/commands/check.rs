//! `tagpin check`: fails when a floating reference is not ignored, or a file could not be read;
//! with `--online`, also when a pinned reference's digest is stale (its tag moved) or missing
//! (its tag is gone), or could not be verified.

use std::path::PathBuf;

use serde::Serialize;
use tagpin_formats::Status;
use tagpin_registry::{ResolveError, Stats, TagKey};

use super::scan::{ReferenceRow, ScanReport};
use super::{FileError, Skipped};
use crate::platforms::Verdict;
use crate::resolve::{self, Progress};
use crate::settings::Settings;

/// What `check` found: the JSON document `check --format json` prints. It has the fields of
/// `scan`'s document plus a `summary`.
#[derive(Debug, Serialize)]
pub struct CheckReport {
    pub references: Vec<ReferenceRow>,
    pub errors: Vec<FileError>,
    pub skipped: Vec<Skipped>,
    /// With `--online`: what the registry said about the pinned references.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub online: Option<OnlineReport>,
    pub summary: CheckSummary,
}

/// The pinned references `check --online` found wrong, and what resolving cost.
#[derive(Debug, Default, Serialize)]
pub struct OnlineReport {
    /// Pinned references looked up.
    pub checked: usize,
    /// Those whose tag the registry answered with the digest written: the only ones verified.
    /// A lookup that failed (a 500, a timeout…) verifies nothing.
    pub verified: usize,
    /// The tag now points to another digest.
    pub stale: Vec<OnlineProblem>,
    /// The registry does not have the tag (or the repository) any more.
    pub missing: Vec<OnlineProblem>,
    /// The lookup failed otherwise (unauthorized, rate limited, timeout…): not verified.
    pub unresolved: Vec<OnlineProblem>,
    /// The digest `pin` would write (the pinned one when its tag did not move) lacks a
    /// platform in force (`platforms:`, `--platform`, else the pinned digest's own).
    pub missing_platform: Vec<OnlineProblem>,
    /// The tag moved, but the manifests of every platform in force are the pinned ones
    /// ("index moved, platforms unchanged"): not stale, `pin` would keep the pin.
    pub platforms_unchanged: Vec<OnlineProblem>,
    pub stats: Stats,
}

/// What is wrong with a pinned reference, for `--online`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnlineKind {
    Stale,
    Missing,
    Unverified,
    MissingPlatform,
}

impl OnlineKind {
    /// The words text output and annotations use.
    pub fn title(self) -> &'static str {
        match self {
            Self::Stale => "stale digest",
            Self::Missing => "missing image",
            Self::Unverified => "digest not verified",
            Self::MissingPlatform => "missing platform",
        }
    }

    /// The SARIF rule id.
    pub fn rule(self) -> &'static str {
        match self {
            Self::Stale => "stale-digest",
            Self::Missing => "missing-image",
            Self::Unverified => "digest-not-verified",
            Self::MissingPlatform => "missing-platform",
        }
    }
}

/// One pinned reference with a problem.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OnlineProblem {
    pub path: String,
    pub line: usize,
    pub column: usize,
    pub text: String,
    /// The digest written in the file.
    pub digest: String,
    /// The tag's digest now (stale references only).
    pub current_digest: Option<String>,
    /// [`ResolveError::kind`] when the lookup failed.
    pub error: Option<&'static str>,
    pub message: String,
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
    /// With `--online`: pinned references whose tag moved, whose tag is gone, and whose
    /// lookup failed.
    pub stale: usize,
    pub missing: usize,
    pub unresolved: usize,
    /// With `--online`: pinned references whose digest (current or new) lacks a platform
    /// in force.
    pub missing_platform: usize,
}

impl CheckReport {
    pub fn from_scan(scan: ScanReport) -> Self {
        let floating = scan.count(Status::Floating);
        let summary = CheckSummary {
            passed: floating == 0 && scan.errors.is_empty(),
            files: scan.files_scanned,
            references: scan.len(),
            floating,
            ignored: scan.count(Status::Ignored),
            warnings: scan
                .findings()
                .filter(|(_, f)| !f.warnings.is_empty() && f.status != Status::Ignored)
                .count(),
            errors: scan.errors.len(),
            stale: 0,
            missing: 0,
            unresolved: 0,
            missing_platform: 0,
        };
        Self {
            references: scan.rows().collect(),
            errors: scan.errors,
            skipped: scan.skipped,
            online: None,
            summary,
        }
    }

    /// Adds what `--online` found; any problem fails the check.
    pub fn with_online(mut self, online: OnlineReport) -> Self {
        self.summary.stale = online.stale.len();
        self.summary.missing = online.missing.len();
        self.summary.unresolved = online.unresolved.len();
        self.summary.missing_platform = online.missing_platform.len();
        self.summary.passed &= online.stale.is_empty()
            && online.missing.is_empty()
            && online.unresolved.is_empty()
            && online.missing_platform.is_empty();
        self.online = Some(online);
        self
    }

    /// The references that fail the check.
    pub fn floating(&self) -> impl Iterator<Item = &ReferenceRow> {
        self.references
            .iter()
            .filter(|reference| reference.status == Status::Floating)
    }

    /// With `--online`: every pinned reference with a problem, stale first, then missing, then
    /// not verified, then missing a platform.
    pub fn online_problems(&self) -> impl Iterator<Item = (OnlineKind, &OnlineProblem)> {
        self.online.iter().flat_map(|online| {
            let stale = online.stale.iter().map(|p| (OnlineKind::Stale, p));
            let missing = online.missing.iter().map(|p| (OnlineKind::Missing, p));
            let unresolved = online
                .unresolved
                .iter()
                .map(|p| (OnlineKind::Unverified, p));
            let platform = online
                .missing_platform
                .iter()
                .map(|p| (OnlineKind::MissingPlatform, p));
            stale.chain(missing).chain(unresolved).chain(platform)
        })
    }

    /// The references with warnings. An ignored reference is left alone, warnings included.
    pub fn warned(&self) -> impl Iterator<Item = &ReferenceRow> {
        self.references.iter().filter(|reference| {
            !reference.warnings.is_empty() && reference.status != Status::Ignored
        })
    }
}

pub fn run(
    paths: &[PathBuf],
    online: bool,
    settings: &Settings,
    progress: &dyn Progress,
) -> anyhow::Result<CheckReport> {
    let report = CheckReport::from_scan(super::scan::run(paths, settings)?);
    if !online {
        return Ok(report);
    }
    let pinned: Vec<(&ReferenceRow, TagKey)> = report
        .references
        .iter()
        .filter(|reference| reference.status == Status::Pinned)
        .filter_map(|reference| {
            let key = TagKey::new(
                reference.registry.as_deref()?,
                reference.repository.as_deref()?,
                reference.tag.as_deref()?,
            );
            Some((reference, key))
        })
        .collect();
    let mut session = resolve::Session::new(settings);
    let mut resolution = session.resolve(
        pinned.iter().map(|(_, key)| key.clone()).collect(),
        progress,
    )?;
    // The platform rules of `pin`: a moved tag's old and new manifests are compared, and with
    // platforms configured a current digest is checked too.
    let digests: Vec<Option<(tagpin_registry::Digest, &tagpin_registry::Digest)>> = pinned
        .iter()
        .map(|(reference, key)| {
            let written = reference.digest.as_deref()?.parse().ok()?;
            let current = resolution.digests.get(key)?.as_ref().ok()?;
            Some((written, current))
        })
        .collect();
    let configured = &settings.platforms;
    let mut fetched = crate::platforms::Fetched::new();
    loop {
        let needed: Vec<_> = pinned
            .iter()
            .zip(&digests)
            .filter_map(|((_, key), digests)| {
                let (written, current) = digests.as_ref()?;
                let old = (written != *current).then_some(written);
                Some(crate::platforms::needed(
                    key, old, current, configured, &fetched,
                ))
            })
            .flatten()
            .collect();
        if needed.is_empty() {
            break;
        }
        let round = session.manifests(needed)?;
        resolution.stats.merge(round.stats);
        fetched.extend(round.manifests);
    }
    let mut online = OnlineReport {
        checked: pinned.len(),
        ..OnlineReport::default()
    };
    for ((reference, key), digests) in pinned.iter().zip(&digests) {
        let written = reference.digest.clone().unwrap_or_default();
        let problem = |current_digest, error, message| OnlineProblem {
            path: reference.path.clone(),
            line: reference.line,
            column: reference.column,
            text: reference.text.clone(),
            digest: written.clone(),
            current_digest,
            error,
            message,
        };
        if let Some((pinned_digest, current)) = digests {
            let old = (pinned_digest != *current).then_some(pinned_digest);
            let verdict = crate::platforms::judge(key, old, current, configured, &fetched);
            let current_text = Some(current.to_string());
            match verdict {
                Verdict::Write { .. } if old.is_none() => online.verified += 1,
                Verdict::Write { .. } => online.stale.push(problem(
                    current_text,
                    None,
                    format!("{key} now points to {current}"),
                )),
                Verdict::Same => {
                    online.verified += 1;
                    online.platforms_unchanged.push(problem(
                        current_text,
                        None,
                        format!("{key} now points to {current}: index moved, platforms unchanged"),
                    ));
                }
                Verdict::Missing { wanted, missing } => {
                    online.missing_platform.push(problem(
                        current_text,
                        Some("missing-platform"),
                        format!(
                            "{current} ({key}) lacks {} (platforms in force: {})",
                            join(&missing),
                            join(&wanted)
                        ),
                    ));
                }
                Verdict::Unverified { error, message } => {
                    online
                        .unresolved
                        .push(problem(current_text, Some(error), message));
                }
            }
            continue;
        }
        match resolution.digests.get(key) {
            Some(Ok(current)) if current.to_string() == written => online.verified += 1,
            Some(Ok(current)) => online.stale.push(problem(
                Some(current.to_string()),
                None,
                format!("{key} now points to {current}"),
            )),
            Some(Err(error @ ResolveError::NotFound { .. })) => {
                online.missing.push(problem(
                    None,
                    Some(error.kind()),
                    resolve::with_causes(error),
                ));
            }
            Some(Err(error)) => {
                online.unresolved.push(problem(
                    None,
                    Some(error.kind()),
                    resolve::with_causes(error),
                ));
            }
            None => online.unresolved.push(problem(
                None,
                Some("not-looked-up"),
                format!("{key} was not looked up"),
            )),
        }
    }
    online.stats = resolution.stats;
    Ok(report.with_online(online))
}

fn join(platforms: &[tagpin_registry::Platform]) -> String {
    platforms
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}
