//! Shell scripts and Makefiles: `image: <ref>` lines (YAML in heredocs, `- image:` items) and
//! `--image=<ref>` / `--image <ref>` flags (kubectl, kind, helm `--set` aside).
//!
//! A value counts only when all of it, after stripping one pair of matching quotes, parses as
//! a reference: shell variables, command substitutions and partial names are not reported
//! (there is no reliable way to tell a `$IMAGE` apart from any other word here). Lines whose
//! first non-blank character is `#` are comments and skipped; `# tagpin:ignore` later on a line
//! marks its references `ignored`.

use crate::common::{Found, Sink, is_templated};

pub(crate) fn scan(sink: &mut Sink<'_>) {
    let text = sink.text;
    let bytes = text.as_bytes();
    let finder = memchr::memmem::Finder::new(b"image");
    let mut p = 0;
    let mut last_line_start = usize::MAX;
    while let Some(i) = finder.find(&bytes[p..]) {
        let hit = p + i;
        let line_start = memchr::memrchr(b'\n', &bytes[..hit]).map_or(0, |i| i + 1);
        let line_end = memchr::memchr(b'\n', &bytes[hit..]).map_or(bytes.len(), |i| hit + i);
        p = line_end.max(hit + 1);
        if line_start == last_line_start {
            continue;
        }
        last_line_start = line_start;
        let Some(line) = text.get(line_start..line_end) else {
            continue;
        };
        scan_line(sink, line.strip_suffix('\r').unwrap_or(line), line_start);
    }
}

fn scan_line(sink: &mut Sink<'_>, line: &str, offset: usize) {
    let trimmed = line.trim_start();
    if trimmed.starts_with('#') {
        return;
    }
    let indent = line.len() - trimmed.len();
    // `image: ref` and `- image: ref`.
    let item = trimmed.strip_prefix("- ").map_or(trimmed, str::trim_start);
    if let Some(value) = item.strip_prefix("image:") {
        let at = offset + indent + (trimmed.len() - item.len()) + "image:".len();
        let value_end = value.find(" #").unwrap_or(value.len());
        report(sink, &value[..value_end], at);
    }
    // `--image=ref` and `--image ref`.
    let mut search = 0;
    while let Some(i) = line[search..].find("--image") {
        let flag = search + i;
        search = flag + "--image".len();
        if flag > 0 && !line.as_bytes()[flag - 1].is_ascii_whitespace() {
            continue;
        }
        let rest = &line[search..];
        let (value_start, value) = if let Some(value) = rest.strip_prefix('=') {
            (search + 1, value)
        } else if rest.starts_with([' ', '\t']) {
            let value = rest.trim_start();
            (search + rest.len() - value.len(), value)
        } else {
            continue;
        };
        let word_end = word_end(value);
        report(sink, &value[..word_end], offset + value_start);
    }
}

/// The end of the shell word at the start of `value` (a quoted word ends at its quote).
fn word_end(value: &str) -> usize {
    let bytes = value.as_bytes();
    match bytes.first() {
        Some(&quote @ (b'"' | b'\'')) => {
            memchr::memchr(quote, &bytes[1..]).map_or(bytes.len(), |i| i + 2)
        }
        _ => bytes
            .iter()
            .position(|b| b.is_ascii_whitespace() || matches!(b, b';' | b'|' | b'&' | b')'))
            .unwrap_or(bytes.len()),
    }
}

/// Reports `value` (which starts at `at`) when it is, whole and unquoted, a reference.
fn report(sink: &mut Sink<'_>, value: &str, at: usize) {
    let leading = value.len() - value.trim_start().len();
    let value = value.trim();
    let mut at = at + leading;
    let mut inner = value;
    for quote in ['"', '\''] {
        if let Some(stripped) = value
            .strip_prefix(quote)
            .and_then(|v| v.strip_suffix(quote))
        {
            inner = stripped;
            at += 1;
            break;
        }
    }
    if inner.is_empty() || is_templated(inner) || inner.contains(['"', '\'', '\\']) {
        return;
    }
    if let Some(found) = Found::inline(at..at + inner.len(), inner) {
        sink.push(found);
    }
}
