//! Docker Compose: `services.*.image` (`local` beside `build:`, which names the image being
//! built), and `image` in `x-*` extension fields, whose values compose ignores except where an
//! alias or a merge key brings them into a service.

use super::{Map, Out, Rules, Seg};
use crate::Status;

pub(crate) struct Compose;

fn is_extension(path: &[Seg<'_>]) -> bool {
    matches!(path.first(), Some(Seg::Key(key)) if key.starts_with("x-"))
}

impl Rules for Compose {
    fn mapping(&self, map: &Map<'_, '_>, out: &mut Out<'_>) {
        let service = matches!(map.path, [Seg::Key("services"), Seg::Key(_)]);
        if !service && !is_extension(map.path) {
            return;
        }
        let Some(scalar) = map.scalar("image") else {
            return;
        };
        let build = map.has("build");
        if let Some(candidate) = out.inline(&scalar, "")
            && build
            && candidate.found.status != Status::Templated
        {
            candidate.found.status = Status::Local;
        }
    }

    fn inert(&self, path: &[Seg<'_>]) -> bool {
        is_extension(path)
    }
}
