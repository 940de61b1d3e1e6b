//! The parser: one pass over the bytes, remembering byte ranges so the written text survives.

use crate::digest::parse_at;
use crate::{DOCKER_HUB, ImageReference, ParseError, ParseErrorKind};

const MAX_NAME_LEN: usize = 255;
const MAX_TAG_LEN: usize = 128;

pub(crate) fn parse(input: &str) -> Result<ImageReference, ParseError> {
    let error = |at: usize, kind| ParseError::new(input, at, kind);
    if input.is_empty() {
        return Err(error(0, ParseErrorKind::Empty));
    }

    // Neither a name nor a tag may contain '@', so the first one starts the digest.
    let (rest, digest) = match input.find('@') {
        Some(at) => (
            &input[..at],
            Some(parse_at(input, &input[at + 1..], at + 1)?),
        ),
        None => (input, None),
    };

    // A tag's ':' comes after the last '/', so a registry port is never mistaken for one.
    let last_slash = rest.rfind('/').map_or(0, |at| at + 1);
    let (name_end, tag) = match rest[last_slash..].find(':') {
        Some(colon) => {
            let colon = last_slash + colon;
            (colon, Some(colon + 1..rest.len()))
        }
        None => (rest.len(), None),
    };
    let name = &rest[..name_end];
    if name.is_empty() {
        return Err(error(0, ParseErrorKind::Empty));
    }
    if name.len() > MAX_NAME_LEN {
        return Err(error(0, ParseErrorKind::NameTooLong { length: name.len() }));
    }
    if let Some(range) = &tag {
        validate_tag(input, range.start, &input[range.clone()])?;
    }

    let (domain, path, path_offset) = split_domain(name);
    if let Some(domain) = domain {
        validate_domain(input, domain)?;
    }
    validate_path(input, path, path_offset)?;

    let registry = match domain {
        None | Some("index.docker.io") => DOCKER_HUB.to_owned(),
        Some(domain) => domain.to_owned(),
    };
    let repository = if registry == DOCKER_HUB && !path.contains('/') {
        format!("library/{path}")
    } else {
        path.to_owned()
    };

    Ok(ImageReference {
        written: input.to_owned(),
        name: 0..name_end,
        tag,
        digest,
        registry,
        repository,
    })
}

/// Splits `name` into its domain (if the first component is one) and path, with the path's offset.
///
/// As in Docker, the first component is a domain when it contains `.` or `:`, is `localhost`,
/// or has an uppercase letter (a path component never can).
fn split_domain(name: &str) -> (Option<&str>, &str, usize) {
    let Some(slash) = name.find('/') else {
        return (None, name, 0);
    };
    let first = &name[..slash];
    let is_domain = first.contains(['.', ':'])
        || first == "localhost"
        || first.bytes().any(|b| b.is_ascii_uppercase());
    if is_domain {
        (Some(first), &name[slash + 1..], slash + 1)
    } else {
        (None, name, 0)
    }
}

fn validate_domain(input: &str, domain: &str) -> Result<(), ParseError> {
    let error = |at: usize, kind| ParseError::new(input, at, kind);
    // An IPv6 literal in brackets, optionally with a port.
    let (host, port_at) = if let Some(inner) = domain.strip_prefix('[') {
        let Some(close) = inner.find(']') else {
            return Err(error(0, ParseErrorKind::InvalidDomain));
        };
        let address = &inner[..close];
        if address.is_empty() || !address.bytes().all(|b| b.is_ascii_hexdigit() || b == b':') {
            return Err(error(1, ParseErrorKind::InvalidDomain));
        }
        let after = close + 2;
        match &domain[after..] {
            "" => return Ok(()),
            rest if rest.starts_with(':') => (&domain[..after], Some(after)),
            _ => return Err(error(after, ParseErrorKind::InvalidDomain)),
        }
    } else {
        match domain.find(':') {
            Some(colon) => (&domain[..colon], Some(colon)),
            None => (domain, None),
        }
    };

    if !host.starts_with('[') {
        let mut offset = 0;
        for label in host.split('.') {
            let valid = !label.is_empty()
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
                && !label.starts_with('-')
                && !label.ends_with('-');
            if !valid {
                return Err(error(offset, ParseErrorKind::InvalidDomain));
            }
            offset += label.len() + 1;
        }
    }
    if let Some(colon) = port_at {
        let port = &domain[colon + 1..];
        if port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) {
            return Err(error(colon + 1, ParseErrorKind::InvalidPort));
        }
    }
    Ok(())
}

/// Path components are `[a-z0-9]+` joined by `.`, `_`, `__` or one or more `-`.
fn validate_path(input: &str, path: &str, offset: usize) -> Result<(), ParseError> {
    let error = |at: usize, kind| ParseError::new(input, offset + at, kind);
    let mut start = 0;
    for component in path.split('/') {
        if component.is_empty() {
            return Err(error(start, ParseErrorKind::EmptyPathComponent));
        }
        let bytes = component.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            match b {
                b'a'..=b'z' | b'0'..=b'9' => i += 1,
                b'A'..=b'Z' => return Err(error(start + i, ParseErrorKind::UppercasePath)),
                b'.' | b'_' | b'-' => {
                    let run_end = bytes[i..]
                        .iter()
                        .position(|b| !matches!(b, b'.' | b'_' | b'-'))
                        .map_or(bytes.len(), |n| i + n);
                    let run = &component[i..run_end];
                    let valid_run =
                        matches!(run, "." | "_" | "__") || run.bytes().all(|b| b == b'-');
                    if i == 0 || run_end == bytes.len() || !valid_run {
                        return Err(error(start + i, ParseErrorKind::InvalidSeparator));
                    }
                    i = run_end;
                }
                _ => {
                    let c = component[i..].chars().next().unwrap_or('?');
                    return Err(error(start + i, ParseErrorKind::InvalidPathCharacter(c)));
                }
            }
        }
        start += component.len() + 1;
    }
    Ok(())
}

fn validate_tag(input: &str, offset: usize, tag: &str) -> Result<(), ParseError> {
    let error = |at: usize, kind| ParseError::new(input, offset + at, kind);
    if tag.is_empty() {
        return Err(error(0, ParseErrorKind::EmptyTag));
    }
    for (i, c) in tag.char_indices() {
        let allowed = c.is_ascii_alphanumeric() || c == '_' || (i > 0 && matches!(c, '.' | '-'));
        if !allowed {
            return Err(error(i, ParseErrorKind::InvalidTagCharacter(c)));
        }
    }
    if tag.len() > MAX_TAG_LEN {
        return Err(error(0, ParseErrorKind::TagTooLong { length: tag.len() }));
    }
    Ok(())
}
