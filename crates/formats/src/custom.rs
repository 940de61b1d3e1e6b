//! User-defined patterns (the config's `custom:` entries): a regex over any text file whose
//! named groups say where the reference is.
//!
//! - `ref`: the whole reference, written in place like any other;
//! - `name`, with `tag` and/or `digest`: the parts written apart (`IMAGE=ghcr.io/a/b` and
//!   `TAG=1.2` on one line, say). The reference is `name:tag@digest`; the digest is written
//!   into the `digest` group when it matched (an empty match included), appended after the tag
//!   otherwise (`tag@sha256:…`). With neither a tag nor a digest there is nowhere to write: the
//!   reference is reported, not written.
//!
//! Patterns are multi-line (`^`/`$` match at line boundaries, before `\r\n` too). A match whose
//! reference overlaps one found earlier (by an earlier pattern or match) is not reported
//! twice. `# tagpin:ignore` on the line ignores it, as in shell files.

use std::ops::Range;

use regex::{Regex, RegexBuilder};

use crate::EditSite;
use crate::common::{Found, Sink};

/// A compiled `custom` pattern.
#[derive(Clone, Debug)]
pub struct CustomPattern {
    regex: Regex,
}

/// Why a `custom` pattern was refused.
#[derive(Debug, thiserror::Error)]
pub enum CustomPatternError {
    #[error("invalid regex")]
    Regex(#[source] regex::Error),
    #[error("the pattern has no named group `ref` or `name`")]
    NoGroup,
    #[error("the pattern has both a `ref` and a `name` group; use one")]
    BothGroups,
}

impl CustomPattern {
    /// Compiles `pattern`, which must have a named group `ref` or `name` (not both).
    pub fn new(pattern: &str) -> Result<Self, CustomPatternError> {
        let regex = RegexBuilder::new(pattern)
            .multi_line(true)
            .crlf(true)
            .build()
            .map_err(CustomPatternError::Regex)?;
        let names: Vec<&str> = regex.capture_names().flatten().collect();
        match (names.contains(&"ref"), names.contains(&"name")) {
            (false, false) => Err(CustomPatternError::NoGroup),
            (true, true) => Err(CustomPatternError::BothGroups),
            _ => Ok(Self { regex }),
        }
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        self.regex.as_str()
    }
}

pub(crate) fn scan(sink: &mut Sink<'_>, patterns: &[CustomPattern]) {
    let text = sink.text;
    let mut taken: Vec<Range<usize>> = Vec::new();
    for pattern in patterns {
        for captures in pattern.regex.captures_iter(text) {
            let found = if let Some(whole) = captures.name("ref") {
                Found::inline(whole.range(), whole.as_str())
            } else {
                parts(
                    captures.name("name").map(|m| m.range()),
                    captures.name("tag").map(|m| m.range()),
                    captures.name("digest").map(|m| m.range()),
                    text,
                )
            };
            let Some(found) = found else { continue };
            if found.span.is_empty()
                || taken
                    .iter()
                    .any(|t| t.start < found.span.end && found.span.start < t.end)
            {
                continue;
            }
            taken.push(found.span.clone());
            sink.push(found);
        }
    }
}

/// The reference written in parts: `name` (required), `tag`, `digest`.
fn parts(
    name: Option<Range<usize>>,
    tag: Option<Range<usize>>,
    digest: Option<Range<usize>>,
    text: &str,
) -> Option<Found> {
    let name = name.filter(|name| !name.is_empty())?;
    let tag = tag.filter(|tag| !tag.is_empty());
    let mut full = text[name.clone()].to_owned();
    if let Some(tag) = &tag {
        full.push(':');
        full.push_str(&text[tag.clone()]);
    }
    if let Some(digest) = digest.as_ref().filter(|d| !d.is_empty()) {
        full.push('@');
        full.push_str(&text[digest.clone()]);
    }
    let mut found = Found::inline(name.clone(), &full)?;
    found.also_lines = [tag.as_ref(), digest.as_ref()]
        .into_iter()
        .flatten()
        .map(|part| part.start)
        .collect();
    found.site = match (digest, tag) {
        (Some(digest), _) => EditSite::SplitDigest {
            span: digest,
            bare: false,
        },
        (None, Some(tag)) => EditSite::SplitTag {
            tag: text[tag.clone()].to_owned(),
            span: tag,
        },
        (None, None) => EditSite::Unsupported {
            reason: "the pattern matched no `tag` or `digest` group to write the digest into"
                .to_owned(),
        },
    };
    Some(found)
}
