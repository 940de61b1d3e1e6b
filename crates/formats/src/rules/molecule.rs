//! Molecule scenarios (`molecule/<scenario>/molecule.yml`): a platform's `image` is read as in
//! any YAML, but written only with `pre_build_image: true`. Without it (the default), Molecule's
//! docker and podman drivers build an image `FROM` the platform's and tag it
//! `molecule_local/<image>`: with a digest in it, that tag is no valid name, and `molecule
//! create` fails. Such an image is reported with the reason.
//!
//! The file kind stays [`crate::FileKind::Yaml`]: the scenario is told by its path.

use std::path::Path;

use super::kubernetes::KubernetesAndHelm;
use super::{Map, Out, Rules, Seg, Words};
use crate::EditSite;

pub(crate) struct Molecule;

/// Why a platform's image Molecule builds on is not written.
const BUILT_ON: &str = "Molecule builds its own image from this one (no `pre_build_image: \
     true`) and tags it `molecule_local/` and this name: a digest in it would make that tag \
     invalid";

impl Rules for Molecule {
    fn mapping(&self, map: &Map<'_, '_>, out: &mut Out<'_>) {
        let before = out.candidates.len();
        KubernetesAndHelm.mapping(map, out);
        let platform = matches!(map.path, [Seg::Key("platforms"), Seg::Item(_)]);
        let pre_built = map
            .scalar("pre_build_image")
            .is_some_and(|value| matches!(value.value, "true" | "True" | "TRUE" | "yes" | "Yes"));
        if platform && !pre_built {
            for candidate in &mut out.candidates[before..] {
                candidate.found.site = EditSite::Unsupported {
                    reason: BUILT_ON.to_owned(),
                };
            }
        }
    }

    fn words(&self) -> Option<&'static Words> {
        KubernetesAndHelm.words()
    }
}

/// Whether the YAML file at `path` is a Molecule scenario: `molecule.yml` (or `.yaml`).
pub(crate) fn is_scenario(path: &Path) -> bool {
    crate::kind::parent_and_name(path)
        .is_some_and(|(_, name)| matches!(name, "molecule.yml" | "molecule.yaml"))
}
