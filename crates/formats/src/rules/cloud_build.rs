//! Google Cloud Build (`cloudbuild.yaml`): the image each build step runs in, its `name`
//! (`steps[*].name: gcr.io/cloud-builders/docker`). A bare name is Docker Hub's, as for any
//! image (`name: bash`, `name: ubuntu`). Substitutions (`$_GO_IMAGE`, `${PROJECT_ID}`) make it
//! `templated`. Not the top-level `images`: those are what the build pushes, not pulls.

use super::{Map, Out, Rules, Seg};

pub(crate) struct CloudBuild;

impl Rules for CloudBuild {
    fn mapping(&self, map: &Map<'_, '_>, out: &mut Out<'_>) {
        if matches!(map.path, [Seg::Key("steps"), Seg::Item(_)])
            && let Some(name) = map.scalar("name")
        {
            out.inline(&name, "");
        }
    }
}
