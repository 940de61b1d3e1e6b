//! Literal (`|`) and folded (`>`) block scalars for the fast reader.

use super::{Bail, Line, Reader};
use crate::yaml::tree::{Span, Style};

pub(super) struct BlockScalar {
    /// From the indicator to the end of the last content line.
    pub(super) span: Span,
    pub(super) style: Style,
    pub(super) value: String,
    /// Where reading goes on.
    pub(super) next: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Chomp {
    Strip,
    Clip,
    Keep,
}

/// One line of the content, without the content's indentation. (Each counts as ending in a
/// line break, even the file's last line without one, as the YAML test suite's L24T has it.)
struct ContentLine<'t> {
    text: &'t str,
}

/// The block scalar whose indicator is at `at` on `line`, in a collection indented `parent`.
/// Explicit indentation indicators, tabs and a document-level block scalar bail.
pub(super) fn read(
    reader: &Reader<'_>,
    at: usize,
    line: Line,
    parent: isize,
) -> Result<BlockScalar, Bail> {
    let s = reader.s;
    let style = if s[at] == b'|' {
        Style::Literal
    } else {
        Style::Folded
    };
    let mut p = at + 1;
    let chomp = match s.get(p) {
        Some(b'-') => Chomp::Strip,
        Some(b'+') => Chomp::Keep,
        _ => Chomp::Clip,
    };
    if chomp != Chomp::Clip {
        p += 1;
    }
    if p < line.end && s[p] != b' ' {
        return Err(Bail);
    }
    let rest = super::scalar::skip_spaces(s, p, line.end);
    if rest < line.end && s[rest] != b'#' {
        return Err(Bail);
    }
    // A document-level block scalar's indentation rules differ: left to the other reader.
    let min = usize::try_from(parent + 1).map_err(|_| Bail)?;
    if parent < 0 {
        return Err(Bail);
    }
    let (lines, end, next) = content_lines(reader, line.next, min)?;
    let value = match style {
        Style::Literal => literal(&lines, chomp),
        _ => folded(&lines, chomp)?,
    };
    Ok(BlockScalar {
        span: Span::new(at..end.max(line.end)),
        style,
        value,
        next,
    })
}

/// The content lines from `pos`: indented as the first non-blank line is, which must be at
/// least `min`; the end of the last one, and where reading goes on.
fn content_lines<'t>(
    reader: &Reader<'t>,
    mut pos: usize,
    min: usize,
) -> Result<(Vec<ContentLine<'t>>, usize, usize), Bail> {
    let s = reader.s;
    let mut indent = None;
    let mut leading_spaces = 0;
    let mut lines = Vec::new();
    let mut end = 0;
    while pos < s.len() {
        let line = reader.line_at(pos);
        let first = line.start + line.indent;
        if memchr::memchr(b'\r', &s[line.start..line.end]).is_some() {
            return Err(Bail);
        }
        let blank = first == line.end;
        if blank && line.start < line.end && line.end == s.len() {
            // Spaces ending the text with no line break after them: `saphyr-parser` reads
            // them as one more empty line ("a\n\n" where PyYAML reads "a\n"), and the
            // conformant reader decides, so that the two readers never disagree.
            return Err(Bail);
        }
        let content_indent = match indent {
            Some(indent) => indent,
            None if blank => {
                leading_spaces = leading_spaces.max(line.indent);
                line.indent
            }
            None if line.indent < min => break,
            None => {
                // A tab where the indentation is detected, or leading blank lines indented
                // deeper than the first line (an error): the conformant reader decides.
                if s[first] == b'\t' || leading_spaces > line.indent {
                    return Err(Bail);
                }
                indent = Some(line.indent);
                line.indent
            }
        };
        if !blank && line.indent < content_indent {
            break;
        }
        let text = reader
            .text
            .get(line.start + content_indent..line.end)
            .unwrap_or("");
        if !text.is_empty() {
            end = line.end;
        }
        lines.push(ContentLine { text });
        pos = line.next;
    }
    if indent.is_none() && leading_spaces > 0 {
        // No content, only blank lines with spaces: the indentation is not detected.
        return Err(Bail);
    }
    Ok((lines, end, pos))
}

/// Splits off the trailing empty lines: (the lines up to the last non-empty one, how many
/// empty lines follow).
fn trailing<'a, 't>(lines: &'a [ContentLine<'t>]) -> (&'a [ContentLine<'t>], usize) {
    let body = lines
        .iter()
        .rposition(|l| !l.text.is_empty())
        .map_or(0, |i| i + 1);
    (&lines[..body], lines.len() - body)
}

fn chomped(mut value: String, body: &[ContentLine<'_>], trailing: usize, chomp: Chomp) -> String {
    if chomp != Chomp::Strip && !body.is_empty() {
        value.push('\n');
    }
    if chomp == Chomp::Keep {
        value.extend(std::iter::repeat_n('\n', trailing));
    }
    value
}

fn literal(lines: &[ContentLine<'_>], chomp: Chomp) -> String {
    let (body, trailing) = trailing(lines);
    let mut value = String::new();
    for (i, line) in body.iter().enumerate() {
        if i > 0 {
            value.push('\n');
        }
        value.push_str(line.text);
    }
    chomped(value, body, trailing, chomp)
}

/// Folding: a line break between two lines that do not start with white space is a space,
/// unless empty lines stand between them, each of which is then a line feed; breaks next to a
/// more-indented line are kept.
fn folded(lines: &[ContentLine<'_>], chomp: Chomp) -> Result<String, Bail> {
    let (body, trailing) = trailing(lines);
    let mut value = String::new();
    let mut previous: Option<&str> = None;
    let mut empty = 0;
    for line in body {
        if line.text.contains('\t') {
            return Err(Bail);
        }
        if line.text.is_empty() {
            empty += 1;
            continue;
        }
        match previous {
            None => value.extend(std::iter::repeat_n('\n', empty)),
            Some(before) => {
                let spaced = |l: &str| l.starts_with(' ');
                if spaced(before) || spaced(line.text) {
                    value.extend(std::iter::repeat_n('\n', empty + 1));
                } else if empty == 0 {
                    value.push(' ');
                } else {
                    value.extend(std::iter::repeat_n('\n', empty));
                }
            }
        }
        value.push_str(line.text);
        previous = Some(line.text);
        empty = 0;
    }
    Ok(chomped(value, body, trailing, chomp))
}
