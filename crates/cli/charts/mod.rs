//! Chart-aware values: a values file in a chart is decided by rendering the chart, and its
//! edits are written only when a rendering with them proves they change nothing but the
//! images they pin (`tagpin_formats::chart` has the decision table).
//!
//! A values file is one named `values*.yaml` (or `*values*.yml`, or any YAML in a chart's
//! `ci/` directory, chart-testing's values). Its chart is the nearest directory above it with a
//! `Chart.yaml` (a vendored subchart's values belong to the subchart). Without a chart, without
//! Helm, or when the chart does not render, no rendering proves an edit of a split map: by
//! default it is reported with the reason and not written (`unproven_values: key-names` writes
//! it by its key names). Strings written whole are pinned as for any YAML.

mod decide;
mod dependencies;
mod embedded;
mod helm;
mod parents;
mod renderer;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use tagpin_formats::chart::{self, Expected, Rendered};
use tagpin_formats::{EditSite, Finding};

use decide::render_and_decide;
pub use helm::Helm;
use renderer::Renderer;

use crate::commands::ScannedFile;
use crate::config::UnprovenValues;
use crate::settings::Settings;
use crate::template_scans::TemplateScans;

/// What the proof of a file's chart values needs, by the file's shown path: one entry for a
/// values file, one for each resource's values whose chart is in the repository.
pub type Charts = BTreeMap<String, Vec<ChartValues>>;

/// A values file decided by rendering its chart.
#[derive(Debug)]
pub struct ChartValues {
    renderer: Renderer,
    /// The settings of `enabled` flags the maps were decided in, each to be proven in.
    sets: Vec<FlagSet<(usize, usize)>>,
    /// `(line, column)` of the findings whose chart drops the tag when a digest is set.
    drops_tag: BTreeSet<(usize, usize)>,
    /// The file and the index among its embedded values, when a resource holds them.
    embedded: Option<(PathBuf, usize)>,
    /// The values are the chart's own values.yaml (not an overlay, not embedded).
    own_values: bool,
}

/// One setting of `enabled` flags, and what its proof needs.
#[derive(Debug)]
struct FlagSet<At> {
    /// The overrides of the original rendering (the flags turned on).
    flags: serde_json::Value,
    original: Rendered,
    /// The original values rendered a second time: what differs is the chart's randomness.
    again: Rendered,
    /// The candidates whose lines tagpin's own reading could not evaluate in the original
    /// rendering (by index in the reading's plan).
    failed: BTreeSet<usize>,
    /// The maps decided in this setting (their findings' `(line, column)` once applied).
    decided: BTreeSet<At>,
}

/// Whether the chart reading decides `file` (a values file, or a resource with chart values
/// whose split maps the key-name rules could not prove).
pub fn decides(file: &ScannedFile) -> bool {
    // Every values file of a chart is the chart's to decide: a string under an image key may
    // have more written after it (`{{ .image }}:{{ .imageTag }}`), and a map under a key that
    // does not say image (`redis: {repository, tag}`) is found only by reading the file as
    // the chart's values.
    decides_findings(&file.path, &file.findings)
}

/// [`decides`], for a file at `path` with `findings`.
pub fn decides_findings(path: &Path, findings: &[Finding]) -> bool {
    is_values_file(path) || findings.iter().any(|f| f.unproven().is_some())
}

/// What reads a chart: Helm, when it is there, and without it tagpin's own reading, which
/// leaves its scans of the templates it reads for the walker.
#[derive(Clone, Copy, Debug)]
pub struct Readers<'a> {
    pub helm: Option<&'a Helm>,
    pub templates: &'a TemplateScans,
}

/// Decides `file`, whose text as scanned is `text`, by rendering its chart (see [`decides`]),
/// from the walker's thread that scanned it. `values` is what the scan read of a values file.
/// With `prove` (`pin`), also renders what the proof of the edits needs, and returns it.
pub fn learn(
    file: &mut ScannedFile,
    text: &str,
    values: Option<chart::ValuesFile>,
    readers: Readers<'_>,
    settings: &Settings,
    prove: bool,
) -> Vec<ChartValues> {
    let learnt = if is_values_file(&file.path) {
        learn_file(file, text, values, readers, settings, prove)
            .into_iter()
            .collect()
    } else {
        embedded::learn(file, text, readers, prove)
    };
    // Only the proof needs what was learnt: `scan` and `check` keep nothing.
    if prove { learnt } else { Vec::new() }
}

/// What is left once every file is decided: split maps no chart proves are left unwritten
/// (`unproven_values: report`), and a `pullPolicy` is set only where a rendering proves what
/// it feeds.
pub fn finish(files: &mut [ScannedFile], charts: &Charts, settings: &Settings) {
    for file in files.iter_mut() {
        if settings.unproven_values == UnprovenValues::Report {
            leave_unproven(&mut file.findings);
        }
        if !charts.contains_key(&file.display) {
            forget_split_pull_policies(&mut file.findings);
        }
    }
}

/// Drops the `pullPolicy` edits of the split maps in `findings`.
fn forget_split_pull_policies(findings: &mut [Finding]) {
    for finding in findings.iter_mut().filter(|f| is_split(&f.site)) {
        if let Some(extras) = finding.extras.as_deref_mut() {
            extras.pull_policy = None;
        }
    }
}

/// Decides one values file, or leaves its split maps unproven with the reason.
fn learn_file(
    file: &mut ScannedFile,
    text: &str,
    values: Option<chart::ValuesFile>,
    readers: Readers<'_>,
    settings: &Settings,
    prove: bool,
) -> Option<ChartValues> {
    let unproven = |file: &mut ScannedFile, reason: &str| {
        if settings.unproven_values == UnprovenValues::Report {
            leave_split_maps(&mut file.findings, reason);
        }
    };
    let Some(chart) = chart_root(&file.path) else {
        let reason = "not proven: the chart these values are for is not in this repository, \
                      so how its templates use the map is unknown";
        let images = match values {
            Some(mut values) => values.images().ok(),
            None => chart::values_images(&file.path, text).ok(),
        };
        if let Some(images) = images {
            report_unrendered(file, text, &images, reason);
        }
        unproven(file, reason);
        return None;
    };
    let own_values = is_own_values(&file.path, &chart);
    let parsed = match values {
        Some(values) => Ok(values),
        None => chart::ValuesFile::read(&file.path, text).map_err(|e| e.to_string()),
    };
    let source = parsed.and_then(|mut parsed| {
        let images = if own_values {
            parsed.images()
        } else {
            // An overlay that sets only a map's tag decides its image too.
            let base_path = chart.join("values.yaml");
            let base = std::fs::read_to_string(&base_path).unwrap_or_default();
            parsed.overlay_images(&base_path, &base)
        }
        .map_err(|e| e.to_string())?;
        Ok(Source {
            text,
            images,
            // The chart's own values.yaml Helm reads anyway; another is given to it.
            values: (!own_values)
                .then(|| file.path.clone())
                .into_iter()
                .collect(),
            within: 0..usize::MAX,
            embedded: None,
            own_values: own_values.then_some(parsed),
            templates: readers.templates,
        })
    });
    if source
        .as_ref()
        .is_ok_and(|source| source.images.candidates.is_empty())
    {
        return None;
    }
    let overridden = match &source {
        Ok(source) if own_values => {
            let mut overridden = parents::overridden(&chart, &source.images);
            overridden.extend(parents::overlaid(&chart, &source.images));
            overridden
        }
        _ => Vec::new(),
    };
    let learnt = match source {
        Ok(source) => match learn_chart(file, &chart, &source, readers.helm, prove) {
            Ok(values) => Some(values),
            Err(reason) => {
                // The maps only the chart would show as images (`hooks.curl: {registry,
                // image, tag}`) are reported all the same, as for a chart not at hand.
                report_unrendered(file, text, &source.images, &reason);
                unproven(file, &reason);
                None
            }
        },
        Err(reason) => {
            unproven(file, &reason);
            None
        }
    };
    leave_overridden(&mut file.findings, overridden);
    learnt
}

/// Leaves unwritten the findings of a subchart's defaults that a parent chart overrides (see
/// [`parents::overridden`]), with the reason.
fn leave_overridden(findings: &mut [Finding], overridden: Vec<(std::ops::Range<usize>, String)>) {
    for (span, reason) in overridden {
        let writable = findings
            .iter_mut()
            .filter(|f| f.span == span && !matches!(f.site, EditSite::Unsupported { .. }));
        for finding in writable {
            finding.site = EditSite::Unsupported {
                reason: reason.clone(),
            };
        }
    }
}

/// Values to decide by rendering a chart with them.
struct Source<'a> {
    /// The file's text.
    text: &'a str,
    /// Their candidates, spans in the file.
    images: chart::ValuesImages,
    /// The values files to render with, besides the chart's own values.yaml.
    values: Vec<PathBuf>,
    /// Where they are in the file.
    within: std::ops::Range<usize>,
    /// Their index among the file's embedded values, when a resource holds them.
    embedded: Option<usize>,
    /// The chart's own values.yaml, when these are they, read already.
    own_values: Option<chart::ValuesFile<'a>>,
    /// Where the static reading leaves its scans of the templates it reads, for the walker.
    templates: &'a TemplateScans,
}

/// Decides `source` by rendering `chart` with Helm or, without Helm or when Helm cannot
/// render it, by tagpin's own reading of the templates. The error is why neither proves it.
fn learn_chart(
    file: &mut ScannedFile,
    chart: &Path,
    source: &Source<'_>,
    helm: Option<&Helm>,
    prove: bool,
) -> Result<ChartValues, String> {
    let helm_failed = match helm {
        Some(helm) => match render_and_decide(file, chart, source, Some(helm), None, prove) {
            Ok(values) => return Ok(values),
            Err(reason) => Some(reason),
        },
        None => None,
    };
    render_and_decide(file, chart, source, None, helm_failed.as_deref(), prove).map_err(|reason| {
        match helm_failed {
            Some(helm) => format!("not proven: with Helm {helm}; without Helm, {reason}"),
            None => format!("not proven: {reason}"),
        }
    })
}

/// One edit of a values file, as the proof needs it.
pub struct PinnedImage<'a> {
    pub line: usize,
    pub column: usize,
    /// The name and tag the chart renders (as the lookup was made).
    pub name: &'a str,
    pub tag: &'a str,
    pub digest: &'a tagpin_reference::Digest,
    /// Its map's `pullPolicy` was set to `IfNotPresent` too.
    pub pull_policy: bool,
}

impl ChartValues {
    /// Renders the chart with the edited values `new_text` and checks that it differs from
    /// the original rendering only in `pinned`. The error says why not.
    pub fn prove(&self, new_text: &str, pinned: &[PinnedImage<'_>]) -> Result<(), String> {
        let dir = tempfile::tempdir()
            .map_err(|error| format!("cannot create a temporary directory: {error}"))?;
        let edited = dir.path().join("values.yaml");
        let lifted;
        let new_values = match &self.embedded {
            None => new_text,
            Some((path, index)) => {
                lifted = embedded::values_at(path, new_text, *index)?;
                lifted.as_str()
            }
        };
        if !self.own_values {
            std::fs::write(&edited, new_values)
                .map_err(|error| format!("cannot write the edited values: {error}"))?;
        }
        for set in &self.sets {
            // The edited copy replaces the overlay, or the chart's own values.yaml.
            let output = if self.own_values {
                self.renderer.render_own_values(new_values, &set.flags)
            } else {
                self.renderer.render(&[edited.as_path()], &set.flags)
            }
            .map_err(|error| format!("the chart does not render with the digests ({error})"))?;
            // A line tagpin's own reading evaluated with the original values and cannot with
            // the edited ones is where Helm fails or renders otherwise (a `semverCompare` of a
            // tag that now holds a digest).
            if let Some((_, reason)) = output.blocked.iter().find(|(i, _)| !set.failed.contains(i))
            {
                return Err(format!(
                    "the chart does not render with the digests ({})",
                    reason
                        .strip_prefix("not proven: without Helm, ")
                        .unwrap_or(reason)
                ));
            }
            let after = Rendered::parse(&output.text);
            let expected: Vec<Expected> = pinned
                .iter()
                .map(|image| {
                    let at = (image.line, image.column);
                    Expected {
                        name: image.name.to_owned(),
                        tag: (!self.drops_tag.contains(&at)).then(|| image.tag.to_owned()),
                        digest: image.digest.clone(),
                        required: set.decided.contains(&at),
                        pull_policy: image.pull_policy,
                    }
                })
                .collect();
            chart::prove(&set.original, &set.again, &after, &expected)?;
        }
        Ok(())
    }
}

/// Whether `path` is named as a values file.
pub fn is_values_file(path: &Path) -> bool {
    // Every file walked and every template read is asked this: its path is taken apart once.
    let Some((parent, name)) = tagpin_formats::parent_and_name(path) else {
        return false;
    };
    // `Path::extension` of the name: after the last `.`, unless only the name's leading dot
    // precedes it.
    let extension = name
        .rsplit_once('.')
        .filter(|(stem, _)| !stem.is_empty())
        .map(|(_, ext)| ext);
    let yaml = extension
        .is_some_and(|ext| ext.eq_ignore_ascii_case("yaml") || ext.eq_ignore_ascii_case("yml"));
    // Asked only of YAML files not named for values.
    let in_ci = || {
        parent
            .and_then(tagpin_formats::parent_and_name)
            .is_some_and(|(_, dir)| dir == "ci")
            && path
                .parent()
                .and_then(Path::parent)
                .is_some_and(|chart| chart.join("Chart.yaml").is_file())
    };
    yaml && (memchr::memmem::find(name.as_bytes(), b"values").is_some() || in_ci())
}

/// Whether the file at `path` with `text` is a values file that may hold a split map, or an
/// overlay's part of one (it has a `repository`, `tag` or `digest` key somewhere).
pub fn may_hold_images(path: &Path, text: &str) -> bool {
    is_values_file(path)
        && [&b"repository"[..], b"tag", b"digest"]
            .iter()
            .any(|key| memchr::memmem::find(text.as_bytes(), key).is_some())
}

fn is_split(site: &EditSite) -> bool {
    matches!(
        site,
        EditSite::SplitTag { .. } | EditSite::SplitDigest { .. } | EditSite::InsertKey { .. }
    )
}

/// Makes the split maps the scanner could not tie to a chart (a `HelmRelease`'s values)
/// unwritable, with the scanner's reason.
fn leave_unproven(findings: &mut [Finding]) {
    for finding in findings.iter_mut() {
        let Some(reason) = finding.unproven() else {
            continue;
        };
        if !matches!(finding.site, EditSite::Unsupported { .. }) {
            finding.site = EditSite::Unsupported {
                reason: reason.to_owned(),
            };
        }
        unknown_tag_floats(finding);
    }
}

/// Reports the split maps of `images` that the key-name rules did not (`redis: {repository,
/// tag}`), for a chart that cannot be rendered: unwritable, with `reason`.
fn report_unrendered(
    file: &mut ScannedFile,
    text: &str,
    images: &chart::ValuesImages,
    reason: &str,
) {
    let mut found = chart::unrendered_findings(text, images, &file.findings);
    if found.is_empty() {
        return;
    }
    for finding in &mut found {
        finding.site = EditSite::Unsupported {
            reason: reason.to_owned(),
        };
    }
    file.findings.append(&mut found);
    file.findings.sort_by_key(|f| (f.span.start, f.span.end));
}

/// Makes every split map in `findings` unwritable, with `reason`.
fn leave_split_maps(findings: &mut [Finding], reason: &str) {
    for finding in findings
        .iter_mut()
        .filter(|finding| is_split(&finding.site))
    {
        finding.site = EditSite::Unsupported {
            reason: reason.to_owned(),
        };
        unknown_tag_floats(finding);
    }
}

/// A split map left unwritable whose tag tagpin could not learn (empty, the chart's to fill
/// in) is still an image without a digest: it counts as floating, so `check` reports it with
/// the reason, instead of passing it over as templated. A name written with template actions
/// (a value a chart passes through `tpl`) stays templated.
fn unknown_tag_floats(finding: &mut Finding) {
    if finding.status == tagpin_formats::Status::Templated
        && !finding.text.contains("{{")
        && matches!(finding.site, EditSite::Unsupported { .. })
    {
        finding.status = tagpin_formats::Status::Floating;
    }
}

/// The nearest directory above `path` with a `Chart.yaml`, not past a repository's root.
fn chart_root(path: &Path) -> Option<PathBuf> {
    let absolute = std::path::absolute(path).ok()?;
    for dir in absolute.ancestors().skip(1) {
        if dir.join("Chart.yaml").is_file() {
            return Some(dir.to_owned());
        }
        if dir.join(".git").exists() {
            break;
        }
    }
    None
}

/// Whether `path` is the `values.yaml` of `chart` (as [`chart_root`] gives it: absolute). A
/// path as walked is often relative (`tagpin scan .`): compared as given, the chart's own
/// values were read as an overlay of themselves, three times over.
fn is_own_values(path: &Path, chart: &Path) -> bool {
    path.file_name().is_some_and(|name| name == "values.yaml")
        && std::path::absolute(path).is_ok_and(|absolute| absolute.parent() == Some(chart))
}

/// The chart's `appVersion`, read from the top-level key of its `Chart.yaml`.
fn app_version(chart: &Path) -> Option<String> {
    app_version_in(&std::fs::read_to_string(chart.join("Chart.yaml")).ok()?)
}

/// The `appVersion` of a chart whose `Chart.yaml` holds `text`.
fn app_version_in(text: &str) -> Option<String> {
    let line = text
        .lines()
        .find_map(|line| line.strip_prefix("appVersion:"))?;
    let value = line.split(" #").next()?.trim();
    let value = value.trim_matches(|c| c == '"' || c == '\'');
    (!value.is_empty()).then(|| value.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_files_are_known_by_name() {
        for (path, expected) in [
            ("chart/values.yaml", true),
            ("chart/values-prod.yml", true),
            ("env/prod.values.yaml", true),
            ("chart/templates/deployment.yaml", false),
            ("chart/Chart.yaml", false),
            ("values.json", false),
            // As `Path::extension` reads a name: a leading dot alone is no extension.
            ("chart/.yaml", false),
            ("chart/.values.yaml", true),
            ("chart/values.", false),
            ("chart/values..YML", true),
            ("chart/values.yaml.bak", false),
        ] {
            assert_eq!(is_values_file(Path::new(path)), expected, "{path}");
        }
    }

    #[test]
    fn a_chart_s_own_values_are_known_by_a_relative_path_too() {
        // Below the working directory, to have a relative path to it.
        let cwd = std::env::current_dir().unwrap();
        let dir = tempfile::tempdir_in(&cwd).unwrap();
        let chart = dir.path().join("chart");
        std::fs::create_dir_all(chart.join("ci")).unwrap();
        std::fs::write(chart.join("Chart.yaml"), "name: c\n").unwrap();
        let relative = chart.strip_prefix(&cwd).unwrap();
        assert!(relative.is_relative());
        let values = relative.join("values.yaml");
        let found = chart_root(&values).unwrap();
        assert!(is_own_values(&values, &found));
        assert!(is_own_values(&relative.join("./values.yaml"), &found));
        assert!(!is_own_values(&relative.join("ci/values.yaml"), &found));
    }

    #[test]
    fn the_chart_is_the_nearest_directory_with_a_chart_yaml() {
        let dir = tempfile::tempdir().unwrap();
        let umbrella = dir.path().join("umbrella");
        let sub = umbrella.join("charts/sub");
        std::fs::create_dir_all(sub.join("ci")).unwrap();
        std::fs::write(
            umbrella.join("Chart.yaml"),
            "name: umbrella\nappVersion: \"1.2.3\" # x\n",
        )
        .unwrap();
        std::fs::write(sub.join("Chart.yaml"), "name: sub\n").unwrap();
        assert_eq!(
            chart_root(&umbrella.join("values.yaml")),
            Some(umbrella.clone())
        );
        assert_eq!(chart_root(&sub.join("values.yaml")), Some(sub.clone()));
        assert_eq!(
            chart_root(&sub.join("ci/test-values.yaml")),
            Some(sub.clone())
        );
        assert!(is_values_file(&sub.join("ci/test.yaml")));
        assert_eq!(chart_root(&dir.path().join("values.yaml")), None);
        assert!(is_own_values(&umbrella.join("values.yaml"), &umbrella));
        assert!(!is_own_values(
            &umbrella.join("values-prod.yaml"),
            &umbrella
        ));
        assert!(!is_own_values(&sub.join("values.yaml"), &umbrella));
        assert_eq!(app_version(&umbrella).as_deref(), Some("1.2.3"));
        assert_eq!(app_version(&sub), None);
        // The static reading takes it from the text it read for the chart's metadata.
        for chart in [&umbrella, &sub] {
            let read =
                renderer::StaticChart::read(chart, &[], &[], None, &[], &TemplateScans::new(false))
                    .unwrap();
            assert_eq!(read.app_version(), app_version(chart).as_deref());
        }
    }
}
