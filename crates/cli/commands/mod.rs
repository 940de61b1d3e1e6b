//! The commands. Each takes its arguments and the settings and returns data; printing is the
//! printer's job (`crate::printer`), exit codes are `main`'s.

pub mod check;
pub mod pin;
pub mod pr;
pub mod scan;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::Serialize;
use tagpin_formats::{FileKind, Finding};

use crate::read::{self, Contents};
use crate::settings::Settings;
use crate::template_scans::TemplateScans;
use crate::walk::{self, Candidate, Visit};

/// A file that was read and scanned, with its findings (the config's `ignore` applied).
#[derive(Debug)]
pub struct ScannedFile {
    /// Where it was read from.
    pub path: PathBuf,
    /// How it is shown: relative to the PATH given (see `walk::DisplayPaths`).
    pub display: String,
    pub findings: Vec<Finding>,
    /// The SHA-256 of the text that was scanned, when [`collect`] was asked for it: `pin`
    /// reads the file again to edit it and checks it still holds that text. The text itself
    /// is not kept: a run holds one file's text at a time.
    /// Boxed: `scan` holds one `ScannedFile` per file with findings, and has none to hold.
    pub fingerprint: Option<Box<Fingerprint>>,
    /// Which file it is on disk (device and inode), to read a file reached twice once.
    pub(crate) identity: Option<Identity>,
    /// A chart's values file that may hold image maps the key-name rules do not see: kept,
    /// even without findings, for the chart to decide (`crate::charts`).
    chart_values: bool,
}

/// The SHA-256 of a file's text.
pub type Fingerprint = [u8; 32];

/// The fingerprint of `text`.
pub fn fingerprint(text: &str) -> Fingerprint {
    use sha2::Digest as _;
    sha2::Sha256::digest(text.as_bytes()).into()
}

/// What [`collect`] keeps of each file besides its findings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    Findings,
    /// The findings and the fingerprint of the text of files with findings.
    Fingerprint,
}

/// A file that could not be read or parsed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FileError {
    pub path: String,
    pub message: String,
}

/// A file that was not scanned, and not because of an error: an empty file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Skipped {
    pub path: String,
    pub reason: String,
}

/// Everything found under the PATHs given, sorted by path.
#[derive(Debug, Default)]
pub struct Collected {
    /// Files with at least one finding (files without any are only counted).
    pub files: Vec<ScannedFile>,
    /// How many files were scanned.
    pub files_scanned: usize,
    pub errors: Vec<FileError>,
    pub skipped: Vec<Skipped>,
    /// The values files decided by rendering their charts, for the proof of their edits.
    pub charts: crate::charts::Charts,
}

/// Every PATH must exist: a missing one is a usage error (a typo), not a finding.
pub fn check_paths(paths: &[PathBuf]) -> anyhow::Result<()> {
    for path in paths {
        if let Err(error) = std::fs::symlink_metadata(path) {
            anyhow::bail!("cannot read PATH `{}`: {error}", path.display());
        }
    }
    Ok(())
}

/// How many findings a file may have for its vector to be shrunk to fit them.
const SHRUNK_UP_TO: usize = 4;

/// Walks `paths`, reads and scans every file tagpin knows, in parallel.
///
/// A file reached twice — through two PATHs that overlap (`tagpin pin charts .`) or through a
/// symbolic link to a file also walked — is kept once, under the first of its shown paths:
/// otherwise its references would count twice and `pin --write` would rewrite it twice (the
/// second write then finds it "changed on disk").
pub fn collect(paths: &[PathBuf], settings: &Settings, keep: Keep) -> Collected {
    let collected = Mutex::new(Collected::default());
    let helm = settings.helm.as_deref().and_then(crate::charts::Helm::find);
    let templates = TemplateScans::new(keep == Keep::Fingerprint);
    let scanning = Scanning {
        settings,
        keep,
        readers: crate::charts::Readers {
            helm: helm.as_ref(),
            templates: &templates,
        },
    };
    let suites = crate::test_suites::Suites::default();
    let compose_files = crate::compose_dockerfiles::ComposeFiles::default();
    let payloads = crate::release_payload::Payloads::default();
    walk::walk(paths, &settings.paths, &|visit| {
        let mut outcome = match visit {
            Visit::Marker(path) => return payloads.note(&path),
            Visit::File(candidate) => {
                suites.note(&candidate.path);
                compose_files.note(&candidate.path, candidate.kind);
                scan_file(candidate, &scanning)
            }
            Visit::Error { display, message } => Outcome::Error(FileError {
                path: display,
                message,
            }),
        };
        if let Outcome::Scanned(file, _) = &mut outcome
            && (!file.findings.is_empty() || file.chart_values)
        {
            // Asked before taking the lock: the other threads need not wait for it. Most files
            // know it from their reading.
            if file.identity.is_none() {
                file.identity = identity(&file.path);
            }
            // A scanner's vector grows in steps; a tree of small files would keep the slack
            // of each. A longer vector's slack is a smaller share, and shrinking it copies it
            // to fresh pages (2-3% of a scan of a chart monorepo).
            if file.findings.len() <= SHRUNK_UP_TO {
                file.findings.shrink_to_fit();
            }
        }
        let mut collected = collected.lock().expect("no panics while holding the lock");
        match outcome {
            Outcome::Scanned(file, learnt) => {
                collected.files_scanned += 1;
                if !learnt.is_empty() {
                    collected.charts.insert(file.display.clone(), learnt);
                }
                if !file.findings.is_empty() || file.chart_values {
                    collected.files.push(file);
                }
            }
            Outcome::Error(error) => collected.errors.push(error),
            Outcome::Skipped(skipped) => collected.skipped.push(skipped),
        }
    });
    let mut collected = collected
        .into_inner()
        .expect("no panics while holding the lock");
    suites.skip_their_files(&mut collected);
    collected.files.sort_by(|a, b| a.display.cmp(&b.display));
    let mut seen = HashSet::new();
    let before = collected.files.len();
    collected
        .files
        .retain(|file| file.identity.is_none_or(|id| seen.insert(id)));
    collected.files_scanned -= before - collected.files.len();
    let kept: HashSet<&str> = collected.files.iter().map(|f| f.display.as_str()).collect();
    collected
        .charts
        .retain(|display, _| kept.contains(display.as_str()));
    for file in &mut collected.files {
        file.findings
            .sort_by_key(|finding| (finding.line, finding.column));
    }
    collected
        .errors
        .sort_by(|a, b| (&a.path, &a.message).cmp(&(&b.path, &b.message)));
    collected.skipped.sort_by(|a, b| a.path.cmp(&b.path));
    crate::charts::finish(&mut collected.files, &collected.charts, settings);
    crate::dev_loops::mark_built(&mut collected.files);
    crate::compose_builds::mark_built(&mut collected.files);
    crate::compose_build_args::check(&mut collected.files);
    compose_files.mark(&mut collected.files);
    payloads.mark_placeholders(&mut collected.files);
    crate::kustomize_images::mark_replaced(&mut collected.files, paths);
    forget_pull_lints_of_local_images(&mut collected.files);
    collected.files.retain(|file| !file.findings.is_empty());
    collected
}

use crate::read::Identity;

/// The passes above make some images `local` (built by a dev loop or compose, replaced by
/// Kustomize): no registry is asked for them, so the lint about pulling `latest` from one, and
/// its `imagePullPolicy` edit, do not apply.
fn forget_pull_lints_of_local_images(files: &mut [ScannedFile]) {
    let local = files
        .iter_mut()
        .flat_map(|file| file.findings.iter_mut())
        .filter(|finding| finding.status == tagpin_formats::Status::Local);
    for finding in local {
        finding
            .warnings
            .retain(|warning| *warning != tagpin_formats::Warning::LatestPullsAlways);
        if let Some(extras) = finding.extras.as_deref_mut() {
            extras.pull_policy = None;
        }
    }
}

/// Which file `path` is on disk, links followed: its device and inode.
#[cfg(unix)]
pub(crate) fn identity(path: &Path) -> Option<Identity> {
    use std::os::unix::fs::MetadataExt as _;
    let metadata = std::fs::metadata(path).ok()?;
    Some((metadata.dev(), metadata.ino()))
}

/// Which file `path` is on disk: a hash of its canonical path.
#[cfg(not(unix))]
pub(crate) fn identity(path: &Path) -> Option<Identity> {
    use std::hash::{Hash as _, Hasher as _};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    std::fs::canonicalize(path).ok()?.hash(&mut hasher);
    Some(hasher.finish())
}

enum Outcome {
    /// A file scanned, and what the proof of its chart values needs.
    Scanned(ScannedFile, Vec<crate::charts::ChartValues>),
    Error(FileError),
    Skipped(Skipped),
}

thread_local! {
    /// Each walker thread reads every file into the same buffer.
    static BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// What every file is scanned with.
struct Scanning<'a> {
    settings: &'a Settings,
    keep: Keep,
    /// What charts are read with: Helm, when it is there, and where the chart reading leaves
    /// the templates it has scanned.
    readers: crate::charts::Readers<'a>,
}

fn scan_file(candidate: Candidate, scanning: &Scanning<'_>) -> Outcome {
    match scanned_already(candidate, scanning) {
        Ok(outcome) => outcome,
        Err(candidate) => {
            BUFFER.with_borrow_mut(|buffer| scan_file_with(candidate, scanning, buffer))
        }
    }
}

/// The outcome of a template the chart reading has scanned already (`crate::template_scans`),
/// as [`scan_file_with`] would give it; the candidate back when there is no such scan or its
/// findings need the text (a chart reading of their own).
fn scanned_already(candidate: Candidate, scanning: &Scanning<'_>) -> Result<Outcome, Candidate> {
    if candidate.kind != FileKind::HelmTemplate || !candidate.patterns.is_empty() {
        return Err(candidate);
    }
    let Some(scan) = scanning.readers.templates.take(&candidate.absolute) else {
        return Err(candidate);
    };
    if is_chart_test(&candidate.absolute) {
        return Err(candidate);
    }
    let mut findings = scan.findings;
    scanning.settings.ignore.apply(&mut findings);
    if crate::charts::decides_findings(&candidate.path, &findings) {
        return Err(candidate);
    }
    Ok(Outcome::Scanned(
        ScannedFile {
            path: candidate.path,
            display: candidate.display,
            findings,
            fingerprint: scan.fingerprint,
            identity: scan.identity,
            chart_values: false,
        },
        Vec::new(),
    ))
}

fn scan_file_with(candidate: Candidate, scanning: &Scanning<'_>, buffer: &mut Vec<u8>) -> Outcome {
    let Scanning { settings, keep, .. } = *scanning;
    let Candidate {
        path,
        absolute: rules_path,
        display,
        kind,
        patterns,
    } = candidate;
    let (text, opened) = match read::read_open(&path, buffer) {
        Ok((Contents::Text(text), opened)) => (text, opened),
        Ok((Contents::Empty, _)) => {
            return Outcome::Skipped(Skipped {
                path: display,
                reason: "empty file".to_owned(),
            });
        }
        Err(error) => {
            return Outcome::Error(FileError {
                path: display,
                message: error.to_string(),
            });
        }
    };
    if kind != FileKind::Custom && is_chart_test(&rules_path) {
        return Outcome::Skipped(Skipped {
            path: display,
            reason: "a helm-unittest test: its values are the test's expectations".to_owned(),
        });
    }
    let chart_values = crate::charts::may_hold_images(&rules_path, text);
    let mut values = None;
    let mut scanned = if kind == FileKind::Custom {
        Ok(tagpin_formats::scan_custom(text, &patterns))
    } else if kind == FileKind::Yaml && crate::charts::is_values_file(&rules_path) {
        // Read once, for the findings and for the chart's reading.
        tagpin_formats::scan_values(&rules_path, text).map(|(findings, read)| {
            values = read;
            findings
        })
    } else {
        tagpin_formats::scan(&rules_path, kind, text)
    };
    if scanned.is_err() && kind == FileKind::Yaml && in_chart_files(&rules_path, text) {
        // A file a chart's templates read with `.Files.Get` and `tpl`: a template, not YAML.
        scanned = tagpin_formats::scan(&rules_path, FileKind::HelmTemplate, text);
    }
    match scanned {
        Ok(mut findings) => {
            settings.ignore.apply(&mut findings);
            let kept = !findings.is_empty() || chart_values;
            let fingerprint =
                (keep == Keep::Fingerprint && kept).then(|| Box::new(fingerprint(text)));
            // Asked of the open file, and only of one `collect` keeps.
            let identity = kept.then(|| read::identity_of(&opened)).flatten();
            drop(opened);
            let mut file = ScannedFile {
                path,
                display,
                findings,
                fingerprint,
                identity,
                chart_values,
            };
            // Decided here, with the text at hand: a values file is kept (as `collect` keeps
            // it) with findings or with maps the key-name rules may not see.
            let learnt =
                if (!file.findings.is_empty() || chart_values) && crate::charts::decides(&file) {
                    crate::charts::learn(
                        &mut file,
                        text,
                        values,
                        scanning.readers,
                        settings,
                        keep == Keep::Fingerprint,
                    )
                } else {
                    Vec::new()
                };
            Outcome::Scanned(file, learnt)
        }
        Err(error) => Outcome::Error(FileError {
            path: display,
            message: describe_scan_error(&error, kind),
        }),
    }
}

/// Whether `path` is a helm-unittest suite: `tests/*_test.yaml` in a chart.
fn is_chart_test(path: &Path) -> bool {
    // Every file walked is asked this: its name first, by bytes, and only a test's name
    // takes its path apart further.
    let named = tagpin_formats::parent_and_name(path)
        .is_some_and(|(_, name)| name.ends_with("_test.yaml") || name.ends_with("_test.yml"));
    named
        && path
            .parent()
            .filter(|dir| dir.file_name().is_some_and(|n| n == "tests"))
            .and_then(Path::parent)
            .is_some_and(|chart| chart.join("Chart.yaml").is_file())
}

/// Whether `path` is a file with template actions somewhere inside a chart (not YAML until
/// the chart renders it).
fn in_chart_files(path: &Path, text: &str) -> bool {
    text.contains("{{")
        && path
            .ancestors()
            .skip(1)
            .take(8)
            .any(|dir| dir.join("Chart.yaml").is_file())
}

/// A scan error without the path, which the report shows beside it.
fn describe_scan_error(error: &tagpin_formats::Error, kind: FileKind) -> String {
    match error {
        tagpin_formats::Error::Syntax {
            line,
            column,
            message,
            ..
        } => format!(
            "cannot parse as {}: {line}:{column}: {message}",
            kind.name()
        ),
        tagpin_formats::Error::Limit {
            line,
            column,
            message,
            ..
        } => format!("cannot read as {}: {line}:{column}: {message}", kind.name()),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn settings(dir: &Path) -> Settings {
        use clap::Parser as _;
        let global = crate::args::Cli::try_parse_from(["tagpin", "scan"])
            .unwrap()
            .global;
        Settings::load(&global, &BTreeMap::new(), Some(dir)).unwrap()
    }

    fn candidate(dir: &Path, name: &str) -> Candidate {
        let path = dir.join(name);
        Candidate {
            absolute: path.clone(),
            display: name.to_owned(),
            kind: FileKind::detect(&path).unwrap(),
            patterns: Vec::new(),
            path,
        }
    }

    /// The walker takes the chart reading's scan of a template instead of reading the file: the
    /// file on disk is changed after the scan, and the findings are the scanned text's.
    #[test]
    fn a_template_the_chart_reading_scanned_is_not_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        std::fs::create_dir(dir.join("templates")).unwrap();
        let scanned = "spec:\n  containers:\n    - image: nginx:1.25\n";
        let on_disk = "spec:\n  containers:\n    - image: redis:7\n";
        std::fs::write(dir.join("templates/deployment.yaml"), on_disk).unwrap();
        let settings = settings(dir);
        let templates = TemplateScans::new(true);
        let scanning = Scanning {
            settings: &settings,
            keep: Keep::Fingerprint,
            readers: crate::charts::Readers {
                helm: None,
                templates: &templates,
            },
        };
        let template = candidate(dir, "templates/deployment.yaml");
        templates.offer(&template.absolute, scanned, None);
        let texts = |outcome: Outcome| match outcome {
            Outcome::Scanned(file, _) => {
                let texts: Vec<String> = file.findings.iter().map(|f| f.text.clone()).collect();
                (texts, file.fingerprint.map(|f| *f))
            }
            _ => panic!("not scanned"),
        };
        assert_eq!(
            texts(scan_file(template, &scanning)),
            (vec!["nginx:1.25".to_owned()], Some(fingerprint(scanned)))
        );
        // Visited: a second visit (another PATH reaching it) reads the file.
        let again = candidate(dir, "templates/deployment.yaml");
        assert_eq!(
            texts(scan_file(again, &scanning)),
            (vec!["redis:7".to_owned()], Some(fingerprint(on_disk)))
        );
    }
}
