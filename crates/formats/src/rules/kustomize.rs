//! Kustomize (`kustomization.yaml`, `kustomization.yml`, `Kustomization`): each `images:` entry
//! (`name`, `newName`, `newTag`, `digest`) is the image Kustomize renders, and the rest of the
//! file is read by the Kubernetes rules (a `helmCharts[].valuesInline` image, say).
//!
//! Kustomize's image transformer (`api/filters/imagetag/updater.go`) renders an entry as
//! `newName` (or the resource's own name) + `:newTag` + `@digest` when both `newTag` and
//! `digest` are set; `newTag` alone drops the resource's digest, `digest` alone drops its tag,
//! and neither keeps the resource's tag and digest. So:
//!
//! - `newTag` without `digest`: floating `name:newTag`; the digest goes into a new `digest:`
//!   key inserted into the entry, written as the entry is ([`super::insert`]), `newTag` kept;
//! - `newTag` and `digest`: pinned; the digest value is refreshed in place;
//! - `newTag: v1@sha256:…` (the tag and digest in one value, which renders the same): pinned,
//!   refreshed in the tag;
//! - `digest` alone: `digest-only`; neither: the tag comes from the resources, so the entry is
//!   `templated` (not resolvable from this file);
//! - `tagSuffix`, and a `newName` that carries a tag or digest itself, are reported and not
//!   written: what Kustomize renders from them is not a plain `name:tag@digest`.

use tagpin_reference::ImageReference;

use super::insert::entry_point;
use super::kubernetes::KubernetesAndHelm;
use super::{Map, Out, Rules, ScalarAt, Seg, UNSUPPORTED_ESCAPES};
use crate::common::{Found, is_templated};
use crate::yaml::tree::Style;
use crate::{EditSite, Status};

pub(crate) struct Kustomize;

impl Rules for Kustomize {
    fn mapping(&self, map: &Map<'_, '_>, out: &mut Out<'_>) {
        if matches!(map.path, [Seg::Key("images"), Seg::Item(_)]) {
            image_entry(map, out);
        } else if !matches!(map.path, [Seg::Key("images"), ..]) {
            KubernetesAndHelm.mapping(map, out);
        }
    }
}

/// A scalar's text as written, unless it is empty or null.
fn written<'o>(out: &'o Out<'_>, scalar: Option<&ScalarAt<'_>>) -> Option<&'o str> {
    let scalar = scalar?;
    let raw = out.text.get(scalar.span.clone())?;
    if scalar.style == Style::Plain && matches!(raw, "~" | "null") {
        return None;
    }
    Some(raw).filter(|raw| !raw.is_empty())
}

/// An entry of an `images:` list (see the module's docs): a `kustomization.yaml`'s, or one
/// Flux hands to Kustomize.
pub(crate) fn image_entry(map: &Map<'_, '_>, out: &mut Out<'_>) {
    let name = map.scalar("name");
    let new_name = map.scalar("newName");
    let new_tag = map.scalar("newTag");
    let digest = map.scalar("digest");
    let Some(name_scalar) = new_name.clone().or_else(|| name.clone()) else {
        return;
    };
    let Some(image) = written(out, Some(&name_scalar)) else {
        return;
    };
    let tag_text = written(out, new_tag.as_ref());
    let digest_text = written(out, digest.as_ref());
    let mut full = image.to_owned();
    if let Some(tag) = tag_text {
        full.push(':');
        full.push_str(tag);
    }
    if let Some(digest) = digest_text {
        full.push('@');
        full.push_str(digest);
    }
    let scalars = [&name, &new_name, &new_tag, &digest];
    let span = name_scalar.span.clone();
    let mut found = if is_templated(&full) || (tag_text.is_none() && digest_text.is_none()) {
        Found::templated(span, &full)
    } else if let Some(found) = Found::inline(span, &full) {
        found
    } else {
        return;
    };
    found.also_lines = scalars
        .iter()
        .filter_map(|s| s.as_ref().map(|s| s.span.start))
        .collect();
    // Kubebuilder's and Operator SDK's placeholder, `controller`, renamed by `make deploy`
    // (`kustomize edit set image controller=${IMG}`) to the image the project builds: what
    // `make docker-build` makes, whatever name and tag the file was left with.
    if name.as_ref().is_some_and(|name| name.value == "controller")
        && matches!(found.status, Status::Floating | Status::Pinned)
    {
        found.status = Status::Local;
    }
    let mut target = None;
    if found.reference.is_some() {
        let name_carries_more = ImageReference::parse(image)
            .is_ok_and(|parsed| parsed.tag().is_some() || parsed.digest().is_some());
        found.site = if scalars
            .iter()
            .any(|s| s.as_ref().is_some_and(|s| s.decoded))
        {
            EditSite::Unsupported {
                reason: UNSUPPORTED_ESCAPES.to_owned(),
            }
        } else if map.has("tagSuffix") {
            unsupported("the entry has a tagSuffix, which Kustomize appends to the tag")
        } else if name_carries_more {
            unsupported("the entry's name carries a tag or digest itself")
        } else if let (Some(digest), Some(_)) = (&digest, tag_text) {
            target = Some(digest.at.clone());
            EditSite::SplitDigest {
                span: digest.span.clone(),
                bare: false,
            }
        } else if let (Some(tag), Some(tag_text)) = (&new_tag, tag_text)
            && tag_text.contains('@')
        {
            target = Some(tag.at.clone());
            EditSite::SplitTag {
                span: tag.span.clone(),
                tag: tag_text.to_owned(),
            }
        } else if tag_text.is_some() {
            insert_site(map, out)
        } else {
            // `digest` alone: digest-only, never edited.
            EditSite::Inline
        };
    }
    out.push(found, target);
}

fn unsupported(reason: &str) -> EditSite {
    EditSite::Unsupported {
        reason: reason.to_owned(),
    }
}

/// A new `digest:` key in the entry, or why there is no safe place for one.
fn insert_site(map: &Map<'_, '_>, out: &Out<'_>) -> EditSite {
    let Some(insertion) = entry_point(map, out.text) else {
        return unsupported(
            "no place to insert `digest:` that lands in this entry only (the entry is aliased, \
             ends in a block scalar, or its flow mapping closes on a later line)",
        );
    };
    let entry = insertion.entry("digest", "\u{0}");
    let (before, after) = entry
        .split_once('\u{0}')
        .expect("the marker is in the entry");
    EditSite::InsertKey {
        at: insertion.at,
        before: before.to_owned(),
        after: after.to_owned(),
    }
}
