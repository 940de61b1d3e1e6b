//! What every scanner shares: classifying a written reference, positions, the ignore comment.

use std::ops::Range;

use tagpin_reference::ImageReference;

use crate::{EditSite, FileKind, Finding, Status, Warning};

/// The byte-order mark, counted in byte offsets but not in columns.
pub(crate) const BOM: &str = "\u{feff}";

/// The inline comment that excludes a line's reference.
pub(crate) const IGNORE_MARK: &str = "tagpin:ignore";

/// Whether `text` holds an expansion tagpin cannot resolve: `{{`, `${`, `$VAR`, `$(…)`.
pub(crate) fn is_templated(text: &str) -> bool {
    text.contains('$') || text.contains("{{") || text.contains("}}")
}

/// Status and parsed reference for a reference written as `text` (templates already ruled out).
///
/// `None` when `text` is not an image reference at all.
pub(crate) fn classify(text: &str) -> Option<(Status, ImageReference)> {
    let reference = ImageReference::parse(text).ok()?;
    let status = match (reference.tag().is_some(), reference.digest().is_some()) {
        (_, false) => Status::Floating,
        (true, true) => Status::Pinned,
        (false, true) => Status::DigestOnly,
    };
    Some((status, reference))
}

/// Whether `line` carries a `# tagpin:ignore` comment.
pub(crate) fn has_ignore_comment(line: &str) -> bool {
    let mut rest = line;
    while let Some(hash) = rest.find('#') {
        let after = rest[hash + 1..].trim_start();
        if after.starts_with(IGNORE_MARK) {
            return true;
        }
        rest = &rest[hash + 1..];
    }
    false
}

/// Why a reference on a Flux image-automation marker line is left alone.
pub(crate) const FLUX_MANAGED: &str = "managed by Flux image automation (a `$imagepolicy` marker \
     on its line): Flux rewrites it, so tagpin leaves it alone";

/// Whether `line` carries a Flux image-automation marker in a comment:
/// `# {"$imagepolicy": "ns:name"}` (or `ns:name:tag`, `ns:name:name`).
pub(crate) fn has_flux_marker(line: &str) -> bool {
    line.find('#').is_some_and(|hash| {
        let comment = line[hash + 1..].trim_start();
        comment.starts_with('{') && comment.contains("\"$imagepolicy\"")
    })
}

/// Collects findings for one file and turns byte offsets into lines and columns.
///
/// Both stay linear on a file that is one long line (minified JSON): a column is counted from
/// the previous position on the same line, and each line is searched for the ignore comment
/// once (and no line at all when the file does not contain it).
pub(crate) struct Sink<'a> {
    pub(crate) text: &'a str,
    pub(crate) kind: FileKind,
    line_starts: Vec<usize>,
    /// The last position computed: (byte offset, line index, column).
    last: Option<(usize, usize, usize)>,
    /// The lines with a `# tagpin:ignore` comment.
    ignored: MarkedLines,
    /// The lines with a Flux image-automation marker.
    flux: MarkedLines,
    pub(crate) findings: Vec<Finding>,
}

/// Which lines of a text carry a comment that holds `mark`, as the findings ask: no line is
/// looked at when the text lacks the mark, and each line once, so a text that is one long line
/// (minified JSON) with many findings stays linear.
struct MarkedLines {
    mark: &'static str,
    /// Whether a line's text carries the comment.
    carries: fn(&str) -> bool,
    /// Whether the text holds the mark anywhere (looked up on the first finding).
    present: Option<bool>,
    /// Per line index, whether it carries the comment (filled as asked).
    lines: std::collections::HashMap<usize, bool>,
}

impl MarkedLines {
    fn new(mark: &'static str, carries: fn(&str) -> bool) -> Self {
        Self {
            mark,
            carries,
            present: None,
            lines: std::collections::HashMap::new(),
        }
    }

    fn present(&mut self, text: &str) -> bool {
        let mark = self.mark.as_bytes();
        *self
            .present
            .get_or_insert_with(|| memchr::memmem::find(text.as_bytes(), mark).is_some())
    }

    /// Whether line `index` of `text`, which starts at `line_starts[index]`, carries it.
    fn line(&mut self, text: &str, line_starts: &[usize], index: usize) -> bool {
        let carries = self.carries;
        *self.lines.entry(index).or_insert_with(|| {
            let start = line_starts[index];
            let end = line_starts
                .get(index + 1)
                .map_or(text.len(), |next| next - 1);
            carries(text.get(start..end).unwrap_or("").trim_end_matches('\r'))
        })
    }
}

/// A finding before its position is known.
pub(crate) struct Found {
    pub(crate) span: Range<usize>,
    pub(crate) text: String,
    pub(crate) status: Status,
    pub(crate) reference: Option<ImageReference>,
    pub(crate) site: EditSite,
    pub(crate) warnings: Vec<Warning>,
    /// Other offsets whose lines may carry the ignore comment (split maps).
    pub(crate) also_lines: Vec<usize>,
    /// See [`Finding::pull_policy`].
    pub(crate) pull_policy: Option<crate::Edit>,
    /// See [`Finding::unproven`].
    pub(crate) unproven: Option<String>,
}

impl Found {
    /// A reference written in one place at `span`, as `text`.
    pub(crate) fn inline(span: Range<usize>, text: &str) -> Option<Self> {
        let (status, reference) = if is_templated(text) {
            (Status::Templated, None)
        } else {
            let (status, reference) = classify(text)?;
            (status, Some(reference))
        };
        Some(Self {
            span,
            text: text.to_owned(),
            status,
            reference,
            site: EditSite::Inline,
            warnings: Vec::new(),
            also_lines: Vec::new(),
            pull_policy: None,
            unproven: None,
        })
    }
}

impl Found {
    /// A name that is not a registry image (a stage, `scratch`, an image being built).
    pub(crate) fn local(span: Range<usize>, text: &str) -> Self {
        Self {
            span,
            text: text.to_owned(),
            status: Status::Local,
            reference: None,
            site: EditSite::Inline,
            warnings: Vec::new(),
            also_lines: Vec::new(),
            pull_policy: None,
            unproven: None,
        }
    }

    /// A reference that cannot be resolved here.
    pub(crate) fn templated(span: Range<usize>, text: &str) -> Self {
        Self {
            status: Status::Templated,
            ..Self::local(span, text)
        }
    }
}

impl<'a> Sink<'a> {
    pub(crate) fn new(text: &'a str, kind: FileKind) -> Self {
        Self {
            text,
            kind,
            line_starts: Vec::new(),
            last: None,
            ignored: MarkedLines::new(IGNORE_MARK, has_ignore_comment),
            flux: MarkedLines::new("$imagepolicy", has_flux_marker),
            findings: Vec::new(),
        }
    }

    fn line_index(&mut self, offset: usize) -> usize {
        if self.line_starts.is_empty() {
            self.line_starts.push(0);
            self.line_starts
                .extend(memchr::memchr_iter(b'\n', self.text.as_bytes()).map(|at| at + 1));
        }
        match self.line_starts.binary_search(&offset) {
            Ok(index) => index,
            Err(index) => index - 1,
        }
    }

    /// Whether the line holding `offset` carries a `# tagpin:ignore` comment.
    pub(crate) fn line_is_ignored(&mut self, offset: usize) -> bool {
        if !self.ignored.present(self.text) {
            return false;
        }
        let index = self.line_index(offset);
        self.ignored.line(self.text, &self.line_starts, index)
    }

    /// Whether the line holding `offset` carries a Flux image-automation marker.
    pub(crate) fn line_is_flux_managed(&mut self, offset: usize) -> bool {
        if !self.flux.present(self.text) {
            return false;
        }
        let index = self.line_index(offset);
        self.flux.line(self.text, &self.line_starts, index)
    }

    /// The 1-based line and column (in characters, a BOM not counted) of `offset`.
    pub(crate) fn position(&mut self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let index = self.line_index(offset);
        let line_start = self.line_starts[index];
        let (counted_from, counted) = match self.last {
            Some((at, line, column)) if line == index && at <= offset => (at, column - 1),
            _ if line_start == 0 && self.text.starts_with(BOM) => (BOM.len().min(offset), 0),
            _ => (line_start, 0),
        };
        let column = self
            .text
            .get(counted_from..offset)
            .map_or(0, |s| s.chars().count())
            + counted
            + 1;
        self.last = Some((offset, index, column));
        (index + 1, column)
    }

    pub(crate) fn push(&mut self, found: Found) {
        let offset = found.span.start.min(self.text.len());
        let (line, column) = self.position(offset);
        let mut status = found.status;
        let ignored = std::iter::once(offset)
            .chain(found.also_lines.iter().copied())
            .any(|at| self.line_is_ignored(at));
        if ignored {
            status = Status::Ignored;
        }
        self.findings.push(Finding {
            kind: self.kind,
            line,
            column,
            span: found.span,
            text: found.text,
            status,
            reference: found.reference,
            site: found.site,
            warnings: found.warnings,
            resolve: None,
            tag_source: None,
            extras: (found.pull_policy.is_some() || found.unproven.is_some()).then(|| {
                Box::new(crate::Extras {
                    platform: None,
                    pull_policy: found.pull_policy,
                    unproven: found.unproven,
                })
            }),
        });
    }

    /// Findings pushed so far.
    pub(crate) fn len(&self) -> usize {
        self.findings.len()
    }

    /// Records the literal `FROM --platform=` value of the finding just pushed.
    pub(crate) fn set_platform_of_last(&mut self, platform: &str) {
        if let Some(finding) = self.findings.last_mut() {
            finding.extras.get_or_insert_default().platform = Some(platform.to_owned());
        }
    }

    pub(crate) fn finish(mut self) -> Vec<Finding> {
        self.findings
            .sort_by_key(|finding| (finding.span.start, finding.span.end));
        self.findings
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file that is one long line with many findings stays linear: no line is read when the
    /// file lacks a mark, and each line once when it has one.
    #[test]
    fn each_line_is_read_for_its_marks_at_most_once() {
        let line = format!("{{{}}}", "image: nginx:1.25, ".repeat(1000));
        let mut sink = Sink::new(&line, FileKind::Yaml);
        for at in (0..line.len()).step_by(19) {
            assert!(!sink.line_is_ignored(at));
            assert!(!sink.line_is_flux_managed(at));
        }
        assert!(sink.ignored.lines.is_empty() && sink.flux.lines.is_empty());

        let text = "a: x # tagpin:ignore\nb: y # {\"$imagepolicy\": \"ns:p\"}\r\nc: z\n";
        let mut sink = Sink::new(text, FileKind::Yaml);
        let starts = [0, 21, 54];
        for _ in 0..3 {
            let ignored: Vec<bool> = starts
                .iter()
                .map(|&at| sink.line_is_ignored(at + 1))
                .collect();
            let flux: Vec<bool> = starts
                .iter()
                .map(|&at| sink.line_is_flux_managed(at + 1))
                .collect();
            assert_eq!(ignored, [true, false, false]);
            assert_eq!(flux, [false, true, false]);
        }
        assert_eq!((sink.ignored.lines.len(), sink.flux.lines.len()), (3, 3));
    }
}
