//! A chart rendering, as `helm template` prints it: documents, each after a `# Source:` line
//! naming the template it came from; and the image references in it.

use std::ops::Range;
use std::path::Path;

use crate::{FileKind, Finding, scan};

/// One rendered document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Document {
    /// The template it came from (`chart/templates/deployment.yaml`), or `""`.
    pub source: String,
    pub text: String,
}

/// A reference-like word in a rendering (see [`Rendered::runs`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    pub document: usize,
    pub span: Range<usize>,
    pub text: String,
}

/// A rendering of a chart.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rendered {
    pub documents: Vec<Document>,
}

/// `text` with each `@` that ends a word taken out of it, its length kept: a blank in its place,
/// or, before a closing quote, the quote moved onto it (`"quay.io/a:1@"` becomes
/// `"quay.io/a:1" `). The renderings that empty the digests ([`Render::Names`],
/// [`Render::Undigested`]) leave one where a chart joins the digest unconditionally
/// (`{{ .repository }}:{{ .tag }}@{{ .digest }}`, or Cilium's `useDigest: true`): the image is
/// the rest, which no digest follows in those renderings only.
///
/// [`Render::Names`]: super::sentinel::Render::Names
/// [`Render::Undigested`]: super::sentinel::Render::Undigested
fn without_empty_digests(text: &str) -> std::borrow::Cow<'_, str> {
    let bytes = text.as_bytes();
    let ends_a_word = |at: usize| {
        at > 0
            && (bytes[at - 1].is_ascii_alphanumeric()
                || matches!(bytes[at - 1], b'.' | b'_' | b'-'))
            && bytes
                .get(at + 1)
                .is_none_or(|next| matches!(next, b'"' | b'\'' | b' ' | b'\t' | b'\r' | b'\n'))
    };
    let at: Vec<usize> = memchr::memchr_iter(b'@', bytes)
        .filter(|&at| ends_a_word(at))
        .collect();
    if at.is_empty() {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut edited = bytes.to_vec();
    for at in at {
        match bytes.get(at + 1) {
            Some(&quote @ (b'"' | b'\'')) => {
                edited[at] = quote;
                edited[at + 1] = b' ';
            }
            _ => edited[at] = b' ',
        }
    }
    // Only ASCII bytes were replaced, with ASCII bytes.
    std::borrow::Cow::Owned(String::from_utf8(edited).expect("still UTF-8"))
}

/// An image reference in a rendering: which document, and the finding there.
#[derive(Clone, Debug)]
pub struct Image {
    pub document: usize,
    /// Its index among the images of its document, in order.
    pub index: usize,
    pub finding: Finding,
}

impl Rendered {
    /// Splits `helm template`'s output into its documents.
    pub fn parse(output: &str) -> Self {
        let mut documents = Vec::new();
        let mut current: Option<Document> = None;
        for line in output.split_inclusive('\n') {
            let bare = line.trim_end_matches(['\n', '\r']);
            if bare == "---" || bare.starts_with("--- ") {
                documents.extend(current.take());
                current = Some(Document {
                    source: String::new(),
                    text: String::new(),
                });
                continue;
            }
            let document = current.get_or_insert_with(|| Document {
                source: String::new(),
                text: String::new(),
            });
            if let Some(source) = bare.strip_prefix("# Source: ")
                && document.source.is_empty()
                && document.text.trim().is_empty()
            {
                source.trim().clone_into(&mut document.source);
            }
            document.text.push_str(line);
        }
        documents.extend(current);
        documents.retain(|d| !d.text.trim().is_empty());
        // A template of several documents may have its `# Source:` line on the first only.
        let mut last = String::new();
        for document in &mut documents {
            if document.source.is_empty() {
                document.source.clone_from(&last);
            } else {
                last.clone_from(&document.source);
            }
        }
        Self { documents }
    }

    /// Every image reference, document by document, in order. A document that is not valid
    /// YAML (Helm does not check) is read leniently.
    pub fn images(&self) -> Vec<Image> {
        let mut images = Vec::new();
        for (document, doc) in self.documents.iter().enumerate() {
            let path = Path::new(&doc.source);
            let text = without_empty_digests(&doc.text);
            let findings = scan(path, FileKind::Yaml, &text)
                .or_else(|_| scan(path, FileKind::HelmTemplate, &text))
                .unwrap_or_default();
            images.extend(
                findings
                    .into_iter()
                    .enumerate()
                    .map(|(index, finding)| Image {
                        document,
                        index,
                        finding,
                    }),
            );
        }
        images
    }

    /// Every reference-like word holding `token`: the run of characters around it up to white
    /// space, a quote, a comma or a bracket. Unlike [`Rendered::images`] this keeps words that
    /// are not valid references (`…@sha256:sha256:…`), which is what a wrong digest form looks
    /// like.
    pub fn runs(&self, token: &str) -> Vec<Run> {
        let stop = |c: char| {
            c.is_whitespace() || matches!(c, '"' | '\'' | '`' | ',' | '[' | ']' | '{' | '}')
        };
        let mut runs = Vec::new();
        for (document, doc) in self.documents.iter().enumerate() {
            let text = &doc.text;
            let mut from = 0;
            while let Some(at) = text[from..].find(token).map(|i| from + i) {
                let start = text[..at].rfind(stop).map_or(0, |i| i + 1);
                let end = text[at..].find(stop).map_or(text.len(), |i| at + i);
                from = end.max(at + token.len());
                let word = &text[start..end];
                // A key (`tpsr0z: …`) or a label value is not an image.
                let word = word.strip_suffix(':').unwrap_or(word);
                if word.contains([':', '@', '/']) {
                    runs.push(Run {
                        document,
                        span: start..start + word.len(),
                        text: word.to_owned(),
                    });
                }
            }
        }
        runs
    }

    /// Where `needle` occurs outside `skip` (spans per document): `(document, line)`.
    pub fn occurrences(
        &self,
        needle: &str,
        skip: &[(usize, Range<usize>)],
    ) -> Vec<(usize, String)> {
        let mut found = Vec::new();
        for (index, doc) in self.documents.iter().enumerate() {
            let mut from = 0;
            while let Some(at) = doc.text[from..].find(needle).map(|i| from + i) {
                from = at + needle.len();
                let skipped = skip
                    .iter()
                    .any(|(d, span)| *d == index && span.start <= at && at < span.end);
                if skipped {
                    continue;
                }
                let line_start = doc.text[..at].rfind('\n').map_or(0, |i| i + 1);
                let line_end = doc.text[at..].find('\n').map_or(doc.text.len(), |i| at + i);
                found.push((index, doc.text[line_start..line_end].trim().to_owned()));
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_without_its_source_line_is_from_the_template_before() {
        let rendered = Rendered::parse(
            "---\n# Source: c/templates/a.yaml\nkind: A\n---\nkind: B\n---\n# Source: c/templates/b.yaml\nkind: C\n",
        );
        let sources: Vec<&str> = rendered
            .documents
            .iter()
            .map(|d| d.source.as_str())
            .collect();
        assert_eq!(
            sources,
            [
                "c/templates/a.yaml",
                "c/templates/a.yaml",
                "c/templates/b.yaml"
            ]
        );
    }
}
