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

/// The registries that name an image built on this machine and loaded into its runtime, never
/// pushed: `ko.local` (ko's daemon), `kind.local` (ko into a kind cluster) and `dev.local`
/// (Knative skips resolving their tags for that reason), and `localhost` without a port,
/// where podman keeps the images it builds (`podman build -t app` makes `localhost/app`).
/// No registry answers for them. A registry on a port of this machine (`localhost:5000`) is
/// one like any other.
const LOCAL_REGISTRIES: [&str; 4] = ["ko.local", "kind.local", "dev.local", "localhost"];

/// Whether `registry` (as [`ImageReference::registry`] names it) holds only images built on
/// this machine ([`LOCAL_REGISTRIES`]).
pub(crate) fn is_local_registry(registry: &str) -> bool {
    LOCAL_REGISTRIES.contains(&registry)
}

/// Whether `tag` holds a placeholder that a script fills in before the file is used: a word of
/// capitals joined by `_` (`golang:GO_VERSION`, `node:NODE_VERSION-alpine` in a
/// `Dockerfile.in` that `sed` completes), a word between double underscores (`app:__TAG__`,
/// token replacement in release pipelines), or the bare words `TAG` and `VERSION`
/// (`example.com/app:TAG`). Registries' tags are not written so; such a reference cannot be
/// resolved, as one with `${GO_VERSION}` cannot.
fn names_a_placeholder(tag: &str) -> bool {
    if matches!(tag, "TAG" | "VERSION") {
        return true;
    }
    tag.split(['-', '.', '+']).any(|word| {
        if word.len() > 4 && word.starts_with("__") && word.ends_with("__") {
            return true;
        }
        let mut parts = word.split('_');
        let capital = |part: &str| {
            part.as_bytes().first().is_some_and(u8::is_ascii_uppercase)
                && part
                    .bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
        };
        parts.next().is_some_and(capital) && {
            let rest: Vec<&str> = parts.collect();
            !rest.is_empty() && rest.iter().all(|part| capital(part))
        }
    })
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

/// The byte ranges of `text` that release-please's generic updater rewrites at each release,
/// in order: a line with an `x-release-please-version` (or `-major`, `-minor`, `-patch`) mark,
/// and the lines from one with `x-release-please-start-…` to the next with
/// `x-release-please-end` (to the text's end when none follows). Empty, after one search, for
/// a text without the mark.
fn release_managed(text: &str) -> Vec<Range<usize>> {
    static MARK: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new("x-release-please-"));
    let bytes = text.as_bytes();
    let mut ranges: Vec<Range<usize>> = Vec::new();
    let mut open: Option<usize> = None;
    for at in MARK.find_iter(bytes) {
        let start = memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |i| i + 1);
        let end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |i| at + i);
        let rest = &bytes[at + "x-release-please-".len()..];
        if rest.starts_with(b"start") {
            open.get_or_insert(start);
        } else if rest.starts_with(b"end") {
            if let Some(opened) = open.take() {
                ranges.push(opened..end);
            }
        } else if open.is_none() {
            ranges.push(start..end);
        }
    }
    if let Some(opened) = open {
        ranges.push(opened..bytes.len());
    }
    ranges
}

/// Why a reference release-please rewrites is left alone.
pub(crate) const RELEASE_PLEASE_MANAGED: &str = "its version is rewritten by release-please at \
     each release (an `x-release-please-` marker): the digest written beside it would then pull \
     the previous release's image, so tagpin leaves it alone";

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
/// the previous position on the same line, and each line with a finding is searched for the
/// ignore comment once.
pub(crate) struct Sink<'a> {
    pub(crate) text: &'a str,
    pub(crate) kind: FileKind,
    /// Built on the first position asked.
    lines: Option<LineIndex>,
    /// The last position computed: (byte offset, line index, column).
    last: Option<(usize, usize, usize)>,
    /// The lines with a `# tagpin:ignore` comment.
    ignored: MarkedLines,
    /// The lines with a Flux image-automation marker.
    flux: MarkedLines,
    /// The byte ranges release-please rewrites (see [`release_managed`]), found when a
    /// finding first asks.
    release_managed: Option<Vec<Range<usize>>>,
    pub(crate) findings: Vec<Finding>,
    /// The names a build in the text tags its image with (`docker build -t app .`), for a
    /// script: a command that runs one of them runs what was built.
    pub(crate) built: Vec<String>,
    /// Where the images a script's `docker pull` (or podman's, nerdctl's) names start: pulled
    /// for a command that runs them (see [`crate::shell::mark_named_elsewhere`]).
    pub(crate) pulled: Vec<usize>,
}

/// Which lines of a text carry a comment with `mark`, as the findings ask. A few findings have
/// their own lines looked at; once they are many for the text's size, one search of the whole
/// text tells whether any line holds the mark at all (most texts do not), and if none does, no
/// line is looked at again. Either way the work is at most about twice the cheaper of the two:
/// a search per file cost more than the lines of a file with a few findings, and the lines of a
/// file with hundreds of thousands of findings far more than a search. Each line is looked at
/// once, so a text that is one long line (minified JSON) with many findings stays linear.
struct MarkedLines {
    mark: &'static str,
    /// Whether a line's text carries the comment.
    carries: fn(&str) -> bool,
    /// Whether the text holds the mark anywhere, once searched.
    present: Option<bool>,
    /// Lines asked of before the search.
    asked: usize,
    /// Per line index, whether it carries the comment (filled as asked). Ordered, not hashed:
    /// most files ask of a few lines, where hashing each index cost more than the search.
    lines: std::collections::BTreeMap<usize, bool>,
}

impl MarkedLines {
    /// How many bytes of the text a line asked of is worth: about what a search of them costs.
    const BYTES_PER_LINE: usize = 512;

    fn new(mark: &'static str, carries: fn(&str) -> bool) -> Self {
        Self {
            mark,
            carries,
            present: None,
            asked: 0,
            lines: std::collections::BTreeMap::new(),
        }
    }

    /// Whether line `index` of `text`, which starts at byte `start`, carries it.
    fn line(&mut self, text: &str, index: usize, start: usize) -> bool {
        if self.present.is_none() {
            self.asked += 1;
            if self.asked.saturating_mul(Self::BYTES_PER_LINE) > text.len() {
                let found = memchr::memmem::find(text.as_bytes(), self.mark.as_bytes());
                self.present = Some(found.is_some());
            }
        }
        if self.present == Some(false) {
            return false;
        }
        let carries = self.carries;
        *self.lines.entry(index).or_insert_with(|| {
            let rest = text.get(start..).unwrap_or("");
            let line = memchr::memchr(b'\n', rest.as_bytes()).map_or(rest, |end| &rest[..end]);
            carries(line.trim_end_matches('\r'))
        })
    }
}

/// Which line a byte offset is on, for a text whose findings are anywhere in it. It keeps, per
/// block of [`LineIndex::BLOCK`] bytes, how many lines end before it and where the line open at
/// its start began, and counts the rest of the way within the block: building it is a count
/// of newlines (vectorised), where listing every line's start was a search and a push per line.
struct LineIndex {
    /// Per block: the newlines before it, and the start of the line open at its start.
    before: Vec<(usize, usize)>,
}

impl LineIndex {
    const BLOCK: usize = 256;

    fn new(text: &[u8]) -> Self {
        let mut before = Vec::with_capacity(text.len() / Self::BLOCK + 2);
        let (mut lines, mut start) = (0, 0);
        for (index, block) in text.chunks(Self::BLOCK).enumerate() {
            before.push((lines, start));
            let ends = newlines(block);
            if ends > 0 {
                lines += ends;
                start = index * Self::BLOCK + memchr::memrchr(b'\n', block).map_or(0, |at| at + 1);
            }
        }
        // An offset at the end of a text of whole blocks.
        before.push((lines, start));
        Self { before }
    }

    /// The 0-based index of the line holding `offset` (at most `text.len()`), and where that
    /// line starts.
    fn locate(&self, text: &[u8], offset: usize) -> (usize, usize) {
        let block = offset / Self::BLOCK;
        let (lines, start) = self.before[block];
        let from = block * Self::BLOCK;
        let within = &text[from..offset];
        let start = memchr::memrchr(b'\n', within).map_or(start, |at| from + at + 1);
        (lines + newlines(within), start)
    }
}

/// How many `\n` bytes `bytes` holds.
fn newlines(bytes: &[u8]) -> usize {
    bytecount::count(bytes, b'\n')
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
            if is_local_registry(reference.registry()) {
                return Some(Self::local(span, text));
            }
            if reference.tag().is_some_and(names_a_placeholder) {
                return Some(Self::templated(span, text));
            }
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
            lines: None,
            last: None,
            ignored: MarkedLines::new(IGNORE_MARK, has_ignore_comment),
            flux: MarkedLines::new("$imagepolicy", has_flux_marker),
            release_managed: None,
            findings: Vec::new(),
            built: Vec::new(),
            pulled: Vec::new(),
        }
    }

    /// The 0-based line index of `offset` (at most the text's length) and the line's start.
    fn locate(&mut self, offset: usize) -> (usize, usize) {
        let text = self.text.as_bytes();
        self.lines
            .get_or_insert_with(|| LineIndex::new(text))
            .locate(text, offset)
    }

    /// Whether the line holding `offset` carries a `# tagpin:ignore` comment.
    pub(crate) fn line_is_ignored(&mut self, offset: usize) -> bool {
        let (index, start) = self.locate(offset.min(self.text.len()));
        self.ignored.line(self.text, index, start)
    }

    /// Whether the line holding `offset` carries a Flux image-automation marker.
    pub(crate) fn line_is_flux_managed(&mut self, offset: usize) -> bool {
        let (index, start) = self.locate(offset.min(self.text.len()));
        self.flux.line(self.text, index, start)
    }

    /// The 1-based line and column (in characters, a BOM not counted) of `offset`.
    pub(crate) fn position(&mut self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let (index, line_start) = self.locate(offset);
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

    /// Whether release-please rewrites the line holding `offset` (see [`release_managed`]).
    fn line_is_release_managed(&mut self, offset: usize) -> bool {
        let text = self.text;
        let ranges = self
            .release_managed
            .get_or_insert_with(|| release_managed(text));
        let after = ranges.partition_point(|range| range.end <= offset);
        ranges.get(after).is_some_and(|range| range.start <= offset)
    }

    pub(crate) fn push(&mut self, found: Found) {
        let offset = found.span.start.min(self.text.len());
        let (line, column) = self.position(offset);
        let mut status = found.status;
        let mut site = found.site;
        let ignored = std::iter::once(offset)
            .chain(found.also_lines.iter().copied())
            .any(|at| self.line_is_ignored(at));
        if ignored {
            status = Status::Ignored;
        } else if matches!(status, Status::Floating | Status::Pinned)
            && self.line_is_release_managed(offset)
        {
            status = Status::Ignored;
            site = EditSite::Unsupported {
                reason: RELEASE_PLEASE_MANAGED.to_owned(),
            };
        }
        self.findings.push(Finding {
            kind: self.kind,
            line,
            column,
            span: found.span,
            text: found.text,
            status,
            reference: found.reference,
            site,
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

    #[test]
    fn release_please_rewrites_its_marked_lines_and_blocks() {
        let text = "a: 1\nb: 2 # x-release-please-version\n# x-release-please-start-version\nc: 3\nd: 4\n# x-release-please-end\ne: 5\n# x-release-please-start-major\nf: 6\n";
        let managed: Vec<&str> = release_managed(text)
            .into_iter()
            .map(|range| text[range].lines().next().unwrap_or_default())
            .collect();
        assert_eq!(
            managed,
            [
                "b: 2 # x-release-please-version",
                "# x-release-please-start-version",
                "# x-release-please-start-major"
            ]
        );
        let mut sink = Sink::new(text, FileKind::Yaml);
        let lines: Vec<bool> = ["a:", "b:", "c:", "d:", "e:", "f:"]
            .iter()
            .map(|key| sink.line_is_release_managed(text.find(key).unwrap()))
            .collect();
        assert_eq!(lines, [false, true, true, true, false, true]);
        assert!(release_managed("image: nginx:1.25\n").is_empty());
    }

    #[test]
    fn placeholders_are_capital_words_joined_by_underscores() {
        for (tag, placeholder) in [
            ("GO_VERSION", true),
            ("NODE_VERSION-alpine", true),
            ("1.22-ALPINE_TAG", true),
            ("A_B_C", true),
            ("latest", false),
            ("1.0.0_RC_1", false),
            ("JDK_17", false),
            ("RELEASE", false),
            ("v1.2_BETA", false),
            ("_LEADING", false),
            ("TRAILING_", false),
            ("Go_Version", false),
            ("__TAG__", true),
            ("__image_tag__", true),
            ("1.2-__BUILD__", true),
            ("TAG", true),
            ("VERSION", true),
            ("____", false),
            ("__", false),
            ("TAGS", false),
            ("v__1", false),
        ] {
            assert_eq!(names_a_placeholder(tag), placeholder, "{tag}");
        }
    }

    /// A file that is one long line with many findings stays linear: each line is read once
    /// for each mark.
    #[test]
    fn each_line_is_read_for_its_marks_at_most_once() {
        let line = format!("{{{}}}", "image: nginx:1.25, ".repeat(1000));
        let mut sink = Sink::new(&line, FileKind::Yaml);
        for at in (0..line.len()).step_by(19) {
            assert!(!sink.line_is_ignored(at));
            assert!(!sink.line_is_flux_managed(at));
        }
        assert_eq!((sink.ignored.lines.len(), sink.flux.lines.len()), (1, 1));

        // Many findings on many lines of a text without the marks: past a few, one search of
        // the text settles it, and no more lines are looked at.
        let text = "image: nginx:1.25\n".repeat(10_000);
        let mut sink = Sink::new(&text, FileKind::Yaml);
        for at in (0..text.len()).step_by(18) {
            assert!(!sink.line_is_ignored(at));
            assert!(!sink.line_is_flux_managed(at));
        }
        assert_eq!(sink.ignored.present, Some(false));
        let looked_at = text.len() / MarkedLines::BYTES_PER_LINE;
        assert_eq!(sink.ignored.lines.len(), looked_at);
        assert_eq!(sink.flux.lines.len(), looked_at);
        // With a mark somewhere, every line asked of is looked at, once.
        let marked = format!("{text}x: y # tagpin:ignore\n");
        let mut sink = Sink::new(&marked, FileKind::Yaml);
        for _ in 0..2 {
            for at in (0..marked.len()).step_by(18) {
                let last = at >= text.len();
                assert_eq!(sink.line_is_ignored(at), last, "{at}");
            }
        }
        assert_eq!(sink.ignored.lines.len(), 10_001);

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

    /// The line of an offset and its start, counted the slow way.
    #[expect(clippy::naive_bytecount, reason = "the slow way is the oracle")]
    fn naive(text: &str, offset: usize) -> (usize, usize) {
        let before = &text.as_bytes()[..offset];
        let line = before.iter().filter(|&&b| b == b'\n').count();
        let start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |at| at + 1);
        (line, start)
    }

    #[test]
    fn every_offset_is_located_on_its_line() {
        let long = "x".repeat(3 * LineIndex::BLOCK + 7);
        let texts = [
            String::new(),
            "\n".to_owned(),
            "a".to_owned(),
            "a: b\nc: d\n".to_owned(),
            "a: b\r\nc: d".to_owned(),
            "\n".repeat(2 * LineIndex::BLOCK),
            format!("{long}\n{long}\n\n{long}"),
            format!("a\n{}", "y".repeat(LineIndex::BLOCK - 2)),
            format!("{}\n", "z".repeat(LineIndex::BLOCK - 1)),
            format!("{BOM}k: {long}\nv: w\n"),
        ];
        for text in &texts {
            let mut sink = Sink::new(text, FileKind::Yaml);
            for offset in 0..=text.len() {
                assert_eq!(
                    sink.locate(offset),
                    naive(text, offset),
                    "{offset} in {text:?}"
                );
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn any_offset_is_located_on_its_line(
            text in "[ab\n\r]{0,700}",
            offsets in proptest::collection::vec(0usize..701, 1..20),
        ) {
            let mut sink = Sink::new(&text, FileKind::Yaml);
            for offset in offsets.into_iter().map(|o| o.min(text.len())) {
                proptest::prop_assert_eq!(sink.locate(offset), naive(&text, offset));
            }
        }
    }
}
