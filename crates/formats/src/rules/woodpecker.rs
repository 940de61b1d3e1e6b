//! Woodpecker CI pipelines (`.woodpecker.yml`, `.woodpecker/*.yaml`): their images are found as
//! in any YAML (`steps.*.image`, `services.*.image`), their steps' `commands` are read as
//! Drone's are ([`super::ci_scripts`]), and a top-level `variables:` holds only
//! anchors, which Woodpecker itself never reads (its documented place for
//! `- &golang_image 'golang:1.25'`, aliased by `image: *golang_image`). An anchored image there
//! is rewritten where it is defined, as compose's `x-*` fields are.
//!
//! The file kind stays [`crate::FileKind::Yaml`]: the pipeline is told by its path.

use std::path::Path;

use super::{Map, Out, Rules, Seg, Words};

pub(crate) struct Woodpecker;

impl Rules for Woodpecker {
    fn mapping(&self, map: &Map<'_, '_>, out: &mut Out<'_>) {
        // Its steps' `commands` as Drone's are.
        super::ci_scripts::CiScripts::Commands.mapping(map, out);
    }

    fn inert(&self, path: &[Seg<'_>]) -> bool {
        matches!(path.first(), Some(Seg::Key("variables")))
    }

    fn words(&self) -> Option<&'static Words> {
        super::ci_scripts::CiScripts::Commands.words()
    }
}

/// Whether the YAML file at `path` (one read as [`crate::FileKind::Yaml`]) is a Woodpecker
/// pipeline: `.woodpecker.yml` (or `.yaml`), or a file directly in a `.woodpecker/` directory.
pub(crate) fn is_pipeline(path: &Path) -> bool {
    let Some((parent, name)) = crate::kind::parent_and_name(path) else {
        return false;
    };
    matches!(name, ".woodpecker.yml" | ".woodpecker.yaml")
        || parent
            .and_then(crate::kind::parent_and_name)
            .is_some_and(|(_, dir)| dir == ".woodpecker")
}
