//! A vendored subchart's image defaults that a parent chart overrides.
//!
//! A chart in another chart's `charts/` directory is deployed with the parent's values merged
//! over its own: the parent's `redis.image.repository: opstree/redis` replaces the subchart's
//! `image.repository: library/redis`. A digest looked up for the subchart's default then
//! names an image of another repository (the pull fails), or sits beside a tag the parent
//! replaced (the edit changes nothing that runs). So a default a parent sets any part of is
//! reported with the parent's keys and not written.
//!
//! Only the parents' own `values.yaml` is read (what every install of the parent uses); a
//! parent that depends on the chart by a `file://` path from elsewhere in the repository is
//! not looked for.

use std::ops::Range;
use std::path::Path;

use serde_json::Value;
use tagpin_formats::chart::{self, ValuesImages};

use super::dependencies;

/// How many parents up (a subchart of a subchart) are read.
const MAX_PARENTS: usize = 4;

/// For each candidate of `images` (the own values of the chart at `chart`) that a parent
/// chart's values set a part of: the span of its finding and why it is not written.
pub(super) fn overridden(chart: &Path, images: &ValuesImages) -> Vec<(Range<usize>, String)> {
    let mut found = Vec::new();
    if images.candidates.is_empty() {
        return found;
    }
    // The keys under which each parent's values hold this chart's: `redis`, or under a
    // grandparent `db.redis`; one list per alias the chart is depended on by.
    let mut prefixes: Vec<Vec<String>> = vec![Vec::new()];
    let mut child = chart.to_owned();
    for _ in 0..MAX_PARENTS {
        let Some(parent) = parent_chart(&child) else {
            break;
        };
        let Ok(meta) = dependencies::chart_yaml(&parent) else {
            break;
        };
        let keys = keys_of(&child, &meta);
        prefixes = keys
            .iter()
            .flat_map(|key| {
                prefixes.iter().map(move |below| {
                    std::iter::once(key.clone())
                        .chain(below.iter().cloned())
                        .collect()
                })
            })
            .collect();
        let values = read_values(&parent);
        let parent_name = meta
            .get("name")
            .and_then(Value::as_str)
            .map_or_else(|| display_name(&parent), str::to_owned);
        for candidate in &images.candidates {
            if found.iter().any(|(span, _)| *span == candidate.span) {
                continue;
            }
            let set = prefixes.iter().find_map(|prefix| {
                let keys: Vec<&str> = prefix
                    .iter()
                    .chain(&candidate.path)
                    .map(String::as_str)
                    .collect();
                sets_a_part(&values, &keys)
            });
            if let Some(keys) = set {
                found.push((
                    candidate.span.clone(),
                    format!(
                        "not written: the parent chart `{parent_name}` sets {keys} in its \
                         values.yaml, so this default is not the image it deploys (a digest \
                         looked up for it would not match)"
                    ),
                ));
            }
        }
        child = parent;
    }
    found
}

/// For each candidate of `images` (the own values of the chart at `chart`) that another values
/// file of the chart sets a part of (`values-prod.yaml`, a chart-testing `ci/*-values.yaml`):
/// the span of its finding and why it is not written. Rendered with that file, the chart
/// would join the digest written here to the file's tag or repository: another image's
/// digest, or (where the file's tag holds one) a reference with two.
pub(super) fn overlaid(chart: &Path, images: &ValuesImages) -> Vec<(Range<usize>, String)> {
    let mut found = Vec::new();
    if images.candidates.is_empty() {
        return found;
    }
    let own = chart.join("values.yaml");
    let listed = |dir: &Path| {
        std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|entry| entry.path())
            .collect::<Vec<_>>()
    };
    let mut overlays: Vec<std::path::PathBuf> = listed(chart)
        .into_iter()
        .chain(listed(&chart.join("ci")))
        .filter(|path| *path != own && super::is_values_file(path) && path.is_file())
        .collect();
    overlays.sort();
    for overlay in overlays {
        let values = std::fs::read_to_string(&overlay)
            .ok()
            .and_then(|text| chart::values_json(&overlay, &text, None).ok())
            .unwrap_or(Value::Null);
        let shown = overlay
            .strip_prefix(chart)
            .unwrap_or(&overlay)
            .display()
            .to_string();
        for candidate in &images.candidates {
            if found.iter().any(|(span, _)| *span == candidate.span) {
                continue;
            }
            let keys: Vec<&str> = candidate.path.iter().map(String::as_str).collect();
            if let Some(keys) = sets_a_part(&values, &keys) {
                found.push((
                    candidate.span.clone(),
                    format!(
                        "not written: `{shown}` of the same chart sets {keys}, so rendered with \
                         it the chart would join a digest written here to another tag or \
                         repository"
                    ),
                ));
            }
        }
    }
    found
}

/// The chart whose `charts/` directory holds the chart at `chart`.
fn parent_chart(chart: &Path) -> Option<std::path::PathBuf> {
    let charts = chart.parent()?;
    if charts.file_name()? != "charts" {
        return None;
    }
    let parent = charts.parent()?;
    parent
        .join("Chart.yaml")
        .is_file()
        .then(|| parent.to_owned())
}

/// The keys of the parent's values (whose `Chart.yaml` is `parent_meta`) that hold the values
/// of the chart at `child`: each alias it is declared under, or its name.
fn keys_of(child: &Path, parent_meta: &Value) -> Vec<String> {
    let name = dependencies::chart_yaml(child)
        .ok()
        .and_then(|meta| meta.get("name").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| display_name(child));
    let declared = parent_meta.get("dependencies").and_then(Value::as_array);
    let mut keys: Vec<String> = declared
        .into_iter()
        .flatten()
        .filter(|dependency| dependency.get("name").and_then(Value::as_str) == Some(&name))
        .map(|dependency| {
            dependency
                .get("alias")
                .and_then(Value::as_str)
                .unwrap_or(&name)
                .to_owned()
        })
        .collect();
    if keys.is_empty() {
        keys.push(name);
    }
    keys.sort();
    keys.dedup();
    keys
}

fn display_name(dir: &Path) -> String {
    dir.file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The parent's own values, or null when they cannot be read (nothing is then known to
/// override the defaults, as Helm would fail to render the parent at all).
fn read_values(parent: &Path) -> Value {
    let path = parent.join("values.yaml");
    std::fs::read_to_string(&path)
        .ok()
        .and_then(|text| chart::values_json(&path, &text, None).ok())
        .unwrap_or(Value::Null)
}

/// The keys under `keys` of `values` that change an image's reference, written for the
/// reason (`` `redis.image.repository` ``), when there are any: a string or a list there
/// replaces it whole, a map sets the parts it names. A pull policy or pull secrets change
/// nothing the digest depends on.
fn sets_a_part(values: &Value, keys: &[&str]) -> Option<String> {
    let mut value = values;
    for key in keys {
        value = value.get(key)?;
    }
    let dotted = keys.join(".");
    match value {
        Value::Null => None,
        Value::Object(map) => {
            let parts: Vec<String> = map
                .iter()
                .filter(|(key, value)| !value.is_null() && !key.to_lowercase().contains("pull"))
                .map(|(key, _)| format!("`{dotted}.{key}`"))
                .collect();
            (!parts.is_empty()).then(|| parts.join(", "))
        }
        _ => Some(format!("`{dotted}`")),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_parent_sets_a_part_when_it_names_a_key_of_the_reference() {
        let values = json!({
            "redis": {"image": {"registry": "quay.io", "pullPolicy": "Always"}},
            "api": {"image": {"pullPolicy": "Always", "pullSecrets": ["x"]}},
            "web": {"image": "nginx:1.27"},
            "off": {"image": null},
        });
        for (keys, expected) in [
            (&["redis", "image"][..], Some("`redis.image.registry`")),
            (&["api", "image"][..], None),
            (&["web", "image"][..], Some("`web.image`")),
            (&["off", "image"][..], None),
            (&["none", "image"][..], None),
        ] {
            assert_eq!(sets_a_part(&values, keys).as_deref(), expected, "{keys:?}");
        }
    }
}
