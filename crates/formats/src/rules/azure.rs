//! Azure Pipelines' own image fields, beside the YAML rules every pipeline file gets:
//!
//! - A job's `container: ubuntu:22.04` and `services: {redis: redis:7}` written as strings
//!   (Microsoft's documented short form): an image when it has a tag, a digest or a `/`; a bare
//!   word (`container: py`) names an entry of `resources.containers`, read there.
//! - `variables:` (at the top, a stage's or a job's) are the pipeline's variables, not images:
//!   a `dockerImage: myacr.azurecr.io/app:latest` there is as likely the image a `Docker@2`
//!   task builds and pushes as one a job pulls, and its uses (`$(dockerImage)`) do not say.

use super::{Map, Out, Seg};

/// Whether `path` is inside a `variables:` block.
pub(super) fn in_variables(path: &[Seg<'_>]) -> bool {
    path.iter().any(|seg| matches!(seg, Seg::Key("variables")))
}

/// The images a job (`map`, at the top or an item of `jobs:`) names as strings in its
/// `container` and `services`.
pub(super) fn job_images(map: &Map<'_, '_>, out: &mut Out<'_>) {
    if !matches!(map.path, [] | [.., Seg::Key("jobs"), Seg::Item(_)]) {
        return;
    }
    if let Some(container) = map.scalar("container").filter(|c| names_an_image(c.value)) {
        out.inline(&container, "");
    }
    let Some(services) = map.get("services") else {
        return;
    };
    let mut entries = Vec::new();
    map.doc.entries_into(services, &mut entries);
    for entry in &entries {
        if let Some(image) = map
            .doc
            .scalar(&entry.value)
            .filter(|s| names_an_image(s.value))
        {
            out.inline(&image, "");
        }
    }
}

/// Whether a job's string `container` or service is an image rather than the name of a
/// `resources.containers` entry: it has a tag, a digest or a path, and no variable.
fn names_an_image(value: &str) -> bool {
    value.contains([':', '/', '@']) && !value.contains('$')
}
