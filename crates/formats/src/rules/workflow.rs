//! GitHub workflows and `action.yml`: `jobs.*.container` (a string, or its `image`),
//! `jobs.*.services.*.image`, `uses: docker://…` in any step, and `runs.image: docker://…`.

use super::{Map, Out, Rules, Seg};

pub(crate) struct Workflow;

const DOCKER: &str = "docker://";

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
            out.inline(&uses, DOCKER);
        }
    }
}
