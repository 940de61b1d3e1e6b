//! Images a script needs under their tag: `docker pull nginx:1.25` and then
//! `kind load docker-image nginx:1.25`, `docker tag nginx:1.25 mirror/nginx:1.25` or
//! `docker save nginx:1.25`; a pull that nothing in the file runs (it fetches the image ahead
//! for a test or a compose file that runs it by its tag); and an image run in a script that
//! loads images from an archive (`docker load -i app.tar`), which may be one of them.
//!
//! Pulled (or run) by `nginx:1.25@sha256:…`, the image is stored under its digest only: the
//! container CLIs ignore the tag beside a digest, so no local image is named `nginx:1.25`
//! any more and the later command fails, or pulls the tag again. Such a reference is
//! reported, not written.

use std::ops::Range;

use tagpin_reference::{ImageReference, TagKey};

use crate::common::Sink;
use crate::{EditSite, Status};

/// Makes unwritable the floating findings from `from` on (a script's, found by this module's
/// scanner) that the script needs under their tag (see the module's documentation). Names
/// are compared as a runtime compares them: `redis:7`, `docker.io/library/redis:7` and
/// `index.docker.io/library/redis:7` are one image, and so are `alpine` and `alpine:latest`.
pub(crate) fn mark_named_elsewhere(sink: &mut Sink<'_>, from: usize) {
    let text = sink.text;
    let candidate = |finding: &crate::Finding| {
        is_writable(finding.status, &finding.site) && !finding.text.contains('@')
    };
    if !sink.findings[from..].iter().any(candidate) {
        return;
    }
    // Every writable finding, a workflow's `container: nginx:1.25` too: pinned alike, its
    // place is no use by tag. With whether a script pulls it.
    let writable: Vec<(TagKey, Range<usize>, bool)> = sink
        .findings
        .iter()
        .filter(|finding| is_writable(finding.status, &finding.site))
        .filter_map(|finding| {
            let key = finding.reference.as_ref()?.tag_key();
            let pulled = sink.pulled.contains(&finding.span.start);
            Some((key, finding.span.clone(), pulled))
        })
        .collect();
    let loads = std::cell::OnceCell::new();
    for index in from..sink.findings.len() {
        let finding = &sink.findings[index];
        let Some(reference) = finding.reference.as_ref().filter(|_| candidate(finding)) else {
            continue;
        };
        let key = reference.tag_key();
        let pulled = sink.pulled.contains(&finding.span.start);
        let same = |(other, _, _): &&(TagKey, Range<usize>, bool)| *other == key;
        let elsewhere = spellings(reference).into_iter().find_map(|spelling| {
            whole_names(text, &spelling).find(|at| {
                !writable
                    .iter()
                    .filter(same)
                    .any(|(_, span, _)| span.contains(at))
            })
        });
        let reason = if let Some(at) = elsewhere {
            let (line, _) = sink.position(at);
            format!(
                "the script also names `{}` by its tag (line {line}): pulled by digest, the \
                 image would no longer carry that name locally",
                sink.findings[index].text
            )
        } else if pulled && !writable.iter().filter(same).any(|(_, _, pulled)| !pulled) {
            "pulled here and run nowhere in this file: it is fetched for something else that \
             runs it by its tag, and pulled by digest the image would not carry that tag"
                .to_owned()
        } else if let Some(&at) = (!pulled)
            .then(|| loads.get_or_init(|| archive_load(text)).as_ref())
            .flatten()
        {
            let (line, _) = sink.position(at);
            format!(
                "the script loads images from an archive (line {line}): the image it runs \
                 may be one of them, which a digest would replace with the registry's"
            )
        } else {
            continue;
        };
        sink.findings[index].site = EditSite::Unsupported { reason };
    }
}

/// The ways a script may write the image `reference` names, tag included: with and without
/// Docker Hub's registry (and its old name) and `library/`, and for `latest`, with and
/// without the tag.
fn spellings(reference: &ImageReference) -> Vec<String> {
    let repository = reference.repository();
    let mut names = Vec::new();
    if reference.is_docker_hub() {
        for registry in ["", "docker.io/", "index.docker.io/"] {
            names.push(format!("{registry}{repository}"));
            if let Some(official) = repository.strip_prefix("library/") {
                names.push(format!("{registry}{official}"));
            }
        }
    } else {
        names.push(format!("{}/{repository}", reference.registry()));
    }
    let tag = reference.tag_or_latest();
    let mut spellings: Vec<String> = names.iter().map(|name| format!("{name}:{tag}")).collect();
    if tag == "latest" {
        spellings.extend(names);
    }
    spellings
}

fn is_writable(status: Status, site: &EditSite) -> bool {
    status == Status::Floating && !matches!(site, EditSite::Unsupported { .. })
}

/// Where `text` first loads images from an archive: `docker load` (or podman's, nerdctl's),
/// outside comments.
fn archive_load(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    memchr::memmem::find_iter(bytes, b" load")
        .map(|at| at + 1)
        .find(|&at| {
            let (line, column) = line_around(text, at);
            let before = line[..column].trim_end();
            let cli = before
                .rsplit([' ', '\t', '(', ';', '&', '|', '$', '{'])
                .next();
            cli.is_some_and(|cli| {
                let program = cli.rsplit('/').next().unwrap_or(cli);
                matches!(program, "docker" | "podman" | "nerdctl")
            }) && super::comment_start(line) > column
                && !line[column + "load".len()..].starts_with(|c: char| c.is_alphanumeric())
        })
}

/// The line `at` is on, and `at`'s column in it (in bytes).
fn line_around(text: &str, at: usize) -> (&str, usize) {
    let bytes = text.as_bytes();
    let start = memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |i| i + 1);
    let end = memchr::memchr(b'\n', &bytes[at..]).map_or(text.len(), |i| at + i);
    (&text[start..end], at - start)
}

/// Where `text` holds `name` as a whole name, outside comments: neither byte beside it could
/// continue a reference (`docker.io/nginx:1.25` and `nginx:1.25-alpine` do not name
/// `nginx:1.25`), except a transport that names the local daemon's store
/// (`skopeo copy … docker-daemon:nginx:1.25`).
fn whole_names<'a>(text: &'a str, name: &'a str) -> impl Iterator<Item = usize> + 'a {
    let bytes = text.as_bytes();
    let continues =
        |b: Option<&u8>| b.is_some_and(|&b| b.is_ascii_alphanumeric() || b"_.-/:@".contains(&b));
    text.match_indices(name)
        .map(|(at, _)| at)
        .filter(move |&at| {
            let before = at.checked_sub(1).and_then(|i| bytes.get(i));
            let daemon = text[..at].ends_with("docker-daemon:");
            let (line, column) = line_around(text, at);
            let commented = super::comment_start(line) < column;
            (daemon || !continues(before)) && !continues(bytes.get(at + name.len())) && !commented
        })
}
