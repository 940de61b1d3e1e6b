//! Docker Compose: `services.*.image` (`local` beside `build:`, which names the image being
//! built, and beside `pull_policy: never` or `build`, an image that is never pulled; so are a
//! build's `tags` and every other use of them), and `image` in `x-*` extension fields, whose values compose ignores except where an
//! alias or a merge key brings them into a service.
//!
//! An image written as a variable with a default, `${AIRFLOW_IMAGE:-apache/airflow:3.1.4}`
//! (compose's interpolation; Airflow's and many apps' published compose files), is the
//! default: that is what runs when the variable is not set, and pinning it there keeps the
//! variable working. Anything else with a `$` is `templated`.
//!
//! A service that opts in to Watchtower's updates (`com.centurylinklabs.watchtower.enable: true`
//! among its labels) is `ignored`, with the reason: Watchtower follows the tag, and skips a
//! container pinned to a digest.
//!
//! A build's named context that is an image (an `additional_contexts` value such as
//! `docker-image://alpine:3.19`) is read after its scheme: `BuildKit` pulls it, and takes a
//! digest there.
//!
//! A build argument that names the base image (`build: {args: {BASE_IMAGE: "alpine:3.20"}}`,
//! or `- BASE_IMAGE=alpine:3.20`), under a key an image key would be in any case
//! (`BASE_IMAGE`, `builder-image`), is the image the Dockerfile's `FROM ${BASE_IMAGE}` pulls:
//! read when its value has a tag or a digest and no variable (`IMAGE: app` may name a local
//! build, `DEV_IMAGE: "false"` a switch).

use super::kubernetes::is_image_key;
use super::{Map, Out, Rules, Seg};
use crate::Status;

pub(crate) struct Compose;

fn is_extension(path: &[Seg<'_>]) -> bool {
    matches!(path.first(), Some(Seg::Key(key)) if key.starts_with("x-"))
}

impl Rules for Compose {
    fn mapping(&self, map: &Map<'_, '_>, out: &mut Out<'_>) {
        if matches!(
            map.path,
            [Seg::Key("services"), Seg::Key(_), Seg::Key("build")]
        ) {
            build_args(map, out);
            build_tags(map, out);
            build_contexts(map, out);
        }
        let service = matches!(map.path, [Seg::Key("services"), Seg::Key(_)]);
        if !service && !is_extension(map.path) {
            return;
        }
        let Some(scalar) = map.scalar("image") else {
            return;
        };
        // Built here, or never pulled (`pull_policy: never`: the image must exist locally,
        // `build`: compose builds it).
        let build = map.has("build")
            || map
                .scalar("pull_policy")
                .is_some_and(|policy| matches!(policy.value, "never" | "build"));
        let text = out.text.get(scalar.span.clone()).unwrap_or_default();
        let (prefix, suffix) = variable_default(text).unwrap_or(("", ""));
        let watched = service && watchtower_enabled(map);
        if let Some(candidate) = out.inline_between(&scalar, prefix, suffix)
            && candidate.found.status != Status::Templated
        {
            if build {
                candidate.found.status = Status::Local;
            } else if watched {
                candidate.found.status = Status::Ignored;
                candidate.found.site = crate::EditSite::Unsupported {
                    reason: WATCHTOWER_UPDATED.to_owned(),
                };
            }
        }
    }

    fn inert(&self, path: &[Seg<'_>]) -> bool {
        is_extension(path)
    }
}

/// Why the image of a service Watchtower updates is not written.
const WATCHTOWER_UPDATED: &str = "updated by Watchtower \
     (`com.centurylinklabs.watchtower.enable: true` on the service): Watchtower pulls this tag \
     again and restarts the service on a new image, and it skips a container pinned to a digest";

/// Whether the service `map` opts in to Watchtower's updates with its label, written as a
/// mapping (`com.centurylinklabs.watchtower.enable: "true"`) or a list
/// (`- com.centurylinklabs.watchtower.enable=true`).
fn watchtower_enabled(map: &Map<'_, '_>) -> bool {
    const LABEL: &str = "com.centurylinklabs.watchtower.enable";
    let Some(labels) = map.get("labels") else {
        return false;
    };
    let is_true = |value: &str| value.trim().eq_ignore_ascii_case("true");
    if map.doc.is_mapping(labels) {
        return map
            .doc
            .value_of(labels, LABEL)
            .and_then(|value| map.doc.scalar(&value))
            .is_some_and(|value| is_true(value.value));
    }
    map.doc.items(labels).iter().any(|item| {
        map.doc
            .scalar(item)
            .and_then(|label| {
                label
                    .value
                    .split_once('=')
                    .map(|(k, v)| (k.trim() == LABEL, is_true(v)))
            })
            .is_some_and(|(key, on)| key && on)
    })
}

/// The build arguments of the `build` mapping `map` that name an image: as a mapping
/// (`BASE_IMAGE: alpine:3.20`) or a list (`- BASE_IMAGE=alpine:3.20`).
fn build_args(map: &Map<'_, '_>, out: &mut Out<'_>) {
    let Some(args) = map.entries.iter().find(|e| e.key == "args") else {
        return;
    };
    let names_an_image = |key: &str| is_image_key(&key.to_ascii_lowercase());
    let doc = map.doc;
    if doc.is_mapping(&args.value) {
        let mut entries = Vec::new();
        doc.entries_into(&args.value, &mut entries);
        for entry in entries.iter().filter(|e| names_an_image(e.key)) {
            if let Some(value) = doc.scalar(&entry.value).filter(|v| pinnable(v.value)) {
                out.inline(&value, "");
            }
        }
        return;
    }
    for item in doc.items(&args.value) {
        let Some(value) = doc.scalar(&item) else {
            continue;
        };
        let Some((key, image)) = value.value.split_once('=') else {
            continue;
        };
        if names_an_image(key) && pinnable(image) {
            let prefix = format!("{key}=");
            out.inline(&value, &prefix);
        }
    }
}

/// The images a service's build pulls as named contexts: `additional_contexts` values
/// `docker-image://alpine:3.19` (a mapping, or a list of `- name=docker-image://…`), pulled
/// as a `FROM` would pull them. The context's name is no image: the CLI marks `local` what
/// the Dockerfile reads by that name.
fn build_contexts(map: &Map<'_, '_>, out: &mut Out<'_>) {
    const SCHEME: &str = "docker-image://";
    let Some(contexts) = map.get("additional_contexts") else {
        return;
    };
    let doc = map.doc;
    if doc.is_mapping(contexts) {
        let mut entries = Vec::new();
        doc.entries_into(contexts, &mut entries);
        for entry in &entries {
            if let Some(value) = doc.scalar(&entry.value) {
                out.inline(&value, SCHEME);
            }
        }
        return;
    }
    for item in doc.items(contexts) {
        let Some(value) = doc.scalar(&item) else {
            continue;
        };
        if let Some((name, _)) = value.value.split_once('=') {
            out.inline(&value, &format!("{name}={SCHEME}"));
        }
    }
}

/// The names a service's build tags its image with (`build: {tags: [app-dev:latest]}`): what
/// the build makes, `local`, and so is every other use of them in the file (a service that
/// runs it with `pull_policy: never`, say).
fn build_tags(map: &Map<'_, '_>, out: &mut Out<'_>) {
    let Some(tags) = map.get("tags") else {
        return;
    };
    for item in map.doc.items(tags) {
        let Some(value) = map.doc.scalar(&item) else {
            continue;
        };
        if let Some(candidate) = out.inline(&value, "")
            && candidate.found.status != Status::Templated
        {
            candidate.found.status = Status::Local;
        }
    }
}

/// Whether a build argument's value is an image to read: a tag or a digest after its last
/// `/`, and no variable.
fn pinnable(value: &str) -> bool {
    let last = value.rsplit('/').next().unwrap_or(value);
    last.contains([':', '@']) && !value.contains('$')
}

/// `${NAME:-DEFAULT}` or `${NAME-DEFAULT}` written whole, with a `DEFAULT` that expands
/// nothing: the text before the default and after it.
fn variable_default(text: &str) -> Option<(&str, &str)> {
    let body = text.strip_prefix("${")?.strip_suffix('}')?;
    let name_end = body
        .bytes()
        .position(|b| !(b.is_ascii_alphanumeric() || b == b'_'))?;
    let name = &body[..name_end];
    if name.is_empty() || name.as_bytes()[0].is_ascii_digit() {
        return None;
    }
    let rest = &body[name_end..];
    let operator = if rest.starts_with(":-") {
        2
    } else if rest.starts_with('-') {
        1
    } else {
        return None;
    };
    let default = &body[name_end + operator..];
    if default.is_empty() || default.contains(['$', '{', '}']) {
        return None;
    }
    Some((&text[..2 + name_end + operator], "}"))
}

#[cfg(test)]
mod tests {
    use super::variable_default;

    #[test]
    fn a_variable_with_a_default_is_told_by_its_text() {
        for (text, expected) in [
            ("${IMAGE:-nginx:1.25}", Some(("${IMAGE:-", "}"))),
            ("${IMAGE-nginx:1.25}", Some(("${IMAGE-", "}"))),
            ("${_I2:-a/b@sha256:00}", Some(("${_I2:-", "}"))),
            ("${IMAGE:-}", None),
            ("${IMAGE:?nginx}", None),
            ("${IMAGE:+nginx}", None),
            ("${IMAGE}", None),
            ("${2X:-nginx}", None),
            ("${:-nginx}", None),
            ("${A:-${B:-nginx}}", None),
            ("${A:-nginx}:1", None),
            ("$IMAGE", None),
            ("nginx:1.25", None),
        ] {
            assert_eq!(variable_default(text), expected, "{text}");
        }
    }
}
