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
        if !interesting || map.parent() == Some("properties") {
            // A schema (CRD openAPIV3Schema, JSON schema): property definitions, not values.
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

fn images(map: &Map<'_, '_>, out: &mut Out<'_>) {
    if SPLIT_KEYS.iter().any(|key| map.has(key)) {
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
