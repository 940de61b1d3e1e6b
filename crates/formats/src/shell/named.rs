//! Images a script also names by their tag elsewhere: `docker pull nginx:1.25` and then
//! `kind load docker-image nginx:1.25`, `docker tag nginx:1.25 mirror/nginx:1.25` or
//! `docker save nginx:1.25`.
//!
//! Pulled (or run) by `nginx:1.25@sha256:…`, the image is stored under its digest only: the
//! container CLIs ignore the tag beside a digest, so no local image is named `nginx:1.25`
//! any more and the later command fails. Such a reference is reported, not written.

use crate::common::Sink;
use crate::{EditSite, Status};

/// Makes unwritable the floating findings from `from` on (a script's, found by this module's
/// scanner) whose text the sink's text also holds as a whole name somewhere no writable
/// finding of the same text stands.
pub(crate) fn mark_named_elsewhere(sink: &mut Sink<'_>, from: usize) {
    let text = sink.text;
    let writable: Vec<(String, std::ops::Range<usize>)> = sink.findings[from..]
        .iter()
        .filter(|finding| is_writable(finding.status, &finding.site))
        .map(|finding| (finding.text.clone(), finding.span.clone()))
        .chain(
            // A writable finding of another scanner (a workflow's `container: nginx:1.25`)
            // is pinned alike: its place is no use by tag.
            sink.findings[..from]
                .iter()
                .filter(|finding| is_writable(finding.status, &finding.site))
                .map(|finding| (finding.text.clone(), finding.span.clone())),
        )
        .collect();
    for index in from..sink.findings.len() {
        let finding = &sink.findings[index];
        if !is_writable(finding.status, &finding.site) || finding.text.contains('@') {
            continue;
        }
        let elsewhere = whole_names(text, &finding.text).find(|at| {
            !writable
                .iter()
                .any(|(name, span)| *name == finding.text && span.contains(at))
        });
        if let Some(at) = elsewhere {
            let (line, _) = sink.position(at);
            let finding = &mut sink.findings[index];
            finding.site = EditSite::Unsupported {
                reason: format!(
                    "the script also names `{}` by its tag (line {line}): pulled by digest, \
                     the image would no longer carry that name locally",
                    finding.text
                ),
            };
        }
    }
}

fn is_writable(status: Status, site: &EditSite) -> bool {
    status == Status::Floating && !matches!(site, EditSite::Unsupported { .. })
}

/// Where `text` holds `name` as a whole name, outside comments: neither byte beside it could
/// continue a reference (`docker.io/nginx:1.25` and `nginx:1.25-alpine` do not name
/// `nginx:1.25`).
fn whole_names<'a>(text: &'a str, name: &'a str) -> impl Iterator<Item = usize> + 'a {
    let bytes = text.as_bytes();
    let continues =
        |b: Option<&u8>| b.is_some_and(|&b| b.is_ascii_alphanumeric() || b"_.-/:@".contains(&b));
    text.match_indices(name)
        .map(|(at, _)| at)
        .filter(move |&at| {
            let before = at.checked_sub(1).and_then(|i| bytes.get(i));
            let line_start = memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |i| i + 1);
            let line_end = memchr::memchr(b'\n', &bytes[at..]).map_or(text.len(), |i| at + i);
            let commented = super::comment_start(&text[line_start..line_end]) < at - line_start;
            !continues(before) && !continues(bytes.get(at + name.len())) && !commented
        })
}
