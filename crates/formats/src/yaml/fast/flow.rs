//! Flow collections on one line for the fast reader: `[a, "b", {c: d}]`, `{"json": true}`.
//!
//! Anything else in flow context (a collection over several lines, comments, anchors, tags,
//! aliases, empty entries, single-pair mappings in a sequence, keys without values) bails.

use super::scalar::{self, plain_start, skip_spaces};
use super::{Bail, MAX_KEY_LEN, Reader};
use crate::yaml::tree::Span;

/// Reads the flow collection opening at `at`, which must close before `end`; returns the
/// offset after its closing bracket.
pub(super) fn read<'t>(
    reader: &mut Reader<'t>,
    at: usize,
    end: usize,
    anchor: Option<&'t str>,
) -> Result<usize, Bail> {
    let mapping = reader.s[at] == b'{';
    reader.b.begin(mapping, at, anchor.is_some(), None)?;
    if let Some(name) = anchor {
        reader.anchors.insert(name, None);
    }
    let after = if mapping {
        entries(reader, at, end, b'}', mapping_entry)?
    } else {
        entries(reader, at, end, b']', sequence_entry)?
    };
    let id = reader.b.end(after);
    reader.name(anchor, id);
    Ok(after)
}

/// The entries of a collection opened at `at`, each read by `entry`, separated by `,` (one
/// trailing comma allowed) up to `close`.
fn entries(
    reader: &mut Reader<'_>,
    at: usize,
    end: usize,
    close: u8,
    // A type per entry reader (not a `fn` pointer), so each is inlined into its loop.
    entry: impl Fn(&mut Reader<'_>, usize, usize) -> Result<usize, Bail>,
) -> Result<usize, Bail> {
    let s = reader.s;
    let mut p = skip_spaces(s, at + 1, end);
    loop {
        if p >= end {
            return Err(Bail);
        }
        if s[p] == close {
            return Ok(p + 1);
        }
        p = skip_spaces(s, entry(reader, p, end)?, end);
        match s.get(p) {
            Some(b',') if p < end => p = skip_spaces(s, p + 1, end),
            Some(&b) if b == close && p < end => return Ok(p + 1),
            _ => return Err(Bail),
        }
    }
}

fn sequence_entry(reader: &mut Reader<'_>, at: usize, end: usize) -> Result<usize, Bail> {
    let after = node(reader, at, end)?;
    let p = skip_spaces(reader.s, after, end);
    if p < end && reader.s[p] == b':' {
        // `[a: b]`, a single-pair mapping.
        return Err(Bail);
    }
    Ok(after)
}

fn mapping_entry(reader: &mut Reader<'_>, at: usize, end: usize) -> Result<usize, Bail> {
    let s = reader.s;
    let quoted_key = matches!(s[at], b'"' | b'\'');
    let key_end = if quoted_key {
        quoted(reader, at, end)?
    } else {
        // A collection is no key here: `plain` refuses its bracket.
        plain(reader, at, end)?
    };
    if key_end - at > MAX_KEY_LEN {
        return Err(Bail);
    }
    let p = skip_spaces(s, key_end, end);
    if p >= end || s[p] != b':' {
        // A key without a value (`{a, b}`).
        return Err(Bail);
    }
    // After a plain key the `:` needs a space; after a quoted one (JSON) it need not.
    let adjacent_ok = quoted_key && p + 1 < end && !matches!(s[p + 1], b',' | b'}' | b']');
    if !(adjacent_ok || (p + 1 < end && s[p + 1] == b' ')) {
        return Err(Bail);
    }
    let value = skip_spaces(s, p + 1, end);
    if value >= end || matches!(s[value], b',' | b'}') {
        return Err(Bail);
    }
    node(reader, value, end)
}

/// A node in flow context at `at` (not a key): a nested collection, a quoted or a plain
/// scalar. Returns the offset after it.
#[inline]
fn node(reader: &mut Reader<'_>, at: usize, end: usize) -> Result<usize, Bail> {
    match reader.s[at] {
        b'[' | b'{' => read(reader, at, end, None),
        b'"' | b'\'' => quoted(reader, at, end),
        // Most nodes of a flow collection: read here, without a call.
        _ => plain(reader, at, end),
    }
}

fn quoted(reader: &mut Reader<'_>, at: usize, end: usize) -> Result<usize, Bail> {
    let quoted = scalar::quoted(reader.text, at, end)?;
    let close = quoted.span.end as usize;
    reader
        .b
        .scalar(quoted.span, quoted.style, quoted.decoded, false, None);
    Ok(close + 1)
}

#[inline]
fn plain(reader: &mut Reader<'_>, at: usize, end: usize) -> Result<usize, Bail> {
    let s = reader.s;
    if !plain_start(s, at, end, true) {
        return Err(Bail);
    }
    let stop = plain_end(s, at, end)?;
    let mut trimmed = stop;
    while trimmed > at && s[trimmed - 1] == b' ' {
        trimmed -= 1;
    }
    reader.b.plain(Span::new(at..trimmed));
    Ok(stop)
}

/// The bytes [`plain_end`] stops at.
static FLOW_STOPS: [bool; 256] = {
    let mut stops = [false; 256];
    let mut i = 0;
    let bytes = b",[]{}:#";
    while i < bytes.len() {
        stops[bytes[i] as usize] = true;
        i += 1;
    }
    stops
};

/// Where a plain scalar in flow context ends: at a flow indicator, or at a `:` followed by a
/// space or a flow indicator. A comment or the line's end inside the collection bails.
#[expect(
    clippy::inline_always,
    reason = "called for every scalar of a flow collection and left a call by `#[inline]`: measured, 1% of a scan"
)]
#[inline(always)]
fn plain_end(s: &[u8], at: usize, end: usize) -> Result<usize, Bail> {
    let mut p = at;
    while p < end {
        // Skip ahead to the next byte that can end the scalar.
        while p < end && !FLOW_STOPS[usize::from(s[p])] {
            p += 1;
        }
        if p == end {
            break;
        }
        match s[p] {
            b',' | b'[' | b']' | b'{' | b'}' => return Ok(p),
            b':' if p + 1 < end && matches!(s[p + 1], b' ' | b',' | b'[' | b']' | b'{' | b'}') => {
                return Ok(p);
            }
            b'#' if s[p - 1] == b' ' => return Err(Bail),
            _ => p += 1,
        }
    }
    Err(Bail)
}

/// Where the flow collection opening at `at` closes (the offset after it, before `end`), when
/// it is of a shape [`read`] reads without a doubt: nested at most `room` deep (and 64); each
/// mapping entry a key, `: `, and a value; each key, value and item a word of `[A-Za-z0-9_./]`
/// (`-` and `+` allowed after the first byte), a double-quoted text without `\`, or (values
/// and items) a collection. `None` for anything else: not a verdict on the YAML, only on the
/// glance, and [`read`] reads it then. Whatever this accepts, [`read`] reads as a collection
/// over the same bytes (the tests hold it to that).
pub(super) fn skim(s: &[u8], at: usize, end: usize, room: usize) -> Option<usize> {
    skim_into(s, at, end, room, &mut ())
}

/// What [`skim_into`] reads, in order: a collection's opening and close, its keys and values.
pub(crate) trait Skimmed {
    fn open(&mut self, mapping: bool);
    fn close(&mut self);
    /// A key or a value at `span` (inside the quotes for a quoted one).
    fn scalar(&mut self, span: std::ops::Range<usize>, quoted: bool);
}

/// Skimming only.
impl Skimmed for () {
    fn open(&mut self, _: bool) {}
    fn close(&mut self) {}
    fn scalar(&mut self, _: std::ops::Range<usize>, _: bool) {}
}

/// [`skim`], telling `into` what it reads (as far as it reads: on `None`, part of it).
///
/// One pass over the bytes, each looked at about once: a values file is mostly such
/// collections, and this is most of its reading.
pub(crate) fn skim_into(
    s: &[u8],
    at: usize,
    end: usize,
    room: usize,
    into: &mut impl Skimmed,
) -> Option<usize> {
    // Bounded by the line: past its end, `get` says `None`, which ends the skim.
    let line = &s[..end];
    let room = room.min(64);
    // The open collections, innermost in the lowest bit: set for a mapping.
    let mut mappings: u64 = 0;
    let mut depth = 0;
    // `line[p]` opens a collection.
    let mut p = at;
    'open: loop {
        if depth == room {
            return None;
        }
        let mapping = line[p] == b'{';
        mappings = (mappings << 1) | u64::from(mapping);
        depth += 1;
        into.open(mapping);
        p = skip_spaces(line, p + 1, end);
        loop {
            // At an entry, or at the collection's close (after its opening or a `,`).
            let close = if mappings & 1 == 1 { b'}' } else { b']' };
            let b = *line.get(p)?;
            if b != close {
                if mappings & 1 == 1 {
                    let key_end = word_end(line, p)?;
                    if key_end - p > MAX_KEY_LEN || line.get(key_end..key_end + 2) != Some(b": ") {
                        return None;
                    }
                    tell_word(line, p, key_end, into);
                    p = skip_spaces(line, key_end + 2, end);
                }
                if matches!(line.get(p)?, b'{' | b'[') {
                    continue 'open;
                }
                let value_end = word_end(line, p)?;
                tell_word(line, p, value_end, into);
                p = skip_spaces(line, value_end, end);
            }
            // After an entry or a close: a `,`, or the close of the collection around it.
            loop {
                let close = if mappings & 1 == 1 { b'}' } else { b']' };
                match *line.get(p)? {
                    b',' => {
                        p = skip_spaces(line, p + 1, end);
                        break;
                    }
                    b if b == close => {
                        mappings >>= 1;
                        depth -= 1;
                        into.close();
                        if depth == 0 {
                            return Some(p + 1);
                        }
                        p = skip_spaces(line, p + 1, end);
                    }
                    _ => return None,
                }
            }
        }
    }
}

/// Tells `into` of the word from `at` to `end`.
fn tell_word(s: &[u8], at: usize, end: usize, into: &mut impl Skimmed) {
    if s[at] == b'"' {
        into.scalar(at + 1..end - 1, true);
    } else {
        into.scalar(at..end, false);
    }
}

/// The end of a [`skim`] word at `at` (which is on `line`).
#[inline]
fn word_end(line: &[u8], at: usize) -> Option<usize> {
    let rest = &line[at + 1..];
    if line[at] == b'"' {
        // The closing quote, with no escape before it.
        let i = rest.iter().position(|&b| b == b'"' || b == b'\\')?;
        return (rest[i] == b'"').then_some(at + 1 + i + 1);
    }
    if WORD[usize::from(line[at])] != WORD_FIRST {
        return None;
    }
    Some(
        rest.iter()
            .position(|&b| WORD[usize::from(b)] == 0)
            .map_or(line.len(), |i| at + 1 + i),
    )
}

/// A [`skim`] word's bytes: [`WORD_FIRST`] may start one, any byte not 0 continue it.
static WORD: [u8; 256] = {
    let mut bytes = [0; 256];
    let mut c: u8 = 0;
    loop {
        if c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'/') {
            bytes[c as usize] = WORD_FIRST;
        } else if matches!(c, b'-' | b'+') {
            bytes[c as usize] = 1;
        }
        if c == u8::MAX {
            break;
        }
        c += 1;
    }
    bytes
};
const WORD_FIRST: u8 = 2;
