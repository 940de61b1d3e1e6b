//! `tagpin pin`: resolve floating (and, unless `--no-refresh`, pinned) references and compute
//! the rewrite; with `--write`, write the changed files atomically.

mod plan;

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;
use tagpin_formats::{Edit, Status, apply_edits};
use tagpin_reference::ImageReference;
use tagpin_registry::{Stats, TagKey};

pub use plan::{Change, EditRecord, MissingPlatform, PlatformsUnchanged, Unresolved, Unsupported};

use super::{FileError, Fingerprint, Keep, Skipped};
use crate::read::{self, Contents};
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
    /// Pinned references whose tag moved with every platform in force unchanged ("index
    /// moved, platforms unchanged"): not rewritten; the new digest is given.
    pub platforms_unchanged: Vec<PlatformsUnchanged>,
    /// References whose new digest lacks a platform in force: not written.
    pub missing_platform: Vec<MissingPlatform>,
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
    /// The unified diff of each file that changes (without `--write`), in path order.
    #[serde(skip)]
    pub diffs: Vec<String>,
    /// The files that change, with their edits, as [`compute`] leaves them: `pin` and `pr`
    /// read each again, one at a time, to apply them.
    #[serde(skip)]
    pub planned: Vec<PlannedFile>,
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
    /// Pinned references whose digest is current, or whose tag moved with the platforms in
    /// force unchanged.
    pub unchanged: usize,
    /// Of `unchanged`, those whose tag moved ("index moved, platforms unchanged").
    pub platforms_unchanged: usize,
    /// References not written: the new digest lacks a platform in force.
    pub missing_platform: usize,
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

/// A file that changes: where it is, the fingerprint of the text that was scanned, and the
/// edits. Its text is read again when the edits are applied, so that a run holds one file's
/// text at a time.
#[derive(Clone, Debug)]
pub struct PlannedFile {
    /// As shown: relative to the PATH given.
    pub path: String,
    /// Where it was read from (and is written to).
    pub source: PathBuf,
    fingerprint: Fingerprint,
    edits: Vec<Edit>,
    /// The `--latest pull-policy` edits, applied with the others.
    policies: Vec<Edit>,
}

impl PlannedFile {
    /// The file with only the edits at `indexes` (and no pull policy edits).
    fn only(&self, indexes: &[usize]) -> Self {
        Self {
            path: self.path.clone(),
            source: self.source.clone(),
            fingerprint: self.fingerprint,
            edits: indexes.iter().map(|i| self.edits[*i].clone()).collect(),
            policies: Vec::new(),
        }
    }

    /// Reads the file again and applies the edits: its text (the one scanned) and the new
    /// one, or why not. The new text is never over the size tagpin reads: `check` and the
    /// next `pin` must be able to read what `pin` writes.
    pub fn rewrite(&self) -> Result<(String, String), String> {
        let mut buffer = Vec::new();
        match read::read(&self.source, &mut buffer) {
            Ok(Contents::Text(_)) => {}
            Ok(Contents::Empty) => return Err(write::WriteError::ChangedOnDisk.to_string()),
            Err(error) => return Err(error.to_string()),
        }
        let text = String::from_utf8(buffer).expect("read checked it is UTF-8");
        if super::fingerprint(&text) != self.fingerprint {
            return Err(write::WriteError::ChangedOnDisk.to_string());
        }
        let edits: Vec<Edit> = self.edits.iter().chain(&self.policies).cloned().collect();
        let new_text = apply_edits(&text, &edits)
            .map_err(|error| format!("not written: the edits do not apply ({error})"))?;
        if new_text.len() as u64 > read::MAX_FILE_SIZE {
            return Err(format!(
                "not written: with the digests it would be {} bytes, over the {} MiB limit \
                 tagpin reads files up to",
                new_text.len(),
                read::MAX_FILE_SIZE / 1024 / 1024
            ));
        }
        Ok((text, new_text))
    }
}

impl PinReport {
    /// Whether everything that should have been done was: every reference resolved, no new
    /// digest refused for a missing platform, and with `--write` every changed file written.
    pub fn complete(&self) -> bool {
        self.unresolved.is_empty()
            && self.not_written.is_empty()
            && self.missing_platform.is_empty()
    }
}

/// `pin`: [`compute`], then each changed file read again, one at a time, checked
/// (`write::check`: inside the PATHs, one hard link, writable) and with `--write` written
/// atomically, else its diff kept.
pub fn run(
    paths: &[PathBuf],
    options: PinOptions,
    settings: &Settings,
    progress: &dyn Progress,
) -> anyhow::Result<PinReport> {
    let mut report = compute(paths, options.refresh, settings, progress)?;
    let roots = write::Roots::new(paths);
    let planned = std::mem::take(&mut report.planned);
    report.summary.write = options.write;
    if options.write && !planned.is_empty() {
        tagpin::before_writes();
    }
    let mut changed = 0;
    for file in &planned {
        let rewritten = write::check(&file.source, &roots)
            .map_err(|error| error.to_string())
            .and_then(|_| file.rewrite());
        let (old_text, new_text) = match rewritten {
            Ok(texts) => texts,
            Err(message) => {
                report.not_written.push(FileError {
                    path: file.path.clone(),
                    message,
                });
                continue;
            }
        };
        changed += 1;
        if !options.write {
            let mut diff = Vec::new();
            crate::printer::diff::unified(&mut diff, &file.path, &old_text, &new_text)
                .expect("writing to memory");
            report
                .diffs
                .push(String::from_utf8(diff).expect("a diff of UTF-8 texts"));
            continue;
        }
        match write::replace(&file.source, &old_text, &new_text, &roots) {
            Ok(()) => {
                report.written.push(file.path.clone());
                tagpin::after_write(report.written.len());
            }
            Err(error) => report.not_written.push(FileError {
                path: file.path.clone(),
                message: error.to_string(),
            }),
        }
    }
    report.not_written.sort_by(|a, b| a.path.cmp(&b.path));
    report.summary.files_changed = changed;
    report.summary.files_written = report.written.len();
    report.summary.files_not_written = report.not_written.len();
    Ok(report)
}

/// The pin pipeline without writing anything: scan `paths`, resolve the tags and plan the
/// edits of each file that changes. `pin` writes the result; `pr` commits it. No file's text
/// is kept: each is read again when its edits are applied ([`PlannedFile::rewrite`]).
pub fn compute(
    paths: &[PathBuf],
    refresh: bool,
    settings: &Settings,
    progress: &dyn Progress,
) -> anyhow::Result<PinReport> {
    super::check_paths(paths)?;
    let mut collected = super::collect(paths, settings, Keep::Fingerprint);
    let charts = std::mem::take(&mut collected.charts);
    let keys = plan::keys_to_resolve(&collected.files, refresh);
    let mut session = resolve::Session::new(settings);
    // Only moved tags (and first pins with platforms configured) cost manifest GETs, asked
    // for as soon as the tag resolves.
    let platforms = |finding: &tagpin_formats::Finding| {
        crate::platforms::in_force(finding, &settings.platforms)
    };
    let follow_ups = plan::follow_ups(&collected.files, refresh, &platforms);
    let follow = |key: &TagKey, new: &tagpin_registry::Digest| {
        follow_ups
            .get(key)
            .into_iter()
            .flatten()
            .flat_map(|(old, configured)| {
                crate::platforms::at_once(key, old.as_ref(), new, configured)
            })
            .collect()
    };
    let (mut resolution, first) = session.resolve_following(keys, progress, &follow)?;
    resolution.stats.merge(first.stats);
    let mut fetched: crate::platforms::Fetched = first.manifests;
    loop {
        let needed = plan::manifests_needed(
            &collected.files,
            &resolution.digests,
            refresh,
            &platforms,
            &fetched,
        );
        if needed.is_empty() {
            break;
        }
        let round = session.manifests(needed)?;
        resolution.stats.merge(round.stats);
        fetched.extend(round.manifests);
    }
    let judge = |finding: &tagpin_formats::Finding, key: &TagKey, new: &tagpin_registry::Digest| {
        let old = finding.lookup().and_then(ImageReference::digest);
        crate::platforms::judge(key, old, new, &platforms(finding), &fetched)
    };
    let pull_policy = settings.latest == crate::config::LatestPolicy::PullPolicy;
    let mut plan = plan::plan_with(
        &collected.files,
        &resolution.digests,
        refresh,
        pull_policy,
        &judge,
    );
    if settings.details {
        let stats = add_details(
            &collected.files,
            &mut plan,
            &platforms,
            fetched,
            &mut session,
        )?;
        resolution.stats.merge(stats);
    }

    let sources = collected
        .files
        .iter()
        .map(|file| (file.display.clone(), file.path.clone()))
        .collect();
    let references = collected.files.iter().map(|f| f.findings.len()).sum();
    let mut files: Vec<Option<super::ScannedFile>> =
        collected.files.into_iter().map(Some).collect();
    let planned: Vec<PlannedFile> = plan
        .rewrites
        .drain(..)
        .map(|rewrite| {
            let file = files[rewrite.file].take().expect("one rewrite per file");
            PlannedFile {
                path: file.display,
                source: file.path,
                fingerprint: *file.fingerprint.expect("pin collects fingerprints"),
                edits: rewrite.edits,
                policies: rewrite.policies,
            }
        })
        .collect();
    drop(files);
    let planned = prove_charts(planned, &charts, &mut plan);
    let count = |change| plan.edits.iter().filter(|e| e.change == change).count();
    let summary = PinSummary {
        write: false,
        files: collected.files_scanned,
        references,
        pinned: count(Change::Pinned),
        refreshed: count(Change::Refreshed),
        unchanged: plan.unchanged,
        platforms_unchanged: plan.platforms_unchanged.len(),
        missing_platform: plan.missing_platform.len(),
        unresolved: plan.unresolved.len(),
        unsupported: plan.unsupported.len(),
        skipped: plan.skipped,
        warnings: plan.edits.iter().filter(|e| !e.warnings.is_empty()).count(),
        files_changed: planned.len(),
        files_written: 0,
        files_not_written: 0,
    };
    Ok(PinReport {
        edits: plan.edits,
        unresolved: plan.unresolved,
        unsupported: plan.unsupported,
        platforms_unchanged: plan.platforms_unchanged,
        missing_platform: plan.missing_platform,
        written: Vec::new(),
        not_written: Vec::new(),
        errors: collected.errors,
        skipped: collected.skipped,
        summary,
        stats: resolution.stats,
        diffs: Vec::new(),
        planned,
        sources,
    })
}

/// `--details`: reads when the images of each new digest were built (`crate::details`), in
/// at most two rounds of manifest fetches after those of the platform rules, and records it
/// in each edit. What cannot be read is only left out. Returns what the fetches cost.
fn add_details(
    files: &[super::ScannedFile],
    plan: &mut plan::Plan,
    platforms: &dyn Fn(&tagpin_formats::Finding) -> Vec<tagpin_registry::Platform>,
    mut fetched: crate::platforms::Fetched,
    session: &mut resolve::Session<'_>,
) -> anyhow::Result<Stats> {
    use crate::details::{Target, built, needed};
    // Each edit's finding, by where it is: the edit records keep no reference to it.
    let findings: BTreeMap<(&str, usize, usize), &tagpin_formats::Finding> = files
        .iter()
        .flat_map(|file| {
            file.findings.iter().map(|finding| {
                (
                    (file.display.as_str(), finding.line, finding.column),
                    finding,
                )
            })
        })
        .collect();
    let mut targets = Vec::new();
    for (index, edit) in plan.edits.iter().enumerate() {
        let Some(finding) = findings.get(&(edit.path.as_str(), edit.line, edit.column)) else {
            continue;
        };
        let (Some(reference), Ok(new)) = (
            finding.lookup(),
            tagpin_reference::Digest::parse(&edit.new_digest),
        ) else {
            continue;
        };
        let target = Target {
            key: reference.tag_key(),
            old: reference.digest().cloned(),
            new,
            configured: platforms(finding),
        };
        targets.push((index, target));
    }
    let mut stats = Stats::default();
    loop {
        let wanted: Vec<_> = targets
            .iter()
            .flat_map(|(_, target)| needed(target, &fetched))
            .collect();
        if wanted.is_empty() {
            break;
        }
        let round = session.manifests(wanted)?;
        stats.merge(round.stats);
        fetched.extend(round.manifests);
    }
    for (index, target) in &targets {
        plan.edits[*index].built = Some(built(target, &fetched));
    }
    Ok(stats)
}

/// Keeps the planned values files whose chart, rendered with the edits, proves them (see
/// `crate::charts`). When a file's edits fail together, each is proven alone, and those that
/// pass alone are kept if they also pass together: one value the chart also uses elsewhere
/// (a tag passed in an argument) must not keep the others from being pinned, nor lend them
/// its reason. An edit that fails is moved to `unsupported`, with why.
fn prove_charts(
    planned: Vec<PlannedFile>,
    charts: &crate::charts::Charts,
    plan: &mut plan::Plan,
) -> Vec<PlannedFile> {
    planned
        .into_iter()
        .filter_map(|mut file| {
            let Some(values) = charts.get(&file.path) else {
                return Some(file);
            };
            let prove_all = |file: &PlannedFile, edits: &[EditRecord]| {
                values
                    .iter()
                    .try_for_each(|values| prove_file(file, values, edits))
            };
            let mut proof = prove_all(&file, &plan.edits);
            if proof.is_err() && !file.policies.is_empty() {
                // The chart may not pass the pull policy to the container it pins: the digests
                // alone may still be proven.
                file.policies.clear();
                for record in plan.edits.iter_mut().filter(|e| e.path == file.path) {
                    record.pull_policy_added = false;
                }
                proof = prove_all(&file, &plan.edits);
            }
            let Err(reason) = proof else {
                return Some(file);
            };
            let indexes: Vec<usize> = (0..plan.edits.len())
                .filter(|&i| plan.edits[i].path == file.path)
                .collect();
            let records: Vec<EditRecord> = indexes.iter().map(|&i| plan.edits[i].clone()).collect();
            // Each edit alone, then those that pass alone together.
            let mut verdicts: Vec<Result<(), String>> =
                if records.len() > 1 && records.len() == file.edits.len() {
                    (0..records.len())
                        .map(|i| prove_all(&file.only(&[i]), &records[i..=i]))
                        .collect()
                } else {
                    vec![Err(reason.clone()); records.len()]
                };
            let passed: Vec<usize> = (0..records.len())
                .filter(|&i| verdicts[i].is_ok())
                .collect();
            let together: Vec<EditRecord> = passed.iter().map(|&i| records[i].clone()).collect();
            let narrowed = file.only(&passed);
            if !passed.is_empty() && prove_all(&narrowed, &together).is_err() {
                for &i in &passed {
                    verdicts[i] = Err(reason.clone());
                }
            }
            let mut refused = Vec::new();
            for ((index, record), verdict) in indexes.iter().zip(records).zip(verdicts) {
                if let Err(reason) = verdict {
                    refused.push(*index);
                    plan.unsupported.push(Unsupported {
                        path: record.path,
                        line: record.line,
                        column: record.column,
                        text: record.text,
                        reason: format!("not written: the chart does not prove the edit: {reason}"),
                    });
                }
            }
            let mut index = 0;
            plan.edits.retain(|_| {
                index += 1;
                !refused.contains(&(index - 1))
            });
            (!passed.is_empty() && refused.len() < indexes.len()).then_some(narrowed)
        })
        .collect()
}

/// Renders `file`'s chart with its edits, `records` saying what each pins.
fn prove_file(
    file: &PlannedFile,
    values: &crate::charts::ChartValues,
    records: &[EditRecord],
) -> Result<(), String> {
    let (_, new_text) = file.rewrite()?;
    let records: Vec<&EditRecord> = records.iter().filter(|e| e.path == file.path).collect();
    let digests = records
        .iter()
        .map(|record| tagpin_reference::Digest::parse(&record.new_digest))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| error.to_string())?;
    let pinned: Vec<_> = records
        .iter()
        .zip(&digests)
        .map(|(record, digest)| crate::charts::PinnedImage {
            line: record.line,
            column: record.column,
            name: &record.image,
            tag: &record.tag,
            digest,
            pull_policy: record.pull_policy_added,
        })
        .collect();
    values.prove(&new_text, &pinned)
}
