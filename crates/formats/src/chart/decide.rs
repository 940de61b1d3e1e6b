//! From three renderings of a chart, what each values candidate becomes and what tagpin may
//! write for it (the decision table of the chart-aware rules).
//!
//! | what the renderings show | the edit |
//! |---|---|
//! | the map is not rendered as an image | none: "not rendered as an image" |
//! | its digest key renders (`@sha256:<value>` or `@sha256:sha256:<value>`) | the digest into that key, in the form the template needs (`sha256:<hex>` or `<hex>`) |
//! | no digest key renders, the tag is written and builds nothing but the image | `@sha256:…` appended to the tag |
//! | no digest key renders, the tag comes from the chart (`appVersion`) | none |
//! | no digest key renders, the tag also feeds something else (a label, `version:`) | none, naming where |
//! | no digest key renders, the chart writes more after the tag (`-alpine`) | none |
//! | a digest key with no value (`digest:`) renders | the digest, quoted, in its place |
//! | a key beside the map picks another image ([`super::switched`], more renderings) | none, naming the key |
//! | a string under an image key, used only as the image | `@sha256:…` appended to it |

use std::ops::Range;

use tagpin_reference::ImageReference;

use super::candidates::{Candidate, Part, Shape, ValuesImages};
use super::rendered::{Image, Rendered, Run};
use super::sentinel;
use crate::EditSite;

/// The renderings [`decide`] reads (see [`sentinel::Render`]).
#[derive(Clone, Debug, Default)]
pub struct Renderings {
    pub sentinels: Rendered,
    pub names: Rendered,
    pub undigested: Rendered,
}

/// Where the tag a chart renders for a map comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TagSource {
    /// Written in the values.
    Values,
    /// The values leave it empty and the chart uses its `appVersion` (perhaps with a prefix).
    AppVersion,
    /// The values leave it empty and the chart picks it some other way.
    Chart,
}

/// What a values candidate becomes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// The span of the finding it replaces (the name scalar, or the string).
    pub span: Range<usize>,
    /// What the chart renders, with the digest the values hold: what is resolved and shown.
    pub rendered: Option<ImageReference>,
    pub tag_source: TagSource,
    /// Where the digest goes, or why nowhere.
    pub site: EditSite,
    /// The chart's rendering drops the tag when a digest is set (Bitnami's helper).
    pub drops_tag: bool,
    /// Not written because the value also feeds something that is not this image (a label, a
    /// `version:`, another map's image): the reason says where. Another reading of the chart
    /// (Helm's renderings beside tagpin's own) takes back an edit on this alone.
    pub other_use: bool,
}

/// Why a candidate's edit is refused, and whether it is because the value has another use.
struct Refusal {
    reason: String,
    other_use: bool,
}

impl From<String> for Refusal {
    fn from(reason: String) -> Self {
        Self {
            reason,
            other_use: false,
        }
    }
}

impl Refusal {
    fn other_use(reason: String) -> Self {
        Self {
            reason,
            other_use: true,
        }
    }
}

/// Decides every candidate of `images` by the renderings. `app_version` is the chart's
/// `appVersion`, to name where an empty tag comes from.
pub fn decide(
    images: &ValuesImages,
    renderings: &Renderings,
    app_version: Option<&str>,
) -> Vec<Decision> {
    let name_images = renderings.names.images();
    let undigested_images = renderings.undigested.images();
    // Read only to say why a value is not written, in the rare case it renders in no image.
    let sentinel_images = std::cell::OnceCell::new();
    images
        .candidates
        .iter()
        .enumerate()
        .map(|(i, candidate)| {
            let seen = Seen {
                i,
                names: &name_images,
                undigested: &undigested_images,
                sentinel_images: &sentinel_images,
                renderings,
            };
            seen.decide(candidate, app_version)
        })
        .collect()
}

/// Why a split map's digest cannot go into a digest key: the map has none (whether the chart
/// would render one is not known), or the chart does not render the one it has.
pub(super) fn no_digest(has_digest_key: bool) -> &'static str {
    if has_digest_key {
        "the chart does not render this map's digest key"
    } else {
        "the map has no digest key"
    }
}

/// The part of `shape` that an edit at `site` rewrites.
fn edited_part<'s>(site: &EditSite, shape: &'s Shape) -> Option<&'s Part> {
    match (site, shape) {
        (EditSite::Inline, Shape::Inline(part)) => Some(part),
        (EditSite::SplitTag { .. }, Shape::Split { tag, .. }) => tag.as_ref(),
        (
            EditSite::SplitDigest { .. } | EditSite::InsertKey { .. },
            Shape::Split { digest, .. },
        ) => digest.as_ref(),
        _ => None,
    }
}

/// The images of each rendering, seen from candidate `i`.
struct Seen<'a> {
    i: usize,
    names: &'a [Image],
    undigested: &'a [Image],
    /// The images of the sentinel rendering, read when first needed.
    sentinel_images: &'a std::cell::OnceCell<Vec<Image>>,
    renderings: &'a Renderings,
}

/// How a digest value shows in a rendered reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DigestForm {
    /// Not at all: the template does not use the key (or only under a condition).
    Absent,
    /// `@sha256:<value>`: the value is written `sha256:<hex>`.
    Prefixed,
    /// `@sha256:sha256:<value>`: the template adds `sha256:`; the value is bare hex.
    Bare,
}

impl Seen<'_> {
    fn decide(&self, candidate: &Candidate, app_version: Option<&str>) -> Decision {
        let unsupported = |reason: String| Decision {
            span: candidate.span.clone(),
            rendered: None,
            tag_source: TagSource::Values,
            site: EditSite::Unsupported { reason },
            drops_tag: false,
            other_use: false,
        };
        let lines = self.renderings.sentinels.runs(&sentinel::token(self.i));
        if lines.is_empty() {
            return unsupported(
                "the chart's templates do not render this value as an image (with its default \
                 values, `enabled` flags on)"
                    .to_owned(),
            );
        }
        let (target, used_tag) = match self.target() {
            Ok(target) => target,
            Err(_) if !self.in_an_image() => {
                let run = &lines[0];
                let source = &self.renderings.sentinels.documents[run.document].source;
                return unsupported(format!(
                    "the chart renders this value in no image field, only in text (`{}` in \
                     {source}): tagpin writes digests into images only",
                    sentinel::mask(&run.text)
                ));
            }
            Err(reason) => return unsupported(reason),
        };
        let (split, part) = match &candidate.shape {
            Shape::Inline(part) => (None, part),
            Shape::Split {
                tag, digest, name, ..
            } => (
                Some(Split {
                    tag: tag.as_ref(),
                    digest: digest.as_ref(),
                    used_tag,
                    app_version,
                }),
                name,
            ),
        };
        let tag_source = split
            .as_ref()
            .map_or(TagSource::Values, |s| s.tag_source(&target));
        let rendered = match &split {
            Some(split) => split.with_digest(target),
            None => Ok(target),
        };
        let rendered = match rendered {
            Ok(rendered) => rendered,
            Err(reason) => return unsupported(reason),
        };
        let mut decision = Decision {
            span: candidate.span.clone(),
            rendered: Some(rendered),
            tag_source,
            site: EditSite::Inline,
            drops_tag: false,
            other_use: false,
        };
        let site = match &split {
            None => self.inline(part, &lines),
            Some(split) => self.split(split, &lines).map(|(site, drops_tag)| {
                decision.drops_tag = drops_tag;
                site
            }),
        };
        let site = site.and_then(|site| match edited_part(&site, &candidate.shape) {
            Some(Part {
                shared: Some(reason),
                ..
            }) => Err(Refusal::other_use(reason.clone())),
            _ => Ok(site),
        });
        match site {
            Ok(site) => decision.site = site,
            Err(refusal) => {
                decision.site = EditSite::Unsupported {
                    reason: refusal.reason,
                };
                decision.other_use = refusal.other_use;
            }
        }
        decision
    }

    /// Whether some image of the sentinel rendering holds the candidate's value.
    fn in_an_image(&self) -> bool {
        let token = sentinel::token(self.i);
        self.sentinel_images
            .get_or_init(|| self.renderings.sentinels.images())
            .iter()
            .any(|image| image.finding.text.contains(&token))
    }

    /// What the chart renders for the candidate with its own values and no digest: one
    /// reference, however many lines use it, and the tag in it.
    fn target(&self) -> Result<(ImageReference, Option<String>), String> {
        let token = sentinel::token(self.i);
        let names: Vec<&Image> = self
            .names
            .iter()
            .filter(|image| image.finding.text.contains(&token))
            .collect();
        if names.is_empty() {
            return Err("the chart renders this value only with other values".to_owned());
        }
        let mut target: Option<ImageReference> = None;
        for image in &names {
            let counterpart = self
                .undigested
                .iter()
                .find(|u| u.document == image.document && u.index == image.index)
                .ok_or("the chart renders this value differently from one rendering to the next")?;
            let reference = counterpart
                .finding
                .reference
                .clone()
                .filter(|_| counterpart.finding.status != crate::Status::Templated)
                .ok_or_else(|| {
                    format!(
                        "the chart renders `{}`, which is not an image reference",
                        counterpart.finding.text
                    )
                })?;
            match &target {
                Some(first) if first.as_written() != reference.as_written() => {
                    return Err(format!(
                        "the chart renders this value as two different images, `{first}` and \
                         `{reference}`"
                    ));
                }
                Some(_) => {}
                None => target = Some(reference),
            }
        }
        let target = target.expect("names is not empty");
        let used_tag = names[0]
            .finding
            .reference
            .as_ref()
            .and_then(|r| r.tag())
            .map(str::to_owned);
        Ok((target, used_tag))
    }

    /// Where `needle` shows outside the candidate's image lines.
    fn elsewhere(&self, needle: &str, lines: &[Run]) -> Option<String> {
        let skip: Vec<(usize, Range<usize>)> = lines
            .iter()
            .map(|run| (run.document, run.span.clone()))
            .collect();
        let found = self.renderings.sentinels.occurrences(needle, &skip);
        found.first().map(|(document, line)| {
            let source = &self.renderings.sentinels.documents[*document].source;
            // The sentinels mean nothing to a reader: show where the value goes.
            let what = if sentinel::names_an_image(line) {
                "the image of another values map"
            } else {
                "which is not an image"
            };
            format!("`{}` in {source}, {what}", sentinel::mask(line))
        })
    }

    fn inline(&self, part: &Part, lines: &[Run]) -> Result<EditSite, Refusal> {
        if let Some(other) = self.elsewhere(&sentinel::tag(self.i), lines) {
            return Err(Refusal::other_use(format!("the value also feeds {other}")));
        }
        // The string must end the reference: a digest appended to it lands in the middle of
        // `{{ .image }}:{{ .imageTag }}`.
        let whole = format!("{}:{}", sentinel::repository(self.i), sentinel::tag(self.i));
        if let Some(suffix) = lines.iter().find_map(|l| reference_after(&l.text, &whole)) {
            return Err(format!(
                "the chart writes `{suffix}` after this value in the image, so a digest \
                 appended to it would land inside the reference"
            )
            .into());
        }
        if part.decoded {
            return Err(crate::rules::UNSUPPORTED_ESCAPES.to_owned().into());
        }
        Ok(EditSite::Inline)
    }

    /// The site for a split map, and whether the chart drops the tag when a digest is set.
    fn split(&self, split: &Split<'_>, lines: &[Run]) -> Result<(EditSite, bool), Refusal> {
        let form = self.digest_form(lines)?;
        let tag_token = sentinel::tag(self.i);
        let tag_in_image = lines.iter().all(|l| l.text.contains(&tag_token));
        let usable_digest = split
            .digest
            .filter(|d| !(d.decoded || d.plain && d.span.is_empty() && d.around_null.is_none()));
        if let (Some(digest), true) = (usable_digest, form != DigestForm::Absent) {
            if let Some(other) = self.elsewhere(&sentinel::digest_hex(self.i), lines) {
                return Err(Refusal::other_use(format!("the digest also feeds {other}")));
            }
            // With every part set, a rendering without the tag is a helper that drops it when
            // a digest is set (Bitnami's `common.images.image`).
            let drops_tag = lines.iter().all(|l| {
                ImageReference::parse(&l.text.replace("sha256:sha256:", "sha256:"))
                    .is_ok_and(|r| r.tag().is_none())
            });
            let bare = form == DigestForm::Bare;
            let site = match digest.around_null {
                // `digest:` with no value: a quoted value goes in its place.
                Some((before, after)) if !bare => EditSite::InsertKey {
                    at: digest.span.start,
                    before: format!("{before}\""),
                    after: format!("\"{after}"),
                },
                Some(_) => {
                    return Err("the chart adds `sha256:` to this map's digest, and its \
                                `digest:` key has no value to replace (write `digest: \"\"`)"
                        .to_owned()
                        .into());
                }
                None => EditSite::SplitDigest {
                    span: digest.span.clone(),
                    bare,
                },
            };
            return Ok((site, drops_tag));
        }
        let Some(tag) = split.tag.filter(|t| !t.is_empty()) else {
            let used = split.used_tag.as_deref().unwrap_or("latest");
            let source = match split.tag_source_of_empty() {
                TagSource::AppVersion => format!("the chart's appVersion (`{used}`)"),
                _ => match split
                    .app_version
                    .filter(|v| !v.is_empty() && used.contains(v))
                {
                    Some(version) => format!(
                        "the chart's appVersion (`{version}`) and more the chart adds to it \
                         (the tag is `{used}`)"
                    ),
                    None => format!(
                        "outside this map (`{used}`: another value, the chart, or the \
                         cluster's Kubernetes version)"
                    ),
                },
            };
            return Err(format!("the tag comes from {source}, and {}", split.no_digest()).into());
        };
        if !tag_in_image {
            return Err("the chart does not render this map's tag in the image"
                .to_owned()
                .into());
        }
        if let Some(suffix) = lines.iter().find_map(|l| text_after(&l.text, &tag_token)) {
            return Err(format!(
                "the chart writes `{suffix}` after this map's tag in the image, so a digest \
                 appended to the tag would land inside the tag, and {}",
                split.no_digest()
            )
            .into());
        }
        if let Some(other) = self.elsewhere(&tag_token, lines) {
            return Err(Refusal::other_use(format!(
                "the tag also feeds {other}, and {}",
                split.no_digest()
            )));
        }
        if tag.decoded {
            return Err(crate::rules::UNSUPPORTED_ESCAPES.to_owned().into());
        }
        let site = EditSite::SplitTag {
            span: tag.span.clone(),
            tag: tag.text.clone(),
        };
        Ok((site, false))
    }

    /// How the digest sentinel shows in every image line (the same in all, or an error).
    fn digest_form(&self, lines: &[Run]) -> Result<DigestForm, String> {
        let hex = sentinel::digest_hex(self.i);
        let mut form = None;
        for line in lines {
            let text = &line.text;
            let this = if text.contains(&format!("sha256:sha256:{hex}")) {
                DigestForm::Bare
            } else if text.contains(&format!("sha256:{hex}")) {
                DigestForm::Prefixed
            } else if text.contains(&hex) {
                return Err(format!(
                    "the chart renders the digest in a form tagpin does not know: `{text}`"
                ));
            } else {
                DigestForm::Absent
            };
            if form.is_some_and(|f| f != this) {
                return Err(
                    "the chart renders the digest differently in different places".to_owned(),
                );
            }
            form = Some(this);
        }
        Ok(form.unwrap_or(DigestForm::Absent))
    }
}

/// What a rendered reference holds right after `tag` inside its tag (`-alpine` in
/// `app:1.2-alpine`), if anything.
fn text_after<'l>(line: &'l str, tag: &str) -> Option<&'l str> {
    let is_tag_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-');
    line.match_indices(tag).find_map(|(at, _)| {
        let rest = &line[at + tag.len()..];
        let end = rest.find(|c: char| !is_tag_char(c)).unwrap_or(rest.len());
        (end > 0).then(|| &rest[..end])
    })
}

/// What a rendered reference holds right after `value` (`:8.5.1` in `app:8.5.1`), if
/// anything.
fn reference_after<'l>(line: &'l str, value: &str) -> Option<&'l str> {
    let is_reference_char =
        |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | ':' | '/' | '@');
    line.match_indices(value).find_map(|(at, _)| {
        let rest = &line[at + value.len()..];
        let end = rest
            .find(|c: char| !is_reference_char(c))
            .unwrap_or(rest.len());
        (end > 0).then(|| &rest[..end])
    })
}

/// A split map's tag and digest parts, and the tag the chart renders.
struct Split<'a> {
    tag: Option<&'a Part>,
    digest: Option<&'a Part>,
    used_tag: Option<String>,
    app_version: Option<&'a str>,
}

impl Split<'_> {
    fn tag_source(&self, target: &ImageReference) -> TagSource {
        if self.tag.is_some_and(|t| !t.is_empty()) {
            return TagSource::Values;
        }
        self.source_of(target.tag().unwrap_or_default())
    }

    /// See [`no_digest`].
    fn no_digest(&self) -> &'static str {
        no_digest(self.digest.is_some())
    }

    fn tag_source_of_empty(&self) -> TagSource {
        self.source_of(self.used_tag.as_deref().unwrap_or_default())
    }

    /// Whether `tag` is the chart's appVersion (perhaps after a one-letter prefix, `v`).
    fn source_of(&self, tag: &str) -> TagSource {
        match self.app_version {
            Some(version)
                if !version.is_empty()
                    && tag
                        .strip_suffix(version)
                        .is_some_and(|prefix| prefix.len() <= 1) =>
            {
                TagSource::AppVersion
            }
            _ => TagSource::Chart,
        }
    }

    /// The rendered reference with the digest the values hold (`sha256:` added to bare hex).
    fn with_digest(&self, target: ImageReference) -> Result<ImageReference, String> {
        let Some(digest) = self.digest.filter(|d| !d.is_empty()) else {
            return Ok(target);
        };
        if target.digest().is_some() {
            return Ok(target);
        }
        let value = if digest.text.contains(':') {
            digest.text.clone()
        } else {
            format!("sha256:{}", digest.text)
        };
        ImageReference::parse(&format!("{target}@{value}")).map_err(|error| {
            format!(
                "the values' digest `{}` is not a digest: {error}",
                digest.text
            )
        })
    }
}
