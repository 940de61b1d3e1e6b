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

use std::collections::HashMap;

use tagpin_reference::{ImageReference, TagKey};

use crate::common::Sink;
use crate::{EditSite, Status};

/// Makes unwritable the floating findings from `from` on (a script's, found by this module's
/// scanner) that the script needs under their tag (see the module's documentation). Names
/// are compared as a runtime compares them: `redis:7`, `docker.io/library/redis:7` and
/// `index.docker.io/library/redis:7` are one image, and so are `alpine` and `alpine:latest`.
///
/// Linear in the text and the findings: the text's names are read once; a name that is a
/// writable finding's own is passed over, and only one that ends as a candidate's name does
/// (`redis:7`, `alpine`) is parsed.
pub(crate) fn mark_named_elsewhere(sink: &mut Sink<'_>, from: usize) {
    let text = sink.text;
    let candidates: Vec<usize> = (from..sink.findings.len())
        .filter(|&index| {
            let finding = &sink.findings[index];
            is_writable(finding.status, &finding.site)
                && finding
                    .reference
                    .as_ref()
                    .is_some_and(|r| r.digest().is_none())
        })
        .collect();
    if candidates.is_empty() {
        return;
    }
    let mut pulled = sink.pulled.clone();
    pulled.sort_unstable();
    let is_pulled = |start: usize| pulled.binary_search(&start).is_ok();
    // Where the writable findings are, a workflow's `container: nginx:1.25` too: pinned
    // alike, such a place is no use by tag.
    let mut writable: Vec<(usize, usize)> = sink
        .findings
        .iter()
        .filter(|finding| is_writable(finding.status, &finding.site))
        .map(|finding| (finding.span.start, finding.span.end))
        .collect();
    writable.sort_unstable();
    let is_writable_at = |start: usize, end: usize| writable.binary_search(&(start, end)).is_ok();
    // How each candidate's name ends as written (`redis:7`, `alpine`): every spelling of its
    // image ends so, or, for `latest`, as its bare name.
    let tails: Vec<&str> = candidates
        .iter()
        .map(|&index| {
            let written = sink.findings[index].text.as_str();
            let tail = written.rsplit('/').next().unwrap_or(written);
            tail.strip_suffix(":latest").unwrap_or(tail)
        })
        .collect();
    // The candidates' images, once a name or a pull asks.
    let keys: std::cell::OnceCell<Vec<TagKey>> = std::cell::OnceCell::new();
    let candidate_keys = || {
        candidates
            .iter()
            .filter_map(|&index| Some(sink.findings[index].reference.as_ref()?.tag_key()))
            .collect()
    };
    // Without a bare name among them, only a name with a tag can be one: most words of a
    // script (`echo`, `-f`) are passed over at a glance.
    let bare = tails.iter().any(|tail| !tail.contains(':'));
    let mut elsewhere: HashMap<TagKey, usize> = HashMap::new();
    for (at, name) in names(text) {
        if !bare && memchr::memchr(b':', name.as_bytes()).is_none() {
            continue;
        }
        let tail = memchr::memrchr(b'/', name.as_bytes()).map_or(name, |slash| &name[slash + 1..]);
        let tail = tail.strip_suffix(":latest").unwrap_or(tail);
        if !tails.contains(&tail) || is_writable_at(at, at + name.len()) {
            continue;
        }
        let Ok(reference) = ImageReference::parse(name) else {
            continue;
        };
        let key = reference.tag_key();
        let wanted = reference.digest().is_none()
            && !elsewhere.contains_key(&key)
            && keys.get_or_init(candidate_keys).contains(&key);
        let (line, column) = line_around(text, at);
        if wanted && super::comment_start(line) > column {
            elsewhere.insert(key, at);
        }
    }
    // The images something in the file runs (not only pulls), asked of pulled candidates.
    let run: std::cell::OnceCell<Vec<TagKey>> = std::cell::OnceCell::new();
    let runs = || {
        sink.findings
            .iter()
            .filter(|f| is_writable(f.status, &f.site) && !is_pulled(f.span.start))
            .filter_map(|f| Some(f.reference.as_ref()?.tag_key()))
            .collect()
    };
    let loads = archive_load(text);
    if elsewhere.is_empty() && pulled.is_empty() && loads.is_none() {
        return;
    }
    let mut reasons = Vec::new();
    for (&index, key) in candidates.iter().zip(keys.get_or_init(candidate_keys)) {
        let pulled = is_pulled(sink.findings[index].span.start);
        let reason = if let Some(&at) = elsewhere.get(key) {
            Reason::Named(at)
        } else if pulled && !run.get_or_init(runs).contains(key) {
            Reason::PulledOnly
        } else if let Some(at) = loads.filter(|_| !pulled) {
            Reason::Loaded(at)
        } else {
            continue;
        };
        reasons.push((index, reason));
    }
    for (index, reason) in reasons {
        let reason = match reason {
            Reason::Named(at) => {
                let (line, _) = sink.position(at);
                format!(
                    "the script also names `{}` by its tag (line {line}): pulled by digest, \
                     the image would no longer carry that name locally",
                    sink.findings[index].text
                )
            }
            Reason::PulledOnly => "pulled here and run nowhere in this file: it is fetched for \
                 something else that runs it by its tag, and pulled by digest the image would \
                 not carry that tag"
                .to_owned(),
            Reason::Loaded(at) => {
                let (line, _) = sink.position(at);
                format!(
                    "the script loads images from an archive (line {line}): the image it runs \
                     may be one of them, which a digest would replace with the registry's"
                )
            }
        };
        sink.findings[index].site = EditSite::Unsupported { reason };
    }
}

/// Why a finding is not written, with where the text says so.
enum Reason {
    Named(usize),
    PulledOnly,
    Loaded(usize),
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

/// The names `text` holds, with where each starts: the longest runs of bytes a reference may
/// hold (`docker.io/nginx:1.25` and `nginx:1.25-alpine` do not hold the name `nginx:1.25`),
/// a transport taken off: the local daemon's store (`skopeo copy …
/// docker-daemon:nginx:1.25`), or a registry's (`skopeo copy docker://nginx:1.25 …`).
fn names(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let bytes = text.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || {
        at += bytes[at..]
            .iter()
            .position(|&b| NAME_BYTES[usize::from(b)])?;
        let start = at;
        at += bytes[at..]
            .iter()
            .position(|&b| !NAME_BYTES[usize::from(b)])
            .unwrap_or(bytes.len() - at);
        // Only ASCII bytes end a run: the slice is on character boundaries.
        let name = &text[start..at];
        let transport = ["docker-daemon:", "docker://"]
            .iter()
            .find_map(|transport| name.strip_prefix(transport));
        Some(match transport {
            Some(named) => (at - named.len(), named),
            None => (start, name),
        })
    })
}

/// The bytes a reference may hold, by value.
static NAME_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 256 {
        #[expect(clippy::cast_possible_truncation, reason = "below 256")]
        let b = byte as u8;
        table[byte] =
            b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-' | b'/' | b':' | b'@');
        byte += 1;
    }
    table
};
