//! Chart-aware Helm values: how a chart's templates turn each values map into an image, learnt
//! by rendering the chart, and the proof that an edit to its values changes nothing else.
//!
//! This module is pure: it writes the values to render with ([`overrides`]), reads what a
//! renderer printed ([`Rendered::parse`]), decides ([`decide`]) and proves ([`prove`]). The
//! binary runs the renderer (`helm template`) and applies the decisions to a values file's
//! findings ([`apply`]).
//!
//! ```text
//! values.yaml ──values_images──> candidates ──overrides(Sentinels|Names|Undigested)──> render ×3
//!                                     │                                                  │
//!                                     └────────────────────decide────────────────────────┘
//!                                                            │
//!                 findings of values.yaml ──apply──> chart-aware findings ──resolve, edit──>
//!                 edited values.yaml ──render──> prove(original rendering, edited rendering)
//! ```

mod candidates;
mod constraint;
mod decide;
mod embedded;
mod evaluate;
mod prove;
mod rendered;
mod sentinel;
mod static_render;
mod switched;
mod to_yaml;
mod values_json;

pub use crate::rules::chart_values::ChartSource;
pub(crate) use candidates::Collect;
pub use candidates::{Beside, Candidate, Part, Shape, ValuesImages, overlay_images, values_images};
pub use constraint::satisfies;
pub use decide::{Decision, Renderings, TagSource, decide};
pub use embedded::{EmbeddedValues, embedded_values};
pub use prove::{Expected, prove};
pub use rendered::{Document, Image, Rendered};
pub use sentinel::{Render, overrides};
pub use static_render::{
    Plan as StaticPlan, StaticRendering, TPL_SOURCE, Template, plan as plan_statically,
    plan_for as plan_statically_for, render as render_statically,
};
pub use switched::{
    SwitchChange, needs_switched, needs_switched_at, one_key, pulls_the_digest, switch_changes,
    take_back_switched, writes_a_digest_key,
};
pub use values_json::{ValuesFile, plain_document, values_json};

use crate::{EditSite, Finding, Status};

/// Replaces the findings of a chart's values file by the chart's decisions: a finding whose
/// span a decision names takes its rendered reference, status and edit site. Every other
/// split map the key-name rules saw is left unwritable: the chart does not show it as an
/// image. Strings the candidates leave out keep their edit.
pub fn apply(findings: &mut [Finding], decisions: &[Decision]) {
    apply_within(findings, decisions, &(0..usize::MAX));
}

/// Findings for the split maps that the chart renders as images but that the key-name rules
/// did not report, being under a key that does not say image (`redis: {repository, tag}`);
/// [`apply`] then gives them the chart's decisions. A `# tagpin:ignore` comment on any of a
/// map's lines is honoured as for any finding.
pub fn unseen_findings(
    text: &str,
    images: &ValuesImages,
    decisions: &[Decision],
    existing: &[Finding],
) -> Vec<Finding> {
    let mut sink = crate::common::Sink::new(text, crate::FileKind::Yaml);
    for (candidate, decision) in images.candidates.iter().zip(decisions) {
        let seen = existing.iter().any(|f| f.span == candidate.span);
        let Shape::Split {
            registry,
            name,
            image,
            tag,
            digest,
        } = &candidate.shape
        else {
            continue;
        };
        let not_followed = matches!(&decision.site, EditSite::Unsupported { reason } if reason.starts_with("not proven: "));
        let floating = floating_reference(
            registry.as_ref(),
            name,
            image.as_ref(),
            tag.as_ref(),
            digest.as_ref(),
        );
        let shown = match &decision.rendered {
            // An overlay's tag that the image does not show (the chart renders the base's
            // digest alone) is nothing of the overlay's to report.
            Some(rendered) => !candidate.overlaid || rendered.tag().is_some(),
            // A map an overlay sets the tag of, or a repository with its tag, is an image even
            // when the reading could not follow it; one it followed and found in no image is
            // not reported.
            None => (candidate.overlaid || floating.is_some()) && not_followed,
        };
        if seen || !shown || decision.span != candidate.span {
            continue;
        }
        // An overlay's part of a map no rendering showed: the name and tag it gives.
        let written = match tag {
            Some(tag) if candidate.overlaid && !tag.is_empty() => crate::common::Found::inline(
                candidate.span.clone(),
                &format!("{}:{}", name.text, tag.text),
            ),
            // A repository with its tag that no rendering showed: what its parts make.
            _ => floating
                .filter(|_| decision.rendered.is_none())
                .and_then(|reference| {
                    crate::common::Found::inline(candidate.span.clone(), &reference)
                }),
        };
        let mut found = written
            .unwrap_or_else(|| crate::common::Found::templated(candidate.span.clone(), &name.text));
        found.also_lines = starts([
            registry.as_ref(),
            image.as_ref(),
            tag.as_ref(),
            digest.as_ref(),
        ]);
        sink.push(found);
    }
    sink.finish()
}

/// Findings for the split maps of `images` that no chart can be rendered for (the chart is
/// not in the repository) and that the key-name rules did not report, being under a key that
/// does not say image: podinfo's `redis: {repository, tag}` in a values file. Only a map whose
/// `repository` and non-empty `tag` (and `registry`) are written as they read, with no digest,
/// and make a reference, is reported; the caller leaves it unwritable with the reason, since
/// only the chart shows what its parts make.
pub fn unrendered_findings(
    text: &str,
    images: &ValuesImages,
    existing: &[Finding],
) -> Vec<Finding> {
    let mut sink = crate::common::Sink::new(text, crate::FileKind::Yaml);
    for candidate in &images.candidates {
        let Shape::Split {
            registry,
            name,
            image: None,
            tag: Some(tag),
            digest,
        } = &candidate.shape
        else {
            continue;
        };
        if existing.iter().any(|f| f.span == candidate.span) {
            continue;
        }
        let reference =
            floating_reference(registry.as_ref(), name, None, Some(tag), digest.as_ref());
        let Some(mut found) = reference
            .and_then(|reference| crate::common::Found::inline(candidate.span.clone(), &reference))
        else {
            continue;
        };
        let parts = [registry.as_ref(), Some(name), Some(tag), digest.as_ref()];
        found.also_lines = starts(parts);
        sink.push(found);
    }
    sink.finish()
}

/// The reference a split map's parts make when they are a `repository` with its `tag` (and a
/// `registry`), each written as it reads, with no digest: tempo's `tempo: {repository, tag}`,
/// podinfo's `redis`. Such a map is floating whatever the chart puts before the name; a pinned
/// one is left out, as the chart may put a registry before the name (cozystack's
/// `global.registry.address`) and `check --online` would look it up where it is not.
fn floating_reference(
    registry: Option<&Part>,
    name: &Part,
    image: Option<&Part>,
    tag: Option<&Part>,
    digest: Option<&Part>,
) -> Option<String> {
    let tag = tag.filter(|tag| !tag.is_empty() && !tag.text.contains('@'))?;
    let literal = [registry, Some(name), Some(tag)]
        .into_iter()
        .flatten()
        .all(|part| !part.decoded && !crate::common::is_templated(&part.text));
    // `{repository, tag}`, or `{registry, image, tag}` (ingress-nginx's shape, telepresence's
    // `hooks.curl`): an image whatever key holds it.
    let named = name.key == "repository" || name.key == "image" && registry.is_some();
    if image.is_some()
        || !named
        || name.is_empty()
        || !literal
        || digest.is_some_and(|digest| !digest.is_empty())
    {
        return None;
    }
    let registry = registry
        .filter(|registry| !registry.is_empty())
        .map(|registry| format!("{}/", registry.text.trim_end_matches('/')))
        .unwrap_or_default();
    Some(format!("{registry}{}:{}", name.text, tag.text))
}

/// Where each of a split map's `parts` starts (its lines count as the finding's, for the ignore
/// comment and the Flux marker).
fn starts<'p>(parts: impl IntoIterator<Item = Option<&'p Part>>) -> Vec<usize> {
    parts
        .into_iter()
        .flatten()
        .map(|part| part.span.start)
        .collect()
}

/// [`apply`] to the findings inside `within` only (the values map of one resource in a file
/// that holds others).
pub fn apply_within(
    findings: &mut [Finding],
    decisions: &[Decision],
    within: &std::ops::Range<usize>,
) {
    for finding in findings
        .iter_mut()
        .filter(|f| within.start <= f.span.start && f.span.end <= within.end)
    {
        if !matches!(
            finding.status,
            Status::Floating | Status::Pinned | Status::DigestOnly | Status::Templated
        ) {
            continue;
        }
        let Some(decision) = decisions.iter().find(|d| d.span == finding.span) else {
            // A string the candidates leave out (in a list, which an override would replace
            // whole) keeps its key-name rules; the proof still sees what it renders.
            if !matches!(
                finding.site,
                EditSite::Unsupported { .. } | EditSite::Inline
            ) {
                finding.site = EditSite::Unsupported {
                    reason: "the chart's templates do not render this value as an image".to_owned(),
                };
            }
            continue;
        };
        // Where the tag comes from is known only when the chart showed the image.
        finding.tag_source = decision.rendered.as_ref().map(|_| decision.tag_source);
        finding.site = decision.site.clone();
        // The chart decided it: what the key names alone could not prove, its rendering does.
        if let Some(extras) = finding.extras.as_deref_mut() {
            extras.unproven = None;
        }
        let Some(rendered) = &decision.rendered else {
            continue;
        };
        if decision.site == EditSite::Inline {
            // A string written whole: its own text is rewritten, what the chart renders is
            // looked up. The key names may have taken it for a part (a whole reference under
            // `repository`, alone): it is read as the reference it is.
            finding.resolve = Some(Box::new(rendered.clone()));
            if finding.reference.is_none() {
                finding.reference = tagpin_reference::ImageReference::parse(&finding.text).ok();
            }
        } else {
            finding.text = rendered.to_string();
            finding.reference = Some(rendered.clone());
        }
        finding.status = match (rendered.tag(), rendered.digest()) {
            (_, None) => Status::Floating,
            (Some(_), Some(_)) => Status::Pinned,
            (None, Some(_)) => Status::DigestOnly,
        };
    }
}

#[cfg(test)]
mod tests;
