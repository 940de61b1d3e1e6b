//! Keys beside a split map that pick another image: `suffix: ""`, `distroless: true`,
//! `base: debian` ([`Candidate::beside`]).
//!
//! A digest tagpin writes for a map pins the image its values render now. A user who later
//! sets such a key gets another image from the chart: a digest appended to the tag lands
//! inside the new tag (`1.2@sha256:…-alpine`) or beside another image's tag, and a digest key
//! pulls the image of the defaults in place of the one asked for. So the chart is rendered
//! with the keys changed ([`Render::Switched`]), against the same rendering with none changed
//! (the baseline); where a map's image differs, its edit is taken back.
//!
//! The keys are changed all at once first, the one rendering most charts need. Where that
//! shows a change, or the chart refuses it, each key is changed on its own ([`one_key`]): one
//! key may hide another (a `fullOverride` that replaces the whole image hides a `rootless`
//! flag), and the reason names only the keys that change the image.
//!
//! [`Render::Switched`]: super::sentinel::Render::Switched

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
    /// Another image that still holds what tagpin would write: the map's digest sentinel,
    /// or its tag as written.
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

/// `images` with no key beside any map: rendered as [`Render::Switched`], the baseline.
///
/// [`Render::Switched`]: super::sentinel::Render::Switched
pub fn baseline(images: &ValuesImages) -> ValuesImages {
    let mut baseline = images.clone();
    for candidate in &mut baseline.candidates {
        candidate.beside.clear();
    }
    baseline
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

/// What `switched` (rendered from `images`) shows of each candidate against `baseline`.
pub fn switch_changes(
    images: &ValuesImages,
    decisions: &[Decision],
    baseline: &Rendered,
    switched: &Rendered,
) -> Vec<SwitchChange> {
    (0..images.candidates.len())
        .map(|i| {
            if !needs_switched_at(images, decisions, i) {
                return SwitchChange::Unchanged;
            }
            change(i, &decisions[i].site, baseline, switched)
        })
        .collect()
}

fn change(i: usize, site: &EditSite, baseline: &Rendered, switched: &Rendered) -> SwitchChange {
    let token = sentinel::token(i);
    let before: Vec<String> = baseline.runs(&token).into_iter().map(|r| r.text).collect();
    let after: Vec<String> = switched.runs(&token).into_iter().map(|r| r.text).collect();
    if after.is_empty() && !before.is_empty() {
        return SwitchChange::Gone;
    }
    // What the edit writes must still be in the new image for it to go wrong there: a chart
    // that takes another digest key with the key on (ingress-nginx's `digestChroot`) never
    // pulls the one tagpin wrote.
    let holds_the_edit = |text: &str| match site {
        EditSite::SplitTag { tag, .. } => text.contains(tag.as_str()),
        _ => text.contains(&sentinel::digest_hex(i)),
    };
    let Some(new) = after
        .iter()
        .find(|text| !before.contains(text) && holds_the_edit(text))
    else {
        return SwitchChange::Unchanged;
    };
    let extends = before.iter().any(|old| {
        let old = old.split('@').next().unwrap_or(old);
        new.starts_with(old) && new.len() > old.len()
    });
    SwitchChange::Changed { extends }
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
