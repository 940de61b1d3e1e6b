//! Chart values inside another resource: a Flux `HelmRelease`'s `spec.values`, an Argo CD
//! `Application`'s `spec.source.helm.valuesObject` (or `spec.sources[*].helm.valuesObject`),
//! and a Kustomization's `helmCharts[*].valuesInline`.
//!
//! Literal references there (`image: nginx:1.27`) are read and pinned like any other. A split
//! map there (`image: {repository, tag}`) configures the chart, and what a digest must look
//! like in it depends on how the chart's templates consume the map. The rules do not read the
//! chart, so such a map gets the edit site its key names give and the reason it is unproven.
//! [`values_of`] says where the chart is: the binary decides the map by rendering a chart that
//! is in the repository (`crate::chart::embedded_values`), and otherwise reports it and leaves
//! it unwritten unless the user opts in (`unproven_values: key-names`).

use super::walk::Chain;
use super::{At, Doc, Entry, Seg};

/// The resource a document is, when it holds chart values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ChartValues {
    kind: &'static str,
    /// The chart, as named (`redis 19.6.4`), when the resource says.
    chart: Option<String>,
}

impl ChartValues {
    /// Whether a mapping at `path` is inside the chart values.
    pub(crate) fn contains(&self, path: &[Seg<'_>]) -> bool {
        match self.kind {
            "HelmRelease" => matches!(path, [Seg::Key("spec"), Seg::Key("values"), ..]),
            "Kustomization" => matches!(
                path,
                [
                    Seg::Key("helmCharts"),
                    Seg::Item(_),
                    Seg::Key("valuesInline"),
                    ..
                ]
            ),
            _ => matches!(
                path,
                [
                    Seg::Key("spec"),
                    Seg::Key("source"),
                    Seg::Key("helm"),
                    Seg::Key("valuesObject"),
                    ..
                ] | [
                    Seg::Key("spec"),
                    Seg::Key("sources"),
                    Seg::Item(_),
                    Seg::Key("helm"),
                    Seg::Key("valuesObject"),
                    ..
                ]
            ),
        }
    }

    /// Why a split map in these values is not written.
    pub(crate) fn reason(&self) -> String {
        let chart = self.chart.as_ref().map_or_else(
            || "its chart".to_owned(),
            |chart| format!("chart `{chart}`"),
        );
        let article = if self.kind.starts_with('A') {
            "an"
        } else {
            "a"
        };
        format!(
            "a split map in {article} {}'s values configures {chart}, which tagpin does not \
             read here; the form of the digest (or whether a tag may carry one) depends on the \
             chart's templates, so it is not written (`unproven_values: key-names` writes it \
             by its key names)",
            self.kind
        )
    }
}

fn entries<'t>(doc: Doc<'t>, at: &At) -> Vec<Entry<'t>> {
    let mut entries = Vec::new();
    doc.entries_into(at, &mut entries);
    entries
}

fn get(doc: Doc<'_>, at: &At, key: &str) -> Option<At> {
    entries(doc, at)
        .into_iter()
        .find(|e| e.key == key)
        .map(|e| e.value)
}

fn scalar<'t>(doc: Doc<'t>, at: &At, key: &str) -> Option<&'t str> {
    Some(doc.scalar(&get(doc, at, key)?)?.value)
}

/// A document's root as the rules ask it: its `apiVersion` and `kind`, and the chart values
/// it holds. Read once per document, from one listing of the root's entries.
pub(crate) struct Root<'t> {
    pub(crate) api: Option<&'t str>,
    pub(crate) kind: Option<&'t str>,
    pub(crate) chart_values: Option<ChartValues>,
}

/// Who else sets a workload's images, as its document says (see [`controller`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Controller {
    /// Keel: `keel.sh/policy` among the labels or annotations.
    Keel,
    /// `OpenShift`'s image triggers: the `image.openshift.io/triggers` annotation (or label), or
    /// an `ImageChange` trigger among a `DeploymentConfig`'s `spec.triggers`.
    OpenShift,
    /// A Percona operator told to upgrade the images itself: `spec.upgradeOptions.apply` set
    /// to a version or `recommended`/`latest`, not `disabled` or `never` (the operator then
    /// writes its version service's images into the resource).
    Operator,
}

/// Which controller, if any, the document at `root` hands its images to: read in one pass
/// over the root's `metadata` and `spec` (asked once per document with an image), by key,
/// without listing the mappings' entries.
pub(crate) fn controller(doc: Doc<'_>, root: u32) -> Option<Controller> {
    let root = doc.at(root, &Chain::default());
    if let Some(metadata) = doc.value_of(&root, "metadata") {
        for marks in ["labels", "annotations"]
            .iter()
            .filter_map(|field| doc.value_of(&metadata, field))
        {
            if doc.value_of(&marks, "keel.sh/policy").is_some() {
                return Some(Controller::Keel);
            }
            if doc
                .value_of(&marks, "image.openshift.io/triggers")
                .is_some()
            {
                return Some(Controller::OpenShift);
            }
        }
    }
    let spec = doc.value_of(&root, "spec")?;
    let image_change = doc.value_of(&spec, "triggers").is_some_and(|triggers| {
        doc.items(&triggers).iter().any(|trigger| {
            doc.value_of(trigger, "type")
                .and_then(|kind| doc.scalar(&kind))
                .is_some_and(|kind| kind.value == "ImageChange")
        })
    });
    if image_change {
        return Some(Controller::OpenShift);
    }
    let apply = doc
        .value_of(&spec, "upgradeOptions")
        .and_then(|options| doc.value_of(&options, "apply"))
        .and_then(|apply| doc.scalar(&apply));
    apply
        .is_some_and(|apply| {
            let apply = apply.value.trim().to_ascii_lowercase();
            !apply.is_empty() && !matches!(apply.as_str(), "disabled" | "never")
        })
        .then_some(Controller::Operator)
}

/// Reads the root of the document at `root`.
pub(crate) fn read_root(doc: Doc<'_>, root: u32) -> Root<'_> {
    let root = doc.at(root, &Chain::default());
    if !doc.is_mapping(&root) {
        return Root {
            api: None,
            kind: None,
            chart_values: None,
        };
    }
    let entries = entries(doc, &root);
    let find = |key: &str| entries.iter().find(|e| e.key == key).map(|e| &e.value);
    let scalar_of = |key: &str| find(key).and_then(|at| doc.scalar(at)).map(|s| s.value);
    let (api, kind) = (scalar_of("apiVersion"), scalar_of("kind"));
    let chart_values = match find("helmCharts") {
        Some(charts) => helm_charts(doc, charts, kind),
        None => of_resource(doc, api, kind, find("spec")),
    };
    Root {
        api,
        kind,
        chart_values,
    }
}

/// What a resource is, when it is a `HelmRelease` or an `Application` (`spec` is its spec).
fn of_resource(
    doc: Doc<'_>,
    api: Option<&str>,
    kind: Option<&str>,
    spec: Option<&At>,
) -> Option<ChartValues> {
    let (api, kind, spec) = (api?, kind?, spec?);
    let named = |name: Option<&str>, version: Option<&str>| {
        name.map(|name| match version {
            Some(version) => format!("{name} {version}"),
            None => name.to_owned(),
        })
    };
    if kind == "HelmRelease" && api.starts_with("helm.toolkit.fluxcd.io/") {
        let chart_spec = get(doc, spec, "chart").and_then(|chart| get(doc, &chart, "spec"));
        let chart = chart_spec.and_then(|chart_spec| {
            named(
                scalar(doc, &chart_spec, "chart"),
                scalar(doc, &chart_spec, "version"),
            )
        });
        return Some(ChartValues {
            kind: "HelmRelease",
            chart,
        });
    }
    if kind == "Application" && api.starts_with("argoproj.io/") {
        // `spec.source`, or the first of `spec.sources` that names a chart.
        let sources = get(doc, spec, "source").into_iter().chain(
            get(doc, spec, "sources")
                .map(|sources| doc.items(&sources))
                .unwrap_or_default(),
        );
        let chart = sources.into_iter().find_map(|source| {
            named(
                scalar(doc, &source, "chart"),
                scalar(doc, &source, "targetRevision"),
            )
        });
        return Some(ChartValues {
            kind: "Application",
            chart,
        });
    }
    None
}

/// A Kustomization's `helmCharts` (its `apiVersion` and `kind` may be left out), whose
/// `valuesInline` configure charts kustomize fetches: named when there is one.
fn helm_charts(doc: Doc<'_>, charts: &At, kind: Option<&str>) -> Option<ChartValues> {
    if !matches!(kind, None | Some("Kustomization" | "Component")) {
        return None;
    }
    let items = doc.items(charts);
    let chart = match items.as_slice() {
        [only] => scalar(doc, only, "name").map(|name| match scalar(doc, only, "version") {
            Some(version) => format!("{name} {version}"),
            None => name.to_owned(),
        }),
        _ => None,
    };
    Some(ChartValues {
        kind: "Kustomization",
        chart,
    })
}

/// Where the chart that values in a resource configure comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChartSource {
    /// A directory in a Git source (a Flux `GitRepository`, an Argo CD source `path`), as
    /// written: relative to the repository's root.
    Path(String),
    /// A chart from a chart repository or an OCI registry (`redis 19.6.4`), or one the
    /// resource does not name.
    Named(Option<String>),
}

/// One values map inside a resource, with the chart it configures.
pub(crate) struct ValuesAt {
    pub(crate) kind: &'static str,
    pub(crate) values: At,
    pub(crate) chart: ChartSource,
    /// Why these values are not all the chart gets (`valuesFrom`, value files, parameters).
    pub(crate) more_values: Option<String>,
}

/// The values maps of the document at `root`, when it is a `HelmRelease` or an `Application`.
pub(crate) fn values_of(doc: Doc<'_>, root: u32) -> Vec<ValuesAt> {
    let root = doc.at(root, &Chain::default());
    let (Some(api), Some(kind), Some(spec)) = (
        scalar(doc, &root, "apiVersion"),
        scalar(doc, &root, "kind"),
        get(doc, &root, "spec"),
    ) else {
        return Vec::new();
    };
    let named = |name: Option<&str>, version: Option<&str>| {
        ChartSource::Named(name.map(|name| match version {
            Some(version) => format!("{name} {version}"),
            None => name.to_owned(),
        }))
    };
    if kind == "HelmRelease" && api.starts_with("helm.toolkit.fluxcd.io/") {
        let Some(values) = get(doc, &spec, "values").filter(|v| doc.is_mapping(v)) else {
            return Vec::new();
        };
        let chart_spec = get(doc, &spec, "chart").and_then(|chart| get(doc, &chart, "spec"));
        let chart = chart_spec
            .as_ref()
            .map_or(ChartSource::Named(None), |chart_spec| {
                let source_kind = get(doc, chart_spec, "sourceRef")
                    .and_then(|source| scalar(doc, &source, "kind"));
                let name = scalar(doc, chart_spec, "chart");
                match (source_kind, name) {
                    (Some("GitRepository"), Some(path)) => ChartSource::Path(path.to_owned()),
                    _ => named(name, scalar(doc, chart_spec, "version")),
                }
            });
        let more_values = if get(doc, &spec, "valuesFrom").is_some() {
            Some("its `valuesFrom` also gives the chart values, which tagpin does not read")
        } else if chart_spec.is_some_and(|c| get(doc, &c, "valuesFiles").is_some()) {
            Some("its chart's `valuesFiles` replace the chart's values.yaml")
        } else {
            None
        };
        return vec![ValuesAt {
            kind: "HelmRelease",
            values,
            chart,
            more_values: more_values.map(str::to_owned),
        }];
    }
    if kind != "Application" || !api.starts_with("argoproj.io/") {
        return Vec::new();
    }
    let sources = get(doc, &spec, "source").into_iter().chain(
        get(doc, &spec, "sources")
            .map(|sources| doc.items(&sources))
            .unwrap_or_default(),
    );
    sources
        .filter_map(|source| {
            let helm = get(doc, &source, "helm")?;
            let values = get(doc, &helm, "valuesObject").filter(|v| doc.is_mapping(v))?;
            let chart = match (scalar(doc, &source, "chart"), scalar(doc, &source, "path")) {
                (None, Some(path)) => ChartSource::Path(path.to_owned()),
                (name, _) => named(name, scalar(doc, &source, "targetRevision")),
            };
            let more_values = ["values", "valueFiles", "parameters", "fileParameters"]
                .into_iter()
                .find(|key| get(doc, &helm, key).is_some())
                .map(|key| format!("its `helm.{key}` also gives the chart values"));
            Some(ValuesAt {
                kind: "Application",
                values,
                chart,
                more_values,
            })
        })
        .collect()
}
