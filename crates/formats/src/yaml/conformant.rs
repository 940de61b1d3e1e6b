//! The conformant reader: `saphyr-parser`'s event stream (a YAML 1.2 parser that passes the
//! YAML test suite) turned into a [`Tree`] with byte spans.
//!
//! saphyr's markers count characters; they become byte offsets here. Its span for a quoted
//! scalar runs on past the closing quote (into trailing spaces and comments), so the content
//! span is found again from the opening quote. Anchors are ids in its events: an alias names the
//! node that carried the same id. Nesting deeper than [`MAX_DEPTH`] is an error, as is an alias
//! to a node that contains it (a recursive structure, which tagpin does not follow).

use std::borrow::Cow;
use std::collections::HashMap;

use saphyr_parser::{Event, Parser, ScalarStyle, Span as EventSpan, Tag};

use super::tree::{Builder, MAX_DEPTH, NodeId, Span, Style, Tree};

/// Why the conformant reader rejected a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rejected {
    /// 1-based line.
    pub(crate) line: usize,
    /// 1-based column, in characters (a BOM not counted).
    pub(crate) column: usize,
    pub(crate) message: String,
}

pub(crate) fn read(text: &str) -> Result<Tree, Rejected> {
    let offsets = Offsets::new(text);
    let mut reader = EventReader {
        text,
        offsets: &offsets,
        b: Builder::default(),
        anchors: HashMap::new(),
        open_anchors: Vec::new(),
    };
    let mut parser = Parser::new_from_str(text);
    while let Some(event) = parser.next_event() {
        let (event, span) = event.map_err(|error| Rejected {
            line: error.marker().line(),
            column: error.marker().col() + 1,
            message: error.info().to_owned(),
        })?;
        reader.event(event, span)?;
    }
    Ok(reader.b.finish())
}

/// Character index to byte offset, for texts that are not ASCII: the byte offset of every
/// [`Offsets::STRIDE`]th character, then a short walk.
struct Offsets<'t> {
    text: &'t str,
    checkpoints: Option<Vec<usize>>,
}

impl<'t> Offsets<'t> {
    const STRIDE: usize = 64;

    fn new(text: &'t str) -> Self {
        let checkpoints = (!text.is_ascii()).then(|| {
            text.char_indices()
                .step_by(Self::STRIDE)
                .map(|(at, _)| at)
                .collect()
        });
        Self { text, checkpoints }
    }

    fn byte(&self, char_index: usize) -> usize {
        let Some(checkpoints) = &self.checkpoints else {
            return char_index.min(self.text.len());
        };
        let Some(&from) = checkpoints.get(char_index / Self::STRIDE) else {
            return self.text.len();
        };
        self.text[from..]
            .char_indices()
            .nth(char_index % Self::STRIDE)
            .map_or(self.text.len(), |(at, _)| from + at)
    }
}

struct EventReader<'t, 'o> {
    text: &'t str,
    offsets: &'o Offsets<'t>,
    b: Builder,
    /// saphyr's anchor ids to the nodes they named.
    anchors: HashMap<usize, NodeId>,
    /// The anchor ids of the open collections (0 for none).
    open_anchors: Vec<usize>,
}

impl EventReader<'_, '_> {
    fn rejected(&self, at: usize, message: &str) -> Rejected {
        let before = &self.text[..at.min(self.text.len())];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column_text = before[line_start..].trim_start_matches('\u{feff}');
        Rejected {
            line: before.matches('\n').count() + 1,
            column: column_text.chars().count() + 1,
            message: message.to_owned(),
        }
    }

    fn tag(&mut self, tag: Option<Cow<'_, Tag>>) -> Option<u32> {
        tag.map(|tag| self.b.string(format!("{}{}", tag.handle, tag.suffix)))
    }

    fn event(&mut self, event: Event<'_>, span: EventSpan) -> Result<(), Rejected> {
        let start = self.offsets.byte(span.start.index());
        let end = self.offsets.byte(span.end.index());
        let mapping = matches!(event, Event::MappingStart(..));
        match event {
            Event::Nothing | Event::StreamStart | Event::StreamEnd | Event::DocumentStart(_) => {}
            Event::DocumentEnd => {
                self.anchors.clear();
                self.b.end_document(start);
            }
            Event::MappingStart(anchor, tag) | Event::SequenceStart(anchor, tag) => {
                let tag = self.tag(tag);
                self.b
                    .begin(mapping, start, anchor > 0, tag)
                    .map_err(|_| self.rejected(start, &too_deep()))?;
                self.open_anchors.push(anchor);
            }
            Event::MappingEnd | Event::SequenceEnd => {
                let id = self.b.end(end);
                if let Some(anchor) = self.open_anchors.pop().filter(|&a| a > 0) {
                    self.anchors.insert(anchor, id);
                }
            }
            Event::Alias(anchor) => {
                let Some(&target) = self.anchors.get(&anchor) else {
                    return Err(self.rejected(
                        start,
                        "the alias refers to a node that contains it (a recursive structure)",
                    ));
                };
                self.b.alias(Span::new(start..end), target);
            }
            Event::Scalar(value, style, anchor, tag) => {
                let tag = self.tag(tag);
                let (mut span, style) = self.scalar_span(start, end, style);
                if value.is_empty() && style == Style::Plain {
                    // A missing value: saphyr's span may be a neighbour's (a `---`).
                    span.end = span.start;
                }
                let decoded = (self.text.get(span.range()) != Some(value.as_ref()))
                    .then(|| value.into_owned());
                let id = self.b.scalar(span, style, decoded, anchor > 0, tag);
                if anchor > 0 {
                    self.anchors.insert(anchor, id);
                }
            }
        }
        Ok(())
    }

    /// The content span of a scalar whose event spans `start..end` (which includes its
    /// anchor and tag, if it has them).
    fn scalar_span(&self, start: usize, end: usize, style: ScalarStyle) -> (Span, Style) {
        let s = self.text.as_bytes();
        let start = skip_properties(s, start, end);
        let end = end.max(start);
        let quote = |quote: u8| {
            let close =
                super::closing_quote(s, start + 1, s.len(), quote).unwrap_or(end.max(start + 1));
            Span::new(start + 1..close)
        };
        match style {
            ScalarStyle::Plain => (Span::new(start..end), Style::Plain),
            ScalarStyle::SingleQuoted if s.get(start) == Some(&b'\'') => {
                (quote(b'\''), Style::Single)
            }
            ScalarStyle::DoubleQuoted if s.get(start) == Some(&b'"') => {
                (quote(b'"'), Style::Double)
            }
            ScalarStyle::SingleQuoted => (Span::new(start..end), Style::Single),
            ScalarStyle::DoubleQuoted => (Span::new(start..end), Style::Double),
            ScalarStyle::Literal => (Span::new(start..end), Style::Literal),
            ScalarStyle::Folded => (Span::new(start..end), Style::Folded),
        }
    }
}

/// The offset after the anchor and tag (and the space, line breaks and comments after them)
/// that start at `p`, before `end`.
fn skip_properties(s: &[u8], mut p: usize, end: usize) -> usize {
    while p < end && matches!(s[p], b'&' | b'!') {
        while p < end && !matches!(s[p], b' ' | b'\t' | b'\r' | b'\n') {
            p += 1;
        }
        loop {
            while p < end && matches!(s[p], b' ' | b'\t' | b'\r' | b'\n') {
                p += 1;
            }
            if p < end && s[p] == b'#' {
                p = memchr::memchr(b'\n', &s[p..end]).map_or(end, |i| p + i);
            } else {
                break;
            }
        }
    }
    p
}

fn too_deep() -> String {
    format!("collections nested deeper than {MAX_DEPTH} levels")
}
