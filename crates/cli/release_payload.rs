//! The manifests of an `OpenShift` release payload component: a directory (`manifests/`) beside
//! an `image-references` file, an `ImageStream` whose tags name the images its manifests use
//! (`from: {kind: DockerImage, name: quay.io/openshift/origin-cluster-dns-operator:latest}`).
//! Those names are placeholders: `oc adm release new` finds each one in the manifests by its
//! exact text and puts the release's own image in its place. Written with a digest, a name no
//! longer matches, and the payload would ship the placeholder instead of the release's build.
//! So they are `ignored` in the YAML files of that directory, with the reason, as images
//! another tool sets are.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::Value;
use tagpin_formats::{EditSite, FileKind, Status};

use crate::commands::ScannedFile;

/// The file that marks a component's manifests.
pub const MARKER: &str = "image-references";

/// An `image-references` file larger than this is not read.
const MAX_SIZE: u64 = 1 << 20;

/// The `image-references` files one run's walk found (it notes them as it lists directories:
/// looked for after the walk, once per directory with a YAML file to write, they were a serial
/// `stat` per chart on a chart monorepo). One hidden by `.gitignore` is not walked, so not read.
#[derive(Debug, Default)]
pub struct Payloads {
    markers: Mutex<Vec<PathBuf>>,
}

impl Payloads {
    /// Notes the marker at `path`, as walked.
    pub fn note(&self, path: &Path) {
        self.markers
            .lock()
            .expect("no panics while holding the lock")
            .push(path.to_owned());
    }

    /// Marks `ignored` the references in the YAML files of `files` that the `image-references`
    /// beside them names.
    pub fn mark_placeholders(self, files: &mut [ScannedFile]) {
        let markers = self
            .markers
            .into_inner()
            .expect("no panics while holding the lock");
        let by_dir: HashMap<&Path, Vec<String>> = markers
            .iter()
            .filter_map(|marker| Some((marker.parent()?, placeholders(marker))))
            .filter(|(_, names)| !names.is_empty())
            .collect();
        if !by_dir.is_empty() {
            mark_named(files, &by_dir);
        }
    }
}

/// Marks `ignored` the references in the YAML files of `files` whose directory's placeholders
/// (`by_dir`) name them.
fn mark_named(files: &mut [ScannedFile], by_dir: &HashMap<&Path, Vec<String>>) {
    let writable = |finding: &tagpin_formats::Finding| {
        finding.kind == FileKind::Yaml
            && matches!(finding.status, Status::Floating | Status::Pinned)
    };
    for file in files {
        let Some(names) = file.path.parent().and_then(|dir| by_dir.get(dir)) else {
            continue;
        };
        for finding in &mut file.findings {
            if writable(finding) && names.contains(&finding.text) {
                finding.status = Status::Ignored;
                finding.site = EditSite::Unsupported {
                    reason: REPLACED.to_owned(),
                };
            }
        }
    }
}

/// Why a placeholder is not written.
const REPLACED: &str = "a placeholder `oc adm release new` replaces with the release's image \
     (the `image-references` beside these manifests names it): it finds the name by its exact \
     text, which a digest would change";

/// The image names the `ImageStream` at `path` gives its tags (`spec.tags[].from.name`, of
/// `kind: DockerImage`), as written.
fn placeholders(path: &Path) -> Vec<String> {
    let Some(document) = crate::read::yaml_document(path, MAX_SIZE) else {
        return Vec::new();
    };
    if document.get("kind").and_then(Value::as_str) != Some("ImageStream") {
        return Vec::new();
    }
    let tags = document.pointer("/spec/tags").and_then(Value::as_array);
    tags.into_iter()
        .flatten()
        .filter_map(|tag| tag.get("from"))
        .filter(|from| from.get("kind").and_then(Value::as_str) == Some("DockerImage"))
        .filter_map(|from| Some(from.get("name")?.as_str()?.to_owned()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_image_stream_names_its_placeholders() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(MARKER);
        for (text, expected) in [
            (
                "kind: ImageStream\napiVersion: image.openshift.io/v1\nspec:\n  tags:\n  - name: dns\n    from:\n      kind: \"DockerImage\"\n      name: \"quay.io/openshift/origin-dns:latest\"\n  - name: other\n    from:\n      kind: ImageStreamTag\n      name: base:4.16\n",
                vec!["quay.io/openshift/origin-dns:latest"],
            ),
            (
                "kind: ConfigMap\nspec:\n  tags:\n  - from: {kind: DockerImage, name: a:1}\n",
                vec![],
            ),
            ("not: [yaml\n", vec![]),
        ] {
            std::fs::write(&path, text).unwrap();
            assert_eq!(placeholders(&path), expected, "{text}");
        }
        assert!(placeholders(&dir.path().join("missing")).is_empty());
    }
}
