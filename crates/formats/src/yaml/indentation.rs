//! Flow collections closed at less indentation than YAML 1.2 asks, read as libyaml reads
//! them.
//!
//! A flow collection's closing bracket at the indentation of the `-` or the key that holds it
//! is an error to a conformant parser:
//!
//! ```yaml
//! matrix:
//!   include:
//!     - [
//!         "armhf",
//!     ]
//! ```
//!
//! libyaml and the readers built on it or like it (`PyYAML`; go-yaml, which Kubernetes and Helm
//! use) read it, and so does GitHub's workflow parser: such files run and ship (numpy's
//! workflows). The spaces
//! before a closing bracket only separate tokens, and spaces added there change no value. So
//! when the conformant reader rejects a line for its indentation and the line starts with a
//! closing bracket, the line is read again with a few spaces more; the tree's spans are then
//! mapped back to the text as written. Nothing else is forgiven: a mapping key indented wrong
//! stays an error, since spaces added there would change what it belongs to; so does a quoted
//! scalar continued at its key's indentation, where libyaml would pair a stray quote with one
//! many lines later and hide what is between (see `quoted_scalars_continue_only_on_deeper_lines`
//! in the crate's tests).

use super::conformant::{self, Rejected};
use super::tree::{Span, Tree};

/// Lines read again before giving up: a file with more is left to its error.
const MAX_LINES: usize = 32;

/// Texts longer than this are not read again (each attempt reads the whole text).
const MAX_LEN: usize = 256 * 1024;

/// The spaces tried in front of a rejected line, in order.
const ADDED: [usize; 4] = [1, 2, 4, 8];

/// [`conformant::read`], forgiving under-indented flow collection closers.
pub(crate) fn read(text: &str) -> Result<Tree, Rejected> {
    let rejected = match conformant::read(text) {
        Ok(tree) => return Ok(tree),
        Err(rejected) => rejected,
    };
    if text.len() > MAX_LEN {
        return Err(rejected);
    }
    let mut patched = text.to_owned();
    // Where spaces went (offsets in `patched`, increasing) and how many.
    let mut inserted: Vec<(usize, usize)> = Vec::new();
    let mut error = rejected.clone();
    for _ in 0..MAX_LINES {
        let lines = forgivable_lines(&patched, &error);
        if lines.is_empty() {
            return Err(rejected);
        }
        let mut progress = None;
        for added in ADDED {
            let (attempt, at) = with_spaces(&patched, &lines, added);
            match conformant::read(&attempt) {
                Ok(mut tree) => {
                    inserted.extend(at);
                    map_back(&mut tree, &inserted);
                    return Ok(tree);
                }
                // The lines are read now; a later one is not.
                Err(next) if next.line > error.line => {
                    progress = Some((attempt, at, next));
                    break;
                }
                Err(_) => {}
            }
        }
        let Some((attempt, at, next)) = progress else {
            return Err(rejected);
        };
        patched = attempt;
        inserted.extend(at);
        error = next;
    }
    Err(rejected)
}

/// `text` with `added` spaces in front of each of `lines` (increasing line starts), and where
/// each run of spaces is in the new text.
fn with_spaces(text: &str, lines: &[usize], added: usize) -> (String, Vec<(usize, usize)>) {
    let mut out = String::with_capacity(text.len() + lines.len() * added);
    let mut at = Vec::with_capacity(lines.len());
    let mut copied = 0;
    for &start in lines {
        out.push_str(&text[copied..start]);
        at.push((out.len(), added));
        out.extend(std::iter::repeat_n(' ', added));
        copied = start;
    }
    out.push_str(&text[copied..]);
    (out, at)
}

/// The start of the line `error` rejects for its indentation, when it can be read with more
/// spaces and mean the same: it starts with a flow collection's closing bracket.
fn forgivable_lines(text: &str, error: &Rejected) -> Vec<usize> {
    if error.message != "invalid indentation" {
        return Vec::new();
    }
    let Some(start) = line_start(text, error.line) else {
        return Vec::new();
    };
    let content = text[start..].trim_start_matches(' ');
    if content.starts_with([']', '}']) {
        vec![start]
    } else {
        Vec::new()
    }
}

/// The offset of 1-based `line`'s first byte.
fn line_start(text: &str, line: usize) -> Option<usize> {
    if line <= 1 {
        return Some(0);
    }
    memchr::memchr_iter(b'\n', text.as_bytes())
        .nth(line - 2)
        .map(|newline| newline + 1)
}

/// Maps every span of `tree` (read from the text with `inserted` spaces) to the text as written.
fn map_back(tree: &mut Tree, inserted: &[(usize, usize)]) {
    let original = |offset: u32| -> u32 {
        let offset = offset as usize;
        let mut shift = 0;
        for &(at, added) in inserted {
            if at >= offset {
                break;
            }
            shift += added.min(offset - at);
        }
        u32::try_from(offset - shift).unwrap_or(u32::MAX)
    };
    for node in &mut tree.nodes {
        node.span = Span {
            start: original(node.span.start),
            end: original(node.span.end),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(text, the scalar values read in order)`: the shapes libyaml reads, each read with its
    /// spans on the text as written.
    #[test]
    fn under_indented_flow_lines_are_read_as_libyaml_reads_them() {
        let cases: &[(&str, &[&str])] = &[
            (
                "jobs:\n  x:\n    matrix:\n      - [\n          \"armhf\",\n          \"arm32v7/ubuntu:22.04\",\n      ]\n      - [\n          \"ppc64le\",\n      ]\nimage: nginx:1.25\n",
                &[
                    "jobs",
                    "x",
                    "matrix",
                    "armhf",
                    "arm32v7/ubuntu:22.04",
                    "ppc64le",
                    "image",
                    "nginx:1.25",
                ],
            ),
            (
                "spec:\n  containers:\n    - args: [\n        x,\n    ]\n      image: alpine:3.20\n",
                &["spec", "containers", "args", "x", "image", "alpine:3.20"],
            ),
            (
                "spec:\n  env: {\n    A: b,\n  }\n  args: {x: 1,\n }\n  image: alpine:3.20\n",
                &[
                    "spec",
                    "env",
                    "A",
                    "b",
                    "args",
                    "x",
                    "1",
                    "image",
                    "alpine:3.20",
                ],
            ),
        ];
        for (text, expected) in cases {
            assert!(conformant::read(text).is_err(), "{text:?} is strict YAML");
            let tree = read(text).unwrap_or_else(|e| panic!("{text:?}: {e:?}"));
            let values: Vec<&str> = (0..tree.nodes.len())
                .filter_map(|id| tree.scalar(u32::try_from(id).unwrap(), text))
                .collect();
            assert_eq!(values, *expected, "{text:?}");
            // Single-line plain scalars are their source: their spans are the text's.
            for (id, node) in tree.nodes.iter().enumerate() {
                let value = tree.scalar(u32::try_from(id).unwrap(), text);
                if value.is_some_and(|v| !v.contains(' ')) {
                    assert_eq!(text.get(node.span.range()), value, "{text:?}");
                }
            }
        }
    }

    /// A block line indented wrong stays an error (spaces added there would change what it
    /// belongs to), and so does a quoted scalar's line.
    #[test]
    fn a_block_line_indented_wrong_stays_an_error() {
        for text in [
            "a:\n  b: 1\n c: 2\n",
            "a: [\n  b\nc: 1\n",
            "spec:\n  args: [\"echo hello\n  world\"]\n",
        ] {
            assert!(read(text).is_err(), "{text:?}");
        }
    }
}
