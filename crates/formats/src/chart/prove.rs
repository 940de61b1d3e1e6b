//! The proof that a chart's values edits change nothing but the images they pin: the chart
//! rendered with the edited values against the chart rendered with the values as they were.

use std::collections::BTreeSet;

use tagpin_reference::Digest;

use super::rendered::{Image, Rendered};

/// An image the edited values may render: the name, the tag (none where the chart drops it
/// when a digest is set) and the new digest. A `required` one must show at least once: the
/// renderings showed where its map renders. Others (a string in a list the chart copies
/// whole) may show, or not, if the chart leaves them out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expected {
    pub name: String,
    pub tag: Option<String>,
    pub digest: Digest,
    pub required: bool,
    /// Its map's `pullPolicy` was set to `IfNotPresent` too (`pin --latest pull-policy`): its
    /// containers' `imagePullPolicy` may change to that.
    pub pull_policy: bool,
}

/// Checks that `after` differs from `before` only in image references that became one of
/// `expected` (each required one showing at least once) with the name they had. The error says
/// what else changed, or what did not.
///
/// `again` is a second rendering of the values `before` was rendered with: the lines where
/// the two differ are the chart's own randomness (`randAlphaNum` passwords, `genCA`
/// certificates) and say nothing of the edit. A chart whose renderings differ in shape
/// cannot be compared.
pub fn prove(
    before: &Rendered,
    again: &Rendered,
    after: &Rendered,
    expected: &[Expected],
) -> Result<(), String> {
    let noise = noise(before, again)?;
    if before.documents.len() != after.documents.len() {
        return Err(format!(
            "the rendering changes from {} documents to {}",
            before.documents.len(),
            after.documents.len()
        ));
    }
    let (images_before, images_after) = (before.images(), after.images());
    let mut seen = vec![false; expected.len()];
    let mut policy_seen = vec![false; expected.len()];
    for (index, (old, new)) in before.documents.iter().zip(&after.documents).enumerate() {
        if old.source != new.source {
            return Err(format!(
                "the rendering changes {} into {}",
                old.source, new.source
            ));
        }
        let (old_lines, new_lines): (Vec<&str>, Vec<&str>) =
            (old.text.lines().collect(), new.text.lines().collect());
        if old_lines.len() != new_lines.len() {
            return Err(format!(
                "the rendering of {} changes its number of lines",
                old.source
            ));
        }
        let starts = (line_starts(&old.text), line_starts(&new.text));
        for (number, (old_line, new_line)) in old_lines.iter().zip(&new_lines).enumerate() {
            let at = (starts.0[number], starts.1[number]);
            if old_line == new_line || noise.contains(&(index, number)) {
                continue;
            }
            let on_line = |images: &[Image], start: usize, len: usize| -> Vec<Image> {
                images
                    .iter()
                    .filter(|i| {
                        i.document == index
                            && i.finding.span.start >= start
                            && i.finding.span.end <= start + len
                    })
                    .cloned()
                    .collect()
            };
            let olds = on_line(&images_before, at.0, old_line.len());
            let news = on_line(&images_after, at.1, new_line.len());
            if olds.is_empty()
                && news.is_empty()
                && let Some(column) = sets_pull_policy(old_line, new_line)
            {
                let document = RenderedDocument {
                    index,
                    lines: &new_lines,
                    starts: &starts.1,
                    images: &images_after,
                };
                let beside = document.pinned_beside(number, column, expected);
                if !beside.is_empty() {
                    for i in beside {
                        policy_seen[i] = true;
                    }
                    continue;
                }
            }
            let unexpected = || {
                format!(
                    "the rendering also changes `{}` in {}",
                    key_of(new_line),
                    new.source
                )
            };
            if olds.len() != 1 || news.len() != 1 {
                return Err(unexpected());
            }
            let (old_image, new_image) = (&olds[0].finding, &news[0].finding);
            let around = |line: &str, image: &crate::Finding, start: usize| {
                let (from, to) = (image.span.start - start, image.span.end - start);
                (line[..from].to_owned(), line[to..].to_owned())
            };
            if around(old_line, old_image, at.0) != around(new_line, new_image, at.1) {
                return Err(unexpected());
            }
            let (Some(old_ref), Some(new_ref)) = (&old_image.reference, &new_image.reference)
            else {
                return Err(unexpected());
            };
            // Two maps may hold the same image (Bitnami's os-shell for permissions and for
            // sysctl): one rendered line shows them all.
            let mut matched = false;
            for (e, seen) in expected.iter().zip(seen.iter_mut()) {
                if e.name == new_ref.name_as_written()
                    && e.name == old_ref.name_as_written()
                    && e.tag.as_deref() == new_ref.tag()
                    && Some(&e.digest) == new_ref.digest()
                {
                    *seen = true;
                    matched = true;
                }
            }
            if !matched {
                return Err(format!(
                    "the rendering changes `{old_ref}` into `{new_ref}` in {}, not into the pinned \
                     reference",
                    new.source
                ));
            }
        }
    }
    if let Some((e, _)) = expected
        .iter()
        .zip(&policy_seen)
        .find(|(e, seen)| e.pull_policy && e.required && !**seen)
    {
        return Err(format!(
            "the rendering sets no `imagePullPolicy: IfNotPresent` beside `{}`",
            e.name
        ));
    }
    if let Some(missing) = expected
        .iter()
        .zip(&seen)
        .find(|(e, seen)| e.required && !**seen)
    {
        let e = missing.0;
        return Err(format!(
            "the rendering does not show `{}{}@{}`",
            e.name,
            e.tag
                .as_deref()
                .map(|t| format!(":{t}"))
                .unwrap_or_default(),
            e.digest
        ));
    }
    Ok(())
}

/// Where each of `text`'s lines (as [`str::lines`] gives them) starts: a CRLF line end is two
/// bytes, which the lines do not show.
fn line_starts(text: &str) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        starts.push(at);
        at += line.len();
    }
    starts
}

/// The column of the `imagePullPolicy` key when `old` → `new` only sets it to `IfNotPresent`
/// (a key alone on its line, after spaces and sequence dashes).
fn sets_pull_policy(old: &str, new: &str) -> Option<usize> {
    let split = |line: &str| -> Option<(usize, String)> {
        let (before, value) = line.split_once("imagePullPolicy:")?;
        let lead = before.trim_start_matches([' ', '-']);
        let value = value.trim().trim_matches(['"', '\'']);
        (lead.is_empty() || lead == "\"").then(|| (before.len(), value.to_owned()))
    };
    let (old_column, old_value) = split(old)?;
    let (new_column, new_value) = split(new)?;
    let same_prefix = old[..old_column] == new[..new_column];
    (same_prefix && new_value == "IfNotPresent" && old_value != new_value).then_some(new_column)
}

/// A rendered document's lines and the images in it.
struct RenderedDocument<'a> {
    index: usize,
    lines: &'a [&'a str],
    /// Where each line starts in the document's text.
    starts: &'a [usize],
    images: &'a [Image],
}

impl RenderedDocument<'_> {
    /// The expected images whose pull policy was set and that the mapping holding the key at
    /// `column` of line `number` has as its `image:`.
    fn pinned_beside(&self, number: usize, column: usize, expected: &[Expected]) -> Vec<usize> {
        let mut beside = Vec::new();
        for line in self.siblings(number, column) {
            let start = self.starts[line];
            let text = self.lines[line];
            let key = text.get(column..).unwrap_or_default();
            if !(key.starts_with("image:") || key.starts_with("\"image\":")) {
                continue;
            }
            let images = self
                .images
                .iter()
                .filter(|i| {
                    i.document == self.index
                        && i.finding.span.start >= start
                        && i.finding.span.end <= start + text.len()
                })
                .filter_map(|i| i.finding.reference.as_ref());
            for image in images {
                beside.extend(expected.iter().enumerate().filter_map(|(i, e)| {
                    let pinned = e.pull_policy
                        && e.name == image.name_as_written()
                        && Some(&e.digest) == image.digest();
                    pinned.then_some(i)
                }));
            }
        }
        beside
    }

    /// The lines of the block mapping around line `number` whose keys are at `column`: up
    /// to the line that opens it (a `- ` item at `column - 2`, or less indentation) and down
    /// to the next item or the end of the mapping.
    fn siblings(&self, number: usize, column: usize) -> Vec<usize> {
        let indent = |line: &str| line.len() - line.trim_start_matches(' ').len();
        let opens_item = |line: &str| {
            column >= 2 && indent(line) == column - 2 && line[column - 2..].starts_with("- ")
        };
        let mut found = Vec::new();
        let upward = if opens_item(self.lines[number]) {
            0..0
        } else {
            0..number
        };
        for line in upward.rev() {
            let text = self.lines[line];
            if text.trim().is_empty() {
                continue;
            }
            if opens_item(text) {
                found.push(line);
                break;
            }
            match indent(text) {
                i if i == column => found.push(line),
                i if i > column => {}
                _ => break,
            }
        }
        for line in number + 1..self.lines.len() {
            let text = self.lines[line];
            if text.trim().is_empty() {
                continue;
            }
            if opens_item(text) {
                break;
            }
            match indent(text) {
                i if i == column => found.push(line),
                i if i > column => {}
                _ => break,
            }
        }
        found
    }
}

/// `(document, line)` of every line where two renderings of the same values differ.
fn noise(before: &Rendered, again: &Rendered) -> Result<BTreeSet<(usize, usize)>, String> {
    let random = || "the chart renders differently each time, in more than values".to_owned();
    if before.documents.len() != again.documents.len() {
        return Err(random());
    }
    let mut noise = BTreeSet::new();
    for (index, (one, two)) in before.documents.iter().zip(&again.documents).enumerate() {
        let (one, two): (Vec<&str>, Vec<&str>) =
            (one.text.lines().collect(), two.text.lines().collect());
        if one.len() != two.len() {
            return Err(random());
        }
        noise.extend(
            one.iter()
                .zip(&two)
                .enumerate()
                .filter(|(_, (a, b))| a != b)
                .map(|(number, _)| (index, number)),
        );
    }
    Ok(noise)
}

/// What a report shows of a rendered line: its key, never its value (it may be a secret).
fn key_of(line: &str) -> String {
    let line = line.trim();
    match line.split_once(':') {
        Some((key, _)) => format!("{key}: …"),
        None => line.chars().take(40).collect::<String>() + "…",
    }
}
