//! What renders a chart: `helm template`, or without Helm tagpin's own reading of the template
//! lines that use the image maps (`tagpin_formats::chart::render_statically`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};
use tagpin_formats::chart::{self, Template};

use super::Helm;
use super::dependencies::{self, Staged};
use crate::template_scans::TemplateScans;

/// A renderer of charts.
#[derive(Clone, Debug)]
pub enum Renderer {
    /// Helm, over the chart as staged with the dependencies found in the repository.
    Helm(Helm, Arc<Staged>),
    /// tagpin's own evaluation of the lines that read the image maps, over a chart read once.
    Static(Arc<StaticChart>),
}

/// What a rendering gave: Helm's output (or its equivalent) and, for the static reading, the
/// candidates it could not follow, by index, with why.
pub struct Output {
    pub text: String,
    pub blocked: Vec<(usize, String)>,
}

impl Renderer {
    /// Renders its chart with the values files `values` and `overrides` on top (the static
    /// reading has read its chart, and planned for the candidates, already).
    pub fn render(&self, values: &[&Path], overrides: &Value) -> Result<Output, String> {
        match self {
            Self::Helm(helm, staged) => helm
                .render(staged.path(), values, &overrides.to_string())
                .map(|text| Output {
                    text,
                    blocked: Vec::new(),
                }),
            Self::Static(chart) => chart.render(values, overrides),
        }
    }

    /// Renders its chart with `text` as the chart's own values.yaml and `overrides` on top.
    /// Helm renders a copy of the chart holding `text`, as the chart will be once edited:
    /// given with `--values`, the same file renders otherwise, since Helm keeps a key whose
    /// value is null there and drops it from a chart's own values (podinfo's empty
    /// `resources.limits` then renders as `limits: null`). A chart that cannot be copied is
    /// given `text` with `--values`.
    pub fn render_own_values(&self, text: &str, overrides: &Value) -> Result<Output, String> {
        let dir = tempfile::tempdir()
            .map_err(|error| format!("cannot create a temporary directory: {error}"))?;
        if let Self::Helm(helm, staged) = self {
            let name = staged.path().file_name().unwrap_or("chart".as_ref());
            let copy = dir.path().join(name);
            if dependencies::copy_chart(staged.path(), &copy).is_ok()
                && std::fs::write(copy.join("values.yaml"), text).is_ok()
            {
                return helm
                    .render(&copy, &[], &overrides.to_string())
                    .map(|text| Output {
                        text,
                        blocked: Vec::new(),
                    });
            }
        }
        let edited = dir.path().join("values.yaml");
        std::fs::write(&edited, text)
            .map_err(|error| format!("cannot write the edited values: {error}"))?;
        self.render(&[edited.as_path()], overrides)
    }

    /// What every rendering gives, when that is known without rendering: tagpin's own reading
    /// with no line to evaluate prints nothing, whatever the values.
    pub fn known_output(&self) -> Option<Output> {
        match self {
            Self::Static(chart) if chart.plan.evaluates_nothing() => Some(Output {
                text: String::new(),
                blocked: chart.plan.blocked().to_vec(),
            }),
            _ => None,
        }
    }
}

/// A chart as the static reading needs it for one values file: its templates (and its
/// subcharts'), its metadata, the plan of what to evaluate for the file's candidates, and the
/// chart's own values under the keys the plan reads (a large values file is not held whole).
#[derive(Debug)]
pub struct StaticChart {
    templates: Vec<Template>,
    meta: Value,
    /// Read from the same `Chart.yaml` as `meta` (see `charts::app_version`).
    app_version: Option<String>,
    plan: chart::StaticPlan,
    values: Value,
}

impl StaticChart {
    /// Reads `chart` for the candidates at `paths` (those at `strings` are strings, not maps);
    /// `own_values` is its values.yaml when the caller has read it already.
    pub fn read(
        chart: &Path,
        paths: &[Vec<String>],
        strings: &[usize],
        own_values: Option<&chart::ValuesFile>,
        overlays: &[PathBuf],
        scans: &TemplateScans,
    ) -> Result<Self, String> {
        let (meta, chart_yaml) = dependencies::chart_yaml_and_text(chart)?;
        let app_version = super::app_version_in(&chart_yaml);
        let mut templates = Vec::new();
        let mut subcharts = Vec::new();
        collect_templates(
            chart,
            &meta,
            &chart_name(chart, &meta),
            &mut templates,
            &mut subcharts,
            0,
            scans,
        )?;
        if templates.iter().any(|t| uses_tpl(&t.text)) {
            collect_tpl_sources(chart, overlays, &mut templates);
        }
        let plan = chart::plan_statically_for(&templates, paths, strings, &subcharts);
        let values = match own_values {
            Some(values) => values.json(plan.keys()),
            None => read_values(&chart.join("values.yaml"), plan.keys())?,
        };
        Ok(Self {
            templates,
            meta,
            app_version,
            plan,
            values,
        })
    }

    /// The chart's `appVersion`, as `charts::app_version` reads it.
    pub fn app_version(&self) -> Option<&str> {
        self.app_version.as_deref()
    }

    /// Where each template it read comes from, as Helm names it
    /// (`chart/templates/deployment.yaml`).
    pub fn sources(&self) -> impl Iterator<Item = &str> {
        self.templates.iter().map(|t| t.source.as_str())
    }

    fn render(&self, values: &[&Path], overrides: &Value) -> Result<Output, String> {
        let mut merged = self.values.clone();
        for file in values {
            merge(&mut merged, read_values(file, self.plan.keys())?);
        }
        merge(&mut merged, overrides.clone());
        let field = |key: &str| self.meta.get(key).cloned().unwrap_or(Value::Null);
        // Built as a map, with the values moved in: `json!` would copy them through serde.
        let mut root = Map::new();
        root.insert("Values".to_owned(), merged);
        root.insert(
            "Chart".to_owned(),
            serde_json::json!({"Name": field("name"), "Version": field("version"), "AppVersion": field("appVersion")}),
        );
        root.insert(
            "Release".to_owned(),
            serde_json::json!({"Name": "tagpin", "Namespace": "default", "Service": "Helm"}),
        );
        let root = Value::Object(root);
        let rendering = self.plan.render(&self.templates, &root);
        Ok(Output {
            text: rendering.output,
            blocked: rendering.blocked,
        })
    }
}

/// The values file at `path` under the top-level `keys` (all with `None`; nothing when the file
/// is missing).
fn read_values(
    path: &Path,
    keys: Option<&std::collections::BTreeSet<String>>,
) -> Result<Value, String> {
    if keys.is_some_and(std::collections::BTreeSet::is_empty) {
        return Ok(Value::Object(Map::new()));
    }
    let Ok(text) = std::fs::read_to_string(path) else {
        return Ok(Value::Object(Map::new()));
    };
    chart::values_json(path, &text, keys).map_err(|error| error.to_string())
}

/// Whether a template renders text with `tpl` (a values string, a file read by `.Files.Get`).
fn uses_tpl(text: &str) -> bool {
    // Built once: every template of every chart is searched.
    static TPL: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new("tpl"));
    TPL.find_iter(text.as_bytes()).any(|at| {
        let before = text[..at].chars().next_back();
        let after = text[at + 3..].chars().next();
        matches!(before, Some(' ' | '(' | '{' | '|')) && matches!(after, Some(' ' | '(' | '\t'))
    })
}

/// The texts a chart's `tpl` may render, as [`chart::TPL_SOURCE`] sources: the values files,
/// and every other text file of the chart outside its templates and subcharts.
fn collect_tpl_sources(chart: &Path, overlays: &[PathBuf], templates: &mut Vec<Template>) {
    const LARGEST: u64 = 1 << 20;
    let mut files: Vec<PathBuf> = overlays.to_vec();
    let mut stack = vec![chart.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            let name = entry.file_name();
            let shown = name.to_string_lossy();
            // Hidden files and documentation are not what a chart renders.
            let skipped = shown.starts_with('.')
                || shown.ends_with(".md")
                || dir == chart
                    && ["templates", "charts", "Chart.yaml"]
                        .iter()
                        .any(|n| name == *n);
            if skipped {
                continue;
            }
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => stack.push(path),
                Ok(kind)
                    if kind.is_file() && entry.metadata().is_ok_and(|m| m.len() <= LARGEST) =>
                {
                    files.push(path);
                }
                _ => {}
            }
        }
    }
    for path in files {
        if let Ok(text) = std::fs::read_to_string(&path) {
            let shown = path
                .strip_prefix(chart.parent().unwrap_or(chart))
                .unwrap_or(&path);
            templates.push(Template {
                source: format!("{}{}", chart::TPL_SOURCE, shown.display()),
                text,
            });
        }
    }
}

fn chart_name(chart: &Path, meta: &Value) -> String {
    meta.get("name").and_then(Value::as_str).map_or_else(
        || {
            chart
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        },
        str::to_owned,
    )
}

/// The chart's template files and those of its vendored subcharts (a library chart's helpers
/// are among them, and those of the dependencies found in the repository), named as Helm
/// names them; `subcharts` gets the direct subcharts' names.
fn collect_templates(
    chart: &Path,
    meta: &Value,
    name: &str,
    templates: &mut Vec<Template>,
    subcharts: &mut Vec<String>,
    depth: usize,
    scans: &TemplateScans,
) -> Result<(), String> {
    let mut stack = vec![(chart.join("templates"), format!("{name}/templates"))];
    while let Some((dir, source)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let file_name = entry.file_name().to_string_lossy().into_owned();
            // The listing says what most entries are; only a link is looked up.
            let is_dir = match entry.file_type() {
                Ok(kind) if !kind.is_symlink() => kind.is_dir(),
                _ => path.is_dir(),
            };
            if is_dir {
                stack.push((path, format!("{source}/{file_name}")));
            } else if file_name != "NOTES.txt" {
                let (text, identity) = crate::read::read_to_string_identified(&path)
                    .map_err(|error| format!("cannot read {}: {error}", path.display()))?;
                scans.offer(&path, &text, identity);
                templates.push(Template {
                    source: format!("{source}/{file_name}"),
                    text,
                });
            }
        }
    }
    let vendored = std::fs::read_dir(chart.join("charts"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|sub| sub.join("Chart.yaml").is_file());
    // Those Helm would not find in `charts/` but tagpin finds in the repository.
    let (found, any_missing) = dependencies::found_and_any_missing(chart, meta);
    let subs: Vec<PathBuf> = vendored.chain(found.into_iter().map(|d| d.dir)).collect();
    if any_missing && depth == 0 {
        // A dependency this reading cannot read sees `global` too.
        subcharts.push("global".to_owned());
    }
    // Every declared dependency reads the values under its alias (else its name), whether
    // or not its chart is at hand: one not vendored nor found is read by no one here.
    let declared = meta.get("dependencies").and_then(Value::as_array);
    for dependency in declared.into_iter().flatten() {
        let key = ["alias", "name"]
            .iter()
            .find_map(|key| dependency.get(*key).and_then(Value::as_str));
        if let Some(key) = key.filter(|key| !subcharts.iter().any(|s| s == key)) {
            subcharts.push(key.to_owned());
        }
    }
    if depth > MAX_SUBCHART_DEPTH {
        return Err("subcharts nest too deep to read".to_owned());
    }
    for sub in subs {
        let meta = dependencies::chart_yaml(&sub)?;
        let sub_name = chart_name(&sub, &meta);
        subcharts.push(sub_name.clone());
        let mut nested = Vec::new();
        collect_templates(
            &sub,
            &meta,
            &format!("{name}/charts/{sub_name}"),
            templates,
            &mut nested,
            depth + 1,
            scans,
        )?;
    }
    Ok(())
}

/// How deep subcharts (and the dependencies found for them) are read.
const MAX_SUBCHART_DEPTH: usize = 8;

/// Helm's merge of values: maps key by key, the later winning, anything else replaced, a null
/// deleting the key.
fn merge(base: &mut Value, top: Value) {
    let Value::Object(top) = top else {
        *base = top;
        return;
    };
    if !base.is_object() {
        *base = Value::Object(Map::new());
    }
    let base = base.as_object_mut().expect("made an object");
    for (key, value) in top {
        match value {
            Value::Null => {
                base.remove(&key);
            }
            Value::Object(_) if base.get(&key).is_some_and(Value::is_object) => {
                merge(base.get_mut(&key).expect("present"), value);
            }
            other => {
                base.insert(key, other);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn values_merge_as_helm_merges_them() {
        let mut base = json!({"a": {"b": 1, "c": 2}, "d": [1], "e": 3});
        merge(
            &mut base,
            json!({"a": {"b": 5, "c": null}, "d": [2], "f": {"g": 1}}),
        );
        assert_eq!(
            base,
            json!({"a": {"b": 5}, "d": [2], "e": 3, "f": {"g": 1}})
        );
    }
}
