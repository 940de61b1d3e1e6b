//! Helm values split maps: an image given in parts that a chart's template joins.
//!
//! A mapping is a split map when
//! - it sits under a key ending in `image`/`Image` (or one level deeper, for an `image:` map of
//!   maps such as csi-driver-nfs's `image.nfs`) and has `repository`, or `registry` + `image`
//!   (ingress-nginx: `{registry, image, tag, digest}`, where `image` is the repository); or
//! - in a resource's chart values (a `HelmRelease`'s), it has `repository` and `tag`; or
//! - anywhere, it has both `repository` and `image` (gpu-operator: `{repository, image,
//!   version}`, which the operator joins as `repository/image:version`), or an `image` that
//!   names no tag and a `tag` (or Elastic's `imageTag`) beside it (`{image: bats/bats, tag:
//!   v1.4.1}`).
//!
//! The reference is `registry/` + name + `:tag` (`version` when there is no `tag`) +
//! `@digest`. With a `digest` scalar (also `""`) the digest is written there
//! ([`EditSite::SplitDigest`]); otherwise it is appended to the tag scalar
//! ([`EditSite::SplitTag`]). No tag and no digest means the chart picks it: `templated`.

use super::kubernetes::is_image_key;
use super::{At, Map, Out, ScalarAt, UNSUPPORTED_ESCAPES};
use crate::EditSite;
use crate::common::{Found, is_templated};
use crate::yaml::tree::Style;

/// Reports `map` if it is a split map.
pub(crate) fn split_map(map: &Map<'_, '_>, out: &mut Out<'_>) {
    let repository = map.scalar("repository");
    let name = map.scalar("image");
    let registry = map.scalar("registry");
    let under_image =
        map.parent().is_some_and(is_image_key) || map.grandparent().is_some_and(is_image_key);
    let gpu_style = repository.is_some() && name.is_some();
    // `{image: bats/bats, tag: v1.4.1}` (grafana's testFramework, redis-ha's exporter): a name
    // that has no tag of its own, and its tag beside it; `imageTag` in Elastic's charts and the
    // old `stable` ones (`image: mysql`, `imageTag: "5.7.30"`).
    let name_and_tag = repository.is_none()
        && registry.is_none()
        && (map.has("tag") || map.has("imageTag"))
        && name
            .as_ref()
            .and_then(|name| out.text.get(name.span.clone()))
            .is_some_and(|name| !name.contains([':', '@']));
    let by_keys = under_image && (repository.is_some() || (name.is_some() && registry.is_some()));
    // In a resource's chart values, a `repository` with its `tag` anywhere (podinfo's
    // `redis: {repository, tag}` in Flux's example `HelmRelease`): left unproven, as every
    // split map there, for the chart's rendering to decide.
    let in_chart_values = out
        .chart_values
        .as_ref()
        .is_some_and(|values| values.contains(map.path));
    // Floating ones only: the chart may put a registry before the name, and `check --online`
    // would look a pinned one up where it is not.
    let repository_and_tag = in_chart_values
        && repository.is_some()
        && map
            .scalar("tag")
            .is_some_and(|tag| !tag.value.is_empty() && !tag.value.contains('@'))
        && !map.has("digest");
    if gpu_style || by_keys || repository_and_tag {
        let before = out.candidates.len();
        split(map, out, gpu_style);
        if let Some(reason) = tag_not_plain(map, gpu_style) {
            for candidate in &mut out.candidates[before..] {
                candidate.found.site = EditSite::Unsupported {
                    reason: reason.to_owned(),
                };
            }
        } else if !gpu_style && !in_chart_values && !out.kubernetes {
            // Outside a Kubernetes object, a map of an image's parts is a chart's values (a
            // values file's, decided by its chart, which takes this back; an overlay given
            // with `-f`) or what another tool joins: either may also print the tag as a label.
            for candidate in &mut out.candidates[before..] {
                if !matches!(candidate.found.site, EditSite::Unsupported { .. }) {
                    candidate.found.unproven = Some(PARTS_UNPROVEN.to_owned());
                }
            }
        }
    } else if name_and_tag {
        // Written only where a chart's rendering shows what the two parts make: the template
        // may put a registry of its own before the name.
        let before = out.candidates.len();
        split(map, out, false);
        for candidate in &mut out.candidates[before..] {
            candidate.found.unproven = Some(NAME_AND_TAG_UNPROVEN.to_owned());
        }
    }
}

/// Why a split map's tag cannot take a digest, for the consumers that read it as a tag alone:
/// `DigitalOcean` App Platform's image spec (`registry_type` beside the parts) has a `digest`
/// field of its own and refuses a tag with one; the NVIDIA GPU operator appends the node's OS
/// to its `driver`'s version (`535.104.05-ubuntu22.04`) unless the version holds a digest, so
/// the digest of the version as written names no image it pulls.
fn tag_not_plain(map: &Map<'_, '_>, gpu_style: bool) -> Option<&'static str> {
    if map.has("registry_type") {
        Some(
            "DigitalOcean App Platform's image spec takes a digest in its own `digest` field, \
             not in `tag`",
        )
    } else if gpu_style && map.parent() == Some("driver") {
        Some(
            "the GPU operator appends the node's OS to the driver's version, so the digest of \
             the version as written names no image it pulls",
        )
    } else {
        None
    }
}

/// Reports the maps under `map`'s image keys whose name part is `name`, beside their `tag`
/// (`image: {name: quay.io/jupyterhub/k8s-hub, tag: "4.1.0"}` in the `JupyterHub` charts;
/// telepresence's `{registry, name, tag}`), with no `repository` or `image`: unproven, as an
/// `{image, tag}` map is. They are found
/// from `map`, whose source holds the image key: their own source may hold none of the words
/// the walk looks for.
pub(crate) fn name_and_tag_maps(map: &Map<'_, '_>, out: &mut Out<'_>) {
    for entry in map.entries.iter().filter(|e| is_image_key(e.key)) {
        if !map.doc.is_mapping(&entry.value) {
            continue;
        }
        let mut entries = Vec::new();
        map.doc.entries_into(&entry.value, &mut entries);
        let mut path = map.path.to_vec();
        path.push(super::Seg::Key(entry.key));
        let child = Map {
            doc: map.doc,
            at: &entry.value,
            path: &path,
            entries: &entries,
            shared: map.shared,
        };
        // Linkerd's `{name, version}` too. Not an Ansible `docker_image` task that builds,
        // loads or removes the image (`source: build`, `state: absent`): none pulls it.
        let pulled = child
            .scalar("source")
            .is_none_or(|source| source.value == "pull")
            && !child.has("build")
            && child
                .scalar("state")
                .is_none_or(|state| state.value != "absent");
        let named = pulled
            && ["repository", "image"].iter().all(|key| !child.has(key))
            && (child.has("tag") || child.has("version"))
            && child
                .scalar("name")
                .and_then(|name| out.text.get(name.span))
                .is_some_and(|name| !name.is_empty() && !name.contains([':', '@']));
        if !named {
            continue;
        }
        let before = out.candidates.len();
        split(&child, out, false);
        for candidate in &mut out.candidates[before..] {
            candidate.found.unproven = Some(NAME_AND_TAG_UNPROVEN.to_owned());
        }
    }
}

pub(crate) const PARTS_UNPROVEN: &str = "not proven: an image given in parts is written only where the \
     chart that joins them shows the reference they make, and no chart of this repository reads \
     this file as its values (a chart may also print the tag as a label)";

const NAME_AND_TAG_UNPROVEN: &str = "not proven: a name with its `tag` beside it is written \
     only where the chart that joins them shows the reference they make";

/// A part's text as written, unless it is empty or null.
fn part<'o>(out: &'o Out<'_>, scalar: Option<&ScalarAt<'_>>) -> Option<&'o str> {
    let scalar = scalar?;
    let raw = out.text.get(scalar.span.clone())?;
    if scalar.style == Style::Plain && matches!(raw, "~" | "null") {
        return None;
    }
    Some(raw).filter(|raw| !raw.is_empty())
}

fn split(map: &Map<'_, '_>, out: &mut Out<'_>, gpu_style: bool) {
    let repository = map.scalar("repository");
    let image = map.scalar("image");
    let registry = map.scalar("registry");
    let tag = map.scalar("tag").or_else(|| map.scalar("version"));
    // Elastic's `{image, imageTag}`: the tag of a name under `image`, and of nothing else.
    let tag = tag.or_else(|| {
        (repository.is_none() && image.is_some())
            .then(|| map.scalar("imageTag"))
            .flatten()
    });
    let digest = map.scalar("digest");
    let name_scalar = if gpu_style {
        repository.clone()
    } else {
        repository
            .clone()
            .or_else(|| image.clone())
            .or_else(|| map.scalar("name"))
    };
    let Some(name_scalar) = name_scalar else {
        return;
    };
    let Some(name) = part(out, Some(&name_scalar)) else {
        return;
    };
    let mut full = String::new();
    if let Some(registry) = part(out, registry.as_ref()) {
        full.push_str(registry.trim_end_matches('/'));
        full.push('/');
    }
    full.push_str(name);
    if gpu_style {
        let Some(image) = part(out, image.as_ref()) else {
            return;
        };
        full.push('/');
        full.push_str(image);
    }
    let tag_text = part(out, tag.as_ref());
    let digest_text = part(out, digest.as_ref());
    if let Some(tag) = tag_text {
        full.push(':');
        full.push_str(tag);
    }
    let bare = digest_text.is_some_and(is_bare_hex);
    if let Some(digest) = digest_text {
        full.push('@');
        // 64 hex digits alone: a template that writes `@sha256:{{ .digest }}`.
        if bare {
            full.push_str("sha256:");
        }
        full.push_str(digest);
    }
    let scalars = [
        Some(&name_scalar),
        registry.as_ref(),
        image.as_ref(),
        tag.as_ref(),
        digest.as_ref(),
    ];
    let masked = scalars.iter().flatten().any(|s| out.masked(s.span.clone()));
    let decoded = scalars.iter().flatten().any(|s| s.decoded);
    let span = name_scalar.span.clone();
    let found = if masked || is_templated(&full) || (tag_text.is_none() && digest_text.is_none()) {
        Found::templated(span, &full)
    } else if let Some(found) = Found::inline(span.clone(), &full) {
        found
    } else if name.starts_with('/') {
        // csi-driver-nfs: `baseRepo` + `/path`, joined by the chart.
        Found::templated(span, &full)
    } else {
        return;
    };
    let mut found = found;
    found.also_lines = scalars.iter().flatten().map(|s| s.span.start).collect();
    if found
        .reference
        .as_ref()
        .is_some_and(super::kubernetes::pulls_always)
    {
        found.pull_policy = pull_policy_edit(map, out);
    }
    let (site, target) = site(out, decoded, tag.as_ref(), digest.as_ref(), bare);
    found.site = site;
    out.push(found, target);
}

/// For a map whose tag is `latest`, the edit that sets its `pullPolicy` (or `imagePullPolicy`)
/// to `IfNotPresent` (`pin --latest pull-policy`): only where the value is `Always` or an empty
/// quoted string, written plainly, in a map reached by one path. A chart passes the value to
/// its containers' `imagePullPolicy`, and the proof by rendering checks that it does.
fn pull_policy_edit(map: &Map<'_, '_>, out: &Out<'_>) -> Option<crate::Edit> {
    if map.shared || !map.at.chain.is_empty() {
        return None;
    }
    let policy = map
        .scalar("pullPolicy")
        .or_else(|| map.scalar("imagePullPolicy"))?;
    let value = out.text.get(policy.span.clone())?;
    let replaceable = match policy.style {
        Style::Plain => value == "Always",
        Style::Single | Style::Double => matches!(value, "Always" | ""),
        Style::Literal | Style::Folded => false,
    };
    // An anchored value may be used elsewhere, as something else.
    let alone = policy.at.chain.is_empty() && !map.doc.tree.node(policy.at.node).anchored;
    if !replaceable || !alone || policy.decoded || out.masked(policy.span.clone()) {
        return None;
    }
    Some(crate::Edit {
        span: policy.span,
        replacement: "IfNotPresent".to_owned(),
    })
}

/// Whether a digest value is a SHA-256 digest's hex digits without the algorithm.
fn is_bare_hex(digest: &str) -> bool {
    digest.len() == 64 && digest.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Where the digest goes, and the scalar that edit rewrites.
fn site(
    out: &Out<'_>,
    decoded: bool,
    tag: Option<&ScalarAt<'_>>,
    digest: Option<&ScalarAt<'_>>,
    bare: bool,
) -> (EditSite, Option<At>) {
    if decoded {
        let reason = UNSUPPORTED_ESCAPES.to_owned();
        return (EditSite::Unsupported { reason }, None);
    }
    if let Some(digest) = digest.filter(|d| d.style != Style::Plain || !d.span.is_empty()) {
        let site = EditSite::SplitDigest {
            span: digest.span.clone(),
            bare,
        };
        return (site, Some(digest.at.clone()));
    }
    if let Some(tag) = tag.filter(|t| !t.span.is_empty()) {
        let site = EditSite::SplitTag {
            span: tag.span.clone(),
            tag: out
                .text
                .get(tag.span.clone())
                .unwrap_or_default()
                .to_owned(),
        };
        return (site, Some(tag.at.clone()));
    }
    let reason = "the split map has no tag or digest scalar to write the digest into".to_owned();
    (EditSite::Unsupported { reason }, None)
}
