//! Images a development loop builds and deploys: Skaffold's `build.artifacts[].image` and
//! `DevSpace`'s `images.*.image`. Both tools build the image on each run and put the fresh
//! build's reference in place of every image of that name in the manifests they deploy,
//! wherever those are in the repository; Skaffold leaves an image written with a digest as it
//! is, so a pinned manifest would deploy the registry's old image instead of the build. The
//! scanner marks the artifact itself `local`; this marks every other reference to the same
//! image (any tag) in the run `local` too.

use std::collections::HashSet;

use tagpin_formats::{FileKind, Status};
use tagpin_reference::ImageReference;

use crate::commands::ScannedFile;

/// Marks `local` every floating or pinned reference in `files` to an image a development
/// loop's config among them builds.
pub fn mark_built(files: &mut [ScannedFile]) {
    let built: HashSet<(String, String)> = files
        .iter()
        .filter(|file| is_dev_loop_config(&file.path))
        .flat_map(|file| &file.findings)
        .filter(|finding| finding.kind == FileKind::Yaml && finding.status == Status::Local)
        .filter_map(|finding| finding.reference.as_ref().map(name_of))
        .collect();
    if built.is_empty() {
        return;
    }
    for finding in files.iter_mut().flat_map(|file| &mut file.findings) {
        if matches!(finding.status, Status::Floating | Status::Pinned)
            && finding
                .reference
                .as_ref()
                .is_some_and(|reference| built.contains(&name_of(reference)))
        {
            finding.status = Status::Local;
        }
    }
}

/// The registry and repository `reference` names, normalised (`auth` is `docker.io`,
/// `library/auth`): an image whatever its tag.
fn name_of(reference: &ImageReference) -> (String, String) {
    (
        reference.registry().to_owned(),
        reference.repository().to_owned(),
    )
}

/// Whether the file at `path` is named as a Skaffold or `DevSpace` config (`skaffold.yaml`,
/// `skaffold-dev.yml`, `devspace.yaml`); its findings' kind says it is YAML.
fn is_dev_loop_config(path: &std::path::Path) -> bool {
    tagpin_formats::parent_and_name(path)
        .is_some_and(|(_, name)| name.starts_with("skaffold") || name.starts_with("devspace"))
}
