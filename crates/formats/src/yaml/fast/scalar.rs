//! Scalars on one line for the fast reader: plain (with its continuation lines), single- and
//! double-quoted, and implicit keys.

use super::{Bail, Line, Reader};
use crate::yaml::tree::{Span, Style};

/// A scalar read from the source.
#[derive(Debug)]
pub(super) struct Scalar {
    /// The content: inside the quotes, or the plain text.
    pub(super) span: Span,
    pub(super) style: Style,
    /// The value, when it differs from the source.
    pub(super) decoded: Option<String>,
}

#[expect(
    clippy::inline_always,
    reason = "called for every scalar of a flow collection and left a call by `#[inline]`: measured, 1% of a scan"
)]
#[inline(always)]
pub(super) fn skip_spaces(s: &[u8], mut p: usize, end: usize) -> usize {
    while p < end && s[p] == b' ' {
        p += 1;
    }
    p
}

/// A block sequence entry's `-` at `at`.
pub(super) fn is_dash(s: &[u8], at: usize, end: usize) -> bool {
    s[at] == b'-' && (at + 1 == end || s[at + 1] == b' ')
}

/// Whether a plain scalar may start at `at` (ns-plain-first): not an indicator, unless it is
/// `-`, `?` or `:` followed by a character that is safe in the context.
#[expect(
    clippy::inline_always,
    reason = "called for every scalar of a flow collection and left a call by `#[inline]`: measured, 1% of a scan"
)]
#[inline(always)]
pub(super) fn plain_start(s: &[u8], at: usize, end: usize, flow: bool) -> bool {
    match s[at] {
        b'-' | b'?' | b':' => at + 1 < end && is_plain_safe(s[at + 1], flow),
        b',' | b'[' | b']' | b'{' | b'}' | b'#' | b'&' | b'*' | b'!' | b'|' | b'>' | b'\''
        | b'"' | b'%' | b'@' | b'`' => false,
        _ => true,
    }
}

fn is_plain_safe(b: u8, flow: bool) -> bool {
    b != b' ' && !(flow && matches!(b, b',' | b'[' | b']' | b'{' | b'}'))
}

/// The end (trailing spaces trimmed) of a plain scalar in a block value starting at `at`, on
/// a line ending at `end`: at a comment or the line's end. `: ` inside means a mapping value
/// where none may be, which the fast reader leaves to the conformant one.
pub(super) fn plain_line(s: &[u8], at: usize, end: usize) -> Result<usize, Bail> {
    if !plain_start(s, at, end, false) {
        return Err(Bail);
    }
    let mut p = at;
    let mut stop = end;
    while let Some(i) = memchr::memchr2(b':', b'#', &s[p..end]).map(|i| p + i) {
        if s[i] == b'#' {
            if s[i - 1] == b' ' {
                stop = i;
                break;
            }
        } else if i + 1 == end || s[i + 1] == b' ' {
            return Err(Bail);
        }
        p = i + 1;
    }
    Ok(trim_end(s, at, stop))
}

fn trim_end(s: &[u8], at: usize, mut end: usize) -> usize {
    while end > at && s[end - 1] == b' ' {
        end -= 1;
    }
    end
}

/// The offset of the `:` ending a plain implicit key at `at`, if the line holds one.
pub(super) fn plain_key_end(s: &[u8], at: usize, end: usize) -> Option<usize> {
    if !plain_start(s, at, end, false) {
        return None;
    }
    let mut p = at;
    while let Some(i) = memchr::memchr2(b':', b'#', &s[p..end]).map(|i| p + i) {
        if s[i] == b'#' {
            if s[i - 1] == b' ' {
                return None;
            }
        } else if i + 1 == end || s[i + 1] == b' ' {
            return Some(i);
        }
        p = i + 1;
    }
    None
}

/// The plain key from `at` to its colon at `colon`.
pub(super) fn plain_key(s: &[u8], at: usize, colon: usize) -> Result<Scalar, Bail> {
    let end = trim_end(s, at, colon);
    if end == at {
        return Err(Bail);
    }
    Ok(Scalar {
        span: Span::new(at..end),
        style: Style::Plain,
        decoded: None,
    })
}

/// A quoted scalar opened at `at` that closes before `end`.
pub(super) fn quoted(text: &str, at: usize, end: usize) -> Result<Scalar, Bail> {
    let s = text.as_bytes();
    let quote = s[at];
    let close = crate::yaml::closing_quote(s, at + 1, end, quote).ok_or(Bail)?;
    let raw = &text[at + 1..close];
    let decoded = if quote == b'"' {
        if raw.contains('\\') {
            Some(unescape(raw)?)
        } else {
            None
        }
    } else if raw.contains("''") {
        Some(raw.replace("''", "'"))
    } else {
        None
    };
    let style = if quote == b'"' {
        Style::Double
    } else {
        Style::Single
    };
    Ok(Scalar {
        span: Span::new(at + 1..close),
        style,
        decoded,
    })
}

/// The value of a double-quoted scalar's source on one line (YAML 1.2 escapes).
pub(crate) fn unescape(raw: &str) -> Result<String, Bail> {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let escaped = match chars.next().ok_or(Bail)? {
            '0' => '\0',
            'a' => '\u{7}',
            'b' => '\u{8}',
            't' | '\t' => '\t',
            'n' => '\n',
            'v' => '\u{b}',
            'f' => '\u{c}',
            'r' => '\r',
            'e' => '\u{1b}',
            ' ' => ' ',
            '"' => '"',
            '/' => '/',
            '\\' => '\\',
            'N' => '\u{85}',
            '_' => '\u{a0}',
            'L' => '\u{2028}',
            'P' => '\u{2029}',
            'x' => hex(&mut chars, 2)?,
            'u' => hex(&mut chars, 4)?,
            'U' => hex(&mut chars, 8)?,
            _ => return Err(Bail),
        };
        out.push(escaped);
    }
    Ok(out)
}

fn hex(chars: &mut std::str::Chars<'_>, digits: usize) -> Result<char, Bail> {
    let mut value = 0u32;
    for _ in 0..digits {
        let digit = chars.next().and_then(|c| c.to_digit(16)).ok_or(Bail)?;
        value = value * 16 + digit;
    }
    char::from_u32(value).ok_or(Bail)
}

/// A plain scalar after its first line: where it ends, its value when continued, and where
/// reading goes on.
pub(super) struct Continued {
    pub(super) end: usize,
    pub(super) decoded: Option<String>,
    pub(super) next: usize,
}

/// Reads the lines continuing a plain scalar whose first line (on `line`) ends at `first_end`:
/// lines indented at least `min_indent`, folded (a line break is a space, each blank line a
/// line feed). A document-level scalar (`root`) over several lines bails.
pub(super) fn continuation(
    reader: &Reader<'_>,
    at: usize,
    first_end: usize,
    line: Line,
    min_indent: usize,
    root: bool,
) -> Result<Continued, Bail> {
    let s = reader.s;
    let mut result = Continued {
        end: first_end,
        decoded: None,
        next: line.next,
    };
    if memchr::memchr(b'#', &s[first_end..line.end]).is_some() {
        // A comment ends the first line: nothing continues the scalar.
        return Ok(result);
    }
    let mut blank = 0;
    let mut pos = line.next;
    while pos < s.len() {
        let next = reader.line_at(pos);
        let first = next.start + next.indent;
        if first == next.end {
            blank += 1;
            pos = next.next;
            continue;
        }
        if next.indent < min_indent || s[first] == b'#' {
            break;
        }
        if root {
            if next.indent == 0
                && (s[first..].starts_with(b"---") || s[first..].starts_with(b"..."))
            {
                break;
            }
            return Err(Bail);
        }
        let content = &s[first..next.end];
        // A mapping value, a comment or a tab on a continuation line: left to the
        // conformant reader.
        if memchr::memchr3(b'\t', b'\r', b'#', content).is_some()
            || memchr::memchr_iter(b':', content)
                .any(|j| j + 1 == content.len() || content[j + 1] == b' ')
        {
            return Err(Bail);
        }
        let end = trim_end(s, first, next.end);
        let value = result
            .decoded
            .get_or_insert_with(|| reader.text[at..first_end].to_owned());
        if blank == 0 {
            value.push(' ');
        } else {
            value.extend(std::iter::repeat_n('\n', blank));
        }
        value.push_str(&reader.text[first..end]);
        blank = 0;
        result.end = end;
        result.next = next.next;
        pos = next.next;
    }
    Ok(result)
}
