//! Kubernetes manifests and plain YAML: a scalar under an `image` key (or one ending in
//! `Image`, such as `kubectlImage`) that parses as a reference, and the pull-policy lint for
//! containers whose tag is `latest`.
//!
//! Not references: schema definitions (a mapping under `properties`), and an `image` scalar
//! beside the keys of a split spec (`repository`, `registry`, `tag`, `version`, `digest`),
//! which names only part of the image (see [`super::helm_values`]).

use tagpin_reference::ImageReference;

use super::{Map, Out, Rules, Seg, helm_values};
use crate::{EditSite, Warning};

/// The rules for the `yaml` and `helm-template` kinds: Kubernetes objects and Helm values.
pub(crate) struct KubernetesAndHelm;

impl Rules for KubernetesAndHelm {
    fn mapping(&self, map: &Map<'_, '_>, out: &mut Out<'_>) {
        // Split maps have a `repository` or an `image`; most mappings have neither.
        let interesting = map
            .entries
            .iter()
            .any(|e| is_image_key(e.key) || e.key == "repository");
        if !interesting || map.parent() == Some("properties") || in_schema(map) {
            // A schema (CRD openAPIV3Schema, JSON schema): property definitions and their
            // `default:` and `example:` values, not images anything runs.
            return;
        }
        let before = out.candidates.len();
        helm_values::split_map(map, out);
        if let Some(values) = out.chart_values.as_ref().filter(|v| v.contains(map.path)) {
            let reason = values.reason();
            for candidate in &mut out.candidates[before..] {
                candidate.found.site = EditSite::Unsupported {
                    reason: reason.clone(),
                };
                candidate.target = None;
            }
        }
        images(map, out);
    }
}

/// The keys that, beside an `image` scalar, make it the name part of a split spec.
pub(crate) const SPLIT_KEYS: [&str; 5] = ["repository", "registry", "tag", "version", "digest"];

pub(crate) fn is_image_key(key: &str) -> bool {
    key.ends_with("image") || key.ends_with("Image")
}

/// Whether `map` is inside a CRD's schema.
fn in_schema(map: &Map<'_, '_>) -> bool {
    map.path
        .iter()
        .any(|seg| matches!(seg, Seg::Key("openAPIV3Schema" | "openAPIV2Schema")))
}

/// Whether the `image` scalar of `map` names only part of a split spec. A `version` beside
/// an `image` that is a whole reference (a `/` or a `:` in it) is a custom resource's version
/// field (Prometheus, Alertmanager), not its tag.
fn names_a_part(map: &Map<'_, '_>, out: &Out<'_>) -> bool {
    if SPLIT_KEYS
        .iter()
        .filter(|key| **key != "version")
        .any(|key| map.has(key))
    {
        return true;
    }
    map.has("version")
        && map
            .scalar("image")
            .and_then(|image| out.text.get(image.span))
            .is_none_or(|image| !image.contains(['/', ':']))
}

fn images(map: &Map<'_, '_>, out: &mut Out<'_>) {
    if names_a_part(map, out) {
        return;
    }
    let in_container_list = is_container(map.path);
    for entry in map.entries {
        if !is_image_key(entry.key) {
            continue;
        }
        let Some(scalar) = map.doc.scalar(&entry.value) else {
            continue;
        };
        let Some(candidate) = out.inline(&scalar, "") else {
            continue;
        };
        let lint = in_container_list
            && entry.key == "image"
            && !map.has("imagePullPolicy")
            && candidate.found.reference.as_ref().is_some_and(pulls_always);
        if lint {
            candidate.found.warnings.push(Warning::LatestPullsAlways);
        }
    }
}

/// Whether the mapping at `path` is a container whose `image` kubelet pulls: an item of a pod's
/// `containers`, `initContainers` or `ephemeralContainers` (also an Argo Workflows template's
/// `initContainers` and `containerSet.containers`), of a Tekton task's `steps` or `sidecars`
/// (Argo's `sidecars` too), a Tekton `stepTemplate`, or an Argo Workflows template's
/// `container` or `script` (only under `templates[]`: a `container:` key elsewhere is not
/// known to be one).
fn is_container(path: &[Seg<'_>]) -> bool {
    matches!(
        path,
        [
            ..,
            Seg::Key(
                "containers" | "initContainers" | "ephemeralContainers" | "steps" | "sidecars"
            ),
            Seg::Item(_)
        ] | [.., Seg::Key("stepTemplate")]
            | [
                ..,
                Seg::Key("templates"),
                Seg::Item(_),
                Seg::Key("container" | "script")
            ]
    )
}

/// Whether kubelet defaults a container with this image to `imagePullPolicy: Always`: the tag
/// is `latest`, written (a digest does not clear it) or implied (no tag and no digest).
fn pulls_always(reference: &ImageReference) -> bool {
    match reference.tag() {
        Some(tag) => tag == "latest",
        None => reference.digest().is_none(),
    }
}
