//! GitHub workflows and `action.yml`: `jobs.*.container` (a string, or its `image`),
//! `jobs.*.services.*.image`, `uses: docker://…` in any step, `runs.image: docker://…`, and
//! the `with.image` of a step whose action runs that image ([`RUNS_WITH_IMAGE`]).

use super::{Map, Out, Rules, Seg};
use crate::EditSite;

pub(crate) struct Workflow;

const DOCKER: &str = "docker://";

/// Actions whose `image` input is a container image they pull and run. Any other action's
/// `image` input may name what it builds or pushes (`redhat-actions/buildah-build`), a
/// picture, or a machine: it is not read.
const RUNS_WITH_IMAGE: &[&str] = &[
    "addnab/docker-run-action",
    "kohlerdominik/docker-run-action",
    "tj-actions/docker-run",
    // The binfmt image QEMU's emulators are installed from.
    "docker/setup-qemu-action",
];

/// Why an action's `image` input with no tag and no digest is not written.
const UNTAGGED_INPUT: &str = "no tag or digest is written in the action's `image` input: \
     `:latest@sha256:…` is not written there";

impl Rules for Workflow {
    fn mapping(&self, map: &Map<'_, '_>, out: &mut Out<'_>) {
        let image_prefix = match map.path {
            [Seg::Key("jobs"), Seg::Key(_), Seg::Key("container")]
            | [
                Seg::Key("jobs"),
                Seg::Key(_),
                Seg::Key("services"),
                Seg::Key(_),
            ] => Some(""),
            [Seg::Key("runs")] => Some(DOCKER),
            _ => None,
        };
        if let (Some(prefix), Some(image)) = (image_prefix, map.scalar("image")) {
            out.inline(&image, prefix);
        }
        if matches!(map.path, [Seg::Key("jobs"), Seg::Key(_)])
            && let Some(container) = map.scalar("container")
        {
            out.inline(&container, "");
        }
        if let Some(uses) = map.scalar("uses") {
            if runs_with_image(uses.value) {
                action_image(map, out);
            }
            out.inline(&uses, DOCKER);
        }
    }
}

/// Whether `uses` (`owner/repo@ref`) names an action of [`RUNS_WITH_IMAGE`].
fn runs_with_image(uses: &str) -> bool {
    let action = uses.split_once('@').map_or(uses, |(action, _)| action);
    RUNS_WITH_IMAGE
        .iter()
        .any(|known| action.eq_ignore_ascii_case(known))
}

/// The `with.image` of a step (`map`) whose action runs it.
fn action_image(map: &Map<'_, '_>, out: &mut Out<'_>) {
    let Some(with) = map.get("with") else {
        return;
    };
    let mut inputs = Vec::new();
    map.doc.entries_into(with, &mut inputs);
    let Some(image) = inputs
        .iter()
        .find(|e| e.key == "image")
        .and_then(|e| map.doc.scalar(&e.value))
    else {
        return;
    };
    let Some(candidate) = out.inline(&image, "") else {
        return;
    };
    let untagged = candidate
        .found
        .reference
        .as_ref()
        .is_some_and(|r| r.tag().is_none() && r.digest().is_none());
    if untagged && !matches!(candidate.found.site, EditSite::Unsupported { .. }) {
        candidate.found.site = EditSite::Unsupported {
            reason: UNTAGGED_INPUT.to_owned(),
        };
    }
}
