//! The fast reader: the block subset of YAML that real files are written in, read line by line
//! into a [`Tree`].
//!
//! It reads block mappings and sequences (compact `- key: v` items, indentless sequences as a
//! key's value), values on the key's line or on the lines after it, plain scalars (also over
//! several lines), quoted scalars on one line, literal and folded block scalars, flow
//! collections on one line, anchors and aliases, comments, `---`/`...` documents, CRLF and a
//! BOM. Anything else (tags, `? ` keys, quoted scalars or flow collections over several lines,
//! directives, tabs, content on the `---` line, …) makes it give up with [`Bail`], and the
//! caller hands the text to the conformant reader, which also owns every error message: the fast
//! reader never rejects a text, it only declines to vouch for it. The tests hold both readers
//! to the YAML test suite and to each other.
//!
//! Read leniently (Helm templates, whose masked actions leave text that is not YAML), a line it
//! cannot read is dropped instead, with whatever it opened, and reading goes on with the next.

mod block_scalar;
mod flow;
mod scalar;

use std::collections::HashMap;

use super::tree::{Builder, MAX_DEPTH, NodeId, Span, Style, TooDeep, Tree};

/// The fast reader does not vouch for this text: read it with the conformant reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Bail;

impl From<TooDeep> for Bail {
    fn from(_: TooDeep) -> Self {
        Self
    }
}

/// How long an implicit key may be (YAML 1.2: 1024 characters).
const MAX_KEY_LEN: usize = 1024;

/// Reads `text` strictly: a tree, or [`Bail`] when the text is outside the fast subset.
pub(crate) fn read(text: &str) -> Result<Tree, Bail> {
    read_kept(text, None)
}

/// Reads `text` leniently: never fails; unreadable lines are dropped.
pub(crate) fn read_lenient(text: &str) -> Tree {
    read_lenient_kept(text, None)
}

/// Which documents of a stream to read: given a document's text (from the start of its first
/// line after any `---`, up to the next document marker), whether to read it. A document not
/// kept is passed over unread (an empty document, when a `---` opened it).
pub(crate) type Keep<'k> = Option<&'k dyn Fn(&str) -> bool>;

/// [`read`], reading only the documents `keep` keeps.
pub(crate) fn read_kept(text: &str, keep: Keep<'_>) -> Result<Tree, Bail> {
    read_strictly(text, keep, None)
}

/// [`read`], leaving unread the flow collections `yaml::read_values` describes, on lines
/// where none of `marks` (sorted offsets in `text`) is.
pub(crate) fn read_deferring(text: &str, marks: &[u32]) -> Result<Tree, Bail> {
    read_strictly(text, None, Some(marks))
}

fn read_strictly<'t>(
    text: &'t str,
    keep: Keep<'t>,
    defer: Option<&'t [u32]>,
) -> Result<Tree, Bail> {
    if !printable(text) {
        return Err(Bail);
    }
    let mut reader = Reader::new(text, false);
    reader.keep = keep;
    reader.defer = defer;
    reader.run()?;
    Ok(reader.b.finish())
}

pub(crate) use flow::Skimmed;

/// Tells `into` what the collection `source` holds, when it is one [`read_deferring`] leaves
/// unread (whole: it ends where `source` does); `false` otherwise.
pub(crate) fn skim_deferred(source: &str, into: &mut impl Skimmed) -> bool {
    let s = source.as_bytes();
    !s.is_empty()
        && matches!(s[0], b'{' | b'[')
        && flow::skim_into(s, 0, s.len(), MAX_DEPTH, into) == Some(s.len())
}

/// [`read_lenient`], reading only the documents `keep` keeps.
pub(crate) fn read_lenient_kept(text: &str, keep: Keep<'_>) -> Tree {
    let mut reader = Reader::new(text, true);
    reader.keep = keep;
    // Lenient reading recovers from every bail inside `run`.
    let _ = reader.run();
    reader.b.finish()
}

/// Whether every character is one YAML allows in a stream (c-printable), a BOM only first.
fn printable(text: &str) -> bool {
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    // A fold without an early exit, chunk by chunk, so the compiler vectorises it.
    #[expect(
        clippy::needless_bitwise_bool,
        reason = "branch-free, so it vectorises"
    )]
    let ascii_ok = body.as_bytes().chunks(256).all(|chunk| {
        !chunk.iter().fold(false, |bad, &b| {
            bad | (b < 0x20 && b != b'\t' && b != b'\n' && b != b'\r') | (b == 0x7f)
        })
    });
    ascii_ok
        && (body.is_ascii()
            || body.chars().all(|c| {
                c.is_ascii()
                    || c == '\u{85}'
                    || ('\u{a0}'..='\u{d7ff}').contains(&c)
                    || ('\u{e000}'..='\u{fffd}').contains(&c) && c != '\u{feff}'
                    || c >= '\u{10000}'
            }))
}

/// Where the next line that [`Reader::document_marker`] takes as a marker starts, from the
/// line starting at `from` (or the text's end): `---` or `...` alone at its start, a comment
/// after it allowed, no tab or lone carriage return (a line that [`Reader::line`] drops).
fn next_document_marker(s: &[u8], from: usize) -> usize {
    // Only a line that starts with three dashes or dots can be one: the others are passed by
    // their line feeds alone, without taking each line apart (a template's documents that are
    // not read are most of its lines).
    let is_marker = |start: usize| {
        let rest = &s[start..];
        (rest.starts_with(b"---") || rest.starts_with(b"..."))
            && Line::at(s, start).is_alone_marker(s)
    };
    if from >= s.len() || is_marker(from) {
        return from.min(s.len());
    }
    memchr::memchr_iter(b'\n', &s[from..])
        .map(|i| from + i + 1)
        .find(|&start| start < s.len() && is_marker(start))
        .unwrap_or(s.len())
}

/// One line of the text.
#[derive(Clone, Copy, Debug)]
struct Line {
    start: usize,
    /// The end of the content, before `\r\n` or `\n`.
    end: usize,
    /// The start of the next line.
    next: usize,
    /// Leading spaces.
    indent: usize,
    /// The content holds a tab or a carriage return (not the one before the line feed).
    tab_or_cr: bool,
}

impl Line {
    /// The line of `s` that starts at `start`.
    fn at(s: &[u8], start: usize) -> Self {
        // One search finds the line's end and, in most lines, that it holds neither a tab nor a
        // carriage return: the first of the three bytes is its line feed.
        let first = memchr::memchr3(b'\n', b'\r', b'\t', &s[start..]).map(|i| start + i);
        let (eol, mut tab_or_cr) = match first {
            Some(at) if s[at] == b'\n' => (at, false),
            Some(at) => (
                memchr::memchr(b'\n', &s[at..]).map_or(s.len(), |i| at + i),
                true,
            ),
            None => (s.len(), false),
        };
        let next = if eol < s.len() { eol + 1 } else { eol };
        let end = if eol > start && s[eol - 1] == b'\r' {
            eol - 1
        } else {
            eol
        };
        if tab_or_cr && first == Some(end) {
            // The carriage return of a CRLF, and nothing before it.
            tab_or_cr = false;
        }
        let indent = s[start..end].iter().take_while(|&&b| b == b' ').count();
        Self {
            start,
            end,
            next,
            indent,
            tab_or_cr,
        }
    }

    /// Whether it begins with a document marker: `Some(true)` for `---`, `Some(false)` for
    /// `...`, each alone or followed by a space.
    fn marker(self, s: &[u8]) -> Option<bool> {
        let rest = &s[self.start..self.end];
        let dashes = rest.starts_with(b"---");
        let marker = (dashes || rest.starts_with(b"...")) && (rest.len() == 3 || rest[3] == b' ');
        marker.then_some(dashes)
    }

    /// Whether it is a document marker that [`Reader::line`] reads as one.
    fn is_alone_marker(self, s: &[u8]) -> bool {
        self.marker(s).is_some() && !self.tab_or_cr && self.marker_alone(s)
    }

    /// Whether nothing but spaces and a comment follows its marker.
    fn marker_alone(self, s: &[u8]) -> bool {
        let after = scalar::skip_spaces(s, self.start + 3, self.end);
        after == self.end || s[after] == b'#'
    }
}

#[derive(Debug)]
struct Frame<'t> {
    mapping: bool,
    /// The column of the mapping's keys or the sequence's dashes.
    indent: usize,
    /// The anchor naming this collection, registered when it ends.
    anchor: Option<&'t str>,
}

/// A node that a line announced and a later line supplies (`key:` or `- ` with nothing after).
#[derive(Debug, Clone, Copy)]
struct Pending<'t> {
    /// The indentation of the collection that holds the node (-1 for a document's root).
    parent: isize,
    /// A `- ` at the parent's own indentation starts the node (a mapping value's sequence).
    indentless: bool,
    anchor: Option<&'t str>,
    /// Where the node is, empty, when no line supplies it.
    at: usize,
}

#[expect(
    clippy::struct_excessive_bools,
    reason = "the reader's state: each flag is a separate fact of where it is"
)]
struct Reader<'t> {
    text: &'t str,
    s: &'t [u8],
    lenient: bool,
    /// Which documents to read (all, when `None`).
    keep: Keep<'t>,
    /// Where the words are that keep a flow collection on their line read, when collections
    /// may be left unread (see [`read_deferring`]).
    defer: Option<&'t [u32]>,
    /// How many of the marks of `defer` lie before the line read last.
    marks_passed: usize,
    /// At a document's start: nothing of it read yet.
    fresh: bool,
    b: Builder,
    frames: Vec<Frame<'t>>,
    pending: Option<Pending<'t>>,
    /// Anchor names to their nodes; `None` while the anchored collection is still open.
    anchors: HashMap<&'t str, Option<NodeId>>,
    /// A document has begun (`---`, or content).
    in_document: bool,
    /// The current document's root was a scalar or flow collection, now complete.
    root_done: bool,
    /// The end of the last node read, where open collections end.
    last_end: usize,
}

impl<'t> Reader<'t> {
    fn new(text: &'t str, lenient: bool) -> Self {
        Self {
            text,
            s: text.as_bytes(),
            lenient,
            keep: None,
            defer: None,
            marks_passed: 0,
            fresh: true,
            // About one node per 16 bytes in real files (measured on values files).
            b: Builder::with_capacity(text.len() / 16),
            frames: Vec::new(),
            pending: None,
            anchors: HashMap::new(),
            in_document: false,
            root_done: false,
            last_end: 0,
        }
    }

    fn line_at(&self, start: usize) -> Line {
        Line::at(self.s, start)
    }

    fn run(&mut self) -> Result<(), Bail> {
        let mut pos = if self.text.starts_with('\u{feff}') {
            3
        } else {
            0
        };
        while pos < self.s.len() {
            if std::mem::take(&mut self.fresh)
                && let Some(keep) = self.keep
            {
                let end = next_document_marker(self.s, pos);
                if !keep(&self.text[pos..end]) {
                    pos = end;
                    continue;
                }
            }
            let line = self.line_at(pos);
            pos = match self.line(line) {
                Ok(next) => next,
                Err(Bail) if self.lenient => {
                    self.recover();
                    line.next
                }
                Err(Bail) => return Err(Bail),
            };
        }
        self.end_document();
        Ok(())
    }

    /// Reads the line and any it continues into; returns where the next line starts.
    fn line(&mut self, line: Line) -> Result<usize, Bail> {
        let s = self.s;
        let first = line.start + line.indent;
        // A lone `\r` is a line break to YAML. Tabs are separation in some places and errors
        // in others: the conformant reader knows which, but a comment may hold them. Read
        // leniently, a line with either is dropped.
        if let Some(i) = line
            .tab_or_cr
            .then(|| memchr::memchr2(b'\r', b'\t', &s[first..line.end]))
            .flatten()
        {
            let comment = s[first] == b'#' && i > 0;
            if !comment || memchr::memchr(b'\r', &s[first..line.end]).is_some() {
                return Err(Bail);
            }
        }
        if first == line.end || s[first] == b'#' {
            return Ok(line.next);
        }
        if line.indent == 0 && self.document_marker(line)? {
            return Ok(line.next);
        }
        self.content(line, first)
    }

    /// `---` or `...` at the start of a line: ends the document (and `---` starts one).
    fn document_marker(&mut self, line: Line) -> Result<bool, Bail> {
        let Some(marker) = line.marker(self.s) else {
            return Ok(false);
        };
        if !line.marker_alone(self.s) {
            // Content on the marker's line.
            return Err(Bail);
        }
        self.end_document();
        self.in_document = marker;
        self.fresh = true;
        Ok(true)
    }

    fn end_document(&mut self) {
        self.settle_pending();
        while !self.frames.is_empty() {
            self.pop();
        }
        if self.in_document {
            if self.b.depth() == 0 && !self.b.has_root() {
                // `---` and nothing else: the document is an empty scalar.
                self.b.null(self.last_end, false, None);
            }
            self.b.end_document(self.last_end);
        }
        self.in_document = false;
        self.root_done = false;
        self.anchors.clear();
    }

    /// A pending node that no line supplied: an empty scalar.
    fn settle_pending(&mut self) {
        if let Some(pending) = self.pending.take() {
            let id = self.b.null(pending.at, pending.anchor.is_some(), None);
            self.name(pending.anchor, id);
            if self.frames.is_empty() {
                self.root_done = true;
            }
        }
    }

    fn name(&mut self, anchor: Option<&'t str>, id: NodeId) {
        if let Some(name) = anchor {
            self.anchors.insert(name, Some(id));
        }
    }

    fn pop(&mut self) {
        if let Some(frame) = self.frames.pop() {
            if frame.mapping && self.b.open_len() % 2 == 1 {
                self.b.null(self.last_end, false, None);
            }
            let id = self.b.end(self.last_end);
            self.name(frame.anchor, id);
        }
    }

    /// Lenient reading: close what a dropped line left open, so the tree stays well-formed.
    fn recover(&mut self) {
        self.pending = None;
        while self.b.depth() > self.frames.len() {
            if self.b.in_mapping() && self.b.open_len() % 2 == 1 {
                self.b.null(self.last_end, false, None);
            }
            self.b.end(self.last_end);
        }
        if self.b.in_mapping() && self.b.open_len() % 2 == 1 {
            self.b.null(self.last_end, false, None);
        }
        if self.frames.is_empty() && self.b.depth() == 0 && self.in_document {
            self.root_done = true;
        }
    }

    fn push_frame(
        &mut self,
        mapping: bool,
        indent: usize,
        at: usize,
        anchor: Option<&'t str>,
    ) -> Result<(), Bail> {
        self.b.begin(mapping, at, anchor.is_some(), None)?;
        if let Some(name) = anchor {
            self.anchors.insert(name, None);
        }
        self.frames.push(Frame {
            mapping,
            indent,
            anchor,
        });
        Ok(())
    }

    /// A line with content at `first` (not a comment, not a document marker).
    fn content(&mut self, line: Line, first: usize) -> Result<usize, Bail> {
        let col = line.indent;
        let dash = scalar::is_dash(self.s, first, line.end);
        if let Some(pending) = self.pending.take() {
            let col_i = isize::try_from(col).unwrap_or(isize::MAX);
            if col_i > pending.parent || (col_i == pending.parent && pending.indentless && dash) {
                return self.block_node(line, first, col, pending.parent, pending.anchor);
            }
            self.pending = Some(pending);
            self.settle_pending();
        }
        if !self.in_document || (self.frames.is_empty() && !self.root_done) {
            self.in_document = true;
            return self.block_node(line, first, col, -1, None);
        }
        while self.frames.last().is_some_and(|f| f.indent > col) {
            self.pop();
        }
        if !dash && self.at_indentless_sequence(col) {
            self.pop();
        }
        loop {
            let Some(top) = self.frames.last() else {
                return self.new_root_leniently(line, first, col);
            };
            match (top.indent == col, top.mapping, dash) {
                (true, true, false) => return self.key_line(line, first, col),
                (true, false, true) => return self.dash_line(line, first, col),
                _ if !self.lenient => return Err(Bail),
                // Read leniently, a line that does not fit where it stands closes the
                // collection of the other kind at its indentation, or starts over.
                (true, _, _) => self.pop(),
                (false, _, _) => return self.new_root_leniently(line, first, col),
            }
        }
    }

    /// Content where the structure has no place for it: read leniently, a new document starts
    /// there (a masked action can leave a scalar in front of a whole document, or break the
    /// indentation), so what follows is still read.
    fn new_root_leniently(&mut self, line: Line, first: usize, col: usize) -> Result<usize, Bail> {
        if !self.lenient {
            return Err(Bail);
        }
        self.end_document();
        self.in_document = true;
        self.block_node(line, first, col, -1, None)
    }

    /// Whether the innermost frame is a sequence at `col` that is the value of a key at `col`.
    fn at_indentless_sequence(&self, col: usize) -> bool {
        match self.frames.as_slice() {
            [.., parent, top] => {
                !top.mapping && top.indent == col && parent.mapping && parent.indent == col
            }
            _ => false,
        }
    }

    /// A node that starts a line at `first`, column `col`: a block collection or a scalar.
    fn block_node(
        &mut self,
        line: Line,
        first: usize,
        col: usize,
        parent: isize,
        anchor: Option<&'t str>,
    ) -> Result<usize, Bail> {
        if scalar::is_dash(self.s, first, line.end) {
            self.push_frame(false, col, first, anchor)?;
            return self.dash_line(line, first, col);
        }
        if self.key_at(first, line.end)?.is_some() {
            self.push_frame(true, col, first, anchor)?;
            return self.key_line(line, first, col);
        }
        if matches!(self.s[first], b'&' | b'!') {
            return Err(Bail);
        }
        let next = self.node(line, first, parent, anchor)?;
        if self.frames.is_empty() {
            self.root_done = true;
        }
        Ok(next)
    }

    /// `- ` at `first` (column `col`) and what follows it on the line.
    fn dash_line(&mut self, line: Line, first: usize, col: usize) -> Result<usize, Bail> {
        let s = self.s;
        let at = scalar::skip_spaces(s, first + 1, line.end);
        if at == line.end || s[at] == b'#' {
            self.pending = Some(Pending {
                parent: isize::try_from(col).unwrap_or(isize::MAX),
                indentless: false,
                anchor: None,
                at: first + 1,
            });
            return Ok(line.next);
        }
        let item_col = col + (at - first);
        if scalar::is_dash(s, at, line.end) {
            self.push_frame(false, item_col, at, None)?;
            return self.dash_line(line, at, item_col);
        }
        if self.key_at(at, line.end)?.is_some() {
            self.push_frame(true, item_col, at, None)?;
            return self.key_line(line, at, item_col);
        }
        let parent = isize::try_from(col).unwrap_or(isize::MAX);
        let (anchor, at) = self.anchor_at(at, line.end)?;
        if anchor.is_some() && (at == line.end || s[at] == b'#') {
            self.pending = Some(Pending {
                parent,
                indentless: false,
                anchor,
                at,
            });
            return Ok(line.next);
        }
        if anchor.is_some() && self.key_at(at, line.end)?.is_some() {
            // `- &a key: v` anchors the key, not the mapping: rare, left to the other reader.
            return Err(Bail);
        }
        self.node(line, at, parent, anchor)
    }

    /// A mapping entry `key: value` at `first` (column `col`).
    fn key_line(&mut self, line: Line, first: usize, col: usize) -> Result<usize, Bail> {
        let Some((key, after_colon)) = self.key_at(first, line.end)? else {
            return Err(Bail);
        };
        // What a merge key merges is looked into, whatever its words.
        let merges = self.text.get(key.span.range()) == Some("<<");
        self.b.scalar(key.span, key.style, key.decoded, false, None);
        self.last_end = key.span.end as usize;
        let s = self.s;
        let at = scalar::skip_spaces(s, after_colon, line.end);
        let parent = isize::try_from(col).unwrap_or(isize::MAX);
        let (anchor, at) = self.anchor_at(at, line.end)?;
        if at == line.end || s[at] == b'#' {
            self.pending = Some(Pending {
                parent,
                indentless: true,
                anchor,
                at: after_colon,
            });
            return Ok(line.next);
        }
        if scalar::is_dash(s, at, line.end) {
            return Err(Bail);
        }
        if anchor.is_none()
            && !merges
            && let Some(end) = self.deferrable(line, at)
        {
            self.b.deferred(Span::new(at..end));
            self.last_end = end;
            return self.line_rest(end, line);
        }
        self.node(line, at, parent, anchor)
    }

    /// Where the flow collection at `at`, a key's value on `line`, ends, when it may be left
    /// unread: collections may be (see [`read_deferring`]), no word is on the line, and
    /// [`flow::skim`] knows it valid.
    fn deferrable(&mut self, line: Line, at: usize) -> Option<usize> {
        let marks = self.defer?;
        if !matches!(self.s[at], b'[' | b'{') {
            return None;
        }
        // Lines are read in order: the marks before this one are never asked for again.
        while marks
            .get(self.marks_passed)
            .is_some_and(|&mark| (mark as usize) < line.start)
        {
            self.marks_passed += 1;
        }
        if marks
            .get(self.marks_passed)
            .is_some_and(|&mark| (mark as usize) < line.end)
        {
            return None;
        }
        flow::skim(
            self.s,
            at,
            line.end,
            MAX_DEPTH.saturating_sub(self.b.depth()),
        )
    }

    /// `&name` at `at`: the name and where the node after it starts.
    fn anchor_at(&self, at: usize, end: usize) -> Result<(Option<&'t str>, usize), Bail> {
        let s = self.s;
        if at >= end || s[at] != b'&' {
            return Ok((None, at));
        }
        let name_end = s[at + 1..end]
            .iter()
            .position(|&b| b == b' ')
            .map_or(end, |i| at + 1 + i);
        let name = &self.text[at + 1..name_end];
        if name.is_empty()
            || name
                .bytes()
                .any(|b| matches!(b, b',' | b'[' | b']' | b'{' | b'}'))
        {
            return Err(Bail);
        }
        Ok((Some(name), scalar::skip_spaces(s, name_end, end)))
    }

    /// A node that is not a block collection, at `at` on `line`, inside a collection indented
    /// `parent`: an alias, a block scalar, a quoted or plain scalar, a flow collection.
    fn node(
        &mut self,
        line: Line,
        at: usize,
        parent: isize,
        anchor: Option<&'t str>,
    ) -> Result<usize, Bail> {
        let s = self.s;
        let next = match s[at] {
            b'*' if anchor.is_none() => {
                let end = s[at..line.end]
                    .iter()
                    .position(|&b| b == b' ')
                    .map_or(line.end, |i| at + i);
                let name = &self.text[at + 1..end];
                if name.is_empty() || name.contains(':') {
                    return Err(Bail);
                }
                // An unknown anchor is an error, and one still open a recursive alias: both
                // for the conformant reader to report.
                let Some(&Some(target)) = self.anchors.get(name) else {
                    return Err(Bail);
                };
                self.b.alias(Span::new(at..end), target);
                self.last_end = end;
                self.line_rest(end, line)?
            }
            b'|' | b'>' => {
                let block = block_scalar::read(self, at, line, parent)?;
                let id = self.b.scalar(
                    block.span,
                    block.style,
                    Some(block.value),
                    anchor.is_some(),
                    None,
                );
                self.name(anchor, id);
                self.last_end = block.span.end as usize;
                return Ok(block.next);
            }
            b'"' | b'\'' => {
                let quoted = scalar::quoted(self.text, at, line.end)?;
                let id = self.b.scalar(
                    quoted.span,
                    quoted.style,
                    quoted.decoded,
                    anchor.is_some(),
                    None,
                );
                self.name(anchor, id);
                self.last_end = quoted.span.end as usize + 1;
                self.line_rest(quoted.span.end as usize + 1, line)?
            }
            b'[' | b'{' => {
                let start_depth = self.b.depth();
                let end = flow::read(self, at, line.end, anchor)?;
                debug_assert_eq!(self.b.depth(), start_depth);
                self.last_end = end;
                self.line_rest(end, line)?
            }
            _ => return self.plain(line, at, parent, anchor),
        };
        Ok(next)
    }

    /// After a node on `line` ending at `at`: only spaces and a comment may follow.
    fn line_rest(&self, at: usize, line: Line) -> Result<usize, Bail> {
        let at = scalar::skip_spaces(self.s, at, line.end);
        if at == line.end || (self.s[at] == b'#' && self.s[at - 1] == b' ') {
            Ok(line.next)
        } else {
            Err(Bail)
        }
    }

    /// A plain scalar in block context, possibly continued on deeper lines.
    fn plain(
        &mut self,
        line: Line,
        at: usize,
        parent: isize,
        anchor: Option<&'t str>,
    ) -> Result<usize, Bail> {
        let first = scalar::plain_line(self.s, at, line.end)?;
        let min_indent = usize::try_from(parent + 1).unwrap_or(0);
        let continued = scalar::continuation(self, at, first, line, min_indent, parent < 0)?;
        let span = Span::new(at..continued.end);
        let id = self.b.scalar(
            span,
            Style::Plain,
            continued.decoded,
            anchor.is_some(),
            None,
        );
        self.name(anchor, id);
        self.last_end = continued.end;
        Ok(continued.next)
    }

    /// The implicit key at `at`, if the line holds one there: its scalar and the offset after
    /// its `:`. Only plain and quoted keys on one line are read here; a line whose key is
    /// anything else (`? `, an alias, a flow collection, a tagged or anchored key) is not a
    /// key line to this reader, and reading it as a node then bails.
    fn key_at(&self, at: usize, end: usize) -> Result<Option<(scalar::Scalar, usize)>, Bail> {
        let s = self.s;
        let (key, after) = match s[at] {
            b'"' | b'\'' => {
                let Ok(quoted) = scalar::quoted(self.text, at, end) else {
                    return Ok(None);
                };
                let after = scalar::skip_spaces(s, quoted.span.end as usize + 1, end);
                (quoted, after)
            }
            _ => {
                let Some(colon) = scalar::plain_key_end(s, at, end) else {
                    return Ok(None);
                };
                (scalar::plain_key(s, at, colon)?, colon)
            }
        };
        if after < end && s[after] == b':' && (after + 1 == end || s[after + 1] == b' ') {
            if (key.span.end - key.span.start) as usize > MAX_KEY_LEN {
                return Err(Bail);
            }
            Ok(Some((key, after + 1)))
        } else {
            Ok(None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Line, next_document_marker};

    #[test]
    fn a_line_knows_whether_its_content_holds_a_tab_or_a_carriage_return() {
        for (text, start, content, tab_or_cr) in [
            ("a: b\nc", 0, "a: b", false),
            ("a: b\r\nc", 0, "a: b", false),
            ("a: b\r\n", 0, "a: b", false),
            ("a: b\r", 0, "a: b", false),
            ("a:\tb\nc", 0, "a:\tb", true),
            ("a: b\t\r\n", 0, "a: b\t", true),
            ("a\rb\r\n", 0, "a\rb", true),
            ("a: b\r\r\n", 0, "a: b\r", true),
            ("x\n  # \tc\nd", 2, "  # \tc", true),
            ("x\n  y", 2, "  y", false),
            ("", 0, "", false),
            ("\n", 0, "", false),
            ("\r\n", 0, "", false),
        ] {
            let line = Line::at(text.as_bytes(), start);
            assert_eq!(&text[line.start..line.end], content, "{text:?}");
            assert_eq!(line.tab_or_cr, tab_or_cr, "{text:?}");
            let searched = memchr::memchr2(b'\r', b'\t', content.as_bytes()).is_some();
            assert_eq!(line.tab_or_cr, searched, "{text:?}");
        }
    }

    /// The next marker is the first line, taken apart line by line, that is one.
    #[test]
    fn the_next_document_marker_is_the_first_line_that_is_one() {
        let lines = [
            "---", "--- # c", "---  ", "--- x", "---x", "----", "...", "... #", "..", "--",
            "---\t", " ---", "a: b", "- --- ", "", "# ---", "---\r", "--- \rx", "..x",
        ];
        let mut texts = Vec::new();
        for first in lines {
            for second in lines {
                for break_ in ["\n", "\r\n"] {
                    texts.push(format!("{first}{break_}{second}"));
                    texts.push(format!("{first}{break_}{second}{break_}"));
                    texts.push(format!("k: v{break_}{first}{break_}{second}{break_}z"));
                }
            }
        }
        for text in &texts {
            let s = text.as_bytes();
            for from in (0..=s.len()).filter(|&i| i == 0 || s[i - 1] == b'\n') {
                let mut start = from;
                let expected = loop {
                    if start >= s.len() {
                        break s.len();
                    }
                    let line = Line::at(s, start);
                    if line.is_alone_marker(s) {
                        break start;
                    }
                    start = line.next;
                };
                assert_eq!(
                    next_document_marker(s, from),
                    expected,
                    "{text:?} from {from}"
                );
            }
        }
    }
}
