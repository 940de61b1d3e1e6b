//! The YAML scanner: Kubernetes manifests, Helm values, compose files, GitHub workflows, and
//! (after [`crate::helm`] masks their actions) Helm templates.
//!
//! # Why a hand-written scanner and not `saphyr-parser`
//!
//! tagpin only needs the *block structure* of a file (which key a scalar sits under, which
//! mapping it belongs to, which keys are its siblings) and the exact byte span of a few
//! scalars. A full event parser builds every scalar, converts character indices to byte
//! offsets, and stops at the first error, which every masked Helm template invites. This
//! scanner makes one pass over the lines with `memchr`, keeps a stack of open mappings and
//! sequences keyed by indentation, records only the entries it cares about (`image`,
//! `repository`, `tag`, …) as byte ranges into the text, and evaluates a mapping when it
//! closes. It allocates per interesting mapping, not per character or per scalar, and runs at
//! several hundred MB/s (see `benches/scan.rs`), which the scan benchmark needs.
//!
//! What it understands: block mappings and sequences (including compact `- key: v` items and
//! sequences at their parent key's indentation), plain, single- and double-quoted scalars
//! (also spanning lines), flow mappings and sequences (nested, spanning lines), anchors
//! (`&a`, the anchored scalar is reported once, where it is defined), aliases (`*a`, never
//! reported), tags (`!!str`), block scalars (`|`, `>`, with indicators: their content is
//! skipped), comments, multi-document streams (`---`, `...`), CRLF line endings and a BOM.
//!
//! What it reports as a syntax error (for YAML, compose and workflow files; Helm templates are
//! scanned leniently, line by line, instead): an unterminated quoted scalar or flow collection
//! (also one that runs into a `---`/`...` line), text after a quoted scalar's closing quote,
//! flow entries not separated by `,`, a `key: value` inside a plain scalar's continuation
//! (YAML's "mapping values are not allowed here"), and a `- ` entry where a block mapping
//! expects its next key (libyaml's "did not find expected key"; `key:` then `- item` at the
//! key's indentation is that key's value, and valid). These follow libyaml, so a stray quote or
//! bracket fails where it would otherwise pair with one many lines later and hide what lies
//! between. One check is stricter than libyaml, as YAML 1.2 is (the test suite's QB6E): a
//! quoted scalar in a block value may continue only on lines indented deeper than its key or
//! `- `; libyaml's own errors for the scalar are reported first. Read leniently, a quoted scalar continues on later lines only while they are
//! indented deeper than its key and it closes with nothing after the quote; otherwise it ends
//! with its own line.
//!
//! # Double-quoted scalars with escapes
//!
//! A double-quoted scalar holding a `\` escape, a single-quoted scalar holding `''`, or any
//! quoted scalar spanning lines has a value that differs from its source text. Such a
//! reference is decoded, classified and reported, but its site is
//! [`EditSite::Unsupported`]: tagpin does not rewrite it (the user can).
//!
//! # Split maps
//!
//! See the crate README: `repository` (+ `registry`) + `tag` + optional `digest` under a key
//! ending in `image`/`Image` (also one level deeper, for an `image:` map of maps), the
//! ingress-nginx form `registry` + `image` + `tag` + `digest`, and the gpu-operator form
//! `repository` + `image` + `version`.

use std::ops::Range;
use std::path::Path;

use crate::common::{Found, Sink, is_templated};
use crate::{EditSite, Error, FileKind, Status, Warning};

/// The byte Helm actions are masked with (see [`crate::helm`]); a scalar holding it is templated.
pub(crate) const MASK: u8 = 0x1a;

/// How deep flow collections may nest before the rest is skipped unread.
const MAX_FLOW_DEPTH: usize = 64;

const UNSUPPORTED_ESCAPES: &str =
    "the YAML scalar uses escapes or spans lines, so its source differs from its value";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Key {
    Image,
    ImageLike,
    Repository,
    Registry,
    Tag,
    Version,
    Digest,
    Build,
    PullPolicy,
    Container,
    Uses,
    Other,
}

fn key_of(name: &str) -> Key {
    match name {
        "image" => Key::Image,
        "repository" => Key::Repository,
        "registry" => Key::Registry,
        "tag" => Key::Tag,
        "version" => Key::Version,
        "digest" => Key::Digest,
        "build" => Key::Build,
        "imagePullPolicy" => Key::PullPolicy,
        "container" => Key::Container,
        "uses" => Key::Uses,
        _ if ends_with_image(name) => Key::ImageLike,
        _ => Key::Other,
    }
}

fn ends_with_image(name: &str) -> bool {
    name.ends_with("image") || name.ends_with("Image")
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Style {
    Plain,
    Single,
    Double,
}

#[derive(Clone, Debug)]
struct Scalar {
    /// The content, inside the quotes.
    span: Range<usize>,
    style: Style,
    /// Overlaps a masked Helm action.
    masked: bool,
    /// The source differs from the value (escapes, `''`, line folding).
    escaped: bool,
}

#[derive(Clone, Debug)]
enum Value {
    Scalar(Scalar),
    /// No value on the key's line (null, or a nested block that follows).
    Empty,
    /// A flow collection, block scalar or alias.
    Other,
}

#[derive(Clone, Debug)]
struct Entry<'a> {
    key: Key,
    value: Value,
    _name: &'a str,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Seg<'a> {
    Key(&'a str),
    Item,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FrameKind {
    Map,
    Seq,
}

#[derive(Debug)]
struct Frame<'a> {
    indent: usize,
    kind: FrameKind,
    open_key: &'a str,
    entries_start: usize,
}

/// What the rest of a line asks of the lines that follow.
#[derive(Default)]
struct Outcome {
    /// Continue scanning at the line holding this offset's next line (a value spanned lines).
    resume: Option<usize>,
    /// A block scalar began: lines indented at least this much (and blank lines) are its content.
    block_min: Option<usize>,
    /// A plain scalar ended the line: lines indented at least this much continue it.
    cont_min: Option<usize>,
}

/// Where a scalar sits, for reading a quoted one that does not close on its line.
#[derive(Clone, Copy)]
enum Context {
    /// A block value: leniently read, its continuation lines are indented at least this much.
    Block { min_indent: usize },
    /// Inside a flow collection that ends by `limit` (its line's end, read leniently).
    Flow { limit: usize },
}

pub(crate) struct Options<'p> {
    pub(crate) path: &'p Path,
    /// Helm templates: unterminated constructs end at the line's end instead of failing.
    pub(crate) lenient: bool,
}

/// Scans `structure` (the text, or for Helm templates the text with actions masked to the same
/// length) and reports references with their text taken from `sink.text`.
pub(crate) fn scan(
    sink: &mut Sink<'_>,
    structure: &str,
    options: &Options<'_>,
) -> Result<(), Error> {
    let mut scanner = Scanner {
        s: structure.as_bytes(),
        st: structure,
        kind: sink.kind,
        options,
        frames: Vec::new(),
        entries: Vec::new(),
        pending_key: None,
        sink,
    };
    scanner.run()
}

struct Scanner<'a, 't, 'o, 'k> {
    s: &'a [u8],
    st: &'a str,
    kind: FileKind,
    options: &'o Options<'o>,
    frames: Vec<Frame<'a>>,
    entries: Vec<Entry<'a>>,
    /// The index of the mapping frame whose last key, on the previous content line, has no
    /// value on its line: a `- ` entry at that mapping's indentation is the key's value.
    pending_key: Option<usize>,
    sink: &'k mut Sink<'t>,
}

fn is_space(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

impl<'a> Scanner<'a, '_, '_, '_> {
    fn error(&mut self, at: usize, message: &str) -> Error {
        let (line, column) = self.sink.position(at);
        Error::Syntax {
            path: self.options.path.to_path_buf(),
            line,
            column,
            message: message.to_owned(),
        }
    }

    fn run(&mut self) -> Result<(), Error> {
        let s = self.s;
        let len = s.len();
        let mut pos = if self.st.starts_with(crate::common::BOM) {
            crate::common::BOM.len()
        } else {
            0
        };
        let mut block_min: Option<usize> = None;
        let mut cont_min: Option<usize> = None;
        while pos < len {
            let eol = memchr::memchr(b'\n', &s[pos..]).map_or(len, |i| pos + i);
            let next = if eol < len { eol + 1 } else { len };
            let mut end = eol;
            if end > pos && s[end - 1] == b'\r' {
                end -= 1;
            }
            let line = &s[pos..end];
            let indent = line.iter().take_while(|&&b| b == b' ').count();
            let first = line[indent..]
                .iter()
                .position(|&b| !is_space(b) && b != b'\r');
            let Some(first) = first.map(|i| indent + i) else {
                pos = next;
                continue;
            };
            if let Some(min) = block_min {
                if indent >= min {
                    pos = next;
                    continue;
                }
                block_min = None;
            }
            let c = line[first];
            if let Some(min) = cont_min {
                if indent >= min {
                    if c != b'#' && !self.options.lenient && self.key_at(pos + first, end).is_some()
                    {
                        return Err(self.error(pos + first, "mapping values are not allowed here"));
                    }
                    pos = next;
                    continue;
                }
                cont_min = None;
            }
            if c == b'#' {
                pos = next;
                continue;
            }
            if indent == 0
                && (line.starts_with(b"---") || line.starts_with(b"..."))
                && line.get(3).is_none_or(|&b| is_space(b))
            {
                self.close_all();
                pos = next;
                continue;
            }
            if indent == 0 && c == b'%' {
                pos = next;
                continue;
            }
            let outcome = self.content(pos + first, first, end)?;
            block_min = outcome.block_min;
            cont_min = outcome.cont_min;
            pos = match outcome.resume {
                Some(at) if at > end => {
                    memchr::memchr(b'\n', &s[at.min(len)..]).map_or(len, |i| at + i + 1)
                }
                _ => next,
            };
        }
        self.close_all();
        Ok(())
    }

    fn close_all(&mut self) {
        self.pending_key = None;
        while !self.frames.is_empty() {
            self.pop();
        }
    }

    fn pop(&mut self) {
        let Some(frame) = self.frames.pop() else {
            return;
        };
        if frame.entries_start < self.entries.len() {
            let entries: Vec<Entry<'a>> = self.entries.drain(frame.entries_start..).collect();
            if frame.kind == FrameKind::Map {
                let path = self.path();
                evaluate(self.sink, self.kind, &entries, &path);
            }
        }
    }

    fn path(&self) -> Vec<Seg<'a>> {
        self.frames
            .iter()
            .map(|frame| match frame.kind {
                FrameKind::Map => Seg::Key(frame.open_key),
                FrameKind::Seq => Seg::Item,
            })
            .collect()
    }

    fn push_frame(&mut self, indent: usize, kind: FrameKind) {
        self.frames.push(Frame {
            indent,
            kind,
            open_key: "",
            entries_start: self.entries.len(),
        });
    }

    /// Handles the content of a line starting at `at`, in column `col` (bytes from line start).
    fn content(
        &mut self,
        mut at: usize,
        mut col: usize,
        line_end: usize,
    ) -> Result<Outcome, Error> {
        let s = self.s;
        let pending_key = self.pending_key.take();
        loop {
            if s[at] == b'-' && (at + 1 == line_end || is_space(s[at + 1])) {
                while self.frames.last().is_some_and(|f| f.indent > col) {
                    self.pop();
                }
                // A `- ` entry where a block mapping expects its next key: valid only as the
                // value of the key that ended the previous line (`key:` then `- item` at the
                // key's indentation). libyaml: "did not find expected key".
                if !self.options.lenient
                    && self
                        .frames
                        .last()
                        .is_some_and(|f| f.kind == FrameKind::Map && f.indent == col)
                    && pending_key != Some(self.frames.len() - 1)
                {
                    return Err(self.error(at, "did not find expected key (found '-')"));
                }
                if !self
                    .frames
                    .last()
                    .is_some_and(|f| f.kind == FrameKind::Seq && f.indent == col)
                {
                    self.push_frame(col, FrameKind::Seq);
                }
                let mut p = at + 1;
                while p < line_end && is_space(s[p]) {
                    p += 1;
                }
                if p >= line_end || s[p] == b'#' {
                    return Ok(Outcome::default());
                }
                col += p - at;
                at = p;
                continue;
            }
            if let Some((name, after_colon)) = self.key_at(at, line_end) {
                while self.frames.last().is_some_and(|f| {
                    f.indent > col || (f.kind == FrameKind::Seq && f.indent >= col)
                }) {
                    self.pop();
                }
                if !self
                    .frames
                    .last()
                    .is_some_and(|f| f.kind == FrameKind::Map && f.indent == col)
                {
                    self.push_frame(col, FrameKind::Map);
                }
                if let Some(top) = self.frames.last_mut() {
                    top.open_key = name;
                }
                return self.value(name, after_colon, line_end, col);
            }
            return self.bare(at, line_end, col);
        }
    }

    /// A key at `at`: its name and the offset just after its `:`.
    fn key_at(&self, at: usize, line_end: usize) -> Option<(&'a str, usize)> {
        let s = self.s;
        let (name, mut p) = match s[at] {
            b'"' | b'\'' => {
                let close = quoted_end(s, at, line_end)?;
                (self.st.get(at + 1..close)?, close + 1)
            }
            b'{' | b'[' | b'?' | b'|' | b'>' | b'*' | b'#' => return None,
            _ => {
                let mut p = at;
                loop {
                    let i = memchr::memchr2(b':', b'#', &s[p..line_end])? + p;
                    if s[i] == b'#' {
                        if i > at && is_space(s[i - 1]) {
                            return None;
                        }
                        p = i + 1;
                        continue;
                    }
                    if i + 1 == line_end || is_space(s[i + 1]) {
                        p = i;
                        break;
                    }
                    p = i + 1;
                }
                (self.st.get(at..p)?.trim_end(), p)
            }
        };
        while p < line_end && is_space(s[p]) {
            p += 1;
        }
        if p < line_end && s[p] == b':' && (p + 1 == line_end || is_space(s[p + 1])) {
            Some((name, p + 1))
        } else {
            None
        }
    }

    fn record(&mut self, name: &'a str, value: Value) {
        let key = key_of(name);
        if key != Key::Other {
            self.entries.push(Entry {
                key,
                value,
                _name: name,
            });
        }
    }

    /// The value of key `name`, starting after its colon at `at`.
    fn value(
        &mut self,
        name: &'a str,
        mut at: usize,
        line_end: usize,
        col: usize,
    ) -> Result<Outcome, Error> {
        let s = self.s;
        while at < line_end && is_space(s[at]) {
            at += 1;
        }
        // Anchors and tags before the value.
        while at < line_end && (s[at] == b'&' || s[at] == b'!') {
            while at < line_end && !is_space(s[at]) {
                at += 1;
            }
            while at < line_end && is_space(s[at]) {
                at += 1;
            }
        }
        if at >= line_end || s[at] == b'#' {
            self.record(name, Value::Empty);
            self.pending_key = self.frames.len().checked_sub(1);
            return Ok(Outcome::default());
        }
        match s[at] {
            b'*' => {
                self.record(name, Value::Other);
                Ok(Outcome {
                    cont_min: Some(col + 1),
                    ..Outcome::default()
                })
            }
            b'|' | b'>' => {
                self.record(name, Value::Other);
                Ok(Outcome {
                    block_min: Some(col + 1),
                    ..Outcome::default()
                })
            }
            b'{' | b'[' => {
                self.record(name, Value::Other);
                let mut path = self.path();
                let end = self.flow(at, line_end, &mut path, 0)?;
                Ok(Outcome {
                    resume: Some(end),
                    cont_min: Some(col + 1),
                    ..Outcome::default()
                })
            }
            _ => {
                let context = Context::Block {
                    min_indent: col + 1,
                };
                let (scalar, end) = self.scalar(at, line_end, context)?;
                self.record(name, Value::Scalar(scalar));
                Ok(Outcome {
                    resume: Some(end),
                    cont_min: Some(col + 1),
                    ..Outcome::default()
                })
            }
        }
    }

    /// A value that is not a key's: a sequence item's scalar or flow collection.
    fn bare(&mut self, mut at: usize, line_end: usize, col: usize) -> Result<Outcome, Error> {
        let s = self.s;
        while at < line_end && (s[at] == b'&' || s[at] == b'!') {
            while at < line_end && !is_space(s[at]) {
                at += 1;
            }
            while at < line_end && is_space(s[at]) {
                at += 1;
            }
        }
        // A document-level scalar's continuation is not tracked: a masked Helm action can
        // leave one in front of a whole document.
        let cont = self.frames.last().map(|f| f.indent + 1);
        if at >= line_end || s[at] == b'#' {
            return Ok(Outcome::default());
        }
        match s[at] {
            b'|' | b'>' => Ok(Outcome {
                block_min: Some(cont.unwrap_or(col + 1)),
                ..Outcome::default()
            }),
            b'{' | b'[' => {
                let mut path = self.path();
                let end = self.flow(at, line_end, &mut path, 0)?;
                Ok(Outcome {
                    resume: Some(end),
                    cont_min: cont,
                    ..Outcome::default()
                })
            }
            _ => {
                let context = Context::Block {
                    min_indent: cont.unwrap_or(0),
                };
                let (_, end) = self.scalar(at, line_end, context)?;
                Ok(Outcome {
                    resume: Some(end),
                    cont_min: cont,
                    ..Outcome::default()
                })
            }
        }
    }

    /// A scalar at `at`; returns it and the offset just past it. In flow context plain scalars
    /// also end at `,`, `]` and `}`.
    fn scalar(
        &mut self,
        at: usize,
        line_end: usize,
        within: Context,
    ) -> Result<(Scalar, usize), Error> {
        let s = self.s;
        let flow = matches!(within, Context::Flow { .. });
        if let quote @ (b'"' | b'\'') = s[at] {
            let style = if quote == b'"' {
                Style::Double
            } else {
                Style::Single
            };
            let (close, under_indented) = match quoted_end(s, at, line_end) {
                Some(close) => (Some(close), None),
                None => self.quoted_end_on_later_line(at, line_end, within),
            };
            let Some(close) = close else {
                if self.options.lenient {
                    // Read line-wise: the scalar ends with its line.
                    let scalar = Scalar {
                        span: at + 1..line_end,
                        style,
                        masked: true,
                        escaped: true,
                    };
                    return Ok((scalar, line_end));
                }
                return Err(self.error(at, "unterminated quoted scalar"));
            };
            let content = &s[at + 1..close];
            let escaped = content.contains(&b'\n')
                || (style == Style::Double && content.contains(&b'\\'))
                || (style == Style::Single && content.contains(&b'\''));
            let scalar = Scalar {
                span: at + 1..close,
                style,
                masked: content.contains(&MASK),
                escaped,
            };
            if !flow && !self.options.lenient {
                let rest = skip_space(s, close + 1, s.len());
                if rest < s.len() && !matches!(s[rest], b'\n' | b'#') {
                    return Err(self.error(rest, "unexpected text after a quoted scalar"));
                }
            }
            if let Some(under) = under_indented {
                let (line, _) = self.sink.position(at);
                let message = format!(
                    "not indented enough to continue the quoted scalar opened on line {line}"
                );
                return Err(self.error(under, &message));
            }
            return Ok((scalar, (close + 1).min(s.len())));
        }
        let mut end = at;
        while end < line_end {
            let b = s[end];
            if b == b'#' && end > at && is_space(s[end - 1]) {
                break;
            }
            if flow && matches!(b, b',' | b']' | b'}') {
                break;
            }
            end += 1;
        }
        Ok(plain_scalar(s, at, end))
    }

    /// The closing quote of a quoted scalar opened at `at` that did not close on its line
    /// (ending at `line_end`). It never crosses a document marker. In a block value, the scalar
    /// only continues on lines indented at least `min_indent` (YAML 1.2: a flow scalar in
    /// block context is indented deeper than its key or `- `; libyaml does not check this, the
    /// YAML test suite's QB6E does). Read strictly, the closing quote is searched for as
    /// libyaml does, and the first non-space byte of the first line indented less is returned
    /// beside it, for the caller to fail on once libyaml's own checks pass. Read leniently
    /// (Helm templates, where a quote is often unbalanced by masking or by mistake), such a
    /// line ends the search, and the scalar must also close with nothing but a comment after
    /// it; otherwise it has no closing quote, and ends with its own line.
    fn quoted_end_on_later_line(
        &self,
        at: usize,
        mut line_end: usize,
        context: Context,
    ) -> (Option<usize>, Option<usize>) {
        let s = self.s;
        let (limit, min_indent) = match context {
            Context::Block { min_indent } => (s.len(), min_indent),
            Context::Flow { limit } => (limit, 0),
        };
        let mut under_indented = None;
        loop {
            let Some(newline) = memchr::memchr(b'\n', &s[line_end..limit]) else {
                return (None, under_indented);
            };
            let start = line_end + newline + 1;
            if start >= limit {
                return (None, under_indented);
            }
            line_end = memchr::memchr(b'\n', &s[start..limit]).map_or(limit, |i| start + i);
            let line = &s[start..line_end];
            if is_document_marker(line) {
                return (None, under_indented);
            }
            let indent = line.iter().take_while(|&&b| b == b' ').count();
            let blank = skip_space(line, indent, line.len()) == line.len();
            if !blank && indent < min_indent {
                if self.options.lenient {
                    return (None, None);
                }
                under_indented.get_or_insert(start + indent);
            }
            if let Some(close) = quoted_end_from(s, s[at], start, line_end) {
                let rest = skip_space(s, close + 1, line_end);
                if self.options.lenient && rest < line_end && s[rest] != b'#' {
                    return (None, None);
                }
                return (Some(close), under_indented);
            }
        }
    }

    /// A flow collection starting at `at` (`{` or `[`); returns the offset after its end.
    fn flow(
        &mut self,
        at: usize,
        line_end: usize,
        path: &mut Vec<Seg<'a>>,
        depth: usize,
    ) -> Result<usize, Error> {
        let s = self.s;
        let is_map = s[at] == b'{';
        let close = if is_map { b'}' } else { b']' };
        // Where an unterminated collection ends: the text (strict) or the line (lenient).
        let limit = if self.options.lenient {
            line_end
        } else {
            s.len()
        };
        if depth >= MAX_FLOW_DEPTH {
            return Ok(skip_flow(s, at, limit));
        }
        let mut entries: Vec<Entry<'a>> = Vec::new();
        let mut p = at + 1;
        // Read strictly, an entry must be followed by `,` or the closing bracket, unless its
        // last scalar is plain and ends its line: the next line may continue that scalar.
        let strict = !self.options.lenient;
        let mut after_entry = false;
        let mut continued = false;
        // The entry was a mapping key without `:`; its (continued) key's `:` may follow.
        let mut bare_key = false;
        loop {
            p = skip_flow_space(s, p, limit);
            if p >= limit {
                if self.options.lenient {
                    break;
                }
                return Err(self.error(at, "unterminated flow collection"));
            }
            let b = s[p];
            if b == close {
                p += 1;
                break;
            }
            if b == b',' {
                p += 1;
                after_entry = false;
                continue;
            }
            if b == b']' || b == b'}' {
                // A mismatched bracket: stop here.
                if self.options.lenient {
                    p += 1;
                    break;
                }
                return Err(self.error(p, "mismatched bracket in flow collection"));
            }
            let node_line_end = memchr::memchr(b'\n', &s[p..limit]).map_or(limit, |i| p + i);
            if strict && (p == 0 || s[p - 1] == b'\n') && is_document_marker(&s[p..]) {
                return Err(self.error(p, "document marker inside a flow collection"));
            }
            if strict && after_entry {
                if !continued || matches!(b, b'"' | b'\'' | b'{' | b'[') {
                    let message = if is_map {
                        "expected ',' or '}' in the flow mapping"
                    } else {
                        "expected ',' or ']' in the flow sequence"
                    };
                    return Err(self.error(p, message));
                }
                // A plain scalar continued from the line before.
                let (_, next) = flow_plain_key(s, p, node_line_end);
                continued = at_line_end(s, next, limit);
                p = skip_flow_space(s, next, limit);
                if p < limit && s[p] == b':' {
                    if is_map && !bare_key {
                        return Err(self.error(p, "mapping values are not allowed here"));
                    }
                    (p, continued) = skip_flow_value(s, p + 1, limit);
                    bare_key = false;
                }
                continue;
            }
            after_entry = true;
            (bare_key, continued) = (false, false);
            if b == b'{' || b == b'[' {
                path.push(if is_map { Seg::Key("") } else { Seg::Item });
                p = self.flow(p, node_line_end, path, depth + 1)?;
                path.pop();
                let q = skip_flow_space(s, p, limit);
                if is_map && q < limit && s[q] == b':' {
                    // A flow collection as a key: its value is not read.
                    (p, continued) = skip_flow_value(s, q + 1, limit);
                }
                continue;
            }
            let start = p;
            let (key, next) = if is_map && s[p] != b'"' && s[p] != b'\'' {
                flow_plain_key(s, p, node_line_end)
            } else {
                self.scalar(p, node_line_end, Context::Flow { limit })?
            };
            continued = key.style == Style::Plain && at_line_end(s, next, limit);
            p = skip_flow_space(s, next, limit);
            if !is_map {
                // A single-pair mapping inside a sequence, `[a: b]`, is skipped.
                if p < limit && s[p] == b':' {
                    (p, continued) = skip_flow_value(s, p + 1, limit);
                }
                continue;
            }
            let name = if p < limit && s[p] == b':' && key.span.end > key.span.start {
                self.st.get(key.span.clone()).unwrap_or("")
            } else if s[start] != b'"' && s[start] != b'\'' {
                // A plain key that ran into `:` without a space (`{a:b}`) is one scalar.
                self.st.get(key.span.clone()).unwrap_or("")
            } else {
                ""
            };
            if p < limit && s[p] == b':' {
                continued = false;
                p = skip_flow_space(s, p + 1, limit);
                if p >= limit {
                    continue;
                }
                let value_line_end = memchr::memchr(b'\n', &s[p..limit]).map_or(limit, |i| p + i);
                match s[p] {
                    b'{' | b'[' => {
                        path.push(Seg::Key(name));
                        p = self.flow(p, value_line_end, path, depth + 1)?;
                        path.pop();
                        push_entry(&mut entries, name, Value::Other);
                    }
                    b',' | b'}' => push_entry(&mut entries, name, Value::Empty),
                    b'*' => {
                        (p, continued) = skip_flow_value(s, p, limit);
                        push_entry(&mut entries, name, Value::Other);
                    }
                    _ => {
                        let mut q = p;
                        while q < value_line_end && (s[q] == b'&' || s[q] == b'!') {
                            while q < value_line_end && !is_space(s[q]) {
                                q += 1;
                            }
                            while q < value_line_end && is_space(s[q]) {
                                q += 1;
                            }
                        }
                        if q >= value_line_end {
                            // The value follows on the next line.
                            p = q;
                            after_entry = false;
                            push_entry(&mut entries, name, Value::Empty);
                            continue;
                        }
                        let (value, next) =
                            self.scalar(q, value_line_end, Context::Flow { limit })?;
                        continued = value.style == Style::Plain && at_line_end(s, next, limit);
                        p = next;
                        push_entry(&mut entries, name, Value::Scalar(value));
                    }
                }
            } else {
                bare_key = true;
                push_entry(&mut entries, name, Value::Empty);
            }
        }
        if is_map && !entries.is_empty() {
            evaluate(self.sink, self.kind, &entries, path);
        }
        Ok(p)
    }
}

/// A plain key in a flow mapping: it ends before `: `, `,`, `}`, `]` or the line's end.
fn flow_plain_key(s: &[u8], at: usize, line_end: usize) -> (Scalar, usize) {
    let mut end = at;
    while end < line_end {
        match s[end] {
            b',' | b'}' | b']' => break,
            b':' if end + 1 >= line_end
                || matches!(s[end + 1], b' ' | b'\t' | b',' | b'}' | b']' | b'\r') =>
            {
                break;
            }
            _ => end += 1,
        }
    }
    plain_scalar(s, at, end)
}

/// The plain scalar from `at` to `stop` (where its reader stopped), trailing spaces trimmed,
/// and `stop`, where reading goes on.
fn plain_scalar(s: &[u8], at: usize, stop: usize) -> (Scalar, usize) {
    let mut end = stop;
    while end > at && is_space(s[end - 1]) {
        end -= 1;
    }
    let scalar = Scalar {
        span: at..end,
        style: Style::Plain,
        masked: s[at..end].contains(&MASK),
        escaped: false,
    };
    (scalar, stop)
}

fn push_entry<'a>(entries: &mut Vec<Entry<'a>>, name: &'a str, value: Value) {
    let key = key_of(name);
    if key != Key::Other {
        entries.push(Entry {
            key,
            value,
            _name: name,
        });
    }
}

/// The offset of the quote closing the quoted scalar opened at `at`, searching before `limit`.
fn quoted_end(s: &[u8], at: usize, limit: usize) -> Option<usize> {
    quoted_end_from(s, s[at], at + 1, limit)
}

/// The offset of the first `quote` from `p` on that closes a quoted scalar, before `limit`.
fn quoted_end_from(s: &[u8], quote: u8, mut p: usize, limit: usize) -> Option<usize> {
    while p < limit {
        let i = memchr::memchr2(quote, b'\\', &s[p..limit])? + p;
        if s[i] == b'\\' {
            if quote == b'"' {
                p = i + 2;
            } else {
                p = i + 1;
            }
            continue;
        }
        if quote == b'\'' && s.get(i + 1) == Some(&b'\'') && i + 1 < limit {
            p = i + 2;
            continue;
        }
        return Some(i);
    }
    None
}

/// The offset of the first byte from `p` that is not a space, a tab or a `\r`.
fn skip_space(s: &[u8], mut p: usize, limit: usize) -> usize {
    while p < limit && matches!(s[p], b' ' | b'\t' | b'\r') {
        p += 1;
    }
    p
}

/// Whether only spaces and a comment follow `p` on its line.
fn at_line_end(s: &[u8], p: usize, limit: usize) -> bool {
    let p = skip_space(s, p, limit);
    p >= limit || matches!(s[p], b'\n' | b'#')
}

/// Whether `line` (from its first byte) is `---` or `...` alone or followed by a space.
fn is_document_marker(line: &[u8]) -> bool {
    (line.starts_with(b"---") || line.starts_with(b"..."))
        && line
            .get(3)
            .is_none_or(|&b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
}

fn skip_flow_space(s: &[u8], mut p: usize, limit: usize) -> usize {
    while p < limit {
        match s[p] {
            b' ' | b'\t' | b'\r' | b'\n' => p += 1,
            b'#' => {
                p = memchr::memchr(b'\n', &s[p..limit]).map_or(limit, |i| p + i);
            }
            _ => break,
        }
    }
    p
}

/// Skips a flow value that is not read (nested collections included). Returns the offset
/// after it and whether it is a plain scalar that ended at its line's end (and so may go on
/// on the next line).
fn skip_flow_value(s: &[u8], p: usize, limit: usize) -> (usize, bool) {
    let p = skip_flow_space(s, p, limit);
    if p < limit && (s[p] == b'{' || s[p] == b'[') {
        return (skip_flow(s, p, limit), false);
    }
    if p < limit && (s[p] == b'"' || s[p] == b'\'') {
        return (quoted_end(s, p, limit).map_or(limit, |c| c + 1), false);
    }
    let q = memchr::memchr3(b',', b']', b'}', &s[p..limit]).map_or(limit, |i| p + i);
    match memchr::memchr(b'\n', &s[p..q]) {
        Some(i) => (p + i, true),
        None => (q, q == limit),
    }
}

/// Skips a whole flow collection by counting brackets outside quotes.
fn skip_flow(s: &[u8], at: usize, limit: usize) -> usize {
    let mut depth = 0usize;
    let mut p = at;
    while p < limit {
        match s[p] {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return p + 1;
                }
            }
            b'"' | b'\'' => {
                p = quoted_end(s, p, limit).unwrap_or(limit);
            }
            _ => {}
        }
        p += 1;
    }
    limit
}

/// Words YAML reads as something other than a string, which would otherwise parse as names.
fn is_yaml_keyword(text: &str) -> bool {
    matches!(
        text.to_ascii_lowercase().as_str(),
        "null" | "true" | "false" | "yes" | "no" | "on" | "off" | "y" | "n"
    ) || text
        .bytes()
        .all(|b| b.is_ascii_digit() || b == b'.' || b == b'-' || b == b'+')
}

/// Decodes a quoted scalar's value (enough to classify it; references hold no whitespace).
fn decode(raw: &str, style: Style) -> String {
    match style {
        Style::Plain => raw.to_owned(),
        Style::Single => raw.replace("''", "'").replace(['\n', '\r'], " "),
        Style::Double => {
            let mut out = String::with_capacity(raw.len());
            let mut chars = raw.chars();
            while let Some(c) = chars.next() {
                if c == '\\' {
                    match chars.next() {
                        Some('n') => out.push('\n'),
                        Some('t') => out.push('\t'),
                        Some('x') => push_hex(&mut out, &mut chars, 2),
                        Some('u') => push_hex(&mut out, &mut chars, 4),
                        Some('U') => push_hex(&mut out, &mut chars, 8),
                        Some(other) => out.push(other),
                        None => {}
                    }
                } else if c == '\n' || c == '\r' {
                    out.push(' ');
                } else {
                    out.push(c);
                }
            }
            out
        }
    }
}

fn push_hex(out: &mut String, chars: &mut std::str::Chars<'_>, digits: usize) {
    let hex: String = chars.by_ref().take(digits).collect();
    if let Some(c) = u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
        out.push(c);
    }
}

fn scalar_of<'e>(entries: &'e [Entry<'_>], key: Key) -> Option<&'e Scalar> {
    entries
        .iter()
        .find(|e| e.key == key)
        .and_then(|e| match &e.value {
            Value::Scalar(scalar) => Some(scalar),
            _ => None,
        })
}

fn has(entries: &[Entry<'_>], key: Key) -> bool {
    entries.iter().any(|e| e.key == key)
}

/// Decides what a closed mapping holds: a split map, inline references, lint warnings.
fn evaluate(sink: &mut Sink<'_>, kind: FileKind, entries: &[Entry<'_>], path: &[Seg<'_>]) {
    let parent = match path.last() {
        Some(Seg::Key(key)) => Some(*key),
        _ => None,
    };
    let grandparent = match path {
        [.., Seg::Key(key), Seg::Key(_)] => Some(*key),
        _ => None,
    };
    if parent == Some("properties") {
        // A schema (CRD openAPIV3Schema, JSON schema): property definitions, not values.
        return;
    }
    let repository = scalar_of(entries, Key::Repository);
    let name = scalar_of(entries, Key::Image);
    let registry = scalar_of(entries, Key::Registry);
    let under_image =
        parent.is_some_and(ends_with_image) || grandparent.is_some_and(ends_with_image);
    let gpu_style = repository.is_some() && name.is_some();
    if gpu_style
        || (under_image && (repository.is_some() || (name.is_some() && registry.is_some())))
    {
        split(sink, entries, gpu_style);
    }
    let split_keys = [
        Key::Repository,
        Key::Registry,
        Key::Tag,
        Key::Version,
        Key::Digest,
    ]
    .into_iter()
    .any(|key| has(entries, key));
    let in_container_list = matches!(
        path,
        [
            ..,
            Seg::Key("containers" | "initContainers" | "ephemeralContainers"),
            Seg::Item
        ]
    );
    for entry in entries {
        let Value::Scalar(scalar) = &entry.value else {
            continue;
        };
        let mut prefix = "";
        let mut local = false;
        let wanted = match (kind, entry.key) {
            (_, Key::Image | Key::ImageLike) if split_keys => false,
            (FileKind::Compose, Key::Image) => {
                local = has(entries, Key::Build);
                match path {
                    [Seg::Key("services"), Seg::Key(_)] => true,
                    [Seg::Key(extension), ..] => extension.starts_with("x-"),
                    _ => false,
                }
            }
            (FileKind::Workflow, Key::Image) => match path {
                [Seg::Key("jobs"), Seg::Key(_), Seg::Key("container")]
                | [
                    Seg::Key("jobs"),
                    Seg::Key(_),
                    Seg::Key("services"),
                    Seg::Key(_),
                ] => true,
                [Seg::Key("runs")] => {
                    prefix = "docker://";
                    true
                }
                _ => false,
            },
            (FileKind::Workflow, Key::Container) => {
                matches!(path, [Seg::Key("jobs"), Seg::Key(_)])
            }
            (FileKind::Workflow, Key::Uses) => {
                prefix = "docker://";
                true
            }
            (FileKind::Yaml | FileKind::HelmTemplate, Key::Image | Key::ImageLike) => true,
            _ => false,
        };
        if !wanted {
            continue;
        }
        let Some(mut found) = inline(sink.text, scalar, prefix) else {
            continue;
        };
        if local && found.status != Status::Templated {
            found.status = Status::Local;
        }
        if in_container_list
            && entry.key == Key::Image
            && found.reference.as_ref().is_some_and(pulls_always)
            && !has(entries, Key::PullPolicy)
        {
            found.warnings.push(Warning::LatestPullsAlways);
        }
        sink.push(found);
    }
}

/// Whether kubelet defaults a container with this image to `imagePullPolicy: Always`: the tag
/// is `latest`, written (a digest does not clear it) or implied (no tag and no digest).
fn pulls_always(reference: &tagpin_reference::ImageReference) -> bool {
    match reference.tag() {
        Some(tag) => tag == "latest",
        None => reference.digest().is_none(),
    }
}

/// A reference written in one scalar (after `prefix`, such as `docker://`).
fn inline(text: &str, scalar: &Scalar, prefix: &str) -> Option<Found> {
    let raw = text.get(scalar.span.clone())?;
    let raw_ref = raw.strip_prefix(prefix)?;
    let span = scalar.span.start + prefix.len()..scalar.span.end;
    if raw_ref.is_empty() {
        return None;
    }
    if scalar.masked {
        return Some(Found::templated(span, raw_ref));
    }
    if scalar.style == Style::Plain && is_yaml_keyword(raw_ref) {
        return None;
    }
    if scalar.escaped {
        let decoded = decode(raw, scalar.style);
        let decoded = decoded.strip_prefix(prefix)?;
        let mut found = Found::inline(span, decoded)?;
        raw_ref.clone_into(&mut found.text);
        found.site = EditSite::Unsupported {
            reason: UNSUPPORTED_ESCAPES,
        };
        return Some(found);
    }
    Found::inline(span, raw_ref)
}

/// A Helm values split map (see the module docs).
fn split(sink: &mut Sink<'_>, entries: &[Entry<'_>], gpu_style: bool) {
    let text = sink.text;
    let part = |scalar: Option<&Scalar>| -> Option<&str> {
        let scalar = scalar?;
        let raw = text.get(scalar.span.clone())?;
        if scalar.style == Style::Plain && matches!(raw, "~" | "null") {
            return None;
        }
        Some(raw).filter(|raw| !raw.is_empty())
    };
    let repository = scalar_of(entries, Key::Repository);
    let image = scalar_of(entries, Key::Image);
    let registry = scalar_of(entries, Key::Registry);
    let tag = scalar_of(entries, Key::Tag).or_else(|| scalar_of(entries, Key::Version));
    let digest = scalar_of(entries, Key::Digest);
    let name_scalar = if gpu_style {
        repository
    } else {
        repository.or(image)
    };
    let Some(name_scalar) = name_scalar else {
        return;
    };
    let Some(name) = part(Some(name_scalar)) else {
        return;
    };
    let mut full = String::new();
    if let Some(registry) = part(registry) {
        full.push_str(registry.trim_end_matches('/'));
        full.push('/');
    }
    full.push_str(name);
    if gpu_style {
        let Some(image) = part(image) else {
            return;
        };
        full.push('/');
        full.push_str(image);
    }
    let tag_text = part(tag);
    let digest_text = part(digest);
    if let Some(tag) = tag_text {
        full.push(':');
        full.push_str(tag);
    }
    if let Some(digest) = digest_text {
        full.push('@');
        full.push_str(digest);
    }
    let scalars = [Some(name_scalar), registry, image, tag, digest];
    let masked = scalars.iter().flatten().any(|s| s.masked);
    let escaped = scalars.iter().flatten().any(|s| s.escaped);
    let span = name_scalar.span.clone();
    let found = if masked || is_templated(&full) || (tag_text.is_none() && digest_text.is_none()) {
        Some(Found::templated(span, &full))
    } else if let Some(found) = Found::inline(span.clone(), &full) {
        Some(found)
    } else if name.starts_with('/') {
        // csi-driver-nfs: `baseRepo` + `/path`, joined by the chart.
        Some(Found::templated(span, &full))
    } else {
        None
    };
    let Some(mut found) = found else {
        return;
    };
    found.also_lines = scalars.iter().flatten().map(|s| s.span.start).collect();
    let digest_entry = entries.iter().find(|e| e.key == Key::Digest);
    found.site = match (digest_entry.map(|e| &e.value), tag) {
        _ if escaped => EditSite::Unsupported {
            reason: UNSUPPORTED_ESCAPES,
        },
        (Some(Value::Scalar(digest)), _)
            if digest.style != Style::Plain || !digest.span.is_empty() =>
        {
            EditSite::SplitDigest {
                span: digest.span.clone(),
            }
        }
        (_, Some(tag)) if !tag.span.is_empty() => EditSite::SplitTag {
            span: tag.span.clone(),
            tag: text.get(tag.span.clone()).unwrap_or_default().to_owned(),
        },
        _ => EditSite::Unsupported {
            reason: "the split map has no tag or digest scalar to write the digest into",
        },
    };
    sink.push(found);
}
