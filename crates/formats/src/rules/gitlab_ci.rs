//! GitLab CI (`.gitlab-ci.yml`, `*.gitlab-ci.yml`): `image` (a string, or its `name`) and each
//! of `services` (a string, or its `name`), at the top level (the deprecated global form),
//! under `default:` and in every job, hidden jobs (`.template:`, used through `extends`)
//! included. `$CI_REGISTRY_IMAGE/app:$CI_COMMIT_SHA` and other variables are `templated`.
//!
//! Not jobs: the top-level `variables`, `stages`, `include`, `workflow` and `spec` keys, and the
//! global keywords (`image: {name: …}` at the top is the global image, not a job named `image`).

use super::{Map, Out, Rules, Seg};

pub(crate) struct GitlabCi;

/// Top-level keys that are not jobs (and so hold no `image` of their own).
const NOT_JOBS: [&str; 10] = [
    "variables",
    "stages",
    "include",
    "workflow",
    "spec",
    "image",
    "services",
    "cache",
    "before_script",
    "after_script",
];

/// Whether `path` is the top level, `default:` or a job.
fn is_job(path: &[Seg<'_>]) -> bool {
    match path {
        [] => true,
        [Seg::Key(key)] => !NOT_JOBS.contains(key),
        _ => false,
    }
}

impl Rules for GitlabCi {
    fn mapping(&self, map: &Map<'_, '_>, out: &mut Out<'_>) {
        if is_job(map.path) {
            if let Some(image) = map.scalar("image") {
                out.inline(&image, "");
            }
            if let Some(services) = map.get("services") {
                for item in map.doc.items(services) {
                    if let Some(service) = map.doc.scalar(&item) {
                        out.inline(&service, "");
                    }
                }
            }
            return;
        }
        // `image: {name: …, entrypoint: […]}` and `services: [{name: …, alias: …}]`.
        let named = match map.path {
            [job @ .., Seg::Key("image")] | [job @ .., Seg::Key("services"), Seg::Item(_)] => {
                is_job(job)
            }
            _ => false,
        };
        if named && let Some(name) = map.scalar("name") {
            out.inline(&name, "");
        }
    }
}
