//! Chart values inside a resource (a Flux `HelmRelease`'s `spec.values`, an Argo CD
//! `Application`'s `helm.valuesObject`) whose chart is a directory of this repository: a
//! `GitRepository` chart path, or an Application source `path`. Such values are decided and
//! proven like a values file, with the values lifted out of the resource as the values file to
//! render with (`tagpin_formats::chart::embedded_values`). Values for a chart from a chart
//! repository, or with more values than tagpin reads (`valuesFrom`, value files, parameters),
//! keep their split maps unproven, with the reason.
//!
//! The chart path is taken relative to the repository's root (the nearest directory above the
//! file with a `.git`), as Flux and Argo CD take it relative to the Git source's root; outside
//! a Git checkout, the nearest directory above the file where the path is a chart. A path that
//! leaves the root is not followed.

use std::path::{Path, PathBuf};

use tagpin_formats::Finding;
use tagpin_formats::chart::{self, ChartSource, EmbeddedValues};

use super::{ChartValues, Readers, Source, learn_chart};
use crate::commands::ScannedFile;

/// Decides the embedded values of `file` whose chart is in the repository, and gives the
/// others' split maps the reason they stay unproven.
pub(super) fn learn(
    file: &mut ScannedFile,
    text: &str,
    readers: Readers<'_>,
    prove: bool,
) -> Vec<ChartValues> {
    let embedded =
        chart::embedded_values(&file.path, text).map_err(|error| format!("not proven: {error}"));
    let embedded = match embedded {
        Ok(read) => read,
        Err(reason) => {
            set_reason(&mut file.findings, &(0..usize::MAX), &reason);
            return Vec::new();
        }
    };
    let mut learnt = Vec::new();
    for (index, values) in embedded.into_iter().enumerate() {
        let span = values.span.clone();
        let outcome = chart_of(&file.path, &values)
            .and_then(|chart| learn_one(file, &chart, text, values, index, readers, prove));
        match outcome {
            Ok(chart_values) => learnt.push(chart_values),
            Err(reason) => set_reason(&mut file.findings, &span, &reason),
        }
    }
    learnt
}

/// The chart directory `values` configure, or why it is not one tagpin can render.
fn chart_of(file: &Path, values: &EmbeddedValues) -> Result<PathBuf, String> {
    let kind = values.kind;
    let written = match &values.chart {
        ChartSource::Named(Some(chart)) => {
            return Err(format!(
                "not proven: chart `{chart}` is not in this repository, so how its templates \
                 use the map is unknown (`unproven_values: key-names` writes it by its key names)"
            ));
        }
        ChartSource::Named(None) => {
            return Err(format!(
                "not proven: this {kind} does not name its chart, so how its templates use \
                 the map is unknown"
            ));
        }
        ChartSource::Path(path) => path,
    };
    if let Some(more) = &values.more_values {
        return Err(format!("not proven: {more}"));
    }
    find_chart(file, written).ok_or_else(|| {
        format!(
            "not proven: chart path `{written}` is not a chart in this repository, so how its \
             templates use the map is unknown"
        )
    })
}

/// The directory `written` names, relative to the repository holding `file`.
fn find_chart(file: &Path, written: &str) -> Option<PathBuf> {
    let file = std::path::absolute(file).ok()?;
    let ancestors: Vec<&Path> = file.ancestors().skip(1).collect();
    let git_root = ancestors.iter().find(|dir| dir.join(".git").exists());
    let roots = match git_root {
        Some(root) => vec![*root],
        None => ancestors,
    };
    roots.into_iter().find_map(|root| {
        let chart = root.join(written).canonicalize().ok()?;
        let inside = chart.starts_with(root.canonicalize().ok()?);
        (inside && chart.join("Chart.yaml").is_file()).then_some(chart)
    })
}

fn learn_one(
    file: &mut ScannedFile,
    chart: &Path,
    text: &str,
    values: EmbeddedValues,
    index: usize,
    readers: Readers<'_>,
    prove: bool,
) -> Result<ChartValues, String> {
    let lifted_text = values.values.map_err(|why| format!("not proven: {why}"))?;
    let dir = tempfile::tempdir()
        .map_err(|error| format!("not proven: cannot create a temporary directory: {error}"))?;
    let lifted = dir.path().join("values.yaml");
    std::fs::write(&lifted, lifted_text)
        .map_err(|error| format!("not proven: cannot write the values to render: {error}"))?;
    let source = Source {
        text,
        images: values.images,
        values: vec![lifted],
        within: values.span,
        embedded: Some(index),
        own_values: None,
        templates: readers.templates,
    };
    learn_chart(file, chart, &source, readers.helm, prove)
}

/// The embedded values at `index` of the edited `text`, as a values file.
pub(super) fn values_at(path: &Path, text: &str, index: usize) -> Result<String, String> {
    let embedded = chart::embedded_values(path, text)
        .map_err(|error| format!("the edited file does not read: {error}"))?;
    embedded
        .into_iter()
        .nth(index)
        .ok_or_else(|| "the edited file lost a resource's values".to_owned())?
        .values
}

/// Gives the unproven split maps of `findings` inside `within` the reason `reason`.
fn set_reason(findings: &mut [Finding], within: &std::ops::Range<usize>, reason: &str) {
    for finding in findings
        .iter_mut()
        .filter(|f| within.start <= f.span.start && f.span.end <= within.end)
    {
        if let Some(extras) = finding
            .extras
            .as_deref_mut()
            .filter(|e| e.unproven.is_some())
        {
            extras.unproven = Some(reason.to_owned());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(chart: ChartSource, more_values: Option<&str>) -> EmbeddedValues {
        EmbeddedValues {
            kind: "HelmRelease",
            chart,
            more_values: more_values.map(str::to_owned),
            span: 0..0,
            values: Ok(String::new()),
            images: chart::ValuesImages::default(),
        }
    }

    #[test]
    fn the_chart_is_a_directory_of_the_repository_or_the_reason_says_why_not() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("charts/app")).unwrap();
        std::fs::write(root.join("charts/app/Chart.yaml"), "name: app\n").unwrap();
        std::fs::create_dir_all(dir.path().join("outside")).unwrap();
        std::fs::write(dir.path().join("outside/Chart.yaml"), "name: x\n").unwrap();
        let file = root.join("clusters/prod/release.yaml");
        let path = |p: &str| ChartSource::Path(p.to_owned());
        let chart = root.join("charts/app").canonicalize().unwrap();
        for written in ["./charts/app", "charts/app", "charts/app/"] {
            assert_eq!(
                chart_of(&file, &values(path(written), None)),
                Ok(chart.clone())
            );
        }
        for (source, more, reason) in [
            (
                path("../outside"),
                None,
                "chart path `../outside` is not a chart in this repository",
            ),
            (
                path("charts/none"),
                None,
                "chart path `charts/none` is not a chart",
            ),
            (
                ChartSource::Named(Some("redis 19.6.4".to_owned())),
                None,
                "chart `redis 19.6.4` is not in this repository",
            ),
            (
                ChartSource::Named(None),
                None,
                "this HelmRelease does not name its chart",
            ),
            (
                path("charts/app"),
                Some("its `valuesFrom` also gives"),
                "not proven: its `valuesFrom`",
            ),
        ] {
            let got = chart_of(&file, &values(source, more)).unwrap_err();
            assert!(
                got.starts_with("not proven: ") && got.contains(reason),
                "{got}"
            );
        }
    }
}
