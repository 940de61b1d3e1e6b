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
        let mut offsets = (0, 0);
        for (number, (old_line, new_line)) in old_lines.iter().zip(&new_lines).enumerate() {
            let at = offsets;
            offsets.0 += old_line.len() + 1;
            offsets.1 += new_line.len() + 1;
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
