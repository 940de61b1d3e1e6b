//! Keys beside a split map that pick another image: `suffix: ""`, `distroless: true`,
//! `base: debian` ([`Candidate::beside`]).
//!
//! A digest tagpin writes for a map pins the image its values render now. A user who later
//! sets such a key asks the chart for another image: a digest appended to the tag lands
//! inside the new tag (`1.2@sha256:…-alpine`) or beside another image's tag, and a digest key
//! still pulls the image of the defaults (silently, where the chart drops the tag once a
//! digest is set). So the chart is rendered with the keys changed ([`Render::Switched`]) and
//! read against the names rendering ([`Render::Names`], the same values with no key changed).
//! Where a map's image differs and still holds the tag tagpin appends to, or (rendered again
//! with the digest sentinels, [`Render::SwitchedDigested`]) still pulls the digest key, its
//! edit is taken back. A chart that takes another digest key with the key on (ingress-nginx's
//! `chroot` and `digestChroot`) never pulls the one tagpin wrote: its edit stays.
//!
//! The keys are changed all at once first, the one rendering most charts need. Where that
//! changes a map's image, or the chart refuses it, each key is changed on its own
//! ([`one_key`]): one key may hide another (a `fullOverride` that replaces the whole image
//! hides a `rootless` flag), and the reason names only the keys that change the image.
//!
//! [`Render::Switched`]: super::sentinel::Render::Switched
//! [`Render::SwitchedDigested`]: super::sentinel::Render::SwitchedDigested
//! [`Render::Names`]: super::sentinel::Render::Names

use super::candidates::{Candidate, Shape, ValuesImages};
use super::decide::{Decision, no_digest};
use super::rendered::Rendered;
use super::sentinel;
use crate::EditSite;

/// What changing the keys beside a map did to its image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SwitchChange {
    /// The same image (or the map's edit does not need to know).
    Unchanged,
    /// The map is no longer in any image (the keys replace the image whole).
    Gone,
    /// Another image: for a tag edit, one that still holds the tag as written; for a digest
    /// key, whether it still pulls the digest is for [`pulls_the_digest`] to say.
    Changed {
        /// The new image is the old one with more after it (`1.2` → `1.2-alpine`).
        extends: bool,
    },
}

/// Whether a decision writes a digest for a map with keys beside its parts: such maps need
/// the renderings of this module.
pub fn needs_switched(images: &ValuesImages, decisions: &[Decision]) -> bool {
    (0..decisions.len()).any(|i| needs_switched_at(images, decisions, i))
}

/// Whether candidate `i` is one [`needs_switched`] looks for.
pub fn needs_switched_at(images: &ValuesImages, decisions: &[Decision], i: usize) -> bool {
    let (Some(candidate), Some(decision)) = (images.candidates.get(i), decisions.get(i)) else {
        return false;
    };
    !candidate.beside.is_empty() && writes_for_split(&decision.site)
}

fn writes_for_split(site: &EditSite) -> bool {
    matches!(
        site,
        EditSite::SplitTag { .. } | EditSite::SplitDigest { .. } | EditSite::InsertKey { .. }
    )
}

/// `images` with only the `j`th key beside each candidate of `which`, and none beside the
/// others.
pub fn one_key(images: &ValuesImages, which: &[usize], j: usize) -> ValuesImages {
    let mut one = images.clone();
    for (i, candidate) in one.candidates.iter_mut().enumerate() {
        let key = candidate
            .beside
            .get(j)
            .filter(|_| which.contains(&i))
            .cloned();
        candidate.beside = key.into_iter().collect();
    }
    one
}

/// What `switched` ([`Render::Switched`] of `images`) shows of each candidate against
/// `names` ([`Render::Names`]).
///
/// [`Render::Switched`]: super::sentinel::Render::Switched
/// [`Render::Names`]: super::sentinel::Render::Names
pub fn switch_changes(
    images: &ValuesImages,
    decisions: &[Decision],
    names: &Rendered,
    switched: &Rendered,
) -> Vec<SwitchChange> {
    (0..images.candidates.len())
        .map(|i| {
            if !needs_switched_at(images, decisions, i) {
                return SwitchChange::Unchanged;
            }
            change(i, &decisions[i].site, names, switched)
        })
        .collect()
}

fn change(i: usize, site: &EditSite, names: &Rendered, switched: &Rendered) -> SwitchChange {
    let token = sentinel::token(i);
    let before: Vec<String> = names.runs(&token).into_iter().map(|r| r.text).collect();
    let after: Vec<String> = switched.runs(&token).into_iter().map(|r| r.text).collect();
    if after.is_empty() && !before.is_empty() {
        return SwitchChange::Gone;
    }
    // A digest appended to the tag goes wrong only where the tag is still written.
    let holds_the_edit = |text: &str| match site {
        EditSite::SplitTag { tag, .. } => text.contains(tag.as_str()),
        _ => true,
    };
    let Some(new) = after
        .iter()
        .find(|text| !before.contains(text) && holds_the_edit(text))
    else {
        return SwitchChange::Unchanged;
    };
    let extends = before
        .iter()
        .any(|old| new.starts_with(old.as_str()) && new.len() > old.len());
    SwitchChange::Changed { extends }
}

/// Whether candidate `i`'s edit writes a digest key: a [`SwitchChange::Changed`] of it counts
/// only where [`pulls_the_digest`] says so.
pub fn writes_a_digest_key(decisions: &[Decision], i: usize) -> bool {
    decisions.get(i).is_some_and(|d| {
        matches!(
            d.site,
            EditSite::SplitDigest { .. } | EditSite::InsertKey { .. }
        )
    })
}

/// Whether, in `digested` ([`Render::SwitchedDigested`]), candidate `i`'s image still pulls
/// its digest key.
///
/// [`Render::SwitchedDigested`]: super::sentinel::Render::SwitchedDigested
pub fn pulls_the_digest(i: usize, digested: &Rendered) -> bool {
    let hex = sentinel::digest_hex(i);
    digested
        .runs(&sentinel::token(i))
        .iter()
        .any(|run| run.text.contains(&hex))
}

/// Takes back the edit of each candidate whose image changed with one of its keys alone:
/// `changed[i]` holds, for candidate `i`, the indexes into its [`Candidate::beside`] whose
/// change gave another image, and whether one of them only added to the tag.
pub fn take_back_switched(
    images: &ValuesImages,
    decisions: &mut [Decision],
    changed: &[(Vec<usize>, bool)],
) {
    for ((candidate, decision), (keys, extends)) in
        images.candidates.iter().zip(decisions).zip(changed)
    {
        if keys.is_empty() || !writes_for_split(&decision.site) {
            continue;
        }
        let Shape::Split { digest, .. } = &candidate.shape else {
            continue;
        };
        let keys = named(candidate, keys);
        let reason = if matches!(decision.site, EditSite::SplitTag { .. }) {
            let (what, then) = if *extends {
                (
                    "more after this map's tag in the image",
                    "land inside the tag",
                )
            } else {
                ("another image for this map", "pin the wrong image")
            };
            format!(
                "the chart writes {what} once {keys} changes from its value here, so a digest \
                 appended to the tag would {then} then, and {}",
                no_digest(digest.is_some())
            )
        } else {
            let key = digest.as_ref().map_or("digest", |d| d.key.as_str());
            format!(
                "the chart writes another image for this map once {keys} changes from its value \
                 here, and the digest written in `{}.{key}` would pull the image of these values \
                 in its place",
                candidate.dotted()
            )
        };
        decision.site = EditSite::Unsupported { reason };
    }
}

/// The keys `keys` (indexes into `candidate.beside`) as `` `image.suffix` ``, joined with "or".
fn named(candidate: &Candidate, keys: &[usize]) -> String {
    let dotted = candidate.dotted();
    let names: Vec<String> = keys
        .iter()
        .filter_map(|&j| candidate.beside.get(j))
        .map(|(key, _)| format!("`{dotted}.{key}`"))
        .collect();
    names.join(" or ")
}
